"""FLUSH's stack and wire codec (the layer file, impl/flush.py, keeps the
layer logic only).

* ``FlushStack``: a ``Stack`` whose views come through its flush layer;
  ``flush_stack`` builds FLUSH alone under the application (transport,
  reliable, flush).
* The codec of FLUSH's messages, type codes 20-29 (impl/codec.py
  ``register``, done at import)::

    FDATA            view:u32 sender:u16 seqno:u64 body
    START_FLUSH, FLUSH_OK, STOP_FLUSH   view:u32
    FLUSH_COMPLETED  view:u32 count:u16 (sender:u16 seqno:u64 body)*count
    VIEW             view:u32 ring:u32 n:u16 members:u16*n count:u16 entries as above
    FETCH (26), BODIES (27)  view:u32 entries as above (FETCH: every body held,
                     BODIES: none; the layer's own, untraced: impl/flush.py)
                     (ring: the ring's number of the view with the Raincore ring
                     as membership, 0 otherwise)
    body             kind:u8 (0 raw, 1 frame, 2 held: none, len 0) len:u32 bytes[len]

  Decoding is as strict as the base codec's: digest entries sorted and
  distinct, members sorted and distinct, no zero view, sender or seqno, no
  trailing bytes; a body may be a frame of the layer above, never a FLUSH
  or reliable frame.
"""

from __future__ import annotations

import struct
from typing import Any

from .. import codec
from ..events import AppSend, Effect, ViewChange
from ..flush import (FETCH_MESSAGES, FLUSH_MESSAGES, AppBlock, AppUnblock, BlockOk, Bodies, FetchBodies, Flush,
                     FlushCompleted, FlushOk, FData, Installed, JoinRequest, LeaveRequest, Membership, RingView, StartFlush, StopFlush, Suspect,
                     ViewMsg)
from ..layer import bump
from ..protocols import HistoryProjection, ImplProtocol
from ..frag import Frag
from ..reliable import Reliable
from ..stack import Stack, Transport

T_FDATA, T_START, T_OK, T_COMPLETED, T_VIEW, T_STOP = 20, 21, 22, 23, 24, 25
T_FETCH, T_BODIES = 26, 27

_U32 = struct.Struct(">I")
_VIEW = _U32                          # view: u32
_FDATA = struct.Struct(">IHQ")        # view, sender, seqno; then a body
_BODYHDR = struct.Struct(">BI")       # kind (0 raw, 1 frame), len
_ENTRY = struct.Struct(">HQ")         # sender, seqno; then a body
_COUNT = struct.Struct(">H")            # a VIEW's members
_ENTRIES = _U32                       # a digest's entries: a view may hold more than 65,535 messages
_RUN = struct.Struct(">HQQ")          # sender, first and last seqno of a run of held keys
MAX_HELD = 1 << 22                    # held keys one message may stand for (runs are tiny on the wire)
_RING = _U32                          # a VIEW's ring number: u32
MAX_VIEW = 0xFFFF_FFFF


def _enc_body(body) -> bytes:
    if isinstance(body, (bytes, bytearray)):
        return _BODYHDR.pack(codec.K_RAW, len(body)) + bytes(body)
    if isinstance(body, FLUSH_MESSAGES + FETCH_MESSAGES) or isinstance(body, (codec.XData, codec.Nak, codec.Ack)):
        raise ValueError(f"a FLUSH body cannot be a {type(body).__name__}")
    frame = codec.encode(body)
    return _BODYHDR.pack(codec.K_FRAME, len(frame)) + frame


def _dec_body(buf: bytes, at: int) -> tuple[Any, int]:
    kind, n = codec.unpack(_BODYHDR, buf, at)
    start = at + _BODYHDR.size
    codec.need(len(buf) - start >= n, "truncated body")
    raw = buf[start:start + n]
    if kind == codec.K_RAW:
        return raw, start + n
    codec.need(kind == codec.K_FRAME, f"unknown body kind {kind}")
    inner = codec.decode(raw)
    codec.need(not isinstance(inner, FLUSH_MESSAGES + FETCH_MESSAGES + (codec.XData, codec.Nak, codec.Ack)),
               f"a FLUSH body cannot be a {type(inner).__name__}")
    return inner, start + n


