"""The Raincore ring's stack and wire codec (the layer file,
impl/raincore.py, keeps the layer logic only).  On the simulator's
Transport Manager the ring's "stack" is the one ``Raincore`` layer
(``raincore_layer``), whose ``Send`` effects carry TOKEN and 911 messages,
type codes 30-31 (impl/codec.py ``register``, done at import).  On a lossy
network it is ``RingStack`` (``ring_stack``): transport, the Transport
Manager of impl/ringtransport.py, the ring; its frames are type codes 32-36."""

from __future__ import annotations

import struct

from .. import codec
from ..events import Receive, TimerFired
from ..layer import bump
from ..protocols import ImplProtocol
from ..raincore import STATUS_911, Crash, DeliveryFailed, Join, Msg911, Raincore, Start, TokenMsg
from ..ringtransport import Suspected, TMAbort, TMAck, TMConfirm, TMFrame, TMTaken, TransportManager
from ..stack import Stack, Transport


def raincore_layer(nid: int, ring: tuple, **opts) -> Raincore:
    """Node ``nid`` of the configured ring ``ring`` (options: Raincore's)."""
    return Raincore(nid, ring, **opts)


class RingStack(Stack):
    """The ring on a real (lossy) network: transport, ``TransportManager``,
    ``Raincore``.  On top of ``Stack``'s routing: the ring's own events
    (Start, Crash, Join) go to the ring; the Transport Manager's
    ``DeliveryFailed`` effect becomes the ring's event of that name; its
    ``Suspected`` goes out to the runtime (the node leaves).

    Leaving (``leave()``, once suspected): the ring takes no further step
    and the node takes no frame, but its own frames still open are settled
    before it exits (``settled``): the Transport Manager alone still sees
    acks and ``TMTaken`` of its frames, and its retry timer.  A receiver
    that holds one of them gets its decision (a confirm, or the abort of a
    node already reported) instead of waiting in vain and leaving as
    suspected in turn, which would pass the suspicion on round the ring
    (docs/impl.md, "Killed anywhere over the lossy ring").  What the
    Transport Manager would report to the ring is dropped: the ring has left."""

    leaving = False
    LEAVING_EVENTS = (TMAck, TMTaken)      # what a leaving node still reads
    # within the abstraction (LossyRing FALSE, ``cluster_node``): the ring's
    # Hungry and Starving time-outs (QUIET) have no step in the spec.  A member
    # that has not seen the token for that long was left out of the ring by a
    # report it never learnt of (it had no frame open toward its reporter), so
    # it leaves as suspected (the spec's LeaveSuspected, which the abstraction
    # allows to a node neither eating nor with a token in transit) instead of
    # taking a step outside the abstraction
    quiet_leaves = False
    QUIET_TIMERS = ("raincore" + Stack.SEP + "hungry", "raincore" + Stack.SEP + "starving")

    def leave(self) -> None:
        self.leaving = True
        tm = self.layer("tm")
        bump(tm.stats, "dropped_leaving", len(tm.held))
        tm.held.clear()                     # frames to this node: never taken (their senders give up)

    @property
    def settled(self) -> bool:
        return not self.layer("tm").pending

    def handle(self, event, now: float) -> list:
        out: list = []
        if self.leaving:
            if isinstance(event, Receive):
                try:
                    msg = codec.decode(event.msg)
                except codec.DecodeError:
                    msg = None
                if isinstance(msg, self.LEAVING_EVENTS):
                    self._run(self._index["tm"], Receive(event.src, msg), now, out)
            elif isinstance(event, TimerFired) and event.name.startswith("tm" + self.SEP):
                self._run(self._index["tm"], TimerFired(event.name.partition(self.SEP)[2]), now, out)
            return out
        if isinstance(event, (Start, Crash, Join)):
            self._run(len(self.layers) - 1, event, now, out)
            return out
        if self.quiet_leaves and isinstance(event, TimerFired) and event.name in self.QUIET_TIMERS:
            bump(self.layer("tm").stats, "quiet_leave")
            return [Suspected(self.layer("raincore").nid, None)]
        return super().handle(event, now)

    def _route(self, i: int, eff, now: float, out: list) -> bool:
        if isinstance(eff, DeliveryFailed):
            self.layer("tm").forget(eff.msg)     # the ring takes the report now (TransportManager.forget)
        if isinstance(eff, DeliveryFailed) and self.leaving:
            return True                     # the ring has left: nothing to tell it
        if isinstance(eff, DeliveryFailed) and i + 1 < len(self.layers):
            self._run(i + 1, eff, now, out)
            return True
        if isinstance(eff, Suspected):
            if is_join_request(eff.msg, eff.by):
                # reported by a joiner, whose report only passes its request on
                # (spec 911DeliveryFailure changes no ring state): the node stays
                # (FalseSuspicion: a node reported may stay up) and drops the frame
                bump(self.layer("tm").stats, "join_request_aborted")
            else:
                out.append(eff)
            return True
        return False


