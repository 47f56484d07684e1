"""pbcast.STABLE over NAKACK: stability-driven garbage collection (seed 002).

Theory of operation
-------------------
Contract: spec/Stable/Stable.tla (seed 002, "pbcast.STABLE protocol" and
"Last Message dropped in NAKACK").  Names are the spec's: ``view``, ``sent``,
``delivered``, ``received``, ``purged``, ``digest``, ``heardFrom``; each step
is one spec action, reported by a ``Trace`` effect carrying this member's
post-state.  The stack is ``[Transport, Reliable(nakack=True), Stable]``:
the reliable layer numbers each multicast per sender and keeps it in its
retransmission buffer until this layer calls ``reliable.collect(upto)``.

* ``AppSend`` is **Multicast(p)**: the next seqno; delivered at once here
  (a member's own message never goes through the network).
* A data frame (``XData``, the sender's seqno k) from p is **ReceiveData(q,
  p)** when q had not heard of k before: delivered if it is the next one,
  else dropped (as the spec's NAKACK abstraction does) but it tells q that p
  got that far, and q NAKs the gap at once.  The next frame of a seqno q
  already knew of (a gap it NAKed, or a last message a STABILITY digest
  revealed) is **Retransmit(q, p)**.  Anything else (duplicates, frames
  above a gap q already knew of) changes no spec variable and is dropped
  without a trace.  The ``nak`` timer re-NAKs open gaps.
* Timer ``gossip`` is **SendStable(p)**: the delivered vector over the view
  goes to the other members, and is merged into the own digest.  The timer
  runs only while something is unstable here (a delivered message not yet
  purged, or a digest high above what was purged), whose STABLE messages ask
  for replies, or once after such a request: so a quiet group stops.
* A STABLE vector from p is **ReceiveStable(q, p)**: with
  ``heard_from_reset`` (the spec's ResetOnDifferentMembers, the seed's fix) a
  vector over other members than the digest's resets heardFrom and is not
  merged; otherwise it is merged (min of lows, max of highs) and p is heard
  from.  The same flag is also the spec's ResetOnViewChange (a view change
  resets heardFrom): the seed's fix alone fails SafeGC (model SeedFix), so
  this implementation builds only both resets or neither.  The flawed build
  (``heard_from_reset=False``) merges anyway and keeps heardFrom across
  view changes, as in the seed's A,B,C example.
* Once heardFrom is empty the ``stability`` timer is set, staggered by rank
  in the view (any member may send; a received STABILITY cancels one's own):
  **SendStability(p)** multicasts the digest, purges up to its lows (and
  frees the own frames in the reliable layer), learns from its highs and
  starts a new round.  **ReceiveStability(q, p)** does the same on receipt.
  Learning a high above what was delivered triggers the NAK that fetches a
  sender's lost last message.
* **Join(j)** and **InstallView(p)** come from the membership oracle (the
  simulator or a test harness, see ``admit``): the coordinator installs the
  joiner's view at once and hands it its delivered vector as the join
  digest; the other members install it later (``ViewChange``).

Gossip messages carry a per-sender counter so that a duplicate or an older
copy is dropped: the spec's network holds at most one STABLE and one
STABILITY per link and sender (a newer one replaces an older in flight),
which holds here as long as the gossip interval exceeds the network delay.
"""

from __future__ import annotations

from dataclasses import dataclass

from .codec import Nak, XData
from .events import (AppSend, CancelTimer, Deliver, Effect, Event, Multicast, Receive, Send, SetTimer,
                     TimerFired, Trace, TraceEvent, View, ViewChange)
from .layer import bump

# ---------------------------------------------------------------- wire messages

@dataclass(frozen=True, slots=True)
class StableMsg:
    """STABLE gossip: ``sender``'s delivered ``vector`` (sorted (member,
    seqno) pairs) over its view; ``gseq`` counts the sender's STABLE messages;
    ``reply``: the sender has something unstable and asks every receiver to
    gossip back (a member with nothing unstable answers, but does not ask)."""
    sender: int
    gseq: int
    vector: tuple[tuple[int, int], ...]
    reply: bool = False


