"""The audit's four outputs from one list of checks (docs/architecture.md, "The audit").

Theory of operation
-------------------
Every stage of the audit (TLC on a manifest model, the spec ⇄ model graph
comparison, conformance of simulated traces) yields ``Check`` records; this
module only renders them, so the four files cannot disagree:

* ``summary.json``: every check with its verdict, figures and diagram
  source, plus totals and the machine (``groupcheck-audit/1``);
* ``junit.xml``: one test case per check, grouped in one suite per kind, a
  ``<failure>`` for each unexpected result (Jenkins, GitLab, GitHub actions
  read it);
* ``report.md``: a CI step summary: contents, a summary per stage, then
  per stage the findings and unexpected results in full, the passed rows
  collapsed and the skipped ones grouped by reason, then each
  counterexample and each non-conforming run as a Mermaid sequenceDiagram;
* ``report.html``: self-contained (inline CSS and SVG, no script, no
  network), laid out the same way, with a space-time diagram per
  counterexample and the coverage chart.  Rendered with jinja2 (autoescaping
  on) from ``templates/report.html.j2``.

Both are for a reader who starts at the verdict and follows links: every
check has an anchor (``anchor``), every drawn check a diagram anchor that its
row and its "why" line link to, and each stage a section the contents and
the stage summary link to (``stage_groups``).  Figures are shown in words
(``FIGURE_WORDS``), never by their summary.json keys.

Every output opens with the same verdict (``banner``: "all N checks" only
when none was skipped) and says what the run covered (``coverage``, from
the checks: per stage run and skipped, each shipped variant TLC or the
graph comparison left out, the skipped checks by name), and shows each check
by its ``Check.verdict``: pass, finding (an expected violation: a documented
flaw the audit must keep reproducing, with its ``explanation``), skipped
(with why) or unexpected.  Nothing here knows a stage: a new stage yields
Checks with ``Diagram``s and is rendered as is.  ``checks_from_summary``
reads a summary.json back (``groupcheck audit --from``) to re-render.
"""

from __future__ import annotations

import json
import os
import platform
import re
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from html import escape
from importlib.resources import files
from pathlib import Path
from typing import Any, Optional

from markupsafe import Markup


FORMAT = "groupcheck-audit/1"


@dataclass
class Diagram:
    """One drawn counterexample or run: Mermaid for report.md, SVG for report.html,
    the numbered steps as text for JUnit and terminals."""
    title: str
    mermaid: str
    svg: Optional[str] = None
    text: Optional[str] = None
    events: Optional[list] = None   # the run drawn as data (diagram.events): member, kind, message

    def to_json(self) -> dict:
        return {"title": self.title, "mermaid": self.mermaid, "svg": self.svg, "text": self.text,
                "events": self.events}


@dataclass
class Explanation:
    """One finding or violation of a check, as data (summary.json's
    ``explanations``) and as at most three lines (``explanation_lines``):
    what it is and whom it involves, where it happened and why, and where
    it is documented."""
    property: Optional[str]             # the property broken (or the query a CTI breaks)
    text: str                           # the witness or the reason, one sentence
    finding: Optional[str] = None       # the documented finding's id (conformance/findings.py), if any
    members: list = field(default_factory=list)
    messages: list = field(default_factory=list)     # "sender.seq"
    step: Optional[str] = None          # where: a run and its event, a counterexample's step, a CTI's action
    doc: Optional[str] = None           # the docs' anchor: docs/<page>.md#<heading>
    diagram: Optional[int] = None       # the index of its diagram among the check's ``diagrams``


def explanation_lines(e: Explanation) -> list[str]:
    """An Explanation in at most three lines (plain text: report.md escapes
    and links them, report.html too)."""
    head = " · ".join(x for x in (e.finding, e.property) if x) or "violation"
    who = "; ".join(x for x in (("members " + ", ".join(map(str, e.members))) if e.members else "",
                               ("messages " + ", ".join(map(str, e.messages))) if e.messages else "") if x)
    out = [head + (f" — {who}" if who else ""), _line((f"{e.step}: " if e.step else "") + e.text)]
    if e.doc:
        out.append(f"see {e.doc}")
    return out


