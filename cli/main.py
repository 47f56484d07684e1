"""The ``groupcheck`` command (typer for sub-commands and options, rich for
tables and progress).  Every command has ``--json`` for machines.

Exit codes (README "Exit codes"): 0 every result as expected, 1 an unexpected
result, 2 a usage or input error, 3 the environment (no Java, say).  Errors
are one line naming the problem and the fix, never a traceback.  SIGTERM and
SIGINT end every child JVM and remove the temporary folders before exiting
(``_on_signal``)."""

from __future__ import annotations

import inspect
import json
import logging
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from statistics import median
from typing import List, Optional

import typer

from .findings import allow_option, expect_option, Gate, known_option, run_lines, tally_line, violated
from .render import (at_least, check_table, console, counterexample_steps, ENVIRONMENT, fail, need_java,
                     out_dir, progress, spark_session, table, trace_files_or_fail)


app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None, pretty_exceptions_enable=False,
                  help="Model-check, cross-check and audit group-communication protocols.\n\n"
                       "Engines: commands on single traces (simulate, conform) run in this process "
                       "(--engine local); commands whose data is a dataset (traces, audit's "
                       "conformance stage) run on Spark (--engine spark, local[*] unless --master).\n\n"
                       "Exit codes: 0 as expected (documented findings included), 1 an unexpected result, 2 a usage or input "
                       "error, 3 the environment (e.g. Java missing).")

JSON_HELP = "print JSON for machines instead of tables"


def _version(value: bool):
    if value:
        try:
            v = version("groupcheck")
        except PackageNotFoundError:
            v = "unknown (not installed)"
        print(f"groupcheck {v}")
        raise typer.Exit(0)


@app.callback()
def _root(_v: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                  help="print the version and exit")):
    pass


def _entries(protocols: Optional[List[str]], model: Optional[str]):
    from groupcheck.model import manifest
    try:
        return manifest.select(protocols, model)
    except manifest.ManifestError as e:
        if model is not None:
            try:
                names = sorted({e2.name for e2 in manifest.select(protocols, None)})
                fail(f"--model {model!r}: no such model; models: {', '.join(names)}")
            except manifest.ManifestError:
                pass
        fail(str(e))


def _own_entries(targets: List[str], model: Optional[str], expect: Optional[str]):
    """Packaged protocols by name; a user's spec by path: a folder with a
    manifest.json, or a .tla file (with its .cfg beside it) and ``--expect``."""
    from groupcheck.model import manifest
    paths = [t for t in targets if os.sep in t or t.endswith(".tla") or (Path(t) / "manifest.json").is_file()]
    names = [t for t in targets if t not in paths]
    entries = _entries(names, model) if names else []
    for t in paths:
        p = Path(t)
        if not p.exists():
            fail(f"{t}: no such file or folder")
        if p.is_dir():
            try:
                own = manifest.load_dir(p)
            except manifest.ManifestError as e:
                fail(str(e))
            if model is not None:
                own = [e for e in own if e.name == model]
                if not own:
                    fail(f"--model {model!r}: not in {p}/manifest.json")
            entries += own
        else:
            if p.suffix != ".tla" or not p.with_suffix(".cfg").is_file():
                fail(f"{t}: give a spec folder with manifest.json, or a .tla file with a .cfg of the same name")
            if not expect:
                fail(f"{t}: say what TLC must report with --expect ok or --expect PROPERTY")
            entries.append(manifest.ModelEntry(
                protocol=p.parent.resolve().name.lower(), spec_dir=p.parent.resolve(), name=p.stem,
                module=p.stem, cfg=p.with_suffix(".cfg").name, expected=expect, distinct_states=None,
                compare=False, timeout=3600, description=f"{p} checked with --expect {expect}"))
    if expect and not paths:
        fail("--expect applies to a .tla file given by path")
    return entries


def run_checks(entries, workers: int, quiet: bool, as_json: bool = False):
    from groupcheck.model.manifest import check
    outcomes = []
    keys = [f"tlc/{e.protocol}/{e.name}" for e in entries]
    with progress("model checking", quiet=quiet, as_json=as_json, costs=_tlc_costs(entries, keys)) as prog:
        for e, key in zip(entries, keys):
            prog.start(key)
            prog.update(f"TLC {e.protocol}/{e.name}")
            o = check(e, workers=workers)
            outcomes.append(o)
            prog.finished(f"TLC {e.protocol}/{e.name}: {o.observed} "
                          f"({'as expected' if o.matches_expectation else 'UNEXPECTED: expected ' + str(o.entry.expected)})",
                          key=key)
    return outcomes


def _tlc_costs(entries, keys) -> dict:
    """Each model's estimated seconds: its seconds in the audit's cost table,
    else (a model the default audit skips, or one of your own) its pinned
    distinct states at the table's median seconds per state, else the
    median of its kind (conformance/audit/stages.py ``plan_costs``)."""
    from groupcheck.conformance.audit.stages import COSTS, plan_costs
    table = json.loads(COSTS.read_text(encoding="utf-8"))["seconds"]
    known = [(table[k], e.distinct_states) for e, k in zip(entries, keys) if k in table and e.distinct_states]
    base = min((sec for sec, _ in known), default=0.0)          # a JVM's start and TLC's set-up
    per_state = [(sec - base) / n for sec, n in known if n >= 10_000]
    rate = median(per_state) if per_state else None
    fallback = plan_costs(keys, 1, table)
    return {k: table[k] if k in table else base + e.distinct_states * rate if rate and e.distinct_states
            else fallback[k] for e, k in zip(entries, keys)}


