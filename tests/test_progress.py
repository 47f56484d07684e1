"""A long check says how far it has got: the trace reader and the replay
report their record counts to whoever listens (core/progress.py),
and nothing when nobody does."""

from groupcheck.core import progress
from groupcheck.conformance.replay.conform import conform_file, replay
from groupcheck.core.trace.reader import load
from groupcheck.core.trace import writer as tracefile
from groupcheck.impl.faults import parse_faults
from groupcheck.impl.sim_sequencer import simulate_run


def test_the_reader_and_the_replay_report_their_counts(tmp_path, monkeypatch):
    records, _ = simulate_run(3, 4, 1, parse_faults("loss=0.05"))
    path = tracefile.write(tmp_path / "run.ndjson", records)
    events = sum(r["kind"] == "event" for r in records)
    monkeypatch.setattr(progress, "EVERY", 5)
    seen = []
    with progress.reporting(lambda stage, done, total: seen.append((stage, done, total))):
        assert conform_file(path).verdict == "ok"
    reads = [d for s, d, t in seen if s == "reading run.ndjson" and t is None]
    replays = [(d, t) for s, d, t in seen if s == "replaying"]
    assert reads == list(range(5, len(records) + 1, 5))           # every 5th line of the file
    # replayed as it is read (conformance/replay/engine.py ``_streamed``): the total is known once read
    assert [d for d, _ in replays] == list(range(0, events, 5)) and {t for _, t in replays} == {None}
    seen.clear()
    with progress.reporting(lambda stage, done, total: seen.append((stage, done, total))):
        assert replay(load(path)).verdict == "ok"       # read whole first: the replay knows its total
    assert {t for s, d, t in seen if s == "replaying"} == {events}
    seen.clear()
    conform_file(path)                  # outside ``reporting``: nobody hears
    assert seen == []
