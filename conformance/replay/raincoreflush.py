"""FLUSH over the Raincore ring: the composed stack's traces replayed
against model/raincoreflush.py (spec/RaincoreFlush).

A record is FLUSH's or the ring's by its action (impl/stacks/raincoreflush.py
``layer_of``).  The replay is FLUSH's binding on the composed model plus the
ring's steps, each compared on what the abstraction keeps (the ``ring_*``
helpers below, which the three-layer binding reuses); a ring action outside
the abstraction is no step of the model unless the header says LossyRing.
What is compared, field by field: docs/trace-format.md, raincoreflush, and
spec/RaincoreFlush/TraceRaincoreFlush.tla's header.  Properties: FLUSH's,
the ring's and the composition's ViewsFromRing, on the candidates after
every step.
"""

from __future__ import annotations

import random
from typing import Optional

from groupcheck.conformance import findings
from groupcheck.conformance.replay import flush as cf, raincore as rc
from groupcheck.conformance.replay.engine import HeaderError, ReplayEngine
from groupcheck.conformance.replay.lockstep import LockstepError, LockstepNetwork
from groupcheck.conformance.replay.registry import Protocol
from groupcheck.conformance.tlctrace import TLATrace
from groupcheck.core import properties
from groupcheck.core.trace import writer as tracefile
from groupcheck.core.trace.reader import Trace
from groupcheck.impl.events import AppSend, Deliver, Receive, Up
from groupcheck.impl.faults import fault_spec, FaultPlan, parse_faults
from groupcheck.impl.raincore import (Crash, DeliveryFailed, Join, Msg911 as IMsg911,
                                      spec_msg as ring_spec_msg, Start, Timing, TokenMsg)
from groupcheck.impl.sim_flush import rescue_views
from groupcheck.impl.sim_raincoreflush import RING_FLUSH_FAULTS, RingFlushConfig, simulate_ring_flush
from groupcheck.impl.stacks.raincore import raincore_layer
from groupcheck.impl.stacks.raincoreflush import ring_flush_stack, RingNode, steady_seq
from groupcheck.model.raincoreflush import Msg911, RaincoreFlushModel, Token


RING_ACTIONS = ("TokenReceived", "911Received", "TokenDeliveryFailure", "911DeliveryFailure", "EatingTimeout",
                "Crash", "LeaveSuspected", "Join")
OUTSIDE = ("Initialization", "HungryTimeout", "StarvingTimeout", "Recover", "TokenLoss")
FLUSH_ACTIONS = tuple(a for a in cf.SPEC_ACTIONS if a not in ("Crash", "Join", "Leave"))
ACTIONS = FLUSH_ACTIONS + RING_ACTIONS + OUTSIDE
RING_RECORDS = RING_ACTIONS + OUTSIDE      # the ring layer's records
GONE = ("Crash", "LeaveSuspected")         # a node killed, or left as suspected: the runner's records
# LossyRing: the ring records that are spec/Raincore's steps on the ring variables (Crash and
# Join are the composition's: a crash cuts FLUSH's channels, a joiner enters FLUSH by a VIEW)
LOSSY_RING = ("TokenReceived", "911Received", "TokenDeliveryFailure", "911DeliveryFailure", "EatingTimeout",
              "HungryTimeout", "StarvingTimeout", "TokenLoss")
RING_FIELDS = ("status", "viewState", "globalView", "localView", "newNodes", "token")
# LossyRing: the ring's whole state but ``recovered`` (no recovery)
LOSSY_FIELDS = RING_FIELDS + ("tokenState", "lastToken")
RING_INVARIANTS = ("AtMostOneToken", "ConsistentHistory", "ViewsFromRing")
PROPERTIES = cf.PROPERTIES + RING_INVARIANTS
CONSTANTS = ("N", "NInit", "Founder", "MaxMsgs", "MaxCrashes")
# optional header constants, their value when absent (traces before the lossy ring, or before
# the VIEW carried the ring's number, or before false suspicions were modelled, lack them)
OPTIONAL = {"LossyRing": False, "TimelyTimeouts": True, "LateFailures": False, "NewerViewsOnly": False,
            "FalseSuspicion": False, "ShunSuspected": False, "SuspectLeaves": False, "ViewUnderToken": False}


def model_msg(msg: dict, lossy: bool = False):
    """The model's record for a logged TOKEN or 911 (the fields it keeps;
    under LossyRing every field, as spec/Raincore's)."""
    if lossy:
        return rc.model_msg(msg)
    if msg.get("type") == "TOKEN":
        return Token(tuple(msg["nodelist"]), msg["cur"], msg["dest"], msg["gvn"])
    return Msg911(msg["orig"], msg["cur"], msg["dest"])


def lossy(model) -> bool:
    return bool(getattr(model, "LossyRing", False))


# the fields a logged message must carry for ``model_msg`` (LossyRing: Raincore's message)
_MSG_KEYS = {"TOKEN": ("nodelist", "cur", "dest", "gvn"), "911": ("orig", "cur", "dest")}
_LOSSY_KEYS = {"TOKEN": ("seq",), "911": ("nodelist", "seq", "status")}


