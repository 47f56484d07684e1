"""Writing traces in the groupcheck-trace/2 format (docs/trace-format.md).

Theory of operation
-------------------
The simulators return plain records: a header, then one record per spec
action carrying the acting member's whole post-state (what a layer's
``state()`` shows).  ``to_v2`` turns them into the versioned NDJSON format:
the header gains ``format``, the model ``constants`` and protocol ``options``
a replay needs, ``impl_version`` and a ``run_id``; each event keeps only the
variables its step changed (``state`` is a delta against the member's
previous record), an append-only variable (the protocol schema's
``x-append``, e.g. SEQUENCER's ``delivered``) is logged as the list of
elements appended; and an ``end`` record says whether the run stopped
quiescent.  Record size therefore does not grow with the run.

``NodeTraceWriter`` writes one node's file of a run (a real cluster, one
process per node): each record carries the node's vector clock ``vc``,
which the writer keeps from ``on_send``/``on_receive``; the reader
(core/trace/reader.py) merges a run's files by happens-before.
``EnvTraceWriter`` is the environment's file (crashes, losses, view
decisions: ``nid`` null).

Serialisation is canonical (sorted keys, no spaces, ``\\n`` line ends), so
the same run gives a byte-identical file.  Nothing writes format 1 (full
post-states) any more; the reader (core/trace/reader.py) still reads it.

What a protocol logs per layer (which layer a record is: layers.py; which
variables are appended: its schema's ``x-append``); the simulated
campaigns that produce the records live with their protocols
(impl/sim_<protocol>.py, impl/campaign.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, Iterable, Optional

from groupcheck.core.trace import layers
from groupcheck.core.trace.format import append_vars, dumps1, ENV, FORMAT, state_delta


def header(protocol: str, nodes, constants: dict, *, seed: int, faults: dict, impl: str,
           impl_version: str, run_id: str, options: Optional[dict] = None,
           node: Optional[int] = None) -> dict:
    """A format-2 header record."""
    h = {"kind": "header", "format": FORMAT, "protocol": protocol, "nodes": list(nodes),
         "constants": dict(constants), "options": dict(options or {}), "seed": seed,
         "faults": faults, "impl": impl, "impl_version": impl_version, "run_id": run_id}
    if node is not None:
        h["node"] = node
    return h


def event(name: str, nid: Optional[int], clock: float, *, params: Optional[dict] = None,
          msg: Optional[dict] = None, state: Optional[dict] = None, vc: Optional[dict] = None) -> dict:
    """A format-2 event record; empty ``params`` and a null ``msg`` are left
    out (the reader restores them); ``state`` None (not logged) is left out,
    ``{}`` (the step assigned nothing) is written."""
    r = {"kind": "event", "name": name, "nid": nid, "clock": _clock(clock)}
    if params:
        r["params"] = params
    if msg is not None:
        r["msg"] = msg
    if state is not None:
        r["state"] = state
    if vc is not None:
        r["vc"] = vc
    return r


def end(quiescent: bool, clock: float, vc: Optional[dict] = None, settled: Optional[bool] = None) -> dict:
    """The environment's end record.  ``quiescent``: nothing in flight and no
    timer that would send.  ``settled`` (optional): no fault for long enough
    that the protocol's liveness must have taken effect, for a protocol that
    never quiesces (Raincore's token circulates for ever)."""
    r = {"kind": "end", "quiescent": bool(quiescent), "clock": _clock(clock)}
    if settled is not None:
        r["settled"] = bool(settled)
    if vc is not None:
        r["vc"] = vc
    return r


def _clock(t: float) -> float:
    return round(float(t), 9)


def _params(r: dict) -> dict:
    """A simulator record's parameters as format 2 names them."""
    return dict(r.get("params") or {})


def to_v2(records: list[dict], constants: dict, run_id: str, *, options: Optional[dict] = None,
          quiescent: Optional[bool] = None, end_clock: Optional[float] = None,
          settled: Optional[bool] = None) -> list[dict]:
    """Simulator records (header first, full post-states) as
    groupcheck-trace/2 records: deltas, and an ``end`` record when
    ``quiescent`` is given (the simulator's verdict on how the run stopped)."""
    head, events = records[0], records[1:]
    if head.get("kind") != "header":
        raise ValueError("first record is not a header")
    protocol = head["protocol"]
    out = [{"kind": "header", "format": FORMAT, "protocol": protocol, "nodes": list(head["nodes"]),
            "constants": dict(constants), "options": dict(options or {}), "seed": head["seed"],
            "faults": head["faults"], "impl": head["impl"],
            "impl_version": head.get("impl_version", head.get("version", "")), "run_id": run_id}]
    last: dict = {}
    clock = 0.0
    deltas = head.get("states") == "delta"      # the stacks traced deltas already
    for r in events:
        params = _params(r)
        st = r.get("state")
        st = st if deltas else (st or None)
        delta = st if deltas and r.get("nid") is not None else None
        if st is not None and not deltas and r.get("nid") is not None:
            key = (r["nid"], layers.layer_of(protocol, r["name"], params))
            delta = state_delta(last.get(key), st, append_vars(protocol, key[1]))
            last[key] = st
        clock = r["clock"]
        out.append(event(r["name"], r.get("nid"), r["clock"], params=params, msg=r.get("msg"), state=delta))
    if quiescent is not None:
        out.append(end(quiescent, end_clock if end_clock is not None else clock, settled=settled))
    return out


def write(path: str | Path, records: Iterable[dict]) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with open(p, "w", encoding="utf-8", newline="\n") as f:
        for r in records:
            f.write(dumps1(r))
    return p


# ---------------------------------------------------------------- per-node files

class TraceWriter:
    """A format-2 file written as the run goes (O(1) memory): ``TraceWriter(path,
    header)``, then ``record(name, params, msg, state_delta, clock, nid=...)``
    per step and ``end(quiescent, clock)``.  ``NodeTraceWriter`` adds the
    vector clock of one node's file."""

    vc: Optional[dict] = None

    def __init__(self, path, header_record: dict) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f: IO[str] = open(self.path, "w", encoding="utf-8", newline="\n")
        self.records = 0
        h = dict(header_record)
        h["format"] = FORMAT
        h.setdefault("options", {})
        self._f.write(dumps1(h))

    def _tick(self) -> Optional[dict]:
        return None

    def record(self, name: str, params: Optional[dict] = None, msg: Optional[dict] = None,
               state_delta: Optional[dict] = None, clock: float = 0.0, *, nid=None) -> dict:
        """Write one step (its state delta) and return the record."""
        rec = event(name, nid, clock, params=params, msg=msg, state=state_delta, vc=self._tick())
        self._f.write(dumps1(rec))
        self.records += 1
        return rec

    def end(self, quiescent: bool, clock: float, settled: Optional[bool] = None) -> dict:
        """The end record (the environment's, or a global file's, last line)."""
        rec = end(quiescent, clock, self._tick(), settled=settled)
        self._f.write(dumps1(rec))
        return rec

    def close(self) -> None:
        if not self._f.closed:
            self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class NodeTraceWriter(TraceWriter):
    """One node's file of a run, records with vector clocks.

    ``NodeTraceWriter(path, header, nid)`` writes ``header`` (a format-2
    header, e.g. from ``header(...)``; its ``node`` is set to ``nid``) and
    then, per ``record(name, params, msg, state_delta, clock)``, one event
    whose ``vc`` is the node's vector clock after its own component was
    incremented.  The node's runtime calls ``on_send()`` when a message
    leaves and piggybacks the dict it returns on the message; ``on_receive(vc)``
    when one arrives (before recording the step that takes it), and for an
    environment input (a view from the membership service) with the
    environment's clock.  ``close()`` (or the ``with`` block) flushes.
    Clocks: node ids as strings, the environment as ``"env"``; entries that
    are 0 are left out.
    """

    def __init__(self, path, header_record: dict, nid: Optional[int]) -> None:
        self.nid = nid
        self.me = ENV if nid is None else str(nid)
        self.vc: dict[str, int] = {}
        h = dict(header_record)
        if nid is None:
            h.pop("node", None)
        else:
            h["node"] = nid
        super().__init__(path, h)

    def _tick(self) -> dict:
        self.vc[self.me] = self.vc.get(self.me, 0) + 1
        return dict(self.vc)

    def on_send(self) -> dict:
        """The clock to piggyback on a message leaving now (a copy)."""
        return dict(self.vc)

    def on_receive(self, vc: Optional[dict]) -> None:
        """Merge the clock a received message (or environment input) carried."""
        for k, v in (vc or {}).items():
            if v > self.vc.get(k, 0):
                self.vc[k] = v

    def record(self, name: str, params: Optional[dict] = None, msg: Optional[dict] = None,
               state_delta: Optional[dict] = None, clock: float = 0.0, *, nid="self") -> dict:
        return super().record(name, params, msg, state_delta, clock, nid=self.nid if nid == "self" else nid)


class EnvTraceWriter(NodeTraceWriter):
    """The environment's file: records with ``nid`` null (or naming the
    node they happen to, e.g. ``Crash``), clock component ``"env"``."""

    def __init__(self, path, header_record: dict) -> None:
        super().__init__(path, header_record, None)
