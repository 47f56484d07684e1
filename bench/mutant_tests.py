"""Which tests run for a mutant (bench/mutants.py): the coverage map
(bench/covmap.py) read back, the lines a mutant changes, and the tests
that execute them or import its module, within a time budget."""

from __future__ import annotations

import json
import os
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent


PACKAGES = ("core", "impl", "conformance", "model", "cli")


def product_path(path: str, root: Path = ROOT) -> str | None:
    """A measured file's path as a module of the product (``impl/engine.py``),
    also when the map was recorded in another checkout of the same commit
    (its files then lie under another root): the path from its first
    package folder on, when ``root`` holds that file; None for any other file."""
    rel = os.path.relpath(path, root)
    if not rel.startswith(".."):
        return rel
    parts = Path(path).parts
    for k, part in enumerate(parts):
        if part in PACKAGES and root.joinpath(*parts[k:]).is_file():
            return "/".join(parts[k:])
    return None


def load_covmaps(bases) -> dict:
    """The union of several maps (``load_covmap``): the default suite's and,
    say, one of test files added since; a test's duration is its largest."""
    docs = [load_covmap(Path(b)) for b in bases]
    lines: dict[str, dict[str, list[str]]] = {}
    durations: dict[str, float] = {}
    for d in docs:
        for mod, by_line in d["lines"].items():
            m = lines.setdefault(mod, {})
            for ln, ctxs in by_line.items():
                m[ln] = sorted(set(m.get(ln, ())) | set(ctxs))
        for t, v in d["durations"].items():
            durations[t] = max(durations.get(t, 0.0), v)
    return {"lines": lines, "durations": durations}


def load_covmap(base: Path) -> dict:
    """The map bench/covmap.py recorded under ``base`` (one coverage data
    file per process, one context per test): {"lines": {module: {line: [test
    ids]}}, "durations": {test id: seconds}}, cached beside it as JSON."""
    cache = base.with_name(base.name + ".json")
    if cache.exists():
        return json.loads(cache.read_text())
    import glob

    import coverage
    lines: dict[str, dict[str, list[str]]] = {}
    for f in sorted(glob.glob(f"{base}.*")):
        if f.endswith(".json"):
            continue
        data = coverage.CoverageData(basename=f)
        data.read()
        for path in data.measured_files():
            rel = product_path(path)
            if rel is None:
                continue
            mod = lines.setdefault(rel, {})
            for ln, ctxs in data.contexts_by_lineno(path).items():
                mod.setdefault(str(ln), [])
                mod[str(ln)] = sorted(set(mod[str(ln)]) | set(ctxs))
    durations: dict[str, float] = {}
    for f in glob.glob(f"{base}.durations.*.json"):
        for k, v in json.loads(Path(f).read_text()).items():
            durations[k] = max(durations.get(k, 0.0), v)
    doc = {"lines": lines, "durations": durations}
    cache.write_text(json.dumps(doc))
    return doc


def changed_lines(original: str, mutated: str) -> range:
    """The lines of ``original`` a mutant rewrites (first to last differing)."""
    a, b = original.splitlines(), mutated.splitlines()
    top = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    bottom = 0
    while bottom < min(len(a), len(b)) - top and a[-1 - bottom] == b[-1 - bottom]:
        bottom += 1
    return range(top + 1, max(top + 1, len(a) - bottom) + 1)


def function_body_lines(source: str) -> set[int]:
    """The lines inside a function's body: run only when it is called (the
    others, module and class level, run when the module is imported)."""
    import ast
    out: set[int] = set()
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.update(range(n.body[0].lineno, n.end_lineno + 1))
        elif isinstance(n, ast.Lambda):
            out.update(range(n.body.lineno, n.body.end_lineno + 1))
    return out


def select_tests(covmap: dict, module: str, lines: range, budget: float, source: str | None = None) -> dict:
    """The default tests that execute a mutant's lines, fastest first, up to
    ``budget`` seconds of their measured time (one test at least).  Lines run
    only while the module is imported (constants, decorators, defaults, class
    bodies: outside every function body of ``source``; the map has no test
    for them, the module being imported while the suite is collected)
    select every test that executes any line of the module.
    {"tests": [...], "executing": n, "seconds": s, "import_time": bool}."""
    by_line = covmap["lines"].get(module, {})
    ctxs = set().union(*(by_line.get(str(ln), ()) for ln in lines)) if lines else set()
    import_time = False
    if ctxs <= {""}:
        in_body = function_body_lines(source) if source is not None else set(lines)
        if "" not in ctxs and all(ln in in_body for ln in lines):
            return {"tests": [], "executing": 0, "seconds": 0.0, "import_time": False}
        import_time = True
        ctxs = set().union(*by_line.values())
    ctxs.discard("")
    dur = covmap["durations"]
    chosen, total = [], 0.0
    for t in sorted(ctxs, key=lambda t: (dur.get(t, 1.0), t)):
        if chosen and total + dur.get(t, 1.0) > budget:
            break
        chosen.append(t)
        total += dur.get(t, 1.0)
    return {"tests": chosen, "executing": len(ctxs), "seconds": round(total, 2), "import_time": import_time}


def imported_modules(path: Path, root: Path = ROOT) -> set[str]:
    """The product modules a test file imports (``groupcheck.<package>...``),
    with those of the tests/ helper modules it imports, read from its source."""
    import ast
    seen, out, todo = set(), set(), [path]
    while todo:
        f = todo.pop()
        if f in seen or not f.exists():
            continue
        seen.add(f)
        for n in ast.walk(ast.parse(f.read_text())):
            names = []
            if isinstance(n, ast.Import):
                names = [a.name for a in n.names]
            elif isinstance(n, ast.ImportFrom) and n.module and not n.level:
                names = [n.module] + [f"{n.module}.{a.name}" for a in n.names]
            for name in names:
                parts = name.split(".")
                if parts[0] == "groupcheck" and len(parts) > 2:
                    for k in range(len(parts), 2, -1):
                        mod = "/".join(parts[1:k]) + ".py"
                        if (root / mod).exists():
                            out.add(mod)
                            break
                        pkg = root / "/".join(parts[1:k])
                        if (pkg / "__init__.py").exists():      # a package: its modules, as its __init__ may load them
                            out.update(str(f.relative_to(root)) for f in pkg.glob("*.py"))
                            break
                elif len(parts) == 1 and (path.parent / f"{name}.py").exists():
                    todo.append(path.parent / f"{name}.py")
    return out


def importers(module: str, root: Path = ROOT) -> list[str]:
    """The test files (names under tests/) that import ``module``, the most
    specific first: those named after it (test_impl_flush.py for
    impl/flush.py), then those importing the fewest product modules."""
    stem = Path(module).stem
    found = []
    for f in sorted((root / "tests").glob("test_*.py")):
        mods = imported_modules(f, root)
        if module in mods:
            found.append((stem not in f.stem, len(mods), f.name))
    return [name for *_, name in sorted(found)]
