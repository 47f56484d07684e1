"""TLC trace validation of FLUSH (docs/architecture.md, link (3)): the TLA+ spec
(spec/Flush/TraceFlush.tla) and the Python replay judge the same simulated
traces alike: crashes, leaves and joins, forged messages, hidden state."""
from __future__ import annotations

import copy
import json

from groupcheck.conformance import flush
from tlctrace_helpers import NEEDS_JAVA, accepted, accepted_without_state, events, rejected_at, run_fixture

pytestmark = NEEDS_JAVA


# 3 members, the coordinator crashes, member 3 leaves, member 4 joins, a lossy network
run = run_fixture("flush", 5, "loss=0.1,reorder=3,crash=1@25,leave=3@8,join=4@12", {"nodes": 3})


def test_crash_leave_join_accepted_by_tlc_and_model(tmp_path, run):
    accepted(tmp_path, run, actions={"Crash", "Leave", "Join", "SendView", "InstallView", "StopFlush", "Block"})


def test_forged_multicast_view_rejected_by_both_at_same_event(tmp_path, run):
    recs = copy.deepcopy(run)
    evs = events(recs)
    k = next(j for j, e in enumerate(evs) if e["name"] == "Multicast")
    evs[k]["msg"]["view"] += 1            # VirtualSynchrony reads this field: it must be checked
    v, _ = rejected_at(tmp_path, recs, "view", k, diagnose=True)
    assert f"Multicast({evs[k]['nid']})" in v.enabled


def test_forged_delivery_rejected_by_both_at_same_event(tmp_path, run):
    recs = copy.deepcopy(run)
    evs = events(recs)
    k = next(j for j, e in enumerate(evs) if e["name"] == "Deliver")
    evs[k]["msg"]["seqno"] += 7           # a message nobody multicast
    v, _ = rejected_at(tmp_path, recs, "deliver", k)
    # the rejection shows the record as written (not the log's ids and sets), as JSON
    assert v.record["state"]["delivered"] == evs[k]["state"]["delivered"]
    assert json.loads(json.dumps(v.to_json()))["record"]["i"] == k and "record: " in v.explain()


def test_forged_view_members_rejected_byboth(tmp_path, run):
    recs = copy.deepcopy(run)
    evs = events(recs)
    k = next(j for j, e in enumerate(evs) if e["name"] == "SendView")
    evs[k]["msg"]["members"] = evs[k]["msg"]["members"][:-1]
    rejected_at(tmp_path, recs, "members", k)


def test_trace_without_state_validated_by_tlc(tmp_path, run):
    accepted_without_state(tmp_path, run)


def test_log_numbers_data_as_the_spec_does():
    log = flush.tla_log([
        {"name": "Multicast", "nid": 2, "msg": {"type": "DATA", "view": 1, "sender": 2, "seqno": 1},
         "state": {"delivered": [[2, 1]]}},
        {"name": "Multicast", "nid": 1, "msg": {"type": "DATA", "view": 1, "sender": 1, "seqno": 1}},
        {"name": "Deliver", "nid": 1, "params": {"q": 2}, "msg": {"type": "DATA", "view": 1, "sender": 2, "seqno": 1},
         "state": {"completed": [[2, [[1, 1], [9, 9]]]]}}])
    assert log[0]["msg"]["id"] == 1 and log[1]["msg"]["id"] == 2 and log[2]["msg"]["id"] == 1
    assert log[0]["state"]["delivered"] == frozenset({1})
    assert log[2]["state"]["completed"] == frozenset({(2, frozenset({2, 0}))})     # 0: never multicast
    assert "seqno" not in log[2]["msg"]
