"""Wire codec: every message of the stack as real bytes (docs/impl.md, "Wire format").

Theory of operation
-------------------
A frame is a fixed header followed by a type-specific body, all packed with
``struct`` in network byte order:

    header   version:u8  type:u8
    FORWARD  sender:u16  seqno:u64  len:u32  payload[len]      (seed 000)
    DATA     sender:u16  seqno:u64  len:u32  payload[len]      (seed 000)
    XDATA    sender:u16  seqno:u64  kind:u8  len:u32  body[len]  reliable data
    NAK      sender:u16  lo:u64  hi:u64                         retransmit lo..hi
    ACK      sender:u16  upto:u64                               cumulative ack
    BUNDLE   count:u16  (len:u16  frame[len]) * count           frames of one datagram

XDATA carries the upper layer's message: ``kind`` 0 means ``body`` is raw
application bytes, 1 means ``body`` is itself a complete frame (FORWARD or
DATA; nesting deeper than that is refused).  ``sender`` is always the node
that wrote the frame (or, in FORWARD/DATA, the original multicaster), so a
receiver over UDP never has to map addresses back to members.

A BUNDLE is not a message: it is what the runtime's bundler
(impl/runtime.py) puts in one datagram, ``count`` (at least 2) complete
frames, each with its length.  ``encode_bundle`` and ``decode_bundle`` make
and split it; ``decode`` refuses one (a bundle never nests, in XDATA or in a
bundle), and ``decode_bundle`` is as strict as ``decode`` about the bundle's
own bytes (count, lengths, nothing after the last frame) but leaves each
frame to ``decode``, so one malformed frame is counted and dropped alone.

Decoding is strict: ``decode`` either returns exactly the message that
``encode`` was given or raises ``DecodeError``, whatever the input (short,
long, trailing bytes, unknown version or type, zero seqnos, NAK with lo > hi,
frames above ``MAX_FRAME``, non-bytes input).  The runtime counts and drops
such datagrams; they never reach a layer.  HMAC is impl/auth.py's, around the frame.

Other layers' messages (STABLE, FLUSH, Raincore) are added by ``register``:
a type code (10-255; 1-9 are this module's), the message class and a pair of
body functions.  The body decoder gets the bytes after the two-byte header
and must be as strict as the built-in ones (``unpack``, ``exact_tail`` and
``need`` help); anything else it raises becomes a DecodeError.  A registered
message may ride inside XDATA as a nested frame.  Blocks of codes: STABLE
10-19, FLUSH 20-29, Raincore 30-39, SEQUENCER over FLUSH 40-49,
fragments (impl/frag.py) 50-59.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Callable, Union

VERSION = 1
MAX_FRAME = 65507            # the largest UDP payload over IPv4
MAX_NODE = 0xFFFF
MAX_SEQNO = 0xFFFF_FFFF_FFFF_FFFF

T_FORWARD, T_DATA, T_XDATA, T_NAK, T_ACK, T_BUNDLE = 1, 2, 3, 4, 5, 6
K_RAW, K_FRAME = 0, 1

_HEADER = struct.Struct(">BB")
_SEQ = struct.Struct(">HQI")        # FORWARD / DATA before the payload
_XDATA = struct.Struct(">HQBI")
_NAK = struct.Struct(">HQQ")
_ACK = struct.Struct(">HQ")
_COUNT = struct.Struct(">H")


class DecodeError(ValueError):
    """The datagram is not a well-formed frame of this codec version."""


@dataclass(frozen=True, slots=True)
class Forward:
    sender: int
    seqno: int
    payload: bytes = b""


@dataclass(frozen=True, slots=True)
class Data:
    sender: int
    seqno: int
    payload: bytes = b""


@dataclass(frozen=True, slots=True)
class XData:
    """Reliable-layer data frame: seqno ``seqno`` of the FIFO stream from
    ``sender`` to the receiver; ``body`` is bytes or a Forward/Data."""
    sender: int
    seqno: int
    body: Union[bytes, Forward, Data]


@dataclass(frozen=True, slots=True)
class Nak:
    """``sender`` asks the receiver of this frame to retransmit seqnos lo..hi
    of the stream from the receiver to ``sender``."""
    sender: int
    lo: int
    hi: int


@dataclass(frozen=True, slots=True)
class Ack:
    """``sender`` has received every seqno <= ``upto`` of the stream from the
    receiver of this frame to ``sender``."""
    sender: int
    upto: int


Message = Union[Forward, Data, XData, Nak, Ack]   # plus registered types


@dataclass(frozen=True)
class _Ext:
    code: int
    cls: type
    encode_body: Callable[[Any], bytes]
    decode_body: Callable[[bytes], Any]
    bounded: bool = True


_EXT_BY_CODE: dict[int, _Ext] = {}
_EXT_BY_CLS: dict[type, _Ext] = {}


def register(code: int, cls: type, encode_body: Callable[[Any], bytes],
             decode_body: Callable[[bytes], Any], bounded: bool = True) -> None:
    """Add message type ``code`` (10..255) carried as ``cls``.  Registering
    the same class under the same code again is a no-op (module reloads).
    ``bounded=False``: a message of this type may outgrow a datagram (a
    digest of a whole view); impl/frag.py fragments it."""
    if type(code) is not int or not 10 <= code <= 255:
        raise ValueError(f"type code {code!r} outside 10..255")
    old = _EXT_BY_CODE.get(code)
    if old is not None and old.cls is not cls:
        if old.cls.__qualname__ != cls.__qualname__ or old.cls.__module__ != cls.__module__:
            raise ValueError(f"type code {code} already taken by {old.cls.__name__}")
    ext = _Ext(code, cls, encode_body, decode_body, bounded)
    _EXT_BY_CODE[code] = ext
    _EXT_BY_CLS[cls] = ext


def unbounded(msg) -> bool:
    """``msg`` is of a type registered with ``bounded=False``."""
    ext = _EXT_BY_CLS.get(type(msg))
    return ext is not None and not ext.bounded


def registered() -> dict[int, type]:
    """Type code -> class of every registered message type."""
    return {c: e.cls for c, e in sorted(_EXT_BY_CODE.items())}


def _check_node(n) -> None:
    if type(n) is not int or not 0 <= n <= MAX_NODE:
        raise ValueError(f"node id out of range: {n!r}")


def _check_seq(q, lo: int = 1) -> None:
    if type(q) is not int or not lo <= q <= MAX_SEQNO:
        raise ValueError(f"seqno out of range: {q!r}")


def encode(msg: Message, limit: int | None = MAX_FRAME) -> bytes:
    """The frame for ``msg``.  Raises ValueError on a message that cannot be
    represented (it is a bug in the caller, not bad input from the wire),
    a frame above ``limit`` included (None: no bound, for impl/frag.py)."""
    if isinstance(msg, (Forward, Data)):
        _check_node(msg.sender)
        _check_seq(msg.seqno)
        t = T_FORWARD if isinstance(msg, Forward) else T_DATA
        out = _HEADER.pack(VERSION, t) + _SEQ.pack(msg.sender, msg.seqno, len(msg.payload)) + bytes(msg.payload)
    elif isinstance(msg, XData):
        _check_node(msg.sender)
        _check_seq(msg.seqno)
        if isinstance(msg.body, (Forward, Data)) or type(msg.body) in _EXT_BY_CLS:
            kind, body = K_FRAME, encode(msg.body)
        elif isinstance(msg.body, (bytes, bytearray)):
            kind, body = K_RAW, bytes(msg.body)
        else:
            raise ValueError(f"XData body must be bytes, Forward, Data or a registered type: {msg.body!r}")
        out = _HEADER.pack(VERSION, T_XDATA) + _XDATA.pack(msg.sender, msg.seqno, kind, len(body)) + body
    elif isinstance(msg, Nak):
        _check_node(msg.sender)
        _check_seq(msg.lo)
        _check_seq(msg.hi)
        if msg.lo > msg.hi:
            raise ValueError("NAK with lo > hi")
        out = _HEADER.pack(VERSION, T_NAK) + _NAK.pack(msg.sender, msg.lo, msg.hi)
    elif isinstance(msg, Ack):
        _check_node(msg.sender)
        _check_seq(msg.upto, lo=0)
        out = _HEADER.pack(VERSION, T_ACK) + _ACK.pack(msg.sender, msg.upto)
    elif type(msg) in _EXT_BY_CLS:
        ext = _EXT_BY_CLS[type(msg)]
        out = _HEADER.pack(VERSION, ext.code) + bytes(ext.encode_body(msg))
    else:
        raise ValueError(f"not a codec message: {msg!r}")
    if limit is not None and len(out) > limit:
        raise ValueError(f"frame of {len(out)} bytes exceeds MAX_FRAME")
    return out


def decode(data: bytes, limit: int | None = MAX_FRAME) -> Message:
    """The message in ``data``; raises DecodeError and nothing else.
    ``limit``: the largest frame taken (None: a reassembled one, impl/frag.py)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise DecodeError(f"not bytes: {type(data).__name__}")
    data = bytes(data)
    if limit is not None and len(data) > limit:
        raise DecodeError(f"oversized frame: {len(data)} > {limit}")
    return _decode(data, nested=False)


