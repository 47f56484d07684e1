"""The replay of SEQUENCER-over-FLUSH traces against model/sequencerflush.py
(conformance/replay/sequencerflush.py: a binding of the one engine, whose pre-pass
joins the two layers' half-steps).

Runs are the campaign's draws (tests/test_campaign_flush.py).  Where the
implementation takes a step the composed spec does not allow, the replay
must say which one: docs/flush.md, "The composed replay", lists the
divergences (a), (c), (d), (e) it finds; anything else fails these tests."""

from __future__ import annotations

import copy
import re
import time
from collections import Counter

import pytest

from groupcheck.conformance.replay import sequencerflush as csf
from groupcheck.conformance.replay.engine import ReplayEngine
from groupcheck.core.trace.reader import Trace, load as _load_delta, whole


def load(path) -> Trace:
    """The trace with whole member states rebuilt from the format-2 deltas
    (these tests tamper with and inspect whole states)."""
    return whole(_load_delta(path))
from groupcheck.impl.faults import parse_faults
from groupcheck.core.trace import writer as tracefile
from sequencerflush_helpers import sequencer_histories
from test_campaign_flush import draw_seqflush_run

KNOWN = {"a", "c", "d", "e"}


def campaign_trace(k: int, tmp_path, **opts) -> Trace:
    p = draw_seqflush_run(k)
    records, _ = csf.simulate(p["seed"], p["faults"], {"nodes": p["n"], "messages": p["per_member"], **opts})
    return load(tracefile.write(tmp_path / f"sf{k}.ndjson", records))


def replay_steps(trace: Trace):
    """The binding after the engine took the trace's steps (its pre-pass's
    joins), the step that failed and why."""
    b = csf.SequencerFlushBinding(trace)
    engine = ReplayEngine(b)
    for step in b.steps():
        failed = engine.step(step)
        if failed:
            return b, step, failed
    return b, None, None


def test_a_run_with_a_coordinator_crash_and_digest_deliveries_conforms(tmp_path):
    tr = campaign_trace(5, tmp_path)          # coordinator crash; the VIEW's digest delivers
    r, ev, failed = replay_steps(tr)
    assert failed is None, failed
    assert any(e["name"] == "Crash" and e["nid"] == 1 for e in tr.events)
    assert any(e["name"] == "SendView" for e in tr.events) and r.stats["digest_deliveries"] > 0
    rep = csf.replay(tr)
    assert rep.verdict == "ok" and rep.candidates_max >= 1


@pytest.mark.parametrize("tamper", ["order", "data_id", "fwd"])
def test_a_tampered_record_is_nonconforming_at_that_record(tmp_path, tamper):
    tr = campaign_trace(5, tmp_path)
    events = copy.deepcopy(tr.events)
    if tamper == "order":      # a member delivers its last two messages the other way round
        i = max(e["i"] for e in events if e["name"] == "RecvData" and len(e["state"]["delivered"]) >= 2
                and e["params"]["p"] != e["nid"])
        d = events[i]["state"]["delivered"]
        d[-1], d[-2] = d[-2], d[-1]
    elif tamper == "data_id":  # a FLUSH delivery names a multicast that never happened
        i = next(e["i"] for e in events if e["name"] == "Deliver")
        events[i]["msg"]["seqno"] += 7
    else:                      # a forwarder forgets its forward-table entry
        i = next(e["i"] for e in events if e["name"] == "Send" and e["state"]["fwd"])
        events[i]["state"]["fwd"] = []
    rep = csf.replay(Trace(path=tr.path, header=tr.header, events=events, states="full"))
    assert rep.verdict == "nonconforming" and rep.first_bad_event == i, rep.reason


def old_coupling_trace(tmp_path) -> Trace:
    """Run 1 with the earlier coupling (hold_sends=False: the SEQUENCER's
    FORWARDs passed the latch), which diverges at (c)."""
    records, _ = csf.simulate(1, csf.PROTOCOL.campaign_faults, {"hold_sends": False})
    return load(tracefile.write(tmp_path / "s1old.ndjson", records))


