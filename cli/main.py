"""The ``groupcheck`` command (typer for sub-commands and options, rich for
tables and progress).  Every command has ``--json`` for machines; the exit
status is non-zero on any unexpected result."""

from __future__ import annotations

import json
import sys
from typing import List, Optional

import typer

from .render import check_table, console, counterexample_steps

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Model-check, cross-check and audit group-communication protocols.")


def _entries(protocols: Optional[List[str]], model: Optional[str]):
    from groupcheck.model import manifest
    try:
        return manifest.select(protocols, model)
    except manifest.ManifestError as e:
        console(stderr=True).print(f"[red]error:[/] {e}")
        raise typer.Exit(2)


def run_checks(entries, workers: int, quiet: bool):
    from rich.progress import Progress
    from groupcheck.model.manifest import check
    outcomes = []
    with Progress(console=console(stderr=True), transient=True, disable=quiet) as prog:
        task = prog.add_task("model checking", total=len(entries))
        for e in entries:
            prog.update(task, description=f"TLC {e.protocol}/{e.name}")
            outcomes.append(check(e, workers=workers))
            prog.advance(task)
    return outcomes


@app.command()
def check(
    protocols: Optional[List[str]] = typer.Argument(None, help="protocols (default: every spec with a manifest)"),
    model: Optional[str] = typer.Option(None, "--model", help="only the manifest model with this name"),
    as_json: bool = typer.Option(False, "--json", help="print a JSON list instead of a table"),
    workers: int = typer.Option(1, "--workers", help="TLC worker threads"),
):
    """Run TLC on every manifest model and compare with its expectation."""
    outcomes = run_checks(_entries(protocols, model), workers, quiet=as_json)
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
    as_json: bool = typer.Option(False, "--json"),
    compare_tlc: bool = typer.Option(False, "--compare-tlc", help="also dump TLC's graph and compare"),
    workers: int = typer.Option(1, "--workers", help="TLC worker threads (with --compare-tlc)"),
):
    """Run the Python explorer on manifest models (compare:true ones unless --model)."""
    from groupcheck.model.link import compare_entry
    entries = _entries([protocol], model)
    if model is None:
        entries = [e for e in entries if e.compare]
    reports = [compare_entry(e, compare_tlc=compare_tlc, workers=workers) for e in entries]
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


