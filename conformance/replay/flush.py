"""FLUSH conformance: replaying a trace against model/flush.py (seed 003).

Theory of operation
-------------------
Each trace event names a spec/Flush/Flush.tla action, the acting member
(``nid``), the other member of a receive action (``params.q`` or
``params.c``, the spec's parameter names), the message taken or sent and
the member's post-state (vid, delivered, phase, blocked, flushInit,
flushOks, digest, completed).  The model also holds what a trace does not
show (the channels, the global ``sent`` and ``views``), so the replay keeps
the SET of model states consistent with the events so far, as the SEQUENCER
replay does: every candidate takes the named action, and the successors
whose projection on the member equals the logged state survive.  The crash
cut (how much of each channel from the crashed member survives) is not
logged: every cut is a candidate until later receptions decide.  An empty
set makes the run *nonconforming* at that event.

DATA messages: the implementation names a multicast ``(sender, seqno)``;
the model numbers them 1, 2, ... in sending order.  The replay learns the
map from the ``Multicast`` events (which precede every use of the message)
and compares through it.

Properties: ``VirtualSynchrony`` is computed from the trace alone (views
from the ``SendView`` messages, each message's view from its ``Multicast``,
delivered sets from the last logged state of each member); the model's
``NoSendWhileBlocked`` and ``ViewAfterAllCompleted`` are evaluated on the
candidates after every event, and fail only if no candidate satisfies them.
"""

from __future__ import annotations

import random
from typing import Optional

from groupcheck.conformance.replay.engine import Binding, HeaderError, ReplayEngine
from groupcheck.conformance.replay.lockstep import LockstepError, LockstepNetwork
from groupcheck.conformance.replay.registry import Protocol
from groupcheck.conformance.tlctrace import TLATrace
from groupcheck.core import properties
from groupcheck.core.trace import writer as tracefile
from groupcheck.core.trace.reader import Trace
from groupcheck.impl import campaign
from groupcheck.impl.events import AppSend
from groupcheck.impl.faults import NETWORK, plan_reader
from groupcheck.impl.flush import JoinRequest, LeaveRequest, Suspect
from groupcheck.impl.sim_flush import flush_constants, rescue_views, simulate_flush
from groupcheck.impl.stacks.flush import flush_stack
from groupcheck.model.flush import FlushModel
from groupcheck.model.values import GrowSet, Seq


SPEC_ACTIONS = ("Multicast", "Deliver", "Discard", "StartFlush", "Block", "RestartFlush", "FlushOk",
                "ReceiveFlushOk", "FlushCompleted", "ReceiveFlushCompleted", "SendView", "InstallView",
                "StopFlush", "Unblock", "Crash", "Join", "Leave")
RECEIVE = {"Deliver": "q", "Discard": "q", "Block": "c", "RestartFlush": "c", "ReceiveFlushOk": "q",
           "ReceiveFlushCompleted": "q", "InstallView": "c", "Unblock": "c"}
SINGLE = ("Multicast", "StartFlush", "FlushOk", "FlushCompleted", "SendView", "StopFlush", "Join", "Leave")
FIELDS = ("vid", "delivered", "phase", "blocked", "flushInit", "flushOks", "digest", "completed")
MODEL_INVARIANTS = ("NoSendWhileBlocked", "ViewAfterAllCompleted")
PROPERTIES = ("VirtualSynchrony",) + MODEL_INVARIANTS     # the model's invariants, judged on the candidates
JUDGED = ("VirtualSynchrony",)       # of PROPERTIES, what a member's history shows (the registration's ``judged``)


def _no_send_kept(s, t) -> bool:
    """NoSendWhileBlocked(t) is NoSendWhileBlocked(s), known without walking
    ``sent`` (every message of the run): no member's latch, view or digest
    changed, and the step multicast nothing (``sent`` only grows) or one
    message whose sender is not blocked."""
    if s.blocked != t.blocked or s.vid != t.vid or s.digest != t.digest:
        return False
    n = len(s.sent)
    return len(t.sent) == n or (len(t.sent) == n + 1 and not t.blocked[t.sent[-1]["sender"] - 1])


# VirtualSynchrony compares what members delivered in the views they left: a
# member delivers only in its current view (Deliver, Multicast), so its value
# changes only at a step that moves some member to a new view (Binding.note_invariants)
SAME = {"VirtualSynchrony": lambda s, t: s.vid == t.vid and s.views == t.views,
        "NoSendWhileBlocked": _no_send_kept}


