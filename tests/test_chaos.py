"""The chaos soak of the real cluster (impl/chaos.py, ``groupcheck cluster
chaos``): its schedule, the network fault policy on real datagrams, the CPU
hog, and short runs of the composed stacks (slow)."""

from __future__ import annotations

import pytest

from groupcheck.impl import chaos
from groupcheck.impl.chaos import Action, schedule, suspicion_after


def _check_bounds(plan, seconds, nodes):
    assert plan and all(0 <= a.at and a.end <= seconds for a in plan)
    assert all(a.end <= b.at for a, b in zip(plan, plan[1:]))          # one action at a time
    kills = [a for a in plan if a.action == "kill"]
    assert len(kills) <= nodes - 1                                       # never the last one alive
    named = [a.target for a in kills if a.target != "coordinator"]
    assert len(set(named)) == len(named) and all(1 <= n <= nodes for n in named)


@pytest.mark.parametrize("nodes", [2, 3, 5])
def test_a_schedule_is_its_seed_alone_and_keeps_its_bounds(nodes):
    for seed in range(30):
        plan = schedule(seed, 20.0, nodes, suspect=1.0, holder=True)
        assert plan == schedule(seed, 20.0, nodes, suspect=1.0, holder=True)
        _check_bounds(plan, 20.0, nodes)
        for a in plan:
            if a.action == "pause":
                assert a.seconds > 1.0               # longer than the detector's time-out
                assert a.target in range(1, nodes + 1)
            else:
                assert a.seconds == 0 and a.when in ("", "eating")
    plans = {tuple(schedule(seed, 20.0, nodes, suspect=1.0)) for seed in range(30)}
    assert len(plans) == 30                          # different seeds, different schedules


def test_the_schedule_follows_the_live_members():
    """A kill of the coordinator takes the smallest member the schedule knows
    alive; a later named target is never a member it has killed."""
    seen = set()
    for seed in range(200):
        live = {1, 2, 3, 4}
        for a in schedule(seed, 30.0, 4):
            if a.action == "kill":
                gone = min(live) if a.target == "coordinator" else a.target
                assert gone in live
                live.discard(gone)
                seen.add("coordinator" if a.target == "coordinator" else "member")
            else:
                assert a.target in live and 0 < a.seconds <= chaos.STALL[1]
                seen.add("pause")
        assert live
    assert seen == {"coordinator", "member", "pause"}
    assert not any(a.when for s in range(50) for a in schedule(s, 30.0, 4))   # holder kills: asked for only


def test_a_pause_outlasts_the_stacks_detector():
    assert suspicion_after("sequencerflush") is None and suspicion_after("sequencer") is None
    for p in ("raincoreflush", "raincoresequencerflush"):
        assert suspicion_after(p) == pytest.approx(1.0)      # 20 resends, 50 ms apart


def test_a_schedule_refuses_what_it_cannot_keep():
    with pytest.raises(ValueError):
        schedule(1, 10.0, 1)
    with pytest.raises(ValueError):
        schedule(1, 0.0, 3)
    assert schedule(1, 0.1, 3) == []                 # too short for any action
    assert Action(1.0, "pause", 2, 1.5).end == 2.5
