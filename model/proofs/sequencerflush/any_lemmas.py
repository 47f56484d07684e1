"""SEQUENCER over FLUSH for every N: the lemmas over the member sort, without
a crash (``SequencerFlushAnyEncoding``) and with one (``SequencerFlushCrashEncoding``).
"""

from __future__ import annotations

from itertools import product
from ...sequencerflush import SequencerFlushState
from .any_relation import COMPLETED, DATA, FC, FLUSH_OK, FORWARD, NORMAL, START, STOP, SequencerFlushAnyRelation, SequencerFlushCrashRelation, VIEW


class SequencerFlushAnyEncoding(SequencerFlushAnyRelation):
    """SEQUENCER over FLUSH for every N without a crash: the relation and its lemmas."""

    # --- invariant ----------------------------------------------------------------
    # G, the total order, is log[one]: the coordinator's log.
    @property
    def lemmas(self):
        return {name: getattr(self, name) for name in (
            "Crashes", "Quiet", "Chans", "Lens", "Bounds", "Shapes", "Forwards", "Sequence", "SequenceOrder",
            "Fresh", "NoDuplicates", "SurvivorTotalOrder")}

    def Crashes(self, S):
        """No member crashed (MaxCrashes = 0)."""
        o = S["o"]
        return o.forall(1, lambda x: o.Not(S["crashed"][x]))

    def Quiet(self, S):
        """Without a crash no view change is pending, so no flush has started:
        one view, every member in it at vid 1, phase Normal, latch open, no
        initiator."""
        o = S["o"]
        return o.And(S["nv"] == 1, o.forall(1, lambda x: o.And(
            S["vin"][x][1], S["vid"][x] == 1, S["phase"][x] == NORMAL, o.Not(S["blocked"][x]))),
            o.forall(2, lambda x, y: o.Not(S["fi"][x, y])))

    def Chans(self, S):
        """Every channel's head index is at most its tail index."""
        o = S["o"]
        return o.forall(2, lambda p, q: S["hd"][p, q] <= S["tl"][p, q])

    def Lens(self, S):
        o = S["o"]
        return o.forall(1, lambda m: o.And(S["dL"][m] >= 0, S["lL"][m] >= 0))

    def Bounds(self, S):
        """sent[m] >= 0; every received-table holds every sender, its value in
        0..sent[sender]."""
        o = S["o"]
        return o.And(o.forall(1, lambda m: S["sent"][m] >= 0), o.forall(2, lambda m, x: o.And(
            S["rdom"][m, x], 0 <= S["rval"][m, x], S["rval"][m, x] <= S["sent"][x])))

    def Shapes(self, S):
        """The coordinator's channels carry DATA of view 1, a channel p -> one
        (p # one) FORWARDs of p; every other channel is empty."""
        o = S["o"]
        return self._msgs(S, lambda a, b, k: o.And(
            o.Implies(a == o.one, o.And(S["ty"][a, b, k] == DATA, S["view"][a, b, k] == 1)),
            o.Implies(a != o.one, o.And(b == o.one, S["ty"][a, b, k] == FORWARD, S["snd"][a, b, k] == a))))

    def _to(self, S, b, body, field="snd"):
        """body(a, k) for every message at position k of a channel from a to
        b (a fixed end: one member quantified, not two); its pattern the
        message's ``field``."""
        o = S["o"]
        return o.all(1, 1, lambda a, k: o.Implies(self._in(S, a, b, k), body(a, k)),
                     lambda a, k: [S[field][a, b, k]], lambda a: ((k,) for k in self._positions(S, a, b)))

    def _from(self, S, a, body, field="snd"):
        """body(b, k) for every message at position k of a channel from a."""
        o = S["o"]
        return o.all(1, 1, lambda b, k: o.Implies(self._in(S, a, b, k), body(b, k)),
                     lambda b, k: [S[field][a, b, k]], lambda b: ((k,) for k in self._positions(S, a, b)))

    def forwarded(self, S, p):
        """F(p): the seqnos of p the coordinator has taken, sent[p] less the
        FORWARDs of p still on their way to it."""
        return S["sent"][p] - (S["tl"][p, S["o"].one] - S["hd"][p, S["o"].one])

    def Forwards(self, S):
        """The channel p -> one (p # one) holds p's FORWARDs F(p) + 1 ..
        sent[p], in that order; G's entries of p, every received-table value
        for p and every DATA of p queued from one are at most F(p) (a FORWARD
        is sequenced once, in FIFO order)."""
        o = S["o"]
        fifo = self._to(S, o.one, lambda a, k: o.Implies(
            a != o.one, S["seq"][a, o.one, k] == S["sent"][a] - (S["tl"][a, o.one] - k) + 1), "seq")
        rv = o.forall(2, lambda m, p: o.Implies(p != o.one, S["rval"][m, p] <= self.forwarded(S, p)))
        gS, gQ, gL = self.G(S)
        log = o.all(0, 1, lambda j: o.Implies(o.And(1 <= j, j <= gL, gS(j) != o.one),
                                              gQ(j) <= self.forwarded(S, gS(j))),
                    lambda j: [gQ(j)], lambda: ((j,) for j in range(1, gL + 1)))
        data = self._from(S, o.one, lambda b, k: o.Implies(
            o.And(S["ty"][o.one, b, k] == DATA, S["snd"][o.one, b, k] != o.one),
            S["seq"][o.one, b, k] <= self.forwarded(S, S["snd"][o.one, b, k])))
        return o.And(fifo, rv, log, data)

    @staticmethod
    def G(S):
        """The coordinator's log: (senders, seqnos, length)."""
        o = S["o"]
        return (lambda j: S["lS"][o.one, j]), (lambda j: S["lQ"][o.one, j]), S["lL"][o.one]

    def Sequence(self, S):
        """G is the total order: m delivered G[1..dL[m]], m # one logged
        G[1..lL[m]] (= dL[m]) too, and the rest of G is queued on one -> m in
        order after what m has consumed: its log (m # one), its deliveries
        (one, whose own DATA come back on one -> one).  The two cases are
        separate conjuncts: as one term with an If on m = one, RecvData's
        query on the queued messages took 3 million units grounded (one
        shard of the sharded run gave up at 20 million), the cases a few
        hundred thousand."""
        o = S["o"]
        gS, gQ, gL = self.G(S)
        hd, tl = (lambda b: S["hd"][o.one, b]), (lambda b: S["tl"][o.one, b])  # noqa: E731

        def queued(b, k, base):
            j = base + (k - hd(b)) + 1
            return o.And(S["snd"][o.one, b, k] == gS(j), S["seq"][o.one, b, k] == gQ(j))
        lens_one = S["dL"][o.one] + tl(o.one) - hd(o.one) == gL
        lens = o.forall(1, lambda m: o.Implies(m != o.one, o.And(S["lL"][m] + tl(m) - hd(m) == gL,
                                                                 S["dL"][m] == S["lL"][m])))
        chan_one = o.all(0, 1, lambda k: o.Implies(self._in(S, o.one, o.one, k), queued(o.one, k, S["dL"][o.one])),
                         lambda k: [S["snd"][o.one, o.one, k]], lambda: ((k,) for k in self._positions(S, o.one, o.one)))
        chan = self._from(S, o.one, lambda b, k: o.Implies(b != o.one, queued(b, k, S["lL"][b])))
        dl = o.all(1, 1, lambda m, j: o.Implies(o.And(1 <= j, j <= S["dL"][m]), o.And(
            S["dS"][m, j] == gS(j), S["dQ"][m, j] == gQ(j))),
            lambda m, j: [S["dS"][m, j]], lambda m: ((j,) for j in range(1, S["dL"][m] + 1)))
        lg = o.all(1, 1, lambda m, j: o.Implies(o.And(1 <= j, j <= S["lL"][m], m != o.one), o.And(
            S["lS"][m, j] == gS(j), S["lQ"][m, j] == gQ(j))),
            lambda m, j: [S["lS"][m, j]], lambda m: ((j,) for j in range(1, S["lL"][m] + 1)))
        return o.And(lens_one, lens, chan_one, chan, dl, lg)

    def SequenceOrder(self, S):
        """G holds each sender's seqnos strictly increasing, each in
        1..sent[sender]."""
        o = S["o"]
        gS, gQ, gL = self.G(S)
        inc = o.all(0, 2, lambda i, j: o.Implies(o.And(1 <= i, i < j, j <= gL, gS(i) == gS(j)), gQ(i) < gQ(j)),
                    lambda i, j: [gS(i), gS(j)], lambda: product(range(1, gL + 1), repeat=2))
        sent = o.all(0, 1, lambda j: o.Implies(o.And(1 <= j, j <= gL), o.And(1 <= gQ(j), gQ(j) <= S["sent"][gS(j)])),
                     lambda j: [gQ(j)], lambda: ((j,) for j in range(1, gL + 1)))
        return o.And(inc, sent)

    def Fresh(self, S):
        """What is queued to m is above m's received-table value for its
        sender (so RecvData never discards), and what m delivered is at most
        it."""
        o = S["o"]
        chan = self._from(S, o.one, lambda b, k: S["seq"][o.one, b, k] > S["rval"][b, S["snd"][o.one, b, k]])
        dl = o.all(1, 1, lambda m, j: o.Implies(o.And(1 <= j, j <= S["dL"][m]),
                                                S["dQ"][m, j] <= S["rval"][m, S["dS"][m, j]]),
                   lambda m, j: [S["dQ"][m, j]], lambda m: ((j,) for j in range(1, S["dL"][m] + 1)))
        return o.And(chan, dl)

    def NoDuplicates(self, S):
        """No member delivers a message twice (the spec's property)."""
        o = S["o"]
        return o.all(1, 2, lambda m, i, j: o.Implies(o.And(1 <= i, i < j, j <= S["dL"][m]), o.Or(
            S["dS"][m, i] != S["dS"][m, j], S["dQ"][m, i] != S["dQ"][m, j])),
            lambda m, i, j: [S["dS"][m, i], S["dS"][m, j]],
            lambda m: product(range(1, S["dL"][m] + 1), repeat=2))

    def SurvivorTotalOrder(self, S):
        """Two live members deliver the messages both deliver in the same
        order (with NoDuplicates, the spec's SelectSeq equality)."""
        o = S["o"]

        def body(m1, m2, a1, b1, a2, b2):
            eq = lambda x, y: o.And(S["dS"][m1, x] == S["dS"][m2, y], S["dQ"][m1, x] == S["dQ"][m2, y])  # noqa: E731
            return o.Implies(o.And(self.alive(S, m1), self.alive(S, m2), 1 <= a1, a1 < b1, b1 <= S["dL"][m1],
                                   1 <= a2, a2 <= S["dL"][m2], 1 <= b2, b2 <= S["dL"][m2], eq(a1, a2), eq(b1, b2)),
                             a2 < b2)
        return o.all(2, 4, body, lambda m1, m2, a1, b1, a2, b2: [S["dS"][m1, a1], S["dS"][m1, b1],
                                                                  S["dS"][m2, a2], S["dS"][m2, b2]],
                     lambda m1, m2: product(range(1, S["dL"][m1] + 1), range(1, S["dL"][m1] + 1),
                                            range(1, S["dL"][m2] + 1), range(1, S["dL"][m2] + 1)))

    def holds(self, name: str, s: SequencerFlushState) -> bool:
        """Lemma ``name`` instantiated at s's N, on s."""
        return self.lemmas[name](self.py_state(s))


