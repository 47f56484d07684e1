"""Decisions that the mutation sample of bench/mutants.py found no default
test pinning (docs/mutants.md, "Survivors"): each test here fails with the
mutant it names applied."""

import pytest


def test_a_checks_figures_in_words_skip_the_empty_and_structured_ones_and_keep_going():
    # conformance/audit/report.py figures_text: a None, False, dict or list figure is
    # skipped, and the figures after it are still said (a `break` there drops them)
    from groupcheck.conformance.audit.report import Check, figures_text
    c = Check("tlc/x/y", "tlc", "x", "y", "", "", True, 0.0,
              figures={"depth": None, "flagged": False, "coverage": {"a": 1}, "runs": 3, "pinned": True,
                       "engine": "local"})
    assert figures_text(c) == "runs 3, pinned, engine local"


def test_an_unknown_protocol_has_no_model_and_the_error_names_the_known_ones():
    # model/registry.py model_class: the KeyError says which protocols have a model
    from groupcheck.model.registry import model_class
    with pytest.raises(KeyError, match="no Python model registered for protocol 'nosuch'; known: .*'sequencer'"):
        model_class("nosuch")
    assert model_class("SEQUENCER").__name__ == "SequencerModel"


def test_traces_check_of_a_dataset_without_runs_is_no_pass(tmp_path, monkeypatch):
    # cli/traces.py check: a pipeline result of 0 runs exits 1, not 0 (every run ok and none disagreeing
    # holds vacuously for none)
    from typer.testing import CliRunner
    from groupcheck.cli.main import app
    from groupcheck.conformance.pipeline import stages as pipeline
    (tmp_path / "_runs").mkdir()
    res = {"dataset": str(tmp_path), "engine": "local", "runs": 0, "counts": {}, "disagreements": 0,
           "property_queries": [], "verdicts": [], "coverage": {}, "seconds": 0.0}
    monkeypatch.setattr(pipeline, "check", lambda *a, **k: dict(res))
    r = CliRunner().invoke(app, ["traces", "check", str(tmp_path), "--engine", "local", "--json"])
    assert r.exit_code == 1, r.output
    monkeypatch.setattr(pipeline, "check", lambda *a, **k: {**res, "runs": 1, "counts": {"ok": 1}})
    assert CliRunner().invoke(app, ["traces", "check", str(tmp_path), "--engine", "local", "--json"]).exit_code == 0


def test_a_history_header_line_of_exactly_max_line_characters_is_read_one_more_is_refused():
    # conformance/history.py _first: the bound is inclusive
    import json
    from groupcheck.core.trace.history import FORMAT, MAX_LINE, HistoryError, first_header as _first
    head = {"kind": "header", "format": FORMAT, "run_id": "r", "pad": ""}
    head["pad"] = "x" * (MAX_LINE - len(json.dumps(head)))
    text = json.dumps(head)
    assert len(text) == MAX_LINE
    assert _first("h.ndjson", text)["run_id"] == "r"
    with pytest.raises(HistoryError, match="a line of"):
        _first("h.ndjson", text + " ")


def test_a_run_given_as_a_list_of_unreadable_files_is_rejected_under_their_folder(tmp_path):
    # conformance/replay/conform.py conform_file: a run's per-node files that do not load give one
    # rejected report named after the folder that holds them
    from groupcheck.conformance.replay.conform import conform_file
    files = [tmp_path / "n1.ndjson", tmp_path / "n2.ndjson"]
    for f in files:
        f.write_text("not json\n")
    rep = conform_file([str(f) for f in files])
    assert rep.verdict == "rejected" and rep.file == str(tmp_path)


def test_a_finding_count_is_judged_against_its_own_band_per_kind_of_run():
    # conformance/findings.py out_of_band: each finding's hits among a kind's runs, inside the band
    # its measured rate gives, or one line naming it
    from groupcheck.conformance import findings
    from groupcheck.conformance.replay import registry as protocols
    proto = protocols.get("sequencer")
    f = next(f for f in proto.findings if f.rates.get("coordinator crash"))
    runs = 1000
    # every finding at its measured rate: inside every band
    at_rate = {g.id: round(runs * g.rates["coordinator crash"][0] / g.rates["coordinator crash"][1])
               for g in proto.findings if g.rates.get("coordinator crash")}
    assert findings.out_of_band(proto, {"coordinator crash": {"runs": runs, **at_rate}}) == []
    bad = findings.out_of_band(proto, {"coordinator crash": {"runs": runs, **at_rate, f.id: runs}})
    assert len(bad) == 1 and bad[0].startswith(f"{f.id}: {runs} of {runs} 'coordinator crash' runs, outside [")
    # a finding never measured for a kind of run: any hit is outside [0, 0]
    assert findings.out_of_band(proto, {"no faults": {"runs": 10}}) == []
    assert findings.out_of_band(proto, {"no faults": {"runs": 10, f.id: 1}}) == [
        f"{f.id}: 1 of 10 'no faults' runs, outside [0, 0] (never measured)"]


