"""model/raincore.py: per-transition tests against the seed's eight events
(as read in docs/raincore.md), the environment, the invariants, and the
explorer against the pinned manifest figures for the small models."""

from __future__ import annotations

import pytest

from groupcheck.model import manifest
from groupcheck.model.core import Label, explore
from groupcheck.model.link import build_model
from groupcheck.model.raincore import NO_TOKEN, NULL_VIEW, Msg911, RaincoreModel, Token
from model_helpers import edges

FAITHFUL = dict(TimelyTimeouts=False, StableFounder=False, NeutralRecovery=False, FreshClaim=False,
                FreshView=False)
FIXED = dict(TimelyTimeouts=True, StableFounder=True, NeutralRecovery=True, FreshClaim=True, FreshView=True)


def model(n=3, init=3, seq=3, cold=False, **variant) -> RaincoreModel:
    return RaincoreModel(dict(N=n, InitSize=init, InitSeq=seq, ColdStart=cold, **{**FAITHFUL, **variant}))


def start(m):
    (s,) = list(m.init())
    return s


def only(msgs):
    (x,) = msgs
    return x


def deliver_token(m, s):
    msg = only(s.tokenMsgs)
    return m.step(s, "TokenReceived", msg["dest"], msg)


def pass_round(m, s, hops):
    """``hops`` token passes: receive, then eat and send."""
    for _ in range(hops):
        s = deliver_token(m, s)
        holder = next(n for n in m.Node if s.tokenState[n - 1] == "Eating")
        s = m.step(s, "EatingTimeout", holder)
    return s


# --- initial states ----------------------------------------------------------------


def test_steady_init_is_a_ring_in_agreement():
    m = model()
    s = start(m)
    assert s.viewState == ("Agreement",) * 3 and s.tokenState == ("Hungry",) * 3
    assert s.globalView == (((1, 2, 3),),) * 3
    assert [t["seq"] for t in s.lastToken] == [1, 2, 3]
    assert s.tokenMsgs == {Token(3, (1, 2, 3), 3, 1, 1)}
    assert all(inv(s) for inv in m.invariants.values())


def test_cold_start_founder_initialization():
    m = model(cold=True)
    s = start(m)
    assert s.status == ("Off", "Up", "Up") and s.tokenMsgs == frozenset()
    labels = {lab for lab, _ in m.next(s)}
    assert Label("Initialization", (1,)) in labels
    assert not any(lab.action in ("Initialization", "TokenReceived") and lab != Label("Initialization", (1,))
                   for lab in labels)
    s = m.step(s, "Initialization", 1)
    assert s.status[0] == "Up" and s.viewState[0] == "Chaos" and s.tokenState[0] == "Hungry"
    assert s.tokenMsgs == {Token(3, (1, 2, 3), 1, 2, 0)} and s.lastToken[0]["seq"] == 3
    with pytest.raises(ValueError):
        m.step(s, "Initialization", 1)  # only once


# --- 2. Token Received ----------------------------------------------------------------


def test_token_accepted_agreement_stays_on_same_nodelist():
    m = model()
    s = deliver_token(m, start(m))
    assert s.tokenState[0] == "Eating" and s.viewState[0] == "Agreement"
    assert s.token[0] == Token(3, (1, 2, 3), 1, 1, 1)  # cur updated to the holder
    assert s.tokenMsgs == frozenset()


def test_stale_token_is_dropped():
    m = model()
    s = start(m)
    stale = Token(1, (1, 2, 3), 3, 1, 1)  # seq 1 <= lastTokenSeq of node 1
    s = s._replace(tokenMsgs=frozenset({stale}))
    t = m.step(s, "TokenReceived", 1, stale)
    assert t == s._replace(tokenMsgs=frozenset())


def test_token_to_an_eating_node_is_dropped():
    m = model()
    s = deliver_token(m, start(m))
    extra = Token(9, (1, 2, 3), 2, 1, 1)
    s = s._replace(tokenMsgs=frozenset({extra}))
    t = m.step(s, "TokenReceived", 1, extra)
    assert t.token == s.token and t.tokenMsgs == frozenset()


