"""Members as an uninterpreted sort: what a parametric encoding shares.

Theory of operation
-------------------
A fixed-N encoding (model/proofs/stable/'s ``StableEncoding``) has one z3
constant per member; its proof holds for that N.  A parametric encoding
declares the sort ``Node`` and keeps per-member state in z3 arrays indexed
by it (``delivered[p, x]`` is ``Array(Node, Node, Int)``); its lemmas are
``ForAll`` over ``Node``.  z3 places no bound on the sort, so an ``unsat``
answer holds in every interpretation of it: for every N >= 1.  The
fragment is kept EPR-like: no function returns a ``Node`` (only constants
do), so instantiating the quantifiers over the ``Node`` terms of a query
terminates; per-member values are unbounded integers compared and
incremented, which z3's arithmetic decides once the ``Node`` quantifiers
are instantiated.  A quantifier over integers (messages in flight) is
kept under a trigger on the array that holds it.

A lemma is written once, as a function of a state ``S`` whose ``"o"`` entry
(:class:`Z3Ops` or :class:`PyOps`) gives the connectives and quantifiers:

* under :class:`Z3Ops` it is a z3 formula over the arrays of ``fresh``;
* under :class:`PyOps` over members ``1..N`` it is the same lemma
  instantiated at N and evaluated in Python on an explorer state, fast
  enough to be checked on every reachable state of a manifest model.

Members are ordered (``le``, total with least element ``one``, member
1) so that ``min(group)`` keeps the spec's meaning.
:func:`universe` pins the sort to ``n1..nN`` to compare an encoding with
an N-member explorer state (``value``), and :func:`members_of` reads a z3
model's universe back as members ``1..N`` in ``le`` order (``decode``).
:class:`SortEncoding` is what the encodings share (state arrays from a
table of shapes, frame, parameters, the query as written then grounded),
:class:`Channels` their FIFO channels between members.
"""

from __future__ import annotations

import operator
from itertools import count, product

import z3

from .prover import Encoding, multipattern, subterms

Node = z3.DeclareSort("Node")
one = z3.Const("one", Node)                       # member 1, the least
le = z3.Function("le", Node, Node, z3.BoolSort())  # the members' order

_fresh = count()


def order_axioms() -> list[z3.BoolRef]:
    """``le`` is total and antisymmetric with least element ``one``: enough
    for ``min(group)`` to name one member (two least members are each
    ``le`` the other).  Transitivity is left out: no query needs it, and its
    instances grow with the cube of a query's members; a proof without it
    holds for every order."""
    x, y = z3.Consts("ox oy", Node)
    return [z3.ForAll([x], le(one, x)),
            z3.ForAll([x, y], z3.Or(le(x, y), le(y, x))),
            z3.ForAll([x, y], z3.Implies(z3.And(le(x, y), le(y, x)), x == y))]


def node(i: int) -> z3.ExprRef:
    """Member i of a pinned universe."""
    return z3.Const(f"n{i}", Node)


def universe(n: int) -> z3.BoolRef:
    """The sort is exactly members 1..n, ordered by number, member 1 = one."""
    us = [node(i) for i in range(1, n + 1)]
    x = z3.Const("ux", Node)
    return z3.And(z3.Distinct(*us) if n > 1 else z3.BoolVal(True), one == us[0],
                  z3.ForAll([x], z3.Or(*[x == u for u in us])),
                  *[le(us[i], us[j]) == (i <= j) for i in range(n) for j in range(n)])


def members_of(m: z3.ModelRef) -> list[z3.ExprRef]:
    """The elements of ``Node`` in model ``m``, in ``le`` order (member 1 first)."""
    els = list(m.get_universe(Node) or [m.eval(one, model_completion=True)])
    below = {e.sexpr(): sum(z3.is_true(m.eval(le(f, e), model_completion=True)) for f in els) for e in els}
    return sorted(els, key=lambda e: below[e.sexpr()])


def int_literals(e: z3.ExprRef) -> set[int]:
    """The integer literals of a term (a model's value of an array)."""
    return {x.as_long() for x in subterms(e) if z3.is_int_value(x)}


