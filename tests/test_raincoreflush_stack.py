"""FLUSH over the Raincore ring: the composed stack in
the simulator (impl/sim_raincoreflush.py), its history check and its replay
against model/raincoreflush.py (conformance/replay/raincoreflush.py).

No oracle: FLUSH's views come from the ring's commits, its failure detector
is the ring's localView, a joiner enters by the ring's 911.  Each run draws
a ring of 2 or 3 nodes, maybe a joiner, one or two crashes (node 1, FLUSH's
coordinator, in about half the plans), on a lossy network for FLUSH's
reliable layer.  The campaign must conform run by run; mutants of the
FLUSH layer's ring mode and forged records must not."""

from __future__ import annotations

from collections import Counter

import pytest

from groupcheck.conformance.replay import raincoreflush as crf
from groupcheck.core.trace.reader import from_records, protocol_validator, whole
from groupcheck.impl import flush as impl_flush
from groupcheck.impl.faults import FaultPlan
from groupcheck.impl.flush import JoinRequest, RingView, Suspect
from groupcheck.impl.sim_raincoreflush import RingFlushConfig, simulate_ring_flush
from raincoreflush_helpers import conforming_run, mutate, replay_forged

RUNS = 150


def campaign(runs: int = RUNS, first: int = 0):
    """(verdict counts, history-violation runs, figures) of ``runs`` drawn runs."""
    verdicts, bad_history, fig = Counter(), [], Counter()
    for seed in range(first, first + runs):
        faults, opts = crf.draw(seed)
        records, line = crf.simulate(seed, faults, opts)
        rep = crf.replay(from_records(records), visited=False)
        verdicts[rep.verdict] += 1
        if rep.verdict != "ok":
            fig["first_bad"] = fig["first_bad"] or seed + 1
        if line["history"]:
            bad_history.append((seed, line["history"][:2]))
        fig["crashes"] += len(line["crashed"])
        fig["coordinator_crashes"] += 1 in line["crashed"]
        fig["joined"] += sum(1 for n, views in line["views"].items()
                             if n > opts["ring"] and any(v >= 1 for v in views))
        fig["settled"] += line["settled"]
        fig["three_views"] += max(len(v) for v in line["views"].values()) >= 3
    return verdicts, bad_history, fig


def test_campaign_conforms_with_crashes_and_joins():
    verdicts, bad_history, fig = campaign()
    assert verdicts == Counter(ok=RUNS), (verdicts, fig)
    assert bad_history == []
    assert fig["settled"] == RUNS
    # the campaign reaches what it is meant to: coordinator crashes, joins, several view changes
    assert fig["coordinator_crashes"] >= 40 and fig["crashes"] >= 100 and fig["joined"] >= 30, fig
    assert fig["three_views"] >= 20, fig


def test_records_match_the_composed_schema():
    validate = protocol_validator("raincoreflush")
    faults, opts = crf.draw(3)
    records, _ = crf.simulate(3, faults, opts)
    events = [r for r in records if r.get("kind") == "event"]
    assert {e["name"] for e in events} >= {"TokenReceived", "EatingTimeout", "Multicast", "Deliver"}
    for r in events:
        assert validate.is_valid({"params": {}, "msg": None, "state": None, **r}), r
    bad = dict(events[0], name="Leave")
    assert not validate.is_valid({"params": {}, "msg": None, "state": None, **bad})


def _coordinator_crash_run(seed: int = 1, **cfg):
    msgs = [(0.01 * i, 1 + i % 3, b"m%d" % i) for i in range(30)]
    plan = FaultPlan(crashes=((1, 0.12),), joins=((4, 0.05),))
    return simulate_ring_flush(RingFlushConfig(n=4, init_size=3, **cfg), seed, plan, msgs, horizon=20)


