"""Raincore's z3 encoding (model/proofs/raincore/): the fixed variant's
invariant (FixedRing2's constants, N = 2) is inductive and implies
AtMostOneToken, LegalStates and ConsistentHistory (and dropping the
FreshView or FreshClaim fix breaks it); the lemmas that hold at any N (Types,
LastIndex, LegalStates, HeldNotStale) are inductive at N = 3 too; the seed
as written (Faithful3) yields a reachable counterexample to induction of
AtMostOneToken with its path, and the encoding agrees with the
explicit-state model on the manifest models: sampled edges
of the reachable graph satisfy the z3 relation of the same action instance
(its message bound to the label's), sampled reachable states satisfy the
invariant and have no z3 successor the model lacks, decode inverts value,
and wrong edges are refused.

AtMostOneToken and ConsistentHistory are proved for two nodes only
(docs/proofs.md, the Raincore section); at three nodes and more the fixed
protocol breaks AtMostOneToken (F8, docs/raincore.md): the behaviour is
replayed on the Python model (N = 3, 4, 5), each of its steps is an edge of
the z3 relation, and TLC finds the violation on the spec (N = 3).  The
attempted fix YieldClaim stops F8 and F8b (scripted), but from F8's state
after step 13 the explorer and TLC find two tokens with it too (F8c); with
YieldClaim and Timely911 F8d and F8e (38 and 39 steps from Init) still
end with two tokens, and from two tokens the views split (F9, F9d:
ConsistentHistory): the model, the z3 relation and TLC replay each."""

import random

import pytest
import z3

from groupcheck.model.core import Label
from groupcheck.model.proofs.prover import built_once, extra_successor, run, satisfies_invariant, value_of, verdict
from groupcheck.model.proofs import registry
from groupcheck.model.proofs.raincore import (FLAWED_LEMMAS, LEMMAS_PROVED_N, RaincoreEncoding,
                                                manifest_constants)
from groupcheck.model.raincore import Token
from proof_helpers import default_and_slow, sample


def _enc(name, **kw):
    kw.setdefault("variant", name)
    kw.setdefault("expect_cti", False)
    return RaincoreEncoding(manifest_constants(name), **kw)


def _sample(name, max_states, k, seed=15, **kw):
    enc = _enc(name, **kw)
    return sample(enc, max_states, k, seed)


def _in_relation(enc, s, labels, t, S, T) -> bool:
    """Does one of the model's action instances ``labels`` relate s to t in z3?
    (A state's value and an instance's formula built once: a sample of edges
    repeats both.)"""
    for lab in labels:
        sol = z3.Solver()
        f = built_once(enc, ("instance", S["tag"], T["tag"], lab), lambda: enc.instance(S, T, lab))
        sol.add(value_of(enc, S, s), value_of(enc, T, t), f)
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
                                        pytest.param("FreshClaim", "consecution:911Received:",
                                                     marks=pytest.mark.slow)])
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


@pytest.mark.parametrize("members", [pytest.param(3, marks=pytest.mark.slow), pytest.param(4, marks=pytest.mark.slow)])
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


@pytest.mark.slow
def test_the_flawed_variant_yields_a_reachable_cti_with_its_path():
    enc = registry.select("raincore", "Faithful")[0]
    assert tuple(enc.lemmas) == FLAWED_LEMMAS
    qs = run(enc)
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


@pytest.mark.parametrize("name,max_states,k", default_and_slow(("Faithful3", 3000, 100), ("FixedRing2", 1500, 150),
                                                               ("Fixed3", 1500, 100),
                                                               pytest.param("TimelyYield3", 937, 100,
                                                                            marks=pytest.mark.slow)))
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


@pytest.mark.parametrize("name,max_states,k,fixed", default_and_slow(
    ("FixedRing2", 1500, 40, True), ("Fixed3", 1500, 30, True), ("Faithful3", 3000, 20, False),
    pytest.param("TimelyYield3", 937, 60, True, marks=pytest.mark.slow)))
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


