"""JGroups 2.12 (Debian's libjgroups-java) through the history adapter and
``groupcheck jgroups run`` (conformance/jgroups/adapter.py, docs/jgroups.md): 3
members on 127.0.0.1 per stack, with and without a coordinator kill.  The
runs are slow and skipped, with the reason, when the jar or a JDK is absent
(``make jgroups`` installs them); the option and folder checks are fast and
need no JGroups."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from groupcheck.conformance import history
from groupcheck.core.trace import history as history_format
from groupcheck.conformance.jgroups import adapter as jgroups
from groupcheck.conformance.replay import registry as protocols
from groupcheck.core.trace import writer as tracefile

_WHY = jgroups.available()
needs_jgroups = pytest.mark.skipif(_WHY is not None, reason=f"JGroups adapter cannot run: {_WHY}")


def gc(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "groupcheck.cli.main", *args],
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def classes():
    if _WHY is not None:
        pytest.skip(f"JGroups adapter cannot run: {_WHY}")
    return jgroups.compile_driver()


def _run(classes, tmp_path, stack, kills=()):
    r = jgroups.Runner(stack, 3, 50, list(kills), tmp_path, timeout=90).run(classes)
    assert not r.failed, r.logs
    [row] = history.check_paths([tmp_path / "history"])
    return r, row


def assert_sequencer_verdict_explained(t: dict) -> None:
    """A SEQUENCER trace verdict other than ok is explained: one at a record
    names the JGroups SEQUENCER step behind it; one at the run's end (no
    record: Quiescent) is only the documented crash cut, the crashed
    coordinator's DATA still on a channel to a survivor that took its earlier
    ones after the crash (SIGKILL cuts a TCP connection's tail; Sequencer.tla's
    Crash loses a channel whole or not at all: docs/jgroups.md)."""
    if t["verdict"] == "ok":
        return
    if t["first_bad_event"] is not None:
        assert "JGroups's SEQUENCER." in t["jgroups_step"], t
        return
    assert t["verdict"] == "documented" and t["finding"] == "sequencer/lost-after-coordinator-crash", t
    assert t["finding_why"].startswith("Quiescent: ") and "cut by the crash" in t["finding_why"], t


@pytest.mark.slow
@needs_jgroups
@pytest.mark.parametrize("stack", ["sequencer", "sequencerflush", "flush", "stable"])
def test_crash_free_run_checks_clean(classes, tmp_path, stack):
    r, row = _run(classes, tmp_path, stack)
    assert row["events"] >= 3 * 50 + 3 * 150       # every send and every delivery logged
    r = jgroups.check(tmp_path, stack)
    assert r["history"]["verdict"] == "ok", r["history"]["violations"]
    if jgroups.STACKS[stack].steps:          # white-box: JGroups's SEQUENCER or STABLE steps conform to the spec
        assert r["trace"]["verdict"] == "ok" and r["agree"], r["trace"]


@pytest.mark.slow
@needs_jgroups
@pytest.mark.parametrize("stack", ["sequencer", "sequencerflush"])
def test_coordinator_sigkill_is_checked_with_witnesses(classes, tmp_path, stack):
    r, row = _run(classes, tmp_path, stack, [(1, 0.55)])
    assert r.killed == [1] and row["crashed"] == [1]
    h = history_format.load(history_format.history_files([tmp_path / "history"]))[0]
    # the survivors converge on the view without the killed coordinator
    last = {m: h.views[m][-1] for m in (2, 3)}
    assert last[2][:2] == last[3][:2] and sorted(last[2][1]) == [2, 3], last
    print(f"\nJGroups {stack}, coordinator SIGKILLed: {row['verdict']}")
    for v in row["violations"]:
        print(f"  {v['check']}: {v['text']}")
        assert v["members"] and v["events"], v          # every anomaly has its witness
        assert v["mermaid"].startswith("sequenceDiagram")
    if stack == "sequencerflush":
        assert "FlushEventOrder" not in {v["check"] for v in row["violations"]}
    # white-box (SEQUENCER's layer on both stacks): handleSuspect is the spec's
    # Suspect, so every step conforms and a property broken is named at the
    # JGroups step where it broke (docs/jgroups.md)
    t = jgroups.check(tmp_path, stack)["trace"]
    print(f"  trace: {t['verdict']}; {t.get('reason')}; {t.get('jgroups_step')}")
    assert t["verdict"] in ("ok", "violation", "documented"), t
    assert_sequencer_verdict_explained(t)


# the tests of stable_run (a JGroups run of about 8 s) on one xdist worker, so it runs once
STABLE_RUN = pytest.mark.xdist_group("jgroups-stable-run")


@pytest.fixture(scope="module")
def stable_run(classes, tmp_path_factory):
    """One crash-free run of the stable stack with its white-box trace: 3
    members, 60 multicasts each, two STABLE rounds or more (about 8 s)."""
    out = tmp_path_factory.mktemp("jgroups-stable")
    r = jgroups.Runner("stable", 3, 60, [], out, settle=1.0, timeout=60).run(classes)
    assert not r.failed, r.logs
    return out


def _stable_events(out):
    [path] = (out / "traces").glob("*.ndjson")
    return path, [json.loads(line) for line in path.read_text().splitlines()]


@needs_jgroups
@STABLE_RUN
def test_jgroups_stable_conforms_step_by_step_in_the_replay_and_tlc(stable_run):
    """JGroups's pbcast.STABLE, white-box: every gossip, stability digest and
    purge of a crash-free run is a step of Stable.tla (the replay and TLC
    agree), and SafeGC and StabilityBound hold on it."""
    r = jgroups.check(stable_run, "stable", "both")
    assert r["history"]["verdict"] == "ok", r["history"]["violations"]
    t = r["trace"]
    assert t["verdict"] == "ok" and t["tlc"]["ok"] and r["agree"], t
    _, events = _stable_events(stable_run)
    names = {e.get("name") for e in events}
    assert {"Multicast", "ReceiveData", "SendStable", "ReceiveStable", "SendStability", "ReceiveStability"} <= names
    # the run purged: SafeGC was judged on JGroups's purges, not on an empty run
    assert any(e["state"]["purged"] for e in events if e.get("name") in ("SendStability", "ReceiveStability"))


@needs_jgroups
@STABLE_RUN
def test_a_forged_purge_past_the_stable_point_is_rejected_naming_the_jgroups_step(stable_run, tmp_path):
    """The run's trace with one member's purge raised one message past the
    lows of the STABILITY digest it applied: the replay and TLC reject that
    record, and the verdict names JGroups's step."""
    path, events = _stable_events(stable_run)
    i, ev = next((i, e) for i, e in enumerate(events) if e.get("name") == "ReceiveStability")
    sender = next(iter(ev["msg"]["lows"]))
    ev["state"]["purged"][sender] = ev["msg"]["lows"][sender] + 1
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / path.name).write_text("".join(json.dumps(e) + "\n" for e in events))
    t = jgroups._trace_verdict(tmp_path / "traces", "both")
    assert t["verdict"] == "nonconforming" and t["first_bad_event"] == i - 1, t     # events count from 0 after the header
    assert not t["tlc"]["ok"] and t["tlc"]["first_unmatched"] == i - 1, t["tlc"]
    assert "purged" in t["reason"] and "STABLE.handleStabilityMessage" in t["jgroups_step"], t


