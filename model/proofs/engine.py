"""The shared proof engine: initiation, consecution, implication with z3.

Theory of operation
-------------------
Following the inductive-invariant workflow (Apalache's initiation /
consecution / implication; mypyvy's one query per transition and
conjunct), an :class:`Encoding` gives, for one protocol variant:

* ``fresh(tag)``: a symbolic state (a dict of z3 terms, one family of
  constants per spec variable);
* ``init(S)``: the spec's Init as a z3 formula;
* ``actions(S, T)``: pairs ``(Label, formula)``, one per action instance
  (the parameters range over the encoding's finite member set); the formula
  relates pre-state ``S`` to post-state ``T``, guard and frame included;
* ``lemmas``: named state formulas, whose conjunction is the inductive
  invariant; ``properties`` names those that are the spec's safety property;
* ``value(model_state)``: the model state as z3 equalities over ``S`` -- the
  one mapping from explorer states to z3 values (used by the conformance
  tests of the encoding and to classify counterexamples);
* ``decode(z3_model, S)``: the reverse, a model state for the explorer.

Queries (each timed):

* initiation per lemma L:      Init(S) /\\ ~L(S)              unsat
* consecution per (A, L):      Inv(S) /\\ A(S, T) /\\ ~L(T)    unsat
* implication per property P:  Inv(S) /\\ ~P(S)               unsat

A satisfiable consecution query is a counterexample to induction (CTI): the
pre-state is decoded into a model state and looked up in the bounded model's
reachable graph; reachable means a real violation (with the shortest path),
unreachable means a lemma is missing.  Rough spot: the encodings here fix the
number of members (every N up to the manifest's), seqnos are unbounded
integers; see docs/proofs.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import z3

from ..core import Label, Model, explore


@dataclass
class Query:
    protocol: str
    variant: str
    query: str           # "initiation:L", "consecution:A:L", "implication:P"
    result: str          # proved | cti | unknown
    seconds: float
    action: str | None = None
    pre: dict | None = None
    post: dict | None = None
    reachable: bool | None = None
    path: list[str] | None = None
    expected_cti: bool = False

    def as_json(self) -> dict[str, Any]:
        out = {"protocol": self.protocol, "variant": self.variant, "query": self.query,
               "result": self.result, "seconds": round(self.seconds, 4)}
        if self.result == "cti":
            out.update(action=self.action, pre=self.pre, post=self.post, reachable=self.reachable,
                       path=self.path, expected=self.expected_cti)
        return out


class Encoding:
    """Base class; subclasses fill in the spec's state and actions."""

    protocol = ""
    variant = ""
    expect_cti = False   # a flawed variant: a reachable CTI is the expected outcome

    def fresh(self, tag: str) -> dict[str, Any]:
        raise NotImplementedError

    def init(self, S) -> z3.BoolRef:
        raise NotImplementedError

    def actions(self, S, T) -> Iterable[tuple[Label, z3.BoolRef]]:
        raise NotImplementedError

    @property
    def lemmas(self) -> Mapping[str, Callable[[Any], z3.BoolRef]]:
        raise NotImplementedError

    properties: tuple[str, ...] = ()

    def value(self, S, state) -> z3.BoolRef:
        raise NotImplementedError

    def decode(self, m: z3.ModelRef, S) -> Any:
        raise NotImplementedError

    def model(self) -> Model:
        """The bounded explicit-state model of the same size (for reachability)."""
        raise NotImplementedError

    def bounded(self, S) -> z3.BoolRef | None:
        """The bounded model's domain (its constants' bounds on seqnos, senders)
        as a formula over S, to look for a CTI the explorer can reach; None
        when the encoding has none."""
        return None

    def pretty(self, state) -> dict:
        return {k: repr(v) for k, v in state._asdict().items()}

    # --- derived ---------------------------------------------------------------
    def inv(self, S) -> z3.BoolRef:
        return z3.And(*[f(S) for f in self.lemmas.values()])

    def next(self, S, T) -> z3.BoolRef:
        return z3.Or(*[f for _, f in self.actions(S, T)])


def _solve(fs: list, timeout_ms: int) -> tuple[str, z3.ModelRef | None, float]:
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    s.add(*fs)
    t0 = time.perf_counter()
    r = s.check()
    dt = time.perf_counter() - t0
    if r == z3.unsat:
        return "proved", None, dt
    if r == z3.sat:
        return "cti", s.model(), dt
    return "unknown", None, dt


