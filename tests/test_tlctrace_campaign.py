"""Issue 12's acceptance: ``groupcheck conform DIR --checker both --json`` on
20 drawn campaign runs of every protocol (sizes and faults drawn from each
seed, as the audit draws them) reports TLC and the model replay in agreement
on every run, and TLC accepting every run whose steps the replay accepts.
Slow: about 100 TLC runs."""
from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from groupcheck.cli.main import app
from groupcheck.conformance import protocols, tlctrace
from groupcheck.impl import tracefile

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("java") is None, reason="TLC needs java")]

RUNS = 20


@pytest.mark.parametrize("name", tlctrace.supported_protocols())
def test_twenty_drawn_runs_agree_under_both_checkers(tmp_path, name):
    proto = protocols.get(name)
    for seed in range(1, RUNS + 1):
        faults, options = proto.draw(seed) if proto.draw else (proto.campaign_faults, {})
        records, line = proto.simulate(seed, faults, {**proto.default_options, **options})
        tracefile.write(tmp_path / f"{line['run_id']}.ndjson", records)
    r = CliRunner().invoke(app, ["conform", str(tmp_path), "--checker", "both", "--json"])
    rows = json.loads(r.stdout)
    assert len(rows) == RUNS
    disagree = [(x["run_id"], x.get("tlc", {}).get("first_unmatched"), x.get("model")) for x in rows
                if x.get("agree") is not True]
    assert not disagree, disagree
    # simulated runs conform step by step: both checkers accept every one
    assert all(x["tlc"]["ok"] and x["model"]["stops_conforming_at"] is None for x in rows)
