"""FLUSH: the stop-the-world flush that gives virtual synchrony (seed 003).

Theory of operation
-------------------
Contract: spec/Flush/Flush.tla with ``ReconcileDigests = TRUE`` (the fix;
docs/flush.md).  The layer sits between membership and the layer above
(SEQUENCER, or the application itself) and takes the spec's actions under
the spec's names, each reported by a ``Trace`` effect with this member's
post-state under the spec's variable names:

* ``Multicast``: a multicast from above goes out as ``FData(view, sender,
  seqno, body)`` to every other live member of the installed view and is
  delivered here at once (seed: "including self").  While the latch is
  closed (``blocked``) the multicast waits in ``latched`` and goes out after
  STOP_FLUSH, in the new view: the seed's "threads invoking FLUSH.down()
  block on mutex".  Unicasts from above pass the latch and are not wrapped
  (seed, Notes: virtual synchrony concerns multicasts).  SEQUENCER over
  FLUSH (``sequencer_flush_stack``) follows spec/SequencerFlush instead
  (docs/flush.md, "The composed replay"): ``FlushStack(hold_sends=True)``
  holds the application's sends above the SEQUENCER while the latch is
  closed, and with ``latch_multicasts=False`` the coordinator's
  re-multicasts pass the latch (after FLUSH_COMPLETED its own copy is not
  delivered, as the spec discards it; it stays in the view's digest).
* Messages from below wait in one FIFO queue per sender, like the spec's
  ``chan[<<q, p>>]``; the head is taken by exactly one of Deliver, Discard,
  Block, RestartFlush, ReceiveFlushOk, ReceiveFlushCompleted, InstallView,
  Unblock, chosen by the spec's guards.  A head sent in a later view than
  the installed one blocks its queue until that view is installed (spec
  I11: NAKACK would hold it).
* Phase 1: the coordinator (smallest member of its view neither suspected
  nor leaving) runs ``StartFlush`` once a view change is due (a member of
  its view suspected or leaving, or a join pending), and ``RestartFlush`` is how a member already in a flush follows a new
  initiator.  ``Block`` calls ``block()``: an ``AppBlock`` callback goes up
  and the block timer starts; the application may still multicast until
  ``block()`` returns (the timer fires, or a ``BlockOk`` event).
* Phase 2: ``FlushOk`` multicasts FLUSH_OK.  Phase 3: ``FlushCompleted``
  closes the latch once the FLUSH_OK of every live member is in, and sends
  the digest to the initiator.  Phase 4: ``SendView`` at the initiator once
  every live member completed: the new view ``M - S - L + J`` goes out with the
  union of the digests; ``InstallView`` delivers what the member lacks of
  it and installs the view in every layer (the ``Installed`` effect);
  ``StopFlush`` / ``Unblock`` open the latch and call ``unblock()``.
* Crashes (seed "Crash handling during FLUSH"): ``Suspect(p)`` from the
  perfect failure detector removes p from every wait; flush messages from
  p are discarded from then on; its DATA and VIEW are still taken.
* Joins: ``JoinRequest(p)`` from GMS; a joiner (created with
  ``joiner=True``, in no view) takes only its VIEW, delivers nothing of the
  views before it and starts unblocked (spec I12).
* Leaves: ``LeaveRequest(p)`` from GMS; p still takes part in the flush of
  the view it leaves, installs nothing of the next one (it is not in it) and
  is inert from then on (spec I12).

Digest reconciliation: a digest is the set of ``(sender, seqno)`` of this
view's multicasts a member delivered (spec I6).  The FLUSH_COMPLETED
messages carry the digest's keys; before its VIEW the initiator fetches
from a live member the bodies it needs and lacks (``FetchBodies`` and
``Bodies``, this layer's own messages, untraced), and the VIEW carries the
bodies some member lacks (none for a key in every receiver's digest), so a
member that missed the last multicasts of a crashed member (whose reliable
stream can no longer be repaired) gets them from the initiator; all of it
travels over the reliable FIFO layer, whose retransmission repairs its
loss.  This is close to NAKACK's retransmission of just the missing seqnos
from any holder, one round more when someone lacks something; it is what
the spec's atomic ``delivered' = delivered \\cup m.digest`` needs.

The view bundling of the seed's "FLUSH on view change" is the spec's: every
JOIN and LEAVE pending when the initiator decides goes into that view.  The
spec's assumption I9 (a VIEW is never lost even if its sender crashes) is
the environment's job: the simulator (impl/sim_flush.py) hands a crashed
member's frames up to its last VIEW to every survivor, as GMS's own view
agreement would.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union

from .events import (AppSend, Deliver, Effect, Event, Multicast, Receive, Send, SetTimer,
                     TimerFired, Trace, TraceEvent, Up, View, ViewChange)
from .layer import bump

# ---------------------------------------------------------------- the layer's messages


@dataclass(frozen=True, slots=True)
class FData:
    """A multicast of view ``view``: seqno ``seqno`` of ``sender``'s
    multicasts; ``body`` is bytes or a codec message of the layer above."""
    view: int
    sender: int
    seqno: int
    body: Any = b""


@dataclass(frozen=True, slots=True)
class StartFlush:
    view: int


@dataclass(frozen=True, slots=True)
class FlushOk:
    view: int


@dataclass(frozen=True, slots=True)
class FlushCompleted:
    """``entries``: the digest, each entry ``(sender, seqno, body)``."""
    view: int
    entries: tuple = ()


@dataclass(frozen=True, slots=True)
class ViewMsg:
    """Installs view ``view + 1`` = ``members``; ``entries`` is the union digest;
    ``ring``: with the ring as membership, the ring's number of the view (the
    index of its commit in the initiator's globalView), 0 otherwise."""
    view: int
    members: tuple = ()
    entries: tuple = ()
    ring: int = 0