class Ids:
    """(sender, seqno) of the implementation <-> message id of the model."""

    def __init__(self) -> None:
        self.by_key: dict[tuple[int, int], int] = {}
        self.by_id: dict[int, tuple[int, int]] = {}

    def key(self, i: int) -> list:
        s, q = self.by_id.get(i, (0, i))       # 0: an id the trace never multicast
        return [s, q]

    def keys(self, ids) -> list:
        return sorted(self.key(i) for i in ids)


# Member p's part of a model state, variable by variable, in the trace's JSON shape
# (one variable at a time: ``observe`` asks for one, and ``delivered`` grows with the run)
_PROJECT = {
    "vid": lambda s, p, ids: s.vid[p - 1],
    "delivered": lambda s, p, ids: ids.keys(s.delivered[p - 1]),
    "phase": lambda s, p, ids: s.phase[p - 1],
    "blocked": lambda s, p, ids: s.blocked[p - 1],
    "flushInit": lambda s, p, ids: s.flushInit[p - 1],
    "flushOks": lambda s, p, ids: sorted(s.flushOks[p - 1]),
    "digest": lambda s, p, ids: ids.keys(s.digest[p - 1]),
    "completed": lambda s, p, ids: sorted([q, ids.keys(d)] for q, d in s.completed[p - 1]),
}


def project(s, p: int, ids: Ids) -> dict:
    """Member ``p``'s part of model state ``s`` in the trace's JSON shape."""
    return {var: f(s, p, ids) for var, f in _PROJECT.items()}


def _norm(st: dict) -> dict:
    return {"vid": st["vid"], "delivered": sorted(list(x) for x in st["delivered"]), "phase": st["phase"],
            "blocked": st["blocked"], "flushInit": st["flushInit"], "flushOks": sorted(st["flushOks"]),
            "digest": sorted(list(x) for x in st["digest"]),
            "completed": sorted([q, sorted(list(x) for x in d)] for q, d in st["completed"])}


def _successors(model: FlushModel, s, ev: dict, all_cuts: bool = False):
    name, p, params = ev["name"], ev["nid"], ev["params"]
    if name == "Crash":
        # the greatest cut alone (FlushModel.Cuts says why it is enough)
        yield from model.Crash(s, p, greatest=not all_cuts)
    elif name in RECEIVE:
        src = params.get(RECEIVE[name])
        if isinstance(src, int) and src in model.Members and s.chan[(src, p)]:
            yield getattr(model, name)(s, p, src)
    elif name in SINGLE:
        yield getattr(model, name)(s, p)


def _msg_ok(s, ev: dict, ids: Ids) -> bool:
    """The logged message is the one at the head of the channel the
    receive action takes from: same type and view, same DATA id, same digest."""
    msg, name = ev.get("msg"), ev["name"]
    if msg is None or name not in RECEIVE:
        return True
    src = ev["params"].get(RECEIVE[name])
    ch = s.chan[(src, ev["nid"])] if isinstance(src, int) and (src, ev["nid"]) in s.chan else ()
    if not ch:
        return False
    head = ch[0]
    if (head["type"], head["view"]) != (msg.get("type"), msg.get("view")):
        return False
    if head["type"] == "DATA":
        return ids.by_key.get((msg.get("sender"), msg.get("seqno"))) == head["id"]
    if head["type"] in ("FLUSH_COMPLETED", "VIEW") and "digest" in msg:
        # a digest left out is not logged (its taker cannot see it), as TraceFlush's MsgIs reads it
        return ids.keys(head["digest"]) == sorted(list(x) for x in msg["digest"])
    return True


# The type of the message each sending action sends (Flush.tla).
SENDS = {"Multicast": "DATA", "StartFlush": "START_FLUSH", "FlushOk": "FLUSH_OK",
         "FlushCompleted": "FLUSH_COMPLETED", "SendView": "VIEW", "StopFlush": "STOP_FLUSH"}


def _sent(s, t, p: int, typ: str, field: str):
    """``field`` of the message of type ``typ`` the step s -> t appended to one
    of ``p``'s outgoing channels (a multicast appends the same one to each);
    None when it sent none (a VIEW with no receiver but its sender)."""
    for (a, b), ch in t.chan.items():
        if a == p and len(ch) > len(s.chan[(a, b)]) and ch[-1]["type"] == typ:
            return ch[-1][field]
    return None


