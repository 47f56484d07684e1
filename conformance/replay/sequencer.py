"""SEQUENCER conformance: the table binding trace records to model/sequencer.py.

Theory of operation
-------------------
Each record claims a spec action (seed 000's handlers, named as in
spec/Sequencer/Sequencer.tla) by one member, with its parameters, the
message it takes or sends, and whatever of the member's variables it logs
(vid, sent, fwd, recv; delivered as the elements appended).  The one replay
engine (conformance/replay/engine.py) keeps the set of model states consistent
with the records; this module is SEQUENCER's part: the table from a record
to model actions (``successors``: Crash without ``lost`` tries every
subset), the message check (a receive takes the head of its channel; a
``Send`` sends FORWARD from a member that is not coordinator, DATA from the
coordinator, with the next seqno: type, sender and seqno are all checked,
as the properties read them), the projection of a model state on the member
(``observe``), and the trace properties with their witnesses.

``delivered`` is a history no guard reads: the engine keeps candidates
with it emptied after each step (``reduce``), so a step costs O(record)
whatever the run's length, and the histories the properties judge are
accumulated here from the appended elements of the accepted steps (the
model's, which the logged ones, when logged, must equal; with no state
logged at all they are still the model's deliveries of the logged
messages).  NoDuplicates, Integrity, SenderFIFO, TotalOrder, GapFreeFIFO
after the last record, EventualDelivery at the end of a quiescent run: the
catalogue's definitions and witnesses (core/properties.py).
"""

from __future__ import annotations

import bisect
import dataclasses
import random
import re
from typing import Callable, Optional

from groupcheck.conformance import findings
from groupcheck.conformance.replay.engine import Binding, HeaderError, ReplayEngine
from groupcheck.conformance.replay.lockstep import LockstepNetwork
from groupcheck.conformance.replay.registry import Protocol
from groupcheck.conformance.tlctrace import TLATrace
from groupcheck.core import properties
from groupcheck.core.trace.reader import Trace
from groupcheck.impl import campaign, sim_sequencer
from groupcheck.impl.events import AppSend, View, ViewChange
from groupcheck.impl.faults import crashed_members, NETWORK_AND_CRASH, plan_reader
from groupcheck.impl.stacks.sequencer import sequencer_stack
from groupcheck.model.sequencer import SequencerModel, SequencerState, subsets
from groupcheck.model.values import Fn


FIELDS = ("vid", "sent", "fwd", "recv", "delivered")


# Sequencer.tla's fixes for the losses after a coordinator crash.  An
# implementation that runs one names it in its trace header's constants;
# absent means FALSE, the seed's behaviour, which is what impl/sequencer.py
# runs as plain SEQUENCER (its ``resent_first`` is SEQUENCER over FLUSH's).
SPEC_FIXES = ("KeepForward", "ResendFirst", "RetainForward")
# JGroups 2.12.2's deviations from the seed (SEQUENCER.handleSuspect,
# SeqnoTable's received-table, FORWARD and DATA on UNICAST and NAKACK), named
# by its adapter's headers; absent is FALSE.
SPEC_VARIANTS = ("SuspectResend", "FillGaps", "SeparateChannels")


def spec_constants(c: dict) -> dict:
    """The spec's constants for a trace header's ``constants``: the bounds,
    which the header must give, and the fixes and variants, FALSE unless it
    names them (a value that is not a boolean is refused, naming it)."""
    out = {k: c[k] for k in ("N", "MaxSeq", "MaxCrashes")}
    for k in SPEC_FIXES + SPEC_VARIANTS:
        v = c.get(k, False)
        if not isinstance(v, bool):
            raise HeaderError(f"bad header constants: {k} {v!r} is not a boolean")
        out[k] = v
    return out


def reduce_state(s):
    """``s`` with every delivery history emptied (what no guard reads)."""
    if all(not d for d in s.delivered.values()):
        return s
    return s._replace(delivered=Fn({m: () for m in s.delivered}))


def sent_is(msg: dict, want: tuple) -> Optional[str]:
    """None if the logged message is the model's: ``want`` is its (type,
    sender, seqno), the fields the properties read; else what the model's is."""
    got = (msg.get("type"), msg.get("sender"), msg.get("seqno"))
    return None if got == want else f"model {dict(zip(('type', 'sender', 'seqno'), want))}"


_ABSENT = object()      # a key not in a logged dict (``one``)


class _Str(dict):
    """x -> str(x), the members' strings made once."""

    def __missing__(self, x):
        return str(x)


