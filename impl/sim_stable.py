"""STABLE's simulator environment (kept out of impl/stable.py): the
engine of impl/sim.py plus the Join environment action, the membership
oracle's admission of a joiner, and STABLE's round-robin workload."""

from __future__ import annotations

from dataclasses import asdict

from .events import Deliver, View, ViewChange
from .sim import IMPL_NAME, IMPL_VERSION, FaultPlan, Simulator
from .stacks.stable import stable_stack
from .campaign import SEND_INTERVAL


def admit(stacks: dict, joiner: int, vid: int, handle, make_stack) -> View:
    """The membership oracle's Join (view number ``vid``): the coordinator
    (smallest member of the group) installs the view with ``joiner`` at once
    and hands it its delivered vector as the join digest; the joiner's stack
    is built with it and installs the view, tracing Join.  ``handle(nid,
    event)`` runs an event at a stack and performs its effects (the caller's
    runtime); ``stacks`` gains the joiner's stack.  The caller hands the view
    to the other members later.  One view change at a time: every member of
    the group must have installed the group's view (else ValueError)."""
    group = sorted(m for m, s in stacks.items() if s.layer("stable").view)
    if joiner in group or any(stacks[m].layer("stable").view != frozenset(group) for m in group):
        raise ValueError("one view change at a time: the group has not installed its view yet")
    c = group[0]
    view = View(vid, tuple(group + [joiner]))
    digest = {x: k for x, k in stacks[c].layer("stable").delivered.items() if k}
    handle(c, ViewChange(view))
    stacks[joiner] = make_stack(joiner, (), join_digest=digest)
    handle(joiner, ViewChange(view))
    return view


def can_admit(stacks: dict) -> bool:
    group = frozenset(m for m, s in stacks.items() if s.layer("stable").view)
    return all(stacks[m].layer("stable").view == group for m in group)


# ---------------------------------------------------------------- simulation

class StableSimulator(Simulator):
    """The simulator plus the Join environment action: ``joins`` lists
    ``(member, time)``; a join waits (retried every 5 ms) until the group has
    installed its last view, and application sends of a member that has not
    joined yet wait for it likewise."""

    RETRY = 0.005

    def __init__(self, stacks: dict, seed: int, faults: FaultPlan | None, horizon: float,
                 joins=(), make_stack=stable_stack) -> None:
        super().__init__(stacks, seed, faults, horizon)
        self.make_stack = make_stack
        for nid, at in joins:
            self._push(at, "join", nid, None)

    def _step(self, kind: str, nid, data) -> None:
        if kind == "join":
            if not can_admit(self.stacks):
                return self._push(self.now + self.RETRY, "join", nid, None)
            view = admit(self.stacks, nid, len(self.views) + 1, self._handle_new, self.make_stack)
            self.views.append(view)
            lo, hi = self.faults.install_delay
            for m in view.members[:-1]:
                if self.stacks[m].layer("stable").view != frozenset(view.members):
                    at = max(self.now + self.rng.uniform(lo, hi), self._install_at.get(m, 0.0))
                    self._install_at[m] = at
                    self._push(at, "view", m, view)
            return None
        if kind == "event" and nid not in self.stacks:
            return self._push(self.now + self.RETRY, kind, nid, data)
        return super()._step(kind, nid, data)

    def _handle_new(self, nid: int, event) -> None:
        self.deliveries.setdefault(nid, [])
        self._handle(nid, event)


def workload(nodes: list[int], per_member: int, start: dict[int, float]) -> list[tuple[float, int, bytes]]:
    """``per_member`` multicasts by each member, round robin every 10 ms; a
    member's first send not before ``start[member]`` (its join)."""
    out, t = [], {m: start.get(m, 0.0) for m in nodes}
    for k in range(per_member * len(nodes)):
        m = nodes[k % len(nodes)]
        at = max(k * SEND_INTERVAL, t[m])
        t[m] = at + SEND_INTERVAL
        out.append((round(at, 6), m, f"m{m}.{1 + k // len(nodes)}".encode()))
    return out


def simulate(n: int, per_member: int, seed: int, faults: FaultPlan | None = None, *, join: bool = True,
             join_at: float = 0.015, heard_from_reset: bool = True, gossip_interval: float | None = 0.05,
             tracing: bool = True, horizon: float = 60.0) -> tuple[list[dict], dict]:
    """One STABLE run: members 1..n-1 form the first view and member n joins
    at ``join_at`` (without ``join``, 1..n from the start); each member
    multicasts ``per_member`` messages.  Returns (simulator records, header
    first, and a summary with the retransmission buffers at the end)."""
    faults = faults or FaultPlan()
    if faults.crashes:
        raise ValueError("STABLE runs have no crashes (the spec has none)")
    nodes = list(range(1, n + 1))
    first = nodes[:-1] if join and n > 1 else nodes

    def make(nid, members, **kw):
        return stable_stack(nid, members, heard_from_reset=heard_from_reset,
                            gossip_interval=gossip_interval, tracing=tracing, **kw)

    stacks = {m: make(m, tuple(first)) for m in first}
    joins = [(n, join_at)] if len(first) < n else []
    sim = StableSimulator(stacks, seed, faults, horizon, joins=joins, make_stack=make)
    sim.views = [View(1, tuple(first))]
    for at, nid, payload in workload(nodes, per_member, {n: join_at + 0.005} if joins else {}):
        sim.app_send(at, nid, payload)
    quiescent = sim.run()
    header = {"kind": "header", "protocol": "stable", "nodes": nodes, "seed": seed,
              "faults": faults.to_json(), "impl": IMPL_NAME, "version": IMPL_VERSION}
    summary = {
        "quiescent": quiescent, "end_clock": sim.now,
        "views": [list(v.members) for v in sim.views],
        "delivered": {m: [[d.sender, d.seqno] for d in sim.deliveries.get(m, []) if isinstance(d, Deliver)]
                      for m in nodes},
        "vectors": {m: dict(sorted(sim.stacks[m].layer("stable").delivered.items())) for m in sim.stacks},
        "retained": {m: sim.stacks[m].layer("reliable").retained for m in sim.stacks},
        "retained_bytes": {m: sim.stacks[m].layer("reliable").retained_bytes for m in sim.stacks},
        "network": asdict(sim.net),
        "stats": {m: sim.stacks[m].stats for m in sim.stacks},
        "constants": {"N": n, "NInit": len(first), "MaxSeq": per_member,
                      "ResetOnDifferentMembers": heard_from_reset, "ResetOnViewChange": heard_from_reset,
                      "CoordSwitchesAtJoin": True,
                      "GossipMergedDigest": False},
    }
    return [header] + sim.records, summary
