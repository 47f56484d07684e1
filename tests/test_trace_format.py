"""groupcheck-trace/2: the writer's output validates, is deterministic and
small; strict input (CRLF, NaN, duplicate keys, unreadable files) is
rejected with file:line; format 1 is converted on read; per-node files with
vector clocks merge into one happens-before order."""

import copy
import json
import random
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from groupcheck.core.trace import validate as schemacheck
from groupcheck.core.trace import reader as traces
from groupcheck.conformance.replay.conform import conform_file
from groupcheck.core.trace.reader import TraceError, load
from groupcheck.impl.faults import parse_faults
from groupcheck.impl import campaign, sim_sequencer
from groupcheck.core.trace import writer as tracefile
from groupcheck.core.trace import format as trace_format

FAULTS = "loss=0.1,dup=0.05,reorder=3,crash=1@20"


def _run(tmp_path, seed=3, faults=FAULTS, name="t.ndjson", per_member=2):
    records, line = sim_sequencer.simulate_run(3, per_member, seed, parse_faults(faults))
    return tracefile.write(tmp_path / name, records), records, line


def _schema(rel):
    return trace_format.schema(rel)


def _jsonschema(schema):
    """jsonschema's validator with the readers' one stricter rule (an integer
    is never a float: schemacheck.Validator), resolving ``$ref`` through the
    schemas' registry."""
    return schemacheck.Validator(schema, registry=trace_format.schema_registry())


def test_written_trace_validates_and_loads(tmp_path):
    path, records, _ = _run(tmp_path)
    env = _jsonschema(_schema("trace_schema.json"))
    proto = _jsonschema(_schema("schemas/sequencer.json"))
    for r in records:
        assert not list(env.iter_errors(r)), r
        if r["kind"] == "event":
            assert not list(proto.iter_errors({"params": {}, "msg": None, "state": None, **r})), r
    t = load(path)
    assert t.header["format"] == "groupcheck-trace/2" and t.header["options"] == {}
    assert t.header["constants"] == {"N": 3, "MaxSeq": 2, "MaxCrashes": 1}
    assert [e["i"] for e in t.events] == list(range(len(t.events)))
    assert {"Send", "RecvData", "Crash", "NewView", "InstallView"} <= {e["name"] for e in t.events}
    assert t.end is not None and t.end["quiescent"] is True and records[-1]["kind"] == "end"
    assert t.events[3]["src"] == f"{path}:5"


def test_states_are_deltas_and_delivered_is_appended(tmp_path):
    path, _, _ = _run(tmp_path, per_member=20)
    t = load(path)
    hist = {}
    for ev in t.events:
        st = ev["state"] or {}
        for x in st.get("delivered", []):
            hist.setdefault(ev["nid"], []).append(tuple(x))
        if ev["name"] == "RecvData" and st:
            assert len(st.get("delivered", [])) <= 1
    whole = traces.full_states(t)
    last = {ev["nid"]: ev["state"] for ev in whole if ev["state"] is not None}
    for m, d in hist.items():
        assert [tuple(x) for x in last[m]["delivered"]] == d
    size = path.stat().st_size / len(t.events)
    assert size < 300, size


def test_same_seed_same_bytes(tmp_path):
    a, _, _ = _run(tmp_path, seed=11, name="a.ndjson")
    b, _, _ = _run(tmp_path, seed=11, name="b.ndjson")
    c, _, _ = _run(tmp_path, seed=12, name="c.ndjson")
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


def test_parse_faults():
    p = parse_faults("loss=0.1,dup=0.05,reorder=3,crash=1@20,crash=2@40")
    assert (p.loss, p.duplicate, p.reorder_window) == (0.1, 0.05, 0.003)
    assert p.crashes == ((1, 0.02), (2, 0.04))
    with pytest.raises(ValueError):
        parse_faults("jitter=3")


def _lines(path):
    return path.read_text().splitlines(keepends=True)


def _set_fields(path, line, **fields):
    """Set ``fields`` in the record on (1-based) ``line`` of the file."""
    lines = _lines(path)
    lines[line - 1] = json.dumps(json.loads(lines[line - 1]) | fields) + "\n"
    path.write_text("".join(lines))


def _rejected_at(path, line, text=""):
    with pytest.raises(TraceError) as e:
        load(path)
    assert e.value.line == line and str(e.value).startswith(f"{path}:{line}:"), str(e.value)
    assert text in str(e.value), str(e.value)
    rep = conform_file(path)
    assert rep.verdict == "rejected" and f"{path}:{line}:" in rep.reason
    return str(e.value)


