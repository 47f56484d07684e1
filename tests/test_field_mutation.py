"""One rejection for every input, on every path.

From small runs made here (every registered protocol's simulator, and the
history projected from a SEQUENCER and a FLUSH run), every field of every
record kind (trace header, events, end record; history header, events, end)
is mutated: each JSON type, extremes (2**64, -1, 10**400, NaN, Infinity,
1e400, 1e308, nesting at and beyond the limit and thousands deep, invalid
UTF-8, a lone surrogate, a BOM), deletion of the key, the key written twice,
the line written twice.

Whether a mutation is still valid input is decided by the schemas, never by
a table of outcomes: a trace record by core/trace/trace_schema.json and its
protocol's schema (schemacheck.Validator: jsonschema, an integer never a
float), a history record by ``HISTORY_SCHEMA`` below (docs/history-format.md
as a JSON Schema), plus the documented limits (core/trace/limits.py)
and the line rules (one header first, nothing after the end, no key twice).
An invalid mutation must be rejected with its ``file:line`` (and the field,
where one applies) and exit 2 by `groupcheck conform` (the replay),
`--checker tlc`, `--checker both` (with the replay's very reason) and
`groupcheck history`; a valid one may get any verdict, but never an internal
error.  The default suite runs a seeded sample (its TLC runs few: what is
rejected never starts TLC); the whole enumeration, and Spark, are slow.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest
from typer.testing import CliRunner

from groupcheck.cli.main import app
from groupcheck.conformance import history
from groupcheck.core.trace import history as history_format
from groupcheck.core.trace import limits as inputlimits
from groupcheck.conformance.replay import registry as protocols
from groupcheck.core.trace import validate as schemacheck
from groupcheck.core.trace import format as trace_format

PLACE = "\u0000mutant\u0000"          # a string value standing for raw text, replaced after encoding
PLACE_JSON = json.dumps(PLACE).encode()


@dataclass(frozen=True)
class Raw:
    """A value written as raw bytes (what Python cannot hold or encode)."""
    text: bytes
    field: bool = True       # the rejection names the field


# Python values: valid or not by the schema and the limits
VALUES = [("null", None), ("true", True), ("int", 7), ("zero", 0), ("-1", -1), ("float", 1.5),
          ("integral float", 2.0), ("1e308", 1e308), ("string", "x"), ("list", [1]), ("empty list", []),
          ("object", {"a": 1}), ("empty object", {}), ("2**64", 2 ** 64), ("2**63", 2 ** 63),
          ("2**63-1", 2 ** 63 - 1)]
# raw values: beyond the documented limits whatever the schema says
RAW = [("10**400", Raw(b"1" + b"0" * 400)), ("NaN", Raw(b"NaN")), ("Infinity", Raw(b"Infinity")),
       ("-Infinity", Raw(b"-Infinity")), ("1e400", Raw(b"1e400")),
       ("5000 deep", Raw(b"[" * 5000 + b"]" * 5000, field=False)),
       ("invalid UTF-8", Raw(b'"\xff\xfe"', field=False)), ("lone surrogate", Raw(b'"\\ud800"'))]


def _depth(x) -> int:
    if type(x) is dict:
        return 1 + max(map(_depth, x.values()), default=0)
    if type(x) is list:
        return 1 + max(map(_depth, x), default=0)
    return 0


def _nested(d: int):
    """A list nested ``d`` deep."""
    v: list = []
    for _ in range(d - 1):
        v = [v]
    return v


def _within_limits(x) -> bool:
    """A Python value within the documented limits (nesting aside)."""
    if type(x) is int:
        return -2 ** 63 <= x < 2 ** 63
    if type(x) is float:
        return x == x and x not in (float("inf"), float("-inf"))
    if type(x) is list:
        return all(map(_within_limits, x))
    if type(x) is dict:
        return all(map(_within_limits, x.values()))
    return True


class Case:
    """One mutated file: ``data`` its bytes, ``line`` the line mutated,
    ``field`` the key the rejection must name (None: no field applies),
    ``valid``: the schemas and limits accept it (a bool, or a function
    answering it, asked once: the schemas are asked of sampled cases only)."""

    def __init__(self, label: str, data: bytes, line: int, field: Optional[str], valid) -> None:
        self.label, self.data, self.line, self.field, self._valid = label, data, line, field, valid

    @property
    def valid(self) -> bool:
        if callable(self._valid):
            self._valid = bool(self._valid())
        return self._valid


# ---------------------------------------------------------------- the records

def _paths(rec: dict):
    """The fields of a record: each top-level key, and each key one level
    down in an object value (``params.p``, ``state.recv``, ``constants.N``)."""
    for k, v in rec.items():
        yield (k,)
        if type(v) is dict:
            for k2 in v:
                yield (k, k2)


def _set(rec: dict, path: tuple, value) -> dict:
    out = json.loads(json.dumps(rec))
    (out if len(path) == 1 else out[path[0]])[path[-1]] = value
    return out


def _delete(rec: dict, path: tuple) -> dict:
    out = json.loads(json.dumps(rec))
    del (out if len(path) == 1 else out[path[0]])[path[-1]]
    return out


def _line(rec) -> bytes:
    return json.dumps(rec, sort_keys=True, separators=(",", ":")).encode()


def _mutations(records: list[dict], k: int, valid_record):
    """Cases mutating record ``k`` of ``records`` (``valid_record(rec, k)``:
    the schema's answer on one record at its place)."""
    rec = records[k]
    base = [_line(r) for r in records]

    def case(label, line_bytes, field, valid):
        lines = list(base)
        lines[k] = line_bytes
        return Case(label, b"\n".join(lines) + b"\n", k + 1, field, valid)

    for path in _paths(rec):
        top = path[0]
        # nesting to the limit and one beyond it, counted on the line: the
        # field's value sits inside ``len(path)`` objects
        deep = [("nested to the limit", _nested(inputlimits.MAX_DEPTH - len(path))),
                ("nested beyond the limit", _nested(inputlimits.MAX_DEPTH - len(path) + 1))]
        for label, value in VALUES + deep:
            new = _set(rec, path, value)
            # (nesting is refused on the text, before any field is read: no field named)
            yield case(f"{'.'.join(path)}={label}", _line(new), None if "beyond" in label else top,
                       lambda new=new: _within_limits(new) and _depth(new) <= inputlimits.MAX_DEPTH
                       and valid_record(new, k))
        for label, raw in RAW:
            text = _line(_set(rec, path, PLACE)).replace(PLACE_JSON, raw.text)
            yield case(f"{'.'.join(path)}={label}", text, top if raw.field else None, False)
        new = _delete(rec, path)
        yield case(f"{'.'.join(path)} deleted", _line(new), top, lambda new=new: valid_record(new, k))
        # the key written twice (the first value another one): a duplicate key, never valid
        dup = _line(rec)[:-1] + b"," + json.dumps(top).encode() + b":null}"
        yield case(f"{top} twice", dup, top, False)
    new = {**rec, "colour": "red"}
    yield case("unknown key", _line(new), "colour", lambda: valid_record(new, k))
    yield case("BOM", "\ufeff".encode() + _line(rec), None, False)
    # the line twice: valid exactly when the records so repeated are
    twice = records[:k + 1] + [rec] + records[k + 1:]
    yield Case("line twice", b"\n".join(map(_line, twice)) + b"\n", k + 2, None,
               lambda: all(valid_record(r, j) for j, r in enumerate(twice)) and _line_rules_hold(twice))


def _line_rules_hold(records) -> bool:
    """One header, first; nothing after the end record."""
    kinds = [r.get("kind") for r in records]
    return kinds.count("header") == 1 and kinds[0] == "header" and ("end" not in kinds or kinds.index("end") == len(kinds) - 1)


# ---------------------------------------------------------------- traces

def _trace_schema(protocol: str):
    env = trace_format.schema("trace_schema.json")
    registry = trace_format.schema_registry()
    kinds = {k: schemacheck.Validator({**env["$defs"][k], "$defs": env["$defs"]}, registry=registry)
             for k in ("header", "event", "end")}
    proto = schemacheck.Validator(trace_format.schema(f"schemas/{protocol}.json"), registry=registry)

    def valid(rec, k) -> bool:
        kind = rec.get("kind")
        if type(kind) is not str or kind not in kinds or (k == 0) != (kind == "header") or not kinds[kind].is_valid(rec):
            return False
        return kind != "event" or proto.is_valid({"params": {}, "msg": None, "state": None, **rec})
    return valid


@pytest.fixture(scope="module")
def runs():
    """Each registered protocol's small simulated run (format 2 records)."""
    out = {}
    for name in protocols.available():
        proto = protocols.get(name)
        recs, _ = proto.simulate(1, "", proto.default_options)
        out[name] = recs
    return out


def trace_cases(runs, every: bool) -> list[tuple[str, Case]]:
    """(protocol, case) for the header, events and end record of each run:
    every action's first record when ``every``, else the first event."""
    out = []
    for name, recs in runs.items():
        valid = _trace_schema(name)
        picked, seen = [0, len(recs) - 1], set()
        for k, r in enumerate(recs):
            if r.get("kind") == "event" and (r["name"] not in seen) and (every or not seen):
                seen.add(r["name"])
                picked.append(k)
        for k in sorted(picked):
            for c in _mutations(recs, k, valid):
                out.append((name, c))
    return out


def _invoke(*args):
    res = CliRunner().invoke(app, list(args))
    # an internal error: an exception escaped (the conftest also fails a printed traceback)
    assert res.exception is None or isinstance(res.exception, SystemExit), (args, res.exception)
    assert res.exit_code in (0, 1, 2), (args, res.exit_code, res.stdout + res.stderr)
    return res


def _write_cases(folder: Path, cases) -> dict:
    """Each case in a file of its own, with a run_id of its own (so that no
    two files of the folder are taken for one run): file name -> case."""
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for n, (proto, c) in enumerate(cases):
        name = f"m{n:04d}.ndjson"
        data = c.data.replace(b'"run_id":"', f'"run_id":"m{n:04d}-'.encode(), 1)
        (folder / name).write_bytes(data)
        out[name] = (proto, c)
    return out


def _assert_rejected(out: str, name: str, c: Case) -> None:
    assert f"{name}:{c.line}:" in out, (c.label, out)
    if c.field is not None:
        assert c.field in out.split(f"{name}:{c.line}:", 1)[1].splitlines()[0], (c.label, out)


def _check_model(folder: Path, files: dict, each: int = 30) -> dict:
    """`groupcheck conform FOLDER` on every case at once, and `conform FILE`
    on ``each`` of them (its own exit code): file name -> its verdict row."""
    res = _invoke("conform", str(folder), "--json")
    rows = {Path(r["file"]).name: r for r in json.loads(res.stdout)}
    assert set(rows) == set(files)
    for name, (_, c) in files.items():
        if not c.valid:
            assert rows[name]["verdict"] == "rejected", (c.label, rows[name])
            _assert_rejected(rows[name]["reason"], name, c)
    if any(r["verdict"] == "rejected" for r in rows.values()):
        assert res.exit_code == 2
    for name in sorted(files)[:each]:
        one = _invoke("conform", str(folder / name), "--json")
        [row] = json.loads(one.stdout)
        assert row == rows[name]
        assert (one.exit_code == 2) == (row["verdict"] == "rejected"), (files[name][1].label, row)
    return rows


def _check_tlc(folder: Path, files: dict, model: dict, checker: str) -> None:
    """`groupcheck conform FOLDER --checker tlc|both` on every case at once:
    what the replay rejects is rejected with its reason (TLC not started),
    the rest gets a verdict."""
    res = _invoke("conform", str(folder), "--checker", checker, "--json")
    rows = {Path(r["file"]).name: r for r in json.loads(res.stdout)}
    assert set(rows) == set(files)
    for name, (_, c) in files.items():
        r, m = rows[name], model[name]
        if m["verdict"] == "rejected":
            assert r["verdict"] == "rejected" and r["reason"] == m["reason"], (checker, c.label, r, m)
            assert "tlc" not in r, (checker, c.label)          # TLC never started on it
        else:
            assert r["verdict"] != "rejected", (checker, c.label, r)
            # TLC gives no verdict only on an integer it cannot hold (32-bit), said before it starts
            assert "TLC gave no verdict" not in (r.get("reason") or "") or "beyond TLC's integers" in r["reason"], \
                (checker, c.label, r)
    if any(not c.valid for _, c in files.values()):
        assert res.exit_code == 2


def _tlc_sample(cases: list, n_valid: int, n_invalid: int, rng: random.Random) -> list:
    cases = rng.sample(cases, min(len(cases), 4 * (n_valid + n_invalid)))       # (validity asked of these only)
    valid = [x for x in cases if x[1].valid]
    invalid = [x for x in cases if not x[1].valid]
    return rng.sample(valid, min(n_valid, len(valid))) + rng.sample(invalid, min(n_invalid, len(invalid)))


# ---------------------------------------------------------------- histories

_ID = {"type": "array", "prefixItems": [{"$ref": "#/$defs/member"}, {"$ref": "#/$defs/member"}],
       "items": False, "minItems": 2}
HISTORY_SCHEMA = {
    "$defs": {
        "member": {"type": "integer", "minimum": 1, "maximum": 2 ** 63 - 1},
        "header": {"type": "object", "required": ["kind", "format", "run_id", "nodes"], "additionalProperties": False,
                   "properties": {"kind": {"const": "header"}, "format": {"const": history_format.FORMAT},
                                  "run_id": {"type": "string"}, "node": {"$ref": "#/$defs/member"},
                                  "nodes": {"type": "array", "items": {"$ref": "#/$defs/member"}, "minItems": 1,
                                            "uniqueItems": True},
                                  "protocol": {"enum": protocols.available()},
                                  "promises": {"type": "array", "items": {"enum": list(history_format.CHECKS)}},
                                  "seed": {"type": ["integer", "null"]}, "faults": {"type": "object"},
                                  "impl": {"type": "string"}, "impl_version": {"type": "string"},
                                  "source": {"type": "string"}}},
        "end": {"type": "object", "required": ["kind", "quiescent"], "additionalProperties": False,
                "properties": {"kind": {"const": "end"}, "quiescent": {"type": "boolean"},
                               "clock": {"type": "number"}}},
        "event": {"type": "object", "required": ["kind", "name", "nid"], "additionalProperties": False,
                  "properties": {"kind": {"const": "event"}, "name": {"enum": list(history_format.EVENTS)},
                                 "nid": {"anyOf": [{"$ref": "#/$defs/member"}, {"type": "null"}]},
                                 "params": {"type": "object"}, "clock": {"type": "number"}},
                  "allOf": [
                      {"if": {"properties": {"name": {"enum": ["send", "deliver"]}}},
                       "then": {"required": ["params"], "properties": {"nid": {"$ref": "#/$defs/member"}, "params": {
                           "required": ["id"], "additionalProperties": False, "properties": {"id": _ID}}}}},
                      {"if": {"properties": {"name": {"const": "view"}}},
                       "then": {"required": ["params"], "properties": {"nid": {"$ref": "#/$defs/member"}, "params": {
                           "required": ["view", "members"], "additionalProperties": False,
                           "properties": {"view": {"type": ["integer", "string"]},
                                          "members": {"type": "array", "items": {"$ref": "#/$defs/member"}}}}}}},
                      {"if": {"properties": {"name": {"const": "crash"}}},
                       "then": {"required": ["params"], "properties": {"nid": {"type": "null"}, "params": {
                           "required": ["member"], "additionalProperties": False,
                           "properties": {"member": {"$ref": "#/$defs/member"}}}}}},
                      {"if": {"properties": {"name": {"enum": ["block", "unblock", "get_state", "set_state"]}}},
                       "then": {"properties": {"nid": {"$ref": "#/$defs/member"}, "params": {"maxProperties": 0}}}}]},
    },
}


def _history_schema():
    kinds = {k: schemacheck.Validator({**HISTORY_SCHEMA["$defs"][k], "$defs": HISTORY_SCHEMA["$defs"]})
             for k in ("header", "event", "end")}

    def valid(rec, k) -> bool:
        kind = rec.get("kind")
        return type(kind) is str and kind in kinds and (k == 0) == (kind == "header") and kinds[kind].is_valid(rec)
    return valid


@pytest.fixture(scope="module")
def histories(runs):
    return {name: history.from_trace(runs[name]) for name in ("sequencer", "flush")}


def history_cases(histories, every: bool) -> list[tuple[str, Case]]:
    out = []
    valid = _history_schema()
    for name, recs in histories.items():
        picked, seen = [0, len(recs) - 1], set()
        for k, r in enumerate(recs):
            if r.get("kind") == "event" and r["name"] not in seen and (every or len(seen) < 2):
                seen.add(r["name"])
                picked.append(k)
        for k in sorted(picked):
            out += [(name, c) for c in _mutations(recs, k, valid)]
    return out


def _check_history(folder: Path, files: dict) -> dict:
    rows = {}
    for name, (_, c) in files.items():
        res = _invoke("history", str(folder / name), "--json")
        out = res.stdout + res.stderr
        if not c.valid:
            assert res.exit_code == 2, (c.label, out)
            _assert_rejected(res.stderr, name, c)
        rows[name] = json.loads(res.stdout) if res.stdout.strip().startswith("[") else None
    whole = _invoke("history", str(folder), "--json")     # the folder at once: every run its row
    assert len(json.loads(whole.stdout)) == len(files)
    if any(not c.valid for _, c in files.values()):
        assert whole.exit_code == 2
    return rows


# ---------------------------------------------------------------- the tests

def _sample(cases, n, rng):
    return rng.sample(cases, min(n, len(cases)))


def test_the_generator_makes_both_kinds_of_cases(runs, histories):
    rng = random.Random(0)
    for cases in (trace_cases(runs, False), history_cases(histories, False)):
        some = _sample(cases, 400, rng)
        assert 20 < sum(c.valid for _, c in some) < 300, len(cases)


def test_a_sample_of_mutations_is_rejected_alike_on_every_path(tmp_path, runs, histories):
    """The seeded sample: 200 traces on the replay, 53 through TLC in two
    batches (the 48 rejected ones never start it: 5 TLC runs at most), 80
    histories."""
    rng = random.Random(61)
    cases = trace_cases(runs, False)
    model_files = _write_cases(tmp_path / "model", _sample(cases, 200, rng))
    _check_model(tmp_path / "model", model_files)
    for checker, n_valid in (("tlc", 2), ("both", 3)):
        picked = _tlc_sample(cases, n_valid, 24, rng)
        files = _write_cases(tmp_path / checker, picked)
        _check_tlc(tmp_path / checker, files, _check_model(tmp_path / checker, files), checker)
    hist = _write_cases(tmp_path / "history", _sample(history_cases(histories, False), 80, rng))
    _check_history(tmp_path / "history", hist)


@pytest.mark.slow
def test_every_mutation_is_rejected_alike_on_every_path(tmp_path, runs, histories):
    """The whole enumeration on the replay and `history`; TLC on 2000
    invalid cases and 15 valid ones per checker."""
    rng = random.Random(62)
    cases = trace_cases(runs, True)
    files = _write_cases(tmp_path / "model", cases)
    _check_model(tmp_path / "model", files)
    for checker in ("tlc", "both"):
        picked = _tlc_sample(cases, 15, 2000, rng)
        sub = _write_cases(tmp_path / checker, picked)
        _check_tlc(tmp_path / checker, sub, _check_model(tmp_path / checker, sub), checker)
    hist = _write_cases(tmp_path / "history", history_cases(histories, True))
    _check_history(tmp_path / "history", hist)


@pytest.mark.slow
@pytest.mark.xdist_group("spark")
def test_spark_quarantines_each_mutated_file_as_the_local_engine_rejects_it(tmp_path, runs, histories):
    """A folder of mutated files on Spark (`conform --engine spark`,
    `history --engine spark`): every file gets its row, the one the local
    engine gives (a bad file costs no other its verdict), exit 2."""
    from cli_helpers import gc
    rng = random.Random(63)
    files = _write_cases(tmp_path / "t", _sample(trace_cases(runs, True), 120, rng))
    local = _check_model(tmp_path / "t", files)
    r = gc("conform", str(tmp_path / "t"), "--engine", "spark", "--json")
    assert r.returncode == 2, r.stderr
    spark = {Path(x["file"]).name: x for x in json.loads(r.stdout)}
    assert set(spark) == set(files)
    for name, row in local.items():
        if row["verdict"] == "rejected":
            assert spark[name]["verdict"] == "rejected" and spark[name]["reason"] == row["reason"], (name, spark[name])
        else:
            assert spark[name]["verdict"] != "rejected", (name, spark[name], row)
    hist = _write_cases(tmp_path / "h", _sample(history_cases(histories, True), 80, rng))
    here = _check_history(tmp_path / "h", hist)
    del here
    lr = _invoke("history", str(tmp_path / "h"), "--json")
    sr = gc("history", str(tmp_path / "h"), "--engine", "spark", "--json")
    assert lr.exit_code == sr.returncode == 2, sr.stderr
    key = lambda x: (x["verdict"], x.get("reason"), x["run_id"], sorted(x["files"]))     # noqa: E731
    want = sorted(map(key, json.loads(lr.stdout)), key=str)
    got = sorted(map(key, json.loads(sr.stdout)), key=str)
    assert got == want
