"""The SEQUENCER model: per-transition behaviour, pinned counts, and the
crash model's counterexample against TLC's."""

import pytest

from groupcheck.model import manifest
from groupcheck.model.core import explore
from groupcheck.model.link import explore_entry
from groupcheck.model.sequencer import (Data, Forward, GapFreeFIFO, SequencerModel, SenderFIFO,
                                        TotalOrder)
from groupcheck.model.values import Fn

M3 = SequencerModel({"N": 3, "MaxSeq": 2, "MaxCrashes": 1})


def init():
    (s,) = list(M3.init())
    return s


def step(s, action, *params, m=M3):
    succ = [t for lab, t in m.next(s) if lab.action == action and lab.params == params]
    assert len(succ) == 1, (action, params, [str(lab) for lab, _ in m.next(s)])
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


# --- the losses after a coordinator crash and their fixes (docs/sequencer.md) --

def fixed(**fixes):
    return SequencerModel({"N": 3, "MaxSeq": 2, "MaxCrashes": 1, **fixes})


def test_gap_free_fifo_allows_a_crashed_senders_gap_only():
    s = init()
    gap = s.delivered.set(2, ((3, 2),))
    assert SenderFIFO(s._replace(delivered=gap))             # increasing: the old check passes it
    assert not GapFreeFIFO(s._replace(delivered=gap))        # 3 is alive: <<3, 1>> is missing
    assert GapFreeFIFO(s._replace(delivered=gap, crashed=frozenset({3})))
    assert GapFreeFIFO(s._replace(delivered=s.delivered.set(2, ((3, 1), (1, 1), (3, 2)))))


def test_nothing_missing_only_judges_quiescent_states():
    s = step(init(), "Send", 2)                               # FORWARD in flight: not quiescent
    assert not M3.Quiescent(s) and M3.NothingMissing(s)
    lost = s._replace(chan=s.chan.set((2, 1), ()))            # the same with the FORWARD gone
    assert M3.Quiescent(lost) and not M3.NothingMissing(lost)
    assert M3.NothingMissing(lost._replace(crashed=frozenset({2}), views=((1, 2, 3), (1, 3)),
                                           vid=Fn({1: 2, 2: 1, 3: 2})))


def _loss1(m):
    """Coordinator 1 crashes; 3 installs <<2, 3>> first and forwards <<3, 1>>
    to 2, which has not installed it yet."""
    s = step(init(), "Crash", 1, frozenset(), m=m)
    s = step(s, "NewView", m=m)
    s = step(s, "InstallView", 3, m=m)
    return step(s, "Send", 3, m=m)


def test_loss1_a_member_not_yet_coordinator_drops_the_forward():
    s = step(_loss1(M3), "RecvForward", 2, 3)
    s = step(s, "InstallView", 2)
    assert s.fwd[3] == {1} and M3.Quiescent(s) and not M3.NothingMissing(s)


def test_fix1_keep_forward_waits_until_coordinator():
    m = fixed(KeepForward=True)
    s = _loss1(m)
    assert s.chan[(3, 2)] == (Forward(3, 1),)
    assert not [lab for lab, _ in m.next(s) if lab.action == "RecvForward"]
    s = step(s, "InstallView", 2, m=m)
    s = step(s, "RecvForward", 2, 3, m=m)
    assert s.chan[(2, 2)] == s.chan[(2, 3)] == (Data(3, 1),)


def _loss2(m):
    """2 forwards <<2, 1>>; coordinator 1 crashes with it; 2 installs <<2, 3>>
    as coordinator and multicasts its <<2, 2>>."""
    s = step(init(), "Send", 2, m=m)
    s = step(s, "Crash", 1, frozenset(), m=m)
    s = step(s, "NewView", m=m)
    s = step(s, "InstallView", 2, m=m)
    return step(s, "Send", 2, m=m)


def test_loss2_own_multicast_overtakes_the_resent_forward_table():
    s = _loss2(M3)
    assert s.chan[(2, 2)] == (Forward(2, 1), Data(2, 2))
    s = step(s, "RecvForward", 2, 2)
    assert s.chan[(2, 3)] == (Data(2, 2), Data(2, 1))
    s = step(step(s, "RecvData", 3, 2), "RecvData", 3, 2)
    assert s.delivered[3] == ((2, 2),) and not GapFreeFIFO(s)


def test_fix2_resend_first_sequences_the_table_at_install():
    m = fixed(ResendFirst=True)
    s = _loss2(m)
    assert s.chan[(2, 2)] == s.chan[(2, 3)] == (Data(2, 1), Data(2, 2))


def _loss3(m):
    """2's <<2, 1>> is sequenced; 2 takes its DATA back; coordinator 1
    crashes and its DATA to 3 is lost."""
    s = step(init(), "Send", 2, m=m)
    s = step(s, "RecvForward", 1, 2, m=m)
    s = step(s, "RecvData", 2, 1, m=m)
    return step(s, "Crash", 1, frozenset({3}), m=m)


def test_loss3_and_fix3_retain_forward():
    s = _loss3(M3)
    assert s.fwd[2] == frozenset() and s.chan[(1, 3)] == ()
    m = fixed(KeepForward=True, ResendFirst=True, RetainForward=True)
    t = _loss3(m)
    assert t.fwd[2] == {1} and t.delivered[2] == ((2, 1),)
    t = step(step(t, "NewView", m=m), "InstallView", 2, m=m)
    assert t.chan[(2, 3)] == (Data(2, 1),)
    t = step(step(t, "RecvData", 3, 2, m=m), "InstallView", 3, m=m)
    t = step(t, "RecvData", 2, 2, m=m)                        # a duplicate at 2
    assert t.delivered[2] == ((2, 1),) and t.delivered[3] == ((2, 1),) and m.Quiescent(t) and m.NothingMissing(t)


