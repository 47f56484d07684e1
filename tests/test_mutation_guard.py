"""The mutation guard of the slow tier: a small seeded sample of semantic
mutants (bench/semantic.py) over the modules a change touches against main
(every module when it touches none, as in CI's clone of main), each run
against the default tests of the test files that import its module.

Every mutant and every survivor is printed as a warning, so they stand in
the log of a passing run too; the test fails on a clear fall: when the
kills of the non-equivalent mutants that finished are so few that, at the
guard's measured kill rate (bench/mutants.py GUARD_THRESHOLD), as few or
fewer have probability under GUARD_ALPHA (a one-sided binomial test).  The seed is the checked-out commit's, so successive
commits sample different mutants and a failure is reproduced with
``bench/mutants.py --guard --seed SEED``.  No mutant is started after
9 minutes, nor in the last two minutes of the tier's time budget
(GROUPCHECK_TEST_DEADLINE); those not run are said in the log."""

import os
import subprocess
import warnings

import pytest
from bench_helpers import ROOT, load_bench


@pytest.mark.slow
def test_a_seeded_mutation_sample_of_the_changed_modules_is_killed_by_the_default_tests():
    M = load_bench("mutants", "bench_mutants_guard")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    if head.returncode:
        pytest.skip("not a git checkout: no commit to seed the sample with, no base to compare with")
    seed = int(head.stdout.strip()[:8], 16)
    log: list[str] = []
    # within the tier's budget too: no mutant started in its last two minutes
    until = float(os.environ["GROUPCHECK_TEST_DEADLINE"]) - 120 if os.environ.get("GROUPCHECK_TEST_DEADLINE") else None
    res = M.guard(ROOT, "main", M.GUARD_MUTANTS, seed, M.GUARD_THRESHOLD, log=log.append, until=until)
    warnings.warn("\n".join(log), UserWarning, stacklevel=1)
    assert res["counted"] > 0, "\n".join(log)
    assert res["passed"], "\n".join(log)
