"""SEQUENCER's simulated run: the engine of impl/sim.py with its default
environment (crash-stop members, the membership oracle's next view without
the crashed) around SEQUENCER stacks (impl/stacks/sequencer.py).  Returns
the trace records (a header, then one record per spec action, each with its
virtual ``clock``) and a summary."""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable

from . import campaign
from .events import Deliver
from .sim import FaultPlan, IMPL_NAME, IMPL_VERSION, Simulator
from .stacks.sequencer import sequencer_stack
from groupcheck.core.trace import writer as tracefile


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


# ---------------------------------------------------------------- the campaign
# One SEQUENCER run as a format-2 trace (conformance/replay/sequencer.py ``simulate``,
# the pipeline, bench/): the round-robin workload (impl/campaign.py), the
# stacks tracing deltas, the header's model constants.

def sequencer_constants(nodes: Iterable[int], messages: Iterable[tuple[float, int, bytes]],
                        crashes: Iterable) -> dict:
    """The Sequencer model's constants for a simulated run: ``N`` members,
    ``MaxSeq`` = the most multicasts any one member is asked for, and
    ``MaxCrashes`` = the crashes planned."""
    nodes = list(nodes)
    per: dict[int, int] = {n: 0 for n in nodes}
    for _, nid, _ in messages:
        per[nid] = per.get(nid, 0) + 1
    return {"N": len(nodes), "MaxSeq": max(per.values(), default=0), "MaxCrashes": len(list(crashes))}


def simulate_run(n: int, per_member: int, seed: int, faults) -> tuple[list[dict], dict]:
    """One simulated SEQUENCER run as groupcheck-trace/2 records, plus a
    one-line summary (deliveries, retransmissions, dropped datagrams)."""

    nodes = list(range(1, n + 1))
    msgs = campaign.sequencer_workload(n, per_member)
    records, summary = simulate(nodes, msgs, seed, faults, make_stack=partial(sequencer_stack, tracing="delta"),
                                states="delta")
    run_id = f"sequencer-n{n}-m{per_member}-s{seed}"
    v2 = tracefile.to_v2(records, sequencer_constants(nodes, msgs, faults.crashes), run_id,
                         quiescent=summary["quiescent"], end_clock=summary["end_clock"])
    line = {
        "run_id": run_id, "seed": seed, "events": len(v2) - 2,
        "delivered": sum(len(d) for d in summary["delivered"].values()),
        "retransmissions": sum(st.get("reliable.retransmitted", 0) for st in summary["stats"].values()),
        "dropped_datagrams": summary["network"]["lost"] + summary["network"]["to_crashed"],
        "quiescent": summary["quiescent"], "crashed": summary["crashed"],
    }
    return v2, line


def simulate_to_file(path, n: int, per_member: int, seed: int, faults, *, horizon: float = 1e9) -> dict:
    """One simulated SEQUENCER run written to ``path`` as it goes (records
    never held in memory; bench/conform.py's 10^6-event runs).  Returns the
    summary line with ``events`` and ``bytes``."""

    nodes = list(range(1, n + 1))
    msgs = campaign.sequencer_workload(n, per_member)
    run_id = f"sequencer-n{n}-m{per_member}-s{seed}"
    head = tracefile.header("sequencer", nodes, sequencer_constants(nodes, msgs, faults.crashes), seed=seed,
                            faults=faults.to_json(), impl=IMPL_NAME, impl_version=IMPL_VERSION, run_id=run_id)
    with tracefile.TraceWriter(path, head) as w:
        def sink(r: dict) -> None:
            params = tracefile._params(r)
            w.record(r["name"], params, r.get("msg"), r.get("state") if r.get("nid") is not None else None,
                     r["clock"], nid=r.get("nid"))
        _, summary = simulate(nodes, msgs, seed, faults, horizon=horizon, sink=sink,
                              make_stack=partial(sequencer_stack, tracing="delta"), states="delta")
        w.end(summary["quiescent"], summary["end_clock"])
        events = w.records
    return {"run_id": run_id, "events": events, "bytes": Path(path).stat().st_size,
            "quiescent": summary["quiescent"]}
