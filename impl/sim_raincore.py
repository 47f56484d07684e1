"""The Raincore environment for the deterministic simulator (seed 004).

Theory of operation
-------------------
``RaincoreSimulator`` subclasses ``impl/sim.Simulator`` (one time-ordered
queue, one seeded RNG, no clocks or threads) and replaces its network and
environment with the ones the Raincore spec assumes:

* The Transport Manager is reliable unicast and a perfect failure detector
  on delivery.  A datagram reaches its destination after a random delay; if
  the destination is not up when it arrives (crashed, or a new node that has
  not started), the sender's layer gets ``DeliveryFailed(msg)`` in the same
  step, so the spec's guard ``status[m.dest] # "Up"`` holds when the failure
  is taken.  There is no other loss, no duplication.  As the spec's message
  sets, a message equal to one still in flight between the same nodes (a
  Starving node's repeated 911 while the last is late) is that message, not
  a second copy (``NetStats.merged`` counts them).
* ``crashes`` ``(node, t)``: the node crashes (the layer keeps its data) and
  the Transport Manager loses every message it has sent and not yet
  delivered (the spec's Crash drops the messages whose ``cur`` is the node).
* ``recoveries`` ``(node, t)``: a crashed node restarts with its state and
  sends a 911 (the spec's Recover); one that is up at ``t`` is left alone.
* ``joins`` ``(node, t)``: a node outside the configured ring starts and asks
  to join by 911 (the spec's Join).
* ``token_losses`` ``t``: the next token handed to the Transport Manager at
  or after ``t`` is lost in transit (the spec's TokenLoss, logged right after
  the action that sent it).
* ``late_911`` ``w``: each 911 takes up to ``w`` longer (uniform), the
  spec's Timely911 not assumed: a claim may come home stale.

The run starts in the spec's steady ring (every configured node in
Agreement, the token on its way from the last node to the first) or, with
``cold_start``, before the founder's Initialization.  After the last planned
fault the simulator checks every ``probe`` seconds whether every live node is
in Agreement on the same view made of exactly the live nodes; the run ends
there (``agreed``) once every live node has also held a token since that
fault (a lost token is noticed only by a timeout), or at ``horizon``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from . import codec
from .engine import env_record
from .events import Receive, Up, ViewChange
from .raincore import Crash, DeliveryFailed, Join, Msg911, Raincore, Recover, Start, Timing, TokenMsg, spec_msg
from .sim import IMPL_NAME, IMPL_VERSION, FaultPlan, Simulator
from .stacks.raincore import raincore_layer


# the fault grammar's items the ring's environment has (impl/faults.py)
RING_FAULTS = ("crash", "recover", "join", "tokenloss", "late911")


# A run that reaches its horizon this long after the last planned fault has
# had 40 Hungry timeouts (Timing.hungry = 0.25 s) to settle: Agreed is due.
SETTLE_AFTER = 10.0


class RaincoreSimulator(Simulator):
    RING = "ring"               # the queue entry of a ring message the Transport Manager carries
    def __init__(self, layers: dict[int, Raincore], seed: int, faults: FaultPlan | None = None,
                 horizon: float = 30.0, probe: float = 0.05, items=RING_FAULTS) -> None:
        super().__init__(layers, seed, FaultPlan(), horizon)     # no oracle crash: the ring's are below
        self.rf = (faults or FaultPlan()).only(items, "the ring")
        self.probe = probe
        self.inflight: dict[int, int] = {}        # datagram id -> sender (cur), until delivered
        self._frames: dict[int, tuple] = {}       # datagram id -> (sender, dest, frame), the same
        self.lose_token = 0                       # tokens still to lose
        self.committed: dict[int, list] = {n: [] for n in layers}   # views each node emitted upward
        self.decode_errors = 0
        self.agreed = False
        self.ate_at: dict[int, float] = {}        # when each node last took a token (Eating)
        self._held: list = []                     # the ring's messages of the step under way
        for kind, plan in (("crash", self.rf.crashes), ("recover", self.rf.recoveries), ("join", self.rf.joins)):
            for nid, at in plan:
                if nid not in layers:
                    raise ValueError(f"{kind} of unknown node {nid}")
                self._push(at, kind, nid, None)
        for at in self.rf.token_losses:
            self._push(at, "losetoken", None, None)
        self._push(self.rf.last, "probe", None, None)

    def layer(self, nid: int) -> Raincore:
        return self.stacks[nid]

    def live(self) -> list[int]:
        return [n for n in self.stacks if self.layer(n).status == "Up"]

    def is_agreed(self) -> bool:
        """Every live node in Agreement on the same view, the live nodes."""
        up = self.live()
        views = {self.layer(n).lastGlobalView for n in up}
        return (bool(up) and all(self.layer(n).viewState == "Agreement" for n in up)
                and len(views) == 1 and set(next(iter(views))) == set(up))

    def start(self) -> None:
        ring = next(iter(self.stacks.values())).init_ring
        for n in ring:
            self._handle(n, Start())
        first = self.layer(ring[0])
        if not first.cold_start:      # the steady ring: the token on its way to the first node
            t = self.layer(ring[-1]).lastToken
            self._send(ring[-1], t)

    def settled(self) -> bool:
        """Agreement, and every live node has held a token since the last fault."""
        return self.is_agreed() and all(self.ate_at.get(n, -1.0) > self.rf.last
                                        or self.layer(n).tokenState == "Eating" for n in self.live())

    def _drained(self) -> bool:
        return self.is_agreed()

    def _step(self, kind: str, nid, data) -> bool | None:
        if kind == "probe":
            if self.settled():
                self.agreed = True
                return True
            self._push(self.now + self.probe, "probe", None, None)
        elif kind == "losetoken":
            self.lose_token += 1
        elif kind == "crash":
            if self.layer(nid).status == "Up":
                self._handle(nid, Crash())
                # the Transport Manager loses what the node has not delivered yet
                self.inflight = {k: s for k, s in self.inflight.items() if s != nid}
        elif kind == "recover":
            if self.layer(nid).status == "Down":
                self._handle(nid, Recover())
        elif kind == "join":
            if self.layer(nid).status == "Off":
                self._handle(nid, Join())
        elif kind == self.RING:
            did, src, payload = data
            self._frames.pop(did, None)
            if self.inflight.pop(did, None) is None:
                return                           # lost with its crashed sender
            try:
                msg = codec.decode(payload)
            except codec.DecodeError:
                self.decode_errors += 1
                return
            if self.layer(nid).status == "Up":
                self._handle(nid, Receive(src, msg))
            else:
                self.net.to_crashed += 1
                self._handle(src, DeliveryFailed(msg))
        else:
            return super()._step(kind, nid, data)     # timers, and whatever else a subclass queues

    # ------------------------------------------------------------ the policy (impl/engine.py)

    def _handle(self, nid: int, event) -> None:
        """The engine performs the node's effects; the ring's messages reach
        the Transport Manager once the step is complete, after its timers."""
        was = self.layer(nid).tokenState
        held, self._held = self._held, []
        self.engine.handle(nid, event)
        if was != "Eating" and self.layer(nid).tokenState == "Eating" and self.layer(nid).status == "Up":
            self.ate_at[nid] = self.now
        sends, self._held = self._held, held
        for msg in sends:
            self._send(nid, msg)

    def send(self, src: int, dest: int, msg) -> None:
        self._held.append(msg)

    def _deliver(self, nid: int, eff) -> None:
        if isinstance(eff, Up) and isinstance(eff.msg, ViewChange):
            self.committed[nid].append((eff.msg.view.vid, eff.msg.view.members))
        else:
            super()._deliver(nid, eff)

    def _send(self, src: int, msg) -> None:
        """The Transport Manager takes ``msg`` (a datagram to ``msg.dest``),
        or loses it as the plan's next token loss."""
        self.net.datagrams += 1
        if isinstance(msg, TokenMsg) and self.lose_token:
            self.lose_token -= 1
            self.net.lost += 1
            self._record(env_record("TokenLoss", self.now, msg=spec_msg(msg)))
            return
        key = (src, msg.dest, codec.encode(msg))
        if any(self._frames[d] == key for d in self.inflight):
            self.net.merged += 1                 # the spec's set holds it once
            return
        self._n += 1
        self.inflight[self._n] = src
        self._frames[self._n] = key
        at = self.now + self.rng.uniform(*self.rf.ring_delay)
        if self.rf.late_911 and isinstance(msg, Msg911):
            at += self.rng.uniform(0, self.rf.late_911)
        self._push(at, self.RING, msg.dest, (self._n, src, key[2]))


