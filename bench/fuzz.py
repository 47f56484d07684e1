"""Receive-path fuzz throughput: datagrams/s through
authentication and decoding (default), or with ``--live`` through a live
runtime node's receive path into its stack (impl/fuzz.py ``run_live``),
every one counted by reason.  Prints JSON.

    .venv/bin/python bench/fuzz.py [--n 1000000] [--seed 2] [--live]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import time

from groupcheck.impl import fuzz


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--live", action="store_true", help="through a live runtime node and its stack")
    a = ap.parse_args()
    t0 = time.perf_counter()
    if a.live:
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            counts = fuzz.run_live(random.Random(a.seed), a.n, d)
    else:
        counts = fuzz.run(random.Random(a.seed), a.n)
    s = time.perf_counter() - t0
    assert sum(counts.values()) == a.n
    print(json.dumps({"datagrams": a.n, "path": "live node" if a.live else "auth + codec", "seconds": round(s, 2), "per_s": round(a.n / s),
                      "counts": counts, "machine": platform.machine(), "python": platform.python_version(),
                      "load": os.getloadavg()[0], "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}))


if __name__ == "__main__":
    main()
