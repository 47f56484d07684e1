"""Raincore's z3 encoding (model/proofs/raincore.py): the fixed variant's
invariant (FixedRing2's constants, N = 2) is inductive and implies
AtMostOneToken, LegalStates and ConsistentHistory (and dropping the
FreshView or FreshClaim fix breaks it); the lemmas that hold at any N (Types,
LastIndex, LegalStates, HeldNotStale) are inductive at N = 3 too; the seed
as written (Faithful3) yields a reachable counterexample to induction of
AtMostOneToken with its path, and the encoding agrees with the
explicit-state model on the manifest models (issue 15 item 4): sampled edges
of the reachable graph satisfy the z3 relation of the same action instance
(its message bound to the label's), sampled reachable states satisfy the
invariant and have no z3 successor the model lacks, decode inverts value,
and wrong edges are refused.

AtMostOneToken and ConsistentHistory are proved for two nodes only
(docs/proofs.md, the Raincore section)."""

import random

import pytest
import z3

from groupcheck.model.core import Label
from groupcheck.model.proofs.engine import extra_successor, run, satisfies_invariant, verdict
from groupcheck.model.proofs import registry
from groupcheck.model.proofs.raincore import (FLAWED_LEMMAS, LEMMAS_PROVED_N, RaincoreEncoding,
                                                manifest_constants)
from groupcheck.model.raincore import Token
from proof_helpers import sample


def _enc(name, **kw):
    kw.setdefault("variant", name)
    kw.setdefault("expect_cti", False)
    return RaincoreEncoding(manifest_constants(name), **kw)


def _sample(name, max_states, k, seed=15, **kw):
    enc = _enc(name, **kw)
    return sample(enc, max_states, k, seed)


def _in_relation(enc, s, labels, t, S, T) -> bool:
    """Does one of the model's action instances ``labels`` relate s to t in z3?"""
    for lab in labels:
        sol = z3.Solver()
        sol.add(enc.value(S, s), enc.value(T, t), enc.instance(S, T, lab))
        if sol.check() == z3.sat:
            return True
    return False


PROPS = ("AtMostOneToken", "LegalStates", "ConsistentHistory")


def test_fixed_invariant_is_inductive_and_implies_the_properties():
    enc = _enc("FixedRing2", properties=PROPS)
    assert enc.ring_lemmas_apply and "Claims" in enc.lemmas and "ViewNumbers" in enc.lemmas
    qs = run(enc, classify=False)
    bad = [(q.query, q.result) for q in qs if q.result != "proved"]
    assert not bad, bad
    assert verdict(qs)
    assert {q.query for q in qs} >= {"implication:AtMostOneToken", "implication:LegalStates",
                                     "implication:ConsistentHistory",
                                     "consecution:911Received:AtMostOneToken",
                                     "consecution:TokenReceived:ConsistentHistory"}


class _Forced(RaincoreEncoding):
    """The two-node ring's lemmas on constants they were not proved for."""
    ring_lemmas_apply = True


@pytest.mark.parametrize("fix,broken", [("FreshView", "consecution:TokenReceived:"),
                                        ("FreshClaim", "consecution:911Received:")])
def test_the_invariant_needs_the_fixes(fix, broken):
    """Without FreshView (a recovered node's retained localView matches and
    it reserves a slot at once) or FreshClaim (a YES for an old claim
    regenerates) the same lemmas are no longer inductive: a CTI."""
    c = manifest_constants("FixedRing2")
    c[fix] = False
    enc = _Forced(c, variant="Mutant", expect_cti=False, properties=PROPS)
    qs = run(enc, classify=False)
    assert not [q for q in qs if q.result == "unknown"]
    ctis = [q.query for q in qs if q.result == "cti"]
    assert ctis and all(q.startswith(broken) for q in ctis), ctis


def test_registry_variants():
    encs = registry.select("raincore")
    assert [(e.variant, e.members, e.expect_cti) for e in encs] == [("Faithful", 3, True), ("Fixed", 2, False)]
    assert encs[1].properties == PROPS
    assert [e.variant for e in registry.select("raincore", members=3)] == ["Faithful", "FixedLegalStates"]