# --- AtMostOneToken at N = 3 under every fix: a counterexample (F8) --------------------
#
# The fixed protocol (FixedRing3's constants, every assumption and fix,
# TokenRingClaim included) breaks AtMostOneToken on three nodes, beyond the
# bounded models' reach (MaxSeq 11 and two 911s in flight are needed;
# FixedRing3 has MaxSeq 5, Max911 1).  Node 2 crashes, is dropped and
# recovers; node 3 (not the founder) takes it back in after itself, ring
# <<1, 3, 2>>; node 2 takes the token once and sends it to node 1, and the
# token is lost; node 3 crashes.  Node 1's lastToken still lists <<1, 3>>
# (it has not sent since node 2 came back), so its claim (9) asks node 3
# only, which is down: it comes back YES.  Node 2's claim (11) goes to node
# 1, which forwards it (TokenRingClaim: a higher claim from a node off its
# view), and then skips node 3: YES too.  Both regenerate (docs/raincore.md,
# F8; docs/proofs.md, Raincore).
# At N > 3 nodes 4..N crash at the start and node 3's delivery failures
# drop them; the rest is the same.
def f8_script(N: int = 3) -> tuple:
    """F8's steps at N nodes: (action, node or None, the message's selector
    field -> value, or None)."""
    tr = lambda n: ("TokenReceived", n, {"dest": n})  # noqa: E731
    et = lambda n: ("EatingTimeout", n, None)  # noqa: E731
    return (
        tr(1), *[("Crash", k, None) for k in range(4, N + 1)], ("Crash", 2, None), et(1),
        ("TokenDeliveryFailure", 1, {"cur": 1}), tr(3), et(3),
        *[("TokenDeliveryFailure", 3, {"cur": 3})] * (N - 3),
        tr(1), et(1), tr(3), et(3), tr(1), et(1), tr(3),
        ("Recover", 2, None), ("911Received", 3, {"orig": 2}), et(3), tr(2), et(2),
        ("TokenLoss", None, {"dest": 1}), ("Crash", 3, None), ("HungryTimeout", 1, None),
        ("HungryTimeout", 2, None), ("911Received", 1, {"orig": 2}), ("911DeliveryFailure", 1, {"orig": 1}),
        ("911DeliveryFailure", 1, {"orig": 2}), ("911Received", 1, {"orig": 1}), ("911Received", 2, {"orig": 2}),
    )


F8_SCRIPT = f8_script(3)


def _f8_behaviour(N: int = 3, script=None, **extra):
    """FixedRing3's constants at N nodes (all in the initial ring, InitSeq =
    N) without the model checker's bounds (``extra`` constants on top), and
    the states and labels of ``script`` (default f8_script(N)) from Init."""
    from groupcheck.model.raincore import RaincoreModel
    c = manifest_constants("FixedRing3")
    for k in ("MaxSeq", "Max911", "MaxDown"):
        c.pop(k)
    c.update(N=N, InitSize=N, InitSeq=N, **extra)
    model = RaincoreModel(c)
    s = next(iter(model.init()))
    out = [(None, s)]
    for action, n, sel in (f8_script(N) if script is None else script):
        params = () if n is None else (n,)
        if sel is not None:
            pool = s.msgs911 if action.startswith("911") else s.tokenMsgs
            (m,) = [m for m in pool if all(m[k] == v for k, v in sel.items())]
            params += (m,)
        s = model.step(s, action, *params)
        out.append((Label(action, params), s))
    return c, model, out


def test_every_fix_at_three_nodes_still_allows_two_tokens():
    """F8 in the Python model (the spec's mirror): every state up to step 24
    holds every invariant; after step 25 both claims are on their way back
    YES (SingleRegenerator breaks), and the last state has nodes 1 and 2
    Eating, each on a token it regenerated (node 1 from its <<1, 3>> copy
    numbered 9, node 2 from its <<1, 3, 2>> copy numbered 11), the first
    state that breaks AtMostOneToken.  The behaviour needs MaxSeq 11, two
    911s in flight and one node down: beyond FixedRing3's bounds."""
    _, model, beh = _f8_behaviour()
    inv = model.invariants
    broken = [(i, sorted(k for k, f in inv.items() if not f(s))) for i, (_, s) in enumerate(beh)]
    assert [b for b in broken if b[1]] == [(25, ["SingleRegenerator"]), (26, ["SingleRegenerator"]),
                                           (27, ["AtMostOneToken", "SingleRegenerator"])]
    last = beh[-1][1]
    assert not model.AtMostOneToken(last) and not model.SingleRegenerator(last)
    assert last.status == ("Up", "Up", "Down") and last.tokenState[:2] == ("Eating", "Eating")
    assert [(t["seq"], t["nodelist"]) for t in last.token[:2]] == [(9, (1, 3)), (11, (1, 3, 2))]
    seqs = [m["seq"] for _, s in beh for m in s.tokenMsgs] + [t["seq"] for _, s in beh for t in s.lastToken]
    assert max(seqs) == 11
    assert max(len(s.msgs911) for _, s in beh) == 2
    assert max(s.status.count("Down") for _, s in beh) == 1


