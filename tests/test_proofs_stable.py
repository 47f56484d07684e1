"""STABLE's z3 encoding (model/proofs/stable/): the fixed variant's
invariant is inductive, the flawed variant yields a reachable counterexample
to induction, and the encoding agrees with the explicit-state model on the
manifest models: sampled edges of the reachable graph
satisfy the z3 relation under the same action label, sampled reachable
states of the fixed models satisfy the invariant, and the z3 relation allows
no successor of a sampled reachable state that the model lacks."""


import pytest

from groupcheck.model.core import Label
from groupcheck.model.proofs.prover import edge_in_relation, run, verdict
from groupcheck.model.proofs.stable import StableEncoding
from proof_helpers import default_and_slow, edges_agree, edges_outside, entry, sample, states_agree, states_hold


def _entry(name):
    return entry("stable", name)


def _sample(name, max_states, k, seed=15):
    """The encoding of manifest model ``name``, its model, and ``k`` sampled
    edges of the first ``max_states`` states of its breadth-first graph."""
    enc = StableEncoding.from_constants(_entry(name).constants())
    return sample(enc, max_states, k, seed)


@pytest.mark.slow      # the default suite proves SafeGC for every N (test_proofs_parametric.py)
def test_fixed_invariant_is_inductive():
    qs = run(StableEncoding(3, 2), classify=False)
    bad = [q.query for q in qs if q.result != "proved"]
    assert not bad, bad
    assert verdict(qs)


@pytest.mark.parametrize("name,max_states,k", default_and_slow(("Pair", 1500, 200),
                                                               pytest.param("Flawed", 1500, 200, marks=pytest.mark.slow)))
def test_model_edges_satisfy_the_z3_relation(name, max_states, k):
    edges_agree("stable", name, max_states, k)


def test_a_wrong_edge_is_rejected():
    """The edge check can fail: a real edge under another action's label, and
    a successor with one field changed, are refused."""
    enc, _, _, edges = _sample("Pair", 300, 5)
    s, t, labs = next((s, t, labs) for s, t, labs in edges if any(l.action == "Multicast" for l in labs)) \
        if any(any(l.action == "Multicast" for l in e[2]) for e in edges) else edges[0]
    lab = min(labs, key=str)
    other = Label("SendStable" if lab.action != "SendStable" else "Join", lab.params[:1])
    assert not edge_in_relation(enc, s, {other}, t)
    bumped = t._replace(sent=t.sent.set(1, t.sent[1] + 7))
    assert not edge_in_relation(enc, s, labs, bumped)


@pytest.mark.parametrize("name,max_states,k", default_and_slow(("Pair", 1500, 60), ("PairJoin", 1500, 60),
                                                               ("Fixed", 1500, 30)))
def test_reachable_states_satisfy_the_invariant_and_have_no_extra_successor(name, max_states, k):
    states_agree("stable", name, max_states, k)


@pytest.mark.slow
def test_the_flawed_variant_yields_a_reachable_cti_with_its_path():
    qs = run(StableEncoding(3, 2, reset=False))
    real = [q for q in qs if q.result == "cti" and q.reachable]
    assert real, [(q.query, q.result, q.reachable) for q in qs if q.result != "proved"]
    assert verdict(qs)
    q = min(real, key=lambda q: len(q.path))
    assert q.path[0] == "Init"
    actions = {"Multicast", "ReceiveData", "Retransmit", "LoseMessage", "SendStable", "ReceiveStable",
               "SendStability", "ReceiveStability", "Join", "InstallView"}
    assert all(step.split("(")[0] in actions for step in q.path[1:])
    assert q.pre is not None and q.post is not None and q.action.split("(")[0] in actions


@pytest.mark.slow
def test_seed_fix_alone_fails_induction_only_at_the_view_change():
    """ResetOnDifferentMembers without ResetOnViewChange (model SeedFix): the
    lemmas fail exactly at the two steps that set a digest over new members
    without resetting heardFrom."""
    enc = StableEncoding(3, 2, view_reset=False)
    assert enc.variant == "SeedFix" and enc.expect_cti
    qs = run(enc, classify=False)
    assert {q.query for q in qs if q.result != "proved"} == {
        "consecution:Join:DigestLows", "consecution:InstallView:DigestLows"}


@pytest.mark.slow
@pytest.mark.parametrize("name,k", [("Pair", 1000), ("PairJoin", 1000), ("PairJoinFlawed", 500)])
def test_many_edges_and_states_of_whole_pair_graphs(name, k):
    """The whole reachable graphs of the two-member manifest models (about
    12,000 states each): ``k`` sampled edges in the z3 relation; a fifth as
    many sampled states satisfy the invariant (fixed variants) and have no
    successor the model lacks."""
    enc, model, res, edges = _sample(name, None, k)
    assert res.complete
    bad = edges_outside(enc, edges)
    assert not bad, bad[0]
    states_hold(enc, model, res.parents, k // 5, bool(enc.R and enc.C), seed=16)
