"""Reading groupcheck-trace/2 files (and /1, converted on read): docs/trace-format.md.

Theory of operation
-------------------
``load(path_or_paths)`` reads one run: a single file (a globally ordered
trace), or a run's per-node files (a directory, or a list of paths) merged
into one order consistent with happens-before.  It returns a ``Trace``:

* ``header``: the run's header (format 2; a format-1 header is converted,
  ``options`` {}; for per-node files the common header without ``node``);
* ``events``: normalised event dicts, each with ``i`` (global index after
  merging), ``name``, ``nid``, ``params`` (a dict, {} when omitted),
  ``msg`` (None when omitted), ``state`` (the delta: only the variables the
  step assigned, append variables as lists of appended elements; {} when
  the step assigned nothing, None when not logged), ``clock``, ``vc`` (None in a global file) and ``src``
  (``"file:line"`` for messages);
* ``end``: the end record as ``{"quiescent", "clock", "src"}``, or None when
  the run has none (then nothing is judged at the end of the run).

Input is strict: UTF-8, ``\\n`` line ends (a ``\\r`` before one is
rejected: CRLF is not accepted), one JSON object per line with no duplicate
keys and no NaN/Infinity, every record valid under the envelope
(core/trace/trace_schema.json) and every event under its protocol's schema
(core/trace/schemas/<protocol>.json).  The first problem raises ``TraceError``,
whose message is ``file:line: problem`` (``file: cannot read: ...`` when the
file cannot be read at all).  Schemas are checked with compiled predicates
(core/trace/validate.py); the reader never walks accumulated state, so
reading is O(record) per line.

A format-1 file (full post-states; nothing writes it now) is read for
compatibility: it is validated against the format-1 schemas
(core/trace/schemas/v1/), its states are turned into deltas against the member's
previous record (core/trace/writer.py ``state_delta``), and a ``FormatNotice``
warning (shown on stderr) says so.

Per-node files: each file's header names its ``node`` (null or absent: the
environment's file, whose events have ``nid`` null or name the node they
happen to, e.g. a crash); every event carries ``vc``.  A file's own
component (the node's id, or ``"env"``) grows along the file and no
component ever decreases.  Event e of one file happened before event f of
another when f's clock has counted e (``f.vc[j] >= e.vc[j]``, j being e's
file's component).  ``merge`` is Kahn's topological sort of that order:
among the files' next events, those whose predecessors are all placed,
the one with the smallest ``(clock, file)`` goes next (deterministic).  If
none is ready the clocks contradict each other: the cycle (found with
networkx) is reported, naming the records.
"""

from __future__ import annotations

import copy
import gc
import heapq
import json
import os
import tempfile
import warnings
from bisect import bisect_right
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from sys import intern
from typing import Iterable, Iterator, Optional, Union

import msgspec
import networkx as nx
from msgspec import UNSET

from groupcheck.core import progress
from groupcheck.core.trace import (decode as schematypes, format as trace_format, layers,
                                   limits as inputlimits, validate as schemacheck)


FORMAT = trace_format.FORMAT
FORMAT_V1 = "groupcheck-trace/1"     # read for compatibility, converted on read
FORMATS = (FORMAT, FORMAT_V1)
ENV = trace_format.ENV


class FormatNotice(UserWarning):
    """A trace file in format 1, read for compatibility."""


class TraceError(ValueError):
    """A trace that cannot be replayed; ``str()`` starts with ``file:line``
    (or ``file:`` when the file cannot be read)."""

    def __init__(self, path, line: Optional[int], problem: str) -> None:
        super().__init__(f"{path}:{line}: {problem}" if line is not None else f"{path}: {problem}")
        self.path, self.line, self.problem = str(path), line, problem


@dataclass
class Trace:
    path: str
    header: dict
    events: list[dict]
    end: Optional[dict] = None
    files: list[str] = field(default_factory=list)
    # "delta": events as read (format 2); "full": states rebuilt (full_states)
    states: str = "delta"
    # a per-node run's: the nodes that have a file (None: one global file)
    node_files: Optional[set] = None


# ------------------------------------------------------------------ schemas

@lru_cache(maxsize=None)
def _compiled(rel: str, kind: Optional[str] = None):
    """(predicate, schema) for a schema file, or one of its ``$defs`` kinds."""
    s = trace_format.schema(rel)
    if s is None:
        return None
    if kind is not None:
        s = {**s["$defs"][kind], "$defs": s["$defs"]}
    return schemacheck.compile_schema(s, trace_format.schema_registry()), s


def _envelope(fmt: str) -> str:
    return "trace_schema.json" if fmt == FORMAT else "schemas/v1/trace.json"


