"""Decisions that the mutation sample of bench/mutants.py found no default
test pinning (docs/mutants.md, "Survivors"): each test here fails with the
mutant it names applied."""

import pytest


def test_a_checks_figures_in_words_skip_the_empty_and_structured_ones_and_keep_going():
    # conformance/report.py figures_text: a None, False, dict or list figure is
    # skipped, and the figures after it are still said (a `break` there drops them)
    from groupcheck.conformance.report import Check, figures_text
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
    from groupcheck.conformance import pipeline
    (tmp_path / "_runs").mkdir()
    res = {"dataset": str(tmp_path), "engine": "local", "runs": 0, "counts": {}, "disagreements": 0,
           "property_queries": [], "verdicts": [], "coverage": {}, "seconds": 0.0}
    monkeypatch.setattr(pipeline, "check", lambda *a, **k: dict(res))
    r = CliRunner().invoke(app, ["traces", "check", str(tmp_path), "--engine", "local", "--json"])
    assert r.exit_code == 1, r.output
    monkeypatch.setattr(pipeline, "check", lambda *a, **k: {**res, "runs": 1, "counts": {"ok": 1}})
    assert CliRunner().invoke(app, ["traces", "check", str(tmp_path), "--engine", "local", "--json"]).exit_code == 0
