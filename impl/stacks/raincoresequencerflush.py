"""SEQUENCER over FLUSH over the Raincore ring: the node is FLUSH over the
ring's (impl/stacks/raincoreflush.py ``ring_flush_stack``, ``sequencer``),
with SEQUENCER over FLUSH's wire types; this module holds its descriptor."""

from __future__ import annotations

from functools import partial

from ..protocols import ClusterRun, HistoryProjection, ImplProtocol
from . import raincoreflush


def cluster_constants(nodes: int, messages: int, crashes: int, lossy: bool = False, joiners: int = 0) -> dict:
    """spec/RaincoreSequencerFlush as the cluster's stack runs it
    (``pass_latch``, i.e. ResendAlways; ResentFirst); Senders and Crashable
    (sets, which a header's scalar constants cannot hold) are every node;
    the ring's constants are raincoreflush's ``cluster_constants``' (the
    lossy ring, ``lossy``: Raincore's own; else the abstraction, whose
    Transport Manager may time out on a live node: FalseSuspicion);
    ``joiners`` as there."""
    ring = raincoreflush.cluster_constants(nodes, messages, crashes, lossy, joiners)
    return {**{k: v for k, v in ring.items() if k != "MaxMsgs"}, "MaxSeq": messages,
            "ResendAlways": True, "ResentFirst": True}


# SEQUENCER on the ring's FLUSH with pass_latch, the coupling spec/SequencerFlush
# describes (ResendAlways; the coordinator's DATA passes the latch), as over the
# oracle's views: with the latch holding DATA into the next view (divergence (a),
# docs/flush.md) 2 of 200 drawn runs were nonconforming.  Over the ring a
# SEQUENCER's received-table starts over every node that may join, so its keys
# are not a view's members.
DESCRIPTOR = ImplProtocol(name="raincoresequencerflush",
                          history=HistoryProjection(app_layer="sequencer", view_from_recv=False),
                          cluster=ClusterRun(stack=partial(raincoreflush.cluster_node, sequencer=True,
                                                           pass_latch=True),
                                             constants=cluster_constants, views="ring", lossy_ring=True,
                                             joins=True),
                          over_ring="raincoresequencerflush")
