"""STABLE conformance: replaying a trace against model/stable.py.

Theory of operation
-------------------
Each trace event claims a spec action of spec/Stable/Stable.tla (seed 002,
pbcast.STABLE over NAKACK) by one member and logs that member's post-state
(view, sent, delivered, received, purged, digest, heardFrom).  The model
state also holds what a trace cannot show (the messages in flight, the
coordinator's part of a Join), so the replay keeps the SET of model states
consistent with the events so far: each event's action is applied, with its
logged parameters and message, to every candidate, and the successors whose
projection on the member equals the logged state are kept.  A ``Receive*``
event takes exactly the logged message, which must be in flight in the
candidate.  Datagrams the network lost are never taken, so they stay in the
model's ``net``, which no guard looks at (the model's LoseMessage is never
needed).  An empty candidate set makes the run *nonconforming*.

The trace properties are computed from the trace alone, with no model: from
each member's last logged delivered and purged vectors and views,
**SafeGC** (no member has purged a message that a member of its view has not
delivered) after every event, and **StabilityBound** (a STABILITY digest's
lows never exceed the delivered seqnos of the members it speaks for) at
every SendStability.  A property that fails in the conforming prefix of a
run makes it a *violation*, with the event and a witness.
"""

from __future__ import annotations

from typing import Optional

from groupcheck.model.stable import DataMsg, Entry, StabilityMsg, StableModel, StableMsg
from groupcheck.model.values import Fn

from .protocols import Protocol
from .replay import MAX_CANDIDATES, RunReport
from .traces import Trace, whole

FIELDS = ("view", "sent", "delivered", "received", "purged", "digest", "heardFrom")
ACTIONS = ("Multicast", "ReceiveData", "Retransmit", "SendStable", "ReceiveStable", "SendStability",
           "ReceiveStability", "Join", "InstallView")
PROPERTIES = ("SafeGC", "StabilityBound")
RECEIVES = ("ReceiveData", "ReceiveStable", "ReceiveStability")


def model_for(constants: dict) -> StableModel:
    """The model for a trace header's constants (every member may send)."""
    n = int(constants["N"])
    return StableModel({"N": n, "NInit": constants["NInit"], "Senders": frozenset(range(1, n + 1)),
                        "MaxSeq": constants["MaxSeq"],
                        "ResetOnDifferentMembers": constants["ResetOnDifferentMembers"],
                        "CoordSwitchesAtJoin": constants.get("CoordSwitchesAtJoin", True),
                        "GossipMergedDigest": constants.get("GossipMergedDigest", False)})


def _vec(f) -> dict:
    return {str(x): k for x, k in f.items() if k}


def project(s, m: int) -> dict:
    """Member ``m``'s part of model state ``s`` in the trace's JSON shape
    (zero vector entries left out)."""
    return {"view": sorted(s.view[m]), "sent": s.sent[m], "delivered": _vec(s.delivered[m]),
            "received": _vec(s.received[m]), "purged": _vec(s.purged[m]),
            "digest": {str(x): [e["low"], e["high"]] for x, e in s.digest[m].items()},
            "heardFrom": sorted(s.heardFrom[m])}


def _norm(state: dict) -> dict:
    def vec(d):
        return {str(k): v for k, v in d.items() if v}
    return {"view": sorted(state["view"]), "sent": state["sent"], "delivered": vec(state["delivered"]),
            "received": vec(state["received"]), "purged": vec(state["purged"]),
            "digest": {str(k): list(v) for k, v in state["digest"].items()},
            "heardFrom": sorted(state["heardFrom"])}


def _ints(d: dict) -> Fn:
    return Fn((int(k), v) for k, v in d.items())


def _wire_msg(ev: dict):
    """The model record of the message a Receive* event takes."""
    q, msg = ev["nid"], ev["msg"] or {}
    p = ev["params"]["p"]
    if ev["name"] == "ReceiveData":
        return DataMsg(p, q, msg["seq"])
    if ev["name"] == "ReceiveStable":
        return StableMsg(p, q, _ints(msg["vector"]))
    return StabilityMsg(p, q, Fn((int(k), Entry(lo, hi)) for k, (lo, hi) in msg["digest"].items()))


def _successors(model: StableModel, s, ev: dict) -> list:
    name, m, params = ev["name"], ev["nid"], ev["params"]
    if name in RECEIVES:
        if (ev.get("msg") or {}).get("from", params["p"]) != params["p"]:
            return []
        w = _wire_msg(ev)
        if w not in s.net:
            return []
        act = getattr(model, name)
        return [t for t in act(s, m, params["p"]) if w not in t.net]
    if name == "Retransmit":
        return model.Retransmit(s, m, params["p"])
    if name == "Join":
        if s.group and params.get("coord") != min(s.group):
            return []
        return model.Join(s, m)
    if name in ("Multicast", "SendStable", "SendStability", "InstallView"):
        return getattr(model, name)(s, m)
    return []


