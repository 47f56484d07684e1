"""The proof engine's own rules, on toy formulas (no protocol): a
consecution query z3 gives up on whole is asked one conjunct at a time
(``Encoding.split_goal_rlimit``), which proves what holds and keeps a CTI
a CTI."""

import types

import pytest
import z3

from groupcheck.model.proofs.prover import _solve_split

x, x2 = z3.Int("x"), z3.Int("x2")
INV = x >= 0
STEP = x2 == x + 1


def enc(rlimit):
    return types.SimpleNamespace(solver_params={}, split_goal_rlimit=rlimit)


def test_a_lemma_given_up_on_whole_is_proved_by_its_conjuncts():
    lemma = z3.And(x2 >= 0, x2 >= 1, x2 != -7)
    # a resource limit of 1 makes z3 give up on the whole query at once
    assert _solve_split(INV, [STEP], lemma, enc(1))[0] == "proved"
    r = _solve_split(INV, [STEP], lemma, enc(None))
    assert r[0] == "proved" and r[1] is None


def test_a_conjunct_that_breaks_gives_a_cti_with_its_model():
    lemma = z3.And(x2 >= 0, x2 >= 5)
    r, m, *_, part = _solve_split(INV, [STEP], lemma, enc(1))
    assert r == "cti" and m is not None and part is STEP
    assert m.eval(x2).as_long() < 5 and m.eval(x).as_long() >= 0


def test_a_lemma_that_is_no_conjunction_is_asked_whole_without_the_limit():
    """Nothing to split: the resource limit is not applied, z3 decides."""
    assert _solve_split(INV, [STEP], z3.Or(x2 >= 1, x2 == -3), enc(1))[0] == "proved"
    assert _solve_split(INV, [STEP], z3.Or(x2 >= 2, x2 == -3), enc(1))[0] == "cti"


def test_every_instance_is_asked_the_negated_lemma_after_a_split(monkeypatch):
    """Regression (FLUSH at N = 4): once the first
    action instance was split into conjuncts, the second was asked
    ``inv /\\ f /\\ last conjunct`` (not negated), a spurious CTI on a lemma
    that holds, or a spurious proof.  Here the first instance's whole query
    gives up (as at its resource limit) and the second is
    decided whole."""
    from groupcheck.model.proofs import prover
    real, asked = prover._solve_first, []

    def first_whole_gives_up(fs, enc=None, rlimit=None):
        asked.append(rlimit)
        if rlimit is not None and asked.count(rlimit) == 1:
            return "unknown", None, 0.0, 0.0, 0
        return real(fs, enc, rlimit)

    monkeypatch.setattr(prover, "_solve_first", first_whole_gives_up)
    lemma = z3.And(x2 >= 0, x2 >= 1)
    second = x2 == x + 2
    assert _solve_split(INV, [STEP, second], lemma, enc(10_000_000))[0] == "proved"
    assert asked == [10_000_000, None, None, 10_000_000]
    # and a lemma the second instance breaks is still caught there
    asked.clear()
    r, m, *_, part = _solve_split(INV, [STEP, x2 == x - 1], lemma, enc(10_000_000))
    assert r == "cti" and part is not STEP and m.eval(x2).as_long() < 1


# --- Frame: conjuncts an action leaves unchanged are proved without z3 ------------

S = {"x": z3.Int("s_x"), "a": [z3.Array("s_a", z3.IntSort(), z3.IntSort())]}
T = {"x": z3.Int("t_x"), "a": [z3.Array("t_a", z3.IntSort(), z3.IntSort())]}
_names = iter(range(10**6))


def pos_a(St):
    """All of a is non-negative, its bound variable named afresh on every
    call (as the encodings number theirs)."""
    k = z3.Int(f"k{next(_names)}")
    return z3.ForAll([k], St["a"][0][k] >= 0)


def lemma(St):
    return z3.And(St["x"] >= 0, pos_a(St))


def same(got, want):
    from groupcheck.model.proofs.prover import alpha_equal
    return len(got) == len(want) and all(alpha_equal(a, b) for a, b in zip(got, want))