class SequencerBinding(Binding):
    protocol = "sequencer"
    FIELDS = FIELDS

    def __init__(self, trace: Trace) -> None:
        super().__init__(trace)
        h = trace.header
        if h["protocol"] != "sequencer":
            raise HeaderError(f"no replay for protocol {h['protocol']!r}")
        c = h["constants"]
        try:
            self.model = SequencerModel(spec_constants(c))
        except KeyError as e:
            raise HeaderError(f"header constants lack {e}") from None
        self.check_header(self.model.Members, "SEQUENCER")
        M = self.model.Members
        self.members = set(M)
        self.recv_keys = frozenset(str(m) for m in M)     # a logged recv's keys (JSON object keys are strings)
        self.empty = Fn({m: () for m in M})
        self.hist: dict[int, list] = {m: [] for m in M}
        self.where: dict[int, list] = {m: [] for m in M}     # the event of each delivery in hist
        self.sent: dict[int, int] = {m: 0 for m in M}
        self.crashed: set[int] = set()
        self._verdicts: Optional[tuple] = None       # _judged's
        # ``observable``'s variables with their places in a state (``accept`` reads them by index)
        self._unlogged = tuple((v, SequencerState._fields.index(v)) for v in self._observable)
        self._unlogged_at: dict = {}     # ``one``'s: the logged keys -> the places of those left out
        self._key = _Str({m: str(m) for m in M})       # a member as a JSON object key

    def init(self):
        return self.model.init()

    def check(self, ev: dict) -> Optional[str]:
        """Members named by the record that the model does not have (the schema cannot know N)."""
        if self._only_members(ev):
            return None
        return self._outsider(ev)

    def _only_members(self, ev: dict) -> bool:
        """Every member the record names is a plain int of 1..N: the usual
        record, passed without building the list ``_outsider`` words its
        answer from (a record this refuses goes there, which decides)."""
        M = self.members
        nid, p, st = ev["nid"], ev["params"], ev.get("state")
        if nid is not None and not (type(nid) is int and nid in M):
            return False
        if p:
            x = p.get("p")
            if len(p) == 1 and x is not None:       # a receive's: the one member named
                if not (type(x) is int and x in M):
                    return False
            elif not all(type(x) is int and x in M
                         for x in (*(p[k] for k in ("p", "c") if k in p), *p.get("view", ()), *p.get("lost", ()))):
                return False
        if st:
            if "recv" in st and not self.recv_keys.issuperset(st["recv"]):
                return False
            if "delivered" in st:
                for x in st["delivered"]:
                    if not (type(x[0]) is int and x[0] in M):
                        return False
        return True

    def _outsider(self, ev: dict) -> Optional[str]:
        M = self.members
        named = [("nid", ev["nid"])] if ev["nid"] is not None else []
        p = ev["params"]
        named += [("params.p", p["p"])] if "p" in p else []
        named += [("params.c", p["c"])] if "c" in p else []
        named += [("params.view", x) for x in p.get("view", [])]
        named += [("params.lost", x) for x in p.get("lost", [])]
        st = ev.get("state") or {}
        named += [("state.recv", int(x)) for x in st.get("recv", {})]
        named += [("state.delivered", x[0]) for x in st.get("delivered", [])]
        for where, x in named:
            if type(x) is not int or x not in M:       # a bool is no member (as in _only_members)
                return f"{where}: {x!r} is not a member 1..{self.model.N}"
        return None

    def successors(self, s, ev: dict):
        # a tuple, not a generator: every action but a Crash without ``lost`` has one successor
        model, name, m, params = self.model, ev["name"], ev["nid"], ev["params"]
        if name == "RecvData":
            return (model.RecvData(s, m, params["p"]),)
        if name == "Send":
            return (model.Send(s, m),)
        if name == "RecvForward":
            return (model.RecvForward(s, m, params["p"]),)
        if name == "InstallView":
            return (model.InstallView(s, m),)
        if name == "Suspect":
            return (model.Suspect(s, m, params["c"]),)
        if name == "NewView":
            return (model.NewView(s),)
        if name == "Crash":
            if "lost" in params:
                return (model.Crash(s, m, frozenset(params["lost"])),)
            return tuple(model.Crash(s, m, lost) for lost in subsets(set(model.Members) - {m}))
        return ()

    def message(self, s, t, ev: dict) -> Optional[str]:
        name, m, msg = ev["name"], ev["nid"], ev.get("msg")
        if name == "NewView":
            view = ev["params"].get("view")
            if view is not None and list(t.views[-1]) != list(view):
                return f"the view decided is {list(t.views[-1])}"
            return None
        if msg is None:
            return None
        if name == "Send":
            # The coordinator multicasts DATA itself; any other member FORWARDs
            # to it (the model's Send put the seqno in fwd or it did not).
            want = ("FORWARD" if t.fwd[m] != s.fwd[m] else "DATA", m, t.sent[m])
        elif name in ("RecvForward", "RecvData"):
            p = ev["params"]["p"]
            i = self.model.Taking(s, m, p, "FORWARD" if name == "RecvForward" else "DATA")
            if i is None:
                return "the channel is empty"
            x = s.chan[(p, m)][i]
            want = (x["type"], x["sender"], x["seqno"])
        else:
            return None
        return sent_is(msg, want)

    # ``one`` takes only a record ``check`` passes (its members are plain
    # ints of 1..N, its logged recv and delivered equal the model's, whose
    # members they are): the engine asks it first and checks the others
    one_checks = True

    def one(self, s, ev: dict):
        # ``Binding.one`` with ``accept``, ``reduce`` and ``after`` in line:
        # Send, RecvForward and RecvData (nearly every record), the message
        # and the logged variables compared in place; whatever differs, or
        # another action, goes to the general step, which decides
        name, m, params, msg, model = ev["name"], ev["nid"], ev["params"], ev.get("msg"), self.model
        M = self.members
        if type(m) is not int or m not in M:
            return None
        if name == "RecvData" or name == "RecvForward":
            p = params.get("p")
            if len(params) != 1 or type(p) is not int or p not in M:
                return None
            t = model.RecvData(s, m, p) if name == "RecvData" else model.RecvForward(s, m, p)
            if t is None:
                return None
            # the logged message is the one taken (the channel's head, or the
            # first of its type with SeparateChannels): its type, sender and
            # seqno (the schema allows no other key; a message without one of
            # them goes to the general step, which compares them one by one)
            if msg is not None:
                i = 0 if not model.SeparateChannels else \
                    model.Taking(s, m, p, "DATA" if name == "RecvData" else "FORWARD")
                if msg != s.chan._d[(p, m)][i]._d:        # (``_d``: an Fn's dict, read without a call)
                    return None
        elif name == "Send":
            if params:
                return None
            t = model.Send(s, m)
            if t is None:
                return None
            if msg is not None and (msg.get("type") != ("FORWARD" if t.fwd._d[m] != s.fwd._d[m] else "DATA")
                                    or msg.get("sender") != m or msg.get("seqno") != t.sent._d[m]):
                return None
        else:
            return None
        # the deliveries the step appended
        new = () if t.delivered is s.delivered else t.delivered._d[m][len(s.delivered._d[m]):]
        logged = ev.get("state")
        if logged is not None:
            for var, val in logged.items():
                if var == "delivered":
                    # [sender, seqno] each, the sender a plain int (``check``)
                    if len(new) != len(val):
                        return None
                    for x, v in zip(new, val):
                        # (``list(x) != v`` on a pair, without building the list)
                        if type(v) is not list or len(v) != 2 or x[0] != v[0] or x[1] != v[1] \
                                or type(v[0]) is not int:
                            return None
                elif var == "recv":
                    # equal to the dict with string keys that ``norm`` makes, compared key by key
                    # (distinct members have distinct strings) without building it
                    d = t.recv._d[m]._d
                    if len(d) != len(val):
                        return None
                    key = self._key
                    for x, q in d.items():
                        if val.get(key[x], _ABSENT) != q:
                            return None
                elif var == "sent":
                    if t.sent._d[m] != val:
                        return None
                elif var == "vid":
                    if t.vid._d[m] != val:
                        return None
                elif var == "fwd":
                    if sorted(t.fwd._d[m]) != sorted(val):          # ``observe`` and ``norm``
                        return None
                else:
                    return None
            # the observable variables the record leaves out (by the logged keys: a few sets of them)
            keys = tuple(logged)
            at = self._unlogged_at.get(keys)
            if at is None:
                at = self._unlogged_at[keys] = tuple(k for v, k in self._unlogged if v not in logged)
            for k in at:
                fa, fb = t[k], s[k]
                if fa is not fb:                    # (the same object: a variable the step left alone)
                    a, b = fa._d[m], fb._d[m]
                    if a is not b and a != b:
                        return None
        # accepted: the successor without its histories, which go to ``hist``
        if t.delivered is self.empty:
            out = [t]
        else:
            out = [t._replace(delivered=self.empty)]
            if new:
                self.hist[m].extend(new)
                if len(new) == 1:
                    self.where[m].append(ev["i"])
                else:
                    self.where[m].extend([ev["i"]] * len(new))
        self.reduced = out
        if name == "Send":
            self.sent[m] = t.sent._d[m]
        return out, None

    def unlogged_changes(self, s, t, ev: dict, logged: dict) -> list[str]:
        # the usual step: the member's value of each variable the record
        # leaves out is the same object, or an equal one (a DATA of its own
        # rebuilds its fwd unchanged), in both states: then the projections
        # are equal too, found without projecting them
        m = ev["nid"]
        for v in self.observable(ev):
            if v not in logged:
                a, b = getattr(t, v)[m], getattr(s, v)[m]
                if a is not b and a != b:
                    return super().unlogged_changes(s, t, ev, logged)
        return []

    @staticmethod
    def untouched(s, t, ev: dict, var: str) -> bool:
        # the model's steps rebuild only what they change (``Fn.set``), so a
        # variable, or the member's value, that is the same object is unchanged
        if var not in FIELDS:
            return False
        a, b = getattr(t, var), getattr(s, var)
        return a is b or a[ev["nid"]] is b[ev["nid"]]

    @staticmethod
    def observe(s, t, ev: dict, var: str):
        m = ev["nid"]
        if var == "vid":
            return t.vid[m]
        if var == "sent":
            return t.sent[m]
        if var == "fwd":
            return sorted(t.fwd[m])
        if var == "recv":
            return {str(x): q for x, q in t.recv[m].items()}
        if var == "delivered":
            return [list(x) for x in t.delivered[m][len(s.delivered[m]):]]
        return None

    @staticmethod
    def norm(var: str, value):
        if var == "fwd":
            return sorted(value)
        if var == "recv":
            return {str(k): v for k, v in value.items()}
        if var == "delivered":
            return [list(x) for x in value]
        return value

    def reduce(self, t):
        return t if t.delivered is self.empty else t._replace(delivered=self.empty)

    def after(self, ev: dict, pairs: list, cands: set):
        name, m = ev["name"], ev["nid"]
        if name == "RecvData":
            s, t = pairs[0]
            new = t.delivered[m][len(s.delivered[m]):]
            self.hist[m].extend(new)
            self.where[m].extend([ev["i"]] * len(new))
        elif name == "Send":
            self.sent[m] = pairs[0][1].sent[m]
        elif name == "Crash":
            self.crashed.add(m)
        return None

    def history(self, quiescent=None) -> properties.History:
        return properties.History.of(self.hist, self.sent, self.crashed, quiescent)

    def _judged(self) -> tuple:
        """(the histories so far as a History, PROPERTIES -> verdict on it),
        judged once: ``properties``, ``broken_at`` and ``at_end`` all read
        them after the last record (the histories only grow, so their
        lengths, the sends and the crashes say whether they moved since)."""
        key = (tuple(map(len, self.hist.values())), tuple(self.sent.values()), len(self.crashed))
        if self._verdicts is None or self._verdicts[0] != key:
            h = self.history()
            self._verdicts = (key, h, {prop: properties.CATALOGUE[prop].judge(h) for prop in PROPERTIES})
        return self._verdicts[1:]

    def properties(self, cands: set):
        """Every one of PROPERTIES the histories break, in PROPERTIES' order,
        each with the record where it first broke and the witness there (the
        first witness in member order may be a later one): where TLC, which
        judges it step by step, finds it broken too."""
        out, broken = [], None
        for v in self._judged()[1].values():
            if v is None:
                continue
            broken = self.broken_at() if broken is None else broken
            at = broken.get(v.property)
            if at is not None:
                v = properties.CATALOGUE[v.property].judge(self._prefix(at))
            out.append((v.property, at, v.reason))
        return out

    def broken_at(self) -> dict:
        """Each of PROPERTIES the histories break -> the first record after
        which they do: the histories only grow, so a property broken by a
        prefix stays broken, and the record is found by bisection over the
        delivering records (each candidate delivered the same: ``after``)."""
        out, at = {}, None
        for prop, v in self._judged()[1].items():
            if v is None:
                continue
            judge = properties.CATALOGUE[prop].judge
            if at is None:
                at = sorted({i for w in self.where.values() for i in w})
            k = properties.first_breaking(at, lambda i: judge(self._prefix(i)) is not None)
            if k is not None:
                out[prop] = k
        return {**out, **self.ended}

    def _prefix(self, i: int) -> properties.History:
        """The history of the records up to ``i``."""
        hist = {m: d[:bisect.bisect_right(self.where[m], i)] for m, d in self.hist.items()}
        return properties.History.of(hist, self.sent, self.crashed)

    def at_end(self, cands: set):
        """At the end of a quiescent run (END_OF_RUN): the catalogue's
        EventualDelivery on the judged histories (History.of's one
        difference: quiescent), and the claim itself against the model
        (Sequencer.tla's Quiescent: nothing in flight, every live member in
        the last view, no view change pending), failing in every candidate
        (TraceSequencer.tla's End step judges the same)."""
        v = properties.eventual_delivery(dataclasses.replace(self._judged()[0], quiescent=True))
        owed = {"EventualDelivery": v.reason} if v else {}

        def judge(t):
            q = quiescent_witness(self.model, t)
            return {**owed, **({"Quiescent": q} if q else {})}
        return self.judge_end(cands, judge)