def _protocol_schema(protocol: str, fmt: str) -> Optional[str]:
    """The event schema of ``protocol`` (schemas/<protocol>.json), None for an unknown one."""
    if not isinstance(protocol, str) or not protocol.isidentifier():
        return None
    rel = f"schemas/{protocol}.json" if fmt == FORMAT else f"schemas/v1/{protocol}.json"
    return rel if trace_format.schema(rel) is not None else None


def _check(rel: str, rec, kind: Optional[str] = None, label: str = "schema") -> Optional[str]:
    pred, schema = _compiled(rel, kind)
    if pred(rec):
        return None
    return f"{label}: {schemacheck.explain(schema, rec, trace_format.schema_registry())}"


class _Validator:
    def __init__(self, rel: str, fill: bool) -> None:
        self.rel, self.fill = rel, fill

    def is_valid(self, rec) -> bool:
        if self.fill and isinstance(rec, dict):
            rec = {"params": {}, "msg": None, "state": None, **rec}
        return _compiled(self.rel)[0](rec)


def protocol_validator(protocol: str, fmt: str = FORMAT) -> Optional[_Validator]:
    """``.is_valid(event record)`` under ``protocol``'s event schema (format
    2: omitted fields filled in as the reader does), or None."""
    rel = _protocol_schema(protocol, fmt)
    return None if rel is None else _Validator(rel, fmt == FORMAT)


@lru_cache(maxsize=None)
def _valid(protocol: Optional[str], fmt: str) -> dict:
    """kind -> the compiled predicate a valid record of that kind passes
    (an event: the envelope's, then ``protocol``'s with omitted fields
    filled in as the reader does); a kind left out has no fast check.
    Looked up once per (protocol, format), not once per record."""
    env = _envelope(fmt)
    kinds = ("header", "event", "end") if fmt == FORMAT else ("header", "event")
    preds = {k: _compiled(env, k)[0] for k in kinds}
    if protocol is None:
        return preds
    rel = _protocol_schema(protocol, fmt)
    if rel is None:
        del preds["event"]          # the slow path says why
        return preds
    event, proto = preds["event"], _compiled(rel)[0]
    if fmt == FORMAT:
        # a record with all three fields is what the filled one would equal (most records: no copy)
        preds["event"] = lambda r: event(r) and proto(r if "params" in r and "msg" in r and "state" in r else
                                                      {"params": {}, "msg": None, "state": None, **r})
    else:
        preds["event"] = lambda r: event(r) and proto(r)
    return preds


def record_problem(rec, protocol: Optional[str] = None, fmt: str = FORMAT) -> Optional[str]:
    """Why ``rec`` (one parsed line of a file in format ``fmt``) is not a
    valid record, or None.  Events are checked against ``protocol``'s
    schema too when it is given."""
    kind = rec.get("kind") if isinstance(rec, dict) else None
    ok = _valid(protocol, fmt).get(kind) if type(kind) is str else None
    if ok is not None and ok(rec):
        return None
    # refused (or no fast check): the same predicates again, and the message
    env = _envelope(fmt)
    kind = rec.get("kind") if isinstance(rec, dict) else None
    kinds = ("header", "event", "end") if fmt == FORMAT else ("header", "event")
    if kind not in kinds:
        if isinstance(rec, dict) and "kind" not in rec:
            return f"schema: kind: missing (one of {', '.join(map(repr, kinds))})"
        return _check(env, rec) or f"schema: kind {kind!r} is not one of {list(kinds)}"
    problem = _check(env, rec, kind)
    if problem is None and protocol is not None and kind == "event":
        rel = _protocol_schema(protocol, fmt)
        if rel is None:
            return f"no event schema for protocol {protocol!r} (core/trace/schemas/{protocol}.json)"
        full = rec if fmt == FORMAT_V1 else {"params": {}, "msg": None, "state": None, **rec}
        problem = _check(rel, full, label=f"schema ({protocol})")
        actions = _actions(protocol) if fmt == FORMAT else None
        if problem is not None and actions and rec["name"] not in actions and ": name: " not in problem:
            # the name first: what else is wrong depends on which action it is
            problem = f"schema ({protocol}): name: {rec['name']!r} is not one of {list(actions)}"
    return problem


# ------------------------------------------------------------------ strict lines

class _Bad(ValueError):
    pass


def _pairs(pairs):
    # keys, and string values (action names, message types, phases), interned:
    # a long run holds millions of records, each with a dozen of the same
    # short strings, which the JSON decoder makes anew for every line
    d = {intern(k): intern(v) if type(v) is str else v for k, v in pairs}
    if len(d) != len(pairs):
        raise _Bad(f"duplicate key {inputlimits.duplicate_key(pairs)!r}")
    return d


def _constant(name):
    raise _Bad(f"{name} is not a JSON number")


_decoder = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_constant)


