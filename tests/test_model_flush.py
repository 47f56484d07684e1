"""The FLUSH model: per-transition behaviour, pinned counts against the
manifest, and the flawed variant's counterexample at TLC's depth."""

from itertools import permutations

import pytest

from groupcheck.model import manifest
from groupcheck.model.core import explore
from groupcheck.model.flush import (Data, FlushCompletedMsg, FlushModel, FlushOkMsg, StartFlushMsg,
                                    StopFlushMsg, ViewMsg)
from groupcheck.model.link import build_model
from groupcheck.model.values import record
from model_helpers import on


def model(**kw):
    c = {"N": 3, "NInit": 3, "MaxMsgs": 2, "MaxCrashes": 1, "MaxLeaves": 1, "ReconcileDigests": True}
    c.update(kw)
    return FlushModel(c)


M = model()
init, step, enabled = on(M)


def flush_to_completion(s, m=M, members=(1, 2, 3), coord=1):
    """StartFlush by coord, every member through Block, FlushOk, the FLUSH_OK
    exchange and FlushCompleted, and the initiator's records."""
    others = [p for p in members if p != coord]
    steps = ([("StartFlush", coord)] + [("Block", p, coord) for p in others] + [("FlushOk", p) for p in members]
             + [("ReceiveFlushOk", p, q) for p, q in permutations(members, 2)]
             + [("FlushCompleted", p) for p in members] + [("ReceiveFlushCompleted", coord, p) for p in others])
    for action, *params in steps:
        s = step(s, action, *params, m=m)
    return s


# --- application ----------------------------------------------------------------


def test_multicast_delivers_to_self_and_queues_to_the_live_view():
    s = step(init(), "Multicast", 2)
    assert s.sent == (record(sender=2, view=1),)
    assert s.delivered == (frozenset(), frozenset({1}), frozenset())
    assert s.chan[(2, 1)] == s.chan[(2, 3)] == (Data(1, 1),)
    assert s.chan[(2, 2)] == ()
    s = step(s, "Deliver", 3, 2)
    assert s.delivered[2] == {1} and s.chan[(2, 3)] == ()


def test_multicasts_are_bounded_by_MaxMsgs():
    m = model(MaxMsgs=1)
    s = step(init(m), "Multicast", 1, m=m)
    assert not any(enabled(s, "Multicast", p, m=m) for p in (1, 2, 3))


# --- phase 1 ----------------------------------------------------------------------


def test_no_flush_without_a_pending_view_change_and_only_the_coordinator_starts_it():
    s = init()
    assert not enabled(s, "StartFlush", 1)
    assert not enabled(s, "Leave", 1)  # the coordinator does not leave
    s = step(s, "Leave", 3)
    assert enabled(s, "StartFlush", 1)
    assert not enabled(s, "StartFlush", 2) and not enabled(s, "StartFlush", 3)
    s = step(s, "StartFlush", 1)
    assert s.phase == ("InBlock", "Normal", "Normal") and s.flushInit[0] == 1
    assert s.chan[(1, 2)] == s.chan[(1, 3)] == (StartFlushMsg(1),)
    assert not enabled(s, "StartFlush", 1)  # one flush at a time


def test_block_then_flush_ok_multicasts_flush_ok_and_counts_its_own():
    s = step(step(init(), "Leave", 3), "StartFlush", 1)
    s = step(s, "Block", 2, 1)
    assert s.phase[1] == "InBlock" and s.flushInit[1] == 1
    s = step(s, "FlushOk", 2)
    assert s.phase[1] == "OkSent" and s.flushOks[1] == {2}
    assert s.chan[(2, 1)] == s.chan[(2, 3)] == (FlushOkMsg(1),)


def test_a_member_may_multicast_after_flush_ok_until_it_has_all_flush_oks():
    # The seed's open question: sends are blocked only in phase 2.
    s = step(step(init(), "Leave", 3), "StartFlush", 1)
    s = step(step(s, "Block", 2, 1), "FlushOk", 2)
    assert enabled(s, "Multicast", 2)
    s = step(s, "Multicast", 2)
    # FIFO: the multicast is behind the FLUSH_OK on every channel
    assert s.chan[(2, 1)] == (FlushOkMsg(1), Data(1, 1))


