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
so that the explorer's state graph equals TLC's (``explore --compare-tlc``).
Per-member variables are ``Fn`` over ``1..N`` (TLC prints them as tuples;
``values.normalize`` does the same); ``chan`` is an ``Fn`` over pairs.
"""

from __future__ import annotations

from typing import NamedTuple

from .core import Label, Model, state_type
from .flush import FlushCompletedMsg, FlushOkMsg, StartFlushMsg, StopFlushMsg, ViewMsg
from .sequencer import GapFreeFIFO, Integrity, NoDuplicates, SenderFIFO, Settled, TotalOrder, _subsets
from .values import Fn, record

NO_INIT = 0
PHASES = ("Normal", "InBlock", "OkSent", "Completed")
FLUSH_TYPES = frozenset({"START_FLUSH", "FLUSH_OK", "FLUSH_COMPLETED", "STOP_FLUSH"})
MSG_TYPES = FLUSH_TYPES | {"FORWARD", "DATA", "VIEW"}


@state_type
class SequencerFlushState(NamedTuple):
    views: tuple      # views[i-1]: the i-th view (a tuple of members)
    vid: Fn           # member -> index (1-based) of its installed view
    crashed: frozenset
    sent: Fn          # member -> seqno of its last application multicast
    fwd: Fn           # member -> frozenset of forwarded, unacknowledged seqnos
    recv: Fn          # member -> Fn(original sender -> highest delivered seqno)
    delivered: Fn     # member -> tuple of (sender, seqno) in delivery order
    chan: Fn          # (p, q) -> tuple of message records (reliable FIFO)
    log: Fn           # member -> tuple of (sender, seqno): DATA of its view it sent or took
    closed: Fn        # member -> tuple: Len(delivered) at each view change
    phase: Fn         # member -> one of PHASES
    blocked: Fn       # member -> bool: the send latch is closed
    flushInit: Fn     # member -> initiator it follows (0: none)
    flushOks: Fn      # member -> frozenset of members
    completed: Fn     # member -> frozenset of (member, digest tuple)
    ndel: Fn          # member -> entries of its log taken through the duplicate check (UniformDelivery)


# --- messages (same constructors as the spec) -----------------------------------
def Forward(s: int, q: int) -> Fn:
    return record(type="FORWARD", sender=s, seqno=q)


def Data(s: int, q: int, v: int) -> Fn:
    return record(type="DATA", sender=s, seqno=q, view=v)


def LastView(seq: tuple) -> int:
    last = 0
    for i, m in enumerate(seq, start=1):
        if m["type"] == "VIEW":
            last = i
    return last


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


class SequencerFlushModel(Model):
    protocol = "sequencerflush"
    variables = SequencerFlushState._fields

    def __init__(self, constants):
        super().__init__(constants)
        self.N = int(constants["N"])
        self.MaxSeq = int(constants["MaxSeq"])
        self.MaxCrashes = int(constants["MaxCrashes"])
        self.Senders = frozenset(constants["Senders"])
        self.UniformDelivery = bool(constants["UniformDelivery"])
        self.ResendAlways = bool(constants["ResendAlways"])
        # Absent (a header or test written before the fix) means the seed's behaviour.
        self.ResentFirst = bool(constants.get("ResentFirst", False))
        self.Members = tuple(range(1, self.N + 1))
        self.pairs = tuple((p, q) for p in self.Members for q in self.Members)

    # --- helpers (same names as the spec's operators) -------------------------
    @staticmethod
    def Latest(s) -> int:
        return len(s.views)

    @staticmethod
    def View(s, m: int) -> tuple:
        return s.views[s.vid[m] - 1]

    def IsCoord(self, s, m: int) -> bool:
        return self.View(s, m)[0] == m

    @staticmethod
    def Staying(s) -> set:
        return set(s.views[-1]) - s.crashed

    def IsInitiator(self, s, c: int) -> bool:
        st = self.Staying(s)
        return c in st and all(c <= q for q in st)

    @staticmethod
    def ViewChangePending(s) -> bool:
        return any(x in s.crashed for x in s.views[-1])

    @staticmethod
    def SendTo(s, ch: Fn, p: int, q: int, msg: Fn) -> Fn:
        if q in s.crashed:
            return ch
        return ch.set((p, q), ch[(p, q)] + (msg,))

    def McastData(self, s, ch: Fn, c: int, snd: int, q: int) -> Fn:
        msg = Data(snd, q, s.vid[c])
        return ch.update({(c, r): ch[(c, r)] + (msg,) for r in set(self.View(s, c)) if r not in s.crashed})

    @staticmethod
    def Multi(ch: Fn, p: int, R, msg: Fn) -> Fn:
        return ch.update({(p, q): ch[(p, q)] + (msg,) for q in R if q != p})

    @staticmethod
    def HasMsg(s, p: int, q: int) -> bool:
        return len(s.chan[(q, p)]) > 0

    @staticmethod
    def In(s, p: int, q: int) -> Fn:
        return s.chan[(q, p)][0]

    @staticmethod
    def Take(ch: Fn, p: int, q: int) -> Fn:
        return ch.set((q, p), ch[(q, p)][1:])

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
        if (self.View(s, m)[0] != nc or self.ResendAlways) and nc not in s.crashed:
            pch = pch.set((m, nc), pch[(m, nc)] + tuple(Forward(m, q) for q in sorted(fwd)))
        return dict(
            recv=s.recv.set(m, recv.restrict(set(recv) & set(new))),
            delivered=s.delivered.set(m, delivered),
            fwd=s.fwd.set(m, fwd),
            closed=s.closed.set(m, s.closed[m] + (len(delivered),)),
            log=s.log.set(m, ()),
            ndel=s.ndel.set(m, 0),
            chan=pch,
        )

    # --- Init -----------------------------------------------------------------
    def init(self):
        M = self.Members
        yield SequencerFlushState(
            views=(tuple(M),),
            vid=Fn({m: 1 for m in M}),
            crashed=frozenset(),
            sent=Fn({m: 0 for m in M}),
            fwd=Fn({m: frozenset() for m in M}),
            recv=Fn({m: Fn({x: 0 for x in M}) for m in M}),
            delivered=Fn({m: () for m in M}),
            chan=Fn({e: () for e in self.pairs}),
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
        if m not in self.Senders or m in s.crashed or s.blocked[m] or s.sent[m] >= self.MaxSeq:
            return None
        if self.ResentFirst and self.ResentPending(s, m):
            return None
        q = s.sent[m] + 1
        sent = s.sent.set(m, q)
        if self.IsCoord(s, m):
            return s._replace(sent=sent, chan=self.McastData(s, s.chan, m, m, q),
                              log=s.log.set(m, s.log[m] + ((m, q),)))
        return s._replace(
            sent=sent,
            fwd=s.fwd.set(m, s.fwd[m] | {q}),
            chan=self.SendTo(s, s.chan, m, self.View(s, m)[0], Forward(m, q)),
        )

    def RecvForward(self, s, c: int, p: int):
        if c in s.crashed or not self.HasMsg(s, c, p):
            return None
        msg = self.In(s, c, p)
        if msg["type"] != "FORWARD":
            return None
        rest = self.Take(s.chan, c, p)
        if self.IsCoord(s, c):
            return s._replace(chan=self.McastData(s, rest, c, msg["sender"], msg["seqno"]),
                              log=s.log.set(c, s.log[c] + ((msg["sender"], msg["seqno"]),)))
        return s._replace(chan=rest)  # not coordinator: "error and return"

    def RecvData(self, s, m: int, p: int):
        if m in s.crashed or not self.HasMsg(s, m, p):
            return None
        msg = self.In(s, m, p)
        if msg["type"] != "DATA" or msg["view"] != s.vid[m] or s.phase[m] == "Completed":
            return None
        snd, q = msg["sender"], msg["seqno"]
        table = s.recv[m]
        dup = snd in table and q <= table[snd]
        t = s._replace(chan=self.Take(s.chan, m, p))
        if p != m:
            t = t._replace(log=s.log.set(m, s.log[m] + ((snd, q),)))
        if self.UniformDelivery:
            return t  # delivery waits for stability (DeliverStable)
        if snd == m:
            t = t._replace(fwd=s.fwd.set(m, s.fwd[m] - {q}))
        if not dup:
            t = t._replace(recv=s.recv.set(m, table.set(snd, q)),
                           delivered=s.delivered.set(m, s.delivered[m] + ((snd, q),)))
        return t

    def Stable(self, s, m: int, i: int) -> bool:
        return all(s.vid[r] == s.vid[m] and len(s.log[r]) >= i
                   for r in set(self.View(s, m)) if r not in s.crashed)

    def DeliverStable(self, s, m: int):
        if not self.UniformDelivery or m in s.crashed or s.phase[m] == "Completed":
            return None
        k = s.ndel[m]
        if k >= len(s.log[m]) or not self.Stable(s, m, k + 1):
            return None
        recv, delivered, fwd = self.Absorb(m, s.recv[m], s.delivered[m], s.fwd[m], (s.log[m][k],))
        return s._replace(recv=s.recv.set(m, recv), delivered=s.delivered.set(m, delivered),
                          fwd=s.fwd.set(m, fwd), ndel=s.ndel.set(m, k + 1))

    def Discard(self, s, p: int, q: int):
        if p in s.crashed or not self.HasMsg(s, p, q):
            return None
        m = self.In(s, p, q)
        if m["type"] == "FORWARD":
            return None
        v = s.vid[p]
        if not (
            m["view"] < v
            or (m["view"] == v and m["type"] in FLUSH_TYPES and q in s.crashed)
            or (m["view"] == v and m["type"] == "DATA" and s.phase[p] == "Completed")
        ):
            return None
        return s._replace(chan=self.Take(s.chan, p, q))

    # --- FLUSH, phase 1 ---------------------------------------------------------
    def StartFlush(self, s, c: int):
        if not (c not in s.crashed and s.vid[c] == self.Latest(s) and self.IsInitiator(s, c)):
            return None
        if s.flushInit[c] == c or not self.ViewChangePending(s):
            return None
        v = s.vid[c]
        return s._replace(
            chan=self.Multi(s.chan, c, set(s.views[v - 1]) - s.crashed, StartFlushMsg(v)),
            flushInit=s.flushInit.set(c, c),
            phase=s.phase.set(c, "InBlock" if s.phase[c] == "Normal" else s.phase[c]),
            completed=s.completed.set(c, frozenset({(c, s.log[c])}) if s.phase[c] == "Completed" else frozenset()),
        )

    def _flush_msg(self, s, p: int, c: int, typ: str) -> bool:
        """Alive(p) /\\ HasMsg(p, c) /\\ In(p, c).type = typ /\\ In(p, c).view = vid[p]."""
        if p in s.crashed or not self.HasMsg(s, p, c):
            return False
        m = self.In(s, p, c)
        return m["type"] == typ and m["view"] == s.vid[p]

    def Block(self, s, p: int, c: int):
        if not self._flush_msg(s, p, c, "START_FLUSH") or c in s.crashed or s.phase[p] != "Normal":
            return None
        return s._replace(phase=s.phase.set(p, "InBlock"), flushInit=s.flushInit.set(p, c),
                          chan=self.Take(s.chan, p, c))

    def RestartFlush(self, s, p: int, c: int):
        if not self._flush_msg(s, p, c, "START_FLUSH") or c in s.crashed or s.phase[p] == "Normal":
            return None
        ch = self.Take(s.chan, p, c)
        if s.phase[p] == "Completed":
            ch = ch.set((p, c), ch[(p, c)] + (FlushCompletedMsg(s.vid[p], s.log[p]),))
        return s._replace(flushInit=s.flushInit.set(p, c), chan=ch)

    # --- FLUSH, phase 2 ---------------------------------------------------------
    def FlushOk(self, s, p: int):
        if p in s.crashed or s.phase[p] != "InBlock":
            return None
        return s._replace(
            phase=s.phase.set(p, "OkSent"),
            flushOks=s.flushOks.set(p, s.flushOks[p] | {p}),
            chan=self.Multi(s.chan, p, set(self.View(s, p)) - s.crashed, FlushOkMsg(s.vid[p])),
        )

    def ReceiveFlushOk(self, s, p: int, q: int):
        if not self._flush_msg(s, p, q, "FLUSH_OK") or q in s.crashed:
            return None
        return s._replace(flushOks=s.flushOks.set(p, s.flushOks[p] | {q}), chan=self.Take(s.chan, p, q))

    # --- FLUSH, phase 3 ---------------------------------------------------------
    def FlushCompleted(self, s, p: int):
        if p in s.crashed or s.phase[p] != "OkSent":
            return None
        if not (set(self.View(s, p)) - s.crashed) <= s.flushOks[p]:
            return None
        c = s.flushInit[p]
        t = s._replace(phase=s.phase.set(p, "Completed"), blocked=s.blocked.set(p, True))
        if c == p:
            return t._replace(completed=s.completed.set(p, s.completed[p] | {(p, s.log[p])}))
        if c not in s.crashed:
            return t._replace(chan=s.chan.set((p, c), s.chan[(p, c)] + (FlushCompletedMsg(s.vid[p], s.log[p]),)))
        return t

    def ReceiveFlushCompleted(self, s, c: int, q: int):
        if not self._flush_msg(s, c, q, "FLUSH_COMPLETED") or q in s.crashed:
            return None
        d = self.In(s, c, q)["digest"]
        return s._replace(completed=s.completed.set(c, s.completed[c] | {(q, d)}), chan=self.Take(s.chan, c, q))

    # --- FLUSH, phase 4 ---------------------------------------------------------
    def SendView(self, s, c: int):
        if c in s.crashed or s.flushInit[c] != c or s.phase[c] != "Completed":
            return None
        if not (set(self.View(s, c)) - s.crashed) <= {r[0] for r in s.completed[c]}:
            return None
        v = s.vid[c]
        new = tuple(x for x in s.views[v - 1] if x not in s.crashed)
        D = Longest({r[1] for r in s.completed[c] if r[0] not in s.crashed})
        ch = self.Multi(s.chan, c, set(s.views[v - 1]) - s.crashed, ViewMsg(v, D))
        return s._replace(
            views=s.views + (new,),
            vid=s.vid.set(c, v + 1),
            phase=s.phase.set(c, "Normal"),
            flushOks=s.flushOks.set(c, frozenset()),
            completed=s.completed.set(c, frozenset()),
            **self.Moved(s, c, new, D, ch),
        )

    def InstallView(self, s, p: int, c: int):
        if not self._flush_msg(s, p, c, "VIEW"):
            return None
        m = self.In(s, p, c)
        return s._replace(
            vid=s.vid.set(p, m["view"] + 1),
            flushInit=s.flushInit.set(p, c),
            phase=s.phase.set(p, "Normal"),
            flushOks=s.flushOks.set(p, frozenset()),
            completed=s.completed.set(p, frozenset()),
            **self.Moved(s, p, s.views[m["view"]], m["digest"], self.Take(s.chan, p, c)),
        )

    def StopFlush(self, s, c: int):
        if c in s.crashed or s.flushInit[c] != c or s.phase[c] != "Normal":
            return None
        v = s.vid[c]
        R = (set(s.views[v - 1]) & set(s.views[v - 2])) - s.crashed
        return s._replace(chan=self.Multi(s.chan, c, R, StopFlushMsg(v)),
                          blocked=s.blocked.set(c, False), flushInit=s.flushInit.set(c, NO_INIT))

    def Unblock(self, s, p: int, c: int):
        if not self._flush_msg(s, p, c, "STOP_FLUSH") or c in s.crashed:
            return None
        return s._replace(blocked=s.blocked.set(p, False), flushInit=s.flushInit.set(p, NO_INIT),
                          chan=self.Take(s.chan, p, c))

    # --- environment --------------------------------------------------------------
    def Crash(self, s, m: int, lost: frozenset):
        if m in s.crashed or len(s.crashed) >= self.MaxCrashes:
            return None
        upd = {}
        for e in self.pairs:
            seq = s.chan[e]
            if e[1] == m:
                upd[e] = ()
            elif e[0] == m:
                if e[1] in lost:
                    seq = seq[: LastView(seq)]
                upd[e] = tuple(x for x in seq if x["type"] not in FLUSH_TYPES)
        return s._replace(crashed=s.crashed | {m}, chan=s.chan.update(upd))

    SINGLE = ("Send", "DeliverStable", "StartFlush", "FlushOk", "FlushCompleted", "SendView", "StopFlush")
    PAIR = ("RecvForward", "RecvData", "Discard", "Block", "RestartFlush", "ReceiveFlushOk",
            "ReceiveFlushCompleted", "InstallView", "Unblock")

    def next(self, s):
        M = self.Members
        for name in self.SINGLE:
            act = getattr(self, name)
            for m in M:
                t = act(s, m)
                if t is not None:
                    yield Label(name, (m,)), t
        for p, q in self.pairs:
            if not s.chan[(q, p)]:
                continue  # every pair action takes from the channel q -> p
            for name in self.PAIR:
                t = getattr(self, name)(s, p, q)
                if t is not None:
                    yield Label(name, (p, q)), t
        if len(s.crashed) < self.MaxCrashes:
            for m in M:
                for lost in _subsets(set(M) - {m}):
                    t = self.Crash(s, m, lost)
                    if t is not None:
                        yield Label("Crash", (m, lost)), t

    # --- properties -----------------------------------------------------------
    @property
    def invariants(self):
        return {
            "TypeOK": self.TypeOK,
            "NoDuplicates": NoDuplicates,
            "Integrity": Integrity,
            "SenderFIFO": SenderFIFO,
            "TotalOrder": TotalOrder,
            "SurvivorTotalOrder": SurvivorTotalOrder,
            "VirtualSynchrony": VirtualSynchrony,
            "LogsAgree": LogsAgree,
            "GapFreeFIFO": GapFreeFIFO,
            "NothingMissing": self.NothingMissing,
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

    def NothingMissing(self, s) -> bool:
        return not self.Quiescent(s) or Settled(s)

    def TypeOK(self, s) -> bool:
        M = set(self.Members)
        seqs = range(0, self.MaxSeq + 1)
        ids = set(range(1, self.MaxSeq + 1))
        return (
            all(set(v) <= M for v in s.views)
            and all(1 <= s.vid[m] <= len(s.views) for m in M)
            and s.crashed <= M
            and all(s.sent[m] in seqs for m in M)
            and all(s.fwd[m] <= ids for m in M)
            and all(set(s.recv[m]) <= M and all(x in seqs for x in s.recv[m].values()) for m in M)
            and all(x in M and q in ids for m in M for x, q in s.delivered[m])
            and all(x in M and q in ids for m in M for x, q in s.log[m])
            and all(len(s.closed[m]) == s.vid[m] - 1 for m in M)
            and all(msg["type"] in MSG_TYPES for e in self.pairs for msg in s.chan[e])
            and all(s.phase[m] in PHASES for m in M)
            and all(isinstance(s.blocked[m], bool) for m in M)
            and all(s.flushInit[m] in M | {NO_INIT} for m in M)
            and all(s.flushOks[m] <= M for m in M)
            and all(r[0] in M for c in M for r in s.completed[c])
            and all(isinstance(s.ndel[m], int) and s.ndel[m] >= 0 for m in M)
        )


# --- properties (functions of the state, as in the spec) ----------------------------

def SurvivorTotalOrder(s) -> bool:
    live = [d for m, d in s.delivered.items() if m not in s.crashed]
    sets = [set(d) for d in live]
    for i in range(len(live)):
        for j in range(i + 1, len(live)):
            if [x for x in live[i] if x in sets[j]] != [x for x in live[j] if x in sets[i]]:
                return False
    return True


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
