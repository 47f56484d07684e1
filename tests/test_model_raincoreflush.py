"""The RaincoreFlush model: FLUSH's views come from the ring.  A crash is
noticed only through TokenDeliveryFailure, a view is installed only once the
ring committed it, a joiner enters through the 911 path; pinned counts
against the manifest."""

import pytest

from groupcheck.model.raincoreflush import NO_TOKEN, RaincoreFlushModel
from model_helpers import enabled, explores_as_pinned, init, ring_step, step


def model(**kw):
    c = {"N": 3, "NInit": 3, "Founder": 2, "MaxMsgs": 1, "MaxCrashes": 1, "Crashable": frozenset({1})}
    c.update(kw)
    return RaincoreFlushModel(c)


def test_crash_is_noticed_only_through_token_delivery_failure():
    m = model()
    s = init(m)
    s = step(m, s, "EatingTimeout", 2)        # token 2 -> 3
    s = step(m, s, "TokenReceived", 3)
    s = step(m, s, "EatingTimeout", 3)        # token 3 -> 1
    s = step(m, s, "Crash", 1)                # 1 is not holding nor sending the token
    # Nobody knows: no member counts 1 gone, 2 is not coordinator, no flush.
    assert all(m.Gone(s, p) == frozenset() for p in (2, 3))
    assert not m.IsCoord(s, 2)
    assert not enabled(m, s, "StartFlush")
    # The transport hands the token back to 3: that is the detection.
    (lab,) = enabled(m, s, "TokenDeliveryFailure")
    assert lab.params[0] == 3
    s = step(m, s, "TokenDeliveryFailure", 3)
    assert m.Gone(s, 3) == {1} and m.Gone(s, 2) == frozenset()
    assert s.localView[2] == (2, 3)
    # 2 learns it when it takes the token carrying the removal.
    s = step(m, s, "TokenReceived", 2)
    assert m.Gone(s, 2) == {1} and m.IsCoord(s, 2)


def test_view_installed_only_after_the_ring_committed_it():
    m = model()
    s = init(m)
    for a, p in (("EatingTimeout", 2), ("TokenReceived", 3), ("EatingTimeout", 3), ("Crash", 1),
                 ("TokenDeliveryFailure", 3)):
        s = step(m, s, a, p)
    # Drive the ring alone until node 2 commits {2, 3}: no flush starts before.
    for _ in range(20):
        if m.LastGlobalView(s, 2) == (2, 3):
            break
        assert not enabled(m, s, "StartFlush")
        assert len(s.views) == 1
        s = ring_step(m, s)
    assert m.LastGlobalView(s, 2) == (2, 3) and s.viewState[1] == "Agreement"
    s = step(m, s, "StartFlush", 2)
    # The flush runs to the end; the view 2 installs is the ring's.
    for a, *p in (("Block", 3, 2), ("FlushOk", 2), ("FlushOk", 3), ("ReceiveFlushOk", 2, 3),
                  ("ReceiveFlushOk", 3, 2), ("FlushCompleted", 2), ("FlushCompleted", 3),
                  ("ReceiveFlushCompleted", 2, 3), ("SendView", 2), ("InstallView", 3, 2)):
        s = step(m, s, a, *p)
    assert s.views == (frozenset({1, 2, 3}), frozenset({2, 3}))
    assert s.vid[1:] == (2, 2)
    assert all(f(s) for f in m.invariants.values())