@app.command()
def check(
    protocols: Optional[List[str]] = typer.Argument(
        None, help="protocols (default: every spec with a manifest), or PATHs of your own: "
                   "a spec folder with a manifest.json, or a .tla file with its .cfg (then --expect)"),
    model: Optional[str] = typer.Option(None, "--model", help="only the manifest model with this name"),
    expect: Optional[str] = typer.Option(None, "--expect", help="for a .tla PATH: ok, or the property TLC must find violated"),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    workers: int = typer.Option(1, "--workers", callback=at_least(1), help="TLC worker threads"),
):
    """Run TLC on every manifest model and compare with its expectation."""
    entries = _own_entries(protocols or [], model, expect) if protocols else _entries(None, model)
    need_java()
    if protocols:       # a PATH of the user's own: say which folder was checked (stderr, also with --json)
        folders = sorted({str(e.spec_dir) for e in entries})
        console(stderr=True).print(f"checking {len(entries)} model(s) in {', '.join(folders)}", markup=False)
    outcomes = run_checks(entries, workers, quiet=False, as_json=as_json)      # progress on stderr
    rows = [o.to_json() for o in outcomes]
    if as_json:
        print(json.dumps(rows, indent=2))
    else:
        out = console()
        out.print(check_table(rows))
        for o in outcomes:
            r = o.result
            if r.counterexample:
                out.print(f"\n[bold]{o.entry.protocol}/{o.entry.name}[/]: {o.observed} violated "
                          f"({'expected' if o.matches_expectation else 'UNEXPECTED'}), "
                          f"counterexample of {len(r.counterexample)} states:")
                for line in counterexample_steps([(s.action, s.state) for s in r.counterexample]):
                    out.print(line, markup=False)
            if r.error_message and r.outcome in ("error", "timeout"):
                loc = f" at {r.error_location}" if r.error_location else ""
                out.print(f"\n[red]{o.entry.protocol}/{o.entry.name}: {r.outcome}{loc}[/]: {r.error_message}")
    raise typer.Exit(0 if all(o.matches_expectation for o in outcomes) else 1)


@app.command()
def explore(
    protocol: str = typer.Argument(..., help="protocol name, e.g. sequencer"),
    model: Optional[str] = typer.Option(None, "--model", help="only the manifest model with this name"),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    compare_tlc: bool = typer.Option(False, "--compare-tlc", help="also dump TLC's graph and compare"),
    workers: int = typer.Option(1, "--workers", callback=at_least(1), help="TLC worker threads (with --compare-tlc)"),
    processes: int = typer.Option(1, "--processes", callback=at_least(1),
                                  help="count states with this many processes (model/parallel.py: fingerprints, "
                                       "no graph; not with --compare-tlc)"),
):
    """Run the Python explorer on manifest models (compare:true ones unless --model)."""
    from groupcheck.model.link import compare_entry
    entries = _entries([protocol], model)
    if model is None:
        entries = [e for e in entries if e.compare]
    if processes > 1:
        if compare_tlc:
            fail("--processes counts states by fingerprint and keeps no graph: it cannot be compared "
                 "with TLC's (drop --compare-tlc or --processes)")
        _explore_processes(entries, processes, as_json)
        return
    if compare_tlc:
        need_java()
    reports = []
    with progress("explore", total=len(entries)) as prog:
        for i, e in enumerate(entries):
            prog.update(f"explore {e.protocol}/{e.name}" + (" and TLC -dump" if compare_tlc else ""), done=i)
            r = compare_entry(e, compare_tlc=compare_tlc, workers=workers)
            reports.append(r)
            verdict = {True: "graphs equal", False: "GRAPHS DIFFER", None: "no TLC graph"}[r.graphs_equal] \
                if compare_tlc else f"{r.distinct_states:,} states"
            prog.finished(f"explore {e.protocol}/{e.name}: {verdict}", done=i + 1)
    rows = [r.to_json() for r in reports]
    if as_json:
        print(json.dumps(rows, indent=2))
    else:
        from rich.table import Table
        t = Table(title=f"groupcheck explore {protocol}")
        for c in ("model", "distinct", "TLC distinct", "graphs equal", "seconds", "TLC seconds"):
            t.add_column(c)
        for r in rows:
            t.add_row(r["model"], f"{r['distinct_states']:,}",
                      "-" if r["tlc_distinct_states"] is None else f"{r['tlc_distinct_states']:,}",
                      "-" if r["graphs_equal"] is None else str(r["graphs_equal"]),
                      f"{r['seconds']:.1f}", "-" if r["tlc_seconds"] is None else f"{r['tlc_seconds']:.1f}")
        console().print(t)
        for r in rows:
            if r["graphs_equal"] is False:
                console().print(f"{r['model']}: first difference: {json.dumps(r['first_difference'])}", markup=False)
    ok = all(r.graphs_equal is not False for r in reports)
    raise typer.Exit(0 if ok else 1)


def _explore_processes(entries, processes: int, as_json: bool) -> None:
    """``explore --processes P``: the multi-process explorer on each model,
    invariants off as the serial explorer's rows; its counts, time, each
    worker's CPU seconds and memory, and the chance of a fingerprint
    collision (docs/architecture.md)."""
    from groupcheck.model.link import build_model
    from groupcheck.model.parallel import explore_parallel
    rows = []
    with progress("explore", total=len(entries)) as prog:
        for i, e in enumerate(entries):
            prog.update(f"explore {e.protocol}/{e.name} with {processes} processes", done=i)
            t0 = time.perf_counter()
            r = explore_parallel(build_model(e), workers=processes)
            rows.append({"protocol": e.protocol, "model": e.name, "processes": processes,
                         "distinct_states": r.distinct_states, "states_generated": r.states_generated,
                         "depth": r.depth, "seconds": round(time.perf_counter() - t0, 3),
                         "worker_cpu_seconds": list(r.worker_cpu_seconds),
                         "worker_peak_mib": [round(k / 1024) for k in r.worker_peak_kib],
                         "collision_probability": r.collision_probability})
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    from rich.table import Table
    t = Table(title=f"groupcheck explore, {processes} processes")
    for c in ("model", "distinct", "generated", "depth", "seconds", "worker CPU s", "collision probability"):
        t.add_column(c)
    for r in rows:
        t.add_row(f"{r['protocol']}/{r['model']}", f"{r['distinct_states']:,}", f"{r['states_generated']:,}",
                  str(r["depth"]), f"{r['seconds']:.1f}", ", ".join(f"{c:.1f}" for c in r["worker_cpu_seconds"]),
                  f"{r['collision_probability']:.1e}")
    console().print(t)


