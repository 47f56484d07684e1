"""Progress that counts work (core/progress.py ``Work``, drawn by
cli/render.py ``progress``): done/total of the items that run, the time
left from their estimated costs and the pace so far, a heartbeat line at
least every HEARTBEAT seconds, JSON lines with --json.  Every time here
comes from a fake clock: no verdict depends on the wall clock."""

import json

import pytest

from groupcheck.cli import render
from groupcheck.conformance.audit import stages as audit
from groupcheck.core.progress import PRIOR, Work


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def test_time_left_is_the_pace_times_the_cost_left():
    w = Work(0.0, {"a": 10.0, "b": 10.0, "c": 100.0})
    assert w.left(0.0) == pytest.approx(120.0)          # nothing done: pace 1
    w.finish("a", 20.0)                                 # twice as slow as estimated, tempered by the prior
    pace = (20 + PRIOR) / (10 + PRIOR)
    assert w.pace(20.0) == pytest.approx(pace)
    assert w.left(20.0) == pytest.approx(pace * 110)
    assert (w.done, w.total) == (1, 3)
    w.finish("c", 150.0)
    assert w.left(150.0) == pytest.approx((150 + PRIOR) / (110 + PRIOR) * 10)
    w.finish("b", 170.0)
    assert w.left(170.0) == 0.0


def test_a_slow_first_cheap_check_does_not_blow_up_the_time_left():
    """The cheap check took 20 times its estimate: the time left by the
    average pace per check, or by elapsed/cost alone, would be many times
    the work left; the prior keeps it within a few times its estimate, and
    the next checks' pace takes over."""
    w = Work(0.0, {"cheap": 1.0, "big1": 100.0, "big2": 100.0})
    w.finish("cheap", 20.0)
    naive = 20.0 / 1.0 * 200.0                          # 4,000 s
    assert w.left(20.0) < 3 * 200.0 < naive / 6
    w.finish("big1", 130.0)                             # the big ones run at their estimate
    assert w.left(130.0) == pytest.approx((130 + PRIOR) / (101 + PRIOR) * 100)
    assert w.left(130.0) < 1.3 * 100


def test_the_predicted_end_holds_between_checks_and_never_says_nothing_is_left():
    w = Work(0.0, {"a": 10.0, "b": 10.0})
    w.finish("a", 10.0)                                 # on estimate: the end predicted at 20
    assert 10.0 + w.left(10.0) == pytest.approx(20.0)
    assert 15.0 + w.left(15.0) == pytest.approx(20.0)   # the same end 5 s later
    assert w.left(40.0) > 0                             # overrun: at least the pending check at today's pace


def test_running_checks_count_in_part_and_a_pool_starts_them_in_order():
    w = Work(0.0, {"x": 10.0, "y": 10.0, "z": 10.0})
    w.queue(["x", "y", "z"], 2, 0.0)                    # two at once: x and y start
    assert set(w.running) == {"x", "y"}
    # 5 s in, each running check has 5 s of its 10 (shared by 2: 2.5 s of wall each)
    assert w.left(5.0) < 30.0
    w.finish("x", 10.0)
    assert set(w.running) == {"y", "z"}                 # z took x's place
    w2 = Work(0.0, {"tlc/a": 5.0, "link/a": 5.0, "tlc/b": 5.0})
    w2.queue([["tlc/a", "link/a"], "tlc/b"], 1, 0.0)    # one run finishes both checks of a
    assert set(w2.running) == {"tlc/a", "link/a"}
    w2.finish("tlc/a", 9.0)
    assert "tlc/b" not in w2.running                    # a's run is still going
    w2.finish("link/a", 10.0)
    assert set(w2.running) == {"tlc/b"}