def quiescent_witness(model: SequencerModel, s) -> Optional[str]:
    """Sequencer.tla's Quiescent on model state ``s``: None when it holds,
    else what is still to do (the first message in flight, a live member
    behind the last view, a crashed member in the last view)."""
    busy = [(p, q) for (p, q) in sorted(model.pairs) if s.chan[(p, q)]]
    if busy:
        p, q = busy[0]
        m = s.chan[(p, q)][0]
        what = " ".join(f"{k}={m[k]}" for k in sorted(m))
        more = "".join(f"; in flight from member {a} to member {b} too" for a, b in busy[1:])
        return (f"a message ({what}) from member {p} to member {q} is still in flight "
                f"({len(s.chan[(p, q)])} message(s) on that channel){more}")
    for m in model.Members:
        if m not in s.crashed and s.vid[m] != len(s.views):
            return f"member {m} (alive) is in view {s.vid[m]}, the last view is {len(s.views)}"
    gone = [x for x in s.views[-1] if x in s.crashed]
    if gone:
        return f"members {gone} crashed but are in the last view {len(s.views)}: a view change is pending"
    return None


# The catalogue's properties the replay judges after the last record, in the
# order it reports them (the registration's ``judged``; EventualDelivery
# at the end of a quiescent run).  GapFreeFIFO: what a member delivered of a
# sender that never crashed is 1, 2, ..., k; the seed as written breaks it
# after a coordinator crash (loss 2, docs/sequencer.md), a known finding.
# After TotalOrder, so that a run breaking both is reported as the seed's
# main finding.
JUDGED = ("NoDuplicates", "Integrity", "SenderFIFO", "TotalOrder", "GapFreeFIFO", "EventualDelivery")
PROPERTIES = JUDGED[:-1]