def _check_event(s, t, ev: dict, ids: Ids) -> bool:
    """The logged message and state agree with the model's step s -> t.  Every
    message field a trace property reads is checked here: VirtualSynchrony
    takes a multicast's view from its Multicast record and the view sequence
    from the SendView records, so both must be the model's."""
    msg, name = ev.get("msg"), ev["name"]
    if msg is not None and name in SENDS:
        if msg.get("type") != SENDS[name]:
            return False
        if name == "Multicast" and msg.get("view") != t.sent[-1]["view"]:
            return False
        if name == "SendView" and msg.get("view") != s.vid[ev["nid"] - 1]:
            return False
    if name == "SendView" and msg is not None:
        if "members" not in msg or sorted(t.views[-1]) != sorted(msg["members"]):
            return False
    if name in ("FlushCompleted", "SendView") and msg is not None and "digest" in msg:
        # the digest is what the receivers reconcile with: checked at the send too, not
        # only where a receiver logs it (TLC's trace spec did; a forged digest passed here)
        p = ev["nid"]
        d = t.digest[p - 1] if name == "FlushCompleted" else _sent(s, t, p, "VIEW", "digest")
        if d is not None and ids.keys(d) != sorted(list(x) for x in msg["digest"]):
            return False
    if ev.get("state") is not None and ev["nid"] is not None:
        return project(t, ev["nid"], ids) == _norm(ev["state"])
    return True


def tla_log(events: list) -> list:
    """FLUSH's records as spec/Flush/TraceFlush.tla reads them: a DATA
    message is the spec's id, the k-th Multicast record's (sender, seqno)
    being id k, as ``Ids`` numbers them for the replay; ``delivered``,
    ``digest`` and a digest in a message become sets of ids (0: a pair no
    Multicast named), ``completed`` a set of <<member, digest>> pairs."""
    ids: dict = {}

    def ident(pair) -> int:
        return ids.get(tuple(pair), 0) if isinstance(pair, (list, tuple)) and len(pair) == 2 else 0

    def idset(pairs) -> frozenset:
        return frozenset(ident(x) for x in pairs) if isinstance(pairs, list) else pairs

    out = []
    for ev in events:
        e = dict(ev)
        msg = ev.get("msg")
        if isinstance(msg, dict):
            m = dict(msg)
            if ev["name"] == "Multicast" and m.get("type") == "DATA":
                ids.setdefault((m.get("sender"), m.get("seqno")), len(ids) + 1)
            if "seqno" in m or m.get("type") == "DATA":
                m["id"] = ident([m.pop("sender", None), m.pop("seqno", None)])
                if ev["name"] == "Multicast":
                    m["sender"] = msg.get("sender")
            if "digest" in m:
                m["digest"] = idset(m["digest"])
            e["msg"] = m
        st = ev.get("state")
        if isinstance(st, dict):
            st = dict(st)
            for k in ("delivered", "digest"):
                if k in st:
                    st[k] = idset(st[k])
            if isinstance(st.get("completed"), list):
                st["completed"] = frozenset((c[0], idset(c[1])) for c in st["completed"]
                                            if isinstance(c, list) and len(c) == 2)
            e["state"] = st
        out.append(e)
    return out


def _out_of_range(model: FlushModel, ev: dict) -> Optional[str]:
    M = set(model.Members)
    named = [("nid", ev["nid"])] if ev["nid"] is not None else []
    named += [(f"params.{k}", v) for k, v in ev["params"].items() if k in ("q", "c")]
    msg = ev.get("msg") or {}
    named += [("msg.sender", msg["sender"])] if "sender" in msg else []
    named += [("msg.members", x) for x in msg.get("members", [])]
    for where, x in named:
        if not isinstance(x, int) or x not in M:
            return f"{where}: {x!r} is not a member 1..{model.N}"
    if ev["name"] not in SPEC_ACTIONS:
        return f"name: {ev['name']!r} is not a Flush action"
    return None


def _witness(model: FlushModel, prop: str, s, ids: Ids) -> str:
    """A counterexample to the model invariant ``prop`` in state ``s``."""
    if prop == "VirtualSynchrony":       # the catalogue's, on the model's views and sends
        key = lambda i: tuple(ids.key(i))      # noqa: E731
        w = vs_witness({v: s.views[v - 1] for v in range(1, model.Latest(s) + 1)},
                       {key(i): m["view"] for i, m in enumerate(s.sent, start=1)},
                       {p: s.vid[p - 1] for p in model.Members},
                       {p: {key(i) for i in s.delivered[p - 1]} for p in model.Members})
        if w:
            return w
    if prop == "NoSendWhileBlocked":
        for p in model.Members:
            extra = model.SentIn(s, p, s.vid[p - 1]) - s.digest[p - 1]
            if s.blocked[p - 1] and extra:
                return f"member {p} is blocked but sent {ids.keys(extra)} after its digest"
    if prop == "ViewAfterAllCompleted":
        for p in model.Members:
            v = s.vid[p - 1]
            if model.Alive(s, p) and model.IsMember(s, p) and v < model.Latest(s):
                return f"member {p} (alive, in view {v} < {model.Latest(s)}) is in phase {s.phase[p - 1]}"
    return "fails in every model state consistent with the run so far"