def ring_check(model, ev: dict) -> Optional[str]:
    """A reason to reject a ring record outright (conformance/replay/raincore.py
    ``check_record``, the message also lacking a field ``model_msg``
    reads), or None.  Shared with conformance/replay/raincoresequencerflush.py."""
    keys = {t: _MSG_KEYS[t] + (_LOSSY_KEYS[t] if lossy(model) else ()) for t in _MSG_KEYS}
    return rc.check_record(ev, model.Members, model.N, keys)


def ring_successors(model, s, ev: dict):
    """The model's ring steps a ring record names (not Crash: each composed
    binding has its own, with its cuts).  A TOKEN or 911 record is a step
    only if that message (on the fields the model keeps) is in transit; an
    action outside the abstraction (``OUTSIDE``) is none.  Under LossyRing
    the step is spec/Raincore's (conformance/replay/raincore.py ``successor`` on the
    ring variables): timeouts and TokenLoss are steps, Initialization and
    Recover are not (no cold start, no recovery)."""
    name, n = ev["name"], ev["nid"]
    if lossy(model):
        if name == "TokenDeliveryFailure":     # the composition's: LateFailure, FalseSuspicion too
            yield model.TokenDeliveryFailure(s, n, model_msg(ev["msg"], True))
        elif name == "911DeliveryFailure":     # the composition's: FalseSuspicion too
            yield model.DeliveryFailure911(s, n, model_msg(ev["msg"], True))
        elif name in LOSSY_RING:
            yield model.ring_step(s, rc.successor(model.ring, model.ring_state(s), ev))
        elif name == "Join":    # (RaincoreFlushBinding's goes through FLUSH's Join)
            yield model.Join(s, n)
        return
    if name in OUTSIDE:
        return
    if name in rc.MSG_TYPE:
        m = model_msg(ev["msg"])
        if m in (s.tokenMsgs if rc.MSG_TYPE[name] == "TOKEN" else s.msgs911):
            yield getattr(model, rc.STEP[name])(s, n, m)
    elif name in ("EatingTimeout", "Join"):
        yield getattr(model, name)(s, n)


def ring_logged_fields(name: str, is_lossy: bool = False) -> tuple:
    """The ring variables a ring record's state is compared on: a Crash on
    ``status`` only (the model freezes a crashed node's ring variables, the
    layer resets its view and token state); under LossyRing all of them,
    a Crash included (spec/Raincore's Crash resets them as the layer does)."""
    if is_lossy:
        return LOSSY_FIELDS
    return ("status",) if name in GONE else RING_FIELDS


def ring_norm(var: str, value, is_lossy: bool = False):
    """A logged ring variable in ``ring_project``'s shape."""
    if var in ("token", "lastToken") and isinstance(value, dict):
        return {k: (list(value[k]) if k == "nodelist" else value.get(k)) for k in rc.TOKEN_KEYS[not is_lossy:]}
    if var == "newNodes":
        return sorted(value)
    return value


def outside_why(name: str, spec: str = "RaincoreFlush", is_lossy: bool = False) -> str:
    """What a replay's failure message adds for a ring record."""
    if is_lossy and name in ("Initialization", "Recover"):
        return f" (outside spec/{spec} with LossyRing: no cold start, no recovery)"
    if name in OUTSIDE and not is_lossy:
        return (f" (outside spec/{spec}'s abstraction of the ring: one token, never lost, so no "
                "timeout but the Eating one, no regeneration, no recovery)")
    return rc.IN_TRANSIT if name in rc.MSG_TYPE else ""


def ring_project(s, n: int, is_lossy: bool = False) -> dict:
    """Node ``n``'s ring variables in model state ``s``, in the trace's shape
    (conformance/replay/raincore.py's; under LossyRing also ``tokenState`` and ``lastToken``)."""
    return rc.project(s, n, LOSSY_FIELDS if is_lossy else RING_FIELDS)


