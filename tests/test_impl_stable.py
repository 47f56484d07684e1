"""The STABLE layer (impl/stable.py) and the reliable layer's NAKACK mode:
single steps, the stability-driven release of the retransmission buffer,
the last-message repair, staggering, joins, and the flawed build switch."""

from groupcheck.impl import codec, sim_stable, stable
from groupcheck.impl.stacks import stable as stable_stacks
from groupcheck.impl.codec import Nak, XData
from groupcheck.impl.events import (AppSend, CancelTimer, Deliver, Multicast, Receive, Send, SetTimer, TimerFired,
                                    Trace, View, ViewChange)
from groupcheck.impl.reliable import Reliable
from groupcheck.impl.sim import FaultPlan
from groupcheck.impl.sim_stable import StableSimulator
from groupcheck.impl.stable import StabilityMsg, Stable, StableMsg


def layer(nid=1, members=(1, 2, 3), **kw):
    rel = Reliable(nid, members, nakack=True)
    return rel, Stable(nid, members, rel, **kw)


def traces(out):
    return [e.event for e in out if isinstance(e, Trace)]


def sends(stack_out):
    return [codec.decode(e.msg) for e in stack_out if isinstance(e, Send)]


# ---------------------------------------------------------------- single steps

def test_multicast_delivers_locally_and_sends_one_numbered_frame_to_each_other_member():
    s = stable_stacks.stable_stack(1, (1, 2, 3))
    out = s.handle(AppSend(b"x"), 0.0)
    assert [e for e in out if isinstance(e, Deliver)] == [Deliver(1, 1, b"x")]
    assert sorted((e.dest, codec.decode(e.msg)) for e in out if isinstance(e, Send)) == \
        [(2, XData(1, 1, b"x")), (3, XData(1, 1, b"x"))]
    (ev,) = traces(out)
    assert ev.name == "Multicast" and ev.msg == {"type": "data", "from": 1, "seq": 1}
    assert ev.state["delivered"] == {"1": 1} and ev.state["received"] == {"1": 1}
    assert s.layer("reliable").retained == 1 and s.layer("reliable").retained_bytes == 1


def test_nakack_mode_has_no_buffer_limit_only_stability_frees_frames():
    rel = Reliable(1, (1, 2), nakack=True, max_backlog=3)
    for k in range(10):
        rel.handle(Multicast(b"%d" % k), 0.0)
    assert rel.retained == 10 and "buffer_full" not in rel.stats
    assert rel.collect(4) == 4 and sorted(rel.mbuf) == list(range(5, 11))
    out = rel.handle(Receive(2, Nak(2, 3, 6)), 0.0)   # 3, 4 are gone; 5, 6 are served
    assert [e.msg.seqno for e in out] == [5, 6] and rel.stats["nak_released"] == 2


def test_in_order_frame_is_receive_data_a_gap_is_learned_and_nakked_a_known_seqno_is_retransmit():
    rel, st = layer(2, (1, 2))
    out = st.handle(Receive(1, XData(1, 1, b"a")), 0.0)
    assert [e.name for e in traces(out)] == ["ReceiveData"] and Deliver(1, 1, b"a") in out
    out = st.handle(Receive(1, XData(1, 3, b"c")), 0.0)      # above a gap: dropped, learned, NAKed
    assert [e.name for e in traces(out)] == ["ReceiveData"] and not any(isinstance(e, Deliver) for e in out)
    assert st.delivered[1] == 1 and st.received[1] == 3 and Send(1, Nak(2, 2, 3)) in out
    assert any(isinstance(e, SetTimer) and e.name == "nak" for e in out)
    out = st.handle(Receive(1, XData(1, 2, b"b")), 0.0)
    assert [e.name for e in traces(out)] == ["Retransmit"] and Deliver(1, 2, b"b") in out
    out = st.handle(Receive(1, XData(1, 2, b"b")), 0.0)      # duplicate: no spec step
    assert traces(out) == [] and st.stats["duplicates"] == 1


