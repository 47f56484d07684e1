"""Plain SEQUENCER's z3 encoding (model/proofs/sequencer/): without crashes
the invariant is inductive (TotalOrder proved for unbounded seqnos and
histories); with one crash and no flush (NoFlush, the flawed variant of
SEQUENCER over FLUSH) the engine yields a counterexample to induction whose
pre-state the bounded model reaches; and the encoding agrees with the
explicit-state model on the manifest models: sampled edges
of the reachable graph satisfy the z3 relation under the same action label,
sampled reachable states of the crash-free model satisfy the invariant, and
the z3 relation allows no successor of a sampled reachable state that the
model lacks."""

import random

import pytest
import z3

from groupcheck.model.core import Label
from groupcheck.model.proofs.prover import (edge_in_relation, extra_successor, run, satisfies_invariant,
                                            verdict)
from groupcheck.model.proofs.sequencer import SequencerEncoding
from proof_helpers import default_and_slow, edges_agree, edges_outside, entry, sample

ACTIONS = {"Send", "RecvForward", "RecvData", "InstallView", "NewView", "Crash"}


def _entry(name):
    return entry("sequencer", name)


def _sample(name, max_states, k, seed=15):
    """The encoding of manifest model ``name`` (its MaxSeq kept), its model,
    the exploration and ``k`` sampled edges of its first ``max_states`` states."""
    enc = SequencerEncoding.from_constants(_entry(name).constants())
    return sample(enc, max_states, k, seed)


def test_crash_free_invariant_is_inductive():
    qs = run(SequencerEncoding(3, 0), classify=False)
    bad = [(q.query, q.result) for q in qs if q.result != "proved"]
    assert not bad, bad
    assert verdict(qs)
    assert {q.query for q in qs} >= {"implication:TotalOrder", "consecution:RecvData:TotalOrder"}


@pytest.mark.slow
def test_no_flush_yields_a_reachable_cti_with_its_path():
    enc = SequencerEncoding(3, 1)
    assert enc.variant == "NoFlush" and enc.expect_cti and enc.protocol == "sequencerflush"
    qs = run(enc)
    real = [q for q in qs if q.result == "cti" and q.reachable]
    assert real, [(q.query, q.result, q.reachable) for q in qs if q.result != "proved"]
    assert verdict(qs)
    q = min(real, key=lambda q: len(q.path))
    assert q.query == "consecution:RecvData:SurvivorTotalOrder"
    assert q.path[0] == "Init" and "NewView" in q.path
    assert any(step.startswith("Crash(1") for step in q.path)      # the coordinator crashes
    assert all(step.split("(")[0] in ACTIONS for step in q.path[1:])
    assert q.pre is not None and q.post is not None and q.action.startswith("RecvData")
    # the lemmas that carry the crash-free proof are not what breaks: they are
    # conditioned on "no crash yet", and no CTI is reported for them
    assert not [x for x in qs if x.result == "cti" and x.query.split(":")[-1] != "SurvivorTotalOrder"]


@pytest.mark.parametrize("name,max_states,k", default_and_slow(("CoordCrash", 1500, 150), ("Pair", None, 150),
                                                               ("FailureFree", 1000, 100)))
def test_model_edges_satisfy_the_z3_relation(name, max_states, k):
    enc, edges = edges_agree("sequencer", name, max_states, k)
    assert {lab.action for _, _, labs in edges for lab in labs} >= (
        {"Send", "RecvForward", "RecvData"} | ({"Crash"} if enc.MC else set()))


def test_a_wrong_edge_is_rejected():
    """The edge check can fail: a real edge under another action's label, and
    successors with one field changed, are refused."""
    enc, _, _, edges = _sample("CoordCrash", 400, 400)
    s, t, labs = next((s, t, labs) for s, t, labs in edges
                      if any(l.action == "RecvData" for l in labs) and t.delivered != s.delivered)
    lab = min(labs, key=str)
    assert edge_in_relation(enc, s, labs, t)
    assert not edge_in_relation(enc, s, {Label("RecvForward", lab.params)}, t)
    assert not edge_in_relation(enc, s, labs, t._replace(sent=t.sent.set(1, t.sent[1] + 7)))
    m = lab.params[0]
    assert not edge_in_relation(enc, s, labs, t._replace(delivered=s.delivered))
    assert not edge_in_relation(enc, s, labs, t._replace(recv=s.recv))
    assert not edge_in_relation(enc, s, labs, t._replace(chan=s.chan))
    assert t.delivered[m] != s.delivered[m]


