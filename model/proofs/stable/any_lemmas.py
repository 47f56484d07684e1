"""STABLE for every N: the fixed-N lemmas (lemmas.py) over the member sort,
written once for z3 and for explorer states.
"""

from __future__ import annotations

from ...stable import StableState
from .any_relation import StableAnyRelation


class StableAnyEncoding(StableAnyRelation):
    """STABLE for every N: the relation and its lemmas."""

    # --- invariant: StableEncoding's lemmas, quantified over members ----------------
    @property
    def lemmas(self):
        return {name: getattr(self, name) for name in (
            "Coordinator", "Outsiders", "Views", "NonNegative", "SeqBounds", "DataInFlight", "DigestLows",
            "StableVectors", "StabilityBound", "JoinDigest", "JoinStable", "JoinStability", "GroupGC",
            "SafeGC")}

    def Coordinator(self, S):
        o = S["o"]
        if not self.C:
            return S["group"][o.one]
        return o.And(S["group"][o.one], o.forall(1, lambda x: S["view"][o.one, x] == S["group"][x]))

    def Outsiders(self, S):
        o = S["o"]
        return o.forall(2, lambda j, x: o.Implies(o.Not(S["group"][j]), o.And(
            o.Not(S["view"][j, x]), o.Not(S["dom"][j, x]), o.Not(S["heardFrom"][j, x]),
            S["delivered"][j, x] == 0, S["received"][j, x] == 0, S["purged"][j, x] == 0, S["sent"][j] == 0,
            o.Not(S["st"][x, j]), o.Not(S["sy"][x, j]), o.Not(S["st"][j, x]), o.Not(S["sy"][j, x]))))

    def Views(self, S):
        o = S["o"]
        return o.forall(2, lambda p, x: o.And(
            o.Implies(S["group"][p], o.And(S["view"][p, p], S["view"][p, o.one])),
            o.Implies(S["view"][p, x], S["group"][x]),
            S["dom"][p, x] == S["view"][p, x],
            o.Implies(S["heardFrom"][p, x], S["view"][p, x])))

    def NonNegative(self, S):
        o = S["o"]
        return o.forall(2, lambda p, x: o.And(S["delivered"][p, x] >= 0, S["purged"][p, x] >= 0))

    def SeqBounds(self, S):
        o = S["o"]
        return o.And(
            o.forall(2, lambda p, x: o.And(
                S["sent"][p] >= 0,
                o.Implies(S["group"][p], S["delivered"][p, p] == S["sent"][p]),
                S["delivered"][p, x] <= S["received"][p, x], S["received"][p, x] <= S["sent"][x],
                o.Implies(S["dom"][p, x], S["high"][p, x] <= S["sent"][x]))),
            o.forall(3, lambda q, p, x: o.Implies(o.And(S["sy"][q, p], S["sy_in"][q, p, x]),
                                                  S["sy_hi"][q, p, x] <= S["sent"][x])))

    def DataInFlight(self, S):
        o = S["o"]
        return o.forall_in(S["data"], lambda p, q, k: o.And(1 <= k, k <= S["sent"][p], S["group"][q],
                                                             S["group"][p]))

    def DigestLows(self, S):
        o = S["o"]
        return o.forall(3, lambda p, x, y: o.Implies(
            o.And(S["dom"][p, x], S["dom"][p, y], o.Not(S["heardFrom"][p, y])),
            S["low"][p, x] <= S["delivered"][y, x]))

    def StableVectors(self, S):
        o = S["o"]
        return o.forall(3, lambda p, q, x: o.Implies(o.And(S["st"][p, q], S["st_in"][p, q, x]),
                                                     S["st_v"][p, q, x] <= S["delivered"][p, x]))

    def StabilityBound(self, S):
        o = S["o"]
        return o.And(
            o.forall(2, lambda p, q: o.Implies(S["sy"][p, q], S["sy_in"][p, q, o.one])),
            self.SpecStabilityBound(S))

    def SpecStabilityBound(self, S):
        """Stable.tla's StabilityBound as written (the lemma above adds the
        coordinator): the property the implication query asks."""
        o = S["o"]
        return o.forall(4, lambda p, q, x, z: o.Implies(
            o.And(S["sy"][p, q], S["sy_in"][p, q, x], S["sy_in"][p, q, z]),
            S["sy_lo"][p, q, x] <= S["delivered"][z, x]))

    def JoinDigest(self, S):
        o = S["o"]
        return o.forall(3, lambda p, j, x: o.Implies(
            o.And(S["group"][j], o.Not(S["dom"][p, j]), S["dom"][p, x], S["dom"][p, o.one],
                  o.Not(S["heardFrom"][p, o.one])),
            S["low"][p, x] <= S["delivered"][j, x]))

    def JoinStable(self, S):
        o = S["o"]
        return o.forall(3, lambda q, j, x: o.Implies(
            o.And(S["st"][o.one, q], S["group"][j], o.Not(S["st_in"][o.one, q, j]), S["st_in"][o.one, q, x]),
            S["st_v"][o.one, q, x] <= S["delivered"][j, x]))

    def JoinStability(self, S):
        o = S["o"]
        return o.forall(4, lambda p, q, j, x: o.Implies(
            o.And(S["sy"][p, q], S["group"][j], o.Not(S["sy_in"][p, q, j]), S["sy_in"][p, q, x]),
            S["sy_lo"][p, q, x] <= S["delivered"][j, x]))

    def GroupGC(self, S):
        o = S["o"]
        return o.forall(3, lambda p, q, x: o.Implies(o.And(S["group"][p], S["group"][q]),
                                                     S["purged"][p, x] <= S["delivered"][q, x]))

    def SafeGC(self, S):
        o = S["o"]
        return o.forall(3, lambda p, q, x: o.Implies(S["view"][p, q], S["purged"][p, x] <= S["delivered"][q, x]))

    def holds(self, name: str, s: StableState) -> bool:
        """Lemma ``name`` instantiated at s's N, on s."""
        return self.lemmas[name](self.py_state(s))


def any_encoding(_n=None, *, variant: str, **kw) -> StableAnyEncoding:
    """A variant of the proof matrix proved for every N (the manifest's
    ``members: "any"``)."""
    return StableAnyEncoding(variant=variant, **kw)
