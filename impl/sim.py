"""Deterministic simulator: virtual clock, seeded RNG, a faulty network.

Theory of operation
-------------------
Everything that happens is an entry in one priority queue ordered by
(virtual time, insertion number), so ties resolve the same way on every run.
All randomness comes from one ``random.Random(seed)`` drawn in a fixed order:
the same seed, nodes, messages and fault plan give the same trace, record
for record (docs/impl.md, "The simulator").  There are no threads, sockets or wall clocks here.

The network carries the bytes a stack emits.  Per datagram, the fault plan
decides loss (probability ``loss``), duplication (``duplicate``, one extra
copy) and delivery time: ``now + uniform(delay) + uniform(0, reorder_window)``
so datagrams overtake each other within that window.  A datagram (bytes)
that goes through is cut short with probability ``truncate``: it arrives
with a tail of 1 byte to all of its length missing, for the receiver's codec to
count and drop (``NetStats.truncated``).  The draws are impl/faults.py's
``fates``, the real cluster's too (impl/runtime.py ``FaultyNetwork``); those
for ``truncate`` are made only when it is above 0, so a plan without it
gives the runs it always gave.  A ``Multicast`` from a
stack (one that no layer expanded) goes to every live node.

Crash and NewView, the spec's environment actions, are the simulator's.
``crashes`` lists ``(member, time)``: at that time the member stops (crash-
stop: it takes no further event; datagrams it had sent stay in flight, but
those sent to it are dropped).  ``detect_delay`` later the membership oracle
(a perfect failure detector) decides the next view, the last one without its
crashed members, and hands it to each live member after its own
``install_delay``, every member receiving every view in order.

The simulator is a network policy of impl/engine.py: the engine performs
the stacks' effects (records, timers, deliveries) and hands it the
datagrams and the timers to schedule on its queue.  It knows no protocol.
A protocol's environment is a subclass that adds its own environment actions as queue
entries (impl/sim_sequencer.py: none beyond the default oracle;
impl/sim_stable.py: Join; impl/sim_flush.py: its own crash, Leave and Join
with FLUSH's failure detector; impl/sim_raincore.py: the ring's faults),
and the stacks are built by impl/stacks/<protocol>.py.  The same stacks run
over UDP in impl/runtime.py.  A run ends when nothing is left to do (timers
only run while retransmission is pending) or at ``horizon``.
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass
from typing import Any, Callable

from .engine import EffectEngine, env_record
from .faults import FaultPlan, fates  # noqa: F401  (the simulators' plan, impl/faults.py)
from .events import AppSend, Deliver, Receive, TimerFired, Up, View, ViewChange

IMPL_NAME = "groupcheck.impl"
IMPL_VERSION = "0.1.0"


@dataclass
class NetStats:
    datagrams: int = 0
    lost: int = 0
    duplicated: int = 0
    to_crashed: int = 0
    truncated: int = 0
    merged: int = 0         # a message equal to one in flight, held once (the ring's sets)


class Simulator:
    """Runs stacks (``nid -> stack``) over the simulated network."""

    DATAGRAM = "datagram"           # the queue entry of a datagram in flight

    def __init__(self, stacks: dict[int, Any], seed: int, faults: FaultPlan | None = None,
                 horizon: float = 60.0, sink: Callable[[dict], None] | None = None) -> None:
        self.stacks = dict(stacks)
        self.faults = faults or FaultPlan()
        self.rng = random.Random(seed)
        self.horizon = horizon
        self._settle = horizon / 2       # the least simulated time after the last application send
        self.now = 0.0
        self._queue: list = []
        self._n = 0
        self.crashed: set[int] = set()
        self.views: list[View] = [View(1, tuple(self.stacks))]
        self._install_at: dict[int, float] = {}
        self.records: list[dict] = []
        # sink: each record goes to it as it happens instead of to ``records``
        # (a long run written as it goes, bench/conform.py)
        self._emit = sink if sink is not None else self.records.append
        self.deliveries: dict[int, list] = {n: [] for n in self.stacks}
        self.net = NetStats()
        self.app_dropped = 0            # events (app sends) meant for crashed members
        self.engine = EffectEngine(self.stacks, self, self._record, self._deliver)
        for nid, at in self.faults.crashes:
            if nid not in self.stacks:
                raise ValueError(f"crash of unknown member {nid}")
            self._push(at, "crash", nid, None)

    # ------------------------------------------------------------ queue

    def _push(self, at: float, kind: str, nid: int | None, data) -> None:
        self._n += 1
        heapq.heappush(self._queue, (at, self._n, kind, nid, data))

    def app_send(self, at: float, nid: int, payload: bytes) -> None:
        # The horizon follows the workload: a run keeps at least half its
        # horizon after its last application send, so a large --messages is
        # sent and settled, not cut off part-way (a workload that ends in the
        # first half of the horizon leaves it as it was).
        self.horizon = max(self.horizon, at + self._settle)
        self._push(at, "event", nid, AppSend(payload))

    def inject(self, at: float, nid: int, event) -> None:
        """Hand ``event`` to ``nid``'s stack at time ``at`` (for harnesses that
        drive a lower layer directly, e.g. ``Send`` into a reliable layer)."""
        self._push(at, "event", nid, event)

    def run(self) -> bool:
        """Run until the queue is empty (``_drained``'s verdict), a step says
        the run is over (True) or the horizon is passed (False)."""
        while self._queue:
            at, _, kind, nid, data = heapq.heappop(self._queue)
            if at > self.horizon:
                return False
            self.now = at
            if self._step(kind, nid, data):
                return True
        return self._drained()

    def _drained(self) -> bool:
        return True

    def _step(self, kind: str, nid, data) -> bool | None:
        if kind == "newview":
            return self._new_view()
        if nid in self.crashed:
            if kind == self.DATAGRAM:
                self.net.to_crashed += 1
            elif kind == "event":
                self.app_dropped += 1
            return
        if kind == "crash":
            self.crashed.add(nid)
            self._record(env_record("Crash", self.now, nid))
            self._push(self.now + self.faults.detect_delay, "newview", None, None)
        elif kind == "event":
            self._handle(nid, data)
        elif kind == self.DATAGRAM:
            src, payload = data
            self._handle(nid, Receive(src, payload))
        elif kind == "timer":
            if self.engine.expire(nid, *data):
                self._handle(nid, TimerFired(data[0]))
        elif kind == "view":
            self._handle(nid, ViewChange(data))

    def _new_view(self) -> None:
        last = self.views[-1]
        if not any(m in self.crashed for m in last.members):
            return
        view = View(last.vid + 1, tuple(m for m in last.members if m not in self.crashed))
        self.views.append(view)
        self._record(env_record("NewView", self.now, params={"view": list(view.members)}))
        lo, hi = self.faults.install_delay
        for m in view.members:
            at = max(self.now + self.rng.uniform(lo, hi), self._install_at.get(m, 0.0))
            self._install_at[m] = at
            self._push(at, "view", m, view)

    # ------------------------------------------------------------ the policy (impl/engine.py)

    def _handle(self, nid: int, event) -> None:
        self.engine.handle(nid, event)

    def _record(self, rec: dict) -> None:
        self._emit(rec)

    def _deliver(self, nid: int, eff) -> None:
        if isinstance(eff, (Deliver, Up)):
            self.deliveries.setdefault(nid, []).append(eff)

    def send(self, src: int, dest: int, msg) -> None:
        self._transmit(src, dest, msg, self.DATAGRAM)

    def multicast(self, src: int, msg) -> None:
        for dest in self.stacks:
            if dest not in self.crashed:
                self._transmit(src, dest, msg, self.DATAGRAM)

    def schedule(self, at: float, nid: int, name: str) -> int:
        self._push(at, "timer", nid, (name, self._n + 1))
        return self._n

    def _transmit(self, src: int, dest: int, payload, kind: str) -> None:
        """One datagram on the seeded network: lost, duplicated, delayed and
        reordered as the fault plan says; queued as ``kind``."""
        f = self.faults
        self.net.datagrams += 1
        if dest in self.crashed:
            self.net.to_crashed += 1
            return
        copies = fates(self.rng, f, payload, self.now)
        if not copies:
            self.net.lost += 1
            return
        self.net.duplicated += len(copies) - 1
        for at, data, cut in copies:
            self.net.truncated += cut
            self._push(at, kind, dest, (src, data))
