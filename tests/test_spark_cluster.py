"""The pipeline on a real Spark standalone cluster (docs/pipeline.md, "On a
Spark cluster"): a Master and two Workers started from PySpark's own Spark
(``bin/spark-class``), all on 127.0.0.1, then ``spark-submit`` of
conformance/pipeline/spark_submit.py (ingest, check) and ``groupcheck traces check
--master spark://...`` on a corpus of three protocols with a bad row, each
compared with the local engine on the same input.

Every process is started in a session of its own and stopped in the
``finally``; the test then scans /proc for anything left of them (the
executors the Workers start, their Python daemons, the drivers) and for
sockets they listened on outside 127.0.0.1.  Every wait is bounded, and the
whole test by ``BUDGET`` seconds.
"""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from groupcheck.conformance.pipeline import dataset as D, stages as P
from groupcheck.conformance.replay.registry import get
from groupcheck.core.trace import writer as tracefile
from groupcheck.core.trace import format as trace_format

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("spark-cluster")]

BUDGET = 900            # seconds for the whole test
EXECUTOR_MEMORY = 512   # MiB, under the Workers' 1 GiB each


def _spark_home() -> Path | None:
    try:
        import pyspark
    except ImportError:
        return None
    return Path(pyspark.__file__).parent


def _missing() -> str | None:
    if shutil.which("java") is None:
        return "no Java runtime on PATH (Spark's Master, Workers and drivers are JVMs)"
    home = _spark_home()
    if home is None:
        return "PySpark is not installed"
    for s in ("bin/spark-class", "bin/spark-submit"):
        if not os.access(home / s, os.X_OK):
            return f"PySpark's {s} is missing or not executable ({home})"
    return None


# ---------------------------------------------------------------- processes, from /proc

