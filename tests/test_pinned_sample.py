"""Decisions of the checkers, the drivers and the runtime that a sample of
mutants (bench/mutants.py, docs/mutants.md) showed no test pinned: each
test here fails with the mutant it is named for applied."""

from __future__ import annotations

import pytest

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
    # a member with views in one run only (member 2 installed none in the trace)
    e = _run(base[:1] + base[2:] + [("send", 2, {"id": [2, 1]}), ("deliver", 2, {"id": [1, 1]})])
    assert history.same_run(a, e) == "member 2's views [(1, [1, 2])] against the trace's []"
    assert history.same_run(e, a) == "member 2's views [] against the trace's [(1, [1, 2])]"


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


def test_a_quiescent_claim_with_a_crash_not_acted_on_names_the_crashed_member_of_the_last_view():
    from groupcheck.conformance.replay.flush import flush_quiescent
    from groupcheck.model.flush import FlushModel
    model = FlushModel({"N": 3, "NInit": 3, "MaxMsgs": 1, "MaxCrashes": 1, "MaxLeaves": 0,
                        "ReconcileDigests": True})
    (s,) = model.init()
    assert flush_quiescent(model, s) is None
    (t,) = model.Crash(s, 3)
    assert flush_quiescent(model, t) == ("Quiescent", "a view change is pending (members [3] of view 1 crashed, "
                                                      "leave or join) and no flush ran for it")


class _Handle:
    def __init__(self):
        self.cancelled = 0

    def cancel(self):
        self.cancelled += 1
        assert self.cancelled == 1, "a timer handle cancelled twice"


class _Loop:
    def call_later(self, delay, fn, *args):
        return _Handle()


def test_a_node_rearming_a_timer_cancels_the_earlier_one_once_and_no_other():
    from types import SimpleNamespace
    from groupcheck.impl.runtime import Node
    node = object.__new__(Node)
    node.timers, node.due, node._tokens, node.loop, node.cfg = {}, {}, 0, _Loop(), SimpleNamespace(start=0.0)
    assert node.schedule(5.0, 1, "t") == 1
    first = node.timers["t"]
    assert node.schedule(6.0, 1, "u") == 2 and first.cancelled == 0       # another timer's arming
    assert node.schedule(7.0, 1, "t") == 3
    assert first.cancelled == 1 and node.timers["t"] is not first and node.timers["t"].cancelled == 0
    assert node.due == {"t": 7.0, "u": 6.0}


def test_a_digest_whose_run_count_exceeds_the_datagram_is_refused_before_reading_a_run():
    import struct
    import pytest
    from groupcheck.impl import codec
    from groupcheck.impl.flush import ViewMsg
    from groupcheck.impl.stacks import flush as fstack
    m = ViewMsg(3, (1, 2), ((1, 1, None), (1, 2, None), (2, 1, b"x")), 0)
    buf = fstack._enc_view(m)
    assert fstack._dec_view(buf) == m
    at = 4 + 4 + 2 + 2 * 2                                   # view, ring, member count, members
    for forged in (buf[:at] + struct.pack(">I", 1000) + buf[at + 4:],     # a count of 1,000 runs
                   buf[:at] + struct.pack(">I", 1)):                      # one run, none of its bytes
        with pytest.raises(codec.DecodeError, match="^truncated runs$"):
            fstack._dec_view(forged)


def test_an_invariant_a_step_cannot_change_is_inherited_not_evaluated_again():
    """``note_invariants`` with ``same``: a candidate reached by a step that
    leaves the property alone takes its predecessor's value (one evaluation
    per run, not per step); a step that may change it is evaluated; an
    inherited failure is noted all the same."""
    from groupcheck.conformance.replay.engine import Binding
    b = object.__new__(Binding)
    b.found, b._held, b.reduced = {}, {}, []
    calls = []

    def inv(t):
        calls.append(t)
        return t["ok"]
    s0, t1, t2, t3 = {"ok": True}, {"ok": True}, {"ok": True}, {"ok": False}
    leaves_alone = {"P": lambda s, t: t is not t3}
    b.note_invariants({"i": 1}, [t1], ["P"], {"P": inv}, pairs=[(s0, t1)], same=leaves_alone)
    b.note_invariants({"i": 2}, [t2], ["P"], {"P": inv}, pairs=[(t1, t2)], same=leaves_alone)
    assert calls == [t1] and not b.found                       # t2 inherited t1's value
    b.note_invariants({"i": 3}, [t3], ["P"], {"P": inv}, pairs=[(t2, t3)], same=leaves_alone)
    assert calls == [t1, t3] and b.found["P"][0] == 3


