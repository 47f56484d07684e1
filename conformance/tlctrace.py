"""TLC trace validation (docs/architecture.md, "The chain of evidence", link (3)): the TLA+ spec itself
judges an implementation trace.

Theory of operation
-------------------
Each protocol's conformance module names its trace spec in
``PROTOCOL.tla_trace`` (a :class:`TLATrace`): ``spec/<P>/Trace<P>.tla`` and
``Trace<P>.cfg``, in the shape of etcd-io/raft's ``Traceetcdraft.tla`` and
tlaplus/Examples' ``EWD998ChanTrace.tla``.  A loaded trace
(``core.trace.reader.load``: format 2, deltas, per-node files merged) is
written as the module ``TraceLog`` defining ``Log``, a sequence of records
``[name, nid, params, msg, state, logged]`` (``logged``: the record's
state is logged, even empty), in a temporary directory beside copies of
the spec folder's modules (never into the repository).  The JSON values map
one to one onto TLA+ values: numbers, strings and booleans as such; an object
whose keys are all digits is a function on those numbers, any other object a
record, the empty object ``<< >>`` (the empty function, whose DOMAIN is {});
a list is a sequence unless its key is one of the protocol's ``sets``.  A
field the record does not carry is absent from the TLA+ record: the trace spec
tests ``"k" \\in DOMAIN Rec.state`` and leaves what is not logged to TLC's
non-determinism.

Verdict.  TLC explores every behaviour of the trace spec, i.e. every spec
behaviour that matches a prefix of the log; each TraceNext step advances the
cursor ``l`` by one, so TLC's search depth is the cursor of the deepest
states.  Depth ``Len(Log) + 1`` means some behaviour consumed the whole log
(accepted); a smaller depth ``d`` means record ``d`` (1-based) is the first
line no behaviour matches.  The cfg checks no invariant: ``TraceMatched`` as
an invariant would say the same, but TLC would print the whole matching
behaviour, whose states grow with the log (measured: most of the time on a
3,000-event log).

Safety properties.  A trace spec whose protocol's properties are state
invariants of its spec judges them on the trace (``TLATrace.properties``,
the fields of the trace spec's ``Kept``: SEQUENCER's NoDuplicates,
Integrity, SenderFIFO, TotalOrder; FLUSH's, STABLE's, the ring's and FLUSH
over the ring's invariants; not yet SEQUENCER over FLUSH's).  Its
cfg's ACTION_CONSTRAINT ``TraceKeeps`` prunes every step that breaks one,
so no invariant is violated and nothing is printed: the semantics is that
record ``d`` breaks a property when every behaviour matching records
1..``d`` has broken one by then, never when only some has (a state's
unlogged variables are TLC's choice, and one choice breaking a property is
no verdict on the implementation).  The search then stops at ``d`` as for
an unmatched record; a second run, with ``DiagAt = d`` and without
``TraceDiagnostic``, keeps the steps at ``d`` and prints what each breaks
(``groupcheck-broken``, with the state after the step), and keeps every
step after ``d``, so its depth is the step verdict on the rest of the log.
When nothing is printed, record ``d`` is a step no behaviour matches, and
the diagnostics run follows (below): a rejected step costs three runs
where the trace spec judges properties.  ``TLCVerdict`` carries both:
``ok``/``first_unmatched`` for the steps, ``broken_at``/``broken`` for the
properties (those every behaviour broke at ``d``).  GapFreeFIFO, stated
for senders that never crash, stays with the replay: a state of a trace
cannot know whether a sender crashes later.  But the run's end is known:
at an end record that says quiescent, the log gets one more entry, END
(``log_entries``), which the trace spec's End step takes without changing
the state, judging there what the claim promises (``TLATrace.end``: the
fields of its ``EndKept``, the same properties the binding's ``at_end``
judges on its candidates), pruned by ``TraceKeeps`` like a step that
breaks a safety property: a false claim is a property broken at END.
:func:`agrees` compares both verdicts with the replay's
(``RunReport.broken``: each property its histories or candidates break,
with the first record where they do).

Diagnostics.  A rejected log is run once more with ``DiagAt == depth`` and
the invariant ``TraceDiagnostic`` (each trace spec defines it): for every
distinct state whose cursor stands at the unmatched record it prints, with
``PrintT``, the variables that matter (``DiagVars``) and, on a line of its
own, the spec actions enabled there (``DiagEnabled``, a set of strings).  ``PrintT`` is TRUE, so the run is complete.

Coverage.  An accepted log's records name spec actions; :func:`coverage`
merges counts per action and per action x parameter shape over many logs and
names the trace spec's ``<Action>IfLogged`` predicates never exercised.
"""
from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from groupcheck.conformance.replay import registry as protocols
from groupcheck.conformance.replay.engine import quiescent
from groupcheck.model.tlc import run_tlc, STACK
from groupcheck.model.values import Fn, to_tla
from groupcheck.spec import spec_root


