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

import heapq
import json
import os
import pickle
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache, partial
from pathlib import Path
from typing import Iterable, Optional

from groupcheck.conformance import findings
from groupcheck.conformance.pipeline import dataset
from groupcheck.conformance.pipeline.dataset import (arrow_schemas, CHECK_COLUMNS, check_run, digest,
                                                     ingested, judge_apart, JUDGED_VERDICTS,
                                                     judging_protocols, LAYOUT, local_event_groups,
                                                     merge_judged, PipelineError, read_layout, read_runs,
                                                     record_of_row, simulated, simulated_drawn, spark_events,
                                                     VERDICT_COLUMNS, write_local, write_spark, write_table)
from groupcheck.conformance.pipeline.spark import parallelism, progress, session
from groupcheck.conformance.replay import registry
from groupcheck.conformance.replay.registry import get, UnknownProtocol
from groupcheck.core.progress import tick
from groupcheck.core.trace.reader import trace_files
from groupcheck.model.core import explore
from groupcheck.model.registry import model_class


ENGINES = ("local", "spark")
COVERAGE_MAX_STATES = 20_000
# Runs draw their sizes from the seed, so a campaign spreads over many
# constant sets; exploring each one's reachable set cost minutes per protocol.
# The state coverage is computed for the constant sets most runs share.
COVERAGE_MAX_MODELS = 3


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
        work = partial(simulated_drawn, protocol)
    else:
        work = partial(simulated, protocol, faults, options)
    if engine == "local":
        summary = write_local(out, work, list(seeds), meta)
    else:
        summary = write_spark(spark, out, work, list(seeds), meta)
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
        summary = write_local(out, ingested, files, meta)
    else:
        summary = write_spark(spark, out, partial(ingested, cwd=os.getcwd()), files, meta)
    summary["seconds"] = round(time.perf_counter() - t0, 3)
    return summary


def _verdict_schema():
    """What a replay task returns per run: the verdict row, and what coverage needs."""
    import pyarrow as pa     # lazy: pyarrow is heavy and only this path needs it
    fields = list(arrow_schemas()[3])
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
            done.append(check_run(run, rows, want_visited, judge=key not in apart))
        if len(done) >= _VERDICT_BATCH:
            yield pa.RecordBatch.from_pylist(done, schema=schema)
            done = []
    if done:
        yield pa.RecordBatch.from_pylist(done, schema=schema)


def _judged_or_error(run: dict, rows: list):
    try:
        return judge_apart(run, rows)
    except Exception as e:      # raised in the driver only if the replay's verdict needs it
        return PipelineError(f"{run['source']}: the property check failed: {e!r}")


def _judged_schema():
    import pyarrow as pa     # lazy: pyarrow is heavy and only this path needs it
    return pa.schema([("source", pa.string()), ("run_id", pa.string()), ("found", pa.binary())])


def _judge_partition(runs: dict, batches):
    """Spark task (``mapInArrow``): the catalogue's judgement of each run of
    the partition (``judge_apart``), pickled (a list of ``properties.Violation``)."""
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
    for key, rows in _runs_of(_read_slice(root, part, start, stop).to_batches(max_chunksize=dataset.EVENT_BATCH)):
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
            yield check_run(run, rows, want_visited, judge=(run["source"], run["run_id"]) not in apart)


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
            v = merge_judged(v, f)
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
    events = spark_events(spark, out).select(*CHECK_COLUMNS)

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
        groups = local_event_groups(out)
        for i, (key, run) in enumerate(by_key.items()):
            results[key] = check_run(run, groups.get(key, []), coverage)
            tick("runs checked", i + 1, len(by_key))
    else:
        results = _check_spark(spark, out, by_key, coverage, files=read_layout(out) == LAYOUT)
        for key, run in by_key.items():       # runs without event rows never reach a task
            if key not in results:
                results[key] = check_run(run, [], coverage)
    verdicts = [results[k] for k in sorted(results, key=lambda k: (str(k[1]), str(k[0])))]
    cov = coverage_of(verdicts, max_states) if coverage else {}
    rows = [{c: v[c] for c in VERDICT_COLUMNS} for v in verdicts]
    res = {"dataset": str(out), "engine": engine, "runs": len(rows),
           "counts": dict(Counter(v["verdict"] for v in rows)),
           "disagreements": sum(1 for v in rows if v["agree"] is False),
           "property_queries": judging_protocols(), "verdicts": rows, "coverage": cov,
           "seconds": round(time.perf_counter() - t0, 3)}
    if write:
        write_table(rows, arrow_schemas()[3], out / "_verdicts" / "part-00000.parquet")
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
    return frozenset(digest(red(s)) for s in res.graph.nodes)


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
    return [record_of_row(r) for r in sorted(t.to_pylist(), key=lambda r: r["i"])]


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