@pytest.mark.parametrize("name,max_states,k", default_and_slow(("CoordCrash", 1500, 40), ("Pair", None, 40),
                                                               ("FailureFree", 1000, 25)))
def test_reachable_states_have_no_extra_successor(name, max_states, k):
    """From sampled reachable states, the z3 relation allows no successor the
    model lacks; and the states of the crash-free model satisfy every lemma."""
    enc, model, res, _ = _sample(name, max_states, 0)
    states = sorted(res.parents, key=repr)
    random.Random(15).shuffle(states)
    S, T = enc.fresh("s"), enc.fresh("t")
    nxt = enc.next(S, T)
    crash_free = SequencerEncoding(enc.N, 0)
    S0 = crash_free.fresh("s")
    inv = crash_free.inv(S0)
    for s in states[:k]:
        succ = [t for _, t in model.next(s)]
        extra = extra_successor(enc, s, succ, S, T, nxt)
        assert extra is None, (s, extra)
        if enc.MC == 0:
            assert satisfies_invariant(crash_free, s, S0, inv), s


def test_crash_states_satisfy_the_lemmas_up_to_the_property():
    """In the CoordCrash model, every sampled reachable state satisfies each
    lemma but the property (the crash-free lemmas are conditioned on no crash;
    the rest hold with crashes): the flaw is the property itself."""
    enc, _, res, _ = _sample("CoordCrash", 1500, 0)
    S = enc.fresh("s")
    others = z3.And(*[L(S) for name, L in enc.lemmas.items() if name not in ("SurvivorTotalOrder",)])
    states = sorted(res.parents, key=repr)
    random.Random(17).shuffle(states)
    for s in states[:40]:
        solver = z3.Solver()
        solver.add(enc.value(S, s), z3.Not(others))
        assert solver.check() == z3.unsat, s


def test_decode_inverts_value():
    """A z3 model of ``value(s)`` decodes to ``s`` itself, a state the explorer
    looks up (with and without crashes, with two views)."""
    enc, _, res, _ = _sample("CoordCrash", 1500, 0)
    S = enc.fresh("s")
    states = sorted(res.parents, key=repr)
    random.Random(18).shuffle(states)
    sample = states[:30]
    assert any(s.crashed for s in sample) and any(len(s.views) == 2 for s in sample)
    for s in sample:
        solver = z3.Solver()
        solver.add(enc.value(S, s))
        assert solver.check() == z3.sat
        d = enc.decode(solver.model(), S)
        assert d == s and d in res.parents, (s, d)


@pytest.mark.slow
def test_no_flush_at_two_members_breaks_the_uniform_total_order():
    """At N = 2 (Pair) only the uniform TotalOrder breaks: NoFlush is judged on
    it, and the reachable CTI is the manifest's Pair counterexample."""
    enc = SequencerEncoding(2, 1)
    assert enc.properties == ("TotalOrder",)
    qs = run(enc)
    assert verdict(qs)
    real = [q for q in qs if q.result == "cti" and q.reachable]
    assert [q.query for q in real] == ["consecution:RecvData:TotalOrder"]
    assert real[0].action == "RecvData(2, 1)" and "Crash(1, {})" in real[0].path


@pytest.mark.slow
@pytest.mark.parametrize("name,k", [("Pair", 2000), ("CoordCrash", 1000), ("FailureFree", 500)])
def test_many_edges_and_states(name, k):
    """Whole graphs (Pair, CoordCrash) or a large prefix (FailureFree): ``k``
    sampled edges in the z3 relation; a fifth as many states without extra
    successor."""
    enc, model, res, edges = _sample(name, None if name != "FailureFree" else 20_000, k)
    bad = edges_outside(enc, edges)
    assert not bad, bad[0]
    S, T = enc.fresh("s"), enc.fresh("t")
    states = sorted(res.parents, key=repr)
    random.Random(16).shuffle(states)
    nxt = enc.next(S, T)
    inv = enc.inv(S)
    for s in states[: k // 5]:
        if enc.MC == 0:
            assert satisfies_invariant(enc, s, S, inv), s
        assert extra_successor(enc, s, [t for _, t in model.next(s)], S, T, nxt) is None, s
