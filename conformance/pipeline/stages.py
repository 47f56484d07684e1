"""The conformance pipeline: generate / ingest -> Parquet -> check -> coverage (docs/pipeline.md).

Theory of operation
-------------------
Traces become a Parquet dataset with one row per event (docs/pipeline.md):
the run's header fields are columns of every row (``run_id``, ``protocol``,
``seed``, ``nodes``, ``constants`` and ``faults`` as JSON, ``impl``,
``impl_version``, and ``source``: the file a row came from, or the seed for
a simulated run), then the event's fields (``i``, ``name``, ``nid``, and
``params``/``msg``/``state`` as JSON strings, ``clock``); the dataset is
partitioned by ``protocol`` (``DIR/protocol=sequencer/*.parquet``), each
run's rows in one file in one piece, in event order.  Beside it, in folders
Spark and pyarrow both skip (leading ``_``): ``_runs`` (one row per run: the
whole header, counts, the first reason a row of it was rejected, and where
its event rows are: ``part``, ``part_row``), ``_rejected`` (file, line,
reason, raw text of every quarantined input line) and, after a check,
``_verdicts``.

Two engines run the same stages on the same per-run functions: ``local``
(this process, pyarrow) and ``spark`` (PySpark: seeds or files spread over
a few tasks per core, each task writing its runs' event files with pyarrow
and sending its run rows back; for the check, the runs cut into slices of
whole runs of one file, about four per core, and each task reading its
slices with pyarrow, so no shuffle and no sort.  A dataset whose run rows
do not say where their events are (an older layout) is checked the old
way: event rows hashed on ``(source, run_id)``, sorted within each
partition, and streamed to ``mapInArrow``).
Every run gets one verdict row.  The replay is the protocol's own
(conformance/replay/registry.py).  Where a protocol's replay judges properties on
its members' delivery histories (its registration's ``judged``: SEQUENCER,
FLUSH and their compositions, over the ring too), the
same properties are ALSO judged apart from the replay, by the catalogue
(core/properties.py) on the history projected from the run's logged
records, in the same task as the replay (on Spark, a run of
``SPLIT_EVENTS`` or more in a task of its own); a run whose property verdict
or witness differs from its replay's is flagged (``agree = False``) and, if
either side found a violation, is a violation.  STABLE's and the ring's
properties read purges and tokens, which no history shows: their replays
judge them alone.

Accounting: rows in = rows accepted + rows rejected, asserted per file and
in total (an input row is a line of an NDJSON file; an unreadable or empty
file counts as one row, rejected).  A run with any rejected row is not
replayed: its verdict is ``rejected`` with its first reason, worded as
``groupcheck conform`` words it (``file:line: problem``).

Coverage: the TLA+ actions the traces took against the protocol's action
list, and the distinct model states the replays passed through (the
candidates consistent with the trace, ``RunReport.visited``) against the
reachable set of the model built with the same constants, when the Python
explorer finishes it under ``COVERAGE_MAX_STATES``; otherwise ``reachable``
is unknown (None).
"""

from __future__ import annotations

import dataclasses
import hashlib
import heapq
import json
import os
import pickle
import shutil
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache, partial
from pathlib import Path
from typing import Iterable, Optional

from groupcheck.conformance import findings
from groupcheck.conformance.history import from_trace
from groupcheck.core.trace.history import from_records
from groupcheck.conformance.pipeline.spark import parallelism, progress, session
from groupcheck.conformance.replay import registry
from groupcheck.conformance.replay.conform import replay
from groupcheck.conformance.replay.registry import available, get, UnknownProtocol
from groupcheck.core import properties
from groupcheck.core.progress import tick
from groupcheck.core.trace import layers as trace_layers, writer as tracefile
from groupcheck.core.trace.reader import (collector_paused, FORMAT, FORMAT_V1, FORMATS, lines_quarantined,
                                          parse_line, record_problem, Trace, trace_files, TraceError)
from groupcheck.model.core import explore
from groupcheck.model.registry import model_class
from groupcheck.model.values import normalize, to_tla


ENGINES = ("local", "spark")
LAYOUT = "groupcheck-pipeline/2"
COVERAGE_MAX_STATES = 20_000
# Runs draw their sizes from the seed, so a campaign spreads over many
# constant sets; exploring each one's reachable set cost minutes per protocol.
# The state coverage is computed for the constant sets most runs share.
COVERAGE_MAX_MODELS = 3

# Event rows: the run's header fields, then the event's.  ``protocol`` is the partition column.
EVENT_COLUMNS = ("run_id", "protocol", "seed", "nodes", "constants", "faults", "impl", "impl_version",
                 "source", "i", "name", "nid", "params", "msg", "state", "clock")
# What the replay reads of an event row: the run's key and the event's own
# fields (the header columns repeated on every row are in the run row).
CHECK_COLUMNS = ("source", "run_id", "i", "name", "nid", "params", "msg", "state", "clock")
RUN_COLUMNS = ("source", "run_id", "protocol", "seed", "nodes", "constants", "faults", "impl",
               "impl_version", "header", "events", "rows_in", "rejected", "reject_reason", "summary", "end",
               "part", "part_row")
REJECT_COLUMNS = ("file", "line", "reason", "raw", "run_id", "protocol")
VERDICT_COLUMNS = ("file", "run_id", "protocol", "verdict", "events", "first_bad_event", "reason",
                   "candidates_max", "stops_conforming_at", "stage", "replay_verdict", "properties_failed", "properties_by", "agree",
                   "finding", "finding_why", "plan", "violations")


# the replay verdicts after which the catalogue's properties are judged apart too
JUDGED_VERDICTS = ("ok", "violation", "documented", "incomplete")


class PipelineError(RuntimeError):
    pass


# ---------------------------------------------------------------- schemas

