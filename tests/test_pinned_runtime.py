"""Decisions of the effect engine and the runtime, each pinned by a test
that fails with its mutant: a cancelled or re-armed timer never fires, a
blocked sender waits until the stack accepts, the backlog bound is exact,
and frames from the runner's id or an unknown id never reach the stack."""

from __future__ import annotations

import asyncio

from groupcheck.impl import auth, codec, runtime
from groupcheck.impl.engine import EffectEngine
from groupcheck.impl.events import CancelTimer, Deliver, Multicast, Send, SetTimer, Trace, TraceEvent
from groupcheck.impl.reliable import Reliable

KEY = b"pinned-key-0123456789abcdef"


class _Net:
    """A network that schedules by handing out numbered tokens."""

    def __init__(self):
        self.now, self.sent, self.tokens = 0.0, [], 0

    def send(self, src, dest, msg):
        self.sent.append((src, dest, msg))

    def multicast(self, src, msg):
        self.sent.append((src, None, msg))

    def schedule(self, at, nid, name):
        self.tokens += 1
        return self.tokens


class _Stack:
    def __init__(self):
        self.next = []

    def handle(self, event, now):
        out, self.next = self.next, []
        return out


def _engine():
    stack, net, records, delivered = _Stack(), _Net(), [], []
    eng = EffectEngine({1: stack}, net, records.append, lambda nid, e: delivered.append((nid, e)))
    return eng, stack, net, records, delivered


def test_a_cancelled_timer_never_fires():
    eng, stack, *_ = _engine()
    stack.next = [SetTimer("t", 1.0)]
    eng.handle(1, "go")
    token = eng.armed(1)["t"]
    stack.next = [CancelTimer("t")]
    eng.handle(1, "go")
    assert not eng.expire(1, "t", token) and not eng.expire(1, "t")


def test_a_rearmed_timer_fires_once_with_its_last_token():
    eng, stack, *_ = _engine()
    stack.next = [SetTimer("t", 1.0)]
    eng.handle(1, "go")
    first = eng.armed(1)["t"]
    stack.next = [SetTimer("t", 2.0)]
    eng.handle(1, "go")
    second = eng.armed(1)["t"]
    assert first != second
    assert not eng.expire(1, "t", first)            # the earlier arming is stale
    assert eng.expire(1, "t", second)
    assert not eng.expire(1, "t", second)           # fired: disarmed


def test_records_before_effects_and_deliveries_to_the_app():
    eng, stack, net, records, delivered = _engine()
    ev = TraceEvent("Send", 1, {"sender": 1, "seqno": 1})
    stack.next = [Send(2, b"x"), Trace(ev), Deliver(1, 1, b"p")]
    eng.handle(1, "go")
    assert [r["name"] for r in records] == ["Send"] and net.sent == [(1, 2, b"x")]
    assert delivered == [(1, Deliver(1, 1, b"p"))]


def test_a_steps_records_go_out_before_its_datagrams_whatever_their_order():
    """A step's Trace effects reach the record sink before any of its
    datagrams reaches the network, even when the stack lists the Send first
    (the runtime's vector clocks count a record before the datagram of its
    step leaves)."""
    order = []
    net = _Net()
    net.send = lambda src, dest, msg: order.append(("send", dest))
    net.multicast = lambda src, msg: order.append(("multicast", None))
    stack = _Stack()
    eng = EffectEngine({1: stack}, net, lambda r: order.append(("record", r["name"])), lambda nid, e: None)
    stack.next = [Send(2, b"x"), Trace(TraceEvent("Send", 1, {})), Multicast(b"y"),
                  Trace(TraceEvent("Deliver", 1, {}))]
    eng.handle(1, "go")
    assert order == [("record", "Send"), ("record", "Deliver"), ("send", 2), ("multicast", None)]


def test_the_backlog_bound_is_exact():
    r = Reliable(1, (1, 2), max_backlog=3, window=1)
    for k in range(2):
        r.handle(Send(2, b"%d" % k), 0.0)
    assert r.retained + r.queued == 2 and not r.blocked
    r.handle(Send(2, b"2"), 0.0)
    assert r.retained + r.queued == 3 and r.blocked


def test_a_blocked_sender_waits_until_the_stack_accepts(tmp_path, monkeypatch):
    """The workload sends nothing while the stack is blocked, however many
    polls that takes (a sender that looked once and went on would send
    into a full backlog)."""
    node = runtime.offline_node(tmp_path, KEY)
    node.cfg.messages, node.cfg.rate = 2, 0
    monkeypatch.setattr(runtime, "BACKPRESSURE_POLL", 0.0)
    polls = {"left": 5}

    def blocked():
        polls["left"] -= 1
        return polls["left"] >= 0

    sends = []
    monkeypatch.setattr(node, "_blocked", blocked)
    monkeypatch.setattr(node, "_step", lambda ev: sends.append(polls["left"]))
    node.loop.run_until_complete(node._workload())
    assert node.backpressured == 5 and sends == [-1, -2]     # both sends after the last blocked poll
    node.writer.close()


