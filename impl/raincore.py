"""Raincore: the token-ring group membership layer (seed 004; docs/raincore.md).

Theory of operation
-------------------
Contract: spec/Raincore/Raincore.tla, with the interpretations of the seed's
garbled pseudo-code recorded in docs/raincore.md.  Names are the spec's and
every step is one spec action, reported by a ``Trace`` effect that names it
and carries this node's post-state (``status``, ``viewState``,
``tokenState``, ``globalView``, ``lastToken``, ``localView``, ``newNodes``,
``token``, ``recovered``).

A token (Figure 6: sequence number, nodelist, current and destination
pointers, global view number) goes round the ring along its nodelist; the
911 message (Figure 7) asks for the right to regenerate a lost token and
carries join requests.  Each node runs a View State machine (Agreement,
Chaos, Reserve; Figure 9) and a Token State machine (Eating, Hungry,
Starving; Figure 10).  Events in, by the seed's eight events:

* ``Start``: the node begins.  In a cold start the founder runs
  **Initialization** (creates the token); the other configured nodes, and
  every node of a steady start, just start their Hungry timer.
* ``Receive(src, TokenMsg)``: **TokenReceived** (dropped while Eating or
  when its sequence number is not above lastToken's).
* ``Receive(src, Msg911)``: **911Received** (regenerate on one's own YES,
  veto or forward a member's, queue a non-member's as a join request).
* ``DeliveryFailed(msg)``: the Transport Manager could not deliver a message
  this node sent: **TokenDeliveryFailure** or **911DeliveryFailure**.
* ``TimerFired("eating" | "hungry" | "starving")``: **EatingTimeout**,
  **HungryTimeout**, **StarvingTimeout**.
* ``Crash``, ``Recover``, ``Join``: the environment's actions of the same
  names (the simulator decides when; the layer does the local part, the
  simulator drops the crashed node's undelivered messages).

Timers carry the time only: a timeout is taken whenever its timer fires in
the token state it was set for (the spec's timeouts are enabled in that
state, whatever the time).  Every committed view leaves the layer as
``Up(nid, ViewChange(View(index, members)))``, the membership oracle's event
a stack above can install.

The four fixes of docs/raincore.md (``neutral_recovery``, ``fresh_claim``,
``fresh_view``, ``token_ring_claim``) are options, on by default; all off is
the seed as written.  The wire format of TOKEN and 911 is at the end of this module.
"""

from __future__ import annotations

from dataclasses import dataclass

from .events import CancelTimer, Effect, Receive, Send, SetTimer, TimerFired, Trace, TraceEvent, Up, View, ViewChange
from .layer import bump

NULL = 0                    # "no node" in a pointer field
NULL_VIEW: tuple = ()       # the NULL entry of a globalView vector
VIEW_STATES = ("Agreement", "Chaos", "Reserve")
TOKEN_STATES = ("Eating", "Hungry", "Starving")
STATUS_911 = ("YES", "NO", "REJECT")


@dataclass(frozen=True, slots=True)
class TokenMsg:
    """The token (Figure 6 without the signature).  The same record is the
    token in transit, the token a node holds while Eating and lastToken."""
    seq: int
    nodelist: tuple[int, ...]
    cur: int
    dest: int
    gvn: int
    # what the layer above has the token carry (FLUSH over the ring: its latest
    # view's id, spec/RaincoreFlush ViewUnderToken); not Raincore's, so not traced
    above: int = 0

    def to_json(self) -> dict:
        return {"seq": self.seq, "nodelist": list(self.nodelist), "cur": self.cur,
                "dest": self.dest, "gvn": self.gvn}

    def replace(self, **kw) -> "TokenMsg":
        d = {"seq": self.seq, "nodelist": self.nodelist, "cur": self.cur, "dest": self.dest, "gvn": self.gvn,
             "above": self.above}
        d.update(kw)
        return TokenMsg(**d)


@dataclass(frozen=True, slots=True)
class Msg911:
    """The 911 message (Figure 7 without the signature)."""
    orig: int
    cur: int
    dest: int
    nodelist: tuple[int, ...]
    seq: int
    status: str

    def to_json(self) -> dict:
        return {"orig": self.orig, "cur": self.cur, "dest": self.dest, "nodelist": list(self.nodelist),
                "seq": self.seq, "status": self.status}

    def replace(self, **kw) -> "Msg911":
        d = {"orig": self.orig, "cur": self.cur, "dest": self.dest, "nodelist": self.nodelist,
             "seq": self.seq, "status": self.status}
        d.update(kw)
        return Msg911(**d)


