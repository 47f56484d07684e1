"""The Raincore layer (impl/raincore.py), its wire format and its simulator.

Per-event tests of the eight events and the environment's actions, each
against the decision docs/raincore.md and the spec take; Hypothesis
round-trip and garbage tests of the TOKEN and 911 frames; determinism and
registry round trip of the simulator.
"""

import struct

import pytest
from hypothesis import given, settings, strategies as st

from groupcheck.conformance.replay import registry as protocols
from groupcheck.conformance.replay.raincore import replay_records
from groupcheck.impl import codec
from groupcheck.impl.events import CancelTimer, Receive, Send, SetTimer, TimerFired, Trace, Up, ViewChange
from groupcheck.impl.raincore import (NO_TOKEN, Crash, DeliveryFailed, Join, Msg911, Raincore, Recover, Start,
                                      TokenMsg)
from groupcheck.impl.stacks.raincore import T_911, T_TOKEN
from groupcheck.impl.faults import FaultPlan
from groupcheck.impl.sim_raincore import RaincoreConfig, simulate
from codec_helpers import canonical_or_refused, cut_and_extended_refused

RING = (1, 2, 3)


def node(n, ring=RING, **kw):
    return Raincore(n, ring, init_seq=kw.pop("init_seq", 10), **kw)


def sends(effs):
    return [e.msg for e in effs if isinstance(e, Send)]


def traces(effs):
    return [e.event for e in effs if isinstance(e, Trace)]


def timers(effs):
    return [e.name for e in effs if isinstance(e, SetTimer)]


def tok(seq, nl=RING, cur=3, dest=1, gvn=1):
    return TokenMsg(seq, tuple(nl), cur, dest, gvn)


# ---------------------------------------------------------------- initial states

def test_steady_ring_start_is_the_spec_init():
    a = node(1)
    assert (a.status, a.viewState, a.tokenState) == ("Up", "Agreement", "Hungry")
    assert a.globalView == [RING] and a.localView == RING
    assert a.lastToken == TokenMsg(8, RING, 1, 2, 1)        # node i sent InitSeq - (InitSize - i)
    effs = a.handle(Start(), 0.0)
    assert timers(effs) == ["hungry"] and not traces(effs) and not sends(effs)


def test_cold_start_founder_initialises_and_sends_the_token():
    a, b = node(1, cold_start=True), node(2, cold_start=True)
    assert a.status == "Off" and (b.status, b.viewState, b.globalView) == ("Up", "Chaos", [])
    effs = a.handle(Start(), 0.0)
    assert [t.name for t in traces(effs)] == ["Initialization"]
    assert sends(effs) == [TokenMsg(10, RING, 1, 2, 0)]
    assert (a.status, a.viewState, a.tokenState) == ("Up", "Chaos", "Hungry")


def test_a_ring_of_more_than_256_nodes_starts_like_a_small_one():
    # a nodelist on the wire holds up to tens of thousands of nodes
    ring = tuple(range(1, 301))
    last = node(300, ring, init_seq=400)
    assert (last.status, last.viewState, last.tokenState) == ("Up", "Agreement", "Hungry")
    assert last.lastToken == TokenMsg(400, ring, 300, 1, 1) and last.globalView == [ring]
    assert codec.decode(codec.encode(last.lastToken)) == last.lastToken


def test_a_new_node_is_off_until_it_joins():
    d = node(4)
    assert d.status == "Off" and d.handle(Start(), 0.0) == [] and d.stats["start_not_configured"] == 1
    effs = d.handle(Join(), 0.0)
    assert [t.name for t in traces(effs)] == ["Join"]
    assert sends(effs) == [Msg911(4, 4, 1, RING, 0, "YES")]   # to the configured ring's head
    assert (d.status, d.tokenState, d.viewState) == ("Up", "Starving", "Chaos")


# ---------------------------------------------------------------- 2. token received

def test_token_in_agreement_with_the_same_nodelist_is_eaten():
    a = node(1)
    effs = a.handle(Receive(3, tok(10)), 0.0)
    assert (a.tokenState, a.viewState) == ("Eating", "Agreement")
    assert a.token == TokenMsg(10, RING, 1, 1, 1)               # current pointer updated
    assert timers(effs) == ["eating"] and CancelTimer("hungry") in effs
    ev = traces(effs)[0]
    assert ev.name == "TokenReceived" and ev.msg["seq"] == 10 and ev.state["tokenState"] == "Eating"