# The fast decoder (msgspec, about 5x the standard one) cannot report a
# duplicate key: it keeps the last value, so a forged line could hide a value
# behind one (a parser differential).  Its result is kept only when it holds
# as many object members as the line has colons: a colon outside a string is
# one member's, so members read <= members written <= colons, and equality
# proves no member was dropped.  A line without a backslash is counted by
# re-encoding the value (in C, where walking it in Python costs twice as
# much): its strings are then the line's own, so the colons of the encoding
# (members read, plus colons in the strings kept) are at most the line's
# (members written, plus colons in all its strings), and equality again
# proves that nothing was dropped.  Any other line (a duplicate, anything
# msgspec refuses or reads differently: NaN, 1e999, a lone surrogate) is
# decoded by the standard decoder below, which decides and words the error
# exactly as it always has.
_fast = msgspec.json.Decoder()
_encode = msgspec.json.encode
# A value encoded as the writer writes (keys sorted, no spaces: core/trace/writer.py
# ``dumps1``): a line equal to its value so encoded holds exactly the members
# decoded, proved without counting colons (two scans of the line)
_encode_sorted = msgspec.json.Encoder(order="sorted").encode


def _members(x) -> int:
    """The object members in a decoded value, nested ones included."""
    if type(x) is dict:
        n, items = len(x), x.values()
    elif type(x) is list:
        n, items = 0, x
    else:
        return 0
    for v in items:
        if type(v) is dict or type(v) is list:
            n += _members(v)
    return n


def parse_line(line: str):
    """One NDJSON line (without its ``\\n``) as a value; raises ValueError
    with the reason (CRLF, invalid JSON, duplicate key, and the limits of
    core/trace/limits.py: nesting depth, integers beyond 64 bits,
    NaN/Infinity, lone surrogates, a byte order mark)."""
    bad = inputlimits.line_problem(line)
    if bad:
        raise ValueError(bad)
    return _parse(line)


def _parse(line: str):
    """``parse_line`` on a line within the limits (``inputlimits``)."""
    if line.endswith("\r"):
        raise ValueError("CRLF line end (the format requires \\n line ends)")
    try:
        rec = _fast.decode(line)
    except msgspec.DecodeError:
        pass
    else:
        if "\\" not in line:
            if _encode(rec).count(b":") == line.count(":"):
                return rec
        elif _members(rec) == line.count(":"):
            return rec
    if not line.strip():        # (a line the fast decoder takes is not blank)
        raise ValueError("empty line")
    try:
        return _decoder.decode(line)
    except _Bad as e:
        raise ValueError(f"invalid JSON: {e}") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"invalid JSON: {e.msg} at column {e.colno}") from None


MAX_LINE = 1 << 26      # characters: most records are a few hundred, but a FLUSH record carries its view's digest
                        # (a 5-minute chaos soak wrote one of 1.3 MB); a longer line is refused, not parsed


BLOCK = 1 << 20     # bytes read at once (then to the end of the block's last line)


def lines_quarantined(path: Path):
    """(line number, text, None) for each line of a file, or (line number,
    None, problem) for a line that is not UTF-8 or is over ``MAX_LINE``
    (each line decoded on its own: a bad byte is named by its line, and a
    reader that quarantines lines goes on after it).  A file that cannot be
    read raises TraceError.

    The file is read in blocks of whole lines (``BLOCK`` bytes, then to the
    next ``\\n``), each decoded and split at once, a quarter less than
    reading it line by line: a ``\\n`` byte is never part of a longer UTF-8
    sequence, so a block that decodes is lines that each decode to the same
    text.  A block that does not, or that holds a line of ``MAX_LINE``
    characters or more, is read line by line, which names the bad line and
    words its problem (tests/test_trace_input.py compares the two ways)."""
    try:
        f = open(path, "rb")
    except OSError as e:
        raise TraceError(path, None, f"cannot read: {e.strerror or e}") from None
    with f:
        n = 0
        try:
            while True:
                block = f.read(BLOCK)
                if not block:
                    return
                if not block.endswith(b"\n"):
                    block += f.readline()       # to the end of its last line (or of the file)
                try:
                    lines = block.decode("utf-8").split("\n")
                except UnicodeDecodeError:
                    lines = None
                else:
                    if lines[-1] == "":
                        lines.pop()             # (after the block's last \n: no line)
                    if max(map(len, lines)) >= MAX_LINE:
                        lines = None
                if lines is not None:
                    for text in lines:
                        n += 1
                        yield n, text, None
                    continue
                for raw in _raw_lines(block):
                    n += 1
                    try:
                        text = raw.decode("utf-8")
                    except UnicodeDecodeError as e:
                        yield n, None, f"cannot read: not UTF-8 ({e.reason} at byte {e.start} of the line)"
                        continue
                    if len(text) > MAX_LINE:
                        yield n, None, f"a line of {len(text)} characters (at most {MAX_LINE})"
                        continue
                    yield n, text[:-1] if text.endswith("\n") else text, None
        except OSError as e:
            raise TraceError(path, None, f"cannot read: {e.strerror or e}") from None


