"""Raincore conformance: replay a trace against model/raincore.py.

Theory of operation
-------------------
Each trace event claims one action of spec/Raincore/Raincore.tla (the seed's
eight events, or the environment's Crash, Recover, Join, TokenLoss) by one
node, with the message it takes and the node's post-state.  As in
conformance/replay/engine.py the replay keeps the SET of model states consistent
with the events so far; here every message is logged in full (a token or a
911 is the same record in the trace and in the model's message sets), so
the set stays a singleton unless the model itself offers a choice.  For each
event the named action is applied to every candidate with the logged node
and message; the successors whose projection on that node equals the logged
post-state survive.  An empty set makes the run *nonconforming* there.

The trace properties are then evaluated on the states the trace shows
(each node's latest logged state, starting from the model's initial state):
AtMostOneToken (at most one live node Eating) and ConsistentHistory (the
non-NULL globalView entries at the same index agree across nodes), after
every event.  A failure makes the run a *violation*, with the event where
it first failed.
"""

from __future__ import annotations

import random
from typing import Optional

from groupcheck.conformance import findings
from groupcheck.conformance.replay.engine import Binding, HeaderError, ReplayEngine
from groupcheck.conformance.replay.lockstep import LockstepNetwork
from groupcheck.conformance.replay.registry import Protocol
from groupcheck.conformance.tlctrace import TLATrace
from groupcheck.core.trace import writer as tracefile
from groupcheck.core.trace.reader import Trace
from groupcheck.impl import codec
from groupcheck.impl.events import Receive, Up
from groupcheck.impl.faults import crashed_members, FaultPlan, parse_faults
from groupcheck.impl.raincore import Crash, DeliveryFailed, Join, Recover, spec_msg, Start, TokenMsg
from groupcheck.impl.sim_raincore import make_layers, RaincoreConfig, RING_FAULTS, simulate as simulate_impl
from groupcheck.model.raincore import Msg911, RaincoreModel, Token


ACTIONS = ("Initialization", "TokenReceived", "911Received", "TokenDeliveryFailure", "911DeliveryFailure",
           "EatingTimeout", "HungryTimeout", "StarvingTimeout", "Crash", "Recover", "Join", "TokenLoss")
PROPERTIES = ("AtMostOneToken", "ConsistentHistory")
CONSTANTS = ("N", "InitSize", "InitSeq", "ColdStart", "TimelyTimeouts", "StableFounder",
             "NeutralRecovery", "FreshClaim", "FreshView", "TokenRingClaim", "YieldClaim",
             "Timely911")
# constants added after traces were first written: their value when a header lacks them
_ABSENT = {"TokenRingClaim": False, "YieldClaim": False, "Timely911": False}
# the message a record takes or reports, by its action; each action's model step
MSG_TYPE = {"TokenReceived": "TOKEN", "TokenDeliveryFailure": "TOKEN", "TokenLoss": "TOKEN",
            "911Received": "911", "911DeliveryFailure": "911"}
STEP = {**{a: a for a in ACTIONS}, "911Received": "Received911", "911DeliveryFailure": "DeliveryFailure911"}
IN_TRANSIT = " (no candidate has that message in transit, or its guard is false)"
FIELDS = ("status", "viewState", "tokenState", "globalView", "lastToken", "localView", "newNodes", "token",
          "recovered")
TOKEN_KEYS = ("seq", "nodelist", "cur", "dest", "gvn")


def model_for(constants: dict) -> RaincoreModel:
    return RaincoreModel({k: constants[k] if k in constants else _ABSENT[k] for k in CONSTANTS})


def token_json(t) -> dict:
    """A token in the trace's shape, with the fields it has (the ring of
    spec/RaincoreFlush's abstraction keeps no ``seq``)."""
    return {k: list(t[k]) if k == "nodelist" else t[k] for k in TOKEN_KEYS if k in t}


# node i + 1's ring variables in the trace's JSON shape, one at a time
_PROJECT = {
    "status": lambda s, i: s.status[i], "viewState": lambda s, i: s.viewState[i],
    "tokenState": lambda s, i: s.tokenState[i], "globalView": lambda s, i: [list(v) for v in s.globalView[i]],
    "lastToken": lambda s, i: token_json(s.lastToken[i]), "localView": lambda s, i: list(s.localView[i]),
    "newNodes": lambda s, i: sorted(s.newNodes[i]), "token": lambda s, i: token_json(s.token[i]),
    "recovered": lambda s, i: s.recovered[i],
}


