"""Python mirror of spec/Sequencer/Sequencer.tla.

Theory of operation
-------------------
SEQUENCER (seeds/000): a non-coordinator forwards each multicast to the
coordinator (FORWARD) and keeps it in its forward-table; the coordinator
multicasts it as DATA; receivers deliver unless the received-table says the
<<sender, seqno>> was delivered already; a new coordinator receives every
member's forward-table again, in seqno order.  The constants KeepForward,
ResendFirst and RetainForward are the spec's fixes for the three losses
after a coordinator crash (docs/sequencer.md); FALSE is the seed.

This module is the spec transcribed variable for variable and action for
action (same names, same parameters, same guards), so that the explorer's
state graph equals TLC's.  Members are ``1..N``; ``chan`` is a function over
pairs ``(p, q)``; messages are records ``[type, sender, seqno]``.
"""

from __future__ import annotations

from itertools import combinations
from typing import NamedTuple

from .core import Label, Model, state_type
from .values import Fn, record


@state_type
class SequencerState(NamedTuple):
    views: tuple      # views[i]: the i-th view (a tuple of members)
    vid: Fn           # member -> index (1-based) of its installed view
    crashed: frozenset
    sent: Fn          # member -> local seqno of its last multicast
    fwd: Fn           # member -> frozenset of forwarded, unacknowledged seqnos
    recv: Fn          # member -> Fn(original sender -> highest delivered seqno)
    delivered: Fn     # member -> tuple of (sender, seqno) in delivery order
    chan: Fn          # (p, q) -> tuple of messages (reliable FIFO)


def Forward(s: int, q: int) -> Fn:
    return record(type="FORWARD", sender=s, seqno=q)


def Data(s: int, q: int) -> Fn:
    return record(type="DATA", sender=s, seqno=q)


def _subsets(xs):
    xs = sorted(xs)
    for k in range(len(xs) + 1):
        for c in combinations(xs, k):
            yield frozenset(c)