def test_each_kind_of_check_is_priced_at_its_own_pace_once_one_has_finished():
    """A TLC check took twice its estimate while a proof ran at its own:
    the TLC check left is priced at TLC's pace, the proof left at the
    proofs', a kind not seen yet at the overall pace shrunk toward the
    estimates (its square root); the prior draws a kind's pace toward the
    overall one.  An item of no kind (no '/') is at the overall pace."""
    from groupcheck.core.progress import KIND_PRIOR, kind_of
    assert (kind_of("tlc/p/A"), kind_of("a"), kind_of(3)) == ("tlc", None, None)
    w = Work(0.0, {"tlc/p/A": 100.0, "tlc/p/B": 100.0, "prove/p/X": 100.0, "prove/p/Y": 100.0,
                   "history/p": 100.0})
    w.start("tlc/p/A", 0.0)
    w.finish("tlc/p/A", 200.0)                          # twice its estimate
    w.start("prove/p/X", 200.0)
    w.finish("prove/p/X", 300.0)                        # on its estimate
    g = w.pace(300.0)
    assert g == pytest.approx((300 + PRIOR) / (200 + PRIOR))
    tlc = (200 + KIND_PRIOR * g) / (100 + KIND_PRIOR)
    prove = (100 + KIND_PRIOR * g) / (100 + KIND_PRIOR)
    assert (w.kind_pace("tlc", g), w.kind_pace("prove", g), w.kind_pace("history", g), w.kind_pace(None, g)) == \
        (pytest.approx(tlc), pytest.approx(prove), pytest.approx(g ** 0.5), g)
    assert w.left(300.0) == pytest.approx(100 * (tlc + prove + g ** 0.5))
    assert tlc > 1.5 and prove < 1.1                    # neither at the overall pace of about 1.5
    # a check of the kind running: its share of the clock so far counts (two at once: half)
    w.start("tlc/p/B", 300.0, jobs=2)
    g2 = w.pace(340.0)
    assert w.left(340.0) == pytest.approx(100 * w.kind_pace("tlc", g2) - 20.0 + 100 * w.kind_pace("prove", g2)
                                          + 100 * g2 ** 0.5)


def test_items_alike_have_no_time_left_until_one_is_done():
    w = Work(0.0)
    w.count(0, 10, 0.0)
    assert w.left(5.0) is None and w.total == 10
    w.count(2, 10, 20.0)
    assert w.left(20.0) == pytest.approx(80.0)          # 10 s each, no prior for items without an estimate
    assert w.rate(20.0) == pytest.approx(6.0)


def test_the_audit_weighs_checks_by_the_measured_table_else_by_their_kind():
    table = {"tlc/p/A": 40.0, "tlc/p/B": 20.0, "tlc/q/C": 2.0, "conformance/p": 8.0}
    c = audit.plan_costs(["tlc/p/A", "tlc/p/New", "tlc/r/New", "conformance/p", "history/p"], 2, table)
    assert c["tlc/p/A"] == 20.0                         # a pool of 2 shares the clock
    assert c["tlc/p/New"] == 15.0                       # its protocol's TLC checks' median, shared
    assert c["tlc/r/New"] == 10.0                       # every TLC check's median, shared
    assert c["conformance/p"] == 8.0 and c["history/p"] == 5.0
    shipped = audit.plan_costs(["prove/flush/Fixed"], 1)    # the committed table has the default audit's ids
    assert shipped["prove/flush/Fixed"] > 0


def test_skipped_checks_are_no_work(monkeypatch, tmp_path):
    """The default audit skips FLUSH's heavy AnyFixedJoin proof: it is in the
    summary's checks but not in the progress's total, nor counted done."""
    from groupcheck.model.proofs import registry
    monkeypatch.setattr(registry, "run_isolated", lambda encs, jobs: ((e, []) for e in encs))
    monkeypatch.setattr(audit, "prove_check", lambda enc, queries: audit.Check(
        id=f"prove/{enc.protocol}/{enc.variant}", kind="prove", protocol=enc.protocol, name=enc.variant,
        expected="proved", observed="proved", as_expected=True, seconds=1.0))
    calls = []
    checks, _ = audit.run(tmp_path, protocols_=["flush"], stages=("prove",), jobs=2,
                          progress=lambda *a, **k: calls.append((a, k)))
    skipped = [c for c in checks if c.skipped]
    assert [c.id for c in skipped] == ["prove/flush/AnyFixedJoin"]
    plan = next(k["plan"] for _, k in calls if "plan" in k)
    assert "prove/flush/AnyFixedJoin" not in plan and len(plan) == len(checks) - 1
    finished = [(a, k) for a, k in calls if len(a) > 3 and a[3] is not None]
    assert [a[1] for a, _ in finished] == list(range(1, len(plan) + 1))
    assert {a[2] for a, _ in finished} == {len(plan)}
    assert {k["key"] for _, k in finished} == set(plan)


def _lines(capsys):
    return capsys.readouterr().err.splitlines()


