"""Decisions of the checkers, the drivers and the runtime that a sample of
mutants (bench/mutants.py, docs/mutants.md) showed no test pinned: each
test here fails with the mutant it is named for applied."""

from __future__ import annotations

from groupcheck.conformance import history, tlctrace
from groupcheck.conformance.replay import sequencer
from groupcheck.core.trace.reader import Trace
from groupcheck.conformance.replay.flush import FlushLockstep
from groupcheck.core.trace import history as history_format


def _run(events, run="r", nodes=(1, 2)):
    recs = [{"kind": "header", "format": history_format.FORMAT, "run_id": run, "nodes": list(nodes)}]
    recs += [{"kind": "event", "name": n, "nid": nid, "params": p} for n, nid, p in events]
    return history_format.from_records(recs + [{"kind": "end", "quiescent": True}])


def test_a_history_and_its_trace_differ_first_where_the_first_rule_says():
    """``same_run``: run id, members, messages sent (the smallest one sent in
    one run only, named with where it was sent), each member's deliveries,
    views, crashes, in that order."""
    base = [("view", m, {"view": 1, "members": [1, 2]}) for m in (1, 2)] + [("send", 1, {"id": [1, 1]})]
    a = _run(base + [("send", 2, {"id": [2, 1]}), ("deliver", 2, {"id": [1, 1]})])
    assert history.same_run(a, _run(base + [("send", 2, {"id": [2, 1]}), ("deliver", 2, {"id": [1, 1]})])) is None
    assert "run id" in history.same_run(a, _run(base, run="other"))
    assert "members" in history.same_run(a, _run(base, nodes=(1, 2, 3)))
    # the history sent 2.1 and 2.2, the trace 2.1 and 2.3: the first message in one of them only is 2.2
    b = _run(base + [("send", 2, {"id": [2, 1]}), ("send", 2, {"id": [2, 2]})])
    c = _run(base + [("send", 2, {"id": [2, 1]}), ("send", 2, {"id": [2, 3]})])
    assert history.same_run(b, c) == "message 2.2 sent in the history only"
    assert history.same_run(c, b) == "message 2.2 sent in the trace only"
    d = _run(base + [("send", 2, {"id": [2, 1]})])
    assert history.same_run(a, d).startswith("member 2's delivery 1: 1.1 against the trace's none")


def test_the_lockstep_driver_never_crashes_the_last_member_staying():
    c = FlushLockstep(n=2, max_msgs=1, max_crashes=2)
    assert c.can_crash(1) and c.can_crash(2)
    c.crash(1)
    assert not c.can_crash(1)            # crashed already
    assert not c.can_crash(2)            # the last member staying


def test_tlc_printed_values_are_read_past_a_frame_line_between_them():
    """TraceDiagnostic's prints, each up to the next print or frame line, and
    every print after a frame line too (the enabled and broken sets follow
    the state dump)."""
    out = "\n".join(['<< "groupcheck-diag", 3,', '   4 >>', '@!@!@STARTMSG 2217:4 @!@!@', 'State 1:',
                     '<< "groupcheck-broken", {"Agreement"} >>', '@!@!@ENDMSG 2217 @!@!@',
                     '<< "groupcheck-enabled", {} >>'])
    assert tlctrace._printed(out) == [("diag", "3, 4"), ("broken", '{"Agreement"}'), ("enabled", "{}")]


def test_a_sequencer_record_naming_a_member_outside_the_run_is_refused_whatever_the_field():
    """The binding's check: a plain int of 1..N everywhere a member is named
    (nid, params.p, params.c, a view, the lost), else the field is named."""
    b = sequencer.SequencerBinding(Trace("t", {"protocol": "sequencer", "nodes": [1, 2, 3], "constants": {
        "N": 3, "MaxSeq": 2, "MaxCrashes": 1}}, []))
    ok = {"name": "InstallView", "nid": 1, "params": {"c": 1, "view": [1, 2]}}
    assert b.check(ok) is None
    for params, field in (({"c": 1, "view": [1, 9]}, "params.view"), ({"c": 4, "view": [1, 2]}, "params.c"),
                          ({"p": 1, "c": 1, "view": [1, True]}, "params.view"),
                          ({"c": 1, "view": [1, 2], "lost": [0]}, "params.lost")):
        assert b.check({**ok, "params": params}).startswith(field + ":"), params
    assert b.check({"name": "RecvData", "nid": 1, "params": {"p": 5}}).startswith("params.p:")
