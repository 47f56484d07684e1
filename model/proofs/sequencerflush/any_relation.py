"""SEQUENCER over FLUSH (spec/SequencerFlush/SequencerFlush.tla) for every
number of members: without a crash NoDuplicates and SurvivorTotalOrder
(``SequencerFlushAnyEncoding``, AnyNoCrash, below); with one crash
NoDuplicates (``SequencerFlushCrashEncoding``, AnyFixed: its docstring).

Theory of operation
-------------------
Members are the sort ``Node`` of model/proofs/parametric.py; member 1, the
least (``one``), coordinates the first view.  The state is the fixed-N
encoding's (relation.py), same names, as z3 arrays over
``Node``: ``vin[x]`` (x's views, ``Int -> Bool``), ``vid``, ``crashed``,
``sent``, ``phase``, ``blocked``; the received-table ``rdom[m, s]`` (s is
in its domain) and ``rval[m, s]``; ``delivered[m]`` and ``log[m]`` as a
sender array ``dS[m, j]`` / ``lS[m, j]`` (``Node``), a seqno array and a
length; ``flushInit`` the relation ``fi[p, c]``; the channel from a to b
(parametric.Channels) with the fields ``ty``, ``snd``, ``seq``, ``view``.

The variant is the manifest's Fixed one (UniformDelivery, ResendAlways,
ResentFirst FALSE, every member a sender, MaxSeq dropped) with
``MaxCrashes = 0``.  Without a crash no view change is pending, so no
flush starts: the lemma Quiet says so, and the actions that need a flush
under way (or a crash) are kept as a **guard alone** (one conjunct of the
spec's guard, any successor): StartFlush (ViewChangePending), Block,
RestartFlush, ReceiveFlushOk, ReceiveFlushCompleted, InstallView, Unblock
(the head's type), FlushOk, FlushCompleted (the phase), SendView and
StopFlush (``flushInit[c] = c``).  A weaker guard and any successor allow
more steps than the spec, so an invariant of this relation is one of the
spec; the lemmas refute each such guard, so its consecution queries ask
nothing of its successor.  DeliverStable (UniformDelivery FALSE) and Crash
(``MaxCrashes = 0``) take no step.  The variables only those actions read
or write (``fwd``, ``closed``, ``flushOks``, ``completed``, ``ndel``, the
digests of messages) are left out: no kept action reads them.  Send,
RecvForward, RecvData and Discard are the spec's, guards and successors.

Fragment: the senders of log, delivered and channel entries are functions
from positions into ``Node`` (``lS[one, j]``), and a received-table is read
at one (``rval[m, lS[one, j]]``): outside EPR.  Every query is asked first
as written, under z3's resource limit (``first_query``); the grounded form
(parametric.ground, the members of the query's constants) is the fallback,
whose unsat answers hold all the same.  IsCoord's ``\\A y`` is a positive
guard (Send and RecvForward of a coordinator); its negation is a witness
constant (RecvForward of a member that is not).
"""

from __future__ import annotations

from typing import Any
import z3
from ...core import Label
from ...sequencerflush import SequencerFlushModel, SequencerFlushState
from ...values import Fn
from ..prover import multipattern, readers
from ..parametric import (Channels, IdSet, Node, PyOps, SortEncoding, Table, le, members_of, node, one, row,
                         universe, update)
from ..flush.any_relation import FlushSteps
from ..flush.relation import decoded_msg, decoded_phase, stale
from .relation import FLUSH_TY, PH, TY, TYPES, TYPES_F

I = z3.IntSort()
B = z3.BoolSort()
SET = z3.ArraySort(I, B)
NORMAL, COMPLETED = PH["Normal"], PH["Completed"]
FORWARD, DATA = TY["FORWARD"], TY["DATA"]


INBLOCK, OKSENT = PH["InBlock"], PH["OkSent"]
VIEW, START, FLUSH_OK, FC, STOP = (TY[t] for t in ("VIEW", "START_FLUSH", "FLUSH_OK", "FLUSH_COMPLETED", "STOP_FLUSH"))


