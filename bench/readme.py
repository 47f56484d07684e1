"""The README's "Then" commands at the README's own sizes, in order, in one
fresh folder, as a new user runs them: each command's wall time, peak
memory and exit status.

    .venv/bin/python bench/readme.py [--skip REGEX ...] [--only REGEX] [--out FILE]

The commands are read from README.md by the README test's own reader
(tests/test_readme.py ``readme_commands``); nothing is cut.  Peak memory is
the largest resident set of any process of the command's tree (the JVMs
included; ``wait4``'s usage of its shell), so it is the biggest single
process, not the sum.  ``--skip`` leaves out commands
matching a regex (the README gives the hour-long ones their figures
itself).  Prints one JSON object (and writes it to ``--out``);
the README's comments carry the figures.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from test_readme import readme_commands  # noqa: E402


def run(cmd: str, cwd: Path) -> dict:
    venv = ROOT / ".venv"
    line = cmd.replace(".venv/bin/", str(venv / "bin") + "/")
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(["bash", "-c", line], cwd=cwd, stdout=out, stderr=err, text=True)
        # wait4's usage of the shell covers every descendant it reaped: its
        # ru_maxrss is the largest process of the command's tree (Linux)
        _, status, usage = os.wait4(p.pid, 0)
        seconds = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        lines = out.read().strip().splitlines()
        code = os.waitstatus_to_exitcode(status)
        return {"command": cmd, "exit": code, "seconds": round(seconds, 1), "peak_mb": usage.ru_maxrss // 1024,
                "last_line": next((x for x in reversed(lines) if re.search(r"[A-Za-z]", x)), "")[:200], "stderr_tail": err.read()[-400:] if code else ""}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--skip", action="append", default=[], help="regex of commands to leave out (repeatable)")
    ap.add_argument("--only", help="regex: run only the matching commands (and none of the others)")
    ap.add_argument("--out", help="also write the JSON here")
    a = ap.parse_args()
    cmds = [c for c in readme_commands()
            if not any(re.search(s, c) for s in a.skip) and (a.only is None or re.search(a.only, c))]
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    rows = []
    with tempfile.TemporaryDirectory(prefix="groupcheck-readme-") as d:
        for c in cmds:
            rows.append(run(c, Path(d)))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    out = {"machine": {"cores": os.cpu_count(), "python": platform.python_version(),
                       "load_at_start": os.getloadavg()}, "started": started,
           "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"), "commands": rows}
    text = json.dumps(out, indent=1)
    if a.out:
        Path(a.out).write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
