"""The simulator's horizon follows the workload: a send scheduled past the
horizon is still sent and settled (``simulate --messages`` does what it is
asked), and a workload within the first half of the horizon leaves it as it
was."""
from __future__ import annotations

from groupcheck.impl.sim_sequencer import simulate


def test_a_send_past_the_horizon_is_sent_and_settled():
    late = [(0.0, 1, b"m1.1"), (100.0, 2, b"m2.1")]         # the second send is 40 s past a 60 s horizon
    _, summary = simulate([1, 2, 3], late, 0, None, horizon=60.0)
    assert summary["quiescent"] is True
    assert summary["delivered"] == {m: [[1, 1], [2, 1]] for m in (1, 2, 3)}   # both, at every member


def test_a_short_workload_keeps_the_horizon():
    from groupcheck.impl.sim import Simulator
    sim = Simulator({}, 0, None, horizon=60.0)
    sim.app_send(29.0, 1, b"x")
    assert sim.horizon == 60.0
    sim.app_send(50.0, 1, b"y")
    assert sim.horizon == 80.0
