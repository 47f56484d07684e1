"""The Raincore Transport Manager on a lossy network (seed 004, "Token").

Theory of operation
-------------------
"The Raincore Transport Manager provides the reliable unicast for the
transmission of the token.  In addition, the Raincore Transport Manager is
also used as the local failure detector.  When the Transport Manager fails
to deliver a message to a node, it will notify the Group Communication
Manager" (seed 004).  The simulator's Transport Manager is perfect (a
message to a node that is down comes back at once); on a real network this
layer is it: a sans-I/O layer under the ``Raincore`` layer, events in,
effects out, no clock of its own.

* ``Send(dest, msg)`` from the ring: the message goes out as
  ``TMFrame(id, msg)`` (ids count up per node) and waits in ``pending``
  until ``TMAck(id)`` comes back.  A message equal to one still pending to
  the same node is not sent twice: the spec's messages in flight are a set
  (a Starving node's repeated 911).
* ``TimerFired("retry")``: every pending frame is sent again; one sent
  ``attempts`` times without an ack is given up, and the ring is told:
  ``DeliveryFailed(msg)``, an effect (the node hands it to the ring as the
  event of the same name).  So a node is suspected after ``attempts *
  interval`` seconds of silence, which is what the failure detector costs.
* A newer token supersedes the older ones still pending: they are no longer
  retried and never reported.  Without this a token that was delivered but
  whose acks were lost before its receiver crashed is reported as not
  delivered after the newer token has gone round (the Transport Manager
  cannot tell "not delivered" from "delivered, then crashed"), and the ring
  re-sends a stale token; the layer drops it by its sequence number, but
  spec/RaincoreFlush, which has no sequence numbers, cannot (found by the
  campaign on the lossy network, seeds 27 and 38).  A stale token is never
  valid ("A token is valid when its sequence number is bigger than the
  lastToken Sequence number"), so nothing is lost.  Likewise a token taken
  answers the node's own pending 911s (a joiner's request was granted, a
  claim is moot): they are dropped, not reported (campaign seeds 46, 157).
* ``Receive(src, TMFrame)``: always acked (the ack may have been lost); the
  first copy goes up as ``Up(src, msg)``, a repeat is counted and dropped.
  ``Receive(src, TMAck)`` ends the wait.

Limits, said plainly: a node that is alive but silent for the whole
time-out (overloaded, a partition) is reported as failed, which the spec's
TokenDeliveryFailure forbids (its guard: the destination is down); a trace
replay then shows the run nonconforming at that step.  The wire format of
the two frames is at the end of this module (codec types 32 and 33).
"""

from __future__ import annotations

from dataclasses import dataclass

from .events import Effect, Receive, Send, SetTimer, TimerFired, Up
from .layer import bump
from .raincore import DeliveryFailed, Msg911, TokenMsg

TIMER = "retry"
DEDUP = 4096                  # ids remembered per sender (older repeats are dropped by the window)


@dataclass(frozen=True, slots=True)
class TMFrame:
    id: int
    msg: object


@dataclass(frozen=True, slots=True)
class TMAck:
    id: int


class TransportManager:
    name = "tm"

    def __init__(self, nid: int, *, interval: float = 0.02, attempts: int = 10) -> None:
        if interval <= 0 or attempts < 1:
            raise ValueError("interval must be positive and attempts at least 1")
        self.nid, self.interval, self.attempts = nid, interval, attempts
        self.next_id = 0
        self.pending: dict[int, list] = {}         # id -> [dest, msg, times sent]
        self.seen: dict[int, set[int]] = {}        # src -> ids taken
        self.low: dict[int, int] = {}              # src -> ids below this are old
        self.armed = False
        self.stats: dict[str, int] = {}

    def handle(self, event, now: float) -> list[Effect]:
        out: list[Effect] = []
        if isinstance(event, Send):
            if isinstance(event.msg, TokenMsg):
                # a newer token supersedes every older one still waiting for its ack
                for i in [i for i, (_, m, _) in self.pending.items()
                          if isinstance(m, TokenMsg) and m.seq < event.msg.seq]:
                    del self.pending[i]
                    bump(self.stats, "superseded")
            if any(d == event.dest and m == event.msg for d, m, _ in self.pending.values()):
                bump(self.stats, "coalesced")
            else:
                self.next_id += 1
                self.pending[self.next_id] = [event.dest, event.msg, 1]
                out.append(Send(event.dest, TMFrame(self.next_id, event.msg)))
        elif isinstance(event, Receive) and isinstance(event.msg, TMAck):
            if self.pending.pop(event.msg.id, None) is None:
                bump(self.stats, "stale_acks")
        elif isinstance(event, Receive) and isinstance(event.msg, TMFrame):
            src, i = event.src, event.msg.id
            out.append(Send(src, TMAck(i)))
            seen = self.seen.setdefault(src, set())
            if i in seen or i < self.low.get(src, 0):
                bump(self.stats, "duplicates")
            else:
                seen.add(i)
                if len(seen) > DEDUP:
                    self.low[src] = min(seen)
                    seen.discard(self.low[src])
                if isinstance(event.msg.msg, TokenMsg):
                    # a token reached this node: its own 911s (a join request, a
                    # claim to regenerate) are answered; one delivered whose ack
                    # was lost must not come back as a failure
                    for k in [k for k, (_, m, _) in self.pending.items()
                              if isinstance(m, Msg911) and m.orig == self.nid]:
                        del self.pending[k]
                        bump(self.stats, "superseded")
                out.append(Up(src, event.msg.msg))
        elif isinstance(event, TimerFired) and event.name == TIMER:
            self.armed = False
            for i, entry in list(self.pending.items()):
                dest, msg, sent = entry
                if sent >= self.attempts:
                    del self.pending[i]
                    bump(self.stats, "delivery_failures")
                    out.append(DeliveryFailed(msg))
                else:
                    entry[2] += 1
                    bump(self.stats, "retransmitted")
                    out.append(Send(dest, TMFrame(i, msg)))
        else:
            bump(self.stats, "unknown_event")
        if self.pending and not self.armed:
            self.armed = True
            out.append(SetTimer(TIMER, now + self.interval))
        return out