def virtual_synchrony(trace: Trace) -> Optional[str]:
    """None if members that moved together from view v to v + 1 delivered the
    same messages of view v; otherwise a witness.  From the trace alone, on
    whole member states (core/trace/reader.py ``whole``: the lock-step
    test's records); FLUSH's own replay judges the model's VirtualSynchrony
    on the candidates instead."""
    nodes = sorted(trace.header["nodes"])
    views = {1: set(nodes[:trace.header.get("constants", {}).get("NInit", len(nodes))])}
    sent_view: dict[tuple, int] = {}
    vid: dict[int, int] = {}
    delivered: dict[int, set] = {}
    for ev in trace.events:
        msg = ev.get("msg") or {}
        if ev["name"] == "Multicast" and msg.get("type") == "DATA":
            sent_view[(msg["sender"], msg["seqno"])] = msg["view"]
        if ev["name"] == "SendView" and msg.get("type") == "VIEW":
            views[msg["view"] + 1] = set(msg["members"])
        if ev.get("state") is not None and ev["nid"] is not None:
            vid[ev["nid"]] = ev["state"]["vid"]
            delivered[ev["nid"]] = {tuple(x) for x in ev["state"]["delivered"]}
    return vs_witness(views, sent_view, vid, delivered)


def vs_witness(views: dict, sent_view: dict, vid: dict, delivered: dict) -> Optional[str]:
    """The catalogue's VirtualSynchrony (core/properties.py) on what
    members logged: ``views`` (view -> members), ``sent_view`` (message ->
    the view it was multicast in: FLUSH's messages of a view are those sent
    in it), each member's last logged ``vid`` and ``delivered`` set
    (members that logged nothing are left out).  A member's history holds
    the views it was in up to its ``vid``, in order."""
    in_view: dict = {}
    for p in vid:
        for x in delivered.get(p, ()):
            in_view.setdefault(p, {}).setdefault(sent_view.get(x), set()).add(x)
    return vs_on_logs(views, vid, in_view)


def vs_on_logs(views: dict, vid: dict, in_view: dict) -> Optional[str]:
    """The catalogue's VirtualSynchrony on logs: ``views`` (view ->
    members), each member's last ``vid`` and what it delivered of each view
    (``in_view``: member -> view -> set of messages).  A member's history
    holds the views it was in up to its ``vid``, in order."""
    h = properties.History(nodes=sorted(vid))
    for p in sorted(vid):
        h.views[p] = [(w, tuple(sorted(views[w])), None) for w in sorted(views) if w <= vid[p] and p in views[w]]
        h.deliveries[p] = [(x, w, None) for w, xs in sorted((in_view.get(p) or {}).items(), key=lambda i: str(i[0]))
                           for x in sorted(xs)]
    v = properties.virtual_synchrony(h)
    return v.reason if v else None


