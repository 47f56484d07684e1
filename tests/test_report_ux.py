"""The audit report a release engineer reads: the verdict banner, expected
violations distinct and explained, messages drawn at their receipt and lost
ones never as receipts, labels wrapped not cut, every violating run drawn,
JUnit failures carrying the counterexample, the step summary, re-rendering
from summary.json, and a report navigable without a browser's help
(contents, anchors, links to diagrams, collapsed passes and skips), read here
with the standard library's html.parser."""

import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

from typer.testing import CliRunner

from groupcheck.cli.main import app
from groupcheck.conformance.audit import stages as audit
from groupcheck.conformance.audit import diagram
from groupcheck.conformance.replay import registry as protocols
from groupcheck.conformance.audit import report
from groupcheck.conformance.audit.report import Check
from groupcheck.model.values import Fn


def _chan(**queues):
    base = {(p, q): () for p in (1, 2, 3) for q in (1, 2, 3)}
    base.update({tuple(int(x) for x in k[1:].split("_")): v for k, v in queues.items()})
    return Fn(base)


def test_mermaid_draws_each_message_at_its_receipt():
    """1 sends to 3 first, 2 sends to 3 second; 3 receives 2's first: the
    diagram must show 3 receiving 2's message first (what a TotalOrder
    counterexample is about), not the send order."""
    long = "x" * 150
    trace = [(None, {"chan": _chan(), "got": (0, 0, 0), "g": 0}),
             ("Send", {"chan": _chan(c1_3=("A",)), "got": (0, 0, 0), "g": 0}),
             ("Send", {"chan": _chan(c1_3=("A",), c2_3=("B",)), "got": (0, 0, 0), "g": 0}),
             ("Recv", {"chan": _chan(c1_3=("A",)), "got": (0, 0, 1), "g": 0}),
             ("Recv", {"chan": _chan(), "got": (0, 0, 2), "g": long})]
    steps = diagram.steps_from_states(trace, 3)
    mm = diagram.mermaid(steps, 3)
    arrows = [ln.strip() for ln in mm.splitlines() if "-)" in ln]
    assert arrows == ['m2-)m3: "B" (sent at step 3)', 'm1-)m3: "A" (sent at step 2)']
    # the receipt of B comes after the note of step 3 (the send of B)
    assert mm.index("3. Send") < mm.index('m2-)m3') < mm.index("4. Recv")
    # every changed variable, in full: the 150-character value is wrapped, not cut
    assert f'g = "{long}"' in steps[-1].note and "got[3] = 2" in steps[-1].note
    svg = diagram.svg(steps, 3)
    assert "…" not in svg and svg.count("x") >= 150
    assert svg.count('class="msg received"') == 2


def test_message_bags_give_arrows():
    """A set of records with from/to (STABLE's net, Raincore's messages)."""
    m = Fn({"from": 2, "to": 1, "type": "stable"})
    trace = [(None, {"net": frozenset(), "x": (0, 0)}),
             ("SendStable", {"net": frozenset({m}), "x": (0, 1)}),
             ("ReceiveStable", {"net": frozenset(), "x": (1, 1)})]
    steps = diagram.steps_from_states(trace, 2)
    (a,) = steps[1].sends
    assert (a.src, a.dst, a.sent_at, a.received_at) == (2, 1, 2, 3)
    assert 'm2-)m1: ' in diagram.mermaid(steps, 2)