def test_the_stack_holds_sends_while_blocked_and_run_1_now_conforms(tmp_path):
    records, s = csf.simulate(1, csf.PROTOCOL.campaign_faults, {})
    tr = load(tracefile.write(tmp_path / "s1.ndjson", records))
    assert csf.replay(tr).verdict == "ok"
    blocked = {m: False for m in tr.header["nodes"]}
    for ev in tr.events:                   # no SEQUENCER Send while its member's latch is closed
        if csf.layer_of(ev) == "flush":
            blocked[ev["nid"]] = ev["state"]["blocked"]
        elif ev["name"] == "Send":
            assert not blocked[ev["nid"]], ev
    assert s["held_sends"] >= 1            # the send the old coupling let through waited


def test_send_while_blocked_is_divergence_c_and_the_default_replay_is_unchanged(tmp_path):
    tr = old_coupling_trace(tmp_path)
    rep = csf.replay(tr)
    ev = tr.events[rep.first_bad_event]
    assert rep.verdict == "nonconforming" and "divergence (c)" in rep.reason
    assert ev["name"] == "Send" and ev["msg"]["type"] == "FORWARD"
    # the FLUSH layer had closed this member's latch (its last FLUSH record before the Send)
    last = [e for e in tr.events[:ev["i"]] if e["nid"] == ev["nid"] and csf.layer_of(e) == "flush"][-1]
    assert last["state"]["blocked"] is True


def test_no_environment_variable_changes_the_verdict(tmp_path, monkeypatch):
    """The composed replay is the verdict of conform, whatever the
    environment says (the GROUPCHECK_SEQFLUSH_REPLAY variable is gone)."""
    from groupcheck.conformance.replay.conform import conform_file
    records, _ = csf.simulate(1, csf.PROTOCOL.campaign_faults, {"hold_sends": False})
    path = tracefile.write(tmp_path / "s1.ndjson", records)
    assert conform_file(path).verdict == "nonconforming"       # the composed replay
    monkeypatch.setenv("GROUPCHECK_SEQFLUSH_REPLAY", "flush")
    assert conform_file(path).verdict == "nonconforming"


@pytest.mark.parametrize("k, tag, action, old", [(36, "a", "RecvForward", {"pass_latch": False}),
                                                 (25, "d", "RecvData", {"self_channel": False}),
                                                 (251, "e", "InstallView", {"view_as_sent": False})])
def test_latched_data_self_channel_order_and_suspects_at_install_are_divergences_a_d_e(tmp_path, k, tag, action, old):
    tr = campaign_trace(k, tmp_path, **old)
    rep = csf.replay(tr)
    assert rep.verdict == "nonconforming" and f"divergence ({tag})" in rep.reason, rep.reason
    assert tr.events[rep.first_bad_event]["name"] == action


def test_the_self_channel_keeps_the_order_of_the_spec_channel_m_to_m(tmp_path):
    """Draw 25: the new coordinator 2 re-forwards <<2,2>> to itself; with the
    self channel its own DATA waits behind that FORWARD, as on chan[<<2, 2>>]."""
    tr = campaign_trace(25, tmp_path)
    assert csf.replay(tr).verdict == "ok"
    own = [e for e in tr.events if csf.layer_of(e) == "sequencer" and e["nid"] == 2
           and e["name"] in ("RecvForward", "RecvData") and e["params"].get("p") == 2]
    assert own and own[0]["name"] == "RecvForward" and own[0]["msg"]["sender"] == 2


def test_the_coordinators_data_passes_the_latch_and_is_resent_in_the_next_view(tmp_path):
    """Draw 36: 2 crashed; coordinator 1 takes FORWARD <<3,2>> after its
    FLUSH_COMPLETED.  As in the spec (C4) the DATA goes out at once in view 1,
    where nobody delivers it (1 does not deliver its own copy either); 3
    re-sends its forward-table at the view change (ResendAlways, in the
    header), and <<3,2>> is delivered in view 2 by every survivor."""
    tr = campaign_trace(36, tmp_path)
    assert tr.header["constants"]["ResendAlways"] is True
    assert csf.replay(tr).verdict == "ok"
    rf = next(e for e in tr.events if e["name"] == "RecvForward" and e["nid"] == 1 and e["msg"]["seqno"] == 2
              and e["msg"]["sender"] == 3)
    mc = tr.events[rf["i"] + 1]
    assert mc["name"] == "Multicast" and mc["msg"]["view"] == 1 and mc["state"]["phase"] == "Completed"
    assert [mc["msg"]["sender"], mc["msg"]["seqno"]] not in mc["state"]["delivered"]
    again = [e for e in tr.events if e["name"] == "RecvForward" and e["nid"] == 1 and e["i"] > rf["i"]
             and (e["msg"]["sender"], e["msg"]["seqno"]) == (3, 2)]
    assert again and again[0]["state"]["vid"] == 2
    h = sequencer_histories(tr.events, tr.header["nodes"])
    assert all((3, 2) in h.delivered[m] for m in (1, 3))


