"""Lock-step conformance of the Raincore layer.

A Hypothesis state machine drives a ring of 3 configured nodes plus one new
node (conformance/replay/raincore.py ``RaincoreLockstep``) one event at a time:
deliver a chosen message (a message to a node that is down comes back to
its sender as a delivery failure), fire an armed timer, crash, recover or
join a node, lose a token.  After every step each trace event must be an
enabled model action matching the logged post-state, and the whole
implementation (every node's state and the messages in flight) must equal a
candidate model state.  LegalStates (the seven (token, view) pairs of
Figure 11) is checked on the implementation after every step.

Timers fire in any order here, as the spec's untimed timeouts allow, so
AtMostOneToken is not asserted by the first machine; the second fires a
Hungry or Starving timer only when no token that lists the node exists and
never crashes node 1 (the spec's TimelyTimeouts and StableFounder
assumptions) and asserts AtMostOneToken after every step.
"""

import pytest
from hypothesis import event, settings, strategies as st
from hypothesis.stateful import invariant, precondition, rule
from lockstep_rules import INDEX, NODES, CrashRule, NetworkRules, token_rounds

from groupcheck.conformance.replay.lockstep import LockstepError
from groupcheck.conformance.replay.raincore import RaincoreLockstep
from groupcheck.impl import raincore as impl
from groupcheck.model.raincore import LEGAL_PAIRS

MAX_DOWN = 2


class RaincoreMachine(NetworkRules, CrashRule):
    def __init__(self):
        super().__init__()
        self.c = RaincoreLockstep(n=4, ring=3)
        self.kinds: set[str] = set()

    # Let the ring run: deliver oldest first and pass held tokens on, a few
    # dozen checked steps, so runs reach views committed after the faults.
    @rule(rounds=st.integers(min_value=1, max_value=40))
    def run_ring(self, rounds):
        token_rounds(self.c, rounds)

    def firing(self, k: int, name: str) -> None:
        self.kinds.add(name)

    def crash_enabled(self) -> bool:
        return sum(v.status == "Down" for v in self.c.nodes.values()) < MAX_DOWN

    def crashing(self, k: int) -> None:
        self.kinds.add("crash")

    @rule(k=NODES)
    def recover(self, k):
        if self.c.nodes[k].status == "Down":
            self.kinds.add("recover")
            self.c.recover(k)

    @rule()
    def join(self):
        if self.c.nodes[4].status == "Off":
            self.kinds.add("join")
            self.c.join(4)

    @precondition(lambda self: any(isinstance(self.c.msg(i), impl.TokenMsg) for i in range(len(self.c.inflight))))
    @rule()
    def lose_token(self):
        i = next(i for i in range(len(self.c.inflight)) if isinstance(self.c.msg(i), impl.TokenMsg))
        self.kinds.add("token loss")
        self.c.lose(i)

    @invariant()
    def legal_states(self):
        for k in self.c.up():
            v = self.c.nodes[k]
            assert (v.tokenState, v.viewState) in LEGAL_PAIRS, (k, v.tokenState, v.viewState)

    @invariant()
    def commits_announced(self):
        # every view announced upward is in the node's vector at that index
        for k, ups in self.c.commits.items():
            for vid, members in ups:
                gv = self.c.nodes[k].globalView
                assert vid <= len(gv) and (gv[vid - 1] == members or gv[vid - 1] != ()), (k, vid, members, gv)

    def teardown(self):
        for kind in sorted(self.kinds):
            event(f"fault/timer: {kind}")
        event(f"events: {'<20' if len(self.c.events) < 20 else '20-99' if len(self.c.events) < 100 else '100+'}")
        event(f"candidates peak: {self.c.peak}")


TestRaincoreLockstep = RaincoreMachine.TestCase
TestRaincoreLockstep.settings = settings(settings.default, max_examples=60, stateful_step_count=40,
                                         deadline=None)


