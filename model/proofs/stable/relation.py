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
from ...core import Label
from ...stable import DataMsg, Entry, StableModel, StableMsg, StabilityMsg, StableState
from ...values import Fn
from ..prover import Encoding, readers, z3_set

I = z3.IntSort()


def _max(a, b):
    return z3.If(a >= b, a, b)


def _min(a, b):
    return z3.If(a <= b, a, b)


class StableRelation(Encoding):
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
    def from_constants(cls, c: dict) -> "StableRelation":
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
