"""FLUSH over Raincore's own ring (spec/RaincoreFlush with
``LossyRing = TRUE``): the composed stack in the simulator with crashes at
any point (the token holder included), token losses and untimed Hungry and
Starving timeouts, replayed against model/raincoreflush.py with the lossy
ring (``TimelyTimeouts = FALSE``: the implementation's timers know nothing of
tokens in flight).  Every run must conform and keep the history checks; the
runs must reach what the abstraction kept out (a crash while eating, a lost
token, a regeneration); mutants of the ring and forged records must not
conform."""

from __future__ import annotations

import copy
from collections import Counter

import pytest

from groupcheck.conformance.replay import raincoreflush as crf
from groupcheck.core.trace.reader import from_records
from groupcheck.impl import raincore as impl_raincore
from raincoreflush_helpers import conforming_run, replay_forged

RUNS = 40


def _runs(runs: int = RUNS, first: int = 0, tm: bool = False):
    """Lossy-ring runs: (verdict counts, history violations, figures)."""
    verdicts, bad, fig = Counter(), [], Counter()
    for seed in range(first, first + runs):
        opts = {"lossy": True, "tm": tm, "nodes": 3 + seed % 2, "ring": 3}
        records, line = crf.simulate(seed, "auto", opts)
        rep = crf.replay(from_records(records), visited=False)
        verdicts[rep.verdict] += 1
        if rep.verdict != "ok":
            fig.setdefault("why", (seed, rep.reason))
        if line["history"]:
            bad.append((seed, line["history"][:2]))
        fig["settled"] += line["settled"]
        eating: set = set()
        for r in records:
            if r.get("kind") != "event":
                continue
            fig[r["name"]] += r["name"] in ("TokenLoss", "HungryTimeout", "StarvingTimeout")
            if r["name"] == "Crash":
                fig["crashes"] += 1
                fig["crash_while_eating"] += r["nid"] in eating
            st = r.get("state") or {}
            if "tokenState" in st:
                (eating.add if st["tokenState"] == "Eating" else eating.discard)(r["nid"])
    return verdicts, bad, fig


def test_lossy_ring_runs_conform_and_reach_token_loss():
    verdicts, bad, fig = _runs()
    assert verdicts == Counter(ok=RUNS), fig
    assert bad == [] and fig["settled"] == RUNS, (bad, fig)
    # what LossyRing = FALSE kept out: lost tokens, their regeneration, a holder's crash
    assert fig["TokenLoss"] >= 5 and fig["HungryTimeout"] >= 10, fig
    assert fig["crash_while_eating"] >= 1 and fig["crashes"] >= 30, fig


def test_lossy_ring_on_its_transport_manager_conforms():
    verdicts, bad, fig = _runs(20, first=100, tm=True)
    assert verdicts == Counter(ok=20), fig
    assert bad == [], bad


def test_header_names_the_lossy_ring():
    records, _ = crf.simulate(3, "crash=3@50", {"lossy": True})
    c = records[0]["constants"]
    assert c["LossyRing"] is True and c["TimelyTimeouts"] is False


def test_token_losses_need_the_lossy_ring():
    with pytest.raises(ValueError, match="lossy"):
        crf.simulate(1, "tokenloss=50", {})


def _lossy_records():
    return conforming_run(0, "tokenloss=60,crash=3@120", {"lossy": True})


def test_forged_token_sequence_number_is_nonconforming():
    """Under LossyRing the token's seq is compared (it was not before)."""
    def change(r):
        r["msg"]["seq"] += 5
    rep = replay_forged(_lossy_records(), lambda r: r["name"] == "TokenReceived", change)
    assert rep.verdict == "nonconforming"


def test_forged_token_state_is_nonconforming():
    def change(r):
        r["state"]["tokenState"] = "Eating"
    rep = replay_forged(_lossy_records(), lambda r: r["name"] == "HungryTimeout" and r.get("state"), change)
    assert rep.verdict == "nonconforming"