def test_view_state_machine_chaos_reserve_agreement():
    """Figure 9 and docs I1/I3: compare with the old localView, then take the
    token's nodelist; Chaos -> Reserve reserves a NULL slot and stamps the
    token; Reserve -> Agreement commits into that slot."""
    m = model()
    s = start(m)
    s = s._replace(viewState=("Chaos",) + s.viewState[1:], localView=((1, 2),) + s.localView[1:])
    s = deliver_token(m, s)  # (1,2) != (1,2,3): stays Chaos, localView becomes (1,2,3)
    assert s.viewState[0] == "Chaos" and s.localView[0] == (1, 2, 3) and s.globalView[0] == ((1, 2, 3),)
    s = m.step(s, "EatingTimeout", 1)
    s = pass_round(m, s, 2)  # nodes 2, 3 in Agreement and same nodelist: unchanged
    s = deliver_token(m, s)
    assert s.viewState[0] == "Reserve" and s.globalView[0] == ((1, 2, 3), NULL_VIEW) and s.token[0]["gvn"] == 2
    s = m.step(s, "EatingTimeout", 1)
    s = deliver_token(m, s)  # node 2: token gvn 2 > its 1: pads, stays Agreement
    assert s.viewState[1] == "Agreement" and s.globalView[1] == ((1, 2, 3), NULL_VIEW)
    s = m.step(s, "EatingTimeout", 2)
    s = pass_round(m, s, 1)
    s = deliver_token(m, s)
    assert s.viewState[0] == "Agreement" and s.globalView[0] == ((1, 2, 3), (1, 2, 3))


def test_reserve_with_different_nodelist_goes_back_to_chaos_leaving_null():
    m = model()
    s = start(m)
    s = s._replace(viewState=("Reserve",) + s.viewState[1:], localView=((1, 2),) + s.localView[1:],
                   globalView=(((1, 2, 3), NULL_VIEW),) + s.globalView[1:])
    s = deliver_token(m, s)
    assert s.viewState[0] == "Chaos" and s.globalView[0] == ((1, 2, 3), NULL_VIEW)


# --- 3. 911 Received ----------------------------------------------------------------------


def hungry_timeout_911(m, s, n):
    s = m.step(s, "HungryTimeout", n)
    return s, next(x for x in s.msgs911 if x["orig"] == n and x["cur"] == n)


def test_911_is_forwarded_or_vetoed():
    m = model()
    s = start(m)
    s = s._replace(tokenMsgs=frozenset())  # the token is lost
    s, call = hungry_timeout_911(m, s, 2)  # claim 2, to node 3
    assert call == Msg911(2, 2, 3, (1, 2, 3), 2, "YES") and s.viewState[1] == "Chaos"
    t = m.step(s, "911Received", 3, call)  # node 3 has seq 3 > 2: veto, back to the originator
    assert only(t.msgs911) == Msg911(2, 3, 2, (1, 2, 3), 2, "NO")
    s, call1 = hungry_timeout_911(m, s._replace(msgs911=frozenset()), 1)
    assert call1 == Msg911(1, 1, 2, (1, 2, 3), 1, "YES")
    s, call3 = hungry_timeout_911(m, s._replace(msgs911=frozenset()), 3)
    t = m.step(s, "911Received", 1, call3)  # node 1 has seq 1 < 3: forwards along the nodelist
    assert only(t.msgs911) == Msg911(3, 1, 2, (1, 2, 3), 3, "YES")


def test_veto_on_equal_seq_by_higher_id_and_when_eating():
    m = model()
    s = start(m)._replace(tokenMsgs=frozenset())
    s = s._replace(lastToken=tuple(t.set("seq", 5) for t in s.lastToken))
    claim = Msg911(1, 1, 2, (1, 2, 3), 5, "YES")
    t = m.step(s._replace(msgs911=frozenset({claim})), "911Received", 2, claim)
    assert only(t.msgs911)["status"] == "NO"  # same seq, 2 > 1
    claim3 = Msg911(3, 1, 2, (1, 2, 3), 5, "YES")
    t = m.step(s._replace(msgs911=frozenset({claim3})), "911Received", 2, claim3)
    assert only(t.msgs911)["status"] == "YES"  # same seq, 2 < 3: forwarded
    eating = s._replace(tokenState=("Hungry", "Eating", "Hungry"),
                        token=(NO_TOKEN, Token(5, (1, 2, 3), 2, 2, 1), NO_TOKEN))
    claim9 = Msg911(3, 1, 2, (1, 2, 3), 9, "YES")
    t = m.step(eating._replace(msgs911=frozenset({claim9})), "911Received", 2, claim9)
    assert only(t.msgs911)["status"] == "NO"  # the token is not lost