def _check(cond: bool, what: str) -> None:
    if not cond:
        raise ValueError(what)


def _check_view(v) -> None:
    _check(type(v) is int and 1 <= v <= MAX_VIEW, f"view out of range: {v!r}")


def _check_key(s, q) -> None:
    _check(type(s) is int and 1 <= s <= codec.MAX_NODE, f"sender out of range: {s!r}")
    _check(type(q) is int and 1 <= q <= codec.MAX_SEQNO, f"seqno out of range: {q!r}")


def _enc_entries(entries) -> bytes:
    """A digest: the keys without a body (held by every receiver, or asked
    for) as maximal per-sender runs of seqnos, then the entries with one.  A
    view's messages are each sender's consecutive seqnos, so a digest of the
    whole view costs a run per sender on the wire, not a key per message."""
    runs: list = []
    given: list = []
    prev = (0, 0)
    held = 0
    for s, q, body in entries:
        _check((s, q) > prev, "digest entries must be sorted and distinct")
        prev = (s, q)
        if body is not None:
            given.append((s, q, body))
        elif runs and runs[-1][0] == s and runs[-1][2] == q - 1:
            runs[-1][2] = q
            held += 1
        else:
            runs.append([s, q, q])
            held += 1
    _check(held <= MAX_HELD and len(given) <= 0xFFFF_FFFF, "too many digest entries")
    out = [_ENTRIES.pack(len(runs))]
    for s, lo, hi in runs:
        _check_key(s, lo)
        _check_key(s, hi)
        out.append(_RUN.pack(s, lo, hi))
    out.append(_ENTRIES.pack(len(given)))
    for s, q, body in given:
        _check_key(s, q)
        out.append(_ENTRY.pack(s, q) + _enc_body(body))
    return b"".join(out)


def _dec_entries(buf: bytes, at: int) -> tuple[tuple, int]:
    (n,) = codec.unpack(_ENTRIES, buf, at)
    at += _ENTRIES.size
    codec.need(len(buf) - at >= n * _RUN.size, "truncated runs")
    held: list = []
    last = (0, 0)
    for _ in range(n):
        s, lo, hi = codec.unpack(_RUN, buf, at)
        at += _RUN.size
        codec.need(s >= 1 and 1 <= lo <= hi, "run with sender or seqno 0, or backwards")
        codec.need((s, lo) > (last[0], last[1] + 1), "runs not sorted, disjoint and maximal")
        codec.need(hi - lo < MAX_HELD - len(held), "too many held keys")
        held.extend((s, q, None) for q in range(lo, hi + 1))
        last = (s, hi)
    (n,) = codec.unpack(_ENTRIES, buf, at)
    at += _ENTRIES.size
    given = []
    for _ in range(n):
        s, q = codec.unpack(_ENTRY, buf, at)
        codec.need(s >= 1 and q >= 1, "digest entry with sender or seqno 0")
        body, at = _dec_body(buf, at + _ENTRY.size)
        given.append((s, q, body))
    keys = [(s, q) for s, q, _ in given]
    codec.need(keys == sorted(set(keys)), "digest entries not sorted and distinct")
    if not given:
        return tuple(held), at
    out = sorted(held + given, key=lambda e: (e[0], e[1]))
    codec.need(len({(s, q) for s, q, _ in out}) == len(out), "a key both held and given")
    return tuple(out), at


def _view_of(buf: bytes) -> int:
    (v,) = codec.unpack(_VIEW, buf)
    codec.need(v >= 1, "view 0")
    return v


def _enc_fdata(m: FData) -> bytes:
    _check_view(m.view)
    _check_key(m.sender, m.seqno)
    return _FDATA.pack(m.view, m.sender, m.seqno) + _enc_body(m.body)