def test_a_lemma_on_unchanged_variables_needs_no_solver(monkeypatch):
    from groupcheck.model.proofs import prover
    frame = prover.Frame(S, T)
    bump_x = z3.And(T["x"] == S["x"] + 1, T["a"][0] == S["a"][0])
    # a is framed, so only x's conjunct is left for z3 (bound names differ)
    assert same(frame.residue([bump_x], lemma(T), lemma(S)), [T["x"] >= 0])
    only_a = z3.And(T["x"] == S["x"], T["a"][0] == S["a"][0])
    assert frame.residue([only_a], lemma(T), lemma(S)) == []
    calls = []
    monkeypatch.setattr(prover, "_solve_first", lambda *a, **k: calls.append(a) or ("unknown", None, 0, 0, 0))
    inv = lemma(S)
    assert _solve_split(inv, [only_a], lemma(T), enc(None), [[]])[0] == "proved" and calls == []


def test_a_conjunct_whose_variable_changes_is_still_asked_and_broken():
    from groupcheck.model.proofs import prover
    frame = prover.Frame(S, T)
    inv = lemma(S)
    # x may go negative: its conjunct is kept, z3 finds the CTI
    drop_x = z3.And(T["x"] == S["x"] - 1, T["a"][0] == S["a"][0])
    goals = [frame.residue([drop_x], lemma(T), lemma(S))]
    r, m, *_ = _solve_split(inv, [drop_x], lemma(T), enc(None), goals)
    assert r == "cti" and m.eval(T["x"]).as_long() < 0
    # a written below a guard is not a top-level frame: it counts as changed
    guarded = z3.And(T["x"] == S["x"], z3.If(S["x"] > 3, T["a"][0] == S["a"][0], T["a"][0] == S["a"][0]))
    assert len(frame.residue([guarded], lemma(T), lemma(S))) == 1
    # a store into a is a change; a frame must hold for every instance asked together
    store = z3.And(T["x"] == S["x"], T["a"][0] == z3.Store(S["a"][0], 1, -5))
    framed_one = z3.And(T["x"] == S["x"], T["a"][0] == S["a"][0])
    assert same(frame.residue([framed_one, store], lemma(T), lemma(S)), [pos_a(T)])
    goals = [frame.residue([store], lemma(T), lemma(S))]
    assert _solve_split(inv, [store], lemma(T), enc(None), goals)[0] == "cti"


def test_alpha_equal_is_up_to_bound_names_only():
    from groupcheck.model.proofs.prover import alpha_equal
    assert alpha_equal(pos_a(S), pos_a(S))
    assert not alpha_equal(pos_a(S), pos_a(T))
    k = z3.Int("k")
    assert not alpha_equal(pos_a(S), z3.ForAll([k], S["a"][0][k] > 0))
    assert not alpha_equal(pos_a(S), z3.Exists([k], S["a"][0][k] >= 0))


def test_what_the_frame_proves_z3_proves_too():
    """On real encodings (STABLE, two members; Raincore's two-node ring):
    every (action, lemma) query the frame alone discharges is asked of z3
    whole as well, and z3 proves it."""
    from groupcheck.model.proofs import prover
    from groupcheck.model.proofs.raincore import RaincoreEncoding, manifest_constants
    from groupcheck.model.proofs.stable import StableEncoding
    for e in (StableEncoding(2, 1), RaincoreEncoding(manifest_constants("FixedRing2"), variant="Fixed",
                                                     expect_cti=False)):
        S, T = e.fresh("s"), e.fresh("t")
        frame, inv = prover.Frame(S, T), e.inv(S)
        acts: dict = {}
        for lab, f in e.actions(S, T):
            acts.setdefault(lab.action, []).append(f)
        framed = 0
        for name, L in e.lemmas.items():
            L_T, L_S = L(T), L(S)
            for a, fs in acts.items():
                if frame.residue(fs, L_T, L_S) == []:
                    framed += 1
                    assert prover._solve([inv, z3.Or(*fs), z3.Not(L_T)], e)[0] == "proved", (a, name)
        assert framed > 10, (e.protocol, framed)


