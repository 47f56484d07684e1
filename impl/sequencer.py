"""SEQUENCER: total order through the coordinator (seed 000; docs/sequencer.md).

Theory of operation
-------------------
Contract: spec/Sequencer/Sequencer.tla.  Names are the spec's: ``vid``,
``sent``, ``fwd`` (forward-table), ``recv`` (received-table), ``delivered``,
and each step is one spec action, reported by a ``Trace`` effect that names
it and carries this member's post-state.

* ``AppSend`` is **Send(m)** (seed "On send(M)"): the next local seqno
  ``q = sent + 1``.  The coordinator multicasts ``DATA <<m, q>>`` at once;
  any other member keeps the payload in ``fwd`` and sends ``FORWARD <<m, q>>``
  to the coordinator of its installed view.
* ``Receive(p, FORWARD)`` is **RecvForward(c, p)**: the coordinator
  multicasts it as DATA with the original sender and seqno; a member that is
  not (or no longer) coordinator drops it (seed: "If not coord: error and
  return"), counted in ``stats["forward_not_coord"]``.
* ``Receive(p, DATA)`` is **RecvData(m, p)** (seed "Deliver(M,S)"): the
  sender removes its own message from ``fwd``; the message is delivered
  unless its seqno is <= ``recv[sender]`` (duplicate, counted).
* ``ViewChange(view)`` is **InstallView(m)**: views arrive from the
  membership oracle, each member installing them one by one in order.  If the
  coordinator changed, ``fwd`` is re-sent in increasing seqno order to the new
  one; received-table entries of members that left are removed.  (The spec
  sends the re-forwards only to a live coordinator; here they are sent
  regardless and the network drops what goes to a crashed member, which is
  the spec's SendTo.)

With ``self_channel=True`` (SEQUENCER over FLUSH only, impl/flush.py
``sequencer_flush_stack``) a member's messages to itself keep the order of
the spec's FIFO channel ``chan[<<m, m>>]``: a FORWARD re-sent to itself at a
view change does not go round the network but waits in ``selfq``, and a
DATA of its own that comes back while ``selfq`` is not empty waits behind
it; a zero-delay timer takes ``selfq``'s head, one step per firing
(RecvForward(m, m) or RecvData(m, m)).  At a view change the old view's
DATA still in ``selfq`` are delivered first (FLUSH delivered them in that
view, so they are in the VIEW's digest, which the spec's InstallView
absorbs); its FORWARDs stay queued.

``resent_first=True`` (with ``self_channel``): while ``selfq`` holds the
forward-table a new coordinator re-sent to itself, an application send
waits until ``selfq`` is drained.  Without it the new coordinator's own new
multicast overtakes its re-sent forward-table: receivers take the newer
seqno first and then discard the re-sent message as a duplicate ("if seqno
<= received-table entry"), and it is lost for every member (docs/sequencer.md,
finding "the lost re-sent FORWARD"; the end-of-run EventualDelivery check
found it in about one SEQUENCER-over-FLUSH campaign run in twelve).  Holding
the send is an implementation choice inside the spec: every step taken is
still one Sequencer.tla allows, only in the order that loses nothing.

Crash and NewView are environment actions: the simulator performs them.
Multicast is the reliable layer's job: it reaches every member of this
member's view, itself included, like the spec's McastData.
"""

from __future__ import annotations

from .codec import Data, Forward
from .events import (AppSend, Deliver, Effect, Event, Multicast, Receive, Send, SetTimer, TimerFired, Trace,
                     TraceEvent, View, ViewChange)
from .layer import bump


def spec_msg(msg) -> dict:
    """The spec's record for a FORWARD or DATA (the payload is not modelled)."""
    return {"type": "FORWARD" if isinstance(msg, Forward) else "DATA",
            "sender": msg.sender, "seqno": msg.seqno}


SELF_TIMER = "self"
MAX_FORWARDED = 128     # a sender's messages out with the sequencer before it waits (``Sequencer.blocked``)


