"""``groupcheck history PATH...``: black-box checks on history files
(docs/history-format.md, conformance/history.py)."""

from __future__ import annotations

import json
from typing import List, Optional

import typer

from .render import fail


def history(
    paths: List[str] = typer.Argument(..., help="history files or folders (every *.ndjson under them)"),
    as_json: bool = typer.Option(False, "--json", help="verdicts with witnesses and Mermaid diagrams as JSON"),
    engine: str = typer.Option("local", "--engine", help="local (in-process) or spark (one row per event, grouped per run)"),
    master: Optional[str] = typer.Option(None, "--master", help="Spark master URL (with --engine spark)"),
):
    """Check histories (send/deliver/view/block/unblock/crash) for Integrity, NoDuplicates,
    SenderFIFO, TotalOrder, SurvivorTotalOrder, Agreement, VirtualSynchrony and FlushEventOrder
    (the property catalogue, conformance/properties.py)."""
    from groupcheck.conformance.history import HistoryError, check_paths, check_spark
    if engine not in ("local", "spark"):
        fail(f"--engine {engine!r}: choose local or spark")
    try:
        if engine == "spark":
            from groupcheck.conformance.spark import session
            rows = check_spark(paths, session(master))
        else:
            rows = check_paths(paths)
    except (HistoryError, OSError) as e:
        fail(str(e))
    if not rows:
        fail(f"no history files under {', '.join(paths)} (*.ndjson)")
    if as_json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            print(f"{r['run_id']}: {r['verdict']} ({r['events']} events)")
            for v in r["violations"]:
                print(f"  {v['check']}: {v['text']}")
        print(f"{sum(r['verdict'] == 'ok' for r in rows)}/{len(rows)} runs ok")
    raise typer.Exit(0 if rows and all(r["verdict"] == "ok" for r in rows) else 1)
