"""FLUSH over the Raincore ring: the node's two parts and its
stack builder.  A node is its ring (the unchanged ``Raincore`` layer, on the
ring's Transport Manager) and its FLUSH stack (transport, reliable,
``Flush(membership="ring")``, maybe SEQUENCER on top, over the lossy
network).  ``RingNode`` makes them one sans-I/O object: the simulator
(impl/sim_raincoreflush.py) and the lock-step driver
(conformance/replay/raincoreflush.py) both drive it."""

from __future__ import annotations

from ..events import Receive, TimerFired
from ..flush import Flush, RingView
from ..protocols import ClusterRun, HistoryProjection, ImplProtocol
from ..raincore import (Crash, DeliveryFailed, Join, last_index, Msg911, NO_TOKEN, Raincore, Start, Timing,
                        TokenMsg)
from .flush import flush_stack, FlushStack
from .raincore import is_ring_frame, ring_stack, RingStack
from . import sequencerflush     # (its stack looked up at each call: a test swaps it for a variant)


RING_TIMERS = ("eating", "hungry", "starving")
QUIET = 30.0    # seconds: the Hungry and Starving time-outs within the abstraction (``cluster_node``)


def steady_seq(ring: tuple) -> int:
    """The ``init_seq`` of a composed ring's layers: spec/RaincoreFlush's
    steady ring has the founder (the last node) eat sequence number
    ``len(ring)``, sent by its predecessor (Raincore's ``Start(token=True)``)."""
    return len(ring) + 1


def ring_flush_stack(nid: int, ring: tuple, *, block_time: float | None = 0.002,
                     reconcile: bool = True, tracing: bool = True, sequencer: bool = False,
                     pass_latch: bool = False, universe=None, **reliable_opts) -> FlushStack:
    """FLUSH over the ring: transport, reliable, ``Flush(membership="ring")``.
    A ``nid`` outside the configured ``ring`` is a joiner.  ``sequencer``:
    SEQUENCER on top (impl/stacks/sequencerflush.py's stack, ring mode; a
    joiner's sends wait for its first view; ``universe``: every node that
    may ever be a member, ring and joiners); ``pass_latch``: its coupling
    option of that name (the coordinator's DATA passes FLUSH's latch, every
    member re-sends its forward-table at each view change: spec
    ResendAlways), as sequencerflush's ``simulate`` and the real cluster
    run it; off, the latch holds the DATA (divergence (a) of docs/flush.md)."""
    if pass_latch and not sequencer:
        raise ValueError("pass_latch is SEQUENCER over FLUSH's coupling option")
    if sequencer:
        if not reconcile:
            raise ValueError("SEQUENCER over FLUSH runs the fixed FLUSH")
        return sequencerflush.sequencer_flush_stack(nid, ring, block_time=block_time, tracing=tracing, membership="ring",
                                     pass_latch=pass_latch, universe=universe or tuple(ring) + ((nid,) if nid not in ring else ()),
                                     **reliable_opts)
    return flush_stack(nid, ring, block_time=block_time, reconcile=reconcile, tracing=tracing, membership="ring",
                       **reliable_opts)


def is_ring_message(msg) -> bool:
    """A TOKEN or 911 (the ring's Transport Manager carries it), not FLUSH's bytes."""
    return isinstance(msg, (TokenMsg, Msg911))


class RingNode:
    """One node: ring events (Start, Crash, Join, DeliveryFailed, a TOKEN or
    911 received, the ring's timers) go to the ring, and after a ring step
    FLUSH is handed ``RingView(localView, lastGlobalView)`` when either
    changed, in the same step; every other event goes to the FLUSH stack.
    The effects of both come out in order (the ring's sends carry message
    objects, FLUSH's carry bytes)."""

    def __init__(self, ring, fstack: FlushStack, view_under_token: bool = False) -> None:
        """``ring``: the ``Raincore`` layer itself (its Transport Manager is
        the environment's: the simulator's, the lock-step driver's), or a
        ``RingStack`` (its own Transport Manager, on the network).
        ``view_under_token``: spec/RaincoreFlush's ViewUnderToken (FLUSH
        starts a flush and sends a VIEW only while this node eats, and the
        token carries FLUSH's latest view id in ``TokenMsg.above``)."""
        self.ring_part, self.fstack = ring, fstack
        self.ring: Raincore = ring.layer("raincore") if isinstance(ring, RingStack) else ring
        self.flush: Flush = fstack.layer("flush")
        self.flush.view_under_token = self.view_under_token = view_under_token
        self.told: tuple | None = None

    def to_ring(self, event) -> bool:
        if isinstance(event, (Start, Crash, Join, DeliveryFailed)):
            return True
        if isinstance(event, Receive):
            return is_ring_message(event.msg) or is_ring_frame(event.msg)
        if isinstance(event, TimerFired):
            return event.name in RING_TIMERS or event.name.startswith(("tm/", "raincore/"))
        return False

    def leave(self) -> None:
        """Suspected: FLUSH and the ring stop; the ring's own open frames are
        settled (``RingStack.leave``), then the node may exit (``settled``)."""
        self.ring_part.leave()

    @property
    def leaving(self) -> bool:
        return getattr(self.ring_part, "leaving", False)

    @property
    def settled(self) -> bool:
        return self.ring_part.settled

    def handle(self, event, now: float) -> list:
        if self.leaving:
            return self.ring_part.handle(event, now) if self.to_ring(event) else []
        if not self.to_ring(event):
            out = self.fstack.handle(event, now)
        else:
            out = self.ring_part.handle(event, now)
            if self.ring.status == "Up":
                eating = self.ring.token != NO_TOKEN
                rv = (tuple(self.ring.localView), tuple(self.ring.lastGlobalView), last_index(self.ring.globalView),
                      eating, self.ring.token.above if eating else 0)
                if rv != self.told:
                    self.told = rv
                    out += self.fstack.handle(RingView(*rv), now)
        self._carry_view()
        return out

    def _carry_view(self) -> None:
        """ViewUnderToken: the token this node holds carries FLUSH's latest
        view id on: every VIEW is sent under the token, so its id is never
        behind the latest view's once written here, before the token leaves."""
        t = self.ring.token
        if self.view_under_token and t != NO_TOKEN and self.flush.vid > t.above:
            self.ring.token = t.replace(above=self.flush.vid)


