"""The SEQUENCER-over-FLUSH model: per-transition behaviour, pinned counts
against the manifest, and total order with the flush against plain
SEQUENCER (spec/Sequencer) on the same environments."""

import pytest

from groupcheck.model import manifest
from groupcheck.model.core import explore
from groupcheck.model.link import build_model
from groupcheck.model.sequencer import SequencerModel
from groupcheck.model.flush import FlushCompletedMsg, FlushOkMsg, StartFlushMsg, StopFlushMsg
from groupcheck.model.sequencerflush import Data, Forward, SequencerFlushModel, ViewMsg
from groupcheck.model.sequencer import GapFreeFIFO, SurvivorTotalOrder
from model_helpers import on


def model(**kw):
    c = {"N": 3, "MaxSeq": 1, "MaxCrashes": 1, "Senders": {1, 2, 3}, "UniformDelivery": False, "ResendAlways": False}
    c.update(kw)
    return SequencerFlushModel(c)


M = model()
init, step, enabled = on(M)


def two_forwards_sequenced():
    """2 and 3 forward one message each; coordinator 1 sequences <<2,1>> then <<3,1>>."""
    s = step(init(), "Send", 2)
    s = step(s, "Send", 3)
    s = step(s, "RecvForward", 1, 2)
    return step(s, "RecvForward", 1, 3)


def flush_survivors(s, c=2, p=3):
    """The flush of the two survivors c (initiator) and p after 1 crashed."""
    s = step(s, "StartFlush", c)
    s = step(s, "Block", p, c)
    s = step(s, "FlushOk", c)
    s = step(s, "FlushOk", p)
    s = step(s, "ReceiveFlushOk", c, p)
    s = step(s, "ReceiveFlushOk", p, c)
    s = step(s, "FlushCompleted", c)
    s = step(s, "FlushCompleted", p)
    return step(s, "ReceiveFlushCompleted", c, p)


# --- SEQUENCER transitions --------------------------------------------------------


def test_non_coordinator_forwards_and_keeps_the_message():
    s = step(init(), "Send", 2)
    assert s.sent[2] == 1 and s.fwd[2] == {1}
    assert s.chan[(2, 1)] == (Forward(2, 1),)
    assert s.log[2] == ()


def test_coordinator_multicasts_data_tagged_with_its_view_and_logs_it():
    s = step(init(), "Send", 1)
    assert all(s.chan[(1, r)] == (Data(1, 1, 1),) for r in (1, 2, 3))
    assert s.log[1] == ((1, 1),) and s.fwd[1] == frozenset()
    s = step(s, "RecvData", 1, 1)  # the loopback copy is delivered but not logged twice
    assert s.delivered[1] == ((1, 1),) and s.log[1] == ((1, 1),)
    s = step(s, "RecvData", 2, 1)
    assert s.delivered[2] == ((1, 1),) and s.log[2] == ((1, 1),) and s.recv[2][1] == 1


def test_sender_removes_its_message_from_the_forward_table_on_its_data():
    s = two_forwards_sequenced()
    s = step(s, "RecvData", 2, 1)
    assert s.fwd[2] == frozenset() and s.delivered[2] == ((2, 1),)
    assert s.log[1] == ((2, 1), (3, 1)) and s.log[2] == ((2, 1),)


def test_send_waits_while_the_latch_is_closed():
    s = step(init(), "Crash", 3, frozenset())
    s = step(s, "StartFlush", 1)
    s = step(s, "Block", 2, 1)
    assert enabled(s, "Send", 2)  # inside block() the application may still send
    for p in (1, 2):
        s = step(s, "FlushOk", p)
    s = step(s, "ReceiveFlushOk", 1, 2)
    s = step(s, "ReceiveFlushOk", 2, 1)
    s = step(s, "FlushCompleted", 2)
    assert s.blocked[2] and not enabled(s, "Send", 2)
    assert s.chan[(2, 1)] == (FlushCompletedMsg(1, ()),)


# --- FLUSH transitions ----------------------------------------------------------------


