"""Deliveries per second per member on a real cluster: every stack of ours
the cluster runs (impl/cluster.py, over UDP) and JGroups 2.12.2's SEQUENCER
and SEQUENCER + FLUSH (Debian's libjgroups-java, driven by
conformance/jgroups/adapter.py), 3 members on 127.0.0.1, in the same run.

    .venv/bin/python bench/runtime.py [--messages 2000,20000] [--rate 0] [--reps 3]
                                      [--hogs 0,2] [--stacks a,b] [--out DIR]

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
Ours write their full traces and are judged; JGroups's members write their
histories only (``jgroups``: its white-box steps would set its rate).

A series is one ``--messages`` size at one ``--hogs`` count (busy loops,
``yes > /dev/null``, started before the series and killed after it).  Within
a series each stack runs ``--reps`` times, interleaved (every stack once,
then every stack again), so a change of the machine's load falls on all of
them alike; per stack the series reports the median and the spread (min,
max) over its runs of the run's figure, which is its slowest member's
deliveries per second, and of the run's p99 (its worst member's), and, for
each stack of ours beside JGroups's same stack, the ratio of the medians.
Every run of ours is judged (conformance/cluster.py): its verdict and
quiescence are in the result.  JGroups is skipped with a reason when the
package or javac is absent.  Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
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
    """JGroups's run, its members writing their histories only: the driver's
    white-box steps (conformance/jgroups/adapter.py) log SEQUENCER's forward table
    whole, which JGroups does not bound, so at 20,000 a member wrote 1.8 GB
    of them and the steps, not JGroups, set its rate (275 deliveries/s
    beside our 1,003); the figure is JGroups's own speed."""
    import dataclasses
    from groupcheck.conformance.jgroups import adapter as jg
    why = jg.available()
    name = "JGroups 2.12.2 SEQUENCER" + (" + FLUSH" if flush else "")
    if why:
        return {"stack": name, "skipped": why}
    stack = "sequencerflush" if flush else "sequencer"
    white_box = jg.STACKS[stack]
    jg.STACKS[stack] = dataclasses.replace(white_box, steps=False)      # in this process, for this run
    try:
        r = jg.Runner(stack, 3, messages, [], out,
                      interval_ms=max(0, round(1000 / rate)) if rate > 0 else 0, settle=3.0,
                      timeout=600).run(jg.compile_driver())
    finally:
        jg.STACKS[stack] = white_box
    events = []
    for f in sorted((out / "history").glob("*.ndjson")):
        for line in f.read_text().splitlines():
            rec = json.loads(line)
            if rec.get("kind") == "event":
                events.append(rec)
    return {"stack": name, "failed_members": r.failed, "members": _rates(events), "white_box_steps": False}


# ours: every stack the cluster runs (impl/protocols.py cluster_protocols); then JGroups's two
STACKS = ("sequencer", "sequencerflush", "raincoreflush", "raincoresequencerflush", "jgroups", "jgroups-flush")
# each stack of ours beside JGroups's same stack (the ratio of the medians)
SAME = {"sequencer": "jgroups", "sequencerflush": "jgroups-flush"}


def figure(run: dict) -> tuple:
    """A run's (deliveries/s, p99 ms, lost, clean): its slowest member's
    rate, its worst member's p99, the messages any member never delivered,
    and whether it is clean (ours: conforming, quiescent, its history
    clean; JGroups: no member failed)."""
    ms = list((run.get("members") or {}).values())
    rates = [m["per_s"] for m in ms if m.get("per_s")]
    p99 = [m["own_latency_ms_p99"] for m in ms if m.get("own_latency_ms_p99") is not None]
    clean = (run.get("verdict") == "ok" and run.get("quiescent") and not run.get("history_violations")
             if "verdict" in run else not run.get("failed_members"))
    return (min(rates) if rates else None, max(p99) if p99 else None,
            sum(m.get("lost", 0) for m in ms), bool(clean) and len(rates) == 3)


def spread(xs: list) -> dict:
    xs = [x for x in xs if x is not None]
    if not xs:
        return {"median": None, "min": None, "max": None}
    return {"median": round(statistics.median(xs), 2), "min": min(xs), "max": max(xs)}


