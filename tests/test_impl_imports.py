"""impl/'s own rules, checked on the syntax tree (docs/architecture.md, "Layout"; docs/impl.md):
protocol layers import no I/O, clock, randomness or threads, and a layer
file holds no stack, codec or simulator.  That impl/ imports nothing of
model/, conformance/ or cli/ is tests/test_layering.py's."""

import ast
from pathlib import Path

import pytest

IMPL = Path(__file__).resolve().parent.parent / "impl"
# The simulator and the runtimes own time, randomness and I/O.
RUNTIME = {"sim.py", "runtime.py", "cluster.py", "chaos.py"}   # cluster.py, chaos.py: the runners of runtime.py processes
FORBIDDEN = {"socket", "asyncio", "time", "random", "threading"}
MODULES = sorted(p for p in IMPL.rglob("*.py"))
# the protocol layers: layer logic only; their stacks and wire codecs live in impl/stacks/
LAYERS = ("sequencer.py", "flush.py", "stable.py", "raincore.py", "reliable.py", "ringtransport.py")


def imported_modules(path: Path) -> set[str]:
    """Absolute dotted names imported by the module at ``path`` (relative
    imports are resolved against groupcheck.impl)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parent = path.resolve().parent
                sub = parent.relative_to(IMPL).parts if parent.is_relative_to(IMPL) else ()
                pkg = ["groupcheck", "impl", *sub]
                base = pkg[: len(pkg) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__":
            if node.args and isinstance(node.args[0], ast.Constant):
                out.add(str(node.args[0].value))
    return out


def test_found_the_modules():
    names = {p.name for p in MODULES}
    assert {"events.py", "layer.py", "stack.py", "codec.py", "reliable.py", "sequencer.py", "sim.py"} <= names


@pytest.mark.parametrize("path", [p for p in MODULES if p.name not in RUNTIME], ids=lambda p: str(p.relative_to(IMPL)))
def test_protocol_layers_do_no_io(path):
    bad = {m for m in imported_modules(path) if m.split(".")[0] in FORBIDDEN}
    assert not bad, f"{path.name} imports {sorted(bad)}"


def test_checker_sees_forbidden_imports(tmp_path):
    # The checker itself must catch every import form.
    for src, want in [("import time", "time"), ("from socket import socket", "socket"),
                      ("import asyncio.events as e", "asyncio.events"),
                      ("from ..model import core", "groupcheck.model"),
                      ("from groupcheck.model.core import Model", "groupcheck.model.core"),
                      ("__import__('random')", "random")]:
        p = tmp_path / "m.py"
        p.write_text(src + "\n")
        assert want in imported_modules(p), src


@pytest.mark.parametrize("name", LAYERS)
def test_layer_files_hold_no_stack_codec_or_simulator(name):
    """A layer file packs no bytes, registers no wire type, builds no stack and
    knows no simulator: impl/stacks/<protocol>.py and impl/sim*.py do."""
    path = IMPL / name
    mods = imported_modules(path)
    bad = {m for m in mods if m == "struct" or m.startswith(("groupcheck.impl.sim", "groupcheck.impl.stacks",
                                                              "groupcheck.impl.stack.Stack", "groupcheck.impl.runtime"))}
    assert not bad, f"{name} imports {sorted(bad)}"
    tree = ast.parse(path.read_text())
    calls = {ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    assert not {c for c in calls if c.endswith("register")}, f"{name} registers codec types"
    classes = [n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    assert not [c for c in classes if c.endswith(("Stack", "Simulator"))], classes


def test_relative_imports_resolve_in_the_stacks_package():
    mods = imported_modules(IMPL / "stacks" / "flush.py")
    assert "groupcheck.impl.flush" in mods and "groupcheck.impl.codec" in mods
