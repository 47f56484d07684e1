"""TLC trace validation of SEQUENCER over FLUSH over the Raincore ring
(docs/architecture.md, link (3)): the TLA+ spec
(spec/RaincoreSequencerFlush/TraceRaincoreSequencerFlush.tla) and the
Python replay judge the same simulated traces of the three-layer stack
alike (a crash of node 1, SEQUENCER's coordinator, and a joiner by 911);
forged ring records are rejected by both at the forged record."""
from __future__ import annotations

import copy

import pytest

from groupcheck.conformance.replay import raincoresequencerflush as rsf
from groupcheck.conformance import tlctrace
from groupcheck.core.trace.reader import from_records
from raincoreflush_helpers import crash_before_take, crashed_eating
from tlctrace_helpers import (NEEDS_JAVA, accepted, both, events, joiner_moved_last_rejected, left_as_suspected,
                              rejected_at, run_fixture)

pytestmark = NEEDS_JAVA

# ring 1, 2, 3 (the token at 3), node 4 joins by 911 at 50 ms, node 1 (the
# SEQUENCER coordinator) crashes at 100 ms; every node multicasts once
run = run_fixture("raincoresequencerflush", 1, "crash=1@100,join=4@50", {"nodes": 4, "ring": 3, "messages": 1})


def test_the_three_layer_stack_has_a_trace_spec():
    assert tlctrace.supported("raincoresequencerflush")
    assert set(tlctrace.spec_actions("raincoresequencerflush")) <= set(rsf.ACTIONS)


def test_crash_of_the_coordinator_and_a_joiner_accepted_by_tlc_and_model(tmp_path, run):
    v, _ = accepted(tmp_path, run, actions={"Crash", "Join", "911Received", "TokenDeliveryFailure", "Send",
                                            "RecvForward", "RecvData", "StartFlush", "SendView", "InstallView"},
                    one_step_a_record=False)         # SEQUENCER's and FLUSH's half-steps are joined
    log = rsf.tla_log(from_records(run, "run"))
    assert v.events == len(log) < len(events(run))
    # a ring entry carries the ring variables the replay compares
    tdf = next(e for e in log if e["name"] == "TokenDeliveryFailure")
    assert tdf["msg"]["dest"] == 1 and 1 not in tdf["state"]["localView"]


def test_forged_token_nodelist_rejected_at_that_record(tmp_path, run):
    joiner_moved_last_rejected(tmp_path, run, 4)      # node 4 follows node 1 after the join


def test_forged_ring_state_rejected_at_that_record(tmp_path, run):
    recs = copy.deepcopy(run)
    evs = events(recs)
    k = next(j for j, e in enumerate(evs) if e["name"] == "TokenDeliveryFailure")
    evs[k]["state"]["localView"] = [1, 2, 3]           # as if node 1 were still on the ring
    rejected_at(tmp_path, recs, "localView", k)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(10))
def test_drawn_campaign_runs_judged_alike(tmp_path, seed):
    """The audit's draws (3-4 nodes, a joiner in half, crashes, the ring's
    own Transport Manager in half): TLC and the replay give the same verdict."""
    faults, opts = rsf.draw(seed)
    records, _ = rsf.simulate(seed, faults, {**rsf.PROTOCOL_DEFAULTS, **opts})
    v, m = both(tmp_path, records, f"draw{seed}")
    assert tlctrace.agrees(v, m), (v.explain(), m)


# Raincore's own ring (LossyRing): a drawn plan in which node 1, SEQUENCER's
# coordinator, is killed while it holds the token, after a token loss
lossy_run = pytest.fixture(scope="module", name="lossy_run")(
    lambda: rsf.simulate(12, "auto", {"lossy": True, "nodes": 3, "messages": 1})[0])


def test_lossy_ring_holder_crash_accepted_by_tlc_and_model(tmp_path, lossy_run):
    assert crashed_eating(lossy_run) == [1]
    accepted(tmp_path, lossy_run, "lossy", actions={"Crash", "TokenLoss", "HungryTimeout", "StarvingTimeout",
                                                    "TokenDeliveryFailure", "SendView", "InstallView"},
             one_step_a_record=False)


def test_lossy_run_read_as_the_abstraction_rejected_by_both(tmp_path, lossy_run):
    # without LossyRing the ring has no timeout but the Eating one: the first
    # Hungry or Starving time-out (or token loss) matches no behaviour
    recs = copy.deepcopy(lossy_run)
    for k in ("LossyRing", "TimelyTimeouts", "LateFailures"):
        recs[0]["constants"].pop(k, None)
    k = next(j for j, e in enumerate(events(recs)) if e["name"] in ("HungryTimeout", "StarvingTimeout", "TokenLoss"))
    v, m = both(tmp_path, recs, "abstraction")
    assert not v.ok and m["verdict"] == "nonconforming" and tlctrace.agrees(v, m)
    assert m["first_bad_event"] <= k


def test_a_token_taken_after_its_senders_crash_accepted_over_the_lossy_ring(tmp_path):
    """RingCrash is RaincoreFlush's: over the lossy ring the token node 1
    sent before its Crash record may be taken after it."""
    records, _ = rsf.simulate(1, "crash=1@100", {"lossy": True, "nodes": 3, "ring": 3, "messages": 1})
    recs, k = crash_before_take(records)
    evs = events(recs)
    assert (evs[k]["name"], evs[k]["nid"]) == ("Crash", 1) and evs[k + 1]["msg"]["cur"] == 1
    accepted(tmp_path, recs, "wire", actions={"Crash", "TokenReceived"}, one_step_a_record=False)


def test_a_crash_with_a_token_on_the_wire_rejected_by_the_abstraction(tmp_path):
    records, _ = rsf.simulate(1, "crash=1@100", {"nodes": 3, "ring": 3, "messages": 1})
    assert not records[0]["constants"].get("LossyRing")
    recs, k = crash_before_take(records)
    rejected_at(tmp_path, recs, "abstraction", k)


def test_a_node_that_left_as_suspected_accepted_by_tlc_and_model(tmp_path, lossy_run):
    """The runner's record of a node that exited SHUNNED, LeaveSuspected,
    is the spec's step outside the crash budget (SuspectLeaves)."""
    accepted(tmp_path, left_as_suspected(lossy_run), "left", actions={"LeaveSuspected"}, one_step_a_record=False)