def _proc_table() -> dict:
    """pid -> (ppid, session id, start time, state) of every process."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue
        f = stat[stat.rfind(")") + 2:].split()
        out[int(d)] = (int(f[1]), int(f[3]), int(f[19]), f[0])
    return out


def _listen_inodes() -> dict:
    """inode -> address of every TCP socket in LISTEN state."""
    out = {}
    for name, v6 in (("tcp", False), ("tcp6", True)):
        try:
            lines = Path(f"/proc/net/{name}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if f[3] != "0A":
                continue
            raw = bytes.fromhex(f[1].split(":")[0])
            # the kernel prints each 32-bit word in host (little-endian) order
            raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
            addr = ipaddress.IPv6Address(raw) if v6 else ipaddress.IPv4Address(raw)
            out[int(f[9])] = (addr.ipv4_mapped or addr) if v6 else addr
    return out


class Processes:
    """The processes the test starts, each in a session of its own, and every
    descendant seen while they ran (the Workers' executors and those
    executors' Python daemons, which move to a process group of their own)."""

    def __init__(self, tmp: Path, env: dict, deadline: float):
        self.tmp, self.env, self.deadline = tmp, env, deadline
        self.started: list[tuple[str, subprocess.Popen]] = []
        self.seen: dict[int, int] = {}          # pid -> start time
        self.commands: set[str] = set()         # the command lines seen
        self.listening: set = set()             # (pid, address)

    def start(self, name: str, argv: list, cwd=None) -> subprocess.Popen:
        with open(self.tmp / f"{name}.out", "wb") as out, open(self.tmp / f"{name}.err", "wb") as err:
            p = subprocess.Popen([str(a) for a in argv], stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                 env=self.env, cwd=cwd or self.tmp, start_new_session=True)
        self.started.append((name, p))
        self.look()
        return p

    def ours(self, table: dict) -> dict:
        """The processes of our sessions, or descended from what we started."""
        sids = {p.pid for _, p in self.started}
        found = {pid: row for pid, row in table.items() if row[1] in sids}
        grew = True
        while grew:
            grew = False
            for pid, row in table.items():
                if pid not in found and row[0] in found:
                    found[pid] = row
                    grew = True
        return found

    def look(self) -> None:
        table = _proc_table()
        mine = self.ours(table)
        for pid, row in mine.items():
            if self.seen.setdefault(pid, row[2]) == row[2]:
                try:
                    self.commands.add(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())
                except OSError:
                    pass
        inodes = _listen_inodes()
        for pid in mine:
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
            except OSError:
                continue
            for fd in fds:
                try:
                    link = os.readlink(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    continue
                if link.startswith("socket:[") and int(link[8:-1]) in inodes:
                    self.listening.add((pid, str(inodes[int(link[8:-1])])))

    def left(self) -> dict:
        """What is still running of ours (a zombie has exited: not counted)."""
        table = _proc_table()
        alive = {pid: row for pid, row in self.ours(table).items() if row[3] != "Z"}
        alive.update({pid: row for pid, row in table.items()
                      if self.seen.get(pid) == row[2] and row[3] != "Z"})
        return alive

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def tail(self, name: str, n: int = 40) -> str:
        return "\n".join(f"--- {name}.{s}:\n" + "\n".join(
            (self.tmp / f"{name}.{s}").read_text(errors="replace").splitlines()[-n:]) for s in ("out", "err"))

    def run(self, name: str, argv: list, limit: float, cwd=None) -> tuple[int, str]:
        """Run to the end, within ``limit`` s and the test's budget, watching
        what it starts; (exit status, stdout)."""
        p = self.start(name, argv, cwd)
        end = time.monotonic() + min(limit, self.remaining())
        while p.poll() is None:
            if time.monotonic() > end:
                raise AssertionError(f"{name}: still running after {limit:.0f} s\n{self.tail(name)}")
            self.look()
            time.sleep(0.5)
        return p.returncode, (self.tmp / f"{name}.out").read_text()

    def stop(self) -> None:
        """SIGTERM each process group (the last started first: drivers, then
        the Workers, which stop their executors, then the Master), SIGKILL
        what is left of our sessions after a grace period."""
        for _, p in reversed(self.started):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        end = time.monotonic() + 20
        for _, p in self.started:
            try:
                p.wait(timeout=max(0.1, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for _ in range(3):
            rest = self.left()
            if not rest:
                return
            for pid in rest:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            for _, p in self.started:
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
            time.sleep(1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _master_state(ui_port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as r:
        return json.load(r)


# ---------------------------------------------------------------- the corpus

def _corpus(d: Path) -> None:
    """SEQUENCER's campaign (its coordinator crash makes violations), FLUSH
    and STABLE traces, and a SEQUENCER trace with a truncated line."""
    d.mkdir(parents=True)
    for name, seeds in (("sequencer", range(6)), ("flush", range(2)), ("stable", range(2))):
        proto = get(name)
        for seed in seeds:
            tracefile.write(d / f"{name}-{seed}.ndjson",
                            proto.simulate(seed, proto.campaign_faults, proto.default_options)[0])
    proto = get("sequencer")
    lines = trace_format.dumps(proto.simulate(50, proto.campaign_faults, proto.default_options)[0]).split("\n")[:-1]
    lines[3] = lines[3][:-5]
    (d / "bad-row.ndjson").write_text("\n".join(lines) + "\n")


# ---------------------------------------------------------------- the test

def test_pipeline_on_a_standalone_cluster(tmp_path, monkeypatch):
    """ingest and check by spark-submit, and ``groupcheck traces check
    --master``, on a Master and two Workers: the local engine's accounting,
    quarantine and verdict rows; the executors had 512 MiB and the apps both
    Workers' cores; nothing left running, nothing listening beyond 127.0.0.1."""
    why = _missing()
    if why:
        pytest.skip(why)
    t0 = time.monotonic()
    home = _spark_home()
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text(
        "spark.master.rest.enabled false\n"                 # no REST submission server
        f"spark.executor.memory {EXECUTOR_MEMORY}m\n"        # what `groupcheck traces --master` runs with
        "spark.executor.extraJavaOptions -XX:TieredStopAtLevel=1\n")
    for d in ("local", "work", "tmp"):
        (tmp_path / d).mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
    env.update(SPARK_HOME=str(home), SPARK_CONF_DIR=str(conf), SPARK_LOCAL_IP="127.0.0.1",
               SPARK_LOCAL_DIRS=str(tmp_path / "local"), TMPDIR=str(tmp_path / "tmp"),
               SPARK_DAEMON_MEMORY="512m", PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    procs = Processes(tmp_path, env, time.monotonic() + BUDGET)
    port, ui = _free_port(), _free_port()
    master = f"spark://127.0.0.1:{port}"
    cls = home / "bin" / "spark-class"
    _corpus(tmp_path / "in")
    timings = {}
    try:
        procs.start("master", [cls, "org.apache.spark.deploy.master.Master",
                               "--host", "127.0.0.1", "--port", port, "--webui-port", ui])
        for w in (1, 2):
            procs.start(f"worker{w}", [cls, "org.apache.spark.deploy.worker.Worker", master,
                                       "--host", "127.0.0.1", "--cores", 1, "--memory", "1g",
                                       "--webui-port", _free_port(), "--work-dir", tmp_path / "work"])
        end = time.monotonic() + min(180, procs.remaining())
        state = {}
        while state.get("aliveworkers") != 2:
            for name, p in procs.started:
                assert p.poll() is None, f"{name} exited with {p.returncode}\n{procs.tail(name)}"
            assert time.monotonic() < end, f"two Workers not registered in time: {state}\n{procs.tail('master')}"
            try:
                state = _master_state(ui)
            except OSError:
                pass
            procs.look()
            time.sleep(1)
        timings["cluster up"] = time.monotonic() - t0

        submit = [home / "bin" / "spark-submit", "--master", master,
                  "--conf", f"spark.executor.memory={EXECUTOR_MEMORY}m",
                  "--conf", f"spark.pyspark.python={sys.executable}",
                  Path(P.__file__).with_name("spark_submit.py")]
        # relative paths, as a user types them: the executors run in their own folders
        t = time.monotonic()
        rc, out = procs.run("ingest", submit + ["ingest", "in", "--out", "ds"], 300)
        assert rc == 0, procs.tail("ingest")
        ingested = json.loads(out[out.index("{"):])
        timings["ingest"] = time.monotonic() - t
        t = time.monotonic()
        rc, out = procs.run("check", submit + ["check", "ds", "--no-coverage"], 300)
        assert rc == 1, procs.tail("check")         # a rejected run is not ok
        checked = json.loads(out[out.index("{"):])
        timings["check"] = time.monotonic() - t
        t = time.monotonic()
        groupcheck = Path(sys.executable).with_name("groupcheck")
        rc, out = procs.run("cli", [groupcheck, "traces", "check", "ds", "--master", master,
                                    "--json", "--no-coverage"], 300)
        assert rc == 2, procs.tail("cli")           # README, 'Exit codes': a rejected run
        cli = json.loads(out)
        timings["cli check"] = time.monotonic() - t
        end = time.monotonic() + min(30, procs.remaining())
        while len(apps := _master_state(ui)["completedapps"]) < 3 and time.monotonic() < end:
            time.sleep(1)       # the last driver's goodbye may still be on its way
    finally:
        procs.stop()
    left = procs.left()
    assert not left, f"still running after the test stopped them: {left}"
    # ... and what was watched included the executors and their Python workers
    assert any("CoarseGrainedExecutorBackend" in c for c in procs.commands)
    assert any("pyspark.daemon" in c for c in procs.commands)

    # the local engine, on the same input named the same way
    monkeypatch.chdir(tmp_path)
    loc = P.ingest(["in"], "ds-local", engine="local")
    for k in ("runs", "events", "rows_in", "rows_accepted", "rows_rejected", "runs_rejected", "protocols"):
        assert ingested[k] == loc[k], k
    assert loc["rows_rejected"] == 1 and loc["runs_rejected"] == 1
    assert ingested["rows_in"] == ingested["rows_accepted"] + ingested["rows_rejected"]
    key = lambda r: (r["file"], r["line"])       # noqa: E731
    assert sorted(D.read_rejected(tmp_path / "ds"), key=key) == sorted(D.read_rejected("ds-local"), key=key)
    local = P.check("ds-local", engine="local", coverage=False, write=False)
    assert checked["engine"] == cli["engine"] == "spark"
    assert checked["verdicts"] == cli["verdicts"] == local["verdicts"]
    assert checked["counts"] == local["counts"] and checked["disagreements"] == 0
    assert {"ok", "rejected"} <= set(local["counts"]) and {"violation", "documented"} & set(local["counts"])
    assert {v["protocol"] for v in local["verdicts"]} >= {"sequencer", "flush", "stable"}

    # three apps, each on both Workers' executors, with the memory asked for
    assert sorted(a["name"] for a in apps) == ["groupcheck", "groupcheck-check", "groupcheck-ingest"]
    assert all(a["cores"] == 2 and a["memoryperexecutor"] == EXECUTOR_MEMORY for a in apps), apps
    bound = {addr for _, addr in procs.listening}
    assert bound and all(ipaddress.ip_address(a).is_loopback for a in bound), procs.listening
    timings["total"] = time.monotonic() - t0
    print("spark cluster test:", json.dumps({k: round(v, 1) for k, v in timings.items()}),
          f"corpus {loc['runs']} runs, {loc['rows_in']} rows; {len(procs.listening)} listening sockets")
