"""The Raincore Transport Manager on a lossy network (impl/ringtransport.py):
reliable unicast of the ring's messages and the failure detector of seed
004 made final by the take handshake, and the composed stack running on it
(impl/sim_raincoreflush.py with ``tm=True``)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from groupcheck.conformance.replay import raincoreflush as crf
from groupcheck.core.trace.reader import from_records
from groupcheck.impl import codec
from groupcheck.impl.engine import EffectEngine
from groupcheck.impl.events import Receive, Send, TimerFired, Up
from groupcheck.impl.raincore import DeliveryFailed, Msg911, TokenMsg
from groupcheck.impl.ringtransport import (DEDUP, SLOW_HALF_LIFE, TIMER, Suspected, TMAbort, TMAck, TMConfirm, TMFrame, TMTaken,
                                           TransportManager)
from groupcheck.impl.stacks import raincoreflush as stacks  # noqa: F401  (registers codec 32-36)

TOKEN = TokenMsg(5, (1, 2, 3), 1, 2, 1)


class Link:
    """Two Transport Managers over a lossy, duplicating, reordering link, driven step by step:
    the effect engine's network policy (impl/engine.py)."""

    now = 0.0

    def __init__(self, seed: int, loss: float, dup: float, down: bool = False) -> None:
        self.rng = random.Random(seed)
        self.loss, self.dup, self.down = loss, dup, down
        self.paused = False            # node 2 stopped: what reaches it waits in ``queued``
        self.queued: list = []
        self.tm = {1: TransportManager(1), 2: TransportManager(2)}
        self.engine = EffectEngine(self.tm, self, lambda record: None, self._deliver)
        self.wire: list = []
        self.up: dict[int, list] = {1: [], 2: []}
        self.failed: list = []
        self.suspected: list = []
        self.timer = {1: False, 2: False}

    def run(self, node: int, event) -> None:
        self.engine.handle(node, event)

    def send(self, src: int, dest: int, msg) -> None:
        frame = codec.encode(msg)          # over the wire as bytes
        if self.rng.random() >= self.loss:
            self.wire.append((src, dest, frame))
            if self.rng.random() < self.dup:
                self.wire.append((src, dest, frame))

    def schedule(self, at: float, node: int, name: str) -> None:
        self.timer[node] = True

    def _deliver(self, node: int, eff) -> None:
        if isinstance(eff, Up):
            self.up[node].append(eff.msg)
        elif isinstance(eff, DeliveryFailed):
            self.failed.append(eff.msg)
        elif isinstance(eff, Suspected):
            self.suspected.append(eff.msg)

    def step(self) -> bool:
        # a datagram takes milliseconds, the retry timer 20 ms: the timer
        # fires only once the wire is quiet (any order of delivery)
        if self.wire:
            src, dest, frame = self.wire.pop(self.rng.randrange(len(self.wire)))
            if self.paused and dest == 2:
                self.queued.append((src, frame))
            elif not (self.down and dest == 2):
                self.run(dest, Receive(src, codec.decode(frame)))
            return True
        armed = [n for n, on in self.timer.items() if on and not (self.paused and n == 2)]
        if armed:
            n = self.rng.choice(armed)
            self.timer[n] = False
            if self.engine.expire(n, TIMER):
                self.run(n, TimerFired(TIMER))
            return True
        return bool(self.wire)

    def resume(self) -> None:
        """Node 2 runs again: its socket's backlog first, in order."""
        self.paused = False
        for src, frame in self.queued:
            self.run(2, Receive(src, codec.decode(frame)))
        self.queued.clear()

    def settle(self, steps: int = 20000) -> None:
        for _ in range(steps):
            if not self.step():
                return


@pytest.mark.parametrize("seed", range(5))
def test_every_message_arrives_once_over_a_lossy_link(seed):
    link = Link(seed, loss=0.2, dup=0.2)
    msgs = [TokenMsg(10 + k, (1, 2), 1, 2, 1) if k % 2 else Msg911(1, 1, 2, (1, 2), k, "YES") for k in range(40)]
    for k, m in enumerate(msgs):
        link.run(1, Send(2, m))
        for _ in range(3):
            link.step()
    for _ in range(20000):
        if not link.step():
            break
    # newer tokens supersede older ones still waiting for an ack: every 911
    # and the last token arrive; nothing arrives twice; no failure reported
    got = link.up[2]
    assert len(got) == len(set(got))
    # (no order is promised: the spec's messages in flight are a set)
    assert {m for m in got if isinstance(m, Msg911)} == {m for m in msgs if isinstance(m, Msg911)}
    assert msgs[-1] in got and link.failed == []
    assert not link.tm[1].pending


