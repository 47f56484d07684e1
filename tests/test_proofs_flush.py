"""FLUSH's z3 encoding (model/proofs/flush/) against the explicit-state
model (model/flush.py) on the manifest models: sampled
edges of the reachable graph satisfy the z3 relation under the same action
label, sampled reachable states of the fixed models satisfy the invariant,
and the z3 relation allows no successor of a sampled reachable state that
the model lacks; a wrong edge is refused.  The flawed variant yields a
counterexample to induction that the bounded model reaches; the fixed
variant's full matrix (every query proved) is under the slow mark (a
minute of z3); a few of its queries run in the default suite."""


import pytest
import z3

from groupcheck.model.core import Label
from groupcheck.model.proofs import registry
from groupcheck.model.proofs.prover import DEFAULT_RLIMIT, _solver, edge_in_relation, run, satisfies_invariant, verdict
from groupcheck.model.proofs.flush import FlushEncoding
from proof_helpers import default_and_slow, edges_agree, edges_outside, entry, sample, states_agree, states_hold


def _entry(name):
    return entry("flush", name)


def _sample(name, max_states, k, seed=15):
    enc = FlushEncoding.from_constants(_entry(name).constants())
    return sample(enc, max_states, k, seed)


@pytest.mark.parametrize("name,max_states,k", default_and_slow(
    ("FixedJoinCrash", 2000, 120), pytest.param("FixedLeaveCrash", 2000, 120, marks=pytest.mark.slow),
    ("FlawedCrash", 1199, 120),
    ("FixedTwoCrashes", 2000, 80)))
def test_model_edges_satisfy_the_z3_relation(name, max_states, k):
    edges_agree("flush", name, max_states, k)


def test_a_wrong_edge_is_rejected():
    """The edge check can fail: a real edge under another action's label, and
    a successor with one field changed, are refused."""
    enc, _, _, edges = _sample("FixedJoinCrash", 500, 200)
    s, t, labs = next((s, t, labs) for s, t, labs in edges if any(l.action == "Multicast" for l in labs))
    lab = min(labs, key=str)
    assert edge_in_relation(enc, s, labs, t)
    assert not edge_in_relation(enc, s, {Label("FlushOk", lab.params)}, t)
    assert not edge_in_relation(enc, s, labs, t._replace(delivered=s.delivered))
    p = lab.params[0]
    vid = t.vid[:p - 1] + (t.vid[p - 1] + 1,) + t.vid[p:]
    assert not edge_in_relation(enc, s, labs, t._replace(vid=vid))


@pytest.mark.parametrize("name,max_states,k", default_and_slow(
    ("FixedJoinCrash", 2000, 40), pytest.param("FixedLeaveCrash", 2000, 40, marks=pytest.mark.slow),
    ("FlawedCrash", 1199, 25)))
def test_reachable_states_satisfy_the_invariant_and_have_no_extra_successor(name, max_states, k):
    states_agree("flush", name, max_states, k, invariant=lambda enc: enc.R)


def test_the_invariant_is_not_vacuous():
    """A state the fixed model never reaches (two movers disagreeing on what
    they delivered of view 1) breaks the invariant."""
    enc, model, res, _ = _sample("FixedJoinCrash", 4769, 0)
    moved = [s for s in res.parents if len(s.views) == 2 and s.sent and s.sent[0]["view"] == 1
             and all(v == 2 for v in s.vid[:2]) and all(1 in d for d in s.delivered[:2])]
    assert moved
    s = moved[0]
    bad = s._replace(delivered=(frozenset(),) + s.delivered[1:])
    assert not model.VirtualSynchrony(bad)
    assert not satisfies_invariant(enc, bad)