class RaincoreFlushBinding(cf.FlushBinding):
    """The composed stack's table for the replay engine: FLUSH's, plus the ring."""

    protocol = "raincoreflush"
    FIELDS = cf.FIELDS + LOSSY_FIELDS

    def __init__(self, trace: Trace, whole_states: bool = False) -> None:
        h = trace.header
        if h.get("protocol") != "raincoreflush":
            raise HeaderError(f"not a raincoreflush trace ({h.get('protocol')!r})")
        c = h.get("constants", {})
        missing = [k for k in CONSTANTS if k not in c]
        if missing:
            raise HeaderError(f"header constants lack {missing}")
        bad = [k for k in OPTIONAL if k in c and not isinstance(c[k], bool)]
        if bad:
            raise HeaderError(f"header constants {bad} must be true or false")
        if c["N"] != len(h["nodes"]):      # (Binding's check, before a model of N members is built)
            raise HeaderError(f"constants.N: {c['N']!r} is not the number of the header's nodes ({len(h['nodes'])})")
        try:
            # Crashable bounds TLC's models; a run may crash any node (the header's
            # constants are scalars), within MaxCrashes
            model = RaincoreFlushModel({**{k: c[k] for k in CONSTANTS}, **{k: c.get(k, d) for k, d in OPTIONAL.items()},
                                        "Crashable": range(1, int(c["N"]) + 1)})
        except (ValueError, TypeError) as e:
            raise HeaderError(f"bad constants: {e}") from None
        super().__init__(trace, model, whole_states=whole_states)
        self.lossy = model.LossyRing
        self.check_header(model.Members, "RaincoreFlush")

    def check(self, ev: dict) -> Optional[str]:
        name = ev["name"]
        if name not in ACTIONS:
            return f"name: {name!r} is not an action of FLUSH over the ring"
        if name in FLUSH_ACTIONS:
            return cf._out_of_range(self.model, ev)
        return ring_check(self.model, ev)

    def successors(self, s, ev: dict):
        name = ev["name"]
        if name in OUTSIDE + LOSSY_RING:
            yield from ring_successors(self.model, s, ev)     # none outside the abstraction
            return
        if name == "LeaveSuspected":       # the runner's record of a node that left as suspected
            yield from self.model.LeaveSuspected(s, ev["nid"], greatest=not self.all_cuts)
            return
        yield from cf._successors(self.model, s, ev, self.all_cuts)   # FLUSH's actions, Crash, Join

    def message(self, s, t, ev: dict) -> Optional[str]:
        if ev["name"] in RING_RECORDS:
            return None         # the message is the successor's parameter: checked in ``successors``
        return super().message(s, t, ev)

    def logged(self, ev: dict) -> Optional[dict]:
        st = super().logged(ev)
        if st is None or ev["name"] not in RING_RECORDS:
            return st
        keep = ring_logged_fields(ev["name"], self.lossy)
        return {k: v for k, v in st.items() if k in keep}

    def observable(self, ev: dict) -> tuple:
        """A ring record's: the ring variables it is compared on; any other: FLUSH's."""
        return self.declared(ring_logged_fields(ev["name"], self.lossy) if ev["name"] in RING_RECORDS
                             else cf.FIELDS)

    def observe(self, s, t, ev: dict, var: str):
        if var in LOSSY_FIELDS:
            return ring_project(t, ev["nid"], self.lossy).get(var)
        return super().observe(s, t, ev, var)

    def norm(self, var: str, value):
        if var in LOSSY_FIELDS:
            return ring_norm(var, value, self.lossy)
        return super().norm(var, value)

    def head(self, ev: dict) -> str:
        return super().head(ev) + outside_why(ev["name"], is_lossy=self.lossy)

    def after(self, ev: dict, pairs: list, cands: set):
        super().after(ev, pairs, cands)         # FLUSH's invariants, with their witnesses
        self.note_invariants(ev, cands, RING_INVARIANTS, self.model.invariants)
        return None

    def at_end(self, cands: set):
        """The ring never quiesces (its token circulates; the ring's own
        end is judged ``at_settled``); a quiescent claim on this stack (a
        cluster writes one once every node reports its group layers idle)
        is checked on what it promises of FLUSH: the catalogue's
        EventualDelivery on the candidates (conformance/replay/flush.py
        ``flush_eventual_delivery``), failing in every candidate
        (TraceRaincoreFlush.tla's End step judges the same)."""
        def judge(t):
            found = cf.flush_eventual_delivery(self.model, t, self.ids)
            return dict([found]) if found else {}
        return self.judge_end(cands, judge)

    def at_settled(self, cands: set):
        """At a settled end: every live node out of its flush and in the
        ring's view of the live nodes.  A violation when no candidate is."""
        m = self.model
        for t in cands:
            up = [n for n in m.Members if m.Alive(t, n)]
            ring = {frozenset(m.LastGlobalView(t, n)) for n in up}
            if (len(ring) == 1 and ring == {frozenset(up)}
                    and all(m.IsMember(t, n) and t.views[t.vid[n - 1] - 1] == frozenset(up)
                            and t.phase[n - 1] == "Normal" and not t.blocked[n - 1]
                            and t.flushInit[n - 1] == 0 for n in up)):
                return None
        t = min(cands, key=repr)
        up = [n for n in m.Members if m.Alive(t, n)]
        return ("Settled", "the live nodes " + str(up) + " are not all in the ring's view of themselves, out of "
                "their flush: " + ", ".join(f"node {n}: vid {t.vid[n - 1]} phase {t.phase[n - 1]} "
                                             f"ring {list(m.LastGlobalView(t, n))}" for n in up))


# ---------------------------------------------------------------- simulated runs

PROTOCOL_DEFAULTS = {"nodes": 3, "ring": 3, "messages": 2}


def ring_size(options: Optional[dict], defaults: dict) -> tuple[int, int, bool]:
    """(nodes, ring, whether the ring loses tokens) of a run over the ring:
    with the Transport Manager (option ``tm``) the network loses frames, not
    tokens."""
    opts = {**defaults, **(options or {})}
    n = int(opts["nodes"])
    lossy = cf._flag(opts.get("lossy", False)) and not cf._flag(opts.get("tm", False))
    return n, int(opts.get("ring", n)), lossy