class Z3Ops:
    """Connectives and quantifiers as z3 terms (the proofs)."""

    symbolic = True
    And, Or, Not, Implies, If = staticmethod(z3.And), staticmethod(z3.Or), staticmethod(z3.Not), \
        staticmethod(z3.Implies), staticmethod(z3.If)
    one, le = one, staticmethod(le)

    @staticmethod
    def forall(arity: int, body) -> z3.BoolRef:
        """For all members x1..xk: body(x1, .., xk)."""
        k = next(_fresh)
        xs = [z3.Const(f"x{k}_{i}", Node) for i in range(arity)]
        return z3.ForAll(xs, body(*xs))

    @staticmethod
    def forall_in(table, body) -> z3.BoolRef:
        """For every (p, q, k) with table[p, q, k] (k an integer, e.g. the
        data messages in flight): body(p, q, k); triggered on the table."""
        n = next(_fresh)
        p, q = z3.Const(f"x{n}_p", Node), z3.Const(f"x{n}_q", Node)
        k = z3.Int(f"x{n}_k")
        return z3.ForAll([p, q, k], z3.Implies(table[p, q, k], body(p, q, k)), patterns=[table[p, q, k]])

    @staticmethod
    def all(nodes: int, ints: int, body, trigger=None, dom=None) -> z3.BoolRef:
        """For all members x1..x_nodes and integers k1..k_ints: body(*xs,
        *ks), one quantifier (``ground`` instantiates its members and keeps
        the integers quantified); ``trigger(*xs, *ks)``: the terms of its
        one pattern.  ``dom`` is PyOps' (the integers worth trying)."""
        n = next(_fresh)
        xs = [z3.Const(f"x{n}_{i}", Node) for i in range(nodes)] + [z3.Int(f"x{n}_k{i}") for i in range(ints)]
        pats = [multipattern(*trigger(*xs))] if trigger is not None else []
        return z3.ForAll(xs, body(*xs), patterns=pats)


class PyOps:
    """The same over members 1..N, on Python values (a lemma instantiated at N)."""

    symbolic = False
    one, le = 1, staticmethod(operator.le)

    def __init__(self, N: int, ints=range(0)) -> None:
        self.M = range(1, N + 1)
        # the integers a quantifier over Int tries (``all`` without ``dom``):
        # every value the state holds, and one past them
        self.I = ints

    @staticmethod
    def And(*xs):
        return all(xs)

    @staticmethod
    def Or(*xs):
        return any(xs)

    @staticmethod
    def Not(a):
        return not a

    @staticmethod
    def Implies(a, b):
        return (not a) or b

    @staticmethod
    def If(c, a, b):
        return a if c else b

    def forall(self, arity: int, body) -> bool:
        return all(body(*xs) for xs in product(self.M, repeat=arity))

    @staticmethod
    def forall_in(table, body) -> bool:
        return all(body(*key) for key, v in table.items() if v)

    def all(self, nodes: int, ints: int, body, trigger=None, dom=None) -> bool:
        """``dom(*xs)``: the integer tuples to try for members xs (those the
        body's guard can hold for, e.g. a channel's positions); None: every
        tuple of ``I``."""
        return all(body(*xs, *ks) for xs in product(self.M, repeat=nodes)
                   for ks in (dom(*xs) if dom is not None else product(self.I, repeat=ints)))


class IdSet(frozenset):
    """A Python state's set of integers, read as a z3 array Int -> Bool is:
    ``a[i]`` is membership."""

    __getitem__ = frozenset.__contains__


def update(arr: z3.ArrayRef, cond, val) -> z3.ArrayRef:
    """arr with its entries at the indices xs where ``cond(*xs)`` holds
    replaced by ``val(*xs)``: the spec's EXCEPT over a set of indices (a
    member's row, every channel from a member), as one z3 Lambda."""
    s = arr.sort()
    n = next(_fresh)
    xs = [z3.Const(f"u{n}_{i}", s.domain_n(i)) for i in range(z3.Z3_get_array_arity(s.ctx_ref(), s.ast))]
    return z3.Lambda(xs, z3.If(cond(*xs), val(*xs), arr[tuple(xs) if len(xs) > 1 else xs[0]]))


