"""STABLE (spec/Stable/Stable.tla) as a z3 transition relation, and its
inductive invariant for SafeGC.

Theory of operation
-------------------
Seed 002 ("pbcast.STABLE protocol"): a member merges the delivered vectors
of the members of its digest into lows (min) and highs (max), and once it
has heard from all of them it multicasts the digest as STABILITY; receivers
purge at or below the lows.  The encoding fixes the member set ``1..N``
(every N the caller asks for; the CLI runs N = 2..5) and leaves seqnos and
message counts unbounded:

* each per-member function is one z3 Int (or Bool for sets) per pair;
* the data messages from p to q are a z3 array Int -> Bool (any number of
  seqnos in flight);
* STABLE and STABILITY messages: the spec removes every message of that type
  from p before posting new ones (``Others``), so each link holds at most one
  of each -- a presence bit plus its vector / digest per member;
* ``MaxSeq`` and ``MaxInFlight`` are dropped for proofs (unbounded), kept
  (``max_seq``) only when the encoding is compared to a bounded model.

Values that the spec leaves undefined (a member outside a digest's domain,
an absent message's payload) are free in z3; every lemma reads them under
their guard.  ``GossipMergedDigest = TRUE`` is not encoded (a liveness
variant).  The inductive invariant's lemmas are explained in docs/proofs.md.
"""

from __future__ import annotations

from itertools import product
from typing import Any

import z3

from ..core import Label
from ..stable import DataMsg, Entry, StableModel, StableMsg, StabilityMsg, StableState
from ..values import Fn
from .prover import Encoding, readers, z3_set
from .parametric import (Node, PyOps, Table, Z3Ops, ground, int_literals, le, members_of, node, one, order_axioms,
                         row, universe)

I = z3.IntSort()


def _max(a, b):
    return z3.If(a >= b, a, b)


def _min(a, b):
    return z3.If(a <= b, a, b)


