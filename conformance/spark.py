"""The Spark session the conformance pipeline runs on (docs/pipeline.md).

Theory of operation
-------------------
PySpark starts a JVM driver on first use.  ``session`` builds it for this
project's habits: ``local[*]`` unless a master URL is given (or the job was
started by ``spark-submit``, whose ``--master`` then wins), no web UI, no
console progress bars, the driver bound to 127.0.0.1, and log4j quiet (its
configuration is a small properties file written to a temporary folder at
start-up and handed over as SPARK_CONF_DIR, because the one bundled with Spark
logs at WARN and announces itself).
Python workers run the interpreter that runs us, so the venv's groupcheck
is the one the tasks import.

One session per process: Spark allows a single active SparkContext, so a
different master (bench/pipeline.py switches local[1] -> local[2]) stops the
running one first.  Start-up costs ~10 s, which is why tests share one
session (tests/conftest_spark.py).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

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


def session(master: str | None = None, app_name: str = "groupcheck", conf: dict | None = None):
    """The process's SparkSession, created on first call.

    ``master``: a Spark master URL (``local[2]``, ``spark://host:7077``); None
    means ``local[*]``, or whatever ``spark-submit --master`` chose."""
    if master is None or master.startswith("local"):
        # Loopback only for local masters: a cluster's executors must reach the driver.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

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
    if master and not master.startswith("local"):
        # On a cluster the executors must reach the driver: do not pin it to loopback.
        settings.pop("spark.driver.host")
        settings.pop("spark.driver.bindAddress")
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
        import atexit
        parent = (os.environ.get("SPARK_LOCAL_DIRS") or "").split(",")[0] or None
        _LOCAL_DIR = tempfile.mkdtemp(prefix="groupcheck-spark-", dir=parent)
        atexit.register(remove_local_dir)
    os.environ["SPARK_LOCAL_DIRS"] = _LOCAL_DIR


def remove_local_dir() -> None:
    """Remove the driver's scratch folder (call once its JVM has exited)."""
    if _LOCAL_DIR is not None:
        import shutil
        shutil.rmtree(_LOCAL_DIR, ignore_errors=True)


def stop() -> None:
    """Stop the process's SparkContext, if any."""
    from pyspark import SparkContext
    sc = SparkContext._active_spark_context
    if sc is not None:
        sc.stop()


def parallelism(spark) -> int:
    return max(1, int(spark.sparkContext.defaultParallelism))
