"""Wire codec: round trips, and strict decoding of hostile input."""

import struct

import pytest
from hypothesis import given, strategies as st

from groupcheck.impl import codec
from groupcheck.impl.codec import Ack, Data, DecodeError, Forward, Nak, XData, decode, encode

nodes = st.integers(0, codec.MAX_NODE)
seqnos = st.integers(1, codec.MAX_SEQNO)
payloads = st.binary(max_size=64)
seqmsgs = st.one_of(st.builds(Forward, nodes, seqnos, payloads), st.builds(Data, nodes, seqnos, payloads))
messages = st.one_of(
    seqmsgs,
    st.builds(XData, nodes, seqnos, st.one_of(payloads, seqmsgs)),
    st.tuples(nodes, seqnos, st.integers(0, 1000)).map(lambda t: Nak(t[0], t[1], min(t[1] + t[2], codec.MAX_SEQNO))),
    st.builds(Ack, nodes, st.integers(0, codec.MAX_SEQNO)),
)


@given(messages)
def test_round_trip(msg):
    assert decode(encode(msg)) == msg


@given(st.binary(max_size=80))
def test_random_bytes_only_raise_decode_error(data):
    try:
        msg = decode(data)
    except DecodeError:
        return
    assert encode(msg) == data  # whatever decodes is canonical


@given(messages, st.data())
def test_mutated_frames_only_raise_decode_error(msg, data):
    frame = bytearray(encode(msg))
    op = data.draw(st.sampled_from(["flip", "truncate", "extend", "insert"]))
    if op == "flip":
        i = data.draw(st.integers(0, len(frame) - 1))
        frame[i] ^= data.draw(st.integers(1, 255))
    elif op == "truncate":
        frame = frame[: data.draw(st.integers(0, len(frame) - 1))]
    elif op == "extend":
        frame += data.draw(st.binary(min_size=1, max_size=8))
    else:
        i = data.draw(st.integers(0, len(frame)))
        frame[i:i] = data.draw(st.binary(min_size=1, max_size=4))
    try:
        out = decode(bytes(frame))
    except DecodeError:
        return
    assert encode(out) == bytes(frame)


def test_truncation_and_trailing_bytes_are_errors():
    frame = encode(XData(3, 7, Forward(2, 5, b"hello")))
    for n in range(len(frame)):
        with pytest.raises(DecodeError):
            decode(frame[:n])
    with pytest.raises(DecodeError):
        decode(frame + b"\0")
    # every fixed-size frame too: a byte past its end is refused, not ignored
    for m in (Ack(2, 9), Nak(2, 3, 4), Data(2, 1, b"x")):
        with pytest.raises(DecodeError):
            decode(encode(m) + b"\0")


@pytest.mark.parametrize("bad, why", [
    (bytes([2, codec.T_ACK]) + struct.pack(">HQ", 1, 1), "version"),
    (bytes([1, 99]) + struct.pack(">HQ", 1, 1), "type"),
    (bytes([1, codec.T_NAK]) + struct.pack(">HQQ", 1, 5, 4), "lo > hi"),
    (bytes([1, codec.T_NAK]) + struct.pack(">HQQ", 1, 0, 4), "lo = 0"),
    (bytes([1, codec.T_DATA]) + struct.pack(">HQI", 1, 0, 0), "seqno 0"),
    (bytes([1, codec.T_XDATA]) + struct.pack(">HQBI", 1, 1, 7, 0), "kind"),
    (bytes([1, codec.T_XDATA]) + struct.pack(">HQBI", 1, 1, 1, 12) + encode(Ack(1, 1)), "nested ack"),
    (b"\x01" * (codec.MAX_FRAME + 1), "oversized"),
    (b"", "empty"),
])
def test_malformed_frames(bad, why):
    with pytest.raises(DecodeError):
        decode(bad)


@pytest.mark.parametrize("bad", [None, "text", 42, [1, 2]])
def test_non_bytes_input(bad):
    with pytest.raises(DecodeError):
        decode(bad)


def test_nested_xdata_is_refused():
    inner = encode(XData(1, 1, b"x"))
    bad = bytes([1, codec.T_XDATA]) + struct.pack(">HQBI", 2, 1, 1, len(inner)) + inner
    with pytest.raises(DecodeError):
        decode(bad)


def test_encode_rejects_unrepresentable():
    for bad in [Forward(-1, 1), Data(1, 0), Nak(1, 3, 2), Ack(70000, 1), "x"]:
        with pytest.raises(ValueError):
            encode(bad)
    with pytest.raises(ValueError):
        encode(Data(1, 1, b"x" * codec.MAX_FRAME))


