"""The chaos soak of the real cluster (``groupcheck cluster chaos``):
kills and pauses drawn from a seed, the fault plan's network faults on the
real datagrams, an optional CPU hog, the run checked as ``cluster run``'s.

Theory of operation
-------------------
``schedule`` is a pure function: (seed, seconds, nodes, stack) -> the list
of ``Action``: at ``at`` seconds after the workload starts, ``kill``
(SIGKILL) or ``pause`` (SIGSTOP, then SIGCONT ``seconds`` later) of a
target, a node id or ``coordinator``, which the runner resolves when the
action is due (the smallest live member: every stack's coordinator is the
first member of its view, and the views keep the members' order).  A kill
of the ring's token holder is a node's kill ``when="eating"``: it lands the
next time that node holds the token (Raincore's own ring only,
``--lossy-ring``: the abstraction's kill waits until the node has passed
the token on).  The actions are sequential (one ends before the next begins), all
end by ``seconds``, and at most N - 1 are kills (FLUSH is crash-stop: a
killed node never comes back, and one must be left), spread over the run
(the chance of a kill is the kills left over the actions the time left
holds, at most one half).

A pause lasts longer than the stack's failure detector's time-out
(``suspicion_after``): over the ring the Transport Manager's patience at
its cap (3 s; at least its resend interval times its attempts, 1 s, more
after the slow acks it has seen), so the survivors drop the paused
node while it is alive (the false suspicion of docs/raincore.md); with
``stalls`` it stays under half the time-out (the soak of everything but
false suspicion: the audit's and the long soaks over the ring).  The
oracle stacks' detector is the runner, which suspects only the nodes it
killed: there a pause is a stall of the node that the others' reliable
layers ride out with retransmissions (50 ms), never a suspicion.

``ChaosRunner`` is the cluster's ``Runner`` with the schedule in place of
``--kill``: it writes ``schedule.json`` first, then plays it, recording what
each action became (the node it hit, when; ``skipped`` when its node was
already dead, or the last live member of the latest view: a kill
never leaves a joiner waiting with nobody to admit it, as the specs'
``CanCrash``), and logs a progress line at least every ``PROGRESS`` seconds.
With ``rejoin`` (the ring's stacks: ``ClusterRun.joins``) a kill may be
followed by a ``join``: a new node, the next id after the first N, started
outside the first ring so that it asks in by the ring's 911; a killed node
never comes back under its own id (FLUSH is crash-stop).  The network faults are each node's (impl/runtime.py ``FaultyNetwork``,
seeded from the run's seed and the node id); the CPU hog (``Hog``) is
``Runner``'s own.  The run is judged as any cluster run (conformance/cluster.py).
"""

from __future__ import annotations

import json
import random
import signal
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional, Union

from . import protocols
from .cluster import ClusterError, ClusterRun, Runner, last_of_view, latest_view

FIRST = (0.3, 1.0)        # seconds before the first action (the workload under way)
GAP = (0.5, 1.5)          # seconds between one action's end and the next's start
KILL_MAX = 0.5            # the most an action's chance of being a kill is
JOIN_SHARE = 0.5          # with rejoin: the chance a killed node comes back next, as a new node
PAUSE_OVER = (1.5, 2.5)   # a pause: this many times the detector's time-out
STALL = (0.2, 1.0)        # a pause's seconds where no time-out suspects (the oracle stacks)
PROGRESS = 5.0            # seconds between progress lines (at most)


@dataclass(frozen=True)
class Action:
    at: float                       # seconds after the workload's start
    action: str                     # "kill" | "pause" | "join"
    target: Union[int, str]         # a node id, or "coordinator"
    seconds: float = 0.0            # a pause's length
    when: str = ""                  # a kill: "eating", once the node holds the ring's token

    @property
    def end(self) -> float:
        return self.at + self.seconds


def suspicion_after(protocol: str, lossy: bool = False) -> Optional[tuple[float, float]]:
    """Seconds of silence after which the stack's failure detector may, and
    after which it surely does, suspect a live node: over the ring the
    Transport Manager's give-up time (its resend interval times its
    attempts) and its patience's cap (the detector adapts in between to the
    ack delays it sees); None for the oracle stacks (the runner suspects
    only the nodes it killed)."""
    run = protocols.find(protocol).cluster
    if run.views != "ring":
        return None
    tm = run.stack(1, (1, 2), lossy).ring_part.layer("tm")
    base = tm.interval * tm.attempts
    return base, tm.patience_cap or base