def _stack_frame(sender):
    return auth.Sealer(KEY, sender, 1).seal(runtime.frame(runtime.STACK, {str(sender): 1},
                                                          codec.encode(codec.Ack(1, 0))))


def test_stack_frames_from_the_runner_or_a_stranger_never_reach_the_stack(tmp_path):
    node = runtime.offline_node(tmp_path, KEY)
    stepped = []
    node._step = stepped.append
    node.datagram_received(_stack_frame(runtime.RUNNER), None)      # the runner sends commands only
    node.datagram_received(_stack_frame(99), None)                  # no such node
    assert stepped == [] and node.dropped.get("unknown_sender") == 2
    node.datagram_received(_stack_frame(1), None)                   # a member: in
    assert len(stepped) == 1 and node.dropped.get("unknown_sender") == 2
    node.writer.close()


def test_control_frames_from_a_node_are_refused(tmp_path):
    node = runtime.offline_node(tmp_path, KEY)
    commands = []
    node._command = lambda vc, body: commands.append(body)
    node.datagram_received(auth.Sealer(KEY, 1, 1).seal(runtime.frame(runtime.CONTROL, {}, b'{"cmd":"stop"}')), None)
    assert commands == [] and node.dropped.get("control_from_node") == 1
    node.datagram_received(auth.Sealer(KEY, runtime.RUNNER, 1).seal(runtime.frame(runtime.CONTROL, {}, b"{}")), None)
    assert commands == [b"{}"]
    node.writer.close()
    asyncio.set_event_loop(None)


def test_a_real_node_bounds_its_backlog_and_batches_its_acks(tmp_path):
    """The runtime's reliable layer holds at most MAX_BACKLOG frames before
    the sender waits, and acks every ACK_EVERY frames (the simulator's
    defaults are per frame and 4096)."""
    node = runtime.offline_node(tmp_path, KEY)
    rel = node.stack.layer("reliable")
    assert rel.max_backlog == runtime.MAX_BACKLOG < Reliable(1, (1, 2)).max_backlog
    assert rel.ack_every == min(runtime.ACK_EVERY, rel.window) > 1
    for k in range(runtime.MAX_BACKLOG):
        assert not node._blocked(), k
        node.stack.layer("reliable").handle(Send(3, b"%d" % k), 0.0)
    assert node._blocked()
    node.writer.close()


def test_a_nodes_backlog_is_its_config_s(tmp_path):
    """A runner may give its nodes a smaller backlog (the audit's cluster
    stage does, so that its pauses make senders wait): the sender waits
    once that many frames are held or queued."""
    node = runtime.offline_node(tmp_path, KEY, backlog=5)
    rel = node.stack.layer("reliable")
    assert node.cfg.backlog == rel.max_backlog == 5
    for k in range(5):
        assert not node._blocked(), k
        rel.handle(Send(3, b"%d" % k), 0.0)
    assert node._blocked()
    node.writer.close()


class _Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def _quiescer(monkeypatch, script, timeout=60.0):
    """A Runner whose nodes report ``script(t)`` (their status) at fake time t."""
    from groupcheck.impl import cluster
    clock = _Clock()
    monkeypatch.setattr(cluster.time, "monotonic", clock)
    r = cluster.Runner.__new__(cluster.Runner)
    r.n, r.joined, r.settle, r.timeout, r.status = 2, [], 0.5, timeout, {}

    def poll(until):
        clock.t = until
        r.status = script(clock.t)
    r._poll, r._reap = poll, lambda killed, t0: None
    return r, clock


def test_the_quiescence_time_out_counts_from_the_last_sender_finishing(monkeypatch):
    """An unpaced workload still sending 200 s after the start is waited
    out (its count of multicasts sent keeps moving), then found quiescent;
    a sender stuck with messages left is given up ``timeout`` seconds after
    its count last moved, not after the start."""
    def busy(t):
        sent = min(1000, int(t * 5))
        return {m: {"sent": sent, "delivered": sent, "idle": sent == 1000} for m in (1, 2)}
    r, clock = _quiescer(monkeypatch, busy)
    assert r._quiesce(0.0, [], 0.0) is True and clock.t >= 200

    def stuck(t):
        sent = min(300, int(t * 5))
        return {m: {"sent": sent, "delivered": sent, "idle": False} for m in (1, 2)}
    r, clock = _quiescer(monkeypatch, stuck)
    assert r._quiesce(0.0, [], 0.0) is False
    assert 60 + 60 - 1 <= clock.t <= 60 + 60 + 1     # stuck at 60 s, given up a time-out later
