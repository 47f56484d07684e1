"""JGroups 2.12 (Debian's libjgroups-java) as a target: its members run on
127.0.0.1, and their histories and (for SEQUENCER and STABLE) their white-box steps
are checked against our specs (``groupcheck jgroups run``, docs/jgroups.md).

Theory of operation
-------------------
``compile_driver`` compiles the Java adapter
(``conformance/jgroups/HistoryDriver.java``: a protocol at the top of the
stack that logs sends, deliveries, views and block/unblock, and a driver for
one member) with javac against ``/usr/share/java/jgroups.jar`` into a cache
folder named by the hash of the source and the jar's size and time, so a
second run compiles nothing.

``Runner`` validates its options before touching the disk (``ValueError``:
the command's usage error), then starts the members one at a time, each
waiting for the previous one's ``connect``, so member 1 is the first
coordinator (and SEQUENCER's sequencer).  The stack is generated per member
from ``STACKS``: TCP and TCPPING restricted to the members' 127.0.0.1
ports (no multicast socket), failure detection, NAKACK, UNICAST, STABLE,
GMS, then SEQUENCER and/or pbcast.FLUSH as the stack names.  Once every
member has the full view (the time origin of ``--kill``), the members
multicast; each kill is a SIGKILL and an environment ``crash`` record, and
each ``--flush`` a marker file on which that member starts a flush of its
own (FlushTest's), on the same clock.  A member leaves once it has
delivered nothing for ``settle`` seconds after its last multicast.

White-box (stacks with ``steps``): two more protocols of the driver around
JGroups's SEQUENCER write each member's steps under Sequencer.tla's action
names (over FLUSH too: the trace is then the SEQUENCER layer's, and its
agreement with the history is judged on the checks that layer promises), stamped with the wall clock in microseconds (``node-<k>.steps``);
``write_trace`` merges them by stamp into one format-2 trace, adds the
kills as ``Crash`` and JGroups's views as the oracle's ``NewView``, and
names in its header JGroups's deviations from the seed that Sequencer.tla
declares (``SuspectResend``: SEQUENCER.handleSuspect's re-send, logged as
``Suspect``; ``FillGaps``: SeqnoTable's received-table; ``SeparateChannels``:
UNICAST's FORWARDs and NAKACK's DATA); ``jgroups_step``
names the JGroups step behind a record the replay stops at.
On the ``stable`` stack two protocols below NAKACK and STABLE write
Stable.tla's steps instead, from a base every member takes once all have
the full view (STABLE suspended until then, so the base is the spec's
Init); ``write_stable_trace`` checks that the bases agree and merges the
steps by stamp (crash-free runs only: Stable.tla has no crash), and
``stable_step`` names the JGroups step behind a rejected record.  On the
``flush`` stack four protocols around FLUSH, GMS and NAKACK write
Flush.tla's steps (JGroups 2.12's flush: no FLUSH_OK round) from member
1's first view, so that the joins are flushes of the trace;
``write_flush_trace`` merges them with the kills, and ``flush_step``
explains a rejected record.

Bounds: the run has a deadline; each JVM also halts itself a little after
it (the driver's watchdog), so none outlives a harness killed with SIGKILL.
Every JVM still alive is killed in ``finally``: on the normal end, on an
error, and on SIGTERM/SIGINT, which ``run`` turns into ``Interrupted`` for
its duration (as impl/cluster.py's runner does).

The output folder has the layout of ``groupcheck cluster run``'s:
``history/`` (one file per member plus ``env.ndjson`` with the kills: the
input of ``groupcheck history``), ``traces/`` (white-box traces, when a
stack writes them: the input of ``groupcheck conform``), ``node-<k>.xml``
and ``node-<k>.log`` per member, ``cluster.json`` (run id, pids, ports) and
``result.json``.  ``check`` judges a folder: the history under the promises
of the stack (``STACKS``), the traces with the model replay and/or TLC,
and whether the two verdicts agree."""

from __future__ import annotations

import hashlib
import heapq
import itertools
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from groupcheck.conformance import history, tlctrace
from groupcheck.conformance.replay.conform import replay
from groupcheck.core.properties import Violation
from groupcheck.core.trace import history as history_format, writer as tracefile
from groupcheck.core.trace.reader import load, TraceError
from groupcheck.impl.faults import kills_and_senders


JAR = Path("/usr/share/java/jgroups.jar")
SOURCE = Path(__file__).with_name("HistoryDriver.java")
MAIN = "HistoryDriver"


@dataclass(frozen=True)
class Stack:
    sequencer: bool
    flush: bool
    protocol: Optional[str] = None   # the spec protocol whose promises the history is judged on
    own_promises: tuple = ()         # without one: the history checks the stack promises
    steps: bool = False              # its members log white-box steps (the spec's actions) too
    layer: Optional[str] = None      # the spec protocol of those steps when they are one layer's of the stack
    based: bool = False              # ... from a base all members take before any multicast (STABLE's
                                     # Init); its spec has no crash, so a kill run has no trace
    writer: str = "sequencer"        # the trace writer of its steps: sequencer, stable or flush
    gossip_ms: int = 2000            # STABLE's desired_avg_gossip
    gossip_bytes: int = 400000       # STABLE's max_bytes: a member gossips once it received that many