def test_own_yes_regenerates_own_no_is_dropped():
    m = model()
    s = start(m)._replace(tokenMsgs=frozenset())
    s, call = hungry_timeout_911(m, s, 3)
    s = m.step(s, "911Received", 1, call)
    s = m.step(s, "911Received", 2, only(s.msgs911))
    back = only(s.msgs911)
    assert back["dest"] == 3 and back["status"] == "YES"
    t = m.step(s, "911Received", 3, back)
    assert t.tokenState[2] == "Eating" and t.token[2] == s.lastToken[2].set("cur", 3)
    assert m.SingleRegenerator(t) and m.AtMostOneToken(t)
    no = back.set("status", "NO")
    t = m.step(s._replace(msgs911=frozenset({no})), "911Received", 3, no)
    assert t.tokenState[2] == "Starving" and t.msgs911 == frozenset()


def test_911_from_a_non_member_is_a_join_request():
    m = model(n=3, init=2, seq=2)
    s = m.step(start(m), "Join", 3)
    call = only(s.msgs911)
    assert call == Msg911(3, 3, 1, (1, 2), 0, "YES")
    s = m.step(s, "911Received", 1, call)
    assert s.newNodes[0] == {3} and s.msgs911 == frozenset()
    s = deliver_token(m, s)
    s = m.step(s, "EatingTimeout", 1)  # adds 3 right after 1, Chaos, localView unchanged
    assert only(s.tokenMsgs) == Token(3, (1, 3, 2), 1, 3, 1)
    assert s.viewState[0] == "Chaos" and s.localView[0] == (1, 2) and s.newNodes[0] == frozenset()
    s = deliver_token(m, s)
    assert s.tokenState[2] == "Eating" and s.viewState[2] == "Chaos" and s.localView[2] == (1, 3, 2)


# --- 4./5. delivery failures ------------------------------------------------------------


def test_token_delivery_failure_removes_the_dead_node():
    m = model()
    s = m.step(start(m), "Crash", 1)
    assert s.tokenMsgs == {Token(3, (1, 2, 3), 3, 1, 1)}  # sent by 3, not by the crashed node
    s = m.step(s, "TokenDeliveryFailure", 3, only(s.tokenMsgs))
    assert only(s.tokenMsgs) == Token(4, (2, 3), 3, 2, 1)
    assert s.lastToken[2] == Token(4, (2, 3), 3, 2, 1) and s.localView[2] == (2, 3)
    assert s.viewState[2] == "Chaos" and s.tokenState[2] == "Hungry"


def test_token_delivery_failure_alone_commits_at_once():
    m = model(n=2, init=2, seq=2)
    s = m.step(start(m), "Crash", 1)
    s = m.step(s, "TokenDeliveryFailure", 2, only(s.tokenMsgs))
    assert s.tokenMsgs == frozenset() and s.tokenState[1] == "Eating" and s.viewState[1] == "Agreement"
    assert s.globalView[1] == ((1, 2), (2,)) and s.token[1] == Token(3, (2,), 2, 2, 2) == s.lastToken[1]
    t = m.step(s, "EatingTimeout", 2)  # alone: keeps eating
    assert t == s


def test_911_delivery_failure_skips_the_dead_node():
    m = model()
    s = start(m)._replace(tokenMsgs=frozenset())
    s = m.step(s, "Crash", 3)
    s, call = hungry_timeout_911(m, s, 2)
    s = m.step(s, "911DeliveryFailure", 2, call)
    assert only(s.msgs911) == call.set("dest", 1)


def test_delivery_failure_needs_a_down_destination():
    m = model()
    s = start(m)
    with pytest.raises(ValueError):
        m.step(s, "TokenDeliveryFailure", 3, only(s.tokenMsgs))


# --- 6.-8. timeouts ----------------------------------------------------------------------------


