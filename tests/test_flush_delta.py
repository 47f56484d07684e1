"""FLUSH's own delta tracing (impl/flush.py ``Flush.delta``, what the UDP
runtime logs) writes the same format-2 states as the deltas computed from
full states (core/trace/writer.py ``to_v2``), on campaign runs of FLUSH and of
SEQUENCER over FLUSH with crashes, joins and leaves."""

from __future__ import annotations

import importlib

import pytest

from groupcheck.conformance.replay import registry as protocols
from groupcheck.impl.stacks import flush as flush_stacks, sequencerflush as seqflush_stacks
from groupcheck.core.trace import writer as tracefile


def _states(records):
    out = []
    for r in records[1:]:
        st = r.get("state")
        if st and isinstance(st.get("delivered"), list) and "sent" not in st and "fwd" not in st:
            st = {**st, "delivered": sorted(st["delivered"])}        # FLUSH's delivered is a set
        out.append((r.get("name"), r.get("nid"), st))
    return out


@pytest.mark.parametrize("protocol,builder", [("flush", "flush_stack"), ("sequencerflush", "sequencer_flush_stack")])
def test_delta_tracing_equals_deltas_of_full_states(protocol, builder, monkeypatch):
    proto = protocols.get(protocol)
    where = flush_stacks if protocol == "flush" else seqflush_stacks
    binding = importlib.import_module(f"groupcheck.conformance.replay.{protocol}")
    real = getattr(where, builder)
    for seed in range(12):
        faults, options = proto.draw(seed)
        opts = {**proto.default_options, **options}
        full, _ = proto.simulate(seed, faults, opts)
        made = []

        def delta_stack(*a, **kw):
            kw["tracing"] = "delta"
            made.append(1)
            return real(*a, **kw)

        for mod in (where, binding):        # the stack module, and the binding that imported the builder
            if hasattr(mod, builder):
                monkeypatch.setattr(mod, builder, delta_stack)
        monkeypatch.setattr(tracefile, "to_v2", _as_delta(tracefile.to_v2))
        delta, _ = proto.simulate(seed, faults, opts)
        monkeypatch.undo()
        assert made, "the delta stack was not used"
        assert _states(delta) == _states(full), seed


def _as_delta(to_v2):
    def wrapped(records, *a, **kw):
        records = [{**records[0], "states": "delta"}] + records[1:]
        return to_v2(records, *a, **kw)
    return wrapped