@dataclass(frozen=True, slots=True)
class StabilityMsg:
    """STABILITY: ``sender``'s round digest as sorted (member, low, high)
    triples; ``sseq`` counts the sender's STABILITY messages."""
    sender: int
    sseq: int
    digest: tuple[tuple[int, int, int], ...]


# the bytes of these messages on the wire: impl/stacks/stable.py (codec 10-11)



# ---------------------------------------------------------------- the layer

GOSSIP, STABILITY, NAK = "gossip", "stability", "nak"


class Stable:
    name = "stable"

    def __init__(self, nid: int, members, reliable, *, join_digest: dict | None = None,
                 heard_from_reset: bool = True, gossip_interval: float | None = 0.05,
                 stability_delay: float = 0.005, nak_interval: float = 0.02,
                 tracing: bool = True) -> None:
        """``members``: the first view, or () for a member that joins later
        with ``join_digest`` (the coordinator's delivered vector).
        ``gossip_interval=None`` switches STABLE off (nothing is collected:
        the memory benchmark's baseline)."""
        self.nid = nid
        self.reliable = reliable
        self.heard_from_reset = heard_from_reset
        self.gossip_interval = gossip_interval
        self.stability_delay = stability_delay
        self.nak_interval = nak_interval
        self.tracing = tracing
        self.join_digest = dict(join_digest or {})
        self.view: frozenset[int] = frozenset(members)
        self.sent = 0
        self.delivered: dict[int, int] = {}
        self.received: dict[int, int] = {}
        self.purged: dict[int, int] = {}
        self.digest: dict[int, tuple[int, int]] = {x: (0, 0) for x in self.view}
        self.heardFrom: set[int] = set(self.view)
        self.stats: dict[str, int] = {}
        self._gseq = self._sseq = 0
        self._last_gseq: dict[int, int] = {}
        self._last_sseq: dict[int, int] = {}
        self._armed: dict[str, bool] = {GOSSIP: False, STABILITY: False, NAK: False}
        self._owe_reply = False

    # ------------------------------------------------------------ views of the state

    def state(self) -> dict:
        """This member's spec variables, JSON-ready (member ids as string keys;
        zero entries of the vectors are left out, the spec's default)."""
        def vec(d):
            return {str(x): k for x, k in sorted(d.items()) if k}
        return {"view": sorted(self.view), "sent": self.sent, "delivered": vec(self.delivered),
                "received": vec(self.received), "purged": vec(self.purged),
                "digest": {str(x): list(e) for x, e in sorted(self.digest.items())},
                "heardFrom": sorted(self.heardFrom)}

    def vector(self) -> dict[int, int]:
        return {x: self.delivered.get(x, 0) for x in sorted(self.view)}

    def _active(self) -> bool:
        """Something here is not yet stable: a delivered message not purged,
        or a digest high above what was purged."""
        return any(self.delivered.get(x, 0) > self.purged.get(x, 0) or e[1] > self.purged.get(x, 0)
                   for x, e in self.digest.items())

    def _wants_gossip(self) -> bool:
        """Gossip while something is unstable here, and answer once a STABLE
        that asked for replies: otherwise a member with nothing unstable would
        never be heard from again by one that missed a STABILITY (measured:
        2 of 500 campaign runs livelocked without the replies)."""
        return self._active() or self._owe_reply

    def _gaps(self) -> list[int]:
        return [p for p, r in sorted(self.received.items()) if p != self.nid and self.delivered.get(p, 0) < r]

    def _trace(self, name: str, msg=None, **params):
        if not self.tracing:
            return None
        return Trace(TraceEvent(name, self.nid, msg, params, self.state()))

    # ------------------------------------------------------------ dispatch

    def handle(self, event: Event, now: float) -> list[Effect]:
        out: list = []
        if isinstance(event, AppSend):
            self._multicast(event.payload, out)
        elif isinstance(event, Receive):
            msg = event.msg
            if not self.view:
                bump(self.stats, "before_join")
            elif isinstance(msg, XData) and isinstance(msg.body, (bytes, bytearray)):
                self._on_data(event.src, msg.seqno, bytes(msg.body), out)
            elif isinstance(msg, StableMsg):
                self._on_stable(event.src, msg, out)
            elif isinstance(msg, StabilityMsg):
                self._on_stability(event.src, msg, out)
            else:
                bump(self.stats, "unknown_message")
        elif isinstance(event, TimerFired):
            self._armed[event.name] = False
            if event.name == GOSSIP:
                if self.view and self._wants_gossip() and self.gossip_interval is not None:
                    self._send_stable(out)
            elif event.name == STABILITY:
                if self.view and not self.heardFrom:
                    self._send_stability(out)
            elif event.name == NAK:
                self._nak_gaps(out)
        elif isinstance(event, ViewChange):
            self._view_change(event.view, out)
        self._arm(now, out)
        return [e for e in out if e is not None]

    def _arm(self, now: float, out: list) -> None:
        if not self.view:
            return
        if self.gossip_interval is not None and not self._armed[GOSSIP] and self._wants_gossip():
            self._armed[GOSSIP] = True
            out.append(SetTimer(GOSSIP, now + self.gossip_interval))
        if not self.heardFrom and not self._armed[STABILITY]:
            rank = sorted(self.view).index(self.nid)
            self._armed[STABILITY] = True
            out.append(SetTimer(STABILITY, now + self.stability_delay * (1 + rank)))
        if self._gaps() and not self._armed[NAK]:
            self._armed[NAK] = True
            out.append(SetTimer(NAK, now + self.nak_interval))

    # ------------------------------------------------------------ data (NAKACK)

    # Multicast(p)
    def _multicast(self, payload: bytes, out: list) -> None:
        if not self.view:
            bump(self.stats, "send_before_join")
            return
        self.sent += 1
        k = self.sent
        self.delivered[self.nid] = k
        self.received[self.nid] = k
        out += [self._trace("Multicast", {"type": "data", "from": self.nid, "seq": k}),
                Multicast(payload), Deliver(self.nid, k, payload)]

    # ReceiveData(q, p) / Retransmit(q, p)
    def _on_data(self, p: int, k: int, payload: bytes, out: list) -> None:
        if p == self.nid:
            bump(self.stats, "own_frame")
            return
        d, r = self.delivered.get(p, 0), self.received.get(p, 0)
        msg = {"type": "data", "from": p, "to": self.nid, "seq": k}
        if k == d + 1:
            self.delivered[p] = k
            if k <= r:
                out.append(self._trace("Retransmit", None, p=p))
            else:
                self.received[p] = k
                out.append(self._trace("ReceiveData", msg, p=p))
            out.append(Deliver(p, k, payload))
        elif k > d + 1 and k > r:
            # above a gap: dropped, as the spec's NAKACK abstraction, but p got this far
            self.received[p] = k
            bump(self.stats, "above_gap")
            out.append(self._trace("ReceiveData", msg, p=p))
            out.append(Send(p, Nak(self.nid, d + 1, k)))
        else:
            bump(self.stats, "duplicates" if k <= d else "above_known_gap")

    def _nak_gaps(self, out: list) -> None:
        for p in self._gaps():
            bump(self.stats, "naks")
            out.append(Send(p, Nak(self.nid, self.delivered.get(p, 0) + 1, self.received[p])))

    # ------------------------------------------------------------ STABLE

    def _merge(self, vector: dict[int, int]) -> None:
        for x, (lo, hi) in list(self.digest.items()):
            if x in vector:
                self.digest[x] = (min(lo, vector[x]), max(hi, vector[x]))

    # SendStable(p)
    def _send_stable(self, out: list) -> None:
        v = self.vector()
        self._merge(v)
        self.heardFrom.discard(self.nid)
        self._gseq += 1
        bump(self.stats, "stable_sent")
        self._owe_reply = False
        wire = StableMsg(self.nid, self._gseq, tuple(sorted(v.items())), self._active())
        out.append(self._trace("SendStable", {"type": "stable", "from": self.nid,
                                              "vector": {str(x): k for x, k in sorted(v.items())}}))
        out += [Send(q, wire) for q in sorted(self.view - {self.nid})]

    # ReceiveStable(q, p)
    def _on_stable(self, p: int, m: StableMsg, out: list) -> None:
        if m.gseq <= self._last_gseq.get(p, 0):
            bump(self.stats, "stale_gossip")
            return
        self._last_gseq[p] = m.gseq
        self._owe_reply = self._owe_reply or m.reply
        v = dict(m.vector)
        if self.heard_from_reset and set(v) != set(self.digest):
            bump(self.stats, "heard_from_reset")
            self.heardFrom = set(self.view)
        else:
            self._merge(v)
            self.heardFrom.discard(p)
        out.append(self._trace("ReceiveStable", {"type": "stable", "from": p, "to": self.nid,
                                                 "vector": {str(x): k for x, k in sorted(v.items())}}, p=p))

    def _apply_stability(self, d: dict[int, tuple[int, int]]) -> None:
        """PurgeTo and LearnFrom, then a new round from the own vector."""
        for x, (lo, hi) in d.items():
            self.purged[x] = max(self.purged.get(x, 0), lo)
            self.received[x] = max(self.received.get(x, 0), hi)
        if self.purged.get(self.nid, 0):
            self.reliable.collect(self.purged[self.nid])
        self.digest = {x: (self.delivered.get(x, 0),) * 2 for x in self.view}
        self.heardFrom = set(self.view)

    # SendStability(p)
    def _send_stability(self, out: list) -> None:
        d = dict(self.digest)
        self._apply_stability(d)
        self._sseq += 1
        bump(self.stats, "stability_sent")
        wire = StabilityMsg(self.nid, self._sseq, tuple((x, lo, hi) for x, (lo, hi) in sorted(d.items())))
        out.append(self._trace("SendStability", {"type": "stability", "from": self.nid,
                                                 "digest": {str(x): list(e) for x, e in sorted(d.items())}}))
        out += [Send(q, wire) for q in sorted(self.view - {self.nid})]
        self._nak_gaps(out)

    # ReceiveStability(q, p)
    def _on_stability(self, p: int, m: StabilityMsg, out: list) -> None:
        if m.sseq <= self._last_sseq.get(p, 0):
            bump(self.stats, "stale_gossip")
            return
        self._last_sseq[p] = m.sseq
        d = {x: (lo, hi) for x, lo, hi in m.digest}
        self._apply_stability(d)
        if self._armed[STABILITY]:           # someone else was first: cancel ours
            self._armed[STABILITY] = False
            out.append(CancelTimer(STABILITY))
        out.append(self._trace("ReceiveStability", {"type": "stability", "from": p, "to": self.nid,
                                                    "digest": {str(x): list(e) for x, e in sorted(d.items())}},
                               p=p))
        self._nak_gaps(out)

    # ------------------------------------------------------------ views

    def _view_change(self, view: View, out: list) -> None:
        V = frozenset(view.members)
        if self.nid not in V or V == self.view:
            bump(self.stats, "view_ignored")
            return
        if not self.view:
            # Join(j): this member starts from the coordinator's join digest
            self.view = V
            self.delivered = dict(self.join_digest)
            self.received = dict(self.join_digest)
            self.digest = {x: (self.delivered.get(x, 0),) * 2 for x in V}
            self.heardFrom = set(V)
            out.append(self._trace("Join", None, coord=min(V - {self.nid})))
            return
        coordinator_admits = self.nid == min(self.view) and self.view < V
        self.view = V
        self.digest = {x: (self.delivered.get(x, 0),) * 2 for x in V}
        if self.heard_from_reset:
            self.heardFrom = set(V)
        if not coordinator_admits:        # the coordinator's part of Join is traced by the joiner
            out.append(self._trace("InstallView"))
