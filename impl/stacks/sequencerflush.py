"""SEQUENCER over FLUSH's stack: transport, reliable, flush, sequencer, in
a ``FlushStack`` (impl/stacks/flush.py), whose codec carries both layers'
messages (SEQUENCER's FORWARD and DATA ride in FLUSH's FDATA bodies)."""

from __future__ import annotations

from ..flush import Flush
from ..frag import Frag
from ..protocols import ClusterRun, HistoryProjection, ImplProtocol
from ..reliable import Reliable
from ..sequencer import Sequencer
from ..stack import Transport
from .flush import FlushStack


def sequencer_flush_stack(nid: int, members, *, block_time: float | None = 0.002, tracing: bool | str = True,
                          hold_sends: bool = True, self_channel: bool = True, view_as_sent: bool = True,
                          pass_latch: bool = False, resent_first: bool = True, membership: str = "oracle",
                          universe=None, **reliable_opts) -> FlushStack:
    """SEQUENCER over FLUSH: transport, reliable, flush, sequencer.
    ``hold_sends``: the application's sends wait while the latch is closed
    (spec/SequencerFlush's Send); False is the earlier coupling, where only
    the SEQUENCER's multicasts met the latch and its FORWARDs passed it
    (divergence (c) of docs/flush.md, kept to show the replay finds it).
    ``self_channel``: the SEQUENCER's messages to itself keep the order of
    the spec's channel m -> m (impl/sequencer.py); False: its re-forwards to
    itself go round the network and its own DATA overtakes them (divergence
    (d)).  ``view_as_sent``: the SEQUENCER installs the VIEW's members as
    sent, as the spec does; False: less the members FLUSH already suspects
    (divergence (e)).  ``pass_latch``: the coordinator's DATA multicasts pass
    the latch (spec/SequencerFlush's RecvForward multicasts in the old view
    even after FLUSH_COMPLETED, where the DATA is dropped) and every member
    re-sends its forward-table at every view change (the spec's
    ``ResendAlways = TRUE``, the fix of its finding 5); False: the FLUSH
    latch holds them and multicasts them in the next view (divergence
    (a)).  ``resent_first``: a new coordinator's application sends wait until
    the forward-table it re-sent to itself is sequenced (impl/sequencer.py);
    False loses the re-sent message in some runs (EventualDelivery).
    ``membership="ring"``: FLUSH takes its views from the Raincore ring
    (impl/sim_raincoreflush.py), no oracle; there a ``nid`` outside the first
    view ``members`` is a joiner (it enters by the ring's 911 path; its
    application's sends wait until FLUSH installs its first view), and
    ``universe`` lists every node that may ever be a member (SEQUENCER's
    received-table starts over it, as the spec's does)."""
    joiner = nid not in members
    if joiner and membership != "ring":
        raise ValueError("SEQUENCER over FLUSH takes a joiner only with the ring as membership")
    if joiner and not hold_sends:
        raise ValueError("a joiner's sends must wait for its first view (hold_sends)")
    return FlushStack(nid, [Transport(), Reliable(nid, tuple(members) + ((nid,) if joiner else ()), **reliable_opts),
                            Frag(nid),
                            Flush(nid, members, top=False, block_time=block_time, tracing=tracing,
                                  view_as_sent=view_as_sent, latch_multicasts=not pass_latch,
                                  joiner=joiner, membership=membership),
                            Sequencer(nid, members, tracing=tracing, self_channel=self_channel,
                                      resend_always=pass_latch, resent_first=resent_first and self_channel,
                                      joiner=joiner, universe=universe)],
                      hold_sends=hold_sends)


# ---------------------------------------------------------------- descriptor (impl/protocols.py)

def _cluster_stack(nid: int, members: tuple, lossy: bool = False) -> FlushStack:
    # pass_latch: the coupling spec/SequencerFlush describes and the simulator runs
    # (the coordinator's DATA passes the latch; every member re-sends its forward-table
    # at every view change: ResendAlways).  Without it a FORWARD reaching the
    # coordinator during a flush is held to the next view, which the spec never does
    # (divergence (a), docs/flush.md C4): a participant's kill made such runs nonconforming.
    return sequencer_flush_stack(nid, members, tracing="delta", pass_latch=True)


def cluster_constants(nodes: int, messages: int, crashes: int, lossy: bool = False) -> dict:
    """spec/SequencerFlush's constants for a cluster run: the stack's
    defaults (``sequencer_flush_stack`` with ``pass_latch``)."""
    return {"N": nodes, "MaxSeq": messages, "MaxCrashes": crashes,
            "ReconcileDigests": True, "UniformDelivery": False, "ResendAlways": True, "ResentFirst": True}


# FLUSH decides the views: the cluster's runner only tells it whom it killed (Suspect)
DESCRIPTOR = ImplProtocol(name="sequencerflush",
                          history=HistoryProjection(app_layer="sequencer"),
                          cluster=ClusterRun(stack=_cluster_stack, constants=cluster_constants, views="suspect"),
                          over_ring="raincoresequencerflush")