class SequencerFlushCrashEncoding(SequencerFlushCrashRelation, SequencerFlushAnyEncoding):
    """SEQUENCER over FLUSH for every N with one crash: the relation and its lemmas (and those without a crash it keeps)."""

    # --- invariant ----------------------------------------------------------------
    @property
    def lemmas(self):
        return {name: getattr(self, name) for name in (
            "OneCrash", "Before", "Chans", "Lens", "Ini", "Views", "Tables", "Flush", "Msgs", "Coords", "Once",
            "Fs", "DataOrder", "ViewData", "RecvBound", "NoDuplicates")}

    def OneCrash(self, S):
        """At most one member crashed (MaxCrashes = 1)."""
        o = S["o"]
        return o.forall(2, lambda x, y: o.Implies(o.And(S["crashed"][x], S["crashed"][y]), x == y))

    def Before(self, S):
        """Before the crash no flush runs (Quiet) and no FLUSH_COMPLETED is
        recorded."""
        o = S["o"]
        return o.Implies(o.forall(1, lambda x: o.Not(S["crashed"][x])),
                         o.And(self.Quiet(S), o.forall(2, lambda c, q: o.Not(S["rd"][c, q]))))

    def Ini(self, S):
        """ini is the least live member."""
        o, ini = S["o"], S["ini"]
        return o.forall(1, lambda y: o.Implies(o.Not(S["crashed"][y]),
                                               o.And(o.Not(S["crashed"][ini]), o.le(ini, y))))

    def Views(self, S):
        """At most two views: the first every member, the second the live
        ones; a member in view 2 is in it, in phase Normal."""
        o, nv = S["o"], S["nv"]
        return o.And(1 <= nv, nv <= 2, o.forall(1, lambda y: o.And(
            S["vin"][y][1], 1 <= S["vid"][y], S["vid"][y] <= nv,
            o.Implies(S["vid"][y] == 2, S["phase"][y] == NORMAL),
            o.Implies(nv == 2, S["vin"][y][2] == o.Not(S["crashed"][y])))))

    def Tables(self, S):
        """A received-table lacks only the crashed member, after the view change."""
        o = S["o"]
        return o.forall(2, lambda m, s: o.Implies(o.Not(S["rdom"][m, s]),
                                                  o.And(S["crashed"][s], S["vid"][m] == 2)))

    def Flush(self, S):
        """Only ini initiates, once, in view 1; a member in a flush is in view
        1 and follows ini (and no other); once view 2 is decided a live
        member still in view 1 is Completed; a record is ini's, of a
        Completed member, in view 1."""
        o, ini, nv = S["o"], S["ini"], S["nv"]
        fi, ph, vid = S["fi"], S["phase"], S["vid"]
        return o.forall(2, lambda b, c: o.And(
            o.Implies(fi[c, c], o.And(c == ini, o.Implies(nv == 2, vid[c] == 2),
                                      o.Implies(vid[c] == 1, ph[c] != NORMAL))),
            o.Implies(ph[b] != NORMAL, o.And(vid[b] == 1, fi[b, ini], o.Or(fi[ini, ini], nv == 2))),
            o.Implies(o.And(fi[b, c], b != c), o.And(o.Or(fi[c, c], nv == 2), o.Not(fi[b, b]))),
            o.Implies(o.And(fi[b, c], fi[b, ini]), c == ini),
            o.Implies(o.And(nv == 2, vid[b] == 1, o.Not(S["crashed"][b])), ph[b] == COMPLETED),
            o.Implies(S["rd"][c, b], o.And(ph[b] == COMPLETED, c == ini, fi[c, c], vid[c] == 1))))

    def Msgs(self, S):
        """Each message in flight, by type: FORWARDs are their sender's, not
        1's, to 1 while it lives; a DATA is of a view its sender is in, at
        most the sender's, and names 1 only if 1 sent it; flush messages are
        of view 1 (STOP_FLUSH of view 2); a VIEW is ini's, after view 2 is
        decided; a START_FLUSH finds its receiver in phase Normal, not yet
        following ini; a FLUSH_COMPLETED goes to ini, which holds no record
        of its Completed sender."""
        o, ini, nv = S["o"], S["ini"], S["nv"]

        def body(a, b, k):
            ty, v, s = S["ty"][a, b, k], S["view"][a, b, k], S["snd"][a, b, k]
            return o.And(
                o.Implies(ty == FORWARD, o.And(s == a, a != o.one, o.Implies(o.Not(S["crashed"][o.one]), b == o.one))),
                o.Implies(ty == DATA, o.And(S["vin"][a][v], 1 <= v, v <= S["vid"][a], o.Or(s == a, s != o.one))),
                o.Implies(ty == VIEW, o.And(v == 1, nv == 2, a == ini, a != b, S["vid"][a] == 2)),
                o.Implies(ty == START, o.And(v == 1, nv == 1, a == ini, S["fi"][a, a], a != b,
                                             o.Not(S["crashed"][b]), S["phase"][b] == NORMAL,
                                             o.Not(S["fi"][b, a]))),
                o.Implies(ty == FLUSH_OK, v == 1),
                o.Implies(ty == FC, o.And(v == 1, nv == 1, b == ini, a != b, o.Not(S["crashed"][a]),
                                          S["phase"][a] == COMPLETED,
                                          S["fi"][a, b], o.Not(S["rd"][b, a]))),
                o.Implies(ty == STOP, v == 2))
        return self._msgs(S, body)

    def Coords(self, S):
        """A DATA is multicast by the least member of its view."""
        o = S["o"]
        return self._msgs(S, lambda a, b, y, k: o.Implies(
            o.And(S["ty"][a, b, k] == DATA, S["vin"][y][S["view"][a, b, k]]), o.le(a, y)), nodes=1)

    def Once(self, S):
        """At most one START_FLUSH and one FLUSH_COMPLETED per channel."""
        o = S["o"]
        return o.all(2, 2, lambda a, b, i, j: o.Implies(
            o.And(self._in(S, a, b, i), self._in(S, a, b, j), i < j, S["ty"][a, b, i] == S["ty"][a, b, j]),
            o.And(S["ty"][a, b, i] != START, S["ty"][a, b, i] != FC)),
            lambda a, b, i, j: [S["ty"][a, b, i], S["ty"][a, b, j]],
            lambda a, b: product(self._positions(S, a, b), repeat=2))

    def Fs(self, S):
        """While 1 lives: fs[s] (s # 1) is at most sent[s]; s's FORWARDs to 1
        are above it, increasing; every seqno of s anywhere else (tables,
        DATA, logs, digests, records) is at most it."""
        o, fs, one_ = S["o"], S["fs"], S["o"].one
        low = lambda s, q: o.Implies(s != one_, q <= fs[s])  # noqa: E731
        sent = o.forall(1, lambda s: o.Implies(s != one_, fs[s] <= S["sent"][s]))
        fwd = self._to(S, one_, lambda a, k: o.Implies(S["ty"][a, one_, k] == FORWARD, o.And(
            fs[a] < S["seq"][a, one_, k], S["seq"][a, one_, k] <= S["sent"][a])), "seq")
        order = o.all(1, 2, lambda a, i, j: o.Implies(
            o.And(self._in(S, a, one_, i), self._in(S, a, one_, j), i < j,
                  S["ty"][a, one_, i] == FORWARD, S["ty"][a, one_, j] == FORWARD),
            S["seq"][a, one_, i] < S["seq"][a, one_, j]),
            lambda a, i, j: [S["seq"][a, one_, i], S["seq"][a, one_, j]],
            lambda a: product(self._positions(S, a, one_), repeat=2))
        rv = o.forall(2, lambda m, s: low(s, S["rval"][m, s]))
        data = self._msgs(S, lambda a, b, k: o.Implies(S["ty"][a, b, k] == DATA, low(S["snd"][a, b, k], S["seq"][a, b, k])),
                          trigger=lambda a, b, k: [S["snd"][a, b, k]])
        log = o.all(1, 1, lambda m, j: o.Implies(o.And(1 <= j, j <= S["lL"][m]), low(S["lS"][m, j], S["lQ"][m, j])),
                    lambda m, j: [S["lS"][m, j]], lambda m: ((j,) for j in range(1, S["lL"][m] + 1)))
        dig = o.all(2, 2, lambda a, b, k, i: o.Implies(
            o.And(self._in(S, a, b, k), o.Or(S["ty"][a, b, k] == VIEW, S["ty"][a, b, k] == FC),
                  1 <= i, i <= S["gL"][a, b, k]), low(S["gS"][a, b, k, i], S["gQ"][a, b, k, i])),
            lambda a, b, k, i: [S["gS"][a, b, k, i]],
            lambda a, b: ((k, i) for k in self._positions(S, a, b) for i in range(1, S["gL"][a, b, k] + 1)))
        rec = o.all(2, 1, lambda c, q, i: o.Implies(o.And(S["rd"][c, q], 1 <= i, i <= S["rL"][c, q]),
                                                    low(S["rS"][c, q, i], S["rQ"][c, q, i])),
                    lambda c, q, i: [S["rS"][c, q, i]], lambda c, q: ((i,) for i in range(1, S["rL"][c, q] + 1)))
        return o.Implies(o.Not(S["crashed"][one_]), o.And(sent, fwd, order, rv, data, log, dig, rec))

    def DataOrder(self, S):
        """While 1 lives, the DATA of one sender (not 1) on 1 -> b are in
        increasing seqno order."""
        o = S["o"]
        one_ = o.one

        def body(b, i, j):
            x, y = (one_, b, i), (one_, b, j)
            return o.Implies(o.And(self._in(S, one_, b, i), self._in(S, one_, b, j), i < j,
                                   S["ty"][x] == DATA, S["ty"][y] == DATA, S["snd"][x] == S["snd"][y],
                                   S["snd"][x] != one_), S["seq"][x] < S["seq"][y])
        return o.Implies(o.Not(S["crashed"][one_]), o.all(
            1, 2, body, lambda b, i, j: [S["snd"][one_, b, i], S["snd"][one_, b, j]],
            lambda b: product(self._positions(S, one_, b), repeat=2)))

    def ViewData(self, S):
        """While 1 lives, a DATA of view 2 of s (not 1) on 1 -> b is above
        b's table value for s and above the entries of s in the digest of a
        VIEW on that channel."""
        o = S["o"]
        one_ = o.one
        d2 = lambda b, k: o.And(self._in(S, one_, b, k), S["ty"][one_, b, k] == DATA,  # noqa: E731
                                S["view"][one_, b, k] == 2, S["snd"][one_, b, k] != one_)
        tab = o.all(1, 1, lambda b, k: o.Implies(d2(b, k), S["seq"][one_, b, k] > S["rval"][b, S["snd"][one_, b, k]]),
                    lambda b, k: [S["snd"][one_, b, k]], lambda b: ((k,) for k in self._positions(S, one_, b)))
        dig = o.all(1, 3, lambda b, k, h, i: o.Implies(
            o.And(d2(b, k), self._in(S, one_, b, h), S["ty"][one_, b, h] == VIEW, 1 <= i, i <= S["gL"][one_, b, h],
                  S["gS"][one_, b, h, i] == S["snd"][one_, b, k]),
            S["gQ"][one_, b, h, i] < S["seq"][one_, b, k]),
            lambda b, k, h, i: [S["snd"][one_, b, k], S["gS"][one_, b, h, i]],
            lambda b: ((k, h, i) for k in self._positions(S, one_, b) for h in self._positions(S, one_, b)
                       for i in range(1, S["gL"][one_, b, h] + 1)))
        return o.Implies(o.Not(S["crashed"][one_]), o.And(tab, dig))

    def RecvBound(self, S):
        """Every <<s, q>> m delivered has q at most m's table value for s
        (kept after s leaves the table: ``rval``)."""
        o = S["o"]
        return o.all(1, 1, lambda m, j: o.Implies(o.And(1 <= j, j <= S["dL"][m]),
                                                  S["dQ"][m, j] <= S["rval"][m, S["dS"][m, j]]),
                     lambda m, j: [S["dS"][m, j]], lambda m: ((j,) for j in range(1, S["dL"][m] + 1)))


def any_encoding(_n=None, *, variant: str, **kw) -> SequencerFlushAnyEncoding:
    """A variant of the proof matrix proved for every N (the manifest's
    ``members: "any"``)."""
    cls = SequencerFlushCrashEncoding if variant == "AnyFixed" else SequencerFlushAnyEncoding
    return cls(variant=variant, **kw)