def test_timely_timeouts_wait_while_a_token_lists_the_node():
    s_f = start(model())
    assert any(lab.action == "HungryTimeout" for lab, _ in model().next(s_f))
    m = model(TimelyTimeouts=True)
    s = start(m)
    assert not any(lab.action in ("HungryTimeout", "StarvingTimeout") for lab, _ in m.next(s))
    s = m.step(s, "TokenLoss", only(s.tokenMsgs))
    assert {lab for lab, _ in m.next(s) if lab.action == "HungryTimeout"} == {
        Label("HungryTimeout", (n,)) for n in (1, 2, 3)}


def test_starving_timeout_resends_the_same_claim():
    m = model()
    s = start(m)._replace(tokenMsgs=frozenset())
    s, call = hungry_timeout_911(m, s, 1)
    s = m.step(s._replace(msgs911=frozenset()), "StarvingTimeout", 1)
    assert only(s.msgs911) == call and s.tokenState[0] == "Starving"


# --- environment and fixes -------------------------------------------------------------------


def test_crash_and_recovery_keep_local_state():
    m = model()
    s = pass_round(m, start(m), 1)  # node 1 sent 4 to node 2
    s = m.step(s, "Crash", 1)
    assert s.tokenMsgs == frozenset()  # its undelivered token is lost with it
    kept = (s.globalView[0], s.lastToken[0], s.localView[0])
    s = m.step(s, "Recover", 1)
    assert (s.globalView[0], s.lastToken[0], s.localView[0]) == kept
    assert s.tokenState[0] == "Starving" and s.viewState[0] == "Chaos"
    assert only(s.msgs911) == Msg911(1, 1, 2, (1, 2, 3), 4, "YES")


def test_neutral_recovery_claims_zero_and_cannot_regenerate():
    m = model(NeutralRecovery=True)
    s = start(m)._replace(tokenMsgs=frozenset())
    s = m.step(m.step(s, "Crash", 3), "Recover", 3)
    call = only(s.msgs911)
    assert call["seq"] == 0 and s.recovered[2]
    assert not m.Regenerate(s, 3, call.update({"dest": 3}))


def test_fresh_claim_ignores_an_old_yes():
    m = model(FreshClaim=True)
    s = start(m)._replace(tokenMsgs=frozenset())
    old = Msg911(3, 2, 3, (1, 2, 3), 1, "YES")  # claim with seq 1; node 3 now claims 3
    s = s._replace(tokenState=("Hungry", "Hungry", "Starving"), msgs911=frozenset({old}))
    assert m.step(s, "911Received", 3, old).tokenState[2] == "Starving"
    assert model().step(s, "911Received", 3, old).tokenState[2] == "Eating"


def test_fresh_view_recovered_node_does_not_match_its_old_localview():
    m = model(NeutralRecovery=True, FreshView=True)
    s = m.step(m.step(start(m), "Crash", 2), "Recover", 2)
    tok = Token(9, (1, 2, 3), 1, 2, 1)
    s = s._replace(tokenMsgs=frozenset({tok}), msgs911=frozenset())
    t = m.step(s, "TokenReceived", 2, tok)
    assert t.viewState[1] == "Chaos" and not t.recovered[1]
    t2 = model(NeutralRecovery=True).step(s, "TokenReceived", 2, tok)
    assert t2.viewState[1] == "Reserve"  # without the fix: reserves on a stale view
    with pytest.raises(ValueError):
        RaincoreModel(dict(N=3, InitSize=3, InitSeq=3, ColdStart=False, FreshView=True))


def claim_of(s, n):
    return next(x for x in s.msgs911 if x["orig"] == n and x["cur"] == n)


def joiner_reserves_then_token_lost(m):
    """Ring 1,2 and a joining node 3 (the shape of the campaign's run 363):
    3 joins, takes the token twice, reserves slot 2 and passes the token
    (seq 7, gvn 2) on; the token is lost.  Node 1's lastToken is seq 6, gvn 1."""
    s = m.step(start(m), "Join", 3)
    s = m.step(s, "911Received", 1, only(s.msgs911))       # a join request
    s = pass_round(m, s, 5)                                  # 1 adds 3: T3 1->3 ... T7 3->2
    assert s.viewState[2] == "Reserve" and s.globalView[2] == (NULL_VIEW, NULL_VIEW)
    t7 = only(s.tokenMsgs)
    assert (t7["seq"], t7["gvn"], t7["dest"]) == (7, 2, 2) and s.lastToken[0]["seq"] == 6
    return m.step(s, "TokenLoss", t7)


