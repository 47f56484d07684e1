"""SEQUENCER over FLUSH conformance: the composed stack's traces replayed
against model/sequencerflush.py (spec/SequencerFlush).

A model step is often two records, one per layer (impl/stacks/sequencerflush.py
``layer_of`` tells them apart), so the binding's pre-pass
(``SequencerFlushBinding.steps``) joins each member's records into model
steps before the one engine (conformance/replay/engine.py) sees them; the joins,
the stutters and the divergences the replay names are docs/flush.md, "The
composed replay".  After the last record the catalogue's properties
(core/properties.py) judge the model's deliveries of the accepted
steps; SurvivorTotalOrder, not the uniform TotalOrder (docs/flush.md).
"""

from __future__ import annotations

import random
from typing import Optional

from groupcheck.conformance.replay import flush as cflush, sequencer as cseq
from groupcheck.conformance.replay.engine import Binding, enabled_steps, HeaderError
from groupcheck.conformance.replay.registry import Protocol
from groupcheck.conformance.tlctrace import TLATrace
from groupcheck.core import properties
from groupcheck.core.trace import layers as trace_layers, writer as tracefile
from groupcheck.core.trace.reader import Trace
from groupcheck.impl import campaign, sim_sequencer
from groupcheck.impl.faults import NETWORK_AND_CRASH, plan_reader
from groupcheck.impl.sim_flush import simulate_flush
from groupcheck.impl.stacks.sequencerflush import sequencer_flush_stack
from groupcheck.model.flush import LastView
from groupcheck.model.sequencer import subsets
from groupcheck.model.sequencerflush import SequencerFlushModel
from groupcheck.model.values import Fn, Seq


SEQ_ACTIONS = ("Send", "RecvForward", "RecvData", "InstallView")
ACTIONS = tuple(dict.fromkeys(cflush.SPEC_ACTIONS + SEQ_ACTIONS))
# GapFreeFIFO: what a member delivers of a sender that never crashed is that
# sender's 1, 2, ..., k (the second loss after a coordinator crash; the stack's resent_first fix
# is what keeps it, docs/sequencer.md "Losses after a coordinator crash")
SEQ_PROPERTIES = ("NoDuplicates", "Integrity", "SenderFIFO", "GapFreeFIFO", "SurvivorTotalOrder")
PROPERTIES = SEQ_PROPERTIES + ("VirtualSynchrony",) + tuple(f"Flush.{p}" for p in cflush.PROPERTIES)
# What the replay judges on SEQUENCER's delivery histories, in the order it reports them
# (the registration's ``judged``; EventualDelivery at the end of a quiescent run).
# Flush.VirtualSynchrony, judged first, reads FLUSH's deliveries, under the
# application's: its history does not show them.
JUDGED = SEQ_PROPERTIES + ("VirtualSynchrony", "EventualDelivery")


def layer_of(ev: dict) -> str:
    """"both" (Crash), "sequencer" or "flush": by the action and its
    parameters (core/trace/layers.py ``sequencer_flush``), so with or without state."""
    if ev["name"] == "Crash":
        return "both"
    return trace_layers.layer_of("sequencerflush", ev["name"], ev["params"])


# ---------------------------------------------------------------- the binding

FLUSH_TYPES = ("START_FLUSH", "FLUSH_OK", "FLUSH_COMPLETED", "VIEW", "STOP_FLUSH")
F_SINGLE = ("StartFlush", "FlushOk", "FlushCompleted", "SendView", "StopFlush")
F_VARS = ("vid", "phase", "blocked", "flushInit", "flushOks", "digest", "completed", "delivered")
# kinds of joined steps whose record takes a message from a channel: (parameter, FLUSH ids?)
TAKES = {"forward": ("p", False), "coord_forward": ("p", False), "own_data": (None, False),
         "deliver": ("q", True)}


def _ids(xs) -> list:
    return sorted(list(x) for x in xs)


def reduce_state(s):
    """``s`` without ``delivered`` and ``closed`` (the delivery count at each
    view change): they grow with the run and no guard reads them."""
    if all(not d for d in s.delivered.values()) and all(not c for c in s.closed.values()):
        return s
    empty = Fn({m: () for m in s.delivered})
    return s._replace(delivered=empty, closed=empty)


def _same(x, msg: dict) -> bool:
    """Channel entry x is the logged message: its view and type, and its
    sender and seqno where the message has them (DATA, FORWARD)."""
    return (x.get("view") == msg.get("view") and x["type"] == msg.get("type")
            and all(x.get(k) == msg[k] for k in ("sender", "seqno") if k in msg))


def _next_of_member(evs: list) -> list:
    """For each record, the index of its member's next record (None: its last)."""
    nxt, last = [None] * len(evs), {}
    for k in range(len(evs) - 1, -1, -1):
        nxt[k] = last.get(evs[k]["nid"])
        last[evs[k]["nid"]] = k
    return nxt