@pytest.mark.parametrize("N", [4, pytest.param(5, marks=pytest.mark.slow)])
def test_every_fix_at_four_and_five_nodes_still_allows_two_tokens(N):
    """F8 at N = 4 and 5: nodes 4..N crash at the start and are dropped by
    node 3's delivery failures; the rest is the three-node behaviour (two
    regenerated tokens, nodes 1 and 2 Eating); its last twelve steps (from
    node 2's first token: the loss, the crash, the claims and the
    regenerations) are edges of the z3 relation of the N-node encoding."""
    c, model, beh = _f8_behaviour(N)
    assert not model.AtMostOneToken(beh[-1][1]) and all(model.AtMostOneToken(s) for _, s in beh[:-1])
    assert beh[-1][1].tokenState[:2] == ("Eating", "Eating")
    enc = RaincoreEncoding(c, variant=f"FixedRing{N}", expect_cti=False)
    S, T = enc.fresh("s"), enc.fresh("t")
    for (_, s), (lab, t) in list(zip(beh, beh[1:]))[-12:]:
        assert _in_relation(enc, s, [lab], t, S, T), lab


def test_the_three_node_counterexample_is_in_the_z3_relation():
    """Each F8 step is an edge of the z3 relation of the same action
    instance (FixedRing3's constants), and the last state breaks the
    encoding's AtMostOneToken: no inductive invariant of the encoding at
    N = 3 implies the property."""
    c, _, beh = _f8_behaviour()
    enc = RaincoreEncoding(c, variant="FixedRing3", expect_cti=False)
    assert _z3_replays(enc, beh, "AtMostOneToken") == [len(beh) - 1]


def _f8_tla_step(action, n, sel):
    """One scripted step as a disjunct of the spec's Next: the message is
    the one whose fields are ``sel``'s values."""
    if sel is None:
        return f"{action}({n})"
    from groupcheck.model.values import to_tla
    pool = "msgs911" if action.startswith("911") else "tokenMsgs"
    where = " /\\ ".join(f"m.{k} = {to_tla(v)}" for k, v in sel.items())
    call = "TokenLoss(m)" if action == "TokenLoss" else f"{action}({n}, m)"
    return f"\\E m \\in {pool} : {where} /\\ {call}"


def _tlc_replay(tmp_path, script, constants, invariants="TypeOK LegalStates AtMostOneToken"):
    """TLC on the spec itself: a module that extends Raincore and allows, at
    each depth, only the script's step (a disjunct of the spec's Next)."""
    import shutil

    from groupcheck.model.tlc import TLCError, check_java, find_tla2tools, run_tlc
    from groupcheck.spec import spec_root
    try:
        find_tla2tools()
        check_java()
    except TLCError as e:  # pragma: no cover
        pytest.skip(f"TLC cannot run here: {e}")
    shutil.copy(spec_root() / "Raincore" / "Raincore.tla", tmp_path)
    cases = "\n    [] ".join(f"i = {k + 1} -> {_f8_tla_step(*st)}" for k, st in enumerate(script))
    (tmp_path / "ReplayRaincore.tla").write_text(
        "---- MODULE ReplayRaincore ----\nEXTENDS Raincore, TLC\n"
        f"ReplayNext == LET i == TLCGet(\"level\") IN\n    CASE {cases}\n    [] OTHER -> FALSE\n====\n")
    consts = "\n".join(f"    {k} = {str(v).upper() if isinstance(v, bool) else v}" for k, v in constants.items())
    return run_tlc(tmp_path, "ReplayRaincore", None, cfg_text=f"CONSTANTS\n{consts}\nINIT Init\nNEXT ReplayNext\n"
                   f"INVARIANT {invariants}\n", timeout=120)


def test_tlc_finds_the_three_node_counterexample(tmp_path):
    """TLC on the spec replays F8 and reaches a state with two Eating nodes
    at depth 28 (AtMostOneToken violated)."""
    c, _, _ = _f8_behaviour()
    r = _tlc_replay(tmp_path, F8_SCRIPT, c)
    assert r.outcome == "invariant" and r.violated == "AtMostOneToken", r.raw_output
    assert len(r.counterexample) == len(F8_SCRIPT) + 1


# --- YieldClaim (docs/raincore.md, F8): what it stops, and what it does not ----------
#
# F8b: F8's first 22 steps, then node 1's own claim bounces off the dead
# node 3 first: node 1 regenerates its <<1, 3>> copy (9) and sends it on
# (to node 3, down), Hungry; node 2's claim (11) reaches it only then,
# above node 1's new number (10): forwarded, it bounces back to node 2,
# which regenerates, and node 1's delivery failure leaves it alone, Eating.
F8B_SCRIPT = F8_SCRIPT[:22] + (
    ("911DeliveryFailure", 1, {"orig": 1}), ("911Received", 1, {"orig": 1}), ("EatingTimeout", 1, None),
    ("911Received", 1, {"orig": 2}), ("911DeliveryFailure", 1, {"orig": 2}), ("911Received", 2, {"orig": 2}),
    ("TokenDeliveryFailure", 1, {"cur": 1}))