def _dec_fdata(buf: bytes) -> FData:
    v, s, q = codec.unpack(_FDATA, buf)
    codec.need(v >= 1 and s >= 1 and q >= 1, "view, sender or seqno 0")
    body, end = _dec_body(buf, _FDATA.size)
    codec.need(end == len(buf), "trailing bytes")
    return FData(v, s, q, body)


def _simple(cls):
    def enc(m) -> bytes:
        _check_view(m.view)
        return _VIEW.pack(m.view)

    def dec(buf: bytes):
        codec.need(len(buf) == _VIEW.size, "truncated or trailing bytes")
        return cls(_view_of(buf))
    return enc, dec


def _enc_view(m: ViewMsg) -> bytes:
    _check_view(m.view)
    _check(type(m.ring) is int and 0 <= m.ring <= 0xFFFF_FFFF, f"ring number out of range: {m.ring!r}")
    _check(1 <= len(m.members) <= 0xFFFF, "a view needs 1..65535 members")
    _check(list(m.members) == sorted(set(m.members)), "view members must be sorted and distinct")
    for x in m.members:
        _check(type(x) is int and 1 <= x <= codec.MAX_NODE, f"member out of range: {x!r}")
    return (_VIEW.pack(m.view) + _RING.pack(m.ring) + _COUNT.pack(len(m.members))
            + b"".join(struct.pack(">H", x) for x in m.members) + _enc_entries(m.entries))


def _dec_view(buf: bytes) -> ViewMsg:
    v = _view_of(buf)
    (ring,) = codec.unpack(_RING, buf[_VIEW.size:])
    (n,) = codec.unpack(_COUNT, buf[_VIEW.size + _RING.size:])
    at = _VIEW.size + _RING.size + _COUNT.size
    codec.need(n >= 1 and len(buf) - at >= 2 * n, "truncated member list")
    members = struct.unpack_from(f">{n}H", buf, at)
    codec.need(list(members) == sorted(set(members)) and members[0] >= 1, "members not sorted, distinct, >= 1")
    entries, end = _dec_entries(buf, at + 2 * n)
    codec.need(end == len(buf), "trailing bytes")
    return ViewMsg(v, tuple(members), entries, ring)


def _digest_codec(cls, held: bool):
    """FLUSH_COMPLETED and FETCH (keys only: every entry held) and BODIES
    (every body given)."""
    def enc(m) -> bytes:
        _check_view(m.view)
        _check(all((body is None) == held for _, _, body in m.entries),
               f"{cls.__name__} entries must {'not ' if held else ''}carry bodies")
        return _VIEW.pack(m.view) + _enc_entries(m.entries)

    def dec(buf: bytes):
        v = _view_of(buf)
        entries, end = _dec_entries(buf, _VIEW.size)
        codec.need(end == len(buf), "trailing bytes")
        codec.need(all((body is None) == held for _, _, body in entries),
                   f"{cls.__name__} entries {'with' if held else 'without'} bodies")
        return cls(v, entries)
    return enc, dec


def register() -> None:
    """Register the FLUSH messages with the codec (done at import)."""
    codec.register(T_FDATA, FData, _enc_fdata, _dec_fdata)
    codec.register(T_START, StartFlush, *_simple(StartFlush))
    codec.register(T_OK, FlushOk, *_simple(FlushOk))
    # a digest holds every message of the view: impl/frag.py fragments these past a datagram
    codec.register(T_COMPLETED, FlushCompleted, *_digest_codec(FlushCompleted, True), bounded=False)
    codec.register(T_VIEW, ViewMsg, _enc_view, _dec_view, bounded=False)
    codec.register(T_STOP, StopFlush, *_simple(StopFlush))
    codec.register(T_FETCH, FetchBodies, *_digest_codec(FetchBodies, True), bounded=False)
    codec.register(T_BODIES, Bodies, *_digest_codec(Bodies, False), bounded=False)