# ---------------------------------------------------------------- descriptor (impl/protocols.py)

PATIENCE_CAP = 3.0      # seconds: the most silence a cluster node's Transport Manager waits out


def cluster_node(nid: int, members: tuple, lossy: bool = False, **above) -> RingNode:
    """A cluster node of FLUSH over the ring (``above``: what runs on top,
    ``ring_flush_stack``'s ``sequencer`` and ``pass_latch``), no oracle: the
    ring on its own Transport Manager (acks, retries, the time-out that
    detects a crash) over the node's socket.  Within the abstraction
    (LossyRing FALSE) the Hungry and Starving time-outs are far above a ring
    round, so that only the Eating one fires; the lossy ring (the header's
    LossyRing) regenerates a token that died with its holder, so its Hungry
    time-out is what a kill of the holder costs (a premature one is a step
    of the model: TimelyTimeouts FALSE)."""
    ring = tuple(members)
    # a node silent for 1 s (20 sends 50 ms apart) may be taken as crashed: on a
    # loaded 2-core machine a live process can stall for a few hundred ms, so
    # the detector adapts (three times the largest recent ack delay, at most
    # PATIENCE_CAP: impl/ringtransport.py, "Adaptive patience").
    # Without LossyRing no token is lost and no 911 goes unanswered (the
    # Transport Manager passes one on past a dead node), so Hungry and
    # Starving must never fire: 30 s, since a 30-minute soak at load 15 saw
    # a joiner wait over 3 s for admission right after a kill and re-send its
    # 911 on a Starving time-out the abstraction has no step for
    rs = ring_stack(nid, ring, interval=0.05, attempts=20, patience_cap=PATIENCE_CAP, init_seq=steady_seq(ring),
                    timing=Timing(eating=0.005, hungry=1.0 if lossy else QUIET, starving=0.5 if lossy else QUIET))
    rs.quiet_leaves = not lossy
    # ViewUnderToken where it is proved (one token: not over the lossy ring,
    # whose regenerated token may carry an older view id)
    return RingNode(rs, ring_flush_stack(nid, ring, tracing="delta", **above), view_under_token=not lossy)


def cluster_constants(nodes: int, messages: int, crashes: int, lossy: bool = False, joiners: int = 0) -> dict:
    """spec/RaincoreFlush's constants for a cluster run: the ring is nodes
    1..NInit, its last eats first; ``joiners`` more nodes may join (ids
    NInit + 1..N)."""
    n = nodes + joiners
    # ShunSuspected: a node the latest view leaves out has failed, as the runtime
    # makes it (it exits SHUNNED on learning it was left out), so a shunned
    # node is no survivor in between either
    c = {"N": n, "NInit": nodes, "Founder": nodes, "MaxMsgs": n * messages, "MaxCrashes": crashes,
         "NewerViewsOnly": True, "ShunSuspected": True}
    if lossy:    # Raincore's own ring; the layer's timers know nothing of tokens in flight
        c.update(LossyRing=True, TimelyTimeouts=False, LateFailures=True)
    # the Transport Manager's time-out also fires for a node that is slow, not
    # dead: such a report is the spec's step (FalseSuspicion), and the run is
    # judged by the properties (docs/raincore.md, section 8); the node so
    # reported learns it and leaves, and the runner logs its LeaveSuspected
    c.update(FalseSuspicion=True, SuspectLeaves=True)
    # two false reports can make two initiators of one view (model TwoInitiators):
    # within the abstraction the flush runs under the token (model TwoInitiatorsFixed)
    c["ViewUnderToken"] = not lossy
    return c


DESCRIPTOR = ImplProtocol(name="raincoreflush",
                          history=HistoryProjection(deliveries="set"),
                          cluster=ClusterRun(stack=cluster_node, constants=cluster_constants, views="ring",
                                             lossy_ring=True, joins=True),
                          over_ring="raincoreflush")
