"""TLC trace validation of pbcast.STABLE (DESIGN.md link (3)): the TLA+ spec
(spec/Stable/TraceStable.tla) and the Python replay judge the same simulated
traces alike, a join included."""
from __future__ import annotations

import copy
import shutil

import pytest

from groupcheck.conformance import stable, tlctrace
from groupcheck.conformance.traces import load
from groupcheck.impl.tracefile import write
from tlctrace_helpers import both, events

pytestmark = pytest.mark.skipif(shutil.which("java") is None, reason="TLC needs java")


@pytest.fixture(scope="module")
def run():
    # 3 members, 3 joining at 15 ms, the campaign's lossy network
    records, _ = stable.simulate(1, stable.PROTOCOL.campaign_faults, {})
    return records


def test_simulated_trace_with_join_accepted_by_tlc_and_model(tmp_path, run):
    names = {e["name"] for e in events(run)}
    assert {"Join", "InstallView", "SendStability", "ReceiveStability", "Retransmit"} <= names
    v, m = both(tmp_path, run, "good")
    assert v.ok, v.explain()
    assert v.first_unmatched is None and v.events == len(events(run))
    assert m["verdict"] == "ok"


def test_forged_stability_digest_rejected_by_both_at_same_event(tmp_path, run):
    recs = copy.deepcopy(run)
    evs = events(recs)
    k = next(j for j, e in enumerate(evs) if e["name"] == "SendStability")
    x = sorted(evs[k]["msg"]["digest"])[0]
    evs[k]["msg"]["digest"][x][0] += 1        # a low the member's digest does not have
    v, m = both(tmp_path, recs, "digest")
    assert not v.ok and m["verdict"] == "nonconforming"
    assert v.first_unmatched == k == m["first_bad_event"]


def test_forged_purge_rejected_by_both_at_same_event(tmp_path, run):
    recs = copy.deepcopy(run)
    evs = events(recs)
    k = max(j for j, e in enumerate(evs) if e["name"] == "ReceiveStability" and "purged" in e["state"])
    purged = evs[k]["state"]["purged"]
    x = sorted(purged)[0] if purged else "1"
    purged[x] = purged.get(x, 0) + 1         # purges one message more than the digest allows
    v, m = both(tmp_path, recs, "purge")
    assert not v.ok and m["verdict"] == "nonconforming"
    assert v.first_unmatched == k == m["first_bad_event"]


def test_trace_without_state_validated_by_tlc(tmp_path, run):
    recs = copy.deepcopy(run)
    for e in recs[1:]:
        e.pop("state", None)                  # format 2: no variable logged at all
    v, m = both(tmp_path, recs, "hidden")
    assert v.ok, v.explain()
    assert m["verdict"] == "ok"


def test_digest_encoded_as_spec_records():
    text = tlctrace.tracelog_module([{"name": "SendStability", "nid": 1, "params": {},
                                      "msg": {"type": "stability", "from": 1, "digest": {"1": [0, 2]}},
                                      "state": {"heardFrom": [2, 1], "purged": {}}}],
                                    stable.PROTOCOL.tla_trace)
    assert "digest |-> (1 :> [high |-> 2, low |-> 0])" in text
    assert "heardFrom |-> {1, 2}" in text and "purged |-> <<>>" in text and "view" not in text


def test_rejection_names_matched_states_and_enabled_actions(tmp_path, run):
    recs = copy.deepcopy(run)
    evs = events(recs)
    k = next(j for j, e in enumerate(evs) if e["name"] == "Multicast" and j > 5)
    evs[k]["state"]["sent"] += 1
    v = tlctrace.validate(load(write(tmp_path / "lie.ndjson", recs)))
    assert not v.ok and v.first_unmatched == k
    assert v.record["name"] == "Multicast"
    assert v.matched_count == 1 and v.matched_before
    node = evs[k]["nid"]
    assert f"node |-> {node}" in v.matched_before[0] and "into |-> " in v.matched_before[0]
    assert f"Multicast({node})" in v.enabled   # enabled; its logged state was not reachable
    text = v.explain()
    assert "matched the line before" in text and "actions enabled there" in text


def test_stable_actions_covered():
    assert tlctrace.spec_actions("stable") == sorted(stable.ACTIONS)
    assert tlctrace.supported("stable")


@pytest.mark.slow
def test_drawn_audit_runs_agree(tmp_path):
    # the audit's draws (3-4 members, 1-3 multicasts, a join in two of three)
    for seed in range(200, 206):
        faults, opts = stable.draw(seed)
        records, _ = stable.simulate(seed, faults, opts)
        v, m = both(tmp_path, records, f"draw{seed}")
        assert v.ok, (seed, v.explain())
        assert m["verdict"] != "nonconforming", (seed, m)


def test_audit_stage_check_agrees():
    from groupcheck.conformance import audit
    c, accepted = audit.tracevalidation_check("stable", 3)
    assert c.as_expected and c.observed.startswith("both accept"), (c.observed, c.detail)
    assert accepted is not None