class SequencerFlushBinding(Binding):
    """SEQUENCER over FLUSH's table for the replay engine: the pre-pass
    (``steps``) joins the two layers' records into model steps, each with
    its kind (``step``); the logged variables of a step are its records' (``flush.*``,
    ``sequencer.*``), in model terms."""

    streams = False         # the pre-pass looks ahead (each member's next record)

    protocol = "sequencerflush"
    TITLE = "SEQUENCER over FLUSH"
    FIELDS = tuple(f"flush.{v}" for v in F_VARS) + tuple(f"sequencer.{v}" for v in cseq.FIELDS)
    # The model has no digest variable: it observes FLUSH's digest as the
    # member's log while it is Completed, so a coordinator that relays a
    # FORWARD after its FLUSH_COMPLETED grows the model's digest, while the
    # layer's digest stays the one it reported.  Compared where logged only.
    LAZY = ("flush.digest",)

    def __init__(self, trace: Trace) -> None:
        super().__init__(trace)
        h = trace.header
        if h["protocol"] != self.protocol:
            raise HeaderError(f"no {self.TITLE} replay for protocol {h['protocol']!r}")
        try:
            self.model = self.make_model(trace)
        except (KeyError, ValueError, TypeError) as e:
            raise HeaderError(f"bad header constants: {e}") from None
        self.check_header(self.model.Members, self.TITLE)
        M = self.model.Members
        self.fkey: dict[tuple, tuple] = {}      # FLUSH key -> SEQUENCER id of the DATA it carries
        self.fview: dict[tuple, int] = {}       # FLUSH key -> view it was multicast in
        self.stats = {"discard_stutters": 0, "digest_deliveries": 0}   # refinement steps taken (yields)
        self.blamed: Optional[int] = None
        self.all_cuts = False       # every cut at a Crash (tests/test_crash_cuts.py compares)
        self.empty = Fn({m: () for m in M})
        # what the properties judge: the model's deliveries of the accepted steps, and (FLUSH's
        # VirtualSynchrony, on what members logged) the last logged FLUSH view and delivered set
        self.hist = {m: [] for m in M}
        self.in_view: dict[int, dict[int, set]] = {m: {} for m in M}
        self.sent = {m: 0 for m in M}
        self.sent_vid: dict[tuple, int] = {}     # (sender, seqno) -> the sender's view at its Send
        s0 = next(iter(self.model.init()))
        self.vid = dict(s0.vid.items())          # 0 for a joiner (the ring's composition) until it joins
        self.joined_at: dict[int, int] = {}      # joiner -> the first view it installed
        self.crashed: set[int] = set()
        self.fl_vid: dict[int, int] = {}
        self.fl_delivered: dict[int, set] = {}
        self.views = {1: set(s0.views[0])}

    # -- what a subclass (conformance/replay/raincoresequencerflush.py) changes ------------
    def make_model(self, trace: Trace):
        return composed_model(trace)

    def layer(self, ev: dict) -> str:
        """"both" (Crash), "sequencer", "flush" (or, in a subclass, another
        layer whose records the pre-pass passes on one by one)."""
        return layer_of(ev)

    def state_layer(self, ev: dict) -> str:
        """The layer whose variables the record's ``state`` logs."""
        return self.layer(ev)

    def dead(self, s) -> frozenset:
        """The members that crashed in model state ``s``."""
        return s.crashed

    # -- the pre-pass ----------------------------------------------------------------
    def sid(self, key) -> tuple:
        key = tuple(key)
        return self.fkey.get(key, (-key[0], key[1]))      # negative: a key no Multicast record named

    def steps(self):
        """The model steps of the trace.  Each member's records are joined
        (its next record: ``after``, however many records of other members
        come between; the step is taken at the first record's place, which
        changes nothing, as no other member's step touches m's variables):

        * SEQUENCER Send (DATA) or RecvForward of the coordinator + its
          FLUSH Multicast: one Send / RecvForward (McastData); the
          Multicast's ``msg.view`` must be the view the model multicast in;
        * FLUSH Deliver(m, q) + SEQUENCER RecvData(m, p = q): one RecvData(m, q);
        * SEQUENCER RecvData(m, p /= m) with no Deliver before it (or of a
          DATA m multicast without delivering it): a DATA the VIEW's
          digest brings; no step, absorbed into m's next view change;
        * FLUSH SendView / InstallView + the SEQUENCER InstallView that
          follows (+ the absorbed RecvData records): one SendView / InstallView;
        * any other record: the composed action of its name (Crash: every
          ``lost`` cut; a FLUSH Discard the spec has already done at a view
          change or a crash: a stutter).
        A record the join expects and does not find fails the run there."""
        evs = self.trace.events
        nxt = _next_of_member(evs)
        M, full = self.model.Members, self.trace.states == "full"
        prev: dict[tuple, dict] = {}            # full-state traces: the previous state (to take deltas)
        # the RecvData records a view change absorbs; DATA m multicast (pass_latch) and did not deliver
        recon, undelivered = {m: [] for m in M}, {m: set() for m in M}
        self._start_views(M)
        used: set[int] = set()
        awaited: dict[int, str] = {}            # record index -> the failure if it is not the awaited one
        done: dict[int, dict] = {}

        def record(k: int) -> dict:             # a full-state trace's records as deltas, each once
            if k not in done:
                ev = evs[k]
                done[k] = self._delta(ev, prev) if full and ev.get("state") is not None else ev
            return done[k]

        for k in range(len(evs)):
            if k in used:
                continue
            ev = record(k)
            done.pop(k, None)
            m, name, kind = ev["nid"], ev["name"], self.layer(ev)
            if k in awaited and kind != "both":
                yield dict(ev, step="stop", parts=[ev], stop=awaited.pop(k))
                return
            awaited.pop(k, None)
            j = nxt[k]
            after = record(j) if j is not None else None
            nm = (after or {}).get("name")
            ak = self.layer(after) if after is not None else None
            msg = ev.get("msg") or {}
            if m not in M and kind in ("sequencer", "flush", "both"):   # (a ring's TokenLoss names no node)
                yield dict(ev, step="crash", parts=[ev])          # check() rejects it
                return
            if kind == "both":
                if recon[m]:
                    yield self._unabsorbed(recon[m][0])
                    return
                undelivered[m].clear()
                yield self._join("crash", [ev])
            elif kind not in ("sequencer", "flush"):    # a layer below (the ring): its records as they are
                yield self._join(kind, [ev])
            elif kind == "sequencer" and name in ("Send", "RecvForward"):
                coord = name == "RecvForward" or msg.get("type") == "DATA"
                if ev.get("msg") is not None and coord and ak == "flush" and nm == "Multicast":
                    used.add(j)
                    mc = after.get("msg") or {}
                    key, sid = (mc.get("sender"), mc.get("seqno")), (msg.get("sender"), msg.get("seqno"))
                    if key in self.fkey or key[0] != m:
                        yield dict(after, step="stop", parts=[after], stop=(
                            "nonconforming", f"{self.head(after)}: {list(key)} is not a new FLUSH multicast of "
                                             f"member {m}"))
                        return
                    self.fkey[key], self.fview[key] = sid, mc.get("view")
                    st = after.get("state")
                    if st is not None and list(key) not in st.get("delivered", []):
                        undelivered[m].add(sid)
                    yield self._join("coord_send" if name == "Send" else "coord_forward", [ev, after], own=key)
                else:
                    yield self._join("send" if name == "Send" else "forward", [ev])
            elif kind == "flush" and name == "Deliver":
                if ak == "sequencer" and nm == "RecvData" and after["params"].get("p") == ev["params"].get("q"):
                    used.add(j)
                    yield self._join("deliver", [ev, after])
                else:
                    if j is not None:
                        awaited[j] = ("nonconforming", f"{self.head(after)}: member {m}'s previous step waits "
                                                       "for its SEQUENCER RecvData record")
                    yield self._join("deliver", [ev])
            elif kind == "flush" and name in ("SendView", "InstallView"):
                if ak == "sequencer" and nm == "InstallView":
                    used.add(j)
                    parts = recon[m] + [ev, after]
                    recon[m], undelivered[m] = [], set()
                    yield self._join("view", parts, at=ev)
                else:
                    if j is not None:
                        awaited[j] = ("nonconforming", f"{self.head(after)}: member {m}'s previous step waits "
                                                       "for its SEQUENCER InstallView record")
                    yield self._join("view", [ev])
            elif kind == "sequencer" and name == "RecvData":
                if ev["params"].get("p") != m or (msg.get("sender"), msg.get("seqno")) in undelivered[m]:
                    recon[m].append(ev)         # from the VIEW's digest: the view change absorbs it
                    self.stats["digest_deliveries"] += 1
                else:
                    yield self._join("own_data", [ev])
            elif kind == "sequencer":           # InstallView without its FLUSH record
                yield dict(ev, step="stop", parts=[ev], stop=(
                    "nonconforming", f"{self.head(ev)}: no FLUSH SendView/InstallView of member {m} before it"))
                return
            elif name == "Multicast":
                yield dict(ev, step="stop", parts=[ev], stop=(
                    "nonconforming", f"{self.head(ev)}: no DATA of member {m}'s SEQUENCER is waiting to be "
                                     "multicast"))
                return
            else:
                yield self._join("flush", [ev])
        left = [recon[m][0] for m in M if recon[m]]
        if left:
            yield self._unabsorbed(min(left, key=lambda r: r["i"]))

    def _start_views(self, M) -> None:
        self._cur = {m: 1 for m in M}           # the FLUSH view each member logged last
        self._own = {m: set() for m in M}       # FLUSH keys m multicast in that view
        self._counted = {m: set() for m in M}   # FLUSH keys of that view in m's log so far
        self._phase = {m: "Normal" for m in M}

    def _unabsorbed(self, r: dict) -> dict:
        """A SEQUENCER RecvData the pre-pass held for a view change of its
        member (no FLUSH Deliver before it: a delivery from a VIEW's digest)
        that never came (the member crashed, or the trace ended): no step
        of the model takes it, so the run stops there rather than leave the
        record unjudged (a forged second delivery would otherwise pass)."""
        return dict(r, step="stop", parts=[r], stop=(
            "nonconforming", f"{self.head(r)}: no FLUSH Deliver before it and no view change of member "
                             f"{r['nid']} after it: no step of the model delivers it"))

    def _delta(self, ev: dict, prev: dict) -> dict:
        """A whole-state record (a test's ``states="full"`` trace) as a
        delta: an append variable as what it added to the last state of
        its member and layer (a rewritten history: from the first element
        that differs), every other variable as logged."""
        key = (ev["nid"], self.state_layer(ev))
        old, st = prev.get(key) or {}, ev["state"]
        prev[key] = st
        out = dict(st)
        if key[1] == "sequencer" and "delivered" in st:
            a, b = old.get("delivered") or [], st["delivered"]
            n = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            out["delivered"] = b[n:]
        elif "delivered" in st:
            out["delivered"] = [x for x in st["delivered"] if x not in (old.get("delivered") or [])]
        return dict(ev, state=out)

    def _join(self, kind: str, parts: list, at: Optional[dict] = None, own: Optional[tuple] = None) -> dict:
        """One model step of ``parts``, taken at ``at`` (default the first
        part), with the parts' logged variables in model terms (the last
        part to log a variable gives its value; appends are joined) and,
        for each, the record that logged it (``owner``)."""
        at = at or parts[0]
        m = at["nid"]
        logged, owner = {}, {}
        spans: list = []            # (record, length of the joined deliveries up to it)
        for r in parts:
            st = r.get("state")
            layer = self.state_layer(r)
            if layer == "flush":
                if st is not None and "vid" in st:
                    self._set_view(m, st["vid"])
                elif r["name"] in ("SendView", "InstallView") and (r.get("msg") or {}).get("view") is not None:
                    self._set_view(m, r["msg"]["view"] + 1)
                if st is not None and "phase" in st:
                    self._phase[m] = st["phase"]
                mine = {own} if own is not None and r["name"] == "Multicast" else set()
                if own is not None and self.fview.get(own) == self._cur[m]:
                    self._own[m].add(own)
                if st is not None:
                    self._log_flush(m, r, st, mine, logged, owner)
            elif layer not in ("sequencer", "both") and st is not None:     # a layer below: as logged
                for var, val in st.items():
                    logged[f"{layer}.{var}"], owner[f"{layer}.{var}"] = val, r
            elif st is not None:
                for var, val in st.items():
                    val = cseq.SequencerBinding.norm(var, val)
                    if var == "delivered":
                        val = logged.get("sequencer.delivered", []) + val
                        spans.append((r, len(val)))
                    logged[f"sequencer.{var}"] = val
                    owner[f"sequencer.{var}"] = r
        # {} (a part logged that nothing changed) is not None (nothing logged)
        stated = logged or ({} if any(r.get("state") is not None for r in parts) else None)
        return dict(at, step=kind, parts=parts, state=stated, owner=owner, spans=spans)

    def _set_view(self, m: int, v: int) -> None:
        if v != self._cur[m]:
            self._cur[m], self._own[m], self._counted[m] = v, set(), set()

    def _log_flush(self, m: int, r: dict, st: dict, mine: set, logged: dict, owner: dict) -> None:
        """A FLUSH record's logged variables in the model's terms.  The
        model's log[m] is what m multicast or took in its view; the
        implementation's FLUSH keeps a multicast it makes after its
        FLUSH_COMPLETED without delivering it (pass_latch), so m's own
        multicasts of the view count in its log, and in its digest once
        Completed, delivered or not.  The FLUSH delivered set is compared
        as the log's additions: the keys of the current view not counted
        yet (a digest delivery of the view left behind is not in it)."""
        for var, val in st.items():
            if var in ("vid", "phase", "blocked", "flushInit"):
                out = val
            elif var == "flushOks":
                out = sorted(val)
            elif var == "completed":
                out = sorted([q, _ids(self.sid(k) for k in d)] for q, d in val)
            elif var == "digest":
                own = self._own[m] if self._phase[m] == "Completed" else set()
                out = _ids(self.sid(k) for k in {tuple(k) for k in val} | own)
            elif var == "delivered":
                continue
            else:
                out = val
            logged[f"flush.{var}"], owner[f"flush.{var}"] = out, r
        if "delivered" in st or mine:
            v = self._cur[m]
            new = {tuple(k) for k in st.get("delivered", [])} | mine
            new = {k for k in new if self.fview.get(k) == v and k not in self._counted[m]}
            self._counted[m] |= new
            logged["flush.delivered"] = _ids(logged.get("flush.delivered", []) + [self.sid(k) for k in new])
            owner["flush.delivered"] = r
        self.fl_vid[m] = self._cur[m]
        self.fl_delivered.setdefault(m, set()).update(tuple(k) for k in st.get("delivered", []))

    # -- the engine's hooks ----------------------------------------------------------
    def init(self):
        return self.model.init()

    def check(self, ev: dict) -> Optional[str]:
        m = ev["nid"]
        return None if m in self.model.Members else f"nid: {m!r} is not a member 1..{self.model.N}"

    def before(self, ev: dict, cands):
        self.blamed = None
        return ev.get("stop")

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

    def _source(self, ev: dict) -> Optional[int]:
        """The member whose channel the step takes from, if it takes."""
        kind, name, prm = ev["step"], ev["name"], ev["params"]
        if kind in TAKES:
            p = TAKES[kind][0]
            return ev["nid"] if p is None else prm.get(p)
        if kind in ("view", "flush") and name in cflush.RECEIVE:        # (a Deliver is a "deliver" step)
            return prm.get(cflush.RECEIVE[name])
        return None

    def successors(self, s, ev: dict):
        model, kind, name, m = self.model, ev["step"], ev["name"], ev["nid"]
        src = self._source(ev)
        if kind == "crash":
            # the greatest cut alone, nothing lost (``all_cuts``: every cut, as the
            # spec branches): what a smaller cut drops a receiver may still not
            # take, no guard reads the dead member's channels but the receive of
            # their head, and its view change purges what is left (``Purged``)
            for lost in subsets(set(model.Members) - {m}) if self.all_cuts else (frozenset(),):
                yield model.Crash(s, m, lost)
        elif kind in ("send", "coord_send"):
            yield model.Send(s, m)
        elif src is not None and src not in model.Members:
            return
        elif kind in ("forward", "coord_forward"):
            yield model.RecvForward(s, m, src)
        elif kind in ("own_data", "deliver"):
            yield model.RecvData(s, m, src)
        elif name in F_SINGLE:
            yield getattr(model, name)(s, m)
        elif name in cflush.RECEIVE:
            msg = ev.get("msg")
            if self._head_ok(s, src, m, msg, True):
                yield getattr(model, name)(s, m, src)
            elif name == "Discard" and msg is not None and not any(_same(x, msg) for x in s.chan[(src, m)]):
                # divergence (b): the spec already dropped it (Purged at the view change, or at src's Crash);
                # matched by identity, so that newer messages of that view in the channel (a suspected,
                # still-live sender's) do not hide that this one is gone
                if msg.get("view", 0) < s.vid[m] or (msg.get("type") in FLUSH_TYPES and src in self.dead(s)):
                    self.stats["discard_stutters"] += 1
                    yield s

    def message(self, s, t, ev: dict) -> Optional[str]:
        kind, name, m, msg = ev["step"], ev["name"], ev["nid"], ev.get("msg")
        if t is s:
            return None                         # a Discard stutter: the spec took nothing
        src = self._source(ev)
        if src is not None and msg is not None and not self._head_ok(
                s, src, m, msg, TAKES.get(kind, (None, True))[1]):
            ch = s.chan[(src, m)]
            return f"the channel {src} -> {m} has {dict(ch[0]) if ch else 'nothing'} at its head"
        if kind == "deliver" and len(ev["parts"]) > 1 and ev["parts"][1].get("msg") is not None:
            rd, head = ev["parts"][1]["msg"], s.chan[(src, m)][0]
            if (rd.get("sender"), rd.get("seqno")) != (head["sender"], head["seqno"]):
                return f"the SEQUENCER takes DATA {[head['sender'], head['seqno']]}"
        if kind in ("send", "coord_send") and msg is not None:
            wrong = cseq.sent_is(msg, ("DATA" if self.model.IsCoord(s, m) else "FORWARD", m, t.sent[m]))
            if wrong:
                return wrong
        coord = kind in ("send", "forward", "coord_send", "coord_forward") and self.model.IsCoord(s, m)
        if kind in ("send", "forward") and coord and msg is not None:
            sid = [m, t.sent[m]] if name == "Send" else [msg.get("sender"), msg.get("seqno")]
            return (f"coordinator {m} sequences {sid} and its next record is not the Multicast of that DATA: "
                    f"the spec puts DATA {sid} of view {s.vid[m]} in the channels in the same step (McastData), "
                    f"the implementation's FLUSH holds it in the latch and multicasts it after the flush, in a "
                    f"later view (divergence (a): blocked[{m}] = {s.blocked[m]})")
        if kind in ("coord_send", "coord_forward"):
            mc = ev["parts"][1]
            if not coord:
                self.blamed = mc["i"]
                return f"member {m} is not the coordinator: its SEQUENCER multicasts nothing"
            got = (mc.get("msg") or {}).get("view")
            if got != s.vid[m] or (mc.get("msg") or {}).get("type") != "DATA":
                self.blamed = mc["i"]
                return (f"{self.head(mc)}: the DATA goes out in view {got}; the spec multicast it in view "
                        f"{s.vid[m]} at the coordinator's Send/RecvForward (McastData) (divergence (a): the "
                        f"implementation's FLUSH held it in the latch)")
        if name == "SendView" and msg is not None:
            if msg.get("type") != "VIEW" or msg.get("view") != s.vid[m] or \
                    sorted(msg.get("members", [])) != sorted(t.views[-1]):
                return f"the model's VIEW is view {s.vid[m]}, members {list(t.views[-1])}"
        return None

    def observe(self, s, t, ev: dict, var: str):
        m = ev["nid"]
        layer, _, v = var.partition(".")
        if layer == "sequencer":
            return cseq.SequencerBinding.observe(s, t, ev, v)
        if v == "delivered":                # the log's additions (all of it after a view change)
            # within a view the model's log only grows at its end: the additions are its tail
            # (a set difference here made a run's check quadratic in its length)
            return _ids(t.log[m][len(s.log[m]):] if t.vid[m] == s.vid[m] else t.log[m])
        if v == "digest":
            return _ids(t.log[m]) if t.phase[m] == "Completed" else []
        if v == "flushOks":
            return sorted(t.flushOks[m])
        if v == "completed":
            return sorted([q, _ids(d)] for q, d in t.completed[m])
        return getattr(t, v)[m] if v in ("vid", "phase", "blocked", "flushInit") else None

    def reduce(self, t):
        # reduce_state, sharing one empty Fn; the properties judge the histories ``after`` accumulates
        if t.delivered is not self.empty or t.closed is not self.empty:
            t = t._replace(delivered=self.empty, closed=self.empty)
        # a view's log grows with the view and the model appends to it with ``+``: as a Seq from its
        # first entry on, each append shares the log's storage (O(1), not a copy of the whole view's)
        grown = {m: Seq(x) for m, x in t.log.items() if x and type(x) is tuple}
        return t._replace(log=t.log.update(grown)) if grown else t

    def after(self, ev: dict, pairs: list, cands: set):
        kind, m = ev["step"], ev["nid"]
        s, t = pairs[0]
        add = t.delivered[m][len(s.delivered[m]):]
        if add:
            self.hist[m].extend(add)
            self.in_view[m].setdefault(s.vid[m], set()).update(add)
        if self.vid[m] == 0 and t.vid[m]:
            self.joined_at[m] = t.vid[m]
        self.vid[m] = t.vid[m]
        for q in range(s.sent[m] + 1, t.sent[m] + 1):
            self.sent_vid[(m, q)] = s.vid[m]
        self.sent[m] = t.sent[m]
        if kind == "crash":
            self.crashed.add(m)
        if ev["name"] == "SendView":
            self.views[len(t.views)] = set(t.views[-1])
        return None

    # -- failures ---------------------------------------------------------------------
    def bad_event(self, ev: dict) -> int:
        return ev["i"] if self.blamed is None else self.blamed

    def explain(self, cands, ev: dict) -> str:
        self.blamed = None
        m, kind, name = ev["nid"], ev["step"], ev["name"]
        enabled, why_msg, bad = enabled_steps(self, cands, ev)
        if not enabled and why_msg is None:
            why = ""
            if name == "Send" and all(s.blocked[m] for s in cands):
                why = (f": Send({m}) waits while blocked[{m}] (the spec's latch holds the application's "
                       f"sends); the implementation's SEQUENCER sits above FLUSH and sends while FLUSH has "
                       f"closed the latch (divergence (c), layer order)")
            if kind == "own_data" and all(s.chan[(m, m)] and s.chan[(m, m)][0]["type"] == "FORWARD"
                                          for s in cands):
                why = (f": in the spec the channel {m} -> {m} holds {m}'s re-forward to itself (Moved: it "
                       f"became coordinator) ahead of this DATA, so RecvForward({m}, {m}) must come first; the "
                       f"implementation's FLUSH delivers its own multicast at once, while its unicast to itself "
                       f"goes round the network (divergence (d), self channel order)")
            return f"{self.head(ev)}: not enabled in any of {len(cands)} candidate model state(s){why}"
        if not enabled:
            self.blamed = None
            self.message(*bad, ev)              # the record at fault (the Multicast's view: the Multicast)
            return f"{self.head(ev)}: the logged message is not the model's: {why_msg}"
        s, t = enabled[0]
        logged = ev.get("state") or {}
        bad = [v for v in self.FIELDS if v in logged and self.observe(s, t, ev, v) != logged[v]]
        r = ev["owner"][bad[0]] if bad else ev
        if bad and bad[0] == "sequencer.delivered":     # the first record whose deliveries depart
            model = self.observe(s, t, ev, bad[0])
            r = next((x for x, n in ev["spans"] if logged[bad[0]][:n] != model[:n]), r)
        self.blamed = r["i"]
        lines = [f"  {v}: model {self.observe(s, t, ev, v)!r} != logged {logged[v]!r}" for v in bad]
        why = ""
        if bad == ["sequencer.recv"] and kind == "view":
            exp, got = self.observe(s, t, ev, "sequencer.recv"), logged["sequencer.recv"]
            gone = {int(x) for x in exp} - {int(x) for x in got}
            if set(got) < set(exp) and gone <= set(self.dead(t)):
                why = (f" (divergence (e): the VIEW names {sorted(gone)}, which crashed after the initiator sent "
                       f"it; the spec's SEQUENCER installs the VIEW's members (Moved keeps their received-table "
                       f"entries until the next flush), the implementation's FLUSH hands its SEQUENCER the VIEW's "
                       f"members less those its failure detector suspects)")
        return f"{self.head(r)}: logged state differs from the model's successor{why}\n" + "\n".join(lines)

    # -- the properties ----------------------------------------------------------------
    def properties(self, cands: set):
        """The catalogue's properties (core/properties.py): FLUSH's
        VirtualSynchrony on its messages' send views, SEQUENCER's on its
        delivery histories (a joiner's run of each sender may start
        anywhere), then VirtualSynchrony on the views SEQUENCER delivered in."""
        views, out = dict(self.views), []
        w = cflush.vs_witness(views, dict(self.fview), self.fl_vid, self.fl_delivered)
        if w:
            out.append(("Flush.VirtualSynchrony", None, w))
        out += [(v.property, None, v.reason) for v in properties.judge(
            properties.History.of(self.hist, self.sent, self.crashed, joined={m: True for m in self.joined_at}),
            SEQ_PROPERTIES)]
        w = cflush.vs_on_logs(views, dict(self.vid), self.in_view)
        if w:
            out.append(("VirtualSynchrony", None, w))
        return out

    def at_end(self, cands: set):
        """EventualDelivery among the members that did not crash (the
        composed spec's LiveSender2Fixed property), at the end of a
        quiescent run: every message a survivor sent is delivered by every
        survivor that was a member when it was sent (a joiner, over the
        ring, owes nothing of the views before its own; a node that never
        joined is no member).  Then the claim itself against the model: the composed spec's
        Quiescent (nothing in flight, every live member in the latest view
        out of its flush, no view change pending), failing in every
        candidate (TraceSequencerFlush.tla's End step judges the same)."""
        owed = self.eventual_delivery()

        def judge(t):
            q = quiescent_witness(self.model, t)
            return {**owed, **({"Quiescent": q} if q else {})}
        return self.judge_end(cands, judge)

    def eventual_delivery(self) -> dict:
        """{"EventualDelivery": witness} or {} (``at_end``'s first part)."""
        witness = missing_since_joined(self.hist, self.sent_vid, self.vid, self.joined_at, self.crashed)
        return {"EventualDelivery": witness} if witness else {}