@pytest.mark.parametrize("runs", [100, pytest.param(500, marks=pytest.mark.slow)])
def test_composed_campaign_every_divergence_is_accounted_for(tmp_path, runs):
    """The default campaign's draws under the composed replay: every run
    conforms or fails first at a divergence docs/flush.md accounts for."""
    t0 = time.perf_counter()
    verdicts, tags, unexplained, flushed_ok = Counter(), Counter(), [], 0
    for k in range(runs):
        tr = campaign_trace(k, tmp_path)
        rep = csf.replay(tr)
        verdicts[rep.verdict] += 1
        if rep.verdict == "ok":
            flushed_ok += any(e["name"] == "SendView" for e in tr.events)
            continue
        m = re.search(r"divergence \((\w)\)", rep.reason or "")
        if rep.verdict != "nonconforming" or not m or m.group(1) not in KNOWN:
            unexplained.append((k, rep.verdict, rep.reason))
            continue
        tags[m.group(1)] += 1
    print(f"\ncomposed replay, {runs} campaign runs: {dict(verdicts)}, first divergences {dict(tags)}, "
          f"conforming runs with a view change {flushed_ok}, {time.perf_counter() - t0:.1f} s")
    assert not unexplained, unexplained[:3]
    assert verdicts["ok"] > 0 and flushed_ok > 0


def test_the_pre_pass_joins_half_steps_and_no_candidate_keeps_a_history(tmp_path):
    """Draw 5 as written (deltas): the engine takes fewer steps than there
    are records (the halves joined), the candidates hold no delivery
    history (a step costs O(record)), and the histories the properties judge
    are the ones the members logged."""
    p = draw_seqflush_run(5)
    records, _ = csf.simulate(p["seed"], p["faults"], {"nodes": p["n"], "messages": p["per_member"]})
    tr = _load_delta(tracefile.write(tmp_path / "d5.ndjson", records))
    kinds = Counter(s["step"] for s in csf.SequencerFlushBinding(tr).steps())
    assert kinds["deliver"] and kinds["view"] and kinds["coord_send"] + kinds["coord_forward"]
    assert sum(kinds.values()) < len(tr.events)
    engine = ReplayEngine(b := csf.SequencerFlushBinding(tr))
    for s in b.steps():
        assert engine.step(s) is None
    assert all(not any(s.delivered.values()) and not any(s.closed.values()) for s in engine.cands)
    logged = sequencer_histories(whole(tr).events, tr.header["nodes"])
    assert {m: tuple(d) for m, d in b.hist.items()} == logged.delivered


def test_a_forged_multicast_view_is_nonconforming_at_the_multicast(tmp_path):
    """The coordinator's Multicast names the view SEQUENCER VirtualSynchrony
    and FLUSH's read: a view other than the one the model multicast in is
    caught at that record, state logged or not."""
    p = draw_seqflush_run(5)
    records, _ = csf.simulate(p["seed"], p["faults"], {"nodes": p["n"], "messages": p["per_member"]})
    k = next(k for k, r in enumerate(records) if r.get("name") == "Multicast")
    for strip in (False, True):
        forged = copy.deepcopy(records)
        forged[k]["msg"]["view"] += 1
        if strip:
            forged = [forged[0]] + [{f: v for f, v in r.items() if f != "state"} for r in forged[1:]]
        rep = csf.replay(_load_delta(tracefile.write(tmp_path / f"v{strip}.ndjson", forged)))
        assert rep.verdict == "nonconforming" and rep.first_bad_event == k - 1, rep.reason
        assert "goes out in view" in rep.reason


