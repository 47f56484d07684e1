"""Black box against white box on JGroups 2.12 with the coordinator killed:
the agreement figure of docs/jgroups.md ("Results on JGroups 2.12.2.Final").

    .venv/bin/python bench/jgroups_agreement.py [--runs 10] [--stacks sequencer,sequencerflush]
                                               [--messages 200] [--seed 1] [--out DIR]

Each run is ``groupcheck jgroups run --stack S --members 3 --messages M
--kill 1@T --checker both --json``: member 1 (the coordinator and
sequencer) SIGKILLed T seconds after the full view, T drawn per run from
0.4-1.4 s (``--seed``), one run at a time.  The history is judged on the
stack's promises; SEQUENCER's white-box trace by the model replay and by
TLC.  Per run it reports the history's verdict and violated checks, the
replay's verdict and first bad record (the first record that is no step
of the spec or, for a property broken, the step where it broke: its
index, action and member, and the JGroups step behind it), the first
record no step of the spec matches for the replay and for TLC (none when
every step conforms), the property TLC finds broken on the trace and its
record (with the JGroups step behind it), whether the replay names the
same property at the same record, and whether the history and trace verdicts agree
(on the checks the command compares: ``agree_on``).  Each run's folder is kept under OUT.
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bounded import run_json  # noqa: E402  (bench/bounded.py)

ROOT = Path(__file__).resolve().parent.parent


def record(folder: Path, index):
    """The trace's event at ``index`` (counted from 0 after the header), briefly."""
    if index is None:
        return None
    from groupcheck.core.trace.reader import load
    ev = load(folder / "traces").events[index]
    return {"index": index, "action": ev["name"], "nid": ev["nid"], "msg": ev.get("msg")}


def one(stack: str, i: int, kill_at: float, messages: int, out: Path, limit: float) -> dict:
    folder = out / stack / f"run{i:02d}"
    cmd = [str(ROOT / ".venv/bin/groupcheck"), "jgroups", "run", "--stack", stack, "--members", "3",
           "--messages", str(messages), "--kill", f"1@{kill_at}", "--checker", "both", "--json",
           "--out", str(folder)]
    row = {"stack": stack, "run": i, "kill_at": kill_at, "out": str(folder)}
    facts, r, error = run_json(cmd, limit)
    row.update(facts)
    if r is None:
        return {**row, "error": error}
    h, t = r["history"], r["trace"] or {}
    tlc = t.get("tlc") or {}
    row.update(
        run_seconds=r["seconds"], delivered=h["delivered"], failed=r["failed"],
        history={"verdict": h["verdict"], "violated": sorted({v["check"] for v in h["violations"]}),
                 "not_promised": sorted({v["check"] for v in h["not_promised"]})},
        replay={"verdict": t.get("verdict"), "reason": (t.get("reason") or "").splitlines()[0] or None,
                "first_bad": record(folder, t.get("first_bad_event")),
                "stops_conforming_at": t.get("stops_conforming_at"), "jgroups_step": t.get("jgroups_step")},
        tlc={"ok": tlc.get("ok"), "first_unmatched": tlc.get("first_unmatched"), "seconds": tlc.get("seconds"),
             "broken": tlc.get("broken") or None, "broken_at": record(folder, tlc.get("broken_at")),
             "jgroups_step": tlc.get("jgroups_step")},
        same_record=t.get("stops_conforming_at") == tlc.get("first_unmatched"),
        # the replay's verdict on a property TLC also judges: the same property at the same record
        same_property=(None if t.get("verdict") != "violation" else
                       (t.get("reason") or "").split(":")[0] in (tlc.get("broken") or [])
                       and t.get("first_bad_event") == tlc.get("broken_at")),
        agree=r["agree"], agree_on=r["agree_on"])
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10, help="runs per stack")
    ap.add_argument("--stacks", default="sequencer,sequencerflush")
    ap.add_argument("--messages", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1, help="draws the kill times")
    ap.add_argument("--limit", type=float, default=600.0, help="seconds a run and its checks may take")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    out = a.out or Path(tempfile.mkdtemp(prefix="jgroups-agreement-"))
    draw = random.Random(a.seed)
    started, load0, t0 = datetime.now(timezone.utc), os.getloadavg()[0], time.monotonic()
    rows = []
    for stack in a.stacks.split(","):
        for i in range(1, a.runs + 1):
            rows.append(one(stack, i, round(draw.uniform(0.4, 1.4), 2), a.messages, out, a.limit))
    summary = {}
    for stack in a.stacks.split(","):
        mine = [r for r in rows if r["stack"] == stack]
        judged = [r for r in mine if "agree" in r]
        summary[stack] = {
            "runs": len(mine), "judged": len(judged), "agree": sum(bool(r["agree"]) for r in judged),
            "history_violation": sum(r["history"]["verdict"] != "ok" for r in judged),
            "trace_nonconforming": sum(r["replay"]["verdict"] == "nonconforming" for r in judged),
            "trace_violation": sum(r["replay"]["verdict"] == "violation" for r in judged),
            "replay_and_tlc_same_record": sum(r["same_record"] for r in judged),
            "tlc_property_violation": sum(bool(r["tlc"]["broken"]) for r in judged),
            "replay_and_tlc_same_property": sum(bool(r["same_property"]) for r in judged),
            "disagree": [r["run"] for r in judged if not r["agree"]],
            "errors": {r["run"]: r["error"] for r in mine if "error" in r}}
    print(json.dumps({
        "machine": {"host": platform.node(), "cpus": os.cpu_count(), "python": platform.python_version()},
        "date": started.isoformat(timespec="seconds"), "load1_start": load0,
        "load1_end": os.getloadavg()[0], "seconds": round(time.monotonic() - t0, 1),
        "members": 3, "messages": a.messages, "seed": a.seed, "out": str(out),
        "summary": summary, "runs": rows}, indent=1))


if __name__ == "__main__":
    main()
