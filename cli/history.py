"""``groupcheck history PATH...``: black-box checks on history files
(docs/history-format.md, conformance/history.py)."""

from __future__ import annotations

import json
from typing import List, Optional

import typer

from .findings import Gate, expect_option, known_option
from .render import console, fail, need_java, spark_session


def history(
    paths: List[str] = typer.Argument(..., help="history files or folders (every *.ndjson under them)"),
    as_json: bool = typer.Option(False, "--json", help="verdicts with witnesses and Mermaid diagrams as JSON"),
    engine: str = typer.Option("local", "--engine", help="local (in-process) or spark (one row per event, grouped per run)"),
    master: Optional[str] = typer.Option(None, "--master", help="Spark master URL (with --engine spark)"),
    protocol: Optional[str] = typer.Option(None, "--protocol", help="judge on what this protocol promises "
                                           "(default: the header's protocol; none named: every check)"),
    every: bool = typer.Option(False, "--all", help="also run the checks the protocol does not promise, "
                               "reported as informational (they never change the verdict)"),
    expect: List[str] = expect_option(),
    known: Optional[bool] = known_option(),
):
    """Check histories (send/deliver/view/block/unblock/crash) for what their protocol promises
    among Integrity, NoDuplicates, SenderFIFO, TotalOrder, SurvivorTotalOrder, Agreement,
    VirtualSynchrony and FlushEventOrder (the property catalogue, conformance/properties.py).
    Exit 0: every run ok or its violations documented findings (or --expect'ed); 1: another
    violation; 2: bad input (file:line:field)."""
    from groupcheck.conformance.history import HistoryError, check_paths, check_spark, history_files
    if engine not in ("local", "spark"):
        fail(f"--engine {engine!r}: choose local or spark")
    from groupcheck.conformance.protocols import available
    if protocol is not None and protocol not in available():
        fail(f"--protocol {protocol!r}: choose one of {', '.join(available())}")
    skipped: list = []
    try:
        files = history_files(paths, skipped)       # before Spark starts: a bad path is said at once
        if skipped:
            console(stderr=True).print(f"skipped {len(skipped)} trace file(s) under {', '.join(paths)} "
                                       f"(groupcheck conform reads them)", markup=False)
        if not files:
            fail(f"no history files under {', '.join(paths)} (*.ndjson)")
        if engine == "spark":
            need_java()
            rows = check_spark(files, spark_session(master), protocol, every)
        else:
            rows = check_paths(files, protocol, every)
    except (HistoryError, OSError) as e:
        fail(str(e))
    gate = Gate(expect, known)
    # a history shows no finding's witness; the run's own trace, when it lies beside it, does
    shape = _findings_of_traces(skipped, {r.get("run_id") for r in rows if r["violations"]})
    # one verdict row per violation, as conform's: the gate judges each
    found = [{**v, "verdict": "violation", "protocol": r.get("protocol"), "property": v["check"],
              "finding": shape.get(r.get("run_id"))}
             for r in rows for v in r["violations"]]
    bad = [v for v in found if not gate.accepted(v)]
    if as_json:
        print(json.dumps(rows, indent=2))
    else:
        for r, notes in zip(rows, _notes(rows, found, gate)):
            print(f"{r['run_id']}: {r['verdict']} ({r['events']} events; judged on {r['judged_on']}: "
                  f"{', '.join(r['checks']) or 'no check'})")
            for v, note in zip(r["violations"], notes):
                print(f"  {v['check']}{note}: {v['text']}")
            for v in r.get("informational", ()):
                print(f"  informational, not promised: {v['check']}: {v['text']}")
        print(f"{sum(r['verdict'] == 'ok' for r in rows)}/{len(rows)} runs ok"
              + (f", {len(found) - len(bad)} documented or expected violation(s)" if len(found) > len(bad) else ""))
    for m in gate.missing(found):
        console(stderr=True).print(m, markup=False)
    raise typer.Exit(gate.exit_code(found, len(bad)))


def _findings_of_traces(trace_files: list, run_ids: set) -> dict:
    """run id -> the documented finding its trace has the shape of (the
    model replay's ``finding``), for the runs of ``run_ids`` (those with a
    history violation) whose traces were found beside their histories
    (``simulate --history``, ``cluster run``).  A run's history violations
    are then that finding seen from outside."""
    if not trace_files or not run_ids:
        return {}
    from groupcheck.conformance.replay import conform_file
    from groupcheck.conformance.traces import _header_of, trace_runs
    out = {}
    for run in trace_runs(trace_files):
        if (_header_of(run[0] if isinstance(run, list) else run) or {}).get("run_id") not in run_ids:
            continue                      # a clean history: its trace need not be replayed
        rep = conform_file(run)
        if rep.verdict == "violation" and rep.finding:
            out[rep.run_id] = rep.finding
    return out


def _notes(rows, found, gate):
    """Per row, the gate's note for each of its violations (``found`` is them in order)."""
    it = iter(found)
    return [[gate.note(next(it)) for _ in r["violations"]] for r in rows]
