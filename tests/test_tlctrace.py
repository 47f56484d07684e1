"""TLC trace validation of SEQUENCER: the TLA+ spec
(spec/Sequencer/TraceSequencer.tla) and the Python replay judge the same
simulated traces alike; the audit's tracevalidation stage, and what every
protocol's trace spec shares (its actions, the audit stage's check)."""
from __future__ import annotations

import copy
import xml.etree.ElementTree as ET

import pytest

from groupcheck.conformance import tlctrace
from groupcheck.conformance.replay import raincore
from groupcheck.conformance.replay import stable
from groupcheck.impl.faults import parse_faults
from groupcheck.impl.sim_sequencer import simulate_run
from groupcheck.core.trace.writer import write
from tlctrace_helpers import NEEDS_JAVA, accepted, accepted_without_state, events, explained_rejection, rejected_at

pytestmark = NEEDS_JAVA


@pytest.fixture(scope="module")
def run():
    v1, _ = simulate_run(3, 3, 7, parse_faults(""))
    return v1


def test_simulated_trace_accepted_by_tlc_and_model(tmp_path, run):
    accepted(tmp_path, run)


def test_swapped_deliveries_rejected_by_both_at_same_event(tmp_path, run):
    recs = copy.deepcopy(run)
    evs = events(recs)
    # member 2's first two deliveries of different messages: swap which message
    # each RecvData takes (and the channel it is taken from)
    idx = [k for k, e in enumerate(evs) if e["name"] == "RecvData" and e["nid"] == 2]
    a = idx[0]
    b = next(k for k in idx[1:] if evs[k]["msg"] != evs[a]["msg"])
    for key in ("msg", "params"):
        evs[a][key], evs[b][key] = evs[b][key], evs[a][key]
    rejected_at(tmp_path, recs, "swapped", a)     # format 2 numbers events from 0 after the header


def test_later_corruption_located_by_search_depth(tmp_path, run):
    # the state of a late event lies (sent one too many): both reject exactly there
    recs = copy.deepcopy(run)
    evs = events(recs)
    k = max(j for j, e in enumerate(evs) if e["name"] == "Send")
    evs[k]["state"]["sent"] += 1
    rejected_at(tmp_path, recs, "late", k)


def test_trace_without_state_validated_by_tlc(tmp_path, run):
    accepted_without_state(tmp_path, run)


def test_generated_log_module_constrains_only_present_keys():
    from groupcheck.conformance.replay.sequencer import PROTOCOL
    text = tlctrace.tracelog_module([{"name": "Send", "nid": 1, "params": {}, "msg": None,
                                      "state": {"sent": 1, "fwd": [2, 1]}}], PROTOCOL.tla_trace)
    assert "sent |-> 1" in text and "delivered" not in text and "vid" not in text
    assert "fwd |-> {1, 2}" in text      # a set-valued variable is a TLA+ set


def test_rejection_names_matched_states_and_enabled_actions(tmp_path, run):
    recs = copy.deepcopy(run)
    evs = events(recs)
    k = max(j for j, e in enumerate(evs) if e["name"] == "Send")
    evs[k]["state"]["sent"] += 1
    v = explained_rejection(tmp_path, recs, k)   # Send enabled; its logged state was not reachable
    assert v.record["name"] == "Send" and v.record["state"]["sent"] == evs[k]["state"]["sent"]
    # one state matched, and Send alone enabled there: the counts and the set TLC printed, read exactly
    assert v.matched_count == 1 and v.enabled == [f"Send({evs[k]['nid']})"]


def test_cli_checker_both_agrees_and_fails_on_swap(tmp_path, run):
    import json
    from typer.testing import CliRunner
    from groupcheck.cli.main import app
    good = write(tmp_path / "good.ndjson", run)
    r = CliRunner().invoke(app, ["conform", str(good), "--checker", "both", "--json"])
    assert r.exit_code == 0, r.output
    row = json.loads(r.stdout)[0]
    assert row["agree"] and row["tlc"]["ok"] and row["model"]["verdict"] == "ok"
    recs = copy.deepcopy(run)
    for e in recs[1:]:
        if e.get("name") == "Send":
            e["state"]["sent"] += 1      # every Send lies about its counter
            break
    bad = write(tmp_path / "bad.ndjson", recs)
    r = CliRunner().invoke(app, ["conform", str(bad), "--checker", "tlc"])
    assert r.exit_code == 1 and "nonconforming" in r.output and "rejected at event" in r.output
    r = CliRunner().invoke(app, ["conform", str(good), "--checker", "nope"])
    assert r.exit_code != 0


