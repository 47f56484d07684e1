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
equals TLC's (``explore --compare-tlc``; ``SequencerFlushKernel``, at
the end, is the same transition system over a
leaner encoding, which the explorer searches; see its docstring).
Per-member variables are ``Fn`` over ``1..N`` (TLC prints them as tuples;
``values.normalize`` does the same); ``chan`` is an ``Fn`` over pairs.
"""

from __future__ import annotations

from typing import NamedTuple

from .core import Kernel, Label, state_type
from .flush import (FLUSH_TYPES, NO_INIT, PHASES, FlushCompletedMsg, FlushModel, FlushOkMsg, LastView,
                    StartFlushMsg, StopFlushMsg, ViewMsg)
from .sequencer import Forward, SequencerModel, SequencerState, TotalOrderAmong, _subsets, decode_recv
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

    # --- the explorer's fast encoding ------------------------------------------
    # The methods a kernel transcribes: a subclass that overrides one of them
    # (a test's variant) is searched with ``next``.
    _KERNEL_TRANSCRIBES = ("init", "next", "constraint", "View", "IsCoord", "Staying", "ViewChangePending", "SendTo",
                           "Head", "McastData", "Purged", "Absorb", "Moved", "ResentPending", "Stable",
                           *FlushModel.FLUSH_READS, *SINGLE, *RECEIVE, "Receives", "Crash", "CrashChan", "Crashes")

    def kernel(self):
        return self.transcribed_kernel(SequencerFlushModel, SequencerFlushKernel)

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


# --- the explorer's fast encoding (model/core.py's Kernel) ------------------------
# Message kinds in a kernel message (a plain tuple, first entry the kind):
# (FWD, 0, sender, seqno), (DAT, view, sender, seqno), (VIEW/COMPLETED, view,
# digest), (START/OK/STOP, view).  Kinds >= START are FLUSH's four types.
FWD, DAT, VIEW, START, OK, COMPLETED, STOP = range(7)
_KIND_NAMES = ("FORWARD", "DATA", "VIEW", "START_FLUSH", "FLUSH_OK", "FLUSH_COMPLETED", "STOP_FLUSH")
_KIND = {n: i for i, n in enumerate(_KIND_NAMES)}
# kernel phases: PHASES' indices
NORMAL, INBLOCK, OKSENT, COMPLETED_PH = range(4)
# kernel state fields (SequencerFlushState's order)
(_VIEWS, _VID, _CRASHED, _SENT, _FWD, _RECV, _DELIVERED, _CHAN, _LOG, _CLOSED, _PHASE, _BLOCKED,
 _FLUSHINIT, _FLUSHOKS, _COMPLETED, _NDEL) = range(16)


def _set(t: tuple, i: int, x) -> tuple:
    return t[:i] + (x,) + t[i + 1:]


def _mcast(chan: tuple, i: int, N: int, view, dead, msg: tuple) -> tuple:
    """McastData over kernel channels: ``msg`` appended to the channel from
    member i + 1 to every member of ``view`` that is not dead."""
    ch = list(chan)
    base = i * N - 1
    for r in view:
        if r not in dead:
            ch[base + r] += (msg,)
    return tuple(ch)


def _multi(chan: list, N: int, p: int, R, msg: tuple, dead) -> None:
    """Multi(ch, p, R, msg) in place on the list ``chan``: ``msg`` from p to
    every member of R but p and the dead."""
    base = (p - 1) * N - 1
    for q in R:
        if q != p and q not in dead:
            chan[base + q] += (msg,)


class SequencerFlushKernel(Kernel):
    """``SequencerFlushModel``'s actions over a lean encoding (the explorer's;
    :mod:`groupcheck.model.core`).  A kernel state is a tuple with the
    model's 16 variables in order: ``views``, ``crashed``, the ``fwd`` and
    ``flushOks`` sets, the ``delivered``/``log``/``closed`` sequences and the
    ``completed`` sets are the model's own values; each per-member function
    is a tuple indexed by member - 1 (``phase`` as an index into PHASES);
    ``recv`` is a tuple (per member) of tuples (per sender) of the highest
    delivered seqno, -1 outside the table's domain; ``chan`` is a tuple over
    the pairs ``(p, q)`` (index (p-1)*N + q-1) of tuples of messages, each a
    plain tuple of ints (and a digest), interned, kind first (see FWD...).
    Plain values only (no per-process codes), so model/parallel.py's workers
    hash them alike.  Same actions, guards and order as
    ``SequencerFlushModel.next``; ``decode`` gives its state.

    The SEQUENCER and FLUSH actions (``_steps``) read the failure detector
    only through what ``next`` gives them, and SendView's view through
    ``_next_view``: RaincoreSequencerFlushKernel calls them with the ring's."""

    # the model's variable in each kernel slot (RaincoreSequencerFlushKernel's differ)
    _SLOTS = SequencerFlushState._fields
    _RAW = frozenset({"views", "crashed", "viewRing"})   # slots that hold the model's own value

    def __init__(self, model: SequencerFlushModel) -> None:
        self.model = model
        N = self.N = model.N
        M = model.Members
        self.ci = {(p, q): (p - 1) * N + (q - 1) for p in M for q in M}
        self.pairs = model.pairs
        self._msgs: dict = {}    # message tuple -> itself (one object per message)
        self._recs: dict = {}    # message tuple -> the model's record
        self.L = {name: [Label(name, (m,)) for m in M] for name in model.SINGLE}
        # per channel q -> p (read by the pair actions (p, q)): (p, q, index, labels by action)
        self.L_pair = [(p, q, self.ci[(q, p)], {name: Label(name, (p, q)) for name in model.RECEIVE})
                       for p, q in model.pairs]
        self.crash = []   # per m: [(label, channels emptied, channels m sends on to a lost member, others m sends on)]
        for m in M:
            rows = []
            for lost in _subsets(set(M) - {m}):
                into = tuple(self.ci[(p, m)] for p in M)
                cut = tuple(self.ci[(m, q)] for q in M if q != m and q in lost)
                keep = tuple(self.ci[(m, q)] for q in M if q != m and q not in lost)
                rows.append((Label("Crash", (m, lost)), into, cut, keep))
            self.crash.append(rows)
        self._memo: list[dict] = [{} for _ in range(16)]
        self._rows: dict = {}
        self._fd: dict = {}

    # --- messages ---------------------------------------------------------------
    def _m(self, *msg):
        return self._msgs.setdefault(msg, msg)

    def _record(self, msg: tuple) -> Fn:
        """The model's record of kernel message ``msg`` (memoised)."""
        r = self._recs.get(msg)
        if r is None:
            r = self._recs[msg] = self._make(msg)
        return r

    def _make(self, msg: tuple) -> Fn:
        kind = msg[0]
        if kind == FWD:
            return Forward(msg[2], msg[3])
        if kind == DAT:
            return Data(msg[2], msg[3], msg[1])
        if kind == VIEW:
            return ViewMsg(msg[1], msg[2])
        if kind == COMPLETED:
            return FlushCompletedMsg(msg[1], msg[2])
        return {START: StartFlushMsg, OK: FlushOkMsg, STOP: StopFlushMsg}[kind](msg[1])

    def _encode_msg(self, r: Fn) -> tuple:
        kind = _KIND[r["type"]]
        if kind == FWD:
            return self._m(FWD, 0, r["sender"], r["seqno"])
        if kind == DAT:
            return self._m(DAT, r["view"], r["sender"], r["seqno"])
        if kind in (VIEW, COMPLETED):
            return self._m(kind, r["view"], r["digest"])
        return self._m(kind, r["view"])

    # --- encoding ---------------------------------------------------------------
    def _encode(self, name: str, f):
        """The kernel value of the model's variable ``name`` (value ``f``)."""
        if name in self._RAW:
            return f
        M = self.model.Members
        if name == "recv":
            return tuple(tuple(f[m].get(x, -1) for x in M) for m in M)
        if name == "chan":
            return tuple(tuple(self._encode_msg(r) for r in f[e]) for e in self.pairs)
        if name == "phase":
            return tuple(PHASES.index(f[m]) for m in M)
        return tuple(f[m] for m in M)

    def encode(self, s: SequencerFlushState) -> tuple:
        """The kernel state of model state ``s``."""
        return tuple(self._encode(name, getattr(s, name)) for name in self._SLOTS)

    def decode(self, k: tuple) -> SequencerFlushState:
        return SequencerFlushState(*map(self._field, range(16), k))

    def _field(self, i: int, v):
        """The model's value for value ``v`` of kernel slot ``i`` (memoised).
        Every dict below is built in key order (members ascending, pairs
        lexicographic: sort_key's order), so Fn._of skips the sort."""
        name = self._SLOTS[i]
        if name in self._RAW:
            return v
        f = self._memo[i].get(v)
        if f is None:
            M = self.model.Members
            if name == "recv":
                f = decode_recv(self._rows, M, v)
            elif name == "chan":
                rec = self._record
                f = Fn._of({pq: tuple(rec(x) for x in ch) for pq, ch in zip(self.pairs, v)})
            elif name == "phase":
                f = Fn._of({m: PHASES[x] for m, x in zip(M, v)})
            else:
                f = Fn._of(dict(zip(M, v)))
            self._memo[i][v] = f
        return f

    def init(self):
        return [self.encode(s) for s in self.model.init()]

    # --- helpers over kernel states ---------------------------------------------
    def _absorb(self, m: int, row: tuple, dl: tuple, fw: frozenset, ds: tuple):
        for snd, q in ds:
            if q > row[snd - 1]:   # not a duplicate (-1: outside the table, 0: nothing yet; seqnos are >= 1)
                row = row[:snd - 1] + (q,) + row[snd:]
                dl = dl + ((snd, q),)
            if snd == m:
                fw = fw - {q}
        return row, dl, fw

    _HAS_NDEL = True   # UniformDelivery's counter (not RaincoreSequencerFlush's)

    def _moved(self, s: list, k: tuple, m: int, new: tuple, D: tuple, ch: list, dead) -> None:
        """Moved(m, new, D, ch) in place on the list ``s`` (ch: the channels, a list)."""
        i = m - 1
        row, dl, fw = self._absorb(m, k[_RECV][i], k[_DELIVERED][i], k[_FWD][i], D)
        nc = new[0]
        v = k[_VID][i]
        N = self.N
        for j in range(i, N * N, N):   # Purged: the channels (q, m)
            seq = ch[j]
            if seq:
                kept = tuple(x for x in seq if x[0] == FWD or x[1] > v)
                if len(kept) != len(seq):
                    ch[j] = kept
        if (k[_VIEWS][v - 1][0] != nc or self.model.ResendAlways) and nc not in dead:
            j = i * N + nc - 1
            m_ = self._m
            ch[j] = ch[j] + tuple(m_(FWD, 0, m, q) for q in sorted(fw))
        s[_RECV] = _set(k[_RECV], i, tuple(x if n in new else -1 for n, x in enumerate(row, start=1)))
        s[_DELIVERED] = _set(k[_DELIVERED], i, dl)
        s[_FWD] = _set(k[_FWD], i, fw)
        s[_CLOSED] = _set(k[_CLOSED], i, k[_CLOSED][i] + (len(dl),))
        s[_LOG] = _set(k[_LOG], i, ())
        if self._HAS_NDEL:
            s[_NDEL] = _set(k[_NDEL], i, 0)
        s[_CHAN] = tuple(ch)

    def _next_view(self, s: list, k: tuple, i: int, old: tuple, ctx):
        """NextView for SendView by member i + 1 of view ``old``: sets the new
        view in the successor ``s`` and gives (the new view, whom the VIEW
        goes to, what the VIEW carries after its digest)."""
        crashed = k[_CRASHED]
        new = tuple(x for x in old if x not in crashed)
        s[_VIEWS] = k[_VIEWS] + (new,)
        return new, old, ()

    # --- Next -----------------------------------------------------------------
    def next(self, k: tuple):
        crashed = k[_CRASHED]
        model = self.model
        key = (crashed, k[_VIEWS][-1])
        fd = self._fd.get(key)
        if fd is None:   # the failure detector's arguments to _steps, once per crashed and latest view
            N = self.N
            up = tuple(m not in crashed for m in model.Members)
            fd = self._fd[key] = (up, up, crashed, (crashed,) * N, (any(x in crashed for x in key[1]),) * N,
                                  (True,) * N, None)
        out = []
        self._steps(k, out.append, *fd)
        # Crash(m, lost)
        if len(crashed) < model.MaxCrashes:
            chan = k[_CHAN]
            for m in model.Members:
                if m in crashed:
                    continue
                crashed2 = crashed | {m}
                for lab, into, cut, keep in self.crash[m - 1]:
                    ch = list(chan)
                    for j in into:
                        ch[j] = ()
                    for j in cut:
                        seq = ch[j]
                        n = 0
                        for x, msg in enumerate(seq, start=1):
                            if msg[0] == VIEW:
                                n = x
                        ch[j] = tuple(x for x in seq[:n] if x[0] < START)
                    for j in keep:
                        seq = ch[j]
                        if seq:
                            ch[j] = tuple(x for x in seq if x[0] < START)
                    s = list(k)
                    s[_CRASHED] = crashed2
                    s[_CHAN] = tuple(ch)
                    out.append((lab, tuple(s)))
        return out

    def _steps(self, k: tuple, add, up, alive, dead, gone, pending, fresh, ctx) -> None:
        """Every action but Crash, its successors given to ``add``, with the
        failure detector as given per member i + 1: ``up[i]`` CanReceive,
        ``alive[i]`` Alive (a joiner, alive and not a member, takes its first
        VIEW), ``gone[i]`` Gone (read where up[i]), ``pending[i]``
        ViewChangePending, ``fresh[i]`` NextView is not None; ``dead`` Dead;
        ``ctx`` what ``_next_view`` reads."""
        (views, vid, _, sent, fwd, recv, delivered, chan, log, closed, phase, blocked,
         flushInit, flushOks, completed, ndel) = k
        model = self.model
        N = self.N
        M = model.Members
        m_ = self._m
        L = self.L
        nviews = len(views)
        uniform = model.UniformDelivery
        # Send(m)
        for m in M:
            i = m - 1
            if not up[i] or m not in model.Senders or blocked[i] or sent[i] >= model.MaxSeq:
                continue
            if model.ResentFirst and any(x[0] == FWD for x in chan[i * N + i]):
                continue
            q = sent[i] + 1
            s = list(k)
            s[_SENT] = _set(sent, i, q)
            view = views[vid[i] - 1]
            if view[0] == m:
                s[_CHAN] = _mcast(chan, i, N, view, dead, m_(DAT, vid[i], m, q))
                s[_LOG] = _set(log, i, log[i] + ((m, q),))
            else:
                s[_FWD] = _set(fwd, i, fwd[i] | {q})
                c = view[0]
                if c not in dead:
                    j = i * N + c - 1
                    s[_CHAN] = _set(chan, j, chan[j] + (m_(FWD, 0, m, q),))
            add((L["Send"][i], tuple(s)))
        # DeliverStable(m)
        if uniform:
            for m in M:
                i = m - 1
                if not up[i] or phase[i] == COMPLETED_PH:
                    continue
                n = ndel[i]
                if n >= len(log[i]):
                    continue
                v = vid[i]
                if not all(vid[r - 1] == v and len(log[r - 1]) > n for r in views[v - 1] if r not in dead):
                    continue
                row, dl, fw = self._absorb(m, recv[i], delivered[i], fwd[i], (log[i][n],))
                s = list(k)
                s[_RECV] = _set(recv, i, row)
                s[_DELIVERED] = _set(delivered, i, dl)
                s[_FWD] = _set(fwd, i, fw)
                s[_NDEL] = _set(ndel, i, n + 1)
                add((L["DeliverStable"][i], tuple(s)))
        # StartFlush(c)
        for c in M:
            i = c - 1
            v = vid[i]
            if not (up[i] and v == nviews and pending[i]) or flushInit[i] == c:
                continue
            view = views[v - 1]
            if not all(c <= q for q in frozenset(view) - gone[i]):   # IsInitiator(c)
                continue
            ch = list(chan)
            _multi(ch, N, c, view, m_(START, v), dead)
            s = list(k)
            s[_CHAN] = tuple(ch)
            s[_FLUSHINIT] = _set(flushInit, i, c)
            ph = phase[i]
            if ph == NORMAL:
                s[_PHASE] = _set(phase, i, INBLOCK)
            s[_COMPLETED] = _set(completed, i, frozenset({(c, log[i])}) if ph == COMPLETED_PH else frozenset())
            add((L["StartFlush"][i], tuple(s)))
        # FlushOk(p)
        for p in M:
            i = p - 1
            if not up[i] or phase[i] != INBLOCK:
                continue
            ch = list(chan)
            _multi(ch, N, p, views[vid[i] - 1], m_(OK, vid[i]), dead)
            s = list(k)
            s[_PHASE] = _set(phase, i, OKSENT)
            s[_FLUSHOKS] = _set(flushOks, i, flushOks[i] | {p})
            s[_CHAN] = tuple(ch)
            add((L["FlushOk"][i], tuple(s)))
        # FlushCompleted(p)
        for p in M:
            i = p - 1
            if not up[i] or phase[i] != OKSENT or not frozenset(views[vid[i] - 1]) - gone[i] <= flushOks[i]:
                continue
            c = flushInit[i]
            s = list(k)
            s[_PHASE] = _set(phase, i, COMPLETED_PH)
            s[_BLOCKED] = _set(blocked, i, True)
            if c == p:
                s[_COMPLETED] = _set(completed, i, completed[i] | {(p, log[i])})
            elif c not in dead:
                j = i * N + c - 1
                s[_CHAN] = _set(chan, j, chan[j] + (m_(COMPLETED, vid[i], log[i]),))
            add((L["FlushCompleted"][i], tuple(s)))
        # SendView(c)
        for c in M:
            i = c - 1
            if not up[i] or flushInit[i] != c or phase[i] != COMPLETED_PH or not fresh[i]:
                continue
            v = vid[i]
            old = views[v - 1]
            g = gone[i]
            if not frozenset(old) - g <= {r[0] for r in completed[i]}:
                continue
            D = Longest({r[1] for r in completed[i] if r[0] not in g})
            s = list(k)
            new, R, tail = self._next_view(s, k, i, old, ctx)
            ch = list(chan)
            _multi(ch, N, c, R, m_(VIEW, v, D, *tail), dead)
            s[_VID] = _set(vid, i, v + 1)
            s[_PHASE] = _set(phase, i, NORMAL)
            s[_FLUSHOKS] = _set(flushOks, i, frozenset())
            s[_COMPLETED] = _set(completed, i, frozenset())
            self._moved(s, k, c, new, D, ch, dead)
            add((L["SendView"][i], tuple(s)))
        # StopFlush(c)
        for c in M:
            i = c - 1
            if not up[i] or flushInit[i] != c or phase[i] != NORMAL:
                continue
            v = vid[i]
            prev = views[v - 2]
            ch = list(chan)
            _multi(ch, N, c, [x for x in views[v - 1] if x in prev], m_(STOP, v), dead)
            s = list(k)
            s[_CHAN] = tuple(ch)
            s[_BLOCKED] = _set(blocked, i, False)
            s[_FLUSHINIT] = _set(flushInit, i, NO_INIT)
            add((L["StopFlush"][i], tuple(s)))
        # the pair actions (p, q): each takes the head of the channel q -> p
        for p, q, j, lab in self.L_pair:
            seq = chan[j]
            i = p - 1
            if not seq or not alive[i]:
                continue   # every pair action needs Alive(p) and a message
            msg = seq[0]
            kind = msg[0]
            v = vid[i]
            mv = msg[1]
            rest = _set(chan, j, seq[1:])
            if kind == VIEW:
                if up[i] and mv < v:   # Discard(p, q)
                    add((lab["Discard"], k[:_CHAN] + (rest,) + k[_CHAN + 1:]))
                if (up[i] and mv == v) or v == 0:   # InstallView(p, q)
                    s = list(k)
                    s[_VID] = _set(vid, i, mv + 1)
                    s[_FLUSHINIT] = _set(flushInit, i, NO_INIT if v == 0 else q)
                    s[_PHASE] = _set(phase, i, NORMAL)
                    s[_FLUSHOKS] = _set(flushOks, i, frozenset())
                    s[_COMPLETED] = _set(completed, i, frozenset())
                    if v == 0:   # a joiner (RaincoreSequencerFlush's): no digest, closed 0 for the views before it
                        s[_CLOSED] = _set(closed, i, (0,) * mv)
                        s[_CHAN] = rest
                    else:
                        self._moved(s, k, p, views[mv], msg[2], list(rest), dead)
                    add((lab["InstallView"], tuple(s)))
                continue
            if not up[i]:
                continue
            if kind == FWD:   # RecvForward(p, q)
                s = list(k)
                view = views[v - 1]
                if view[0] == p:
                    snd, n = msg[2], msg[3]
                    s[_CHAN] = _mcast(rest, i, N, view, dead, m_(DAT, v, snd, n))
                    s[_LOG] = _set(log, i, log[i] + ((snd, n),))
                else:
                    s[_CHAN] = rest
                add((lab["RecvForward"], tuple(s)))
                continue
            ph = phase[i]
            if kind == DAT:
                if mv == v and ph != COMPLETED_PH:   # RecvData(p, q)
                    snd, n = msg[2], msg[3]
                    s = list(k)
                    s[_CHAN] = rest
                    if q != p:
                        s[_LOG] = _set(log, i, log[i] + ((snd, n),))
                    if not uniform:
                        if snd == p:
                            s[_FWD] = _set(fwd, i, fwd[i] - {n})
                        row = recv[i]
                        if n > row[snd - 1]:
                            s[_RECV] = _set(recv, i, row[:snd - 1] + (n,) + row[snd:])
                            s[_DELIVERED] = _set(delivered, i, delivered[i] + ((snd, n),))
                    add((lab["RecvData"], tuple(s)))
                elif mv < v or (mv == v and ph == COMPLETED_PH):   # Discard(p, q)
                    add((lab["Discard"], k[:_CHAN] + (rest,) + k[_CHAN + 1:]))
                continue
            # the FLUSH messages of p's view (_flush_msg_from)
            g = q in gone[i]
            if mv < v or (mv == v and g):   # Discard(p, q)
                add((lab["Discard"], k[:_CHAN] + (rest,) + k[_CHAN + 1:]))
            if mv != v or g:
                continue
            s = list(k)
            s[_CHAN] = rest
            if kind == START:
                s[_FLUSHINIT] = _set(flushInit, i, q)
                if ph == NORMAL:   # Block(p, q)
                    s[_PHASE] = _set(phase, i, INBLOCK)
                    add((lab["Block"], tuple(s)))
                else:              # RestartFlush(p, q)
                    if ph == COMPLETED_PH:
                        ch = list(rest)
                        _multi(ch, N, p, (q,), m_(COMPLETED, v, log[i]), dead)
                        s[_CHAN] = tuple(ch)
                    add((lab["RestartFlush"], tuple(s)))
            elif kind == OK:         # ReceiveFlushOk(p, q)
                s[_FLUSHOKS] = _set(flushOks, i, flushOks[i] | {q})
                add((lab["ReceiveFlushOk"], tuple(s)))
            elif kind == COMPLETED:  # ReceiveFlushCompleted(p, q)
                s[_COMPLETED] = _set(completed, i, completed[i] | {(q, msg[2])})
                add((lab["ReceiveFlushCompleted"], tuple(s)))
            else:                    # Unblock(p, q)
                s[_BLOCKED] = _set(blocked, i, False)
                s[_FLUSHINIT] = _set(flushInit, i, NO_INIT)
                add((lab["Unblock"], tuple(s)))
