"""SEQUENCER over FLUSH over the Raincore ring: every record of a
simulated run of the three-layer stack (impl/sim_raincoreflush.py with
``sequencer=True``), SEQUENCER's included, replayed against
model/raincoresequencerflush.py (conformance/replay/raincoresequencerflush.py).

Drawn runs (3 or 4 nodes, 1 or 2 multicasts each, a lossy network, no crash,
one or two, node 1, the coordinator and the ring's first node, in about a
third of them; the ring on the simulator's Transport Manager or on
impl/ringtransport.py) must conform; forged records and mutants of the
implementation must not."""

from __future__ import annotations

import copy
import functools
from collections import Counter

import pytest

from groupcheck.core import properties
from groupcheck.conformance.replay import registry as protocols
from groupcheck.conformance.replay import raincoresequencerflush as rsf
from groupcheck.conformance.replay import sequencerflush as csf
from groupcheck.core.trace.reader import from_records, protocol_validator
from groupcheck.impl import flush as impl_flush
from raincoreflush_helpers import crashed_eating

RUNS = 60


def campaign(runs: int = RUNS, first: int = 0, **opts):
    """(verdicts, figures, first failure) of ``runs`` drawn runs."""
    verdicts, fig, bad = Counter(), Counter(), None
    for seed in range(first, first + runs):
        faults, o = rsf.draw(seed)
        records, line = rsf.simulate(seed, faults, {**o, **opts})
        rep = rsf.replay(from_records(records), visited=False)
        verdicts[rep.verdict] += 1
        if rep.verdict != "ok" and bad is None:
            bad = (seed, rep.reason)
        fig["history_bad"] += bool(line["history"])
        fig["coordinator_crashes"] += 1 in line["crashed"]
        fig["crashes"] += len(line["crashed"])
        fig["tm"] += o["tm"]
        fig["seq_records"] += sum(r.get("name") in ("Send", "RecvForward", "RecvData") for r in records)
        fig["view_changes"] += sum(r.get("name") == "SendView" for r in records)
        fig["token_losses"] += sum(r.get("name") == "TokenLoss" for r in records)
        fig["holder_crashes"] += len(crashed_eating(records))
        joiners = [n for n, v in line["views"].items() if 0 in v and len(v) > 1]
        fig["joined"] += len(joiners)
        # a joiner that installed a view and then multicast: each survivor delivered its messages
        fig["joiner_sends_delivered"] += sum(
            1 for j in joiners if j not in line["crashed"] and any(s == j for s, _ in line["delivered"][j])
            and all(any(s == j for s, _ in line["delivered"][m]) for m in line["delivered"]
                    if m not in line["crashed"] and any(len(v) for v in line["views"][m].values())))
    return verdicts, fig, bad


def test_the_protocol_plugs_in():
    p = protocols.get("raincoresequencerflush")
    assert p.spec == "RaincoreSequencerFlush" and "raincoresequencerflush" in protocols.available()
    assert {"SurvivorTotalOrder", "VirtualSynchrony", "AtMostOneToken", "ConsistentHistory",
            "ViewsFromRing", "LogsAgree", "NoDuplicates", "SenderFIFO", "Integrity"} <= set(p.properties)


def test_drawn_runs_conform():
    verdicts, fig, bad = campaign()
    assert verdicts == Counter(ok=RUNS), bad
    assert fig["history_bad"] == 0
    # the runs exercise what the binding joins: coordinator crashes, view changes, both transports, joiners
    assert fig["coordinator_crashes"] >= 10 and fig["view_changes"] >= 30 and 15 <= fig["tm"] <= 45, fig
    assert fig["seq_records"] > 15 * RUNS, fig      # half the runs have a joiner, which may not join
    assert fig["joined"] >= 10 and fig["joiner_sends_delivered"] >= 5, fig


def test_lossy_ring_runs_conform_and_reach_what_the_abstraction_kept_out():
    """Raincore's own ring (LossyRing): a kill lands wherever the run is, the
    token holder included, and a token may be lost; every run conforms, its
    history clean, and the runs reach both."""
    verdicts, fig, bad = campaign(lossy=True)
    assert verdicts == Counter(ok=RUNS), bad
    assert fig["history_bad"] == 0 and fig["coordinator_crashes"] >= 10, fig
    assert fig["holder_crashes"] >= 3 and fig["token_losses"] >= 3, fig


