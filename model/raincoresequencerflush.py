"""Python mirror of spec/RaincoreSequencerFlush/RaincoreSequencerFlush.tla.

Theory of operation
-------------------
SEQUENCER over FLUSH (:mod:`.sequencerflush`) whose membership is the
Raincore token ring, as :mod:`.raincoreflush` does it for FLUSH alone: the
view the flush initiator installs is the ring's committed view (sorted, so
that SEQUENCER's coordinator, the first member of a view, is its smallest
member); a member counts gone exactly the members of its view its ring
``localView`` no longer lists (``Gone``), which replaces every use of the
perfect failure detector ``crashed``; a joiner enters through the 911 path.

The ring part (variables as tuples over ``1..N``, the actions TokenReceived,
911Received, TokenDeliveryFailure, 911DeliveryFailure, EatingTimeout, Join)
and its failure detector (Dead, Alive, Gone, ViewChangePending, the ring's
view in NextView) are :class:`.raincoreflush.RaincoreFlushModel`'s; the
SEQUENCER and FLUSH actions and properties are
:class:`.sequencerflush.SequencerFlushModel`'s, which read the failure
detector only through those operators.  What this spec adds is here: a
joiner's first InstallView, Crash (the ring's), the order of Next, TypeOK.
Per-member SEQUENCER and FLUSH variables are ``Fn`` over ``1..N`` as in
:mod:`.sequencerflush` (TLC prints them as tuples).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from .core import Label, state_type
from .flush import FlushModel
from .raincore import NULL_VIEW
from .raincoreflush import RaincoreFlushKernel, RaincoreFlushModel, RingViewMsg
from .sequencer import _subsets
from .sequencerflush import (COMPLETED, DAT, FWD, MSG_TYPES, NO_INIT, OK, PHASES, START, STOP, VIEW, LastView,
                             Longest, SequencerFlushKernel, SequencerFlushModel, _mcast)
from .sequencerflush import _set as _kset
from .values import Fn


@state_type
class RaincoreSequencerFlushState(NamedTuple):
    # SEQUENCER over FLUSH (SequencerFlush.tla without crashed and ndel)
    views: tuple      # views[i-1]: the i-th view, a sorted tuple of members
    vid: Fn           # member -> index of its installed view (0: not joined)
    sent: Fn
    fwd: Fn
    recv: Fn
    delivered: Fn
    chan: Fn
    log: Fn
    closed: Fn
    phase: Fn
    blocked: Fn
    flushInit: Fn
    flushOks: Fn
    completed: Fn
    viewRing: tuple   # viewRing[i-1]: the ring's number of view i (RaincoreFlush's)
    # the ring (RaincoreFlush.tla's)
    status: tuple
    viewState: tuple
    globalView: tuple
    localView: tuple
    newNodes: tuple
    token: tuple
    tokenMsgs: frozenset
    msgs911: frozenset


class RaincoreSequencerFlushModel(SequencerFlushModel, RaincoreFlushModel):
    """SequencerFlush's actions and properties over this state, with
    RaincoreFlush's ring: the ring's actions, its failure detector (Dead,
    Alive, Gone) and its view (NextView) replace SequencerFlush's."""

    protocol = "raincoresequencerflush"
    variables = RaincoreSequencerFlushState._fields
    UniformDelivery = False   # SequencerFlush's constant; not this spec's
    # RaincoreFlush's failure detector and membership, not SequencerFlush's
    Dead = RaincoreFlushModel.Dead
    Alive = staticmethod(RaincoreFlushModel.Alive)
    CanReceive = FlushModel.CanReceive
    ViewChangePending = RaincoreFlushModel.ViewChangePending
    # RaincoreFlush's FLUSH-only actions and properties (DATA by id, set
    # views, tuple variables) are not this spec's: hidden, so that nothing
    # calls them on a SEQUENCER state.
    Multicast = Deliver = SentIn = NoSendWhileBlocked = ViewAfterAllCompleted = None

    def __init__(self, constants: Mapping[str, Any]) -> None:
        c = dict(constants)
        c.setdefault("MaxMsgs", 0)  # RaincoreFlushModel's constructor reads it; unused here
        RaincoreFlushModel.__init__(self, c)
        self.MaxSeq = int(c["MaxSeq"])
        self.Senders = frozenset(c["Senders"])
        self.ResendAlways = bool(c["ResendAlways"])
        self.ResentFirst = bool(c["ResentFirst"])

    # --- helpers (the spec's operators over Fn-valued vid) ----------------------
    @staticmethod
    def IsMember(s, p: int) -> bool:
        v = s.vid[p]
        return v >= 1 and p in s.views[v - 1]

    @staticmethod
    def Gone(s, p: int) -> frozenset:
        return frozenset(s.views[s.vid[p] - 1]) - frozenset(s.localView[p - 1])

    def IsInitiator(self, s, c: int) -> bool:
        return all(c <= q for q in frozenset(self.View(s, c)) - self.Gone(s, c))

    def NewerRingView(self, s, c: int) -> bool:
        return not self.NewerViewsOnly or self.LastIdx(s, c) > s.viewRing[s.vid[c] - 1]

    def NextView(self, s, c: int, v: int, D: tuple):
        """RaincoreFlush's: the ring's commit, sorted (SEQUENCER's coordinator is its smallest member)."""
        nxt = RaincoreFlushModel.NextView(self, s, c, v, D)
        if nxt is None:
            return None
        new, R, msg, more = nxt
        return tuple(sorted(new)), R, msg, more

    # --- init -------------------------------------------------------------------
    def init(self):
        (r,) = RaincoreFlushModel.init(self)  # the ring's steady start, RaincoreFlush's
        M = self.Members
        yield RaincoreSequencerFlushState(
            views=(self.InitRing,),
            vid=Fn({m: 1 if m <= self.NInit else 0 for m in M}),
            sent=Fn({m: 0 for m in M}),
            fwd=Fn({m: frozenset() for m in M}),
            recv=Fn({m: Fn({x: 0 for x in M}) for m in M}),
            delivered=Fn({m: () for m in M}),
            chan=Fn({e: () for e in self.pairs}),
            log=Fn({m: () for m in M}),
            closed=Fn({m: () for m in M}),
            phase=Fn({m: "Normal" for m in M}),
            blocked=Fn({m: False for m in M}),
            flushInit=Fn({m: NO_INIT for m in M}),
            flushOks=Fn({m: frozenset() for m in M}),
            completed=Fn({m: frozenset() for m in M}),
            viewRing=(1,),
            status=r.status, viewState=r.viewState, globalView=r.globalView, localView=r.localView,
            newNodes=r.newNodes, token=r.token, tokenMsgs=r.tokenMsgs, msgs911=r.msgs911,
        )

    # --- what the ring adds -------------------------------------------------------
    def InstallView(self, s, p: int, c: int):
        """SequencerFlush's; a joiner (vid 0) installs its first view with no
        digest, closed 0 for the views before it."""
        if s.vid[p] != 0:
            return super().InstallView(s, p, c)
        if not (self.Alive(s, p) and self.HasMsg(s, p, c)):
            return None
        m = self.In(s, p, c)
        if m["type"] != "VIEW":
            return None
        return s._replace(
            vid=s.vid.set(p, m["view"] + 1),
            flushInit=s.flushInit.set(p, NO_INIT),
            phase=s.phase.set(p, "Normal"),
            flushOks=s.flushOks.set(p, frozenset()),
            completed=s.completed.set(p, frozenset()),
            closed=s.closed.set(p, (0,) * m["view"]),
            chan=self.Take(s.chan, p, c),
        )

    def CanCrash(self, s, p: int) -> bool:
        dead = self.Dead(s)
        return (
            self.Alive(s, p)
            and self.IsMember(s, p)
            and p in self.Crashable
            and len(dead) < self.MaxCrashes
            and bool(frozenset(s.views[-1]) - dead - {p})
            and not self.Eating(s, p)
            and all(m["cur"] != p for m in s.tokenMsgs)
        )

    def Crash(self, s, m: int, lost: frozenset):
        if not self.CanCrash(s, m):
            return None
        upd = {}
        for e in self.pairs:
            seq = s.chan[e]
            if e[1] == m:
                upd[e] = ()
            elif e[0] == m and e[1] in lost:
                upd[e] = seq[: LastView(seq)]
        return s._replace(
            status=s.status[: m - 1] + ("Down",) + s.status[m:],
            chan=s.chan.update(upd),
            msgs911=frozenset(x for x in s.msgs911 if x["cur"] != m),
        )

    # --- next -----------------------------------------------------------------------
    SINGLE = ("EatingTimeout", "Send", "StartFlush", "FlushOk", "FlushCompleted", "SendView", "StopFlush", "Join")
    PAIR = ("RecvForward", "RecvData", "Discard", "Block", "RestartFlush", "ReceiveFlushOk",
            "ReceiveFlushCompleted", "InstallView", "Unblock")

    def next(self, s):
        M = self.Members
        for n in M:
            for m in s.tokenMsgs:
                for name, fn in (("TokenReceived", self.TokenReceived),
                                 ("TokenDeliveryFailure", self.TokenDeliveryFailure)):
                    t = fn(s, n, m)
                    if t is not None:
                        yield Label(name, (n, m)), t
            for m in s.msgs911:
                for name, fn in (("911Received", self.Received911), ("911DeliveryFailure", self.DeliveryFailure911)):
                    t = fn(s, n, m)
                    if t is not None:
                        yield Label(name, (n, m)), t
            for name in self.SINGLE:
                t = getattr(self, name)(s, n)
                if t is not None:
                    yield Label(name, (n,)), t
            if self.CanCrash(s, n):
                for lost in _subsets(set(M) - {n}):
                    yield Label("Crash", (n, lost)), self.Crash(s, n, lost)
        for p, q in self.pairs:
            if not s.chan[(q, p)]:
                continue  # every pair action takes from the channel q -> p
            for name in self.PAIR:
                t = getattr(self, name)(s, p, q)
                if t is not None:
                    yield Label(name, (p, q)), t

    # The methods RaincoreSequencerFlushKernel transcribes (see RaincoreFlushModel's).
    _KERNEL_TRANSCRIBES = ("init", "next", "constraint", "Dead", "Alive", "View", "IsCoord", "IsMember", "Gone",
                           "IsInitiator", "ViewChangePending", "Multi", "SendTo", "McastData", "Take", "Moved",
                           "NextView", "Absorb", "Purged", "HasMsg", "In", "CanReceive", "LastGlobalView", "Eating",
                           "ResentPending", "_flush_msg", "_flush_msg_from", "CanCrash", "Crash", *SINGLE, *PAIR)

    def kernel(self):
        return self.transcribed_kernel(RaincoreSequencerFlushModel, RaincoreSequencerFlushKernel)

    # --- properties -------------------------------------------------------------------
    @property
    def invariants(self):
        seq = SequencerFlushModel.invariants.fget(self)
        return {
            **{name: seq[name] for name in ("TypeOK", "NoDuplicates", "Integrity", "SenderFIFO", "SurvivorTotalOrder",
                                            "VirtualSynchrony", "LogsAgree")},
            "AtMostOneToken": self.AtMostOneToken,
            "ConsistentHistory": self.ConsistentHistory,
            "ViewsFromRing": self.ViewsFromRing,
        }

    def TypeOK(self, s) -> bool:
        M = set(self.Members)
        L = len(s.views)
        return (
            L >= 1
            and self.SeqFlushTypeOK(s)
            and len(s.viewRing) == L and all(isinstance(i, int) and i >= 1 for i in s.viewRing)
            and all(0 <= s.vid[m] <= L for m in M)
            and all(len(s.closed[m]) == max(s.vid[m] - 1, 0) for m in M)
            and all(x in ("Off", "Up", "Down") for x in s.status)
            and all(set(v) <= M for gv in s.globalView for v in gv)
            and all(set(lv) <= M for lv in s.localView)
            and all(nn <= M for nn in s.newNodes)
            and all(set(t) == {"nodelist", "cur", "dest", "gvn"} for t in s.token)
            and all(set(t) == {"nodelist", "cur", "dest", "gvn"} for t in s.tokenMsgs)
            and all(set(m) == {"orig", "cur", "dest"} for m in s.msgs911)
        )