@pytest.mark.parametrize("members", [3, pytest.param(4, marks=pytest.mark.slow)])
def test_the_n_node_lemmas_are_proved_by_the_registry(members):
    """`groupcheck prove raincore --members N`: FixedLegalStates (the lemmas
    that hold at any N, with the founder's ring) is proved at N nodes (N = 3:
    85 queries, about 13 s on the shared machine; N = 4 about a minute; N = 5
    by hand), and the seed as written still yields its reachable CTI at N = 3
    (test_the_flawed_variant_yields_a_reachable_cti_with_its_path)."""
    enc = registry.select("raincore", "FixedLegalStates", members=members)[0]
    assert enc.N == members and tuple(enc.lemmas) == LEMMAS_PROVED_N
    qs = run(enc, classify=False)
    bad = [(q.query, q.result) for q in qs if q.result != "proved"]
    assert not bad, bad
    assert verdict(qs) and len(qs) == len(LEMMAS_PROVED_N) * 12 + 1


def test_the_founder_ring_lemma_needs_the_stable_founder():
    """FounderRing rests on StableFounder: without it node 1 may crash and be
    dropped from the ring, and the lemma is not stated."""
    c = manifest_constants("FixedRing3")
    assert "FounderRing" in RaincoreEncoding(c, variant="X", expect_cti=False).lemmas
    c["StableFounder"] = False
    assert "FounderRing" not in RaincoreEncoding(c, variant="X", expect_cti=False).lemmas


@pytest.mark.parametrize("name", [pytest.param("Fixed3", marks=pytest.mark.slow)])
def test_the_proved_lemmas_are_inductive_for_the_fixes(name):
    enc = _enc(name, lemma_names=LEMMAS_PROVED_N, properties=("LegalStates",))
    qs = run(enc, classify=False)
    bad = [(q.query, q.result) for q in qs if q.result != "proved"]
    assert not bad, bad
    assert verdict(qs)
    S, T = enc.fresh("s"), enc.fresh("t")
    actions = {lab.action for lab, _ in enc.actions(S, T)}
    assert actions >= {"Initialization", "TokenReceived", "911Received", "TokenDeliveryFailure",
                       "911DeliveryFailure", "EatingTimeout", "HungryTimeout", "StarvingTimeout", "Crash",
                       "Recover", "TokenLoss"}   # Join: no node outside the initial ring here
    assert len(qs) == len(LEMMAS_PROVED_N) * (1 + len(actions)) + 1


def test_the_flawed_variant_yields_a_reachable_cti_with_its_path():
    enc = registry.select("raincore", "Faithful")[0]
    assert tuple(enc.lemmas) == FLAWED_LEMMAS
    qs = run(enc, timeout_ms=2000)
    real = [q for q in qs if q.result == "cti" and q.reachable]
    assert real, [(q.query, q.result, q.reachable) for q in qs if q.result != "proved"]
    assert verdict(qs)
    q = real[0]
    assert q.query == "consecution:911Received:AtMostOneToken"
    # node 3's Hungry timeout fires while the token is on its way to node 1
    # (F1): its 911 passes node 1 before the token and comes back YES
    assert q.path[0] == "Init" and q.path[1] == "HungryTimeout(3)"
    assert q.action == "911Received(3)"
    assert "'Eating', 'Hungry', 'Eating'" in q.post["tokenState"]


@pytest.mark.parametrize("name,max_states,k", [("Faithful3", 3000, 100), ("FixedRing2", 1500, 150),
                                               ("Fixed3", 1500, 100)])
def test_model_edges_satisfy_the_z3_relation(name, max_states, k):
    enc, _, _, edges = _sample(name, max_states, k)
    assert len(edges) == k
    S, T = enc.fresh("s"), enc.fresh("t")
    bad = [(sorted(map(str, labs)), s, t) for s, t, labs in edges if not _in_relation(enc, s, labs, t, S, T)]
    assert not bad, bad[0]