def test_a_heartbeat_at_least_every_30_seconds(capsys):
    """A line HEARTBEAT (25) seconds after the last one: within 30 s even when
    the beat thread, which looks once a second, runs late under load."""
    assert render._Progress.HEARTBEAT <= 25.0
    clock = Clock()
    with render.progress("audit", clock=clock) as prog:
        prog._stop.set()                                # the test beats by hand, on its clock
        prog.plan({"a": 60.0, "b": 60.0})
        prog.update("TLC p/A")
        for _ in range(8):                              # 40 s in 5 s steps: one heartbeat, at 25 s
            clock.t += 5
            prog.beat()
        prog.finished("TLC p/A: ok", key="a")           # at 40 s: a line; the next heartbeat 25 s later
        clock.t += 24
        prog.beat()
        clock.t += 1
        prog.beat()
    lines = _lines(capsys)
    beats = [ln for ln in lines if ln.startswith("still working:")]
    assert len(beats) == 2
    assert beats[0].startswith("still working: TLC p/A [0/2] (25 s; about 2 min left)")
    assert beats[1].startswith("still working: TLC p/A [1/2] (65 s")
    assert any(ln.startswith("[1/2] TLC p/A: ok (40 s;") for ln in lines)
    assert "\x1b[" not in "".join(lines)                # off a terminal: plain lines, no bar


def test_json_mode_is_json_lines_on_stderr_and_nothing_on_stdout(capsys):
    clock = Clock()
    with render.progress("prove 2 variants", as_json=True, costs={"a": 10.0, "b": 30.0}, clock=clock) as prog:
        prog._stop.set()
        clock.t += 20
        prog.finished("prove p/a: proved", key="a")
        clock.t += 30
        prog.beat()
    out, err = capsys.readouterr()
    assert out == ""
    rows = [json.loads(ln) for ln in err.splitlines()]
    assert [r["progress"] for r in rows] == ["start", "done", "heartbeat"]
    assert rows[1]["done"] == 1 and rows[1]["total"] == 2 and rows[1]["what"] == "prove p/a: proved"
    assert rows[1]["eta_s"] == pytest.approx((20 + PRIOR) / (10 + PRIOR) * 30, abs=0.1)
    assert rows[1]["rate_per_min"] == pytest.approx(3.0)
    assert rows[2]["elapsed_s"] == 50.0 and rows[2]["eta_s"] > 0


def test_conform_json_progress_goes_to_stderr(tmp_path, capsys, monkeypatch):
    from cli_helpers import main_in_process
    from groupcheck.cli import main
    code, _, _ = main_in_process("simulate", "sequencer", "--runs", "2", "--out", str(tmp_path / "t"),
                                 "--json", capsys=capsys)
    assert code == 0
    monkeypatch.setattr(main, "QUIET_START", 0.0)               # said from the start, not after 10 s
    code, out, err = main_in_process("conform", str(tmp_path / "t"), "--json", capsys=capsys)
    assert code == 0
    assert [r["verdict"] for r in json.loads(out)] == ["ok", "ok"]
    rows = [json.loads(ln) for ln in err.splitlines()]
    done = [r for r in rows if r["progress"] == "done"]
    assert [(r["done"], r["total"]) for r in done] == [(1, 2), (2, 2)]


def test_a_command_that_is_often_quick_says_nothing_before_after(capsys):
    clock = Clock()
    with render.progress("conform 3 runs", costs={"a": 1.0, "b": 1.0, "c": 1.0}, after=10.0, clock=clock) as prog:
        prog._stop.set()
        clock.t += 2
        prog.finished("conform a: ok", key="a")
        prog.beat()
        assert _lines(capsys) == []                     # quick so far: silent
        clock.t += 9
        prog.beat()                                     # 11 s: the first line, without waiting 30 s
        assert [ln.startswith("still working: conform 3 runs [1/3] (11 s") for ln in _lines(capsys)] == [True]


def test_check_weighs_a_model_the_audit_skips_by_its_pinned_states():
    from groupcheck.cli.main import _entries, _tlc_costs
    entries = _entries(["stable"], None)
    keys = [f"tlc/{e.protocol}/{e.name}" for e in entries]
    table = json.loads(audit.COSTS.read_text(encoding="utf-8"))["seconds"]
    costs = _tlc_costs(entries, keys)
    assert all(costs[k] == table[k] for k in keys if k in table)
    big = max((e for e in entries if f"tlc/stable/{e.name}" not in table), key=lambda e: e.distinct_states)
    small = [k for e, k in zip(entries, keys) if k in table and e.distinct_states < big.distinct_states / 10]
    assert small and all(costs[f"tlc/stable/{big.name}"] > costs[k] for k in small)