def _raw_lines(block: bytes) -> list:
    """A block's lines as bytes, each with its ``\\n`` (the last one without,
    at the end of a file that does not end with one)."""
    raws = [x + b"\n" for x in block.split(b"\n")]
    last = raws.pop()
    if last != b"\n":
        raws.append(last[:-1])
    return raws


# ------------------------------------------------------------------ one file

@dataclass
class _File:
    path: str
    header: dict
    events: list            # normalised events, file order
    end: Optional[dict]
    own: Optional[str]      # own vc component ("3", "env"), None for a global file
    fmt: str


def _norm_event(rec: dict, src: str, state) -> dict:
    return _event(rec["name"], rec["nid"], rec.get("params"), rec.get("msg"), state, rec["clock"], rec.get("vc"),
                  src)


def _event(name: str, nid, params, msg, state, clock, vc, src: str) -> dict:
    # the action's name and the message's strings interned, as ``_pairs`` does
    # (msgspec shares keys, not values): a long run holds millions of copies of a few
    if msg:
        for k, v in msg.items():
            if type(v) is str:
                msg[k] = intern(v)      # (a value replaced: the dict keeps its keys, so iterating goes on)
    return {"i": -1, "name": intern(name), "nid": nid, "params": params or {},
            "msg": msg, "state": state, "clock": clock, "vc": vc, "src": src}