def project(s, n: int, fields: tuple = FIELDS) -> dict:
    """Node ``n``'s part of model state ``s`` in the trace's JSON shape
    (``fields``: the ring variables a composition keeps)."""
    return {v: _PROJECT[v](s, n - 1) for v in fields}


def model_msg(msg: dict):
    """The model's record for a logged message."""
    nl = tuple(msg["nodelist"])
    if msg["type"] == "TOKEN":
        return Token(msg["seq"], nl, msg["cur"], msg["dest"], msg["gvn"])
    return Msg911(msg["orig"], msg["cur"], msg["dest"], nl, msg["seq"], msg["status"])


def successor(model: RaincoreModel, s, ev: dict):
    """The model's successor of ``s`` by the event's action, or None."""
    name, n = ev["name"], ev["nid"]
    step = getattr(model, STEP[name])
    if name == "TokenLoss":
        return step(s, model_msg(ev["msg"]))
    return step(s, n, model_msg(ev["msg"])) if name in MSG_TYPE else step(s, n)


def check_record(ev: dict, nodes, n: int, keys: Optional[dict] = None) -> Optional[str]:
    """A reason to reject a ring record outright, or None: its node is not
    one of ``nodes`` (1..``n``; TokenLoss names none), its TOKEN or 911 is
    absent or of the other type, lacks one of ``keys`` (type -> the fields
    a binding reads; None: not checked) or names a node outside 1..n."""
    name, msg = ev["name"], ev.get("msg")
    if name != "TokenLoss" and (not isinstance(ev["nid"], int) or ev["nid"] not in nodes):
        return f"nid: {ev['nid']!r} is not a node 1..{n}"
    want = MSG_TYPE.get(name)
    if want is None:
        return None
    if not isinstance(msg, dict) or msg.get("type") != want:
        return f"{name} needs a {want} message"
    absent = [k for k in (keys or {}).get(want, ()) if k not in msg]
    if absent:
        return f"msg: the {want} message lacks {absent}"
    for x in [msg.get("cur"), msg.get("dest"), msg.get("orig", 1), *msg.get("nodelist", [])]:
        if x not in nodes:
            return f"msg: node {x!r} is not a node 1..{n}"
    return None


def _bad_event(model: RaincoreModel, ev: dict) -> Optional[str]:
    if ev["name"] not in ACTIONS:
        return f"unknown Raincore action {ev['name']!r}"
    if ev["name"] == "TokenLoss":
        if ev.get("msg") is None or ev["msg"].get("type") != "TOKEN":
            return "TokenLoss without the token it loses"
        return None
    return check_record(ev, model.Node, model.N)


# ---------------------------------------------------------------- trace properties

class Observed:
    """The per-node states a trace shows, from the model's initial state on."""

    def __init__(self, model: RaincoreModel, init) -> None:
        self.nodes = {n: project(init, n) for n in model.Node}

    def update(self, ev: dict) -> None:
        if ev.get("state") is not None and ev["nid"] is not None:
            self.nodes[ev["nid"]] = ev["state"]

    def at_most_one_token(self) -> Optional[str]:
        eating = [n for n, st in self.nodes.items() if st["status"] == "Up" and st["tokenState"] == "Eating"]
        return None if len(eating) <= 1 else f"nodes {eating} are all Eating"

    def consistent_history(self) -> Optional[str]:
        seen: dict[int, tuple[int, list]] = {}
        for n, st in self.nodes.items():
            for i, v in enumerate(st["globalView"]):
                if not v:
                    continue
                if i in seen and seen[i][1] != v:
                    m, w = seen[i]
                    return f"globalView[{i + 1}] is {w} at node {m} but {v} at node {n}"
                seen.setdefault(i, (n, v))
        return None