def test_spark_progress_stops_polling_once_the_context_is_gone():
    """The progress thread's first failing look at the tracker (the context
    stopping under it) ends it: no busy loop of failing polls."""
    import io
    import threading
    from types import SimpleNamespace
    from groupcheck.conformance.pipeline import spark as spark_mod

    class Gone:
        def __init__(self):
            self.calls, self.failed, self.hit = 0, 0, threading.Event()

        def getJobIdsForGroup(self):
            self.calls += 1
            if self.calls == 1:             # the block's start: the jobs before it
                return []
            self.failed += 1
            self.hit.set()
            if self.failed > 3:
                raise SystemExit            # ends a thread that would poll on
            raise RuntimeError("SparkContext has been stopped")
    tracker = Gone()
    spark = SimpleNamespace(sparkContext=SimpleNamespace(statusTracker=lambda: tracker))
    with spark_mod.progress(spark, "check", stream=io.StringIO(), after=0):
        tracker.hit.wait()
    assert tracker.failed == 1


@pytest.mark.parametrize("constrained", [False, True])
def test_an_exploration_counts_a_state_reached_again_once_the_initial_state_too(constrained):
    """model/core.py ``_explore``: a successor already numbered (here the
    initial state, number 0) is an edge, never a new state, with a
    CONSTRAINT (its own path: only a new state is checked against it) or
    without."""
    from typing import NamedTuple
    from groupcheck.model.core import Label, Model, explore

    class S(NamedTuple):
        x: int

    class Ring(Model):
        protocol, variables = "toy", ("x",)

        def init(self):
            yield S(0)

        def next(self, s):
            yield Label("Inc"), S((s.x + 1) % 3)

    class Bounded(Ring):
        def constraint(self, s):
            return s.x < 5
    res = explore((Bounded if constrained else Ring)({}), check_invariants=False, build_graph=True)
    assert res.complete and res.distinct_states == 3 and res.states_generated == 4
    assert sorted(res.edge_map) == [(0, 1), (1, 2), (2, 0)]


def test_the_replay_keeps_up_to_visited_max_distinct_states_for_coverage_and_no_more(monkeypatch):
    from groupcheck.conformance.replay import engine
    monkeypatch.setattr(engine, "VISITED_MAX", 3)
    e = object.__new__(engine.ReplayEngine)
    e.seen = set()
    e._saw(["a", "b"])
    e._saw(["b", "c"])
    assert e.seen == {"a", "b", "c"}            # exactly the bound: kept
    e._saw(["d"])
    assert e.seen is None                       # past it: coverage unknown


def test_a_link_difference_in_json_is_a_state_object_only_when_every_item_is_a_variable_pair():
    from groupcheck.model.link import _jsonable
    state = (("x", 1), ("y", frozenset({2})))
    assert _jsonable(state) == {"x": 1, "y": [2]}
    assert _jsonable([state, state]) == [{"x": 1, "y": [2]}] * 2
    mixed = (("x", 1), 7)                      # one item no (variable, value) pair: a list, not a state
    assert _jsonable(mixed) == [["x", 1], 7]
    assert _jsonable({"edge": (state, "Send(1)")}) == {"edge": [{"x": 1, "y": [2]}, "Send(1)"]}


def test_a_sequencer_over_flush_receipt_matches_only_the_head_of_a_nonempty_channel():
    """``_head_ok``: an empty channel has no head to take (no step, never
    an IndexError); a FORWARD head matches by its sender and seqno, any
    head by its type first."""
    from types import SimpleNamespace
    from groupcheck.conformance.replay import sequencerflush as csf
    b = object.__new__(csf.SequencerFlushBinding)
    fwd = {"type": "FORWARD", "sender": 2, "seqno": 1}
    s = SimpleNamespace(chan={(1, 2): (), (2, 1): (fwd,)})
    assert b._head_ok(s, 1, 2, None, False) is False
    assert b._head_ok(s, 1, 2, fwd, False) is False
    assert b._head_ok(s, 2, 1, None, False) is True
    assert b._head_ok(s, 2, 1, {"type": "FORWARD", "sender": 2, "seqno": 1}, False) is True
    assert b._head_ok(s, 2, 1, {"type": "FORWARD", "sender": 2, "seqno": 2}, False) is False
    assert b._head_ok(s, 2, 1, {"type": "DATA", "sender": 2, "seqno": 1}, False) is False


def test_the_trace_writer_refuses_records_that_do_not_start_with_a_header():
    import pytest
    from groupcheck.core.trace import writer
    head = {"kind": "header", "protocol": "sequencer", "nodes": [1, 2], "seed": 0, "faults": {}, "impl": "x"}
    ev = {"kind": "event", "name": "Send", "nid": 1, "params": {}, "state": {}, "clock": 0.0}
    assert writer.to_v2([head, ev], {"N": 2}, "r")[0]["kind"] == "header"
    for first in (ev, {"kind": "end"}, {"kind": "zzz"}, {}):
        with pytest.raises(ValueError, match="first record is not a header"):
            writer.to_v2([first, ev], {"N": 2}, "r")


