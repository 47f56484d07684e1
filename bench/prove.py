"""``groupcheck prove`` speed: seconds per z3 query and in all.

Runs the proof matrix (model/proofs/registry.py) for every protocol with
encodings, or ``--protocol``, at the default sizes or ``--members N``, and
times each variant: wall and CPU seconds of the whole (encoding built,
queries, CTI classification with the explorer), and the solver seconds per
query, wall and CPU (sum, maximum, the slowest three by CPU: on a shared
machine the wall figures mostly measure the load).  Prints one JSON object.

    .venv/bin/python bench/prove.py [--protocol stable] [--members 4] [--variant Fixed]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import z3

from groupcheck.model.proofs import prover, registry


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--protocol")
    ap.add_argument("--variant")
    ap.add_argument("--members", type=int)
    ap.add_argument("--rlimit", type=int, help="z3's resource limit per query (default: the variant's)")
    a = ap.parse_args()
    load0 = os.getloadavg()
    t0, c0 = time.perf_counter(), time.process_time()
    variants = []
    for enc in registry.select(a.protocol, a.variant, a.members):
        t1, c1 = time.perf_counter(), time.process_time()
        qs = prover.run(enc, rlimit=a.rlimit)
        secs = [q.seconds for q in qs]
        variants.append({
            "protocol": enc.protocol, "variant": enc.variant, "members": enc.members,
            "flawed": enc.expect_cti, "holds": prover.verdict(qs), "queries": len(qs),
            "results": {r: sum(q.result == r for q in qs) for r in ("proved", "cti", "unknown")},
            "reachable_cti": sum(q.result == "cti" and q.reachable is True for q in qs),
            "by_frame": sum(q.by_frame for q in qs),    # proved without z3 (prover.Frame)
            "wall_seconds": round(time.perf_counter() - t1, 2),
            "cpu_seconds": round(time.process_time() - c1, 2),
            "solver_seconds_sum": round(sum(secs), 2),
            "solver_seconds_max": round(max(secs), 3),
            "queries_over_1s": sum(x > 1.0 for x in secs),
            "solver_cpu_seconds_sum": round(sum(q.cpu_seconds for q in qs), 2),
            "solver_cpu_seconds_max": round(max(q.cpu_seconds for q in qs), 3),
            "queries_over_1s_cpu": sum(q.cpu_seconds > 1.0 for q in qs),
            "slowest_cpu": [[q.query, round(q.cpu_seconds, 3)]
                            for q in sorted(qs, key=lambda q: -q.cpu_seconds)[:3]],
        })
    print(json.dumps({
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
                   f"z3 {z3.get_version_string()}",
        "load_before": [round(x, 1) for x in load0],
        "load_after": [round(x, 1) for x in os.getloadavg()],
        "wall_seconds": round(time.perf_counter() - t0, 2),
        "cpu_seconds": round(time.process_time() - c0, 2),
        "variants": variants,
    }, indent=2))


if __name__ == "__main__":
    main()