class RaincoreBinding(Binding):
    """Raincore's table for the replay engine (conformance/replay/engine.py): every
    message is logged whole, so each record names one model step."""

    protocol = "raincore"
    FIELDS = FIELDS

    def __init__(self, trace: Trace) -> None:
        super().__init__(trace)
        h = trace.header
        if h.get("protocol") != "raincore":
            raise HeaderError(f"not a raincore trace ({h.get('protocol')!r})")
        c = h.get("constants", {})
        missing = [k for k in CONSTANTS if k not in c and k not in _ABSENT]
        if missing:
            raise HeaderError(f"header constants lack {missing}")
        try:
            self.model = model_for(c)
        except (ValueError, TypeError) as e:
            raise HeaderError(f"bad constants: {e}") from None
        self.check_header(self.model.Node, "Raincore")

    def init(self):
        return self.model.init()

    def check(self, ev: dict) -> Optional[str]:
        return _bad_event(self.model, ev)

    def successors(self, s, ev: dict):
        yield successor(self.model, s, ev)

    def head(self, ev: dict) -> str:
        why = IN_TRANSIT if ev["name"] in MSG_TYPE and ev["name"] != "TokenLoss" else ""
        return f"event {ev['i']} {ev['name']}(nid={ev['nid']}, msg={ev.get('msg')}){why}"

    def observe(self, s, t, ev: dict, var: str):
        return _PROJECT[var](t, ev["nid"] - 1) if var in _PROJECT else None

    def norm(self, var: str, value):
        return sorted(value) if var == "newNodes" else value

    def after(self, ev: dict, pairs: list, cands: set):
        """AtMostOneToken and ConsistentHistory, the model's invariants, on the
        states consistent with the run so far (a violation when no candidate
        satisfies one); the witness from a candidate's nodes."""
        for prop in PROPERTIES:
            if prop not in self.found:
                inv = self.model.invariants[prop]
                if not any(inv(t) for t in cands):
                    obs = Observed(self.model, next(iter(cands)))
                    fn = obs.at_most_one_token if prop == "AtMostOneToken" else obs.consistent_history
                    self.note(prop, ev["i"], fn() or "fails in every model state consistent with the run")
        return None

    def at_settled(self, cands: set):
        """The spec's Liveness at a settled end (no fault for long enough):
        every live node in Agreement on one view made of exactly the live
        nodes (``Agreed``).  A violation when no candidate state satisfies it."""
        if any(self.model.Agreed(t) for t in cands):
            return None
        t = min(cands, key=repr)
        up = self.model.UpNodes(t)
        seen = {n: (t.viewState[n - 1], list(self.model.LastGlobalView(t, n))) for n in up}
        return ("Agreed", "the live ring does not agree on one view of the live nodes "
                + str(up) + ": " + ", ".join(f"node {n} {vs} on {v}" for n, (vs, v) in seen.items()))


# ---------------------------------------------------------------- simulated runs

def fault_plan(faults, seed: int = 0, options: Optional[dict] = None):
    """A run's fault plan: the fault grammar's ``crash``, ``recover``,
    ``join``, ``tokenloss`` and ``late911`` items (impl/faults.py; e.g.
    ``crash=2@100,recover=2@400,tokenloss=50,join=4@200``); ``auto`` draws a
    plan from ``seed`` for the run's nodes and ring (``draw_faults``),
    ``auto,ITEMS`` adds the items to it (an aimed plan, ``AIMED``)."""
    opts = {**PROTOCOL_DEFAULTS, **(options or {})}
    n, ring = int(opts["nodes"]), int(opts["ring"])
    return parse_faults(faults, RING_FAULTS, "raincore", draw=lambda: draw_faults(random.Random(seed), n, ring))


WINDOW = 0.5     # faults happen in the first half second of virtual time


def draw_faults(rng, n: int, ring: int):
    """A random plan: up to ``ring - 1`` crashes of configured nodes (each
    recovering with probability 0.6), up to two token losses, and a join of
    each node outside the ring with probability 0.7."""
    crashes, recoveries = [], []
    for v in rng.sample(range(1, ring + 1), rng.randint(0, ring - 1)):
        at = round(rng.uniform(0.0, WINDOW), 4)
        crashes.append((v, at))
        if rng.random() < 0.6:
            recoveries.append((v, round(at + rng.uniform(0.02, 0.4), 4)))
    losses = tuple(sorted(round(rng.uniform(0.0, WINDOW), 4) for _ in range(rng.randint(0, 2))))
    joins = tuple((v, round(rng.uniform(0.0, WINDOW), 4)) for v in range(ring + 1, n + 1) if rng.random() < 0.7)
    return FaultPlan(crashes=tuple(crashes), recoveries=tuple(recoveries), joins=joins, token_losses=losses)