def ring_stack(nid: int, ring: tuple, *, interval: float = 0.02, attempts: int = 10,
               patience_cap: float | None = None, **ring_opts) -> RingStack:
    """Node ``nid`` of the configured ``ring`` on a lossy network (the
    Transport Manager's ``interval``, ``attempts`` and ``patience_cap``)."""
    return RingStack(nid, [Transport(), TransportManager(nid, interval=interval, attempts=attempts,
                                                         patience_cap=patience_cap),
                           raincore_layer(nid, ring, **ring_opts)])


def is_join_request(msg, sender: int) -> bool:
    """A joiner's own 911 (seed 004: a new node asks the configured ring): its
    sender is outside the nodelist it asks."""
    return isinstance(msg, Msg911) and msg.orig == sender and sender not in msg.nodelist


def is_ring_frame(data) -> bool:
    """Bytes for the ring's stack (a Transport Manager frame, by the codec type)."""
    return isinstance(data, (bytes, bytearray)) and len(data) >= 2 and data[1] in _TM_CODES


# ---------------------------------------------------------------- wire format
#
#   TOKEN (type 30)  seq:u64 cur:u16 dest:u16 gvn:u32 above:u32 n:u16 nodelist[n]:u16
#   911   (type 31)  orig:u16 cur:u16 dest:u16 seq:u64 status:u8 n:u16 nodelist[n]:u16
#
# A nodelist on the wire is non-empty, of distinct nodes 1..65535; pointers
# are nodes (never NULL: only a sent message is encoded); status is 1 YES,
# 2 NO, 3 REJECT.

T_TOKEN, T_911 = 30, 31
_TOKEN = struct.Struct(">QHHIIH")
_911 = struct.Struct(">HHHQBH")
_MAX_GVN = 0xFFFF_FFFF
_MAX_LIST = (codec.MAX_FRAME - 2 - _911.size) // 2


def _enc_list(nl: tuple) -> bytes:
    if not nl or len(set(nl)) != len(nl) or len(nl) > _MAX_LIST:
        raise ValueError(f"nodelist must be non-empty and distinct: {nl!r}")
    for x in nl:
        _check_node(x)
    return struct.pack(f">{len(nl)}H", *nl)


def _check_node(x) -> None:
    if type(x) is not int or not 1 <= x <= codec.MAX_NODE:
        raise ValueError(f"node out of range: {x!r}")


def encode_token(m: TokenMsg) -> bytes:
    _check_node(m.cur)
    _check_node(m.dest)
    if type(m.seq) is not int or not 0 <= m.seq <= codec.MAX_SEQNO:
        raise ValueError(f"seq out of range: {m.seq!r}")
    if type(m.gvn) is not int or not 0 <= m.gvn <= _MAX_GVN:
        raise ValueError(f"gvn out of range: {m.gvn!r}")
    if type(m.above) is not int or not 0 <= m.above <= _MAX_GVN:
        raise ValueError(f"above out of range: {m.above!r}")
    return _TOKEN.pack(m.seq, m.cur, m.dest, m.gvn, m.above, len(m.nodelist)) + _enc_list(m.nodelist)