class FlushBinding(Binding):
    """FLUSH's table for the replay engine (conformance/replay/engine.py)."""

    protocol = "flush"
    FIELDS = FIELDS

    def __init__(self, trace: Trace, model: Optional[FlushModel] = None, whole_states: bool = False) -> None:
        super().__init__(trace)
        # whole_states: records log the whole delivered set (the lock-step
        # driver's and the composed replay's records), not the appended part
        self.whole_states = whole_states
        h = trace.header
        if model is None:
            if h["protocol"] != "flush":
                raise HeaderError(f"no FLUSH replay for protocol {h['protocol']!r}")
            c = h["constants"]
            if not isinstance(c.get("FlushOkRound", True), bool):
                raise HeaderError(f"bad header constants: FlushOkRound {c['FlushOkRound']!r} is not a boolean")
            try:
                # FlushOkRound is optional: absent, the trace is of the four-phase flush
                model = FlushModel({**{k: c[k] for k in ("N", "NInit", "MaxMsgs", "MaxCrashes", "MaxLeaves",
                                                         "ReconcileDigests")},
                                    "FlushOkRound": c.get("FlushOkRound", True)})
            except (KeyError, ValueError) as e:
                raise HeaderError(f"bad header constants: {e}") from None
            self.check_header(model.Members, "FLUSH")
        self.model = model
        self.ids = Ids()
        # every cut at a Crash, as the spec branches (tests compare it with the greatest cut alone)
        self.all_cuts = False

    def init(self):
        # every member's delivered grows for the whole run and sent with every
        # Multicast: as a GrowSet and a Seq each step adds its part in O(1)
        # instead of copying them (the replay stays linear in the run)
        for s in self.model.init():
            yield s._replace(delivered=tuple(GrowSet(d) for d in s.delivered), sent=Seq(s.sent))

    def check(self, ev: dict) -> Optional[str]:
        return _out_of_range(self.model, ev)

    def before(self, ev: dict, cands):
        """A Multicast names a new message (sender, seqno): the model's next id."""
        if ev["name"] == "Multicast":
            msg = ev.get("msg") or {}
            key = (msg.get("sender"), msg.get("seqno"))
            if key in self.ids.by_key or key[0] != ev["nid"]:
                return "nonconforming", (f"event {ev['i']} Multicast: message {list(key)} is not a new "
                                         f"multicast of member {ev['nid']}")
            i = len(next(iter(cands)).sent) + 1        # every candidate has the same sent
            self.ids.by_key[key], self.ids.by_id[i] = i, key
        return None

    def successors(self, s, ev: dict):
        return _successors(self.model, s, ev, self.all_cuts)

    def message(self, s, t, ev: dict) -> Optional[str]:
        if not _msg_ok(s, ev, self.ids):
            src = ev["params"].get(RECEIVE.get(ev["name"], ""), None)
            ch = s.chan[(src, ev["nid"])] if (src, ev["nid"]) in s.chan else ()
            return f"the channel's head is {dict(ch[0]) if ch else 'nothing'}"
        if not _check_event(s, t, dict(ev, state=None), self.ids):
            return "not the message the model's action sends (type, view, members)"
        return None

    def observe(self, s, t, ev: dict, var: str):
        p = ev["nid"]
        if var == "delivered":      # append: the messages this step delivered
            if self.whole_states:
                return self.ids.keys(t.delivered[p - 1])
            before, after = s.delivered[p - 1], t.delivered[p - 1]
            return [] if after is before else self.ids.keys(after - before)
        return _PROJECT[var](t, p, self.ids) if var in FIELDS and var in _PROJECT else None

    def untouched(self, s, t, ev: dict, var: str) -> bool:
        # the model's steps rebuild only what they change (``_set``), so a
        # member's value that is the same object is unchanged
        return var in _PROJECT and getattr(t, var)[ev["nid"] - 1] is getattr(s, var)[ev["nid"] - 1]

    def norm(self, var: str, value):
        if var in ("delivered", "digest"):
            return sorted(list(x) for x in value)
        if var == "flushOks":
            return sorted(value)
        if var == "completed":
            return sorted([q, sorted(list(x) for x in d)] for q, d in value)
        return value

    def after(self, ev: dict, pairs: list, cands: set):
        """VirtualSynchrony, NoSendWhileBlocked, ViewAfterAllCompleted, the
        model's invariants, on the states consistent with the run so far: a
        violation when no candidate satisfies one (with a witness)."""
        self.note_invariants(ev, cands, PROPERTIES, self.model.invariants,
                             lambda prop, cands: _witness(self.model, prop, next(iter(cands)), self.ids),
                             pairs, SAME)
        return None

    def at_end(self, cands: set):
        """At the end of a quiescent run, what the claim promises (the
        end-of-run properties, END_OF_RUN: FlushEnds, Quiescent,
        EventualDelivery), each failing when it fails in every candidate;
        the first in that order is reported, all are kept for ``broken_at``
        (TraceFlush.tla's End step judges the same)."""
        return self.judge_end(cands, lambda t: flush_end_of_run(self.model, t, self.ids))


# The end-of-run properties, judged at an end record that says quiescent, in
# the order they are reported (TraceFlush.tla's EndKept: the same)
END_OF_RUN = ("FlushEnds", "EventualDelivery", "Quiescent")


def flush_ends(model: FlushModel, s):
    for p in model.Members:
        if p in s.crashed or model.Departed(s, p) or not (model.IsMember(s, p) or s.vid[p - 1]):
            continue
        if model.InFlush(s, p) or s.flushInit[p - 1] != 0:
            return ("FlushEnds", f"member {p} (alive) ended in phase {s.phase[p - 1]}, "
                                 f"blocked={s.blocked[p - 1]}, flushInit={s.flushInit[p - 1]}: "
                                 "a started flush never ended")
    return None


def _name(s, i: int, ids: Optional[Ids]) -> tuple:
    """Message ``i`` of model state ``s`` as the trace names it, (sender,
    seqno); a message no Multicast record named: (its sender, its id)."""
    return tuple(ids.by_id[i]) if ids is not None and i in ids.by_id else (s.sent[i - 1]["sender"], i)