# ---------------------------------------------------------------- findings with a shape

FOUNDER = 1     # the cold start's founder (Initialization), the node StableFounder keeps up


def _founder_crash(trace):
    """The event at which the founder crashed, or None."""
    return next((ev.get("i", k) for k, ev in enumerate(trace.events)
                 if ev.get("name") == "Crash" and ev.get("nid") == FOUNDER), None)


def _witness_regenerated(trace, prop: str, reason: str, at=None):
    """F8/F9 (docs/raincore.md): with every fix the ring can still hold two
    tokens, and then commit two views at one index; each such run has a node
    crash followed by a 911 claim that regenerates the token (a
    ``911Received`` that leaves its node Eating) before the violation.  The
    founder's crash (outside StableFounder) is one way to get there."""
    crash = regen = None
    for k, ev in enumerate(trace.events):
        i, name = ev.get("i", k), ev.get("name")
        if at is not None and i > at:
            break
        if name == "Crash" and crash is None:
            crash = (i, ev.get("nid"))
        elif (name == "911Received" and crash is not None and regen is None
              and (ev.get("state") or {}).get("tokenState") == "Eating"):
            regen = (i, ev.get("nid"))
    if crash is None or regen is None:
        return None
    founder = _founder_crash(trace) is not None
    return (f"{reason}, after node {crash[1]} crashed (event {crash[0]}) and node {regen[1]} regenerated the "
            f"token on a 911 claim (event {regen[0]})" + (" in a run where the founder crashed" if founder else ""))


def _witness_founder_liveness(trace, prop: str, reason: str, at=None):
    """F6 (docs/raincore.md, LiveNoStable3): without StableFounder a ring
    can starve for ever; in the implementation's runs, a settled end with no
    agreement follows a crash of the founder."""
    at_f = _founder_crash(trace)
    if at_f is None:
        return None
    return f"{reason}, in a run where the founder, node {FOUNDER}, crashed at event {at_f} (outside StableFounder)"


def plan_kind(header: dict) -> str:
    """A run's fault plan as the rates count it: the aimed plan (late 911s,
    ``AIMED``), else the founder crashes or not."""
    faults = header.get("faults") or {}
    if faults.get("late_911"):
        return "late 911s"
    return "founder crash" if FOUNDER in crashed_members(faults) else "founder stays"


# Rates: measured on the audit's drawn plans (``draw``), seeds 10000-15999 (6,000 runs);
# "late 911s": every seed's drawn plan with AIMED's items, seeds 10000-13999 (4,000 runs).
FINDINGS = (
    findings.Finding("raincore/two-tokens", ("AtMostOneToken", "ConsistentHistory"),
                     "docs/raincore.md#3-findings", _witness_regenerated,
                     rates={"founder crash": (1, 2105), "founder stays": (4, 3895), "late 911s": (5, 4000)}),
    findings.Finding("raincore/founder-crash-starves", ("Agreed",),
                     "docs/raincore.md#3-findings", _witness_founder_liveness,
                     rates={"founder crash": (1, 2105), "late 911s": (0, 4000)}),
)