# --- phase 2 and 3 --------------------------------------------------------------


def test_flush_completed_waits_for_every_live_flush_ok_then_blocks_and_reports_digest():
    s = step(init(), "Multicast", 2)
    s = step(s, "Leave", 3)
    s = step(s, "StartFlush", 1)
    s = step(s, "Block", 2, 1)
    s = step(s, "FlushOk", 2)
    assert not enabled(s, "FlushCompleted", 2)
    s = step(s, "FlushOk", 1)
    s = step(s, "ReceiveFlushOk", 2, 1)
    assert not enabled(s, "FlushCompleted", 2)  # 3's FLUSH_OK is missing
    s = step(s, "Block", 3, 1)
    s = step(s, "FlushOk", 3)
    s = step(s, "ReceiveFlushOk", 2, 3)
    s = step(s, "FlushCompleted", 2)
    assert s.phase[1] == "Completed" and s.blocked[1] and s.digest[1] == {1}
    assert s.chan[(2, 1)][-1] == FlushCompletedMsg(1, frozenset({1}))
    assert not enabled(s, "Multicast", 2)


def test_without_the_round_flush_completed_follows_block_and_no_flush_ok_is_sent():
    # FlushOkRound = FALSE (JGroups 2.12): once block() returns the member
    # closes its latch and reports at once; FlushOk is never enabled.
    m = model(FlushOkRound=False)
    s = step(init(m), "Multicast", 2, m=m)
    s = step(s, "Leave", 3, m=m)
    s = step(s, "StartFlush", 1, m=m)
    assert not enabled(s, "FlushOk", 1, m=m)
    assert not enabled(s, "FlushCompleted", 2, m=m)     # no START_FLUSH taken yet
    s = step(s, "Block", 2, 1, m=m)
    assert not enabled(s, "FlushOk", 2, m=m)
    assert enabled(s, "Multicast", 2, m=m)               # block() is still running
    s = step(s, "FlushCompleted", 2, m=m)
    assert s.phase[1] == "Completed" and s.blocked[1] and s.digest[1] == {1}
    assert s.chan[(2, 1)] == (Data(1, 1), FlushCompletedMsg(1, frozenset({1})))
    assert FlushOkMsg(1) not in {x for e in m.pairs for x in s.chan[e]}
    assert not enabled(s, "Multicast", 2, m=m)


def test_the_round_defaults_to_on():
    assert M.FlushOkRound is True and model(FlushOkRound=False).FlushOkRound is False


def test_crashed_members_are_not_waited_for_and_their_flush_messages_are_dropped():
    m = model(MaxLeaves=0)
    s = step(init(m), "Multicast", 3, m=m)  # 3 -> 1, 2 : DATA
    # crash 3 keeping its DATA to 1 only
    succ = [t for lab, t in m.next(s) if lab.action == "Crash" and lab.params == (3,)
            and t.chan[(3, 1)] == (Data(1, 1),) and t.chan[(3, 2)] == ()]
    assert len(succ) == 1
    s = succ[0]
    assert s.crashed == {3}
    s = step(s, "StartFlush", 1, m=m)
    assert s.chan[(1, 3)] == ()  # nothing is sent to a crashed member
    s = step(s, "Block", 2, 1, m=m)
    s = step(step(s, "FlushOk", 1, m=m), "FlushOk", 2, m=m)
    s = step(step(s, "ReceiveFlushOk", 1, 2, m=m), "ReceiveFlushOk", 2, 1, m=m)
    assert enabled(s, "FlushCompleted", 1, m=m) and enabled(s, "FlushCompleted", 2, m=m)


def test_a_flush_message_from_a_crashed_member_is_discarded():
    m = model(MaxLeaves=0)
    s = init(m)
    s = s._replace(chan=s.chan.set((3, 1), (FlushOkMsg(1),)), crashed=frozenset({3}))
    assert not enabled(s, "ReceiveFlushOk", 1, 3, m=m)
    s = step(s, "Discard", 1, 3, m=m)
    assert s.chan[(3, 1)] == () and s.flushOks[0] == frozenset()


# --- phase 4 ----------------------------------------------------------------------


