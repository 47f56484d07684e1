"""One large JGroups run and its checks, timed apart: the "Size" row of
docs/benchmarks.md (JGroups 2.12).

    .venv/bin/python bench/jgroups_size.py [--stack sequencer] [--members 3] [--messages 100000]
                                          [--interval 0] [--timeout 1800] [--out DIR]

Three commands, each under ``/usr/bin/time -v`` (wall seconds, CPU seconds,
the peak resident set of its largest process): ``groupcheck jgroups run``
(the members, then the judging of the history and the trace, as the
command does; ``--checker model``), then each check alone on the run's
folder: ``groupcheck history DIR/history`` and ``groupcheck conform
DIR/traces``.  Prints one JSON object: the figures, the verdicts, the
events and deliveries, and the deliveries per second of the run phase.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import tempfile
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GC = str(ROOT / ".venv/bin/groupcheck")


def timed(cmd: list[str], limit: float) -> dict:
    """The command under /usr/bin/time -v: exit, wall and CPU seconds, peak RSS (MB), stdout."""
    p = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, timeout=limit)
    # "Key: value" lines; a key may hold colons itself ("(h:mm:ss or m:ss)")
    stats = dict(line.strip().rpartition(": ")[::2] for line in p.stderr.splitlines() if ": " in line)
    h, m, s = (["0"] + stats["Elapsed (wall clock) time (h:mm:ss or m:ss)"].split(":"))[-3:]
    return {"exit": p.returncode, "wall_s": round(int(h) * 3600 + int(m) * 60 + float(s), 1),
            "cpu_s": round(float(stats["User time (seconds)"]) + float(stats["System time (seconds)"]), 1),
            "peak_mb": round(int(stats["Maximum resident set size (kbytes)"]) / 1024),
            "stdout": p.stdout}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stack", default="sequencer")
    ap.add_argument("--members", type=int, default=3)
    ap.add_argument("--messages", type=int, default=100000)
    ap.add_argument("--interval", type=int, default=0)
    ap.add_argument("--settle", type=float, default=10.0)
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    out = a.out or Path(tempfile.mkdtemp(prefix="jgroups-size-"))
    started, load0 = datetime.now(timezone.utc), os.getloadavg()
    run = timed([GC, "jgroups", "run", "--stack", a.stack, "--members", str(a.members), "--messages",
                 str(a.messages), "--interval", str(a.interval), "--settle", str(a.settle), "--timeout",
                 str(a.timeout), "--json", "--out", str(out)], a.timeout + 3600)
    r = json.loads(run.pop("stdout"))
    hist = timed([GC, "history", str(out / "history")], 3600)
    conform = timed([GC, "conform", str(out / "traces")], 7200)
    delivered = sum(r["history"]["delivered"].values())
    sizes = {p.name: p.stat().st_size for p in sorted((out / "history").glob("*.ndjson"))
             + sorted((out / "traces").glob("*.ndjson"))}
    print(json.dumps({
        "machine": {"host": platform.node(), "cpus": os.cpu_count(), "python": platform.python_version()},
        "date": started.isoformat(timespec="seconds"), "load_start": load0, "load_end": os.getloadavg(),
        "command": {"stack": a.stack, "members": a.members, "messages": a.messages, "interval": a.interval},
        "out": str(out),
        "run": {**run, "run_phase_s": r["seconds"], "check_phase_s": round(run["wall_s"] - r["seconds"], 1),
                "failed": r["failed"], "history_events": r["history"]["events"], "delivered": r["history"]["delivered"],
                "deliveries_per_s": round(delivered / r["seconds"]), "history": r["history"]["verdict"],
                "trace": (r["trace"] or {}).get("verdict"), "agree": r["agree"]},
        "history_check": {**hist, "stdout": hist["stdout"][-600:]},
        "conform": {**conform, "stdout": conform["stdout"][-600:]},
        "bytes": sizes}, indent=1))


if __name__ == "__main__":
    main()
