"""Documented findings have a shape and a rate (conformance/findings.py).

A violation counts as a documented finding only when the finding's witness
matches the run; a campaign's count of each finding per fault plan kind
must stay inside the band its measured rate gives; the fixed stack runs the
same plans with no violation.
"""

from __future__ import annotations

import pytest

from groupcheck.conformance import findings
from groupcheck.conformance.audit import stages as audit
from groupcheck.conformance.replay import registry as protocols
from groupcheck.core.trace.reader import Trace, from_records
from groupcheck.impl import sequencer as seq_impl
from groupcheck.impl.events import Send

SEQ = protocols.get("sequencer")


def _run(proto, seed):
    faults, options = proto.draw(seed)
    records, _ = proto.simulate(seed, faults, {**proto.default_options, **options})
    trace = from_records(records)
    return trace, proto.replay(trace, visited=False)


def _first(proto, finding_id, seeds=range(200)):
    for sd in seeds:
        trace, rep = _run(proto, sd)
        if rep.finding == finding_id:
            return trace, rep
    pytest.fail(f"no run of {finding_id} in the first {len(seeds)} drawn runs")


def _without(trace: Trace, keep) -> Trace:
    return Trace(trace.path, trace.header, [e for e in trace.events if keep(e)], trace.end, trace.files, trace.states)


def test_every_violation_of_the_drawn_campaign_has_a_documented_shape():
    """The witnesses cover what the campaign shows (200 draws): no
    violation is left without a finding, and runs without a coordinator
    crash show none."""
    for sd in range(200):
        _, rep = _run(SEQ, sd)
        assert rep.verdict in ("ok", "documented"), (sd, rep.reason, rep.finding_why)
        if rep.verdict == "documented":
            assert rep.finding and all(v["finding"] for v in rep.violations), (sd, rep.reason, rep.finding_why)
            assert rep.plan == "coordinator crash", (sd, rep.plan)


def test_total_order_witness_needs_the_crashed_coordinator():
    trace, rep = _first(SEQ, "sequencer/coordinator-crash-order")
    f = next(f for f in SEQ.findings if f.id == rep.finding)
    prop = rep.reason.split(":")[0]
    assert "crashed" in f.witness(trace, prop, rep.reason)
    # the same deliveries with no coordinator crash are not this finding's shape
    assert f.witness(_without(trace, lambda e: e.get("name") != "Crash"), prop, rep.reason) is None


def test_loss_witness_needs_a_message_the_crashed_coordinator_held():
    trace, rep = _first(SEQ, "sequencer/lost-after-coordinator-crash")
    f = next(f for f in SEQ.findings if f.id == rep.finding)
    prop = rep.reason.split(":")[0]
    assert f.witness(trace, prop, rep.reason)
    # a loss of a message sent after its sender moved to the new view is another fault
    late = [dict(e, i=10 ** 6) if e.get("name") == "Send" else e for e in trace.events]
    moved = Trace(trace.path, trace.header, late, trace.end, trace.files, trace.states)
    assert f.witness(_without(moved, lambda e: e.get("name") != "RecvForward"), prop, rep.reason) is None
    assert findings.classify(SEQ, _without(trace, lambda e: e.get("name") != "Crash"), prop, rep.reason)[0] is None


def test_a_violation_in_no_findings_shape_fails_the_audit():
    """Before, any TotalOrder violation of plain SEQUENCER passed as known."""
    base = {"runs": 2, "verdicts": {"ok": 1, "violation": 1}}
    known = audit.conformance_check(SEQ, {**base, "bad_runs": [
        {"run_id": "a", "verdict": "violation", "reason": "TotalOrder: 1 before 2",
         "finding": "sequencer/coordinator-crash-order"}]})
    assert known.as_expected
    other = audit.conformance_check(SEQ, {**base, "bad_runs": [
        {"run_id": "b", "verdict": "violation", "reason": "TotalOrder: 1 before 2", "finding": None}]})
    assert not other.as_expected and "no documented finding's shape" in other.detail


def test_band_is_the_binomial_range_of_the_measured_rate():
    lo, hi = findings.band((536, 1284), 100)
    assert 0 < lo < 41 < hi < 100
    assert findings.band(None, 50) == (0, 0)             # never measured: no hit allowed
    assert findings.band((0, 1000), 50)[0] == 0
    assert findings.band((100, 1000), 300)[1] < findings.band((500, 1000), 300)[0]   # rates 10 % and 50 % apart
    # every count inside the band is likelier than ALPHA at the measured rate's ends
    assert findings._binom_cdf(hi, 100, findings._wilson(536, 1284)[1]) >= 1 - findings.ALPHA


