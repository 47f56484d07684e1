"""bench/mutants.py's machinery on one mutant: the campaign layer kills a
known-bad mutant of impl/sequencer.py and passes the unmutated tree, and
the mutant is written to a copy of the tree, never to the tree itself."""

import hashlib
from types import SimpleNamespace

import pytest
from bench_helpers import ROOT, load_bench

pytest.importorskip("cosmic_ray")


def _bench():
    return load_bench("mutants")


def test_sample_is_deterministic_and_spread_over_modules():
    M = _bench()
    ms = [M.Mutant(f"impl/{m}.py", "core/AddNot", k, k) for m in ("a", "b", "c") for k in range(10)]
    s = M.sample(ms, 6, seed=3)
    assert [m.key for m in s] == [m.key for m in M.sample(ms, 6, seed=3)]
    assert {m.module for m in s} == {"impl/a.py", "impl/b.py", "impl/c.py"}
    assert sorted(m.module for m in s).count("impl/a.py") == 2


def test_campaign_layer_kills_a_sequencer_mutant_and_passes_the_original():
    M = _bench()
    path = ROOT / "impl" / "sequencer.py"
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    # the coordinator numbering its messages from the wrong base: every run's DATA seqnos are off
    [m] = [m for m in M.enumerate_mutants(ROOT, ["impl/sequencer.py"]) if m.operator.endswith("_Add_Sub")
           and "q = self.sent - 1" in M.mutated_source(path.read_text(), m).splitlines()[m.line - 1]]
    tree = M.Tree(ROOT)
    a = SimpleNamespace(runs=5, run_seed=0, tlc_runs=1)
    try:
        original = (tree.root / m.module).read_text()
        assert M.run_layer(tree, "campaign", [], ["sequencer"], a, timeout=120)["outcome"] == "survived"
        try:
            tree.write(m.module, M.mutated_source(original, m))
            res = M.run_layer(tree, "campaign", [], ["sequencer"], a, timeout=120)
        finally:
            tree.write(m.module, original)
        assert res["outcome"] == "killed", res
    finally:
        tree.cleanup()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert not tree.dir.exists()


def test_a_mutant_of_annotations_alone_is_equivalent_only_when_they_are_never_evaluated():
    M = _bench()
    lazy = "from __future__ import annotations\n\ndef f(x: int | None) -> int | None:\n    return x\n"
    assert M.annotation_only(lazy, lazy.replace("int | None)", "int >> None)"))
    assert M.annotation_only(lazy, lazy.replace("-> int | None", "-> int & None"))
    assert not M.annotation_only(lazy, lazy.replace("return x", "return -x"))
    eager = lazy.split("\n", 2)[2]
    assert not M.annotation_only(eager, eager.replace("int | None)", "int >> None)"))


def test_hand_written_mutants_apply_once_and_keep_their_module_compiling(tmp_path):
    """--hand: every mutant of bench/hand_mutants.json replaces a snippet
    found exactly once in its module (a snippet found twice, or not at all,
    is refused, naming the mutant), and the result still compiles."""
    import json
    M = _bench()
    ms = M.load_hand(ROOT / "bench" / "hand_mutants.json", ROOT)
    assert len(ms) == len({m.key for m in ms}) == 30 and {M.family(m) for m in ms} == {"hand"}
    for m in ms:
        original = (ROOT / m.module).read_text()
        mutated = M.mutated_source(original, m)
        assert mutated is not None and mutated != original, m.key
        compile(mutated, m.module, "exec")
        first = M.changed_lines(original, mutated)[0]        # the snippet may open with a line it keeps
        assert m.line <= first <= m.line + M.HAND[m.operator]["before"].count("\n"), m.key
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"id": "twice", "module": "impl/engine.py", "before": "self", "after": "it",
                                "why": "-"}]))
    with pytest.raises(SystemExit, match="twice: its 'before' occurs"):
        M.load_hand(bad, ROOT)


def test_a_coverage_map_recorded_in_another_checkout_is_read_by_package_path():
    """A map recorded in a checkout under another folder names the same
    product modules; a file outside the product is left out."""
    T = load_bench("mutant_tests")
    assert T.product_path(str(ROOT / "impl" / "engine.py")) == "impl/engine.py"
    assert T.product_path("/elsewhere/checkout/conformance/replay/engine.py") == "conformance/replay/engine.py"
    assert T.product_path("/elsewhere/checkout/impl/no_such_module.py") is None
    assert T.product_path("/usr/lib/python3/json/__init__.py") is None


def test_the_guard_runs_first_the_test_files_that_name_the_mutated_function():
    M = _bench()
    src = (ROOT / "conformance/replay/engine.py").read_text()
    line = next(k for k, ln in enumerate(src.splitlines(), 1) if "self.seen.update(states)" in ln)
    assert M.enclosing_names(src, line)[:2] == ["_saw", "ReplayEngine"]
    files = M.guard_files("conformance/replay/engine.py", src, line, ROOT)
    assert files[0] == "test_pinned_sample.py" and len(files) == M.GUARD_FILES


def test_the_fallback_runs_importers_and_for_the_cli_the_files_that_run_it_as_a_program():
    M = _bench()
    assert "test_explore_engine.py" in M.fallback_files("model/parallel.py", ROOT)
    assert "test_proofs_flush.py" in M.fallback_files("model/proofs/flush/any_relation.py", ROOT)
    cli = M.fallback_files("cli/cluster.py", ROOT)
    assert cli and len(cli) <= M.FALLBACK_FILES


def test_the_guard_fails_only_on_a_clear_fall():
    M = _bench()
    assert M.binom_cdf(1, 19, M.GUARD_THRESHOLD) < M.GUARD_ALPHA <= M.binom_cdf(2, 19, M.GUARD_THRESHOLD)