class StableEncoding(Encoding):
    protocol = "stable"
    properties = ("SafeGC",)

    def __init__(self, N: int = 3, NInit: int = 2, *, reset: bool = True, view_reset: bool | None = None,
                 coord_switches: bool = True, senders: frozenset | None = None, max_seq: int | None = None, variant: str = "",
                 reach_senders: frozenset = frozenset({2}), reach_max_seq: int = 1) -> None:
        if not 1 <= NInit <= N:
            raise ValueError(f"stable encoding: need 1 <= NInit <= N, got N={N} NInit={NInit}")
        self.N, self.NInit = N, NInit
        self.members = N
        self.M = tuple(range(1, N + 1))
        self.V0 = frozenset(range(1, NInit + 1))
        # reset: ResetOnDifferentMembers; view_reset: ResetOnViewChange (by
        # default the same, the two together being the fixed protocol)
        self.R, self.C = reset, coord_switches
        self.V = reset if view_reset is None else view_reset
        self.Senders = frozenset(self.M) if senders is None else frozenset(senders)
        self.max_seq = max_seq
        self.variant = variant or ("Fixed" if reset and self.V and coord_switches else
                                   "Flawed" if not reset and not self.V else
                                   "SeedFix" if not self.V else "JoinRace")
        self.expect_cti = not (reset and self.V and coord_switches)
        # a flawed variant is judged on SafeGC alone (its CTI); a fixed one
        # also proves the spec's StabilityBound (implied by the lemma of that name)
        self.properties = ("SafeGC",) if self.expect_cti else ("SafeGC", "StabilityBound")
        self.property_formulas = {"StabilityBound": self.SpecStabilityBound}
        self._k = 0
        # the bounded model that classifies counterexamples: the manifest's
        # (Senders {2}, MaxSeq 1, unbounded network)
        self.reach_senders, self.reach_max_seq = frozenset(reach_senders), reach_max_seq

    @classmethod
    def from_constants(cls, c: dict) -> "StableEncoding":
        """The encoding of a manifest model's constants (its MaxSeq and Senders
        kept, so that its edges can be compared with the model's)."""
        if c.get("GossipMergedDigest"):
            raise ValueError("stable encoding: GossipMergedDigest (a liveness variant) is not encoded")
        return cls(int(c["N"]), int(c["NInit"]), reset=bool(c["ResetOnDifferentMembers"]),
                   coord_switches=bool(c["CoordSwitchesAtJoin"]), senders=frozenset(c["Senders"]),
                   max_seq=int(c["MaxSeq"]), reach_senders=frozenset(c["Senders"]),
                   reach_max_seq=int(c["MaxSeq"]))

    def model(self) -> StableModel:
        """The bounded model of the same size; MaxSeq 1 and Senders as encoded
        (the manifest's models), to look counterexamples up."""
        return StableModel({"N": self.N, "NInit": self.NInit, "Senders": self.reach_senders,
                            "MaxSeq": self.reach_max_seq,
                            "ResetOnDifferentMembers": self.R, "ResetOnViewChange": self.V,
                            "CoordSwitchesAtJoin": self.C,
                            "GossipMergedDigest": False, "MaxInFlight": 0})

    def bounded(self, S):
        return z3.And(*[z3.And(S["sent"][p] <= (self.reach_max_seq if p in self.reach_senders else 0))
                        for p in self.M])

    # --- state ------------------------------------------------------------------
    def fresh(self, t: str) -> dict[str, Any]:
        M = self.M
        B = lambda n: z3.Bool(f"{t}_{n}")  # noqa: E731
        N_ = lambda n: z3.Int(f"{t}_{n}")  # noqa: E731
        S: dict[str, Any] = {"tag": t}
        S["group"] = {x: B(f"group_{x}") for x in M}
        S["sent"] = {p: N_(f"sent_{p}") for p in M}
        for f in ("view", "heardFrom", "dom"):
            S[f] = {(p, x): B(f"{f}_{p}_{x}") for p in M for x in M}
        for f in ("delivered", "received", "purged", "low", "high"):
            S[f] = {(p, x): N_(f"{f}_{p}_{x}") for p in M for x in M}
        S["data"] = {(p, q): z3.Array(f"{t}_data_{p}_{q}", I, z3.BoolSort()) for p in M for q in M}
        for f in ("st", "sy"):
            S[f] = {(p, q): B(f"{f}_{p}_{q}") for p in M for q in M}
        for f in ("st_in", "sy_in"):
            S[f] = {(p, q, x): B(f"{f}_{p}_{q}_{x}") for p in M for q in M for x in M}
        for f in ("st_v", "sy_lo", "sy_hi"):
            S[f] = {(p, q, x): N_(f"{f}_{p}_{q}_{x}") for p in M for q in M for x in M}
        return S

    _fields = ("group", "sent", "view", "heardFrom", "dom", "delivered", "received", "purged",
               "low", "high", "data", "st", "sy", "st_in", "sy_in", "st_v", "sy_lo", "sy_hi")

    def _frame(self, S, T, upd: dict) -> z3.BoolRef:
        """T equals S updated by ``upd`` (field -> {key: term}); the rest UNCHANGED."""
        cs = []
        for f in self._fields:
            u = upd.get(f, {})
            for k, v in S[f].items():
                cs.append(T[f][k] == u.get(k, v))
        return z3.And(*cs)

    # --- Init -------------------------------------------------------------------
    def init(self, S) -> z3.BoolRef:
        M, V0 = self.M, self.V0
        cs = [S["group"][x] == (x in V0) for x in M]
        for p in M:
            cs.append(S["sent"][p] == 0)
            for x in M:
                inV = p in V0 and x in V0
                cs += [S["view"][p, x] == inV, S["heardFrom"][p, x] == inV, S["dom"][p, x] == inV,
                       S["delivered"][p, x] == 0, S["received"][p, x] == 0, S["purged"][p, x] == 0]
                if inV:
                    cs += [S["low"][p, x] == 0, S["high"][p, x] == 0]
            for q in M:
                cs += [S["data"][p, q] == z3.K(I, z3.BoolVal(False)), z3.Not(S["st"][p, q]),
                       z3.Not(S["sy"][p, q])]
        return z3.And(*cs)

    # --- helpers (the spec's operators) ---------------------------------------------
    def _nonempty(self, S, p):
        return z3.Or(*[S["view"][p, x] for x in self.M])

    def _merge(self, S, p, vin, v) -> dict:
        """Merge(digest[p], v) as updates of low/high; vin(x), v(x): v's domain and values."""
        lo, hi = {}, {}
        for x in self.M:
            take = z3.And(S["dom"][p, x], vin(x))
            lo[p, x] = z3.If(take, _min(S["low"][p, x], v(x)), S["low"][p, x])
            hi[p, x] = z3.If(take, _max(S["high"][p, x], v(x)), S["high"][p, x])
        return {"low": lo, "high": hi}

    def _fresh_digest(self, p, Vin, vec) -> dict:
        return {"dom": {(p, x): Vin(x) for x in self.M},
                "low": {(p, x): vec(x) for x in self.M},
                "high": {(p, x): vec(x) for x in self.M}}

    def _purge_learn(self, S, q, din, dlo, dhi) -> dict:
        return {"purged": {(q, x): z3.If(din(x), _max(S["purged"][q, x], dlo(x)), S["purged"][q, x])
                           for x in self.M},
                "received": {(q, x): z3.If(din(x), _max(S["received"][q, x], dhi(x)), S["received"][q, x])
                             for x in self.M}}

    @staticmethod
    def _join(*ds: dict) -> dict:
        out: dict = {}
        for d in ds:
            for f, u in d.items():
                out.setdefault(f, {}).update(u)
        return out

    def _k_var(self, name: str):
        self._k += 1
        return z3.Int(f"k_{name}_{self._k}")

    # --- actions ----------------------------------------------------------------
    def actions(self, S, T):
        M, fr = self.M, self._frame
        for p in M:   # Multicast(p)
            if p not in self.Senders:
                continue
            k = S["sent"][p] + 1
            g = [self._nonempty(S, p)]
            if self.max_seq is not None:
                g.append(S["sent"][p] < self.max_seq)
            data = {(p, q): z3.If(z3.And(S["view"][p, q], q != p), z3.Store(S["data"][p, q], k, True),
                                  S["data"][p, q]) for q in M}
            yield Label("Multicast", (p,)), z3.And(*g, fr(S, T, {
                "sent": {p: k}, "delivered": {(p, p): k}, "received": {(p, p): k}, "data": data}))
        for q, p in product(M, M):  # ReceiveData(q, p): a data message from p to q
            k = self._k_var(f"rd{q}{p}")
            d = S["delivered"][q, p]
            yield Label("ReceiveData", (q, p)), z3.And(S["data"][p, q][k], fr(S, T, {
                "delivered": {(q, p): z3.If(k == d + 1, k, d)},
                "received": {(q, p): _max(S["received"][q, p], k)},
                "data": {(p, q): z3.Store(S["data"][p, q], k, False)}}))
        for q, p in product(M, M):  # Retransmit(q, p)
            if q == p:
                continue
            d = S["delivered"][q, p]
            yield Label("Retransmit", (q, p)), z3.And(
                d < S["received"][q, p], S["purged"][p, p] < d + 1,
                fr(S, T, {"delivered": {(q, p): d + 1}}))
        for q, p in product(M, M):  # LoseMessage(q, p): any message from p to q
            k = self._k_var(f"lm{q}{p}")
            yield Label("LoseMessage", (q, p)), z3.Or(
                z3.And(S["data"][p, q][k], fr(S, T, {"data": {(p, q): z3.Store(S["data"][p, q], k, False)}})),
                z3.And(S["st"][p, q], fr(S, T, {"st": {(p, q): False}})),
                z3.And(S["sy"][p, q], fr(S, T, {"sy": {(p, q): False}})))
        for p in M:  # SendStable(p)
            vin = lambda x, p=p: S["view"][p, x]  # noqa: E731
            vec = lambda x, p=p: S["delivered"][p, x]  # noqa: E731
            post = {"st": {(p, q): z3.And(S["view"][p, q], q != p) for q in M},
                    "st_in": {(p, q, x): vin(x) for q in M for x in M},
                    "st_v": {(p, q, x): vec(x) for q in M for x in M},
                    "heardFrom": {(p, p): False}}
            yield Label("SendStable", (p,)), z3.And(self._nonempty(S, p), fr(
                S, T, self._join(post, self._merge(S, p, vin, vec))))
        for q, p in product(M, M):  # ReceiveStable(q, p)
            vin = lambda x, p=p, q=q: S["st_in"][p, q, x]  # noqa: E731
            vec = lambda x, p=p, q=q: S["st_v"][p, q, x]  # noqa: E731
            consumed = {"st": {(p, q): False}}
            accept = fr(S, T, self._join(consumed, self._merge(S, q, vin, vec),
                                         {"heardFrom": {(q, p): False}}))
            if self.R:
                differ = z3.Or(*[S["dom"][q, x] != vin(x) for x in M])
                reset = fr(S, T, self._join(consumed, {"heardFrom": {(q, x): S["view"][q, x] for x in M}}))
                body = z3.If(differ, reset, accept)
            else:
                body = accept
            yield Label("ReceiveStable", (q, p)), z3.And(S["st"][p, q], body)
        for p in M:  # SendStability(p)
            din = lambda x, p=p: S["dom"][p, x]  # noqa: E731
            dlo = lambda x, p=p: S["low"][p, x]  # noqa: E731
            dhi = lambda x, p=p: S["high"][p, x]  # noqa: E731
            post = {"sy": {(p, q): z3.And(S["view"][p, q], q != p) for q in M},
                    "sy_in": {(p, q, x): din(x) for q in M for x in M},
                    "sy_lo": {(p, q, x): dlo(x) for q in M for x in M},
                    "sy_hi": {(p, q, x): dhi(x) for q in M for x in M},
                    "heardFrom": {(p, x): S["view"][p, x] for x in M}}
            upd = self._join(post, self._purge_learn(S, p, din, dlo, dhi),
                             self._fresh_digest(p, lambda x, p=p: S["view"][p, x],
                                                lambda x, p=p: S["delivered"][p, x]))
            yield Label("SendStability", (p,)), z3.And(
                self._nonempty(S, p), *[z3.Not(S["heardFrom"][p, x]) for x in M], fr(S, T, upd))
        for q, p in product(M, M):  # ReceiveStability(q, p)
            din = lambda x, p=p, q=q: S["sy_in"][p, q, x]  # noqa: E731
            dlo = lambda x, p=p, q=q: S["sy_lo"][p, q, x]  # noqa: E731
            dhi = lambda x, p=p, q=q: S["sy_hi"][p, q, x]  # noqa: E731
            upd = self._join({"sy": {(p, q): False}, "heardFrom": {(q, x): S["view"][q, x] for x in M}},
                             self._purge_learn(S, q, din, dlo, dhi),
                             self._fresh_digest(q, lambda x, q=q: S["view"][q, x],
                                                lambda x, q=q: S["delivered"][q, x]))
            yield Label("ReceiveStability", (q, p)), z3.And(S["sy"][p, q], fr(S, T, upd))
        for j in M:  # Join(j): c = min(group) is a disjunction over c
            alts = []
            for c in M:
                if c == j:
                    continue
                isc = z3.And(S["group"][c], *[z3.Not(S["group"][y]) for y in M if y < c])
                Vin = lambda x, j=j: z3.Or(S["group"][x], x == j)  # noqa: E731
                installs = {j, c} if self.C else {j}
                upd: dict = {"group": {j: True}, "view": {}, "dom": {}, "low": {}, "high": {},
                             "heardFrom": {}, "delivered": {}, "received": {}}
                for x in M:
                    upd["delivered"][j, x] = S["delivered"][c, x]
                    upd["received"][j, x] = S["delivered"][c, x]
                    for p in installs:
                        upd["view"][p, x] = Vin(x)
                        upd["dom"][p, x] = Vin(x)
                        upd["low"][p, x] = S["delivered"][c, x]
                        upd["high"][p, x] = S["delivered"][c, x]
                    upd["heardFrom"][j, x] = Vin(x)
                    if self.C and self.V:
                        upd["heardFrom"][c, x] = Vin(x)
                alts.append(z3.And(isc, fr(S, T, upd)))
            guard = [z3.Not(S["group"][j])] + [
                z3.Implies(S["group"][p], S["view"][p, x] == S["group"][x]) for p in M for x in M]
            yield Label("Join", (j,)), z3.And(*guard, z3.Or(*alts))
        for p in M:  # InstallView(p)
            g = lambda x: S["group"][x]  # noqa: E731
            upd = self._join({"view": {(p, x): g(x) for x in M}},
                             self._fresh_digest(p, g, lambda x, p=p: S["delivered"][p, x]))
            if self.V:
                upd["heardFrom"] = {(p, x): g(x) for x in M}
            yield Label("InstallView", (p,)), z3.And(
                self._nonempty(S, p), S["group"][p], z3.Or(*[S["view"][p, x] != g(x) for x in M]),
                fr(S, T, upd))

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

    # --- the mapping between model states and z3 values --------------------------------
    # a payload field is defined only where its guard holds: (field, key length)
    _guard = {"low": ("dom", 2), "high": ("dom", 2), "st_in": ("st", 2), "sy_in": ("sy", 2),
              "st_v": ("st_in", 3), "sy_lo": ("sy_in", 3), "sy_hi": ("sy_in", 3)}

    def value(self, S, s: StableState) -> z3.BoolRef:
        M = self.M
        cs = [S["group"][x] == (x in s.group) for x in M]
        for p in M:
            cs.append(S["sent"][p] == s.sent[p])
            d = s.digest[p]
            for x in M:
                cs += [S["view"][p, x] == (x in s.view[p]), S["heardFrom"][p, x] == (x in s.heardFrom[p]),
                       S["dom"][p, x] == (x in d),
                       S["delivered"][p, x] == s.delivered[p][x], S["received"][p, x] == s.received[p][x],
                       S["purged"][p, x] == s.purged[p][x]]
                if x in d:
                    cs += [S["low"][p, x] == d[x]["low"], S["high"][p, x] == d[x]["high"]]
        data: dict = {}
        st: dict = {}
        sy: dict = {}
        for m in s.net:
            key = (m["from"], m["to"])
            if m["type"] == "data":
                data.setdefault(key, set()).add(m["seq"])
            elif m["type"] == "stable":
                if key in st:
                    raise ValueError(f"stable encoding: two STABLE messages on link {key}")
                st[key] = m["vector"]
            else:
                if key in sy:
                    raise ValueError(f"stable encoding: two STABILITY messages on link {key}")
                sy[key] = m["digest"]
        for p in M:
            for q in M:
                cs.append(S["data"][p, q] == z3_set(data.get((p, q), ())))
                cs += [S["st"][p, q] == ((p, q) in st), S["sy"][p, q] == ((p, q) in sy)]
                if (p, q) in st:
                    v = st[p, q]
                    for x in M:
                        cs.append(S["st_in"][p, q, x] == (x in v))
                        if x in v:
                            cs.append(S["st_v"][p, q, x] == v[x])
                if (p, q) in sy:
                    d = sy[p, q]
                    for x in M:
                        cs.append(S["sy_in"][p, q, x] == (x in d))
                        if x in d:
                            cs += [S["sy_lo"][p, q, x] == d[x]["low"], S["sy_hi"][p, q, x] == d[x]["high"]]
        return z3.And(*cs)

    def decode(self, m: z3.ModelRef, S) -> StableState:
        M = self.M
        ev, b, n = readers(m)
        net = set()
        for p in M:
            for q in M:
                for k in range(1, max(n(S["sent"][p]), 0) + 1):
                    if b(S["data"][p, q][k]):
                        net.add(DataMsg(p, q, k))
                if b(S["st"][p, q]):
                    net.add(StableMsg(p, q, Fn((x, n(S["st_v"][p, q, x])) for x in M if b(S["st_in"][p, q, x]))))
                if b(S["sy"][p, q]):
                    net.add(StabilityMsg(p, q, Fn(
                        (x, Entry(n(S["sy_lo"][p, q, x]), n(S["sy_hi"][p, q, x])))
                        for x in M if b(S["sy_in"][p, q, x]))))
        row = lambda f, p: Fn((x, n(S[f][p, x])) for x in M)  # noqa: E731
        return StableState(
            group=frozenset(x for x in M if b(S["group"][x])),
            view=Fn((p, frozenset(x for x in M if b(S["view"][p, x]))) for p in M),
            sent=Fn((p, n(S["sent"][p])) for p in M),
            delivered=Fn((p, row("delivered", p)) for p in M),
            received=Fn((p, row("received", p)) for p in M),
            purged=Fn((p, row("purged", p)) for p in M),
            digest=Fn((p, Fn((x, Entry(n(S["low"][p, x]), n(S["high"][p, x])))
                             for x in M if b(S["dom"][p, x]))) for p in M),
            heardFrom=Fn((p, frozenset(x for x in M if b(S["heardFrom"][p, x]))) for p in M),
            net=frozenset(net),
        )