def test_check_exits_0_only_when_every_model_met_its_expectation(monkeypatch):
    # cli/main.py check: one model whose outcome is not the expected one fails the command
    from types import SimpleNamespace
    from typer.testing import CliRunner
    from groupcheck.cli import main

    def outcome(ok):
        return SimpleNamespace(matches_expectation=ok, to_json=lambda: {"ok": ok},
                               result=SimpleNamespace(counterexample=None, error_message=None, outcome="ok"))
    for oks, code in (([True, True], 0), ([True, False], 1), ([False, False], 1)):
        monkeypatch.setattr(main, "run_checks", lambda entries, workers, quiet, oks=oks, **kw: [outcome(o) for o in oks])
        monkeypatch.setattr(main, "need_java", lambda: None)
        r = CliRunner().invoke(main.app, ["check", "sequencer", "--json"])
        assert r.exit_code == code, (oks, r.output)


def test_proof_matrices_pass_over_checks_without_a_matrix_to_the_prove_checks_after_them():
    # conformance/audit/report.py proof_matrices: a check that is not a proof (or has no matrix) is
    # skipped, not the end of the list
    from groupcheck.conformance.audit.report import Check, proof_matrices
    other = Check("tlc/stable/Fixed", "tlc", "stable", "Fixed", "ok", "ok", True, 1.0)
    empty = Check("prove/stable/Empty", "prove", "stable", "Empty", "proved", "proved", True, 1.0)
    qs = [{"query": "initiation:Inv", "result": "proved", "seconds": 0.5},
          {"query": "consecution:Join:Inv", "result": "proved", "seconds": 0.0, "by_frame": True},
          {"query": "implication:Inv", "result": "cti", "reachable": False},
          {"query": "consecution:Leave:Inv", "result": "unknown"}]
    prove = Check("prove/stable/Fixed", "prove", "stable", "Fixed", "proved", "1 open", False, 1.0,
                  figures={"matrix": qs})
    (m,) = proof_matrices([other, empty, prove])
    assert m["id"] == "prove/stable/Fixed"
    assert m["columns"] == ["initiation", "Join", "Leave", "implication"]
    assert m["rows"] == [{"lemma": "Inv", "cells": ["0.50", "frame", "unknown", "CTI unreachable"]}]


def test_a_message_on_a_channel_the_state_before_did_not_have_is_drawn_as_sent():
    # conformance/audit/diagram.py steps_from_states: the channels of a step are those of either state
    # (the union), so a channel's first message is an arrow
    from groupcheck.conformance.audit.diagram import steps_from_states
    from groupcheck.model.values import Fn
    s0 = {"chan": Fn({(1, 2): ()})}
    s1 = {"chan": Fn({(1, 2): (), (2, 1): ("m",)})}
    init, send = steps_from_states([(None, s0), ("Send", s1)], 2)
    assert [(a.src, a.dst, a.label) for a in send.sends] == [(2, 1, '"m"')] and send.actors == [2]


@pytest.mark.parametrize("limit", [5, 300, 1000])
def test_an_exploration_stops_at_exactly_max_states_above_the_small_int_cache_too(limit):
    # model/core.py _explore: the limit is compared by value (an `is` holds only for ints up to 256)
    from groupcheck.model import manifest
    from groupcheck.model.core import explore
    from groupcheck.model.link import build_model
    (entry,) = manifest.select(["sequencer"], "CoordCrash")
    res = explore(build_model(entry), check_invariants=False, max_states=limit)
    assert not res.complete and res.distinct_states == limit