def project(s, m: int) -> dict:
    """Member ``m``'s whole part of model state ``s`` in the trace's JSON
    shape (the lock-step driver compares it with the implementation's)."""
    return {"vid": s.vid[m], "sent": s.sent[m], "fwd": sorted(s.fwd[m]),
            "recv": {str(x): q for x, q in sorted(s.recv[m].items())},
            "delivered": [list(x) for x in s.delivered[m]]}


class WholeStateBinding(SequencerBinding):
    """Records that log a member's whole state, ``delivered`` its whole
    history (the lock-step driver's, straight from the layer's ``state()``);
    the candidates keep their histories."""

    def observe(self, s, t, ev: dict, var: str):
        if var == "delivered":
            return [list(x) for x in t.delivered[ev["nid"]]]
        return super().observe(s, t, ev, var)

    def one(self, s, ev: dict):
        return None         # ``delivered`` is the whole history here: the general step

    def reduce(self, t):
        return t


# ---------------------------------------------------------------- findings with a shape

class _Run:
    """What SEQUENCER's findings read off a trace: who was coordinator when,
    which coordinators crashed, when each message was sent, and which
    coordinator sequenced each delivery (``RecvData``'s ``p``)."""

    def __init__(self, trace: Trace) -> None:
        nodes = list(trace.header.get("nodes") or [])
        self.views = {1: nodes}                      # vid -> members; the coordinator is the first
        self.crashed_coords: list = []               # (event, member) of each coordinator that crashed
        self.crashed: set = set()
        self.sent_at: dict = {}                      # msg -> event of its Send
        self.installs: dict = {}                     # member -> [(event, vid)]
        self.seq: dict = {}                          # (member, msg) -> who sequenced its first delivery
        self.dropped: dict = {}                      # msg -> (event, member) that dropped its FORWARD
        installed = {m: 1 for m in nodes}
        decided = nodes
        full = trace.states == "full"
        got: dict = {}
        for k, ev in enumerate(trace.events):
            i, name, m = ev.get("i", k), ev.get("name"), ev.get("nid")
            if name == "NewView":
                decided = list((ev.get("params") or {}).get("view") or [])
                self.views[len(self.views) + 1] = decided
            elif name == "Crash":
                self.crashed.add(m)
                if decided and m == decided[0]:
                    self.crashed_coords.append((i, m))
            elif name == "Send" and ev.get("msg"):
                self.sent_at.setdefault((m, ev["msg"]["seqno"]), i)
            elif name == "InstallView":
                vid = (ev.get("state") or {}).get("vid")
                self.installs.setdefault(m, []).append((i, vid))
                installed[m] = vid if vid is not None else installed.get(m, 1) + 1
            elif name == "RecvForward" and ev.get("msg"):
                # "If not coord: error and return": taken by a member not coordinator of its installed view
                if (self.views.get(installed.get(m, 1)) or [m])[0] != m:
                    self.dropped.setdefault((ev["msg"]["sender"], ev["msg"]["seqno"]), (i, m))
            elif name == "RecvData":
                d = [tuple(x) for x in (ev.get("state") or {}).get("delivered") or []]
                new = d[len(got.get(m, ())):] if full else d
                got[m] = d if full else got.get(m, []) + d
                for msg in new:
                    self.seq.setdefault((m, msg), (ev.get("params") or {}).get("p"))

    def delivered_by(self, msg) -> list:
        """The members that delivered ``msg``."""
        return [m for (m, x) in self.seq if x == msg]

    def by_sequencer(self, gone: set) -> dict:
        """The members' first deliveries split by who sequenced them: one
        History per crashed coordinator (its key), and one ("alive") for
        those the coordinators that did not crash sequenced."""
        parts: dict = {}
        for (m, msg), c in self.seq.items():
            parts.setdefault(c if c in gone else "alive", {}).setdefault(m, []).append(msg)
        return {k: properties.History.of(d, {}, self.crashed, quiescent=True, nodes=self.views[1])
                for k, d in parts.items()}

    def history(self) -> properties.History:
        """The members' first deliveries, the messages sent, the crashes, as
        the replay judged them (a run judged at its end is quiescent)."""
        delivered: dict = {}
        for (m, msg) in self.seq:
            delivered.setdefault(m, []).append(msg)
        h = properties.History.of(delivered, {}, self.crashed, quiescent=True, nodes=self.views[1])
        h.sent = dict.fromkeys(self.sent_at, True)
        return h

    def held(self, msg) -> Optional[str]:
        """Why ``msg`` was lost to a coordinator crash: its sender sent it
        before installing the first view without the crashed coordinator (a
        FORWARD to it, or in the forward-table re-sent at the view change),
        or its FORWARD reached a member before that member was coordinator
        and was dropped (loss 1)."""
        x = msg[0]
        if tuple(msg) in self.dropped and self.crashed_coords:
            i, r = self.dropped[tuple(msg)]
            return (f"the FORWARD of {properties.fmt(msg)} was dropped at event {i} by member {r}, not yet "
                    f"coordinator in its installed view (coordinator {self.crashed_coords[0][1]} crashed)")
        sent = self.sent_at.get(tuple(msg))
        for at, c in self.crashed_coords:
            if c == x or sent is None:
                continue
            moved = next((i for i, vid in self.installs.get(x, ()) if c not in self.views.get(vid, [c])), None)
            if moved is None or sent < moved:
                return (f"{properties.fmt(msg)} was sent at event {sent}, before its sender {x} installed a view "
                        f"without coordinator {c} (crashed at event {at})"
                        + ("" if moved is None else f", at event {moved}"))
        return None