register()


# ---------------------------------------------------------------- the stack around the layer

class FlushStack(Stack):
    """A ``Stack`` with a FLUSH layer named ``flush``.  On top of ``Stack``'s
    routing: ``Suspect`` and ``BlockOk`` events go to the flush layer;
    its ``Installed(view)`` becomes a ``ViewChange`` of every other layer
    (below first, so the reliable layer sends to the new members before the
    layer above reacts to the view); its ``Membership(view)`` one of the
    layers below only; ``AppBlock``/``AppUnblock`` leave the node (they
    are the application's callbacks).  A ``ViewChange`` from outside is
    refused: views come through the flush."""

    def __init__(self, nid: int, layers: list, *, hold_sends: bool = False) -> None:
        super().__init__(nid, layers)
        if "flush" not in self._index:
            raise ValueError("a FlushStack needs a layer named 'flush'")
        self.flush_index = self._index["flush"]
        # hold_sends: the latch sits above the top layer (spec/SequencerFlush's
        # Send waits while blocked): an application send that arrives while
        # the flush layer is blocked waits here, and is handed to the top
        # layer, in order, at the end of the first event after which the latch
        # is open.  Without it the latch is the flush layer's (multicasts only).
        self.hold_sends = hold_sends
        self.held: list[AppSend] = []

    @property
    def flush(self) -> Flush:
        return self.layers[self.flush_index]

    def handle(self, event, now: float) -> list[Effect]:
        if self.hold_sends and isinstance(event, AppSend) and self._holding():
            self.held.append(event)
            bump(self.flush.stats, "held_sends")
            return []
        if isinstance(event, (Suspect, BlockOk, LeaveRequest, JoinRequest, RingView)):
            out: list[Effect] = []
            self._run(self.flush_index, event, now, out)
        elif isinstance(event, ViewChange):
            raise TypeError("views of a FlushStack come through its flush layer")
        else:
            out = super().handle(event, now)
        while self.held and not self._latched():
            out += super().handle(self.held.pop(0), now)
        return out

    def _latched(self) -> bool:
        """The latch is closed: a flush has blocked this member, or it is a
        joiner in no view yet (spec Send: only a member multicasts)."""
        return self.flush.blocked or self.flush.vid == 0

    def _holding(self) -> bool:
        return self._latched() or bool(self.held)

    def _route(self, i: int, eff, now: float, out: list) -> bool:
        if isinstance(eff, (AppBlock, AppUnblock)):
            out.append(eff)
            return True
        if isinstance(eff, (Installed, Membership)) and i == self.flush_index:
            vc = ViewChange(eff.view)
            below = ViewChange(self.flush.below()) if isinstance(eff, Installed) else vc
            for j in range(i):
                self._run(j, below, now, out)
            if isinstance(eff, Installed):
                for j in range(i + 1, len(self.layers)):
                    self._run(j, vc, now, out)
            return True
        return False


def flush_stack(nid: int, members, *, block_time: float | None = 0.002, reconcile: bool = True,
                tracing: bool = True, membership: str = "oracle", **reliable_opts) -> FlushStack:
    """FLUSH alone under the application: transport, reliable, flush.  A
    ``nid`` not in ``members`` (the first view) is a joiner; ``membership``:
    who decides the views (impl/flush.py: the oracle, or "ring")."""
    joiner = nid not in members
    return FlushStack(nid, [Transport(), Reliable(nid, tuple(members) + ((nid,) if joiner else ()), **reliable_opts),
                            Frag(nid),
                            Flush(nid, members, top=True, block_time=block_time, reconcile=reconcile,
                                  joiner=joiner, tracing=tracing, membership=membership)])


# ---------------------------------------------------------------- descriptor (impl/protocols.py)

# the cluster runs FLUSH only with the ring deciding its views (raincoreflush)
DESCRIPTOR = ImplProtocol(name="flush", history=HistoryProjection(deliveries="set"),
                          over_ring="raincoreflush")
