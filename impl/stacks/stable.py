"""pbcast.STABLE's stack and wire codec (the layer file, impl/stable.py,
keeps the layer logic only).

* ``stable_stack``: ``[Transport, Reliable(nakack), Stable]``.
* The codec of STABLE's messages, type codes 10-11 (impl/codec.py
  ``register``, done at import)::

    STABLE     sender:u16 gseq:u64 flags:u8 n:u16 (member:u16 seqno:u64)*n
    STABILITY  sender:u16 sseq:u64 n:u16 (member:u16 low:u64 high:u64)*n

  Entries strictly increasing by member, counters from 1, low <= high;
  flags bit 0 is ``reply``; no trailing bytes.
"""

from __future__ import annotations

import struct

from .. import codec
from ..protocols import ImplProtocol
from ..reliable import Reliable
from ..stable import Stable, StabilityMsg, StableMsg
from ..stack import Stack, Transport

T_STABLE, T_STABILITY = 10, 11

_HEAD = struct.Struct(">HQH")      # sender, counter, entries (STABILITY)
_SHEAD = struct.Struct(">HQBH")    # sender, counter, flags, entries (STABLE; flag bit 0: reply)
_VEC = struct.Struct(">HQ")        # member, seqno
_DIG = struct.Struct(">HQQ")       # member, low, high


def _check_entries(entries, width: int) -> None:
    members = [e[0] for e in entries]
    if any(b <= a for a, b in zip(members, members[1:])):
        raise ValueError("entries must be sorted by member without repeats")
    for e in entries:
        if len(e) != width or any(type(x) is not int for x in e):
            raise ValueError(f"bad entry {e!r}")
        if not 0 <= e[0] <= codec.MAX_NODE or not all(0 <= x <= codec.MAX_SEQNO for x in e[1:]):
            raise ValueError(f"entry out of range: {e!r}")


def _encode(msg) -> bytes:
    is_vec = isinstance(msg, StableMsg)
    entries = msg.vector if is_vec else msg.digest
    _check_entries(entries, 2 if is_vec else 3)
    if not 0 <= msg.sender <= codec.MAX_NODE or not 1 <= (msg.gseq if is_vec else msg.sseq) <= codec.MAX_SEQNO:
        raise ValueError(f"sender or counter out of range: {msg!r}")
    if len(entries) > 0xFFFF:
        raise ValueError("too many entries")
    st = _VEC if is_vec else _DIG
    if is_vec:
        if type(msg.reply) is not bool:
            raise ValueError(f"reply must be a bool: {msg!r}")
        out = [_SHEAD.pack(msg.sender, msg.gseq, int(msg.reply), len(entries))]
    else:
        out = [_HEAD.pack(msg.sender, msg.sseq, len(entries))]
    for e in entries:
        if not is_vec and e[1] > e[2]:
            raise ValueError(f"digest entry with low > high: {e!r}")
        out.append(st.pack(*e))
    return b"".join(out)


def _decoder(cls, st: struct.Struct):
    head = _SHEAD if cls is StableMsg else _HEAD

    def decode_body(body: bytes):
        if cls is StableMsg:
            sender, counter, flags, n = codec.unpack(head, body)
            codec.need(flags in (0, 1), f"unknown flags {flags}")
        else:
            sender, counter, n = codec.unpack(head, body)
        codec.need(counter >= 1, "counter 0")
        codec.need(len(body) == head.size + n * st.size, "length does not match the entry count")
        entries = tuple(st.unpack_from(body, head.size + i * st.size) for i in range(n))
        members = [e[0] for e in entries]
        codec.need(all(b > a for a, b in zip(members, members[1:])), "entries not strictly increasing")
        if cls is StabilityMsg:
            codec.need(all(lo <= hi for _, lo, hi in entries), "digest entry with low > high")
            return cls(sender, counter, entries)
        return cls(sender, counter, entries, bool(flags))
    return decode_body


codec.register(T_STABLE, StableMsg, _encode, _decoder(StableMsg, _VEC))
codec.register(T_STABILITY, StabilityMsg, _encode, _decoder(StabilityMsg, _DIG))


def stable_stack(nid: int, members: tuple[int, ...], *, join_digest: dict | None = None,
                 heard_from_reset: bool = True, gossip_interval: float | None = 0.05,
                 tracing: bool = True, **stable_opts):
    """``[Transport, Reliable(nakack), Stable]`` for member ``nid`` of view
    ``members`` (() for a member that joins later)."""
    rel = Reliable(nid, members, nakack=True)
    st = Stable(nid, members, rel, join_digest=join_digest, heard_from_reset=heard_from_reset,
                gossip_interval=gossip_interval, tracing=tracing, **stable_opts)
    return Stack(nid, [Transport(), rel, st])


# ---------------------------------------------------------------- descriptor (impl/protocols.py)

DESCRIPTOR = ImplProtocol(name="stable")
