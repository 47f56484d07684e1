"""Output folders never lose or mix data (cli/render.py ``out_dir``): a
non-empty folder is refused unless --force (replaced whole) or --append
(runs added by the same command with the same parameters); nothing is
written before the arguments and inputs are validated."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from groupcheck.cli.main import app


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _files(p):
    return sorted(str(f.relative_to(p)) for f in p.rglob("*") if f.is_file() and not f.name.startswith("."))


def test_simulate_refuses_a_folder_with_runs_and_keeps_them(tmp_path):
    out = tmp_path / "dup"
    assert _run("simulate", "sequencer", "--runs", "3", "--out", out).exit_code == 0
    before = {f: (out / f).read_bytes() for f in _files(out)}
    r = _run("simulate", "sequencer", "--runs", "2", "--faults", "loss=0.2", "--out", out)
    assert r.exit_code == 2 and "not empty" in r.output and "--force" in r.output and "--append" in r.output
    assert {f: (out / f).read_bytes() for f in _files(out)} == before


def test_simulate_append_adds_runs_of_the_same_parameters_only(tmp_path):
    out = tmp_path / "a"
    assert _run("simulate", "sequencer", "--runs", "2", "--out", out).exit_code == 0
    before = {f: (out / f).read_bytes() for f in _files(out)}
    r = _run("simulate", "sequencer", "--runs", "2", "--seed", "1", "--append", "--out", out)
    assert r.exit_code == 2 and "seed 1" in r.output, r.output          # s1 is there: never overwritten
    r = _run("simulate", "sequencer", "--runs", "2", "--nodes", "4", "--seed", "5", "--append", "--out", out)
    assert r.exit_code == 2 and "--append needs the parameters" in r.output, r.output
    r = _run("simulate", "flush", "--runs", "1", "--seed", "5", "--append", "--out", out)
    assert r.exit_code == 2, r.output
    assert {f: (out / f).read_bytes() for f in _files(out)} == before
    r = _run("simulate", "sequencer", "--runs", "2", "--seed", "2", "--append", "--out", out)
    assert r.exit_code == 0, r.output
    assert len(_files(out)) == 4 and all((out / f).read_bytes() == b for f, b in before.items())


def test_simulate_force_replaces_the_folder_whole(tmp_path):
    out = tmp_path / "f"
    assert _run("simulate", "sequencer", "--runs", "3", "--out", out).exit_code == 0
    r = _run("simulate", "sequencer", "--runs", "1", "--seed", "7", "--force", "--out", out)
    assert r.exit_code == 0, r.output
    assert _files(out) == ["sequencer-n3-m2-s7.ndjson"]           # no run of the earlier campaign left beside it


def test_traces_generate_refuses_another_dataset(tmp_path):
    ds = tmp_path / "ds"
    assert _run("traces", "generate", "flush", "--runs", "2", "--engine", "local", "--out", ds).exit_code == 0
    before = {f: (ds / f).read_bytes() for f in _files(ds)}
    assert "flush" in (ds / "_pipeline.json").read_text()
    r = _run("traces", "generate", "sequencer", "--runs", "2", "--engine", "local", "--out", ds)
    assert r.exit_code == 2 and "not empty" in r.output and "traces generate" in r.output, r.output
    assert {f: (ds / f).read_bytes() for f in _files(ds)} == before
    r = _run("traces", "generate", "sequencer", "--runs", "2", "--engine", "local", "--force", "--out", ds)
    assert r.exit_code == 0, r.output
    assert "flush" not in (ds / "_pipeline.json").read_text()      # the FLUSH dataset replaced whole


def test_a_foreign_folder_is_refused_by_every_writer(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    for args in (["simulate", "sequencer"], ["traces", "generate", "sequencer", "--runs", "1", "--engine", "local"],
                 ["audit", "--stage", "tlc", "--protocol", "stable"]):
        r = _run(*args, "--out", mine)
        assert r.exit_code == 2 and "not made by groupcheck" in r.output, (args, r.output)
    assert _files(mine) == ["notes.txt"] and (mine / "notes.txt").read_text() == "keep me"


def test_audit_from_a_missing_summary_leaves_no_folder(tmp_path):
    r = _run("audit", "--from", tmp_path / "nosuch.json", "--out", tmp_path / "z4")
    assert r.exit_code == 2 and not (tmp_path / "z4").exists(), r.output


def test_an_earlier_audits_folder_is_rewritten_whole(tmp_path):
    """A re-render (--from) into the folder of an earlier audit replaces it:
    no file of the earlier one is left beside the new report."""
    src = tmp_path / "summary.json"
    src.write_text(json.dumps({"checks": []}))
    out = tmp_path / "audit"
    r = _run("audit", "--from", src, "--out", out)
    assert r.exit_code == 0 and (out / "summary.json").exists(), r.output
    (out / "stale.txt").write_text("from before")
    r = _run("audit", "--from", src, "--out", out)
    assert r.exit_code == 0 and not (out / "stale.txt").exists() and (out / "report.html").exists(), r.output


def test_errors_point_at_the_command_or_option_that_does_it(tmp_path):
    r = _run("cluster", "run", "--protocol", "flush", "--out", tmp_path / "c")
    assert r.exit_code == 2 and "--membership raincore" in r.output and "--protocol raincoreflush" in r.output
    assert not (tmp_path / "c").exists()
    assert _run("traces", "generate", "sequencer", "--runs", "1", "--engine", "local", "--out",
                tmp_path / "ds").exit_code == 0
    r = _run("conform", tmp_path / "ds")
    assert r.exit_code == 2 and f"groupcheck traces check {tmp_path / 'ds'}" in r.output, r.output