@dataclass
class RaincoreConfig:
    n: int = 4                    # nodes 1..n
    init_size: int = 4            # nodes 1..init_size form the configured ring
    init_seq: int = 14            # Figure 12's ring starts with 11..14 as the last seqs
    cold_start: bool = False
    timing: Timing = field(default_factory=Timing)
    neutral_recovery: bool = True
    fresh_claim: bool = True
    fresh_view: bool = True
    token_ring_claim: bool = True

    def constants(self) -> dict:
        """The model constants a replay needs (timeouts are untimed: TimelyTimeouts
        FALSE; any node may crash: StableFounder FALSE)."""
        return {"N": self.n, "InitSize": self.init_size, "InitSeq": self.init_seq, "ColdStart": self.cold_start,
                "TimelyTimeouts": False, "StableFounder": False, "NeutralRecovery": self.neutral_recovery,
                "FreshClaim": self.fresh_claim, "FreshView": self.fresh_view,
                "TokenRingClaim": self.token_ring_claim}


def make_layers(cfg: RaincoreConfig, tracing: bool = True) -> dict[int, Raincore]:
    ring = tuple(range(1, cfg.init_size + 1))
    return {n: raincore_layer(n, ring, init_seq=cfg.init_seq, cold_start=cfg.cold_start, timing=cfg.timing,
                               neutral_recovery=cfg.neutral_recovery, fresh_claim=cfg.fresh_claim,
                               fresh_view=cfg.fresh_view, token_ring_claim=cfg.token_ring_claim, tracing=tracing)
            for n in range(1, cfg.n + 1)}