def test_start_flush_needs_a_crash_and_is_run_by_the_first_live_member():
    assert not enabled(init(), "StartFlush", 1)
    s = step(init(), "Crash", 1, frozenset())
    assert not enabled(s, "StartFlush", 3) and enabled(s, "StartFlush", 2)
    s = step(s, "StartFlush", 2)
    assert s.chan[(2, 3)] == (StartFlushMsg(1),) and s.phase[2] == "InBlock" and s.flushInit[2] == 2


def test_flush_ok_goes_to_the_live_view():
    s = step(init(), "Crash", 1, frozenset())
    s = step(s, "StartFlush", 2)
    s = step(s, "FlushOk", 2)
    assert s.chan[(2, 3)] == (StartFlushMsg(1), FlushOkMsg(1)) and s.chan[(2, 1)] == ()
    assert s.flushOks[2] == {2}


def test_crash_keeps_views_and_data_but_drops_the_crashed_members_flush_messages():
    s = step(init(), "Send", 1)
    s = step(s, "Crash", 2, frozenset())
    s = step(s, "StartFlush", 1)
    s = step(s, "RecvData", 3, 1)
    s = step(s, "Block", 3, 1)
    s = step(s, "FlushOk", 3)
    assert s.chan[(3, 1)] == (FlushOkMsg(1),)
    s2 = step(s, "Crash", 3, frozenset({1}), m=model(MaxCrashes=2))
    assert s2.chan[(3, 1)] == ()
    # the crashed coordinator's DATA survives unless the receiver is in lost
    t = step(init(), "Send", 1)
    assert step(t, "Crash", 1, frozenset({2})).chan[(1, 3)] == (Data(1, 1, 1),)
    assert step(t, "Crash", 1, frozenset({2})).chan[(1, 2)] == ()


def test_data_after_flush_completed_is_discarded_not_delivered():
    s = step(init(), "Send", 1)
    s = step(s, "Crash", 3, frozenset())
    s = step(s, "StartFlush", 1)
    s = step(s, "RecvData", 2, 1)  # FIFO: 1's DATA precedes its START_FLUSH at 2
    s = step(s, "Block", 2, 1)
    s = step(s, "FlushOk", 1)
    s = step(s, "FlushOk", 2)
    s = step(s, "ReceiveFlushOk", 1, 2)
    s = step(s, "ReceiveFlushOk", 2, 1)
    s = step(s, "FlushCompleted", 1)
    # 1's own loopback DATA is still queued: after its FLUSH_COMPLETED it is discarded
    assert not enabled(s, "RecvData", 1, 1) and enabled(s, "Discard", 1, 1)


def test_coordinator_crash_flush_reconciles_and_the_new_coordinator_resequences():
    s = two_forwards_sequenced()
    s = step(s, "RecvData", 2, 1)                   # 2 has <<2,1>>, 3 has nothing
    s = step(s, "Crash", 1, frozenset({3}))         # 3 loses both DATA
    assert s.chan[(1, 3)] == () and s.chan[(1, 2)] == (Data(3, 1, 1),)
    s = flush_survivors(s)
    assert s.completed[2] == {(2, ((2, 1),)), (3, ())}
    s = step(s, "SendView", 2)
    assert s.views == ((1, 2, 3), (2, 3)) and s.vid[2] == 2
    assert s.chan[(2, 3)] == (ViewMsg(1, ((2, 1),)),)
    assert s.chan[(1, 2)] == ()                      # the old view's DATA is dropped at the install
    assert s.closed[2] == (1,) and dict(s.recv[2]) == {2: 1, 3: 0}
    s = step(s, "InstallView", 3, 2)
    assert s.delivered[3] == ((2, 1),)               # reconciliation: the digest's DATA
    assert s.chan[(3, 2)] == (Forward(3, 1),)        # the forward-table goes to the new coordinator
    assert s.blocked[3] and s.blocked[2]
    s = step(s, "StopFlush", 2)
    assert not s.blocked[2] and s.chan[(2, 3)] == (StopFlushMsg(2),)
    s = step(s, "Unblock", 3, 2)
    s = step(s, "RecvForward", 2, 3)
    assert s.chan[(2, 3)] == (Data(3, 1, 2),)
    s = step(s, "RecvData", 2, 2)
    s = step(s, "RecvData", 3, 2)
    assert s.delivered[2] == s.delivered[3] == ((2, 1), (3, 1))
    assert s.fwd[3] == frozenset()
    assert all(pred(s) for pred in M.invariants.values())