def test_send_view_computes_M_minus_S_minus_L_plus_J_with_union_digest():
    m = model(N=4, NInit=3, MaxMsgs=1, MaxCrashes=0)
    s = step(init(m), "Multicast", 2, m=m)
    s = step(s, "Deliver", 1, 2, m=m)
    s = step(s, "Deliver", 3, 2, m=m)
    s = step(s, "Leave", 3, m=m)
    s = step(s, "Join", 4, m=m)
    s = flush_to_completion(s, m=m)
    assert s.completed[0] == {(p, frozenset({1})) for p in (1, 2, 3)}
    s = step(s, "SendView", 1, m=m)
    assert s.views == (frozenset({1, 2, 3}), frozenset({1, 2, 4}))
    assert s.joining == frozenset() and s.vid[0] == 2 and s.phase[0] == "Normal"
    for q in (2, 3, 4):
        assert s.chan[(1, q)][-1] == ViewMsg(1, frozenset({1}))
    # the leaver installs and has left; the joiner starts unblocked
    s = step(s, "InstallView", 3, 1, m=m)
    assert m.Departed(s, 3) and not m.IsMember(s, 3)
    s = step(s, "InstallView", 4, 1, m=m)
    assert s.vid[3] == 2 and not s.blocked[3] and s.flushInit[3] == 0
    assert s.delivered[3] == frozenset()  # a joiner takes no messages of the old view
    # STOP_FLUSH goes to the members that were in the flush and stay
    s = step(s, "StopFlush", 1, m=m)
    assert s.chan[(1, 2)][-1] == StopFlushMsg(2) and s.chan[(1, 4)] == ()
    assert not s.blocked[0] and s.flushInit[0] == 0
    s = step(step(s, "InstallView", 2, 1, m=m), "Unblock", 2, 1, m=m)
    assert not s.blocked[1] and s.phase[1] == "Normal" and s.flushInit[1] == 0


def test_view_waits_for_every_live_flush_completed():
    s = step(init(), "Leave", 3)
    s = flush_to_completion(s)
    t = s._replace(completed=(s.completed[0] - {r for r in s.completed[0] if r[0] == 3},) + s.completed[1:])
    assert enabled(s, "SendView", 1) and not enabled(t, "SendView", 1)


@pytest.mark.parametrize("reconcile", [True, False])
def test_reconciliation_delivers_the_union_digest_before_the_view(reconcile):
    m = model(MaxMsgs=1, ReconcileDigests=reconcile)
    s = init(m)
    # 2 delivered message 1 (sent by 3), 1 did not; both report, then the view
    s = s._replace(
        sent=(record(sender=3, view=1),),
        delivered=(frozenset(), frozenset({1}), frozenset({1})),
        leaving=frozenset({3}),
    )
    s = flush_to_completion(s, m=m)
    s = step(s, "SendView", 1, m=m)
    assert s.delivered[0] == (frozenset({1}) if reconcile else frozenset())
    s = step(s, "InstallView", 2, 1, m=m)
    assert s.delivered[1] == {1}


@pytest.mark.parametrize("reconcile", [True, False])
def test_after_flush_completed_old_view_data_is_reconciled_not_delivered(reconcile):
    m = model(ReconcileDigests=reconcile)
    s = init(m)._replace(phase=("Normal", "Completed", "Normal"), blocked=(False, True, False),
                         sent=(record(sender=3, view=1),))
    s = s._replace(chan=s.chan.set((3, 2), (Data(1, 1),)))
    assert enabled(s, "Deliver", 2, 3, m=m) is (not reconcile)
    assert enabled(s, "Discard", 2, 3, m=m) is reconcile


def test_stale_messages_of_an_older_view_are_discarded():
    s = init()._replace(vid=(2, 2, 2), views=(frozenset({1, 2, 3}), frozenset({1, 2, 3})),
                        sent=(record(sender=3, view=1),))
    s = s._replace(chan=s.chan.set((3, 2), (Data(1, 1),)))
    assert not enabled(s, "Deliver", 2, 3)
    s = step(s, "Discard", 2, 3)
    assert s.delivered[1] == frozenset()


def test_a_message_of_a_newer_view_waits_for_the_view():
    s = init()._replace(views=(frozenset({1, 2, 3}), frozenset({1, 2, 3})), vid=(2, 1, 2),
                        sent=(record(sender=3, view=2),))
    s = s._replace(chan=s.chan.set((3, 2), (Data(2, 1),)))
    assert not any(lab.params == (2, 3) for lab, _ in M.next(s))