def test_a_ring_run_summary_counts_its_event_records():
    from groupcheck.conformance.replay import raincoreflush as crf
    v2, line = crf.simulate(1, "", {"nodes": 3, "ring": 3, "messages": 1})
    assert v2[0]["kind"] == "header" and v2[-1]["kind"] == "end"
    assert line["events"] == sum(r["kind"] == "event" for r in v2) == len(v2) - 2


def _msg(code: int, severity: int, text: str) -> str:
    return f"@!@!@STARTMSG {code}:{severity} @!@!@\n{text}\n@!@!@ENDMSG {code} @!@!@\n"


def test_a_parse_error_is_located_among_other_errors_too():
    """model/tlc.py: SANY's location is read when any error says parsing
    failed, not only when every one does."""
    from groupcheck.model.tlc import parse_tool_output
    sany = ("Parsing file /x/Bad.tla\n***Parse Error***\nEncountered \"====\" at line 6, column 1 and token \"1\" \n\n"
            "Fatal errors while parsing TLA+ spec in file Bad\n\nIn module Bad\n\nCould not parse module Bad from "
            "file Bad.tla\n\n")
    out = _msg(2220, 0, "Starting SANY...") + sany + _msg(2219, 0, "SANY finished.")
    alone = parse_tool_output(out + _msg(3002, 1, "Parsing or semantic analysis failed."))
    assert alone.outcome == "error" and tuple(alone.error_location) == ("Bad", 6, 1)
    both = parse_tool_output(out + _msg(3002, 1, "Parsing or semantic analysis failed.")
                             + _msg(1000, 1, "Another error."))
    assert both.outcome == "error" and tuple(both.error_location) == ("Bad", 6, 1)


def test_the_ring_flush_simulator_refuses_a_plan_with_a_fault_it_does_not_model():
    """A leave or a recovery handed to FLUSH over the ring's simulator
    directly (not through the CLI's parse) is refused, not ignored."""
    import pytest
    from groupcheck.impl.faults import FaultPlan
    from groupcheck.impl.sim_raincoreflush import RingFlushConfig, simulate_ring_flush
    for plan, item in ((FaultPlan(leaves=((2, 0.1),)), "leave"), (FaultPlan(recoveries=((2, 0.3),)), "recover")):
        with pytest.raises(ValueError, match=f"^{item}: FLUSH over the ring has no such fault"):
            simulate_ring_flush(RingFlushConfig(), 0, plan)


def test_traces_check_points_a_folder_without_trace_files_to_generate_not_to_conform(tmp_path):
    from typer.testing import CliRunner
    from groupcheck.cli.main import app
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    (tmp_path / "empty" / "sub" / "notes.txt").write_text("x")
    r = CliRunner().invoke(app, ["traces", "check", str(tmp_path / "empty")])
    assert r.exit_code == 2 and "not a pipeline dataset" in r.output
    assert "traces generate or ingest" in r.output and "groupcheck conform" not in r.output


def test_a_history_line_is_utf8_or_not():
    from groupcheck.core.trace.history import is_utf8
    assert is_utf8(b'{"kind": "end"}\n') and is_utf8("é".encode())
    assert not is_utf8(b'{"kind": "\xff"}\n')


def test_an_initial_state_that_breaks_an_invariant_is_a_violation_named_by_it_with_a_one_state_trace():
    from typing import NamedTuple
    from groupcheck.model.core import Model, explore

    class S(NamedTuple):
        x: int

    class Broken(Model):
        protocol, variables = "toy", ("x",)

        @property
        def invariants(self):
            return {"Positive": lambda s: s.x > 0}

        def init(self):
            yield S(0)

        def next(self, s):
            return iter(())
    res = explore(Broken({}))
    assert res.violation.invariant == "Positive" and [st for _, st in res.violation.trace] == [S(0)]


def test_a_growset_minus_another_is_the_set_difference_whether_or_not_they_share_a_lineage():
    from groupcheck.model.values import GrowSet
    a = GrowSet([1, 2])
    b = a | {3}                                 # a later version of a's lineage
    c = b | {4, 5}
    assert c - a == frozenset({3, 4, 5}) and c - b == frozenset({4, 5}) and a - c == frozenset()
    other = GrowSet([9, 1])                     # another lineage, a common element
    assert c - other == frozenset({2, 3, 4, 5}) and other - c == frozenset({9})
    assert GrowSet([3]) - GrowSet([7]) == frozenset({3})


def test_the_audits_flush_draw_crashes_in_four_plans_of_five_and_twice_in_two():
    """conformance/replay/flush.py ``draw``: plans none, coordinator, other,
    two, two drawn alike, so about 4/5 of the runs crash a member and 2/5
    crash two (300 seeds: 241 and 120)."""
    import re
    from groupcheck.conformance.replay import flush as cf
    crashes = [len(re.findall(r"crash=", cf.draw(seed)[0])) for seed in range(300)]
    assert 0.72 < sum(k > 0 for k in crashes) / 300 < 0.88
    assert 0.32 < sum(k == 2 for k in crashes) / 300 < 0.48


