"""Human rendering of results: tables and counterexamples (rich)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from groupcheck.model.values import to_tla


def counterexample_steps(trace: list[tuple[str | None, dict[str, Any]]]) -> list[str]:
    """Numbered steps: the action taken and only the variables that changed."""
    lines = []
    prev: dict[str, Any] | None = None
    for i, (action, state) in enumerate(trace, 1):
        if prev is None:
            lines.append(f"{i}. Init")
            changed = state
        else:
            lines.append(f"{i}. {action or '?'}")
            changed = {k: v for k, v in state.items() if prev.get(k) != v}
        for k, v in changed.items():
            lines.append(f"     {k} = {to_tla(v)}")
        prev = state
    return lines


def table(title: str) -> Table:
    """A results table that stays readable at 80 columns: a rule under the
    header and no side borders (cells fold rather than end in an ellipsis)."""
    from rich import box
    return Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False)


def check_table(rows: list[dict[str, Any]]) -> Table:
    """One row per model; readable at 80 columns: protocol and model in one
    cell, the pinned count only where it differs, text that wraps whole."""
    t = table("groupcheck check")
    t.add_column("model", overflow="fold", min_width=12)
    t.add_column("expected", overflow="fold", min_width=8)
    t.add_column("observed", overflow="fold", min_width=8)
    for col in ("states", "depth", "s"):
        t.add_column(col, justify="right", no_wrap=True)
    t.add_column("verdict", min_width=10)
    for r in rows:
        observed = r["violated"] or r["result"]
        verdict = ("[bold red]UNEXPECTED[/]" if not r["matches_expectation"] else
                   "[green]as expected[/]" if r["expected"] == "ok" else "[yellow]expected violation[/]")
        pinned = r.get("expected_distinct_states")
        states = _n(r["distinct_states"]) + ("" if pinned in (None, r["distinct_states"]) else f"\npinned\n{_n(pinned)}")
        t.add_row(escape(f"{r['protocol']}/{r['model']}"), escape(r["expected"]), escape(observed),
                  states, _n(r["depth"]), f"{r['seconds']:.1f}", verdict)
    return t


def _n(x: Any) -> str:
    return "-" if x is None else f"{x:,}"


def console(stderr: bool = False) -> Console:
    c = Console(stderr=stderr, highlight=False)
    if not c.is_terminal:  # CI logs and pipes: do not squeeze tables into 80 columns
        c = Console(stderr=stderr, highlight=False, width=160)
    return c


# --- exit codes and one-line errors (README "Exit codes") ---------------------

OK, UNEXPECTED, USAGE, ENVIRONMENT = 0, 1, 2, 3


def fail(msg: str, code: int = USAGE):
    """One line on stderr, no traceback, then exit with ``code``."""
    import typer
    console(stderr=True).print(f"error: {msg}", style="red", markup=False, soft_wrap=True)
    raise typer.Exit(code)


def trace_files_or_fail(paths) -> list:
    """The *.ndjson traces named by ``paths``; one line and exit 2 when a path
    is missing or there is no trace."""
    from groupcheck.conformance.traces import trace_files
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        fail(f"{missing[0]}: no such file or folder")
    skipped: list = []
    files = trace_files(paths, skipped)
    if skipped:
        where = sorted({str(f.parent) for f, _ in skipped})
        console(stderr=True).print(f"skipped {len(skipped)} history file(s) in {', '.join(where)} "
                                   f"(black-box histories: groupcheck history reads them)", markup=False)
    if not files:
        datasets = [p for p in paths if (Path(p) / "_pipeline.json").is_file()]
        if datasets:
            fail(f"{datasets[0]} is a Parquet dataset, not NDJSON traces: check it with "
                 f"groupcheck traces check {datasets[0]}")
        fail(f"no *.ndjson traces in {', '.join(paths)}; write some with groupcheck simulate")
    return files


def spark_session(master=None):
    """Start the process's Spark session with the driver JVM's stderr (JVM
    warnings such as "Using incubator modules", log4j, the Python workers'
    output) in a log file, named on stderr; the session is then reused by
    every later ``conformance.spark.session`` call of this process."""
    import os
    import sys
    import tempfile
    from groupcheck.conformance import spark
    from pyspark import SparkContext
    if SparkContext._active_spark_context is not None:
        return spark.session(master)
    import signal
    ours = signal.getsignal(signal.SIGINT)
    fd, path = tempfile.mkstemp(prefix="groupcheck-spark-", suffix=".log")
    sys.stderr.flush()
    saved = os.dup(2)
    os.dup2(fd, 2)          # the JVM inherits fd 2 when it starts; we take ours back after
    try:
        s = spark.session(master)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)
        # PySpark's SparkContext installs a SIGINT handler of its own (cancel
        # the jobs, raise KeyboardInterrupt mid-call): ours stays (cli/main.py)
        signal.signal(signal.SIGINT, ours)
    console(stderr=True).print(f"Spark's own messages: {path}", markup=False, soft_wrap=True)
    return s


def need_java() -> None:
    """Exit 3 with one line when no usable Java runtime is on PATH."""
    from groupcheck.model.tlc import TLCError, check_java
    try:
        check_java()
    except TLCError as e:
        fail(str(e), ENVIRONMENT)


MARK = ".groupcheck-out.json"      # which command made an output folder, and with what
FORCE = typer.Option(False, "--force", help="replace a non-empty --out folder whole (refused otherwise)")


def out_dir(path: str, option: str = "--out", *, command: str = "", params: Any = None,
            force: bool = False, append: Any = None, regenerates: bool = False):
    """Create ``path`` and prove it writable before any work starts; never
    lose or mix data.  An empty or new folder is used.  A non-empty one is
    refused (exit 2) unless: ``force`` (``--force``: its contents are
    replaced whole); ``append`` is True (``--append``, where the command
    adds runs: only to a folder the same command made with the same
    ``params``, read from the folder's MARK); or ``regenerates`` and the
    folder is the same command's own (a report rewritten whole, as
    ``audit``'s).  ``append`` None: the command cannot append.  Call it
    after the arguments and inputs are validated: nothing is written before."""
    import json
    import shutil
    import tempfile
    p = Path(path)
    if p.exists() and not p.is_dir():
        fail(f"{option} {path}: a file, not a folder; choose another name")
    entries = [e for e in p.iterdir() if e.name != MARK] if p.is_dir() else []
    mark = _mark(p)
    own = mark is not None and mark.get("command") == command
    if entries and not force:
        made = f"made by `groupcheck {mark.get('command')}`" if mark else "not made by groupcheck"
        if append is True:
            if not own:
                fail(f"{option} {path}: --append adds to a folder `groupcheck {command}` made; this one was {made}")
            if mark.get("params") != params:
                fail(f"{option} {path}: --append needs the parameters its runs were made with "
                     f"({_brief_params(mark.get('params'))}), not {_brief_params(params)}; use another folder")
        elif not (regenerates and own):
            fail(f"{option} {path}: not empty ({len(entries)} entr{'y' if len(entries) == 1 else 'ies'}, {made}): "
                 f"--force replaces it whole" + ("; --append adds runs to it" if append is not None else "")
                 + "; or choose another folder")
    try:
        if entries and (force or (regenerates and own)):
            for e in entries:
                shutil.rmtree(e) if e.is_dir() and not e.is_symlink() else e.unlink()
        p.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=p, prefix=".groupcheck-write-test-"):
            pass
        if command and not (append is True and own):
            (p / MARK).write_text(json.dumps({"command": command, "params": params}, default=str) + "\n",
                                  encoding="utf-8")
    except OSError as e:
        fail(f"{option} {path}: cannot write there ({e.strerror or e}); choose another folder")
    return p


def _mark(p: Path):
    """The folder's MARK as a dict, or None (none, or unreadable)."""
    import json
    try:
        d = json.loads((p / MARK).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return d if isinstance(d, dict) else None


def _brief_params(params: Any) -> str:
    if isinstance(params, dict):
        return ", ".join(f"{k}={v}" for k, v in params.items())
    return str(params)


def progress(description: str = "", total=None, quiet: bool = False):
    """A progress bar on a terminal; off a terminal (CI logs, pipes) a plain
    line per update, at least one a minute while work goes on (a heartbeat
    thread repeats the last line).  Always on stderr (``--json`` writes
    stdout only); ``finished`` prints each item's verdict with the count
    and the time left."""
    return _Progress(description, total, quiet)


class _Progress:
    HEARTBEAT = 60.0

    def __init__(self, description, total, quiet):
        import threading
        self.err = console(stderr=True)
        self.quiet, self.tty = quiet, self.err.is_terminal
        self.desc, self.done, self.total = description, 0, total
        self._stop = threading.Event()
        self._done0 = None
        self._bar = None
        self._thread = None

    def __enter__(self):
        import threading
        import time
        self.t0 = time.monotonic()
        if self.quiet:
            return self
        if self.tty:
            from rich.progress import (BarColumn, Progress, TextColumn, TimeElapsedColumn,
                                       TimeRemainingColumn)
            self._bar = Progress(TextColumn("{task.description}"), BarColumn(),
                                 TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                                 TimeRemainingColumn(), console=self.err, transient=True)
            self._bar.__enter__()
            self._task = self._bar.add_task(self.desc, total=self.total)
        else:
            def beat():
                while not self._stop.wait(self.HEARTBEAT):
                    self._line("still working:")
            self._thread = threading.Thread(target=beat, daemon=True)
            self._thread.start()
            if self.desc:
                self._line()
        return self

    def _eta(self) -> str:
        """The time left at the pace so far, once an item has finished."""
        import time
        ran = self.done - (self._done0 or 0)       # items that took time here (not counted done at once)
        if not self.total or ran <= 0 or self.done >= self.total:
            return ""
        left = (time.monotonic() - self.t0) / ran * (self.total - self.done)
        return f"; about {left / 60:.0f} min left" if left >= 90 else f"; about {left:.0f} s left"

    def _line(self, prefix: str = "") -> None:
        import time
        count = f" [{self.done}/{self.total}]" if self.total else ""
        self.err.print(f"{prefix + ' ' if prefix else ''}{self.desc}{count} "
                       f"({time.monotonic() - self.t0:.0f} s{self._eta()})", markup=False, highlight=False,
                       soft_wrap=True)

    def finished(self, text: str, done=None) -> None:
        """One item finished, with its verdict: a line of its own, on a
        terminal above the bar, in a log as ``[done/total] text``."""
        import time
        if self.quiet:
            return
        done = self.done + 1 if done is None else done
        if self._done0 is None:                     # what was done before the first item finished here
            self._done0 = done - 1
        self.done = done
        count = f"[{self.done}/{self.total}] " if self.total else ""
        line = f"{count}{text} ({time.monotonic() - self.t0:.0f} s{self._eta()})"
        if self._bar is not None:
            self._bar.console.print(line, markup=False, highlight=False, soft_wrap=True)
            self._bar.update(self._task, completed=self.done, total=self.total)
        else:
            self.err.print(line, markup=False, highlight=False, soft_wrap=True)

    def update(self, description: str, done=None, total=None) -> None:
        if self.quiet:
            return
        self.desc = description
        self.done = self.done if done is None else done
        self.total = self.total if total is None else total
        if self._bar is not None:
            self._bar.update(self._task, description=description, completed=self.done, total=self.total)
        else:
            self._line()

    def advance(self) -> None:
        self.update(self.desc, self.done + 1)

    def __exit__(self, *exc):
        self._stop.set()
        if self._bar is not None:
            self._bar.__exit__(*exc)
        return False


def positive(value):
    """A typer callback: the option's value must be above 0."""
    import typer
    if value is not None and value <= 0:
        raise typer.BadParameter(f"{value} (must be above 0)")
    return value


def at_least(lo: int):
    """A typer callback: the option's value must be >= ``lo``; the message
    names the bad value."""
    def check(value):
        import typer
        if value is not None and value < lo:
            raise typer.BadParameter(f"{value} (must be at least {lo})")
        return value
    return check