def test_more_losses_after_a_crash_leave_the_band(monkeypatch):
    """A SEQUENCER layer that never re-sends its forward-table at a view
    change keeps every logged variable right and loses the held messages in
    most coordinator-crash runs: each loss has the finding's shape, so only
    the rate shows it.  The layer as it is stays inside its band."""
    def tally():
        rows = []
        for sd in range(300):
            _, rep = _run(SEQ, sd)
            rows.append({"plan": rep.plan, "finding": rep.finding})
        return findings.tally(rows)
    assert findings.out_of_band(SEQ, tally()) == []
    cls = seq_impl.SequencerLayer if hasattr(seq_impl, "SequencerLayer") else next(
        c for c in vars(seq_impl).values() if isinstance(c, type) and hasattr(c, "_install_view"))
    orig = cls._install_view
    monkeypatch.setattr(cls, "_install_view", lambda self, view: [e for e in orig(self, view)
                                                                   if not isinstance(e, Send)])
    bad = findings.out_of_band(SEQ, tally())
    assert any(b.startswith("sequencer/lost-after-coordinator-crash") for b in bad), bad


def test_the_fixed_stack_runs_the_same_plans_without_a_finding():
    c = audit.fixed_stack_check("sequencer", "sequencerflush", 30, 0)
    assert c.as_expected, c.detail
    assert {f.fixed_by for f in SEQ.findings} == {"sequencerflush"}


def test_raincore_two_tokens_needs_a_crash_then_a_regeneration():
    rc = protocols.get("raincore")
    f = rc.findings[0]
    _, options = rc.draw(805)       # a drawn run with two nodes Eating (docs/raincore.md), its drawn plan
    records, _ = rc.simulate(805, "auto", {**rc.default_options, **options})    # (the draw aims it: late 911s)
    trace = from_records(records)
    rep = rc.replay(trace, visited=False)
    assert rep.verdict == "documented" and rep.finding == f.id, rep
    assert f.witness(_without(trace, lambda e: e.get("name") != "Crash"), "AtMostOneToken", rep.reason) is None


def _ring_run(events, **constants):
    """A trace of ring records (name, node, message, the node's state after)."""
    from groupcheck.core.trace.reader import Trace
    header = {"protocol": "raincoreflush", "constants": {"LossyRing": True, "FalseSuspicion": True, **constants}}
    recs = [{"i": i, "name": name, "nid": nid, "msg": msg or {}, "state": state or {}}
            for i, (name, nid, msg, state) in enumerate(events)]
    return Trace("synthetic", header, recs, None)


EAT, STARVE = {"status": "Up", "tokenState": "Eating"}, {"status": "Up", "tokenState": "Starving"}


def test_a_false_report_gives_two_tokens_only_when_the_reported_node_took_nothing_of_its_reporter_after():
    """LossySuspectUntimely's shape: node 1 eats; node 2, starving, has its
    claim to node 1 reported undelivered and regenerates.  The same with node
    1 taking a token of node 2 after the report (a frame node 2 confirmed
    before it: outside LossySuspectReportFinal) is not the finding."""
    f = protocols.get("raincoreflush").findings[0]
    assert protocols.get("raincoresequencerflush").findings == protocols.get("raincoreflush").findings
    claim = {"type": "911", "orig": 2, "cur": 2, "dest": 1, "nodelist": [1, 2]}
    untimely = [("TokenReceived", 1, {"type": "TOKEN", "cur": 2, "dest": 1}, EAT),
                ("StarvingTimeout", 2, None, STARVE),
                ("911DeliveryFailure", 2, claim, STARVE),
                ("911Received", 2, {**claim, "dest": 2}, EAT)]
    why = f.witness(_ring_run(untimely), "AtMostOneToken", "AtMostOneToken", 3)
    assert why and "node 2 reported a message to node 1" in why
    late_take = untimely[1:] + [("TokenReceived", 1, {"type": "TOKEN", "cur": 2, "dest": 1}, EAT)]
    assert f.witness(_ring_run(late_take), "AtMostOneToken", "AtMostOneToken", 3) is None
    assert f.witness(_ring_run(untimely, FalseSuspicion=False), "AtMostOneToken", "", 3) is None
    assert f.witness(_ring_run(untimely), "AtMostOneToken", "", 2) is None          # one eater yet
    left = untimely[:3] + [("LeaveSuspected", 1, None, None), untimely[3]]
    assert f.witness(_ring_run(left), "AtMostOneToken", "", 4) is None               # node 1 had left
    honest = [e if e[0] != "911DeliveryFailure" else ("911Received", 1, claim, EAT) for e in untimely]
    assert f.witness(_ring_run(honest), "AtMostOneToken", "", 3) is None             # no report