# NAKACK (reliable per-sender FIFO) and STABLE are in every stack; without
# SEQUENCER nothing orders senders, and without FLUSH nothing makes survivors
# agree on a killed member's last messages.
STACKS = {
    "sequencer": Stack(True, False, "sequencer", steps=True),
    # SEQUENCER over pbcast.FLUSH; its trace is SEQUENCER's steps alone (Sequencer.tla)
    "sequencerflush": Stack(True, True, "sequencerflush", steps=True, layer="sequencer"),
    # pbcast.FLUSH's steps (Flush.tla, FlushOkRound FALSE), from member 1's first view on
    "flush": Stack(False, True, "flush", steps=True, writer="flush"),
    # NAKACK + STABLE.  STABLE's timer gossips first 10 s after the start (its
    # first interval is drawn while it has no members), so a short run gossips
    # by bytes received: every 200 bytes, about 30 of our messages
    "stable": Stack(False, False, own_promises=("Integrity", "NoDuplicates", "SenderFIFO"), steps=True,
                    based=True, writer="stable", gossip_ms=500, gossip_bytes=200),
}


def promised(stack: str) -> tuple:
    """The history checks ``stack`` promises: its spec protocol's
    (conformance/history.py), or its own."""
    s = STACKS[stack]
    return tuple(sorted(history.promised_checks(s.protocol))) if s.protocol else s.own_promises


class JGroupsError(RuntimeError):
    """A run could not be made (a member did not start or join)."""


class Interrupted(Exception):
    """SIGTERM or SIGINT reached the runner; every JVM was killed."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def available() -> Optional[str]:
    """None when the adapter can run here, else the reason it cannot."""
    if not JAR.exists():
        return f"{JAR} absent (Debian's libjgroups-java: run `make jgroups`)"
    for tool in ("java", "javac"):
        if shutil.which(tool) is None:
            return f"{tool} not on PATH (a JDK: run `make jgroups`)"
    return None


def classes_dir() -> Path:
    """Where the compiled driver is cached: one folder per source and jar version."""
    jar = JAR.stat() if JAR.exists() else None
    digest = hashlib.sha256(SOURCE.read_bytes() + repr(jar and (jar.st_size, jar.st_mtime_ns)).encode()).hexdigest()[:16]
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "groupcheck" / f"jgroups-driver-{digest}"


def compile_driver(dest: Optional[Path] = None) -> Path:
    """The driver's classes (compiled once per source version)."""
    dest = Path(dest) if dest is not None else classes_dir()
    if (dest / f"{MAIN}.class").exists():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".compiling-", dir=dest.parent))
    try:
        subprocess.run(["javac", "-nowarn", "-cp", str(JAR), "-d", str(tmp), str(SOURCE)], check=True,
                       timeout=180, capture_output=True)
        try:
            tmp.rename(dest)           # atomic: a concurrent compile of the same source loses the race
        except OSError:
            if not (dest / f"{MAIN}.class").exists():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def _ephemeral_range() -> tuple[int, int]:
    try:
        lo, hi = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
        return lo, hi
    except (OSError, ValueError):
        return 32768, 60999          # Linux's default


def _free_ports(n: int) -> list[int]:
    """n free TCP ports on 127.0.0.1 (TCPPING lists them), below the kernel's
    ephemeral range: member k binds its port only after the members before
    it joined, seconds later on a loaded machine, and a port the kernel had
    handed out (bind to 0) could meanwhile be given to another socket
    (FD_SOCK's server socket, a connection's local end, another run's JVM),
    so that member k failed with a BindException.  A port outside that range
    is taken only by an explicit bind; each is checked free here."""
    lo, _ = _ephemeral_range()
    pool = range(10000, lo) if lo - 10000 >= 1000 else None
    rng = random.SystemRandom()
    socks: list = []
    try:
        while len(socks) < n:
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", rng.choice(pool) if pool else 0))
            except OSError:
                s.close()
                continue
            socks.append(s)
        return [s.getsockname()[1] for s in socks]       # distinct: each still bound here
    finally:
        for s in socks:
            s.close()


def config(port: int, ports: list[int], stack: Stack, shuffle: bool = False) -> str:
    """A member's stack.  ``shuffle`` puts JGroups's SHUFFLE below NAKACK, as
    SequencerOrderTest does: up to 10 messages coming up (or 1 s of them)
    are passed on in a random order, so NAKACK and SEQUENCER must restore it."""
    hosts = ",".join(f"127.0.0.1[{p}]" for p in ports)
    return f"""<config xmlns="urn:org:jgroups">
  <TCP bind_addr="127.0.0.1" bind_port="{port}" port_range="0" loopback="true" enable_bundling="false"
       sock_conn_timeout="300" thread_pool.rejection_policy="run" oob_thread_pool.rejection_policy="run"/>
  <TCPPING initial_hosts="{hosts}" port_range="0" timeout="2000" num_initial_members="{len(ports)}"/>
  <MERGE2 min_interval="2000" max_interval="4000"/>
  <FD_SOCK bind_addr="127.0.0.1"/>
  <FD timeout="1000" max_tries="2"/>
  <VERIFY_SUSPECT timeout="500"/>
{'  <SHUFFLE up="true" down="false" max_size="10" max_time="1000"/>' if shuffle else ''}
  <pbcast.NAKACK use_mcast_xmit="false" gc_lag="0" retransmit_timeout="300,600,1200" discard_delivered_msgs="false"/>
  <UNICAST timeout="300,600,1200"/>
  <pbcast.STABLE stability_delay="200" desired_avg_gossip="{stack.gossip_ms}" max_bytes="{stack.gossip_bytes}"/>
  <pbcast.GMS print_local_addr="false" join_timeout="3000" view_bundling="true"/>
{'  <SEQUENCER/>' if stack.sequencer else ''}
  <FRAG2 frag_size="60000"/>
{'  <pbcast.FLUSH timeout="4000"/>' if stack.flush else ''}
</config>
"""


