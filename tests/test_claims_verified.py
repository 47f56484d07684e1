"""Claims are checked, not believed (docs/trace-format.md, "End record" and
"Per-node files"; docs/history-format.md, "CrashStop"): an end record's
``quiescent: true`` is judged against what the run shows in the replay, in
TLC's trace spec and in the history checker alike; an environment Crash
record's vector clock must count the crashed node's last record; a member
acts after its own crash record in a history.  Every run here is a
simulated run with records edited."""
from __future__ import annotations

import copy

import pytest

from groupcheck.conformance import history, tlctrace
from groupcheck.core.trace import history as history_format
from groupcheck.core import properties
from groupcheck.conformance.replay import registry as protocols
from groupcheck.conformance.replay.conform import conform_file
from groupcheck.core.trace.reader import TraceError, load
from groupcheck.core.trace.writer import write
from tlctrace_helpers import NEEDS_JAVA, both, events


def _sim(protocol: str, faults: str, **options) -> list:
    records, _ = protocols.get(protocol).simulate(0, faults, options)
    return records


def _without(records: list, drop) -> list:
    """``records`` less the event records ``drop(record)`` selects (at least one)."""
    out = [r for r in records if not (r["kind"] == "event" and drop(r))]
    assert len(out) < len(records)
    return out


def _last(records: list, pred) -> dict:
    return [r for r in records if r["kind"] == "event" and pred(r)][-1]


# ---------------------------------------------------------------- FLUSH: one view, no crash

@pytest.fixture(scope="module")
def flush_undelivered():
    """3 members, one multicast each, no fault: member 2 never logs its
    delivery of 3.1, yet the end record says quiescent."""
    recs = _sim("flush", "", nodes=3, messages=1)
    assert recs[-1]["kind"] == "end" and recs[-1]["quiescent"] is True
    gone = _last(recs, lambda r: r["name"] == "Deliver" and r["nid"] == 2 and r["msg"]["sender"] == 3)
    return recs, [r for r in recs if r is not gone]


def test_flush_one_view_quiescent_claim_with_a_delivery_owed_is_a_violation_of_the_replay(tmp_path,
                                                                                          flush_undelivered):
    good, bad = flush_undelivered
    assert conform_file(write(tmp_path / "good.ndjson", good)).verdict == "ok"
    rep = conform_file(write(tmp_path / "bad.ndjson", bad))
    assert rep.verdict == "violation" and rep.reason.startswith("EventualDelivery: ")
    assert "3.1" in rep.reason and "[2]" in rep.reason            # the witness: message and member
    # every end-of-run property the claim breaks, at the end record (what TLC's End step must agree with)
    n = len(events(bad))
    assert rep.broken == {"EventualDelivery": n, "Quiescent": n}
    # the history checker sees the same delivery owed, as the protocol's promise (Agreement)
    row = history.verdict(history_format.from_records(history.from_trace(bad)))
    v = next(x for x in row["violations"] if x["check"] == properties.SEEN_AS["EventualDelivery"])
    assert "3.1" in v["text"] and 2 in v["members"], v


def test_flush_quiescent_claim_not_believed_by_the_end_of_run_catalogue():
    """The replay's EventualDelivery is the catalogue's, on the model state's history."""
    from groupcheck.conformance.replay.flush import FlushBinding, flush_end_of_run
    from groupcheck.core.trace.reader import Trace
    recs = _sim("flush", "", nodes=3, messages=1)
    b = FlushBinding(Trace("<t>", recs[0], []))
    s = next(iter(b.init()))
    t = b.model.Multicast(s, 1)          # member 1 multicasts: 1.1 in flight to 2 and 3, owed by both
    found = flush_end_of_run(b.model, t)
    assert set(found) == {"EventualDelivery", "Quiescent"}
    assert "members [2, 3]" in found["EventualDelivery"] and "member 1 to member 2" in found["Quiescent"]


@NEEDS_JAVA
def test_flush_one_view_quiescent_claim_with_a_delivery_owed_tlc_and_both(tmp_path, flush_undelivered):
    good, bad = flush_undelivered
    v, m = both(tmp_path, good, "good")
    assert v.clean and m["verdict"] == "ok" and tlctrace.agrees(v, m)
    v, m = both(tmp_path, bad, "bad")
    n = len(events(bad))
    assert v.ok and v.first_unmatched is None          # every step conforms
    assert v.broken_at == n and v.broken == ["EventualDelivery", "Quiescent"], v.explain()
    assert v.events == n                               # the End entry is no record
    assert m["verdict"] == "violation" and tlctrace.agrees(v, m)


@NEEDS_JAVA
def test_flush_false_quiescent_claim_through_conform_checker_both(tmp_path, flush_undelivered):
    from typer.testing import CliRunner

    from groupcheck.cli.main import app
    _, bad = flush_undelivered
    p = write(tmp_path / "bad.ndjson", bad)
    for checker in ("model", "tlc", "both"):
        r = CliRunner().invoke(app, ["conform", str(p), "--checker", checker])
        assert r.exit_code != 0, (checker, r.stdout)
        assert "violation" in r.stdout or "broken" in r.stdout, (checker, r.stdout)
        assert "disagree" not in r.stdout.lower(), r.stdout


