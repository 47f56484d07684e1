"""Reliable FIFO layer: unit steps, and whole runs over a lossy, duplicating,
reordering simulated link (encoded through the real codec)."""

import pytest

from groupcheck.impl.codec import Ack, Nak, XData
from groupcheck.impl.events import Multicast, Receive, Send, SetTimer, TimerFired, Up, View, ViewChange
from groupcheck.impl.reliable import Reliable
from groupcheck.impl.sim import FaultPlan, Simulator
from groupcheck.impl.stack import Stack, Transport


def sends(effs):
    return [(e.dest, e.msg) for e in effs if isinstance(e, Send)]


def ups(effs):
    return [(e.src, e.msg) for e in effs if isinstance(e, Up)]


def test_send_numbers_per_destination_and_arms_timer():
    r = Reliable(1, (1, 2, 3))
    effs = r.handle(Send(2, b"a"), 0.0) + r.handle(Multicast(b"b"), 0.0)
    assert sends(effs) == [(2, XData(1, 1, b"a")), (1, XData(1, 1, b"b")),
                           (2, XData(1, 2, b"b")), (3, XData(1, 1, b"b"))]
    assert [e for e in effs if isinstance(e, SetTimer)] == [SetTimer("retransmit", 0.05)]
    assert r.retained == 4


def test_in_order_gap_nak_duplicate_and_ack():
    r = Reliable(2, (1, 2))
    e1 = r.handle(Receive(1, XData(1, 1, b"x1")), 0.0)
    assert ups(e1) == [(1, b"x1")] and (1, Ack(2, 1)) in sends(e1)
    e3 = r.handle(Receive(1, XData(1, 4, b"x4")), 0.0)
    assert ups(e3) == [] and (1, Nak(2, 2, 3)) in sends(e3)
    e2 = r.handle(Receive(1, XData(1, 3, b"x3")), 0.0)
    assert ups(e2) == [] and not any(isinstance(m, Nak) for _, m in sends(e2))  # gap 2..2 known
    e4 = r.handle(Receive(1, XData(1, 2, b"x2")), 0.0)
    assert ups(e4) == [(1, b"x2"), (1, b"x3"), (1, b"x4")] and (1, Ack(2, 4)) in sends(e4)
    dup = r.handle(Receive(1, XData(1, 3, b"x3")), 0.0)
    assert ups(dup) == [] and sends(dup) == [(1, Ack(2, 4))]
    assert r.stats["duplicates"] == 1


def test_nak_retransmits_and_ack_releases():
    r = Reliable(1, (1, 2))
    for i in range(3):
        r.handle(Send(2, b"%d" % i), 0.0)
    assert sends(r.handle(Receive(2, Nak(2, 2, 3)), 0.0)) == [(2, XData(1, 2, b"1")), (2, XData(1, 3, b"2"))]
    r.handle(Receive(2, Ack(2, 2)), 0.0)
    assert r.retained == 1
    r.handle(Receive(2, Nak(2, 1, 1)), 0.0)
    assert r.stats["nak_released"] == 1
    assert r.release(2, 3) == 1 and r.retained == 0


def test_timer_probes_lowest_and_highest_and_renaks():
    r = Reliable(1, (1, 2))
    for i in range(4):
        r.handle(Send(2, b"%d" % i), 0.0)
    r.handle(Receive(2, XData(2, 3, b"late")), 0.0)      # gap 1..2 from member 2
    effs = r.handle(TimerFired("retransmit"), 0.05)
    assert sends(effs) == [(2, XData(1, 1, b"0")), (2, XData(1, 4, b"3")), (2, Nak(1, 1, 2))]
    assert SetTimer("retransmit", pytest.approx(0.1)) in effs   # still pending: re-armed


def test_nothing_pending_means_no_timer():
    r = Reliable(1, (1, 2))
    r.handle(Send(2, b"a"), 0.0)
    r.handle(Receive(2, Ack(2, 1)), 0.0)
    assert not [e for e in r.handle(TimerFired("retransmit"), 0.05) if isinstance(e, (Send, SetTimer))]


