"""``groupcheck cluster run`` (and ``up`` / ``kill`` / ``down`` for interactive use): the stacks as OS processes over UDP on
127.0.0.1, nodes killed with SIGKILL, the per-node traces checked
(impl/cluster.py, impl/runtime.py, the check conformance/cluster.py; docs/impl.md)."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import List, Optional

import typer

from .findings import allow_option, expect_option, Gate, known_option
from .render import at_least, console, ENVIRONMENT, fail, FORCE, out_dir, positive


app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Run the stacks as a real cluster on 127.0.0.1 (UDP, HMAC, SIGKILL) and check its traces.")


MEMBERSHIPS = ("oracle", "raincore")      # who decides the views: the runner, or the Raincore ring
HOG = typer.Option(False, "--hog", help="a CPU-bound busy loop per core beside the nodes for the whole run "
                   "(the stress regime: suspicions of live nodes, late timers)")


def _kill(spec: str) -> tuple[int, float]:
    """NODE@SECONDS: the fault grammar's NODE@TIME (impl/faults.py), in seconds."""
    from groupcheck.impl.faults import node_at
    try:
        return node_at(f"--kill {spec}", spec, unit=1.0)
    except ValueError as e:
        fail(f"{e}, e.g. 1@1.5 (seconds)")


@app.command()
def run(
    protocol: str = typer.Option(..., "--protocol", help="sequencer, sequencerflush (SEQUENCER over FLUSH), raincoreflush (FLUSH over the Raincore ring: no oracle) or raincoresequencerflush (SEQUENCER over that)"),
    nodes: int = typer.Option(3, "--nodes", callback=at_least(2), help="node processes (members 1..N; 1 is the coordinator)"),
    messages: int = typer.Option(100, "--messages", callback=at_least(0), help="multicasts each node makes"),
    kill: Optional[List[str]] = typer.Option(None, "--kill", help="NODE@SECONDS: SIGKILL the node that long after the start (repeatable)"),
    out: Path = typer.Option(..., "--out", help="folder for the traces, node configs and logs"),
    rate: float = typer.Option(500.0, "--rate", callback=at_least(0), help="multicasts per second per node (0: unpaced, as fast as flow control lets each sender go)"),
    timeout: float = typer.Option(60.0, "--timeout", callback=positive, help="seconds to wait for quiescence once every sender has finished (no multicast sent for that long) and the last kill landed"),
    key_file: Optional[str] = typer.Option(None, "--key-file", help="cluster key (default: a fresh random key in OUT/cluster.key, mode 600)"),
    checker: str = typer.Option("model", "--checker", help="model (the Python replay), tlc (TLC validates the merged trace against Trace<P>.tla) or both (a disagreement fails the run)"),
    senders: Optional[str] = typer.Option(None, "--senders", help="comma-separated nodes that multicast (default: all); the others only receive"),
    membership: str = typer.Option("oracle", "--membership", help="oracle (the runner decides views) or raincore (the Raincore ring does, no oracle: --protocol flush or sequencerflush)"),
    lossy_ring: bool = typer.Option(False, "--lossy-ring", help="with --membership raincore (--protocol flush or sequencerflush): the ring is Raincore's own (spec LossyRing: a kill lands whatever the ring is doing, the token holder's too, and the token is regenerated), not the abstraction whose kill waits for the token to be elsewhere"),
    kill_holder: bool = typer.Option(False, "--kill-holder", help="with --lossy-ring: each --kill waits until its node holds the token (Eating), so the token dies with it and the ring regenerates it"),
    hog: bool = HOG,
    force: bool = FORCE,
    as_json: bool = typer.Option(False, "--json", help="the result as JSON"),
    expect: List[str] = expect_option(),
    allow: List[str] = allow_option(),
    known: Optional[bool] = known_option(),
):
    """Start the nodes, run the workload, kill as told, wait for quiescence, check the traces.
    Exit 0 when every trace conforms and the survivors' history is clean, or what breaks them is a
    documented finding (or --expect'ed); 1 otherwise."""
    from groupcheck.conformance.cluster import checkable
    from groupcheck.impl.cluster import ClusterError, Runner
    protocol = _with_membership(protocol, membership)
    kills = [_kill(k) for k in kill or []]
    try:
        who = [int(x) for x in senders.split(",")] if senders else None
    except ValueError:
        fail(f"--senders {senders!r}: expected comma-separated node numbers, e.g. 2 or 2,3")
    _key_file_or_fail(key_file)
    log = (lambda s: None) if as_json else (lambda s: console(stderr=True).print(s, markup=False))
    try:        # every option judged before OUT is created
        runner = Runner(protocol, nodes, messages, kills, out, rate=rate, timeout=timeout, key_file=key_file,
                        log=log, checker=checker, senders=who, lossy_ring=lossy_ring, kill_holder=kill_holder, hog=hog)
        checkable(protocol, checker)
    except ClusterError as e:
        fail(str(e))
    result = _run_and_keep(runner, out, force, "cluster run", hog=hog)
    _report(result, protocol, out, as_json, Gate(expect, known, allow))