@app.command()
def prove(
    protocol: Optional[str] = typer.Argument(None, help="protocol name (default: every protocol with proofs)"),
    variant: Optional[str] = typer.Option(None, "--variant", help="only this variant, e.g. Fixed or Flawed"),
    members: Optional[int] = typer.Option(None, "--members", callback=at_least(1), help="member count N of the encodings (default: the manifest models' size)"),
    rlimit: Optional[int] = typer.Option(None, "--rlimit", callback=at_least(1), help="z3's resource limit per query (its deterministic \"rlimit count\"; default: each variant's calibrated limit in its manifest, else 50,000,000)"),
    every: bool = typer.Option(False, "--all", help="every variant with a default N, those outside the default matrix too"),
    timeout: Optional[str] = typer.Option(None, "--timeout", hidden=True),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
):
    """Inductive invariants with z3: initiation, consecution for every action x lemma, implication of the safety property; counterexamples to induction are classified by the explorer. Exit 0 only if every fixed variant is proved and every flawed variant yields a reachable counterexample."""
    import z3     # lazy: z3 is heavy and only this path needs it
    from groupcheck.model.proofs import prover, registry     # lazy: z3 is heavy and only this path needs it
    if timeout is not None:
        fail("--timeout is gone: every query is bounded by z3's resource limit, the same on every run and "
             "machine, not by wall-clock time; give --rlimit N (z3's rlimit count per query) instead")
    try:
        encs = registry.select(protocol, variant, members, every)
    except registry.UnknownTarget as e:
        fail(str(e))
    except ValueError as e:
        fail(f"--members {members}: {e}")
    if (note := prover.solver_note()) is not None:
        console(stderr=True).print(f"warning: {note}", markup=False, soft_wrap=True)
    for e in encs:      # (each child rebuilds its encoding; this is the limit it reports)
        e.rlimit = prover.limit_of(e, rlimit)
    rows, verdicts = [], []
    t0 = time.perf_counter()
    from groupcheck.conformance.audit.stages import plan_costs
    keys = [f"prove/{e.protocol}/{e.variant}" for e in encs]    # each weighed by its seconds in the audit
    jobs = os.cpu_count() or 1
    with progress(f"prove {len(encs)} variants", as_json=as_json, costs=plan_costs(keys, jobs)) as prog:
        prog.queue(keys, jobs)
        # each variant in its own process, one per core (registry.run_isolated says why)
        try:
            for enc, qs in registry.run_isolated(encs, rlimit=rlimit, jobs=jobs, members=members):
                ok = prover.verdict(qs)
                prog.finished(f"prove {enc.protocol}/{enc.variant} (N={_members(enc)}): "
                              f"{sum(q.result == 'proved' for q in qs)} of {len(qs)} proved "
                              f"({'as expected' if ok else 'UNEXPECTED'})", key=f"prove/{enc.protocol}/{enc.variant}")
                verdicts.append((enc, ok, sum(q.seconds for q in qs), qs))
                rows += qs
        except prover.SolverHung as e:
            fail(f"{e} (the wall-clock safety net, prover.SAFETY_NET_MS)", 1)
    total = time.perf_counter() - t0
    ok_all = all(ok for _, ok, _, _ in verdicts)
    if as_json:     # a summary per variant first, then every query
        print(json.dumps({"z3": z3.get_version_string(), "calibrated_z3": prover.CALIBRATED_Z3,
                          "variants": [_prove_summary(enc, ok, secs, qs) for enc, ok, secs, qs in verdicts],
                          "queries": [q.as_json() for q in rows]}, indent=2))
        raise typer.Exit(0 if ok_all else 1)
    from rich.markup import escape
    t = table("groupcheck prove")
    t.add_column("variant", overflow="fold", min_width=10)
    t.add_column("query", overflow="fold", min_width=16)
    t.add_column("result", min_width=6)
    t.add_column("reachable", min_width=7)
    for c in ("s", "cpu s"):
        t.add_column(c, justify="right", no_wrap=True)
    style = {"proved": "green", "cti": "yellow", "unknown": "bold red"}
    for q in rows:
        reach = "" if q.result != "cti" else {True: "yes", False: "no", None: "unknown"}[q.reachable]
        t.add_row(escape(f"{q.protocol}/{q.variant} N={q.members or 'any'}"), escape(q.query),
                  f"[{style[q.result]}]{q.result}[/]" + (" (frame)" if q.by_frame else ""), reach,
                  f"{q.seconds:.3f}", f"{q.cpu_seconds:.3f}")
    console().print(t)
    for enc, ok, secs, qs in verdicts:
        v = _prove_summary(enc, ok, secs, qs)
        real = [q for q in qs if q.result == "cti" and q.reachable]
        head = (f"{enc.protocol}/{enc.variant} (N={_members(enc)}): {v['proved']}/{v['queries']} proved "
                f"({v['by_frame']} by the frame alone), {v['cti']} CTI ({v['reachable_cti']} reachable), "
                f"{v['unknown']} unknown in {secs:.1f} s; expected {v['expected']}: "
                f"{'as expected' if ok else 'UNEXPECTED'}")
        console().print(head, markup=False, soft_wrap=True)
        if real:
            q = min(real, key=lambda q: len(q.path or []))
            console().print(f"  reachable CTI of {q.query}, step {q.action}; shortest path to its pre-state:",
                            markup=False)
            console().print("    " + " -> ".join(q.path or []), markup=False)
    console().print(f"total {total:.1f} s for {len(rows)} queries", markup=False)
    raise typer.Exit(0 if ok_all else 1)


def _members(enc):
    """The N a variant's result holds for ("any": a parametric encoding)."""
    return "any" if enc.members is None else enc.members


def _prove_summary(enc, ok: bool, seconds: float, qs) -> dict:
    """One variant's counts and verdict (the human line and --json's
    ``variants``), and per safety property what was shown for which N."""
    ctis = [q for q in qs if q.result == "cti"]
    shown = ("a reachable counterexample" if enc.expect_cti else "proved") if ok else "open"
    return {"protocol": enc.protocol, "variant": enc.variant, "members": _members(enc),
            "properties": [{"property": p, "members": _members(enc), "result": shown} for p in enc.properties],
            "queries": len(qs),
            "proved": sum(q.result == "proved" for q in qs), "by_frame": sum(q.by_frame for q in qs),
            "cti": len(ctis), "reachable_cti": sum(bool(q.reachable) for q in ctis),
            "unknown": sum(q.result == "unknown" for q in qs), "seconds": round(seconds, 3),
            # z3's resource units: the limit of each query, the most one used
            "rlimit": enc.rlimit, "rlimit_used_max": max((q.rlimit for q in qs), default=0),
            "expected": "a reachable counterexample to induction" if enc.expect_cti else "every query proved",
            "as_expected": ok}


