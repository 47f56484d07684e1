"""SEQUENCER without FLUSH: the lemmas of the inductive invariant for
TotalOrder and SurvivorTotalOrder over ``relation.SequencerRelation``
(docs/proofs.md states each in words).
"""

from __future__ import annotations

from itertools import product
import z3
from ..prover import multipattern, select
from .relation import SequencerRelation


class SequencerEncoding(SequencerRelation):
    """SEQUENCER at fixed N: the relation and its lemmas."""

    # --- lemmas ----------------------------------------------------------------------------
    @property
    def lemmas(self):
        out = {
            "Views": self.Views,
            "Crashes": self.Crashes,
            "Forwarded": self.Forwarded,
            "Integrity": self.Integrity,
            "InFlight": self.InFlight,
            "Received": self.Received,
            "DataChannels": self.DataChannels,
            **{f"ForwardChannel{p}": (lambda S, p=p: self.ForwardChannels(S, p)) for p in self.M[1:]},
            "IdleChannels": self.IdleChannels,
            "Sequence": self.Sequence,
            "SequenceOrder": self.SequenceOrder,
            "Delivered": self.Delivered,
            "Fresh": self.Fresh,
            "NoDuplicates": self.NoDuplicates,
        }
        out[self.properties[0]] = self.SurvivorTotalOrder if self.properties[0] == "SurvivorTotalOrder" \
            else self.TotalOrder
        return out

    def _nocrash(self, S):
        return z3.And(*[z3.Not(S["cr"][x]) for x in self.M])

    def Views(self, S):
        """1 <= vid[m] <= Len(views) <= MaxCrashes + 1; the first view is every member."""
        return z3.And(1 <= S["nv"], S["nv"] <= self.K, *[S["vw"][1, x] for x in self.M],
                      *[z3.And(1 <= S["vid"][m], S["vid"][m] <= S["nv"]) for m in self.M])

    def Crashes(self, S):
        """At most MaxCrashes crashes; without a crash there is one view."""
        n = z3.Sum(*[z3.If(S["cr"][x], 1, 0) for x in self.M])
        return z3.And(n <= self.MC, z3.Implies(self._nocrash(S), S["nv"] == 1))

    def Forwarded(self, S):
        """fwd[m] holds seqnos in 1..sent[m] only (so it is finite)."""
        out = []
        for m in self.M:
            q = z3.Int(f"{S['tag']}_q_fw_{m}")
            out.append(z3.ForAll([q], z3.Implies(S["fwd"][m][q], z3.And(1 <= q, q <= S["sent"][m])),
                                 patterns=[S["fwd"][m][q]]))
        return z3.And(*out)

    def _msg_ok(self, S, s, q):
        return z3.And(*[z3.Implies(s == x, z3.And(1 <= q, q <= S["sent"][x])) for x in self.M],
                      1 <= s, s <= self.N)

    def Integrity(self, S):
        """Delivered messages were sent: sender in 1..N, seqno in 1..sent[sender]."""
        out = []
        for m in self.M:
            i = z3.Int(f"{S['tag']}_i_in_{m}")
            out += [0 <= S["dlen"][m], 0 <= S["sent"][m], z3.ForAll([i], z3.Implies(
                z3.And(0 <= i, i < S["dlen"][m]), self._msg_ok(S, S["ds"][m][i], S["dq"][m][i])),
                patterns=[S["ds"][m][i]])]
        return z3.And(*out)

    def InFlight(self, S):
        """Every message in a channel was sent (sender in 1..N, seqno in
        1..sent[sender]); a FORWARD on p -> c carries p's own message."""
        out = []
        for (p, c), ch in S["chan"].items():
            i = z3.Int(f"{S['tag']}_i_fl_{p}_{c}")
            out += [ch.hd <= ch.tl, z3.ForAll([i], z3.Implies(z3.And(ch.hd <= i, i < ch.tl), z3.And(
                self._msg_ok(S, ch.sn[i], ch.sq[i]), z3.Implies(z3.Not(ch.ty[i]), ch.sn[i] == p))),
                patterns=[ch.sn[i]])]
        return z3.And(*out)

    def Received(self, S):
        """Received-table entries lie in 0..sent[sender]; without a crash every
        member has an entry for every member."""
        out = []
        for m, x in product(self.M, self.M):
            out += [z3.Implies(S["rin"][m, x], z3.And(0 <= S["rv"][m, x], S["rv"][m, x] <= S["sent"][x])),
                    z3.Implies(self._nocrash(S), S["rin"][m, x])]
        return z3.And(*out)

    def _channels(self, S, kind, only=None):
        out = []
        for (p, c), ch in S["chan"].items():
            if only is not None and p != only:
                continue
            i = z3.Int(f"{S['tag']}_i_ch_{p}_{c}")
            rng = z3.And(0 <= i, i < ch.tl)
            if p == 1 and kind == "data":
                out += [ch.hd == S["dlen"][c], ch.hd <= ch.tl,
                        z3.ForAll([i], z3.Implies(rng, ch.ty[i]), patterns=[ch.ty[i]])]
            elif p != 1 and c == 1 and kind == "forward":
                out += [ch.tl == S["sent"][p], 0 <= ch.hd, ch.hd <= ch.tl,
                        z3.ForAll([i], z3.Implies(rng, z3.And(z3.Not(ch.ty[i]), ch.sn[i] == p, ch.sq[i] == i + 1)),
                                  patterns=[ch.sq[i]])]
            elif p != 1 and c != 1 and kind == "idle":
                out.append(ch.hd == ch.tl)
        return z3.Implies(self._nocrash(S), z3.And(*out))

    def DataChannels(self, S):
        """Without a crash, a channel's array keeps its whole history from index 0
        (``value`` writes it so).  On 1 -> m: DATA only, the first dlen[m]
        consumed (hd = dlen[m])."""
        return self._channels(S, "data")

    def ForwardChannels(self, S, only=None):
        """Without a crash, on p -> 1 (p # 1): p's FORWARDs of seqnos 1, 2, ...,
        sent[p] at indices 0 .. sent[p] - 1 (p sends nothing else, and to no one else).
        One lemma per p (``ForwardChannel<p>``): smaller queries."""
        return self._channels(S, "forward", only)

    def IdleChannels(self, S):
        """Without a crash, nothing travels between two members other than 1."""
        return self._channels(S, "idle")

    def Sequence(self, S):
        """Without a crash, the coordinator's (member 1's) DATA channels to every
        member carry the same sequence G: the same length and history."""
        out = []
        c1 = S["chan"][1, 1]
        for m in self.M[1:]:
            ch = S["chan"][1, m]
            i = z3.Int(f"{S['tag']}_i_sq_{m}")
            out += [ch.tl == c1.tl,
                    z3.ForAll([i], z3.Implies(z3.And(0 <= i, i < c1.tl),
                                              z3.And(ch.sn[i] == c1.sn[i], ch.sq[i] == c1.sq[i])),
                              patterns=[ch.sn[i], ch.sq[i]])]
        return z3.Implies(self._nocrash(S), z3.And(*out))

    def Delivered(self, S):
        """Without a crash, what m delivered is the prefix of G it consumed."""
        out = []
        for m in self.M:
            ch = S["chan"][1, m]
            i = z3.Int(f"{S['tag']}_i_dl_{m}")
            out.append(z3.ForAll([i], z3.Implies(z3.And(0 <= i, i < S["dlen"][m]), z3.And(
                S["ds"][m][i] == ch.sn[i], S["dq"][m][i] == ch.sq[i])), patterns=[S["ds"][m][i], S["dq"][m][i]]))
        return z3.Implies(self._nocrash(S), z3.And(*out))

    def SequenceOrder(self, S):
        """Without a crash, G carries each sender's messages in increasing seqno
        order, the coordinator's up to sent[1], p's up to the FORWARDs it consumed."""
        c1 = S["chan"][1, 1]
        i, j = z3.Int(f"{S['tag']}_i_so"), z3.Int(f"{S['tag']}_j_so")
        bound = select(c1.sn[i], ((p, S["sent"][1] if p == 1 else S["chan"][p, 1].hd) for p in self.M),
                       z3.IntVal(0))
        return z3.Implies(self._nocrash(S), z3.And(
            z3.ForAll([i, j], z3.Implies(z3.And(0 <= i, i < j, j < c1.tl, c1.sn[i] == c1.sn[j]),
                                         c1.sq[i] < c1.sq[j]),
                      patterns=[multipattern(c1.sn[i], c1.sn[j])]),
            z3.ForAll([i], z3.Implies(z3.And(0 <= i, i < c1.tl), c1.sq[i] <= bound), patterns=[c1.sq[i]])))

    def Fresh(self, S):
        """Without a crash, what is queued to m from the coordinator is above m's
        received-table entry for its sender, and m's entry for p # 1 is at most
        the FORWARDs of p that the coordinator consumed."""
        out = []
        for m in self.M:
            ch = S["chan"][1, m]
            i = z3.Int(f"{S['tag']}_i_fr_{m}")
            out.append(z3.ForAll([i], z3.Implies(z3.And(ch.hd <= i, i < ch.tl),
                                                 ch.sq[i] > self._rv_of(S, m, ch.sn[i])), patterns=[ch.sq[i]]))
            out += [S["rv"][m, p] <= S["chan"][p, 1].hd for p in self.M[1:]]
        return z3.Implies(self._nocrash(S), z3.And(*out))

    def NoDuplicates(self, S):
        out = []
        for m in self.M:
            i, j = z3.Int(f"{S['tag']}_i_nd_{m}"), z3.Int(f"{S['tag']}_j_nd_{m}")
            ds, dq = S["ds"][m], S["dq"][m]
            out.append(z3.ForAll([i, j], z3.Implies(
                z3.And(0 <= i, i < j, j < S["dlen"][m]), z3.Or(ds[i] != ds[j], dq[i] != dq[j])),
                patterns=[multipattern(ds[i], ds[j])]))
        return z3.And(*out)

    def _agree(self, S, m1, m2):
        """No inversion between m1's and m2's histories: common messages in the
        same order (with NoDuplicates, the spec's SelectSeq equality)."""
        i, j, k, l = (z3.Int(f"{S['tag']}_{v}_to_{m1}_{m2}") for v in "ijkl")
        d1s, d1q, d2s, d2q = S["ds"][m1], S["dq"][m1], S["ds"][m2], S["dq"][m2]
        return z3.ForAll([i, j, k, l], z3.Implies(z3.And(
            0 <= i, i < j, j < S["dlen"][m1], 0 <= k, k < S["dlen"][m2], 0 <= l, l < S["dlen"][m2],
            d1s[i] == d2s[k], d1q[i] == d2q[k], d1s[j] == d2s[l], d1q[j] == d2q[l]), k < l),
            patterns=[multipattern(d1s[i], d1s[j], d2s[k], d2s[l])])

    def TotalOrder(self, S):
        return z3.And(*[self._agree(S, a, b) for a in self.M for b in self.M if a < b])

    def SurvivorTotalOrder(self, S):
        return z3.And(*[z3.Implies(z3.And(z3.Not(S["cr"][a]), z3.Not(S["cr"][b])), self._agree(S, a, b))
                        for a in self.M for b in self.M if a < b])