@pytest.mark.slow
def test_sharded_run_asks_the_same_queries_in_the_same_order():
    """With more cores than variants a fixed variant's lemmas are dealt out
    to processes (run_isolated's shards): the queries, their order and
    their results are those of one process."""
    from groupcheck.model.proofs import prover, registry
    [fixed] = registry.select("sequencerflush", "NoCrash")
    [(_, whole)] = list(registry.run_isolated([fixed], jobs=1))
    [(_, sharded)] = list(registry.run_isolated([fixed], jobs=2))
    assert not fixed.expect_cti and len(whole) > 100
    # two cores, one variant: eight shards; a flawed variant stays whole
    assert [k[4:] for k in registry._shard_keys([fixed], 2, None, None)[0]] == [(k, 8) for k in range(8)]
    flawed = registry.select("sequencerflush", "NoFlush")
    assert [k[4:] for k in registry._shard_keys(flawed, 3, None, None)[0]] == [(0, 1)]
    assert len(registry._shard_keys(registry.select(), 2, None, None)[0]) == len(registry.select())
    assert [(q.query, q.result) for q in sharded] == [(q.query, q.result) for q in whole]
    assert sum(q.query.startswith("implication:") for q in sharded) == len(fixed.properties)
    assert prover.verdict(sharded)
    assert registry._merge_shards(fixed, [sharded[1::2], sharded[::2]]) == sharded


def test_an_unknown_is_asked_again_in_a_fresh_context(monkeypatch):
    """With ``retry_fresh`` a query the process's context gives up on is
    asked once more in a context of its own: proved there, it is proved; a
    model found there comes back in the caller's context; without the flag
    the unknown stands."""
    from groupcheck.model.proofs import prover
    monkeypatch.setattr(prover, "_solve", lambda fs, enc=None, rlimit=None: ("unknown", None, 0.0, 0.0, 0))
    x = z3.Int("x")
    enc = types.SimpleNamespace(retry_fresh=True)
    assert prover._solve_first([x > 1, x < 1], enc)[0] == "proved"
    r, m, *_ = prover._solve_first([x > 1, x < 3], enc)
    assert r == "cti" and m.eval(x).as_long() == 2
    assert prover._solve_first([x > 1, x < 1], types.SimpleNamespace(retry_seeds=()))[0] == "unknown"


def test_an_unknown_is_asked_again_under_other_seeds(monkeypatch):
    """A query given up on is asked again under each of ``RETRY_SEEDS``
    (after the same parameters once more, with ``retry_fresh``), each in a
    context of its own: the first sat or unsat is the answer; all unknown,
    the unknown stands."""
    from groupcheck.model.proofs import prover
    monkeypatch.setattr(prover, "_solve", lambda fs, enc=None, rlimit=None: ("unknown", None, 0.0, 0.0, 0))
    asked, real = [], prover._check_fresh

    def fresh(fs, rlimit, params):
        asked.append(dict(params))
        return real(fs, rlimit, params) if params.get("smt.random_seed") == 2 else (z3.unknown, None, 0, 0, 0)
    monkeypatch.setattr(prover, "_check_fresh", fresh)
    x = z3.Int("x")
    enc = types.SimpleNamespace(retry_fresh=True, solver_params={"smt.mbqi": False})
    assert prover._solve_first([x > 1, x < 1], enc)[0] == "proved"
    assert asked == [{"smt.mbqi": False}, {"smt.mbqi": False, "smt.random_seed": 1},
                     {"smt.mbqi": False, "smt.random_seed": 2}]
    r, m, *_ = prover._solve_first([x > 1, x < 3], types.SimpleNamespace())
    assert r == "cti" and m.eval(x).as_long() == 2
    assert prover.RETRY_SEEDS == (1, 2)
    assert prover._solve_first([x > 1, x < 3], types.SimpleNamespace(retry_seeds=(1,)))[0] == "unknown"