class NoVerdict(RuntimeError):
    """TLC ended without accepting or rejecting the log (a limit it hit, a
    tool error): ``reason`` is one line with the remedy; TLC's whole output
    is kept in ``log``."""

    def __init__(self, reason: str, log: Path | None) -> None:
        self.reason, self.log = reason, log
        super().__init__(reason + (f" (TLC's output: {log})" if log else ""))


def _no_verdict(res, protocol: str, entries: int, timeout: float) -> NoVerdict:
    """Why TLC gave no verdict, in one line, and where its output was kept."""
    out = res.raw_output or ""
    if res.outcome == "timeout":
        why = f"TLC did not finish within {timeout:g} s on a log of {entries} entries"
    elif "StackOverflowError" in out:
        xss = next((a for a in (getattr(res, "command", None) or ()) if str(a).startswith("-Xss")), f"-Xss{STACK}")
        why = (f"TLC ran out of stack (java.lang.StackOverflowError) on a log of {entries} entries "
               f"with {xss}; split the run or raise groupcheck.model.tlc.STACK")
    elif "OutOfMemoryError" in out:
        why = f"TLC ran out of memory (java.lang.OutOfMemoryError) on a log of {entries} entries"
    elif "The exception was a" in out:      # TLC's own limit or an evaluation error, with its message
        exc = out.split("The exception was a", 1)[1].strip().splitlines()
        text = " ".join(x.strip() for x in exc[:2]).lstrip(": ").strip()
        hint = ("; TLC's -maxSetSize bounds it" if "set with too many elements" in text else "")
        why = f"TLC stopped on a log of {entries} entries: {text[:200]}{hint}"
    elif res.error_message:
        first = res.error_message.strip().splitlines()[0] if res.error_message.strip() else "error"
        loc = f" at {res.error_location}" if getattr(res, "error_location", None) else ""
        why = f"TLC stopped with an error{loc}: {first[:200]}"
    else:
        why = f"TLC gave no verdict on the trace of {protocol} (exit code {res.exit_code})"
    fd, name = tempfile.mkstemp(prefix=f"groupcheck-tlctrace-{protocol}-", suffix=".log")
    with open(fd, "w", encoding="utf-8") as f:
        f.write(out)
    return NoVerdict(why, Path(name))


DIAG_MAX_STATES = 5          # states shown in a diagnostic (the count says how many matched)


@dataclass(frozen=True)
class TLATrace:
    """How one protocol's trace is given to its trace spec."""
    sets: frozenset = frozenset()            # keys whose JSON lists are TLA+ sets
    # header constants -> TLC CONSTANTS values (default: every header constant)
    constants: Optional[Callable[[dict], dict]] = None
    # event -> event as given to the log (e.g. fields renamed to the spec's)
    encode: Optional[Callable[[dict], dict]] = None
    # the trace -> the log's entries, when one spec step is logged as several
    # records (SEQUENCER over FLUSH's half-steps); each entry keeps the `i` of
    # its first record and, as `parts`, the `i` of every record it joins
    prepare: Optional[Callable[[Any], list]] = None
    # the binding's variable names -> the trace spec's, where they differ
    var_names: dict = field(default_factory=dict)
    # the safety properties the trace spec judges on every step (the fields
    # of its ``Kept``), named as the replay names them; () : steps only
    properties: tuple = ()
    # the end-of-run properties its End step judges (the fields of its
    # ``EndKept``), as the binding's ``at_end`` names them: a run whose end
    # record says quiescent is given one more log entry, END, after its
    # last record, and a property it breaks there is broken at that entry
    end: tuple = ()