# --- crash and restart -----------------------------------------------------------


def test_crash_keeps_a_prefix_of_each_outgoing_channel_up_to_its_last_view():
    s = init()
    s = s._replace(chan=s.chan.update({
        (1, 2): (Data(1, 1), ViewMsg(1, frozenset()), StopFlushMsg(2)),
        (1, 3): (Data(1, 1), Data(1, 2)),
        (2, 1): (FlushOkMsg(1),),
    }))
    succ = [t for lab, t in M.next(s) if lab.action == "Crash" and lab.params == (1,)]
    # to 2: keep 2 or 3 (the VIEW stays); to 3: keep 0, 1 or 2
    assert len(succ) == 2 * 3
    assert {t.chan[(1, 2)] for t in succ} == {s.chan[(1, 2)][:2], s.chan[(1, 2)]}
    assert {len(t.chan[(1, 3)]) for t in succ} == {0, 1, 2}
    assert all(t.chan[(2, 1)] == () and t.crashed == {1} for t in succ)


def test_crashes_are_bounded_and_a_staying_member_remains():
    m = model(MaxCrashes=2, MaxLeaves=0)
    s = step(init(m), "Crash", 1, m=m)
    s = step(s, "Crash", 2, m=m)
    assert s.crashed == {1, 2}
    m1 = model(MaxCrashes=1)
    s = step(init(m1), "Crash", 1, m=m1)
    assert not any(lab.action == "Crash" for lab, _ in m1.next(s))


def test_next_coordinator_restarts_a_crashed_initiators_flush():
    s = step(init(), "Leave", 3)
    s = step(s, "StartFlush", 1)
    s = step(s, "Block", 3, 1)
    s = step(step(s, "FlushOk", 3), "FlushOk", 1)
    s = step(s, "ReceiveFlushOk", 3, 1)
    # 1 crashes; its START_FLUSH to 2 is lost, 2 has not joined the flush
    succ = [t for lab, t in M.next(s) if lab.action == "Crash" and lab.params == (1,) and t.chan[(1, 2)] == ()]
    s = succ[0]
    assert M.IsCoord(s, 2)
    s = step(s, "StartFlush", 2)
    assert s.flushInit[1] == 2 and s.phase[1] == "InBlock"
    s = step(s, "RestartFlush", 3, 2)
    assert s.flushInit[2] == 2 and s.phase[2] == "OkSent"  # 3 keeps its progress
    # 3 does not wait for the crashed 1's FLUSH_OK, but for 2's
    assert not enabled(s, "FlushCompleted", 3)
    s = step(s, "FlushOk", 2)
    s = step(s, "ReceiveFlushOk", 3, 2)
    s = step(s, "FlushCompleted", 3)
    assert s.chan[(3, 2)][-1] == FlushCompletedMsg(1, frozenset())


def test_restart_resends_flush_completed_to_the_new_initiator():
    s = step(init(), "Leave", 3)
    s = flush_to_completion(s, members=(1, 2, 3))
    s = step(s, "Crash", 1)  # its channels are empty: one way to crash
    s = step(s, "StartFlush", 2)
    assert s.completed[1] == {(2, frozenset())}  # its own report, at once
    s = step(s, "RestartFlush", 3, 2)
    assert s.chan[(3, 2)][-1] == FlushCompletedMsg(1, frozenset())
    s = step(s, "ReceiveFlushCompleted", 2, 3)
    s = step(s, "SendView", 2)
    assert s.views[-1] == {2}


def test_join_once_and_only_for_non_members():
    m = model(N=4, NInit=3)
    s = init(m)
    assert not enabled(s, "Join", 3, m=m)
    s = step(s, "Join", 4, m=m)
    assert not enabled(s, "Join", 4, m=m)


# --- invariants -------------------------------------------------------------------


def test_virtual_synchrony_compares_members_that_moved_together():
    s = init()._replace(views=(frozenset({1, 2, 3}), frozenset({1, 2})), vid=(2, 2, 1),
                        sent=(record(sender=3, view=1),), delivered=(frozenset({1}), frozenset(), frozenset()))
    assert not M.VirtualSynchrony(s)
    assert M.VirtualSynchrony(s._replace(vid=(2, 1, 1)))  # 2 has not moved yet
    assert M.VirtualSynchrony(s._replace(delivered=(frozenset({1}), frozenset({1}), frozenset())))


