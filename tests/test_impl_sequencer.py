"""SEQUENCER layer: per-action unit tests against the spec's actions, the
seed's failover example, the stack's routing, and simulated runs."""

import json

import pytest

from groupcheck.impl.codec import Data, Forward
from groupcheck.impl.events import (AppSend, Deliver, Multicast, Receive, Send, SetTimer, TimerFired,
                                    Trace, Up, View, ViewChange)
from groupcheck.impl.reliable import Reliable
from groupcheck.impl.sequencer import Sequencer
from groupcheck.impl.sim import FaultPlan
from groupcheck.impl.sim_sequencer import simulate
from groupcheck.impl.stack import Stack, Transport


def traces(effs):
    return [e.event for e in effs if isinstance(e, Trace)]


def net(effs):
    return [e for e in effs if isinstance(e, (Send, Multicast))]


# ---------------------------------------------------------------- Send(m)

def test_a_sender_with_max_forwarded_messages_out_waits_until_one_comes_back():
    """Backpressure: the forward table (and every record logging it) stays
    bounded however far the sequencer lags; the stack passes it up."""
    s = Sequencer(2, (1, 2, 3), max_forwarded=2)
    stack = Stack(2, [s])
    s.handle(AppSend(b"a"), 0.0)
    assert not s.blocked and not stack.blocked
    s.handle(AppSend(b"b"), 0.0)
    assert s.blocked and stack.blocked and sorted(s.fwd) == [1, 2]
    s.handle(Receive(1, Data(2, 1, b"a")), 0.0)
    assert not s.blocked and sorted(s.fwd) == [2]
    assert not Sequencer(1, (1, 2, 3), max_forwarded=1).blocked      # the coordinator forwards nothing
    with pytest.raises(ValueError, match="max_forwarded"):
        Sequencer(2, (1, 2, 3), max_forwarded=0)


def test_coordinator_send_multicasts_data():
    s = Sequencer(1, (1, 2, 3))
    effs = s.handle(AppSend(b"m"), 0.0)
    assert net(effs) == [Multicast(Data(1, 1, b"m"))]
    (t,) = traces(effs)
    assert (t.name, t.nid, t.msg) == ("Send", 1, {"type": "DATA", "sender": 1, "seqno": 1})
    assert t.state == {"vid": 1, "sent": 1, "fwd": [], "recv": {"1": 0, "2": 0, "3": 0}, "delivered": []}


def test_member_send_forwards_to_coordinator_and_keeps_fwd():
    s = Sequencer(2, (1, 2, 3))
    effs = s.handle(AppSend(b"a"), 0.0) + s.handle(AppSend(b"b"), 0.0)
    assert net(effs) == [Send(1, Forward(2, 1, b"a")), Send(1, Forward(2, 2, b"b"))]
    assert traces(effs)[-1].state["fwd"] == [1, 2] and s.sent == 2


# ---------------------------------------------------------------- RecvForward(c, p)

def test_coordinator_turns_forward_into_data():
    s = Sequencer(1, (1, 2, 3))
    effs = s.handle(Receive(2, Forward(2, 1, b"x")), 0.0)
    assert net(effs) == [Multicast(Data(2, 1, b"x"))]
    assert traces(effs)[0].name == "RecvForward" and traces(effs)[0].params == {"p": 2}


def test_non_coordinator_drops_forward():
    s = Sequencer(3, (1, 2, 3))
    effs = s.handle(Receive(2, Forward(2, 1, b"x")), 0.0)
    assert net(effs) == [] and [t.name for t in traces(effs)] == ["RecvForward"]
    assert s.stats["forward_not_coord"] == 1


def test_the_coordinator_is_the_first_member_of_the_view_not_the_smallest():
    # spec Coord(v) == v[1]; the cluster runner's first view lists its coordinator first
    s = Sequencer(2, (3, 1, 2))
    effs = s.handle(AppSend(b"a"), 0.0)
    assert net(effs) == [Send(3, Forward(2, 1, b"a"))] and s.fwd == {1: b"a"}
    effs = s.handle(Receive(1, Forward(1, 1, b"x")), 0.0)
    assert net(effs) == [] and s.stats["forward_not_coord"] == 1


