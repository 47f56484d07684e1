"""The Raincore ring's stack and wire codec (the layer file,
impl/raincore.py, keeps the layer logic only).  The ring runs directly on
the Transport Manager: its "stack" is the one ``Raincore`` layer
(``raincore_layer``), whose ``Send`` effects carry TOKEN and 911 messages,
type codes 30-31 (impl/codec.py ``register``, done at import)."""

from __future__ import annotations

import struct

from .. import codec
from ..protocols import ImplProtocol
from ..raincore import STATUS_911, Msg911, Raincore, TokenMsg


def raincore_layer(nid: int, ring: tuple, **opts) -> Raincore:
    """Node ``nid`` of the configured ring ``ring`` (options: Raincore's)."""
    return Raincore(nid, ring, **opts)


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


# ---------------------------------------------------------------- descriptor (impl/protocols.py)

DESCRIPTOR = ImplProtocol(name="raincore", schema="raincore")