NO_TOKEN = TokenMsg(0, (), NULL, NULL, 0)


def spec_msg(msg) -> dict:
    """The spec's record for a message, tagged with its type for the trace."""
    return {"type": "TOKEN" if isinstance(msg, TokenMsg) else "911", **msg.to_json()}


# ---------------------------------------------------------------- events in

@dataclass(frozen=True, slots=True)
class Start:
    """The node process starts (Initialization for a cold-start founder).
    ``token``: a configured node of a steady ring starts Eating the token
    (its lastToken), as spec/RaincoreFlush's Init has its Founder; the
    composed stack's simulator (impl/sim_raincoreflush.py) starts so."""
    token: bool = False


@dataclass(frozen=True, slots=True)
class DeliveryFailed:
    """The Transport Manager could not deliver ``msg`` (sent by this node)."""
    msg: object


@dataclass(frozen=True, slots=True)
class Crash:
    pass


@dataclass(frozen=True, slots=True)
class Recover:
    pass


@dataclass(frozen=True, slots=True)
class Join:
    pass


# ---------------------------------------------------------------- rings

def next_node(ring: tuple, n: int) -> int:
    """The node after ``n`` on ``ring`` (the head if ``n`` is not on it)."""
    if n in ring:
        return ring[(ring.index(n) + 1) % len(ring)]
    return ring[0]


def last_global_view(gv) -> tuple:
    for v in reversed(gv):
        if v != NULL_VIEW:
            return v
    return NULL_VIEW


def last_index(gv) -> int:
    """The index (1-based) of a globalView's last non-NULL entry, 0 if none:
    the ring's number of its last commit (spec/RaincoreFlush's LastIdx)."""
    for i in range(len(gv), 0, -1):
        if gv[i - 1] != NULL_VIEW:
            return i
    return 0


@dataclass
class Timing:
    """Timer lengths in seconds (the seed leaves them to configuration)."""
    eating: float = 0.005
    hungry: float = 0.25
    starving: float = 0.1