# ---------------------------------------------------------------- RecvData(m, p)

def test_data_delivers_once_and_clears_own_fwd():
    s = Sequencer(2, (1, 2, 3))
    s.handle(AppSend(b"mine"), 0.0)
    e1 = s.handle(Receive(1, Data(2, 1, b"mine")), 0.0)
    assert [e for e in e1 if isinstance(e, Deliver)] == [Deliver(2, 1, b"mine")]
    assert s.fwd == {} and s.recv[2] == 1 and s.delivered == [(2, 1)]
    e2 = s.handle(Receive(1, Data(2, 1, b"mine")), 0.0)
    assert not [e for e in e2 if isinstance(e, Deliver)] and s.stats["duplicates"] == 1
    assert traces(e2)[0].name == "RecvData" and traces(e2)[0].state["delivered"] == [[2, 1]]


def test_lower_seqno_than_received_table_is_discarded():
    s = Sequencer(3, (1, 2, 3))
    s.handle(Receive(1, Data(2, 2, b"b")), 0.0)
    assert not [e for e in s.handle(Receive(1, Data(2, 1, b"a")), 0.0) if isinstance(e, Deliver)]


# ---------------------------------------------------------------- InstallView(m)

def test_coordinator_change_resends_fwd_in_seqno_order():
    s = Sequencer(3, (1, 2, 3))
    for p in (b"1", b"2", b"3"):
        s.handle(AppSend(p), 0.0)
    s.handle(Receive(1, Data(3, 2, b"2")), 0.0)       # 2 came back: not re-sent
    s.handle(Receive(1, Data(1, 1, b"c")), 0.0)
    effs = s.handle(ViewChange(View(2, (2, 3))), 0.0)
    assert net(effs) == [Send(2, Forward(3, 1, b"1")), Send(2, Forward(3, 3, b"3"))]
    (t,) = traces(effs)
    assert t.name == "InstallView" and t.state["vid"] == 2
    assert t.state["recv"] == {"2": 0, "3": 2}        # entry of the left member 1 removed


def test_view_without_coordinator_change_resends_nothing():
    s = Sequencer(2, (1, 2, 3))
    s.handle(AppSend(b"x"), 0.0)
    effs = s.handle(ViewChange(View(2, (1, 2))), 0.0)
    assert net(effs) == [] and s.vid == 2 and set(s.recv) == {1, 2}


def test_out_of_order_view_is_counted_not_installed():
    s = Sequencer(2, (1, 2, 3))
    assert s.handle(ViewChange(View(3, (2, 3))), 0.0) == []
    assert s.vid == 1 and s.stats["view_out_of_order"] == 1


def test_seed_failover_example():
    # Seed 000: C sends 1..6; the coordinator A multicasts all of them but dies
    # and C misses 5 and 6.  C re-sends 5 and 6 to the new coordinator B; those
    # who had them discard them; C delivers them and empties its forward-table.
    A, B, C = 1, 2, 3
    b, c = Sequencer(B, (A, B, C)), Sequencer(C, (A, B, C))
    for i in range(1, 7):
        c.handle(AppSend(b"%d" % i), 0.0)
    for i in range(1, 7):
        b.handle(Receive(A, Data(C, i, b"%d" % i)), 0.0)
        if i <= 4:
            c.handle(Receive(A, Data(C, i, b"%d" % i)), 0.0)
    assert sorted(c.fwd) == [5, 6]
    view = View(2, (B, C))
    b.handle(ViewChange(view), 0.0)
    resent = net(c.handle(ViewChange(view), 0.0))
    assert resent == [Send(B, Forward(C, 5, b"5")), Send(B, Forward(C, 6, b"6"))]
    datas = [m.msg for e in resent for m in net(b.handle(Receive(C, e.msg), 0.0))]
    assert datas == [Data(C, 5, b"5"), Data(C, 6, b"6")]
    for d in datas:
        assert not [e for e in b.handle(Receive(B, d), 0.0) if isinstance(e, Deliver)]
        assert [e for e in c.handle(Receive(B, d), 0.0) if isinstance(e, Deliver)] == [Deliver(C, d.seqno, d.payload)]
    assert c.fwd == {} and b.delivered == c.delivered == [(C, i) for i in range(1, 7)]


