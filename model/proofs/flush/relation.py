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
from ...core import Label
from ...flush import FlushModel, FlushState, NO_INIT
from ...values import Fn, record
from ..prover import Encoding, join, readers, unchanged, z3_set

I = z3.IntSort()
B = z3.BoolSort()
SET = z3.ArraySort(I, B)

# message types and phases as integers
DATA, START, OK, FC, VIEW, STOP = range(6)
NORMAL, INBLOCK, OKSENT, COMPLETED = range(4)
TYPES = ("DATA", "START_FLUSH", "FLUSH_OK", "FLUSH_COMPLETED", "VIEW", "STOP_FLUSH")
TYPE_NO = {t: i for i, t in enumerate(TYPES)}
FLUSH_TYPES = (START, OK, FC, STOP)
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


class FlushRelation(FlushOps, Encoding):
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
    def from_constants(cls, c: dict) -> "FlushRelation":
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
        yield from self._data_actions(S, T)
        yield from self._flush_actions(S, T)
        yield from self._view_actions(S, T)
        yield from self._membership_actions(S, T)

    def _data_actions(self, S, T):
        """Multicast, Deliver, Discard."""
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

    def _flush_actions(self, S, T):
        """StartFlush to ReceiveFlushCompleted: the flush up to the view."""
        M, fr, J = self.M, self._frame, join
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

    def _view_actions(self, S, T):
        """SendView, InstallView, StopFlush, Unblock."""
        M, fr, J = self.M, self._frame, join
        R = self.R
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

    def _membership_actions(self, S, T):
        """Crash, Join, Leave."""
        M, fr = self.M, self._frame
        bd = self.bounds
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

    def _v(self, S, name):
        return z3.Int(f"{S['tag']}_{name}")

    def _in_chan(self, S, e, body, name):
        """Every message at positions hd .. tl-1 of channel e satisfies body(k)."""
        k = self._v(S, f"k{name}_{e[0]}_{e[1]}")
        return z3.ForAll([k], z3.Implies(z3.And(S["hd"][e] <= k, k < S["tl"][e]), body(k)),
                         patterns=[S["ty"][e][k]])

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
