"""TLC trace validation of pbcast.STABLE (docs/architecture.md, link (3)): the TLA+ spec
(spec/Stable/TraceStable.tla) and the Python replay judge the same simulated
traces alike, a join included."""
from __future__ import annotations

import copy

import pytest

from groupcheck.conformance import tlctrace
from groupcheck.conformance.replay import stable
from tlctrace_helpers import (NEEDS_JAVA, accepted, accepted_without_state, events, explained_rejection,
                              rejected_at, run_fixture)

pytestmark = NEEDS_JAVA


# 3 members, 3 joining at 15 ms, the campaign's lossy network
run = run_fixture("stable", 1)


def test_simulated_trace_with_join_accepted_by_tlc_and_model(tmp_path, run):
    accepted(tmp_path, run, actions={"Join", "InstallView", "SendStability", "ReceiveStability", "Retransmit"})


def test_forged_stability_digest_rejected_by_both_at_same_event(tmp_path, run):
    recs = copy.deepcopy(run)
    evs = events(recs)
    k = next(j for j, e in enumerate(evs) if e["name"] == "SendStability")
    x = sorted(evs[k]["msg"]["digest"])[0]
    evs[k]["msg"]["digest"][x][0] += 1        # a low the member's digest does not have
    rejected_at(tmp_path, recs, "digest", k)


def test_forged_purge_rejected_by_both_at_same_event(tmp_path, run):
    recs = copy.deepcopy(run)
    evs = events(recs)
    k = max(j for j, e in enumerate(evs) if e["name"] == "ReceiveStability" and "purged" in e["state"])
    purged = evs[k]["state"]["purged"]
    x = sorted(purged)[0] if purged else "1"
    purged[x] = purged.get(x, 0) + 1         # purges one message more than the digest allows
    rejected_at(tmp_path, recs, "purge", k)


def test_trace_without_state_validated_by_tlc(tmp_path, run):
    accepted_without_state(tmp_path, run)


def test_digest_encoded_as_spec_records():
    text = tlctrace.tracelog_module([{"name": "SendStability", "nid": 1, "params": {},
                                      "msg": {"type": "stability", "from": 1, "digest": {"1": [0, 2]}},
                                      "state": {"heardFrom": [2, 1], "purged": {}}}],
                                    stable.PROTOCOL.tla_trace)
    assert "digest |-> (1 :> [high |-> 2, low |-> 0])" in text
    assert "heardFrom |-> {1, 2}" in text and "purged |-> <<>>" in text and "view" not in text


@pytest.mark.slow     # the explanation is tlctrace's, whatever the spec: tests/test_tlctrace.py reads it exactly by default
def test_rejection_names_matched_states_and_enabled_actions(tmp_path, run):
    recs = copy.deepcopy(run)
    evs = events(recs)
    k = next(j for j, e in enumerate(evs) if e["name"] == "Multicast" and j > 5)
    evs[k]["state"]["sent"] += 1
    v = explained_rejection(tmp_path, recs, k)   # Multicast enabled; its logged state was not reachable
    assert v.record["name"] == "Multicast" and v.matched_count == 1 and "into |-> " in v.matched_before[0]


def test_flawed_build_breaks_safe_gc_for_tlc_and_the_replay_at_the_same_record(tmp_path):
    """The build that keeps heardFrom across a view change (its trace header
    says so) purges what a member of its view has not delivered: TLC judges
    SafeGC and StabilityBound on the trace and finds them broken at the
    record where the replay does, every step conforming."""
    from groupcheck.core.trace.reader import load
    from test_campaign_stable import run_one
    _, _, rep = run_one(1, tmp_path, heard_from_reset=False, horizon=1.0)
    assert rep.verdict == "violation" and rep.stops_conforming_at is None, rep
    assert rep.broken == {"SafeGC": rep.first_bad_event, "StabilityBound": rep.first_bad_event}, rep.broken
    v = tlctrace.validate(load(rep.file), diagnose=False)
    assert v.ok and v.broken_at == rep.first_bad_event and v.broken == ["SafeGC", "StabilityBound"], v.to_json()
    assert tlctrace.agrees(v, rep) and tlctrace.agrees(v, {**rep.to_json(), "broken": rep.broken})
    assert v.broken_record["name"] == "SendStability" and "purged |-> <<0, 2, 0>>" in v.explain()