def _member_at(option: str, spec: str, form: str) -> tuple[int, float]:
    member, sep, at = spec.partition("@")
    try:
        if not sep:
            raise ValueError
        m, t = int(member), float(at)
    except ValueError:
        raise ValueError(f"{option} {spec!r}: expected {form}") from None
    if t < 0:
        raise ValueError(f"{option} {spec!r}: SECONDS must be at least 0")
    return m, t


def parse_kill(spec: str) -> tuple[int, float]:
    """MEMBER@SECONDS, e.g. 1@0.25."""
    return _member_at("--kill", spec, "MEMBER@SECONDS, e.g. 1@0.25")


def parse_flush(spec: str) -> tuple[int, float, bool]:
    """MEMBER@SECONDS[:open], e.g. 2@1 (a whole flush) or 2@1:open (START_FLUSH only)."""
    at, _, mode = spec.partition(":")
    form = "MEMBER@SECONDS or MEMBER@SECONDS:open, e.g. 2@1.5"
    if mode not in ("", "open"):
        raise ValueError(f"--flush {spec!r}: expected {form}")
    m, t = _member_at("--flush", at, form)
    return m, t, mode == "open"


@dataclass
class RunResult:
    out: str
    run_id: str
    stack: str
    killed: list
    failed: list                 # members that neither finished nor were killed
    pids: dict
    seconds: float
    logs: dict = field(default_factory=dict)     # member -> its JVM's output (tail)
    flushes: dict = field(default_factory=dict)  # member -> its own flush's outcome: ok, failed, open, or none


