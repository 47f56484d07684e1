"""The Spark session the conformance pipeline runs on (docs/pipeline.md).

Theory of operation
-------------------
PySpark starts a JVM driver on first use.  ``session`` builds it for this
project's habits: ``local[*]`` unless a master URL is given (or the job was
started by ``spark-submit``, whose ``--master`` then wins), no web UI, no
console progress bars (``progress`` writes plain lines instead), the
driver bound to 127.0.0.1 when the master is on this machine (``local``, or a
standalone master on a loopback address: nothing outside needs to reach it),
a local JVM that only compiles with C1, and log4j quiet (its
configuration is a small properties file written to a temporary folder at
start-up and handed over as SPARK_CONF_DIR, because the one bundled with Spark
logs at WARN and announces itself).
Python workers run the interpreter that runs us, so the venv's groupcheck
is the one the tasks import (on a cluster: the same path on every worker).
Under ``spark-submit`` the settings below are defaults: a ``--conf`` given
there wins.

One session per process: Spark allows a single active SparkContext, so a
different master (bench/pipeline.py switches local[1] -> local[2]) stops the
running one first.  Start-up costs ~10 s, which is why tests share one
session (tests/conftest_spark.py).
"""

from __future__ import annotations

import atexit
import contextvars
import ipaddress
import os
import shutil
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from groupcheck.core.progress import tick


DEFAULT_MASTER = "local[*]"