def simulate(seed: int, faults: str, options: dict):
    """One simulated Raincore run as groupcheck-trace/2 records, and a summary."""
    opts = {**PROTOCOL_DEFAULTS, **(options or {})}
    n, ring = int(opts["nodes"]), int(opts["ring"])
    cfg = RaincoreConfig(n=n, init_size=ring, init_seq=int(opts.get("init_seq", 11)))
    plan = fault_plan(faults, seed, opts)
    records, summary, sim = simulate_impl(cfg, seed, plan, horizon=float(opts.get("horizon", 30.0)))
    run_id = f"raincore-n{n}-r{ring}-s{seed}"
    # the token circulates for ever: a ring never quiesces (summary["quiescent"] means "agreed");
    # a run that settled is judged by the spec's Liveness at its end (RaincoreBinding.at_settled)
    v2 = tracefile.to_v2(records, cfg.constants(), run_id, quiescent=False, end_clock=summary.get("end_clock"),
                         settled=summary["settled"])
    line = {"run_id": run_id, "seed": seed, "events": len(v2) - 2, "quiescent": summary["quiescent"],
            "agreed": summary["agreed"], "live": summary["live"], "end_clock": round(summary["end_clock"], 4),
            "view": list(sim.layer(summary["live"][0]).lastGlobalView) if summary["live"] else [],
            "regenerated": sum(st.get("regenerated", 0) for st in summary["stats"].values()),
            "faults": plan.to_json()}
    return v2, line


PROTOCOL_DEFAULTS = {"nodes": 4, "ring": 3}

# Plans aimed at a guard the drawn faults alone never reach, added to the
# drawn plan of AIMED_SHARE of the audit's runs (docs/raincore.md section 7).
# stale911: 911s up to 1 s late and two token losses 600 ms apart, so a
# claim comes home after its originator has held a newer token and starves
# again: the layer must not regenerate on it (fresh_claim, F4).
AIMED = {"stale911": "late911=1000,tokenloss=100,tokenloss=700"}
AIMED_SHARE = 1 / 3


def draw(seed: int) -> tuple[str, dict]:
    """One audit run's size from its seed: a ring of 3 or 4 nodes and one
    node outside it; the fault plan (crashes, recoveries, token losses,
    joins) is drawn from the seed by ``auto``, in a third of the runs with
    the aimed ``stale911`` items added."""
    rng = random.Random(seed * 7919 + 23)
    ring = rng.choice((3, 4))
    faults = "auto," + AIMED["stale911"] if rng.random() < AIMED_SHARE else "auto"
    return faults, {"nodes": ring + 1, "ring": ring}


def tla_constants(c: dict) -> dict:
    """spec/Raincore/TraceRaincore.tla's constants from a header's: the
    spec's constants, the variants selected by the header's flags (a flag
    added after traces were first written takes its ``_ABSENT`` value)."""
    return {k: c[k] if k in c else _ABSENT[k] for k in CONSTANTS}


PROTOCOL = Protocol(
    work=("TokenReceived",),
    name="raincore", spec="Raincore", actions=ACTIONS, properties=PROPERTIES,
    simulate=simulate, fault_plan=fault_plan, binding=RaincoreBinding, default_options=PROTOCOL_DEFAULTS,
    more_options=("init_seq", "horizon"), draw=draw,
    campaign_faults="auto",
    # spec/Raincore/TraceRaincore.tla: a node's newNodes queue is a set
    tla_trace=TLATrace(sets=frozenset({"newNodes"}), constants=tla_constants, properties=PROPERTIES),
    # docs/raincore.md F8/F9, seen in the implementation (FINDINGS above)
    findings=FINDINGS, plan_kind=plan_kind,
)
replay, replay_records = PROTOCOL.replay, PROTOCOL.replay_records   # the registration's (conformance/replay/registry.py)


# ---------------------------------------------------------------- lock step

class RingMessages:
    """Mixed into the lock-step driver of a stack over the ring (before
    ``LockstepNetwork``): its ``abstraction`` is (the members' states, the
    tokens in flight, the 911s in flight), and the two message sets must
    equal the model's ``tokenMsgs`` and ``msgs911`` besides the states."""

    def _matches(self, s, impl) -> bool:
        states, toks, m911 = impl
        return s.tokenMsgs == toks and s.msgs911 == m911 and super()._matches(s, states)

    def _differences(self, s, impl) -> list[str]:
        states, toks, m911 = impl
        diff = super()._differences(s, states)
        if s.tokenMsgs != toks or s.msgs911 != m911:
            diff.append(f"ring messages: model {set(s.tokenMsgs) | set(s.msgs911)} != impl {set(toks) | set(m911)}")
        return diff