def test_flush_over_the_ring_never_crashes_the_last_member_of_the_latest_view():
    """model/raincoreflush.py ``CanCrash``: a member must stay in the latest
    view (not in the first: the one that view 2 left alone may not crash)."""
    from groupcheck.model import manifest
    from groupcheck.model.link import build_model
    (entry,) = manifest.select(["raincoreflush"], "CoordCrash")
    m = build_model(entry)
    m.Crashable, m.MaxCrashes = frozenset({1, 2, 3}), 2
    (s,) = m.init()
    assert m.CanCrash(s, 3)
    alone = s._replace(views=(frozenset({1, 2, 3}), frozenset({3})), vid=(1, 1, 2))
    assert m.IsMember(alone, 3) and not m.Eating(alone, 3)
    assert not m.CanCrash(alone, 3)


def test_the_three_layer_model_takes_no_crash_its_guard_refuses():
    """model/raincoresequencerflush.py ``Crash``: None where CanCrash is
    false (a node not crashable, past the crash budget), as the replay asks
    it of a logged Crash record."""
    from groupcheck.model import manifest
    from groupcheck.model.link import build_model
    entry = manifest.select(["raincoresequencerflush"], None)[0]
    m = build_model(entry)
    (s,) = m.init()
    refused = [n for n in m.Members if not m.CanCrash(s, n)]
    assert refused, "every node may crash at the start of this model"
    for n in refused:
        assert m.Crash(s, n, frozenset()) is None


def test_a_tlc_runtime_error_is_located_at_the_innermost_position_of_the_last_nested_block():
    from groupcheck.model.tlc import _runtime_location
    nested = ["0. Line 3, column 1 to line 3, column 9 in Outer\n1. Line 4, column 2 to line 4, column 8 in Outer",
              "0. Line 10, column 5 to line 10, column 20 in Spec\n1. Line 11, column 7 to line 11, column 9 in Spec\n"
              "2. Line 12, column 3 to line 12, column 4 in Inner"]
    loc = _runtime_location(nested, None)
    assert (loc.module, loc.line, loc.column) == ("Inner", 12, 3)
    assert _runtime_location([], None) is None


def test_a_runs_lines_set_apart_what_no_finding_covers_only_beside_what_one_does():
    from groupcheck.cli.findings import run_lines
    bare = {"property": "Agreement", "witness": "w1", "event": 4, "finding": None}
    known = {"property": "SenderFIFO", "witness": "w2", "event": None, "finding": "JGRP-1449"}
    assert run_lines({"violations": [bare]}) == ["Agreement: w1 (event 4)"]
    assert run_lines({"violations": [known]}) == ["documented finding JGRP-1449: SenderFIFO: w2"]
    assert run_lines({"violations": [bare, known]}) == ["not covered by a finding: Agreement: w1 (event 4)",
                                                        "documented finding JGRP-1449: SenderFIFO: w2"]
    assert run_lines({"violations": [], "reason": "why"}) == ["why"]


def test_a_stable_encodings_first_view_is_its_first_ninit_members():
    from groupcheck.model.proofs.stable import StableEncoding
    assert StableEncoding(3, 2).V0 == frozenset({1, 2}) and StableEncoding(4, 4).V0 == frozenset({1, 2, 3, 4})


def test_a_variant_sharded_over_spare_cores_gets_every_shard_once():
    """model/proofs/registry.py ``_shard_keys``: shards 0..n-1 of n for each
    variant (a shard left out would leave its lemmas' queries unasked); a
    variant expected to give a CTI is not sharded."""
    from types import SimpleNamespace as NS
    from groupcheck.model.proofs.registry import _shard_keys
    a = NS(protocol="p", variant="A", lemmas=dict.fromkeys("abcde"), expect_cti=False, shards_per_core=2)
    b = NS(protocol="p", variant="B", lemmas=dict.fromkeys("ab"), expect_cti=False)
    c = NS(protocol="p", variant="C", lemmas=dict.fromkeys("abc"), expect_cti=True)
    keys, owner = _shard_keys([a, b, c], jobs=6, rlimit=None, members=None)     # two spare cores each
    got = {}
    for key, i in zip(keys, owner):
        got.setdefault(key[1], []).append((key[4], key[5], i))
    assert got == {"A": [(0, 4, 0), (1, 4, 0), (2, 4, 0), (3, 4, 0)], "B": [(0, 2, 1), (1, 2, 1)], "C": [(0, 1, 2)]}


