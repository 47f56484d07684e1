"""One error and exit-code rule for every command (README "Exit codes",
cli/findings.py): a bad invocation of any command is exit 2 with one
``error:`` line, no traceback and no output folder; documented findings are
exit 0 and ``--known``/``--no-known``/``--expect`` demand or forbid them on
every checking command; an unexpected failure is one line naming the file
that holds its traceback."""

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import typer

from cli_helpers import gc, main_in_process

BAD = '{"bad json\n'

# (arguments, a word the error line must name); X and A are output folders
# that must not be created
BAD_INVOCATIONS = [
    (["check", "sequencer", "--model", "Nope"], "Nope"),
    (["check", "--workers", "0"], "--workers"),
    (["check", "nosuch/dir"], "nosuch/dir"),
    (["explore", "nope"], "nope"),
    (["explore", "sequencer", "--processes", "0"], "--processes"),
    (["prove", "nope"], "nope"),
    (["prove", "stable", "--members", "0"], "--members"),
    (["audit", "--stage", "nope", "--out", "A"], "--stage"),
    (["audit", "--runs", "0", "--out", "A"], "--runs"),
    (["simulate", "nope", "--out", "X"], "nope"),
    (["simulate", "sequencer", "--faults", "crash=banana", "--out", "X"], "crash=banana"),
    (["simulate", "raincore", "--messages", "3", "--out", "X"], "--messages"),   # never silently ignored
    (["simulate", "sequencer", "--option", "nodez=3", "--out", "X"], "nodez"),
    (["simulate"], "PROTOCOL"),
    (["simulate", "sequencer", "--bogus"], "--bogus"),
    (["bogus"], "bogus"),
    (["conform", "missing"], "missing"),
    (["conform", "bad.ndjson"], "malformed"),              # a malformed trace is an input error
    (["conform", "--checker", "nope", "bad.ndjson"], "--checker"),
    (["conform", "--engine", "nope", "bad.ndjson"], "--engine"),
    (["history", "missing"], "missing"),
    (["history", "bad.ndjson"], "bad.ndjson:1"),            # so is a malformed history
    (["history", "--engine", "nope", "bad.ndjson"], "--engine"),
    (["history", "bad.ndjson", "--protocol", "nope"], "--protocol"),
    (["traces", "generate", "nope", "--out", "X", "--engine", "local"], "nope"),
    (["traces", "generate", "sequencer", "--faults", "crash=banana", "--out", "X", "--engine", "local"], "banana"),
    (["traces", "ingest", "missing", "--out", "X", "--engine", "local"], "missing"),
    (["traces", "check", "missing"], "missing"),
    (["cluster", "run", "--protocol", "sequencer", "--out", "/proc/x"], "--out"),
    (["cluster", "run", "--protocol", "nope", "--out", "X"], "nope"),
    (["cluster", "run", "--protocol", "sequencer", "--rate", "-1", "--out", "X"], "--rate"),
    (["cluster", "run", "--protocol", "sequencer", "--kill", "banana", "--out", "X"], "banana"),
    (["cluster", "run", "--protocol", "sequencer", "--senders", "a", "--out", "X"], "--senders"),
    (["cluster", "run", "--protocol", "sequencer", "--key-file", "missing", "--out", "X"], "--key-file"),
    (["cluster", "run", "--protocol", "sequencer", "--checker", "nope", "--out", "X"], "--checker"),
    (["cluster", "up", "--protocol", "sequencer", "--out", "/proc/x"], "--out"),
    (["cluster", "up", "--protocol", "nope", "--out", "X"], "nope"),
    (["cluster", "down", "missing"], "missing"),
    (["cluster", "kill", "missing", "1"], "missing"),
    (["jgroups", "run", "--stack", "nope", "--out", "X"], "--stack"),
    (["jgroups", "run", "--stack", "sequencer", "--kill", "banana", "--out", "X"], "banana"),
]


@pytest.mark.parametrize("args, needle", BAD_INVOCATIONS, ids=[" ".join(a) for a, _ in BAD_INVOCATIONS])
def test_a_bad_invocation_is_exit_2_one_error_line_and_no_output(args, needle, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.ndjson").write_text(BAD)
    code, out, err = main_in_process(*args, capsys=capsys)
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], err
    assert "Traceback" not in out + err
    assert not (tmp_path / "X").exists() and not (tmp_path / "A").exists()


@pytest.mark.parametrize("args", [["cluster", "up", "--protocol", "sequencer", "--out", "/proc/x"],
                                  ["cluster", "run", "--protocol", "sequencer", "--rate", "-1", "--out", "x"]])
def test_the_real_command_line_too(args):
    p = gc(*args)
    assert p.returncode == 2 and "Traceback" not in p.stdout + p.stderr
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("error: ")