def _arrow_schemas():
    import pyarrow as pa     # lazy: pyarrow is heavy and only this path needs it
    events = pa.schema([
        ("run_id", pa.string()), ("protocol", pa.string()), ("seed", pa.int64()),
        ("nodes", pa.list_(pa.int64())), ("constants", pa.string()), ("faults", pa.string()),
        ("impl", pa.string()), ("impl_version", pa.string()), ("source", pa.string()),
        ("i", pa.int64()), ("name", pa.string()), ("nid", pa.int64()), ("params", pa.string()),
        ("msg", pa.string()), ("state", pa.string()), ("clock", pa.float64())])
    runs = pa.schema([
        ("source", pa.string()), ("run_id", pa.string()), ("protocol", pa.string()), ("seed", pa.int64()),
        ("nodes", pa.list_(pa.int64())), ("constants", pa.string()), ("faults", pa.string()),
        ("impl", pa.string()), ("impl_version", pa.string()), ("header", pa.string()),
        ("events", pa.int64()), ("rows_in", pa.int64()), ("rejected", pa.int64()),
        ("reject_reason", pa.string()), ("summary", pa.string()), ("end", pa.string()),
        ("part", pa.string()), ("part_row", pa.int64())])
    rejected = pa.schema([("file", pa.string()), ("line", pa.int64()), ("reason", pa.string()),
                          ("raw", pa.string()), ("run_id", pa.string()), ("protocol", pa.string())])
    verdicts = pa.schema([
        ("file", pa.string()), ("run_id", pa.string()), ("protocol", pa.string()), ("verdict", pa.string()),
        ("events", pa.int64()), ("first_bad_event", pa.int64()), ("reason", pa.string()),
        ("candidates_max", pa.int64()), ("stops_conforming_at", pa.int64()), ("stage", pa.string()),
        ("replay_verdict", pa.string()), ("properties_failed", pa.list_(pa.string())), ("properties_by", pa.string()), ("agree", pa.bool_()),
        ("finding", pa.string()), ("finding_why", pa.string()), ("plan", pa.string()),
        # every violation on its own (conformance/replay/engine.py RunReport.violations)
        ("violations", pa.list_(pa.struct([("property", pa.string()), ("event", pa.int64()),
                                           ("witness", pa.string()), ("finding", pa.string()),
                                           ("finding_why", pa.string())])))])
    return events, runs, rejected, verdicts


def _spark_event_schema():
    from pyspark.sql.types import (ArrayType, DoubleType, LongType, StringType, StructField, StructType)     # lazy: pyspark is heavy and only this path needs it
    types = {"seed": LongType(), "nodes": ArrayType(LongType()), "i": LongType(), "nid": LongType(),
             "clock": DoubleType()}
    return StructType([StructField(c, types.get(c, StringType()), True) for c in EVENT_COLUMNS])


# ---------------------------------------------------------------- records <-> rows

def _js(v) -> Optional[str]:
    return None if v is None else json.dumps(v, sort_keys=True, separators=(",", ":"))