def test_f8b_two_tokens_without_yield_claim():
    _, model, beh = _f8_behaviour(script=F8B_SCRIPT)
    assert [i for i, (_, s) in enumerate(beh) if not model.AtMostOneToken(s)] == [len(F8B_SCRIPT)]
    assert beh[-1][1].tokenState[:2] == ("Eating", "Eating")


def test_yield_claim_stops_f8():
    """Under YieldClaim F8's steps all run, but at step 23 node 1, Starving on
    its claim 9, lets node 2's claim 11 pass and queues node 2, so its
    ClaimRing becomes <<1, 2, 3>>: at step 26 its YES for the claim along
    <<1, 3>> is stale and dropped; only node 2 regenerates.  Without the fix
    the same YES regenerates (F8)."""
    _, model, beh = _f8_behaviour(YieldClaim=True)
    assert all(model.AtMostOneToken(s) and model.SingleRegenerator(s) for _, s in beh)
    s23, s25, last = beh[23][1], beh[25][1], beh[-1][1]
    assert s23.newNodes[0] == {2} and model.ClaimRing(s23, 1) == (1, 2, 3)
    (own,) = [m for m in s25.msgs911 if m["orig"] == 1]
    assert own["status"] == "YES" and own["nodelist"] == (1, 3) and not model.Regenerate(s25, 1, own)
    assert beh[26][1].tokenState[0] == "Starving"
    assert last.tokenState == ("Starving", "Eating", "Starving") and last.token[1]["seq"] == 11
    _, unfixed, ubeh = _f8_behaviour()
    (own,) = [m for m in ubeh[25][1].msgs911 if m["orig"] == 1]
    assert unfixed.Regenerate(ubeh[25][1], 1, own)


def test_yield_claim_stops_f8b():
    """Under YieldClaim node 1, Hungry with its regenerated token in flight,
    vetoes node 2's claim (step 26): it goes back to node 2 with NO, and
    F8b's step 27 (its delivery failure at node 1) is not enabled."""
    with pytest.raises(ValueError, match="911DeliveryFailure"):
        _f8_behaviour(script=F8B_SCRIPT, YieldClaim=True)
    _, model, beh = _f8_behaviour(script=F8B_SCRIPT[:26], YieldClaim=True)
    s = beh[-1][1]
    (m,) = s.msgs911
    assert s.tokenState[0] == "Hungry" and (m["orig"], m["status"], m["dest"]) == (2, "NO", 2)
    assert all(model.AtMostOneToken(t) for _, t in beh)


# From F8's state after step 13 (node 2 down and dropped, nodes 1 and 3 in
# Agreement on <<1, 3>>, node 3 Eating the token numbered 9) every behaviour
# within F8's bounds (MaxSeq 11, two 911s in flight, one node down at a
# time): the whole reachable set from Init at these bounds is out of reach
# (MaxSeq 7 alone runs past 200 s), from this state it is small.
F8_FROM_STEP, F8_BOUNDS = 13, {"MaxSeq": 11, "Max911": 2, "MaxDown": 1}


def _from_f8_state(**extra):
    from groupcheck.model.raincore import RaincoreModel
    c, _, beh = _f8_behaviour(**extra)
    s0 = beh[F8_FROM_STEP][1]
    c.update(F8_BOUNDS)

    class FromF8(RaincoreModel):
        def init(self):
            yield s0
    return c, s0, FromF8(c)


def test_yield_claim_does_not_make_three_nodes_safe():
    """F8c: from F8's state after step 13, with YieldClaim, two tokens again
    (the fix is incomplete).  Node 1's claim (9, along <<1, 3>>) waits on its
    way to node 3 while node 3's claim (10) passes node 1 and node 3
    regenerates, takes node 2 back in and passes the token to it, then
    crashes; node 1's claim then fails to reach node 3, comes back YES and
    node 1 regenerates: it never met node 2, nor a node that knew of it.
    Without the fix the explorer finds two tokens from there as well."""
    from groupcheck.model.core import explore
    for yc in (False, True):
        _, _, model = _from_f8_state(YieldClaim=yc)
        r = explore(model, check_invariants=["TypeOK", "LegalStates", "AtMostOneToken"])
        assert r.violation is not None and r.violation.invariant == "AtMostOneToken", yc
    labels = [str(lab) for lab, _ in r.violation.trace[1:]]
    assert labels[-1].startswith("911Received(1, ") and "orig |-> 1" in labels[-1]
    assert labels[-2].startswith("911DeliveryFailure(1, ") and "orig |-> 1" in labels[-2]
    assert any(x.startswith("TokenReceived(2, ") for x in labels) and "Crash(3)" in labels
    last = r.violation.trace[-1][1]
    assert last.tokenState[:2] == ("Eating", "Eating") and last.token[0]["nodelist"] == (1, 3)