@dataclass
class Check:
    """One result of any stage.  The renderers know nothing of stages: a
    check has a kind, a verdict (``verdict``), an explanation and optional
    diagrams; a new stage renders by yielding these."""
    id: str                     # kind/protocol/name, unique
    kind: str                   # tlc | link | conformance | ...
    protocol: str
    name: str
    expected: str
    observed: str
    as_expected: bool
    seconds: float
    figures: dict[str, Any] = field(default_factory=dict)
    detail: Optional[str] = None
    mermaid: Optional[str] = None   # the first diagram (kept for readers of summary.json)
    svg: Optional[str] = None       # the same as a space-time diagram (HTML only)
    explanation: Optional[str] = None   # what the check is / why the result is expected, one sentence or two
    finding: bool = False           # as expected, and what is expected is a violation (a documented finding)
    skipped: bool = False           # not run; ``explanation`` says why
    diagrams: list[Diagram] = field(default_factory=list)   # every drawn run, the first one included
    diagrams_omitted: int = 0       # violating runs not drawn (beyond the first N)
    explanations: list[Explanation] = field(default_factory=list)   # each finding or violation, as data

    @property
    def verdict(self) -> str:
        """pass | finding (an expected violation) | skipped | unexpected"""
        if not self.as_expected:
            return "unexpected"
        return "skipped" if self.skipped else ("finding" if self.finding else "pass")

    def all_diagrams(self) -> list[Diagram]:
        if self.diagrams:
            return self.diagrams
        return [Diagram(self.observed, self.mermaid, self.svg)] if self.mermaid else []

    def to_json(self) -> dict:
        d = asdict(self)
        d.pop("svg")
        d["diagrams"] = [g.to_json() for g in self.diagrams]
        d["verdict"] = self.verdict
        return d


VERDICT_TEXT = {"pass": "as expected", "finding": "expected violation (known finding)",
                "skipped": "skipped", "unexpected": "UNEXPECTED"}
VERDICT_MD = {"pass": "✅ as expected", "finding": "🔶 expected violation", "skipped": "⏭️ skipped",
              "unexpected": "❌ UNEXPECTED"}


def machine() -> dict:
    return {"python": platform.python_version(), "platform": platform.platform(),
            "cpus": os.cpu_count()}


def summary(checks: list[Check], extra: Optional[dict] = None) -> dict:
    bad = [c for c in checks if not c.as_expected]
    verdicts = [c.verdict for c in checks]
    return {
        "format": FORMAT,
        "generated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "totals": {"checks": len(checks), "as_expected": len(checks) - len(bad), "unexpected": len(bad),
                   "by_kind": {k: sum(c.kind == k for c in checks) for k in sorted({c.kind for c in checks})},
                   "by_verdict": {v: verdicts.count(v) for v in VERDICT_TEXT if v in verdicts}},
        "ok": not bad,
        "checks": [c.to_json() for c in checks],
        **(extra or {}),
        "audit_coverage": coverage(checks, extra),
    }


def banner(checks: list[Check]) -> str:
    """The verdict in one sentence (the report's first line).  "all N
    checks" only when none was skipped; the skipped ones are counted per
    stage in the sentence itself."""
    bad = [c for c in checks if not c.as_expected]
    counts = [c.verdict for c in checks]
    skipped = counts.count("skipped")
    parts = [f"{counts.count('pass')} passed", f"{counts.count('finding')} expected violations (known findings)"]
    per_stage = ", ".join(f"{k} {n}" for k, n in Counter(c.kind for c in checks if c.skipped).items())
    if bad:
        head = f"FAIL: {len(bad)} of {len(checks)} checks UNEXPECTED"
        if skipped:
            parts.append(f"{skipped} skipped ({per_stage})")
    elif skipped:
        head = f"PASS: {len(checks) - skipped} checks as expected, {skipped} skipped ({per_stage})"
    else:
        head = f"PASS: all {len(checks)} checks as expected"
    return head + " — " + ", ".join(parts)


