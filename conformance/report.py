"""The audit's four outputs from one list of checks (DESIGN §7).

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
* ``report.md``: a CI step summary: the table of checks, then each
  counterexample and each non-conforming run as a Mermaid sequenceDiagram;
* ``report.html``: self-contained (inline CSS and SVG, no script, no
  network): the same table, a space-time diagram per counterexample and the
  coverage chart.  Rendered with jinja2 (autoescaping on) from
  ``templates/report.html.j2``.
"""

from __future__ import annotations

import json
import platform
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional

FORMAT = "groupcheck-audit/1"


@dataclass
class Check:
    id: str                     # kind/protocol/name, unique
    kind: str                   # tlc | link | conformance
    protocol: str
    name: str
    expected: str
    observed: str
    as_expected: bool
    seconds: float
    figures: dict[str, Any] = field(default_factory=dict)
    detail: Optional[str] = None
    mermaid: Optional[str] = None   # counterexample or first bad run
    svg: Optional[str] = None       # the same as a space-time diagram (HTML only)

    def to_json(self) -> dict:
        d = asdict(self)
        d.pop("svg")
        return d


def machine() -> dict:
    import os
    return {"python": platform.python_version(), "platform": platform.platform(),
            "cpus": os.cpu_count()}


def summary(checks: list[Check], extra: Optional[dict] = None) -> dict:
    bad = [c for c in checks if not c.as_expected]
    return {
        "format": FORMAT,
        "generated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "totals": {"checks": len(checks), "as_expected": len(checks) - len(bad), "unexpected": len(bad),
                   "by_kind": {k: sum(c.kind == k for c in checks) for k in sorted({c.kind for c in checks})}},
        "ok": not bad,
        "checks": [c.to_json() for c in checks],
        **(extra or {}),
    }


def junit(checks: list[Check]) -> ET.ElementTree:
    root = ET.Element("testsuites", name="groupcheck audit", tests=str(len(checks)),
                      failures=str(sum(not c.as_expected for c in checks)),
                      time=f"{sum(c.seconds for c in checks):.3f}")
    for kind in sorted({c.kind for c in checks}):
        cs = [c for c in checks if c.kind == kind]
        suite = ET.SubElement(root, "testsuite", name=kind, tests=str(len(cs)),
                              failures=str(sum(not c.as_expected for c in cs)), errors="0",
                              time=f"{sum(c.seconds for c in cs):.3f}")
        for c in cs:
            case = ET.SubElement(suite, "testcase", classname=f"{kind}.{c.protocol}", name=c.id,
                                 time=f"{c.seconds:.3f}")
            text = f"expected {c.expected}, observed {c.observed}" + (f"\n{c.detail}" if c.detail else "")
            if not c.as_expected:
                ET.SubElement(case, "failure", message=f"expected {c.expected}, observed {c.observed}",
                              type="unexpected").text = text
            ET.SubElement(case, "system-out").text = text + "\n" + json.dumps(c.figures, sort_keys=True)
    ET.indent(root)
    return ET.ElementTree(root)


def _cell(x: Any) -> str:
    s = "-" if x is None else (f"{x:,}" if isinstance(x, int) and not isinstance(x, bool) else str(x))
    return s.replace("|", "\\|").replace("\n", " ")


def figures_text(c: Check) -> str:
    return ", ".join(f"{k} {_cell(v)}" for k, v in c.figures.items() if v is not None and not isinstance(v, (dict, list)))