def matrix_encoding(N: int, *, NInit: int, **kw) -> StableEncoding:
    """A variant of the proof matrix (spec/Stable/manifest.json, "proofs"):
    N members, the first ``NInit`` of them (at most N) in the first view.
    JoinRace is asked at the size of its smallest manifest witness
    (PairJoinRace: member 1 alone, 2 joins, 1 multicasts); the N = 3 model
    (JoinRace) finds it only after 120,183 states, beyond the classifier's
    prefix."""
    return StableEncoding(N, min(NInit, N), **kw)


# --- every N: members as an uninterpreted sort ---------------------------------------

def _arr(name: str, *dom, rng=I):
    return z3.Array(name, *dom, rng)


class StableAnyEncoding(Encoding):
    """STABLE for every number of members (model/proofs/parametric.py).

    The same actions and lemmas as ``StableEncoding``, with members as the
    sort ``Node``: each per-member field is an array over it (``sent``
    ``Node -> Int``, ``delivered[p, x]`` ``Node x Node -> Int``, a STABLE
    vector ``st_v[p, q, x]`` ``Node^3 -> Int``, the data messages ``data[p,
    q, k]`` ``Node x Node x Int -> Bool``), an action's parameters are
    ``Node`` constants, and each lemma is quantified over members.  The
    coordinator is ``min(group)`` in the order ``le`` (member 1 = ``one``
    is least), the first view any set ``V0`` that holds ``one``, and the
    senders any set ``sender``: a proof holds for each choice.  A guard
    ``\\E x`` (a non-empty view, a view other than the group, a vector over
    other members) is a ``Node`` constant, so that every quantifier of a
    query stays universal after skolemisation."""

    protocol = "stable"
    properties = ("SafeGC",)
    members = "any"     # the manifest's word: a proof holds for every N
    # every query under z3's deterministic resource limit, no wall-clock
    # time-out: the same answers on every run and machine (engine._solver)
    rlimit = 20_000_000
    first_rlimit = 300_000

    def __init__(self, *, reset: bool = True, view_reset: bool | None = None, coord_switches: bool = True,
                 variant: str = "", reach_N: int = 3, reach_NInit: int = 2,
                 reach_senders: frozenset = frozenset({2}), reach_max_seq: int = 1,
                 senders: frozenset | None = None, max_seq: int | None = None) -> None:
        self.R, self.C = reset, coord_switches
        self.V = reset if view_reset is None else view_reset
        self.variant = variant or ("AnyFixed" if reset and self.V and coord_switches else "AnyFlawed")
        self.expect_cti = not (reset and self.V and coord_switches)
        # a flawed variant is judged on SafeGC alone (its CTI); a fixed one
        # also proves the spec's StabilityBound (implied by the lemma of that name)
        self.properties = ("SafeGC",) if self.expect_cti else ("SafeGC", "StabilityBound")
        self.property_formulas = {"StabilityBound": self.SpecStabilityBound}
        # what z3 compares with an explorer: the senders and MaxSeq of a
        # manifest model (None: any set of senders, unbounded seqnos)
        self.senders, self.max_seq = senders, max_seq
        # the bounded model whose shortest counterexample pins a CTI
        # (engine._first_break); no ``bounded``: a CTI of another query is
        # reported with the size z3 chose, unclassified unless the model
        # meets it
        self.reach = (reach_N, reach_NInit, frozenset(reach_senders), reach_max_seq)
        self.V0 = z3.Function("V0", Node, z3.BoolSort())           # the first view
        self.sender = z3.Function("sender", Node, z3.BoolSort())   # Senders

    @classmethod
    def from_constants(cls, c: dict) -> "StableAnyEncoding":
        """The encoding compared with a manifest model (its Senders and MaxSeq)."""
        if c.get("GossipMergedDigest"):
            raise ValueError("stable encoding: GossipMergedDigest (a liveness variant) is not encoded")
        return cls(reset=bool(c["ResetOnDifferentMembers"]), view_reset=bool(c["ResetOnViewChange"]),
                   coord_switches=bool(c["CoordSwitchesAtJoin"]), reach_N=int(c["N"]),
                   reach_NInit=int(c["NInit"]), reach_senders=frozenset(c["Senders"]),
                   reach_max_seq=int(c["MaxSeq"]), senders=frozenset(c["Senders"]), max_seq=int(c["MaxSeq"]))

    def query(self, fs: list) -> list:
        return ground(order_axioms() + fs)

    def first_query(self, fs: list):
        """z3's own quantifier instantiation first: it proves most queries
        in a few hundred thousand resource units, where grounding costs
        seconds of Python."""
        return order_axioms() + fs, self.first_rlimit

    def model(self) -> StableModel:
        N, NInit, senders, max_seq = self.reach
        return StableModel({"N": N, "NInit": NInit, "Senders": senders, "MaxSeq": max_seq,
                            "ResetOnDifferentMembers": self.R, "ResetOnViewChange": self.V,
                            "CoordSwitchesAtJoin": self.C, "GossipMergedDigest": False, "MaxInFlight": 0})

    # --- state ------------------------------------------------------------------
    _shape = {"group": (1, z3.BoolSort()), "sent": (1, I),
              "view": (2, z3.BoolSort()), "heardFrom": (2, z3.BoolSort()), "dom": (2, z3.BoolSort()),
              "delivered": (2, I), "received": (2, I), "purged": (2, I), "low": (2, I), "high": (2, I),
              "st": (2, z3.BoolSort()), "sy": (2, z3.BoolSort()),
              "st_in": (3, z3.BoolSort()), "sy_in": (3, z3.BoolSort()),
              "st_v": (3, I), "sy_lo": (3, I), "sy_hi": (3, I)}

    def fresh(self, t: str) -> dict[str, Any]:
        S: dict[str, Any] = {"o": Z3Ops, "tag": t}
        for f, (n, rng) in self._shape.items():
            S[f] = _arr(f"{t}_{f}", *[Node] * n, rng=rng)
        S["data"] = _arr(f"{t}_data", Node, Node, I, rng=z3.BoolSort())
        return S

    def _frame(self, S, T, upd: dict) -> z3.BoolRef:
        """T is S with the fields of ``upd`` replaced; the others UNCHANGED."""
        return z3.And(*[T[f] == upd.get(f, S[f]) for f in (*self._shape, "data")])

    def init(self, S) -> z3.BoolRef:
        a, x = z3.Consts("ia ix", Node)
        k = z3.Int("ik")
        both = z3.And(self.V0(a), self.V0(x))
        return z3.And(
            self.V0(one),
            S["group"] == z3.Lambda([a], self.V0(a)), S["sent"] == z3.K(Node, z3.IntVal(0)),
            *[S[f] == z3.Lambda([a, x], both) for f in ("view", "heardFrom", "dom")],
            *[S[f] == z3.Lambda([a, x], z3.IntVal(0)) for f in ("delivered", "received", "purged")],
            z3.ForAll([a, x], z3.Implies(both, z3.And(S["low"][a, x] == 0, S["high"][a, x] == 0))),
            S["data"] == z3.Lambda([a, x, k], z3.BoolVal(False)),
            *[S[f] == z3.Lambda([a, x], z3.BoolVal(False)) for f in ("st", "sy")])

    # --- helpers (the spec's operators) ---------------------------------------------
    def _merge(self, S, p, vin, v) -> dict:
        take = lambda x: z3.And(S["dom"][p, x], vin(x))  # noqa: E731
        return {"low": row(S["low"], p, lambda x: z3.If(take(x), _min(S["low"][p, x], v(x)), S["low"][p, x])),
                "high": row(S["high"], p, lambda x: z3.If(take(x), _max(S["high"][p, x], v(x)),
                                                                  S["high"][p, x]))}

    def _fresh_digest(self, S, p, Vin, vec) -> dict:
        return {"dom": row(S["dom"], p, Vin), "low": row(S["low"], p, vec),
                "high": row(S["high"], p, vec)}

    def _purge_learn(self, S, q, din, dlo, dhi) -> dict:
        return {f: row(S[f], q, lambda x, f=f, d=d: z3.If(din(x), _max(S[f][q, x], d(x)), S[f][q, x]))
                for f, d in (("purged", dlo), ("received", dhi))}

    def _post(self, S, kind, p, payload: dict) -> dict:
        """p multicasts to the others of its view (STABLE or STABILITY): the
        new message replaces the one of that kind in flight on each link."""
        a, b = z3.Consts("ka kb", Node)
        out = {kind: z3.Lambda([a, b], z3.If(a == p, z3.And(S["view"][p, b], b != p), S[kind][a, b]))}
        for f, val in payload.items():
            out[f] = row(S[f], p, lambda _, x, val=val: val(x))
        return out

    def _nonempty(self, S, p, action):
        """\\E x \\in view[p]: its witness is a constant of the action."""
        return S["view"][p, z3.Const(f"{action}_w", Node)]

    def params(self, action: str, names: str) -> list:
        return [z3.Const(f"{action}_{n}", Node) for n in names]

    # --- actions ----------------------------------------------------------------
    def actions(self, S, T):
        fr, P = self._frame, self.params
        p, = P("Multicast", "p")
        k = S["sent"][p] + 1
        a, b, c = z3.Consts("ma mb mc", Node)
        ki = z3.Int("mk")
        g = [self.sender(p), self._nonempty(S, p, "Multicast")]
        if self.max_seq is not None:
            g.append(S["sent"][p] < self.max_seq)
        data = z3.Lambda([a, b, ki], z3.Or(S["data"][a, b, ki],
                                           z3.And(a == p, ki == k, S["view"][p, b], b != p)))
        yield Label("Multicast", ("p",)), z3.And(*g, fr(S, T, {
            "sent": z3.Store(S["sent"], p, k), "delivered": z3.Store(S["delivered"], p, p, k),
            "received": z3.Store(S["received"], p, p, k), "data": data}))

        q, p = P("ReceiveData", "qp")
        k = z3.Int("ReceiveData_k")
        d = S["delivered"][q, p]
        yield Label("ReceiveData", ("q", "p")), z3.And(S["data"][p, q, k], fr(S, T, {
            "delivered": z3.Store(S["delivered"], q, p, z3.If(k == d + 1, k, d)),
            "received": z3.Store(S["received"], q, p, _max(S["received"][q, p], k)),
            "data": z3.Store(S["data"], p, q, k, False)}))

        q, p = P("Retransmit", "qp")
        d = S["delivered"][q, p]
        yield Label("Retransmit", ("q", "p")), z3.And(
            q != p, d < S["received"][q, p], S["purged"][p, p] < d + 1,
            fr(S, T, {"delivered": z3.Store(S["delivered"], q, p, d + 1)}))

        q, p = P("LoseMessage", "qp")
        k = z3.Int("LoseMessage_k")
        yield Label("LoseMessage", ("q", "p")), z3.Or(
            z3.And(S["data"][p, q, k], fr(S, T, {"data": z3.Store(S["data"], p, q, k, False)})),
            z3.And(S["st"][p, q], fr(S, T, {"st": z3.Store(S["st"], p, q, False)})),
            z3.And(S["sy"][p, q], fr(S, T, {"sy": z3.Store(S["sy"], p, q, False)})))

        p, = P("SendStable", "p")
        vin = lambda x: S["view"][p, x]  # noqa: E731
        vec = lambda x: S["delivered"][p, x]  # noqa: E731
        upd = self._post(S, "st", p, {"st_in": vin, "st_v": vec})
        upd.update(self._merge(S, p, vin, vec), heardFrom=z3.Store(S["heardFrom"], p, p, False))
        yield Label("SendStable", ("p",)), z3.And(self._nonempty(S, p, "SendStable"), fr(S, T, upd))

        q, p = P("ReceiveStable", "qp")
        vin = lambda x: S["st_in"][p, q, x]  # noqa: E731
        vec = lambda x: S["st_v"][p, q, x]  # noqa: E731
        consumed = {"st": z3.Store(S["st"], p, q, False)}
        accept = fr(S, T, {**consumed, **self._merge(S, q, vin, vec),
                           "heardFrom": z3.Store(S["heardFrom"], q, p, False)})
        if self.R:
            # the vector's members differ from the digest's: \E w (a constant)
            # or not: \A x (universal in the premise)
            w = z3.Const("ReceiveStable_w", Node)
            x = z3.Const("rsx", Node)
            reset = fr(S, T, {**consumed, "heardFrom": row(S["heardFrom"], q, lambda y: S["view"][q, y])})
            body = z3.Or(z3.And(S["dom"][q, w] != vin(w), reset),
                         z3.And(z3.ForAll([x], S["dom"][q, x] == vin(x)), accept))
        else:
            body = accept
        yield Label("ReceiveStable", ("q", "p")), z3.And(S["st"][p, q], body)

        p, = P("SendStability", "p")
        x = z3.Const("ssx", Node)
        din = lambda y: S["dom"][p, y]  # noqa: E731
        dlo = lambda y: S["low"][p, y]  # noqa: E731
        dhi = lambda y: S["high"][p, y]  # noqa: E731
        upd = self._post(S, "sy", p, {"sy_in": din, "sy_lo": dlo, "sy_hi": dhi})
        upd.update(self._purge_learn(S, p, din, dlo, dhi),
                   **self._fresh_digest(S, p, lambda y: S["view"][p, y], lambda y: S["delivered"][p, y]),
                   heardFrom=row(S["heardFrom"], p, lambda y: S["view"][p, y]))
        yield Label("SendStability", ("p",)), z3.And(
            self._nonempty(S, p, "SendStability"), z3.ForAll([x], z3.Not(S["heardFrom"][p, x])), fr(S, T, upd))

        q, p = P("ReceiveStability", "qp")
        din = lambda y: S["sy_in"][p, q, y]  # noqa: E731
        dlo = lambda y: S["sy_lo"][p, q, y]  # noqa: E731
        dhi = lambda y: S["sy_hi"][p, q, y]  # noqa: E731
        upd = {"sy": z3.Store(S["sy"], p, q, False),
               "heardFrom": row(S["heardFrom"], q, lambda y: S["view"][q, y]),
               **self._purge_learn(S, q, din, dlo, dhi),
               **self._fresh_digest(S, q, lambda y: S["view"][q, y], lambda y: S["delivered"][q, y])}
        yield Label("ReceiveStability", ("q", "p")), z3.And(S["sy"][p, q], fr(S, T, upd))

        # Join(j): c = Coordinator(group), the least member of the group
        j, c = P("Join", "jc")
        a, x = z3.Consts("ja jx", Node)
        Vin = lambda y: z3.Or(S["group"][y], y == j)  # noqa: E731
        ins = (lambda r: z3.Or(r == j, r == c)) if self.C else (lambda r: r == j)
        hf_c = (lambda r: z3.Or(r == j, r == c)) if self.C and self.V else (lambda r: r == j)
        fromc = lambda y: S["delivered"][c, y]  # noqa: E731
        upd = {"group": z3.Store(S["group"], j, True),
               "delivered": row(S["delivered"], j, fromc), "received": row(S["received"], j, fromc),
               "heardFrom": z3.Lambda([a, x], z3.If(hf_c(a), Vin(x), S["heardFrom"][a, x]))}
        for f, val in (("view", Vin), ("dom", Vin), ("low", fromc), ("high", fromc)):
            upd[f] = z3.Lambda([a, x], z3.If(ins(a), val(x), S[f][a, x]))
        yield Label("Join", ("j",)), z3.And(
            z3.Not(S["group"][j]),
            z3.ForAll([a, x], z3.Implies(S["group"][a], S["view"][a, x] == S["group"][x])),
            S["group"][c], z3.ForAll([x], z3.Implies(S["group"][x], le(c, x))),
            fr(S, T, upd))

        p, = P("InstallView", "p")
        w = z3.Const("InstallView_v", Node)
        g = lambda y: S["group"][y]  # noqa: E731
        upd = {"view": row(S["view"], p, g),
               **self._fresh_digest(S, p, g, lambda y: S["delivered"][p, y])}
        if self.V:
            upd["heardFrom"] = row(S["heardFrom"], p, g)
        yield Label("InstallView", ("p",)), z3.And(
            self._nonempty(S, p, "InstallView"), S["group"][p], S["view"][p, w] != g(w), fr(S, T, upd))

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

    # --- explorer states -----------------------------------------------------------------
    def py_state(self, s: StableState) -> dict[str, Any]:
        """An N-member explorer state as Python tables (PyOps): a lemma of this
        encoding evaluated on it is the lemma instantiated at N."""
        N = len(s.sent)
        M = range(1, N + 1)
        S: dict[str, Any] = {"o": PyOps(N), "group": Table(((x, x in s.group) for x in M), False),
                             "sent": Table(s.sent.items())}
        for f, of in (("view", s.view), ("heardFrom", s.heardFrom), ("dom", s.digest)):
            S[f] = Table((((p, x), x in of[p]) for p in M for x in M), False)
        for f in ("delivered", "received", "purged"):
            S[f] = Table(((p, x), getattr(s, f)[p][x]) for p in M for x in M)
        S["low"] = Table(((p, x), e["low"]) for p in M for x, e in s.digest[p].items())
        S["high"] = Table(((p, x), e["high"]) for p in M for x, e in s.digest[p].items())
        for f in ("data", "st", "sy", "st_in", "sy_in"):
            S[f] = Table(default=False)
        for f in ("st_v", "sy_lo", "sy_hi"):
            S[f] = Table()
        for m in s.net:
            key = (m["from"], m["to"])
            if m["type"] == "data":
                S["data"][(*key, m["seq"])] = True
            elif m["type"] == "stable":
                S["st"][key] = True
                for x, v in m["vector"].items():
                    S["st_in"][(*key, x)], S["st_v"][(*key, x)] = True, v
            else:
                S["sy"][key] = True
                for x, e in m["digest"].items():
                    S["sy_in"][(*key, x)] = True
                    S["sy_lo"][(*key, x)], S["sy_hi"][(*key, x)] = e["low"], e["high"]
        return S

    def holds(self, name: str, s: StableState) -> bool:
        """Lemma ``name`` instantiated at s's N, on s."""
        return self.lemmas[name](self.py_state(s))

    # a payload field is defined only where its guard holds: (field, key length)
    _guard = {"low": ("dom", 2), "high": ("dom", 2), "st_in": ("st", 2), "sy_in": ("sy", 2),
              "st_v": ("st_in", 3), "sy_lo": ("sy_in", 3), "sy_hi": ("sy_in", 3)}

    def value(self, S, s: StableState) -> z3.BoolRef:
        """s as z3 equalities, the sort pinned to s's N members."""
        P = self.py_state(s)
        N = len(s.sent)
        n = {i: node(i) for i in range(1, N + 1)}
        cs = [universe(N)]
        if self.senders is not None:
            cs += [self.sender(n[i]) == (i in self.senders) for i in n]
        for f, (arity, _) in self._shape.items():
            guard = self._guard.get(f)
            for key in product(n, repeat=arity):
                if guard is not None and not P[guard[0]][key[:guard[1]]]:
                    continue        # free, as in the spec: read only under its guard
                cs.append(S[f][tuple(n[i] for i in key)] == P[f][key[0] if arity == 1 else key])
        k = z3.Int("vk")
        for p, q in product(n, repeat=2):
            ks = [kk for (a, b, kk), v in P["data"].items() if v and (a, b) == (p, q)]
            cs.append(z3.Lambda([k], S["data"][n[p], n[q], k]) == z3_set(ks))
        return z3.And(*cs)

    def decode(self, m: z3.ModelRef, S) -> StableState:
        """The state of a z3 model, its universe read as members 1..N."""
        us = members_of(m)
        M = range(1, len(us) + 1)
        u = dict(zip(M, us))
        ev = lambda e: m.eval(e, model_completion=True)  # noqa: E731
        b = lambda f, *k: z3.is_true(ev(S[f][tuple(u[i] for i in k)]))  # noqa: E731
        n = lambda f, *k: ev(S[f][tuple(u[i] for i in k)]).as_long()  # noqa: E731
        net = set()
        # the seqnos where the model's data array may be true: the integers
        # of its value (a Store chain; z3 may choose seqnos in the millions)
        ks = sorted(int_literals(ev(S["data"])))
        for p, q in product(M, M):
            for k in ks:
                if 1 <= k <= n("sent", p) and z3.is_true(ev(S["data"][u[p], u[q], k])):
                    net.add(DataMsg(p, q, k))
            if b("st", p, q):
                net.add(StableMsg(p, q, Fn((x, n("st_v", p, q, x)) for x in M if b("st_in", p, q, x))))
            if b("sy", p, q):
                net.add(StabilityMsg(p, q, Fn((x, Entry(n("sy_lo", p, q, x), n("sy_hi", p, q, x)))
                                              for x in M if b("sy_in", p, q, x))))
        row = lambda f, p: Fn((x, n(f, p, x)) for x in M)  # noqa: E731
        return StableState(
            group=frozenset(x for x in M if b("group", x)),
            view=Fn((p, frozenset(x for x in M if b("view", p, x))) for p in M),
            sent=Fn((p, n("sent", p)) for p in M),
            delivered=Fn((p, row("delivered", p)) for p in M),
            received=Fn((p, row("received", p)) for p in M),
            purged=Fn((p, row("purged", p)) for p in M),
            digest=Fn((p, Fn((x, Entry(n("low", p, x), n("high", p, x))) for x in M if b("dom", p, x)))
                      for p in M),
            heardFrom=Fn((p, frozenset(x for x in M if b("heardFrom", p, x))) for p in M),
            net=frozenset(net))

    def pin(self, label: Label) -> z3.BoolRef:
        """The action's parameters bound to the members a model label names."""
        names = {"Multicast": "p", "SendStable": "p", "SendStability": "p", "InstallView": "p",
                 "Join": "j"}.get(label.action, "qp")
        return z3.And(*[c == node(i) for c, i in zip(self.params(label.action, names), label.params)])


def any_encoding(_n=None, *, variant: str, **kw) -> StableAnyEncoding:
    """A variant of the proof matrix proved for every N (the manifest's
    ``members: "any"``)."""
    return StableAnyEncoding(variant=variant, **kw)
