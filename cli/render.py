"""Human rendering of results: tables and counterexamples (rich)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Optional

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
    from groupcheck.core.trace.reader import trace_files
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
    from groupcheck.conformance.pipeline import spark
    from pyspark import SparkContext     # lazy: pyspark is heavy and only this path needs it
    if SparkContext._active_spark_context is not None:
        return spark.session(master)
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
    try:
        d = json.loads((p / MARK).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return d if isinstance(d, dict) else None


def _brief_params(params: Any) -> str:
    if isinstance(params, dict):
        return ", ".join(f"{k}={v}" for k, v in params.items())
    return str(params)


def progress(description: str = "", total=None, quiet: bool = False, *, as_json: bool = False,
             costs: Optional[dict] = None, after: float = 0.0, clock=None):
    """Progress of a long command, always on stderr (stdout is the result):
    a rich bar on a terminal; elsewhere a plain line per item and at least
    one every HEARTBEAT seconds while work goes on; with ``as_json`` the same
    lines as JSON objects.  Each says done/total of the items that run, the
    rate and the time left (core/progress.py ``Work``: the pace so far
    times the estimated cost of what is left; ``costs`` maps each item's key
    to its estimate, else items count alike).  A command that is often
    quick passes ``after``: nothing is said before it has run that long.
    ``clock`` is injected by tests."""
    return _Progress(description, total, quiet, as_json, costs, clock, after)


def _seconds(s: float) -> str:
    return f"{s / 60:.0f} min" if s >= 90 else f"{s:.0f} s"


class _Progress:
    HEARTBEAT = 25.0     # seconds: a line at least every 30 s even when the beat thread (1 s) runs late under load

    def __init__(self, description, total, quiet, as_json=False, costs=None, clock=None, after=0.0):
        from groupcheck.core.progress import Work
        self.err = console(stderr=True)
        self.quiet, self.as_json = quiet, as_json
        self.tty = self.err.is_terminal and not as_json
        self.clock = clock or time.monotonic
        self.desc = description
        self.t0 = self.said = self.clock()
        self.after, self._shown = after, False
        self.work = Work(self.t0, costs)
        self._keyed = bool(costs)
        self.stage = ""
        if total is not None and not costs:
            self.work.count(0, total, self.t0)
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._bar = None
        self._thread = None

    # done/total of the items that run
    @property
    def done(self) -> int:
        return self.work.done

    @property
    def total(self):
        return self.work.total if self.work.pending or self.work.done else None

    def plan(self, costs: dict) -> None:
        """The items to run (key -> estimated cost), told once they are known."""
        with self._lock:
            self.work.plan(costs, self.clock())
            self._keyed = True
            self._refresh()

    def start(self, key) -> None:
        """The planned item ``key`` runs from now (no line of its own)."""
        with self._lock:
            self.work.start(key, self.clock())

    def queue(self, jobs_in_order: list, jobs: int) -> None:
        """A pool's jobs (keys, or lists of the keys one run finishes),
        started in this order, ``jobs`` at once."""
        with self._lock:
            self.work.queue(jobs_in_order, jobs, self.clock())

    def __enter__(self):
        if self.quiet:
            return self
        if self.tty:
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
            self._bar = Progress(TextColumn("{task.description}"), BarColumn(),
                                 TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                                 TextColumn("{task.fields[eta]}"), console=self.err, transient=True)
            self._bar.__enter__()
            self._task = self._bar.add_task(self.desc, total=self.total, eta="")
        elif self.desc and not self.after:
            self._line("start")

        def beat():
            while not self._stop.wait(1.0):
                self.beat()
        self._thread = threading.Thread(target=beat, daemon=True)
        self._thread.start()
        return self

    def beat(self) -> None:
        """The heartbeat: the current line again once HEARTBEAT seconds passed
        without one (the bar's time left, on a terminal)."""
        with self._lock:
            if self.quiet:
                return
            if self._bar is not None:
                self._refresh()
            elif self.clock() - self.said >= self.HEARTBEAT or not self._shown and self.clock() - self.t0 >= self.after > 0:
                self._line("heartbeat")

    def figures(self) -> dict:
        """done, total, elapsed, rate per minute and seconds left, now."""
        now = self.clock()
        left, rate = self.work.left(now), self.work.rate(now)
        return {"done": self.done, "total": self.total, "elapsed_s": round(now - self.t0, 1),
                "rate_per_min": None if rate is None else round(rate, 2),
                "eta_s": None if left is None else round(left, 1)}

    def _eta(self, f: dict) -> str:
        if f["eta_s"] is None or f["total"] is None or f["done"] >= f["total"]:
            return ""
        rate = "" if f["rate_per_min"] is None else f"{f['rate_per_min']:.1f}/min; "
        return f"; {rate}about {_seconds(f['eta_s'])} left"

    def _say(self, event: str, text: str, f: dict) -> None:
        if self.clock() - self.t0 < self.after:
            return
        self.said, self._shown = self.clock(), True
        if self.as_json:
            print(json.dumps({"progress": event, "what": text, **f}, ensure_ascii=False), file=sys.stderr, flush=True)
            return
        count = f"[{f['done']}/{f['total']}] " if f["total"] else ""
        prefix = "still working: " if event == "heartbeat" else ""
        line = (f"{prefix}{text} {count.strip()}" if event != "done" else f"{count}{text}").strip() \
            + f" ({f['elapsed_s']:.0f} s{self._eta(f)})"
        (self._bar.console if self._bar is not None else self.err).print(line, markup=False, highlight=False,
                                                                        soft_wrap=True)

    def _line(self, event: str) -> None:
        self._say(event, self.desc + (f", {self.stage}" if self.stage else ""), self.figures())

    def _refresh(self) -> None:
        if self._bar is not None:
            f = self.figures()
            self._bar.update(self._task, description=self.desc + (f", {self.stage}" if self.stage else ""), completed=self.done, total=self.total,
                             eta=self._eta(f).lstrip("; "))

    def finished(self, text: str, done=None, key=None) -> None:
        """One item finished, with its verdict: a line of its own (on a
        terminal above the bar), ``[done/total] text``.  ``key`` names the
        planned item; without a plan ``done`` counts items alike."""
        with self._lock:
            now = self.clock()
            if self._keyed:
                self.work.finish(key, now)
            else:
                done = self.done + 1 if done is None else done
                self.work.count(done, max(self.total or 0, done), now)
            self.stage = ""
            if self.quiet:
                return
            self._say("done", text, self.figures())
            self._refresh()

    def update(self, description: str, done=None, total=None) -> None:
        """What runs now; ``done``/``total`` count items alike (a plan, if
        any, knows better and they are ignored)."""
        with self._lock:
            self.desc, self.stage = description, ""
            if not self._keyed and (done is not None or total is not None):
                self.work.count(self.done if done is None else done,
                                total if total is not None else self.total, self.clock())
            if self.quiet:
                return
            if self._bar is not None:
                self._refresh()
            else:
                self._line("start")

    def advance(self) -> None:
        self.update(self.desc, self.done + 1)

    def tick(self, stage: str, done: int, total=None) -> None:
        """core/progress.py's reporter: how far the item in hand got
        (records read, tasks done), said by the next line."""
        with self._lock:
            self.stage = f"{stage} {done:,}" + (f" of {total:,}" if total else "")
            if not self._keyed and total:       # no items of its own: these are the items
                self.work.count(done, total, self.clock())
            self._refresh()

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
