"""Seconds to validate one simulated SEQUENCER trace with TLC
(conformance/tlctrace.py) and with the Python replay (conform_file).
Usage: python bench/tracevalidation.py [members] [per_member] [seed]; prints JSON."""
from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from groupcheck.conformance import tlctrace
from groupcheck.conformance.replay import conform_file
from groupcheck.conformance.traces import load
from groupcheck.impl.tracefile import parse_faults, simulate_run, write


def main(argv) -> None:
    n = int(argv[1]) if len(argv) > 1 else 5
    per = int(argv[2]) if len(argv) > 2 else 300
    seed = int(argv[3]) if len(argv) > 3 else 1
    recs, _ = simulate_run(n, per, seed, parse_faults(""))
    with tempfile.TemporaryDirectory() as d:
        p = write(Path(d) / "t.ndjson", recs)
        t0 = time.monotonic()
        m = conform_file(p).to_json()
        t_model = time.monotonic() - t0
        v = tlctrace.validate(load(p))
    print(json.dumps({"members": n, "per_member": per, "events": len(recs) - 1,
                      "model": {"verdict": m["verdict"], "seconds": round(t_model, 2)},
                      "tlc": {"ok": v.ok, "seconds": round(v.seconds, 2)}}, indent=1))


if __name__ == "__main__":
    main(sys.argv)
