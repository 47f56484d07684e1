"""``groupcheck traces``: the conformance pipeline's stages from the command
line (conformance/pipeline/stages.py, docs/pipeline.md).  ``--engine spark`` (the
default) runs them on PySpark, ``local[*]`` unless ``--master`` names a
cluster; ``--engine local`` runs them in this process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from .render import (at_least, console, fail, FORCE, need_java, out_dir, progress, spark_session,
                     trace_files_or_fail)


app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Conformance traces as Parquet: generate, ingest, check (with coverage).")

ENGINE_HELP = "spark (PySpark; local[*] unless --master) or local (in-process, pyarrow)"


def _fail(msg: str, code: int = 2):
    fail(msg, code)


def _engine(engine: str) -> str:
    if engine not in ("spark", "local"):
        _fail(f"--engine {engine!r}: choose spark or local")
    if engine == "spark":
        need_java()
    return engine


def _start(engine: str, master: Optional[str]) -> None:
    """With Spark, its session now, its JVM's messages in a log file (render.spark_session)."""
    if engine == "spark":
        spark_session(master)


def _options(pairs: List[str]) -> dict:
    out = {}
    for p in pairs:
        k, sep, v = p.partition("=")
        if not sep:
            _fail(f"--option {p!r}: expected key=value")
        try:
            out[k] = json.loads(v)
        except json.JSONDecodeError:
            out[k] = v
    return out


def _summary_line(s: dict) -> str:
    return (f"{s['runs']} runs, {s['events']:,} events; rows in {s['rows_in']:,} = accepted "
            f"{s['rows_accepted']:,} + rejected {s['rows_rejected']:,}; runs rejected {s['runs_rejected']}; "
            f"{s['seconds']:.1f} s")


@app.command()
def generate(
    protocol: str = typer.Argument(..., help="a registered protocol, e.g. sequencer"),
    runs: int = typer.Option(100, "--runs", callback=at_least(1), help="number of simulated runs"),
    seed: int = typer.Option(0, "--seed", help="seed of the first run; run i uses seed+i"),
    faults: Optional[str] = typer.Option(None, "--faults", help="fault spec (default: the protocol's campaign faults)"),
    option: List[str] = typer.Option([], "--option", help="simulation option key=value, e.g. nodes=3 (repeatable)"),
    out: str = typer.Option(..., "--out", help="output folder (the Parquet dataset)"),
    engine: str = typer.Option("spark", "--engine", help=ENGINE_HELP),
    master: Optional[str] = typer.Option(None, "--master", help="Spark master URL, e.g. spark://host:7077"),
    as_json: bool = typer.Option(False, "--json", help="print JSON for machines"),
    force: bool = FORCE,
):
    """Simulate runs (fanned out over seeds as Spark tasks) into Parquet, one row per event."""
    from groupcheck.conformance.pipeline import stages as pipeline
    from groupcheck.conformance.replay.registry import UnknownProtocol, get
    try:
        proto = get(protocol)               # a known protocol before any output
        engine = _engine(engine)
        opts = _options(option)
        if faults:                          # the protocol's grammar's verdict before any output
            proto.fault_plan(faults, seed, {**proto.default_options, **opts})
        out_dir(out, command="traces generate", force=force)
        _start(engine, master)
        with progress(f"traces generate {protocol}: {runs} runs ({engine})", quiet=as_json):
            s = pipeline.generate(protocol, runs, seed, faults, out, engine=engine, options=opts, master=master)
    except (UnknownProtocol, pipeline.PipelineError, ValueError) as e:
        _fail(str(e))
    print(json.dumps(s, indent=2) if as_json else f"{out}: {_summary_line(s)}")


@app.command()
def ingest(
    paths: List[str] = typer.Argument(..., help="NDJSON trace files or folders (every *.ndjson under them)"),
    out: str = typer.Option(..., "--out", help="output folder (the Parquet dataset)"),
    engine: str = typer.Option("spark", "--engine", help=ENGINE_HELP),
    master: Optional[str] = typer.Option(None, "--master", help="Spark master URL"),
    as_json: bool = typer.Option(False, "--json", help="print JSON for machines"),
    force: bool = FORCE,
):
    """Validate NDJSON traces row by row into Parquet; bad rows go to OUT/_rejected with file, line, reason."""
    from groupcheck.conformance.pipeline import stages as pipeline
    from groupcheck.conformance.pipeline.dataset import read_rejected
    trace_files_or_fail(paths)      # before Spark starts and OUT is made
    try:
        engine = _engine(engine)
        out_dir(out, command="traces ingest", force=force)
        _start(engine, master)
        with progress(f"traces ingest ({engine})", quiet=as_json):
            s = pipeline.ingest(paths, out, engine=engine, master=master)
    except pipeline.PipelineError as e:
        _fail(str(e))
    if as_json:
        print(json.dumps(s, indent=2))
        return
    print(f"{out}: {_summary_line(s)}")
    if s["rows_rejected"]:
        for r in read_rejected(out)[:10]:
            print(f"  rejected {r['file']}:{r['line']}: {r['reason']}")
        if s["rows_rejected"] > 10:
            print(f"  ... {s['rows_rejected'] - 10} more in {out}/_rejected")


