"""The proof engine's own rules, on toy formulas (no protocol): a
consecution query z3 gives up on whole is asked one conjunct at a time
(``Encoding.split_goal_rlimit``), which proves what holds and keeps a CTI
a CTI."""

import types

import z3

from groupcheck.model.proofs.engine import _solve_split

x, x2 = z3.Int("x"), z3.Int("x2")
INV = x >= 0
STEP = x2 == x + 1


def enc(rlimit):
    return types.SimpleNamespace(solver_params={}, split_goal_rlimit=rlimit)


def test_a_lemma_given_up_on_whole_is_proved_by_its_conjuncts():
    lemma = z3.And(x2 >= 0, x2 >= 1, x2 != -7)
    # a resource limit of 1 makes z3 give up on the whole query at once
    assert _solve_split(INV, [STEP], lemma, 10_000, enc(1))[0] == "proved"
    r = _solve_split(INV, [STEP], lemma, 10_000, enc(None))
    assert r[0] == "proved" and r[1] is None


def test_a_conjunct_that_breaks_gives_a_cti_with_its_model():
    lemma = z3.And(x2 >= 0, x2 >= 5)
    r, m, _, _, part = _solve_split(INV, [STEP], lemma, 10_000, enc(1))
    assert r == "cti" and m is not None and part is STEP
    assert m.eval(x2).as_long() < 5 and m.eval(x).as_long() >= 0


def test_a_lemma_that_is_no_conjunction_is_asked_whole_without_the_limit():
    """Nothing to split: the resource limit is not applied, z3 decides."""
    assert _solve_split(INV, [STEP], z3.Or(x2 >= 1, x2 == -3), 10_000, enc(1))[0] == "proved"
    assert _solve_split(INV, [STEP], z3.Or(x2 >= 2, x2 == -3), 10_000, enc(1))[0] == "cti"


def test_every_instance_is_asked_the_negated_lemma_after_a_split(monkeypatch):
    """Regression (CI of stop 29, FLUSH at N = 4 under load): once the first
    action instance was split into conjuncts, the second was asked
    ``inv /\\ f /\\ last conjunct`` (not negated), a spurious CTI on a lemma
    that holds, or a spurious proof.  Here the first instance's whole query
    gives up (as a wall-clock time-out does under load) and the second is
    decided whole."""
    from groupcheck.model.proofs import engine
    real, asked = engine._solve_first, []

    def first_whole_gives_up(fs, timeout_ms, enc=None, rlimit=None):
        asked.append(rlimit)
        if rlimit is not None and asked.count(rlimit) == 1:
            return "unknown", None, 0.0, 0.0
        return real(fs, timeout_ms, enc, rlimit)

    monkeypatch.setattr(engine, "_solve_first", first_whole_gives_up)
    lemma = z3.And(x2 >= 0, x2 >= 1)
    second = x2 == x + 2
    assert _solve_split(INV, [STEP, second], lemma, 10_000, enc(10_000_000))[0] == "proved"
    assert asked == [10_000_000, None, None, 10_000_000]
    # and a lemma the second instance breaks is still caught there
    asked.clear()
    r, m, _, _, part = _solve_split(INV, [STEP, x2 == x - 1], lemma, 10_000, enc(10_000_000))
    assert r == "cti" and part is not STEP and m.eval(x2).as_long() < 1
