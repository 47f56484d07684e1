"""FLUSH (spec/Flush/Flush.tla) as a z3 transition relation, and its
inductive invariant for VirtualSynchrony.

Theory of operation
-------------------
Seed 003 (JGRP-82, "Design change: flushing and block() / unblock()
callbacks", "FLUSH on view change"): START_FLUSH, block(), FLUSH_OK,
FLUSH_COMPLETED with a digest, the VIEW, STOP_FLUSH; a crashed initiator's
flush is restarted by the next coordinator.  The encoding fixes the member
set ``1..N`` (the caller's N; the manifest's is 3) and leaves everything
else unbounded:

* ``views`` (a sequence of member sets) is its length ``L`` plus, per member
  x, an array ``Int -> Bool`` (x is in view v);
* ``sent`` (the history of multicasts) is its length ``ns`` plus two arrays
  ``Int -> Int`` (sender and view of multicast i); ``delivered[p]``,
  ``digest[p]`` are arrays ``Int -> Bool`` (sets of ids);
* each FIFO channel from p to q (p != q; the spec never sends to oneself) is
  a head and a tail index and one array per message field (type, view, id,
  digest: ``Int -> (Int -> Bool)``), the messages being the entries at
  ``hd .. tl - 1``: any number of messages in flight;
* ``completed[c]`` (a set of pairs <<q, digest>>) is, per q, a presence bit
  and a digest: the spec records at most one pair per q and view (value()
  refuses a state with two);
* ``MaxMsgs``, ``MaxCrashes`` and ``MaxLeaves`` are bounds of the model
  checker only and are dropped for proofs (the crash and leave guards keep
  their other conjuncts: a staying member remains, the coordinator never
  leaves); they are kept only when the encoding is compared with a bounded
  model (``bounds``).

Values the spec leaves undefined (array entries outside ``1..L``,
``1..ns``, ``hd..tl-1``, an absent digest) are free in z3; the lemmas read
them under their guard.  The lemmas are explained in docs/proofs.md.
"""

from __future__ import annotations

from itertools import product
from typing import Any

import z3

from ..core import Label
from ..flush import FlushModel, FlushState, NO_INIT
from ..values import Fn, record
from .prover import Encoding, join, multipattern, readers, unchanged, z3_set
from .parametric import (Channels, IdSet, Node, PyOps, SortEncoding, Table, le, members_of, node, one, order_axioms,
                         row, universe, update)

I = z3.IntSort()
B = z3.BoolSort()
SET = z3.ArraySort(I, B)

# message types and phases as integers
DATA, START, OK, FC, VIEW, STOP = range(6)
TYPES = ("DATA", "START_FLUSH", "FLUSH_OK", "FLUSH_COMPLETED", "VIEW", "STOP_FLUSH")
TYPE_NO = {t: i for i, t in enumerate(TYPES)}
FLUSH_TYPES = (START, OK, FC, STOP)
NORMAL, INBLOCK, OKSENT, COMPLETED = range(4)
PHASES = ("Normal", "InBlock", "OkSent", "Completed")
PHASE_NO = {p: i for i, p in enumerate(PHASES)}

EMPTY = z3.K(I, z3.BoolVal(False))


# the fields of each message type, FLUSH's and SEQUENCER over FLUSH's (a
# type outside them, shown as ``?t``, has a view)
MSG_FIELDS = {"DATA": ("view", "id", "sender", "seqno"), "FORWARD": ("sender", "seqno"),
              "VIEW": ("view", "digest"), "FLUSH_COMPLETED": ("view", "digest")}


def decoded_msg(types, t: int, fields: dict) -> Fn:
    """The message of a z3 model whose type is number t of ``types``, with
    those of ``fields`` (name -> a function reading it) its type has."""
    name = types[t] if 0 <= t < len(types) else f"?{t}"
    return record(type=name, **{f: read() for f, read in fields.items() if f in MSG_FIELDS.get(name, ("view",))})


def decoded_phase(k: int) -> str:
    return PHASES[k] if 0 <= k < len(PHASES) else f"?{k}"


def stale(ty, cv, v, gone, completed, types=(DATA, FLUSH_TYPES)):
    """Stale(p, q, gone): the head of q -> p (type ty, view cv) is older
    than p's view v, a flush message of v from a ``gone`` sender, or (given
    ``completed``: ReconcileDigests and p Completed, None without
    ReconcileDigests) a DATA of v.  ``types``: DATA and the flush types as
    the encoding numbers them (SEQUENCER over FLUSH's are not FLUSH's)."""
    data, flush = types
    why = [cv < v, z3.And(cv == v, z3.Or(*[ty == t for t in flush]), gone)]
    if completed is not None:
        why.append(z3.And(cv == v, ty == data, completed))
    return z3.Or(*why)


class FlushOps:
    """Flush.tla's operators on a fixed-N state (one z3 term per member, the
    channel from q to p at hd[q, p] .. tl[q, p]): FLUSH's and SEQUENCER over
    FLUSH's fixed-N encodings."""

    @staticmethod
    def alive(S, p):
        return z3.Not(S["crashed"][p])

    @staticmethod
    def has(S, p, q):
        """HasMsg(p, q): the channel from q to p is not empty."""
        return S["hd"][q, p] < S["tl"][q, p]

    def _count(self, S, f):
        """How many members have the flag f (crashed, leaving)."""
        return z3.Sum(*[z3.If(S[f][x], 1, 0) for x in self.M])


