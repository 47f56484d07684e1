"""Writing traces in the groupcheck-trace/1 format (docs/trace-format.md).

Theory of operation
-------------------
The simulator returns plain records (a header, then one record per spec
action).  This module turns them into the versioned NDJSON file format: the
header gains ``format``, the model ``constants`` a replay needs, ``impl_version``
and a ``run_id``; each event gains its index ``i`` and carries its action
parameters under ``params``.  Serialisation is canonical (sorted keys, no
spaces, ``\\n`` line ends), so the same run gives a byte-identical file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

FORMAT = "groupcheck-trace/1"


def sequencer_constants(nodes: Iterable[int], messages: Iterable[tuple[float, int, bytes]],
                        crashes: Iterable) -> dict:
    """The Sequencer model's constants for a simulated run: ``N`` members,
    ``MaxSeq`` = the most multicasts any one member is asked for, and
    ``MaxCrashes`` = the crashes planned."""
    nodes = list(nodes)
    per: dict[int, int] = {n: 0 for n in nodes}
    for _, nid, _ in messages:
        per[nid] = per.get(nid, 0) + 1
    return {"N": len(nodes), "MaxSeq": max(per.values(), default=0), "MaxCrashes": len(list(crashes))}


def to_v1(records: list[dict], constants: dict, run_id: str, quiescent: bool | None = None) -> list[dict]:
    """Convert simulator records (header first) to groupcheck-trace/1 records.
    ``quiescent``: whether the run ended with nothing in flight and no timer
    that would send (the simulator knows); written to the header when known,
    so the replay judges the protocol's end-of-run property."""
    head, events = records[0], records[1:]
    if head.get("kind") != "header":
        raise ValueError("first record is not a header")
    out = [{
        "kind": "header", "format": FORMAT, "protocol": head["protocol"], "nodes": list(head["nodes"]),
        "constants": dict(constants), "seed": head["seed"], "faults": head["faults"],
        "impl": head["impl"], "impl_version": head.get("impl_version", head.get("version", "")),
        "run_id": run_id,
    }]
    if quiescent is not None:
        out[0]["quiescent"] = bool(quiescent)
    for i, r in enumerate(events):
        params = dict(r.get("args") or r.get("params") or {})
        if r["name"] == "NewView":
            params["view"] = list(r["view"])
        out.append({"kind": "event", "i": i, "name": r["name"], "nid": r.get("nid"), "params": params,
                    "msg": r.get("msg"), "state": r.get("state") or None, "clock": r["clock"]})
    return out


def dumps(records: Iterable[dict]) -> str:
    return "".join(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n" for r in records)


def write(path: str | Path, records: Iterable[dict]) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with open(p, "w", encoding="utf-8", newline="\n") as f:
        f.write(dumps(records))
    return p


# ---------------------------------------------------------------- simulated runs

def parse_faults(spec: str):
    """``loss=0.1,dup=0.05,reorder=3,crash=1@20`` -> FaultPlan.  ``loss`` and
    ``dup`` are probabilities per datagram; ``reorder`` is the reordering
    window and ``crash=M@T`` crashes member M at time T, both in milliseconds
    of virtual time; ``crash`` may be repeated."""
    from .sim import FaultPlan
    kw: dict = {}
    crashes = []
    for part in filter(None, (x.strip() for x in (spec or "").split(","))):
        key, sep, val = part.partition("=")
        if not sep:
            raise ValueError(f"fault {part!r}: expected key=value")
        try:
            if key == "loss":
                kw["loss"] = float(val)
            elif key in ("dup", "duplicate"):
                kw["duplicate"] = float(val)
            elif key == "reorder":
                kw["reorder_window"] = float(val) / 1000
            elif key == "crash":
                m, at_sep, t = val.partition("@")
                crashes.append((int(m), float(t) / 1000 if at_sep else 0.0))
            else:
                raise ValueError(f"unknown fault {key!r} (loss, dup, reorder, crash)")
            bad = (key in ("loss", "dup", "duplicate") and not 0 <= float(val) <= 1) \
                or (key == "reorder" and float(val) < 0) \
                or (key == "crash" and (crashes[-1][0] < 1 or crashes[-1][1] < 0))
            if bad:
                raise ValueError("loss and dup are probabilities in [0, 1], reorder a window >= 0 ms, "
                                 "crash=M@T a member M >= 1 and a time T >= 0 ms")
        except ValueError as e:
            raise ValueError(f"fault {part!r}: {e}") from None
    return FaultPlan(crashes=tuple(crashes), **kw)


SEND_INTERVAL = 0.01   # one application multicast every 10 ms, members in turn


def sequencer_workload(n: int, per_member: int) -> list[tuple[float, int, bytes]]:
    """``per_member`` multicasts by each of members 1..n, round robin."""
    return [(k * SEND_INTERVAL, 1 + k % n, f"m{1 + k % n}.{1 + k // n}".encode())
            for k in range(n * per_member)]


def simulate_run(n: int, per_member: int, seed: int, faults) -> tuple[list[dict], dict]:
    """One simulated SEQUENCER run as groupcheck-trace/1 records, plus a
    one-line summary (deliveries, retransmissions, dropped datagrams)."""
    from .sim import simulate
    nodes = list(range(1, n + 1))
    msgs = sequencer_workload(n, per_member)
    records, summary = simulate(nodes, msgs, seed, faults)
    run_id = f"sequencer-n{n}-m{per_member}-s{seed}"
    v1 = to_v1(records, sequencer_constants(nodes, msgs, faults.crashes), run_id, summary["quiescent"])
    line = {
        "run_id": run_id, "seed": seed, "events": len(v1) - 1,
        "delivered": sum(len(d) for d in summary["delivered"].values()),
        "retransmissions": sum(st.get("reliable.retransmitted", 0) for st in summary["stats"].values()),
        "dropped_datagrams": summary["network"]["lost"] + summary["network"]["to_crashed"],
        "quiescent": summary["quiescent"], "crashed": summary["crashed"],
    }
    return v1, line
