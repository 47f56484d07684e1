"""SEQUENCER over FLUSH conformance (issue 5 item 5; DESIGN §3 "Composition").

Theory of operation
-------------------
The stack is transport, reliable, flush, sequencer (impl/flush.py
``sequencer_flush_stack``): the SEQUENCER's DATA multicasts go through the
FLUSH layer, its FORWARDs pass the latch as unicasts, and it installs each
view when FLUSH does, after FLUSH has delivered the messages the view's
digest reconciles.  A trace interleaves the records of both layers; a
record belongs to FLUSH if its state has FLUSH's variables (``phase``) and
to SEQUENCER if it has SEQUENCER's (``fwd``); ``Crash`` belongs to both.

The replay does two things:

1. The FLUSH records (with the crashes) are replayed against
   model/flush.py exactly as a ``flush`` trace is (conformance/flush.py),
   with ``MaxMsgs`` = the FLUSH multicasts in the trace.
2. The SEQUENCER's trace properties are checked on its delivery histories:
   NoDuplicates, Integrity, SenderFIFO (model/sequencer.py's definitions),
   SurvivorTotalOrder (TotalOrder among the members that did not crash)
   and VirtualSynchrony at the SEQUENCER level: members that moved together
   from view v to v + 1 delivered the same messages while in view v (each
   delivery is attributed to the view the member had installed when it
   logged it).  These are the invariants spec/SequencerFlush checks on its
   coordinator-crash model.  The uniform TotalOrder of Sequencer.tla (the
   crashed members' deliveries count too) is not among them: a coordinator
   that delivers its own multicast and crashes before anyone else gets it
   can disagree with the survivors, flush or not (TLC shows it on
   MCSequencerFlush_CoordCrashUniform; the campaign counts it).

The SEQUENCER records are not replayed against a model: the composed
model (spec/SequencerFlush, model/sequencerflush.py) is another helper's
work and was not there when this was written; once it is, its replay can
take the whole trace.  Plain model/sequencer.py cannot replay them: its
InstallView is an oracle action, not the FLUSH's.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Optional

from groupcheck.model import sequencer as seqmodel
from groupcheck.model.flush import FlushModel

from . import flush as cflush
from .protocols import Protocol
from .replay import RunReport
from .traces import Trace

SEQ_ACTIONS = ("Send", "RecvForward", "RecvData", "InstallView")
ACTIONS = tuple(dict.fromkeys(cflush.SPEC_ACTIONS + SEQ_ACTIONS))
SEQ_PROPERTIES = ("NoDuplicates", "Integrity", "SenderFIFO", "SurvivorTotalOrder")
PROPERTIES = SEQ_PROPERTIES + ("VirtualSynchrony",) + tuple(f"Flush.{p}" for p in cflush.PROPERTIES)


def layer_of(ev: dict) -> str:
    st = ev.get("state") or {}
    if ev["name"] == "Crash":
        return "both"
    return "flush" if "phase" in st else "sequencer" if "fwd" in st else "unknown"


def sequencer_histories(events: list[dict], nodes) -> SimpleNamespace:
    """Delivery histories, sent counts, and the view each delivery was made in."""
    delivered = {m: () for m in nodes}
    sent = {m: 0 for m in nodes}
    in_view: dict[int, dict[int, set]] = {m: {} for m in nodes}
    vid = {m: 1 for m in nodes}
    for ev in events:
        if layer_of(ev) != "sequencer":
            continue
        m, st = ev["nid"], ev["state"]
        new = tuple(tuple(x) for x in st["delivered"])
        for x in new[len(delivered[m]):]:
            in_view[m].setdefault(st["vid"], set()).add(x)
        delivered[m], sent[m], vid[m] = new, st["sent"], st["vid"]
    return SimpleNamespace(delivered=delivered, sent=sent, in_view=in_view, vid=vid)


def crashed_in(events: list[dict]) -> set[int]:
    return {ev["nid"] for ev in events if ev["name"] == "Crash"}


def survivor_total_order(h: SimpleNamespace, crashed: set[int]) -> bool:
    return seqmodel.TotalOrder(SimpleNamespace(delivered={m: d for m, d in h.delivered.items()
                                                          if m not in crashed}))


def uniform_total_order(h: SimpleNamespace) -> bool:
    """Sequencer.tla's TotalOrder, crashed members included."""
    return seqmodel.TotalOrder(h)


def virtual_synchrony(h: SimpleNamespace, views: dict[int, set]) -> Optional[str]:
    for v in sorted(views):
        if v + 1 not in views:
            continue
        movers = sorted(m for m in h.vid if h.vid[m] > v and m in views[v] & views[v + 1])
        for a in movers:
            for b in movers:
                sa, sb = h.in_view[a].get(v, set()), h.in_view[b].get(v, set())
                if a < b and sa != sb:
                    return (f"members {a} and {b} moved from view {v} to {v + 1}; in view {v} {a} delivered "
                            f"{sorted(sa)}, {b} delivered {sorted(sb)}")
    return None


