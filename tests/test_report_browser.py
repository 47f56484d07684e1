"""report.html in a real browser: headless Chromium (Debian's ``chromium``
package, used when installed; the test is skipped, with the reason,
otherwise) renders a report built from real TLC counterexamples of three
protocols, SEQUENCER's coordinator crash among them, and a probe script,
added to a copy of the page only, measures it at 1280 and 1920 px: the table
of contents and every link lead to an element of the page, each finding's
row links to a section holding its diagram, no horizontal overflow, the page
uses the wider screen, every diagram has arrows of non-zero length and its
title inside its width, and no diagram draws a message a crash or a fault
dropped as received.  ``make screenshot`` takes its picture of the same
report, and Chromium prints it to PDF.

How: ``chromium --headless --window-size=W,900 --dump-dom`` prints the DOM
after the page's scripts ran; the probe writes its measurements as JSON into
a ``<pre id="probe">`` that the test reads back."""

import json
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from browser_helpers import CHROMIUM, NO_CHROMIUM, chromium, probe

from groupcheck.conformance.audit import stages as audit
from groupcheck.conformance.audit import report
from groupcheck.conformance.audit.report import Check
from groupcheck.model import manifest

ROOT = Path(__file__).resolve().parents[1]

# the specs' actions that take a message out of the network without delivering it
# (spec/Sequencer: Crash empties the channels to the crashed member; spec/Stable:
# LoseMessage; spec/Raincore: Crash drops what the crashed node sent, Fault's TokenLoss)
DROPPING = {"Crash", "LoseMessage", "Fault"}

PROBE = """<script>
const byId = id => document.getElementById(decodeURIComponent(id));
const links = [...document.querySelectorAll('a[href^="#"]')].map(a => a.getAttribute('href').slice(1));
const probe = {
  innerWidth: window.innerWidth,
  scrollWidth: document.documentElement.scrollWidth,
  bodyWidth: document.body.getBoundingClientRect().width,
  wide: [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
        .map(e => e.tagName + '.' + e.className).slice(0, 5),
  contents: [...document.querySelectorAll('nav#contents a')].map(a => a.getAttribute('href').slice(1)),
  broken: links.filter(id => !byId(id)),
  rows: [...document.querySelectorAll('tr.finding, tr.unexpected')].map(tr => {
      const a = tr.querySelector('a[href^="#diagram-"]');
      const target = a && byId(a.getAttribute('href').slice(1));
      return {id: tr.id, diagrams: target ? target.querySelectorAll('svg.spacetime').length : 0}; }),
  diagrams: [...document.querySelectorAll('section.diagram')].map(sec => {
      const s = sec.querySelector('svg.spacetime');
      const box = s.getBoundingClientRect();
      const title = s.querySelector('text.title');
      const steps = Object.fromEntries([...s.querySelectorAll('g.step')].map(g => [g.dataset.step, g.dataset.action]));
      const len = l => { const b = l.getBoundingClientRect(); return b.width + b.height; };
      return {id: sec.id, steps,
              received: [...s.querySelectorAll('line.msg.received')].filter(l => len(l) > 5).map(l => l.dataset.received),
              lost: [...s.querySelectorAll('line.msg.lost')].map(l => l.dataset.lost),
              crosses: s.querySelectorAll('path.cross').length,
              bad: [...s.querySelectorAll('g.step.bad')].map(g => g.dataset.step),
              titleInside: !title || title.getBoundingClientRect().right <= box.right + 1}; }),
};
const pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = JSON.stringify(probe);
document.body.appendChild(pre);
</script>"""


def build_report(out_dir):
    checks = [audit.tlc_check(manifest.select([p], m)[0])
              for p, m in (("sequencer", "CoordCrash"), ("stable", "Flawed"), ("raincore", "Faithful4"))]
    checks += [Check(id="link/sequencer/Four", kind="link", protocol="sequencer", name="Four",
                     expected="graphs equal", observed="skipped", as_expected=True, seconds=0.0, skipped=True,
                     explanation="marked slow in its manifest")]
    return checks, report.write_all(out_dir, checks, {"wall_seconds": sum(c.seconds for c in checks)})


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
@pytest.mark.skipif(shutil.which("java") is None, reason="needs java for TLC")
def test_report_in_a_browser(tmp_path):
    checks, paths = build_report(tmp_path)
    page = paths["report.html"].read_text(encoding="utf-8")
    assert "<script" not in page                       # the report itself has no script
    drawn = [c for c in checks if c.all_diagrams()]
    assert len(drawn) == 3
    for width in (1280, 1920):
        got = probe(page, PROBE, tmp_path / f"probed{width}.html", width)
        assert got["innerWidth"] == width
        assert got["scrollWidth"] <= width, got["wide"]
        assert got["wide"] == []
        if width == 1920:
            assert got["bodyWidth"] > 1280                 # the page uses the wider screen
        # the table of contents, and every link of the page, lead somewhere
        assert "stages" in got["contents"] and "diagrams" in got["contents"]
        assert {f"stage-{c.kind}" for c in checks} <= set(got["contents"])
        assert got["broken"] == []
        # each finding's row links to the section holding its diagram
        assert sorted(r["id"] for r in got["rows"]) == sorted(report.anchor(c.id) for c in drawn)
        assert all(r["diagrams"] == 1 for r in got["rows"]), got["rows"]
        assert len(got["diagrams"]) == 3
        for d in got["diagrams"]:
            assert d["received"], d["id"]                  # arrows of non-zero length
            assert d["titleInside"], d["id"]
            assert d["bad"] == [str(len(d["steps"]))], d   # the violating state, the last one, is marked
            # no message a dropping action removed is drawn as received at it
            assert not [k for k in d["received"] if d["steps"][k] in DROPPING], d
            assert len(d["lost"]) == d["crosses"]
        coord = next(d for d in got["diagrams"] if d["id"] == report.anchor("tlc/sequencer/CoordCrash", "diagram"))
        crash = [k for k, a in coord["steps"].items() if a == "Crash"]
        assert crash and set(crash) <= set(coord["lost"]), coord
    # make screenshot takes the top of this report at 1280 px; Chromium prints it
    png = tmp_path / "report.png"
    subprocess.run(["make", "-s", "-C", str(ROOT), "screenshot", f"REPORT={paths['report.html']}", f"PNG={png}"],
                   check=True, capture_output=True, timeout=120)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", png.read_bytes()[16:24]) == (1280, 1700)
    # beside the picture, the counts of the audit it shows (tests/test_report_picture.py)
    shown = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert shown["checks"] == len(checks) and sum(shown["by_kind"].values()) == len(checks)
    pdf = tmp_path / "report.pdf"
    chromium("--no-pdf-header-footer", f"--print-to-pdf={pdf}", paths["report.html"].as_uri())
    assert pdf.read_bytes()[:5] == b"%PDF-" and pdf.read_bytes().count(b"/Type /Page") >= 2
