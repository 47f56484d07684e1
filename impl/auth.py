"""Datagram authentication for the UDP runtime (docs/impl.md, "The real cluster").

Every datagram on the wire is ``envelope + frame + tag``:

    envelope  magic:u8(0xA7)  sender:u16  incarnation:u64  seq:u64
    frame     the codec frame (opaque here)
    tag       HMAC-SHA256(key, envelope + frame), 32 bytes

The key is a secret, read from a file named on the command line (or the
node's config), not a mode: nothing here changes what a checker accepts,
and no environment variable is read.  Replay protection: per sender, the highest
incarnation seen and a sliding window of ``WINDOW`` sequence numbers; an older
incarnation, a sequence number below the window or one already seen is a
replay.  ``Verifier.open`` never raises on any input: it returns the frame or
None, and counts every datagram under exactly one reason in ``counts``.
Sans-I/O: no sockets, no clock; the caller supplies the incarnation.
"""

from __future__ import annotations

import hmac
import struct
from collections import Counter

MAGIC = 0xA7
_ENV = struct.Struct(">BHQQ")
TAG = 32
WINDOW = 1024
MIN_KEY = 16

REASONS = ("accepted", "truncated", "malformed", "forged", "replayed")


class KeyError_(ValueError):
    """No usable cluster key."""


def load_key(path: str | None) -> bytes | None:
    """The cluster key in the file ``path`` (surrounding whitespace
    stripped); None when no path is given.  Too short a key is refused."""
    if not path:
        return None
    with open(path, "rb") as f:
        key = f.read().strip()
    if len(key) < MIN_KEY:
        raise KeyError_(f"{path}: cluster key shorter than {MIN_KEY} bytes")
    return key


def check_bind(host: str, key: bytes | None) -> None:
    """Refuse a non-loopback bind without a key."""
    if key is None and host not in ("127.0.0.1", "localhost", "::1"):
        raise KeyError_(f"refusing to bind {host} without a cluster key")


class Sealer:
    """Seals outgoing frames of one node incarnation."""

    def __init__(self, key: bytes, sender: int, incarnation: int):
        self.key, self.sender, self.incarnation, self.seq = key, sender, incarnation, 0

    def seal(self, frame: bytes) -> bytes:
        self.seq += 1
        body = _ENV.pack(MAGIC, self.sender, self.incarnation, self.seq) + frame
        return body + hmac.digest(self.key, body, "sha256")         # the one-shot C path: no HMAC object


class Verifier:
    """Checks incoming datagrams; counts each under one reason."""

    def __init__(self, key: bytes):
        self.key = key
        self.counts: Counter = Counter()
        self._peers: dict[int, tuple[int, int, int]] = {}   # sender -> (incarnation, top, bitmap)

    def open(self, data) -> tuple[int, bytes] | None:
        """(sender, frame) for an authentic fresh datagram, else None."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            self.counts["malformed"] += 1
            return None
        data = bytes(data)
        if len(data) < _ENV.size + TAG:
            self.counts["truncated"] += 1
            return None
        body, tag = data[:-TAG], data[-TAG:]
        if not hmac.compare_digest(tag, hmac.digest(self.key, body, "sha256")):
            self.counts["forged"] += 1
            return None
        magic, sender, inc, seq = _ENV.unpack_from(body)
        if magic != MAGIC or seq == 0:
            self.counts["malformed"] += 1
            return None
        if not self._fresh(sender, inc, seq):
            self.counts["replayed"] += 1
            return None
        self.counts["accepted"] += 1
        return sender, body[_ENV.size:]

    def _fresh(self, sender: int, inc: int, seq: int) -> bool:
        cur = self._peers.get(sender)
        if cur is None or inc > cur[0]:
            self._peers[sender] = (inc, seq, 1)
            return True
        pinc, top, bits = cur
        if inc < pinc:
            return False
        if seq > top:
            shift = seq - top
            bits = ((bits << shift) | 1) & ((1 << WINDOW) - 1) if shift < WINDOW else 1
            self._peers[sender] = (inc, seq, bits)
            return True
        off = top - seq
        if off >= WINDOW or bits >> off & 1:
            return False
        self._peers[sender] = (inc, top, bits | (1 << off))
        return True