def _check_sent_msg(model: StableModel, s, t, ev: dict) -> bool:
    """The message a Send* or Multicast event logs is the one the action sends."""
    msg, m = ev.get("msg"), ev["nid"]
    if msg is None:
        return True
    if ev["name"] == "Multicast":
        return msg.get("seq") == t.sent[m]
    if ev["name"] == "SendStable":
        return _ints(msg.get("vector", {})) == model.Vector(s, m)
    if ev["name"] == "SendStability":
        return {int(k): tuple(v) for k, v in msg.get("digest", {}).items()} == \
            {x: (e["low"], e["high"]) for x, e in s.digest[m].items()}
    return True


def diff(expected: dict, logged: dict) -> str:
    return "\n".join(f"  {f}: model {expected.get(f)!r} != logged {logged.get(f)!r}"
                     for f in FIELDS if expected.get(f) != logged.get(f))


class TraceProperties:
    """SafeGC and StabilityBound from the events alone (no model): each
    member's last logged view, delivered and purged vectors.  A Join also
    changes the coordinator's view (it installs the joiner's view at once,
    CoordSwitchesAtJoin), which the event names in ``params.coord``."""

    def __init__(self, first_view: list[int]) -> None:
        self.view = {m: set(first_view) for m in first_view}
        self.delivered: dict[int, dict[int, int]] = {m: {} for m in first_view}
        self.purged: dict[int, dict[int, int]] = {m: {} for m in first_view}
        self.first: Optional[tuple[int, str]] = None      # (event index, "Prop: witness")
        self.found: dict[str, tuple[int, str]] = {}        # property -> its first (event, witness)

    def feed(self, ev: dict) -> Optional[str]:
        st, m = ev.get("state"), ev["nid"]
        if st is None or m is None:
            return None
        self.view[m] = set(st["view"])
        self.delivered[m] = {int(k): v for k, v in st["delivered"].items()}
        self.purged[m] = {int(k): v for k, v in st["purged"].items()}
        if ev["name"] == "Join" and "coord" in ev["params"]:
            self.view[ev["params"]["coord"]] = set(st["view"])
        bads = []
        if ev["name"] == "SendStability" and ev.get("msg"):
            bads.append(self.stability_bound(m, {int(k): v for k, v in ev["msg"]["digest"].items()}))
        bads.append(self.safe_gc())
        for bad in filter(None, bads):
            self.found.setdefault(bad.split(":")[0], (ev["i"], bad))
            if self.first is None:
                self.first = (ev["i"], bad)
        return next(filter(None, bads), None)

    def stability_bound(self, m: int, digest: dict) -> Optional[str]:
        for x, (lo, _) in sorted(digest.items()):
            for q in sorted(digest):
                d = self.delivered.get(q, {}).get(x, 0)
                if lo > d:
                    return (f"StabilityBound: member {m}'s STABILITY digest has low {lo} for sender {x}, "
                            f"but member {q} has delivered only {d}")
        return None

    def summary(self) -> str:
        return "; ".join(f"{w} (event {i})" for _, (i, w) in sorted(self.found.items(), key=lambda kv: kv[1][0]))

    def safe_gc(self) -> Optional[str]:
        for p in sorted(self.purged):
            for s, k in sorted(self.purged[p].items()):
                for q in sorted(self.view.get(p, ())):
                    d = self.delivered.get(q, {}).get(s, 0)
                    if k > d:
                        return (f"SafeGC: member {p} purged messages of {s} up to {k}, "
                                f"but member {q} of its view has delivered only up to {d}")
        return None


class Replayer:
    """The candidate-set replay, one event at a time (used by ``replay`` and
    by the lock-step test)."""

    def __init__(self, constants: dict, nodes: list[int]) -> None:
        self.model = model_for(constants)
        self.cands = set(self.model.init())
        self.peak = len(self.cands)
        self.seen = set(self.cands)       # every candidate held: RunReport.visited (pipeline coverage)
        self.props = TraceProperties(sorted(self.model.InitialView))

    def out_of_range(self, ev: dict) -> Optional[str]:
        M = set(self.model.Members)
        named = [("nid", ev["nid"])]
        named += [(f"params.{k}", v) for k, v in ev["params"].items() if k in ("p", "coord")]
        st = ev.get("state") or {}
        for f in ("delivered", "received", "purged", "digest"):
            named += [(f"state.{f}", int(x)) for x in st.get(f, {})]
        named += [(f"state.{f}", x) for f in ("view", "heardFrom") for x in st.get(f, [])]
        for where, x in named:
            if not isinstance(x, int) or x not in M:
                return f"{where}: {x!r} is not a member 1..{self.model.N}"
        if ev["name"] in RECEIVES and not ev.get("msg"):
            return f"{ev['name']} without the message it takes"
        return None

    def step(self, ev: dict) -> Optional[str]:
        """Apply one event; None, or why no candidate allows it."""
        logged = _norm(ev["state"]) if ev.get("state") is not None else None
        nxt = set()
        for s in self.cands:
            for t in _successors(self.model, s, ev):
                if _check_sent_msg(self.model, s, t, ev) and (logged is None or project(t, ev["nid"]) == logged):
                    nxt.add(t)
        if not nxt:
            return self.explain(ev)
        if len(nxt) > MAX_CANDIDATES:
            return f"event {ev['i']}: more than {MAX_CANDIDATES} candidate states"
        self.cands = nxt
        self.seen |= nxt
        self.peak = max(self.peak, len(nxt))
        self.props.feed(ev)
        return None

    def explain(self, ev: dict) -> str:
        head = f"event {ev['i']} {ev['name']}(nid={ev['nid']}, params={ev['params']}, msg={ev.get('msg')})"
        enabled = [(s, t) for s in self.cands for t in _successors(self.model, s, ev)]
        if not enabled:
            extra = " (no candidate has that message in flight)" if ev["name"] in RECEIVES else ""
            return f"{head}: not enabled in any of {len(self.cands)} candidate model state(s){extra}"
        ok = [(s, t) for s, t in enabled if _check_sent_msg(self.model, s, t, ev)]
        if not ok:
            return f"{head}: the logged message is not the one the model's action sends"
        exp = project(ok[0][1], ev["nid"])
        return f"{head}: logged state differs from the model's successor\n{diff(exp, _norm(ev['state']))}"