def test_a_silent_node_is_reported_once_per_message():
    link = Link(0, loss=0.0, dup=0.0, down=True)
    link.run(1, Send(2, TOKEN))
    for _ in range(100):
        link.step()
    assert link.failed == [TOKEN]
    assert link.tm[1].stats["delivery_failures"] == 1 and link.tm[1].stats["retransmitted"] == 9


def test_identical_pending_messages_are_one():
    tm = TransportManager(1)
    m = Msg911(1, 1, 2, (1, 2), 0, "YES")
    assert len([e for e in tm.handle(Send(2, m), 0.0) if isinstance(e, Send)]) == 1
    assert [e for e in tm.handle(Send(2, m), 0.0) if isinstance(e, Send)] == []
    assert tm.stats["coalesced"] == 1


def test_a_message_equal_to_one_confirmed_but_not_taken_is_not_sent_again():
    """The receiver has acked the first copy and the sender confirmed it;
    until TMTaken comes back the receiver may still take it, so an equal
    message (a veto answered twice, a repeated claim) is the same message of
    the spec's set: sending it again would let the receiver take it twice
    (a cluster run over the lossy ring, a 911 received twice)."""
    tm = TransportManager(3)
    m = Msg911(2, 3, 2, (1, 2, 3), 6, "NO")
    (frame,) = sends(tm.handle(Send(2, m), 0.0), TMFrame)
    assert sends(tm.handle(Receive(2, TMAck(frame.id)), 0.0), TMConfirm) == [TMConfirm(frame.id)]
    assert sends(tm.handle(Send(2, m), 0.0), TMFrame) == [] and tm.stats["coalesced"] == 1
    tm.handle(Receive(2, TMTaken(frame.id)), 0.0)
    assert sends(tm.handle(Send(2, m), 0.0), TMFrame) != []       # taken: a new message


def test_a_token_taken_answers_the_nodes_own_911():
    tm = TransportManager(3)
    tm.handle(Send(1, Msg911(3, 3, 1, (1, 2), 0, "YES")), 0.0)
    tm.handle(Send(1, Msg911(2, 3, 1, (1, 2), 0, "YES")), 0.0)      # one it passes on: kept
    tm.handle(Receive(1, TMFrame(1, TokenMsg(9, (1, 3, 2), 1, 3, 1))), 0.0)
    assert len(tm.pending) == 2                                     # held, not taken yet
    tm.handle(Receive(1, TMConfirm(1)), 0.0)
    assert [m.orig for _, m, _ in tm.pending.values()] == [2]


def sends(effects, cls):
    return [e.msg for e in effects if isinstance(e, Send) and isinstance(e.msg, cls)]


def test_a_frame_goes_up_only_on_its_senders_confirm():
    a, b = TransportManager(1), TransportManager(2)
    (frame,) = sends(a.handle(Send(2, TOKEN), 0.0), TMFrame)
    out = b.handle(Receive(1, frame), 0.0)
    assert sends(out, TMAck) == [TMAck(frame.id)] and not [e for e in out if isinstance(e, Up)]
    assert sends(a.handle(Receive(2, TMAck(frame.id)), 0.0), TMConfirm) == [TMConfirm(frame.id)]
    out = b.handle(Receive(1, TMConfirm(frame.id)), 0.0)
    assert [e.msg for e in out if isinstance(e, Up)] == [TOKEN] and sends(out, TMTaken) == [TMTaken(frame.id)]
    assert a.pending and a.handle(Receive(2, TMTaken(frame.id)), 0.0) == [] and not a.pending
    assert not b.held and a.stats["confirmed"] == 1


def give_up(tm):
    failed = []
    for _ in range(tm.attempts):
        failed += [e.msg for e in tm.handle(TimerFired(TIMER), 0.0) if isinstance(e, DeliveryFailed)]
    return failed


