"""SEQUENCER's stack: transport, reliable, sequencer.  Its two wire types,
FORWARD and DATA, are the base codec's (impl/codec.py, type codes 1-2),
since the reliable layer's XDATA nests them; every other protocol registers
its own types from its module here."""

from __future__ import annotations

from ..reliable import Reliable
from ..sequencer import Sequencer
from ..stack import Stack, Transport


def sequencer_stack(nid: int, members: tuple[int, ...], *, tracing: bool | str = True, **reliable_opts) -> Stack:
    return Stack(nid, [Transport(), Reliable(nid, members, **reliable_opts),
                       Sequencer(nid, members, tracing=tracing)])
