"""bench/runtime.py's series: every stack run in turn, --reps times
(interleaved), hogs started before and killed after, median and spread of
the runs' figures (no cluster, no JGroups: the runners are stand-ins)."""

from bench_helpers import load_bench

B = load_bench("runtime")


def member(per_s, p99, lost=0):
    return {"delivered": 6, "seconds": 1.0, "per_s": per_s, "lost": lost,
            "own_latency_ms_p50": 1.0, "own_latency_ms_p99": p99}


def test_a_runs_figure_is_its_slowest_member_and_its_worst_p99():
    run = {"verdict": "ok", "quiescent": True, "history_violations": [],
           "members": {"1": member(900, 5.0), "2": member(700, 9.0), "3": member(800, 7.0)}}
    assert B.figure(run) == (700, 9.0, 0, True)
    assert B.figure({**run, "quiescent": False})[3] is False
    assert B.figure({"failed_members": [2], "members": run["members"]})[3] is False
    lost = {**run, "members": {**run["members"], "3": member(800, 7.0, lost=2)}}
    assert B.figure(lost)[2] == 2


def test_series_interleaves_the_stacks_and_reports_median_and_spread(monkeypatch, tmp_path):
    order, hogs = [], []
    rates = iter([100, 300, 200, 600, 300, 400])

    def fake(name):
        def run(*args):
            order.append(name)
            r = next(rates)
            return {"members": {str(m): member(r, 1.0) for m in (1, 2, 3)},
                    **({} if name == "jg" else {"verdict": "ok", "quiescent": True, "history_violations": []})}
        return run

    monkeypatch.setattr(B, "ours", lambda protocol, *a: fake("ours")(*a))
    monkeypatch.setattr(B, "jgroups", lambda flush, *a: fake("jg")(*a))
    monkeypatch.setattr(B, "start_hogs", lambda n: hogs.append(("start", n)) or ["h"] * n)
    monkeypatch.setattr(B, "stop_hogs", lambda procs: hogs.append(("stop", len(procs))))
    res = B.series(("sequencer", "jgroups"), 10, 2, 3, 0.0, tmp_path)
    assert order == ["ours", "jg"] * 3
    assert hogs == [("start", 2), ("stop", 2)]
    assert res["summary"]["sequencer"]["per_s"] == {"median": 200, "min": 100, "max": 300}
    assert res["summary"]["jgroups"]["per_s"] == {"median": 400, "min": 300, "max": 600}
    assert res["summary"]["sequencer"]["every_run_clean"] and res["summary"]["jgroups"]["lost"] == 0
    assert res["ratio_of_medians"] == {"sequencer / jgroups": 0.5}