def test_a_message_dropped_by_a_crash_is_lost_not_received():
    """Sequencer's Crash(m) empties the channels to m: the message leaves
    the network with no change at its receiver, so it is drawn lost at the
    crash (a cross, "lost" in the text and Mermaid), never as a receipt; a
    real receipt changes its receiver.  The last step is the violating state."""
    trace = [(None, {"chan": _chan(), "recv": (0, 0, 0), "crashed": frozenset()}),
             ("Send", {"chan": _chan(c1_1=("D",), c1_2=("D",)), "recv": (0, 0, 0), "crashed": frozenset()}),
             ("RecvData", {"chan": _chan(c1_1=("D",)), "recv": (0, 1, 0), "crashed": frozenset()}),
             ("Crash", {"chan": _chan(), "recv": (0, 1, 0), "crashed": frozenset({1})})]
    steps = diagram.steps_from_states(trace, 3, violated="TotalOrder")
    to2, to1 = steps[1].sends
    assert (to2.received_at, to2.lost_at) == (3, None)
    assert (to1.received_at, to1.lost_at) == (None, 4)
    assert steps[3].actors == [1] and steps[3].bad and "TotalOrder" in steps[3].mark
    txt = diagram.text(steps)
    assert "1 receives from 1" not in txt and "1 → 1 lost" in txt
    assert 'm1-xm1: "D" (lost)' in diagram.mermaid(steps, 3)
    svg = diagram.svg(steps, 3, "t")
    assert svg.count('class="msg lost"') == 1 and 'data-lost="4"' in svg and 'class="cross"' in svg
    assert 'data-received="4"' not in svg


def test_a_message_removed_from_a_bag_without_a_receiver_change_is_lost():
    """STABLE's LoseMessage takes a record out of ``net`` and changes nothing else."""
    m = Fn({"from": 2, "to": 1, "type": "data"})
    trace = [(None, {"net": frozenset(), "x": (0, 0)}),
             ("Send", {"net": frozenset({m}), "x": (0, 1)}),
             ("LoseMessage", {"net": frozenset(), "x": (0, 1)})]
    (a,) = diagram.steps_from_states(trace, 2)[1].sends
    assert (a.received_at, a.lost_at) == (None, 3)


def test_diagrams_use_no_glyph_that_needs_an_emoji_font():
    """Every character of a diagram's labels is in the blocks a plain
    monospace font covers (DejaVu): Latin, punctuation, arrows, math brackets."""
    g = diagram.draw(diagram.steps_from_events(_violation_run("r1")["events"], 1), None, "r1: TotalOrder")
    for s in (g.svg, g.text, g.mermaid):
        assert all(ord(ch) < 0x2190 or 0x2190 <= ord(ch) <= 0x21FF or ch in "⟨⟩" for ch in s), \
            sorted({ch for ch in s if ord(ch) >= 0x2190})
    assert "the run stops conforming here" in g.text


def _violation_run(run_id):
    events = [{"i": 0, "name": "Send", "nid": 1, "params": {}, "msg": {"type": "DATA", "sender": 1, "seqno": 1}},
              {"i": 1, "name": "RecvData", "nid": 2, "params": {"p": 1}, "msg": {"type": "DATA", "sender": 1, "seqno": 1}}]
    return {"run_id": run_id, "verdict": "documented", "reason": "TotalOrder: 2 before 1",
            "property": "TotalOrder", "finding": "sequencer/coordinator-crash-order",
            "finding_why": "2 before 1 across the failover", "first_bad_event": 1, "events": events}


def test_every_violating_run_drawn_up_to_n_then_counted():
    seq = protocols.get("sequencer")
    runs = [_violation_run(f"r{k}") for k in range(audit.DRAWN_RUNS + 2)]
    c = audit.conformance_check(seq, {"runs": 50, "verdicts": {"ok": 43, "documented": len(runs)},
                                      "bad_runs": runs})
    assert c.as_expected and c.verdict == "finding"
    assert len(c.diagrams) == audit.DRAWN_RUNS and c.diagrams_omitted == 2
    assert "TotalOrder" in c.explanation and "docs/sequencer.md" in c.explanation
    md = report.markdown([c])
    assert md.count("```mermaid") == audit.DRAWN_RUNS and "2 more violating runs not drawn" in md
    assert "🔶 expected violation" in md