def test_joiners_enter_by_911_and_conform():
    """A node outside the ring joins, installs its first view (no view change
    for its SEQUENCER: nothing re-sent, its received-table kept), then its
    held sends go out; every survivor delivers them, and it delivers every
    message sent in a view it belonged to.  With two crashes beside the join
    (the plans that found the stale view, test_raincoreflush_staleview.py)."""
    fig = Counter()
    for seed in range(40):
        records, line = rsf.simulate(seed, "auto", {"nodes": 4, "ring": 3, "messages": 2})
        rep = rsf.replay(from_records(records), visited=False)
        assert rep.verdict == "ok", (seed, rep.reason)
        assert line["history"] == [], (seed, line["history"])
        fig["joined"] += 0 in line["views"][4] and len(line["views"][4]) > 1
        fig["two_crashes"] += len(line["crashed"]) == 2
        fig["held"] += sum(r.get("name") == "Send" and r["nid"] == 4 for r in records)
    assert fig["joined"] >= 20 and fig["two_crashes"] >= 8 and fig["held"] >= 20, fig


def test_a_joiner_asked_for_messages_of_views_before_its_own_is_not_a_violation_and_its_own_are_required():
    """EventualDelivery with joiners (``missing_since_joined``): a message
    sent before the joiner's first view is not due at the joiner; one sent
    after is, and its absence is the violation."""
    hist = {1: [(1, 1), (1, 2)], 2: [(1, 1), (1, 2)], 3: [(1, 2)]}
    sent_vid = {(1, 1): 1, (1, 2): 2}
    vid = {1: 2, 2: 2, 3: 2}
    assert csf.missing_since_joined(hist, sent_vid, vid, {3: 2}, set()) is None
    assert "members [3]" in csf.missing_since_joined({**hist, 3: []}, sent_vid, vid, {3: 2}, set())
    # a node that never joined (vid 0) is no member and owes nothing
    assert csf.missing_since_joined({**hist, 4: []}, sent_vid, {**vid, 4: 0}, {3: 2}, set()) is None


@pytest.mark.slow
def test_500_drawn_runs_conform():
    verdicts, fig, bad = campaign(500, first=RUNS)
    assert verdicts == Counter(ok=500), bad
    assert fig["history_bad"] == 0 and fig["coordinator_crashes"] >= 100, fig


def test_records_match_the_schema():
    validate = protocol_validator("raincoresequencerflush")
    records = _run()
    events = [r for r in records if r.get("kind") == "event"]
    assert {e["name"] for e in events} >= {"TokenReceived", "Send", "RecvData", "Multicast", "Deliver"}
    for r in events:
        assert validate.is_valid({"params": {}, "msg": None, "state": None, **r}), r
    assert not validate.is_valid({"params": {}, "msg": None, "state": None, **dict(events[0], name="NewView")})


def test_the_flush_only_view_of_the_run_still_replays_against_raincoreflush():
    """``without_sequencer`` (the earlier, partial judgement) keeps working:
    its header names raincoreflush."""
    from groupcheck.conformance.replay import raincoreflush as crf
    from groupcheck.core.trace import writer as tracefile
    from groupcheck.impl.sim import FaultPlan
    from groupcheck.impl.sim_raincoreflush import RingFlushConfig, simulate_ring_flush, without_sequencer
    plan = FaultPlan(crashes=((1, 0.1),), loss=0.1)
    msgs = [(0.01 * i, 1 + i % 3, b"x") for i in range(12)]
    records, s, sim = simulate_ring_flush(RingFlushConfig(sequencer=True), 4, plan, msgs)
    assert records[0]["protocol"] == "raincoresequencerflush"
    rest = without_sequencer(records)
    assert rest[0]["protocol"] == "raincoreflush"
    c = {"N": 3, "NInit": 3, "Founder": 3, "MaxMsgs": len(sim.sent_in), "MaxCrashes": 1}
    v2 = tracefile.to_v2(rest, c, "flush-only", quiescent=False, settled=s["settled"], end_clock=s["end_clock"])
    assert crf.replay(from_records(v2), visited=False).verdict == "ok"


