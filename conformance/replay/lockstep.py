"""The lock-step harness: drive an implementation one event at a time and
check each step against the protocol's model (docs/architecture.md, "The chain of
evidence", link 2; "Style": one lock-step harness).

Theory of operation
-------------------
``LockstepNetwork`` owns the nodes' stacks and plays their environment, so
that a test (a Hypothesis state machine, tests/lockstep_rules.py) picks
every step: an application send, the delivery, loss or duplication of one
chosen in-flight datagram, a timer firing, a crash.  The simulators have no
such hook (their network and timers are a time-ordered queue), hence this
separate network policy.  The stacks' effects are performed by the one effect
engine (impl/engine.py) with this class as its network: a send or multicast
becomes a datagram in flight, a timer is armed in the engine's timer table
until the test fires it, and every trace record goes to the protocol
driver's ``_model_step``, which replays it on the one replay
engine (conformance/replay/engine.py): each record must be an enabled model step
from some candidate state, leading to a state that agrees with what it
logs.  Then the abstraction of the whole implementation must equal the
projection of at least one candidate, which is stronger than the
per-record check: it also covers nodes that took no step.  A failure raises
``LockstepError``.

Each protocol's driver lives with its protocol (conformance/replay/sequencer.py
``LockstepCluster``, conformance/replay/flush.py ``FlushLockstep``,
conformance/replay/stable.py ``StableCluster``, conformance/replay/raincore.py
``RaincoreLockstep``): it sets ``engine`` (the replay engine on its
protocol's binding) and supplies ``abstraction()`` and ``_project(s,
node)``, and whatever its network does differently (``_transmit``,
``_receive``, ``_effect``, ``_matches``).
"""

from __future__ import annotations

from typing import Any

from groupcheck.impl.engine import EffectEngine, env_record
from groupcheck.impl.events import Deliver, Receive, TimerFired


class LockstepError(AssertionError):
    """The implementation took a step the model does not allow."""


class LockstepNetwork:
    """What every lock-step driver shares: it is the network (each datagram
    in flight can be delivered, lost or duplicated, in any order; what goes to
    a crashed node is dropped) and the timers (each armed one can fire), and
    after every step the abstraction of the whole implementation must equal
    the projection of some candidate model state."""

    # check the abstraction after each input a stack handles (a driver that
    # checks once per compound step, or not while it sets a step up, says so)
    checking = True
    engine: Any = None          # the driver's replay engine (conformance/replay/engine.py ``EffectEngine``)
    now = 0.0                   # the lock-step has no clock: the test orders the steps

    def __init__(self, members, stacks: dict) -> None:
        self.members = tuple(members)
        self.effects = EffectEngine(stacks, self, self._model_step, self._effect)
        self.inflight: list[tuple[int, int, Any]] = []      # (src, dest, datagram), oldest first
        self._arms = 0                                       # a timer's token: when it was armed (a count)
        self.crashed: set[int] = set()
        self.deliveries: dict[int, list[tuple[int, int]]] = {m: [] for m in self.members}
        self.events: list[dict] = []       # every trace record, in the replay's shape

    @property
    def stacks(self) -> dict:
        """The nodes' stacks, as the effect engine runs them (a test may swap them)."""
        return self.effects.stacks

    @stacks.setter
    def stacks(self, stacks: dict) -> None:
        self.effects.stacks = stacks

    @property
    def cands(self):
        return self.engine.cands

    @property
    def peak(self) -> int:
        return self.engine.peak

    def _candidates(self):
        return self.engine.cands

    def _model_step(self, ev: dict) -> None:
        """Replay one trace record on the engine (``ev`` without its index)."""
        ev = dict(ev, i=len(self.events))
        self.events.append(ev)
        failed = self.engine.step(ev)
        if failed:
            raise LockstepError(failed[1] if failed[0] != "rejected" else f"event {ev['i']}: {failed[1]}")

    def env_step(self, name: str, nid=None, msg=None, params=None) -> None:
        """The environment's action (Crash, NewView, TokenLoss): its record, in
        the layers' shape, replayed like theirs."""
        self._model_step(env_record(name, self.now, nid, msg, params))

    def live(self) -> list[int]:
        return [m for m in self.members if m not in self.crashed]

    @property
    def timers(self) -> dict[int, dict[str, int]]:
        """Each member's armed timers, name -> token (the engine's table)."""
        return {m: self.effects.armed(m) for m in self.members}

    def armed(self) -> list[tuple[int, str]]:
        """The timers that can fire, (node, name) in order."""
        return [(m, t) for m in self.live() for t in sorted(self.effects.armed(m))]

    def oldest_timer(self) -> tuple[int, str]:
        """The armed timer armed longest ago (the one virtual time fires first)."""
        return min(self.armed(), key=lambda x: self.effects.armed(x[0])[x[1]])

    # ------------------------------------------------------------ the network's steps

    def deliver(self, i: int) -> None:
        src, dest, data = self.inflight.pop(i)
        self._receive(src, dest, data)

    def drop(self, i: int) -> None:
        self.inflight.pop(i)

    def duplicate(self, i: int) -> None:
        self.inflight.append(self.inflight[i])

    def fire(self, m: int, name: str) -> None:
        if self.effects.expire(m, name):
            self._handle(m, TimerFired(name))

    # ------------------------------------------------------------ plumbing

    def _receive(self, src: int, dest: int, data) -> None:
        self._handle(dest, Receive(src, data))

    def _stop(self, m: int) -> None:
        """m crashes: it takes no more steps, what is in flight to it is lost."""
        self.crashed.add(m)
        self.effects.armed(m).clear()
        self.inflight = [d for d in self.inflight if d[1] != m]

    def _handle(self, m: int, event) -> None:
        self.effects.handle(m, event)
        if self.checking:
            self.check_abstraction()

    def _effect(self, m: int, eff) -> bool:
        """What leaves node m other than datagrams, timers and records (the
        engine's delivery sink); False if it is none the harness knows."""
        if isinstance(eff, Deliver):
            self.deliveries[m].append((eff.sender, eff.seqno))
            return True
        return False

    # ------------------------------------------------------------ the policy (impl/engine.py)

    def send(self, src: int, dest: int, data) -> None:
        self._transmit(src, dest, data)

    def multicast(self, src: int, data) -> None:
        for dest in self.live():
            self._transmit(src, dest, data)

    def schedule(self, at: float, nid: int, name: str) -> int:
        self._arms += 1
        return self._arms

    def _transmit(self, src: int, dest: int, data) -> None:
        if dest not in self.crashed:          # the network drops what goes to a crashed node
            self.inflight.append((src, dest, data))

    def _matches(self, s, impl) -> bool:
        return all(self._project(s, m) == v for m, v in impl.items())

    def _differences(self, s, impl) -> list[str]:
        return [f"member {m}: model {self._project(s, m)} != impl {v}"
                for m, v in impl.items() if self._project(s, m) != v]

    def check_abstraction(self) -> None:
        impl = self.abstraction()
        cands = self._candidates()
        if any(self._matches(s, impl) for s in cands):
            return
        raise LockstepError(f"after event {len(self.events) - 1}: no candidate model state "
                            f"(of {len(cands)}) matches the implementation; e.g. "
                            + "; ".join(self._differences(next(iter(cands)), impl)))