def test_junit_failure_holds_the_counterexample_and_time_is_wall_time(tmp_path):
    g = diagram.draw(diagram.steps_from_events(_violation_run("r1")["events"], 1), None, "r1")
    bad = Check(id="conformance/x", kind="conformance", protocol="x", name="1 runs", expected="all runs conform",
                observed="1 violation", as_expected=False, seconds=40.0, diagrams=[g])
    ok = Check(id="tlc/x/A", kind="tlc", protocol="x", name="A", expected="ok", observed="ok",
               as_expected=True, seconds=50.0)
    skip = Check(id="link/x/B", kind="link", protocol="x", name="B", expected="graphs equal", observed="skipped",
                 as_expected=True, seconds=0.0, skipped=True, explanation="marked slow")
    paths = report.write_all(tmp_path, [bad, ok, skip], {"wall_seconds": 60.0})
    root = ET.parse(paths["junit.xml"]).getroot()
    assert root.get("time") == "60.000" and root.get("skipped") == "1"
    (failure,) = root.iter("failure")
    assert "2. RecvData(p=1)" in failure.text and "2 receives from 1 (sent at step 1): DATA" in failure.text
    assert "2. RecvData(p=1) [the run stops conforming here]" in failure.text
    md = paths["report.md"].read_text()
    assert "<details><summary>1 skipped: marked slow</summary>" in md and "`link/x/B`" in md
    html = paths["report.html"].read_text()
    assert 'class="banner fail"' in html and '<code id="check-link-x-B">link/x/B</code>' in html


def test_audit_from_summary_and_github_step_summary(tmp_path, monkeypatch):
    c = Check(id="tlc/x/A", kind="tlc", protocol="x", name="A", expected="Inv", observed="Inv",
              as_expected=True, seconds=1.0, finding=True, explanation="A finding.",
              diagrams=[report.Diagram("t", "sequenceDiagram", "<svg></svg>", "1. Init")])
    first = tmp_path / "one"
    report.write_all(first, [c], {"wall_seconds": 2.0})
    step = tmp_path / "step.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    r = CliRunner().invoke(app, ["audit", "--from", str(first / "summary.json"), "--out", str(tmp_path / "two")])
    assert r.exit_code == 0, r.output
    again = json.loads((tmp_path / "two" / "summary.json").read_text())
    assert again["checks"] == json.loads((first / "summary.json").read_text())["checks"]
    assert step.read_text() == (tmp_path / "two" / "report.md").read_text()
    assert "PASS: all 1 checks as expected" in step.read_text()


def test_messages_in_flight_at_init_are_drawn_from_init():
    tok = Fn({"cur": 2, "dest": 1, "seq": 4})
    trace = [(None, {"tokenMsgs": frozenset({tok}), "s": (0, 0)}),
             ("Recv", {"tokenMsgs": frozenset(), "s": (1, 0)})]
    steps = diagram.steps_from_states(trace, 2)
    (a,) = steps[0].sends
    assert (a.src, a.dst, a.sent_at, a.received_at) == (2, 1, 1, 2)
    assert "loses" not in steps[1].note


def test_the_conformance_stage_draws_every_violating_run(tmp_path):
    """Real runs (the SEQUENCER campaign, local engine): each violating run,
    up to DRAWN_RUNS, carries its events and becomes a diagram."""
    from groupcheck.conformance.pipeline import stages as pipeline
    res = pipeline.run_audit_stage(["sequencer"], runs=60, seed=0, out_dir=tmp_path, engine="local",
                                   draw=audit.DRAWN_RUNS)["sequencer"]
    bad = res["bad_runs"]
    assert len(bad) >= 2, "the campaign should show the coordinator-crash finding"
    with_events = [r for r in bad if r.get("events")]
    assert len(with_events) == min(len(bad), audit.DRAWN_RUNS)
    c = audit.conformance_check(protocols.get("sequencer"), res)
    assert len(c.diagrams) == len(with_events)
    assert c.diagrams_omitted == len(bad) - len(with_events)
    assert all("-)" in g.mermaid for g in c.diagrams)


class _Page(HTMLParser):
    """report.html as the tests read it: ids, links, the details each element
    sits in, and the visible text."""

    def __init__(self, page: str):
        super().__init__()
        self.ids, self.links, self.stack, self.text = {}, [], [], []
        self.details = []           # [summary text, [ids inside]]
        self.in_summary = False
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag not in ("wbr", "br", "col", "circle", "line", "path", "rect", "meta", "marker"):
            self.stack.append(tag)
        if tag == "details":
            self.details.append(["", []])
        if tag == "summary":
            self.in_summary = True
        if "id" in a:
            self.ids[a["id"]] = tag
            for d in self._open_details():
                d[1].append(a["id"])
        if tag == "a" and "href" in a:
            self.links.append((a["href"], "nav" in self.stack))

    def _open_details(self):
        depth = self.stack.count("details")
        return self.details[len(self.details) - depth:] if depth else []

    def handle_endtag(self, tag):
        if tag == "summary":
            self.in_summary = False
        if tag in self.stack:
            while self.stack.pop() != tag:
                pass

    def handle_data(self, data):
        if "style" in self.stack or "title" in self.stack:
            return
        self.text.append(data)
        if self.in_summary:
            self.details[-1][0] += data

    def collapsed(self, element_id):
        return any(element_id in ids for _, ids in self.details)