def summary(runs: list[dict]) -> dict:
    figs = [figure(r) for r in runs]
    return {"per_s": spread([f[0] for f in figs]), "own_latency_ms_p99": spread([f[1] for f in figs]),
            "lost": sum(f[2] for f in figs), "every_run_clean": all(f[3] for f in figs), "runs": len(runs)}


def start_hogs(n: int) -> list:
    """``n`` busy loops (``yes > /dev/null``) beside the runs."""
    return [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(n)]


def stop_hogs(hogs: list) -> None:
    for p in hogs:
        if p.poll() is None:
            p.kill()
    for p in hogs:
        p.wait()


def series(stacks, messages: int, hogs: int, reps: int, rate: float, work: Path) -> dict:
    res: dict = {"messages_per_member": messages, "hogs": hogs,
                 "load_average_start": [round(x, 1) for x in os.getloadavg()], "runs": {s: [] for s in stacks}}
    procs = start_hogs(hogs)
    try:
        for rep in range(reps):
            for name in stacks:
                out = work / f"m{messages}-h{hogs}-{rep}-{name}"
                run = (jgroups(name == "jgroups-flush", messages, rate, out) if name.startswith("jgroups")
                       else ours(name, messages, rate, out))
                run["rep"] = rep
                res["runs"][name].append(run)
                print(json.dumps({"messages": messages, "hogs": hogs, **run}), file=sys.stderr, flush=True)
    finally:
        stop_hogs(procs)
    res["load_average_end"] = [round(x, 1) for x in os.getloadavg()]
    res["summary"] = {s: summary([r for r in res["runs"][s] if "skipped" not in r]) for s in stacks}
    res["ratio_of_medians"] = {
        f"{s} / {j}": round(a / b, 2)
        for s, j in SAME.items() if s in stacks and j in stacks
        and (a := res["summary"][s]["per_s"]["median"]) and (b := res["summary"][j]["per_s"]["median"])}
    return res


def _ints(text: str, what: str, ap) -> list[int]:
    try:
        xs = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        ap.error(f"{what} {text!r}: expected comma-separated whole numbers")
    if not xs or any(x < 0 for x in xs):
        ap.error(f"{what} {text!r}: expected comma-separated whole numbers, at least 0")
    return xs


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", default="2000", help="multicasts per member, comma-separated: one series each")
    ap.add_argument("--rate", type=float, default=0.0, help="multicasts per second per member; 0: unpaced")
    ap.add_argument("--reps", type=int, default=3, help="runs of each stack per series, interleaved")
    ap.add_argument("--hogs", default="0", help="CPU hogs beside the runs, comma-separated: one series each")
    ap.add_argument("--stacks", default=None, help="comma-separated subset of: " + ", ".join(STACKS))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    stacks = STACKS if not args.stacks else tuple(x.strip() for x in args.stacks.split(","))
    unknown = [x for x in stacks if x not in STACKS]
    if unknown:
        ap.error(f"--stacks: unknown {unknown}; have {', '.join(STACKS)}")
    if args.reps < 1 or args.rate < 0:
        ap.error("--reps at least 1, --rate at least 0")
    sizes, hogs = _ints(args.messages, "--messages", ap), _ints(args.hogs, "--hogs", ap)
    work = Path(args.out or tempfile.mkdtemp(prefix="groupcheck-bench-runtime-"))
    res = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "machine": {"arch": platform.machine(), "cpus": os.cpu_count(), "python": platform.python_version(),
                       "load_average_start": [round(x, 1) for x in os.getloadavg()]},
           "members": 3, "offered_per_member_per_s": args.rate or "unpaced", "reps": args.reps,
           "series": []}
    try:
        for m in sizes:
            for h in hogs:
                res["series"].append(series(stacks, m, h, args.reps, args.rate, work))
    finally:
        if not args.out:
            shutil.rmtree(work, ignore_errors=True)
    res["machine"]["load_average_end"] = [round(x, 1) for x in os.getloadavg()]
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
