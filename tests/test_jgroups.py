"""JGroups 2.12 (Debian's libjgroups-java) through the history adapter
(conformance/jgroups.py, docs/jgroups.md): 3 members on 127.0.0.1, SEQUENCER,
with and without FLUSH.  Slow; skipped when the jar or a JDK is absent."""

from __future__ import annotations

import pytest

from groupcheck.conformance import history, jgroups

pytestmark = pytest.mark.slow

_WHY = jgroups.available()
needs_jgroups = pytest.mark.skipif(_WHY is not None, reason=f"JGroups adapter cannot run: {_WHY}")


@pytest.fixture(scope="module")
def classes(tmp_path_factory):
    if _WHY is not None:
        pytest.skip(f"JGroups adapter cannot run: {_WHY}")
    return jgroups.compile_driver(tmp_path_factory.mktemp("jgroups-classes"))


def _run(classes, tmp_path, flush, kill):
    r = jgroups.run(classes, tmp_path, f"jg-{'flush' if flush else 'plain'}-{'kill' if kill else 'clean'}",
                    flush=flush, kill_coordinator_after=kill, messages=50, timeout=90)
    assert not r["failed"], r["logs"]
    [row] = history.check_paths(r["files"])
    return r, row


@needs_jgroups
@pytest.mark.parametrize("flush", [False, True], ids=["sequencer", "sequencer+flush"])
def test_crash_free_run_checks_clean(classes, tmp_path, flush):
    r, row = _run(classes, tmp_path, flush, None)
    assert row["verdict"] == "ok", row["violations"]
    assert row["events"] >= 3 * 50 + 3 * 150       # every send and every delivery logged


@needs_jgroups
@pytest.mark.parametrize("flush", [False, True], ids=["sequencer", "sequencer+flush"])
def test_coordinator_sigkill_is_checked_with_witnesses(classes, tmp_path, flush):
    r, row = _run(classes, tmp_path, flush, 0.25)
    assert r["killed"] == [1] and row["crashed"] == [1]
    h = history.load(r["files"])[0]
    # the survivors converge on the view without the killed coordinator
    last = {m: h.views[m][-1] for m in (2, 3)}
    assert last[2][:2] == last[3][:2] and sorted(last[2][1]) == [2, 3], last
    print(f"\nJGroups {'SEQUENCER+FLUSH' if flush else 'SEQUENCER'}, coordinator SIGKILLed: {row['verdict']}")
    for v in row["violations"]:
        print(f"  {v['check']}: {v['text']}")
        assert v["members"] and v["events"], v          # every anomaly has its witness
        assert v["mermaid"].startswith("sequenceDiagram")
    if flush:
        assert "FlushEventOrder" not in {v["check"] for v in row["violations"]}