def replay(trace: Trace) -> RunReport:
    trace = whole(trace)     # TEMPORARY (format 2): the replay compares whole member states
    h = trace.header
    base = dict(file=trace.path, run_id=h["run_id"], protocol=h["protocol"], events=len(trace.events))

    r = None

    def report(verdict, first=None, reason=None, peak=0):
        return RunReport(**base, verdict=verdict, first_bad_event=first, reason=reason, candidates_max=peak,
                         visited=list(r.seen) if r is not None else None)

    if h["protocol"] != "stable":
        return report("rejected", reason=f"{trace.path}:1: not a STABLE trace ({h['protocol']!r})")
    try:
        r = Replayer(h["constants"], h["nodes"])
    except (KeyError, TypeError, ValueError) as e:
        return report("rejected", reason=f"{trace.path}:1: header constants: {type(e).__name__}: {e}")
    if sorted(h["nodes"]) != list(r.model.Members):
        return report("rejected", reason=f"{trace.path}:1: nodes {h['nodes']} are not 1..N with N={r.model.N}")
    for ev in trace.events:
        bad = r.out_of_range(ev)
        if bad:
            return report("rejected", ev["i"], f"{trace.path}:{ev['i'] + 2}: {bad}", r.peak)
        why = r.step(ev)
        if why is not None:
            if r.props.first is not None:       # the conforming prefix already violates a property
                return report("violation", r.props.first[0], f"{r.props.summary()}; the run stops conforming "
                              f"at event {ev['i']}: {why.splitlines()[0]}", r.peak)
            return report("nonconforming", ev["i"], why, r.peak)
    if r.props.first is not None:
        return report("violation", r.props.first[0], r.props.summary(), r.peak)
    return report("ok", peak=r.peak)


# ---------------------------------------------------------------- simulated runs

DEFAULTS = {"nodes": 3, "messages": 2, "join": True, "heard_from_reset": True, "horizon": 60.0}


def _flag(v) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, str)) and str(v).lower() in ("1", "true", "0", "false"):
        return str(v).lower() in ("1", "true")
    raise ValueError(f"expected true or false, got {v!r}")


def run_id(opts: dict, seed: int) -> str:
    flaw = "" if opts["heard_from_reset"] else "-flawed"
    return f"stable-n{opts['nodes']}-m{opts['messages']}{'-join' if opts['join'] else ''}{flaw}-s{seed}"


def simulate(seed: int, faults: str, options: dict):
    """One simulated STABLE run: members 1..n-1 (or 1..n without ``join``),
    member n joining at 15 ms, ``messages`` multicasts each; the fault spec
    as impl/tracefile.parse_faults reads it (no crashes)."""
    from groupcheck.impl import stable, tracefile
    opts = {**DEFAULTS, **(options or {})}
    opts["join"], opts["heard_from_reset"] = _flag(opts["join"]), _flag(opts["heard_from_reset"])
    plan = tracefile.parse_faults(faults) if isinstance(faults, str) else faults
    records, summary = stable.simulate(int(opts["nodes"]), int(opts["messages"]), seed, plan,
                                       join=opts["join"], heard_from_reset=opts["heard_from_reset"],
                                       horizon=float(opts["horizon"]))
    rid = run_id(opts, seed)
    v2 = tracefile.to_v2(records, summary["constants"], rid, quiescent=summary["quiescent"],
                         end_clock=summary.get("end_clock"))
    line = {
        "run_id": rid, "seed": seed, "events": len(v2) - 2, "quiescent": summary["quiescent"],
        "delivered": sum(len(d) for d in summary["delivered"].values()),
        "retransmissions": sum(st.get("reliable.retransmitted", 0) for st in summary["stats"].values()),
        "retained_at_end": sum(summary["retained"].values()),
        "dropped_datagrams": summary["network"]["lost"],
    }
    return v2, line


PROTOCOL = Protocol(
    name="stable", spec="Stable", actions=ACTIONS, properties=PROPERTIES,
    simulate=simulate, replay=replay, default_options=dict(DEFAULTS),
    campaign_faults="loss=0.1,dup=0.05,reorder=3",
)