def test_a_lossy_trace_read_as_the_abstraction_is_nonconforming():
    """The same records under a header without LossyRing: the abstraction has
    no timeout but the Eating one, no token loss."""
    records = _lossy_records()
    records[0] = dict(records[0], constants={k: v for k, v in records[0]["constants"].items()
                                             if k not in ("LossyRing", "TimelyTimeouts")})
    rep = crf.replay(from_records(records), visited=False)
    assert rep.verdict != "ok"


def test_a_header_without_timely_timeouts_reads_them_as_timely():
    """A lossy-ring header that leaves TimelyTimeouts out means TRUE (as
    TraceRaincoreFlush.tla reads it): a time-out while a token exists, which
    the run's own header (TimelyTimeouts FALSE) allows, is then no step."""
    records, _ = crf.simulate(3, "auto", {"nodes": 3, "messages": 1, "lossy": True})
    assert records[0]["constants"]["TimelyTimeouts"] is False
    assert crf.replay(from_records(records), visited=False).verdict == "ok"
    records[0] = dict(records[0], constants={k: v for k, v in records[0]["constants"].items()
                                             if k != "TimelyTimeouts"})
    rep = crf.replay(from_records(records), visited=False)
    assert rep.verdict == "nonconforming" and "Timeout" in rep.reason, rep.reason


def test_bad_lossy_constant_is_a_header_error():
    records = _lossy_records()
    records[0] = dict(records[0], constants={**records[0]["constants"], "LossyRing": "yes"})
    rep = crf.replay(from_records(records), visited=False)
    assert rep.verdict == "rejected" and "LossyRing" in rep.reason


def test_mutant_ring_without_veto_is_caught(monkeypatch):
    """A ring node that never vetoes a 911 claim lets a node regenerate a
    token while the old one lives (a premature Hungry timeout: untimed)."""
    monkeypatch.setattr(impl_raincore.Raincore, "_veto", lambda self, m: False)
    verdicts, bad, fig = _runs(RUNS)
    assert verdicts["ok"] < RUNS or bad, fig


def test_mutant_holder_crash_keeps_the_token_is_caught(monkeypatch):
    """A crashed node's token must die with it: a layer that keeps its
    token state across Crash diverges from spec/Raincore's Crash."""
    orig = impl_raincore.Raincore.handle

    def handle(self, event, now):
        keep = (self.token, self.tokenState)
        out = orig(self, event, now)
        if isinstance(event, impl_raincore.Crash):
            self.token, self.tokenState = keep
            for eff in out:
                ev = getattr(eff, "event", None)
                if ev is not None and ev.name == "Crash" and isinstance(getattr(ev, "state", None), dict):
                    ev.state.update(tokenState=keep[1])
        return out
    monkeypatch.setattr(impl_raincore.Raincore, "handle", handle)
    verdicts, _, fig = _runs(RUNS)
    assert verdicts["ok"] < RUNS, fig


# ---------------------------------------------------------------- TLC trace validation

needs_java = pytest.mark.skipif(__import__("shutil").which("java") is None, reason="TLC needs java")


@needs_java
@pytest.mark.parametrize("seed,faults,opts,reached", [
    (0, "tokenloss=60,crash=3@120", {}, {"TokenLoss", "HungryTimeout"}),   # a lost token regenerated, a crash
    (5, "auto", {"nodes": 4, "ring": 3}, {"HungryTimeout"}),               # a joiner beside token loss
    (2, "auto", {"tm": True}, {"StarvingTimeout"}),                        # on the ring's own Transport Manager
])
def test_tlc_accepts_lossy_runs_as_the_replay_does(seed, faults, opts, reached):
    from groupcheck.conformance import tlctrace
    records, _ = crf.simulate(seed, faults, {"lossy": True, **opts})
    trace = from_records(records)
    v = tlctrace.validate(trace, diagnose=False)
    rep = crf.replay(trace, visited=False)
    assert v.ok and rep.verdict == "ok", v.explain()
    assert reached | {"Crash"} <= {e["name"] for e in trace.events}