@pytest.mark.parametrize("nid,token", [(1, False), (2, False), (3, True)])
def test_on_start_the_rings_last_member_founds_it_with_the_token(tmp_path, nid, token):
    # impl/runtime.py Node._command: the founder of the first ring is its last member
    import asyncio
    from groupcheck.impl import runtime
    from groupcheck.impl.raincore import Start
    node = runtime.offline_node(tmp_path, b"pinned-key-0123456789abcdef", protocol="raincoreflush", nid=nid,
                                constants={"N": 3, "MaxCrashes": 0})
    stepped = []
    node._step = stepped.append
    node._workload = lambda: asyncio.sleep(0)
    node._command({}, b'{"cmd": "start"}')
    node.loop.run_until_complete(node.workload)
    assert stepped == [Start(token=token)]
    node.writer.close()
    node.loop.close()
    asyncio.set_event_loop(None)


def test_raincore_runs_are_counted_by_whether_the_founder_crashed():
    # conformance/replay/raincore.py plan_kind: the kind a finding's rate is measured per
    from groupcheck.conformance.replay.raincore import FOUNDER, plan_kind
    other = FOUNDER + 1
    assert plan_kind({"faults": {"crashes": [[FOUNDER, 3.0]]}}) == "founder crash"
    assert plan_kind({"faults": {"crashes": [[other, 3.0]]}}) == "founder stays"
    assert plan_kind({"faults": {}}) == plan_kind({}) == "founder stays"
    assert plan_kind({"faults": {"late_911": True, "crashes": [[FOUNDER, 1.0]]}}) == "late 911s"
    assert plan_kind({"faults": {"kills": [[FOUNDER, 2.5]]}}) == "founder crash"       # a cluster run's kill


def test_a_real_runs_kills_count_as_its_plans_crashes():
    """A cluster run's header says ``kills: [[node, seconds]]``, a JGroups
    run's ``kills: [member]``; the simulator's ``crashes: [[node, time]]``.
    Each is a crash of its plan for the findings' rates (SEQUENCER's
    ``plan_kind``) and for the kinds of fault (``fault_kinds``)."""
    from groupcheck.conformance.replay.sequencer import plan_kind
    from groupcheck.impl.faults import crashed_members, fault_kinds
    assert crashed_members({"crashes": [[2, 1.0]], "kills": [[1, 0.4], 3]}) == {1, 2, 3}
    assert crashed_members({}) == set()
    head = {"nodes": [1, 2, 3]}
    assert plan_kind({**head, "faults": {"kills": [1]}}) == "coordinator crash"          # JGroups's
    assert plan_kind({**head, "faults": {"kills": [[2, 0.4]]}}) == "other crash"         # the cluster's
    assert plan_kind({**head, "faults": {"crashes": [[1, 0.5]]}}) == "coordinator crash"  # the simulator's
    assert plan_kind({**head, "faults": {"kills": []}}) == "no crash"
    assert fault_kinds({"kills": [1]}) >= {"crash:coordinator"} and "crash:none" in fault_kinds({})


def test_a_three_layer_join_names_a_node_outside_the_ring_up_to_the_last():
    # conformance/replay/raincoresequencerflush.py fault_plan: ring < joiner <= n
    from groupcheck.conformance.replay.raincoresequencerflush import fault_plan
    plan = fault_plan("join=4@100", 0, {"ring": 3, "nodes": 4})
    assert [j for j, _ in plan.joins] == [4]
    for bad in ("join=3@100", "join=5@100"):
        with pytest.raises(ValueError, match="a joiner is a node outside the ring 1..3, up to 4"):
            fault_plan(bad, 0, {"ring": 3, "nodes": 4})


def test_a_link_check_holds_only_when_the_graphs_are_equal():
    # conformance/audit/stages.py _link_check_of: graphs that differ (False) or were not compared (None)
    # are not as expected
    from types import SimpleNamespace
    from groupcheck.conformance.audit.stages import _link_check_of
    entry = SimpleNamespace(protocol="stable", name="Fixed")
    r = SimpleNamespace(graphs_equal=True, distinct_states=1, tlc_distinct_states=1, seconds=0.0, tlc_seconds=None,
                        tlc_outcome="ok", first_difference=None)
    assert _link_check_of(entry, r, 0.0).as_expected
    for eq, seen in ((False, "graphs differ"), (None, "TLC error")):
        c = _link_check_of(entry, SimpleNamespace(**{**vars(r), "graphs_equal": eq, "tlc_outcome": "error",
                                                     "first_difference": "x"}), 0.0)
        assert not c.as_expected and c.observed == seen
