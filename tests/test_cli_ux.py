"""The command line never surprises: one-line errors with the
documented exit codes, every option validated naming the bad value, Java
checked up front, a real SIGTERM/SIGINT cleaning up every TLC JVM and
temporary folder, a user's own spec checked by path."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groupcheck.cli.main import app

REPO = Path(__file__).resolve().parents[1]


def run(*args):
    r = CliRunner().invoke(app, list(args))
    return r.exit_code, r.output


@pytest.mark.parametrize("args, needle", [
    (["simulate", "sequencer", "--runs", "0"], "'--runs': 0"),
    (["simulate", "sequencer", "--runs", "-3"], "'--runs': -3"),
    (["simulate", "sequencer", "--nodes", "0"], "'--nodes': 0"),
    (["simulate", "sequencer", "--option", "nodez=3"], "unknown key 'nodez'"),
    (["simulate", "sequencer", "--faults", "crash=1@-5"], "crash=1@-5"),
    (["simulate", "sequencer", "--faults", "loss=-0.1"], "loss=-0.1"),
    (["check", "--workers", "0"], "'--workers': 0"),
    (["audit", "--runs", "0"], "'--runs': 0"),
    (["audit", "--stage", "nope"], "--stage nope"),
    (["check", "sequencer", "--model", "Nope"], "CoordCrash"),      # lists the real names
    (["traces", "generate", "sequencer", "--runs", "0", "--out", "x"], "'--runs': 0"),
])
def test_bad_input_is_exit_2_naming_the_value(args, needle):
    code, out = run(*args)
    assert code == 2, out
    assert needle in out
    assert "Traceback" not in out and "[red]" not in out and "[/]" not in out


def test_conform_on_an_empty_folder_is_an_input_error(tmp_path):
    code, out = run("conform", str(tmp_path))
    assert code == 2 and "no *.ndjson traces" in out


def test_unwritable_out_is_refused_before_any_work(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, out = run("audit", "--out", str(blocker / "sub"), "--stage", "conformance", "--engine", "local")
    assert code == 2 and "--out" in out
    assert not (tmp_path / "traces").exists()


def test_version():
    code, out = run("--version")
    assert code == 0 and out.startswith("groupcheck ")


def gc(*args, env=None, **kw):
    return subprocess.run([sys.executable, "-m", "groupcheck.cli.main", *args], capture_output=True,
                          text=True, timeout=300, env=env, **kw)


@pytest.mark.parametrize("args", [
    ["check", "sequencer", "--model", "Pair"],
    ["explore", "sequencer", "--model", "Pair", "--compare-tlc"],
    ["audit", "--stage", "tlc"],
    ["conform", "--engine", "spark", str(REPO / "tests")],
    ["history", "--engine", "spark", str(REPO / "tests")],
    ["traces", "generate", "sequencer", "--runs", "1", "--out", "ds"],
])
def test_without_java_every_command_is_one_line_and_exit_3(args, tmp_path):
    env = {**os.environ, "PATH": str(tmp_path)}      # an empty PATH: no java
    (tmp_path / "x.ndjson").write_text("")
    if args[0] in ("conform", "history"):
        args = args[:-1] + [str(tmp_path)]
    p = gc(*args, env=env, cwd=tmp_path)
    assert p.returncode == 3, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "java" in lines[0].lower(), p.stderr


def _java_pids(marker: str) -> list[str]:
    p = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    return p.stdout.split()


@pytest.mark.skipif(shutil.which("java") is None, reason="needs java for TLC")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_ends_tlc_and_removes_its_temporary_folder(sig, tmp_path):
    """A real signal while TLC runs (FailureFree takes a while): afterwards no
    JVM whose tmpdir is ours and no groupcheck-tlc-* folder."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "groupcheck.cli.main", "check", "sequencer",
                             "--model", "FailureFree"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (list(tmp_path.glob("groupcheck-tlc-*"))
                                               and _java_pids(str(tmp_path))):
        time.sleep(0.2)
    assert _java_pids(str(tmp_path)), "TLC never started"
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err
    assert "Traceback" not in err
    assert _java_pids(str(tmp_path)) == []
    assert list(tmp_path.glob("groupcheck-tlc-*")) == []


