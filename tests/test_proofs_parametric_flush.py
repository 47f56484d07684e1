"""FLUSH for every N (model/proofs/flush/ ``FlushAnyEncoding``, members as
the uninterpreted sort of model/proofs/parametric.py): the fixed variant's
quantified invariant is inductive, the seed as written yields a
counterexample to induction that the N = 3 crash model reaches, the
answers are the same in separate processes (z3's resource limit, no
time-out), each lemma instantiated at N = 2 and 3 holds on the reachable
states of the fixed FLUSH models, and the model's edges are steps of the
parametric relation.  AnyFixedJoin (the greatest member joins) is outside
the default matrix and its proof is a slow test."""

import random
from collections import defaultdict

import pytest
import z3

from groupcheck.model.core import explore
from groupcheck.model.proofs import prover, registry
from groupcheck.model.proofs.prover import run, verdict
from groupcheck.model.proofs.flush import FlushAnyEncoding
from proof_helpers import entry, lemmas_broken, proved_for_every_n, sorted_edges


def _enc(name, **change):
    return FlushAnyEncoding.from_constants(dict(entry("flush", name).constants(), **change))


def test_fixed_invariant_is_inductive_for_every_N():
    proved_for_every_n("flush", "AnyFixed", ["VirtualSynchrony"])


def test_flawed_variant_yields_a_reachable_cti():
    """The seed as written (no reconciliation): the N = 3 crash model's
    shortest violation pins a CTI of VirtualSynchrony; a CTI z3 finds with
    another number of members is reported unclassified (reachable None),
    never as unreachable."""
    [enc] = registry.select("flush", "AnyFlawed")
    qs = run(enc)
    assert verdict(qs)
    real = [q for q in qs if q.result == "cti" and q.reachable]
    assert real and all(q.path[0] == "Init" and "Crash(1)" in q.path for q in real)
    for q in qs:
        if q.result == "cti" and q.reachable is not True:
            assert q.reachable is None or q.pre["vid"].count(",") + 1 == enc.reach_N, q.pre


@pytest.mark.slow
def test_joiner_invariant_is_inductive_for_every_N():
    [enc] = registry.select("flush", "AnyFixedJoin")
    assert enc.jn is not None and "Joiners" in enc.lemmas
    qs = run(enc, classify=False)
    bad = [q.query for q in qs if q.result != "proved"]
    assert not bad, bad
    assert verdict(qs) and "consecution:Join:Joiners" in {q.query for q in qs}


def _answers(qs):
    return [(q.query, q.result, q.reachable, q.path, q.action, q.pre, q.post) for q in qs]


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["AnyFixed", "AnyFlawed"])
def test_the_answers_are_the_same_in_separate_processes(variant):
    [enc] = registry.select("flush", variant)
    runs = [qs for _, qs in registry.run_isolated([enc] * 3, jobs=1)]
    assert len(runs) == 3 and _answers(runs[0]) == _answers(runs[1]) == _answers(runs[2])


def test_lemmas_at_N3_hold_on_every_reachable_state():
    res, bad = lemmas_broken(_enc("FixedCrashLiveness"))
    assert res.complete and len(res.parents) > 1000 and not bad, bad[:1]


def test_lemmas_at_N2_hold_on_every_reachable_state():
    """No manifest FLUSH model has two members: FixedCrashLiveness's
    constants at N = 2 (one crash, one multicast)."""
    res, bad = lemmas_broken(_enc("FixedCrashLiveness", N=2, NInit=2))
    assert res.complete and len(res.parents) > 50 and not bad, bad[:1]


def test_joiner_lemmas_at_N2_and_N3_hold_on_every_reachable_state():
    """FixedJoin (members 1 and 2, 3 joins) and its constants at N = 2 (1
    alone, 2 joins)."""
    for change in ({}, {"N": 2, "NInit": 1}):
        enc = _enc("FixedJoin", **change)
        assert enc.jn is not None
        res, bad = lemmas_broken(enc)
        assert res.complete and any(s.joining for s in res.parents) and not bad, bad[:1]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["FixedLeave", "FixedCrash", "FixedTwoCrashes", "FixedJoinCrash"])
