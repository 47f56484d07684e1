"""Conformance verdicts: the report of one run, and the dispatch by protocol.

Theory of operation
-------------------
``conform_file`` loads and validates a trace (conformance/traces.py), then
hands it to its protocol's replay (conformance/protocols.py), which checks it
against the protocol's model and evaluates the trace properties.  Every run
gets exactly one verdict: ``ok``; ``nonconforming`` (some event is not a step
of the model from any state consistent with the run so far); ``violation``
(the run conforms, but a trace property fails on it); ``rejected`` (the file
cannot be read or a record breaks the schema, with ``file:line``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Optional

from .traces import Trace, TraceError, load

MAX_CANDIDATES = 200_000    # a guard against blow-up; never reached by simulated runs
VERDICTS = ("ok", "nonconforming", "violation", "rejected")


@dataclass
class RunReport:
    file: str
    run_id: Optional[str]
    protocol: Optional[str]
    verdict: str                # ok | nonconforming | violation | rejected
    events: int
    first_bad_event: Optional[int]
    reason: Optional[str]
    candidates_max: int = 0
    # The model states the replay held as candidates (for the pipeline's
    # coverage); None when the protocol's replay does not record them.
    visited: Optional[list] = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "visited"}


def replay(trace: Trace) -> RunReport:
    """The verdict for a loaded trace, by its header's protocol."""
    from .protocols import UnknownProtocol, get
    h = trace.header
    try:
        proto = get(h["protocol"])
    except UnknownProtocol as e:
        return RunReport(file=trace.path, run_id=h.get("run_id"), protocol=h.get("protocol"),
                         verdict="rejected", events=len(trace.events), first_bad_event=None,
                         reason=f"{trace.path}:1: {e}")
    rep = proto.replay(trace)
    # Liveness at the end of a run: a run that ended quiescent will never
    # deliver what it has not delivered, so the protocol's eventual property
    # is judged on it.  A run that says nothing (or says it was cut off at
    # its horizon) is judged on safety only.
    if rep.verdict == "ok" and h.get("quiescent") is True and proto.end_of_run is not None:
        found = proto.end_of_run(trace)
        if found is not None:
            prop, witness = found
            rep.verdict, rep.reason = "violation", f"{prop}: {witness} (the run ended quiescent)"
    return rep


def conform_file(path) -> RunReport:
    try:
        trace = load(path)
    except TraceError as e:
        return RunReport(file=str(path), run_id=None, protocol=None, verdict="rejected",
                         events=0, first_bad_event=None, reason=str(e))
    return replay(trace)
