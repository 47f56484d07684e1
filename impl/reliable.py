"""Reliable FIFO channels over a lossy network (NAKACK/UNICAST-like).

Theory of operation
-------------------
SEQUENCER "requires NAKACK and UNICAST" (seed 000, Comments): FORWARDs need
reliable FIFO unicast to the coordinator, DATA needs reliable FIFO multicast
from it.  The spec models both as one reliable FIFO channel per ordered pair
of members, ``chan[<<p, q>>]``, carrying FORWARD and DATA alike.  This layer
implements exactly that: one stream per (sender, receiver) pair, with its own
seqnos 1, 2, 3, ...; a ``Multicast`` is one ``Send`` per member of the
current view (the sender included, as in the spec's McastData).  Keeping one
stream per pair, rather than a NAKACK stream per sender plus a UNICAST stream
per pair, means a FORWARD and a DATA from p to q can never overtake each
other, which the spec's single FIFO channel promises.

Sender side: every frame sent is kept in ``unacked[dest]`` for
retransmission until ``release(dest, upto)`` frees it.  The receiver's
cumulative ``Ack`` calls ``release``; a stability protocol (pbcast.STABLE,
later) may call it too.  Receiver side: ``next[src]`` is the next seqno to
pass up; frames in ``[next, next + window)`` that arrive early wait in
``buf[src]``; a gap is reported at once with a ``Nak(lo, hi)``; a frame
below ``next`` or already buffered is a duplicate (counted, dropped, and
answered with an Ack so a sender whose Ack was lost learns it).  A frame at
or beyond ``next + window`` is dropped and counted: the sender retries it.

One timer, ``retransmit``, runs while anything is unacknowledged or any gap
is open.  When it fires the sender re-sends, per destination, its lowest
unacked frame (so progress never depends on a NAK that was lost) and its
highest (the "last message dropped" case: a receiver cannot NAK a frame it
never heard of), and every receiver re-NAKs its open gaps.

Flow control (credits per destination, as JGroups's UFC and MFC give a
sender): at most ``window`` frames to one destination are in flight
(sent, not yet acknowledged), the receiver's own window, so a receiver never
drops a frame for being too far ahead and nothing waits on the slow timer
path.  A send beyond that is queued in ``pending[dest]``, in order, and
goes out as Acks free credit (``stats["queued"]``); a multicast is one
such send per member, each destination with its own credit.  Nothing is
refused or dropped.  Backpressure: ``blocked`` is true while the frames
retained and queued reach ``max_backlog``; the application's sender waits
on it (impl/runtime.py, through ``Stack.blocked``), as a JGroups sender
blocks without credits.  The seeds assume reliable FIFO channels with no
bound; the credit window is how a bounded buffer keeps that promise: the
protocol layers above still see every frame, in order, only later.

NAKACK mode (``nakack=True``, the STABLE stack, seed 002): a ``Multicast``
gets one seqno per sender, the same for every destination (the spec's
per-sender numbering), and is sent to the other members of the view; the
layer above delivers its own copy.  The frame is kept once, in ``mbuf``,
and is freed only by ``collect(upto)``, which the STABLE layer calls when a
STABILITY digest says every member has delivered it: there are no ACKs, no
sender-side retransmission timer and no credit window; stability
bounds the buffer instead.  Received frames go up as they are (XData with
the sender's seqno): ordering, gap detection and the NAKs that fetch a
missing frame are the STABLE layer's, since its digests are built from the
same delivered/received vectors.  A NAK is served from ``mbuf``; a frame
already collected cannot be served (``stats["nak_released"]``).  Unicast
``Send`` and any other message pass through unreliably in both directions
(STABLE gossip is periodic and tolerates loss).

Members that leave the view stop being sent to: their retained frames are
dropped (``stats["released_left"]``).  Frames a left member sent before
it crashed may still arrive (spec: Crash loses them only for the receivers
it chooses), but a left member can no longer retransmit: so its stream
passes up only what arrives in order, and from its first gap on it is closed
(``stats["left_dropped"]``).  What is passed up is then always a prefix of
what it sent, as the spec's Crash, which empties a channel, allows; and the
timer stops NAKing a member that cannot answer.
"""

