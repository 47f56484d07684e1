"""The Spark check's per-partition replay and the progress lines, without a
Spark session: ``_replay_partition`` (the ``mapInArrow`` body) gives the
local engine's verdict rows whatever the batch boundaries, and the progress
reporter writes what the status tracker says (conformance/spark.py)."""

from __future__ import annotations

import io
import time
from types import SimpleNamespace

import pytest

from groupcheck.conformance import pipeline as P
from groupcheck.conformance import spark as S
from groupcheck.conformance.protocols import get


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
    runs = {(r["source"], r["run_id"]): r for r in P.read_runs(tmp_path)}
    t = ds.dataset(str(tmp_path), format="parquet", partitioning="hive").to_table(columns=list(P.CHECK_COLUMNS))
    t = t.sort_by([("source", "ascending"), ("run_id", "ascending"), ("i", "ascending")])
    keys = frozenset(runs) if apart else frozenset()
    out = pa.Table.from_batches(list(P._replay_partition(runs, True, keys, t.to_batches(max_chunksize=batch))))
    got = sorted(out.to_pylist(), key=lambda v: (v["run_id"], v["file"]))
    if apart:
        found = {(j["source"], j["run_id"]): pickle.loads(j["found"])
                 for b in P._judge_partition(runs, t.to_batches(max_chunksize=batch)) for j in b.to_pylist()}
        assert set(found) == set(runs)
        got = [P._merge(v, found[(v["file"], v["run_id"])]) for v in got]
    assert len(got) == len(runs) == 5
    assert [{c: v[c] for c in P.VERDICT_COLUMNS} for v in got] == local["verdicts"]
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