def flush_quiescent(model: FlushModel, s, ids: Optional[Ids] = None):
    """The quiescent claim against the model state: nothing in flight to a
    member that can still take it (a channel into a live member of its
    view is empty; of a crashed member's channel, the part its crash's cut
    must keep, up to its last VIEW) and no view change pending (a crash, leave or join the
    membership has not yet acted on).  None, or ("Quiescent", witness)."""
    for (p, q), ch in sorted(s.chan.items()):
        if p in s.crashed:          # what a crash's cut may have dropped is not owed: up to its last VIEW is
            ch = ch[:model.LastView(ch)]
        if ch and model.CanReceive(s, q):
            m = ch[0]
            what = f"DATA {'.'.join(map(str, _name(s, m['id'], ids)))}" if m["type"] == "DATA" else m["type"]
            return ("Quiescent", f"{what} of view {m['view']} from member {p} to member {q} (alive) is still "
                                 f"in flight ({len(ch)} message(s) on that channel)")
    if model.ViewChangePending(s, 0):
        why = sorted(s.views[-1] & (s.crashed | s.leaving)) or sorted(s.joining)
        return ("Quiescent", f"a view change is pending (members {why} of view {len(s.views)} crashed, "
                             f"leave or join) and no flush ran for it")
    return None


def flush_history(model: FlushModel, s, ids: Optional[Ids] = None):
    """The model state as the catalogue's History at a quiescent end: each
    member's deliveries, each message's view, the members out of the group
    (crashed, left, never in a view) as the History's gone ones, and the
    view each member joined in (members of the first view owe every
    message of it)."""
    key = lambda i: _name(s, i, ids)      # noqa: E731
    gone = {p for p in model.Members if not (model.Alive(s, p) and model.IsMember(s, p))}
    joined = {p: next(v for v in range(1, len(s.views) + 1) if p in s.views[v - 1])
              for p in model.Members if p not in gone and p not in s.views[0]}
    return properties.History.of({p: sorted(key(i) for i in s.delivered[p - 1]) for p in model.Members},
                                 {}, gone, quiescent=True, nodes=model.Members, joined=joined,
                                 sent_view={key(i): m["view"] for i, m in enumerate(s.sent, start=1)})


def flush_eventual_delivery(model: FlushModel, s, ids: Optional[Ids] = None):
    """The catalogue's EventualDelivery on the model state (``flush_history``):
    a message multicast in view v by a member that neither crashed nor left
    is delivered by every member of v that neither crashed nor left."""
    v = properties.eventual_delivery(flush_history(model, s, ids))
    return ("EventualDelivery", v.reason) if v else None


def flush_end_of_run(model: FlushModel, s, ids: Optional[Ids] = None) -> dict:
    """END_OF_RUN's failures on one model state: property -> witness."""
    out = {}
    for judge in (flush_ends, flush_eventual_delivery, flush_quiescent):
        got = judge(model, s) if judge is flush_ends else judge(model, s, ids)
        if got:
            out[got[0]] = got[1]
    return out


# ---------------------------------------------------------------- simulated runs

PROTOCOL_DEFAULTS = {"nodes": 4, "messages": 2, "block_time": 0.002}


def _flag(x) -> bool:
    """A boolean option, also from the command line's strings."""
    if isinstance(x, str):
        if x.lower() not in ("true", "false", "1", "0"):
            raise ValueError(f"not a boolean: {x!r}")
        return x.lower() in ("true", "1")
    return bool(x)


fault_plan = plan_reader(NETWORK + ("crash", "leave", "join"), "flush")   # no draw: ``auto`` refused


def simulate(seed: int, faults, options: dict):
    """One simulated FLUSH run (impl/sim_flush.py) as groupcheck-trace/2
    records.  Option ``reconcile=false``: the seed as written
    (ReconcileDigests = FALSE), which breaks VirtualSynchrony in some runs."""
    opts = {**PROTOCOL_DEFAULTS, **(options or {})}
    n, per = int(opts["nodes"]), int(opts["messages"])
    leaves, joins = tuple(opts.get("leaves", ())), tuple(opts.get("joins", ()))
    plan = fault_plan(faults, seed, opts)
    leaves, joins = leaves + plan.leaves, joins + plan.joins
    # members 1..n form the first view; a joiner M > n adds members up to M
    total = max([n] + [m for m, _ in joins])
    nodes = list(range(1, total + 1))
    msgs = campaign.sequencer_workload(n, per)
    bt, rec = float(opts["block_time"]), _flag(opts.get("reconcile", True))
    records, s = simulate_flush(
        nodes, msgs, seed, plan, leaves=leaves, joins=joins, n_init=n,
        make_stack=lambda nid, members: flush_stack(nid, members, block_time=bt, reconcile=rec, tracing="delta"),
        states="delta")
    run_id = f"flush-n{n}-m{per}-s{seed}" + ("" if rec else "-seed-as-written")
    v2 = tracefile.to_v2(records, flush_constants(nodes, msgs, plan.crashes, rec, leaves, n_init=n), run_id,
                         quiescent=s["quiescent"], end_clock=s.get("end_clock"))
    return v2, run_summary(run_id, seed, v2, s, left=s["left"], skipped_leaves=s["skipped_leaves"],
                           joined=s["joined"], skipped_joins=s["skipped_joins"],
                           delivered=sum(len(d) for d in s["delivered"].values()), rescued=s["network"]["rescued"])


