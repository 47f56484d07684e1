"""Python mirror of spec/RaincoreSequencerFlush/RaincoreSequencerFlush.tla.

Theory of operation
-------------------
SEQUENCER over FLUSH (:mod:`.sequencerflush`) whose membership is the
Raincore token ring, as :mod:`.raincoreflush` does it for FLUSH alone: the
view the flush initiator installs is the ring's committed view (sorted, so
that SEQUENCER's coordinator, the first member of a view, is its smallest
member); a member counts gone exactly the members of its view its ring
``localView`` no longer lists (``Gone``), which replaces every use of the
perfect failure detector ``crashed``; a joiner enters through the 911 path.

The ring part (variables as tuples over ``1..N``, the actions TokenReceived,
911Received, TokenDeliveryFailure, 911DeliveryFailure, EatingTimeout, Join,
under ``LossyRing`` Raincore's timeouts, TokenLoss and the bound on token
sequence numbers, ``MaxTokenSeq`` here since ``MaxSeq`` is SEQUENCER's) and
its failure detector (Dead, Alive, Gone, ViewChangePending, the ring's
view in NextView) are :class:`.raincoreflush.RaincoreFlushModel`'s; the
SEQUENCER and FLUSH actions and properties are
:class:`.sequencerflush.SequencerFlushModel`'s, which read the failure
detector only through those operators (a joiner's first VIEW included:
SequencerFlush's Reconciled).  What this spec adds is here: Crash (the
ring's), the order of Next, TypeOK.
Per-member SEQUENCER and FLUSH variables are ``Fn`` over ``1..N`` as in
:mod:`.sequencerflush` (TLC prints them as tuples).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from .core import Label, state_type
from .flush import FlushModel
from .raincoreflush import RING_VARS, RaincoreFlushModel, RaincoreFlushState
from .sequencer import subsets
from .sequencerflush import SequencerFlushModel, SequencerFlushState
from .values import Fn


RaincoreSequencerFlushState = state_type(NamedTuple("RaincoreSequencerFlushState", [
    # SEQUENCER over FLUSH (SequencerFlush.tla without crashed and ndel): views
    # are sorted tuples, vid is 0 before a joiner's first view
    *((v, t) for v, t in SequencerFlushState.__annotations__.items() if v not in ("crashed", "ndel")),
    ("viewRing", tuple),   # viewRing[i-1]: the ring's number of view i (RaincoreFlush's)
    # the ring (RaincoreFlush.tla's)
    *((v, t) for v, t in RaincoreFlushState.__annotations__.items() if v in RING_VARS),
]))


class RaincoreSequencerFlushModel(SequencerFlushModel, RaincoreFlushModel):
    """SequencerFlush's actions and properties over this state, with
    RaincoreFlush's ring: the ring's actions, its failure detector (Dead,
    Alive, Gone) and its view (NextView) replace SequencerFlush's."""

    protocol = "raincoresequencerflush"
    variables = RaincoreSequencerFlushState._fields
    UniformDelivery = False   # SequencerFlush's constant; not this spec's
    # RaincoreFlush's failure detector and membership, not SequencerFlush's
    Dead = RaincoreFlushModel.Dead
    Alive = staticmethod(RaincoreFlushModel.Alive)
    CanReceive = FlushModel.CanReceive
    ViewChangePending = RaincoreFlushModel.ViewChangePending
    IsInitiator = RaincoreFlushModel.IsCoord   # the least member of its view it does not count gone
    Failed = RaincoreFlushModel.Failed   # also the members the latest view shuns (ShunSuspected)

    def __init__(self, constants: Mapping[str, Any]) -> None:
        c = dict(constants)
        c.setdefault("MaxMsgs", 0)  # RaincoreFlushModel's constructor reads it; unused here
        # MCRaincoreSequencerFlushLossy's bound on token sequence numbers is
        # MCRaincoreFlushLossy's MaxSeq, here SEQUENCER's sends per sender
        RaincoreFlushModel.__init__(self, {**c, "MaxSeq": c.get("MaxTokenSeq")})
        self.constants = dict(constants)
        self.TimelyTimeouts = bool(c.get("TimelyTimeouts", True))   # LossyRing's (the ring reads it)
        self.MaxSeq = int(c["MaxSeq"])
        self.Senders = frozenset(c["Senders"])
        self.ResendAlways = bool(c["ResendAlways"])
        self.ResentFirst = bool(c["ResentFirst"])

    # --- helpers (the spec's operators) ---------------------------------------------
    def NextView(self, s, c: int, v: int, D: tuple):
        """RaincoreFlush's: the ring's commit, sorted (SEQUENCER's coordinator is its smallest member)."""
        nxt = RaincoreFlushModel.NextView(self, s, c, v, D)
        if nxt is None:
            return None
        new, R, msg, more = nxt
        return tuple(sorted(new)), R, msg, more

    # --- init -------------------------------------------------------------------
    def init(self):
        (r,) = RaincoreFlushModel.init(self)  # the ring's steady start, RaincoreFlush's
        (f,) = SequencerFlushModel.init(self)
        # SequencerFlush's start, its first view the initial ring (a joiner: vid 0)
        f = f._replace(views=(self.InitRing,), vid=Fn({m: int(m <= self.NInit) for m in self.Members}))
        yield RaincoreSequencerFlushState(**{v: getattr(r if v in RING_VARS or v == "viewRing" else f, v)
                                             for v in RaincoreSequencerFlushState._fields})

    # --- what the ring adds (a joiner's first VIEW: SequencerFlush's Reconciled) ----------
    def Crash(self, s, m: int, lost: frozenset):
        if not self.CanCrash(s, m):
            return None
        return self.RingCrash(s, m)._replace(chan=self.CrashChan(s, m, lost, ()))

    # --- next -----------------------------------------------------------------------
    SINGLE = ("EatingTimeout", "Send", "StartFlush", "FlushOk", "FlushCompleted", "SendView", "StopFlush", "Join")
    next = RaincoreFlushModel.next   # the ring's messages and, per node, its steps, LossyRing's timeouts

    def CrashesOf(self, s, n: int):
        if self.CanCrash(s, n):
            for lost in subsets(set(self.Members) - {n}):
                yield Label("Crash", (n, lost)), self.Crash(s, n, lost)
        if self.CanLeave(s, n):
            for lost in subsets(set(self.Members) - {n}):
                yield Label("LeaveSuspected", (n, lost)), self.LeaveSuspected(s, n, lost)

    def LeaveSuspected(self, s, m: int, lost: frozenset):
        """RaincoreFlush's LeaveSuspected: Crash(m, lost)'s successor without CanCrash."""
        if not self.CanLeave(s, m):
            return None
        return self.RingCrash(s, m)._replace(chan=self.CrashChan(s, m, lost, ()))

    # --- properties -------------------------------------------------------------------
    @property
    def invariants(self):
        seq = SequencerFlushModel.invariants.fget(self)
        return {
            **{name: seq[name] for name in ("TypeOK", "NoDuplicates", "Integrity", "SenderFIFO", "SurvivorTotalOrder",
                                            "VirtualSynchrony", "LogsAgree")},
            "AtMostOneToken": self.AtMostOneToken,
            "ConsistentHistory": self.ConsistentHistory,
            "ViewsFromRing": self.ViewsFromRing,
            "LegalStates": self.LegalStates,
            "SingleRegenerator": self.SingleRegenerator,
        }

    def TypeOK(self, s) -> bool:
        M = set(self.Members)
        L = len(s.views)
        return (
            L >= 1
            and self.SeqFlushTypeOK(s)
            and len(s.viewRing) == L and all(isinstance(i, int) and i >= 1 for i in s.viewRing)
            and all(0 <= s.vid[m] <= L for m in M)
            and all(len(s.closed[m]) == max(s.vid[m] - 1, 0) for m in M)
            and self.RingTypeOK(s)
        )
