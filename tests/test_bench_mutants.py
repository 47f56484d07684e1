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
