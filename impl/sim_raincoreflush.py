"""The composed stack in the simulator: the Raincore ring as FLUSH's
membership (spec/RaincoreFlush; docs/impl.md, "The composed stack in the
simulator").

A node is its ring (the Raincore layer on the Transport Manager, whose
delivery-failure notices are the only failure detector) and its FLUSH
stack (``Flush(membership="ring")``), on one clock, queue and seeded RNG.
No oracle decides anything: after every ring step the node hands FLUSH a
``RingView`` when the ring's views changed.  With ``lossy`` off the
environment keeps the spec's abstraction (a crash only where CanCrash
allows it, else retried ``CRASH_RETRY`` later; a VIEW is never lost); with
it on the ring is Raincore's own (any crash, token losses, regeneration).
The run ends settled or at the horizon; conformance/replay/raincoreflush.py's
``history_check`` judges its history with no help from the model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .engine import EffectEngine
from .events import Deliver
from .faults import FaultPlan, NETWORK
from .flush import Flush
from .raincore import Raincore, Start, Timing, TokenMsg
from .sim import IMPL_NAME, IMPL_VERSION
from .sim_flush import rescue_views
from .sim_raincore import RaincoreSimulator
from .stacks.flush import FlushStack
from .stacks.raincore import is_ring_frame, raincore_layer, ring_stack, RingStack
from .stacks.raincoreflush import is_ring_message, ring_flush_stack, RingNode, steady_seq
from groupcheck.core.trace.layers import ring_sequencer_flush as layer_of


CRASH_RETRY = 0.002      # a crash the abstraction forbids now is tried again this much later


# the fault grammar's items FLUSH over the ring has (impl/faults.py): crashes and joins at planned
# times, the token losses of the lossy ring, and the FLUSH stack's lossy network
RING_FLUSH_FAULTS = NETWORK + ("crash", "join", "tokenloss")


class RingFlushSimulator(RaincoreSimulator):

    """``RaincoreSimulator`` for the rings (``stacks`` are the ring layers,
    as there), plus one FLUSH stack per node (``fstacks``) on the lossy
    network of impl/sim.py."""

    def __init__(self, rings: dict[int, Raincore], fstacks: dict[int, FlushStack], seed: int,
                 faults: FaultPlan, horizon: float = 30.0, probe: float = 0.05,
                 ring_parts: dict | None = None, lossy: bool = False, view_under_token: bool = False) -> None:
        faults.only(RING_FLUSH_FAULTS, "FLUSH over the ring")
        # crashes are this class's (CanCrash); joins and token losses are the ring's
        super().__init__(rings, seed, FaultPlan(joins=faults.joins, token_losses=faults.token_losses,
                                                ring_delay=faults.ring_delay), horizon, probe)
        self.lossy = lossy
        self.faults = self.plan = faults        # FLUSH's frames: its network
        self.fstacks = fstacks
        self.nodes = {n: RingNode((ring_parts or rings)[n], fstacks[n], view_under_token) for n in rings}
        self.engine = EffectEngine(self.nodes, self, self._record, self._deliver)     # each node's effects, ring and FLUSH
        self.sent_in: dict[tuple, int] = {}            # (sender, seqno) -> the view it was multicast in
        self.app_sent: dict[tuple, float] = {}         # SEQUENCER on top: (sender, seqno) -> when sent
        self.send_vid: dict[tuple, int] = {}           # SEQUENCER on top: (sender, seqno) -> its view at Send
        self.token_sent: set[int] = set()              # in-flight datagram ids that carry a token
        self.skipped_crashes: list[int] = []
        self.crash_retries = 0
        self.rescued = 0
        self.last_app = 0.0
        for nid, at in faults.crashes:
            if nid not in rings:
                raise ValueError(f"crash of unknown node {nid}")
            self._push(at, "fcrash", nid, None)

    def start(self) -> None:
        """The steady ring of spec/RaincoreFlush's Init: every configured node
        in Agreement on the ring, the founder (its last node) eating the
        token; each node's FLUSH hears the ring's view at once."""
        ring = self.layer(next(iter(self.stacks))).init_ring
        for n in ring:
            self._handle(n, Start(token=n == ring[-1]))

    def flush(self, nid: int) -> Flush:
        return self.fstacks[nid].flush

    def app_send(self, at: float, nid: int, payload: bytes) -> None:
        self.last_app = max(self.last_app, at)
        super().app_send(at, nid, payload)

    # ------------------------------------------------------------ the queue

    def _drained(self) -> bool:
        return self.settled()

    def _step(self, kind: str, nid, data) -> bool | None:
        if kind == "fcrash":
            return self._crash(nid)
        if kind == self.RING:
            self.token_sent.discard(data[0])
        elif kind == self.DATAGRAM and nid not in self.crashed and data[0] in self.crashed and is_ring_frame(data[1]):
            self.net.lost += 1        # a crashed node's ring messages die with it (RingCrash also lets them arrive)
            return None
        return super()._step(kind, nid, data)   # FLUSH's datagrams and events, the ring's, every timer, the probe

    # ------------------------------------------------------------ the policy (impl/engine.py)

    def send(self, src: int, dest: int, msg) -> None:
        """The ring's messages go to its Transport Manager once the step is
        complete (impl/sim_raincore.py); FLUSH's frames to the lossy network."""
        if is_ring_message(msg):
            super().send(src, dest, msg)
        else:
            self._transmit(src, dest, msg, self.DATAGRAM)

    def _record(self, rec: dict) -> None:
        super()._record(rec)
        if rec["name"] == "Multicast":
            self.sent_in[(rec["msg"]["sender"], rec["msg"]["seqno"])] = rec["msg"]["view"]
        elif rec["name"] == "Send":               # SEQUENCER's: an application message
            key = (rec["msg"]["sender"], rec["msg"]["seqno"])
            self.app_sent.setdefault(key, self.now)
            self.send_vid.setdefault(key, self.fstacks[rec["nid"]].layer("sequencer").vid)

    def _send(self, src: int, msg) -> None:
        before = set(self.inflight)
        super()._send(src, msg)
        if isinstance(msg, TokenMsg):
            self.token_sent |= set(self.inflight) - before

    # ------------------------------------------------------------ the environment

    def latest_view(self) -> tuple[int, tuple]:
        best = max(self.fstacks, key=lambda n: self.flush(n).vid)
        return self.flush(best).vid, self.flush(best).members

    def can_crash(self, p: int) -> bool:
        """The spec's CanCrash, but for the budget (the plan is the budget)."""
        ring, f = self.layer(p), self.flush(p)
        others = bool(set(self.latest_view()[1]) - self.crashed - {p})
        if self.lossy:            # Raincore's ring: any live member, at any point (on
            # impl/ringtransport.py's TM too: a token p took but whose ack died with it
            # is the spec's LateFailure)
            return ring.status == "Up" and f.is_member and others
        tm = self.nodes[p].ring_part.layer("tm") if isinstance(self.nodes[p].ring_part, RingStack) else None
        # (or a frame p acked and waits to be told to take: its sender counts it delivered)
        own_token = (any(isinstance(m, TokenMsg) for _, m, _ in tm.pending.values()) or bool(tm.held)
                     if tm is not None else any(self.inflight.get(d) == p for d in self.token_sent))
        # and not while p holds a queued join request: the abstraction has no
        # StarvingTimeout, so a joiner whose 911 died with p would never ask
        # again (the layer does ask again: seed 004's Starving timeout)
        return (ring.status == "Up" and f.is_member and ring.tokenState != "Eating" and not own_token
                and not ring.newNodes and others)

    def _crash(self, p: int) -> None:
        if p in self.crashed or self.layer(p).status != "Up" or not self.flush(p).is_member:
            self.skipped_crashes.append(p)
            return
        if not self.can_crash(p):
            self.crash_retries += 1
            self._push(self.now + CRASH_RETRY, "fcrash", p, None)
            return
        self._rescue_views(p)
        self.crashed.add(p)
        # the ring's Crash (its record is the spec's Crash); the Transport
        # Manager loses what p sent and was not delivered yet
        super()._step("crash", p, None)

    def _rescue_views(self, p: int) -> None:
        """I9 (impl/sim_flush.py): p's unacknowledged reliable frames up to its
        last VIEW reach every survivor before p goes."""
        self.rescued += rescue_views(self.fstacks[p].layer("reliable"), p,
                                     sorted(set(self.stacks) - self.crashed - {p}), self._handle)

    def settled(self) -> bool:
        if self.now < max(self.plan.last, self.last_app) or not self.is_agreed():
            return False
        live = set(self.live())
        for n in live:
            f, rel = self.flush(n), self.fstacks[n].layer("reliable")
            if (set(f.members) != live or f.phase != "Normal" or f.blocked or f.flush_init
                    or f.latched or any(rel.unacked.values())):
                return False
        return True


