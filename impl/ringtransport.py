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
  ``TMFrame(id, msg)`` (ids count up per node) and waits in ``pending``.
  A message equal to one still pending to the same node (confirmed or
  not: until its ``TMTaken`` comes back) is not sent twice: the spec's
  messages in flight are a set (a Starving node's repeated 911, a veto
  answered twice), so a second copy sent after the receiver's ack would be
  taken twice where the spec has it once.  If the receiver had already
  taken the first copy, the second stays in flight for ever in the spec's
  terms, which safety allows (a Starving node asks again).
* The take handshake.  The receiver does not pass a first copy up: it acks
  it (``TMAck``) and holds it.  The sender decides, once: on the first ack
  of a frame it has not given up on it answers ``TMConfirm`` (delivered);
  on an ack of one it has reported undelivered, ``TMAbort``.  The receiver
  takes the message (``Up``) on the confirm and answers ``TMTaken``, which
  ends the sender's wait; on the abort it drops the message and has been
  suspected (below).  Every repeated ack gets the same answer (``decided``,
  the last ``DEDUP`` decisions), every repeated confirm another
  ``TMTaken``.  So of "the receiver takes it" and "the sender reports it
  undelivered" exactly one happens, as spec/RaincoreFlush assumes: under
  ``FalseSuspicion`` a node reported unreachable never takes the frame.
* ``TimerFired("retry")``: every pending frame is sent again (a confirmed
  one: its ``TMConfirm``); one sent ``attempts`` times without an ack is
  given up, and the ring is told: ``DeliveryFailed(msg)``, an effect (the
  node hands it to the ring as the event of the same name).  So a node is
  suspected after ``attempts * interval`` seconds of silence, which is
  what the failure detector costs.  Frames given up in one round are
  reported in order and each leaves ``pending`` only when the ring takes
  its report (``forget``): a message the ring passes on meanwhile that
  equals one still to be reported is that message (the spec's messages in
  transit are a set), not a second frame outliving its report.  A confirmed frame whose ``TMTaken``
  never comes (its receiver died after its ack) is dropped unreported:
  the decision was "delivered".  Each held frame is acked again; one held
  for twice the sender's give-up time without a decision (the sender is
  dead or cut off) is dropped.
* The report is final for the node, not for one frame: once a frame to a
  node is reported undelivered, every later frame to it still unconfirmed
  is aborted at its first ack (and reported to the ring), so the node takes
  nothing more from this sender and learns at once that it was suspected
  (spec/RaincoreFlush ``LossySuspectReportFinal`` holds; ``SuspectLeaves``,
  a node taking frames until it learns, breaks ConsistentHistory over the
  lossy ring).  A frame confirmed before the report is beyond its reach: a
  node paused after its ack takes it on resuming (docs/raincore.md, section
  8; outside LossySuspectReportFinal).  A restarted node comes back under a new id.
