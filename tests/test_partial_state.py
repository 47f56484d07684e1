"""Grey box: a trace may log any part of a node's state, or none.  An
implementation that logs only some variables declares which in its header
(``observed``); the others are unknown and the replay keeps every model
state consistent with what is logged (conformance/replay/engine.py), so campaign
runs rewritten without their ``state`` fields still conform, and what they
log is still checked.  A declared variable a record leaves out is unchanged
(tests/test_observable_state.py)."""

from __future__ import annotations

import json
import random

import pytest

from groupcheck.conformance.replay.registry import get
from groupcheck.conformance.replay.conform import conform_file
from groupcheck.core.trace import writer as tracefile

PROTOCOLS = ["sequencer", "flush", "sequencerflush", "stable", "raincore"]


def _strip(records, keep=lambda var: False, observed=()):
    out = [dict(records[0], observed=sorted(observed))]
    for r in records[1:]:
        r = dict(r)
        if "state" in r:
            st = {k: v for k, v in r["state"].items() if keep(k)}
            if st:
                r["state"] = st
            else:
                del r["state"]
        out.append(r)
    return out


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_twenty_campaign_runs_without_state_still_conform(protocol, tmp_path):
    proto = get(protocol)
    verdicts = []
    for seed in range(20):
        records, _ = proto.simulate(seed, proto.campaign_faults, dict(proto.default_options))
        full = conform_file(tracefile.write(tmp_path / f"full{seed}.ndjson", records))
        bare = _strip(records)
        assert not any("state" in r for r in bare[1:])
        rep = conform_file(tracefile.write(tmp_path / f"bare{seed}.ndjson", bare))
        assert rep.verdict in ("ok", "violation", "documented"), (seed, rep.verdict, rep.reason)
        # the properties are judged on the model's states, so a state-less
        # trace is judged as its full version is (the same first property);
        # a finding's witness reads the logged deliveries, so without them
        # a documented finding's violation is a plain violation
        broke = ("violation", "documented")
        assert (rep.verdict in broke, (rep.reason or "").split(":")[0]) == \
            (full.verdict in broke, (full.reason or "").split(":")[0]), (seed, full.reason, rep.reason)
        assert rep.verdict == full.verdict or (full.verdict, rep.verdict) == ("documented", "violation")
        verdicts.append(rep.verdict)
    assert "ok" in verdicts


@pytest.mark.parametrize("protocol", ["sequencer", "flush", "stable"])
def test_a_random_part_of_the_state_is_still_checked(protocol, tmp_path):
    """Each run keeps a random subset of the variables; a forged value of a
    variable it does log is still caught at its record."""
    proto = get(protocol)
    rng = random.Random(5)
    for seed in range(5):
        records, _ = proto.simulate(seed, proto.campaign_faults, dict(proto.default_options))
        names = sorted({k for r in records[1:] for k in (r.get("state") or {})})
        kept = set(rng.sample(names, max(1, len(names) // 2)))
        part = _strip(records, lambda var: var in kept, kept)
        rep = conform_file(tracefile.write(tmp_path / f"p{seed}.ndjson", part))
        assert rep.verdict in ("ok", "violation", "documented"), (seed, kept, rep.reason)
        ks = [k for k, r in enumerate(part) if k and isinstance(r.get("state", {}).get("vid", r.get("state", {})
                                                                                       .get("sent")), int)]
        if not ks:
            continue
        k = ks[len(ks) // 2]
        forged = json.loads(json.dumps(part))
        var = "vid" if "vid" in forged[k]["state"] else "sent"
        forged[k]["state"][var] += 5
        rep = conform_file(tracefile.write(tmp_path / f"f{seed}.ndjson", forged))
        assert rep.verdict == "nonconforming" and rep.first_bad_event == k - 1, (seed, var, rep.reason)
        assert f"{var}: model" in rep.reason


def test_a_trace_of_actions_and_messages_only_still_catches_a_wrong_step(tmp_path):
    """No state at all: a delivery the model does not allow (a message taken
    twice from its channel) is still nonconforming."""
    proto = get("sequencer")
    records, _ = proto.simulate(3, "loss=0.1,reorder=3", dict(proto.default_options))
    bare = _strip(records)
    k = next(k for k, r in enumerate(bare) if k and r["kind"] == "event" and r["name"] == "RecvData")
    forged = bare[:k + 1] + [dict(bare[k])] + bare[k + 1:]
    rep = conform_file(tracefile.write(tmp_path / "dup.ndjson", forged))
    assert rep.verdict == "nonconforming" and rep.first_bad_event == k, rep.reason
