"""SEQUENCER over FLUSH for every N without a crash (model/proofs/
sequencerflush_any.py, members the uninterpreted sort of
model/proofs/parametric.py): the invariant is inductive and implies
NoDuplicates and SurvivorTotalOrder; each lemma instantiated at N = 2, 3
and 4 holds on every reachable state of the manifest's models (their
constants with MaxCrashes = 0); z3 and the Python instantiation agree;
the model's edges are steps of the relation; a lemma set without Fresh
yields a decoded counterexample to induction; the answers are the same in
separate processes."""

import random
from collections import defaultdict

import pytest
import z3

from groupcheck.model.core import explore
from groupcheck.model.proofs import engine, registry
from groupcheck.model.proofs.engine import run, verdict
from groupcheck.model.proofs.sequencerflush_any import SequencerFlushAnyEncoding
from proof_helpers import entry, lemmas_broken, proved_for_every_n


def _enc(name, **change):
    return SequencerFlushAnyEncoding.from_constants(
        dict(entry("sequencerflush", name).constants(), MaxCrashes=0, **change))


def test_invariant_is_inductive_for_every_N():
    proved_for_every_n("sequencerflush", "AnyNoCrash", ["NoDuplicates", "SurvivorTotalOrder"])


@pytest.mark.parametrize("name,change,N", [
    ("Pair", {"MaxSeq": 2}, 2), ("GapPair", {}, 2), ("CoordCrash", {}, 3), ("LiveSender2", {}, 3), ("Four", {}, 4),
    pytest.param("Four", {"Senders": frozenset({1, 2, 3, 4})}, 4, marks=pytest.mark.slow)])
def test_lemmas_hold_on_every_reachable_state(name, change, N):
    """Each lemma instantiated at the model's N, on every state it reaches
    (the manifest model's constants, MaxCrashes = 0): with every member a
    sender, Pair with two multicasts each (389 states), CoordCrash (722),
    four members (28,996, slow)."""
    enc = _enc(name, **change)
    res, bad = lemmas_broken(enc)
    assert res.complete and not bad, bad[:1]
    assert {len(s.vid) for s in res.parents} == {N} and any(s.delivered[N] for s in res.parents)


def test_the_left_out_forward_table_is_what_the_channels_say():
    """A decoded state's fwd (``forward_table``) is the explorer's on every
    reachable state, so a reachable CTI is found among them."""
    for name, change in (("Pair", {"MaxSeq": 2}), ("CoordCrash", {})):
        res = explore(_enc(name, **change).model(), check_invariants=False)
        assert any(any(s.fwd[m] for m in s.vid) for s in res.parents)
        assert all(s.fwd[m] == SequencerFlushAnyEncoding.forward_table(s.chan, m) for s in res.parents for m in s.vid)


def test_instantiation_agrees_with_z3_and_can_fail():
    """On sampled reachable states and on one with a delivery repeated, the
    Python instantiation and z3 (the quantified lemma, the sort pinned to
    N members) give the same answer; the repeated delivery breaks
    NoDuplicates."""
    enc = _enc("CoordCrash")
    res = explore(enc.model(), check_invariants=False)
    states = random.Random(7).sample(sorted(res.parents, key=repr), 3)
    s = next(s for s in sorted(res.parents, key=repr) if s.delivered[2])
    twice = s._replace(delivered=s.delivered.set(2, s.delivered[2] * 2))
    assert not enc.holds("NoDuplicates", twice)
    S = enc.fresh("s")
    for x in states + [twice]:
        for n, L in enc.lemmas.items():
            r = engine._solve([enc.value(S, x), z3.Not(L(S))], enc)[0]
            assert (r == "proved") == enc.holds(n, x), (n, x, r)


def test_model_edges_are_steps_of_the_relation():
    """Three edges of each action of the three-member model (Send,
    RecvForward and RecvData: without a crash no other is enabled) are
    steps of the relation under their label; a wrong successor is refused."""
    enc = _enc("CoordCrash")
    res = explore(enc.model(), check_invariants=False, build_graph=True)
    by = defaultdict(list)
    for s, t, labs in sorted(res.graph.edges(data="labels"), key=lambda e: (repr(e[0]), repr(e[1]))):
        by[min(labs, key=str).action].append((s, t, min(labs, key=str)))
    assert set(by) == {"Send", "RecvForward", "RecvData"}
    S, T = enc.fresh("s"), enc.fresh("t")
    acts = defaultdict(list)
    for lab, f in enc.actions(S, T):
        acts[lab.action].append(f)

    def step(s, t, lab):
        """Is s -> t a step of one of the action's instances (each asked
        alone: on their disjunction z3 answered unknown)?"""
        rs = []
        for f in acts[lab.action]:
            solver = engine._solver(enc)
            solver.add(*enc.query([enc.value(S, s), enc.value(T, t), f, enc.pin(lab)]))
            rs.append(solver.check())
        assert z3.sat in rs or z3.unknown not in rs, (lab, s, t)
        return z3.sat in rs
    for es in by.values():
        for s, t, lab in random.Random(3).sample(es, min(3, len(es))):
            assert step(s, t, lab), (lab, s, t)
    s, t, lab = next(e for e in by["RecvData"] if e[1].delivered != e[0].delivered)
    assert not step(s, t._replace(delivered=s.delivered), lab)


def test_a_lemma_set_without_fresh_yields_a_decoded_cti():
    """Without Fresh (what is queued to m is above m's received-table) the
    duplicate check could fire and RecvData break Sequence: z3 gives a
    counterexample to induction, decoded into a state of some members and
    not found reachable (Fresh holds on every reachable state)."""
    class NoFresh(SequencerFlushAnyEncoding):
        @property
        def lemmas(self):
            return {n: L for n, L in super().lemmas.items() if n != "Fresh"}
    [q] = run(NoFresh(), rows=frozenset({("RecvData", "Sequence")}))
    assert q.result == "cti" and q.reachable is not True and not verdict([q])
    assert q.action.startswith("RecvData") and q.pre["vid"].startswith("Fn(")


def _answers(qs):
    return [(q.query, q.result, q.reachable, q.path, q.action, q.pre, q.post) for q in qs]


@pytest.mark.slow
def test_the_answers_are_the_same_in_separate_processes():
    [enc] = registry.select("sequencerflush", "AnyNoCrash")
    runs = [qs for _, qs in registry.run_isolated([enc] * 3, jobs=1)]
    assert len(runs) == 3 and _answers(runs[0]) == _answers(runs[1]) == _answers(runs[2])
