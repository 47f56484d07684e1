"""Explanations as data: each finding and violation of a check is a
``report.Explanation`` (finding id, property, members, messages, step,
docs anchor, diagram), the same fields in summary.json, and one block of at
most three lines per finding in report.md and report.html, with a link to
its diagram; a run's findings are never run together in one paragraph."""

import json
import re

from groupcheck.conformance.audit import stages as audit
from groupcheck.conformance.replay import registry as protocols
from groupcheck.conformance.audit import report

WITNESS = "member 4 delivered 2.3 after 2.1 of member 2, skipping 2.2 (member 2 was never killed)"


def _runs():
    order = {"run_id": "r1", "verdict": "documented", "reason": "TotalOrder: members 1 and 2 deliver 1.1, 2.1 "
             "in opposite orders", "first_bad_event": 1, "property": "TotalOrder",
             "finding": "sequencer/coordinator-crash-order", "finding_why": "across the failover",
             "violations": [{"property": "TotalOrder", "event": 1, "witness": "members 1 and 2 deliver 1.1, 2.1 "
                             "in opposite orders", "finding": "sequencer/coordinator-crash-order"}],
             "events": [{"i": 0, "name": "Send", "nid": 1, "params": {}, "msg": {"type": "DATA", "sender": 1,
                                                                                   "seqno": 1}},
                        {"i": 1, "name": "RecvData", "nid": 2, "params": {"p": 1},
                         "msg": {"type": "DATA", "sender": 1, "seqno": 1}}]}
    lost = {"run_id": "r2", "verdict": "documented", "reason": f"GapFreeFIFO: {WITNESS}", "first_bad_event": 1,
            "property": "GapFreeFIFO", "finding": "sequencer/lost-after-coordinator-crash", "finding_why": "held",
            "violations": [{"property": "GapFreeFIFO", "event": 1, "witness": WITNESS,
                            "finding": "sequencer/lost-after-coordinator-crash"}],
            "events": order["events"]}
    return [order, lost]


def test_each_finding_is_data_and_three_lines_at_most(tmp_path):
    c = audit.conformance_check(protocols.get("sequencer"), {"runs": 50, "verdicts": {"ok": 48, "documented": 2},
                                                             "bad_runs": _runs()})
    assert c.verdict == "finding"
    by = {e.finding: e for e in c.explanations}
    assert set(by) == {"sequencer/coordinator-crash-order", "sequencer/lost-after-coordinator-crash"}
    lost = by["sequencer/lost-after-coordinator-crash"]
    assert (lost.property, lost.members, lost.messages) == ("GapFreeFIFO", [4, 2], ["2.3", "2.1", "2.2"])
    assert lost.step == "run r2, event 1" and lost.diagram == 1
    assert lost.doc == "docs/sequencer.md#losses-after-a-coordinator-crash-three-findings-and-their-fixes"
    assert by["sequencer/coordinator-crash-order"].members == [1, 2]
    for e in c.explanations:
        lines = report.explanation_lines(e)
        assert 2 <= len(lines) <= 3 and all("\n" not in ln for ln in lines)
    # summary.json: the same fields, and back
    paths = report.write_all(tmp_path, [c])
    s = json.loads(paths["summary.json"].read_text())
    (row,) = s["checks"]
    assert {e["finding"] for e in row["explanations"]} == set(by)
    assert next(e for e in row["explanations"] if e["finding"] == lost.finding)["messages"] == ["2.3", "2.1", "2.2"]
    back, _ = report.checks_from_summary(s)
    assert back[0].explanations == c.explanations
    # report.md: one block per finding, three lines at most, each linking to the diagram
    md = paths["report.md"].read_text()
    blocks = [ln for ln in md.splitlines() if ln.startswith("  - **")]
    assert len(blocks) >= 2 and all(len(b.split("<br>")) <= 3 for b in blocks)
    assert all("[diagram](#" in b for b in blocks[:2])          # "Violations and why" links each to its diagram
    # report.html: one div per finding, three lines at most
    page = paths["report.html"].read_text()
    divs = re.findall(r'<div class="explanation">(.*?)</div>', page, re.S)
    assert len(divs) >= 2 and all(d.count("<br>") <= 2 for d in divs)
    assert any("sequencer/lost-after-coordinator-crash" in d and "2.2" in d for d in divs)


def test_a_counterexample_to_induction_is_drawn_and_explained():
    from groupcheck.model.proofs import prover, registry
    enc = next(e for e in registry.select("stable", every=True) if e.variant == "JoinRace")
    q = prover.Query("stable", "JoinRace", "consecution:SendStable:JoinDigest", "cti", 0.1, action="SendStable(1)",
                     pre={"a": "1", "b": "2"}, post={"a": "1", "b": "3"}, reachable=True,
                     path=["Init", "SendStable(1)"], expected_cti=True, members=2)
    c = audit.prove_check(enc, queries=[q])
    (g,) = c.diagrams
    assert g.text.splitlines()[2:] == ["b | 2 | 3", "(1 other variables unchanged)"]
    (e,) = c.explanations
    assert (e.property, e.step, e.doc, e.diagram) == ("JoinDigest", "step SendStable(1)", "docs/proofs.md", 0)