def test_truncated_line_is_rejected_with_file_and_line(tmp_path):
    path, _, _ = _run(tmp_path)
    lines = _lines(path)
    lines[4] = lines[4][: len(lines[4]) // 2] + "\n"
    path.write_text("".join(lines))
    _rejected_at(path, 5, "invalid JSON")


def test_crlf_is_rejected(tmp_path):
    path, _, _ = _run(tmp_path)
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    _rejected_at(path, 1, "CRLF")
    path2, _, _ = _run(tmp_path, name="one.ndjson")       # one CRLF line among LF lines
    lines = _lines(path2)
    lines[6] = lines[6].replace("\n", "\r\n")
    path2.write_text("".join(lines), newline="")
    _rejected_at(path2, 7, "CRLF")


@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_rejected(tmp_path, bad):
    path, _, _ = _run(tmp_path)
    lines = _lines(path)
    rec = json.loads(lines[3])
    lines[3] = json.dumps(rec).replace(f'"clock": {rec["clock"]}', f'"clock": {bad}') + "\n"
    assert bad in lines[3]
    path.write_text("".join(lines))
    _rejected_at(path, 4, f"{bad} is not a JSON number")


def test_duplicate_keys_are_rejected(tmp_path):
    path, _, _ = _run(tmp_path)
    lines = _lines(path)
    lines[5] = lines[5].rstrip("\n")[:-1] + ',"nid":2}\n'
    path.write_text("".join(lines))
    _rejected_at(path, 6, "duplicate key 'nid'")


@pytest.mark.parametrize("where, edit", [
    ("msg", lambda line: line.replace('"msg":{', '"msg":{"seqno":99,', 1)),
    ("state.recv", lambda line: line.replace('"recv":{"1":', '"recv":{"1":7,"1":', 1)),
    # a colon inside a string: the fast decoder's count cannot decide, the standard one does
    ("msg", lambda line: line.replace('"msg":{', '"msg":{"seqno":99,"x":":",', 1)),
])
def test_nested_duplicate_keys_are_rejected(tmp_path, where, edit):
    """A duplicate key in a nested object hides a value as well as one at the top."""
    path, _, _ = _run(tmp_path)
    lines = _lines(path)
    k = next(k for k, line in enumerate(lines) if '"recv":{"1":' in line and '"msg":{' in line)
    lines[k] = edit(lines[k])
    path.write_text("".join(lines))
    _rejected_at(path, k + 1, "duplicate key")


def _strict(line):
    """The reference: the standard decoder, refusing duplicate keys,
    NaN/Infinity, numbers beyond a double and integers beyond 64 bits."""
    def pairs(ps):
        if len({k for k, _ in ps}) != len(ps):
            raise ValueError("duplicate key")
        return dict(ps)

    def const(name):
        raise ValueError(name)

    def integer(text):
        if not -2**63 <= int(text) < 2**63:
            raise ValueError(text)
        return int(text)

    def number(text):
        if float(text) in (float("inf"), float("-inf")):
            raise ValueError(text)
        return float(text)
    return json.JSONDecoder(object_pairs_hook=pairs, parse_constant=const, parse_int=integer,
                            parse_float=number).decode(line)


def _text_of(v, rng):
    """JSON text of a tree whose objects are lists of (key, value) pairs (so
    they may repeat a key), with whitespace here and there."""
    sp = lambda: rng.choice(["", "", " ", "\t"])                # noqa: E731
    if isinstance(v, tuple):
        return "{" + ",".join(f"{sp()}{json.dumps(k)}{sp()}:{sp()}{_text_of(x, rng)}" for k, x in v) + "}"
    if isinstance(v, list):
        return "[" + ",".join(sp() + _text_of(x, rng) for x in v) + "]"
    return json.dumps(v)


json_trees = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=False, allow_infinity=False),
              st.text(alphabet=':"\\a{}\u00e9\ud7ff', max_size=4)),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.lists(st.tuples(st.sampled_from(["a", "b", "a:", ":"]), inner), max_size=4)
                            .map(tuple)),
    max_leaves=12)


@pytest.mark.parametrize("line", [
    '{"a":1,"a":2,"b":"\\u003a"}',                  # an escaped colon as many as the member dropped
    '{"a":{"x":1,"x":2},"b":"\\u003a","c":"\\\\"}',
])
def test_a_duplicate_key_behind_an_escaped_colon_is_rejected(line):
    """The fast decoder's colon count: an escape may spell a colon the line
    does not show, so a line with a backslash is counted member by member."""
    with pytest.raises(ValueError, match="duplicate key"):
        traces.parse_line(line)