@pytest.fixture(scope="module")
def flush_run(classes, tmp_path_factory):
    """One crash-free run of the flush stack with its white-box trace: 3
    members joining one at a time (two flushes), 30 multicasts each."""
    out = tmp_path_factory.mktemp("jgroups-flush")
    r = jgroups.Runner("flush", 3, 30, [], out, settle=1.0, timeout=60).run(classes)
    assert not r.failed, r.logs
    return out


FLUSH_ACTIONS = {"Join", "StartFlush", "Block", "FlushCompleted", "ReceiveFlushCompleted", "SendView", "InstallView",
                 "StopFlush", "Unblock", "Multicast", "Deliver"}


@pytest.mark.slow       # the run (two joins: 18-23 s beside a CPU hog) and TLC's trace validation twice: 40-60 s
@needs_jgroups
def test_jgroups_flush_conforms_step_by_step_in_the_replay_and_tlc(flush_run):
    """JGroups's pbcast.FLUSH, white-box: the joins of members 2 and 3 (each
    a flush of JGroups 2.12, without FLUSH_OK) and the multicasts after them
    are steps of Flush.tla's JGroups variant; the replay and TLC agree."""
    r = jgroups.check(flush_run, "flush", "both")
    assert r["history"]["verdict"] == "ok", r["history"]["violations"]
    t = r["trace"]
    assert t["verdict"] == "ok" and t["tlc"]["ok"] and r["agree"], t
    _, events = _stable_events(flush_run)
    head, steps = events[0], events[1:-1]
    assert head["protocol"] == "flush" and head["constants"] == {
        "N": 3, "NInit": 1, "MaxMsgs": 90, "MaxCrashes": 0, "MaxLeaves": 0, "ReconcileDigests": True,
        "FlushOkRound": False}, head
    assert FLUSH_ACTIONS <= {e["name"] for e in steps}
    assert [e["nid"] for e in steps if e["name"] == "Join"] == [2, 3]
    assert [e["msg"]["members"] for e in steps if e["name"] == "SendView"] == [[1, 2], [1, 2, 3]]
    assert sum(e["name"] == "Deliver" for e in steps) == 2 * 90       # each member delivers the others' 60


