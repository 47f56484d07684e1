"""SEQUENCER over FLUSH (spec/SequencerFlush/SequencerFlush.tla) as a z3
transition relation.

Theory of operation
-------------------
The spec's sixteen variables, at a fixed member set ``1..N``, with every
sequence, set of seqnos and channel unbounded:

* ``views``: a length ``nv`` and, per member x, an array Int -> Bool
  (``x`` is in the i-th view).  Every view is a subsequence of the first view
  ``<<1, ..., N>>`` (SendView's ``SelectSeq(views[v], Alive)``), so a view is
  determined by its members; ``value`` refuses a view that is not ascending.
  ``Coord(views[i])`` is the least member of view i;
* ``delivered[m]``, ``log[m]``: two arrays Int -> Int (sender, seqno) and a
  length; ``closed[m]``: an array and a length;
* ``fwd[m]``: an array Int -> Bool (any set of seqnos);
* ``recv[m]``: per sender a domain bit and a value (``(s :> q) @@ recv``
  puts s back into the domain, ``Moved`` restricts it to the new view);
* ``chan[<<p, q>>]``: a FIFO, an array Int -> Msg with head and tail indices
  (the messages are at hd+1 .. tl).  Msg is a z3 datatype with every field of
  every message type (type, sender, seqno, view, and a digest: a length and
  two arrays); ``value`` fixes only the fields the message type has;
* ``completed[c]``: per member q a presence bit and a digest.  The spec's set
  of <<q, digest>> could hold two digests of one q; ``value`` refuses such a
  state (none occurs in the manifest's models the tests explore) and
  ReceiveFlushCompleted overwrites q's digest;
* the rest (vid, crashed, sent, phase, blocked, flushInit, flushOks, ndel):
  one z3 Int or Bool per member (per pair for flushOks).

The sequence operators over unbounded sequences are encoded with fresh
constants constrained by universally quantified formulas over positions:
``SelectSeq`` (Purged, Crash) by a running count array (kept message i goes
to position cnt[i]); ``Absorb`` (the digest taken through the duplicate
check) by running arrays of the received-table and forward-table and a
running count of delivered entries; ``Ascending(fwd)`` (the re-sent
forward-table) by a strictly increasing segment and an index array that
places every seqno of the set in it.  ``LastView`` is a fresh index whose
message is a VIEW with no VIEW after it.  ``Longest`` (SendView's digest) is a
choice among the live digests of maximal length (the spec's CHOOSE; the
Python model refuses two different longest digests).

MaxSeq is a model-checker bound: it is dropped (``max_seq=None``) for the
proofs and kept when the encoding is compared with a bounded model.
MaxCrashes is kept (crashes are bounded as in the model).
"""

from __future__ import annotations

from itertools import product
from typing import Any
import z3
from ...core import Label
from ...sequencer import subsets
from ...sequencerflush import NO_INIT, SequencerFlushModel, SequencerFlushState
from ...values import Fn
from ..prover import Encoding, first, join, multipattern, readers, select, unchanged, z3_set
from ..flush.relation import PHASE_NO as PH, FlushOps, decoded_msg, decoded_phase, stale

I = z3.IntSort()
AII = z3.ArraySort(I, I)
AIB = z3.ArraySort(I, z3.BoolSort())

Msg = z3.Datatype("SFMsg")
Msg.declare("mk", ("ty", I), ("snd", I), ("seq", I), ("view", I), ("dl", I), ("dS", AII), ("dQ", AII))
Msg = Msg.create()

TYPES = ("FORWARD", "DATA", "VIEW", "START_FLUSH", "FLUSH_OK", "FLUSH_COMPLETED", "STOP_FLUSH")
TY = {t: i for i, t in enumerate(TYPES)}
FLUSH_TY = (TY["START_FLUSH"], TY["FLUSH_OK"], TY["FLUSH_COMPLETED"], TY["STOP_FLUSH"])
TYPES_F = (TY["DATA"], FLUSH_TY)     # (flush.stale's numbering of DATA and the flush types)
ZA = z3.K(I, z3.IntVal(0))


def _mk(ty: str, snd=0, seq=0, view=0, dl=0, dS=ZA, dQ=ZA):
    return Msg.mk(TY[ty], snd, seq, view, dl, dS, dQ)