@pytest.mark.skipif(shutil.which("java") is None, reason="needs java for TLC")
def test_check_a_copy_of_a_spec_outside_the_repo(tmp_path):
    mine = tmp_path / "Mine"
    shutil.copytree(REPO / "spec" / "Sequencer", mine)
    p = gc("check", str(mine), "--model", "Pair", "--json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert f"checking 1 model(s) in {mine}" in p.stderr      # says which folder it checked
    import json
    (row,) = json.loads(p.stdout)
    assert row["violated"] == "TotalOrder" and row["matches_expectation"]
    # a bare .tla with its .cfg and --expect
    shutil.copy(mine / "MCSequencer_Pair.cfg", mine / "MCSequencer.cfg")
    tla = str(mine / "MCSequencer.tla")
    assert gc("check", tla, "--expect", "TotalOrder", cwd=tmp_path).returncode == 0
    assert gc("check", tla, "--expect", "ok", cwd=tmp_path).returncode == 1
    assert gc("check", tla, cwd=tmp_path).returncode == 2       # --expect is required


def test_conform_documented_findings_exit_0_and_known_expect_demand_or_forbid_them(tmp_path):
    from groupcheck.core.trace import writer as tracefile
    from groupcheck.conformance.replay import registry as protocols
    proto = protocols.get("sequencer")
    # the coordinator crash under loss: some seed violates TotalOrder (docs/sequencer.md finding 1)
    for seed in range(40):
        records, line = proto.simulate(seed, "crash=1@15,loss=0.2", dict(proto.default_options))
        tracefile.write(tmp_path / f"{line['run_id']}.ndjson", records)
        if "TotalOrder" in run("conform", str(tmp_path))[1]:
            break
    code, out = run("conform", str(tmp_path))
    assert code == 0 and "TotalOrder" in out and "(documented finding)" in out
    assert run("conform", str(tmp_path), "--known")[0] == 0          # demanded, and there
    assert run("conform", str(tmp_path), "--no-known")[0] == 1       # forbidden
    assert run("conform", str(tmp_path), "--expect", "TotalOrder")[0] == 0
    code, out = run("conform", str(tmp_path), "--expect", "Agreement")   # demanded, absent
    assert code == 1 and "--expect Agreement: no run violates Agreement" in out
    # a clean run cannot satisfy --known
    clean = tmp_path / "clean"
    records, line = proto.simulate(0, "", dict(proto.default_options))
    tracefile.write(clean / f"{line['run_id']}.ndjson", records)
    assert run("conform", str(clean))[0] == 0
    code, out = run("conform", str(clean), "--known")
    assert code == 1 and "no run reproduces a documented finding" in out


def _children(pid: int) -> list[int]:
    p = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    return [int(x) for x in p.stdout.split()]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("java") is None, reason="needs java for Spark")
def test_sigterm_ends_the_spark_jvm_and_its_folders(tmp_path):
    """SIGTERM to groupcheck alone (not its process group): the Spark driver
    JVM it started exits and its local dirs are removed."""
    local = tmp_path / "local"
    local.mkdir()
    env = {**os.environ, "SPARK_LOCAL_DIRS": str(local)}
    proc = subprocess.Popen([sys.executable, "-m", "groupcheck.cli.main", "traces", "generate", "sequencer",
                             "--runs", "2000", "--out", str(tmp_path / "ds")], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    # the driver's scratch folder is groupcheck's own, inside SPARK_LOCAL_DIRS
    while time.monotonic() < deadline and not list(local.rglob("blockmgr-*")):
        time.sleep(0.5)
    jvms = _children(proc.pid)
    assert jvms and list(local.glob("*")), "Spark never started"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err
    for pid in jvms:
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
    assert list(local.glob("*")) == []


