"""Python mirror of spec/SequencerFlush/SequencerFlush.tla.

Theory of operation
-------------------
SEQUENCER (seeds/000) whose view changes go through the four-phase FLUSH of
seeds/003 (the fixed form of spec/Flush, with digest reconciliation).  The
SEQUENCER actions are those of :mod:`groupcheck.model.sequencer` (Send,
RecvForward, RecvData, Crash) with three changes: the application's Send
waits while the flush latch is closed; DATA carries the view it was
multicast in, and DATA of an older view is dropped; each member keeps
``log``, the DATA of its view it multicast or took (its NAKACK window, sent
as its digest in FLUSH_COMPLETED).  Views are no longer decided by an
oracle: after a crash the first live member of the latest view runs the
flush (StartFlush ... FlushCompleted, as in :mod:`groupcheck.model.flush`),
sends the view with the longest live digest (SendView), and every member
takes the digest's DATA through RecvData's duplicate check before it
installs the view (``Moved``: SEQUENCER's received-table trim and
forward-table resend).  ``closed`` records the delivery count at each view
change, for VirtualSynchrony.

This module is the spec transcribed variable for variable and action for
action (same names, same parameters, same guards, same successor values),
SEQUENCER's actions called from :mod:`.sequencer` with what the
composition adds and FLUSH's those of :mod:`.flush` (as the spec takes
Flush.tla's steps through INSTANCE), so that the explorer's state graph
equals TLC's (``explore --compare-tlc``).
Per-member variables are ``Fn`` over ``1..N`` (TLC prints them as tuples;
``values.normalize`` does the same); ``chan`` is an ``Fn`` over pairs.
"""

from __future__ import annotations

from typing import NamedTuple

from .core import Label, state_type
from .flush import FLUSH_TYPES, NO_INIT, PHASES, FlushModel, LastView, ViewMsg
from .sequencer import Forward, SequencerModel, SequencerState, TotalOrderAmong
from .values import Fn, record

MSG_TYPES = FLUSH_TYPES | {"FORWARD", "DATA", "VIEW"}


SequencerFlushState = state_type(NamedTuple("SequencerFlushState", [
    # SEQUENCER's variables (DATA carries its view) but coord and holes:
    # without JGroups's deviations they are the view's first member and empty
    *((k, v) for k, v in SequencerState.__annotations__.items() if k not in ("coord", "holes")),
    ("log", Fn),         # member -> tuple of (sender, seqno): DATA of its view it sent or took
    ("closed", Fn),      # member -> tuple: Len(delivered) at each view change
    ("phase", Fn),       # member -> one of PHASES
    ("blocked", Fn),     # member -> bool: the send latch is closed
    ("flushInit", Fn),   # member -> initiator it follows (0: none)
    ("flushOks", Fn),    # member -> frozenset of members
    ("completed", Fn),   # member -> frozenset of (member, digest tuple)
    ("ndel", Fn),        # member -> entries of its log taken through the duplicate check (UniformDelivery)
]))


# --- messages (same constructors as the spec) -----------------------------------
def Data(s: int, q: int, v: int) -> Fn:
    return record(type="DATA", sender=s, seqno=q, view=v)


def Longest(digests) -> tuple:
    """CHOOSE d \\in S : \\A e \\in S : Len(e) <= Len(d).  The candidates must
    be equal (LogsAgree makes them prefixes of one another), otherwise TLC's
    choice cannot be mirrored: refuse rather than guess."""
    n = max(len(d) for d in digests)
    best = {d for d in digests if len(d) == n}
    if len(best) != 1:
        raise ValueError(f"Longest: several longest digests {sorted(best)}")
    return next(iter(best))


def IsPrefix(a: tuple, b: tuple) -> bool:
    return len(a) <= len(b) and b[: len(a)] == a


# --- properties (functions of the state, as in the spec) ----------------------------
def DeliveredIn(s, m: int, v: int) -> frozenset:
    lo = 0 if v == 1 else s.closed[m][v - 2]
    return frozenset(s.delivered[m][lo: s.closed[m][v - 1]])