def test_an_ack_after_the_give_up_is_aborted_and_the_receiver_is_suspected():
    a, b = TransportManager(1, attempts=3), TransportManager(2, attempts=3)
    (frame,) = sends(a.handle(Send(2, TOKEN), 0.0), TMFrame)
    assert give_up(a) == [TOKEN]                       # b was slow: reported undelivered
    (ack,) = sends(b.handle(Receive(1, frame), 0.0), TMAck)
    (abort,) = sends(a.handle(Receive(2, ack), 0.0), TMAbort)
    out = b.handle(Receive(1, abort), 0.0)
    assert out == [Suspected(1, TOKEN)] and not b.held
    # the same ack again (a duplicate): the same decision
    assert sends(a.handle(Receive(2, ack), 0.0), TMAbort) == [abort]


def test_a_lost_confirm_is_answered_again_and_never_reported():
    a, b = TransportManager(1), TransportManager(2)
    (frame,) = sends(a.handle(Send(2, TOKEN), 0.0), TMFrame)
    (ack,) = sends(b.handle(Receive(1, frame), 0.0), TMAck)
    a.handle(Receive(2, ack), 0.0)                     # its confirm is lost
    reack = sends(b.handle(TimerFired(TIMER), 0.0), TMAck)
    assert reack == [ack]                              # b asks again
    for _ in range(3):                                 # so does a's timer, and each ack
        assert sends(a.handle(TimerFired(TIMER), 0.0), TMConfirm) == [TMConfirm(frame.id)]
        assert sends(a.handle(Receive(2, ack), 0.0), TMConfirm) == [TMConfirm(frame.id)]
    ups = []
    for _ in range(2):                                 # the confirm arrives twice: taken once
        out = b.handle(Receive(1, TMConfirm(frame.id)), 0.0)
        ups += [e.msg for e in out if isinstance(e, Up)]
        assert sends(out, TMTaken) == [TMTaken(frame.id)]
    assert ups == [TOKEN]
    assert give_up(a) == [] and a.stats["untaken"] == 1 and "delivery_failures" not in a.stats


def test_a_retransmission_of_a_held_frame_is_acked_again_and_held_once():
    a, b = TransportManager(1), TransportManager(2)
    (frame,) = sends(a.handle(Send(2, TOKEN), 0.0), TMFrame)
    for _ in range(3):
        assert sends(b.handle(Receive(1, frame), 0.0), TMAck) == [TMAck(frame.id)]
    assert list(b.held) == [(1, frame.id)]


def test_a_held_frame_without_decision_ends_in_suspicion():
    b = TransportManager(2, attempts=3)
    b.handle(Receive(1, TMFrame(7, TOKEN)), 0.0)
    out = [e for _ in range(2 * b.attempts) for e in b.handle(TimerFired(TIMER), 0.0)]
    assert len(sends(out, TMAck)) == 2 * b.attempts - 1
    assert [e for e in out if isinstance(e, Suspected)] == [Suspected(1, TOKEN)] and not b.held


def _give_up_time(tm, dest_heard_until: float = -1.0, step: float = 0.05, until: float = 20.0):
    """Retry rounds every ``step`` s after a Send at 0 (``dest`` heard from up
    to ``dest_heard_until``): when the frame is reported undelivered."""
    tm.handle(Send(2, TOKEN), 0.0)
    t = 0.0
    while t < until:
        t = round(t + step, 6)
        if t <= dest_heard_until:
            tm.handle(Receive(2, TMTaken(999)), t)         # any datagram of the layer counts (a stale one)
        if any(isinstance(e, DeliveryFailed) for e in tm.handle(TimerFired(TIMER), t)):
            return t
    return None


def test_the_adaptive_detector_waits_as_long_as_the_slowest_recent_ack():
    fixed = TransportManager(1, interval=0.05, attempts=20)
    assert _give_up_time(fixed) == pytest.approx(1.0)          # 20 sends
    fresh = TransportManager(1, interval=0.05, attempts=20, patience_cap=3.0)
    assert _give_up_time(fresh) == pytest.approx(1.0)          # nothing slow seen: the same
    slow = TransportManager(1, interval=0.05, attempts=20, patience_cap=3.0)
    (frame,) = sends(slow.handle(Send(3, TOKEN), 0.0), TMFrame)
    slow.handle(Receive(3, TMAck(frame.id)), 0.7)              # an ack 0.7 s late
    assert slow.patience(0.7) == pytest.approx(2.1)
    assert _give_up_time(slow) == pytest.approx(2.1, abs=0.06)  # three times it
    very = TransportManager(1, interval=0.05, attempts=20, patience_cap=3.0)
    (frame,) = sends(very.handle(Send(3, TOKEN), 0.0), TMFrame)
    very.handle(Receive(3, TMAck(frame.id)), 2.0)
    assert _give_up_time(very) == pytest.approx(3.0, abs=0.06)  # the cap
    # the slow ack ages: halved every SLOW_HALF_LIFE seconds
    assert slow.patience(0.7 + SLOW_HALF_LIFE) == pytest.approx(1.05)


