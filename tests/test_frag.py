"""Fragmentation (impl/frag.py): a FLUSH message with bodies larger than a datagram crosses
the reliable layer in pieces and arrives whole; everything else is untouched;
malformed or orphaned pieces are counted and dropped."""

from __future__ import annotations

import pytest

from groupcheck.conformance.cluster import judged
from groupcheck.impl import codec
from groupcheck.impl.events import Multicast, Receive, Send, Up, View, ViewChange
from groupcheck.impl.flush import Bodies, FlushOk, ViewMsg
from groupcheck.impl.frag import FRAG_SIZE, MAX_PARTIAL, Frag, Fragment
from groupcheck.impl.stacks import flush as _flush_codec  # noqa: F401  (registers FLUSH's messages)

BODY = b"x" * 20


def digest(n: int) -> tuple:
    return tuple((s, q, BODY) for s in (1, 2, 3) for q in range(1, n + 1))


def test_a_digest_past_a_datagram_crosses_in_pieces_and_arrives_whole():
    big = Bodies(7, digest(2000))                    # 6,000 entries: about 200 KB
    assert len(codec.encode(big, limit=None)) > codec.MAX_FRAME
    with pytest.raises(ValueError, match="exceeds MAX_FRAME"):
        codec.encode(big)                                     # what a stack without this layer hit
    down = Frag(3).handle(Send(1, big), 0.0)
    assert len(down) >= 2 and all(isinstance(e, Send) and e.dest == 1 for e in down)
    for e in down:       # every piece fits a datagram inside the reliable layer's XDATA
        assert len(codec.encode(codec.XData(3, 1, e.msg))) < codec.MAX_FRAME
    up, got = Frag(1), []
    for e in down:
        got += up.handle(Receive(3, codec.decode(codec.encode(e.msg))), 0.0)
    assert got == [Up(3, big)]
    assert up.stats == {"reassembled": 1} and up.partial == {}


def test_a_multicast_view_is_fragmented_as_multicasts():
    view = ViewMsg(2, (1, 3), digest(1500))
    down = Frag(1).handle(Multicast(view), 0.0)
    assert len(down) >= 2 and all(isinstance(e, Multicast) for e in down)
    up = Frag(3)
    assert [x for e in down for x in up.handle(Receive(1, e.msg), 0.0)] == [Up(1, view)]


@pytest.mark.parametrize("msg", [FlushOk(3), Bodies(3, digest(10)), b"raw"])
def test_what_fits_a_datagram_passes_unchanged(msg):
    f = Frag(1)
    assert f.handle(Send(2, msg), 0.0) == [Send(2, msg)]
    assert f.handle(Receive(2, msg), 0.0) == [Up(2, msg)]
    assert f.stats == {}


def _pieces(sender=2, fid=1, n=3):
    data = codec.encode(Bodies(1, digest(2000)), limit=None)
    size = -(-len(data) // n)
    return [Fragment(sender, fid, i, n, data[i * size:(i + 1) * size]) for i in range(n)]


def test_pieces_out_of_order_or_from_another_sender_are_counted_and_dropped():
    a, b, c = _pieces()
    f = Frag(1)
    assert f.handle(Receive(2, b), 0.0) == []               # no first piece yet
    assert f.handle(Receive(3, a), 0.0) == []               # a piece of 2's, from 3
    assert f.stats == {"bad_fragment": 2} and f.partial == {}
    assert f.handle(Receive(2, a), 0.0) == [] and f.handle(Receive(2, c), 0.0) == []   # skips b
    assert f.stats["bad_fragment"] == 3


def test_a_whole_that_does_not_decode_is_counted():
    f = Frag(1)
    junk = [Fragment(2, 9, 0, 2, b"\x01\x17" + b"\xff" * 10), Fragment(2, 9, 1, 2, b"\xff")]
    assert [x for p in junk for x in f.handle(Receive(2, p), 0.0)] == []
    assert f.stats == {"bad_reassembly": 1}


def test_a_source_keeps_few_messages_in_pieces_and_a_view_drops_the_gone():
    f = Frag(1)
    for fid in range(MAX_PARTIAL + 2):
        f.handle(Receive(2, _pieces(fid=fid)[0]), 0.0)
    assert len(f.partial) == MAX_PARTIAL and f.stats["evicted_partial"] == 2
    assert min(k[1] for k in f.partial) == 2                 # the oldest went first
    f.handle(Receive(3, _pieces(sender=3)[0]), 0.0)
    f.handle(ViewChange(View(2, (1, 3))), 0.0)               # 2 left the view
    assert list(f.partial) == [(3, 1)] and f.stats["dropped_partial"] == MAX_PARTIAL


@pytest.mark.parametrize("body, why", [
    (b"\x00\x02" + b"\x00\x00\x00\x01" + b"\x00\x00\x00\x00" + b"\x00\x00\x00\x01" + b"x", "fragment 0 of 1"),
    (b"\x00\x02" + b"\x00\x00\x00\x01" + b"\x00\x00\x00\x02" + b"\x00\x00\x00\x02" + b"x", "fragment 2 of 2"),
    (b"\x00\x02" + b"\x00\x00\x00\x01" + b"\x00\x00\x00\x00" + b"\x00\x00\x00\x02", "fragment of 0 bytes"),
    (b"\x00\x02" + b"\x00\x00\x00\x01" + b"\x00\x00\x00\x00" + b"\x00\x00\x00\x02" + b"x" * (FRAG_SIZE + 1),
     "fragment of"),
    (b"\x00\x02\x00", "truncated"),
])
def test_a_malformed_fragment_is_a_decode_error(body, why):
    with pytest.raises(codec.DecodeError, match=why):
        codec.decode(bytes([codec.VERSION, 50]) + body)


@pytest.mark.slow
def test_a_flush_after_thousands_of_messages_in_one_view(tmp_path):
    """A coordinator-kill run whose view holds thousands of messages: the
    run conforms and nothing is lost, and the flush needs no fragment (its
    digests travel as per-sender seqno runs, impl/stacks/flush.py; as one
    key per message a FLUSH_COMPLETED here took several datagrams)."""
    from groupcheck.impl.cluster import Runner
    res = judged(Runner("sequencerflush", 3, 1500, [(2, 1.4)], tmp_path, rate=1000, timeout=60))
    assert res.verdict == "ok" and res.quiescent and res.history == [], (res.reason, res.history)
    assert sum(s.get("frag.reassembled", 0) for s in res.stats.values()) == 0
    assert res.delivered[1] == res.delivered[3]


def test_a_step_that_raises_stops_the_node():
    """What made the digest's overflow silent: asyncio logged the error and
    the node went on with half a step applied.  Now any error in a node's
    callbacks stops it (impl/runtime.py fail_stop), so the runner reports the
    run as failed instead of checking a trace that no longer describes it."""
    import asyncio
    from types import SimpleNamespace
    from groupcheck.impl.runtime import fail_stop
    loop = asyncio.new_event_loop()
    try:
        node = SimpleNamespace(done=asyncio.Event())
        failed = fail_stop(loop, node)

        def step():
            raise ValueError("frame of 104660 bytes exceeds MAX_FRAME")
        loop.call_soon(step)
        loop.run_until_complete(asyncio.wait_for(node.done.wait(), 5))
        assert failed and node.done.is_set()
    finally:
        loop.close()
