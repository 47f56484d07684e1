"""Observable state is enforced: a record's logged ``state`` is a complete
delta of the variables its layer declares observable (the binding's
``observable``, conformance/replay/engine.py), so a layer that skips an update
(its diff-based logger then leaves the variable out) is caught where the
model's step changes the variable.

For every protocol and every observable variable: a campaign run is
replayed, the first record whose step changes that variable in every
accepted model step is found, the variable is dropped from it (what such a
layer logs), and the replay must reject the run at that record."""

from __future__ import annotations

import copy

import pytest

from groupcheck.conformance.replay import registry as protocols
from groupcheck.conformance.replay.engine import ReplayEngine
from groupcheck.core.trace.reader import from_records

SEEDS = 12


def changed_records(proto, seeds=SEEDS) -> dict:
    """variable -> (records, index of the record in them) where the model's
    step changes it for the acting member and the record logs it."""
    found: dict = {}
    every: set = set()
    for seed in range(seeds):
        # the audit's draws (sizes, crashes, joins, leaves) where the protocol has them
        faults, opts = proto.draw(seed) if proto.draw else (proto.campaign_faults, proto.default_options)
        recs, _ = proto.simulate(seed, faults, opts)
        trace = from_records(recs)
        b = proto.binding(trace)
        engine = ReplayEngine(b, visited=False)
        seen = []
        b.after = lambda ev, pairs, cands, after=b.after: (seen.append(pairs), after(ev, pairs, cands))[1]
        for ev in b.steps():
            seen.clear()
            if engine.step(ev):
                break
            logged = b.logged(ev) or {}
            obs = b.observable(ev) if logged else ()
            every |= set(obs)
            for var in obs:
                if var in found or var not in logged or not seen or not seen[0]:
                    continue
                if all(b.observe(s, t, ev, var) != b.observe(s, s, ev, var) for s, t in seen[0]):
                    # a joined step (a composition): the record that logs the variable
                    src = (ev.get("owner") or {}).get(var, ev)["src"]
                    found[var] = (recs, int(src.rsplit(":", 1)[1]) - 1, ev)
        if found.keys() >= every and every:
            break
    return found, every


def _drop(recs, k, var, ev):
    """``recs`` with ``var`` left out of record ``k``'s state (a composed
    stack's variable is logged as ``layer.var`` or under its layer)."""
    bad = copy.deepcopy(recs)
    st = bad[k]["state"]
    short = var.split(".", 1)[-1]
    key = var if var in st else short
    assert key in st, (var, st)
    del st[key]
    return bad


@pytest.mark.parametrize("protocol", protocols.available())
def test_a_skipped_update_of_any_observable_variable_is_caught(protocol):
    proto = protocols.get(protocol)
    found, every = changed_records(proto)
    assert every and found.keys() == every, f"not reached in {SEEDS} seeds: {sorted(every - found.keys())}"
    for var, (recs, k, ev) in sorted(found.items()):
        assert proto.replay(from_records(recs), visited=False).verdict != "nonconforming"
        rep = proto.replay(from_records(_drop(recs, k, var, ev)), visited=False)
        assert rep.verdict == "nonconforming", (var, rep.verdict, rep.reason)
        # at that record; a step joined from several layers' records (SEQUENCER
        # over FLUSH) may be joined otherwise without the variable, and the
        # run then stops conforming later
        if len(ev.get("parts", [ev])) == 1:
            assert rep.first_bad_event <= ev["i"], (var, rep.first_bad_event, ev["i"], rep.reason)


def test_the_trace_format_table_lists_each_protocols_declaration():
    """docs/trace-format.md's table of observable variables is the bindings'
    ``FIELDS`` (the one declaration), for the protocols of one layer."""
    import re
    from pathlib import Path
    text = (Path(__file__).parents[1] / "docs" / "trace-format.md").read_text(encoding="utf-8")
    text = text[text.index("**Observable state.**"):]
    for name in ("sequencer", "flush", "stable", "raincore"):
        row = re.search(rf"^\| `{name}` \| ([^|]+) \|", text, re.M)
        assert row, name
        assert re.findall(r"`(\w+)`", row.group(1)) == list(protocols.get(name).binding.FIELDS), name


def _tlc_cases():
    from groupcheck.conformance import tlctrace
    out = []
    for p in protocols.available():
        if tlctrace.supported(p):
            # the default suite asks TLC about one protocol whole; the others under slow
            out.append(pytest.param(p, marks=() if p == "sequencer" else (pytest.mark.slow,)))
    return out


@pytest.mark.parametrize("protocol", _tlc_cases())
def test_tlc_rejects_a_skipped_update_of_any_observable_variable(protocol):
    """The trace spec reads a logged state as the replay does: TLC rejects
    each run of the test above, at the record that leaves the variable out
    (or, for a step the replay joins, no later than the replay)."""
    from groupcheck.conformance import tlctrace
    proto = protocols.get(protocol)
    found, _ = changed_records(proto)
    assert found
    for var, (recs, k, ev) in sorted(found.items()):
        bad = from_records(_drop(recs, k, var, ev))
        rep = proto.replay(bad, visited=False)
        v = tlctrace.validate(bad, diagnose=False)
        assert not v.ok, (var, v.detail)
        assert v.first_unmatched <= max(ev["i"], rep.first_bad_event), (var, v.first_unmatched, ev["i"])
