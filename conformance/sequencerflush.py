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

By default (``composed=True``; the Python argument ``composed=False``, a
diagnostic no command exposes, selects step 1 instead) the whole trace
is replayed against the composed model, model/sequencerflush.py
(spec/SequencerFlush), in place of step 1, with a candidate set as in
conformance/flush.py: every record is mapped to the composed action of the
same name (or joined to the step it completes, see "the composed replay"
below) and the member's projection is compared with the logged state.  The
properties above are then checked as before.  The stack as ``simulate``
builds it conforms on every campaign run; the earlier couplings (options
``hold_sends``, ``self_channel``, ``view_as_sent``, ``pass_latch`` off)
take steps the composed spec does not allow, divergences (c), (d), (e),
(a) of docs/flush.md, "The composed replay", which the replay names.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Optional

from groupcheck.model import sequencer as seqmodel
from groupcheck.model.flush import FlushModel
from groupcheck.impl import tracefile
from groupcheck.model.sequencerflush import SequencerFlushModel, _subsets

from . import flush as cflush
from .protocols import Protocol
from .replay import MAX_CANDIDATES, RunReport
from .traces import Trace, whole

SEQ_ACTIONS = ("Send", "RecvForward", "RecvData", "InstallView")
ACTIONS = tuple(dict.fromkeys(cflush.SPEC_ACTIONS + SEQ_ACTIONS))
SEQ_PROPERTIES = ("NoDuplicates", "Integrity", "SenderFIFO", "SurvivorTotalOrder")
PROPERTIES = SEQ_PROPERTIES + ("VirtualSynchrony",) + tuple(f"Flush.{p}" for p in cflush.PROPERTIES)


def layer_of(ev: dict) -> str:
    """"both" (Crash), "sequencer" or "flush": by the action and its
    parameters (impl/tracefile.py ``layer_of``), so with or without state."""
    if ev["name"] == "Crash":
        return "both"
    return tracefile.layer_of("sequencerflush", ev["name"], ev["params"])


def sequencer_histories(events: list[dict], nodes) -> SimpleNamespace:
    """Delivery histories, sent counts, and the view each delivery was made in."""
    delivered = {m: () for m in nodes}
    sent = {m: 0 for m in nodes}
    in_view: dict[int, dict[int, set]] = {m: {} for m in nodes}
    vid = {m: 1 for m in nodes}
    for ev in events:
        if layer_of(ev) != "sequencer" or ev.get("state") is None:
            continue
        m, st = ev["nid"], ev["state"]
        new = tuple(tuple(x) for x in st["delivered"])
        for x in new[len(delivered[m]):]:
            in_view[m].setdefault(st["vid"], set()).add(x)
        delivered[m], sent[m], vid[m] = new, st["sent"], st["vid"]
    return SimpleNamespace(delivered=delivered, sent=sent, in_view=in_view, vid=vid)


def crashed_in(events: list[dict]) -> set[int]:
    return {ev["nid"] for ev in events if ev["name"] == "Crash"}


def end_of_run(trace: Trace):
    """EventualDelivery among the members that did not crash (the composed
    spec's LiveSender2Fixed property), at the end of a quiescent run."""
    from .sequencer import missing_deliveries
    h = sequencer_histories(trace.events, trace.header["nodes"])
    witness = missing_deliveries(h.delivered, h.sent, crashed_in(trace.events))
    return ("EventualDelivery", witness) if witness else None


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