def test_an_unexpected_failure_is_one_line_naming_its_log(monkeypatch, capsys):
    from groupcheck.conformance.replay import registry as protocols

    def broken(name):
        raise RuntimeError("boom\nsecond line")
    monkeypatch.setattr(protocols, "get", broken)
    code, out, err = main_in_process("simulate", "sequencer", capsys=capsys)
    assert code == 1 and "Traceback" not in out + err
    (line,) = err.strip().splitlines()
    assert "RuntimeError: boom" in line
    log = Path(line.rsplit(" ", 1)[1].rstrip(")"))
    try:
        text = log.read_text()
        assert "Traceback" in text and "second line" in text and "groupcheck simulate sequencer" in text
    finally:
        log.unlink()


def test_a_run_that_ends_at_its_horizon_says_why(tmp_path, capsys):
    code, out, err = main_in_process("simulate", "raincoreflush", "--messages", "5", "--option", "horizon=0.02",
                                     "--out", str(tmp_path), "--json", capsys=capsys)
    (row,) = json.loads(out)
    assert code == 0 and row["settled"] is False
    assert "not quiescent" in err and "--option horizon=SECONDS" in err


def _crash_runs(path: Path, history: bool = False, runs: int = 12):
    from groupcheck.conformance.replay import registry as protocols
    from groupcheck.conformance.history import from_trace
    from groupcheck.core.trace import writer as tracefile
    proto = protocols.get("sequencer")
    for seed in range(runs):      # the coordinator crash under loss (docs/sequencer.md's findings)
        records, line = proto.simulate(seed, "crash=1@15,loss=0.2", dict(proto.default_options))
        tracefile.write(path / f"{line['run_id']}.ndjson", from_trace(records) if history else records)


def test_history_known_and_expect(tmp_path, capsys):
    _crash_runs(tmp_path, history=True)
    code, out, err = main_in_process("history", str(tmp_path), "--json", capsys=capsys)
    found = sorted({v["check"] for r in json.loads(out) for v in r["violations"]})
    assert "TotalOrder" in found
    code, out, _ = main_in_process("history", str(tmp_path), capsys=capsys)
    # a history alone shows no finding's witness: its violations are never taken for one
    assert code == 1 and "(documented finding)" not in out
    expect = [a for c in found for a in ("--expect", c)]
    assert main_in_process("history", str(tmp_path), *expect, capsys=capsys)[0] == 0
    assert main_in_process("history", str(tmp_path), *expect, "--no-known", capsys=capsys)[0] == 0
    code, _, err = main_in_process("history", str(tmp_path), *expect, "--expect", "Integrity", capsys=capsys)
    assert code == 1 and "--expect Integrity: no run violates Integrity" in err


def _cluster_result(verdict: str, reason, history=(), finding=None, violations=()):
    from groupcheck.conformance.cluster import Result
    r = Result("run", "sequencer-n3", True, [1], verdict, reason, list(history), {2: 10, 3: 10}, 1.0,
               finding=finding, violations=list(violations))
    return json.loads(json.dumps(r.to_json()))      # as `cluster down` reads it back


@pytest.mark.parametrize("flags, code", [([], 0), (["--known"], 0), (["--no-known"], 1),
                                         (["--expect", "Agreement"], 1)])
def test_cluster_report_documented_finding(flags, code, capsys):
    """Plain SEQUENCER, the coordinator killed: TotalOrder broken, a documented finding."""
    from groupcheck.cli import cluster
    from groupcheck.cli.findings import Gate
    r = _cluster_result("documented", "TotalOrder: member 2 delivered 3.1 before 2.1",
                        [{"check": "TotalOrder", "text": "member 2 delivered 3.1 before 2.1",
                          "finding": "sequencer/coordinator-crash-order"}],
                        finding="sequencer/coordinator-crash-order",
                        violations=[{"property": "TotalOrder", "event": 7, "witness": "member 2 delivered 3.1 before 2.1",
                                     "finding": "sequencer/coordinator-crash-order", "finding_why": "straddles"}])
    known = {"--known": True, "--no-known": False}.get(flags[0]) if flags else None
    with pytest.raises(typer.Exit) as e:
        cluster._report(r, "sequencer", Path("run"), False, Gate(flags[1:] if flags[:1] == ["--expect"] else [],
                                                                   known))
    assert e.value.exit_code == code
    out = capsys.readouterr().out
    assert "{2: 10, 3: 10}" in out            # member numbers as `run` prints them, after a JSON round trip
    assert ("(documented finding)" in out) == (flags != ["--no-known"])


