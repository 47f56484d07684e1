"""Fault campaign: many seeded SEQUENCER runs replayed.

Each run draws, from its own seed, 3 or 4 members, 1-3 multicasts each,
datagram loss, duplication, a reordering window and at most one crash (none,
the coordinator, or another member, at a drawn time).  The run is simulated,
written as a groupcheck-trace/2 file, read back (schema-validated) and
replayed against the model.  Every run must conform; NoDuplicates, Integrity
and SenderFIFO must hold everywhere; TotalOrder must hold unless the
coordinator crashed, where the faithful spec breaks it (docs/sequencer.md):
those runs are counted and printed as they are, and the only violation
allowed there is TotalOrder.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from types import SimpleNamespace

import pytest

from groupcheck.conformance.replay.conform import conform_file
from groupcheck.core.trace.reader import from_records, whole
from groupcheck.impl import campaign, sim_sequencer
from groupcheck.core.trace import writer as tracefile
from groupcheck.impl.sim import FaultPlan
from groupcheck.model import sequencer as seqmodel

CAMPAIGN_SEED = 20261121
SAFETY = ("NoDuplicates", "Integrity", "SenderFIFO")


def draw_run(k: int) -> dict:
    """Run k's parameters, drawn from its own seed (independent of the others)."""
    rng = random.Random(CAMPAIGN_SEED * 1000 + k)
    n = rng.choice((3, 4))
    per_member = rng.randint(1, 3)
    span = n * per_member * campaign.SEND_INTERVAL      # when the last send is issued
    crash = rng.choice(("none", "coordinator", "other"))
    crashes: tuple = ()
    if crash != "none":
        victim = 1 if crash == "coordinator" else rng.randint(2, n)
        crashes = ((victim, round(rng.uniform(0.0, span + 0.02), 4)),)
    faults = FaultPlan(loss=round(rng.uniform(0.0, 0.3), 3), duplicate=round(rng.uniform(0.0, 0.15), 3),
                       reorder_window=round(rng.uniform(0.0, 0.006), 4), crashes=crashes)
    return {"n": n, "per_member": per_member, "seed": rng.randrange(2**31), "crash": crash, "faults": faults}


def histories(records: list[dict], n: int) -> SimpleNamespace:
    """Each member's last logged delivery history and sent count."""
    delivered = {m: () for m in range(1, n + 1)}
    sent = {m: 0 for m in range(1, n + 1)}
    for r in whole(from_records(records)).events:     # format 2: states rebuilt from the deltas
        if r["state"] is not None and r["nid"] is not None:
            delivered[r["nid"]] = tuple(tuple(x) for x in r["state"]["delivered"])
            sent[r["nid"]] = r["state"]["sent"]
    return SimpleNamespace(delivered=delivered, sent=sent)


def run_campaign(runs: int, tmp_path) -> dict:
    t0 = time.perf_counter()
    verdicts: Counter = Counter()
    coord_crash_runs = coord_crash_to_violations = gap_runs = 0
    failures = []
    for k in range(runs):
        p = draw_run(k)
        records, _ = sim_sequencer.simulate_run(p["n"], p["per_member"], p["seed"], p["faults"])
        path = tracefile.write(tmp_path / f"run{k}.ndjson", records)
        rep = conform_file(path)
        verdicts[rep.verdict] += 1
        # The properties, each evaluated on its own (the replay stops at the first failing one).
        h = histories(records, p["n"])
        # GapFreeFIFO reads the run's crashes (senders that never crashed)
        crashed = {r["nid"] for r in records[1:] if r.get("name") == "Crash"}
        h.crashed = frozenset(crashed)
        broken = [prop for prop in SAFETY + ("GapFreeFIFO", "TotalOrder") if not getattr(seqmodel, prop)(h)]
        # EventualDelivery at the end of a quiescent run, evaluated here from the
        # histories and the Crash records (the replay judges it the same way)
        live = [m for m in h.delivered if m not in crashed]
        if records[-1].get("quiescent") and any((m, q) not in set(h.delivered[r])
                                               for m in live for q in range(1, h.sent[m] + 1) for r in live):
            broken.append("EventualDelivery")
        where = (k, p["n"], p["per_member"], p["seed"], p["faults"].to_json(), rep.verdict, rep.reason)
        if rep.verdict in ("nonconforming", "rejected"):
            failures.append(("does not conform", where))
        if any(prop in SAFETY for prop in broken):
            failures.append((f"{broken} broken", where))
        if p["crash"] == "coordinator":
            coord_crash_runs += 1
            coord_crash_to_violations += "TotalOrder" in broken
            gap_runs += "GapFreeFIFO" in broken
            # the known findings after a coordinator crash (docs/sequencer.md)
            if rep.verdict == "violation" and not rep.reason.startswith(
                    ("TotalOrder:", "GapFreeFIFO:", "EventualDelivery:")):
                failures.append(("violation other than TotalOrder, GapFreeFIFO or EventualDelivery", where))
        elif broken or rep.verdict != "ok":
            failures.append(("not ok without a coordinator crash", where))
        # The replay's verdict and the independent evaluation agree.
        if rep.verdict in ("ok", "violation") and (rep.verdict == "violation") != bool(broken):
            failures.append(("replay verdict disagrees with the properties", where))
    seconds = time.perf_counter() - t0
    summary = {"runs": runs, "verdicts": dict(verdicts), "coordinator_crash_runs": coord_crash_runs,
               "total_order_violations_after_coordinator_crash": coord_crash_to_violations,
               "gap_free_fifo_violations_after_coordinator_crash": gap_runs,
               "seconds": round(seconds, 1)}
    print(f"\nSEQUENCER fault campaign: {summary}")
    assert not failures, failures[:5]
    return summary


def test_draws_cover_every_crash_choice_and_both_sizes():
    draws = [draw_run(k) for k in range(100)]
    assert {d["crash"] for d in draws} == {"none", "coordinator", "other"}
    assert {d["n"] for d in draws} == {3, 4}
    assert draw_run(7) == draw_run(7)


# 100 runs in the default suite (every crash choice and both sizes, as the
# draws' test checks), 500 behind the slow marker, as the FLUSH campaigns
@pytest.mark.parametrize("runs", [100, pytest.param(500, marks=pytest.mark.slow)])
def test_fault_campaign(runs, tmp_path):
    s = run_campaign(runs, tmp_path)
    assert s["coordinator_crash_runs"] > 0