def schedule(seed: int, seconds: float, nodes: int, *, suspect: Optional[float] = None,
             surely: Optional[float] = None, holder: bool = False, rejoin: bool = False,
             stalls: bool = False, suspicions: Optional[int] = None) -> list[Action]:
    """The actions of a chaos run, from ``seed`` alone: over ``seconds``, on
    members 1..``nodes``; ``suspect``: the detector's time-out, the least
    silence it may take for a crash (None: no time-out, the pauses are
    stalls); ``surely``: the most (an adaptive detector's cap; the long
    pauses outlast it; default ``suspect``); ``holder``: the ring's token holder
    may be a kill's target; ``rejoin``: a killed node may come back as a new
    node (``join`` of ids ``nodes`` + 1, + 2...; the kills stay among the
    first members, the joiners may be paused); ``stalls``: every pause
    stays under half the time-out, so no live node is suspected;
    ``suspicions``: at most this many pauses outlast the time-out, spread
    over the run as the kills are, the others stalls (None: every pause).
    Over the ring a pause that outlasts the detector costs the node its
    membership (it leaves and may come back under a spare id), so a long
    soak with every pause such empties any ring within minutes."""
    if nodes < 2 or seconds <= 0:
        raise ValueError("a chaos schedule needs 2 nodes or more and seconds > 0")
    if suspicions is not None and suspicions < 0:
        raise ValueError("suspicions: a count, 0 or more")
    rng = random.Random(seed)
    stall = (min(STALL[0], suspect / 4), min(STALL[1], suspect / 2)) if suspect else STALL
    longest = surely or suspect
    pause = (longest * PAUSE_OVER[0], longest * PAUSE_OVER[1]) if suspect and not stalls else stall
    mixed = bool(suspect) and not stalls and suspicions is not None
    step = (sum(GAP) + sum(stall if mixed else pause)) / 2    # an action's mean length, with the gap after it
    live = list(range(1, nodes + 1))
    kills, joins, longs, out = 0, 0, 0, []
    t = rng.uniform(*FIRST)
    while True:
        if rejoin and joins < kills and rng.random() < JOIN_SHARE:
            joins += 1
            act = Action(round(t, 3), "join", nodes + joins)
            live.append(act.target)
        # the kills spread over the run: the chance of one is the kills left
        # over the actions the time left holds, at most KILL_MAX (pauses too)
        elif rng.random() < min(KILL_MAX, (nodes - 1 - kills) / max(1.0, (seconds - t) / step)):
            roles = ["coordinator", "member"] + (["holder"] if holder else [])
            role = rng.choice(roles)
            first = [m for m in live if m <= nodes]
            target: Union[int, str] = "coordinator" if role == "coordinator" else rng.choice(first)
            live.remove(min(live) if role == "coordinator" else target)
            act = Action(round(t, 3), "kill", target, when="eating" if role == "holder" else "")
            kills += 1
        else:
            span = pause
            if mixed:       # the suspicions spread over the run as the kills are
                span = stall
                if rng.random() < min(KILL_MAX, (suspicions - longs) / max(1.0, (seconds - t) / step)):
                    span, longs = pause, longs + 1
            act = Action(round(t, 3), "pause", rng.choice(live), round(rng.uniform(*span), 3))
        if act.end > seconds:
            return out
        out.append(act)
        t = act.end + rng.uniform(*GAP)