def _report_checks():
    trace = [(None, {"chan": _chan(), "recv": (0, 0, 0), "crashed": frozenset()}),
             ("Send", {"chan": _chan(c1_1=("D",), c1_2=("D",)), "recv": (0, 0, 0), "crashed": frozenset()}),
             ("RecvData", {"chan": _chan(c1_1=("D",)), "recv": (0, 1, 0), "crashed": frozenset()}),
             ("Crash", {"chan": _chan(), "recv": (0, 1, 0), "crashed": frozenset({1})})]
    g = diagram.draw(diagram.steps_from_states(trace, 3, violated="TotalOrder"), 3, "x/Crash: TotalOrder")
    finding = Check(id="tlc/x/Crash", kind="tlc", protocol="x", name="Crash", expected="TotalOrder",
                    observed="TotalOrder", as_expected=True, seconds=1.0, finding=True, diagrams=[g],
                    figures={"distinct_states": 10, "pinned": 10, "graph_dumped_for_link": True},
                    explanation="A documented finding.")
    ok = [Check(id=f"tlc/x/Ok{k}", kind="tlc", protocol="x", name=f"Ok{k}", expected="ok", observed="ok",
                as_expected=True, seconds=1.0, figures={"distinct_states": 5, "states_generated": 9})
          for k in range(3)]
    skipped = [Check(id=f"link/x/S{k}", kind="link", protocol="x", name=f"S{k}", expected="graphs equal",
                     observed="skipped", as_expected=True, seconds=0.0, skipped=True,
                     explanation="marked slow" if k < 3 else "marked `heavy`") for k in range(5)]
    bad = audit.conformance_check(protocols.get("sequencer"), {
        "runs": 3, "verdicts": {"ok": 2, "nonconforming": 1}, "seconds": 0.5,
        "bad_runs": [{**_violation_run("r7"), "verdict": "nonconforming"}]})
    return [finding, *ok, *skipped, bad]


def test_the_html_report_is_navigable(tmp_path):
    """Contents and stage summary link to sections that exist; every check
    has an anchor; each drawn check's row and "why" line link to its
    diagram; passed rows and skips are collapsed, skips one group per
    reason; figures in words, never summary.json's keys."""
    checks = _report_checks()
    paths = report.write_all(tmp_path, checks)
    page = _Page(paths["report.html"].read_text(encoding="utf-8"))
    nav = [h for h, in_nav in page.links if in_nav]
    groups = report.stage_groups(checks)
    assert [f"#{g['id']}" for g in groups] == [h for h in nav if h.startswith("#stage-")] == ["#stage-tlc",
                                                                                                "#stage-link",
                                                                                                "#stage-conformance"]
    assert "#diagrams" in nav and "#violations" in nav
    for href, _ in page.links:
        assert href.startswith("#") and href[1:] in page.ids, href
    for c in checks:
        assert report.anchor(c.id) in page.ids
        if c.all_diagrams():
            target = report.anchor(c.id, "diagram")
            assert target in page.ids
            linked_from = [h for h, _ in page.links].count("#" + target)
            assert linked_from >= 2, c.id          # its row and its "why" line (or the stage table)
        assert page.collapsed(report.anchor(c.id)) == (c.verdict in ("pass", "skipped")), c.id
    summaries = [s.split() for s, _ in page.details]
    assert ["3", "passed"] in summaries
    skip_groups = [s for s, _ in page.details if "skipped:" in s]
    assert sorted(skip_groups) == ["2 skipped: marked heavy", "3 skipped: marked slow"]
    text = " ".join(page.text)
    for c in checks:
        for key in c.figures:
            if "_" in key:
                assert key not in text, key
    assert "one TLC run served the link check too" in text and "distinct states 10" in text