def quiescent_witness(model, s) -> Optional[str]:
    """The composed spec's Quiescent on model state ``s``, a crashed
    member's channel counted up to its last VIEW (what every cut its crash
    may make keeps): None when it holds, else what is still to do."""
    for (p, q) in sorted(model.pairs):
        ch = s.chan[(p, q)]
        if p in s.crashed:          # a crash may cut its channels after their last VIEW (Crash's lost)
            ch = ch[:LastView(ch)]
        if ch:
            m = ch[0]
            what = " ".join(f"{k}={m[k]}" for k in sorted(m) if k != "digest")
            return (f"a message ({what}) from member {p} to member {q} is still in flight "
                    f"({len(ch)} message(s) on that channel)")
    for m in model.Members:
        if m in s.crashed:
            continue
        if s.vid[m] != len(s.views) or s.phase[m] != "Normal" or s.blocked[m] or s.flushInit[m] != 0:
            return (f"member {m} (alive) ended in view {s.vid[m]} of {len(s.views)}, phase {s.phase[m]}, "
                    f"blocked={s.blocked[m]}, flushInit={s.flushInit[m]}")
        if model.UniformDelivery and s.ndel[m] != len(s.log[m]):
            return f"member {m} (alive) has {len(s.log[m]) - s.ndel[m]} logged DATA it has not delivered"
    if model.ViewChangePending(s):
        return f"members {[x for x in s.views[-1] if x in s.crashed]} crashed in the last view: a view change is pending"
    return None


