"""Plain SEQUENCER (spec/Sequencer/Sequencer.tla) as a z3 transition
relation: the flawed variant of "SEQUENCER over FLUSH"
("SEQUENCER coordinator crash without FLUSH"), and the same protocol without
crashes, where total order holds.

Theory of operation
-------------------
Seed 000 (SEQUENCER, Dec 2005): a non-coordinator forwards each multicast
to the coordinator and keeps it in its forward-table; the coordinator
multicasts it as DATA over FIFO channels; a receiver delivers it unless its
received-table says it was delivered already.  The encoding fixes the
member set ``1..N`` and ``MaxCrashes`` (views live in ``MaxCrashes + 1``
slots) and leaves seqnos, histories and channels unbounded:

* ``sent``, received-table entries: one z3 Int per member (pair);
* ``delivered[m]``: two arrays Int -> Int (sender, seqno) and a length;
* ``fwd[m]`` (a set of seqnos): an array Int -> Bool; ``Ascending(fwd[m])``
  (the re-send at a view change) is a fresh strictly increasing array
  ``R[0 .. k-1]`` of its members with a rank ``rk[q]``, ``R[rk[q]] = q``, for
  every member ``q`` (so R enumerates exactly the set);
* ``chan[<<p, q>>]`` (a FIFO channel): arrays Int -> Bool (is DATA),
  Int -> Int (sender), Int -> Int (seqno) and head/tail indices; ``Head`` is
  the element at ``hd``, ``Tail`` increments ``hd``, ``Append`` stores at
  ``tl``; the content is ``hd .. tl - 1`` (``value`` leaves ``hd`` free);
* ``views``: ``MaxCrashes + 1`` slots of member sets and their count.
  Every view is the first view ``<<1, ..., N>>`` without some members
  (``SelectSeq``), so a set determines the sequence and ``Coord`` is the
  set's least member.  ``NewView`` also requires a free slot; in every
  reachable state it has one (each view change removes a crashed member).

``MaxSeq`` is a bound of the model checker only: dropped for proofs (Send
is always enabled), kept (``max_seq``) when the encoding is compared with a
bounded model.  Only the seed is encoded (``KeepForward``, ``ResendFirst``,
``RetainForward`` all FALSE).  The lemmas are explained in docs/proofs.md,
"SEQUENCER without FLUSH (seed 000)".
"""

from __future__ import annotations

from itertools import combinations, product
from typing import Any
import z3
from ...core import Label
from ...sequencer import Data, Forward, SequencerModel, SequencerState
from ...values import Fn
from ..prover import Encoding, readers, select, unchanged, z3_set

I = z3.IntSort()
B = z3.BoolSort()


def SurvivorTotalOrder(s) -> bool:
    """Members that have not crashed deliver their common messages in the
    same order (SequencerFlush's SurvivorTotalOrder, on Sequencer's state)."""
    live = [d for m, d in s.delivered.items() if m not in s.crashed]
    sets = [set(d) for d in live]
    for i in range(len(live)):
        for j in range(i + 1, len(live)):
            if [x for x in live[i] if x in sets[j]] != [x for x in live[j] if x in sets[i]]:
                return False
    return True


class SurvivorSequencerModel(SequencerModel):
    """The spec's model with SurvivorTotalOrder among its invariants (the
    property the flawed variant is judged on)."""

    @property
    def invariants(self):
        out = dict(super().invariants)
        out["SurvivorTotalOrder"] = SurvivorTotalOrder
        return out


class Chan:
    """A FIFO channel's z3 terms: head, tail, and the three field arrays."""

    __slots__ = ("hd", "tl", "ty", "sn", "sq")

    def __init__(self, hd, tl, ty, sn, sq):
        self.hd, self.tl, self.ty, self.sn, self.sq = hd, tl, ty, sn, sq

    def nonempty(self):
        return self.hd < self.tl

    def pop(self) -> "Chan":
        return Chan(self.hd + 1, self.tl, self.ty, self.sn, self.sq)

    def append(self, is_data, s, q) -> "Chan":
        return Chan(self.hd, self.tl + 1, z3.Store(self.ty, self.tl, z3.BoolVal(is_data)),
                    z3.Store(self.sn, self.tl, s), z3.Store(self.sq, self.tl, q))

    def cleared(self) -> "Chan":
        return Chan(self.tl, self.tl, self.ty, self.sn, self.sq)

    @staticmethod
    def ite(c, a: "Chan", b: "Chan") -> "Chan":
        return Chan(*[z3.If(c, getattr(a, f), getattr(b, f)) for f in Chan.__slots__])

    def eq(self, o: "Chan"):
        return z3.And(*[getattr(self, f) == getattr(o, f) for f in Chan.__slots__])


