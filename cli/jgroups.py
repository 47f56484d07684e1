"""``groupcheck jgroups run``: JGroups 2.12 members on 127.0.0.1, killed as
told, their history (and white-box traces, where the stack writes them)
checked, the verdicts side by side (conformance/jgroups/adapter.py, docs/jgroups.md)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import List, Optional

import typer

from .findings import allow_option, expect_option, Gate, known_option
from .render import console, ENVIRONMENT, fail, FORCE, need_java, out_dir
from groupcheck.conformance.replay.engine import Verdict


app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Run JGroups 2.12 (Debian's libjgroups-java) on 127.0.0.1 and check it against the specs.")


@app.command()
def run(
    stack: str = typer.Option(..., "--stack", help="sequencer, sequencerflush (SEQUENCER over FLUSH), flush (FLUSH, no SEQUENCER) or stable (NAKACK and STABLE alone)"),
    members: int = typer.Option(3, "--members", help="JGroups members (JVMs) 1..N; 1 is the first coordinator"),
    messages: int = typer.Option(50, "--messages", help="multicasts each sender makes"),
    kill: Optional[List[str]] = typer.Option(None, "--kill", help="MEMBER@SECONDS: SIGKILL the member that long after all N are in one view (repeatable)"),
    senders: Optional[str] = typer.Option(None, "--senders", help="comma-separated members that multicast (default: all)"),
    flush: Optional[List[str]] = typer.Option(None, "--flush", help="MEMBER@SECONDS[:open]: the member starts a flush of its own that long after all N are in one view (startFlush then stopFlush; :open sends START_FLUSH only and leaves the flush under way); stacks with FLUSH (repeatable, one per member)"),
    shuffle: bool = typer.Option(False, "--shuffle", help="JGroups's SHUFFLE below NAKACK: messages coming up are passed on in a random order (up to 10, or 1 s of them)"),
    out: Path = typer.Option(..., "--out", help="folder for history/, traces/, the members' configs and logs"),
    checker: str = typer.Option("model", "--checker", help="what judges the traces: model (the Python replay), tlc or both"),
    interval: int = typer.Option(10, "--interval", help="milliseconds between a sender's multicasts"),
    settle: float = typer.Option(4.0, "--settle", help="after its last multicast, each member waits until it has delivered nothing for this many seconds"),
    timeout: float = typer.Option(90.0, "--timeout", help="seconds the whole run may take; every JVM is killed after it"),
    force: bool = FORCE,
    as_json: bool = typer.Option(False, "--json", help="the result as JSON"),
    expect: List[str] = expect_option(),
    allow: List[str] = allow_option(),
    known: Optional[bool] = known_option(),
):
    """Run the members, kill as told, check the history under the stack's promises
    and the traces with --checker; exit 0 when the run is clean or what breaks it is a
    documented finding (or --expect'ed), 1 otherwise."""
    from groupcheck.conformance.jgroups import adapter as jgroups
    if checker not in ("model", "tlc", "both"):
        fail(f"--checker {checker!r}: model, tlc or both")
    try:
        kills = [jgroups.parse_kill(k) for k in kill or []]
        flushes = [jgroups.parse_flush(f) for f in flush or []]
        try:
            who = [int(x) for x in senders.split(",")] if senders else None
        except ValueError:
            raise ValueError(f"--senders {senders!r}: expected comma-separated members, e.g. 2 or 2,3") from None
        log = (lambda s: None) if as_json else (lambda s: console(stderr=True).print(s, markup=False))
        runner = jgroups.Runner(stack, members, messages, kills, out, senders=who, interval_ms=interval,
                                settle=settle, timeout=timeout, flushes=flushes, shuffle=shuffle, log=log)
    except ValueError as e:
        fail(str(e))
    why = jgroups.available()
    if why is not None:
        fail(f"JGroups cannot run here: {why}", ENVIRONMENT)
    if checker != "model":
        need_java()
    out_dir(str(out), command="jgroups run", force=force)
    log(f"compiling the driver ({jgroups.SOURCE.name}) unless cached")
    try:
        classes = jgroups.compile_driver()
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
        why = (getattr(e, "stderr", b"") or b"").decode(errors="replace").strip().splitlines()
        fail(f"javac could not compile {jgroups.SOURCE}: {why[-1] if why else e}", ENVIRONMENT)
    try:
        res = runner.run(classes)
    except jgroups.Interrupted as e:
        fail(f"interrupted ({e}); every JVM was killed", 128 + e.signum)
    except (jgroups.JGroupsError, OSError) as e:
        fail(str(e), ENVIRONMENT)
    log(f"run done in {res.seconds} s; checking {out}/history")
    from groupcheck.core.trace.history import HistoryError
    try:
        r = jgroups.check(out, stack, checker)
    except HistoryError as e:
        fail(f"{e}; see {out}/node-*.log", 1)
    r.update(seconds=res.seconds, killed=res.killed, failed=res.failed, pids=res.pids, out=str(out),
             flushes=res.flushes, shuffle=shuffle)
    (out / "result.json").write_text(json.dumps(r, indent=2), encoding="utf-8")
    _report(r, as_json, Gate(expect, known, allow))


# the verdicts from worst to best (conformance/replay/engine.py Verdict), the two checkers' disagreement (a
# failure of the tool) next to the worst: a run's is the worse of its history's and its trace's
WORST_FIRST = (Verdict.REJECTED, "disagreement", *list(Verdict)[1:])


def _verdict(r: dict) -> str:
    h, t = r["history"]["verdict"], (r["trace"] or {}).get("verdict")
    return h if t is None else min((h, t), key=lambda v: WORST_FIRST.index(v) if v in WORST_FIRST else 0)


def _report(r: dict, as_json: bool, gate: Gate) -> None:
    # the stack's own protocol judges which violations are its documented findings (cli/findings.py)
    found = [{**v, "verdict": "violation", "protocol": r["stack"], "property": v["check"]}
             for v in r["history"]["violations"]]
    trace = {**r["trace"], "protocol": r["stack"]} if r["trace"] else None
    rows = found + ([trace] if trace else [])
    ok = _verdict(r) == "ok" and not r["failed"] and r["agree"] is not False
    unexpected = bool(r["failed"]) or r["agree"] is False or any(
        x["verdict"] != "ok" and not gate.accepted(x) for x in rows)
    code = gate.exit_code(rows, unexpected)
    for m in gate.missing(rows):
        console(stderr=True).print(m, markup=False)
    if as_json:
        print(json.dumps(r, indent=2))
        raise typer.Exit(code)
    h, t = r["history"], r["trace"]
    # the run's verdict word first (the worse of its history's and its trace's); a member that did
    # not finish or a disagreement of the two is a violation of the run whatever they said
    label = "ok" if ok else ("violation" if _verdict(r) == "ok" else _verdict(r)) \
        + (" (as expected)" if code == 0 else "")
    print(f"{r['run_id']}: {label}; killed {r['killed'] or 'none'}; "
          f"delivered {h['delivered']}; {r['seconds']} s")
    if r.get("flushes"):         # only runs with --flush have them
        print("  own flushes: " + ", ".join(f"member {m} {v}" for m, v in sorted(r["flushes"].items())))
    if r["failed"]:
        print(f"  members that did not finish: {r['failed']} (see {r['out']}/node-*.log)")
    print(f"  history: {h['verdict']} ({h['events']} events, the {r['stack']} stack's promises)")
    for v in found:
        print(f"    {v['check']}{gate.note(v)}: {v['text']}")
    if h["not_promised"]:
        print("    not promised by this stack, reported only: "
              + ", ".join(sorted({v['check'] for v in h['not_promised']})))
    if t is None:
        print(f"  trace: none (no white-box traces under {r['out']}/traces); agreement: not judged")
    else:
        print(f"  trace: {t['verdict']}{gate.note(trace)}" + (f" ({t['reason'].splitlines()[0]})" if t.get("reason") else ""))
        if t.get("jgroups_step"):
            print(f"    the JGroups step: {t['jgroups_step']}")
        if t.get("tlc"):
            v = t["tlc"]
            said = "accepts every step" if v["ok"] else f"rejects at event {v['first_unmatched']}"
            if v.get("broken_at") is not None:
                said += f"; {'/'.join(v['broken'])} broken at event {v['broken_at']}"
            print(f"    tlc: {said} ({v['events']} events, {v['seconds']} s)")
            if v.get("jgroups_step") and v.get("jgroups_step") != t.get("jgroups_step"):
                print(f"    the JGroups step (TLC's record): {v['jgroups_step']}")
        print(f"  agreement of history and trace verdicts: {'yes' if r['agree'] else 'NO'}"
              + (f" (the trace is the {r['layer']} layer's: compared on {', '.join(r['agree_on'])})"
                 if r.get("layer") else ""))
    print(f"  files: groupcheck history {r['out']}/history" + ("" if t is None else f"; groupcheck conform {r['out']}/traces"))
    raise typer.Exit(code)