# ---------------------------------------------------------------- SEQUENCER: a message in flight

@pytest.fixture(scope="module")
def sequencer_in_flight():
    """Member 3 sends, then crashes losing nothing (``lost: []``); the
    coordinator's RecvForward of its FORWARD and the deliveries are cut:
    the FORWARD is still in flight at a quiescent end, no delivery is owed
    (its sender crashed)."""
    recs = _sim("sequencer", "crash=3@21", nodes=3, messages=1)
    recs = _without(recs, lambda r: r.get("msg") is not None and r["msg"].get("sender") == 3
                    and r["name"] in ("RecvForward", "RecvData"))
    crash = _last(recs, lambda r: r["name"] == "Crash")
    crash["params"] = {"lost": []}
    assert recs[-1]["quiescent"] is True
    return recs


def test_sequencer_quiescent_claim_with_a_message_in_flight_is_a_violation(tmp_path, sequencer_in_flight):
    rep = conform_file(write(tmp_path / "t.ndjson", sequencer_in_flight))
    assert rep.verdict == "violation" and rep.reason.startswith("Quiescent: "), rep.reason
    assert "FORWARD" in rep.reason and "from member 3 to member 1" in rep.reason
    assert rep.broken == {"Quiescent": len(events(sequencer_in_flight))}
    # the same run, its end not quiescent: judged on safety only
    recs = copy.deepcopy(sequencer_in_flight)
    recs[-1]["quiescent"] = False
    assert conform_file(write(tmp_path / "u.ndjson", recs)).verdict == "ok"


@NEEDS_JAVA
def test_sequencer_quiescent_claim_with_a_message_in_flight_tlc_agrees(tmp_path, sequencer_in_flight):
    v, m = both(tmp_path, sequencer_in_flight, "t")
    assert v.ok and v.broken == ["Quiescent"] and v.broken_at == len(events(sequencer_in_flight))
    assert tlctrace.agrees(v, m)


@NEEDS_JAVA
def test_sequencerflush_quiescent_claim_with_a_delivery_owed_tlc_agrees(tmp_path):
    recs = _sim("sequencerflush", "", nodes=3, messages=1)
    last = [r for r in recs if r["kind"] == "event"][-2:]      # member 3's Deliver and RecvData of one message
    assert [r["nid"] for r in last] == [3, 3]
    bad = [r for r in recs if not any(r is x for x in last)]
    v, m = both(tmp_path, bad, "bad")
    assert m["verdict"] == "violation" and m["reason"].startswith("EventualDelivery: ")
    assert v.ok and set(v.broken) == {"EventualDelivery", "Quiescent"} and tlctrace.agrees(v, m)


# ---------------------------------------------------------------- a Crash record's vector clock

def _per_node(tmp_path, records):
    from test_trace_format import _split
    return _split(tmp_path, records)


def _env_crash(d):
    lines = (d / "env.ndjson").read_text().splitlines()
    k = next(i for i, ln in enumerate(lines) if '"name":"Crash"' in ln)
    return lines, k


@pytest.mark.parametrize("delta", [-1, +1])
def test_crash_vector_clock_must_count_the_crashed_nodes_last_record(tmp_path, delta):
    import json
    recs = _sim("sequencer", "crash=3@21", nodes=3, messages=1)
    d = _per_node(tmp_path, recs)
    assert conform_file(d).verdict == "ok"
    lines, k = _env_crash(d)
    rec = json.loads(lines[k])
    evs = events(recs)
    crash = next(i for i, e in enumerate(evs) if e["name"] == "Crash")
    assert rec["vc"]["3"] == sum(e["nid"] == 3 for e in evs[:crash]) == 3    # node 3's records before its crash
    # the Crash and the environment's records after it (which carry its clock on) say one record more or less
    for j in range(k, len(lines)):
        r = json.loads(lines[j])
        if "3" in r.get("vc", {}):
            r["vc"]["3"] += delta
            lines[j] = json.dumps(r, sort_keys=True, separators=(",", ":"))
    (d / "env.ndjson").write_text("\n".join(lines) + "\n")
    with pytest.raises(TraceError) as e:
        load(d)
    assert str(e.value).startswith(f"{d / 'env.ndjson'}:{k + 1}: vc: the Crash of node 3")
    rep = conform_file(d)
    assert rep.verdict == "rejected" and "vc: the Crash of node 3" in rep.reason


# ---------------------------------------------------------------- a history: acting after one's own crash

def _history(protocol: str, faults: str, **options):
    recs = _sim(protocol, faults, **options)
    return history.from_trace(recs)


