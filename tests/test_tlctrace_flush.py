"""TLC trace validation of FLUSH (docs/architecture.md, link (3)): the TLA+ spec
(spec/Flush/TraceFlush.tla) and the Python replay judge the same simulated
traces alike: crashes, leaves and joins, forged messages, hidden state."""
from __future__ import annotations

import copy
import json

from groupcheck.conformance import tlctrace
from groupcheck.conformance.replay import flush
from groupcheck.conformance.replay import registry as protocols
from tlctrace_helpers import NEEDS_JAVA, accepted, accepted_without_state, both, events, rejected_at, run_fixture

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


# --- a trace of the variant without the FLUSH_OK round (FlushOkRound = FALSE) ----------

NO_OK = {"N": 3, "NInit": 3, "MaxMsgs": 2, "MaxCrashes": 0, "MaxLeaves": 1, "ReconcileDigests": True,
         "FlushOkRound": False}

# Member 3 leaves; member 2 multicasts once before the flush and once while
# block() runs, then reports at once; 1 and 3 report before the second
# message reaches them, and the VIEW's union digest brings it to member 1.
NO_OK_PATH = [
    ("Multicast", 2), ("Deliver", 1, 2), ("Leave", 3), ("StartFlush", 1), ("Block", 2, 1), ("Multicast", 2),
    ("FlushCompleted", 2), ("FlushCompleted", 1), ("Discard", 1, 2), ("ReceiveFlushCompleted", 1, 2),
    ("Block", 3, 1), ("Deliver", 3, 2), ("FlushCompleted", 3), ("Discard", 3, 2), ("ReceiveFlushCompleted", 1, 3),
    ("SendView", 1), ("StopFlush", 1), ("InstallView", 2, 1), ("InstallView", 3, 1), ("Unblock", 2, 1),
]


def _path_records(constants: dict, path: list) -> list:
    """The trace records of ``path`` run on model/flush.py: each step's
    message (the one taken, or the one sent) and the acting member's changed
    variables, in the implementation's shape (a DATA named (sender, seqno))."""
    from groupcheck.model.flush import FlushModel
    from model_helpers import init, step

    m = FlushModel(constants)
    s = init(m)
    ids = flush.Ids()

    def shape(msg, views) -> dict:
        out = dict(msg)
        if out["type"] == "DATA":
            out["sender"], out["seqno"] = ids.key(out.pop("id"))
        if "digest" in out:
            out["digest"] = ids.keys(out["digest"])
        if out["type"] == "VIEW":        # sent in view v, it installs v + 1
            out["members"] = sorted(views[out["view"]])
        return out

    recs = [{"kind": "header", "format": "groupcheck-trace/2", "protocol": "flush", "nodes": list(m.Members),
             "constants": dict(constants), "options": {}, "seed": None, "faults": {}, "impl": "model/flush.py",
             "impl_version": "0", "run_id": "flush-model-path"}]
    for name, p, *rest in path:
        params = {flush.RECEIVE[name]: rest[0]} if name in flush.RECEIVE else {}
        msg = m.In(s, p, rest[0]) if rest else None
        t = step(m, s, name, p, *rest)
        if name == "Multicast":
            i = len(t.sent)
            ids.by_id[i] = (p, sum(1 for r in t.sent if r["sender"] == p))
            ids.by_key[ids.by_id[i]] = i
            msg = t.chan[(p, next(q for q in m.Members if q != p))][-1]
        elif name in ("StartFlush", "FlushCompleted", "StopFlush"):
            v = s.vid[p - 1]
            msg = {"StartFlush": {"type": "START_FLUSH", "view": v}, "StopFlush": {"type": "STOP_FLUSH", "view": v},
                   "FlushCompleted": {"type": "FLUSH_COMPLETED", "view": v, "digest": t.digest[p - 1]}}[name]
        elif name == "SendView":
            msg = t.chan[(p, next(q for q in m.Members if t.chan[(p, q)]))][-1]
        before, after = flush.project(s, p, ids), flush.project(t, p, ids)
        state = {k: x for k, x in after.items() if x != before[k]}
        if "delivered" in state:
            state["delivered"] = [x for x in after["delivered"] if x not in before["delivered"]]
        rec = {"kind": "event", "name": name, "nid": p, "params": params, "state": state, "clock": len(recs) / 1000}
        if msg is not None:
            rec["msg"] = shape(msg, t.views)
        recs.append(rec)
        s = t
    return recs


def test_trace_of_the_variant_without_flush_ok_accepted_by_tlc_and_model(tmp_path):
    recs = _path_records(NO_OK, NO_OK_PATH)
    assert "FlushOk" not in {e["name"] for e in events(recs)}
    accepted(tmp_path, recs, "nook", actions={"Block", "FlushCompleted", "SendView", "InstallView", "Unblock"})


def test_flush_completed_right_after_block_rejected_when_the_round_is_on(tmp_path):
    # the same trace, its header without FlushOkRound: the four-phase flush,
    # where member 2 may not report before it has every FLUSH_OK
    recs = _path_records(NO_OK, NO_OK_PATH)
    del recs[0]["constants"]["FlushOkRound"]
    k = next(j for j, e in enumerate(events(recs)) if e["name"] == "FlushCompleted")
    rejected_at(tmp_path, recs, "withround", k)


def test_the_replay_reads_flush_ok_round_from_the_header():
    import pytest
    from groupcheck.conformance.replay.engine import HeaderError
    from groupcheck.core.trace.reader import Trace
    header = {"protocol": "flush", "nodes": [1, 2, 3], "constants": dict(NO_OK)}
    assert flush.FlushBinding(Trace("t", header, [])).model.FlushOkRound is False
    del header["constants"]["FlushOkRound"]
    assert flush.FlushBinding(Trace("t", header, [])).model.FlushOkRound is True
    header["constants"]["FlushOkRound"] = "false"
    with pytest.raises(HeaderError, match="FlushOkRound"):
        flush.FlushBinding(Trace("t", header, []))


def test_seed_as_written_breaks_virtual_synchrony_for_tlc_and_the_replay_at_the_same_record(tmp_path):
    """docs/flush.md's Finding 2 (no digest reconciliation, members crash):
    every step conforms, and TLC, which judges Flush.tla's invariants on the
    trace, finds VirtualSynchrony broken at the record where the replay does."""
    proto = protocols.get("flush")
    recs, _ = proto.simulate(1, proto.campaign_faults, {**proto.default_options, "reconcile": "false"})
    v, m = both(tmp_path, recs, "asWritten", diagnose=False)
    assert m["verdict"] == "violation" and m["reason"].startswith("VirtualSynchrony"), m
    assert v.ok and v.broken == ["VirtualSynchrony"] and v.broken_at == m["first_bad_event"], v.to_json()
    assert m["broken"] == {"VirtualSynchrony": v.broken_at} and tlctrace.agrees(v, m)
    assert v.broken_record["name"] == "InstallView"