def test_cluster_report_other_violation_and_clean_run(capsys):
    from groupcheck.cli import cluster
    from groupcheck.cli.findings import Gate
    with pytest.raises(typer.Exit) as e:       # the documented property, but not in a finding's shape
        cluster._report(_cluster_result("violation", "TotalOrder: member 2 delivered 3.1 before 2.1",
                                        [{"check": "TotalOrder", "text": "member 2 delivered 3.1 before 2.1"}]),
                        "sequencer", Path("run"), False, Gate())
    assert e.value.exit_code == 1 and "(documented finding)" not in capsys.readouterr().out
    with pytest.raises(typer.Exit) as e:
        cluster._report(_cluster_result("violation", "Agreement: survivor 3 delivered 1.1"), "sequencer",
                        Path("run"), False, Gate())
    assert e.value.exit_code == 1
    with pytest.raises(typer.Exit) as e:       # --known demands a documented finding a clean run lacks
        cluster._report(_cluster_result("ok", None), "sequencer", Path("run"), False, Gate([], True))
    assert e.value.exit_code == 1
    assert "--known: no run reproduces a documented finding" in capsys.readouterr().err


def test_check_table_is_readable_at_80_columns():
    from rich.console import Console
    from groupcheck.cli.render import check_table
    rows = [{"protocol": "sequencerflush", "model": "CoordCrashNoFlush", "expected": "SurvivorTotalOrder",
             "violated": "SurvivorTotalOrder", "result": "violation", "distinct_states": 1234567,
             "expected_distinct_states": 1234000, "depth": 27, "seconds": 123.4, "matches_expectation": True},
            {"protocol": "stable", "model": "Rounds4", "expected": "ok", "violated": None, "result": "ok",
             "distinct_states": 12345, "expected_distinct_states": 12345, "depth": 12, "seconds": 3.2,
             "matches_expectation": False}]
    c = Console(width=80, record=True)
    c.print(check_table(rows))
    text = c.export_text()
    assert "…" not in text and max(map(len, text.splitlines())) <= 80
    for word in ("UNEXPECTED", "violation", "1,234,567", "1,234,000", "pinned"):
        assert word in text


@pytest.mark.parametrize("command", [["simulate"], ["conform"], ["cluster", "run"], ["traces", "generate"]])
def test_help_options_have_no_type_clutter(command, capsys):
    code, out, _ = main_in_process(*command, "--help", capsys=capsys)
    options = [ln for ln in out.splitlines() if ln.lstrip().startswith("--")]
    assert code == 0 and any(ln.lstrip().startswith("--json ") for ln in options)
    assert not [ln for ln in options if "<" in ln.split("  ")[1 if ln.startswith("  ") else 0]], options


COMMANDS = [["check"], ["explore"], ["simulate"], ["conform"], ["history"], ["prove"], ["audit"],
            ["traces", "generate"], ["traces", "ingest"], ["traces", "check"], ["cluster", "run"],
            ["cluster", "up"], ["cluster", "kill"], ["cluster", "down"], ["jgroups", "run"]]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_arguments_have_no_type_clutter(command, capsys):
    code, out, _ = main_in_process(*command, "--help", capsys=capsys)
    names = [ln.strip().split("  ")[0] for ln in out.splitlines() if ln.startswith("  ") and ln.strip()[:1].isupper()
             or ln.lstrip().startswith("--")]
    assert code == 0 and names and not [n for n in names if "<" in n], names


def test_the_license_is_an_spdx_expression():
    """A TOML table there makes setuptools print a deprecation banner on every install."""
    import tomllib
    meta = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert isinstance(meta["project"]["license"], str)
    assert any(r.startswith("setuptools>=") and int(r.split(">=")[1].split(".")[0]) >= 77
               for r in meta["build-system"]["requires"])


def _spark_log(stderr: str) -> Path:
    (line,) = [ln for ln in stderr.splitlines() if ln.startswith("Spark's own messages: ")]
    return Path(line.split(": ", 1)[1])


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("java") is None, reason="needs java for Spark")
def test_spark_noise_goes_to_a_log_file_named_on_stderr(tmp_path):
    p = gc("traces", "generate", "sequencer", "--runs", "1", "--out", str(tmp_path / "ds"))
    assert p.returncode == 0, p.stderr
    log = _spark_log(p.stderr)
    assert log.is_file()
    assert "WARNING" not in p.stderr and "incubator" not in p.stderr
    log.unlink()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("java") is None, reason="needs java for Spark")