def test_no_send_while_blocked_and_view_after_all_completed_detect_violations():
    s = init()._replace(sent=(record(sender=2, view=1),), delivered=(frozenset(), frozenset({1}), frozenset()),
                        blocked=(False, True, False), phase=("Normal", "Completed", "Normal"))
    assert not M.NoSendWhileBlocked(s)
    assert M.NoSendWhileBlocked(s._replace(digest=(frozenset(), frozenset({1}), frozenset())))
    t = init()._replace(views=(frozenset({1, 2, 3}), frozenset({1, 2, 3})), vid=(2, 1, 2))
    assert not M.ViewAfterAllCompleted(t)
    assert M.ViewAfterAllCompleted(t._replace(phase=("Normal", "Completed", "Normal")))


# --- against the manifest ---------------------------------------------------------

ENTRIES = {e.name: e for e in manifest.load("flush")}


def _count_cases():
    out = []
    for e in ENTRIES.values():
        if e.compare and e.expected == "ok":
            marks = (pytest.mark.slow,) if e.extra.get("slow") else ()
            out.append(pytest.param(e.name, id=e.name, marks=marks))
    return out


@pytest.mark.parametrize("name", _count_cases())
def test_explorer_count_equals_pinned_tlc_count(name):
    e = ENTRIES[name]
    r = explore(build_model(e), check_invariants=True)
    assert r.violation is None, (r.violation.invariant, [str(lab) for lab, _ in r.violation.trace])
    assert r.distinct_states == e.distinct_states


@pytest.mark.parametrize("name", [n for n, e in ENTRIES.items() if e.expected != "ok"])
def test_explorer_finds_the_flawed_variant_violation_at_tlcs_depth(name):
    e = ENTRIES[name]
    m = build_model(e)
    assert m.ReconcileDigests is False
    r = explore(m, check_invariants=True)
    assert r.violation is not None and r.violation.invariant == e.expected
    assert r.violation.depth == e.extra["violation_depth"]
    # the last state breaks it, the one before does not
    assert not m.VirtualSynchrony(r.violation.trace[-1][1])
    assert m.VirtualSynchrony(r.violation.trace[-2][1])


def test_fixed_variant_of_the_flawed_leave_model_holds():
    # the same constants as FlawedLeave with the fix switched on
    c = ENTRIES["FlawedLeave"].constants()
    c["ReconcileDigests"] = True
    r = explore(FlushModel(c), check_invariants=True)
    assert r.violation is None and r.distinct_states == ENTRIES["FixedLeave"].distinct_states


# TLC's counterexample for FlawedLeave (docs/flush.md), with the parameters
# read off the state changes.  Member 2 multicasts after its FLUSH_OK; member 3
# reports an empty digest before that message reaches it; the new view races it.
FLAWED_LEAVE_PATH = [
    ("Leave", 2), ("StartFlush", 1), ("Block", 2, 1), ("Block", 3, 1), ("FlushOk", 1),
    ("ReceiveFlushOk", 2, 1), ("ReceiveFlushOk", 3, 1), ("FlushOk", 2), ("Multicast", 2),
    ("ReceiveFlushOk", 1, 2), ("Deliver", 1, 2), ("ReceiveFlushOk", 3, 2), ("FlushOk", 3),
    ("ReceiveFlushOk", 1, 3), ("ReceiveFlushOk", 2, 3), ("FlushCompleted", 1), ("FlushCompleted", 2),
    ("ReceiveFlushCompleted", 1, 2), ("FlushCompleted", 3), ("ReceiveFlushCompleted", 1, 3),
    ("SendView", 1), ("InstallView", 3, 1),
]


def walk_to_violation(name: str, path, reconcile: bool):
    """The manifest model ``name`` (its ReconcileDigests set to ``reconcile``)
    along ``path``: VirtualSynchrony holds before the last step, and the path
    is as long as the manifest's violation depth.  The model and the last state."""
    c = ENTRIES[name].constants()
    c["ReconcileDigests"] = reconcile
    m = FlushModel(c)
    s = init(m)
    for i, (action, *params) in enumerate(path):
        s = step(s, action, *params, m=m)
        if i < len(path) - 1:
            assert m.VirtualSynchrony(s)
    assert len(path) + 1 == ENTRIES[name].extra["violation_depth"]
    return m, s