def test_a_frame_of_exactly_max_frame_bytes_is_the_largest_sent_and_received():
    # MAX_FRAME is the largest UDP payload: a frame of that size must go out and come back
    head = len(encode(Data(1, 1, b"")))
    full = Data(1, 1, b"x" * (codec.MAX_FRAME - head))
    assert len(encode(full)) == codec.MAX_FRAME and decode(encode(full)) == full
    with pytest.raises(ValueError, match="exceeds MAX_FRAME"):
        encode(Data(1, 1, b"x" * (codec.MAX_FRAME - head + 1)))


# ---------------------------------------------------------------- extension registry

import struct as _struct
from dataclasses import dataclass as _dataclass


@_dataclass(frozen=True, slots=True)
class _Ping:
    sender: int
    n: int


_PING = _struct.Struct(">HI")


def _ping_decode(body: bytes):
    sender, n = codec.unpack(_PING, body)
    codec.need(len(body) == _PING.size, "trailing bytes")
    return _Ping(sender, n)


def _register_ping():
    codec.register(255, _Ping, lambda m: _PING.pack(m.sender, m.n), _ping_decode)


def test_registered_type_round_trips_alone_and_inside_xdata():
    _register_ping()
    assert codec.registered()[255] is _Ping
    m = _Ping(3, 7)
    assert codec.decode(codec.encode(m)) == m
    x = codec.XData(2, 5, m)
    assert codec.decode(codec.encode(x)) == x


def test_registered_type_is_decoded_strictly():
    _register_ping()
    frame = codec.encode(_Ping(3, 7))
    for bad in (frame[:-1], frame + b"\x00", frame[:2]):
        with pytest.raises(codec.DecodeError):
            codec.decode(bad)


def test_a_body_decoder_slip_becomes_decode_error():
    @_dataclass(frozen=True)
    class Boom:
        x: int
    codec.register(254, Boom, lambda m: b"x", lambda body: body[10])  # IndexError on short bodies
    with pytest.raises(codec.DecodeError, match="IndexError"):
        codec.decode(codec.encode(Boom(1)))


def test_register_refuses_builtin_codes_and_a_taken_code():
    _register_ping()
    with pytest.raises(ValueError):
        codec.register(3, _Ping, bytes, _ping_decode)

    @_dataclass(frozen=True)
    class Other:
        x: int
    with pytest.raises(ValueError, match="already taken"):
        codec.register(255, Other, bytes, _ping_decode)


# -- bundles: the frames of one datagram (impl/runtime.py's bundler) ------------------------------

@given(st.lists(messages, min_size=2, max_size=12))
def test_a_bundle_splits_into_its_frames(msgs):
    frames = [encode(m) for m in msgs]
    assert codec.decode_bundle(codec.encode_bundle(frames)) == frames
    assert [decode(f) for f in codec.decode_bundle(codec.encode_bundle(frames))] == msgs


@given(st.lists(messages, min_size=2, max_size=6), st.data())
def test_mutated_bundles_only_raise_decode_error(msgs, data):
    b = bytearray(codec.encode_bundle([encode(m) for m in msgs]))
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(b) - 1))
        b[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(b)))
    for bad in (bytes(b), bytes(b[:cut])):
        try:
            for f in codec.decode_bundle(bad):
                try:
                    decode(f)
                except DecodeError:
                    pass
        except DecodeError:
            pass


def test_a_bundle_is_decoded_strictly():
    a, b = encode(Ack(1, 2)), encode(Nak(1, 1, 3))
    good = codec.encode_bundle([a, b])
    assert codec.decode_bundle(good) == [a, b]
    for bad, why in ((good[:-1], "truncated frame"), (good + b"\0", "trailing"), (good[:3], "truncated bundle"),
                     (bytes([2]) + good[1:], "unknown version"), (a, "not a bundle"),
                     (good[:2] + struct.pack(">H", 1) + good[4:], "a bundle of 1"),
                     (good[:2] + struct.pack(">HH", 2, 0) + good[6:], "empty frame"), ("x", "not bytes")):
        with pytest.raises(DecodeError, match=why):
            codec.decode_bundle(bad)
    with pytest.raises(DecodeError, match="unknown type 6"):
        decode(good)                                  # a bundle is no message: never inside XDATA or a bundle
    with pytest.raises(ValueError):
        codec.encode_bundle([a])
    with pytest.raises(ValueError):
        codec.encode_bundle([a, b""])