@settings(max_examples=300, deadline=None)
@given(json_trees, st.randoms(use_true_random=False))
def test_parse_line_agrees_with_the_strict_standard_decoder(tree, rng):
    """The fast decoder is kept only where it is sound: every line, duplicate
    keys (nested or not, beside colons in strings) included, gets the
    standard strict decoder's value or is refused as it refuses it."""
    line = _text_of(tree, rng)
    try:
        want = _strict(line)
    except ValueError:
        with pytest.raises(ValueError):
            traces.parse_line(line)
        return
    got = traces.parse_line(line)
    assert json.dumps(got) == json.dumps(want) and type(got) is type(want)


def test_unreadable_and_non_utf8_files(tmp_path):
    missing = tmp_path / "missing.ndjson"
    with pytest.raises(TraceError) as e:
        load(missing)
    assert str(e.value).startswith(f"{missing}: cannot read:")
    assert conform_file(missing).reason.startswith(f"{missing}: cannot read:")
    path, _, _ = _run(tmp_path)
    data = path.read_bytes().split(b"\n")
    data[2] = data[2].replace(b"RecvData", b"Recv\xffData")
    path.write_bytes(b"\n".join(data))
    with pytest.raises(TraceError) as e:
        load(path)
    assert "cannot read: not UTF-8" in str(e.value)


def test_schema_violation_is_rejected(tmp_path):
    path, _, _ = _run(tmp_path)
    _set_fields(path, 4, name="Teleport")
    assert "Teleport" in _rejected_at(path, 4)


def test_an_event_index_or_unknown_field_is_rejected(tmp_path):
    path, _, _ = _run(tmp_path)
    _set_fields(path, 4, i=2)
    _rejected_at(path, 4, "Additional properties")


def test_header_must_come_first_and_end_must_be_last(tmp_path):
    path, _, _ = _run(tmp_path)
    lines = _lines(path)
    path.write_text("".join(lines[1:]))
    _rejected_at(path, 1)
    path.write_text("".join(lines[:3] + [lines[-1]] + lines[3:-1]))
    _rejected_at(path, 5, "after the end record")


def test_member_outside_1_to_n_is_rejected(tmp_path):
    path, _, _ = _run(tmp_path)
    _set_fields(path, 7, nid=9)
    _rejected_at(path, 7, "nid: 9")


# ---------------------------------------------------------------- format 1

GOLDEN = Path(__file__).parent / "golden"


def test_format_1_is_converted_on_read_with_a_notice(tmp_path):
    """A format-1 file (the full post-states of a SEQUENCER run with loss,
    duplication, reordering and a crash) reads as the same run written in
    format 2 (the two golden files), says so in its header and in a
    FormatNotice, and replays alike."""
    p1, p2 = GOLDEN / "sequencer-format1.ndjson", GOLDEN / "sequencer-format2.ndjson"
    with pytest.warns(traces.FormatNotice, match="groupcheck-trace/1 is read for compatibility"):
        t1 = load(p1)
    t2 = load(p2)
    assert t1.header["format"] == "groupcheck-trace/2" and t1.header["converted_from"] == "groupcheck-trace/1"
    assert "converted_from" not in t2.header
    strip = [{k: v for k, v in e.items() if k not in ("src", "clock")} for e in t1.events]
    assert strip == [{k: v for k, v in e.items() if k not in ("src", "clock")} for e in t2.events]
    # neither says how the run ended (no end record, no header quiescent): every step
    # conforms and nothing is broken, but the end was never judged
    with pytest.warns(traces.FormatNotice):
        r1 = conform_file(p1)
    r2 = conform_file(p2)
    assert r1.verdict == r2.verdict == "incomplete" and not r1.violations and not r2.violations
    assert "no end record" in r1.reason and "no end record" in r2.reason


def test_format_1_history_rewrite_is_rejected(tmp_path):
    recs = [json.loads(x) for x in (GOLDEN / "sequencer-format1.ndjson").read_text().splitlines()]
    i = max(k for k, r in enumerate(recs) if r["kind"] == "event" and r["state"]
            and len(r["state"]["delivered"]) >= 2)
    d = recs[i]["state"]["delivered"]
    d[-1], d[-2] = d[-2], d[-1]
    p = tracefile.write(tmp_path / "v1.ndjson", recs)
    _rejected_at(p, i + 1, "not an extension")