# ---------------------------------------------------------------- forgeries

def _run(seed: int = 5):
    """A run with two crashes, node 1 (the coordinator) first, and a view change."""
    records, line = rsf.simulate(seed, "crash=1@60,crash=2@160,loss=0.1,dup=0.05,reorder=3",
                                 {"nodes": 4, "messages": 2})
    assert line["crashed"] == [1, 2]
    assert rsf.replay(from_records(records), visited=False).verdict == "ok"
    return records


def _replay(records):
    return rsf.replay(from_records(records), visited=False)


def _events(records, pred):
    """Positions in ``records`` (the header is at 0: event ``i`` is at ``i + 1``)."""
    return [i for i, r in enumerate(records) if r.get("kind") == "event" and pred(r)]


def test_a_second_delivery_of_a_message_is_nonconforming():
    """A copy of a SEQUENCER RecvData (the same message delivered again)."""
    records = _run()
    i = _events(records, lambda r: r["name"] == "RecvData" and r["params"]["p"] != r["nid"])[-1]
    rep = _replay(records[:i + 1] + [copy.deepcopy(records[i])] + records[i + 1:])
    assert rep.verdict == "nonconforming" and rep.first_bad_event == i, rep.reason      # the copy
    assert "no step of the model delivers it" in rep.reason


def test_a_redelivered_seqno_is_nonconforming():
    """A later RecvData logging, as its delivery, what its member delivered before."""
    records = copy.deepcopy(_run())
    m = 3
    got = _events(records, lambda r: r["name"] == "RecvData" and r["nid"] == m
                  and (r.get("state") or {}).get("delivered"))
    first, last = records[got[0]]["state"]["delivered"][0], got[-1]
    records[last]["state"]["delivered"] = [first]
    rep = _replay(records)
    assert rep.verdict == "nonconforming" and rep.first_bad_event == last - 1, rep.reason
    assert "sequencer.delivered" in rep.reason


def test_a_changed_send_is_nonconforming():
    records = copy.deepcopy(_run())
    i = _events(records, lambda r: r["name"] == "Send" and r["nid"] == 3)[0]
    records[i]["msg"]["seqno"] += 1
    rep = _replay(records)
    assert rep.verdict == "nonconforming" and rep.first_bad_event == i - 1, rep.reason


def test_a_reversed_token_nodelist_is_nonconforming():
    """The token's nodelist reversed, in the message and, coherently, in
    the state the record logs: no such token is in transit."""
    records = copy.deepcopy(_run())
    i = _events(records, lambda r: r["name"] == "TokenReceived" and len(r["msg"]["nodelist"]) > 1)[3]
    r = records[i]
    for lst in [r["msg"]["nodelist"], (r["state"].get("token") or {}).get("nodelist", []),
                (r["state"].get("lastToken") or {}).get("nodelist", []), r["state"].get("localView", [])]:
        lst.reverse()
    rep = _replay(records)
    assert rep.verdict == "nonconforming" and rep.first_bad_event == i - 1, rep.reason
    assert "in transit" in rep.reason


def test_a_ring_variable_left_out_is_nonconforming():
    """A ring record's state is a complete delta: a TokenReceived that
    commits a view and does not log ``globalView`` is a divergence."""
    records = copy.deepcopy(_run())
    i = _events(records, lambda r: r["name"] == "TokenReceived"
                and len((r.get("state") or {}).get("globalView", [])) > 1)[0]
    del records[i]["state"]["globalView"]
    rep = _replay(records)
    assert rep.verdict == "nonconforming" and "the record does not log it" in rep.reason, rep.reason