@dataclass
class RingFlushConfig:
    n: int = 3                 # nodes 1..n
    init_size: int = 3         # nodes 1..init_size: the configured ring and FLUSH's first view
    # Without ``lossy``, Hungry and Starving timeouts well above a ring round (a
    # few ms) and an admission (two rounds): within spec/RaincoreFlush's
    # abstraction only the Eating timeout fires (no token is lost; a joiner is
    # admitted before it asks again)
    timing: Timing | None = None    # None: ``ring_timing``'s default
    reconcile: bool = True
    sequencer: bool = False    # SEQUENCER on top: ring, FLUSH, SEQUENCER (a joiner sends once a member)
    # SEQUENCER on top: the coordinator's DATA passes FLUSH's latch and every member re-sends
    # its forward-table at each view change (spec ResendAlways; impl/stacks/sequencerflush.py);
    # off, the latch holds the DATA into the next view (divergence (a) of docs/flush.md), which
    # the FLUSH-only replay of ``without_sequencer`` needs (model/raincoreflush.py's Multicast
    # requires an open latch)
    pass_latch: bool = False
    # tm: the ring on the lossy network with its own Transport Manager
    # (impl/ringtransport.py: acks, retries, a time-out as failure detector)
    # instead of the simulator's perfect one
    tm: bool = False
    # lossy: Raincore's own ring (spec LossyRing = TRUE): crashes at any point, token
    # losses, the Hungry and Starving timeouts of impl/raincore.py's Timing (``timing``
    # is then ignored unless given: see ``ring_timing``)
    lossy: bool = False
    # spec/RaincoreFlush ViewUnderToken: a flush starts and its VIEW is sent only at the
    # token holder, which carries the latest view's id (the cluster over the abstraction)
    view_under_token: bool = False

    def ring_timing(self) -> Timing:
        """``timing``, or by default: the lossy ring Raincore's own Timing,
        short enough to regenerate a lost token within a run (a premature
        timeout is a step of the model: its timeouts are untimed); the
        abstraction the slow timeouts above."""
        if self.timing is not None:
            return self.timing
        return Timing() if self.lossy else Timing(eating=0.005, hungry=0.5, starving=0.5)


