"""Headless Chromium for the tests that read a page as a browser lays it out
(Debian's ``chromium``; the tests skip, with the reason, where it is not
installed): ``probe`` adds a script to a copy of the page, and the script
writes its measurements as JSON into a ``<pre id="probe">`` that
``chromium --headless --dump-dom`` prints after the page's scripts ran."""

import html as htmllib
import json
import re
import shutil
import subprocess
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NO_CHROMIUM = "chromium is not installed (Debian: apt-get install chromium)"


def chromium(*args, width=1280, timeout=120):
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           f"--window-size={width},900", *args], capture_output=True, text=True, timeout=timeout)


def probe(page: str, script: str, where: Path, width: int = 1280) -> dict:
    """The JSON the probe ``script`` (a ``<script>`` element) wrote, run on ``page``."""
    where.write_text(page.replace("</body>", script + "</body>"), encoding="utf-8")
    p = chromium("--dump-dom", where.as_uri(), width=width)
    m = re.search(r'<pre id="probe">(.*?)</pre>', p.stdout, re.S)
    assert m, p.stderr[-2000:]
    return json.loads(htmllib.unescape(m.group(1)))