def _dataset_or_fail(dataset: str) -> None:
    """One line and exit 2 unless ``dataset`` is a folder written by
    ``traces generate`` or ``ingest``; a folder of trace files is pointed to
    ``ingest`` and ``conform``."""
    p = Path(dataset)
    if not p.exists():
        _fail(f"{dataset}: no such folder")
    if not (p / "_runs").is_dir():
        hint = ("it holds trace files: ingest them first (groupcheck traces ingest) or check them with "
                "groupcheck conform" if p.is_dir() and any(p.rglob("*.ndjson")) else
                "write one with groupcheck traces generate or ingest")
        _fail(f"{dataset}: not a pipeline dataset (no _runs folder); {hint}")


@app.command()
def check(
    dataset: str = typer.Argument(..., help="a dataset written by generate or ingest"),
    engine: str = typer.Option("spark", "--engine", help=ENGINE_HELP),
    master: Optional[str] = typer.Option(None, "--master", help="Spark master URL"),
    coverage: bool = typer.Option(True, "--coverage/--no-coverage", help="actions and model states reached"),
    max_states: int = typer.Option(20_000, "--max-states", callback=at_least(1), help="explore the reachable set only up to this size"),
    as_json: bool = typer.Option(False, "--json", help="print JSON for machines"),
):
    """Replay every run against its model, check the global properties; one verdict per run, then coverage."""
    from rich.table import Table
    from groupcheck.conformance.pipeline import stages as pipeline
    _dataset_or_fail(dataset)       # before Spark starts: a wrong path costs nothing
    try:
        engine = _engine(engine)
        _start(engine, master)
        from groupcheck.core.progress import reporting
        with progress(f"traces check {dataset} ({engine})", as_json=as_json) as prog, reporting(prog.tick):
            res = pipeline.check(dataset, engine=engine, master=master, coverage=coverage,
                                 max_states=max_states)
    except pipeline.PipelineError as e:
        _fail(str(e))
    ok = res["runs"] > 0 and res["counts"].get("ok", 0) == res["runs"] and res["disagreements"] == 0
    # README, 'Exit codes': a malformed (rejected) run is an input error, 2
    code = 2 if res["counts"].get("rejected") else 0 if ok else 1
    if as_json:
        print(json.dumps(res, indent=2))
        raise typer.Exit(code)
    out = console()
    for v in res["verdicts"]:
        if v["verdict"] != "ok" or v["agree"] is False:
            at = "" if v["first_bad_event"] is None else f" at event {v['first_bad_event']}"
            flag = "" if v["agree"] is not False else " (replay and property check DISAGREE)"
            out.print(f"{v['run_id'] or v['file']}: {v['verdict']}{at}{flag}", markup=False)
            if v["reason"]:
                out.print("  " + v["reason"].replace("\n", "\n  "), markup=False)
    t = Table(title=f"{res['engine']} engine, {res['seconds']:.1f} s")
    for c in ("verdict", "runs"):
        t.add_column(c)
    for k in sorted(res["counts"]):
        t.add_row(k, str(res["counts"][k]))
    out.print(t)
    for p, c in res["coverage"].items():
        share = "-" if c["actions_share"] is None else f"{100 * c['actions_share']:.0f}%"
        out.print(f"{p}: actions {len(c['actions_seen'])}/{len(c['actions'])} ({share})"
                  + (f", unknown actions {c['unknown_actions']}" if c["unknown_actions"] else ""), markup=False)
        for s in c["states"]:
            reach = ("not explored (the most-run constant sets are)" if not s.get("explored", True) else
                     "unknown (over --max-states)" if s["reachable"] is None else f"{s['reachable']:,}")
            share = "" if s["share"] is None else f" ({100 * s['share']:.2f}%)"
            out.print(f"  constants {json.dumps(s['constants'], sort_keys=True)}: {s['visited']:,} model states "
                      f"visited by {s['runs']} runs, reachable {reach}{share}", markup=False)
    if res["disagreements"]:
        out.print(f"[red]{res['disagreements']} run(s) where the replay and the property check disagree[/]")
    raise typer.Exit(code)
