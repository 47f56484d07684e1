"""Shared by the tests of the z3 encodings (tests/test_proofs_*.py): a
manifest model's entry, and a sample of its explored graph's edges."""

import random

from groupcheck.model import manifest
from groupcheck.model.core import explore


def entry(protocol, name):
    return next(e for e in manifest.select([protocol], None) if e.name == name)


def sample(enc, max_states, k, seed=15):
    """``enc``'s bounded model, its exploration (the first ``max_states``
    states, with the graph) and ``k`` of its edges drawn with ``seed``."""
    model = enc.model()
    res = explore(model, check_invariants=False, build_graph=True, max_states=max_states)
    edges = sorted(res.graph.edges(data="labels"), key=lambda e: (repr(e[0]), repr(e[1])))
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
        from groupcheck.model.proofs.engine import edge_in_relation as in_relation
    S, T = enc.fresh("s"), enc.fresh("t")
    acts = list(enc.actions(S, T))
    return [(str(min(labs, key=str)), s, t) for s, t, labs in edges
            if not in_relation(enc, s, labs, t, S, T, acts)]
