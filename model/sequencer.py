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
SuspectResend, FillGaps and SeparateChannels are JGroups 2.12.2's
deviations (a suspicion moves ``coord`` and re-sends the forward-table at
once; the received-table delivers a seqno that fills a gap, ``holes``;
FORWARD and DATA of one pair are two FIFO channels); FALSE is the seed.

This module is the spec transcribed variable for variable and action for
action (same names, same parameters, same guards), so that the explorer's
state graph equals TLC's.  Members are ``1..N``; ``chan`` is a function over
pairs ``(p, q)``; messages are records ``[type, sender, seqno]``.
"""

from __future__ import annotations

from itertools import combinations
from typing import NamedTuple

from .core import Kernel, Label, Model, state_type
from .values import Fn


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
    coord: Fn         # member -> the member it takes for coordinator
    holes: Fn         # member -> frozenset of (sender, seqno) skipped below recv (FillGaps)


# record(type=..., sender=s, seqno=q), its fields written in key order so
# that no sort is needed (every Send and RecvForward builds one)
def Forward(s: int, q: int) -> Fn:
    return Fn._of({"sender": s, "seqno": q, "type": "FORWARD"})


def Data(s: int, q: int) -> Fn:
    return Fn._of({"sender": s, "seqno": q, "type": "DATA"})


def subsets(xs):
    xs = sorted(xs)
    for k in range(len(xs) + 1):
        for c in combinations(xs, k):
            yield frozenset(c)


class SequencerModel(Model):
    protocol = "sequencer"
    variables = SequencerState._fields

    def __init__(self, constants):
        Model.__init__(self, constants)   # not super(): SequencerFlush calls this on its own model
        self.N = int(constants["N"])
        self.MaxSeq = int(constants["MaxSeq"])
        self.MaxCrashes = int(constants["MaxCrashes"])
        # The fixes for the losses after a coordinator crash (spec header);
        # absent (an older trace header) means the seed's behaviour.
        self.KeepForward = bool(constants.get("KeepForward", False))
        self.ResendFirst = bool(constants.get("ResendFirst", False))
        self.RetainForward = bool(constants.get("RetainForward", False))
        # JGroups 2.12.2's deviations (the same: absent is the seed).  The
        # compositions leave them FALSE: their states have no coord or holes.
        self.SuspectResend = bool(constants.get("SuspectResend", False))
        self.FillGaps = bool(constants.get("FillGaps", False))
        self.SeparateChannels = bool(constants.get("SeparateChannels", False))
        self.Members = tuple(range(1, self.N + 1))
        self.pairs = tuple((p, q) for p in self.Members for q in self.Members)

    # --- helpers (same names as the spec's operators) -------------------------
    def View(self, s: SequencerState, m: int) -> tuple:
        return s.views[s.vid[m] - 1]

    def Coord(self, s: SequencerState, m: int) -> int:
        """coord[m]; without SuspectResend it is always the view's first
        member, read from the view so that the compositions' states need no
        ``coord``."""
        return s.coord[m] if self.SuspectResend else self.View(s, m)[0]

    def IsCoord(self, s: SequencerState, m: int) -> bool:
        return self.Coord(s, m) == m

    # The failure detector and who takes part, read through these so that a
    # composition (SEQUENCER over FLUSH, over the ring) reuses the actions:
    # Dead(s) are the members no message reaches, CanReceive(s, m) holds when
    # m takes steps.  Here both read ``crashed``.
    @staticmethod
    def Dead(s: SequencerState) -> frozenset:
        return s.crashed

    @staticmethod
    def CanReceive(s: SequencerState, m: int) -> bool:
        return m not in s.crashed

    def SendTo(self, s: SequencerState, ch: Fn, p: int, q: int, msg: Fn) -> Fn:
        if q in self.Dead(s):
            return ch
        return ch.set((p, q), ch[(p, q)] + (msg,))

    def McastData(self, s: SequencerState, ch: Fn, c: int, snd: int, q: int) -> Fn:
        view = self.View(s, c)
        msg = Data(snd, q)
        dead = self.Dead(s)
        return ch.update({(c, r): ch[(c, r)] + (msg,) for r in view if r not in dead})

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
            coord=Fn({m: 1 for m in M}),
            holes=Fn({m: frozenset() for m in M}),
        )

    # --- actions --------------------------------------------------------------
    def Send(self, s: SequencerState, m: int):
        if not self.CanReceive(s, m) or s.sent[m] >= self.MaxSeq:
            return None
        q = s.sent[m] + 1
        sent = s.sent.set(m, q)
        if self.IsCoord(s, m):
            return s._replace(sent=sent, chan=self.McastData(s, s.chan, m, m, q))
        return s._replace(
            sent=sent,
            fwd=s.fwd.set(m, s.fwd[m] | {q}),
            chan=self.SendTo(s, s.chan, m, self.Coord(s, m), Forward(m, q)),
        )

    def Head(self, s: SequencerState, m: int, p: int, typ: str):
        """The channel p -> m if m takes steps and its head is a ``typ`` message, else None."""
        ch = s.chan[(p, m)]
        return ch if self.CanReceive(s, m) and ch and ch[0]["type"] == typ else None

    def Taking(self, s: SequencerState, m: int, p: int, typ: str):
        """The index in channel p -> m of the ``typ`` message m takes, if m
        takes steps: its head, or with SeparateChannels the first of that
        type; else None."""
        ch = s.chan[(p, m)]
        if not self.CanReceive(s, m) or not ch:
            return None
        if not self.SeparateChannels:
            return 0 if ch[0]["type"] == typ else None
        return next((i for i, x in enumerate(ch) if x["type"] == typ), None)

    def RecvForward(self, s: SequencerState, c: int, p: int):
        i = self.Taking(s, c, p, "FORWARD")
        if i is None:
            return None
        if self.KeepForward and not self.IsCoord(s, c):
            return None  # KeepForward: it waits in the channel until c is coordinator
        ch = s.chan[(p, c)]
        msg = ch[i]
        rest = s.chan.set((p, c), ch[:i] + ch[i + 1:])
        if self.IsCoord(s, c):
            return s._replace(chan=self.McastData(s, rest, c, msg["sender"], msg["seqno"]))
        return s._replace(chan=rest)  # not coordinator: "error and return"

    def RecvData(self, s: SequencerState, m: int, p: int):
        i = self.Taking(s, m, p, "DATA")
        if i is None:
            return None
        ch = s.chan[(p, m)]
        snd, q = ch[i]["sender"], ch[i]["seqno"]
        table = s.recv[m]
        top = table.get(snd, 0)
        dup = snd in table and q <= top
        if dup and self.FillGaps:   # a duplicate only if no seqno of snd up to q is missing
            dup = all(q < h for x, h in s.holes[m] if x == snd)
        # the step's changes, in one _replace (a composition's state has no holes: not named unless FillGaps)
        chan, fwd, delivered, recv = s.chan.set((p, m), ch[:i] + ch[i + 1:]), s.fwd, s.delivered, s.recv
        if snd == m and not self.RetainForward:
            fwd = fwd.set(m, fwd[m] - {q})
        if not dup:
            delivered = delivered.set(m, delivered[m] + ((snd, q),))
            if q >= top:
                recv = recv.set(m, table.set(snd, q))
            if self.FillGaps:
                holes = s.holes.set(m, (s.holes[m] - {(snd, q)}) | {(snd, i) for i in range(top + 1, q)})
                return s._replace(chan=chan, fwd=fwd, delivered=delivered, recv=recv, holes=holes)
        return s._replace(chan=chan, fwd=fwd, delivered=delivered, recv=recv)

    def InstallView(self, s: SequencerState, m: int):
        if m in s.crashed or s.vid[m] >= len(s.views):
            return None
        new = s.views[s.vid[m]]  # views[vid[m] + 1], 1-based
        nc = new[0]
        chan = s.chan
        if s.coord[m] != nc and nc not in s.crashed:
            chan = self.Handover(s, chan, m, nc, new)
        t = s._replace(
            vid=s.vid.set(m, s.vid[m] + 1),
            recv=s.recv.set(m, s.recv[m].restrict(set(new))),
            chan=chan,
            coord=s.coord.set(m, nc),
        )
        if s.holes[m]:
            t = t._replace(holes=s.holes.set(m, frozenset(h for h in s.holes[m] if h[0] in new)))
        return t

    def Handover(self, s: SequencerState, chan: Fn, m: int, nc: int, v: tuple) -> Fn:
        """Channels after m hands its forward-table to its new coordinator
        nc: FORWARDs (to itself, through the loopback, when nc = m) or, with
        ResendFirst and nc = m, DATA multicast at once to view v."""
        if self.ResendFirst and nc == m:
            return self.McastSeq(s, chan, m, v, m, sorted(s.fwd[m]))
        resend = tuple(Forward(m, q) for q in sorted(s.fwd[m]))
        return chan.set((m, nc), chan[(m, nc)] + resend)

    def Suspect(self, s: SequencerState, m: int, c: int):
        """JGroups's handleSuspect (SuspectResend): m takes the first member
        of its view other than c as coordinator and, if that moved it,
        re-sends its forward-table to it at once."""
        if not self.SuspectResend or m in s.crashed or c not in s.crashed:
            return None
        rest = [x for x in self.View(s, m) if x != c]
        if not rest or s.coord[m] == rest[0]:
            return None
        nc = rest[0]
        chan = s.chan if nc in s.crashed else self.Handover(s, s.chan, m, nc, self.View(s, m))
        return s._replace(coord=s.coord.set(m, nc), chan=chan)

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
        if self.SuspectResend:
            for m in M:
                for c in M:
                    t = self.Suspect(s, m, c)
                    if t is not None:
                        yield Label("Suspect", (m, c)), t
        t = self.NewView(s)
        if t is not None:
            yield Label("NewView", ()), t
        yield from self.Crashes(s)

    def Crashes(self, s):
        """Crash(m, lost) for every m and every set ``lost`` of the others."""
        if len(s.crashed) < self.MaxCrashes:
            M = self.Members
            for m in M:
                for lost in subsets(set(M) - {m}):
                    t = self.Crash(s, m, lost)
                    if t is not None:
                        yield Label("Crash", (m, lost)), t

    # --- the explorer's fast encoding ------------------------------------------
    # The methods a kernel transcribes: a subclass that overrides one of them
    # (a test's variant) is searched with ``next``.
    _KERNEL_TRANSCRIBES = ("init", "next", "constraint", "View", "IsCoord", "Dead", "CanReceive", "SendTo", "Head",
                           "McastData", "McastSeq",
                           "Send", "RecvForward", "RecvData", "InstallView", "Crash", "Crashes", "NewView",
                           "Coord", "Handover", "Suspect", "Taking")

    def kernel(self):
        # the kernel encodes the seed's states, where coord is the view's
        # first member and holes are empty: JGroups's variant is searched with next
        if self.SuspectResend or self.FillGaps or self.SeparateChannels:
            return None
        return self.transcribed_kernel(SequencerModel, SequencerKernel)

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
            and all(s.coord[m] in M for m in M)
            and all(x in M and 1 <= q <= self.MaxSeq for m in M for x, q in s.holes[m])
        )


def decode_recv(rows: dict, M: tuple, recv: tuple) -> Fn:
    """The model's ``recv`` of a kernel's (per member, the highest seqno
    delivered per sender, -1 outside the table's domain); ``rows`` memoises
    the tables."""
    d = {}
    for m, row in zip(M, recv):
        g = rows.get(row)
        if g is None:
            g = rows[row] = Fn._of({x: q for x, q in zip(M, row) if q >= 0})
        d[m] = g
    return Fn._of(d)


class SequencerKernel(Kernel):
    """``SequencerModel``'s actions over a lean encoding (the explorer's;
    :mod:`groupcheck.model.core`).  A kernel state is the tuple
    ``(views, vid, crashed, sent, fwd, recv, delivered, chan)`` where
    ``views``, ``crashed`` and each member's ``fwd`` set and ``delivered``
    sequence are the model's own values, ``vid``/``sent`` are tuples indexed
    by member - 1, ``recv`` is a tuple (per member) of tuples (per sender) of
    the highest delivered seqno or -1 outside the table's domain, and
    ``chan`` is a tuple over the pairs ``(p, q)`` (index (p-1)*N + q-1) of
    tuples of message codes: ``2 * (sender * (MaxSeq + 1) + seqno)`` for DATA,
    that plus 1 for FORWARD.  Same actions, guards and order as
    ``SequencerModel.next``; ``decode`` gives its state."""

    def __init__(self, model: SequencerModel) -> None:
        self.model = model
        N, MS = model.N, model.MaxSeq
        self.N, self.MaxSeq = N, MS
        M = model.Members
        K = MS + 1
        self.K = K
        ncodes = 2 * ((N + 1) * K)
        self.msg = [None] * ncodes          # code -> the model's record
        for snd in M:
            for q in range(K):
                self.msg[2 * (snd * K + q)] = Data(snd, q)
                self.msg[2 * (snd * K + q) + 1] = Forward(snd, q)
        self.pair = {(snd, q): (snd, q) for snd in M for q in range(K + 1)}   # shared delivery pairs
        self.ci = {(p, q): (p - 1) * N + (q - 1) for p in M for q in M}
        self.L_send = [Label("Send", (m,)) for m in M]
        self.L_rf = [(c, p, self.ci[(p, c)], Label("RecvForward", (c, p))) for c in M for p in M]
        self.L_rd = [(m, p, self.ci[(p, m)], Label("RecvData", (m, p))) for m in M for p in M]
        self.L_iv = [Label("InstallView", (m,)) for m in M]
        self.L_nv = Label("NewView", ())
        self.crash = []   # per m: [(label, channel indices emptied)]
        for m in M:
            rows = []
            for lost in subsets(set(M) - {m}):
                gone = tuple(i for (p, q), i in sorted(self.ci.items()) if q == m or (p == m and q in lost))
                rows.append((m, Label("Crash", (m, lost)), gone))
            self.crash.append(rows)
        self.pairs = tuple((p, q) for p in M for q in M)
        # decoding memos: 0 recv rows, 1 vid, 2 channel contents, 3 sent,
        # 4 fwd, 5 recv, 6 delivered, 7 chan, 8 coord
        self._memo: list[dict] = [{} for _ in range(9)]
        # the seed's coord is its view's first member, its holes are empty
        self._noholes = Fn({m: frozenset() for m in M})

    def encode(self, s: SequencerState) -> tuple:
        """The kernel state of model state ``s``."""
        M, K = self.model.Members, self.K
        code = {}
        for i, msg in enumerate(self.msg):
            if msg is not None:
                code[msg] = i
        return (
            s.views,
            tuple(s.vid[m] for m in M),
            s.crashed,
            tuple(s.sent[m] for m in M),
            tuple(s.fwd[m] for m in M),
            tuple(tuple(s.recv[m].get(x, -1) for x in M) for m in M),
            tuple(s.delivered[m] for m in M),
            tuple(tuple(code[msg] for msg in s.chan[(p, q)]) for p in M for q in M),
        )

    def decode(self, k: tuple) -> SequencerState:
        # Every dict below is built in key order (members ascending, pairs
        # lexicographic: sort_key's order), so Fn._of skips the sort.
        M = self.model.Members
        memo = self._memo
        views, vid, crashed, sent, fwd, recv, delivered, chan = k
        out = [views]
        for i, v in ((1, vid), (3, sent), (4, fwd), (6, delivered)):
            f = memo[i].get(v)
            if f is None:
                f = memo[i][v] = Fn._of(dict(zip(M, v)))
            out.append(f)
        r = memo[5].get(recv)
        if r is None:
            r = memo[5][recv] = decode_recv(memo[0], M, recv)
        c = memo[7].get(chan)
        if c is None:
            msgs, seqs = self.msg, memo[2]
            d = {}
            for pq, ch in zip(self.pairs, chan):
                t = seqs.get(ch)
                if t is None:
                    t = seqs[ch] = tuple(msgs[x] for x in ch)
                d[pq] = t
            c = memo[7][chan] = Fn._of(d)
        co = memo[8].get((views, vid))
        if co is None:
            co = memo[8][(views, vid)] = Fn._of({m: views[v - 1][0] for m, v in zip(M, vid)})
        return SequencerState(views, out[1], crashed, out[2], out[3], r, out[4], c, co, self._noholes)

    def init(self):
        return [self.encode(s) for s in self.model.init()]

    def next(self, k: tuple):
        views, vid, crashed, sent, fwd, recv, delivered, chan = k
        model = self.model
        N, K = self.N, self.K
        MaxSeq = model.MaxSeq
        out = []
        add = out.append
        nviews = len(views)
        # Send(m)
        for m in range(1, N + 1):
            i = m - 1
            q = sent[i]
            if q >= MaxSeq or m in crashed:
                continue
            q += 1
            sent2 = sent[:i] + (q,) + sent[i + 1:]
            view = views[vid[i] - 1]
            coord = view[0]
            if coord == m:
                ch = list(chan)
                code = (m * K + q) << 1
                base = (m - 1) * N - 1
                for r in view:
                    if r not in crashed:
                        ch[base + r] += (code,)
                add((self.L_send[i], (views, vid, crashed, sent2, fwd, recv, delivered, tuple(ch))))
            else:
                fwd2 = fwd[:i] + (fwd[i] | {q},) + fwd[i + 1:]
                if coord in crashed:
                    ch2 = chan
                else:
                    j = (m - 1) * N + coord - 1
                    ch2 = chan[:j] + (chan[j] + (((m * K + q) << 1) | 1,),) + chan[j + 1:]
                add((self.L_send[i], (views, vid, crashed, sent2, fwd2, recv, delivered, ch2)))
        # RecvForward(c, p)
        keep = model.KeepForward
        for c, p, j, lab in self.L_rf:
            ch = chan[j]
            if not ch or not (ch[0] & 1) or c in crashed:
                continue
            view = views[vid[c - 1] - 1]
            is_coord = view[0] == c
            if keep and not is_coord:
                continue
            rest = list(chan)
            rest[j] = ch[1:]
            if is_coord:
                code = ch[0] - 1   # the DATA code of the same <<sender, seqno>>
                base = (c - 1) * N - 1
                for r in view:
                    if r not in crashed:
                        rest[base + r] += (code,)
            add((lab, (views, vid, crashed, sent, fwd, recv, delivered, tuple(rest))))
        # RecvData(m, p)
        retain = model.RetainForward
        pair = self.pair
        for m, p, j, lab in self.L_rd:
            ch = chan[j]
            if not ch or ch[0] & 1 or m in crashed:
                continue
            snd, q = divmod(ch[0] >> 1, K)
            i = m - 1
            table = recv[i]
            old = table[snd - 1]
            chan2 = chan[:j] + (ch[1:],) + chan[j + 1:]
            fwd2 = fwd
            if snd == m and not retain:
                fwd2 = fwd[:i] + (fwd[i] - {q},) + fwd[i + 1:]
            if old >= 0 and q <= old:   # dup
                add((lab, (views, vid, crashed, sent, fwd2, recv, delivered, chan2)))
            else:
                t2 = table[:snd - 1] + (q,) + table[snd:]
                recv2 = recv[:i] + (t2,) + recv[i + 1:]
                del2 = delivered[:i] + (delivered[i] + (pair[(snd, q)],),) + delivered[i + 1:]
                add((lab, (views, vid, crashed, sent, fwd2, recv2, del2, chan2)))
        # InstallView(m)
        resend_first = model.ResendFirst
        for m in range(1, N + 1):
            i = m - 1
            v = vid[i]
            if v >= nviews or m in crashed:
                continue
            new = views[v]
            nc = new[0]
            chan2 = chan
            if views[v - 1][0] != nc and nc not in crashed:
                qs = sorted(fwd[i])
                if resend_first and nc == m:
                    codes = tuple((m * K + q) << 1 for q in qs)
                    ch = list(chan)
                    base = (m - 1) * N - 1
                    for r in new:
                        if r not in crashed:
                            ch[base + r] += codes
                    chan2 = tuple(ch)
                else:
                    j = (m - 1) * N + nc - 1
                    chan2 = chan[:j] + (chan[j] + tuple(((m * K + q) << 1) | 1 for q in qs),) + chan[j + 1:]
            table = recv[i]
            t2 = tuple(x if (n + 1) in new else -1 for n, x in enumerate(table))
            add((self.L_iv[i], (views, vid[:i] + (v + 1,) + vid[i + 1:], crashed, sent, fwd,
                                recv[:i] + (t2,) + recv[i + 1:], delivered, chan2)))
        # NewView
        if crashed:
            last = views[-1]
            if any(x in crashed for x in last):
                add((self.L_nv, (views + (tuple(x for x in last if x not in crashed),), vid, crashed, sent, fwd,
                                 recv, delivered, chan)))
        # Crash(m, lost)
        if len(crashed) < model.MaxCrashes:
            for m in range(1, N + 1):
                if m in crashed:
                    continue
                crashed2 = crashed | {m}
                for _m, lab, gone in self.crash[m - 1]:
                    ch = list(chan)
                    for j in gone:
                        ch[j] = ()
                    add((lab, (views, vid, crashed2, sent, fwd, recv, delivered, tuple(ch))))
        return out


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
    return TotalOrderAmong(s.delivered.values())


def SurvivorTotalOrder(s) -> bool:
    """Members that have not crashed deliver their common messages in the
    same order (SequencerFlush's property, on any state with ``crashed``)."""
    return TotalOrderAmong(d for m, d in s.delivered.items() if m not in s.crashed)


def TotalOrderAmong(hists) -> bool:
    """The histories ``hists`` deliver their common messages in the same
    order (TotalOrder over every member; SurvivorTotalOrder, in the
    compositions, over the members that have not crashed)."""
    hist = list(hists)
    sets = [set(d) for d in hist]
    for i in range(len(hist)):
        for j in range(i + 1, len(hist)):
            a = [x for x in hist[i] if x in sets[j]]
            b = [x for x in hist[j] if x in sets[i]]
            if a != b:
                return False
    return True