@app.command()
def chaos(
    protocol: str = typer.Option(..., "--protocol", help="sequencer, sequencerflush (SEQUENCER over FLUSH); with --membership raincore: flush or sequencerflush over the ring"),
    out: Path = typer.Option(..., "--out", help="folder for schedule.json, the traces, logs and result.json"),
    seconds: float = typer.Option(10.0, "--seconds", callback=positive, help="the schedule's length: every kill and pause lands within it, and the workload lasts as long"),
    seed: int = typer.Option(0, "--seed", help="the schedule, and each node's network faults, are this seed's"),
    nodes: int = typer.Option(3, "--nodes", callback=at_least(2), help="node processes (members 1..N; 1 is the coordinator)"),
    faults: str = typer.Option("", "--faults", help="network faults on the real datagrams, the fault grammar's loss=P,dup=P,reorder=MS,truncate=P"),
    hog: bool = HOG,
    rate: float = typer.Option(100.0, "--rate", callback=positive, help="multicasts per second per node"),
    timeout: float = typer.Option(30.0, "--timeout", callback=positive, help="seconds to wait for quiescence after the schedule"),
    key_file: Optional[str] = typer.Option(None, "--key-file", help="cluster key (default: a fresh random key in OUT/cluster.key, mode 600)"),
    checker: str = typer.Option("model", "--checker", help="model, tlc or both, as for `cluster run`"),
    membership: str = typer.Option("oracle", "--membership", help="oracle or raincore, as for `cluster run`"),
    lossy_ring: bool = typer.Option(False, "--lossy-ring", help="with --membership raincore (--protocol flush or sequencerflush): Raincore's own ring, whose token holder a kill may hit"),
    rejoin: bool = typer.Option(False, "--rejoin", help="with --membership raincore: a killed node may come back as a new node (a new id asking to join by the ring's 911)"),
    stalls: bool = typer.Option(False, "--stalls", help="with --membership raincore: every pause under half the failure detector's time-out (no false suspicion); the oracle stacks' pauses are stalls anyway"),
    suspicions: Optional[int] = typer.Option(None, "--suspicions", min=0, help="with --membership raincore: at most this many pauses outlast the failure detector's time-out, spread over the run, the others stalls (default: every pause; each such pause costs the ring a node, so a long soak keeps this small)"),
    force: bool = FORCE,
    as_json: bool = typer.Option(False, "--json", help="the result as JSON (progress still goes to stderr)"),
    expect: List[str] = expect_option(),
    allow: List[str] = allow_option(),
    known: Optional[bool] = known_option(),
):
    """A seeded soak: kills (the coordinator, the ring's token holder, any member; never the last) and
    SIGSTOP pauses drawn from --seed over --seconds (OUT/schedule.json), the --faults on every datagram,
    optionally a CPU hog; then the run is checked as `cluster run`'s and exits by the same rule."""
    from groupcheck.conformance.cluster import checkable
    from groupcheck.impl import chaos as chaos_mod, protocols
    from groupcheck.impl.cluster import ClusterError
    protocol = _with_membership(protocol, membership)
    _key_file_or_fail(key_file)
    say = console(stderr=True)
    try:        # every option judged before OUT is created
        if getattr(protocols.find(protocol), "cluster", None) is None:
            raise ClusterError(protocols.not_a_cluster_protocol(protocol))
        if rejoin and not protocols.find(protocol).cluster.joins:
            raise ClusterError("--rejoin: over the ring only (--membership raincore): the oracle has no join")
        soonest, surely = chaos_mod.suspicion_after(protocol, lossy_ring) or (None, None)
        plan = chaos_mod.schedule(seed, seconds, nodes, suspect=soonest, surely=surely, holder=lossy_ring,
                                  rejoin=rejoin, stalls=stalls, suspicions=suspicions)
        runner = chaos_mod.ChaosRunner(protocol, nodes, math.ceil(seconds * rate), plan, out, seed=seed, rate=rate,
                                       timeout=timeout, key_file=key_file, checker=checker,
                                       lossy_ring=lossy_ring, faults=faults, hog=hog, rejoin=rejoin,
                                       log=lambda s: say.print(s, markup=False))
        checkable(protocol, checker)
    except (ClusterError, ValueError) as e:
        fail(str(e))
    result = _run_and_keep(runner, out, force, "cluster chaos", progress=lambda s: runner.log(f"chaos: {s}"),
                           seed=seed, faults=faults, hog=hog, schedule=runner.done)
    if not as_json:
        skipped = sum("skipped" in a for a in runner.done)
        print(f"chaos seed {seed}: {len(runner.done) - skipped} of {len(plan)} actions played"
              + (f", {skipped} skipped (their node was dead)" if skipped else "") + f" ({out}/schedule.json)")
    _report(result, protocol, out, as_json, Gate(expect, known, allow))


