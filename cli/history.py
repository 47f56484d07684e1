"""``groupcheck history PATH...``: black-box checks on history files
(docs/history-format.md, conformance/history.py)."""

from __future__ import annotations

import json
from typing import List, Optional

import typer

from .findings import allow_option, expect_option, Gate, known_option, tally_line
from .render import console, fail, need_java, spark_session
from groupcheck.conformance.findings import history_findings
from groupcheck.conformance.replay.registry import get


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
    allow: List[str] = allow_option(),
    known: Optional[bool] = known_option(),
):
    """Check histories (send/deliver/view/block/unblock/crash) for what their protocol promises
    among Integrity, NoDuplicates, SenderFIFO, TotalOrder, SurvivorTotalOrder, Agreement,
    VirtualSynchrony and FlushEventOrder (the property catalogue, core/properties.py).
    Exit 0: every run ok or its violations documented findings (or --expect'ed); 1: another
    violation; 2: bad input (file:line:field)."""
    from groupcheck.conformance.history import check_paths, check_spark
    from groupcheck.core.trace.history import HistoryError, history_files
    if engine not in ("local", "spark"):
        fail(f"--engine {engine!r}: choose local or spark")
    from groupcheck.conformance.replay.registry import available
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
            rows = check_spark(files, spark_session(master), protocol, every, quarantine=True)
        else:
            rows = check_paths(files, protocol, every, quarantine=True)
    except (HistoryError, OSError) as e:
        fail(str(e))
    gate = Gate(expect, known, allow)
    # a history shows no finding's witness; the run's own trace, when it lies beside it, does
    try:
        traces = _traces_beside(skipped, {r.get("run_id"): r for r in rows if r["violations"]})
    except HistoryError as e:
        fail(str(e))
    # one verdict row per violation, as conform's: the gate judges each
    found, bad_runs = [], []
    for r in rows:
        t = traces.get(r.get("run_id"))
        shapes = history_findings(get(t.header["protocol"]), t, r["violations"]) if t is not None \
            else [None] * len(r["violations"])
        mine = []
        for v, f in zip(r["violations"], shapes):
            v["finding"] = f
            mine.append({**v, "verdict": "documented" if f else "violation", "protocol": r.get("protocol"),
                         "property": v["check"]})
        if mine and all(v["finding"] for v in mine):
            r["verdict"] = "documented"
        if any(gate.unexpected(v) for v in mine):
            bad_runs.append(r)
        found += mine
    bad = [v for v in found if gate.unexpected(v)]
    rejected = [r for r in rows if r["verdict"] == "rejected"]     # one bad run costs no other its verdict
    if as_json:
        print(json.dumps(rows, indent=2))
    else:
        for r, notes in zip(rows, _notes(rows, found, gate)):
            if r["verdict"] == "rejected":
                print(f"{r['run_id'] or r['files'][0]}: rejected\n  {r['reason']}")
                continue
            print(f"{r['run_id']}: {r['verdict']} ({r['events']} events; judged on {r['judged_on']}: "
                  f"{', '.join(r['checks']) or 'no check'})")
            if r.get("reason"):
                print(f"  {r['reason']}")
            for v, note in zip(r["violations"], notes):
                print(f"  {v['check']}{note}: {v['text']}")
            for v in r.get("informational", ()):
                print(f"  informational, not promised: {v['check']}: {v['text']}")
        print(tally_line(rows, bad_runs))
    for m in gate.missing(found):
        console(stderr=True).print(m, markup=False)
    if rejected:
        more = f" (and {len(rejected) - 1} more rejected run(s), above)" if len(rejected) > 1 else ""
        console(stderr=True).print(f"error: {rejected[0]['reason']}{more}", style="red", markup=False,
                                   soft_wrap=True)
    raise typer.Exit(gate.exit_code(found + [r for r in rows if r["verdict"] in ("incomplete", "rejected")],
                                    len(bad)))


def _traces_beside(trace_files: list, runs: dict) -> dict:
    """run id -> the run's trace (loaded), for the runs of ``runs`` (those
    with a history violation, by run id) whose traces were found beside
    their histories (``simulate --history``, ``cluster run``).  The trace
    must be the same run as the history (the same sends, deliveries, views
    and crashes, ``history.same_run``): else an input error naming both."""
    if not trace_files or not runs:
        return {}
    from groupcheck.conformance import history as chistory
    from groupcheck.core.trace.reader import TraceError, _header_of, load, trace_runs
    out = {}
    for run in trace_runs(trace_files):
        rid = (_header_of(run[0] if isinstance(run, list) else run) or {}).get("run_id")
        if rid not in runs:
            continue                      # a clean history: its trace need not be read
        where = str(run[0].parent) if isinstance(run, list) else str(run)
        try:
            t = load(run)
        except TraceError as e:
            raise chistory.HistoryError(f"{e} (the trace beside the history of run {rid!r})") from None
        end = [{"kind": "end", **{k: v for k, v in t.end.items() if k not in ("src", "vc")}}] if t.end else []
        projected = chistory.from_records(chistory.from_trace([t.header] + t.events + end), where)
        mine = [h for h in chistory.load(runs[rid]["files"]) if h.run_id == rid]
        differs = chistory.same_run(mine[0], projected) if mine else "no history of the run"
        if differs:
            raise chistory.HistoryError(f"{', '.join(runs[rid]['files'])} and {where} are not the same run "
                                        f"({differs}): the trace beside a history must be that run's")
        out[rid] = t
    return out


def _notes(rows, found, gate):
    """Per row, the gate's note for each of its violations (``found`` is them in order)."""
    it = iter(found)
    return [[gate.note(next(it)) for _ in r["violations"]] for r in rows]
