"""Lock-step conformance of the FLUSH implementation, alone and under SEQUENCER.

A Hypothesis state machine drives a 3-member FLUSH cluster one event at a
time (conformance/replay/flush.py ``FlushLockstep``): application multicasts
(also inside block() and after FLUSH_OK), delivery, loss and duplication of
any datagram in flight, timer firings (retransmission, block() returning)
up to two crashes, coordinator and flush initiator included, and a
graceful leave, and member 4's join.  After
every step each new trace event must be an enabled action of
model/flush.py (ReconcileDigests = TRUE) matching the logged post-state,
the whole implementation state must match a candidate model state, and the
model's invariants must hold in some candidate.  At the end the network is
settled, the timers run out, and every survivor must be out of the flush
(FlushEnds), VirtualSynchrony must hold on the run's events, and every
survivor must have delivered every message of the final view.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import event, settings, strategies as st
from hypothesis.stateful import invariant, rule
from lockstep_rules import NODES, CrashRule, LossRules, NetworkRules, SlowLinkRule, settle

from groupcheck.conformance.replay.flush import FlushBinding, FlushLockstep, project, virtual_synchrony
from groupcheck.conformance.replay.lockstep import LockstepError
from groupcheck.conformance.replay.engine import ReplayEngine
from groupcheck.core.trace.reader import Trace
from groupcheck.impl import flush as iflush
from groupcheck.impl.stacks.flush import FlushStack



class FlushMachine(NetworkRules, LossRules, SlowLinkRule, CrashRule):
    def __init__(self):
        super().__init__()
        self.c = FlushLockstep(n=3, max_msgs=3, max_crashes=2, max_leaves=1, joiners=1)

    @rule()
    def join(self):
        if self.c.can_join(4):
            event("join")
            self.c.join(4)

    @rule(m=NODES)
    def leave(self, m):
        if self.c.can_leave(m):
            event("leave")
            self.c.leave(m)

    @rule(m=NODES)
    def app_send(self, m):
        if self.c.can_send(m):
            self.c.app_send(m)

    def crashing(self, m: int) -> None:
        f = self.c.flush(m)
        event(f"crash in phase {f.phase}{' (initiator)' if f.flush_init == m else ''}")

    @invariant()
    def histories_match_logged_state(self):
        for m in self.c.members:
            f = self.c.flush(m)
            assert sorted(f.delivered) == sorted(tuple(x) for x in f.state()["delivered"])
            assert len(f.delivered) == len(set(f.delivered))        # no duplicate delivery

    def teardown(self):
        c = self.c
        settle(c)
        live = [m for m in c.live() if c.flush(m).is_member]
        assert all(c.flush(m).vid > 0 for m in c.join_requested if m not in c.crashed)   # every JOIN served
        for m in live:
            f = c.flush(m)
            assert (f.phase, f.blocked, f.flush_init, f.latched) == ("Normal", False, 0, []), (m, f.state())
        # VirtualSynchrony: survivors in the same view delivered the same messages
        vids = {c.flush(m).vid for m in live}
        assert len(vids) == 1, {m: c.flush(m).vid for m in live}
        # VirtualSynchrony on the run's events, and the final view's messages everywhere
        hdr = {"nodes": list(c.members), "constants": {"NInit": c.model.NInit}}
        assert virtual_synchrony(Trace("lockstep", hdr, c.events)) is None
        final = max(vids)
        sent_in = {(e["msg"]["sender"], e["msg"]["seqno"]) for e in c.events
                   if e["name"] == "Multicast" and e["msg"]["view"] == final}
        assert all(sent_in <= set(c.flush(m).delivered) for m in live)
        event(f"views installed: {max(vids)}")
        event(f"candidates peak: {'1' if c.peak == 1 else '2-8' if c.peak <= 8 else '9+'}")


TestFlushLockstep = FlushMachine.TestCase
TestFlushLockstep.settings = settings(settings.default, stateful_step_count=40, max_examples=150, deadline=None)


# ---------------------------------------------------------------- scenarios and the harness can fail

def test_initiator_crash_mid_flush_restarts_and_reconciles():
    c = FlushLockstep(n=3, max_msgs=3, max_crashes=2)
    c.app_send(3)
    c.crash(2)                                   # 1 starts a flush
    while c.inflight:
        c.deliver(0)
    c.app_send(1)                                # inside block(): still allowed
    # 1's multicast reaches nobody before 1 crashes mid-flush
    c.drop(next(k for k, (s, d, _) in enumerate(c.inflight) if s == 1))
    c.crash(1)                                   # 3 restarts the flush alone
    settle(c)
    f3 = c.flush(3)
    assert f3.vid >= 2 and 1 not in f3.members and (f3.phase, f3.blocked) == ("Normal", False)
    assert c.cands


def _deliver_from(c: FlushLockstep, src: int, dest: int) -> None:
    """Deliver the datagrams in flight from ``src`` to ``dest``, oldest first."""
    while True:
        i = next((k for k, (s, d, _) in enumerate(c.inflight) if (s, d) == (src, dest)), None)
        if i is None:
            return
        c.deliver(i)


def _block_returns(c: FlushLockstep, m: int) -> None:
    c.fire(m, next(t for t in c.timers[m] if t.endswith("block_ok")))


def open_question_schedule(c: FlushLockstep) -> None:
    """The seed's open question: 2 multicasts after its FLUSH_OK; 1 has every
    FLUSH_OK and closes its latch before that message arrives."""
    c.crash(3)                      # 1, the coordinator, starts a flush
    _deliver_from(c, 1, 2)          # Block(2, 1)
    _block_returns(c, 2)            # FlushOk(2)
    c.app_send(2)                   # Multicast(2) after FLUSH_OK
    _block_returns(c, 1)            # FlushOk(1)
    _deliver_from(c, 1, 2)          # 2 has every FLUSH_OK: FlushCompleted(2)
    _deliver_from(c, 2, 1)          # 1: FLUSH_OK, then the DATA (discarded), then FLUSH_COMPLETED (keys)
    _deliver_from(c, 1, 2)          # 1 lacks (2, 1)'s body: its FetchBodies to 2 (untraced)
    _deliver_from(c, 2, 1)          # 2's Bodies: 1 sends the VIEW


def test_multicast_after_flush_ok_is_reconciled_through_the_view():
    c = FlushLockstep(n=3, max_msgs=1, max_crashes=1)
    open_question_schedule(c)
    f1 = c.flush(1)
    assert f1.vid == 2 and f1.stats.get("reconciled") == 1 and f1.delivered == [(2, 1)]
    settle(c)
    assert c.flush(2).delivered == [(2, 1)] and c.flush(2).vid == 2
    assert not c.flush(1).blocked and not c.flush(2).blocked


class LyingFlush(iflush.Flush):
    """A mutant that does not close its latch at FLUSH_COMPLETED but logs
    that it did."""

    def _flush_completed(self, out):
        super()._flush_completed(out)
        self.blocked = False


class EagerFlush(iflush.Flush):
    """A mutant that delivers a DATA even after its FLUSH_COMPLETED (the
    seed as written), logging it as a Deliver."""

    def _take(self, q, m, now, out):
        if isinstance(m, iflush.FData) and m.view == self.vid and self.phase == "Completed":
            self._deliver_key((m.sender, m.seqno), m.body)
            self._trace(out, "Deliver", m, q=q)
            return True
        return super()._take(q, m, now, out)


def _with(cls, c: FlushLockstep) -> FlushLockstep:
    from groupcheck.impl.reliable import Reliable
    from groupcheck.impl.stack import Transport
    c.stacks = {m: FlushStack(m, [Transport(), Reliable(m, c.members), cls(m, c.members)])
                for m in c.members}
    return c


def test_hidden_state_mutant_is_caught_by_the_abstraction_check():
    c = _with(LyingFlush, FlushLockstep(n=3, max_msgs=1, max_crashes=1))
    c.crash(3)
    with pytest.raises(LockstepError, match="no candidate model state") as e:
        settle(c)
    # named by the index of the record after which it failed: the last one taken
    assert str(e.value).startswith(f"after event {len(c.events) - 1}: ") and len(c.events) > 1


def test_delivering_after_flush_completed_is_not_a_model_step():
    c = _with(EagerFlush, FlushLockstep(n=3, max_msgs=1, max_crashes=1))
    with pytest.raises(LockstepError, match="Deliver.*not enabled"):
        open_question_schedule(c)


def test_replayer_rejects_a_member_outside_the_model():
    from groupcheck.model.flush import FlushModel
    b = FlushBinding(Trace("<t>", {"protocol": "flush"}, []), FlushModel({
        "N": 2, "NInit": 2, "MaxMsgs": 1, "MaxCrashes": 0, "MaxLeaves": 0, "ReconcileDigests": True}))
    r = ReplayEngine(b)
    s0 = next(iter(r.cands))
    assert project(s0, 1, b.ids)["phase"] == "Normal"
    assert r.step({"i": 0, "name": "Multicast", "nid": 3, "params": {}, "msg": None, "state": None})[0] == "rejected"


def test_a_leaver_takes_part_in_the_flush_and_is_left_out_of_the_next_view():
    c = FlushLockstep(n=3, max_msgs=1, max_crashes=0, max_leaves=1)
    assert not c.can_leave(1)                    # the coordinator may not leave
    c.leave(3)
    assert c.events[0]["name"] == "Leave" and c.events[0]["nid"] == 3
    assert c.flush(1).flush_init == 1            # 1 started the flush at once
    settle(c)
    f1, f3 = c.flush(1), c.flush(3)
    assert f1.members == (1, 2) and c.flush(2).members == (1, 2) and not f1.blocked
    assert f3.vid == 2 and not f3.is_member      # installed the view that leaves it out, inert
    names = [e["name"] for e in c.events if e["nid"] == 3]
    assert names[:2] == ["Leave", "Block"] and "InstallView" in names and "Unblock" not in names


def test_a_joiner_is_taken_in_by_the_next_flush_and_starts_unblocked():
    c = FlushLockstep(n=2, max_msgs=2, max_crashes=0, joiners=1)
    c.app_send(2)
    c.join(3)
    assert [e["name"] for e in c.events][-2:] == ["Join", "StartFlush"]
    settle(c)
    f3 = c.flush(3)
    assert (f3.vid, f3.members, f3.blocked, f3.flush_init) == (2, (1, 2, 3), False, 0)
    assert f3.delivered == []                   # nothing of the view before its own
    c.app_send(3)
    settle(c)
    assert all((3, 1) in c.flush(m).delivered for m in (1, 2, 3))


# ---------------------------------------------------------------- SEQUENCER over FLUSH

class SequencerFlushMachine(NetworkRules, LossRules, SlowLinkRule, CrashRule):
    """The same driver over SEQUENCER-over-FLUSH stacks: the FLUSH events are
    checked step by step against model/flush.py; at the end the SEQUENCER
    histories must keep NoDuplicates, Integrity, SenderFIFO, TotalOrder among
    the survivors and VirtualSynchrony (conformance/replay/sequencerflush.py)."""

    def __init__(self):
        super().__init__()
        from groupcheck.impl.stacks.sequencerflush import sequencer_flush_stack
        self.c = FlushLockstep(n=3, max_msgs=10, max_crashes=2, make_stack=sequencer_flush_stack, max_app=4)

    @rule(m=st.sampled_from((1, 2, 3)))
    def app_send(self, m):
        if self.c.can_send(m):
            self.c.app_send(m)

    def may_crash(self, m: int) -> bool:
        return super().may_crash(m) and any(e["name"] == "Multicast" for e in self.c.events)

    def crashing(self, m: int) -> None:
        event(f"crash of {'the coordinator' if m == min(self.c.live()) else 'a member'}")

    def teardown(self):
        from groupcheck.conformance.replay import flush as cflush
        from groupcheck.model import sequencer as seqmodel
        from sequencerflush_helpers import sequencer_histories
        c = self.c
        settle(c)
        h = sequencer_histories(c.events, c.members)
        assert seqmodel.NoDuplicates(h) and seqmodel.Integrity(h) and seqmodel.SenderFIFO(h), h.delivered
        survivors = {m: d for m, d in h.delivered.items() if m not in c.crashed}
        assert seqmodel.TotalOrder(SimpleNamespace(delivered=survivors)), h.delivered
        views = {1: set(c.members)}
        for e in c.events:
            if e["name"] == "SendView":
                views[e["msg"]["view"] + 1] = set(e["msg"]["members"])
        assert cflush.vs_on_logs(views, h.vid, h.in_view) is None
        if not seqmodel.TotalOrder(h):
            event("uniform TotalOrder broken (a crashed coordinator's own deliveries)")


TestSequencerFlushLockstep = SequencerFlushMachine.TestCase
TestSequencerFlushLockstep.settings = settings(settings.default, stateful_step_count=40, max_examples=100,
                                               deadline=None)