def test_restart_flush_when_the_initiator_crashes():
    m = model(MaxCrashes=2)
    s = step(init(m), "Crash", 1, frozenset(), m=m)
    s = step(s, "StartFlush", 2, m=m)
    s = step(s, "Block", 3, 2, m=m)
    s = step(s, "Crash", 2, frozenset(), m=m)
    assert s.chan[(2, 3)] == ()
    s = step(s, "StartFlush", 3, m=m)
    assert s.flushInit[3] == 3 and s.phase[3] == "InBlock"
    s = step(s, "FlushOk", 3, m=m)
    s = step(s, "FlushCompleted", 3, m=m)
    s = step(s, "SendView", 3, m=m)
    assert s.views[-1] == (3,) and s.vid[3] == 2


def test_uniform_delivery_waits_until_every_live_member_has_logged_the_data():
    m = model(UniformDelivery=True)
    s = step(init(m), "Send", 1, m=m)
    assert s.log[1] == ((1, 1),) and not enabled(s, "DeliverStable", 1, m=m)
    s = step(s, "RecvData", 2, 1, m=m)
    assert s.delivered[2] == () and s.log[2] == ((1, 1),)
    assert not any(enabled(s, "DeliverStable", p, m=m) for p in (1, 2, 3))
    s = step(s, "RecvData", 3, 1, m=m)
    s = step(s, "DeliverStable", 1, m=m)
    assert s.delivered[1] == ((1, 1),) and s.ndel[1] == 1
    assert not enabled(s, "DeliverStable", 1, m=m) and enabled(s, "DeliverStable", 3, m=m)
    # a crash of a member that has not logged it makes it stable among the rest
    t = step(init(m), "Send", 1, m=m)
    t = step(t, "RecvData", 2, 1, m=m)
    t = step(t, "Crash", 3, frozenset(), m=m)
    assert enabled(t, "DeliverStable", 1, m=m) and enabled(t, "DeliverStable", 2, m=m)
    assert not enabled(init(), "DeliverStable", 1)  # the variant is off by default


def forward_sequenced_after_every_flush_completed(m):
    """LiveSender2's counterexample up to the view change: 3 crashes, 2 forwards
    after its FLUSH_OK, coordinator 1 sequences it once everyone completed."""
    s = step(init(m), "Crash", 3, frozenset(), m=m)
    s = step(s, "StartFlush", 1, m=m)
    s = step(s, "FlushOk", 1, m=m)
    s = step(s, "Block", 2, 1, m=m)
    s = step(s, "FlushOk", 2, m=m)
    s = step(s, "Send", 2, m=m)
    s = step(s, "ReceiveFlushOk", 2, 1, m=m)
    s = step(s, "FlushCompleted", 2, m=m)
    s = step(s, "ReceiveFlushOk", 1, 2, m=m)
    s = step(s, "FlushCompleted", 1, m=m)
    s = step(s, "RecvForward", 1, 2, m=m)
    s = step(s, "Discard", 1, 1, m=m)           # 1's own copy: after FLUSH_COMPLETED
    s = step(s, "ReceiveFlushCompleted", 1, 2, m=m)
    s = step(s, "SendView", 1, m=m)
    s = step(s, "Discard", 2, 1, m=m)           # so is 2's, ahead of the VIEW
    return step(s, "InstallView", 2, 1, m=m)


def test_a_forward_sequenced_after_the_flush_is_lost_unless_resent_at_every_view():
    m = model(Senders={2})
    s = forward_sequenced_after_every_flush_completed(m)
    assert s.fwd[2] == {1} and s.delivered[2] == () and s.chan[(2, 1)] == ()
    fixed = model(Senders={2}, ResendAlways=True)
    t = forward_sequenced_after_every_flush_completed(fixed)
    assert t.fwd[2] == {1} and t.chan[(2, 1)] == (Forward(2, 1),)