def test_window_drop_is_counted():
    r = Reliable(1, (1, 2), window=4)
    assert r.handle(Receive(2, XData(2, 5, b"far")), 0.0) == []
    assert r.stats["window_drop"] == 1


def test_a_send_without_credit_waits_in_order_and_nothing_is_refused():
    """Flow control: at most ``window`` frames in flight per destination;
    the rest queue and go out, in order, as Acks free credit; ``blocked``
    asks the application to wait once the backlog reaches ``max_backlog``."""
    r = Reliable(1, (1, 2), window=2, max_backlog=3)
    assert sends(r.handle(Send(2, b"a"), 0.0)) == [(2, XData(1, 1, b"a"))]
    assert sends(r.handle(Send(2, b"b"), 0.0)) == [(2, XData(1, 2, b"b"))]
    assert not r.blocked
    assert sends(r.handle(Send(2, b"c"), 0.0)) == [] and r.stats["queued"] == 1 and r.blocked
    assert sends(r.handle(Send(2, b"d"), 0.0)) == [] and r.queued == 2
    # the timer retransmits only what is in flight, never a queued frame
    assert {x.seqno for _, x in sends(r.handle(TimerFired("retransmit"), 0.05))} == {1, 2}
    assert sends(r.handle(Receive(2, Ack(2, 1)), 0.1)) == [(2, XData(1, 3, b"c"))]
    assert sends(r.handle(Receive(2, Ack(2, 3)), 0.1)) == [(2, XData(1, 4, b"d"))]
    assert r.queued == 0 and not r.blocked and "buffer_full" not in r.stats


def test_bad_sender_is_dropped():
    r = Reliable(1, (1, 2, 3))
    assert r.handle(Receive(2, XData(3, 1, b"spoof")), 0.0) == []
    assert r.stats["bad_sender"] == 1


def test_left_member_streams_close_at_first_gap():
    r = Reliable(1, (1, 2, 3))
    r.handle(Send(2, b"to-2"), 0.0)
    r.handle(Receive(2, XData(2, 2, b"early")), 0.0)
    r.handle(ViewChange(View(2, (1, 3))), 0.0)
    assert r.stats["released_left"] == 1 and r.stats["left_dropped"] == 1
    # closed at its first gap: nothing more passes up, nothing is NAKed
    assert ups(r.handle(Receive(2, XData(2, 1, b"first")), 0.0)) == []
    assert not [e for e in r.handle(TimerFired("retransmit"), 0.05) if isinstance(e, (Send, SetTimer))]
    # a left member without a gap still passes up what arrives in order, up to its first gap
    assert ups(r.handle(Receive(3, XData(3, 1, b"a")), 0.0)) == [(3, b"a")]
    r.handle(ViewChange(View(3, (1,))), 0.0)
    assert ups(r.handle(Receive(3, XData(3, 2, b"b")), 0.0)) == [(3, b"b")]
    assert ups(r.handle(Receive(3, XData(3, 4, b"d")), 0.0)) == []
    assert ups(r.handle(Receive(3, XData(3, 3, b"c")), 0.0)) == []


def test_a_send_to_a_member_the_view_removed_is_dropped_not_retransmitted_forever():
    r = Reliable(2, (1, 2, 3))
    r.handle(ViewChange(View(2, (2, 3))), 0.0)          # 1 crashed
    out = r.handle(Send(1, b"late FORWARD"), 0.0)        # the layer above has not noticed yet
    assert out == [] and r.stats["to_departed"] == 1 and r.retained == 0
    # a member never in a view (a joiner) is still reachable
    assert [e for e in r.handle(Send(4, b"VIEW"), 0.0) if isinstance(e, Send)]
    r.handle(ViewChange(View(3, (1, 2, 3))), 0.0)        # 1 back in a later view: reachable again
    assert [e for e in r.handle(Send(1, b"hello"), 0.0) if isinstance(e, Send)]


