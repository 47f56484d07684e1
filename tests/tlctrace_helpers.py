"""What the TLC trace-validation tests share: a run's event records, the two
checkers' verdicts on one trace (TLC's, and the model replay's as JSON), and
the checks every protocol's trace spec must pass alike: a simulated run
accepted (with and without its logged state), a forged record rejected by
both at that record, and a rejection that says why."""
from __future__ import annotations

import copy
import shutil

import pytest

from groupcheck.conformance import tlctrace
from groupcheck.conformance.replay import registry as protocols
from groupcheck.conformance.replay.conform import conform_file
from groupcheck.core.trace.reader import load
from groupcheck.core.trace.writer import write

NEEDS_JAVA = pytest.mark.skipif(shutil.which("java") is None, reason="TLC needs java")


def events(recs: list) -> list:
    return [r for r in recs[1:] if r["kind"] == "event"]


def run_fixture(protocol: str, seed: int, faults: str | None = None, options: dict | None = None):
    """A module fixture: the records of one simulated run of ``protocol``,
    under ``faults`` (the protocol's campaign faults unless given)."""
    def run():
        proto = protocols.get(protocol)
        records, _ = proto.simulate(seed, proto.campaign_faults if faults is None else faults, options or {})
        return records
    return pytest.fixture(scope="module", name="run")(run)


def both(tmp_path, records: list, name: str, *, diagnose: bool = True):
    """(TLC's verdict, the replay's report as JSON with its ``broken``) on
    ``records`` written as ``name``."""
    p = write(tmp_path / f"{name}.ndjson", records)
    rep = conform_file(p)
    return tlctrace.validate(load(p), diagnose=diagnose), {**rep.to_json(), "broken": rep.broken}


def accepted(tmp_path, records: list, name: str = "good", *, actions=(), one_step_a_record: bool = True):
    """Both checkers accept every step of ``records``, in which ``actions``
    occur.  ``one_step_a_record``: TLC's log has a step for each record (a
    composition whose log joins half-steps has fewer)."""
    assert set(actions) <= {e["name"] for e in events(records)}
    v, m = both(tmp_path, records, name)
    assert v.ok, v.explain()
    assert v.first_unmatched is None
    if one_step_a_record:
        assert v.events == len(events(records))
    # (a hand-cut log may lack an end record or a multicast: incomplete, nothing wrong in it)
    assert m["verdict"] in ("ok", "incomplete") and not m["violations"] and m["stops_conforming_at"] is None \
        and tlctrace.agrees(v, m)
    return v, m


def accepted_without_state(tmp_path, records: list, **kw):
    """Format 2 lets a trace log no variable at all: both still accept it."""
    recs = copy.deepcopy(records)
    for e in recs[1:]:
        e.pop("state", None)
    return accepted(tmp_path, recs, "hidden", **kw)


def rejected_at(tmp_path, records: list, name: str, k: int, *, diagnose: bool = False):
    """Both checkers stop at event ``k``; TLC's rejection names that record as written."""
    v, m = both(tmp_path, records, name, diagnose=diagnose)
    assert not v.ok and m["verdict"] == "nonconforming", (v.explain(), m)
    assert v.first_unmatched == k == m["first_bad_event"] == m["stops_conforming_at"]
    assert tlctrace.agrees(v, m)
    ev = events(records)[k]
    assert v.record["i"] == k and v.record["name"] == ev["name"] and v.record["nid"] == ev["nid"]
    assert v.record.get("msg") == ev.get("msg")          # the record as written (not the log's ids)
    assert f"event {k} ({ev['name']} at node {ev['nid']})" in v.detail
    return v, m


def joiner_moved_last_rejected(tmp_path, run: list, joiner: int):
    """A ring run with a joiner: the first token naming the joiner has it
    moved to the end of its nodelist (a forged ring order); both checkers
    must reject the run at that record."""
    recs = copy.deepcopy(run)
    evs = events(recs)
    k = next(j for j, e in enumerate(evs) if e["name"] == "TokenReceived" and joiner in e["msg"]["nodelist"])
    nl = evs[k]["msg"]["nodelist"]
    assert nl[-1] != joiner
    evs[k]["msg"]["nodelist"] = [x for x in nl if x != joiner] + [joiner]
    rejected_at(tmp_path, recs, "nodelist", k)


def explained_rejection(tmp_path, records: list, k: int):
    """TLC rejects ``records`` at event ``k``, whose logged state is a lie,
    and says why: the states matched the line before (at that node) and the
    actions enabled there, the logged one among them."""
    v = tlctrace.validate(load(write(tmp_path / "lie.ndjson", records)))
    ev = events(records)[k]
    assert not v.ok and v.first_unmatched == k
    assert v.record["name"] == ev["name"]
    assert v.matched_count >= 1 and v.matched_before
    assert f"node |-> {ev['nid']}" in v.matched_before[0]
    assert f"{ev['name']}({ev['nid']})" in v.enabled
    text = v.explain()
    assert "matched the line before" in text and "actions enabled there" in text
    return v


def left_as_suspected(records: list) -> list:
    """``records`` with its first Crash logged as the cluster's runner logs
    a node that left as suspected (LeaveSuspected), under a header that
    declares it (FalseSuspicion, SuspectLeaves) and no crash budget."""
    recs = copy.deepcopy(records)
    k = next(j for j, r in enumerate(recs) if r.get("name") == "Crash")
    recs[k]["name"] = "LeaveSuspected"
    recs[0]["constants"].update(FalseSuspicion=True, SuspectLeaves=True, MaxCrashes=0)
    return recs