def simulate_ring_flush(cfg: RingFlushConfig, seed: int, faults: FaultPlan | None = None,
                        messages=(), *, horizon: float = 30.0
                        ) -> tuple[list[dict], dict, RingFlushSimulator]:
    """One run of FLUSH over the ring with the application multicasts
    ``messages`` = ``(time, node, payload)``.  Returns ``(records, summary,
    simulator)``; conformance/replay/raincoreflush.py ``history_check`` judges the
    simulator's history."""
    faults = faults or FaultPlan()
    ring = tuple(range(1, cfg.init_size + 1))
    nodes = range(1, cfg.n + 1)
    if faults.token_losses and (cfg.tm or not cfg.lossy):
        raise ValueError("token losses need the lossy ring on the simulator's Transport Manager "
                         "(lossy on, tm off: with tm the network loses frames, not tokens)")
    timing = cfg.ring_timing()
    if cfg.tm:
        parts = {n: ring_stack(n, ring, init_seq=steady_seq(ring), timing=timing) for n in nodes}
        rings = {n: parts[n].layer("raincore") for n in nodes}
    else:
        parts = rings = {n: raincore_layer(n, ring, init_seq=steady_seq(ring), timing=timing) for n in nodes}
    fstacks = {n: ring_flush_stack(n, ring, reconcile=cfg.reconcile, sequencer=cfg.sequencer,
                                   pass_latch=cfg.pass_latch, universe=tuple(nodes) if cfg.sequencer else None)
               for n in nodes}
    sim = RingFlushSimulator(rings, fstacks, seed, faults, horizon, ring_parts=parts, lossy=cfg.lossy,
                             view_under_token=cfg.view_under_token)
    for at, nid, payload in messages:
        sim.app_send(at, nid, payload)
    # SEQUENCER on top: the three-layer stack's records (conformance/replay/raincoresequencerflush.py);
    # ``without_sequencer`` gives its ring's and FLUSH's as a raincoreflush trace
    protocol = "raincoresequencerflush" if cfg.sequencer else "raincoreflush"
    header = {"kind": "header", "protocol": protocol, "nodes": list(nodes), "seed": seed,
              "faults": faults.to_json(), "impl": IMPL_NAME, "version": IMPL_VERSION}
    sim.start()                         # each node's FLUSH learns the ring's view from its Start
    settled = sim.run()
    summary = {
        "settled": settled, "end_clock": sim.now, "live": sim.live(),
        "crashed": sorted(sim.crashed), "skipped_crashes": sim.skipped_crashes,
        "crash_retries": sim.crash_retries, "rescued": sim.rescued,
        "ring_views": {n: [list(v) for v in sim.layer(n).globalView] for n in nodes},
        "views": {n: {v: list(m) for v, m in sim.flush(n).views.items()} for n in nodes},
        "delivered": {n: [[d.sender, d.seqno] for d in sim.deliveries[n] if isinstance(d, Deliver)]
                      for n in nodes},
        "network": asdict(sim.net), "app_dropped": sim.app_dropped,
        "stats": {n: {**sim.fstacks[n].stats, **{f"ring.{k}": v for k, v in sim.layer(n).stats.items()}}
                  for n in nodes},
    }
    return [header] + sim.records, summary, sim


def without_sequencer(records: list[dict]) -> list[dict]:
    """The ring's and FLUSH's records of a run with SEQUENCER on top, for
    the replay against model/raincoreflush.py (FLUSH carries the
    coordinator's DATA as its multicasts, whatever is above it); the header
    names protocol raincoreflush: what is left is a run of FLUSH over the
    ring."""
    return [dict(r, protocol="raincoreflush") if r.get("kind") == "header" else r
            for r in records if r.get("kind") != "event" or layer_of(r["name"], r.get("params") or {}) != "sequencer"]