def markdown(checks: list[Check], extra: Optional[dict] = None) -> str:
    bad = [c for c in checks if not c.as_expected]
    out = ["# groupcheck audit", "",
           f"**{len(checks) - len(bad)}/{len(checks)} checks as expected**"
           + ("" if not bad else f" — **{len(bad)} unexpected**: " + ", ".join(f"`{c.id}`" for c in bad)), "",
           "| check | kind | protocol | model / stage | expected | observed | figures | seconds | result |",
           "| --- | --- | --- | --- | --- | --- | --- | ---: | --- |"]
    for c in checks:
        out.append(f"| `{c.id}` | {c.kind} | {c.protocol} | {_cell(c.name)} | {_cell(c.expected)} | "
                   f"{_cell(c.observed)} | {_cell(figures_text(c))} | {c.seconds:.1f} | "
                   f"{'✅ as expected' if c.as_expected else '❌ UNEXPECTED'} |")
    cov = (extra or {}).get("coverage")
    if cov:
        out += ["", "## Coverage of the models by the traces", "",
                "| protocol | actions reached | abstract states reached | share of reachable |",
                "| --- | --- | --- | ---: |"]
        for p, v in sorted(cov.items()):
            share = v.get("state_share")
            out.append(f"| {p} | {_cell(v.get('actions_reached'))}/{_cell(v.get('actions_total'))} | "
                       f"{_cell(v.get('states_reached'))} | "
                       f"{'-' if share is None else f'{100 * share:.1f}%'} |")
    diagrams = [c for c in checks if c.mermaid]
    if diagrams:
        out += ["", "## Counterexamples and non-conforming runs", ""]
        for c in diagrams:
            out += [f"### `{c.id}`: {c.observed} ({'expected' if c.as_expected else 'UNEXPECTED'})", ""]
            if c.detail:
                out += [c.detail, ""]
            out += ["```mermaid", c.mermaid, "```", ""]
    return "\n".join(out) + "\n"


def coverage_svg(coverage: dict) -> str:
    """Horizontal bars: share of actions and of reachable states per protocol."""
    rows = sorted(coverage.items())
    if not rows:
        return ""
    h = 30 + 44 * len(rows)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="620" height="{h}" font-family="sans-serif" font-size="12">']
    for i, (p, v) in enumerate(rows):
        y = 20 + 44 * i
        out.append(f'<text x="0" y="{y + 14}">{p}</text>')
        for j, (key, color, label) in enumerate((("action_share", "#2e86de", "actions"),
                                                ("state_share", "#27ae60", "states"))):
            share = v.get(key)
            yy = y + 18 * j
            out.append(f'<rect x="110" y="{yy}" width="400" height="14" fill="#eee"/>')
            if share is not None:
                out.append(f'<rect x="110" y="{yy}" width="{400 * share:.1f}" height="14" fill="{color}"/>')
            out.append(f'<text x="516" y="{yy + 11}">{label} '
                       f'{"n/a" if share is None else f"{100 * share:.1f}%"}</text>')
    out.append("</svg>")
    return "\n".join(out)


def html(checks: list[Check], extra: Optional[dict] = None, s: Optional[dict] = None) -> str:
    import jinja2
    from markupsafe import Markup
    try:
        from importlib.resources import files
        text = (files("groupcheck.conformance") / "templates" / "report.html.j2").read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError):
        text = (Path(__file__).resolve().parent / "templates" / "report.html.j2").read_text(encoding="utf-8")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["figures"] = figures_text
    s = s or summary(checks, extra)
    cov = (extra or {}).get("coverage") or {}
    return env.from_string(text).render(
        s=s, checks=checks, coverage=cov, coverage_svg=Markup(coverage_svg(cov)),
        svgs={c.id: Markup(c.svg) for c in checks if c.svg})


def write_all(out_dir: str | Path, checks: list[Check], extra: Optional[dict] = None) -> dict[str, Path]:
    d = Path(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    paths = {"summary.json": d / "summary.json", "junit.xml": d / "junit.xml",
             "report.md": d / "report.md", "report.html": d / "report.html"}
    s = summary(checks, extra)      # once: the JSON and the HTML carry the same timestamp
    paths["summary.json"].write_text(json.dumps(s, indent=2) + "\n", encoding="utf-8")
    junit(checks).write(paths["junit.xml"], encoding="utf-8", xml_declaration=True)
    paths["report.md"].write_text(markdown(checks, extra), encoding="utf-8")
    paths["report.html"].write_text(html(checks, extra, s), encoding="utf-8")
    return paths
