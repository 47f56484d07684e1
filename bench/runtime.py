"""Deliveries per second per member on a real cluster: every stack of ours
the cluster runs (impl/cluster.py, over UDP) and JGroups 2.12.2's SEQUENCER
and SEQUENCER + FLUSH (Debian's libjgroups-java, driven by
conformance/jgroups/adapter.py), 3 members on 127.0.0.1, in the same run.

    .venv/bin/python bench/runtime.py [--messages 2000] [--rate 0] [--stacks a,b] [--out DIR]

Each member multicasts ``--messages``; ``--rate 0`` (the default) is
unpaced: each sender multicasts as fast as its stack accepts (ours: the
reliable layer's backpressure, impl/reliable.py; JGroups: interval 0, its
flow control blocks the sender); ``--rate R`` paces R per second.  Per
member, from its own history (ours: projected from the run's traces;
JGroups: its history file), so both stacks are measured the same way: its
deliveries over the time from its first to its last; the messages it never
delivered of those sent (``lost``: must be 0); and the latency of its own
messages, from its send to its own delivery (p50, p99, in ms; one clock,
the member's own, so no clocks of two processes are compared).  No kill.
JGroups is skipped with a reason when the package or javac is absent.
Prints one JSON object.
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


def _msg(e: dict):
    m = (e.get("params") or {}).get("id")
    return tuple(m) if isinstance(m, (list, tuple)) else m


def _pct(xs: list, q: float):
    if not xs:
        return None
    xs = sorted(xs)
    return round(1000 * xs[min(len(xs) - 1, int(q * len(xs)))], 2)


def _rates(events: list[dict]) -> dict:
    """member -> {delivered, per_s, lost, own-message latency p50/p99 ms}
    from history events (send and deliver, with clocks)."""
    by: dict = {}
    sent_at: dict = {}
    for e in events:
        if e.get("name") == "send" and _msg(e) is not None:
            sent_at[_msg(e)] = float(e.get("clock", 0.0))
    sent = set(sent_at)
    got: dict = {}
    lat: dict = {}
    for e in events:
        if e.get("name") == "deliver" and e.get("nid") is not None:
            t, msg = float(e.get("clock", 0.0)), _msg(e)
            by.setdefault(e["nid"], []).append(t)
            got.setdefault(e["nid"], set()).add(msg)
            if msg is not None and msg[0] == e["nid"] and msg in sent_at:
                lat.setdefault(e["nid"], []).append(t - sent_at[msg])
    out = {}
    for m, ts in sorted(by.items()):
        span = max(ts) - min(ts)
        out[str(m)] = {"delivered": len(ts), "seconds": round(span, 3),
                       "per_s": round(len(ts) / span) if span > 0 else None,
                       "lost": len(sent - got.get(m, set())),
                       "own_latency_ms_p50": _pct(lat.get(m, []), 0.5),
                       "own_latency_ms_p99": _pct(lat.get(m, []), 0.99)}
    return out


def ours(protocol: str, messages: int, rate: float, out: Path) -> dict:
    from groupcheck.conformance import history
    from groupcheck.core.trace.reader import load
    from groupcheck.conformance.cluster import judged
    from groupcheck.impl.cluster import Runner
    t0 = time.perf_counter()
    res = judged(Runner(protocol, 3, messages, [], out, rate=rate, timeout=600))
    wall = time.perf_counter() - t0
    trace = load(out / "traces")
    hist = history.from_trace([trace.header] + trace.events)
    return {"stack": f"groupcheck {protocol}", "verdict": res.verdict, "quiescent": res.quiescent,
            "history_violations": [v["check"] for v in res.history], "members": _rates(hist[1:]),
            "events_logged": len(trace.events), "wall_seconds_with_check": round(wall, 1)}


def jgroups(flush: bool, messages: int, rate: float, out: Path) -> dict:
    from groupcheck.conformance.jgroups import adapter as jg
    why = jg.available()
    name = "JGroups 2.12.2 SEQUENCER" + (" + FLUSH" if flush else "")
    if why:
        return {"stack": name, "skipped": why}
    r = jg.Runner("sequencerflush" if flush else "sequencer", 3, messages, [], out,
                  interval_ms=max(0, round(1000 / rate)) if rate > 0 else 0, settle=3.0,
                  timeout=600).run(jg.compile_driver())
    events = []
    for f in sorted((out / "history").glob("*.ndjson")):
        for line in f.read_text().splitlines():
            rec = json.loads(line)
            if rec.get("kind") == "event":
                events.append(rec)
    return {"stack": name, "failed_members": r.failed, "members": _rates(events)}


# ours: every stack the cluster runs (impl/protocols.py cluster_protocols); then JGroups's two
STACKS = ("sequencer", "sequencerflush", "raincoreflush", "raincoresequencerflush", "jgroups", "jgroups-flush")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=2000)
    ap.add_argument("--rate", type=float, default=0.0, help="multicasts per second per member; 0: unpaced")
    ap.add_argument("--stacks", default=None, help="comma-separated subset of: " + ", ".join(STACKS))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    stacks = STACKS if not args.stacks else tuple(x.strip() for x in args.stacks.split(","))
    unknown = [x for x in stacks if x not in STACKS]
    if unknown:
        ap.error(f"--stacks: unknown {unknown}; have {', '.join(STACKS)}")
    work = Path(args.out or tempfile.mkdtemp(prefix="groupcheck-bench-runtime-"))
    res = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "machine": {"arch": platform.machine(), "cpus": os.cpu_count(), "python": platform.python_version(),
                       "load_average_start": [round(x, 1) for x in os.getloadavg()]},
           "members": 3, "messages_per_member": args.messages,
           "offered_per_member_per_s": args.rate or "unpaced",
           "runs": []}
    for name in stacks:
        if name.startswith("jgroups"):
            res["runs"].append(jgroups(name == "jgroups-flush", args.messages, args.rate, work / name))
        else:
            res["runs"].append(ours(name, args.messages, args.rate, work / name))
        print(json.dumps(res["runs"][-1]), file=sys.stderr, flush=True)
    res["machine"]["load_average_end"] = [round(x, 1) for x in os.getloadavg()]
    if not args.out:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
