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
that the explorer's state graph equals TLC's (``RaincoreKernel``,
model/raincore_kernel.py, is the same transition system over a leaner encoding, which the
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

from collections.abc import Iterator, Mapping
from typing import Any

from .core import Label, Model
from .raincore_kernel import RaincoreKernel
from .raincore_ops import (FIELDS_911, InsertAfter, LastGlobalViewOf, LEGAL_PAIRS, Msg911, NextNode, NO_TOKEN,
                           NULL, NULL_VIEW, RaincoreState, Remove, STATUS_911, STATUSES, TakeToken, Token,
                           TOKEN_FIELDS, TOKEN_STATES, updated, VIEW_STATES)
from .values import Fn


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
            status=updated(s.status, n, "Up"),
            viewState=updated(s.viewState, n, "Chaos"),
            tokenState=updated(s.tokenState, n, "Hungry"),
            localView=updated(s.localView, n, self.InitRing),
            lastToken=updated(s.lastToken, n, t),
            tokenMsgs=s.tokenMsgs | {t},
        )

    def AcceptToken(self, s: RaincoreState, n: int, m: Fn, rest: frozenset) -> RaincoreState:
        same = m["nodelist"] == s.localView[n - 1] and not (self.FreshView and s.recovered[n - 1])
        vs, gv2, tgvn = TakeToken(s.viewState[n - 1], same, s.globalView[n - 1], m["nodelist"], m["gvn"])
        return s._replace(
            tokenMsgs=rest,
            tokenState=updated(s.tokenState, n, "Eating"),
            viewState=updated(s.viewState, n, vs),
            globalView=updated(s.globalView, n, gv2),
            localView=updated(s.localView, n, m["nodelist"]),
            token=updated(s.token, n, m.update({"cur": n, "gvn": tgvn})),
            recovered=updated(s.recovered, n, False),
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
                    token=updated(s.token, n, s.lastToken[n - 1].set("cur", n)),
                    tokenState=updated(s.tokenState, n, "Eating"),
                    recovered=updated(s.recovered, n, False),
                )
            return s._replace(msgs911=rest)
        if self.Veto(s, n, m):
            answer = m.update({"cur": n, "status": "NO", "dest": m["orig"]})
        else:
            answer = m.update({"cur": n, "dest": NextNode(m["nodelist"], n)})
        if m["orig"] in self.ViewOf(s, n):
            if self.Yields(s, n, m):
                return s._replace(msgs911=rest | {answer},
                                  newNodes=updated(s.newNodes, n, s.newNodes[n - 1] | {m["orig"]}))
            return s._replace(msgs911=rest | {answer})
        return s._replace(msgs911=rest | {answer} if self.HigherClaim(s, n, m) else rest,
                          newNodes=updated(s.newNodes, n, s.newNodes[n - 1] | {m["orig"]}))

    def TokenDeliveryFailure(self, s: RaincoreState, n: int, m: Fn) -> RaincoreState | None:
        if (s.status[n - 1] != "Up" or m not in s.tokenMsgs or m["cur"] != n
                or s.status[m["dest"] - 1] == "Up"):
            return None
        nl = Remove(m["nodelist"], m["dest"])
        t = m.update({"nodelist": nl, "dest": NextNode(nl, n), "seq": m["seq"] + 1})
        rest = s.tokenMsgs - {m}
        lv = updated(s.localView, n, nl)
        if nl == (n,):
            t1 = t.set("gvn", self.GlobalViewNumber(s, n) + 1)
            return s._replace(
                localView=lv,
                viewState=updated(s.viewState, n, "Agreement"),
                tokenState=updated(s.tokenState, n, "Eating"),
                globalView=updated(s.globalView, n, s.globalView[n - 1] + (nl,)),
                lastToken=updated(s.lastToken, n, t1),
                token=updated(s.token, n, t1),
                tokenMsgs=rest,
            )
        return s._replace(
            localView=lv,
            viewState=updated(s.viewState, n, "Chaos"),
            tokenState=updated(s.tokenState, n, "Hungry"),
            lastToken=updated(s.lastToken, n, t),
            token=updated(s.token, n, NO_TOKEN),
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
            newNodes=updated(s.newNodes, n, frozenset()),
            viewState=updated(s.viewState, n, "Chaos") if add else s.viewState,
        )
        if len(nl) > 1:
            t2 = t.update({"nodelist": nl, "cur": n, "dest": NextNode(nl, n), "seq": t["seq"] + 1})
            return s1._replace(
                lastToken=updated(s.lastToken, n, t2),
                tokenMsgs=s.tokenMsgs | {t2},
                tokenState=updated(s.tokenState, n, "Hungry"),
                token=updated(s.token, n, NO_TOKEN),
            )
        return s1

    def HungryTimeout(self, s: RaincoreState, n: int) -> RaincoreState | None:
        if s.status[n - 1] != "Up" or s.tokenState[n - 1] != "Hungry":
            return None
        if self.TimelyTimeouts and self.TokenComing(s, n):
            return None
        return s._replace(
            tokenState=updated(s.tokenState, n, "Starving"),
            viewState=updated(s.viewState, n, "Chaos"),
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
            status=updated(s.status, n, "Down"),
            viewState=updated(s.viewState, n, "Chaos"),
            tokenState=updated(s.tokenState, n, "Starving"),
            token=updated(s.token, n, NO_TOKEN),
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
            status=updated(s.status, n, "Up"),
            tokenState=updated(s.tokenState, n, "Starving"),
            viewState=updated(s.viewState, n, "Chaos"),
            recovered=updated(s.recovered, n, self.NeutralRecovery),
            msgs911=s.msgs911 | {call},
        )

    def Join(self, s: RaincoreState, n: int) -> RaincoreState | None:
        if n in self.InitRing or s.status[n - 1] != "Off":
            return None
        return s._replace(
            status=updated(s.status, n, "Up"),
            tokenState=updated(s.tokenState, n, "Starving"),
            viewState=updated(s.viewState, n, "Chaos"),
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
        return (isinstance(t, Fn) and set(t) == TOKEN_FIELDS and isinstance(t["seq"], int) and t["seq"] >= 0
                and self._is_ring(t["nodelist"]) and t["cur"] in (NULL, *self.Node)
                and t["dest"] in (NULL, *self.Node) and isinstance(t["gvn"], int) and t["gvn"] >= 0)

    def _is_911(self, m: Any) -> bool:
        return (isinstance(m, Fn) and set(m) == FIELDS_911 and m["orig"] in self.Node and m["cur"] in self.Node
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