def test_the_jgroups_flush_trace_keeps_notes_apart_and_merges_the_members_steps_by_stamp(tmp_path):
    """``write_flush_trace``: a note (a JGroups step that is no spec action)
    goes to notes.json, every other step into the trace in stamp order with
    the kills as Crash records, a clock from the first stamp."""
    import json
    from groupcheck.conformance.jgroups.adapter import write_flush_trace
    steps = {1: [{"ts": 1_000_000, "name": "Multicast", "nid": 1, "state": {}},
                 {"ts": 1_500_000, "note": "view handler", "nid": 1},
                 {"ts": 3_000_000, "name": "Deliver", "nid": 1, "state": {}}],
             2: [{"ts": 2_000_000, "name": "Deliver", "nid": 2, "state": {}}]}
    for k, rs in steps.items():
        (tmp_path / f"node-{k}.steps").write_text("".join(json.dumps(r) + "\n" for r in rs))
    (tmp_path / "traces").mkdir()
    path = write_flush_trace(tmp_path, "jg", 2, {2: 2.5}, True)
    recs = [json.loads(x) for x in path.read_text().splitlines()]
    events = [r for r in recs if r["kind"] == "event"]
    assert [(e["name"], e["nid"], e["clock"]) for e in events] == [
        ("Multicast", 1, 0.0), ("Deliver", 2, 1.0), ("Crash", 2, 1.5), ("Deliver", 1, 2.0)]
    assert recs[0]["constants"]["MaxMsgs"] == 1 and recs[-1] == {"kind": "end", "quiescent": True, "clock": 2.0}
    assert json.loads((tmp_path / "notes.json").read_text()) == [{"note": "view handler", "nid": 1, "clock": 0.5}]


def test_effects_and_events_are_values_hashable_and_immutable():
    import dataclasses
    import pytest
    from groupcheck.impl import events
    classes = [c for c in vars(events).values() if dataclasses.is_dataclass(c) and isinstance(c, type)
               and c.__module__ == events.__name__]
    assert events.Multicast in classes and len(classes) > 5
    for cls in classes:
        assert cls.__dataclass_params__.frozen, cls.__name__
    m = events.Multicast("x")
    assert hash(m) == hash(events.Multicast("x")) and {m, events.Multicast("x")} == {m}
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.msg = "y"


def test_a_coverage_row_gives_the_share_of_actions_reached_in_percent():
    from groupcheck.conformance.audit.report import coverage_rows
    (row,) = coverage_rows({"flush": {"actions_reached": 3, "actions_total": 4, "action_share": 0.75}})
    assert row["actions"] == "3 of 4 (75%)"
    (row,) = coverage_rows({"flush": {"actions_reached": 3, "actions_total": None}})
    assert row["actions"].startswith("3 of ") and "%" not in row["actions"]


def test_a_loss_is_held_against_every_crashed_coordinator_but_the_sender_itself():
    """SEQUENCER's ``held`` (the loss finding's witness): a message whose
    sender was itself a crashed coordinator is judged against the other
    crashed coordinators, not given up at the first."""
    from groupcheck.conformance.replay.sequencer import _Run
    r = object.__new__(_Run)
    r.dropped, r.sent_at = {}, {(2, 1): 3}
    r.crashed_coords = [(5, 2), (9, 1)]             # (event, coordinator): member 2 first, then member 1
    r.installs, r.views = {2: [(7, 2)]}, {2: [2, 3]}
    assert r.held((2, 1)) == ("2.1 was sent at event 3, before its sender 2 installed a view without "
                              "coordinator 1 (crashed at event 9), at event 7")
    r.sent_at = {(2, 1): 8}
    assert r.held((2, 1)) is None                   # sent after it left coordinator 1 behind


def test_a_stable_run_summary_counts_its_event_records():
    from groupcheck.conformance.replay import stable as cst
    v2, line = cst.simulate(1, "", {"nodes": 3, "messages": 2})
    assert line["events"] == sum(r["kind"] == "event" for r in v2) == len(v2) - 2


def test_a_message_type_is_free_text_when_any_member_of_its_union_is():
    from typing import Literal, Optional, Union
    from groupcheck.core.trace.decode import _free
    assert _free(str) and _free(Optional[str]) and _free(Union[Literal["A"], str])
    assert not _free(Optional[int]) and not _free(Literal["A", "B"]) and not _free(list[Literal["A"]])
    assert _free(dict[str, int]) and _free(list[Union[int, str]])
    from typing import TypedDict
    mixed = TypedDict("Mixed", {"n": int, "text": str})
    closed = TypedDict("Closed", {"n": int, "kind": Literal["A"]})
    assert _free(mixed) and not _free(closed)


def test_a_variants_pinned_rlimit_applies_at_its_own_n_only():
    """model/proofs/registry.py: a variant's rlimit (one number) was
    measured at its default N; asked at another N it runs under the
    encoding's default."""
    from groupcheck.model.proofs import registry
    (fixed,) = registry.select("flush", "Fixed")
    (four,) = registry.select("flush", "Fixed", members=4)
    assert fixed.N == 3 and fixed.rlimit == 12_000_000
    assert four.N == 4 and four.rlimit != 12_000_000 and four.rlimit == type(four).rlimit


