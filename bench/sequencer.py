"""SEQUENCER implementation throughput: simulation, trace writing, replay.

Three wall-clock rates, each over the same seeded runs (``--runs`` seeds,
``--messages`` multicasts per member, fault plan ``--faults``):

* ``sim_delivered_per_s``: application deliveries (summed over members)
  per second of ``impl.sim_sequencer.simulate``, for 3 and for 5 members;
* ``trace_events_written_per_s``: groupcheck-trace/2 event records
  serialised to NDJSON and written to a file, per second;
* ``conform_events_checked_per_s``: events replayed against the model
  (what ``conform_file`` does: read and schema-check the file, replay,
  evaluate the properties), per second; load and replay are also timed
  apart, since the per-line JSON Schema validation is a large share.

Prints one JSON object.

    .venv/bin/python bench/sequencer.py [--runs 5] [--messages 20] [--faults loss=0.05,dup=0.02,reorder=3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

from groupcheck.conformance.replay.sequencer import replay
from groupcheck.core.trace.reader import load
from groupcheck.impl.faults import parse_faults
from groupcheck.impl import campaign, sim_sequencer
from groupcheck.core.trace import writer as tracefile
from groupcheck.impl.sim_sequencer import simulate


def bench_nodes(n: int, runs: int, per_member: int, faults, out: Path) -> dict:
    nodes = list(range(1, n + 1))
    msgs = campaign.sequencer_workload(n, per_member)
    consts = sim_sequencer.sequencer_constants(nodes, msgs, faults.crashes)
    sim_s = write_s = conform_s = load_s = replay_s = 0.0
    delivered = events = checked = 0
    verdicts: dict[str, int] = {}
    for seed in range(runs):
        t0 = time.perf_counter()
        records, summary = simulate(nodes, msgs, seed, faults)
        sim_s += time.perf_counter() - t0
        delivered += sum(len(d) for d in summary["delivered"].values())
        v2 = tracefile.to_v2(records, consts, f"bench-n{n}-s{seed}")
        path = out / f"n{n}-s{seed}.ndjson"
        t1 = time.perf_counter()
        tracefile.write(path, v2)
        write_s += time.perf_counter() - t1
        events += len(v2) - 1
        t2 = time.perf_counter()
        trace = load(path)
        t3 = time.perf_counter()
        rep = replay(trace)
        t4 = time.perf_counter()
        load_s += t3 - t2
        replay_s += t4 - t3
        conform_s += t4 - t2
        checked += rep.events
        verdicts[rep.verdict] = verdicts.get(rep.verdict, 0) + 1
    return {
        "nodes": n, "runs": runs, "messages_per_member": per_member,
        "delivered": delivered, "sim_seconds": round(sim_s, 3),
        "sim_delivered_per_s": round(delivered / sim_s),
        "trace_events": events, "write_seconds": round(write_s, 3),
        "trace_events_written_per_s": round(events / write_s),
        "conform_seconds": round(conform_s, 3),
        "conform_events_checked_per_s": round(checked / conform_s),
        "of_which_load_seconds": round(load_s, 3),
        "of_which_replay_seconds": round(replay_s, 3),
        "replay_only_events_per_s": round(checked / replay_s),
        "verdicts": verdicts,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--messages", type=int, default=20, help="multicasts per member")
    ap.add_argument("--faults", default="loss=0.05,dup=0.02,reorder=3")
    a = ap.parse_args()
    faults = parse_faults(a.faults)
    with tempfile.TemporaryDirectory(prefix="gc-bench-") as d:
        rows = [bench_nodes(n, a.runs, a.messages, faults, Path(d)) for n in (3, 5)]
    print(json.dumps({
        "results": rows, "faults": a.faults,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_average": [round(x, 2) for x in os.getloadavg()]},
    }, indent=1))


if __name__ == "__main__":
    main()
