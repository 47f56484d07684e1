"""Deliveries per second per member on a real cluster: our stacks over UDP
(impl/cluster.py) and JGroups 2.12.2 (Debian's libjgroups-java, driven by
conformance/jgroups.py), 3 members on 127.0.0.1, in the same run.

    .venv/bin/python bench/runtime.py [--messages 2000] [--rate 1000] [--out DIR]

Each member multicasts ``--messages`` at ``--rate`` per second (JGroups: one
every 1000/rate ms, the driver's interval).  Per member, the figure is its
deliveries divided by the time from its first to its last delivery, read
off its own history (ours: projected from the run's traces; JGroups: its
history file), so both stacks are measured the same way.  No kill.  JGroups
is skipped with a reason when the package or javac is absent.  Prints one
JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path


def _rates(events: list[dict]) -> dict:
    """member -> {delivered, per_s} from history events (deliver with clock)."""
    by: dict = {}
    for e in events:
        if e.get("name") == "deliver" and e.get("nid") is not None:
            by.setdefault(e["nid"], []).append(float(e.get("clock", 0.0)))
    out = {}
    for m, ts in sorted(by.items()):
        span = max(ts) - min(ts)
        out[str(m)] = {"delivered": len(ts), "seconds": round(span, 3),
                       "per_s": round(len(ts) / span) if span > 0 else None}
    return out


def ours(protocol: str, messages: int, rate: float, out: Path) -> dict:
    from groupcheck.conformance import history
    from groupcheck.conformance.traces import load
    from groupcheck.impl.cluster import Runner
    t0 = time.perf_counter()
    res = Runner(protocol, 3, messages, [], out, rate=rate, timeout=300).run()
    wall = time.perf_counter() - t0
    trace = load(out / "traces")
    hist = history.from_trace([trace.header] + trace.events)
    return {"stack": f"groupcheck {protocol}", "verdict": res.verdict, "quiescent": res.quiescent,
            "history_violations": [v["check"] for v in res.history], "members": _rates(hist[1:]),
            "events_logged": len(trace.events), "wall_seconds_with_check": round(wall, 1)}


def jgroups(flush: bool, messages: int, rate: float, out: Path) -> dict:
    from groupcheck.conformance import jgroups as jg
    why = jg.available()
    name = "JGroups 2.12.2 SEQUENCER" + (" + FLUSH" if flush else "")
    if why:
        return {"stack": name, "skipped": why}
    r = jg.Runner("sequencerflush" if flush else "sequencer", 3, messages, [], out,
                  interval_ms=max(0, round(1000 / rate)), settle=3.0, timeout=300).run(jg.compile_driver())
    events = []
    for f in sorted((out / "history").glob("*.ndjson")):
        for line in f.read_text().splitlines():
            rec = json.loads(line)
            if rec.get("kind") == "event":
                events.append(rec)
    return {"stack": name, "failed_members": r.failed, "members": _rates(events)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=2000)
    ap.add_argument("--rate", type=float, default=1000.0)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    work = Path(args.out or tempfile.mkdtemp(prefix="groupcheck-bench-runtime-"))
    res = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "machine": {"arch": platform.machine(), "cpus": os.cpu_count(), "python": platform.python_version(),
                       "load_average_start": [round(x, 1) for x in os.getloadavg()]},
           "members": 3, "messages_per_member": args.messages, "offered_per_member_per_s": args.rate,
           "runs": []}
    for protocol in ("sequencer", "sequencerflush"):
        res["runs"].append(ours(protocol, args.messages, args.rate, work / protocol))
        print(json.dumps(res["runs"][-1]), file=sys.stderr, flush=True)
    for flush in (False, True):
        res["runs"].append(jgroups(flush, args.messages, args.rate, work / ("jgroups-flush" if flush else "jgroups")))
        print(json.dumps(res["runs"][-1]), file=sys.stderr, flush=True)
    res["machine"]["load_average_end"] = [round(x, 1) for x in os.getloadavg()]
    if not args.out:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