# The log entry that stands for an end record saying quiescent (``log_entries``)
END = "End"


@dataclass
class TLCVerdict:
    ok: bool
    events: int
    first_unmatched: int | None   # event index `i` of the first record no behaviour matches
    seconds: float
    detail: str
    record: dict | None = None                       # the unmatched record
    matched_before: list[str] = field(default_factory=list)   # DiagVars of the states before it (TLA+ text)
    matched_count: int = 0                           # how many distinct states matched the line before
    enabled: list[str] = field(default_factory=list)  # spec actions enabled in those states (union)
    # the records the unmatched log entry joins (one, unless the protocol joins records into a step)
    unmatched_records: list[int] = field(default_factory=list)
    # a safety property broken: the record (event index `i`) at which every
    # behaviour matching the log up to it has broken one of the trace spec's
    # properties, those broken there, and the spec states after that step
    broken_at: int | None = None
    broken: list[str] = field(default_factory=list)
    broken_records: list[int] = field(default_factory=list)
    broken_states: list[str] = field(default_factory=list)
    broken_record: dict | None = None               # that record, as written

    @property
    def clean(self) -> bool:
        """Every step matched and no property broken."""
        return self.ok and self.broken_at is None

    def to_json(self) -> dict:
        out = {"checker": "tlc", "ok": self.ok, "events": self.events,
               "first_unmatched": self.first_unmatched, "seconds": round(self.seconds, 3),
               "detail": self.detail}
        if not self.ok and self.record is not None:
            out.update(record=self.record, matched_before=self.matched_before,
                       matched_count=self.matched_count, enabled=self.enabled,
                       unmatched_records=self.unmatched_records)
        if self.broken_at is not None:
            out.update(broken_at=self.broken_at, broken=self.broken, broken_records=self.broken_records,
                       broken_record=self.broken_record, broken_states=self.broken_states)
        return out

    def broken_detail(self) -> str:
        rec = self.broken_record or {}
        at = f"event {self.broken_at} ({rec.get('name')}" + (f" at node {rec['nid']}" if rec.get("nid") is not None else "") + ")"
        return (f"{' and '.join(self.broken)} broken at {at}: every behaviour of the spec that matches the "
                f"log up to it breaks {'it' if len(self.broken) == 1 else 'them'} there")

    def explain(self) -> str:
        """Human text of a rejection or a property broken (empty when clean)."""
        if self.clean:
            return ""
        lines = []
        if self.broken_at is not None:
            lines.append(self.broken_detail())
            if self.broken_record is not None:
                lines.append("record: " + _compact(self.broken_record))
            if self.broken_states:
                lines.append(f"{len(self.broken_states)} spec state(s) after it"
                             + (" (first shown)" if len(self.broken_states) > 1 else "") + ":")
                lines += state_lines(self.broken_states, self.broken_record)
            if self.ok:
                return "\n".join(lines)
        lines.append(self.detail)
        if self.record is not None:
            lines.append("record: " + _compact(self.record))
        if self.matched_count:
            shown = len(self.matched_before)
            lines.append(f"{self.matched_count} spec state(s) matched the line before"
                         + (f" (first {shown} shown)" if shown < self.matched_count else "") + ":")
            lines += state_lines(self.matched_before, self.record, every=True)
            lines.append("actions enabled there: " + (", ".join(self.enabled) or "none"))
        return "\n".join(lines)


VALUE_CHARS = 160    # a variable's value in an explanation: longer ones keep their two ends