@pytest.mark.parametrize("property_only", [True, pytest.param(False, marks=pytest.mark.slow)])
def test_the_flawed_variant_yields_a_reachable_cti_with_its_path(property_only):
    """FlawedCrash (the seed as written): with the property as the only lemma
    (the registry's), and with the fixed variant's lemmas (slow: ~290 queries)."""
    enc = FlushEncoding(3, 3, reconcile=False, variant="FlawedCrash",
                        reach={"MaxMsgs": 1, "MaxCrashes": 1, "MaxLeaves": 0}, property_only=property_only)
    qs = run(enc)
    real = [q for q in qs if q.result == "cti" and q.reachable]
    assert real, [(q.query, q.result, q.reachable) for q in qs if q.result != "proved"]
    assert verdict(qs)
    q = min(real, key=lambda q: len(q.path))
    assert q.path[0] == "Init"
    assert any(step.startswith("Crash(") for step in q.path)
    assert q.pre is not None and q.post is not None


@pytest.mark.slow
@pytest.mark.parametrize("ninit,variant", [(3, "Fixed"), (2, "FixedJoin")])
def test_fixed_invariant_is_proved(ninit, variant):
    """Every query of the fixed variants' full matrix is proved (Fixed: 341
    queries, crash and leave; FixedJoin: 361, joins too), no unknown
    allowed: the proof of docs/proofs.md, FLUSH (about half a minute of z3
    CPU each; the encoding's 60 s floor per instance query keeps a loaded
    machine's wall-clock time-outs away)."""
    enc = FlushEncoding(3, ninit, variant=variant)
    qs = run(enc, classify=False)
    assert verdict(qs), [(q.query, q.result) for q in qs if q.result != "proved"]
    assert len(qs) == (341 if ninit == 3 else 361)


@pytest.mark.slow
def test_fixed_invariant_is_proved_at_four_members():
    """The same invariant at N = 4 (first view 1..4, crash and leave): every
    one of the 341 queries proved, none unknown.  ViewDigest over every
    member that moved (48 conjuncts) was not settled whole within the
    time-out across StartFlush, FlushOk and StopFlush, and needed the
    engine's conjunct fallback (split_goal_rlimit); stated for the sender
    only (12 conjuncts) it does not.  About 2-3 minutes of z3 CPU."""
    enc = FlushEncoding(4, 4)
    qs = run(enc, classify=False)
    assert verdict(qs), [(q.query, q.result) for q in qs if q.result != "proved"]
    assert len(qs) == 341


def _instance_queries(enc, actions, lemmas):
    """The consecution queries (action instance x lemma) as run() poses them
    for a split encoding: Inv(S), A_i(S, T), Not(L(T))."""
    S, T = enc.fresh("s"), enc.fresh("t")
    inv = enc.inv(S)
    for lab, f in enc.actions(S, T):
        if lab.action in actions:
            for name in lemmas:
                yield f"{lab}:{name}", [inv, f, z3.Not(enc.lemmas[name](T))]


def test_the_once_open_queries_are_proved_per_instance():
    """A cheap part of the fixed matrix in the default suite: Multicast x
    ViewMsgs / ViewDigest / VirtualSynchrony (open at 30-60 s on the
    disjunction of Multicast(1..3); per instance a fraction of a second),
    and SendView x ViewDigest / VirtualSynchrony (where the fix acts: without
    the sender's reconciliation SendView breaks ViewDigest)."""
    enc = FlushEncoding(3, 3)
    assert enc.split_instances
    qs = list(_instance_queries(enc, {"Multicast"}, ("ViewMsgs", "ViewDigest", "VirtualSynchrony")))
    qs += list(_instance_queries(enc, {"SendView"}, ("ViewDigest", "VirtualSynchrony")))
    assert len(qs) == 15
    for name, fs in qs:
        s = _solver(enc)
        s.set("rlimit", DEFAULT_RLIMIT)      # z3's resource units, never wall-clock time
        s.add(*fs)
        assert s.check() == z3.unsat, name


