"""The cluster runner: N node processes on 127.0.0.1, SIGKILL as told, the
per-node traces checked (``groupcheck cluster run``).

Theory of operation
-------------------
The runner starts one process per node (``python -m
groupcheck.impl.runtime CONFIG``), waits for each to report ready, tells
them all to start their workload (``messages`` multicasts each at ``rate``
per second), and kills the nodes it was told to with SIGKILL at their times.

It is the membership oracle (until the Raincore ring is the stack's
membership; docs/impl.md): it knows whom it killed, and after
``detect`` seconds it tells the survivors, over the same authenticated
channel as everything else.  SEQUENCER gets the next view (the last one
without the killed node), as the simulator's oracle decides it, and the
runner writes it as the environment record ``NewView``; FLUSH decides views
itself, so SEQUENCER over FLUSH gets ``Suspect`` (the failure detector's
verdict).  The kill itself is the environment record ``Crash``, whose
vector clock counts the killed node's last record (read from its file, a
partial last line dropped: that step never finished).

Quiescence: every surviving node reports, every 100 ms, whether it has
anything in flight (impl/runtime.py ``idle``); the run is quiescent when all
survivors are idle, done sending, their views (FLUSH's, where the stack has
one) hold none of the nodes killed or gone, and their delivery counts have
not moved for ``settle`` seconds.  Over the ring a survivor learns of a kill
only when its Transport Manager gives up on the dead node, idle until then:
without the views' condition a run could end before its survivors flushed.  Then the runner stops the nodes, writes the end
record, and returns what the run left (``ClusterRun``).  It checks
nothing itself: conformance/cluster.py judges the run (the per-node files
merged by happens-before and replayed against the model, as ``conform``
does, and the survivors' history under the protocol's promises).

No process outlives ``run``: every child (the nodes, ``hog``'s busy loops,
one per core) is killed in ``finally``, also on Ctrl-C and SIGTERM (which
the runner turns into an exception).

Interactive use (``groupcheck cluster up`` / ``kill`` / ``down``): ``up``
starts a detached supervisor (``python -m groupcheck.conformance.cluster
OUT``) running the Runner with ``serve=True``: no
scheduled kills; instead any node process that dies (``cluster kill``, or a
``kill -9`` from the user's own shell) is taken as a crash and the oracle
acts as above.  SIGUSR1 (``cluster down``) ends the serving: quiescence,
stop, check, ``OUT/result.json``; SIGTERM or Ctrl-C kill every node as in
``run``.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from groupcheck.core.trace import writer as tracefile
from groupcheck.impl import auth, protocols

from .runtime import BUNDLE_RESERVE, CONTROL, HOST, MAX_BACKLOG, MTU, RUNNER, SHUNNED, frame, unframe

FREEZE_WAIT = 5.0        # seconds a ring node may take to reach a point where it may crash
# --hog: one busy loop per core beside the nodes.  Each also ends itself once its
# runner is gone, should the runner die without its ``finally`` (SIGKILL): its
# stdin is a pipe only the runner holds, whose end it then reads
HOG = ("import select, sys\nwhile not select.select([sys.stdin], [], [], 0)[0]:\n"
       "    for _ in range(1000000):\n        pass\n")


from .faults import NETWORK, kills_and_senders, parse_faults  # noqa: E402


class ClusterError(RuntimeError):
    """The cluster could not be run (a node did not start, a bad option)."""


class Interrupted(Exception):
    """SIGTERM or SIGINT reached the runner."""


@dataclass
class ClusterRun:
    """What a run left, before any check: its folder (traces/, the
    environment's record), its run id, whether it reached quiescence, the
    nodes killed, its wall-clock seconds, the nodes' authentication and
    layer counters at the stop, the nodes that left as suspected (and, with
    chaos --rejoin, the new node in each one's place), and the checker the
    caller asked for.  conformance/cluster.py judges it."""
    out: Path
    protocol: str
    run_id: str
    quiescent: bool
    killed: list
    seconds: float
    checker: str = "model"
    auth: dict = field(default_factory=dict)
    stats: dict = field(default_factory=dict)
    shunned: list = field(default_factory=list)
    rejoined: list = field(default_factory=list)


def _free_ports(n: int) -> list[int]:
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((HOST, 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def last_vc(path: Path) -> dict:
    """The vector clock of a killed node's last complete record; a partial
    last line (killed mid-write) is cut off the file."""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[:data.rfind(b"\n") + 1]
        path.write_bytes(data)
    for line in reversed(data.splitlines()):
        rec = json.loads(line)
        if rec.get("kind") == "event":
            return dict(rec.get("vc") or {})
    return {}


def last_of_view(nid: int, live: list, reports: dict) -> bool:
    """Node ``nid`` is the only live member of the latest view the live
    nodes' ``reports`` show (their FLUSH views, impl/runtime.py
    ``flush_view``): the specs' CanCrash keeps one, and a joiner started but
    not yet admitted cannot stand in for it, since only a member can admit
    it.  A stale report errs towards a skip: a joiner admitted since is
    missed, never a member gone since (the runner learns of every departure
    by the node's exit)."""
    latest = latest_view(live, reports)
    if latest is None:
        return False                  # no FLUSH: the oracle's views keep every live node
    return not (set(latest) & set(live)) - {nid}


def all_idle(reports: list, gone) -> bool:
    """Every report says idle, and no view (FLUSH's, where the stack has
    one) still holds a node ``gone`` (killed, or left as suspected): over the
    ring the survivors learn of a kill only when they next send to the dead
    node and the Transport Manager gives up, idle meanwhile."""
    gone = set(gone)
    return all(r.get("idle") and not gone & set((r.get("view") or (0, ()))[1]) for r in reports)


def latest_view(live: list, reports: dict) -> Optional[list]:
    """The members of the latest FLUSH view the live nodes' ``reports``
    show, None without FLUSH.  A kill takes only such a member (the specs'
    CanCrash: a member; a joiner not yet admitted is none), and the
    coordinator is its first live member."""
    views = [v for m in live if (v := reports.get(m, {}).get("view"))]
    return max(views, key=lambda v: v[0])[1] if views else None


class Runner:
    def __init__(self, protocol: str, nodes: int, messages: int, kills: list[tuple[int, float]], out: Path,
                 *, rate: float = 500.0, detect: float = 0.05, settle: float = 0.5, timeout: float = 60.0,
                 key_file: Optional[str] = None, log: Callable[[str], None] = lambda s: None,
                 checker: str = "model", serve: bool = False, senders: Optional[list[int]] = None,
                 lossy_ring: bool = False, kill_holder: bool = False, faults: str = "", seed: int = 0,
                 hog: bool = False, mtu: int = MTU, backlog: int = MAX_BACKLOG) -> None:
        run = getattr(protocols.find(protocol), "cluster", None)
        if run is None:
            raise ClusterError(protocols.not_a_cluster_protocol(protocol))
        if lossy_ring and not run.lossy_ring:
            raise ClusterError("--lossy-ring: over the ring only (--membership raincore, --protocol flush or "
                               "sequencerflush)")
        if kill_holder and not lossy_ring:
            raise ClusterError("--kill-holder needs --lossy-ring (the abstraction never kills the token's holder)")
        self.lossy_ring, self.kill_holder = lossy_ring, kill_holder
        if checker not in ("model", "tlc", "both"):
            raise ClusterError(f"--checker {checker!r}: model, tlc or both")
        self.checker = checker          # the caller's: conformance/cluster.py judges the run
        try:        # the network items of the fault grammar, on every node's datagrams (runtime.FaultyNetwork)
            self.plan = parse_faults(faults, NETWORK, "the cluster", delay=(0.0, 0.0))
        except ValueError as e:
            raise ClusterError(f"--faults: {e}") from None
        self.faults, self.seed, self.hog = faults, seed, hog
        self.serve = serve
        self.stop_requested = False
        if nodes < 2:
            raise ClusterError("--nodes: at least 2")
        # who multicasts (default: every node); the others only receive, as in
        # JGroups's SequencerFailoverTest where only B sends
        try:
            self.senders = kills_and_senders(nodes, kills, senders)
        except ValueError as e:
            raise ClusterError(str(e)) from None
        self.protocol, self.run_as, self.n, self.messages = protocol, run, nodes, messages
        self.kills = sorted(kills, key=lambda k: k[1])
        self.out = Path(out)
        self.rate, self.detect, self.settle, self.timeout = rate, detect, settle, timeout
        if mtu < BUNDLE_RESERVE + 64:
            raise ClusterError(f"mtu {mtu}: at least {BUNDLE_RESERVE + 64} bytes (the bundler's, impl/runtime.py)")
        self.mtu = mtu
        if backlog < 1:
            raise ClusterError(f"backlog {backlog}: at least 1 frame")
        self.backlog = backlog        # frames a node holds or queues before its sender waits
        self.key_file = key_file
        self.log = log
        self.crash_bound = len(self.kills)     # the header's MaxCrashes
        self.joiners = 0                       # nodes n + 1.. that may join (the ring's stacks)
        self.joined: list[int] = []            # ... and those that were started
        self.env_faults: dict = {}             # more of the run's faults for its header
        self.procs: dict[int, subprocess.Popen] = {}
        self.hogs: list[subprocess.Popen] = []
        self.status: dict[int, dict] = {}
        self.shunned: list[int] = []           # nodes that left on their own (impl/runtime.py SHUNNED)
        self.stopped: dict[int, dict] = {}

    # -- the control channel ----------------------------------------------------------
    def _send(self, nid: int, cmd: dict) -> None:
        body = json.dumps(cmd).encode()
        self.sock.sendto(self.sealer.seal(frame(CONTROL, self.env.on_send(), body)), (HOST, self.ports[nid]))

    def _poll(self, until: float) -> None:
        """Read node reports until ``until`` (time.monotonic())."""
        while True:
            left = until - time.monotonic()
            if left <= 0:
                return
            r, _, _ = select.select([self.sock], [], [], left)
            if not r:
                continue        # select may wake a little early: the loop's test is the deadline
            data, _ = self.sock.recvfrom(65536)
            opened = self.verifier.open(data)
            if opened is None:
                continue
            src, payload = opened
            try:
                kind, _, body = unframe(payload)
                rep = json.loads(body)
            except ValueError:
                continue
            if kind == CONTROL and isinstance(rep, dict) and rep.get("nid") == src:
                (self.stopped if rep.get("ev") == "stopped" else self.status)[src] = rep

    # -- one run ----------------------------------------------------------------------
    def run(self) -> ClusterRun:
        from .sim import IMPL_VERSION
        t_wall = time.monotonic()
        self.out.mkdir(parents=True, exist_ok=True)
        tdir = self.out / "traces"
        tdir.mkdir(exist_ok=True)
        for old in tdir.glob("*.ndjson"):
            old.unlink()
        for stale in ("ready", "result.json"):
            (self.out / stale).unlink(missing_ok=True)
        key_file = self.key_file
        if key_file is None:        # a fresh secret per run, readable by its owner only
            key_file = str(self.out / "cluster.key")
            fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.write(fd, secrets.token_hex(32).encode())
            os.close(fd)
        key = auth.load_key(key_file)
        self.sealer, self.verifier = auth.Sealer(key, RUNNER, 1), auth.Verifier(key)
        ports = _free_ports(self.n + self.joiners + 1)
        self.ports = {i: p for i, p in enumerate(ports)}          # 0: the runner
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((HOST, self.ports[RUNNER]))
        members = list(range(1, self.n + 1))
        run_id = f"cluster-{self.protocol}-n{self.n}-m{self.messages}-{int(time.time())}"
        # serving, any node but one may die: the header's crash bound is N - 1;
        # so over the ring: a node that leaves as suspected (LeaveSuspected, outside
        # the bound itself) is down, and the spec's CanCrash counts every node down
        ring = self.run_as.views == "ring"
        crashes = self.n + self.joiners - 1 if self.serve or ring else self.crash_bound
        joiners = {"joiners": self.joiners} if self.joiners else {}
        header = tracefile.header(self.protocol, list(range(1, self.n + self.joiners + 1)),   # joiners too
                                  self.run_as.constants(self.n, self.messages, crashes, self.lossy_ring, **joiners),
                                  seed=self.seed if self.faults else None,
                                  faults={"kills": [list(k) for k in self.kills],
                                          **({"network": self.faults} if self.faults else {}), **self.env_faults},
                                  impl="groupcheck.impl.runtime", impl_version=IMPL_VERSION, run_id=run_id)
        self.env = tracefile.EnvTraceWriter(tdir / "env.ndjson", header)
        self.start = start = time.time()
        old = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1)}

        def interrupted(signum, _frame):
            raise Interrupted(signal.Signals(signum).name)

        def stop_serving(_signum, _frame):
            self.stop_requested = True

        for s in old:
            signal.signal(s, stop_serving if s == signal.SIGUSR1 else interrupted)
        try:
            if self.hog:
                self.hogs = [subprocess.Popen([sys.executable, "-c", HOG], stdin=subprocess.PIPE,
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                             for _ in range(os.cpu_count() or 1)]
            self._node = {"protocol": self.protocol, "members": members,
                          "ports": {str(k): v for k, v in self.ports.items()}, "rate": self.rate,
                          "header": header, "start": start, "key_file": key_file, "faults": self.faults,
                          "seed": self.seed, "mtu": self.mtu, "backlog": self.backlog, "universe": list(range(1, self.n + self.joiners + 1)) if self.joiners else []}
            self.run_id = run_id
            for nid in members:
                self._spawn(nid, self.messages if nid in self.senders else 0)
            deadline = time.monotonic() + 30
            while len(self.status) < self.n and time.monotonic() < deadline:
                self._poll(min(deadline, time.monotonic() + 0.2))
                dead = [n for n, p in self.procs.items() if p.poll() is not None]
                if dead:
                    raise ClusterError(f"node {dead[0]} exited at start (see {self.out}/node-{dead[0]}.log)")
            if len(self.status) < self.n:
                missing = sorted(set(members) - set(self.status))
                raise ClusterError(f"nodes {missing} did not report ready within 30 s")
            self.log(f"{self.n} nodes up on 127.0.0.1, ports {ports[1:]}")
            for nid in members:
                self._send(nid, {"cmd": "start"})
            t0 = time.monotonic()
            if self.serve:
                (self.out / "ready").write_text(run_id, encoding="utf-8")
            killed = self._serve(t0, members) if self.serve else self._kills(t0, members)
            # the quiescence time-out counts from the moment the last sender finished
            # (no node's count of multicasts sent moved since), and from the last kill
            # (serving: from `down`): a long or unpaced workload (rate 0) is waited out
            # as long as it makes progress, whatever its nominal length
            quiescent = self._quiesce(t0, killed, time.monotonic())
            live = [m for m in (*members, *self.joined) if m not in killed]
            for nid in live:
                self._send(nid, {"cmd": "stop"})
            end_by = time.monotonic() + 5
            while time.monotonic() < end_by and any(self.procs[n].poll() is None for n in live):
                self._poll(time.monotonic() + 0.1)
            self._poll(time.monotonic() + 0.2)
            self.env.end(quiescent, round(time.time() - start, 6))
        finally:
            for s, h in old.items():
                signal.signal(s, h)
            for p in [*self.procs.values(), *self.hogs]:
                if p.poll() is None:
                    p.kill()
            for p in [*self.procs.values(), *self.hogs]:
                p.wait()
            self.env.close()
            self.sock.close()
        auth_counts: dict = {}
        for r in self.stopped.values():
            for k, v in (r.get("auth") or {}).items():
                auth_counts[k] = auth_counts.get(k, 0) + v
        return ClusterRun(self.out, self.protocol, run_id, quiescent, killed, round(time.monotonic() - t_wall, 2),
                          self.checker, auth_counts, {n: r.get("stats") or {} for n, r in sorted(self.stopped.items())},
                          list(self.shunned))

    def _spawn(self, nid: int, messages: int) -> None:
        """Start node ``nid``'s process (its config, log and trace in OUT)."""
        cfg = {**self._node, "nid": nid, "messages": messages,
               "trace": str(self.out / "traces" / f"node-{nid}.ndjson")}
        path = self.out / f"node-{nid}.json"
        path.write_text(json.dumps(cfg), encoding="utf-8")
        err = open(self.out / f"node-{nid}.log", "wb")
        self.procs[nid] = subprocess.Popen([sys.executable, "-m", "groupcheck.impl.runtime", str(path)],
                                           stdout=err, stderr=subprocess.STDOUT)
        # who runs where, for a user (and a test) checking that nothing outlives the run
        (self.out / "cluster.json").write_text(json.dumps(
            {"run_id": self.run_id, "runner": os.getpid(), "pids": {n: p.pid for n, p in self.procs.items()},
             "ports": self.ports, "hogs": [p.pid for p in self.hogs]}), encoding="utf-8")

    def _kills(self, t0: float, members: list) -> list:
        killed: list[int] = []
        for nid, at in self.kills:
            while time.monotonic() < t0 + at:
                self._poll(min(t0 + at, time.monotonic() + 0.05))
            live = [m for m in (*members, *self.joined) if m not in killed and self.procs[m].poll() is None]
            if nid not in live or last_of_view(nid, live, self.status):
                # gone already (left as suspected: its record is _reap's), or the
                # last live member of the latest view, which the specs' CanCrash keeps
                self.log(f"kill of node {nid} skipped: " + ("it has left" if nid not in live else
                                                           "the last live member of the latest view"))
                continue
            self._kill(nid, members, killed, t0)
        return killed

    def _kill(self, nid: int, members: list, killed: list, t0: float, eating: Optional[bool] = None) -> Optional[str]:
        """SIGKILL node ``nid`` (over the ring once it has frozen at a point
        where it may crash, ``_freeze``) and record it; the reason it was
        skipped instead, else None."""
        how = self._freeze(nid, eating) if self.run_as.views == "ring" else "frozen"
        if how == "refused":
            self.log(f"kill of node {nid} skipped: the last member of its own view")
            return "the last member of its own view"
        self.procs[nid].send_signal(signal.SIGKILL)
        self.procs[nid].wait()
        self._crashed(nid, members, killed, t0, how=self._exit_record(nid, how == "left"))
        return None

    def _exit_record(self, nid: int, left: bool) -> str:
        """The record of a node gone: LeaveSuspected if it left on its own
        as suspected (exit status SHUNNED), else Crash."""
        if left or self.procs[nid].returncode == SHUNNED:
            self.shunned.append(nid)
            self.log(f"node {nid} left, suspected by its ring")
            return "LeaveSuspected"
        return "Crash"

    def _freeze(self, nid: int, eating: Optional[bool] = None) -> str:
        """FLUSH over the ring: the node stops at the first point where
        spec/RaincoreFlush lets it crash (impl/runtime.py ``ring_safe``: not
        holding the token, none of its ring messages unacknowledged), and
        says so; then it is killed.  The abstraction has one token that is
        never lost, so a kill while the node holds it is outside what the
        model can judge (docs/impl.md).  With ``lossy_ring`` the spec is
        Raincore's own ring and only FLUSH's I9 is waited for (no VIEW of
        the node unacknowledged): the token holder is killed as it is; with
        ``kill_holder`` (or ``eating``) the node is killed only once it holds
        the token (the case the abstraction leaves out: the token dies with it).
        "frozen"; "left" if the node has left on its own meanwhile
        (suspected); "refused" if it is the only member of its FLUSH view
        (impl/runtime.py ``_try_freeze``: the kill is skipped)."""
        self.status.pop(nid, None)
        eating = self.kill_holder if eating is None else eating
        self._send(nid, {"cmd": "freeze", **({"when": "eating"} if eating else {})})
        until = time.monotonic() + FREEZE_WAIT
        while time.monotonic() < until and not self.status.get(nid, {}).get("frozen"):
            if self.procs[nid].poll() == SHUNNED:
                return "left"            # it has left on its own (suspected): the kill finds it gone
            if self.status.get(nid, {}).get("refused"):
                return "refused"
            self._poll(min(until, time.monotonic() + 0.05))
        if not self.status.get(nid, {}).get("frozen"):
            raise ClusterError(f"node {nid} did not reach a point where it may crash within {FREEZE_WAIT} s "
                               f"(its last report: {self.status.get(nid)})")
        return "frozen"

    def _serve(self, t0: float, members: list) -> list:
        """Until SIGUSR1: any node process that dies is a crash."""
        killed: list[int] = []
        while not self.stop_requested and len(killed) < len(members) - 1:
            self._poll(time.monotonic() + 0.1)
            for nid in members:
                if nid not in killed and self.procs[nid].poll() is not None:
                    self._crashed(nid, members, killed, t0, how=self._exit_record(nid, False))
        return killed

    def _crashed(self, nid: int, members: list, killed: list, t0: float, how: str = "Crash") -> None:
        """Node ``nid`` is dead: its record (``how``: Crash, or LeaveSuspected
        for a node its ring suspected), then the oracle's view."""
        killed.append(nid)
        self.env.on_receive(last_vc(self.out / "traces" / f"node-{nid}.ndjson"))
        self.env.record(how, {}, None, None, round(time.time() - self.start, 6), nid=nid)
        if how == "Crash":
            self.log(f"node {nid} killed at {time.monotonic() - t0:.2f} s")
        self._poll(time.monotonic() + self.detect)
        live = [m for m in members if m not in killed]
        if self.run_as.views == "ring":
            return                   # no oracle: the survivors' ring notices the crash itself
        if self.run_as.views == "oracle":
            self.env.record("NewView", {"view": live}, None, None, round(time.time() - self.start, 6))
            for m in live:
                self._send(m, {"cmd": "view", "vid": len(killed) + 1, "members": live})
        else:
            for m in live:
                self._send(m, {"cmd": "suspect", "member": nid})

    def _reap(self, killed: list, t0: float) -> None:
        """A node its ring suspected has left (exit status SHUNNED,
        impl/runtime.py): the spec's LeaveSuspected (SuspectLeaves, outside
        the crash budget); any other exit is an error."""
        for m in [m for m in (*range(1, self.n + 1), *self.joined) if m not in killed]:
            if self.procs[m].poll() is None:
                continue
            if self.procs[m].returncode != SHUNNED:
                raise ClusterError(f"node {m} died, exit status {self.procs[m].returncode} "
                                   f"(see {self.out}/node-{m}.log)")
            self._crashed(m, list(range(1, self.n + 1)), killed, t0, how=self._exit_record(m, True))

    def _quiesce(self, t0: float, killed: list, begin: float) -> bool:
        """Wait until every live node is idle and its deliveries stay put for
        ``settle`` seconds (True), or ``timeout`` seconds have passed since
        ``begin`` and since any live node's count of multicasts sent last
        moved (False: not quiescent)."""
        stable_since, last, sent, moved = None, None, None, begin
        while time.monotonic() < moved + self.timeout:
            self._poll(time.monotonic() + 0.1)
            self._reap(killed, t0)
            live = [m for m in (*range(1, self.n + 1), *self.joined) if m not in killed]
            reps = [self.status.get(m, {}) for m in live]
            counts = tuple(r.get("sent") for r in reps)
            if counts != sent:              # a sender still sending: the time-out starts again
                sent, moved = counts, max(moved, time.monotonic())
            now = tuple(r.get("delivered") for r in reps)
            if all_idle(reps, killed):
                if now != last:
                    stable_since, last = time.monotonic(), now
                elif time.monotonic() - stable_since >= self.settle:
                    return True
            else:
                stable_since, last = None, None
        return False