def test_an_unknown_row_is_asked_again_in_a_process_of_its_own(monkeypatch):
    """``run(rows=...)`` asks just those consecution rows; under
    ``retry_fresh`` run_isolated's ``_retry_rows`` re-asks each ``unknown``
    consecution row in a process that asks nothing else: its answer
    replaces the row's, the seconds add up, every other row (an unknown
    initiation included) stands; without the flag nothing is re-asked."""
    import dataclasses
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from groupcheck.model.proofs import prover, registry
    [fixed] = registry.select("sequencerflush", "NoCrash")
    qs = prover.run(fixed, classify=False)
    k = next(i for i, q in enumerate(qs) if q.query.startswith("consecution:") and not q.by_frame)
    row = tuple(qs[k].query.split(":")[1:])
    [alone] = prover.run(fixed, classify=False, rows=frozenset({row}))
    assert (alone.query, alone.result) == (qs[k].query, "proved")
    forged = list(qs)
    forged[k] = dataclasses.replace(qs[k], result="unknown", seconds=7.0, cpu_seconds=7.0)
    forged[0] = dataclasses.replace(qs[0], result="unknown")
    assert forged[0].query.startswith("initiation:")
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"), max_tasks_per_child=1) as pool:
        assert registry._retry_rows(pool, fixed, forged, None, None) is forged
        monkeypatch.setattr(fixed, "retry_fresh", True, raising=False)
        out = registry._retry_rows(pool, fixed, forged, None, None)
    assert (out[k].query, out[k].result) == (qs[k].query, "proved") and out[k].seconds > 7.0
    assert out[k].cpu_seconds > 7.0
    assert [q for i, q in enumerate(out) if i != k] == [q for i, q in enumerate(forged) if i != k]


def test_the_matrix_is_the_manifests_and_the_engine_does_not_import_the_registry():
    """The protocols with proofs are those whose manifest has a matrix;
    each default variant is built as its data says (name, N, expectation),
    one marked ``"default": false`` only when named;
    the engine imports no registry (the registry imports the engine)."""
    import ast
    import inspect

    from groupcheck.model import manifest
    from groupcheck.model.proofs import prover, registry
    tree = ast.parse(inspect.getsource(prover))
    names = {a.name for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not [n for n in names if "registry" in n]
    assert registry.protocols() == ("flush", "raincore", "sequencerflush", "stable")
    for p in manifest.protocols():
        data = (registry._proofs(p) or {"variants": []})["variants"]
        want = [(v["variant"], v["members"], v["expect"] == "cti") for v in data
                if v["members"] is not None and v.get("default", True)]
        assert [(e.variant, e.members, e.expect_cti) for e in registry.variants(p)] == want
        for v in data:   # a variant outside the default matrix is asked when named
            if v.get("default", True) is False:
                assert [e.variant for e in registry.select(p, v["variant"])] == [v["variant"]]


def test_the_first_conjunct_that_breaks_gives_the_cti_even_when_later_ones_hold():
    """The conjuncts are asked in order and the first broken one ends the
    search: a later conjunct that holds leaves the CTI standing."""
    lemma = z3.And(x2 >= 5, x2 >= 0, x2 != -7)
    r, m, *_ = _solve_split(INV, [STEP], lemma, enc(1))
    assert r == "cti" and m is not None and m.eval(x2).as_long() < 5


def test_a_ctis_int_array_is_read_through_every_store():
    from groupcheck.model.proofs.raincore.relation import RaincoreRelation
    a = z3.Array("a", z3.IntSort(), z3.IntSort())
    s = z3.Solver()
    s.add(a == z3.Store(z3.Store(z3.Store(z3.K(z3.IntSort(), 0), 1, 5), 2, 7), 3, 9))
    assert s.check() == z3.sat
    read = RaincoreRelation._int_array(s.model(), a)
    assert [read(k) for k in (0, 1, 2, 3, 4)] == [0, 5, 7, 9, 0]


@pytest.mark.parametrize("kw,name", [({}, "Fixed"), ({"reset": False}, "Flawed"),
                                     ({"view_reset": False}, "SeedFix"), ({"coord_switches": False}, "JoinRace"),
                                     ({"variant": "AnyFixed"}, "AnyFixed")])
def test_a_stable_encoding_is_named_by_its_switches_unless_given_a_name(kw, name):
    from groupcheck.model.proofs.stable import StableEncoding
    assert StableEncoding(3, 2, **kw).variant == name
