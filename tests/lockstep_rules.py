"""The Hypothesis rules every lock-step test shares (conformance/replay/lockstep.py
is the harness; each test file's machine adds its protocol's own steps).

A machine holds its driver in ``self.c`` (a ``LockstepNetwork``) and mixes
in what applies: ``NetworkRules`` (deliver a chosen datagram or the oldest,
fire an armed timer), ``LossRules`` (drop or duplicate a datagram),
``SlowLinkRule`` (deliver everything but one link's datagrams: the shape of
a crashed member's last multicast reaching only some members) and
``CrashRule`` (crash a node the driver lets crash, ``can_crash``).  Nodes
are drawn from 1..4, the largest cluster any test drives; a node a driver
does not have is one it cannot crash."""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

NODES = st.sampled_from((1, 2, 3, 4))
INDEX = st.integers(min_value=0, max_value=63)


def settle(c, limit: int = 5000, must: bool = True) -> None:
    """Deliver everything in flight, oldest first, and fire the timer armed
    longest ago when nothing is (as virtual time would), each a checked
    step, until quiet; ``must``: not quiet after ``limit`` steps fails."""
    for _ in range(limit):
        if c.inflight:
            c.deliver(0)
        elif c.armed():
            c.fire(*c.oldest_timer())
        else:
            return
    assert not must, "the cluster did not settle"


def deliver_all_but(c, src: int, dest: int, limit: int = 500) -> None:
    """Deliver everything in flight except the datagrams from ``src`` to ``dest``."""
    for _ in range(limit):
        i = next((k for k, (s, d, _) in enumerate(c.inflight) if (s, d) != (src, dest)), None)
        if i is None:
            return
        c.deliver(i)


def token_rounds(c, rounds: int) -> None:
    """Let a ring's token go round for up to ``rounds`` checked steps:
    deliver the oldest datagram, else pass a held token on (fire an eating
    timer); stop when neither is there."""
    for _ in range(rounds):
        if c.inflight:
            c.deliver(0)
            continue
        eating = [x for x in c.armed() if x[1] == "eating"]
        if not eating:
            break
        c.fire(*eating[0])


def on_one_in_flight(op: str):
    """A rule applying the driver's ``op`` (deliver, drop, duplicate) to one
    datagram in flight, chosen by index."""
    def apply(self, i):
        getattr(self.c, op)(i % len(self.c.inflight))
    apply.__name__ = apply.__qualname__ = op
    return precondition(lambda self: self.c.inflight)(rule(i=INDEX)(apply))


class NetworkRules(RuleBasedStateMachine):
    deliver = on_one_in_flight("deliver")

    # Delivery is the common case; a second rule doubles its weight so runs
    # get somewhere before the step budget is spent on faults.
    @precondition(lambda self: self.c.inflight)
    @rule()
    def deliver_oldest(self):
        self.c.deliver(0)

    @precondition(lambda self: self.c.armed())
    @rule(i=INDEX)
    def fire_timer(self, i):
        armed = self.c.armed()
        m, name = armed[i % len(armed)]
        self.firing(m, name)
        self.c.fire(m, name)

    def firing(self, m: int, name: str) -> None:
        """Bookkeeping just before timer ``name`` of m fires."""


class LossRules(RuleBasedStateMachine):
    drop = on_one_in_flight("drop")
    duplicate = on_one_in_flight("duplicate")


class SlowLinkRule(RuleBasedStateMachine):
    @precondition(lambda self: self.c.inflight)
    @rule(src=NODES, dest=NODES)
    def settle_but_one_link(self, src, dest):
        deliver_all_but(self.c, src, dest)


class CrashRule(RuleBasedStateMachine):
    def crash_enabled(self) -> bool:
        """Whether a crash may be chosen at all now (a precondition)."""
        return True

    def may_crash(self, m: int) -> bool:
        return m in self.c.members and self.c.can_crash(m)

    def crashing(self, m: int) -> None:
        """Bookkeeping just before m crashes (events, what the invariants need)."""

    @precondition(lambda self: self.crash_enabled())
    @rule(m=NODES)
    def crash(self, m):
        if self.may_crash(m):
            self.crashing(m)
            self.c.crash(m)
