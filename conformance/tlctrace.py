"""TLC trace validation (DESIGN.md section 1, link (3)) for SEQUENCER.

A trace (conformance.traces.load) is written as a TLA+ module ``TraceLog``
defining ``Log``, a sequence literal of records, in a temporary directory
together with copies of ``spec/Sequencer/{Sequencer,TraceSequencer}.tla``;
TLC then explores TraceSequencer's behaviours.  ``TraceMatched == l <=
Len(Log)`` is checked as an invariant: its violation means the cursor got
past the last record, i.e. the spec produced the whole log (accepted).
Without a violation the log was rejected; the first unmatched record is the
one at the deepest cursor, which is TLC's search depth (l = depth in every
state: each TraceNext step advances l by one)."""
from __future__ import annotations

import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from groupcheck.model.tlc import run_tlc
from groupcheck.spec import spec_root

SPEC_DIRS = {"sequencer": spec_root() / "Sequencer"}
MODULES = {"sequencer": "TraceSequencer"}


@dataclass
class TLCVerdict:
    ok: bool
    events: int
    first_unmatched: int | None   # event index `i` of the first record no behaviour matches
    seconds: float
    detail: str

    def to_json(self) -> dict:
        return {"checker": "tlc", "ok": self.ok, "events": self.events,
                "first_unmatched": self.first_unmatched, "seconds": round(self.seconds, 3),
                "detail": self.detail}


def supported(protocol: str) -> bool:
    return protocol in SPEC_DIRS and (SPEC_DIRS[protocol] / f"{MODULES[protocol]}.tla").is_file()


def _seq(xs) -> str:
    return "<<" + ", ".join(xs) + ">>"


def _set(xs) -> str:
    return "{" + ", ".join(str(int(x)) for x in xs) + "}"


def _state(st) -> str:
    if not st:
        return "[dummy |-> 0]"   # TLA+ has no empty record literal; no state key is named dummy
    parts = []
    if "vid" in st:
        parts.append(f"vid |-> {int(st['vid'])}")
    if "sent" in st:
        parts.append(f"sent |-> {int(st['sent'])}")
    if "fwd" in st:
        parts.append(f"fwd |-> {_set(st['fwd'])}")
    if "recv" in st:
        r = st["recv"]
        if r:
            parts.append("recv |-> (" + " @@ ".join(f"{int(k)} :> {int(v)}" for k, v in r.items()) + ")")
        else:
            parts.append("recv |-> << >>")   # the empty function
    if "delivered" in st:
        parts.append("delivered |-> " + _seq(_seq([str(int(s)), str(int(q))]) for s, q in st["delivered"]))
    return "[" + ", ".join(parts or ["dummy |-> 0"]) + "]"


def _record(ev: dict) -> str:
    params = ev.get("params") or {}
    msg = ev.get("msg")
    fields = [
        f'name |-> "{ev["name"]}"',
        f"nid |-> {int(ev['nid']) if ev.get('nid') is not None else 0}",
        f"p |-> {int(params['p']) if 'p' in params else 0}",
        f"view |-> {_seq(str(int(x)) for x in params.get('view', []))}",
        f"lost |-> {_set(params.get('lost', []))}",
        f"hasLost |-> {'TRUE' if 'lost' in params else 'FALSE'}",
        f"hasMsg |-> {'TRUE' if msg else 'FALSE'}",
        f'mtype |-> "{msg["type"] if msg else ""}"',
        f"msender |-> {int(msg['sender']) if msg else 0}",
        f"mseqno |-> {int(msg['seqno']) if msg else 0}",
        f"state |-> {_state(ev.get('state'))}",
    ]
    return "[" + ", ".join(fields) + "]"


def tracelog_module(events: list[dict]) -> str:
    body = ",\n    ".join(_record(ev) for ev in events)
    return ("---- MODULE TraceLog ----\nEXTENDS Naturals, Sequences, TLC\n"
            f"Log == <<\n    {body}\n    >>\n====\n")


def cfg_text(constants: dict) -> str:
    return (f"CONSTANTS\n    N = {int(constants['N'])}\n    MaxSeq = {int(constants['MaxSeq'])}\n"
            f"    MaxCrashes = {int(constants['MaxCrashes'])}\n"
            "INIT TraceInit\nNEXT TraceNext\nVIEW TraceView\nINVARIANT TraceMatched\n")


_DEPTH = re.compile(r"The depth of the complete state graph search is (\d+)")


def validate(trace, *, timeout: float = 600.0) -> TLCVerdict:
    """TLC's verdict on a loaded trace (conformance.traces.Trace)."""
    protocol = trace.header["protocol"]
    if not supported(protocol):
        raise ValueError(f"no TLA+ trace spec for protocol {protocol!r} (only: {', '.join(sorted(SPEC_DIRS))})")
    events = trace.events
    t0 = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="groupcheck-tlctrace-"))
    try:
        src = SPEC_DIRS[protocol]
        for f in src.glob("*.tla"):
            if not f.name.startswith("MC"):
                shutil.copy(f, tmp / f.name)
        (tmp / "TraceLog.tla").write_text(tracelog_module(events), encoding="utf-8")
        if not events:
            return TLCVerdict(True, 0, None, time.monotonic() - t0, "empty trace")
        res = run_tlc(tmp, MODULES[protocol], None, cfg_text=cfg_text(trace.header["constants"]),
                      timeout=timeout, check_deadlock=False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    secs = time.monotonic() - t0
    out = res.raw_output
    if "Invariant TraceMatched is violated" in out:
        return TLCVerdict(True, len(events), None, secs, "TLC consumed the whole log")
    m = _DEPTH.search(out)
    if m and "Model checking completed. No error has been found" in out:
        depth = int(m.group(1))          # states at depth d have l = d: record d is the first unmatched
        idx = depth - 1
        return TLCVerdict(False, len(events), events[idx]["i"], secs,
                          f"no behaviour of the spec matches event {events[idx]['i']} ({events[idx]['name']})")
    raise RuntimeError(f"TLC did not give a verdict:\n{out[-3000:]}")
