"""STABLE for every N: the relation over an uninterpreted sort of members
(parametric.py); the class docstring gives the encoding.
"""

from __future__ import annotations

from itertools import product
from typing import Any
import z3
from ...core import Label
from ...stable import DataMsg, Entry, StableModel, StableMsg, StabilityMsg, StableState
from ...values import Fn
from ..prover import Encoding, z3_set
from ..parametric import (Node, PyOps, Table, Z3Ops, ground, int_literals, le, members_of, node, one, order_axioms,
                         row, universe)
from .relation import I, _max, _min


# --- every N: members as an uninterpreted sort ---------------------------------------

def _arr(name: str, *dom, rng=I):
    return z3.Array(name, *dom, rng)


class StableAnyRelation(Encoding):
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
    def from_constants(cls, c: dict) -> "StableAnyRelation":
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
