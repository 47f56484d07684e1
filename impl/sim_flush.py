"""The deterministic simulator for stacks with a FLUSH layer (seed 003).

Theory of operation
-------------------
``FlushSimulator`` is impl/sim.py's ``Simulator`` (same queue, clock, RNG and
faulty network) with the membership oracle of spec/Flush/Flush.tla in place
of the SEQUENCER one: the oracle does not decide views (the flush
coordinator does, in ``SendView``); it is the perfect and immediate failure
detector, and it keeps the spec's promise I9 that a VIEW is never lost.

A join of p at its planned time, when the spec's ``Join(p)`` allows it (p
is in no view and has not asked yet): p's layer logs ``Join`` and every
live member learns it (``JoinRequest``) in that instant; the coordinator's
next flush takes p into the new view.

A graceful leave of p at its planned time, when the spec's ``Leave(p)``
allows it (p is in the latest view and not its coordinator): p's layer logs
``Leave`` and every live member learns it (``LeaveRequest``) in that
instant; the coordinator's next flush leaves p out of the new view.

A crash of member p at its planned time, when the spec's ``CanCrash`` allows
it (p installed a view it is in; some member of the latest view other than p
stays; otherwise the crash is skipped and counted):

1. p stops; datagrams to p are dropped from now on (spec: the channels to p
   are gone), the ones p sent stay in flight and may still be lost.
2. I9: for every survivor, p's reliable frames not yet acknowledged, up to
   its last frame carrying a VIEW, are handed to the survivor at once, in
   order (GMS's view agreement; the spec's crash cut never cuts below the
   last VIEW).  These receptions precede the crash in the trace: p is still
   alive for the model when they are taken.
3. The ``Crash`` record, then ``Suspect(p)`` at every survivor in the same
   instant, so no survivor takes a message from p between the crash and its
   detection (the spec's detector is immediate).

``simulate_flush`` runs a workload of application multicasts over FLUSH
stacks (``flush_stack``, or ``sequencer_flush_stack`` for SEQUENCER over
FLUSH) and returns the trace records (header first) and a summary.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Callable, Iterable

from . import codec
from .events import Deliver, Receive
from .flush import JoinRequest, LeaveRequest, Suspect, ViewMsg
from .stacks.flush import flush_stack
from .engine import env_record
from .sim import IMPL_NAME, IMPL_VERSION, FaultPlan, Simulator


class FlushSimulator(Simulator):
    def __init__(self, stacks: dict[int, Any], seed: int, faults: FaultPlan | None = None,
                 horizon: float = 60.0, leaves: tuple[tuple[int, float], ...] = (),
                 joins: tuple[tuple[int, float], ...] = ()) -> None:
        super().__init__(stacks, seed, faults, horizon)
        self.join_requested: set[int] = set()
        self.skipped_joins: list[int] = []
        for nid, at in joins:
            if nid not in self.stacks:
                raise ValueError(f"join of unknown member {nid}")
            self._push(at, "join", nid, None)
        self.max_crashes = len(self.faults.crashes)
        self.max_leaves = len(leaves)
        self.leaving: set[int] = set()
        for nid, at in leaves:
            if nid not in self.stacks:
                raise ValueError(f"leave of unknown member {nid}")
            self._push(at, "leave", nid, None)
        self.skipped_crashes: list[int] = []
        self.skipped_leaves: list[int] = []
        self.rescued = 0
        self.crash_phases: list[dict] = []     # what each crash interrupted

    def flush(self, nid: int):
        return self.stacks[nid].layer("flush")

    def latest_view(self) -> tuple[int, tuple[int, ...]]:
        """The latest decided view (vid, members): the highest any member installed."""
        best = max(self.stacks, key=lambda n: self.flush(n).vid)
        f = self.flush(best)
        return f.vid, f.members

    def staying(self) -> set[int]:
        return set(self.latest_view()[1]) - self.crashed - self.leaving

    def can_crash(self, p: int) -> bool:
        return (p not in self.crashed and self.flush(p).is_member
                and len(self.crashed) < self.max_crashes and bool(self.staying() - {p}))

    def can_leave(self, p: int) -> bool:
        """The spec's Leave(p): a member of the latest view, not its coordinator."""
        staying = self.staying()
        return (p not in self.crashed and self.flush(p).is_member and self.flush(p).vid == self.latest_view()[0]
                and p not in self.leaving and len(self.leaving) < self.max_leaves
                and not (p in staying and p == min(staying)))

    def _step(self, kind: str, nid, data) -> None:
        if kind == "crash":
            return self._crash(nid)
        if kind == "leave":
            return self._leave(nid)
        if kind == "join":
            return self._join(nid)
        return super()._step(kind, nid, data)

    def can_join(self, p: int) -> bool:
        """The spec's Join(p): p is in no view and has not asked yet."""
        return (p not in self.crashed and self.flush(p).vid == 0 and p not in self.latest_view()[1]
                and p not in self.join_requested)

    def _join(self, p: int) -> None:
        self._announce(p, self.can_join(p), self.skipped_joins, self.join_requested, JoinRequest)

    def _leave(self, p: int) -> None:
        self._announce(p, self.can_leave(p), self.skipped_leaves, self.leaving, LeaveRequest)

    def _announce(self, p: int, allowed: bool, skipped: list, asked: set, request) -> None:
        """p's Join or Leave, if the spec allows it now (else skipped): p's
        own action first, then every live member learns it in that instant."""
        if not allowed:
            skipped.append(p)
            return
        asked.add(p)
        for m in [p] + sorted(set(self.stacks) - self.crashed - {p}):
            self._handle(m, request(p))

    def _crash(self, p: int) -> None:
        if not self.can_crash(p):
            self.skipped_crashes.append(p)
            return
        f = self.flush(p)
        coord = min(set(f.members) - self.crashed)
        self.crash_phases.append({"member": p, "phase": f.phase, "blocked": f.blocked,
                                  "initiator": f.flush_init == p, "coordinator": coord == p,
                                  "clock": self.now})
        self.crashed.add(p)
        self._rescue_views(p)
        self._record(env_record("Crash", self.now, p))
        for m in sorted(set(self.stacks) - self.crashed):
            self._handle(m, Suspect(p))

    def _rescue_views(self, p: int) -> None:
        self.rescued += rescue_views(self.stacks[p].layer("reliable"), p,
                                     sorted(set(self.stacks) - self.crashed), self._handle)