@dataclass(frozen=True, slots=True)
class StopFlush:
    view: int


@dataclass(frozen=True, slots=True)
class FetchBodies:
    """The initiator asks a member for the bodies of digest entries it
    needs and lacks (``entries``: keys, bodies None).  The layer's own, not
    the spec's: untraced, as the reliable layer's acks."""
    view: int
    entries: tuple = ()


@dataclass(frozen=True, slots=True)
class Bodies:
    """A member's answer to ``FetchBodies``: the entries it holds."""
    view: int
    entries: tuple = ()


FlushMessage = Union[FData, StartFlush, FlushOk, FlushCompleted, ViewMsg, StopFlush]
FLUSH_MESSAGES = (FData, StartFlush, FlushOk, FlushCompleted, ViewMsg, StopFlush)
FETCH_MESSAGES = (FetchBodies, Bodies)
SPEC_TYPE = {FData: "DATA", StartFlush: "START_FLUSH", FlushOk: "FLUSH_OK",
             FlushCompleted: "FLUSH_COMPLETED", ViewMsg: "VIEW", StopFlush: "STOP_FLUSH"}

# the bytes of these messages on the wire: impl/stacks/flush.py (codec 20-29)


# ---------------------------------------------------------------- events and effects of this layer


@dataclass(frozen=True, slots=True)
class Suspect:
    """Event from the failure detector: ``member`` has crashed."""
    member: int


@dataclass(frozen=True, slots=True)
class RingView:
    """Event from the Raincore ring under FLUSH (``membership="ring"``,
    spec/RaincoreFlush): the ring's ``localView`` at this node (the token's
    nodelist as this node last saw it: a member it no longer lists is gone)
    and its committed view (the last non-NULL globalView entry; ``()``
    before the first commit), and that entry's index (the ring's number of
    the commit; 0 before the first)."""
    local: tuple
    committed: tuple
    index: int = 0
    # ViewUnderToken (spec/RaincoreFlush): whether this node holds the token,
    # and the latest view id the token carries (``TokenMsg.above``)
    eating: bool = False
    token_view: int = 0


@dataclass(frozen=True, slots=True)
class LeaveRequest:
    """Event from GMS: ``member`` asked to leave (the spec's Leave(member));
    the leaver logs it, everyone stops counting it as a coordinator and the
    next view leaves it out."""
    member: int


@dataclass(frozen=True, slots=True)
class JoinRequest:
    """Event from GMS: ``member``, in no view yet, asked to join (the spec's
    Join(member)); the joiner logs it, the coordinator's next view takes it in."""
    member: int


@dataclass(frozen=True, slots=True)
class BlockOk:
    """Event from the application: ``block()`` has returned."""


@dataclass(frozen=True, slots=True)
class AppBlock:
    """Effect: the ``block()`` callback (the application may still multicast)."""


@dataclass(frozen=True, slots=True)
class AppUnblock:
    """Effect: the ``unblock()`` callback."""


@dataclass(frozen=True, slots=True)
class Installed:
    """Effect: install ``view`` in the other layers of the stack.  The
    layers below also keep sending to the members in ``keep``: leavers, who
    must still get the VIEW that leaves them out."""
    view: View
    keep: tuple = ()


@dataclass(frozen=True, slots=True)
class Membership:
    """Effect: the layers below should now send to ``view.members`` only."""
    view: View


BLOCK_TIMER = "block_ok"
NO_INIT = 0


def _key_list(keys) -> list:
    """``[[sender, seqno], ...]`` in key order: each sender's seqnos sorted
    apart (sorting ints, not pairs, is the cheaper part of a long view's
    flush)."""
    by: dict = {}
    for s, q in keys:
        got = by.get(s)
        if got is None:
            by[s] = got = []
        got.append(q)
    out: list = []
    for s in sorted(by):
        qs = by[s]
        qs.sort()
        out.extend([s, q] for q in qs)
    return out