def coverage(checks: list[Check], extra: Optional[dict] = None) -> dict:
    """What the run checked and what it skipped (summary.json's
    ``audit_coverage``), computed from the checks themselves, so the figures
    cannot disagree with the rows: per stage the checks run (``checked``,
    whatever their verdict) and skipped, and whether the stage was selected
    (``--stage``); the ids of the skipped checks (what ``--full`` adds); per
    shipped variant (model/manifest.py ``shipped_variants``, listed by the
    audit in ``extra``) whether TLC checked one of its shipped models and
    whether the spec ⇄ model graphs of one were compared, and the variants
    for which not."""
    extra = extra or {}
    stages = extra.get("stages") or {}
    selected = stages.get("selected")
    by_id = {c.id: c for c in checks}
    by_stage = {}
    for k in dict.fromkeys([*(stages.get("all") or []), *(c.kind for c in checks)]):
        cs = [c for c in checks if c.kind == k]
        by_stage[k] = {"checked": sum(not c.skipped for c in cs), "skipped": sum(c.skipped for c in cs),
                       "selected": selected is None or k in selected}
    variants = []
    for v in extra.get("shipped_variants") or []:
        row = dict(v)
        for kind, models in (("tlc", v.get("models") or []), ("link", v.get("compared") or [])):
            present = [by_id[i] for i in (f"{kind}/{v['protocol']}/{m}" for m in models) if i in by_id]
            ran = [c.name for c in present if not c.skipped]
            row[f"{kind}_checked"] = ran
            row[kind] = ("checked" if ran else "skipped" if present
                         else "no compared model" if kind == "link" and not models else "stage not run")
        variants.append(row)

    def why_not(v: dict, kind: str) -> str:
        if kind == "tlc" and v.get("why_not_checked"):
            return v["why_not_checked"]
        skips = [by_id[i] for m in v.get("models" if kind == "tlc" else "compared") or []
                 if (i := f"{kind}/{v['protocol']}/{m}") in by_id]
        reasons = list(dict.fromkeys(c.explanation or "no reason given" for c in skips))
        return "; ".join(reasons) if reasons else "its stage was not run"
    return {
        "checked": sum(not c.skipped for c in checks), "skipped": sum(c.skipped for c in checks),
        "by_stage": by_stage,
        "skipped_checks": [c.id for c in checks if c.skipped],
        "variants": variants,
        "not_model_checked": [{"variant": v["variant"], "models": v["models"], "why": why_not(v, "tlc")}
                              for v in variants if v["tlc"] == "skipped"],
        "not_graph_compared": [{"variant": v["variant"], "models": v["compared"], "why": why_not(v, "link")}
                               for v in variants if v["link"] == "skipped"],
    }


ITEM = "  - "       # a coverage line that is an item of the line before it


def coverage_lines(checks: list[Check], extra: Optional[dict] = None) -> list[str]:
    """The coverage in a few lines, under the banner (the CLI's last lines,
    report.md and report.html): checked and skipped per stage, then each
    shipped variant TLC did not check or whose graphs were not compared,
    one line each (``ITEM``)."""
    cov = coverage(checks, extra)
    stages = "; ".join(f"{k} {n['checked']} checked" + (f", {n['skipped']} skipped" if n["skipped"] else "")
                       for k, n in cov["by_stage"].items() if n["selected"])
    left = [k for k, n in cov["by_stage"].items() if not n["selected"]]
    out = [f"Coverage: {cov['checked']} checks run, {cov['skipped']} skipped — {stages or 'no stage'}"
           + (f"; not run (--stage): {', '.join(left)}" if left else "") + "."]
    n = len(cov["variants"])
    if cov["not_model_checked"]:
        out.append(f"Shipped variants not model-checked in this run ({len(cov['not_model_checked'])} of {n}):")
        out += [f"{ITEM}{v['variant']}: {v['why']}" for v in cov["not_model_checked"]]
    elif n and all(v["tlc"] == "checked" for v in cov["variants"]):
        out.append(f"Every shipped variant ({n}) model-checked by TLC in this run.")
    if cov["not_graph_compared"]:
        out.append(f"Shipped variants whose spec ⇄ model graphs were not compared in this run "
                   f"({len(cov['not_graph_compared'])} of {n}):")
        out += [f"{ITEM}{v['variant']}" for v in cov["not_graph_compared"]]
    if cov["skipped"]:
        out.append(f"`groupcheck audit --full` runs the {cov['skipped']} skipped checks "
                   "(named in the report's coverage section and in summary.json's audit_coverage).")
    return out


def skipped_line(checks: list[Check]) -> Optional[str]:
    """``--require-all``'s one line when checks were skipped, else None."""
    skipped = [c.id for c in checks if c.skipped]
    if not skipped:
        return None
    return (f"REQUIRE-ALL FAILED: {len(skipped)} checks skipped (run them with --full): "
            + ", ".join(skipped))


