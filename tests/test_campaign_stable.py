"""STABLE fault campaign (issue 4 item 6): seeded runs replayed.

Each run draws, from its own seed, 3 or 4 members (the last one joins at a
drawn time, while digests are in flight), 1-3 multicasts per member,
datagram loss, duplication and a reordering window.  The run is simulated,
written as a groupcheck-trace/1 file, read back (schema-validated) and
replayed against model/stable.py.  Every run must conform, SafeGC and
StabilityBound (computed from the trace alone) must hold, the run must
become quiescent, every member must end with every message delivered, and
every retransmission buffer must then be empty: nothing kept forever,
nothing collected early.

The flawed build (no heard_from reset on a digest with different members,
the seed's A,B,C example) must give SafeGC violations on the same kind of
runs: the test asserts that some are found and that they conform to the
flawed model (the runs are faithful, the protocol is not).
"""

from __future__ import annotations

import random
import time
from collections import Counter

import pytest

from groupcheck.conformance.replay import conform_file
from groupcheck.impl import stable, tracefile
from groupcheck.impl.sim import FaultPlan

CAMPAIGN_SEED = 20261121


def draw_run(k: int) -> dict:
    rng = random.Random(CAMPAIGN_SEED * 1000 + k)
    n = rng.choice((3, 4))
    per_member = rng.randint(1, 3)
    span = n * per_member * tracefile.SEND_INTERVAL
    faults = FaultPlan(loss=round(rng.uniform(0.0, 0.3), 3), duplicate=round(rng.uniform(0.0, 0.15), 3),
                       reorder_window=round(rng.uniform(0.0, 0.006), 4))
    return {"n": n, "per_member": per_member, "seed": rng.randrange(2**31), "faults": faults,
            "join_at": round(rng.uniform(0.0, span), 4)}


def run_one(k: int, tmp_path, *, heard_from_reset: bool = True, horizon: float = 60.0):
    r = draw_run(k)
    records, summary = stable.simulate(r["n"], r["per_member"], r["seed"], r["faults"], join_at=r["join_at"],
                                       heard_from_reset=heard_from_reset, horizon=horizon)
    rid = f"stable-campaign-{k}{'' if heard_from_reset else '-flawed'}"
    path = tracefile.write(tmp_path / f"{rid}.ndjson", tracefile.to_v1(records, summary["constants"], rid))
    return r, summary, conform_file(path)


def run_campaign(runs: int, tmp_path) -> dict:
    t0 = time.perf_counter()
    verdicts: Counter = Counter()
    bad = []
    events = 0
    for k in range(runs):
        r, summary, rep = run_one(k, tmp_path)
        verdicts[rep.verdict] += 1
        events += rep.events
        everything = {m: r["per_member"] for m in range(1, r["n"] + 1)}
        if rep.verdict != "ok":
            bad.append((k, rep.verdict, rep.first_bad_event, rep.reason))
        elif not summary["quiescent"]:
            bad.append((k, "not quiescent", summary["end_clock"]))
        elif any(v for v in summary["retained"].values()):
            bad.append((k, "retransmission buffer not empty", summary["retained"]))
        elif any(v != everything for v in summary["vectors"].values()):
            bad.append((k, "not everything delivered", summary["vectors"]))
    secs = time.perf_counter() - t0
    print(f"\nSTABLE campaign: {runs} runs, {events} events, {dict(verdicts)}, {secs:.1f} s")
    return {"verdicts": verdicts, "bad": bad, "secs": secs}


def test_campaign_100_runs_conform_collect_everything_and_nothing_early(tmp_path):
    res = run_campaign(100, tmp_path)
    assert res["bad"] == [], res["bad"][:3]


@pytest.mark.slow
def test_campaign_500_runs(tmp_path):
    res = run_campaign(500, tmp_path)
    assert res["bad"] == [], res["bad"][:3]


def test_flawed_build_is_caught_violating_safe_gc(tmp_path):
    found, verdicts = [], Counter()
    for k in range(30):
        _, _, rep = run_one(k, tmp_path, heard_from_reset=False, horizon=1.0)
        verdicts[rep.verdict] += 1
        if rep.verdict == "violation" and "SafeGC" in rep.reason:
            found.append((k, rep.reason))
    print(f"\nflawed STABLE: {dict(verdicts)}; first: {found[:1]}")
    assert found, "the flawed build's SafeGC violation was not found"
    # the flawed runs are faithful to the flawed model: nothing else goes wrong
    assert set(verdicts) <= {"ok", "violation"}