# ---------------------------------------------------------------- the compiled validator

def _mutations(rec, rng):
    """Small random edits of a record: wrong types, missing and extra keys."""
    out = []
    for _ in range(6):
        r = copy.deepcopy(rec)
        target = r
        path = []
        while isinstance(target, dict) and target and rng.random() < 0.6:
            k = rng.choice(sorted(target))
            if not isinstance(target[k], (dict, list)) or not target[k]:
                break
            path.append(k)
            target = target[k]
        if isinstance(target, dict) and target:
            k = rng.choice(sorted(target))
            choice = rng.randrange(5)
            if choice == 0:
                del target[k]
            elif choice == 1:
                target[k] = rng.choice([None, "x", -1, 1.5, True, [], {}])
            elif choice == 2:
                target["extra"] = 1
            elif choice == 3 and isinstance(target[k], int):
                target[k] = target[k] + rng.choice([-100, 100])
            else:
                target[k] = [target[k]]
        elif isinstance(target, list) and target:
            target[rng.randrange(len(target))] = rng.choice([None, "x", -1, [1], {"a": 1}])
        out.append(r)
    return out


@pytest.mark.parametrize("protocol", ["sequencer", "flush", "sequencerflush", "stable", "raincore", "raincoreflush",
                                      "raincoresequencerflush"])
def test_compiled_validator_agrees_with_jsonschema(protocol):
    from groupcheck.conformance.replay.registry import get
    proto = get(protocol)
    rng = random.Random(7)
    env_s, proto_s = _schema("trace_schema.json"), _schema(f"schemas/{protocol}.json")
    registry = trace_format.schema_registry()
    env_c, proto_c = schemacheck.compile_schema(env_s, registry), schemacheck.compile_schema(proto_s, registry)
    env_j, proto_j = _jsonschema(env_s), _jsonschema(proto_s)
    records, _ = proto.simulate(1, proto.campaign_faults, {})
    seen = 0
    for rec in records:
        for r in [rec] + _mutations(rec, rng):
            assert env_c(r) == env_j.is_valid(r), r
            if isinstance(r, dict) and r.get("kind") == "event":
                full = {"params": {}, "msg": None, "state": None, **r}
                assert proto_c(full) == proto_j.is_valid(full), full
                seen += 1
    assert seen > 50


# every keyword the compiler knows, each where a value can pass or fail it
_EVERY_KEYWORD = {
    "$defs": {"pos": {"type": "integer", "minimum": 1, "maximum": 9}, "node": {"anyOf": [
        {"type": "null"}, {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}},
                           "additionalProperties": False}]}},
    "type": ["object", "array", "string", "integer", "number", "boolean", "null"],
    "if": {"type": "object"},
    "then": {"required": ["k"], "properties": {
        "k": {"enum": ["a", "b", 1, True]}, "c": {"const": 2}, "s": {"type": "string", "minLength": 2,
                                                                      "maxLength": 3, "pattern": "^x"},
        "n": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 5}, "i": {"$ref": "#/$defs/pos"},
        "t": {"$ref": "#/$defs/node"}, "o": {"oneOf": [{"type": "integer"}, {"minimum": 3}]},
        "no": {"not": {"type": "string"}},
        "d": {"type": "object", "propertyNames": {"pattern": "^[a-z]$"}, "minProperties": 1, "maxProperties": 2,
              "patternProperties": {"^[ab]$": {"type": "integer"}}, "additionalProperties": {"type": "string"}},
        "l": {"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer", "minimum": 0},
              "minItems": 1, "maxItems": 3, "uniqueItems": True},
        "a": {"allOf": [{"if": {"properties": {"t": {"const": "u"}}}, "then": {"required": ["u"]}},
                        {"if": {"properties": {"t": {"enum": ["v", "w"]}}}, "then": {"required": ["v"]},
                         "else": {"maxProperties": 2}}]},
        "g": {"allOf": [{"type": "object"}, {"required": ["z"]}]}}},
    "else": {"anyOf": [{"type": "array", "items": {"type": "boolean"}}, {"type": ["string", "null", "number"]}]},
}


