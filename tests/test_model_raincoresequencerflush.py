"""The RaincoreSequencerFlush model: SEQUENCER over FLUSH whose views come
from the ring.  A view is installed only once the ring committed it, the
survivors keep one total order across a coordinator crash the ring
detects, a joiner enters through the 911 path and becomes a sender; pinned
counts against the manifest."""

import networkx as nx
import pytest

from groupcheck.model import manifest
from groupcheck.model.core import explore
from groupcheck.model.link import build_model
from groupcheck.model.raincoresequencerflush import RaincoreSequencerFlushModel
from model_helpers import edges, enabled, explores_as_pinned, init, ring_step, step


def model(**kw):
    c = {"N": 3, "NInit": 3, "Founder": 2, "MaxSeq": 1, "Senders": frozenset({2, 3}), "MaxCrashes": 1,
         "Crashable": frozenset({1}), "ResendAlways": False, "ResentFirst": False}
    c.update(kw)
    return RaincoreSequencerFlushModel(c)


def run(m, s, *steps):
    for a, *p in steps:
        s = step(m, s, a, *p)
        assert all(f(s) for f in m.invariants.values()), (a, p)
    return s


def ring_until(m, s, done, *, forbid=("StartFlush",), limit=30):
    """Drive the ring alone until done(s); no action in forbid is enabled meanwhile."""
    for _ in range(limit):
        if done(s):
            return s
        for a in forbid:
            assert not enabled(m, s, a), a
        s = ring_step(m, s)
    raise AssertionError("the ring did not get there")


FLUSH_23 = (("Block", 3, 2), ("FlushOk", 2), ("FlushOk", 3), ("ReceiveFlushOk", 2, 3), ("ReceiveFlushOk", 3, 2),
            ("FlushCompleted", 2), ("FlushCompleted", 3), ("ReceiveFlushCompleted", 2, 3), ("SendView", 2))


def test_view_installed_only_after_the_ring_committed_it():
    m = model()
    s = init(m)
    s = run(m, s, ("EatingTimeout", 2), ("TokenReceived", 3), ("EatingTimeout", 3), ("Crash", 1, frozenset()))
    # Nobody knows yet: 1 is still SEQUENCER's coordinator, no flush.
    assert m.IsCoord(s, 2) is False and not enabled(m, s, "StartFlush")
    s = run(m, s, ("TokenDeliveryFailure", 3))  # the transport's failure is the detection
    assert m.Gone(s, 3) == {1} and m.Gone(s, 2) == frozenset()
    s = ring_until(m, s, lambda s: m.LastGlobalView(s, 2) == (2, 3))
    assert len(s.views) == 1
    s = run(m, s, ("StartFlush", 2), *FLUSH_23)
    assert s.views == ((1, 2, 3), (2, 3)) and s.views[-1] == m.LastGlobalView(s, 2)
    s = run(m, s, ("InstallView", 3, 2), ("StopFlush", 2), ("Unblock", 3, 2))
    assert (s.vid[2], s.vid[3]) == (2, 2) and m.IsCoord(s, 2)


def test_survivor_total_order_across_a_coordinator_crash():
    m = model()
    s = init(m)
    # 3 forwards its message to the coordinator 1, which sequences it; only
    # 2 gets the DATA before 1 crashes (lost: 3).
    s = run(m, s, ("Send", 3), ("RecvForward", 1, 3), ("RecvData", 2, 1))
    assert s.delivered[2] == ((3, 1),) and s.log[2] == ((3, 1),)
    s = run(m, s, ("EatingTimeout", 2), ("TokenReceived", 3), ("EatingTimeout", 3),
            ("Crash", 1, frozenset({3})))
    assert s.chan[(1, 3)] == () and s.fwd[3] == {1}
    s = run(m, s, ("TokenDeliveryFailure", 3))
    s = ring_until(m, s, lambda s: m.LastGlobalView(s, 2) == (2, 3))
    s = run(m, s, ("StartFlush", 2), *FLUSH_23)
    # 2's digest brings <<3, 1>> to 3 in the VIEW; 3's forward-table empties.
    s = run(m, s, ("InstallView", 3, 2))
    assert s.delivered[3] == ((3, 1),) and s.fwd[3] == frozenset()
    # The new coordinator 2 sequences its own message after it.
    s = run(m, s, ("StopFlush", 2), ("Unblock", 3, 2), ("Send", 2), ("RecvData", 2, 2), ("RecvData", 3, 2))
    assert s.delivered[2] == s.delivered[3] == ((3, 1), (2, 1))
    assert m.SurvivorTotalOrder(s) and m.VirtualSynchrony(s)


