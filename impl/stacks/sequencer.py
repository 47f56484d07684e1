"""SEQUENCER's stack: transport, reliable, sequencer.  Its two wire types,
FORWARD and DATA, are the base codec's (impl/codec.py, type codes 1-2),
since the reliable layer's XDATA nests them; every other protocol registers
its own types from its module here."""

from __future__ import annotations

from ..protocols import ClusterRun, HistoryProjection, ImplProtocol
from ..reliable import Reliable
from ..sequencer import Sequencer
from ..stack import Stack, Transport


def sequencer_stack(nid: int, members: tuple[int, ...], *, tracing: bool | str = True, **reliable_opts) -> Stack:
    return Stack(nid, [Transport(), Reliable(nid, members, **reliable_opts),
                       Sequencer(nid, members, tracing=tracing)])


# ---------------------------------------------------------------- descriptor (impl/protocols.py)

def _cluster_stack(nid: int, members: tuple, lossy: bool = False) -> Stack:
    # tracing="delta": the layers log format 2's deltas themselves, O(N) per record; a
    # full state holds the whole delivery history, which made a node's step O(run)
    return sequencer_stack(nid, members, tracing="delta")


def cluster_constants(nodes: int, messages: int, crashes: int, lossy: bool = False) -> dict:
    """spec/Sequencer's constants for a cluster run: N members, MaxSeq
    multicasts each, MaxCrashes kills."""
    return {"N": nodes, "MaxSeq": messages, "MaxCrashes": crashes}


DESCRIPTOR = ImplProtocol(name="sequencer", history=HistoryProjection(),
                          cluster=ClusterRun(stack=_cluster_stack, constants=cluster_constants, views="oracle"))
