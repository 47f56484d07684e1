"""STABLE fault campaign: seeded runs replayed.

Each run draws, from its own seed, 3 or 4 members (the last one joins at a
drawn time, while digests are in flight), 1-3 multicasts per member,
datagram loss, duplication and a reordering window.  The run is simulated,
written as a groupcheck-trace/2 file, read back (schema-validated) and
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

from groupcheck.conformance.replay.conform import conform_file
from groupcheck.impl import campaign, sim_stable, stable
from groupcheck.core.trace import writer as tracefile
from groupcheck.impl.stacks import stable as stable_stacks
from groupcheck.impl.sim import FaultPlan

CAMPAIGN_SEED = 20261121


def draw_run(k: int) -> dict:
    rng = random.Random(CAMPAIGN_SEED * 1000 + k)
    n = rng.choice((3, 4))
    per_member = rng.randint(1, 3)
    span = n * per_member * campaign.SEND_INTERVAL
    faults = FaultPlan(loss=round(rng.uniform(0.0, 0.3), 3), duplicate=round(rng.uniform(0.0, 0.15), 3),
                       reorder_window=round(rng.uniform(0.0, 0.006), 4))
    return {"n": n, "per_member": per_member, "seed": rng.randrange(2**31), "faults": faults,
            "join_at": round(rng.uniform(0.0, span), 4)}


def run_one(k: int, tmp_path, *, heard_from_reset: bool = True, horizon: float = 60.0):
    r = draw_run(k)
    records, summary = sim_stable.simulate(r["n"], r["per_member"], r["seed"], r["faults"], join_at=r["join_at"],
                                       heard_from_reset=heard_from_reset, horizon=horizon)
    rid = f"stable-campaign-{k}{'' if heard_from_reset else '-flawed'}"
    path = tracefile.write(tmp_path / f"{rid}.ndjson", tracefile.to_v2(records, summary["constants"], rid,
                                                                       quiescent=summary["quiescent"],
                                                                       end_clock=summary["end_clock"]))
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
    # (a run cut at the horizon has no end record: incomplete, its end not judged)
    assert set(verdicts) <= {"ok", "violation", "incomplete"}


# ---------------------------------------------------------------- the registry and the replay's verdicts

def _registry_run(tmp_path, seed=3, **opts):
    from groupcheck.conformance.replay import registry as protocols
    p = protocols.get("stable")
    records, line = p.simulate(seed, p.campaign_faults, opts)
    return p, records, line


def test_registered_simulate_writes_traces_that_conform(tmp_path):
    p, records, line = _registry_run(tmp_path)
    assert p.spec == "Stable" and set(p.properties) == {"SafeGC", "StabilityBound"}
    assert line["run_id"] == "stable-n3-m2-join-s3" and line["quiescent"] and line["retained_at_end"] == 0
    assert records[0]["constants"]["NInit"] == 2 and records[0]["constants"]["ResetOnDifferentMembers"] is True
    assert {r["name"] for r in records[1:] if r["kind"] == "event"} <= set(p.actions)
    rep = conform_file(tracefile.write(tmp_path / "ok.ndjson", records))
    assert rep.verdict == "ok", rep.reason


def _first(records, name):
    return next(i for i, r in enumerate(records) if r.get("name") == name)


def test_a_tampered_state_is_nonconforming_at_that_event(tmp_path):
    _, records, _ = _registry_run(tmp_path)
    i = _first(records, "SendStability")
    bad = [dict(r) for r in records]
    bad[i] = {**bad[i], "state": {**bad[i]["state"], "purged": {"1": 9}}}
    rep = conform_file(tracefile.write(tmp_path / "t.ndjson", bad))
    assert rep.verdict == "nonconforming" and rep.first_bad_event == i - 1
    assert "purged: model" in rep.reason


def test_a_message_never_sent_is_nonconforming(tmp_path):
    _, records, _ = _registry_run(tmp_path)
    i = _first(records, "ReceiveStable")
    bad = [dict(r) for r in records]
    bad[i] = {**bad[i], "msg": {**bad[i]["msg"], "vector": {k: v + 7 for k, v in bad[i]["msg"]["vector"].items()}}}
    rep = conform_file(tracefile.write(tmp_path / "m.ndjson", bad))
    assert rep.verdict == "nonconforming" and "no candidate has that message in flight" in rep.reason


def test_schema_rejects_a_sequencer_variable_and_an_unknown_action(tmp_path):
    _, records, _ = _registry_run(tmp_path)
    bad = [dict(r) for r in records]
    bad[2] = {**bad[2], "state": {**bad[2]["state"], "fwd": []}}
    rep = conform_file(tracefile.write(tmp_path / "s.ndjson", bad))
    assert rep.verdict == "rejected" and "s.ndjson:3: schema (stable)" in rep.reason
    bad = [dict(r) for r in records]
    bad[2] = {**bad[2], "name": "Gossip"}
    rep = conform_file(tracefile.write(tmp_path / "a.ndjson", bad))
    assert rep.verdict == "rejected" and "a.ndjson:3: schema (stable)" in rep.reason


def test_member_ids_beyond_n_are_rejected_with_their_line(tmp_path):
    _, records, _ = _registry_run(tmp_path)
    bad = [dict(r) for r in records]
    bad[1] = {**bad[1], "state": {**bad[1]["state"], "delivered": {"9": 1}}}
    rep = conform_file(tracefile.write(tmp_path / "r.ndjson", bad))
    assert rep.verdict == "rejected" and "r.ndjson:2: state.delivered: 9 is not a member 1..3" in rep.reason


def test_safe_gc_and_stability_bound_are_judged_on_the_model_states_with_witnesses():
    """The replay judges SafeGC and StabilityBound as the model's invariants on
    the candidates (so a trace that logs no state is judged too); the
    witness names the members and seqnos."""
    from groupcheck.conformance.replay.stable import model_for, witness
    from groupcheck.model.stable import Entry, StabilityMsg
    from groupcheck.model.values import Fn
    m = model_for({"N": 2, "NInit": 2, "MaxSeq": 1, "ResetOnDifferentMembers": True})
    s = next(iter(m.init()))
    bad = s._replace(purged=s.purged.set(1, s.purged[1].set(1, 1)))
    assert m.SafeGC(s) and not m.SafeGC(bad)
    assert witness(m, "SafeGC", bad).startswith("member 1 purged messages of 1 up to 1, but member ")
    msg = StabilityMsg(1, 2, Fn({1: Entry(1, 1), 2: Entry(0, 0)}))
    bad = s._replace(net=s.net | {msg})
    assert not m.StabilityBound(bad)
    assert "member 1's STABILITY digest has low 1 for sender 1, but member" in witness(m, "StabilityBound", bad)
