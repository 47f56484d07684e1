"""Python mirror of spec/RaincoreFlush/RaincoreFlush.tla.

Theory of operation
-------------------
FLUSH (fixed variant: digest reconciliation) whose membership is the
Raincore token ring instead of an oracle: the view FLUSH's coordinator
installs is the ring's committed view (the last non-NULL entry of its
node's globalView); a member counts gone exactly the members of its FLUSH
view its ring ``localView`` no longer lists, which only TokenDeliveryFailure
(or taking a token that carries the removal) changes; a joiner's 911 is
queued by a ring node (911Received) and added to the token by its holder
(EatingTimeout).  With ``LossyRing`` FALSE the ring is abstracted as the
spec says (one token, never lost: no sequence numbers, timeouts or
regeneration; a node crashes only while it neither holds the token nor has
it in transit; ``tokenState`` and ``lastToken`` keep their initial values).
With ``LossyRing`` TRUE the ring is Raincore's fixed variant, token loss and
regeneration included: its transitions are those of
:class:`.raincore.RaincoreModel` (FreshClaim, TokenRingClaim, and TimelyTimeouts
as the constant says: TRUE in every model, FALSE for replaying the
implementation, whose timers know nothing of tokens in flight;
no recovery), applied to the ring variables of this state, not restated;
but a crash keeps what the node has sent in transit (``RingCrash``), where
Raincore's drops it.

This module is the spec transcribed variable for variable and action for
action, so that the explorer's graph equals TLC's.  The FLUSH actions and
invariants are :class:`.flush.FlushModel`'s, inherited: every guard that
reads FLUSH's perfect failure detector reads it through ``Dead`` and
``Gone``, which here read the ring; SendView's view is the ring's commit
(``NextView``).  Crash, Join and the ring actions are this spec's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from .core import Label, Model, state_type
from .flush import FlushModel, FlushState, _set
from . import raincore
from .raincore import (NULL, NULL_VIEW, TOKEN_STATES, VIEW_STATES, InsertAfter, LastGlobalViewOf,
                       NextNode, RaincoreModel, RaincoreState, Remove, TakeToken)
from .values import Fn, record


def Token(nodelist: tuple, cur: int, dest: int, gvn: int) -> Fn:
    """Raincore's token without the sequence number."""
    return record(nodelist=nodelist, cur=cur, dest=dest, gvn=gvn)


def Msg911(orig: int, cur: int, dest: int) -> Fn:
    """A join request: all a 911 carries here."""
    return record(orig=orig, cur=cur, dest=dest)


NO_TOKEN = Token((), NULL, NULL, 0)


def LastIdxOf(gv: tuple) -> int:
    """The spec's LastIdx: the index (1-based) of the last non-NULL entry of
    a globalView, 0 if none: the ring's number of its last commit."""
    for i in range(len(gv), 0, -1):
        if gv[i - 1] != NULL_VIEW:
            return i
    return 0


def RingViewMsg(v: int, d: frozenset, r: int) -> Fn:
    """The spec's ViewMsg(v, d, r): FLUSH's VIEW with the ring's number of the view it installs."""
    return record(type="VIEW", view=v, digest=d, ring=r)


@state_type
class RaincoreFlushState(NamedTuple):
    # FLUSH (Flush.tla without crashed, joining, leaving)
    views: tuple
    vid: tuple
    sent: tuple
    delivered: tuple
    chan: Fn
    phase: tuple
    blocked: tuple
    flushInit: tuple
    flushOks: tuple
    digest: tuple
    completed: tuple
    viewRing: tuple     # viewRing[v-1]: the ring's number of view v (its index in globalView); last of FLUSH's
    # the ring (Raincore.tla without tokenState, lastToken, recovered)
    status: tuple
    viewState: tuple
    globalView: tuple
    localView: tuple
    newNodes: tuple
    token: tuple
    tokenMsgs: frozenset
    msgs911: frozenset
    tokenState: tuple   # LossyRing only (else its initial value)
    lastToken: tuple    # LossyRing only (else NO_TOKEN)