def test_tlc_without_a_verdict_is_one_line_and_keeps_its_output(tmp_path, run, monkeypatch):
    """A limit TLC hits (here its time) is a row with a one-line reason and
    TLC's output kept in a log file, never a traceback; --checker both still
    reports the model replay's verdict."""
    import functools
    from typer.testing import CliRunner
    from groupcheck.cli.main import app
    good = write(tmp_path / "good.ndjson", run)
    monkeypatch.setattr(tlctrace, "validate", functools.partial(tlctrace.validate, timeout=0.001))
    r = CliRunner().invoke(app, ["conform", str(good), "--checker", "both"])
    assert r.exit_code == 4, r.output           # incomplete: TLC checked nothing
    assert ": incomplete" in r.output and "TLC gave no verdict" in r.output
    assert "did not finish within 0.001 s" in r.output
    assert "Traceback" not in r.output and "@!@!@" not in r.output
    log = r.output.split("TLC's output: ")[1].split(")")[0]
    assert log.endswith(".log") and open(log).read() is not None


def test_stack_overflow_is_named_with_its_remedy():
    from types import SimpleNamespace
    res = SimpleNamespace(raw_output="Exception in thread main java.lang.StackOverflowError\n\tat tla2sany...",
                          outcome="error", error_message=None, exit_code=1)
    e = tlctrace._no_verdict(res, "sequencerflush", 17542, 600.0)
    assert "ran out of stack" in e.reason and "17542 entries" in e.reason and "-Xss" in e.reason
    assert "StackOverflowError" in e.log.read_text()
    res.raw_output = ("TLC threw an unexpected exception.\nThe exception was a util.WrongInvocationException\n"
                      ": Attempted to construct a set with too many elements (>1000000).\n")
    e = tlctrace._no_verdict(res, "sequencerflush", 17490, 600.0)
    assert "set with too many elements" in e.reason and "-maxSetSize" in e.reason and "\n" not in e.reason


# --- the audit's tracevalidation stage and its coverage ------------------------------------

def test_audit_stage_validates_a_sample_and_merges_coverage(tmp_path, monkeypatch):
    from groupcheck.conformance.audit import stages as audit
    from groupcheck.conformance.audit import report
    # two TLC runs show the sample drawn and the coverage merged as well as
    # the audit's five do (the sample's choice: test_sample_seeds_spread_over_the_campaign)
    monkeypatch.setattr(audit, "TRACE_SAMPLE", 2)
    checks, extra = audit.run(tmp_path, runs=20, seed=3, engine="local", protocols_=["sequencer"],
                              stages=("tracevalidation",))
    assert [c.kind for c in checks] == ["tracevalidation"] * audit.TRACE_SAMPLE
    assert len({c.name for c in checks}) == audit.TRACE_SAMPLE       # distinct campaign runs
    assert all(c.as_expected and c.observed.startswith("both accept") for c in checks)
    cov = extra["trace_coverage"]["sequencer"]
    assert cov["traces"] == audit.TRACE_SAMPLE
    assert set(cov["actions"]) == set(tlctrace.spec_actions("sequencer"))
    assert cov["actions"]["Send"] > 0 and cov["never"] == [a for a, n in cov["actions"].items() if n == 0]
    paths = report.write_all(tmp_path, checks, extra)
    assert "Spec actions exercised by the TLC-validated traces" in paths["report.md"].read_text()
    assert len(ET.parse(paths["junit.xml"]).getroot().findall(".//testcase")) == audit.TRACE_SAMPLE


# one protocol by default: each protocol's own tests/test_tlctrace_*.py has
# TLC validate its runs, and the default audit runs this check for every one
@pytest.mark.parametrize("name", [pytest.param("raincore", marks=pytest.mark.slow), "stable",
                                  pytest.param("raincoreflush", marks=pytest.mark.slow)])
def test_audit_stage_check_agrees(name):
    from groupcheck.conformance.audit import stages as audit
    c, kept = audit.tracevalidation_check(name, 3)
    assert c.as_expected and c.observed.startswith("both accept"), (c.observed, c.detail)
    assert kept is not None