def test_two_deliveries_swapped_at_one_member_are_nonconforming():
    """Member 4 delivers two messages in the other order than the sequencer
    sent them (its Deliver and RecvData records swapped as pairs)."""
    records = copy.deepcopy(_run())
    pairs = [i for i in _events(records, lambda r: r["name"] == "Deliver" and r["nid"] == 4)
             if records[i]["msg"]["sender"] == records[i]["params"]["q"]]
    a, b = pairs[0], pairs[1]
    ra = next(j for j in range(a + 1, len(records)) if records[j].get("nid") == 4)
    rb = next(j for j in range(b + 1, len(records)) if records[j].get("nid") == 4)
    assert records[ra]["name"] == records[rb]["name"] == "RecvData"
    for x, y in ((a, b), (ra, rb)):
        for k in ("msg", "params", "state"):
            records[x][k], records[y][k] = records[y][k], records[x][k]
    rep = _replay(records)
    assert rep.verdict == "nonconforming" and rep.first_bad_event in (a - 1, ra - 1), rep.reason


def test_a_timeout_outside_the_abstraction_is_named():
    records = _run()
    i = _events(records, lambda r: r["name"] == "EatingTimeout")[0]
    rep = _replay(records[:i] + [dict(records[i], name="HungryTimeout", state={})] + records[i + 1:])
    assert rep.verdict == "nonconforming"
    assert "outside spec/RaincoreSequencerFlush's abstraction" in rep.reason


def test_a_header_of_another_protocol_is_rejected(tmp_path):
    """Named sequencerflush, the ring's records break that protocol's schema."""
    from groupcheck.conformance.replay.conform import conform_file
    from groupcheck.core.trace import writer as tracefile
    records = copy.deepcopy(_run())
    records[0]["protocol"] = "sequencerflush"
    rep = conform_file(tracefile.write(tmp_path / "t.ndjson", records))
    assert rep.verdict == "rejected" and "schema (sequencerflush)" in rep.reason, rep.reason


# ---------------------------------------------------------------- mutants

def test_mutant_without_the_self_channel_is_caught(monkeypatch):
    """The SEQUENCER without its self channel (docs/flush.md divergence
    (d)): a new coordinator's own DATA overtakes the forward-table it re-sent
    to itself.  Its resent_first wait is off with it (impl/stacks/sequencerflush.py)."""
    import groupcheck.impl.stacks.sequencerflush as sf
    monkeypatch.setattr(sf, "sequencer_flush_stack", functools.partial(sf.sequencer_flush_stack, self_channel=False))
    verdicts, _, bad = campaign(80)
    assert verdicts["nonconforming"] >= 2, verdicts
    assert "RecvForward" in bad[1] and "must come first" in bad[1], bad


def test_mutant_without_digest_reconciliation_is_caught(monkeypatch):
    """FLUSH that does not deliver the messages a VIEW's digest names: the
    replay catches every run whose history check does: at the SEQUENCER's
    view change (its received-table lags the model's) or at a FORWARD the
    model's coordinator no longer takes, or, where the
    members' logged FLUSH deliveries already differ, as FLUSH's
    VirtualSynchrony on them."""
    monkeypatch.setattr(impl_flush.Flush, "_reconcile", lambda self, m, out: None)
    caught_history = caught_replay = 0
    for seed in range(200):
        faults, o = rsf.draw(seed)
        records, line = rsf.simulate(seed, faults, o)
        rep = rsf.replay(from_records(records), visited=False)
        caught_history += bool(line["history"])
        caught_replay += rep.verdict != "ok"
        if line["history"]:
            assert ((rep.verdict == "nonconforming" and ("InstallView" in rep.reason or "RecvForward" in rep.reason))
                    or (rep.verdict == "violation" and "VirtualSynchrony" in rep.reason)), rep.reason
    assert caught_history >= 3 and caught_replay == caught_history, (caught_history, caught_replay)


def test_the_latching_coupling_diverges_at_a():
    """The stack with ``pass_latch`` off (ring_flush_stack's default; the
    real cluster's default on 2026-11-23): a coordinator whose latch is
    closed holds a FORWARD's DATA into the next view, where the spec
    multicasts it at once (divergence (a) of docs/flush.md; the header says
    ResendAlways false).  Seeds found by drawing (the abstraction's ring): 33 (a joiner beside) and 177
    of 0..199."""
    for seed in (33, 177):
        faults, o = rsf.draw(seed)
        o = {**o, "lossy": False}
        records, line = rsf.simulate(seed, faults, {**o, "pass_latch": False})
        assert records[0]["constants"]["ResendAlways"] is False
        rep = rsf.replay(from_records(records), visited=False)
        assert rep.verdict == "nonconforming" and "divergence (a)" in rep.reason, rep.reason
        records, _ = rsf.simulate(seed, faults, o)
        assert rsf.replay(from_records(records), visited=False).verdict == "ok"


