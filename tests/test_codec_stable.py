"""Wire format of the STABLE messages (type codes 10 and 11, impl/stable.py):
round trips, strict decoding, and Hypothesis on random and mutated frames."""

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groupcheck.impl import codec
from groupcheck.impl.codec import XData
from groupcheck.impl.stable import StabilityMsg, StableMsg
from groupcheck.impl.stacks.stable import T_STABILITY, T_STABLE
from codec_helpers import canonical_or_refused, cut_and_extended_refused

nodes = st.integers(0, codec.MAX_NODE)
seqnos = st.integers(0, codec.MAX_SEQNO)
counters = st.integers(1, codec.MAX_SEQNO)


@st.composite
def vectors(draw):
    members = sorted(draw(st.sets(st.integers(0, codec.MAX_NODE), max_size=8)))
    return tuple((m, draw(seqnos)) for m in members)


@st.composite
def digests(draw):
    members = sorted(draw(st.sets(st.integers(0, codec.MAX_NODE), max_size=8)))
    out = []
    for m in members:
        lo = draw(seqnos)
        out.append((m, lo, draw(st.integers(lo, codec.MAX_SEQNO))))
    return tuple(out)


messages = st.one_of(st.builds(StableMsg, nodes, counters, vectors(), st.booleans()),
                     st.builds(StabilityMsg, nodes, counters, digests()))


def test_registered_under_the_stable_codes():
    assert codec.registered()[T_STABLE] is StableMsg and codec.registered()[T_STABILITY] is StabilityMsg


def test_layout_is_the_documented_one():
    frame = codec.encode(StableMsg(2, 7, ((1, 3), (2, 4)), True))
    assert frame == struct.pack(">BBHQBH", 1, 10, 2, 7, 1, 2) + struct.pack(">HQ", 1, 3) + struct.pack(">HQ", 2, 4)
    frame = codec.encode(StabilityMsg(1, 1, ((3, 0, 5),)))
    assert frame == struct.pack(">BBHQH", 1, 11, 1, 1, 1) + struct.pack(">HQQ", 3, 0, 5)


@given(messages)
def test_round_trip(msg):
    assert codec.decode(codec.encode(msg)) == msg


@given(messages, st.integers(1, codec.MAX_SEQNO))
def test_round_trip_nested_in_reliable_data(msg, q):
    x = XData(3, q, msg)
    assert codec.decode(codec.encode(x)) == x


@given(messages, st.data())
def test_every_truncation_and_extension_is_refused(msg, data):
    cut_and_extended_refused(codec.encode(msg), data, 20)


@given(messages, st.data())
def test_mutated_frames_decode_exactly_or_raise(msg, data):
    frame = bytearray(codec.encode(msg))
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(frame) - 1))
        frame[i] = data.draw(st.integers(0, 255))
    canonical_or_refused(bytes(frame))


@given(st.binary(max_size=200))
def test_random_bytes_under_the_stable_codes_never_crash(body):
    for t in (T_STABLE, T_STABILITY):
        canonical_or_refused(bytes([codec.VERSION, t]) + body)


@pytest.mark.parametrize("body, why", [
    (struct.pack(">HQBH", 1, 0, 0, 0), "counter 0"),
    (struct.pack(">HQBH", 1, 1, 2, 0), "unknown flags 2"),
    (struct.pack(">HQBH", 1, 1, 0, 2) + struct.pack(">HQ", 2, 0) + struct.pack(">HQ", 1, 0), "not strictly increasing"),
    (struct.pack(">HQBH", 1, 1, 0, 2) + struct.pack(">HQ", 2, 0) + struct.pack(">HQ", 2, 0), "not strictly increasing"),
    (struct.pack(">HQBH", 1, 1, 0, 1), "length"),
    (struct.pack(">HQBH", 1, 1, 0, 0) + b"\0", "length"),
    (struct.pack(">HQB", 1, 1, 0), "truncated"),
])
def test_malformed_stable_bodies(body, why):
    with pytest.raises(codec.DecodeError, match=why):
        codec.decode(bytes([codec.VERSION, T_STABLE]) + body)


def test_stability_low_above_high_is_refused_both_ways():
    with pytest.raises(codec.DecodeError, match="low > high"):
        codec.decode(bytes([1, T_STABILITY]) + struct.pack(">HQH", 1, 1, 1) + struct.pack(">HQQ", 1, 5, 4))
    with pytest.raises(ValueError):
        codec.encode(StabilityMsg(1, 1, ((1, 5, 4),)))


@pytest.mark.parametrize("msg", [
    StableMsg(1, 0, ()),                      # counter 0
    StableMsg(1, 1, ((2, 0), (1, 0))),        # unsorted
    StableMsg(1 << 16, 1, ()),                # sender too large
    StableMsg(1, 1, ((1, -1),)),              # negative seqno
    StableMsg(1, 1, ((1 << 16, 0),)),        # member too large
    StableMsg(1, 1, (), 1),                   # reply flag not a bool
    StabilityMsg(1, 1, ((1, 0),)),            # wrong width
])
def test_encode_refuses_unrepresentable_messages(msg):
    with pytest.raises(ValueError):
        codec.encode(msg)
