"""Per-transition edges of the layers that no other unit test reaches
(found by the mutation benchmark, bench/mutants.py: each test kills a
mutant that every other layer let through)."""

from groupcheck.impl.codec import Data
from groupcheck.impl.events import AppSend, Multicast, SetTimer, TimerFired, View, ViewChange
from groupcheck.impl.sequencer import SELF_TIMER, Sequencer


def test_the_self_channel_takes_one_message_a_firing_and_rearms_until_empty():
    # 2 becomes coordinator holding two of its own FORWARDs: they go round its
    # self channel (selfq), one per firing of the zero-delay timer
    s = Sequencer(2, (1, 2, 3), self_channel=True)
    s.handle(AppSend(b"a"), 0.0)
    s.handle(AppSend(b"b"), 0.0)
    effs = s.handle(ViewChange(View(2, (2, 3))), 1.0)
    assert SetTimer(SELF_TIMER, 1.0) in effs and len(s.selfq) == 2
    first = s.handle(TimerFired(SELF_TIMER), 2.0)
    assert [e for e in first if isinstance(e, Multicast)] == [Multicast(Data(2, 1, b"a"))]
    assert SetTimer(SELF_TIMER, 2.0) in first          # one left: the timer goes again
    second = s.handle(TimerFired(SELF_TIMER), 3.0)
    assert [e for e in second if isinstance(e, Multicast)] == [Multicast(Data(2, 2, b"b"))]
    assert not any(isinstance(e, SetTimer) for e in second) and s.selfq == []
    assert s.handle(TimerFired(SELF_TIMER), 4.0) == [] and s.fwd == {1: b"a", 2: b"b"}
