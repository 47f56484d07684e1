"""Run 3 JGroups members on 127.0.0.1 with the history logger
(``conformance/jgroups/HistoryDriver.java``; docs/jgroups.md).

``compile_driver`` compiles the Java adapter with javac against Debian's
``/usr/share/java/jgroups.jar`` into a folder; ``run`` starts the members
(TCP + TCPPING restricted to 127.0.0.1, SEQUENCER, optionally FLUSH), kills
the coordinator (member 1) with SIGKILL when asked, bounds everything by a
timeout, kills every JVM it started at the end, and returns the history
files: one per member plus an environment file with the kill."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

JAR = Path("/usr/share/java/jgroups.jar")
SOURCE = Path(__file__).with_name("jgroups") / "HistoryDriver.java"


def available() -> str | None:
    """None when the adapter can run here, else the reason it cannot."""
    if not JAR.exists():
        return f"{JAR} absent (apt-get install libjgroups-java; make does not install it)"
    for tool in ("java", "javac"):
        if shutil.which(tool) is None:
            return f"{tool} not on PATH"
    return None


def compile_driver(dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run(["javac", "-nowarn", "-cp", str(JAR), "-d", str(dest), str(SOURCE)], check=True,
                   timeout=180, capture_output=True)
    return dest


def _free_ports(n: int) -> list[int]:
    """n consecutive free ports on 127.0.0.1 (TCPPING lists them)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base + n > 65000:
            continue
        ok = True
        for p in range(base, base + n):
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", p))
                except OSError:
                    ok = False
                    break
        if ok:
            return list(range(base, base + n))
    raise RuntimeError("no free ports on 127.0.0.1")


def _wait_for(marker: Path, deadline: float, proc, what: str) -> None:
    while not marker.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{what} (exit {proc.poll()})")
        time.sleep(0.05)


def config(port: int, ports: list[int], flush: bool) -> str:
    hosts = ",".join(f"127.0.0.1[{p}]" for p in ports)
    return f"""<config xmlns="urn:org:jgroups">
  <TCP bind_addr="127.0.0.1" bind_port="{port}" port_range="0" loopback="true" enable_bundling="false"
       sock_conn_timeout="300" thread_pool.rejection_policy="run" oob_thread_pool.rejection_policy="run"/>
  <TCPPING initial_hosts="{hosts}" port_range="0" timeout="2000" num_initial_members="{len(ports)}"/>
  <MERGE2 min_interval="2000" max_interval="4000"/>
  <FD_SOCK bind_addr="127.0.0.1"/>
  <FD timeout="1000" max_tries="2"/>
  <VERIFY_SUSPECT timeout="500"/>
  <pbcast.NAKACK use_mcast_xmit="false" gc_lag="0" retransmit_timeout="300,600,1200" discard_delivered_msgs="false"/>
  <UNICAST timeout="300,600,1200"/>
  <pbcast.STABLE stability_delay="200" desired_avg_gossip="2000" max_bytes="400000"/>
  <pbcast.GMS print_local_addr="false" join_timeout="3000" view_bundling="true"/>
  <SEQUENCER/>
  <FRAG2 frag_size="60000"/>
{'  <pbcast.FLUSH timeout="4000"/>' if flush else ''}
</config>
"""


def run(classes: Path, out: Path, run_id: str, *, flush: bool, kill_coordinator_after: float | None = None,
        members: int = 3, messages: int = 50, interval_ms: int = 10, settle_ms: int = 4000,
        timeout: float = 90.0) -> dict:
    """One run; returns {"files": [...], "killed": [...], "logs": {member: stdout+stderr}}."""
    out.mkdir(parents=True, exist_ok=True)
    ports = _free_ports(members)
    procs = {}
    files = []
    killed = []
    logs = {}
    deadline = time.monotonic() + timeout
    try:
        for k, port in enumerate(ports, start=1):
            cfg = out / f"{run_id}-m{k}.xml"
            cfg.write_text(config(port, ports, flush))
            f = out / f"{run_id}-m{k}.ndjson"
            files.append(f)
            procs[k] = subprocess.Popen(
                ["java", "-Djava.net.preferIPv4Stack=true", "-Djgroups.bind_addr=127.0.0.1", "-Xmx128m",
                 "-cp", f"{classes}:{JAR}", "HistoryDriver", str(k), str(f), run_id, str(cfg), str(members),
                 str(messages), str(interval_ms), str(settle_ms)],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            # one at a time, in order: member 1 becomes the coordinator, each joins its group
            _wait_for(Path(f"{f}.joined"), deadline, procs[k], f"member {k} did not connect")
        if kill_coordinator_after is not None:
            _wait_for(Path(f"{files[0]}.ready"), deadline, procs[1], "member 1 did not get the full view")
            time.sleep(kill_coordinator_after)
            procs[1].send_signal(signal.SIGKILL)
            killed.append(1)
            env = out / f"{run_id}-env.ndjson"
            env.write_text(json.dumps({"kind": "header", "format": "groupcheck-history/1", "run_id": run_id,
                                       "nodes": list(range(1, members + 1))}) + "\n"
                           + json.dumps({"kind": "event", "name": "crash", "nid": None,
                                         "params": {"member": 1}}) + "\n")
            files.append(env)
        for k, p in procs.items():
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
    finally:
        for k, p in procs.items():
            if p.poll() is None:
                p.kill()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            logs[k] = p.stdout.read() if p.stdout else ""
            if p.stdout:
                p.stdout.close()
    timed_out = [k for k, p in procs.items() if p.returncode not in (0,) and k not in killed]
    return {"files": [str(f) for f in files], "killed": killed, "logs": logs, "failed": timed_out}