@app.command()
def audit(
    out: str = typer.Option("audit", "--out", help="output folder"),
    runs: int = typer.Option(100, "--runs", callback=at_least(1), help="simulated runs per protocol for the conformance stage"),
    seed: int = typer.Option(0, "--seed", help="seed of the first simulated run"),
    engine: str = typer.Option("spark", "--engine", help="conformance engine: spark (the default: the traces are a dataset; local[*] unless --master) or local"),
    master: Optional[str] = typer.Option(None, "--master", help="Spark master URL, e.g. spark://host:7077"),
    workers: int = typer.Option(1, "--workers", callback=at_least(1), help="TLC worker threads per model"),
    jobs: Optional[int] = typer.Option(None, "--jobs", callback=at_least(1), help="models checked at once (default: one per core)"),
    full: bool = typer.Option(False, "--full", help="also compare the models marked slow in their manifests, and TLC-validate every campaign trace"),
    protocols: Optional[List[str]] = typer.Option(None, "--protocol", help="only these protocols (repeatable)"),
    stage: Optional[List[str]] = typer.Option(None, "--stage", help="only these stages: tlc, link, conformance, history, tracevalidation, prove, cluster"),
    from_summary: Optional[Path] = typer.Option(None, "--from", help="re-render the reports from a saved summary.json instead of running the audit"),
    as_json: bool = typer.Option(False, "--json", help="print summary.json instead of the table"),
    force: bool = typer.Option(False, "--force", help="replace a non-empty --out folder that is not an earlier audit's "
                               "(an earlier audit's is replaced anyway)"),
    require_all: bool = typer.Option(False, "--require-all", help="a release gate: exit 1 also when any check was skipped (the default audit leaves the heavy and slow ones to --full)"),
):
    """The release audit: TLC on every manifest model, models compared with specs, simulated traces checked (on Spark by default); writes summary.json, junit.xml, report.md and report.html; exit 1 on any unexpected result (with --require-all, also on any skipped check)."""
    from groupcheck.conformance.audit import stages as audit_mod
    from groupcheck.conformance.audit import report
    if engine not in ("spark", "local"):
        fail(f"--engine {engine!r}: spark or local")
    stages = tuple(stage) if stage else audit_mod.STAGES
    bad_stage = set(stages) - set(audit_mod.STAGES)
    if bad_stage:
        fail(f"--stage {', '.join(sorted(bad_stage))}: unknown; stages are {', '.join(audit_mod.STAGES)}")
    _entries(protocols, None)   # validates the protocol names with a clear error
    # an earlier audit's folder is rewritten whole (one made before folders were marked: its summary and report)
    earlier = (Path(out) / "summary.json").is_file() and (Path(out) / "report.html").is_file()
    if from_summary is not None:
        try:
            checks, extra = report.checks_from_summary(json.loads(from_summary.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError) as e:
            fail(f"--from {from_summary}: not a readable summary.json ({e})")
    out_dir(out, command="audit", force=force or earlier, regenerates=True)      # after --from was read
    if from_summary is None:
        checks, extra = _run_audit(audit_mod, out, runs, seed, engine, master, workers, full, protocols,
                                   stages, jobs, quiet=False, as_json=as_json)    # progress on stderr
    _report_audit(report, out, checks, extra, as_json, require_all)


def _run_audit(audit_mod, out, runs, seed, engine, master, workers, full, protocols, stages, jobs, quiet,
               as_json=False):
    if {"tlc", "link", "tracevalidation"} & set(stages) or engine == "spark":
        need_java()
    if engine == "spark" and {"conformance", "history"} & set(stages):
        spark_session(master)
    fresh = [p for p in (Path(out) / "traces",) if not p.exists()]     # what this run creates
    try:
        with progress("audit", quiet=quiet, as_json=as_json) as prog:
            def on_progress(what: str, done: int, total: int, verdict: Optional[str] = None, *,
                            key: Optional[str] = None, plan: Optional[dict] = None,
                            started: Optional[str] = None, queue=None) -> None:
                if _SIGNALLED:      # a stage that caught the signal's unwinding as its own failure: stop
                    raise SystemExit(128 + _SIGNALLED)
                if plan is not None:            # the checks that run, each with its estimated cost
                    prog.plan(plan)
                if queue is not None:           # a pool's checks, in the order they start, and how many at once
                    prog.queue(*queue)
                if started is not None:
                    prog.start(started)
                if verdict is None:             # what starts now
                    prog.update(what, done=done, total=total)
                else:                           # a check finished, with its verdict
                    prog.finished(f"{what}: {verdict}", done=done, key=key)

            checks, extra = audit_mod.run(out, runs=runs, seed=seed, engine=engine, master=master,
                                          workers=workers, full=full, protocols_=protocols, stages=stages,
                                          progress=on_progress, jobs=jobs)
    except BaseException:
        if _SIGNALLED:      # interrupted: no partial traces left behind
            for p in fresh:
                shutil.rmtree(p, ignore_errors=True)
        raise
    if _SIGNALLED:
        raise SystemExit(128 + _SIGNALLED)
    return checks, extra


def _report_audit(report, out, checks, extra, as_json=False, require_all=False):
    paths = report.write_all(out, checks, extra)
    step = os.environ.get("GITHUB_STEP_SUMMARY")
    if step:    # chooses where the Markdown goes; the verdict is the same either way
        with open(step, "a", encoding="utf-8") as f:
            f.write(paths["report.md"].read_text(encoding="utf-8"))
    bad = [c for c in checks if not c.as_expected]
    gate = report.skipped_line(checks) if require_all else None     # --require-all: a skip fails too
    if as_json:
        print(paths["summary.json"].read_text(encoding="utf-8"), end="")
        if gate:
            print(gate, file=sys.stderr)
        raise typer.Exit(1 if bad or gate else 0)
    from rich.markup import escape
    t = table("groupcheck audit")
    for c in ("check", "expected", "observed", "s", "result"):
        t.add_column(c, justify="right" if c == "s" else "left", overflow="fold", min_width=5 if c == "s" else 10)
    style = {"pass": "green", "finding": "yellow", "skipped": "dim", "unexpected": "bold red"}
    for c in checks:
        t.add_row(escape(c.id), escape(c.expected), escape(c.observed), f"{c.seconds:.1f}",
                  f"[{style[c.verdict]}]{report.VERDICT_TEXT[c.verdict]}[/]")
    console().print(t)
    console().print("reports: " + ", ".join(str(p) for p in paths.values()), markup=False)
    for c in bad:
        console().print(f"UNEXPECTED {c.id}: expected {c.expected}, observed {c.observed}"
                        + (f"\n  {c.detail}" if c.detail else ""), markup=False)
    # the last lines: the verdict, what was checked and skipped, and the gate's line
    # (soft_wrap: a line stays one line, however long, for logs and greps)
    console().print(report.banner(checks), markup=False, soft_wrap=True)
    for line in report.coverage_lines(checks, extra):
        console().print(line, markup=False, soft_wrap=True)
    if gate:
        console().print(gate, markup=False, soft_wrap=True)
    raise typer.Exit(1 if bad or gate else 0)


def _options(pairs: List[str], known=None) -> dict:
    out = {}
    for p in pairs:
        k, sep, v = p.partition("=")
        if not sep or not k:
            raise ValueError(f"--option {p!r}: expected key=value")
        if known is not None and k not in known:
            raise ValueError(f"--option {p!r}: unknown key {k!r}; options: {', '.join(sorted(known))}")
        try:
            out[k] = json.loads(v)
        except json.JSONDecodeError:
            out[k] = v
    return out


def _brief(v) -> str:
    """A summary value for a terminal line: a long list as its length, a
    member-keyed table of lists as the length per member (--json has all)."""
    text = str(v)
    if len(text) <= 80:
        return text
    if isinstance(v, dict) and all(isinstance(x, (list, tuple, set, dict)) for x in v.values()):
        return "{" + ", ".join(f"{k}: {len(x)}" for k, x in v.items()) + "} (counts; --json lists them)"
    if isinstance(v, (list, tuple, set)):
        return f"{len(v)} items (--json lists them)"
    return text[:77] + "..."


@app.command()
def simulate(
    protocol: str = typer.Argument(..., help="protocol with an implementation, e.g. sequencer"),
    nodes: Optional[int] = typer.Option(None, "--nodes", callback=at_least(1), help="members 1..N (protocol default if absent)"),
    messages: Optional[int] = typer.Option(None, "--messages", callback=at_least(0), help="multicasts per member (protocol default if absent)"),
    option: List[str] = typer.Option([], "--option", help="other protocol option, key=value (repeatable)"),
    seed: int = typer.Option(0, "--seed", help="seed of the first run; run i uses seed+i"),
    faults: str = typer.Option("", "--faults", help="e.g. loss=0.1,dup=0.05,reorder=3,crash=1@20 (ms; items: loss, dup, reorder, crash, recover, join, leave, tokenloss; or auto where the protocol draws plans)"),
    runs: int = typer.Option(1, "--runs", callback=at_least(1), help="number of runs"),
    out: str = typer.Option("traces", "--out", help="output folder for the NDJSON traces"),
    as_json: bool = typer.Option(False, "--json", help="print the summaries as a JSON list"),
    history: bool = typer.Option(False, "--history", help="also write each run's history (history/<run_id>.ndjson, docs/history-format.md)"),
    force: bool = typer.Option(False, "--force", help="replace a non-empty --out folder whole"),
    append: bool = typer.Option(False, "--append", help="add runs to an --out folder made by simulate with the same "
                                "protocol and options (refused if a run of the same seed is there)"),
):
    """Simulate runs of the implementation and write one trace file (groupcheck-trace/2) per run."""
    from groupcheck.conformance.replay import registry as protocols
    from groupcheck.core.trace import writer as tracefile
    try:
        proto = protocols.get(protocol)
        opts = {**proto.default_options, **_options(option, proto.option_keys)}
        for key, value in (("nodes", nodes), ("messages", messages)):
            if value is not None:
                if key not in proto.option_keys:      # never silently ignored
                    raise ValueError(f"--{key}: {protocol} has no {key} option (its options: "
                                     f"{', '.join(sorted(proto.option_keys))})")
                opts[key] = value
        if force and append:
            raise ValueError("--force replaces the folder, --append adds to it: choose one")
        taken = [s for s in range(seed, seed + runs) if append and any(pathlib.Path(out).glob(f"*-s{s}.ndjson"))]
        if taken:
            raise ValueError(f"--append: {out} already holds the run of seed {taken[0]}; start at another --seed")
        rows = []
        for i in range(runs):
            # the text read once per run by the protocol's grammar (its items; auto: drawn
            # from the run's seed), and the plan handed to the simulator
            records, line = proto.simulate(seed + i, proto.fault_plan(faults, seed + i, opts), opts)
            if i == 0:                      # after the protocol took the plan: a refused one leaves nothing
                out_dir(out, command="simulate", params={"protocol": protocol, "options": opts}, force=force,
                        append=append)
            line = dict(line)
            where = pathlib.Path(out) / f"{line['run_id']}.ndjson"
            if where.exists():              # never overwritten: two seeds of one run id, or --append over one
                raise ValueError(f"{where}: a run of that id is already there; nothing of it was overwritten")
            line["file"] = str(tracefile.write(where, records))
            if history:
                from groupcheck.conformance.history import from_trace
                line["history"] = str(tracefile.write(pathlib.Path(out) / "history" / f"{line['run_id']}.ndjson",
                                                      from_trace(records)))
            rows.append(line)
            if line.get("quiescent", line.get("settled")) is False:     # say why it ended early, also with --json
                more = " (raise it with --option horizon=SECONDS)" if "horizon" in proto.option_keys else ""
                console(stderr=True).print(f"{line['run_id']}: not quiescent: the simulation reached its horizon "
                                           f"of simulated time with messages still unsettled{more}", markup=False,
                                           soft_wrap=True)
            if not as_json:
                print(f"{line['run_id']}: " + ", ".join(f"{k} {_brief(v)}" for k, v in line.items()
                                                        if k not in ("run_id", "file", "history")) + f" -> {line['file']}")
    except (protocols.UnknownProtocol, ValueError) as e:   # HistoryError is a ValueError
        fail(str(e).strip('"'))
    if as_json:
        print(json.dumps(rows, indent=2))


@app.command()
def conform(
    paths: List[str] = typer.Argument(..., help="trace files or folders (every *.ndjson under them)"),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    engine: str = typer.Option("local", "--engine", help="local (the default: in-process) or spark (the Parquet pipeline on PySpark)"),
    master: Optional[str] = typer.Option(None, "--master", help="Spark master URL (with --engine spark)"),
    expect: List[str] = expect_option(),
    allow: List[str] = allow_option(),
    known: Optional[bool] = known_option(),
    checker: str = typer.Option("model", "--checker", help="model (the Python replay, the default), tlc (TLC validates the trace against the TLA+ spec's Trace module, spec/<P>/Trace<P>.tla; every protocol) or both (any disagreement is a failure of the tool)"),
):
    """Replay traces against the model; then check the global properties.
    Exit 0 when every run conforms or its violation is a documented finding
    (or --expect'ed)."""
    if checker not in ("model", "tlc", "both"):
        fail(f"--checker {checker!r}: choose model, tlc or both")
    if checker != "model":
        raise typer.Exit(_conform_tlc(paths, as_json, Gate(expect, known, allow), both=checker == "both"))
    from groupcheck.conformance.replay.conform import conform_file
    from groupcheck.core.trace.reader import trace_runs
    if engine not in ("local", "spark"):
        fail(f"--engine {engine!r}: choose local or spark")
    files = trace_files_or_fail(paths)
    if engine == "spark":
        need_java()
        spark_session(master)
        from groupcheck.conformance.pipeline.stages import conform_rows
        with progress(f"conform {len(files)} traces (spark)"):
            rows = conform_rows(paths, engine="spark", master=master)
    else:
        from groupcheck.core.progress import reporting
        runs = trace_runs(paths)      # per-node files: one run
        rows: list = []
        keys = [f"replay/{i}" for i in range(len(runs))]
        with progress(f"conform {len(runs)} runs", as_json=as_json, after=QUIET_START,
                      costs=dict(zip(keys, map(_replay_cost, runs)))) as prog, reporting(prog.tick):
            for key, p in zip(keys, runs):
                prog.start(key)
                prog.update(f"conform {_run_name(p)}")
                rows.append(conform_file(p).to_json())
                prog.finished(f"conform {_run_name(p)}: {rows[-1]['verdict']}", key=key)

    gate = Gate(expect, known, allow)
    bad = [r for r in rows if gate.unexpected(r)]
    if as_json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            at = "" if r["first_bad_event"] is None else f" at event {r['first_bad_event']}"
            print(f"{r['run_id'] or r['file']}: {r['verdict']}{gate.note(r)}{at} ({r['events']} events)")
            for line in run_lines(r):
                print("  " + line.replace("\n", "\n  "))
        print(tally_line(rows, bad))
    _say_missing(gate, rows)
    raise typer.Exit(gate.exit_code(rows, len(bad)))


def _say_missing(gate: Gate, rows: list[dict]) -> None:
    """The demanded violations (--known, --expect) that no run showed, and
    the malformed traces (the input error), on stderr."""
    for m in gate.missing(rows):
        console(stderr=True).print(m, markup=False)
    rejected = [r for r in rows if r.get("verdict") == "rejected"]
    if rejected:
        console(stderr=True).print(f"error: {len(rejected)} malformed trace(s), first {rejected[0]['file']} "
                                   f"(file:line: reason above)", style="red", markup=False, soft_wrap=True)


# conform says nothing of its progress in its first QUIET_START seconds (a
# quick run is its verdict alone); the progress weighs each run by its size: seconds per byte of
# trace, measured on the sequencer's 2,000-message cluster run (quiet, 2 cores)
QUIET_START = 10.0
REPLAY_S_PER_BYTE = 1 / 6e6
TLC_S_PER_BYTE, TLC_START_S = 1 / 4e5, 4.0


def _size(run) -> int:
    return sum(Path(f).stat().st_size for f in (run if isinstance(run, list) else [run]))


def _replay_cost(run) -> float:
    return _size(run) * REPLAY_S_PER_BYTE


def _run_name(run) -> str:
    return Path(run[0]).parent.name if isinstance(run, list) else Path(run).name


def _tlc_verdict(tlctrace, trace):
    """TLC's verdict on one trace, or the NoVerdict saying why it gave none."""
    try:
        return tlctrace.validate(trace)
    except tlctrace.NoVerdict as e:
        return e


def _conform_tlc(paths, as_json: bool, gate: Gate, *, both: bool) -> int:
    """--checker tlc|both: TLC trace validation (conformance/tlctrace.py),
    and with ``both`` the model replay too; the run fails when a trace is
    rejected or when the two checkers disagree (verdict or first bad event)."""
    from groupcheck.conformance import tlctrace
    from groupcheck.conformance.replay.conform import conform_file
    from groupcheck.core.trace.reader import TraceError, load, trace_runs
    trace_files_or_fail(paths)
    need_java()
    runs = trace_runs(paths)      # per-node files of one run are one run, as for --checker model
    rows, bad = [], 0
    loaded: list = []
    replayed: dict = {}         # id(row) -> the replay's report of its run (kept for --checker both)
    from groupcheck.core.progress import reporting
    # the work: each run read and replayed, then validated by TLC (one JVM per core)
    costs = {f"replay/{i}": _replay_cost(f) for i, f in enumerate(runs)} \
        | {f"tlc/{i}": TLC_START_S + _size(f) * TLC_S_PER_BYTE for i, f in enumerate(runs)}
    jobs = max(1, os.cpu_count() or 1)
    with progress(f"conform {len(runs)} runs (--checker {'both' if both else 'tlc'})", as_json=as_json,
                  after=QUIET_START, costs=costs) as prog, reporting(prog.tick):
        for i, f in enumerate(runs):
            prog.start(f"replay/{i}")
            prog.update(f"read and replay {_run_name(f)}")
            row: dict = {"file": str(f) if not isinstance(f, list) else str(f[0].parent)}
            loaded.append((f, row, None))
            try:
                trace = load(f)
                rep = conform_file(f)
            except TraceError as e:
                row.update(verdict="rejected", reason=str(e))
                bad += 1
                continue
            finally:
                prog.finished(f"read and replay {_run_name(f)}", key=f"replay/{i}")
            row["run_id"] = trace.header.get("run_id")
            # what the replay refuses (its header checks: nodes, constants,
            # options, ``observed``; a record outside the model's members) TLC
            # never sees: the run is rejected with the replay's file:line reason
            if rep.verdict == "rejected":
                row.update(verdict="rejected", reason=rep.reason)
                bad += 1
                continue
            replayed[id(row)] = rep
            if not tlctrace.supported(trace.header["protocol"]):
                row.update(verdict="rejected", reason=f"{trace.path}:1: protocol: {trace.header['protocol']!r} has no "
                           f"TLA+ trace spec (Trace<P>.tla); --checker tlc supports: "
                           f"{', '.join(tlctrace.supported_protocols())}")
                continue
            loaded[-1] = (f, row, trace)
        for i, (f, _, trace) in enumerate(loaded):
            if trace is None:
                prog.finished(f"TLC {_run_name(f)}: not run", key=f"tlc/{i}")
        prog.queue([f"tlc/{i}" for i, (_, _, t) in enumerate(loaded) if t is not None], jobs)

        def validate(i: int):
            f, _, trace = loaded[i]
            if trace is None:
                return None
            v = _tlc_verdict(tlctrace, trace)
            said = "no verdict" if isinstance(v, tlctrace.NoVerdict) else "clean" if v.clean else "not clean"
            prog.finished(f"TLC {_run_name(f)}: {said}", key=f"tlc/{i}")
            return v
        # one TLC process per core; each is a separate JVM, so threads suffice
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            verdicts = list(pool.map(validate, range(len(loaded))))
    for (f, row, trace), v in zip(loaded, verdicts):
        if v is not None:
            failed = _tlc_row(row, v, trace, replayed.get(id(row)), both)
            bad += failed and gate.unexpected(row)
        rows.append(row)
    if as_json:
        print(json.dumps(rows, indent=2))
    else:
        _print_tlc_rows(rows, gate)
    _say_missing(gate, rows)
    return gate.exit_code(rows, bad)


def _tlc_row(row: dict, v, trace, rep, both: bool) -> bool:
    """Fill ``row`` with the run's verdict from TLC's (``v``) and, with
    ``both``, the model replay's (``rep``); True when the run counts
    against the exit status (if its verdict is not an expected one)."""
    from groupcheck.conformance import tlctrace
    from groupcheck.conformance.replay.engine import gaps
    from groupcheck.conformance.replay.registry import get
    if isinstance(v, tlctrace.NoVerdict):     # a limit TLC hit: one line, its output kept in a log
        # TLC checked nothing: incomplete, unless the model replay (both) found the run broken
        row.update(verdict="incomplete", reason=f"TLC gave no verdict: {v}")
        if both:
            m = rep.to_json()
            row["model"] = {"verdict": m["verdict"], "first_bad_event": m["first_bad_event"],
                            "stops_conforming_at": m["stops_conforming_at"]}
            if m["verdict"] in ("violation", "nonconforming", "rejected"):
                row["verdict"] = m["verdict"]
        return True
    row["tlc"] = v.to_json()
    if not v.clean:
        row["tlc_explain"] = v.explain()
    ok = v.clean
    if both:
        m = rep.to_json()
        # TLC judges the steps and the trace spec's safety properties; the
        # replay's "ok" includes its other properties (GapFreeFIFO, the
        # end-of-run ones), so the two are compared on what both judge
        row["model"] = {"verdict": m["verdict"], "first_bad_event": m["first_bad_event"],
                        "stops_conforming_at": m["stops_conforming_at"], "broken": rep.broken}
        agree = tlctrace.agrees(v, rep)
        row["agree"] = agree
        if not agree:
            row["reason"] = "TOOL FAILURE: the model replay and TLC disagree"
        ok = ok and agree and m["verdict"] in ("ok", "incomplete")     # (incomplete: decided below alike)
    if ok:      # nothing wrong: ok only if enough was checked, as the replay decides
        why = gaps(trace, get(trace.header["protocol"]).work)
        row.update(verdict="incomplete" if why else "ok", reason="; ".join(why) or None)
    elif both and not row["agree"]:
        row["verdict"] = "disagreement"
    elif v.broken_at is not None and not (both and v.ok):   # TLC alone, or steps failing later
        row.update(verdict="violation", protocol=trace.header["protocol"], property=v.broken[0],
                   finding=None, finding_why=None)
        row["reason"] = v.broken_detail() + ("" if v.ok else f"; {v.detail}")
    elif not v.ok:
        row["verdict"] = "nonconforming"
    else:   # both accept the steps and agree; the replay's verdict names the violations and their findings
        row.update(verdict=m["verdict"], protocol=trace.header["protocol"], property=violated(m),
                   finding=m.get("finding"), finding_why=m.get("finding_why"), violations=m.get("violations"))
        row["reason"] = (f"the steps conform (both checkers); the model replay reports a violation of "
                         f"{row['property']} (groupcheck conform --checker model for details)")
    return not ok


def _print_tlc_rows(rows: list[dict], gate: Gate) -> None:
    """``conform --checker tlc|both``'s rows as text, one line a run, then the tally."""
    for r in rows:
        line = f"{r.get('run_id') or r['file']}: {r['verdict']}{gate.note(r)}"
        if "tlc" in r:
            t = r["tlc"]
            said = (f"{'/'.join(t['broken'])} broken at event {t['broken_at']}" if t.get("broken_at") is not None
                    else "ok" if t["ok"] else "")
            if not t["ok"]:
                said += ("; " if said else "") + "rejected at event " + str(t["first_unmatched"])
            line += f" [tlc: {said}, {t['seconds']} s"
            if "model" in r:
                mm = r["model"]
                line += f"; model: {mm['verdict']}" + (f" at event {mm['first_bad_event']}"
                                                       if mm["first_bad_event"] is not None else "")
            line += "]"
        print(line)
        if r.get("reason"):
            print("  " + r["reason"])
        if r.get("tlc_explain"):
            print("  " + r["tlc_explain"].replace("\n", "\n  "))
    print(tally_line(rows, [r for r in rows if gate.unexpected(r)]))


from .traces import app as traces_app; app.add_typer(traces_app, name="traces")  # noqa: E402,E702
from .history import history as _history; app.command(name="history")(_history)  # noqa: E402,E702
from .cluster import app as cluster_app; app.add_typer(cluster_app, name="cluster")  # noqa: E402,E702
from .jgroups import app as jgroups_app; app.add_typer(jgroups_app, name="jgroups")  # noqa: E402,E702


def _metavars(typer_app) -> None:
    """Help without type clutter: every valued option and argument shows a
    name (``--engine ENGINE``, ``PATHS``), not its Python type (``<str>``)."""
    from typer.models import ArgumentInfo, OptionInfo
    for cmd in typer_app.registered_commands:
        for name, p in inspect.signature(cmd.callback).parameters.items():
            info = p.default
            if not isinstance(info, (OptionInfo, ArgumentInfo)) or info.metavar is not None or p.annotation in (bool, "bool"):
                continue
            decl = next((d for d in info.param_decls or () if d.startswith("--")), None)
            info.metavar = (decl.lstrip("-").split("/")[0] if decl else name).upper().replace("-", "_")
    for group in typer_app.registered_groups:
        _metavars(group.typer_instance)


_metavars(app)
# typer prints an argument's Python type beside its name (``PATHS <list[str]>``)
# whatever its metavar; the argument's help says what it takes
from typer.core import TyperArgument  # noqa: E402
TyperArgument.display_type_rich = lambda self, ctx: None


_SIGNALLED = 0       # the signal number once one arrived


def _on_signal(signum, frame):
    """SIGTERM (CI cancel, ``timeout``) and SIGINT: end every TLC JVM now; then
    unwind with SystemExit so that each ``finally`` removes its temporary
    folder and the Spark driver JVM exits with this process (its gateway
    ends when our end of its stdin closes)."""
    global _SIGNALLED
    from groupcheck.model import tlc
    tlc.kill_all()
    if _SIGNALLED:              # a second signal while unwinding: leave
        return
    _SIGNALLED = signum
    logging.disable(logging.CRITICAL)   # py4j logs every call the dying Spark JVM fails
    _end_spark_jvm(signal.SIGTERM)
    console(stderr=True).print(f"interrupted ({signal.Signals(signum).name}): stopped, temporary files removed",
                               markup=False)
    raise SystemExit(128 + signum)


def main() -> None:
    from typer import Abort
    from typer._click.exceptions import ClickException, NoArgsIsHelpError   # typer vendors click
    from groupcheck.model.tlc import TLCError
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _on_signal)
    code = 0
    try:
        rv = app(standalone_mode=False)     # typer.Exit(n) returns n; a command that ends returns None
        code = rv if isinstance(rv, int) else 0
    except NoArgsIsHelpError as e:
        e.show()
        code = 2
    except ClickException as e:     # a usage error: one line, and where the help is
        console(stderr=True).print(f"error: {e.format_message()} ({_help_for(getattr(e, 'ctx', None))})",
                                   style="red", markup=False, soft_wrap=True)
        code = e.exit_code
    except Abort:
        code = 128 + (_SIGNALLED or signal.SIGINT)
    except TLCError as e:       # the environment: no jar, no java, too old
        if _SIGNALLED:
            sys.exit(128 + _SIGNALLED)
        console(stderr=True).print(f"error: {e}", style="red", markup=False, soft_wrap=True)
        code = ENVIRONMENT
    except Exception:
        # A signal's SystemExit unwinding through PySpark: its JVM (same process
        # group under ``timeout`` or a CI runner) died too, and each cleanup
        # call raises; the signal is the story, not these.
        if _SIGNALLED:
            sys.exit(128 + _SIGNALLED)
        log = _write_traceback()
        console(stderr=True).print(f"error: {_last_line()} (an unexpected failure of groupcheck; "
                                   f"the traceback is in {log})", style="red", markup=False, soft_wrap=True)
        code = 1
    finally:
        if not _SIGNALLED:
            _stop_spark()
    sys.exit(code)