# --- JGroups 2.12.2's deviations: SuspectResend and FillGaps -----------------

def test_suspect_moves_coord_and_resends_before_any_view():
    m = fixed(SuspectResend=True)
    s = step(init(), "Send", 2, m=m)
    s = step(s, "Send", 3, m=m)
    assert not [lab for lab, _ in m.next(s) if lab.action == "Suspect"]     # nobody has crashed
    s = step(s, "Crash", 1, frozenset({2, 3}), m=m)
    s = step(s, "Suspect", 3, 1, m=m)
    assert s.coord[3] == 2 and s.views == ((1, 2, 3),) and s.vid[3] == 1
    assert s.chan[(3, 2)] == (Forward(3, 1),)
    t = step(s, "RecvForward", 2, 3, m=m)                   # 2 has not suspected yet: dropped
    assert all(t.chan[(2, r)] == () for r in (1, 2, 3))
    s = step(s, "Suspect", 2, 1, m=m)                       # to itself, through its loopback
    assert s.coord[2] == 2 and s.chan[(2, 2)] == (Forward(2, 1),)
    assert not [lab for lab, _ in m.next(s) if lab.action == "Suspect"]     # nothing left to move
    s = step(s, "Send", 2, m=m)                             # sequenced at once, behind the re-sent FORWARD
    assert s.chan[(2, 2)] == (Forward(2, 1), Data(2, 2)) and s.fwd[2] == {1}
    s = step(step(s, "NewView", m=m), "InstallView", 2, m=m)
    assert s.chan[(2, 2)] == (Forward(2, 1), Data(2, 2))    # coord did not move: no second re-send


def test_suspect_is_no_step_of_the_seed():
    s = step(step(init(), "Send", 2), "Crash", 1, frozenset())
    assert not [lab for lab, _ in M3.next(s) if lab.action == "Suspect"]
    assert M3.Suspect(s, 2, 1) is None


def test_fill_gaps_delivers_a_seqno_below_the_highest_once():
    s = init()._replace(chan=init().chan.set((1, 3), (Data(2, 2), Data(2, 1), Data(2, 1), Data(2, 2))))
    seed, jg = M3, fixed(FillGaps=True)
    a = step(step(s, "RecvData", 3, 1, m=seed), "RecvData", 3, 1, m=seed)
    assert a.delivered[3] == ((2, 2),)                      # the seed: 2.1 is below the highest, a duplicate
    b = step(s, "RecvData", 3, 1, m=jg)
    assert b.holes[3] == {(2, 1)} and b.recv[3][2] == 2
    b = step(b, "RecvData", 3, 1, m=jg)
    assert b.delivered[3] == ((2, 2), (2, 1)) and b.holes[3] == frozenset() and b.recv[3][2] == 2
    b = step(step(b, "RecvData", 3, 1, m=jg), "RecvData", 3, 1, m=jg)
    assert b.delivered[3] == ((2, 2), (2, 1))               # no gap left: both are duplicates
    assert not SenderFIFO(b)


def test_fill_gaps_redelivers_a_seqno_above_a_gap_as_seqnotable_does():
    # SeqnoTable.add accepts any seqno at or above the next expected one,
    # even one it had: with 2.1 missing, a second 2.2 is delivered again
    jg = fixed(FillGaps=True)
    s = init()._replace(chan=init().chan.set((1, 3), (Data(2, 2), Data(2, 2))))
    s = step(step(s, "RecvData", 3, 1, m=jg), "RecvData", 3, 1, m=jg)
    assert s.delivered[3] == ((2, 2), (2, 2)) and s.holes[3] == {(2, 1)}


def _entry(name):
    (e,) = manifest.select(["sequencer"], name)
    return e


@pytest.mark.parametrize("name", [pytest.param("CoordCrash", marks=pytest.mark.slow), "Pair", "GapPair", "Missing",
                                  pytest.param("MissingKeepResend", marks=pytest.mark.slow), "MissingResendRetain",
                                  "SuspectPair", "SuspectMissing"])
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


def test_the_kernel_is_the_seeds_and_decodes_its_coord_and_holes():
    # the kernel encodes the seed, where coord is the view's first member and
    # there are no holes; JGroups's variant is searched with next
    assert fixed(SuspectResend=True).kernel() is None and fixed(FillGaps=True).kernel() is None
    kern = M3.kernel()
    s = step(step(step(init(), "Crash", 1, frozenset()), "NewView"), "InstallView", 3)
    t = kern.decode(kern.encode(s))
    assert t == s and t.coord == Fn({1: 1, 2: 1, 3: 2}) and all(not h for h in t.holes.values())


def test_separate_channels_let_a_data_overtake_a_forward_of_the_same_pair():
    s = init()._replace(chan=init().chan.set((2, 2), (Forward(2, 1), Data(2, 2))))
    assert [lab.params for lab, _ in M3.next(s) if lab.action == "RecvData"] == []     # one FIFO channel
    m = fixed(SeparateChannels=True)
    t = step(s, "RecvData", 2, 2, m=m)
    assert t.chan[(2, 2)] == (Forward(2, 1),) and t.delivered[2] == ((2, 2),)
    t = step(s, "RecvForward", 2, 2, m=m)                   # 2 is not coordinator: dropped, the DATA stays
    assert t.chan[(2, 2)] == (Data(2, 2),)
