"""The one fault grammar (impl/faults.py): what it reads, and one message
naming the item it refuses, for every protocol and the cluster's --kill."""

import pytest

from groupcheck.conformance.replay import registry as protocols
from groupcheck.impl.faults import FaultPlan, node_at, parse_faults


def test_every_item_lands_in_the_one_plan():
    p = parse_faults("loss=0.1,dup=0.05,reorder=3,crash=1@20,crash=2@40,recover=1@60,join=4@5,"
                     "leave=3@7,tokenloss=50")
    assert (p.loss, p.duplicate, p.reorder_window) == (0.1, 0.05, 0.003)
    assert p.crashes == ((1, 0.02), (2, 0.04)) and p.recoveries == ((1, 0.06),)
    assert p.joins == ((4, 0.005),) and p.leaves == ((3, 0.007),) and p.token_losses == (0.05,)
    assert p.last == 0.06 and parse_faults("") == FaultPlan()
    q = parse_faults("truncate=0.2,late911=300")
    assert (q.truncate, q.late_911) == (0.2, 0.3) and q.to_json()["truncate"] == 0.2


def test_plus_adds_the_actions_and_sets_the_values_given():
    drawn = parse_faults("loss=0.1,dup=0.05,crash=2@10,tokenloss=5")
    p = drawn.plus(parse_faults("truncate=0.1,tokenloss=50,crash=1@20"))
    assert (p.loss, p.duplicate, p.truncate) == (0.1, 0.05, 0.1)
    assert p.crashes == ((2, 0.01), (1, 0.02)) and p.token_losses == (0.005, 0.05)
    assert drawn.plus(FaultPlan()) == drawn


@pytest.mark.parametrize("text, message", [
    ("crash=banana", "crash=banana: expected NODE@TIME"),
    ("crash=2", "crash=2: expected NODE@TIME"),
    ("join=0@5", "join=0@5: expected NODE@TIME"),
    ("crash=1@-5", "crash=1@-5: expected NODE@TIME"),
    ("loss=1", "loss=1: expected loss=P"),
    ("dup=x", "dup=x: expected dup=P"),
    ("reorder=-1", "reorder=-1: expected reorder=MS"),
    ("truncate=1.5", "truncate=1.5: expected truncate=P"),
    ("late911=-3", "late911=-3: expected late911=MS"),
    ("jitter=3", "jitter=3: expected KEY=VALUE"),
    ("loss", "loss: expected KEY=VALUE"),
])
def test_a_bad_item_is_named(text, message):
    with pytest.raises(ValueError, match=message):
        parse_faults(text)


@pytest.mark.parametrize("protocol, text", [
    ("sequencer", "join=4@5"), ("stable", "tokenloss=5"), ("flush", "recover=1@5"),
    ("sequencerflush", "leave=2@5"), ("raincore", "loss=0.1"), ("raincoreflush", "recover=1@5"),
    ("raincoresequencerflush", "leave=2@5"), ("raincore", "truncate=0.1"), ("flush", "late911=5"),
    ("raincoreflush", "late911=5"),
])
def test_each_protocol_refuses_what_its_environment_lacks(protocol, text):
    with pytest.raises(ValueError, match=f"{text}: .*no such fault"):
        protocols.get(protocol).simulate(0, text, {})


def test_the_clusters_kill_reads_node_at_time_in_seconds():
    assert node_at("--kill 2@1.5", "2@1.5", unit=1.0) == (2, 1.5)
    with pytest.raises(ValueError, match="--kill 2@soon: expected NODE@TIME"):
        node_at("--kill 2@soon", "2@soon", unit=1.0)


@pytest.mark.parametrize("command, text", [
    (["simulate", "sequencer"], "crash=banana"), (["simulate", "sequencer"], "join=4@5"),
    (["traces", "generate", "sequencer", "--engine", "local"], "crash=banana"),
])
def test_a_bad_plan_is_refused_before_any_output(tmp_path, command, text):
    from typer.testing import CliRunner
    from groupcheck.cli.main import app
    r = CliRunner().invoke(app, command + ["--faults", text, "--out", str(tmp_path / "out")])
    assert r.exit_code == 2 and f"{text}: " in r.output
    assert not (tmp_path / "out").exists()


def test_auto_is_read_once_and_drawn_by_the_protocols_hook():
    """``auto`` and ``auto,ITEMS`` are the grammar's: the hook draws, the
    items are added to the drawn plan; without a hook ``auto`` is refused."""
    drawn = FaultPlan(crashes=((2, 0.01),), loss=0.1)
    assert parse_faults("auto", draw=lambda: drawn) == drawn
    p = parse_faults("auto,crash=1@20,truncate=0.1", draw=lambda: drawn)
    assert p.crashes == ((2, 0.01), (1, 0.02)) and (p.loss, p.truncate) == (0.1, 0.1)
    with pytest.raises(ValueError, match="auto: sequencer draws no fault plan; write its items"):
        parse_faults("auto", ("loss", "crash"), "sequencer")
    with pytest.raises(ValueError, match="join=4@5: sequencer has no such fault"):
        parse_faults("auto,join=4@5", ("loss", "crash"), "sequencer", draw=lambda: drawn)
    assert parse_faults(drawn, ("loss",)) is drawn           # a plan parsed before passes as it is


def test_one_parse_faults_in_the_code():
    """One function of that name, in impl/faults.py; every protocol reads
    its fault text through its registry's ``fault_plan``."""
    import ast
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    defs = [str(f.relative_to(root)) for d in ("core", "impl", "conformance", "cli", "model") for f in (root / d).rglob("*.py")
            for node in ast.walk(ast.parse(f.read_text(encoding="utf-8")))
            if isinstance(node, ast.FunctionDef) and node.name == "parse_faults"]
    assert defs == ["impl/faults.py"]
    for name in protocols.REGISTERED:
        assert protocols.get(name).fault_plan is not None, name


@pytest.mark.parametrize("protocol", sorted(protocols.REGISTERED))
def test_the_cli_hands_the_parsed_plan_to_the_simulator(tmp_path, monkeypatch, protocol):
    """`simulate` reads the text once per run with the protocol's grammar
    and gives the simulator the plan, not the text again."""
    from typer.testing import CliRunner
    from groupcheck.cli.main import app
    proto = protocols.get(protocol)
    seen = []
    real = proto.simulate

    def spy(seed, faults, opts):
        seen.append(faults)
        return real(seed, faults, opts)
    import dataclasses
    spied = dataclasses.replace(proto, simulate=spy)
    monkeypatch.setattr(protocols, "get", lambda name: spied)
    r = CliRunner().invoke(app, ["simulate", protocol, "--faults", proto.campaign_faults, "--runs", "2",
                                 "--out", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    assert len(seen) == 2 and all(isinstance(f, FaultPlan) for f in seen)
    assert seen == [proto.fault_plan(proto.campaign_faults, s, proto.default_options) for s in (0, 1)]
