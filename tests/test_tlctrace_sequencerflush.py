"""TLC trace validation of SEQUENCER over FLUSH (docs/architecture.md, link (3)): the
composed spec (spec/SequencerFlush/TraceSequencerFlush.tla) and the Python
replay judge the same simulated traces alike.  The implementation logs a
composed step as one record per layer; the log joins them with the replay's
own pre-pass, so TLC judges the step and names its records."""
from __future__ import annotations

import copy

from groupcheck.conformance import tlctrace
from groupcheck.conformance.replay import sequencerflush as csf
from tlctrace_helpers import NEEDS_JAVA, accepted, accepted_without_state, both, events, run_fixture

pytestmark = NEEDS_JAVA


run = run_fixture("sequencerflush", 3, options={"nodes": 3, "messages": 2})


def test_coordinator_crash_accepted_by_tlc_and_model(tmp_path, run):
    accepted(tmp_path, run, actions={"Crash", "Send", "RecvData", "Multicast", "Deliver", "SendView", "InstallView"},
             one_step_a_record=False)


def test_forged_multicast_view_rejected_by_both_in_the_same_step(tmp_path, run):
    recs = copy.deepcopy(run)
    evs = events(recs)
    k = next(j for j, e in enumerate(evs) if e["name"] == "Multicast")
    evs[k]["msg"]["view"] += 1            # the coordinator's DATA said to go out in another view
    v, m = both(tmp_path, recs, "view", diagnose=False)
    assert not v.ok and m["verdict"] == "nonconforming"
    assert m["stops_conforming_at"] == k          # the replay blames the Multicast record
    assert k in v.unmatched_records               # TLC rejects the step that joins it ...
    assert v.first_unmatched == v.unmatched_records[0] < k   # ... named by its first record, the Send
    assert tlctrace.agrees(v, m)


def test_forged_sequencer_delivery_rejected_byboth(tmp_path, run):
    recs = copy.deepcopy(run)
    evs = events(recs)
    k = next(j for j, e in enumerate(evs) if e["name"] == "RecvData" and e["params"]["p"] != e["nid"])
    evs[k]["msg"]["seqno"] += 5
    v, m = both(tmp_path, recs, "deliver", diagnose=False)
    assert not v.ok and m["verdict"] == "nonconforming"
    assert tlctrace.agrees(v, m), (v.unmatched_records, m["stops_conforming_at"])


def test_trace_without_state_validated_by_tlc(tmp_path, run):
    accepted_without_state(tmp_path, run, one_step_a_record=False)


def test_log_joins_half_steps_into_composed_actions(run):
    from groupcheck.core.trace.reader import from_records
    log = csf.tla_log(from_records(run))
    assert len(log) < len(events(run))                  # half-steps joined
    names = {e["name"] for e in log}
    assert "Multicast" not in names and "Deliver" not in names   # FLUSH halves folded into SEQUENCER steps
    joined = [e for e in log if len(e["parts"]) > 1]
    assert joined and all(e["i"] == e["parts"][0] or e["params"]["kind"] == "view" for e in joined)
    assert set(tlctrace.spec_actions("sequencerflush")) >= names