def record_fields(text: str) -> Optional[list[tuple[str, str]]]:
    """The fields of a TLA+ record as TLC prints it (``[ a |-> 1, b |-> {2} ]``),
    each (name, value text); None for text that is not a record."""
    t = text.strip()
    if not (t.startswith("[") and t.endswith("]")) or "|->" not in t:
        return None
    parts, depth, cur, in_str = [], 0, [], False
    body = t[1:-1]
    k = 0
    while k < len(body):
        c = body[k]
        if in_str:
            cur.append(c)
            if c == "\\" and k + 1 < len(body):
                cur.append(body[k + 1]); k += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True; cur.append(c)
        elif body.startswith("<<", k):
            depth += 1; cur.append("<<"); k += 1
        elif body.startswith(">>", k):
            depth -= 1; cur.append(">>"); k += 1
        elif c in "[{(":
            depth += 1; cur.append(c)
        elif c in "]})":
            depth -= 1; cur.append(c)
        elif c == "," and depth == 0:
            parts.append("".join(cur)); cur = []
        else:
            cur.append(c)
        k += 1
    parts.append("".join(cur))
    out = []
    for part in parts:
        name, sep, value = part.partition("|->")
        if not sep:
            return None
        out.append((name.strip(), value.strip()))
    return out


def _elide(value: str, width: int = VALUE_CHARS) -> str:
    if len(value) <= width:
        return value
    head, tail = width // 3, width - width // 3
    return f"{value[:head]} … ({len(value) - width:,} characters) … {value[-tail:]}"


def state_lines(states: list[str], record: Optional[dict], every: bool = False) -> list[str]:
    """Spec states for a reader: the first state (``every``: each one)
    reduced to the variables that matter there: those the record's step
    logs, and those on which the states shown differ; each value cut to
    its two ends past ``VALUE_CHARS``; the rest named in one line.  A state
    that is not a record is shown as it is, cut the same way."""
    parsed = [record_fields(x) for x in states]
    if any(p is None for p in parsed):
        return ["  " + _elide(x, 4 * VALUE_CHARS) for x in (states if every else states[:1])]
    logged = set((record or {}).get("state") or ())
    differ = {n for n in {n for p in parsed for n, _ in p} if len({dict(p).get(n) for p in parsed}) > 1}
    keep = logged | differ
    out = []
    for k, p in enumerate(parsed if every else parsed[:1]):
        shown = [(n, v) for n, v in p if n in keep] or p
        if every and len(parsed) > 1:
            out.append(f"  state {k + 1}:")
        out += [f"    {n} |-> {_elide(v)}" if every and len(parsed) > 1 else f"  {n} |-> {_elide(v)}" for n, v in shown]
        rest = [n for n, _ in p if (n, dict(p)[n]) not in shown]
        if rest and shown is not p:
            same = " and the same in every state shown" if len(parsed) > 1 else ""
            out.append(("    " if every and len(parsed) > 1 else "  ") + f"({len(rest)} other variable(s), not "
                       f"logged by this step{same}: {', '.join(rest)})")
    return out


def _compact(ev: dict) -> str:
    return json.dumps({k: ev[k] for k in ("i", "name", "nid", "params", "msg", "state") if k in ev},
                      sort_keys=True, separators=(",", ":"))


# --- which protocols have a trace spec ----------------------------------------------------

def _binding(protocol: str):
    try:
        proto = protocols.get(protocol)
    except protocols.UnknownProtocol:
        return None, None
    tt = proto.tla_trace
    if tt is None:
        return proto, None
    folder = spec_root() / proto.spec
    if not (folder / f"Trace{proto.spec}.tla").is_file():
        return proto, None
    return proto, tt


def supported(protocol: str) -> bool:
    return _binding(protocol)[1] is not None


def supported_protocols() -> list[str]:
    return [p for p in protocols.available() if supported(p)]


def spec_actions(protocol: str) -> list[str]:
    """The trace spec's actions: every ``<Action>IfLogged`` it defines."""
    proto, _ = _binding(protocol)
    text = (spec_root() / proto.spec / f"Trace{proto.spec}.tla").read_text(encoding="utf-8")
    return sorted(set(re.findall(r"^(\w+)IfLogged\s*==", text, re.M)))