from __future__ import annotations

from collections import deque

from .codec import Ack, Nak, XData
from .events import Effect, Event, Multicast, Receive, Send, SetTimer, TimerFired, Up, ViewChange
from .layer import bump

TIMER = "retransmit"
ACK_TIMER = "ack"       # a delayed cumulative Ack (``ack_every`` > 1)


class Reliable:
    name = "reliable"

    def __init__(self, nid: int, members, *, retransmit_interval: float = 0.05,
                 window: int = 64, max_backlog: int = 4096, nakack: bool = False,
                 ack_every: int = 1, ack_delay: float = 0.005) -> None:
        if window < 1 or max_backlog < 1 or retransmit_interval <= 0 or not 1 <= ack_every <= window:
            raise ValueError("window, max_backlog and retransmit_interval must be positive, "
                             "ack_every within 1..window")
        self.nid = nid
        self.members: tuple[int, ...] = tuple(members)
        self.departed: set[int] = set()     # members a view change removed
        self.retransmit_interval = retransmit_interval
        self.window = window
        self.max_backlog = max_backlog
        self.stats: dict[str, int] = {}
        self.seq: dict[int, int] = {}                 # dest -> last seqno sent
        self.unacked: dict[int, dict[int, object]] = {}   # dest -> seqno -> body
        self.pending: dict[int, deque] = {}           # dest -> bodies waiting for credit
        self.ack_every, self.ack_delay = ack_every, ack_delay
        self.owed: dict[int, int] = {}                # src -> frames passed up since its last Ack
        self._ack_at: float | None = None
        self.next: dict[int, int] = {}                # src -> next seqno to pass up
        self.buf: dict[int, dict[int, object]] = {}   # src -> early frames
        self.closed: set[int] = set()               # left srcs whose stream had a gap
        self._timer_at: float | None = None
        self._now = 0.0
        self.nakack = nakack
        self.mseq = 0                                 # NAKACK: last multicast seqno
        self.mbuf: dict[int, object] = {}             # NAKACK: seqno -> body, until collected

    # ------------------------------------------------------------ public

    @property
    def retained(self) -> int:
        return sum(len(u) for u in self.unacked.values()) + len(self.mbuf)

    @property
    def queued(self) -> int:
        return sum(len(p) for p in self.pending.values())

    def idle(self) -> bool:
        """No frame unacknowledged and none queued (runtime.idle)."""
        return not (any(self.unacked.values()) or self.queued)

    @property
    def blocked(self) -> bool:
        """Backpressure: the application should wait before its next send."""
        return self.retained + self.queued >= self.max_backlog

    @property
    def retained_bytes(self) -> int:
        """Bytes of the bodies held for retransmission (raw payloads; a
        nested frame counts its encoded size)."""
        from . import codec
        bodies = [b for u in self.unacked.values() for b in u.values()] + list(self.mbuf.values())
        return sum(len(b) if isinstance(b, (bytes, bytearray)) else len(codec.encode(b)) for b in bodies)

    def collect(self, upto: int) -> int:
        """NAKACK stability hook: forget own multicasts with seqno <= ``upto``
        (every member has delivered them).  Returns how many were freed."""
        gone = [q for q in self.mbuf if q <= upto]
        for q in gone:
            del self.mbuf[q]
        bump(self.stats, "collected", len(gone))
        return len(gone)

    def release(self, dest: int, upto: int) -> int:
        """Stability hook: forget frames to ``dest`` with seqno <= ``upto``.
        Returns how many were freed."""
        u = self.unacked.get(dest)
        if not u:
            return 0
        gone = [q for q in u if q <= upto]
        for q in gone:
            del u[q]
        return len(gone)

    def handle(self, event: Event, now: float) -> list[Effect]:
        out: list[Effect] = []
        self._now = now
        if self.nakack:
            self._handle_nakack(event, out)
            return out
        if isinstance(event, Send):
            self._send(event.dest, event.msg, out)
        elif isinstance(event, Multicast):
            for m in self.members:
                self._send(m, event.msg, out)
        elif isinstance(event, Receive):
            self._receive(event.src, event.msg, out)
        elif isinstance(event, TimerFired) and event.name == TIMER:
            self._timer_at = None
            self._on_timer(out)
        elif isinstance(event, TimerFired) and event.name == ACK_TIMER:
            self._ack_at = None
            for src in [s for s, k in self.owed.items() if k]:
                self._ack(src, out)
        elif isinstance(event, ViewChange):
            old = set(self.members)
            self.members = tuple(event.view.members)
            # a member the view removed never acknowledges again: sending to it
            # would retransmit forever (a layer above may still address it, e.g.
            # a FORWARD to a coordinator it has not yet noticed is gone)
            self.departed = (self.departed | (old - set(self.members))) - set(self.members)
            for dest in [d for d in self.unacked if d not in self.members]:
                bump(self.stats, "released_left", len(self.unacked.pop(dest)))
            for dest in [d for d in self.pending if d not in self.members]:
                bump(self.stats, "released_left", len(self.pending.pop(dest)))
            for src in list(self.buf):
                if src not in self.members and self.buf[src]:
                    self.closed.add(src)
                    bump(self.stats, "left_dropped", len(self.buf.pop(src)))
        for dest in [d for d, p in self.pending.items() if p]:      # credit freed by an Ack or release
            self._drain(dest, out)
        self._arm(now, out)
        return out

    # ------------------------------------------------------------ NAKACK mode

    def _handle_nakack(self, event: Event, out: list[Effect]) -> None:
        if isinstance(event, Multicast):
            self.mseq += 1
            self.mbuf[self.mseq] = event.msg
            bump(self.stats, "sent")
            for m in self.members:
                if m != self.nid:
                    out.append(Send(m, XData(self.nid, self.mseq, event.msg)))
        elif isinstance(event, Send):
            out.append(Send(event.dest, event.msg))           # unreliable pass-through
        elif isinstance(event, Receive):
            msg = event.msg
            if getattr(msg, "sender", event.src) != event.src:
                bump(self.stats, "bad_sender")
            elif isinstance(msg, Nak):
                for q in range(msg.lo, min(msg.hi, self.mseq) + 1):
                    if q in self.mbuf:
                        bump(self.stats, "retransmitted")
                        out.append(Send(event.src, XData(self.nid, q, self.mbuf[q])))
                    else:
                        bump(self.stats, "nak_released")
            elif isinstance(msg, Ack):
                bump(self.stats, "unknown_message")
            else:
                out.append(Up(event.src, msg))
        elif isinstance(event, ViewChange):
            self.members = tuple(event.view.members)

    # ------------------------------------------------------------ sender

    def _send(self, dest: int, body, out: list[Effect]) -> None:
        if dest in self.departed:
            bump(self.stats, "to_departed")
            return
        if self.pending.get(dest) or len(self.unacked.get(dest, ())) >= self.window:
            self.pending.setdefault(dest, deque()).append(body)     # no credit: wait in order
            bump(self.stats, "queued")
            return
        self._transmit(dest, body, out)

    def _drain(self, dest: int, out: list[Effect]) -> None:
        p, u = self.pending[dest], self.unacked.setdefault(dest, {})
        while p and len(u) < self.window:
            self._transmit(dest, p.popleft(), out)
        if not p:
            del self.pending[dest]

    def _transmit(self, dest: int, body, out: list[Effect]) -> None:
        q = self.seq.get(dest, 0) + 1
        self.seq[dest] = q
        self.unacked.setdefault(dest, {})[q] = body
        bump(self.stats, "sent")
        out.append(Send(dest, XData(self.nid, q, body)))

    def _resend(self, dest: int, q: int, out: list[Effect]) -> None:
        bump(self.stats, "retransmitted")
        out.append(Send(dest, XData(self.nid, q, self.unacked[dest][q])))

    # ------------------------------------------------------------ receiver

    def _receive(self, src: int, msg, out: list[Effect]) -> None:
        if getattr(msg, "sender", src) != src:
            bump(self.stats, "bad_sender")      # frame claims another origin
            return
        if isinstance(msg, XData):
            self._on_data(src, msg, out)
        elif isinstance(msg, Nak):
            u = self.unacked.get(src, {})
            for q in range(msg.lo, min(msg.hi, self.seq.get(src, 0)) + 1):
                if q in u:
                    self._resend(src, q, out)
                else:
                    bump(self.stats, "nak_released")   # freed already: acked or left
        elif isinstance(msg, Ack):
            self.release(src, msg.upto)
        else:
            bump(self.stats, "unknown_message")

    def _ack(self, src: int, out: list[Effect]) -> None:
        self.owed[src] = 0
        out.append(Send(src, Ack(self.nid, self.next.get(src, 1) - 1)))

    def _on_data(self, src: int, msg: XData, out: list[Effect]) -> None:
        nxt = self.next.get(src, 1)
        buf = self.buf.setdefault(src, {})
        q = msg.seqno
        if q < nxt or q in buf:
            bump(self.stats, "duplicates")
            out.append(Send(src, Ack(self.nid, nxt - 1)))
            return
        if src not in self.members and (src in self.closed or q != nxt):
            self.closed.add(src)
            bump(self.stats, "left_dropped")
            return
        if q >= nxt + self.window:
            bump(self.stats, "window_drop")
            return
        highest = max(buf, default=nxt - 1)
        buf[q] = msg.body
        passed = 0
        while nxt in buf:
            out.append(Up(src, buf.pop(nxt)))
            nxt += 1
            passed += 1
        self.next[src] = nxt
        if passed:
            bump(self.stats, "received", passed)
            self.owed[src] = self.owed.get(src, 0) + passed
            if self.owed[src] >= self.ack_every:
                self._ack(src, out)
            elif self._ack_at is None:          # delayed Ack: at most ack_delay late
                self._ack_at = self._now + self.ack_delay
                out.append(SetTimer(ACK_TIMER, self._ack_at))
        if q > highest + 1:
            # q opened a new gap above everything seen: ask for it now (a frame
            # inside a known gap opens none; the timer re-NAKs known gaps)
            out.append(Send(src, Nak(self.nid, highest + 1, q - 1)))

    # ------------------------------------------------------------ timer

    def _gaps(self, src: int) -> list[tuple[int, int]]:
        buf = self.buf.get(src)
        if not buf:
            return []
        gaps, lo = [], self.next.get(src, 1)
        for q in sorted(buf):
            if q > lo:
                gaps.append((lo, q - 1))
            lo = q + 1
        return gaps

    def _on_timer(self, out: list[Effect]) -> None:
        for dest, u in self.unacked.items():
            if u:
                lo, hi = min(u), max(u)
                self._resend(dest, lo, out)
                if hi != lo:
                    self._resend(dest, hi, out)
        for src in self.buf:
            if src not in self.members:
                continue
            for lo, hi in self._gaps(src):
                bump(self.stats, "naks_repeated")
                out.append(Send(src, Nak(self.nid, lo, hi)))

    def _pending(self) -> bool:
        return any(self.unacked.values()) or any(b for s, b in self.buf.items() if s in self.members)

    def _arm(self, now: float, out: list[Effect]) -> None:
        if self._timer_at is None and self._pending():
            self._timer_at = now + self.retransmit_interval
            out.append(SetTimer(TIMER, self._timer_at))