def VirtualSynchrony(s) -> bool:
    for v in range(1, len(s.views)):
        both = set(s.views[v - 1]) & set(s.views[v])
        movers = [m for m in both if s.vid[m] > v]
        sets = {DeliveredIn(s, m, v) for m in movers}
        if len(sets) > 1:
            return False
    return True


def LogsAgree(s) -> bool:
    ms = list(s.log)
    for p in ms:
        for q in ms:
            if s.vid[p] == s.vid[q] and not (IsPrefix(s.log[p], s.log[q]) or IsPrefix(s.log[q], s.log[p])):
                return False
    return True


def LogsAgreeKept(s, t) -> bool:
    """LogsAgree(t) is LogsAgree(s), known without walking the logs (for a
    replay that judges it after every step of a long run).  True when no
    vid changed and the step appended one entry ``x`` at index ``k`` to one
    member's log (the model's steps only append to a log, or empty it with
    a new vid) and every other log of that vid long enough to hold an
    entry ``k`` holds ``x`` there: an agreement then stays one and a
    disagreement, which appends cannot mend, stays too."""
    if s.vid != t.vid:
        return False
    if s.log is t.log:
        return True
    changed = [p for p in t.log if t.log[p] is not s.log[p]]
    if len(changed) != 1:
        return False
    p = changed[0]
    k = len(s.log[p])
    if len(t.log[p]) != k + 1:
        return False
    x = t.log[p][k]
    return all(len(t.log[q]) <= k or t.log[q][k] == x for q in t.log if q != p and t.vid[q] == t.vid[p])


