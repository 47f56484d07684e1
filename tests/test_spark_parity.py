"""The Spark check's per-partition replay and the progress lines, without a
Spark session: ``_replay_partition`` (the ``mapInArrow`` body) gives the
local engine's verdict rows whatever the batch boundaries, and the progress
reporter writes what the status tracker says (conformance/pipeline/spark.py)."""

from __future__ import annotations

import io
import time
from types import SimpleNamespace

import pytest

from groupcheck.conformance.pipeline import dataset as D, stages as P
from groupcheck.conformance.pipeline import spark as S
from groupcheck.conformance.replay.registry import get


@pytest.mark.parametrize("batch,apart", [(1, False), (7, True), (10_000, False)])
def test_partition_replay_equals_local_check(tmp_path, batch, apart):
    """Runs cut out of sorted partitions (a run split over batches, several
    runs in one batch) get the verdict rows the local engine gives, also
    when their properties are judged by another task and merged after."""
    import pickle
    import pyarrow as pa
    import pyarrow.dataset as ds
    P.generate("sequencer", 5, 3, get("sequencer").campaign_faults, tmp_path, engine="local",
               options={"nodes": 3, "messages": 2})
    local = P.check(tmp_path, engine="local", coverage=True, write=False)
    runs = {(r["source"], r["run_id"]): r for r in D.read_runs(tmp_path)}
    t = ds.dataset(str(tmp_path), format="parquet", partitioning="hive").to_table(columns=list(D.CHECK_COLUMNS))
    t = t.sort_by([("source", "ascending"), ("run_id", "ascending"), ("i", "ascending")])
    keys = frozenset(runs) if apart else frozenset()
    out = pa.Table.from_batches(list(P._replay_partition(runs, True, keys, t.to_batches(max_chunksize=batch))))
    got = sorted(out.to_pylist(), key=lambda v: (v["run_id"], v["file"]))
    if apart:
        found = {(j["source"], j["run_id"]): pickle.loads(j["found"])
                 for b in P._judge_partition(runs, t.to_batches(max_chunksize=batch)) for j in b.to_pylist()}
        assert set(found) == set(runs)
        got = [D.merge_judged(v, found[(v["file"], v["run_id"])]) for v in got]
    assert len(got) == len(runs) == 5
    assert [{c: v[c] for c in D.VERDICT_COLUMNS} for v in got] == local["verdicts"]
    assert any(v["visited"] for v in got)


class _Tracker:
    """A status tracker whose one job's one stage finishes its 4 tasks."""

    def __init__(self):
        self.t0, self.jobs = time.monotonic(), []

    def done(self):
        return min(4, int((time.monotonic() - self.t0) / 0.05))

    def getJobIdsForGroup(self, group=None):
        return list(self.jobs)

    def getJobInfo(self, j):
        return SimpleNamespace(stageIds=[3])

    def getActiveStageIds(self):
        return [3] if self.done() < 4 else []

    def getStageInfo(self, sid):
        return SimpleNamespace(numTasks=4, numCompletedTasks=self.done(), numActiveTasks=1 if self.done() < 4 else 0)


def test_progress_lines(monkeypatch):
    """Plain lines: the stage's tasks done, then the stage done."""
    monkeypatch.setattr(S, "PROGRESS_LOG_EVERY", 0.02)
    tracker = _Tracker()
    spark = SimpleNamespace(sparkContext=SimpleNamespace(statusTracker=lambda: tracker))
    out = io.StringIO()
    with S.progress(spark, "check", stream=out, after=0):
        tracker.jobs.append(7)       # a job started inside the block
        time.sleep(0.4)
    lines = out.getvalue().splitlines()
    assert lines and all(x.startswith("spark check: ") and "\r" not in x for x in lines)
    assert any("stage 3: " in x and "/4 tasks done" in x for x in lines)
    assert lines[-1].endswith("; stages done 1; between stages")
    assert len(lines) == len(set(x.split("; ", 1)[1] for x in lines))     # a line only when it changed


def test_progress_quiet_for_short_blocks():
    tracker = _Tracker()
    spark = SimpleNamespace(sparkContext=SimpleNamespace(statusTracker=lambda: tracker))
    out = io.StringIO()
    with S.progress(spark, "check", stream=out, after=5):
        pass
    assert out.getvalue() == ""


@pytest.mark.parametrize("master,loopback", [
    (None, True), ("local[2]", True), ("spark://127.0.0.1:7077", True), ("spark://localhost:7077", True),
    ("spark://[::1]:7077", True), ("spark://127.0.0.1:7077,127.0.0.2:7078", True),
    ("spark://127.0.0.1:7077,10.1.2.3:7077", False), ("spark://head:7077", False),
    ("spark://10.1.2.3:7077", False), ("yarn", False), ("k8s://https://127.0.0.1:6443", False)])
def test_driver_pinned_to_loopback_only_for_masters_here(master, loopback):
    """The driver listens on 127.0.0.1 alone only when every executor runs on this machine."""
    assert S.on_loopback(master) is loopback


