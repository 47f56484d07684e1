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

import random
from types import SimpleNamespace
from typing import Optional

from groupcheck.conformance.replay.engine import Binding, HeaderError, ReplayEngine
from groupcheck.conformance.replay.lockstep import LockstepNetwork
from groupcheck.conformance.replay.registry import Protocol
from groupcheck.conformance.tlctrace import TLATrace
from groupcheck.core.trace import writer as tracefile
from groupcheck.core.trace.reader import Trace
from groupcheck.impl import codec, sim_stable, stable as istable
from groupcheck.impl.events import AppSend, ViewChange
from groupcheck.impl.faults import NETWORK_AND_CRASH, plan_reader
from groupcheck.impl.stacks.stable import stable_stack
from groupcheck.model.stable import DataMsg, Entry, StabilityMsg, StableModel, StableMsg
from groupcheck.model.values import Fn


FIELDS = ("view", "sent", "delivered", "received", "purged", "digest", "heardFrom")
ACTIONS = ("Multicast", "ReceiveData", "Retransmit", "SendStable", "ReceiveStable", "SendStability",
           "ReceiveStability", "Join", "InstallView")
PROPERTIES = ("SafeGC", "StabilityBound")
RECEIVES = ("ReceiveData", "ReceiveStable", "ReceiveStability")


def reset_on_view_change(constants: dict) -> bool:
    """A header's ResetOnViewChange; a header written before the constant was
    split off ResetOnDifferentMembers meant both by that one flag."""
    return constants.get("ResetOnViewChange", constants["ResetOnDifferentMembers"])


