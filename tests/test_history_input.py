"""The history checker's input validation and its choice of checks: every
field a check reads is typed and checked against the header (file:line:field,
exit 2, no traceback), a file's order is enforced, and a run is judged on
what its protocol promises (conformance/history.py, docs/history-format.md)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from groupcheck.cli.main import app
from groupcheck.conformance import history
from groupcheck.core.trace import history as history_format


def _write(path, recs, raw_tail: str = ""):
    path.write_text("".join(json.dumps(r) + "\n" for r in recs) + raw_tail, encoding="utf-8")
    return path


def _run(protocol=None, nodes=(1, 2), extra=()):
    head = {"kind": "header", "format": history_format.FORMAT, "run_id": "r", "nodes": list(nodes)}
    if protocol:
        head["protocol"] = protocol
    ev = [{"kind": "event", "name": "send", "nid": 1, "params": {"id": [1, 1]}},
          {"kind": "event", "name": "deliver", "nid": 1, "params": {"id": [1, 1]}},
          {"kind": "event", "name": "deliver", "nid": 2, "params": {"id": [1, 1]}}]
    return [head] + ev + list(extra) + [{"kind": "end", "quiescent": True}]


def _edit(recs, line, **changes):
    out = [dict(r) for r in recs]
    out[line - 1] = {**out[line - 1], **changes}
    return out


FIELD_CASES = [
    (2, {"nid": "1"}, "nid"), (2, {"nid": 9}, "nid"), (2, {"nid": True}, "nid"), (3, {"nid": 1.0}, "nid"),
    (3, {"params": {"id": [True, 1]}}, "params.id"), (3, {"params": {"id": [1, 1.0]}}, "params.id"),
    (3, {"params": {"id": [1, 0]}}, "params.id"), (3, {"params": {"id": [1, 1], "x": 1}}, "params.x"),
    (3, {"extra": 1}, "extra"), (2, {"clock": "now"}, "clock"), (2, {"params": [1]}, "params"),
    (5, {"quiescent": "yes"}, "quiescent"), (1, {"nodes": [1, "2"]}, "nodes"), (1, {"colour": "red"}, "colour"),
    (1, {"protocol": "paxos"}, "protocol"), (1, {"run_id": 7}, "run_id"),
]


@pytest.mark.parametrize("line,change,field", FIELD_CASES)
def test_every_field_is_typed_and_named(tmp_path, line, change, field):
    p = _write(tmp_path / "h.ndjson", _edit(_run(), line, **change))
    with pytest.raises(history_format.HistoryError, match=rf"h.ndjson:{line}:{field}:"):
        history.check_paths([p])


def test_members_are_checked_against_the_header(tmp_path):
    view = {"kind": "event", "name": "view", "nid": 1, "params": {"view": 1, "members": [1, 7]}}
    crash = {"kind": "event", "name": "crash", "nid": None, "params": {"member": 5}}
    for extra, field in (([view], r"5:params.members\[1\]"), ([crash], "5:params.member")):
        p = _write(tmp_path / "h.ndjson", _run(extra=extra))
        with pytest.raises(history_format.HistoryError, match=field):
            history.check_paths([p])


def test_line_ends_size_and_order_within_a_file(tmp_path):
    recs = _run()
    p = tmp_path / "h.ndjson"
    p.write_bytes("".join(json.dumps(r) + "\r\n" for r in recs).encode())
    with pytest.raises(history_format.HistoryError, match="h.ndjson:2: a CRLF line end"):
        history.check_paths([p])
    big = _edit(recs, 3, params={"id": [1, 1]}, clock=1)
    big[2]["nid"] = 2
    _write(p, big[:3], json.dumps({"kind": "event", "name": "view", "nid": 2,
                                   "params": {"view": "x" * (history_format.MAX_LINE + 1), "members": [1]}}) + "\n")
    with pytest.raises(history_format.HistoryError, match=r"h.ndjson:4: a line of \d+ bytes"):
        history.check_paths([p])
    back = _edit(_edit(recs, 2, clock=5.0), 3, clock=4.0)    # clocks are informational: no order
    assert history.check_paths([_write(p, back)])[0]["verdict"] == "ok"
    after_end = recs + [recs[2]]
    _write(p, after_end)
    with pytest.raises(history_format.HistoryError, match="h.ndjson:6: a record after the end record"):
        history.check_paths([p])
    again = recs[:2] + [recs[1]] + recs[2:]
    _write(p, again)
    with pytest.raises(history_format.HistoryError, match="h.ndjson:3:params.id: 1.1 was sent before"):
        history.check_paths([p])


def test_a_member_delivering_its_own_message_before_sending_it_violates_integrity(tmp_path):
    recs = _run()
    early = [recs[0], recs[2], recs[1]] + recs[3:]
    [row] = history.check_paths([_write(tmp_path / "h.ndjson", early)])
    [v] = row["violations"]
    assert v["check"] == "Integrity" and "before it sent it" in v["text"], v["text"]
    [row] = history.check_paths([_write(tmp_path / "h.ndjson", recs)])
    assert row["verdict"] == "ok"


def _reordered(protocol):
    """Two members delivering two senders' messages in opposite orders: a
    break of total order that FLUSH never promised."""
    head = {"kind": "header", "format": history_format.FORMAT, "run_id": "r", "nodes": [1, 2], "protocol": protocol}
    ev = [("send", 1, [1, 1]), ("send", 2, [2, 1]), ("deliver", 1, [1, 1]), ("deliver", 1, [2, 1]),
          ("deliver", 2, [2, 1]), ("deliver", 2, [1, 1])]
    return [head] + [{"kind": "event", "name": n, "nid": m, "params": {"id": i}} for n, m, i in ev] + \
        [{"kind": "end", "quiescent": True}]


def test_a_run_is_judged_on_what_its_protocol_promises(tmp_path):
    r = CliRunner()
    p = _write(tmp_path / "flush.ndjson", _reordered("flush"))
    res = r.invoke(app, ["history", str(p)])
    assert res.exit_code == 0, res.stdout + res.stderr
    assert "judged on what flush promises" in res.stdout and "TotalOrder" not in res.stdout
    res = r.invoke(app, ["history", str(p), "--all"])
    assert res.exit_code == 0 and "informational, not promised: TotalOrder" in res.stdout
    # a flag that disagrees with the header is an input error naming both
    res = r.invoke(app, ["history", str(p), "--protocol", "sequencer"])
    assert res.exit_code == 2 and "--protocol sequencer disagrees" in res.output and "'flush'" in res.output
    p = _write(tmp_path / "flush.ndjson", _reordered("sequencer"))
    assert r.invoke(app, ["history", str(p)]).exit_code == 1
    res = r.invoke(app, ["history", str(p), "--protocol", "paxos"])
    assert res.exit_code == 2 and "--protocol 'paxos'" in res.stderr
    head = _reordered("flush")
    head[0] = {**head[0], "promises": ["TotalOrder"]}
    p = _write(tmp_path / "flush.ndjson", head)
    res = r.invoke(app, ["history", str(p)])
    assert res.exit_code == 1 and "judged on the header's promises: TotalOrder" in res.stdout


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    r = CliRunner()
    p = _write(tmp_path / "h.ndjson", _edit(_run(), 3, nid=True))
    res = r.invoke(app, ["history", str(p)])
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "h.ndjson:3:nid:" in res.stderr
    assert "Traceback" not in res.stdout + res.stderr


def test_a_run_folder_is_read_whole_with_its_traces_skipped(tmp_path):
    from groupcheck.conformance.replay import registry as protocols
    from groupcheck.core.trace import writer as tracefile
    proto = protocols.get("sequencer")
    recs, _ = proto.simulate(3, "", proto.default_options)
    tracefile.write(tmp_path / "traces" / "r.ndjson", recs)
    tracefile.write(tmp_path / "history" / "r.ndjson", history.from_trace(recs))
    res = CliRunner().invoke(app, ["history", str(tmp_path)])
    assert res.exit_code == 0, res.stdout + res.stderr
    assert "skipped 1 trace file(s)" in res.stderr and "1/1 runs ok" in res.stdout


@pytest.mark.slow
def test_spark_names_every_field_as_the_local_engine_does(tmp_path):
    """Each malformed file of the field cases, checked on Spark (one session
    for all): the same file:line:field rejection as the local engine."""
    pytest.importorskip("pyspark")
    from groupcheck.conformance.pipeline.spark import session
    spark = session("local[1]")
    for k, (line, change, field) in enumerate(FIELD_CASES):
        p = _write(tmp_path / f"h{k}.ndjson", _edit(_run(), line, **change))
        with pytest.raises(history_format.HistoryError) as local:
            history.check_paths([p])
        with pytest.raises(history_format.HistoryError) as remote:
            history.check_spark([p], spark)
        assert str(remote.value) == str(local.value), (field, str(remote.value), str(local.value))
        assert f"h{k}.ndjson:{line}:{field}:" in str(local.value)


def test_a_header_may_promise_only_checks_that_exist():
    """The header's ``promises``: names of checks (``CHECKS``); a name that
    is none, or a value that is no name, is refused at the header, naming it."""
    head = {"kind": "header", "format": history_format.FORMAT, "run_id": "r", "nodes": [1, 2]}
    end = {"kind": "end", "quiescent": True}
    assert history_format.from_records([{**head, "promises": ["Integrity"]}, end]).promised == ["Integrity"]
    for bad, named in ((["Integrity", "Bogus"], "'Bogus'"), ([3], "3"), ("Integrity", "'Integrity'")):
        with pytest.raises(history_format.HistoryError, match=f"promises: {named} is not a check"):
            history_format.from_records([{**head, "promises": bad}, end])