# --- the log module -----------------------------------------------------------------------

TLC_INT_MIN, TLC_INT_MAX = -(1 << 31), (1 << 31) - 1     # TLC's integers are 32-bit (the format's are 64-bit)


def _beyond_tlc(trace) -> Optional[str]:
    """The first integer TLC would be given that it cannot hold (a constant,
    or a record's nid, params, msg or state), as ``where: field: value``;
    None when there is none."""
    def walk(x, at: str):
        if type(x) is int and not TLC_INT_MIN <= x <= TLC_INT_MAX:
            return f"{at}: {x}"
        items = x.items() if type(x) is dict else enumerate(x) if type(x) in (list, tuple) else ()
        for k, v in items:
            found = walk(v, f"{at}.{k}" if type(x) is dict else f"{at}[{k}]")
            if found:
                return found
        return None
    found = walk(trace.header.get("constants") or {}, f"{trace.path}:1: constants")
    for ev in trace.events if not found else ():
        where = ev.get("src") or f"event {ev.get('i')}"
        for key in ("nid", "params", "msg", "state"):
            found = walk(ev.get(key), f"{where}: {key}")
            if found:
                return found
    return found

def _value(v: Any, key: str | None, sets: frozenset) -> Any:
    """A JSON value as a canonical TLA+ value (model/values.py)."""
    if isinstance(v, bool) or isinstance(v, (int, str)):
        return v
    if isinstance(v, frozenset):        # already shaped by the protocol's prepare
        return frozenset(_value(x, None, sets) for x in v)
    if isinstance(v, tuple):
        return tuple(_value(x, None, sets) for x in v)
    if isinstance(v, Fn):
        return Fn({k: _value(x, None, sets) for k, x in v.items()})
    if isinstance(v, list):
        xs = [_value(x, None, sets) for x in v]
        return frozenset(xs) if key in sets else tuple(xs)
    if isinstance(v, dict):
        if v and all(isinstance(k, str) and k.isdigit() for k in v):
            return Fn({int(k): _value(x, k, sets) for k, x in v.items()})
        return Fn({k: _value(x, k, sets) for k, x in v.items()})
    if v is None:
        return Fn({})
    raise TypeError(f"no TLA+ value for {v!r}")


def record_tla(ev: dict, tt: TLATrace) -> str:
    e = tt.encode(ev) if tt.encode else ev
    rec = Fn({"name": e["name"],
              "nid": int(e["nid"]) if e.get("nid") is not None else 0,
              "params": _value(e.get("params") or {}, None, tt.sets),
              "msg": _value(e.get("msg") or {}, None, tt.sets),
              "state": _value(e.get("state") or {}, None, tt.sets),
              # whether the state is logged at all: None and {} are both the
              # empty record above, and a protocol whose logged state is a
              # complete delta (raincoreflush) must tell "nothing changed"
              # from "not logged"
              "logged": e.get("state") is not None})
    return to_tla(rec)


def observed(trace, proto, tt: TLATrace) -> list[str]:
    """The observable variables the run's implementation logs, under the
    trace spec's names: the header's ``observed``, else every one the
    protocol's binding declares (its FIELDS): the spec holds each one a
    logged state leaves out unchanged, as the replay does."""
    names = trace.header.get("observed")
    names = proto.binding.FIELDS if names is None else names
    return sorted({tt.var_names.get(v, v) for v in names if v not in proto.binding.LAZY})


def tracelog_module(events: list[dict], tt: TLATrace, diag_at: int = 0, observed_vars=()) -> str:
    body = ",\n    ".join(record_tla(ev, tt) for ev in events)
    return ("---- MODULE TraceLog ----\nEXTENDS Naturals, Sequences, TLC\n"
            f"Log == <<\n    {body}\n    >>\n"
            f"Observed == {to_tla(frozenset(observed_vars))}\n"
            f"DiagAt == {int(diag_at)}\n====\n")


