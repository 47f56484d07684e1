"""Mutation benchmark: which layer of checks kills which fault in impl/.

cosmic-ray enumerates the mutation sites of the chosen modules (its operators
and its ``init`` work list) and makes each mutant's source
(``cosmic_ray.mutating.mutate_code``); this runner applies one mutant at a
time to a copy of the source tree, never to the tree it was started from,
and runs each layer of checks against it in a fresh process with a timeout:

* ``unit``: the module's unit and golden test files (``TESTS`` below);
* ``lockstep``: its Hypothesis lock-step files (tests/test_lockstep_*.py);
* ``campaign``: the audit's conformance stage on ``--runs`` drawn runs of
  each protocol whose simulated run calls the module's code, judged by the audit's own
  ``conformance_check`` (a run that does not conform, a violation no
  documented finding witnesses, a finding rate outside its band) and its
  fixed-stack campaigns;
* ``tlc``: TLC trace validation of ``--tlc-runs`` of those runs (the audit's
  ``tracevalidation_check``); killed when TLC rejects a run or disagrees
  with the replay;
* ``history``: the audit's history stage (``history_check``);
* ``cluster`` (only with ``--cluster``): the audit's cluster stage, a
  3-node UDP run.

A mutant is *killed* by a layer when the layer fails, times out or crashes,
*incompetent* when the mutated module no longer imports, and *survives*
when every layer passes.  A mutant of annotations alone is equivalent by
construction (they are never evaluated: no layer is run); a survivor
listed in ``EQUIVALENT`` (matched by module, operator and the changed line
before and after) has been read and judged to behave like the original;
any other survivor is a gap.  The
default tests are ``unit`` and ``lockstep``; the default audit is
``campaign``, ``tlc``, ``history`` (and ``cluster`` when run).  Rates count
the competent, non-equivalent mutants of the modules a layer covers.

The sample is deterministic (``--sample K --seed S``, spread evenly over
the modules); results are written to ``--out`` after every mutant, and
``--resume`` skips the mutants already there, except those named by
``--only``, whose ``--layers`` are measured again (after a test is added).
``--markdown FILE`` prints a results file as the tables of
docs/mutants.md.

    .venv/bin/python -m pip install -e '.[bench]'     # cosmic-ray
    nice -n 10 .venv/bin/python bench/mutants.py --sample 72 --seed 1 --out mutants.json
    .venv/bin/python bench/mutants.py --markdown mutants.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))      # bench/semantic.py, when this file is loaded by path
from groupcheck.conformance.findings import _binom_cdf as binom_cdf  # noqa: E402
from mutant_judged import EQUIVALENT, OPEN, PINNED  # noqa: E402  (the survivors read: data)
from mutant_layers import child  # noqa: E402  (the child side: one layer on a mutated tree)
from mutant_tests import (changed_lines, function_body_lines, importers, imported_modules,  # noqa: E402,F401
                          load_covmap, load_covmaps, select_tests)
INSTALL = "pip install -e '.[bench]'"

# the packages whose modules are sampled by default: every module of the
# product (proof encodings and stacks included)
PACKAGES = ("core", "impl", "conformance", "model", "cli")
FAMILIES = ("semantic", "cosmic-ray")


def product_modules(root: Path = ROOT) -> list[str]:
    return sorted(str(p.relative_to(root)) for pkg in PACKAGES for p in (root / pkg).rglob("*.py"))

# module -> (unit test files, lock-step test files) of the default suite that
# exercise it; the campaign-sized test files (test_campaign_*, the
# raincoreflush stack's) are left to the campaign layer, which runs the same
# simulations through the audit's judgment
TESTS = {
    "impl/sequencer.py": (["test_impl_sequencer.py", "test_impl_edges.py", "test_end_of_run.py"],
                          ["test_lockstep_sequencer.py"]),
    "impl/flush.py": (["test_impl_flush.py", "test_impl_edges.py", "test_codec_flush.py",
                       "test_raincoreflush_staleview.py", "test_flush_delta.py",
                       "test_flush_finding_leaver_view.py"],
                      ["test_lockstep_flush.py", "test_lockstep_raincoreflush.py"]),
    "impl/stable.py": (["test_impl_stable.py", "test_impl_edges.py", "test_codec_stable.py"],
                       ["test_lockstep_stable.py"]),
    "impl/raincore.py": (["test_impl_raincore.py", "test_golden_raincore_impl.py", "test_ringtransport.py"],
                         ["test_lockstep_raincore.py", "test_lockstep_raincoreflush.py"]),
    "impl/reliable.py": (["test_reliable.py", "test_impl_edges.py", "test_impl_stable.py"],
                         ["test_lockstep_flush.py", "test_lockstep_sequencer.py", "test_lockstep_stable.py"]),
    "impl/codec.py": (["test_codec.py", "test_codec_flush.py", "test_codec_stable.py"], []),
    "core/properties.py": (["test_history.py", "test_findings.py", "test_properties_witness.py"], []),
    # the compositions' replay bindings: a mutant that blinds one is caught only by tests
    # that feed it a faulty trace (the campaign's runs are judged by the mutant itself)
    "conformance/replay/sequencerflush.py": (["test_conform_sequencerflush.py", "test_conform_raincoresequencerflush.py",
                                       "test_forged_traces.py", "test_crash_cuts.py",
                                       "test_tlctrace_sequencerflush.py"], ["test_lockstep_flush.py"]),
    "conformance/replay/raincoreflush.py": (["test_conform_raincoresequencerflush.py", "test_raincoreflush_stack.py",
                                      "test_raincoreflush_staleview.py", "test_raincoreflush_suspect.py",
                                      "test_raincoreflush_twoinitiators.py", "test_raincoreflush_lossy.py",
                                      "test_forged_traces.py", "test_tlctrace_raincoreflush.py", "test_findings.py"],
                                     ["test_lockstep_raincoreflush.py"]),
}

TEST_LAYERS = ("tests", "unit", "lockstep")
AUDIT_LAYERS = ("campaign", "tlc", "history", "cluster")


@dataclass
class Mutant:
    module: str           # path relative to the tree, e.g. impl/sequencer.py
    operator: str         # cosmic-ray operator name
    occurrence: int       # the operator's n-th site in the module (cosmic-ray's numbering)
    line: int
    before: str = ""      # the changed line, stripped
    after: str = ""

    @property
    def key(self) -> str:
        return f"{self.module}:{self.operator}:{self.occurrence}"


def require_cosmic_ray():
    try:
        import cosmic_ray.mutating  # noqa: F401
    except ImportError:
        print(f"bench/mutants.py needs cosmic-ray for its family: {INSTALL}, or --families semantic",
              file=sys.stderr)
        sys.exit(3)


def _cosmic_ray_sites(source: str) -> list[tuple[str, int, int]]:
    """(operator, occurrence, line) of every mutation cosmic-ray's ``init``
    lists (operators without arguments), numbered as ``init`` and
    ``mutate_code`` number them (per operator, in its walk order)."""
    from cosmic_ray.ast import ast_nodes, get_ast
    from cosmic_ray.plugins import get_operator, operator_names
    tree = get_ast(source)
    nodes = list(ast_nodes(tree))
    out = []
    for name in operator_names():
        cls = get_operator(name)
        if cls.arguments():
            continue
        op = cls()
        k = 0
        for node in nodes:
            for start, _ in op.mutation_positions(node):
                out.append((name, k, start[0]))
                k += 1
    return out


def enumerate_mutants(tree: Path, modules, families=FAMILIES) -> list[Mutant]:
    """Every mutation of ``modules`` by the chosen families (cosmic-ray's
    operators without arguments, bench/semantic.py's), in a stable order."""
    import semantic
    out = []
    for mod in modules:
        src = (tree / mod).read_text()
        if "semantic" in families:
            out += [Mutant(mod, op, k, line) for op, k, line in semantic.listing(src)]
        if "cosmic-ray" in families:
            out += [Mutant(mod, op, k, line) for op, k, line in _cosmic_ray_sites(src)]
    return sorted(out, key=lambda m: (m.module, m.line, m.operator, m.occurrence))


def family(m) -> str:
    op = m.operator if isinstance(m, Mutant) else m["operator"]
    return "semantic" if op.startswith("semantic/") else "hand" if op.startswith("hand/") else "cosmic-ray"


# ---------------------------------------------------------------- mutants written by hand (--hand FILE)

# operator ("hand/<id>") -> the file's entry: module, before (a snippet found
# exactly once in the module), after, why
HAND: dict[str, dict] = {}


def load_hand(path: Path, tree: Path) -> list[Mutant]:
    """The mutants of a JSON list of {"id", "module", "before", "after",
    "why"}, each a snippet of its module replaced once (family "hand",
    operator ``hand/<id>``); refused unless each ``before`` occurs exactly
    once in its module of ``tree``."""
    out = []
    for e in json.loads(Path(path).read_text()):
        src = (tree / e["module"]).read_text()
        n = src.count(e["before"])
        if n != 1:
            sys.exit(f"{path}: mutant {e['id']}: its 'before' occurs {n} times in {e['module']}, not once")
        op = f"hand/{e['id']}"
        HAND[op] = e
        out.append(Mutant(e["module"], op, 0, src[:src.index(e["before"])].count("\n") + 1))
    return out


def quotas(lines: dict[str, int], k: int) -> dict[str, int]:
    """``k`` mutants over the modules in proportion to their lines (largest
    remainders first); when ``k`` covers every module, each gets one at least."""
    mods = sorted(m for m, n in lines.items() if n > 0)
    floor = 1 if k >= len(mods) else 0
    rest = k - floor * len(mods)
    total = sum(lines[m] for m in mods) or 1
    share = {m: rest * lines[m] / total for m in mods}
    q = {m: floor + int(share[m]) for m in mods}
    left = k - sum(q.values())
    for m in sorted(mods, key=lambda m: (-(share[m] - int(share[m])), m))[:left]:
        q[m] += 1
    return {m: n for m, n in q.items() if n}


def sample(mutants: list[Mutant], k: int, seed: int, lines: dict[str, int] | None = None) -> list[Mutant]:
    """``k`` mutants stratified by module and weighted by its lines
    (``quotas``; equal weights without ``lines``).  Within a module the
    families take turns, and each draw picks an operator uniformly, then one
    of its sites (so the commonest operator does not crowd out the rest).
    A module with fewer mutants than its quota gives the rest to the others."""
    rng = random.Random(seed)
    per: dict[str, list[Mutant]] = {}
    for m in mutants:
        per.setdefault(m.module, []).append(m)
    weights = {mod: (lines or {}).get(mod, 1) for mod in per}
    out: list[Mutant] = []
    pools = {mod: {} for mod in per}
    for mod, ms in per.items():
        for m in ms:
            pools[mod].setdefault(family(m), {}).setdefault(m.operator, []).append(m)
    while len(out) < k and any(pools.values()):
        live = {mod: w for mod, w in weights.items() if pools[mod]}
        for mod, n in quotas(live, k - len(out)).items():
            fams = pools[mod]
            for j in range(n):
                if not fams:
                    break
                fam = sorted(fams)[len(out) % len(fams)]
                ops = fams[fam]
                op = rng.choice(sorted(ops))
                m = ops[op].pop(rng.randrange(len(ops[op])))
                out.append(m)
                if not ops[op]:
                    del ops[op]
                if not ops:
                    del fams[fam]
    return sorted(out[:k], key=lambda m: (m.module, m.line, m.operator, m.occurrence))


def mutated_source(original: str, m: Mutant) -> str | None:
    if m.operator.startswith("hand/"):
        e = HAND.get(m.operator)
        if e is None or original.count(e["before"]) != 1:
            return None
        return original.replace(e["before"], e["after"])
    if m.operator.startswith("semantic/"):
        import semantic
        return semantic.mutate(original, m.operator, m.occurrence)
    from cosmic_ray.mutating import mutate_code
    from cosmic_ray.plugins import get_operator
    return mutate_code(original, get_operator(m.operator)(), m.occurrence)


def changed_line(original: str, mutated: str, m: Mutant) -> None:
    """Fill ``m.before``/``m.after`` with the first line that differs."""
    a, b = original.splitlines(), mutated.splitlines()
    for k, (x, y) in enumerate(zip(a, b)):
        if x != y:
            m.line, m.before, m.after = k + 1, x.strip(), y.strip()
            return
    m.before, m.after = "", ""


ANNOTATION_ONLY = ("changes a type annotation only, which `from __future__ import annotations` keeps as a "
                   "string nothing evaluates")


def annotation_only(original: str, mutated: str) -> bool:
    """Whether the mutant differs from the original in annotations alone,
    in a module whose annotations are never evaluated: equivalent by
    construction, so no layer is run."""
    import ast

    def bare(src: str):
        tree = ast.parse(src)
        if not any(isinstance(n, ast.ImportFrom) and n.module == "__future__"
                   and any(a.name == "annotations" for a in n.names) for n in tree.body):
            return None
        for n in ast.walk(tree):
            if isinstance(n, (ast.arg, ast.AnnAssign)):
                n.annotation = None
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n.returns = None
        return ast.dump(tree)
    try:
        a = bare(original)
        return a is not None and a == bare(mutated)
    except SyntaxError:
        return False


# ---------------------------------------------------------------- the CI guard (tests/test_mutation_guard.py)

GUARD_MUTANTS = 20
GUARD_FILES = 2          # test files run per mutant
GUARD_TIMEOUT = 45.0     # seconds per mutant's tests; past it the mutant is inconclusive
GUARD_THRESHOLD = 0.32   # the guard's kill rate as measured: 12 of 37 conclusive mutants in two draws (docs/mutants.md)
GUARD_ALPHA = 0.01       # it fails when so few kills would happen with probability under this at that rate
GUARD_SECONDS = 540      # no mutant is started after this many seconds (the guard keeps within 10 minutes)


def changed_modules(root: Path, base: str) -> list[str]:
    """The product modules a change touches: those that differ, committed or
    not, from where the checkout left ``base`` (their merge base, so that
    what ``base`` gained since is not counted)."""
    mb = subprocess.run(["git", "merge-base", base, "HEAD"], cwd=root, capture_output=True, text=True)
    if mb.returncode:
        return []
    r = subprocess.run(["git", "diff", "--name-only", mb.stdout.strip(), "--", *PACKAGES], cwd=root,
                       capture_output=True, text=True)
    if r.returncode:
        return []
    return sorted(f for f in r.stdout.split() if f.endswith(".py") and (root / f).exists())


def enclosing_names(source: str, line: int) -> list[str]:
    """The functions and classes whose body holds ``line``, innermost first."""
    import ast
    out = []
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.lineno <= line <= n.end_lineno:
            out.append((n.lineno, n.name))
    return [name for _, name in sorted(out, reverse=True)]


def guard_files(module: str, source: str, line: int, root: Path) -> list[str]:
    """The (at most GUARD_FILES) test files the guard runs for a mutant on
    ``line`` of ``module``: of those that import the module, first those
    that name the function (else the class) the line is in, the innermost
    first, then by ``importers``'s order (named after the module, fewest
    product modules).  A file that names the mutated function is the one
    most likely to pin what it decides."""
    files = importers(module, root)
    names = enclosing_names(source, line)
    text = {f: (root / "tests" / f).read_text(encoding="utf-8") for f in files}

    def rank(f: str) -> int:
        return next((k for k, name in enumerate(names) if re.search(rf"\b{re.escape(name)}\b", text[f])),
                    len(names))
    return sorted(files, key=lambda f: (rank(f), files.index(f)))[:GUARD_FILES]


def guard(root: Path, base: str, k: int, seed: int, threshold: float, log=print,
          until: float | None = None) -> dict:
    """``k`` semantic mutants of the modules a change touches (against
    ``base``; every module when it touches none), each run against the
    default tests of the (at most ``GUARD_FILES``) test files that import
    its module, with ``-x`` and a timeout.  Logs every mutant and the
    survivors; ``passed`` unless the kills of the non-equivalent mutants
    that finished are so few that, at the kill rate ``threshold``, as few
    or fewer have probability under GUARD_ALPHA.  No mutant is started
    past ``GUARD_SECONDS`` or the time ``until`` (seconds since the epoch)."""
    stop = min(time.time() + GUARD_SECONDS, until or float("inf"))
    modules = changed_modules(root, base)
    scope = "changed" if modules else "all"
    modules = modules or product_modules(root)
    lines = {mod: len((root / mod).read_text().splitlines()) for mod in modules}
    chosen = sample(enumerate_mutants(root, modules, ("semantic",)), k, seed, lines)
    log(f"mutation guard: {len(chosen)} semantic mutants of {len(modules)} {scope} module(s) "
        f"(base {base}, seed {seed})")
    tree = Tree(root)
    results = []
    try:
        for m in chosen:
            if time.time() >= stop:
                log(f"  time is up: {len(chosen) - len(results)} mutants not run")
                break
            original = (tree.root / m.module).read_text()
            mutated = mutated_source(original, m)
            changed_line(original, mutated, m)
            files = guard_files(m.module, original, m.line, tree.root)
            rec = {"key": m.key, **asdict(m), "status": "", "files": files, "layers": {}}
            try:
                tree.write(m.module, mutated)
                imp = subprocess.run([sys.executable, "-c", f"import {module_name(m.module)}"], cwd=tree.root,
                                     env=tree.env, capture_output=True, text=True, timeout=IMPORT_TIMEOUT)
                if imp.returncode:
                    rec["status"] = "incompetent"
                elif not files:
                    rec["layers"]["unit"] = {"outcome": "survived", "why": "no test file imports the module"}
                else:
                    rec["layers"]["unit"] = run_layer(tree, "unit", files, [], None, GUARD_TIMEOUT)
            finally:
                tree.write(m.module, original)
            rec["annotation_only"] = False
            classify(rec)
            if rec["layers"].get("unit", {}).get("outcome") == "timeout":
                rec["status"] = "inconclusive"
            results.append(rec)
            why = rec["layers"].get("unit", {}).get("why", "")
            log(f"  {rec['status']:>12}  {m.module}:{m.line}  `{m.before}` -> `{m.after}`  {why[:120]}")
    finally:
        tree.cleanup()
    counted = [r for r in results if r["status"] in ("killed", "survived")]
    killed = sum(r["status"] == "killed" for r in counted)
    rate = killed / len(counted) if counted else 1.0
    survivors = [r for r in counted if r["status"] == "survived"]
    # a clear fall, not a low draw: the kills of a sample this small vary widely at the measured
    # rate, so the guard fails only when as few kills are improbable at it (one-sided binomial)
    p = binom_cdf(killed, len(counted), threshold) if counted else 1.0
    log(f"mutation guard: {killed} of {len(counted)} killed ({100 * rate:.0f} %); at the measured rate "
        f"{100 * threshold:.0f} % so few kills or fewer have probability {p:.3f} (fails under {GUARD_ALPHA}); "
        f"survivors:" + ("" if survivors else " none"))
    for r in survivors:
        log(f"  {r['key']} line {r['line']}: `{r['before']}` -> `{r['after']}` (ran {', '.join(r['files']) or 'nothing'})")
    return {"scope": scope, "results": results, "killed": killed, "counted": len(counted), "rate": rate,
            "p": p, "passed": p >= GUARD_ALPHA}


class Tree:
    """A copy of the source tree whose ``groupcheck`` package a child process
    imports (through ``shim/groupcheck``, found on PYTHONPATH before the
    editable install's finder).  ``apply`` writes one mutant, ``restore``
    puts the original back; each write gets a fresh modification time so
    no cached bytecode of another version is ever reused."""

    PACKAGES = ("core", "impl", "conformance", "model", "spec", "cli")

    def __init__(self, src: Path):
        self.dir = Path(tempfile.mkdtemp(prefix="groupcheck-mutants-"))
        self.root = self.dir / "tree"
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        for name in self.PACKAGES + ("tests", "bench", "docs"):        # docs: tests read its pages
            shutil.copytree(src / name, self.root / name, ignore=ignore)
        for name in ("pyproject.toml", "README.md", "Makefile"):
            shutil.copy2(src / name, self.root / name)
        pkg = self.dir / "shim" / "groupcheck"
        pkg.mkdir(parents=True)
        for name in self.PACKAGES:
            (pkg / name).symlink_to(self.root / name, target_is_directory=True)
        self._mtime = int(time.time()) + 10
        self.env = {**os.environ, "PYTHONPATH": str(self.dir / "shim"), "HYPOTHESIS_PROFILE": "ci"}

    def write(self, module: str, text: str) -> None:
        path = self.root / module
        path.write_text(text)
        self._mtime += 2
        os.utime(path, (self._mtime, self._mtime))

    def cleanup(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------- runner (parent side)

def _end(p: subprocess.Popen) -> None:
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.communicate()


IMPORT_TIMEOUT = 300


def run_layer(tree: Tree, layer: str, files: list[str], protocols: list[str], a, timeout: float) -> dict:
    """One layer on the tree as it is now: {"outcome": killed|survived|timeout, "why", "seconds"}."""
    py = sys.executable
    if layer in TEST_LAYERS:
        cmd = [py, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--no-header", "-m", "not slow",
               *(files if layer == "tests" else [f"tests/{f}" for f in files])]
    else:
        cmd = [py, str(tree.root / "bench" / "mutants.py"), "--layer", layer, "--protocols", ",".join(protocols),
               "--runs", str(a.runs), "--seed", str(a.run_seed), "--tlc-runs", str(a.tlc_runs)]
    t0 = time.monotonic()
    # its own session, so a timeout ends the layer's children too (TLC's JVM, a cluster's nodes)
    p = subprocess.Popen(cmd, cwd=tree.root, env=tree.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    try:
        stdout, stderr = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _end(p)
        return {"outcome": "timeout", "why": f"over {timeout:.0f} s", "seconds": round(time.monotonic() - t0, 1)}
    except BaseException:
        _end(p)
        raise
    _end(p)         # anything the layer left running
    secs = round(time.monotonic() - t0, 1)
    if layer in TEST_LAYERS:
        if p.returncode == 0:
            return {"outcome": "survived", "why": "", "seconds": secs}
        failed = [ln for ln in stdout.splitlines() if ln.startswith(("FAILED", "ERROR"))]
        return {"outcome": "killed", "why": (failed[:1] or stdout.strip().splitlines()[-1:] or [""])[0][:300],
                "seconds": secs}
    try:
        res = json.loads(stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        tail = (stderr.strip().splitlines() or ["no output"])[-1]
        return {"outcome": "killed", "why": f"crashed: {tail[:300]}", "seconds": secs}
    return {"outcome": "killed" if res["killed"] else "survived", "why": res.get("why", ""), "seconds": secs}


FALLBACK_FILES = 3      # test files run for a mutant on lines the map has no test for


def fallback_files(module: str, root: Path) -> list[str]:
    """The test files ``fallback`` runs: those that import the module, and
    for a module of the CLI those that run the CLI as a program (through
    tests/cli_helpers.py), the most specific first, FALLBACK_FILES at most."""
    files = importers(module, root)
    if module.startswith("cli/"):
        files += [f.name for f in sorted((root / "tests").glob("test_*.py"))
                  if f.name not in files and "cli_helpers" in f.read_text(encoding="utf-8")]
    return files[:FALLBACK_FILES]


def fallback(tree: Tree, files: list[str], a) -> dict:
    """The ``tests`` layer for a mutant on lines no test executes in the map:
    the map misses what runs in another process (the explorer's worker
    processes, a CLI or cluster node started by a test) and what a cache
    shared by a worker's tests ran for the first of them only, so the
    default tests of the (at most FALLBACK_FILES) test files that import the
    module run instead.  A time-out here is no kill (whole files may
    outlast the budget): the mutant is counted as not reached."""
    limit = max(a.min_timeout, 3 * a.budget + 30)
    r = run_layer(tree, "tests", [f"tests/{f}" for f in files], [], a, limit)
    r.update({"selected": len(files), "executing": 0, "fallback": files})
    if r["outcome"] == "timeout":
        r.update(outcome="survived", why=f"the {len(files)} test files that import the module did not finish "
                                         f"within {limit:.0f} s")
    if r["outcome"] == "survived":
        r["unexecuted"] = True
        r["why"] = r.get("why") or (f"no default test in the map executes the mutated lines; the default tests "
                                    f"of {', '.join(files)} (importing the module) pass")
    return r


def module_name(module: str) -> str:
    return "groupcheck." + module[:-3].replace("/", ".")


def protocols_running(tree: Tree) -> dict[str, list[str]]:
    """protocol -> the files whose code its run calls (each in a fresh process)."""
    from groupcheck.conformance.replay import registry
    out = {}
    for p in registry.available():
        r = subprocess.run([sys.executable, str(tree.root / "bench" / "mutants.py"), "--layer", "loads",
                            "--protocols", p], cwd=tree.root, env=tree.env, capture_output=True, text=True,
                           check=True)
        out[p] = json.loads(r.stdout.strip().splitlines()[-1])
    return out


def plan(tree: Tree, modules, layers) -> dict[str, dict]:
    """module -> {layer: (test files, protocols)}: what each layer runs for a mutant of it
    (the ``tests`` layer's tests are chosen per mutant, by ``select_tests``)."""
    runs = protocols_running(tree) if set(layers) - set(TEST_LAYERS) else {}
    out = {}
    for mod in modules:
        unit, lock = TESTS.get(mod, ([], []))
        protos = [p for p, files in runs.items() if mod in files]
        out[mod] = {layer: {"files": {"unit": unit, "lockstep": lock}.get(layer, []),
                            "protocols": [] if layer in TEST_LAYERS else protos}
                    for layer in layers
                    if layer != "tests" and (unit if layer == "unit" else lock if layer == "lockstep" else protos)}
    return out


def summarise(results: list[dict], layers) -> dict:
    competent = [r for r in results if r["status"] != "incompetent"]
    equivalent = [r for r in competent if r["status"] == "equivalent"]
    counted = [r for r in competent if r["status"] != "equivalent"]

    def rate(rs, names):
        rs = [r for r in rs if any(n in r["layers"] for n in names)]
        k = sum(any(r["layers"].get(n, {}).get("outcome") in ("killed", "timeout") for n in names) for r in rs)
        return {"killed": k, "of": len(rs), "rate": round(k / len(rs), 3) if rs else None}

    per_module = {}
    for mod in dict.fromkeys(r["module"] for r in counted):
        rs = [r for r in counted if r["module"] == mod]
        per_module[mod] = {"default_tests": rate(rs, TEST_LAYERS), "default_audit": rate(rs, AUDIT_LAYERS),
                           "any": rate(rs, layers)}

    def by(key):
        out = {}
        for v in sorted({key(r) for r in counted}):
            rs = [r for r in counted if key(r) == v]
            out[v] = {"default_tests": rate(rs, TEST_LAYERS), "default_audit": rate(rs, AUDIT_LAYERS),
                      "any": rate(rs, layers)}
        return out
    return {
        "mutants": len(results), "incompetent": len(results) - len(competent), "equivalent": len(equivalent),
        "counted": len(counted),
        "per_layer": {n: rate(counted, [n]) for n in layers},
        "default_tests": rate(counted, TEST_LAYERS),
        "default_audit": rate(counted, AUDIT_LAYERS),
        "any_layer": rate(counted, layers),
        "per_module": per_module,
        "per_package": by(lambda r: package(r["module"])),
        "per_family": by(family),
        "per_operator": by(lambda r: r["operator"]),
        "survivors": [r["key"] for r in counted if r["status"] == "survived"],
        # the default tests with the pinning tests added since (each checked on its mutant)
        "default_tests_with_pins": {"killed": rate(counted, TEST_LAYERS)["killed"] + sum(
            1 for r in counted if r["status"] == "survived" and r.get("pinned")), "of": len(counted)},
        # survivors on lines no default test executes (the tests layer ran nothing)
        "unexecuted": [r["key"] for r in counted if r["status"] == "survived"
                       and r["layers"].get("tests", {}).get("unexecuted")],
        "unverified": [r["key"] for r in counted if r["layers"].get("tests", {}).get("outcome") == "unverified"],
    }


def package(module: str) -> str:
    """A module's layer of the product: impl, conformance, model, model/proofs, cli."""
    return "model/proofs" if module.startswith("model/proofs/") else module.split("/")[0]


def first_failed(why: str) -> str | None:
    """The test id of a pytest summary line (``FAILED tests/x.py::t - ...``)."""
    parts = why.split()
    return parts[1] if len(parts) > 1 and parts[0] in ("FAILED", "ERROR") and "::" in parts[1] else None


def verify_kills(tree: Tree, doc: dict, timeout: float = 900) -> None:
    """Run every test that killed a mutant on the unmutated tree: a kill by
    a test that fails there too (flaky, or hurt by running alone) is marked
    ``unverified`` and not counted."""
    def fn(t):      # the test function: pytest prints a parameter's id escaped, so it may not select it back
        return t.split("[", 1)[0]
    ids = sorted({fn(t) for r in doc["results"] for t in [first_failed(r["layers"].get("tests", {}).get("why", ""))]
                  if t and r["layers"]["tests"]["outcome"] == "killed"} - set(doc.get("verified", [])))
    if not ids:
        return
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--no-header", *ids],
                       cwd=tree.root, env=tree.env, capture_output=True, text=True, timeout=timeout)
    if p.returncode not in (0, 1):
        sys.exit(f"the killing tests could not be run on the unmutated tree (pytest {p.returncode}): "
                 f"{(p.stdout.strip().splitlines() or [''])[-1]}")
    bad = {fn(t) for ln in p.stdout.splitlines() if ln.startswith(("FAILED", "ERROR"))
           for t in [first_failed(ln)] if t}
    doc.setdefault("failing_unmutated", [])
    doc["failing_unmutated"] = sorted(set(doc["failing_unmutated"]) | (bad - {None}))
    doc["verified"] = sorted((set(doc.get("verified", [])) | set(ids)) - bad)
    for r in doc["results"]:
        t = r["layers"].get("tests", {})
        if t.get("outcome") == "killed" and fn(first_failed(t.get("why", "")) or "") in bad:
            t["outcome"] = "unverified"


def classify(rec: dict) -> None:
    """Set a competent mutant's status (and an equivalent's why) from its
    layers and ``EQUIVALENT`` as it is now (so a resumed file is re-judged)."""
    if rec["status"] == "incompetent":
        return
    if rec.get("annotation_only"):
        rec["status"], rec["why"] = "equivalent", ANNOTATION_ONLY
        return
    if any(v["outcome"] in ("killed", "timeout") for v in rec["layers"].values()):
        rec["status"] = "killed"
        return
    why = EQUIVALENT.get((rec["module"], rec["operator"], rec["before"], rec["after"]))
    rec["status"] = "equivalent" if why else "survived"
    if why:
        rec["why"] = why
    gap = OPEN.get(rec["key"])
    if not why and gap and gap[0] == rec["before"]:
        rec["why"] = gap[1]
    pin = PINNED.get(rec["key"])
    if not why and pin and pin[0] == rec["before"]:
        rec["pinned"] = pin[1]
        test = pin[1] if "::" in pin[1] else f"tests/test_pinned_decisions.py::{pin[1]}"
        rec["why"] = f"a gap: now killed by {test}"


def merge(doc: dict, other: dict) -> dict:
    """``doc`` with ``other``'s layers added to each mutant both measured (the
    same seed and sample, other layers: two runs side by side); a mutant
    only ``other`` measured is left out, so the rates count one sample."""
    theirs = {r["key"]: r for r in other["results"]}
    for rec in doc["results"]:
        o = theirs.get(rec["key"])
        if o is None or o["status"] == "incompetent" or rec["status"] == "incompetent":
            continue
        rec["layers"].update({k: v for k, v in o["layers"].items() if k not in rec["layers"]})
    doc["layers"] = list(dict.fromkeys(run_layers(doc) + run_layers(other)))
    doc["merged"] = {"layers": run_layers(other), "started": other.get("started"),
                     "finished": other.get("finished"), "measured": sum(r["key"] in theirs for r in doc["results"])}
    return doc


def write(out: Path, doc: dict) -> None:
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(out)


def run_layers(doc: dict) -> list[str]:
    """The layers a results file measured."""
    args = doc["args"]
    return doc.get("layers") or [n for n in args["layers"].split(",") if n] + (["cluster"] if args["cluster"] else [])


def finish(out: Path, doc: dict, layers) -> None:
    for rec in doc["results"]:
        classify(rec)
    doc["summary"] = summarise(doc["results"], doc.get("layers", layers))
    doc["equivalent"] = [{k: r[k] for k in ("key", "line", "before", "after", "why")}
                         for r in doc["results"] if r["status"] == "equivalent"]
    write(out, doc)


def rejudge(doc: dict, root: Path) -> None:
    """Judge a results file's mutants with this version's rules (the
    annotation test on the sources under ``root``, ``EQUIVALENT``)."""
    for rec in doc["results"]:
        m = Mutant(rec["module"], rec["operator"], rec["occurrence"], rec["line"])
        original = (root / m.module).read_text()
        mutated = mutated_source(original, m)     # None: the source changed since (the record stays as judged)
        rec["annotation_only"] = mutated is not None and annotation_only(original, mutated)
        classify(rec)


def markdown(doc: dict) -> str:
    """The figures of a results file as the Markdown tables of docs/mutants.md
    (judged by ``rejudge`` first)."""
    rejudge(doc, ROOT)
    sm = summarise(doc["results"], run_layers(doc))
    pct = lambda r: f"{r['killed']} of {r['of']} ({100 * r['rate']:.0f} %)" if r["of"] else "-"  # noqa: E731
    lines = ["| layer | killed / mutants it runs on |", "| --- | ---: |"]
    lines += [f"| {n} | {pct(r)} |" for n, r in sm["per_layer"].items()]
    lines += [f"| **default tests** (tests, unit, lockstep) | {pct(sm['default_tests'])} |",
              f"| **default audit** (campaign, tlc, history) | {pct(sm['default_audit'])} |",
              f"| **any layer** | {pct(sm['any_layer'])} |",
              f"| **default tests with the pinning tests** (PINNED) | {pct(with_pins(doc['results']))} |", "",
              "| module | default tests | with the pinning tests | default audit | any layer |",
              "| --- | ---: | ---: | ---: | ---: |"]
    lines += [f"| {mod} | {pct(r['default_tests'])} | {pct(with_pins(doc['results'], mod=mod))} | "
              f"{pct(r['default_audit'])} | {pct(r['any'])} |" for mod, r in sorted(sm["per_module"].items())]
    for title, key in (("package", "per_package"), ("family", "per_family"), ("operator", "per_operator")):
        lines += ["", f"| {title} | default tests | with the pinning tests |", "| --- | ---: | ---: |"]
        lines += [f"| {v} | {pct(r['default_tests'])} | "
                  f"{pct(with_pins(doc['results'], pkg=v if key == 'per_package' else None, fam=v if key == 'per_family' else None, op=v if key == 'per_operator' else None))} |"
                  for v, r in sm[key].items()]
    rows = [r for r in doc["results"] if r["status"] in ("survived", "equivalent", "incompetent")]
    if rows:
        lines += ["", "| mutant | line | change | status | why |", "| --- | ---: | --- | --- | --- |"]
        cell = lambda t: t.replace("|", "\\|")  # noqa: E731
        lines += [f"| {r['key']} | {r['line']} | `{cell(r['before'])}` → `{cell(r['after'])}` | {r['status']} | "
                  f"{cell(r.get('why') or survivor_why(r))} |" for r in rows]
    return "\n".join(lines)


def with_pins(results: list[dict], mod=None, pkg=None, fam=None, op=None) -> dict:
    """The default tests' kills of the counted mutants (of a module, package,
    family or operator) with the survivors PINNED since counted as killed."""
    rs = [r for r in results if r["status"] in ("killed", "survived")
          and (mod is None or r["module"] == mod) and (pkg is None or package(r["module"]) == pkg)
          and (fam is None or family(r) == fam) and (op is None or r["operator"] == op)]
    k = sum(1 for r in rs if r.get("pinned") or any(r["layers"].get(n, {}).get("outcome") in ("killed", "timeout")
                                                   for n in TEST_LAYERS))
    return {"killed": k, "of": len(rs), "rate": round(k / len(rs), 3) if rs else None}


def survivor_why(rec: dict) -> str:
    """What the tests layer saw of a survivor not yet read."""
    t = rec["layers"].get("tests")
    if not t:
        return ""
    if t.get("unexecuted"):
        return t.get("why") or "no default test executes the mutated lines"
    return (f"{t.get('executing')} default tests execute it ({t.get('selected')} run"
            + (", import-time line" if t.get("import_time") else "") + "); none fails")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--modules", nargs="*", default=None, help="modules to sample (default: every module of "
                    "impl/, conformance/, model/ and cli/)")
    ap.add_argument("--families", default=",".join(FAMILIES), help="operator families: semantic, cosmic-ray")
    ap.add_argument("--sample", type=int, default=300, help="mutants measured (0: all)")
    ap.add_argument("--seed", type=int, default=1, help="the sample's seed")
    ap.add_argument("--only", nargs="*", default=[], help="mutant keys (module:operator:occurrence) to run")
    ap.add_argument("--runs", type=int, default=50, help="drawn runs per protocol (campaign, history)")
    ap.add_argument("--run-seed", type=int, default=0, help="the campaign's first seed")
    ap.add_argument("--tlc-runs", type=int, default=1, help="runs per protocol validated by TLC")
    ap.add_argument("--layers", default="tests", help="tests (the default tests that execute the mutant's "
                    "lines, from --covmap), unit, lockstep (the files in TESTS), campaign, tlc, history")
    ap.add_argument("--covmap", nargs="+", help="the base name bench/covmap.py recorded the default suite under "
                    "(GROUPCHECK_COVMAP); needed by the tests layer; several: their union (say, the suite's and "
                    "one of test files added since)")
    ap.add_argument("--hand", metavar="FILE", help="measure the mutants written by hand in FILE (a JSON list of "
                    "id, module, before, after, why; bench/hand_mutants.json) instead of drawing a sample; "
                    "--only takes their ids")
    ap.add_argument("--budget", type=float, default=30.0, help="the tests layer's share of a mutant: the "
                    "fastest executing tests up to this many seconds of their measured time")
    ap.add_argument("--cluster", action="store_true", help="add the (slow) cluster layer")
    ap.add_argument("--timeout", type=float, default=2.0,
                    help="a layer's timeout, times its unmutated time (at least --min-timeout)")
    ap.add_argument("--min-timeout", type=float, default=20.0)
    ap.add_argument("--tree", default=str(ROOT), help="the source tree to measure (a checkout of another "
                    "commit, e.g. before and after a change to the tests); it is copied, never changed")
    ap.add_argument("--out", default="mutants.json")
    ap.add_argument("--resume", action="store_true", help="keep the mutants already in --out")
    ap.add_argument("--markdown", metavar="RESULTS", help="print a results file's figures as Markdown, run nothing")
    ap.add_argument("--merge", nargs=2, metavar=("RESULTS", "OTHER"),
                    help="add OTHER's layers to RESULTS's mutants (the same sample measured by other layers in "
                         "another run), written to --out; run nothing")
    ap.add_argument("--guard", action="store_true", help="the CI guard: --guard-mutants semantic mutants of "
                    "the modules changed against --base, their importing test files, a pass/fail kill rate")
    ap.add_argument("--base", default="main")
    ap.add_argument("--guard-mutants", type=int, default=GUARD_MUTANTS)
    ap.add_argument("--threshold", type=float, default=GUARD_THRESHOLD)
    # child side: one layer on the tree this file is in
    ap.add_argument("--layer", help=argparse.SUPPRESS)
    ap.add_argument("--protocols", default="", help=argparse.SUPPRESS)
    ap.add_argument("--module-name", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.layer:
        child(a)
        return
    if a.markdown:
        print(markdown(json.loads(Path(a.markdown).read_text())))
        return
    if a.merge:
        doc = merge(*(json.loads(Path(f).read_text()) for f in a.merge))
        finish(Path(a.out), doc, doc["layers"])
        return
    # a TERM (or an INT ignored in a background job's shell) still restores and removes the copy
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if a.guard:
        res = guard(Path(a.tree).resolve(), a.base, a.guard_mutants, a.seed, a.threshold,
                    log=lambda t: print(t, flush=True))
        sys.exit(0 if res["passed"] else 1)
    families = [f for f in a.families.split(",") if f]
    if "cosmic-ray" in families:
        require_cosmic_ray()
    layers = [n for n in a.layers.split(",") if n] + (["cluster"] if a.cluster else [])
    out = Path(a.out)
    tree = Tree(Path(a.tree).resolve())
    if a.modules is None:
        a.modules = product_modules(tree.root)
    if "tests" in layers and not a.covmap:
        sys.exit("the tests layer needs --covmap (bench/covmap.py's map of the default suite)")
    covmap = load_covmaps(a.covmap) if "tests" in layers else None
    hand = load_hand(Path(a.hand), tree.root) if a.hand else None
    if hand is not None:
        a.modules = list(dict.fromkeys(m.module for m in hand))
        by_id = {m.operator[len("hand/"):]: m.key for m in hand}
        a.only = [by_id.get(k, k) for k in a.only]
    try:
        mutants = hand if hand is not None else enumerate_mutants(tree.root, a.modules, families)
        lines = {mod: len((tree.root / mod).read_text().splitlines()) for mod in a.modules}
        chosen = ([m for m in mutants if m.key in set(a.only)] if a.only else mutants if hand is not None else
                  sample(mutants, a.sample, a.seed, lines) if a.sample else mutants)
        layout = plan(tree, a.modules, layers)
        doc = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                           "load": os.getloadavg()[0]},
               "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "args": {k: v for k, v in vars(a).items() if k not in ("layer", "protocols", "module_name")},
               "enumerated": {mod: sum(m.module == mod for m in mutants) for mod in a.modules},
               "lines": lines,
               "layers": layers, "plan": layout, "baseline": {}, "results": []}
        if a.resume and out.exists():
            old = json.loads(out.read_text())
            doc["results"], doc["baseline"] = old.get("results", []), old.get("baseline", {})
            if a.only:                  # a re-measurement: the file stays the run it was
                doc["remeasured"] = doc.pop("args")
                doc["args"], doc["started"] = old["args"], old["started"]
                doc["layers"] = list(dict.fromkeys(run_layers(old) + layers))
                doc["plan"] = {mod: {**old.get("plan", {}).get(mod, {}), **lay} for mod, lay in layout.items()}
            # a layer whose files or protocols changed is measured on the unmutated tree again
            for mod, lay in layout.items():
                for layer, what in lay.items():
                    if old.get("plan", {}).get(mod, {}).get(layer) != what:
                        doc["baseline"].pop(f"{mod}:{layer}", None)
            rejudge(doc, tree.root)
        done = {r["key"]: r for r in doc["results"]}
        redo = set(a.only) if a.resume else set()     # re-measure these mutants' --layers
        # the unmutated tree must pass every layer; its times set the timeouts (a layer
        # the same for several modules, the same files and protocols, is run once)
        measured: dict = {}
        for mod, lay in layout.items():
            for layer, what in lay.items():
                same = (layer, tuple(what["files"]), tuple(what["protocols"]))
                if f"{mod}:{layer}" in doc["baseline"]:
                    measured.setdefault(same, doc["baseline"][f"{mod}:{layer}"])
                    continue
                if same not in measured:
                    r = run_layer(tree, layer, what["files"], what["protocols"], a, timeout=1800)
                    if r["outcome"] != "survived":
                        sys.exit(f"the unmutated tree fails layer {layer} for {mod}: {r['why']}")
                    measured[same] = r["seconds"]
                doc["baseline"][f"{mod}:{layer}"] = measured[same]
                write(out, doc)
        # in an order shuffled by the seed, so a run stopped early is still a sample of every module
        order = list(chosen)
        random.Random(a.seed).shuffle(order)
        for k, m in enumerate(order):
            if m.key in done and m.key not in redo:
                continue
            path = tree.root / m.module
            original = path.read_text()
            mutated = mutated_source(original, m)
            if mutated is None:
                continue
            changed_line(original, mutated, m)
            t0 = time.monotonic()
            results, imp_error = {}, None
            only_annotations = annotation_only(original, mutated)
            if not only_annotations:        # equivalent by construction: nothing to run
                try:
                    tree.write(m.module, mutated)
                    # generous: on a loaded machine the import alone has taken over a minute
                    try:
                        imp = subprocess.run([sys.executable, str(tree.root / "bench" / "mutants.py"), "--layer",
                                              "import", "--module-name", module_name(m.module)], cwd=tree.root,
                                             env=tree.env, capture_output=True, text=True, timeout=IMPORT_TIMEOUT)
                        if imp.returncode:
                            imp_error = (imp.stderr.strip().splitlines() or [""])[-1][:300]
                    except subprocess.TimeoutExpired:
                        imp_error = f"the mutated module did not import within {IMPORT_TIMEOUT} s"
                    if not imp_error and "tests" in layers:
                        sel = select_tests(covmap, m.module, changed_lines(original, mutated), a.budget,
                                           original)
                        files = fallback_files(m.module, tree.root) if not sel["tests"] else []
                        if not sel["tests"] and files:
                            results["tests"] = fallback(tree, files, a)
                        elif not sel["tests"]:
                            results["tests"] = {"outcome": "survived", "seconds": 0.0, "unexecuted": True,
                                                "why": "no default test executes the mutated lines"}
                        else:
                            limit = max(a.min_timeout, 3 * sel["seconds"] + 30)
                            results["tests"] = run_layer(tree, "tests", sel["tests"], [], a, limit)
                            results["tests"].update({"selected": len(sel["tests"]), "executing": sel["executing"],
                                                     "import_time": sel["import_time"]})
                    if not imp_error:
                        for layer, what in layout[m.module].items():
                            limit = max(a.min_timeout, a.timeout * doc["baseline"][f"{m.module}:{layer}"])
                            results[layer] = run_layer(tree, layer, what["files"], what["protocols"], a, limit)
                finally:
                    tree.write(m.module, original)
            secs = round(time.monotonic() - t0, 1)
            rec = {"key": m.key, **asdict(m), "status": "incompetent" if imp_error else "", "layers": results,
                   "seconds": secs}
            if imp_error:
                rec["why"] = imp_error
            rec["annotation_only"] = only_annotations
            if m.operator in HAND:
                rec["intent"] = HAND[m.operator]["why"]
            if m.key in done:           # re-measured: these layers replace the old ones
                done[m.key]["layers"].update(results)
                done[m.key]["remeasured"] = sorted(results)
                rec = done[m.key]
            else:
                doc["results"].append(rec)
            finish(out, doc, layers)
            killers = ",".join(n for n, v in results.items() if v["outcome"] != "survived") or "-"
            print(f"[{k + 1}/{len(chosen)}] {m.key} line {m.line}: {rec['status']} ({killers}) {secs} s",
                  flush=True)
        if "tests" in layers:
            verify_kills(tree, doc)
        doc["finished"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        finish(out, doc, layers)
        print(json.dumps(doc["summary"], indent=1))
    finally:
        tree.cleanup()


if __name__ == "__main__":
    main()