def rescue_views(rel, p: int, survivors, handle) -> int:
    """I9, a VIEW is never lost: the crashed member ``p``'s reliable frames
    not yet acknowledged (its layer ``rel``), up to its last frame carrying
    a VIEW, reach each of ``survivors`` at once, in order (``handle(nid,
    event)``).  Returns how many frames were handed over."""
    n = 0
    for dest in survivors:
        u = rel.unacked.get(dest) or {}
        views = [q for q, body in u.items() if isinstance(body, ViewMsg)]
        if not views:
            continue
        for q in sorted(x for x in u if x <= max(views)):
            n += 1
            handle(dest, Receive(p, codec.encode(codec.XData(p, q, u[q]))))
    return n


def flush_constants(nodes, messages, crashes, reconcile: bool = True, leaves=(), n_init: int | None = None) -> dict:
    """spec/Flush constants for a run: members 1..n_init in the first view
    (all by default), crashes, leaves and multicasts as planned; the fixed
    variant unless ``reconcile`` is False."""
    n = len(list(nodes))
    return {"N": n, "NInit": n if n_init is None else n_init, "MaxMsgs": len(list(messages)),
            "MaxCrashes": len(list(crashes)),
            "MaxLeaves": len(list(leaves)), "ReconcileDigests": bool(reconcile)}


def simulate_flush(nodes: Iterable[int], messages: Iterable[tuple[float, int, bytes]], seed: int,
                   faults: FaultPlan | None = None, *, horizon: float = 60.0, protocol: str = "flush",
                   make_stack: Callable[..., Any] = flush_stack,
                   leaves: tuple[tuple[int, float], ...] = (), n_init: int | None = None,
                   joins: tuple[tuple[int, float], ...] = (), states: str = "full") -> tuple[list[dict], dict]:
    """Run FLUSH stacks on ``nodes`` with the application multicasts
    ``messages`` = ``(time, member, payload)``: the first ``n_init`` (all by
    default) form the first view, the others may join (``joins`` =
    ``(member, time)``); ``leaves`` = ``(member, time)`` graceful leaves.
    ``states="delta"``: the stacks trace format 2's deltas themselves
    (``tracing="delta"``), which ``tracefile.to_v2`` then takes as they are;
    diffing full states there costs a pass over every delivery per record."""
    members = tuple(nodes)
    first = members[:len(members) if n_init is None else n_init]
    messages = list(messages)
    faults = faults or FaultPlan()
    sim = FlushSimulator({n: make_stack(n, first) for n in members}, seed, faults, horizon,
                         leaves=tuple(leaves), joins=tuple(joins))
    for at, nid, payload in messages:
        sim.app_send(at, nid, payload)
    header = {"kind": "header", "protocol": protocol, "nodes": list(members), "seed": seed,
              "faults": {**faults.to_json(), "leaves": [list(x) for x in leaves],
                         "joins": [list(x) for x in joins]},
              "impl": IMPL_NAME, "version": IMPL_VERSION, "states": states}
    quiescent = sim.run()
    live = [n for n in members if n not in sim.crashed and sim.flush(n).is_member]
    waiting = [n for n in members if n in sim.join_requested and n not in sim.crashed and sim.flush(n).vid == 0]
    unfinished = [n for n in live if sim.flush(n).phase != "Normal" or sim.flush(n).blocked
                  or sim.flush(n).latched or getattr(sim.stacks[n], "held", None)
                  or sim.flush(n).flush_init] + waiting
    summary = {
        "quiescent": quiescent,
        "end_clock": sim.now,
        "crashed": sorted(sim.crashed),
        "skipped_crashes": sim.skipped_crashes,
        "left": sorted(n for n in members if sim.flush(n).vid and not sim.flush(n).is_member),
        "skipped_leaves": sim.skipped_leaves,
        "joined": sorted(n for n in sim.join_requested if sim.flush(n).vid > 0),
        "skipped_joins": sim.skipped_joins,
        "crash_phases": sim.crash_phases,
        "views": [list(next(sim.flush(n).views[v] for n in members if v in sim.flush(n).views))
                  for v in range(1, sim.latest_view()[0] + 1)],
        "vid": {n: sim.flush(n).vid for n in members},
        "unfinished": unfinished,
        "delivered": {n: [[d.sender, d.seqno] for d in sim.deliveries[n] if isinstance(d, Deliver)]
                      for n in members},
        "payloads": {n: [d.payload for d in sim.deliveries[n] if isinstance(d, Deliver)] for n in members},
        "network": {**asdict(sim.net), "rescued": sim.rescued},
        "app_dropped": sim.app_dropped,
        "stats": {n: sim.stacks[n].stats for n in members},
    }
    return [header] + sim.records, summary