@pytest.mark.slow
@needs_jgroups
def test_a_forged_flush_initiator_is_rejected_naming_the_jgroups_step(flush_run, tmp_path):
    """The run's trace with member 2's Block logging a flush initiator other
    than the member whose START_FLUSH it took: the replay and TLC reject
    that record, and the verdict names FLUSH.onStartFlush."""
    path, events = _stable_events(flush_run)
    i = next(i for i, e in enumerate(events) if e.get("name") == "Block")
    events[i]["state"]["flushInit"] = 3
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / path.name).write_text("".join(json.dumps(e) + "\n" for e in events))
    t = jgroups._trace_verdict(tmp_path / "traces", "both")
    assert t["verdict"] == "nonconforming" and t["first_bad_event"] == i - 1, t
    assert not t["tlc"]["ok"] and t["tlc"]["first_unmatched"] == i - 1, t["tlc"]
    assert "flushInit" in t["reason"] and "FLUSH.onStartFlush" in t["jgroups_step"], t


def test_a_view_without_a_crashed_members_message_a_survivor_had_is_explained():
    """flush_step on a rejected SendView: the message of the crashed member
    that the other survivor's FLUSH_COMPLETED digest had is named, with the
    FLUSH_RECONCILE the coordinator sent."""
    def ev(name, nid, clock, **kw):
        return {"kind": "event", "name": name, "nid": nid, "params": {}, "clock": clock, **kw}
    data = {"type": "DATA", "sender": 1, "seqno": 34, "view": 3}
    events = [ev("Multicast", 1, 0.1, msg=data, state={"delivered": [[1, 34]]}),
              ev("Deliver", 3, 0.2, params={"q": 1}, msg=data, state={"delivered": [[1, 34]]}),
              ev("Crash", 1, 0.3, state=None),
              ev("FlushCompleted", 2, 0.5, msg={"type": "FLUSH_COMPLETED", "view": 3, "digest": []},
                 state={"phase": "Completed", "blocked": True, "digest": []}),
              ev("FlushCompleted", 3, 0.6, msg={"type": "FLUSH_COMPLETED", "view": 3, "digest": [[1, 34]]},
                 state={"phase": "Completed", "blocked": True, "digest": [[1, 34]]}),
              ev("SendView", 2, 0.8, msg={"type": "VIEW", "view": 3, "members": [2, 3]},
                 state={"vid": 4, "phase": "Normal", "digest": [], "delivered": []})]
    notes = [{"note": "reconcile", "nid": 2, "clock": 0.7, "highest": {"1": 34, "2": 10, "3": 9}}]
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "notes.json").write_text(json.dumps(notes))
        why = jgroups.flush_step(events, 5, Path(d) / "notes.json")
        assert "without 1.34 (in member 3's digest)" in why and "crashed member 1" in why, why
        assert "FLUSH_RECONCILE (highest NAKACK seqnos {'1': 34" in why, why
        # member 2 had delivered it: nothing missing, the generic step
        events[3]["msg"]["digest"] = [[1, 34]]
        events.insert(1, ev("Deliver", 2, 0.15, params={"q": 1}, msg=data, state={"delivered": [[1, 34]]}))
        assert jgroups.flush_step(events, 6).endswith("Flush.tla has no step that logs this here")