class Raincore:
    name = "raincore"

    def __init__(self, nid: int, init_ring, *, init_seq: int, cold_start: bool = False,
                 timing: Timing | None = None, neutral_recovery: bool = True, fresh_claim: bool = True,
                 fresh_view: bool = True, token_ring_claim: bool = True, tracing: bool = True) -> None:
        ring = tuple(init_ring)
        if fresh_view and not neutral_recovery:
            raise ValueError("raincore: fresh_view needs neutral_recovery (it tracks 'recovered')")
        if token_ring_claim and not neutral_recovery:
            raise ValueError("raincore: token_ring_claim needs neutral_recovery (a positive claim must prove "
                             "its originator is on the ring)")
        if len(ring) < 2 or len(set(ring)) != len(ring) or init_seq < len(ring):
            raise ValueError(f"raincore: need a ring of >= 2 distinct nodes and init_seq >= its size: "
                             f"{ring}, {init_seq}")
        self.nid = nid
        self.init_ring = ring
        self.init_seq = init_seq
        self.cold_start = cold_start
        self.timing = timing or Timing()
        self.neutral_recovery = neutral_recovery
        self.fresh_claim = fresh_claim
        self.fresh_view = fresh_view
        self.token_ring_claim = token_ring_claim
        self.tracing = tracing
        self.stats: dict[str, int] = {}
        self.newNodes: set[int] = set()
        self.token = NO_TOKEN
        self.recovered = False
        # The spec's InitNode: configured nodes start Up (a cold-start founder
        # Off until Initialization), new nodes Off until they Join.
        if nid in ring and not cold_start:
            i = ring.index(nid)
            self.status, self.viewState, self.tokenState = "Up", "Agreement", "Hungry"
            self.globalView: list[tuple] = [ring]
            self.lastToken = TokenMsg(init_seq - (len(ring) - 1 - i), ring, nid, next_node(ring, nid), 1)
            self.localView: tuple = ring
        elif nid in ring and nid != ring[0]:
            self.status, self.viewState, self.tokenState = "Up", "Chaos", "Hungry"
            self.globalView, self.lastToken, self.localView = [], NO_TOKEN, ring
        else:
            self.status, self.viewState, self.tokenState = "Off", "Chaos", "Starving"
            self.globalView, self.lastToken, self.localView = [], NO_TOKEN, ()

    # ------------------------------------------------------------ state

    @property
    def globalViewNumber(self) -> int:
        return len(self.globalView)

    @property
    def lastGlobalView(self) -> tuple:
        return last_global_view(self.globalView)

    def view_of(self) -> tuple:
        """The ring 911s follow: lastGlobalView, or the configured ring."""
        return self.lastGlobalView or self.init_ring

    def claim_ring(self) -> tuple:
        """The ring this node's 911s travel: view_of(), or (token_ring_claim,
        F7) its lastToken's nodelist, which also lists the nodes taken in
        since the last commit: they may hold a later token and must be asked."""
        if self.token_ring_claim and self.lastToken.nodelist:
            return self.lastToken.nodelist
        return self.view_of()

    def higher_claim(self, m: Msg911) -> bool:
        """token_ring_claim: a non-member's 911 that claims more than we do is
        answered as well as queued: its originator has held a later token,
        so it is on the ring even if we have not seen it added."""
        return self.token_ring_claim and m.seq > self.claim_seq()

    def claim_seq(self) -> int:
        return 0 if self.recovered else self.lastToken.seq

    def state(self) -> dict:
        """This node's part of the spec state, JSON-ready."""
        return {"status": self.status, "viewState": self.viewState, "tokenState": self.tokenState,
                "globalView": [list(v) for v in self.globalView], "lastToken": self.lastToken.to_json(),
                "localView": list(self.localView), "newNodes": sorted(self.newNodes),
                "token": self.token.to_json(), "recovered": self.recovered}

    def _trace(self, name: str, msg=None) -> list[Effect]:
        if not self.tracing:
            return []
        return [Trace(TraceEvent(name, self.nid, spec_msg(msg) if msg is not None else None, {}, self.state()))]

    # ------------------------------------------------------------ timers

    def _enter(self, token_state: str, now: float) -> list[Effect]:
        """Set the token state and (re)start the timer of the new state."""
        self.tokenState = token_state
        out: list[Effect] = [CancelTimer(t) for t in ("eating", "hungry", "starving") if t != token_state.lower()]
        at = now + getattr(self.timing, token_state.lower())
        return out + [SetTimer(token_state.lower(), at)]

    def _call911(self) -> Msg911:
        ring = self.claim_ring()
        return Msg911(self.nid, self.nid, next_node(ring, self.nid), ring, self.claim_seq(), "YES")

    def _committed(self, index: int, members: tuple) -> Up:
        return Up(self.nid, ViewChange(View(index, members)))

    # ------------------------------------------------------------ dispatch

    def handle(self, event, now: float) -> list[Effect]:
        if isinstance(event, Crash):
            return self._crash()
        if isinstance(event, Recover):
            return self._recover(now)
        if isinstance(event, Join):
            return self._join(now)
        if self.status != "Up" and not (isinstance(event, Start) and self.status == "Off"):
            bump(self.stats, "while_not_up")
            return []
        if isinstance(event, Start):
            return self._start(event, now)
        if isinstance(event, Receive):
            if isinstance(event.msg, TokenMsg):
                return self._token_received(event.msg, now)
            if isinstance(event.msg, Msg911):
                return self._911_received(event.msg, now)
            bump(self.stats, "unknown_message")
            return []
        if isinstance(event, DeliveryFailed):
            if isinstance(event.msg, TokenMsg):
                return self._token_delivery_failure(event.msg, now)
            if isinstance(event.msg, Msg911):
                return self._911_delivery_failure(event.msg)
            bump(self.stats, "unknown_message")
            return []
        if isinstance(event, TimerFired):
            want = {"eating": "Eating", "hungry": "Hungry", "starving": "Starving"}.get(event.name)
            if want is None or self.tokenState != want:
                bump(self.stats, "stale_timer")   # cancelled timers never fire; count if one does
                return []
            if want == "Eating":
                return self._eating_timeout(now)
            if want == "Hungry":
                return self._hungry_timeout(now)
            return self._starving_timeout(now)
        bump(self.stats, "unknown_event")
        return []

    # ------------------------------------------------------------ the eight events

    def _start(self, event: Start, now: float) -> list[Effect]:
        if self.status == "Up":       # a configured node: its state is Init's
            if event.token:
                # spec/RaincoreFlush's SteadyToken (the token has gone round once):
                # the founder eats the token its predecessor sent last (seq
                # init_seq - 1, its predecessor's lastToken) and sent its own last
                # token a round before; the composed stack starts each layer with
                # init_seq = the ring's size + 1 so that every node's lastToken is
                # the spec's (impl/stacks/raincoreflush.py ``steady_seq``)
                ring = self.init_ring
                nxt = next_node(ring, self.nid)
                self.token = TokenMsg(self.init_seq - 1, ring, self.nid, nxt, 1)
                self.lastToken = TokenMsg(self.init_seq - len(ring), ring, self.nid, nxt, 1)
                return self._enter("Eating", now)
            return self._enter(self.tokenState, now)
        if self.nid not in self.init_ring:
            bump(self.stats, "start_not_configured")   # a new node starts by Join
            return []
        # 1. Initialization: the founder creates the token and sends it on.
        ring = self.init_ring
        t = TokenMsg(self.init_seq, ring, self.nid, next_node(ring, self.nid), 0)
        self.status, self.viewState, self.localView, self.lastToken = "Up", "Chaos", ring, t
        tim = self._enter("Hungry", now)
        return self._trace("Initialization") + [codec_send(t)] + tim

    def _token_received(self, m: TokenMsg, now: float) -> list[Effect]:
        # 2. Dropped while Eating, or when not newer than the last token sent.
        if self.tokenState == "Eating" or m.seq <= self.lastToken.seq:
            bump(self.stats, "tokens_dropped")
            return self._trace("TokenReceived", m)
        # fresh_view: a recovered node's retained localView is stale, never a match
        same = m.nodelist == self.localView and not (self.fresh_view and self.recovered)
        vs0, gv0 = self.viewState, list(self.globalView)
        reserve = vs0 == "Chaos" and same
        commit = vs0 == "Reserve" and same
        if vs0 == "Chaos":
            self.viewState = "Reserve" if same else "Chaos"
        else:
            self.viewState = "Agreement" if same else "Chaos"
        out: list[Effect] = []
        if reserve:
            gv1 = gv0 + [NULL_VIEW]            # reserve the next free slot
        elif commit:
            gv1 = gv0[:-1] + [m.nodelist]      # commit into the reserved slot
            out.append(self._committed(len(gv1), m.nodelist))
        else:
            gv1 = gv0
        tgvn = len(gv1) if reserve else m.gvn
        if tgvn > len(gv1):                    # adopt the token's larger globalViewNumber
            gv1 = gv1 + [NULL_VIEW] * (tgvn - len(gv1))
        self.globalView = gv1
        self.localView = m.nodelist
        self.token = m.replace(cur=self.nid, gvn=tgvn)
        self.recovered = False
        tim = self._enter("Eating", now)
        return self._trace("TokenReceived", m) + out + tim

    def _veto(self, m: Msg911) -> bool:
        c = self.claim_seq()
        return self.tokenState == "Eating" or m.seq < c or (m.seq == c and self.nid > m.orig)

    def _regenerate(self, m: Msg911) -> bool:
        return (m.status == "YES" and self.tokenState == "Starving" and self.lastToken.nodelist != ()
                and (not self.fresh_claim or m.seq == self.claim_seq()) and not self.recovered)

    def _911_received(self, m: Msg911, now: float) -> list[Effect]:
        # 3.
        n = self.nid
        if m.orig == n:
            if self._regenerate(m):
                self.token = self.lastToken.replace(cur=n)
                self.recovered = False
                bump(self.stats, "regenerated")
                tim = self._enter("Eating", now)
                return self._trace("911Received", m) + tim
            return self._trace("911Received", m)
        if self._veto(m):
            answer = m.replace(cur=n, status="NO", dest=m.orig)
        else:
            answer = m.replace(cur=n, dest=next_node(m.nodelist, n))
        if m.orig in self.view_of():
            return self._trace("911Received", m) + [codec_send(answer)]
        higher = self.higher_claim(m)
        self.newNodes.add(m.orig)              # a join request
        return self._trace("911Received", m) + ([codec_send(answer)] if higher else [])

    def _token_delivery_failure(self, m: TokenMsg, now: float) -> list[Effect]:
        # 4. Drop the dead node, point at the next one, count the hop.
        n = self.nid
        nl = tuple(x for x in m.nodelist if x != m.dest)
        if not nl:
            bump(self.stats, "empty_nodelist")
            return []
        t = m.replace(nodelist=nl, dest=next_node(nl, n), seq=m.seq + 1)
        self.localView = nl
        if nl == (n,):                         # alone: commit the single-node view at once
            t1 = t.replace(gvn=self.globalViewNumber + 1)
            self.viewState = "Agreement"
            self.globalView = self.globalView + [nl]
            self.lastToken = self.token = t1
            tim = self._enter("Eating", now)
            return self._trace("TokenDeliveryFailure", m) + [self._committed(len(self.globalView), nl)] + tim
        self.viewState = "Chaos"
        self.lastToken = t
        self.token = NO_TOKEN
        tim = self._enter("Hungry", now)
        return self._trace("TokenDeliveryFailure", m) + [codec_send(t)] + tim

    def _911_delivery_failure(self, m: Msg911) -> list[Effect]:
        # 5.
        out = m.replace(dest=next_node(m.nodelist, m.dest))
        return self._trace("911DeliveryFailure", m) + [codec_send(out)]

    def _eating_timeout(self, now: float) -> list[Effect]:
        # 6. Add the queued new nodes after this node, then pass the token on.
        n, t = self.nid, self.token
        add = self.newNodes - set(t.nodelist)
        nl = t.nodelist
        if add:
            if n not in nl:
                bump(self.stats, "not_on_own_token")
                return []
            i = nl.index(n) + 1
            nl = nl[:i] + tuple(sorted(add)) + nl[i:]
            self.viewState = "Chaos"
        self.newNodes = set()
        if len(nl) > 1:
            t2 = t.replace(nodelist=nl, cur=n, dest=next_node(nl, n), seq=t.seq + 1)
            self.lastToken = t2
            self.token = NO_TOKEN
            tim = self._enter("Hungry", now)
            return self._trace("EatingTimeout") + [codec_send(t2)] + tim
        tim = self._enter("Eating", now)       # alone: keep eating
        return self._trace("EatingTimeout") + tim

    def _hungry_timeout(self, now: float) -> list[Effect]:
        # 7.
        self.viewState = "Chaos"
        tim = self._enter("Starving", now)
        return self._trace("HungryTimeout") + [codec_send(self._call911())] + tim

    def _starving_timeout(self, now: float) -> list[Effect]:
        # 8.
        tim = self._enter("Starving", now)
        return self._trace("StarvingTimeout") + [codec_send(self._call911())] + tim

    # ------------------------------------------------------------ environment

    def _crash(self) -> list[Effect]:
        if self.status != "Up":
            bump(self.stats, "crash_not_up")
            return []
        # The data structures survive; the two state machines stop.
        self.status, self.viewState, self.tokenState, self.token = "Down", "Chaos", "Starving", NO_TOKEN
        return self._trace("Crash") + [CancelTimer(t) for t in ("eating", "hungry", "starving")]

    def _recover(self, now: float) -> list[Effect]:
        if self.status != "Down":
            bump(self.stats, "recover_not_down")
            return []
        self.status, self.viewState = "Up", "Chaos"
        self.recovered = self.neutral_recovery
        call = self._call911()
        tim = self._enter("Starving", now)
        return self._trace("Recover") + [codec_send(call)] + tim

    def _join(self, now: float) -> list[Effect]:
        if self.status != "Off" or self.nid in self.init_ring:
            bump(self.stats, "join_not_new")
            return []
        self.status, self.viewState = "Up", "Chaos"
        tim = self._enter("Starving", now)
        return self._trace("Join") + [codec_send(self._call911())] + tim


def codec_send(msg) -> Effect:
    """A message handed to the Transport Manager: ``Send`` to its ``dest``."""
    return Send(msg.dest, msg)


# the bytes of TOKEN and 911 on the wire: impl/stacks/raincore.py (codec 30-31)