def _new_coordinator_resends_to_itself(m):
    """N = 2: member 2 forwards <<2, 1>>; coordinator 1 crashes with it; 2
    flushes alone, installs <<2>> (re-sending <<2, 1>> to itself) and opens
    its latch."""
    s = step(init(m), "Send", 2, m=m)
    s = step(s, "Crash", 1, frozenset(), m=m)
    for action in ("StartFlush", "FlushOk", "FlushCompleted", "SendView", "StopFlush"):
        s = step(s, action, 2, m=m)
    assert s.chan[(2, 2)] == (Forward(2, 1),) and not s.blocked[2]
    return s


def test_loss2_the_flush_does_not_stop_the_own_multicast_overtaking_the_resent_forward():
    m = model(N=2, MaxSeq=2, Senders={2})
    s = step(_new_coordinator_resends_to_itself(m), "Send", 2, m=m)
    assert s.chan[(2, 2)] == (Forward(2, 1), Data(2, 2, 2))
    s = step(s, "RecvForward", 2, 2, m=m)
    s = step(s, "RecvData", 2, 2, m=m)
    assert s.delivered[2] == ((2, 2),) and not GapFreeFIFO(s)
    s = step(s, "RecvData", 2, 2, m=m)                        # <<2, 1>>: a duplicate by now
    assert s.delivered[2] == ((2, 2),) and s.fwd[2] == frozenset()
    assert m.Quiescent(s) and not m.NothingMissing(s)


def test_resent_first_holds_the_send_until_the_resent_forward_is_sequenced():
    m = model(N=2, MaxSeq=2, Senders={2}, ResentFirst=True)
    s = _new_coordinator_resends_to_itself(m)
    assert not enabled(s, "Send", 2, m=m)
    s = step(s, "RecvForward", 2, 2, m=m)
    s = step(s, "Send", 2, m=m)
    assert s.chan[(2, 2)] == (Data(2, 1, 2), Data(2, 2, 2))
    s = step(step(s, "RecvData", 2, 2, m=m), "RecvData", 2, 2, m=m)
    assert s.delivered[2] == ((2, 1), (2, 2)) and GapFreeFIFO(s)
    assert m.Quiescent(s) and m.NothingMissing(s)


# --- whole models ------------------------------------------------------------------


def test_pair_count_matches_manifest():
    (entry,) = manifest.select(["sequencerflush"], "Pair")
    res = explore(build_model(entry), check_invariants=False)
    assert res.distinct_states == entry.distinct_states


def test_pair_total_order_plain_sequencer_breaks_with_flush_holds():
    consts = {"N": 2, "MaxSeq": 1, "MaxCrashes": 1}
    plain = explore(SequencerModel(consts), check_invariants=["TotalOrder"])
    assert plain.violation is not None and plain.violation.invariant == "TotalOrder"
    composed = explore(SequencerFlushModel({**consts, "Senders": {1, 2}, "UniformDelivery": False, "ResendAlways": False}),
                       check_invariants=True)
    assert composed.violation is None and composed.complete


def test_coordcrash_survivor_total_order_breaks_in_plain_sequencer():
    """Plain SEQUENCER, 3 members: two survivors deliver in different orders."""
    class Plain(SequencerModel):
        @property
        def invariants(self):
            return {**super().invariants, "SurvivorTotalOrder": SurvivorTotalOrder}

    res = explore(Plain({"N": 3, "MaxSeq": 1, "MaxCrashes": 1}), check_invariants=["SurvivorTotalOrder"])
    assert res.violation is not None
    last = res.violation.trace[-1][1]
    live = [m for m in (1, 2, 3) if m not in last.crashed]
    assert len({tuple(x for x in last.delivered[m] if all(x in last.delivered[k] for k in live)) for m in live}) > 1


@pytest.mark.slow
def test_coordcrash_with_flush_holds_every_checked_invariant():
    (entry,) = manifest.select(["sequencerflush"], "CoordCrash")
    m = build_model(entry)
    names = entry.parsed_cfg().invariants
    res = explore(m, check_invariants=names)
    assert res.violation is None and res.distinct_states == entry.distinct_states