def stat_total(s: dict, key: str) -> int:
    """A layer counter (``"flush.reconciled"``) summed over the nodes of
    ``simulate_flush``'s summary ``s``."""
    return sum(st.get(key, 0) for st in s["stats"].values())


def run_summary(run_id: str, seed: int, v2: list, s: dict, **more) -> dict:
    """The summary line of a simulated run of a stack with FLUSH
    (impl/sim_flush.py ``simulate_flush``'s summary ``s``, its records
    ``v2``): what every such stack has, and ``more``."""
    return {"run_id": run_id, "seed": seed, "events": len(v2) - 2, "quiescent": s["quiescent"],
            "crashed": s["crashed"], "skipped_crashes": s["skipped_crashes"], "views": s["views"],
            "unfinished": s["unfinished"], "crash_phases": s["crash_phases"],
            "reconciled": stat_total(s, "flush.reconciled"), "retransmissions": stat_total(s, "reliable.retransmitted"),
            "dropped_datagrams": s["network"]["lost"] + s["network"]["to_crashed"], **more}


def draw(seed: int) -> tuple[str, dict]:
    """One audit run's size and faults from its seed: 3-4 members, 1-3
    multicasts each, one or two crashes (the coordinator first in most) or
    none, at drawn times; a leave and a joiner in a third of the runs each."""

    rng = random.Random(seed * 7919 + 13)
    n, per, span = campaign.draw_size(rng, (3, 4))
    plan = rng.choice(("none", "coordinator", "other", "two", "two"))
    crashes: tuple = ()
    if plan != "none":
        first = 1 if plan in ("coordinator", "two") and rng.random() < 0.7 else rng.randint(2, n)
        t1 = round(rng.uniform(0.0, span + 0.02), 4)
        crashes = ((first, t1),)
        if plan == "two":
            crashes += ((rng.choice([m for m in range(1, n + 1) if m != first]), round(t1 + rng.uniform(0.0, 0.03), 4)),)
    leave = ((rng.randint(2, n), round(rng.uniform(0.0, span + 0.02), 4)),) if rng.random() < 1 / 3 else ()
    join = ((n + 1, round(rng.uniform(0.0, span + 0.02), 4)),) if rng.random() < 1 / 3 else ()
    return campaign.fault_spec(0.1, 0.05, 0.003, crashes, leave=leave, join=join), {"nodes": n, "messages": per}


def tla_constants(constants: dict) -> dict:
    """The header's constants for TraceFlush, FlushOkRound defaulting to TRUE."""
    return {**constants, "FlushOkRound": constants.get("FlushOkRound", True)}


PROTOCOL = Protocol(
    work=("Multicast",),
    name="flush", spec="Flush",
    actions=SPEC_ACTIONS,
    # spec/Flush/TraceFlush.tla: DATA as ids (tla_log); views, flushOks and members are sets
    tla_trace=TLATrace(sets=frozenset({"flushOks", "members"}), prepare=lambda trace: tla_log(trace.events),
                       constants=tla_constants, properties=PROPERTIES, end=END_OF_RUN),
    properties=PROPERTIES,
    simulate=simulate, fault_plan=fault_plan, binding=FlushBinding,
    default_options=PROTOCOL_DEFAULTS, more_options=("reconcile", "leaves", "joins"), draw=draw,
    campaign_faults="loss=0.1,dup=0.05,reorder=3,crash=1@15,crash=2@25",
    # FLUSH orders nothing: TotalOrder is not its promise
    promises=("Integrity", "NoDuplicates", "Agreement", "VirtualSynchrony", "FlushEventOrder", "CrashStop"),
    # VirtualSynchrony, the one of PROPERTIES a history shows (the replay judges it on the
    # candidates' views and deliveries); NoSendWhileBlocked and ViewAfterAllCompleted read
    # the latch and the phase, FlushEnds the phase and flushInit: no history event shows them
    judged=JUDGED,
)
replay = PROTOCOL.replay      # the registration's replay (conformance/replay/registry.py)


# ---------------------------------------------------------------- lock-step driver

