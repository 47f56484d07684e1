"""The trace schemas' one registry (core/trace/writer.py schema_registry): every
``$ref`` resolves when the schemas are loaded, and a bad one fails there."""

import json
import shutil
from pathlib import Path

import pytest

from groupcheck.core.trace import validate as schemacheck
from groupcheck.core.trace import writer as tracefile
from groupcheck.core.trace import format as trace_format

IMPL = Path(tracefile.__file__).resolve().parent


@pytest.fixture
def schema_copy(tmp_path, monkeypatch):
    """A copy of impl/'s schema files that the loader reads instead."""
    for d in trace_format.SCHEMA_DIRS:
        (tmp_path / d).mkdir(parents=True, exist_ok=True)
        for f in (IMPL / d).glob("*.json"):
            shutil.copy(f, tmp_path / d / f.name)
    monkeypatch.setattr(trace_format, "_schema_dir", lambda: tmp_path)
    trace_format._schemas.cache_clear()
    yield tmp_path
    trace_format._schemas.cache_clear()


def _edit(path: Path, f) -> None:
    s = json.loads(path.read_text())
    f(s)
    path.write_text(json.dumps(s))


def test_every_schema_is_registered_by_its_id():
    registry = trace_format.schema_registry()
    for rel in ("trace_schema.json", "schemas/flush.json", "schemas/raincoresequencerflush.json",
                "schemas/v1/sequencerflush.json"):
        s = trace_format.schema(rel)
        assert registry.contents(s["$id"]) is s
    assert trace_format.schema("schemas/paxos.json") is None


@pytest.mark.parametrize("ref", ["flush.json#/$defs/nosuch", "nosuch.json", "#/$defs/nosuch"])
def test_a_bad_reference_fails_when_the_schemas_are_loaded(schema_copy, ref):
    _edit(schema_copy / "schemas" / "raincoreflush.json", lambda s: s["anyOf"].append({"$ref": ref}))
    with pytest.raises(trace_format.SchemaError, match=r"raincoreflush\.json: \$ref .* resolves to nothing"):
        trace_format.schema_registry()


def test_a_duplicate_id_fails_when_the_schemas_are_loaded(schema_copy):
    flush_id = json.loads((schema_copy / "schemas" / "flush.json").read_text())["$id"]
    _edit(schema_copy / "schemas" / "stable.json", lambda s: s.update({"$id": flush_id}))
    with pytest.raises(trace_format.SchemaError, match="also"):
        trace_format.schema("schemas/flush.json")


def test_the_compiler_refuses_a_reference_it_cannot_resolve():
    with pytest.raises(schemacheck.SchemaCompileError, match="resolves to nothing"):
        schemacheck.compile_schema({"$ref": "flush.json#/$defs/nid"})      # no registry, no base
    f = schemacheck.compile_schema({"$id": "https://groupcheck.invalid/trace/2/x.json", "$ref": "flush.json#/$defs/nid"},
                                   trace_format.schema_registry())
    assert f(1) and not f(0)


def _refs(s):
    if isinstance(s, dict):
        return [v for k, v in s.items() if k == "$ref"] + [r for v in s.values() for r in _refs(v)]
    return [r for v in s for r in _refs(v)] if isinstance(s, list) else []


@pytest.mark.parametrize("protocol, parts", [
    ("sequencerflush", {"flush.json", "sequencer.json"}),
    ("raincoreflush", {"flush.json#/$defs/event", "flush.json#/$defs/msgfields", "raincore.json"}),
    ("raincoresequencerflush", {"raincoreflush.json", "sequencer.json"}),
])
def test_a_composed_schema_refers_to_its_parts(protocol, parts):
    s = trace_format.schema(f"schemas/{protocol}.json")
    assert {r for r in _refs(s) if not r.startswith("#")} == parts
    assert set(s.get("$defs", {})) <= {"msg"}          # no copy of a part's definitions


def _event(name, nid=1, **kw):
    return {"kind": "event", "name": name, "nid": nid, "clock": 1.0, **kw}


def test_the_ring_stack_adds_a_views_ring_to_flushs_message():
    from groupcheck.core.trace.reader import record_problem
    view = {"type": "VIEW", "view": 2, "digest": [], "members": [1, 2], "ring": 3}
    rec = _event("InstallView", params={"c": 1}, msg=view)
    assert record_problem(rec, "raincoreflush") is None
    assert record_problem(rec, "raincoresequencerflush") is None
    assert "msg: Additional properties are not allowed ('ring' was unexpected)" in record_problem(rec, "flush")
    assert record_problem(dict(rec, msg=dict(view, ring=0)), "raincoreflush").startswith("schema (raincoreflush): msg/ring:")


def test_a_composed_protocols_refusal_names_the_field_of_the_records_layer():
    from groupcheck.core.trace.reader import record_problem
    ring = _event("EatingTimeout", state={"tokenState": 5})
    assert record_problem(ring, "raincoreflush").startswith("schema (raincoreflush): state/tokenState:")
    seq = _event("RecvData", params={"p": 0}, msg={"type": "DATA", "sender": 1, "seqno": 1})
    assert record_problem(seq, "raincoresequencerflush").startswith("schema (raincoresequencerflush): params/p:")
    # a SEQUENCER action is a member's, in the three-layer stack as in SEQUENCER
    assert record_problem(_event("Send", None), "raincoresequencerflush").startswith(
        "schema (raincoresequencerflush): nid:")
    assert "name: 'Nope' is not one of" in record_problem(_event("Nope"), "raincoreflush")
    # one bad value in a SEQUENCER record of SEQUENCER over FLUSH: named, not a
    # field that FLUSH's records have and SEQUENCER's lack
    bad = _event("RecvData", params={"p": 1}, msg={"sender": 1, "seqno": 1, "type": "DATA"},
                 state={"recv": {"2": "seven"}})
    assert record_problem(bad, "sequencerflush").startswith("schema (sequencerflush): state/recv/2:")


def test_a_composed_protocols_layers_log_appends_as_their_parts_do(schema_copy):
    assert trace_format.append_vars("raincoresequencerflush", "sequencer") == trace_format.append_vars("sequencer")
    assert trace_format.append_vars("raincoresequencerflush", "flush") == trace_format.append_vars("flush") == {"delivered": "set"}
    assert trace_format.append_vars("raincoreflush", "ring") == {}
    _edit(schema_copy / "schemas" / "sequencerflush.json", lambda s: s["x-append-layers"].update(flush="flsh.json"))
    trace_format._schemas.cache_clear()
    trace_format.append_vars.cache_clear()
    with pytest.raises(trace_format.SchemaError, match=r"sequencerflush\.json: \$ref 'flsh.json' resolves to nothing"):
        trace_format.append_vars("sequencerflush", "flush")
    trace_format.append_vars.cache_clear()


def test_the_ring_stacks_message_lists_every_field_of_flushs():
    ring_msg = trace_format.schema("schemas/raincoreflush.json")["$defs"]["msg"]["properties"]
    flush_msg = trace_format.schema("schemas/flush.json")["$defs"]["msgfields"]["properties"]
    assert set(ring_msg) == set(flush_msg) | {"ring"}