def replay(trace: Trace, *, composed: bool = True) -> RunReport:
    """The verdict of one run.  Default (``composed=True``; no environment
    variable changes it — DESIGN §8, no hidden modes): the whole trace against
    model/sequencerflush.py (see below), then the SEQUENCER's trace
    properties and VirtualSynchrony.  ``composed=False``: the FLUSH records
    against model/flush.py instead, then the same properties."""
    trace = whole(trace)     # TEMPORARY (format 2): the replay compares whole member states
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
    if composed:
        try:
            cm = composed_model(trace)
        except (KeyError, ValueError) as e:
            return RunReport(**base, verdict="rejected", first_bad_event=None,
                             reason=f"{trace.path}:1: bad header constants: {e}")
        if sorted(nodes) != list(cm.Members):
            return RunReport(**base, verdict="rejected", first_bad_event=None,
                             reason=f"{trace.path}:1: nodes {nodes} are not 1..N")
        cr = ComposedReplayer(cm)
        for ev in trace.events:
            failed = cr.step(ev)
            if failed:
                verdict, reason = failed
                at = ev["i"] if cr.bad_at is None else cr.bad_at
                return RunReport(**base, verdict=verdict, first_bad_event=at,
                                 reason=f"composed replay: {reason}", candidates_max=cr.peak)
    flush_events = [ev for ev in trace.events if layer_of(ev) in ("flush", "both")]
    if composed:
        peak = cr.peak          # the composed model holds FLUSH's actions: no separate FLUSH replay
    else:
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
        peak = r.peak
    flush_trace = Trace(path=trace.path, header=h, events=flush_events)
    witness = cflush.virtual_synchrony(flush_trace)
    if witness:
        return RunReport(**base, verdict="violation", first_bad_event=None,
                         reason=f"Flush.VirtualSynchrony: {witness}", candidates_max=peak)
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
                             candidates_max=peak)
    views = {1: set(nodes)}
    for ev in flush_events:
        msg = ev.get("msg") or {}
        if ev["name"] == "SendView" and msg.get("type") == "VIEW":
            views[msg["view"] + 1] = set(msg["members"])
    witness = virtual_synchrony(hist, views)
    if witness:
        return RunReport(**base, verdict="violation", first_bad_event=None,
                         reason=f"VirtualSynchrony: {witness}", candidates_max=peak)
    return RunReport(**base, verdict="ok", first_bad_event=None, reason=None, candidates_max=peak)



# ---------------------------------------------------------------- the composed replay

# The composed replay (``composed=True``, the default everywhere) takes the WHOLE
# trace against model/sequencerflush.py.  Record to model step:
#
#   SEQUENCER Send, RecvForward, FLUSH StartFlush ... Unblock, Discard, Crash:
#       the composed action of the same name (Crash: every ``lost`` cut);
#   FLUSH Deliver(m, q) + the SEQUENCER RecvData(m, p=q) that follows it:
#       one RecvData(m, q) (the DATA taken from the channel q -> m);
#   SEQUENCER RecvData(m, p=m) after the coordinator's own Multicast:
#       RecvData(m, m) (the spec's McastData reaches the coordinator too);
#   FLUSH Multicast(c): no step of its own; it is the DATA the preceding
#       Send(c)/RecvForward(c, p) put in the channels (McastData), and must
#       carry the view the model multicast it in;
#   SEQUENCER RecvData(m, p /= m) with no Deliver before it: a DATA the
#       VIEW's digest brings (impl: _reconcile); no step: the next
#       SendView/InstallView's Moved absorbs it;
#   FLUSH SendView(c) / InstallView(p, c) + the SEQUENCER InstallView that
#       follows: one SendView(c) / InstallView(p, c).
#
# The FLUSH records are compared with the member's FLUSH part of the model
# state (vid, phase, blocked, flushInit, flushOks, the digest = log once
# Completed, completed, and the current view's deliveries = log), the
# SEQUENCER records with its SEQUENCER part (vid, sent, fwd, recv,
# delivered).  FLUSH keys (coordinator, flush seqno) are mapped to the
# SEQUENCER ids the model's DATA carry through the Multicast records.
# Two FLUSH Discards are stutters, not model steps: of a message of an older
# view than the member's (the spec drops it at the view change, Purged) and
# of a flush message from a crashed member (the spec drops it at the Crash):
# divergence (b), invisible in the member's state.

FLUSH_TYPES = ("START_FLUSH", "FLUSH_OK", "FLUSH_COMPLETED", "VIEW", "STOP_FLUSH")
F_SINGLE = ("StartFlush", "FlushOk", "FlushCompleted", "SendView", "StopFlush")
F_PAIR = {"Block": "c", "RestartFlush": "c", "ReceiveFlushOk": "q", "ReceiveFlushCompleted": "q",
          "InstallView": "c", "Unblock": "c", "Discard": "q"}