def fault_plan(faults, seed: int = 0, options: Optional[dict] = None, *, salt: int = 31, name: str = "raincoreflush",
               defaults: Optional[dict] = None):
    """A run's fault plan: the fault grammar's network, ``crash``, ``join``
    and ``tokenloss`` items (impl/faults.py; e.g. ``crash=1@100,join=4@50,
    tokenloss=120,loss=0.1,dup=0.05,reorder=3,truncate=0.1``;
    ``tokenloss=T``: the next token sent after T is lost, the lossy ring
    only); ``auto`` draws a plan from ``seed`` (``draw_faults``, the seed
    salted by ``salt``), ``auto,ITEMS`` adds the items to it.  ``name``,
    ``defaults``: those of SEQUENCER over FLUSH over the ring, which reads
    the same items."""
    n, ring, lossy = ring_size(options, PROTOCOL_DEFAULTS if defaults is None else defaults)
    plan = parse_faults(faults, RING_FLUSH_FAULTS, name,
                        draw=lambda: draw_faults(random.Random(seed * 7919 + salt), ring, n, lossy))
    if plan.token_losses and not lossy:
        raise ValueError("tokenloss needs the lossy ring (option lossy=1)")
    return plan


def draw_faults(rng, ring: int, n: int, lossy: bool = False):
    """A random plan: a lossy network, no crash, one crash (the coordinator
    in half the plans) or two, and each node outside the ring joining with
    probability 0.7, at times in the first 0.3 s; with the lossy ring also
    a token loss in half the plans (its crashes land anywhere: the plan's
    times are taken as they come)."""
    k = rng.choice((0, 1, 1, 2))
    first = 1 if k and rng.random() < 0.5 else rng.randint(1, ring)
    victims = [first] + rng.sample([x for x in range(1, ring + 1) if x != first], k - 1) if k else []
    crashes = tuple((v, round(rng.uniform(0.0, 0.3), 4)) for v in victims)
    joins = tuple((v, round(rng.uniform(0.0, 0.3), 4)) for v in range(ring + 1, n + 1) if rng.random() < 0.7)
    losses = (round(rng.uniform(0.0, 0.3), 4),) if lossy and rng.random() < 0.5 else ()
    return FaultPlan(crashes=crashes, joins=joins, token_losses=losses, loss=0.1, duplicate=0.05,
                     reorder_window=0.003)


def history_check(sim, cfg) -> list[str]:
    """The simulator's own check of a run over the ring (impl/sim_raincoreflush.py
    ``simulate_ring_flush``'s simulator and config), with no help from the
    model: FLUSH's promises (``check_run``), and with SEQUENCER on top the
    survivors' total order and delivery (``check_total_order``).  With
    pass_latch a DATA the coordinator multicasts after its FLUSH_COMPLETED is
    dropped by every member (the spec's old-view DATA) and re-sent through
    the forward-tables: FLUSH's own survivor delivery does not hold there,
    SEQUENCER's does.  Returns the violations (empty: clean)."""
    return (check_run(sim, flush_delivery=not (cfg.sequencer and cfg.pass_latch))
            + (check_total_order(sim) if cfg.sequencer else []))


def check_run(sim, flush_delivery: bool = True) -> list[str]:
    """The run's history against FLUSH's promises, membership from the ring
    (the spec's VirtualSynchrony and ViewsFromRing, plus no duplicate,
    integrity and survivor delivery: FLUSH's own, unless ``flush_delivery``
    is off).  Returns the violations (empty: clean)."""
    bad: list[str] = []
    views: dict[int, tuple] = {}
    for n in sim.fstacks:
        for v, members in sim.flush(n).views.items():
            if v >= 1 and views.setdefault(v, members) != members:
                bad.append(f"views: node {n}'s view {v} is {members}, another node's {views[v]}")
    # FLUSH's own deliveries (under SEQUENCER they go up, not out), each in the view it was
    # multicast in, judged by the catalogue (core/properties.py)
    h = properties.History(nodes=sorted(sim.fstacks), sent=dict.fromkeys(sim.sent_in, True))
    for n in sorted(sim.fstacks):
        f = sim.flush(n)
        h.views[n] = [(v, tuple(f.views[v]), None) for v in sorted(f.views) if v >= 1]
        h.deliveries[n] = [(key, sim.sent_in.get(key), i) for i, key in enumerate(f.delivered, 1)]
    bad += [f"{v.property}: {v.reason}" for v in properties.judge(h, ("NoDuplicates", "Integrity", "VirtualSynchrony"))]
    delivered = {n: set(sim.flush(n).delivered) for n in sim.fstacks}
    live = set(sim.live())
    for key, v in sorted(sim.sent_in.items()):
        if key[0] in live and flush_delivery:
            # a joiner delivers nothing of the views before its own
            for n in sorted(m for m in live if m in views.get(v, ())):
                if key not in delivered[n]:
                    bad.append(f"SurvivorDelivery: survivor {n} never delivered {key} of survivor {key[0]}")
                    break
    committed = [tuple(sorted(v)) for n in sorted(sim.stacks) for v in sim.layer(n).globalView if v]
    for v in sorted(views):
        if v >= 2 and tuple(sorted(views[v])) not in committed:
            bad.append(f"ViewsFromRing: view {v} {views[v]} was never committed by the ring")
    if sim.agreed and live:
        ring_view = tuple(sorted(sim.layer(min(live)).lastGlobalView or sim.layer(min(live)).init_ring))
        for n in sorted(live):
            if tuple(sorted(sim.flush(n).members)) != ring_view:
                bad.append(f"settled: node {n}'s FLUSH view {sim.flush(n).members} is not the ring's {ring_view}")
    return bad