def missing_since_joined(delivered: dict, sent_vid: dict, vid: dict, joined_at: dict,
                         crashed: set) -> Optional[str]:
    """The catalogue's EventualDelivery with joiners: a member that did not
    crash delivers every message ``(m, q)`` of a sender ``m`` that did not
    crash sent in a view it had joined by then (``sent_vid[(m, q)] >=
    joined_at``); a node that never joined (``vid`` 0) is no member.  None,
    or the first missing delivery."""
    members = {m: d for m, d in delivered.items() if vid.get(m, 0) >= 1}
    v = properties.eventual_delivery(properties.History.of(
        members, {}, crashed, quiescent=True, joined=joined_at, sent_view=sent_vid))
    return v.reason if v else None


# ---------------------------------------------------------------- TLC trace validation

# the composed action each joined step is (spec/SequencerFlush/TraceSequencerFlush.tla)
_ACTION = {"crash": "Crash", "send": "Send", "coord_send": "Send", "forward": "RecvForward",
           "coord_forward": "RecvForward", "own_data": "RecvData", "deliver": "RecvData", "stop": "Stop"}
# the joined step's logged variables under the trace spec's names
_TLA_VAR = {"flush.vid": "fvid", "flush.phase": "phase", "flush.blocked": "blocked",
            "flush.flushInit": "flushInit", "flush.flushOks": "flushOks", "flush.digest": "digest",
            "flush.completed": "completed", "flush.delivered": "flog", "sequencer.vid": "svid",
            "sequencer.sent": "sent", "sequencer.fwd": "fwd", "sequencer.recv": "recv",
            "sequencer.delivered": "delivered"}