class SequencerModel(Model):
    protocol = "sequencer"
    variables = SequencerState._fields

    def __init__(self, constants):
        super().__init__(constants)
        self.N = int(constants["N"])
        self.MaxSeq = int(constants["MaxSeq"])
        self.MaxCrashes = int(constants["MaxCrashes"])
        # The fixes for the losses after a coordinator crash (spec header);
        # absent (an older trace header) means the seed's behaviour.
        self.KeepForward = bool(constants.get("KeepForward", False))
        self.ResendFirst = bool(constants.get("ResendFirst", False))
        self.RetainForward = bool(constants.get("RetainForward", False))
        self.Members = tuple(range(1, self.N + 1))
        self.pairs = tuple((p, q) for p in self.Members for q in self.Members)

    # --- helpers (same names as the spec's operators) -------------------------
    def View(self, s: SequencerState, m: int) -> tuple:
        return s.views[s.vid[m] - 1]

    def IsCoord(self, s: SequencerState, m: int) -> bool:
        return self.View(s, m)[0] == m

    def SendTo(self, s: SequencerState, ch: Fn, p: int, q: int, msg: Fn) -> Fn:
        if q in s.crashed:
            return ch
        return ch.set((p, q), ch[(p, q)] + (msg,))

    def McastData(self, s: SequencerState, ch: Fn, c: int, snd: int, q: int) -> Fn:
        view = self.View(s, c)
        msg = Data(snd, q)
        return ch.update({(c, r): ch[(c, r)] + (msg,) for r in view if r not in s.crashed})

    def McastSeq(self, s: SequencerState, ch: Fn, c: int, v: tuple, snd: int, qs) -> Fn:
        msgs = tuple(Data(snd, q) for q in qs)
        return ch.update({(c, r): ch[(c, r)] + msgs for r in v if r not in s.crashed})

    # --- Init -----------------------------------------------------------------
    def init(self):
        M = self.Members
        yield SequencerState(
            views=(tuple(M),),
            vid=Fn({m: 1 for m in M}),
            crashed=frozenset(),
            sent=Fn({m: 0 for m in M}),
            fwd=Fn({m: frozenset() for m in M}),
            recv=Fn({m: Fn({x: 0 for x in M}) for m in M}),
            delivered=Fn({m: () for m in M}),
            chan=Fn({e: () for e in self.pairs}),
        )

    # --- actions --------------------------------------------------------------
    def Send(self, s: SequencerState, m: int):
        if m in s.crashed or s.sent[m] >= self.MaxSeq:
            return None
        q = s.sent[m] + 1
        sent = s.sent.set(m, q)
        if self.IsCoord(s, m):
            return s._replace(sent=sent, chan=self.McastData(s, s.chan, m, m, q))
        return s._replace(
            sent=sent,
            fwd=s.fwd.set(m, s.fwd[m] | {q}),
            chan=self.SendTo(s, s.chan, m, self.View(s, m)[0], Forward(m, q)),
        )

    def RecvForward(self, s: SequencerState, c: int, p: int):
        if c in s.crashed:
            return None
        ch = s.chan[(p, c)]
        if not ch or ch[0]["type"] != "FORWARD":
            return None
        if self.KeepForward and not self.IsCoord(s, c):
            return None  # KeepForward: it waits in the channel until c is coordinator
        msg = ch[0]
        rest = s.chan.set((p, c), ch[1:])
        if self.IsCoord(s, c):
            return s._replace(chan=self.McastData(s, rest, c, msg["sender"], msg["seqno"]))
        return s._replace(chan=rest)  # not coordinator: "error and return"

    def RecvData(self, s: SequencerState, m: int, p: int):
        if m in s.crashed:
            return None
        ch = s.chan[(p, m)]
        if not ch or ch[0]["type"] != "DATA":
            return None
        snd, q = ch[0]["sender"], ch[0]["seqno"]
        table = s.recv[m]
        dup = snd in table and q <= table[snd]
        t = s._replace(chan=s.chan.set((p, m), ch[1:]))
        if snd == m and not self.RetainForward:
            t = t._replace(fwd=s.fwd.set(m, s.fwd[m] - {q}))
        if not dup:
            t = t._replace(
                recv=s.recv.set(m, table.set(snd, q)),
                delivered=s.delivered.set(m, s.delivered[m] + ((snd, q),)),
            )
        return t

    def InstallView(self, s: SequencerState, m: int):
        if m in s.crashed or s.vid[m] >= len(s.views):
            return None
        new = s.views[s.vid[m]]  # views[vid[m] + 1], 1-based
        nc = new[0]
        chan = s.chan
        if self.View(s, m)[0] != nc and nc not in s.crashed:
            if self.ResendFirst and nc == m:
                chan = self.McastSeq(s, chan, m, new, m, sorted(s.fwd[m]))
            else:
                resend = tuple(Forward(m, q) for q in sorted(s.fwd[m]))
                chan = chan.set((m, nc), chan[(m, nc)] + resend)
        return s._replace(
            vid=s.vid.set(m, s.vid[m] + 1),
            recv=s.recv.set(m, s.recv[m].restrict(set(new))),
            chan=chan,
        )

    def Crash(self, s: SequencerState, m: int, lost: frozenset):
        if m in s.crashed or len(s.crashed) >= self.MaxCrashes:
            return None
        return s._replace(
            crashed=s.crashed | {m},
            chan=s.chan.update({e: () for e in self.pairs if e[1] == m or (e[0] == m and e[1] in lost)}),
        )

    def NewView(self, s: SequencerState):
        last = s.views[-1]
        if not any(x in s.crashed for x in last):
            return None
        return s._replace(views=s.views + (tuple(x for x in last if x not in s.crashed),))

    def next(self, s: SequencerState):
        M = self.Members
        for m in M:
            t = self.Send(s, m)
            if t is not None:
                yield Label("Send", (m,)), t
        for c in M:
            for p in M:
                t = self.RecvForward(s, c, p)
                if t is not None:
                    yield Label("RecvForward", (c, p)), t
        for m in M:
            for p in M:
                t = self.RecvData(s, m, p)
                if t is not None:
                    yield Label("RecvData", (m, p)), t
        for m in M:
            t = self.InstallView(s, m)
            if t is not None:
                yield Label("InstallView", (m,)), t
        t = self.NewView(s)
        if t is not None:
            yield Label("NewView", ()), t
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
            "GapFreeFIFO": GapFreeFIFO,
            "NothingMissing": self.NothingMissing,
        }

    def Quiescent(self, s: SequencerState) -> bool:
        """No protocol action is enabled: channels empty, the last view
        installed by every live member, no view change pending."""
        return (
            all(not s.chan[e] for e in self.pairs)
            and all(s.vid[m] == len(s.views) for m in self.Members if m not in s.crashed)
            and not any(x in s.crashed for x in s.views[-1])
        )

    def NothingMissing(self, s: SequencerState) -> bool:
        return not self.Quiescent(s) or Settled(s)

    def TypeOK(self, s: SequencerState) -> bool:
        M = set(self.Members)
        seqs = range(0, self.MaxSeq + 1)
        return (
            all(set(v) <= M for v in s.views)
            and all(1 <= s.vid[m] <= len(s.views) for m in M)
            and s.crashed <= M
            and all(s.sent[m] in seqs for m in M)
            and all(s.fwd[m] <= set(range(1, self.MaxSeq + 1)) for m in M)
            and all(set(s.recv[m]) <= M and all(v in seqs for v in s.recv[m].values()) for m in M)
            and all(x in M and 1 <= q <= self.MaxSeq for m in M for x, q in s.delivered[m])
            and all(msg["type"] in ("FORWARD", "DATA") for e in self.pairs for msg in s.chan[e])
        )


# Trace properties: functions of the delivery histories alone, so the
# conformance checker can evaluate them on implementation traces too.

def NoDuplicates(s) -> bool:
    return all(len(set(d)) == len(d) for d in s.delivered.values())


def Integrity(s) -> bool:
    return all(1 <= q <= s.sent[x] for d in s.delivered.values() for x, q in d)


def SenderFIFO(s) -> bool:
    for d in s.delivered.values():
        last: dict = {}
        for x, q in d:
            if x in last and last[x] >= q:
                return False
            last[x] = q
    return True


def GapFreeFIFO(s) -> bool:
    """What a member delivered of a sender that has not crashed is that
    sender's messages 1, 2, ..., k in order (the spec's comment says why a
    state invariant means "senders that never crash")."""
    for d in s.delivered.values():
        nxt: dict = {}
        for x, q in d:
            if x in s.crashed:
                continue
            if q != nxt.get(x, 1):
                return False
            nxt[x] = q + 1
    return True


def Settled(s) -> bool:
    """Every message sent so far is delivered by every live member unless its
    sender crashed (EventualDelivery == []<>Settled)."""
    members = tuple(s.sent.keys())
    return all(
        snd in s.crashed or r in s.crashed or (snd, q) in s.delivered[r]
        for snd in members for r in members for q in range(1, s.sent[snd] + 1)
    )


def TotalOrder(s) -> bool:
    hist = list(s.delivered.values())
    sets = [set(d) for d in hist]
    for i in range(len(hist)):
        for j in range(i + 1, len(hist)):
            a = [x for x in hist[i] if x in sets[j]]
            b = [x for x in hist[j] if x in sets[i]]
            if a != b:
                return False
    return True