def test_the_replay_appends_to_a_views_log_without_copying_it(tmp_path):
    """A receive appends to its view's log: the candidate's log is a Seq
    whose append shares the storage of the log it extends, so a long view
    costs O(1) per receive, not a copy of the whole view's log (what made
    a 30-minute soak's check quadratic)."""
    from groupcheck.model.values import Seq
    tr = campaign_trace(2, tmp_path)
    b = csf.SequencerFlushBinding(tr)
    engine = ReplayEngine(b)
    shared = grew = 0
    for step in b.steps():
        before = {m: x for s in engine.cands for m, x in s.log.items()}
        assert engine.step(step) is None
        (t,) = engine.cands
        for m, x in t.log.items():
            assert not x or type(x) is Seq, (m, type(x))
            old = before.get(m)
            if type(old) is Seq and len(x) == len(old) + 1:
                grew += 1
                shared += x._buf is old._buf
    assert grew >= 5 and shared == grew


def test_a_discard_stutter_matches_the_message_itself():
    """The replay takes a Discard of a message the spec already purged as a
    stutter only if that very message is gone from the channel: a newer
    DATA of the same view from the same (suspected, still live) sender does
    not hide it, and the message itself still in the channel does."""
    from groupcheck.conformance.replay.sequencerflush import _same
    gone = {"type": "DATA", "view": 1, "sender": 1, "seqno": 103}
    newer = {"type": "DATA", "view": 1, "sender": 1, "seqno": 140}
    assert not _same(newer, gone) and _same(dict(gone), gone)
    assert not _same({**gone, "view": 2}, gone) and not _same({**gone, "type": "FORWARD"}, gone)
    flush = {"type": "FLUSH_COMPLETED", "view": 1}
    assert _same({"type": "FLUSH_COMPLETED", "view": 1, "digest": []}, flush)


def test_a_forward_with_another_seqno_is_nonconforming_at_its_send():
    """A member that is not coordinator FORWARDs its next seqno: its Send's
    message is checked by SEQUENCER's own check (conformance/replay/sequencer.py
    ``sent_is``), at the Send record."""
    from groupcheck.core.trace.reader import from_records
    faults, opts = csf.PROTOCOL.draw(0)
    records, _ = csf.simulate(0, faults, opts)
    k = next(k for k, r in enumerate(records)
             if r.get("name") == "Send" and (r.get("msg") or {}).get("type") == "FORWARD")
    forged = copy.deepcopy(records)
    forged[k]["msg"]["seqno"] += 1
    rep = csf.replay(from_records(forged))
    assert rep.verdict == "nonconforming" and rep.first_bad_event == k - 1, rep.reason   # records[0]: the header
    assert "the logged message is not the model's: model {'type': 'FORWARD'" in rep.reason


def test_a_delivery_left_out_at_a_quiescent_end_is_an_eventual_delivery_violation():
    """At the end of a quiescent run every survivor delivered every message
    a survivor sent (``at_end``, the catalogue's EventualDelivery): a
    member's last delivery taken out of the trace, both of its records,
    conforms step by step and is caught at the end."""
    from groupcheck.core.trace.reader import from_records
    records, s = csf.simulate(3, "", {"nodes": 3, "messages": 2})
    assert s["quiescent"] and csf.replay(from_records(records, "x")).verdict == "ok"
    k = max(i for i, r in enumerate(records) if r.get("name") == "RecvData" and r.get("nid") == 3)
    d = max(i for i, r in enumerate(records[:k]) if r.get("name") == "Deliver" and r.get("nid") == 3)
    rep = csf.replay(from_records([r for i, r in enumerate(records) if i not in (k, d)], "x"))
    assert rep.verdict == "violation" and rep.reason.startswith("EventualDelivery: member 3"), rep.reason
    assert "members [3]" in rep.reason