@app.command()
def audit(
    out: str = typer.Option("audit", "--out", help="output folder"),
    runs: int = typer.Option(100, "--runs", help="simulated runs per protocol for the conformance stage"),
    seed: int = typer.Option(0, "--seed", help="seed of the first simulated run"),
    engine: str = typer.Option("spark", "--engine", help="conformance engine: spark (local[*] unless --master) or local"),
    master: Optional[str] = typer.Option(None, "--master", help="Spark master URL, e.g. spark://host:7077"),
    workers: int = typer.Option(1, "--workers", help="TLC worker threads per model"),
    jobs: Optional[int] = typer.Option(None, "--jobs", help="models checked at once (default: one per core)"),
    full: bool = typer.Option(False, "--full", help="also compare the models marked slow in their manifests"),
    protocols: Optional[List[str]] = typer.Option(None, "--protocol", help="only these protocols (repeatable)"),
    stage: Optional[List[str]] = typer.Option(None, "--stage", help="only these stages: tlc, link, conformance"),
):
    """The release audit: model-check every manifest model, compare models with
    specs, check simulated traces on Spark; write summary.json, junit.xml,
    report.md and report.html; exit 1 on any unexpected result."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    from groupcheck.conformance import audit as audit_mod, report
    if engine not in ("spark", "local"):
        console(stderr=True).print(f"error: --engine {engine!r}: spark or local", style="red", markup=False)
        raise typer.Exit(2)
    stages = tuple(stage) if stage else ("tlc", "link", "conformance")
    bad_stage = set(stages) - {"tlc", "link", "conformance"}
    if bad_stage:
        console(stderr=True).print(f"error: unknown stage(s) {sorted(bad_stage)}", style="red", markup=False)
        raise typer.Exit(2)
    _entries(protocols, None)   # validates the protocol names with a clear error
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=console(stderr=True), transient=True) as prog:
        task = prog.add_task("audit", total=None)

        def progress(what: str, done: int, total: int) -> None:
            prog.update(task, description=what, completed=done, total=total)

        checks, extra = audit_mod.run(out, runs=runs, seed=seed, engine=engine, master=master,
                                      workers=workers, full=full, protocols_=protocols, stages=stages,
                                      progress=progress, jobs=jobs)
    paths = report.write_all(out, checks, extra)
    from rich.table import Table
    t = Table(title="groupcheck audit")
    for c in ("check", "expected", "observed", "seconds", "result"):
        t.add_column(c, justify="right" if c == "seconds" else "left")
    for c in checks:
        t.add_row(c.id, c.expected, c.observed, f"{c.seconds:.1f}",
                  "[green]as expected[/]" if c.as_expected else "[bold red]UNEXPECTED[/]")
    console().print(t)
    bad = [c for c in checks if not c.as_expected]
    console().print(f"{len(checks) - len(bad)}/{len(checks)} checks as expected; "
                    + ", ".join(str(p) for p in paths.values()))
    for c in bad:
        console().print(f"UNEXPECTED {c.id}: expected {c.expected}, observed {c.observed}"
                        + (f"\n  {c.detail}" if c.detail else ""), markup=False)
    raise typer.Exit(1 if bad else 0)


def _options(pairs: List[str]) -> dict:
    out = {}
    for p in pairs:
        k, sep, v = p.partition("=")
        if not sep or not k:
            raise ValueError(f"--option {p!r}: expected key=value")
        try:
            out[k] = json.loads(v)
        except json.JSONDecodeError:
            out[k] = v
    return out


@app.command()
def simulate(
    protocol: str = typer.Argument(..., help="protocol with an implementation, e.g. sequencer"),
    nodes: Optional[int] = typer.Option(None, "--nodes", help="members 1..N (protocol default if absent)"),
    messages: Optional[int] = typer.Option(None, "--messages", help="multicasts per member (protocol default if absent)"),
    option: List[str] = typer.Option([], "--option", help="other protocol option, key=value (repeatable)"),
    seed: int = typer.Option(0, "--seed", help="seed of the first run; run i uses seed+i"),
    faults: str = typer.Option("", "--faults", help="e.g. loss=0.1,dup=0.05,reorder=3,crash=1@20 (ms)"),
    runs: int = typer.Option(1, "--runs"),
    out: str = typer.Option("traces", "--out", help="output folder for the NDJSON traces"),
    as_json: bool = typer.Option(False, "--json", help="print the summaries as a JSON list"),
):
    """Simulate runs of the implementation and write one groupcheck-trace/1 file per run."""
    import pathlib
    from groupcheck.conformance import protocols
    from groupcheck.impl import tracefile
    try:
        proto = protocols.get(protocol)
        opts = {**proto.default_options, **_options(option)}
        if nodes is not None:
            opts["nodes"] = nodes
        if messages is not None:
            opts["messages"] = messages
        rows = []
        for i in range(runs):
            records, line = proto.simulate(seed + i, faults, opts)
            line = dict(line)
            line["file"] = str(tracefile.write(pathlib.Path(out) / f"{line['run_id']}.ndjson", records))
            rows.append(line)
            if not as_json:
                print(f"{line['run_id']}: " + ", ".join(f"{k} {v}" for k, v in line.items()
                                                        if k not in ("run_id", "file")) + f" -> {line['file']}")
    except (protocols.UnknownProtocol, ValueError) as e:
        console(stderr=True).print(f"error: {e}", style="red", markup=False)
        raise typer.Exit(2)
    if as_json:
        print(json.dumps(rows, indent=2))


@app.command()
def conform(
    paths: List[str] = typer.Argument(..., help="trace files or folders (every *.ndjson under them)"),
    as_json: bool = typer.Option(False, "--json"),
    engine: str = typer.Option("local", "--engine", help="local (in-process) or spark (the Parquet pipeline on PySpark)"),
    master: Optional[str] = typer.Option(None, "--master", help="Spark master URL (with --engine spark)"),
):
    """Replay traces against the model; then check the global properties."""
    from groupcheck.conformance.replay import conform_file
    from groupcheck.conformance.traces import trace_runs
    if engine == "spark":
        from groupcheck.conformance.pipeline import conform_rows
        rows = conform_rows(paths, engine="spark", master=master)
    elif engine == "local":
        rows = [conform_file(p).to_json() for p in trace_runs(paths)]     # per-node files: one run
    else:
        console(stderr=True).print(f"[red]error:[/] --engine {engine!r}: choose local or spark", markup=False)
        raise typer.Exit(2)
    if as_json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            bad = "" if r["first_bad_event"] is None else f" at event {r['first_bad_event']}"
            print(f"{r['run_id'] or r['file']}: {r['verdict']}{bad} ({r['events']} events)")
            if r["reason"]:
                print("  " + r["reason"].replace("\n", "\n  "))
        n_ok = sum(r["verdict"] == "ok" for r in rows)
        print(f"{n_ok}/{len(rows)} runs ok")
    raise typer.Exit(0 if rows and all(r["verdict"] == "ok" for r in rows) else 1)


from .traces import app as traces_app; app.add_typer(traces_app, name="traces")  # noqa: E402,E702


def main() -> None:
    app()


if __name__ == "__main__":
    main()