def test_a_view_missing_a_live_members_message_too_is_not_blamed_on_the_crash():
    """flush_step explains a view as a crashed member's loss only when every
    message missing from it is of a crashed member: one of a live sender
    missing as well is no such loss (the generic step)."""
    def ev(name, nid, clock, **kw):
        return {"kind": "event", "name": name, "nid": nid, "params": {}, "clock": clock, **kw}
    d1 = {"type": "DATA", "sender": 1, "seqno": 34, "view": 3}
    d2 = {"type": "DATA", "sender": 2, "seqno": 5, "view": 3}
    events = [ev("Multicast", 1, 0.1, msg=d1, state={"delivered": [[1, 34]]}),
              ev("Multicast", 2, 0.15, msg=d2, state={"delivered": [[2, 5]]}),
              ev("Crash", 1, 0.3, state=None),
              ev("FlushCompleted", 2, 0.5, msg={"type": "FLUSH_COMPLETED", "view": 3, "digest": [[1, 34], [2, 5]]},
                 state={"phase": "Completed", "blocked": True, "digest": [[1, 34], [2, 5]]}),
              ev("InstallView", 3, 0.8, params={"c": 2}, msg={"type": "VIEW", "view": 3, "members": [2, 3]},
                 state={"vid": 4, "phase": "Normal", "digest": [], "delivered": []})]
    assert jgroups.flush_step(events, 4).endswith("Flush.tla has no step that logs this here")
    d3 = {"type": "DATA", "sender": 1, "seqno": 35, "view": 3}      # both of the crashed member: its loss
    events[1] = ev("Multicast", 1, 0.15, msg=d3, state={"delivered": [[1, 34], [1, 35]]})
    events[3]["msg"]["digest"] = [[1, 34], [1, 35]]
    assert "crashed member 1" in jgroups.flush_step(events, 4)


def test_a_crashed_members_own_digest_is_not_among_the_survivors():
    """flush_step's union is of the survivors' FLUSH_COMPLETED digests: a
    message only the crashed member's own digest held (it completed its
    flush, then died) is one no survivor had, so a view without it is the
    generic step, not a lost message."""
    def ev(name, nid, clock, **kw):
        return {"kind": "event", "name": name, "nid": nid, "params": {}, "clock": clock, **kw}
    data = {"type": "DATA", "sender": 1, "seqno": 34, "view": 3}
    done = {"type": "FLUSH_COMPLETED", "view": 3}
    events = [ev("Multicast", 1, 0.1, msg=data, state={"delivered": [[1, 34]]}),
              ev("FlushCompleted", 1, 0.2, msg={**done, "digest": [[1, 34]]},
                 state={"phase": "Completed", "blocked": True, "digest": [[1, 34]]}),
              ev("Crash", 1, 0.3, state=None),
              ev("FlushCompleted", 2, 0.5, msg={**done, "digest": []},
                 state={"phase": "Completed", "blocked": True, "digest": []}),
              ev("SendView", 2, 0.8, msg={"type": "VIEW", "view": 3, "members": [2, 3]},
                 state={"vid": 4, "phase": "Normal", "digest": [], "delivered": []})]
    assert jgroups.flush_step(events, 4).endswith("Flush.tla has no step that logs this here")
    events[3]["msg"]["digest"] = [[1, 34]]          # a survivor had it: the view lost it
    assert "without 1.34 (in member 2's digest)" in jgroups.flush_step(events, 4)


