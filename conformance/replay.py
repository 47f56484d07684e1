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
    return proto.replay(trace)


def conform_file(path) -> RunReport:
    """The verdict of one run: a trace file, or a run's per-node files (a
    directory or a list of paths, conformance/traces.py ``load``)."""
    try:
        trace = load(path)
    except TraceError as e:
        where = str(path) if not isinstance(path, (list, tuple)) else str(path[0]).rsplit("/", 1)[0]
        return RunReport(file=where, run_id=None, protocol=None, verdict="rejected",
                         events=0, first_bad_event=None, reason=str(e))
    return replay(trace)
