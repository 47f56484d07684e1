"""The package's imports run one way and make no circle
(docs/architecture.md, "Layout").

Layers, lowest first: ``spec`` (the TLA+ modules and their manifests),
``core`` (the floor every layer shares: the trace and history formats, the
property catalogue, progress), ``model`` (the Python models, the explorer, TLC and z3), ``impl`` (the
implementation, its simulators and its runtime), ``conformance`` (every
check of a run: replay, TLC trace validation, history, findings, the
pipeline, the audit) and ``cli``.  ``impl`` and ``model`` do not import
each other.  Every import counts, those inside functions too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("spec", "core", "model", "impl", "conformance", "cli")
# package -> the packages it may import
ALLOWED = {
    "spec": set(),
    "core": {"spec"},
    "model": {"spec", "core"},
    "impl": {"core"},
    "conformance": {"spec", "core", "model", "impl"},
    "cli": {"spec", "core", "model", "impl", "conformance"},
}


def _module(root: Path, f: Path) -> str:
    parts = f.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _exists(root: Path, mod: str) -> bool:
    path = root / mod.replace(".", "/")
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def import_graph(root: Path = ROOT) -> nx.DiGraph:
    """Module -> module, for every import of ``groupcheck.*`` (absolute or
    relative, at any depth of the file) between modules of ``PACKAGES``."""
    g = nx.DiGraph()
    for package in PACKAGES:
        for f in sorted((root / package).rglob("*.py")):
            me = _module(root, f)
            g.add_node(me)
            for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom):
                    if node.level:
                        base = f.relative_to(root).parts[:-node.level]
                        mod = ".".join(base + ((node.module,) if node.module else ()))
                    elif node.module and node.module.startswith("groupcheck."):
                        mod = node.module[len("groupcheck."):]
                    else:
                        continue
                    targets = [mod] + [f"{mod}.{a.name}" for a in node.names]
                elif isinstance(node, ast.Import):
                    targets = [a.name[len("groupcheck."):] for a in node.names if a.name.startswith("groupcheck.")]
                else:
                    continue
                for t in targets:
                    if t != me and _exists(root, t):
                        g.add_edge(me, t)
    return g


def upward(g: nx.DiGraph) -> list[tuple[str, str]]:
    """The imports a layer may not make."""
    return sorted((a, b) for a, b in g.edges
                  if a.split(".")[0] != b.split(".")[0] and b.split(".")[0] not in ALLOWED[a.split(".")[0]])


def circles(g: nx.DiGraph) -> list[list[str]]:
    return [sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1]


@pytest.fixture(scope="module")
def ours() -> nx.DiGraph:
    return import_graph()


def test_imports_run_one_way(ours):
    assert upward(ours) == []


def test_no_circle(ours):
    assert circles(ours) == []


def test_the_check_sees_an_upward_import_and_a_circle(tmp_path):
    """The same check on a tree with one added upward import (impl importing
    conformance, inside a function) and one circle."""
    for package in PACKAGES:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "conformance" / "a.py").write_text("from . import b\n")
    (tmp_path / "conformance" / "b.py").write_text("def f():\n    from .a import x\n")
    (tmp_path / "impl" / "node.py").write_text("def f():\n    from groupcheck.conformance import a\n")
    g = import_graph(tmp_path)
    assert upward(g) == [("impl.node", "conformance"), ("impl.node", "conformance.a")]
    assert circles(g) == [["conformance.a", "conformance.b"]]


def test_the_trace_reader_never_calls_the_writer(ours):
    """The trace format's reading side (reader, decoders, validator, input
    limits, the history reader) shares the format's definition
    (core/trace/format.py) with the writer and never imports the writer."""
    reading = ("core.trace.reader", "core.trace.decode", "core.trace.validate", "core.trace.limits",
               "core.trace.history", "core.trace.format", "core.trace.layers")
    reached = set().union(*(nx.descendants(ours, m) for m in reading))
    assert "core.trace.writer" not in reached