# --- Timely911 (docs/raincore.md, F8c): a node's Eating timeout does not
# fire while a 911 is on its way to it.  With YieldClaim it closes F8's
# neighbourhood; alone it does not.

def test_timely911_alone_does_not_stop_f8():
    """F8 runs whole under Timely911 without YieldClaim: when a node of F8
    passes the token on, no 911 is addressed to it (the claims start only
    after the token is lost), and it ends with two regenerated tokens."""
    _, model, beh = _f8_behaviour(Timely911=True)
    assert not model.AtMostOneToken(beh[-1][1]) and beh[-1][1].tokenState[:2] == ("Eating", "Eating")


def test_timely911_stops_f8c():
    """F8c (the explorer's shortest two-token behaviour from F8's state with
    YieldClaim) is not a behaviour under Timely911: the first step refused is
    node 3's Eating timeout at step 9 (it would pass the regenerated token
    to node 2 while node 1's claim is on its way to it): under Timely911
    node 3 takes the claim first and, Eating, vetoes it."""
    from groupcheck.model.core import explore
    _, s, model = _from_f8_state(YieldClaim=True)
    f8c = explore(model, check_invariants=["AtMostOneToken"]).violation
    assert f8c is not None
    _, s1, timely = _from_f8_state(YieldClaim=True, Timely911=True)
    assert s1 == s
    for lab, t in f8c.trace[1:]:
        succ = [u for l2, u in timely.next(s) if l2 == lab]
        if not succ:
            break
        assert succ == [t]
        s = t
    else:
        pytest.fail("F8c is a behaviour under Timely911")
    assert lab == Label("EatingTimeout", (3,)) and len(f8c.trace) - 1 == 13, lab
    (m,) = [m for m in s.msgs911 if m["dest"] == 3]
    assert (m["orig"], m["status"]) == (1, "YES") and timely.CallWaiting(s, 3)
    assert any(l2 == lab for l2, _ in model.next(s))   # enabled without the assumption
    # and with it once node 3 has taken node 1's claim (Eating: a veto)
    u = timely.step(s, "911Received", 3, m)
    assert not timely.CallWaiting(u, 3) and any(l2 == lab for l2, _ in timely.next(u))
    assert {(x["orig"], x["status"], x["dest"]) for x in u.msgs911} >= {(1, "NO", 1)}


def _tlc_from_f8_state(tmp_path, yield_claim, **extra):
    """A module that extends MCRaincore with F8's state after step 13 as its
    Init, the cfg text (without invariants) and the explorer's model."""
    import shutil

    from groupcheck.model.tlc import TLCError, check_java, find_tla2tools
    from groupcheck.model.values import to_tla
    from groupcheck.spec import spec_root
    try:
        find_tla2tools()
        check_java()
    except TLCError as e:  # pragma: no cover
        pytest.skip(f"TLC cannot run here: {e}")
    for f in ("Raincore.tla", "MCRaincore.tla"):
        shutil.copy(spec_root() / "Raincore" / f, tmp_path)
    c, s0, model = _from_f8_state(YieldClaim=yield_claim, **extra)
    init = "\n".join(f"    /\\ {v} = {to_tla(getattr(s0, v))}" for v in s0._fields)
    (tmp_path / "F8FromRaincore.tla").write_text(
        f"---- MODULE F8FromRaincore ----\nEXTENDS MCRaincore\nF8Init ==\n{init}\n====\n")
    consts = "\n".join(f"    {k} = {str(v).upper() if isinstance(v, bool) else v}" for k, v in c.items())
    return f"CONSTANTS\n{consts}\nINIT F8Init\nNEXT Next\nCONSTRAINT Bounds\n", model


@pytest.mark.slow
@pytest.mark.parametrize("yield_claim", [False, True])
def test_tlc_from_the_f8_state(tmp_path, yield_claim):
    """TLC on the spec from the same state: AtMostOneToken violated at the
    explorer's depth (14), with YieldClaim and without (F8c)."""
    from groupcheck.model.core import explore
    from groupcheck.model.tlc import run_tlc
    cfg, model = _tlc_from_f8_state(tmp_path, yield_claim)
    bad = run_tlc(tmp_path, "F8FromRaincore", None, cfg_text=cfg + "INVARIANT TypeOK LegalStates AtMostOneToken\n",
                  timeout=300)
    v = explore(model, check_invariants=["TypeOK", "LegalStates", "AtMostOneToken"]).violation
    assert bad.outcome == "invariant" and bad.violated == "AtMostOneToken", bad.raw_output
    assert len(bad.counterexample) == v.depth


