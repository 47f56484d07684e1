"""The SEQUENCER model: per-transition behaviour, pinned counts, and the
crash model's counterexample against TLC's."""

import pytest

from groupcheck.model import manifest
from groupcheck.model.core import explore
from groupcheck.model.link import explore_entry
from groupcheck.model.sequencer import (Data, Forward, SequencerModel, SenderFIFO,
                                        TotalOrder)
from groupcheck.model.values import Fn

M3 = SequencerModel({"N": 3, "MaxSeq": 2, "MaxCrashes": 1})


def init():
    (s,) = list(M3.init())
    return s


def step(s, action, *params):
    succ = [t for lab, t in M3.next(s) if lab.action == action and lab.params == params]
    assert len(succ) == 1, (action, params, [str(lab) for lab, _ in M3.next(s)])
    return succ[0]


def test_coordinator_multicasts_its_own_message_directly():
    s = step(init(), "Send", 1)
    assert s.fwd[1] == frozenset()
    assert [s.chan[(1, r)] for r in (1, 2, 3)] == [(Data(1, 1),)] * 3


def test_member_forwards_to_coordinator_and_keeps_forward_table():
    s = step(init(), "Send", 2)
    assert s.fwd[2] == {1}
    assert s.chan[(2, 1)] == (Forward(2, 1),)
    s = step(s, "RecvForward", 1, 2)
    assert s.chan[(2, 1)] == ()
    assert all(s.chan[(1, r)] == (Data(2, 1),) for r in (1, 2, 3))
    s = step(s, "RecvData", 2, 1)
    assert s.fwd[2] == frozenset() and s.delivered[2] == ((2, 1),) and s.recv[2][2] == 1


def test_duplicate_is_discarded_by_received_table():
    s = init()._replace(chan=init().chan.set((1, 3), (Data(2, 1), Data(2, 1))))
    s = step(s, "RecvData", 3, 1)
    s = step(s, "RecvData", 3, 1)
    assert s.delivered[3] == ((2, 1),)


def test_new_coordinator_gets_forward_table_in_seqno_order_and_left_entries_go():
    s = step(init(), "Send", 3)
    s = step(s, "Send", 3)
    # the coordinator crashes and loses what it had received
    s = step(s, "Crash", 1, frozenset())
    assert s.chan[(3, 1)] == ()
    s = step(s, "NewView")
    assert s.views == ((1, 2, 3), (2, 3))
    s = step(s, "InstallView", 3)
    assert s.chan[(3, 2)] == (Forward(3, 1), Forward(3, 2))
    assert set(s.recv[3]) == {2, 3}


def test_not_coordinator_drops_forward():
    s = init()._replace(chan=init().chan.set((3, 2), (Forward(3, 1),)))
    t = step(s, "RecvForward", 2, 3)
    assert t.chan[(3, 2)] == () and all(t.chan[(2, r)] == () for r in (1, 2, 3))


def test_trace_properties_on_histories():
    s = init()
    bad = s._replace(delivered=Fn({1: ((1, 1), (2, 1)), 2: ((2, 1), (1, 1)), 3: ()}))
    assert not TotalOrder(bad) and TotalOrder(s)
    assert not SenderFIFO(s._replace(delivered=s.delivered.set(1, ((2, 2), (2, 1)))))


def _entry(name):
    (e,) = manifest.select(["sequencer"], name)
    return e


@pytest.mark.parametrize("name", ["CoordCrash", "Pair"])
def test_explorer_finds_the_expected_violation_at_tlc_depth(name):
    from groupcheck.model.manifest import check
    entry = _entry(name)
    res = explore_entry(entry)
    assert res.violation is not None and res.violation.invariant == entry.expected
    tlc = check(entry).result
    assert tlc.outcome == "invariant" and tlc.violated == entry.expected
    assert res.violation.depth == len(tlc.counterexample) == tlc.depth
    # the explorer's witness really violates the property in its last state only
    model = SequencerModel(entry.constants())
    states = [st for _, st in res.violation.trace]
    assert all(model.invariants[entry.expected](st) for st in states[:-1])
    assert not model.invariants[entry.expected](states[-1])


@pytest.mark.slow
def test_failure_free_count_is_pinned():
    entry = _entry("FailureFree")
    res = explore(SequencerModel(entry.constants()))
    assert res.violation is None
    assert res.distinct_states == entry.distinct_states