# log4j2, to stderr.  The root stays at WARN: Spark prints "Setting default
# log level" whenever the root's level differs from its shell default (WARN);
# the known chatty WARN sources are turned down one by one instead.
_LOG4J2 = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.parquet.name = org.apache.parquet
logger.parquet.level = error
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = error
logger.sparkutil.name = org.apache.spark.util.Utils
logger.sparkutil.level = error
"""


def _log4j_file() -> Path:
    d = Path(tempfile.gettempdir()) / f"groupcheck-spark-{os.getuid()}"
    d.mkdir(parents=True, exist_ok=True)
    p = d / "log4j2.properties"
    if not p.exists() or p.read_text() != _LOG4J2:
        p.write_text(_LOG4J2)
    return p


def _under_spark_submit() -> bool:
    # spark-submit launches the driver JVM first and tells PySpark its port.
    return "PYSPARK_GATEWAY_PORT" in os.environ


def _submitted_conf():
    """The configuration ``spark-submit`` started the driver JVM with."""
    from pyspark import SparkConf, SparkContext     # lazy: pyspark is heavy and only this path needs it
    SparkContext._ensure_initialized()      # connects to spark-submit's JVM; starts none
    return SparkConf()


def on_loopback(master: str | None) -> bool:
    """Whether every executor of ``master`` runs on this machine: a local
    master, or a standalone one (``spark://h1:p1,h2:p2``) whose hosts are all
    loopback addresses.  Only then may the driver listen on 127.0.0.1 alone."""
    if master is None or master.startswith("local"):
        return True
    if not master.startswith("spark://"):
        return False
    for hostport in master[len("spark://"):].split(","):
        host = hostport.rsplit(":", 1)[0].strip("[]")
        if host == "localhost":
            continue
        try:
            if not ipaddress.ip_address(host).is_loopback:
                return False
        except ValueError:      # a host name: it may resolve to anything
            return False
    return True


def session(master: str | None = None, app_name: str = "groupcheck", conf: dict | None = None):
    """The process's SparkSession, created on first call.

    ``master``: a Spark master URL (``local[2]``, ``spark://host:7077``); None
    means ``local[*]``, or whatever ``spark-submit --master`` chose."""
    submitted = _submitted_conf() if _under_spark_submit() else None
    effective = master or (submitted.get("spark.master", None) if submitted is not None else None)
    loopback = on_loopback(effective)
    if loopback:
        # A cluster elsewhere must reach the driver: loopback only when it is all here.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark import SparkContext     # lazy: pyspark is heavy and only this path needs it
    from pyspark.sql import SparkSession     # lazy: pyspark is heavy and only this path needs it

    active = SparkContext._active_spark_context
    if active is not None:
        if master is None or active.master == master:
            return SparkSession.builder.getOrCreate()
        active.stop()        # one SparkContext per process: switch masters

    if not _under_spark_submit() and (master is None or master.startswith("local")):
        _use_private_local_dir()
    b = SparkSession.builder.appName(app_name)
    if not _under_spark_submit():
        b = b.master(master or DEFAULT_MASTER)
        # spark-class puts SPARK_CONF_DIR on the driver's classpath, where log4j2
        # finds our log4j2.properties (a user's own SPARK_CONF_DIR wins).
        os.environ.setdefault("SPARK_CONF_DIR", str(_log4j_file().parent))
        b = b.config("spark.driver.memory", "2g")
        if master is None or master.startswith("local"):
            # The local JVM is driver and executor, and its work (Parquet, the
            # shuffle, Arrow) is small beside the Python tasks': the C1
            # compiler alone halves start-up here (12 -> 6 s) and leaves the
            # cores to the tasks instead of C2's compiler threads.
            b = b.config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")
    elif master:
        b = b.master(master)
    settings = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        # Run verdicts shuffle small data: 200 partitions
        # (Spark's default) would be mostly empty tasks on 2 cores.
        "spark.sql.shuffle.partitions": "8",
        "spark.sql.session.timeZone": "UTC",
    }
    if not loopback:
        # The executors are elsewhere and must reach the driver.
        settings.pop("spark.driver.host")
        settings.pop("spark.driver.bindAddress")
    if submitted is not None:
        settings = {k: v for k, v in settings.items() if not submitted.contains(k)}
    settings.update(conf or {})
    for k, v in settings.items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


# The local driver's scratch space: one folder of ours (under the user's
# SPARK_LOCAL_DIRS, or the temp dir), given to the JVM as SPARK_LOCAL_DIRS and
# removed when this process ends.  The JVM's own shutdown hooks remove what
# they know of, but a folder a task creates while the JVM is being killed
# (SIGTERM) can outlive it; removing ours afterwards leaves nothing behind.
_LOCAL_DIR: str | None = None


def _use_private_local_dir() -> None:
    global _LOCAL_DIR
    if _LOCAL_DIR is None:
        parent = (os.environ.get("SPARK_LOCAL_DIRS") or "").split(",")[0] or None
        _LOCAL_DIR = tempfile.mkdtemp(prefix="groupcheck-spark-", dir=parent)
        atexit.register(remove_local_dir)
    os.environ["SPARK_LOCAL_DIRS"] = _LOCAL_DIR


def remove_local_dir() -> None:
    """Remove the driver's scratch folder (call once its JVM has exited)."""
    if _LOCAL_DIR is not None:
        shutil.rmtree(_LOCAL_DIR, ignore_errors=True)


def stop() -> None:
    """Stop the process's SparkContext, if any."""
    from pyspark import SparkContext     # lazy: pyspark is heavy and only this path needs it
    sc = SparkContext._active_spark_context
    if sc is not None:
        sc.stop()


def parallelism(spark) -> int:
    return max(1, int(spark.sparkContext.defaultParallelism))


# Progress of long jobs.  Spark's console bar is off (it redraws over our
# output, and over the command's own progress bar, and fills CI logs with
# carriage returns); instead a driver thread polls the status tracker and,
# once the block has run PROGRESS_AFTER seconds, writes a plain line with the
# stages done and the running stages' tasks done whenever that changed: at
# most one per PROGRESS_EVERY seconds on a terminal, per PROGRESS_LOG_EVERY
# otherwise.  Plain lines, never redrawn, because the command's rich bar
# (cli/render.py) owns the terminal's last line and prints what is written
# to stderr above it.  A SparkListener would be pushed the same events, but
# it lives in the JVM; polling needs nothing but PySpark.
PROGRESS_AFTER = 10.0
PROGRESS_EVERY = 5.0
PROGRESS_LOG_EVERY = 15.0


def progress_line(tracker, label: str, elapsed: float, jobs) -> str:
    """One progress line, from a ``StatusTracker``, for the jobs ``jobs``."""
    stages = set()
    for j in jobs:
        info = tracker.getJobInfo(j)
        if info is not None:
            stages.update(info.stageIds)
    active = set(tracker.getActiveStageIds())
    done, parts = 0, []
    for sid in sorted(stages | active):
        info = tracker.getStageInfo(sid)
        if info is None:
            continue
        if sid in active:
            running = f", {info.numActiveTasks} running" if info.numActiveTasks else ""
            parts.append(f"stage {sid}: {info.numCompletedTasks}/{info.numTasks} tasks done{running}")
        elif info.numTasks and info.numCompletedTasks >= info.numTasks:
            done += 1
    now = "; ".join(parts) or "between stages"
    return f"spark {label}: {elapsed:.0f} s; stages done {done}; {now}"


def tasks_done(tracker, jobs) -> tuple[int, int]:
    """Tasks done and tasks in all, over the stages of the jobs ``jobs``."""
    done = total = 0
    for j in jobs:
        info = tracker.getJobInfo(j)
        for sid in (info.stageIds if info is not None else []):
            st = tracker.getStageInfo(sid)
            if st is not None:
                done, total = done + st.numCompletedTasks, total + st.numTasks
    return done, total


@contextmanager
def progress(spark, label: str, stream=None, after: float = PROGRESS_AFTER):
    """Report the Spark jobs run inside the block on ``stream`` (stderr), if
    the block lasts longer than ``after`` seconds."""
    stream = stream or sys.stderr
    tracker = spark.sparkContext.statusTracker()
    before = set(tracker.getJobIdsForGroup())
    tty = hasattr(stream, "isatty") and stream.isatty()
    stop = threading.Event()
    t0 = time.monotonic()

    def poll():
        if stop.wait(after):
            return
        last = None
        while True:
            try:
                line = progress_line(tracker, label, time.monotonic() - t0,
                                     set(tracker.getJobIdsForGroup()) - before)
            except Exception:       # the context stopping under us: no more progress to tell
                break
            try:        # the tasks, to the command's progress (core/progress.py), if it listens
                tick(f"spark {label}: tasks", *tasks_done(tracker, set(tracker.getJobIdsForGroup()) - before))
            except Exception:
                pass
            news = line.split("; ", 1)[1]       # the elapsed time alone is no news
            if news != last:
                stream.write(line + "\n")
                stream.flush()
            last = news
            if stop.wait(PROGRESS_EVERY if tty else PROGRESS_LOG_EVERY):
                break

    # the thread runs in this context: the command's progress reporter is set there
    th = threading.Thread(target=contextvars.copy_context().run, args=(poll,), name=f"spark-progress-{label}",
                          daemon=True)
    th.start()
    try:
        yield
    finally:
        stop.set()
        th.join()