def test_audit_stage_reports_a_disagreement_as_unexpected(monkeypatch):
    from groupcheck.conformance.audit import stages as audit
    from groupcheck.conformance.replay import conform as replay_mod
    real = replay_mod.replay

    def lying_replay(trace):          # a model replay that rejects what TLC accepts
        rep = real(trace)
        rep.verdict, rep.first_bad_event, rep.stops_conforming_at = "nonconforming", 0, 0
        return rep
    monkeypatch.setattr(replay_mod, "replay", lying_replay)
    c, accepted = audit.tracevalidation_check("sequencer", 5)
    assert not c.as_expected and "TLC accepts, model rejects at event 0" in c.observed
    assert "TOOL FAILURE" in c.explanation


@pytest.mark.parametrize("name", ["raincore", "stable"])
def test_spec_actions_are_the_protocols(name):
    assert tlctrace.spec_actions(name) == sorted({"raincore": raincore, "stable": stable}[name].ACTIONS)
    assert tlctrace.supported(name)


def test_sample_seeds_spread_over_the_campaign():
    from groupcheck.conformance.audit.stages import sample_seeds
    assert sample_seeds(100, 0, 5) == [0, 20, 40, 60, 80]
    assert sample_seeds(3, 7, 5) == [7, 8, 9]
    assert sample_seeds(10, 0, None) == list(range(10))


def test_coverage_names_actions_never_exercised(run):
    from groupcheck.core.trace.reader import from_records
    cov = tlctrace.coverage("sequencer", [from_records(run)])
    assert "Crash" in cov["never"] and "NewView" in cov["never"]     # a run without faults
    assert any(s.startswith("RecvData(p) msg=DATA") for s in cov["shapes"])


def test_agreement_is_on_steps_and_on_the_properties_the_trace_spec_judges():
    from groupcheck.conformance.replay.engine import RunReport
    V = tlctrace.TLCVerdict
    ok, rej = V(True, 10, None, 1.0, ""), V(False, 10, 7, 1.0, "")
    gc = V(True, 10, None, 1.0, "", broken_at=4, broken=["SafeGC"], broken_records=[4])
    gc_rej = V(False, 10, 7, 1.0, "", broken_at=4, broken=["SafeGC"], broken_records=[4])

    def rep(verdict, bad, stop, broken=None, protocol="stable"):
        return RunReport("f", "r", protocol, verdict, 10, bad, None, stops_conforming_at=stop, broken=broken or {})
    assert tlctrace.agrees(ok, rep("ok", None, None))
    assert tlctrace.agrees(rej, rep("nonconforming", 7, 7))
    assert not tlctrace.agrees(rej, rep("nonconforming", 6, 6))
    assert not tlctrace.agrees(ok, rep("nonconforming", 7, 7))
    # a property the trace spec judges: the same record and the same properties, or none on both sides
    assert tlctrace.agrees(gc, rep("violation", 4, None, {"SafeGC": 4}))
    assert not tlctrace.agrees(ok, rep("violation", 4, None, {"SafeGC": 4}))
    assert not tlctrace.agrees(gc, rep("ok", None, None))
    assert not tlctrace.agrees(gc, rep("violation", 5, None, {"SafeGC": 5}))
    assert not tlctrace.agrees(gc, rep("violation", 4, None, {"SafeGC": 4, "StabilityBound": 4}))
    assert tlctrace.agrees(gc, rep("violation", 4, None, {"SafeGC": 4, "StabilityBound": 6}))
    # broken in a conforming prefix, the steps stop conforming later: both say both
    assert tlctrace.agrees(gc_rej, rep("violation", 4, 7, {"SafeGC": 4}))
    assert not tlctrace.agrees(gc, rep("violation", 4, 7, {"SafeGC": 4}))
    # a property the trace spec does not judge is the replay's own (SEQUENCER's GapFreeFIFO)
    assert tlctrace.agrees(ok, rep("violation", 4, None, {"GapFreeFIFO": 4}, "sequencer"))
    # the report as JSON carries its ``broken`` beside it
    assert tlctrace.agrees(rej, rep("ok", None, None).to_json() | {"stops_conforming_at": 7, "broken": {}})
    with pytest.raises(KeyError):
        tlctrace.agrees(rej, rep("ok", None, None).to_json() | {"stops_conforming_at": 7})