@pytest.mark.slow       # one kill run, 15-40 s
@needs_jgroups
def test_a_flush_coordinator_kill_run_conforms_or_names_where_jgroups_leaves_the_spec(tmp_path):
    """FLUSH with the coordinator killed while the others multicast: its
    white-box trace conforms (replay and TLC), or is rejected at a step
    the verdict explains; a view installed without a crashed member's
    message a survivor had is also a VirtualSynchrony break in the history."""
    out = tmp_path / "run"
    p = gc("jgroups", "run", "--stack", "flush", "--members", "3", "--messages", "200", "--kill", "1@0.5",
           "--settle", "2", "--checker", "both", "--out", str(out))
    assert p.returncode in (0, 1), p.stderr
    result = json.loads((out / "result.json").read_text())
    t, h = result["trace"], result["history"]
    print(f"\nJGroups flush, coordinator SIGKILLed: history {h['verdict']}, trace {t['verdict']}; "
          f"{t.get('jgroups_step')}")
    assert t["verdict"] in ("ok", "nonconforming"), t
    assert t["tlc"]["ok"] == (t["verdict"] == "ok"), t             # the replay and TLC agree
    if t["verdict"] != "ok":
        assert t["tlc"]["first_unmatched"] == t["first_bad_event"], t
        assert t["jgroups_step"].startswith("JGroups's "), t
        assert "the JGroups step: JGroups's " in p.stdout
        if "VirtualSynchrony breaks" in t["jgroups_step"]:
            assert {"VirtualSynchrony", "Agreement"} & {v["check"] for v in h["violations"]}, h


@pytest.mark.slow
@needs_jgroups
def test_the_command_runs_kills_checks_and_leaves_no_jvm(tmp_path):
    out = tmp_path / "run"
    p = gc("jgroups", "run", "--stack", "sequencer", "--members", "3", "--messages", "30", "--kill", "1@0.5",
           "--out", str(out))
    assert p.returncode in (0, 1), p.stderr
    head = p.stdout.splitlines()[0]
    assert re.match(r"jgroups-sequencer-n3-m30-\d+: (ok|violation|documented|nonconforming); killed \[1\]; "
                    r"delivered ", head), p.stdout
    assert re.search(r"^  history: (ok|violation) \(\d+ events", p.stdout, re.M), p.stdout
    assert re.search(r"^  trace: (ok|nonconforming|violation|documented)", p.stdout, re.M), p.stdout
    assert re.search(r"^  agreement of history and trace verdicts: (yes|NO)$", p.stdout, re.M), p.stdout
    assert "member 1 killed with SIGKILL" in p.stderr and "3 members in one view" in p.stderr
    result = json.loads((out / "result.json").read_text())
    assert (p.returncode == 0) == (result["history"]["verdict"] == "ok" == result["trace"]["verdict"])
    assert result["killed"] == [1] and result["history"]["crashed"] == [1]
    assert result["agree"] == ((result["history"]["verdict"] == "ok") == (result["trace"]["verdict"] == "ok"))
    assert_sequencer_verdict_explained(result["trace"])
    if result["trace"]["verdict"] != "ok" and result["trace"]["first_bad_event"] is not None:
        assert "the JGroups step: JGroups's SEQUENCER." in p.stdout
    for pid in result["pids"].values():              # every JVM the command started has ended
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert subprocess.run(["pgrep", "-f", f"HistoryDriver .*{out}"], capture_output=True).returncode == 1
    # the folder is what `groupcheck history` reads
    h = gc("history", str(out / "history"))       # every check, promised or not
    clean = not result["history"]["violations"] and not result["history"]["not_promised"]
    assert h.returncode == (0 if clean else 1) and f"{int(clean)}/1 runs ok" in h.stdout, h.stdout