def test_a_sequencer_view_record_without_its_flush_view_record_is_nonconforming_there():
    """The pre-pass joins a SEQUENCER InstallView to the FLUSH SendView or
    InstallView of its member before it; with that record taken out the run
    stops at the orphan, named, and a header of another protocol is refused."""
    from groupcheck.core.trace.reader import from_records
    records, _ = csf.simulate(1, "crash=1@15", {"nodes": 3, "messages": 2})
    k = next(k for k, r in enumerate(records) if r.get("name") == "InstallView" and "c" not in (r.get("params") or {}))
    m = records[k]["nid"]
    j = max(i for i in range(k) if records[i].get("nid") == m)
    assert records[j]["name"] in ("SendView", "InstallView")
    rep = csf.replay(from_records(records[:j] + records[j + 1:], "x"))
    assert rep.verdict == "nonconforming", rep.reason
    assert f"no FLUSH SendView/InstallView of member {m} before it" in rep.reason
    t = from_records(records, "x")
    t.header["protocol"] = "flush"
    rep = csf.replay(t)
    assert rep.verdict == "rejected" and "no SEQUENCER over FLUSH replay for protocol 'flush'" in rep.reason


def test_the_audit_draws_runs_the_fault_grammar_reads():
    """``draw``: 3-4 members, 1-3 multicasts each, crashes at increasing
    times within the grammar (what the audit's campaign runs)."""
    from groupcheck.impl import campaign
    for seed in range(60):
        faults, opts = csf.draw(seed)
        plan = parse_faults(faults)
        assert 3 <= opts["nodes"] <= 4 and 1 <= opts["messages"] <= 3, opts
        times = [t for _, t in plan.crashes]
        assert times == sorted(times) and all(2 <= n <= opts["nodes"] or n == 1 for n, _ in plan.crashes)


def test_a_flush_key_no_multicast_named_gets_an_id_of_its_own():
    """``sid``: a FLUSH key the binding learnt from a Multicast record is
    that record's SEQUENCER id; any other key gets an id no SEQUENCER
    message has (a negative sender), one per key, so that two unnamed
    messages are never taken for one another."""
    from groupcheck.core.trace.reader import from_records
    records, _ = csf.simulate(1, "", {"nodes": 3, "messages": 2})
    b = csf.SequencerFlushBinding(from_records(records, "x"))
    list(b.steps())
    named = next(iter(b.fkey))
    assert b.sid(named) == b.fkey[named]
    unnamed = [(1, 90), (2, 90), (3, 91), (90, 1)]
    ids = [b.sid(k) for k in unnamed]
    assert len(set(ids)) == len(ids) and all(i[0] < 0 for i in ids) and not set(ids) & set(b.fkey.values())


def test_a_multicast_record_naming_another_sender_is_nonconforming_there():
    """The coordinator's FLUSH Multicast names the member itself as the
    FLUSH sender: one naming another member (a higher id here) is not a new
    multicast of the member, and the run stops at it."""
    import copy
    from groupcheck.core.trace.reader import from_records
    records, _ = csf.simulate(1, "", {"nodes": 3, "messages": 2})
    k = next(k for k, r in enumerate(records) if r.get("name") == "Multicast" and r["nid"] == 1)
    forged = copy.deepcopy(records)
    forged[k]["msg"]["sender"] = 3
    rep = csf.replay(from_records(forged, "x"))
    assert rep.verdict == "nonconforming" and rep.first_bad_event == k - 1, rep
    assert "[3, 1] is not a new FLUSH multicast of member 1" in rep.reason


def test_a_sequencer_delivery_naming_another_sequencer_is_not_joined_to_the_flush_delivery():
    """FLUSH Deliver(m, q) and the SEQUENCER RecvData that follows are one
    model step only when the RecvData names q as its sequencer (``p``):
    one naming another member leaves the FLUSH delivery alone, which the
    model's RecvData does not match."""
    import copy
    from groupcheck.core.trace.reader import from_records
    records, _ = csf.simulate(1, "crash=1@15", {"nodes": 3, "messages": 2})
    k = next(k for k, r in enumerate(records) if r.get("name") == "Deliver" and (r.get("params") or {}).get("q") == 2)
    j = next(j for j in range(k + 1, len(records)) if records[j].get("nid") == records[k]["nid"])
    assert records[j]["name"] == "RecvData" and records[j]["params"]["p"] == 2
    assert csf.replay(from_records(records, "x")).verdict == "ok"
    forged = copy.deepcopy(records)
    forged[j]["params"]["p"] = 1
    rep = csf.replay(from_records(forged, "x"))
    assert rep.verdict == "nonconforming" and rep.first_bad_event == k - 1, rep