def row(arr: z3.ArrayRef, p, val) -> z3.ArrayRef:
    """arr (indexed by two members or more) with p's row replaced:
    [arr EXCEPT ![p] = [xs |-> val(*xs)]]."""
    return update(arr, lambda a, *xs: a == p, lambda a, *xs: val(*xs))


class SortEncoding(Encoding):
    """What a parametric encoding's state and queries share: each field of
    ``_shape`` (name -> (argument sorts, value sort)) is a z3 array over
    them (a constant without arguments); a query is asked as written first
    (``first_rlimit``), then grounded, with the members' order (``axioms``)."""

    members = "any"
    _shape: dict = {}

    def axioms(self) -> list:
        return order_axioms()

    # instantiate at the query's Node terms too (``ground``'s ``terms``)
    ground_terms = False

    def query(self, fs: list) -> list:
        return ground(self.axioms() + fs, self.ground_terms)

    def first_query(self, fs: list):
        """z3's own quantifier instantiation first (as StableAnyEncoding)."""
        return self.axioms() + fs, self.first_rlimit

    def fresh(self, t: str) -> dict:
        S: dict = {"o": Z3Ops, "tag": t}
        for f, (dom, rng) in self._shape.items():
            S[f] = z3.Array(f"{t}_{f}", *dom, rng) if dom else z3.Const(f"{t}_{f}", rng)
        return S

    def _frame(self, S, T, upd: dict) -> z3.BoolRef:
        """T is S with the fields of ``upd`` replaced; the others UNCHANGED."""
        return z3.And(*[T[f] == upd.get(f, S[f]) for f in self._shape])

    def params(self, action: str, names: str) -> list:
        """An action's parameters, one Node constant each."""
        return [z3.Const(f"{action}_{n}", Node) for n in names]


