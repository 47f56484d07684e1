"""The FLUSH wire messages (codec type codes 20-27): round trips and strict decoding."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from groupcheck.impl import codec
from groupcheck.impl.flush import Bodies, FData, FetchBodies, FlushCompleted, FlushOk, StartFlush, StopFlush, ViewMsg
from groupcheck.impl.stacks.flush import T_COMPLETED, T_FDATA, T_OK, T_START, T_STOP, T_VIEW
from codec_helpers import canonical_or_refused, cut_and_extended_refused

nodes = st.integers(min_value=1, max_value=codec.MAX_NODE)
seqnos = st.integers(min_value=1, max_value=codec.MAX_SEQNO)
views = st.integers(min_value=1, max_value=0xFFFF_FFFF)
raw = st.binary(max_size=40)
upper = st.builds(codec.Data, nodes, seqnos, raw) | st.builds(codec.Forward, nodes, seqnos, raw)
bodies = raw | upper


@st.composite
def entries(draw):
    keys = sorted(set(draw(st.lists(st.tuples(nodes, seqnos), max_size=5))))
    return tuple((s, q, draw(bodies | st.none())) for s, q in keys)     # None: held by every receiver


members = st.lists(nodes, min_size=1, max_size=6, unique=True).map(lambda xs: tuple(sorted(xs)))
messages = st.one_of(
    st.builds(FData, views, nodes, seqnos, bodies),
    st.builds(StartFlush, views), st.builds(FlushOk, views), st.builds(StopFlush, views),
    entries().map(lambda es: FlushCompleted(3, tuple((s, q, None) for s, q, _ in es))),
    st.builds(ViewMsg, views, members, entries()),
    entries().map(lambda es: FetchBodies(1, tuple((s, q, None) for s, q, _ in es))),
    entries().map(lambda es: Bodies(2, tuple((s, q, b if b is not None else b"") for s, q, b in es))),
)


def test_type_codes_are_in_the_flush_block():
    reg = codec.registered()
    for code, cls in ((T_FDATA, FData), (T_START, StartFlush), (T_OK, FlushOk), (T_COMPLETED, FlushCompleted),
                      (T_VIEW, ViewMsg), (T_STOP, StopFlush)):
        assert 20 <= code <= 29 and reg[code] is cls


@given(messages)
def test_round_trip(m):
    b = codec.encode(m)
    assert b[1] in range(20, 28)
    assert codec.decode(b) == m


@given(messages, seqnos)
def test_round_trip_nested_in_reliable_data(m, q):
    x = codec.XData(7, q, m)
    assert codec.decode(codec.encode(x)) == x


@settings(max_examples=300)
@given(messages, st.data())
def test_truncation_and_trailing_bytes_are_refused(m, data):
    cut_and_extended_refused(codec.encode(m), data, 4)


@settings(max_examples=500)
@given(messages, st.data())
def test_mutated_frames_decode_to_a_faithful_message_or_raise(m, data):
    b = bytearray(codec.encode(m))
    for _ in range(data.draw(st.integers(min_value=1, max_value=3))):
        b[data.draw(st.integers(min_value=0, max_value=len(b) - 1))] = data.draw(st.integers(0, 255))
    canonical_or_refused(bytes(b))


@given(st.binary(max_size=64))
def test_random_bytes_after_a_flush_header_never_crash(tail):
    for code in range(20, 28):
        canonical_or_refused(bytes([codec.VERSION, code]) + tail)


def _frame(code: int, body) -> bytes:
    return bytes([codec.VERSION, code]) + (bytes.fromhex(body) if isinstance(body, str) else body)


def RUN(s: int, lo: int, hi: int) -> str:
    return f"{s:04x}{lo:016x}{hi:016x}"


def test_a_whole_views_digest_costs_a_run_per_sender():
    keys = tuple((s, q, None) for s in (1, 2, 3) for q in range(1, 20_001))
    b = codec.encode(FlushCompleted(4, keys))
    assert len(b) < 100 and codec.decode(b) == FlushCompleted(4, keys)
    gap = keys[:5] + keys[6:]                     # one seqno missing: two runs for sender 1
    assert len(codec.encode(FlushCompleted(4, gap))) == len(b) + 18


@pytest.mark.parametrize("frame, why", [
    (_frame(T_START, b"\0\0\0\0"), "view 0"),
    (_frame(T_FDATA, bytes.fromhex("00000001" "0000" "0000000000000001" "00" "00000000")), "sender or seqno 0"),
    (_frame(T_FDATA, bytes.fromhex("00000001" "0001" "0000000000000001" "07" "00000000")), "unknown body kind"),
    (_frame(T_VIEW, bytes.fromhex("00000001" "00000000" "0002" "0003" "0002" "00000000")), "not sorted"),
    (_frame(T_VIEW, bytes.fromhex("00000001" "00000000" "0000" "0000")), "truncated member list"),
    (_frame(T_VIEW, bytes.fromhex("00000001" "0000")), "truncated"),
    (_frame(T_FDATA, bytes.fromhex("00000001" "0001" "0000000000000001" "02" "00000000")), "unknown body kind"),
    # digests: "00000001" the view, then the runs of held keys (count; sender, first, last),
    # then the entries given with a body (count; sender, seqno, body)
    (_frame(26, "00000001" + "00000000" + "00000001" + "0001" "0000000000000001" "00" "00000000"), "with bodies"),
    (_frame(T_COMPLETED, "00000001" + "00000000" + "00000001" + "0001" "0000000000000001" "00" "00000000"),
     "with bodies"),
    (_frame(27, "00000001" + "00000001" + RUN(1, 1, 1) + "00000000"), "without bodies"),
    (_frame(T_COMPLETED, "00000001" + "00000002" + RUN(1, 1, 1) + RUN(1, 2, 2) + "00000000"),
     "runs not sorted, disjoint and maximal"),
    (_frame(T_COMPLETED, "00000001" + "00000002" + RUN(2, 1, 1) + RUN(1, 5, 6) + "00000000"),
     "runs not sorted, disjoint and maximal"),
    (_frame(T_COMPLETED, "00000001" + "00000001" + RUN(1, 2, 1) + "00000000"), "backwards"),
    (_frame(T_COMPLETED, "00000001" + "00000001" + RUN(1, 0, 1) + "00000000"), "seqno 0"),
    (_frame(T_COMPLETED, "00000001" + "00000001" + RUN(1, 1, 1 << 40) + "00000000"), "too many held keys"),
    (_frame(T_COMPLETED, "00000001" + "00000005" + RUN(1, 1, 1)), "truncated runs"),
    (_frame(T_VIEW, "00000001" "00000000" "0001" "0001" + "00000001" + RUN(1, 1, 1) + "00000001"
            + "0001" "0000000000000001" "00" "00000000"), "a key both held and given"),
    (_frame(27, "00000001" + "00000000" + "00000002" + "0002" "0000000000000001" "00" "00000000"
            + "0001" "0000000000000001" "00" "00000000"), "not sorted and distinct"),
])
def test_specific_malformed_frames(frame, why):
    with pytest.raises(codec.DecodeError, match=why):
        codec.decode(frame)


def test_a_flush_message_cannot_nest_in_fdata():
    inner = codec.encode(StartFlush(1))
    body = bytes([codec.K_FRAME]) + len(inner).to_bytes(4, "big") + inner
    frame = _frame(T_FDATA, (1).to_bytes(4, "big") + (1).to_bytes(2, "big") + (1).to_bytes(8, "big") + body)
    with pytest.raises(codec.DecodeError, match="cannot be a StartFlush"):
        codec.decode(frame)
    with pytest.raises(ValueError):
        codec.encode(FData(1, 1, 1, StartFlush(1)))


def test_encoding_refuses_what_the_wire_cannot_say():
    for bad in (StartFlush(0), FData(1, 0, 1), ViewMsg(1, (2, 1)), ViewMsg(1, ()),
                Bodies(1, ((2, 1, b""), (1, 1, b""))), FlushCompleted(1, ((1, 1, b""),))):
        with pytest.raises(ValueError):
            codec.encode(bad)
