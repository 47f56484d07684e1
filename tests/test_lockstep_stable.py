"""Lock-step conformance of the STABLE implementation (issue 4 item 5).

A Hypothesis state machine drives a cluster of STABLE stacks (impl/stable.py:
transport, reliable in NAKACK mode, stable) one event at a time: multicasts,
delivery, loss (lost digests included) and duplication of a chosen datagram,
timer firings (gossip, staggered stability, NAK), the join of member 3
through the membership oracle, and the later installation of its view at
member 2.  The driver is the network, the clock and the oracle.  After
every step each new trace event must be a step of model/stable.py from some
candidate state (conformance/stable.py's Replayer), the whole implementation
(every member's spec variables) must equal the projection of one candidate,
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
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from groupcheck.conformance.lockstep import LockstepError
from groupcheck.conformance.stable import Replayer, project
from groupcheck.impl import codec, stable
from groupcheck.impl.events import (AppSend, CancelTimer, Deliver, Receive, Send, SetTimer, TimerFired, Trace,
                                    ViewChange)
from groupcheck.impl.stable import StabilityMsg, StableMsg

N, NINIT, MAX_SEQ = 3, 2, 2
MEMBERS = st.sampled_from((1, 2, 3))
INDEX = st.integers(min_value=0, max_value=63)


class StableCluster:
    def __init__(self, heard_from_reset: bool = True) -> None:
        self.reset = heard_from_reset
        first = tuple(range(1, NINIT + 1))
        self.stacks = {m: self.make(m, first) for m in first}
        self.replayer = Replayer({"N": N, "NInit": NINIT, "MaxSeq": MAX_SEQ,
                                  "ResetOnDifferentMembers": heard_from_reset}, list(range(1, N + 1)))
        self.replayer.actions_seen = {}
        self.inflight: list[tuple[int, int, bytes]] = []
        self.timers: dict[tuple[int, str], int] = {}     # armed timer -> when armed (a step count)
        self.clock = 0
        self.deliveries = {m: [] for m in range(1, N + 1)}
        self.events = 0
        self.vid = 1
        self.pending_install: set[int] = set()
        self._joining = False

    def make(self, nid, members, **kw):
        return stable.stable_stack(nid, members, heard_from_reset=self.reset, **kw)

    def st(self, m):
        return self.stacks[m].layer("stable")

    def joined(self, m) -> bool:
        return m in self.stacks and bool(self.st(m).view)

    # ------------------------------------------------------------ steps

    def app_send(self, m):
        if self.joined(m) and self.st(m).sent < MAX_SEQ:
            self.handle(m, AppSend(b"m%d.%d" % (m, self.st(m).sent + 1)))

    def deliver(self, i):
        src, dest, data = self.inflight.pop(i)
        self.handle(dest, Receive(src, data))

    def fire(self, m, name):
        self.timers.pop((m, name), None)
        self.handle(m, TimerFired(name))

    def join(self):
        self.vid += 1
        self._joining = True            # the coordinator's half of Join is traced by the joiner
        try:
            view = stable.admit(self.stacks, 3, self.vid, self.handle, self.make)
        finally:
            self._joining = False
        self.pending_install = {m for m in view.members if self.st(m).view != frozenset(view.members)}
        self._view = view
        self.check_abstraction()

    def install(self, m):
        self.pending_install.discard(m)
        self.handle(m, ViewChange(self._view))

    # ------------------------------------------------------------ plumbing

    def handle(self, m, ev):
        for eff in self.stacks[m].handle(ev, 0.0):
            if isinstance(eff, Send):
                self.transmit(m, eff.dest, eff.msg)
            elif isinstance(eff, SetTimer):
                self.clock += 1
                self.timers[(m, eff.name)] = self.clock
            elif isinstance(eff, CancelTimer):
                self.timers.pop((m, eff.name), None)
            elif isinstance(eff, Deliver):
                self.deliveries[m].append((eff.sender, eff.seqno))
            elif isinstance(eff, Trace):
                r = eff.event.to_record()
                ev_ = {"i": self.events, "name": r["name"], "nid": r["nid"], "params": dict(r["args"]),
                       "msg": r["msg"], "state": r["state"]}
                self.events += 1
                self.replayer.actions_seen[r["name"]] = self.replayer.actions_seen.get(r["name"], 0) + 1
                bad = self.replayer.out_of_range(ev_) or self.replayer.step(ev_)
                if bad:
                    raise LockstepError(bad)
            else:
                raise AssertionError(f"unexpected effect {eff!r}")
        if not self._joining:
            self.check_abstraction()

    def transmit(self, src, dest, data):
        msg = codec.decode(data)
        if isinstance(msg, (StableMsg, StabilityMsg)):     # the spec's network: newer replaces older
            kind = type(msg)
            self.inflight = [(s, d, x) for s, d, x in self.inflight
                             if not (s == src and d == dest and isinstance(codec.decode(x), kind))]
        self.inflight.append((src, dest, data))

    def check_abstraction(self):
        impl = {m: self.st(m).state() for m in self.stacks if self.st(m).view}
        for s in self.replayer.cands:
            if all(project(s, m) == impl[m] for m in impl) and \
                    all(not s.view[m] for m in range(1, N + 1) if m not in impl):
                return
        raise LockstepError(f"no candidate model state matches the implementation: {impl}")


class StableLockstep(RuleBasedStateMachine):
    reset = True

    def __init__(self):
        super().__init__()
        self.c = StableCluster(heard_from_reset=self.reset)

    @rule(m=MEMBERS)
    def app_send(self, m):
        self.c.app_send(m)

    # Multicasts are what STABLE is about: a second rule, every joined member
    # sending once, so that most runs have something to collect.
    @rule()
    def app_send_all(self):
        for m in (1, 2, 3):
            self.c.app_send(m)

    @precondition(lambda self: self.c.inflight)
    @rule(i=INDEX)
    def deliver(self, i):
        self.c.deliver(i % len(self.c.inflight))

    @precondition(lambda self: self.c.inflight)
    @rule()
    def deliver_oldest(self):
        self.c.deliver(0)

    @precondition(lambda self: self.c.inflight)
    @rule(i=INDEX)
    def drop(self, i):          # a lost data frame, NAK, STABLE vector or STABILITY digest
        self.c.inflight.pop(i % len(self.c.inflight))

    @precondition(lambda self: self.c.inflight)
    @rule(i=INDEX)
    def duplicate(self, i):
        self.c.inflight.append(self.c.inflight[i % len(self.c.inflight)])

    @precondition(lambda self: self.c.timers)
    @rule(i=INDEX)
    def fire_timer(self, i):
        armed = sorted(self.c.timers)
        self.c.fire(*armed[i % len(armed)])

    # Run the cluster towards quiescence: deliver everything in flight, else
    # fire the timer armed longest ago (as virtual time would), each one a
    # checked step, for a bounded number of steps.
    @precondition(lambda self: self.c.inflight or self.c.timers)
    @rule()
    def settle(self):
        for _ in range(300):
            if self.c.inflight:
                self.c.deliver(0)
            elif self.c.timers:
                self.c.fire(*min(self.c.timers, key=self.c.timers.get))
            else:
                break

    @precondition(lambda self: not self.c.joined(3) and stable.can_admit(self.c.stacks))
    @rule()
    def join(self):
        self.c.join()

    @precondition(lambda self: self.c.pending_install)
    @rule()
    def install_view(self):
        self.c.install(min(self.c.pending_install))

    @invariant()
    def properties_hold(self):
        props = self.c.replayer.props
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
        names = {e for e in ("Retransmit", "ReceiveStability", "InstallView") if self.c.replayer.actions_seen.get(e)}
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
        assert self.c.replayer.props.found.get("SafeGC") is None, self.c.replayer.props.found["SafeGC"]


@pytest.mark.slow
def test_flawed_build_lockstep_finds_a_safe_gc_violation():
    with pytest.raises(AssertionError, match="SafeGC"):
        run_state_machine_as_test(FlawedLockstep, settings=settings(
            max_examples=400, stateful_step_count=40, deadline=None, database=None,
            phases=[Phase.generate], suppress_health_check=list(HealthCheck)))