def test_a_reliable_layer_is_idle_only_with_nothing_unacknowledged_to_any_peer():
    from groupcheck.impl.reliable import Reliable
    r = Reliable(1, (1, 2, 3))
    assert r.idle()
    r.unacked = {2: [], 3: ["frame"]}
    assert not r.idle()
    r.unacked = {2: [], 3: []}
    assert r.idle()


def test_the_proofs_survivor_total_order_compares_live_members_only():
    from types import SimpleNamespace as NS
    from groupcheck.model.proofs.sequencer.relation import SurvivorTotalOrder
    assert SurvivorTotalOrder(NS(delivered={1: [1, 2], 2: [1, 2], 3: [2, 1]}, crashed={3}))
    assert not SurvivorTotalOrder(NS(delivered={1: [1, 2], 2: [2, 1], 3: [1]}, crashed=set()))
    assert not SurvivorTotalOrder(NS(delivered={1: [1], 2: [1, 2], 3: [2, 1]}, crashed={1}))


def test_a_summary_value_of_up_to_80_characters_is_shown_whole():
    from groupcheck.cli.main import _brief
    assert _brief("x" * 80) == "x" * 80
    assert _brief("x" * 81) == "x" * 77 + "..."
    assert _brief(list(range(40))) == "40 items (--json lists them)"


def test_an_integer_tlc_cannot_hold_is_named_wherever_it_is():
    from groupcheck.conformance.tlctrace import _beyond_tlc
    from groupcheck.core.trace.reader import Trace
    ok = {"name": "Send", "nid": 1, "params": {"p": 1}, "i": 1}
    big = {"name": "Send", "nid": 1, "params": {"p": [1, 2 ** 40]}, "i": 2}
    assert _beyond_tlc(Trace("t", {"constants": {"N": 2}}, [ok])) is None
    assert _beyond_tlc(Trace("t", {"constants": {"N": 2}}, [ok, big])) == f"event 2: params.p[1]: {2 ** 40}"
    assert _beyond_tlc(Trace("t", {"constants": {"N": -2 ** 40}}, [ok])) == f"t:1: constants.N: {-2 ** 40}"


def test_a_parquet_part_is_closed_once_it_holds_exactly_part_rows(monkeypatch, tmp_path):
    import pyarrow.parquet as pq
    from groupcheck.conformance.pipeline import dataset

    class Writer:
        def __init__(self, *args):
            self.closed = False

        def close(self):
            self.closed = True

    def flush(self, f):
        f[2] += len(f[3])
        f[3] = []
    monkeypatch.setattr(pq, "ParquetWriter", Writer)
    monkeypatch.setattr(dataset, "PART_ROWS", 4)
    monkeypatch.setattr(dataset, "_part_schema", lambda: None)
    monkeypatch.setattr(dataset._PartWriter, "_flush", flush)
    w = dataset._PartWriter(tmp_path, "gen")
    runs = [{} for _ in range(3)]
    for r in runs:
        w.add(r, [{"protocol": "p"}] * 2)
    assert [(r["part"], r["part_row"]) for r in runs] == [
        ("protocol=p/gen-000.parquet", 0), ("protocol=p/gen-000.parquet", 2), ("protocol=p/gen-001.parquet", 0)]


def test_a_cluster_process_is_alive_until_it_is_gone():
    import os
    import subprocess
    import sys
    from groupcheck.cli.cluster import _alive
    assert _alive(os.getpid())
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    assert not _alive(p.pid)


def test_a_false_suspicion_reports_a_live_crashable_node_unreachable_and_a_down_one_always():
    from groupcheck.model import manifest
    from groupcheck.model.link import build_model
    (entry,) = manifest.select(["raincoreflush"], "Suspect")
    m = build_model(entry)
    assert m.FalseSuspicion
    (s,) = m.init()
    live = [d for d in m.Members if m.Alive(s, d)]
    assert [d for d in live if m.Unreachable(s, d)] == sorted(d for d in live if d in m.Crashable)
    down = s._replace(status=tuple("Down" if i == 0 else x for i, x in enumerate(s.status)))
    assert m.Unreachable(down, 1)
    m.FalseSuspicion = False
    assert not any(m.Unreachable(s, d) for d in live) and m.Unreachable(down, 1)


def test_a_cluster_result_prints_tlcs_verdict_once_and_exits_1_when_it_disagrees(tmp_path, capsys):
    import pytest
    import typer
    from groupcheck.cli.cluster import _report
    from groupcheck.cli.findings import Gate
    r = {"run_id": "r", "ok": True, "quiescent": True, "verdict": "ok", "reason": None, "killed": [],
         "delivered": {"1": 3}, "seconds": 1.0, "history": [], "violations": [],
         "tlc": {"ok": True, "agree": False, "first_unmatched": None, "events": 12, "seconds": 0.5,
                 "explain": "state 3: x differs"}}
    with pytest.raises(typer.Exit) as e:
        _report(r, "sequencer", tmp_path, False, Gate())
    out = capsys.readouterr().out
    assert e.value.exit_code == 1
    assert out.count("  tlc: accepts (12 events, 0.5 s); TOOL FAILURE: TLC and the model replay disagree") == 1
    assert out.count("    state 3: x differs") == 1