def check_total_order(sim) -> list[str]:
    """SEQUENCER on top: what the survivors delivered to the application.
    No duplicate; SurvivorTotalOrder (two survivors deliver their common
    messages in one order); every message a survivor sent delivered by
    every survivor, each sender's in seqno order with no gap (the spec's
    GapFreeFIFO for senders that never crashed).  A joiner delivers nothing
    of the views before its own: of each sender it delivers a run of
    seqnos with no gap up to the last, which holds every message sent in a
    view it had joined by then.  A node that never joined is no member."""
    bad: list[str] = []
    live = sorted(n for n in sim.live() if sim.flush(n).is_member)
    joined = {n: min(v for v, m in sim.flush(n).views.items() if n in m) for n in live}
    seqs = {n: [(d.sender, d.seqno) for d in sim.deliveries[n] if isinstance(d, Deliver)] for n in live}
    h = properties.History.of(seqs, {}, nodes=live)
    bad += [f"{v.property}: {v.reason}" for v in properties.judge(h, ("NoDuplicates", "SurvivorTotalOrder"))]
    for n in live:
        for s in live:
            got = [q for (x, q) in seqs[n] if x == s]
            sent = sorted(q for (x, q) in sim.app_sent if x == s)
            due = {q for q in sent if sim.send_vid[(s, q)] >= joined[n]}
            if got != sent[len(sent) - len(got):] or not due <= set(got):
                missing = sorted(due - set(got))[:4]
                bad.append(f"SurvivorDelivery: survivor {n} (a member since view {joined[n]}) delivered survivor "
                           f"{s}'s seqnos {got[:8]}..., not its {len(sent)} sent in order (missing {missing})")
    return bad


def simulate(seed: int, faults: str, options: dict):
    """One simulated run of FLUSH over the ring (impl/sim_raincoreflush.py)
    as groupcheck-trace/2 records, and a summary."""
    return simulate_over_ring("raincoreflush", seed, faults, {**PROTOCOL_DEFAULTS, **(options or {})}, fault_plan)


def simulate_over_ring(name: str, seed: int, faults: str, opts: dict, parse, sequencer: bool = False):
    """One run of the stack over the ring as impl/sim_raincoreflush.py
    builds it (``sequencer``: with SEQUENCER on top, its ``RingFlushConfig``
    option), as groupcheck-trace/2 records of protocol ``name``, and a
    summary with the simulator's own history check (``history``).  The
    ring's nodes multicast (with SEQUENCER every node, a joiner too: its
    sends wait until it is a member); ``parse``: the protocol's fault spec."""
    n, per = int(opts["nodes"]), int(opts["messages"])
    ring = int(opts.get("ring", n))
    if not 2 <= ring <= n:
        raise ValueError(f"need 2 <= ring <= nodes, got ring={ring} nodes={n}")
    tm, lossy, under_token = (cf._flag(opts.get(k, False)) for k in ("tm", "lossy", "under_token"))
    plan = parse(faults, seed, opts)
    rng = random.Random(seed)
    msgs = [(round(rng.uniform(0.0, 0.3), 4), m, f"m{m}.{k}".encode())
            for m in range(1, (n if sequencer else ring) + 1) for k in range(per)]
    pass_latch = sequencer and cf._flag(opts.get("pass_latch", True))
    cfg = RingFlushConfig(n=n, init_size=ring, tm=tm, sequencer=sequencer, pass_latch=pass_latch, lossy=lossy,
                          view_under_token=under_token)
    records, s, sim = simulate_ring_flush(cfg, seed, plan, msgs, horizon=float(opts.get("horizon", 30.0)))
    s["check"] = history_check(sim, cfg)
    # SEQUENCER as built: with pass_latch the coordinator's DATA passes FLUSH's latch and every
    # member re-sends its forward-table at each view change (ResendAlways); a new coordinator's
    # sends wait for the forward-table it re-sent to itself (ResentFirst: impl/sequencer.py)
    constants = {"N": n, "NInit": ring, "Founder": ring,
                 **({"MaxSeq": per} if sequencer else {"MaxMsgs": len(msgs)}), "MaxCrashes": len(plan.crashes),
                 **({"ResendAlways": pass_latch, "ResentFirst": True, "UniformDelivery": False} if sequencer else {}),
                 "NewerViewsOnly": True, "ViewUnderToken": under_token}
    if lossy:   # Raincore's ring, its timers untimed (a timeout may fire while a token exists);
        # on the ring's own Transport Manager a token's receiver may die before its ack
        constants.update(LossyRing=True, TimelyTimeouts=False, LateFailures=tm)
    run_id = f"{name}-n{n}-r{ring}-m{per}-s{seed}" + ("-tm" if tm else "") + ("-lossy" if lossy else "")
    v2 = tracefile.to_v2(records, constants, run_id, quiescent=False, end_clock=s["end_clock"],
                         settled=s["settled"])
    line = {"run_id": run_id, "seed": seed, "events": len(v2) - 2, "settled": s["settled"],
            "live": s["live"], "crashed": s["crashed"], "crash_retries": s["crash_retries"],
            "views": s["views"], "history": s["check"], "faults": plan.to_json(),
            "delivered": (dict(s["delivered"]) if sequencer else sum(len(d) for d in s["delivered"].values())),
            "rescued": s["rescued"]}
    return v2, line