def test_old_token_and_token_while_eating_are_dropped():
    a = node(1)
    effs = a.handle(Receive(3, tok(8)), 0.0)                   # not above lastTokenSeq 8
    assert a.tokenState == "Hungry" and a.stats["tokens_dropped"] == 1
    assert [t.name for t in traces(effs)] == ["TokenReceived"] and not timers(effs)
    a.handle(Receive(3, tok(10)), 0.0)
    a.handle(Receive(3, tok(11)), 0.0)
    assert a.token.seq == 10 and a.stats["tokens_dropped"] == 2


def test_view_state_machine_chaos_reserve_agreement_and_commit_upward():
    a = node(1)
    acd = (1, 3)
    a.handle(Receive(3, tok(10, acd)), 0.0)                    # differs from localView: Chaos
    assert a.viewState == "Chaos" and a.localView == acd and a.globalView == [RING]
    a.handle(TimerFired("eating"), 0.0)
    effs = a.handle(Receive(3, tok(12, acd, gvn=1)), 0.0)      # same: Reserve, next slot
    assert a.viewState == "Reserve" and a.globalView == [RING, ()] and a.token.gvn == 2
    assert not [e for e in effs if isinstance(e, Up)]
    a.handle(TimerFired("eating"), 0.0)
    effs = a.handle(Receive(3, tok(14, acd, gvn=2)), 0.0)      # same again: commit
    assert a.viewState == "Agreement" and a.globalView == [RING, acd]
    ups = [e for e in effs if isinstance(e, Up)]
    assert len(ups) == 1 and isinstance(ups[0].msg, ViewChange)
    assert (ups[0].msg.view.vid, ups[0].msg.view.members) == (2, acd)


def test_reserve_then_a_different_nodelist_leaves_null_and_goes_to_chaos():
    a = node(1)
    a.viewState = "Reserve"
    a.globalView = [RING, ()]
    a.handle(Receive(3, tok(10, (1, 2))), 0.0)
    assert a.viewState == "Chaos" and a.globalView == [RING, ()]


def test_token_global_view_number_is_adopted_with_null_padding():
    a = node(1)
    a.handle(Receive(3, tok(10, gvn=3)), 0.0)
    assert a.globalView == [RING, (), ()]


# ---------------------------------------------------------------- 3. 911 received

def test_911_from_member_with_older_claim_is_vetoed_back_to_its_originator():
    b = node(2)                                                 # lastTokenSeq 9
    effs = b.handle(Receive(1, Msg911(1, 1, 2, RING, 8, "YES")), 0.0)
    assert sends(effs) == [Msg911(1, 2, 1, RING, 8, "NO")]


def test_911_with_newer_claim_or_equal_claim_from_higher_id_is_forwarded():
    b = node(2)
    assert sends(b.handle(Receive(1, Msg911(1, 1, 2, RING, 11, "YES")), 0.0)) == [Msg911(1, 2, 3, RING, 11, "YES")]
    assert sends(b.handle(Receive(3, Msg911(3, 3, 2, RING, 9, "YES")), 0.0)) == [Msg911(3, 2, 3, RING, 9, "YES")]
    # equal claim from a lower id: this node (higher id) vetoes
    assert sends(b.handle(Receive(1, Msg911(1, 1, 2, RING, 9, "YES")), 0.0))[0].status == "NO"


def test_911_while_eating_is_vetoed():
    b = node(2)
    b.handle(Receive(1, tok(12, cur=1, dest=2)), 0.0)
    assert sends(b.handle(Receive(1, Msg911(1, 1, 2, RING, 50, "YES")), 0.0))[0].status == "NO"


def test_own_911_back_with_yes_while_starving_regenerates_from_last_token():
    a = node(1)
    a.handle(TimerFired("hungry"), 0.0)
    assert (a.tokenState, a.viewState) == ("Starving", "Chaos")
    effs = a.handle(Receive(3, Msg911(1, 3, 1, RING, 8, "YES")), 0.0)
    assert a.tokenState == "Eating" and a.token == a.lastToken.replace(cur=1) and timers(effs) == ["eating"]