def test_each_record_knows_its_members_next_record():
    from groupcheck.conformance.replay.sequencerflush import _next_of_member
    evs = [{"nid": 1}, {"nid": 2}, {"nid": 1}, {"nid": 3}, {"nid": 2}]
    assert _next_of_member(evs) == [2, 4, None, None, None]
    assert _next_of_member([]) == []


def test_runs_of_a_dataset_without_part_columns_are_not_sliced():
    from groupcheck.conformance.pipeline.stages import _slices
    runs = {("f", "a"): {"events": 3, "part": "p0", "part_row": 0}, ("f", "b"): {"events": 2, "part": None}}
    assert _slices(runs, 2) is None
    assert _slices({k: v for k, v in runs.items() if v["part"]}, 2) is not None


def test_a_json_object_becomes_a_function_of_members_only_when_every_key_is_a_number():
    from groupcheck.conformance.tlctrace import _value
    from groupcheck.model.values import Fn
    assert _value({"1": [], "2": [3]}, None, frozenset()) == Fn({1: (), 2: (3,)})
    assert _value({"1": 1, "type": "DATA"}, None, frozenset()) == Fn({"1": 1, "type": "DATA"})
    assert _value({}, None, frozenset()) == Fn({})


def test_a_settled_ring_end_holds_when_any_consistent_state_agrees():
    """Raincore's ``at_settled``: the run ends well if some candidate state
    is Agreed (the run is consistent with it); a violation only when none is."""
    from groupcheck.conformance.replay.raincore import RaincoreBinding
    from groupcheck.model import manifest
    from groupcheck.model.link import build_model
    m = build_model(manifest.select(["raincore"], "Faithful3")[0])
    (agreed,) = m.init()
    apart = agreed._replace(status=("Down",) + agreed.status[1:])    # node 1 down, still in every view
    assert m.Agreed(agreed) and not m.Agreed(apart)
    b = object.__new__(RaincoreBinding)
    b.model = m
    assert b.at_settled({agreed, apart}) is None
    assert b.at_settled({apart})[0] == "Agreed"


def test_explore_with_processes_reports_the_serial_count_and_its_time(capsys):
    import json
    from groupcheck.cli.main import _explore_processes
    from groupcheck.model import manifest
    from groupcheck.model.core import explore
    from groupcheck.model.link import build_model
    (entry,) = manifest.select(["stable"], "Pair")
    _explore_processes([entry], 2, True)
    (row,) = json.loads(capsys.readouterr().out)
    serial = explore(build_model(entry), check_invariants=False)
    assert row["processes"] == 2 and row["distinct_states"] == serial.distinct_states
    assert isinstance(row["seconds"], float) and row["seconds"] >= 0


def test_a_run_is_incomplete_when_it_took_none_of_the_protocols_work_actions():
    from groupcheck.conformance.replay.engine import gaps
    from groupcheck.core.trace.reader import Trace
    end = {"kind": "end", "quiescent": True}
    evs = [{"name": "Join", "nid": 1}, {"name": "Deliver", "nid": 2}]
    idle = Trace("t", {"nodes": [1, 2]}, evs, end=end)
    assert gaps(idle, ("Multicast",)) == ["no Multicast step: the run exercised nothing the protocol promises"]
    busy = Trace("t", {"nodes": [1, 2]}, evs + [{"name": "Multicast", "nid": 1}], end=end)
    assert gaps(busy, ("Multicast",)) == [] and gaps(idle, ()) == []
    assert gaps(Trace("t", {"nodes": [1, 2]}, [], end=end), ("Multicast",)) == ["no events: nothing was checked"]


def test_spec_states_that_are_not_all_records_are_shown_whole():
    from groupcheck.conformance.tlctrace import state_lines
    rec, other = "[ a |-> 1, b |-> 2 ]", "<<1, 2>>"
    assert state_lines([rec, other], None, every=True) == ["  " + rec, "  " + other]
    assert not state_lines([rec, rec], None, every=True)[0].startswith("  [")


def test_a_stable_vector_is_typed_only_when_every_entry_is_a_sequence_number():
    from groupcheck.model import manifest
    from groupcheck.model.link import build_model
    from groupcheck.model.values import Fn
    m = build_model(manifest.select(["stable"], "Pair")[0])
    (s,) = m.init()
    assert m.TypeOK(s)
    field = next(f for f in s._fields if isinstance(getattr(s, f), Fn)
                 and all(isinstance(v, Fn) and set(v) == set(m.Members) for v in getattr(s, f).values()))
    bad = Fn({p: Fn({q: (m.MaxSeq + 1 if q == 1 else 0) for q in m.Members}) for p in m.Members})
    assert not m.TypeOK(s._replace(**{field: bad}))


