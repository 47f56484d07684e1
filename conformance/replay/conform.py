"""A run's verdict by its header's protocol: the entry points of
``groupcheck conform`` and of every caller that has a trace or a path in
hand.  The engine and the report are conformance/replay/engine.py's; the protocol
comes from the registry (conformance/replay/registry.py), which holds each
protocol's binding, so this module sits above both and the two do not
import each other back."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from groupcheck.conformance.replay.engine import RunReport
from groupcheck.conformance.replay.registry import get, UnknownProtocol
from groupcheck.core.trace.reader import collector_paused, load, stream, Trace, TraceError


def replay(trace: Trace, *, visited: bool = False) -> RunReport:
    """The verdict for a loaded trace, by its header's protocol.
    ``visited``: keep the model states the replay held, for coverage (the
    pipeline); they grow with the run, so a single check goes without."""
    h = trace.header
    try:
        proto = get(h["protocol"])
    except UnknownProtocol as e:
        return RunReport(file=trace.path, run_id=h.get("run_id"), protocol=h.get("protocol"),
                         verdict="rejected", events=len(trace.events), first_bad_event=None,
                         reason=f"{trace.path}:1: {e}")
    return proto.replay(trace, visited=visited)   # liveness at a quiescent end too: Binding.at_end


def conform_file(path) -> RunReport:
    """The verdict of one run: a trace file, or a run's per-node files (a
    directory or a list of paths, core/trace/reader.py ``load``)."""
    # The collector paused from the first line read to the verdict: the
    # records and the model states are trees of immutable values (no cycle
    # for it to find), and a collection while the run is held walks all of
    # it; dropped at the end, they are freed by reference counting alone.
    with collector_paused():
        rep = _streamed(path)
        if rep is not None:
            return rep
        try:
            trace = load(path)
        except TraceError as e:
            where = str(path) if not isinstance(path, (list, tuple)) else str(path[0]).rsplit("/", 1)[0]
            return RunReport(file=where, run_id=None, protocol=None, verdict="rejected",
                             events=0, first_bad_event=None, reason=str(e))
        rep = replay(trace)
        del trace
    return rep


def _streamed(path) -> Optional[RunReport]:
    """The verdict of a one-file run replayed as it is read (traces.py
    ``stream``: memory bounded by the model's state, not by the run) when
    that verdict is ``ok``; else None, and the caller reads the run whole
    and replays it again, so that a record refused, a failure or a finding
    is decided and explained with the whole run in hand, as before.  Not
    streamed: a run of several files (merged by clock), format 1, a
    protocol whose binding reads the events more than once in order
    (``Binding.streams``)."""
    if isinstance(path, (list, tuple)) or Path(path).is_dir():
        return None
    try:
        trace = stream(path)
        proto = get(trace.header["protocol"])
        if not proto.binding.streams:
            return None
        rep = proto.replay(trace, visited=False)
    except (TraceError, UnknownProtocol):
        return None
    return rep if rep.verdict == "ok" else None