def seq_projection(s, m: int) -> dict:
    return {"vid": s.vid[m], "sent": s.sent[m], "fwd": sorted(s.fwd[m]),
            "recv": {str(x): q for x, q in sorted(s.recv[m].items())},
            "delivered": [list(x) for x in s.delivered[m]]}


def _seq_norm(st: dict) -> dict:
    return {"vid": st["vid"], "sent": st["sent"], "fwd": sorted(st["fwd"]),
            "recv": {str(x): q for x, q in sorted(st["recv"].items(), key=lambda kv: int(kv[0]))},
            "delivered": [list(x) for x in st["delivered"]]}


def _ids(xs) -> list:
    return sorted(list(x) for x in xs)


def flush_projection(s, m: int) -> dict:
    completed = s.phase[m] == "Completed"
    return {"vid": s.vid[m], "phase": s.phase[m], "blocked": s.blocked[m], "flushInit": s.flushInit[m],
            "flushOks": sorted(s.flushOks[m]), "digest": _ids(s.log[m]) if completed else [],
            "completed": sorted([q, _ids(d)] for q, d in s.completed[m]), "current": _ids(s.log[m])}


class ComposedReplayer:
    """The candidate set of model/sequencerflush.py states consistent with
    the records so far (the pattern of conformance/flush.py's Replayer)."""

    def __init__(self, model: SequencerFlushModel, *, repair: bool = False) -> None:
        self.model = model
        self.repair = repair                      # census mode: see _repaired
        self.divergences: list[tuple[str, int]] = []
        self.latched: dict[int, list] = {m: [] for m in model.Members}  # census: DATA held in the latch
        self.cands = set(model.init())
        self.peak = len(self.cands)
        self.fkey: dict[tuple, tuple] = {}      # FLUSH key -> SEQUENCER id of the DATA it carries
        self.fview: dict[tuple, int] = {}       # FLUSH key -> view it was multicast in
        self.pending: dict[int, list] = {m: [] for m in model.Members}   # DATA multicast, record awaited
        self.expect: dict[int, tuple] = {}      # member -> the SEQUENCER record that completes a step
        self.recon: dict[int, list] = {m: [] for m in model.Members}     # digest deliveries awaiting Moved
        # DATA a coordinator multicast after its FLUSH_COMPLETED and did not deliver (pass_latch):
        # if the VIEW's digest brings it back, its SEQUENCER RecvData names itself as p
        self.undelivered: dict[int, set] = {m: set() for m in model.Members}
        self.bad_at: Optional[int] = None         # a failure found late: the record it concerns
        self.stats = {"discard_stutters": 0, "digest_deliveries": 0}   # refinement steps taken (yields)

    # -- mapping the implementation's FLUSH keys ---------------------------------
    def sid(self, key) -> tuple:
        key = tuple(key)
        return self.fkey.get(key, (-key[0], key[1]))      # negative: a key no Multicast record named

    def flush_norm(self, st: dict, m: int) -> dict:
        """The logged FLUSH state in the model's terms.  The model's log[m]
        is what m multicast or took in its view; the implementation's
        FLUSH keeps a multicast it makes after its FLUSH_COMPLETED without
        delivering it (pass_latch), so m's own multicasts of the view (from
        the Multicast records) count in its log, and in its digest once
        Completed, delivered or not."""
        v = st["vid"]
        own = {k for k, w in self.fview.items() if k[0] == m and w == v}
        digest = {tuple(k) for k in st["digest"]} | (own if st["phase"] == "Completed" else set())
        current = {tuple(k) for k in st["delivered"] if self.fview.get(tuple(k)) == v} | own
        return {"vid": v, "phase": st["phase"], "blocked": st["blocked"], "flushInit": st["flushInit"],
                "flushOks": sorted(st["flushOks"]), "digest": _ids(self.sid(k) for k in digest),
                "completed": sorted([q, _ids(self.sid(k) for k in d)] for q, d in st["completed"]),
                "current": _ids(self.sid(k) for k in current)}

    # -- one record ----------------------------------------------------------------
    def _head_ok(self, s, src: int, dest: int, msg: Optional[dict], flush_ids: bool) -> bool:
        ch = s.chan[(src, dest)]
        if not ch:
            return False
        if msg is None:
            return True
        head = ch[0]
        if head["type"] != msg.get("type"):
            return False
        if head["type"] == "FORWARD":
            return (head["sender"], head["seqno"]) == (msg["sender"], msg["seqno"])
        if head["view"] != msg.get("view", head["view"]):
            return False
        if head["type"] == "DATA":
            key = (msg["sender"], msg["seqno"])
            return (head["sender"], head["seqno"]) == (self.sid(key) if flush_ids else key)
        if head["type"] in ("FLUSH_COMPLETED", "VIEW"):
            return _ids(head["digest"]) == _ids(self.sid(k) for k in msg.get("digest", []))
        return True

    def _successors(self, s, ev: dict, kind: str):
        """(successor, stutter?) pairs for the record from candidate s."""
        model, name, m, prm, msg = self.model, ev["name"], ev["nid"], ev["params"], ev.get("msg")
        if name == "Crash":
            for lost in _subsets(set(model.Members) - {m}):
                yield model.Crash(s, m, lost)
        elif kind == "sequencer" and name == "Send":
            yield model.Send(s, m)
        elif kind == "sequencer" and name == "RecvForward":
            p = prm.get("p")
            if p in model.Members and self._head_ok(s, p, m, msg, False):
                yield model.RecvForward(s, m, p)
        elif kind == "sequencer" and name == "RecvData":           # the coordinator's own DATA
            if self._head_ok(s, m, m, msg, False):
                yield model.RecvData(s, m, m)
        elif name == "Deliver":
            q = prm.get("q")
            if q in model.Members and self._head_ok(s, q, m, msg, True):
                yield model.RecvData(s, m, q)
        elif name in F_SINGLE:
            yield getattr(model, name)(s, m)
        elif name in F_PAIR:
            q = prm.get(F_PAIR[name])
            if q not in model.Members:
                return
            if self._head_ok(s, q, m, msg, True):
                yield getattr(model, name)(s, m, q)
            elif name == "Discard" and msg is not None and not any(
                    x.get("view") == msg.get("view") and x["type"] == msg.get("type") for x in s.chan[(q, m)]):
                # divergence (b): the spec already dropped it (Purged at the view change, or at q's Crash)
                if msg.get("view", 0) < s.vid[m] or (msg.get("type") in FLUSH_TYPES and q in s.crashed):
                    self.stats["discard_stutters"] += 1
                    yield s

    def _matches(self, t, ev: dict, kind: str) -> bool:
        m, st, msg = ev["nid"], ev.get("state"), ev.get("msg") or {}
        if ev["name"] == "SendView" and "members" in msg and sorted(t.views[-1]) != sorted(msg["members"]):
            return False
        if st is None or m is None:
            return True
        if kind == "sequencer":
            return seq_projection(t, m) == _seq_norm(st)
        return flush_projection(t, m) == self.flush_norm(st, m)

    def _filter(self, cands, ev: dict, kind: str) -> set:
        return {s for s in cands if self._matches(s, ev, kind)}

    def step(self, ev: dict) -> Optional[tuple[str, str]]:
        kind, m, name = layer_of(ev), ev["nid"], ev["name"]
        msg = ev.get("msg") or {}
        head = f"event {ev['i']} {name}(nid={m}, params={ev['params']}, msg={ev.get('msg')})"
        if m not in self.model.Members:
            return "rejected", f"nid: {m!r} is not a member 1..{self.model.N}"
        exp = self.expect.get(m)
        if kind == "both":                                   # Crash: nothing of m is awaited any more
            self.expect.pop(m, None)
            self.pending[m].clear()
            self.latched[m].clear()
            self.recon[m].clear()
            self.undelivered[m].clear()
        elif exp is not None:
            if (kind, name, ev["params"].get("p")) != exp:
                return "nonconforming", (f"{head}: member {m}'s previous step waits for its SEQUENCER "
                                         f"{exp[1]} record")
            del self.expect[m]
            failed = self._take(self._filter(self.cands, ev, kind), ev, kind, head, stutter=True)
            if failed:
                return failed
            if name == "InstallView":
                for r in self.recon[m]:
                    if r.get("state") is None:
                        continue
                    got = [list(x) for x in r["state"]["delivered"]]
                    if not any(seq_projection(t, m)["delivered"][:len(got)] == got for t in self.cands):
                        self.bad_at = r["i"]
                        return "nonconforming", (f"event {r['i']} RecvData (delivered from the VIEW's digest): "
                                                 f"not a prefix of the delivery order after the view change")
                self.recon[m].clear()
                self.undelivered[m].clear()
            return None
        if self.pending[m] and not (kind == "flush" and name == "Multicast"):
            sid, v, at = self.pending[m][0]
            self.bad_at = at
            return "nonconforming", (
                f"event {at}: coordinator {m} sequenced {list(sid)} (its Send/RecvForward) and its next record, "
                f"{head}, is not the Multicast of that DATA: the spec puts DATA {list(sid)} of view {v} in the "
                f"channels in the same step (McastData), the implementation's FLUSH holds it in the latch and "
                f"multicasts it after the flush, in a later view (divergence (a): blocked[{m}] = "
                f"{sorted({s.blocked[m] for s in self.cands})})")
        if kind == "flush" and name == "Multicast" and not self.pending[m] and self.latched[m]:
            sid = self.latched[m].pop(0)            # census: the latched DATA goes out now, in this view
            key = (msg.get("sender"), msg.get("seqno"))
            if key in self.fkey or key[0] != m:
                return "nonconforming", f"{head}: {list(key)} is not a new FLUSH multicast of member {m}"
            self.fkey[key], self.fview[key] = sid, msg.get("view")
            nxt = {s._replace(chan=self.model.McastData(s, s.chan, m, *sid), log=s.log.set(m, s.log[m] + (sid,)))
                   for s in self.cands if s.vid[m] == msg.get("view")}
            return self._take(self._filter(nxt, ev, kind), ev, kind, head, stutter=True)
        if (self.repair and not self.model.ResendAlways and kind == "sequencer" and name in ("Send", "RecvForward")
                and msg.get("type") in ("DATA", "FORWARD") and all(s.blocked[m] for s in self.cands)
                and all(self.model.IsCoord(s, m) for s in self.cands)
                and (name == "RecvForward" or msg["type"] == "DATA")):
            # census: divergence (a) let through: the coordinator sequences with its latch closed and
            # its FLUSH holds the DATA (a Send here is divergence (c) as well)
            nxt = set()
            for s in self.cands:
                if name == "Send":
                    if s.sent[m] < self.model.MaxSeq:
                        nxt.add(s._replace(sent=s.sent.set(m, s.sent[m] + 1)))
                else:
                    p = ev["params"].get("p")
                    if p in self.model.Members and self._head_ok(s, p, m, msg, False):
                        nxt.add(s._replace(chan=self.model.Take(s.chan, m, p)))
            nxt = self._filter(nxt, ev, kind)
            if nxt:
                self.divergences += [("c", ev["i"])] * (name == "Send") + [("a", ev["i"])]
                self.latched[m].append((msg["sender"], msg["seqno"]))
            return self._take(nxt, ev, kind, head)
        if kind == "flush" and name == "Multicast":
            if not self.pending[m]:
                return "nonconforming", f"{head}: no DATA of member {m}'s SEQUENCER is waiting to be multicast"
            sid, v, _ = self.pending[m].pop(0)
            key = (msg.get("sender"), msg.get("seqno"))
            if msg.get("view") != v:
                return "nonconforming", (
                    f"{head}: DATA {list(sid)} goes out in view {msg.get('view')}; the spec multicast it in view "
                    f"{v} at the coordinator's Send/RecvForward (McastData) (divergence (a): the implementation's "
                    f"FLUSH held it in the latch)")
            if key in self.fkey or key[0] != m:
                return "nonconforming", f"{head}: {list(key)} is not a new FLUSH multicast of member {m}"
            self.fkey[key], self.fview[key] = sid, v
            if ev.get("state") is not None and list(key) not in ev["state"].get("delivered", []):
                self.undelivered[m].add(sid)
            return self._take(self._filter(self.cands, ev, kind), ev, kind, head, stutter=True)
        if kind == "sequencer" and name == "RecvData" and (
                ev["params"].get("p") != m or (msg.get("sender"), msg.get("seqno")) in self.undelivered[m]):
            self.recon[m].append(ev)       # from the VIEW's digest: Moved absorbs it
            self.stats["digest_deliveries"] += 1
            return None
        if kind == "sequencer" and name == "InstallView":
            return "nonconforming", f"{head}: no FLUSH SendView/InstallView of member {m} before it"
        nxt = set()
        for s in self.cands:
            for t in self._successors(s, ev, kind):
                if t is not None and self._matches(t, ev, kind):
                    nxt.add(t)
        failed = self._take(nxt, ev, kind, head)
        if failed:
            return failed
        if kind == "sequencer" and name in ("Send", "RecvForward") and msg.get("type") in ("DATA", "FORWARD"):
            s = next(iter(self.cands))
            if self.model.IsCoord(s, m) and (name == "RecvForward" or msg["type"] == "DATA"):
                self.pending[m].append(((msg["sender"], msg["seqno"]), s.vid[m], ev["i"]))
        if name == "Deliver":
            self.expect[m] = ("sequencer", "RecvData", ev["params"].get("q"))
        if name in ("SendView", "InstallView"):
            self.expect[m] = ("sequencer", "InstallView", None)
        return None

    def _take(self, nxt: set, ev: dict, kind: str, head: str, stutter: bool = False) -> Optional[tuple[str, str]]:
        if not nxt and self.repair:
            nxt = self._repaired(ev, kind)
        if not nxt:
            return "nonconforming", self._explain(ev, kind, head, stutter)
        if len(nxt) > MAX_CANDIDATES:
            return "rejected", f"event {ev['i']}: more than {MAX_CANDIDATES} candidate states"
        self.cands = nxt
        self.peak = max(self.peak, len(nxt))
        return None

    def _repaired(self, ev: dict, kind: str) -> set:
        """Census only (``repair=True``; never a verdict): the successors
        the record would have if divergence (c), (d) or (e) were allowed,
        so that the replay can go on and find what follows.  Records the
        divergence in ``self.divergences``."""
        model, m, name, st = self.model, ev["nid"], ev["name"], ev.get("state")
        out, tag = set(), None
        if kind == "sequencer" and name == "Send" and all(s.blocked[m] for s in self.cands):
            tag = "c"                   # Send with the latch open, the latch then closed again
            for s in self.cands:
                t = model.Send(s._replace(blocked=s.blocked.set(m, False)), m)
                if t is not None:
                    out.add(t._replace(blocked=s.blocked))
        elif kind == "sequencer" and name == "RecvData" and ev["params"].get("p") == m:
            tag = "d"                   # take the DATA from behind the FORWARD to itself
            msg = ev.get("msg") or {}
            for s in self.cands:
                ch = s.chan[(m, m)]
                at = next((i for i, x in enumerate(ch) if x["type"] == "DATA"), None)
                if at is not None and ch[at]["sender"] == msg.get("sender") and ch[at]["seqno"] == msg.get("seqno"):
                    s2 = s._replace(chan=s.chan.set((m, m), (ch[at],) + ch[:at] + ch[at + 1:]))
                    t = model.RecvData(s2, m, m)
                    if t is not None:
                        out.add(t)
        elif kind == "sequencer" and name == "InstallView" and st is not None:
            tag = "e"                   # the received-table without the suspects
            keep = {int(x) for x in st["recv"]}
            for s in self.cands:
                if set(s.recv[m]) - keep <= s.crashed:
                    out.add(s._replace(recv=s.recv.set(m, s.recv[m].restrict(set(s.recv[m]) & keep))))
        out = {t for t in out if self._matches(t, ev, kind)}
        if out:
            self.divergences.append((tag, ev["i"]))
        return out

    def _explain(self, ev: dict, kind: str, head: str, stutter: bool) -> str:
        """``stutter``: the record completes a step already taken (or is the
        Multicast of one): only the logged state can be wrong."""
        m, name = ev["nid"], ev["name"]
        enabled = list(self.cands) if stutter else \
            [t for s in self.cands for t in self._successors(s, ev, kind) if t is not None]
        if not enabled:
            why = ""
            if name == "Send" and all(s.blocked[m] for s in self.cands):
                why = (f": Send({m}) waits while blocked[{m}] (the spec's latch holds the application's "
                       f"sends); the implementation's SEQUENCER sits above FLUSH and sends while FLUSH has "
                       f"closed the latch (divergence (c), layer order)")
            if (kind == "sequencer" and name == "RecvData" and ev["params"].get("p") == m
                    and all(s.chan[(m, m)] and s.chan[(m, m)][0]["type"] == "FORWARD" for s in self.cands)):
                why = (f": in the spec the channel {m} -> {m} holds {m}'s re-forward to itself (Moved: it "
                       f"became coordinator) ahead of this DATA, so RecvForward({m}, {m}) must come first; the "
                       f"implementation's FLUSH delivers its own multicast at once, while its unicast to itself "
                       f"goes round the network (divergence (d), self channel order)")
            return f"{head}: not enabled in any of {len(self.cands)} candidate model state(s){why}"
        s = enabled[0]
        if ev.get("state") is None:
            return f"{head}: the model's successor does not match the logged message"
        if kind == "sequencer":
            exp, got = seq_projection(s, m), _seq_norm(ev["state"])
        else:
            exp, got = flush_projection(s, m), self.flush_norm(ev["state"], m)
        lines = [f"  {f}: model {exp[f]!r} != logged {got[f]!r}" for f in exp if exp[f] != got[f]]
        why = ""
        gone = {int(x) for x in exp.get("recv", {})} - {int(x) for x in got.get("recv", {})}
        if (kind == "sequencer" and name == "InstallView" and len(lines) == 1 and lines[0].startswith("  recv")
                and set(got["recv"]) < set(exp["recv"]) and gone <= set(s.crashed)):
            why = (f" (divergence (e): the VIEW names {sorted(gone)}, which crashed after the initiator sent "
                   f"it; the spec's SEQUENCER installs the VIEW's members (Moved keeps their received-table "
                   f"entries until the next flush), the implementation's FLUSH hands its SEQUENCER the VIEW's "
                   f"members less those its failure detector suspects)")
        return f"{head}: logged state differs from the model's successor{why}\n" + "\n".join(lines)