def test_a_run_of_exactly_max_rows_steps_is_drawn_whole():
    from types import SimpleNamespace as NS
    from groupcheck.conformance.audit.diagram import cut
    steps = [NS(index=k, bad=(k == 2)) for k in range(5)]
    assert cut(steps, max_rows=5) is steps
    assert cut(steps[:4], max_rows=5) == steps[:4]


def test_a_constant_whose_value_is_a_keyword_has_no_value_and_an_identifier_value_is_taken():
    import pytest
    from groupcheck.model.tlc_cfg import parse_cfg
    with pytest.raises(Exception, match="constant N has no value after '='"):
        parse_cfg("CONSTANT N =\nINVARIANT Inv\n")
    cfg = parse_cfg("CONSTANT N = 3\nCONSTANT Nodes = Other\n")
    assert cfg.constants["N"] == 3


def test_a_state_only_the_model_has_is_named_even_when_it_is_the_first_one_tlc_lacks():
    from groupcheck.model.tlc_dot import StateGraph, compare_graphs
    a, b, c = (("x", 0),), (("x", 1),), (("x", 2),)
    tlc = StateGraph([a, b], {(0, 1): {"Inc"}}, {0})
    model = StateGraph([a, b, c], {(0, 1): {"Inc"}, (1, 2): {"Inc"}}, {0})
    equal, diff = compare_graphs(model, tlc)
    assert not equal and diff["kind"] == "state" and diff["side"] == "model" and diff["state"] == c
    assert compare_graphs(tlc, StateGraph([a, b], {(0, 1): {"Inc"}}, {0})) == (True, None)


def test_the_two_token_witness_reads_only_the_events_up_to_the_violation():
    from groupcheck.conformance.replay.raincore import _witness_regenerated
    from groupcheck.core.trace.reader import Trace
    evs = [{"i": 1, "name": "Send", "nid": 1}, {"i": 2, "name": "Crash", "nid": 2},
           {"i": 3, "name": "911Received", "nid": 3, "state": {"tokenState": "Eating"}}]
    t = Trace("t", {"nodes": [1, 2, 3]}, evs)
    assert _witness_regenerated(t, "AtMostOneToken", "two tokens", at=3).startswith(
        "two tokens, after node 2 crashed (event 2) and node 3 regenerated the token on a 911 claim (event 3)")
    assert _witness_regenerated(t, "AtMostOneToken", "two tokens", at=2) is None


def test_the_compiled_validator_reads_every_keyword_after_a_then_or_else():
    import jsonschema
    from groupcheck.core.trace.validate import compile_schema
    schema = {"type": "object", "then": {"required": ["b"]}, "if": {"required": ["a"]},
              "else": {"required": ["c"]}, "required": ["x"], "properties": {"x": {"type": "integer"}}}
    ok = compile_schema(schema)
    for rec in ({"x": 1, "a": 1, "b": 2}, {"x": 1, "c": 3}, {"a": 1, "b": 2}, {"x": "1", "c": 3}, {"x": 1, "a": 1}):
        assert bool(ok(rec)) == jsonschema.Draft202012Validator(schema).is_valid(rec), rec


def test_the_audits_coverage_figures_count_the_actions_reached_among_the_protocols():
    from groupcheck.conformance.audit.stages import coverage_figures
    cov = {"actions_seen": ["Send", "Crash", "Unknown"], "actions": ["Send", "Crash", "Join"], "actions_share": 2 / 3,
           "states": [{"reachable": 10, "visited": 4, "share": 0.4, "runs": 3},
                      {"reachable": 5, "visited": 5, "share": 1.0, "runs": 2, "explored": False}]}
    f = coverage_figures(cov)
    assert (f["actions_reached"], f["actions_total"]) == (2, 3)
    assert (f["states_reached"], f["states_reachable"], f["state_share"]) == (4, 10, 0.4)
    assert f["state_share_constant_sets"] == "1 of 2" and f["why_no_share"] is None
    assert coverage_figures({}) == {}


def test_a_cluster_result_says_where_tlc_rejected_the_trace(tmp_path, capsys):
    import pytest
    import typer
    from groupcheck.cli.cluster import _report
    from groupcheck.cli.findings import Gate
    r = {"run_id": "r", "ok": False, "quiescent": True, "verdict": "nonconforming", "reason": "event 7",
         "killed": [], "delivered": {"1": 3}, "seconds": 1.0, "history": [], "violations": [],
         "tlc": {"ok": False, "agree": True, "first_unmatched": 7, "events": 12, "seconds": 0.5}}
    with pytest.raises(typer.Exit) as e:
        _report(r, "sequencer", tmp_path, False, Gate())
    assert e.value.exit_code == 1 and "  tlc: rejects at event 7 (12 events, 0.5 s)" in capsys.readouterr().out
