"""``groupcheck prove`` run again and again: are the answers the same?

Every query is bounded by z3's resource limit, not by wall-clock time
(docs/proofs.md, "Resource limits"), so each run should answer every
query alike whatever the load.  This runs ``groupcheck prove --json``
(the default matrix, or what the extra arguments select) ``--runs`` times
in a row, each a command of its own, and prints one JSON object: per run
its wall and CPU seconds (the command and its processes), the load
average at its start, each variant's verdict and each query's result
(with z3's resource units and, for a CTI, whether the bounded model
reaches it); then ``identical`` (every run's verdicts and query results
are the first run's), the first query that differs if not, and
``rlimit_identical`` (the resource units too).

    .venv/bin/python bench/prove_repeat.py --runs 10 [--out FILE] [-- --all]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import z3


def one_run(extra: list[str]) -> dict:
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    gc = Path(sys.executable).with_name("groupcheck")
    p = subprocess.run([str(gc), "prove", "--json", *extra], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if not p.stdout.strip():
        raise SystemExit(f"groupcheck prove wrote nothing (exit {p.returncode}): {p.stderr[-2000:]}")
    out = json.loads(p.stdout)
    return {"exit": p.returncode, "wall_seconds": round(wall, 2),
            "cpu_seconds": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2),
            "load_at_start": round(load, 2),
            "verdicts": {f"{v['protocol']}/{v['variant']}": v["as_expected"] for v in out["variants"]},
            "queries": [[f"{q['protocol']}/{q['variant']}/{q['query']}", q["result"], q.get("reachable"),
                         q["rlimit"]] for q in out["queries"]]}


def first_difference(a: dict, b: dict, units: bool) -> str | None:
    """The first verdict or query (result, reachability; ``units``: z3's
    resource units too) where run ``b`` differs from run ``a``."""
    if a["verdicts"] != b["verdicts"]:
        return next(f"verdict {k}: {a['verdicts'].get(k)} then {b['verdicts'].get(k)}"
                    for k in {**a["verdicts"], **b["verdicts"]} if a["verdicts"].get(k) != b["verdicts"].get(k))
    width = 4 if units else 3
    for x, y in zip(a["queries"], b["queries"]):
        if x[:width] != y[:width]:
            return f"{x[0]}: {x[1:width]} then {y[0]} {y[1:width]}"
    if len(a["queries"]) != len(b["queries"]):
        return f"{len(a['queries'])} queries then {len(b['queries'])}"
    return None


def summary(runs: list[dict], extra: list[str]) -> dict:
    diffs = [(i + 1, d) for i, r in enumerate(runs[1:], 1) if (d := first_difference(runs[0], r, False))]
    unit_diffs = [(i + 1, d) for i, r in enumerate(runs[1:], 1) if (d := first_difference(runs[0], r, True))]
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
                   f"z3 {z3.get_version_string()}",
        "arguments": extra, "runs": len(runs),
        "wall_seconds": [r["wall_seconds"] for r in runs],
        "cpu_seconds": [r["cpu_seconds"] for r in runs],
        "load_at_start": [r["load_at_start"] for r in runs],
        "identical": not diffs,
        "first_difference": {"run": diffs[0][0], "query": diffs[0][1]} if diffs else None,
        "rlimit_identical": not unit_diffs,
        "first_rlimit_difference": {"run": unit_diffs[0][0], "query": unit_diffs[0][1]} if unit_diffs else None,
        "per_run": runs,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--out", help="also write the summary of the runs so far here after each run")
    ap.add_argument("extra", nargs="*", help="arguments for groupcheck prove (after --)")
    a = ap.parse_args()
    runs = []
    for i in range(a.runs):
        runs.append(one_run(a.extra))
        r = runs[-1]
        print(f"run {i + 1}: {r['wall_seconds']} s wall, {r['cpu_seconds']} s CPU, load {r['load_at_start']}, "
              f"exit {r['exit']}", file=sys.stderr)
        if a.out:
            Path(a.out).write_text(json.dumps(summary(runs, a.extra)))
    print(json.dumps(summary(runs, a.extra)))


if __name__ == "__main__":
    main()
