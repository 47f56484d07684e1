"""A leaver's VIEW outlives the next flush (docs/flush.md, "Leavers").

The plan: member 1 crashes, 3 asks to leave while the flush this starts is
under way, 4 joins after the view that leaves 3 out.  The initiator 2 sends
that VIEW to 3 and, before 3 has acknowledged it, runs the join's flush.  A
layer that lets the layers below forget 3 at that second view drops the
VIEW lost on the way: 3 stays blocked in its flush for good, while the
model still has ``InstallView(3, 2)`` enabled at the run's end (the VIEW is
in its channel and Receive is weakly fair), so the stuck end is the
layer's, not the spec's.
"""

from __future__ import annotations

import pytest

from groupcheck.conformance.replay import registry as protocols
from groupcheck.conformance.replay.flush import FlushBinding
from groupcheck.conformance.replay.engine import ReplayEngine
from groupcheck.core.trace.reader import from_records
from groupcheck.impl.events import Receive, Trace
from groupcheck.impl.flush import (BlockOk, Flush, FlushCompleted, FlushOk, Installed, JoinRequest,
                                   LeaveRequest)

PLAN = "loss=0.1,dup=0.05,reorder=3,crash=1@9.9,crash=2@30.3,leave=3@22.5,join=4@31"
SEEDS = (40, 50, 121)       # three of the seeds that ended with 3 stuck when the initiator forgot it


def run(seed: int):
    p = protocols.get("flush")
    return p.simulate(seed, PLAN, {**p.default_options, "nodes": 3, "messages": 1})


def names(out):
    return [e.event.name for e in out if isinstance(e, Trace)]


def test_the_initiator_keeps_a_leaver_below_through_the_next_flush():
    f = Flush(1, (1, 2, 3), block_time=None)
    f.handle(LeaveRequest(3), 0.0)
    f.handle(BlockOk(), 0.0)
    f.handle(Receive(2, FlushOk(1)), 0.0)
    f.handle(Receive(3, FlushOk(1)), 0.0)
    f.handle(Receive(2, FlushCompleted(1, ())), 0.0)
    assert names(f.handle(Receive(3, FlushCompleted(1, ())), 0.0)) == [
        "ReceiveFlushCompleted", "SendView", "StopFlush"]
    assert f.members == (1, 2) and 3 in f.below().members
    f.handle(JoinRequest(4), 0.0)                    # the next flush, 3's VIEW maybe still unacknowledged
    f.handle(BlockOk(), 0.0)
    f.handle(Receive(2, FlushOk(2)), 0.0)
    out = f.handle(Receive(2, FlushCompleted(2, ())), 0.0)
    assert names(out) == ["ReceiveFlushCompleted", "SendView", "StopFlush"] and f.members == (1, 2, 4)
    installed = next(e for e in out if isinstance(e, Installed))
    assert installed.keep == (3,) and f.below().members == (1, 2, 3, 4)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_plan_conforms_and_every_flush_ends(seed):
    recs, s = run(seed)
    ev = [r for r in recs if r.get("kind") == "event"]
    views = [i for i, r in enumerate(ev) if r["name"] == "SendView"]
    install3 = [i for i, r in enumerate(ev) if r["name"] == "InstallView" and r["nid"] == 3]
    # the case is reached: 2's second view goes out before 3 takes the one that leaves it out
    assert [ev[i]["msg"]["members"] for i in views] == [[2], [2, 4]]
    assert install3 and install3[0] > views[1]
    rep = protocols.get("flush").replay(from_records(recs), visited=False)
    assert (rep.verdict, rep.reason) == ("ok", None)
    assert s["left"] == [3] and s["joined"] == [4] and s["unfinished"] == []


def test_forgetting_earlier_leavers_ends_stuck_where_the_model_can_still_install(monkeypatch):
    send_view = Flush._send_view

    def forgetful(self, out):
        before = set(self.keep)
        send_view(self, out)
        self.keep -= before          # only this flush's leavers stay reachable below

    monkeypatch.setattr(Flush, "_send_view", forgetful)
    recs, s = run(SEEDS[0])
    assert s["unfinished"] == [3]
    trace = from_records(recs)
    rep = protocols.get("flush").replay(trace, visited=False)
    assert rep.verdict == "violation" and rep.reason.startswith("FlushEnds: member 3 (alive)")
    b = FlushBinding(trace)
    eng = ReplayEngine(b, visited=False)
    assert all(eng.step(e) is None for e in b.steps())          # every step conforms
    for t in eng.cands:
        assert [str(lab) for lab, _ in b.model.enabled(t, "InstallView")] == ["InstallView(3, 2)"]