def encode_911(m: Msg911) -> bytes:
    for x in (m.orig, m.cur, m.dest):
        _check_node(x)
    if type(m.seq) is not int or not 0 <= m.seq <= codec.MAX_SEQNO:
        raise ValueError(f"seq out of range: {m.seq!r}")
    if m.status not in STATUS_911:
        raise ValueError(f"911 status {m.status!r}")
    return (_911.pack(m.orig, m.cur, m.dest, m.seq, STATUS_911.index(m.status) + 1, len(m.nodelist))
            + _enc_list(m.nodelist))


def _dec_list(body: bytes, start: int, n: int) -> tuple:
    tail = body[start:]
    if len(tail) != 2 * n:
        raise codec.DecodeError("nodelist length does not match the frame")
    nl = struct.unpack(f">{n}H", tail)
    if n == 0 or 0 in nl or len(set(nl)) != n:
        raise codec.DecodeError("nodelist empty, with node 0 or a repeated node")
    return nl


def decode_token(body: bytes) -> TokenMsg:
    seq, cur, dest, gvn, above, n = codec.unpack(_TOKEN, body)
    if cur == 0 or dest == 0:
        raise codec.DecodeError("token pointer is NULL")
    return TokenMsg(seq, _dec_list(body, _TOKEN.size, n), cur, dest, gvn, above)


def decode_911(body: bytes) -> Msg911:
    orig, cur, dest, seq, status, n = codec.unpack(_911, body)
    if 0 in (orig, cur, dest):
        raise codec.DecodeError("911 pointer is NULL")
    if not 1 <= status <= len(STATUS_911):
        raise codec.DecodeError(f"unknown 911 status {status}")
    return Msg911(orig, cur, dest, _dec_list(body, _911.size, n), seq, STATUS_911[status - 1])


codec.register(T_TOKEN, TokenMsg, encode_token, decode_token)
codec.register(T_911, Msg911, encode_911, decode_911)


# ---------------------------------------------------------------- wire format
#
#   TMFRAME (type 32)  id:u32 frame:bytes (the ring message's own codec frame)
#   TMACK   (type 33)  id:u32
#   TMCONFIRM (34), TMABORT (35), TMTAKEN (36)  id:u32

T_FRAME, T_ACK, T_CONFIRM, T_ABORT, T_TAKEN = 32, 33, 34, 35, 36
_ID = struct.Struct(">I")
_ID_ONLY = {T_ACK: TMAck, T_CONFIRM: TMConfirm, T_ABORT: TMAbort, T_TAKEN: TMTaken}
_TM_CODES = frozenset((T_FRAME, *_ID_ONLY))


def _enc_frame(m: TMFrame) -> bytes:
    return _enc_id(m) + codec.encode(m.msg)


def _dec_frame(body: bytes) -> TMFrame:
    (i,) = codec.unpack(_ID, body)
    inner = codec.decode(body[_ID.size:])
    if type(inner) in (TMFrame, *_ID_ONLY.values()):
        raise codec.DecodeError("a transport frame inside a transport frame")
    return TMFrame(i, inner)


def _enc_id(m) -> bytes:
    if not 0 < m.id <= 0xFFFF_FFFF:
        raise ValueError(f"id out of range: {m.id!r}")
    return _ID.pack(m.id)


def _dec_id(cls):
    def dec(body: bytes):
        if len(body) != _ID.size:
            raise codec.DecodeError(f"bad {cls.__name__} length")
        return cls(codec.unpack(_ID, body)[0])
    return dec


codec.register(T_FRAME, TMFrame, _enc_frame, _dec_frame)
for _code, _cls in _ID_ONLY.items():
    codec.register(_code, _cls, _enc_id, _dec_id(_cls))


# ---------------------------------------------------------------- descriptor (impl/protocols.py)

DESCRIPTOR = ImplProtocol(name="raincore")
