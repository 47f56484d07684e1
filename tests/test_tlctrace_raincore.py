"""TLC trace validation of the Raincore token ring (DESIGN.md link (3)): the
TLA+ spec (spec/Raincore/TraceRaincore.tla) and the Python replay judge the
same simulated traces alike, crashes, a recovery, a join and token losses
included; the header's variant flags select the spec's variant."""
from __future__ import annotations

import copy
import shutil

import pytest

from groupcheck.conformance import raincore, tlctrace
from groupcheck.conformance.traces import load
from groupcheck.impl.tracefile import write
from tlctrace_helpers import both, events

pytestmark = pytest.mark.skipif(shutil.which("java") is None, reason="TLC needs java")


@pytest.fixture(scope="module")
def run():
    # ring 1,2,3 and node 4: crashes of 2 and 1, 1 recovers, 4 joins, two tokens lost
    records, _ = raincore.simulate(6, raincore.PROTOCOL.campaign_faults, {})
    return records


def test_simulated_trace_with_faults_accepted_by_tlc_and_model(tmp_path, run):
    names = {e["name"] for e in events(run)}
    assert {"Crash", "Recover", "Join", "TokenLoss", "TokenDeliveryFailure", "911DeliveryFailure",
            "911Received", "HungryTimeout", "StarvingTimeout"} <= names
    v, m = both(tmp_path, run, "good")
    assert v.ok, v.explain()
    assert v.first_unmatched is None and v.events == len(events(run))
    assert m["verdict"] == "ok"


def test_forged_token_seq_rejected_by_both_at_same_event(tmp_path, run):
    recs = copy.deepcopy(run)
    evs = events(recs)
    k = [j for j, e in enumerate(evs) if e["name"] == "TokenReceived"][5]
    evs[k]["msg"]["seq"] += 1                 # no such token in transit
    v, m = both(tmp_path, recs, "seq")
    assert not v.ok and m["verdict"] == "nonconforming"
    assert v.first_unmatched == k == m["first_bad_event"]


def test_forged_view_rejected_by_both_at_same_event(tmp_path, run):
    recs = copy.deepcopy(run)
    evs = events(recs)
    # the first commit after the join: the node claims a view without the joiner
    k = next(j for j, e in enumerate(evs)
             if e["name"] == "TokenReceived" and len((e.get("state") or {}).get("globalView", [])) >= 2
             and e["state"]["globalView"][-1])
    gv = evs[k]["state"]["globalView"]
    gv[-1] = gv[-1][:-1]
    v, m = both(tmp_path, recs, "view")
    assert not v.ok and m["verdict"] == "nonconforming"
    assert v.first_unmatched == k == m["first_bad_event"]


def test_trace_without_state_validated_by_tlc(tmp_path, run):
    recs = copy.deepcopy(run)
    for e in recs[1:]:
        e.pop("state", None)                  # format 2: no variable logged at all
    v, m = both(tmp_path, recs, "hidden")
    assert v.ok, v.explain()
    assert m["verdict"] == "ok"


def test_header_variant_selects_the_spec_variant(tmp_path, run):
    # the same trace claimed by an implementation without NeutralRecovery (and
    # the fixes that need it): the recovering node logs recovered = TRUE,
    # which that variant's Recover never sets
    recs = copy.deepcopy(run)
    recs[0]["constants"].update(NeutralRecovery=False, FreshView=False, TokenRingClaim=False)
    v, m = both(tmp_path, recs, "variant")
    assert not v.ok and m["verdict"] == "nonconforming"
    assert v.first_unmatched == m["first_bad_event"]


def test_rejection_names_matched_states_and_enabled_actions(tmp_path, run):
    recs = copy.deepcopy(run)
    evs = events(recs)
    k = [j for j, e in enumerate(evs) if e["name"] == "EatingTimeout"][3]
    evs[k]["state"]["tokenState"] = "Starving"
    v = tlctrace.validate(load(write(tmp_path / "lie.ndjson", recs)))
    assert not v.ok and v.first_unmatched == k
    assert v.record["name"] == "EatingTimeout"
    assert v.matched_count == 1 and v.matched_before
    node = evs[k]["nid"]
    assert f"node |-> {node}" in v.matched_before[0] and 'tokenState |-> "Eating"' in v.matched_before[0]
    assert f"EatingTimeout({node})" in v.enabled and "TokenLoss" not in v.enabled
    text = v.explain()
    assert "matched the line before" in text and "actions enabled there" in text


def test_generated_log_module():
    text = tlctrace.tracelog_module([{"name": "TokenLoss", "nid": None, "params": {},
                                      "msg": {"type": "TOKEN", "seq": 3, "nodelist": [1, 2], "cur": 1,
                                              "dest": 2, "gvn": 1}},
                                     {"name": "Join", "nid": 4, "state": {"newNodes": [3, 2], "globalView": []}}],
                                    raincore.PROTOCOL.tla_trace)
    assert "nid |-> 0" in text and "nodelist |-> <<1, 2>>" in text
    assert "newNodes |-> {2, 3}" in text and "globalView |-> <<>>" in text


def test_raincore_actions_covered():
    assert tlctrace.spec_actions("raincore") == sorted(raincore.ACTIONS)
    assert tlctrace.supported("raincore")


@pytest.mark.slow
def test_drawn_audit_runs_agree(tmp_path):
    # the audit's draws (a ring of 3 or 4 and one node outside, a fault plan from the seed)
    for seed in range(400, 406):
        faults, opts = raincore.draw(seed)
        records, _ = raincore.simulate(seed, faults, opts)
        v, m = both(tmp_path, records, f"draw{seed}")
        assert v.ok, (seed, v.explain())
        assert m["verdict"] != "nonconforming", (seed, m)


def test_audit_stage_check_agrees():
    from groupcheck.conformance import audit
    c, accepted = audit.tracevalidation_check("raincore", 3)
    assert c.as_expected and c.observed.startswith("both accept"), (c.observed, c.detail)
    assert accepted is not None