class RaincoreLockstep(RingMessages, LockstepNetwork):
    """Drive Raincore layers one event at a time and check every step
    against the model (the harness is
    conformance/replay/lockstep.py).

    The driver is the environment: it holds the messages handed to the
    Transport Manager (as encoded frames), the armed timers, and decides
    every step: deliver one message (a message to a node that is not up
    comes back to its sender as DeliveryFailed), fire an armed timer, crash,
    recover or join a node, or lose a token in transit.  Like the spec's
    ``tokenMsgs`` and ``msgs911``, the Transport Manager here holds a SET of
    messages: a message equal to one already in flight is the same message.

    Each trace event the layers emit is replayed on the candidate set as
    ``replay`` does; then, once per step, the whole implementation, every
    node's state and the messages in flight, must equal some candidate
    model state."""

    checking = False            # a step may take several inputs (a crash, then its losses): checked once

    def __init__(self, n: int = 4, ring: int = 3, init_seq: int = 11, **opts) -> None:
        self.cfg = RaincoreConfig(n=n, init_size=ring, init_seq=init_seq, **opts)
        self.model = model_for(self.cfg.constants())
        self.nodes = make_layers(self.cfg)
        super().__init__(self.nodes, self.nodes)
        header = {"protocol": "raincore", "nodes": list(self.model.Node), "constants": self.cfg.constants(),
                  "options": {}, "run_id": "lockstep"}
        self.engine = ReplayEngine(RaincoreBinding(Trace("<lockstep>", header, [])), visited=False)
        self.commits: dict[int, list] = {k: [] for k in self.nodes}
        ringt = self.nodes[1].init_ring
        for k in ringt:
            self._handle(k, Start())
        if not self.cfg.cold_start:
            m = self.nodes[ringt[-1]].lastToken
            self._transmit(ringt[-1], m.dest, m)
        self.check_abstraction()

    # ------------------------------------------------------------ queries

    def msg(self, i: int):
        return codec.decode(self.inflight[i][2])

    def up(self) -> list[int]:
        return [k for k, v in self.nodes.items() if v.status == "Up"]

    def live(self) -> list[int]:
        return self.up()

    def can_crash(self, k: int) -> bool:
        return self.nodes[k].status == "Up" and len(self.up()) > 1

    # ------------------------------------------------------------ steps

    def deliver(self, i: int) -> None:
        super().deliver(i)
        self.check_abstraction()

    def fire(self, k: int, name: str) -> None:
        super().fire(k, name)
        self.check_abstraction()

    def crash(self, k: int) -> None:
        self._handle(k, Crash())
        self.inflight = [x for x in self.inflight if x[0] != k]     # what it sent is lost with it
        self.timers[k].clear()
        self.check_abstraction()

    def recover(self, k: int) -> None:
        self._handle(k, Recover())
        self.check_abstraction()

    def join(self, k: int) -> None:
        self._handle(k, Join())
        self.check_abstraction()

    def lose(self, i: int) -> None:
        m = self.msg(i)
        assert isinstance(m, TokenMsg)
        del self.inflight[i]
        self.env_step("TokenLoss", msg=spec_msg(m))
        self.check_abstraction()

    # ------------------------------------------------------------ plumbing

    def _receive(self, src: int, dest: int, frame) -> None:
        m = codec.decode(frame)
        if self.nodes[dest].status == "Up":
            self._handle(dest, Receive(src, m))
        else:
            self._handle(src, DeliveryFailed(m))

    def _transmit(self, src: int, dest: int, m) -> None:
        frame = codec.encode(m)
        if (src, dest, frame) not in self.inflight:
            self.inflight.append((src, dest, frame))

    def _effect(self, k: int, eff) -> bool:
        if isinstance(eff, Up):
            self.commits[k].append((eff.msg.view.vid, eff.msg.view.members))
            return True
        return super()._effect(k, eff)

    def _project(self, s, k: int) -> dict:
        return project(s, k)

    def abstraction(self):
        states = {k: v.state() for k, v in self.nodes.items()}
        msgs = [self.msg(i) for i in range(len(self.inflight))]
        toks = frozenset(model_msg(spec_msg(m)) for m in msgs if isinstance(m, TokenMsg))
        m911 = frozenset(model_msg(spec_msg(m)) for m in msgs if not isinstance(m, TokenMsg))
        return states, toks, m911