def test_own_911_with_no_or_a_stale_claim_does_not_regenerate():
    a = node(1)
    a.handle(TimerFired("hungry"), 0.0)
    a.handle(Receive(3, Msg911(1, 3, 1, RING, 8, "NO")), 0.0)
    assert a.tokenState == "Starving"
    a.handle(Receive(3, Msg911(1, 3, 1, RING, 5, "YES")), 0.0)     # fresh_claim: not this claim
    assert a.tokenState == "Starving"
    seed_a = node(1, fresh_claim=False)
    seed_a.handle(TimerFired("hungry"), 0.0)
    seed_a.handle(Receive(3, Msg911(1, 3, 1, RING, 5, "YES")), 0.0)  # the seed as written: any YES
    assert seed_a.tokenState == "Eating"


def test_911_from_a_non_member_is_a_join_request_added_after_self_at_eating_timeout():
    a = node(1)
    effs = a.handle(Receive(4, Msg911(4, 4, 1, RING, 0, "YES")), 0.0)
    assert not sends(effs) and a.newNodes == {4}
    a.handle(Receive(3, tok(10)), 0.0)
    effs = a.handle(TimerFired("eating"), 0.0)
    assert sends(effs) == [TokenMsg(11, (1, 4, 2, 3), 1, 4, 1)]
    assert a.viewState == "Chaos" and a.newNodes == set() and a.lastToken == sends(effs)[0]
    assert a.localView == RING      # localView takes the nodelist when the token comes back


# ---------------------------------------------------------------- 4, 5. delivery failures

def test_token_delivery_failure_drops_the_dead_node_and_resends():
    a = node(1)
    a.handle(Receive(3, tok(10)), 0.0)
    sent = sends(a.handle(TimerFired("eating"), 0.0))[0]
    effs = a.handle(DeliveryFailed(sent), 0.0)
    assert sends(effs) == [TokenMsg(12, (1, 3), 1, 3, 1)]
    assert (a.viewState, a.tokenState, a.localView) == ("Chaos", "Hungry", (1, 3))
    assert a.lastToken == sends(effs)[0]


def test_token_delivery_failure_alone_commits_the_single_node_view():
    a = node(1, ring=(1, 2))
    a.handle(Receive(2, TokenMsg(10, (1, 2), 2, 1, 1)), 0.0)
    sent = sends(a.handle(TimerFired("eating"), 0.0))[0]
    effs = a.handle(DeliveryFailed(sent), 0.0)
    assert not sends(effs) and (a.viewState, a.tokenState) == ("Agreement", "Eating")
    assert a.globalView == [(1, 2), (1,)] and a.token == a.lastToken == TokenMsg(12, (1,), 1, 1, 2)
    ups = [e for e in effs if isinstance(e, Up)]
    assert ups[0].msg.view.members == (1,) and ups[0].msg.view.vid == 2
    # alone, the eating timeout keeps the token
    effs = a.handle(TimerFired("eating"), 0.0)
    assert not sends(effs) and timers(effs) == ["eating"] and a.tokenState == "Eating"


def test_911_delivery_failure_moves_to_the_next_node():
    a = node(1)
    m = Msg911(1, 1, 2, RING, 8, "YES")
    assert sends(a.handle(DeliveryFailed(m), 0.0)) == [Msg911(1, 1, 3, RING, 8, "YES")]


# ---------------------------------------------------------------- 6-8. timeouts

def test_hungry_then_starving_timeouts_send_911_along_last_global_view():
    c = node(3)
    effs = c.handle(TimerFired("hungry"), 0.0)
    assert sends(effs) == [Msg911(3, 3, 1, RING, 10, "YES")] and timers(effs) == ["starving"]
    effs = c.handle(TimerFired("starving"), 1.0)
    assert sends(effs) == [Msg911(3, 3, 1, RING, 10, "YES")] and timers(effs) == ["starving"]
    assert [t.name for t in traces(effs)] == ["StarvingTimeout"]


def test_a_timer_of_another_token_state_is_counted_not_taken():
    a = node(1)
    assert a.handle(TimerFired("eating"), 0.0) == [] and a.stats["stale_timer"] == 1
    # in every token state, each other state's timer (a runtime that fired a
    # cancelled one) is ignored, whichever way the names sort
    for state in ("Eating", "Hungry", "Starving"):
        b = node(1)
        b._enter(state, 0.0)
        others = [t for t in ("eating", "hungry", "starving") if t != state.lower()]
        for t in others:
            assert b.handle(TimerFired(t), 0.0) == [] and b.tokenState == state, (state, t)
        assert b.stats["stale_timer"] == len(others)


