"""A finding of the composition over a failure detector that can be wrong
(spec/RaincoreFlush, model TwoInitiators): two false reports make two
FLUSH initiators of one view, each ending its flush with a VIEW of its own
for the same view id (OneViewPerId).  Flush.tla's StartFlush guard
``vid[c] = Latest`` is knowledge no node has once the detector errs.  The
fix (``ViewUnderToken``, model TwoInitiatorsFixed): a flush starts and its
VIEW is sent only while the node holds the token, and a VIEW only of the
latest view, whose id the one token carries (``TokenMsg.above``)."""

from __future__ import annotations

from collections import Counter, deque

import pytest

from groupcheck.conformance.replay import raincoreflush as crf
from groupcheck.conformance.replay import raincoresequencerflush as crsf
from groupcheck.core.trace.reader import from_records
from groupcheck.impl import flush as impl_flush
from groupcheck.impl.codec import decode, encode
from groupcheck.impl.flush import Flush, RingView
from groupcheck.impl.raincore import TokenMsg
from groupcheck.model import manifest
from groupcheck.model.link import build_model
from groupcheck.model.raincoreflush import RaincoreFlushModel


def _models():
    (entry,) = manifest.select(["raincoreflush"], "SuspectLeavesUnderToken")
    fixed = build_model(entry)
    assert fixed.ViewUnderToken
    return RaincoreFlushModel({**fixed.constants, "ViewUnderToken": False}), fixed


def _find(model, want, limit=5000):
    """BFS from the initial state to a state and label with ``want(state, label)``."""
    (s0,) = model.init()
    seen, queue = {s0}, deque([s0])
    while queue and len(seen) < limit:
        s = queue.popleft()
        for lab, t in model.next(s):
            if want(s, lab):
                return s, lab
            if t not in seen:
                seen.add(t)
                queue.append(t)
    raise AssertionError("not reached")


@pytest.mark.parametrize("action", ["StartFlush", "SendView"])
def test_the_model_starts_and_ends_a_flush_only_at_the_token_holder(action):
    flawed, fixed = _models()
    s, lab = _find(flawed, lambda s, lab: lab.action == action and not flawed.Eating(s, lab.params[0]))
    assert lab in {l for l, _ in flawed.next(s)}
    assert lab not in {l for l, _ in fixed.next(s)}
    # the holder may: the same step once its node eats
    s, lab = _find(fixed, lambda s, lab: lab.action == action)
    assert fixed.Eating(s, lab.params[0])


def test_the_manifest_keeps_the_finding_and_its_fix():
    (bad,) = manifest.select(["raincoreflush"], "TwoInitiators")
    (good,) = manifest.select(["raincoreflush"], "TwoInitiatorsFixed")
    assert bad.expected == "OneViewPerId" and good.expected == "ok"
    mb, mg = build_model(bad), build_model(good)
    assert {k: v for k, v in mb.constants.items() if k != "ViewUnderToken"} == \
        {k: v for k, v in mg.constants.items() if k != "ViewUnderToken"}
    assert not mb.ViewUnderToken and mg.ViewUnderToken
    assert mb.FalseSuspicion and len(mb.Crashable) == 2 and mb.MaxCrashes == 0


def test_the_token_carries_the_view_id_on_the_wire():
    t = TokenMsg(7, (1, 2, 3), 2, 3, 4, above=9)
    assert decode(encode(t)) == t
    assert "above" not in t.to_json()          # not Raincore's: never traced
    assert t.replace(cur=3).above == 9


def _ring(f, now, eating, token_view, committed=(2,), index=2):
    """Member 2's ring: nodes 1 and 3 dropped, its commit [2] at ring index 2."""
    return f.handle(RingView((2,), committed, index, eating, token_view), now)


def _names(effects):
    return [e.event.name for e in effects if isinstance(e, impl_flush.Trace)]


def test_the_layer_waits_for_the_token_to_start_and_to_end_a_flush():
    f = Flush(2, (1, 2, 3), membership="ring")       # member 2 of [1, 2, 3], the others gone
    f.view_under_token = True
    assert "StartFlush" not in _names(_ring(f, 0.0, False, 1))     # a newer commit, no token
    assert "StartFlush" in _names(_ring(f, 0.1, True, 1))
    # alone: FLUSH_OK and FLUSH_COMPLETED once block() returns; the VIEW waits for the token
    names = _names(_ring(f, 0.2, False, 1)) + _names(f.handle(impl_flush.TimerFired(impl_flush.BLOCK_TIMER), 0.3))
    assert "FlushCompleted" in names and "SendView" not in names and f.phase == "Completed"
    # the token says the view has moved on (another initiator's VIEW): no VIEW of this view
    assert "SendView" not in _names(_ring(f, 0.4, True, 2))
    assert "SendView" in _names(_ring(f, 0.5, True, 1)) and f.vid == 2
    # without the guard the same layer ends its flush at once, token or not
    g = Flush(2, (1, 2, 3), membership="ring")
    assert "StartFlush" in _names(_ring(g, 0.0, False, 0))


def test_mutant_without_the_guard_is_nonconforming(monkeypatch):
    """The implementation's guard is what the replay checks: without it a run
    whose header declares ViewUnderToken is rejected at a StartFlush or
    SendView away from the token."""
    monkeypatch.setattr(Flush, "_token_ok", lambda self, view=False: True)
    verdicts = Counter()
    for seed in range(12):
        faults, opts = crf.draw(seed)
        records, _ = crf.simulate(seed, faults, {**opts, "under_token": True})
        verdicts[crf.replay(from_records(records, f"s{seed}"), visited=False).verdict] += 1
    assert verdicts["nonconforming"] >= 1, verdicts


@pytest.mark.parametrize("mod", [crf, crsf], ids=["raincoreflush", "raincoresequencerflush"])
def test_campaign_under_the_token_conforms(mod):
    verdicts, histories = Counter(), []
    for seed in range(40):
        faults, opts = mod.draw(seed)
        records, line = mod.simulate(seed, faults, {**opts, "under_token": True})
        assert records[0]["constants"]["ViewUnderToken"] is True
        verdicts[mod.replay(from_records(records, f"s{seed}"), visited=False).verdict] += 1
        histories += line["history"]
    assert verdicts == Counter(ok=40) and histories == []