def stale_view_plan(rng) -> str:
    """A plan aimed at a ring lagging FLUSH's view (the StaleView finding's
    situation, tests/test_raincoreflush_staleview.py), for nodes 4, ring 3:
    member 2 crashes, node 4 joins 30-40 ms later and the coordinator 1
    crashes 20-30 ms after that, so the survivor 3 installs a VIEW with 4
    from node 1 before its own ring has committed it."""
    t0 = round(rng.uniform(0.1, 0.15), 4)
    t1 = round(t0 + rng.uniform(0.03, 0.04), 4)
    t2 = round(t1 + rng.uniform(0.02, 0.03), 4)
    return fault_spec(0.1, 0.05, 0.003, crashes=((2, t0), (1, t2)), join=((4, t1),))


# The share of the audit's runs aimed at a guard the drawn faults alone never
# reach (docs/flush.md, "Aimed plans"): staleview (``stale_view_plan``, on the
# ring abstraction) and truncate (the drawn plan with datagrams cut short).
AIMED_SHARE = {"staleview": 0.25, "truncate": 0.25}
TRUNCATE = "truncate=0.1"


def draw(seed: int) -> tuple[str, dict]:
    """One audit run's size from its seed: a ring of 2 or 3 nodes, a joiner
    beside it in half the runs, 1 or 2 multicasts per ring node, the ring's
    Transport Manager the simulator's (perfect) or impl/ringtransport.py on
    the lossy network, half and half, the ring Raincore's own (LossyRing) in
    a third of the runs; faults drawn by ``auto``.  A quarter of the runs
    are aimed at a ring lagging FLUSH's view instead (``stale_view_plan``:
    nodes 4, ring 3, the simulator's Transport Manager, the abstraction's
    ring), a quarter get truncated datagrams added to the drawn faults."""
    rng = random.Random(seed * 7919 + 37)
    ring = rng.choice((2, 3, 3))
    opts = {"nodes": ring + rng.choice((0, 1)), "ring": ring, "messages": rng.choice((1, 2))}
    # half the runs put the ring on the lossy network with its own Transport Manager,
    # a third run over Raincore's own ring (LossyRing: crashes at any point, token loss)
    tm = rng.random() < 0.5
    opts = {**opts, "tm": tm, "lossy": rng.random() < 1 / 3}
    aim = random.Random(seed * 7919 + 41).random()      # its own stream: the drawn runs stay as drawn
    if aim < AIMED_SHARE["staleview"]:
        return stale_view_plan(rng), {**opts, "nodes": 4, "ring": 3, "tm": False, "lossy": False}
    if aim < AIMED_SHARE["staleview"] + AIMED_SHARE["truncate"]:
        return "auto," + TRUNCATE, opts
    return "auto", opts


# ---------------------------------------------------------------- findings with a shape

REPORTS = ("TokenDeliveryFailure", "911DeliveryFailure")
TAKES = ("TokenReceived", "911Received")


def _witness_false_report(trace, prop: str, reason: str, at=None):
    """A false report of a live node gives two tokens (docs/raincore.md,
    section 8: models LossySuspectMutual and LossySuspectUntimely).  The
    shape: the header declares the lossy ring and ``FalseSuspicion``; at the
    violation a node V eats beside another live eater; some node R reported
    a message to V undelivered before (a ``TokenDeliveryFailure`` or
    ``911DeliveryFailure``), so V was reported while alive; and V took no
    message of R after that report.  That last clause is the Transport
    Manager's discipline, a report final for the node, which the models
    assume (LossySuspectReportFinal): a run in which V takes a frame of its
    reporter after the report (a frame confirmed before it) is outside the
    models and not this finding."""
    c = trace.header.get("constants") or {}
    if not (c.get("LossyRing") and c.get("FalseSuspicion")):
        return None
    state: dict = {}                       # node -> its latest ring state (None: crashed or left)
    reported: dict = {}                    # node V -> {reporter R: the event of R's latest report of V}
    took: dict = {}                        # (V, R) -> the event of V's latest take of a message of R
    for k, ev in enumerate(trace.events):
        i, name, nid = ev.get("i", k), ev.get("name"), ev.get("nid")
        if at is not None and i > at:
            break
        msg = ev.get("msg") or {}
        if name in ("Crash", "LeaveSuspected"):
            state[nid] = None
        elif "tokenState" in (ev.get("state") or {}):
            state[nid] = ev["state"]
        if name in REPORTS and msg.get("dest") is not None:
            reported.setdefault(msg["dest"], {})[nid] = i
        elif name in TAKES and msg.get("cur") is not None:
            took[(nid, msg["cur"])] = i
    eaters = sorted(n for n, st in state.items() if st and st.get("status") == "Up" and st.get("tokenState") == "Eating")
    if len(eaters) < 2:
        return None
    for v in eaters:
        for r, f in sorted(reported.get(v, {}).items()):
            if took.get((v, r), -1) < f:
                return (f"{reason}: nodes {', '.join(map(str, eaters))} eat; node {r} reported a message to node {v} "
                        f"undelivered at event {f} while node {v} was alive, and node {v} took nothing of node {r} "
                        f"after it (a false report under untimely time-outs: LossySuspectMutual, LossySuspectUntimely)")
    return None