class SequencerRelation(Encoding):
    protocol = "sequencerflush"
    # every query first in a context of its own (engine.first_attempts):
    # in the process's shared context z3's search follows the terms earlier
    # queries created, and Send x ForwardChannel2 ran past 60 s once; asked
    # fresh, N = 3's whole NoCrash matrix takes 1.2 s of z3 CPU
    # (bench/prove.py; docs/proofs.md, SEQUENCER).  Its limit is the query's.
    first_attempts = ({},)
    first_rlimit = None

    def __init__(self, N: int = 3, max_crashes: int = 1, *, max_seq: int | None = None, variant: str = "",
                 reach_max_seq: int = 1) -> None:
        if N < 2:
            raise ValueError("sequencer encoding: need N >= 2")
        if not 0 <= max_crashes < N:
            raise ValueError(f"sequencer encoding: need 0 <= MaxCrashes < N, got {max_crashes}")
        self.N, self.MC = N, max_crashes
        self.members = N
        self.M = tuple(range(1, N + 1))
        self.K = max_crashes + 1         # view slots
        self.max_seq = max_seq
        self.reach_max_seq = reach_max_seq
        self.expect_cti = max_crashes > 0
        self.variant = variant or ("NoFlush" if max_crashes > 0 else "NoCrash")
        # the property: survivors agree on order (uniform TotalOrder without
        # crashes, where every member is a survivor; and at N = 2, where one
        # survivor cannot disagree with itself and only the uniform property
        # breaks: the manifest's Pair)
        self.properties = ("SurvivorTotalOrder",) if max_crashes > 0 and N > 2 else ("TotalOrder",)
        # the manifest's CoordCrash (7,842 states) is explored whole; at N = 4
        # the explorer meets the shortest SurvivorTotalOrder violation (9 steps)
        # only after about 10 s of breadth-first search, beyond 20,000 states
        self.reach_max_states = 20_000 if N <= 3 else 300_000
        self._k = 0

    @classmethod
    def from_constants(cls, c: dict) -> "SequencerRelation":
        for f in ("KeepForward", "ResendFirst", "RetainForward"):
            if c.get(f):
                raise ValueError(f"sequencer encoding: only the seed is encoded ({f} = TRUE is not)")
        return cls(int(c["N"]), int(c["MaxCrashes"]), max_seq=int(c["MaxSeq"]),
                   reach_max_seq=int(c["MaxSeq"]))

    def _constants(self, max_seq: int) -> dict:
        return {"N": self.N, "MaxSeq": max_seq, "MaxCrashes": self.MC, "KeepForward": False,
                "ResendFirst": False, "RetainForward": False}

    def model(self) -> SequencerModel:
        """The bounded model of the same size (MaxSeq as encoded, 1 by default:
        the manifest's CoordCrash / Pair)."""
        return SurvivorSequencerModel(self._constants(self.reach_max_seq))

    def bounded(self, S):
        return z3.And(*[S["sent"][p] <= self.reach_max_seq for p in self.M])

    # --- state --------------------------------------------------------------------
    def fresh(self, t: str) -> dict[str, Any]:
        M, K = self.M, self.K
        S: dict[str, Any] = {"tag": t}
        S["nv"] = z3.Int(f"{t}_nv")
        S["vw"] = {(i, x): z3.Bool(f"{t}_vw_{i}_{x}") for i in range(1, K + 1) for x in M}
        S["vid"] = {m: z3.Int(f"{t}_vid_{m}") for m in M}
        S["cr"] = {m: z3.Bool(f"{t}_cr_{m}") for m in M}
        S["sent"] = {m: z3.Int(f"{t}_sent_{m}") for m in M}
        S["fwd"] = {m: z3.Array(f"{t}_fwd_{m}", I, B) for m in M}
        S["rin"] = {(m, x): z3.Bool(f"{t}_rin_{m}_{x}") for m in M for x in M}
        S["rv"] = {(m, x): z3.Int(f"{t}_rv_{m}_{x}") for m in M for x in M}
        S["dlen"] = {m: z3.Int(f"{t}_dlen_{m}") for m in M}
        S["ds"] = {m: z3.Array(f"{t}_ds_{m}", I, I) for m in M}
        S["dq"] = {m: z3.Array(f"{t}_dq_{m}", I, I) for m in M}
        S["chan"] = {(p, q): Chan(z3.Int(f"{t}_hd_{p}_{q}"), z3.Int(f"{t}_tl_{p}_{q}"),
                                  z3.Array(f"{t}_ty_{p}_{q}", I, B), z3.Array(f"{t}_sn_{p}_{q}", I, I),
                                  z3.Array(f"{t}_sq_{p}_{q}", I, I)) for p in M for q in M}
        return S

    _fields = ("nv", "vw", "vid", "cr", "sent", "fwd", "rin", "rv", "dlen", "ds", "dq")

    def _frame(self, S, T, upd: dict) -> z3.BoolRef:
        """T equals S updated by ``upd`` (field -> {key: term}, or "nv" -> term);
        every other constant UNCHANGED."""
        u = upd.get("chan", {})
        return z3.And(*unchanged(S, T, upd, self._fields),
                      *[T["chan"][k].eq(u.get(k, c)) for k, c in S["chan"].items()])

    # --- the spec's operators ---------------------------------------------------------
    def _in_view(self, S, i, x):
        """x \\in Range(views[i]) for a symbolic slot index i."""
        return z3.Or(*[z3.And(i == j, S["vw"][j, x]) for j in range(1, self.K + 1)])

    def _coord_is(self, S, i, x):
        """Coord(views[i]) = x: x is the least member of view i."""
        return z3.And(self._in_view(S, i, x), *[z3.Not(self._in_view(S, i, y)) for y in self.M if y < x])

    def _mcast(self, S, ch: dict, c, s, q, when=True) -> dict:
        """McastData(ch, c, s, q) if ``when``: DATA <<s, q>> appended on c -> r for
        every live r in c's view."""
        out = dict(ch)
        for r in self.M:
            cur = ch.get((c, r), S["chan"][c, r])
            go = z3.And(when, self._in_view(S, S["vid"][c], r), z3.Not(S["cr"][r]))
            out[c, r] = Chan.ite(go, cur.append(True, s, q), cur)
        return out

    def _rv_of(self, S, m, s):
        """recv[m][s] for a symbolic sender s (0 outside 1..N: unreachable)."""
        return select(s, ((x, S["rv"][m, x]) for x in self.M), z3.IntVal(0))

    def _rin_of(self, S, m, s):
        return z3.Or(*[z3.And(s == x, S["rin"][m, x]) for x in self.M])

    # --- Init ---------------------------------------------------------------------------
    def init(self, S) -> z3.BoolRef:
        M = self.M
        cs = [S["nv"] == 1] + [S["vw"][1, x] for x in M]
        for m in M:
            cs += [S["vid"][m] == 1, z3.Not(S["cr"][m]), S["sent"][m] == 0,
                   S["fwd"][m] == z3.K(I, z3.BoolVal(False)), S["dlen"][m] == 0]
            for x in M:
                cs += [S["rin"][m, x], S["rv"][m, x] == 0]
        for c in S["chan"].values():
            cs += [c.hd == 0, c.tl == 0]
        return z3.And(*cs)

    # --- actions --------------------------------------------------------------------------
    def actions(self, S, T):
        M, fr, K = self.M, self._frame, self.K
        for m in M:  # Send(m): one frame, the branches as conditional updates
            q = S["sent"][m] + 1
            g = [z3.Not(S["cr"][m])]
            if self.max_seq is not None:
                g.append(S["sent"][m] < self.max_seq)
            isc = self._coord_is(S, S["vid"][m], m)
            chans = self._mcast(S, {}, m, m, q, isc)     # IsCoord(m): McastData
            for c in M:                                  # else SendTo(Coord(View(m)))
                if c != m:
                    ch = chans[m, c]
                    to_c = z3.And(z3.Not(isc), self._coord_is(S, S["vid"][m], c), z3.Not(S["cr"][c]))
                    chans[m, c] = Chan.ite(to_c, ch.append(False, m, q), ch)
            yield Label("Send", (m,)), z3.And(*g, fr(S, T, {
                "sent": {m: q}, "fwd": {m: z3.If(isc, S["fwd"][m], z3.Store(S["fwd"][m], q, True))},
                "chan": chans}))
        for c, p in product(M, M):  # RecvForward(c, p)
            ch = S["chan"][p, c]
            s, q = ch.sn[ch.hd], ch.sq[ch.hd]
            rest = {(p, c): ch.pop()}
            isc = self._coord_is(S, S["vid"][c], c)
            yield Label("RecvForward", (c, p)), z3.And(
                z3.Not(S["cr"][c]), ch.nonempty(), z3.Not(ch.ty[ch.hd]),
                fr(S, T, {"chan": self._mcast(S, rest, c, s, q, isc)}))
        for m, p in product(M, M):  # RecvData(m, p)
            ch = S["chan"][p, m]
            s, q = ch.sn[ch.hd], ch.sq[ch.hd]
            dup = z3.And(self._rin_of(S, m, s), q <= self._rv_of(S, m, s))
            rest = {"chan": {(p, m): ch.pop()}}
            deliver = {"rin": {(m, x): z3.Or(S["rin"][m, x], s == x) for x in M},
                       "rv": {(m, x): z3.If(s == x, q, S["rv"][m, x]) for x in M},
                       "dlen": {m: S["dlen"][m] + 1},
                       "ds": {m: z3.Store(S["ds"][m], S["dlen"][m], s)},
                       "dq": {m: z3.Store(S["dq"][m], S["dlen"][m], q)}}
            # fwd' = fwd[m] \ {q} when s = m
            rem = {"fwd": {m: z3.If(s == m, z3.Store(S["fwd"][m], q, False), S["fwd"][m])}}
            for f, u in deliver.items():   # unless dup
                for key, v in u.items():
                    u[key] = z3.If(dup, S[f][key], v)
            body = fr(S, T, {**rest, **rem, **deliver})
            yield Label("RecvData", (m, p)), z3.And(z3.Not(S["cr"][m]), ch.nonempty(), ch.ty[ch.hd], body)
        for m in M:  # InstallView(m)
            # Ascending(fwd[m]) as a fresh array R[0 .. k-1], strictly increasing,
            # of members of fwd[m], with a rank rk[q] < k and R[rk[q]] = q for every
            # q in fwd[m] (so R enumerates exactly fwd[m], which is finite: lemma
            # Forwarded)
            self._k += 1
            R = z3.Array(f"R_iv_{m}_{self._k}", I, I)
            rk = z3.Array(f"rk_iv_{m}_{self._k}", I, I)
            k = z3.Int(f"k_iv_{m}_{self._k}")
            j, q = z3.Int(f"{S['tag']}_j_iv_{m}"), z3.Int(f"{S['tag']}_q_iv_{m}")
            fw = S["fwd"][m]
            asc = z3.And(0 <= k, z3.ForAll([j], z3.Implies(z3.And(0 <= j, j < k), z3.And(
                fw[R[j]], z3.Implies(j + 1 < k, R[j] < R[j + 1]))), patterns=[R[j]]),
                z3.ForAll([q], z3.Implies(fw[q], z3.And(0 <= rk[q], rk[q] < k, R[rk[q]] == q)),
                          patterns=[fw[q]]))
            alts = []
            for i in range(1, K):
                for oc, nc in product(M, M):
                    pre = z3.And(S["vid"][m] == i, self._coord_is(S, i, oc), self._coord_is(S, i + 1, nc))
                    upd = {"vid": {m: S["vid"][m] + 1},
                           "rin": {(m, x): z3.And(S["rin"][m, x], S["vw"][i + 1, x]) for x in M}}
                    if oc != nc:
                        ch = S["chan"][m, nc]
                        resent = Chan(ch.hd, ch.tl + k,
                                      z3.Lambda([j], z3.If(j < ch.tl, ch.ty[j], False)),
                                      z3.Lambda([j], z3.If(j < ch.tl, ch.sn[j], m)),
                                      z3.Lambda([j], z3.If(j < ch.tl, ch.sq[j], R[j - ch.tl])))
                        upd["chan"] = {(m, nc): Chan.ite(S["cr"][nc], ch, resent)}
                    alts.append(z3.And(pre, fr(S, T, upd)))
            yield Label("InstallView", (m,)), z3.And(z3.Not(S["cr"][m]), S["vid"][m] < S["nv"], asc,
                                                     z3.Or(*alts))
        # NewView: the last view without its crashed members (in the next slot)
        alts = []
        for i in range(1, K):
            alts.append(z3.And(S["nv"] == i, z3.Or(*[z3.And(S["vw"][i, x], S["cr"][x]) for x in M]),
                               fr(S, T, {"nv": S["nv"] + 1,
                                         "vw": {(i + 1, x): z3.And(S["vw"][i, x], z3.Not(S["cr"][x]))
                                                for x in M}})))
        yield Label("NewView", ()), z3.Or(*alts) if alts else z3.BoolVal(False)
        ncrashed = z3.Sum(*[z3.If(S["cr"][x], 1, 0) for x in M])
        for m in M:  # Crash(m, lost)
            others = [x for x in M if x != m]
            for k in range(len(others) + 1):
                for lost in combinations(others, k):
                    lost = frozenset(lost)
                    chans = {(p, q): S["chan"][p, q].cleared() for p, q in product(M, M)
                             if q == m or (p == m and q in lost)}
                    yield Label("Crash", (m, lost)), z3.And(
                        z3.Not(S["cr"][m]), ncrashed < self.MC,
                        fr(S, T, {"cr": {m: True}, "chan": chans}))

    # --- model states <-> z3 values --------------------------------------------------------
    def value(self, S, s: SequencerState) -> z3.BoolRef:
        M = self.M
        if len(s.views) > self.K:
            raise ValueError(f"sequencer encoding: {len(s.views)} views, {self.K} slots")
        cs = [S["nv"] == len(s.views)]
        for i, v in enumerate(s.views, 1):
            if list(v) != sorted(v):
                raise ValueError(f"sequencer encoding: view {v} is not in member order")
            cs += [S["vw"][i, x] == (x in v) for x in M]
        for m in M:
            cs += [S["vid"][m] == s.vid[m], S["cr"][m] == (m in s.crashed), S["sent"][m] == s.sent[m]]
            cs.append(S["fwd"][m] == z3_set(s.fwd[m]))
            for x in M:
                cs.append(S["rin"][m, x] == (x in s.recv[m]))
                if x in s.recv[m]:
                    cs.append(S["rv"][m, x] == s.recv[m][x])
            d = s.delivered[m]
            cs.append(S["dlen"][m] == len(d))
            for i, (x, q) in enumerate(d):
                cs += [S["ds"][m][i] == x, S["dq"][m][i] == q]
        for (p, q), ch in S["chan"].items():
            msgs = s.chan[(p, q)]
            if not s.crashed:
                # the canonical representation without a crash (lemma Channels): the
                # array keeps the channel's history from index 0
                if p == 1:
                    past = [Data(x, k) for x, k in s.delivered[q]]
                elif q == 1:
                    past = [Forward(p, k) for k in range(1, s.sent[p] - len(msgs) + 1)]
                else:
                    past = []
                msgs = tuple(past) + tuple(msgs)
                cs += [ch.hd == len(past), ch.tl == len(msgs)]
                base = 0
            else:
                cs.append(ch.tl - ch.hd == len(msgs))
                base = ch.hd
            for i, msg in enumerate(msgs):
                cs += [ch.ty[base + i] == (msg["type"] == "DATA"), ch.sn[base + i] == msg["sender"],
                       ch.sq[base + i] == msg["seqno"]]
        return z3.And(*cs)

    def decode(self, m: z3.ModelRef, S) -> SequencerState:
        M = self.M
        ev, b, n = readers(m)
        nv = n(S["nv"])
        views = tuple(tuple(x for x in M if b(S["vw"][i, x])) for i in range(1, nv + 1))
        chan = {}
        for (p, q), ch in S["chan"].items():
            hd, tl = n(ch.hd), n(ch.tl)
            chan[(p, q)] = tuple((Data if b(ch.ty[i]) else Forward)(n(ch.sn[i]), n(ch.sq[i]))
                                 for i in range(hd, tl))
        return SequencerState(
            views=views,
            vid=Fn({x: n(S["vid"][x]) for x in M}),
            crashed=frozenset(x for x in M if b(S["cr"][x])),
            sent=Fn({x: n(S["sent"][x]) for x in M}),
            fwd=Fn({x: frozenset(k for k in range(1, n(S["sent"][x]) + 1) if b(S["fwd"][x][k])) for x in M}),
            recv=Fn({x: Fn({y: n(S["rv"][x, y]) for y in M if b(S["rin"][x, y])}) for x in M}),
            delivered=Fn({x: tuple((n(S["ds"][x][i]), n(S["dq"][x][i])) for i in range(max(n(S["dlen"][x]), 0)))
                          for x in M}),
            chan=Fn(chan),
            # the seed: coord is the view's first member, no holes
            coord=Fn({x: views[n(S["vid"][x]) - 1][0] for x in M}),
            holes=Fn({x: frozenset() for x in M}),
        )

    def pretty(self, state) -> dict:
        return {k: repr(v) for k, v in state._asdict().items()}
