"""Forged traces: every field a trace property reads is checked by the replay,
and the reader takes strict JSON only.  Each test edits one field of a real
simulated trace; before the fix named in its docstring the forgery passed."""

from __future__ import annotations

import json

import pytest

from groupcheck.conformance.replay import flush as cflush
from groupcheck.conformance.replay.conform import conform_file
from groupcheck.core.trace.reader import TraceError, load
from groupcheck.impl.faults import parse_faults
from groupcheck.impl import campaign, sim_sequencer
from groupcheck.core.trace import writer as tracefile
from groupcheck.core.trace import format as trace_format


def _write(tmp_path, name, records):
    return tracefile.write(tmp_path / name, records)


def _violating_flush_run(tmp_path):
    """A run of the seed as written (reconcile=false) that breaks VirtualSynchrony."""
    for seed in range(60):
        records, _ = cflush.simulate(seed, f"loss=0.2,reorder=3,crash=1@{seed % 40}",
                                     {"nodes": 3, "messages": 2, "reconcile": "false"})
        rep = cflush.replay(load(_write(tmp_path, f"v{seed}.ndjson", records)))
        if rep.verdict == "violation" and rep.reason.startswith("VirtualSynchrony"):
            return records
    pytest.fail("no violating run in 60 seeds")


def test_flush_multicast_view_is_checked(tmp_path):
    """VirtualSynchrony takes each message's view from its Multicast record's
    msg.view; the replay did not compare it with the model, so moving one
    message to another view turned this violation into ok."""
    records = _violating_flush_run(tmp_path)
    forged_ok = 0
    for k, r in enumerate(records):
        if r.get("name") != "Multicast":
            continue
        forged = json.loads(json.dumps(records))
        forged[k]["msg"]["view"] += 1
        rep = cflush.replay(load(_write(tmp_path, f"f{k}.ndjson", forged)))
        assert rep.verdict == "nonconforming", (k, rep.verdict, rep.reason)
        assert rep.first_bad_event == k - 1                  # records[0] is the header
        forged_ok += 1
    assert forged_ok > 0


def test_flush_sendview_view_is_checked(tmp_path):
    """VirtualSynchrony reads the view sequence from SendView's msg.view."""
    records = _violating_flush_run(tmp_path)
    ks = [k for k, r in enumerate(records) if r.get("name") == "SendView" and r.get("msg")]
    assert ks
    forged = json.loads(json.dumps(records))
    forged[ks[0]]["msg"]["view"] += 1
    rep = cflush.replay(load(_write(tmp_path, "sv.ndjson", forged)))
    assert rep.verdict == "nonconforming" and rep.first_bad_event == ks[0] - 1, rep.reason


def _sequencer_run():
    records, _ = sim_sequencer.simulate_run(3, 2, 5, parse_faults("loss=0.1,reorder=3"))
    return records


@pytest.mark.parametrize("sender_is_coord", [True, False])
def test_sequencer_send_type_is_checked(tmp_path, sender_is_coord):
    """SEQUENCER's Send was matched on sender and seqno only: a FORWARD logged
    as DATA (or the reverse) conformed."""
    records = _sequencer_run()
    assert conform_file(_write(tmp_path, "ok.ndjson", records)).verdict == "ok"
    want = "DATA" if sender_is_coord else "FORWARD"
    k = next(k for k, r in enumerate(records) if r.get("name") == "Send" and r["msg"]["type"] == want)
    forged = json.loads(json.dumps(records))
    forged[k]["msg"]["type"] = "FORWARD" if want == "DATA" else "DATA"
    rep = conform_file(_write(tmp_path, "forged.ndjson", forged))
    assert rep.verdict == "nonconforming" and rep.first_bad_event == k - 1, rep.reason


@pytest.mark.parametrize("where, edit", [
    ("params.p", lambda r: r["params"].update(p=4)),
    ("state.recv", lambda r: r["state"]["recv"].update({"4": 0})),
    ("state.delivered", lambda r: r["state"].update(delivered=[[4, 1]])),
])
def test_sequencer_member_outside_the_group_is_rejected_naming_file_line_and_field(tmp_path, where, edit):
    """A member id the schema cannot bound (it does not know N): the replay
    refuses it, naming the record and the field."""
    records = _sequencer_run()
    k = next(k for k, r in enumerate(records) if r.get("name") == "RecvData" and "recv" in (r.get("state") or {}))
    forged = json.loads(json.dumps(records))
    edit(forged[k])
    p = _write(tmp_path, "forged.ndjson", forged)
    rep = conform_file(p)
    assert rep.verdict == "rejected" and f"{p}:{k + 1}: {where}: 4 is not a member 1..3" in rep.reason, rep.reason


