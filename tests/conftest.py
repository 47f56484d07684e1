"""Shared test settings.

Hypothesis profiles: ``dev`` (quick, random) and ``ci`` (derandomised, more
examples, no deadline: CI machines are shared and slow).  ``make test`` sets
HYPOTHESIS_PROFILE=ci.
"""

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile(
    "ci", max_examples=200, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


# ---------------------------------------------------------------- no traceback, ever

@pytest.fixture(autouse=True)
def cli_never_prints_a_traceback(monkeypatch):
    """Every in-process CLI run of every test (typer's CliRunner) fails the
    test if it printed a Python traceback; tests/cli_helpers.py checks the
    runs in a fresh interpreter and through main() the same way."""
    from typer.testing import CliRunner
    from cli_helpers import no_traceback
    real_invoke = CliRunner.invoke

    def invoke(self, *a, **k):
        r = real_invoke(self, *a, **k)
        no_traceback("groupcheck (CliRunner)", r.stdout, r.stderr_bytes)
        return r
    monkeypatch.setattr(CliRunner, "invoke", invoke)


# ---------------------------------------------------------------- the default suite's split

# tests/suite_split.txt: the tests measured at 1.25 s or more that run behind the
# `slow` marker, so that `make test` stays within 4 minutes, and those measured
# at 40 s or more in the slow suite that run behind `heavy`, so that `make
# test-slow` stays within 30 (bench/suite_split.py writes both from --durations
# runs or junit reports).  A listed test that no longer exists fails the collection of the whole
# suite: the list cannot go stale.
_SPLIT = os.path.join(os.path.dirname(__file__), "suite_split.txt")


def _listed() -> dict:
    with open(_SPLIT, encoding="utf-8") as fh:
        return {f[2]: f[0] for f in (ln.split() for ln in fh) if len(f) == 3 and f[0] in ("slow", "heavy")}


@pytest.hookimpl(tryfirst=True)          # before -m deselects by marker
def pytest_collection_modifyitems(session, config, items):
    listed = _listed()
    here = os.path.dirname(__file__)
    seen = set()
    for item in items:
        nodeid = item.nodeid if item.nodeid.startswith("tests/") else "tests/" + item.nodeid
        tier = listed.get(nodeid)
        if tier is not None:
            item.add_marker(getattr(pytest.mark, tier))
            seen.add(nodeid)
    whole = [os.path.abspath(str(a)).rstrip("/") for a in config.args] in ([here], [os.path.dirname(here)])
    if whole and listed.keys() - seen:
        raise pytest.UsageError(f"{_SPLIT}: listed tests that do not exist: {sorted(listed.keys() - seen)[:5]}")


# ---------------------------------------------------------------- a time budget

# GROUPCHECK_TEST_DEADLINE (seconds since the epoch): a test not yet started by
# then is skipped with that reason, so a suite given a budget (CI's slow suite,
# .ci/run) ends on its own with every started test finished and judged, instead
# of being interrupted mid-test. Unset, nothing is skipped.
_DEADLINE = os.environ.get("GROUPCHECK_TEST_DEADLINE")
_BUDGET_REASON = "not started: the time budget (GROUPCHECK_TEST_DEADLINE) was spent"


def pytest_runtest_setup(item):
    if _DEADLINE is not None:
        import time
        if time.time() > float(_DEADLINE):
            pytest.skip(_BUDGET_REASON)


def pytest_terminal_summary(terminalreporter):
    if _DEADLINE is None:
        return
    skipped = terminalreporter.stats.get("skipped", [])
    n = sum(1 for r in skipped
            if isinstance(r.longrepr, tuple) and _BUDGET_REASON in str(r.longrepr[2]))
    ran = sum(len(terminalreporter.stats.get(k, [])) for k in ("passed", "failed", "error", "xfailed", "xpassed"))
    terminalreporter.write_line(f"time budget: {ran} tests ran, {n} not started")
