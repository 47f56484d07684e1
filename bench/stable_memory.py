"""Memory held in retransmission buffers over a long run, with and without
STABLE.

The same seeded run twice on the STABLE stack (impl/stable.py: transport,
reliable in NAKACK mode, stable): once with STABLE gossip on, once with it
off (``gossip_interval=None``: nothing ever tells the reliable layer that a
frame is stable, so every multicast stays in its sender's buffer).  Every
``--sample-ms`` of virtual time the frames and payload bytes held in all
members' retransmission buffers are summed.  Members take turns
multicasting one ``--size``-byte payload every 10 ms (``--messages`` each),
under the fault plan ``--faults``; tracing is off.

Prints one JSON object: per variant the peak, mean and final frames and
bytes held, the run's virtual length, wall-clock seconds and the counters;
``--samples`` adds the sampled series.

    .venv/bin/python bench/stable_memory.py [--nodes 3] [--messages 300] [--size 256] [--faults loss=0.05,dup=0.02,reorder=3]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import time

from groupcheck.impl.faults import parse_faults
from groupcheck.impl import campaign, sim_stable, stable
from groupcheck.impl.stacks import stable as stable_stacks
from groupcheck.impl.sim_stable import StableSimulator


class SamplingSimulator(StableSimulator):
    def __init__(self, *a, every: float, **kw):
        super().__init__(*a, **kw)
        self.every = every
        self.samples: list[tuple[float, int, int]] = []
        self._push(0.0, "sample", None, None)

    def _step(self, kind, nid, data):
        if kind != "sample":
            return super()._step(kind, nid, data)
        rel = [s.layer("reliable") for s in self.stacks.values()]
        self.samples.append((round(self.now, 6), sum(r.retained for r in rel), sum(r.retained_bytes for r in rel)))
        if len(self._queue) > 0:          # stop sampling once nothing else is left
            self._push(self.now + self.every, "sample", None, None)
        return None


def run(n: int, per_member: int, size: int, seed: int, faults, every: float, with_stable: bool) -> dict:
    nodes = tuple(range(1, n + 1))

    def make(nid, members, **kw):
        return stable_stacks.stable_stack(nid, members, gossip_interval=0.05 if with_stable else None,
                                   tracing=False, **kw)

    sim = SamplingSimulator({m: make(m, nodes) for m in nodes}, seed, faults, 3600.0, make_stack=make,
                            every=every)
    for k, (at, m, _) in enumerate(sim_stable.workload(list(nodes), per_member, {})):
        sim.app_send(at, m, bytes([k % 251]) * size)
    t0 = time.perf_counter()
    quiescent = sim.run()
    wall = time.perf_counter() - t0
    frames = [f for _, f, _ in sim.samples]
    nbytes = [b for _, _, b in sim.samples]
    stats = {m: sim.stacks[m].stats for m in nodes}
    return {
        "stable": with_stable, "quiescent": quiescent, "virtual_s": round(sim.now, 3), "wall_s": round(wall, 3),
        "multicasts": n * per_member, "peak_frames": max(frames), "peak_bytes": max(nbytes),
        "mean_frames": round(sum(frames) / len(frames), 1), "mean_bytes": round(sum(nbytes) / len(nbytes), 1),
        "final_frames": frames[-1], "final_bytes": nbytes[-1],
        "datagrams": sim.net.datagrams, "lost": sim.net.lost,
        "retransmitted": sum(s.get("reliable.retransmitted", 0) for s in stats.values()),
        "stable_messages": sum(s.get("stable.stable_sent", 0) for s in stats.values()),
        "stability_messages": sum(s.get("stable.stability_sent", 0) for s in stats.values()),
        "samples": sim.samples,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=3)
    ap.add_argument("--messages", type=int, default=300, help="multicasts per member")
    ap.add_argument("--size", type=int, default=256, help="payload bytes")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--faults", default="loss=0.05,dup=0.02,reorder=3")
    ap.add_argument("--sample-ms", type=float, default=100.0)
    ap.add_argument("--samples", action="store_true", help="include the sampled series")
    a = ap.parse_args()
    faults = parse_faults(a.faults)
    out = {"bench": "stable_memory", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "machine": {"python": platform.python_version(), "platform": platform.platform(),
                       "cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2)},
           "params": {"nodes": a.nodes, "messages_per_member": a.messages, "payload_bytes": a.size,
                      "seed": a.seed, "faults": a.faults, "send_interval_ms": 10, "sample_ms": a.sample_ms}}
    for key, on in (("with_stable", True), ("without_stable", False)):
        r = run(a.nodes, a.messages, a.size, a.seed, faults, a.sample_ms / 1000, on)
        if not a.samples:
            r.pop("samples")
        out[key] = r
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
