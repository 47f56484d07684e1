"""A violation's witness as diagram steps (conformance/properties.py
``Violation.steps``): every witness event is one step, in order, marked as
part of the violation (the report draws those steps as the bad ones)."""

from groupcheck.conformance.properties import Violation


def test_each_witness_event_is_one_step_in_order_and_each_is_marked_bad():
    v = Violation("TotalOrder", "1.1 and 2.1 delivered in two orders", members=[1, 2],
                  messages=[(1, 1), (2, 1)],
                  events=[{"member": 1, "msg": (1, 1), "index": 3},
                          {"member": 2, "what": "send", "msg": (2, 1), "view": 2},
                          {"member": 2, "what": "crash", "msg": None}])
    steps = v.steps()
    assert [(s.index, s.action, s.actors, s.note) for s in steps] == \
        [(1, "deliver 1.1", [1], "event 3"), (2, "send 2.1", [2], "view 2"), (3, "crash", [2], "")]
    assert all(s.bad for s in steps)
