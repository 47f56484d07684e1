"""groupcheck-trace/1: the writer's output validates, is deterministic, and
malformed lines are rejected with file:line."""

import json

import pytest

from groupcheck.conformance.replay import conform_file
from groupcheck.conformance.traces import TraceError, load, validator
from groupcheck.impl import tracefile

FAULTS = "loss=0.1,dup=0.05,reorder=3,crash=1@20"


def _run(tmp_path, seed=3, faults=FAULTS, name="t.ndjson"):
    records, line = tracefile.simulate_run(3, 2, seed, tracefile.parse_faults(faults))
    return tracefile.write(tmp_path / name, records), records, line


def test_written_trace_validates_and_loads(tmp_path):
    path, records, _ = _run(tmp_path)
    for r in records:
        assert not list(validator().iter_errors(r)), r
    t = load(path)
    assert t.header["format"] == "groupcheck-trace/1"
    assert t.header["constants"] == {"N": 3, "MaxSeq": 2, "MaxCrashes": 1}
    assert [e["i"] for e in t.events] == list(range(len(t.events)))
    names = {e["name"] for e in t.events}
    assert {"Send", "RecvData", "Crash", "NewView", "InstallView"} <= names


def test_same_seed_same_bytes(tmp_path):
    a, _, _ = _run(tmp_path, seed=11, name="a.ndjson")
    b, _, _ = _run(tmp_path, seed=11, name="b.ndjson")
    c, _, _ = _run(tmp_path, seed=12, name="c.ndjson")
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


def test_parse_faults():
    p = tracefile.parse_faults("loss=0.1,dup=0.05,reorder=3,crash=1@20,crash=2@40")
    assert (p.loss, p.duplicate, p.reorder_window) == (0.1, 0.05, 0.003)
    assert p.crashes == ((1, 0.02), (2, 0.04))
    with pytest.raises(ValueError):
        tracefile.parse_faults("jitter=3")


def _lines(path):
    return path.read_text().splitlines(keepends=True)


def test_truncated_line_is_rejected_with_file_and_line(tmp_path):
    path, _, _ = _run(tmp_path)
    lines = _lines(path)
    lines[4] = lines[4][: len(lines[4]) // 2] + "\n"
    path.write_text("".join(lines))
    with pytest.raises(TraceError) as e:
        load(path)
    assert e.value.line == 5 and str(e.value).startswith(f"{path}:5:")
    rep = conform_file(path)
    assert rep.verdict == "rejected" and f"{path}:5:" in rep.reason


def test_schema_violation_is_rejected(tmp_path):
    path, _, _ = _run(tmp_path)
    lines = _lines(path)
    rec = json.loads(lines[3])
    rec["name"] = "Teleport"
    lines[3] = json.dumps(rec) + "\n"
    path.write_text("".join(lines))
    rep = conform_file(path)
    assert rep.verdict == "rejected" and f"{path}:4:" in rep.reason and "Teleport" in rep.reason


def test_header_must_come_first(tmp_path):
    path, _, _ = _run(tmp_path)
    lines = _lines(path)
    path.write_text("".join(lines[1:]))
    rep = conform_file(path)
    assert rep.verdict == "rejected" and f"{path}:1:" in rep.reason


def test_member_outside_1_to_n_is_rejected(tmp_path):
    path, _, _ = _run(tmp_path)
    lines = _lines(path)
    rec = json.loads(lines[6])
    rec["nid"] = 9
    lines[6] = json.dumps(rec) + "\n"
    path.write_text("".join(lines))
    rep = conform_file(path)
    assert rep.verdict == "rejected" and f"{path}:7: nid: 9" in rep.reason