class SequencerFlushModel(FlushModel):
    """SEQUENCER's Send, RecvForward and RecvData are
    :class:`.sequencer.SequencerModel`'s, called on this state, plus what
    the composition adds (the latch, the view in DATA, the log).  FLUSH's
    actions are :class:`.flush.FlushModel`'s, over this state's Fn-valued
    per-member variables (At, Put), with the log as digest (Digest, and no
    ``digest`` variable), the longest digest sent (Merged) and SEQUENCER's
    view change as the digest's reconciliation (Reconciled: Moved).  The
    failure detector is read through ``Dead``, ``Gone`` and ``CanReceive``
    and SendView's view through ``NextView``, which RaincoreSequencerFlush
    replaces by the ring's."""

    protocol = "sequencerflush"
    variables = SequencerFlushState._fields
    # SEQUENCER's fixes that are not this spec's (its RecvForward never waits,
    # its RecvData always acknowledges the sender's own FORWARD)
    KeepForward = RetainForward = False
    # nor JGroups's deviations (a composition whose __init__ does not run
    # SequencerModel's, as RaincoreSequencerFlush's, reads these)
    SuspectResend = FillGaps = SeparateChannels = False
    # FLUSH's fixed variant, with its FLUSH_OK round
    ReconcileDigests = FlushOkRound = True
    # FLUSH's application and its properties over sets of ids are not this spec's
    Multicast = Deliver = SentIn = NoSendWhileBlocked = ViewAfterAllCompleted = None

    def __init__(self, constants):
        SequencerModel.__init__(self, constants)   # N, MaxSeq, MaxCrashes, Members, pairs
        del self.KeepForward, self.RetainForward   # this spec's: FALSE (above), whatever the constants say
        self.Senders = frozenset(constants["Senders"])
        self.UniformDelivery = bool(constants["UniformDelivery"])
        self.ResendAlways = bool(constants["ResendAlways"])
        # Absent (a header or test written before the fix) means the seed's behaviour.
        self.ResentFirst = bool(constants.get("ResentFirst", False))

    # --- helpers (same names as the spec's operators) -------------------------
    View = SequencerModel.View
    Coord = SequencerModel.Coord
    Taking = SequencerModel.Taking
    IsCoord = SequencerModel.IsCoord
    Dead = staticmethod(SequencerModel.Dead)
    CanReceive = Alive = staticmethod(SequencerModel.CanReceive)
    SendTo = SequencerModel.SendTo
    Head = SequencerModel.Head
    DeliveredIn = staticmethod(DeliveredIn)
    VirtualSynchrony = staticmethod(VirtualSynchrony)
    LogsAgree = staticmethod(LogsAgree)

    # FLUSH's operators, on this state (Gone: the crashed members)
    IsInitiator = FlushModel.IsCoord   # the least member of Staying

    @staticmethod
    def At(f: Fn, p: int):
        return f[p]

    @staticmethod
    def Put(f: Fn, p: int, x) -> Fn:
        return f.set(p, x)

    @staticmethod
    def Digest(s, p: int) -> tuple:
        return s.log[p]

    @staticmethod
    def SetDigest(s, p: int, d) -> dict:
        return {}

    Merged = staticmethod(Longest)

    @staticmethod
    def Staying(s) -> set:
        return set(s.views[-1]) - s.crashed

    @staticmethod
    def ViewChangePending(s, c: int | None = None) -> bool:
        return any(x in s.crashed for x in s.views[-1])

    def McastData(self, s, ch: Fn, c: int, snd: int, q: int) -> Fn:
        msg = Data(snd, q, s.vid[c])
        dead = self.Dead(s)
        return ch.update({(c, r): ch[(c, r)] + (msg,) for r in self.View(s, c) if r not in dead})

    def Purged(self, ch: Fn, p: int, v: int) -> Fn:
        upd = {}
        for q in self.Members:
            seq = ch[(q, p)]
            kept = tuple(x for x in seq if x["type"] == "FORWARD" or x["view"] > v)
            if len(kept) != len(seq):
                upd[(q, p)] = kept
        return ch.update(upd) if upd else ch

    @staticmethod
    def Absorb(m: int, recv: Fn, delivered: tuple, fwd: frozenset, ds: tuple):
        for snd, q in ds:
            dup = snd in recv and q <= recv[snd]
            if not dup:
                recv = recv.set(snd, q)
                delivered = delivered + ((snd, q),)
            if snd == m:
                fwd = fwd - {q}
        return recv, delivered, fwd

    def Moved(self, s, m: int, new: tuple, D: tuple, ch: Fn) -> dict:
        """The primed SEQUENCER variables of m's view change (a dict for _replace)."""
        recv, delivered, fwd = self.Absorb(m, s.recv[m], s.delivered[m], s.fwd[m], D)
        nc = new[0]
        pch = self.Purged(ch, m, s.vid[m])
        if (self.View(s, m)[0] != nc or self.ResendAlways) and nc not in self.Dead(s):
            pch = pch.set((m, nc), pch[(m, nc)] + tuple(Forward(m, q) for q in sorted(fwd)))
        out = dict(
            recv=s.recv.set(m, recv.restrict(set(recv) & set(new))),
            delivered=s.delivered.set(m, delivered),
            fwd=s.fwd.set(m, fwd),
            closed=s.closed.set(m, s.closed[m] + (len(delivered),)),
            log=s.log.set(m, ()),
            chan=pch,
        )
        if "ndel" in self.variables:   # UniformDelivery's (not in RaincoreSequencerFlush)
            out["ndel"] = s.ndel.set(m, 0)
        return out

    # --- Init -----------------------------------------------------------------
    def init(self):
        (s,) = SequencerModel.init(self)   # SEQUENCER's start: views .. chan (no coord, holes)
        M = self.Members
        yield SequencerFlushState(
            *s[:s._fields.index("coord")],
            log=Fn({m: () for m in M}),
            closed=Fn({m: () for m in M}),
            phase=Fn({m: "Normal" for m in M}),
            blocked=Fn({m: False for m in M}),
            flushInit=Fn({m: NO_INIT for m in M}),
            flushOks=Fn({m: frozenset() for m in M}),
            completed=Fn({m: frozenset() for m in M}),
            ndel=Fn({m: 0 for m in M}),
        )

    # --- SEQUENCER --------------------------------------------------------------
    @staticmethod
    def ResentPending(s, m: int) -> bool:
        return any(x["type"] == "FORWARD" for x in s.chan[(m, m)])

    def Send(self, s, m: int):
        """SEQUENCER's Send, held while the latch is closed (and, ResentFirst,
        while m's resent FORWARDs wait); the coordinator logs its DATA."""
        if m not in self.Senders or s.blocked[m] or (self.ResentFirst and self.ResentPending(s, m)):
            return None
        t = SequencerModel.Send(self, s, m)
        if t is not None and self.IsCoord(s, m):
            t = t._replace(log=s.log.set(m, s.log[m] + ((m, t.sent[m]),)))
        return t

    def RecvForward(self, s, c: int, p: int):
        """SEQUENCER's RecvForward; the coordinator logs the DATA it multicasts."""
        t = SequencerModel.RecvForward(self, s, c, p)
        if t is not None and self.IsCoord(s, c):
            msg = self.In(s, c, p)
            t = t._replace(log=s.log.set(c, s.log[c] + ((msg["sender"], msg["seqno"]),)))
        return t

    def RecvData(self, s, m: int, p: int):
        """SEQUENCER's RecvData for DATA of m's view while m's flush has not
        completed (UniformDelivery: taken into the log only, delivered by
        DeliverStable); a member logs the DATA it takes from another."""
        if not (self.CanReceive(s, m) and self.HasMsg(s, m, p)):
            return None
        msg = self.In(s, m, p)
        if msg["type"] != "DATA" or msg["view"] != s.vid[m] or s.phase[m] == "Completed":
            return None
        if self.UniformDelivery:
            t = s._replace(chan=self.Take(s, m, p))
        else:
            t = SequencerModel.RecvData(self, s, m, p)
        if p != m:
            t = t._replace(log=s.log.set(m, s.log[m] + ((msg["sender"], msg["seqno"]),)))
        return t

    def Stable(self, s, m: int, i: int) -> bool:
        dead = self.Dead(s)
        return all(s.vid[r] == s.vid[m] and len(s.log[r]) >= i for r in self.View(s, m) if r not in dead)

    def DeliverStable(self, s, m: int):
        if not self.UniformDelivery or not self.CanReceive(s, m) or s.phase[m] == "Completed":
            return None
        k = s.ndel[m]
        if k >= len(s.log[m]) or not self.Stable(s, m, k + 1):
            return None
        recv, delivered, fwd = self.Absorb(m, s.recv[m], s.delivered[m], s.fwd[m], (s.log[m][k],))
        return s._replace(recv=s.recv.set(m, recv), delivered=s.delivered.set(m, delivered),
                          fwd=s.fwd.set(m, fwd), ndel=s.ndel.set(m, k + 1))

    def Discard(self, s, p: int, q: int):
        """FLUSH's Discard, never of a FORWARD (which carries no view)."""
        if self.HasMsg(s, p, q) and self.In(s, p, q)["type"] == "FORWARD":
            return None
        return FlushModel.Discard(self, s, p, q)

    # --- FLUSH: FlushModel's actions (StartFlush ... Unblock), with these -----------
    def NextView(self, s, c: int, v: int, D: tuple):
        """SendView's view: (the new view, whom the VIEW goes to, the VIEW,
        the other variables it changes); None when SendView waits."""
        return tuple(x for x in s.views[v - 1] if x not in s.crashed), s.views[v - 1], ViewMsg(v, D), {}

    def Reconciled(self, s, p: int, v: int, new: tuple, D: tuple, ch: Fn) -> dict:
        """p's view change from view v to v + 1, ``new``: SEQUENCER's (Moved);
        a joiner (vid 0, RaincoreSequencerFlush's) takes no digest, its
        ``closed`` 0 for the views before it."""
        if s.vid[p] == 0:
            return {"closed": s.closed.set(p, (0,) * v), "chan": ch}
        return self.Moved(s, p, new, D, ch)

    # --- environment --------------------------------------------------------------
    def Crash(self, s, m: int, lost: frozenset):
        if m in s.crashed or len(s.crashed) >= self.MaxCrashes:
            return None
        return s._replace(crashed=s.crashed | {m}, chan=self.CrashChan(s, m, lost, FLUSH_TYPES))

    def CrashChan(self, s, m: int, lost: frozenset, drop) -> Fn:
        """Crash(m, lost)'s channels: every channel into m emptied, m's to a
        member of ``lost`` cut after their last VIEW, and the message types
        ``drop`` taken out of m's."""
        upd = {}
        for e in self.pairs:
            seq = s.chan[e]
            if e[1] == m:
                upd[e] = ()
            elif e[0] == m:
                if e[1] in lost:
                    seq = seq[: LastView(seq)]
                upd[e] = tuple(x for x in seq if x["type"] not in drop) if drop else seq
        return s.chan.update(upd)

    SINGLE = ("Send", "DeliverStable", "StartFlush", "FlushOk", "FlushCompleted", "SendView", "StopFlush")
    RECEIVE = ("RecvForward", "RecvData", "Discard", "Block", "RestartFlush", "ReceiveFlushOk",
               "ReceiveFlushCompleted", "InstallView", "Unblock")
    Crashes = SequencerModel.Crashes

    def next(self, s):
        M = self.Members
        for name in self.SINGLE:
            act = getattr(self, name)
            for m in M:
                t = act(s, m)
                if t is not None:
                    yield Label(name, (m,)), t
        yield from self.Receives(s)
        yield from self.Crashes(s)

    # --- properties -----------------------------------------------------------
    @property
    def invariants(self):
        seq = SequencerModel.invariants.fget(self)   # SEQUENCER's, over this state
        return {
            **{n: seq[n] for n in ("TypeOK", "NoDuplicates", "Integrity", "SenderFIFO", "TotalOrder")},
            "SurvivorTotalOrder": self.SurvivorTotalOrder,
            "VirtualSynchrony": VirtualSynchrony,
            "LogsAgree": LogsAgree,
            **{n: seq[n] for n in ("GapFreeFIFO", "NothingMissing")},
        }

    def Quiescent(self, s) -> bool:
        """No protocol action is enabled (the spec's Quiescent)."""
        live = [m for m in self.Members if m not in s.crashed]
        return (
            all(not s.chan[e] for e in self.pairs)
            and all(s.vid[m] == len(s.views) and s.phase[m] == "Normal" and not s.blocked[m]
                    and s.flushInit[m] == NO_INIT for m in live)
            and all(s.ndel[m] == len(s.log[m]) for m in live if self.UniformDelivery)
            and not self.ViewChangePending(s)
        )

    NothingMissing = SequencerModel.NothingMissing

    def SurvivorTotalOrder(self, s) -> bool:
        """SurvivorTotalOrder among the members not Failed: here the dead
        (RaincoreSequencerFlush's: also those its latest view shuns)."""
        failed = self.Failed(s)
        return TotalOrderAmong(d for m, d in s.delivered.items() if m not in failed)

    Failed = Dead

    def TypeOK(self, s) -> bool:
        M = set(self.Members)
        return (
            self.SeqFlushTypeOK(s)
            and all(1 <= s.vid[m] <= len(s.views) for m in M)
            and s.crashed <= M
            and all(len(s.closed[m]) == s.vid[m] - 1 for m in M)
            and all(isinstance(s.ndel[m], int) and s.ndel[m] >= 0 for m in M)
        )

    def SeqFlushTypeOK(self, s) -> bool:
        """TypeOK's conjuncts over the SEQUENCER and FLUSH variables but
        ``vid`` and ``closed`` (whose ranges a joiner changes): a
        composition's TypeOK conjoins them with its own."""
        M = set(self.Members)
        seqs = range(0, self.MaxSeq + 1)
        ids = set(range(1, self.MaxSeq + 1))
        return (
            all(set(v) <= M for v in s.views)
            and all(s.sent[m] in seqs for m in M)
            and all(s.fwd[m] <= ids for m in M)
            and all(set(s.recv[m]) <= M and all(x in seqs for x in s.recv[m].values()) for m in M)
            and all(x in M and q in ids for m in M for x, q in s.delivered[m])
            and all(x in M and q in ids for m in M for x, q in s.log[m])
            and all(msg["type"] in MSG_TYPES for e in self.pairs for msg in s.chan[e])
            and all(s.phase[m] in PHASES for m in M)
            and all(isinstance(s.blocked[m], bool) for m in M)
            and all(s.flushInit[m] in M | {NO_INIT} for m in M)
            and all(s.flushOks[m] <= M for m in M)
            and all(r[0] in M for c in M for r in s.completed[c])
        )