def test_joiner_enters_through_911_and_sends():
    m = model(NInit=2, Founder=1, MaxCrashes=0, Crashable=frozenset())
    s = init(m)
    assert s.status[2] == "Off" and s.vid[3] == 0
    s = run(m, s, ("Join", 3), ("911Received", 1), ("EatingTimeout", 1))
    assert all(lab.params != (3,) for lab in enabled(m, s, "Send"))  # not a member yet
    s = ring_until(m, s, lambda s: m.LastGlobalView(s, 1) == (1, 3, 2))
    s = run(m, s, ("StartFlush", 1), ("Block", 2, 1), ("FlushOk", 1), ("FlushOk", 2), ("ReceiveFlushOk", 1, 2),
            ("ReceiveFlushOk", 2, 1), ("FlushCompleted", 1), ("FlushCompleted", 2),
            ("ReceiveFlushCompleted", 1, 2), ("SendView", 1))
    # The view is the ring's nodelist sorted: 1 stays SEQUENCER's coordinator.
    assert s.views[-1] == (1, 2, 3)
    s = run(m, s, ("InstallView", 3, 1), ("InstallView", 2, 1), ("StopFlush", 1), ("Unblock", 2, 1))
    assert s.vid[3] == 2 and s.closed[3] == (0,) and s.flushInit[3] == 0
    s = run(m, s, ("Send", 3), ("RecvForward", 1, 3), ("RecvData", 1, 1), ("RecvData", 2, 1), ("RecvData", 3, 1))
    assert all(s.delivered[p] == ((3, 1),) for p in (1, 2, 3))


class _NoDigest(RaincoreSequencerFlushModel):
    """Mutant: a member installs the view without taking the VIEW's digest."""

    def Moved(self, s, m, new, D, ch):
        return super().Moved(s, m, new, (), ch)


def test_survivor_total_order_needs_the_digest():
    # CoordCrash's constants: without reconciliation, a DATA of the crashed
    # coordinator that only node 3 took (<<2, 1>>) is re-sequenced by the new
    # coordinator 2 from its forward-table after <<3, 1>>: the survivors
    # disagree, so SurvivorTotalOrder is not vacuous on these models.
    m = _NoDigest(model().constants)
    res = explore(m, check_invariants=["SurvivorTotalOrder"])
    assert res.violation is not None and res.violation.invariant == "SurvivorTotalOrder"


@pytest.mark.parametrize("name", ["FounderCrash", "Join", "TokenLoss", "HolderCrash2"])
def test_distinct_states_match_manifest(name):
    explores_as_pinned("raincoresequencerflush", name)


def _after(name: str, fired, then) -> bool:
    """On manifest model ``name``'s graph: some edge ``fired(model, s, label)``
    leads to a state from which a state ``then(model, t)`` is reachable."""
    (entry,) = manifest.select(["raincoresequencerflush"], name)
    m = build_model(entry)
    res = explore(m, check_invariants=False, build_graph=True)
    st = res.numbered
    g = nx.DiGraph(list(res.edge_map))
    for (i, j), labs in res.edge_map.items():
        if any(fired(m, st[i], lab) for lab in labs):
            if any(then(m, st[k]) for k in nx.descendants(g, j) | {j}):
                return True
    return False


def test_lossy_ring_crash_of_the_token_holder_is_survived():
    """HolderCrash2 (LossyRing): node 1, SEQUENCER's coordinator, crashes
    while it eats the token; node 2 regenerates the token, its ring commits
    <<2>>, the flush installs it and node 2 delivers its own multicast as
    the new coordinator."""
    assert _after("HolderCrash2",
                  lambda m, s, lab: lab.action == "Crash" and m.Eating(s, 1),
                  lambda m, t: t.views[-1] == (2,) and t.vid[2] == 2 and (2, 1) in t.delivered[2])


def test_lossy_ring_token_loss_is_survived():
    """TokenLoss (LossyRing): after a token is lost in transit, the ring
    regenerates it and commits again, and every member delivers member 3's
    multicast in the same view."""
    assert _after("TokenLoss",
                  lambda m, s, lab: lab.action == "TokenLoss",
                  lambda m, t: (all(t.delivered[p] == ((3, 1),) for p in m.Members)
                                and all(len(gv) > 1 for gv in t.globalView) and len(t.views) == 1))


def test_logs_agree_kept_only_where_the_step_cannot_change_it():
    """The replay carries LogsAgree over a step where ``LogsAgreeKept`` says
    so (conformance/replay/raincoresequencerflush.py): on every edge of the first
    20,000 states it must then equal the full evaluation, and an append
    that disagrees with another log of the view must not be carried over."""
    from groupcheck.model.sequencerflush import LogsAgree, LogsAgreeKept
    m = model()
    kept = 0
    for s, _, t in edges(m, 20_000):
        if LogsAgreeKept(s, t):
            kept += 1
            assert LogsAgree(s) == LogsAgree(t)
    assert kept > 1000
    s = next(iter(m.init()))
    a = s._replace(log=s.log.set(2, ((2, 1),)).set(3, ((2, 1),)))
    assert LogsAgree(a) and LogsAgreeKept(a, a._replace(log=a.log.set(2, ((2, 1), (3, 1)))))
    bad = a._replace(log=a.log.set(3, ((2, 1), (3, 1))))
    wrong = bad._replace(log=bad.log.set(2, ((2, 1), (2, 2))))
    assert not LogsAgree(wrong) and not LogsAgreeKept(bad, wrong)
