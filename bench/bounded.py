"""One command of a campaign, bounded in time (bench/killruns.py, bench/jgroups_agreement.py).

The command runs in a session of its own, so a run past the limit goes
whole (its nodes, JVMs and hogs with it); its stdout is read as JSON."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from typing import Optional


def run_json(cmd: list[str], limit: float) -> tuple[dict, Optional[dict], str]:
    """``(facts, result, error)``: facts are the exit status (None past the
    limit), the seconds and the 1-minute load as it ended; result the
    command's JSON (None when it printed none); error what went wrong."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = p.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return ({"exit": None, "seconds": round(time.monotonic() - t0, 1), "load1": os.getloadavg()[0]}, None,
                f"not finished in {limit:.0f} s")
    facts = {"exit": p.returncode, "seconds": round(time.monotonic() - t0, 1), "load1": os.getloadavg()[0]}
    try:
        return facts, json.loads(stdout), ""
    except ValueError:
        return facts, None, ((stderr or stdout).strip().splitlines() or ["no output"])[-1][-400:]
