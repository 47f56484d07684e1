"""Per-transition edges of the layers that no other unit test reaches
(found by the mutation benchmark, bench/mutants.py: each test kills a
mutant that every other layer let through)."""

import pytest

from groupcheck.impl import codec
from groupcheck.core.trace import format as trace_format
from groupcheck.impl.codec import Data, Forward, Nak, XData
from groupcheck.impl.events import (AppSend, Multicast, Receive, Send, SetTimer, TimerFired, Trace, View,
                                    ViewChange)
from groupcheck.impl.flush import Flush, Membership, RingView
from groupcheck.impl.reliable import Reliable
from groupcheck.impl.sequencer import SELF_TIMER, Sequencer
from groupcheck.impl.stable import Stable, StableMsg
from groupcheck.impl.stacks.stable import stable_stack


def test_the_self_channel_takes_one_message_a_firing_and_rearms_until_empty():
    # 2 becomes coordinator holding two of its own FORWARDs: they go round its
    # self channel (selfq), one per firing of the zero-delay timer
    s = Sequencer(2, (1, 2, 3), self_channel=True)
    s.handle(AppSend(b"a"), 0.0)
    s.handle(AppSend(b"b"), 0.0)
    effs = s.handle(ViewChange(View(2, (2, 3))), 1.0)
    assert SetTimer(SELF_TIMER, 1.0) in effs and len(s.selfq) == 2
    first = s.handle(TimerFired(SELF_TIMER), 2.0)
    assert [e for e in first if isinstance(e, Multicast)] == [Multicast(Data(2, 1, b"a"))]
    assert SetTimer(SELF_TIMER, 2.0) in first          # one left: the timer goes again
    second = s.handle(TimerFired(SELF_TIMER), 3.0)
    assert [e for e in second if isinstance(e, Multicast)] == [Multicast(Data(2, 2, b"b"))]
    assert not any(isinstance(e, SetTimer) for e in second) and s.selfq == []
    assert s.handle(TimerFired(SELF_TIMER), 4.0) == [] and s.fwd == {1: b"a", 2: b"b"}


def test_a_view_change_absorbs_the_old_views_data_waiting_in_the_self_channel():
    # 2, coordinator of view 2, has re-sent FORWARD 2.1 to itself and
    # multicast DATA 2.1 from it; its own DATA 2.1 and 3.1 came back (FLUSH
    # delivered them in view 2) and wait behind FORWARD 2.2 when view 3 comes:
    # the view change delivers both DATA, in selfq's order, before its record
    # (the spec's InstallView absorbs the digest), and keeps the FORWARD
    s = Sequencer(2, (1, 2, 3), self_channel=True, tracing="delta")
    s.handle(AppSend(b"a"), 0.0)
    s.handle(AppSend(b"b"), 0.0)
    s.handle(ViewChange(View(2, (2, 3))), 1.0)
    s.handle(TimerFired(SELF_TIMER), 2.0)                       # FORWARD 2.1 -> DATA 2.1
    s.handle(Receive(2, Data(2, 1, b"a")), 2.0)
    s.handle(Receive(2, Data(3, 1, b"c")), 2.0)
    assert s.selfq == [Forward(2, 2, b"b"), Data(2, 1, b"a"), Data(3, 1, b"c")]
    effs = s.handle(ViewChange(View(3, (2,))), 3.0)
    delivered = [(e.sender, e.seqno) for e in effs if type(e).__name__ == "Deliver"]
    (rec,) = [e.event for e in effs if isinstance(e, Trace)]
    assert delivered == [(2, 1), (3, 1)] and rec.name == "InstallView"
    assert rec.state["delivered"] == [[2, 1], [3, 1]] and rec.state["recv"] == {"2": 1}
    assert [type(e).__name__ for e in effs].index("Trace") > 1          # after the deliveries
    assert s.selfq == [Forward(2, 2, b"b")] and s.fwd == {2: b"b"}


def test_a_new_coordinator_with_a_node_id_above_256_resends_to_its_self_channel():
    # ids go to 65535 on the wire; an id decoded from a VIEW or read from the
    # runner's command is a new int object, equal to the layer's nid, not the same
    me = int("300")
    s = Sequencer(me, (int("299"), me, int("301")), self_channel=True)
    s.handle(AppSend(b"a"), 0.0)
    effs = s.handle(ViewChange(View(2, (int("300"), int("301")))), 1.0)
    assert not [e for e in effs if isinstance(e, Send)]
    assert s.selfq == [Forward(me, 1, b"a")] and SetTimer(SELF_TIMER, 1.0) in effs


