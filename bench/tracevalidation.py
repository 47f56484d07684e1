"""TLC trace validation against the Python replay on the same SEQUENCER
traces, from 10^2 to 10^5 events.

    .venv/bin/python bench/tracevalidation.py [--sizes 1e2,1e3,1e4,1e5] [--timeout S]

Each size is one simulated run of 3 members without faults, written to disk
as it runs (impl/sim_sequencer.py ``simulate_to_file``, no virtual-time horizon;
about 4.7 events per multicast).  For each: the model
replay (``conform_file``: read, replay, properties) and TLC
(conformance/tlctrace.py ``validate``: write the log module, SANY, the
search; JVM start-up included), each timed on the same file, with events/s.
Prints one JSON object; docs/benchmarks.md records the figures."""
from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from groupcheck.conformance import tlctrace
from groupcheck.conformance.replay.conform import conform_file
from groupcheck.core.trace.reader import load
from groupcheck.impl.faults import parse_faults
from groupcheck.impl.sim_sequencer import simulate_to_file

EVENTS_PER_MULTICAST = 4.67


def one(size: int, timeout: float) -> dict:
    per = max(1, round(size / (3 * EVENTS_PER_MULTICAST)))
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "t.ndjson"
        simulate_to_file(p, 3, per, 1, parse_faults(""))
        t0 = time.perf_counter()
        m = conform_file(p).to_json()
        t_model = time.perf_counter() - t0
        trace = load(p)
        t0 = time.perf_counter()
        try:
            v = tlctrace.validate(trace, timeout=timeout)
            tlc = {"ok": v.ok, "seconds": round(time.perf_counter() - t0, 2)}
        except RuntimeError as e:
            tlc = {"ok": None, "seconds": round(time.perf_counter() - t0, 2), "error": str(e)[:200]}
    n = len(trace.events)
    return {"events": n, "per_member": per,
            "model": {"verdict": m["verdict"], "seconds": round(t_model, 3),
                      "events_per_s": round(n / t_model) if t_model else None},
            "tlc": {**tlc, "events_per_s": round(n / tlc["seconds"]) if tlc["seconds"] else None}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1e2,1e3,1e4,1e5")
    ap.add_argument("--timeout", type=float, default=1800.0)
    a = ap.parse_args()
    rows = [one(int(float(s)), a.timeout) for s in a.sizes.split(",")]
    print(json.dumps({"bench": "tracevalidation", "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                      "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                                  "load": os.getloadavg()[0]},
                      "runs": rows}, indent=1))


if __name__ == "__main__":
    main()