def _decode(data: bytes, nested: bool) -> Message:
    if len(data) < _HEADER.size:
        raise DecodeError("truncated header")
    version, t = _HEADER.unpack_from(data, 0)
    if version != VERSION:
        raise DecodeError(f"unknown version {version}")
    body = data[_HEADER.size:]
    if t in (T_FORWARD, T_DATA):
        sender, seqno, n = _unpack(_SEQ, body)
        payload = _exact_tail(body, _SEQ.size, n)
        _need(seqno >= 1, "seqno 0")
        return (Forward if t == T_FORWARD else Data)(sender, seqno, payload)
    ext = _EXT_BY_CODE.get(t)
    if ext is not None:
        try:
            msg = ext.decode_body(body)
        except DecodeError:
            raise
        except Exception as e:      # a body decoder's slip must not crash a node
            raise DecodeError(f"type {t}: {type(e).__name__}: {e}") from None
        if type(msg) is not ext.cls:
            raise DecodeError(f"type {t}: decoder returned {type(msg).__name__}")
        return msg
    if nested:
        raise DecodeError(f"type {t} cannot be nested in XDATA")
    if t == T_XDATA:
        sender, seqno, kind, n = _unpack(_XDATA, body)
        inner = _exact_tail(body, _XDATA.size, n)
        _need(seqno >= 1, "seqno 0")
        if kind == K_RAW:
            return XData(sender, seqno, inner)
        if kind == K_FRAME:
            return XData(sender, seqno, _decode(inner, nested=True))
        raise DecodeError(f"unknown XDATA kind {kind}")
    if t == T_NAK:
        sender, lo, hi = _unpack(_NAK, body)
        _need(len(body) == _NAK.size, "trailing bytes")
        _need(1 <= lo <= hi, "NAK range empty or from 0")
        return Nak(sender, lo, hi)
    if t == T_ACK:
        sender, upto = _unpack(_ACK, body)
        _need(len(body) == _ACK.size, "trailing bytes")
        return Ack(sender, upto)
    raise DecodeError(f"unknown type {t}")