@pytest.mark.parametrize("n,ninit", [(2, 2), (3, 3), (3, 2), (4, 4)])
def test_view_digest_for_the_sender_is_the_lemma_for_every_mover(n, ninit):
    """ViewDigest is stated for a VIEW's sender only (with the conjunction
    over every member that moved, z3 took 2-6 s of CPU on the Multicast
    and SendView rows; about 0.2 s on this).  With ViewMsgs (the sender moved),
    MsgIds (views from 1) and VirtualSynchrony (every mover delivered what
    the sender did), all in the invariant, it is the first statement, for
    every member that moved (``ViewDigestMovers``), and the first statement
    with ViewMsgs gives it back: the invariant is the same set of states."""
    enc = FlushEncoding(n, ninit)
    S = enc.fresh("s")
    new, old = enc.ViewDigest(S), enc.ViewDigestMovers(S)
    base = [enc.ViewMsgs(S), enc.MsgIds(S)]

    def check(*fs):
        s = _solver(enc)
        s.set("rlimit", DEFAULT_RLIMIT)      # z3's resource units, never wall-clock time
        s.add(*fs)
        return s.check()
    assert check(*base, enc.VirtualSynchrony(S), new, z3.Not(old)) == z3.unsat
    assert check(enc.ViewMsgs(S), old, z3.Not(new)) == z3.unsat
    # VirtualSynchrony is needed: without it the sender's digest says
    # nothing of the other movers
    assert check(*base, new, z3.Not(old)) == z3.sat


def test_flush_is_registered():
    encs = registry.select("flush")
    assert [e.variant for e in encs] == ["AnyFixed", "AnyFixedJoin", "AnyFlawed", "FlawedLeave"]
    assert [e.expect_cti for e in encs] == [False, False, True, True]
    assert [e.members for e in encs] == ["any", "any", "any", 3]
    # a minute or more of z3: proved by `groupcheck prove` and `audit --full`, not the default audit
    assert [e.heavy for e in encs] == [False, True, False, False]
    # what the every-N variants subsume, asked with --all
    assert [e.variant for e in registry.select("flush", every=True)] == [
        "AnyFixed", "AnyFixedJoin", "AnyFlawed", "Fixed", "FixedJoin", "FlawedLeave", "FlawedCrash"]


@pytest.mark.slow
@pytest.mark.parametrize("name,k", [("FixedCrash", 400), ("FlawedLeave", 400), ("FixedJoin", 190)])
def test_many_edges_and_states(name, k):
    enc, model, res, edges = _sample(name, None, k)
    bad = edges_outside(enc, edges)
    assert not bad, bad[0]
    states_hold(enc, model, res.parents, k // 5, bool(enc.R), seed=16)


def test_reconciling_edges_satisfy_the_z3_relation():
    """The edges where the fix acts -- an InstallView or SendView that
    delivers messages of the union digest the member lacked -- are rare in
    a sample: every one of them in FixedJoinCrash's whole graph (4,769
    states) is checked, and the same successor without the reconciliation
    is refused."""
    enc, _, res, _ = _sample("FixedJoinCrash", None, 0)
    assert res.complete
    edges = [(s, t, labs) for s, t, labs in res.graph.edges(data="labels")
             if any(l.action in ("InstallView", "SendView") for l in labs) and s.delivered != t.delivered]
    assert edges
    S, T = enc.fresh("s"), enc.fresh("t")
    acts = list(enc.actions(S, T))
    for s, t, labs in edges[:60]:
        assert edge_in_relation(enc, s, labs, t, S, T, acts), (labs, s, t)
    s, t, labs = edges[0]
    assert not edge_in_relation(enc, s, labs, t._replace(delivered=s.delivered), S, T, acts)


@pytest.mark.slow
def test_two_members_are_proved_and_list_no_flawed_variant():
    """N = 2 (every N up to 5): both fixed matrices proved; the
    seed's flaw needs two members moving to the next view together, which
    two members cannot do after a leave or crash, so no flawed variant is
    listed (its CTIs would be unreachable)."""
    encs = registry.select("flush", None, 2)
    assert [e.variant for e in encs] == ["Fixed", "FixedJoin"]
    for enc in encs:
        qs = run(enc, classify=False)
        assert verdict(qs) and len(qs) == (341 if enc.variant == "Fixed" else 361)