def replay(trace: Trace) -> RunReport:
    h = trace.header
    base = dict(file=trace.path, run_id=h["run_id"], protocol=h["protocol"], events=len(trace.events))
    if h["protocol"] != "sequencerflush":
        return RunReport(**base, verdict="rejected", first_bad_event=None,
                         reason=f"{trace.path}:1: no SEQUENCER-over-FLUSH replay for protocol {h['protocol']!r}")
    for ev in trace.events:
        if layer_of(ev) == "unknown":
            return RunReport(**base, verdict="rejected", first_bad_event=ev["i"],
                             reason=f"{trace.path}:{ev['i'] + 2}: event {ev['name']} has neither FLUSH nor "
                                    "SEQUENCER state")
    nodes = list(h["nodes"])
    c = h["constants"]
    flush_events = [ev for ev in trace.events if layer_of(ev) in ("flush", "both")]
    max_msgs = sum(ev["name"] == "Multicast" for ev in flush_events)
    try:
        model = FlushModel({"N": len(nodes), "NInit": len(nodes), "MaxMsgs": max_msgs,
                            "MaxCrashes": c["MaxCrashes"], "MaxLeaves": 0, "ReconcileDigests": True})
    except (KeyError, ValueError) as e:
        return RunReport(**base, verdict="rejected", first_bad_event=None,
                         reason=f"{trace.path}:1: bad header constants: {e}")
    if sorted(nodes) != list(model.Members):
        return RunReport(**base, verdict="rejected", first_bad_event=None,
                         reason=f"{trace.path}:1: nodes {nodes} are not 1..N")
    r = cflush.Replayer(model)
    for ev in flush_events:
        failed = r.step(ev)     # ev["i"] stays the index in the whole trace
        if failed:
            verdict, reason = failed
            return RunReport(**base, verdict=verdict, first_bad_event=ev["i"], reason=f"FLUSH layer: {reason}",
                             candidates_max=r.peak)
    flush_trace = Trace(path=trace.path, header=h, events=flush_events)
    witness = cflush.virtual_synchrony(flush_trace)
    if witness:
        return RunReport(**base, verdict="violation", first_bad_event=None,
                         reason=f"Flush.VirtualSynchrony: {witness}", candidates_max=r.peak)
    hist = sequencer_histories(trace.events, nodes)
    crashed = crashed_in(trace.events)
    for prop in SEQ_PROPERTIES:
        if prop == "SurvivorTotalOrder":
            ok = survivor_total_order(hist, crashed)
            shown = SimpleNamespace(delivered={m: d for m, d in hist.delivered.items() if m not in crashed},
                                    sent=hist.sent)
        else:
            ok, shown = getattr(seqmodel, prop)(hist), hist
        if not ok:
            from .sequencer import _witness
            return RunReport(**base, verdict="violation", first_bad_event=None,
                             reason=f"{prop}: {_witness(prop.replace('Survivor', ''), shown)}",
                             candidates_max=r.peak)
    views = {1: set(nodes)}
    for ev in flush_events:
        msg = ev.get("msg") or {}
        if ev["name"] == "SendView" and msg.get("type") == "VIEW":
            views[msg["view"] + 1] = set(msg["members"])
    witness = virtual_synchrony(hist, views)
    if witness:
        return RunReport(**base, verdict="violation", first_bad_event=None,
                         reason=f"VirtualSynchrony: {witness}", candidates_max=r.peak)
    return RunReport(**base, verdict="ok", first_bad_event=None, reason=None, candidates_max=r.peak)


PROTOCOL_DEFAULTS = {"nodes": 3, "messages": 2, "block_time": 0.002}


def simulate(seed: int, faults, options: dict):
    """One simulated SEQUENCER-over-FLUSH run as groupcheck-trace/1 records."""
    from groupcheck.impl import tracefile
    from groupcheck.impl.flush import sequencer_flush_stack
    from groupcheck.impl.sim_flush import simulate_flush
    opts = {**PROTOCOL_DEFAULTS, **(options or {})}
    n, per = int(opts["nodes"]), int(opts["messages"])
    plan = tracefile.parse_faults(faults) if isinstance(faults, str) else faults
    nodes = list(range(1, n + 1))
    msgs = tracefile.sequencer_workload(n, per)
    bt = opts["block_time"]
    records, s = simulate_flush(
        nodes, msgs, seed, plan, protocol="sequencerflush",
        make_stack=lambda nid, members: sequencer_flush_stack(nid, members, block_time=bt))
    run_id = f"sequencerflush-n{n}-m{per}-s{seed}"
    consts = {**tracefile.sequencer_constants(nodes, msgs, plan.crashes), "ReconcileDigests": True}
    v1 = tracefile.to_v1(records, consts, run_id)
    summary = {"run_id": run_id, "seed": seed, "events": len(v1) - 1, "quiescent": s["quiescent"],
               "crashed": s["crashed"], "skipped_crashes": s["skipped_crashes"], "views": s["views"],
               "unfinished": s["unfinished"], "crash_phases": s["crash_phases"],
               "delivered": {m: d for m, d in s["delivered"].items()},
               "reconciled": sum(st.get("flush.reconciled", 0) for st in s["stats"].values()),
               "forward_not_coord": sum(st.get("sequencer.forward_not_coord", 0) for st in s["stats"].values()),
               "retransmissions": sum(st.get("reliable.retransmitted", 0) for st in s["stats"].values()),
               "dropped_datagrams": s["network"]["lost"] + s["network"]["to_crashed"]}
    return v1, summary


PROTOCOL = Protocol(
    name="sequencerflush", spec="SequencerFlush",
    actions=ACTIONS,
    properties=PROPERTIES,
    simulate=simulate, replay=replay,
    default_options=PROTOCOL_DEFAULTS,
    campaign_faults="loss=0.1,dup=0.05,reorder=3,crash=1@15",
)