def encode_bundle(frames: list) -> bytes:
    """One datagram's frames (at least 2, each an encoded frame under 64 KiB) as a BUNDLE."""
    if len(frames) < 2 or len(frames) > 0xFFFF:
        raise ValueError(f"a bundle holds 2 to 65535 frames, not {len(frames)}")
    parts = [_HEADER.pack(VERSION, T_BUNDLE), _COUNT.pack(len(frames))]
    for f in frames:
        if not 0 < len(f) <= 0xFFFF:
            raise ValueError(f"a bundled frame is 1 to 65535 bytes, not {len(f)}")
        parts.append(_COUNT.pack(len(f)))
        parts.append(f)
    return b"".join(parts)


def decode_bundle(data: bytes) -> list[bytes]:
    """The frames of a BUNDLE (each still to be decoded); raises DecodeError
    and nothing else on anything that is not exactly one bundle."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise DecodeError(f"not bytes: {type(data).__name__}")
    data = bytes(data)
    if len(data) > MAX_FRAME:
        raise DecodeError(f"oversized bundle: {len(data)} > {MAX_FRAME}")
    if len(data) < _HEADER.size + _COUNT.size:
        raise DecodeError("truncated bundle header")
    version, t = _HEADER.unpack_from(data, 0)
    _need(version == VERSION, f"unknown version {version}")
    _need(t == T_BUNDLE, f"type {t} is not a bundle")
    (count,) = _COUNT.unpack_from(data, _HEADER.size)
    _need(count >= 2, f"a bundle of {count} frames")
    at, frames = _HEADER.size + _COUNT.size, []
    for _ in range(count):
        (n,) = _unpack(_COUNT, data, at)
        at += _COUNT.size
        _need(n > 0, "empty frame in a bundle")
        _need(len(data) - at >= n, "truncated frame in a bundle")
        frames.append(data[at:at + n])
        at += n
    _need(at == len(data), "trailing bytes after a bundle")
    return frames


def need(cond: bool, why: str) -> None:
    if not cond:
        raise DecodeError(why)


def unpack(st: struct.Struct, body: bytes, at: int = 0) -> tuple:
    """``st`` at offset ``at`` of ``body`` (no copy of the rest: a digest is read entry by entry)."""
    if len(body) - at < st.size:
        raise DecodeError("truncated body")
    return st.unpack_from(body, at)


def exact_tail(body: bytes, start: int, n: int) -> bytes:
    tail = body[start:]
    if len(tail) < n:
        raise DecodeError("truncated payload")
    if len(tail) > n:
        raise DecodeError("trailing bytes")
    return tail


# the names the built-in decoders use
_need, _unpack, _exact_tail = need, unpack, exact_tail