# The ring variables, shared with RaincoreState (which adds ``recovered``).
RING_VARS = ("status", "viewState", "globalView", "localView", "newNodes", "token", "tokenMsgs", "msgs911",
             "tokenState", "lastToken")


class RaincoreFlushModel(FlushModel):
    """FLUSH's actions and invariants are :class:`.flush.FlushModel`'s, over
    this state's FLUSH variables, with the failure detector read from the
    ring (Dead, Gone), the coordinator and the pending view change the
    ring's, and SendView's view the ring's commit (NextView)."""

    protocol = "raincoreflush"
    variables = RaincoreFlushState._fields
    ReconcileDigests = True   # FLUSH's fixed variant

    def __init__(self, constants: Mapping[str, Any]) -> None:
        Model.__init__(self, constants)   # not FLUSH's constants (no ReconcileDigests, MaxLeaves)
        c = self.constants
        self.N = int(c["N"])
        self.NInit = int(c["NInit"])
        self.Founder = int(c["Founder"])
        self.MaxMsgs = int(c["MaxMsgs"])
        self.MaxCrashes = int(c["MaxCrashes"])
        self.Crashable = frozenset(c["Crashable"])
        if not (2 <= self.NInit <= self.N and 1 <= self.Founder <= self.NInit):
            raise ValueError(f"raincoreflush: need 2 <= NInit <= N and Founder in 1..NInit, got {c}")
        self.Members = tuple(range(1, self.N + 1))
        self.pairs = tuple((p, q) for p in self.Members for q in self.Members)
        self.InitRing = tuple(range(1, self.NInit + 1))
        self.LossyRing = bool(c.get("LossyRing", False))
        self.LateFailures = bool(c.get("LateFailures", False))
        # NewerViewsOnly (the spec's): FLUSH acts only on a ring commit newer than its view's
        self.NewerViewsOnly = bool(c.get("NewerViewsOnly", True))
        # FalseSuspicion: the Transport Manager may report a live node of Crashable
        # unreachable; ShunSuspected: a member the latest view leaves out has failed
        self.FalseSuspicion = bool(c.get("FalseSuspicion", False))
        self.ShunSuspected = bool(c.get("ShunSuspected", False))
        # SuspectLeaves: a node so reported learns it later and leaves (LeaveSuspected)
        self.SuspectLeaves = bool(c.get("SuspectLeaves", False))
        # ViewUnderToken: StartFlush and SendView only by the token holder, SendView of the latest view
        self.ViewUnderToken = bool(c.get("ViewUnderToken", False))
        self.NoToken = raincore.NO_TOKEN if self.LossyRing else NO_TOKEN
        if self.LossyRing:
            # Raincore's fixed variant (spec/Raincore Fixed* models) without
            # recovery; Bounds is MCRaincore's without MaxDown.
            self.ring = RaincoreModel({
                "N": self.N, "InitSize": self.NInit, "InitSeq": self.NInit, "ColdStart": False,
                "TimelyTimeouts": bool(c.get("TimelyTimeouts", True)), "StableFounder": False, "NeutralRecovery": True, "FreshClaim": True,
                "FreshView": True, "TokenRingClaim": True,
                "MaxSeq": c.get("MaxSeq"), "Max911": c.get("Max911"), "MaxDown": None})
            self._not_recovered = (False,) * self.N

    # --- the ring as Raincore's (LossyRing) -------------------------------------------
    def ring_state(self, s) -> RaincoreState:
        return RaincoreState(**{v: getattr(s, v) for v in RING_VARS}, recovered=self._not_recovered)

    def ring_step(self, s, r: RaincoreState | None):
        """``s`` with the ring variables of Raincore's successor ``r``."""
        return None if r is None else s._replace(**{v: getattr(r, v) for v in RING_VARS})

    def constraint(self, s) -> bool:
        """MCRaincoreFlushLossy's Bounds (MCRaincoreFlush has no CONSTRAINT)."""
        if not self.LossyRing:
            return True
        return self.ring.constraint(self.ring_state(s))

    # --- helpers (the spec's operators) -----------------------------------------
    @staticmethod
    def LastGlobalView(s, n: int) -> tuple:
        return LastGlobalViewOf(s.globalView[n - 1])

    @staticmethod
    def LastIdx(s, n: int) -> int:
        return LastIdxOf(s.globalView[n - 1])

    def NewerRingView(self, s, c: int) -> bool:
        return not self.NewerViewsOnly or self.LastIdx(s, c) > s.viewRing[self.At(s.vid, c) - 1]

    def ViewOf(self, s, n: int) -> tuple:
        v = self.LastGlobalView(s, n)
        return self.InitRing if v == NULL_VIEW else v

    def Eating(self, s, n: int) -> bool:
        return s.token[n - 1] != self.NoToken

    def Dead(self, s) -> frozenset:
        return frozenset(n for n in self.Members if s.status[n - 1] == "Down")

    @staticmethod
    def Alive(s, p: int) -> bool:
        return s.status[p - 1] == "Up"

    def Unreachable(self, s, d: int) -> bool:
        """The Transport Manager reports d unreachable: down, or (FalseSuspicion)
        a live node of Crashable that is slow."""
        st = s.status[d - 1]
        return st == "Down" or (self.FalseSuspicion and st == "Up" and d in self.Crashable)

    def Gone(self, s, p: int) -> frozenset:
        return frozenset(s.views[self.At(s.vid, p) - 1]) - frozenset(s.localView[p - 1])

    def IsCoord(self, s, c: int) -> bool:
        return all(c <= q for q in frozenset(s.views[self.At(s.vid, c) - 1]) - self.Gone(s, c))

    def TokenHeld(self, s, c: int) -> bool:
        return not self.ViewUnderToken or self.Eating(s, c)

    def LatestUnderToken(self, s, c: int) -> bool:
        return not self.ViewUnderToken or self.At(s.vid, c) == len(s.views)

    def ViewChangePending(self, s, c: int) -> bool:
        """The spec's, with StartFlush's TokenHeld (StartFlush alone reads it)."""
        lgv = self.LastGlobalView(s, c)
        # (frozenset: RaincoreSequencerFlush's views are sorted tuples)
        return (lgv != NULL_VIEW and frozenset(lgv) != frozenset(s.views[-1]) and self.NewerRingView(s, c)
                and self.TokenHeld(s, c))

    def NextView(self, s, c: int, v: int, D: frozenset):
        """SendView's view: the ring's commit, sent to the old view and the new
        one with its ring number; it waits for a commit newer than its view's."""
        if not (self.NewerRingView(s, c) and self.TokenHeld(s, c) and self.LatestUnderToken(s, c)):
            return None
        new = frozenset(self.LastGlobalView(s, c))
        idx = self.LastIdx(s, c)
        return new, frozenset(s.views[v - 1]) | new, RingViewMsg(v, D, idx), {"viewRing": s.viewRing + (idx,)}

    # --- init -------------------------------------------------------------------
    def init(self):
        N, NI = self.N, self.NInit
        ring = self.InitRing
        (f,) = FlushModel.init(self)   # FLUSH's start: view 1 is 1..NInit, the initial ring
        yield RaincoreFlushState(
            **{v: getattr(f, v) for v in RaincoreFlushState._fields if v in FlushState._fields},
            viewRing=(1,),
            status=tuple("Up" if n <= NI else "Off" for n in self.Members),
            viewState=tuple("Agreement" if n <= NI else "Chaos" for n in self.Members),
            globalView=tuple((ring,) if n <= NI else () for n in self.Members),
            localView=tuple(ring if n <= NI else () for n in self.Members),
            newNodes=(frozenset(),) * N,
            token=tuple(self.MkToken(NI, ring, n, NextNode(ring, n), 1) if n == self.Founder else self.NoToken
                        for n in self.Members),
            tokenMsgs=frozenset(),
            msgs911=frozenset(),
            tokenState=tuple("Eating" if n == self.Founder else "Hungry" if n <= NI else "Starving"
                             for n in self.Members),
            lastToken=tuple(self.SteadyToken(n) if self.LossyRing and n <= NI else self.NoToken
                            for n in self.Members),
        )

    def MkToken(self, seq: int, nl: tuple, cur: int, dest: int, gvn: int) -> Fn:
        return raincore.Token(seq, nl, cur, dest, gvn) if self.LossyRing else Token(nl, cur, dest, gvn)

    def SteadyToken(self, n: int) -> Fn:
        age = (self.Founder - 1 - n + self.NInit) % self.NInit
        return self.MkToken(self.NInit - age, self.InitRing, n, NextNode(self.InitRing, n), 1)

    # --- the ring ---------------------------------------------------------------
    def TokenReceived(self, s, n: int, m: Fn):
        if self.LossyRing:
            return self.ring_step(s, self.ring.TokenReceived(self.ring_state(s), n, m))
        if not (self.Alive(s, n) and m["dest"] == n):
            return None
        same = m["nodelist"] == s.localView[n - 1]
        vs, gv, tgvn = TakeToken(s.viewState[n - 1], same, s.globalView[n - 1], m["nodelist"], m["gvn"])
        return s._replace(
            tokenMsgs=s.tokenMsgs - {m},
            viewState=_set(s.viewState, n, vs),
            globalView=_set(s.globalView, n, gv),
            localView=_set(s.localView, n, m["nodelist"]),
            token=_set(s.token, n, m.set("cur", n).set("gvn", tgvn)),
        )

    def Received911(self, s, n: int, m: Fn):
        if self.LossyRing:
            return self.ring_step(s, self.ring.Received911(self.ring_state(s), n, m))
        if not (self.Alive(s, n) and m["dest"] == n and m["orig"] not in self.ViewOf(s, n)):
            return None
        return s._replace(
            msgs911=s.msgs911 - {m},
            newNodes=_set(s.newNodes, n, s.newNodes[n - 1] | {m["orig"]}),
        )

    def LateFailure(self, s, n: int, m: Fn) -> bool:
        """LossyRing: the token n sent last, no longer in transit (its
        receiver took it, then crashed before its ack got through)."""
        return self.LossyRing and self.LateFailures and m == s.lastToken[n - 1] and m not in s.tokenMsgs

    def _ring_report(self, s, r: RaincoreState, d: int, action, *args):
        """Raincore's report step ``action(r, *args)`` (it needs its
        destination ``d`` down) made with the spec's Unreachable(d): a live
        node of Crashable under FalseSuspicion is reported as Raincore reports
        a down one, and stays up (the report changes no status)."""
        if self.FalseSuspicion and s.status[d - 1] == "Up" and d in self.Crashable:
            t = action(r._replace(status=_set(r.status, d, "Down")), *args)
            return None if t is None else self.ring_step(s, t._replace(status=s.status))
        return self.ring_step(s, action(r, *args))

    def TokenDeliveryFailure(self, s, n: int, m: Fn):
        if self.LossyRing:
            r = self.ring_state(s)
            if self.LateFailure(s, n, m):      # Raincore's step, the token put back in transit first
                r = r._replace(tokenMsgs=r.tokenMsgs | {m})
            return self._ring_report(s, r, m["dest"], self.ring.TokenDeliveryFailure, n, m)
        if not (self.Alive(s, n) and m["cur"] == n and self.Unreachable(s, m["dest"])):
            return None
        nl = Remove(m["nodelist"], m["dest"])
        t = m.set("nodelist", nl).set("dest", NextNode(nl, n))
        lv = _set(s.localView, n, nl)
        if nl == (n,):
            t1 = t.set("gvn", len(s.globalView[n - 1]) + 1)
            return s._replace(
                localView=lv,
                viewState=_set(s.viewState, n, "Agreement"),
                globalView=_set(s.globalView, n, s.globalView[n - 1] + (nl,)),
                token=_set(s.token, n, t1),
                tokenMsgs=s.tokenMsgs - {m},
            )
        return s._replace(
            localView=lv,
            viewState=_set(s.viewState, n, "Chaos"),
            tokenMsgs=(s.tokenMsgs - {m}) | {t},
        )

    def DeliveryFailure911(self, s, n: int, m: Fn):
        if self.LossyRing:
            return self._ring_report(s, self.ring_state(s), m["dest"], self.ring.DeliveryFailure911, n, m)
        if not (self.Alive(s, n) and m["cur"] == n and self.Unreachable(s, m["dest"])):
            return None
        return s._replace(msgs911=(s.msgs911 - {m}) | {m.set("dest", NextNode(self.InitRing, m["dest"]))})

    def EatingTimeout(self, s, n: int):
        if self.LossyRing:
            return self.ring_step(s, self.ring.EatingTimeout(self.ring_state(s), n))
        if not (self.Alive(s, n) and self.Eating(s, n)):
            return None
        t = s.token[n - 1]
        add = s.newNodes[n - 1] - frozenset(t["nodelist"])
        nl = t["nodelist"] if not add else InsertAfter(t["nodelist"], n, tuple(sorted(add)))
        u = s._replace(
            newNodes=_set(s.newNodes, n, frozenset()),
            viewState=s.viewState if not add else _set(s.viewState, n, "Chaos"),
        )
        if len(nl) > 1:
            t2 = t.set("nodelist", nl).set("cur", n).set("dest", NextNode(nl, n))
            return u._replace(tokenMsgs=s.tokenMsgs | {t2}, token=_set(s.token, n, NO_TOKEN))
        return u

    def HungryTimeout(self, s, n: int):
        return self.ring_step(s, self.ring.HungryTimeout(self.ring_state(s), n)) if self.LossyRing else None

    def StarvingTimeout(self, s, n: int):
        return self.ring_step(s, self.ring.StarvingTimeout(self.ring_state(s), n)) if self.LossyRing else None

    def TokenLoss(self, s, m: Fn):
        return self.ring_step(s, self.ring.TokenLoss(self.ring_state(s), m)) if self.LossyRing else None

    # --- environment ----------------------------------------------------------------
    def CanCrash(self, s, p: int) -> bool:
        dead = self.Dead(s)
        return (
            self.Alive(s, p)
            and self.IsMember(s, p)
            and p in self.Crashable
            and len(dead) < self.MaxCrashes
            and bool(frozenset(s.views[-1]) - dead - {p})
            and (self.LossyRing or (not self.Eating(s, p) and all(m["cur"] != p for m in s.tokenMsgs)))
        )

    def Crash(self, s, p: int, greatest: bool = False):
        """All successors of Crash(p), one per cut of p's outgoing channels
        (with ``greatest``, the greatest cut's: see FlushModel.Cuts)."""
        if not self.CanCrash(s, p):
            return []
        base = self.RingCrash(s, p)
        return [base._replace(chan=self.Cut(s, p, cut)) for cut in self.Cuts(s, p, greatest)]

    def RingCrash(self, s, p: int):
        """The ring's part of Crash(p): p down; under LossyRing Raincore's Crash
        (the token p holds lost, Chaos, Starving) except that what p has in
        transit stays there (its Transport Manager may have confirmed it)."""
        if self.LossyRing:
            return self.ring_step(s, self.ring.Crash(self.ring_state(s), p)._replace(
                tokenMsgs=s.tokenMsgs, msgs911=s.msgs911))
        return s._replace(status=_set(s.status, p, "Down"))

    def CanLeave(self, s, p: int) -> bool:
        """LeaveSuspected(p)'s guard: a live node of Crashable (the spec keeps
        no record of which nodes were reported), outside the crash budget;
        without LossyRing, as in CanCrash, not with the token held or in transit."""
        return (
            self.FalseSuspicion and self.SuspectLeaves
            and self.Alive(s, p)
            and p in self.Crashable
            and (self.LossyRing or (not self.Eating(s, p) and all(m["cur"] != p for m in s.tokenMsgs)))
        )

    def LeaveSuspected(self, s, p: int, greatest: bool = False):
        """All successors of LeaveSuspected(p): Crash(p)'s, one per cut (with
        ``greatest``, the greatest cut's, as Crash)."""
        if not self.CanLeave(s, p):
            return []
        base = self.RingCrash(s, p)
        return [base._replace(chan=self.Cut(s, p, cut)) for cut in self.Cuts(s, p, greatest)]

    def CrashesOf(self, s, p: int):
        yield from FlushModel.CrashesOf(self, s, p)
        for t in self.LeaveSuspected(s, p):
            yield Label("LeaveSuspected", (p,)), t

    def Join(self, s, n: int):
        if not (n > self.NInit and s.status[n - 1] == "Off"):
            return None
        if self.LossyRing:
            return self.ring_step(s, self.ring.Join(self.ring_state(s), n))
        return s._replace(
            status=_set(s.status, n, "Up"),
            msgs911=s.msgs911 | {Msg911(n, n, NextNode(self.InitRing, n))},
        )

    # --- next -----------------------------------------------------------------------
    RECEIVE = ("Deliver", "Discard", "Block", "RestartFlush", "ReceiveFlushOk",
               "ReceiveFlushCompleted", "InstallView", "Unblock")
    SINGLE = ("EatingTimeout", "Multicast", "StartFlush", "FlushOk", "FlushCompleted", "SendView",
              "StopFlush", "Join")
    LOSSY = ("HungryTimeout", "StarvingTimeout")

    def next(self, s):
        for n in self.Members:
            yield from self.RingMessages(s, n)
            yield from self.Steps(s, n)
            if self.LossyRing:
                for name in self.LOSSY:
                    t = getattr(self, name)(s, n)
                    if t is not None:
                        yield Label(name, (n,)), t
        if self.LossyRing:
            for m in s.tokenMsgs:
                yield Label("TokenLoss", (m,)), self.TokenLoss(s, m)
        yield from self.Receives(s)

    def RingMessages(self, s, n: int):
        """n's ring message actions: TokenReceived and TokenDeliveryFailure
        of each token in transit (and of a LateFailure's), 911Received and
        911DeliveryFailure of each 911."""
        for m in s.tokenMsgs:
            for name, fn in (("TokenReceived", self.TokenReceived),
                             ("TokenDeliveryFailure", self.TokenDeliveryFailure)):
                t = fn(s, n, m)
                if t is not None:
                    yield Label(name, (n, m)), t
        if self.LateFailures and self.LateFailure(s, n, s.lastToken[n - 1]):
            t = self.TokenDeliveryFailure(s, n, s.lastToken[n - 1])
            if t is not None:
                yield Label("TokenDeliveryFailure", (n, s.lastToken[n - 1])), t
        for m in s.msgs911:
            for name, fn in (("911Received", self.Received911), ("911DeliveryFailure", self.DeliveryFailure911)):
                t = fn(s, n, m)
                if t is not None:
                    yield Label(name, (n, m)), t

    # --- invariants -------------------------------------------------------------------
    @property
    def invariants(self):
        return {
            **FlushModel.invariants.fget(self),   # FLUSH's, over this state (TypeOK: this model's)
            "AtMostOneToken": self.AtMostOneToken,
            "ConsistentHistory": self.ConsistentHistory,
            "ViewsFromRing": self.ViewsFromRing,
            "LegalStates": self.LegalStates,
            "SingleRegenerator": self.SingleRegenerator,
        }

    def _msg_ok(self, m) -> bool:
        """FLUSH's message shapes (model/flush.py), a VIEW with its ring number."""
        if isinstance(m, Fn) and m.get("type") == "VIEW":
            return isinstance(m.get("ring"), int) and FlushModel._msg_ok(self, m.restrict(set(m) - {"ring"}))
        return FlushModel._msg_ok(self, m)

    def TypeOK(self, s) -> bool:
        L = len(s.views)
        return (
            self.FlushTypeOK(s)
            and len(s.viewRing) == L and all(isinstance(i, int) and i >= 1 for i in s.viewRing)
            and self.RingTypeOK(s)
        )

    def RingTypeOK(self, s) -> bool:
        """The spec's RingTypeOK: the ring's part of TypeOK (RaincoreSequencerFlush's too)."""
        tok = {"nodelist", "cur", "dest", "gvn"} | ({"seq"} if self.LossyRing else set())
        m911 = {"orig", "cur", "dest"} | ({"nodelist", "seq", "status"} if self.LossyRing else set())
        M = set(self.Members)
        funcs = (s.status, s.viewState, s.globalView, s.localView, s.newNodes, s.token)
        return (
            all(len(f) == self.N for f in funcs)
            and all(x in ("Off", "Up", "Down") for x in s.status)
            and all(x in VIEW_STATES for x in s.viewState)
            and all(set(v) <= M for gv in s.globalView for v in gv)
            and all(set(lv) <= M for lv in s.localView)
            and all(nn <= M for nn in s.newNodes)
            and all(set(t) == tok for t in (*s.token, *s.tokenMsgs, *s.lastToken))
            and all(set(m) == m911 for m in s.msgs911)
            and all(x in TOKEN_STATES for x in s.tokenState)
            and (not self.LossyRing or all((s.tokenState[n - 1] == "Eating") == self.Eating(s, n)
                                           for n in self.Members if self.Alive(s, n)))
        )

    def AtMostOneToken(self, s) -> bool:
        eaters = sum(1 for n in self.Members if self.Alive(s, n) and self.Eating(s, n))
        # LossyRing: a stale token may be in transit (it will be dropped).
        return eaters <= 1 if self.LossyRing else eaters + len(s.tokenMsgs) <= 1

    def LegalStates(self, s) -> bool:
        return not self.LossyRing or self.ring.LegalStates(self.ring_state(s))

    def SingleRegenerator(self, s) -> bool:
        return not self.LossyRing or self.ring.SingleRegenerator(self.ring_state(s))

    def Failed(self, s) -> frozenset:
        """The members the properties count as crashed (the spec's Failed): the
        dead, and under ShunSuspected the members the latest view leaves out."""
        if not self.ShunSuspected:
            return self.Dead(s)
        return self.Dead(s) | {p for p in self.Members if self.At(s.vid, p) >= 1 and p not in s.views[-1]}

    def ViewAfterAllCompleted(self, s) -> bool:
        """Flush.tla's with the failed members as its crashed (the spec's FP)."""
        failed = self.Failed(s)
        if failed != self.Dead(s):
            s = s._replace(status=tuple("Down" if p in failed else x for p, x in enumerate(s.status, start=1)))
        return FlushModel.ViewAfterAllCompleted(self, s)

    def ConsistentHistory(self, s) -> bool:
        for gm in s.globalView:
            for gn in s.globalView:
                for a, b in zip(gm, gn):
                    if a != NULL_VIEW and b != NULL_VIEW and a != b:
                        return False
        return True

    def RingIndex(self, s, S: frozenset) -> set:
        return {i for gv in s.globalView for i, v in enumerate(gv, start=1) if v != NULL_VIEW and frozenset(v) == S}

    def ViewsFromRing(self, s) -> bool:
        # FLUSH's views a subsequence of the ring's commits: each takes the
        # least ring number above its predecessor's (a set may be committed twice)
        prev = 0
        for v in s.views:
            above = [i for i in self.RingIndex(s, frozenset(v)) if i > prev]
            if not above:
                return False
            prev = min(above)
        return True

    # --- scripted runs (tests) --------------------------------------------------------
    def step(self, s, action: str, *params: Any):
        """The successor by the named action instance; raises if not enabled."""
        for lab, t in self.next(s):
            if lab.action == action and lab.params[: len(params)] == params:
                return t
        raise ValueError(f"{action}{params} is not enabled")
