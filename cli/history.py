"""``groupcheck history PATH...``: black-box checks on history files
(docs/history-format.md, conformance/history.py)."""

from __future__ import annotations

import json
from typing import List

import typer

from .render import console


def history(
    paths: List[str] = typer.Argument(..., help="history files or folders (every *.ndjson under them)"),
    as_json: bool = typer.Option(False, "--json", help="verdicts with witnesses and Mermaid diagrams as JSON"),
):
    """Check histories (send/deliver/view/block/unblock/crash) for Integrity, NoDuplicates,
    SenderFIFO, TotalOrder, Agreement, VirtualSynchrony and FlushEventOrder."""
    from groupcheck.conformance.history import HistoryError, check_paths
    try:
        rows = check_paths(paths)
    except (HistoryError, OSError) as e:
        console(stderr=True).print(f"error: {e}", style="red", markup=False)
        raise typer.Exit(2)
    if as_json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            print(f"{r['run_id']}: {r['verdict']} ({r['events']} events)")
            for v in r["violations"]:
                print(f"  {v['check']}: {v['text']}")
        print(f"{sum(r['verdict'] == 'ok' for r in rows)}/{len(rows)} runs ok")
    raise typer.Exit(0 if rows and all(r["verdict"] == "ok" for r in rows) else 1)
