"""Raincore (spec/Raincore/Raincore.tla) as a z3 transition relation.

Theory of operation
-------------------
Seed 004 (the Raincore token ring, its 911 regeneration protocol).  The
encoding fixes the node set ``1..N`` (the manifest's N: 3 for Faithful3, 2
for FixedRing2) and leaves everything else the spec lets grow unbounded:

* a ring (a nodelist, a localView, a globalView entry) is a sequence of
  distinct nodes of ``1..N``: there are finitely many, so a ring is an Int,
  the index of the sequence in ``Rings.all`` (0 is ``<<>>``, which is also
  the NULL entry of a globalView vector); NextNode, Remove, InsertAfter,
  membership and Len are tables over these indices;
* a globalView vector is a z3 array Int -> ring plus a length (unbounded
  history; the globalViewNumber is the length);
* ``li`` is a ghost per node, the index of the last non-NULL entry of its
  globalView (0 if none), kept by the actions, so that LastGlobalView and
  ViewOf are quantifier-free; the lemma ``LastIndex`` says it is right;
* a token (a held token, lastToken, a token message) is a z3 datatype
  record ``tok(seq, nl, cur, dest, gvn)`` with unbounded Int seq and gvn;
  a 911 message is ``m911(orig, cur, dest, nl, seq, status)``;
* ``tokenMsgs`` and ``msgs911`` are z3 arrays record -> Bool: any number of
  messages in flight with any sequence numbers;
* an action that takes a message (TokenReceived, 911Received, the two
  delivery failures, TokenLoss) is one instance per node whose message is a
  fresh record constant constrained to be in the set (the spec's
  ``\\E m \\in tokenMsgs``).

The model checker's bounds (MCRaincore's MaxSeq, Max911, MaxDown) are
dropped: the relation is the spec's Next.  They are kept by ``model()``,
the bounded model the counterexamples are looked up in.

The lemmas: four that hold at any N (Types, LastIndex, LegalStates,
HeldNotStale) and, for the fixes on the two-node ring (FixedRing2), eleven
more on the ring, the tokens in flight and the 911 claims, whose
conjunction with AtMostOneToken is inductive (docs/proofs.md, Raincore,
states each in words).  At N >= 3 the fixed protocol breaks
AtMostOneToken (F8), with YieldClaim and Timely911 too (F8d, F8e), and
then ConsistentHistory (F9, F9d; docs/raincore.md): the tests replay each
on this relation.
"""

from __future__ import annotations

from itertools import combinations, permutations
from typing import Any
import z3
from ...core import Label
from ...raincore import (InsertAfter, LastGlobalViewOf, Msg911, NextNode, RaincoreModel, RaincoreState, Remove,
                        Token)
from ..prover import Encoding

I = z3.IntSort()
STATUS = ("Off", "Up", "Down")
VIEW = ("Agreement", "Chaos", "Reserve")
TSTATE = ("Eating", "Hungry", "Starving")
ST911 = ("YES", "NO", "REJECT")
OFF, UP, DOWN = 0, 1, 2
AGREEMENT, CHAOS, RESERVE = 0, 1, 2
EATING, HUNGRY, STARVING = 0, 1, 2
YES, NO = 0, 1

Tok = z3.Datatype("RcTok")
Tok.declare("tok", ("seq", I), ("nl", I), ("cur", I), ("dest", I), ("gvn", I))
Tok = Tok.create()
M9 = z3.Datatype("Rc911")
M9.declare("m911", ("orig", I), ("cur", I), ("dest", I), ("nl", I), ("seq", I), ("status", I))
M9 = M9.create()