FINDINGS = (
    # no measured rate: the simulated campaigns never report a live node (their
    # Transport Manager's time-out is far above a hop), so any hit there is out of band
    findings.Finding("raincoreflush/false-report-two-tokens", ("AtMostOneToken",),
                     "docs/raincore.md#finding-a-false-report-of-a-live-node-gives-two-tokens-atmostonetoken",
                     _witness_false_report),
)


# ---------------------------------------------------------------- TLC trace validation

def tla_constants(c: dict) -> dict:
    """spec/RaincoreFlush/TraceRaincoreFlush.tla's constants from a header's:
    the spec's, Crashable = 1..N (as the replay: a run may crash any
    node, within MaxCrashes), LossyRing and TimelyTimeouts (their defaults
    when absent)."""
    return {**{k: c[k] for k in CONSTANTS}, "Crashable": frozenset(range(1, int(c["N"]) + 1)),
            **{k: bool(c.get(k, d)) for k, d in OPTIONAL.items()}}


def tla_log(trace: Trace) -> list:
    """The records as TraceRaincoreFlush.tla reads them: FLUSH's records as
    conformance/replay/flush.py ``tla_log`` shapes them (a DATA message is the
    spec's id, delivered and digest sets of ids, completed a set of
    <<member, digest>>); a ring record as logged (the spec compares only the
    fields the abstraction keeps, as ``RaincoreFlushBinding`` does)."""
    return cf.tla_log(trace.events)


PROTOCOL = Protocol(
    work=("Multicast",),
    name="raincoreflush", spec="RaincoreFlush", actions=ACTIONS, properties=PROPERTIES,
    simulate=simulate, fault_plan=fault_plan, binding=RaincoreFlushBinding, default_options=PROTOCOL_DEFAULTS, more_options=("horizon", "tm", "lossy", "under_token"),
    draw=draw, campaign_faults="auto", audit_cluster=True, findings=FINDINGS,
    promises=cf.PROTOCOL.promises,      # FLUSH's: the ring's records carry no delivery
    # FLUSH's VirtualSynchrony; the ring's invariants read tokens and ring views, no history event
    judged=cf.JUDGED, run_end="settled",
    # spec/RaincoreFlush/TraceRaincoreFlush.tla: FLUSH's DATA as ids (tla_log);
    # newNodes, flushOks and a VIEW's members are sets
    tla_trace=TLATrace(sets=frozenset({"newNodes", "flushOks", "members"}), constants=tla_constants,
                       prepare=tla_log, properties=PROPERTIES, end=("EventualDelivery",)),
)
replay = PROTOCOL.replay      # the registration's replay (conformance/replay/registry.py)


# ---------------------------------------------------------------- lock step

def ring_abstract(st: dict) -> dict:
    """A ring layer's ``state()`` on the variables spec/RaincoreFlush keeps,
    as a record's state is read (``ring_norm``)."""
    return {k: ring_norm(k, st[k]) for k in RING_FIELDS}


