"""SEQUENCER's simulated run: the engine of impl/sim.py with its default
environment (crash-stop members, the membership oracle's next view without
the crashed) around SEQUENCER stacks (impl/stacks/sequencer.py).  Returns
the trace records (a header, then one record per spec action, each with its
virtual ``clock``) and a summary."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Callable, Iterable

from .events import Deliver
from .sim import IMPL_NAME, IMPL_VERSION, FaultPlan, Simulator
from .stacks.sequencer import sequencer_stack


def simulate(nodes: Iterable[int], messages: Iterable[tuple[float, int, bytes]], seed: int,
             faults: FaultPlan | None = None, *, horizon: float = 60.0,
             make_stack: Callable[[int, tuple[int, ...]], Any] = sequencer_stack,
             protocol: str = "sequencer", sink: Callable[[dict], None] | None = None,
             states: str = "full") -> tuple[list[dict], dict]:
    """Run SEQUENCER (or the stacks ``make_stack`` builds, named ``protocol``
    in the header) on ``nodes`` (the first view, coordinator first) with the
    application sends ``messages`` = ``(time, member, payload)``.  Returns
    ``(trace_records, summary)``."""
    members = tuple(nodes)
    faults = faults or FaultPlan()
    sim = Simulator({n: make_stack(n, members) for n in members}, seed, faults, horizon, sink)
    for at, nid, payload in messages:
        sim.app_send(at, nid, payload)
    header = {"kind": "header", "protocol": protocol, "nodes": list(members), "seed": seed,
              "faults": faults.to_json(), "impl": IMPL_NAME, "version": IMPL_VERSION}
    if states != "full":
        header["states"] = states       # "delta": the stacks trace deltas (Sequencer(tracing="delta"))
    quiescent = sim.run()
    summary = {
        "quiescent": quiescent,
        "end_clock": sim.now,
        "crashed": sorted(sim.crashed),
        "views": [list(v.members) for v in sim.views],
        "delivered": {n: [[d.sender, d.seqno] for d in sim.deliveries[n] if isinstance(d, Deliver)]
                      for n in members},
        "payloads": {n: [d.payload for d in sim.deliveries[n] if isinstance(d, Deliver)] for n in members},
        "network": asdict(sim.net),
        "app_dropped": sim.app_dropped,
        "stats": {n: sim.stacks[n].stats for n in members},
    }
    return [header] + sim.records, summary