def cfg_text(protocol: str, constants: dict, *, diagnose: bool = False) -> str:
    """The cfg TLC runs: the header's constants before the spec folder's
    Trace<P>.cfg, without TraceMatched, and with ``diagnose`` the invariant
    TraceDiagnostic (which prints the states and enabled actions at DiagAt)."""
    proto, tt = _binding(protocol)
    consts = tt.constants(constants) if tt.constants else constants
    lines = ["CONSTANTS"] + [f"    {k} = {to_tla(v)}" for k, v in consts.items()]
    base = (spec_root() / proto.spec / f"Trace{proto.spec}.cfg").read_text(encoding="utf-8")
    # acceptance is read from the search depth; TraceMatched as an invariant
    # would make TLC print the whole behaviour (see the module docstring)
    base = "\n".join(ln for ln in base.splitlines() if ln.split() != ["INVARIANT", "TraceMatched"]) + "\n"
    if diagnose:
        base += "\nINVARIANT TraceDiagnostic\n"
    return "\n".join(lines) + "\n" + base


_DEPTH = re.compile(r"The depth of the complete state graph search is (\d+)")
_PRINTED = re.compile(r'^<<\s*"groupcheck-(diag|enabled|broken)",')


def _printed(out: str) -> list[tuple[str, str]]:
    """The values TraceDiagnostic printed, each on one line (TLC pretty-prints
    a long value over several lines; a block ends at the next print or frame)."""
    blocks: list[tuple[str, list[str]]] = []
    for line in out.splitlines():
        m = _PRINTED.match(line)
        if m:
            blocks.append((m.group(1), [line[m.end():]]))
        elif line.startswith("@!@!@") or not blocks:
            if blocks and blocks[-1][0] != "done":
                blocks.append(("done", []))
        elif blocks[-1][0] != "done":
            blocks[-1][1].append(line)
    out_blocks = []
    for tag, lines in blocks:
        if tag == "done":
            continue
        text = " ".join(x.strip() for x in lines).strip()
        out_blocks.append((tag, text[:-2].strip() if text.endswith(">>") else text))
    return out_blocks


def log_entries(trace, tt: TLATrace) -> list[dict]:
    """The log TLC reads: the records (as ``prepare`` joins or shapes them)
    and, when the end record says the run ended quiescent and the trace
    spec judges the end (``end``), one END entry: its ``i`` is the number of
    records, where the replay notes the end-of-run properties it finds
    broken (``Binding.judge_end``)."""
    out = tt.prepare(trace) if tt.prepare else trace.events
    if tt.end and quiescent(trace):
        out = list(out) + [{"i": len(trace.events), "name": END, "nid": None, "params": {}, "msg": None,
                            "state": None}]
    return out


def _run(trace, tt: TLATrace, proto, *, diag_at: int = 0, timeout: float, workers: int = 1,
         diagnose: bool | None = None):
    tmp = Path(tempfile.mkdtemp(prefix="groupcheck-tlctrace-"))
    try:
        for f in (spec_root() / proto.spec).glob("*.tla"):
            if not f.name.startswith("MC"):
                shutil.copy(f, tmp / f.name)
        (tmp / "TraceLog.tla").write_text(tracelog_module(log_entries(trace, tt), tt, diag_at,
                                                          observed(trace, proto, tt)), encoding="utf-8")
        return run_tlc(tmp, f"Trace{proto.spec}", None,
                       cfg_text=cfg_text(proto.name, trace.header["constants"],
                                         diagnose=bool(diag_at) if diagnose is None else diagnose),
                       timeout=timeout, check_deadlock=False, workers=workers)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def broken_properties(broken: list[str]) -> list[str]:
    """The properties TLC's log reports broken at a record, from its
    ``broken`` blocks (one per behaviour matching the log there, each
    ``{"P", "Q"}, state``): every behaviour broke one, so those that every
    behaviour broke (the intersection); when no property is broken by all,
    each one that some behaviour broke (the union), sorted."""
    names = [set(re.findall(r'"([^"]*)"', b.split("}", 1)[0])) for b in broken]
    return sorted(set.intersection(*names) or set.union(*names))