def divergence_census(trace: Trace) -> tuple[list[tuple[str, int]], Optional[str]]:
    """Every divergence of a run, not only the first: the composed replay
    with (a), (c), (d), (e) let through (``_repaired``; (a): a coordinator
    whose latch is closed takes the FORWARD without multicasting, and the
    DATA goes into the channels of the view its Multicast record names).
    Returns the (tag, event) list and None if the replay then reaches the
    end, else the reason it stops.  A diagnostic: the run's verdict is
    ``replay``'s."""
    r = ComposedReplayer(composed_model(trace), repair=True)
    for ev in trace.events:
        failed = r.step(ev)
        if failed:
            return r.divergences, failed[1]
    return r.divergences, None


def composed_model(trace: Trace) -> SequencerFlushModel:
    h, nodes = trace.header, list(trace.header["nodes"])
    c = h["constants"]
    return SequencerFlushModel({"N": len(nodes), "MaxSeq": c["MaxSeq"], "MaxCrashes": c["MaxCrashes"],
                                "Senders": frozenset(nodes), "UniformDelivery": bool(c.get("UniformDelivery", False)),
                                "ResendAlways": bool(c.get("ResendAlways", False))})


PROTOCOL_DEFAULTS = {"nodes": 3, "messages": 2, "block_time": 0.002}