def test_the_markdown_report_links_resolve():
    """Every ``](#anchor)`` of report.md names a heading's GitHub anchor;
    passed rows and skips sit in collapsed blocks."""
    checks = _report_checks()
    md = report.markdown(checks)
    slugs = {report.gh_slug(m) for m in re.findall(r"^#+ (.+)$", md, re.M)}
    links = re.findall(r"\]\(#([^)]+)\)", md)
    assert links and set(links) <= slugs, set(links) - slugs
    assert "#diagram-tlcxcrash" in {f"#{x}" for x in links}
    assert "<details><summary>3 passed</summary>" in md
    assert "<details><summary>2 skipped: marked <code>heavy</code></summary>" in md
    assert "graph_dumped_for_link" not in md


def test_a_long_run_is_cut_around_its_witness():
    """A run of 100 events whose event 80 receives a message sent at event
    3: the diagram keeps the rows before and after event 80 and the send at
    event 3 (so the arrow starts on a row shown), and marks each gap with
    the number of steps left out."""
    evs = [{"i": k, "name": "Tick", "nid": 1 + k % 2, "params": {}, "msg": None} for k in range(100)]
    evs[3] = {"i": 3, "name": "Send", "nid": 3, "params": {}, "msg": {"type": "DATA", "sender": 3, "seqno": 1}}
    evs[80] = {"i": 80, "name": "RecvData", "nid": 1, "params": {"p": 3},
               "msg": {"type": "DATA", "sender": 3, "seqno": 1}}
    steps = diagram.steps_from_events(evs, 80)
    shown = diagram.cut(steps)
    kept = [s.index for s in shown if not s.hidden]
    assert 4 in kept and 81 in kept and 67 in kept and 84 in kept and 66 not in kept and 85 not in kept
    assert [s.hidden for s in shown if s.hidden] == [3, 62, 16]
    (a,) = steps[3].sends
    assert (a.src, a.dst, a.sent_at, a.received_at) == (3, 1, 4, 81)
    g = diagram.draw(steps, None, "long")
    assert g.svg.count('class="cut"') == 6 and 'data-hidden="62"' in g.svg      # a band and a label per gap
    assert 'data-sent="4" data-received="81"' in g.svg
    assert "… 62 steps not shown …" in g.text and "81. RecvData(p=3)" in g.text


def test_a_message_the_witness_says_was_never_delivered_ends_in_a_cross():
    """SEQUENCER: 3's FORWARD 3.3 reaches the coordinator 2, which never
    sends its DATA; EventualDelivery names 2 and 3 as lacking 3.3.  Taking
    the FORWARD is not delivering: 2 gets an arrow from 3's send to a cross
    on its line at the last row; 1, which delivered the DATA 3.1, none."""
    fwd = {"type": "FORWARD", "sender": 3, "seqno": 3}
    evs = [{"i": 0, "name": "Send", "nid": 3, "params": {}, "msg": {"type": "FORWARD", "sender": 3, "seqno": 1}},
           {"i": 1, "name": "RecvData", "nid": 1, "params": {"p": 2}, "msg": {"type": "DATA", "sender": 3,
                                                                               "seqno": 1}},
           {"i": 2, "name": "Send", "nid": 3, "params": {}, "msg": fwd},
           {"i": 3, "name": "RecvForward", "nid": 2, "params": {"p": 3}, "msg": fwd},
           {"i": 4, "name": "InstallView", "nid": 1, "params": {}, "msg": None}]
    steps = diagram.steps_from_events(evs, 4, missing=[(3, (3, 3)), (2, (3, 3)), (1, (3, 1))])
    never = [a for s in steps for a in s.sends if a.never]
    assert [(a.src, a.dst, a.sent_at, a.lost_at) for a in never] == [(3, 2, 3, 5)]
    assert "3 → 2 never received (sent at step 3)" in diagram.text(steps)
    svg = diagram.svg(steps)
    assert svg.count('class="msg never"') == 1 and svg.count('class="cross"') == 1
