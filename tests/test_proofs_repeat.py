"""Every query is bounded by z3's resource limit, never by wall-clock
time: its answer does not depend on the load, nor on what the process
asked before (docs/proofs.md, "Resource limits, not time")."""

from groupcheck.model.proofs import engine, registry


def answers(qs):
    return [(q.query, q.result, q.reachable) for q in qs]


def test_the_same_answers_after_another_encoding_and_in_a_process_of_its_own():
    """STABLE's JoinRace (155 queries, a reachable CTI) asked in this
    process after Raincore's Fixed (267 queries, other terms in z3's
    context) and in a fresh process: the same answers, query for query,
    and the variant holds."""
    [other] = registry.select("raincore", "Fixed")
    assert engine.verdict(engine.run(other, classify=False))
    [enc] = registry.select("stable", "JoinRace")
    here = engine.run(enc)
    [(_, fresh)] = list(registry.run_isolated([enc], jobs=1))
    assert answers(here) == answers(fresh)
    assert engine.verdict(here) and len(here) > 100
    # each query within its limit, with the units it used counted
    assert all(0 < q.rlimit for q in here if not q.by_frame)
