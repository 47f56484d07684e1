"""A finding of the ring compositions (spec/RaincoreFlush and
spec/RaincoreSequencerFlush, models Suspect): a
false suspicion (the Transport Manager reports a live node unreachable)
drops a live member from the ring, and FLUSH installs the ring's view
without it before it has completed the flush.  The reading that holds
(``ShunSuspected``, model SuspectShun): a member the latest view leaves out
has failed for the group (docs/raincore.md, section 8)."""

import pytest

from groupcheck.model import manifest
from groupcheck.model.core import explore
from groupcheck.model.link import build_model
from groupcheck.model.raincoreflush import RaincoreFlushModel
from groupcheck.model.raincoresequencerflush import RaincoreSequencerFlushModel


def suspect_model(**kw) -> RaincoreFlushModel:
    (entry,) = manifest.select(["raincoreflush"], "Suspect")
    return RaincoreFlushModel({**build_model(entry).constants, **kw})


def test_the_model_finds_the_false_suspicion_and_shunning_reads_it_as_a_failure():
    m = suspect_model()
    res = explore(m, check_invariants=["ViewAfterAllCompleted"])
    assert res.violation is not None and res.violation.invariant == "ViewAfterAllCompleted"
    trace = res.violation.trace
    assert len(trace) == 24                        # TLC's counterexample is as long
    # the suspicion: a TokenDeliveryFailure for a token to a node that is up
    fails = [(lab, prev) for (_, prev), (lab, _) in zip(trace, trace[1:]) if lab.action == "TokenDeliveryFailure"]
    assert fails and all(prev.status[lab.params[1]["dest"] - 1] == "Up" for lab, prev in fails)
    last = trace[-1][1]
    assert set(last.status) == {"Up"} and last.views[-1] == frozenset({2, 3}) and last.vid[0] == 1
    # the same state under ShunSuspected: node 1, excluded, has failed for the group
    shun = suspect_model(ShunSuspected=True)
    assert shun.Failed(last) == frozenset({1}) and shun.ViewAfterAllCompleted(last)
    # and without FalseSuspicion no delivery failure is reported for a live node
    honest = suspect_model(FalseSuspicion=False)
    lab, prev = fails[0]
    assert lab not in {l for l, _ in honest.next(prev)}


def test_the_manifest_keeps_the_false_suspicion_as_an_expected_violation():
    (entry,) = manifest.select(["raincoreflush"], "Suspect")
    (shun,) = manifest.select(["raincoreflush"], "SuspectShun")
    assert entry.expected == "ViewAfterAllCompleted" and shun.expected == "ok"
    assert build_model(entry).FalseSuspicion and not build_model(entry).ShunSuspected
    assert build_model(shun).ShunSuspected


@pytest.mark.slow
def test_over_sequencer_the_suspected_coordinators_order_parts_from_the_survivors():
    """RaincoreSequencerFlush's Suspect: node 1, SEQUENCER's coordinator, is
    reported unreachable while alive; it delivered (2, 1), (3, 1), and the
    members that stay deliver them the other way round (explorer: about
    440,000 states, the same 35 steps as TLC)."""
    (entry,) = manifest.select(["raincoresequencerflush"], "Suspect")
    m = build_model(entry)
    res = explore(m, check_invariants=["SurvivorTotalOrder"])
    assert res.violation is not None and res.violation.invariant == "SurvivorTotalOrder"
    trace = res.violation.trace
    assert len(trace) == 35
    last = trace[-1][1]
    assert set(last.status) == {"Up"} and last.views[-1] == (2, 3)
    assert last.delivered[1] == ((2, 1), (3, 1)) and last.delivered[2] == ((3, 1), (2, 1))
    shun = RaincoreSequencerFlushModel({**m.constants, "ShunSuspected": True})
    assert shun.Failed(last) == frozenset({1}) and shun.SurvivorTotalOrder(last)


def test_the_replay_takes_a_delivery_failure_to_a_live_node_only_under_false_suspicion():
    """conformance/replay/raincoreflush.py ``ring_successors``: the record of
    Suspect's TokenDeliveryFailure (node 3 reports node 1, alive) is a step
    of the model the header's FalseSuspicion builds, and none without it."""
    from groupcheck.conformance.replay import raincoreflush as crf
    res = explore(suspect_model(), check_invariants=["ViewAfterAllCompleted"])
    trace = res.violation.trace
    lab, prev = next((lab, prev) for (_, prev), (lab, _) in zip(trace, trace[1:])
                     if lab.action == "TokenDeliveryFailure")
    n, m = lab.params
    ev = {"name": "TokenDeliveryFailure", "nid": n,
          "msg": {"type": "TOKEN", "seq": 9, **{k: m[k] for k in ("nodelist", "cur", "dest", "gvn")}}}
    assert prev.status[m["dest"] - 1] == "Up"
    assert [t for t in crf.ring_successors(suspect_model(), prev, ev) if t is not None]
    assert not [t for t in crf.ring_successors(suspect_model(FalseSuspicion=False), prev, ev) if t is not None]