def simulate(seed: int, faults, options: dict):
    """One simulated SEQUENCER-over-FLUSH run as groupcheck-trace/2 records."""
    from groupcheck.impl import tracefile
    from groupcheck.impl.flush import sequencer_flush_stack
    from groupcheck.impl.sim_flush import simulate_flush
    opts = {**PROTOCOL_DEFAULTS, **(options or {})}
    n, per = int(opts["nodes"]), int(opts["messages"])
    plan = tracefile.parse_faults(faults) if isinstance(faults, str) else faults
    nodes = list(range(1, n + 1))
    msgs = tracefile.sequencer_workload(n, per)
    # hold_sends / self_channel / view_as_sent False: the earlier couplings, which diverge at
    # (c) / (d) / (e) (tests)
    bt = opts["block_time"]
    coupling = {k: cflush._flag(opts.get(k, True))
                for k in ("hold_sends", "self_channel", "view_as_sent", "pass_latch", "resent_first")}
    records, s = simulate_flush(
        nodes, msgs, seed, plan, protocol="sequencerflush",
        make_stack=lambda nid, members: sequencer_flush_stack(nid, members, block_time=bt, **coupling))
    run_id = f"sequencerflush-n{n}-m{per}-s{seed}"
    consts = {**tracefile.sequencer_constants(nodes, msgs, plan.crashes), "ReconcileDigests": True,
              "UniformDelivery": False, "ResendAlways": coupling["pass_latch"]}
    v2 = tracefile.to_v2(records, consts, run_id, quiescent=s["quiescent"], end_clock=s.get("end_clock"))
    summary = {"run_id": run_id, "seed": seed, "events": len(v2) - 2, "quiescent": s["quiescent"],
               "crashed": s["crashed"], "skipped_crashes": s["skipped_crashes"], "views": s["views"],
               "unfinished": s["unfinished"], "crash_phases": s["crash_phases"],
               "delivered": {m: d for m, d in s["delivered"].items()},
               "reconciled": sum(st.get("flush.reconciled", 0) for st in s["stats"].values()),
               "held_sends": sum(st.get("flush.held_sends", 0) for st in s["stats"].values()),
               "forward_not_coord": sum(st.get("sequencer.forward_not_coord", 0) for st in s["stats"].values()),
               "retransmissions": sum(st.get("reliable.retransmitted", 0) for st in s["stats"].values()),
               "dropped_datagrams": s["network"]["lost"] + s["network"]["to_crashed"]}
    return v2, summary


