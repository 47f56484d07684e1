"""Lock-step conformance of the STABLE implementation.

A Hypothesis state machine drives a cluster of STABLE stacks (impl/stable.py:
transport, reliable in NAKACK mode, stable) one event at a time: multicasts,
delivery, loss (lost digests included) and duplication of a chosen datagram,
timer firings (gossip, staggered stability, NAK), the join of member 3
through the membership oracle, and the later installation of its view at
member 2.  The driver is the network, the clock and the oracle.  After
every step each new trace event must be a step of model/stable.py from some
candidate state (conformance/replay/stable.py ``StableCluster``, the driver), the
whole implementation (every member's spec variables) must equal the
projection of one candidate,
SafeGC and StabilityBound computed from the trace must hold, and every
member's deliveries must be each sender's seqnos in order, without gaps or
repeats.

The driver's network is the spec's: a link holds at most one STABLE and one
STABILITY message per sender, a newer one replacing an older one in flight
(impl/stable.py relies on the gossip interval exceeding the network delay
for the same).  The flawed build is driven by the same machine in a second
test, which expects Hypothesis to find a SafeGC violation.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, event, settings, strategies as st
from hypothesis.stateful import invariant, precondition, rule, run_state_machine_as_test
from lockstep_rules import LossRules, NetworkRules, settle

from groupcheck.conformance.replay.stable import StableCluster

MEMBERS = st.sampled_from((1, 2, 3))


class StableLockstep(NetworkRules, LossRules):
    reset = True

    def __init__(self):
        super().__init__()
        self.c = StableCluster(n=3, n_init=2, max_seq=2, heard_from_reset=self.reset)

    @rule(m=MEMBERS)
    def app_send(self, m):
        self.c.app_send(m)

    # Multicasts are what STABLE is about: a second rule, every joined member
    # sending once, so that most runs have something to collect.
    @rule()
    def app_send_all(self):
        for m in (1, 2, 3):
            self.c.app_send(m)

    # Run the cluster towards quiescence (each step checked), for a bounded
    # number of steps.
    @precondition(lambda self: self.c.inflight or self.c.armed())
    @rule()
    def settle(self):
        settle(self.c, 300, must=False)

    @precondition(lambda self: self.c.can_join())
    @rule()
    def join(self):
        self.c.join()

    @precondition(lambda self: self.c.pending_install)
    @rule()
    def install_view(self):
        self.c.install(min(self.c.pending_install))

    @invariant()
    def properties_hold(self):
        props = self.c.props
        if self.reset:
            assert props.first is None, props.first

    @invariant()
    def deliveries_are_each_senders_seqnos_in_order(self):
        for m, ds in self.c.deliveries.items():
            by = {}
            for s, k in ds:
                by.setdefault(s, []).append(k)
            for s, ks in by.items():
                assert ks == list(range(ks[0], ks[0] + len(ks))), (m, s, ks)

    def teardown(self):
        purged = sum(1 for m in self.c.stacks if any(self.c.st(m).purged.values()))
        names = {e for e in ("Retransmit", "ReceiveStability", "InstallView") if self.c.actions_seen.get(e)}
        event(f"members that purged: {purged}; joined: {self.c.joined(3)}")
        event(f"actions: {sorted(names)}")


TestStableLockstep = StableLockstep.TestCase
# max_examples comes from the Hypothesis profile (tests/conftest.py)
TestStableLockstep.settings = settings(stateful_step_count=40, deadline=None,
                                       suppress_health_check=[HealthCheck.too_slow])


class FlawedLockstep(StableLockstep):
    reset = False

    @invariant()
    def properties_hold(self):
        assert self.c.props.found.get("SafeGC") is None, self.c.props.found["SafeGC"]


@pytest.mark.slow
def test_flawed_build_lockstep_finds_a_safe_gc_violation():
    with pytest.raises(AssertionError, match="SafeGC"):
        run_state_machine_as_test(FlawedLockstep, settings=settings(
            max_examples=400, stateful_step_count=40, deadline=None, database=None,
            phases=[Phase.generate], suppress_health_check=list(HealthCheck)))
