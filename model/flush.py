"""Python mirror of spec/Flush/Flush.tla.

Theory of operation
-------------------
FLUSH (seed 003, JGRP-82, section "Design change: flushing and block() /
unblock() callbacks", used for view changes as in "FLUSH on view change"):
the coordinator multicasts START_FLUSH; each member runs block() (Block),
multicasts FLUSH_OK when it returns (FlushOk), closes its send latch once it
has every live member's FLUSH_OK and sends FLUSH_COMPLETED with its digest to
the initiator (FlushCompleted); the initiator then sends the new view
V2 = M - S - L + J (SendView, InstallView) and finally STOP_FLUSH, which
opens the latch (StopFlush, Unblock).  A crashed initiator's flush is
restarted from scratch by the next coordinator (StartFlush, RestartFlush).

This module is the spec transcribed variable for variable and action for
action (same names, same parameters, same guards, same successor values), so
that the explorer's state graph equals TLC's.  The encoding is TLC's after
``values.normalize``: functions over ``1..N`` are tuples indexed ``p - 1``;
``chan`` is an ``Fn`` over pairs ``(p, q)``; messages and ``sent`` entries
are records; ``completed[c]`` is a frozenset of ``(q, digest)`` pairs.

``ReconcileDigests`` selects the variant: FALSE is the seed as written
(TLC refutes VirtualSynchrony), TRUE the fix (docs/flush.md).
``FlushOkRound`` (default TRUE) FALSE drops the FLUSH_OK round, as JGroups
2.12 does: FlushCompleted follows Block directly and FlushOk never fires.
"""

from __future__ import annotations

from itertools import product
from typing import NamedTuple

from .core import Label, Model, state_type
from .values import Fn, record

NO_INIT = 0
PHASES = ("Normal", "InBlock", "OkSent", "Completed")
FLUSH_TYPES = frozenset({"START_FLUSH", "FLUSH_OK", "FLUSH_COMPLETED", "STOP_FLUSH"})


@state_type
class FlushState(NamedTuple):
    views: tuple        # views[v-1]: frozenset of members of view v
    vid: tuple          # vid[p-1]: view installed at p (0: not joined)
    crashed: frozenset
    joining: frozenset
    leaving: frozenset  # members that asked to leave (history)
    sent: tuple         # sent[i-1]: record [sender, view] of multicast i
    delivered: tuple    # delivered[p-1]: frozenset of message ids
    chan: Fn            # (p, q) -> tuple of message records
    phase: tuple        # phase[p-1] in PHASES
    blocked: tuple      # blocked[p-1]: send latch closed
    flushInit: tuple    # flushInit[p-1]: initiator followed (0: none)
    flushOks: tuple     # flushOks[p-1]: frozenset of members
    digest: tuple       # digest[p-1]: frozenset of ids reported in FLUSH_COMPLETED
    completed: tuple    # completed[c-1]: frozenset of (q, frozenset digest)


# --- messages (same constructors as the spec) ----------------------------------
def Data(v: int, i: int) -> Fn:
    return record(type="DATA", view=v, id=i)


def StartFlushMsg(v: int) -> Fn:
    return record(type="START_FLUSH", view=v)


def FlushOkMsg(v: int) -> Fn:
    return record(type="FLUSH_OK", view=v)


def FlushCompletedMsg(v: int, d: frozenset) -> Fn:
    return record(type="FLUSH_COMPLETED", view=v, digest=d)


def ViewMsg(v: int, d: frozenset) -> Fn:
    return record(type="VIEW", view=v, digest=d)


def StopFlushMsg(v: int) -> Fn:
    return record(type="STOP_FLUSH", view=v)


def LastView(seq: tuple) -> int:
    """The index (1-based) of the last VIEW in a channel, 0 if none."""
    last = 0
    for i, m in enumerate(seq, start=1):
        if m["type"] == "VIEW":
            last = i
    return last


def _set(t: tuple, p: int, x) -> tuple:
    """``[t EXCEPT ![p] = x]`` for a function over 1..N stored as a tuple."""
    return t[: p - 1] + (x,) + t[p:]