def test_the_adaptive_detector_waits_for_a_node_it_hears_but_not_past_the_cap():
    tm = TransportManager(1, interval=0.05, attempts=20, patience_cap=3.0)
    # heard until 2 s: the frame waits 1 s of silence after it
    assert _give_up_time(tm, dest_heard_until=2.0) == pytest.approx(3.0, abs=0.06)
    tm = TransportManager(1, interval=0.05, attempts=20, patience_cap=3.0)
    assert _give_up_time(tm, dest_heard_until=1.2) == pytest.approx(2.2, abs=0.06)
    tm = TransportManager(1, interval=0.05, attempts=20, patience_cap=3.0)
    assert _give_up_time(tm, dest_heard_until=10.0) == pytest.approx(3.0, abs=0.06)   # chattering, never acking


def test_an_adaptive_receiver_holds_while_its_sender_is_heard():
    def dropped_at(tm, heard_until):
        tm.handle(Receive(1, TMFrame(7, TOKEN)), 0.0)
        t = 0.0
        while t < 20:
            t = round(t + 0.05, 6)
            if t <= heard_until:
                tm.handle(Receive(1, TMTaken(999)), t)
            if any(isinstance(e, Suspected) for e in tm.handle(TimerFired(TIMER), t)):
                return t
    assert dropped_at(TransportManager(2, interval=0.05, attempts=20), 5.0) == pytest.approx(2.0)
    assert dropped_at(TransportManager(2, interval=0.05, attempts=20, patience_cap=3.0), 0.0) == pytest.approx(2.0)
    assert dropped_at(TransportManager(2, interval=0.05, attempts=20, patience_cap=3.0), 3.0) == pytest.approx(5.0)
    assert dropped_at(TransportManager(2, interval=0.05, attempts=20, patience_cap=3.0), 9.0) == pytest.approx(6.0)


def test_decisions_are_remembered_within_a_bound():
    a = TransportManager(1)
    for k in range(DEDUP + 10):
        (frame,) = sends(a.handle(Send(2, TokenMsg(k + 1, (1, 2), 1, 2, 1)), 0.0), TMFrame)
        a.handle(Receive(2, TMAck(frame.id)), 0.0)
        a.handle(Receive(2, TMTaken(frame.id)), 0.0)
    assert len(a.decided) == DEDUP and not a.pending and not a.confirmed
    assert sends(a.handle(Receive(2, TMAck(1)), 0.0), TMConfirm) == []      # forgotten: no answer
    assert sends(a.handle(Receive(2, TMAck(DEDUP + 10)), 0.0), TMConfirm) == [TMConfirm(DEDUP + 10)]


def test_a_paused_receiver_takes_a_message_or_is_reported_never_both():
    """Node 2 stops for a while (SIGSTOP on the cluster) with frames to it
    on the wire, then runs its backlog: for every message, exactly one of
    "node 2 takes it" and "node 1 reports it undelivered" (then node 2 is
    suspected and takes nothing more of it).  Short pauses and long ones:
    both outcomes occur over the seeds."""
    outcomes = Counter()
    for seed in range(12):
        link = Link(seed, loss=0.1, dup=0.1)
        msgs = [Msg911(1, 1, 2, (1, 2), k, "YES") for k in range(6)]
        for m in msgs[:3]:
            link.run(1, Send(2, m))
        link.paused = True
        pause = random.Random(seed).randrange(0, 40)
        for _ in range(pause):
            link.step()
        for m in msgs[3:]:
            link.run(1, Send(2, m))
        for _ in range(pause):
            link.step()
        link.resume()
        link.settle()
        taken, failed = set(link.up[2]), set(link.failed)
        assert len(link.up[2]) == len(taken) and not taken & failed and taken | failed == set(msgs), seed
        assert bool(link.suspected) == bool(failed) and not set(link.suspected) & taken, seed
        assert not link.tm[1].pending and not link.tm[2].held, seed
        outcomes["suspected" if failed else "clean"] += 1
    assert outcomes["suspected"] and outcomes["clean"], outcomes


