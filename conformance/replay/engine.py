"""Conformance verdicts: the one replay engine and the report of one run.

Theory of operation
-------------------
conformance/replay/conform.py's ``conform_file`` loads and validates a trace
(core/trace/reader.py), then hands it to its protocol's replay
(conformance/replay/registry.py), which runs this engine on the protocol's
binding: the trace against the protocol's model, then the trace
properties.  Every run
gets exactly one verdict: ``ok``; ``nonconforming`` (some event is not a step
of the model from any state consistent with the run so far); ``violation``
(the run conforms, but a trace property fails on it); ``rejected`` (the file
cannot be read or a record breaks the schema, with ``file:line``).

The engine (``ReplayEngine``).  A trace shows one node's step at a time and as much
of that node's state as its writer logged; the model state also holds what
no record shows (channels, other nodes, unlogged variables).  So the engine
keeps the SET of model states consistent with the records so far (the
candidates).  For each step (a record, or the records a protocol's pre-pass
joins into one model step) and each candidate it asks the protocol's
``Binding`` for the successors the record names (action, node, parameters;
the guard decides), keeps those whose message is the one the model takes or
sends (``Binding.message``) and whose logged variables equal the model's
(``Binding.observe``, only the variables the record logs: an unlogged one is
unknown, and every value it could have is in some candidate), and then lets
the binding ``reduce`` the successor (drop what no guard reads, such as a
delivery history, so a state does not grow with the run: per record the work
is O(record), not O(history)).  With one candidate (the usual case) the
binding may take the step in place (``Binding.accept``): it answers only
when every one of those checks passes, and anything else takes the
general way, which decides and explains.  No successor: *nonconforming*, explained
field by field (``explain``: a ``Mismatch``, the step, the action, and
each variable's model value against the logged one, as data rendered in one
place and kept on the report).  More than ``MAX_CANDIDATES``: *rejected*
(the guard against blow-up).  The candidates held are counted (``peak``)
and, up to ``VISITED_MAX`` distinct ones, kept for the pipeline's coverage.
After the last record the binding's trace properties are judged
(``Binding.properties``), and at the end of a run whose end record says
quiescent its end-of-run property (``Binding.at_end``); a failure is a
*violation* with its witness.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Optional

from groupcheck.core import progress
from groupcheck.core.trace.reader import collector_paused, Trace


MAX_CANDIDATES = 200_000    # the one guard against blow-up; never reached by simulated runs
VISITED_MAX = 50_000        # distinct candidates kept per run for coverage (beyond: coverage unknown)


class Verdict(StrEnum):
    """A run's verdict, one of six words (docs/verdicts.md),
    worst first: the order in which several verdicts on one run combine
    (a JGroups run's history and trace) and the exit rule reads them
    (cli/findings.py ``Gate``).  A str: JSON, Parquet rows and text carry the
    word itself."""
    REJECTED = "rejected"           # the input breaks the format (file:line:field), exit 2
    NONCONFORMING = "nonconforming"  # a record that is no step of the model
    VIOLATION = "violation"         # conforms, but a property fails and no documented finding covers it
    INCOMPLETE = "incomplete"       # nothing wrong seen, but not everything was checked (exit 4)
    DOCUMENTED = "documented"       # every violation has a documented finding's shape
    OK = "ok"


@dataclass
class RunReport:
    file: str
    run_id: Optional[str]
    protocol: Optional[str]
    verdict: Verdict            # a word of Verdict; a str given is checked against them
    events: int
    first_bad_event: Optional[int]
    reason: Optional[str]
    candidates_max: int = 0
    # the first event that is no step of the model (None: every step conforms).
    # Usually first_bad_event of a nonconforming run; for a violation found in
    # a conforming prefix that later stops conforming, the later event: what
    # TLC trace validation's step verdict must agree with (``broken`` below
    # is what its property verdict must agree with)
    stops_conforming_at: Optional[int] = None
    # The model states the replay held as candidates (for the pipeline's
    # coverage); None when the protocol's replay does not record them.
    visited: Optional[list] = field(default=None, repr=False, compare=False)
    # why the first bad step is no step of the model, as data (``reason`` is its text)
    mismatch: Optional["Mismatch"] = field(default=None, repr=False, compare=False)
    # a violation's documented finding (conformance/findings.py): its id when the
    # run has that finding's shape, else None; ``finding_why`` the witness or why none
    finding: Optional[str] = None
    finding_why: Optional[str] = None
    # the kind of the run's fault plan (the protocol's ``plan_kind``), for findings' rates
    plan: Optional[str] = None
    # every violation of the run, each on its own: {"property", "event" (or
    # None), "witness", "finding" (the documented finding whose shape this
    # violation's own witness has, or None), "finding_why"}; ``reason`` is
    # their text.  ``verdict`` is "documented" only when every one has a finding
    violations: list = field(default_factory=list)
    # each property judged on the steps or the delivery histories that the
    # conforming prefix breaks -> the record at which it first broke (every
    # state consistent with the run so far breaking it): what TLC trace
    # validation, which judges some of them on every step, must agree with.
    # Not in ``to_json`` (the pipeline's rows are that JSON).
    broken: dict = field(default_factory=dict, repr=False, compare=False)
    # the actions the run's steps named (the protocol's ``incomplete`` reads them)
    actions: set = field(default_factory=set, repr=False, compare=False)


    def __post_init__(self):
        self.verdict = Verdict(self.verdict)        # a word outside the six is a bug: ValueError

    def to_json(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)
                if f.name not in ("visited", "mismatch", "broken", "actions")}


@dataclass
class Mismatch:
    """Why no candidate model state takes a step: ``kind`` is ``not
    enabled`` (no candidate has the action enabled), ``message`` (the
    logged message is not the model's: ``message`` says how) or ``state``
    (the logged variables differ from the model's successor: ``fields``
    holds (variable, model's value, logged value), ``unlogged`` the changes
    the record should have logged).  ``str`` is the replay's explanation."""
    event: int
    action: str                 # the record, as ``Binding.head`` shows it
    kind: str
    candidates: int
    message: Optional[str] = None
    fields: list = field(default_factory=list)
    unlogged: list = field(default_factory=list)
    note: str = ""              # what the binding knows of the cause

    def __str__(self) -> str:
        if self.kind == "not enabled":
            return f"{self.action}: not enabled in any of {self.candidates} candidate model state(s){self.note}"
        if self.kind == "message":
            return f"{self.action}: the logged message is not the model's: {self.message}"
        lines = [f"  {var}: model {model!r} != logged {seen!r}" for var, model, seen in self.fields]
        lines += [f"  {why}" for why in self.unlogged]
        return f"{self.action}: logged state differs from the model's successor\n" + "\n".join(lines)

    def to_json(self) -> dict:
        return {"event": self.event, "action": self.action, "kind": self.kind, "candidates": self.candidates,
                "message": self.message, "fields": [list(f) for f in self.fields], "unlogged": self.unlogged,
                "note": self.note, "text": str(self)}


def settled(trace: Trace) -> bool:
    """The run's end record says it ended settled (no fault for long enough;
    docs/trace-format.md): the end-of-run property of a protocol that never
    quiesces is judged there."""
    return trace.end is not None and trace.end.get("settled") is True


def quiescent(trace: Trace) -> bool:
    """The run ended quiescent: its end record says so (a format-1 trace: its header)."""
    if trace.end is not None:
        return trace.end["quiescent"] is True
    return trace.header.get("quiescent") is True


# ---------------------------------------------------------------- the engine

class HeaderError(ValueError):
    """A header the protocol cannot replay (constants, nodes, options)."""


class Binding:
    """What a protocol supplies to the engine (override what applies).

    ``steps`` turns the events into model steps: each is a dict with at least
    ``i`` (the first record's index), ``name``, ``nid``, ``params``, ``msg``,
    ``state``; by default one per event.  SEQUENCER over FLUSH joins half
    steps here (its pre-pass)."""

    protocol = ""
    # the replay reads the events once, in order, through ``steps`` (and
    # nothing else of them while the run conforms): a file can be replayed
    # as it is read (``conform_file``)
    streams = True
    FIELDS: tuple = ()          # the state variables, in the order an explanation lists them
    # declared exceptions: variables of FIELDS compared only where a record
    # logs them (docs/trace-format.md, "Observable state", says why for each)
    LAZY: tuple = ()

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        # property -> (event, witness): failures found while stepping (a
        # model invariant no candidate satisfies); ``violated`` reports them
        self.found: dict[str, tuple[int, str]] = {}
        self.reduced: list = []     # the engine's: the last step's successors as candidates
        self._held: dict[str, dict] = {}     # note_invariants: prop -> {id(state): (state, value)}
        # the model's members are 1..N, the header's nodes (``check_header``):
        # an N that says otherwise is refused before a model of N members is built
        n, nodes = trace.header.get("constants", {}).get("N"), trace.header.get("nodes")
        if type(n) is int and type(nodes) is list and n != len(nodes):
            raise HeaderError(f"constants.N: {n} is not the number of the header's nodes ({len(nodes)})")
        # the header's ``observed``: the observable variables this
        # implementation logs (default: every one of FIELDS); the others it
        # declares internal, unknown to the replay
        obs = trace.header.get("observed")
        if obs is not None and (type(obs) is not list or not all(isinstance(v, str) for v in obs)):
            raise HeaderError(f"observed: expected a list of variable names, got {obs!r}")
        bad = [v for v in obs or () if v not in self.FIELDS]
        if bad:
            raise HeaderError(f"observed: {bad[0]!r} is not a variable {self.protocol or 'the protocol'} logs "
                              f"({', '.join(self.FIELDS)})")
        self.observed = None if obs is None else frozenset(obs)
        # the default ``observable``, the same for every record: computed once
        self._observable = self.declared(v for v in self.FIELDS if v not in self.LAZY)

    def declared(self, names) -> tuple:
        """``names`` but those the header's ``observed`` leaves out."""
        return tuple(names) if self.observed is None else tuple(v for v in names if v in self.observed)

    def note(self, prop: str, i: int, witness: str) -> None:
        self.found.setdefault(prop, (i, witness))

    def violated(self) -> list[tuple[str, int, str]]:
        """Every failure noted while stepping, (property, event, witness),
        in the order of their events."""
        return [(p, i, w) for p, (i, w) in sorted(self.found.items(), key=lambda kv: kv[1][0])]

    def note_invariants(self, ev: dict, cands, props, invariants: dict, witness=None,
                        pairs=None, same: Optional[dict] = None) -> None:
        """Note each of ``props`` (names in ``invariants``, predicates on a
        model state) that no candidate satisfies after the step ``ev``,
        once; ``witness(prop, cands)`` says why (default: it fails in
        every consistent state).  ``same[prop](s, t)``: the step from s to t
        cannot change prop's value (it reads nothing the step changed), so t
        inherits s's value instead of a new evaluation: an invariant over a
        run's whole history then costs O(1) on the steps that leave it
        alone, not O(run) on every step (``pairs`` the step's (s, t))."""
        for prop in props:
            if prop in self.found:
                continue
            inv, keep = invariants[prop], (same or {}).get(prop)
            if keep is None or pairs is None:
                ok = any(inv(t) for t in cands)
            else:
                # keyed by the candidates (the successors as ``reduce`` left
                # them), which the next step's pairs start from
                memo = self._held.setdefault(prop, {})
                new = {}
                reduced = self.reduced if len(self.reduced) == len(pairs) else [t for _, t in pairs]
                for (s, t), r in zip(pairs, reduced):
                    if id(r) not in new:
                        was = memo.get(id(s))
                        new[id(r)] = (r, was[1] if was is not None and was[0] is s and keep(s, t) else inv(t))
                ok = any(new[id(t)][1] if id(t) in new else inv(t) for t in cands)
                self._held[prop] = new
            if not ok:
                self.note(prop, ev["i"], witness(prop, cands) if witness else
                          "fails in every model state consistent with the run so far")

    def steps(self):
        return iter(self.trace.events)

    def check_header(self, members, name: str) -> None:
        """The header's nodes are the model's ``members`` (1..N) and it names
        no option (no protocol has one yet): else HeaderError."""
        h = self.trace.header
        if len(h["nodes"]) != len(members) or sorted(h["nodes"]) != list(members):
            raise HeaderError(f"nodes {h['nodes']} are not 1..N with N={len(members)}")
        if h.get("options"):
            raise HeaderError(f"options {sorted(h['options'])}: {name} has none")

    def init(self):
        raise NotImplementedError

    def check(self, ev: dict) -> Optional[str]:
        """A reason to reject the record outright (a member outside 1..N), or None."""
        return None

    def before(self, ev: dict, cands) -> Optional[tuple[str, str]]:
        """Called once per step before the candidates are stepped (e.g. to
        learn a message id); (verdict, reason) to stop the run."""
        return None

    def successors(self, s, ev: dict):
        """The model steps the record names from ``s`` (None entries ignored)."""
        raise NotImplementedError

    def message(self, s, t, ev: dict) -> Optional[str]:
        """None when the logged message is the one the step takes or sends,
        else what the model has instead."""
        return None

    def observe(self, s, t, ev: dict, var: str):
        """The model's value of ``var`` for the acting node after the step, in
        the trace's JSON shape (an append variable: the elements appended)."""
        raise NotImplementedError

    def untouched(self, s, t, ev: dict, var: str) -> bool:
        """The step leaves ``var`` of the acting node alone, known without
        projecting it (True only when certain; a binding whose per-node
        values grow with the run answers by identity, so a step that does
        not touch them costs nothing)."""
        return False

    def norm(self, var: str, value):
        """A logged value in the shape ``observe`` returns."""
        return value

    def logged(self, ev: dict) -> Optional[dict]:
        """The state the step logged for its node (None: nothing)."""
        return ev.get("state") if ev.get("nid") is not None else None

    def observable(self, ev: dict) -> tuple:
        """The variables the record's layer logs whenever its step changes
        them (the spec's observable state; ``FIELDS``, declared once per
        protocol): a logged ``state`` is a complete delta of these, so one
        it leaves out is unchanged.  Everything else is internal (channels,
        other members, the environment) and left to the model; so is a
        variable the header's ``observed`` leaves out."""
        return self._observable

    # ``one`` answers only for a record ``check`` passes: the engine then
    # asks it first and ``check`` only the records it leaves (a binding
    # with ``before`` is checked first all the same)
    one_checks = False

    def accept(self, s, ev: dict, logged: Optional[dict]):
        """The usual step's shortcut: the one successor of ``s`` the record
        names when it certainly passes every check of the general step (its
        message, each logged variable, no unlogged change), else None, and
        the general step decides (and explains).  By default always None."""
        return None

    def one(self, s, ev: dict):
        """The step from the one candidate ``s`` when ``accept`` takes it:
        ([the successor as a candidate], what ``after`` says), with
        ``reduced`` set and ``after`` called as the general step does;
        None: the general step decides."""
        t = self.accept(s, ev, self.logged(ev))
        if t is None:
            return None
        out = [self.reduce(t)]
        self.reduced = out
        return out, self.after(ev, [(s, t)], out)

    def unlogged_changes(self, s, t, ev: dict, logged: dict) -> list[str]:
        """The observable variables the model's step changes but the record,
        whose state is logged, leaves out: each is a divergence (absent means
        unchanged; an append variable: the step appends nothing).  Without
        it a layer that skips an update passes: its record says nothing of
        the variable, whatever the model did to it."""
        return [f"{var}: the model's step changes it to {self.observe(s, t, ev, var)!r}, the record does not log it"
                for var in self.observable(ev) if var not in logged and not self.untouched(s, t, ev, var)
                and self.observe(s, t, ev, var) != self.observe(s, s, ev, var)]

    def reduce(self, t):
        """``t`` without what no guard reads (kept small: O(record) per step)."""
        return t

    def after(self, ev: dict, pairs: list, cands: set) -> Optional[tuple[str, str]]:
        """The accepted (pre-state, successor) pairs of the step, before
        ``reduce``; may check invariants: (verdict, reason) stops the run."""
        return None

    def properties(self, cands: set) -> list[tuple[str, Optional[int], str]]:
        """After the last step: every property the run violates, (property,
        event or None, witness), one entry per property (its witness where it
        first broke); [] when all hold."""
        return self.violated()

    def broken_at(self) -> dict:
        """Each property the steps so far broke -> the record at which it
        first broke (``RunReport.broken``); by default those noted on the
        way (``note_invariants``), and the end-of-run ones ``judge_end``
        found broken at the end record."""
        return {**{p: i for p, (i, _) in self.found.items()}, **self.ended}

    def at_end(self, cands: set):
        """At the end of a quiescent run: every end-of-run property that
        fails, [(property, witness)] (``judge_end``; one (property, witness)
        or None is read alike)."""
        return []

    # the end-of-run properties the last ``judge_end`` found broken -> the
    # end record's index (``broken_at`` adds them: TLC's End step must agree)
    ended: dict = {}

    def judge_end(self, cands, judge) -> list[tuple[str, str]]:
        """``at_end`` from ``judge(state)`` (property -> witness, in the
        order they are reported, {} when all hold): the properties that
        fail in every candidate (a candidate that satisfies one is a state
        consistent with the run in which it holds), each with its witness
        (every one, so that each is classified on its own), [] when none.
        All of them are noted for ``broken_at``, at the end record (its
        index: the number of events)."""
        found = [judge(t) for t in sorted(cands, key=repr)] if len(cands) > 1 else [judge(t) for t in cands]
        every = [p for p in (found[0] if found else {}) if all(p in f for f in found[1:])]
        self.ended = {p: len(self.trace.events) for p in every}
        return [(p, found[0][p]) for p in every]

    def at_settled(self, cands: set):
        """At the end of a settled run (a protocol that never quiesces): as
        ``at_end``."""
        return []

    def head(self, ev: dict) -> str:
        return f"event {ev['i']} {ev['name']}(nid={ev['nid']}, params={ev['params']}, msg={ev.get('msg')})"

    def explain(self, cands, ev: dict) -> "Mismatch | str":
        """Why no candidate takes the step (a binding may add what it knows
        of the cause)."""
        return explain(self, cands, ev)

    def bad_event(self, ev: dict) -> int:
        """The record a failed step is reported at (a joined step: the part
        at fault, which ``explain`` may have found)."""
        return ev["i"]


def enabled_steps(b: Binding, cands, ev: dict) -> tuple[list, Optional[str], Optional[tuple]]:
    """The (pre-state, successor) pairs whose message is the logged one, and
    the first other message (what the model has, and its pair)."""
    enabled, why_msg, bad = [], None, None
    for s in cands:
        for t in b.successors(s, ev):
            if t is None:
                continue
            why = b.message(s, t, ev)
            if why is None:
                enabled.append((s, t))
            elif why_msg is None:
                why_msg, bad = why, (s, t)
    return enabled, why_msg, bad


def explain(b: Binding, cands, ev: dict) -> Mismatch:
    """Why no candidate takes the step: not enabled, another message, or the
    logged variables against the model's, field by field."""
    at = Mismatch(event=ev["i"], action=b.head(ev), kind="not enabled", candidates=len(cands))
    enabled, why_msg, _ = enabled_steps(b, cands, ev)
    if not enabled and why_msg is None:
        return at
    if not enabled:
        at.kind, at.message = "message", why_msg
        return at
    at.kind = "state"
    logged = b.logged(ev) or {}
    s, t = enabled[0]
    order = [f for f in b.FIELDS if f in logged] + sorted(set(logged) - set(b.FIELDS))
    for var in order:
        model, seen = b.observe(s, t, ev, var), b.norm(var, logged[var])
        if model != seen:
            at.fields.append((var, model, seen))
    if b.logged(ev) is not None:
        at.unlogged = list(b.unlogged_changes(s, t, ev, logged))
    return at


class ReplayEngine:
    """The candidate-set replay of one trace through a protocol's Binding."""

    def __init__(self, binding: Binding, *, visited: bool = True) -> None:
        self.b = binding
        self.cands = set(binding.reduce(s) for s in binding.init())
        self.peak = len(self.cands)
        self.seen: Optional[set] = set(self.cands) if visited else None
        self.steps = 0
        self.names: set = set()         # the actions stepped
        self.mismatch: Optional[Mismatch] = None
        # the binding's ``before``, None when it has none (the base's does nothing): not called per step
        self.before = None if type(binding).before is Binding.before else binding.before
        self.one_checks = binding.one_checks and self.before is None

    def step(self, ev: dict) -> Optional[tuple[str, str]]:
        """Take one step; None, or (verdict, reason) when the run fails here."""
        b = self.b
        if not self.one_checks:
            bad = b.check(ev)
            if bad:
                return "rejected", bad
        if self.before is not None:
            stop = self.before(ev, self.cands)
            if stop:
                return stop
        if len(self.cands) == 1:
            # one candidate (the usual case): the binding's shortcut takes
            # the step without the general loop's per-variable calls; the
            # peak already counts one candidate
            for s in self.cands:
                got = b.one(s, ev)
                if got is not None:
                    out, stop = got
                    self.cands = out
                    self.steps += 1
                    if self.seen is not None:
                        self._saw(out)
                    return stop
        if self.one_checks:
            bad = b.check(ev)
            if bad:
                return "rejected", bad
        logged = b.logged(ev)
        items = tuple(logged.items()) if logged else ()
        observe, norm = b.observe, b.norm
        out, pairs = [], []
        for s in self.cands:
            for t in b.successors(s, ev):
                if t is None or b.message(s, t, ev) is not None:
                    continue
                for var, val in items:          # each logged variable equals the model's
                    if observe(s, t, ev, var) != norm(var, val):
                        break
                else:
                    if logged is not None and b.unlogged_changes(s, t, ev, logged):
                        continue
                    pairs.append((s, t))
                    out.append(b.reduce(t))
        # A state's hash walks all of it (the sent messages grow with the run),
        # so the one successor of the usual step is not hashed: deduplicating
        # it would make a run's replay quadratic in its length.
        nxt = set(out) if len(out) > 1 else out
        if not nxt:
            why = b.explain(self.cands, ev)
            self.mismatch = why if isinstance(why, Mismatch) else None
            return "nonconforming", str(why)
        if len(nxt) > MAX_CANDIDATES:
            self.peak = len(nxt)
            return "rejected", f"event {ev['i']}: more than {MAX_CANDIDATES} candidate states"
        b.reduced = out        # pairs[k]'s successor as a candidate (``note_invariants``' memo)
        stop = b.after(ev, pairs, nxt)
        self.cands = nxt
        self.peak = max(self.peak, len(nxt))
        self.steps += 1
        if self.seen is not None:
            self._saw(nxt)
        return stop

    def _saw(self, states) -> None:
        self.seen.update(states)
        if len(self.seen) > VISITED_MAX:
            self.seen = None            # coverage of this run unknown (too many states)

    def run(self, trace: Trace) -> RunReport:
        with collector_paused():        # as conform_file: the states are trees of immutable values
            rep = self._run(trace)
        rep.broken = self.b.broken_at()
        rep.actions = self.names
        return rep

    def _run(self, trace: Trace) -> RunReport:
        h = trace.header
        base = dict(file=trace.path, run_id=h.get("run_id"), protocol=h.get("protocol"), events=0)
        total = len(trace.events) if type(trace.events) is list else None      # (a stream's: once read)
        names, step, every = self.names, self.step, progress.EVERY
        for ev in self.b.steps():
            if ev["i"] % every == 0:
                progress.tick("replaying", ev["i"], total)
            names.add(ev["name"])
            failed = step(ev)
            if failed:
                base["events"] = len(trace.events)
                verdict, reason = failed
                early = self.b.violated() if verdict == "nonconforming" else []
                if early:       # the conforming prefix already violates a property
                    found = [violation(p, i, w) for p, i, w in early]
                    # the nonconformance is a violation of its own, which no finding covers
                    found.append(violation("Conformance", self.b.bad_event(ev),
                                           f"the run stops conforming at event {ev['i']}: {reason.splitlines()[0]}"))
                    return RunReport(**base, verdict="violation", first_bad_event=found[0]["event"],
                                     reason=describe(found), violations=found,
                                     candidates_max=self.peak, visited=self._visited(),
                                     stops_conforming_at=self.b.bad_event(ev))
                if verdict == "rejected" and ev.get("src") and not reason.startswith(ev["src"]):
                    reason = f"{ev['src']}: {reason}"
                bad = self.b.bad_event(ev)
                return RunReport(**base, verdict=verdict, first_bad_event=bad, reason=reason,
                                 candidates_max=self.peak, visited=self._visited(),
                                 stops_conforming_at=bad if verdict == "nonconforming" else None,
                                 mismatch=self.mismatch if verdict == "nonconforming" else None)
        base["events"] = len(trace.events)
        found = [violation(p, i, w) for p, i, w in self.b.properties(self.cands)]
        for ended, judge, how in ((quiescent(trace), self.b.at_end, "quiescent"),
                                  (settled(trace), self.b.at_settled, "settled")):
            end = (judge(self.cands) or []) if ended else []
            for prop, witness in ([end] if isinstance(end, tuple) else end):   # one (prop, witness) or a list
                if prop not in {v["property"] for v in found}:
                    found.append(violation(prop, None, f"{witness} (the run ended {how})"))
        if found:
            first = next((v["event"] for v in found if v["event"] is not None), None)
            return RunReport(**base, verdict="violation", first_bad_event=first, reason=describe(found),
                             violations=found, candidates_max=self.peak, visited=self._visited())
        return RunReport(**base, verdict="ok", first_bad_event=None, reason=None, candidates_max=self.peak,
                         visited=self._visited())

    def _visited(self):
        return None if self.seen is None else list(self.seen)


def gaps(trace: Trace, work: tuple, actions: Optional[set] = None) -> list[str]:
    """Why a replay that found nothing wrong still checked too little to say
    ``ok`` (the verdict ``incomplete``): no events, none of the protocol's
    ``work`` actions (a run that multicast nothing shows nothing its
    properties promise), no end record (an interrupted run: its end-of-run
    property was never judged), a per-node run without some node's file.
    ``actions``: the actions the run's steps named (a replay's
    ``RunReport.actions``; else read off the events)."""
    out = []
    if actions is None:
        actions = {ev["name"] for ev in trace.events}
    if len(trace.events) == 0:
        out.append("no events: nothing was checked")
    elif work and not actions & set(work):
        out.append(f"no {' or '.join(work)} step: the run exercised nothing the protocol promises")
    if trace.end is None and "quiescent" not in trace.header:      # (format 1 said it in its header)
        out.append("no end record: the run was interrupted, and its end-of-run property was not judged")
    nodes = trace.header.get("nodes") or []
    have = trace.node_files
    if have:
        lacking = [n for n in nodes if n not in have]
        if lacking:
            out.append(f"no trace file of node(s) {lacking} among the run's per-node files "
                       f"(the header's nodes are {sorted(nodes)})")
    return out


def violation(prop: str, event: Optional[int], witness: str) -> dict:
    """One violation of a run, as ``RunReport.violations`` holds it (the
    finding fields are filled by the protocol's ``classify``)."""
    return {"property": prop, "event": event, "witness": witness, "finding": None, "finding_why": None}


def describe(found: list) -> str:
    """A run's violations as one text: ``Property: witness``, ``; ``-joined,
    the first violation's property first (``findings.violated`` reads it)."""
    return "; ".join(f"{v['property']}: {v['witness']}" + ("" if v["event"] is None or len(found) == 1
                                                              else f" (event {v['event']})") for v in found)


def run_binding(make, trace: Trace, *, visited: bool = True) -> RunReport:
    """The verdict of ``trace`` under the binding ``make(trace)`` builds."""
    h = trace.header
    base = dict(file=trace.path, run_id=h.get("run_id"), protocol=h.get("protocol"), events=len(trace.events))
    try:
        b = make(trace)
    except (HeaderError, KeyError, ValueError, TypeError) as e:
        why = str(e) if isinstance(e, HeaderError) else f"bad header: {type(e).__name__}: {e}"
        return RunReport(**base, verdict="rejected", first_bad_event=None, reason=f"{trace.path}:1: {why}")
    return ReplayEngine(b, visited=visited).run(trace)
