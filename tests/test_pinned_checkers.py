"""Decisions of the checkers, each pinned: which properties TLC trace
validation names broken, and on what a history is judged."""

from __future__ import annotations

import pytest

from groupcheck.conformance import history
from groupcheck.core.trace import history as history_format
from groupcheck.conformance.replay.registry import promises


def test_tlc_names_the_properties_every_matching_behaviour_broke():
    """TLC trace validation's broken properties at a record: the
    intersection over the behaviours that match the log there (a union
    would name a property one behaviour happened to break); the union only
    when no property is common."""
    from groupcheck.conformance.tlctrace import broken_properties
    assert broken_properties(['{"TotalOrder", "NoDuplicates"}, [vid |-> 1]', '{"TotalOrder"}, [vid |-> 2]']) \
        == ["TotalOrder"]
    assert broken_properties(['{"A"}, s1', '{"C"}, s2']) == ["A", "C"]
    assert broken_properties(['{"B", "A"}, s1']) == ["A", "B"]


def _h(protocol=None, promised=None):
    h = history_format.History(run_id="r", files=["h.ndjson"], nodes=[1, 2])
    h.protocol, h.promised = protocol, promised
    return h


def test_what_a_history_is_judged_on_and_in_which_precedence():
    """--protocol (agreeing with the header) over the header's promises over
    the header's protocol's promises; nothing named: every check; a
    --protocol that disagrees with the header: an input error."""
    every = list(history_format.CHECKS)
    seq = [c for c in every if c in history.promised_checks("sequencer")]
    flush = [c for c in every if c in history.promised_checks("flush")]
    assert seq != flush and set(promises("flush")) and "TotalOrder" not in flush
    assert history.judged_checks(_h()) == (every, "no protocol named: every check")
    assert history.judged_checks(_h("sequencer"))[0] == seq
    assert history.judged_checks(_h("sequencer", ["Integrity"]))[0] == ["Integrity"]
    assert history.judged_checks(_h(None, ["Integrity"]), "flush")[0] == flush
    assert history.judged_checks(_h("flush", ["Integrity"]), "flush")[0] == flush
    assert history.judged_checks(_h(), "sequencer")[0] == seq
    with pytest.raises(history_format.HistoryError, match="--protocol sequencer disagrees"):
        history.judged_checks(_h("flush"), "sequencer")


def _row(verdict, violations=(), reason=None, protocol="sequencer"):
    return {"stage": "replay", "verdict": verdict, "protocol": protocol, "reason": reason,
            "violations": [{"property": p, "event": None, "witness": w, "finding": None, "finding_why": None}
                           for p, w in violations]}


def test_the_pipeline_judge_against_the_replay():
    """The pipeline's own property check beside the replay (conformance/pipeline/dataset.py ``merge_judged``):
    a violation the replay missed makes the run a violation; the same first
    property with the same witness agrees; another property, or the same
    one with another witness, disagrees; a replay property no history
    shows (a model invariant) is not compared."""
    from groupcheck.conformance.pipeline.dataset import merge_judged as _merge
    from groupcheck.core.properties import Violation
    to = Violation("TotalOrder", "member 2 delivered 3.1 before 2.1", [2, 3], [(3, 1), (2, 1)])
    got = _merge(_row("ok"), [to])
    assert got["verdict"] == "violation" and got["violations"][0]["property"] == "TotalOrder"
    assert "found by the property check, not by the replay" in got["reason"]
    assert _merge(_row("ok"), [])["verdict"] == "ok" and _merge(_row("ok"), [])["agree"] is True
    same = _row("violation", [("TotalOrder", to.reason)], f"TotalOrder: {to.reason}")
    assert _merge(same, [to])["agree"] is True and _merge(same, [to])["verdict"] == "violation"
    other = _row("violation", [("TotalOrder", "member 3 delivered 1.1 before 2.2")],
                 "TotalOrder: member 3 delivered 1.1 before 2.2")
    assert _merge(other, [to])["agree"] is False
    fifo = _row("violation", [("SenderFIFO", "x")], "SenderFIFO: x")
    assert _merge(fifo, [to])["agree"] is False
    assert _merge(_row("violation", [("SafeGC", "y")], "SafeGC: y", "stable"), [to])["agree"] is None
    assert _merge(_row("incomplete"), [to])["verdict"] == "violation"     # nothing wrong seen by the replay
    assert _merge(_row("nonconforming"), [to])["verdict"] == "nonconforming"   # not judged apart