@pytest.mark.slow
@pytest.mark.parametrize("yield_claim,timely911", [(False, False), (True, True)])
def test_tlc_from_the_f8_state_whole_graph(tmp_path, yield_claim, timely911):
    """The whole graph from F8's state after step 13: TLC and the explorer
    count the same distinct states.  Without the fixes no invariant is
    checked (it is broken at depth 14); with YieldClaim and Timely911 TLC
    checks every safety invariant on every state and finds none broken.
    Measured: 460,480 states without YieldClaim (2026-11-24, explorer 28 s);
    2,970,903 with YieldClaim alone (explorer 190 s, not run here: its
    F8c is test_tlc_from_the_f8_state[True]); 2,886,409 with YieldClaim and Timely911
    (2026-11-25, the explorer with the invariants 635 s)."""
    from groupcheck.model.core import explore
    from groupcheck.model.tlc import run_tlc
    cfg, model = _tlc_from_f8_state(tmp_path, yield_claim, Timely911=timely911)
    if timely911:
        cfg += "INVARIANT TypeOK LegalStates AtMostOneToken SingleRegenerator ConsistentHistory\n"
    whole = run_tlc(tmp_path, "F8FromRaincore", None, cfg_text=cfg, timeout=900)
    r = explore(model, check_invariants=False)
    assert whole.outcome == "ok" and r.complete and whole.distinct_states == r.distinct_states, whole.raw_output


# F8d (docs/raincore.md): YieldClaim and Timely911 do not make three nodes
# safe either (TimelyYield3's constants, one node down at a time, MaxSeq 7).
# In the first 35 steps node 1's claim (5, along <<1, 2, 3>>) is passed on
# by node 2, recovered, while node 3's regenerated token (7) is on its way
# to node 2; node 2 accepts it and eats, the claim still live (node 3,
# Hungry, ahead of it, would veto it).  Then node 3 crashes, node 2 (the
# claim's current node) redirects the claim past it to node 1, and node 1,
# home with YES for its current claim and ring, regenerates while node 2
# eats: AtMostOneToken is false there.
PY_BREAK_SCRIPT = (
    ('Crash', 3, None),
    ('HungryTimeout', 1, None),
    ('Recover', 3, None),
    ('911Received', 1, {'orig': 3, 'cur': 3, 'seq': 0, 'status': 'YES'}),
    ('911Received', 3, {'orig': 3, 'cur': 1, 'seq': 0, 'status': 'NO'}),
    ('HungryTimeout', 2, None),
    ('911Received', 3, {'orig': 2, 'cur': 2, 'seq': 2, 'status': 'YES'}),
    ('Crash', 2, None),
    ('911Received', 1, {'orig': 2, 'cur': 3, 'seq': 2, 'status': 'YES'}),
    ('911DeliveryFailure', 1, {'orig': 2, 'cur': 1, 'seq': 2, 'status': 'YES'}),
    ('911DeliveryFailure', 1, {'orig': 1, 'cur': 1, 'seq': 1, 'status': 'YES'}),
    ('911Received', 3, {'orig': 1, 'cur': 1, 'seq': 1, 'status': 'YES'}),
    ('911Received', 1, {'orig': 1, 'cur': 3, 'seq': 1, 'status': 'YES'}),
    ('EatingTimeout', 1, None),
    ('TokenDeliveryFailure', 1, {'cur': 1, 'seq': 2}),
    ('Recover', 2, None),
    ('911Received', 3, {'orig': 2, 'cur': 2, 'seq': 0, 'status': 'YES'}),
    ('Crash', 3, None),
    ('TokenDeliveryFailure', 1, {'cur': 1, 'seq': 3}),
    ('Recover', 3, None),
    ('911Received', 1, {'orig': 3, 'cur': 3, 'seq': 0, 'status': 'YES'}),
    ('EatingTimeout', 1, None),
    ('911Received', 3, {'orig': 2, 'cur': 1, 'seq': 2, 'status': 'YES'}),
    ('TokenReceived', 3, {'cur': 1, 'seq': 5}),
    ('EatingTimeout', 3, None),
    ('TokenLoss', None, {'cur': 3, 'seq': 6}),
    ('HungryTimeout', 3, None),
    ('911Received', 1, {'orig': 2, 'cur': 3, 'seq': 2, 'status': 'YES'}),
    ('HungryTimeout', 1, None),
    ('911Received', 2, {'orig': 3, 'cur': 3, 'seq': 6, 'status': 'YES'}),
    ('911Received', 1, {'orig': 3, 'cur': 2, 'seq': 6, 'status': 'YES'}),
    ('911Received', 3, {'orig': 3, 'cur': 1, 'seq': 6, 'status': 'YES'}),
    ('EatingTimeout', 3, None),
    ('911Received', 2, {'orig': 1, 'cur': 1, 'seq': 5, 'status': 'YES'}),
    ('TokenReceived', 2, {'cur': 3, 'seq': 7}),
)