@pytest.mark.parametrize("what", ["send", "deliver", "view"])
def test_history_member_acting_after_its_own_crash_is_a_crash_stop_violation(what):
    hrecs = _history("sequencer", "crash=3@21", nodes=3, messages=1)
    assert history.verdict(history_format.from_records(hrecs))["verdict"] == "ok"
    k = next(i for i, r in enumerate(hrecs) if r.get("name") == "crash")
    if what == "send":          # member 3's send moved after its crash
        j = next(i for i, r in enumerate(hrecs) if r.get("name") == "send" and r["nid"] == 3)
        moved = hrecs.pop(j)
        hrecs.insert(k, moved)
        pos = k + 1 - 1
    else:
        ev = ({"kind": "event", "name": "deliver", "nid": 3, "params": {"id": [2, 1]}} if what == "deliver" else
              {"kind": "event", "name": "view", "nid": 3, "params": {"view": 2, "members": [1, 2, 3]}})
        hrecs.insert(k + 1, ev)
    h = history_format.from_records(hrecs)
    row = history.verdict(h)
    assert row["verdict"] == "violation" and "CrashStop" in row["checks"]
    v = next(x for x in row["violations"] if x["check"] == "CrashStop")
    assert v["members"] == [3] and f"member 3 logged {what}" in v["text"] and "after its crash" in v["text"]
    assert [e["what"] for e in v["events"]] == ["crash", what]
    assert v["events"][0]["index"] < v["events"][1]["index"]


def test_history_crash_in_the_environments_file_orders_no_member_event(tmp_path):
    """Per-member files and the environment's: a crash record orders none of
    the member's events (no clock says which came first): nothing is judged."""
    h = properties.History(crashed={3})
    assert properties.crash_stop(h) is None
    import json
    hrecs = _history("sequencer", "crash=3@21", nodes=3, messages=1)
    head, evs = hrecs[0], hrecs[1:]
    files = []
    for who in (1, 2, 3, None):
        p = tmp_path / f"{who or 'env'}.ndjson"
        hd = dict(head, **({"node": who} if who else {}))
        mine = [r for r in evs if r.get("kind") == "event" and r["nid"] == who]
        if who is None:
            mine.append({"kind": "event", "name": "crash", "nid": None, "params": {"member": 3}})
            mine = [r for r in mine if r["name"] == "crash"][:1]
        p.write_text("".join(json.dumps(r) + "\n" for r in [hd] + mine))
        files.append(p)
    [h] = history_format.load(files[::-1])        # the environment's file read first
    assert h.crashed == {3} and h.crashed_at == {} and properties.crash_stop(h) is None


# ---------------------------------------------------------------- over the ring

def _ring_claims_quiescent(protocol: str) -> list:
    """A ring stack's simulated run (which ends settled, never quiescent:
    the token circulates) with a quiescent end, as a cluster writes one
    once every node reports its group layers idle."""
    recs = _sim(protocol, "")
    assert recs[-1]["quiescent"] is False and recs[-1].get("settled") is True
    return recs[:-1] + [dict(recs[-1], quiescent=True)]


@pytest.mark.parametrize("protocol", ["raincoreflush", "raincoresequencerflush"])
def test_a_ring_stack_claiming_quiescence_with_a_delivery_owed_is_a_violation(tmp_path, protocol):
    recs = _ring_claims_quiescent(protocol)
    assert conform_file(write(tmp_path / "good.ndjson", recs)).verdict == "ok"
    # the last member to deliver a multicast never logs it (and, with SEQUENCER on top, its RecvData)
    last = _last(recs, lambda r: r["name"] == "Deliver")
    k = next(i for i, r in enumerate(recs) if r is last)
    drop = [last] + ([recs[k + 1]] if protocol == "raincoresequencerflush" else [])
    assert all(r["nid"] == last["nid"] for r in drop)
    bad = [r for r in recs if not any(r is x for x in drop)]
    rep = conform_file(write(tmp_path / "bad.ndjson", bad))
    assert rep.verdict == "violation" and rep.reason.startswith("EventualDelivery: "), rep.reason
    assert f"[{last['nid']}]" in rep.reason


@NEEDS_JAVA
def test_a_ring_stack_claiming_quiescence_with_a_delivery_owed_tlc_agrees(tmp_path):
    recs = _ring_claims_quiescent("raincoreflush")
    last = _last(recs, lambda r: r["name"] == "Deliver")
    bad = [r for r in recs if r is not last]
    v, m = both(tmp_path, bad, "t")
    assert v.ok and v.broken == ["EventualDelivery"] and v.broken_at == len(events(bad)) and tlctrace.agrees(v, m)


@NEEDS_JAVA
def test_stable_prefix_claiming_quiescence_tlc_agrees(tmp_path):
    """A STABLE run cut after its first 11 records, its end record kept:
    members still owe deliveries and garbage collection."""
    recs = _sim("stable", "")
    assert recs[-1]["quiescent"] is True
    cut = recs[:12] + recs[-1:]
    v, m = both(tmp_path, cut, "cut")
    assert m["verdict"] == "violation" and m["reason"].startswith("LastMessageDelivered: ")
    assert v.ok and v.broken == ["EventuallyCollected", "LastMessageDelivered"] and v.broken_at == 11
    assert tlctrace.agrees(v, m)
