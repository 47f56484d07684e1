"""The README is a test: every command of its "Then" section, in order, in
one folder, each on the previous commands' output, as a new user runs them.

The commands are read from README.md itself (the first ``sh`` block after
"## Then"; a line starting with ``#`` or blank continues the previous
command's comment).  Sizes are cut to CI's budget by ``CUTS`` (a size
option's value, never the command or its output folder), and a command
whose cost no size option bounds is replaced by the nearest one that is
(``INSTEAD``, each with its reason); the README's own sizes were run once
and their times are in its comments.  Every command must exit 0 (a
documented finding included), print no traceback, and leave what the next
one reads.  JGroups's commands skip with the reason where it is absent.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_helpers import no_traceback

ROOT = Path(__file__).resolve().parents[1]

# (a README command's words, as a regex) -> the size options to cut there
CUTS = [
    (r"^simulate ", {"--runs": "5"}),
    (r"^traces generate ", {"--runs": "20"}),
    (r"^cluster run .*--messages 2000", {"--messages": "200"}),
    (r"^cluster chaos ", {"--seconds": "8"}),
    (r"^jgroups run ", {"--messages": "60"}),
]
# commands no size option bounds: what runs instead, and why
INSTEAD = {
    "check stable --json": ("check stable --model Flawed --json",
                            "every STABLE model takes about 10 minutes of TLC; one model exercises the command"),
    "explore raincore --compare-tlc": ("explore raincore --model Faithful3 --compare-tlc",
                                       "the compare:true Raincore models take minutes; one shows the comparison"),
    "explore stable --model Rounds4 --processes 2": ("explore stable --model Pair --processes 2",
                                                     "Rounds4 is a minutes-long reach model"),
    "prove sequencerflush --members 3": ("prove sequencerflush --members 2",
                                         "N = 3 takes about 15 minutes of z3"),
    "prove sequencerflush --members 4": (None, "N = 4 takes about 85 minutes and 14 GB"),
    "audit --full --runs 500": ("audit --runs 20 --protocol stable --out audit",
                                "the full audit takes about an hour; one protocol's default audit runs every stage"),
}


# commands whose README comment says they exit 1 on a documented finding of a third party's
# stack: the exit statuses allowed, and the text the output must then show
def _a_jgroups_finding(folder: Path, output: str) -> bool:
    """Exit 1 of ``jgroups run --stack sequencer`` shows a documented finding
    and nothing else: JGRP-1449 (``handleSuspect``, named by the trace
    verdict); or the trace documented as SEQUENCER's loss after a
    coordinator crash (Sequencer.tla's finding: a message forwarded to the
    killed coordinator), the history broken only where that loss shows (a
    gap, Agreement, EventualDelivery); or a clean trace beside a history
    whose every difference between survivors is JGroups's loss of the
    killed member's last message (``jgroups_scenarios.deviations``)."""
    import json
    if "handleSuspect" in output:
        return True
    res = json.loads((folder / "result.json").read_text(encoding="utf-8"))
    trace, bad = res["trace"], res["history"]["violations"]
    if trace["verdict"] == "documented" and trace.get("finding") == "sequencer/lost-after-coordinator-crash":
        return all(v["check"] in ("GapFreeFIFO", "EventualDelivery", "Agreement")
                   or v["check"] == "SenderFIFO" and "skipping" in v["text"] for v in bad)
    from groupcheck.conformance.jgroups import scenarios
    from groupcheck.core.trace import history as history_format
    (h,) = history_format.load(history_format.history_files([folder / "history"]))
    found = scenarios.deviations(h)
    return trace["verdict"] == "ok" and bool(found) and {d[0] for d in found} <= {"lost", "late"}


FINDING_EXIT = {
    # the CI form: JGroups's findings accepted where they occur, so 0 whatever the run shows of them
    "jgroups run --stack sequencer --messages 200 --kill 1@0.8 --out jg --force": ((0,), ""),
    "jgroups run --stack sequencer": ((0, 1), _a_jgroups_finding),
    "conform jg/traces --checker both": ((0, 1), "nonconforming"),
}


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("## Then", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    cmds: list[str] = []
    going = False       # the previous line ended in a backslash: this one continues it
    for line in block.splitlines():
        code = line.split("#", 1)[0].strip()
        if code and going:
            cmds[-1] += " " + code
        elif code:
            cmds.append(code)
        going = cmds[-1].endswith("\\") if cmds and code else going
        if going:
            cmds[-1] = cmds[-1][:-1].rstrip()
    return cmds


def test_readme_commands_are_read():
    cmds = readme_commands()
    assert len(cmds) >= 15 and all(c.startswith(".venv/bin/groupcheck ") for c in cmds), cmds
    words = [" ".join(c.split()[1:]) for c in cmds]
    assert "conform run/traces --checker both" in words
    # every replacement still names a README command (the README changed? update INSTEAD)
    assert set(INSTEAD) <= {w for c in words for w in [c.split(" && ")[0]]}, set(INSTEAD) - set(words)


def _cut(args: str) -> tuple[str | None, str | None]:
    if args in INSTEAD:
        return INSTEAD[args]
    for rx, opts in CUTS:
        if re.search(rx, args):
            for opt, value in opts.items():
                args = re.sub(rf"{opt} \S+", f"{opt} {value}", args)
    return args, None


def _jgroups_missing() -> str | None:
    from groupcheck.conformance.jgroups import adapter as jgroups
    return jgroups.available()


@pytest.mark.slow
def test_the_readme_runs_in_order(tmp_path):
    exe = Path(sys.executable).parent / "groupcheck"
    log, skipped = [], []
    no_jgroups = _jgroups_missing()
    for cmd in readme_commands():
        for part in cmd.split(" && "):
            args = part.strip().split(" ", 1)[1]
            run, why = _cut(args)
            if run is None:
                skipped.append(f"{args}: {why}")
                continue
            if no_jgroups and (args.startswith("jgroups ") or "jg/" in args):
                skipped.append(f"{args}: {no_jgroups}")
                continue
            t0 = time.monotonic()
            r = subprocess.run([str(exe), *shlex.split(run)], cwd=tmp_path, capture_output=True, text=True,
                               timeout=1800)
            log.append(f"{time.monotonic() - t0:7.1f} s  exit {r.returncode}  groupcheck {run}")
            no_traceback(f"groupcheck {run}", r.stdout, r.stderr)
            allowed, shown = next((v for k, v in FINDING_EXIT.items() if args.startswith(k)), ((0,), ""))
            if r.returncode == 1 and 1 in allowed:
                out, words = r.stdout + r.stderr, shlex.split(run)
                folder = tmp_path / words[words.index("--out") + 1] if "--out" in words else tmp_path
                assert shown(folder, out) if callable(shown) else shown in out, (run, r.stdout[-3000:])
                continue
            assert r.returncode == 0, (f"README step `groupcheck {args}` (run as `{run}`) exited "
                                       f"{r.returncode}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}\n" + "\n".join(log))
    print("\n".join(log + [f"skipped: {s}" for s in skipped]))