def test_lemmas_at_N3_hold_on_every_reachable_state_of(name):
    res, bad = lemmas_broken(_enc(name))
    assert res.complete and not bad, bad[:1]


@pytest.mark.slow
def test_instantiation_can_fail_and_agrees_with_z3():
    """On the flawed crash model some reachable state breaks a lemma (the
    property among them); on sampled states of it and of a fixed model the
    Python instantiation and z3 (the quantified lemma with its universe
    pinned to N) give the same answer."""
    for name, k in (("FlawedCrash", 2), ("FixedCrashLiveness", 2), ("FixedJoin", 2)):
        enc = _enc(name)
        res, bad = lemmas_broken(enc)
        assert bool(bad) == (name == "FlawedCrash")
        assert name != "FlawedCrash" or "VirtualSynchrony" in {n for n, _ in bad}
        broken = sorted({s for _, s in bad}, key=repr)
        S = enc.fresh("s")
        for s in random.Random(7).sample(sorted(res.parents, key=repr), k) + broken[:k]:
            for n, L in enc.lemmas.items():
                r = prover._solve([enc.value(S, s), z3.Not(L(S))], enc)[0]
                assert (r == "proved") == enc.holds(n, s), (n, s, r)


def _edges_by_action(enc, max_states=None):
    res = explore(enc.model(), check_invariants=False, build_graph=True, max_states=max_states)
    by = defaultdict(list)
    for s, t, labs in sorted_edges(res.graph):
        by[min(labs, key=str).action].append((s, t, labs))
    return by


def _steps(enc, edges):
    """Each edge is a step of the parametric relation under its label (its
    members pinned); z3's unknown fails the test."""
    S, T = enc.fresh("s"), enc.fresh("t")
    acts = {lab.action: f for lab, f in enc.actions(S, T)}
    for s, t, labs in edges:
        lab = min(labs, key=str)
        solver = prover._solver(enc)
        solver.add(*enc.query([prover.value_of(enc, S, s), prover.value_of(enc, T, t), acts[lab.action], enc.pin(lab)]))
        assert solver.check() == z3.sat, (lab, s, t)


@pytest.mark.parametrize("name,actions,k", [
    ("FixedCrashLiveness", 14, 1), ("FixedJoin", 14, 1),
    pytest.param("FixedCrashLiveness", 14, 3, marks=pytest.mark.slow),
    pytest.param("FixedJoin", 14, 3, marks=pytest.mark.slow),
    pytest.param("FixedLeaveCrash", 14, 3, marks=pytest.mark.slow)])
def test_model_edges_are_steps_of_the_relation(name, actions, k):
    """``k`` edges of every action of the model (one in the default suite,
    three under slow), and a wrong successor is refused.  Together the
    models take every action: FixedCrashLiveness all but RestartFlush,
    Join and Leave, FixedJoin Join, FixedLeaveCrash RestartFlush and Leave."""
    enc = _enc(name)
    by = _edges_by_action(enc)
    assert len(by) == actions and {"FixedCrashLiveness": "Crash", "FixedJoin": "Join",
                                    "FixedLeaveCrash": "Leave"}[name] in by
    _steps(enc, [e for es in by.values() for e in random.Random(3).sample(es, min(k, len(es)))])
    s, t, labs = by["Block"][0]
    with pytest.raises(AssertionError):
        _steps(enc, [(s, t._replace(phase=tuple("Normal" if x == "InBlock" else "InBlock" for x in t.phase)),
                      labs)])


def test_first_view_must_be_every_member_or_all_but_the_last():
    assert _enc("FixedJoin").jn is not None and _enc("FixedCrash").jn is None
    with pytest.raises(ValueError):
        _enc("FixedJoin", N=4)
