"""The Raincore Transport Manager on a lossy network (impl/ringtransport.py):
reliable unicast of the ring's messages and the failure detector of seed
004, and the composed stack running on it (impl/sim_raincoreflush.py with
``tm=True``)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from groupcheck.conformance import raincoreflush as crf
from groupcheck.conformance.traces import from_records
from groupcheck.impl import codec
from groupcheck.impl.engine import Engine
from groupcheck.impl.events import Receive, Send, TimerFired, Up
from groupcheck.impl.raincore import DeliveryFailed, Msg911, TokenMsg
from groupcheck.impl.ringtransport import TIMER, TMAck, TMFrame, TransportManager
from groupcheck.impl.stacks import raincoreflush as stacks  # noqa: F401  (registers codec 32, 33)

TOKEN = TokenMsg(5, (1, 2, 3), 1, 2, 1)


class Link:
    """Two Transport Managers over a lossy, duplicating, reordering link, driven step by step:
    the effect engine's network policy (impl/engine.py)."""

    now = 0.0

    def __init__(self, seed: int, loss: float, dup: float, down: bool = False) -> None:
        self.rng = random.Random(seed)
        self.loss, self.dup, self.down = loss, dup, down
        self.tm = {1: TransportManager(1), 2: TransportManager(2)}
        self.engine = Engine(self.tm, self, lambda record: None, self._deliver)
        self.wire: list = []
        self.up: dict[int, list] = {1: [], 2: []}
        self.failed: list = []
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

    def step(self) -> bool:
        # a datagram takes milliseconds, the retry timer 20 ms: the timer
        # fires only once the wire is quiet (any order of delivery)
        if self.wire:
            src, dest, frame = self.wire.pop(self.rng.randrange(len(self.wire)))
            if not (self.down and dest == 2):
                self.run(dest, Receive(src, codec.decode(frame)))
            return True
        armed = [n for n, on in self.timer.items() if on]
        if armed:
            n = self.rng.choice(armed)
            self.timer[n] = False
            if self.engine.expire(n, TIMER):
                self.run(n, TimerFired(TIMER))
            return True
        return bool(self.wire)


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


def test_a_token_taken_answers_the_nodes_own_911():
    tm = TransportManager(3)
    tm.handle(Send(1, Msg911(3, 3, 1, (1, 2), 0, "YES")), 0.0)
    tm.handle(Send(1, Msg911(2, 3, 1, (1, 2), 0, "YES")), 0.0)      # one it passes on: kept
    tm.handle(Receive(1, TMFrame(1, TokenMsg(9, (1, 3, 2), 1, 3, 1))), 0.0)
    assert [m.orig for _, m, _ in tm.pending.values()] == [2]


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