@pytest.mark.slow       # one kill run, 13-20 s; the default suite keeps the agreement rule's fast test below
@needs_jgroups
def test_a_sequencer_flush_kill_run_is_judged_white_box_and_its_agreement_reported(tmp_path):
    """SEQUENCER + FLUSH with the coordinator killed: the SEQUENCER layer's
    steps make a Sequencer.tla trace that the replay judges, and the command
    compares it with the history on the checks that layer promises, not on
    FLUSH's VirtualSynchrony and FlushEventOrder, which it cannot see."""
    out = tmp_path / "run"
    p = gc("jgroups", "run", "--stack", "sequencerflush", "--members", "3", "--messages", "60", "--kill",
           "1@0.5", "--out", str(out))
    assert p.returncode in (0, 1), p.stderr
    [path] = (out / "traces").glob("*.ndjson")
    head = json.loads(path.read_text().splitlines()[0])
    assert head["protocol"] == "sequencer" and head["constants"] == {
        "N": 3, "MaxSeq": 60, "MaxCrashes": 1, "SuspectResend": True, "FillGaps": True, "SeparateChannels": True}, head
    result = json.loads((out / "result.json").read_text())
    t, h = result["trace"], result["history"]
    assert t["verdict"] in ("ok", "violation", "documented"), t   # every step conforms: handleSuspect is the spec's Suspect
    assert_sequencer_verdict_explained(t)
    on = set(result["agree_on"])
    assert on == set(jgroups.promised("sequencerflush")) & set(jgroups.promised("sequencer")), on
    assert not on & {"VirtualSynchrony", "FlushEventOrder"}
    layer_clean = not [v for v in h["violations"] if v["check"] in on]
    assert result["agree"] == (layer_clean == (t["verdict"] == "ok")), result
    line = re.search(r"^  agreement of history and trace verdicts: (yes|NO) \(the trace is the sequencer layer's: "
                     r"compared on ([A-Za-z, ]+)\)$", p.stdout, re.M)
    assert line and line[1] == ("yes" if result["agree"] else "NO") and set(line[2].split(", ")) == on, p.stdout


@pytest.mark.parametrize("args,msg", [
    (["--stack", "paxos"], "--stack 'paxos'"),
    (["--stack", "sequencer", "--members", "1"], "--members 1"),
    (["--stack", "sequencer", "--kill", "1"], "--kill '1'"),
    (["--stack", "sequencer", "--kill", "4@1"], "no member 4"),
    (["--stack", "sequencer", "--kill", "1@1", "--kill", "2@1", "--kill", "3@1"], "one member must survive"),
    (["--stack", "sequencer", "--senders", "2,x"], "--senders"),
    (["--stack", "sequencer", "--checker", "z3"], "--checker 'z3'"),
    (["--stack", "sequencer", "--flush", "2@1"], "has no FLUSH"),
    (["--stack", "flush", "--flush", "2@1:shut"], "--flush '2@1:shut'"),
    (["--stack", "flush", "--flush", "4@1"], "no member 4"),
    (["--stack", "flush", "--flush", "2@1", "--flush", "2@3"], "one flush per member"),
])
def test_bad_options_exit_2_with_one_line_and_create_nothing(tmp_path, args, msg):
    out = tmp_path / "never"
    p = gc("jgroups", "run", *args, "--out", str(out), timeout=60)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stdout == "" and len(p.stderr.strip().splitlines()) == 1 and msg in p.stderr, p.stderr
    assert not out.exists()


@pytest.mark.parametrize("faults", ["", "crash=1@20"])
def test_check_reads_the_run_folder_and_compares_history_and_trace(tmp_path, faults):
    """The judging half of the command on a folder of the layout it writes
    (history/ and traces/), filled by our simulator: the history verdict,
    the replay's trace verdict, and their agreement."""
    proto = protocols.get("sequencer")
    recs, _ = proto.simulate(0, faults, dict(proto.default_options))
    tracefile.write(tmp_path / "traces" / "run.ndjson", recs)
    tracefile.write(tmp_path / "history" / "run.ndjson", history.from_trace(recs))
    r = jgroups.check(tmp_path, "sequencer")
    assert r["trace"]["verdict"] in ("ok", "violation", "documented") and r["history"]["verdict"] in ("ok", "violation")
    assert r["agree"] == ((r["history"]["verdict"] == "ok") == (r["trace"]["verdict"] == "ok"))
    assert r["agree"], r
    assert r["history"]["crashed"] == ([1] if faults else [])