def test_receive_stable_merges_and_a_vector_over_other_members_resets_heard_from():
    _, st = layer(1, (1, 2))
    out = st.handle(Receive(2, StableMsg(2, 1, ((1, 0), (2, 3)))), 0.0)
    assert st.digest == {1: (0, 0), 2: (0, 3)} and st.heardFrom == {1}
    assert traces(out)[0].name == "ReceiveStable"
    st.handle(Receive(2, StableMsg(2, 1, ((1, 0), (2, 4)))), 0.0)   # the same counter again: dropped
    assert st.digest[2] == (0, 3) and st.stats["stale_gossip"] == 1
    st.handle(Receive(2, StableMsg(2, 2, ((1, 0), (2, 5), (3, 0)))), 0.0)   # another view's vector
    assert st.heardFrom == {1, 2} and st.digest[2] == (0, 3)


def test_flawed_build_merges_a_vector_over_other_members_and_keeps_heard_from_at_a_view_change():
    _, st = layer(1, (1, 2), heard_from_reset=False)
    st.handle(Receive(2, StableMsg(2, 1, ((1, 0), (2, 5), (3, 0)))), 0.0)
    assert st.heardFrom == {1} and st.digest[2] == (0, 5)
    _, st = layer(2, (1, 2), heard_from_reset=False)
    st.heardFrom = set()
    st.handle(ViewChange(View(2, (1, 2, 3))), 0.0)
    assert st.heardFrom == set() and st.view == {1, 2, 3}


def test_stability_is_staggered_by_rank_and_a_received_one_cancels_ours():
    _, st = layer(3, (1, 2, 3))
    st.delivered = {1: 1}
    out = st.handle(TimerFired("gossip"), 1.0)        # own vector: heardFrom {1, 2}
    for p in (1, 2):
        out = st.handle(Receive(p, StableMsg(p, 1, ((1, 1), (2, 0), (3, 0)))), 1.0)
    (t,) = [e for e in out if isinstance(e, SetTimer) and e.name == "stability"]
    assert t.at == 1.0 + st.stability_delay * 3          # rank 2 waits three steps
    out = st.handle(Receive(1, StabilityMsg(1, 1, ((1, 1, 1), (2, 0, 0), (3, 0, 0)))), 1.001)
    assert CancelTimer("stability") in out and st.purged == {1: 1, 2: 0, 3: 0}
    assert st.heardFrom == {1, 2, 3} and traces(out)[0].name == "ReceiveStability"


def test_send_stability_purges_frees_own_frames_and_learns_a_missed_last_message():
    rel, st = layer(1, (1, 2))
    st.handle(AppSend(b"a"), 0.0)
    st.handle(AppSend(b"b"), 0.0)
    rel.handle(Multicast(b"a"), 0.0)
    rel.handle(Multicast(b"b"), 0.0)
    st.delivered[2] = 0
    st.digest = {1: (1, 2), 2: (0, 4)}                  # member 2 got 1 of ours, and sent 4 we never saw
    st.heardFrom = set()
    out = st.handle(TimerFired("stability"), 0.1)
    assert st.purged == {1: 1, 2: 0} and sorted(rel.mbuf) == [2]
    assert st.received[2] == 4 and Send(2, Nak(1, 1, 4)) in out
    assert [e for e in out if isinstance(e, Send) and isinstance(e.msg, StabilityMsg)][0].dest == 2


# ---------------------------------------------------------------- whole runs

class DropOnce(StableSimulator):
    """Loses the first datagram for which ``pred(src, dest, message)`` holds."""

    def __init__(self, *a, pred, **kw):
        super().__init__(*a, **kw)
        self.pred, self.dropped = pred, []

    def _transmit(self, src, dest, payload, kind):
        msg = codec.decode(payload)
        if not self.dropped and self.pred(src, dest, msg):
            self.dropped.append((src, dest, msg))
            return
        super()._transmit(src, dest, payload, kind)