def test_garbage_is_a_decode_error():
    frame = codec.encode(TMFrame(3, TOKEN))
    for bad in (frame[:5], frame[:2] + b"\x00\x00\x00\x00" + codec.encode(TMAck(1)),
                codec.encode(TMAck(1))[:-1]):
        with pytest.raises(codec.DecodeError):
            codec.decode(bad)
    assert codec.decode(frame) == TMFrame(3, TOKEN)


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError):
        TransportManager(1, interval=0)
    with pytest.raises(ValueError):
        TransportManager(1, interval=0.05, attempts=20, patience_cap=0.5)   # below the give-up time
    with pytest.raises(ValueError):
        codec.encode(TMAck(0))


def test_the_composed_stack_conforms_on_the_lossy_network():
    """FLUSH over the ring with the ring's messages on the same lossy network
    as FLUSH's (10% loss, 5% duplicates), crashes noticed by the Transport
    Manager's time-out: every drawn run settles, conforms and keeps the
    history clean."""
    verdicts, fig = Counter(), Counter()
    for seed in range(100):
        faults, opts = crf.draw(seed)
        records, line = crf.simulate(seed, faults, {**opts, "tm": True})
        verdicts[crf.replay(from_records(records), visited=False).verdict] += 1
        assert line["settled"] and line["history"] == [], (seed, line["history"])
        fig["crashes"] += len(line["crashed"])
        fig["failures"] += sum(1 for r in records if r.get("name") == "TokenDeliveryFailure")
    assert verdicts == Counter(ok=100)
    assert fig["crashes"] >= 60 and fig["failures"] >= 30, fig


def test_a_report_is_final_for_the_node_not_for_one_frame():
    # b was reported once (slow); a's later frames to b, a claim and a newer
    # token, are aborted at b's first ack and reported to a's ring: b takes
    # nothing more from a and learns at once (spec/RaincoreFlush LossySuspectReportFinal)
    a, b = TransportManager(1, attempts=3), TransportManager(2, attempts=3)
    sends(a.handle(Send(2, TOKEN), 0.0), TMFrame)
    assert give_up(a) == [TOKEN] and a.reported == {2}
    claim, newer = Msg911(1, 1, 2, (1, 2), 6, "YES"), TokenMsg(7, (1, 2), 1, 2, 1)
    for msg in (claim, newer):
        (frame,) = sends(a.handle(Send(2, msg), 0.0), TMFrame)
        (ack,) = sends(b.handle(Receive(1, frame), 0.0), TMAck)
        out = a.handle(Receive(2, ack), 0.0)
        assert sends(out, TMAbort) == [TMAbort(frame.id)] and not sends(out, TMConfirm)
        assert [e.msg for e in out if isinstance(e, DeliveryFailed)] == [msg] and frame.id not in a.pending
        assert b.handle(Receive(1, TMAbort(frame.id)), 0.0) == [Suspected(1, msg)]
    # a node never reported is confirmed as before
    c = TransportManager(3)
    (frame,) = sends(a.handle(Send(3, TOKEN), 0.0), TMFrame)
    (ack,) = sends(c.handle(Receive(1, frame), 0.0), TMAck)
    assert sends(a.handle(Receive(3, ack), 0.0), TMConfirm) == [TMConfirm(frame.id)]


def _ring_node(nid: int):
    return stacks.ring_stack(nid, (1, 2, 3), interval=0.05, attempts=3, init_seq=stacks.steady_seq((1, 2, 3)))


def _frames(out, kind):
    return [codec.decode(e.msg) for e in out if isinstance(e, Send) and isinstance(codec.decode(e.msg), kind)]


def test_a_leaving_node_settles_its_own_frames_and_takes_nothing():
    """Suspected, a node leaves, but first gives the receivers of its own
    open frames their decision (a receiver left waiting leaves as suspected
    in turn: the suspicion would go round the ring); it takes no frame, acks
    none, and tells its ring nothing."""
    a = _ring_node(1)
    tm = a.layer("tm")
    (sent,) = tm.handle(Send(2, TOKEN), 0.0)[:1]           # the ring's token to node 2, waiting for its ack
    frame = sent.msg
    a.handle(Receive(3, codec.encode(TMFrame(7, Msg911(3, 3, 1, (1, 2, 3), 4, "YES")))), 0.0)     # node 3's frame, held
    assert (3, 7) in tm.held
    a.leave()
    assert not tm.held and not a.settled
    # a frame, a confirm or an abort from another node: nothing taken, nothing acked
    for m in (TMFrame(8, TOKEN), TMConfirm(7), TMAbort(7)):
        assert a.handle(Receive(3, codec.encode(m)), 0.0) == []
    # node 2's ack of our token: confirmed (not aborted), then its TMTaken settles it
    out = a.handle(Receive(2, codec.encode(TMAck(frame.id))), 0.0)
    assert _frames(out, TMConfirm) == [TMConfirm(frame.id)]
    out = a.handle(Receive(2, codec.encode(TMTaken(frame.id))), 0.0)
    assert a.settled