def run_link(seed, faults, n=3, count=40, **opts):
    members = tuple(range(1, n + 1))
    stacks = {m: Stack(m, [Transport(), Reliable(m, members, **opts)]) for m in members}
    sim = Simulator(stacks, seed, faults, horizon=120.0)
    expected = {m: [] for m in members}
    for i in range(count):
        src = 1 + i % n
        if i % 4 == 0:
            sim.inject(0.002 * i, src, Multicast(b"%d:%d" % (src, i)))
            for d in members:
                expected[d].append((src, b"%d:%d" % (src, i)))
        else:
            dest = 1 + (src + i) % n
            sim.inject(0.002 * i, src, Send(dest, b"%d:%d" % (src, i)))
            expected[dest].append((src, b"%d:%d" % (src, i)))
    assert sim.run(), "did not quiesce"
    return sim, stacks, expected


@pytest.mark.parametrize("seed", range(12))
def test_lossy_duplicating_reordering_link_is_reliable_fifo(seed):
    faults = FaultPlan(loss=0.3, duplicate=0.2, reorder_window=0.02, delay=(0.001, 0.01))
    sim, stacks, expected = run_link(seed, faults)
    for m, got in sim.deliveries.items():
        got = [(u.src, u.msg) for u in got]
        for src in stacks:   # per-sender FIFO, exactly once, nothing invented
            assert [x for x in got if x[0] == src] == [x for x in expected[m] if x[0] == src]
    assert sim.net.lost > 0 and sim.net.duplicated > 0
    assert all(s.layer("reliable").retained == 0 for s in stacks.values())


def test_small_window_still_completes():
    faults = FaultPlan(loss=0.2, reorder_window=0.02)
    sim, stacks, expected = run_link(3, faults, window=2)
    for m, got in sim.deliveries.items():
        assert sorted((u.src, u.msg) for u in got) == sorted(expected[m])
    # flow control: senders queued for credit, and no frame ever landed beyond a receiver's window
    assert sum(s.layer("reliable").stats.get("queued", 0) for s in stacks.values()) > 0
    assert sum(s.layer("reliable").stats.get("window_drop", 0) for s in stacks.values()) == 0


def test_corrupt_datagram_is_counted_and_dropped():
    st = Stack(2, [Transport(), Reliable(2, (1, 2))])
    assert st.handle(Receive(1, b"\x01\x03garbage"), 0.0) == []
    assert st.stats["transport.decode_errors"] == 1


from hypothesis import given, settings, strategies as st


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), loss=st.floats(0, 0.5), dup=st.floats(0, 0.5),
       reorder=st.floats(0, 0.05), window=st.integers(1, 16))
def test_any_fault_plan_gives_exactly_once_fifo(seed, loss, dup, reorder, window):
    faults = FaultPlan(loss=loss, duplicate=dup, reorder_window=reorder, delay=(0.001, 0.01))
    sim, stacks, expected = run_link(seed, faults, count=16, window=window)
    for m, got in sim.deliveries.items():
        got = [(u.src, u.msg) for u in got]
        for src in stacks:
            assert [x for x in got if x[0] == src] == [x for x in expected[m] if x[0] == src]


def test_delayed_cumulative_acks():
    """``ack_every`` frames per Ack, or one ``ack_delay`` after the first
    frame not yet acknowledged; a duplicate is still answered at once."""
    r = Reliable(1, (1, 2), ack_every=3, ack_delay=0.01)
    acks = lambda effs: [m for _, m in sends(effs) if isinstance(m, Ack)]   # noqa: E731
    first = r.handle(Receive(2, XData(2, 1, b"a")), 0.0)
    assert acks(first) == [] and SetTimer("ack", 0.01) in first
    assert acks(r.handle(Receive(2, XData(2, 2, b"b")), 0.001)) == []
    assert acks(r.handle(Receive(2, XData(2, 3, b"c")), 0.002)) == [Ack(1, 3)]      # the third: at once
    r.handle(Receive(2, XData(2, 4, b"d")), 0.003)
    assert acks(r.handle(TimerFired("ack"), 0.013)) == [Ack(1, 4)]                # the delay ran out
    assert acks(r.handle(Receive(2, XData(2, 4, b"d")), 0.02)) == [Ack(1, 4)]     # a duplicate: at once
