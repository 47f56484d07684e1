"""report.html in a real browser (issue 17): headless Chromium (Debian's
``chromium`` package, used when installed; the test is skipped, with the
reason, otherwise) renders a report built from real TLC counterexamples of
three protocols, and a probe script, added to a copy of the page only,
measures it at 1280 px: no horizontal overflow, and every space-time
diagram has message arrows of non-zero length.

How: ``chromium --headless --window-size=1280,900 --dump-dom`` prints the DOM
after the page's scripts ran; the probe writes its measurements as JSON into
a ``<pre id="probe">`` that the test reads back.  ``make screenshot``
(docs/report.png) uses the same binary with ``--screenshot``."""

import html as htmllib
import json
import re
import shutil
import subprocess

import pytest

from groupcheck.conformance import audit, report
from groupcheck.model import manifest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

PROBE = """<script>
const svgs = [...document.querySelectorAll('svg.spacetime')];
const probe = {
  innerWidth: window.innerWidth,
  scrollWidth: document.documentElement.scrollWidth,
  wide: [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
        .map(e => e.tagName + '.' + e.className).slice(0, 5),
  diagrams: svgs.map(s => [...s.querySelectorAll('line.msg')].filter(l => {
      const b = l.getBoundingClientRect(); return b.width + b.height > 5; }).length),
};
const pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = JSON.stringify(probe);
document.body.appendChild(pre);
</script>"""


def chromium(*args, timeout=120):
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--window-size=1280,900", *args], capture_output=True, text=True, timeout=timeout)


def build_report(out_dir):
    checks = [audit.tlc_check(manifest.select([p], m)[0])
              for p, m in (("sequencer", "Pair"), ("stable", "Flawed"), ("raincore", "Faithful4"))]
    return report.write_all(out_dir, checks, {"wall_seconds": sum(c.seconds for c in checks)})


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian: apt-get install chromium)")
@pytest.mark.skipif(shutil.which("java") is None, reason="needs java for TLC")
def test_report_fits_1280_px_and_every_diagram_has_arrows(tmp_path):
    paths = build_report(tmp_path)
    page = paths["report.html"].read_text(encoding="utf-8")
    assert "<script" not in page                       # the report itself has no script
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    p = chromium("--dump-dom", probed.as_uri())
    m = re.search(r'<pre id="probe">(.*?)</pre>', p.stdout, re.S)
    assert m, p.stderr[-2000:]
    probe = json.loads(htmllib.unescape(m.group(1)))
    assert probe["innerWidth"] == 1280
    assert probe["scrollWidth"] <= 1280, probe["wide"]
    assert probe["wide"] == []
    assert len(probe["diagrams"]) == 3 and all(n >= 1 for n in probe["diagrams"]), probe["diagrams"]