F8D_SCRIPT = PY_BREAK_SCRIPT + (
    ('Crash', 3, None),
    ('911DeliveryFailure', 2, {'orig': 1, 'cur': 2, 'seq': 5, 'status': 'YES'}),
    ('911Received', 1, {'orig': 1, 'cur': 2, 'seq': 5, 'status': 'YES'}),
)


# F8e: the same 35 steps, then node 3 crashes and recovers instead
# of staying down.  Recovered, it claims and vetoes with 0 (NeutralRecovery)
# and no longer knows it sent the token numbered 7: node 1's claim (5) reaches
# it, passes, and comes home YES.  No delivery failure: a node that judged
# the claim again on a redirect (the first idea for F8d) would not stop it.
# The explorer's first violation, breadth first, with the redirect judged
# again (an experiment, not kept: 7,233,442 states, depth 39).
F8E_SCRIPT = PY_BREAK_SCRIPT + (
    ('Crash', 3, None),
    ('Recover', 3, None),
    ('911Received', 3, {'orig': 1, 'cur': 2, 'seq': 5, 'status': 'YES'}),
    ('911Received', 1, {'orig': 1, 'cur': 3, 'seq': 5, 'status': 'YES'}),
)


def _z3_replays(enc, beh, prop: str, last: int = 1) -> list[int]:
    """Every step of behaviour ``beh`` is an edge of ``enc``'s z3 relation
    (the same action instance); returns the indices, among the last
    ``last`` states, of those that break the encoding's ``prop``."""
    S, T = enc.fresh("s"), enc.fresh("t")
    for (_, s), (lab, t) in zip(beh, beh[1:]):
        assert _in_relation(enc, s, [lab], t, S, T), lab
    out = []
    for i in range(len(beh) - last, len(beh)):
        sol = z3.Solver()
        sol.add(value_of(enc, S, beh[i][1]), z3.Not(getattr(enc, prop)(S)))
        if sol.check() == z3.sat:
            out.append(i)
    return out


def _f8d_behaviour(script=F8D_SCRIPT):
    """TimelyYield3's constants without the bounds, and the script's states:
    every state is within TimelyYield3's bounds with one node down at a time
    and MaxSeq 7 (where the explorer met it)."""
    c, model, beh = _f8_behaviour(script=script, YieldClaim=True, Timely911=True)
    assert c == {k: v for k, v in manifest_constants("TimelyYield3").items()
                 if k not in ("MaxSeq", "Max911", "MaxDown")}
    bounded = manifest_constants("TimelyYield3")
    bounded.update(MaxDown=1, MaxSeq=7)
    from groupcheck.model.raincore import RaincoreModel
    within = RaincoreModel(bounded)
    assert all(within.constraint(s) for _, s in beh)
    return c, model, beh


@pytest.mark.parametrize("script,down", [(F8D_SCRIPT, True), (F8E_SCRIPT, False)], ids=["F8d", "F8e"])
def test_yield_claim_and_timely911_still_allow_two_tokens(script, down):
    """F8d and F8e whole: every invariant holds up to the last step, where
    node 1 regenerates while node 2 eats the token node 3 sent it
    (AtMostOneToken broken, SingleRegenerator not: node 2 accepted its
    token); node 3 is down (F8d) or recovered (F8e).  Every step is an edge
    of the z3 relation of the same action instance, and the last state
    breaks the encoding's AtMostOneToken."""
    c, model, beh = _f8d_behaviour(script)
    inv = model.invariants
    broken = [(i, sorted(k for k, f in inv.items() if not f(s))) for i, (_, s) in enumerate(beh)]
    assert [b for b in broken if b[1]] == [(len(script), ["AtMostOneToken"])]
    last = beh[-1][1]
    assert last.tokenState == ("Eating", "Eating", "Starving")
    assert last.status == (("Up", "Up", "Down") if down else ("Up", "Up", "Up")) and last.recovered[2] != down
    assert [(t["seq"], t["nodelist"]) for t in last.token[:2]] == [(5, (1, 3)), (7, (1, 3, 2))]
    enc = RaincoreEncoding(c, variant="TimelyYield3", expect_cti=False)
    assert _z3_replays(enc, beh, "AtMostOneToken") == [len(script)]


@pytest.mark.slow
@pytest.mark.parametrize("script", [F8D_SCRIPT, F8E_SCRIPT], ids=["F8d", "F8e"])
def test_tlc_finds_f8d_and_f8e(tmp_path, script):
    """TLC on the spec replays F8d and F8e (TimelyYield3's constants, no
    bounds) and reports AtMostOneToken violated at depth 39 and 40."""
    c, _, _ = _f8d_behaviour(script)
    r = _tlc_replay(tmp_path, script, c)
    assert r.outcome == "invariant" and r.violated == "AtMostOneToken", r.raw_output
    assert len(r.counterexample) == len(script) + 1