class FlushLockstep(LockstepNetwork):
    """N FLUSH stacks (transport, reliable, flush) driven one step at a time,
    each step checked against model/flush.py (docs/architecture.md, "The chain of evidence", link 2).

    The driver is the network (every datagram in flight can be delivered,
    lost or duplicated, in any order), the timers (retransmission; the block
    timer is ``block()`` returning) and the environment of
    impl/sim_flush.py: ``crash(m)`` stops m, hands its frames up to its last
    VIEW to the survivors, logs Crash and tells every survivor ``Suspect``.
    After each step every trace event must be an enabled model action from a
    candidate state matching the logged post-state (``FlushBinding``), and the
    state of every member must equal the projection of one candidate."""

    def __init__(self, n: int = 3, max_msgs: int = 3, max_crashes: int = 1, max_leaves: int = 0,
                 joiners: int = 0, make_stack=None, max_app: int | None = None) -> None:
        """``make_stack(nid, first_view)``: the stacks (default
        ``flush_stack``); with a layer above FLUSH (``sequencer_flush_stack``)
        only the FLUSH events are replayed, all are kept in ``events``.
        ``max_app``: application sends allowed (default ``max_msgs``)."""
        make_stack = make_stack or flush_stack
        self.max_app = max_msgs if max_app is None else max_app
        self.members = tuple(range(1, n + joiners + 1))
        first = self.members[:n]
        self.model = FlushModel({"N": n + joiners, "NInit": n, "MaxMsgs": max_msgs, "MaxCrashes": max_crashes,
                                 "MaxLeaves": max_leaves, "ReconcileDigests": True})
        self.leaving: set[int] = set()
        self.join_requested: set[int] = set()
        super().__init__(self.members, {m: make_stack(m, first) for m in self.members})
        # the driver's records log whole states (the layer's ``state()``)
        self.engine = ReplayEngine(FlushBinding(Trace("<lockstep>", {"protocol": "flush"}, []), self.model,
                                          whole_states=True), visited=False)
        self.ids = self.engine.b.ids
        self.app_sends = 0

    def flush(self, m: int):
        return self.stacks[m].layer("flush")

    def abstraction(self) -> dict[int, dict]:
        return {m: _norm(self.flush(m).state()) for m in self.members}

    def _project(self, s, m: int) -> dict:
        return project(s, m, self.ids)

    def can_send(self, m: int) -> bool:
        return m not in self.crashed and self.app_sends < self.max_app

    def _latest(self):
        f = self.flush(max(self.members, key=lambda x: self.flush(x).vid))
        return f.vid, f.members

    def can_crash(self, m: int) -> bool:
        staying = set(self._latest()[1]) - self.crashed - self.leaving
        return (m not in self.crashed and len(self.crashed) < self.model.MaxCrashes
                and self.flush(m).is_member and bool(staying - {m}))

    def can_leave(self, m: int) -> bool:
        vid, latest = self._latest()
        staying = set(latest) - self.crashed - self.leaving
        return (m not in self.crashed and self.flush(m).is_member and self.flush(m).vid == vid
                and m not in self.leaving and len(self.leaving) < self.model.MaxLeaves
                and not (m in staying and m == min(staying)))

    def can_join(self, m: int) -> bool:
        return (m not in self.crashed and self.flush(m).vid == 0 and m not in self._latest()[1]
                and m not in self.join_requested)

    def join(self, m: int) -> None:
        assert self.can_join(m)
        self.join_requested.add(m)
        self._handle(m, JoinRequest(m))
        for x in self.live():
            if x != m:
                self._handle(x, JoinRequest(m))

    def leave(self, m: int) -> None:
        assert self.can_leave(m)
        self.leaving.add(m)
        self._handle(m, LeaveRequest(m))
        for x in self.live():
            if x != m:
                self._handle(x, LeaveRequest(m))

    # ------------------------------------------------------------ steps

    def app_send(self, m: int) -> None:
        self.app_sends += 1
        self._handle(m, AppSend(f"m{self.app_sends}".encode()))

    def crash(self, m: int) -> None:
        assert self.can_crash(m)
        self._stop(m)
        rescue_views(self.stacks[m].layer("reliable"), m, self.live(), self._handle)     # I9, as the simulator
        self.env_step("Crash", m)
        for x in self.live():
            self._handle(x, Suspect(m))
        self.check_abstraction()

    # ------------------------------------------------------------ plumbing

    def _model_step(self, ev: dict) -> None:
        ev = dict(ev, i=len(self.events))
        self.events.append(ev)
        if ev["state"] is not None and "phase" not in ev["state"]:
            return                  # a record of the layer above FLUSH
        failed = self.engine.step(ev)
        if failed:
            raise LockstepError(f"{failed[0]}: {failed[1]}")
        if self.engine.b.found:          # a model invariant no candidate satisfies
            prop, (i, w) = next(iter(self.engine.b.found.items()))
            raise LockstepError(f"violation: {prop}: {w}")