def _witness_crash_order(trace: Trace, prop: str, reason: str, at=None) -> Optional[str]:
    """Finding 1 (docs/sequencer.md): members order messages differently
    only across the failover.  Every pair ordered differently must straddle
    it: the deliveries that one coordinator sequenced are in one order at
    every member, and so are those that coordinators still alive sequenced
    (TotalOrder holds on each of these parts), so each inverted pair has
    its two messages sequenced by two coordinators, one of which crashed."""
    run = _Run(trace)
    v = properties.total_order(run.history())
    if v is None or not run.crashed_coords:
        return None
    gone = {c for _, c in run.crashed_coords}
    for part, inside in run.by_sequencer(gone).items():
        w = properties.total_order(inside)
        if w is not None:       # an inversion that does not straddle the failover
            return None
    (a, b), (x, y) = v.members, v.messages
    by = {(m, msg): run.seq.get((m, tuple(msg))) for m in (a, b) for msg in (x, y)}
    return (f"{v.reason}; sequenced by " + ", ".join(f"{properties.fmt(msg)} at {m}: {s}"
                                                     for (m, msg), s in by.items())
            + f" (coordinator {sorted(gone)[0]} crashed); every pair ordered differently straddles the failover")


def _witness_lost_held(trace: Trace, prop: str, reason: str, at=None) -> Optional[str]:
    """The losses after a coordinator crash (docs/sequencer.md, losses 1-3):
    EVERY message a live member lost (EventualDelivery), skipped
    (GapFreeFIFO) or that survivors disagree on (Agreement, a history's
    name) is one the crashed coordinator held: its own, or sent before its
    sender moved to a view without that coordinator (or its FORWARD dropped
    by the next coordinator before it was one), and no delivery of it
    anywhere was sequenced by a coordinator that did not crash (a message
    the new coordinator sequenced and some member lacks is another fault)."""
    run = _Run(trace)
    h = run.history()
    if prop == "Quiescent":     # the crash's cut: every channel still busy at the end is to or from it
        return _witness_cut_by_crash(run, reason)
    if prop == "Agreement":     # the history's name: survivors differ, or none delivered a live sender's
        lost = [v.messages[0] for v in properties.agreement_breaks(h)]
    elif prop == "GapFreeFIFO":
        lost = []
        for v in properties.fifo_breaks(h, True):
            (x, due), (_, q) = v.messages
            if q <= due:        # out of order, not a gap: no loss of this shape
                return None
            lost += [(x, k) for k in range(due, q)]
    else:
        lost = [v.messages[0] for v in properties.missing_deliveries(h)]
    if not lost or not run.crashed_coords:
        return None
    gone = {c for _, c in run.crashed_coords}
    why = []
    for msg in dict.fromkeys(map(tuple, lost)):
        held = run.held(msg) if msg[0] not in gone else f"{properties.fmt(msg)} was the crashed coordinator's own"
        by = {run.seq[(m, msg)] for m in run.delivered_by(msg)}
        if held is None or not by <= gone:
            return None
        why.append(held)
    return why[0] + ("" if len(why) == 1 else f"; and {len(why) - 1} more lost message(s) of the same shape")