def _pairs(xs) -> frozenset:
    return frozenset(tuple(x) for x in xs)


def tla_log(trace: Trace, binding: Optional[type] = None) -> list:
    """The trace as TraceSequencerFlush.tla reads it: the replay's pre-pass
    (``SequencerFlushBinding.steps``) joins each member's half-steps into
    composed steps, and each becomes one log entry: the composed action, the
    member, ``params.src`` (the channel it takes from), ``params.kind`` (the
    join), the message in the model's ids (a FLUSH key as the SEQUENCER id
    its Multicast record named), for a join of two records the second
    record's message (``rd``: the DATA the SEQUENCER takes; ``mc``: the
    coordinator's Multicast), and the logged variables in model terms
    (``fvid``, ``flog`` for FLUSH's vid and delivered, ``svid`` for
    SEQUENCER's vid, the others by their names).  ``i`` is the step's first
    record, ``parts`` every record it joins.  A run the pre-pass cannot join
    ends with a ``Stop`` entry, which no action matches.  ``binding``: a
    subclass whose pre-pass is used instead (the three-layer stack's)."""
    b = (binding or SequencerFlushBinding)(trace)
    out = []
    for st in b.steps():
        kind, m = st["step"], st["nid"]
        name = st["name"] if kind == "crash" else _ACTION.get(kind, st["name"])   # Crash or LeaveSuspected
        params: dict = {"kind": kind}
        src = b._source(st) if kind != "stop" else None
        if src is not None:
            params["src"] = src
        msg = dict(st.get("msg") or {})
        flush_ids = TAKES.get(kind, (None, True))[1] and src is not None
        if msg.get("type") == "DATA" and flush_ids and "sender" in msg:
            msg["sender"], msg["seqno"] = b.sid((msg["sender"], msg["seqno"]))
        if msg.get("type") in ("FLUSH_COMPLETED", "VIEW"):
            msg["digest"] = frozenset(tuple(b.sid(k)) for k in msg.get("digest", []))
        parts = st["parts"]
        if kind == "deliver" and len(parts) > 1 and parts[1].get("msg") is not None:
            rd = parts[1]["msg"]
            params["rd"] = (rd.get("sender"), rd.get("seqno"))
        if kind in ("coord_send", "coord_forward"):
            mc = parts[1].get("msg") or {}
            params["mc"] = {"type": mc.get("type") or "", "view": mc.get("view") if mc.get("view") is not None else -1}
        state = {}
        for var, val in (st.get("state") or {}).items():
            key = _TLA_VAR.get(var)
            if key is None:
                continue
            if key in ("digest", "flog"):
                val = _pairs(val)
            elif key == "completed":
                val = frozenset((q, _pairs(d)) for q, d in val)
            elif key in ("flushOks", "fwd"):
                val = frozenset(val)
            elif key == "recv":
                val = Fn({int(x): q for x, q in val.items()})
            elif key == "delivered":
                val = tuple(tuple(x) for x in val)
            state[key] = val
        out.append({"i": st["i"], "parts": [r["i"] for r in parts], "name": name, "nid": m,
                    "params": params, "msg": msg or None,
                    # {} (logged, nothing changed) stays {}: the trace spec reads it as "unchanged"
                    "state": state if st.get("state") is not None else None})
        if kind == "stop":
            break
    return out


