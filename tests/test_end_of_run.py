"""Liveness at the end of a run: a run whose end record
says it ended quiescent is judged on its protocol's eventual property too."""

from __future__ import annotations

import json

import pytest

from groupcheck.conformance.replay import registry as protocols
from groupcheck.conformance.replay.conform import conform_file
from groupcheck.core.trace import writer as tracefile


def _campaign(name, runs, **options):
    proto = protocols.get(name)
    opts = {**proto.default_options, **options}
    for seed in range(runs):
        records, _ = proto.simulate(seed, proto.campaign_faults, opts)
        yield seed, records


def _verdict(tmp_path, records, name="r.ndjson"):
    return conform_file(tracefile.write(tmp_path / name, records))


@pytest.mark.parametrize("name", ["sequencer", "sequencerflush", "flush", "stable"])
def test_simulated_runs_say_whether_they_ended_quiescent(name):
    _, records = next(_campaign(name, 1))
    assert records[-1]["kind"] == "end" and isinstance(records[-1]["quiescent"], bool)
    assert all(r["kind"] == "event" for r in records[1:-1])


def _not_quiescent(records):
    """The same run, its end record saying it was cut off (safety only)."""
    return records[:-1] + [{**records[-1], "quiescent": False}]


def test_plain_sequencer_loses_a_live_members_message_known_finding(tmp_path):
    """The re-sent FORWARD reaches the new coordinator before it has installed
    the view that makes it coordinator and is dropped; the sender keeps it in
    its forward-table for ever (docs/sequencer.md).  Judged only at the end."""
    found = []
    for seed, records in _campaign("sequencer", 12):
        rep = _verdict(tmp_path, records, f"s{seed}.ndjson")
        if rep.verdict == "documented" and rep.reason.startswith("EventualDelivery:"):
            found.append(rep.reason)
            # the same run without the quiescence claim is judged on safety only
            assert _verdict(tmp_path, _not_quiescent(records), f"s{seed}-noq.ndjson").verdict == "ok"
            # and without an end record it was interrupted: nothing wrong seen, but its end not judged
            noend = _verdict(tmp_path, records[:-1], f"s{seed}-noend.ndjson")
            assert noend.verdict == "incomplete" and "no end record" in noend.reason
    assert found and all("(alive)" in r for r in found), found
    assert "EventualDelivery" in protocols.get("sequencer").known_violations


def test_sequencer_over_flush_loses_nothing_and_the_fix_is_what_does_it(tmp_path):
    """resent_first (impl/sequencer.py): without it the new coordinator's own
    multicast overtakes the forward-table it re-sent to itself, and the re-sent
    message is discarded as a duplicate by every member: a gap in a live
    sender's FIFO (GapFreeFIFO, safety, judged on every run) that never
    closes (EventualDelivery, at a quiescent end)."""
    assert "EventualDelivery" not in protocols.get("sequencerflush").known_violations
    for seed, records in _campaign("sequencerflush", 40):
        assert _verdict(tmp_path, records, f"f{seed}.ndjson").verdict == "ok", seed
    reasons = [_verdict(tmp_path, records, f"u{seed}.ndjson").reason or ""
               for seed, records in _campaign("sequencerflush", 40, resent_first=False)]
    assert any(r.startswith("GapFreeFIFO:") and "was never killed" in r for r in reasons), reasons


def test_a_stack_that_never_resends_its_forward_table_is_caught(tmp_path, monkeypatch):
    """The mutant the issue names: it passed every campaign run while only
    safety was judged."""
    from groupcheck.impl import sequencer as impl_seq
    from groupcheck.impl.codec import Forward
    from groupcheck.impl.events import Send
    orig = impl_seq.Sequencer._install_view

    def no_resend(self, view):
        queued = list(self.selfq)
        out = orig(self, view)
        self.selfq[:] = queued          # nothing re-sent to itself...
        return [e for e in out if not (isinstance(e, Send) and isinstance(e.msg, Forward))]   # ...nor to others
    monkeypatch.setattr(impl_seq.Sequencer, "_install_view", no_resend)
    verdicts = [_verdict(tmp_path, records, f"m{seed}.ndjson") for seed, records in _campaign("sequencerflush", 30)]
    assert any(r.verdict == "violation" and r.reason.startswith("EventualDelivery:") for r in verdicts), \
        [(r.verdict, r.reason) for r in verdicts]


def _cut_after(records, pred):
    """The records up to and including the first event matching ``pred``,
    then the run's end record (claiming quiescence)."""
    k = next(k for k, r in enumerate(records) if k and pred(r))
    return json.loads(json.dumps(records[:k + 1] + [records[-1]]))


def test_a_flush_that_never_ends_is_a_violation_at_quiescence(tmp_path):
    _, records = next(_campaign("flush", 1))
    assert _verdict(tmp_path, records).verdict == "ok"
    cut = _cut_after(records, lambda r: r["name"] == "Block")
    assert _verdict(tmp_path, cut, "cut.ndjson").reason.startswith("FlushEnds:")
    assert _verdict(tmp_path, _not_quiescent(cut), "cut2.ndjson").verdict == "ok"


def test_stable_uncollected_buffers_are_a_violation_at_quiescence(tmp_path):
    _, records = next(_campaign("stable", 1))
    assert _verdict(tmp_path, records).verdict == "ok"
    cut = _cut_after(records, lambda r: r["name"] == "ReceiveData")
    rep = _verdict(tmp_path, cut, "cut.ndjson")
    assert rep.verdict == "violation" and rep.reason.split(":")[0] in ("LastMessageDelivered",
                                                                      "EventuallyCollected"), rep.reason


def _raincore_runs(n):
    proto = protocols.get("raincore")
    for seed in range(1, n + 1):
        faults, opts = proto.draw(seed)
        records, line = proto.simulate(seed, faults, {**proto.default_options, **opts})
        yield seed, records, line


def test_raincore_runs_end_settled_and_the_live_ring_agrees(tmp_path):
    """A ring never quiesces; the simulator says instead that the run ended
    settled (no fault for long enough), and the replay judges the spec's
    Liveness there: every live node in Agreement on one view of the live nodes."""
    for seed, records, line in _raincore_runs(20):
        assert records[-1]["kind"] == "end" and records[-1]["quiescent"] is False
        assert records[-1]["settled"] is True, seed
        rep = _verdict(tmp_path, records, f"r{seed}.ndjson")
        assert rep.verdict == "ok", (seed, rep.reason)


def test_raincore_ring_cut_off_in_chaos_is_an_agreed_violation_when_settled(tmp_path):
    """The same run cut off right after a fault, before the ring re-formed:
    still conforming step by step; said to be settled, the end state fails
    Agreed (with the live nodes' views as witness); said not to be, it is
    judged on safety only."""
    for seed, records, _ in _raincore_runs(40):
        evs = records[1:-1]
        k = next((j for j, e in enumerate(evs) if e["name"] == "Crash"), None)
        if k is None:
            continue
        cut = records[:k + 2]           # the header, events up to the Crash
        settled = _verdict(tmp_path, cut + [{**records[-1], "settled": True}], f"s{seed}.ndjson")
        if settled.verdict == "ok":     # the ring may agree (the crashed node was already out)
            continue
        assert settled.verdict in ("violation", "documented") and settled.reason.startswith("Agreed:"), \
            settled.reason
        assert "(the run ended settled)" in settled.reason
        cut_off = _verdict(tmp_path, cut + [{**records[-1], "settled": False}], f"c{seed}.ndjson")
        assert cut_off.verdict == "ok", cut_off.reason
        return
    pytest.fail("no drawn run crashed a node of an agreed ring")
