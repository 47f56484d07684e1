"""A pytest plugin that records which test executes which line of the
product (impl/, conformance/, model/, cli/): coverage.py with one dynamic
context per test (its node id), one data file per process (xdist workers
included), and each test's duration.  bench/mutants.py reads the combined
map to run, for a mutant, only the tests that execute its lines.

    GROUPCHECK_COVMAP=covmap/cov PYTHONPATH=bench HYPOTHESIS_PROFILE=ci \\
        .venv/bin/python -m pytest -q -p covmap -n 2 --dist loadgroup
    .venv/bin/python bench/mutants.py --covmap covmap/cov   # combines, then samples
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "impl", "conformance", "model", "cli")
_cov = None
_durations: dict[str, float] = {}


def _start():
    """Started in the thread that runs the tests (an xdist worker's is not
    the one that configures pytest), before the first test."""
    global _cov
    base = os.environ.get("GROUPCHECK_COVMAP")
    if not base or _cov is not None:
        return
    import coverage
    _cov = coverage.Coverage(data_file=base, data_suffix=True, source=[str(ROOT / p) for p in PACKAGES],
                             config_file=False)
    _cov.start()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _start()
    if _cov is not None:
        _cov.switch_context(item.nodeid)
    yield
    if _cov is not None:
        _cov.switch_context("")


def pytest_runtest_logreport(report):
    if _cov is not None:
        _durations[report.nodeid] = _durations.get(report.nodeid, 0.0) + report.duration


def pytest_unconfigure(config):
    global _cov
    if _cov is None:
        return
    _cov.stop()
    _cov.save()
    base = Path(os.environ["GROUPCHECK_COVMAP"])
    (base.parent / f"{base.name}.durations.{os.getpid()}.json").write_text(json.dumps(_durations))
    _cov = None
