"""``groupcheck conform DIR --checker both --json`` on 20 drawn campaign runs
of every protocol (sizes and faults drawn from each seed, as the audit draws
them) reports TLC and the model replay in agreement on every run, and TLC
accepting every run whose steps the replay accepts; the audit's own draws
of the ring and of STABLE, checked one by one.  Slow: about 100 TLC runs."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from groupcheck.cli.main import app
from groupcheck.conformance import tlctrace
from groupcheck.conformance.replay import registry as protocols
from groupcheck.core.trace import writer as tracefile
from tlctrace_helpers import NEEDS_JAVA, both

pytestmark = [pytest.mark.slow, NEEDS_JAVA]

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


# the audit's draws: a ring of 3 or 4 and one node outside, a fault plan from
# the seed; 3-4 STABLE members, 1-3 multicasts, a join in two of three
@pytest.mark.parametrize("name, first", [("raincore", 400), ("stable", 200)])
def test_drawn_audit_runs_agree(tmp_path, name, first):
    proto = protocols.get(name)
    for seed in range(first, first + 6):
        faults, opts = proto.draw(seed)
        records, _ = proto.simulate(seed, faults, opts)
        v, m = both(tmp_path, records, f"draw{seed}")
        assert v.ok, (seed, v.explain())
        assert m["verdict"] != "nonconforming", (seed, m)