def test_the_findings_matcher():
    """classify tries only the findings of the violated property, in order,
    takes the first whose witness has the shape, never lets a witness crash
    the verdict, and says why none matched; classify_run documents a run only
    when every violation is covered."""
    from types import SimpleNamespace

    from groupcheck.conformance import findings as F
    from groupcheck.conformance.replay.engine import RunReport, violation

    def boom(*a):
        raise KeyError("state")
    f_other = F.Finding("p/other", ("Agreement",), "docs/x.md", lambda *a: "would match anything")
    f_boom = F.Finding("p/boom", ("TotalOrder",), "docs/x.md", boom)
    f_no = F.Finding("p/no", ("TotalOrder",), "docs/x.md", lambda *a: None)
    f_yes = F.Finding("p/yes", ("TotalOrder",), "docs/x.md", lambda t, p, r, at: f"shape of {r}")
    proto = SimpleNamespace(name="p", findings=(f_other, f_boom, f_no, f_yes))
    fid, why = F.classify(proto, None, "TotalOrder", "w")
    assert (fid, why) == ("p/yes", "shape of w")
    fid, why = F.classify(SimpleNamespace(name="p", findings=(f_other, f_boom, f_no)), None, "TotalOrder", "w")
    assert fid is None and "p/boom: witness unreadable (KeyError" in why and "p/no: not its shape" in why
    assert F.classify(SimpleNamespace(name="p", findings=(f_other,)), None, "TotalOrder", "w") == \
        (None, "no documented finding of p violates TotalOrder")

    def run(*props):
        rep = RunReport("f", "r", "p", "violation", 3, None, None,
                        violations=[violation(p, None, "w") for p in props])
        F.classify_run(proto, None, rep)
        return rep
    assert run("TotalOrder", "Agreement").verdict == "documented"
    mixed = run("TotalOrder", "NoDuplicates")
    assert mixed.verdict == "violation" and mixed.finding is None
    assert mixed.finding_why.startswith("not covered: NoDuplicates") and "covered: TotalOrder by p/yes" in mixed.finding_why


def test_every_end_of_run_property_that_fails_is_reported():
    """judge_end: the properties that fail in every candidate, each with its
    witness (not only the first), and none that some candidate satisfies."""
    from types import SimpleNamespace

    from groupcheck.conformance.replay.engine import Binding
    b = Binding.__new__(Binding)
    b.trace = SimpleNamespace(events=[1, 2, 3])
    fails = {"a": {"EventualDelivery": "w1", "Quiescent": "w2"}, "b": {"Quiescent": "w3", "EventualDelivery": "w4"}}
    assert b.judge_end({"a", "b"}, fails.get) == [("EventualDelivery", "w1"), ("Quiescent", "w2")]
    assert b.ended == {"EventualDelivery": 3, "Quiescent": 3}
    assert b.judge_end({"a", "c"}, {"a": {"Quiescent": "w"}, "c": {}}.get) == []


def test_the_history_stage_counts_only_the_checks_the_protocol_promises():
    """agrees_with_replay: a FLUSH run whose deliveries break TotalOrder (FLUSH
    promises no total order) and that the replay accepts agrees with it;
    the history's TotalOrder violation is not one of its findings."""
    from groupcheck.conformance.replay import conform, registry
    from groupcheck.core.trace.reader import from_records
    proto = registry.get("flush")
    faults, options = proto.draw(14)
    records, _ = proto.simulate(14, faults, {**proto.default_options, **options})
    assert "TotalOrder" in {v.check for v in history.check(history.from_records(history.from_trace(records)))}
    rep = conform.replay(from_records(records))
    assert rep.verdict == "ok"
    assert history.agrees_with_replay(records, rep) == (True, [], "")


def test_tlc_gets_an_end_entry_only_from_a_trace_spec_that_judges_the_end():
    """log_entries: a quiescent run's log gets the END entry when its trace
    spec judges end-of-run properties (``TLATrace.end``), and not otherwise;
    a run that did not end quiescent never gets one."""
    from groupcheck.conformance.tlctrace import END, log_entries, TLATrace
    from groupcheck.core.trace.reader import Trace
    ev = {"i": 0, "name": "Send", "nid": 1, "params": {}, "msg": None, "state": None}
    quiet = Trace("t", {"protocol": "sequencer"}, [ev], {"kind": "end", "quiescent": True})
    busy = Trace("t", {"protocol": "sequencer"}, [ev], {"kind": "end", "quiescent": False})
    judged = TLATrace(end=("EventualDelivery",))
    assert [e["name"] for e in log_entries(quiet, judged)] == ["Send", END]
    assert log_entries(quiet, judged)[-1]["i"] == 1
    assert [e["name"] for e in log_entries(quiet, TLATrace())] == ["Send"]
    assert [e["name"] for e in log_entries(busy, judged)] == ["Send"]


def test_an_invariant_is_broken_only_when_every_candidate_breaks_it():
    """note_invariants: the replay notes a property after a step only when
    no state consistent with the run so far satisfies it (one that some
    candidate keeps is no verdict on the implementation), once, at the
    first such step."""
    from groupcheck.conformance.replay.engine import Binding
    b = Binding.__new__(Binding)
    b.found, b._held, b.reduced = {}, {}, []
    inv = {"P": lambda t: t == "a"}
    b.note_invariants({"i": 4}, {"a", "b"}, ["P"], inv)
    assert b.violated() == []
    b.note_invariants({"i": 5}, {"b", "c"}, ["P"], inv)
    b.note_invariants({"i": 6}, {"c"}, ["P"], inv)
    assert b.violated() == [("P", 5, "fails in every model state consistent with the run so far")]