def model_for(constants: dict) -> StableModel:
    """The model for a trace header's constants (every member may send)."""
    n = int(constants["N"])
    return StableModel({"N": n, "NInit": constants["NInit"], "Senders": frozenset(range(1, n + 1)),
                        "MaxSeq": constants["MaxSeq"],
                        "ResetOnDifferentMembers": constants["ResetOnDifferentMembers"],
                        "ResetOnViewChange": reset_on_view_change(constants),
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


def lows(digest) -> dict:
    """A STABILITY digest's lows: an implementation whose highs are not the
    spec's (JGroups's are its highest received seqnos) logs its STABILITY
    messages by their lows alone (``msg.lows``)."""
    return {int(x): e["low"] for x, e in digest.items()}


def _wire_msg(ev: dict, s):
    """The model record of the message a Receive* event takes (by its lows:
    the one in flight on its link, if its lows are those)."""
    q, msg = ev["nid"], ev["msg"] or {}
    p = ev["params"]["p"]
    if "lows" in msg:
        want = {int(x): lo for x, lo in msg["lows"].items()}
        return next((m for m in s.net if m["type"] == "stability" and m["from"] == p and m["to"] == q
                     and lows(m["digest"]) == want), None)
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
        w = _wire_msg(ev, s)
        if w is None or w not in s.net:
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
    if ev["name"] == "SendStability" and "lows" in msg:
        return {int(k): v for k, v in msg["lows"].items()} == lows(s.digest[m])
    if ev["name"] == "SendStability":
        return {int(k): tuple(v) for k, v in msg.get("digest", {}).items()} == \
            {x: (e["low"], e["high"]) for x, e in s.digest[m].items()}
    return True


def _vec_norm(d: dict) -> dict:
    return {str(k): v for k, v in d.items() if v}


class StableBinding(Binding):
    """STABLE's table for the replay engine (conformance/replay/engine.py)."""

    protocol = "stable"
    FIELDS = FIELDS

    def __init__(self, trace: Trace) -> None:
        super().__init__(trace)
        h = trace.header
        if h["protocol"] != "stable":
            raise HeaderError(f"not a STABLE trace ({h['protocol']!r})")
        try:
            self.model = model_for(h["constants"])
        except (KeyError, TypeError, ValueError) as e:
            raise HeaderError(f"header constants: {type(e).__name__}: {e}") from None
        self.check_header(self.model.Members, "STABLE")
        self.members = set(self.model.Members)

    def init(self):
        return self.model.init()

    def check(self, ev: dict) -> Optional[str]:
        M = self.members
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

    def successors(self, s, ev: dict):
        return _successors(self.model, s, ev)

    def message(self, s, t, ev: dict) -> Optional[str]:
        if _check_sent_msg(self.model, s, t, ev):
            return None
        return "not the message the model's action sends"

    def observe(self, s, t, ev: dict, var: str):
        return project(t, ev["nid"]).get(var) if var in FIELDS else None

    def norm(self, var: str, value):
        if var in ("view", "heardFrom"):
            return sorted(value)
        if var in ("delivered", "received", "purged"):
            return _vec_norm(value)
        if var == "digest":
            return {str(k): list(v) for k, v in value.items()}
        return value

    def head(self, ev: dict) -> str:
        extra = " (no candidate has that message in flight)" if ev["name"] in RECEIVES else ""
        return f"event {ev['i']} {ev['name']}(nid={ev['nid']}, params={ev['params']}, msg={ev.get('msg')}){extra}"

    def after(self, ev: dict, pairs: list, cands: set):
        """SafeGC and StabilityBound, the model's invariants, on the states
        consistent with the run so far: a violation when no candidate
        satisfies one (the first event where that happens, with a witness
        from a candidate)."""
        for prop in PROPERTIES:
            if prop not in self.found:
                inv = self.model.invariants[prop]
                if not any(inv(t) for t in cands):
                    self.note(prop, ev["i"], witness(self.model, prop, next(iter(cands))))
        return None

    def at_end(self, cands: set):
        """EventuallyCollected and LastMessageDelivered at the end of a
        quiescent run: failing in every candidate."""
        return self.judge_end(cands, lambda t: end_of_run(self.model, t))


def witness(model: StableModel, prop: str, s) -> str:
    """A counterexample to ``prop`` in model state ``s``."""
    M = model.Members
    if prop == "SafeGC":
        for p in M:
            for q in sorted(s.view[p]):
                for x in M:
                    if s.purged[p][x] > s.delivered[q][x]:
                        return (f"member {p} purged messages of {x} up to {s.purged[p][x]}, "
                                f"but member {q} of its view has delivered only up to {s.delivered[q][x]}")
    if prop == "StabilityBound":
        for m in sorted(s.net, key=str):
            if m["type"] != "stability":
                continue
            for x in sorted(m["digest"]):
                for q in sorted(m["digest"]):
                    lo, d = m["digest"][x]["low"], s.delivered[q][x]
                    if lo > d:
                        return (f"member {m['from']}'s STABILITY digest has low {lo} for sender {x}, "
                                f"but member {q} has delivered only {d}")
    return "(no witness found)"


def end_of_run(model: StableModel, s) -> dict:
    """``end_of_run_state``'s properties that fail on ``s``: property -> witness."""
    out = {}
    for prop in ("LastMessageDelivered", "EventuallyCollected"):
        got = end_of_run_state(model, s, prop)
        if got:
            out[prop] = got[1]
    return out


def end_of_run_state(model: StableModel, s, only: Optional[str] = None):
    """Stable.tla's LastMessageDelivered and EventuallyCollected on a model
    state at the end of a quiescent run: every member of the group delivered
    every message of every sender of its view (a joiner's vector starts
    where its digest did, so only the top is required), and collected
    (purged) everything the whole group delivered.  None, or (property,
    witness); ``only``: that property alone."""
    group = sorted(m for m in model.Members if s.view[m])
    for p in group if only in (None, "LastMessageDelivered") else ():
        for x in sorted(s.view[p]):
            if s.delivered[p][x] < s.sent[x]:
                return ("LastMessageDelivered",
                        f"member {p} delivered {s.delivered[p][x]} of member {x}'s {s.sent[x]} messages")
    for p in group if only in (None, "EventuallyCollected") else ():
        for x in sorted(s.view[p]):
            low = min(s.delivered[q][x] for q in group if x in s.view[q])
            if s.purged[p][x] < low:
                return ("EventuallyCollected", f"member {p} still buffers member {x}'s messages "
                                               f"{s.purged[p][x] + 1}..{low}, delivered by every member")
    return None


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


fault_plan = plan_reader(NETWORK_AND_CRASH, "stable")   # no draw: ``auto`` refused


def simulate(seed: int, faults: str, options: dict):
    """One simulated STABLE run: members 1..n-1 (or 1..n without ``join``),
    member n joining at 15 ms, ``messages`` multicasts each; the fault spec
    as ``fault_plan`` reads it (no crashes)."""
    opts = {**DEFAULTS, **(options or {})}
    opts["join"], opts["heard_from_reset"] = _flag(opts["join"]), _flag(opts["heard_from_reset"])
    plan = fault_plan(faults, seed, opts)
    records, summary = sim_stable.simulate(int(opts["nodes"]), int(opts["messages"]), seed, plan,
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


def draw(seed: int) -> tuple[str, dict]:
    """One audit run's size from its seed: 3-4 members (the last joining in
    two runs of three), 1-3 multicasts each, the campaign's faults."""
    rng = random.Random(seed * 7919 + 19)
    return "loss=0.1,dup=0.05,reorder=3", {"nodes": rng.choice((3, 4)), "messages": rng.randint(1, 3),
                                          "join": rng.random() < 2 / 3}


def tla_constants(c: dict) -> dict:
    """spec/Stable/TraceStable.tla's constants from a header's (as ``model_for``:
    every member may send; the optional flags default to the implementation's)."""
    n = int(c["N"])
    return {"N": n, "NInit": c["NInit"], "Senders": frozenset(range(1, n + 1)), "MaxSeq": c["MaxSeq"],
            "ResetOnDifferentMembers": c["ResetOnDifferentMembers"],
            "ResetOnViewChange": reset_on_view_change(c),
            "CoordSwitchesAtJoin": c.get("CoordSwitchesAtJoin", True),
            "GossipMergedDigest": c.get("GossipMergedDigest", False)}


def _tla_digest(d):
    return {x: {"low": e[0], "high": e[1]} if isinstance(e, list) and len(e) == 2 else e
            for x, e in d.items()} if isinstance(d, dict) else d


def tla_encode(ev: dict) -> dict:
    """A record as TraceStable.tla reads it: a digest entry ``[low, high]``
    becomes the spec's record ``[low |-> .., high |-> ..]`` (in ``state`` and in
    a STABILITY message)."""
    out = dict(ev)
    for key in ("state", "msg"):
        part = ev.get(key)
        if isinstance(part, dict) and "digest" in part:
            out[key] = {**part, "digest": _tla_digest(part["digest"])}
    return out


PROTOCOL = Protocol(
    work=("Multicast",),
    name="stable", spec="Stable", actions=ACTIONS, properties=PROPERTIES,
    simulate=simulate, fault_plan=fault_plan, binding=StableBinding, default_options=dict(DEFAULTS),
    campaign_faults="loss=0.1,dup=0.05,reorder=3",
    draw=draw,
    # spec/Stable/TraceStable.tla: views and heardFrom are sets of members
    tla_trace=TLATrace(sets=frozenset({"view", "heardFrom"}), constants=tla_constants,
                       encode=tla_encode, properties=PROPERTIES,
                       # its EndKept: at_end's
                       end=("LastMessageDelivered", "EventuallyCollected")),
)
replay = PROTOCOL.replay      # the registration's replay (conformance/replay/registry.py)


# ---------------------------------------------------------------- lock-step driver

class StableCluster(LockstepNetwork):
    """STABLE stacks (impl/stable.py: transport, reliable in NAKACK mode,
    stable) driven one event at a time (conformance/replay/lockstep.py),
    each record checked against model/stable.py (``StableBinding``).

    Members 1..n_init form the first view; member n_init + 1 joins through
    the membership oracle (``join``: impl/stable.py ``admit``) and the other
    members install its view later (``install``).  The network is the
    spec's: a link holds at most one STABLE and one STABILITY message per
    sender, a newer one replacing an older one in flight (impl/stable.py
    relies on the gossip interval exceeding the network delay for the same).
    The abstraction is every joined member's state; a member that has not
    joined has no view in the model either."""

    def __init__(self, n: int = 3, n_init: int = 2, max_seq: int = 2, heard_from_reset: bool = True) -> None:
        self.reset, self.max_seq, self.joiner = heard_from_reset, max_seq, n_init + 1
        first = tuple(range(1, n_init + 1))
        super().__init__(range(1, n + 1), {m: self.make(m, first) for m in first})
        header = {"protocol": "stable", "nodes": list(self.members), "options": {}, "run_id": "lockstep",
                  "constants": {"N": n, "NInit": n_init, "MaxSeq": max_seq,
                                "ResetOnDifferentMembers": heard_from_reset,
                                "ResetOnViewChange": heard_from_reset}}
        self.engine = ReplayEngine(StableBinding(Trace("<lockstep>", header, [])), visited=False)
        self.actions_seen: dict[str, int] = {}
        self.vid = 1
        self.pending_install: set[int] = set()

    def make(self, nid, members, **kw):
        return stable_stack(nid, members, heard_from_reset=self.reset, **kw)

    def st(self, m):
        return self.stacks[m].layer("stable")

    @property
    def props(self):
        """``found`` (property -> (event, witness)) and ``first`` (event, "Prop: witness") or None:
        SafeGC and StabilityBound on the candidates after every record."""
        f = self.engine.b.found
        return SimpleNamespace(found=f, first=min(((i, f"{p}: {w}") for p, (i, w) in f.items()), default=None))

    def joined(self, m) -> bool:
        return m in self.stacks and bool(self.st(m).view)

    def can_join(self) -> bool:
        return not self.joined(self.joiner) and sim_stable.can_admit(self.stacks)

    # ------------------------------------------------------------ steps

    def app_send(self, m):
        if self.joined(m) and self.st(m).sent < self.max_seq:
            self._handle(m, AppSend(b"m%d.%d" % (m, self.st(m).sent + 1)))

    def join(self):
        self.vid += 1
        self.checking = False           # the coordinator's half of Join is traced by the joiner
        try:
            view = sim_stable.admit(self.stacks, self.joiner, self.vid, self._handle, self.make)
        finally:
            self.checking = True
        self.pending_install = {m for m in view.members if self.st(m).view != frozenset(view.members)}
        self._view = view
        self.check_abstraction()

    def install(self, m):
        self.pending_install.discard(m)
        self._handle(m, ViewChange(self._view))

    # ------------------------------------------------------------ plumbing

    def _effect(self, m, eff) -> bool:
        if not super()._effect(m, eff):
            raise AssertionError(f"unexpected effect {eff!r}")
        return True

    def _model_step(self, ev: dict) -> None:
        self.actions_seen[ev["name"]] = self.actions_seen.get(ev["name"], 0) + 1
        super()._model_step(ev)

    def _transmit(self, src, dest, data):
        msg = codec.decode(data)
        if isinstance(msg, (istable.StableMsg, istable.StabilityMsg)):     # the spec's network: newer replaces older
            kind = type(msg)
            self.inflight = [(s, d, x) for s, d, x in self.inflight
                             if not (s == src and d == dest and isinstance(codec.decode(x), kind))]
        super()._transmit(src, dest, data)

    def abstraction(self) -> dict:
        return {m: self.st(m).state() for m in self.stacks if self.st(m).view}

    def _project(self, s, m: int) -> dict:
        return project(s, m)

    def _matches(self, s, impl) -> bool:
        return super()._matches(s, impl) and all(not s.view[m] for m in self.members if m not in impl)