def _tla_constants(c: dict) -> dict:
    # A fix absent from the header is FALSE: the seed's behaviour, which
    # admits every run the fixed variant admits (ResentFirst only delays sends).
    return {"N": c["N"], "MaxSeq": c["MaxSeq"], "MaxCrashes": c["MaxCrashes"],
            "Senders": frozenset(range(1, c["N"] + 1)),
            "UniformDelivery": bool(c.get("UniformDelivery", False)),
            "ResendAlways": bool(c.get("ResendAlways", False)),
            "ResentFirst": bool(c.get("ResentFirst", False))}


def composed_model(trace: Trace) -> SequencerFlushModel:
    """The spec's model of the trace's members (every one a sender; the
    binding's check_header refuses nodes other than 1..N)."""
    h = trace.header
    return SequencerFlushModel(_tla_constants({**h["constants"], "N": len(h["nodes"])}))


PROTOCOL_DEFAULTS = {"nodes": 3, "messages": 2, "block_time": 0.002}


fault_plan = plan_reader(NETWORK_AND_CRASH, "sequencerflush")   # no draw: ``auto`` refused


def simulate(seed: int, faults, options: dict):
    """One simulated SEQUENCER-over-FLUSH run as groupcheck-trace/2 records."""
    opts = {**PROTOCOL_DEFAULTS, **(options or {})}
    n, per = int(opts["nodes"]), int(opts["messages"])
    plan = fault_plan(faults, seed, opts)
    nodes = list(range(1, n + 1))
    msgs = campaign.sequencer_workload(n, per)
    # hold_sends / self_channel / view_as_sent False: the earlier couplings, which diverge at
    # (c) / (d) / (e) (tests)
    bt = opts["block_time"]
    coupling = {k: cflush._flag(opts.get(k, True))
                for k in ("hold_sends", "self_channel", "view_as_sent", "pass_latch", "resent_first")}
    records, s = simulate_flush(
        nodes, msgs, seed, plan, protocol="sequencerflush",
        make_stack=lambda nid, members: sequencer_flush_stack(nid, members, block_time=bt, tracing="delta", **coupling),
        states="delta")
    run_id = f"sequencerflush-n{n}-m{per}-s{seed}"
    consts = {**sim_sequencer.sequencer_constants(nodes, msgs, plan.crashes), "ReconcileDigests": True,
              "UniformDelivery": False, "ResendAlways": coupling["pass_latch"],
              # the stack holds a new coordinator's sends only with its self-channel
              "ResentFirst": coupling["resent_first"] and coupling["self_channel"]}
    v2 = tracefile.to_v2(records, consts, run_id, quiescent=s["quiescent"], end_clock=s.get("end_clock"))
    return v2, cflush.run_summary(run_id, seed, v2, s, delivered=dict(s["delivered"]),
                                  held_sends=cflush.stat_total(s, "flush.held_sends"),
                                  forward_not_coord=cflush.stat_total(s, "sequencer.forward_not_coord"))


