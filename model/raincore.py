"""Python mirror of spec/Raincore/Raincore.tla.

Theory of operation
-------------------
The Raincore Group Communication Manager token ring (seed 004: the token
and 911 formats of Figures 6-7, the local data of Figure 8, the View and
Token State machines of Figures 9-11, the pseudo-code of the eight events,
and the worked examples of Figures 12-14, which tests/test_golden_raincore.py
replays on this model): a token
(sequence number, nodelist, current and destination pointers, global view
number) circulates along its nodelist; each node runs a View State machine
(Agreement, Chaos, Reserve) and a Token State machine (Eating, Hungry,
Starving) and keeps a globalView vector, lastToken, localView and a newNodes
queue.  The seed's eight events are the actions Initialization,
TokenReceived, 911Received, TokenDeliveryFailure, 911DeliveryFailure,
EatingTimeout, HungryTimeout and StarvingTimeout; the environment has Crash,
Recover, Join and TokenLoss.  The Transport Manager is a perfect failure
detector on delivery: a message to a node that is not up comes back to its
sender as a delivery failure.  Timers carry no time.

This module is the spec transcribed variable for variable and action for
action (same names, same parameters, same guards, same successor values), so
that the explorer's state graph equals TLC's (``RaincoreKernel``, at the
end, is the same transition system over a leaner encoding, which the
explorer searches; see its docstring).  The encoding is TLC's after
``values.normalize``: functions over ``1..N`` are tuples indexed ``n - 1``;
tokens and 911 messages are records (``Fn``); rings and globalView vectors
are tuples; the NULL entry of a globalView vector is the empty tuple, and
``NO_TOKEN`` (sequence number 0, empty nodelist, pointers 0) stands for "no
token held" and "no lastToken yet".

The boolean constants select the variant (all FALSE: the seed as written,
where TLC refutes AtMostOneToken; docs/raincore.md explains each one):
``TimelyTimeouts``, ``Timely911`` and ``StableFounder`` are assumptions
the seed makes silently, ``NeutralRecovery``, ``FreshClaim``, ``FreshView``,
``TokenRingClaim`` and ``YieldClaim`` are fixes.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from .core import Kernel, Label, Model, state_type
from .values import Fn, record

NULL = 0
NULL_VIEW: tuple = ()
VIEW_STATES = ("Agreement", "Chaos", "Reserve")
TOKEN_STATES = ("Eating", "Hungry", "Starving")
STATUSES = ("Off", "Up", "Down")
STATUS_911 = ("YES", "NO", "REJECT")
LEGAL_PAIRS = frozenset({
    ("Eating", "Agreement"), ("Hungry", "Agreement"),
    ("Eating", "Reserve"), ("Hungry", "Reserve"),
    ("Eating", "Chaos"), ("Hungry", "Chaos"),
    ("Starving", "Chaos"),
})


def Token(seq: int, nodelist: tuple, cur: int, dest: int, gvn: int) -> Fn:
    return record(seq=seq, nodelist=nodelist, cur=cur, dest=dest, gvn=gvn)


def Msg911(orig: int, cur: int, dest: int, nodelist: tuple, seq: int, status: str) -> Fn:
    return record(orig=orig, cur=cur, dest=dest, nodelist=nodelist, seq=seq, status=status)


NO_TOKEN = Token(0, (), NULL, NULL, 0)

_TOKEN_FIELDS = frozenset({"seq", "nodelist", "cur", "dest", "gvn"})
_911_FIELDS = frozenset({"orig", "cur", "dest", "nodelist", "seq", "status"})


@state_type
class RaincoreState(NamedTuple):
    status: tuple       # status[n-1] in STATUSES
    viewState: tuple    # viewState[n-1] in VIEW_STATES
    tokenState: tuple   # tokenState[n-1] in TOKEN_STATES
    globalView: tuple   # globalView[n-1]: tuple of views (NULL_VIEW for NULL)
    lastToken: tuple    # lastToken[n-1]: token record
    localView: tuple    # localView[n-1]: tuple of nodes
    newNodes: tuple     # newNodes[n-1]: frozenset of nodes
    token: tuple        # token[n-1]: the token held while Eating, else NO_TOKEN
    tokenMsgs: frozenset
    msgs911: frozenset
    recovered: tuple    # recovered[n-1]: bool


# --- helpers on rings (same names as the spec's operators) --------------------
def _upd(t: tuple, n: int, v: Any) -> tuple:
    return t[: n - 1] + (v,) + t[n:]


def NextNode(l: tuple, n: int) -> int:
    if n in l:
        return l[(l.index(n) + 1) % len(l)]
    return l[0]


def Remove(l: tuple, x: int) -> tuple:
    return tuple(y for y in l if y != x)


def InsertAfter(l: tuple, n: int, s: tuple) -> tuple:
    i = l.index(n) + 1
    return l[:i] + s + l[i:]


def PadTo(gv: tuple, k: int) -> tuple:
    return gv + (NULL_VIEW,) * (k - len(gv)) if k > len(gv) else gv


def TakeToken(vs0: str, same: bool, gv0: tuple, nodelist: tuple, gvn: int) -> tuple:
    """The spec's TakeToken(n, m) on n's values (the model, its kernel and
    RaincoreFlush's ring): n's View State step (Figure 9) and globalView,
    ``(viewState', globalView', the token's gvn')``; the caller sets
    localView and the token.  ``same``: the token's nodelist is n's
    localView; a Chaos node that sees it reserves a NULL entry, a Reserve
    node commits it there."""
    reserve = vs0 == "Chaos" and same
    commit = vs0 == "Reserve" and same
    if vs0 == "Chaos":
        vs = "Reserve" if same else "Chaos"
    else:
        vs = "Agreement" if same else "Chaos"
    if reserve:
        gv1 = gv0 + (NULL_VIEW,)
    elif commit:
        gv1 = gv0[:-1] + (nodelist,)
    else:
        gv1 = gv0
    tgvn = len(gv1) if reserve else gvn
    return vs, PadTo(gv1, tgvn), tgvn


def LastGlobalViewOf(gv: tuple) -> tuple:
    for v in reversed(gv):
        if v != NULL_VIEW:
            return v
    return NULL_VIEW


class RaincoreModel(Model):
    protocol = "raincore"
    variables = RaincoreState._fields

    def __init__(self, constants: Mapping[str, Any]) -> None:
        super().__init__(constants)
        c = self.constants
        self.N = int(c["N"])
        self.InitSize = int(c["InitSize"])
        self.InitSeq = int(c["InitSeq"])
        self.ColdStart = bool(c["ColdStart"])
        self.TimelyTimeouts = bool(c.get("TimelyTimeouts", False))
        self.StableFounder = bool(c.get("StableFounder", False))
        self.NeutralRecovery = bool(c.get("NeutralRecovery", False))
        self.FreshClaim = bool(c.get("FreshClaim", False))
        self.FreshView = bool(c.get("FreshView", False))
        self.TokenRingClaim = bool(c.get("TokenRingClaim", False))
        self.YieldClaim = bool(c.get("YieldClaim", False))
        self.Timely911 = bool(c.get("Timely911", False))
        # MC bounds (absent: unbounded, for driving the model by hand)
        self.MaxSeq = c.get("MaxSeq")
        self.Max911 = c.get("Max911")
        self.MaxDown = c.get("MaxDown")
        if self.FreshView and not self.NeutralRecovery:
            raise ValueError("raincore: FreshView needs NeutralRecovery (ASSUME FreshView => NeutralRecovery)")
        if self.TokenRingClaim and not self.NeutralRecovery:
            raise ValueError("raincore: TokenRingClaim needs NeutralRecovery (ASSUME TokenRingClaim => NeutralRecovery)")
        if self.YieldClaim and not (self.TokenRingClaim and self.FreshClaim):
            raise ValueError("raincore: YieldClaim needs TokenRingClaim and FreshClaim "
                             "(ASSUME YieldClaim => TokenRingClaim /\\ FreshClaim)")
        if not (2 <= self.InitSize <= self.N and self.InitSeq >= self.InitSize):
            raise ValueError(
                f"raincore: need 2 <= InitSize <= N and InitSeq >= InitSize, got "
                f"N={self.N}, InitSize={self.InitSize}, InitSeq={self.InitSeq}"
            )
        self.Node = tuple(range(1, self.N + 1))
        self.InitRing = tuple(range(1, self.InitSize + 1))

    # --- derived operators ------------------------------------------------------
    @staticmethod
    def GlobalViewNumber(s: RaincoreState, n: int) -> int:
        return len(s.globalView[n - 1])

    @staticmethod
    def LastGlobalView(s: RaincoreState, n: int) -> tuple:
        return LastGlobalViewOf(s.globalView[n - 1])

    def ViewOf(self, s: RaincoreState, n: int) -> tuple:
        lgv = self.LastGlobalView(s, n)
        return self.InitRing if lgv == NULL_VIEW else lgv

    @staticmethod
    def Queued(s: RaincoreState, l: tuple, n: int) -> tuple:
        """l with n's queued nodes not on it added after n (EatingTimeout's nodelist)."""
        add = s.newNodes[n - 1] - set(l)
        return InsertAfter(l, n, tuple(sorted(add))) if add else l

    def ClaimRing(self, s: RaincoreState, n: int) -> tuple:
        """The ring n's 911s travel: ViewOf, or under TokenRingClaim its
        lastToken's nodelist (which lists the joiners not committed yet),
        under YieldClaim with the nodes n has queued (F8)."""
        nl = s.lastToken[n - 1]["nodelist"]
        if not (self.TokenRingClaim and nl != ()):
            return self.ViewOf(s, n)
        return self.Queued(s, nl, n) if self.YieldClaim else nl

    @staticmethod
    def ClaimSeq(s: RaincoreState, n: int) -> int:
        return 0 if s.recovered[n - 1] else s.lastToken[n - 1]["seq"]

    def HigherClaim(self, s: RaincoreState, n: int, m: Fn) -> bool:
        """TokenRingClaim: a non-member's 911 above n's claim is answered too."""
        return self.TokenRingClaim and m["seq"] > self.ClaimSeq(s, n)

    def Call911(self, s: RaincoreState, n: int) -> Fn:
        ring = self.ClaimRing(s, n)
        return Msg911(n, n, NextNode(ring, n), ring, self.ClaimSeq(s, n), "YES")

    def UpNodes(self, s: RaincoreState) -> list[int]:
        return [n for n in self.Node if s.status[n - 1] == "Up"]

    def TokenLists(self, s: RaincoreState) -> set:
        out = {s.token[k - 1]["nodelist"] for k in self.UpNodes(s) if s.tokenState[k - 1] == "Eating"}
        out.update(m["nodelist"] for m in s.tokenMsgs)
        return out

    def TokenComing(self, s: RaincoreState, n: int) -> bool:
        return any(n in l for l in self.TokenLists(s))

    def CallWaiting(self, s: RaincoreState, n: int) -> bool:
        """A 911 is on its way to n: under Timely911 n's Eating timeout waits."""
        return any(m["dest"] == n for m in s.msgs911)

    # --- initial state ----------------------------------------------------------
    def SteadyToken(self, i: int) -> Fn:
        return Token(self.InitSeq - (self.InitSize - i), self.InitRing, i, NextNode(self.InitRing, i), 1)

    def InitNode(self, n: int) -> tuple:
        """(status, viewState, tokenState, globalView, lastToken, localView)."""
        off = ("Off", "Chaos", "Starving", (), NO_TOKEN, ())
        if n not in self.InitRing:
            return off
        if not self.ColdStart:
            return ("Up", "Agreement", "Hungry", (self.InitRing,), self.SteadyToken(n), self.InitRing)
        if n == 1:
            return off
        return ("Up", "Chaos", "Hungry", (), NO_TOKEN, self.InitRing)

    def init(self) -> Iterator[RaincoreState]:
        cols = list(zip(*(self.InitNode(n) for n in self.Node)))
        yield RaincoreState(
            status=cols[0], viewState=cols[1], tokenState=cols[2], globalView=cols[3],
            lastToken=cols[4], localView=cols[5],
            newNodes=tuple(frozenset() for _ in self.Node),
            token=tuple(NO_TOKEN for _ in self.Node),
            tokenMsgs=frozenset() if self.ColdStart else frozenset({self.SteadyToken(self.InitSize)}),
            msgs911=frozenset(),
            recovered=tuple(False for _ in self.Node),
        )

    # --- the eight events ---------------------------------------------------------
    def Initialization(self, s: RaincoreState, n: int) -> RaincoreState | None:
        if n not in self.InitRing or s.status[n - 1] != "Off":
            return None
        t = Token(self.InitSeq, self.InitRing, n, NextNode(self.InitRing, n), 0)
        return s._replace(
            status=_upd(s.status, n, "Up"),
            viewState=_upd(s.viewState, n, "Chaos"),
            tokenState=_upd(s.tokenState, n, "Hungry"),
            localView=_upd(s.localView, n, self.InitRing),
            lastToken=_upd(s.lastToken, n, t),
            tokenMsgs=s.tokenMsgs | {t},
        )

    def AcceptToken(self, s: RaincoreState, n: int, m: Fn, rest: frozenset) -> RaincoreState:
        same = m["nodelist"] == s.localView[n - 1] and not (self.FreshView and s.recovered[n - 1])
        vs, gv2, tgvn = TakeToken(s.viewState[n - 1], same, s.globalView[n - 1], m["nodelist"], m["gvn"])
        return s._replace(
            tokenMsgs=rest,
            tokenState=_upd(s.tokenState, n, "Eating"),
            viewState=_upd(s.viewState, n, vs),
            globalView=_upd(s.globalView, n, gv2),
            localView=_upd(s.localView, n, m["nodelist"]),
            token=_upd(s.token, n, m.update({"cur": n, "gvn": tgvn})),
            recovered=_upd(s.recovered, n, False),
        )

    def TokenReceived(self, s: RaincoreState, n: int, m: Fn) -> RaincoreState | None:
        if s.status[n - 1] != "Up" or m not in s.tokenMsgs or m["dest"] != n:
            return None
        rest = s.tokenMsgs - {m}
        if s.tokenState[n - 1] == "Eating" or m["seq"] <= s.lastToken[n - 1]["seq"]:
            return s._replace(tokenMsgs=rest)  # dropped
        return self.AcceptToken(s, n, m, rest)

    def Veto(self, s: RaincoreState, n: int, m: Fn) -> bool:
        c = self.ClaimSeq(s, n)
        ts = s.tokenState[n - 1]
        return (ts == "Eating" or (self.YieldClaim and ts == "Hungry") or m["seq"] < c
                or (m["seq"] == c and n > m["orig"]))

    def Yields(self, s: RaincoreState, n: int, m: Fn) -> bool:
        """YieldClaim: n lets m's claim pass, so it queues m's originator."""
        return self.YieldClaim and not self.Veto(s, n, m)

    def Regenerate(self, s: RaincoreState, n: int, m: Fn) -> bool:
        return (
            m["status"] == "YES"
            and s.tokenState[n - 1] == "Starving"
            and s.lastToken[n - 1]["nodelist"] != ()
            and (not self.FreshClaim or m["seq"] == self.ClaimSeq(s, n))
            and (not self.YieldClaim or m["nodelist"] == self.ClaimRing(s, n))
            and not s.recovered[n - 1]
        )

    def Received911(self, s: RaincoreState, n: int, m: Fn) -> RaincoreState | None:
        """The spec's ``911Received`` (not a Python identifier)."""
        if s.status[n - 1] != "Up" or m not in s.msgs911 or m["dest"] != n:
            return None
        rest = s.msgs911 - {m}
        if m["orig"] == n:
            if self.Regenerate(s, n, m):
                return s._replace(
                    msgs911=rest,
                    token=_upd(s.token, n, s.lastToken[n - 1].set("cur", n)),
                    tokenState=_upd(s.tokenState, n, "Eating"),
                    recovered=_upd(s.recovered, n, False),
                )
            return s._replace(msgs911=rest)
        if self.Veto(s, n, m):
            answer = m.update({"cur": n, "status": "NO", "dest": m["orig"]})
        else:
            answer = m.update({"cur": n, "dest": NextNode(m["nodelist"], n)})
        if m["orig"] in self.ViewOf(s, n):
            if self.Yields(s, n, m):
                return s._replace(msgs911=rest | {answer},
                                  newNodes=_upd(s.newNodes, n, s.newNodes[n - 1] | {m["orig"]}))
            return s._replace(msgs911=rest | {answer})
        return s._replace(msgs911=rest | {answer} if self.HigherClaim(s, n, m) else rest,
                          newNodes=_upd(s.newNodes, n, s.newNodes[n - 1] | {m["orig"]}))

    def TokenDeliveryFailure(self, s: RaincoreState, n: int, m: Fn) -> RaincoreState | None:
        if (s.status[n - 1] != "Up" or m not in s.tokenMsgs or m["cur"] != n
                or s.status[m["dest"] - 1] == "Up"):
            return None
        nl = Remove(m["nodelist"], m["dest"])
        t = m.update({"nodelist": nl, "dest": NextNode(nl, n), "seq": m["seq"] + 1})
        rest = s.tokenMsgs - {m}
        lv = _upd(s.localView, n, nl)
        if nl == (n,):
            t1 = t.set("gvn", self.GlobalViewNumber(s, n) + 1)
            return s._replace(
                localView=lv,
                viewState=_upd(s.viewState, n, "Agreement"),
                tokenState=_upd(s.tokenState, n, "Eating"),
                globalView=_upd(s.globalView, n, s.globalView[n - 1] + (nl,)),
                lastToken=_upd(s.lastToken, n, t1),
                token=_upd(s.token, n, t1),
                tokenMsgs=rest,
            )
        return s._replace(
            localView=lv,
            viewState=_upd(s.viewState, n, "Chaos"),
            tokenState=_upd(s.tokenState, n, "Hungry"),
            lastToken=_upd(s.lastToken, n, t),
            token=_upd(s.token, n, NO_TOKEN),
            tokenMsgs=rest | {t},
        )

    def DeliveryFailure911(self, s: RaincoreState, n: int, m: Fn) -> RaincoreState | None:
        """The spec's ``911DeliveryFailure``."""
        if (s.status[n - 1] != "Up" or m not in s.msgs911 or m["cur"] != n
                or s.status[m["dest"] - 1] == "Up"):
            return None
        return s._replace(msgs911=(s.msgs911 - {m}) | {m.set("dest", NextNode(m["nodelist"], m["dest"]))})

    def EatingTimeout(self, s: RaincoreState, n: int) -> RaincoreState | None:
        if s.status[n - 1] != "Up" or s.tokenState[n - 1] != "Eating":
            return None
        if self.Timely911 and self.CallWaiting(s, n):
            return None
        t = s.token[n - 1]
        add = s.newNodes[n - 1] - set(t["nodelist"])
        nl = InsertAfter(t["nodelist"], n, tuple(sorted(add))) if add else t["nodelist"]
        s1 = s._replace(
            newNodes=_upd(s.newNodes, n, frozenset()),
            viewState=_upd(s.viewState, n, "Chaos") if add else s.viewState,
        )
        if len(nl) > 1:
            t2 = t.update({"nodelist": nl, "cur": n, "dest": NextNode(nl, n), "seq": t["seq"] + 1})
            return s1._replace(
                lastToken=_upd(s.lastToken, n, t2),
                tokenMsgs=s.tokenMsgs | {t2},
                tokenState=_upd(s.tokenState, n, "Hungry"),
                token=_upd(s.token, n, NO_TOKEN),
            )
        return s1

    def HungryTimeout(self, s: RaincoreState, n: int) -> RaincoreState | None:
        if s.status[n - 1] != "Up" or s.tokenState[n - 1] != "Hungry":
            return None
        if self.TimelyTimeouts and self.TokenComing(s, n):
            return None
        return s._replace(
            tokenState=_upd(s.tokenState, n, "Starving"),
            viewState=_upd(s.viewState, n, "Chaos"),
            msgs911=s.msgs911 | {self.Call911(s, n)},
        )

    def StarvingTimeout(self, s: RaincoreState, n: int) -> RaincoreState | None:
        if s.status[n - 1] != "Up" or s.tokenState[n - 1] != "Starving":
            return None
        if self.TimelyTimeouts and self.TokenComing(s, n):
            return None
        return s._replace(msgs911=s.msgs911 | {self.Call911(s, n)})

    # --- the environment ------------------------------------------------------------
    def Crash(self, s: RaincoreState, n: int) -> RaincoreState | None:
        if s.status[n - 1] != "Up" or (self.StableFounder and n == 1):
            return None
        return s._replace(
            status=_upd(s.status, n, "Down"),
            viewState=_upd(s.viewState, n, "Chaos"),
            tokenState=_upd(s.tokenState, n, "Starving"),
            token=_upd(s.token, n, NO_TOKEN),
            tokenMsgs=frozenset(m for m in s.tokenMsgs if m["cur"] != n),
            msgs911=frozenset(m for m in s.msgs911 if m["cur"] != n),
        )

    def Recover(self, s: RaincoreState, n: int) -> RaincoreState | None:
        if s.status[n - 1] != "Down":
            return None
        call = self.Call911(s, n)
        if self.NeutralRecovery:
            call = call.set("seq", 0)
        return s._replace(
            status=_upd(s.status, n, "Up"),
            tokenState=_upd(s.tokenState, n, "Starving"),
            viewState=_upd(s.viewState, n, "Chaos"),
            recovered=_upd(s.recovered, n, self.NeutralRecovery),
            msgs911=s.msgs911 | {call},
        )

    def Join(self, s: RaincoreState, n: int) -> RaincoreState | None:
        if n in self.InitRing or s.status[n - 1] != "Off":
            return None
        return s._replace(
            status=_upd(s.status, n, "Up"),
            tokenState=_upd(s.tokenState, n, "Starving"),
            viewState=_upd(s.viewState, n, "Chaos"),
            msgs911=s.msgs911 | {self.Call911(s, n)},
        )

    @staticmethod
    def TokenLoss(s: RaincoreState, m: Fn) -> RaincoreState | None:
        if m not in s.tokenMsgs:
            return None
        return s._replace(tokenMsgs=s.tokenMsgs - {m})

    # --- Next -------------------------------------------------------------------------
    def next(self, s: RaincoreState) -> Iterator[tuple[Label, RaincoreState]]:
        for n in self.Node:
            t = self.Initialization(s, n)
            if t is not None:
                yield Label("Initialization", (n,)), t
            for name, fn, msgs in (("TokenReceived", self.TokenReceived, s.tokenMsgs),
                                   ("911Received", self.Received911, s.msgs911),
                                   ("TokenDeliveryFailure", self.TokenDeliveryFailure, s.tokenMsgs),
                                   ("911DeliveryFailure", self.DeliveryFailure911, s.msgs911)):
                for m in msgs:
                    t = fn(s, n, m)
                    if t is not None:
                        yield Label(name, (n, m)), t
            for name, fn in (("EatingTimeout", self.EatingTimeout), ("HungryTimeout", self.HungryTimeout),
                             ("StarvingTimeout", self.StarvingTimeout)):
                t = fn(s, n)
                if t is not None:
                    yield Label(name, (n,)), t
        for n in self.Node:
            for name, fn in (("Crash", self.Crash), ("Recover", self.Recover), ("Join", self.Join)):
                t = fn(s, n)
                if t is not None:
                    yield Label(name, (n,)), t
        for m in s.tokenMsgs:
            yield Label("TokenLoss", (m,)), s._replace(tokenMsgs=s.tokenMsgs - {m})

    def step(self, s: RaincoreState, action: str, *params: Any) -> RaincoreState:
        """The successor by the named action instance (for scripted runs such
        as the golden scenarios); raises if the instance is not enabled."""
        fn = {
            "Initialization": self.Initialization, "TokenReceived": self.TokenReceived,
            "911Received": self.Received911, "TokenDeliveryFailure": self.TokenDeliveryFailure,
            "911DeliveryFailure": self.DeliveryFailure911, "EatingTimeout": self.EatingTimeout,
            "HungryTimeout": self.HungryTimeout, "StarvingTimeout": self.StarvingTimeout,
            "Crash": self.Crash, "Recover": self.Recover, "Join": self.Join, "TokenLoss": self.TokenLoss,
        }[action]
        t = fn(s, *params)
        if t is None:
            raise ValueError(f"raincore: {Label(action, tuple(params))} is not enabled")
        return t

    # The methods RaincoreKernel transcribes: a subclass that overrides one
    # of them (a test's variant) is searched with ``next`` instead.
    # (Not ``init``: the kernel encodes the states of ``self.init()``, so a
    # subclass may start elsewhere and keep the kernel: tests start from F8's
    # state.)
    _KERNEL_TRANSCRIBES = (
        "next", "constraint", "GlobalViewNumber", "LastGlobalView", "ViewOf", "Queued", "ClaimRing", "ClaimSeq",
        "HigherClaim", "Yields", "Call911", "UpNodes", "TokenLists", "TokenComing", "CallWaiting",
        "Initialization", "AcceptToken", "TokenReceived", "Veto", "Regenerate", "Received911",
        "TokenDeliveryFailure", "DeliveryFailure911", "EatingTimeout", "HungryTimeout", "StarvingTimeout",
        "Crash", "Recover", "Join", "TokenLoss",
    )

    def kernel(self) -> "RaincoreKernel | None":
        return self.transcribed_kernel(RaincoreModel, RaincoreKernel)

    # --- MC constraint --------------------------------------------------------------------
    def constraint(self, s: RaincoreState) -> bool:
        if self.MaxSeq is not None:
            ms = int(self.MaxSeq)
            if any(m["seq"] > ms for m in s.tokenMsgs):
                return False
            if any(s.token[i]["seq"] > ms or s.lastToken[i]["seq"] > ms for i in range(self.N)):
                return False
        if self.Max911 is not None and len(s.msgs911) > int(self.Max911):
            return False
        if self.MaxDown is not None and sum(1 for x in s.status if x == "Down") > int(self.MaxDown):
            return False
        return True

    # --- properties -----------------------------------------------------------------------
    @property
    def invariants(self):
        return {
            "TypeOK": self.TypeOK,
            "LegalStates": self.LegalStates,
            "AtMostOneToken": self.AtMostOneToken,
            "ConsistentHistory": self.ConsistentHistory,
            "SingleRegenerator": self.SingleRegenerator,
        }

    def _is_ring(self, l: Any) -> bool:
        return isinstance(l, tuple) and all(isinstance(x, int) and x in self.Node for x in l)

    def _is_token(self, t: Any) -> bool:
        return (isinstance(t, Fn) and set(t) == _TOKEN_FIELDS and isinstance(t["seq"], int) and t["seq"] >= 0
                and self._is_ring(t["nodelist"]) and t["cur"] in (NULL, *self.Node)
                and t["dest"] in (NULL, *self.Node) and isinstance(t["gvn"], int) and t["gvn"] >= 0)

    def _is_911(self, m: Any) -> bool:
        return (isinstance(m, Fn) and set(m) == _911_FIELDS and m["orig"] in self.Node and m["cur"] in self.Node
                and m["dest"] in self.Node and self._is_ring(m["nodelist"]) and isinstance(m["seq"], int)
                and m["seq"] >= 0 and m["status"] in STATUS_911)

    def TypeOK(self, s: RaincoreState) -> bool:
        N = self.N
        return (
            all(len(getattr(s, f)) == N for f in ("status", "viewState", "tokenState", "globalView", "lastToken",
                                                  "localView", "newNodes", "token", "recovered"))
            and all(x in STATUSES for x in s.status)
            and all(x in VIEW_STATES for x in s.viewState)
            and all(x in TOKEN_STATES for x in s.tokenState)
            and all(isinstance(gv, tuple) and all(self._is_ring(v) for v in gv) for gv in s.globalView)
            and all(self._is_token(t) for t in s.lastToken)
            and all(self._is_ring(l) for l in s.localView)
            and all(isinstance(x, frozenset) and x <= set(self.Node) for x in s.newNodes)
            and all(self._is_token(t) for t in s.token)
            and all((s.tokenState[n - 1] == "Eating") == (s.token[n - 1] != NO_TOKEN) for n in self.UpNodes(s))
            and all(self._is_token(m) for m in s.tokenMsgs)
            and all(self._is_911(m) for m in s.msgs911)
            and all(isinstance(x, bool) for x in s.recovered)
        )

    def LegalStates(self, s: RaincoreState) -> bool:
        return all((s.tokenState[n - 1], s.viewState[n - 1]) in LEGAL_PAIRS for n in self.UpNodes(s))

    def AtMostOneToken(self, s: RaincoreState) -> bool:
        return sum(1 for n in self.UpNodes(s) if s.tokenState[n - 1] == "Eating") <= 1

    def ConsistentHistory(self, s: RaincoreState) -> bool:
        seen: dict[int, tuple] = {}
        for gv in s.globalView:
            for i, v in enumerate(gv):
                if v == NULL_VIEW:
                    continue
                w = seen.setdefault(i, v)
                if w != v:
                    return False
        return True

    def Granted(self, s: RaincoreState, n: int) -> bool:
        return any(m["orig"] == n and m["dest"] == n and self.Regenerate(s, n, m) for m in s.msgs911)

    def Regenerator(self, s: RaincoreState, n: int) -> bool:
        return self.Granted(s, n) or (
            s.tokenState[n - 1] == "Eating" and s.token[n - 1]["seq"] == s.lastToken[n - 1]["seq"]
        )

    def SingleRegenerator(self, s: RaincoreState) -> bool:
        return sum(1 for n in self.UpNodes(s) if self.Regenerator(s, n)) <= 1

    def Agreed(self, s: RaincoreState) -> bool:
        """The state predicate of the spec's Liveness property."""
        up = self.UpNodes(s)
        views = {self.LastGlobalView(s, n) for n in up}
        return all(s.viewState[n - 1] == "Agreement" for n in up) and (
            not up or (len(views) == 1 and set(next(iter(views))) == set(up))
        )


