"""TLC trace validation of FLUSH over the Raincore ring (docs/architecture.md, link (3)):
the TLA+ spec (spec/RaincoreFlush/TraceRaincoreFlush.tla) and the Python
replay judge the same simulated traces of the composed stack alike (a crash
of node 1, FLUSH's coordinator, and a joiner by 911 included); forged
traces are rejected by TLC at the forged record, which the rejection names;
the campaign exercises every action of the trace spec."""
from __future__ import annotations

import copy
import json

import pytest

from groupcheck.conformance import tlctrace
from groupcheck.conformance.replay import raincoreflush
from groupcheck.conformance.replay.conform import conform_file
from groupcheck.core.trace.reader import from_records, load
from groupcheck.core.trace.writer import write
from raincoreflush_helpers import crash_before_take
from tlctrace_helpers import (NEEDS_JAVA, accepted, accepted_without_state, both, events, left_as_suspected,
                              joiner_moved_last_rejected, rejected_at, run_fixture)

pytestmark = NEEDS_JAVA


# ring 1, 2, 3 (the token at 3), node 4 joins by 911 at 50 ms (queued by
# node 1, added to the token), node 1 crashes at 100 ms: the ring drops it
# (TokenDeliveryFailure) and node 2 flushes to the view {2, 3, 4}
run = run_fixture("raincoreflush", 1, "crash=1@100,join=4@50", {"nodes": 4, "ring": 3, "messages": 1})


def test_crash_of_node_1_and_a_joiner_accepted_by_tlc_and_model(tmp_path, run):
    assert next(e for e in events(run) if e["name"] == "Crash")["nid"] == 1
    accepted(tmp_path, run, actions={"Crash", "Join", "911Received", "TokenDeliveryFailure", "EatingTimeout",
                                     "TokenReceived", "StartFlush", "SendView", "InstallView", "StopFlush",
                                     "Unblock"})


def test_drawn_run_on_the_rings_lossy_transport_accepted(tmp_path):
    # an audit draw: the ring's own Transport Manager on a lossy network, a
    # ring of two; node 1 crashes, node 3's 911 to it comes back
    # (911DeliveryFailure) and goes on to node 2, node 2 crashes in its
    # turn: FLUSH views {1, 2}, {2}, {2, 3}, {3}
    _, opts = raincoreflush.draw(308)     # its size, with the drawn plan (the draw adds truncation)
    assert opts["tm"]
    records, line = raincoreflush.simulate(308, "auto", {**raincoreflush.PROTOCOL_DEFAULTS, **opts})
    assert line["crashed"] == [1, 2] and line["live"] == [3] and line["settled"]
    accepted(tmp_path, records, "draw308", actions={"911DeliveryFailure", "TokenDeliveryFailure"})


def test_a_token_taken_after_its_senders_crash_accepted_over_the_lossy_ring(tmp_path):
    """A killed node's last token is on the wire: its receiver may take it
    after the Crash record (the Transport Manager had confirmed it).  Node 3
    sends the token to node 1, crashes, and node 1 takes it."""
    records, _ = raincoreflush.simulate(0, "tokenloss=60,crash=3@120", {"lossy": True})
    recs, k = crash_before_take(records)
    evs = events(recs)
    assert (evs[k]["name"], evs[k]["nid"]) == ("Crash", 3)
    assert evs[k + 1]["name"] == "TokenReceived" and evs[k + 1]["msg"]["cur"] == 3 and len(evs) == k + 2
    accepted(tmp_path, recs, "wire", actions={"Crash", "TokenReceived"})


def test_a_crash_with_a_token_on_the_wire_rejected_by_the_abstraction(tmp_path):
    """The same order without LossyRing: the abstraction lets a node crash
    only with no token in transit, so both checkers stop at the Crash."""
    records, _ = raincoreflush.simulate(0, "crash=3@120", {})
    assert not records[0]["constants"].get("LossyRing")
    recs, k = crash_before_take(records)
    rejected_at(tmp_path, recs, "abstraction", k)


def test_forged_token_nodelist_rejected_at_that_record(tmp_path, run):
    joiner_moved_last_rejected(tmp_path, run, 4)      # node 4 follows node 1 after the join


def test_forged_token_seq_is_not_compared(tmp_path, run):
    # the sequence number serves regeneration, which the abstraction leaves
    # out: neither checker compares it (TraceRaincore.tla does)
    recs = copy.deepcopy(run)
    for e in events(recs):
        if e["name"] == "TokenReceived":
            e["msg"]["seq"] += 1000
    v, m = both(tmp_path, recs, "seq")
    assert v.ok and m["verdict"] == "ok"