@needs_java
def test_tlc_rejects_a_forged_sequence_number_where_the_replay_does():
    from groupcheck.conformance import tlctrace
    records = _lossy_records()
    out = copy.deepcopy(records)
    i = next(i for i, r in enumerate(out) if r.get("kind") == "event" and r["name"] == "TokenReceived"
             and r["nid"] == 2)
    out[i]["msg"]["seq"] += 1
    trace = from_records(out)
    v = tlctrace.validate(trace, diagnose=False)
    rep = crf.replay(trace, visited=False)
    assert not v.ok and rep.verdict == "nonconforming"
    k = next(e["i"] for e in trace.events if e["name"] == "TokenReceived" and e["nid"] == 2)
    assert v.first_unmatched == rep.stops_conforming_at == k


def _failures(records, late: bool) -> list[int]:
    """Indices of TokenDeliveryFailure records: ``late``, for a token its
    receiver took (the spec's LateFailure); else for one whose receiver
    crashed before the report, without taking it."""
    got, crashed, out = set(), set(), []
    for k, r in enumerate(records):
        if r.get("kind") != "event":
            continue
        key = repr(sorted(r["msg"].items())) if r.get("msg") else None
        if r["name"] == "TokenReceived":
            got.add(key)
        elif r["name"] == "Crash":
            crashed.add(r["nid"])
        elif r["name"] == "TokenDeliveryFailure" and (key in got if late else r["msg"]["dest"] in crashed):
            out.append(k)
    return out


def test_the_transport_manager_never_reports_a_token_its_receiver_took():
    """impl/ringtransport.py's take handshake: a token is taken only on its
    sender's confirm, which follows an ack and rules out the report, so no
    run has the spec's LateFailure (a crash lands even while a token to the
    victim waits for its ack: that failure is reported, the token untaken)."""
    reported = 0
    for seed in range(30):
        records, line = crf.simulate(seed, "auto", {"lossy": True, "tm": True, "nodes": 3})
        assert _failures(records, late=True) == [], seed
        reported += len(_failures(records, late=False))
    assert reported


def test_a_failure_reported_for_a_live_receiver_is_nonconforming():
    """A delivery failure needs the receiver down (no FalseSuspicion over the
    lossy ring): the same record with the crash taken out of the trace does
    not conform."""
    records, _ = crf.simulate(24, "auto", {"lossy": True, "tm": True, "nodes": 3})
    k = _failures(records, late=False)[0]
    dest = records[k]["msg"]["dest"]
    forged = [r for j, r in enumerate(records) if not (j < k and r.get("name") == "Crash" and r.get("nid") == dest)]
    assert len(forged) == len(records) - 1
    assert crf.replay(from_records(forged), visited=False).verdict != "ok"


def test_under_false_suspicion_a_report_for_a_live_receiver_is_a_step_over_the_lossy_ring():
    """The header's FalseSuspicion (cluster runs declare it, ShunSuspected
    too): the same forged record is the spec's step (the Transport Manager
    timed out on a slow node), and the run is judged by its properties: the
    node reported, alive in the forged run, neither crashes nor leaves, so
    the settled end fails (it is left out of the ring's view of the live
    nodes), where without FalseSuspicion the replay stops at the record."""
    records, _ = crf.simulate(24, "auto", {"lossy": True, "tm": True, "nodes": 3})
    k = _failures(records, late=False)[0]
    dest = records[k]["msg"]["dest"]
    forged = [r for j, r in enumerate(records) if not (j < k and r.get("name") == "Crash" and r.get("nid") == dest)]
    header = {**forged[0], "constants": {**forged[0]["constants"], "FalseSuspicion": True, "ShunSuspected": True}}
    res = crf.replay(from_records([header] + forged[1:]), visited=False)
    assert res.verdict == "violation" and res.stops_conforming_at is None
    assert res.reason.startswith("Settled") and f"node {dest}: vid 1" in res.reason