# --- strict input -------------------------------------------------------------


def _text(records):
    return trace_format.dumps(records)


@pytest.mark.parametrize("edit, problem", [
    (lambda line: line.replace('"clock":', '"clock":NaN,"x":', 1), "NaN is not a JSON number"),
    (lambda line: line.replace('"clock":', '"clock":Infinity,"x":', 1), "Infinity is not a JSON number"),
    (lambda line: line.replace('{"clock":', '{"nid":2,"clock":', 1), "duplicate key 'nid'"),
])
def test_non_json_numbers_and_duplicate_keys_are_rejected_with_file_and_line(tmp_path, edit, problem):
    records = _sequencer_run()
    lines = _text(records).splitlines(keepends=True)
    lines[3] = edit(lines[3])
    p = tmp_path / "bad.ndjson"
    p.write_text("".join(lines))
    with pytest.raises(TraceError) as e:
        load(p)
    assert str(e.value).startswith(f"{p}:4:") and problem in str(e.value)
    assert conform_file(p).verdict == "rejected"


def test_crlf_is_rejected_at_its_first_line(tmp_path):
    p = tmp_path / "crlf.ndjson"
    p.write_bytes(_text(_sequencer_run()).replace("\n", "\r\n").encode())
    with pytest.raises(TraceError) as e:
        load(p)
    assert str(e.value).startswith(f"{p}:1:") and "CRLF" in str(e.value)


def test_unreadable_file_says_cannot_read(tmp_path):
    p = tmp_path / "nope.ndjson"
    with pytest.raises(TraceError) as e:
        load(p)
    assert str(e.value).startswith(f"{p}: cannot read:")      # no line: the file as a whole


def test_pipeline_ingest_quarantines_the_same_lines(tmp_path):
    from groupcheck.conformance.pipeline.dataset import ingested as _ingested
    lines = _text(_sequencer_run()).splitlines(keepends=True)
    lines[2] = lines[2].replace('"clock":', '"clock":NaN,"x":', 1)
    lines[5] = lines[5].replace("\n", "\r\n")
    p = tmp_path / "mixed.ndjson"
    p.write_text("".join(lines))
    out = _ingested(str(p))
    rejected = out[2] if isinstance(out, tuple) else out["rejected"]
    reasons = {r["line"]: r["reason"] for r in rejected}
    assert "NaN" in reasons[3] and "CRLF" in reasons[6], reasons


def test_a_flush_digest_left_out_of_a_taken_message_is_unknown_and_a_logged_one_is_checked(tmp_path):
    """A VIEW's digest left out of an InstallView record (its taker cannot see
    it: JGroups's VIEW carries none) is not logged, so the replay takes the
    channel's head whatever its digest, as TraceFlush.tla's MsgIs does; it read
    an absent digest as empty and rejected every such record of a view with a
    non-empty union digest.  A digest that is logged is still compared."""
    for seed in range(40):
        records, _ = cflush.simulate(seed, f"crash=1@{seed % 30}", {"nodes": 3, "messages": 2})
        k = next((k for k, r in enumerate(records) if r.get("name") == "InstallView"
                  and (r.get("msg") or {}).get("digest")), None)
        if k is not None and cflush.replay(load(_write(tmp_path, f"s{seed}.ndjson", records))).verdict == "ok":
            break
    else:
        pytest.fail("no conforming run with a non-empty VIEW digest in 40 seeds")
    left_out = json.loads(json.dumps(records))
    del left_out[k]["msg"]["digest"]
    assert cflush.replay(load(_write(tmp_path, "left-out.ndjson", left_out))).verdict == "ok"
    forged = json.loads(json.dumps(records))
    forged[k]["msg"]["digest"] = forged[k]["msg"]["digest"][:-1]
    rep = cflush.replay(load(_write(tmp_path, "forged.ndjson", forged)))
    assert rep.verdict == "nonconforming" and rep.first_bad_event == k - 1, rep.reason