def test_the_compiler_agrees_with_jsonschema_on_every_keyword():
    """Each keyword of the subset, on values drawn to pass and to fail it:
    the generated predicate and jsonschema answer alike."""
    rng = random.Random(3)
    atoms = [None, True, False, 0, 1, 2, 3, 5, 9, 2.0, 2.5, 4.999, -1, 10, "", "a", "b", "u", "v", "w", "x", "xy",
             "xyz", "xyzw", [], {}]

    def value(depth=0):
        r = rng.random()
        if depth > 2 or r < 0.4:
            return rng.choice(atoms)
        if r < 0.6:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        keys = ["k", "c", "s", "n", "i", "t", "o", "no", "d", "l", "a", "g", "u", "v", "z", "next", "b", "q", "A"]
        return {k: value(depth + 1) for k in rng.sample(keys, rng.randrange(5))}
    for sub in _EVERY_KEYWORD["then"]["properties"].values():      # each keyword on its own too
        one = {**sub, "$defs": _EVERY_KEYWORD["$defs"]}
        compiled, reference = schemacheck.compile_schema(one), schemacheck.Validator(one)
        for x in atoms + [value() for _ in range(300)]:
            assert compiled(x) == reference.is_valid(x), (sub, x)
    compiled = schemacheck.compile_schema(_EVERY_KEYWORD)
    reference = schemacheck.Validator(_EVERY_KEYWORD)
    answers = set()
    for _ in range(4000):
        x = value()
        if isinstance(x, dict) and rng.random() < 0.7:
            x.setdefault("k", rng.choice(["a", 1, True, "z"]))
        assert compiled(x) == reference.is_valid(x), x
        answers.add(compiled(x))
    assert answers == {True, False}


def test_the_compiler_refuses_unknown_keywords():
    with pytest.raises(schemacheck.SchemaCompileError):
        schemacheck.compile_schema({"type": "object", "dependentRequired": {"a": ["b"]}})


# ---------------------------------------------------------------- typed decoding

def _lines_of(records, rng):
    """Each record and its mutations as lines, some with a key written twice."""
    for rec in records:
        for r in [rec] + _mutations(rec, rng):
            line = json.dumps(r, separators=(",", ":"))
            yield r, line
            if isinstance(r, dict) and r and rng.random() < 0.2:
                k = rng.choice(sorted(r))
                yield None, line[:-1] + "," + json.dumps(k) + ":" + json.dumps(rng.choice([1, "x", None])) + "}"


@pytest.mark.parametrize("protocol", ["sequencer", "flush", "sequencerflush", "stable", "raincore", "raincoreflush",
                                      "raincoresequencerflush"])
def test_typed_decoding_accepts_only_what_the_schemas_accept(protocol):
    """A line the typed decoder generated from the schemas accepts is a valid
    event of the protocol (the compiled predicates and jsonschema accept
    it) and reads as the general way reads it; the protocols it is
    generated for read most of their campaign's events that way."""
    from groupcheck.conformance.replay.registry import get
    typed = traces._typed(protocol)
    assert typed is not None
    proto = get(protocol)
    rng = random.Random(11)
    env_j = _jsonschema(_schema("trace_schema.json"))
    proto_j = _jsonschema(_schema(f"schemas/{protocol}.json"))
    valid = traces._valid(protocol, traces.FORMAT)["event"]
    records, _ = proto.simulate(1, proto.campaign_faults, {})
    events = sum(1 for r in records if r.get("kind") == "event")
    typed_events = accepted = refused = 0
    for r, line in _lines_of(records, rng):
        x = traces._typed_event(typed, line)
        try:
            rec = traces.parse_line(line)
        except ValueError:
            assert x is None, line          # a duplicate key or a bad line: never read typed
            continue
        if x is None:
            refused += 1
            continue
        accepted += 1
        typed_events += rec == r and r in records
        assert valid(rec) and env_j.is_valid(rec), line
        assert proto_j.is_valid({"params": {}, "msg": None, "state": None, **rec}), line
        general = traces._norm_event(rec, "f:1", rec.get("state"))
        fast = traces._event(typed.names[type(x)], x.nid, x.params or None, None if x.msg is msgspec_unset() else
                             x.msg, None if x.state is msgspec_unset() else x.state, x.clock,
                             None if x.vc is msgspec_unset() else x.vc, "f:1")
        assert fast == general and all(type(fast[k]) is type(general[k]) for k in fast), line
    assert typed_events >= 0.9 * events and refused > 50, (typed_events, events, accepted, refused)