def test_sequencer_flush_agreement_compares_the_sequencer_layers_checks_only(tmp_path):
    """On SEQUENCER + FLUSH the trace is SEQUENCER's alone: a history that
    breaks only FLUSH's FlushEventOrder fails the run but still agrees with
    a conforming trace; one that breaks SenderFIFO, a SEQUENCER-layer check,
    does not."""
    proto = protocols.get("sequencer")
    recs, _ = proto.simulate(0, "", dict(proto.default_options))
    tracefile.write(tmp_path / "traces" / "run.ndjson", recs)
    h = history.from_trace(recs)
    # member 2 unblocks with no block before it: FLUSH's event order only
    flush_only = h[:-1] + [{"kind": "event", "name": "unblock", "nid": 2, "params": {}, "clock": h[-2]["clock"]},
                           h[-1]]
    tracefile.write(tmp_path / "history" / "run.ndjson", flush_only)
    r = jgroups.check(tmp_path, "sequencerflush")
    assert r["trace"]["verdict"] == "ok" and r["history"]["verdict"] == "violation", r
    assert {v["check"] for v in r["history"]["violations"]} == {"FlushEventOrder"} and r["agree"], r
    # member 2 delivers two messages of one sender the other way round
    i, j = [k for k, e in enumerate(h) if e.get("name") == "deliver" and e["nid"] == 2
            and e["params"]["id"][0] == 1][:2]
    h[i]["params"], h[j]["params"] = h[j]["params"], h[i]["params"]
    tracefile.write(tmp_path / "history" / "run.ndjson", h)
    r = jgroups.check(tmp_path, "sequencerflush")
    assert "SenderFIFO" in {v["check"] for v in r["history"]["violations"]} and r["agree"] is False, r


def test_missing_jgroups_exits_3_naming_make_jgroups(tmp_path, monkeypatch):
    from typer.testing import CliRunner
    from groupcheck.cli.main import app
    monkeypatch.setattr(jgroups, "JAR", tmp_path / "absent.jar")
    out = tmp_path / "never"
    r = CliRunner().invoke(app, ["jgroups", "run", "--stack", "sequencer", "--out", str(out)])
    assert r.exit_code == 3 and "make jgroups" in r.output and len(r.output.strip().splitlines()) == 1, r.output
    assert not out.exists()


