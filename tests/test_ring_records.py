"""The ring's record check (conformance/replay/raincore.py ``check_record``) is one
function for the ring and for both compositions over it: a TOKEN naming a
node outside 1..N is rejected at its record, with the same reason, by each."""
from __future__ import annotations

import json

import pytest

from groupcheck.conformance.replay.registry import get
from groupcheck.core.trace.reader import from_records


@pytest.mark.parametrize("protocol", ["raincore", "raincoreflush", "raincoresequencerflush"])
def test_a_token_naming_a_node_outside_the_ring_is_rejected_at_its_record(protocol):
    p = get(protocol)
    faults, opts = p.draw(0)
    records, _ = p.simulate(0, faults, opts)
    assert p.replay(from_records(records)).verdict == "ok"
    k = next(k for k, r in enumerate(records) if r.get("name") == "TokenReceived")
    n = len(records[0]["nodes"])
    forged = json.loads(json.dumps(records))
    forged[k]["msg"]["cur"] = n + 1
    rep = p.replay(from_records(forged))
    assert rep.verdict == "rejected" and rep.first_bad_event == k - 1, rep.reason     # records[0] is the header
    assert f"msg: node {n + 1} is not a node 1..{n}" in rep.reason
