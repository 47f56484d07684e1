"""Kill runs under a CPU hog: the stress regime's acceptance figure.

    .venv/bin/python bench/killruns.py [--stacks sequencerflush,raincoreflush,raincoresequencerflush]
                                       [--runs 50] [--messages 1000] [--rate 500] [--hogs 2] [--out DIR]
                                       [--lossy-ring]

Each run is ``groupcheck cluster run --protocol P --messages M --kill 1@T
--hog --json``: 3 node processes on 127.0.0.1, every node multicasting, a
busy loop per core beside them for the whole run, node 1 (the coordinator,
the ring's head) killed with SIGKILL at T, drawn per run from the run's
number (0.2-1.6 s into a workload of about M / rate seconds), wherever the
run is.  ``--hogs`` more busy loops run for the whole campaign, so the load
stays up between runs too (2 and the runs' own give a load average of 6 or
more on 2 cores).  A run is **clean** when its trace conforms, the survivors are
quiescent and their history has no violation at all (a documented finding
counts against it here, unlike the command's exit status, which accepts
one); the exit status is kept beside it.  The folder of a clean run is
removed; an unclean one is kept under OUT for its traces.  The load average
is read as each run ends (the first run waits for ``--warmup-load``); a run whose run and check pass ``--limit`` seconds is
stopped (its process group) and counted not clean.  Prints one JSON object (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bounded import run_json  # noqa: E402  (bench/bounded.py)

ROOT = Path(__file__).resolve().parent.parent
STACKS = ("sequencerflush", "raincoreflush", "raincoresequencerflush")


def kill_time(i: int) -> float:
    """The kill's moment for run i: spread over the workload's first part."""
    return round(0.2 + (i * 0.37) % 1.4, 2)


def one(protocol: str, i: int, messages: int, rate: float, out: Path, limit: float, lossy: bool = False) -> dict:
    folder = out / protocol / f"run{i:03d}"
    cmd = [str(ROOT / ".venv/bin/groupcheck"), "cluster", "run", "--protocol", protocol, "--messages",
           str(messages), "--rate", str(rate), "--kill", f"1@{kill_time(i)}", "--hog", "--json",
           "--out", str(folder)] + (["--lossy-ring"] if lossy and protocol.startswith("raincore") else [])
    facts, r, error = run_json(cmd, limit)
    row = {"run": i, "kill_at": kill_time(i), **facts}
    if r is None:
        row.update(clean=False, kept=str(folder), error=error)
        return row
    row.update(verdict=r["verdict"], quiescent=r["quiescent"], history=[v["check"] for v in r["history"]],
               delivered=r["delivered"], reason=r.get("reason"), finding=r.get("finding"),
               # the kill landed (node 1 killed, not gone before as suspected, nor
               # spared as the last live member), and who left as suspected
               killed=r["killed"], shunned=r.get("shunned", []),
               landed=1 in r["killed"] and 1 not in r.get("shunned", []))
    row["clean"] = r["verdict"] == "ok" and r["quiescent"] and not r["history"]
    if row["clean"]:
        shutil.rmtree(folder, ignore_errors=True)
    else:
        row["kept"] = str(folder)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stacks", default=",".join(STACKS))
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--messages", type=int, default=1000)
    ap.add_argument("--rate", type=float, default=500.0)
    ap.add_argument("--limit", type=float, default=600.0, help="seconds a run and its check may take")
    ap.add_argument("--hogs", type=int, default=2, help="busy loops for the whole campaign")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--lossy-ring", action="store_true",
                    help="the ring stacks on Raincore's own ring: the kill lands wherever node 1 is, "
                         "the token's holder included (no wait for a safe point)")
    ap.add_argument("--warmup-load", type=float, default=6.0,
                    help="before the first run, wait (at most 120 s) for the 1-minute load average to reach this")
    a = ap.parse_args()
    from groupcheck.impl.cluster import HOG     # ends itself when its stdin (our pipe) closes
    hogs = [subprocess.Popen([sys.executable, "-c", HOG], stdin=subprocess.PIPE) for _ in range(a.hogs)]
    try:
        # the 1-minute average lags the hogs: without the wait the first runs
        # read a low load although the machine is as busy as later
        until = time.monotonic() + 120
        while os.getloadavg()[0] < a.warmup_load and time.monotonic() < until:
            time.sleep(2)
        report(a, hogs)
    finally:
        for h in hogs:
            h.kill()


def report(a, hogs) -> None:
    out = a.out or Path(tempfile.mkdtemp(prefix="groupcheck-killruns-"))
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    stacks = {}
    for protocol in a.stacks.split(","):
        if protocol not in STACKS:
            sys.exit(f"--stacks: {protocol!r} is not one of {', '.join(STACKS)}")
        rows = []
        for i in range(a.runs):
            rows.append(one(protocol, i, a.messages, a.rate, out, a.limit, a.lossy_ring))
            r = rows[-1]
            print(f"{protocol} run {i}: {'clean' if r['clean'] else 'NOT clean'} exit {r['exit']} "
                  f"{r['seconds']} s load {r['load1']:.1f}", file=sys.stderr, flush=True)
        loads = [r["load1"] for r in rows]
        stacks[protocol] = {"runs": len(rows), "clean": sum(r["clean"] for r in rows),
                            "exit0": sum(r["exit"] == 0 for r in rows),
                            "kills_landed": sum(bool(r.get("landed")) for r in rows),
                            "runs_with_a_suspected_leave": sum(bool(r.get("shunned")) for r in rows),
                            "load1_min": min(loads), "load1_mean": round(sum(loads) / len(loads), 1),
                            "seconds_mean": round(sum(r["seconds"] for r in rows) / len(rows), 1),
                            "not_clean": [r for r in rows if not r["clean"]]}
    print(json.dumps({"bench": "killruns", "started": started,
                      "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                      "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
                      "messages": a.messages, "rate": a.rate, "campaign_hogs": len(hogs), "out": str(out),
                      "lossy_ring": a.lossy_ring,
                      "stacks": stacks}, indent=2))


if __name__ == "__main__":
    main()