class Sequencer:
    name = "sequencer"

    def __init__(self, nid: int, members, *, tracing: bool | str = True, self_channel: bool = False,
                 resend_always: bool = False, resent_first: bool = False, joiner: bool = False,
                 universe=None, max_forwarded: int = MAX_FORWARDED) -> None:
        """``joiner``: ``nid`` is not in the first view ``members``; it is in
        no view (vid 0) until FLUSH installs the VIEW that takes it in (spec/
        RaincoreSequencerFlush's joiner: that first view is no view change,
        nothing is re-sent and the received-table is kept as it starts).
        ``universe``: every node that may ever be a member (default: the first
        view); the received-table starts with an entry 0 for each, as the
        spec's does (``recv[m] = [Members -> 0]``); a view change drops the
        entries of non-members.  ``max_forwarded``: see ``blocked``."""
        members = tuple(members)
        if max_forwarded < 1:
            raise ValueError(f"max_forwarded must be positive, got {max_forwarded}")
        self.max_forwarded = max_forwarded
        # With tracing off no Trace effect (and no state snapshot) is built;
        # "delta": each record carries what changed (delta()), not state().
        self.tracing = tracing
        self._last_traced: dict | None = None
        self._traced_len = 0
        if (nid in members) == joiner:
            raise ValueError(f"{nid} {'is' if joiner else 'is not'} in the first view {members}")
        universe = tuple(members) if universe is None else tuple(universe)
        if not set(members) | {nid} <= set(universe):
            raise ValueError(f"universe {universe} lacks a member of {members} or {nid}")
        self.nid = nid
        self.view = View(0, ()) if joiner else View(1, members)
        self.vid = self.view.vid
        self.sent = 0
        self.fwd: dict[int, bytes] = {}      # seqno -> payload, not yet received back as DATA
        self.recv: dict[int, int] = {s: 0 for s in universe}
        self.delivered: list[tuple[int, int]] = []
        self.stats: dict[str, int] = {}
        self.self_channel = self_channel
        self.resend_always = resend_always   # spec/SequencerFlush's ResendAlways: re-send at every view
        self.selfq: list = []                # self_channel: FORWARD/DATA to itself, FIFO
        self.resent_first = resent_first     # hold application sends while selfq is not empty
        self.held: list[bytes] = []          # resent_first: application payloads waiting for selfq

    @property
    def blocked(self) -> bool:
        """Backpressure (impl/stack.py): the application waits while
        ``max_forwarded`` of its messages are out with the sequencer, not yet
        back as DATA.  The spec never obliges a member to send, so waiting
        conforms; it bounds the forward table, hence a sender's memory and
        every record that logs ``fwd`` (whole), however far the sequencer
        lags behind an unpaced sender."""
        return len(self.fwd) >= self.max_forwarded

    @property
    def is_coord(self) -> bool:
        return bool(self.view.members) and self.view.coord == self.nid

    def idle(self) -> bool:
        """Nothing of this layer in flight (runtime.idle): no forward-table
        entry, nothing in the self channel or held for it."""
        return not (self.fwd or self.selfq or self.held)

    def state(self) -> dict:
        """This member's part of the spec state, JSON-ready: ``fwd`` as a
        sorted list, ``recv`` keyed by the sender id as a string."""
        return {"vid": self.vid, "sent": self.sent, "fwd": sorted(self.fwd),
                "recv": {str(s): q for s, q in sorted(self.recv.items())},
                "delivered": [list(x) for x in self.delivered]}

    def _trace(self, name: str, msg=None, **args) -> Trace | None:
        if not self.tracing:
            return None
        state = self.delta() if self.tracing == "delta" else self.state()
        return Trace(TraceEvent(name, self.nid, spec_msg(msg) if msg is not None else None, args, state))

    def delta(self) -> dict:
        """What changed since this member's last trace record (format 2's
        ``state``; all but ``delivered`` in its first record): ``delivered``
        as the elements appended, the others whole when they changed.  O(N +
        |fwd|) per record, never O(history)."""
        cur = {"vid": self.vid, "sent": self.sent, "fwd": sorted(self.fwd),
               "recv": {str(s): q for s, q in sorted(self.recv.items())}}
        last = self._last_traced
        d = {k: v for k, v in cur.items() if last is None or last[k] != v}
        if len(self.delivered) > self._traced_len:
            d["delivered"] = [list(x) for x in self.delivered[self._traced_len:]]
        self._last_traced, self._traced_len = cur, len(self.delivered)
        return d

    def handle(self, event: Event, now: float) -> list[Effect]:
        was = bool(self.selfq or self.held)
        fired = isinstance(event, TimerFired) and event.name == SELF_TIMER
        out = self._handle(event)
        if (self.selfq or self.held) and (fired or not was):
            out.append(SetTimer(SELF_TIMER, now))
        return out if self.tracing else [e for e in out if e is not None]

    def _handle(self, event: Event) -> list[Effect]:
        if isinstance(event, AppSend):
            if self.vid == 0:
                # a joiner sends only once it is a member (spec Send: IsMember);
                # the stack holds the application's sends until then
                bump(self.stats, "send_before_joining")
                return []
            if self.resent_first and (self.selfq or self.held):
                self.held.append(event.payload)
                return []
            return self._send(event.payload)
        if isinstance(event, Receive):
            if isinstance(event.msg, Forward):
                return self._recv_forward(event.src, event.msg)
            if isinstance(event.msg, Data):
                if self.self_channel and event.src == self.nid and self.selfq:
                    self.selfq.append(event.msg)      # behind what it sent itself before
                    return []
                return self._recv_data(event.src, event.msg)
            bump(self.stats, "unknown_message")
            return []
        if isinstance(event, ViewChange):
            return self._install_view(event.view)
        if isinstance(event, TimerFired) and event.name == SELF_TIMER and self.selfq:
            msg = self.selfq.pop(0)
            out = (self._recv_forward(self.nid, msg) if isinstance(msg, Forward)
                   else self._recv_data(self.nid, msg))
            return out
        if isinstance(event, TimerFired) and event.name == SELF_TIMER and self.held:
            # selfq drained: the held sends go, one a firing, so each step is
            # taken (and its state logged) after everything the last one caused
            return self._send(self.held.pop(0))
        return []

    # Send(m)
    def _send(self, payload: bytes) -> list[Effect]:
        q = self.sent + 1
        self.sent = q
        if self.is_coord:
            msg = Data(self.nid, q, payload)
            return [self._trace("Send", msg), Multicast(msg)]
        msg = Forward(self.nid, q, payload)
        self.fwd[q] = payload
        return [self._trace("Send", msg), Send(self.view.coord, msg)]

    # RecvForward(c, p)
    def _recv_forward(self, p: int, msg: Forward) -> list[Effect]:
        if not self.is_coord:
            bump(self.stats, "forward_not_coord")
            return [self._trace("RecvForward", msg, p=p)]
        return [self._trace("RecvForward", msg, p=p), Multicast(Data(msg.sender, msg.seqno, msg.payload))]

    # RecvData(m, p)
    def _recv_data(self, p: int, msg: Data) -> list[Effect]:
        taken = self._take_data(msg)             # the record logs the state after the step
        return [self._trace("RecvData", msg, p=p), *taken]

    def _take_data(self, msg: Data) -> list[Effect]:
        """RecvData's change of state: a new DATA delivered, a duplicate counted."""
        s, q = msg.sender, msg.seqno
        if s == self.nid:
            self.fwd.pop(q, None)
        if s in self.recv and q <= self.recv[s]:
            bump(self.stats, "duplicates")
            return []
        self.recv[s] = q
        self.delivered.append((s, q))
        return [Deliver(s, q, msg.payload)]

    # InstallView(m)
    def _install_view(self, view: View) -> list[Effect]:
        if self.vid == 0:
            # a joiner's first view (whatever its id): no view change, so no
            # re-send (its forward-table is empty: it sends only as a member)
            # and the received-table is kept (spec InstallView with vid[p] = 0)
            if self.nid not in view.members or view.vid < 1:
                bump(self.stats, "view_out_of_order")
                return []
            self.view, self.vid = view, view.vid
            return [self._trace("InstallView")]
        if view.vid != self.vid + 1:
            # The oracle hands each member every view, in order; anything else
            # is a harness bug, counted rather than guessed around.
            bump(self.stats, "view_out_of_order")
            return []
        # The old view's DATA still waiting in selfq (behind FORWARDs re-sent
        # to itself: a coordinator under load drains selfq slower than it
        # multicasts) were delivered by FLUSH in that view, so they are in the
        # VIEW's digest: the view change absorbs them, in selfq's order (the
        # coordinator's multicast order, the digest's), as the spec's
        # InstallView does (Absorb); the FORWARDs stay, as in the spec's channel.
        out: list[Effect] = []
        for m in self.selfq:
            if isinstance(m, Data):
                out += self._take_data(m)
        self.selfq = [m for m in self.selfq if not isinstance(m, Data)]
        old, self.view, self.vid = self.view, view, view.vid
        self.recv = {s: q for s, q in self.recv.items() if s in view.members}
        out.append(self._trace("InstallView"))
        if old.coord != view.coord or self.resend_always:
            resend = [Forward(self.nid, q, self.fwd[q]) for q in sorted(self.fwd)]
            if self.self_channel and view.coord == self.nid:
                self.selfq += resend
            else:
                out += [Send(view.coord, f) for f in resend]
        return out
