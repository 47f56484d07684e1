"""The effect engine: what a node's effects become, whatever the network.

Theory of operation
-------------------
A node's stack is sans-I/O (impl/stack.py): ``handle(event, now)`` returns
effects.  ``EffectEngine`` is the one place that performs them, for every
runtime that runs stacks:

* ``Trace(event)`` becomes a record (``record``, one shape: ``kind``,
  ``name``, ``nid``, ``msg``, ``params``, ``state``, ``clock``) handed to
  the record sink.  A step's records go out before any of its other
  effects, so a datagram the step sends never overtakes the record of the
  action that sent it (the real runtime's vector clocks rely on it).
* ``Send`` and ``Multicast`` are handed to the network policy.
* ``SetTimer`` arms a timer in the one timer table (``timers``: node ->
  name -> the token the policy's ``schedule`` returned); setting it again
  re-arms it and ``CancelTimer`` disarms it.  When the timer is due the
  policy calls ``expire`` with the token and, if it was still the armed
  one, hands the node ``TimerFired``; a stale token (the timer was re-armed
  or cancelled meanwhile) fires nothing.
* Everything else a stack hands out of the node (``Deliver``, an
  unsequenced ``Up``, a protocol's own effect) goes to the delivery sink.

The network is a policy (``Network``): ``now`` (the time on the clock it keeps),
``send``, ``multicast`` and ``schedule``.  Its implementations are the
seeded simulated network (impl/sim.py), the ring's Transport Manager
environment (impl/sim_raincore.py, impl/sim_raincoreflush.py), the
lock-step chooser (conformance/replay/lockstep.py: the test picks which datagram
or timer comes next) and UDP (impl/runtime.py).  The engine knows no
protocol and draws no randomness, so a policy that is deterministic keeps
the whole run deterministic.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Protocol

from .events import CancelTimer, Effect, Multicast, Send, SetTimer, Trace, TraceEvent


class Network(Protocol):
    @property
    def now(self) -> float:
        """The current time on the policy's clock (virtual or real)."""
        ...

    def send(self, src: int, dest: int, msg: Any) -> None:
        """Carry ``msg`` from ``src`` to ``dest`` (or lose it, as the policy says)."""
        ...

    def multicast(self, src: int, msg: Any) -> None:
        """Carry ``msg`` from ``src`` to every member the policy knows to be up."""
        ...

    def schedule(self, at: float, nid: int, name: str) -> Any:
        """Arrange for ``nid``'s timer ``name`` to be fired at ``at``; return
        the token the policy will hand to ``EffectEngine.expire``."""
        ...


def record(event: TraceEvent, clock: float) -> dict:
    """A layer's trace record as the runtimes keep it."""
    return {"kind": "event", **event.to_record(), "clock": clock}


def env_record(name: str, clock: float, nid: Optional[int] = None, msg: Any = None,
               params: Optional[dict] = None) -> dict:
    """A record of the environment's action (Crash, NewView, TokenLoss...):
    the same shape as a layer's, with no post-state."""
    return {"kind": "event", "name": name, "nid": nid, "msg": msg, "params": dict(params or {}),
            "state": None, "clock": clock}


class EffectEngine:
    """Performs the effects of the stacks ``stacks`` (node id -> stack) on
    ``network``; records go to ``on_record``, deliveries to ``on_deliver``
    (node id, effect)."""

    def __init__(self, stacks: dict, network: Network, on_record: Callable[[dict], None],
                 on_deliver: Callable[[int, Effect], Any]) -> None:
        self.stacks = stacks
        self.net = network
        self.on_record = on_record
        self.on_deliver = on_deliver
        self.timers: dict[int, dict[str, Any]] = {}

    def handle(self, nid: int, event) -> list[Effect]:
        """Node ``nid`` takes ``event`` now; its effects are performed (and returned)."""
        now = self.net.now
        effects = self.stacks[nid].handle(event, now)
        for eff in effects:
            if isinstance(eff, Trace):
                self.on_record(record(eff.event, now))
        for eff in effects:
            self.perform(nid, eff)
        return effects

    def perform(self, nid: int, eff: Effect) -> None:
        if isinstance(eff, Send):
            self.net.send(nid, eff.dest, eff.msg)
        elif isinstance(eff, Multicast):
            self.net.multicast(nid, eff.msg)
        elif isinstance(eff, SetTimer):
            self.timers.setdefault(nid, {})[eff.name] = self.net.schedule(eff.at, nid, eff.name)
        elif isinstance(eff, CancelTimer):
            self.timers.get(nid, {}).pop(eff.name, None)
        elif not isinstance(eff, Trace):
            self.on_deliver(nid, eff)

    def armed(self, nid: int) -> dict[str, Any]:
        """``nid``'s armed timers, name -> token."""
        return self.timers.setdefault(nid, {})

    def expire(self, nid: int, name: str, token: Any = None) -> bool:
        """``nid``'s timer ``name`` is due: disarm it and say True (the caller
        then hands the node ``TimerFired(name)``, through whatever it wraps
        around ``handle``) if ``token`` is the armed one (``None``: any); False
        if it is stale or not armed."""
        table = self.timers.get(nid, {})
        if name not in table or (token is not None and table[name] != token):
            return False
        del table[name]
        return True