def _help_for(ctx) -> str:
    """``groupcheck SUB COMMAND --help`` for the command a usage error is in."""
    names = []
    while ctx is not None and ctx.parent is not None:       # the root's name is however we were started
        names.append(ctx.info_name)
        ctx = ctx.parent
    return " ".join(["groupcheck", *reversed(names), "--help"])


def _last_line() -> str:
    e = sys.exc_info()[1]
    return f"{type(e).__name__}: {e}".splitlines()[0] if str(e) else type(e).__name__


def _write_traceback() -> str:
    """The current exception's traceback in a file of its own (the terminal
    gets one line naming it)."""
    fd, path = tempfile.mkstemp(prefix="groupcheck-error-", suffix=".log")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write("groupcheck " + " ".join(sys.argv[1:]) + "\n\n" + traceback.format_exc())
    return path


def _end_spark_jvm(sig) -> None:
    """Signal the PySpark driver JVM this process started, if any: a blocked
    py4j call then returns (with an error) and the JVM's shutdown hooks
    remove its /tmp/spark-* and blockmgr-* folders."""
    if "pyspark" not in sys.modules:
        return
    from pyspark import SparkContext     # lazy: pyspark is heavy and only this path needs it
    proc = getattr(SparkContext._gateway, "proc", None)
    if proc is not None and proc.poll() is None:
        try:
            proc.send_signal(sig)
            proc.wait(timeout=20)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            proc.kill()
    # what a task created while the JVM was going down (conformance/pipeline/spark.py)
    from groupcheck.conformance.pipeline import spark
    spark.remove_local_dir()


def _stop_spark() -> None:
    if "pyspark" in sys.modules:
        try:
            from groupcheck.conformance.pipeline import spark
            spark.stop()
        except Exception:       # best effort while exiting
            pass


if __name__ == "__main__":
    main()
