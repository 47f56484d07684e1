"""TLC trace validation of the Raincore token ring (docs/architecture.md, link (3)): the
TLA+ spec (spec/Raincore/TraceRaincore.tla) and the Python replay judge the
same simulated traces alike, crashes, a recovery, a join and token losses
included; the header's variant flags select the spec's variant."""
from __future__ import annotations

import copy

import pytest

from groupcheck.conformance import tlctrace
from groupcheck.conformance.replay import raincore
from tlctrace_helpers import (NEEDS_JAVA, accepted, accepted_without_state, both, events,
                              explained_rejection, rejected_at, run_fixture)

pytestmark = NEEDS_JAVA


# ring 1,2,3 and node 4: crashes of 2 and 1, 1 recovers, 4 joins, two tokens lost
run = run_fixture("raincore", 6)


def test_simulated_trace_with_faults_accepted_by_tlc_and_model(tmp_path, run):
    accepted(tmp_path, run, actions={"Crash", "Recover", "Join", "TokenLoss", "TokenDeliveryFailure",
                                     "911DeliveryFailure", "911Received", "HungryTimeout", "StarvingTimeout"})


def test_forged_token_seq_rejected_by_both_at_same_event(tmp_path, run):
    recs = copy.deepcopy(run)
    evs = events(recs)
    k = [j for j, e in enumerate(evs) if e["name"] == "TokenReceived"][5]
    evs[k]["msg"]["seq"] += 1                 # no such token in transit
    rejected_at(tmp_path, recs, "seq", k)


def test_forged_view_rejected_by_both_at_same_event(tmp_path, run):
    recs = copy.deepcopy(run)
    evs = events(recs)
    # the first commit after the join: the node claims a view without the joiner
    k = next(j for j, e in enumerate(evs)
             if e["name"] == "TokenReceived" and len((e.get("state") or {}).get("globalView", [])) >= 2
             and e["state"]["globalView"][-1])
    gv = evs[k]["state"]["globalView"]
    gv[-1] = gv[-1][:-1]
    rejected_at(tmp_path, recs, "view", k)


def test_trace_without_state_validated_by_tlc(tmp_path, run):
    accepted_without_state(tmp_path, run)


def test_header_variant_selects_the_spec_variant(tmp_path, run):
    # the same trace claimed by an implementation without NeutralRecovery (and
    # the fixes that need it): the recovering node logs recovered = TRUE,
    # which that variant's Recover never sets
    recs = copy.deepcopy(run)
    recs[0]["constants"].update(NeutralRecovery=False, FreshView=False, TokenRingClaim=False)
    v, m = both(tmp_path, recs, "variant", diagnose=False)
    assert not v.ok and m["verdict"] == "nonconforming"
    assert v.first_unmatched == m["first_bad_event"]


@pytest.mark.slow     # the explanation is tlctrace's, whatever the spec: tests/test_tlctrace.py reads it exactly by default
def test_rejection_names_matched_states_and_enabled_actions(tmp_path, run):
    recs = copy.deepcopy(run)
    evs = events(recs)
    k = [j for j, e in enumerate(evs) if e["name"] == "EatingTimeout"][3]
    evs[k]["state"]["tokenState"] = "Starving"
    v = explained_rejection(tmp_path, recs, k)
    assert v.record["name"] == "EatingTimeout" and v.matched_count == 1
    assert 'tokenState |-> "Eating"' in v.matched_before[0] and "TokenLoss" not in v.enabled


def test_generated_log_module():
    text = tlctrace.tracelog_module([{"name": "TokenLoss", "nid": None, "params": {},
                                      "msg": {"type": "TOKEN", "seq": 3, "nodelist": [1, 2], "cur": 1,
                                              "dest": 2, "gvn": 1}},
                                     {"name": "Join", "nid": 4, "state": {"newNodes": [3, 2], "globalView": []}}],
                                    raincore.PROTOCOL.tla_trace)
    assert "nid |-> 0" in text and "nodelist |-> <<1, 2>>" in text
    assert "newNodes |-> {2, 3}" in text and "globalView |-> <<>>" in text


def test_two_tokens_break_at_most_one_token_for_tlc_and_the_replay_at_the_same_record():
    """docs/raincore.md's two-tokens finding (a drawn run with late 911s):
    every step conforms, and TLC, which judges Raincore.tla's invariants on
    the trace, finds AtMostOneToken broken at the record where the replay
    does: the 911 that lets a second node regenerate the token."""
    from groupcheck.conformance.replay import registry as protocols
    from groupcheck.core.trace.reader import from_records
    rc = protocols.get("raincore")
    _, options = rc.draw(805)
    records, _ = rc.simulate(805, "auto", {**rc.default_options, **options})
    trace = from_records(records)
    rep = rc.replay(trace, visited=False)
    assert rep.verdict in ("violation", "documented") and rep.reason.startswith("AtMostOneToken"), rep
    v = tlctrace.validate(trace, diagnose=False)
    assert v.ok and v.broken == ["AtMostOneToken"] and v.broken_at == rep.first_bad_event, v.to_json()
    assert rep.broken == {"AtMostOneToken": v.broken_at} and tlctrace.agrees(v, rep)
    assert v.broken_record["name"] == "911Received" and 'tokenState |-> "Eating"' in v.explain()