class FlushModel(Model):
    protocol = "flush"
    variables = FlushState._fields
    # Compositions that skip this __init__ keep the FLUSH_OK round.
    FlushOkRound = True

    def __init__(self, constants):
        super().__init__(constants)
        self.N = int(constants["N"])
        self.NInit = int(constants["NInit"])
        self.MaxMsgs = int(constants["MaxMsgs"])
        self.MaxCrashes = int(constants["MaxCrashes"])
        self.MaxLeaves = int(constants["MaxLeaves"])
        self.ReconcileDigests = bool(constants["ReconcileDigests"])
        self.FlushOkRound = bool(constants.get("FlushOkRound", True))
        if not (self.N >= 1 and 1 <= self.NInit <= self.N):
            raise ValueError(f"flush: need 1 <= NInit <= N, got N={self.N}, NInit={self.NInit}")
        self.Members = tuple(range(1, self.N + 1))
        self.pairs = tuple((p, q) for p in self.Members for q in self.Members)

    # --- helpers (same names as the spec's operators) -------------------------
    # Per-member variables are tuples over 1..N here (index p - 1).  FLUSH's
    # actions read and write them through At and Put, so that a composition
    # whose per-member variables are Fn over 1..N (SequencerFlush) takes the
    # actions as they are.
    @staticmethod
    def At(f, p: int):
        return f[p - 1]

    Put = staticmethod(_set)

    @staticmethod
    def Latest(s: FlushState) -> int:
        return len(s.views)

    @staticmethod
    def Alive(s: FlushState, p: int) -> bool:
        return p not in s.crashed

    # The failure detector, the one thing a composition replaces (RaincoreFlush
    # reads the ring): Dead(s) are the members no message reaches, Gone(s, p)
    # the members p counts out of its view.  Here both are ``crashed``.
    @staticmethod
    def Dead(s: FlushState) -> frozenset:
        return s.crashed

    @staticmethod
    def Gone(s: FlushState, p: int) -> frozenset:
        return s.crashed

    def IsMember(self, s: FlushState, p: int) -> bool:
        v = self.At(s.vid, p)
        return v >= 1 and p in s.views[v - 1]

    @staticmethod
    def Departed(s: FlushState, p: int) -> bool:
        v = s.vid[p - 1]
        return v >= 1 and p not in s.views[v - 1]

    def Staying(self, s: FlushState) -> frozenset:
        return s.views[-1] - (s.crashed | s.leaving)

    def IsCoord(self, s: FlushState, c: int) -> bool:
        st = self.Staying(s)
        return c in st and all(c <= q for q in st)

    def IsInitiator(self, s, c: int) -> bool:
        """Who starts a flush: the coordinator (a composition's own name, where
        IsCoord is SEQUENCER's)."""
        return self.IsCoord(s, c)

    @staticmethod
    def DeliveredIn(s: FlushState, p: int, v: int) -> frozenset:
        return frozenset(i for i in s.delivered[p - 1] if s.sent[i - 1]["view"] == v)

    def Digest(self, s: FlushState, p: int) -> frozenset:
        """p's digest: what it delivered in its view (SequencerFlush's: its log)."""
        return self.DeliveredIn(s, p, s.vid[p - 1])

    def SetDigest(self, s: FlushState, p: int, d) -> dict:
        """digest' = [digest EXCEPT ![p] = d], for _replace (a composition whose
        digest is its log has no ``digest`` variable: nothing)."""
        return {"digest": _set(s.digest, p, d)}

    @staticmethod
    def SentIn(s: FlushState, p: int, v: int) -> frozenset:
        return frozenset(
            i for i in range(1, len(s.sent) + 1) if s.sent[i - 1]["sender"] == p and s.sent[i - 1]["view"] == v
        )

    def ViewChangePending(self, s: FlushState, c: int) -> bool:
        return bool(s.views[-1] & (s.crashed | s.leaving)) or bool(s.joining)

    def Multi(self, s: FlushState, ch: Fn, p: int, R, msg: Fn) -> Fn:
        """``msg`` from p to every member of R but p and the dead (the spec
        writes ``R \\ crashed`` at each call; the same set)."""
        skip = self.Dead(s) | {p}
        return ch.update({(p, q): ch[(p, q)] + (msg,) for q in R if q not in skip})

    @staticmethod
    def HasMsg(s: FlushState, p: int, q: int) -> bool:
        return len(s.chan[(q, p)]) > 0

    @staticmethod
    def In(s: FlushState, p: int, q: int) -> Fn:
        return s.chan[(q, p)][0]

    @staticmethod
    def Take(s: FlushState, p: int, q: int) -> Fn:
        return s.chan.set((q, p), s.chan[(q, p)][1:])

    def CanReceive(self, s: FlushState, p: int) -> bool:
        return self.Alive(s, p) and self.IsMember(s, p)

    LastView = staticmethod(LastView)

    def MaxOut(self, s: FlushState, p: int) -> int:
        return max(len(s.chan[(p, q)]) for q in self.Members)

    # --- init -----------------------------------------------------------------
    def init(self):
        N = self.N
        yield FlushState(
            views=(frozenset(range(1, self.NInit + 1)),),
            vid=tuple(1 if p <= self.NInit else 0 for p in self.Members),
            crashed=frozenset(),
            joining=frozenset(),
            leaving=frozenset(),
            sent=(),
            delivered=(frozenset(),) * N,
            chan=Fn({e: () for e in self.pairs}),
            phase=("Normal",) * N,
            blocked=(False,) * N,
            flushInit=(NO_INIT,) * N,
            flushOks=(frozenset(),) * N,
            digest=(frozenset(),) * N,
            completed=(frozenset(),) * N,
        )

    # --- application ----------------------------------------------------------
    def Multicast(self, s: FlushState, p: int):
        if not (self.CanReceive(s, p) and not s.blocked[p - 1] and len(s.sent) < self.MaxMsgs):
            return None
        i = len(s.sent) + 1
        v = s.vid[p - 1]
        return s._replace(
            sent=s.sent + (record(sender=p, view=v),),
            delivered=_set(s.delivered, p, s.delivered[p - 1] | {i}),
            chan=self.Multi(s, s.chan, p, s.views[v - 1], Data(v, i)),
        )

    def Deliver(self, s: FlushState, p: int, q: int):
        if not (self.CanReceive(s, p) and self.HasMsg(s, p, q)):
            return None
        m = self.In(s, p, q)
        if m["type"] != "DATA" or m["view"] != s.vid[p - 1]:
            return None
        if self.ReconcileDigests and s.phase[p - 1] == "Completed":
            return None
        return s._replace(
            delivered=_set(s.delivered, p, s.delivered[p - 1] | {m["id"]}),
            chan=self.Take(s, p, q),
        )

    def Discard(self, s, p: int, q: int):
        if not (self.CanReceive(s, p) and self.HasMsg(s, p, q)):
            return None
        m = self.In(s, p, q)
        v = self.At(s.vid, p)
        if not (
            m["view"] < v
            or (m["view"] == v and m["type"] in FLUSH_TYPES and q in self.Gone(s, p))
            or (m["view"] == v and m["type"] == "DATA" and self.ReconcileDigests
                and self.At(s.phase, p) == "Completed")
        ):
            return None
        return s._replace(chan=self.Take(s, p, q))

    # --- flush, phase 1 ---------------------------------------------------------
    # The flush's actions read the per-member variables through At and Put,
    # a member's digest through Digest (SetDigest records it) and the failure
    # detector through Gone and Dead (Multi), so that the compositions
    # (SequencerFlush, RaincoreFlush, RaincoreSequencerFlush) take them as
    # they are, as their specs take Flush.tla's <Action>Step.
    def StartFlush(self, s, c: int):
        At, Put = self.At, self.Put
        v = At(s.vid, c)
        if not (self.CanReceive(s, c) and v == self.Latest(s) and self.IsInitiator(s, c)):
            return None
        if At(s.flushInit, c) == c or not self.ViewChangePending(s, c):
            return None
        ph = At(s.phase, c)
        t = s._replace(
            chan=self.Multi(s, s.chan, c, s.views[v - 1], StartFlushMsg(v)),
            flushInit=Put(s.flushInit, c, c),
            phase=Put(s.phase, c, "InBlock") if ph == "Normal" else s.phase,
        )
        if ph == "Completed":   # it restarts the flush of a crashed initiator: its own FLUSH_COMPLETED again
            d = self.Digest(s, c)
            return t._replace(completed=Put(s.completed, c, frozenset({(c, d)})), **self.SetDigest(s, c, d))
        return t._replace(completed=Put(s.completed, c, frozenset()))

    def _flush_msg(self, s, p: int, c: int, typ: str) -> bool:
        """CanReceive(p) /\\ HasMsg(p, c) /\\ In(p, c).type = typ /\\ In(p, c).view = vid[p]."""
        if not (self.CanReceive(s, p) and self.HasMsg(s, p, c)):
            return False
        m = self.In(s, p, c)
        return m["type"] == typ and m["view"] == self.At(s.vid, p)

    def _flush_msg_from(self, s, p: int, c: int, typ: str) -> bool:
        """_flush_msg /\\ c \\notin Gone(p)."""
        return self._flush_msg(s, p, c, typ) and c not in self.Gone(s, p)

    def Block(self, s, p: int, c: int):
        if not (self._flush_msg_from(s, p, c, "START_FLUSH") and self.At(s.phase, p) == "Normal"):
            return None
        return s._replace(
            phase=self.Put(s.phase, p, "InBlock"),
            flushInit=self.Put(s.flushInit, p, c),
            chan=self.Take(s, p, c),
        )

    def RestartFlush(self, s, p: int, c: int):
        if not (self._flush_msg_from(s, p, c, "START_FLUSH") and self.At(s.phase, p) != "Normal"):
            return None
        t = s._replace(flushInit=self.Put(s.flushInit, p, c))
        if self.At(s.phase, p) == "Completed":
            d = self.Digest(s, p)
            ch = self.Multi(s, self.Take(s, p, c), p, (c,), FlushCompletedMsg(self.At(s.vid, p), d))
            return t._replace(chan=ch, **self.SetDigest(s, p, d))
        return t._replace(chan=self.Take(s, p, c))

    # --- flush, phase 2 ---------------------------------------------------------
    def FlushOk(self, s, p: int):
        if not (self.FlushOkRound and self.CanReceive(s, p) and self.At(s.phase, p) == "InBlock"):
            return None
        v = self.At(s.vid, p)
        return s._replace(
            phase=self.Put(s.phase, p, "OkSent"),
            flushOks=self.Put(s.flushOks, p, self.At(s.flushOks, p) | {p}),
            chan=self.Multi(s, s.chan, p, s.views[v - 1], FlushOkMsg(v)),
        )

    def ReceiveFlushOk(self, s, p: int, q: int):
        if not self._flush_msg_from(s, p, q, "FLUSH_OK"):
            return None
        return s._replace(
            flushOks=self.Put(s.flushOks, p, self.At(s.flushOks, p) | {q}),
            chan=self.Take(s, p, q),
        )

    # --- flush, phase 3 ---------------------------------------------------------
    def FlushCompleted(self, s, p: int):
        if not self.CanReceive(s, p):
            return None
        At, Put = self.At, self.Put
        v = At(s.vid, p)
        if not self.FlushOkRound:
            if At(s.phase, p) != "InBlock":
                return None
        elif not (At(s.phase, p) == "OkSent" and frozenset(s.views[v - 1]) - self.Gone(s, p) <= At(s.flushOks, p)):
            return None
        d = self.Digest(s, p)
        c = At(s.flushInit, p)
        t = s._replace(phase=Put(s.phase, p, "Completed"), blocked=Put(s.blocked, p, True), **self.SetDigest(s, p, d))
        if c == p:
            return t._replace(completed=Put(s.completed, p, At(s.completed, p) | {(p, d)}))
        return t._replace(chan=self.Multi(s, s.chan, p, (c,), FlushCompletedMsg(v, d)))

    def ReceiveFlushCompleted(self, s, c: int, q: int):
        if not self._flush_msg_from(s, c, q, "FLUSH_COMPLETED"):
            return None
        return s._replace(
            completed=self.Put(s.completed, c, self.At(s.completed, c) | {(q, self.In(s, c, q)["digest"])}),
            chan=self.Take(s, c, q),
        )

    # --- flush, phase 4 ---------------------------------------------------------
    def SendViewReady(self, s, c: int, gone: frozenset) -> bool:
        """c initiated the flush and has the FLUSH_COMPLETED of every member of its view but those in gone."""
        At = self.At
        return (At(s.flushInit, c) == c and At(s.phase, c) == "Completed"
                and frozenset(s.views[At(s.vid, c) - 1]) - gone <= {r[0] for r in At(s.completed, c)})

    def Digests(self, s, c: int, gone: frozenset) -> set:
        """The digests c holds from the members not in gone."""
        return {r[1] for r in self.At(s.completed, c) if r[0] not in gone}

    @staticmethod
    def Merged(digests) -> frozenset:
        """The digest SendView sends: the union (SequencerFlush's: the longest)."""
        return frozenset().union(*digests)

    def FlushEnded(self, s, p: int) -> dict:
        """p's flush state once it installs a view (for _replace)."""
        Put = self.Put
        return dict(phase=Put(s.phase, p, "Normal"), flushOks=Put(s.flushOks, p, frozenset()),
                    completed=Put(s.completed, p, frozenset()))

    def Reconciled(self, s, p: int, v: int, new, D, ch: Fn) -> dict:
        """What else changes as p leaves view v for view v + 1, ``new``, with digest
        D, ``ch`` the step's channels (for _replace): the digest's messages
        delivered (with reconciliation, not for a joiner) and its digest
        emptied.  SequencerFlush's is SEQUENCER's view change (Moved)."""
        out = {"chan": ch, "digest": _set(s.digest, p, frozenset())}
        if self.ReconcileDigests and s.vid[p - 1] != 0:
            out["delivered"] = _set(s.delivered, p, s.delivered[p - 1] | D)
        return out

    def SendView(self, s, c: int):
        if not self.CanReceive(s, c):
            return None
        gone = self.Gone(s, c)
        if not self.SendViewReady(s, c, gone):
            return None
        v = self.At(s.vid, c)
        D = self.Merged(self.Digests(s, c, gone))
        nxt = self.NextView(s, c, v, D)
        if nxt is None:
            return None
        new, R, msg, more = nxt
        return s._replace(views=s.views + (new,), vid=self.Put(s.vid, c, v + 1), **self.FlushEnded(s, c), **more,
                          **self.Reconciled(s, c, v, new, D, self.Multi(s, s.chan, c, R, msg)))

    def NextView(self, s: FlushState, c: int, v: int, D: frozenset):
        """SendView's view: (the new view, whom the VIEW goes to, the VIEW,
        the other variables it changes); None when SendView waits."""
        members_v = s.views[v - 1]
        return (members_v - (s.crashed | s.leaving)) | s.joining, members_v | s.joining, ViewMsg(v, D), \
            {"joining": frozenset()}

    def ViewArrives(self, s, p: int, c: int) -> bool:
        """The VIEW from c is next for p: of p's view, or p is a joiner."""
        if not self.HasMsg(s, p, c):
            return False
        m = self.In(s, p, c)
        vp = self.At(s.vid, p)
        return m["type"] == "VIEW" and ((self.IsMember(s, p) and m["view"] == vp) or vp == 0)

    def InstallView(self, s, p: int, c: int):
        if not (self.Alive(s, p) and self.ViewArrives(s, p, c)):
            return None
        m = self.In(s, p, c)
        return s._replace(
            vid=self.Put(s.vid, p, m["view"] + 1),
            flushInit=self.Put(s.flushInit, p, NO_INIT if self.At(s.vid, p) == 0 else c),
            **self.FlushEnded(s, p),
            **self.Reconciled(s, p, m["view"], s.views[m["view"]], m["digest"], self.Take(s, p, c)),
        )

    def StopFlush(self, s, c: int):
        At = self.At
        if not (self.CanReceive(s, c) and At(s.flushInit, c) == c and At(s.phase, c) == "Normal"):
            return None
        v = At(s.vid, c)
        return s._replace(
            chan=self.Multi(s, s.chan, c, frozenset(s.views[v - 1]) & frozenset(s.views[v - 2]), StopFlushMsg(v)),
            blocked=self.Put(s.blocked, c, False),
            flushInit=self.Put(s.flushInit, c, NO_INIT),
        )

    def Unblock(self, s, p: int, c: int):
        if not self._flush_msg_from(s, p, c, "STOP_FLUSH"):
            return None
        return s._replace(
            blocked=self.Put(s.blocked, p, False),
            flushInit=self.Put(s.flushInit, p, NO_INIT),
            chan=self.Take(s, p, c),
        )

    # --- environment ------------------------------------------------------------
    def CanCrash(self, s: FlushState, p: int) -> bool:
        return (
            self.Alive(s, p)
            and self.IsMember(s, p)
            and len(s.crashed) < self.MaxCrashes
            and bool(self.Staying(s) - {p})
        )

    def Cuts(self, s: FlushState, p: int, greatest: bool = False):
        """Every cut[q] in LastView(chan[p, q]) .. Len(chan[p, q]), as a tuple over 1..N;
        with ``greatest``, only the cut that keeps every message.

        The greatest cut simulates every other, which is why the replay asks
        for it alone: a smaller cut differs only by messages missing at the
        tails of the dead member's outgoing channels; nothing is appended to
        those (Multi skips the dead) and no guard reads them but the receive
        that takes their head, so every run from a smaller cut is a run from
        the greatest one with every variable outside those tails equal.  The
        replay, which never sees a channel, then keeps one candidate where
        the spec branches into the product of the cuts (thousands after a
        crash of a member that was many messages ahead)."""
        if greatest:
            return [tuple(len(s.chan[(p, q)]) for q in self.Members)]
        ranges = [range(self.LastView(s.chan[(p, q)]), len(s.chan[(p, q)]) + 1) for q in self.Members]
        return product(*ranges)

    def Crash(self, s: FlushState, p: int, greatest: bool = False):
        """All successors of Crash(p), one per cut (with ``greatest``, the greatest cut's: see Cuts)."""
        if not self.CanCrash(s, p):
            return []
        return [s._replace(chan=self.Cut(s, p, cut), crashed=s.crashed | {p}) for cut in self.Cuts(s, p, greatest)]

    def Cut(self, s, p: int, cut: tuple) -> Fn:
        """Crash(p)'s channels: every channel into p emptied, each channel p -> q cut to its first cut[q] messages."""
        upd = {}
        for e in self.pairs:
            if e[1] == p:
                upd[e] = ()
            elif e[0] == p:
                upd[e] = s.chan[e][: cut[e[1] - 1]]
        return s.chan.update(upd)

    def Join(self, s: FlushState, p: int):
        if not (
            self.Alive(s, p) and p > self.NInit and s.vid[p - 1] == 0 and p not in s.views[-1] and p not in s.joining
        ):
            return None
        return s._replace(joining=s.joining | {p})

    def Leave(self, s: FlushState, p: int):
        if not (
            self.CanReceive(s, p)
            and s.vid[p - 1] == self.Latest(s)
            and p not in s.leaving
            and not self.IsCoord(s, p)
            and len(s.leaving) < self.MaxLeaves
        ):
            return None
        return s._replace(leaving=s.leaving | {p})

    # --- next -------------------------------------------------------------------
    # FLUSH's actions by kind: taken once per member (SINGLE) or once per
    # message at the head of a channel (RECEIVE).
    RECEIVE = ("Deliver", "Discard", "Block", "RestartFlush", "ReceiveFlushOk",
               "ReceiveFlushCompleted", "InstallView", "Unblock")
    SINGLE = ("Multicast", "StartFlush", "FlushOk", "FlushCompleted", "SendView", "StopFlush", "Join", "Leave")

    def next(self, s: FlushState):
        for p in self.Members:
            yield from self.Steps(s, p)
        yield from self.Receives(s)

    def Steps(self, s, p: int):
        """p's SINGLE actions, then Crash(p)."""
        for name in self.SINGLE:
            t = getattr(self, name)(s, p)
            if t is not None:
                yield Label(name, (p,)), t
        yield from self.CrashesOf(s, p)

    def CrashesOf(self, s, p: int):
        for t in self.Crash(s, p):
            yield Label("Crash", (p,)), t

    def Receives(self, s):
        """The RECEIVE actions (p, q): each takes the head of the channel q -> p."""
        for p, q in self.pairs:
            if not s.chan[(q, p)]:
                continue
            for name in self.RECEIVE:
                t = getattr(self, name)(s, p, q)
                if t is not None:
                    yield Label(name, (p, q)), t

    # --- invariants ---------------------------------------------------------------
    @property
    def invariants(self):
        return {
            "TypeOK": self.TypeOK,
            "VirtualSynchrony": self.VirtualSynchrony,
            "NoSendWhileBlocked": self.NoSendWhileBlocked,
            "ViewAfterAllCompleted": self.ViewAfterAllCompleted,
        }

    def _msg_ok(self, m) -> bool:
        ids = range(1, self.MaxMsgs + 1)
        if not isinstance(m, Fn) or not isinstance(m.get("view"), int) or m["view"] < 0:
            return False
        t = m.get("type")
        if t == "DATA":
            return set(m) == {"type", "view", "id"} and m["id"] in ids
        if t in ("START_FLUSH", "FLUSH_OK", "STOP_FLUSH"):
            return set(m) == {"type", "view"}
        if t in ("FLUSH_COMPLETED", "VIEW"):
            return set(m) == {"type", "view", "digest"} and isinstance(m["digest"], frozenset) and all(
                i in ids for i in m["digest"]
            )
        return False

    def TypeOK(self, s: FlushState) -> bool:
        M = set(self.Members)
        return self.FlushTypeOK(s) and s.crashed <= M and s.joining <= M and s.leaving <= M

    def FlushTypeOK(self, s) -> bool:
        """TypeOK's conjuncts over FLUSH's variables but the failure
        detector's (crashed, joining, leaving): a composition's TypeOK
        conjoins them with its own."""
        M = set(self.Members)
        ids = set(range(1, self.MaxMsgs + 1))
        L = self.Latest(s)
        funcs = (s.vid, s.delivered, s.phase, s.blocked, s.flushInit, s.flushOks, s.digest, s.completed)
        return (
            L >= 1
            and all(isinstance(v, frozenset) and v <= M for v in s.views)
            and all(len(f) == self.N for f in funcs)
            and all(isinstance(v, int) and 0 <= v <= L for v in s.vid)
            and len(s.sent) <= self.MaxMsgs
            and all(r["sender"] in M and 1 <= r["view"] <= L for r in s.sent)
            and all(d <= ids for d in s.delivered)
            and set(s.chan) == set(self.pairs)
            and all(self._msg_ok(m) for e in self.pairs for m in s.chan[e])
            and all(ph in PHASES for ph in s.phase)
            and all(isinstance(b, bool) for b in s.blocked)
            and all(x == NO_INIT or x in M for x in s.flushInit)
            and all(o <= M for o in s.flushOks)
            and all(d <= ids for d in s.digest)
            and all(q in M and d <= ids for c in s.completed for q, d in c)
        )

    def VirtualSynchrony(self, s: FlushState) -> bool:
        L = self.Latest(s)
        for v in range(1, L):
            both = s.views[v - 1] & s.views[v]
            movers = [p for p in self.Members if s.vid[p - 1] > v and p in both]
            sets = {self.DeliveredIn(s, p, v) for p in movers}
            if len(sets) > 1:
                return False
        return True

    def NoSendWhileBlocked(self, s: FlushState) -> bool:
        return all(
            self.SentIn(s, p, s.vid[p - 1]) <= s.digest[p - 1] for p in self.Members if s.blocked[p - 1]
        )

    def ViewAfterAllCompleted(self, s: FlushState) -> bool:
        L = self.Latest(s)
        for p in self.Members:
            v = s.vid[p - 1]
            if self.Alive(s, p) and self.IsMember(s, p) and v < L:
                if s.phase[p - 1] != "Completed":
                    return False
                if p in s.views[v] and v != L - 1:
                    return False
        return True

    # --- liveness helpers (FlushEnds is checked by TLC only) ---------------------
    def InFlush(self, s: FlushState, p: int) -> bool:
        return s.phase[p - 1] != "Normal" or s.blocked[p - 1]