class Rings:
    """Every sequence of distinct nodes of 1..N, numbered (0 is <<>>), and
    the spec's ring operators as tables over those numbers."""

    def __init__(self, N: int) -> None:
        self.N = N
        self.nodes = tuple(range(1, N + 1))
        self.all: list[tuple] = [p for k in range(N + 1) for p in permutations(self.nodes, k)]
        self.id = {r: i for i, r in enumerate(self.all)}

    def of(self, r: tuple) -> int:
        if r not in self.id:
            raise ValueError(f"raincore encoding: {r!r} is not a ring of distinct nodes of 1..{self.N}")
        return self.id[r]

    def table(self, l, f):
        """f(ring) for the ring numbered by term l (an If chain; the last
        ring's value beyond the numbers)."""
        vals = [f(r) for r in self.all]
        out = vals[-1]
        for i in range(len(vals) - 2, -1, -1):
            out = z3.If(l == i, vals[i], out)
        return out

    def node_table(self, x, f):
        """f(node) for the node term x (If chain over 1..N; f(N) beyond)."""
        out = f(self.N)
        for y in reversed(self.nodes[:-1]):
            out = z3.If(x == y, f(y), out)
        return out

    def member(self, x, l):
        return self.table(l, lambda r: self.node_table(x, lambda y: z3.BoolVal(y in r)))

    def member_c(self, y: int, l):
        """y (a concrete node) is on ring l."""
        return self.table(l, lambda r: z3.BoolVal(y in r))

    def length(self, l):
        return self.table(l, lambda r: z3.IntVal(len(r)))

    def next_node(self, l, x):
        """NextNode(l, x); NULL (0) when l is empty (the spec's l[1] undefined)."""
        return self.table(l, lambda r: self.node_table(x, lambda y: z3.IntVal(NextNode(r, y) if r else 0)))

    def remove(self, l, x):
        return self.table(l, lambda r: self.node_table(x, lambda y: z3.IntVal(self.id[Remove(r, y)])))