@pytest.mark.slow
def test_coordcrash_uniform_total_order_breaks_at_tlcs_depth():
    (entry,) = manifest.select(["sequencerflush"], "CoordCrashUniform")
    res = explore(build_model(entry), check_invariants=entry.parsed_cfg().invariants)
    assert res.violation is not None and res.violation.invariant == "TotalOrder"
    assert res.violation.depth == entry.extra["violation_depth"]
    last = res.violation.trace[-1][1]
    # the survivors agree; the order that differs is the crashed coordinator's
    assert SurvivorTotalOrder(last)
    assert last.crashed and any(last.delivered[c] for c in last.crashed)


def test_double_crash_duplicate_of_plain_sequencer_is_gone_with_the_flush():
    """Sequencer's finding 2 (a member delivers <<2, 1>> twice after two
    crashes) on the targeted model where only member 2 sends."""
    class PlainSender2(SequencerModel):
        def Send(self, s, m):
            return super().Send(s, m) if m == 2 else None

    plain = explore(PlainSender2({"N": 3, "MaxSeq": 1, "MaxCrashes": 2}), check_invariants=["NoDuplicates"])
    assert plain.violation is not None and plain.violation.invariant == "NoDuplicates"
    (entry,) = manifest.select(["sequencerflush"], "DoubleCrashSender2")
    composed = explore(build_model(entry), check_invariants=entry.parsed_cfg().invariants)
    assert composed.violation is None and composed.distinct_states == entry.distinct_states


def test_uniform_total_order_breaks_without_the_fix_at_tlcs_depth():
    (entry,) = manifest.select(["sequencerflush"], "UniformSenders23")
    res = explore(build_model(entry), check_invariants=entry.parsed_cfg().invariants)
    assert res.violation is not None and res.violation.invariant == "TotalOrder"
    assert res.violation.depth == entry.extra["violation_depth"]
    assert SurvivorTotalOrder(res.violation.trace[-1][1])


@pytest.mark.slow
def test_uniform_total_order_holds_with_the_fix():
    (entry,) = manifest.select(["sequencerflush"], "UniformFixedSenders23")
    res = explore(build_model(entry), check_invariants=entry.parsed_cfg().invariants)
    assert res.violation is None and res.distinct_states == entry.distinct_states


@pytest.mark.parametrize("name", ["GapPair", "MissingSender2"])
def test_explorer_finds_gap_and_missing_at_tlcs_depth(name):
    from groupcheck.model.manifest import check
    (entry,) = manifest.select(["sequencerflush"], name)
    res = explore(build_model(entry), check_invariants=entry.parsed_cfg().invariants)
    assert res.violation is not None and res.violation.invariant == entry.expected
    tlc = check(entry).result
    assert tlc.outcome == "invariant" and tlc.violated == entry.expected
    assert res.violation.depth == tlc.depth


def test_logs_agree_is_carried_over_an_append_only_if_every_long_log_of_the_view_agrees():
    """LogsAgreeKept (the replay's shortcut for LogsAgree after a step): an
    append at index k is kept only when every other log of the view that
    reaches k holds the same entry there; a log too short to reach k says
    nothing, so one short agreeing log beside a long disagreeing one is no
    reason to keep it."""
    from types import SimpleNamespace

    from groupcheck.model.sequencerflush import LogsAgree, LogsAgreeKept
    vid = {1: 2, 2: 2, 3: 2}
    s = SimpleNamespace(vid=vid, log={1: (), 2: (), 3: ((2, 1),)})
    same = SimpleNamespace(vid=vid, log={**s.log, 1: ((2, 1),)})
    other = SimpleNamespace(vid=vid, log={**s.log, 1: ((3, 1),)})
    assert LogsAgree(s) and LogsAgree(same) and not LogsAgree(other)
    assert LogsAgreeKept(s, same)
    assert not LogsAgreeKept(s, other)
    elsewhere = SimpleNamespace(vid={**vid, 3: 1}, log=s.log)        # member 3's log is of another view
    assert LogsAgreeKept(elsewhere, SimpleNamespace(vid=elsewhere.vid, log=other.log))