def junit(checks: list[Check], wall_seconds: Optional[float] = None) -> ET.ElementTree:
    """JUnit XML; ``time`` of the whole is the wall time when given (checks run
    in parallel, so their sum overstates it)."""
    total = wall_seconds if wall_seconds is not None else sum(c.seconds for c in checks)
    root = ET.Element("testsuites", name="groupcheck audit", tests=str(len(checks)),
                      failures=str(sum(not c.as_expected for c in checks)),
                      skipped=str(sum(c.skipped for c in checks)), time=f"{total:.3f}")
    for kind in sorted({c.kind for c in checks}):
        cs = [c for c in checks if c.kind == kind]
        suite = ET.SubElement(root, "testsuite", name=kind, tests=str(len(cs)),
                              failures=str(sum(not c.as_expected for c in cs)), errors="0",
                              skipped=str(sum(c.skipped for c in cs)),
                              time=f"{sum(c.seconds for c in cs):.3f}")
        for c in cs:
            case = ET.SubElement(suite, "testcase", classname=f"{kind}.{c.protocol}", name=c.id,
                                 time=f"{c.seconds:.3f}")
            text = f"expected {c.expected}, observed {c.observed}" + (f"\n{c.detail}" if c.detail else "")
            if c.explanation:
                text += f"\n{c.explanation}"
            for g in c.all_diagrams():
                text += f"\n\n{g.title}\n{g.text or g.mermaid}"
            if not c.as_expected:
                ET.SubElement(case, "failure", message=f"expected {c.expected}, observed {c.observed}",
                              type="unexpected").text = text
            elif c.skipped:
                ET.SubElement(case, "skipped", message=c.explanation or "skipped")
            ET.SubElement(case, "system-out").text = text + "\n" + json.dumps(c.figures, sort_keys=True)
    ET.indent(root)
    return ET.ElementTree(root)


# summary.json's figure keys in the report's words; True shows the words alone,
# False and None nothing; a key missing here is shown with spaces for underscores
FIGURE_WORDS = {
    "distinct_states": "distinct states", "pinned": "pinned", "depth": "depth",
    "states_generated": "states generated", "graph_dumped_for_link": "one TLC run served the link check too",
    "tlc_distinct_states": "TLC distinct states", "explorer_seconds": "explorer s", "tlc_seconds": "TLC s",
    "runs": "runs", "events": "events", "rows_in": "rows read", "rows_rejected": "rows rejected",
    "disagreements": "disagreements", "engine": "engine", "faults": "faults", "flagged": "flagged",
    "members": "members", "queries": "queries", "proved": "proved", "by_frame": "by the frame alone",
    "cti": "CTIs", "reachable_cti": "reachable CTIs", "unknown": "unknown", "solver_seconds": "solver s",
    "max_query_seconds": "slowest query s", "max_query_cpu_seconds": "slowest query CPU s",
    "model_verdict": "model replay", "traces": "traces in", "fixed_by": "fixed by",
    "coverage_pick": "added so that its variant is model-checked",
}

# section titles of the check kinds the audit has; any other kind is titled by its name
KIND_TITLES = {
    "tlc": "TLC on the manifest models", "link": "Spec and model graphs compared",
    "conformance": "Conformance of simulated traces", "history": "Black-box histories",
    "tracevalidation": "TLC trace validation", "prove": "Inductive invariants (z3)",
    "cluster": "A real cluster",
}


def _cell(x: Any) -> str:
    s = "-" if x is None else (f"{x:,}" if isinstance(x, int) and not isinstance(x, bool) else str(x))
    return s.replace("|", "\\|").replace("\n", " ")


def figures_text(c: Check) -> str:
    """The check's scalar figures in words (``FIGURE_WORDS``)."""
    out = []
    for k, v in c.figures.items():
        if v is None or v is False or isinstance(v, (dict, list)):
            continue
        words = FIGURE_WORDS.get(k, k.replace("_", " "))
        out.append(words if v is True else f"{words} {_cell(v)}")
    return ", ".join(out)


def anchor(check_id: str, what: str = "check") -> str:
    """The HTML id of a check's row (``what`` = check), diagrams or proof matrix."""
    return what + "-" + re.sub(r"[^A-Za-z0-9_-]+", "-", check_id).strip("-")