@contextmanager
def collector_paused():
    """Python's cyclic garbage collector off for a block.  A file's records
    are trees (no cycle for it to find), yet each of its collections walks
    every record read so far: reading a run with it on costs about twice
    the CPU.  Reference counting still frees whatever is dropped."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def read_file(path) -> _File:
    """Read and check one file (header, events, end); no merging."""
    with collector_paused():
        f, records = _opened(path)
        f.events.extend(records)
        return f


def _opened(path) -> tuple[_File, Iterator]:
    """A file and its events to come (``_records``), its header read and checked."""
    f = _File(str(path), None, [], None, None, None)
    records = _records(Path(path), f)
    next(records, None)
    return f, records


class _Stream:
    """A file's events read as they are iterated, once (``stream``): the
    records are checked as ``load`` checks them and freed once stepped;
    ``len`` is the count read so far.  At the last line the trace's ``end``
    is set; a bad line raises TraceError where it is met."""

    def __init__(self, records, f: _File, trace: "Trace") -> None:
        self._records, self._f, self._trace, self._n = records, f, trace, 0

    def __iter__(self):
        for ev in self._records:
            self._n += 1
            yield ev
        self._trace.end = self._f.end

    def __len__(self) -> int:
        return self._n


def stream(path) -> Trace:
    """One file of format 2 as a Trace whose events are read as the replay
    takes them (``_Stream``): memory bounded by a record, not by the run.
    Raises TraceError for a bad header, and for another format (format 1's
    header is rewritten once the file is read: ``load`` reads it)."""
    f, records = _opened(path)     # (an empty file raises there)
    if f.fmt != FORMAT:
        raise TraceError(path, 1, f"{f.fmt} is read whole (load)")
    t = Trace(f.path, f.header, [], None, [f.path])
    t.events = _Stream(records, f, t)       # type: ignore[assignment]
    return t


def _records(path: Path, f: _File):
    """The checked events of one file as a generator: first None, once the
    header is read and checked (``f.header`` and ``f.fmt`` set), then each
    event; at its end ``f`` holds the end record and the file's own vc
    component (format 1: ``f.header`` converted)."""
    header, fmt, protocol = None, None, None
    count = 0
    end = None
    last_state: dict = {}          # format 1: (nid, layer) -> previous full state
    prev_vc: Optional[dict] = None
    own = None
    valid: dict = {}        # kind -> the compiled predicate of a valid record (``_valid``), once the header is read
    typed = None            # the protocol's typed decoder (``_typed``), once the header is read
    nodes: set = set()      # the header's members, once it is read
    action: dict = {}       # with ``typed``: its names and the types whose strings are interned
    free: frozenset = frozenset()
    name = str(path)
    for n, line, problem in lines_quarantined(path):       # a line not UTF-8, or too long, refused
        if problem is not None:
            raise TraceError(path, n, problem)
        if n % progress.EVERY == 0:
            progress.tick(f"reading {Path(path).name}", n)
        bad = inputlimits.line_problem(line)       # before any decoder recurses into the line
        if bad:
            raise TraceError(path, n, bad)
        if typed is not None and end is None:
            # the usual event: decoded and checked by its action's types
            x = _typed_event(typed, line)
            if x is not None:
                nid, vc = x.nid, x.vc
                if nid is not None and nid not in nodes:
                    raise TraceError(path, n, f"nid: {nid!r} is not one of the header's nodes {sorted(nodes)}")
                if vc is UNSET:
                    vc = None
                if own is not None or vc is not None:
                    prev_vc = _check_vc(path, n, header, own, nid, vc, prev_vc)
                msg, state = x.msg, x.state         # (UNSET: absent)
                if msg is UNSET:
                    msg = None
                elif msg and type(x) in free:
                    for k, v in msg.items():        # interned as ``_event`` does (an enum's strings are already)
                        if type(v) is str:
                            msg[k] = intern(v)
                # ``_event`` in line: the name is interned already; ``i`` its index in the file, the
                # run's when the run is one file (``merge`` numbers a run of several)
                yield {"i": count, "name": action[type(x)], "nid": nid, "params": x.params or {},
                       "msg": msg, "state": None if state is UNSET else state, "clock": x.clock, "vc": vc,
                       "src": f"{name}:{n}"}
                count += 1
                continue
        try:
            rec = _parse(line)
        except ValueError as e:
            raise TraceError(path, n, str(e)) from None
        if n == 1:
            header, fmt = _checked_header(path, rec)
            protocol, nodes = header["protocol"], set(header["nodes"])
            if fmt == FORMAT and header.get("node") is not None:
                own = str(header["node"])
            valid = _valid(protocol, fmt)
            typed = _typed(protocol) if fmt == FORMAT else None
            if typed is not None:
                action, free = typed.names, typed.free_strings
            f.header, f.fmt = header, fmt
            yield None
            continue
        if end is not None:
            raise TraceError(path, n, "a record after the end record")
        # the valid record passes its kind's predicate; any other is looked at again, and worded, by record_problem
        kind = rec.get("kind") if type(rec) is dict else None
        ok = valid.get(kind) if type(kind) is str else None
        if ok is None or not ok(rec):
            problem = record_problem(rec, protocol, fmt)
            if problem:
                raise TraceError(path, n, problem)
        kind = rec["kind"]
        if kind == "header":
            raise TraceError(path, n, "a second header")
        src = f"{name}:{n}"
        if kind == "event" and rec["nid"] is not None and rec["nid"] not in nodes:
            raise TraceError(path, n, f"nid: {rec['nid']!r} is not one of the header's nodes {sorted(nodes)}")
        if kind == "end":
            end = {"quiescent": rec["quiescent"], "clock": rec["clock"], "vc": rec.get("vc"), "src": src}
            if "settled" in rec:
                end["settled"] = rec["settled"]
            continue
        if fmt == FORMAT_V1:
            if rec["i"] != count:
                raise TraceError(path, n, f"event index {rec['i']}, expected {count}")
            ev = _norm_event(rec, src, _v1_delta(path, n, rec, protocol, last_state))
            ev["i"] = count
            count += 1
            yield ev
            continue
        vc = rec.get("vc")
        if own is not None or vc is not None:
            prev_vc = _check_vc(path, n, header, own, rec["nid"], vc, prev_vc)
        ev = _norm_event(rec, src, rec.get("state"))
        ev["i"] = count
        count += 1
        yield ev
    if header is None:
        raise TraceError(path, 1, "empty trace (no header)")
    if fmt == FORMAT_V1:
        warnings.warn(f"{path}: {FORMAT_V1} is read for compatibility (converted to {FORMAT} on read); "
                      f"groupcheck writes {FORMAT} only", FormatNotice, stacklevel=2)
        header = {k: v for k, v in header.items()}
        header["format"] = FORMAT
        header.setdefault("options", {})
        header["converted_from"] = FORMAT_V1
    f.header, f.end, f.own, f.fmt = header, end, own, fmt


def _checked_header(path: Path, rec) -> tuple[dict, str]:
    """A file's first record, checked: a header of a known format whose
    protocol has an event schema; (header, format)."""
    if not isinstance(rec, dict) or rec.get("kind") != "header":
        raise TraceError(path, 1, "kind: the first record must be the header")
    fmt = rec.get("format")
    if fmt not in FORMATS:
        raise TraceError(path, 1, f"format {fmt!r} is not one of {list(FORMATS)}")
    problem = record_problem(rec, fmt=fmt)
    if problem:
        raise TraceError(path, 1, problem)
    if _protocol_schema(rec["protocol"], fmt) is None:
        raise TraceError(path, 1, f"no event schema for protocol {rec['protocol']!r} "
                                  f"(core/trace/schemas/{rec['protocol']}.json)")
    return rec, fmt


def _v1_delta(path: Path, n: int, rec: dict, protocol: str, last_state: dict):
    """A format-1 event's full state as format 2's delta against its
    member's (and layer's) previous one, kept in ``last_state``."""
    state = rec["state"]
    if state is None or rec["nid"] is None:
        return state
    key = (rec["nid"], layers.layer_of(protocol, rec["name"], rec["params"]))
    try:
        delta = trace_format.state_delta(last_state.get(key), state, trace_format.append_vars(protocol, key[1]))
    except ValueError as e:
        raise TraceError(path, n, f"format 1 state cannot be read as a delta: {e}") from None
    last_state[key] = state
    return delta


def _check_vc(path, n: int, header: dict, own, nid, vc, prev_vc):
    """An event's vector clock against its file (a per-node file's events
    carry one, of that node; no component goes back); the file's latest."""
    if own is not None:
        if vc is None:
            raise TraceError(path, n, "an event of a per-node file must carry vc")
        if nid != header["node"]:
            raise TraceError(path, n, f"nid {nid} in the file of node {header['node']}")
    if vc is not None and prev_vc is not None:
        back = [k for k, v in prev_vc.items() if vc.get(k, 0) < v]
        if back:
            raise TraceError(path, n, f"vc component {back[0]!r} went back "
                                      f"({prev_vc[back[0]]} -> {vc.get(back[0], 0)})")
    return vc if vc is not None else prev_vc