class FlushEncoding(FlushOps, Encoding):
    protocol = "flush"
    properties = ("VirtualSynchrony",)
    # one query per action instance (engine.Encoding.split_instances): on the
    # disjunction of Multicast(1..3), ViewDigest took 30-60 s; per instance
    # a fraction of a second
    split_instances = True
    # past 10 million units of z3's resource count (about 1-2 s of CPU) on a
    # whole lemma, ask it one conjunct at a time (engine.Encoding.
    # split_goal_rlimit).  It was needed at N = 4 for ViewDigest over every
    # member that moved (across StartFlush, FlushOk and StopFlush it did not
    # end within the time-out whole; one conjunct took at most 0.04 s).
    # With ViewDigest stated for the sender only no query reached the limit
    # in our runs (Fixed at N = 3 and 4, FixedJoin at N = 3, 2026-11-25);
    # the fallback stays for larger N
    split_goal_rlimit = 10_000_000

    def __init__(self, N: int = 3, NInit: int = 3, *, reconcile: bool = True, variant: str = "",
                 bounds: dict | None = None, reach: dict | None = None, property_only: bool = False) -> None:
        if not 1 <= NInit <= N:
            raise ValueError(f"flush encoding: need 1 <= NInit <= N, got N={N} NInit={NInit}")
        self.N, self.NInit, self.R = N, NInit, reconcile
        self.members = N
        self.M = tuple(range(1, N + 1))
        self.E = tuple((p, q) for p in self.M for q in self.M if p != q)
        # bounds: {"MaxMsgs", "MaxCrashes", "MaxLeaves"} of a bounded model, or None (proofs)
        self.bounds = bounds
        self.variant = variant or ("Fixed" if reconcile else "Flawed")
        self.expect_cti = not reconcile
        # the bounded model that classifies counterexamples
        self.reach = reach or {"MaxMsgs": 1, "MaxCrashes": 1, "MaxLeaves": 0}
        self._k = 0
        # property_only: the property is the only lemma (for a flawed variant:
        # its reachable CTI needs no other, and the run takes seconds, not minutes)
        self.property_only = property_only

    @classmethod
    def from_constants(cls, c: dict) -> "FlushEncoding":
        """The encoding of a manifest model's constants, its bounds kept (to
        compare its edges with the model's)."""
        b = {k: int(c[k]) for k in ("MaxMsgs", "MaxCrashes", "MaxLeaves")}
        return cls(int(c["N"]), int(c["NInit"]), reconcile=bool(c["ReconcileDigests"]), bounds=b, reach=b)

    def model(self) -> FlushModel:
        return FlushModel({"N": self.N, "NInit": self.NInit, "ReconcileDigests": self.R, **self.reach})

    # --- state ------------------------------------------------------------------
    def fresh(self, t: str) -> dict[str, Any]:
        M, E = self.M, self.E
        Bv = lambda n: z3.Bool(f"{t}_{n}")  # noqa: E731
        Iv = lambda n: z3.Int(f"{t}_{n}")  # noqa: E731
        A = lambda n, rng=B: z3.Array(f"{t}_{n}", I, rng)  # noqa: E731
        S: dict[str, Any] = {"tag": t}
        S["L"] = Iv("L")
        S["vm"] = {x: A(f"vm_{x}") for x in M}
        S["vid"] = {p: Iv(f"vid_{p}") for p in M}
        for f in ("crashed", "joining", "leaving", "blocked"):
            S[f] = {p: Bv(f"{f}_{p}") for p in M}
        S["ns"] = Iv("ns")
        S["ssnd"] = A("ssnd", I)
        S["sview"] = A("sview", I)
        S["dl"] = {p: A(f"dl_{p}") for p in M}
        S["dig"] = {p: A(f"dig_{p}") for p in M}
        S["phase"] = {p: Iv(f"phase_{p}") for p in M}
        S["fi"] = {p: Iv(f"fi_{p}") for p in M}
        S["fok"] = {(p, q): Bv(f"fok_{p}_{q}") for p in M for q in M}
        S["cmp"] = {(p, q): Bv(f"cmp_{p}_{q}") for p in M for q in M}
        S["cmpd"] = {(p, q): A(f"cmpd_{p}_{q}") for p in M for q in M}
        S["hd"] = {e: Iv(f"hd_{e[0]}_{e[1]}") for e in E}
        S["tl"] = {e: Iv(f"tl_{e[0]}_{e[1]}") for e in E}
        S["ty"] = {e: A(f"ty_{e[0]}_{e[1]}", I) for e in E}
        S["cv"] = {e: A(f"cv_{e[0]}_{e[1]}", I) for e in E}
        S["ci"] = {e: A(f"ci_{e[0]}_{e[1]}", I) for e in E}
        S["cd"] = {e: A(f"cd_{e[0]}_{e[1]}", SET) for e in E}
        return S

    _scalars = ("L", "ns", "ssnd", "sview")
    _maps = ("vm", "vid", "crashed", "joining", "leaving", "blocked", "dl", "dig", "phase", "fi",
             "fok", "cmp", "cmpd", "hd", "tl", "ty", "cv", "ci", "cd")

    def _frame(self, S, T, upd: dict) -> z3.BoolRef:
        """T equals S updated by ``upd`` (field -> term, or field -> {key: term}); the rest UNCHANGED."""
        return z3.And(*unchanged(S, T, upd, self._scalars + self._maps))

    def _k_var(self, name: str):
        self._k += 1
        return z3.Int(f"k_{name}_{self._k}")

    # --- Init -------------------------------------------------------------------
    def init(self, S) -> z3.BoolRef:
        M = self.M
        cs = [S["L"] == 1, S["ns"] == 0]
        for p in M:
            cs += [S["vm"][p][1] == (p <= self.NInit), S["vid"][p] == (1 if p <= self.NInit else 0),
                   z3.Not(S["crashed"][p]), z3.Not(S["joining"][p]), z3.Not(S["leaving"][p]),
                   z3.Not(S["blocked"][p]), S["dl"][p] == EMPTY, S["dig"][p] == EMPTY,
                   S["phase"][p] == NORMAL, S["fi"][p] == NO_INIT]
            for q in M:
                cs += [z3.Not(S["fok"][p, q]), z3.Not(S["cmp"][p, q])]
        for e in self.E:
            cs += [S["hd"][e] == 0, S["tl"][e] == 0]
        return z3.And(*cs)

    # --- the spec's operators ---------------------------------------------------------
    @staticmethod
    def in_view(S, v, x):
        """x \\in views[v]"""
        return S["vm"][x][v]

    def is_member(self, S, p):
        return z3.And(S["vid"][p] >= 1, S["vm"][p][S["vid"][p]])

    def can_receive(self, S, p):
        return z3.And(self.alive(S, p), self.is_member(S, p))

    def staying(self, S, x):
        return z3.And(S["vm"][x][S["L"]], z3.Not(S["crashed"][x]), z3.Not(S["leaving"][x]))

    def is_coord(self, S, c):
        return z3.And(self.staying(S, c), *[z3.Not(self.staying(S, q)) for q in self.M if q < c])

    def delivered_in(self, S, p, v):
        """DeliveredIn(p, v) as a set (array Int -> Bool)."""
        i = z3.Int("i")
        return z3.Lambda([i], z3.And(S["dl"][p][i], 1 <= i, i <= S["ns"], S["sview"][i] == v))

    def pending(self, S):
        M = self.M
        return z3.Or(*[z3.And(S["vm"][x][S["L"]], z3.Or(S["crashed"][x], S["leaving"][x])) for x in M],
                     *[S["joining"][x] for x in M])

    # channels: the channel from q to p is e = (q, p)
    def head(self, S, p, q, f):
        e = (q, p)
        return S[f][e][S["hd"][e]]

    def take(self, S, p, q) -> dict:
        return {"hd": {(q, p): S["hd"][q, p] + 1}}

    def _append(self, S, e, msg: dict, cond=True) -> dict:
        """Append ``msg`` (field -> term: ty, cv, ci, cd) to channel e when ``cond``."""
        tl = S["tl"][e]
        out = {"tl": {e: z3.If(cond, tl + 1, tl)}}
        for f, v in msg.items():
            out[f] = {e: z3.If(cond, z3.Store(S[f][e], tl, v), S[f][e])}
        return out

    def multi(self, S, p, R, msg: dict) -> dict:
        """Multi(chan, p, R, msg): R(q) says whether q is a recipient."""
        return join(*[self._append(S, (p, q), msg, R(q)) for q in self.M if q != p])

    def live_view(self, S, v):
        return lambda q: z3.And(self.in_view(S, v, q), self.alive(S, q))

    # --- actions ----------------------------------------------------------------
    def actions(self, S, T):
        M, fr, J = self.M, self._frame, join
        R = self.R
        bd = self.bounds
        for p in M:  # Multicast(p)
            i, v = S["ns"] + 1, S["vid"][p]
            g = [self.can_receive(S, p), z3.Not(S["blocked"][p])]
            if bd is not None:
                g.append(S["ns"] < bd["MaxMsgs"])
            upd = J({"ns": i, "ssnd": z3.Store(S["ssnd"], i, p), "sview": z3.Store(S["sview"], i, v),
                     "dl": {p: z3.Store(S["dl"][p], i, True)}},
                    self.multi(S, p, self.live_view(S, v), {"ty": DATA, "cv": v, "ci": i}))
            yield Label("Multicast", (p,)), z3.And(*g, fr(S, T, upd))
        for p, q in product(M, M):  # Deliver(p, q)
            if p == q:
                continue
            g = [self.can_receive(S, p), self.has(S, p, q), self.head(S, p, q, "ty") == DATA,
                 self.head(S, p, q, "cv") == S["vid"][p]]
            if R:
                g.append(S["phase"][p] != COMPLETED)
            upd = J({"dl": {p: z3.Store(S["dl"][p], self.head(S, p, q, "ci"), True)}}, self.take(S, p, q))
            yield Label("Deliver", (p, q)), z3.And(*g, fr(S, T, upd))
        for p, q in product(M, M):  # Discard(p, q)
            if p == q:
                continue
            why = stale(self.head(S, p, q, "ty"), self.head(S, p, q, "cv"), S["vid"][p], S["crashed"][q],
                        S["phase"][p] == COMPLETED if R else None)
            yield Label("Discard", (p, q)), z3.And(self.can_receive(S, p), self.has(S, p, q), why,
                                                   fr(S, T, self.take(S, p, q)))
        for c in M:  # StartFlush(c)
            v = S["vid"][c]
            d = self.delivered_in(S, c, v)
            ph = S["phase"][c]
            done = ph == COMPLETED
            upd = J(self.multi(S, c, self.live_view(S, v), {"ty": START, "cv": v}),
                    {"fi": {c: c}, "phase": {c: z3.If(ph == NORMAL, INBLOCK, ph)},
                     "dig": {c: z3.If(done, d, S["dig"][c])},
                     "cmp": {(c, q): z3.And(done, q == c) for q in M},
                     "cmpd": {(c, c): z3.If(done, d, S["cmpd"][c, c])}})
            yield Label("StartFlush", (c,)), z3.And(
                self.alive(S, c), v == S["L"], self.is_coord(S, c), S["fi"][c] != c, self.pending(S),
                fr(S, T, upd))
        for p, c in product(M, M):  # Block(p, c)
            if p == c:
                continue
            yield Label("Block", (p, c)), z3.And(
                self._start_from(S, p, c), S["phase"][p] == NORMAL,
                fr(S, T, J({"phase": {p: INBLOCK}, "fi": {p: c}}, self.take(S, p, c))))
        for p, c in product(M, M):  # RestartFlush(p, c)
            if p == c:
                continue
            v = S["vid"][p]
            d = self.delivered_in(S, p, v)
            done = S["phase"][p] == COMPLETED
            upd = J({"fi": {p: c}, "dig": {p: z3.If(done, d, S["dig"][p])}}, self.take(S, p, c),
                    self._append(S, (p, c), {"ty": FC, "cv": v, "cd": d}, done))
            yield Label("RestartFlush", (p, c)), z3.And(
                self._start_from(S, p, c), S["phase"][p] != NORMAL, fr(S, T, upd))
        for p in M:  # FlushOk(p)
            v = S["vid"][p]
            upd = J({"phase": {p: OKSENT}, "fok": {(p, p): True}},
                    self.multi(S, p, self.live_view(S, v), {"ty": OK, "cv": v}))
            yield Label("FlushOk", (p,)), z3.And(self.can_receive(S, p), S["phase"][p] == INBLOCK,
                                                 fr(S, T, upd))
        for p, q in product(M, M):  # ReceiveFlushOk(p, q)
            if p == q:
                continue
            yield Label("ReceiveFlushOk", (p, q)), z3.And(
                self.can_receive(S, p), self.has(S, p, q), self.head(S, p, q, "ty") == OK,
                self.head(S, p, q, "cv") == S["vid"][p], self.alive(S, q),
                fr(S, T, J({"fok": {(p, q): True}}, self.take(S, p, q))))
        for p in M:  # FlushCompleted(p)
            v = S["vid"][p]
            d = self.delivered_in(S, p, v)
            c = S["fi"][p]
            sends = [self._append(S, (p, x), {"ty": FC, "cv": v, "cd": d},
                                  z3.And(c == x, self.alive(S, x))) for x in M if x != p]
            upd = J({"phase": {p: COMPLETED}, "blocked": {p: True}, "dig": {p: d},
                     "cmp": {(p, p): z3.Or(c == p, S["cmp"][p, p])},
                     "cmpd": {(p, p): z3.If(c == p, d, S["cmpd"][p, p])}}, *sends)
            yield Label("FlushCompleted", (p,)), z3.And(
                self.can_receive(S, p), S["phase"][p] == OKSENT,
                *[z3.Implies(z3.And(self.in_view(S, v, x), self.alive(S, x)), S["fok"][p, x]) for x in M],
                fr(S, T, upd))
        for c, q in product(M, M):  # ReceiveFlushCompleted(c, q)
            if c == q:
                continue
            yield Label("ReceiveFlushCompleted", (c, q)), z3.And(
                self.can_receive(S, c), self.has(S, c, q), self.head(S, c, q, "ty") == FC,
                self.head(S, c, q, "cv") == S["vid"][c], self.alive(S, q),
                fr(S, T, J({"cmp": {(c, q): True}, "cmpd": {(c, q): self.head(S, c, q, "cd")}},
                           self.take(S, c, q))))
        for c in M:  # SendView(c)
            v = S["vid"][c]
            new = {x: z3.Or(z3.And(self.in_view(S, v, x), self.alive(S, x), z3.Not(S["leaving"][x])),
                            S["joining"][x]) for x in M}
            D = self.union_digest(S, c)
            upd = J({"L": S["L"] + 1, "vm": {x: z3.Store(S["vm"][x], S["L"] + 1, new[x]) for x in M},
                     "vid": {c: v + 1}, "joining": {x: False for x in M}, "phase": {c: NORMAL},
                     "fok": {(c, x): False for x in M}, "dig": {c: EMPTY},
                     "cmp": {(c, x): False for x in M}},
                    self.multi(S, c, lambda q: z3.And(z3.Or(self.in_view(S, v, q), S["joining"][q]),
                                                      self.alive(S, q)), {"ty": VIEW, "cv": v, "cd": D}))
            if R:
                upd["dl"] = {c: z3.SetUnion(S["dl"][c], D)}
            yield Label("SendView", (c,)), z3.And(
                self.alive(S, c), S["fi"][c] == c, S["phase"][c] == COMPLETED,
                *[z3.Implies(z3.And(self.in_view(S, v, x), self.alive(S, x)), S["cmp"][c, x]) for x in M],
                fr(S, T, upd))
        for p, c in product(M, M):  # InstallView(p, c)
            if p == c:
                continue
            cv, vp = self.head(S, p, c, "cv"), S["vid"][p]
            upd = J({"vid": {p: cv + 1}, "fi": {p: z3.If(vp == 0, NO_INIT, c)}, "phase": {p: NORMAL},
                     "fok": {(p, x): False for x in M}, "dig": {p: EMPTY},
                     "cmp": {(p, x): False for x in M}}, self.take(S, p, c))
            if R:
                upd["dl"] = {p: z3.If(vp != 0, z3.SetUnion(S["dl"][p], self.head(S, p, c, "cd")), S["dl"][p])}
            yield Label("InstallView", (p, c)), z3.And(
                self.alive(S, p), self.has(S, p, c), self.head(S, p, c, "ty") == VIEW,
                z3.Or(z3.And(self.is_member(S, p), cv == vp), vp == 0), fr(S, T, upd))
        for c in M:  # StopFlush(c)
            v = S["vid"][c]
            stay = lambda q, v=v: z3.And(self.in_view(S, v, q), self.in_view(S, v - 1, q), self.alive(S, q))  # noqa: E731
            upd = J({"blocked": {c: False}, "fi": {c: NO_INIT}},
                    self.multi(S, c, stay, {"ty": STOP, "cv": v}))
            yield Label("StopFlush", (c,)), z3.And(self.can_receive(S, c), S["fi"][c] == c,
                                                   S["phase"][c] == NORMAL, fr(S, T, upd))
        for p, c in product(M, M):  # Unblock(p, c)
            if p == c:
                continue
            yield Label("Unblock", (p, c)), z3.And(
                self.can_receive(S, p), self.has(S, p, c), self.head(S, p, c, "ty") == STOP,
                self.head(S, p, c, "cv") == S["vid"][p], self.alive(S, c),
                fr(S, T, J({"blocked": {p: False}, "fi": {p: NO_INIT}}, self.take(S, p, c))))
        for p in M:  # Crash(p): each channel from p keeps a prefix holding every VIEW
            g = [self.alive(S, p), self.is_member(S, p),
                 z3.Or(*[self.staying(S, x) for x in M if x != p])]
            if bd is not None:
                g.append(self._count(S, "crashed") < bd["MaxCrashes"])
            upd: dict = {"crashed": {p: True}, "tl": {}, "hd": {}}
            for q in M:
                if q == p:
                    continue
                e = (p, q)
                k = self._k_var(f"cut{p}{q}")
                j = z3.Int("j")
                g += [S["hd"][e] <= k, k <= S["tl"][e],
                      z3.ForAll([j], z3.Implies(z3.And(k <= j, j < S["tl"][e]), S["ty"][e][j] != VIEW))]
                upd["tl"][e] = k
                upd["hd"][q, p] = S["tl"][q, p]     # the channel to p is gone
            yield Label("Crash", (p,)), z3.And(*g, fr(S, T, upd))
        for p in M:  # Join(p)
            if p <= self.NInit:
                continue
            yield Label("Join", (p,)), z3.And(
                self.alive(S, p), S["vid"][p] == 0, z3.Not(S["vm"][p][S["L"]]), z3.Not(S["joining"][p]),
                fr(S, T, {"joining": {p: True}}))
        for p in M:  # Leave(p)
            g = [self.can_receive(S, p), S["vid"][p] == S["L"], z3.Not(S["leaving"][p]),
                 z3.Not(self.is_coord(S, p))]
            if bd is not None:
                g.append(self._count(S, "leaving") < bd["MaxLeaves"])
            yield Label("Leave", (p,)), z3.And(*g, fr(S, T, {"leaving": {p: True}}))

    def _start_from(self, S, p, c):
        return z3.And(self.can_receive(S, p), self.has(S, p, c), self.head(S, p, c, "ty") == START,
                      self.head(S, p, c, "cv") == S["vid"][p], self.alive(S, c))

    def union_digest(self, S, c):
        """UNION {r[2] : r \\in {x \\in completed[c] : Alive(x[1])}}"""
        i = z3.Int("i")
        return z3.Lambda([i], z3.Or(*[z3.And(S["cmp"][c, q], self.alive(S, q), S["cmpd"][c, q][i])
                                      for q in self.M]))

    # --- the mapping between model states and z3 values --------------------------------
    def value(self, S, s: FlushState) -> z3.BoolRef:
        M = self.M
        L = len(s.views)
        cs = [S["L"] == L, S["ns"] == len(s.sent)]
        for v in range(1, L + 1):
            cs += [S["vm"][x][v] == (x in s.views[v - 1]) for x in M]
        for i, r in enumerate(s.sent, start=1):
            cs += [S["ssnd"][i] == r["sender"], S["sview"][i] == r["view"]]
        for p in M:
            cs += [S["vid"][p] == s.vid[p - 1], S["crashed"][p] == (p in s.crashed),
                   S["joining"][p] == (p in s.joining), S["leaving"][p] == (p in s.leaving),
                   S["blocked"][p] == s.blocked[p - 1], S["dl"][p] == z3_set(s.delivered[p - 1]),
                   S["dig"][p] == z3_set(s.digest[p - 1]), S["phase"][p] == (PHASE_NO[s.phase[p - 1]] if s.phase[p - 1] in PHASE_NO
                                                   else int(s.phase[p - 1][1:])),
                   S["fi"][p] == s.flushInit[p - 1]]
            for q in M:
                cs.append(S["fok"][p, q] == (q in s.flushOks[p - 1]))
            recs: dict = {}
            for q, d in s.completed[p - 1]:
                if q in recs:
                    raise ValueError(f"flush encoding: two FLUSH_COMPLETED records of {q} at {p}")
                recs[q] = d
            for q in M:
                cs.append(S["cmp"][p, q] == (q in recs))
                if q in recs:
                    cs.append(S["cmpd"][p, q] == z3_set(recs[q]))
        for p in M:
            if s.chan[(p, p)]:
                raise ValueError(f"flush encoding: a message on the channel from {p} to itself")
        for e in self.E:
            msgs = s.chan[e]
            hd = S["hd"][e]
            cs.append(S["tl"][e] - hd == len(msgs))
            for k, m in enumerate(msgs):
                t = TYPE_NO.get(m["type"]) if m["type"] in TYPE_NO else int(m["type"][1:])
                cs += [S["ty"][e][hd + k] == t, S["cv"][e][hd + k] == m["view"]]
                if t == DATA:
                    cs.append(S["ci"][e][hd + k] == m["id"])
                if t in (FC, VIEW):
                    cs.append(S["cd"][e][hd + k] == z3_set(m["digest"]))
        return z3.And(*cs)

    def decode(self, m: z3.ModelRef, S) -> FlushState:
        M = self.M
        ev, b, n = readers(m)
        # A CTI's z3 model may pick huge lengths (the lemmas bound nothing
        # there): a decoded state shows at most DECODE_CAP views, multicasts
        # and messages per channel -- such a state is outside every bounded
        # model anyway.
        cap = self.DECODE_CAP
        ns = min(max(n(S["ns"]), 0), cap)

        def ids(a):
            return frozenset(i for i in range(1, ns + 1) if b(a[i]))

        L = min(max(n(S["L"]), 0), cap)
        chan = {}
        for p in M:
            chan[(p, p)] = ()
        for e in self.E:
            hd, tl = n(S["hd"][e]), n(S["tl"][e])
            msgs = []
            for k in range(hd, min(max(tl, hd), hd + cap)):
                msgs.append(decoded_msg(TYPES, n(S["ty"][e][k]), {"view": lambda: n(S["cv"][e][k]),
                                        "id": lambda: n(S["ci"][e][k]), "digest": lambda: ids(S["cd"][e][k])}))
            chan[e] = tuple(msgs)
        ph = lambda p: decoded_phase(n(S["phase"][p]))  # noqa: E731
        return FlushState(
            views=tuple(frozenset(x for x in M if b(S["vm"][x][v])) for v in range(1, L + 1)),
            vid=tuple(n(S["vid"][p]) for p in M),
            crashed=frozenset(p for p in M if b(S["crashed"][p])),
            joining=frozenset(p for p in M if b(S["joining"][p])),
            leaving=frozenset(p for p in M if b(S["leaving"][p])),
            sent=tuple(record(sender=n(S["ssnd"][i]), view=n(S["sview"][i])) for i in range(1, ns + 1)),
            delivered=tuple(ids(S["dl"][p]) for p in M),
            chan=Fn(chan),
            phase=tuple(ph(p) for p in M),
            blocked=tuple(b(S["blocked"][p]) for p in M),
            flushInit=tuple(n(S["fi"][p]) for p in M),
            flushOks=tuple(frozenset(q for q in M if b(S["fok"][p, q])) for p in M),
            digest=tuple(ids(S["dig"][p]) for p in M),
            completed=tuple(frozenset((q, ids(S["cmpd"][p, q])) for q in M if b(S["cmp"][p, q])) for p in M),
        )

    DECODE_CAP = 64

    def bounded(self, S):
        """The classifying model's domain: its MaxMsgs, crash and leave budgets,
        a few views and short channels."""
        r = self.reach
        return z3.And(S["ns"] <= r["MaxMsgs"], self._count(S, "crashed") <= r["MaxCrashes"],
                      self._count(S, "leaving") <= r["MaxLeaves"], S["L"] <= 1 + self.N,
                      *[S["tl"][e] - S["hd"][e] <= 6 for e in self.E],
                      *[z3.And(0 <= S["phase"][p], S["phase"][p] <= 3, 0 <= S["vid"][p], S["vid"][p] <= S["L"])
                        for p in self.M],
                      *[self._in_chan(S, e, lambda k, e=e: z3.And(0 <= S["ty"][e][k], S["ty"][e][k] <= 5), "bd")
                        for e in self.E])

    def pretty(self, state) -> dict:
        return {k: repr(v) for k, v in state._asdict().items()}

    # --- invariant ------------------------------------------------------------------
    # Quantifiers range over Int only (ids i, views v, channel positions k);
    # members are expanded.  docs/proofs.md states each lemma in words.
    @property
    def lemmas(self):
        if self.property_only:
            return {"VirtualSynchrony": self.VirtualSynchrony}
        return {
            "Basics": self.Basics,
            "Ids": self.Ids,
            "MsgIds": self.MsgIds,
            "DataIds": self.DataIds,
            "DigestIds": self.DigestIds,
            "ViewMsgs": self.ViewMsgs,
            "Coordinator": self.Coordinator,
            "QuietAfterView": self.QuietAfterView,
            "Records": self.Records,
            "CompletedDigest": self.CompletedDigest,
            "Followers": self.Followers,
            "StartMsgs": self.StartMsgs,
            "StopMsgs": self.StopMsgs,
            "StartBeforeStop": self.StartBeforeStop,
            "FcMsgs": self.FcMsgs,
            "Joiners": self.Joiners,
            "OneViewChange": self.OneViewChange,
            "ViewDigest": self.ViewDigest,
            "ViewCovers": self.ViewCovers,
            "VirtualSynchrony": self.VirtualSynchrony,
        }

    def _v(self, S, name):
        return z3.Int(f"{S['tag']}_{name}")

    def _din(self, S, p, v, i):
        """i \\in DeliveredIn(p, v)"""
        return z3.And(S["dl"][p][i], 1 <= i, i <= S["ns"], S["sview"][i] == v)

    def _in_chan(self, S, e, body, name):
        """Every message at positions hd .. tl-1 of channel e satisfies body(k)."""
        k = self._v(S, f"k{name}_{e[0]}_{e[1]}")
        return z3.ForAll([k], z3.Implies(z3.And(S["hd"][e] <= k, k < S["tl"][e]), body(k)),
                         patterns=[S["ty"][e][k]])

    def _ids_of(self, S, a, v, name):
        """Every id in set a is a multicast of view v (any view if v is None)."""
        i = self._v(S, f"i{name}")
        ok = z3.And(1 <= i, i <= S["ns"]) if v is None else z3.And(1 <= i, i <= S["ns"], S["sview"][i] == v)
        return z3.ForAll([i], z3.Implies(a[i], ok))

    def Basics(self, S):
        """Ranges; a member not yet joined is idle; Completed means blocked."""
        M = self.M
        cs = [S["L"] >= 1, S["ns"] >= 0]
        for p in M:
            vid, ph, fi = S["vid"][p], S["phase"][p], S["fi"][p]
            cs += [0 <= vid, vid <= S["L"], 0 <= ph, ph <= 3, z3.Or(fi == NO_INIT, *[fi == c for c in M]),
                   z3.Implies(vid == 0, z3.And(ph == NORMAL, z3.Not(S["blocked"][p]), fi == NO_INIT,
                                               z3.Not(S["leaving"][p]))),
                   z3.Implies(S["joining"][p], vid == 0),
                   z3.Implies(ph == COMPLETED, S["blocked"][p]),
                   z3.Implies(ph != NORMAL, z3.And(fi != NO_INIT, vid >= 1))]
            if p <= self.NInit:
                cs.append(vid >= 1)
            else:
                cs.append(z3.Implies(vid == 0, z3.Not(S["vm"][p][1])))
        cs += [S["hd"][e] <= S["tl"][e] for e in self.E]
        return z3.And(*cs)

    def Ids(self, S):
        """Multicast i has a view in 1..L; delivered sets, digests and recorded
        digests hold multicasts only (a digest: of its member's view)."""
        i = self._v(S, "ids")
        cs = [z3.ForAll([i], z3.Implies(z3.And(1 <= i, i <= S["ns"]),
                                        z3.And(1 <= S["sview"][i], S["sview"][i] <= S["L"])))]
        for p in self.M:
            cs.append(self._ids_of(S, S["dl"][p], None, f"dl{p}"))
            cs.append(self._ids_of(S, S["dig"][p], S["vid"][p], f"dig{p}"))
            for q in self.M:
                cs.append(z3.Implies(S["cmp"][p, q], self._ids_of(S, S["cmpd"][p, q], S["vid"][p], f"cmpd{p}{q}")))
        return z3.And(*cs)

    def MsgIds(self, S):
        """A message was sent in a view of its sender (1 <= view <= vid)."""
        cs = []
        for e in self.E:
            k = self._v(S, f"kmi{e[0]}{e[1]}")
            cv = S["cv"][e][k]
            cs.append(z3.ForAll([k], z3.Implies(z3.And(S["hd"][e] <= k, k < S["tl"][e]),
                                                z3.And(1 <= cv, cv <= S["vid"][e[0]])), patterns=[cv]))
        return z3.And(*cs)

    def DataIds(self, S):
        """A DATA carries a multicast of its view."""
        cs = []
        for e in self.E:
            k = self._v(S, f"kdi{e[0]}{e[1]}")
            ci = S["ci"][e][k]
            cs.append(z3.ForAll([k], z3.Implies(
                z3.And(S["hd"][e] <= k, k < S["tl"][e], S["ty"][e][k] == DATA),
                z3.And(1 <= ci, ci <= S["ns"], S["sview"][ci] == S["cv"][e][k])), patterns=[ci]))
        return z3.And(*cs)

    def DigestIds(self, S):
        """The digest of a FLUSH_COMPLETED or VIEW holds multicasts of its view only."""
        cs = []
        for e in self.E:
            k, i = self._v(S, f"kmd{e[0]}{e[1]}"), self._v(S, f"imd{e[0]}{e[1]}")
            cs.append(z3.ForAll([k, i], z3.Implies(
                z3.And(S["hd"][e] <= k, k < S["tl"][e], z3.Or(S["ty"][e][k] == FC, S["ty"][e][k] == VIEW),
                       S["cd"][e][k][i]),
                z3.And(1 <= i, i <= S["ns"], S["sview"][i] == S["cv"][e][k])), patterns=[S["cd"][e][k][i]]))
        return z3.And(*cs)

    def ViewMsgs(self, S):
        """A VIEW of view v exists only once view v+1 does (v < L), and its
        sender moved with it: vid > v, in views v and v+1."""
        cs = []
        for e in self.E:
            c = e[0]

            def body(k, e=e, c=c):
                cv = S["cv"][e][k]
                return z3.Implies(S["ty"][e][k] == VIEW, z3.And(
                    cv < S["L"], S["vid"][c] > cv, S["vm"][c][cv], S["vm"][c][cv + 1]))
            cs.append(self._in_chan(S, e, body, "vm"))
        return z3.And(*cs)

    def Coordinator(self, S):
        """A live member that initiated a flush (until its STOP_FLUSH) is in
        the latest view and is its coordinator."""
        return z3.And(*[z3.Implies(z3.And(self.alive(S, c), S["fi"][c] == c),
                                   z3.And(S["vid"][c] == S["L"], self.is_coord(S, c))) for c in self.M])

    def QuietAfterView(self, S):
        """Between its SendView and its STOP_FLUSH, no live member of the
        initiator's new view is in a flush."""
        cs = []
        for x, p in product(self.M, self.M):
            if x == p:
                continue
            cs.append(z3.Implies(z3.And(self.alive(S, x), S["fi"][x] == x, S["phase"][x] == NORMAL,
                                        self.alive(S, p), S["vid"][p] == S["vid"][x]),
                                 S["phase"][p] == NORMAL))
        return z3.And(*cs)

    def Records(self, S):
        """A live member holding FLUSH_COMPLETED records is the initiator in
        its flush; the record of a live member is its current digest, in the
        same view, and that member has completed."""
        cs = []
        for c, q in product(self.M, self.M):
            cs.append(z3.Implies(z3.And(S["cmp"][c, q], self.alive(S, c)), z3.And(
                S["fi"][c] == c, S["phase"][c] != NORMAL,
                z3.Implies(self.alive(S, q), z3.And(S["cmpd"][c, q] == S["dig"][q],
                                                    S["phase"][q] == COMPLETED, S["vid"][q] == S["vid"][c])))))
        return z3.And(*cs)

    def CompletedDigest(self, S):
        """Once completed, a member's digest is what it delivered of its view."""
        cs = []
        for p in self.M:
            i = self._v(S, f"icd{p}")
            cs.append(z3.Implies(S["phase"][p] == COMPLETED, z3.ForAll([i], S["dig"][p][i] == self._din(
                S, p, S["vid"][p], i))))
        return z3.And(*cs)

    def Followers(self, S):
        """A live member in a flush follows an initiator that, if alive and in
        the same view, is in its own flush as initiator."""
        cs = []
        for p, c in product(self.M, self.M):
            if p == c:
                continue
            cs.append(z3.Implies(z3.And(self.alive(S, p), S["phase"][p] != NORMAL, S["fi"][p] == c,
                                        self.alive(S, c), S["vid"][c] == S["vid"][p]),
                                 z3.And(S["fi"][c] == c, S["phase"][c] != NORMAL)))
            cs.append(z3.Implies(z3.And(S["phase"][p] != NORMAL, S["fi"][p] == c), S["vid"][c] >= S["vid"][p]))
        return z3.And(*cs)

    def StartMsgs(self, S):
        """A START_FLUSH of the current view of its live sender: the sender is
        in its own flush as initiator."""
        cs = []
        for e in self.E:
            c = e[0]

            def body(k, e=e, c=c):
                return z3.Implies(z3.And(S["ty"][e][k] == START, self.alive(S, c), S["cv"][e][k] == S["vid"][c]),
                                  z3.And(S["fi"][c] == c, S["phase"][c] != NORMAL))
            cs.append(self._in_chan(S, e, body, "st"))
        return z3.And(*cs)

    def StopMsgs(self, S):
        """A STOP_FLUSH of the latest view from a live sender: the sender is the
        coordinator; one of the receiver's current view: the receiver is not in
        a flush, and no other live member's START_FLUSH of that view is on its way to it."""
        cs = []
        for e in self.E:
            x, p = e

            def body(k, e=e, x=x, p=p):
                cv = S["cv"][e][k]
                return z3.Implies(z3.And(S["ty"][e][k] == STOP, self.alive(S, x)), z3.And(
                    z3.Implies(cv == S["L"], self.is_coord(S, x)),
                    z3.Implies(z3.And(self.alive(S, p), cv == S["vid"][p]), S["phase"][p] == NORMAL)))
            cs.append(self._in_chan(S, e, body, "sp"))
            for c in self.M:   # no START_FLUSH of that view from another live member to p
                if c in (x, p):
                    continue
                f = (c, p)
                k1, k2 = self._v(S, f"k1ss{x}{p}{c}"), self._v(S, f"k2ss{x}{p}{c}")
                cs.append(z3.ForAll([k1, k2], z3.Implies(z3.And(
                    S["hd"][e] <= k1, k1 < S["tl"][e], S["hd"][f] <= k2, k2 < S["tl"][f],
                    S["ty"][e][k1] == STOP, S["ty"][f][k2] == START, S["cv"][e][k1] == S["cv"][f][k2]),
                    z3.Or(S["crashed"][x], S["crashed"][c])), patterns=[multipattern(S["ty"][e][k1], S["ty"][f][k2])]))
        return z3.And(*cs)

    def StartBeforeStop(self, S):
        """FIFO: a STOP_FLUSH behind a START_FLUSH on a channel is of a later view."""
        cs = []
        for e in self.E:
            k1, k2 = self._v(S, f"k1sb{e[0]}{e[1]}"), self._v(S, f"k2sb{e[0]}{e[1]}")
            cs.append(z3.ForAll([k1, k2], z3.Implies(
                z3.And(S["hd"][e] <= k1, k1 < k2, k2 < S["tl"][e], S["ty"][e][k1] == START, S["ty"][e][k2] == STOP),
                S["cv"][e][k1] < S["cv"][e][k2])))
        return z3.And(*cs)

    def FcMsgs(self, S):
        """A FLUSH_COMPLETED is of a view its receiver has reached; one to a
        live initiator in its view: the initiator is in its flush, and the sender, if alive, has completed in that view with
        that digest."""
        cs = []
        for e in self.E:
            q, c = e

            def body(k, e=e, q=q, c=c):
                return z3.Implies(
                    z3.And(S["ty"][e][k] == FC, self.alive(S, c), S["cv"][e][k] == S["vid"][c]),
                    z3.And(S["fi"][c] == c, S["phase"][c] != NORMAL,
                           z3.Implies(self.alive(S, q), z3.And(
                               S["cd"][e][k] == S["dig"][q], S["phase"][q] == COMPLETED,
                               S["vid"][q] == S["cv"][e][k]))))
            cs.append(self._in_chan(S, e, lambda k, e=e, c=c: z3.Implies(
                S["ty"][e][k] == FC, S["cv"][e][k] <= S["vid"][c]), "fr"))
            cs.append(self._in_chan(S, e, body, "fc"))
        return z3.And(*cs)

    def Joiners(self, S):
        """A live member that has not installed a view is in no view before the
        latest; a member that is joining is not in the latest view (Join's
        guard; SendView puts it in the new view and clears joining)."""
        cs = []
        for p in self.M:
            if p <= self.NInit:
                continue
            cs.append(z3.Implies(S["joining"][p], z3.Not(S["vm"][p][S["L"]])))
            w = self._v(S, f"wj{p}")
            cs.append(z3.Implies(z3.And(self.alive(S, p), S["vid"][p] == 0), z3.ForAll(
                [w], z3.Implies(z3.And(1 <= w, w < S["L"]), z3.Not(S["vm"][p][w])))))
        return z3.And(*cs)

    def OneViewChange(self, S):
        """All VIEW messages of one view come from one SendView: the same
        sender, the same digest, one per channel."""
        cs = []
        for a, e in enumerate(self.E):
            for f in self.E[a:]:
                k1, k2 = self._v(S, f"k1ov{e[0]}{e[1]}{f[0]}{f[1]}"), self._v(S, f"k2ov{e[0]}{e[1]}{f[0]}{f[1]}")
                same = z3.BoolVal(e[0] == f[0])
                cs.append(z3.ForAll([k1, k2], z3.Implies(z3.And(
                    S["hd"][e] <= k1, k1 < S["tl"][e], S["hd"][f] <= k2, k2 < S["tl"][f],
                    S["ty"][e][k1] == VIEW, S["ty"][f][k2] == VIEW, S["cv"][e][k1] == S["cv"][f][k2]),
                    z3.And(same, S["cd"][e][k1] == S["cd"][f][k2], z3.BoolVal(e != f) if e != f else k1 == k2)),
                    patterns=[multipattern(S["ty"][e][k1], S["ty"][f][k2])]))
        return z3.And(*cs)

    def ViewDigest(self, S):
        """A VIEW of view v carries exactly what its sender delivered of view v.

        Stated for the sender only: ViewMsgs makes the sender a member that
        moved from v to v + 1, and VirtualSynchrony makes every other such
        member's deliveries of v the sender's, so with those two lemmas this
        is the lemma for every member that moved (docs/proofs.md, FLUSH)."""
        cs = []
        for e in self.E:
            c = e[0]

            def body(k, e=e, c=c):
                cv = S["cv"][e][k]
                i = self._v(S, f"ivd{e[0]}{e[1]}")
                return z3.Implies(S["ty"][e][k] == VIEW,
                                  z3.ForAll([i], S["cd"][e][k][i] == self._din(S, c, cv, i)))
            cs.append(self._in_chan(S, e, body, "vd"))
        return z3.And(*cs)

    def ViewDigestMovers(self, S):
        """ViewDigest as first stated (not a lemma; the test of the restated
        one): a VIEW of view v carries exactly what every member that moved
        from v to v + 1 delivered of view v.  With ViewMsgs and
        VirtualSynchrony it is equivalent to ViewDigest
        (tests/test_proofs_flush.py proves both implications)."""
        cs = []
        for e in self.E:
            for q in self.M:
                def body(k, e=e, q=q):
                    cv = S["cv"][e][k]
                    i = self._v(S, f"ivdm{e[0]}{e[1]}{q}")
                    return z3.Implies(
                        z3.And(S["ty"][e][k] == VIEW, S["vid"][q] > cv, S["vm"][q][cv], S["vm"][q][cv + 1]),
                        z3.ForAll([i], S["cd"][e][k][i] == self._din(S, q, cv, i)))
                cs.append(self._in_chan(S, e, body, f"vdm{q}"))
        return z3.And(*cs)

    def ViewCovers(self, S):
        """A VIEW of view v on its way to a live member: the member is still
        in v, or is a joiner of the latest view (and v + 1 is that view); if in v,
        it has completed the flush of v and its deliveries of v are in the
        VIEW's digest."""
        cs = []
        for e in self.E:
            p = e[1]

            def body(k, e=e, p=p):
                cv = S["cv"][e][k]
                i = self._v(S, f"ivc{e[0]}{e[1]}")
                return z3.Implies(
                    z3.And(S["ty"][e][k] == VIEW, self.alive(S, p), S["vid"][p] == cv),
                    z3.And(S["phase"][p] == COMPLETED,
                           z3.ForAll([i], z3.Implies(self._din(S, p, cv, i), S["cd"][e][k][i]))))
            cs.append(self._in_chan(S, e, body, "vc"))
            cs.append(self._in_chan(S, e, lambda k, e=e, p=p: z3.Implies(
                z3.And(S["ty"][e][k] == VIEW, self.alive(S, p)),
                z3.Or(S["vid"][p] == S["cv"][e][k],
                      z3.And(S["vid"][p] == 0, S["cv"][e][k] == S["L"] - 1, S["vm"][p][S["L"]]))), "vn"))
        return z3.And(*cs)

    def VirtualSynchrony(self, S):
        """The spec's property, for every view v < L (a quantifier over v)."""
        M = self.M
        v, i = self._v(S, "vsv"), self._v(S, "vsi")
        cs = []
        for p, q in product(M, M):
            if p >= q:
                continue
            mover = lambda x: z3.And(S["vid"][x] > v, S["vm"][x][v], S["vm"][x][v + 1])  # noqa: E731
            cs.append(z3.ForAll([v, i], z3.Implies(
                z3.And(1 <= v, v < S["L"], mover(p), mover(q), 1 <= i, i <= S["ns"], S["sview"][i] == v),
                S["dl"][p][i] == S["dl"][q][i])))
        return z3.And(*cs)