def simulate(cfg: RaincoreConfig, seed: int, faults: FaultPlan | None = None, *,
             horizon: float = 30.0, tracing: bool = True) -> tuple[list[dict], dict, RaincoreSimulator]:
    """One Raincore run.  Returns ``(records, summary, simulator)``: the
    records are the simulator's (a header, then one per spec action)."""
    faults = faults or FaultPlan()
    sim = RaincoreSimulator(make_layers(cfg, tracing), seed, faults, horizon)
    header = {"kind": "header", "protocol": "raincore", "nodes": list(range(1, cfg.n + 1)), "seed": seed,
              "faults": faults.to_json(), "impl": IMPL_NAME, "version": IMPL_VERSION}
    sim.start()
    agreed = sim.run()
    summary = {
        "agreed": agreed, "quiescent": agreed, "end_clock": sim.now,
        # the end state is the one the spec's Liveness judges: the run stopped
        # at the ring's settle point, or ran SETTLE_AFTER past the last fault
        "settled": agreed or sim.now - faults.last >= SETTLE_AFTER,
        "live": sim.live(),
        "views": {n: [list(v) for v in sim.layer(n).globalView] for n in sim.stacks},
        "committed": {n: [[i, list(m)] for i, m in sim.committed[n]] for n in sim.stacks},
        "network": asdict(sim.net), "decode_errors": sim.decode_errors,
        "stats": {n: dict(sim.layer(n).stats) for n in sim.stacks},
    }
    return [header] + sim.records, summary, sim