def test_joiner_enters_through_911():
    m = model(NInit=2, Founder=1, MaxCrashes=0, Crashable=frozenset())
    s = init(m)
    assert s.status[2] == "Off" and s.vid[2] == 0
    s = step(m, s, "Join", 3)
    (msg,) = s.msgs911
    assert (msg["orig"], msg["dest"]) == (3, 1)
    s = step(m, s, "911Received", 1)
    assert s.newNodes[0] == {3}
    s = step(m, s, "EatingTimeout", 1)        # the holder adds 3 after itself
    (tok,) = s.tokenMsgs
    assert tok["nodelist"] == (1, 3, 2) and s.token[0] == NO_TOKEN
    assert not enabled(m, s, "StartFlush")    # proposed, not committed
    for _ in range(30):
        if m.LastGlobalView(s, 1) == (1, 3, 2):
            break
        assert not enabled(m, s, "StartFlush")
        s = ring_step(m, s)
    assert enabled(m, s, "StartFlush")


@pytest.mark.parametrize("name", ["CoordCrash", "FounderCrash", "Join"])
def test_distinct_states_match_manifest(name):
    explores_as_pinned("raincoreflush", name)


# --- LossyRing: the ring is Raincore's, token loss and regeneration included ---

def lossy(**kw):
    c = {"LossyRing": True, "Founder": 1, "MaxSeq": 9, "Max911": 1}
    c.update(kw)
    return model(**c)


def test_lossy_holder_crash_loses_the_token_and_a_claim_regenerates_it():
    m = lossy()
    s = init(m)
    assert s.token[0]["seq"] == 3 and [t["seq"] for t in s.lastToken] == [1, 2, 3]
    assert not enabled(m, s, "HungryTimeout")     # TimelyTimeouts: the token lists everyone
    s = step(m, s, "Crash", 1)                    # FLUSH's coordinator crashes eating
    assert not any(m.Eating(s, n) for n in (2, 3)) and not s.tokenMsgs
    s = step(m, s, "HungryTimeout", 3)            # no token lists 3 any more: its claim
    (c,) = s.msgs911
    assert (c["orig"], c["dest"], c["seq"], c["status"]) == (3, 1, 3, "YES")
    s = step(m, s, "911DeliveryFailure", 3)       # 1 is down: on to 2
    s = step(m, s, "911Received", 2)              # 2 sent seq 2 < 3: no veto, forwarded
    s = step(m, s, "911Received", 3)              # its own YES: 3 regenerates from lastToken
    assert m.Eating(s, 3) and s.token[2]["seq"] == 3 and s.tokenState[2] == "Eating"
    assert m.AtMostOneToken(s)
    s = step(m, s, "EatingTimeout", 3)            # seq 4 to the dead node 1 ...
    s = step(m, s, "TokenDeliveryFailure", 3)     # ... comes back: 1 leaves the nodelist
    assert m.Gone(s, 3) == {1} and s.localView[2] == (2, 3)
    assert all(f(s) for f in m.invariants.values())


def test_lossy_veto_by_the_later_token():
    m = lossy()
    s = init(m)
    s = step(m, s, "Crash", 1)
    s = step(m, s, "HungryTimeout", 2)            # 2 claims with seq 2; 3 sent seq 3
    s = step(m, s, "911Received", 3)              # vetoed: NO, straight back to 2
    (c,) = s.msgs911
    assert (c["status"], c["dest"]) == ("NO", 2)
    s = step(m, s, "911Received", 2)
    assert not m.Eating(s, 2)


def test_lossy_false_keeps_the_abstract_states():
    """LossyRing FALSE: tokens without sequence number, tokenState and
    lastToken frozen at their initial values, no timeout, no TokenLoss."""
    m = model()
    s = init(m)
    assert "seq" not in s.token[1] and s.lastToken == (NO_TOKEN,) * 3
    seen = {s}
    frontier = [s]
    for _ in range(12):
        nxt = []
        for u in frontier:
            for lab, t in m.next(u):
                assert lab.action not in ("HungryTimeout", "StarvingTimeout", "TokenLoss")
                assert t.tokenState == s.tokenState and t.lastToken == s.lastToken
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt


@pytest.mark.parametrize("name", ["HolderCrash2", "TokenLoss"])
def test_lossy_distinct_states_match_manifest(name):
    explores_as_pinned("raincoreflush", name)