def _typed_event(typed, line: str):
    """``line`` decoded by the protocol's typed decoder (``_typed``): the
    action's Struct when the line is certainly a valid event of the
    protocol, else None (the general way reads it, decides and words the
    error).  As ``parse_line`` proves that msgspec dropped no member, the
    colons of the Struct re-encoded (absent fields are left out) must be
    the line's: a key written twice, or one the types do not name, was
    dropped.  A line with a backslash (an escape may spell a colon) or a
    CR before its end (JSON whitespace to msgspec, refused by the format)
    is left to the general way.  A line equal to its Struct encoded as the
    writer writes (``_encode_sorted``) needs no count."""
    if "\\" in line or line.endswith("\r"):
        return None
    try:
        x = typed.decoder.decode(line)
    except msgspec.DecodeError:
        return None
    enc = _encode_sorted(x)
    if enc != line.encode() and enc.count(b":") != line.count(":"):
        return None
    return x if typed.rest_ok(x) else None


@lru_cache(maxsize=None)
def _actions(protocol: str) -> tuple:
    """The action names ``protocol``'s schemas admit (sorted), () if unknown."""
    typed = _typed(protocol)
    return tuple(sorted(set(typed.names.values()))) if typed is not None else ()


@lru_cache(maxsize=None)
def _typed(protocol: str):
    """The typed decoder of ``protocol``'s events in format 2
    (core/trace/decode.py), or None when its schemas have none."""
    rel = _protocol_schema(protocol, FORMAT)
    return None if rel is None else schematypes.for_protocol(_envelope(FORMAT), rel)


# ------------------------------------------------------------------ runs

HEADER_KEYS = ("protocol", "nodes", "constants", "options", "seed", "faults", "impl", "impl_version", "run_id")


def _common_header(files: list[_File]) -> dict:
    first = files[0]
    for f in files[1:]:
        for k in HEADER_KEYS:
            if f.header.get(k) != first.header.get(k):
                raise TraceError(f.path, 1, f"header {k} {f.header.get(k)!r} differs from "
                                            f"{first.path}'s {first.header.get(k)!r}: not one run")
    envs = [f for f in files if f.own is None]
    if len(envs) > 1:
        raise TraceError(envs[1].path, 1, "two files without a node (global or environment files) in one run")
    for f in envs:
        f.own = ENV
    for f in files:
        _check_clocks(f)
    owns = [f.own for f in files]
    dup = {o for o in owns if owns.count(o) > 1}
    if dup:
        o = sorted(dup)[0]
        raise TraceError([f for f in files if f.own == o][1].path, 1, f"two files for node {o!r}")
    h = {k: v for k, v in first.header.items() if k != "node"}
    return h


def _check_clocks(f: _File) -> None:
    """Every event of a run's file has a clock whose own component grows."""
    prev = 0
    for ev in f.events:
        path, line = ev["src"].rsplit(":", 1)
        if ev["vc"] is None:
            raise TraceError(path, int(line), "an event of a per-node run must carry vc")
        c = ev["vc"].get(f.own, 0)
        if c <= prev:
            raise TraceError(path, int(line), f"vc component {f.own!r} must grow along its file "
                                              f"(counting this record): {prev} -> {c}")
        prev = c


