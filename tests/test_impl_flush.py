"""The FLUSH layer (impl/flush.py) step by step, its stack and its simulator."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from groupcheck.impl import campaign
from groupcheck.core.trace import writer as tracefile
from groupcheck.core.trace import format as trace_format
from groupcheck.impl.events import (AppSend, Deliver, Multicast, Receive, Send, SetTimer, TimerFired, Trace,
                                    Up, View, ViewChange)
from groupcheck.impl.flush import (AppBlock, AppUnblock, BlockOk, FData, Flush, FlushCompleted, FlushOk,
                                   Installed, Membership, StartFlush, StopFlush, Suspect, ViewMsg)
from groupcheck.impl.stacks.flush import flush_stack
from groupcheck.impl.stacks.sequencerflush import sequencer_flush_stack
from groupcheck.impl.sim import FaultPlan
from groupcheck.impl.sim_flush import simulate_flush
from groupcheck.model import sequencer as seqmodel


def traces(out):
    return [e.event.name for e in out if isinstance(e, Trace)]


def sends(out):
    return [(e.dest, e.msg) for e in out if isinstance(e, Send)]


def layer(nid=2, members=(1, 2, 3), **kw) -> Flush:
    return Flush(nid, members, **kw)


# ---------------------------------------------------------------- application side and the latch

def test_multicast_goes_to_the_others_and_is_delivered_at_once():
    f = layer(2)
    out = f.handle(AppSend(b"x"), 0.0)
    assert traces(out) == ["Multicast"]
    assert sends(out) == [(1, FData(1, 2, 1, b"x")), (3, FData(1, 2, 1, b"x"))]
    assert Deliver(2, 1, b"x") in out and f.delivered == [(2, 1)]


def test_a_multicast_from_a_layer_above_is_passed_up_not_delivered():
    f = layer(2, top=False)
    out = f.handle(Multicast(b"y"), 0.0)
    assert Up(2, b"y") in out and not any(isinstance(e, Deliver) for e in out)
    assert f.handle(AppSend(b"z"), 0.0) == [] and f.stats["appsend_not_top"] == 1


def test_unicasts_pass_the_latch_unwrapped():
    f = layer(2)
    f.blocked = True
    assert f.handle(Send(1, b"u"), 0.0) == [Send(1, b"u")]
    assert f.handle(Receive(1, b"u"), 0.0) == [Up(1, b"u")]


def test_block_then_multicast_inside_block_is_allowed():
    f = layer(2)
    out = f.handle(Receive(1, StartFlush(1)), 5.0)
    assert traces(out) == ["Block"] and AppBlock() in out and SetTimer("block_ok", 5.002) in out
    assert (f.phase, f.flush_init, f.blocked) == ("InBlock", 1, False)
    assert traces(f.handle(AppSend(b"in block"), 5.001)) == ["Multicast"]
    # another layer's timer (names sort either side of "block_ok") is not the block's end
    for other in ("ack", "retransmit"):
        assert f.handle(TimerFired(other), 5.001) == [] and f.phase == "InBlock"
    out = f.handle(TimerFired("block_ok"), 5.002)
    assert traces(out) == ["FlushOk"] and sends(out) == [(1, FlushOk(1)), (3, FlushOk(1))]


def test_block_can_wait_for_the_application():
    f = layer(2, block_time=None)
    out = f.handle(Receive(1, StartFlush(1)), 0.0)
    assert not any(isinstance(e, SetTimer) for e in out)
    assert traces(f.handle(BlockOk(), 0.0)) == ["FlushOk"]
    assert traces(f.handle(BlockOk(), 0.0)) == [] and f.stats["stale_block_ok"] == 1


def _to_completed(f: Flush) -> list:
    """1 started a flush of view 1 at f (member 2 of 1, 2, 3); all FLUSH_OKs in."""
    f.handle(Receive(1, StartFlush(1)), 0.0)
    f.handle(BlockOk(), 0.0)
    f.handle(Receive(1, FlushOk(1)), 0.0)
    return f.handle(Receive(3, FlushOk(1)), 0.0)


def test_flush_completed_closes_the_latch_and_reports_the_digest():
    f = layer(2, block_time=None)
    f.handle(AppSend(b"a"), 0.0)
    out = _to_completed(f)
    assert traces(out) == ["ReceiveFlushOk", "FlushCompleted"]
    assert (f.phase, f.blocked) == ("Completed", True)
    assert sends(out) == [(1, FlushCompleted(1, ((2, 1, None),)))]      # keys only: the initiator fetches
    # the latch: a multicast now waits
    assert f.handle(AppSend(b"later"), 0.0) == [] and f.latched == [b"later"]


def test_data_after_flush_completed_is_discarded_and_the_view_brings_it():
    f = layer(2, block_time=None)
    _to_completed(f)
    out = f.handle(Receive(3, FData(1, 3, 1, b"late")), 0.0)
    assert traces(out) == ["Discard"] and f.delivered == []
    out = f.handle(Receive(1, ViewMsg(1, (1, 2, 3), ((3, 1, b"late"),))), 0.0)
    assert traces(out) == ["InstallView"] and f.vid == 2 and f.delivered == [(3, 1)]
    assert out.index(Deliver(3, 1, b"late")) < out.index(Installed(View(2, (1, 2, 3))))
    assert f.blocked and f.stats["reconciled"] == 1
    out = f.handle(Receive(1, StopFlush(2)), 0.0)
    assert traces(out) == ["Unblock", "Multicast"] or traces(out) == ["Unblock"]
    assert AppUnblock() in out and not f.blocked


def test_latched_multicasts_go_out_after_unblock_in_the_new_view():
    f = layer(2, block_time=None)
    _to_completed(f)
    f.handle(AppSend(b"w"), 0.0)
    f.handle(Receive(1, ViewMsg(1, (1, 2, 3), ())), 0.0)
    out = f.handle(Receive(1, StopFlush(2)), 0.0)
    assert traces(out) == ["Unblock", "Multicast"]
    assert (1, FData(2, 2, 1, b"w")) in sends(out) and f.latched == []


def test_a_message_of_a_later_view_waits_for_that_view():
    f = layer(2, block_time=None)
    assert f.handle(Receive(1, FData(2, 1, 5, b"new")), 0.0) == [] and f.inbox[1]
    _to_completed(f)               # START_FLUSH from 1 queues behind the DATA of view 2 (FIFO)
    assert f.phase == "Normal"
    f.inbox[1].clear()
    _to_completed(f)
    f.handle(Receive(3, FData(2, 3, 1, b"v2")), 0.0)       # waits: 2 is still in view 1
    out = f.handle(Receive(1, ViewMsg(1, (1, 2, 3), ())), 0.0)
    assert traces(out) == ["InstallView", "Deliver"] and f.delivered == [(3, 1)]


def test_messages_of_an_older_view_are_discarded():
    f = layer(2, block_time=None)
    _to_completed(f)
    f.handle(Receive(1, ViewMsg(1, (1, 2, 3), ())), 0.0)
    assert traces(f.handle(Receive(3, FData(1, 3, 9, b"old")), 0.0)) == ["Discard"]


# ---------------------------------------------------------------- crashes

def test_the_coordinator_starts_a_flush_when_a_member_is_suspected():
    f = layer(1, block_time=None)
    out = f.handle(Suspect(3), 0.0)
    assert Membership(View(1, (1, 2))) in out
    assert traces(out) == ["StartFlush"] and sends(out) == [(2, StartFlush(1))]
    assert AppBlock() in out and f.phase == "InBlock" and f.flush_init == 1
    g = layer(2, block_time=None)
    assert traces(g.handle(Suspect(3), 0.0)) == []       # not the coordinator


def test_flush_messages_from_a_suspect_are_discarded_its_data_is_not():
    f = layer(2, block_time=None)
    f.handle(Suspect(3), 0.0)
    assert traces(f.handle(Receive(3, FlushOk(1)), 0.0)) == ["Discard"]
    assert traces(f.handle(Receive(3, FData(1, 3, 1, b"d")), 0.0)) == ["Deliver"]


def test_the_next_member_takes_over_a_crashed_initiators_flush():
    f = layer(2, block_time=None)
    _to_completed(f)                                     # FLUSH_COMPLETED went to 1
    out = f.handle(Suspect(1), 0.0)                      # 2 is now the coordinator
    assert traces(out) == ["StartFlush"] and f.flush_init == 2 and f.phase == "Completed"
    assert f.completed == {(2, frozenset())}
    out = f.handle(Receive(3, FlushCompleted(1, ())), 0.0)
    assert traces(out) == ["ReceiveFlushCompleted", "SendView", "StopFlush"]
    assert sends(out) == [(3, ViewMsg(1, (2, 3), ())), (3, StopFlush(2))]
    assert (f.vid, f.members, f.blocked, f.flush_init) == (2, (2, 3), False, 0)


def test_a_view_carries_only_the_bodies_some_member_lacks():
    """Node 2 takes over node 1's flush (as above), node 3's digest lists
    (2, 1) and (3, 1): node 2 lacks (3, 1), so its body travels; (2, 1),
    which both hold, goes without.  Node 2 reconciles (3, 1) from node 3's
    FLUSH_COMPLETED; a member lacking a held entry (its own kept copy) takes
    its own body."""
    f = layer(2, block_time=None)
    f.handle(AppSend(b"mine"), 0.0)
    _to_completed(f)
    f.handle(Suspect(1), 0.0)
    out = f.handle(Receive(3, FlushCompleted(1, ((2, 1, b"mine"), (3, 1, b"theirs")))), 0.0)
    view = next(m for d, m in sends(out) if isinstance(m, ViewMsg))
    assert view.entries == ((2, 1, None), (3, 1, b"theirs"))
    assert f.delivered == [(2, 1), (3, 1)] and Deliver(3, 1, b"theirs") in out
    # the held entry at a member that kept, not delivered, its own copy
    g = layer(3, block_time=None)
    _to_completed(g)
    g.bodies[(3, 1)] = b"kept"
    out = g.handle(Receive(2, ViewMsg(1, (2, 3), ((3, 1, None),))), 0.0)
    assert Deliver(3, 1, b"kept") in out and g.delivered == [(3, 1)]


def test_the_initiator_fetches_the_bodies_it_needs_and_lacks_before_its_view():
    """Node 3's FLUSH_COMPLETED lists (3, 1), which node 2, now initiating,
    never got: it asks node 3 for that body (``FetchBodies``, untraced),
    sends no VIEW until the answer, then reconciles and sends the VIEW with
    it.  A member answers only for its current view."""
    from groupcheck.impl.flush import Bodies, FetchBodies
    f = layer(2, block_time=None)
    f.handle(AppSend(b"mine"), 0.0)
    _to_completed(f)
    f.handle(Suspect(1), 0.0)
    out = f.handle(Receive(3, FlushCompleted(1, ((2, 1, None), (3, 1, None)))), 0.0)
    assert traces(out) == ["ReceiveFlushCompleted"]
    assert sends(out) == [(3, FetchBodies(1, ((3, 1, None),)))] and f.vid == 1
    again = f.handle(Receive(3, FlushCompleted(1, ((2, 1, None), (3, 1, None)))), 0.0)
    assert not any(isinstance(m, FetchBodies) for _, m in sends(again))     # asked once
    out = f.handle(Receive(3, Bodies(1, ((3, 1, b"theirs"),))), 0.0)
    assert traces(out) == ["SendView", "StopFlush"] and f.vid == 2
    view = next(m for d, m in sends(out) if isinstance(m, ViewMsg))
    assert view.entries == ((2, 1, None), (3, 1, b"theirs")) and Deliver(3, 1, b"theirs") in out
    # the member's side: its bodies for the keys asked, in its view only
    g = layer(3, block_time=None)
    g.handle(AppSend(b"theirs"), 0.0)
    assert sends(g.handle(Receive(2, FetchBodies(1, ((3, 1, None), (1, 9, None)))), 0.0)) == [
        (2, Bodies(1, ((3, 1, b"theirs"),)))]
    assert sends(g.handle(Receive(2, FetchBodies(7, ((3, 1, None),))), 0.0)) == [] and g.stats["stale_fetch"] == 1


def test_the_initiator_asks_another_holder_when_the_one_it_asked_is_gone():
    """Four members; nodes 3 and 4 both list (1, 1), which the initiator 2
    lacks: it asks node 3 (the smallest holder); node 3 is suspected before
    answering, so it asks node 4."""
    from groupcheck.impl.flush import FetchBodies
    f = layer(2, members=(1, 2, 3, 4), block_time=None)
    f.handle(Receive(1, StartFlush(1)), 0.0)
    f.handle(BlockOk(), 0.0)
    for q in (1, 3, 4):
        f.handle(Receive(q, FlushOk(1)), 0.0)
    f.handle(Suspect(1), 0.0)                                  # 2 takes over the flush
    f.handle(Receive(3, FlushCompleted(1, ((1, 1, None),))), 0.0)
    out = f.handle(Receive(4, FlushCompleted(1, ((1, 1, None),))), 0.0)
    assert sends(out) == [(3, FetchBodies(1, ((1, 1, None),)))]
    out = f.handle(Suspect(3), 0.0)
    assert (4, FetchBodies(1, ((1, 1, None),))) in sends(out) and f.vid == 1


def test_a_member_in_a_flush_follows_the_new_initiator_and_resends_its_digest():
    f = layer(3, block_time=None)
    f.handle(Receive(1, StartFlush(1)), 0.0)
    f.handle(BlockOk(), 0.0)
    f.handle(Receive(1, FlushOk(1)), 0.0)
    f.handle(Receive(2, FlushOk(1)), 0.0)
    assert f.phase == "Completed"
    f.handle(Suspect(1), 0.0)
    out = f.handle(Receive(2, StartFlush(1)), 0.0)
    assert traces(out) == ["RestartFlush"] and sends(out) == [(2, FlushCompleted(1, ()))]
    assert f.flush_init == 2 and not any(isinstance(e, AppBlock) for e in out)   # no second block()


# ---------------------------------------------------------------- the stack

def test_the_stack_installs_the_flushs_view_in_every_layer():
    st = sequencer_flush_stack(1, (1, 2, 3), block_time=None)
    st.handle(Suspect(3), 0.0)
    assert st.layer("reliable").members == (1, 2)                 # Membership went below only
    assert st.layer("sequencer").vid == 1
    st.handle(BlockOk(), 0.0)
    f = st.layer("flush")
    f.flush_oks.add(2)
    f.completed.add((2, frozenset()))
    st.handle(BlockOk(), 0.0)                   # stale now, but every event settles the layer
    assert st.layer("flush").vid == 2 and st.layer("sequencer").vid == 2
    assert st.layer("sequencer").view == View(2, (1, 2))
    with pytest.raises(TypeError):
        st.handle(ViewChange(View(3, (1,))), 0.0)


# ---------------------------------------------------------------- the simulator

def test_same_seed_same_trace():
    msgs = campaign.sequencer_workload(3, 2)
    plan = FaultPlan(loss=0.2, duplicate=0.1, reorder_window=0.004, crashes=((1, 0.012),))
    a, _ = simulate_flush([1, 2, 3], msgs, 7, plan)
    b, _ = simulate_flush([1, 2, 3], msgs, 7, plan)
    assert trace_format.dumps(a) == trace_format.dumps(b)


def test_a_crash_the_spec_does_not_allow_is_skipped():
    # the last member of the latest view that stays never crashes
    _, s = simulate_flush([1, 2], [(0.0, 1, b"x")], 1, FaultPlan(crashes=((1, 0.01), (2, 0.02))))
    assert s["crashed"] == [1] and s["skipped_crashes"] == [2] and s["unfinished"] == []


def test_a_view_sent_by_a_crashing_initiator_still_reaches_everyone():
    # 1 crashes; 2 runs the flush and crashes right after its SendView, with
    # 30% loss, so its VIEW frames are not all through: the simulator hands
    # them to the survivors (spec I9), every flush ends, and the trace
    # conforms to model/flush.py.
    from groupcheck.conformance.replay import flush as cflush
    from groupcheck.core.trace.reader import from_records
    from groupcheck.impl.sim_flush import flush_constants
    msgs = campaign.sequencer_workload(4, 1)
    for seed in range(12):
        first, _ = simulate_flush([1, 2, 3, 4], msgs, seed, FaultPlan(loss=0.3, crashes=((1, 0.005),)))
        t = next(r["clock"] for r in first[1:] if r["name"] == "SendView")
        plan = FaultPlan(loss=0.3, crashes=((1, 0.005), (2, t + 0.0001)))
        recs, s = simulate_flush([1, 2, 3, 4], msgs, seed, plan)
        assert s["network"]["rescued"] > 0 and s["crashed"] == [1, 2]
        assert s["quiescent"] and s["unfinished"] == [] and s["vid"][3] == s["vid"][4] == 3
        v2 = tracefile.to_v2(recs, flush_constants([1, 2, 3, 4], msgs, plan.crashes), f"rescue{seed}",
                             quiescent=s["quiescent"])
        assert cflush.replay(from_records(v2, "rescue")).verdict == "ok"


def test_sequencer_over_flush_keeps_survivor_total_order_where_plain_sequencer_does_not():
    # The SEQUENCER finding (docs/sequencer.md), with the schedule of
    # tests/test_impl_sequencer.py: 3 members, 12 sends 2 ms apart, 30% loss,
    # reordering, the coordinator crashes at 12 ms.  Plain SEQUENCER breaks
    # TotalOrder among the survivors on some seeds; over FLUSH no seed does.
    from groupcheck.impl.sim_sequencer import simulate
    msgs = [(0.002 * i, 1 + i % 3, b"p%d" % i) for i in range(12)]
    plan = FaultPlan(loss=0.3, reorder_window=0.01, crashes=((1, 0.012),))
    plain = flushed = 0
    for seed in range(60):
        _, s = simulate([1, 2, 3], msgs, seed, plan)
        plain += not seqmodel.TotalOrder(SimpleNamespace(delivered={m: [tuple(x) for x in s["delivered"][m]]
                                                                    for m in (2, 3)}))
        _, t = simulate_flush([1, 2, 3], msgs, seed, plan, protocol="sequencerflush",
                              make_stack=sequencer_flush_stack)
        h = SimpleNamespace(delivered={m: [tuple(x) for x in t["delivered"][m]] for m in (2, 3)})
        flushed += not seqmodel.TotalOrder(h)
        assert seqmodel.NoDuplicates(h) and t["unfinished"] == []
    assert plain > 0 and flushed == 0


# ---------------------------------------------------------------- SEQUENCER-over-FLUSH coupling (spec/SequencerFlush)

def test_with_latch_multicasts_off_a_multicast_after_flush_completed_goes_out_undelivered():
    """pass_latch: the spec's McastData after FLUSH_COMPLETED; the sender's own
    copy is not delivered (the spec discards it) but stays in the view's
    messages, so the VIEW can bring it back."""
    f = layer(2, block_time=None, latch_multicasts=False)
    _to_completed(f)
    out = f.handle(AppSend(b"now"), 0.0)
    assert traces(out) == ["Multicast"] and f.latched == []
    assert sends(out) == [(1, FData(1, 2, 1, b"now")), (3, FData(1, 2, 1, b"now"))]
    assert not any(isinstance(e, Deliver) for e in out) and f.delivered == []
    assert (2, 1) in f._digest_now() and f.stats["multicast_after_completed"] == 1
    out = f.handle(Receive(1, ViewMsg(1, (1, 2, 3), ((2, 1, b"now"),))), 0.0)
    assert Deliver(2, 1, b"now") in out and f.delivered == [(2, 1)]


def test_the_stack_holds_application_sends_while_the_latch_is_closed():
    st = sequencer_flush_stack(2, (1, 2, 3), block_time=None)
    st.flush.blocked = True
    assert st.handle(AppSend(b"x"), 0.0) == [] and len(st.held) == 1
    assert st.layer("sequencer").sent == 0
    st.flush.blocked = False
    out = st.handle(BlockOk(), 0.0)          # any event: the held send goes up after it
    assert st.held == [] and st.layer("sequencer").sent == 1
    assert [e.event.name for e in out if isinstance(e, Trace)] == ["Send"]
    old = sequencer_flush_stack(2, (1, 2, 3), block_time=None, hold_sends=False)
    old.flush.blocked = True
    assert [e.event.name for e in old.handle(AppSend(b"x"), 0.0) if isinstance(e, Trace)] == ["Send"]


def test_the_sequencers_self_channel_keeps_forward_then_own_data_in_order():
    from groupcheck.impl.codec import Data, Forward
    from groupcheck.impl.sequencer import SELF_TIMER, Sequencer
    s = Sequencer(2, (1, 2, 3), self_channel=True)
    s.handle(AppSend(b"p"), 0.0)                       # FORWARD <<2,1>> to coordinator 1
    out = s.handle(ViewChange(View(2, (2, 3))), 1.0)   # 2 becomes coordinator: re-forward to itself
    assert sends(out) == [] and s.selfq == [Forward(2, 1, b"p")] and SetTimer(SELF_TIMER, 1.0) in out
    assert s.handle(Receive(3, Data(3, 1, b"q")), 1.0)[-1] == Deliver(3, 1, b"q")   # not from itself
    assert s.handle(Receive(2, Data(3, 2, b"own")), 1.0) == [] and len(s.selfq) == 2  # its own DATA waits
    out = s.handle(TimerFired(SELF_TIMER), 1.0)
    assert [e.event.name for e in out if isinstance(e, Trace)] == ["RecvForward"]
    assert Multicast(Data(2, 1, b"p")) in out and SetTimer(SELF_TIMER, 1.0) in out
    out = s.handle(TimerFired(SELF_TIMER), 1.0)
    assert Deliver(3, 2, b"own") in out and s.selfq == []
    plain = Sequencer(2, (1, 2, 3))
    plain.handle(AppSend(b"p"), 0.0)
    assert sends(plain.handle(ViewChange(View(2, (2, 3))), 1.0)) == [(2, Forward(2, 1, b"p"))]


def test_the_transitions_are_tables_keyed_by_type():
    """Every FLUSH message has the spec action that takes it at the head of
    its queue, every event in has its handler (impl/flush.py ``_TAKE``,
    ``_ON``), and an event of no kind here moves nothing but the queues."""
    from groupcheck.impl import flush as f
    assert set(f.Flush._TAKE) == set(f.FLUSH_MESSAGES)
    assert {f.Suspect, f.JoinRequest, f.LeaveRequest, f.RingView, f.BlockOk} <= set(f.Flush._ON)
    assert all(callable(h) for h in [*f.Flush._ON.values(), *f.Flush._TAKE.values()])