class _RingFlushDriver(rc.RingMessages, LockstepNetwork):
    """``lockstep``'s driver (see there)."""
    checking = True

    def __init__(self, ring: int, joiners: int, max_msgs: int, max_crashes: int) -> None:
        n = ring + joiners
        self.ring_nodes = tuple(range(1, ring + 1))
        members = tuple(range(1, n + 1))
        self.constants = {"N": n, "NInit": ring, "Founder": ring, "MaxMsgs": max_msgs,
                          "MaxCrashes": max_crashes, "NewerViewsOnly": True}
        header = {"protocol": "raincoreflush", "nodes": list(members), "constants": self.constants,
                  "options": {}, "run_id": "lockstep"}
        b = RaincoreFlushBinding(Trace("<lockstep>", header, []), whole_states=True)
        self.engine = ReplayEngine(b, visited=False)
        self.ids = b.ids
        self.model = b.model
        timing = Timing(eating=0.005, hungry=0.5, starving=0.5)
        self.nodes = {m: RingNode(raincore_layer(m, self.ring_nodes, init_seq=steady_seq(self.ring_nodes), timing=timing),
                                  ring_flush_stack(m, self.ring_nodes)) for m in members}
        super().__init__(members, self.nodes)
        self.app_sends = 0
        self.checking = False
        for m in self.ring_nodes:
            self._handle(m, Start(token=m == self.ring_nodes[-1]))
        self.checking = True
        self.check_abstraction()

    # ------------------------------------------------ queries
    def flush(self, m: int):
        return self.nodes[m].fstack.flush

    def ring(self, m: int):
        return self.nodes[m].ring

    def armed(self):
        return [(m, t) for m, t in super().armed() if t not in ("hungry", "starving")]

    def can_send(self, m: int) -> bool:
        return (m not in self.crashed and self.app_sends < self.model.MaxMsgs and self.flush(m).is_member
                and not self.flush(m).blocked)

    def can_crash(self, m: int) -> bool:
        r, f = self.ring(m), self.flush(m)
        latest = self.flush(max(self.members, key=lambda x: self.flush(x).vid)).members
        return (m not in self.crashed and r.status == "Up" and f.is_member
                and len(self.crashed) < self.model.MaxCrashes and r.tokenState != "Eating"
                and not r.newNodes and not any(isinstance(d, TokenMsg) and d.cur == m for _, _, d in self.inflight)
                and bool(set(latest) - self.crashed - {m}))

    def can_join(self, m: int) -> bool:
        return m not in self.ring_nodes and self.ring(m).status == "Off"

    # ------------------------------------------------ steps
    def app_send(self, m: int) -> None:
        self.app_sends += 1
        self._handle(m, AppSend(f"m{self.app_sends}".encode()))

    def drop(self, i: int) -> None:
        if not isinstance(self.inflight[i][2], (TokenMsg, IMsg911)):   # the ring's transport loses nothing
            super().drop(i)

    def duplicate(self, i: int) -> None:
        if not isinstance(self.inflight[i][2], (TokenMsg, IMsg911)):
            super().duplicate(i)

    def join(self, m: int) -> None:
        assert self.can_join(m)
        self._handle(m, Join())

    def crash(self, m: int) -> None:
        assert self.can_crash(m)
        rescue_views(self.nodes[m].fstack.layer("reliable"), m, [d for d in self.live() if d != m],
                     self._handle)     # I9, as the simulator
        self.checking = False
        self._handle(m, Crash())
        to_m = [d for d in self.inflight if d[1] == m and isinstance(d[2], (TokenMsg, IMsg911))]
        self._stop(m)
        self.inflight += to_m      # they come back to their senders as DeliveryFailed
        # the Transport Manager loses the 911s m was passing on (the model's Crash)
        self.inflight = [d for d in self.inflight if not (isinstance(d[2], IMsg911) and d[0] == m)]
        self.checking = True
        self.check_abstraction()

    # ------------------------------------------------ plumbing
    def _receive(self, src: int, dest: int, data) -> None:
        if isinstance(data, (TokenMsg, IMsg911)):
            if self.ring(dest).status == "Up":
                self._handle(dest, Receive(src, data))
            else:
                self._handle(src, DeliveryFailed(data))
        else:
            super()._receive(src, dest, data)

    def _transmit(self, src: int, dest: int, data) -> None:
        if isinstance(data, (TokenMsg, IMsg911)):
            if (src, dest, data) not in self.inflight:      # the spec's message sets
                self.inflight.append((src, dest, data))
        else:
            super()._transmit(src, dest, data)

    def _effect(self, m: int, eff) -> bool:
        if isinstance(eff, Up):
            return True        # the ring's commits reach FLUSH as RingView; the application's Ups
        return super()._effect(m, eff)

    def _project(self, s, m: int) -> dict:
        if m in self.crashed:
            return {"status": s.status[m - 1]}
        return {**cf.project(s, m, self.ids), **ring_project(s, m)}

    def abstraction(self):
        states = {}
        for m in self.members:
            rs = ring_abstract(self.ring(m).state())
            states[m] = ({"status": rs["status"]} if m in self.crashed
                         else {**cf._norm(self.flush(m).state()), **rs})
        msgs = [d for _, _, d in self.inflight if isinstance(d, (TokenMsg, IMsg911))]
        toks = frozenset(model_msg(ring_spec_msg(x)) for x in msgs if isinstance(x, TokenMsg))
        m911 = frozenset(model_msg(ring_spec_msg(x)) for x in msgs if isinstance(x, IMsg911))
        return states, toks, m911

    def _model_step(self, ev: dict) -> None:
        super()._model_step(ev)
        if self.engine.b.found:
            prop, (i, w) = next(iter(self.engine.b.found.items()))
            raise LockstepError(f"violation: {prop}: {w}")


def lockstep(ring: int = 3, joiners: int = 1, max_msgs: int = 3, max_crashes: int = 1):
    """A lock-step driver of FLUSH over the ring: ``ring``
    configured nodes (the founder, the last, eats the token first) and
    ``joiners`` more.  The driver is the network: FLUSH's datagrams can be
    delivered, lost or duplicated in any order; the ring's TOKEN and 911 go
    through the Transport Manager of the spec (a set of messages, never lost;
    one to a node that is down comes back to its sender as DeliveryFailed).
    Timers: retransmission, block(), and the ring's Eating timer (the
    abstraction has no Hungry or Starving timeout).  Crashes as the spec's
    CanCrash allows (and not while the node holds a join request: the
    abstraction has no Starving timeout to ask again), with FLUSH's I9 rescue
    of the crashed node's VIEW frames.  After every step each record must be
    a model step and the whole implementation (every node's FLUSH and ring
    state, the ring's messages in flight) must equal a candidate."""
    return _RingFlushDriver(ring, joiners, max_msgs, max_crashes)