# ---------------------------------------------------------------- a crash keeps the wire

def _late_failure_model(**kw):
    from groupcheck.model import manifest
    from groupcheck.model.link import build_model
    from groupcheck.model.raincoreflush import RaincoreFlushModel
    (entry,) = manifest.select(["raincoreflush"], "LateFailure")
    return RaincoreFlushModel({**build_model(entry).constants, **kw})


def test_a_late_failure_and_a_dead_nodes_token_on_the_wire_give_two_tokens():
    """Model LateFailure (docs/raincore.md, section 8): node 2 crashes with
    its token on the wire, node 1's Transport Manager reports the token
    node 2 took, and the re-sent copy and node 2's token are both eaten."""
    from groupcheck.model.core import explore
    m = _late_failure_model()
    v = explore(m, check_invariants=["AtMostOneToken"]).violation
    assert v is not None and len(v.trace) == 22
    steps = [(lab, prev, s) for (_, prev), (lab, s) in zip(v.trace, v.trace[1:])]
    (i,) = [k for k, (lab, _, _) in enumerate(steps) if lab.action == "Crash"]
    dead = steps[i][0].params[0]
    late = [lab for lab, prev, _ in steps[i:]
            if lab.action == "TokenDeliveryFailure" and lab.params[1] not in prev.tokenMsgs]
    assert [lab.params[1]["dest"] for lab in late] == [dead]      # the report of the token the dead node took
    lab, _, last = steps[-1]
    assert lab.action == "TokenReceived" and lab.params[1]["cur"] == dead
    assert sum(m.Alive(last, n) and m.Eating(last, n) for n in m.Members) == 2


def test_without_late_failures_a_dead_nodes_token_is_taken_safely():
    """The same environment with a Transport Manager that never reports a
    token its receiver took (the implementation's handshake): every
    invariant holds, and a live node does take a token the dead node sent."""
    from groupcheck.model.core import explore
    m = _late_failure_model(LateFailures=False)
    res = explore(m, check_invariants=True, build_graph=True)
    assert res.violation is None
    st = res.numbered
    taken = [labs for (a, b), labs in res.edge_map.items()
             for lab in labs if lab.action == "TokenReceived" and st[a].status[lab.params[1]["cur"] - 1] == "Down"
             and m.Eating(st[b], lab.params[0])]
    assert taken


# ---------------------------------------------------------------- a node that leaves as suspected

def _left_as_suspected(constants: dict):
    """Seed 24's lossy run (a node crashes) with that crash logged as the
    runner logs a node that left as suspected, under ``constants``."""
    records, _ = crf.simulate(24, "auto", {"lossy": True, "tm": True, "nodes": 3})
    (k,) = [j for j, r in enumerate(records) if r.get("name") == "Crash"][:1]
    forged = [dict(r) for r in records]
    forged[k]["name"] = "LeaveSuspected"
    forged[0] = {**forged[0], "constants": {**forged[0]["constants"], **constants}}
    return forged, k


def test_a_node_that_left_as_suspected_is_the_specs_leave_suspected():
    """The runner logs a node that exits SHUNNED as LeaveSuspected (spec
    SuspectLeaves: outside the crash budget): a step under the header's
    FalseSuspicion and SuspectLeaves, none without them."""
    ok, k = _left_as_suspected({"FalseSuspicion": True, "SuspectLeaves": True, "ShunSuspected": True,
                                "MaxCrashes": 0})
    assert crf.replay(from_records(ok), visited=False).verdict == "ok"
    bad, _ = _left_as_suspected({"FalseSuspicion": True, "SuspectLeaves": False, "ShunSuspected": True})
    res = crf.replay(from_records(bad), visited=False)
    assert res.verdict == "nonconforming" and res.stops_conforming_at == k - 1