class TimelyRaincoreMachine(RaincoreMachine):
    """The same schedules under the spec's two assumptions: a Hungry or
    Starving timer fires only when no token that lists the node exists
    (TimelyTimeouts, decided on the model's candidate state) and node 1
    never crashes (StableFounder).  Then at most one live node eats."""

    def _timely(self, k):
        return all(not self.c.model.TokenComing(s, k) for s in self.c.cands)

    @precondition(lambda self: self.c.armed())
    @rule(i=INDEX)
    def fire_timer(self, i):
        armed = [(k, t) for k, t in self.c.armed() if t == "eating" or self._timely(k)]
        if armed:
            k, name = armed[i % len(armed)]
            self.kinds.add(name)
            self.c.fire(k, name)

    def may_crash(self, k: int) -> bool:
        return k != 1 and super().may_crash(k)

    @invariant()
    def at_most_one_token(self):
        eating = [k for k in self.c.up() if self.c.nodes[k].tokenState == "Eating"]
        assert len(eating) <= 1, eating


TestTimelyRaincoreLockstep = TimelyRaincoreMachine.TestCase
TestTimelyRaincoreLockstep.settings = settings(settings.default, max_examples=60, stateful_step_count=40,
                                               deadline=None)


# ---------------------------------------------------------------- the harness can fail

class ForgetfulNode(impl.Raincore):
    """A mutant that never records a join request (its trace says it did)."""

    def _911_received(self, m, now):
        out = super()._911_received(m, now)
        self.newNodes.discard(m.orig)
        return out


class WrongSeqNode(impl.Raincore):
    """A mutant that does not count the hop when the token is resent after a
    delivery failure."""

    def _token_delivery_failure(self, m, now):
        return super()._token_delivery_failure(m.replace(seq=m.seq - 1), now)


def _ring_runs(c, hops):
    for _ in range(hops):
        if c.inflight:
            c.deliver(0)
        else:
            c.fire(*next(x for x in c.armed() if x[1] == "eating"))


def _swap(c, cls):
    for k, v in list(c.nodes.items()):
        new = cls(k, v.init_ring, init_seq=v.init_seq)
        new.__dict__.update(v.__dict__)
        c.nodes[k] = new


def test_hidden_state_mutant_is_caught_by_the_abstraction_check():
    c = RaincoreLockstep(n=4, ring=3)
    _swap(c, ForgetfulNode)
    c.join(4)
    with pytest.raises(LockstepError, match="(?s)no candidate model state.*newNodes"):
        c.deliver(next(i for i in range(len(c.inflight)) if isinstance(c.msg(i), impl.Msg911)))


def test_wrong_successor_mutant_is_caught_at_its_event():
    c = RaincoreLockstep(n=4, ring=3)
    _swap(c, WrongSeqNode)
    _ring_runs(c, 3)
    c.crash(3)
    with pytest.raises(LockstepError, match="(?s)TokenDeliveryFailure.*not enabled|TokenDeliveryFailure.*differs"):
        _ring_runs(c, 12)


def test_crash_recovery_join_and_loss_schedule_conforms_and_settles():
    c = RaincoreLockstep(n=4, ring=3)
    _ring_runs(c, 5)                   # 3 holds the token: 2's crash loses nothing
    assert c.nodes[3].tokenState == "Eating"
    c.crash(2)
    _ring_runs(c, 12)
    c.recover(2)
    c.join(4)
    for _ in range(60):
        if c.inflight:
            c.deliver(0)
        elif any(t == "eating" for _, t in c.armed()):
            c.fire(*next(x for x in c.armed() if x[1] == "eating"))
        else:
            break
    views = {c.nodes[k].lastGlobalView for k in c.up()}
    assert len(views) == 1 and set(next(iter(views))) == {1, 2, 3, 4}
    assert all(c.nodes[k].viewState == "Agreement" for k in c.up())
    # then the token is lost: timeouts regenerate it and the ring goes on
    i = next(i for i in range(len(c.inflight)) if isinstance(c.msg(i), impl.TokenMsg)) if c.inflight else None
    if i is None:
        c.fire(*next(x for x in c.armed() if x[1] == "eating"))
        i = next(i for i in range(len(c.inflight)) if isinstance(c.msg(i), impl.TokenMsg))
    c.lose(i)
    for k in c.up():
        c.fire(k, "hungry")
    _drain_911(c)
    assert sum(c.nodes[k].tokenState == "Eating" for k in c.up()) == 1


def _drain_911(c):
    for _ in range(200):
        if not c.inflight:
            return
        c.deliver(0)