def test_forged_view_members_rejected_at_that_record(tmp_path, run):
    recs = copy.deepcopy(run)
    evs = events(recs)
    k = next(j for j, e in enumerate(evs) if e["name"] == "SendView")
    assert sorted(evs[k]["msg"]["members"]) == [2, 3, 4]          # the ring's committed view
    evs[k]["msg"]["members"] = [1, 2, 3]                          # the old view, crashed node 1 included
    rejected_at(tmp_path, recs, "members", k)


@pytest.mark.parametrize("action, which", [pytest.param("TokenReceived", 12, marks=pytest.mark.slow), ("FlushOk", 0)])
def test_record_dropped_from_the_middle_rejected(tmp_path, run, action, which):
    recs = copy.deepcopy(run)
    evs = events(recs)
    j = [x for x, e in enumerate(evs) if e["name"] == action][which]
    dropped = evs[j]
    recs.remove(dropped)
    rest = events(recs)
    # the first later record of the same node (the token's holder; the
    # member sending FLUSH_OK) or of one it sends to can no longer happen
    v, m = both(tmp_path, recs, f"drop-{action}")
    assert not v.ok and m["verdict"] == "nonconforming"
    assert v.first_unmatched == m["stops_conforming_at"] and v.first_unmatched >= j
    bad = rest[v.first_unmatched]
    assert v.record["name"] == bad["name"] and v.record["nid"] == bad["nid"]
    if action == "TokenReceived":      # the holder's Eating timeout: it never ate
        assert (bad["name"], bad["nid"]) == ("EatingTimeout", dropped["nid"]) and v.first_unmatched == j
        assert f"TokenReceived({dropped['nid']})" in v.enabled
    else:                              # a member receives the FLUSH_OK never sent
        assert bad["name"] == "ReceiveFlushOk" and bad["params"]["q"] == dropped["nid"]
    assert v.matched_count >= 1 and "actions enabled there" in v.explain()


# a logged state is a complete delta: a SendView that does not log the vid it
# installs claims vid unchanged, a TokenDeliveryFailure the ring's localView
@pytest.mark.parametrize("action, var", [("SendView", "vid"), ("TokenDeliveryFailure", "localView")])
def test_complete_delta_unlogged_change_rejected(tmp_path, run, action, var):
    recs = copy.deepcopy(run)
    evs = events(recs)
    k = next(j for j, e in enumerate(evs) if e["name"] == action)
    del evs[k]["state"][var]
    rejected_at(tmp_path, recs, var, k)


def test_action_outside_the_abstraction_rejected(tmp_path, run):
    recs = copy.deepcopy(run)
    evs = events(recs)
    k = [j for j, e in enumerate(evs) if e["name"] == "EatingTimeout"][5]
    evs[k]["name"] = "HungryTimeout"          # no such step: one token, never lost
    rejected_at(tmp_path, recs, "hungry", k)


def test_trace_without_state_validated_by_tlc(tmp_path, run):
    accepted_without_state(tmp_path, run)


def test_generated_log_module():
    log = raincoreflush.tla_log(from_records([
        {"kind": "header", "format": "groupcheck-trace/2", "protocol": "raincoreflush", "nodes": [1, 2, 3],
         "constants": {"N": 3, "NInit": 3, "Founder": 3, "MaxMsgs": 1, "MaxCrashes": 0}, "seed": 0,
         "faults": {}, "impl": "x", "impl_version": "0", "run_id": "r", "options": {}},
        {"kind": "event", "name": "Multicast", "nid": 1, "clock": 0.0,
         "msg": {"type": "DATA", "view": 1, "sender": 1, "seqno": 1}, "state": {"delivered": [[1, 1]]}},
        {"kind": "event", "name": "TokenReceived", "nid": 1, "clock": 0.1,
         "msg": {"type": "TOKEN", "seq": 7, "nodelist": [1, 2, 3], "cur": 3, "dest": 1, "gvn": 1},
         "state": {"newNodes": [], "globalView": [[1, 2, 3], []]}},
        {"kind": "event", "name": "Discard", "nid": 2, "clock": 0.2, "params": {"q": 1},
         "msg": {"type": "DATA", "view": 1, "sender": 1, "seqno": 1}, "state": {}}]))
    text = tlctrace.tracelog_module(log, raincoreflush.PROTOCOL.tla_trace)
    assert "id |-> 1" in text and "delivered |-> {1}" in text
    assert "nodelist |-> <<1, 2, 3>>" in text and "newNodes |-> {}" in text
    assert "globalView |-> <<<<1, 2, 3>>, <<>>>>" in text
    # a state logged empty (a complete delta: nothing changed) is not a state not logged
    assert text.count("logged |-> TRUE") == 3
    assert "Crashable = {1, 2, 3}" in tlctrace.cfg_text("raincoreflush", {"N": 3, "NInit": 3, "Founder": 3,
                                                                           "MaxMsgs": 1, "MaxCrashes": 0})