def gh_slug(heading: str) -> str:
    """The anchor GitHub and GitLab give a Markdown heading (report.md's links)."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def stage_groups(checks: list[Check]) -> list[dict]:
    """One group per check kind, in the order the checks come: counts per
    verdict, seconds, the rows shown in full (unexpected first, then
    findings), the passed rows (collapsed) and the skipped ones grouped by
    their reason."""
    out = []
    for kind in dict.fromkeys(c.kind for c in checks):
        cs = [c for c in checks if c.kind == kind]
        count = {v: sum(c.verdict == v for c in cs) for v in VERDICT_TEXT}
        reasons: dict[str, list[Check]] = {}
        for c in cs:
            if c.verdict == "skipped":
                reasons.setdefault(c.explanation or "no reason given", []).append(c)
        title = KIND_TITLES.get(kind, kind)
        out.append({"kind": kind, "title": title, "heading": f"Stage {kind}: {title}", "id": f"stage-{kind}",
                    "checks": len(cs), "count": count, "seconds": sum(c.seconds for c in cs),
                    "shown": [c for c in cs if c.verdict == "unexpected"] + [c for c in cs if c.verdict == "finding"],
                    "passed": [c for c in cs if c.verdict == "pass"],
                    "skipped": list(reasons.items())})
    return out


def coverage_rows(coverage: dict) -> list[dict]:
    """Coverage per protocol in words and numbers; where the reachable state
    count is unknown, why."""
    rows = []
    for p, v in sorted(coverage.items()):
        share = v.get("state_share")
        rows.append({
            "protocol": p,
            "actions": f"{_cell(v.get('actions_reached'))} of {_cell(v.get('actions_total'))}"
                       + ("" if v.get("action_share") is None else f" ({100 * v['action_share']:.0f}%)"),
            "states_reached": _cell(v.get("states_reached")),
            "states_reachable": _cell(v.get("states_reachable")) if v.get("states_reachable") is not None
            else "not computed",
            "state_share": (f"{100 * share:.1f}%" + (f" (the {v['state_share_constant_sets']} constant sets most "
                                                       f"runs share: {v['state_share_runs']} runs)"
                                                       if v.get("state_share_constant_sets") else ""))
            if share is not None else (v.get("why_no_share") or "n/a"),
        })
    return rows


def _md_row(c: Check, linked: bool = False) -> str:
    link = f" ([diagram](#{gh_slug(_md_diagram_heading(c))}))" if linked and c.all_diagrams() else ""
    return (f"| `{c.id}` | {_cell(c.expected)} | {_cell(c.observed)}{link} | {_cell(figures_text(c))} | "
            f"{c.seconds:.1f} | {VERDICT_MD[c.verdict]} |")


def code_spans(text: str) -> str:
    """``text`` HTML-escaped, its `code` spans tagged: for report.html, and for
    report.md's ``<summary>`` lines, where Markdown is not parsed."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(text, quote=False))


def _summary_md(text: str) -> str:
    return code_spans(_line(text))


MD_HEAD = ["| check | expected | observed | figures | s | result |", "| --- | --- | --- | --- | ---: | --- |"]
DIAGRAMS_HEADING = "Counterexamples and violating runs"


def _md_diagram_heading(c: Check) -> str:
    return f"Diagram {c.id}"