class SequencerFlushRelation(FlushOps, Encoding):
    protocol = "sequencerflush"
    # The quantified sequence operators (running arrays indexed by i and
    # i - 1) are matching loops for E-matching under z3's default patterns:
    # each of their quantifiers has an explicit pattern on a term its
    # instances do not create (the source array at i), so E-matching stays
    # finite and model-based instantiation does the rest.  Per instance:
    # an action's disjunction of instances made z3 answer unknown where each
    # instance alone is proved in milliseconds.
    solver_params: dict = {}
    split_instances = True

    def __init__(self, N: int = 2, *, max_crashes: int = 1, senders: frozenset | None = None,
                 uniform: bool = False, resend_always: bool = False, resent_first: bool = False,
                 max_seq: int | None = None, variant: str = "Fixed",
                 reach_senders: frozenset | None = None, reach_max_seq: int = 1,
                 properties: tuple[str, ...] | None = None) -> None:
        self.N = N
        self.members = N
        self.M = tuple(range(1, N + 1))
        self.MC = max_crashes
        self.Senders = frozenset(self.M) if senders is None else frozenset(senders)
        self.UD, self.RA, self.RF = uniform, resend_always, resent_first
        self.max_seq = max_seq
        self.variant = variant
        self.expect_cti = False
        self.reach_senders = self.Senders if reach_senders is None else frozenset(reach_senders)
        self.reach_max_seq = reach_max_seq
        if properties is not None:
            # (N = 3: NoDuplicates alone; SurvivorTotalOrder is then neither
            # a property nor a lemma: not a premise anything rests on)
            self.properties = tuple(properties)
        self._k = 0
        if N >= 3:
            # (engine.Encoding.split_goals, first_params) the N >= 3 lemmas
            # are conjunctions over channels and members: at N = 3 their
            # negations ran out of time whole, and z3's model-based
            # instantiation wandered on parts E-matching alone proves at once
            # (20 s each: a part E-matching proves in 2 s alone took over 5 s
            # with the rest of the matrix running beside it; FlushCompleted(2)
            # x Follow, 0.6 s alone, ran out of 20 s after other queries of
            # the process, and was proved with another seed)
            self.split_goals = True
            self.first_attempts = tuple({"smt.mbqi": False, "smt.random_seed": k} for k in (0, 1, 2))
            self.first_rlimit = 100_000_000
            self.retry_fresh = True    # (engine._solve_first and registry._retry_rows)

    @classmethod
    def from_constants(cls, c: dict) -> "SequencerFlushRelation":
        """The encoding of a manifest model's constants (MaxSeq kept)."""
        return cls(int(c["N"]), max_crashes=int(c["MaxCrashes"]), senders=frozenset(c["Senders"]),
                   uniform=bool(c["UniformDelivery"]), resend_always=bool(c["ResendAlways"]),
                   resent_first=bool(c.get("ResentFirst", False)), max_seq=int(c["MaxSeq"]),
                   reach_senders=frozenset(c["Senders"]), reach_max_seq=int(c["MaxSeq"]))

    def constants(self, max_seq: int) -> dict:
        return {"N": self.N, "MaxSeq": max_seq, "MaxCrashes": self.MC, "Senders": self.reach_senders,
                "UniformDelivery": self.UD, "ResendAlways": self.RA, "ResentFirst": self.RF}

    def model(self) -> SequencerFlushModel:
        return SequencerFlushModel(self.constants(self.reach_max_seq))

    def bounded(self, S):
        return z3.And(*[S["sent"][p] <= (self.reach_max_seq if p in self.reach_senders else 0)
                        for p in self.M])

    # --- state ------------------------------------------------------------------
    _per_member = {"vid": I, "crashed": z3.BoolSort(), "sent": I, "fwd": AIB, "dS": AII, "dQ": AII,
                   "dL": I, "lS": AII, "lQ": AII, "lL": I, "cA": AII, "cL": I, "phase": I,
                   "blocked": z3.BoolSort(), "fi": I, "ndel": I, "vin": AIB,
                   # ghosts (history variables, N = 3's SurvivorTotalOrder): np, the DATA of
                   # its view m has taken; dp[j], the stamp of the DATA delivered at j
                   "np": I, "dp": AII}
    _per_pair = {"rdom": z3.BoolSort(), "rval": I, "oks": z3.BoolSort(), "comp": z3.BoolSort(),
                 "compS": AII, "compQ": AII, "compL": I, "ch": z3.ArraySort(I, Msg), "hd": I, "tl": I}
    _fields = ("nv",) + tuple(_per_member) + tuple(_per_pair)

    def fresh(self, t: str) -> dict[str, Any]:
        M = self.M
        S: dict[str, Any] = {"tag": t, "nv": {(): z3.Int(f"{t}_nv")}}
        for f, srt in self._per_member.items():
            S[f] = {m: z3.Const(f"{t}_{f}_{m}", srt) for m in M}
        for f, srt in self._per_pair.items():
            S[f] = {(p, q): z3.Const(f"{t}_{f}_{p}_{q}", srt) for p in M for q in M}
        return S

    def _frame(self, S, T, upd: dict) -> z3.BoolRef:
        return z3.And(*unchanged(S, T, upd, self._fields))

    def _aux(self, name: str, srt):
        self._k += 1
        return z3.Const(f"aux_{name}_{self._k}", srt)

    # --- helpers (the spec's operators) -----------------------------------------------
    def _coord(self, S, i):
        """Coord(views[i]): the least member of view i (0 if empty)."""
        return first(((S["vin"][x][i], x) for x in self.M), z3.IntVal(0))

    def _is_coord(self, S, m):
        return self._coord(S, S["vid"][m]) == m

    def _in_view(self, S, x, i):
        return S["vin"][x][i]

    def _head(self, S, p, q):
        return S["ch"][q, p][S["hd"][q, p] + 1]

    # channels as a Python dict (p, q) -> (arr, hd, tl); ops return new dicts
    def _chan(self, S) -> dict:
        return {e: (S["ch"][e], S["hd"][e], S["tl"][e]) for e in S["ch"]}

    @staticmethod
    def _append(c, msg):
        a, h, t = c
        return (z3.Store(a, t + 1, msg), h, t + 1)

    @staticmethod
    def _ite(cond, c1, c2):
        return tuple(z3.If(cond, x, y) for x, y in zip(c1, c2))

    def _flush_msg(self, S, p, c, ty: str, from_member=True):
        """In(p, c) and the guard that it is a message of type ty of p's
        view (from_member: from a c not gone, _flush_msg_from)."""
        h = self._head(S, p, c)
        g = [self.alive(S, p), self.has(S, p, c), Msg.ty(h) == TY[ty], Msg.view(h) == S["vid"][p]]
        return h, g + ([self.alive(S, c)] if from_member else [])

    def _taken(self, S, p, q, upd: dict | None = None) -> dict:
        """The updates ``upd`` and Take(p, q): the head of q -> p taken."""
        return join(self._chan_upd(self._take(self._chan(S), p, q)), upd or {})

    def _take(self, ch: dict, p, q) -> dict:
        ch = dict(ch)
        a, h, t = ch[q, p]
        ch[q, p] = (a, h + 1, t)
        return ch

    def _multi(self, ch: dict, p, R, msg) -> dict:
        """Multi(ch, p, R, msg); R(q) a formula."""
        ch = dict(ch)
        for q in self.M:
            if q != p:
                ch[p, q] = self._ite(R(q), self._append(ch[p, q], msg), ch[p, q])
        return ch

    def _mcast_data(self, S, ch: dict, c, s, q) -> dict:
        ch = dict(ch)
        msg = _mk("DATA", s, q, S["vid"][c], dl=S["lL"][c] + 1)   # dl: the stamp (ghost)
        for r in self.M:
            cond = z3.And(self._in_view(S, r, S["vid"][c]), self.alive(S, r))
            ch[c, r] = self._ite(cond, self._append(ch[c, r], msg), ch[c, r])
        return ch

    def _filter(self, c, keep, cs: list, name: str):
        """SelectSeq of the FIFO c by keep(i, msg) (i: the array index),
        as a fresh FIFO (arr, 0, k); constraints go to cs."""
        a0, h, t = c
        a = self._aux(f"{name}_a", z3.ArraySort(I, Msg))   # named: the pattern below may not hold an If
        cs.append(a == a0)
        b = self._aux(f"{name}_b", z3.ArraySort(I, Msg))
        cnt = self._aux(f"{name}_cnt", AII)
        i = z3.Int(f"i_{name}_{self._k}")
        k = keep(i, a[i])
        cs.append(cnt[h] == 0)
        # 0 <= cnt[i] <= i - h follows from the recurrence by induction on i,
        # which z3 does not do: stated, it bounds the result's length
        cs.append(z3.ForAll([i], z3.Implies(z3.And(h < i, i <= t), z3.And(
            cnt[i] == cnt[i - 1] + z3.If(k, 1, 0), 0 <= cnt[i], cnt[i] <= i - h,
            z3.Implies(k, b[cnt[i]] == a[i]))), patterns=[a[i]]))
        n = z3.If(h < t, cnt[t], 0)
        cs.append(z3.Implies(h < t, z3.And(0 <= cnt[t], cnt[t] <= t - h)))   # the instance at t
        # a filter that keeps every message is the identity, one that keeps
        # none the empty sequence (by induction on i, stated)
        # (as disjunctions with a witness: some message is dropped (kept), or
        # the result is the source (empty); no quantifier in a premise)
        k2 = z3.Int(f"k2_{name}_{self._k}")
        d, e = self._aux(f"{name}_drop", I), self._aux(f"{name}_kept", I)
        cs.append(z3.Or(z3.And(h < d, d <= t, z3.Not(keep(d, a[d]))), z3.And(
            n == z3.If(h < t, t - h, 0),
            z3.ForAll([k2], z3.Implies(z3.And(h < k2, k2 <= t), cnt[k2] == k2 - h), patterns=[a[k2]]))))
        cs.append(z3.Or(z3.And(h < e, e <= t, keep(e, a[e])), n == 0))
        # the inverse: every position k of the result holds a kept message
        # src[k] of the source (by induction on i from the recurrence: cnt
        # grows by one exactly at the kept i; stated, as z3 does no induction)
        src = self._aux(f"{name}_src", AII)
        k_ = z3.Int(f"k_{name}_{self._k}")
        cs.append(z3.ForAll([k_], z3.Implies(z3.And(1 <= k_, k_ <= n), z3.And(
            h < src[k_], src[k_] <= t, cnt[src[k_]] == k_, keep(src[k_], a[src[k_]]), b[k_] == a[src[k_]])),
            patterns=[b[k_]]))
        if self.N >= 3:
            # the filter keeps the source's order: src is increasing (cnt is
            # non-decreasing, by induction on i, and cnt[src[k]] = k; stated,
            # checked by z3 in tests/test_proofs_sequencerflush.py).  Only at
            # N >= 3, where FwdOrder reads it: N = 2's queries stay as measured.
            k1, k2 = z3.Ints(f"k1_{name}_{self._k} k2_{name}_{self._k}")
            cs.append(z3.ForAll([k1, k2], z3.Implies(z3.And(1 <= k1, k1 < k2, k2 <= n), src[k1] < src[k2]),
                                patterns=[multipattern(b[k1], b[k2])]))
        return (b, z3.IntVal(0), n)

    def _purged(self, S, ch: dict, p, v, cs: list) -> dict:
        ch = dict(ch)
        for q in self.M:
            ch[q, p] = self._filter(ch[q, p], lambda i, x: z3.Or(Msg.ty(x) == TY["FORWARD"], Msg.view(x) > v),
                                    cs, f"purge{q}{p}")
        return ch

    def _absorb(self, S, m, D, cs: list, name: str) -> dict:
        """Absorb(m, st, D): the updates of recv (before Moved's restriction),
        delivered and fwd after m takes the digest D = (dl, dS, dQ)."""
        M = self.M
        dl, dS0, dQ0 = D
        # named arrays (a pattern may not contain the If of SendView's choice)
        dS, dQ = self._aux(f"{name}_DS", AII), self._aux(f"{name}_DQ", AII)
        cs += [dS == dS0, dQ == dQ0]
        RH = {s: self._aux(f"{name}_rh{s}", AIB) for s in M}
        RV = {s: self._aux(f"{name}_rv{s}", AII) for s in M}
        F = self._aux(f"{name}_F", z3.ArraySort(I, AIB))
        cnt = self._aux(f"{name}_cnt", AII)
        dS2, dQ2 = self._aux(f"{name}_dS", AII), self._aux(f"{name}_dQ", AII)
        L = S["dL"][m]
        i = z3.Int(f"i_{name}_{self._k}")
        si, qi = dS[i], dQ[i]
        dup = z3.Or(*[z3.And(si == s, RH[s][i - 1], qi <= RV[s][i - 1]) for s in M])
        new = z3.Not(dup)
        cs += [RH[s][0] == S["rdom"][m, s] for s in M] + [RV[s][0] == S["rval"][m, s] for s in M]
        cs += [F[0] == S["fwd"][m], cnt[0] == 0]
        step = [cnt[i] == cnt[i - 1] + z3.If(new, 1, 0), 0 <= cnt[i], cnt[i] <= i,   # (the bound: by induction)
                F[i] == z3.If(si == m, z3.Store(F[i - 1], qi, False), F[i - 1]),
                z3.Implies(new, z3.And(dS2[L + cnt[i]] == si, dQ2[L + cnt[i]] == qi))]
        for s in M:
            step += [RH[s][i] == z3.Or(RH[s][i - 1], z3.And(si == s, new)),
                     RV[s][i] == z3.If(z3.And(si == s, new), qi, RV[s][i - 1])]
        cs.append(z3.ForAll([i], z3.Implies(z3.And(1 <= i, i <= dl), z3.And(*step)), patterns=[si]))
        n = z3.If(dl > 0, dl, 0)
        cs.append(z3.Implies(dl > 0, z3.And(0 <= cnt[dl], cnt[dl] <= dl)))   # the instance at dl
        # Stated consequences of the recurrence (each by induction on i; z3
        # does no induction; tests/test_proofs_sequencerflush.py has z3 check
        # the base cases and the induction steps):
        # (1) the received-table value after the digest is the one before or
        #     the seqno of some entry of that sender in the digest (w its index);
        for s in M:
            w = self._aux(f"{name}_w{s}", I)
            cs.append(z3.Or(RV[s][n] == RV[s][0], z3.And(1 <= w, w <= dl, dS[w] == s, dQ[w] == RV[s][n])))
        # (3) a sender in the received-table's domain stays in it;
        cs += [z3.Implies(RH[s][0], RH[s][n]) for s in M]
        # (2) if every sender is in the received-table's domain and the digest
        #     names members only, every
        #     delivered entry is at most the table's value for its sender and
        #     nothing is delivered twice, both hold after the digest too.
        k3 = z3.Int(f"k3_{name}_{self._k}")
        cs.append(z3.Implies(z3.And(*[S["rdom"][m, s] for s in M],
                                    z3.ForAll([k3], z3.Implies(z3.And(1 <= k3, k3 <= dl),
                                                               z3.And(1 <= dS[k3], dS[k3] <= self.N))),
                                    self._rb(S["dS"][m], S["dQ"][m], L, lambda x: self._pick(S["rval"], m, x), name + "0"),
                                    self._nd(S["dS"][m], S["dQ"][m], L, name + "0")),
                             z3.And(self._rb(dS2, dQ2, L + cnt[n], lambda x: select(x, ((y, RV[y][n]) for y in M)), name + "n"),
                                    self._nd(dS2, dQ2, L + cnt[n], name + "n"))))
        j = z3.Int(f"j_{name}_{self._k}")
        cs.append(self._prefix(j, L, (dS2, dQ2), (S["dS"][m], S["dQ"][m]), trigger=True))
        fwd = F[n]
        if self.N >= 3:
            # (5) Absorb delivers exactly D when m's delivered sequence is a
            #     prefix of D whose entries are duplicates for m's table, and
            #     D's later entries are not, each sender's in increasing seqno
            #     order: every entry up to L is dropped, every later one
            #     appended (by induction on i; at N >= 3, where
            #     SurvivorTotalOrder's view change reads it)
            j1, j2 = z3.Int(f"x1_{name}_{self._k}"), z3.Int(f"x2_{name}_{self._k}")
            dupl = lambda k: z3.And(self._pick(S["rdom"], m, dS[k]), dQ[k] <= self._pick(S["rval"], m, dS[k]))  # noqa: E731
            cs.append(z3.Implies(z3.And(
                0 <= L, L <= dl,
                z3.ForAll([j1], z3.Implies(z3.And(1 <= j1, j1 <= L), z3.And(
                    S["dS"][m][j1] == dS[j1], S["dQ"][m][j1] == dQ[j1], dupl(j1))), patterns=[dS[j1]]),
                z3.ForAll([j1], z3.Implies(z3.And(L < j1, j1 <= dl), z3.Not(dupl(j1))), patterns=[dS[j1]]),
                z3.ForAll([j1, j2], z3.Implies(z3.And(1 <= j1, j1 < j2, j2 <= dl, dS[j1] == dS[j2]), dQ[j1] < dQ[j2]),
                          patterns=[multipattern(dS[j1], dS[j2])])),
                z3.And(cnt[n] == dl - L, z3.ForAll([j1], z3.Implies(z3.And(L < j1, j1 <= dl), z3.And(
                    dS2[j1] == dS[j1], dQ2[j1] == dQ[j1])), patterns=[dS2[j1]]))))
            # (4) the forward-table only loses entries (F[i] is F[i - 1] or it
            #     less one seqno); at N >= 3, where SentBound reads it
            fwd = self._aux(f"{name}_Fn", AIB)
            q = z3.Int(f"q4_{name}_{self._k}")
            cs += [fwd == F[n], z3.ForAll([q], z3.Implies(fwd[q], S["fwd"][m][q]), patterns=[fwd[q]])]
        return {"rdom": {s: RH[s][n] for s in M}, "rval": {s: RV[s][n] for s in M},
                "dS": dS2, "dQ": dQ2, "dL": L + cnt[n], "fwd": fwd}

    def _pick(self, F, m, x):
        """F[m, x] for a term x (a member)."""
        return select(x, ((y, F[m, y]) for y in self.M))

    @staticmethod
    def _prefix(j, L, AB, G, trigger=False):
        """The sequence <<A, B>> (AB) agrees with G on positions 1..L (j: the
        bound position; trigger: E-matching on A[j])."""
        (A, B), (gA, gB) = AB, G
        return z3.ForAll([j], z3.Implies(z3.And(1 <= j, j <= L), z3.And(A[j] == gA[j], B[j] == gB[j])),
                         patterns=[A[j]] if trigger else [])

    @staticmethod
    def _rb(A, B, L, bound, name):
        """Every entry <<A[j], B[j]>> (1 <= j <= L) has B[j] <= bound(A[j])."""
        j = z3.Int(f"rb_{name}")
        return z3.ForAll([j], z3.Implies(z3.And(1 <= j, j <= L), B[j] <= bound(A[j])))

    @staticmethod
    def _nd(A, B, L, name, ij=None):
        """No two entries of <<A, B>>[1..L] are equal (ij: the bound positions' names)."""
        i, j = z3.Ints(ij or f"ndi_{name} ndj_{name}")
        return z3.ForAll([i, j], z3.Implies(z3.And(1 <= i, i < j, j <= L), z3.Or(A[i] != A[j], B[i] != B[j])))

    def _ascending(self, fwd, cs: list, name: str):
        """Ascending(fwd) as (seg, k): seg[1..k] strictly increasing, each in
        fwd, and every member of fwd in it (idx places it)."""
        seg, idx, k = self._aux(f"{name}_seg", AII), self._aux(f"{name}_idx", AII), self._aux(f"{name}_k", I)
        fwd0, fwd = fwd, self._aux(f"{name}_fwd", AIB)   # named, for the patterns
        cs.append(fwd == fwd0)
        j = z3.Int(f"j_{name}_{self._k}")
        q = z3.Int(f"q_{name}_{self._k}")
        cs.append(k >= 0)
        cs.append(z3.ForAll([j], z3.Implies(z3.And(1 <= j, j <= k), z3.And(
            fwd[seg[j]], z3.Implies(j < k, seg[j] < seg[j + 1]))), patterns=[fwd[seg[j]]]))
        cs.append(z3.ForAll([q], z3.Implies(fwd[q], z3.And(1 <= idx[q], idx[q] <= k, seg[idx[q]] == q)),
                            patterns=[fwd[q]]))
        if self.N >= 3:
            # the same membership triggered by seg[j] itself (no seg term in
            # the body: no matching loop): a re-sent FORWARD's seqno seg[j]
            # is then known to be in the table (SentBound at N >= 3)
            cs.append(z3.ForAll([j], z3.Implies(z3.And(1 <= j, j <= k), fwd[seg[j]]), patterns=[seg[j]]))
        return seg, k

    def _moved(self, S, m, new_in, D, ch: dict, cs: list, name: str) -> dict:
        """Moved(m, new, D, ch) as updates; new_in(x): x is in the new view."""
        M = self.M
        st = self._absorb(S, m, D, cs, name)
        upd: dict = {
            "rdom": {(m, s): z3.And(st["rdom"][s], new_in(s)) for s in M},
            "rval": {(m, s): st["rval"][s] for s in M},
            "dS": {m: st["dS"]}, "dQ": {m: st["dQ"]}, "dL": {m: st["dL"]},
            "fwd": {m: st["fwd"]},
            "cA": {m: z3.Store(S["cA"][m], S["cL"][m] + 1, st["dL"])}, "cL": {m: S["cL"][m] + 1},
            "lL": {m: z3.IntVal(0)}, "ndel": {m: z3.IntVal(0)}, "np": {m: z3.IntVal(0)},
        }
        pch = self._purged(S, ch, m, S["vid"][m], cs)
        nc = first(((new_in(x), x) for x in M), z3.IntVal(0))
        cond = z3.Or(self._coord(S, S["vid"][m]) != nc, z3.BoolVal(self.RA))
        seg, k = self._ascending(st["fwd"], cs, name)
        for x in M:
            a, h, t = pch[m, x]
            c2 = self._aux(f"{name}_rs{x}", z3.ArraySort(I, Msg))
            i = z3.Int(f"r_{name}_{x}_{self._k}")
            cs.append(z3.ForAll([i], z3.Implies(z3.And(h < i, i <= t + k), c2[i] == z3.If(
                i <= t, a[i], _mk("FORWARD", m, seg[i - t]))), patterns=[c2[i]]))
            go = z3.And(cond, nc == x, self.alive(S, x))
            pch[m, x] = self._ite(go, (c2, h, t + k), (a, h, t))
        upd.update(self._chan_upd(pch))
        return upd

    def _chan_upd(self, ch: dict) -> dict:
        return {"ch": {e: c[0] for e, c in ch.items()}, "hd": {e: c[1] for e, c in ch.items()},
                "tl": {e: c[2] for e, c in ch.items()}}

    # --- Init -------------------------------------------------------------------
    def init(self, S) -> z3.BoolRef:
        M = self.M
        cs = [S["nv"][()] == 1]
        for m in M:
            cs += [S["vin"][m][1], S["vid"][m] == 1, z3.Not(S["crashed"][m]), S["sent"][m] == 0,
                   S["fwd"][m] == z3.K(I, z3.BoolVal(False)), S["dL"][m] == 0, S["lL"][m] == 0,
                   S["cL"][m] == 0, S["phase"][m] == PH["Normal"], z3.Not(S["blocked"][m]),
                   S["fi"][m] == NO_INIT, S["ndel"][m] == 0, S["np"][m] == 0]
            for x in M:
                cs += [S["rdom"][m, x], S["rval"][m, x] == 0, z3.Not(S["oks"][m, x]),
                       z3.Not(S["comp"][m, x]), S["hd"][m, x] == S["tl"][m, x]]
        return z3.And(*cs)

    # --- actions ----------------------------------------------------------------
    def actions(self, S, T):
        yield from self._sequencer_actions(S, T)
        yield from self._flush_actions(S, T)
        yield from self._view_actions(S, T)

    def _sequencer_actions(self, S, T):
        """Send, RecvForward, RecvData, DeliverStable, Discard."""
        M, fr = self.M, self._frame
        Alive, vid, phase = (lambda x: self.alive(S, x)), S["vid"], S["phase"]
        for m in M:   # Send(m)
            if m not in self.Senders:
                continue
            g = [Alive(m), z3.Not(S["blocked"][m])]
            if self.RF:
                a, h, t = S["ch"][m, m], S["hd"][m, m], S["tl"][m, m]
                i = z3.Int(f"i_rf_{m}")
                g.append(z3.ForAll([i], z3.Implies(z3.And(h < i, i <= t), Msg.ty(a[i]) != TY["FORWARD"])))
            if self.max_seq is not None:
                g.append(S["sent"][m] < self.max_seq)
            q = S["sent"][m] + 1
            isc = self._is_coord(S, m)
            mc = self._mcast_data(S, self._chan(S), m, m, q)
            ch = self._chan(S)
            nc = self._coord(S, vid[m])
            for x in M:
                ch[m, x] = self._ite(z3.And(nc == x, Alive(x)), self._append(ch[m, x], _mk("FORWARD", m, q)),
                                     ch[m, x])
            chan = {e: self._ite(isc, mc[e], ch[e]) for e in ch}
            upd = join({"sent": {m: q}}, self._chan_upd(chan), {
                "lS": {m: z3.If(isc, z3.Store(S["lS"][m], S["lL"][m] + 1, m), S["lS"][m])},
                "lQ": {m: z3.If(isc, z3.Store(S["lQ"][m], S["lL"][m] + 1, q), S["lQ"][m])},
                "lL": {m: z3.If(isc, S["lL"][m] + 1, S["lL"][m])},
                "fwd": {m: z3.If(isc, S["fwd"][m], z3.Store(S["fwd"][m], q, True))}})
            yield Label("Send", (m,)), z3.And(*g, fr(S, T, upd))
        for c, p in product(M, M):   # RecvForward(c, p)
            h = self._head(S, c, p)
            g = [Alive(c), self.has(S, c, p), Msg.ty(h) == TY["FORWARD"]]
            isc = self._is_coord(S, c)
            taken = self._take(self._chan(S), c, p)
            mc = self._mcast_data(S, taken, c, Msg.snd(h), Msg.seq(h))
            chan = {e: self._ite(isc, mc[e], taken[e]) for e in taken}
            L = S["lL"][c]
            upd = join(self._chan_upd(chan), {
                "lS": {c: z3.If(isc, z3.Store(S["lS"][c], L + 1, Msg.snd(h)), S["lS"][c])},
                "lQ": {c: z3.If(isc, z3.Store(S["lQ"][c], L + 1, Msg.seq(h)), S["lQ"][c])},
                "lL": {c: z3.If(isc, L + 1, L)}})
            yield Label("RecvForward", (c, p)), z3.And(*g, fr(S, T, upd))
        for m, p in product(M, M):   # RecvData(m, p)
            h, g = self._flush_msg(S, m, p, "DATA", from_member=False)
            s, q = Msg.snd(h), Msg.seq(h)
            g.append(phase[m] != PH["Completed"])
            upd = self._taken(S, m, p)
            upd["np"] = {m: S["np"][m] + 1}
            if p != m:
                L = S["lL"][m]
                upd.update({"lS": {m: z3.Store(S["lS"][m], L + 1, s)}, "lQ": {m: z3.Store(S["lQ"][m], L + 1, q)},
                            "lL": {m: L + 1}})
            if not self.UD:
                upd = join(upd, self._take_one(S, m, s, q, stamp=Msg.dl(h)))
            yield Label("RecvData", (m, p)), z3.And(*g, fr(S, T, upd))
        if self.UD:
            for m in M:   # DeliverStable(m)
                k = S["ndel"][m]
                stable = [z3.Implies(z3.And(self._in_view(S, r, vid[m]), Alive(r)),
                                     z3.And(vid[r] == vid[m], S["lL"][r] >= k + 1)) for r in M]
                g = [Alive(m), phase[m] != PH["Completed"], k < S["lL"][m], *stable]
                upd = join(self._take_one(S, m, S["lS"][m][k + 1], S["lQ"][m][k + 1]),
                                 {"ndel": {m: k + 1}})
                yield Label("DeliverStable", (m,)), z3.And(*g, fr(S, T, upd))
        for p, q in product(M, M):   # Discard(p, q)
            h = self._head(S, p, q)
            g = [Alive(p), self.has(S, p, q), Msg.ty(h) != TY["FORWARD"],
                 stale(Msg.ty(h), Msg.view(h), vid[p], S["crashed"][q], phase[p] == PH["Completed"], TYPES_F)]
            yield Label("Discard", (p, q)), z3.And(*g, fr(S, T, self._taken(S, p, q)))

    def _flush_actions(self, S, T):
        """StartFlush to ReceiveFlushCompleted: the flush up to the view."""
        M, fr = self.M, self._frame
        Alive, vid, phase = (lambda x: self.alive(S, x)), S["vid"], S["phase"]
        nv = S["nv"][()]
        staying = {x: z3.And(self._in_view(S, x, nv), Alive(x)) for x in M}
        pending = z3.Or(*[z3.And(self._in_view(S, x, nv), S["crashed"][x]) for x in M])
        for c in M:   # StartFlush(c)
            v = vid[c]
            init_c = z3.And(staying[c], *[z3.Not(staying[y]) for y in M if y < c])
            g = [Alive(c), v == nv, init_c, S["fi"][c] != c, pending]
            chan = self._multi(self._chan(S), c, lambda q, v=v: z3.And(self._in_view(S, q, v), Alive(q)),
                               _mk("START_FLUSH", view=v, dl=S["lL"][c]))
            done = phase[c] == PH["Completed"]
            upd = join(self._chan_upd(chan), {
                "fi": {c: z3.IntVal(c)},
                "phase": {c: z3.If(phase[c] == PH["Normal"], PH["InBlock"], phase[c])},
                "comp": {(c, x): (z3.And(done) if x == c else z3.BoolVal(False)) for x in M},
                "compS": {(c, c): S["lS"][c]}, "compQ": {(c, c): S["lQ"][c]}, "compL": {(c, c): S["lL"][c]}})
            # the digest of c's own entry matters only when it is present
            yield Label("StartFlush", (c,)), z3.And(*g, z3.Or(
                z3.And(done, fr(S, T, upd)),
                z3.And(z3.Not(done), fr(S, T, join(upd, {f: {(c, c): S[f][c, c]}
                                                         for f in ("compS", "compQ", "compL")})))))
        for p, c in product(M, M):   # Block(p, c), RestartFlush(p, c)
            h, g = self._flush_msg(S, p, c, "START_FLUSH")
            taken = self._take(self._chan(S), p, c)
            yield Label("Block", (p, c)), z3.And(*g, phase[p] == PH["Normal"], fr(S, T, join(
                self._chan_upd(taken), {"phase": {p: z3.IntVal(PH["InBlock"])}, "fi": {p: z3.IntVal(c)}})))
            fc = _mk("FLUSH_COMPLETED", view=vid[p], dl=S["lL"][p], dS=S["lS"][p], dQ=S["lQ"][p])
            re = dict(taken)
            re[p, c] = self._ite(phase[p] == PH["Completed"], self._append(taken[p, c], fc), taken[p, c])
            yield Label("RestartFlush", (p, c)), z3.And(*g, phase[p] != PH["Normal"], fr(S, T, join(
                self._chan_upd(re), {"fi": {p: z3.IntVal(c)}})))
        for p in M:   # FlushOk(p)
            v = vid[p]
            chan = self._multi(self._chan(S), p, lambda q, v=v: z3.And(self._in_view(S, q, v), Alive(q)),
                               _mk("FLUSH_OK", view=v, dl=S["lL"][p]))
            yield Label("FlushOk", (p,)), z3.And(Alive(p), phase[p] == PH["InBlock"], fr(S, T, join(
                self._chan_upd(chan), {"phase": {p: z3.IntVal(PH["OkSent"])}, "oks": {(p, p): z3.BoolVal(True)}})))
        for p, q in product(M, M):   # ReceiveFlushOk(p, q)
            h, g = self._flush_msg(S, p, q, "FLUSH_OK")
            yield Label("ReceiveFlushOk", (p, q)), z3.And(*g, fr(S, T, self._taken(
                S, p, q, {"oks": {(p, q): z3.BoolVal(True)}})))
        for p in M:   # FlushCompleted(p)
            v, c = vid[p], S["fi"][p]
            allok = [z3.Implies(z3.And(self._in_view(S, x, v), Alive(x)), S["oks"][p, x]) for x in M]
            g = [Alive(p), phase[p] == PH["OkSent"], *allok]
            # one frame, the initiator's choice in its terms: as If(c = p,
            # frame, frame) z3 split on c = p before it matched the frame's
            # equalities (FlushCompleted(2) x Follow at N = 3: unknown at
            # 120 s; as one frame 0.01 s); the channels p -> x change only
            # for x = c # p, so the two relations are equal
            own = c == p
            rec = {"comp": {(p, p): z3.Or(own, S["comp"][p, p])},
                   "compS": {(p, p): z3.If(own, S["lS"][p], S["compS"][p, p])},
                   "compQ": {(p, p): z3.If(own, S["lQ"][p], S["compQ"][p, p])},
                   "compL": {(p, p): z3.If(own, S["lL"][p], S["compL"][p, p])}}
            fc = _mk("FLUSH_COMPLETED", view=v, dl=S["lL"][p], dS=S["lS"][p], dQ=S["lQ"][p])
            chan = self._chan(S)
            for x in M:
                if x != p:
                    chan[p, x] = self._ite(z3.And(c == x, Alive(x)), self._append(chan[p, x], fc), chan[p, x])
            yield Label("FlushCompleted", (p,)), z3.And(*g, fr(S, T, join(
                {"phase": {p: z3.IntVal(PH["Completed"])}, "blocked": {p: z3.BoolVal(True)}}, rec,
                self._chan_upd(chan))))
        for c, q in product(M, M):   # ReceiveFlushCompleted(c, q)
            h, g = self._flush_msg(S, c, q, "FLUSH_COMPLETED")
            yield Label("ReceiveFlushCompleted", (c, q)), z3.And(*g, fr(S, T, self._taken(S, c, q, {
                "comp": {(c, q): z3.BoolVal(True)}, "compS": {(c, q): Msg.dS(h)}, "compQ": {(c, q): Msg.dQ(h)},
                "compL": {(c, q): Msg.dl(h)}})))

    def _view_actions(self, S, T):
        """SendView, InstallView, StopFlush, Unblock, Crash."""
        M, fr = self.M, self._frame
        Alive, vid, phase = (lambda x: self.alive(S, x)), S["vid"], S["phase"]
        nv = S["nv"][()]
        for c in M:   # SendView(c)
            v = vid[c]
            g = [Alive(c), S["fi"][c] == c, phase[c] == PH["Completed"],
                 *[z3.Implies(z3.And(self._in_view(S, x, v), Alive(x)), S["comp"][c, x]) for x in M]]
            # D: the digest of a live member d whose digest is a longest one;
            # d is a fresh choice (one set of Moved constraints, not one per d)
            live = lambda x, c=c: z3.And(S["comp"][c, x], Alive(x))  # noqa: E731
            # At N >= 3 one instance per choice y (the same relation: their
            # disjunction): SurvivorTotalOrder across SendView(1) took 64 s
            # or ran out of 90 s with d open, and 0.1-0.3 s with d fixed.
            for ys in ([None] if self.N < 3 else [(y,) for y in M]):
                d = self._aux(f"sv{c}_d", I)
                choice = z3.Or(*[z3.And(d == y, live(y), *[z3.Implies(live(x), S["compL"][c, x] <= S["compL"][c, y])
                                                           for x in M]) for y in (ys or M)])

                def pick(f, c=c, d=d, ys=ys):
                    return S[f][c, ys[0]] if ys else select(d, ((y, S[f][c, y]) for y in M))
                D = (pick("compL"), pick("compS"), pick("compQ"))
                new_in = lambda x, v=v: z3.And(self._in_view(S, x, v), Alive(x))  # noqa: E731
                ch = self._multi(self._chan(S), c, new_in, _mk("VIEW", view=v, dl=D[0], dS=D[1], dQ=D[2]))
                cs: list = []
                upd = self._moved(S, c, new_in, D, ch, cs, f"sv{c}")
                upd = join(upd, {
                    "nv": {(): nv + 1}, "vin": {x: z3.Store(S["vin"][x], nv + 1, new_in(x)) for x in M},
                    "vid": {c: v + 1}, "phase": {c: z3.IntVal(PH["Normal"])},
                    "oks": {(c, x): z3.BoolVal(False) for x in M},
                    "comp": {(c, x): z3.BoolVal(False) for x in M}})
                yield Label("SendView", (c,)), z3.And(*g, choice, *cs, fr(S, T, upd))
        for p, c in product(M, M):   # InstallView(p, c)
            h, g = self._flush_msg(S, p, c, "VIEW", from_member=False)
            w = Msg.view(h) + 1
            new_in = lambda x, w=w: self._in_view(S, x, w)  # noqa: E731
            cs = []
            upd = self._moved(S, p, new_in, (Msg.dl(h), Msg.dS(h), Msg.dQ(h)),
                              self._take(self._chan(S), p, c), cs, f"iv{p}{c}")
            upd = join(upd, {"vid": {p: w}, "fi": {p: z3.IntVal(c)}, "phase": {p: z3.IntVal(PH["Normal"])},
                             "oks": {(p, x): z3.BoolVal(False) for x in M},
                             "comp": {(p, x): z3.BoolVal(False) for x in M}})
            yield Label("InstallView", (p, c)), z3.And(*g, *cs, fr(S, T, upd))
        for c in M:   # StopFlush(c)
            v = vid[c]
            R = lambda q, v=v: z3.And(self._in_view(S, q, v), self._in_view(S, q, v - 1), Alive(q))  # noqa: E731
            chan = self._multi(self._chan(S), c, R, _mk("STOP_FLUSH", view=v, dl=S["lL"][c]))
            yield Label("StopFlush", (c,)), z3.And(Alive(c), S["fi"][c] == c, phase[c] == PH["Normal"], fr(
                S, T, join(self._chan_upd(chan), {"blocked": {c: z3.BoolVal(False)}, "fi": {c: z3.IntVal(NO_INIT)}})))
        for p, c in product(M, M):   # Unblock(p, c)
            h, g = self._flush_msg(S, p, c, "STOP_FLUSH")
            yield Label("Unblock", (p, c)), z3.And(*g, fr(S, T, self._taken(
                S, p, c, {"blocked": {p: z3.BoolVal(False)}, "fi": {p: z3.IntVal(NO_INIT)}})))
        for m in M:   # Crash(m, lost)
            for lost in subsets(set(M) - {m}):
                cs = []
                chan = self._chan(S)
                notflush = lambda x: z3.And(*[Msg.ty(x) != t for t in FLUSH_TY])  # noqa: E731
                for e in chan:
                    a, h, t = chan[e]
                    if e[1] == m:
                        chan[e] = (a, t, t)
                    elif e[0] == m and e[1] in lost:
                        lv = self._aux(f"lv{m}{e[1]}", I)
                        j = z3.Int(f"j_lv_{self._k}")
                        isv = lambda k: Msg.ty(a[k]) == TY["VIEW"]  # noqa: E731
                        cs.append(z3.Or(lv == h, z3.And(h < lv, lv <= t, isv(lv))))
                        cs.append(z3.ForAll([j], z3.Implies(z3.And(lv < j, j <= t), z3.Not(isv(j))),
                                            patterns=[a[j]]))
                        chan[e] = self._filter(chan[e], lambda i, x, lv=lv: z3.And(i <= lv, notflush(x)), cs,
                                               f"cr{m}{e[1]}")
                    elif e[0] == m:
                        chan[e] = self._filter(chan[e], lambda i, x: notflush(x), cs, f"cf{m}{e[1]}")
                yield Label("Crash", (m, lost)), z3.And(
                    Alive(m), self._count(S, "crashed") < self.MC, *cs,
                    fr(S, T, join(self._chan_upd(chan), {"crashed": {m: z3.BoolVal(True)}})))

    def _take_one(self, S, m, s, q, stamp=None) -> dict:
        """RecvData's delivery of <<s, q>> (Absorb of one entry): fwd, recv,
        delivered (and the ghost dp: the DATA's stamp, if given)."""
        M = self.M
        dup = z3.Or(*[z3.And(s == x, S["rdom"][m, x], q <= S["rval"][m, x]) for x in M])
        L = S["dL"][m]
        return {"fwd": {m: z3.If(s == m, z3.Store(S["fwd"][m], q, False), S["fwd"][m])},
                "rdom": {(m, x): z3.Or(S["rdom"][m, x], z3.And(s == x, z3.Not(dup))) for x in M},
                "rval": {(m, x): z3.If(z3.And(s == x, z3.Not(dup)), q, S["rval"][m, x]) for x in M},
                "dS": {m: z3.If(dup, S["dS"][m], z3.Store(S["dS"][m], L + 1, s))},
                "dQ": {m: z3.If(dup, S["dQ"][m], z3.Store(S["dQ"][m], L + 1, q))},
                "dL": {m: z3.If(dup, L, L + 1)},
                **({"dp": {m: z3.If(dup, S["dp"][m], z3.Store(S["dp"][m], L + 1, stamp))}} if stamp is not None
                   else {})}

    # --- the mapping between model states and z3 values ----------------------------------
    def _msg_is(self, x, msg, stamp=None) -> z3.BoolRef:
        ty = msg["type"]
        cs = [Msg.ty(x) == TY[ty]]
        if stamp is not None:
            cs.append(Msg.dl(x) == stamp)
        if ty in ("FORWARD", "DATA"):
            cs += [Msg.snd(x) == msg["sender"], Msg.seq(x) == msg["seqno"]]
        if ty != "FORWARD":
            cs.append(Msg.view(x) == msg["view"])
        if ty in ("VIEW", "FLUSH_COMPLETED"):
            d = tuple(msg["digest"])
            cs.append(Msg.dl(x) == len(d))
            for i, (s, q) in enumerate(d, start=1):
                cs += [Msg.dS(x)[i] == s, Msg.dQ(x)[i] == q]
        return z3.And(*cs)

    @staticmethod
    def _seq_is(A, B, L, seq) -> list:
        cs = [L == len(seq)]
        for i, (s, q) in enumerate(seq, start=1):
            cs += [A[i] == s, B[i] == q]
        return cs

    def value(self, S, s: SequencerFlushState) -> z3.BoolRef:
        M = self.M
        cs = [S["nv"][()] == len(s.views)]
        for i, v in enumerate(s.views, start=1):
            if tuple(v) != tuple(sorted(v)):
                raise ValueError(f"sequencerflush encoding: view {v} is not ascending")
            cs += [S["vin"][x][i] == (x in v) for x in M]
        for m in M:
            cs += [S["vid"][m] == s.vid[m], S["crashed"][m] == (m in s.crashed), S["sent"][m] == s.sent[m],
                   S["fwd"][m] == z3_set(s.fwd[m]), S["phase"][m] == PH[s.phase[m]],
                   S["blocked"][m] == s.blocked[m], S["fi"][m] == s.flushInit[m], S["ndel"][m] == s.ndel[m]]
            cs += self._seq_is(S["dS"][m], S["dQ"][m], S["dL"][m], s.delivered[m])
            cs += self._seq_is(S["lS"][m], S["lQ"][m], S["lL"][m], s.log[m])
            cs += self._ghosts(S, s, m)
            cs.append(S["cL"][m] == len(s.closed[m]))
            cs += [S["cA"][m][i] == x for i, x in enumerate(s.closed[m], start=1)]
            for x in M:
                cs.append(S["rdom"][m, x] == (x in s.recv[m]))
                # outside the domain rval is a history variable (the value
                # the entry had when a view change removed it): here the
                # highest seqno of x that m delivered, 0 if none (in the
                # models' reachable states the table holds that value)
                cs.append(S["rval"][m, x] == (s.recv[m][x] if x in s.recv[m] else
                                              max([q for (y, q) in s.delivered[m] if y == x], default=0)))
                cs.append(S["oks"][m, x] == (x in s.flushOks[m]))
            byq: dict = {}
            for q, d in s.completed[m]:
                if q in byq:
                    raise ValueError(f"sequencerflush encoding: two digests of {q} in completed[{m}]")
                byq[q] = tuple(d)
            for x in M:
                cs.append(S["comp"][m, x] == (x in byq))
                if x in byq:
                    cs += self._seq_is(S["compS"][m, x], S["compQ"][m, x], S["compL"][m, x], byq[x])
        for e in s.chan:
            a, h, t = S["ch"][e], S["hd"][e], S["tl"][e]
            seq = s.chan[e]
            cs.append(t - h == len(seq))
            st = self._stamps(s, e)
            cs += [self._msg_is(a[h + i], msg, st[i - 1]) for i, msg in enumerate(seq, start=1)]
        return z3.And(*cs)

    def _ghosts(self, S, s: SequencerFlushState, m) -> list:
        """The ghosts np[m] and dp[m] of model state s, where the state
        determines them (else no constraint: no lemma reads them there).
        np: a live member other than its view's coordinator took one DATA
        per entry of its log; the coordinator, while not Completed (it then
        discards), every DATA of its log but those still on its loopback
        channel.  dp: in a view v >= 2 whose coordinator c is live and in v,
        an entry delivered since the view change sits at the first position
        of c's log that holds it (the stamp of the DATA delivered: a later
        copy is a duplicate)."""
        if m in s.crashed:
            return []
        v = s.vid[m]
        c = s.views[v - 1][0]
        cs = []
        if m != c:
            cs.append(S["np"][m] == len(s.log[m]))
        elif s.phase[m] != "Completed":
            own = sum(1 for x in s.chan[m, m] if x["type"] == "DATA" and x["view"] == v)
            cs.append(S["np"][m] == len(s.log[m]) - own)
        # (UniformDelivery: DeliverStable delivers, RecvData does not: no dp)
        if not self.UD and v >= 2 and c not in s.crashed and s.vid[c] == v and len(s.closed[m]) == v - 1:
            W = list(s.log[c])
            for j in range(s.closed[m][-1] + 1, len(s.delivered[m]) + 1):
                e = s.delivered[m][j - 1]
                if e in W:
                    cs.append(S["dp"][m][j] == W.index(e) + 1)
        return cs

    @staticmethod
    def _stamps(s: SequencerFlushState, e) -> list:
        """The stamps (a ghost field, ``dl``) of the messages on channel e = (p, q)
        in model state s: a DATA, START_FLUSH, FLUSH_OK or STOP_FLUSH that p
        sent in view v carries the length of p's log after the send (a
        DATA: its index in p's log).  Known, and returned, when p is the
        coordinator of v and still in v: the last such message carries
        p's log length (every later entry of its log went out as a DATA on
        the channel, a crashed receiver's channel being empty), each one
        before it that less the DATA between; None (no constraint) else."""
        p = e[0]
        seq = s.chan[e]
        out: list = [None] * len(seq)
        v = s.vid[p]
        if s.views[v - 1][0] != p:
            return out
        k = len(s.log[p])
        for i in range(len(seq) - 1, -1, -1):
            x = seq[i]
            if x["type"] in ("DATA", "START_FLUSH", "FLUSH_OK", "STOP_FLUSH") and x["view"] == v:
                out[i] = k
                if x["type"] == "DATA":
                    k -= 1
        return out

    def decode(self, mdl: z3.ModelRef, S) -> SequencerFlushState:
        M = self.M
        ev, b, n = readers(mdl)

        def seq(A, B, L):
            return tuple((n(A[i]), n(B[i])) for i in range(1, max(n(L), 0) + 1))

        def msg(x):
            return decoded_msg(TYPES, min(max(n(Msg.ty(x)), 0), len(TYPES) - 1), {
                "sender": lambda: n(Msg.snd(x)), "seqno": lambda: n(Msg.seq(x)), "view": lambda: n(Msg.view(x)),
                "digest": lambda: seq(Msg.dS(x), Msg.dQ(x), Msg.dl(x))})

        nv = max(n(S["nv"][()]), 1)
        views = tuple(tuple(x for x in M if b(S["vin"][x][i])) for i in range(1, nv + 1))
        fwd = {}
        for m in M:
            hi = max(n(S["sent"][m]), 0)
            fwd[m] = frozenset(q for q in range(1, hi + 1) if b(S["fwd"][m][q]))
        chan = {}
        for e in S["ch"]:
            h, t = n(S["hd"][e]), n(S["tl"][e])
            chan[e] = tuple(msg(S["ch"][e][i]) for i in range(h + 1, t + 1))
        return SequencerFlushState(
            views=views,
            vid=Fn((m, n(S["vid"][m])) for m in M),
            crashed=frozenset(m for m in M if b(S["crashed"][m])),
            sent=Fn((m, n(S["sent"][m])) for m in M),
            fwd=Fn(fwd),
            recv=Fn((m, Fn((x, n(S["rval"][m, x])) for x in M if b(S["rdom"][m, x]))) for m in M),
            delivered=Fn((m, seq(S["dS"][m], S["dQ"][m], S["dL"][m])) for m in M),
            chan=Fn(chan),
            log=Fn((m, seq(S["lS"][m], S["lQ"][m], S["lL"][m])) for m in M),
            closed=Fn((m, tuple(n(S["cA"][m][i]) for i in range(1, max(n(S["cL"][m]), 0) + 1))) for m in M),
            phase=Fn((m, decoded_phase(min(max(n(S["phase"][m]), 0), 3))) for m in M),
            blocked=Fn((m, b(S["blocked"][m])) for m in M),
            flushInit=Fn((m, n(S["fi"][m])) for m in M),
            flushOks=Fn((m, frozenset(x for x in M if b(S["oks"][m, x]))) for m in M),
            completed=Fn((c, frozenset((x, seq(S["compS"][c, x], S["compQ"][c, x], S["compL"][c, x]))
                                       for x in M if b(S["comp"][c, x]))) for c in M),
            ndel=Fn((m, n(S["ndel"][m])) for m in M),
        )

    # --- the properties (their lemmas: lemmas.py) ---------------------------------
    # N = 2 and N = 3 (one crash): an inductive invariant (every query
    # proved; at N = 3 with the view-2 lemmas and the ghosts np and dp,
    # docs/proofs.md "SEQUENCER over FLUSH", N = 3).
    properties = ("NoDuplicates", "SurvivorTotalOrder")