def _with_membership(protocol: str, membership: str) -> str:
    """The protocol the nodes run: with --membership raincore, the named one
    over the Raincore ring (no oracle)."""
    from groupcheck.impl import protocols
    if membership not in MEMBERSHIPS:
        fail(f"--membership {membership!r}: {' or '.join(MEMBERSHIPS)}")
    if membership == "oracle":
        return protocol
    over_ring = getattr(protocols.find(protocol), "over_ring", None)
    if over_ring is None:
        fail(f"--membership raincore: --protocol flush or sequencerflush (SEQUENCER over FLUSH) over the "
             f"ring; {protocol!r} has no FLUSH to take the ring's views")
    return over_ring


def _run_and_keep(runner, out: Path, force: bool, command: str, progress=None, **more) -> dict:
    """Create OUT, run, judge the run (conformance/cluster.py), and keep the
    result beside the traces and history (result.json, as `cluster down`
    writes it): the run's folder describes itself.  ``progress``: lines
    while the check runs; ``more``: what the command adds to the result."""
    from groupcheck.conformance.cluster import judged
    from groupcheck.impl.auth import KeyError_
    from groupcheck.impl.cluster import ClusterError, Interrupted
    out_dir(str(out), command=command, force=force)
    try:
        res = judged(runner, progress)
    except (ClusterError, KeyError_) as e:
        fail(str(e))
    except OSError as e:        # OUT was writable: ports, processes, the disk
        fail(str(e), ENVIRONMENT)
    except Interrupted as e:
        fail(f"interrupted ({e}); every node process was killed", 128 + signal.Signals[str(e)])
    result = {**res.to_json(), **more}
    (out / "result.json").write_text(json.dumps(result, indent=2, default=str), encoding="utf-8")
    return result


def _key_file_or_fail(key_file: Optional[str]) -> None:
    if key_file is not None and not Path(key_file).is_file():
        fail(f"--key-file {key_file}: no such file (leave it out for a fresh key in OUT/cluster.key)")


