"""Black-box history checking speed: events checked per second.

Writes one synthetic run of ``--members`` per-member history files (each
member multicasts, every member delivers every message in one total order,
a view change every ``--view-every`` deliveries), about ``--events`` records
in all, then times ``conformance.history.check_paths`` on them: reading and
parsing the NDJSON plus every check.  Wall and CPU (one core) seconds.
Prints one JSON object.

    .venv/bin/python bench/history.py [--events 1000000] [--members 5]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

from groupcheck.conformance import history
from groupcheck.core.trace import history as history_format


def write_run(out: Path, events: int, members: int, view_every: int) -> int:
    # per message: 1 send + `members` deliveries
    n_msgs = max(1, events // (members + 1))
    order = [(1 + k % members, 1 + k // members) for k in range(n_msgs)]
    written = 0
    dumps = json.dumps
    for m in range(1, members + 1):
        lines = [dumps({"kind": "header", "format": history_format.FORMAT, "run_id": "bench", "node": m,
                        "nodes": list(range(1, members + 1)), "protocol": "sequencer"})]
        vid = 1
        lines.append(dumps({"kind": "event", "name": "view", "nid": m,
                            "params": {"view": vid, "members": list(range(1, members + 1))}}))
        for k, (x, q) in enumerate(order):
            if x == m:
                lines.append(dumps({"kind": "event", "name": "send", "nid": m, "params": {"id": [x, q]}}))
            lines.append(dumps({"kind": "event", "name": "deliver", "nid": m, "params": {"id": [x, q]}}))
            if (k + 1) % view_every == 0:
                vid += 1
                lines.append(dumps({"kind": "event", "name": "view", "nid": m,
                                    "params": {"view": vid, "members": list(range(1, members + 1))}}))
        lines.append(dumps({"kind": "end", "quiescent": True}))
        (out / f"n{m}.ndjson").write_text("\n".join(lines) + "\n")
        written += len(lines) - 2
    return written


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--members", type=int, default=5)
    ap.add_argument("--view-every", type=int, default=10_000)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        n = write_run(Path(d), a.events, a.members, a.view_every)
        t0, c0 = time.perf_counter(), time.process_time()
        rows = history.check_paths([d])
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    assert rows[0]["events"] == n and rows[0]["verdict"] == "ok", rows[0]["violations"]
    print(json.dumps({
        "events": n, "members": a.members, "check_wall_s": round(wall, 3), "check_cpu_s": round(cpu, 3),
        "events_per_s": round(n / wall), "verdict": rows[0]["verdict"],
        "python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
        "load_avg": os.getloadavg(), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }))


if __name__ == "__main__":
    main()