@pytest.mark.parametrize("reconcile", [False, True])
def test_flawed_leave_counterexample_and_its_fix(reconcile):
    m, s = walk_to_violation("FlawedLeave", FLAWED_LEAVE_PATH, reconcile)
    # 1 and 3 moved together from view 1 to view 2 = {1, 3}
    assert s.views[1] == {1, 3} and s.vid[0] == s.vid[2] == 2
    assert s.chan[(2, 3)] == (Data(1, 1),)  # the multicast is still on its way to 3
    if reconcile:
        assert s.delivered[2] == {1} and m.VirtualSynchrony(s)
        # the late copy is dropped as a message of an older view
        assert step(s, "Discard", 3, 2, m=m).delivered[2] == {1}
    else:
        assert s.delivered[0] == {1} and s.delivered[2] == frozenset()
        assert not m.VirtualSynchrony(s)


@pytest.mark.parametrize("cons", [dict(MaxMsgs=2, MaxCrashes=0, MaxLeaves=0, NInit=2),
                                  dict(MaxMsgs=1, NInit=2, MaxLeaves=0)])
def test_the_replays_no_send_kept_is_exact_on_every_edge(cons):
    """conformance/replay/flush.py ``_no_send_kept(s, t)`` lets the replay carry
    NoSendWhileBlocked over a step instead of walking ``sent``: on every edge
    of the model's reachable graph where it says so, the invariant's value is
    the same at both ends; and a multicast by a blocked member (which the
    model never takes) is never carried over."""
    from groupcheck.conformance.replay.flush import _no_send_kept
    m = model(**cons)
    seen, todo, kept, blocked_sends = set(), list(m.init()), 0, 0
    while todo:
        s = todo.pop()
        if s in seen:
            continue
        seen.add(s)
        for _, t in m.next(s):
            if _no_send_kept(s, t):
                kept += 1
                assert m.NoSendWhileBlocked(s) == m.NoSendWhileBlocked(t), (s, t)
            todo.append(t)
        for p in m.Members:
            if s.blocked[p - 1] and s.vid[p - 1]:
                blocked_sends += 1
                forged = s._replace(sent=s.sent + (record(sender=p, view=s.vid[p - 1]),))
                assert not _no_send_kept(s, forged)
                assert not m.NoSendWhileBlocked(forged)
    assert kept > 100 and blocked_sends > 10, (kept, blocked_sends)


# TLC's counterexample for NoOkFlawedLeave (docs/flush.md, Finding 3): no
# FLUSH_OK round, no reconciliation.  Member 2 multicasts before any flush;
# member 3 reports an empty digest while that message is still on its way.
NO_OK_FLAWED_LEAVE_PATH = [
    ("Multicast", 2), ("Deliver", 1, 2), ("Leave", 2), ("StartFlush", 1), ("Block", 2, 1), ("Block", 3, 1),
    ("FlushCompleted", 1), ("FlushCompleted", 2), ("ReceiveFlushCompleted", 1, 2), ("FlushCompleted", 3),
    ("ReceiveFlushCompleted", 1, 3), ("SendView", 1), ("InstallView", 3, 1),
]


@pytest.mark.parametrize("reconcile", [False, True])
def test_no_flush_ok_round_counterexample_and_its_fix(reconcile):
    assert ENTRIES["NoOkFlawedLeave"].constants()["FlushOkRound"] is False
    m, s = walk_to_violation("NoOkFlawedLeave", NO_OK_FLAWED_LEAVE_PATH, reconcile)
    assert s.views[1] == {1, 3} and s.vid[0] == s.vid[2] == 2
    assert s.chan[(2, 3)] == (Data(1, 1),)  # sent before the flush, still on its way to 3
    if reconcile:
        assert s.delivered[2] == {1} and m.VirtualSynchrony(s)
    else:
        assert s.delivered[0] == {1} and s.delivered[2] == frozenset()
        assert not m.VirtualSynchrony(s)