def _witness_cut_by_crash(run: "_Run", reason: str) -> Optional[str]:
    """A false quiescent claim of the loss's shape: nothing is pending but
    messages on channels to or from a crashed coordinator (its DATA that
    the crash kept from a member, a FORWARD to it), every such channel
    (the Quiescent witness names each busy one); a live member behind the
    last view or a view change pending is another fault."""
    pairs = [tuple(map(int, m)) for m in re.findall(r"from member (\d+) to member (\d+)", reason)]
    gone = {c for _, c in run.crashed_coords}
    if not pairs or "is in view" in reason or "view change is pending" in reason:
        return None
    if not all(p in gone or q in gone for p, q in pairs):
        return None
    return (f"the messages still in flight are on channels to or from crashed coordinator(s) {sorted(gone)} "
            f"({', '.join(f'{p}->{q}' for p, q in pairs)}): cut by the crash, as the loss's")


def plan_kind(header: dict) -> str:
    """A run's fault plan as the rates count it: the coordinator (the
    first member) crashes, another member does, or none."""
    crashed = crashed_members(header.get("faults") or {})
    first = (header.get("nodes") or [None])[0]
    return "coordinator crash" if first in crashed else "other crash" if crashed else "no crash"


# Rates: measured on the audit's drawn plans (``draw``), seeds 10000-13999 (4,000
# runs, 1,284 with a coordinator crash), never the seeds an audit uses.
FINDINGS = (
    findings.Finding(
        "sequencer/coordinator-crash-order", ("TotalOrder", "SurvivorTotalOrder"),
        "docs/sequencer.md#finding-total-order-does-not-survive-a-coordinator-crash",
        _witness_crash_order, rates={"coordinator crash": (68, 1284)}, fixed_by="sequencerflush"),
    findings.Finding(
        "sequencer/lost-after-coordinator-crash", ("GapFreeFIFO", "EventualDelivery", "Agreement", "Quiescent"),
        "docs/sequencer.md#losses-after-a-coordinator-crash-three-findings-and-their-fixes",
        _witness_lost_held, rates={"coordinator crash": (536, 1284)}, fixed_by="sequencerflush"),
)