def _ingested_and_generated(tmp_path, monkeypatch):
    """Two datasets written by the local engine with small event files and
    row groups (runs span row groups, files close between runs): SEQUENCER
    runs generated, and NDJSON traces ingested with a rejected line, a
    rejected header and an empty file among them."""
    from tests.test_pipeline import _write_ndjson_corpus
    monkeypatch.setattr(D, "PART_ROWS", 60)
    monkeypatch.setattr(D, "EVENT_BATCH", 7)
    P.generate("sequencer", 9, 0, get("sequencer").campaign_faults, tmp_path / "gen", engine="local",
               options={"nodes": 3, "messages": 2})
    _write_ndjson_corpus(tmp_path / "in")
    P.ingest([tmp_path / "in"], tmp_path / "ing", engine="local")
    return [tmp_path / "gen", tmp_path / "ing"]


def test_event_files_hold_each_run_whole_in_order(tmp_path, monkeypatch):
    """Every run's event rows are in the file ``_runs`` names, in one piece
    from the row it names, ordered by ``i``; runs with no event rows (an
    empty file, a rejected header) are placed nowhere."""
    import pyarrow.parquet as pq
    for d in _ingested_and_generated(tmp_path, monkeypatch):
        assert D.read_layout(d) == D.LAYOUT
        runs = D.read_runs(d)
        parts = {r["part"] for r in runs if r["part"]}
        assert len(parts) > 1
        for part in parts:
            f = pq.ParquetFile(str(d / part))
            assert f.metadata.num_row_groups > 1
            t = f.read().to_pylist()
            placed = sorted((r for r in runs if r["part"] == part), key=lambda r: r["part_row"])
            row = 0
            for r in placed:
                assert r["part_row"] == row
                rows = t[row:row + r["events"]]
                assert {(x["source"], x["run_id"]) for x in rows} == {(r["source"], r["run_id"])}
                assert [x["i"] for x in rows] == list(range(r["events"]))
                row += r["events"]
            assert row == len(t)
        assert all(r["part"] is None for r in runs if not r["events"])
        if d.name == "ing":
            assert any(not r["events"] for r in runs) and any(r["events"] and r["reject_reason"] for r in runs)


@pytest.mark.parametrize("tasks", [1, 3, 1000])
def test_slices_replayed_in_process_equal_local_check(tmp_path, monkeypatch, tasks):
    """The Spark check's task bodies on slices of whole runs (``_slices``,
    ``_replay_slices``, ``_judge_slices``), run in this process: each run
    with event rows in one slice, a file cut between runs into about as
    many slices as asked; the verdict rows are the local engine's, also for
    the runs whose properties are judged by a task of their own and merged."""
    for d in _ingested_and_generated(tmp_path, monkeypatch):
        local = {(v["file"], v["run_id"]): v for v in P.check(d, engine="local", coverage=True, write=False)["verdicts"]}
        by_key = {(r["source"], r["run_id"]): r for r in D.read_runs(d)}
        with_events = sorted(k for k, r in by_key.items() if r["events"])
        files = len({r["part"] for r in by_key.values() if r["part"]})
        slices = P._slices(by_key, tasks)
        assert sorted((r["source"], r["run_id"]) for sl in slices for r in sl[3]) == with_events
        assert all(sl[2] - sl[1] == sum(r["events"] for r in sl[3]) for sl in slices)
        assert len(slices) == {1: files, 1000: len(with_events)}.get(tasks, len(slices))
        assert 1 < len(slices) <= tasks + files
        groups = P._pack(slices, 4)
        assert len(groups) == min(4, len(slices)) and sorted(sl for g in groups for sl in g) == sorted(slices)
        loads = [sum(sl[2] - sl[1] for sl in g) for g in groups]
        assert max(loads) - min(loads) <= max(sl[2] - sl[1] for sl in slices)     # no group a slice above another
        apart = frozenset(with_events[::2])
        got = {(v["file"], v["run_id"]): v for v in P._replay_slices(str(d), True, apart, slices)}
        found = dict(P._judge_slices(str(d), [P._run_slice(by_key[k]) for k in sorted(apart)]))
        assert set(found) == apart
        got = {k: D.merge_judged(v, found[k]) if k in apart else v for k, v in got.items()}
        for k, r in by_key.items():     # runs with no event rows: judged in the driver
            got.setdefault(k, D.check_run(r, [], True))
        assert {k: {c: v[c] for c in D.VERDICT_COLUMNS} for k, v in got.items()} == local
        assert {v["verdict"] for v in local.values()} >= ({"ok", "rejected", "nonconforming"} if d.name == "ing"
                                                          else {"ok"})


def test_a_slice_that_does_not_hold_its_runs_is_refused(tmp_path, monkeypatch):
    """A run row that places its events wrongly fails the task, loudly."""
    d = _ingested_and_generated(tmp_path, monkeypatch)[0]
    by_key = {(r["source"], r["run_id"]): r for r in D.read_runs(d)}
    part, start, stop, runs = P._slices(by_key, 1000)[0]
    with pytest.raises(D.PipelineError, match="not the runs"):
        list(P._replay_slices(str(d), False, frozenset(), [(part, start + 1, stop + 1, runs)]))
    with pytest.raises(D.PipelineError, match="has no rows"):      # past the end of its file
        list(P._replay_slices(str(d), False, frozenset(), [(part, start + 10_000, stop + 10_000, runs)]))
