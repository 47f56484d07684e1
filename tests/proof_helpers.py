"""Shared by the tests of the z3 encodings (tests/test_proofs_*.py): a
manifest model's entry, and a sample of its explored graph's edges."""

import random

from groupcheck.model import manifest
from groupcheck.model.core import explore


def entry(protocol, name):
    return next(e for e in manifest.select([protocol], None) if e.name == name)


def lemmas_broken(enc, max_states=None):
    """A parametric encoding's lemmas instantiated at the N of its bounded
    model (``enc.holds``, evaluated in Python) on every state the model
    reaches: the exploration, and the (lemma, state) pairs that fail.  As
    ``enc.holds(n, s)`` evaluates it, with s's Python form (``py_state``)
    built once per state, not once per lemma."""
    res = explore(enc.model(), check_invariants=False, max_states=max_states)
    bad = []
    for s in res.parents:
        P = enc.py_state(s)
        bad += [(n, s) for n, L in enc.lemmas.items() if not L(P)]
    return res, bad


def proved_for_every_n(protocol, variant, properties):
    """The registered every-N variant, run as `groupcheck prove` runs it (a
    process of its own, its encoding built alone: the answers are then
    the matrix's; in a test worker that has asked other encodings' queries
    z3 starts from other terms and names, docs/proofs.md "What else an
    answer depends on"): each query proved, every row for members "any",
    one consecution row per lemma and the implication of each property."""
    from groupcheck.model.proofs import registry
    from groupcheck.model.proofs.prover import verdict
    [enc] = registry.select(protocol, variant)
    assert enc.members == "any" and enc.rlimit is not None and not enc.expect_cti
    [(_, qs)] = list(registry.run_isolated([enc], jobs=1))
    bad = [q.query for q in qs if q.result != "proved"]
    assert not bad, bad
    assert verdict(qs) and {q.as_json()["members"] for q in qs} == {"any"}
    assert {q.query.split(":")[-1] for q in qs} == set(enc.lemmas)
    assert {f"implication:{p}" for p in properties} <= {q.query for q in qs}


def sorted_edges(graph) -> list:
    """A graph's edges ``(s, t, labels)`` ordered by the reprs of s and t
    (each state's repr computed once, not once per edge)."""
    name = {s: repr(s) for s in graph}
    return sorted(graph.edges(data="labels"), key=lambda e: (name[e[0]], name[e[1]]))


def sample(enc, max_states, k, seed=15):
    """``enc``'s bounded model, its exploration (the first ``max_states``
    states, with the graph) and ``k`` of its edges drawn with ``seed``."""
    model = enc.model()
    res = explore(model, check_invariants=False, build_graph=True, max_states=max_states)
    edges = sorted_edges(res.graph)
    random.Random(seed).shuffle(edges)
    return enc, model, res, edges[:k]


def edges_outside(enc, edges, in_relation=None):
    """The sampled edges ``(s, t, labels)`` of the model that are not steps of
    ``enc``'s z3 relation under their own labels, as ``(label, s, t)``: the
    model and the encoding must agree on every edge.  ``in_relation``: the
    edge check (engine.edge_in_relation's signature); an encoding with
    quantifiers passes one that fails on z3's unknown instead of counting it
    as a no."""
    if in_relation is None:
        from groupcheck.model.proofs.prover import edge_in_relation as in_relation
    S, T = enc.fresh("s"), enc.fresh("t")
    acts = list(enc.actions(S, T))
    return [(str(min(labs, key=str)), s, t) for s, t, labs in edges
            if not in_relation(enc, s, labs, t, S, T, acts)]


_ENCODINGS = {"stable": ("stable", "StableEncoding"), "flush": ("flush", "FlushEncoding"),
              "sequencer": ("sequencer", "SequencerEncoding"),
              "sequencerflush": ("sequencerflush", "SequencerFlushEncoding")}


def sample_model(protocol, name, max_states, k, seed=15):
    """``sample`` of manifest model ``name``'s encoding (its constants)."""
    import importlib
    mod, cls = _ENCODINGS[protocol]
    enc_class = getattr(importlib.import_module(f"groupcheck.model.proofs.{mod}"), cls)
    return sample(enc_class.from_constants(entry(protocol, name).constants()), max_states, k, seed)


def edges_agree(protocol, name, max_states, k, in_relation=None):
    """``k`` sampled edges of manifest model ``name`` are all steps of the z3
    relation under their labels; returns the encoding and the edges."""
    enc, _, _, edges = sample_model(protocol, name, max_states, k)
    assert len(edges) == k
    bad = edges_outside(enc, edges, in_relation)
    assert not bad, bad[0]
    return enc, edges


def states_agree(protocol, name, max_states, k, invariant=True):
    """``k`` sampled reachable states of manifest model ``name`` satisfy the
    encoding's inductive invariant (when ``invariant``, a predicate on the
    encoding or a bool) and the z3 relation allows no successor of theirs
    that the model lacks."""
    enc, model, res, _ = sample_model(protocol, name, max_states, 0)
    states_hold(enc, model, res.parents, k, invariant(enc) if callable(invariant) else invariant, seed=15)


def states_hold(enc, model, states, k, invariant: bool, seed: int) -> None:
    """``k`` of the explorer's ``states``, shuffled by ``seed``, satisfy the
    encoding's inductive invariant (when ``invariant``) and have no successor
    in the z3 relation that the model lacks."""
    from groupcheck.model.proofs.prover import extra_successor, satisfies_invariant
    states = sorted(states, key=repr)
    random.Random(seed).shuffle(states)
    S, T = enc.fresh("s"), enc.fresh("t")
    inv, nxt = enc.inv(S), enc.next(S, T)
    for s in states[:k]:
        if invariant:
            assert satisfies_invariant(enc, s, S, inv), s
        extra = extra_successor(enc, s, [t for _, t in model.next(s)], S, T, nxt)
        assert extra is None, (s, extra)


def default_and_slow(*cases, share: int = 3) -> list:
    """Parameters ``(name, max_states, k, ...)`` of a sampled check: each case
    with a ``share``-th of its sample ``k`` (at least 10) in the default suite,
    and whole under the slow marker (the default sample is a prefix of the
    slow one: one seeded shuffle).  A case given as a ``pytest.param`` keeps
    its marks and its sample."""
    import pytest
    out = []
    for c in cases:
        if not hasattr(c, "marks"):        # a pytest.param is a named tuple too
            name, max_states, k, *rest = c
            out += [(name, max_states, max(k // share, 10), *rest),
                    pytest.param(name, max_states, k, *rest, marks=pytest.mark.slow)]
        else:
            out.append(c)
    return out