# ---------------------------------------------------------------- environment

def test_crash_keeps_data_and_recovery_claims_neutrally():
    b = node(2)
    b.handle(Receive(1, tok(12, cur=1, dest=2)), 0.0)
    effs = b.handle(Crash(), 0.0)
    assert (b.status, b.tokenState, b.viewState, b.token) == ("Down", "Starving", "Chaos", NO_TOKEN)
    assert b.globalView == [RING] and b.lastToken.seq == 9
    assert {e.name for e in effs if isinstance(e, CancelTimer)} == {"eating", "hungry", "starving"}
    assert b.handle(Receive(1, tok(13, cur=1, dest=2)), 0.0) == [] and b.stats["while_not_up"] == 1
    effs = b.handle(Recover(), 0.0)
    assert sends(effs) == [Msg911(2, 2, 3, RING, 0, "YES")] and b.recovered
    # neutral: it vetoes nobody with its old sequence number ...
    assert sends(b.handle(Receive(1, Msg911(1, 1, 2, RING, 1, "YES")), 0.0))[0].status == "YES"
    # ... and (fresh_view) its old localView does not count as agreement
    b.handle(Receive(1, tok(20, cur=1, dest=2)), 0.0)
    assert b.viewState == "Chaos" and not b.recovered


def test_tracing_off_builds_no_trace_effects():
    a = node(1, tracing=False)
    effs = a.handle(Receive(3, tok(10)), 0.0) + a.handle(TimerFired("eating"), 0.0)
    assert not traces(effs) and sends(effs)


def test_fresh_view_needs_neutral_recovery():
    with pytest.raises(ValueError, match="fresh_view needs neutral_recovery"):
        node(1, neutral_recovery=False)


def test_token_ring_claim_asks_the_last_tokens_ring_and_answers_a_higher_claim():
    # F7: node 1's last token took in node 4, which no view has committed yet
    last = TokenMsg(12, (1, 4, 2, 3), 1, 4, 1)
    a, seed_a = node(1), node(1, token_ring_claim=False)
    a.lastToken = seed_a.lastToken = last
    assert sends(a.handle(TimerFired("hungry"), 0.0)) == [Msg911(1, 1, 4, (1, 4, 2, 3), 12, "YES")]
    assert sends(seed_a.handle(TimerFired("hungry"), 0.0)) == [Msg911(1, 1, 2, RING, 12, "YES")]
    # node 4's claim at node 2 (lastTokenSeq 9), which has not seen 4 added
    claim = Msg911(4, 4, 2, (1, 4, 2, 3), 13, "YES")
    b, seed_b = node(2), node(2, token_ring_claim=False)
    assert sends(b.handle(Receive(4, claim), 0.0)) == [Msg911(4, 2, 3, (1, 4, 2, 3), 13, "YES")]
    assert b.newNodes == {4}                                       # queued as well
    assert sends(seed_b.handle(Receive(4, claim), 0.0)) == [] and seed_b.newNodes == {4}
    low = node(2)                                                  # not above 9: only a join request
    assert sends(low.handle(Receive(4, claim.replace(seq=9)), 0.0)) == [] and low.newNodes == {4}
    with pytest.raises(ValueError, match="token_ring_claim needs neutral_recovery"):
        node(1, neutral_recovery=False, fresh_view=False)


# ---------------------------------------------------------------- wire format

NODES = st.integers(min_value=1, max_value=0xFFFF)
RINGS = st.lists(NODES, min_size=1, max_size=40, unique=True).map(tuple)
TOKENS = st.builds(TokenMsg, st.integers(0, 2**64 - 1), RINGS, NODES, NODES, st.integers(0, 2**32 - 1))
MSGS911 = st.builds(Msg911, NODES, NODES, NODES, RINGS, st.integers(0, 2**64 - 1), st.sampled_from(("YES", "NO", "REJECT")))


def test_types_are_registered():
    assert codec.registered()[T_TOKEN] is TokenMsg and codec.registered()[T_911] is Msg911


