"""The runtime's bundler (impl/runtime.py): the frames a node sends in one
turn of its loop share datagrams up to the MTU, the turn's records are on
disk before its first datagram leaves, a bundle's frames are taken in order,
one that does not split is dropped whole, and a node's frames to itself
skip the socket."""

from __future__ import annotations

import asyncio

from groupcheck.impl import auth, codec, runtime
from groupcheck.impl.events import AppSend, Receive

KEY = b"bundler-key-0123456789abcdef"


def _wired(tmp_path, nid=2, protocol="sequencer"):
    node = runtime.offline_node(tmp_path, KEY, protocol=protocol, nid=nid)
    wire = []
    trace = tmp_path / f"offline-node-{nid}.ndjson"

    def sendto(_self, data, addr):
        wire.append((addr[1], data, trace.read_text().count("\n")))     # the records on disk as it leaves
    node.transport = type("Wire", (), {"sendto": sendto})()
    return node, wire


def _frames_of(data):
    kind, vc, body = runtime.unframe(auth.Verifier(KEY).open(data)[1])
    return kind, vc, codec.decode_bundle(body) if kind == runtime.BUNDLE else [body]


def test_a_turns_frames_share_datagrams_up_to_the_mtu(tmp_path):
    node, wire = _wired(tmp_path)
    frames = [codec.encode(codec.Ack(2, k)) for k in range(1, 201)]     # 19 bytes each
    for f in frames:
        node.send(2, 3, f)
    per = (node.cfg.mtu - runtime.BUNDLE_RESERVE) // (2 + len(frames[0]))
    assert len(wire) == len(frames) // per             # before the turn's end: only the full bundles
    node._flush()
    got = [_frames_of(d) for _port, d, _lines in wire]
    assert all(kind == runtime.BUNDLE for kind, _vc, _fs in got[:-1])
    assert [f for _k, _vc, fs in got for f in fs] == frames          # every frame, in order
    assert all(len(d) <= node.cfg.mtu for _port, d, _lines in wire)
    assert len(wire) == -(-len(frames) // per)        # as few datagrams as the MTU allows
    assert node.stats()["runtime.datagrams"] == len(wire) and node.stats()["runtime.frames"] == len(frames)
    node.writer.close()


def test_a_bundle_holds_frames_up_to_exactly_its_room(tmp_path):
    """Frames whose bytes (2 of length each) come to exactly the room
    (MTU less BUNDLE_RESERVE) share one datagram; one byte more goes to the
    next."""
    node, wire = _wired(tmp_path)
    room = node.cfg.mtu - runtime.BUNDLE_RESERVE
    half = room // 2 - 2
    frames = [bytes([7]) * half, bytes([8]) * (room - 4 - half), b"\x09"]
    assert sum(2 + len(f) for f in frames[:2]) == room
    for f in frames:
        node.send(2, 3, f)
    node._flush()
    got = [_frames_of(d)[2] for _port, d, _lines in wire]
    assert got == [frames[:2], frames[2:]], [len(g) for g in got]
    assert all(len(d) <= node.cfg.mtu for _port, d, _lines in wire)
    node.writer.close()


def test_the_records_of_a_turn_are_on_disk_before_its_first_datagram(tmp_path):
    node, wire = _wired(tmp_path)
    head = (tmp_path / "offline-node-2.ndjson").read_text().count("\n")
    node._step(AppSend(b"x"))                          # a FORWARD to the coordinator, and its record
    assert wire == [] and node.out.parts
    node._flush()
    [(port, data, lines)] = wire
    assert port == node.ports[1] and lines == head + 1                 # the Send record went first
    assert _frames_of(data)[1] == {"2": 1}             # and the datagram's clock counts it
    node.writer.close()


def test_a_bundles_frames_are_taken_in_order_and_a_bad_bundle_whole_dropped(tmp_path):
    node, _wire = _wired(tmp_path)
    taken = []
    node._step = taken.append
    sealer = auth.Sealer(KEY, 1, 1)
    fs = [codec.encode(codec.Ack(1, k)) for k in (1, 2, 3)]
    node.datagram_received(sealer.seal(runtime.frame(runtime.BUNDLE, {"1": 4}, codec.encode_bundle(fs))), None)
    assert taken == [Receive(1, f) for f in fs] and node.writer.vc.get("1") == 4
    node.datagram_received(sealer.seal(runtime.frame(runtime.BUNDLE, {"1": 5}, codec.encode_bundle(fs)[:-1])), None)
    assert len(taken) == 3 and node.dropped == {"bundle": 1}
    node.writer.close()


def test_frames_to_itself_skip_the_socket_and_come_in_at_the_next_turn(tmp_path):
    node, wire = _wired(tmp_path, nid=1)               # the coordinator: its DATA goes to itself too
    node._step(AppSend(b"x"))
    node._flush()
    assert sorted(port for port, _d, _l in wire) == [node.ports[2], node.ports[3]]
    taken = []
    node._step = taken.append
    node.loop.run_until_complete(asyncio.sleep(0))     # the next turn
    assert [type(e).__name__ for e in taken] == ["Receive"] and taken[0].src == 1
    assert node.verifier.counts["accepted"] == 0       # never sealed, never opened
    node.writer.close()
    asyncio.set_event_loop(None)


def test_the_runner_refuses_an_mtu_that_leaves_no_room_for_frames(tmp_path):
    import pytest
    from groupcheck.impl.cluster import ClusterError, Runner
    with pytest.raises(ClusterError, match="mtu"):
        Runner("sequencer", 3, 1, [], tmp_path, mtu=runtime.BUNDLE_RESERVE)
    assert Runner("sequencer", 3, 1, [], tmp_path).mtu == runtime.MTU == 1400


def test_an_empty_frame_goes_alone_after_what_was_queued(tmp_path):
    """A truncation fault may cut a frame to nothing, which a bundle cannot
    carry (its frames are 1 to 65,535 bytes): the frames queued before it
    leave first, then the empty one alone, as a receiver counts and drops it."""
    node, wire = _wired(tmp_path)
    a, b = codec.encode(codec.Ack(2, 1)), codec.encode(codec.Ack(2, 2))
    node.send(2, 3, a)
    node.send(2, 3, b)
    node.send(2, 3, b"")
    node.send(2, 3, a)
    node._flush()
    got = [_frames_of(d)[2] for _port, d, _lines in wire]
    assert got == [[a, b], [b""], [a]]
    node.writer.close()