class Channels:
    """FIFO channels between members, the one from a to b at positions
    ``hd[a, b] .. tl[a, b] - 1`` of one array per message field over
    ``Node x Node x Int`` (any number of messages in flight); FLUSH's and
    SEQUENCER over FLUSH's parametric encodings.  The methods take the
    spec's arguments: ``has(S, p, q)`` is HasMsg(p, q), the channel from q
    to p; lemmas over messages read positions through ``_msgs``."""

    @staticmethod
    def decoded_channels(S, u: dict, members, n, cap: int, message) -> dict:
        """A z3 model's channels as the explorer's: ``(p, q) -> tuple`` of
        ``message(key)`` for the first ``cap`` positions in flight, ``n``
        reading an integer term of the model, ``u`` a member's element."""
        chan = {}
        for p in members:
            for q in members:
                hd, tl = n(S["hd"][u[p], u[q]]), n(S["tl"][u[p], u[q]])
                chan[(p, q)] = tuple(message((u[p], u[q], k)) for k in range(hd, min(max(tl, hd), hd + cap)))
        return chan

    @staticmethod
    def channel_tables(P: dict, chan, members, fields: dict) -> None:
        """An explorer state's channels into the tables ``P`` (PyOps): each
        at positions 0 .. len - 1 (``hd`` 0, ``tl`` its length), and per
        field f, where a message has the key ``fields[f][0]``, its value
        through ``fields[f][1]`` (None: as it is)."""
        P["hd"] = Table()
        P["tl"] = Table(((p, q), len(chan[p, q])) for p in members for q in members)
        for f in fields:
            P[f] = Table()
        for (p, q), msgs in chan.items():
            for k, x in enumerate(msgs):
                for f, (key, conv) in fields.items():
                    if key in x:
                        P[f][p, q, k] = x[key] if conv is None else conv(x[key])

    @staticmethod
    def channel_value(S, P: dict, n: dict, x: int, y: int, fields: dict) -> list:
        """The channel from x to y of the tables ``P`` (``channel_tables``)
        as z3 equalities, its head free (its messages from there on): its
        length, and per position each field of ``fields`` P has there, read
        through ``fields[f]`` (None: the value itself; a conversion may
        answer None: no equality)."""
        e, h = (n[x], n[y]), S["hd"][n[x], n[y]]
        cs = [S["tl"][e] - h == P["tl"][x, y]]
        for k in range(P["tl"][x, y]):
            for f, conv in fields.items():
                if (x, y, k) in P[f]:
                    v = P[f][x, y, k] if conv is None else conv(P[f][x, y, k])
                    if v is not None:
                        cs.append(S[f][(*e, h + k)] == v)
        return cs

    @staticmethod
    def has(S, p, q):
        return S["hd"][q, p] < S["tl"][q, p]

    @staticmethod
    def head(S, p, q, f):
        return S[f][q, p, S["hd"][q, p]]

    @staticmethod
    def take(S, p, q) -> dict:
        return {"hd": z3.Store(S["hd"], q, p, S["hd"][q, p] + 1)}

    @staticmethod
    def send(S, p, R, msg: dict, loopback: bool = False, seqs: dict | None = None) -> dict:
        """Multi(chan, p, R, msg): msg (field -> term) appended to the channel
        from p to every member q with R(q), p itself only with ``loopback``
        (FLUSH never sends to oneself; a SEQUENCER coordinator's DATA does).
        ``seqs``: fields with one more index (a digest's entries), field ->
        the entry at index i as a function of i."""
        to = ((lambda a, b: z3.And(a == p, R(b))) if loopback  # noqa: E731
              else (lambda a, b: z3.And(a == p, b != p, R(b))))
        out = {"tl": update(S["tl"], to, lambda a, b: S["tl"][a, b] + 1)}
        for f, v in msg.items():
            out[f] = update(S[f], lambda a, b, k: z3.And(to(a, b), k == S["tl"][a, b]), lambda a, b, k, v=v: v)
        for f, v in (seqs or {}).items():
            out[f] = update(S[f], lambda a, b, k, i: z3.And(to(a, b), k == S["tl"][a, b]), lambda a, b, k, i, v=v: v(i))
        return out

    @staticmethod
    def subsequence(S, tag: str, which, keep, fields, seqs=()) -> tuple[dict, z3.BoolRef]:
        """Each channel (a, b) with ``which(a, b)`` replaced by any
        order-preserving subsequence of its messages at positions k with
        ``keep(a, b, k)``: the spec's SelectSeq (Purged, a crash's cuts)
        is one of them, so a relation with this in its place allows every
        step of the spec's and more.  Returns the channel fields' updates
        (``fields`` indexed by a, b, k; ``seqs`` by a, b, k, i) and the
        constraints on the fresh position map ``sel`` (new position k of
        channel (a, b) holds the message at old position sel[a, b, k]) and
        lengths ``nl``."""
        sel = z3.Array(f"{tag}_sel", Node, Node, z3.IntSort(), z3.IntSort())
        nl = z3.Array(f"{tag}_nl", Node, Node, z3.IntSort())
        n = next(_fresh)
        a, b = z3.Const(f"ss{n}_a", Node), z3.Const(f"ss{n}_b", Node)
        k, k2 = z3.Int(f"ss{n}_k"), z3.Int(f"ss{n}_k2")
        old = lambda a, b, k: z3.And(S["hd"][a, b] <= k, k < S["tl"][a, b])  # noqa: E731
        new = lambda a, b, k: z3.And(0 <= k, k < nl[a, b])  # noqa: E731
        cons = z3.And(
            z3.ForAll([a, b], z3.Implies(which(a, b), nl[a, b] >= 0)),
            z3.ForAll([a, b, k], z3.Implies(z3.And(which(a, b), new(a, b, k)),
                                            z3.And(old(a, b, sel[a, b, k]), keep(a, b, sel[a, b, k]))),
                      patterns=[sel[a, b, k]]),
            z3.ForAll([a, b, k, k2], z3.Implies(z3.And(which(a, b), new(a, b, k), new(a, b, k2), k < k2),
                                                sel[a, b, k] < sel[a, b, k2]),
                      patterns=[multipattern(sel[a, b, k], sel[a, b, k2])]))
        out = {"hd": update(S["hd"], which, lambda a, b: z3.IntVal(0)),
               "tl": update(S["tl"], which, lambda a, b: nl[a, b])}
        for f in fields:
            out[f] = update(S[f], lambda a, b, k: which(a, b), lambda a, b, k, f=f: S[f][a, b, sel[a, b, k]])
        for f in seqs:
            out[f] = update(S[f], lambda a, b, k, i: which(a, b),
                            lambda a, b, k, i, f=f: S[f][a, b, sel[a, b, k], i])
        return out, cons

    @staticmethod
    def _in(S, a, b, k):
        """k is a position of a message on the channel from a to b."""
        return S["o"].And(S["hd"][a, b] <= k, k < S["tl"][a, b])

    @staticmethod
    def _positions(S, a, b):
        return range(S["hd"][a, b], S["tl"][a, b])

    def _msgs(self, S, body, nodes: int = 0, trigger=None):
        """Every message, at position k of the channel from a to b (and every
        ``nodes`` more members xs): body(a, b, *xs, k).  Its pattern is
        ``trigger(a, b, k)`` (the message's type by default), none with more
        members (a pattern holds every variable)."""
        o = S["o"]
        trigger = trigger or (lambda a, b, k: [S["ty"][a, b, k]])
        return o.all(2 + nodes, 1, lambda a, b, *r: o.Implies(self._in(S, a, b, r[-1]), body(a, b, *r)),
                     None if nodes else lambda a, b, *r: trigger(a, b, r[-1]),
                     lambda a, b, *xs: ((k,) for k in self._positions(S, a, b)))


