"""A violation's witness as diagram steps (conformance/audit/diagram.py
``violation_steps``): every witness event is one step, in order, marked as
part of the violation (the report draws those steps as the bad ones)."""

from groupcheck.conformance.audit.diagram import violation_steps
from groupcheck.core.properties import Violation


def test_each_witness_event_is_one_step_in_order_and_each_is_marked_bad():
    v = Violation("TotalOrder", "1.1 and 2.1 delivered in two orders", members=[1, 2],
                  messages=[(1, 1), (2, 1)],
                  events=[{"member": 1, "msg": (1, 1), "index": 3},
                          {"member": 2, "what": "send", "msg": (2, 1), "view": 2},
                          {"member": 2, "what": "crash", "msg": None}])
    steps = violation_steps(v)
    assert [(s.index, s.action, s.actors, s.note) for s in steps] == \
        [(1, "deliver 1.1", [1], "event 3"), (2, "send 2.1", [2], "view 2"), (3, "crash", [2], "")]
    assert all(s.bad for s in steps)


def test_earliest_names_the_witness_where_the_property_first_broke():
    """Member 3 skips 2.1 at position 4, member 2 only at position 9: the
    first witness in member order is member 2's, the first to break is
    member 3's (the one a replay that judges record by record names)."""
    from collections import defaultdict
    from groupcheck.core.properties import CATALOGUE, History, earliest
    h = History(nodes=[1, 2, 3], deliveries=defaultdict(list, {
        2: [((1, 1), 1, 2), ((2, 2), 1, 9)],
        3: [((1, 1), 1, 3), ((2, 2), 1, 4)]}))
    h.sent.update({(1, 1): True, (2, 1): True, (2, 2): True})
    v = CATALOGUE["GapFreeFIFO"].judge(h)
    assert v.members == [2]
    e = earliest(h, v)
    assert e.property == "GapFreeFIFO" and e.members == [3] and e.events[0]["index"] == 4
    assert earliest(h.upto(3), v) is v          # no prefix breaks it: the violation as given


def test_the_pipeline_agrees_with_a_replay_that_names_the_first_broken_witness(tmp_path):
    """A drawn SEQUENCER run (seed 141) whose replay names member 3's
    GapFreeFIFO delivery (the first to break it) where the catalogue's first
    in member order is member 2's: the two checks agree."""
    from groupcheck.conformance.pipeline import stages as P
    P.generate("sequencer", 1, 141, None, tmp_path / "ds", draw=True, engine="local")
    res = P.check(tmp_path / "ds", engine="local", coverage=False, write=False)
    (row,) = res["verdicts"]
    assert row["verdict"] == "documented" and row["properties_failed"][0] == "GapFreeFIFO"
    assert row["reason"].startswith("GapFreeFIFO: member 3 ") and row["agree"] is True
    assert res["disagreements"] == 0