@pytest.mark.slow
@needs_jgroups
def test_sigterm_ends_every_jvm(tmp_path):
    """SIGTERM while the members multicast: exit 128 + 15 with one line, and
    every JVM the command started has ended."""
    import signal
    import time
    out = tmp_path / "run"
    p = subprocess.Popen([sys.executable, "-m", "groupcheck.cli.main", "jgroups", "run", "--stack", "sequencer",
                          "--messages", "2000", "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and not (out / "node-3.ready").exists():
        time.sleep(0.1)
    assert (out / "node-3.ready").exists(), p.communicate(timeout=60)
    pids = json.loads((out / "cluster.json").read_text())["pids"]
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 128 + signal.SIGTERM and "interrupted (SIGTERM); every JVM was killed" in err, err
    for pid in pids.values():
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_write_trace_merges_the_members_steps_by_stamp_as_it_reads_them(tmp_path):
    """The members' step files merge by stamp (each is in stamp order), a
    kill becomes a Crash at its time and a view a NewView before its first
    InstallView; a file out of stamp order is an error, not a trace."""
    def steps(k, rows):
        (tmp_path / f"node-{k}.steps").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    send = lambda ts, k, q: {"ts": ts, "name": "Send", "nid": k, "msg": {"type": "FORWARD", "sender": k, "seqno": q},
                             "state": {"sent": q}}
    view = {"ts": 40, "name": "InstallView", "nid": 2, "state": {"vid": 2, "recv": {}}, "view": [2]}
    steps(1, [send(10, 1, 1), send(30, 1, 2)])
    suspect = {"ts": 38, "name": "Suspect", "nid": 2, "params": {"c": 1}, "state": {}}
    steps(2, [send(20, 2, 1), suspect, view])
    path = jgroups.write_trace(tmp_path, "r", 2, 2, {1: 35e-6}, quiescent=True)
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    assert recs[0]["constants"] == {"N": 2, "MaxSeq": 2, "MaxCrashes": 1, **jgroups.JGROUPS_VARIANTS}
    assert [(r.get("name"), r.get("nid")) for r in recs[1:-1]] == [
        ("Send", 1), ("Send", 2), ("Send", 1), ("Crash", 1), ("Suspect", 2), ("NewView", None), ("InstallView", 2)]
    assert [r["clock"] for r in recs[1:-1]] == [0.0, 1e-05, 2e-05, 2.5e-05, 2.8e-05, 3e-05, 3e-05]
    assert recs[-1]["clock"] == 3e-05
    steps(1, [send(30, 1, 1), send(10, 1, 2)])
    with pytest.raises(jgroups.JGroupsError, match="stamped 10 after one stamped 30"):
        jgroups.write_trace(tmp_path, "r", 2, 2, {}, quiescent=True)


def test_the_jgroups_step_of_a_sequencer_record_is_named():
    """A record the replay stops at, or where a property broke, names
    SEQUENCER's step in JGroups 2.12.2; a delivery breaking SenderFIFO names
    JGRP-1449's mechanism."""
    suspect = {"name": "Suspect", "nid": 2, "params": {"c": 1}}
    assert jgroups.jgroups_step(suspect).startswith("JGroups's SEQUENCER.handleSuspect on the failure detector's "
                                                    "suspicion of member 1")
    late = {"name": "RecvData", "nid": 3, "params": {"p": 2}, "msg": {"type": "DATA", "sender": 2, "seqno": 7}}
    assert "JGRP-1449" in jgroups.jgroups_step(late, "SenderFIFO") and "2.7" in jgroups.jgroups_step(late, "SenderFIFO")
    assert "JGRP-1449" not in jgroups.jgroups_step(late, "TotalOrder")
    assert jgroups.jgroups_step({"name": "Crash", "nid": 1, "params": {}}) is None


def test_shuffle_puts_jgroups_shuffle_right_below_nakack():
    """SequencerOrderTest's SHUFFLE sits directly below NAKACK, reordering
    what comes up; without --shuffle there is none."""
    import xml.etree.ElementTree as ET
    names = lambda xml: [e.tag.split("}")[-1] for e in ET.fromstring(xml)]
    stack = jgroups.STACKS["sequencer"]
    plain, shuffled = names(jgroups.config(1, [1, 2], stack)), names(jgroups.config(1, [1, 2], stack, shuffle=True))
    assert "SHUFFLE" not in plain
    assert shuffled.index("SHUFFLE") + 1 == shuffled.index("pbcast.NAKACK") and len(shuffled) == len(plain) + 1


def test_the_step_behind_a_record_is_the_protocols_own(monkeypatch, tmp_path):
    """A rejected record is explained by its protocol's entry of
    STEP_BEHIND (STABLE's, FLUSH's), any other protocol by SEQUENCER's."""
    seen = []
    monkeypatch.setattr(jgroups, "stable_step", lambda ev: seen.append(("stable", ev)) or "S")
    monkeypatch.setattr(jgroups, "flush_step", lambda evs, at, notes: seen.append(("flush", at, notes.name)) or "F")
    monkeypatch.setattr(jgroups, "jgroups_step", lambda ev, prop: seen.append(("sequencer", ev, prop)) or "Q")
    evs, tdir = [{"name": "a"}, {"name": "b"}], tmp_path / "traces"
    got = [jgroups._step_behind(p, evs, 1, "TotalOrder", tdir) for p in ("stable", "flush", "sequencer")]
    assert got == ["S", "F", "Q"]
    assert seen == [("stable", evs[1]), ("flush", 1, "notes.json"), ("sequencer", evs[1], "TotalOrder")]