def draw(seed: int) -> tuple[str, dict]:
    """One audit run's size and faults from its seed: 3-4 members, 1-3
    multicasts each, the coordinator crashing in most runs (a second crash
    in some), at drawn times."""
    rng = random.Random(seed * 7919 + 17)
    n, per, span = campaign.draw_size(rng, (3, 4))
    plan = rng.choice(("none", "coordinator", "coordinator", "other", "two"))
    crashes: tuple = ()
    if plan != "none":
        t1 = round(rng.uniform(0.0, span + 0.02), 4)
        crashes = ((rng.randint(2, n) if plan == "other" else 1, t1),)
        if plan == "two":
            crashes += ((rng.randint(2, n), round(t1 + rng.uniform(0.0, 0.03), 4)),)
    return campaign.fault_spec(0.1, 0.05, 0.003, crashes), {"nodes": n, "messages": per}


PROTOCOL = Protocol(
    work=("Send",),
    name="sequencerflush", spec="SequencerFlush",
    actions=ACTIONS,
    properties=PROPERTIES,
    simulate=simulate, fault_plan=fault_plan, binding=SequencerFlushBinding,
    default_options=PROTOCOL_DEFAULTS,
    more_options=("hold_sends", "self_channel", "view_as_sent", "pass_latch", "resent_first"),
    draw=draw,
    campaign_faults="loss=0.1,dup=0.05,reorder=3,crash=1@15",
    # the uniform TotalOrder is not promised over FLUSH either: a coordinator may deliver its
    # own DATA and crash before anyone else gets it (docs/flush.md)
    promises=("Integrity", "NoDuplicates", "SenderFIFO", "GapFreeFIFO", "SurvivorTotalOrder", "Agreement",
              "VirtualSynchrony", "FlushEventOrder", "CrashStop"),
    judged=JUDGED,
    audit_cluster=True,
    reduce=reduce_state,
    # spec/SequencerFlush/TraceSequencerFlush.tla: one entry per joined step (tla_log)
    tla_trace=TLATrace(constants=_tla_constants, prepare=tla_log, var_names=_TLA_VAR,
                       # its EndKept: at_end's
                       end=("EventualDelivery", "Quiescent")),
)
replay = PROTOCOL.replay      # the registration's replay (conformance/replay/registry.py)
