"""Complete verdicts (DESIGN §5.1): every violation classified on its own, a
history and its trace checked to be one run, nothing checked is never ok.

Each case is built from runs made here (the simulator, then records edited
as a forger would), not from fixed files."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from groupcheck.cli.main import app
from groupcheck.conformance.replay import registry as protocols
from groupcheck.conformance.replay import sequencer as cseq
from groupcheck.core.trace.reader import Trace, from_records
from groupcheck.core.trace import writer as tracefile

SEQ = protocols.get("sequencer")
LOST = "sequencer/lost-after-coordinator-crash"
ORDER = "sequencer/coordinator-crash-order"


def _documented_loss_runs(limit: int = 2):
    """Drawn SEQUENCER runs whose only violations are the documented loss."""
    out = []
    for seed in range(40):
        faults, options = SEQ.draw(seed)
        recs, _ = SEQ.simulate(seed, faults, {**SEQ.default_options, **options})
        rep = SEQ.replay(from_records(recs), visited=False)
        if rep.verdict == "documented" and rep.finding == LOST:
            out.append((seed, recs, rep))
            if len(out) == limit:
                break
    assert out, "no drawn run shows the documented loss"
    return out


def _second_loss(recs):
    """The run with one more loss: a delivery that a coordinator still alive
    sequenced, removed from a survivor (the latest that keeps the run
    conforming)."""
    crashed = {e["nid"] for e in recs[1:] if e.get("name") == "Crash"}
    for k in reversed(range(len(recs))):
        e = recs[k]
        if e.get("name") == "RecvData" and e["nid"] not in crashed \
                and (e.get("params") or {}).get("p") not in crashed:
            forged = recs[:k] + recs[k + 1:]
            rep = SEQ.replay(from_records(forged), visited=False)
            if rep.verdict in ("violation", "documented"):
                return forged, rep, e
    pytest.fail("no removable delivery")


def test_each_violation_is_classified_on_its_own():
    """A documented loss and a second one beside it: the run is a violation,
    and the second loss is listed apart as not covered."""
    for seed, recs, rep in _documented_loss_runs():
        assert rep.violations and all(v["finding"] == LOST for v in rep.violations)
        forged, bad, removed = _second_loss(recs)
        assert bad.verdict == "violation", (seed, bad.reason)
        assert bad.finding is None and "not covered: EventualDelivery" in bad.finding_why
        uncovered = [v for v in bad.violations if v["finding"] is None]
        # (the removed delivery's DATA is still in flight at the end: the quiescent claim is false too)
        assert {v["property"] for v in uncovered} <= {"EventualDelivery", "Quiescent"}
        assert "EventualDelivery" in {v["property"] for v in uncovered}
        # the removed delivery is among the losses EventualDelivery's witness was checked on
        from groupcheck.core import properties
        lost = {tuple(v.messages[0]) for v in properties.missing_deliveries(cseq._Run(from_records(forged)).history())}
        assert (removed["msg"]["sender"], removed["msg"]["seqno"]) in lost


def test_conform_exits_1_on_a_second_fault_and_lists_both(tmp_path):
    (seed, recs, _), = _documented_loss_runs(1)
    forged, _, _ = _second_loss(recs)
    p = tracefile.write(tmp_path / "forged.ndjson", forged)
    r = CliRunner().invoke(app, ["conform", str(p)])
    assert r.exit_code == 1, r.output
    assert ": violation" in r.output and "not covered by a finding: EventualDelivery" in r.output
    r = CliRunner().invoke(app, ["conform", str(p), "--json"])
    (row,) = json.loads(r.stdout)
    assert row["verdict"] == "violation" and {v["finding"] is None for v in row["violations"]} >= {True}


def test_the_local_pipeline_gives_the_same_complete_verdict(tmp_path):
    from groupcheck.conformance.pipeline import stages as P
    (seed, recs, _), = _documented_loss_runs(1)
    forged, bad, _ = _second_loss(recs)
    tracefile.write(tmp_path / "in" / "forged.ndjson", forged)
    tracefile.write(tmp_path / "in" / "good.ndjson", recs)
    rows = {r["file"].rsplit("/", 1)[1]: r for r in P.conform_rows([tmp_path / "in"], engine="local",
                                                                      work_dir=tmp_path)}
    assert rows["good.ndjson"]["verdict"] == "documented"
    assert rows["forged.ndjson"]["verdict"] == "violation"
    assert rows["forged.ndjson"]["violations"] == bad.violations


def _fake(events, nodes=(1, 2, 3)):
    """A trace holding just what SEQUENCER's findings read (their witnesses
    read the records, not the model)."""
    return Trace("<fake>", {"nodes": list(nodes), "protocol": "sequencer"}, events)


def _recv(m, msg, p):
    return {"name": "RecvData", "nid": m, "params": {"p": p}, "state": {"delivered": [list(msg)]}}


def test_crash_order_needs_every_inverted_pair_to_straddle_the_failover():
    """Coordinator 1 crashes; 2 sequences after it.  Members 2 and 3 order
    1.1 (sequenced by 1) and 2.1 (by 2) differently: the finding.  Add a
    second inversion between two messages both sequenced by 2: not its
    shape, whatever the first pair shows."""
    base = [{"name": "Send", "nid": 1, "msg": {"sender": 1, "seqno": 1}},
            {"name": "Send", "nid": 2, "msg": {"sender": 2, "seqno": 1}},
            {"name": "Send", "nid": 3, "msg": {"sender": 3, "seqno": 1}},
            {"name": "Send", "nid": 3, "msg": {"sender": 3, "seqno": 2}},
            _recv(2, (1, 1), 1),
            {"name": "Crash", "nid": 1},
            {"name": "NewView", "nid": None, "params": {"view": [2, 3]}},
            _recv(2, (2, 1), 2), _recv(3, (2, 1), 2), _recv(3, (1, 1), 2)]
    ok_tail = [_recv(2, (3, 1), 2), _recv(2, (3, 2), 2), _recv(3, (3, 1), 2), _recv(3, (3, 2), 2)]
    bad_tail = [_recv(2, (3, 1), 2), _recv(2, (3, 2), 2), _recv(3, (3, 2), 2), _recv(3, (3, 1), 2)]
    assert cseq._witness_crash_order(_fake(base + ok_tail), "TotalOrder", "") is not None
    assert cseq._witness_crash_order(_fake(base + bad_tail), "TotalOrder", "") is None


def test_a_loss_the_new_coordinator_sequenced_is_not_the_finding():
    """1.2 lost by member 3 after coordinator 1 crashed is the finding only
    if nobody delivered it through a coordinator still alive."""
    head = [{"name": "Send", "nid": 2, "msg": {"sender": 2, "seqno": 1}},
            {"name": "Send", "nid": 2, "msg": {"sender": 2, "seqno": 2}},
            _recv(2, (2, 1), 1), _recv(3, (2, 1), 1),
            {"name": "Crash", "nid": 1},
            {"name": "NewView", "nid": None, "params": {"view": [2, 3]}},
            {"name": "InstallView", "nid": 2, "state": {"vid": 2}},
            {"name": "InstallView", "nid": 3, "state": {"vid": 2}}]
    held = head + [_recv(2, (2, 2), 1)]         # only the crashed coordinator sequenced it
    resequenced = head + [_recv(2, (2, 2), 2)]  # the new one did, and member 3 lacks it
    assert cseq._witness_lost_held(_fake(held), "EventualDelivery", "") is not None
    assert cseq._witness_lost_held(_fake(resequenced), "EventualDelivery", "") is None


# ---------------------------------------------------------------- a history and its trace

def _simulated_with_history(tmp_path, seed=13, faults="loss=0.1,dup=0.05,reorder=3,crash=1@79.7"):
    out = tmp_path / "run"
    r = CliRunner().invoke(app, ["simulate", "sequencer", "--seed", str(seed), "--nodes", "3", "--messages", "3",
                                 "--faults", faults, "--history", "--out", str(out)])
    assert r.exit_code == 0, r.output
    (hist,) = (out / "history").glob("*.ndjson")
    (trace,) = out.glob("*.ndjson")
    return out, hist, trace


def _lines(p):
    return [json.loads(x) for x in p.read_text().splitlines()]


def _write(p, recs):
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))


def test_a_trace_beside_a_history_documents_only_violations_of_a_finding_shape(tmp_path):
    """A duplicated delivery in the history (NoDuplicates: no finding has it)
    beside the run's trace is an input error: the trace is not that run."""
    out, hist, trace = _simulated_with_history(tmp_path)
    r = CliRunner().invoke(app, ["history", str(out)])
    assert r.exit_code == 0 and "documented" in r.output, r.output
    recs = _lines(hist)
    k = next(i for i, e in enumerate(recs) if e.get("name") == "deliver")
    _write(hist, recs[:k + 1] + [recs[k]] + recs[k + 1:])
    r = CliRunner().invoke(app, ["history", str(out)])
    assert r.exit_code == 2 and "are not the same run" in r.output and str(trace) in r.output, r.output


