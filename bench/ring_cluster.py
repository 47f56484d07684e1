"""FLUSH (or SEQUENCER over FLUSH) over the Raincore ring on a real cluster:
the time from a SIGKILL to the survivors' new view, and
deliveries per second per member, with the ring as the membership (no
oracle).

    .venv/bin/python bench/ring_cluster.py [--protocol raincoreflush|raincoresequencerflush]
                                           [--runs 3] [--messages 1000] [--rate 500] [--out DIR]
                                           [--lossy-ring]

Each run: 3 node processes on 127.0.0.1 (impl/cluster.py), every node
multicasting ``--messages`` at ``--rate`` per second, node 1 (FLUSH's
coordinator, SEQUENCER's too, the ring's head) killed with SIGKILL
at a third of the workload, at the first point spec/RaincoreFlush lets it
crash (docs/impl.md; with ``--lossy-ring`` wherever the kill lands, and
each row says whether node 1 held the token then).  From the merged trace: crash -> the first
TokenDeliveryFailure (the Transport Manager's time-out), crash -> the last
survivor's new FLUSH view.  From the history: each member's deliveries over
the time from its first to its last delivery.  A run without a kill gives
the throughput alone.  Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runtime import _rates  # noqa: E402  (bench/runtime.py: deliveries per second from a history)


def one(protocol: str, messages: int, rate: float, out: Path, kill_at: float | None, lossy: bool = False,
        holder: bool = False) -> dict:
    from groupcheck.conformance import history
    from groupcheck.core.trace.reader import load
    from groupcheck.conformance.cluster import judged
    from groupcheck.impl.cluster import Runner
    kills = [(1, kill_at)] if kill_at is not None else []
    t0 = time.perf_counter()
    res = judged(Runner(protocol, 3, messages, kills, out, rate=rate, timeout=300, lossy_ring=lossy,
                        kill_holder=holder and kill_at is not None))
    wall = time.perf_counter() - t0
    trace = load(out / "traces")
    ev = trace.events
    row = {"verdict": res.verdict, "quiescent": res.quiescent, "history_violations": [v["check"] for v in res.history],
           "oracle_records": sum(1 for e in ev if e["name"] in ("NewView", "Suspect")),
           "members": _rates(history.from_trace([trace.header] + ev)[1:]), "wall_seconds_with_check": round(wall, 1)}
    crash = next((e["clock"] for e in ev if e["name"] == "Crash"), None)
    if crash is not None:
        # node 1's ring just before the kill: its last ring record's token state
        ring = [e for e in ev if e["nid"] == 1 and e["name"] != "Crash" and e["clock"] <= crash
                and isinstance(e.get("state"), dict) and "tokenState" in e["state"]]
        row["killed_holding_token"] = bool(ring) and ring[-1]["state"]["tokenState"] == "Eating"
        row["token_regenerated"] = any(e["name"] == "HungryTimeout" and e["clock"] >= crash for e in ev)
        tdf = min((e["clock"] for e in ev if e["name"] == "TokenDeliveryFailure" and e["clock"] >= crash), default=None)
        views = {}
        for e in ev:
            if e["name"] in ("SendView", "InstallView") and e["clock"] >= crash:
                views.setdefault(e["nid"], e["clock"])
        row.update(kill_to_detection_s=None if tdf is None else round(tdf - crash, 3),
                   kill_to_new_view_s={str(n): round(c - crash, 3) for n, c in sorted(views.items())})
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--protocol", choices=("raincoreflush", "raincoresequencerflush"), default="raincoreflush")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--messages", type=int, default=1000)
    ap.add_argument("--rate", type=float, default=500.0)
    ap.add_argument("--out", default=None)
    ap.add_argument("--lossy-ring", action="store_true", help="FLUSH over Raincore's own ring (a kill wherever it lands)")
    ap.add_argument("--kill-holder", action="store_true", help="with --lossy-ring: kill node 1 once it holds the token")
    a = ap.parse_args()
    base = Path(a.out or tempfile.mkdtemp(prefix="ring-cluster-"))
    kill_at = a.messages / a.rate / 3
    runs = [one(a.protocol, a.messages, a.rate, base / f"kill-{k}", kill_at, a.lossy_ring, a.kill_holder)
            for k in range(a.runs)]
    calm = one(a.protocol, a.messages, a.rate, base / "no-kill", None, a.lossy_ring)
    print(json.dumps({"bench": "ring_cluster", "protocol": a.protocol, "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                      "machine": f"{platform.machine()}, {os.cpu_count()} cores", "load": os.getloadavg(),
                      "messages": a.messages, "rate": a.rate, "kill_at_s": round(kill_at, 3), "lossy_ring": a.lossy_ring,
                      "kill_holder": a.kill_holder,
                      "transport_manager": _detector(a.protocol, a.lossy_ring),
                      "kill_runs": runs, "no_kill": calm}, indent=1))
    return 0 if all(r["verdict"] == "ok" and r["quiescent"] and not r["history_violations"] for r in runs + [calm]) else 1


def _detector(protocol: str, lossy: bool) -> str:
    """The cluster's Transport Manager as built (impl/ringtransport.py)."""
    from groupcheck.impl.runtime import build_stack
    tm = build_stack(protocol, 1, (1, 2), lossy).ring_part.layer("tm")
    return (f"{tm.attempts} sends {round(1000 * tm.interval)} ms apart; a node silent for "
            f"{tm.interval * tm.attempts:g} s to {tm.patience_cap or tm.interval * tm.attempts:g} s "
            f"(adaptive patience) is taken as crashed")


if __name__ == "__main__":
    sys.exit(main())