class SequencerFlushAnyRelation(FlushSteps, Channels, SortEncoding):
    """SEQUENCER over FLUSH without a crash, for every N (the module's
    docstring; docs/proofs.md, "SEQUENCER over FLUSH")."""

    protocol = "sequencerflush"
    properties = ("NoDuplicates", "SurvivorTotalOrder")
    # every query under z3's deterministic resource limit, none under a
    # wall-clock time-out (engine._solver): the same answers on every run
    rlimit = 20_000_000
    # z3's own instantiation first, briefly (the senders are terms, not
    # constants: E-matching instantiates the lemmas at them, grounding does
    # not), then the grounded query.  Every query was proved with 0.5, 2
    # and 10 million units here, alone, in a shard and in the matrix; the
    # larger limits cost 6 and 13 s of z3 CPU instead of 3
    first_rlimit = 500_000
    # one conjunct of a lemma at a time (engine.Encoding.split_goals):
    # Sequence whole gave up (20 million units) on Send, RecvForward and
    # RecvData; each conjunct is proved in well under a second
    split_goals = True
    # Send and RecvForward are two instances each (as coordinator or not):
    # one query per instance (engine.Encoding.split_instances), its frame
    # solved away; on their disjunction Sequence's conjuncts gave up
    split_instances = True
    max_crashes = 0
    VIEWS, VIEW, TYPE = "vin", "view", TY     # (flush.FlushSteps: FLUSH's steps on this state)

    def __init__(self, *, variant: str = "AnyNoCrash", reach: dict | None = None) -> None:
        self.variant = variant
        self.expect_cti = False
        # the bounded model a CTI is looked up in (its N, senders, MaxSeq)
        self.reach = {"N": 3, "MaxSeq": 1, "MaxCrashes": self.max_crashes, "Senders": frozenset({1, 2, 3}),
                      "UniformDelivery": False, "ResendAlways": False, "ResentFirst": False, **(reach or {})}
        r = self.reach
        if r["MaxCrashes"] != self.max_crashes or r["UniformDelivery"] or r["ResendAlways"] or r["ResentFirst"]:
            raise ValueError(f"sequencerflush for every N ({variant}): MaxCrashes = {self.max_crashes}, "
                             "UniformDelivery, ResendAlways and ResentFirst FALSE")

    @classmethod
    def from_constants(cls, c: dict) -> "SequencerFlushAnyRelation":
        """The encoding whose lemmas are checked on a manifest model's
        constants (MaxCrashes must be the variant's)."""
        return cls(reach=dict(c))

    def model(self) -> SequencerFlushModel:
        return SequencerFlushModel(self.reach)

    def fits(self, state) -> bool:
        return len(state.vid) == self.reach["N"]

    def bounded(self, S):
        """The classifying model's domain: its N members (the sort pinned),
        its senders' MaxSeq, channels and sequences no longer than every
        multicast."""
        r = self.reach
        N, total = r["N"], r["N"] * r["MaxSeq"]
        n = [node(i) for i in range(1, N + 1)]
        return z3.And(universe(N), *[S["sent"][n[i - 1]] <= (r["MaxSeq"] if i in r["Senders"] else 0)
                                     for i in range(1, N + 1)],
                      *[z3.And(S["dL"][x] <= total, S["lL"][x] <= total) for x in n],
                      *[S["tl"][x, y] - S["hd"][x, y] <= total for x in n for y in n])

    # --- state ------------------------------------------------------------------
    _shape = {"nv": ((), I), "vin": ((Node,), SET), "vid": ((Node,), I), "crashed": ((Node,), B),
              "sent": ((Node,), I), "rdom": ((Node, Node), B), "rval": ((Node, Node), I),
              "dS": ((Node, I), Node), "dQ": ((Node, I), I), "dL": ((Node,), I),
              "lS": ((Node, I), Node), "lQ": ((Node, I), I), "lL": ((Node,), I),
              "phase": ((Node,), I), "blocked": ((Node,), B), "fi": ((Node, Node), B),
              "hd": ((Node, Node), I), "tl": ((Node, Node), I),
              "ty": ((Node, Node, I), I), "snd": ((Node, Node, I), Node), "seq": ((Node, Node, I), I),
              "view": ((Node, Node, I), I)}

    def init(self, S) -> z3.BoolRef:
        a, b = z3.Consts("ia ib", Node)
        return z3.And(
            S["nv"] == 1, z3.ForAll([a], S["vin"][a][1]), S["vid"] == z3.K(Node, z3.IntVal(1)),
            S["crashed"] == z3.K(Node, z3.BoolVal(False)), S["sent"] == z3.K(Node, z3.IntVal(0)),
            S["rdom"] == z3.Lambda([a, b], z3.BoolVal(True)), S["rval"] == z3.Lambda([a, b], z3.IntVal(0)),
            S["dL"] == z3.K(Node, z3.IntVal(0)), S["lL"] == z3.K(Node, z3.IntVal(0)),
            S["phase"] == z3.K(Node, z3.IntVal(NORMAL)), S["blocked"] == z3.K(Node, z3.BoolVal(False)),
            S["fi"] == z3.Lambda([a, b], z3.BoolVal(False)),
            S["hd"] == z3.Lambda([a, b], z3.IntVal(0)), S["tl"] == z3.Lambda([a, b], z3.IntVal(0)))

    # --- the spec's operators -----------------------------------------------------
    @staticmethod
    def coord(S, c, v):
        """c = Coord(views[v]): c is the least member of view v."""
        return SequencerFlushAnyRelation.least(c, lambda y: S["vin"][y][v], "cy")

    @staticmethod
    def least(c, inview, name="ly"):
        """c is the least member of the set ``inview`` (Coord, IsInitiator):
        a positive guard, its \\A y (named ``name``) a quantifier z3
        instantiates.  Its instance at ``one`` with the order axioms (``one``
        least, antisymmetry) is stated too: if ``one`` is in the set, c is
        ``one``.  Left to z3 (it follows), one query of AnyNoCrash's matrix
        ended unknown and the rest took 9 s of z3 CPU instead of 3."""
        y = z3.Const(name, Node)
        return z3.And(inview(c), z3.Implies(inview(one), c == one),
                      z3.ForAll([y], z3.Implies(inview(y), le(c, y))))

    def mcast(self, S, c, s, q) -> dict:
        """McastData(chan, c, s, q): DATA <<s, q>> of c's view to every live
        member of it, c included."""
        v = S["vid"][c]
        return self.send(S, c, lambda r: z3.And(S["vin"][r][v], self.alive(S, r)),
                         {"ty": DATA, "snd": s, "seq": q, "view": v}, loopback=True)

    @staticmethod
    def logged(S, c, s, q) -> dict:
        """log[c] with <<s, q>> appended."""
        n = S["lL"][c] + 1
        return {"lS": z3.Store(S["lS"], c, n, s), "lQ": z3.Store(S["lQ"], c, n, q),
                "lL": z3.Store(S["lL"], c, n)}

    # --- actions ----------------------------------------------------------------
    def actions(self, S, T):
        yield from self.sequencer_actions(S, T)
        yield from self.flush_actions(S, T)

    def sequenced(self, S, s, q) -> dict:
        """Ghost updates when a coordinator sequences <<s, q>> from a FORWARD
        (none here)."""
        return {}

    def sequencer_actions(self, S, T):
        """Send, RecvForward, RecvData and Discard: the spec's guards and
        successors."""
        fr, P = self._frame, self.params
        hd = lambda p, q, f: self.head(S, p, q, f)  # noqa: E731

        # Send(m): as coordinator of its view, or forwarding to the coordinator c
        m, = P("Send", "m")
        q = S["sent"][m] + 1
        sent = {"sent": z3.Store(S["sent"], m, q)}
        yield Label("Send", ("m",)), z3.And(
            self.alive(S, m), z3.Not(S["blocked"][m]), self.coord(S, m, S["vid"][m]),
            fr(S, T, {**sent, **self.mcast(S, m, m, q), **self.logged(S, m, m, q)}))
        m, c = P("SendTo", "mc")
        q = S["sent"][m] + 1
        yield Label("Send", ("m",)), z3.And(
            self.alive(S, m), z3.Not(S["blocked"][m]), c != m, self.coord(S, c, S["vid"][m]),
            fr(S, T, {"sent": z3.Store(S["sent"], m, q),
                      **self.send(S, m, lambda b: z3.And(b == c, self.alive(S, c)),
                                  {"ty": FORWARD, "snd": m, "seq": q})}))

        # RecvForward(c, p): as coordinator (multicast and log), or dropped (w: a
        # member of c's view below c, if c is in its view)
        c, p = P("RecvForward", "cp")
        g = [self.alive(S, c), self.has(S, c, p), hd(c, p, "ty") == FORWARD]
        s, q = hd(c, p, "snd"), hd(c, p, "seq")
        yield Label("RecvForward", ("c", "p")), z3.And(
            *g, self.coord(S, c, S["vid"][c]),
            fr(S, T, {**self.take(S, c, p), **self.mcast(S, c, s, q), **self.logged(S, c, s, q),
                      **self.sequenced(S, s, q)}))
        c, p, w = P("RecvForwardDrop", "cpw")
        v = S["vid"][c]
        yield Label("RecvForward", ("c", "p")), z3.And(
            self.alive(S, c), self.has(S, c, p), hd(c, p, "ty") == FORWARD,
            z3.Or(z3.Not(S["vin"][c][v]), z3.And(S["vin"][w][v], z3.Not(le(c, w)))), fr(S, T, self.take(S, c, p)))

        # RecvData(m, p): logs it (if p # m) and takes it through the duplicate check
        m, p = P("RecvData", "mp")
        s, q = hd(m, p, "snd"), hd(m, p, "seq")
        dup = z3.And(S["rdom"][m, s], q <= S["rval"][m, s])
        n = S["lL"][m] + 1
        upd = {**self.take(S, m, p),
               "lS": z3.If(p != m, z3.Store(S["lS"], m, n, s), S["lS"]),
               "lQ": z3.If(p != m, z3.Store(S["lQ"], m, n, q), S["lQ"]),
               "lL": z3.If(p != m, z3.Store(S["lL"], m, n), S["lL"]),
               "rdom": z3.Store(S["rdom"], m, s, True),
               "rval": z3.Store(S["rval"], m, s, z3.If(dup, S["rval"][m, s], q))}
        k = S["dL"][m] + 1
        upd.update({"dS": z3.If(dup, S["dS"], z3.Store(S["dS"], m, k, s)),
                    "dQ": z3.If(dup, S["dQ"], z3.Store(S["dQ"], m, k, q)),
                    "dL": z3.If(dup, S["dL"], z3.Store(S["dL"], m, k))})
        yield Label("RecvData", ("m", "p")), z3.And(
            self.alive(S, m), self.has(S, m, p), hd(m, p, "ty") == DATA, hd(m, p, "view") == S["vid"][m],
            S["phase"][m] != COMPLETED, fr(S, T, upd))

        # Discard(p, q): a stale message (F!Stale)
        p, q = P("Discard", "pq")
        ty = hd(p, q, "ty")
        yield Label("Discard", ("p", "q")), z3.And(self.alive(S, p), self.has(S, p, q), ty != FORWARD, stale(
            ty, hd(p, q, "view"), S["vid"][p], S["crashed"][q], S["phase"][p] == COMPLETED, TYPES_F),
                                                   fr(S, T, self.take(S, p, q)))

    def flush_actions(self, S, T):
        """The flush without a crash: a guard alone, any successor (the
        module's docstring)."""
        hd, P = (lambda p, q, f: self.head(S, p, q, f)), self.params  # noqa: E731
        c, x = P("StartFlush", "cx")
        yield Label("StartFlush", ("c",)), z3.And(S["vin"][x][S["nv"]], S["crashed"][x])
        for action, ty in (("Block", "START_FLUSH"), ("RestartFlush", "START_FLUSH"),
                           ("ReceiveFlushOk", "FLUSH_OK"), ("ReceiveFlushCompleted", "FLUSH_COMPLETED"),
                           ("InstallView", "VIEW"), ("Unblock", "STOP_FLUSH")):
            p, c = P(action, "pc")
            yield Label(action, ("p", "c")), z3.And(self.has(S, p, c), hd(p, c, "ty") == TY[ty])
        for action, ph in (("FlushOk", "InBlock"), ("FlushCompleted", "OkSent")):
            p, = P(action, "p")
            yield Label(action, ("p",)), S["phase"][p] == PH[ph]
        for action in ("SendView", "StopFlush"):
            c, = P(action, "c")
            yield Label(action, ("c",)), S["fi"][c, c]

    # --- explorer states ------------------------------------------------------------
    def py_state(self, s: SequencerFlushState) -> dict[str, Any]:
        """An N-member explorer state as Python tables (PyOps): a lemma
        evaluated on it is the lemma instantiated at N."""
        N = len(s.vid)
        M = range(1, N + 1)
        S: dict[str, Any] = {"o": PyOps(N), "nv": len(s.views)}
        S["vin"] = Table(((x, IdSet(i for i, v in enumerate(s.views, 1) if x in v)) for x in M), IdSet())
        for f in ("vid", "sent", "blocked"):
            S[f] = Table((m, getattr(s, f)[m]) for m in M)
        S["crashed"] = Table(((m, m in s.crashed) for m in M), False)
        # (a decoded CTI may hold a phase outside the spec's, "?k")
        S["phase"] = Table((m, PH.get(s.phase[m]) if s.phase[m] in PH else int(s.phase[m][1:])) for m in M)
        S["fi"] = Table((((p, c), s.flushInit[p] == c) for p in M for c in M), False)
        S["rdom"] = Table((((m, x), x in s.recv[m]) for m in M for x in M), False)
        S["rval"] = Table(((m, x), s.recv[m][x]) for m in M for x in s.recv[m])
        for f, of in (("d", s.delivered), ("l", s.log)):
            S[f + "S"] = Table(((m, j), e[0]) for m in M for j, e in enumerate(of[m], 1))
            S[f + "Q"] = Table(((m, j), e[1]) for m in M for j, e in enumerate(of[m], 1))
            S[f + "L"] = Table((m, len(of[m])) for m in M)
        self.channel_tables(S, s.chan, M, {"ty": ("type", lambda t: TY[t] if t in TY else int(t[1:])),
                                           "snd": ("sender", None), "seq": ("seqno", None), "view": ("view", None)})
        return S

    def value(self, S, s: SequencerFlushState) -> z3.BoolRef:
        """s as z3 equalities, the sort pinned to s's members; each channel's
        head is free (its messages from there on)."""
        P = self.py_state(s)
        N = len(s.vid)
        n = {i: node(i) for i in range(1, N + 1)}
        cs = [universe(N), S["nv"] == P["nv"]]
        for x in n:
            cs += [S["vin"][n[x]][i] == P["vin"][x][i] for i in range(1, P["nv"] + 1)]
            cs += [S[f][n[x]] == P[f][x] for f in ("vid", "sent", "blocked", "crashed", "phase", "dL", "lL")]
            for f in ("d", "l"):
                for j in range(1, P[f + "L"][x] + 1):
                    cs.append(S[f + "Q"][n[x], j] == P[f + "Q"][x, j])
                    if P[f + "S"][x, j] in n:     # (a decoded CTI's sender may be no member: 0)
                        cs.append(S[f + "S"][n[x], j] == n[P[f + "S"][x, j]])
            for y in n:
                cs += [S["fi"][n[x], n[y]] == P["fi"][x, y], S["rdom"][n[x], n[y]] == P["rdom"][x, y]]
                if P["rdom"][x, y]:
                    cs.append(S["rval"][n[x], n[y]] == P["rval"][x, y])
                # (a decoded CTI's sender may be no member: 0, no equality)
                cs += self.channel_value(S, P, n, x, y, {"ty": None, "seq": None, "snd": n.get, "view": None})
        return z3.And(*cs)

    DECODE_CAP = 16

    def decoded_fields(self, S, key, n, who) -> dict:
        """A decoded message's fields beyond sender, seqno and view, each a
        function reading it (none: this encoding keeps no digest)."""
        return {}

    @staticmethod
    def forward_table(chan, m) -> frozenset:
        """fwd[m], which the encoding leaves out, as it is in every reachable
        state without a crash: the seqnos of m's FORWARDs on their way to
        member 1 and of its DATA on their way back from 1 (RecvData removes
        them); member 1 forwards nothing.  A decoded state carries it, so
        that the explorer can find it."""
        return frozenset(x["seqno"] for e in ((m, 1), (1, m)) if m != 1 for x in chan.get(e, ())
                         if x["type"] in ("FORWARD", "DATA") and x.get("sender") == m)

    @staticmethod
    def named_members(m: z3.ModelRef) -> tuple[dict, dict]:
        """The members some constant of the query names, as 1..N in ``le``
        order (outside EPR a grounded model is a model on those alone; the
        rest of its universe is whatever z3 left there): i -> element, and
        an element's sexpr -> i."""
        named = {m.eval(d(), model_completion=True).sexpr() for d in m.decls()
                 if d.arity() == 0 and d.range() == Node}
        u = dict(enumerate([e for e in members_of(m) if e.sexpr() in named] or members_of(m), 1))
        return u, {e.sexpr(): i for i, e in u.items()}

    def decode(self, m: z3.ModelRef, S) -> SequencerFlushState:
        """The state of a z3 model, its named members read as 1..N (at most
        DECODE_CAP views, entries and messages per channel); of the
        variables the encoding leaves out, fwd as ``forward_table`` says,
        the others as they are without a view change (empty, 0)."""
        u, num = self.named_members(m)
        M = range(1, len(u) + 1)
        ev, b, n = readers(m)
        who = lambda e: num.get(ev(e).sexpr(), 0)  # noqa: E731
        cap = self.DECODE_CAP
        bound = lambda e: min(max(n(e), 0), cap)  # noqa: E731
        seq = lambda A, Q, L, x: tuple((who(A[u[x], j]), n(Q[u[x], j])) for j in range(1, bound(L[u[x]]) + 1))  # noqa: E731
        chan = self.decoded_channels(S, u, M, n, cap, lambda key: decoded_msg(TYPES, n(S["ty"][key]), {
            "sender": lambda: who(S["snd"][key]), "seqno": lambda: n(S["seq"][key]),
            "view": lambda: n(S["view"][key]), **self.decoded_fields(S, key, n, who)}))
        nv = bound(S["nv"])
        return SequencerFlushState(
            views=tuple(tuple(x for x in M if b(S["vin"][u[x]][i])) for i in range(1, nv + 1)),
            vid=Fn((x, n(S["vid"][u[x]])) for x in M),
            crashed=frozenset(x for x in M if b(S["crashed"][u[x]])),
            sent=Fn((x, n(S["sent"][u[x]])) for x in M),
            fwd=Fn((x, self.forward_table(chan, x)) for x in M),
            recv=Fn((x, Fn((y, n(S["rval"][u[x], u[y]])) for y in M if b(S["rdom"][u[x], u[y]]))) for x in M),
            delivered=Fn((x, seq(S["dS"], S["dQ"], S["dL"], x)) for x in M),
            chan=Fn(chan),
            log=Fn((x, seq(S["lS"], S["lQ"], S["lL"], x)) for x in M),
            closed=Fn((x, ()) for x in M),
            phase=Fn((x, decoded_phase(n(S["phase"][u[x]]))) for x in M),
            blocked=Fn((x, b(S["blocked"][u[x]])) for x in M),
            flushInit=Fn((x, next((c for c in M if b(S["fi"][u[x], u[c]])), 0)) for x in M),
            flushOks=Fn((x, frozenset()) for x in M),
            completed=Fn((x, frozenset()) for x in M),
            ndel=Fn((x, 0) for x in M))


    # the instances of each action the model's labels name, and their parameters
    _pins = {"Send": (("Send", "m"), ("SendTo", "m")), "RecvForward": (("RecvForward", "cp"), ("RecvForwardDrop", "cp")),
             "RecvData": (("RecvData", "mp"),), "Discard": (("Discard", "pq"),)}

    def pin(self, label: Label) -> z3.BoolRef:
        """The parameters of the action's instances bound to the members a
        model label names (the exact actions: those a run without a crash takes)."""
        return z3.And(*[c == node(i) for prefix, names in self._pins[label.action]
                        for c, i in zip(self.params(prefix, names), label.params)])