class Table(dict):
    """A Python state's function: a value for every key read (``default`` for
    one outside its domain, read only under a guard that is false there)."""

    def __init__(self, items=(), default=0) -> None:
        super().__init__(items)
        self.default = default

    def __missing__(self, key):
        return self.default


# --- EPR: quantifiers over Node instantiated with the query's members -------------

def _open(q: z3.QuantifierRef, args: list) -> z3.ExprRef:
    """q's body with its bound variables replaced by args (args[0] for the first)."""
    return z3.substitute_vars(q.body(), *reversed(args))


def ground(fs: list[z3.BoolRef], terms: bool = False) -> list[z3.BoolRef]:
    r"""``fs`` with every quantifier over ``Node`` alone eliminated, the
    same answer guaranteed: one in a negative position (``~L(t)``, a
    consecution goal) is skolemised by fresh constants; then one in a
    positive position is replaced by its instances over every ``Node``
    constant of the query.  With no function into ``Node`` the formulas are
    EPR in the members: a model of the instances restricted to the
    constants' values is a model of the quantified formulas, so unsat and
    sat both carry over.  When the query pins the universe to n1..nN
    (``universe``), the instances are over those N alone.  What stays quantified is an integer variable (a
    data message's seqno, one quantifier per pair of members) and lambdas,
    for z3 (E-matching on the array that holds the variable).

    ``terms``: the ``Node`` terms that are not constants (an array read
    outside every quantifier, e.g. the sender of a channel's head) are
    instantiated at too.  An encoding outside EPR (functions into ``Node``)
    then has its lemmas at the members its query reads; unsat still holds
    (instances of true formulas), a model may be no CTI (a term the
    instances missed)."""
    sk = count()

    def skolem(f, pos: bool):
        if z3.is_quantifier(f):
            if f.is_lambda() or pos == f.is_forall():
                return f
            n = next(sk)
            return skolem(_open(f, [z3.Const(f"sk{n}_{i}", f.var_sort(i)) for i in range(f.num_vars())]), pos)
        return _polar(f, pos, skolem)

    fs = [skolem(f, True) for f in fs]
    consts: dict[int, z3.ExprRef] = {}
    for f in fs:
        _constants(f, consts)
    cs = list(consts.values()) or [one]
    if terms:
        cs += _node_terms(fs)
    us = _closed(fs)
    if us is not None:
        # each constant is one of u1..uN; the rest is instantiated over those
        fs = fs + [z3.Or(*[c == u for u in us]) for c in cs]
        cs = us
    memo: dict[tuple[int, bool], z3.ExprRef] = {}

    def inst(f, pos: bool):
        key = (f.get_id(), pos)
        if key not in memo:
            if z3.is_quantifier(f) and not f.is_lambda():
                out = z3.And(*_instances(f, cs))
            else:
                out = _polar(f, pos, inst)
            memo[key] = (f, out)
        return memo[key][1]

    return [inst(f, True) for f in fs]


