"""Commands take each other's output folders: a folder written by
``simulate --history`` (traces beside a ``history/`` folder, as ``cluster
run`` writes them) is given whole to ``conform``, which checks the traces and
says which history files it left to ``groupcheck history``."""
from __future__ import annotations

import json

from typer.testing import CliRunner

from groupcheck.cli.main import app


def test_conform_takes_a_folder_with_histories_and_names_what_it_skipped(tmp_path):
    out = tmp_path / "run"
    r = CliRunner().invoke(app, ["simulate", "sequencer", "--runs", "2", "--messages", "3",
                                 "--history", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert len(list((out / "history").glob("*.ndjson"))) == 2
    r = CliRunner().invoke(app, ["conform", str(out), "--json"])
    assert r.exit_code == 0, r.stdout + r.stderr
    rows = json.loads(r.stdout)
    assert len(rows) == 2 and all(row["verdict"] == "ok" for row in rows)
    assert "skipped 2 history file(s)" in r.stderr and "groupcheck history" in r.stderr


def test_a_history_named_explicitly_is_still_rejected_with_its_reason(tmp_path):
    out = tmp_path / "run"
    CliRunner().invoke(app, ["simulate", "sequencer", "--messages", "2", "--history", "--out", str(out)])
    [h] = list((out / "history").glob("*.ndjson"))
    r = CliRunner().invoke(app, ["conform", str(h)])
    assert r.exit_code != 0


def test_traces_check_refuses_a_wrong_folder_before_spark_starts(tmp_path):
    r = CliRunner().invoke(app, ["traces", "check", str(tmp_path / "nope")])
    assert r.exit_code == 2 and "no such folder" in r.output
    out = tmp_path / "run"
    CliRunner().invoke(app, ["simulate", "sequencer", "--messages", "2", "--out", str(out)])
    r = CliRunner().invoke(app, ["traces", "check", str(out)])
    assert r.exit_code == 2 and "not a pipeline dataset" in r.output and "groupcheck conform" in r.output