@given(st.one_of(TOKENS, MSGS911))
def test_round_trip(m):
    assert codec.decode(codec.encode(m)) == m
    # as a nested frame inside the reliable layer's XDATA too
    x = codec.XData(1, 1, m)
    assert codec.decode(codec.encode(x)) == x


@given(st.one_of(TOKENS, MSGS911), st.data())
def test_truncated_or_extended_frames_are_refused(m, data):
    cut_and_extended_refused(codec.encode(m), data, 4)


@settings(max_examples=300)
@given(st.sampled_from((T_TOKEN, T_911)), st.binary(max_size=64))
def test_garbage_bodies_decode_or_raise_decode_error(t, body):
    canonical_or_refused(bytes([codec.VERSION, t]) + body)


def test_malformed_fields_are_refused():
    good = codec.encode(TokenMsg(5, (1, 2), 1, 2, 1))
    head = good[:2]
    bad = {
        "null cur": struct.pack(">QHHIH", 5, 0, 2, 1, 2) + struct.pack(">2H", 1, 2),
        "empty nodelist": struct.pack(">QHHIH", 5, 1, 2, 1, 0),
        "repeated node": struct.pack(">QHHIH", 5, 1, 2, 1, 2) + struct.pack(">2H", 1, 1),
        "node 0": struct.pack(">QHHIH", 5, 1, 2, 1, 2) + struct.pack(">2H", 1, 0),
    }
    for why, body in bad.items():
        with pytest.raises(codec.DecodeError):
            codec.decode(head + body)
    with pytest.raises(codec.DecodeError, match="status"):
        codec.decode(bytes([codec.VERSION, T_911]) + struct.pack(">HHHQBH", 1, 2, 3, 4, 9, 1) + struct.pack(">H", 1))
    for m in (TokenMsg(5, (), 1, 2, 1), TokenMsg(5, (1,), 0, 2, 1), Msg911(1, 1, 1, (1,), 0, "MAYBE")):
        with pytest.raises(ValueError):
            codec.encode(m)


# ---------------------------------------------------------------- simulator

def test_simulation_is_deterministic_and_settles():
    cfg = RaincoreConfig(n=4, init_size=3, init_seq=11)
    plan = FaultPlan(crashes=((2, 0.05),), recoveries=((2, 0.2),), joins=((4, 0.1),), token_losses=(0.3,))
    r1, s1, _ = simulate(cfg, 7, plan)
    r2, s2, _ = simulate(cfg, 7, plan)
    assert r1 == r2 and s1["agreed"] and s1["live"] == [1, 2, 3, 4]
    names = {r["name"] for r in r1[1:]}
    assert {"Crash", "Recover", "Join", "TokenLoss", "911Received"} <= names
    assert all(sorted(s1["views"][n][-1]) == [1, 2, 3, 4] for n in (1, 2, 3, 4) if s1["views"][n])


def test_registry_simulate_and_replay_agree():
    p = protocols.get("raincore")
    assert "raincore" in protocols.available() and p.spec == "Raincore"
    records, line = p.simulate(3, "crash=2@50,recover=2@300,join=4@100,tokenloss=200", {"nodes": 4, "ring": 3})
    assert line["run_id"] == "raincore-n4-r3-s3" and line["agreed"] and records[0]["protocol"] == "raincore"
    assert replay_records(records).verdict == "ok"
    with pytest.raises(ValueError, match="expected"):
        p.simulate(3, "crash=2", {})


def test_replay_flags_a_tampered_post_state():
    records, _ = protocols.get("raincore").simulate(1, "crash=2@50", {})
    i = next(k for k, r in enumerate(records) if r.get("name") == "TokenDeliveryFailure")
    bad = [dict(r) for r in records]
    bad[i] = {**bad[i], "state": {**bad[i]["state"], "localView": [1, 2, 3]}}
    rep = replay_records(bad)
    assert rep.verdict == "nonconforming" and rep.first_bad_event == i - 1 and "localView" in rep.reason


def test_trace_files_load_and_conform(tmp_path):
    from groupcheck.conformance.replay.conform import conform_file
    from groupcheck.core.trace import writer as tracefile
    records, _ = protocols.get("raincore").simulate(2, "crash=2@50,recover=2@300", {})
    assert any(r.get("name") == "911Received" for r in records)
    rep = conform_file(tracefile.write(tmp_path / "r.ndjson", records))
    assert rep.verdict == "ok", rep.reason
