"""SEQUENCER conformance: replaying a trace against model/sequencer.py.

Theory of operation
-------------------
Each trace event claims a spec action (seed 000's handlers, named as in
spec/Sequencer/Sequencer.tla) by one member and logs that member's
post-state.  The model state also holds what the trace cannot show (the
channels, the other members' tables), so the replay keeps the SET of model
states consistent with the events so far: for each event it applies the
named action with the logged parameters to every candidate and keeps the
successors whose projection on the member (sent, fwd, recv, delivered, vid)
equals the logged state.  Parameters the trace does not log (the ``lost``
set of Crash) are enumerated.  An empty set makes the run *nonconforming*
at that event.  Then the trace properties of the model (NoDuplicates,
Integrity, SenderFIFO, TotalOrder) are evaluated on the delivery histories:
a failed one makes the run a *violation*, with a small witness.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Optional

from groupcheck.model import sequencer as seqmodel
from groupcheck.model.sequencer import SequencerModel, _subsets

from .protocols import Protocol
from .replay import MAX_CANDIDATES, RunReport
from .traces import Trace, whole

FIELDS = ("vid", "sent", "fwd", "recv", "delivered")


def project(s, m: int) -> dict:
    """Member ``m``'s part of model state ``s`` in the trace's JSON shape."""
    return {"vid": s.vid[m], "sent": s.sent[m], "fwd": sorted(s.fwd[m]),
            "recv": {str(x): q for x, q in sorted(s.recv[m].items())},
            "delivered": [list(x) for x in s.delivered[m]]}


def _norm(state: dict) -> dict:
    return {"vid": state["vid"], "sent": state["sent"], "fwd": sorted(state["fwd"]),
            "recv": {str(k): v for k, v in sorted(state["recv"].items(), key=lambda kv: int(kv[0]))},
            "delivered": [list(x) for x in state["delivered"]]}


def diff(expected: dict, logged: dict) -> str:
    lines = []
    for f in FIELDS:
        if expected.get(f) != logged.get(f):
            lines.append(f"  {f}: model {expected.get(f)!r} != logged {logged.get(f)!r}")
    return "\n".join(lines)


def _successors(model: SequencerModel, s, ev: dict):
    name, m, params = ev["name"], ev["nid"], ev["params"]
    if name == "Send":
        yield model.Send(s, m)
    elif name == "RecvForward":
        yield model.RecvForward(s, m, params["p"])
    elif name == "RecvData":
        yield model.RecvData(s, m, params["p"])
    elif name == "InstallView":
        yield model.InstallView(s, m)
    elif name == "NewView":
        yield model.NewView(s)
    elif name == "Crash":
        if "lost" in params:
            yield model.Crash(s, m, frozenset(params["lost"]))
        else:
            for lost in _subsets(set(model.Members) - {m}):
                yield model.Crash(s, m, lost)


def _msg_ok(s, ev: dict) -> bool:
    """The message the event logs is the one the action takes (Recv*) or
    sends (Send): same type, sender and seqno."""
    msg = ev.get("msg")
    if msg is None:
        return True
    m, name = ev["nid"], ev["name"]
    if name in ("RecvForward", "RecvData"):
        ch = s.chan[(ev["params"]["p"], m)]
        return bool(ch) and (ch[0]["type"], ch[0]["sender"], ch[0]["seqno"]) == \
            (msg.get("type"), msg.get("sender"), msg.get("seqno"))
    return True


def _out_of_range(model: SequencerModel, ev: dict) -> Optional[str]:
    """Members named by the event that the model does not have (the schema
    cannot know N)."""
    M = set(model.Members)
    named = [("nid", ev["nid"])] if ev["nid"] is not None else []
    named += [("params.p", ev["params"]["p"])] if "p" in ev["params"] else []
    named += [("params.view", x) for x in ev["params"].get("view", [])]
    named += [("params.lost", x) for x in ev["params"].get("lost", [])]
    st = ev.get("state") or {}
    named += [("state.recv", int(x)) for x in st.get("recv", {})]
    named += [("state.delivered", x) for x, _ in st.get("delivered", [])]
    for where, x in named:
        if not isinstance(x, int) or x not in M:
            return f"{where}: {x!r} is not a member 1..{model.N}"
    return None


def _check_event(s, t, ev: dict) -> bool:
    if ev["name"] == "Send" and ev.get("msg") is not None:
        msg = ev["msg"]
        if (msg.get("sender"), msg.get("seqno")) != (ev["nid"], t.sent[ev["nid"]]):
            return False
    if ev["name"] == "NewView" and list(t.views[-1]) != list(ev["params"]["view"]):
        return False
    if ev.get("state") is not None and ev["nid"] is not None:
        return project(t, ev["nid"]) == _norm(ev["state"])
    return True


def _explain(model, cands, ev: dict) -> str:
    head = f"event {ev['i']} {ev['name']}(nid={ev['nid']}, params={ev['params']}, msg={ev.get('msg')})"
    enabled = []
    for s in cands:
        if not _msg_ok(s, ev):
            continue
        for t in _successors(model, s, ev):
            if t is not None:
                enabled.append((s, t))
    if not enabled:
        return f"{head}: not enabled in any of {len(cands)} candidate model state(s)" + (
            " (no candidate has that message at the head of the channel)" if ev["name"].startswith("Recv") else "")
    if ev.get("state") is None or ev["nid"] is None:
        return f"{head}: the model's successor does not match the logged parameters"
    exp = project(enabled[0][1], ev["nid"])
    return f"{head}: logged state differs from the model's successor\n{diff(exp, _norm(ev['state']))}"


def _final_histories(trace: Trace, n: int):
    """Delivery histories and sent counts from the last logged state of each member."""
    delivered = {m: () for m in range(1, n + 1)}
    sent = {m: 0 for m in range(1, n + 1)}
    for ev in trace.events:
        if ev.get("state") is not None and ev["nid"] is not None:
            delivered[ev["nid"]] = tuple(tuple(x) for x in ev["state"]["delivered"])
            sent[ev["nid"]] = ev["state"]["sent"]
    return SimpleNamespace(delivered=delivered, sent=sent)


def _witness(prop: str, h) -> str:
    if prop == "NoDuplicates":
        for m, d in h.delivered.items():
            seen = set()
            for x in d:
                if x in seen:
                    return f"member {m} delivered {list(x)} twice"
                seen.add(x)
    if prop == "Integrity":
        for m, d in h.delivered.items():
            for x, q in d:
                if not 1 <= q <= h.sent.get(x, 0):
                    return f"member {m} delivered {[x, q]} but member {x} sent only {h.sent.get(x, 0)}"
    if prop == "SenderFIFO":
        for m, d in h.delivered.items():
            last = {}
            for x, q in d:
                if x in last and last[x] >= q:
                    return f"member {m} delivered {[x, last[x]]} before {[x, q]}"
                last[x] = q
    if prop == "TotalOrder":
        ms = sorted(h.delivered)
        for i, a in enumerate(ms):
            for b in ms[i + 1:]:
                da, db = h.delivered[a], h.delivered[b]
                common = set(da) & set(db)
                pa = [x for x in da if x in common]
                pb = [x for x in db if x in common]
                for k, (x, y) in enumerate(zip(pa, pb)):
                    if x != y:
                        return (f"member {a} delivered {list(x)} before {list(y)}, "
                                f"member {b} delivered {list(y)} before {list(x)}")
    return "(no witness found)"


PROPERTIES = ("NoDuplicates", "Integrity", "SenderFIFO", "TotalOrder")


def replay(trace: Trace) -> RunReport:
    trace = whole(trace)     # TEMPORARY (format 2): the replay compares whole member states
    h = trace.header
    base = dict(file=trace.path, run_id=h["run_id"], protocol=h["protocol"], events=len(trace.events))
    if h["protocol"] != "sequencer":
        return RunReport(**base, verdict="rejected", first_bad_event=None,
                         reason=f"{trace.path}:1: no replay for protocol {h['protocol']!r}")
    c = h["constants"]
    try:
        model = SequencerModel({"N": c["N"], "MaxSeq": c["MaxSeq"], "MaxCrashes": c["MaxCrashes"]})
    except KeyError as e:
        return RunReport(**base, verdict="rejected", first_bad_event=None,
                         reason=f"{trace.path}:1: header constants lack {e}")
    if sorted(h["nodes"]) != list(model.Members):
        return RunReport(**base, verdict="rejected", first_bad_event=None,
                         reason=f"{trace.path}:1: nodes {h['nodes']} are not 1..N with N={model.N}")
    cands = set(model.init())
    peak = len(cands)
    seen = set(cands)       # every candidate held: RunReport.visited (pipeline coverage)
    for ev in trace.events:
        bad = _out_of_range(model, ev)
        if bad:   # line = index + 2: the header is line 1
            return RunReport(**base, verdict="rejected", first_bad_event=ev["i"],
                             reason=f"{trace.path}:{ev['i'] + 2}: {bad}", candidates_max=peak)
        nxt = set()
        for s in cands:
            if not _msg_ok(s, ev):
                continue
            for t in _successors(model, s, ev):
                if t is not None and _check_event(s, t, ev):
                    nxt.add(t)
        if not nxt:
            return RunReport(**base, verdict="nonconforming", first_bad_event=ev["i"],
                             reason=_explain(model, cands, ev), candidates_max=peak,
                             visited=list(seen))
        if len(nxt) > MAX_CANDIDATES:
            return RunReport(**base, verdict="rejected", first_bad_event=ev["i"],
                             reason=f"event {ev['i']}: more than {MAX_CANDIDATES} candidate states",
                             candidates_max=len(nxt))
        cands = nxt
        seen |= nxt
        peak = max(peak, len(cands))
    hist = _final_histories(trace, model.N)
    for prop in PROPERTIES:
        if not getattr(seqmodel, prop)(hist):
            return RunReport(**base, verdict="violation", first_bad_event=None,
                             reason=f"{prop}: {_witness(prop, hist)}", candidates_max=peak,
                             visited=list(seen))
    return RunReport(**base, verdict="ok", first_bad_event=None, reason=None, candidates_max=peak,
                     visited=list(seen))


def simulate(seed: int, faults: str, options: dict):
    """One simulated SEQUENCER run (impl/tracefile.py) for the registry."""
    from groupcheck.impl import tracefile
    opts = {**PROTOCOL_DEFAULTS, **(options or {})}
    records, line = tracefile.simulate_run(int(opts["nodes"]), int(opts["messages"]), seed,
                                           tracefile.parse_faults(faults))
    return records, line


PROTOCOL_DEFAULTS = {"nodes": 3, "messages": 2}

PROTOCOL = Protocol(
    name="sequencer", spec="Sequencer",
    actions=("Send", "RecvForward", "RecvData", "InstallView", "Crash", "NewView"),
    properties=PROPERTIES,
    simulate=simulate, replay=replay,
    default_options=PROTOCOL_DEFAULTS,
    campaign_faults="loss=0.1,dup=0.05,reorder=3,crash=1@30",
    known_violations=("TotalOrder",),   # docs/sequencer.md, finding 1: the coordinator crash
)