# ---------------------------------------------------------------- the stack

def test_stack_routes_down_up_timers_and_views():
    members = (1, 2)
    s1 = Stack(1, [Transport(), Reliable(1, members), Sequencer(1, members)])
    s2 = Stack(2, [Transport(), Reliable(2, members), Sequencer(2, members)])
    out = s2.handle(AppSend(b"hi"), 0.0)
    (dgram,) = [e for e in out if isinstance(e, Send)]
    assert dgram.dest == 1 and isinstance(dgram.msg, bytes)         # encoded at the bottom
    assert SetTimer("reliable/retransmit", 0.05) in out
    back = s1.handle(Receive(2, dgram.msg), 0.001)
    assert [t.event.name for t in back if isinstance(t, Trace)] == ["RecvForward"]
    assert {e.dest for e in back if isinstance(e, Send)} == {1, 2}  # DATA to both, ACK to 2
    assert s2.handle(TimerFired("reliable/retransmit"), 0.05)      # retransmission, routed by name
    with pytest.raises(ValueError):
        s2.handle(TimerFired("nosuch/timer"), 0.1)
    s2.handle(ViewChange(View(2, (2,))), 0.2)
    assert s2.layer("reliable").members == (2,) and s2.layer("sequencer").vid == 2


def test_stack_rejects_duplicate_layer_names():
    with pytest.raises(ValueError):
        Stack(1, [Transport(), Transport()])


# ---------------------------------------------------------------- simulated runs

def workload(members, per_member, spacing=0.003):
    return [(spacing * i, members[i % len(members)], b"%d-%d" % (members[i % len(members)], i))
            for i in range(per_member * len(members))]


LOSSY = FaultPlan(loss=0.25, duplicate=0.15, reorder_window=0.02, delay=(0.001, 0.01))


def test_same_seed_same_trace_byte_for_byte():
    runs = [json.dumps(simulate((1, 2, 3), workload((1, 2, 3), 4), 11, LOSSY), sort_keys=True, default=repr)
            for _ in range(2)]
    assert runs[0] == runs[1]
    other = json.dumps(simulate((1, 2, 3), workload((1, 2, 3), 4), 12, LOSSY), sort_keys=True, default=repr)
    assert other != runs[0]


@pytest.mark.parametrize("seed", range(8))
def test_failure_free_runs_deliver_everything_in_one_order(seed):
    members = (1, 2, 3, 4)
    msgs = workload(members, 5)
    records, summary = simulate(members, msgs, seed, LOSSY)
    assert summary["quiescent"]
    sent = {(nid, 1 + sum(1 for _, n, _ in msgs[:i] if n == nid)) for i, (_, nid, _) in enumerate(msgs)}
    orders = [summary["delivered"][m] for m in members]
    assert sorted(map(tuple, orders[0])) == sorted(sent)             # everything, once
    assert all(o == orders[0] for o in orders)                       # same order everywhere
    for m in members:                                                # sender FIFO
        for s in members:
            qs = [q for x, q in orders[0] if x == s]
            assert qs == sorted(qs)
    # the payloads arrive with their ids
    byid = {(n, 1 + sum(1 for _, k, _ in msgs[:i] if k == n)): p for i, (_, n, p) in enumerate(msgs)}
    assert summary["payloads"][1] == [byid[tuple(x)] for x in orders[0]]
    # the trace ends, per member, in the state the summary reports
    last = {r["nid"]: r["state"] for r in records if r["kind"] == "event" and r["name"] != "Crash"}
    assert all(last[m]["delivered"] == summary["delivered"][m] for m in members)
    assert all(last[m]["fwd"] == [] for m in members)
    assert summary["network"]["lost"] > 0


