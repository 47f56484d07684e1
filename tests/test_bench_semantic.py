"""bench/semantic.py's operators and bench/mutants.py's sampling and test
selection, on small sources (no cosmic-ray, no test run)."""

from bench_helpers import load_bench

S = load_bench("semantic")
M = load_bench("mutants")

SRC = '''from __future__ import annotations


def f(xs: set[int] | None, a, b, n) -> int | None:   # a comment that stays
    if a < b:
        return a
    for k in range(a, n):
        if k in xs:
            break
        if k == 3:
            continue
    while n > 0:
        n -= 1
    ok = any(x > 0 for x in xs) and (xs | {a}) == xs.union({b})
    log(a, b)
    g(f"{a < b}")
    return n
'''


def mutants_of(src, op):
    return [S.apply(src, s) for s in S.sites(src) if s.operator == S.PREFIX + op]


def changed(src, mutated):
    return [(x.strip(), y.strip()) for x, y in zip(src.splitlines(), mutated.splitlines()) if x != y]


def test_each_operator_rewrites_its_sites_and_nothing_else():
    want = {
        "ComparisonFlip": ("if a < b:", "if (a >= b):"),
        "BoundaryFlip": ("if a < b:", "if (a <= b):"),
        "IfToWhile": ("if k in xs:", "while k in xs:"),
        "WhileToIf": ("while n > 0:", "if n > 0:"),
        "RangeStopUp": ("for k in range(a, n):", "for k in range(a, n + 1):"),
        "RangeStopDown": ("for k in range(a, n):", "for k in range(a, n - 1):"),
        "BreakContinue": ("break", "continue"),
        "DropGuardReturn": ("return a", "pass"),
        "SkipEffect": ("log(a, b)", "pass"),
        "SwapArguments": ("log(a, b)", "log(b, a)"),
        "AnyAll": ("ok = any(x > 0 for x in xs) and (xs | {a}) == xs.union({b})",
                   "ok = all((x > 0 for x in xs)) and (xs | {a}) == xs.union({b})"),
    }
    for op, (before, after) in want.items():
        diffs = [changed(SRC, m) for m in mutants_of(SRC, op)]
        assert [(before, after)] in diffs, (op, diffs)
        # one line changed per mutant, every other byte (comments included) kept
        assert all(len(d) == 1 for d in diffs), (op, diffs)
    unions = {changed(SRC, m)[0][1] for m in mutants_of(SRC, "UnionIntersection")}
    assert unions == {"ok = any(x > 0 for x in xs) and ((xs & {a})) == xs.union({b})",
                      "ok = any(x > 0 for x in xs) and (xs | {a}) == xs.intersection({b})"}


def test_annotations_fstrings_and_loops_left_by_a_return_are_not_sites():
    lines = {s.line for s in S.sites(SRC)}
    assert 4 not in lines                          # the signature: annotations only
    assert 16 not in {s.line for s in S.sites(SRC) if s.operator != S.PREFIX + "SkipEffect"}   # the f-string
    # `if a < b: return a` runs its body once either way: no IfToWhile there
    assert all(s.line != 5 for s in S.sites(SRC) if s.operator == S.PREFIX + "IfToWhile")
    # a loop that breaks out of itself does not become an `if` (a break outside a loop)
    src = "while True:\n    if x:\n        break\n"
    assert not [s for s in S.sites(src) if s.operator == S.PREFIX + "WhileToIf"]


def test_every_listed_mutant_compiles_and_mutate_picks_the_nth_site_of_its_operator():
    for op, k, line in S.listing(SRC):
        m = S.mutate(SRC, op, k)
        compile(m, "<mutant>", "exec")
        assert changed(SRC, m) and SRC.splitlines()[line - 1] != m.splitlines()[line - 1]
    assert S.mutate(SRC, S.PREFIX + "AnyAll", 5) is None


def test_quotas_follow_lines_and_give_every_module_one_when_there_is_room():
    q = M.quotas({"a.py": 100, "b.py": 300, "c.py": 0, "d.py": 600}, 13)
    assert sum(q.values()) == 13 and "c.py" not in q
    assert q["a.py"] >= 1 and q["a.py"] < q["b.py"] < q["d.py"]
    assert M.quotas({"a.py": 100, "b.py": 300}, 1) == {"b.py": 1}


def test_sample_is_seeded_stratified_by_lines_and_takes_turns_between_families():
    ms = [M.Mutant(f"impl/{mod}.py", op, k, k) for mod in ("a", "b") for op in ("semantic/X", "core/Y")
          for k in range(40)]
    lines = {"impl/a.py": 100, "impl/b.py": 300}
    s = M.sample(ms, 12, seed=3, lines=lines)
    assert [m.key for m in s] == [m.key for m in M.sample(ms, 12, seed=3, lines=lines)]
    assert [m.key for m in s] != [m.key for m in M.sample(ms, 12, seed=4, lines=lines)]
    assert sum(m.module == "impl/a.py" for m in s) == M.quotas(lines, 12)["impl/a.py"] == 4   # 1 + 2.5, rounded up
    for mod in lines:
        fams = [M.family(m) for m in s if m.module == mod]
        assert abs(fams.count("semantic") - fams.count("cosmic-ray")) <= 1
    # a module with fewer mutants than its quota hands the rest on
    few = [m for m in ms if m.module == "impl/b.py"] + [M.Mutant("impl/a.py", "semantic/X", 0, 1)]
    s = M.sample(few, 12, seed=3, lines=lines)
    assert len(s) == 12 and sum(m.module == "impl/a.py" for m in s) == 1


def test_a_mutant_runs_the_tests_that_execute_its_lines_fastest_first_within_the_budget():
    covmap = {"lines": {"impl/a.py": {"1": [""], "5": ["t::slow", "t::fast"], "6": ["t::mid"], "9": [""]}},
              "durations": {"t::slow": 20.0, "t::fast": 0.5, "t::mid": 2.0}}
    assert M.changed_lines("a\nb\nc\nd\n", "a\nB\nc\nd\n") == range(2, 3)
    assert M.changed_lines("a\nb\nc\nd\n", "a\nX\nd\n") == range(2, 4)
    sel = M.select_tests(covmap, "impl/a.py", range(5, 7), budget=3.0)
    assert sel["tests"] == ["t::fast", "t::mid"] and sel["executing"] == 3 and not sel["import_time"]
    assert M.select_tests(covmap, "impl/a.py", range(5, 6), budget=0.1)["tests"] == ["t::fast"]
    # a line run only at import time: every test of the module
    sel = M.select_tests(covmap, "impl/a.py", range(9, 10), budget=100)
    assert sel["import_time"] and set(sel["tests"]) == {"t::slow", "t::fast", "t::mid"}
    assert M.select_tests(covmap, "impl/a.py", range(7, 8), budget=100)["tests"] == []
    # with the source: a line outside every function body is run at import, whatever the map says;
    # one inside a body that no test executes is not run by any
    src = "X = 1\n\n\ndef f():\n    return X\n\n\nclass C:\n    y = 2\n\n    def g(self):\n        pass\n"
    assert M.function_body_lines(src) == {5, 12}
    sel = M.select_tests(covmap, "impl/a.py", range(3, 4), budget=100, source=src)
    assert sel["import_time"] and len(sel["tests"]) == 3
    assert M.select_tests(covmap, "impl/a.py", range(5, 6), budget=100, source=src)["executing"] == 2
    assert M.select_tests(covmap, "impl/a.py", range(12, 13), budget=100, source=src)["tests"] == []