def _int_or_none(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _header_cols(header: dict, source: str) -> dict:
    nodes = header.get("nodes")
    return {"run_id": header.get("run_id"), "protocol": header.get("protocol"),
            "seed": _int_or_none(header.get("seed")),
            "nodes": [x for x in nodes if _int_or_none(x) is not None] if isinstance(nodes, list) else None,
            "constants": _js(header.get("constants")), "faults": _js(header.get("faults")),
            "impl": header.get("impl"), "impl_version": header.get("impl_version"), "source": source}


def _event_row(hc: dict, ev: dict) -> dict:
    return {**hc, "i": ev["i"], "name": ev["name"], "nid": ev.get("nid"), "params": _js(ev.get("params")),
            "msg": _js(ev.get("msg")), "state": _js(ev.get("state")), "clock": float(ev["clock"])}


def _record(row: dict) -> dict:
    """An event row back to a normalised event (core/trace/reader.py)."""
    return {"i": row["i"], "name": row["name"], "nid": row["nid"],
            "params": json.loads(row["params"]) if row["params"] is not None else {},
            "msg": json.loads(row["msg"]) if row["msg"] is not None else None,
            "state": json.loads(row["state"]) if row["state"] is not None else None,
            # a file is replayed only when every line was accepted: the header is line 1 and
            # event i line i + 2, so the src names the line as the local reader does
            "clock": row["clock"], "vc": None, "src": f"{row['source']}:{row['i'] + 2}"}


def _end_of(rec: dict) -> dict:
    """An end record as the run row keeps it (``settled`` only when written)."""
    return {k: rec[k] for k in ("quiescent", "settled", "clock") if k in rec}


def _run_row(header: Optional[dict], source: str, events: int, rows_in: int, rejected: int,
             reason: Optional[str], summary: Optional[dict] = None, end: Optional[dict] = None) -> dict:
    hc = _header_cols(header or {}, source)
    return {**hc, "header": _js(header), "events": events, "rows_in": rows_in, "rejected": rejected,
            "reject_reason": reason, "summary": _js(summary), "end": _js(end)}


# ---------------------------------------------------------------- per-run work (runs in Spark tasks too)

def _simulated(protocol: str, faults: str, options: dict, seed: int):
    """One simulated run -> (run row, event rows, rejected rows)."""
    records, summary = get(protocol).simulate(seed, faults, options)
    header = records[0]
    events = [r for r in records[1:] if r["kind"] == "event"]
    ends = [_end_of(r) for r in records[1:] if r["kind"] == "end"]
    source = f"{protocol}:seed={seed}"
    hc = _header_cols(header, source)
    rows = [_event_row(hc, {**ev, "i": i}) for i, ev in enumerate(events)]
    return _run_row(header, source, len(rows), len(records), 0, None, summary, ends[0] if ends else None), rows, []


def _simulated_drawn(protocol: str, seed: int):
    """One simulated run whose size and faults the protocol draws from the seed."""
    faults, options = get(protocol).draw(seed)
    return _simulated(protocol, faults, {**get(protocol).default_options, **options}, seed)


def _ingested(path: str, cwd: Optional[str] = None):
    """One NDJSON trace file -> (run row, accepted event rows, rejected rows).
    Checks what ``traces.read_file`` checks, line by line, but keeps going
    after the first problem so every bad line is quarantined with its
    reason.  Format 1 files are converted on read, as ``traces.load`` does.
    A relative ``path`` is read from ``cwd`` (the driver's folder: a cluster's
    executors run elsewhere) and named as given."""
    with collector_paused():        # as traces.read_file: the rows are trees the collector would walk again and again
        return _ingest(path, cwd)


def _ingest(path: str, cwd: Optional[str]):
    rejected: list[dict] = []

    def reject(line: int, problem: str, raw: Optional[str], run_id=None, protocol=None):
        rejected.append({"file": path, "line": line, "reason": problem, "raw": raw,
                         "run_id": run_id, "protocol": protocol})

    try:
        # a line that is not UTF-8, or too long, is quarantined on its own (its text None)
        read = list(lines_quarantined(Path(cwd or "", path)))
    except TraceError as e:
        reject(e.line or 0, e.problem, None)
        return _finish_file(path, None, [], rejected, 1)
    if not read:
        reject(1, "empty trace (no header)", "")
        return _finish_file(path, None, [], rejected, 1)
    lines = [t for _, t, _ in read]
    unreadable = {n: problem for n, _, problem in read if problem is not None}

    header, fmt = None, None
    try:
        if 1 in unreadable:
            raise ValueError(unreadable[1])
        rec = parse_line(lines[0])
        fmt = rec.get("format") if isinstance(rec, dict) else None
        if not isinstance(rec, dict) or rec.get("kind") != "header":
            problem = "kind: the first record must be the header"
        elif fmt not in FORMATS:
            problem = f"format {fmt!r} is not one of {list(FORMATS)}"
        else:
            problem = record_problem(rec, fmt=fmt)
    except ValueError as e:
        problem = str(e)
    if problem is None:
        header = rec
    else:
        reject(1, problem, lines[0])
    run_id = header.get("run_id") if header else None
    protocol = header.get("protocol") if header else None
    hc = _header_cols(header, path) if header else None
    rows = []
    end = None
    last_state: dict = {}
    for n, line in enumerate(lines[1:], start=2):
        if header is None:
            reject(n, "the run's header (line 1) was rejected", line)
            continue
        try:
            if n in unreadable:
                raise ValueError(unreadable[n])
            rec = parse_line(line)
        except ValueError as e:
            reject(n, str(e), line, run_id, protocol)
            continue
        problem = record_problem(rec, protocol, fmt)
        if problem is None and rec["kind"] == "header":
            problem = "a second header"
        if problem is None and end is not None:
            problem = "a record after the end record"
        if problem is None and fmt == FORMAT_V1 and rec["i"] != len(rows):
            problem = f"event index {rec['i']}, expected {len(rows)}"
        if problem is None and fmt == FORMAT_V1 and rec["state"] is not None and rec["nid"] is not None:
            key = (rec["nid"], trace_layers.layer_of(protocol, rec["name"], rec["params"]))
            try:
                delta = tracefile.state_delta(last_state.get(key), rec["state"],
                                              tracefile.append_vars(protocol, key[1]))
                last_state[key] = rec["state"]
                rec = {**rec, "state": delta}
            except ValueError as e:
                problem = f"format 1 state cannot be read as a delta: {e}"
        if problem:
            reject(n, problem, line, run_id, protocol)
            continue
        if rec["kind"] == "end":
            end = _end_of(rec)
            continue
        rows.append(_event_row(hc, {**rec, "i": len(rows)}))
    if header is not None and fmt == FORMAT_V1:
        header = {**header, "format": FORMAT, "options": header.get("options", {}), "converted_from": FORMAT_V1}
    return _finish_file(path, header, rows, rejected, len(lines), end)


def _finish_file(path, header, rows, rejected, rows_in, end=None):
    accepted = len(rows) + (1 if header is not None else 0) + (1 if end is not None else 0)
    if accepted + len(rejected) != rows_in:     # the accounting invariant, per file
        raise PipelineError(f"{path}: {rows_in} rows in != {accepted} accepted + {len(rejected)} rejected")
    first = rejected[0] if rejected else None
    reason = f"{path}:{first['line']}: {first['reason']}" if first else None
    return _run_row(header, path, len(rows), rows_in, len(rejected), reason, end=end), rows, rejected


@lru_cache(maxsize=1 << 16)
def _digest(state) -> bytes:
    """A process-independent name for a model state (a NamedTuple of TLA+
    values): str hashes differ between Spark's Python workers, so no repr.
    Cached: runs of one constant set pass through the same states (on 300
    SEQUENCER runs, 42,300 visits of 4,052 distinct states), and printing a
    state costs about 90 us."""
    text = "\x1f".join(to_tla(normalize(getattr(state, f))) for f in state._fields)
    return hashlib.blake2b(text.encode(), digest_size=8).digest()


def _check_run(run: dict, rows: list[dict], want_visited: bool = True, judge: bool = True) -> dict:
    """The verdict of one run from its run row and its event rows; also the
    actions it took and the model states its replay visited.  ``judge``:
    the catalogue's properties too (False: judged apart, then ``_merge``d)."""
    base = {"file": run["source"], "run_id": run["run_id"], "protocol": run["protocol"],
            "events": run["events"], "candidates_max": 0, "stops_conforming_at": None, "replay_verdict": None,
            "properties_failed": None, "properties_by": None, "agree": None,
            "finding": None, "finding_why": None, "plan": None, "violations": [],
            "actions": sorted({r["name"] for r in rows}), "visited": [], "constants": run["constants"]}
    if run["reject_reason"] is not None:
        return {**base, "verdict": "rejected", "first_bad_event": None, "reason": run["reject_reason"],
                "stage": "ingest"}
    rows = sorted(rows, key=lambda r: r["i"])
    events = [_record(r) for r in rows]
    if [e["i"] for e in events] != list(range(len(events))):
        return {**base, "verdict": "rejected", "first_bad_event": None, "stage": "check",
                "reason": f"{run['source']}: event rows are not indexed 0..{len(events) - 1}"}
    end = json.loads(run["end"]) if run.get("end") else None
    rep = replay(Trace(run["source"], json.loads(run["header"]), events, end), visited=want_visited)
    visited = getattr(rep, "visited", None) or []
    return _merge({**base, "verdict": rep.verdict, "first_bad_event": rep.first_bad_event, "reason": rep.reason,
                   "candidates_max": rep.candidates_max, "stops_conforming_at": rep.stops_conforming_at,
                   "stage": "replay", "replay_verdict": rep.verdict, "events": rep.events,
                   "finding": rep.finding, "finding_why": rep.finding_why, "plan": rep.plan,
                   "violations": rep.violations,
                   "visited": sorted({_digest(s) for s in visited}) if want_visited else []},
                  _judged(run, rows) if judge and rep.verdict in JUDGED_VERDICTS else None)


# ---------------------------------------------------------------- properties apart from the replay

def _ended(run: dict) -> bool:
    """The run's end record says it ended as its protocol's replay asks to
    judge the end of a run: quiescent, or settled (the ring's, which never
    quiesces; ``Protocol.run_end``).  Format 1: its header said quiescent."""
    flag = get(run["protocol"]).run_end
    try:
        if run.get("end"):
            return json.loads(run["end"]).get(flag) is True
        return flag == "quiescent" and json.loads(run["header"]).get("quiescent") is True
    except (TypeError, ValueError, AttributeError):
        return False


def _judging_protocols() -> list[str]:
    """The protocols whose runs are judged apart from the replay too."""
    return [p for p in available() if registry.judged(p)]


def _judged(run: dict, rows: list[dict]) -> Optional[list]:
    """The catalogue's violations (core/properties.py) of the
    properties the run's protocol's replay judges (``judged``), on the
    history projected from its logged records (conformance/history.py
    ``from_trace``), the end-of-run ones only on runs that ended as the
    replay asks (``_ended``); None when its protocol's replay judges none there."""
    names = registry.judged(run["protocol"])
    if not names:
        return None
    header = json.loads(run["header"])
    events = [{"kind": "event", **_record(r)} for r in sorted(rows, key=lambda r: r["i"])]
    h = from_records(from_trace([header] + events))
    h.quiescent = _ended(run)
    found = properties.judge(h, [n for n in names if h.quiescent or not properties.CATALOGUE[n].end_of_run])
    if found and not properties.CATALOGUE[found[0].property].end_of_run:
        # a replay may name the witness where the property first broke (SEQUENCER's, as TLC
        # judges record by record) or the first in member order: both are kept to compare
        e = properties.earliest(h, found[0])
        if e.reason != found[0].reason:
            found[0] = dataclasses.replace(found[0], first_broken=e.reason)
    return found


def _merge(v: dict, found: Optional[list]) -> dict:
    """Fold the separate property verdicts into the run's verdict row.
    They agree when the replay's first failing property is the catalogue's
    first and the replay's reason holds the catalogue's witness (members,
    messages, views): the first in member order or the one where the
    property first broke (``properties.earliest``); when the replay's first is one no history shows (a
    model invariant, a lower layer's property) there is nothing to compare:
    ``agree`` is None and the replay's verdict stands."""
    if v["stage"] != "replay" or v["verdict"] not in JUDGED_VERDICTS or found is None:
        return v
    failed = [x.property for x in found]
    replay_first = v["violations"][0]["property"] if v["violations"] else None
    if replay_first is not None and replay_first not in registry.judged(v["protocol"]):
        agree = None
    else:
        agree = replay_first == (failed[0] if failed else None) and (
            replay_first is None or found[0].reason in v["reason"]
            or found[0].first_broken is not None and found[0].first_broken in v["reason"])
    v = {**v, "properties_failed": failed, "properties_by": "catalogue", "agree": agree}
    if not v["violations"] and failed:
        v["verdict"] = "violation"
        v["reason"] = f"{found[0]} (found by the property check, not by the replay)"
        v["violations"] = [{"property": found[0].property, "event": None, "witness": v["reason"],
                            "finding": None, "finding_why": None}]
    return v


# ---------------------------------------------------------------- dataset I/O

def _prepare_out(out: Path) -> None:
    """Replace a previous pipeline dataset; refuse to clobber anything else."""
    if out.exists():
        if out.is_dir() and not any(not e.name.startswith(".") for e in out.iterdir()):
            return          # empty, or only the CLI's mark of who made it
        if not (out / "_pipeline.json").exists():
            raise PipelineError(f"{out} exists and is not a pipeline dataset (no _pipeline.json); "
                                "choose an empty or new folder")
        shutil.rmtree(out)


def _write_table(rows: list[dict], schema, path: Path) -> None:
    import pyarrow as pa     # lazy: pyarrow is heavy and only this path needs it
    import pyarrow.parquet as pq     # lazy: pyarrow is heavy and only this path needs it
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


# Event files.  Whichever engine writes them, a run's event rows go into
# one file in one piece, in event order, and its run row records where
# (``part``: the file, relative to the dataset; ``part_row``: its first row):
# the Spark check then reads each task's runs straight from the files, with
# no shuffle and no sort (``_check_spark``).  A file is closed at a run
# boundary once it holds PART_ROWS rows; its row groups hold up to
# _EVENT_BATCH rows, so a task reading a slice of a file reads little more.
PART_ROWS = 200_000
_EVENT_BATCH = 20_000


class _PartWriter:
    """Writes runs' event rows into ``out/protocol=P/PREFIX-NNN.parquet``
    files with pyarrow, each run whole, and stamps its run row with where."""

    def __init__(self, out: Path, prefix: str):
        self.out, self.prefix = out, prefix
        self.open: dict = {}        # protocol -> [ParquetWriter, relative path, rows written, buffered rows]
        self.n_files = Counter()

    def add(self, run: dict, rows: list) -> None:
        run["part"], run["part_row"] = None, None
        if not rows:
            return
        protocol = rows[0]["protocol"]
        f = self.open.get(protocol)
        if f is not None and f[2] + len(f[3]) >= PART_ROWS:
            self._close(protocol)
            f = None
        if f is None:
            import pyarrow.parquet as pq     # lazy: pyarrow is heavy and only this path needs it
            rel = f"protocol={protocol}/{self.prefix}-{self.n_files[protocol]:03d}.parquet"
            self.n_files[protocol] += 1
            (self.out / rel).parent.mkdir(parents=True, exist_ok=True)
            f = self.open[protocol] = [pq.ParquetWriter(str(self.out / rel), _part_schema()), rel, 0, []]
        run["part"], run["part_row"] = f[1], f[2] + len(f[3])
        f[3].extend(rows)
        if len(f[3]) >= _EVENT_BATCH:
            self._flush(f)

    def _flush(self, f) -> None:
        import pyarrow as pa     # lazy: pyarrow is heavy and only this path needs it
        if f[3]:
            f[0].write_table(pa.Table.from_pylist(f[3], schema=_part_schema()), row_group_size=_EVENT_BATCH)
            f[2] += len(f[3])
            f[3] = []

    def _close(self, protocol) -> None:
        f = self.open.pop(protocol)
        self._flush(f)
        f[0].close()

    def close(self) -> None:
        for protocol in list(self.open):
            self._close(protocol)


def _part_schema():
    import pyarrow as pa     # lazy: pyarrow is heavy and only this path needs it
    ev = _arrow_schemas()[0]
    return pa.schema([ev.field(c) for c in EVENT_COLUMNS if c != "protocol"])   # the partition column is the folder


def _write_parts(out: Path, prefix: str, work, items: Iterable) -> list[tuple]:
    """Run ``work`` on each (index, input) and write its event rows;
    returns (index, run row, rejected rows) per input."""
    w = _PartWriter(out, prefix)
    got = []
    try:
        for k, item in items:
            run, rows, rej = work(item)
            w.add(run, rows)
            got.append((k, run, rej))
            del rows
    finally:
        w.close()
    return got


def _write_local(out: Path, work, items: list, meta: dict) -> dict:
    _prepare_out(out)
    out.mkdir(parents=True, exist_ok=True)
    return _write_meta(out, _write_parts(out, "part-00000", work, enumerate(items)), len(items), meta)


# The Spark side of a write: the inputs (seeds or files) are spread over a
# few tasks per core; each task runs the per-input function and writes its
# runs' event rows with pyarrow into files of its own, named after the task
# (a task Spark runs again rewrites the same files), and sends its run rows
# and quarantined lines back to the driver, which writes ``_runs`` and
# ``_rejected`` as the local engine does.  On a cluster the executors write
# into the dataset's folder, so it must be on a file system they share with
# the driver (docs/pipeline.md).
def _write_spark(spark, out: Path, work, items: list, meta: dict) -> dict:
    _prepare_out(out)
    out.mkdir(parents=True, exist_ok=True)
    n = max(1, min(len(items), 4 * parallelism(spark)))
    where = str(out.absolute())         # a cluster's executors run in folders of their own

    def task(index, ks):
        return _write_parts(Path(where), f"part-{index:05d}", work, ((k, items[k]) for k in ks))

    with progress(spark, meta["stage"]):
        got = spark.sparkContext.parallelize(range(len(items)), n).mapPartitionsWithIndex(task).collect()
    return _write_meta(out, got, len(items), meta)


def _write_meta(out: Path, got: list, n_items: int, meta: dict) -> dict:
    """``_runs`` and ``_rejected`` from (index, run row, rejected rows), one per input."""
    _, run_schema, rej_schema, _ = _arrow_schemas()
    by = {k: (run, rej) for k, run, rej in got}
    if len(by) != n_items:
        raise PipelineError(f"{n_items} inputs, {len(by)} run rows came back")
    runs = [by[k][0] for k in sorted(by)]
    rejected = [r for k in sorted(by) for r in by[k][1]]
    _write_table(runs, run_schema, out / "_runs" / "part-00000.parquet")
    _write_table(rejected, rej_schema, out / "_rejected" / "part-00000.parquet")
    return _finish_write(out, runs, len(rejected), sum(r["events"] for r in runs), meta)


def _finish_write(out: Path, runs: list[dict], n_rejected: int, n_events: int, meta: dict) -> dict:
    rows_in = sum(r["rows_in"] for r in runs)
    accepted = n_events + sum(1 for r in runs if r["header"] is not None) + sum(1 for r in runs if r.get("end"))
    if rows_in != accepted + n_rejected:        # the accounting invariant, in total
        raise PipelineError(f"{rows_in} rows in != {accepted} accepted + {n_rejected} rejected")
    summary = {**meta, "layout": LAYOUT, "runs": len(runs), "events": n_events, "rows_in": rows_in,
               "rows_accepted": accepted, "rows_rejected": n_rejected,
               "runs_rejected": sum(1 for r in runs if r["reject_reason"] is not None),
               "protocols": dict(Counter(r["protocol"] for r in runs if r["protocol"]))}
    (out / "_pipeline.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def read_runs(out) -> list[dict]:
    import pyarrow.parquet as pq     # lazy: pyarrow is heavy and only this path needs it
    p = Path(out) / "_runs"
    if not p.is_dir():
        raise PipelineError(f"{out}: not a pipeline dataset (no _runs folder); run `groupcheck traces generate` or `ingest`")
    return pq.read_table(p).to_pylist()


def read_layout(out) -> Optional[str]:
    """The layout the dataset was written in (``LAYOUT`` or an older one), if it says."""
    try:
        return json.loads((Path(out) / "_pipeline.json").read_text()).get("layout")
    except (OSError, ValueError, AttributeError):
        return None


def read_rejected(out) -> list[dict]:
    import pyarrow.dataset as ds     # lazy: pyarrow is heavy and only this path needs it
    return ds.dataset(str(Path(out) / "_rejected"), format="parquet").to_table().to_pylist()


def _local_event_groups(out: Path) -> dict:
    """Event rows (``CHECK_COLUMNS``) grouped by (source, run_id), via pyarrow."""
    import pyarrow.dataset as ds     # lazy: pyarrow is heavy and only this path needs it
    parts = [p for p in out.glob("protocol=*") if p.is_dir()]
    groups: dict = defaultdict(list)
    if not parts:
        return groups
    data = ds.dataset(str(out), format="parquet", partitioning="hive")
    for batch in data.to_batches(columns=list(CHECK_COLUMNS)):
        for r in batch.to_pylist():
            groups[(r["source"], r["run_id"])].append(r)
    return groups


def _spark_events(spark, out: Path):
    return spark.read.schema(_spark_event_schema()).parquet(str(out))


# ---------------------------------------------------------------- stages

def _session(engine: str, spark, master: Optional[str]):
    if engine not in ENGINES:
        raise PipelineError(f"unknown engine {engine!r} (local, spark)")
    if engine == "spark" and spark is None:
        spark = session(master)
    return spark


def generate(protocol: str, runs: int, seed: int, faults: Optional[str], out, *, engine: str = "local",
             options: Optional[dict] = None, spark=None, master: Optional[str] = None,
             draw: bool = False) -> dict:
    """Simulate ``runs`` runs (seeds seed..seed+runs-1) into a Parquet dataset.
    ``draw``: each run's size and faults drawn from its seed by the
    protocol's ``draw`` (the audit's way); ``faults`` and ``options`` then
    ignored."""
    proto = get(protocol)
    faults = proto.campaign_faults if faults is None else faults
    options = {**proto.default_options, **(options or {})}
    spark = _session(engine, spark, master)
    out = Path(out)
    t0 = time.perf_counter()
    meta = {"stage": "generate", "engine": engine, "protocol": protocol, "seed": seed,
            "faults": faults, "options": options}
    seeds = range(seed, seed + runs)
    if draw and proto.draw is not None:
        meta["faults"], meta["options"] = "drawn per run from its seed", "drawn per run from its seed"
        work = partial(_simulated_drawn, protocol)
    else:
        work = partial(_simulated, protocol, faults, options)
    if engine == "local":
        summary = _write_local(out, work, list(seeds), meta)
    else:
        summary = _write_spark(spark, out, work, list(seeds), meta)
    summary["seconds"] = round(time.perf_counter() - t0, 3)
    return summary


def ingest(paths: Iterable, out, *, engine: str = "local", spark=None, master: Optional[str] = None) -> dict:
    """NDJSON trace files (and every *.ndjson under folders named) into a Parquet dataset."""
    files = [str(p) for p in trace_files(paths)]
    spark = _session(engine, spark, master)
    out = Path(out)
    t0 = time.perf_counter()
    meta = {"stage": "ingest", "engine": engine, "files": len(files)}
    if engine == "local":
        summary = _write_local(out, _ingested, files, meta)
    else:
        summary = _write_spark(spark, out, partial(_ingested, cwd=os.getcwd()), files, meta)
    summary["seconds"] = round(time.perf_counter() - t0, 3)
    return summary


def _verdict_schema():
    """What a replay task returns per run: the verdict row, and what coverage needs."""
    import pyarrow as pa     # lazy: pyarrow is heavy and only this path needs it
    fields = list(_arrow_schemas()[3])
    return pa.schema(fields + [pa.field("actions", pa.list_(pa.string())),
                               pa.field("visited", pa.list_(pa.binary())), pa.field("constants", pa.string())])


_VERDICT_BATCH = 64


def _runs_of(batches):
    """Event rows in which each run's rows are contiguous and ordered by
    ``i`` (a sorted partition, or a slice of an event file) cut into runs:
    ((source, run_id), rows) as the key changes.  The rows stream through in
    Arrow batches, so a partition is one Python call, not one per run."""
    key, rows = None, []
    for b in batches:
        for r in b.to_pylist():
            k = (r["source"], r["run_id"])
            if k != key:
                if rows:
                    yield key, rows
                key, rows = k, []
            rows.append(r)
    if rows:
        yield key, rows


def _replay_partition(runs: dict, want_visited: bool, apart: frozenset, batches):
    """Spark task (``mapInArrow``): one partition's event rows, sorted by
    (source, run_id, i), in; one verdict row per run out.  The runs in
    ``apart`` have their catalogue properties judged by another task."""
    import pyarrow as pa     # lazy: pyarrow is heavy and only this path needs it
    schema = _verdict_schema()
    done: list[dict] = []
    for key, rows in _runs_of(batches):
        run = runs.get(key)
        if run is not None:     # rows with no run row: a dataset written by something else
            done.append(_check_run(run, rows, want_visited, judge=key not in apart))
        if len(done) >= _VERDICT_BATCH:
            yield pa.RecordBatch.from_pylist(done, schema=schema)
            done = []
    if done:
        yield pa.RecordBatch.from_pylist(done, schema=schema)


def _judged_or_error(run: dict, rows: list):
    try:
        return _judged(run, rows)
    except Exception as e:      # raised in the driver only if the replay's verdict needs it
        return PipelineError(f"{run['source']}: the property check failed: {e!r}")


def _judged_schema():
    import pyarrow as pa     # lazy: pyarrow is heavy and only this path needs it
    return pa.schema([("source", pa.string()), ("run_id", pa.string()), ("found", pa.binary())])


def _judge_partition(runs: dict, batches):
    """Spark task (``mapInArrow``): the catalogue's judgement of each run of
    the partition (``_judged``), pickled (a list of ``properties.Violation``)."""
    import pyarrow as pa     # lazy: pyarrow is heavy and only this path needs it
    for (source, run_id), rows in _runs_of(batches):
        run = runs.get((source, run_id))
        if run is not None:
            yield pa.RecordBatch.from_pylist(
                [{"source": source, "run_id": run_id, "found": pickle.dumps(_judged_or_error(run, rows))}],
                schema=_judged_schema())


# ---------------------------------------------------------------- the Spark check on whole runs in files

def _slices(by_key: dict, tasks: int) -> Optional[list]:
    """The runs with event rows, cut into slices of whole runs of one event
    file, of about 1/``tasks`` of the events each (a run longer than that is
    a slice of its own): ``(file, first row, end row, run rows)``, the
    largest first, so the longest tasks start first.  None when the run rows
    do not say where their events are (a dataset of an older layout)."""
    runs = [r for r in by_key.values() if r["events"]]
    if any(r.get("part") is None for r in runs):
        return None
    by_part: dict = defaultdict(list)
    for r in runs:
        by_part[r["part"]].append(r)
    target = max(1, -(-sum(r["events"] for r in runs) // max(1, tasks)))
    out = []
    for part in sorted(by_part):
        cur: list = []
        n = 0
        for r in sorted(by_part[part], key=lambda r: r["part_row"]):
            cur.append(r)
            n += r["events"]
            if n >= target:
                out.append(cur)
                cur, n = [], 0
        if cur:
            out.append(cur)
    out.sort(key=lambda rs: -sum(r["events"] for r in rs))
    return [(rs[0]["part"], rs[0]["part_row"], rs[-1]["part_row"] + rs[-1]["events"], rs) for rs in out]


def _pack(slices: list, tasks: int) -> list:
    """Slices (largest first) into at most ``tasks`` groups of about equal
    events, each slice into the least loaded group: one group a task, so
    event files smaller than a slice share tasks instead of one each."""
    heap = [(0, k, []) for k in range(min(tasks, len(slices)))]
    for sl in slices:
        n, k, group = heapq.heappop(heap)
        group.append(sl)
        heapq.heappush(heap, (n + sl[2] - sl[1], k, group))
    return [g for _, _, g in sorted(heap, key=lambda x: (-x[0], x[1]))]


def _run_slice(run: dict) -> tuple:
    return run["part"], run["part_row"], run["part_row"] + run["events"], [run]


def _read_slice(root: str, part: str, start: int, stop: int):
    """Rows ``start``..``stop``-1 of an event file (``CHECK_COLUMNS``),
    reading only the row groups that hold them."""
    import pyarrow.parquet as pq     # lazy: pyarrow is heavy and only this path needs it
    f = pq.ParquetFile(str(Path(root) / part))
    groups, first, row = [], None, 0
    for g in range(f.metadata.num_row_groups):
        n = f.metadata.row_group(g).num_rows
        if row < stop and row + n > start:
            first = row if first is None else first
            groups.append(g)
        row += n
    t = f.read_row_groups(groups, columns=list(CHECK_COLUMNS))
    if first is None or first + t.num_rows < stop:
        raise PipelineError(f"{part} has no rows {start}..{stop - 1}, which _runs places there")
    return t.slice(start - first, stop - start)


def _runs_in_slice(root: str, sl):
    """(run row, its event rows) of each run of a slice, checked against
    what ``_runs`` says of them (in this order, this many rows each)."""
    part, start, stop, runs = sl
    want = iter(runs)
    for key, rows in _runs_of(_read_slice(root, part, start, stop).to_batches(max_chunksize=_EVENT_BATCH)):
        run = next(want, None)
        if run is None or (run["source"], run["run_id"]) != key or run["events"] != len(rows):
            raise PipelineError(f"{part}: rows {start}..{stop - 1} are not the runs _runs places there "
                                f"(at {key[0]} {key[1]})")
        yield run, rows
    if next(want, None) is not None:
        raise PipelineError(f"{part}: rows {start}..{stop - 1} hold fewer runs than _runs places there")


def _replay_slices(root: str, want_visited: bool, apart: frozenset, slices):
    """Spark task: the verdict rows of the runs of its slices."""
    for sl in slices:
        for run, rows in _runs_in_slice(root, sl):
            yield _check_run(run, rows, want_visited, judge=(run["source"], run["run_id"]) not in apart)


def _judge_slices(root: str, slices):
    """Spark task: ((source, run_id), the catalogue's judgement) of the runs of its slices."""
    for sl in slices:
        for run, rows in _runs_in_slice(root, sl):
            yield (run["source"], run["run_id"]), _judged_or_error(run, rows)


# A run of at least SPLIT_EVENTS events whose protocol has catalogue
# properties gets them judged by a task of its own, in a second job that
# runs beside the replays: on a corpus of few long runs that is a second core
# at work (the replay of one run is sequential, see docs/pipeline.md); on a
# corpus of many runs both jobs share the cores.
SPLIT_EVENTS = 20_000


def _check_spark(spark, out: Path, by_key: dict, coverage: bool, files: bool = True) -> dict:
    """The Spark check: every run's verdict row (without the runs that have
    no event rows), keyed by (source, run_id).  ``files``: read each task's
    runs from the event files where ``_runs`` places them (the layout
    written by ``generate`` and ``ingest``; slices of whole runs, packed
    into four tasks per core); otherwise, and on a dataset
    whose run rows do not say where their events are, bring each run's rows
    together with a shuffle and a sort."""
    apart = frozenset(k for k, r in by_key.items()
                      if r["events"] >= SPLIT_EVENTS and r["reject_reason"] is None and registry.judged(r["protocol"]))
    tasks = 4 * parallelism(spark)
    slices = _slices(by_key, tasks) if files else None
    if slices is None:
        table, found = _check_spark_shuffled(spark, out, by_key, coverage, apart, tasks)
    else:
        sc, root = spark.sparkContext, str(out.absolute())     # the executors' folders are not ours
        groups = _pack(slices, tasks)
        replayed = sc.parallelize(groups, len(groups)).mapPartitions(
            lambda it: _replay_slices(root, coverage, apart, (sl for g in it for sl in g))) if groups else None
        long = [_run_slice(by_key[k]) for k in sorted(apart)]
        judged = sc.parallelize(long, len(long)).mapPartitions(partial(_judge_slices, root)) if long else None
        with progress(spark, "check"), ThreadPoolExecutor(2) as pool:
            # two jobs at once: Spark's scheduler gives the judging tasks the cores the replays leave free
            fj = pool.submit(judged.collect) if judged is not None else None
            table = replayed.collect() if replayed is not None else []
            found = dict(fj.result()) if fj else {}
    results = {}
    for v in table:
        key = (v["file"], v["run_id"])
        if key in apart:
            f = found.get(key)
            if isinstance(f, Exception):    # the task in one piece would have raised it
                if v["stage"] == "replay" and v["verdict"] in JUDGED_VERDICTS:
                    raise f
                f = None
            v = _merge(v, f)
        results[key] = v
    return results


def _check_spark_shuffled(spark, out: Path, by_key: dict, coverage: bool, apart: frozenset, tasks: int):
    """The Spark check of a dataset whose layout does not place each run in
    one file in one piece: event rows hashed on (source, run_id) into a few
    partitions per core, sorted within each, each partition streamed to one
    ``mapInArrow`` call that cuts it into runs.  Returns (verdict rows,
    {key: the catalogue's judgement} of the runs in ``apart``)."""
    from pyspark.sql import functions as F     # lazy: pyspark is heavy and only this path needs it
    from pyspark.sql.pandas.types import from_arrow_schema     # lazy: pyspark is heavy and only this path needs it
    events = _spark_events(spark, out).select(*CHECK_COLUMNS)

    def by_run(df, n_runs: int):
        return (df.repartition(max(1, min(n_runs, tasks)), "source", "run_id")
                  .sortWithinPartitions("source", "run_id", "i"))

    bc = spark.sparkContext.broadcast(by_key)
    replayed = by_run(events, sum(1 for r in by_key.values() if r["events"])).mapInArrow(
        lambda it: _replay_partition(bc.value, coverage, apart, it), from_arrow_schema(_verdict_schema()))
    judged = None
    if apart:
        sources = sorted({k[0] for k in apart})
        judged = by_run(events.where(F.col("source").isin(sources)), len(apart)).mapInArrow(
            lambda it: _judge_partition({k: bc.value[k] for k in apart}, it), from_arrow_schema(_judged_schema()))
    with progress(spark, "check"), ThreadPoolExecutor(2) as pool:
        fj = pool.submit(judged.toArrow) if judged is not None else None
        table = pool.submit(replayed.toArrow).result()
        found = {(j["source"], j["run_id"]): pickle.loads(j["found"]) for j in fj.result().to_pylist()} if fj else {}
    bc.unpersist()
    return table.to_pylist(), found


def check(out, *, engine: str = "local", spark=None, master: Optional[str] = None,
          coverage: bool = True, max_states: int = COVERAGE_MAX_STATES,
          write: bool = True) -> dict:
    """Replay every run of the dataset at ``out`` and compute its verdict.

    Returns ``{"verdicts": [one row per run], "counts": {verdict: n},
    "coverage": {protocol: ...}, "disagreements": n, "seconds": s}``.
    """
    out = Path(out)
    spark = _session(engine, spark, master)
    t0 = time.perf_counter()
    runs = read_runs(out)
    by_key = {(r["source"], r["run_id"]): r for r in runs}
    results: dict = {}
    if engine == "local":
        groups = _local_event_groups(out)
        for i, (key, run) in enumerate(by_key.items()):
            results[key] = _check_run(run, groups.get(key, []), coverage)
            tick("runs checked", i + 1, len(by_key))
    else:
        results = _check_spark(spark, out, by_key, coverage, files=read_layout(out) == LAYOUT)
        for key, run in by_key.items():       # runs without event rows never reach a task
            if key not in results:
                results[key] = _check_run(run, [], coverage)
    verdicts = [results[k] for k in sorted(results, key=lambda k: (str(k[1]), str(k[0])))]
    cov = coverage_of(verdicts, max_states) if coverage else {}
    rows = [{c: v[c] for c in VERDICT_COLUMNS} for v in verdicts]
    res = {"dataset": str(out), "engine": engine, "runs": len(rows),
           "counts": dict(Counter(v["verdict"] for v in rows)),
           "disagreements": sum(1 for v in rows if v["agree"] is False),
           "property_queries": _judging_protocols(), "verdicts": rows, "coverage": cov,
           "seconds": round(time.perf_counter() - t0, 3)}
    if write:
        _write_table(rows, _arrow_schemas()[3], out / "_verdicts" / "part-00000.parquet")
    return res


# ---------------------------------------------------------------- coverage

@lru_cache(maxsize=32)
def _reachable(protocol: str, constants_json: str, max_states: int) -> Optional[frozenset]:
    """Digests of the model's reachable states for these constants, or None
    when the explorer does not finish under ``max_states``."""
    try:
        model = model_class(protocol)(json.loads(constants_json))
    except (KeyError, TypeError, ValueError):
        return None
    res = explore(model, check_invariants=False, build_graph=True, max_states=max_states)
    if not res.complete:
        return None
    red = get(protocol).reduce or (lambda s: s)
    return frozenset(_digest(red(s)) for s in res.graph.nodes)


def coverage_of(verdicts: list[dict], max_states: int = COVERAGE_MAX_STATES) -> dict:
    """Per protocol: actions taken vs the protocol's actions; per constants:
    distinct model states visited by the replays vs the reachable set."""
    out = {}
    for protocol in sorted({v["protocol"] for v in verdicts if v["protocol"]}):
        vs = [v for v in verdicts if v["protocol"] == protocol]
        try:
            actions = list(get(protocol).actions)
        except UnknownProtocol:
            actions = []
        seen = sorted(set().union(*(v["actions"] for v in vs)))
        states = []
        consts = sorted({v["constants"] for v in vs if v["constants"]})
        runs_of = {c: sum(v["constants"] == c and v["stage"] == "replay" for v in vs) for c in consts}
        explored = set(sorted(consts, key=lambda c: (-runs_of[c], c))[:COVERAGE_MAX_MODELS])
        for const in consts:
            group = [v for v in vs if v["constants"] == const and v["stage"] == "replay"]
            visited = set().union(*(v["visited"] for v in group)) if group else set()
            reach = _reachable(protocol, const, max_states) if visited and const in explored else None
            states.append({
                "constants": json.loads(const), "runs": len(group), "visited": len(visited),
                "explored": const in explored,
                "reachable": None if reach is None else len(reach),
                "share": None if not reach else round(len(visited & reach) / len(reach), 6),
                "outside_reachable": None if reach is None else len(visited - reach)})
        out[protocol] = {
            "actions": actions, "actions_seen": seen,
            "actions_share": round(len(set(seen) & set(actions)) / len(actions), 6) if actions else None,
            "unknown_actions": sorted(set(seen) - set(actions)),
            "states": states,
            "state_tracking": any(v["visited"] for v in vs)}
    return out


# ---------------------------------------------------------------- conform and audit

def conform_rows(paths: Iterable, engine: str = "spark", spark=None, master: Optional[str] = None,
                 work_dir=None) -> list[dict]:
    """``groupcheck conform --engine``: the pipeline's verdicts in the shape of
    ``conform.conform_file(...).to_json()``, one per file, sorted as
    ``traces.trace_files`` sorts them."""
    files = [str(p) for p in trace_files(paths)]
    with tempfile.TemporaryDirectory(prefix="groupcheck-conform-", dir=work_dir) as tmp:
        ds = Path(tmp) / "ds"
        ingest(files, ds, engine=engine, spark=spark, master=master)
        res = check(ds, engine=engine, spark=spark, master=master, coverage=False, write=False)
    by_file = {v["file"]: v for v in res["verdicts"]}
    rows = []
    for f in files:
        v = by_file[f]
        if v["stage"] == "ingest":   # as conform_file reports an unreadable trace
            rows.append({"file": f, "run_id": None, "protocol": None, "verdict": "rejected", "events": 0,
                         "first_bad_event": None, "reason": v["reason"], "candidates_max": 0,
                         "stops_conforming_at": None, "finding": None, "finding_why": None, "plan": None,
                         "violations": []})
        else:
            rows.append({k: v[k] for k in ("file", "run_id", "protocol", "verdict", "events",
                                            "first_bad_event", "reason", "candidates_max",
                                            "stops_conforming_at", "finding", "finding_why", "plan",
                                            "violations")})
    return rows


def first_bad_events(out, run: dict) -> list[dict]:
    """The event records of one run of the dataset (for a sequence diagram)."""
    import pyarrow.dataset as ds     # lazy: pyarrow is heavy and only this path needs it
    d = ds.dataset(str(Path(out)), format="parquet", partitioning="hive")
    t = d.to_table(filter=(ds.field("source") == run["file"]) & (ds.field("run_id") == run["run_id"]))
    return [_record(r) for r in sorted(t.to_pylist(), key=lambda r: r["i"])]


def run_audit_stage(protocols: Iterable[str], runs: int, seed: int, out_dir, engine: str = "spark",
                    spark=None, master: Optional[str] = None, max_states: int = COVERAGE_MAX_STATES,
                    draw: int = 5, draw_sizes: bool = True) -> dict:
    """The audit's conformance stage: per protocol, generate ``runs`` runs,
    each with its size and faults drawn from its seed by the protocol's
    ``draw`` (``draw_sizes=False``: the campaign faults and default options
    for every run), check them, and report.
    The first ``draw`` bad runs of each verdict carry their ``events`` (for
    the report's diagrams).

    Returns ``{protocol: {"verdicts": {verdict: n}, "bad_runs": [...],
    "first_bad_run_events": [...], "coverage": {...}, "rows": {...},
    "disagreements": n, "seconds": s, "dataset": path}}``; ``bad_runs``
    lists every run whose verdict is not ok (run_id, verdict, reason)."""
    spark = _session(engine, spark, master)
    report = {}
    for p in protocols:
        proto = get(p)
        t0 = time.perf_counter()
        ds_dir = Path(out_dir) / p
        gen = generate(p, runs, seed, proto.campaign_faults, ds_dir, engine=engine, spark=spark,
                       draw=draw_sizes)
        res = check(ds_dir, engine=engine, spark=spark, max_states=max_states)
        bad = [v for v in res["verdicts"] if v["verdict"] != "ok"]
        drawn = {id(v) for verdict in {v["verdict"] for v in bad}
                 for v in [b for b in bad if b["verdict"] == verdict][:draw]}
        report[p] = {
            "runs": res["runs"], "faults": gen["faults"], "options": gen["options"],
            "verdicts": res["counts"], "disagreements": res["disagreements"],
            # runs per fault plan kind and per documented finding (conformance/findings.py)
            "findings": findings.tally([v for v in res["verdicts"] if v.get("protocol") == p]),
            "bad_runs": [{"run_id": v["run_id"], "verdict": v["verdict"], "reason": v["reason"],
                          "first_bad_event": v["first_bad_event"],
                          "property": findings.violated(v), "violations": v.get("violations") or [],
                          "finding": v.get("finding"), "finding_why": v.get("finding_why"), "plan": v.get("plan"),
                          **({"events": first_bad_events(ds_dir, v)} if id(v) in drawn and v.get("file") else {})}
                         for v in bad],
            "first_bad_run_events": first_bad_events(ds_dir, bad[0]) if bad else [],
            "coverage": res["coverage"].get(p, {}),
            "rows": {"in": gen["rows_in"], "accepted": gen["rows_accepted"], "rejected": gen["rows_rejected"]},
            "events": gen["events"], "generate_seconds": gen["seconds"], "check_seconds": res["seconds"],
            "seconds": round(time.perf_counter() - t0, 3), "dataset": str(ds_dir), "engine": engine}
    return report
