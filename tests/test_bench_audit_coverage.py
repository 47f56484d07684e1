"""bench/audit_coverage.py without the audit: its named paths resolve in the
files as they are, a child process started with its generated setup is
measured, and the summary adds up per package and per module."""

import json
import subprocess
import sys

import pytest

from bench_helpers import ROOT, load_bench

A = load_bench("audit_coverage")


@pytest.mark.parametrize("name", sorted(A.PATHS))
def test_every_named_stretch_resolves(name):
    for module, qual, first, last in A.PATHS[name]:
        lo, hi = A._stretch(module, qual, first, last)
        lines = (ROOT / module).read_text(encoding="utf-8").splitlines()
        assert lo <= hi and first in lines[lo - 1] and last in lines[hi - 1]


def test_a_child_process_is_measured(tmp_path):
    pytest.importorskip("coverage")      # the bench extra's
    env = A._write_setup(tmp_path, ("impl",))     # one package: the report reads every file of the source
    rc = (tmp_path / "coveragerc").read_text(encoding="utf-8")
    assert "parallel = True" in rc and str(ROOT / "impl") in rc and str(ROOT / "model") not in rc
    child = "from groupcheck.impl import codec; codec.decode_bundle(codec.encode_bundle([b'x', b'y']))"
    subprocess.run([sys.executable, "-c", child], env=env, cwd=ROOT, check=True)
    assert list((tmp_path / "data").glob(".coverage.*")), "the child left no coverage data"
    report = A._combine(tmp_path)
    s = A._summarise(report)
    codec = s["modules"]["impl/codec.py"]
    assert 0 < codec["executed"] <= codec["statements"]
    impl = s["packages"]["impl"]
    assert impl["executed"] == sum(m["executed"] for k, m in s["modules"].items() if k.startswith("impl/"))
    assert impl["statements"] == sum(m["statements"] for k, m in s["modules"].items() if k.startswith("impl/"))
    paths = A._paths(report)
    assert [p["path"] for p in paths] == list(A.PATHS) and not any(p["executed"] for p in paths)
    json.dumps(s)