def test_coordinator_crash_and_join_install_the_rings_views():
    records, summary, sim = _coordinator_crash_run()
    assert summary["settled"] and crf.history_check(sim, RingFlushConfig(n=4, init_size=3)) == []
    assert summary["crashed"] == [1] and summary["live"] == [2, 3, 4]
    committed = {tuple(sorted(v)) for n in sim.stacks for v in sim.layer(n).globalView if v}
    views = list(summary["views"][2].values())
    assert views[0] == [1, 2, 3] and views[-1] == [2, 3, 4]
    assert all(tuple(v) in committed for v in views)
    # the survivors delivered everything any survivor multicast, once
    for n in (2, 3, 4):
        got = [tuple(k) for k in summary["delivered"][n]]
        assert len(got) == len(set(got))
    assert set(map(tuple, summary["delivered"][2])) == set(map(tuple, summary["delivered"][3]))
    # nobody was told a view: every NewView-like decision is a ring commit
    assert not [r for r in records if r.get("name") in ("NewView", "Suspect")]


def test_the_ring_mode_refuses_oracle_events():
    records, summary, sim = _coordinator_crash_run()
    f = sim.flush(2)
    before = (f.vid, set(f.suspected), set(f.joining))
    sim.fstacks[2].handle(Suspect(3), sim.now)
    sim.fstacks[2].handle(JoinRequest(9), sim.now)
    assert (f.vid, set(f.suspected), set(f.joining)) == before
    assert f.stats["oracle_event_refused"] == 2
    with pytest.raises(ValueError):
        impl_flush.Flush(1, (1, 2), membership="gms")


def test_an_oracle_flush_ignores_ring_views():
    f = impl_flush.Flush(1, (1, 2))
    assert f.handle(RingView((1,), (1,)), 0.0) == [] and f.stats["ring_view_ignored"] == 1


# ---------------------------------------------------------------- mutants and forgeries

def _verdicts(runs: int = 60) -> Counter:
    return campaign(runs)[0]


def test_mutant_views_from_the_failure_detector_is_caught(monkeypatch):
    """FLUSH installs survivors plus joiners (the oracle's rule), not the
    ring's committed view: the model's SendView installs the ring's."""
    mutate(monkeypatch, "oracle_view")
    v = _verdicts()
    assert v["ok"] < 60 and v["nonconforming"] > 0, v


def test_mutant_flush_on_suspicion_is_caught(monkeypatch):
    """A flush started as soon as the ring's localView drops a member,
    before the ring commits a view: not the spec's StartFlush guard."""
    mutate(monkeypatch, "flush_on_suspicion")
    v = _verdicts()
    assert v["nonconforming"] > 0, v


def test_mutant_without_reconciliation_is_caught():
    """The seed as written (no digest reconciliation): the history check
    finds VirtualSynchrony broken, and the replay (the fixed model) does not
    accept those runs."""
    caught_history = caught_replay = 0
    for seed in range(80):
        faults, opts = crf.draw(seed)
        plan = crf.fault_plan(faults, seed, {**opts, "lossy": False})
        msgs = [(0.004 * i, 1 + i % opts["ring"], b"x") for i in range(40)]
        cfg = RingFlushConfig(n=opts["nodes"], init_size=opts["ring"], reconcile=False)
        records, summary, sim = simulate_ring_flush(cfg, seed, plan, msgs)
        if any(b.startswith("VirtualSynchrony") for b in crf.history_check(sim, cfg)):
            caught_history += 1
            from groupcheck.core.trace import writer as tracefile
            c = {"N": opts["nodes"], "NInit": opts["ring"], "Founder": opts["ring"], "MaxMsgs": len(msgs),
                 "MaxCrashes": len(plan.crashes)}
            rep = crf.replay(from_records(tracefile.to_v2(records, c, "mutant", quiescent=False)), visited=False)
            caught_replay += rep.verdict != "ok"
    assert caught_history >= 2 and caught_replay == caught_history, (caught_history, caught_replay)


def _run_records(seed: int = 5):
    return conforming_run(seed, *crf.draw(seed))


def test_forged_token_nodelist_is_nonconforming():
    def change(r):
        r["msg"]["nodelist"] = list(reversed(r["msg"]["nodelist"]))
    rep = replay_forged(_run_records(), lambda r: r["name"] == "TokenReceived" and len(r["msg"]["nodelist"]) > 1, change)
    assert rep.verdict == "nonconforming"