def test_f7_stale_regeneration_splits_the_history_without_token_ring_claim():
    """F7 (docs/raincore.md) scripted with a real Join, every earlier fix on:
    node 1's claim travels its lastGlobalView <<1,2>>, so the joiner 3 (which
    sent a later token) never vetoes it; 1 regenerates twice from its older
    token, 3 reserves again at slot 3 while 1 and 2 reserve slot 2, and
    node 1, left alone, commits <<1>> at index 3 where 3 has <<1,3,2>>."""
    m = model(n=3, init=2, seq=2, **FIXED)
    s = joiner_reserves_then_token_lost(m)
    s, c3 = hungry_timeout_911(m, s, 3)                     # 3 gives up its slot (Chaos)
    assert c3["dest"] == 1 and c3["nodelist"] == (1, 2)     # along the configured ring
    s = m.step(s, "911Received", 1, c3)
    assert s.newNodes[0] == {3} and s.msgs911 == frozenset()  # taken as a join request
    for _ in range(2):                                       # 1 regenerates T6, then T7
        s, c1 = hungry_timeout_911(m, s, 1)
        assert c1["nodelist"] == (1, 2)                      # 3 is not asked
        s = m.step(s, "911Received", 2, c1)
        s = m.step(s, "911Received", 1, only(s.msgs911))
        assert s.tokenState[0] == "Eating" and s.token[0]["gvn"] == 1
        s = m.step(s, "EatingTimeout", 1)
        if only(s.tokenMsgs)["seq"] == 7:
            s = deliver_token(m, s)                          # 7 <= 7: node 3 drops it
            assert s.tokenMsgs == frozenset() and s.tokenState[2] == "Starving"
    s = pass_round(m, s, 5)                                  # T8 .. T13: reserve, then commit
    s = deliver_token(m, s)                                  # T13 at node 1
    assert s.globalView[2] == (NULL_VIEW, NULL_VIEW, (1, 3, 2))
    assert s.globalView[0] == s.globalView[1] == ((1, 2), (1, 3, 2))
    assert all(inv(s) for inv in m.invariants.values())
    s = m.step(m.step(s, "Crash", 2), "Crash", 3)
    s = m.step(s, "EatingTimeout", 1)
    s = m.step(s, "TokenDeliveryFailure", 1, only(s.tokenMsgs))
    s = m.step(s, "TokenDeliveryFailure", 1, only(s.tokenMsgs))
    assert s.globalView[0] == ((1, 2), (1, 3, 2), (1,))
    assert not m.ConsistentHistory(s)


def test_token_ring_claim_lets_the_joiner_veto_and_regenerate():
    m = model(n=3, init=2, seq=2, **FIXED, TokenRingClaim=True)
    s = joiner_reserves_then_token_lost(m)
    s1, c1 = hungry_timeout_911(m, s, 1)
    assert c1 == Msg911(1, 1, 3, (1, 3, 2), 6, "YES")       # along lastToken's nodelist
    s1 = m.step(s1, "911Received", 3, c1)
    assert only(s1.msgs911) == Msg911(1, 3, 1, (1, 3, 2), 6, "NO")  # 3 sent seq 7: veto
    s3, c3 = hungry_timeout_911(m, s, 3)
    assert c3 == Msg911(3, 3, 2, (1, 3, 2), 7, "YES")
    s3 = m.step(s3, "911Received", 2, c3)                    # 3 is not on <<1,2>> but claims 7 > 5
    s3 = m.step(s3, "911Received", 1, only(s3.msgs911))
    s3 = m.step(s3, "911Received", 3, only(s3.msgs911))
    assert s3.tokenState[2] == "Eating" and s3.token[2]["gvn"] == 2  # the newest token
    # node 1 also queues 3 as a join request; without the fix that is all it does
    assert s3.newNodes[0] == {3} and s3.newNodes[1] == {3}
    at1 = c3.update({"cur": 2, "dest": 1})
    s0 = s._replace(tokenState=s3.tokenState[:2] + ("Starving",), msgs911=frozenset({at1}))
    t = model(n=3, init=2, seq=2, **FIXED).step(s0, "911Received", 1, at1)
    assert t.msgs911 == frozenset() and t.newNodes[0] == {3}
    # a non-member's claim not above the receiver's own is only a join request
    low = at1.set("seq", 6)
    t = m.step(s0._replace(msgs911=frozenset({low})), "911Received", 1, low)
    assert t.msgs911 == frozenset() and t.newNodes[0] == {3}
    with pytest.raises(ValueError):
        RaincoreModel(dict(N=3, InitSize=3, InitSeq=3, ColdStart=False, TokenRingClaim=True))