def matrix_encoding(N: int, *, joiners: int = 0, **kw) -> FlushEncoding:
    """A variant of the proof matrix (spec/Flush/manifest.json, "proofs"):
    N members, the last ``joiners`` of them outside the first view.  At
    N = 3 the two fixed matrices take about 15-20 s of z3 CPU each, every
    row (an action's instances summed) under 0.5 s of CPU.  The seed as
    written (FlawedLeave, FlawedCrash) is asked from N = 3: with two
    members a leave or a crash leaves one, and their CTIs are unreachable."""
    return FlushEncoding(N, N - joiners, **kw)


# --- every N: members as an uninterpreted sort ---------------------------------------

class FlushSteps:
    """FLUSH's steps over parametric.Channels, written once as the spec
    writes them (``<Action>Step`` in Flush.tla) for FLUSH and SEQUENCER
    over FLUSH for every N: what a step updates (phase, latch, flushInit,
    the messages it takes and sends), a dict for the encoding's frame; the
    guards, and what a step records, stay with each encoding.  ``VIEWS``
    names the field of a member's views, ``VIEW`` a message's view, and
    ``TYPE`` numbers the message types (each encoding has its own)."""

    VIEWS, VIEW = "vm", "cv"
    TYPE = {"START_FLUSH": START, "FLUSH_OK": OK, "STOP_FLUSH": STOP}

    @staticmethod
    def alive(S, p):
        return S["o"].Not(S["crashed"][p])

    def live_view(self, S, v):
        return lambda q: z3.And(S[self.VIEWS][q][v], self.alive(S, q))

    def _msg(self, ty: str, v) -> dict:
        return {"ty": self.TYPE[ty], self.VIEW: v}

    def start_step(self, S, c) -> dict:
        """START_FLUSH to c's live view; c follows itself, in phase InBlock
        unless it was already in a flush."""
        v, ph = S["vid"][c], S["phase"][c]
        return {**self.send(S, c, self.live_view(S, v), self._msg("START_FLUSH", v)),
                "fi": row(S["fi"], c, lambda x: x == c),
                "phase": z3.Store(S["phase"], c, z3.If(ph == NORMAL, INBLOCK, ph))}

    def block_step(self, S, p, c) -> dict:
        """p takes c's START_FLUSH, blocks (phase InBlock) and follows c."""
        return {"phase": z3.Store(S["phase"], p, INBLOCK), "fi": row(S["fi"], p, lambda x: x == c),
                **self.take(S, p, c)}

    def ok_step(self, S, p) -> dict:
        """FLUSH_OK to p's live view, phase OkSent."""
        v = S["vid"][p]
        return {"phase": z3.Store(S["phase"], p, OKSENT),
                **self.send(S, p, self.live_view(S, v), self._msg("FLUSH_OK", v))}

    def stop_step(self, S, c) -> dict:
        """c unblocks, follows none, and sends STOP_FLUSH to the live members
        of its view that were in the view before."""
        v = S["vid"][c]
        stay = lambda q: z3.And(S[self.VIEWS][q][v], S[self.VIEWS][q][v - 1], self.alive(S, q))  # noqa: E731
        return {"blocked": z3.Store(S["blocked"], c, False), "fi": row(S["fi"], c, lambda x: z3.BoolVal(False)),
                **self.send(S, c, stay, self._msg("STOP_FLUSH", v))}

    def unblock_step(self, S, p, c) -> dict:
        """p takes c's STOP_FLUSH, unblocks and follows none."""
        return {"blocked": z3.Store(S["blocked"], p, False), "fi": row(S["fi"], p, lambda x: z3.BoolVal(False)),
                **self.take(S, p, c)}