def markdown(checks: list[Check], extra: Optional[dict] = None) -> str:
    bad = [c for c in checks if not c.as_expected]
    groups = stage_groups(checks)
    findings = explained(checks)
    drawn = [c for c in checks if c.all_diagrams()]
    cov = (extra or {}).get("coverage")
    tcov = (extra or {}).get("trace_coverage")
    mats = proof_matrices(checks)
    out = ["# groupcheck audit", "", f"**{banner(checks)}**", ""]
    out += [(ITEM + _line(ln[len(ITEM):])) if ln.startswith(ITEM) else f"- {_line(ln)}"
            for ln in coverage_lines(checks, extra)] + [""]
    if bad:
        out += ["Unexpected: " + ", ".join(f"`{c.id}`" for c in bad), ""]
    sections = ["Stages", COVERAGE_HEADING] + (["Violations and why"] if findings else []) \
        + [g["heading"] for g in groups] \
        + ([DIAGRAMS_HEADING] if drawn else []) + (["Coverage of the models by the traces"] if cov else []) \
        + (["Spec actions exercised by the TLC-validated traces"] if tcov else []) \
        + (["Proof matrices (z3)"] if mats else [])
    out += ["Contents: " + " · ".join(f"[{h}](#{gh_slug(h)})" for h in sections), "", "## Stages", "",
            "| stage | checks | passed | expected violations | skipped | unexpected | s |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for g in groups:
        n = g["count"]
        out.append(f"| [{g['title']}](#{gh_slug(g['heading'])}) | {g['checks']} | {n['pass']} | {n['finding']} | "
                   f"{n['skipped']} | {n['unexpected']} | {g['seconds']:.0f} |")
    out += ["", *coverage_markdown(checks, extra)]
    if findings:
        out += ["", "## Violations and why", ""]

        def item(c: Check) -> str:
            link = f" ([diagram](#{gh_slug(_md_diagram_heading(c))}))" if c.all_diagrams() else ""
            if c.explanations:
                return "\n".join([f"- `{c.id}` ({VERDICT_TEXT[c.verdict]}){link}:"]
                                 + [_md_explanation(c, e) for e in c.explanations])
            return f"- `{c.id}` ({VERDICT_TEXT[c.verdict]}){link}: {why(c)}"
        out += [item(c) for c in findings if c.verdict == "unexpected"]
        known = [c for c in findings if c.verdict == "finding"]
        if known:
            out += ["", f"<details><summary>{len(known)} expected violations (documented findings): "
                        "why each is expected</summary>", ""] + [item(c) for c in known] + ["", "</details>"]
    for g in groups:
        out += ["", f"## {g['heading']}", ""]
        if g["shown"]:
            out += MD_HEAD + [_md_row(c, linked=True) for c in g["shown"]] + [""]
        if g["passed"]:
            out += [f"<details><summary>{len(g['passed'])} passed</summary>", ""] + MD_HEAD \
                + [_md_row(c) for c in g["passed"]] + ["", "</details>", ""]
        for reason, cs in g["skipped"]:
            out += [f"<details><summary>{len(cs)} skipped: {_summary_md(reason)}</summary>", "",
                    ", ".join(f"`{c.id}`" for c in cs), "", "</details>", ""]
    if drawn:
        out += ["", f"## {DIAGRAMS_HEADING}", "",
                "Each message is drawn where it is received (its label names the step of its send); a crossed "
                "arrow was lost (dropped by a crash or a fault), never received, or still in flight at the end; "
                "the violating step is on a red band; report.html draws each arrow from its send to its receipt, "
                "a crash as the end of its member's line and a view as a band across its members.", ""]
        for c in drawn:
            out += [f"### {_md_diagram_heading(c)}", "", f"`{c.id}`: {c.observed} ({VERDICT_TEXT[c.verdict]})", ""]
            if c.explanations:
                out += [_md_explanation(c, e, link=False) for e in c.explanations] + [""]
            elif c.explanation:
                out += [_line(c.explanation), ""]
            if c.detail:
                out += ["```", c.detail, "```", ""]
            for g in c.all_diagrams():
                out += [f"**{g.title}**", "", "```mermaid", g.mermaid, "```", ""]
            if c.diagrams_omitted:
                out += [f"({c.diagrams_omitted} more violating runs not drawn; see summary.json)", ""]
    if cov:
        out += ["", "## Coverage of the models by the traces", "",
                "| protocol | actions reached | abstract states reached | reachable | share of reachable |",
                "| --- | --- | ---: | ---: | --- |"]
        for r in coverage_rows(cov):
            out.append(f"| {r['protocol']} | {r['actions']} | {r['states_reached']} | {r['states_reachable']} | "
                       f"{r['state_share']} |")
    if tcov:
        out += ["", "## Spec actions exercised by the TLC-validated traces", "",
                "| protocol | traces | actions exercised (count) | never exercised | action x shape |",
                "| --- | ---: | --- | --- | ---: |"]
        for r in trace_coverage_rows(tcov):
            out.append(f"| {r['protocol']} | {r['traces']} | {r['actions']} | {r['never']} | {r['shapes']} |")
    if mats:
        out += ["", "## Proof matrices (z3)", "",
                "Per variant: one row per lemma; a cell is the query's seconds when proved (initiation, "
                "consecution under each action, implication of the property), `frame` when the action "
                "leaves unchanged all the lemma reads (proved without z3), else its result "
                "(docs/proofs.md).", ""]
        for mtx in mats:
            out += [f"<details><summary>{_summary_md(mtx['id'] + ': ' + mtx['observed'])}</summary>", "", _line(mtx["title"]), "",
                    "| lemma | " + " | ".join(mtx["columns"]) + " |",
                    "| --- |" + " ---: |" * len(mtx["columns"])]
            out += [f"| {r['lemma']} | " + " | ".join(r["cells"]) + " |" for r in mtx["rows"]]
            out += ["", "</details>", ""]
    return "\n".join(out) + "\n"


def _md_explanation(c: Check, e: Explanation, link: bool = True) -> str:
    """One Explanation as a Markdown list item of at most three lines."""
    lines = [escape(x, quote=False) for x in explanation_lines(e)]
    lines[0] = f"**{lines[0]}**"
    if e.doc:
        lines[-1] = f"see `{e.doc}`"
    if link and e.diagram is not None and c.all_diagrams():
        lines[-1] += f" · [diagram](#{gh_slug(_md_diagram_heading(c))})"
    return "  - " + "<br>".join(lines)


COVERAGE_HEADING = "What this run covered"


def coverage_markdown(checks: list[Check], extra: Optional[dict] = None) -> list[str]:
    """report.md's coverage section (``coverage``): per stage, checks run
    and skipped; per shipped variant, what TLC and the graph comparison
    covered; the skipped checks by name (what ``--full`` adds)."""
    cov = coverage(checks, extra)
    out = [f"## {COVERAGE_HEADING}", "", "| stage | checked | skipped |", "| --- | ---: | ---: |"]
    for k, n in cov["by_stage"].items():
        out.append(f"| {KIND_TITLES.get(k, k)} | {n['checked']} | {n['skipped']} |" if n["selected"]
                   else f"| {KIND_TITLES.get(k, k)} | not run (`--stage`) | |")
    if cov["variants"]:
        out += ["", "Shipped variants (a protocol's TLA+ module with its design switches, checked by models "
                "expected `ok`; docs/architecture.md): whether TLC checked one of their models in this run, "
                "and whether the spec ⇄ model graphs of one were compared.", "",
                "| variant | shipped models | TLC | graphs compared |", "| --- | --- | --- | --- |"]
        for v in cov["variants"]:
            def said(kind: str) -> str:
                ran = v[f"{kind}_checked"]
                return f"✅ {', '.join(ran)}" if ran else ("⏭️ **not in this run**" if v[kind] == "skipped"
                                                          else v[kind])
            out.append(f"| {_cell(v['variant'])} | {_cell(', '.join(v['models']))} | {said('tlc')} | "
                       f"{said('link')} |")
    for key, title in (("not_model_checked", "Shipped variants not model-checked in this run"),
                       ("not_graph_compared", "Shipped variants whose graphs were not compared in this run")):
        if cov[key]:
            out += ["", f"{title}:", ""] + [f"- {_line(v['variant'])} ({', '.join(v['models'])}): {_line(v['why'])}"
                                            for v in cov[key]]
    if cov["skipped_checks"]:
        out += ["", f"<details><summary>What only <code>--full</code> adds: {len(cov['skipped_checks'])} "
                    "checks</summary>", "", ", ".join(f"`{i}`" for i in cov["skipped_checks"]), "", "</details>"]
    return out


def proof_matrices(checks: list[Check]) -> list[dict]:
    """The prove stage's matrices: per variant, one row per lemma, one column
    for initiation, one per action (consecution) and one for implication;
    a cell is the query's seconds when proved, else its result."""
    out = []
    for c in checks:
        qs = c.figures.get("matrix") if c.kind == "prove" else None
        if not qs:
            continue
        cols: list[str] = ["initiation"]
        rows: dict[str, dict[str, str]] = {}
        for q in qs:
            kind, _, rest = q["query"].partition(":")
            if kind == "consecution":
                col, _, lemma = rest.partition(":")
            else:
                col, lemma = kind, rest
            if col not in cols:
                cols.append(col)
            if q["result"] == "proved" and q.get("by_frame"):
                cell = "frame"
            elif q["result"] == "proved":
                cell = f"{q['seconds']:.2f}"
            elif q["result"] == "cti":
                cell = "CTI " + {True: "reachable", False: "unreachable", None: "unclassified"}[q.get("reachable")]
            else:
                cell = q["result"]
            rows.setdefault(lemma, {})[col] = cell
        if "implication" in cols:
            cols.remove("implication")
            cols.append("implication")
        out.append({"id": c.id, "title": f"{c.id} ({c.name}): {c.observed}", "columns": cols,
                    "observed": c.observed, "verdict": c.verdict,
                    "rows": [{"lemma": lemma, "cells": [cells.get(col, "") for col in cols]}
                             for lemma, cells in rows.items()]})
    return out


def trace_coverage_rows(tcov: dict) -> list[dict]:
    """One row per protocol of the tracevalidation stage's merged action coverage."""
    rows = []
    for p, v in sorted(tcov.items()):
        acts = v.get("actions") or {}
        rows.append({"protocol": p, "traces": v.get("traces", 0),
                     "actions": ", ".join(f"{a} {n}" for a, n in acts.items() if n) or "none",
                     "never": ", ".join(v.get("never") or []) or "none",
                     "shapes": len(v.get("shapes") or {})})
    return rows


def _line(text: str) -> str:
    return " ".join(str(text).split())


def coverage_svg(coverage: dict) -> str:
    """Horizontal bars: share of actions and of reachable states per protocol."""
    rows = sorted(coverage.items())
    if not rows:
        return ""
    h = 30 + 44 * len(rows)
    x0 = 10 + 7 * max(len(p) for p, _ in rows)     # the bars start right of the longest name (12 px: ~7 px a letter)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{x0 + 510}" height="{h}" font-family="sans-serif" '
           f'font-size="12">']
    for i, (p, v) in enumerate(rows):
        y = 20 + 44 * i
        out.append(f'<text x="0" y="{y + 14}">{escape(p)}</text>')
        for j, (key, color, label) in enumerate((("action_share", "#2e86de", "actions"),
                                                ("state_share", "#27ae60", "states"))):
            share = v.get(key)
            yy = y + 18 * j
            out.append(f'<rect x="{x0}" y="{yy}" width="400" height="14" fill="#eee"/>')
            if share is not None:
                out.append(f'<rect x="{x0}" y="{yy}" width="{400 * share:.1f}" height="14" fill="{color}"/>')
            out.append(f'<text x="{x0 + 406}" y="{yy + 11}">{label} '
                       f'{"n/a" if share is None else f"{100 * share:.1f}%"}</text>')
    out.append("</svg>")
    return "\n".join(out)