class SequencerFlushCrashRelation(SequencerFlushAnyRelation):
    """SEQUENCER over FLUSH with one crash, for every N: NoDuplicates
    (docs/proofs.md, "SEQUENCER over FLUSH", "Every N").

    The state is AnyNoCrash's and: the VIEW's and FLUSH_COMPLETED's digest
    on each message (``gS``, ``gQ`` at index 1..``gL``), ``completed`` as a
    record ``rd[c, q]`` with its digest (``rS``, ``rQ``, ``rL``: one per q,
    which the lemma Msgs makes exact: a FLUSH_COMPLETED is on its way only
    while its initiator holds no record of its sender), and two ghosts:
    ``ini``, the least live member (the flush initiator), and ``fs[s]``,
    the highest seqno of s member 1 has sequenced.  ``fwd``, ``closed``,
    ``flushOks`` and ``ndel`` are left out (no kept guard reads them).

    Every action is the spec's but for these, each allowing more steps
    than the spec's (so an invariant of this relation is one of the
    spec's), in the states the lemmas allow:

    * Absorb (the VIEW's digest through the duplicate check) is the facts
      of it with a full received-table (which Tables gives at a view
      change): the new deliveries of a sender are increasing, above its
      old table value and at most its new one, which is the old one or an
      entry of the digest;
    * Purged and a crash's cuts are any order-preserving subsequence of
      the messages the spec keeps (parametric.Channels.subsequence), so
      LastView and the crash's set ``lost`` are not needed;
    * Resend (a new coordinator) appends any number of FORWARDs of the
      member, with any seqnos;
    * SendView's Longest is any live record; FlushCompleted does not wait
      for the FLUSH_OKs; RestartFlush is its guard alone (refuted: a
      START_FLUSH finds its receiver in phase Normal).

    Fragment: AnyNoCrash's, and the initiator and the coordinators of the
    views are constants with positive \\A guards; ``ini`` is a constant of
    the state, so every lemma is universal (no \\E nested in a \\A).
    """

    properties = ("NoDuplicates",)
    max_crashes = 1
    ground_terms = True
    # z3's own instantiation in a context of its own (engine.Encoding.
    # first_fresh): in the process's context z3 5.4.1 crashed (a
    # segmentation fault in model-based instantiation's model checker) on
    # RecvData x NoDuplicates' first attempt once one more term had been
    # made before it (an import); in a context of its own the attempt is
    # the same whatever the process made before, and proves what it proved
    first_fresh = True
    _shape = {**SequencerFlushAnyRelation._shape, "ini": ((), Node), "fs": ((Node,), I),
              "gS": ((Node, Node, I, I), Node), "gQ": ((Node, Node, I, I), I), "gL": ((Node, Node, I), I),
              "rd": ((Node, Node), B), "rS": ((Node, Node, I), Node), "rQ": ((Node, Node, I), I),
              "rL": ((Node, Node), I)}
    CHAN, DIGEST = ("ty", "snd", "seq", "view", "gL"), ("gS", "gQ")

    def __init__(self, *, variant: str = "AnyFixed", reach: dict | None = None) -> None:
        super().__init__(variant=variant, reach=reach)

    def init(self, S) -> z3.BoolRef:
        a, b = z3.Consts("ja jb", Node)
        return z3.And(super().init(S), S["ini"] == one, S["fs"] == z3.K(Node, z3.IntVal(0)),
                      S["rd"] == z3.Lambda([a, b], z3.BoolVal(False)))

    def sequenced(self, S, s, q) -> dict:
        return {"fs": z3.Store(S["fs"], s, q)}

    # --- the spec's operators -----------------------------------------------------
    def flush_msg(self, S, p, c, ty) -> z3.BoolRef:
        """Alive(p) /\\ HasMsg(p, c) /\\ In(p, c).type = ty /\\ In(p, c).view = vid[p]."""
        return z3.And(self.alive(S, p), self.has(S, p, c), self.head(S, p, c, "ty") == ty,
                      self.head(S, p, c, "view") == S["vid"][p])

    @staticmethod
    def log_of(S, p):
        return (lambda i: S["lS"][p, i]), (lambda i: S["lQ"][p, i]), S["lL"][p]

    @staticmethod
    def recorded(S, c, q, D) -> dict:
        """completed[c] holding <<q, D>> (D: sender and seqno at index i, length)."""
        DS, DQ, DL = D
        at = lambda a, b, i: z3.And(a == c, b == q)  # noqa: E731
        return {"rd": z3.Store(S["rd"], c, q, True), "rL": z3.Store(S["rL"], c, q, DL),
                "rS": update(S["rS"], at, lambda a, b, i: DS(i)), "rQ": update(S["rQ"], at, lambda a, b, i: DQ(i))}

    def send_digest(self, S, p, R, ty, v, D) -> dict:
        DS, DQ, DL = D
        return self.send(S, p, R, {"ty": ty, "view": v, "gL": DL}, seqs={"gS": DS, "gQ": DQ})

    @staticmethod
    def absorbed(S, m, D, tag: str):
        """Absorb(m, Tables(m), D) as the relation of the class docstring:
        (updates, constraints)."""
        DS, DQ, DL = D
        nS, nQ = z3.Array(f"{tag}_nS", I, Node), z3.Array(f"{tag}_nQ", I, I)
        nr, w = z3.Array(f"{tag}_nr", Node, I), z3.Array(f"{tag}_w", Node, I)
        nL = z3.Int(f"{tag}_nL")
        s = z3.Const(f"{tag}_s", Node)
        j, j2 = z3.Ints(f"{tag}_j {tag}_j2")
        dL = S["dL"][m]
        rv = lambda x: S["rval"][m, x]  # noqa: E731
        new = lambda j: z3.And(dL < j, j <= nL)  # noqa: E731
        cons = z3.And(
            nL >= dL,
            z3.ForAll([s], z3.And(nr[s] >= rv(s), z3.Or(nr[s] == rv(s), z3.And(
                1 <= w[s], w[s] <= DL, DS(w[s]) == s, DQ(w[s]) == nr[s])))),
            z3.ForAll([j], z3.Implies(new(j), z3.And(nQ[j] > rv(nS[j]), nQ[j] <= nr[nS[j]])), patterns=[nS[j]]),
            z3.ForAll([j, j2], z3.Implies(z3.And(new(j), new(j2), j < j2, nS[j] == nS[j2]), nQ[j] < nQ[j2]),
                      patterns=[multipattern(nS[j], nS[j2])]))
        at = lambda x, j: z3.And(x == m, dL < j)  # noqa: E731
        return {"dS": update(S["dS"], at, lambda x, j: nS[j]), "dQ": update(S["dQ"], at, lambda x, j: nQ[j]),
                "dL": z3.Store(S["dL"], m, nL), "rval": row(S["rval"], m, lambda x: nr[x])}, cons

    def moved(self, S, m, in_new, D, tag: str, oc, nc):
        """Moved(m, new, D, ch), S's channels being ch: Absorb, the table
        restricted to the new view (``in_new``), the log emptied, the
        channels into m purged, and m's forward-table re-sent to nc (any
        FORWARDs of m) when the coordinator oc of m's view is not nc and nc
        lives: (updates, constraints)."""
        upd, cons = self.absorbed(S, m, D, tag)
        upd["rdom"] = row(S["rdom"], m, lambda x: z3.And(S["rdom"][m, x], in_new(x)))
        upd["lL"] = z3.Store(S["lL"], m, 0)
        v = S["vid"][m]
        ch, kept = self.subsequence(S, f"{tag}_pu", lambda a, b: b == m,
                                    lambda a, b, k: z3.Or(S["ty"][a, b, k] == FORWARD, S["view"][a, b, k] > v),
                                    self.CHAN, self.DIGEST)
        W = {**S, **ch}
        r, rs = z3.Int(f"{tag}_r"), z3.Array(f"{tag}_rs", I, I)
        at = lambda a, b: z3.And(a == m, b == nc)  # noqa: E731
        new = lambda a, b, k: z3.And(at(a, b), W["tl"][a, b] <= k, k < W["tl"][a, b] + r)  # noqa: E731
        again = z3.And(oc != nc, self.alive(S, nc))
        resent = {"tl": update(W["tl"], at, lambda a, b: W["tl"][a, b] + r),
                  "ty": update(W["ty"], new, lambda a, b, k: z3.IntVal(FORWARD)),
                  "snd": update(W["snd"], new, lambda a, b, k: m),
                  "seq": update(W["seq"], new, lambda a, b, k: rs[k - W["tl"][a, b]])}
        for f, x in resent.items():
            ch[f] = z3.If(again, x, W[f])
        return {**upd, **ch}, z3.And(cons, kept, r >= 0)

    # --- actions ----------------------------------------------------------------
    def flush_actions(self, S, T):
        fr, P, tag = self._frame, self.params, T["tag"]
        alive = lambda x: self.alive(S, x)  # noqa: E731
        hd = lambda p, q, f: self.head(S, p, q, f)  # noqa: E731
        ph, fi, vid, nv = S["phase"], S["fi"], S["vid"], S["nv"]

        c, x = P("StartFlush", "cx")
        v = vid[c]
        yield Label("StartFlush", ("c",)), z3.And(
            alive(c), v == nv, self.least(c, lambda y: z3.And(S["vin"][y][nv], alive(y))),
            S["vin"][x][nv], S["crashed"][x], z3.Not(fi[c, c]),
            fr(S, T, {**self.start_step(S, c), **self.recorded(S, c, c, self.log_of(S, c)),
                      "rd": row(S["rd"], c, lambda y: z3.And(y == c, ph[c] == COMPLETED))}))
        p, c = P("Block", "pc")
        yield Label("Block", ("p", "c")), z3.And(
            alive(c), self.flush_msg(S, p, c, START), ph[p] == NORMAL,
            fr(S, T, self.block_step(S, p, c)))
        p, c = P("RestartFlush", "pc")
        yield Label("RestartFlush", ("p", "c")), z3.And(alive(c), self.flush_msg(S, p, c, START), ph[p] != NORMAL)
        p, = P("FlushOk", "p")
        yield Label("FlushOk", ("p",)), z3.And(alive(p), ph[p] == INBLOCK, fr(S, T, self.ok_step(S, p)))
        p, q = P("ReceiveFlushOk", "pq")
        yield Label("ReceiveFlushOk", ("p", "q")), z3.And(
            alive(q), self.flush_msg(S, p, q, FLUSH_OK), fr(S, T, self.take(S, p, q)))
        # FlushCompleted(p): as initiator (its record), to its initiator c, or with none
        done = lambda p: {"phase": z3.Store(ph, p, COMPLETED), "blocked": z3.Store(S["blocked"], p, True)}  # noqa: E731
        p, = P("FlushCompletedSelf", "p")
        yield Label("FlushCompleted", ("p",)), z3.And(
            alive(p), ph[p] == OKSENT, fi[p, p], fr(S, T, {**done(p), **self.recorded(S, p, p, self.log_of(S, p))}))
        p, c = P("FlushCompletedTo", "pc")
        yield Label("FlushCompleted", ("p",)), z3.And(
            alive(p), ph[p] == OKSENT, fi[p, c], c != p,
            fr(S, T, {**done(p), **self.send_digest(S, p, lambda b: z3.And(b == c, alive(c)), FC, vid[p],
                                                    self.log_of(S, p))}))
        p, = P("FlushCompletedNone", "p")
        y = z3.Const("fcy", Node)
        yield Label("FlushCompleted", ("p",)), z3.And(
            alive(p), ph[p] == OKSENT, z3.ForAll([y], z3.Not(fi[p, y])), fr(S, T, done(p)))
        c, q = P("ReceiveFlushCompleted", "cq")
        h = S["hd"][q, c]
        yield Label("ReceiveFlushCompleted", ("c", "q")), z3.And(
            alive(q), self.flush_msg(S, c, q, FC),
            fr(S, T, {**self.take(S, c, q), **self.recorded(S, c, q, (
                lambda i: S["gS"][q, c, h, i], lambda i: S["gQ"][q, c, h, i], S["gL"][q, c, h]))}))

        # SendView(c): the view of the live members of c's, D the record of a live w
        c, w, oc, nc = P("SendView", "cwon")
        v = vid[c]
        in_new = lambda y: z3.And(S["vin"][y][v], alive(y))  # noqa: E731
        y = z3.Const("svy", Node)
        D = (lambda i: S["rS"][c, w, i]), (lambda i: S["rQ"][c, w, i]), S["rL"][c, w]
        ch = self.send_digest(S, c, in_new, VIEW, v, D)
        mv, cons = self.moved({**S, **ch}, c, in_new, D, f"{tag}_sv", oc, nc)
        yield Label("SendView", ("c",)), z3.And(
            alive(c), fi[c, c], ph[c] == COMPLETED, z3.ForAll([y], z3.Implies(in_new(y), S["rd"][c, y])),
            S["rd"][c, w], alive(w), self.coord(S, oc, v), self.least(nc, in_new), cons,
            fr(S, T, {**ch, **mv, "nv": nv + 1,
                      "vin": update(S["vin"], lambda x: z3.BoolVal(True),
                                    lambda x: z3.Store(S["vin"][x], nv + 1, in_new(x))),
                      "vid": z3.Store(vid, c, v + 1), "phase": z3.Store(ph, c, NORMAL),
                      "rd": row(S["rd"], c, lambda y: z3.BoolVal(False))}))
        # InstallView(p, c): the VIEW at the head of c -> p
        p, c, oc, nc = P("InstallView", "pcon")
        h = S["hd"][c, p]
        v = S["view"][c, p, h]
        D = (lambda i: S["gS"][c, p, h, i]), (lambda i: S["gQ"][c, p, h, i]), S["gL"][c, p, h]
        in_new = lambda y: S["vin"][y][v + 1]  # noqa: E731
        tk = self.take(S, p, c)
        mv, cons = self.moved({**S, **tk}, p, in_new, D, f"{tag}_iv", oc, nc)
        yield Label("InstallView", ("p", "c")), z3.And(
            self.flush_msg(S, p, c, VIEW), S["vin"][p][vid[p]], self.coord(S, oc, vid[p]), self.least(nc, in_new),
            cons, fr(S, T, {**tk, **mv, "vid": z3.Store(vid, p, v + 1), "fi": row(fi, p, lambda y: y == c),
                            "phase": z3.Store(ph, p, NORMAL), "rd": row(S["rd"], p, lambda y: z3.BoolVal(False))}))
        c, = P("StopFlush", "c")
        yield Label("StopFlush", ("c",)), z3.And(alive(c), fi[c, c], ph[c] == NORMAL, fr(S, T, self.stop_step(S, c)))
        p, c = P("Unblock", "pc")
        yield Label("Unblock", ("p", "c")), z3.And(alive(c), self.flush_msg(S, p, c, STOP),
                                                   fr(S, T, self.unblock_step(S, p, c)))

        # Crash(m, lost): the first crash (MaxCrashes = 1); ini the least
        # member left (any, when m was the last)
        y = z3.Const("cry", Node)
        first = z3.ForAll([y], z3.Not(S["crashed"][y]))
        for name, m, rest in (("Crash", *P("Crash", "mw")), ("CrashLast", *P("CrashLast", "mw"))):
            out, cut = self.subsequence(S, f"{tag}_{name}", lambda a, b: z3.And(a == m, b != m),
                                        lambda a, b, k: z3.Not(z3.Or(*[S["ty"][a, b, k] == t for t in FLUSH_TY])),
                                        self.CHAN, self.DIGEST)
            out["hd"] = update(out["hd"], lambda a, b: b == m, lambda a, b: S["tl"][a, b])
            new_ini = (z3.And(rest != m, z3.ForAll([y], z3.Implies(y != m, le(rest, y)))) if name == "Crash"
                       else z3.ForAll([y], y == m))
            yield Label("Crash", ("m",)), z3.And(
                alive(m), first, new_ini, cut,
                fr(S, T, {**out, "crashed": z3.Store(S["crashed"], m, True), "ini": rest}))

    # --- explorer states ------------------------------------------------------------
    def py_state(self, s: SequencerFlushState) -> dict[str, Any]:
        """AnyNoCrash's tables and: ini the least live member; fs[x] below
        x's first FORWARD on its way to member 1 (sent[x] without one, or
        once 1 crashed); the table value of a sender m's table lost at the
        view change, the highest seqno of it m delivered; the digests of
        messages and records.  Two records of one member in a ``completed``
        have no such tables (the lemma Msgs excludes them): ValueError."""
        S = super().py_state(s)
        M = range(1, len(s.vid) + 1)
        S["ini"] = min((m for m in M if m not in s.crashed), default=1)
        for m in M:
            for x in set(M) - set(s.recv[m]):
                S["rval"][m, x] = max((q for y, q in s.delivered[m] if y == x), default=0)
        fwd = {x: [f["seqno"] for f in s.chan[(x, 1)] if f["type"] == "FORWARD"] for x in M}
        S["fs"] = Table((x, min(fwd[x]) - 1 if fwd[x] and 1 not in s.crashed else s.sent[x]) for x in M)
        for f in ("gS", "gQ", "gL", "rS", "rQ", "rL"):
            S[f] = Table()
        for (p, q), msgs in s.chan.items():
            for k, x in enumerate(msgs):
                if "digest" in x:
                    S["gL"][p, q, k] = len(x["digest"])
                    for i, (y, n) in enumerate(x["digest"], 1):
                        S["gS"][p, q, k, i], S["gQ"][p, q, k, i] = y, n
        S["rd"] = Table((), False)
        for c in M:
            for q, d in s.completed[c]:
                if S["rd"][c, q]:
                    raise ValueError(f"two records of {q} at {c}")
                S["rd"][c, q], S["rL"][c, q] = True, len(d)
                for i, (y, n) in enumerate(d, 1):
                    S["rS"][c, q, i], S["rQ"][c, q, i] = y, n
        return S

    def value(self, S, s: SequencerFlushState, ghosts: bool = True) -> z3.BoolRef:
        """AnyNoCrash's, with ini, the digests and the records, and with
        ``ghosts`` fs and the table value of a sender a table lost as
        ``py_state`` has them (the lemmas evaluated in Python read them);
        without, free (a model edge is a step for some ghost values)."""
        P = self.py_state(s)
        N = len(s.vid)
        n = {i: node(i) for i in range(1, N + 1)}
        cs = [super().value(S, s), S["ini"] == n[P["ini"]]]
        if ghosts:
            cs += [S["fs"][n[x]] == P["fs"][x] for x in n]
            cs += [S["rval"][n[m], n[x]] == P["rval"][m, x] for m in n for x in n if not P["rdom"][m, x]]
        for (x, y, k), L in P["gL"].items():
            key = (n[x], n[y], S["hd"][n[x], n[y]] + k)
            cs.append(S["gL"][key] == L)
            for i in range(1, L + 1):
                cs.append(S["gQ"][(*key, i)] == P["gQ"][x, y, k, i])
                if P["gS"][x, y, k, i] in n:     # (a decoded CTI's sender may be no member: 0)
                    cs.append(S["gS"][(*key, i)] == n[P["gS"][x, y, k, i]])
        for c in n:
            for q in n:
                cs.append(S["rd"][n[c], n[q]] == P["rd"][c, q])
                if P["rd"][c, q]:
                    cs.append(S["rL"][n[c], n[q]] == P["rL"][c, q])
                    for i in range(1, P["rL"][c, q] + 1):
                        cs.append(S["rQ"][n[c], n[q], i] == P["rQ"][c, q, i])
                        if P["rS"][c, q, i] in n:
                            cs.append(S["rS"][n[c], n[q], i] == n[P["rS"][c, q, i]])
        return z3.And(*cs)

    def decoded_fields(self, S, key, n, who) -> dict:
        L = lambda: min(max(n(S["gL"][key]), 0), self.DECODE_CAP)  # noqa: E731
        return {"digest": lambda: tuple((who(S["gS"][(*key, i)]), n(S["gQ"][(*key, i)])) for i in range(1, L() + 1))}

    def decode(self, m: z3.ModelRef, S) -> SequencerFlushState:
        """AnyNoCrash's, with the digests and records (fs and ini are ghosts,
        not decoded)."""
        st = super().decode(m, S)
        u, num = self.named_members(m)
        ev = lambda e: m.eval(e, model_completion=True)  # noqa: E731
        cap = self.DECODE_CAP
        rec = lambda c, q: tuple((num.get(ev(S["rS"][u[c], u[q], i]).sexpr(), 0), ev(S["rQ"][u[c], u[q], i]).as_long())  # noqa: E731
                                 for i in range(1, min(max(ev(S["rL"][u[c], u[q]]).as_long(), 0), cap) + 1))
        return st._replace(completed=Fn((c, frozenset((q, rec(c, q)) for q in u if z3.is_true(ev(S["rd"][u[c], u[q]]))))
                                        for c in u))
