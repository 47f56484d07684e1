"""JGroups's own test scenarios on JGroups 2.12 and on our cluster: the table
of docs/jgroups.md ("JGroups's own test scenarios").

    .venv/bin/python bench/jgroups_scenarios.py [--only NAME,...] [--targets jgroups,ours]
                                               [--out DIR] [--markdown]
    .venv/bin/python bench/jgroups_scenarios.py --table RESULT.json   # the table of a saved run

Each scenario of conformance/jgroups/scenarios.py runs as ``groupcheck
jgroups run ARGS --json`` and ``groupcheck cluster run ARGS --json`` (the
simulator's STABLE where the cluster has none), one run at a time; per
run it reports the command, the history's verdict (the promised checks
broken), the trace's (replay), the documented finding or JGroups step
behind a rejection, and whether the JGroups test's own assertion holds on
the run's history (``judge``).  Each run's folder is kept under OUT.
Prints one JSON object, or with ``--markdown`` the table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bounded import run_json  # noqa: E402  (bench/bounded.py)

from groupcheck.conformance import history  # noqa: E402
from groupcheck.core.trace import history as history_format
from groupcheck.conformance.jgroups.scenarios import BY_NAME, SCENARIOS  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
GC = str(ROOT / ".venv/bin/groupcheck")


def _history(folder: Path) -> history_format.History:
    (h,) = history_format.load(history_format.history_files([folder / "history"]))
    return h


def _judged(row: dict, sc, folder: Path, run: dict, h=None) -> dict:
    views = None
    try:
        h = h or _history(folder)
        failures = sc.judge(h, run, folder)
        # each survivor's views and flush events: whether a kill landed inside a flush shows here
        views = {m: {"views": [list(v[1]) for v in h.views.get(m, [])], "flush": "".join(h.flush.get(m, []))}
                 for m in h.nodes if m not in h.crashed}
    except (history_format.HistoryError, OSError, ValueError) as e:
        failures = [f"not judged: {e}"]
    return {**row, "test_holds": not failures, "test_failures": failures, "survivors": views}


def _run(sc, out: Path, limit: float, target: str, argv: tuple):
    """One scenario's command on ``target`` (jgroups or cluster): its row so
    far and the command's JSON result (None, with the row's error, if it gave none)."""
    folder = out / sc.name / target
    sub = ["jgroups", "run"] if target == "jgroups" else ["cluster", "run"]
    row = {"target": target, "command": f"groupcheck {' '.join(sub)} " + " ".join(argv), "out": str(folder)}
    facts, r, error = run_json([GC, *sub, *argv, "--json", "--out", str(folder)], limit)
    row.update(facts)
    return folder, (row if r is not None else {**row, "error": error}), r


def on_jgroups(sc, out: Path, limit: float) -> dict:
    folder, row, r = _run(sc, out, limit, "jgroups", sc.jgroups)
    if r is None:
        return row
    h, t = r["history"], r["trace"] or {}
    row.update(delivered=h["delivered"], killed=r["killed"], failed=r["failed"], flushes=r.get("flushes"),
               history={"verdict": h["verdict"], "broken": sorted({v["check"] for v in h["violations"]}),
                        "not_promised": sorted({v["check"] for v in h["not_promised"]})},
               trace=t.get("verdict"), agree=r["agree"], finding=t.get("jgroups_step"))
    return _judged(row, sc, folder, r)


def on_cluster(sc, out: Path, limit: float) -> dict:
    folder, row, r = _run(sc, out, limit, "cluster", sc.ours)
    if r is None:
        return row
    broken = sorted({v["check"] for v in r["history"]})
    row.update(delivered=r["delivered"], killed=r["killed"], quiescent=r["quiescent"],
               history={"verdict": "violation" if broken else "ok", "broken": broken},
               trace=r["verdict"], finding=r.get("finding"))
    return _judged(row, sc, folder, r)


def on_simulator(sc, out: Path) -> dict:
    """Our STABLE, where the cluster has none: the simulator's run (3
    members, 10 messages each), its trace replayed, its history checked."""
    from groupcheck.conformance.replay.conform import replay
    from groupcheck.core.trace.reader import load
    from groupcheck.impl import sim_stable
    from groupcheck.core.trace import writer as tracefile
    folder = out / sc.name / "simulator"
    t0 = time.monotonic()
    recs, s = sim_stable.simulate(3, 10, 1, join=False)
    tracefile.write(folder / "traces" / "sim.ndjson", tracefile.to_v2(recs, s["constants"], "sim-stable-s1"))
    rep = replay(load(folder / "traces"))
    # STABLE's trace has no history projection: the history is the run's deliveries
    h = history_format.History.of({m: d for m, d in s["delivered"].items()}, {m: 10 for m in s["delivered"]},
                           quiescent=s["quiescent"], nodes=list(s["delivered"]))
    broken = sorted({v.check for v in history.check(h)})
    row = {"target": "simulator", "command": "impl/sim_stable.simulate(3, 10, seed=1)", "out": str(folder),
           "seconds": round(time.monotonic() - t0, 1), "quiescent": s["quiescent"],
           "history": {"verdict": "violation" if broken else "ok", "broken": broken},
           "trace": rep.verdict, "finding": rep.finding}
    return _judged(row, sc, folder, {"quiescent": s["quiescent"]}, h)


def scenarios_table(names: list) -> str:
    """What each JGroups test does and asserts, and how our runs differ."""
    lines = ["| scenario | JGroups test | what it does | what it asserts | our runs differ |",
             "|---|---|---|---|---|"]
    lines += [f"| `{s.name}` | {s.test} | {s.does} | {s.asserts} | {s.ours_note or '—'} |"
              for s in SCENARIOS if s.name in names]
    return "\n".join(lines)


def markdown(rows: list) -> str:
    lines = ["| scenario (JGroups test) | target | command | the test's assertion | history (promised checks "
             "broken) | trace | finding / JGroups step |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        sc = BY_NAME[r["scenario"]]
        if "error" in r:
            lines.append(f"| `{sc.name}` | {r['target']} | `{r['command']}` | error: {r['error']} | | | |")
            continue
        holds = "holds" if r["test_holds"] else "fails: " + "; ".join(r["test_failures"])
        hist = r["history"]["verdict"] + (f" ({', '.join(r['history']['broken'])})" if r["history"]["broken"] else "")
        finding = (r.get("finding") or "—").split("; Sequencer.tla")[0]
        lines.append(f"| `{sc.name}` ({sc.test}) | {r['target']} | `{r['command']}` | {holds} | {hist} | "
                     f"{r.get('trace') or '—'} | {finding} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=",".join(BY_NAME), help="comma-separated scenario names")
    ap.add_argument("--targets", default="jgroups,ours", help="jgroups, ours (the cluster, or the simulator)")
    ap.add_argument("--limit", type=float, default=300.0, help="seconds a run and its checks may take")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--markdown", action="store_true", help="print the table, not the JSON")
    ap.add_argument("--table", type=Path, default=None, help="print the table of this saved JSON output and stop")
    a = ap.parse_args()
    if a.table is not None:
        saved = json.loads(a.table.read_text(encoding="utf-8"))
        print(scenarios_table(list(saved["scenarios"])) + "\n\n" + markdown(saved["runs"]))
        return
    unknown = [n for n in a.only.split(",") if n not in BY_NAME]
    if unknown:
        ap.error(f"--only: no scenario {unknown[0]!r} ({', '.join(BY_NAME)})")
    out = a.out or Path(tempfile.mkdtemp(prefix="jgroups-scenarios-"))
    targets = a.targets.split(",")
    started, load0, t0 = datetime.now(timezone.utc), os.getloadavg()[0], time.monotonic()
    rows = []
    for sc in (s for s in SCENARIOS if s.name in a.only.split(",")):
        runs = []
        if "jgroups" in targets:
            runs.append(on_jgroups(sc, out, a.limit))
        if "ours" in targets:
            runs.append(on_cluster(sc, out, a.limit) if sc.ours is not None else on_simulator(sc, out))
        rows += [{"scenario": sc.name, **r} for r in runs]
    if a.markdown:
        print(scenarios_table(a.only.split(",")) + "\n\n" + markdown(rows))
        return
    print(json.dumps({
        "machine": {"host": platform.node(), "cpus": os.cpu_count(), "python": platform.python_version()},
        "date": started.isoformat(timespec="seconds"), "load1_start": load0, "load1_end": os.getloadavg()[0],
        "seconds": round(time.monotonic() - t0, 1), "out": str(out),
        "scenarios": {s.name: {"test": s.test, "does": s.does, "asserts": s.asserts, "ours_note": s.ours_note}
                      for s in SCENARIOS if s.name in a.only.split(",")},
        "runs": rows}, indent=1))


if __name__ == "__main__":
    main()