def test_a_run_read_typed_equals_the_run_read_the_general_way(tmp_path, monkeypatch):
    """Every event of a campaign run (crashes, losses, duplicates), as one
    file and as per-node files, reads the same, value for value and type
    for type, with the typed decoder and without it."""
    path, records, _ = _run(tmp_path, seed=5, per_member=4)
    runs = [path, _split(tmp_path, records)]
    typed = [traces.load(p) for p in runs]
    monkeypatch.setattr(traces, "_typed", lambda protocol: None)
    general = [traces.load(p) for p in runs]
    for a, b in zip(typed, general):
        assert (a.header, a.end, len(a.events)) == (b.header, b.end, len(b.events)) and len(a.events) > 20
        for x, y in zip(a.events, b.events):
            assert x == y and list(x) == list(y), (x, y)
            assert all(type(x[k]) is type(y[k]) and (not isinstance(x[k], dict) or list(x[k]) == list(y[k]))
                       for k in x), (x, y)


@pytest.mark.parametrize("protocol", ["flush", "sequencerflush", "stable", "raincore", "raincoreflush",
                                      "raincoresequencerflush"])
def test_every_protocols_campaign_run_reads_the_same_typed(tmp_path, monkeypatch, protocol):
    """The same for every other protocol's campaign run: its events read
    typed (their messages' and states' checks after decoding) equal, value
    for value, the events read the general way."""
    from groupcheck.conformance.replay.registry import get
    proto = get(protocol)
    path = tracefile.write(tmp_path / "t.ndjson", proto.simulate(2, proto.campaign_faults, {})[0])
    typed = traces.load(path)
    monkeypatch.setattr(traces, "_typed", lambda protocol: None)
    general = traces.load(path)
    assert (typed.header, typed.end, typed.events) == (general.header, general.end, general.events)
    assert len(typed.events) > 20


def msgspec_unset():
    import msgspec
    return msgspec.UNSET


@pytest.mark.parametrize("line", [
    '{"clock":1,"kind":"event","name":"Send","nid":1.0}',                  # an integral float: refused the general way
    '{"clock":1,"kind":"event","name":"Send","nid":1,"state":{"sent":1,"sent":2}}',     # duplicate: refused
    '{"clock":1,"kind":"event","name":"RecvData","nid":1,"params":{"p":1,"q":2},"msg":{"type":"DATA"}}',
    '{"clock":1,"kind":"event","name":"Send","nid":1,"state":{"recv":{"x":1}}}',        # a key against its pattern
    '{"clock":1,"kind":"event","name":"Send","nid":1,"vc":{"01":1}}',
    '{"clock":1,"kind":"event","name":"Send","nid":1}\r',
    '{"clock":1,"kind":"event","name":"Send","nid":1,"msg":{"type":"D\\u0041TA"}}',   # an escape: read generally
])
def test_what_typed_decoding_leaves_to_the_general_way(line):
    assert traces._typed_event(traces._typed("sequencer"), line) is None


def test_the_type_generator_refuses_what_it_cannot_express():
    from groupcheck.core.trace import decode as schematypes
    env = _schema("trace_schema.json")
    registry = trace_format.schema_registry()
    base = _schema("schemas/sequencer.json")
    assert schematypes.event_decoder(env, base, registry) is not None
    for extra in ({"not": {"required": ["x"]}}, {"if": {"properties": {"nid": {"const": 1}}}, "then": {"required": ["msg"]}},
                  {"dependentRequired": {"a": ["b"]}}):
        with pytest.raises(schematypes.Unsupported):
            schematypes.event_decoder(env, {**base, "allOf": base["allOf"] + [extra]}, registry)


@pytest.mark.parametrize("extra,bad,good", [
    ({"properties": {"state": {"properties": {"fwd": {"uniqueItems": True}}}}}, {"fwd": [1, 1]}, {"fwd": [1, 2]}),
    ({"properties": {"state": {"minProperties": 2}}}, {"sent": 1}, {"sent": 1, "fwd": []}),
])
def test_a_key_the_types_cannot_say_is_checked_after_decoding(extra, bad, good):
    """A key whose schemas the generator cannot turn into a type is decoded
    as it stands and checked by the compiled predicates of its schemas: the
    record the schemas refuse is left to the general way, the one they
    accept is read typed."""
    from groupcheck.core.trace import decode as schematypes
    schema = _schema("schemas/sequencer.json")
    schema = {**schema, "allOf": schema["allOf"] + [extra]}
    typed = schematypes.event_decoder(_schema("trace_schema.json"), schema, trace_format.schema_registry())
    assert all(path[0] == "state" for st in typed.residual for path, _, _ in typed.residual[st])
    line = '{"clock":1,"kind":"event","name":"Send","nid":1,"state":%s}'
    assert traces._typed_event(typed, line % json.dumps(bad)) is None
    assert traces._typed_event(typed, line % json.dumps(good)).state == good