def test_wrong_edges_are_rejected():
    """The edge check can fail: a real edge under another instance's label,
    a successor with one field changed, and one with an extra message."""
    enc, _, _, edges = _sample("FixedRing2", 500, 200)
    S, T = enc.fresh("s"), enc.fresh("t")
    s, t, labs = next(e for e in edges if any(l.action == "TokenReceived" for l in e[2]))
    lab = next(l for l in labs if l.action == "TokenReceived")
    assert _in_relation(enc, s, {lab}, t, S, T)
    other = Label("TokenReceived", (3 - lab.params[0], lab.params[1]))
    assert not _in_relation(enc, s, {other}, t, S, T)
    assert not _in_relation(enc, s, {Label("EatingTimeout", (lab.params[0],))}, t, S, T)
    bumped = t._replace(lastToken=(t.lastToken[0].set("seq", t.lastToken[0]["seq"] + 7),) + t.lastToken[1:])
    assert not _in_relation(enc, s, labs, bumped, S, T)
    extra = t._replace(tokenMsgs=t.tokenMsgs | {Token(99, (1, 2), 1, 2, 1)})
    assert not _in_relation(enc, s, labs, extra, S, T)


@pytest.mark.parametrize("name,max_states,k,fixed", [("FixedRing2", 1500, 40, True), ("Fixed3", 1500, 30, True),
                                                     ("Faithful3", 3000, 20, False)])
def test_reachable_states_satisfy_the_invariant_and_have_no_extra_successor(name, max_states, k, fixed):
    enc, model, res, _ = _sample(name, max_states, 0)
    if name == "FixedRing2":
        assert enc.ring_lemmas_apply    # the whole invariant of the proof
    states = sorted(res.parents, key=repr)
    random.Random(15).shuffle(states)
    S, T = enc.fresh("s"), enc.fresh("t")
    inv, nxt = enc.inv(S), enc.next(S, T)
    for s in states[:k]:
        if fixed:
            assert satisfies_invariant(enc, s, S, inv), s
        succ = [t for _, t in model.next(s)]
        assert extra_successor(enc, s, succ, S, T, nxt) is None, s


def test_decode_inverts_value():
    enc, _, res, _ = _sample("FixedRing2", 800, 0)
    states = sorted(res.parents, key=repr)
    random.Random(3).shuffle(states)
    S = enc.fresh("s")
    for s in states[:40]:
        sol = z3.Solver()
        sol.add(enc.value(S, s))
        assert sol.check() == z3.sat
        assert enc.decode(sol.model(), S) == s


@pytest.mark.slow
@pytest.mark.parametrize("name,k", [("FixedRing2", 1000), ("Fixed3", 600)])
def test_many_edges_and_states_of_whole_graphs(name, k):
    """The whole reachable graphs (FixedRing2: 41,491 states, Fixed3: 56,517):
    ``k`` sampled edges in the z3 relation; a fifth as many sampled states
    satisfy the invariant (FixedRing2: the whole proof's, Fixed3: the
    lemmas that hold at any N) and have no successor the model lacks."""
    kw = {} if name == "FixedRing2" else dict(lemma_names=LEMMAS_PROVED_N, properties=("LegalStates",))
    enc, model, res, edges = _sample(name, None, k, **kw)
    assert res.complete
    S, T = enc.fresh("s"), enc.fresh("t")
    bad = [(s, t) for s, t, labs in edges if not _in_relation(enc, s, labs, t, S, T)]
    assert not bad, bad[0]
    states = sorted(res.parents, key=repr)
    random.Random(16).shuffle(states)
    inv, nxt = enc.inv(S), enc.next(S, T)
    for s in states[: k // 5]:
        assert satisfies_invariant(enc, s, S, inv), s
        assert extra_successor(enc, s, [t for _, t in model.next(s)], S, T, nxt) is None, s