class FlushAnyEncoding(FlushSteps, Channels, SortEncoding):
    """FLUSH for every number of members (model/proofs/parametric.py).

    The actions and lemmas of ``FlushEncoding`` with members as the sort
    ``Node``, the first view every member (crash and leave), or with
    ``joiner`` every member but ``jn``, the greatest, which may join
    (FixedJoin's shape: one joiner, numbered last).  Per-member fields are arrays over
    ``Node``: ``vm[x]`` (x's views, ``Int -> Bool``), ``vid``, ``phase``,
    the flags, ``dl`` and ``dig`` (sets); ``fok``, ``cmp`` over two
    members, ``cmpd[c, q]`` a set; the channel from q to p is
    ``hd[q, p] .. tl[q, p] - 1`` of ``ty``, ``cv``, ``ci``, ``cd`` over
    ``Node x Node x Int``.  Two of the spec's functions into members are
    relations, so that no function returns a ``Node``: ``flushInit`` is
    ``fi[p, c]`` (p follows c; at most one c, none is ``NO_INIT``) and a
    multicast's sender ``ssnd[i, x]``.  The coordinator is the least
    staying member in ``le``; an ``\\E x`` guard is a witness constant, a
    crash's cut of each channel from it an array ``Node -> Int``.

    One operator is not EPR: SendView's digest, the union of the live
    members' records, is ``\\E q`` under a set comprehension (a Lambda);
    ``ground`` leaves it to z3's own instantiation (docs/proofs.md)."""

    protocol = "flush"
    properties = ("VirtualSynchrony",)
    # every query under z3's deterministic resource limit, no wall-clock
    # time-out (engine._solver): the same answers on every run and machine
    rlimit = 20_000_000
    # z3's own instantiation first, up to 10 million units: it proves
    # every query of both variants in our runs.  At 2 million, a few
    # SendView rows of the joiner variant passed to the grounded query,
    # where z3 gave up on one (its union digest, \E q in a Lambda, is not
    # grounded) and which one depended on the terms the process had made
    first_rlimit = 10_000_000

    def __init__(self, *, reconcile: bool = True, joiner: bool = False, variant: str = "", reach_N: int = 3,
                 reach: dict | None = None, property_only: bool = False) -> None:
        self.R = reconcile
        # joiner: the first view is every member but one, ``jn``, the
        # greatest (FixedJoin's member N); N >= 2
        self.jn = z3.Const("jn", Node) if joiner else None
        self.variant = variant or ("AnyFixed" if reconcile else "AnyFlawed")
        self.expect_cti = not reconcile
        self.property_only = property_only
        # the bounded model whose shortest counterexample pins a CTI
        self.reach_N = reach_N
        self.reach = reach or {"MaxMsgs": 1, "MaxCrashes": 1, "MaxLeaves": 0}

    @classmethod
    def from_constants(cls, c: dict) -> "FlushAnyEncoding":
        """The encoding of a manifest model's constants (its N and bounds the
        bounded model's); its first view must be every member."""
        joiners = int(c["N"]) - int(c["NInit"])
        if joiners not in (0, 1):
            raise ValueError("flush encoding for every N: the first view is every member, or all but the last")
        return cls(reconcile=bool(c["ReconcileDigests"]), joiner=joiners == 1, reach_N=int(c["N"]),
                   reach={k: int(c[k]) for k in ("MaxMsgs", "MaxCrashes", "MaxLeaves")})

    def axioms(self) -> list:
        """The members' order; the joiner is not member 1 and is the greatest."""
        x = z3.Const("jx", Node)
        return order_axioms() + ([] if self.jn is None else [self.jn != one, z3.ForAll([x], le(x, self.jn))])

    def V0(self, x):
        """x is in the first view."""
        return z3.BoolVal(True) if self.jn is None else x != self.jn

    def model(self) -> FlushModel:
        return FlushModel({"N": self.reach_N, "NInit": self.reach_N - (self.jn is not None),
                           "ReconcileDigests": self.R, **self.reach})

    # --- state ------------------------------------------------------------------
    _shape = {"L": ((), I), "ns": ((), I),
              "vm": ((Node,), SET), "vid": ((Node,), I), "phase": ((Node,), I),
              "crashed": ((Node,), B), "joining": ((Node,), B), "leaving": ((Node,), B), "blocked": ((Node,), B),
              "ssnd": ((I, Node), B), "sview": ((I,), I), "dl": ((Node,), SET), "dig": ((Node,), SET),
              "fi": ((Node, Node), B), "fok": ((Node, Node), B), "cmp": ((Node, Node), B),
              "cmpd": ((Node, Node), SET), "hd": ((Node, Node), I), "tl": ((Node, Node), I),
              "ty": ((Node, Node, I), I), "cv": ((Node, Node, I), I), "ci": ((Node, Node, I), I),
              "cd": ((Node, Node, I), SET)}

    def fresh(self, t: str) -> dict[str, Any]:
        return {**super().fresh(t), "V0": self.V0}

    def init(self, S) -> z3.BoolRef:
        a, b = z3.Consts("ia ib", Node)
        no = z3.Lambda([a, b], z3.BoolVal(False))
        return z3.And(
            S["L"] == 1, S["ns"] == 0, z3.ForAll([a], S["vm"][a][1] == self.V0(a)),
            S["vid"] == z3.Lambda([a], z3.If(self.V0(a), 1, 0)),
            *[S[f] == z3.K(Node, z3.BoolVal(False)) for f in ("crashed", "joining", "leaving", "blocked")],
            S["dl"] == z3.K(Node, EMPTY), S["dig"] == z3.K(Node, EMPTY), S["phase"] == z3.K(Node, z3.IntVal(NORMAL)),
            S["fi"] == no, S["fok"] == no, S["cmp"] == no,
            S["hd"] == z3.Lambda([a, b], z3.IntVal(0)), S["tl"] == z3.Lambda([a, b], z3.IntVal(0)))

    # --- the spec's operators (o: Z3Ops for proofs, PyOps on explorer states) ----------
    def is_member(self, S, p):
        return S["o"].And(S["vid"][p] >= 1, S["vm"][p][S["vid"][p]])

    def can_receive(self, S, p):
        return S["o"].And(self.alive(S, p), self.is_member(S, p))

    def staying(self, S, x):
        o = S["o"]
        return o.And(S["vm"][x][S["L"]], o.Not(S["crashed"][x]), o.Not(S["leaving"][x]))

    def coord_below(self, S, c, y):
        """IsCoord(c)'s part for member y: y staying is not below c (IsCoord:
        c staying, and this for every y)."""
        o = S["o"]
        return o.Implies(self.staying(S, y), o.le(c, y))

    def din(self, S, p, v, i):
        """i \\in DeliveredIn(p, v)"""
        return S["o"].And(S["dl"][p][i], 1 <= i, i <= S["ns"], S["sview"][i] == v)

    def delivered_in(self, S, p, v):
        i = z3.Int("dii")
        return z3.Lambda([i], self.din(S, p, v, i))

    def _start_from(self, S, p, c):
        return z3.And(p != c, self.can_receive(S, p), self.has(S, p, c), self.head(S, p, c, "ty") == START,
                      self.head(S, p, c, "cv") == S["vid"][p], self.alive(S, c))

    # --- actions ----------------------------------------------------------------
    def actions(self, S, T):
        fr, P, R = self._frame, self.params, self.R
        NOFI = lambda x: z3.BoolVal(False)  # noqa: E731

        p, = P("Multicast", "p")
        i, v = S["ns"] + 1, S["vid"][p]
        upd = join({"ns": i, "ssnd": update(S["ssnd"], lambda j, x: j == i, lambda j, x: x == p),
                    "sview": z3.Store(S["sview"], i, v), "dl": z3.Store(S["dl"], p, z3.Store(S["dl"][p], i, True))},
                   self.send(S, p, self.live_view(S, v), {"ty": DATA, "cv": v, "ci": i}))
        yield Label("Multicast", ("p",)), z3.And(self.can_receive(S, p), z3.Not(S["blocked"][p]), fr(S, T, upd))

        p, q = P("Deliver", "pq")
        g = [p != q, self.can_receive(S, p), self.has(S, p, q), self.head(S, p, q, "ty") == DATA,
             self.head(S, p, q, "cv") == S["vid"][p]]
        if R:
            g.append(S["phase"][p] != COMPLETED)
        upd = join({"dl": z3.Store(S["dl"], p, z3.Store(S["dl"][p], self.head(S, p, q, "ci"), True))},
                   self.take(S, p, q))
        yield Label("Deliver", ("p", "q")), z3.And(*g, fr(S, T, upd))

        p, q = P("Discard", "pq")
        why = stale(self.head(S, p, q, "ty"), self.head(S, p, q, "cv"), S["vid"][p], S["crashed"][q],
                    S["phase"][p] == COMPLETED if R else None)
        yield Label("Discard", ("p", "q")), z3.And(p != q, self.can_receive(S, p), self.has(S, p, q), why,
                                                   fr(S, T, self.take(S, p, q)))

        c, y = P("StartFlush", "cy")
        w = z3.Const("StartFlush_w", Node)
        v = S["vid"][c]
        d = self.delivered_in(S, c, v)
        ph = S["phase"][c]
        done = ph == COMPLETED
        upd = join(self.start_step(S, c),
                   {"dig": z3.Store(S["dig"], c, z3.If(done, d, S["dig"][c])),
                    "cmp": row(S["cmp"], c, lambda x: z3.And(done, x == c)),
                    "cmpd": z3.Store(S["cmpd"], c, c, z3.If(done, d, S["cmpd"][c, c]))})
        pending = z3.Or(z3.And(S["vm"][w][S["L"]], z3.Or(S["crashed"][w], S["leaving"][w])), S["joining"][w])
        yield Label("StartFlush", ("c",)), z3.And(
            self.alive(S, c), v == S["L"], self.staying(S, c), z3.ForAll([y], self.coord_below(S, c, y)),
            z3.Not(S["fi"][c, c]), pending, fr(S, T, upd))

        p, c = P("Block", "pc")
        yield Label("Block", ("p", "c")), z3.And(
            self._start_from(S, p, c), S["phase"][p] == NORMAL,
            fr(S, T, self.block_step(S, p, c)))

        p, c = P("RestartFlush", "pc")
        v = S["vid"][p]
        d = self.delivered_in(S, p, v)
        done = S["phase"][p] == COMPLETED
        upd = join({"fi": row(S["fi"], p, lambda x: x == c),
                    "dig": z3.Store(S["dig"], p, z3.If(done, d, S["dig"][p]))},
                   self.take(S, p, c), self.send(S, p, lambda x: z3.And(x == c, done), {"ty": FC, "cv": v, "cd": d}))
        yield Label("RestartFlush", ("p", "c")), z3.And(self._start_from(S, p, c), S["phase"][p] != NORMAL,
                                                        fr(S, T, upd))

        p, = P("FlushOk", "p")
        upd = {**self.ok_step(S, p), "fok": z3.Store(S["fok"], p, p, True)}
        yield Label("FlushOk", ("p",)), z3.And(self.can_receive(S, p), S["phase"][p] == INBLOCK, fr(S, T, upd))

        p, q = P("ReceiveFlushOk", "pq")
        yield Label("ReceiveFlushOk", ("p", "q")), z3.And(
            p != q, self.can_receive(S, p), self.has(S, p, q), self.head(S, p, q, "ty") == OK,
            self.head(S, p, q, "cv") == S["vid"][p], self.alive(S, q),
            fr(S, T, join({"fok": z3.Store(S["fok"], p, q, True)}, self.take(S, p, q))))

        p, x = P("FlushCompleted", "px")
        v = S["vid"][p]
        d = self.delivered_in(S, p, v)
        mine = S["fi"][p, p]
        upd = join({"phase": z3.Store(S["phase"], p, COMPLETED), "blocked": z3.Store(S["blocked"], p, True),
                    "dig": z3.Store(S["dig"], p, d), "cmp": z3.Store(S["cmp"], p, p, z3.Or(mine, S["cmp"][p, p])),
                    "cmpd": z3.Store(S["cmpd"], p, p, z3.If(mine, d, S["cmpd"][p, p]))},
                   self.send(S, p, lambda y: z3.And(S["fi"][p, y], self.alive(S, y)), {"ty": FC, "cv": v, "cd": d}))
        yield Label("FlushCompleted", ("p",)), z3.And(
            self.can_receive(S, p), S["phase"][p] == OKSENT,
            z3.ForAll([x], z3.Implies(z3.And(S["vm"][x][v], self.alive(S, x)), S["fok"][p, x])), fr(S, T, upd))

        c, q = P("ReceiveFlushCompleted", "cq")
        yield Label("ReceiveFlushCompleted", ("c", "q")), z3.And(
            c != q, self.can_receive(S, c), self.has(S, c, q), self.head(S, c, q, "ty") == FC,
            self.head(S, c, q, "cv") == S["vid"][c], self.alive(S, q),
            fr(S, T, join({"cmp": z3.Store(S["cmp"], c, q, True),
                           "cmpd": z3.Store(S["cmpd"], c, q, self.head(S, c, q, "cd"))}, self.take(S, c, q))))

        c, x = P("SendView", "cx")
        v, L = S["vid"][c], S["L"]
        new = lambda y: z3.Or(z3.And(S["vm"][y][v], self.alive(S, y), z3.Not(S["leaving"][y])),  # noqa: E731
                              S["joining"][y])
        D = self.union_digest(S, c)
        upd = join({"L": L + 1,
                    "vm": update(S["vm"], lambda y: z3.BoolVal(True), lambda y: z3.Store(S["vm"][y], L + 1, new(y))),
                    "vid": z3.Store(S["vid"], c, v + 1), "joining": z3.K(Node, z3.BoolVal(False)),
                    "phase": z3.Store(S["phase"], c, NORMAL), "fok": row(S["fok"], c, NOFI),
                    "dig": z3.Store(S["dig"], c, EMPTY), "cmp": row(S["cmp"], c, NOFI)},
                   self.send(S, c, lambda q: z3.And(z3.Or(S["vm"][q][v], S["joining"][q]), self.alive(S, q)),
                             {"ty": VIEW, "cv": v, "cd": D}))
        if R:
            upd["dl"] = z3.Store(S["dl"], c, z3.SetUnion(S["dl"][c], D))
        yield Label("SendView", ("c",)), z3.And(
            self.alive(S, c), S["fi"][c, c], S["phase"][c] == COMPLETED,
            z3.ForAll([x], z3.Implies(z3.And(S["vm"][x][v], self.alive(S, x)), S["cmp"][c, x])), fr(S, T, upd))

        p, c = P("InstallView", "pc")
        cv, vp = self.head(S, p, c, "cv"), S["vid"][p]
        upd = join({"vid": z3.Store(S["vid"], p, cv + 1), "fi": row(S["fi"], p, lambda x: z3.And(x == c, vp != 0)),
                    "phase": z3.Store(S["phase"], p, NORMAL), "fok": row(S["fok"], p, NOFI),
                    "dig": z3.Store(S["dig"], p, EMPTY), "cmp": row(S["cmp"], p, NOFI)}, self.take(S, p, c))
        if R:
            upd["dl"] = z3.Store(S["dl"], p, z3.If(vp != 0, z3.SetUnion(S["dl"][p], self.head(S, p, c, "cd")),
                                                   S["dl"][p]))
        yield Label("InstallView", ("p", "c")), z3.And(
            p != c, self.alive(S, p), self.has(S, p, c), self.head(S, p, c, "ty") == VIEW,
            z3.Or(z3.And(self.is_member(S, p), cv == vp), vp == 0), fr(S, T, upd))

        c, = P("StopFlush", "c")
        yield Label("StopFlush", ("c",)), z3.And(self.can_receive(S, c), S["fi"][c, c], S["phase"][c] == NORMAL,
                                                 fr(S, T, self.stop_step(S, c)))

        p, c = P("Unblock", "pc")
        yield Label("Unblock", ("p", "c")), z3.And(
            p != c, self.can_receive(S, p), self.has(S, p, c), self.head(S, p, c, "ty") == STOP,
            self.head(S, p, c, "cv") == S["vid"][p], self.alive(S, c),
            fr(S, T, self.unblock_step(S, p, c)))

        # Crash(p): each channel from p keeps a prefix (to cut[q]) holding every VIEW
        p, w, y = P("Crash", "pwy")
        cut = z3.Array("Crash_cut", Node, I)
        j = z3.Int("Crash_j")
        upd = {"crashed": z3.Store(S["crashed"], p, True),
               "tl": update(S["tl"], lambda a, b: z3.And(a == p, b != p), lambda a, b: cut[b]),
               "hd": update(S["hd"], lambda a, b: z3.And(b == p, a != p), lambda a, b: S["tl"][a, b])}
        yield Label("Crash", ("p",)), z3.And(
            self.alive(S, p), self.is_member(S, p), w != p, self.staying(S, w),
            z3.ForAll([y], z3.Implies(y != p, z3.And(S["hd"][p, y] <= cut[y], cut[y] <= S["tl"][p, y]))),
            z3.ForAll([y, j], z3.Implies(z3.And(y != p, cut[y] <= j, j < S["tl"][p, y]), S["ty"][p, y, j] != VIEW),
                      patterns=[S["ty"][p, y, j]]),
            fr(S, T, upd))

        if self.jn is not None:
            p, = P("Join", "p")
            yield Label("Join", ("p",)), z3.And(
                p == self.jn, self.alive(S, p), S["vid"][p] == 0, z3.Not(S["vm"][p][S["L"]]),
                z3.Not(S["joining"][p]), fr(S, T, {"joining": z3.Store(S["joining"], p, True)}))

        # Leave(p): not the coordinator (not staying, or a staying member w below it)
        p, = P("Leave", "p")
        w = z3.Const("Leave_w", Node)
        yield Label("Leave", ("p",)), z3.And(
            self.can_receive(S, p), S["vid"][p] == S["L"], z3.Not(S["leaving"][p]),
            z3.Or(z3.Not(self.staying(S, p)), z3.And(self.staying(S, w), z3.Not(le(p, w)))),
            fr(S, T, {"leaving": z3.Store(S["leaving"], p, True)}))

    def union_digest(self, S, c):
        """UNION {r[2] : r \\in {x \\in completed[c] : Alive(x[1])}}: \\E q in a Lambda."""
        i, q = z3.Int("udi"), z3.Const("udq", Node)
        return z3.Lambda([i], z3.Exists([q], z3.And(S["cmp"][c, q], self.alive(S, q), S["cmpd"][c, q][i])))

    # --- invariant: FlushEncoding's lemmas, quantified over members -------------------
    # Without a joiner every member has installed a view (vid >= 1) and none
    # joins: Basics says so in place of its clauses for vid = 0, and there is
    # no Joiners lemma (FlushEncoding's is empty when NInit = N); the
    # vacuous clauses cost z3 about half again as much.
    @property
    def lemmas(self):
        names = ("VirtualSynchrony",) if self.property_only else (
            "Basics", "Ids", "MsgIds", "DataIds", "DigestIds", "ViewMsgs", "Coordinator", "QuietAfterView",
            "Records", "CompletedDigest", "Followers", "StartMsgs", "StopMsgs", "StartBeforeStop", "FcMsgs",
            *(("Joiners",) if self.jn is not None else ()), "OneViewChange", "ViewDigest", "ViewCovers",
            "VirtualSynchrony")
        return {name: getattr(self, name) for name in names}

    def _pairs(self, S, body, nodes: int, e, f, trigger=True):
        """Every two messages, at k1 on channel e(xs) and k2 on f(xs), for
        every ``nodes`` members xs: body(*xs, k1, k2)."""
        o = S["o"]
        return o.all(nodes, 2, lambda *r: o.Implies(
                         o.And(self._in(S, *e(*r[:-2]), r[-2]), self._in(S, *f(*r[:-2]), r[-1])), body(*r)),
                     (lambda *r: [S["ty"][(*e(*r[:-2]), r[-2])], S["ty"][(*f(*r[:-2]), r[-1])]]) if trigger else None,
                     lambda *xs: product(self._positions(S, *e(*xs)), self._positions(S, *f(*xs))))

    def Basics(self, S):
        """Ranges; a member not yet joined is idle and not leaving, and
        follows no initiator; Completed means blocked; flushInit is a
        member or none; the channel to oneself is empty."""
        o = S["o"]

        def one(p):
            vid, ph = S["vid"][p], S["phase"][p]
            common = (vid <= S["L"], 0 <= ph, ph <= 3, o.Implies(ph == COMPLETED, S["blocked"][p]),
                      S["hd"][p, p] == S["tl"][p, p])
            if self.jn is None:
                return o.And(1 <= vid, o.Not(S["joining"][p]), *common)
            return o.And(0 <= vid, *common,
                         o.Implies(vid == 0, o.And(ph == NORMAL, o.Not(S["blocked"][p]), o.Not(S["leaving"][p]))),
                         o.Implies(S["joining"][p], vid == 0), o.Implies(ph != NORMAL, vid >= 1),
                         o.Implies(S["V0"](p), vid >= 1),
                         o.Implies(o.And(o.Not(S["V0"](p)), vid == 0), o.Not(S["vm"][p][1])))
        idle = (lambda p, c: True) if self.jn is None else (  # noqa: E731
            lambda p, c: o.Implies(S["vid"][p] == 0, o.Not(S["fi"][p, c])))
        return o.And(S["L"] >= 1, S["ns"] >= 0, o.forall(1, one),
                     o.forall(2, lambda p, c: o.And(S["hd"][p, c] <= S["tl"][p, c], idle(p, c))),
                     o.forall(3, lambda p, c, d: o.Implies(o.And(S["fi"][p, c], S["fi"][p, d]), c == d)))

    def Joiners(self, S):
        """A live member that has not installed a view is in no view before
        the latest; a joining member is not in the latest view."""
        o = S["o"]
        return o.And(
            o.forall(1, lambda p: o.Implies(o.And(o.Not(S["V0"](p)), S["joining"][p]), o.Not(S["vm"][p][S["L"]]))),
            o.all(1, 1, lambda p, w: o.Implies(
                o.And(o.Not(S["V0"](p)), self.alive(S, p), S["vid"][p] == 0, 1 <= w, w < S["L"]),
                o.Not(S["vm"][p][w])), dom=lambda p: ((w,) for w in range(1, S["L"]))))

    def Ids(self, S):
        o = S["o"]
        ok = lambda i: o.And(1 <= i, i <= S["ns"])  # noqa: E731
        return o.And(
            o.all(0, 1, lambda i: o.Implies(ok(i), o.And(1 <= S["sview"][i], S["sview"][i] <= S["L"]))),
            o.all(1, 1, lambda p, i: o.And(
                o.Implies(S["dl"][p][i], ok(i)),
                o.Implies(S["dig"][p][i], o.And(ok(i), S["sview"][i] == S["vid"][p])))),
            o.all(2, 1, lambda p, q, i: o.Implies(o.And(S["cmp"][p, q], S["cmpd"][p, q][i]),
                                                  o.And(ok(i), S["sview"][i] == S["vid"][p]))))

    def MsgIds(self, S):
        return self._msgs(S, lambda a, b, k: S["o"].And(1 <= S["cv"][a, b, k], S["cv"][a, b, k] <= S["vid"][a]),
                          trigger=lambda a, b, k: [S["cv"][a, b, k]])

    def DataIds(self, S):
        o = S["o"]

        def body(a, b, k):
            ci = S["ci"][a, b, k]
            return o.Implies(S["ty"][a, b, k] == DATA,
                             o.And(1 <= ci, ci <= S["ns"], S["sview"][ci] == S["cv"][a, b, k]))
        return self._msgs(S, body, trigger=lambda a, b, k: [S["ci"][a, b, k]])

    def DigestIds(self, S):
        o = S["o"]

        def body(a, b, k):
            ty = S["ty"][a, b, k]
            return o.Implies(o.Or(ty == FC, ty == VIEW), o.all(0, 1, lambda i: o.Implies(
                S["cd"][a, b, k][i], o.And(1 <= i, i <= S["ns"], S["sview"][i] == S["cv"][a, b, k]))))
        return self._msgs(S, body)

    def ViewMsgs(self, S):
        o = S["o"]

        def body(a, b, k):
            cv = S["cv"][a, b, k]
            return o.Implies(S["ty"][a, b, k] == VIEW, o.And(cv < S["L"], S["vid"][a] > cv, S["vm"][a][cv],
                                                             S["vm"][a][cv + 1]))
        return self._msgs(S, body)

    def Coordinator(self, S):
        o = S["o"]
        return o.forall(2, lambda c, y: o.Implies(o.And(self.alive(S, c), S["fi"][c, c]), o.And(
            S["vid"][c] == S["L"], self.staying(S, c), self.coord_below(S, c, y))))

    def QuietAfterView(self, S):
        o = S["o"]
        return o.forall(2, lambda x, p: o.Implies(
            o.And(x != p, self.alive(S, x), S["fi"][x, x], S["phase"][x] == NORMAL, self.alive(S, p),
                  S["vid"][p] == S["vid"][x]), S["phase"][p] == NORMAL))

    def Records(self, S):
        o = S["o"]
        return o.forall(2, lambda c, q: o.Implies(o.And(S["cmp"][c, q], self.alive(S, c)), o.And(
            S["fi"][c, c], S["phase"][c] != NORMAL,
            o.Implies(self.alive(S, q), o.And(S["cmpd"][c, q] == S["dig"][q], S["phase"][q] == COMPLETED,
                                              S["vid"][q] == S["vid"][c])))))

    def CompletedDigest(self, S):
        o = S["o"]
        return o.all(1, 1, lambda p, i: o.Implies(S["phase"][p] == COMPLETED,
                                                  S["dig"][p][i] == self.din(S, p, S["vid"][p], i)))

    def Followers(self, S):
        o = S["o"]
        return o.forall(2, lambda p, c: o.And(
            o.Implies(o.And(p != c, self.alive(S, p), S["phase"][p] != NORMAL, S["fi"][p, c], self.alive(S, c),
                            S["vid"][c] == S["vid"][p]),
                      o.And(S["fi"][c, c], S["phase"][c] != NORMAL)),
            o.Implies(o.And(p != c, S["phase"][p] != NORMAL, S["fi"][p, c]), S["vid"][c] >= S["vid"][p])))

    def StartMsgs(self, S):
        o = S["o"]
        return self._msgs(S, lambda a, b, k: o.Implies(
            o.And(S["ty"][a, b, k] == START, self.alive(S, a), S["cv"][a, b, k] == S["vid"][a]),
            o.And(S["fi"][a, a], S["phase"][a] != NORMAL)))

    def StopMsgs(self, S):
        o = S["o"]

        def body(x, p, y, k):
            cv = S["cv"][x, p, k]
            return o.Implies(o.And(S["ty"][x, p, k] == STOP, self.alive(S, x)), o.And(
                o.Implies(cv == S["L"], o.And(self.staying(S, x), self.coord_below(S, x, y))),
                o.Implies(o.And(self.alive(S, p), cv == S["vid"][p]), S["phase"][p] == NORMAL)))

        def other(x, p, c, k1, k2):   # no START_FLUSH of that view from another live member to p
            return o.Implies(o.And(c != x, c != p, S["ty"][x, p, k1] == STOP, S["ty"][c, p, k2] == START,
                                   S["cv"][x, p, k1] == S["cv"][c, p, k2]),
                             o.Or(S["crashed"][x], S["crashed"][c]))
        return o.And(self._msgs(S, body, nodes=1),
                     self._pairs(S, other, 3, lambda x, p, c: (x, p), lambda x, p, c: (c, p)))

    def StartBeforeStop(self, S):
        o = S["o"]
        return self._pairs(S, lambda a, b, k1, k2: o.Implies(
            o.And(k1 < k2, S["ty"][a, b, k1] == START, S["ty"][a, b, k2] == STOP),
            S["cv"][a, b, k1] < S["cv"][a, b, k2]), 2, lambda a, b: (a, b), lambda a, b: (a, b), trigger=False)

    def FcMsgs(self, S):
        o = S["o"]

        def body(q, c, k):
            cv = S["cv"][q, c, k]
            return o.Implies(o.And(S["ty"][q, c, k] == FC, self.alive(S, c), cv == S["vid"][c]), o.And(
                S["fi"][c, c], S["phase"][c] != NORMAL,
                o.Implies(self.alive(S, q), o.And(S["cd"][q, c, k] == S["dig"][q], S["phase"][q] == COMPLETED,
                                                  S["vid"][q] == cv))))
        return o.And(self._msgs(S, lambda q, c, k: o.Implies(S["ty"][q, c, k] == FC, S["cv"][q, c, k] <= S["vid"][c])),
                     self._msgs(S, body))

    def OneViewChange(self, S):
        o = S["o"]

        def body(a, b, c, d, k1, k2):
            return o.Implies(o.And(S["ty"][a, b, k1] == VIEW, S["ty"][c, d, k2] == VIEW,
                                   S["cv"][a, b, k1] == S["cv"][c, d, k2]),
                             o.And(a == c, S["cd"][a, b, k1] == S["cd"][c, d, k2], o.Implies(b == d, k1 == k2)))
        return self._pairs(S, body, 4, lambda a, b, c, d: (a, b), lambda a, b, c, d: (c, d))

    def ViewDigest(self, S):
        o = S["o"]
        return self._msgs(S, lambda a, b, k: o.Implies(S["ty"][a, b, k] == VIEW, o.all(0, 1, lambda i: (
            S["cd"][a, b, k][i] == self.din(S, a, S["cv"][a, b, k], i)))))

    def ViewCovers(self, S):
        o = S["o"]

        def body(a, p, k):
            cv = S["cv"][a, p, k]
            return o.Implies(o.And(S["ty"][a, p, k] == VIEW, self.alive(S, p), S["vid"][p] == cv), o.And(
                S["phase"][p] == COMPLETED,
                o.all(0, 1, lambda i: o.Implies(self.din(S, p, cv, i), S["cd"][a, p, k][i]))))

        def moved(a, p, k):
            cv = S["cv"][a, p, k]
            return o.Implies(o.And(S["ty"][a, p, k] == VIEW, self.alive(S, p)),
                             o.Or(S["vid"][p] == cv, o.And(S["vid"][p] == 0, cv == S["L"] - 1, S["vm"][p][S["L"]])))
        return o.And(self._msgs(S, body), self._msgs(S, moved))

    def VirtualSynchrony(self, S):
        """The spec's property, for every two members and view v < L."""
        o = S["o"]

        def mover(x, v):
            return o.And(S["vid"][x] > v, S["vm"][x][v], S["vm"][x][v + 1])
        return o.all(2, 2, lambda p, q, v, i: o.Implies(
            o.And(1 <= v, v < S["L"], mover(p, v), mover(q, v), 1 <= i, i <= S["ns"], S["sview"][i] == v),
            S["dl"][p][i] == S["dl"][q][i]),
            dom=lambda p, q: product(range(1, S["L"]), range(1, S["ns"] + 1)))

    # --- explorer states -----------------------------------------------------------------
    def py_state(self, s: FlushState) -> dict[str, Any]:
        """An N-member explorer state as Python tables (PyOps), each channel
        at positions 0 .. len - 1: a lemma of this encoding evaluated on it
        is the lemma instantiated at N."""
        N = len(s.vid)
        M = range(1, N + 1)
        ids = lambda xs: IdSet(xs)  # noqa: E731
        top = max([len(s.views), len(s.sent), *(len(c) for c in s.chan.values()),
                   *(i for d in s.delivered for i in d)], default=0)
        S: dict[str, Any] = {"o": PyOps(N, range(0, top + 2)), "L": len(s.views), "ns": len(s.sent),
                             "V0": s.views[0].__contains__}
        S["vm"] = Table(((x, ids(v for v in range(1, len(s.views) + 1) if x in s.views[v - 1])) for x in M), IdSet())
        S["ssnd"] = Table((((i, r["sender"]), True) for i, r in enumerate(s.sent, 1)), False)
        S["sview"] = Table((i, r["view"]) for i, r in enumerate(s.sent, 1))
        for f, of in (("vid", s.vid), ("blocked", s.blocked)):
            S[f] = Table((p, of[p - 1]) for p in M)
        S["phase"] = Table((p, PHASE_NO[s.phase[p - 1]]) for p in M)
        for f in ("crashed", "joining", "leaving"):
            S[f] = Table(((p, p in getattr(s, f)) for p in M), False)
        S["dl"] = Table(((p, ids(s.delivered[p - 1])) for p in M), IdSet())
        S["dig"] = Table(((p, ids(s.digest[p - 1])) for p in M), IdSet())
        S["fi"] = Table((((p, c), s.flushInit[p - 1] == c) for p in M for c in M), False)
        S["fok"] = Table((((p, q), q in s.flushOks[p - 1]) for p in M for q in M), False)
        S["cmp"] = Table((((p, q), True) for p in M for q, _ in s.completed[p - 1]), False)
        S["cmpd"] = Table((((p, q), ids(d)) for p in M for q, d in s.completed[p - 1]), IdSet())
        self.channel_tables(S, s.chan, M, {"ty": ("type", TYPE_NO.__getitem__), "cv": ("view", None),
                                           "ci": ("id", None), "cd": ("digest", ids)})
        S["cd"].default = IdSet()
        return S

    def holds(self, name: str, s: FlushState) -> bool:
        """Lemma ``name`` instantiated at s's N, on s."""
        return self.lemmas[name](self.py_state(s))

    def value(self, S, s: FlushState) -> z3.BoolRef:
        """s as z3 equalities, the sort pinned to s's N members; each
        channel's head is free (its messages from there on)."""
        P = self.py_state(s)
        N = len(s.vid)
        n = {i: node(i) for i in range(1, N + 1)}
        cs = [universe(N), S["L"] == P["L"], S["ns"] == P["ns"]]
        if self.jn is not None:
            cs.append(self.jn == n[N])
        for i in range(1, P["ns"] + 1):
            cs.append(S["sview"][i] == P["sview"][i])
            cs += [S["ssnd"][i, n[x]] == P["ssnd"][i, x] for x in n]
        for x in n:
            cs += [S["vm"][n[x]][v] == P["vm"][x][v] for v in range(1, P["L"] + 1)]
            for f in ("vid", "phase", "crashed", "joining", "leaving", "blocked"):
                cs.append(S[f][n[x]] == P[f][x])
            for f in ("dl", "dig"):
                cs.append(S[f][n[x]] == z3_set(P[f][x]))
            for y in n:
                cs += [S[f][n[x], n[y]] == P[f][x, y] for f in ("fi", "fok", "cmp")]
                if P["cmp"][x, y]:
                    cs.append(S["cmpd"][n[x], n[y]] == z3_set(P["cmpd"][x, y]))
                cs += self.channel_value(S, P, n, x, y, {"ty": None, "cv": None, "ci": None, "cd": z3_set})
        return z3.And(*cs)

    DECODE_CAP = FlushEncoding.DECODE_CAP

    def decode(self, m: z3.ModelRef, S) -> FlushState:
        """The state of a z3 model, its universe read as members 1..N (at
        most DECODE_CAP views, multicasts and messages per channel)."""
        us = members_of(m)
        M = range(1, len(us) + 1)
        u = dict(zip(M, us))
        ev, b, n = readers(m)
        cap = self.DECODE_CAP
        ns, L = min(max(n(S["ns"]), 0), cap), min(max(n(S["L"]), 0), cap)
        ids = lambda a: frozenset(i for i in range(1, ns + 1) if b(a[i]))  # noqa: E731
        chan = self.decoded_channels(S, u, M, n, cap, lambda key: decoded_msg(TYPES, n(S["ty"][key]), {
            "view": lambda: n(S["cv"][key]), "id": lambda: n(S["ci"][key]), "digest": lambda: ids(S["cd"][key])}))
        return FlushState(
            views=tuple(frozenset(x for x in M if b(S["vm"][u[x]][v])) for v in range(1, L + 1)),
            vid=tuple(n(S["vid"][u[p]]) for p in M),
            crashed=frozenset(p for p in M if b(S["crashed"][u[p]])),
            joining=frozenset(p for p in M if b(S["joining"][u[p]])),
            leaving=frozenset(p for p in M if b(S["leaving"][u[p]])),
            sent=tuple(record(sender=next((x for x in M if b(S["ssnd"][i, u[x]])), 0), view=n(S["sview"][i]))
                       for i in range(1, ns + 1)),
            delivered=tuple(ids(S["dl"][u[p]]) for p in M),
            chan=Fn(chan),
            phase=tuple(decoded_phase(n(S["phase"][u[p]])) for p in M),
            blocked=tuple(b(S["blocked"][u[p]]) for p in M),
            flushInit=tuple(next((c for c in M if b(S["fi"][u[p], u[c]])), NO_INIT) for p in M),
            flushOks=tuple(frozenset(q for q in M if b(S["fok"][u[p], u[q]])) for p in M),
            digest=tuple(ids(S["dig"][u[p]]) for p in M),
            completed=tuple(frozenset((q, ids(S["cmpd"][u[p], u[q]])) for q in M if b(S["cmp"][u[p], u[q]]))
                            for p in M))

    def fits(self, state: FlushState) -> bool:
        return len(state.vid) == self.reach_N

    # each action's parameters, as ``actions`` names them
    _params = {"Multicast": "p", "Deliver": "pq", "Discard": "pq", "StartFlush": "c", "Block": "pc",
               "RestartFlush": "pc", "FlushOk": "p", "ReceiveFlushOk": "pq", "FlushCompleted": "p",
               "ReceiveFlushCompleted": "cq", "SendView": "c", "InstallView": "pc", "StopFlush": "c",
               "Unblock": "pc", "Crash": "p", "Join": "p", "Leave": "p"}

    def pin(self, label: Label) -> z3.BoolRef:
        """The action's parameters bound to the members a model label names."""
        names = self._params[label.action]
        return z3.And(*[c == node(i) for c, i in zip(self.params(label.action, names), label.params)])


def any_encoding(_n=None, *, variant: str, **kw) -> FlushAnyEncoding:
    """A variant of the proof matrix proved for every N (the manifest's
    ``members: "any"``)."""
    return FlushAnyEncoding(variant=variant, **kw)