# ---------------------------------------------------------------- per-node files

def _split(tmp_path, records, env_records=("Crash", "NewView")):
    """A global trace as per-node files with vector clocks, written with
    NodeTraceWriter: each node's records in file order, the clocks built by
    replaying the message flow (a receive merges the clock its sender had
    when it sent; a node's InstallView merges the environment's)."""
    head = records[0]
    d = tmp_path / "run"
    writers = {n: tracefile.NodeTraceWriter(d / f"node{n}.ndjson", head, n) for n in head["nodes"]}
    env = tracefile.EnvTraceWriter(d / "env.ndjson", head)
    sent_vc = {}           # (sender, type, s, q) -> clock at send (latest)
    for r in records[1:]:
        if r["kind"] == "end":
            env.end(r["quiescent"], r["clock"])
            continue
        name, nid, msg = r["name"], r["nid"], r.get("msg")
        if name in env_records:
            if name == "Crash":
                env.on_receive(writers[nid].on_send())
            env.record(name, r.get("params"), msg, r.get("state"), r["clock"], nid=nid)
            continue
        w = writers[nid]
        if name in ("RecvForward", "RecvData"):
            w.on_receive(sent_vc.get((msg["type"], msg["sender"], msg["seqno"])))
        if name == "InstallView":
            w.on_receive(env.on_send())
        w.record(name, r.get("params"), msg, r.get("state"), r["clock"])
        if name in ("Send", "RecvForward"):
            out = dict(msg, type="DATA") if name == "RecvForward" else msg
            sent_vc[(out["type"], out["sender"], out["seqno"])] = w.on_send()
    for w in [*writers.values(), env]:
        w.close()
    return d


def test_per_node_files_merge_and_conform(tmp_path):
    path, records, _ = _run(tmp_path, per_member=6)
    d = _split(tmp_path, records)
    assert len(list(d.glob("*.ndjson"))) == 4
    t = load(d)
    g = load(path)
    assert "node" not in t.header and t.end is not None and t.end["quiescent"]
    assert len(t.events) == len(g.events)
    assert sorted((e["name"], e["nid"], json.dumps(e["msg"]), e["clock"]) for e in t.events) == \
        sorted((e["name"], e["nid"], json.dumps(e["msg"]), e["clock"]) for e in g.events)
    assert [e["i"] for e in t.events] == list(range(len(t.events)))
    assert conform_file(d).verdict == "ok", conform_file(d).reason
    assert load(d).events == t.events                   # deterministic
    runs = traces.trace_runs([tmp_path])
    assert sorted(d.glob("*.ndjson")) in runs and path in runs


def test_vector_clock_cycle_is_rejected_naming_the_records(tmp_path):
    path, records, _ = _run(tmp_path, per_member=2)
    d = _split(tmp_path, records)
    f2, f3 = d / "node2.ndjson", d / "node3.ndjson"
    l2, l3 = _lines(f2), _lines(f3)
    r2, r3 = json.loads(l2[-1]), json.loads(l3[-1])
    r2["vc"]["3"], r3["vc"]["2"] = r3["vc"]["3"], r2["vc"]["2"]   # each last step claims the other's
    l2[-1], l3[-1] = trace_format.dumps1(r2), trace_format.dumps1(r3)
    f2.write_text("".join(l2))
    f3.write_text("".join(l3))
    with pytest.raises(TraceError) as e:
        load(d)
    msg = str(e.value)
    assert "cycle" in msg and f"node2.ndjson:{len(l2)}" in msg and f"node3.ndjson:{len(l3)}" in msg, msg


def test_per_node_file_checks(tmp_path):
    path, records, _ = _run(tmp_path, per_member=2)
    d = _split(tmp_path, records)
    f2 = d / "node2.ndjson"
    lines = _lines(f2)
    rec = json.loads(lines[2])
    del rec["vc"]
    lines[2] = trace_format.dumps1(rec)
    f2.write_text("".join(lines))
    with pytest.raises(TraceError) as e:
        load(d)
    assert f"{f2}:3:" in str(e.value) and "vc" in str(e.value)
    rec["vc"] = {"2": 1}                     # own component does not grow
    lines[2] = trace_format.dumps1(rec)
    f2.write_text("".join(lines))
    with pytest.raises(TraceError) as e:
        load(d)
    assert f"{f2}:3:" in str(e.value)