def html(checks: list[Check], extra: Optional[dict] = None, s: Optional[dict] = None) -> str:
    import jinja2     # lazy: jinja2 is heavy and only this path needs it
    try:
        text = (files("groupcheck.conformance.audit") / "templates" / "report.html.j2").read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError):
        text = (Path(__file__).resolve().parent / "templates" / "report.html.j2").read_text(encoding="utf-8")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["figures"] = figures_text
    env.filters["prose"] = lambda t: Markup(code_spans(str(t)))
    env.filters["wbr"] = lambda t: Markup("<wbr>").join(Markup.escape(x) for x in _word_parts(str(t)))
    s = s or summary(checks, extra)
    cov = (extra or {}).get("coverage") or {}
    mats = proof_matrices(checks)
    return env.from_string(text).render(
        s=s, checks=checks, banner=banner(checks), verdict_text=VERDICT_TEXT, anchor=anchor,
        coverage_lines=coverage_lines(checks, extra), run_coverage=coverage(checks, extra),
        kind_titles=KIND_TITLES,
        groups=stage_groups(checks),
        coverage=coverage_rows(cov), coverage_svg=Markup(coverage_svg(cov)), Markup=Markup,
        trace_coverage=trace_coverage_rows((extra or {}).get("trace_coverage") or {}),
        proof_matrices=mats, matrix_ids={m["id"] for m in mats},
        drawn=[c for c in checks if c.all_diagrams()], explained=explained(checks), why=why,
        explanation_lines=explanation_lines)