def test_raincoreflush_actions():
    assert tlctrace.supported("raincoreflush")
    # the ring's timeouts and TokenLoss: steps under the header's LossyRing only
    assert tlctrace.spec_actions("raincoreflush") == sorted(raincoreflush.FLUSH_ACTIONS
                                                            + raincoreflush.RING_ACTIONS
                                                            + ("HungryTimeout", "StarvingTimeout", "TokenLoss"))


@pytest.mark.slow
def test_campaign_runs_cover_every_action(tmp_path):
    # two of the campaign's drawn runs (seeds 233 and 42) exercise every
    # action of the trace spec but the lossy ring's: RestartFlush (rare: a
    # flush whose initiator dies needs two other members following the
    # restart; the first of seeds 0..233), 911DeliveryFailure (node 1, the
    # configured ring's head, down when a joiner's 911 reaches it) and
    # Discard (an old view's message)
    traces = []
    # and runs over the lossy ring (a lost token, its Hungry and Starving
    # timeouts), one with its crash logged as the cluster logs a node that
    # left as suspected (LeaveSuspected: the simulator never suspects a live node)
    runs = [(seed, *raincoreflush.draw(seed)) for seed in (233, 42)] + [(0, "tokenloss=60,crash=3@120",
                                                                        {"lossy": True}),
                                                                    (2, "auto", {"lossy": True, "tm": True})]
    for seed, faults, opts in runs + [("left", "tokenloss=60,crash=3@120", {"lossy": True})]:
        records, _ = raincoreflush.simulate(0 if seed == "left" else seed, faults,
                                            {**raincoreflush.PROTOCOL_DEFAULTS, **opts})
        if seed == "left":
            records = left_as_suspected(records)
        t = load(write(tmp_path / f"s{seed}.ndjson", records))
        v = tlctrace.validate(t)
        assert v.ok, (seed, v.explain())
        traces.append(t)
    cov = tlctrace.coverage("raincoreflush", traces)
    assert cov["never"] == [], cov
    assert cov["actions"]["RestartFlush"] >= 1 and cov["actions"]["911DeliveryFailure"] >= 1
    assert set(cov["actions"]) == set(tlctrace.spec_actions("raincoreflush"))


def test_conform_checker_both_agrees(tmp_path, run):
    from typer.testing import CliRunner

    from groupcheck.cli.main import app
    write(tmp_path / "good.ndjson", run)
    r = CliRunner().invoke(app, ["conform", str(tmp_path / "good.ndjson"), "--checker", "both", "--json"])
    assert r.exit_code == 0, r.output
    row = json.loads(r.stdout)[0]
    assert row["agree"] is True and row["tlc"]["ok"] and row["model"]["verdict"] == "ok"


def _forged_sent_digest(tmp_path, run, action):
    recs = copy.deepcopy(run)
    evs = events(recs)
    k = next(j for j, e in enumerate(evs) if e["name"] == action and (e.get("msg") or {}).get("digest"))
    evs[k]["msg"]["digest"] = []              # its receivers log (and the model sends) the true digest
    return write(tmp_path / f"digest-{action}.ndjson", recs), k


@pytest.mark.parametrize("action", ["FlushCompleted", "SendView"])
def test_forged_sent_digest_rejected_by_tlc_at_the_send(tmp_path, run, action):
    p, k = _forged_sent_digest(tmp_path, run, action)
    v = tlctrace.validate(load(p), diagnose=False)
    assert not v.ok and v.first_unmatched == k and v.record["msg"]["digest"] == []


@pytest.mark.parametrize("action", ["FlushCompleted", "SendView"])
def test_forged_sent_digest_rejected_by_the_replay_at_the_send(tmp_path, run, action):
    """Found by TLC's trace spec: the replay compared a sent FLUSH_COMPLETED's
    or VIEW's digest only where a receiver logged it, and accepted the trace;
    conformance/replay/flush.py now checks it at the send too."""
    p, k = _forged_sent_digest(tmp_path, run, action)
    m = conform_file(p).to_json()
    assert m["verdict"] == "nonconforming" and m["stops_conforming_at"] == k


def test_a_node_that_left_as_suspected_accepted_by_tlc_and_model(tmp_path, run):
    """The runner's record of a node that exited SHUNNED, LeaveSuspected,
    is the spec's step outside the crash budget (SuspectLeaves)."""
    accepted(tmp_path, left_as_suspected(run), "left", actions={"LeaveSuspected"})