fault_plan = plan_reader(NETWORK_AND_CRASH, "sequencer")   # no draw: ``auto`` refused


def simulate(seed: int, faults, options: dict):
    """One simulated SEQUENCER run (impl/sim_sequencer.py) for the registry."""
    opts = {**PROTOCOL_DEFAULTS, **(options or {})}
    records, line = sim_sequencer.simulate_run(int(opts["nodes"]), int(opts["messages"]), seed,
                                               fault_plan(faults, seed, opts))
    return records, line


PROTOCOL_DEFAULTS = {"nodes": 3, "messages": 2}


def draw(seed: int) -> tuple[str, dict]:
    """One audit run's size and faults from its seed: 3-5 members, 1-3
    multicasts each, the campaign's loss, duplication and reordering, and a
    crash of the coordinator, of another member, or none, at a time drawn
    within the sends."""

    rng = random.Random(seed * 7919 + 11)
    n, per, span = campaign.draw_size(rng)
    crash = rng.choice(("none", "coordinator", "other"))
    crashes = () if crash == "none" else \
        (((1 if crash == "coordinator" else rng.randint(2, n)), round(rng.uniform(0.0, span + 0.02), 4)),)
    return campaign.fault_spec(0.1, 0.05, 0.003, crashes), {"nodes": n, "messages": per}