def test_forged_ring_view_is_nonconforming():
    def change(r):
        r.setdefault("state", {})["localView"] = [1]
    rep = replay_forged(_run_records(), lambda r: r["name"] == "TokenReceived" and r["nid"] != 1, change)
    assert rep.verdict == "nonconforming"


def test_a_timeout_outside_the_abstraction_is_named():
    records = _run_records()
    i = next(i for i, r in enumerate(records) if r.get("name") == "EatingTimeout")
    records = records[:i] + [dict(records[i], name="HungryTimeout", state={})] + records[i + 1:]
    rep = crf.replay(from_records(records), visited=False)
    assert rep.verdict == "nonconforming" and "outside spec/RaincoreFlush's abstraction" in rep.reason


def test_whole_states_reconstruct_per_layer():
    """A node's ring and FLUSH records keep separate deltas (layer_of)."""
    records = _run_records()
    tr = from_records(records)
    full = whole(tr)
    ring = [e for e in full.events if e["name"] == "TokenReceived"]
    fl = [e for e in full.events if e["name"] == "Deliver"]
    assert ring and fl
    assert "localView" in ring[-1]["state"] and "phase" not in ring[-1]["state"]
    assert "phase" in fl[-1]["state"] and "localView" not in fl[-1]["state"]


# ---------------------------------------------------------------- SEQUENCER on top: ring, FLUSH, SEQUENCER

def _sequencer_runs(runs: int, stack_opts: dict | None = None, monkeypatch=None):
    """Drawn runs of the three-layer stack: (history problems per run, replay verdicts of
    its ring and FLUSH records against model/raincoreflush.py, coordinator crashes)."""
    import functools
    import random

    from groupcheck.core.trace import writer as tracefile
    from groupcheck.impl.sim_raincoreflush import without_sequencer
    if stack_opts:
        import groupcheck.impl.stacks.sequencerflush as sf
        monkeypatch.setattr(sf, "sequencer_flush_stack", functools.partial(sf.sequencer_flush_stack, **stack_opts))
    problems, verdicts, coord = {}, Counter(), 0
    for seed in range(runs):
        rng = random.Random(seed)
        crashes = tuple((c, rng.uniform(0.02, 0.3)) for c in rng.sample([1, 2, 3], rng.choice((0, 1, 1, 2))))
        coord += any(c == 1 for c, _ in crashes)
        msgs = [(rng.uniform(0, 0.3), rng.randint(1, 3), b"x") for _ in range(20)]
        plan = FaultPlan(crashes=crashes, loss=0.1, duplicate=0.05, reorder_window=0.003)
        records, summary, sim = simulate_ring_flush(RingFlushConfig(sequencer=True), seed, plan, msgs)
        assert summary["settled"]
        bad = crf.history_check(sim, RingFlushConfig(sequencer=True))
        if bad:
            problems[seed] = bad
        c = {"N": 3, "NInit": 3, "Founder": 3, "MaxMsgs": max(1, len(sim.sent_in)), "MaxCrashes": len(crashes)}
        v2 = tracefile.to_v2(without_sequencer(records), c, f"seq-{seed}", quiescent=False,
                             settled=summary["settled"], end_clock=summary["end_clock"])
        verdicts[crf.replay(from_records(v2), visited=False).verdict] += 1
    return problems, verdicts, coord


def test_sequencer_over_flush_over_the_ring_keeps_survivor_total_order():
    problems, verdicts, coord = _sequencer_runs(60)
    assert problems == {}
    assert verdicts == Counter(ok=60)
    assert coord >= 15


def test_sequencer_mutant_loses_a_survivors_message(monkeypatch):
    """Without ``resent_first`` and the self channel (docs/flush.md (d)),
    a new coordinator's own message overtakes the forward-table it re-sent:
    the history check sees a survivor's message lost."""
    problems, _, _ = _sequencer_runs(60, {"resent_first": False, "self_channel": False}, monkeypatch)
    assert any(p.startswith("SurvivorDelivery") for ps in problems.values() for p in ps), problems