# --- invariants --------------------------------------------------------------------------------


def test_invariants_can_fail():
    m = model()
    s = start(m)
    two = s._replace(tokenState=("Eating", "Eating", "Hungry"),
                     token=(Token(3, (1, 2, 3), 1, 1, 1), Token(3, (1, 2, 3), 2, 2, 1), NO_TOKEN),
                     tokenMsgs=frozenset())
    assert not m.AtMostOneToken(two)
    assert not m.LegalStates(s._replace(tokenState=("Starving", "Hungry", "Hungry")))
    assert not m.ConsistentHistory(s._replace(globalView=(((1, 2, 3), (1, 2)), ((1, 2, 3), (2, 3)), ((1, 2, 3),))))
    assert m.ConsistentHistory(s._replace(globalView=(((1, 2, 3), NULL_VIEW), ((1, 2, 3), (2, 3)), ((1, 2, 3),))))
    assert not m.TypeOK(s._replace(tokenState=("Eating", "Hungry", "Hungry")))  # Eating without a token


def test_next_and_step_agree():
    """Every label ``next`` yields names an action instance that ``step``
    reproduces, over the first few thousand states of the faithful model."""
    m = model()
    for s, lab, t in edges(m, 3000):
        assert m.step(s, lab.action, *lab.params) == t, lab


# --- explorer vs manifest ------------------------------------------------------------------


def entries():
    return {e.name: e for e in manifest.load("raincore")}


def test_joiner_agrees_within_live_join_agree_bound():
    """LiveJoinAgree3's bound (MaxSeq 11) holds the joiner's whole admission,
    so its Liveness check is not vacuous for a joiner (a behaviour cut by the
    bound is not a fair one): 3 joins by 911 (I14), node 1 adds it, and the
    rounds of <<1,3,2>> take every node to Agreement on it."""
    m = build_model(entries()["LiveJoinAgree3"])
    s = m.step(start(m), "Join", 3)
    s = m.step(s, "911Received", 1, only(s.msgs911))
    s = pass_round(m, s, 9)                                  # T2 at 1 ... T10 2->1
    s = deliver_token(m, s)                                  # T11 at 1
    assert m.constraint(s) and m.Agreed(s)
    assert m.UpNodes(s) == [1, 2, 3] and {m.LastGlobalView(s, n) for n in (1, 2, 3)} == {(1, 3, 2)}
    assert s.token[0]["seq"] == 11 and all(inv(s) for inv in m.invariants.values())


@pytest.mark.parametrize("name", ["Live3", "Live4", "LiveJoin3",
                                  pytest.param("LiveJoinAgree3", marks=pytest.mark.slow)])
def test_explorer_count_matches_tlc(name):
    e = entries()[name]
    r = explore(build_model(e), check_invariants=True)
    assert r.violation is None and r.complete
    assert r.distinct_states == e.distinct_states


@pytest.mark.parametrize("name", ["Faithful3", "Faithful4", "Timely3", "NoNeutral3", "NoTokenRing2",
                                  pytest.param("ColdStaleView3", marks=pytest.mark.slow),
                                  pytest.param("NoFresh3", marks=pytest.mark.slow)])
def test_explorer_finds_the_violation_at_tlc_depth(name):
    e = entries()[name]
    # core.explore checks invariants on successors outside the CONSTRAINT, as TLC
    # does, so the depth of the first violation is TLC's
    r = explore(build_model(e), check_invariants=e.parsed_cfg().invariants)
    assert r.violation is not None
    assert r.violation.invariant == e.expected
    assert r.violation.depth == e.extra["depth"]