def test_a_records_own_clock_component_must_grow_not_stay(tmp_path):
    """Each record of a node's file ticks the node's own vector-clock
    component: a record whose clock equals the one before it (nothing went
    back, nothing grew) is refused at its line."""
    path, records, _ = _run(tmp_path, per_member=2)
    d = _split(tmp_path, records)
    f2 = d / "node2.ndjson"
    lines = _lines(f2)
    before, rec = json.loads(lines[1]), json.loads(lines[2])
    assert before["kind"] == rec["kind"] == "event"
    rec["vc"] = dict(before["vc"])
    lines[2] = trace_format.dumps1(rec)
    f2.write_text("".join(lines))
    with pytest.raises(TraceError) as e:
        load(d)
    assert f"{f2}:3:" in str(e.value) and "must grow" in str(e.value), str(e.value)


@pytest.mark.skipif(shutil.which("java") is None, reason="TLC needs java")
def test_checker_tlc_reads_per_node_files_as_one_run(tmp_path):
    """``conform --checker both`` groups a run's per-node files into one run,
    as ``--checker model`` does, and both checkers accept the merged trace."""
    from typer.testing import CliRunner
    from groupcheck.cli.main import app
    _, records, _ = _run(tmp_path, per_member=2)
    d = _split(tmp_path, records)
    r = CliRunner().invoke(app, ["conform", str(d), "--checker", "both", "--json"])
    rows = json.loads(r.stdout)
    assert len(rows) == 1 and rows[0]["file"] == str(d), rows
    assert rows[0]["agree"] is True and rows[0]["tlc"]["ok"], rows


# -- a run replayed as it is read --------------------------------------------------------------

@pytest.mark.parametrize("protocol", ["sequencer", "flush", "stable", "raincore", "raincoreflush"])
def test_a_streamed_run_gets_the_report_of_the_run_read_whole(tmp_path, monkeypatch, protocol):
    """``conform_file`` replays a one-file run as it reads it (``stream``);
    its events are the ones ``load`` reads, and its report is the one the
    replay of the whole run gives, field by field."""
    from groupcheck.conformance.replay import conform as R
    from groupcheck.conformance.replay.registry import get
    proto = get(protocol)
    for seed in (1, 2, 3):
        path = tracefile.write(tmp_path / f"{seed}.ndjson", proto.simulate(seed, proto.campaign_faults, {})[0])
        whole = load(path)
        s = traces.stream(path)
        assert len(s.events) == 0 and s.end is None
        assert list(s.events) == whole.events and s.end == whole.end and s.header == whole.header
        assert len(s.events) == len(whole.events)
        want = R.replay(whole).to_json()
        calls = []
        monkeypatch.setattr(R, "_streamed", lambda p, f=R._streamed: calls.append(f(p)) or calls[-1])
        assert conform_file(path).to_json() == want
        # an ok run's report came from the stream; any other verdict from the run read whole
        assert (calls[-1] is not None) == (want["verdict"] == "ok")
        monkeypatch.undo()


def test_a_stream_meets_a_bad_line_where_load_does_and_the_run_is_rejected(tmp_path):
    """A record refused after many good ones: the stream raises it at that
    line, and ``conform_file`` rejects the run with it (read whole again)."""
    path, _, _ = _run(tmp_path, faults="loss=0.01", per_member=30)
    n = len(_lines(path))
    _set_fields(path, n - 2, nid="x")
    with pytest.raises(TraceError) as e:
        list(traces.stream(path).events)
    assert e.value.line == n - 2
    rep = conform_file(path)
    assert rep.verdict == "rejected" and f":{n - 2}:" in rep.reason


def test_a_composition_whose_binding_looks_ahead_is_read_whole(tmp_path, monkeypatch):
    """SEQUENCER over FLUSH joins each member's next record into a step: its
    binding does not stream, and ``conform_file`` reads its runs whole."""
    from groupcheck.conformance.replay import conform as R
    from groupcheck.conformance.replay.registry import get
    proto = get("sequencerflush")
    assert not proto.binding.streams and get("sequencer").binding.streams
    path = tracefile.write(tmp_path / "t.ndjson", proto.simulate(2, proto.campaign_faults, {})[0])
    assert R._streamed(path) is None
    assert conform_file(path).verdict == R.replay(load(path)).verdict