PROTOCOL = Protocol(
    work=("Send",),
    name="sequencer", spec="Sequencer",
    actions=("Send", "RecvForward", "RecvData", "InstallView", "Suspect", "Crash", "NewView"),
    properties=PROPERTIES,
    simulate=simulate, fault_plan=fault_plan, binding=SequencerBinding,
    default_options=PROTOCOL_DEFAULTS,
    campaign_faults="loss=0.1,dup=0.05,reorder=3,crash=1@30",
    promises=("Integrity", "NoDuplicates", "SenderFIFO", "GapFreeFIFO", "TotalOrder", "SurvivorTotalOrder",
              "Agreement", "CrashStop"),
    judged=JUDGED,
    reduce=reduce_state,
    draw=draw,
    # spec/Sequencer/TraceSequencer.tla: fwd and a crash's lost receivers are sets
    tla_trace=TLATrace(sets=frozenset({"fwd", "lost"}),
                       constants=spec_constants,
                       # its Kept: GapFreeFIFO is judged at the end, by the replay alone
                       properties=("NoDuplicates", "Integrity", "SenderFIFO", "TotalOrder"),
                       # its EndKept: at_end's
                       end=("EventualDelivery", "Quiescent")),
    # docs/sequencer.md: finding 1 and the losses after a coordinator crash (FINDINGS above)
    findings=FINDINGS, plan_kind=plan_kind,
)
replay = PROTOCOL.replay      # the registration's replay (conformance/replay/registry.py)


# ---------------------------------------------------------------- lock-step driver

class LockstepCluster(LockstepNetwork):
    """N SEQUENCER stacks (transport, reliable, sequencer, as impl/stacks/sequencer.py
    builds them) driven one event at a time (conformance/replay/lockstep.py), each
    step checked against model/sequencer.py on whole-state records
    (``WholeStateBinding``).  Environment actions are the spec's:
    ``crash(m)`` is Crash (datagrams in flight to m are dropped, m's own
    stay in flight) followed at once by the oracle's NewView (the last view
    without the crashed members); each live member then installs the views
    in order when the driver says so (``install_view``)."""

    def __init__(self, n: int = 3, max_seq: int = 2, max_crashes: int = 1,
                 make_stack: Callable = sequencer_stack) -> None:
        members = tuple(range(1, n + 1))
        super().__init__(members, {m: make_stack(m, members) for m in members})
        header = {"protocol": "sequencer", "nodes": list(members), "options": {},
                  "constants": {"N": n, "MaxSeq": max_seq, "MaxCrashes": max_crashes}, "run_id": "lockstep"}
        self.engine = ReplayEngine(WholeStateBinding(Trace("<lockstep>", header, [])), visited=False)
        self.model = self.engine.b.model
        self.views = [View(1, self.members)]

    # ------------------------------------------------------------ queries

    def seq(self, m: int):
        return self.stacks[m].layer("sequencer")

    def can_send(self, m: int) -> bool:
        return m not in self.crashed and self.seq(m).sent < self.model.MaxSeq

    def can_crash(self, m: int) -> bool:
        return m not in self.crashed and len(self.crashed) < self.model.MaxCrashes

    def pending_view(self, m: int) -> bool:
        return m not in self.crashed and self.seq(m).vid < len(self.views)

    def abstraction(self) -> dict[int, dict]:
        return {m: self.seq(m).state() for m in self.members}

    def _project(self, s, m: int) -> dict:
        return project(s, m)

    # ------------------------------------------------------------ steps

    def app_send(self, m: int) -> None:
        assert self.can_send(m)
        self._handle(m, AppSend(f"m{m}.{self.seq(m).sent + 1}".encode()))

    def crash(self, m: int) -> None:
        assert self.can_crash(m)
        self._stop(m)
        self.env_step("Crash", m)
        last = self.views[-1]
        if any(x in self.crashed for x in last.members):     # the oracle decides at once
            view = View(last.vid + 1, tuple(x for x in last.members if x not in self.crashed))
            self.views.append(view)
            self.env_step("NewView", params={"view": list(view.members)})
        self.check_abstraction()

    def install_view(self, m: int) -> None:
        assert self.pending_view(m)
        self._handle(m, ViewChange(self.views[self.seq(m).vid]))