def _check_crash_clocks(files: list[_File]) -> None:
    """An environment ``Crash`` record's clock counts the crashed node's
    last record (docs/trace-format.md, "Per-node files"): its component of
    the node equals the node's own component in the last of the node's
    records that has not seen the crash (whose ``"env"`` component is below
    the Crash record's; 0 when there is none).  A record that has seen it
    came after it (a node logs again only after a recovery the environment
    handed it).  A Crash that counts fewer records (missing one the node
    logged before it) or more (one the file does not hold before it)
    contradicts the files: rejected at the Crash record's line, field
    ``vc``."""
    by_own = {f.own: f for f in files}
    for env in (f for f in files if f.own == ENV):
        for ev in env.events:
            if ev["name"] != "Crash" or ev["nid"] is None or not isinstance(ev["vc"], dict):
                continue
            node = by_own.get(str(ev["nid"]))
            if node is None:
                continue            # no file of that node: the run is incomplete, not this record wrong
            c, me = ev["vc"].get(node.own, 0), ev["vc"].get(ENV, 0)
            before = [x for x in node.events if x["vc"].get(ENV, 0) < me]
            last = before[-1]["vc"].get(node.own, 0) if before else 0
            if c != last:
                path, line = ev["src"].rsplit(":", 1)
                at = (f"{before[-1]['src']} ({before[-1]['name']}, vc[{node.own!r}] = {last})" if before
                      else "none: the node logged nothing before it")
                raise TraceError(path, int(line), f"vc: the Crash of node {ev['nid']} has vc[{node.own!r}] = {c}, "
                                                  f"but must count the node's last record, {at}")


def merge(files: list[_File]) -> list[dict]:
    """The files' events in one order consistent with happens-before (see
    the module docstring), ``i`` assigned."""
    by_own = {f.own: k for k, f in enumerate(files)}
    counts = [[ev["vc"].get(f.own, 0) for ev in f.events] for f in files]
    # deps[k][x]: for event x of file k, the (file, index) of the latest event
    # of each other file it has seen
    pos = [0] * len(files)
    out: list[dict] = []
    total = sum(len(f.events) for f in files)

    def need(k: int, x: int) -> list[tuple[int, int]]:
        """Events (file, index) that must be placed before event x of file k."""
        vc = files[k].events[x]["vc"]
        req = []
        for comp, val in vc.items():
            j = by_own.get(comp)
            if j is None or j == k:
                continue
            idx = bisect_right(counts[j], val) - 1
            if idx >= 0:
                req.append((j, idx))
        return req

    def ready(k: int) -> bool:
        return all(pos[j] > idx for j, idx in need(k, pos[k]))

    heap: list = []
    waiting: set[int] = set()

    def offer(k: int) -> None:
        if pos[k] < len(files[k].events):
            if ready(k):
                ev = files[k].events[pos[k]]
                heapq.heappush(heap, (ev["clock"], k, pos[k]))
            else:
                waiting.add(k)

    for k in range(len(files)):
        offer(k)
    while len(out) < total:
        if not heap:
            _cycle(files, pos, need)
        _, k, x = heapq.heappop(heap)
        ev = files[k].events[x]
        ev["i"] = len(out)
        out.append(ev)
        pos[k] += 1
        offer(k)
        for w in list(waiting):
            if ready(w):
                waiting.discard(w)
                offer(w)
    return out


def _cycle(files, pos, need) -> None:
    g = nx.DiGraph()
    for k, f in enumerate(files):
        if pos[k] < len(f.events):
            for j, idx in need(k, pos[k]):
                if pos[j] <= idx:
                    g.add_edge(k, j)
    try:
        cyc = nx.find_cycle(g)
    except nx.NetworkXNoCycle:
        cyc = list(g.edges)[:1]
    names = [f"{files[k].events[pos[k]]['src']} ({files[k].events[pos[k]]['name']}, vc "
             f"{files[k].events[pos[k]]['vc']})" for k, _ in cyc]
    k0 = cyc[0][0]
    path, line = files[k0].events[pos[k0]]["src"].rsplit(":", 1)
    raise TraceError(path, int(line), "vector clocks form a cycle (no order is consistent with them): "
                     + " waits for ".join(names + names[:1]))


def _files_of(path_or_paths) -> list[Path]:
    if isinstance(path_or_paths, (str, Path)):
        p = Path(path_or_paths)
        return sorted(p.glob("*.ndjson")) if p.is_dir() else [p]
    out: list[Path] = []
    for p in map(Path, path_or_paths):
        out.extend(sorted(p.glob("*.ndjson")) if p.is_dir() else [p])
    return out


def load(path_or_paths: Union[str, Path, Iterable]) -> Trace:
    """One run: a file, or a run's per-node files (a directory of them, or a
    list of paths).  Raises TraceError."""
    paths = _files_of(path_or_paths)
    if not paths:
        raise TraceError(path_or_paths, None, "cannot read: no *.ndjson file")
    files = [read_file(p) for p in paths]
    ends = [f.end for f in files if f.end is not None]
    if len(ends) > 1:
        raise TraceError(ends[1]["src"].rsplit(":", 1)[0], int(ends[1]["src"].rsplit(":", 1)[1]),
                         "a second end record in one run")
    end = ends[0] if ends else None
    if len(files) == 1:
        f = files[0]            # its events numbered as read
        node = f.header.get("node")
        return Trace(f.path, f.header, f.events, end, [f.path], node_files=None if node is None else {node})
    header = _common_header(files)
    _check_crash_clocks(files)
    events = merge(files)
    where = str(path_or_paths) if isinstance(path_or_paths, (str, Path)) else str(Path(paths[0]).parent)
    return Trace(where, header, events, end, [f.path for f in files],
                 node_files={f.header["node"] for f in files if f.header.get("node") is not None})