def _report(r: dict, protocol: str, out: Path, as_json: bool, gate: Gate) -> None:
    """Print a run's result (Result.to_json(), or its JSON read back by
    ``down``) and exit by the one rule (cli/findings.py): 0 when it is ok and
    quiescent, or every violation is accepted."""
    replay = {**r, "protocol": protocol}
    # the survivors' history violations, one verdict row each (as `history` judges them)
    # (the black-box view of the same run: a documented finding only where the violation's own
    # witness, read off the run's trace, has the finding's shape: conformance/cluster.py)
    found = [{**v, "verdict": "documented" if v.get("finding") else "violation", "protocol": protocol,
              "property": v["check"]} for v in r["history"]]
    rows = [replay] + found
    tlc_ok = r.get("tlc") is None or (r["tlc"]["ok"] and r["tlc"].get("agree", True))
    unexpected = (not tlc_ok or gate.unexpected(replay) or any(gate.unexpected(v) for v in found))
    if as_json:
        print(json.dumps(r, indent=2, default=str))
    else:
        # the first word is the run's whole verdict: never "ok" unless it is quiescent and checked
        word = ("ok" if r["ok"] and r["quiescent"] else
                r["verdict"] if r["verdict"] not in ("ok", "documented") else
                "violation" if any(v["verdict"] == "violation" for v in found) else
                "disagreement" if not tlc_ok else "documented")
        # the gate's note on the replay's row, where it says something the word does not: a
        # violation --expect'ed; never on a violation the history adds (its lines say which)
        note = gate.note(replay)
        label = word + (note if word == r["verdict"] and not (word == "documented" and
                                                              note == " (documented finding)") else "")
        delivered = {int(k): v for k, v in r["delivered"].items()}      # keys are strings once read back
        print(f"{r['run_id']}: {label}; quiescent {r['quiescent']}; killed {r['killed'] or 'none'}; "
              f"delivered {delivered}; {r['seconds']} s")
        if r["reason"]:
            print(f"  replay: {r['reason']}")
        for v in found:
            print(f"  history {v['check']}{gate.note(v)}: {v['text']}")
        if r.get("tlc") is not None:
            t = r["tlc"]
            print(f"  tlc: {'accepts' if t['ok'] else 'rejects at event ' + str(t['first_unmatched'])} "
                  f"({t['events']} events, {t['seconds']} s)"
                  + ("" if t.get("agree", True) else "; TOOL FAILURE: TLC and the model replay disagree"))
            if t.get("explain"):
                print("    " + t["explain"].replace("\n", "\n    "))
        print(f"  traces: {out}/traces (groupcheck conform {out}/traces)")
    for m in gate.missing(rows):
        console(stderr=True).print(m, markup=False)
    raise typer.Exit(gate.exit_code(rows, unexpected))