class Runner:
    def __init__(self, stack: str, members: int, messages: int, kills: list[tuple[int, float]], out: Path, *,
                 senders: Optional[list[int]] = None, interval_ms: int = 10, settle: float = 4.0,
                 timeout: float = 90.0, flushes: Optional[list[tuple[int, float, bool]]] = None,
                 shuffle: bool = False, log: Callable[[str], None] = lambda s: None) -> None:
        if stack not in STACKS:
            raise ValueError(f"--stack {stack!r}: choose {', '.join(STACKS)}")
        if members < 2:
            raise ValueError(f"--members {members}: at least 2")
        if messages < 0:
            raise ValueError(f"--messages {messages}: at least 0")
        self.senders = kills_and_senders(members, kills, senders, who="member")
        if interval_ms < 0 or settle < 0 or timeout <= 0:
            raise ValueError("--interval, --settle: at least 0; --timeout: more than 0")
        flushes = list(flushes or [])
        if flushes and not STACKS[stack].flush:
            raise ValueError(f"--flush: the {stack} stack has no FLUSH (flush or sequencerflush)")
        for m, _, _ in flushes:
            if not 1 <= m <= members:
                raise ValueError(f"--flush {m}@...: no member {m} (1..{members})")
        if len({m for m, _, _ in flushes}) < len(flushes):
            raise ValueError("--flush: one flush per member")
        self.flushes, self.shuffle = flushes, shuffle
        self.stack, self.n, self.messages = stack, members, messages
        self.kills = sorted(kills, key=lambda k: k[1])
        self.out = Path(out)
        self.interval_ms, self.settle, self.timeout, self.log = interval_ms, settle, timeout, log

    def run(self, classes: Path) -> RunResult:
        t_wall = time.monotonic()
        out, hdir = self.out, self.out / "history"
        hdir.mkdir(parents=True, exist_ok=True)
        for old in (list(hdir.glob("*.ndjson")) + list(out.glob("traces/*.ndjson")) + list(out.glob("node-*.*"))
                    + [out / "result.json"]):
            old.unlink(missing_ok=True)
        run_id = f"jgroups-{self.stack}-n{self.n}-m{self.messages}-{int(time.time())}"
        ports = _free_ports(self.n)
        procs: dict[int, subprocess.Popen] = {}
        killed: list[int] = []
        killed_at: dict[int, float] = {}
        deadline = time.monotonic() + self.timeout
        flush_mode = {m: "open" if is_open else "run" for m, _, is_open in self.flushes}
        old = self._trap_signals()
        try:
            for k, port in enumerate(ports, start=1):
                cfg = out / f"node-{k}.xml"
                cfg.write_text(config(port, ports, STACKS[self.stack], self.shuffle), encoding="utf-8")
                with open(out / f"node-{k}.log", "wb") as log:
                    procs[k] = subprocess.Popen(
                        ["java", "-Djava.net.preferIPv4Stack=true", "-Djgroups.bind_addr=127.0.0.1", "-Xmx128m",
                         "-cp", f"{classes}{os.pathsep}{JAR}", MAIN, str(k), str(hdir / f"node-{k}.ndjson"),
                         str(out / f"node-{k}"), run_id, str(cfg), str(self.n),
                         str(self.messages if k in self.senders else 0), str(self.interval_ms),
                         str(int(self.settle * 1000)), self.stack, str(self.timeout + 10),
                         str(out / f"node-{k}.steps") if STACKS[self.stack].steps else "-",
                         ",".join(promised(self.stack)), flush_mode.get(k, "-")],
                        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
                (out / "cluster.json").write_text(json.dumps(
                    {"run_id": run_id, "runner": os.getpid(), "pids": {n: p.pid for n, p in procs.items()},
                     "ports": dict(enumerate(ports, start=1))}), encoding="utf-8")
                # one at a time, in order: member 1 becomes the coordinator, each joins its group
                self._wait_for(out / f"node-{k}.joined", deadline, procs[k], f"member {k} did not connect")
                self.log(f"member {k} joined (pid {procs[k].pid}, port {port})")
            for k in procs:
                self._wait_for(out / f"node-{k}.ready", deadline, procs[k], f"member {k} did not see all {self.n}")
            if STACKS[self.stack].based:      # every member takes its base before any multicasts (startStable)
                for k in procs:
                    self._wait_for(out / f"node-{k}.based", deadline, procs[k], f"member {k} took no base")
                for k in procs:
                    (out / f"node-{k}.go").touch()
            t0 = time.monotonic()
            self.log(f"{self.n} members in one view ({self.stack}); multicasting")
            # kills and flushes in time order (a kill first at the same time)
            for at, flush, m in sorted([(at, False, m) for m, at in self.kills]
                                       + [(at, True, m) for m, at, _ in self.flushes]):
                time.sleep(max(0.0, t0 + at - time.monotonic()))
                if flush:
                    if m not in killed:
                        (out / f"node-{m}.flush").touch()
                        self.log(f"member {m} starts a flush ({flush_mode[m]}) at {time.monotonic() - t0:.2f} s")
                    continue
                if m in flush_mode and (out / f"node-{m}.flush").exists():
                    # a kill after the member's own flush lands once that flush has started
                    # (the member says so), however late a loaded machine lets its JVM run
                    self._wait_for(out / f"node-{m}.flushing", deadline, procs[m], f"member {m} started no flush")
                procs[m].send_signal(signal.SIGKILL)
                procs[m].wait()
                killed.append(m)
                killed_at[m] = time.time()
                self.log(f"member {m} killed with SIGKILL at {time.monotonic() - t0:.2f} s")
            for k, p in procs.items():
                try:
                    p.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    self.log(f"member {k} still running at the {self.timeout:.0f} s bound: killed")
                    break
        finally:
            self._restore_signals(old)
            for p in procs.values():
                if p.poll() is None:
                    p.kill()
            for p in procs.values():
                p.wait()
            for marker in [f for suffix in ("joined", "ready", "based", "go", "flush", "flushing")
                           for f in out.glob(f"node-*.{suffix}")]:
                marker.unlink(missing_ok=True)
        if killed:
            with open(hdir / "env.ndjson", "w", encoding="utf-8") as f:
                f.write(json.dumps({"kind": "header", "format": history_format.FORMAT, "run_id": run_id,
                                    "nodes": list(range(1, self.n + 1))}) + "\n")
                for m in killed:
                    f.write(json.dumps({"kind": "event", "name": "crash", "nid": None, "params": {"member": m}})
                            + "\n")
        failed = [k for k, p in procs.items() if p.returncode != 0 and k not in killed]
        if STACKS[self.stack].based:
            if not killed:            # Stable.tla has no crash: a kill run is judged by its history alone
                write_stable_trace(out, run_id, self.n)
        elif STACKS[self.stack].writer == "flush":
            # Flush.tla flushes only to change views: a run with a flush of a
            # member's own (--flush) is judged by its history alone
            if not self.flushes:
                write_flush_trace(out, run_id, self.n, killed_at, quiescent=not failed)
        elif STACKS[self.stack].steps:
            write_trace(out, run_id, self.n, self.messages, killed_at, quiescent=not failed)
        logs = {k: (out / f"node-{k}.log").read_text(encoding="utf-8", errors="replace") for k in procs}
        flushes = {m: next((line.split()[1] for line in logs[m].splitlines() if line.startswith("FLUSH ")), "none")
                   for m in flush_mode}
        return RunResult(str(out), run_id, self.stack, killed, failed, {k: p.pid for k, p in procs.items()},
                         round(time.monotonic() - t_wall, 2), {k: v[-4000:] for k, v in logs.items()}, flushes)

    @staticmethod
    def _wait_for(marker: Path, deadline: float, proc: subprocess.Popen, what: str) -> None:
        while not marker.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise JGroupsError(f"{what} (exit {proc.poll()}; see {marker}.log)")
            time.sleep(0.05)

    @staticmethod
    def _trap_signals() -> dict:
        if threading.current_thread() is not threading.main_thread():
            return {}

        def interrupted(signum, _frame):
            raise Interrupted(signum)
        old = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
        for s in old:
            signal.signal(s, interrupted)
        return old

    @staticmethod
    def _restore_signals(old: dict) -> None:
        for s, h in old.items():
            signal.signal(s, h)


# ---------------------------------------------------------------- white-box traces

def _iter_steps(path: Path):
    """A member's step lines one at a time (a partial last line, killed
    mid-write, is dropped): a run of 10^5 messages per member writes
    gigabytes of steps, which are never all in memory."""
    if not path.exists():
        return
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.endswith("\n"):
                yield json.loads(line)


def _by_stamp(path: Path):
    """A member's steps as (stamp, step), checked to be in stamp order: each
    step is stamped and written under the member's step lock, so its file is
    in stamp order and the members' files merge without sorting."""
    last = None
    for r in _iter_steps(path):
        if last is not None and r["ts"] <= last:
            raise JGroupsError(f"{path}: step stamped {r['ts']} after one stamped {last}")
        last = r["ts"]
        yield r["ts"], r


# Sequencer.tla's constants for JGroups 2.12.2's SEQUENCER (docs/jgroups.md):
# handleSuspect re-sends on suspicion, SeqnoTable delivers a seqno that fills
# a gap, and FORWARDs (UNICAST) and DATA (NAKACK) are not ordered with each other.
JGROUPS_VARIANTS = {"SuspectResend": True, "FillGaps": True, "SeparateChannels": True}


def write_trace(out: Path, run_id: str, n: int, messages: int, killed_at: dict, quiescent: bool) -> Path:
    """The members' SEQUENCER steps merged into one format-2 trace,
    ``traces/<run_id>.ndjson``: ordered by their wall-clock stamps (one host:
    a send's stamp precedes its receive's), each kill a ``Crash`` at the
    moment the harness killed, each view JGroups installed decided by a
    ``NewView`` just before the first member installs it (the spec's views
    come from an oracle; JGroups's GMS is that oracle here).  The files are
    merged as they are read, so the run's size bounds no memory."""
    crashes = sorted((int(at * 1_000_000), {"name": "Crash", "nid": m, "state": None})
                     for m, at in killed_at.items())
    merged = heapq.merge(*(_by_stamp(out / f"node-{k}.steps") for k in range(1, n + 1)), iter(crashes),
                         key=lambda x: x[0])
    seen = {"origin": None, "clock": 0.0}

    def events():
        decided = 1
        # A Suspect of a member never killed waits for the next other step: the
        # harness stops the members one by one after the last delivery, and a
        # member that outlives another may suspect it then (the spec's
        # failure detector is perfect: such a step is not enabled).  Those
        # after the run's last other step are the shutdown's and are left out
        # of the trace (the .steps files keep them); one followed by any
        # other step is the run's and is judged.
        held: list = []
        for ts, r in merged:
            seen["origin"] = ts if seen["origin"] is None else seen["origin"]
            clock = round((ts - seen["origin"]) / 1e6, 6)
            r.pop("ts", None)
            if r["name"] == "Suspect" and (r.get("params") or {}).get("c") not in killed_at:
                held.append({"kind": "event", **r, "clock": clock})
                continue
            yield from held
            held.clear()
            if r["name"] == "InstallView" and r["state"]["vid"] > decided:
                decided = r["state"]["vid"]
                yield {"kind": "event", "name": "NewView", "nid": None, "params": {"view": r["view"]},
                       "clock": clock}
            r.pop("view", None)
            seen["clock"] = clock
            yield {"kind": "event", **r, "clock": clock}
        yield {"kind": "end", "quiescent": quiescent, "clock": seen["clock"]}

    # JGroups 2.12.2's SEQUENCER: its suspicion step and its received-table (Sequencer.tla's variants)
    head = tracefile.header("sequencer", list(range(1, n + 1)),
                            {"N": n, "MaxSeq": messages, "MaxCrashes": len(killed_at), **JGROUPS_VARIANTS}, seed=None,
                            faults={"kills": sorted(killed_at)}, impl="jgroups", impl_version=_impl_version(out),
                            run_id=run_id)
    return tracefile.write(out / "traces" / f"{run_id}.ndjson", itertools.chain([head], events()))


def _impl_version(out: Path) -> str:
    for f in sorted((out / "history").glob("node-*.ndjson")):
        with open(f, encoding="utf-8") as fh:
            return json.loads(fh.readline()).get("impl_version", "unknown")
    return "unknown"


# Stable.tla's variables the STABLE adapter logs: the window lows (purged) and
# the multicasts numbered (sent); the view never changes in a crash-free run.
# delivered, received, digest and heardFrom are left to the spec
# (docs/jgroups.md says why each).
STABLE_OBSERVED = ["view", "sent", "purged"]


def write_stable_trace(out: Path, run_id: str, n: int) -> Path:
    """The members' STABLE steps merged by stamp into one format-2 trace of
    Stable.tla with every member in the first view (NInit = N).  Its Init
    (nothing sent) is the base every member took with STABLE suspended; the
    bases must agree (each sender's highest delivered and received seqno the
    same at every member and equal to the sender's own seqno), else no
    behaviour of the spec starts there and the run is an error."""
    lines = [r for k in range(1, n + 1) for r in _iter_steps(out / f"node-{k}.steps")]
    bases = {r["nid"]: r["base"] for r in lines if "base" in r}
    own = {s: bases.get(int(s), {}).get(s, {}).get("seqno") for s in map(str, range(1, n + 1))}
    bad = [f"member {k} has sender {s} at delivered {b['hd']}, received {b['hr']}, the sender at {own[s]}"
           for k, base in sorted(bases.items()) for s, b in sorted(base.items()) if not b["hd"] == b["hr"] == own[s]]
    if len(bases) != n or bad:
        raise JGroupsError(f"the members' STABLE bases differ: {'; '.join(bad) or f'{len(bases)} of {n} bases'}")
    recs = sorted(((r.pop("ts"), r) for r in lines if "base" not in r), key=lambda x: x[0])
    origin = recs[0][0] if recs else 0
    events = [{"kind": "event", **r, "clock": round((ts - origin) / 1e6, 6)} for ts, r in recs]
    max_seq = max([e["msg"]["seq"] for e in events if e["name"] == "Multicast"], default=0)
    head = tracefile.header("stable", list(range(1, n + 1)),
                            {"N": n, "NInit": n, "MaxSeq": max_seq, "ResetOnDifferentMembers": True,
                             "ResetOnViewChange": True, "CoordSwitchesAtJoin": True, "GossipMergedDigest": False},
                            seed=None, faults={}, impl="jgroups", impl_version=_impl_version(out), run_id=run_id)
    head["observed"] = STABLE_OBSERVED
    # STABLE gossips for ever: the run stops, it never quiesces, so it is judged on safety
    end = {"kind": "end", "quiescent": False, "clock": events[-1]["clock"] if events else 0.0}
    return tracefile.write(out / "traces" / f"{run_id}.ndjson", [head, *events, end])


# Flush.tla's variables the FLUSH adapter logs: flushOks has no JGroups
# counterpart (no FLUSH_OK round) and completed, FLUSH's flushCompletedMap,
# follows from the ReceiveFlushCompleted steps, so both are left to the spec.
FLUSH_OBSERVED = ["vid", "delivered", "phase", "blocked", "flushInit", "digest"]


def write_flush_trace(out: Path, run_id: str, n: int, killed_at: dict, quiescent: bool) -> Path:
    """The members' FLUSH steps merged by stamp into one format-2 trace of
    Flush.tla with JGroups 2.12's flush (FlushOkRound FALSE, ReconcileDigests
    TRUE: FLUSH's enable_reconciliation) from member 1's first view (NInit = 1:
    the others join, each a flush); each kill is a ``Crash`` at the moment the
    harness killed.  Notes (JGroups steps that are no spec action) go to
    ``notes.json``.  MaxMsgs is the trace's count of multicasts."""
    crashes = sorted((int(at * 1_000_000), {"name": "Crash", "nid": m, "state": None})
                     for m, at in killed_at.items())
    merged = heapq.merge(*(_by_stamp(out / f"node-{k}.steps") for k in range(1, n + 1)), iter(crashes),
                         key=lambda x: x[0])
    notes, events = [], []
    origin = None
    for ts, r in merged:
        origin = ts if origin is None else origin
        clock = round((ts - origin) / 1e6, 6)
        r = {k: v for k, v in r.items() if k != "ts"}
        if "note" in r:
            notes.append({**r, "clock": clock})
            continue
        events.append({"kind": "event", "params": {}, **r, "clock": clock})
    sent = sum(1 for e in events if e["name"] == "Multicast")
    head = tracefile.header("flush", list(range(1, n + 1)),
                            {"N": n, "NInit": 1, "MaxMsgs": sent,
                             "MaxCrashes": len(killed_at), "MaxLeaves": 0, "ReconcileDigests": True,
                             "FlushOkRound": False},
                            seed=None, faults={"kills": sorted(killed_at)}, impl="jgroups",
                            impl_version=_impl_version(out), run_id=run_id)
    head["observed"] = FLUSH_OBSERVED
    end = {"kind": "end", "quiescent": quiescent, "clock": events[-1]["clock"] if events else 0.0}
    (out / "notes.json").write_text(json.dumps(notes, indent=1), encoding="utf-8")
    return tracefile.write(out / "traces" / f"{run_id}.ndjson", [head, *events, end])


# ---------------------------------------------------------------- judging a run's folder

def agreement_checks(stack: str) -> list:
    """The history checks a trace verdict is compared with: the stack's
    promises, or, when the trace is one layer's (SEQUENCER's in SEQUENCER +
    FLUSH), those of them that layer's spec promises too; the others
    (FLUSH's VirtualSynchrony and FlushEventOrder) the trace cannot see."""
    s = STACKS[stack]
    return sorted(set(promised(stack)) & history.promised_checks(s.layer)) if s.layer else list(promised(stack))


def check(out: Path, stack: str, checker: str = "model") -> dict:
    """The history verdict (the stack's promises), the trace verdict when
    ``out/traces`` holds traces (the model replay, TLC or both), and whether
    the two agree: both ok, or both not, the history judged on
    ``agreement_checks`` (``agree_on``)."""
    files = history_format.history_files([Path(out) / "history"])
    runs = history_format.load(files)
    if len(runs) != 1:
        raise history_format.HistoryError(f"{out}/history: expected one run, found {len(runs)}")
    h = runs[0]
    found = history.check(h)
    promises = promised(stack)
    hist = {"verdict": "ok" if not [v for v in found if v.check in promises] else "violation",
            "events": h.events, "crashed": sorted(h.crashed),
            "violations": [_brief(v) for v in found if v.check in promises],
            "not_promised": [_brief(v) for v in found if v.check not in promises],
            "delivered": {m: len(h.deliveries.get(m, [])) for m in sorted(h.nodes)}}
    result = {"run_id": h.run_id, "stack": stack, "history": hist, "trace": None, "agree": None,
              "agree_on": agreement_checks(stack), "layer": STACKS[stack].layer}
    tdir = Path(out) / "traces"
    if tdir.is_dir() and any(tdir.glob("*.ndjson")):
        result["trace"] = _trace_verdict(tdir, checker)
        clean = not [v for v in hist["violations"] if v["check"] in result["agree_on"]]
        result["agree"] = clean == (result["trace"]["verdict"] in ("ok", "incomplete"))
    return result


def _brief(v: Violation) -> dict:
    return {"check": v.check, "text": v.text, "members": v.members}


def _trace_verdict(tdir: Path, checker: str) -> dict:
    """The per-node traces of the run, merged, judged as ``groupcheck conform``
    judges them: stepwise by the replay and/or TLC, properties by the replay."""
    try:
        trace = load(tdir)
    except TraceError as e:
        return {"verdict": "rejected", "reason": str(e)}
    out: dict = {}
    if checker in ("model", "both"):
        rep = replay(trace)
        out.update(verdict=rep.verdict, reason=rep.reason, first_bad_event=rep.first_bad_event,
                   stops_conforming_at=rep.stops_conforming_at)
        if rep.verdict == "documented":     # the finding whose shape the run has, and its witness
            out.update(finding=rep.finding, finding_why=rep.finding_why)
    if checker in ("tlc", "both"):
        v = tlctrace.validate(trace)
        out["tlc"] = {**v.to_json(), **({} if v.clean else {"explain": v.explain()})}
        if checker == "tlc":
            out.update(verdict="ok" if v.clean else "violation" if v.broken_at is not None else "nonconforming",
                       reason=None if v.clean else v.explain(),
                       first_bad_event=v.broken_at if v.broken_at is not None else v.first_unmatched)
        elif not tlctrace.agrees(v, rep):
            out.update(verdict="disagreement", reason="TOOL FAILURE: the model replay and TLC disagree")
    bad = out.get("first_bad_event")
    if out["verdict"] != "ok" and bad is not None and bad < len(trace.events):
        proto = trace.header["protocol"]
        prop = out["reason"].split(":")[0] if out["verdict"] in ("violation", "documented") and checker != "tlc" \
            else None
        if checker == "tlc" and v.broken_at is not None:
            prop = v.broken[0]
        out["jgroups_step"] = _step_behind(proto, trace.events, bad, prop, tdir)
    if out.get("tlc", {}).get("broken_at") is not None:
        # TLC's own verdict on a property, explained as the replay's is
        t = out["tlc"]
        if t["broken_at"] < len(trace.events):
            t["jgroups_step"] = _step_behind(trace.header["protocol"], trace.events, t["broken_at"],
                                             t["broken"][0], tdir)
    return out


def _step_behind(proto: str, events: list, at: int, prop: Optional[str], tdir: Path) -> Optional[str]:
    """The JGroups step behind record ``at`` of a trace of ``proto``
    (``STEP_BEHIND``; SEQUENCER's by default)."""
    step = STEP_BEHIND.get(proto)
    return step(events, at, tdir) if step else jgroups_step(events[at], prop)


# The JGroups 2.12 step behind each Stable.tla action of a STABLE trace
# (docs/jgroups.md, "White-box traces of JGroups's STABLE").
STABLE_STEPS = {
    "Multicast": "NAKACK.send numbering its multicast",
    "ReceiveData": "NAKACK.handleMessage taking a multicast of member {p} (NakReceiverWindow.add, removeMany)",
    "Retransmit": "NAKACK delivering a message of member {p} from its window, where it waited above a gap",
    "SendStable": "STABLE.sendStableMessage multicasting a STABLE_GOSSIP header with the digest it took from "
                  "NAKACK (GET_DIGEST: each sender's highest delivered seqno)",
    "ReceiveStable": "STABLE.handleStableMessage of member {p}'s STABLE_GOSSIP (updateLocalDigest, addVote)",
    "SendStability": "STABLE's StabilitySendTask multicasting a STABILITY header with the digest copied when every "
                     "vote was in, then, on its own copy, handleStabilityMessage: resetDigest and NAKACK.stable "
                     "(the purge)",
    "ReceiveStability": "STABLE.handleStabilityMessage of member {p}'s STABILITY: stopStabilityTask, resetDigest "
                        "and NAKACK.stable, which purges each window up to the digest's highest delivered seqno",
}


def stable_step(ev: dict) -> Optional[str]:
    """The JGroups step behind a rejected record of a STABLE trace."""
    what = STABLE_STEPS.get(ev["name"])
    if what is None:
        return None
    return (f"JGroups's {what.format(p=ev['params'].get('p'))} at member {ev['nid']}; Stable.tla has no step "
            f"that logs this here")


# The JGroups 2.12 step behind each Flush.tla action of a FLUSH trace
# (docs/jgroups.md, "White-box traces of JGroups's FLUSH").
FLUSH_STEPS = {
    "Join": "GMS taking member {nid}'s JOIN_REQ at the coordinator",
    "StartFlush": "GMS's SUSPEND to FLUSH (startFlush, onSuspend): START_FLUSH multicast to the view's members",
    "Block": "FLUSH.onStartFlush taking member {c}'s START_FLUSH: BLOCK up, the latch closed",
    "FlushCompleted": "FLUSH.onStartFlush sending FLUSH_COMPLETED with NAKACK's digest (GET_DIGEST)",
    "ReceiveFlushCompleted": "FLUSH.onFlushCompleted taking member {q}'s FLUSH_COMPLETED",
    "SendView": "GMS multicasting the VIEW once FLUSH's flush_promise returned (after FLUSH_RECONCILE, if any)",
    "InstallView": "GMS installing member {c}'s VIEW (FLUSH.onViewChange)",
    "StopFlush": "GMS's RESUME to FLUSH (stopFlush, onResume): STOP_FLUSH multicast",
    "Unblock": "FLUSH.onStopFlush taking member {c}'s STOP_FLUSH: UNBLOCK up, the latch open",
    "Multicast": "an application multicast past FLUSH's latch, numbered by NAKACK",
    "Deliver": "NAKACK delivering member {q}'s multicast",
    "Discard": "NAKACK delivering member {q}'s multicast after this member's FLUSH_COMPLETED",
}


def _view_of_multicasts(events: list) -> dict:
    return {(e["msg"]["sender"], e["msg"]["seqno"]): e["msg"]["view"] for e in events
            if e["name"] == "Multicast" and e.get("msg")}


def flush_step(events: list, bad: int, notes_file: Optional[Path] = None) -> Optional[str]:
    """The JGroups step behind the rejected record ``events[bad]`` of a FLUSH
    trace, and, where the trace shows it, how JGroups left the spec there: a
    view installed without messages of a crashed member that a survivor's
    FLUSH_COMPLETED digest had (with the FLUSH_RECONCILE the coordinator
    sent, from ``notes_file``), or a message delivered in a view other than
    the one it was multicast in."""
    ev = events[bad]
    what = FLUSH_STEPS.get(ev["name"])
    if what is None:
        return None
    params = ev.get("params") or {}
    text = f"JGroups's {what.format(nid=ev['nid'], c=params.get('c'), q=params.get('q'))} at member {ev['nid']}"
    msg = ev.get("msg") or {}
    if ev["name"] in ("SendView", "InstallView") and "view" in msg:
        v, p = msg["view"], ev["nid"]
        sent_in = _view_of_multicasts(events)
        crashed = {e["nid"] for e in events[:bad] if e["name"] == "Crash"}
        union, reported = set(), {}
        for e in events[:bad]:
            if e["name"] == "FlushCompleted" and (e.get("msg") or {}).get("view") == v and e["nid"] not in crashed:
                for x in e["msg"].get("digest", []):
                    union.add(tuple(x))
                    reported.setdefault(tuple(x), e["nid"])
        mine = {tuple(x) for e in events[:bad + 1] if e["nid"] == p and e["name"] in ("Multicast", "Deliver",
                                                                                       "SendView", "InstallView")
                for x in (e.get("state") or {}).get("delivered", []) if sent_in.get(tuple(x)) == v}
        missing = sorted(union - mine)
        if missing and {s for s, _ in missing} <= crashed:
            names = ", ".join(f"{s}.{q} (in member {reported[(s, q)]}'s digest)" for s, q in missing)
            try:
                notes = json.loads(notes_file.read_text(encoding="utf-8")) if notes_file else []
            except (OSError, ValueError):
                notes = []
            rec = [n for n in notes if n.get("note") == "reconcile" and n["clock"] <= ev["clock"]]
            how = (f"the coordinator's FLUSH_RECONCILE (highest NAKACK seqnos {rec[-1]['highest']}) had NAKACK "
                   f"rebroadcast the missing messages, and the view came without them" if rec else
                   "no FLUSH_RECONCILE was sent")
            return (f"{text}: member {p} installs view {v + 1} without {names}, multicast in view {v} by the "
                    f"crashed member {missing[0][0]}; the spec's VIEW carries the union of the survivors' digests "
                    f"and delivers it; in JGroups {how}: VirtualSynchrony breaks")
    if ev["name"] == "Deliver" and "view" in msg:
        vids = [e["state"]["vid"] for e in events[:bad] if e["nid"] == ev["nid"] and "vid" in (e.get("state") or {})]
        if vids and vids[-1] != msg["view"]:
            return (f"{text}: the message {msg.get('sender')}.{msg.get('seqno')} was multicast in view "
                    f"{msg['view']} and NAKACK delivers it in view {vids[-1]}; the spec delivers a message only in "
                    f"the view it was sent in")
    return f"{text}; Flush.tla has no step that logs this here"


# The JGroups 2.12 step behind each Sequencer.tla action of a SEQUENCER trace
# (docs/jgroups.md, "White-box traces of JGroups's SEQUENCER").
SEQUENCER_STEPS = {
    "Send": "SEQUENCER.down numbering a multicast: as is_coord says, a BCAST it multicasts itself, or a FORWARD "
            "unicast to coord and kept in forward_table",
    "RecvForward": "SEQUENCER.up taking a FORWARD from member {p}: multicast as a WRAPPED_BCAST if is_coord, "
                   "dropped otherwise",
    "RecvData": "SEQUENCER.deliver or unwrapAndDeliver taking a DATA multicast by member {p}: canDeliver "
                "(SeqnoTable.add) and, for its own message, forward_table.remove",
    "InstallView": "SEQUENCER.handleViewChange: coord = the view's first member, the forward table re-sent if "
                   "coord moved, received_table.retainAll",
    "Suspect": "SEQUENCER.handleSuspect on the failure detector's suspicion of member {c}: coord = the first other "
               "member of its view, the forward table re-sent to it at once",
}


def jgroups_step(ev: dict, prop: Optional[str] = None) -> Optional[str]:
    """The JGroups step behind the record the replay stopped at, or at which
    a property broke (``prop``); for SenderFIFO broken by a delivery, the
    mechanism of JGRP-1449."""
    what = SEQUENCER_STEPS.get(ev.get("name"))
    if what is None:
        return None
    params = ev.get("params") or {}
    out = f"JGroups's {what.format(p=params.get('p'), c=params.get('c'))} at member {ev['nid']}"
    if prop == "SenderFIFO" and ev["name"] == "RecvData":
        msg = ev.get("msg") or {}
        out += (f"; SeqnoTable delivers {msg.get('sender')}.{msg.get('seqno')} because that seqno was missing, "
                f"though a later message of the same sender was delivered before it: a new coordinator, moved by "
                f"handleSuspect, sequenced its own next multicast at once, ahead of the forward table it had "
                f"re-sent to itself (JGRP-1449)")
    return out


# Each white-box protocol's explanation of the record a check stopped at:
# (events, index, the run's trace folder) -> the JGroups step behind it
STEP_BEHIND = {
    "stable": lambda events, at, tdir: stable_step(events[at]),
    "flush": lambda events, at, tdir: flush_step(events, at, tdir.parent / "notes.json"),
}
