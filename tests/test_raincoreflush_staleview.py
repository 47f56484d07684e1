"""A finding of the composition (spec/RaincoreFlush, model StaleView): a
FLUSH coordinator whose ring lags behind the view it installed from
another node's VIEW took its ring's last commit, an older view, as a view
change, and the views went back to members the ring had dropped.  The fix
(``NewerViewsOnly``): the VIEW carries the ring's number of the view, and
FLUSH acts only on a newer commit.  Found by the replay of a drawn run of
SEQUENCER over FLUSH over the ring with a joiner and two crashes
(ViewsFromRing failed in every candidate state), then by TLC."""

import pytest

from groupcheck.conformance.replay import raincoreflush as crf
from groupcheck.core.trace.reader import from_records
from groupcheck.impl.flush import Flush
from groupcheck.model import manifest
from groupcheck.model.core import explore
from groupcheck.model.link import build_model
from groupcheck.model.raincoreflush import RaincoreFlushModel

# the plan of the drawn run that found it (campaign seed 9 of SEQUENCER over
# FLUSH over the ring, nodes 4, ring 3): node 2 crashes, node 4 joins, node 1 crashes
PLAN = "crash=1@183.7,crash=2@124.2,join=4@159.7,loss=0.1,dup=0.05,reorder=3"
OPTS = {"nodes": 4, "ring": 3, "messages": 2}


def stale_view_model(newer: bool) -> RaincoreFlushModel:
    (entry,) = manifest.select(["raincoreflush"], "StaleView")
    return RaincoreFlushModel({**build_model(entry).constants, "NewerViewsOnly": newer})


def test_the_model_finds_the_stale_view_and_the_fix_disables_its_flush():
    flawed = stale_view_model(False)
    res = explore(flawed, check_invariants=["ViewsFromRing"])
    assert res.violation is not None and res.violation.invariant == "ViewsFromRing"
    trace = res.violation.trace
    assert len(trace) == 37                       # TLC's counterexample is as long
    last = trace[-1][1]
    assert len(last.views) == 3 and last.views[2] == frozenset({1, 2, 3}) and last.views[1] == frozenset({1, 3})
    # the flush that installs it starts at a coordinator whose own ring's last
    # commit is older than its view: with NewerViewsOnly that step is not there
    (i, (lab, _)) = next((i, x) for i, x in enumerate(trace) if x[0] is not None
                         and x[0].action == "StartFlush" and x[1].vid[x[0].params[0] - 1] == 2)
    fixed = stale_view_model(True)
    before = trace[i - 1][1]
    assert lab in {l for l, _ in flawed.next(before)}
    assert lab not in {l for l, _ in fixed.next(before)}
    c = lab.params[0]
    assert fixed.LastIdx(before, c) < before.viewRing[before.vid[c - 1] - 1]


def test_the_manifest_keeps_the_flawed_composition_as_an_expected_violation():
    (entry,) = manifest.select(["raincoreflush"], "StaleView")
    assert entry.expected == "ViewsFromRing"
    assert build_model(entry).NewerViewsOnly is False


def _runs(seeds):
    for seed in seeds:
        records, line = crf.simulate(seed, PLAN, OPTS)
        yield seed, records, line, crf.replay(from_records(records, f"seed-{seed}"), visited=False)


def test_the_implementation_waits_for_a_newer_commit_and_conforms():
    for seed, records, line, rep in _runs(range(12)):
        assert rep.verdict == "ok", (seed, rep.reason)
        assert line["history"] == [], (seed, line["history"])
        assert records[0]["constants"]["NewerViewsOnly"] is True
        views = [r for r in records if r.get("name") == "SendView"]
        assert all(r["msg"]["ring"] >= 1 for r in views)
        # every installed view is newer in the ring than the one before it
        nums = [r["msg"]["ring"] for r in views]
        assert nums == sorted(set(nums)), (seed, nums)


def test_a_node_whose_ring_lags_sees_the_old_commit_and_does_not_act_on_it():
    from groupcheck.impl.sim_raincoreflush import RingFlushConfig, simulate_ring_flush
    plan = crf.fault_plan(PLAN, 0, {"ring": 3, "nodes": 4})
    hits = 0
    for seed in range(12):
        _, _, sim = simulate_ring_flush(RingFlushConfig(n=4, init_size=3), seed, plan, ())
        hits += any(sim.flush(n).stats.get("stale_ring_view") for n in sim.fstacks)
    assert hits >= 3, hits


def test_the_implementation_as_first_written_is_caught(monkeypatch):
    """FLUSH taking any commit whose members differ (no ring number): the
    replay rejects the stale flush where the model has no such step."""
    monkeypatch.setattr(Flush, "_ring_newer", lambda self: True)
    bad = [(seed, rep) for seed, _, _, rep in _runs(range(12)) if rep.verdict != "ok"]
    assert len(bad) >= 3, [(s, r.verdict) for s, r in bad]
    assert all(rep.verdict == "nonconforming" for _, rep in bad), [(s, r.verdict, r.reason) for s, r in bad]


def test_views_from_ring_is_a_subsequence_of_the_ring_commits():
    """The ring may commit the same members twice (node 2 alone, then with
    joiners, then alone again): FLUSH's views are judged as a subsequence of
    the commits, each taking the least ring number above its predecessor's.
    (A 30-minute soak of the three layers met it: with every pair of ring
    numbers compared, the second [2] failed against its first commit.)"""
    from types import SimpleNamespace
    model = stale_view_model(True)
    ring = ((1, 2, 3), (2, 3), (2,), (2, 4), (2, 5, 4), (2, 5), (2,))

    def holds(views, commits=ring):
        return model.ViewsFromRing(SimpleNamespace(views=views, globalView=(commits, ())))
    assert holds(((1, 2, 3), (2, 3), (2,), (2, 4), (2, 4, 5), (2, 5), (2,)))
    assert holds(((1, 2, 3), (2, 3), (2, 4), (2,)))                 # views skipped: still a subsequence
    assert not holds(((1, 2, 3), (2, 4), (2, 3)))                    # back to an older commit
    assert not holds(((1, 2, 3), (2, 5, 4), (2, 4)))                 # (2, 4) only before (2, 5, 4)
    assert not holds(((1, 2, 3), (1, 3)))                            # never committed
    assert not holds(((1, 2, 3), (2,), (2,), (2,)))                  # the ring committed [2] twice only
