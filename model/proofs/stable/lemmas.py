"""STABLE at a fixed N: the lemmas of the inductive invariant for SafeGC
and StabilityBound over ``relation.StableRelation`` (docs/stable.md states
each), and the matrix's fixed-N encoding.
"""

from __future__ import annotations

from itertools import product
import z3
from .relation import StableRelation


class StableEncoding(StableRelation):
    """STABLE at fixed N: the relation and its lemmas."""

    # --- invariant ------------------------------------------------------------------
    # Each lemma is a conjunction over the finite member set; docs/proofs.md
    # states them in words.  Member 1 is the coordinator throughout (the
    # initial view is 1..NInit and joiners are larger, so min(group) = 1).
    @property
    def lemmas(self):
        return {
            "Coordinator": self.Coordinator,
            "Outsiders": self.Outsiders,
            "Views": self.Views,
            "NonNegative": self.NonNegative,
            "SeqBounds": self.SeqBounds,
            "DataInFlight": self.DataInFlight,
            "DigestLows": self.DigestLows,
            "StableVectors": self.StableVectors,
            "StabilityBound": self.StabilityBound,
            "JoinDigest": self.JoinDigest,
            "JoinStable": self.JoinStable,
            "JoinStability": self.JoinStability,
            "GroupGC": self.GroupGC,
            "SafeGC": self.SafeGC,
        }

    def _all(self, f, arity: int) -> z3.BoolRef:
        return z3.And(*[f(*xs) for xs in product(self.M, repeat=arity)])

    def Coordinator(self, S):
        """Member 1 is in the group and (with CoordSwitchesAtJoin) its view is the group."""
        out = [S["group"][1]]
        if self.C:
            out += [S["view"][1, x] == S["group"][x] for x in self.M]
        return z3.And(*out)

    def SeqBounds(self, S):
        """Seqnos: a member's own delivered is its sent; nothing delivered,
        received or in a digest's highs exceeds the sender's sent."""
        def f(p, x):
            return z3.And(
                S["sent"][p] >= 0,
                z3.Implies(S["group"][p], S["delivered"][p, p] == S["sent"][p]),
                S["delivered"][p, x] <= S["received"][p, x], S["received"][p, x] <= S["sent"][x],
                z3.Implies(S["dom"][p, x], S["high"][p, x] <= S["sent"][x]),
                *[z3.Implies(z3.And(S["sy"][q, p], S["sy_in"][q, p, x]), S["sy_hi"][q, p, x] <= S["sent"][x])
                  for q in self.M])
        return self._all(f, 2)

    def Outsiders(self, S):
        """A member outside the group has no view, digest, history or messages."""
        def f(j, x):
            out = z3.And(z3.Not(S["view"][j, x]), z3.Not(S["dom"][j, x]), z3.Not(S["heardFrom"][j, x]),
                         S["delivered"][j, x] == 0, S["received"][j, x] == 0, S["purged"][j, x] == 0,
                         S["sent"][j] == 0,
                         z3.Not(S["st"][x, j]), z3.Not(S["sy"][x, j]),
                         z3.Not(S["st"][j, x]), z3.Not(S["sy"][j, x]))
            return z3.Implies(z3.Not(S["group"][j]), out)
        return self._all(f, 2)

    def Views(self, S):
        """A group member's view holds itself and the coordinator, lies within the
        group, equals its digest's domain, and contains its heardFrom."""
        def f(p, x):
            return z3.And(
                z3.Implies(S["group"][p], z3.And(S["view"][p, p], S["view"][p, 1])),
                z3.Implies(S["view"][p, x], S["group"][x]),
                S["dom"][p, x] == S["view"][p, x],
                z3.Implies(S["heardFrom"][p, x], S["view"][p, x]))
        return self._all(f, 2)

    def NonNegative(self, S):
        return self._all(lambda p, x: z3.And(S["delivered"][p, x] >= 0, S["purged"][p, x] >= 0), 2)

    def DataInFlight(self, S):
        """Data messages carry seqnos 1..sent[p] and go to group members."""
        def f(p, q):
            k = z3.Int(f"{S['tag']}_kq_{p}_{q}")
            return z3.ForAll([k], z3.Implies(S["data"][p, q][k],
                                             z3.And(1 <= k, k <= S["sent"][p], S["group"][q], S["group"][p])),
                             patterns=[S["data"][p, q][k]])
        return self._all(f, 2)

    def DigestLows(self, S):
        """A low is at most the delivered seqno of every member already heard from."""
        def f(p, x, y):
            return z3.Implies(z3.And(S["dom"][p, x], S["dom"][p, y], z3.Not(S["heardFrom"][p, y])),
                              S["low"][p, x] <= S["delivered"][y, x])
        return self._all(f, 3)

    def StableVectors(self, S):
        """A STABLE vector is at most its sender's delivered vector now."""
        def f(p, q, x):
            return z3.Implies(z3.And(S["st"][p, q], S["st_in"][p, q, x]),
                              S["st_v"][p, q, x] <= S["delivered"][p, x])
        return self._all(f, 3)

    def StabilityBound(self, S):
        """The spec's StabilityBound; and a STABILITY digest covers the coordinator."""
        def f(p, q, x, z):
            return z3.Implies(S["sy"][p, q], z3.And(
                S["sy_in"][p, q, 1],
                z3.Implies(z3.And(S["sy_in"][p, q, x], S["sy_in"][p, q, z]),
                           S["sy_lo"][p, q, x] <= S["delivered"][z, x])))
        return self._all(f, 4)

    def SpecStabilityBound(self, S):
        """Stable.tla's StabilityBound as written (the lemma above adds the
        coordinator): the property the implication query asks."""
        def f(p, q, x, z):
            return z3.Implies(z3.And(S["sy"][p, q], S["sy_in"][p, q, x], S["sy_in"][p, q, z]),
                              S["sy_lo"][p, q, x] <= S["delivered"][z, x])
        return self._all(f, 4)

    def JoinDigest(self, S):
        """Once a digest of an older view has merged the coordinator's vector,
        its lows are at most the delivered vector of any later joiner (the
        joiner got the coordinator's vector at the join, and the coordinator's
        later vectors carry the new view, which the digest rejects)."""
        def f(p, j, x):
            return z3.Implies(z3.And(S["group"][j], z3.Not(S["dom"][p, j]), S["dom"][p, x],
                                     S["dom"][p, 1], z3.Not(S["heardFrom"][p, 1])),
                              S["low"][p, x] <= S["delivered"][j, x])
        return self._all(f, 3)

    def JoinStable(self, S):
        """The coordinator's STABLE vectors of an older view are at most a later joiner's."""
        def f(q, j, x):
            return z3.Implies(z3.And(S["st"][1, q], S["group"][j], z3.Not(S["st_in"][1, q, j]),
                                     S["st_in"][1, q, x]),
                              S["st_v"][1, q, x] <= S["delivered"][j, x])
        return self._all(f, 3)

    def JoinStability(self, S):
        """A STABILITY digest of an older view has lows at most a later joiner's."""
        def f(p, q, j, x):
            return z3.Implies(z3.And(S["sy"][p, q], S["group"][j], z3.Not(S["sy_in"][p, q, j]),
                                     S["sy_in"][p, q, x]),
                              S["sy_lo"][p, q, x] <= S["delivered"][j, x])
        return self._all(f, 4)

    def GroupGC(self, S):
        """SafeGC over the whole group, not only the purging member's view."""
        return self._all(lambda p, q, x: z3.Implies(z3.And(S["group"][p], S["group"][q]),
                                                    S["purged"][p, x] <= S["delivered"][q, x]), 3)

    def SafeGC(self, S) -> z3.BoolRef:
        M = self.M
        return z3.And(*[z3.Implies(S["view"][p, q], S["purged"][p, x] <= S["delivered"][q, x])
                        for p in M for q in M for x in M])


def matrix_encoding(N: int, *, NInit: int, **kw) -> StableEncoding:
    """A variant of the proof matrix (spec/Stable/manifest.json, "proofs"):
    N members, the first ``NInit`` of them (at most N) in the first view.
    JoinRace is asked at the size of its smallest manifest witness
    (PairJoinRace: member 1 alone, 2 joins, 1 multicasts); the N = 3 model
    (JoinRace) finds it only after 120,183 states, beyond the classifier's
    prefix."""
    return StableEncoding(N, min(NInit, N), **kw)