# F9: with two tokens the views split too.  From F8's last state
# (nodes 1 and 2 Eating, node 3 down) node 1 passes its token, takes node 2's
# higher one and passes that; node 2 crashes; node 1 gets the delivery
# failures of both tokens it sent: the newer leaves it alone (it commits <<1>>
# at index 3), the older one, still in flight, is resent to node 3 along
# <<1, 3>>, and nodes 1 and 3 go round until node 3 commits <<1, 3>> at index
# 3.  ConsistentHistory breaks under the seed's fixes (FixedRing3's constants;
# 45 steps from Init, MaxSeq 15, two 911s in flight, one node down at a time)
# and, from F8d's state, with YieldClaim and Timely911 too (61 steps, MaxSeq
# 12).  Each is the explorer's shortest from that two-token state.
def _round(first: int, seqs) -> tuple:
    """Nodes 1 and 3 pass the token back and forth along <<1, 3>>: each
    takes the token numbered k (from the other) and passes it on, starting
    with node ``first``; the last one only takes it."""
    out, n = [], first
    for i, k in enumerate(seqs):
        if i:
            out.append(('EatingTimeout', 4 - n, None))
        out.append(('TokenReceived', n, {'cur': 4 - n, 'seq': k}))
        n = 4 - n
    return tuple(out)


_F9_TAIL = (
    ('EatingTimeout', 1, None),                            # node 1's token, 2 inserted, to node 2
    ('EatingTimeout', 2, None),                            # node 2's, to node 1
    ('TokenReceived', 1, {'cur': 2, 'dest': 1}),           # node 1 takes the higher one
    ('EatingTimeout', 1, None),                            # and sends it to node 3 (down)
    ('TokenDeliveryFailure', 1, {'cur': 1, 'dest': 3}),    # resent to node 2
    ('Recover', 3, None),
    ('Crash', 2, None),
)
F9_SCRIPT = F8_SCRIPT + _F9_TAIL + (
    ('TokenDeliveryFailure', 1, {'cur': 1, 'seq': 14}),    # alone: commits <<1>> at index 3
    ('TokenDeliveryFailure', 1, {'cur': 1, 'seq': 10}),    # the older token: resent to node 3
) + _round(3, range(11, 16))
F9D_SCRIPT = F8D_SCRIPT + _F9_TAIL + (
    ('TokenDeliveryFailure', 1, {'cur': 1, 'seq': 10}),
    ('TokenDeliveryFailure', 1, {'cur': 1, 'seq': 6}),
    ('TokenReceived', 3, {'cur': 1, 'seq': 7}),            # dropped: node 3's lastToken is 7
    ('HungryTimeout', 1, None),
    ('911Received', 3, {'orig': 1, 'cur': 1, 'seq': 7, 'status': 'YES'}),
    ('911Received', 1, {'orig': 1, 'cur': 3, 'seq': 7, 'status': 'YES'}),
    ('EatingTimeout', 1, None),
) + _round(3, range(8, 13))


@pytest.mark.slow
@pytest.mark.parametrize("script,extra", [(F9_SCRIPT, {}), (F9D_SCRIPT, {"YieldClaim": True, "Timely911": True})],
                         ids=["F9", "F9d"])
def test_two_tokens_split_the_views(script, extra):
    """F9 and F9d in the Python model: ConsistentHistory holds up to the
    last step and breaks there (node 1 committed <<1>> at index 3, node 3
    <<1, 3>>); every step is an edge of the z3 relation of the same action
    instance and the last state breaks the encoding's ConsistentHistory."""
    c, model, beh = _f8_behaviour(script=script, **extra)
    ch = model.invariants["ConsistentHistory"]
    assert [i for i, (_, s) in enumerate(beh) if not ch(s)] == [len(script)]
    last = beh[-1][1]
    assert last.globalView[0][2] == (1,) and last.globalView[2][2] == (1, 3)
    enc = RaincoreEncoding(c, variant="F9", expect_cti=False, properties=("ConsistentHistory",))
    assert _z3_replays(enc, beh, "ConsistentHistory", last=2) == [len(script)]


@pytest.mark.parametrize("script,extra", [(F9_SCRIPT, {}), (F9D_SCRIPT, {"YieldClaim": True, "Timely911": True})],
                         ids=["F9", "F9d"])
def test_tlc_finds_f9(tmp_path, script, extra):
    """TLC on the spec replays F9 and F9d: ConsistentHistory violated at the
    script's last step (depth 46 and 62)."""
    c, _, _ = _f8_behaviour(script=(), **extra)
    r = _tlc_replay(tmp_path, script, c, invariants="TypeOK LegalStates ConsistentHistory")
    assert r.outcome == "invariant" and r.violated == "ConsistentHistory", r.raw_output
    assert len(r.counterexample) == len(script) + 1