def _cluster_json(out: Path) -> dict:
    try:
        return json.loads((out / "cluster.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        fail(f"{out}/cluster.json: no cluster here ({e}); start one with groupcheck cluster up")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@app.command()
def up(
    protocol: str = typer.Option(..., "--protocol", help="sequencer, sequencerflush (SEQUENCER over FLUSH), raincoreflush (FLUSH over the Raincore ring: no oracle) or raincoresequencerflush (SEQUENCER over that)"),
    nodes: int = typer.Option(3, "--nodes", callback=at_least(2), help="node processes (members 1..N; 1 is the coordinator)"),
    messages: int = typer.Option(1000, "--messages", callback=at_least(0), help="multicasts each node makes"),
    out: Path = typer.Option(..., "--out", help="folder for the traces, node configs, logs and the result"),
    rate: float = typer.Option(100.0, "--rate", callback=at_least(0), help="multicasts per second per node (0: unpaced)"),
    timeout: float = typer.Option(60.0, "--timeout", callback=positive, help="seconds `down` waits for quiescence"),
    key_file: Optional[str] = typer.Option(None, "--key-file", help="cluster key (default: a fresh random key in OUT/cluster.key, mode 600)"),
    checker: str = typer.Option("model", "--checker", help="what `down` checks the traces with: model, tlc or both"),
    force: bool = FORCE,
):
    """Start a cluster in the background and return: the nodes run their workload until `cluster down OUT`.
    Any node that dies meanwhile (`cluster kill OUT NODE`, or kill -9 from your shell) is a crash the runner
    reports to the survivors as the view oracle."""
    from groupcheck.impl.protocols import cluster_protocols, not_a_cluster_protocol
    if protocol not in cluster_protocols():
        fail(not_a_cluster_protocol(protocol))
    if checker not in ("model", "tlc", "both"):
        fail(f"--checker {checker!r}: model, tlc or both")
    from groupcheck.conformance.cluster import checkable
    from groupcheck.impl.cluster import ClusterError
    try:
        checkable(protocol, checker)
    except ClusterError as e:
        fail(str(e))
    _key_file_or_fail(key_file)
    if (out / "cluster.json").exists() and _alive(_cluster_json(out).get("runner", 0) or 0) \
            and not (out / "result.json").exists():
        fail(f"{out}: a cluster is already up here (groupcheck cluster down {out})")
    out_dir(str(out), command="cluster up", force=force)
    (out / "up.json").write_text(json.dumps({"protocol": protocol, "nodes": nodes, "messages": messages,
                                            "rate": rate, "timeout": timeout, "key_file": key_file,
                                            "checker": checker}), encoding="utf-8")
    log = open(out / "supervisor.log", "wb")
    p = subprocess.Popen([sys.executable, "-m", "groupcheck.conformance.cluster", str(out)], stdout=log,
                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 40
    while not (out / "ready").exists():
        if p.poll() is not None or time.monotonic() > deadline:
            if p.poll() is None:
                p.kill()
            why = (out / "result.json").read_text(encoding="utf-8") if (out / "result.json").exists() else ""
            fail(f"the cluster did not come up {why}; see {out}/supervisor.log:\n"
                 + (out / "supervisor.log").read_text(encoding="utf-8", errors="replace")[-2000:], ENVIRONMENT)
        time.sleep(0.1)
    info = _cluster_json(out)
    print(f"cluster up: {nodes} {protocol} nodes on 127.0.0.1, supervisor pid {p.pid}, node pids "
          + ", ".join(f"{n}={pid}" for n, pid in sorted(info["pids"].items(), key=lambda kv: int(kv[0]))))
    print(f"  kill a node: groupcheck cluster kill {out} NODE; stop and check: groupcheck cluster down {out}")


@app.command(name="kill")
def kill_node(
    out: Path = typer.Argument(..., help="the folder given to `cluster up`"),
    node: int = typer.Argument(..., help="the node to SIGKILL"),
):
    """SIGKILL one node of a cluster started with `cluster up` (the runner sees it die and acts as view oracle)."""
    pids = _cluster_json(out)["pids"]
    if str(node) not in pids:
        fail(f"no node {node} in {out} (nodes: {', '.join(sorted(pids, key=int))})")
    try:
        os.kill(int(pids[str(node)]), signal.SIGKILL)
    except ProcessLookupError:
        fail(f"node {node} (pid {pids[str(node)]}) is not running")
    print(f"node {node} (pid {pids[str(node)]}) killed with SIGKILL{_into_workload(out)}")


def _into_workload(out: Path) -> str:
    """Where in the workload a kill landed: OUT/ready is written when the
    nodes start it, OUT/up.json holds its size; a kill after its nominal
    end finds little in flight (it tests the view change, not a loss)."""
    try:
        up = json.loads((out / "up.json").read_text(encoding="utf-8"))
        since = time.time() - (out / "ready").stat().st_mtime
    except (OSError, ValueError):
        return ""
    rate, messages = float(up.get("rate") or 0), int(up.get("messages") or 0)
    if not rate:
        return f", {since:.1f} s after the workload started (unpaced)"
    length = messages / rate
    if since <= length:
        return f", {since:.1f} s into the workload ({messages} multicasts per node at {rate:g}/s: about {length:.0f} s)"
    return (f", {since:.1f} s after the workload started: past its nominal end ({length:.0f} s), so little was in "
            "flight (kill sooner after `cluster up`, or give it more --messages)")


@app.command()
def down(
    out: Path = typer.Argument(..., help="the folder given to `cluster up`"),
    as_json: bool = typer.Option(False, "--json", help="the result as JSON"),
    expect: List[str] = expect_option(),
    allow: List[str] = allow_option(),
    known: Optional[bool] = known_option(),
):
    """Stop a cluster started with `cluster up`: wait for quiescence, stop the nodes, check the traces.
    Exit as `cluster run`."""
    info = _cluster_json(out)
    pid = int(info["runner"])
    up_opts = json.loads((out / "up.json").read_text(encoding="utf-8"))
    if _alive(pid) and not (out / "result.json").exists():
        os.kill(pid, signal.SIGUSR1)
    deadline = time.monotonic() + float(up_opts.get("timeout", 60)) + 60
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _alive(pid):
        os.kill(pid, signal.SIGTERM)        # the supervisor then kills every node
        fail(f"the cluster did not stop in time; it was terminated (see {out}/supervisor.log)")
    try:
        r = json.loads((out / "result.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        fail(f"{out}: the supervisor left no result (see {out}/supervisor.log)")
    if "error" in r:
        fail(f"the cluster failed: {r['error']} (see {out}/supervisor.log)")
    _report(r, up_opts["protocol"], out, as_json, Gate(expect, known, allow))