def from_records(records: list[dict], path: str = "<memory>") -> Trace:
    """A run held in memory (header first, as the writer makes them; format 1
    or 2) as a Trace, without the file checks (tests, in-process replays)."""
    fd, tmp = tempfile.mkstemp(suffix=".ndjson")
    os.close(fd)
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            f.write(trace_format.dumps(records))
        t = load(tmp)
    finally:
        os.unlink(tmp)
    for ev in t.events:
        ev["src"] = f"{path}:{ev['src'].rsplit(':', 1)[1]}"
    t.path = path
    t.files = [path]
    return t


def _header_of(path: Path) -> Optional[dict]:
    try:
        with open(path, "r", encoding="utf-8", newline="\n") as f:
            rec = parse_line(f.readline().rstrip("\n"))
        return rec if isinstance(rec, dict) else None
    except (OSError, ValueError):
        return None


HISTORY_FORMAT = "groupcheck-history/"     # conformance/history.py reads these: not traces


def trace_files(paths, skipped: Optional[list] = None) -> list[Path]:
    """Files named, plus every ``*.ndjson`` under the directories named, sorted.
    Under a directory, a black-box history (``groupcheck history`` reads it:
    the ``history/`` folder of ``cluster run`` or ``simulate --history``) is
    not a trace: it is left out and, when ``skipped`` is given, appended to it
    as ``(path, why)``.  A file named explicitly is always kept, so that a
    history given to ``conform`` is rejected with its reason."""
    out: list[Path] = []
    for p in map(Path, paths):
        if not p.is_dir():
            out.append(p)
            continue
        for f in sorted(p.rglob("*.ndjson")):
            fmt = str((_header_of(f) or {}).get("format", ""))
            if fmt.startswith(HISTORY_FORMAT):
                if skipped is not None:
                    skipped.append((f, f"a history ({fmt}): groupcheck history reads it"))
                continue
            out.append(f)
    return out


def trace_runs(paths, skipped: Optional[list] = None) -> list[Union[Path, list[Path]]]:
    """The runs among ``paths`` (files and directories, searched
    recursively): a global file is a run; per-node files (a header with
    ``node``) are grouped by directory and ``run_id`` into one run (a list
    of paths), with the environment's file of that run."""
    singles: list = []
    groups: dict = {}
    for p in trace_files(paths, skipped):
        h = _header_of(p)
        if h is not None and h.get("format") == FORMAT and h.get("node") is not None:
            groups.setdefault((str(p.parent), _run_id(h)), []).append(p)
        else:
            singles.append((p, h))
    rest = []
    for p, h in singles:
        key = (str(p.parent), _run_id(h or {}))
        if key in groups and (h or {}).get("format") == FORMAT:
            groups[key].append(p)         # the environment's file of a per-node run
        else:
            rest.append(p)
    return sorted(rest + [sorted(g) for g in groups.values()],
                  key=lambda r: str(r[0] if isinstance(r, list) else r))


def _run_id(header: dict):
    """A header's run_id to group files by: a string, else None (the file's
    reader rejects such a header, named)."""
    rid = header.get("run_id")
    return rid if type(rid) is str else None


def whole(trace: Trace) -> Trace:
    """``trace`` with whole member states (``full_states``), unless it has them."""
    if trace.states == "full":
        return trace
    return Trace(trace.path, trace.header, full_states(trace), trace.end, trace.files, "full", trace.node_files)


def full_states(trace: Trace) -> list[dict]:
    """The events with ``state`` rebuilt as each member's whole post-state
    (the previous one updated by the delta), as format 1 had them.  A
    TEMPORARY adapter for the replays that still compare whole states: it
    needs every variable logged in a member's first record (what
    core/trace/writer.py writes); an event whose state was not logged keeps
    None."""
    protocol = trace.header["protocol"]
    full: dict = {}
    out = []
    for ev in trace.events:
        st = ev["state"]
        if st is not None and ev["nid"] is not None:
            key = (ev["nid"], layers.layer_of(protocol, ev["name"], ev["params"]))
            appends = trace_format.append_vars(protocol, key[1])
            cur = copy.deepcopy(full.get(key) or {})      # no sharing between events
            for k, v in st.items():
                if k in appends:
                    old = cur.get(k) or []
                    if appends[k] == "sequence":
                        cur[k] = list(old) + list(v)
                    else:
                        cur[k] = sorted(list(old) + [x for x in v if x not in old])
                else:
                    cur[k] = v
            for k in appends:
                cur.setdefault(k, [])
            full[key] = cur
            st = cur
        out.append({**ev, "state": st})
    return out
