"""Reading and validating groupcheck-trace/1 files (docs/trace-format.md).

Theory of operation
-------------------
A trace is NDJSON: one header record, then event records.  Every line is
parsed and validated against ``impl/trace_schema.json`` (JSON Schema 2020-12,
the protocol-independent envelope), and every event also against its
protocol's schema ``impl/schemas/<protocol>.json`` (action names, parameters,
state variables), the protocol being the header's.  The header must come
first and only once, and event indices must run 0, 1, 2, ...  The first
problem makes the whole run *rejected*: ``load`` raises ``TraceError`` whose
message names ``file:line``.  ``record_problem`` checks one parsed record the
same way (the pipeline's ingest uses it row by row).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import jsonschema

FORMAT = "groupcheck-trace/1"


class TraceError(ValueError):
    """A trace that cannot be replayed; ``str()`` starts with ``file:line``."""

    def __init__(self, path, line: int, problem: str) -> None:
        super().__init__(f"{path}:{line}: {problem}")
        self.path, self.line, self.problem = str(path), line, problem


@dataclass
class Trace:
    path: str
    header: dict
    events: list[dict]


def _schema_text(rel: str) -> str:
    try:
        from importlib.resources import files
        return (files("groupcheck.impl").joinpath(*rel.split("/"))).read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError):   # package data not installed
        return (Path(__file__).resolve().parent.parent / "impl" / rel).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def validator() -> jsonschema.Draft202012Validator:
    """The envelope: header, and the fields every event has."""
    schema = json.loads(_schema_text("trace_schema.json"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(_inline_refs(schema))


@lru_cache(maxsize=None)
def protocol_validator(protocol: str) -> jsonschema.Draft202012Validator | None:
    """The event schema of ``protocol`` (impl/schemas/<protocol>.json), or
    None when there is none."""
    if not protocol.replace("_", "").isalnum():
        return None
    try:
        schema = json.loads(_schema_text(f"schemas/{protocol}.json"))
    except (FileNotFoundError, OSError):
        return None
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(_inline_refs(schema))


def _inline_refs(schema: dict) -> dict:
    """Replace every local ``{"$ref": "#/$defs/X"}`` with X itself.  The
    schema is not recursive, and jsonschema's per-use reference resolution
    was most of the cost of checking a trace (every delivered pair resolved
    ``nid`` anew)."""
    defs = schema.get("$defs", {})

    def walk(node, depth=0):
        if depth > 50:
            raise ValueError("trace schema: $ref nesting too deep (recursive schema?)")
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/") and len(node) == 1:
                return walk(defs[ref[len("#/$defs/"):]], depth + 1)
            return {k: walk(v, depth + 1) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v, depth + 1) for v in node]
        return node

    return walk(schema)


@lru_cache(maxsize=4)
def _kind_validator(kind: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(validator().schema["$defs"][kind])


def _problem(rec) -> str | None:
    kind = rec.get("kind") if isinstance(rec, dict) else None
    # The record names its branch: validating against it alone skips the
    # oneOf, which walked every delivered list twice (98% of conform time).
    if kind in ("header", "event") and _kind_validator(kind).is_valid(rec):
        return None
    errs = sorted(validator().iter_errors(rec), key=lambda e: (len(list(e.absolute_path)), e.message))
    if not errs:
        return None
    # oneOf(header, event) hides the useful message: re-validate against the branch the kind names.
    kind = rec.get("kind") if isinstance(rec, dict) else None
    if kind in ("header", "event"):
        errs2 = list(_kind_validator(kind).iter_errors(rec))
        if errs2:
            e = min(errs2, key=lambda e: len(list(e.absolute_path)))
            where = "/".join(str(x) for x in e.absolute_path)
            return f"schema: {where + ': ' if where else ''}{e.message}"
    return f"schema: {errs[0].message}"


def _protocol_problem(rec: dict, protocol: str) -> str | None:
    v = protocol_validator(protocol)
    if v is None:
        return f"no event schema for protocol {protocol!r} (impl/schemas/{protocol}.json)"
    if v.is_valid(rec):
        return None
    e = min(v.iter_errors(rec), key=lambda e: (len(list(e.absolute_path)), e.message))
    where = "/".join(str(x) for x in e.absolute_path)
    return f"schema ({protocol}): {where + ': ' if where else ''}{e.message}"


def record_problem(rec, protocol: str | None = None) -> str | None:
    """Why ``rec`` (one parsed line) is not a valid record, or None.  Events
    are checked against ``protocol``'s schema too when it is given."""
    problem = _problem(rec)
    if problem is None and protocol is not None and rec.get("kind") == "event":
        problem = _protocol_problem(rec, protocol)
    return problem


class LineError(ValueError):
    """A line that is not one strict JSON object (the reason, without file:line)."""


def _no_constant(name: str):
    raise LineError(f"invalid JSON: {name} is not a JSON number")


def _unique_keys(pairs):
    obj = {}
    for k, v in pairs:
        if k in obj:
            raise LineError(f"invalid JSON: duplicate key {k!r}")
        obj[k] = v
    return obj


def parse_line(line: str):
    r"""One NDJSON line as strict JSON (RFC 8259): ``NaN``/``Infinity``, a
    duplicate key, or a ``\r`` before the line end raise ``LineError``.
    Python's json module accepts all three, and each lets a forged trace say
    two things at once (a duplicate ``nid``, say) or a number no other reader
    parses.  The format's one rule for line ends is ``\n``: a CRLF file is
    rejected at its first line rather than half-accepted."""
    if line.endswith("\r"):
        raise LineError("CRLF line end: the format requires \\n line ends")
    try:
        return json.loads(line, parse_constant=_no_constant, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as e:
        raise LineError(f"invalid JSON: {e.msg} at column {e.colno}") from None


def load(path: str | Path) -> Trace:
    path = Path(path)
    header, events = None, []
    try:
        text = path.read_bytes().decode("utf-8")   # bytes: read_text would turn CRLF into \n
    except (OSError, UnicodeDecodeError) as e:
        raise TraceError(path, 0, f"cannot read: {e}") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        raise TraceError(path, 1, "empty trace (no header)")
    for n, line in enumerate(lines, start=1):
        try:
            rec = parse_line(line)
        except LineError as e:
            raise TraceError(path, n, str(e)) from None
        problem = _problem(rec)
        if problem:
            raise TraceError(path, n, problem)
        if n == 1:
            if rec["kind"] != "header":
                raise TraceError(path, n, "the first record must be the header")
            header = rec
            continue
        if rec["kind"] != "event":
            raise TraceError(path, n, "a second header")
        problem = _protocol_problem(rec, header["protocol"])
        if problem:
            raise TraceError(path, n, problem)
        if rec["i"] != len(events):
            raise TraceError(path, n, f"event index {rec['i']}, expected {len(events)}")
        events.append(rec)
    return Trace(str(path), header, events)


def trace_files(paths) -> list[Path]:
    """Files named, plus every ``*.ndjson`` under the directories named, sorted."""
    out: list[Path] = []
    for p in map(Path, paths):
        out.extend(sorted(p.rglob("*.ndjson")) if p.is_dir() else [p])
    return out
