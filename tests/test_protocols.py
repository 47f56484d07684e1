"""The conformance registry and the per-protocol trace schemas."""

import json

import pytest

from groupcheck.conformance import protocols
from groupcheck.conformance.replay import conform_file
from groupcheck.conformance.traces import record_problem
from groupcheck.impl import tracefile


def test_sequencer_is_registered_and_lookups_fail_clearly():
    assert "sequencer" in protocols.available()
    p = protocols.get("sequencer")
    assert p.spec == "Sequencer" and "TotalOrder" in p.properties
    for bad in ("nope", "replay", "../x"):
        with pytest.raises(protocols.UnknownProtocol, match="no conformance module"):
            protocols.get(bad)


def test_registry_simulate_and_replay_agree(tmp_path):
    p = protocols.get("sequencer")
    records, line = p.simulate(5, "loss=0.1", {"nodes": 3, "messages": 1})
    assert line["run_id"] == "sequencer-n3-m1-s5" and records[0]["protocol"] == "sequencer"
    path = tracefile.write(tmp_path / "r.ndjson", records)
    assert conform_file(path).verdict == "ok"


def _trace(tmp_path):
    records, _ = protocols.get("sequencer").simulate(1, "", {"nodes": 2, "messages": 1})
    return records


def test_event_with_an_action_the_protocol_lacks_is_rejected_with_its_line(tmp_path):
    records = _trace(tmp_path)
    records[3] = {**records[3], "name": "Gossip"}       # valid envelope, not a SEQUENCER action
    assert record_problem(records[3]) is None
    assert "schema (sequencer)" in record_problem(records[3], "sequencer")
    r = conform_file(tracefile.write(tmp_path / "bad.ndjson", records))
    assert r.verdict == "rejected" and r.reason.startswith(f"{tmp_path / 'bad.ndjson'}:4: schema (sequencer)")


def test_unknown_protocol_in_header_is_rejected_at_line_1(tmp_path):
    records = _trace(tmp_path)
    records[0] = {**records[0], "protocol": "paxos"}
    r = conform_file(tracefile.write(tmp_path / "p.ndjson", records))
    assert r.verdict == "rejected"
    assert "p.ndjson:1: no event schema for protocol 'paxos'" in r.reason


def test_state_fields_are_the_protocols(tmp_path):
    records = _trace(tmp_path)
    i = next(k for k, r in enumerate(records) if r.get("state"))
    records[i] = json.loads(json.dumps(records[i]))
    records[i]["state"]["heard_from"] = [1]              # a STABLE variable in a SEQUENCER trace
    r = conform_file(tracefile.write(tmp_path / "s.ndjson", records))
    assert r.verdict == "rejected" and f"s.ndjson:{i + 1}:" in r.reason and "heard_from" in r.reason