# --- the explorer's fast encoding (model/core.py's Kernel) ------------------------
# kernel state fields (RaincoreSequencerFlushState's SEQUENCER/FLUSH order), then the ring
(_VIEWS, _VID, _SENT, _FWD, _RECV, _DELIVERED, _CHAN, _LOG, _CLOSED, _PHASE, _BLOCKED, _FLUSHINIT, _FLUSHOKS,
 _COMPLETED, _VIEWRING, _RING) = range(16)


class RaincoreSequencerFlushKernel(RaincoreFlushKernel):
    """``RaincoreSequencerFlushModel``'s actions over a lean encoding: the
    ring as :class:`.raincoreflush.RaincoreFlushKernel` does it (once per
    ring value, by the model's methods), the SEQUENCER and FLUSH variables
    as :class:`.sequencerflush.SequencerFlushKernel` encodes them (tuples
    per member, ``recv`` rows with -1 outside the table's domain, plain
    message tuples), the actions transcribed with ``crashed`` read as the
    spec reads it here: Dead for the sends, Gone for the flush guards."""

    _state_type = RaincoreSequencerFlushState
    RECEIVE = RaincoreSequencerFlushModel.PAIR
    _sf_record = SequencerFlushKernel._record
    _sf_encode_msg = SequencerFlushKernel._encode_msg

    def _record(self, msg: tuple) -> Fn:
        """SequencerFlush's message records, a VIEW with its ring number: (VIEW, view, digest, ring)."""
        if msg[0] == VIEW:
            r = self._recs.get(msg)
            if r is None:
                r = self._recs[msg] = RingViewMsg(msg[1], msg[2], msg[3])
            return r
        return self._sf_record(msg)

    def _encode_msg(self, r: Fn) -> tuple:
        if r["type"] == "VIEW":
            return self._m(VIEW, r["view"], r["digest"], r["ring"])
        return self._sf_encode_msg(r)
    _absorb = SequencerFlushKernel._absorb
    _field = SequencerFlushKernel._field   # phase stays the model's strings here
    _F_RECV, _F_CHAN, _F_PHASE = _RECV, _CHAN, None

    def __init__(self, model: RaincoreSequencerFlushModel) -> None:
        super().__init__(model)
        M = model.Members
        self.L["Crash"] = [[Label("Crash", (m, lost)) for lost in _subsets(set(M) - {m})] for m in M]
        self._memo: list[dict] = [{} for _ in range(_RING)]
        self._rows: dict = {}

    # --- encoding ---------------------------------------------------------------
    def encode(self, s) -> tuple:
        M = self.model.Members
        out = [s.views]
        for i, f in enumerate(s[1:_RING], start=1):
            if i == _RECV:
                out.append(tuple(tuple(f[m].get(x, -1) for x in M) for m in M))
            elif i == _CHAN:
                out.append(tuple(tuple(self._encode_msg(r) for r in f[e]) for e in self.pairs))
            elif i == _VIEWRING:
                out.append(f)
            else:
                out.append(tuple(f[m] for m in M))
        return (*out, tuple(s[_RING:]))

    def decode(self, k: tuple):
        field = self._field
        return tuple.__new__(RaincoreSequencerFlushState,
                             (k[_VIEWS], *[field(i, k[i]) for i in range(1, _VIEWRING)], k[_VIEWRING], *k[_RING]))

    # --- helpers over kernel states ---------------------------------------------
    def _moved(self, s: list, k: tuple, m: int, new: tuple, D: tuple, ch: list, dead) -> None:
        """Moved(m, new, D, ch) in place on the list ``s`` (ch: the channels, a list)."""
        i = m - 1
        row, dl, fw = self._absorb(m, k[_RECV][i], k[_DELIVERED][i], k[_FWD][i], D)
        nc = new[0]
        v = k[_VID][i]
        N = self.N
        for j in range(i, N * N, N):   # Purged: the channels (q, m)
            seq = ch[j]
            if seq:
                kept = tuple(x for x in seq if x[0] == FWD or x[1] > v)
                if len(kept) != len(seq):
                    ch[j] = kept
        if (k[_VIEWS][v - 1][0] != nc or self.model.ResendAlways) and nc not in dead:
            j = i * N + nc - 1
            m_ = self._m
            ch[j] = ch[j] + tuple(m_(FWD, 0, m, q) for q in sorted(fw))
        s[_RECV] = _kset(k[_RECV], i, tuple(x if n in new else -1 for n, x in enumerate(row, start=1)))
        s[_DELIVERED] = _kset(k[_DELIVERED], i, dl)
        s[_FWD] = _kset(k[_FWD], i, fw)
        s[_CLOSED] = _kset(k[_CLOSED], i, k[_CLOSED][i] + (len(dl),))
        s[_LOG] = _kset(k[_LOG], i, ())
        s[_CHAN] = tuple(ch)

    def _crashes(self, k: tuple, m: int, ring2: tuple) -> list:
        """Crash(m, lost) for every ``lost`` (the ring part given)."""
        chan = k[_CHAN]
        N = self.N
        i = m - 1
        base = list(chan)
        for x in range(i, N * N, N):   # every channel into m
            base[x] = ()
        out = []
        for lab in self.L["Crash"][i]:
            ch = base[:]
            for q in lab.params[1]:
                j = i * N + q - 1
                seq = chan[j]
                last = 0
                for x, msg in enumerate(seq, start=1):
                    if msg[0] == VIEW:
                        last = x
                ch[j] = seq[:last]
            out.append((lab, k[:_CHAN] + (tuple(ch),) + k[_CHAN + 1:_RING] + (ring2,)))
        return out

    # --- Next -----------------------------------------------------------------
    def next(self, k: tuple):
        (views, vid, sent, fwd, recv, delivered, chan, log, closed, phase, blocked, flushInit, flushOks,
         completed, viewRing, ring) = k
        model = self.model
        msg_ops, eat, join, _, crash, _, alive, dead, lv, lgv, lidx = self._ring(ring)
        newer = not model.NewerViewsOnly
        N = self.N
        M = model.Members
        m_ = self._m
        L = self.L
        out = []
        add = out.append
        nviews = len(views)
        head = k[:_RING]

        def member(p):
            v = vid[p - 1]
            return v >= 1 and p in views[v - 1]

        for n in M:
            i = n - 1
            for lab, r2 in msg_ops[i]:
                add((lab, head + (r2,)))
            if eat[i]:
                add((eat[i][0], head + (eat[i][1],)))
            if alive[i] and member(n):
                v = vid[i]
                view = views[v - 1]
                ph = phase[i]
                live = frozenset(view) & lv[i]
                # Send(n)
                if (n in model.Senders and not blocked[i] and sent[i] < model.MaxSeq
                        and not (model.ResentFirst and any(x[0] == FWD for x in chan[i * N + i]))):
                    q = sent[i] + 1
                    s = list(k)
                    s[_SENT] = _kset(sent, i, q)
                    if view[0] == n:
                        s[_CHAN] = _mcast(chan, i, N, view, dead, m_(DAT, v, n, q))
                        s[_LOG] = _kset(log, i, log[i] + ((n, q),))
                    else:
                        s[_FWD] = _kset(fwd, i, fwd[i] | {q})
                        c = view[0]
                        if c not in dead:
                            j = i * N + c - 1
                            s[_CHAN] = _kset(chan, j, chan[j] + (m_(FWD, 0, n, q),))
                    add((L["Send"][i], tuple(s)))
                # StartFlush(n): IsInitiator, ViewChangePending
                g = lgv[i]
                fresh = newer or lidx[i] > viewRing[v - 1]     # NewerRingView(n)
                if (v == nviews and all(n <= q for q in live) and flushInit[i] != n
                        and g != NULL_VIEW and frozenset(g) != frozenset(views[-1]) and fresh):
                    ch = list(chan)
                    self._multi(ch, n, view, m_(START, v), dead)
                    s = list(k)
                    s[_CHAN] = tuple(ch)
                    s[_FLUSHINIT] = _kset(flushInit, i, n)
                    if ph == "Normal":
                        s[_PHASE] = _kset(phase, i, "InBlock")
                    s[_COMPLETED] = _kset(completed, i, frozenset({(n, log[i])}) if ph == "Completed"
                                          else frozenset())
                    add((L["StartFlush"][i], tuple(s)))
                # FlushOk(n)
                if ph == "InBlock":
                    ch = list(chan)
                    self._multi(ch, n, view, m_(OK, v), dead)
                    s = list(k)
                    s[_PHASE] = _kset(phase, i, "OkSent")
                    s[_FLUSHOKS] = _kset(flushOks, i, flushOks[i] | {n})
                    s[_CHAN] = tuple(ch)
                    add((L["FlushOk"][i], tuple(s)))
                # FlushCompleted(n)
                if ph == "OkSent" and live <= flushOks[i]:
                    c = flushInit[i]
                    s = list(k)
                    s[_PHASE] = _kset(phase, i, "Completed")
                    s[_BLOCKED] = _kset(blocked, i, True)
                    if c == n:
                        s[_COMPLETED] = _kset(completed, i, completed[i] | {(n, log[i])})
                    else:
                        ch = list(chan)
                        self._multi(ch, n, (c,), m_(COMPLETED, v, log[i]), dead)
                        s[_CHAN] = tuple(ch)
                    add((L["FlushCompleted"][i], tuple(s)))
                # SendView(n)
                if (flushInit[i] == n and ph == "Completed" and live <= {r[0] for r in completed[i]}
                        and fresh):
                    gone = frozenset(view) - lv[i]
                    new = tuple(sorted(set(g)))
                    D = Longest({r[1] for r in completed[i] if r[0] not in gone})
                    ch = list(chan)
                    self._multi(ch, n, set(view) | set(new), m_(VIEW, v, D, lidx[i]), dead)
                    s = list(k)
                    s[_VIEWS] = views + (new,)
                    s[_VIEWRING] = viewRing + (lidx[i],)
                    s[_VID] = _kset(vid, i, v + 1)
                    s[_PHASE] = _kset(phase, i, "Normal")
                    s[_FLUSHOKS] = _kset(flushOks, i, frozenset())
                    s[_COMPLETED] = _kset(completed, i, frozenset())
                    self._moved(s, k, n, new, D, ch, dead)
                    add((L["SendView"][i], tuple(s)))
                # StopFlush(n)
                if flushInit[i] == n and ph == "Normal":
                    ch = list(chan)
                    prev = views[v - 2]
                    self._multi(ch, n, [x for x in view if x in prev], m_(STOP, v), dead)
                    s = list(k)
                    s[_CHAN] = tuple(ch)
                    s[_BLOCKED] = _kset(blocked, i, False)
                    s[_FLUSHINIT] = _kset(flushInit, i, NO_INIT)
                    add((L["StopFlush"][i], tuple(s)))
            if join[i]:
                add((join[i][0], head + (join[i][1],)))
            # Crash(n, lost)
            if crash[i] is not None and member(n) and frozenset(views[-1]) - dead - {n}:
                out.extend(self._crashes(k, n, crash[i]))
        # the pair actions (p, q): each reads the head of the channel q -> p
        for p, q, j, lab in self.L_pair:
            seq = chan[j]
            if not seq or not alive[p - 1]:
                continue   # every pair action needs Alive(p) and a message
            msg = seq[0]
            kind = msg[0]
            i = p - 1
            v = vid[i]
            canrecv = member(p)
            rest = _kset(chan, j, seq[1:])
            if kind == VIEW:
                mv = msg[1]
                if canrecv and mv < v:   # Discard(p, q)
                    add((lab["Discard"], k[:_CHAN] + (rest,) + k[_CHAN + 1:]))
                if (canrecv and mv == v) or v == 0:   # InstallView(p, q)
                    s = list(k)
                    s[_VID] = _kset(vid, i, mv + 1)
                    s[_FLUSHINIT] = _kset(flushInit, i, NO_INIT if v == 0 else q)
                    s[_PHASE] = _kset(phase, i, "Normal")
                    s[_FLUSHOKS] = _kset(flushOks, i, frozenset())
                    s[_COMPLETED] = _kset(completed, i, frozenset())
                    if v == 0:   # a joiner: no digest, closed 0 for the views before it
                        s[_CLOSED] = _kset(closed, i, (0,) * mv)
                        s[_CHAN] = rest
                    else:
                        self._moved(s, k, p, views[mv], msg[2], list(rest), dead)
                    add((lab["InstallView"], tuple(s)))
                continue
            if not canrecv:
                continue
            if kind == FWD:   # RecvForward(p, q)
                s = list(k)
                view = views[v - 1]
                if view[0] == p:
                    snd, x = msg[2], msg[3]
                    s[_CHAN] = _mcast(rest, i, N, view, dead, m_(DAT, v, snd, x))
                    s[_LOG] = _kset(log, i, log[i] + ((snd, x),))
                else:
                    s[_CHAN] = rest
                add((lab["RecvForward"], tuple(s)))
                continue
            mv = msg[1]
            ph = phase[i]
            if kind == DAT:
                if mv == v and ph != "Completed":   # RecvData(p, q)
                    snd, x = msg[2], msg[3]
                    s = list(k)
                    s[_CHAN] = rest
                    if q != p:
                        s[_LOG] = _kset(log, i, log[i] + ((snd, x),))
                    if snd == p:
                        s[_FWD] = _kset(fwd, i, fwd[i] - {x})
                    row = recv[i]
                    if x > row[snd - 1]:
                        s[_RECV] = _kset(recv, i, row[:snd - 1] + (x,) + row[snd:])
                        s[_DELIVERED] = _kset(delivered, i, delivered[i] + ((snd, x),))
                    add((lab["RecvData"], tuple(s)))
                elif mv < v or (mv == v and ph == "Completed"):   # Discard(p, q)
                    add((lab["Discard"], k[:_CHAN] + (rest,) + k[_CHAN + 1:]))
                continue
            gone = q in views[v - 1] and q not in lv[i]
            if mv < v or (mv == v and gone):   # Discard(p, q)
                add((lab["Discard"], k[:_CHAN] + (rest,) + k[_CHAN + 1:]))
            if mv != v or gone:
                continue
            s = list(k)
            s[_CHAN] = rest
            if kind == START:
                s[_FLUSHINIT] = _kset(flushInit, i, q)
                if ph == "Normal":   # Block(p, q)
                    s[_PHASE] = _kset(phase, i, "InBlock")
                    add((lab["Block"], tuple(s)))
                else:                # RestartFlush(p, q)
                    if ph == "Completed":
                        ch = list(rest)
                        self._multi(ch, p, (q,), m_(COMPLETED, v, log[i]), dead)
                        s[_CHAN] = tuple(ch)
                    add((lab["RestartFlush"], tuple(s)))
            elif kind == OK:         # ReceiveFlushOk(p, q)
                s[_FLUSHOKS] = _kset(flushOks, i, flushOks[i] | {q})
                add((lab["ReceiveFlushOk"], tuple(s)))
            elif kind == COMPLETED:  # ReceiveFlushCompleted(p, q)
                s[_COMPLETED] = _kset(completed, i, completed[i] | {(q, msg[2])})
                add((lab["ReceiveFlushCompleted"], tuple(s)))
            else:                    # Unblock(p, q)
                s[_BLOCKED] = _kset(blocked, i, False)
                s[_FLUSHINIT] = _kset(flushInit, i, NO_INIT)
                add((lab["Unblock"], tuple(s)))
        return out
