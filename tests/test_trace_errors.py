"""A malformed field of a trace record is named with its file, line and
field, and the message says what the field may be (core/trace/validate.py
``explain``): never the whole record, never "not valid under any of the
given schemas"."""
from __future__ import annotations

import json

import pytest

from groupcheck.conformance.replay import raincoreflush
from groupcheck.core.trace.reader import TraceError, load
from groupcheck.core.trace.writer import write


@pytest.fixture(scope="module")
def records():
    recs, _ = raincoreflush.simulate(0, "", {})
    return recs


def _first_event(recs) -> int:
    return next(k for k, r in enumerate(recs) if r.get("kind") == "event" and r.get("name") == "EatingTimeout")


@pytest.mark.parametrize("field, value, says", [
    ("kind", "evnt", "kind: 'evnt' is not one of 'header', 'event', 'end'"),
    ("nid", "2", "nid: '2' is not of type 'integer' or 'null'"),
    ("state", [1], "state: [1] is not of type 'object' or 'null'"),
    ("clock", "soon", "clock: 'soon' is not of type 'number'"),
    ("clock", -0.5, "clock: -0.5 is less than the minimum of 0"),
    ("params", None, "params: None is not of type 'object'"),
])
def test_a_bad_field_is_named_with_what_it_may_be(tmp_path, records, field, value, says):
    recs = [dict(r) for r in records]
    k = _first_event(recs)
    recs[k][field] = value
    write(tmp_path / "t.ndjson", recs)
    with pytest.raises(TraceError) as e:
        load(tmp_path / "t.ndjson")
    assert f"t.ndjson:{k + 1}: schema" in str(e.value) and says in str(e.value), str(e.value)
    assert "valid under any" not in str(e.value)


def test_a_composed_protocols_unknown_action_lists_every_layers_actions(tmp_path, records):
    recs = [dict(r) for r in records]
    k = _first_event(recs)
    recs[k]["name"] = "Teleport"
    write(tmp_path / "t.ndjson", recs)
    with pytest.raises(TraceError) as e:
        load(tmp_path / "t.ndjson")
    msg = str(e.value)
    allowed = json.loads(msg[msg.index("is not one of ") + len("is not one of "):].replace("'", '"'))
    assert {"Multicast", "InstallView", "TokenReceived", "Crash", "LeaveSuspected"} <= set(allowed)
    assert "Leave" not in allowed            # FLUSH's Leave is not the composition's


@pytest.mark.parametrize("drop, says", [
    ("params", "params: 'p' is a required property"),       # read as {} (omitted), which lacks p
    ("msg", "msg: None is not of type 'object'"),            # read as null, which a receive may not have
])
def test_an_omitted_field_is_judged_as_the_reader_fills_it_in(tmp_path, drop, says):
    from groupcheck.conformance.replay import sequencer
    recs, _ = sequencer.simulate(1, "", {})
    k = next(k for k, r in enumerate(recs) if r.get("name") == "RecvData")
    recs = [dict(r) for r in recs]
    del recs[k][drop]
    write(tmp_path / "t.ndjson", recs)
    with pytest.raises(TraceError) as e:
        load(tmp_path / "t.ndjson")
    assert f"t.ndjson:{k + 1}: schema (sequencer): {says}" in str(e.value), str(e.value)
