"""The conformance registry and the per-protocol trace schemas."""

import json

import pytest

from groupcheck.conformance.replay import registry as protocols
from groupcheck.conformance.replay.conform import conform_file
from groupcheck.core.trace.reader import record_problem
from groupcheck.core.trace import layers as trace_layers
from groupcheck.core.trace import writer as tracefile


def test_sequencer_is_registered_and_lookups_fail_clearly():
    assert "sequencer" in protocols.available()
    p = protocols.get("sequencer")
    assert p.spec == "Sequencer" and "TotalOrder" in p.properties
    for bad in ("nope", "replay", "../x"):
        with pytest.raises(protocols.UnknownProtocol, match="no conformance module"):
            protocols.get(bad)


def test_registry_simulate_and_replay_agree(tmp_path):
    p = protocols.get("sequencer")
    records, line = p.simulate(5, "loss=0.1", {"nodes": 3, "messages": 1})
    assert line["run_id"] == "sequencer-n3-m1-s5" and records[0]["protocol"] == "sequencer"
    path = tracefile.write(tmp_path / "r.ndjson", records)
    assert conform_file(path).verdict == "ok"


def _trace(tmp_path):
    records, _ = protocols.get("sequencer").simulate(1, "", {"nodes": 2, "messages": 1})
    return records


def test_event_with_an_action_the_protocol_lacks_is_rejected_with_its_line(tmp_path):
    records = _trace(tmp_path)
    records[3] = {**records[3], "name": "Gossip"}       # valid envelope, not a SEQUENCER action
    assert record_problem(records[3]) is None
    assert "schema (sequencer)" in record_problem(records[3], "sequencer")
    r = conform_file(tracefile.write(tmp_path / "bad.ndjson", records))
    assert r.verdict == "rejected" and r.reason.startswith(f"{tmp_path / 'bad.ndjson'}:4: schema (sequencer)")


def test_unknown_protocol_in_header_is_rejected_at_line_1(tmp_path):
    records = _trace(tmp_path)
    records[0] = {**records[0], "protocol": "paxos"}
    r = conform_file(tracefile.write(tmp_path / "p.ndjson", records))
    assert r.verdict == "rejected"
    assert "p.ndjson:1: no event schema for protocol 'paxos'" in r.reason


def test_state_fields_are_the_protocols(tmp_path):
    records = _trace(tmp_path)
    i = next(k for k, r in enumerate(records) if r.get("state"))
    records[i] = json.loads(json.dumps(records[i]))
    records[i]["state"]["heard_from"] = [1]              # a STABLE variable in a SEQUENCER trace
    r = conform_file(tracefile.write(tmp_path / "s.ndjson", records))
    assert r.verdict == "rejected" and f"s.ndjson:{i + 1}:" in r.reason and "heard_from" in r.reason


# ---------------------------------------------------------------- one descriptor per protocol

def test_every_layer_registers_the_same_protocols():
    """The implementation's, conformance's and the model's registries and the
    spec folders name the same protocols; the proofs cover some of them."""
    from groupcheck.impl import protocols as impl_protocols
    from groupcheck.model import manifest, registry as models
    from groupcheck.model.proofs import registry as proofs
    names = impl_protocols.names()
    assert names == protocols.available() == manifest.protocols()
    for p in names:
        assert models.model_class(p).__module__ == f"groupcheck.model.{p}"
        d = impl_protocols.get(p)
        assert d.name == p and (tracefile.Path(tracefile.__file__).parent / "schemas" / f"{p}.json").is_file()
        assert d.over_ring is None or impl_protocols.get(d.over_ring).cluster.views == "ring"
    assert set(proofs.protocols()) <= set(names)


def test_descriptors_agree_across_layers():
    """A protocol the history projects promises checks the history checker
    has, and only such a protocol promises any; named queries resolve."""
    from groupcheck.core import properties
    from groupcheck.impl import protocols as impl_protocols
    for p in protocols.available():
        promised = protocols.promises(p)
        assert bool(promised) == (impl_protocols.get(p).history is not None), p
        assert set(promised) <= set(properties.CATALOGUE), p
        assert set(protocols.judged(p)) <= set(promised) | {"EventualDelivery"}, p
    assert [p for p in protocols.available() if protocols.judged(p)] == [
        "flush", "raincoreflush", "raincoresequencerflush", "sequencer", "sequencerflush"]
    for p in protocols.available():       # the end of a run is judged where the replay judges it
        assert protocols.get(p).run_end in ("quiescent", "settled"), p
    with pytest.raises(impl_protocols.UnknownProtocol, match="no implementation"):
        impl_protocols.get("paxos")
    assert trace_layers.layer_of("paxos", "Send", {}) == "node"


# Modules that serve every protocol: none may compare a protocol's name (or
# key a table by one); a protocol's own files and the registries may.
_ROOT = tracefile.Path(__file__).resolve().parents[1]
# (conformance/jgroups/adapter.py registers the JGroups stacks, named after the spec
# protocol each is judged against; core/trace/layers.py the composed stacks' layers,
# the trace format's own table)
_REGISTRIES = {"impl/protocols.py", "conformance/replay/registry.py", "model/registry.py", "model/proofs/registry.py",
               "conformance/jgroups/adapter.py", "core/trace/layers.py"}
# What the scan leaves, for a reason: the runtime's ``idle``, which asks the
# stack for a layer by its name (a layer, not a protocol, until each layer
# says whether it is idle)
_NOT_DISPATCH = {("impl/runtime.py", "idle")}


def _generic_modules(names):
    for folder in ("cli", "core", "impl", "conformance", "model"):
        for path in sorted((_ROOT / folder).rglob("*.py")):
            rel = path.relative_to(_ROOT).as_posix()
            stem = path.stem.removeprefix("sim_")
            if rel in _REGISTRIES or stem in names or path.parent.name in names:
                continue        # a protocol's own module (impl/stacks/<p>.py, impl/sim_<p>.py, model/proofs/<p>/...)
            yield rel, path


def _name_comparisons(tree, names):
    """(line, function) of each comparison with, membership in a literal of,
    or dict literal keyed by, a protocol name."""
    import ast

    def named(node):
        if isinstance(node, ast.Constant):
            return node.value in names
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(named(e) for e in node.elts)
        return False

    found = []

    def visit(node, func):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            func = node.name
        if isinstance(node, ast.Compare) and any(named(x) for x in [node.left, *node.comparators]):
            found.append((node.lineno, func))
        if isinstance(node, ast.Dict) and any(k is not None and named(k) for k in node.keys):
            found.append((node.lineno, func))
        for child in ast.iter_child_nodes(node):
            visit(child, func)

    visit(tree, None)
    return found


def test_no_generic_module_compares_a_protocol_name():
    import ast
    from groupcheck.impl import protocols as impl_protocols
    names = set(impl_protocols.names())
    bad = []
    for rel, path in _generic_modules(names):
        for line, func in _name_comparisons(ast.parse(path.read_text(encoding="utf-8")), names):
            if (rel, func) not in _NOT_DISPATCH:
                bad.append(f"{rel}:{line} ({func})")
    assert not bad, "ask the protocol's descriptor (impl/protocols.py, conformance/replay/registry.py) instead: " \
        + ", ".join(bad)


def test_the_scan_sees_a_comparison():
    import ast
    names = {"sequencer", "flush"}
    src = 'def f(p):\n    if p == "flush":\n        return {"sequencer": 1}\n    return p in ("a", "sequencer")\n'
    assert _name_comparisons(ast.parse(src), names) == [(2, "f"), (3, "f"), (4, "f")]