def test_replay_records_takes_a_record_list():
    records = _run()
    rep = rsf.replay_records(records)
    assert rep.verdict == "ok" and rep.events == len(records) - 2


# ---------------------------------------------------------------- properties

def test_a_survivor_missing_a_delivery_at_a_settled_end_violates_eventual_delivery():
    """The last Deliver + RecvData of member 3 cut out of a run without a
    crash (so no flush's digest names it): every step still conforms (the
    DATA stays in the channel), but the run says it ended settled, and
    member 3 never delivered what the survivors sent."""
    records, line = rsf.simulate(2, "loss=0.1", {"nodes": 3, "messages": 2})
    assert line["crashed"] == [] and _replay(records).verdict == "ok"
    assert records[-1]["kind"] == "end" and records[-1]["settled"] is True
    d = _events(records, lambda r: r["name"] == "Deliver" and r["nid"] == 3)[-1]
    rd = next(j for j in range(d + 1, len(records)) if records[j].get("nid") == 3)
    assert records[rd]["name"] == "RecvData"
    rep = _replay([r for k, r in enumerate(records) if k not in (d, rd)])
    assert rep.verdict == "violation" and rep.reason.startswith("EventualDelivery"), rep.reason


def test_the_model_invariants_are_judged_on_the_candidates(monkeypatch):
    """ViewsFromRing, read as "no view after the first", fails at the first
    SendView: the binding reports it with its event (the wiring of the
    model's invariants; the model itself satisfies them in every state TLC
    and the explorer reach)."""
    from groupcheck.model.raincoresequencerflush import RaincoreSequencerFlushModel
    records = _run()
    monkeypatch.setattr(RaincoreSequencerFlushModel, "ViewsFromRing", lambda self, s: len(s.views) < 2)
    i = _events(records, lambda r: r["name"] == "SendView")[0]
    rep = _replay(records)
    assert rep.verdict == "violation" and rep.reason.startswith("ViewsFromRing"), rep.reason
    assert rep.first_bad_event == i - 1


def test_a_token_received_twice_is_nonconforming():
    """A copy of a TokenReceived record: the token it names is no longer in transit."""
    records = _run()
    i = _events(records, lambda r: r["name"] == "TokenReceived")[5]
    rep = _replay(records[:i + 1] + [copy.deepcopy(records[i])] + records[i + 1:])
    assert rep.verdict == "nonconforming" and rep.first_bad_event == i, rep.reason
    assert "in transit" in rep.reason


def test_the_black_box_history_of_a_joiner_is_clean_and_names_its_first_view():
    """The history projection (conformance/history.py ``from_trace``) takes a
    joiner's first view from FLUSH's VIEW, not from its received-table
    (which starts over every node, as the spec's): the joiner is judged as
    one (its run of each sender may start late), and runs with joiners are
    clean.  Before, the history flagged SenderFIFO on 2 of the audit's 40."""
    from groupcheck.conformance import history
    from groupcheck.core.trace import history as history_format
    joined = 0
    for seed in range(30):
        records, line = rsf.simulate(seed, "auto", {"nodes": 3, "ring": 2, "messages": 2})
        h = history_format.from_records(history.from_trace(records))
        assert history.check(h) == [], (seed, history.check(h))
        if 0 in line["views"][3] and len(line["views"][3]) > 1:
            joined += 1
            first = min(v for v, m in line["views"][3].items() if 3 in m)
            # (the history's first view is the smallest any member logged: when
            # nobody's SEQUENCER took a step in view 1, the joiner's is the first)
            if any(vs and vs[0][0] == 1 for vs in h.views.values()):
                assert properties.joined_views(h, [1, 2, 3]) == {3: first}, seed
    assert joined >= 10, joined
