"""Which layer of a composed node a trace record belongs to
(core/trace/layers.py), held against the schemas' own statement of it:
each composed schema names its parts (``x-append-layers``) and says in its
description which part the shared actions (Crash, Join, InstallView) are;
an action only one part's schema has is that part's."""

import json
from pathlib import Path

import pytest

from groupcheck.core.trace.layers import LAYERS, layer_of

SCHEMAS = Path(__file__).resolve().parents[1] / "core" / "trace" / "schemas"


def _names(x, out=None) -> set:
    out = set() if out is None else out
    if isinstance(x, dict):
        name = x.get("properties", {}).get("name", {})
        out.update([name["const"]] if "const" in name else name.get("enum", []))
        for v in x.values():
            _names(v, out)
    elif isinstance(x, list):
        for v in x:
            _names(v, out)
    return out


def _schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"{name}.json").read_text(encoding="utf-8"))


def test_flush_over_the_ring():
    """raincoreflush.json: FLUSH's events without Crash, Join and Leave, and
    every ring event; Crash and Join are the ring's."""
    s = _schema("raincoreflush")
    assert s["x-append-layers"] == {"flush": "flush.json", "ring": "raincore.json"}
    flush_branch = _names(s["anyOf"][0])
    ring = _names(_schema("raincore")) - {"LeaveSuspected"}      # the runner's record, stateless: no chain
    assert flush_branch and not flush_branch & {"Crash", "Join", "Leave"}
    assert {n: layer_of("raincoreflush", n, {}) for n in flush_branch} == {n: "flush" for n in flush_branch}
    assert {n: layer_of("raincoreflush", n, {}) for n in ring} == {n: "ring" for n in ring}
    assert {"Crash", "Join"} <= ring


def test_sequencer_over_flush():
    """sequencerflush.json: FLUSH's events and SEQUENCER's; Crash is FLUSH's,
    InstallView is FLUSH's with a ``c`` parameter and SEQUENCER's without."""
    assert _schema("sequencerflush")["x-append-layers"] == {"flush": "flush.json", "sequencer": "sequencer.json"}
    flush, seq = _names(_schema("flush")), _names(_schema("sequencer"))
    for n in flush - {"InstallView"}:
        assert layer_of("sequencerflush", n, {}) == "flush", n
    for n in {"Send", "RecvForward", "RecvData"}:
        assert n in seq and n not in flush and layer_of("sequencerflush", n, {"p": 1}) == "sequencer", n
    assert layer_of("sequencerflush", "InstallView", {"c": 1, "v": 2}) == "flush"
    assert layer_of("sequencerflush", "InstallView", {"v": 2}) == "sequencer"


@pytest.mark.parametrize("name", ["TokenReceived", "Crash", "Join", "Send", "RecvData", "Multicast"])
def test_the_three_layer_stack_is_the_ring_s_then_sequencer_over_flush(name):
    ring = _names(_schema("raincore")) - {"LeaveSuspected"}
    want = "ring" if name in ring else layer_of("sequencerflush", name, {})
    assert layer_of("raincoresequencerflush", name, {}) == want


def test_a_stack_of_one_layer_and_an_unknown_protocol():
    assert set(LAYERS) == {"sequencerflush", "raincoreflush", "raincoresequencerflush"}
    for p in ("sequencer", "flush", "stable", "raincore", "paxos", None, 3):
        assert layer_of(p, "Send", {}) == "node"