def _word_parts(text: str) -> list[str]:
    """``text`` split where a line may break without cutting a word: after a
    slash, before a capital that follows a lower-case letter (``Token|Delivery|Failure``)."""
    return re.split(r"(?<=/)|(?<=[a-z0-9])(?=[A-Z])", text)


def explained(checks: list[Check]) -> list[Check]:
    """The unexpected checks, then the findings with their explanation."""
    return [c for c in checks if c.verdict == "unexpected"] + \
        [c for c in checks if c.verdict == "finding" and (c.explanation or c.explanations)]


def why(c: Check) -> str:
    """A check's line in "Violations and why": its explanation, else its detail."""
    return _line(c.explanation or c.detail or "no explanation recorded")


def write_all(out_dir: str | Path, checks: list[Check], extra: Optional[dict] = None) -> dict[str, Path]:
    d = Path(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    paths = {"summary.json": d / "summary.json", "junit.xml": d / "junit.xml",
             "report.md": d / "report.md", "report.html": d / "report.html"}
    s = summary(checks, extra)      # once: the JSON and the HTML carry the same timestamp
    paths["summary.json"].write_text(json.dumps(s, indent=2) + "\n", encoding="utf-8")
    junit(checks, (extra or {}).get("wall_seconds")).write(paths["junit.xml"], encoding="utf-8",
                                                           xml_declaration=True)
    paths["report.md"].write_text(markdown(checks, extra), encoding="utf-8")
    paths["report.html"].write_text(html(checks, extra, s), encoding="utf-8")
    return paths


def checks_from_summary(s: dict) -> tuple[list[Check], dict]:
    """Checks and extra back from a summary.json (``groupcheck audit --from``):
    re-render the report without rerunning the audit (each Diagram keeps its
    SVG in summary.json for this)."""
    fields = set(Check.__dataclass_fields__)
    checks = []
    for d in s.get("checks", []):
        d = {k: v for k, v in d.items() if k in fields}
        d["diagrams"] = [Diagram(**g) for g in d.get("diagrams") or []]
        d["explanations"] = [Explanation(**e) for e in d.get("explanations") or []]
        checks.append(Check(**d))
    extra = {k: v for k, v in s.items()
             if k not in ("format", "generated", "machine", "totals", "ok", "checks", "audit_coverage")}
    return checks, extra
