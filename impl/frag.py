"""Fragmentation above the reliable layer, as JGroups's FRAG2 (docs/flush.md, "The implementation (impl/flush.py) and what it showed": the wire format).

Theory of operation
-------------------
FLUSH's FLUSH_COMPLETED and VIEW carry a digest of every message of the
view with its body, so their frame grows with the view's length: past about
3,000 messages of 20 bytes it passes ``codec.MAX_FRAME``, the largest UDP
payload.  ``Frag`` sits between the reliable layer and the layer that sends
such messages.  Going down, a message of a type the codec registered as
unbounded is encoded once; if its frame is larger than ``FRAG_SIZE`` it goes
down as ``count`` ``Fragment``s (sender, fragment id, index, count, chunk),
each its own message of the reliable layer, which retransmits and orders
each; any other message passes unchanged (the wire of small messages is as
without this layer).  Going up, fragments are collected per (source,
fragment id) and the frame they make is decoded (``codec.decode`` without the
datagram bound) and passed up as the message it was.

Nothing is silent: a fragment whose sender is not its source, whose index,
count or size disagree with the ones before it, or whose whole does not
decode is counted and dropped; a source keeps at most ``MAX_PARTIAL``
messages in pieces (a sender that crashed mid-message leaves one), the
oldest evicted and counted.  The layer traces nothing: the specs' channels
carry whole messages, and the reliable layer's FIFO order per source is what
they assume of the layers below.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from . import codec
from .events import Effect, Event, Multicast, Receive, Send, Up, ViewChange
from .layer import bump

T_FRAGMENT = 50              # codec type codes 50-59: fragmentation
FRAG_SIZE = 32768            # chunk bytes: with the reliable layer's XDATA header, the runtime's frame and
                             # the HMAC, a fragment stays far below MAX_FRAME whatever the vector clock's size
MAX_PARTIAL = 8              # messages in pieces kept per source
_HEAD = struct.Struct(">HIII")   # sender, fragment id, index, count


@dataclass(frozen=True, slots=True)
class Fragment:
    sender: int
    fid: int
    index: int
    count: int
    chunk: bytes


def _encode(m: Fragment) -> bytes:
    codec._check_node(m.sender)
    if not (0 <= m.fid <= 0xFFFF_FFFF and 2 <= m.count <= 0xFFFF_FFFF and 0 <= m.index < m.count
            and 1 <= len(m.chunk) <= FRAG_SIZE):
        raise ValueError(f"not a fragment: {m.fid}, {m.index}/{m.count}, {len(m.chunk)} bytes")
    return _HEAD.pack(m.sender, m.fid, m.index, m.count) + bytes(m.chunk)


def _decode(body: bytes) -> Fragment:
    sender, fid, index, count = codec.unpack(_HEAD, body)
    chunk = body[_HEAD.size:]
    codec.need(count >= 2 and index < count, f"fragment {index} of {count}")
    codec.need(1 <= len(chunk) <= FRAG_SIZE, f"fragment of {len(chunk)} bytes")
    return Fragment(sender, fid, index, count, chunk)


codec.register(T_FRAGMENT, Fragment, _encode, _decode)


class Frag:
    name = "frag"

    def __init__(self, nid: int, size: int = FRAG_SIZE) -> None:
        self.nid, self.size = nid, size
        self.stats: dict[str, int] = {}
        self.fid = 0
        self.partial: dict[tuple[int, int], list] = {}     # (source, fid) -> chunks, in arrival order per source

    def handle(self, event: Event, now: float) -> list[Effect]:
        if isinstance(event, (Send, Multicast)):
            return self._down(event)
        if isinstance(event, Receive):
            if isinstance(event.msg, Fragment):
                return self._up(event.src, event.msg)
            return [Up(event.src, event.msg)]
        if isinstance(event, ViewChange):       # a source gone from the view finishes no message
            gone = [k for k in self.partial if k[0] not in event.view.members]
            for k in gone:
                del self.partial[k]
            if gone:
                bump(self.stats, "dropped_partial", len(gone))
        return []

    def _down(self, event) -> list[Effect]:
        if not codec.unbounded(event.msg):
            return [event]
        data = codec.encode(event.msg, limit=None)
        if len(data) <= self.size:
            return [event]
        self.fid = (self.fid + 1) & 0xFFFF_FFFF
        chunks = [data[i:i + self.size] for i in range(0, len(data), self.size)]
        bump(self.stats, "fragmented")
        bump(self.stats, "fragments", len(chunks))
        frags = [Fragment(self.nid, self.fid, i, len(chunks), c) for i, c in enumerate(chunks)]
        if isinstance(event, Send):
            return [Send(event.dest, f) for f in frags]
        return [Multicast(f) for f in frags]

    def _up(self, src: int, f: Fragment) -> list[Effect]:
        key = (src, f.fid)
        have = self.partial.get(key)
        if f.sender != src or (have is None and f.index != 0) or (have is not None and (
                len(have) != f.index or have[0].count != f.count)):
            bump(self.stats, "bad_fragment")       # the reliable layer's FIFO order makes these impossible
            return []
        if have is None:
            mine = [k for k in self.partial if k[0] == src]
            if len(mine) >= MAX_PARTIAL:
                del self.partial[mine[0]]
                bump(self.stats, "evicted_partial")
            have = self.partial[key] = []
        have.append(f)
        if len(have) < f.count:
            return []
        del self.partial[key]
        try:
            msg = codec.decode(b"".join(x.chunk for x in have), limit=None)
        except codec.DecodeError:
            bump(self.stats, "bad_reassembly")
            return []
        bump(self.stats, "reassembled")
        return [Up(src, msg)]