class RaincoreRelation(Encoding):
    protocol = "raincore"
    properties = ("AtMostOneToken",)

    CONSTS = ("TimelyTimeouts", "StableFounder", "NeutralRecovery", "FreshClaim", "FreshView",
              "TokenRingClaim", "YieldClaim", "Timely911")

    def __init__(self, constants: dict, *, variant: str, expect_cti: bool = False, lemma_names=None,
                 properties=("AtMostOneToken",)) -> None:
        self.c = dict(constants)
        self.N = int(self.c["N"])
        self.members = self.N
        self.InitSize, self.InitSeq = int(self.c["InitSize"]), int(self.c["InitSeq"])
        self.ColdStart = bool(self.c["ColdStart"])
        for k in self.CONSTS:
            setattr(self, k, bool(self.c.get(k, False)))
        self.variant, self.expect_cti = variant, expect_cti
        self.properties = tuple(properties)
        self.R = Rings(self.N)
        self.nodes = self.R.nodes
        self.InitRing = tuple(range(1, self.InitSize + 1))
        self.init_ring = self.R.of(self.InitRing)
        self._lemma_names = lemma_names
        self._k = 0
        self._model = RaincoreModel(self.c)
        if self.ring_lemmas_apply:
            # z3's solve-eqs preprocessing substitutes the frame's array
            # equalities into the quantified view lemmas and the result loops
            # (every query of the views `unknown`); without it each is proved
            # in a fraction of a second
            self.solver_params = {"smt.solve_eqs": False}

    # --- state ------------------------------------------------------------------------
    def fresh(self, t: str) -> dict[str, Any]:
        Nn = self.nodes
        S: dict[str, Any] = {"tag": t}
        for f in ("status", "vs", "ts", "lv", "gvlen", "li"):
            S[f] = {n: z3.Int(f"{t}_{f}_{n}") for n in Nn}
        S["gv"] = {n: z3.Array(f"{t}_gv_{n}", I, I) for n in Nn}
        S["last"] = {n: z3.Const(f"{t}_last_{n}", Tok) for n in Nn}
        S["token"] = {n: z3.Const(f"{t}_token_{n}", Tok) for n in Nn}
        S["new"] = {(n, x): z3.Bool(f"{t}_new_{n}_{x}") for n in Nn for x in Nn}
        S["rec"] = {n: z3.Bool(f"{t}_rec_{n}") for n in Nn}
        S["tm"] = z3.Array(f"{t}_tokenMsgs", Tok, z3.BoolSort())
        S["m9"] = z3.Array(f"{t}_msgs911", M9, z3.BoolSort())
        return S

    _node_fields = ("status", "vs", "ts", "lv", "gvlen", "li", "gv", "last", "token", "rec")

    def _frame(self, S, T, upd: dict) -> z3.BoolRef:
        cs = []
        for f in self._node_fields:
            u = upd.get(f, {})
            for n in self.nodes:
                cs.append(T[f][n] == u.get(n, S[f][n]))
        u = upd.get("new", {})
        for k, v in S["new"].items():
            cs.append(T["new"][k] == u.get(k, v))
        for f in ("tm", "m9"):
            cs.append(T[f] == upd.get(f, S[f]))
        return z3.And(*cs)

    def _var(self, name: str, sort):
        self._k += 1
        return z3.Const(f"{name}_{self._k}", sort)

    # --- helpers (the spec's operators) ---------------------------------------------------
    def no_token(self):
        return Tok.tok(0, 0, 0, 0, 0)

    def view_of(self, S, n):
        return z3.If(S["li"][n] == 0, self.init_ring, S["gv"][n][S["li"][n]])

    def queued(self, S, l, n):
        """Queued(l, n): l with n's queued nodes not on it added after n."""
        return self._insert(l, n, {y: z3.And(S["new"][n, y], z3.Not(self.R.member_c(y, l))) for y in self.nodes})

    def claim_ring(self, S, n):
        if self.TokenRingClaim:
            nl = Tok.nl(S["last"][n])
            return z3.If(nl != 0, self.queued(S, nl, n) if self.YieldClaim else nl, self.view_of(S, n))
        return self.view_of(S, n)

    def claim_seq(self, S, n):
        return z3.If(S["rec"][n], 0, Tok.seq(S["last"][n]))

    def call911(self, S, n, seq=None):
        ring = self.claim_ring(S, n)
        return M9.m911(n, n, self.R.next_node(ring, z3.IntVal(n)), ring,
                       self.claim_seq(S, n) if seq is None else seq, YES)

    def status_of(self, S, x):
        return self.R.node_table(x, lambda y: S["status"][y])

    def token_coming(self, S, n):
        m = z3.Const(f"{S['tag']}_tc_{n}", Tok)
        held = [z3.And(S["status"][k] == UP, S["ts"][k] == EATING, self.R.member_c(n, Tok.nl(S["token"][k])))
                for k in self.nodes]
        inflight = z3.Exists([m], z3.And(S["tm"][m], self.R.member_c(n, Tok.nl(m))))
        return z3.Or(*held, inflight)

    def call_waiting(self, S, n):
        """CallWaiting(n): a 911 in flight is addressed to n (Timely911: the
        Eating timeout waits)."""
        x = z3.Const(f"{S['tag']}_cw_{n}", M9)
        return z3.Exists([x], z3.And(S["m9"][x], M9.dest(x) == n))

    def regenerate(self, S, n, x):
        out = [M9.status(x) == YES, S["ts"][n] == STARVING, Tok.nl(S["last"][n]) != 0, z3.Not(S["rec"][n])]
        if self.FreshClaim:
            out.append(M9.seq(x) == self.claim_seq(S, n))
        if self.YieldClaim:
            out.append(M9.nl(x) == self.claim_ring(S, n))
        return z3.And(*out)

    def veto(self, S, n, x):
        c = self.claim_seq(S, n)
        eat = S["ts"][n] == EATING
        if self.YieldClaim:
            eat = z3.Or(eat, S["ts"][n] == HUNGRY)
        return z3.Or(eat, M9.seq(x) < c, z3.And(M9.seq(x) == c, n > M9.orig(x)))

    def _insert(self, l, n, add: dict):
        """InsertAfter(l, n, SortedSeq(add)) for the ring term l, concrete n, and
        add[y] the Bool terms of the set; l unchanged when add is empty."""
        R = self.R
        subsets = [frozenset(c) for k in range(1, self.N + 1) for c in combinations(self.nodes, k)]
        out = l
        for sub in subsets:
            in_sub = z3.And(*[add[y] if y in sub else z3.Not(add[y]) for y in self.nodes])
            val = R.table(l, lambda r, sub=sub: z3.IntVal(
                R.id[InsertAfter(r, n, tuple(sorted(sub)))] if n in r and not (sub & set(r)) else 0))
            out = z3.If(in_sub, val, out)
        return out

    @property
    def ring_lemmas_apply(self) -> bool:
        """The ring lemmas (lemmas.py) are those of FixedRing2: two nodes, both in the
        steady initial ring, every assumption and fix (node 1 the stable
        founder; YieldClaim off, they are not checked with it).  They are
        stated for that size only.  Timely911 may be either: it only adds a
        guard to the Eating timeout (Init unchanged, the relation a subset),
        so an invariant inductive without it stays inductive with it."""
        return (self.N == 2 and self.InitSize == 2 and not self.ColdStart and not self.YieldClaim
                and all(getattr(self, k) for k in self.CONSTS if k not in ("YieldClaim", "Timely911")))

    # --- Init ---------------------------------------------------------------------------
    def init(self, S) -> z3.BoolRef:
        m0 = next(iter(self._model.init()))
        return self.value(S, m0)

    # --- actions -----------------------------------------------------------------------
    def actions(self, S, T):
        for lab, f in self._actions(S, T, None):
            yield lab, f

    def instance(self, S, T, label: Label):
        """The formula of the model's action instance ``label`` (with its
        message, if any, bound to the label's): the edge check of the tests."""
        msg = None
        if label.action in ("TokenReceived", "TokenDeliveryFailure"):
            msg = self._tok_val(label.params[1])
        elif label.action in ("911Received", "911DeliveryFailure"):
            msg = self._m9_val(label.params[1])
        elif label.action == "TokenLoss":
            msg = self._tok_val(label.params[0])
        n = label.params[0] if label.action != "TokenLoss" else None
        fs = [f for lab, f in self._actions(S, T, msg, only=label.action, node=n)
              if n is None or lab.params == (n,)]
        return z3.Or(*fs) if fs else z3.BoolVal(False)

    def _actions(self, S, T, bound, only: str | None = None, node: int | None = None):
        """The action instances (``only``: of that action; ``node``: of that
        node, TokenLoss whatever it is; ``bound``: the message they take)."""
        R, fr, Nn = self.R, self._frame, self.nodes
        want = lambda a: only is None or only == a  # noqa: E731
        at = [n for n in Nn if node is None or n == node]
        tm, m9 = S["tm"], S["m9"]
        for n in at:
            if want("Initialization") and n in self.InitRing:
                t = Tok.tok(self.InitSeq, self.init_ring, n, NextNode(self.InitRing, n), 0)
                yield Label("Initialization", (n,)), z3.And(S["status"][n] == OFF, fr(S, T, {
                    "status": {n: UP}, "vs": {n: CHAOS}, "ts": {n: HUNGRY}, "lv": {n: self.init_ring},
                    "last": {n: t}, "tm": z3.Store(tm, t, True)}))
            if want("TokenReceived"):
                m = bound if bound is not None else self._var(f"{S['tag']}_trm{n}", Tok)
                rest = z3.Store(tm, m, False)
                drop = z3.Or(S["ts"][n] == EATING, Tok.seq(m) <= Tok.seq(S["last"][n]))
                yield Label("TokenReceived", (n,)), z3.And(
                    S["status"][n] == UP, tm[m], Tok.dest(m) == n,
                    z3.If(drop, fr(S, T, {"tm": rest}), self._accept(S, T, n, m, rest)))
            if want("911Received"):
                x = bound if bound is not None else self._var(f"{S['tag']}_r9m{n}", M9)
                rest = z3.Store(m9, x, False)
                # the answers: NO back to the originator, or passed on
                no = M9.m911(M9.orig(x), n, M9.orig(x), M9.nl(x), M9.seq(x), NO)
                fwd = M9.m911(M9.orig(x), n, R.next_node(M9.nl(x), z3.IntVal(n)), M9.nl(x), M9.seq(x),
                              M9.status(x))
                answer = z3.If(self.veto(S, n, x), no, fwd)
                last = S["last"][n]
                regen = {"m9": rest, "token": {n: Tok.tok(Tok.seq(last), Tok.nl(last), n, Tok.dest(last),
                                                          Tok.gvn(last))},
                         "ts": {n: EATING}, "rec": {n: False}}
                own = z3.If(self.regenerate(S, n, x), fr(S, T, regen), fr(S, T, {"m9": rest}))
                member = fr(S, T, {"m9": z3.Store(rest, answer, True)})
                if self.YieldClaim:   # Yields: the claimant queued
                    yields = z3.Not(self.veto(S, n, x))
                    member = fr(S, T, {"m9": z3.Store(rest, answer, True),
                                       "new": {(n, y): z3.Or(S["new"][n, y], z3.And(yields, M9.orig(x) == y))
                                               for y in Nn}})
                higher = (z3.BoolVal(self.TokenRingClaim) and M9.seq(x) > self.claim_seq(S, n))
                outsider = fr(S, T, {"m9": z3.If(higher, z3.Store(rest, answer, True), rest),
                                     "new": {(n, y): z3.Or(S["new"][n, y], M9.orig(x) == y) for y in Nn}})
                yield Label("911Received", (n,)), z3.And(
                    S["status"][n] == UP, m9[x], M9.dest(x) == n,
                    z3.If(M9.orig(x) == n, own, z3.If(R.member(M9.orig(x), self.view_of(S, n)), member, outsider)))
            if want("TokenDeliveryFailure"):
                m = bound if bound is not None else self._var(f"{S['tag']}_tdm{n}", Tok)
                nl = R.remove(Tok.nl(m), Tok.dest(m))
                t = Tok.tok(Tok.seq(m) + 1, nl, Tok.cur(m), R.next_node(nl, z3.IntVal(n)), Tok.gvn(m))
                t1 = Tok.tok(Tok.seq(m) + 1, nl, Tok.cur(m), R.next_node(nl, z3.IntVal(n)), S["gvlen"][n] + 1)
                rest = z3.Store(tm, m, False)
                alone = fr(S, T, {"lv": {n: nl}, "vs": {n: AGREEMENT}, "ts": {n: EATING},
                                  "gv": {n: z3.Store(S["gv"][n], S["gvlen"][n] + 1, nl)},
                                  "gvlen": {n: S["gvlen"][n] + 1}, "li": {n: S["gvlen"][n] + 1},
                                  "last": {n: t1}, "token": {n: t1}, "tm": rest})
                resend = fr(S, T, {"lv": {n: nl}, "vs": {n: CHAOS}, "ts": {n: HUNGRY}, "last": {n: t},
                                   "token": {n: self.no_token()}, "tm": z3.Store(rest, t, True)})
                yield Label("TokenDeliveryFailure", (n,)), z3.And(
                    S["status"][n] == UP, tm[m], Tok.cur(m) == n, self.status_of(S, Tok.dest(m)) != UP,
                    z3.If(nl == R.of((n,)), alone, resend))
            if want("911DeliveryFailure"):
                x = bound if bound is not None else self._var(f"{S['tag']}_d9m{n}", M9)
                x2 = M9.m911(M9.orig(x), M9.cur(x), R.next_node(M9.nl(x), M9.dest(x)), M9.nl(x), M9.seq(x),
                             M9.status(x))
                yield Label("911DeliveryFailure", (n,)), z3.And(
                    S["status"][n] == UP, m9[x], M9.cur(x) == n, self.status_of(S, M9.dest(x)) != UP,
                    fr(S, T, {"m9": z3.Store(z3.Store(m9, x, False), x2, True)}))
            if want("EatingTimeout"):
                t = S["token"][n]
                add = {y: z3.And(S["new"][n, y], z3.Not(R.member_c(y, Tok.nl(t)))) for y in Nn}
                anyadd = z3.Or(*add.values())
                nl = self._insert(Tok.nl(t), n, add)
                base, send = self._pass_on(S, n, nl, z3.If(anyadd, CHAOS, S["vs"][n]))
                timely = [z3.Not(self.call_waiting(S, n))] if self.Timely911 else []
                yield Label("EatingTimeout", (n,)), z3.And(
                    S["status"][n] == UP, S["ts"][n] == EATING, *timely,
                    z3.If(R.length(nl) > 1, fr(S, T, send), fr(S, T, base)))
            for name, st in (("HungryTimeout", HUNGRY), ("StarvingTimeout", STARVING)):
                if not want(name):
                    continue
                g = [S["status"][n] == UP, S["ts"][n] == st]
                if self.TimelyTimeouts:
                    g.append(z3.Not(self.token_coming(S, n)))
                upd = {"m9": z3.Store(m9, self.call911(S, n), True)}
                if st == HUNGRY:
                    upd.update(ts={n: STARVING}, vs={n: CHAOS})
                yield Label(name, (n,)), z3.And(*g, fr(S, T, upd))
        for n in at:
            if want("Crash") and not (self.StableFounder and n == 1):
                m = z3.Const(f"{S['tag']}_cm", Tok)
                x = z3.Const(f"{S['tag']}_cx", M9)
                yield Label("Crash", (n,)), z3.And(S["status"][n] == UP, fr(S, T, {
                    "status": {n: DOWN}, "vs": {n: CHAOS}, "ts": {n: STARVING}, "token": {n: self.no_token()},
                    "tm": z3.Lambda([m], z3.And(tm[m], Tok.cur(m) != n)),
                    "m9": z3.Lambda([x], z3.And(m9[x], M9.cur(x) != n))}))
            if want("Recover"):
                call = self.call911(S, n, seq=0 if self.NeutralRecovery else None)
                yield Label("Recover", (n,)), z3.And(S["status"][n] == DOWN, fr(S, T, {
                    "status": {n: UP}, "ts": {n: STARVING}, "vs": {n: CHAOS},
                    "rec": {n: z3.BoolVal(self.NeutralRecovery)}, "m9": z3.Store(m9, call, True)}))
            if want("Join") and n not in self.InitRing:
                yield Label("Join", (n,)), z3.And(S["status"][n] == OFF, fr(S, T, {
                    "status": {n: UP}, "ts": {n: STARVING}, "vs": {n: CHAOS},
                    "m9": z3.Store(m9, self.call911(S, n), True)}))
        if want("TokenLoss"):
            m = bound if bound is not None else self._var(f"{S['tag']}_tlm", Tok)
            yield Label("TokenLoss", ()), z3.And(tm[m], fr(S, T, {"tm": z3.Store(tm, m, False)}))

    def _pass_on(self, S, n, nl, vs):
        """EatingTimeout(n)'s updates with the new nodelist nl: (kept, the
        token stays: a nodelist of one; sent on, to the node after n).  The
        queued nodes are cleared; vs is n's new view state (None: as is)."""
        t = S["token"][n]
        t2 = Tok.tok(Tok.seq(t) + 1, nl, n, self.R.next_node(nl, z3.IntVal(n)), Tok.gvn(t))
        base = {"new": {(n, y): z3.BoolVal(False) for y in self.nodes}}
        if vs is not None:
            base["vs"] = {n: vs}
        return base, dict(base, last={n: t2}, tm=z3.Store(S["tm"], t2, True), ts={n: HUNGRY},
                          token={n: self.no_token()})

    def _accept(self, S, T, n, m, rest):
        """AcceptToken(n, m) with tokenMsgs' = rest."""
        vs0, lv, gv, ln, li = S["vs"][n], S["lv"][n], S["gv"][n], S["gvlen"][n], S["li"][n]
        same = Tok.nl(m) == lv
        if self.FreshView:
            same = z3.And(same, z3.Not(S["rec"][n]))
        reserve = z3.And(vs0 == CHAOS, same)
        commit = z3.And(vs0 == RESERVE, same)
        vs = z3.If(same, z3.If(vs0 == CHAOS, RESERVE, AGREEMENT), CHAOS)
        gv1 = z3.If(reserve, z3.Store(gv, ln + 1, 0), z3.If(commit, z3.Store(gv, ln, Tok.nl(m)), gv))
        len1 = z3.If(reserve, ln + 1, ln)
        # the ghost: a commit of a non-empty nodelist at the last slot makes it
        # the last non-NULL entry; a NULL written over the last non-NULL entry
        # (an empty nodelist, never reached) leaves it to the LastIndex
        # definition, asserted on the post-state below
        li1 = z3.If(z3.And(commit, Tok.nl(m) != 0), ln, li)
        weird = z3.And(commit, Tok.nl(m) == 0, li == ln, ln > 0)
        tgvn = z3.If(reserve, len1, Tok.gvn(m))
        i = z3.Int(f"{S['tag']}_pad_{n}")
        gv2 = z3.If(tgvn > len1, z3.Lambda([i], z3.If(z3.And(i > len1, i <= tgvn), 0, gv1[i])), gv1)
        len2 = z3.If(tgvn > len1, tgvn, len1)
        li2 = self._var(f"{S['tag']}_li_acc{n}", I)
        f = self._frame(S, T, {
            "tm": rest, "ts": {n: EATING}, "vs": {n: vs}, "gv": {n: gv2}, "gvlen": {n: len2},
            "li": {n: z3.If(weird, li2, li1)}, "lv": {n: Tok.nl(m)},
            "token": {n: Tok.tok(Tok.seq(m), Tok.nl(m), n, Tok.dest(m), tgvn)}, "rec": {n: z3.BoolVal(False)}})
        return z3.And(f, z3.Implies(weird, self._last_index(T, n)))

    # --- LastIndex at one node (lemmas.py; an action reads it too) ----------------------
    def _last_index(self, S, n):
        """li[n] is the index of the last non-NULL entry of globalView[n] (0: none)."""
        j = z3.Int(f"{S['tag']}_lj_{n}")
        li, ln, gv = S["li"][n], S["gvlen"][n], S["gv"][n]
        return z3.And(0 <= li, li <= ln, z3.Implies(li > 0, gv[li] != 0),
                      z3.ForAll([j], z3.Implies(z3.And(li < j, j <= ln), gv[j] == 0), patterns=[gv[j]]))

    # --- the mapping between model states and z3 values ----------------------------------
    def _tok_val(self, t):
        return Tok.tok(t["seq"], self.R.of(t["nodelist"]), t["cur"], t["dest"], t["gvn"])

    def _m9_val(self, x):
        return M9.m911(x["orig"], x["cur"], x["dest"], self.R.of(x["nodelist"]), x["seq"],
                       ST911.index(x["status"]))

    def value(self, S, s: RaincoreState) -> z3.BoolRef:
        R = self.R
        cs = []
        for n in self.nodes:
            i = n - 1
            gv = s.globalView[i]
            lgv = LastGlobalViewOf(gv)
            li = max((k + 1 for k, v in enumerate(gv) if v != ()), default=0)
            assert (li == 0) == (lgv == ())
            cs += [S["status"][n] == STATUS.index(s.status[i]), S["vs"][n] == VIEW.index(s.viewState[i]),
                   S["ts"][n] == TSTATE.index(s.tokenState[i]), S["lv"][n] == R.of(s.localView[i]),
                   S["gvlen"][n] == len(gv), S["li"][n] == li,
                   S["last"][n] == self._tok_val(s.lastToken[i]), S["token"][n] == self._tok_val(s.token[i]),
                   S["rec"][n] == bool(s.recovered[i])]
            cs += [S["gv"][n][k + 1] == R.of(v) for k, v in enumerate(gv)]
            cs += [S["new"][n, x] == (x in s.newNodes[i]) for x in self.nodes]
        tm = z3.K(Tok, z3.BoolVal(False))
        for m in sorted(s.tokenMsgs, key=repr):
            tm = z3.Store(tm, self._tok_val(m), True)
        m9 = z3.K(M9, z3.BoolVal(False))
        for x in sorted(s.msgs911, key=repr):
            m9 = z3.Store(m9, self._m9_val(x), True)
        cs += [S["tm"] == tm, S["m9"] == m9]
        return z3.And(*cs)

    def _ring(self, v: int) -> tuple:
        return self.R.all[v] if 0 <= v < len(self.R.all) else ("?", v)

    def _dec_tok(self, m, t):
        ev = lambda e: m.eval(e, model_completion=True).as_long()  # noqa: E731
        return Token(ev(Tok.seq(t)), self._ring(ev(Tok.nl(t))), ev(Tok.cur(t)), ev(Tok.dest(t)), ev(Tok.gvn(t)))

    def _dec_911(self, m, x):
        ev = lambda e: m.eval(e, model_completion=True).as_long()  # noqa: E731
        st = ev(M9.status(x))
        return Msg911(ev(M9.orig(x)), ev(M9.cur(x)), ev(M9.dest(x)), self._ring(ev(M9.nl(x))), ev(M9.seq(x)),
                      ST911[st] if 0 <= st < 3 else st)

    @staticmethod
    def _int_array(m, arr):
        """An Int -> Int array's model value read once, as a function of the
        index (its stores over a constant default); None when it has another
        shape.  A CTI's global view may be tens of thousands long: read
        entry by entry through z3 it took seconds to decode."""
        v = m.eval(arr, model_completion=True)
        entries: dict = {}
        while z3.is_store(v) and z3.is_int_value(v.arg(1)) and z3.is_int_value(v.arg(2)):
            entries.setdefault(v.arg(1).as_long(), v.arg(2).as_long())   # (the outermost store wins)
            v = v.arg(0)
        if not (z3.is_const_array(v) and z3.is_int_value(v.arg(0))):
            return None
        default = v.arg(0).as_long()
        return lambda k: entries.get(k, default)

    @staticmethod
    def _members(m, arr) -> list:
        """The elements an array's model value maps to True (its Store entries
        and, for an as-array value, its function's entries).  A default of
        True (an infinite set, never reached) is not listed."""
        v = m.eval(arr, model_completion=True)
        entries: dict = {}
        stack = []
        while z3.is_store(v):
            stack.append((v.arg(1), v.arg(2)))
            v = v.arg(0)
        if z3.is_as_array(v):
            fi = m[z3.get_as_array_func(v)]
            for e in fi.as_list()[:-1]:
                entries[e[0].sexpr()] = (e[0], e[1])
        elif z3.is_quantifier(v) and v.is_lambda():
            # a lambda (e.g. Crash's filter): evaluate it at the elements the
            # model's other arrays mention is out of reach; list nothing
            pass
        for k, val in reversed(stack):
            entries[k.sexpr()] = (k, val)
        return [k for k, val in entries.values() if z3.is_true(m.eval(val, model_completion=True))]

    def decode(self, m: z3.ModelRef, S) -> RaincoreState:
        ev = lambda e: m.eval(e, model_completion=True).as_long()  # noqa: E731
        b = lambda e: z3.is_true(m.eval(e, model_completion=True))  # noqa: E731
        Nn = self.nodes
        gvs = []
        for n in Nn:
            ln = ev(S["gvlen"][n])
            at = self._int_array(m, S["gv"][n]) or (lambda k, a=S["gv"][n]: ev(a[k]))
            gvs.append(tuple(self._ring(at(k)) for k in range(1, max(ln, 0) + 1)))
        pick = lambda seq, v: seq[v] if 0 <= v < len(seq) else v  # noqa: E731
        return RaincoreState(
            status=tuple(pick(STATUS, ev(S["status"][n])) for n in Nn),
            viewState=tuple(pick(VIEW, ev(S["vs"][n])) for n in Nn),
            tokenState=tuple(pick(TSTATE, ev(S["ts"][n])) for n in Nn),
            globalView=tuple(gvs),
            lastToken=tuple(self._dec_tok(m, S["last"][n]) for n in Nn),
            localView=tuple(self._ring(ev(S["lv"][n])) for n in Nn),
            newNodes=tuple(frozenset(x for x in Nn if b(S["new"][n, x])) for n in Nn),
            token=tuple(self._dec_tok(m, S["token"][n]) for n in Nn),
            tokenMsgs=frozenset(self._dec_tok(m, t) for t in self._members(m, S["tm"])),
            msgs911=frozenset(self._dec_911(m, x) for x in self._members(m, S["m9"])),
            recovered=tuple(b(S["rec"][n]) for n in Nn),
        )

    def model(self) -> RaincoreModel:
        """The bounded model of the same constants (MaxSeq, Max911, MaxDown kept)."""
        return RaincoreModel(self.c)

    def pretty(self, state) -> dict:
        return {k: repr(v) for k, v in state._asdict().items()}


def manifest_constants(name: str) -> dict:
    """The constants of manifest model ``name`` (spec/Raincore/manifest.json)."""
    from ... import manifest
    return dict(next(e for e in manifest.select(["raincore"], None) if e.name == name).constants())