* ``Suspected(by, msg)``: an effect, out of the stack to the runtime, when
  a held frame is aborted or dropped undecided: ``by`` has (or may have)
  reported this node unreachable, so it must stop taking part; on the
  cluster it leaves (impl/runtime.py, exit status ``SHUNNED``) and comes
  back, if ever, as a new node (the spec's ``ShunSuspected`` reading),
  after settling its own open frames (impl/stacks/raincore.py
  ``RingStack.leave``), so that their receivers are not left waiting in turn.
* A newer token supersedes the older ones still pending unconfirmed: they
  are no longer retried and never reported (a late ack of one is
  confirmed).  Without this a token whose acks were all lost before its
  receiver crashed is reported as not delivered after the newer token has
  gone round, and the ring re-sends a stale token; the layer drops it by
  its sequence number, but spec/RaincoreFlush, which has no sequence
  numbers, cannot (found by the campaign on the lossy network, seeds 27
  and 38).  A stale token is never valid ("A token is valid when its
  sequence number is bigger than the lastToken Sequence number"), so
  nothing is lost.  Likewise a token taken answers the node's own pending
  911s (a joiner's request was granted, a claim is moot): they are
  dropped, not reported (campaign seeds 46, 157).

Adaptive patience (``patience_cap``, the cluster's nodes; the simulators
keep the fixed give-up time, so a seed's run stays the same).  On a loaded
machine a live node's acks come late: a stall, the scheduler, a burst of
datagrams queued ahead.  A fixed give-up time then reports live nodes (the
kill campaigns under a CPU hog and the 30-minute soaks saw the ring lose
every first node to stalls alone).  So the layer keeps the largest recent
ack delay (from a frame's first send to its first ack; halved every
``SLOW_HALF_LIFE`` seconds) and its patience is ``PATIENCE_FACTOR`` times
that, between the fixed give-up time and the cap.  A frame sent
``attempts`` times is given up only once its receiver has been silent (no
datagram of this layer from it) for the patience and the frame is as old;
at the cap's age it is given up whatever it heard.  A receiver holds a
frame while its sender was heard within twice the patience, at most twice
the cap.  What changes is only when a verdict comes, never what it means:
the handshake still makes it final, so safety is the spec's whatever the
timing (the spec's ``FalseSuspicion`` has no clock); a crash costs up to
the cap to detect where the fixed detector took the give-up time.

Limits, said plainly: a node that is alive but silent for the whole
time-out (paused, overloaded, a partition) is still reported as failed;
the handshake only makes that verdict final, so the run stays within the
spec's ``FalseSuspicion`` (the node never takes the frame; it leaves),
and what the history then shows is docs/raincore.md's finding on a false
suspicion unless ``ShunSuspected`` is declared.  The price is two more
datagrams per hop (confirm and taken: four in all, against frame and
ack) and a round trip more before the receiver takes the token; the
sender's wait now also ends only with ``TMTaken``, so a kill at a safe
point (impl/runtime.py ``ring_safe``) waits for it, and for any frame the
node holds undecided.  A sender that dies mid-handshake (a real crash,
never a kill at a safe point) before its receiver has a decision loses
the message (a token: the lossy ring regenerates it) and its receiver,
which leaves as suspected after twice the give-up time.  The wire format of the
frames is in impl/stacks/raincore.py (codec types 32 to 36).
"""

from __future__ import annotations

from dataclasses import dataclass

from .events import Effect, Receive, Send, SetTimer, TimerFired, Up
from .layer import bump
from .raincore import DeliveryFailed, Msg911, TokenMsg

TIMER = "retry"
DEDUP = 4096                  # ids remembered per sender, and decisions remembered (older ones are forgotten)
PATIENCE_FACTOR = 3.0         # adaptive: silence of this many times the largest recent ack delay gives a node up
SLOW_HALF_LIFE = 60.0         # seconds: an ack delay seen counts half as much this much later


@dataclass(frozen=True, slots=True)
class TMFrame:
    id: int
    msg: object


@dataclass(frozen=True, slots=True)
class TMAck:
    """The receiver holds frame ``id`` and asks the sender's decision."""
    id: int


@dataclass(frozen=True, slots=True)
class TMConfirm:
    """The sender's decision: take frame ``id``."""
    id: int


@dataclass(frozen=True, slots=True)
class TMAbort:
    """The sender's decision: frame ``id`` was reported undelivered; drop it."""
    id: int


@dataclass(frozen=True, slots=True)
class TMTaken:
    """The receiver took frame ``id``: the sender's wait ends."""
    id: int


@dataclass(frozen=True, slots=True)
class Suspected:
    """An effect: ``by`` has reported this node unreachable (its frame ``msg``
    was aborted, or no decision came); the node must stop taking part."""
    by: int
    msg: object


class TransportManager:
    name = "tm"

    def __init__(self, nid: int, *, interval: float = 0.02, attempts: int = 10,
                 patience_cap: float | None = None) -> None:
        """``attempts * interval``: the give-up time.  ``patience_cap``: the
        adaptive detector (module docstring, "Adaptive patience"); None keeps
        the fixed give-up time (the simulators: a seed's run stays the same)."""
        if interval <= 0 or attempts < 1:
            raise ValueError("interval must be positive and attempts at least 1")
        if patience_cap is not None and patience_cap < interval * attempts:
            raise ValueError("patience_cap must be at least the give-up time (interval * attempts)")
        self.nid, self.interval, self.attempts = nid, interval, attempts
        self.patience_cap = patience_cap
        self.heard: dict[int, float] = {}          # node -> when a datagram of this layer last came from it
        self.first_sent: dict[int, float] = {}     # pending id -> when it was first sent (adaptive only)
        self.slow = 0.0                            # the largest recent ack delay (decays, SLOW_HALF_LIFE)
        self.slow_at = 0.0
        self.next_id = 0
        self.pending: dict[int, list] = {}         # id -> [dest, msg, times sent]
        self.confirmed: set[int] = set()           # ids of pending frames confirmed, waiting for TMTaken
        self.decided: dict[int, bool] = {}         # id -> confirmed (True) or aborted (False), oldest first
        self.reported: set[int] = set()            # nodes reported unreachable: final for the node
        # ids given up in this retry round whose DeliveryFailed the ring has not yet
        # taken (``forget``): an equal message the ring sends meanwhile is one with it
        self.failing: set[int] = set()
        # receiver
        self.held: dict[tuple[int, int], list] = {}   # (src, id) -> [msg, times acked]: waiting for the decision
        self.seen: dict[int, set[int]] = {}        # src -> ids received
        self.low: dict[int, int] = {}              # src -> ids below this are old
        self.armed = False
        self.stats: dict[str, int] = {}

    def _decide(self, i: int, confirmed: bool) -> None:
        self.decided[i] = confirmed
        if len(self.decided) > DEDUP:
            del self.decided[next(iter(self.decided))]

    def _drop_unconfirmed(self, which) -> None:
        """Pending frames no longer worth sending (``which(msg)``): not
        retried, never reported; a late ack of one is confirmed."""
        for i in [i for i, (_, m, _) in self.pending.items()
                  if i not in self.confirmed and i not in self.failing and which(m)]:
            del self.pending[i]
            self._decide(i, True)
            bump(self.stats, "superseded")

    def handle(self, event, now: float) -> list[Effect]:
        out: list[Effect] = []
        msg = event.msg if isinstance(event, (Send, Receive)) else None
        if isinstance(event, Receive):
            self.heard[event.src] = now
        if isinstance(event, Send):
            if isinstance(msg, TokenMsg):
                # a newer token supersedes every older one still waiting for its ack
                self._drop_unconfirmed(lambda m: isinstance(m, TokenMsg) and m.seq < msg.seq)
            if any(d == event.dest and m == msg for d, m, _ in self.pending.values()):
                bump(self.stats, "coalesced")
            else:
                self.next_id += 1
                self.pending[self.next_id] = [event.dest, msg, 1]
                if self.patience_cap is not None:
                    self.first_sent[self.next_id] = now
                out.append(Send(event.dest, TMFrame(self.next_id, msg)))
        elif isinstance(msg, TMAck):
            entry = self.pending.get(msg.id)
            if msg.id in self.failing:
                entry = None                     # given up: its abort below, its report already made
            if entry is not None and msg.id not in self.confirmed and entry[0] in self.reported:
                # a node once reported takes nothing more from this node: the
                # report is final for the node, not for one frame (otherwise it
                # goes on taking tokens and claims until it learns, and over the
                # lossy ring two live nodes commit two views at one index:
                # spec/RaincoreFlush LossySuspectLeaves); it learns now, and
                # the ring is told of this frame too
                del self.pending[msg.id]
                self._decide(msg.id, False)
                bump(self.stats, "delivery_failures")
                out.append(DeliveryFailed(entry[1]))
            elif entry is not None and msg.id not in self.confirmed:
                # the first ack before the give-up: delivered, final
                entry[2] = 1
                if msg.id in self.first_sent:
                    self._observe(now - self.first_sent[msg.id], now)
                self.confirmed.add(msg.id)
                self._decide(msg.id, True)
                bump(self.stats, "confirmed")
            if msg.id in self.decided:
                # the decision, again if the receiver asks again (its copy was lost)
                out.append(Send(event.src, (TMConfirm if self.decided[msg.id] else TMAbort)(msg.id)))
                bump(self.stats, "aborted" if not self.decided[msg.id] else "answered")
            else:
                bump(self.stats, "stale_acks")
        elif isinstance(msg, TMTaken):
            if self.pending.pop(msg.id, None) is None:
                bump(self.stats, "stale_taken")
            self.confirmed.discard(msg.id)
        elif isinstance(msg, TMFrame):
            src, i = event.src, msg.id
            seen = self.seen.setdefault(src, set())
            if (src, i) in self.held:
                out.append(Send(src, TMAck(i)))           # a retransmission: our ack was lost
                bump(self.stats, "duplicates")
            elif i in seen or i < self.low.get(src, 0):
                bump(self.stats, "duplicates")            # decided already: the sender has our ack
            else:
                seen.add(i)
                if len(seen) > DEDUP:
                    self.low[src] = min(seen)
                    seen.discard(self.low[src])
                self.held[(src, i)] = [msg.msg, 1, now]
                out.append(Send(src, TMAck(i)))
        elif isinstance(msg, TMConfirm):
            src, i = event.src, msg.id
            held = self.held.pop((src, i), None)
            if held is not None or i in self.seen.get(src, ()):
                out.append(Send(src, TMTaken(i)))         # again if our first TMTaken was lost
            if held is None:
                bump(self.stats, "stale_decisions")
            else:
                if isinstance(held[0], TokenMsg):
                    # a token reached this node: its own 911s (a join request, a
                    # claim to regenerate) are answered; one delivered whose ack
                    # was lost must not come back as a failure
                    self._drop_unconfirmed(lambda m: isinstance(m, Msg911) and m.orig == self.nid)
                out.append(Up(src, held[0]))
        elif isinstance(msg, TMAbort):
            held = self.held.pop((event.src, msg.id), None)
            if held is None:
                bump(self.stats, "stale_decisions")
            else:
                bump(self.stats, "suspected")
                out.append(Suspected(event.src, held[0]))
        elif isinstance(event, TimerFired) and event.name == TIMER:
            self.armed = False
            self._retry(out, now)
        else:
            bump(self.stats, "unknown_event")
        if (self.pending or self.held) and not self.armed:
            self.armed = True
            out.append(SetTimer(TIMER, now + self.interval))
        return out

    def forget(self, msg) -> None:
        """The ring takes the ``DeliveryFailed`` of a frame given up this
        round: the frame is gone now.  Until then a message equal to it that
        the ring sends (another failure passed on to the same node) is the
        same message, as in the spec's set of messages in transit: several
        frames given up in one round are reported in order, and a pass-on
        must not outlive a report that comes after it in that order."""
        for i in [i for i in self.failing if self.pending[i][1] == msg][:1]:
            self.failing.discard(i)
            del self.pending[i]

    def _observe(self, delay: float, now: float) -> None:
        """An ack came ``delay`` after its frame was first sent: the largest
        recent such delay, halved every ``SLOW_HALF_LIFE`` seconds."""
        self.slow, self.slow_at = max(delay, self._slow(now)), now
        self.stats["slow_ms"] = round(1000 * self.slow)

    def _slow(self, now: float) -> float:
        """The largest recent ack delay as it stands at ``now`` (decayed)."""
        return self.slow * 0.5 ** ((now - self.slow_at) / SLOW_HALF_LIFE)

    def patience(self, now: float) -> float:
        """Seconds of silence after which a node is given up: the fixed
        give-up time, or (adaptive) ``PATIENCE_FACTOR`` times the largest
        recent ack delay, between the give-up time and the cap."""
        base = self.interval * self.attempts
        if self.patience_cap is None:
            return base
        return min(self.patience_cap, max(base, PATIENCE_FACTOR * self._slow(now)))

    def _waiting(self, i: int, dest: int, now: float) -> bool:
        """Adaptive: frame ``i``, sent ``attempts`` times, still waits while
        ``dest`` has been heard from within the patience (it is alive: it
        will ack) and the frame is younger than the cap."""
        if self.patience_cap is None:
            return False
        patience, age = self.patience(now), now - self.first_sent.get(i, now)
        return age < self.patience_cap and (now - self.heard.get(dest, -1e9) < patience or age < patience)

    def _holding(self, src: int, since: float, now: float) -> bool:
        if self.patience_cap is None:
            return False
        return (now - since < 2 * self.patience_cap
                and now - self.heard.get(src, since) < 2 * self.patience(now))

    def _retry(self, out: list, now: float) -> None:
        for i in list(self.failing):           # reported last round (a driver that never called forget)
            self.forget(self.pending[i][1])
        for i in [i for i in self.first_sent if i not in self.pending]:
            del self.first_sent[i]
        for i, entry in list(self.pending.items()):
            dest, msg, sent = entry
            confirmed = i in self.confirmed
            if sent < self.attempts or self._waiting(i, dest, now):
                entry[2] += 1
                bump(self.stats, "retransmitted")
                out.append(Send(dest, TMConfirm(i) if confirmed else TMFrame(i, msg)))
                continue
            self.confirmed.discard(i)
            if confirmed:
                del self.pending[i]
                bump(self.stats, "untaken")           # the receiver died after its ack: nothing to report
            else:
                self.failing.add(i)                   # until the ring takes its report (``forget``)
                self._decide(i, False)
                self.reported.add(dest)
                bump(self.stats, "delivery_failures")
                out.append(DeliveryFailed(msg))
        for key, entry in list(self.held.items()):
            # twice the sender's give-up time: a live sender has answered by then
            # (adaptive: twice the patience of silence from the sender, at most
            # twice the cap after the frame came)
            if entry[1] < 2 * self.attempts or self._holding(key[0], entry[2], now):
                entry[1] += 1
                bump(self.stats, "reacked")
                out.append(Send(key[0], TMAck(key[1])))
            else:
                # no decision: the sender is dead, or cut off from us (its abort
                # lost); either way the frame may not be taken
                del self.held[key]
                bump(self.stats, "suspected")
                out.append(Suspected(key[0], entry[0]))
