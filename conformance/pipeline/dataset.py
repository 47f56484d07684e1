"""The pipeline's dataset: its layout (Arrow schemas, the columns of
event, run, rejected and verdict rows), records <-> rows, the work done
per run (simulate, ingest, check: also in Spark tasks) and the dataset's
files written and read.  conformance/pipeline/stages.py runs the stages on
it; its docstring is the theory of operation (docs/pipeline.md).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
from collections import Counter, defaultdict
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Optional

from groupcheck.conformance.history import from_trace
from groupcheck.conformance.pipeline.spark import parallelism, progress
from groupcheck.conformance.replay import registry
from groupcheck.conformance.replay.conform import replay
from groupcheck.conformance.replay.registry import available, get
from groupcheck.core import properties
from groupcheck.core.trace import layers as trace_layers
from groupcheck.core.trace import format as trace_format
from groupcheck.core.trace.history import from_records
from groupcheck.core.trace.reader import (collector_paused, FORMAT, FORMAT_V1, FORMATS, lines_quarantined,
                                          parse_line, record_problem, Trace, TraceError)
from groupcheck.model.values import normalize, to_tla


LAYOUT = "groupcheck-pipeline/2"
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

def arrow_schemas():
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


def record_of_row(row: dict) -> dict:
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

def simulated(protocol: str, faults: str, options: dict, seed: int):
    """One simulated run -> (run row, event rows, rejected rows)."""
    records, summary = get(protocol).simulate(seed, faults, options)
    header = records[0]
    events = [r for r in records[1:] if r["kind"] == "event"]
    ends = [_end_of(r) for r in records[1:] if r["kind"] == "end"]
    source = f"{protocol}:seed={seed}"
    hc = _header_cols(header, source)
    rows = [_event_row(hc, {**ev, "i": i}) for i, ev in enumerate(events)]
    return _run_row(header, source, len(rows), len(records), 0, None, summary, ends[0] if ends else None), rows, []


def simulated_drawn(protocol: str, seed: int):
    """One simulated run whose size and faults the protocol draws from the seed."""
    faults, options = get(protocol).draw(seed)
    return simulated(protocol, faults, {**get(protocol).default_options, **options}, seed)


def ingested(path: str, cwd: Optional[str] = None):
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
                delta = trace_format.state_delta(last_state.get(key), rec["state"],
                                              trace_format.append_vars(protocol, key[1]))
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
def digest(state) -> bytes:
    """A process-independent name for a model state (a NamedTuple of TLA+
    values): str hashes differ between Spark's Python workers, so no repr.
    Cached: runs of one constant set pass through the same states (on 300
    SEQUENCER runs, 42,300 visits of 4,052 distinct states), and printing a
    state costs about 90 us."""
    text = "\x1f".join(to_tla(normalize(getattr(state, f))) for f in state._fields)
    return hashlib.blake2b(text.encode(), digest_size=8).digest()


def check_run(run: dict, rows: list[dict], want_visited: bool = True, judge: bool = True) -> dict:
    """The verdict of one run from its run row and its event rows; also the
    actions it took and the model states its replay visited.  ``judge``:
    the catalogue's properties too (False: judged apart, then ``merge_judged``d)."""
    base = {"file": run["source"], "run_id": run["run_id"], "protocol": run["protocol"],
            "events": run["events"], "candidates_max": 0, "stops_conforming_at": None, "replay_verdict": None,
            "properties_failed": None, "properties_by": None, "agree": None,
            "finding": None, "finding_why": None, "plan": None, "violations": [],
            "actions": sorted({r["name"] for r in rows}), "visited": [], "constants": run["constants"]}
    if run["reject_reason"] is not None:
        return {**base, "verdict": "rejected", "first_bad_event": None, "reason": run["reject_reason"],
                "stage": "ingest"}
    rows = sorted(rows, key=lambda r: r["i"])
    events = [record_of_row(r) for r in rows]
    if [e["i"] for e in events] != list(range(len(events))):
        return {**base, "verdict": "rejected", "first_bad_event": None, "stage": "check",
                "reason": f"{run['source']}: event rows are not indexed 0..{len(events) - 1}"}
    end = json.loads(run["end"]) if run.get("end") else None
    rep = replay(Trace(run["source"], json.loads(run["header"]), events, end), visited=want_visited)
    visited = getattr(rep, "visited", None) or []
    return merge_judged({**base, "verdict": rep.verdict, "first_bad_event": rep.first_bad_event, "reason": rep.reason,
                   "candidates_max": rep.candidates_max, "stops_conforming_at": rep.stops_conforming_at,
                   "stage": "replay", "replay_verdict": rep.verdict, "events": rep.events,
                   "finding": rep.finding, "finding_why": rep.finding_why, "plan": rep.plan,
                   "violations": rep.violations,
                   "visited": sorted({digest(s) for s in visited}) if want_visited else []},
                  judge_apart(run, rows) if judge and rep.verdict in JUDGED_VERDICTS else None)


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


def judging_protocols() -> list[str]:
    """The protocols whose runs are judged apart from the replay too."""
    return [p for p in available() if registry.judged(p)]


def judge_apart(run: dict, rows: list[dict]) -> Optional[list]:
    """The catalogue's violations (core/properties.py) of the
    properties the run's protocol's replay judges (``judged``), on the
    history projected from its logged records (conformance/history.py
    ``from_trace``), the end-of-run ones only on runs that ended as the
    replay asks (``_ended``); None when its protocol's replay judges none there."""
    names = registry.judged(run["protocol"])
    if not names:
        return None
    header = json.loads(run["header"])
    events = [{"kind": "event", **record_of_row(r)} for r in sorted(rows, key=lambda r: r["i"])]
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


def merge_judged(v: dict, found: Optional[list]) -> dict:
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


def write_table(rows: list[dict], schema, path: Path) -> None:
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
# EVENT_BATCH rows, so a task reading a slice of a file reads little more.
PART_ROWS = 200_000
EVENT_BATCH = 20_000


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
        if len(f[3]) >= EVENT_BATCH:
            self._flush(f)

    def _flush(self, f) -> None:
        import pyarrow as pa     # lazy: pyarrow is heavy and only this path needs it
        if f[3]:
            f[0].write_table(pa.Table.from_pylist(f[3], schema=_part_schema()), row_group_size=EVENT_BATCH)
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
    ev = arrow_schemas()[0]
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


def write_local(out: Path, work, items: list, meta: dict) -> dict:
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
def write_spark(spark, out: Path, work, items: list, meta: dict) -> dict:
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
    _, run_schema, rej_schema, _ = arrow_schemas()
    by = {k: (run, rej) for k, run, rej in got}
    if len(by) != n_items:
        raise PipelineError(f"{n_items} inputs, {len(by)} run rows came back")
    runs = [by[k][0] for k in sorted(by)]
    rejected = [r for k in sorted(by) for r in by[k][1]]
    write_table(runs, run_schema, out / "_runs" / "part-00000.parquet")
    write_table(rejected, rej_schema, out / "_rejected" / "part-00000.parquet")
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


def local_event_groups(out: Path) -> dict:
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


def spark_events(spark, out: Path):
    return spark.read.schema(_spark_event_schema()).parquet(str(out))