class ChaosRunner(Runner):
    """``Runner`` playing ``plan`` (a ``schedule``) in place of ``--kill``."""

    def __init__(self, protocol: str, nodes: int, messages: int, plan: list[Action], out: Path, *,
                 seed: int, rejoin: bool = False, **kw) -> None:
        super().__init__(protocol, nodes, messages, [], out, **kw)
        self.plan, self.seed = list(plan), seed
        self.done: list[dict] = []          # what each action became
        if any(a.when for a in plan) and not self.lossy_ring:
            raise ClusterError("a kill of the token's holder needs --lossy-ring (the abstraction never kills it)")
        # the header's crash bound: every kill of the plan may land, and where a
        # node pauses over the ring every node but one may be suspected and leave
        # (impl/runtime.py SHUNNED): under load a pause shorter than the failure
        # detector's time-out outlasts it too (30-minute soaks with --stalls did)
        self.joiners = sum(a.action == "join" for a in plan)
        detector = suspicion_after(protocol, self.lossy_ring)
        shuns = detector is not None and any(a.action == "pause" for a in plan)
        self.crash_bound = nodes + self.joiners - 1 if shuns else sum(a.action == "kill" for a in plan)
        if self.joiners and not self.run_as.joins:
            raise ClusterError(f"a node joins only over the ring ({protocol} has no join)")
        # with rejoin over the ring, a node that left as suspected comes back as a
        # new node (the next spare id), as a shunned JGroups member rejoins under a
        # new address; ``nodes`` spare ids, so the soak never ends with one node
        self.spares = nodes if rejoin and detector is not None and self.run_as.joins else 0
        self.next_spare = nodes + self.joiners + 1
        self.joiners += self.spares
        self.rejoined: list[list[int]] = []      # [the node that left, the new node]
        self.shuns_seen = 0
        self.env_faults = {"chaos": {"seed": seed, "actions": [asdict(a) for a in plan]}}

    def run(self) -> ClusterRun:
        self._t0 = self._last_progress = time.monotonic()     # progress from the start (the nodes' too)
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / "schedule.json").write_text(json.dumps(
            {"seed": self.seed, "actions": [asdict(a) for a in self.plan]}, indent=2), encoding="utf-8")
        run = super().run()
        run.rejoined = [list(r) for r in self.rejoined]
        return run

    def _poll(self, until: float) -> None:
        super()._poll(until)
        now = time.monotonic()
        if now - self._last_progress >= PROGRESS:
            self._last_progress = now
            live = sorted(self.status)
            self.log(f"chaos {now - self._t0:.0f} s: {len(self.done)}/{len(self.plan)} actions done; "
                     f"delivered {({n: self.status[n].get('delivered') for n in live})}")

    def _kills(self, t0: float, members: list) -> list:
        killed: list[int] = []
        for act in self.plan:
            while time.monotonic() < t0 + act.at:
                self._poll(min(t0 + act.at, time.monotonic() + 0.05))
                self._reap(killed, t0)
            live = [m for m in (*members, *self.joined) if m not in killed]
            view = latest_view(live, self.status)
            nid = self._resolve(act.target, [m for m in live if view is None or m in view] or live)
            row = {**asdict(act), "node": nid, "started": round(time.monotonic() - t0, 3)}
            if act.action != "join" and nid not in live or (act.action == "kill" and len(live) == 1):
                self.done.append({**row, "skipped": "its node is dead"})
                continue
            if act.action == "kill" and view is not None and nid not in view:
                self.done.append({**row, "skipped": "not a member of the latest view (a joiner not yet admitted)"})
                self.log(f"kill of node {nid} skipped: not a member of the latest view")
                continue
            if act.action == "kill" and last_of_view(nid, live, self.status):
                self.done.append({**row, "skipped": "the last live member of the latest view"})
                self.log(f"kill of node {nid} skipped: the last live member of the latest view")
                continue
            if act.action == "join":
                self._join(nid, t0)
            elif act.action == "kill":
                skipped = self._kill(nid, members, killed, t0, eating=act.when == "eating")
                if skipped:
                    self.done.append({**row, "skipped": skipped})
                    continue
                self._rejoin_shunned(t0)
            else:
                self.procs[nid].send_signal(signal.SIGSTOP)
                self.log(f"node {nid} paused at {time.monotonic() - t0:.2f} s for {act.seconds} s")
                try:
                    self._poll(time.monotonic() + act.seconds)
                finally:
                    self.procs[nid].send_signal(signal.SIGCONT)
            self.done.append({**row, "ended": round(time.monotonic() - t0, 3)})
        return killed

    def _join(self, nid: int, t0: float) -> None:
        """A new node: its process started (a joiner: outside the first
        ring, it asks in by the ring's 911), its workload what is left of
        the others' (at the same rate)."""
        left = max(0.0, self.messages / self.rate - (time.monotonic() - t0))
        self._spawn(nid, min(self.messages, int(left * self.rate)))
        until = time.monotonic() + 30
        while nid not in self.status and time.monotonic() < until:
            if self.procs[nid].poll() is not None:
                raise ClusterError(f"node {nid} exited at start (see {self.out}/node-{nid}.log)")
            self._poll(min(until, time.monotonic() + 0.05))
        if nid not in self.status:
            raise ClusterError(f"node {nid} did not report ready within 30 s")
        self._send(nid, {"cmd": "start"})
        self.joined.append(nid)
        self.log(f"node {nid} started at {time.monotonic() - t0:.2f} s, asking to join")

    def _reap(self, killed: list, t0: float) -> None:
        super()._reap(killed, t0)
        self._rejoin_shunned(t0)

    def _rejoin_shunned(self, t0: float) -> None:
        """Each node that left as suspected since the last call comes back as
        a new node, while spare ids, a second of the workload and a node of
        the configured ring are left."""
        while self.shuns_seen < len(self.shunned):
            old = self.shunned[self.shuns_seen]
            self.shuns_seen += 1
            left = self.messages / self.rate - (time.monotonic() - t0)
            ring = [m for m in range(1, self.n + 1) if self.procs[m].poll() is None]
            if self.next_spare > self.n + self.joiners or left < 1.0 or not ring:
                continue          # (a joiner asks the configured ring: none of it is left to admit it)
            nid, self.next_spare = self.next_spare, self.next_spare + 1
            self.rejoined.append([old, nid])
            self.log(f"node {old} left as suspected: node {nid} starts in its place")
            self._join(nid, t0)

    @staticmethod
    def _resolve(target, live: list) -> Optional[int]:
        """The node an action hits: the coordinator is the smallest live
        member; None when no node is left (every node killed or left as
        suspected: the action is skipped)."""
        if target == "coordinator":
            return min(live) if live else None
        return int(target)