# --- the explorer's kernel -------------------------------------------------------------------
# Record layout of one node in a kernel state (see RaincoreKernel).
_ST, _VS, _TS, _GV, _LT, _LV, _NN, _TOK, _REC = range(9)
_NO_TOK = (0, (), NULL, NULL, 0)   # NO_TOKEN as a kernel token
# kinds of node-local operations
# An op's kind: plain, a crash, or the one guard checked per state (the Hungry
# and Starving timeouts under TimelyTimeouts read TokenComing, the Eating
# timeout under Timely911 CallWaiting).
_PLAIN, _TIMELY, _CRASH, _CALL = range(4)


class RaincoreKernel(Kernel):
    """``RaincoreModel``'s actions over a lean encoding (the explorer's;
    :mod:`groupcheck.model.core`).

    Encoding.  A kernel state is the flat tuple ``(R_1, ..., R_N, tokenMsgs,
    msgs911)``.  ``R_n`` is the *key* of node n's record: the record is the
    tuple of n's entries in the per-node variables, ``(status, viewState,
    tokenState, globalView, lastToken, localView, newNodes, token,
    recovered)``, each the model's own value (strings, tuples, a frozenset, a
    bool) except the two tokens, which are plain tuples ``(seq, nodelist,
    cur, dest, gvn)`` instead of records (``_NO_TOK`` for ``NO_TOKEN``); its
    key is its ``repr`` (newNodes as a sorted tuple), a string, which caches
    its hash, so hashing a state never walks the nested records, and a memo
    keyed by it is a cheap lookup.  The kernel keeps key <-> record in two
    dicts; a key it has not built (a state shipped by another process) is
    parsed back.  ``tokenMsgs`` is a frozenset of token tuples, ``msgs911``
    a frozenset of 911 tuples ``(orig, cur, dest, nodelist, seq, status)``;
    a frozenset caches its hash too, so the sets an action leaves UNCHANGED
    cost nothing to rehash.  Everything is a value (no process-local
    numbering), so kernel states hash alike in the forked workers of
    model/parallel.py.

    Why it is the same transition system.  Every action of ``next`` changes
    at most one node's entries (the node it is parameterised by: the
    receiver of a message, the node that times out, crashes, recovers or
    joins) and adds or removes messages; what it writes into that node and
    the message it adds are functions of that node's entries and of the
    message alone (the spec's actions read no other node's local data).
    Only the *guards* read other nodes: the destination's status in the two
    delivery-failure actions and, under TimelyTimeouts, ``TokenComing``
    (every Eating node's token and every token in flight).  The kernel
    therefore evaluates those guards on the whole state, per state, and
    computes each action's effect once per (node, record) or (node, record,
    message) (the successor record as its key, the message added),
    transcribing the model's action (same guards, same successor
    values, same order of cases) over records, and keeps it in a memo.
    TokenReceived(n, m) and 911Received(n, m) are enabled only for n =
    m.dest and the two delivery failures only for n = m.cur, so the kernel
    looks at those nodes only instead of trying every n.  Labels are the
    model's, built once per action instance.  The successors come in
    another order than ``next``'s (node by node, then message by message),
    so the explorer numbers states differently; the counts, the states and
    the labelled edges are the same.  ``decode`` rebuilds the model
    state and ``encode`` is its inverse; tests/test_explore_kernel.py checks,
    on every reachable state of small models and on the first states of the
    big ones, that the decoded successors are exactly ``next``'s."""

    def __init__(self, model: RaincoreModel) -> None:
        self.model = model
        self.N = model.N
        self.InitRing = model.InitRing
        self.TimelyTimeouts = model.TimelyTimeouts
        ms, m911, md = model.MaxSeq, model.Max911, model.MaxDown
        if ms is not None or m911 is not None or md is not None:
            self.MaxSeq = None if ms is None else int(ms)
            self.Max911 = None if m911 is None else int(m911)
            self.MaxDown = None if md is None else int(md)
            self.constraint = self._constraint
        # per node: record key -> (record, local operations, and the memos
        # token -> TokenReceived, token -> TokenDeliveryFailure, 911 -> 911Received)
        self._nodes: list[dict] = [{} for _ in model.Node]
        self._df911: dict = {}                               # 911 -> 911DeliveryFailure
        self._loss: dict = {}                                # token -> TokenLoss label
        self._keys: dict = {}                                # record -> its key
        self._recs: dict = {}                                # key -> its record
        self._bounds: dict = {}                              # key -> (within MaxSeq, Down)
        self._outside: set = set()                           # states found outside the CONSTRAINT
        self._tok_fn: dict = {}                              # token tuple -> the model's record
        self._m911_fn: dict = {}                             # 911 tuple -> the model's record
        self._dec: dict = {}                                 # key -> node's entries in the model state
        self._dec_sets: dict = {}                            # message set -> the model's

    # --- encoding -------------------------------------------------------------------
    @staticmethod
    def _enc_token(t: Fn) -> tuple:
        return (t["seq"], t["nodelist"], t["cur"], t["dest"], t["gvn"])

    @staticmethod
    def _enc_911(m: Fn) -> tuple:
        return (m["orig"], m["cur"], m["dest"], m["nodelist"], m["seq"], m["status"])

    def token_fn(self, t: tuple) -> Fn:
        f = self._tok_fn.get(t)
        if f is None:
            f = self._tok_fn[t] = Token(*t)
        return f

    def m911_fn(self, m: tuple) -> Fn:
        f = self._m911_fn.get(m)
        if f is None:
            f = self._m911_fn[m] = Msg911(*m)
        return f

    def _key(self, r: tuple) -> str:
        """The key of record ``r``: its repr (newNodes as a sorted tuple), a
        string, so its hash is computed once and cached by the string."""
        key = self._keys.get(r)
        if key is None:
            key = repr(r[:_NN] + (tuple(sorted(r[_NN])),) + r[_NN + 1:])
            self._keys[r] = key
            self._recs[key] = r
        return key

    def _rec(self, key: str) -> tuple:
        """The record of ``key`` (parsed when this process has not built it:
        a state shipped by another worker of model/parallel.py)."""
        r = self._recs.get(key)
        if r is None:
            t = ast.literal_eval(key)
            r = t[:_NN] + (frozenset(t[_NN]),) + t[_NN + 1:]
            self._keys[r] = key
            self._recs[key] = r
        return r

    def encode(self, s: RaincoreState) -> tuple:
        """The kernel state of model state ``s``."""
        et = self._enc_token
        recs = tuple(
            self._key((s.status[i], s.viewState[i], s.tokenState[i], s.globalView[i], et(s.lastToken[i]),
                          s.localView[i], s.newNodes[i], et(s.token[i]), s.recovered[i]))
            for i in range(self.N))
        return recs + (frozenset(map(et, s.tokenMsgs)), frozenset(map(self._enc_911, s.msgs911)))

    def _decoded(self, key: str) -> tuple:
        """Node n's entries of the model state, from its record's key."""
        r = self._rec(key)
        d = self._dec[key] = r[:_LT] + (self.token_fn(r[_LT]),) + r[_LT + 1:_TOK] + (self.token_fn(r[_TOK]), r[_REC])
        return d

    def decode(self, k: tuple) -> RaincoreState:
        N = self.N
        dec = self._dec
        cols = list(zip(*[dec.get(x) or self._decoded(x) for x in k[:N]]))
        tm, m9 = k[N], k[N + 1]
        tms = self._dec_sets.get(tm)
        if tms is None:
            tms = self._dec_sets[tm] = frozenset(map(self.token_fn, tm))
        m9s = self._dec_sets.get(m9)
        if m9s is None:
            m9s = self._dec_sets[m9] = frozenset(map(self.m911_fn, m9))
        return _new_state(RaincoreState, (*cols[:_REC], tms, m9s, cols[_REC]))

    def init(self):
        return [self.encode(s) for s in self.model.init()]

    # --- the model's derived operators over one node's record ------------------------
    def ViewOf(self, r: tuple) -> tuple:
        lgv = LastGlobalViewOf(r[_GV])
        return self.InitRing if lgv == NULL_VIEW else lgv

    def ClaimRing(self, r: tuple, n: int) -> tuple:
        nl = r[_LT][1]
        if not (self.model.TokenRingClaim and nl != ()):
            return self.ViewOf(r)
        if self.model.YieldClaim:
            add = r[_NN] - set(nl)   # Queued
            return InsertAfter(nl, n, tuple(sorted(add))) if add else nl
        return nl

    @staticmethod
    def ClaimSeq(r: tuple) -> int:
        return 0 if r[_REC] else r[_LT][0]

    def Call911(self, n: int, r: tuple) -> tuple:
        ring = self.ClaimRing(r, n)
        return (n, n, NextNode(ring, n), ring, self.ClaimSeq(r), "YES")

    @staticmethod
    def _with(r: tuple, **kv: Any) -> tuple:
        out = list(r)
        for f, v in kv.items():
            out[_FIELD[f]] = v
        return tuple(out)

    # --- node-local actions: effect per (node, record) --------------------------------
    def _local_ops(self, n: int, r: tuple) -> tuple:
        """The actions of node n that read only its record (and, for the
        Hungry and Starving timeouts under TimelyTimeouts TokenComing, and
        for the Eating timeout under Timely911 CallWaiting, checked per
        state):
        tuples ``(label, key of record', token added, 911 added, kind)``."""
        model = self.model
        W = self._with
        I = self._key
        ops = []
        st, ts = r[_ST], r[_TS]
        # Initialization(n)
        if n in self.InitRing and st == "Off":
            t = (model.InitSeq, self.InitRing, n, NextNode(self.InitRing, n), 0)
            ops.append((Label("Initialization", (n,)),
                        I(W(r, status="Up", viewState="Chaos", tokenState="Hungry", localView=self.InitRing,
                            lastToken=t)), t, None, _PLAIN))
        if st == "Up":
            call = _CALL if model.Timely911 else _PLAIN
            # EatingTimeout(n)
            if ts == "Eating":
                t = r[_TOK]
                add = r[_NN] - set(t[1])
                nl = InsertAfter(t[1], n, tuple(sorted(add))) if add else t[1]
                r1 = W(r, newNodes=frozenset(), viewState="Chaos" if add else r[_VS])
                if len(nl) > 1:
                    t2 = (t[0] + 1, nl, n, NextNode(nl, n), t[4])
                    ops.append((Label("EatingTimeout", (n,)),
                                I(W(r1, lastToken=t2, tokenState="Hungry", token=_NO_TOK)), t2, None, call))
                else:
                    ops.append((Label("EatingTimeout", (n,)), I(r1), None, None, call))
            kind = _TIMELY if self.TimelyTimeouts else _PLAIN
            # HungryTimeout(n)
            if ts == "Hungry":
                ops.append((Label("HungryTimeout", (n,)), I(W(r, tokenState="Starving", viewState="Chaos")),
                            None, self.Call911(n, r), kind))
            # StarvingTimeout(n)
            if ts == "Starving":
                ops.append((Label("StarvingTimeout", (n,)), I(r), None, self.Call911(n, r), kind))
            # Crash(n)
            if not (model.StableFounder and n == 1):
                ops.append((Label("Crash", (n,)),
                            I(W(r, status="Down", viewState="Chaos", tokenState="Starving", token=_NO_TOK)),
                            None, None, _CRASH))
        # Recover(n)
        if st == "Down":
            call = self.Call911(n, r)
            if model.NeutralRecovery:
                call = call[:4] + (0,) + call[5:]
            ops.append((Label("Recover", (n,)),
                        I(W(r, status="Up", tokenState="Starving", viewState="Chaos",
                            recovered=model.NeutralRecovery)), None, call, _PLAIN))
        # Join(n)
        if n not in self.InitRing and st == "Off":
            ops.append((Label("Join", (n,)), I(W(r, status="Up", tokenState="Starving", viewState="Chaos")),
                        None, self.Call911(n, r), _PLAIN))
        return tuple(ops)

    # --- message actions: effect per (node, record, message) --------------------------
    def _token_received(self, n: int, r: tuple, m: tuple) -> tuple:
        """TokenReceived(n, m) for n = m.dest Up: ``(label, record', None)``."""
        lab = Label("TokenReceived", (n, self.token_fn(m)))
        if r[_TS] == "Eating" or m[0] <= r[_LT][0]:
            out = (lab, self._key(r), None)   # dropped
        else:
            # AcceptToken
            same = m[1] == r[_LV] and not (self.model.FreshView and r[_REC])
            vs, gv2, tgvn = TakeToken(r[_VS], same, r[_GV], m[1], m[4])
            out = (lab, self._key(self._with(
                r, tokenState="Eating", viewState=vs, globalView=gv2, localView=m[1],
                token=(m[0], m[1], n, m[3], tgvn), recovered=False)), None)
        return out

    def _received_911(self, n: int, r: tuple, m: tuple) -> tuple:
        """911Received(n, m) for n = m.dest Up: ``(label, record', 911 added)``."""
        lab = Label("911Received", (n, self.m911_fn(m)))
        model = self.model
        orig, seq = m[0], m[4]
        if orig == n:
            c = self.ClaimSeq(r)
            regenerate = (m[5] == "YES" and r[_TS] == "Starving" and r[_LT][1] != ()
                          and (not model.FreshClaim or seq == c) and not r[_REC]
                          and (not model.YieldClaim or m[3] == self.ClaimRing(r, n)))
            if regenerate:
                lt = r[_LT]
                out = (lab, self._key(self._with(r, token=(lt[0], lt[1], n, lt[3], lt[4]), tokenState="Eating",
                                                 recovered=False)), None)
            else:
                out = (lab, self._key(r), None)
        else:
            c = self.ClaimSeq(r)
            veto = (r[_TS] == "Eating" or (model.YieldClaim and r[_TS] == "Hungry") or seq < c
                    or (seq == c and n > orig))
            if veto:
                answer = (orig, n, orig, m[3], seq, "NO")
            else:
                answer = (orig, n, NextNode(m[3], n), m[3], seq, m[5])
            if orig in self.ViewOf(r):
                yields = model.YieldClaim and not veto   # Yields
                out = (lab, self._key(self._with(r, newNodes=r[_NN] | {orig}) if yields else r), answer)
            else:
                higher = model.TokenRingClaim and seq > c   # HigherClaim
                out = (lab, self._key(self._with(r, newNodes=r[_NN] | {orig})), answer if higher else None)
        return out

    def _token_delivery_failure(self, n: int, r: tuple, m: tuple) -> tuple:
        """TokenDeliveryFailure(n, m) for n = m.cur Up and m.dest not Up:
        ``(label, record', token added)``."""
        lab = Label("TokenDeliveryFailure", (n, self.token_fn(m)))
        nl = Remove(m[1], m[3])
        t = (m[0] + 1, nl, m[2], NextNode(nl, n), m[4])
        if nl == (n,):
            t1 = t[:4] + (len(r[_GV]) + 1,)
            out = (lab, self._key(self._with(r, localView=nl, viewState="Agreement", tokenState="Eating",
                                             globalView=r[_GV] + (nl,), lastToken=t1, token=t1)), None)
        else:
            out = (lab, self._key(self._with(r, localView=nl, viewState="Chaos", tokenState="Hungry",
                                             lastToken=t, token=_NO_TOK)), t)
        return out

    def _delivery_failure_911(self, m: tuple) -> tuple:
        """911DeliveryFailure(m.cur, m): ``(label, the 911 resent)``."""
        out = (Label("911DeliveryFailure", (m[1], self.m911_fn(m))),
               m[:2] + (NextNode(m[3], m[2]),) + m[3:])
        self._df911[m] = out
        return out

    # --- the search -------------------------------------------------------------------
    @staticmethod
    def _take(k: tuple, e: tuple, slot: int, effect, n: int, m: tuple, j: int) -> tuple:
        """``(label, successor)`` of node n's action on message m, taken from
        the set in slot j of kernel state k: ``effect(n, record, m)`` gives
        (label, record', the message it sends or None), memoised in e[slot]
        (e: n's entry)."""
        hit = e[slot].get(m)
        if hit is None:
            hit = e[slot][m] = effect(n, e[0], m)
        rest = k[j] - {m}
        if hit[2] is not None:
            rest = rest | {hit[2]}
        return hit[0], k[:n - 1] + (hit[1],) + k[n:j] + (rest,) + k[j + 1:]

    def _entry(self, i: int, key: str) -> tuple:
        r = self._rec(key)
        e = self._nodes[i][key] = (r, self._local_ops(i + 1, r), {}, {}, {})
        return e

    def next(self, k: tuple) -> list:
        N = self.N
        tm, m9 = k[N], k[N + 1]
        nodes = self._nodes
        out = []
        add = out.append
        coming = None
        recs = []
        for i in range(N):
            e = nodes[i].get(k[i])
            if e is None:
                e = self._entry(i, k[i])
            recs.append(e)
        for i in range(N):
            for lab, r2, tadd, madd, kind in recs[i][1]:
                if kind == _CRASH:
                    n = i + 1
                    tm2 = frozenset([m for m in tm if m[2] != n])
                    m92 = frozenset([m for m in m9 if m[1] != n])
                else:
                    if kind == _CALL:
                        if any(m[2] == i + 1 for m in m9):
                            continue   # CallWaiting(n) under Timely911
                    elif kind == _TIMELY:
                        if coming is None:
                            # TokenComing: the nodes on the nodelist of a token
                            # held by an Up Eating node or in flight
                            coming = set()
                            for x, *_ in recs:
                                if x[_ST] == "Up" and x[_TS] == "Eating":
                                    coming.update(x[_TOK][1])
                            for m in tm:
                                coming.update(m[1])
                        if i + 1 in coming:
                            continue
                    tm2 = tm if tadd is None or tadd in tm else tm | {tadd}
                    m92 = m9 if madd is None or madd in m9 else m9 | {madd}
                s2 = list(k)
                s2[i] = r2
                s2[N] = tm2
                s2[N + 1] = m92
                add((lab, tuple(s2)))
        for m in tm:
            d = m[3]
            if 1 <= d <= N:
                e = recs[d - 1]
                if e[0][_ST] == "Up":   # TokenReceived(d, m)
                    add(self._take(k, e, 2, self._token_received, d, m, N))
            c = m[2]
            if 1 <= c <= N:
                e = recs[c - 1]
                if e[0][_ST] == "Up" and recs[d - 1][0][_ST] != "Up":   # TokenDeliveryFailure(c, m)
                    add(self._take(k, e, 3, self._token_delivery_failure, c, m, N))
            # TokenLoss(m)
            lab = self._loss.get(m)
            if lab is None:
                lab = self._loss[m] = Label("TokenLoss", (self.token_fn(m),))
            add((lab, k[:N] + (tm - {m}, m9)))
        for m in m9:
            d = m[2]
            e = recs[d - 1]
            if e[0][_ST] == "Up":   # 911Received(d, m)
                add(self._take(k, e, 4, self._received_911, d, m, N + 1))
            elif recs[m[1] - 1][0][_ST] == "Up":
                # 911DeliveryFailure(m.cur, m)
                hit = self._df911.get(m)
                if hit is None:
                    hit = self._delivery_failure_911(m)
                add((hit[0], k[:N + 1] + ((m9 - {m}) | {hit[1]},)))
        return out

    def _bound(self, key: str) -> tuple:
        r = self._rec(key)
        ms = self.MaxSeq
        b = self._bounds[key] = (ms is None or (r[_TOK][0] <= ms and r[_LT][0] <= ms), r[_ST] == "Down")
        return b

    def _constraint(self, k: tuple) -> bool:
        # The explorer asks again each time it meets a state outside the
        # CONSTRAINT (it keeps only the states inside): remembered here.
        if k in self._outside:
            return False
        if self._inside(k):
            return True
        self._outside.add(k)
        return False

    def _inside(self, k: tuple) -> bool:
        N = self.N
        bounds = self._bounds
        down = 0
        for i in range(N):
            b = bounds.get(k[i])
            if b is None:
                b = self._bound(k[i])
            if not b[0]:
                return False
            down += b[1]
        ms = self.MaxSeq
        if ms is not None:
            for m in k[N]:
                if m[0] > ms:
                    return False
        if self.Max911 is not None and len(k[N + 1]) > self.Max911:
            return False
        if self.MaxDown is not None and down > self.MaxDown:
            return False
        return True


_new_state = tuple.__new__
_FIELD = {"status": _ST, "viewState": _VS, "tokenState": _TS, "globalView": _GV, "lastToken": _LT,
          "localView": _LV, "newNodes": _NN, "token": _TOK, "recovered": _REC}