def validate(trace, *, timeout: float = 600.0, diagnose: bool = True) -> TLCVerdict:
    """TLC's verdict on a loaded trace (core.trace.reader.Trace)."""
    protocol = trace.header["protocol"]
    proto, tt = _binding(protocol)
    if tt is None:
        raise ValueError(f"no TLA+ trace spec for protocol {protocol!r} "
                         f"(only: {', '.join(supported_protocols())})")
    events = log_entries(trace, tt)
    # the verdict counts the log's steps, not the END entry (no record)
    steps = len(events) - (1 if events and events[-1]["name"] == END and events[-1].get("nid") is None else 0)
    t0 = time.monotonic()
    if not events:
        return TLCVerdict(True, 0, None, 0.0, "empty trace")
    beyond = _beyond_tlc(trace)
    if beyond:      # a legal trace (64-bit integers) that TLC cannot represent: no verdict, and no TLC started
        raise NoVerdict(f"{beyond} is beyond TLC's integers ({TLC_INT_MIN}..{TLC_INT_MAX}): "
                        f"TLC cannot check this trace (the model replay can: --checker model)", None)
    res = _run(trace, tt, proto, timeout=timeout)
    depth = _depth(res, protocol, len(events), timeout)   # states at depth d have l = d
    if depth == len(events) + 1:
        return TLCVerdict(True, steps, None, time.monotonic() - t0, "TLC consumed the whole log")
    v = TLCVerdict(True, steps, None, 0.0, "TLC consumed the whole log")
    # Record `depth` is the first that no behaviour matches, or (with the trace
    # spec's properties) the first at which every behaviour matching the log
    # up to it breaks one; a second run tells which (TraceKeeps).  It goes
    # without TraceDiagnostic: the actions enabled at a broken record are not
    # needed, and ENABLED on a long run's state took minutes (a JGroups trace).
    blocks: list = []
    if tt.properties or tt.end:
        d = _run(trace, tt, proto, diag_at=depth, timeout=timeout, diagnose=False)
        broken = [b for tag, b in _printed(d.raw_output) if tag == "broken"]
        if broken:
            ev = events[depth - 1]
            v.broken_at = ev["i"]
            v.broken = broken_properties(broken)
            v.broken_records = list(ev.get("parts") or [ev["i"]])
            v.broken_record = _reported(trace, ev)
            v.broken_states = sorted({b.split("}", 1)[1].lstrip(", ").strip() for b in broken})[:DIAG_MAX_STATES]
            # the run after the broken record kept every step: its depth is the
            # step verdict on the rest of the log
            after = _depth(d, protocol, len(events), timeout)
            if after == len(events) + 1:
                v.seconds = time.monotonic() - t0
                return v
            depth = after
        elif diagnose:          # a step no behaviour matches: the states and actions there
            blocks = _printed(_run(trace, tt, proto, diag_at=depth, timeout=timeout).raw_output)
    elif diagnose:
        blocks = _printed(_run(trace, tt, proto, diag_at=depth, timeout=timeout).raw_output)
    idx = depth - 1
    ev = events[idx]
    v.ok, v.first_unmatched = False, ev["i"]
    v.detail = (f"no behaviour of the spec matches event {ev['i']} ({ev['name']}"
                + (f" at node {ev['nid']}" if ev.get("nid") is not None else "") + ")")
    v.record = _reported(trace, ev)
    v.unmatched_records = list(ev.get("parts") or [ev["i"]])
    if diagnose and blocks:
        states = sorted({b for tag, b in blocks if tag == "diag"})
        enabled = {x for tag, b in blocks if tag == "enabled" for x in re.findall(r'"([^"]*)"', b)}
        v.matched_count = len(states)
        v.matched_before = states[:DIAG_MAX_STATES]
        v.enabled = sorted(enabled)
    v.seconds = time.monotonic() - t0
    return v


def _depth(res, protocol: str, entries: int, timeout: float) -> int:
    """TLC's search depth of a complete run (else NoVerdict)."""
    m = _DEPTH.search(res.raw_output)
    if not (m and "Model checking completed. No error has been found" in res.raw_output):
        raise _no_verdict(res, protocol, entries, timeout)
    return int(m.group(1))