def run_pair(pred, **opts):
    stacks = {m: stable_stacks.stable_stack(m, (1, 2), **opts) for m in (1, 2)}
    sim = DropOnce(stacks, 1, FaultPlan(), 10.0, pred=pred)
    sim.app_send(0.0, 1, b"a")
    sim.app_send(0.01, 1, b"b")
    return sim, sim.run()


def test_a_lost_last_message_is_repaired_through_stability_and_then_collected():
    sim, quiet = run_pair(lambda s, d, m: isinstance(m, XData) and m.seqno == 2)
    assert quiet and sim.dropped
    names = [r["name"] for r in sim.records if r["nid"] == 2]
    # member 2 hears of seqno 2 only from a STABILITY digest's high, then fetches it
    i = names.index("ReceiveStability")
    assert "Retransmit" in names[i:] and "ReceiveData" not in names[i:]
    assert [(d.sender, d.seqno) for d in sim.deliveries[2] if isinstance(d, Deliver)] == [(1, 1), (1, 2)]
    assert sim.stacks[1].layer("reliable").retained == 0
    assert sim.stacks[1].layer("stable").purged == {1: 2, 2: 0}


def test_without_stable_nothing_is_ever_collected():
    sim, quiet = run_pair(lambda s, d, m: False, gossip_interval=None)
    assert quiet and sim.stacks[1].layer("reliable").retained == 2
    assert not any(r["name"].startswith("SendStab") for r in sim.records)


def test_gossip_stops_once_everything_is_stable():
    records, summary = sim_stable.simulate(3, 3, 4, FaultPlan(loss=0.1, duplicate=0.05, reorder_window=0.003))
    assert summary["quiescent"] and summary["end_clock"] < 2.0
    assert all(v == 0 for v in summary["retained"].values())
    assert all(v == {1: 3, 2: 3, 3: 3} for v in summary["vectors"].values())
    everything = sorted((m, k) for m in (1, 2, 3) for k in (1, 2, 3))
    assert all(sorted(map(tuple, summary["delivered"][m])) == everything for m in (1, 2))


def test_a_joiner_starts_from_the_coordinators_delivered_vector():
    records, summary = sim_stable.simulate(3, 2, 1)
    join = next(r for r in records if r.get("name") == "Join")
    assert join["nid"] == 3 and join["params"] == {"coord": 1} and join["state"]["view"] == [1, 2, 3]
    coord_before = [r for r in records[1:] if r["nid"] == 1 and r["clock"] <= join["clock"]][-1]
    assert join["state"]["delivered"] == coord_before["state"]["delivered"]
    assert join["state"]["heardFrom"] == [1, 2, 3]
    # the coordinator installs at once (no InstallView), member 2 later
    installs = [r["nid"] for r in records if r.get("name") == "InstallView"]
    assert installs == [2] and summary["views"] == [[1, 2], [1, 2, 3]]


def test_admit_refuses_a_second_view_change_before_the_first_is_installed():
    stacks = {m: stable_stacks.stable_stack(m, (1, 2)) for m in (1, 2)}
    sim_stable.admit(stacks, 3, 2, lambda n, e: stacks[n].handle(e, 0.0), stable_stacks.stable_stack)
    assert not sim_stable.can_admit(stacks)
    try:
        sim_stable.admit(stacks, 4, 3, lambda n, e: stacks[n].handle(e, 0.0), stable_stacks.stable_stack)
    except ValueError:
        pass
    else:
        raise AssertionError("admitted a second joiner while member 2 had not installed the view")


def test_same_seed_same_trace():
    a = sim_stable.simulate(3, 2, 9, FaultPlan(loss=0.2, reorder_window=0.003))[0]
    b = sim_stable.simulate(3, 2, 9, FaultPlan(loss=0.2, reorder_window=0.003))[0]
    assert a == b