def test_another_runs_trace_renamed_beside_a_history_is_refused(tmp_path):
    out, hist, trace = _simulated_with_history(tmp_path)
    other, _, other_trace = _simulated_with_history(tmp_path / "o", seed=14,
                                                    faults="loss=0.1,dup=0.05,reorder=3,crash=1@74.3")
    recs = _lines(other_trace)
    recs[0]["run_id"] = _lines(trace)[0]["run_id"]
    _write(trace, recs)
    r = CliRunner().invoke(app, ["history", str(out)])
    assert r.exit_code == 2 and "are not the same run" in r.output, r.output


def test_history_violation_without_a_trace_is_never_documented(tmp_path):
    out, hist, trace = _simulated_with_history(tmp_path)
    r = CliRunner().invoke(app, ["history", str(hist)])
    assert r.exit_code == 1 and "documented" not in r.output.split("\n")[0], r.output


# ---------------------------------------------------------------- nothing checked is never ok

def test_a_run_with_no_multicast_is_incomplete(tmp_path):
    r = CliRunner().invoke(app, ["simulate", "sequencer", "--messages", "0", "--out", str(tmp_path / "z")])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(app, ["conform", str(tmp_path / "z")])
    assert r.exit_code == 4 and ": incomplete" in r.output and "no events" in r.output, r.output


