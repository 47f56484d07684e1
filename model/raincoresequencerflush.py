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
from .raincore import NULL_VIEW
from .raincoreflush import RING_VARS, RaincoreFlushKernel, RaincoreFlushModel, RaincoreFlushState
from .sequencer import _subsets
from .sequencerflush import (_CHAN, _CRASHED, _NDEL, _VID, _VIEWS, VIEW,
                             SequencerFlushKernel, SequencerFlushModel, SequencerFlushState)
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
            for lost in _subsets(set(self.Members) - {n}):
                yield Label("Crash", (n, lost)), self.Crash(s, n, lost)
        if self.CanLeave(s, n):
            for lost in _subsets(set(self.Members) - {n}):
                yield Label("LeaveSuspected", (n, lost)), self.LeaveSuspected(s, n, lost)

    def LeaveSuspected(self, s, m: int, lost: frozenset):
        """RaincoreFlush's LeaveSuspected: Crash(m, lost)'s successor without CanCrash."""
        if not self.CanLeave(s, m):
            return None
        return self.RingCrash(s, m)._replace(chan=self.CrashChan(s, m, lost, ()))

    # The methods RaincoreSequencerFlushKernel transcribes (see RaincoreFlushModel's).
    _KERNEL_TRANSCRIBES = ("init", "next", "constraint", "View", "IsCoord", "ViewChangePending", "SendTo", "Head",
                           "McastData", "Moved", "Absorb", "Purged", "LastGlobalView", "Eating", "ResentPending",
                           "CanCrash", "Crash", "CrashChan", "RingCrash", "RingMessages", "Steps", "CrashesOf",
                           "Receives", *FlushModel.FLUSH_READS, *SINGLE, *SequencerFlushModel.RECEIVE)

    def kernel(self):
        if self.untranscribed():
            return None
        return self.transcribed_kernel(RaincoreSequencerFlushModel, RaincoreSequencerFlushKernel)

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


# --- the explorer's fast encoding (model/core.py's Kernel) ------------------------
# kernel slots: SequencerFlushKernel's, with viewRing in crashed's slot and
# the ring (the model's ring variables, a tuple) in ndel's, the last
_VIEWRING, _RING = _CRASHED, _NDEL


class RaincoreSequencerFlushKernel(RaincoreFlushKernel):
    """``RaincoreSequencerFlushModel``'s actions over a lean encoding: the
    ring as :class:`.raincoreflush.RaincoreFlushKernel` does it (once per
    ring value, by the model's methods), the SEQUENCER and FLUSH variables
    and actions as :class:`.sequencerflush.SequencerFlushKernel` does them,
    called with the ring's failure detector (Alive, Dead, Gone, the ring's
    pending view change) and SendView's view the ring's commit."""

    _state_type = RaincoreSequencerFlushState
    _SLOTS = tuple("viewRing" if i == _VIEWRING else None if i == _RING else v
                   for i, v in enumerate(SequencerFlushKernel._SLOTS))
    _RAW = SequencerFlushKernel._RAW
    _HAS_NDEL = False
    # SequencerFlush's messages, the VIEW with its ring number (RaincoreFlush's)
    _make = RaincoreFlushKernel._make_ring_view
    _encode_msg = RaincoreFlushKernel._encode_ring_view
    _encode = SequencerFlushKernel._encode
    _field = SequencerFlushKernel._field
    _absorb = SequencerFlushKernel._absorb
    _moved = SequencerFlushKernel._moved
    _steps = SequencerFlushKernel._steps


    def __init__(self, model: RaincoreSequencerFlushModel) -> None:
        super().__init__(model)
        M = model.Members
        self.L["Crash"] = [[Label("Crash", (m, lost)) for lost in _subsets(set(M) - {m})] for m in M]
        self._memo: list[dict] = [{} for _ in range(_RING)]
        self._rows: dict = {}

    # --- encoding ---------------------------------------------------------------
    def encode(self, s) -> tuple:
        return (*(self._encode(name, getattr(s, name)) for name in self._SLOTS[:_RING]), self._encode_ring(s))

    def decode(self, k: tuple):
        return tuple.__new__(RaincoreSequencerFlushState,
                             (*(self._field(i, k[i]) for i in range(_RING) if i != _VIEWRING), k[_VIEWRING],
                              *self._ring_values(k[_RING])))

    # --- helpers over kernel states ---------------------------------------------
    def _next_view(self, s: list, k: tuple, i: int, old: tuple, ctx):
        """NextView: the ring's commit, sorted, sent to the old view and the new one with its ring number."""
        lgv, lidx = ctx
        new = tuple(sorted(set(lgv[i])))
        s[_VIEWS] = k[_VIEWS] + (new,)
        s[_VIEWRING] = k[_VIEWRING] + (lidx[i],)
        return new, set(old) | set(new), (lidx[i],)

    def _crashes(self, k: tuple, m: int, ring2: tuple) -> list:
        """Crash(m, lost) for every ``lost`` (the ring part given)."""
        chan = k[_CHAN]
        N = self.N
        i = m - 1
        base = list(chan)
        for x in range(i, N * N, N):   # every channel into m
            base[x] = ()
        out = []
        for lab in self.L["Crash"][i]:
            ch = base[:]
            for q in lab.params[1]:
                j = i * N + q - 1
                seq = chan[j]
                last = 0
                for x, msg in enumerate(seq, start=1):
                    if msg[0] == VIEW:
                        last = x
                ch[j] = seq[:last]
            out.append((lab, k[:_CHAN] + (tuple(ch),) + k[_CHAN + 1:_RING] + (ring2,)))
        return out

    # --- Next -----------------------------------------------------------------
    def next(self, k: tuple):
        views, vid, viewRing = k[_VIEWS], k[_VID], k[_VIEWRING]
        model = self.model
        msg_ops, eat, join, lossy, crash, loss, alive, dead, lv, lgv, lidx = self._ring(k[_RING])
        out = []
        add = out.append
        head = k[:_RING]
        last = frozenset(views[-1])
        up, gone, pending, fresh = [], [], [], []
        for n in model.Members:
            i = n - 1
            for lab, r2 in msg_ops[i]:
                add((lab, head + (r2,)))
            if eat[i]:
                add((eat[i][0], head + (eat[i][1],)))
            if join[i]:
                add((join[i][0], head + (join[i][1],)))
            v = vid[i]
            member = v >= 1 and n in views[v - 1]
            # Crash(n, lost)
            if crash[i] is not None and member and last - dead - {n}:
                out.extend(self._crashes(k, n, crash[i]))
            for lab, r2 in lossy[i]:   # LossyRing's timeouts
                add((lab, head + (r2,)))
            u = alive[i] and member   # CanReceive(n)
            up.append(u)
            gone.append(frozenset(views[v - 1]) - lv[i] if u else None)
            f = u and (not model.NewerViewsOnly or lidx[i] > viewRing[v - 1])   # NewerRingView(n)
            fresh.append(f)
            pending.append(f and lgv[i] != NULL_VIEW and frozenset(lgv[i]) != last)
        for lab, r2 in loss:   # LossyRing's TokenLoss
            add((lab, head + (r2,)))
        self._steps(k, add, up, alive, dead, gone, pending, fresh, (lgv, lidx))
        return out
