"""Every query is bounded by z3's resource limit, never by wall-clock
time: its answer does not depend on the load, nor, within the limit's
margin, on what the process asked before (docs/proofs.md, "Resource
limits, not time")."""

import pytest

from groupcheck.model.proofs import prover, registry


def answers(qs):
    return [(q.query, q.result, q.reachable) for q in qs]


@pytest.mark.slow
def test_the_same_answers_after_another_encoding_and_in_a_process_of_its_own():
    """SEQUENCER's NoCrash (113 queries) asked in this process after
    STABLE's JoinRace (other terms in z3's context, another encoding's
    names) and in a fresh process as `groupcheck prove` asks it: the same
    answers, query for query, each proved within the manifest's limit."""
    [other] = registry.select("stable", "JoinRace")
    assert prover.verdict(prover.run(other))
    [enc] = registry.select("sequencerflush", "NoCrash")
    here = prover.run(enc)
    [(_, fresh)] = list(registry.run_isolated([enc], jobs=1))
    assert answers(here) == answers(fresh)
    assert not [q.query for q in here if q.result != "proved"] and len(here) > 100
    # the resource units each query used are counted, within the limit
    assert all(0 < q.rlimit <= 2 * enc.rlimit for q in fresh if not q.by_frame)


def test_the_old_timeout_option_is_refused_with_the_reason():
    """No query is bounded by time: `--timeout` says so and names --rlimit."""
    from typer.testing import CliRunner

    from groupcheck.cli import main
    r = CliRunner().invoke(main.app, ["prove", "stable", "--variant", "JoinRace", "--timeout", "120000"])
    assert r.exit_code == 2
    assert "--rlimit" in r.output and "resource limit" in r.output