def _plain(x: Any) -> Any:
    """A log value as JSON: sets and tuples as lists, functions as objects."""
    if isinstance(x, frozenset):
        return sorted((_plain(y) for y in x), key=repr)
    if isinstance(x, (tuple, list)):
        return [_plain(y) for y in x]
    if isinstance(x, (dict, Fn)):
        return {k: _plain(y) for k, y in x.items()}
    return x


def _reported(trace, ev: dict) -> dict:
    """The unmatched record as the user wrote it: the trace's own record when
    the log entry stands for one record (a ``prepare`` that only reshapes,
    as FLUSH's ids for DATA), else the entry, as JSON."""
    src = ev
    if "parts" not in ev:
        src = next((e for e in trace.events if e["i"] == ev["i"]), ev)
    return {k: _plain(src[k]) for k in ("i", "name", "nid", "params", "msg", "state") if k in src}


def agrees(v: TLCVerdict, rep) -> bool:
    """TLC's verdict and the model replay's (a replay.RunReport, or its JSON
    with the report's ``broken`` added) on one trace: on the steps, both
    accept every step, or both stop at the same event (for a log entry that
    joins several records into one spec step, the replay's event is one of
    them: TLC judges the step); and on the safety properties the trace spec
    judges (its ``properties``), both find none broken, or both name the
    same record as the first at which one breaks, and the same properties
    broken there; the end-of-run properties the trace spec's End step
    judges (its ``end``) count as broken at the END entry.  The replay's
    other properties (GapFreeFIFO, ...) are its own."""
    if isinstance(rep, dict):
        at, protocol, broken = rep["stops_conforming_at"], rep["protocol"], rep["broken"]
    else:
        at, protocol, broken = rep.stops_conforming_at, rep.protocol, rep.broken
    steps = (v.ok and at is None) or (not v.ok and at in (v.unmatched_records or [v.first_unmatched]))
    _, tt = _binding(protocol)
    mine = {p: i for p, i in (broken or {}).items() if tt is not None and (p in tt.properties or p in tt.end)}
    if not mine:
        return steps and v.broken_at is None
    first = min(mine.values())
    return (steps and v.broken_at is not None and first in (v.broken_records or [v.broken_at])
            and sorted(p for p, i in mine.items() if i == first) == v.broken)


# --- coverage -----------------------------------------------------------------------------

def _shape(ev: dict) -> str:
    """An action x parameter shape: the action, its parameter names, the
    message type and the state variables logged, e.g.
    ``Deliver(q) msg=DATA state={delivered,vid}``."""
    params = ",".join(sorted((ev.get("params") or {}).keys()))
    msg = ev.get("msg") or {}
    mt = msg.get("type") if isinstance(msg, dict) else None
    st = ",".join(sorted((ev.get("state") or {}).keys()))
    return f"{ev['name']}({params})" + (f" msg={mt}" if mt else "") + (f" state={{{st}}}" if st else "")


def coverage(protocol: str, traces: list) -> dict:
    """Action coverage merged over accepted traces of one protocol.  Counted
    on the log TLC validated: where a protocol joins several records into one
    spec step (SEQUENCER over FLUSH), each joined step counts once, under the
    spec action it is."""
    proto, tt = _binding(protocol)
    actions: Counter = Counter()
    shapes: Counter = Counter()
    for t in traces:
        for ev in (log_entries(t, tt) if tt is not None else t.events):
            if ev["name"] == END and ev.get("nid") is None:
                continue            # the end record, no action
            actions[ev["name"]] += 1
            shapes[_shape(ev)] += 1
    known = spec_actions(protocol)
    return {"protocol": protocol, "traces": len(traces),
            "actions": {a: actions.get(a, 0) for a in known} | {a: n for a, n in actions.items() if a not in known},
            "shapes": dict(sorted(shapes.items())),
            "never": [a for a in known if not actions.get(a)]}