def test_ctrl_c_in_the_audits_spark_stage_is_quiet_and_removes_the_partial_traces(tmp_path):
    out = tmp_path / "au"
    proc = subprocess.Popen([sys.executable, "-m", "groupcheck.cli.main", "audit", "--stage", "conformance",
                             "--protocol", "sequencer", "--runs", "400", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and not (out / "traces").exists() and proc.poll() is None:
        time.sleep(0.2)
    assert (out / "traces").exists(), "the Spark stage never started"
    time.sleep(2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGINT, err
    assert "Traceback" not in err and "interrupted (SIGINT)" in err
    assert len(err.splitlines()) <= 6, err
    assert not (out / "traces").exists()
    _spark_log(err).unlink()


@pytest.mark.parametrize("expect, code", [([], 1), (["TotalOrder"], 0)])
def test_jgroups_black_box_violation_is_no_finding_unless_expected(expect, code, capsys):
    """JGroups's SEQUENCER with its coordinator killed: its history shows no
    finding's witness, so TotalOrder is unexpected unless --expect'ed."""
    from groupcheck.cli import jgroups
    from groupcheck.cli.findings import Gate
    v = {"check": "TotalOrder", "text": "member 2 delivered 3.1 before 2.1"}
    r = {"run_id": "jg", "stack": "sequencer", "out": "jg", "killed": [1], "failed": [], "seconds": 1.0,
         "history": {"verdict": "violation", "violations": [v], "events": 10, "delivered": 4, "not_promised": []},
         "trace": None, "agree": None}
    with pytest.raises(typer.Exit) as e:
        jgroups._report(r, False, Gate(expect, None))
    assert e.value.exit_code == code
    assert "(documented finding)" not in capsys.readouterr().out


@pytest.mark.parametrize("allow, expect, seen, code", [
    (["Agreement"], ["SenderFIFO"], ["SenderFIFO"], 0),                 # allowed, not there: nothing demanded
    (["Agreement"], ["SenderFIFO"], ["SenderFIFO", "Agreement"], 0),    # allowed and there: accepted
    ([], ["SenderFIFO"], ["SenderFIFO", "Agreement"], 1),               # not allowed: unexpected
    (["Agreement"], [], ["Agreement"], 0),
    (["Agreement"], ["SenderFIFO"], ["Agreement"], 1),                  # the expected one missing
])
def test_allow_accepts_a_violation_where_it_occurs_and_demands_none(allow, expect, seen, code, capsys):
    """JGroups's SEQUENCER after a coordinator kill breaks SenderFIFO in every
    run and Agreement in some (docs/jgroups.md): --expect demands the first,
    --allow accepts the second without demanding it."""
    from groupcheck.cli import jgroups
    from groupcheck.cli.findings import Gate
    vs = [{"check": c, "text": f"{c} broken"} for c in seen]
    r = {"run_id": "jg", "stack": "sequencer", "out": "jg", "killed": [1], "failed": [], "seconds": 1.0,
         "history": {"verdict": "violation", "violations": vs, "events": 10, "delivered": 4, "not_promised": []},
         "trace": None, "agree": None}
    with pytest.raises(typer.Exit) as e:
        jgroups._report(r, False, Gate(expect, None, allow))
    assert e.value.exit_code == code
    out = capsys.readouterr().out
    if code == 0:
        assert all(f"{c} (expected)" in out for c in seen)


def test_prove_table_is_readable_at_80_columns(monkeypatch):
    from rich.console import Console
    from typer.testing import CliRunner
    from groupcheck.cli import main
    shown = Console(width=80, record=True)
    monkeypatch.setattr(main, "console", lambda stderr=False: Console(width=80, stderr=True) if stderr else shown)
    r = CliRunner().invoke(main.app, ["prove", "stable", "--variant", "JoinRace"])
    assert r.exit_code == 0, r.output
    text = shown.export_text().split("stable/JoinRace (N=2):")[0]      # the table, before the summary lines
    assert "…" not in text and max(map(len, text.splitlines())) <= 80
    assert "stable/JoinRace" in text and "proved" in text


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("java") is None, reason="needs java for TLC")
def test_conform_checker_both_judges_documented_findings_by_the_same_rule(tmp_path, capsys):
    _crash_runs(tmp_path)
    code, out, _ = main_in_process("conform", str(tmp_path), "--json", capsys=capsys)
    bad = [r for r in json.loads(out) if r["verdict"] == "documented" and r["reason"].startswith("TotalOrder")]
    assert bad, "no seed broke TotalOrder"
    for f in tmp_path.glob("*.ndjson"):
        if f.name != Path(bad[0]["file"]).name:
            f.unlink()
    code, out, _ = main_in_process("conform", str(tmp_path), "--checker", "both", capsys=capsys)
    assert code == 0 and "documented (documented finding)" in out
    assert main_in_process("conform", str(tmp_path), "--checker", "both", "--no-known", capsys=capsys)[0] == 1


def test_the_suite_fails_a_cli_run_that_prints_a_traceback():
    """tests/conftest.py and tests/cli_helpers.py apply this to every CLI run of the suite."""
    from cli_helpers import no_traceback
    no_traceback("x", "error: one line", b"fine")
    with pytest.raises(AssertionError, match="traceback"):
        no_traceback("x", 'Traceback (most recent call last):\n  File "x.py"')
