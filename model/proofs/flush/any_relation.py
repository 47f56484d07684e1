"""FLUSH for every N: the relation over an uninterpreted sort of members
(parametric.py), ``FlushSteps`` shared with SEQUENCER over FLUSH; the class
docstring gives the encoding.
"""

from __future__ import annotations

from typing import Any
import z3
from ...core import Label
from ...flush import FlushModel, FlushState, NO_INIT
from ...values import Fn, record
from ..prover import join, readers, z3_set
from ..parametric import (Channels, IdSet, Node, PyOps, SortEncoding, Table, le, members_of, node, one, order_axioms,
                         row, universe, update)
from .relation import B, COMPLETED, DATA, EMPTY, FC, FlushRelation, I, INBLOCK, NORMAL, OK, OKSENT, PHASE_NO, SET, START, STOP, TYPES, TYPE_NO, VIEW, decoded_msg, decoded_phase, stale


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


class FlushAnyRelation(FlushSteps, Channels, SortEncoding):
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
    def from_constants(cls, c: dict) -> "FlushAnyRelation":
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

    DECODE_CAP = FlushRelation.DECODE_CAP

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