def test_cluster_runs_declare_false_suspicion_over_either_ring():
    from groupcheck.conformance.replay.raincoresequencerflush import model_of
    from groupcheck.impl.stacks import raincoreflush, raincoresequencerflush
    assert all(raincoreflush.cluster_constants(3, 10, 1, lossy)["FalseSuspicion"] for lossy in (False, True))
    assert all(model_of(raincoresequencerflush.cluster_constants(3, 10, 1, lossy)).FalseSuspicion
               for lossy in (False, True))
    # a node its ring leaves out exits (impl/runtime.py SHUNNED): no survivor, over either ring
    assert all(raincoreflush.cluster_constants(3, 10, 1, lossy)["ShunSuspected"] for lossy in (False, True))
    assert model_of(raincoresequencerflush.cluster_constants(3, 10, 1)).ShunSuspected


# --- the implementation's answer (SuspectLeaves: the node reported leaves once it learns)

def _walk(m, s, *steps):
    """Follow the labelled steps (action, first parameter) from state s."""
    for action, first in steps:
        s = next(t for lab, t in m.next(s) if lab.action == action and lab.params[0] == first)
    return s


def test_a_suspected_node_may_leave_outside_the_crash_budget_only_under_suspect_leaves():
    (entry,) = manifest.select(["raincoreflush"], "SuspectLeaves")
    m = build_model(entry)
    assert m.MaxCrashes == 0 and m.FalseSuspicion and m.SuspectLeaves
    (s,) = m.init()
    leaves = [t for lab, t in m.next(s) if lab.action == "LeaveSuspected"]
    assert leaves and all(t.status[0] == "Down" and t.status[1:] == s.status[1:] for t in leaves)
    assert not [lab for lab, _ in m.next(s) if lab.action == "Crash"]          # the budget is spent
    for off in ({"SuspectLeaves": False}, {"FalseSuspicion": False}):
        other = RaincoreFlushModel({**m.constants, **off})
        assert not [lab for lab, _ in other.next(s) if lab.action == "LeaveSuspected"]
    # the abstraction keeps its one token: no leave with it held
    eating = _walk(m, s, ("EatingTimeout", 2), ("TokenReceived", 3), ("EatingTimeout", 3), ("TokenReceived", 1))
    assert m.Eating(eating, 1)
    assert not [lab for lab, _ in m.next(eating) if lab.action == "LeaveSuspected"]
    # over SEQUENCER, one successor per set of channels whose tail is lost, as Crash
    (rentry,) = manifest.select(["raincoresequencerflush"], "SuspectLeaves")
    r = build_model(rentry)
    (rs,) = r.init()
    labs = [lab for lab, _ in r.next(rs) if lab.action == "LeaveSuspected"]
    assert {lab.params[0] for lab in labs} == {1} and len(labs) == 4     # subsets of {2, 3}


def test_the_manifest_checks_the_answer_in_lossy_suspects_environment():
    """LossySuspectLeaves is LossySuspect with SuspectLeaves (expected: the
    same invariant violated); LossySuspectStopsFirst is LossySuspect with
    the report true (a crash in place of the false suspicion): it holds."""
    (base,) = manifest.select(["raincoreflush"], "LossySuspect")
    (leaves,) = manifest.select(["raincoreflush"], "LossySuspectLeaves")
    (first,) = manifest.select(["raincoreflush"], "LossySuspectStopsFirst")
    c = base.constants()
    assert leaves.constants() == {**c, "SuspectLeaves": True}
    assert first.constants() == {**c, "FalseSuspicion": False, "MaxCrashes": 1}
    assert base.expected == leaves.expected == "ConsistentHistory" and first.expected == "ok"
    # the Transport Manager's report final for the node: LossySuspectLeaves's constants, its own module
    (final,) = manifest.select(["raincoreflush"], "LossySuspectReportFinal")
    assert final.constants() == leaves.constants() and final.expected == "ok"
    assert final.module == "MCRaincoreFlushReportFinal" and final.parsed_cfg().specification == "SpecF"