def spec_msg(m, listed=None) -> dict:
    """The spec's record for a FLUSH message, (sender, seqno) standing for a
    DATA id; ``listed``: a digest's entries as that record's list (a layer's
    memo: a long view's digest is listed once, not at every record)."""
    d: dict = {"type": SPEC_TYPE[type(m)], "view": m.view}
    if isinstance(m, FData):
        d.update(sender=m.sender, seqno=m.seqno)
    elif isinstance(m, (FlushCompleted, ViewMsg)):
        d["digest"] = listed(m.entries) if listed else [[s, q] for s, q, _ in m.entries]
        if isinstance(m, ViewMsg):
            d["members"] = list(m.members)
            if m.ring:
                d["ring"] = m.ring
    return d


class Flush:
    name = "flush"

    def __init__(self, nid: int, members, *, top: bool = True, block_time: float | None = 0.002,
                 reconcile: bool = True, joiner: bool = False, tracing: bool = True,
                 view_as_sent: bool = False, latch_multicasts: bool = True,
                 membership: str = "oracle") -> None:
        """``top``: the application sits right above (deliveries are
        ``Deliver`` effects, ``AppSend`` is a multicast); otherwise a layer
        does (deliveries go ``Up``).  ``block_time``: how long ``block()``
        runs before returning (None: until a ``BlockOk`` event).
        ``reconcile=False`` is the seed as written (the spec's
        ``ReconcileDigests = FALSE``): digests travel but nothing uses them,
        and DATA is delivered whatever the phase; it breaks virtual
        synchrony, as TLC shows, and exists to show that in runs too.
        ``joiner``: ``nid`` is not in the first view ``members``; it is in
        no view (vid 0) until a VIEW takes it in after its ``JoinRequest``.
        ``membership="ring"``: views come from the Raincore ring below
        (spec/RaincoreFlush, docs/impl.md "Raincore as membership") through
        ``RingView`` events: a member is gone once the ring's localView
        drops it, a flush starts when the ring's committed view differs
        from this view, and the VIEW installs the committed view as it
        stands when the flush ends; ``Suspect``/``JoinRequest``/
        ``LeaveRequest`` are refused (counted)."""
        if membership not in ("oracle", "ring"):
            raise ValueError(f"membership must be 'oracle' or 'ring', not {membership!r}")
        self.ring = membership == "ring"
        self.ring_local: tuple = ()
        self.ring_view: tuple = ()
        self.ring_index = 0                 # the ring's number of ring_view
        self.eating, self.token_view = False, 0
        self._parts_for: tuple | None = None   # _view_parts's inputs, and its answer
        self._lists: dict = {}                 # id -> (digest or entries, its record's list): _listed
        self._parts: tuple = ()
        # the ring's number of each installed view (the VIEW carries it): a
        # ring commit is a view change only if newer than the view's
        self.view_ring: dict[int, int] = {0: 0} if joiner else {1: 1}
        self.reconcile = reconcile
        self.view_as_sent = view_as_sent
        # latch_multicasts=False (SEQUENCER over FLUSH, where the stack holds the application's
        # sends): a multicast from above goes out at once even while blocked, in the installed
        # view, as spec/SequencerFlush's McastData of a re-multicast FORWARD does (C4)
        self.latch_multicasts = latch_multicasts
        members = tuple(sorted(members))
        if (nid in members) == joiner:
            raise ValueError(f"{nid} {'is' if joiner else 'is not'} in the first view {members}")
        self.nid, self.top, self.block_time, self.tracing = nid, top, block_time, tracing
        self.first_view = members
        self.views: dict[int, tuple[int, ...]] = {0: ()} if joiner else {1: members}
        self.vid = 0 if joiner else 1
        self.suspected: set[int] = set()
        self.leaving: set[int] = set()
        self.joining: set[int] = set()     # JOINs not yet in a view this member installed
        self.keep: set[int] = set()        # leavers sent a VIEW here: the layers below keep sending to them
        self.phase = "Normal"
        self.blocked = False
        self.flush_init = NO_INIT
        self.flush_oks: set[int] = set()
        self.digest: frozenset = frozenset()
        self.completed: set[tuple[int, frozenset]] = set()
        self.delivered: list[tuple[int, int]] = []          # every delivered (sender, seqno), in order
        self._delivered_set: set[tuple[int, int]] = set()
        self._last_traced: dict | None = None               # tracing="delta": what the last record showed
        self._traced_len = 0
        self.bodies: dict[tuple[int, int], Any] = {}         # this view's delivered multicasts
        self.completed_bodies: dict[tuple[int, int], Any] = {}
        self.asked: dict[tuple[int, int], int] = {}   # initiator: the member asked for each body it lacks
        self.seqno = 0
        self.inbox: dict[int, list] = {}                     # src -> FIFO of flush messages not yet taken
        self.latched: list = []                              # multicasts waiting for the latch
        self.stats: dict[str, int] = {}

    # ------------------------------------------------------------ views

    @property
    def members(self) -> tuple[int, ...]:
        return self.views[self.vid]

    @property
    def is_member(self) -> bool:
        return self.nid in self.members

    def live(self) -> set[int]:
        return set(self.members) - self.suspected

    def staying(self) -> set[int]:
        return self.live() - self.leaving

    def below(self) -> View:
        """Whom the layers below must send to and accept from: the live
        members, leavers until the VIEW that leaves them out, joiners.  A
        joiner not yet in a view: the first view, itself and the joiners."""
        base = self.live() | self.keep if self.vid else set(self.first_view) | {self.nid}
        return View(self.vid, tuple(sorted((base | self.joining) - self.suspected)))

    def is_coord(self) -> bool:
        staying = self.staying()
        return self.nid in staying and self.nid == min(staying)

    # ------------------------------------------------------------ state and traces

    def idle(self) -> bool:
        """No flush running and no multicast held (runtime.idle)."""
        return self.phase == "Normal" and not (self.blocked or self.latched or self.flush_init)

    def state(self) -> dict:
        return {"vid": self.vid, "delivered": sorted([s, q] for s, q in self._delivered_set),
                "phase": self.phase, "blocked": self.blocked, "flushInit": self.flush_init,
                "flushOks": sorted(self.flush_oks), "digest": sorted([s, q] for s, q in self.digest),
                "completed": sorted([q, sorted([s, x] for s, x in d)] for q, d in self.completed)}

    def delta(self) -> dict:
        """What changed since this member's last trace record (format 2's
        ``state``, for ``tracing="delta"``): ``delivered`` as the keys
        delivered since, the others whole when they changed.  ``digest`` is
        replaced and ``completed`` only grows or is replaced, so both are
        compared by identity and size: a record costs O(N) outside a flush,
        never O(what the view delivered)."""
        last = self._last_traced
        cheap = {"vid": self.vid, "phase": self.phase, "blocked": self.blocked, "flushInit": self.flush_init,
                 "flushOks": sorted(self.flush_oks)}
        d = {k: v for k, v in cheap.items() if last is None or last[k] != v}
        marks = {"digest": self.digest, "completed": (id(self.completed), len(self.completed))}
        values = {"digest": lambda: self._listed(self.digest),
                  "completed": lambda: sorted([q, self._listed(dg)] for q, dg in self.completed)}
        kept = {}
        for k, mark in marks.items():      # rebuilt only when the object changed, logged when the value did
            if last is not None and (last[k][0] is mark if k == "digest" else last[k][0] == mark):
                kept[k] = last[k]
                continue
            v = values[k]()
            if last is None or last[k][1] != v:
                d[k] = v
            kept[k] = (mark, v)
        if len(self.delivered) > self._traced_len:
            d["delivered"] = [list(x) for x in self.delivered[self._traced_len:]]
        self._last_traced = {**cheap, **kept}
        self._traced_len = len(self.delivered)
        return d

    def _trace(self, out: list, name: str, msg=None, **params) -> None:
        if self.tracing:
            state = self.delta() if self.tracing == "delta" else self.state()
            out.append(Trace(TraceEvent(name, self.nid, spec_msg(msg, self._listed_entries) if msg is not None
                                        else None, params, state)))

    # A flush's records show each digest several times (the member's state, its
    # FLUSH_COMPLETED, the initiator's ``completed`` at each arrival): each is
    # listed once per view.  Digests are frozensets and entries tuples, never
    # changed, so an object's list stays its list (kept with the object, so
    # its id is not reused).  The records share the lists and only read them.
    def _listed(self, digest) -> list:
        got = self._lists.get(id(digest))
        if got is None or got[0] is not digest:
            # an equal digest listed before (a member's own, back in a
            # FLUSH_COMPLETED as a new object) is not sorted again
            listed = self._lists.get(digest) if isinstance(digest, frozenset) else None
            if listed is None:
                listed = _key_list(digest)
                if isinstance(digest, frozenset):
                    self._lists[digest] = listed
            got = self._lists[id(digest)] = (digest, listed)
        return got[1]

    def _listed_entries(self, entries) -> list:
        got = self._lists.get(id(entries))
        if got is None or got[0] is not entries:
            got = self._lists[id(entries)] = (entries, [[s, q] for s, q, _ in entries])
        return got[1]

    # ------------------------------------------------------------ events

    def handle(self, event: Event, now: float) -> list[Effect]:
        """One event in (``_ON``: its handler by its type), then every head
        and internal step the spec's guards now enable (``_settle``); a
        handler that refuses the event returns False and nothing else moves."""
        out: list[Effect] = []
        on = self._ON.get(type(event))
        if on is None or on(self, event, now, out):
            self._settle(now, out)
        return out

    # ------------------------------------------------------------ events in (``_ON``)

    def _on_multicast(self, event, now: float, out: list) -> bool:
        """Multicast (the spec's action) from above, or latched while blocked."""
        if type(event) is AppSend and not self.top:
            bump(self.stats, "appsend_not_top")
            return False
        body = event.payload if type(event) is AppSend else event.msg
        if not self.is_member:
            bump(self.stats, "send_after_leaving")
        elif self.blocked and self.latch_multicasts:
            bump(self.stats, "latched")
            self.latched.append(body)
        else:
            self._multicast(body, out)
        return True

    def _on_send(self, event, now: float, out: list) -> bool:
        out.append(event)                     # unicasts pass the latch
        return True

    def _on_receive(self, event, now: float, out: list) -> bool:
        """A frame from below: the body exchange is this layer's own, a
        FLUSH message waits at the head of its sender's queue (the spec's
        channel), anything else goes up."""
        if isinstance(event.msg, FETCH_MESSAGES):
            self._on_fetch(event.src, event.msg, out)
        elif isinstance(event.msg, FLUSH_MESSAGES):
            self.inbox.setdefault(event.src, []).append(event.msg)
        else:
            out.append(Up(event.src, event.msg))
        return True

    def _on_ring_view(self, event, now: float, out: list) -> bool:
        if not self.ring:
            bump(self.stats, "ring_view_ignored")
            return False
        self.ring_local, self.ring_view = tuple(event.local), tuple(event.committed)
        self.ring_index = event.index
        self.eating, self.token_view = event.eating, event.token_view
        if self._ring_gone():
            out.append(Membership(self.below()))
        return True

    def _oracle_refused(self) -> bool:
        """Over the ring the ring decides membership: the oracle's events are refused."""
        if self.ring:
            bump(self.stats, "oracle_event_refused")
        return self.ring

    def _on_suspect(self, event, now: float, out: list) -> bool:
        if self._oracle_refused():
            return False
        if event.member != self.nid and event.member not in self.suspected:
            self.suspected.add(event.member)
            out.append(Membership(self.below()))
        return True

    def _on_join(self, event, now: float, out: list) -> bool:
        """Join (the spec's action, at the joiner) or a member learning of one."""
        if self._oracle_refused():
            return False
        if event.member not in self.joining and event.member not in self.members:
            self.joining.add(event.member)
            if event.member == self.nid:
                self._trace(out, "Join")
            else:
                out.append(Membership(self.below()))
        return True

    def _on_leave(self, event, now: float, out: list) -> bool:
        """Leave (the spec's action, at the leaver) or a member learning of one."""
        if self._oracle_refused():
            return False
        if event.member not in self.leaving:
            self.leaving.add(event.member)
            if event.member == self.nid:
                self._trace(out, "Leave")
        return True

    def _on_block_ok(self, event, now: float, out: list) -> bool:
        """``block()`` returned (BlockOk, or the block timer): FlushOk."""
        if type(event) is TimerFired and event.name != BLOCK_TIMER:
            return False
        if self.phase == "InBlock" and self.is_member:
            self._flush_ok(out)
        else:
            bump(self.stats, "stale_block_ok")
        return True

    def _on_view_change(self, event, now: float, out: list) -> bool:
        bump(self.stats, "view_change_ignored")   # views come through the flush here
        return False

    # ------------------------------------------------------------ application side

    def _multicast(self, body, out: list) -> None:
        self.seqno += 1
        m = FData(self.vid, self.nid, self.seqno, body)
        key = (self.nid, self.seqno)
        # After FLUSH_COMPLETED (only with latch_multicasts=False) the sender's own copy, like
        # everyone's, comes after its digest: it is not delivered (spec: Discard), only kept
        # with this view's messages, so a restarted flush's digest and the VIEW can carry it.
        own = not (self.phase == "Completed" and self.reconcile)
        if own:
            self._deliver_key(key, body)
        else:
            bump(self.stats, "multicast_after_completed")
            self.bodies[key] = body
        self._trace(out, "Multicast", m)
        for q in sorted(self.live() - {self.nid}):
            out.append(Send(q, m))
        if own:
            out.append(self._up(key, body))

    def _deliver_key(self, key, body) -> None:
        self.delivered.append(key)
        self._delivered_set.add(key)
        self.bodies[key] = body

    def _up(self, key, body) -> Effect:
        return Deliver(key[0], key[1], body) if self.top else Up(key[0], body)

    # ------------------------------------------------------------ the queues (spec: chan heads)

    def _settle(self, now: float, out: list) -> None:
        """Take every head that some action takes and run every internal
        step that is enabled, until nothing moves."""
        moved = True
        while moved:
            moved = False
            for src in sorted(self.inbox):
                q = self.inbox[src]
                while q and self._take(src, q[0], now, out):
                    q.pop(0)
                    moved = True
            moved = self._internal(now, out) or moved

    def _take(self, q: int, m, now: float, out: list) -> bool:
        """Take the head ``m`` of member ``q``'s queue if a spec action's guard
        allows (``_TAKE``: the action by the message's type); False leaves it
        waiting."""
        if self.vid == 0:                         # a joiner takes its VIEW, nothing else
            if type(m) is ViewMsg:
                self._install_view(q, m, out)
                return True
            return False
        if not self.is_member:
            return False                          # departed: inert
        if m.view < self.vid:
            self._trace(out, "Discard", m, q=q)
            return True
        if m.view > self.vid:
            return False                          # waits for that view (spec I11)
        if q in self.suspected and type(m) not in (FData, ViewMsg):   # seed: no FLUSH message from a suspect
            self._trace(out, "Discard", m, q=q)
            return True
        take = self._TAKE.get(type(m))
        if take is None:
            bump(self.stats, "unknown_message")
            return True
        take(self, q, m, now, out)
        return True

    # ------------------------------------------------------------ the spec's receiving actions (``_TAKE``)

    def _deliver(self, q: int, m: FData, now: float, out: list) -> None:
        """Deliver, or Discard after FLUSH_COMPLETED: the VIEW's digest brings it."""
        if self.phase == "Completed" and self.reconcile:
            self._trace(out, "Discard", m, q=q)
            return
        self._deliver_key((m.sender, m.seqno), m.body)
        self._trace(out, "Deliver", m, q=q)
        out.append(self._up((m.sender, m.seqno), m.body))

    def _take_view(self, q: int, m: ViewMsg, now: float, out: list) -> None:
        self._install_view(q, m, out)             # InstallView

    def _block(self, q: int, m: StartFlush, now: float, out: list) -> None:
        """Block, or RestartFlush when already in a flush (a new initiator)."""
        if self.phase == "Normal":
            self.phase, self.flush_init = "InBlock", q
            self._trace(out, "Block", m, c=q)
            self._call_block(now, out)
            return
        self.flush_init = q
        if self.phase == "Completed":
            self.digest = self._digest_now()
            self._trace(out, "RestartFlush", m, c=q)
            out.append(Send(q, FlushCompleted(self.vid, self._keys(self.digest))))
        else:
            self._trace(out, "RestartFlush", m, c=q)

    def _receive_flush_ok(self, q: int, m: FlushOk, now: float, out: list) -> None:
        self.flush_oks.add(q)
        self._trace(out, "ReceiveFlushOk", m, q=q)

    def _receive_flush_completed(self, q: int, m: FlushCompleted, now: float, out: list) -> None:
        d = frozenset((s, x) for s, x, _ in m.entries)
        self.completed.add((q, d))
        for s, x, body in m.entries:
            if body is not None:
                self.completed_bodies.setdefault((s, x), body)
        self._trace(out, "ReceiveFlushCompleted", m, q=q)

    def _unblock(self, q: int, m: StopFlush, now: float, out: list) -> None:
        self.blocked, self.flush_init = False, NO_INIT
        self._trace(out, "Unblock", m, c=q)
        self._open_latch(out)

    def _call_block(self, now: float, out: list) -> None:
        out.append(AppBlock())
        if self.block_time is not None:
            out.append(SetTimer(BLOCK_TIMER, now + self.block_time))

    def _open_latch(self, out: list) -> None:
        out.append(AppUnblock())
        waiting, self.latched = self.latched, []
        for body in waiting:
            if self.blocked:          # a flush can close it again at once
                self.latched.append(body)
            else:
                self._multicast(body, out)

    # ------------------------------------------------------------ internal steps

    def _digest_now(self) -> frozenset:
        return frozenset(self.bodies)

    def _entries(self, keys, held=frozenset()) -> tuple:
        """Digest entries ``(sender, seqno, body)``; None for the body of a
        key in ``held`` (every receiver holds it already)."""
        return tuple((s, q, None if (s, q) in held else self._body((s, q))) for s, q in sorted(keys))

    def _body(self, key):
        """The body of digest entry ``key`` this node holds (its own view's
        messages, or one a FLUSH_COMPLETED or ``Bodies`` brought), else None."""
        return self.bodies.get(key, self.completed_bodies.get(key))

    def _keys(self, digest) -> tuple:
        """A FLUSH_COMPLETED's entries: the digest's keys, no body (the
        initiator fetches what it needs and lacks: ``_fetching``); its
        record's list is the digest's."""
        listed = self._listed(digest)
        keys = tuple((s, q, None) for s, q in listed)
        self._lists[id(keys)] = (keys, listed)
        return keys

    def _view_dests(self) -> list:
        return sorted((self.live() | self.joining) - {self.nid})

    def _view_parts(self) -> tuple:
        """The VIEW to come: its receivers, the union of the live members'
        digests, and the keys every receiver holds.  Kept while what they
        are made of stays: an initiator waiting for a body or the token
        asks again at every event, and a long view's digests are large."""
        key = (self.vid, frozenset(self.completed), frozenset(self.suspected), frozenset(self.joining))
        if self._parts_for != key:
            dests = self._view_dests()
            union = frozenset().union(*(d for q, d in self.completed if q not in self.suspected))
            self._parts_for, self._parts = key, (dests, union, self._held_by_all(dests))
        return self._parts

    def _fetching(self, parts: tuple, out: list) -> bool:
        """Before its VIEW the initiator holds the body of every union entry
        some receiver (or itself) lacks: the FLUSH_COMPLETED messages carry
        keys only, so it asks a live member whose digest lists each body it
        lacks (``FetchBodies``; again if that member is gone) and waits.
        Usually every member delivered every message of the view and
        nothing is fetched: a flush then costs its keys, not its traffic."""
        _, union, held = parts
        missing = sorted(k for k in union - held if self._body(k) is None)
        if not missing:
            return False
        live = self.live()
        ask: dict[int, list] = {}
        for k in missing:
            if self.asked.get(k) in live:
                continue
            holder = min((q for q, d in self.completed if q != self.nid and q in live and k in d), default=None)
            if holder is not None:
                self.asked[k] = holder
                ask.setdefault(holder, []).append(k)
        for q, keys in sorted(ask.items()):
            bump(self.stats, "bodies_fetched", len(keys))
            out.append(Send(q, FetchBodies(self.vid, tuple((s, x, None) for s, x in keys))))
        return True

    def _on_fetch(self, src: int, m, out: list) -> None:
        if m.view != self.vid:
            bump(self.stats, "stale_fetch")
        elif isinstance(m, FetchBodies):
            have = tuple((s, q, self._body((s, q))) for s, q, _ in m.entries)
            out.append(Send(src, Bodies(self.vid, tuple(e for e in have if e[2] is not None))))
        else:
            for s, q, body in m.entries:
                if body is not None:
                    self.completed_bodies.setdefault((s, q), body)

    def _held_by_all(self, dests) -> frozenset:
        """The keys every member that reconciles from this VIEW holds: in
        each digest it (and this node) sent in this flush.  A VIEW carries
        no body for them, so its size is what some member lacks, not the
        view's whole traffic.  Empty when a receiver other than a joiner
        (which reconciles nothing) sent no digest."""
        digests: dict = {}
        for q, d in self.completed:
            digests.setdefault(q, []).append(d)
        receivers = (set(dests) - self.joining) | {self.nid}
        if not receivers <= set(digests):
            return frozenset()
        return frozenset.intersection(*(d for q in receivers for d in digests[q]))

    def _internal(self, now: float, out: list) -> bool:
        if not self.is_member:
            return False
        if self.phase == "OkSent" and self.live() <= self.flush_oks:
            self._flush_completed(out)
            return True
        if (self.flush_init == self.nid and self.phase == "Completed"
                and self.live() <= {q for q, _ in self.completed}
                and (not self.ring or self._ring_newer())):
            if not self._fetching(self._view_parts(), out) and self._token_ok(view=True):
                self._send_view(out)
                return True
        if self.flush_init == self.nid and self.phase == "Normal":
            self._stop_flush(out)
            return True
        if (self.flush_init != self.nid and self.is_coord() and self._token_ok()
                and (self._ring_pending() if self.ring
                     else set(self.members) & (self.suspected | self.leaving) or self.joining)):
            self._start_flush(now, out)
            return True
        return False

    def _start_flush(self, now: float, out: list) -> None:
        was = self.phase
        self.flush_init = self.nid
        if was == "Normal":
            self.phase = "InBlock"
        if was == "Completed":
            self.digest = self._digest_now()
            self.completed = {(self.nid, self.digest)}
        else:
            self.completed = set()
        m = StartFlush(self.vid)
        self._trace(out, "StartFlush", m)
        for q in sorted(self.live() - {self.nid}):
            out.append(Send(q, m))
        if was == "Normal":
            self._call_block(now, out)

    def _flush_ok(self, out: list) -> None:
        self.phase = "OkSent"
        self.flush_oks.add(self.nid)
        m = FlushOk(self.vid)
        self._trace(out, "FlushOk", m)
        for q in sorted(self.live() - {self.nid}):
            out.append(Send(q, m))

    def _flush_completed(self, out: list) -> None:
        self.phase, self.blocked = "Completed", True
        self.digest = self._digest_now()
        c = self.flush_init
        if c == self.nid:
            self.completed.add((self.nid, self.digest))
            self._trace(out, "FlushCompleted")
        else:
            m = FlushCompleted(self.vid, self._keys(self.digest))
            self._trace(out, "FlushCompleted", m if c not in self.suspected else None)
            if c not in self.suspected:
                out.append(Send(c, m))

    def _ring_gone(self) -> bool:
        """Ring mode: ``suspected`` := the members of this view the ring's
        localView no longer lists (the spec's Gone), ``joining`` := the
        committed view's nodes outside it (the layers below must reach
        them: they get the VIEW).  True when either changed."""
        was = (set(self.suspected), set(self.joining))
        local = set(self.ring_local)
        self.suspected = {m for m in self.members if m not in local and m != self.nid}
        self.joining = set(self.ring_view) - set(self.members) if self.vid else set()
        return was != (self.suspected, self.joining)

    view_under_token = False    # spec/RaincoreFlush ViewUnderToken (the cluster over the ring abstraction)

    def _token_ok(self, view: bool = False) -> bool:
        """ViewUnderToken: a flush starts, and a VIEW is sent, only while this
        node holds the token, and a VIEW only of the latest view: the token
        carries the latest view's id (``RingNode`` writes it before the token
        leaves), which is never above this view's unless another initiator
        has already moved the view on; this node then waits for that VIEW.
        Without it two initiators can each end a flush of one view with a
        VIEW of their own (model TwoInitiators)."""
        return not self.view_under_token or (self.eating and (not view or self.vid >= self.token_view))

    def _ring_newer(self) -> bool:
        """The spec's NewerRingView: the ring's last commit at this node is
        newer than the one this view installed.  This node's ring may lag
        behind its FLUSH view (installed from another node's VIEW), and its
        last commit is then an older view (spec/RaincoreFlush, StaleView)."""
        return self.ring_index > self.view_ring[self.vid]

    def _ring_pending(self) -> bool:
        """The spec's ViewChangePending: the ring committed a newer view other than this one."""
        if not self.ring_view or set(self.ring_view) == set(self.members):
            return False
        if not self._ring_newer():
            bump(self.stats, "stale_ring_view")     # this node's ring lags behind its view
            return False
        return True

    def _send_view(self, out: list) -> None:
        v = self.vid
        # ring mode: the ring's committed view as it stands now (a view committed during
        # the flush is folded in); otherwise the oracle's survivors and joiners
        new = (tuple(sorted(self.ring_view)) if self.ring
               else tuple(sorted(self.staying() | self.joining)))
        dests, union, held = self._view_parts()
        m = ViewMsg(v, new, self._entries(union, held), self.ring_index if self.ring else 0)
        self._reconcile(m, out)
        self._enter_view(v + 1, new, m.ring)
        # every leaver sent a VIEW stays reachable below, those of earlier flushes too:
        # this layer cannot see a VIEW acknowledged, and forgetting a leaver drops its
        # VIEW if that was lost, leaving it blocked for good while the spec's
        # InstallView stays enabled (docs/flush.md, "Joins and leaves", "Leavers")
        self.keep = (self.keep | set(dests)) - set(new)
        self._trace(out, "SendView", m)
        for q in dests:
            out.append(Send(q, m))
        out.append(Installed(View(self.vid, new), tuple(sorted(self.keep))))

    def _reconcile(self, m: ViewMsg, out: list) -> None:
        """Deliver the union digest's messages this member lacks, sender by
        sender in seqno order (each sender's messages are a FIFO stream).
        The seed as written (``reconcile=False``) does not."""
        if not self.reconcile:
            return
        for s, q, body in m.entries:
            if (s, q) not in self._delivered_set:
                if body is None:      # held by every receiver: this one's own copy (a kept multicast)
                    body = self._body((s, q))
                bump(self.stats, "reconciled")
                self._deliver_key((s, q), body)
                out.append(self._up((s, q), body))

    def _enter_view(self, vid: int, members: tuple, ring: int = 0) -> None:
        self.views[vid] = members
        self.view_ring[vid] = ring
        self.vid = vid
        self.joining -= set(members)
        if self.ring:
            self._ring_gone()
        self.phase = "Normal"
        self.flush_oks, self.digest, self.completed = set(), frozenset(), set()
        self._lists = {}
        self.bodies, self.completed_bodies, self.asked = {}, {}, {}

    def _install_view(self, c: int, m: ViewMsg, out: list) -> None:
        joined = self.vid == 0
        if not joined:                 # a joiner delivers nothing of the views before its own
            self._reconcile(m, out)
        self._enter_view(m.view + 1, tuple(m.members), m.ring)
        self.flush_init = NO_INIT if joined else c
        self.keep = set()
        self._trace(out, "InstallView", m, c=c)
        if self.is_member:
            # view_as_sent: the layer above installs the VIEW's members, suspects included
            # (spec/SequencerFlush's InstallView); they leave at the next flush
            gone = set() if self.view_as_sent else self.suspected
            out.append(Installed(View(self.vid, tuple(sorted(set(m.members) - gone)))))

    def _stop_flush(self, out: list) -> None:
        v = self.vid
        stay = (set(self.views[v]) & set(self.views.get(v - 1, ()))) - self.suspected
        self.blocked, self.flush_init = False, NO_INIT
        m = StopFlush(v)
        self._trace(out, "StopFlush", m)
        for q in sorted(stay - {self.nid}):
            out.append(Send(q, m))
        self._open_latch(out)


# The transitions as tables (h11's style): an event in by its type, and the
# head of a queue by its message's type, each to the handler of the spec
# action(s) it may be (docs/flush.md).
Flush._ON = {
    Multicast: Flush._on_multicast, AppSend: Flush._on_multicast,      # Multicast
    Send: Flush._on_send,
    Receive: Flush._on_receive,
    RingView: Flush._on_ring_view,
    Suspect: Flush._on_suspect,
    JoinRequest: Flush._on_join,                                        # Join
    LeaveRequest: Flush._on_leave,                                      # Leave
    BlockOk: Flush._on_block_ok, TimerFired: Flush._on_block_ok,        # FlushOk
    ViewChange: Flush._on_view_change,
}
Flush._TAKE = {
    FData: Flush._deliver,                                              # Deliver | Discard
    ViewMsg: Flush._take_view,                                          # InstallView
    StartFlush: Flush._block,                                           # Block | RestartFlush
    FlushOk: Flush._receive_flush_ok,                                   # ReceiveFlushOk
    FlushCompleted: Flush._receive_flush_completed,                     # ReceiveFlushCompleted
    StopFlush: Flush._unblock,                                          # Unblock
}