@pytest.mark.parametrize("protocol", ["sequencer", "flush", "stable"])
def test_an_interrupted_run_is_incomplete_not_ok(protocol, tmp_path):
    proto = protocols.get(protocol)
    recs, _ = proto.simulate(1, "", dict(proto.default_options))
    assert recs[-1]["kind"] == "end"
    ok = proto.replay(from_records(recs), visited=False)
    assert ok.verdict == "ok", ok.reason
    cut = proto.replay(from_records(recs[:-1]), visited=False)
    assert cut.verdict == "incomplete" and "no end record" in cut.reason
    p = tracefile.write(tmp_path / "cut.ndjson", recs[:-1])
    r = CliRunner().invoke(app, ["conform", str(p)])
    assert r.exit_code == 4, r.output


def test_a_run_that_multicast_nothing_is_incomplete():
    recs, _ = SEQ.simulate(1, "", dict(SEQ.default_options))
    quiet = [recs[0]] + [e for e in recs[1:-1] if e.get("name") == "Crash"] + [recs[-1]]
    rep = SEQ.replay(from_records(quiet), visited=False)
    assert rep.verdict == "incomplete", rep


def test_history_with_no_events_or_no_end_is_incomplete(tmp_path):
    out, hist, trace = _simulated_with_history(tmp_path, seed=1, faults="loss=0.1")
    recs = _lines(hist)
    assert recs[-1]["kind"] == "end"
    _write(hist, recs[:-1])
    r = CliRunner().invoke(app, ["history", str(hist)])
    assert r.exit_code == 4 and "incomplete" in r.output and "no end record" in r.output, r.output
    _write(hist, [recs[0], recs[-1]])
    r = CliRunner().invoke(app, ["history", str(hist)])
    assert r.exit_code == 4 and "no events" in r.output, r.output


def test_history_protocol_flag_that_disagrees_with_the_header_is_an_input_error(tmp_path):
    out, hist, trace = _simulated_with_history(tmp_path, seed=1, faults="loss=0.1")
    r = CliRunner().invoke(app, ["history", str(hist), "--protocol", "flush"])
    assert r.exit_code == 2 and "--protocol flush disagrees" in r.output and "sequencer" in r.output, r.output


def test_cluster_report_first_word_is_never_ok_unless_quiescent(capsys):
    import typer
    from groupcheck.cli import cluster
    from groupcheck.cli.findings import Gate
    from groupcheck.conformance.cluster import Result
    r = Result("run", "sequencer-n3", False, [], "incomplete", "the run did not reach quiescence", [],
               {1: 3, 2: 1, 3: 0}, 60.0)
    with pytest.raises(typer.Exit) as e:
        cluster._report(json.loads(json.dumps(r.to_json())), "sequencer", __import__("pathlib").Path("run"),
                        False, Gate())
    assert e.value.exit_code == 4
    assert capsys.readouterr().out.startswith("sequencer-n3: incomplete")


@pytest.mark.slow
@pytest.mark.xdist_group("spark")
def test_spark_gives_the_same_complete_verdict(tmp_path):
    """The second loss beside the documented one, on Spark: the same rows as the local engine."""
    from groupcheck.conformance.pipeline import stages as P
    from groupcheck.conformance.pipeline.spark import session
    (seed, recs, _), = _documented_loss_runs(1)
    forged, bad, _ = _second_loss(recs)
    tracefile.write(tmp_path / "in" / "forged.ndjson", forged)
    tracefile.write(tmp_path / "in" / "good.ndjson", recs)
    local = P.conform_rows([tmp_path / "in"], engine="local", work_dir=tmp_path)
    spark = P.conform_rows([tmp_path / "in"], engine="spark", spark=session("local[1]"), work_dir=tmp_path)
    assert spark == local
    assert {r["file"].rsplit("/", 1)[1]: r["verdict"] for r in spark} == {"good.ndjson": "documented",
                                                                           "forged.ndjson": "violation"}


def test_a_quiescent_claim_false_only_on_the_crashed_coordinators_channels_is_the_loss():
    """Drawn run 171: a DATA of the crashed coordinator never reached member
    4 (the crash cut it), so the spec's Quiescent fails beside the
    documented loss; both are the finding.  A Quiescent witness naming a
    channel between two live members is not its shape."""
    faults, options = SEQ.draw(171)
    recs, _ = SEQ.simulate(171, faults, {**SEQ.default_options, **options})
    rep = SEQ.replay(from_records(recs), visited=False)
    assert rep.verdict == "documented" and {v["property"] for v in rep.violations} == {"EventualDelivery", "Quiescent"}
    trace = from_records(recs)
    assert cseq._witness_cut_by_crash(cseq._Run(trace), "a message (x) from member 1 to member 4 is still in flight")
    assert cseq._witness_cut_by_crash(cseq._Run(trace), "a message (x) from member 1 to member 4 is still in flight"
                                      "; in flight from member 2 to member 3 too") is None