def _node_terms(fs: list) -> list:
    """The ground ``Node`` terms of fs with arguments (array reads, no bound
    variable: quantifier and lambda bodies are not entered), once each."""
    seen, out, todo = set(), [], list(fs)
    while todo:
        x = todo.pop()
        if x.get_id() in seen or z3.is_quantifier(x) or not z3.is_app(x):
            continue
        seen.add(x.get_id())
        if x.num_args() > 0 and x.sort() == Node:
            out.append(x)
        todo += x.children()
    return out


def _closed(fs: list) -> list | None:
    """The members u1..uN of a universe the query pins (``universe``: a
    top-level ``ForAll x. x = u1 or .. or x = uN``): every constant is one
    of them, so instantiating over them alone is complete.  None: no pin."""
    todo = list(fs)
    while todo:
        f = todo.pop()
        if z3.is_and(f):
            todo += f.children()
        elif z3.is_quantifier(f) and f.is_forall() and f.num_vars() == 1 and f.var_sort(0) == Node:
            body = f.body()
            alts = body.children() if z3.is_or(body) else [body]
            if all(z3.is_eq(a) and z3.is_var(a.arg(0)) for a in alts):
                return [a.arg(1) for a in alts]
    return None


def _instances(q: z3.QuantifierRef, cs: list) -> list:
    """q's instances with its Node variables replaced by the constants cs,
    each a quantifier over q's other (integer) variables, if any."""
    n = q.num_vars()
    nodes = [i for i in range(n) if q.var_sort(i) == Node]
    if not nodes:
        return [q]
    k = next(_fresh)
    rest = {i: z3.Const(f"r{k}_{i}", q.var_sort(i)) for i in range(n) if i not in nodes}
    out = []
    for xs in product(cs, repeat=len(nodes)):
        args = dict(zip(nodes, xs)) | rest
        vals = list(reversed([args[i] for i in range(n)]))
        body = z3.substitute_vars(q.body(), *vals)
        # the patterns kept, on the instance's terms
        pats = [multipattern(*[z3.substitute_vars(p.arg(j), *vals) for j in range(p.num_args())])
                for p in (q.pattern(i) for i in range(q.num_patterns()))]
        out.append(z3.ForAll(list(rest.values()), body, patterns=pats) if rest else body)
    return out


def _polar(f, pos: bool, go):
    """f rebuilt with ``go(child, polarity)`` on its Boolean structure
    (And, Or, Not, Implies); anything else is left as it is (an equation or
    If between formulas holds no quantifier here)."""
    if z3.is_and(f):
        return z3.And(*[go(c, pos) for c in f.children()])
    if z3.is_or(f):
        return z3.Or(*[go(c, pos) for c in f.children()])
    if z3.is_not(f):
        return z3.Not(go(f.arg(0), not pos))
    if z3.is_implies(f):
        return z3.Implies(go(f.arg(0), not pos), go(f.arg(1), pos))
    return f


def _constants(f, out: dict) -> None:
    """The Node constants of f (outside quantifier and lambda bodies too)."""
    for e in subterms(f):
        if (z3.is_app(e) and e.num_args() == 0 and e.sort() == Node
                and e.decl().kind() == z3.Z3_OP_UNINTERPRETED):
            out.setdefault(e.get_id(), e)