def test_a_leaving_node_gives_up_its_frames_without_telling_its_ring():
    a = _ring_node(1)
    a.layer("tm").handle(Send(2, TOKEN), 0.0)
    a.leave()
    ring_before = a.layer("raincore").tokenState
    for k in range(5):                                   # past the give-up (3 attempts)
        out = a.handle(TimerFired("tm/" + TIMER), 0.05 * (k + 1))
        assert not any(isinstance(e, (DeliveryFailed, Suspected)) for e in out)
    assert a.settled and a.layer("raincore").tokenState == ring_before
    assert a.handle(TimerFired("raincore/eating"), 1.0) == []


def test_a_joiners_abort_leaves_the_node_in_place_a_members_does_not():
    """A joiner that gave up on its join request (its 911 to this node) only
    passes the request on (spec 911DeliveryFailure touches no ring state):
    the node drops the frame and stays.  A member's abort is a report the
    ring acts on: the node is suspected and leaves."""
    for orig, suspected in ((4, False), (2, True)):
        a = _ring_node(1)
        req = Msg911(orig, orig, 1, (1, 2, 3), 0, "YES")
        a.handle(Receive(orig, codec.encode(TMFrame(9, req))), 0.0)
        out = a.handle(Receive(orig, codec.encode(TMAbort(9))), 0.0)
        assert [type(e) for e in out if isinstance(e, Suspected)] == ([Suspected] if suspected else [])
        assert not a.layer("tm").held


def test_frames_given_up_in_one_round_are_reported_in_the_specs_order():
    """Three copies of a joiner's 911, to nodes 1, 2 and 3, all given up in
    one retry round: the ring passes each on to the next node in the order
    they are reported.  In the spec's set of messages in transit the copy
    to 2 that node 1's failure passes on is the copy to 2 already there,
    which fails next: what is left in transit is the copy to 1 alone (3's
    failure passed on).  Before, the copy passed on to 2 was a new frame,
    sent after the old one had been given up, and its later failure matched
    no message in transit (found by a chaos run)."""
    from groupcheck.impl.raincore import Join
    node = _ring_node(4)
    tm = node.layer("tm")
    node.handle(Join(), 0.0)                             # its 911 to node 1
    for d in (2, 3):                                     # and copies passed on earlier
        tm.handle(Send(d, Msg911(4, 4, d, (1, 2, 3), 0, "YES")), 0.0)
    assert {m.dest for _, m, _ in tm.pending.values()} == {1, 2, 3}
    t = 0.0
    while not tm.stats.get("delivery_failures"):
        t += 0.05
        node.handle(TimerFired("tm/" + TIMER), t)
    assert tm.stats["delivery_failures"] == 3          # one round
    assert {m.dest for _, m, _ in tm.pending.values()} == {1} and not tm.failing


def test_within_the_abstraction_a_quiet_time_out_makes_the_node_leave():
    """The cluster's ring within the abstraction (LossyRing FALSE) has no
    Hungry or Starving step: a member that has not seen the token for the
    quiet time-out was left out unknowingly and leaves as suspected; over
    the lossy ring the time-out is the spec's step."""
    from groupcheck.impl.ringtransport import Suspected
    from groupcheck.impl.stacks.raincoreflush import cluster_node
    node = cluster_node(2, (1, 2, 3))
    assert node.ring_part.quiet_leaves and not cluster_node(2, (1, 2, 3), lossy=True).ring_part.quiet_leaves
    for name in ("raincore/hungry", "raincore/starving"):
        assert node.ring_part.handle(TimerFired(name), 31.0) == [Suspected(2, None)]
    lossy = cluster_node(2, (1, 2, 3), lossy=True).ring_part
    assert not any(isinstance(e, Suspected) for e in lossy.handle(TimerFired("raincore/hungry"), 2.0))
