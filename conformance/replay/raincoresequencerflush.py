"""SEQUENCER over FLUSH over the Raincore ring: the three-layer stack's
traces replayed against model/raincoresequencerflush.py
(spec/RaincoreSequencerFlush).

The binding is two bindings composed, not copied: SEQUENCER over FLUSH's
(conformance/replay/sequencerflush.py: the pre-pass, the ids, the history
properties) on the three-layer model, and the ring's half of FLUSH over
the ring's (conformance/replay/raincoreflush.py ``ring_*``).  A ring record passes
the pre-pass alone; Crash is the ring's and the composed one; a node is
dead when its ring ``status`` is Down.  What the spec abstracts and how the
binding maps it (the sorted view, joiners): docs/impl.md, "SEQUENCER on
top".  The ring never quiesces, so EventualDelivery is judged at a settled
end.
"""

from __future__ import annotations

import random
from typing import Optional

from groupcheck.conformance.replay import raincoreflush as crf, sequencerflush as csf
from groupcheck.conformance.replay.engine import explain
from groupcheck.conformance.replay.registry import Protocol
from groupcheck.conformance.tlctrace import TLATrace
from groupcheck.core.trace import layers as trace_layers
from groupcheck.core.trace.reader import Trace
from groupcheck.model.raincoresequencerflush import RaincoreSequencerFlushModel
from groupcheck.model.sequencer import subsets
from groupcheck.model.sequencerflush import LogsAgreeKept


ACTIONS = tuple(dict.fromkeys(crf.ACTIONS + csf.SEQ_ACTIONS))
RING_INVARIANTS = crf.RING_INVARIANTS + ("LogsAgree",)
PROPERTIES = csf.PROPERTIES + RING_INVARIANTS + ("EventualDelivery",)
CONSTANTS = ("N", "NInit", "Founder", "MaxSeq", "MaxCrashes")
NAME = "raincoresequencerflush"     # the trace header's protocol


def model_of(constants: dict) -> RaincoreSequencerFlushModel:
    """The three-layer model for a header's constants (any node may crash,
    within MaxCrashes; a fix absent from the header is FALSE, the seed)."""
    missing = [k for k in CONSTANTS if k not in constants]
    if missing:
        raise KeyError(f"header constants lack {missing}")
    n = int(constants["N"])
    return RaincoreSequencerFlushModel({
        **{k: int(constants[k]) for k in CONSTANTS}, "Crashable": range(1, n + 1),
        "Senders": frozenset(range(1, n + 1)),
        "ResendAlways": bool(constants.get("ResendAlways", False)),
        "ResentFirst": bool(constants.get("ResentFirst", False)),
        # FLUSH over the ring's optional constants, their defaults when absent (LossyRing:
        # Raincore's own ring; NewerViewsOnly: absent from a trace from before the VIEW
        # carried the ring's number)
        **{k: bool(constants.get(k, d)) for k, d in crf.OPTIONAL.items()}})