def draw(seed: int) -> tuple[str, dict]:
    """One audit run's size and faults from its seed: 3-4 members, 1-3
    multicasts each, the coordinator crashing in most runs (a second crash
    in some), at drawn times."""
    import random
    rng = random.Random(seed * 7919 + 17)
    n, per, span = tracefile.draw_size(rng, (3, 4))
    plan = rng.choice(("none", "coordinator", "coordinator", "other", "two"))
    crashes: tuple = ()
    if plan != "none":
        t1 = round(rng.uniform(0.0, span + 0.02), 4)
        crashes = ((rng.randint(2, n) if plan == "other" else 1, t1),)
        if plan == "two":
            crashes += ((rng.randint(2, n), round(t1 + rng.uniform(0.0, 0.03), 4)),)
    return tracefile.fault_spec(0.1, 0.05, 0.003, crashes), {"nodes": n, "messages": per}


PROTOCOL = Protocol(
    name="sequencerflush", spec="SequencerFlush",
    actions=ACTIONS,
    properties=PROPERTIES,
    simulate=simulate, replay=replay,
    default_options=PROTOCOL_DEFAULTS,
    more_options=("hold_sends", "self_channel", "view_as_sent", "pass_latch", "resent_first"),
    draw=draw,
    campaign_faults="loss=0.1,dup=0.05,reorder=3,crash=1@15",
    end_of_run=end_of_run,
)