def test_trace_records_are_spec_actions_with_post_states():
    records, _ = simulate((1, 2, 3), workload((1, 2, 3), 2), 5, LOSSY)
    assert records[0]["kind"] == "header" and records[0]["seed"] == 5
    names = {r["name"] for r in records[1:]}
    assert names == {"Send", "RecvForward", "RecvData"}
    for r in records[1:]:
        assert set(r["state"]) == {"vid", "sent", "fwd", "recv", "delivered"}
    json.dumps(records)                                               # JSON-ready as it stands
    clocks = [r["clock"] for r in records[1:]]
    assert clocks == sorted(clocks)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("victim", [1, 3])
def test_crash_runs_keep_safety_and_survivors_get_survivors_messages(seed, victim):
    members = (1, 2, 3, 4)
    msgs = workload(members, 4)
    records, summary = simulate(members, msgs, seed, FaultPlan(
        loss=0.1, duplicate=0.1, reorder_window=0.01, crashes=((victim, 0.02),)))
    assert summary["quiescent"] and summary["crashed"] == [victim]
    assert summary["views"] == [list(members), [m for m in members if m != victim]]
    survivors = [m for m in members if m != victim]
    sends = {}
    for r in records:
        if r.get("name") == "Send":
            sends.setdefault(r["nid"], set()).add(r["state"]["sent"])
    for m in survivors:
        got = [tuple(x) for x in summary["delivered"][m]]
        assert len(got) == len(set(got))                              # NoDuplicates
        assert all(q in sends.get(s, ()) for s, q in got)             # Integrity
        # a sender keeps each message in fwd until it comes back as DATA
        last = [r for r in records if r.get("nid") == m and "state" in r][-1]["state"]
        own = {q for s, q in got if s == m}
        assert own | set(last["fwd"]) == sends.get(m, set()) and not own & set(last["fwd"])
        if victim != members[0]:
            # the coordinator survives: every survivor gets every survivor's message.
            # (Not so when it crashes: its last DATA may reach the sender alone,
            # which then drops it from fwd and never re-sends it; the spec allows
            # that too, Crash(m, lost), see test_coordinator_crash_can_strand_a_message.)
            for s in survivors:
                assert {(s, q) for q in sends.get(s, ())} <= set(got)
    assert sum(1 for r in records if r.get("name") == "InstallView") == len(survivors)


def test_coordinator_crash_can_strand_a_message():
    # Seed 000 without a flush: the coordinator's DATA <<3, 1>> reaches only its
    # sender 3 before the coordinator crashes.  3 removes it from fwd, so the
    # view change re-sends nothing and 2 never delivers it.  This is what the
    # spec's Crash(1, {2}) does; the impl is faithful to it, not better.
    A, B, C = 1, 2, 3
    b, c = Sequencer(B, (A, B, C)), Sequencer(C, (A, B, C))
    c.handle(AppSend(b"x"), 0.0)
    c.handle(Receive(A, Data(C, 1, b"x")), 0.0)        # DATA to B lost with A
    view = View(2, (B, C))
    assert net(b.handle(ViewChange(view), 0.0)) == []
    assert net(c.handle(ViewChange(view), 0.0)) == []
    assert c.delivered == [(C, 1)] and b.delivered == []


def test_forward_to_a_coordinator_that_has_not_installed_its_view_is_lost():
    # The other stranding: 3 installs the view that makes 2 coordinator and
    # re-sends its fwd before 2 has installed it; 2, not yet coordinator,
    # drops the FORWARD (seed: "If not coord: error and return") and nothing
    # ever re-sends it.  The spec's RecvForward does the same.
    A, B, C = 1, 2, 3
    b, c = Sequencer(B, (A, B, C)), Sequencer(C, (A, B, C))
    c.handle(AppSend(b"x"), 0.0)                       # FORWARD to A, lost with A
    view = View(2, (B, C))
    (resend,) = net(c.handle(ViewChange(view), 0.0))
    assert net(b.handle(Receive(C, resend.msg), 0.0)) == []
    assert b.stats["forward_not_coord"] == 1
    b.handle(ViewChange(view), 0.0)
    assert c.fwd == {1: b"x"} and b.delivered == [] and c.delivered == []