class RaincoreSequencerFlushBinding(csf.SequencerFlushBinding):
    """SEQUENCER over FLUSH's binding on the three-layer model, plus the ring's records."""

    protocol = NAME
    TITLE = "SEQUENCER over FLUSH over the ring"
    FIELDS = csf.SequencerFlushBinding.FIELDS + tuple(f"ring.{v}" for v in crf.LOSSY_FIELDS)

    def make_model(self, trace: Trace):
        c = trace.header["constants"]
        if c.get("UniformDelivery"):
            raise ValueError("UniformDelivery: spec/RaincoreSequencerFlush leaves it out")
        model = model_of(c)
        self.lossy = model.LossyRing
        return model

    def layer(self, ev: dict) -> str:
        if ev["name"] in crf.GONE:
            return "both"
        return trace_layers.layer_of(NAME, ev["name"], ev["params"])

    def state_layer(self, ev: dict) -> str:
        return "ring" if ev["name"] in crf.RING_ACTIONS + crf.OUTSIDE else self.layer(ev)

    def dead(self, s) -> frozenset:
        return self.model.Dead(s)

    # -- the engine's hooks ----------------------------------------------------------
    def check(self, ev: dict) -> Optional[str]:
        if ev["name"] not in ACTIONS:
            return f"name: {ev['name']!r} is not an action of SEQUENCER over FLUSH over the ring"
        if ev["name"] in crf.RING_ACTIONS + crf.OUTSIDE:
            return crf.ring_check(self.model, ev)
        return super().check(ev)

    def successors(self, s, ev: dict):
        if ev["step"] == "ring":
            yield from crf.ring_successors(self.model, s, ev)     # OUTSIDE: none
        elif ev["name"] == "LeaveSuspected":     # the runner's record of a node that left as suspected
            for lost in subsets(set(self.model.Members) - {ev["nid"]}) if self.all_cuts else (frozenset(),):
                yield self.model.LeaveSuspected(s, ev["nid"], lost)
        else:
            yield from super().successors(s, ev)

    def message(self, s, t, ev: dict) -> Optional[str]:
        if ev["step"] == "ring":
            return None          # the TOKEN or 911 is the step's parameter: checked in ``successors``
        return super().message(s, t, ev)

    def logged(self, ev: dict) -> Optional[dict]:
        st = super().logged(ev)
        if st is None:
            return None
        keep = {f"ring.{v}" for v in crf.ring_logged_fields(ev["name"], self.lossy)}
        return {k: v for k, v in st.items() if not k.startswith("ring.") or k in keep}

    def observable(self, ev: dict) -> tuple:
        """A ring record's (and a crash's): the ring variables it is compared
        on; the other steps: SEQUENCER over FLUSH's."""
        if ev["step"] in ("ring", "crash"):
            return self.declared(f"ring.{v}" for v in crf.ring_logged_fields(ev["name"], self.lossy))
        return super().observable(ev)

    def observe(self, s, t, ev: dict, var: str):
        layer, _, v = var.partition(".")
        if layer == "ring":
            return crf.ring_project(t, ev["nid"], self.lossy).get(v)   # (tokenState, lastToken: LossyRing only)
        return super().observe(s, t, ev, var)

    def norm(self, var: str, value):
        layer, _, v = var.partition(".")
        return crf.ring_norm(v, value, self.lossy) if layer == "ring" else value

    def explain(self, cands, ev: dict) -> str:
        if ev["step"] == "ring":        # one record, no join: the engine's field-by-field explanation
            self.blamed = None
            return explain(self, cands, ev)
        return super().explain(cands, ev)

    def head(self, ev: dict) -> str:
        return super().head(ev) + crf.outside_why(ev["name"], "RaincoreSequencerFlush", self.lossy)

    def after(self, ev: dict, pairs: list, cands: set):
        if ev["step"] != "ring":    # a ring step changes no history SEQUENCER over FLUSH's accumulates
            super().after(ev, pairs, cands)
        # LogsAgree carried over the steps that cannot change it: walking every
        # pair of logs after every step made a long run's check quadratic
        self.note_invariants(ev, cands, RING_INVARIANTS, self.model.invariants, pairs=pairs,
                             same={"LogsAgree": LogsAgreeKept})
        return None

    def properties(self, cands: set):
        """The model's invariants noted while stepping (``after``) first,
        then SEQUENCER over FLUSH's on the histories."""
        return self.violated() + super().properties(cands)

    def at_end(self, cands: set):
        """The ring never quiesces (its end is judged ``at_settled``); a
        quiescent claim on this stack (a cluster writes one once every node
        reports its group layers idle) is checked on the deliveries it
        promises: EventualDelivery among the live members, joiners owing
        what was sent from their join view on.  The replay's alone: the
        trace spec's Settled knows no joiner."""
        return self.judge_end(cands, lambda t: self.eventual_delivery())

    def at_settled(self, cands: set):
        """EventualDelivery among the live members (the ring keeps circulating: its
        channels are never empty, so the composed Quiescent is not asked)."""
        owed = self.eventual_delivery()
        return next(iter(owed.items()), None)


# ---------------------------------------------------------------- simulated runs

PROTOCOL_DEFAULTS = {"nodes": 3, "messages": 2}


def fault_plan(faults, seed: int = 0, options: Optional[dict] = None):
    """A run's fault plan: conformance/replay/raincoreflush.py's (crash=NODE@MS,
    join=NODE@MS for a node outside the ring; tokenloss=MS with the lossy
    ring only); ``auto`` draws a plan from ``seed`` as raincoreflush's
    ``draw_faults`` does, the seed salted apart (node 1, the coordinator, in
    half the crashing plans; with the lossy ring a token loss in half the
    plans)."""
    n, ring, _ = crf.ring_size(options, PROTOCOL_DEFAULTS)
    plan = crf.fault_plan(faults, seed, options, salt=41, name=NAME, defaults=PROTOCOL_DEFAULTS)
    bad = [j for j, _ in plan.joins if not ring < j <= n]
    if bad:
        raise ValueError(f"join of node {bad[0]}: a joiner is a node outside the ring 1..{ring}, up to {n}")
    return plan