def test_delta_records_are_the_trace_formats_deltas_of_the_full_states():
    # tracing="delta" must log what trace_format.state_delta (format 2's definition)
    # makes of successive full states: a step that delivers nothing logs no `delivered`
    full, delta = Sequencer(2, (1, 2, 3)), Sequencer(2, (1, 2, 3), tracing="delta")
    steps = [AppSend(b"a"), Receive(1, Data(1, 1, b"x")), Receive(1, Data(1, 1, b"x")),
             Receive(1, Data(2, 1, b"a")), ViewChange(View(2, (2, 3))), AppSend(b"b")]
    prev, appends = None, trace_format.append_vars("sequencer")
    for ev in steps:
        (f,) = [e.event for e in full.handle(ev, 0.0) if isinstance(e, Trace)]
        (d,) = [e.event for e in delta.handle(ev, 0.0) if isinstance(e, Trace)]
        assert d.state == trace_format.state_delta(prev, f.state, appends), (ev, d.state)
        prev = f.state


def test_a_universe_larger_than_the_first_view_is_accepted_and_one_lacking_a_member_refused():
    s = Sequencer(4, (1, 2, 3), joiner=True, universe=(1, 2, 3, 4))
    assert s.vid == 0 and s.recv == {1: 0, 2: 0, 3: 0, 4: 0}
    assert Sequencer(1, (1, 2), universe=(1, 2, 3)).recv == {1: 0, 2: 0, 3: 0}
    with pytest.raises(ValueError, match="lacks"):
        Sequencer(1, (1, 2, 3), universe=(1, 2))


def test_nakack_serves_every_seqno_a_nak_asks_for_up_to_the_last_sent():
    r = Reliable(1, (1, 2, 3), nakack=True)
    for body in (b"a", b"b", b"c"):
        r.handle(Multicast(body), 0.0)
    out = r.handle(Receive(2, Nak(2, 1, 9)), 0.0)      # asks past the last seqno sent: 1..3 served
    assert [(e.dest, e.msg) for e in out if isinstance(e, Send)] == \
        [(2, XData(1, 1, b"a")), (2, XData(1, 2, b"b")), (2, XData(1, 3, b"c"))]


def test_ring_mode_tells_the_layers_below_only_when_the_ring_changes_whom_to_reach():
    f = Flush(2, (1, 2, 3), membership="ring")
    assert not any(isinstance(e, Membership) for e in f.handle(RingView((1, 2, 3), (1, 2, 3), 1), 0.0))
    out = f.handle(RingView((2, 3), (1, 2, 3), 1), 0.0)          # 1 left the ring: gone
    assert Membership(View(1, (2, 3))) in out and f.suspected == {1}
    assert not any(isinstance(e, Membership) for e in f.handle(RingView((2, 3), (1, 2, 3), 1), 0.0))


def test_stable_gossip_older_than_the_last_from_its_sender_is_stale_too():
    rel = Reliable(1, (1, 2), nakack=True)
    st = Stable(1, (1, 2), rel)
    st.handle(Receive(2, StableMsg(2, 2, ((1, 0), (2, 3)))), 0.0)
    out = st.handle(Receive(2, StableMsg(2, 1, ((1, 0), (2, 4)))), 0.0)   # overtaken on the way: dropped
    assert out == [] and st.stats["stale_gossip"] == 1 and st.digest[2] == (0, 3)


def test_the_nak_timer_nakks_an_open_gap_again_through_the_stack():
    # the stack hands the layer its timer by name ("stable/nak" less the prefix)
    s = stable_stack(2, (1, 2))
    s.handle(Receive(1, codec.encode(XData(1, 1, b"a"))), 0.0)
    out = s.handle(Receive(1, codec.encode(XData(1, 3, b"c"))), 0.0)   # 2 is missing: NAKed, timer set
    (t,) = [e for e in out if isinstance(e, SetTimer) and e.name == "stable/nak"]
    again = s.handle(TimerFired(t.name), t.at)
    assert [codec.decode(e.msg) for e in again if isinstance(e, Send)] == [Nak(2, 2, 3)]


def test_held_sends_leave_in_the_order_the_application_made_them():
    """resent_first: sends made while the self-queue is not empty wait in
    `held` and go one per self-timer firing, oldest first."""
    s = Sequencer(2, (1, 2, 3), tracing=False, self_channel=True, resent_first=True)
    s.selfq.append(object())                  # something of its own still to take
    for p in (b"first", b"second", b"third"):
        s.handle(AppSend(p), 0.0)
    assert s.held == [b"first", b"second", b"third"]
    s.selfq.clear()
    sent = []
    for _ in range(3):
        out = s.handle(TimerFired(SELF_TIMER), 0.0)
        sent += [e.msg for e in out if isinstance(e, Send)]
    assert [(m.seqno, m.payload) for m in sent] == [(1, b"first"), (2, b"second"), (3, b"third")]