class Reachability:
    """The bounded model's reachable states, explored once, for CTI lookup."""

    def __init__(self, enc: Encoding) -> None:
        self.enc = enc
        self._res = None

    def path(self, state) -> list[str] | None:
        if self._res is None:
            m = self.enc.model()
            self._model = m
            self._res = explore(m, check_invariants=False, build_graph=True)
        g = self._res.graph
        if state not in g:
            return None
        import networkx as nx
        best = None
        for s0 in self._res.init_states:
            try:
                p = nx.shortest_path(g, s0, state)
            except nx.NetworkXNoPath:
                continue
            if best is None or len(p) < len(best):
                best = p
        if best is None:
            return None
        out = ["Init"]
        for a, b in zip(best, best[1:]):
            out.append(str(min(g[a][b]["labels"], key=str)))
        return out


def run(enc: Encoding, *, timeout_ms: int = 10_000, classify: bool = True) -> list[Query]:
    """All queries for one encoding, in order: initiation, consecution, implication."""
    out: list[Query] = []
    P, V = enc.protocol, enc.variant
    S, T = enc.fresh("s"), enc.fresh("t")
    reach = Reachability(enc) if classify else None
    lemmas = enc.lemmas
    for name, L in lemmas.items():
        r, _, dt = _solve([enc.init(S), z3.Not(L(S))], timeout_ms)
        out.append(Query(P, V, f"initiation:{name}", r, dt))
    inv_S = enc.inv(S)
    acts = list(enc.actions(S, T))
    by_action: dict[str, list[z3.BoolRef]] = {}
    for lab, f in acts:
        by_action.setdefault(lab.action, []).append(f)
    for action, fs in by_action.items():
        A = z3.Or(*fs)
        for name, L in lemmas.items():
            r, m, dt = _solve([inv_S, A, z3.Not(L(T))], timeout_ms)
            q = Query(P, V, f"consecution:{action}:{name}", r, dt)
            if m is not None:
                q.expected_cti = enc.expect_cti
                if reach is not None:
                    m = _classify(enc, reach, q, [inv_S, A, z3.Not(L(T))], S, timeout_ms) or m
                pre, post = enc.decode(m, S), enc.decode(m, T)
                lab = next((str(l) for l, f in acts if l.action == action
                            and z3.is_true(m.eval(f, model_completion=True))), action)
                q.action, q.pre, q.post = lab, enc.pretty(pre), enc.pretty(post)
                if reach is not None and q.reachable is None:
                    q.path = reach.path(pre)
                    q.reachable = q.path is not None
            out.append(q)
    for name in enc.properties:
        r, _, dt = _solve([inv_S, z3.Not(lemmas[name](S))], timeout_ms)
        out.append(Query(P, V, f"implication:{name}", r, dt))
    return out


def _classify(enc: Encoding, reach: "Reachability", q: Query, fs: list, S, timeout_ms: int,
              tries: int = 12) -> z3.ModelRef | None:
    """Look for a CTI of the same query whose pre-state the bounded model
    reaches: restrict to the model's domain, and block each unreachable
    pre-state found, a few times.  Returns the reachable CTI's z3 model (and
    sets q.reachable / q.path), or None (q.reachable stays None: the caller
    classifies the first CTI)."""
    dom = enc.bounded(S)
    if dom is None:
        return None
    blocks: list = []
    for _ in range(tries):
        r, m, _dt = _solve(fs + [dom] + blocks, timeout_ms)
        if m is None:
            return None
        pre = enc.decode(m, S)
        path = reach.path(pre)
        if path is not None:
            q.reachable, q.path = True, path
            return m
        blocks.append(z3.Not(enc.value(S, pre)))
    return None


def holds(q: Query) -> bool:
    """A query holds when proved, or, for a flawed variant, when it found the
    expected counterexample and that counterexample is reachable (the same
    rule as the audit's expected violations: the flaw must be shown real)."""
    if q.result == "proved":
        return True
    return q.result == "cti" and q.expected_cti and q.reachable is True


def verdict(qs: list[Query]) -> bool:
    """A fixed variant holds when every query is proved; a flawed one when at
    least one reachable CTI was found and nothing is unknown or spurious."""
    if not qs:
        return False
    if qs[0].expected_cti or any(q.expected_cti for q in qs):
        return any(q.result == "cti" and q.reachable for q in qs) and all(
            q.result != "unknown" and (q.result != "cti" or q.reachable) for q in qs)
    return all(q.result == "proved" for q in qs)


def z3_set(vals) -> Any:
    """A set of ints as a z3 array Int -> Bool."""
    a = z3.K(z3.IntSort(), z3.BoolVal(False))
    for v in sorted(vals):
        a = z3.Store(a, v, True)
    return a
