"""Lock-step conformance of FLUSH over the Raincore ring.

The driver (conformance/replay/raincoreflush.py ``lockstep``) owns a ring of 3
configured nodes and one joiner, each node its ring layer and its FLUSH
stack in ring mode, and is their network: FLUSH's datagrams are delivered,
lost or duplicated in any order; the ring's TOKEN and 911 go through the
spec's Transport Manager (never lost; to a node that is down, back to the
sender as DeliveryFailed).  After every step each trace record must be an
enabled action of model/raincoreflush.py matching the logged state, and the
whole implementation (every node's FLUSH and ring state, the ring's messages
in flight) must equal a candidate model state; the model's invariants
(VirtualSynchrony, AtMostOneToken, ConsistentHistory, ViewsFromRing, ...)
must hold in some candidate.  At the end the network and the ring run until
the group has settled: every live node in the ring's view of the live nodes,
out of its flush.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import event, settings, strategies as st
from hypothesis.stateful import rule
from lockstep_rules import NODES, CrashRule, LossRules, NetworkRules, token_rounds
from raincoreflush_helpers import mutate

from groupcheck.conformance.replay.lockstep import LockstepError
from groupcheck.conformance.replay.raincoreflush import lockstep


def settled(c) -> bool:
    live = [m for m in c.live() if c.ring(m).status == "Up"]
    view = {tuple(c.ring(m).lastGlobalView) for m in live}
    if len(view) != 1 or set(next(iter(view))) != set(live):
        return False
    return all(c.flush(m).is_member and set(c.flush(m).members) == set(live) and c.flush(m).phase == "Normal"
               and not c.flush(m).blocked and not c.flush(m).flush_init
               and not any(c.nodes[m].fstack.layer("reliable").unacked.values()) for m in live)


def run_until_settled(c, limit: int = 4000) -> None:
    """Deliver oldest first, fire the oldest timer when nothing is in flight
    (the ring's Eating timer keeps the token going), each a checked step."""
    for _ in range(limit):
        if settled(c) and not any(isinstance(d, bytes) for _, _, d in c.inflight):
            return
        if c.inflight:
            c.deliver(0)
        elif c.armed():
            c.fire(*c.oldest_timer())
    raise AssertionError("the group did not settle")


class RingFlushMachine(NetworkRules, LossRules, CrashRule):
    def __init__(self):
        super().__init__()
        self.c = lockstep(ring=3, joiners=1, max_msgs=3, max_crashes=1)

    @rule(m=NODES)
    def app_send(self, m):
        if m in self.c.members and self.c.can_send(m):
            self.c.app_send(m)

    @rule()
    def join(self):
        if self.c.can_join(4):
            event("join")
            self.c.join(4)

    @rule(rounds=st.integers(min_value=1, max_value=30))
    def run_ring(self, rounds):
        token_rounds(self.c, rounds)

    def crashing(self, m: int) -> None:
        f = self.c.flush(m)
        event(f"crash of {'the coordinator' if m == min(f.members) else 'a member'} in phase {f.phase}")

    def teardown(self):
        run_until_settled(self.c)
        views = {self.c.flush(m).vid for m in self.c.live() if self.c.ring(m).status == "Up"}
        event(f"ended in FLUSH view {max(views)}")


TestRingFlushLockstep = RingFlushMachine.TestCase
TestRingFlushLockstep.settings = settings(max_examples=40, stateful_step_count=40, deadline=None)


def random_walk(c, rng: random.Random, steps: int = 80) -> None:
    for _ in range(steps):
        r, m = rng.random(), rng.randint(1, 3)
        if r < 0.1 and c.can_send(m):
            c.app_send(m)
        elif r < 0.13 and c.can_crash(m):
            c.crash(m)
        elif r < 0.16 and c.can_join(4):
            c.join(4)
        elif r < 0.2 and c.inflight:
            c.drop(rng.randrange(len(c.inflight)))
        elif r < 0.23 and c.inflight:
            c.duplicate(rng.randrange(len(c.inflight)))
        elif r < 0.8 and c.inflight:
            c.deliver(rng.randrange(len(c.inflight)))
        elif c.armed():
            c.fire(*rng.choice(c.armed()))
    run_until_settled(c)


def test_random_walks_conform_and_settle():
    crashes = joins = 0
    for seed in range(40):
        c = lockstep()
        random_walk(c, random.Random(seed))
        crashes += bool(c.crashed)
        joins += c.flush(4).vid > 0
    assert crashes >= 10 and joins >= 10, (crashes, joins)


@pytest.mark.parametrize("mutant", ["oracle_view", "flush_on_suspicion", "no_reconcile"])
def test_lockstep_catches_mutants(monkeypatch, mutant):
    mutate(monkeypatch, mutant)
    caught = 0
    for seed in range(60):
        try:
            random_walk(lockstep(), random.Random(seed))
        except LockstepError:
            caught += 1
    assert caught > 0