def simulate(seed: int, faults: str, options: dict):
    """One simulated run of the three-layer stack (impl/sim_raincoreflush.py,
    ``sequencer=True``): FLUSH over the ring's run (conformance/replay/raincoreflush.py
    ``simulate_over_ring``) with SEQUENCER on top."""
    return crf.simulate_over_ring(NAME, seed, faults, {**PROTOCOL_DEFAULTS, **(options or {})}, fault_plan,
                                  sequencer=True)


def draw(seed: int) -> tuple[str, dict]:
    """One audit run's size from its seed: 3 or 4 nodes, in half the runs
    the last of them outside the ring (a joiner, which joins in 70% of
    those), 1 or 2 multicasts each, the ring's Transport Manager the
    simulator's (perfect) or impl/ringtransport.py on the lossy network,
    half and half, the ring Raincore's own (LossyRing) in a third of the
    runs, as raincoreflush's ``draw``; faults drawn by ``auto`` (node 1
    crashing in about a third of the runs)."""
    rng = random.Random(seed * 7919 + 43)
    n = rng.choice((3, 3, 4))
    return "auto", {"nodes": n, "ring": n - 1 if rng.random() < 0.5 else n, "messages": rng.choice((1, 2)),
                    "tm": rng.random() < 0.5, "lossy": rng.random() < 1 / 3}


def tla_log(trace: Trace) -> list:
    """The trace as TraceRaincoreSequencerFlush.tla reads it: SEQUENCER over
    FLUSH's entries (conformance/replay/sequencerflush.py ``tla_log``) with this
    binding's pre-pass, where a ring record passes alone; a ring entry (and
    a Crash) also gets the ring variables the replay compares
    (``crf.ring_logged_fields``), under their spec names."""
    out = csf.tla_log(trace, RaincoreSequencerFlushBinding)
    b = RaincoreSequencerFlushBinding(trace)
    ring = {st["i"]: st for st in b.steps() if st["step"] in ("ring", "crash")}
    for e in out:
        st = ring.get(e["i"])
        if st is None or st.get("state") is None:
            continue
        logged = {f"ring.{v}": v for v in crf.ring_logged_fields(st["name"], b.lossy)}
        e["state"] = {**(e["state"] or {}),
                      **{logged[k]: v for k, v in st["state"].items() if k in logged}}
    return out


def tla_constants(c: dict) -> dict:
    """The trace spec's constants: ``model_of``'s (any node may crash or be
    falsely suspected, every member sends; a fix absent from the header is
    FALSE; FLUSH over the ring's optional constants)."""
    m = model_of(c)
    return {k: getattr(m, k) for k in ("N", "NInit", "Founder", "MaxSeq", "Senders", "MaxCrashes", "Crashable",
                                       "ResendAlways", "ResentFirst", *crf.OPTIONAL)}


PROTOCOL = Protocol(
    work=("Send",),
    name=NAME, spec="RaincoreSequencerFlush", actions=ACTIONS, properties=PROPERTIES,
    simulate=simulate, fault_plan=fault_plan, binding=RaincoreSequencerFlushBinding, default_options=PROTOCOL_DEFAULTS, more_options=("horizon", "tm", "pass_latch", "ring", "lossy", "under_token"),
    draw=draw, campaign_faults="auto", audit_cluster=True, reduce=csf.reduce_state, findings=crf.FINDINGS,
    promises=csf.PROTOCOL.promises,     # the same as over the oracle's views
    # SEQUENCER over FLUSH's, EventualDelivery at a settled end; the ring's invariants
    # (tokens, ring views, LogsAgree on FLUSH's logs) come first and no history event shows them
    judged=csf.JUDGED, run_end="settled",
    # spec/RaincoreSequencerFlush/TraceRaincoreSequencerFlush.tla: one entry per joined
    # step or ring record (tla_log); newNodes is a set
    tla_trace=TLATrace(sets=frozenset({"newNodes"}), constants=tla_constants, prepare=tla_log,
                       var_names={**csf._TLA_VAR, **{f"ring.{v}": v for v in crf.LOSSY_FIELDS}}),
)
replay, replay_records = PROTOCOL.replay, PROTOCOL.replay_records   # the registration's (conformance/replay/registry.py)