def test_finding_left_member_entry_removal_allows_a_duplicate():
    # Faithful to the seed ("Remove entries for left members in
    # received-table"), and so to the spec: TLC finds the same NoDuplicates
    # violation with N = 3, MaxSeq = 1, MaxCrashes = 2.  2 forwards <<2, 1>>;
    # coordinator 1 multicasts it, 3 delivers it, 1 crashes before 2 has it.
    # 2 becomes coordinator, re-sends its fwd to itself and multicasts the DATA
    # again; 2 crashes with that DATA in flight to 3; 3 installs <<3>> and
    # forgets recv[2], then the DATA arrives and 3 delivers <<2, 1>> again.
    c = Sequencer(3, (1, 2, 3))
    c.handle(Receive(1, Data(2, 1, b"x")), 0.0)
    c.handle(ViewChange(View(2, (2, 3))), 0.0)
    c.handle(ViewChange(View(3, (3,))), 0.0)
    c.handle(Receive(2, Data(2, 1, b"x")), 0.0)
    assert c.delivered == [(2, 1), (2, 1)]


def test_crash_run_records_environment_actions_in_order():
    records, summary = simulate((1, 2, 3), workload((1, 2, 3), 2), 3, FaultPlan(crashes=((1, 0.004),)))
    names = [r["name"] for r in records[1:]]
    crash, newview = names.index("Crash"), names.index("NewView")
    installs = [i for i, n in enumerate(names) if n == "InstallView"]
    assert crash < newview < min(installs) and len(installs) == 2
    assert records[1 + newview]["params"]["view"] == [2, 3]
    assert not any(r.get("nid") == 1 for r in records[2 + crash:])    # crash-stop
    assert all(records[1 + i]["state"]["vid"] == 2 for i in installs)
    assert summary["app_dropped"] > 0                                  # sends at 1 after its crash


def total_order_violation(delivered):
    """The spec's TotalOrder over every member, crashed ones included: the
    first pair of members whose common messages come in different orders."""
    for a in delivered:
        for b in delivered:
            da, db = [tuple(x) for x in delivered[a]], [tuple(x) for x in delivered[b]]
            sa, sb = set(da), set(db)
            if [x for x in da if x in sb] != [x for x in db if x in sa]:
                return a, b
    return None


def test_impl_shows_the_specs_total_order_flaw_on_coordinator_crash():
    # The flaw TLC shows on MCSequencer_CoordCrash (docs/sequencer.md): without
    # a flush, survivors can order the old coordinator's last multicasts and
    # the new coordinator's differently.  The impl must show it too, and never
    # without a crash.
    msgs = [(0.002 * i, 1 + i % 3, b"p%d" % i) for i in range(12)]
    broken = [seed for seed in range(40)
              if total_order_violation(simulate((1, 2, 3), msgs, seed, FaultPlan(
                  loss=0.3, reorder_window=0.01, crashes=((1, 0.012),)))[1]["delivered"])]
    assert broken
    for seed in broken:
        assert total_order_violation(simulate((1, 2, 3), msgs, seed, FaultPlan(
            loss=0.3, reorder_window=0.01))[1]["delivered"]) is None


def test_tracing_off_emits_no_trace_effects():
    from groupcheck.impl.events import AppSend, Trace
    from groupcheck.impl.sequencer import Sequencer
    on, off = Sequencer(2, (1, 2, 3)), Sequencer(2, (1, 2, 3), tracing=False)
    a, b = on.handle(AppSend(b"x"), 0.0), off.handle(AppSend(b"x"), 0.0)
    assert any(isinstance(e, Trace) for e in a)
    assert b == [e for e in a if not isinstance(e, Trace)] and b
