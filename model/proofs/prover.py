"""The shared proof engine: initiation, consecution, implication with z3.

Theory of operation
-------------------
Following the inductive-invariant workflow (Apalache's initiation /
consecution / implication; mypyvy's one query per transition and
conjunct), an :class:`Encoding` gives, for one protocol variant:

* ``fresh(tag)``: a symbolic state (a dict of z3 terms, one family of
  constants per spec variable);
* ``init(S)``: the spec's Init as a z3 formula;
* ``actions(S, T)``: pairs ``(Label, formula)``, one per action instance
  (the parameters range over the encoding's finite member set); the formula
  relates pre-state ``S`` to post-state ``T``, guard and frame included;
* ``lemmas``: named state formulas, whose conjunction is the inductive
  invariant; ``properties`` names those that are the spec's safety property;
* ``value(model_state)``: the model state as z3 equalities over ``S`` -- the
  one mapping from explorer states to z3 values (used by the conformance
  tests of the encoding and to classify counterexamples);
* ``decode(z3_model, S)``: the reverse, a model state for the explorer.

The encodings share their term builders: an action's updates (``join``)
and frame (``unchanged``), a function of members applied to a symbolic one
or the first member that satisfies a condition (``select``, ``first``).

Queries (each bounded by z3's resource limit, ``rlimit``: the answer is
the same whatever the load; timed, and its resource units counted):

* initiation per lemma L:      Init(S) /\\ ~L(S)              unsat
* consecution per (A, L):      Inv(S) /\\ A(S, T) /\\ ~L(T)    unsat
* implication per property P:  Inv(S) /\\ ~P(S)               unsat

A satisfiable consecution query is a counterexample to induction (CTI): the
pre-state is decoded into a model state and looked up in the bounded model's
reachable states (a breadth-first prefix, ``reach_max_states``); reachable
means a real violation (with the shortest path), unreachable (the
exploration was complete) means a lemma is missing, else unknown.  For a
flawed variant the explorer's shortest counterexample to the property is
searched first for the step that leaves the invariant (``_first_break``):
that step answers its queries with a CTI pinned to two reachable states.
A conjunct of a lemma that an action instance's frame preserves (every
post-state variable it reads is equated to its pre-state twin, and it is
then the same conjunct of L(S)) is not asked (``Frame``); a query with
nothing left is reported ``by_frame``.
``verdict`` says when a variant holds; ``edge_in_relation``,
``satisfies_invariant`` and ``extra_successor`` compare an encoding with its
explicit-state model (tests/test_proofs_<protocol>.py), each state's value
built once (``value_of``).  See
docs/proofs.md.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import z3

from ..core import Label, Model, explore


@dataclass
class Query:
    protocol: str
    variant: str
    query: str           # "initiation:L", "consecution:A:L", "implication:P"
    result: str          # proved | cti | unknown
    seconds: float
    action: str | None = None
    pre: dict | None = None
    post: dict | None = None
    reachable: bool | None = None
    path: list[str] | None = None
    expected_cti: bool = False
    members: int | str | None = None
    cpu_seconds: float = 0.0
    # z3's resource units the query used (its "rlimit count", every check
    # summed): the same on every run, where the seconds follow the load
    rlimit: int = 0
    # proved by the frame alone: every action instance leaves unchanged all
    # the lemma reads (Frame), no z3 call
    by_frame: bool = False

    def as_json(self) -> dict[str, Any]:
        out = {"protocol": self.protocol, "variant": self.variant, "query": self.query,
               "result": self.result, "seconds": round(self.seconds, 4),
               "cpu_seconds": round(self.cpu_seconds, 4), "rlimit": self.rlimit, "flawed": self.expected_cti,
               "members": "any" if self.members is None else self.members, "by_frame": self.by_frame}
        if self.result == "cti":
            out.update(action=self.action, pre=self.pre, post=self.post, reachable=self.reachable,
                       path=self.path)
        return out


class Encoding:
    """Base class; subclasses fill in the spec's state and actions."""

    protocol = ""
    variant = ""
    expect_cti = False   # a flawed variant: a reachable CTI is the expected outcome
    members: int | str | None = None   # the fixed member count ("any": every number)
    reach_max_states = 5_000   # how far the bounded model is explored to classify a CTI
    # True: a minute or more of z3 (the matrix's "heavy", set by the
    # registry): the default audit lists it as skipped; `groupcheck prove`,
    # `audit --full` and the slow tests run it
    heavy = False
    # processes a fixed variant's lemmas are dealt out to per spare core
    # when the matrix runs (the matrix's "shards_per_core"; registry.run_isolated)
    shards_per_core = 1
    # z3 parameters for every solver of this encoding's queries and checks
    # (empty: z3's defaults; an encoding with quantified sequence operators
    # may turn E-matching off and rely on model-based instantiation)
    solver_params: Mapping[str, Any] = {}
    # True: each consecution query (action, lemma) is solved once per action
    # instance (Multicast(1), Multicast(2), ...) instead of once on their
    # disjunction; the query's result is the worst of its parts (a CTI if
    # any part has one, else unknown if any part is, else proved) and its
    # seconds their sum.  Under a disjunction the post-state's frame
    # equations cannot be solved away, and quantified lemmas then cost z3
    # orders of magnitude more (FLUSH).  False keeps one query per action.
    split_instances = False
    # True: each consecution query's goal ~L(T) is solved once per top-level
    # conjunct of L(T) (``conjuncts``: a conjunction, or an implication whose
    # conclusion is one, cut into its parts; ~(A /\ B) is unsat iff ~A and ~B
    # are), the result the worst of the parts as with split_instances.  A
    # lemma that is a conjunction over channels and members negates into a
    # disjunction that z3 searches as a whole: at N = 3 (SEQUENCER over
    # FLUSH) such queries ran out of time where each part is proved in
    # well under a second.
    split_goals = False
    # z3 parameters for first, cheaper attempts at each part of a query,
    # each in a z3 context of its own under ``first_rlimit``, in turn, then
    # the solver_params under the query's ``rlimit`` if none proved it;
    # empty: one attempt.  E-matching alone (smt.mbqi off) proves most
    # quantified parts at once, where model-based instantiation may wander;
    # z3's search also depends on the terms earlier queries of the process
    # created, which a context of its own does not see.  Only the last
    # attempt can return a CTI.
    first_attempts: tuple[Mapping[str, Any], ...] = ()
    # z3's resource limit of each first attempt (``first_attempts``, or the
    # cheaper formulation of ``first_query``)
    first_rlimit = 10_000_000
    # True: ``first_query`` is asked in a z3 context of its own (as
    # ``first_attempts`` are), so that its answer follows the query alone,
    # not the terms the process made before it
    first_fresh = False
    # z3's resource limit (its deterministic "rlimit count") for every query
    # of this encoding: a query that reaches it is ``unknown``, the same on
    # every run and machine whatever the load.  The matrix sets it per
    # variant from the manifest ("rlimit", calibrated: docs/proofs.md);
    # None: ``DEFAULT_RLIMIT``.  The conformance checks (edge_in_relation
    # and the like) are bounded by it when it is set.
    rlimit: int | None = None
    # a z3 resource limit for a consecution query on a whole lemma; past it,
    # z3 has given up and the query is asked again one conjunct of the lemma
    # at a time (the post-state breaking any one conjunct breaks the lemma,
    # so a CTI stays a CTI, and every conjunct unsat proves it).  A lemma
    # that is a conjunction over channels and members grows with N faster
    # than z3's effort on each conjunct does (FLUSH's ViewDigest: unknown
    # after 80 s of CPU at N = 4; one conjunct at a time, 48 calls of at
    # most 0.04 s).  None: one query per lemma, no fallback.
    split_goal_rlimit: int | None = None

    def query(self, fs: list[z3.BoolRef]) -> list[z3.BoolRef]:
        """The formulas z3 is given for a query or check of ``fs`` (a
        parametric encoding adds the facts of its sorts and instantiates its
        quantifiers over members, model/proofs/parametric.py)."""
        return fs

    def first_query(self, fs: list[z3.BoolRef]) -> tuple[list[z3.BoolRef], int] | None:
        """A cheaper formulation of a query and its z3 resource limit, asked
        first and counted only if it proves (unsat); None: none."""
        return None

    def fresh(self, tag: str) -> dict[str, Any]:
        raise NotImplementedError

    def init(self, S) -> z3.BoolRef:
        raise NotImplementedError

    def actions(self, S, T) -> Iterable[tuple[Label, z3.BoolRef]]:
        raise NotImplementedError

    @property
    def lemmas(self) -> Mapping[str, Callable[[Any], z3.BoolRef]]:
        raise NotImplementedError

    properties: tuple[str, ...] = ()
    # property name -> its formula where the spec's property is not a lemma
    # as written (a lemma may be stronger); absent: the lemma of that name
    property_formulas: Mapping[str, Callable[[Any], z3.BoolRef]] = {}

    def value(self, S, state) -> z3.BoolRef:
        raise NotImplementedError

    def decode(self, m: z3.ModelRef, S) -> Any:
        raise NotImplementedError

    def model(self) -> Model:
        """The bounded explicit-state model of the same size (for reachability)."""
        raise NotImplementedError

    def bounded(self, S) -> z3.BoolRef | None:
        """The bounded model's domain (its constants' bounds on seqnos, senders)
        as a formula over S, to look for a CTI the explorer can reach; None
        when the encoding has none."""
        return None

    def pretty(self, state) -> dict:
        return {k: repr(v) for k, v in state._asdict().items()}

    def fits(self, state) -> bool:
        """Can ``state`` be a state of ``model()``?  A parametric encoding's
        CTI may have another number of members than the bounded model:
        then its reachability is unknown, not False."""
        return True

    # --- derived ---------------------------------------------------------------
    def inv(self, S) -> z3.BoolRef:
        return z3.And(*[f(S) for f in self.lemmas.values()])

    def next(self, S, T) -> z3.BoolRef:
        return z3.Or(*[f for _, f in self.actions(S, T)])


# the z3 whose "rlimit count" units the manifests' limits were calibrated in
# (pyproject pins it); another z3 may count otherwise, and `prove` says so
CALIBRATED_Z3 = "5.4.1"


def solver_note() -> str | None:
    """A warning when this z3 is not the one the limits were calibrated
    with: its answers may then differ (a query giving up sooner or later)."""
    have = z3.get_version_string()
    if have == CALIBRATED_Z3:
        return None
    return (f"z3 {have} is not {CALIBRATED_Z3}, whose resource units the manifests' limits were "
            f"calibrated in: a query may give up sooner or later than recorded (pip install z3-solver=={CALIBRATED_Z3}.0)")


# a query's resource limit when neither the caller, the matrix nor the
# encoding gives one (z3's "rlimit count" units; a few seconds of CPU)
DEFAULT_RLIMIT = 50_000_000
# z3's wall-clock time-out on every query, far past any resource limit
# here: a safety net for a hung solver.  Reaching it is an error
# (SolverHung), never an answer: a verdict rests on resource limits alone.
SAFETY_NET_MS = 1_800_000


class SolverHung(RuntimeError):
    """z3 ran into the wall-clock safety net (SAFETY_NET_MS)."""


def _solver(enc: Encoding | None = None) -> z3.Solver:
    """A z3 solver with the encoding's ``solver_params`` (none: the
    defaults), bounded by its ``rlimit`` when it has one."""
    s = z3.Solver()
    for k, v in (getattr(enc, "solver_params", None) or {}).items():
        s.set(k, v)
    if getattr(enc, "rlimit", None) is not None:
        s.set("rlimit", enc.rlimit)
    return s


def _units(s: z3.Solver) -> int:
    """z3's resource count so far in the solver's context (it accumulates
    over the context's checks; a limit is counted from the check's start)."""
    st = s.statistics()
    return int(st.get_key_value("rlimit count")) if "rlimit count" in st.keys() else 0


def _check(s: z3.Solver, rlimit: int):
    """s.check() under z3's resource limit ``rlimit``: (z3 result, wall s,
    CPU s of this process, resource units used)."""
    s.set("rlimit", rlimit)
    s.set("timeout", SAFETY_NET_MS)
    u0, t0, c0 = _units(s), time.perf_counter(), time.process_time()
    r = s.check()
    dt, dc = time.perf_counter() - t0, time.process_time() - c0
    if r == z3.unknown and dt * 1000 >= SAFETY_NET_MS:
        raise SolverHung(f"z3 ran {dt:.0f} s without reaching its resource limit {rlimit:,}")
    return r, dt, dc, _units(s) - u0


def limit_of(enc: Encoding | None, rlimit: int | None = None) -> int:
    """A query's resource limit: the caller's, else the encoding's, else
    DEFAULT_RLIMIT."""
    return rlimit or getattr(enc, "rlimit", None) or DEFAULT_RLIMIT


def _solve(fs: list, enc: Encoding | None = None,
           rlimit: int | None = None) -> tuple[str, z3.ModelRef | None, float, float, int]:
    """(result, model or None, wall seconds, CPU seconds of this process: z3
    runs in it, so the CPU figure is the query's cost whatever the load,
    resource units).  ``rlimit``: the check's limit (``limit_of``)."""
    first = enc.first_query(fs) if hasattr(enc, "first_query") else None
    dt0 = dc0 = 0.0
    u0 = 0
    if first is not None:
        if enc.first_fresh:
            r, _, dt0, dc0, u0 = _check_fresh(first[0], first[1], getattr(enc, "solver_params", None) or {})
        else:
            s = _solver(enc)
            s.add(*first[0])
            r, dt0, dc0, u0 = _check(s, first[1])
        if r == z3.unsat:
            return "proved", None, dt0, dc0, u0
    s = _solver(enc)
    t0, c0 = time.perf_counter(), time.process_time()
    s.add(*(enc.query(fs) if hasattr(enc, "query") else fs))
    # (building the query, e.g. grounding it, counts in its seconds)
    t1, c1 = time.perf_counter() - t0, time.process_time() - c0
    r, dt, dc, u = _check(s, limit_of(enc, rlimit))
    dt, dc, u = dt + t1 + dt0, dc + c1 + dc0, u + u0
    if r == z3.unsat:
        return "proved", None, dt, dc, u
    if r == z3.sat:
        return "cti", s.model(), dt, dc, u
    return "unknown", None, dt, dc, u


def multipattern(*terms: z3.ExprRef) -> z3.PatternRef:
    """z3.MultiPattern with its terms held across the C call: z3.py rebinds
    its argument tuple before Z3_mk_pattern, so a term nothing else holds
    (b[k1] of a fresh bound k1) is freed under it ("invalid argument", or a
    crash).  ``terms`` stays referenced by this frame until the call returns."""
    return z3.MultiPattern(*terms)


def conjuncts(f: z3.BoolRef) -> list[z3.BoolRef]:
    """The top-level conjuncts of f (Encoding.split_goals and
    split_goal_rlimit): an And is flattened, an Implies(g, And(a, b))
    becomes Implies(g, a), Implies(g, b)."""
    if z3.is_and(f):
        return [c for a in f.children() for c in conjuncts(a)]
    if z3.is_implies(f):
        g, b = f.children()
        parts = conjuncts(b)
        return [f] if len(parts) == 1 else [z3.Implies(g, c) for c in parts]
    return [f]


def _leaves(state) -> list:
    """A symbolic state's z3 terms in a fixed order (dicts, lists and tuples
    walked in order): ``fresh(s)`` and ``fresh(t)`` give twins position by
    position."""
    if isinstance(state, Mapping):
        return [x for k in state for x in _leaves(state[k])]
    if isinstance(state, (list, tuple)):
        return [x for v in state for x in _leaves(v)]
    return [state] if z3.is_expr(state) else []


def alpha_equal(a: z3.ExprRef, b: z3.ExprRef) -> bool:
    """a and b are the same term up to the names of bound variables (z3
    compares quantifiers with their names; the encodings number them)."""
    seen: set[tuple[int, int]] = set()
    todo = [(a, b)]
    while todo:
        x, y = todo.pop()
        if x.eq(y) or (x.get_id(), y.get_id()) in seen:
            continue
        seen.add((x.get_id(), y.get_id()))
        if z3.is_quantifier(x) or z3.is_quantifier(y):
            if not (z3.is_quantifier(x) and z3.is_quantifier(y)):
                return False
            kind = lambda q: (q.is_forall(), q.is_exists(), q.is_lambda(), q.num_vars())   # noqa: E731
            if kind(x) != kind(y) or any(x.var_sort(i) != y.var_sort(i) for i in range(x.num_vars())):
                return False
            todo.append((x.body(), y.body()))
        elif z3.is_var(x) or z3.is_var(y):
            if not (z3.is_var(x) and z3.is_var(y) and z3.get_var_index(x) == z3.get_var_index(y)
                    and x.sort() == y.sort()):
                return False
        elif not (z3.is_app(x) and z3.is_app(y) and x.decl() == y.decl() and x.num_args() == y.num_args()):
            return False
        else:
            todo += zip(x.children(), y.children())
    return True


def subterms(e: z3.ExprRef):
    """Every distinct subterm of e once (a term DAG), quantifier and lambda
    bodies included: the one walk the frame and the parametric encodings use."""
    seen, todo = set(), [e]
    while todo:
        x = todo.pop()
        if x.get_id() in seen:
            continue
        seen.add(x.get_id())
        yield x
        if z3.is_quantifier(x):
            todo.append(x.body())
        elif z3.is_app(x):
            todo += x.children()


class Frame:
    r"""What the action instances leave unchanged, and the conjuncts of a
    lemma that therefore need no solver.

    An instance f whose top-level conjuncts include ``T.v = S.v`` leaves v
    unchanged.  A conjunct c of L(T) whose post-state variables f all leaves
    unchanged, and which with every post-state variable replaced by its
    pre-state twin is the same conjunct of L(S) (term by term, up to bound
    names: ``alpha_equal``), holds after f because L(S) is in the invariant:
    ``Inv(S) /\ f /\ ~c(T)`` is unsat without asking z3.  ``residue``
    keeps the other conjuncts, the goal z3 is asked.  Nothing is assumed of
    an encoding beyond its formulas: a frame written ``If(g, frame1,
    frame2)`` is no top-level equality, and its variables count as changed."""

    def __init__(self, S, T) -> None:
        pairs = [(s, t) for s, t in zip(_leaves(S), _leaves(T)) if s.sort() == t.sort() and not s.eq(t)]
        self._twin = {t.get_id(): s for s, t in pairs}
        self._back = [(t, s) for s, t in pairs]
        # memos keyed by z3 ids; each holds its terms, so that an id cannot
        # be freed and reused by another term while the Frame lives
        self._kept: dict[int, tuple] = {}
        self._lemma: dict[tuple[int, int], tuple] = {}

    def unchanged(self, f: z3.BoolRef) -> frozenset[int]:
        """The ids of the post-state terms f equates to their pre-state twins."""
        k = f.get_id()
        if k not in self._kept:
            out, todo = set(), [f]
            while todo:
                c = todo.pop()
                if z3.is_and(c):
                    todo += c.children()
                elif z3.is_eq(c):
                    a, b = c.children()
                    for x, y in ((a, b), (b, a)):
                        if x.get_id() in self._twin and self._twin[x.get_id()].eq(y):
                            out.add(x.get_id())
            self._kept[k] = (f, frozenset(out))
        return self._kept[k][1]

    def _reads(self, e: z3.ExprRef) -> frozenset[int]:
        """The post-state terms e contains (quantifier bodies included)."""
        return frozenset(x.get_id() for x in subterms(e) if x.get_id() in self._twin)

    def _parts(self, lemma_T, lemma_S) -> list:
        """Per conjunct of lemma_T: (conjunct, its post-state terms, whether
        it is lemma_S's conjunct once they are the pre-state's)."""
        k = (lemma_T.get_id(), lemma_S.get_id())
        if k not in self._lemma:
            pT, pS = conjuncts(lemma_T), conjuncts(lemma_S)
            if len(pT) != len(pS):
                pT, pS = [lemma_T], [lemma_S]
            self._lemma[k] = (lemma_T, lemma_S, [(c, self._reads(c), alpha_equal(z3.substitute(c, *self._back), d))
                                                 for c, d in zip(pT, pS)])
        return self._lemma[k][2]

    def residue(self, fs: list, lemma_T: z3.BoolRef, lemma_S: z3.BoolRef) -> list[z3.BoolRef]:
        """The conjuncts of ``lemma_T`` (``conjuncts``) that some instance of
        ``fs`` may change; [] when the frame alone preserves the lemma.  The
        caller's premise must contain ``lemma_S``."""
        kept = frozenset.intersection(*[self.unchanged(f) for f in fs]) if fs else frozenset()
        return [c for c, reads, same in self._parts(lemma_T, lemma_S) if not (same and reads <= kept)]


def _check_fresh(fs: list, rlimit: int, params: Mapping[str, Any]):
    """``fs`` in a z3 context of its own: (z3 result, solver, wall s, CPU s,
    resource units).  What earlier queries created in the process's context
    does not steer the search."""
    t0, c0 = time.perf_counter(), time.process_time()
    ctx = z3.Context()
    s = z3.Solver(ctx=ctx)
    for k, v in params.items():
        s.set(k, v)
    s.add(*[f.translate(ctx) for f in fs])
    r, _, _, u = _check(s, rlimit)
    return r, s, time.perf_counter() - t0, time.process_time() - c0, u


# z3 random seeds a consecution query z3 gave up on is asked again with
# (_solve_first; an encoding may set its own ``retry_seeds``)
RETRY_SEEDS = (1, 2)


def _solve_first(fs: list, enc: Encoding | None = None, rlimit: int | None = None):
    """_solve, after cheaper attempts with the encoding's first_attempts (if
    any), each of which counts only if it proves."""
    dt0 = dc0 = 0.0
    u0 = 0
    for params in getattr(enc, "first_attempts", None) or ():
        # (a proof needs no model to read back)
        r, _, t, c, u = _check_fresh(fs, getattr(enc, "first_rlimit", None) or limit_of(enc, rlimit), params)
        dt0, dc0, u0 = dt0 + t, dc0 + c, u0 + u
        if r == z3.unsat:
            return "proved", None, dt0, dc0, u0
    r, m, dt, dc, u = _solve(fs, enc, rlimit)
    if r != "unknown":
        return r, m, dt + dt0, dc + dc0, u + u0
    # Given up on: asked again, each time in a z3 context of its own under
    # the same limit.  z3's search (so an answer under a resource limit)
    # follows the ids of the terms the process made and its random seed: in
    # a process that had asked hundreds of queries z3 gave up on queries a
    # fresh one proves in seconds (``retry_fresh``: the same parameters
    # again; N = 4 SEQUENCER over FLUSH's RecvData x V2Digest, unknown at
    # 120 s per conjunct, every conjunct under 3 s alone), and building the
    # same formula in another order turned a CTI found with 2M units into
    # unknown at 200M under the default seed (``retry_seeds``).  A sat or
    # unsat under any seed is an answer.
    params = getattr(enc, "solver_params", None) or {}
    retries = ([params] if getattr(enc, "retry_fresh", False) else []) + [
        {**params, "smt.random_seed": k} for k in getattr(enc, "retry_seeds", RETRY_SEEDS)]
    asked = enc.query(fs) if hasattr(enc, "query") else fs
    for ps in retries:
        rr, s, t, c, uu = _check_fresh(asked, limit_of(enc, rlimit), ps)
        dt, dc, u = dt + t, dc + c, u + uu
        if rr == z3.unsat:
            return "proved", None, dt + dt0, dc + dc0, u + u0
        if rr == z3.sat:
            # the model in the caller's context (its decoder reads it there)
            return "cti", s.model().translate(fs[0].ctx), dt + dt0, dc + dc0, u + u0
    return r, m, dt + dt0, dc + dc0, u + u0


def _solve_split(inv_S, fs: list, lemma_T, enc: Encoding | None = None, goals: list | None = None,
                 rlimit: int | None = None):
    r"""``inv_S /\ f /\ ~lemma_T`` for each ``f`` of ``fs`` (the instances of
    one action, ``Encoding.split_instances``): a CTI as soon as one part has
    one (its model and that part), else unknown if one part is, else proved;
    the seconds and resource units are the sums.  The goal is asked per
    conjunct of ``lemma_T`` (``conjuncts``) always under
    ``Encoding.split_goals``, and past ``Encoding.split_goal_rlimit`` on it
    whole.  ``goals`` (parallel to ``fs``, ``Frame.residue``): the
    conjuncts of ``lemma_T`` each ``f`` may change; [] asks nothing, None
    the whole lemma.  ``rlimit``: each check's limit (``limit_of``).
    Returns (result, model, wall s, CPU s, resource units, part)."""
    worst, dt, dc, du = "proved", 0.0, 0.0, 0
    split_always = getattr(enc, "split_goals", False)
    rlimit_all = getattr(enc, "split_goal_rlimit", None)
    n_all = len(conjuncts(lemma_T))
    for i, f in enumerate(fs):
        residue = goals[i] if goals is not None else None
        if residue == []:
            continue        # the frame preserves every conjunct (Frame)
        goal = lemma_T if residue is None or len(residue) == n_all else z3.And(*residue)
        always, whole = split_always, rlimit_all
        parts = conjuncts(goal) if always or whole else [goal]
        if len(parts) == 1:
            always, whole = False, None
        m = None
        if always:
            r = "unknown"
        else:
            # every query below negates what it asks: the whole goal, or one conjunct
            r, m, t, c, u = _solve_first([inv_S, f, z3.Not(goal)], enc, whole or rlimit)
            dt, dc, du = dt + t, dc + c, du + u
        if r == "unknown" and (always or whole):
            r = "proved"
            for conj in parts:
                rc, m, t, c, u = _solve_first([inv_S, f, z3.Not(conj)], enc, rlimit)
                dt, dc, du = dt + t, dc + c, du + u
                if m is not None:
                    break
                if rc != "proved":
                    r = rc
        if m is not None:
            return "cti", m, dt, dc, du, f
        if r != "proved":
            worst = r
    return worst, None, dt, dc, du, z3.Or(*fs)


class Reachability:
    """The bounded model's reachable states, explored once (breadth first, up
    to ``max_states``), for CTI lookup.

    ``path(state)`` is a shortest path to ``state`` (the explorer's BFS
    parents) when it was reached; None otherwise.  ``reachable(state)`` is
    True, False (the exploration was complete and never met it) or None
    (not met within ``max_states``: unknown)."""

    def __init__(self, enc: Encoding, max_states: int | None = None) -> None:
        self.enc = enc
        self.max_states = max_states if max_states is not None else enc.reach_max_states
        self._res = None
        self._trace = None
        self.seconds = 0.0

    def _explored(self):
        if self._res is None:
            t0 = time.perf_counter()
            self._res = explore(self.enc.model(), check_invariants=False, max_states=self.max_states)
            self.seconds = time.perf_counter() - t0
        return self._res

    def violation_trace(self) -> list:
        """The explorer's shortest counterexample to the encoding's properties
        in the bounded model, as (label, state) pairs; empty when none."""
        if self._trace is None:
            res = explore(self.enc.model(), check_invariants=list(self.enc.properties),
                          max_states=self.max_states)
            self._trace = res.violation.trace if res.violation else []
        return self._trace

    def path(self, state) -> list[str] | None:
        p = self._explored().path_to(state)
        if p is None:
            return None
        return ["Init"] + [str(lab) for lab, _ in p[1:]]

    def reachable(self, state) -> bool | None:
        res = self._explored()
        if state in res.parents:
            return True
        if not self.enc.fits(state):
            return None     # a state the bounded model cannot hold (another N)
        return False if res.complete else None


# A flawed variant's open consecution queries are answered within this
# resource limit (or the query's, if smaller): their reachable CTI comes
# from the pinned search (_first_break), and a query z3 gives up on is
# reported as unknown.
FLAWED_RLIMIT = 5_000_000


def run(enc: Encoding, *, rlimit: int | None = None, classify: bool = True,
        only: frozenset[str] | None = None, implication: bool = True,
        rows: frozenset[tuple[str, str]] | None = None) -> list[Query]:
    """All queries for one encoding, in order: initiation, consecution, implication.
    ``only``: ask initiation and consecution of these lemmas alone (every
    lemma is still a premise); ``implication``: ask the properties (a shard
    of ``registry.run_isolated``).  ``rows``: ask only these consecution rows
    (action, lemma), nothing else (``registry.run_isolated``'s retry).
    ``rlimit``: every query's resource limit (None: ``limit_of(enc)``)."""
    out: list[Query] = []
    P, V = enc.protocol, enc.variant
    rlimit = limit_of(enc, rlimit)
    S, T = enc.fresh("s"), enc.fresh("t")
    reach = Reachability(enc) if classify else None
    lemmas = enc.lemmas
    row_lemmas = None if rows is None else {name for _, name in rows}
    asked = {name: L for name, L in lemmas.items() if (only is None or name in only)
             and (row_lemmas is None or name in row_lemmas)}
    for name, L in asked.items() if rows is None else ():
        r, _, dt, dc, du = _solve([enc.init(S), z3.Not(L(S))], enc, rlimit)
        out.append(Query(P, V, f"initiation:{name}", r, dt, cpu_seconds=dc, rlimit=du))
    L_S = {name: L(S) for name, L in lemmas.items()}
    inv_S = z3.And(*L_S.values())
    frame = Frame(S, T)
    acts = list(enc.actions(S, T))
    by_action: dict[str, list[z3.BoolRef]] = {}
    for lab, f in acts:
        by_action.setdefault(lab.action, []).append(f)
    pinned = _first_break(enc, reach, S, rlimit) if reach is not None and enc.expect_cti else {}
    open_rlimit = min(rlimit, FLAWED_RLIMIT) if enc.expect_cti else rlimit
    split = getattr(enc, "split_instances", False)
    L_T = {name: L(T) for name, L in asked.items()}   # (only what is asked: every term steers z3)
    for action, fs in by_action.items():
        parts = [[f] for f in fs] if split and len(fs) > 1 else [fs]
        for name, L in asked.items():
            if rows is not None and (action, name) not in rows:
                continue
            q, m = None, None
            hit = pinned.get((action, name))
            if hit is not None:
                pre_s, post_s, path = hit
                fq = [inv_S, z3.Or(*fs), z3.Not(L(T))]
                r, m, dt, dc, du = _solve(fq + [enc.value(S, pre_s), enc.value(T, post_s)], enc, rlimit)
                if m is not None:
                    q = Query(P, V, f"consecution:{action}:{name}", "cti", dt, reachable=True, path=path,
                              cpu_seconds=dc, rlimit=du)
            if q is None:
                goals = [frame.residue(part, L_T[name], L_S[name]) for part in parts]
                r, m, dt, dc, du, part = _solve_split(inv_S, [z3.Or(*part) for part in parts], L_T[name], enc,
                                                      goals, open_rlimit)
                fq = [inv_S, part, z3.Not(L_T[name])]
                q = Query(P, V, f"consecution:{action}:{name}", r, dt, cpu_seconds=dc, rlimit=du,
                          by_frame=all(g == [] for g in goals))
                if reach is not None and m is not None:
                    m = _classify(enc, reach, q, fq, S, rlimit) or m
            if m is not None:
                pre, post = enc.decode(m, S), enc.decode(m, T)
                lab = next((str(l) for l, f in acts if l.action == action
                            and z3.is_true(m.eval(f, model_completion=True))), action)
                q.action, q.pre, q.post = lab, enc.pretty(pre), enc.pretty(post)
                if reach is not None and q.reachable is None:
                    q.reachable = reach.reachable(pre)
                    q.path = reach.path(pre)
            out.append(q)
    # a property is its lemma unless the encoding writes it apart (as the spec has it)
    written = getattr(enc, "property_formulas", None) or {}
    for name in enc.properties if implication and rows is None else ():
        r, _, dt, dc, du = _solve([inv_S, z3.Not(written.get(name, lemmas[name])(S))], enc, rlimit)
        out.append(Query(P, V, f"implication:{name}", r, dt, cpu_seconds=dc, rlimit=du))
    for q in out:
        q.expected_cti = enc.expect_cti
        q.members = enc.members
    return out


def _first_break(enc: Encoding, reach: "Reachability", S, rlimit: int) -> dict:
    """Where the explorer's shortest counterexample to the property (in the
    bounded model) first leaves the invariant: the step s -> t whose
    pre-state satisfies every lemma and whose post-state breaks some.  Those
    (action, lemma) queries then have a CTI whose pre-state is reachable,
    and the path's prefix is a shortest path to it.  Returns
    {(action, lemma): (s, t, path to s)}."""
    trace = reach.violation_trace()
    if not trace:
        return {}
    Ls = {name: L(S) for name, L in enc.lemmas.items()}
    inv_S = z3.And(*Ls.values())
    for i in range(len(trace) - 1):
        r = _solve([enc.value(S, trace[i][1]), z3.Not(inv_S)], enc, rlimit)[0]
        if r != "proved":       # the pre-state is already outside the invariant
            return {}
        lab, t = trace[i + 1]
        broken = [name for name, L_S in Ls.items()
                  if _solve([enc.value(S, t), z3.Not(L_S)], enc, rlimit)[0] == "cti"]
        if broken:
            path = ["Init"] + [str(lb) for lb, _ in trace[1:i + 1]]
            return {(lab.action, name): (trace[i][1], t, path) for name in broken}
    return {}


def _classify(enc: Encoding, reach: "Reachability", q: Query, fs: list, S, rlimit: int,
              tries: int = 4) -> z3.ModelRef | None:
    """Look, a few times, for a CTI of the same query within the bounded
    model's domain whose pre-state the bounded model reaches, blocking each
    unreachable pre-state found.  Returns the reachable CTI's z3 model (and
    sets q.reachable / q.path), or None (the caller classifies the first
    CTI)."""
    dom = enc.bounded(S)
    if dom is None:
        return None
    blocks: list = []
    for _ in range(tries):
        r, m = _solve(fs + [dom] + blocks, enc, rlimit)[:2]
        if m is None:
            return None
        pre = enc.decode(m, S)
        if reach.reachable(pre):
            q.reachable, q.path = True, reach.path(pre)
            return m
        blocks.append(z3.Not(enc.value(S, pre)))
    return None


def verdict(qs: list[Query]) -> bool:
    """A fixed variant holds when every query is proved.  A flawed variant
    holds when at least one consecution query yields a counterexample to
    induction whose pre-state the bounded model reaches (a real violation,
    shown with its shortest path).  Its other queries are reported as they
    come: the lemmas are the fixed variant's, so an unreachable CTI there
    only says the flawed protocol would need other lemmas."""
    if not qs:
        return False
    if any(q.expected_cti for q in qs):
        return any(q.result == "cti" and q.reachable is True for q in qs)
    return all(q.result == "proved" for q in qs)


# --- the encoding against the explicit-state model --------------------------------
#
# A test compares an encoding with its model on many edges and states; a
# state is the source of some edges and the target of others, and building
# its z3 value costs more than z3's answer on it: ``value_of`` builds it once
# per encoding, state variables and state (``built_once``: any such term).

_BUILT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def built_once(enc: Encoding, key, build: Callable[[], Any]) -> Any:
    """``build()``, called once per encoding and ``key`` (a term of symbolic
    states names them by their tag: ``fresh`` names its constants after it)."""
    memo = _BUILT.setdefault(enc, {})
    v = memo.get(key)
    if v is None:
        v = memo[key] = build()
    return v


def value_of(enc: Encoding, X, s) -> z3.BoolRef:
    """``enc.value(X, s)``, built once per encoding, state variables and
    model state."""
    return built_once(enc, ("value", X["tag"], s), lambda: enc.value(X, s))


def edge_in_relation(enc: Encoding, s, labels, t, S=None, T=None, acts=None) -> bool:
    """Does the z3 action named by one of ``labels`` relate model state ``s``
    to model state ``t``?  (An edge of the model's graph must.)  ``acts``:
    ``list(enc.actions(S, T))``, built once by a caller checking many edges."""
    S = S if S is not None else enc.fresh("s")
    T = T if T is not None else enc.fresh("t")
    want = {(lab.action, tuple(lab.params)) for lab in labels}
    fs = [f for lab, f in (acts if acts is not None else enc.actions(S, T))
          if (lab.action, tuple(lab.params)) in want]
    if not fs:
        return False
    solver = _solver(enc)
    solver.add(*enc.query([value_of(enc, S, s), value_of(enc, T, t), z3.Or(*fs)]))
    r = solver.check()
    if r == z3.unknown:   # neither a yes nor a no: never count it as either
        raise RuntimeError(f"z3 answered unknown on an edge labelled {sorted(map(str, labels))}")
    return r == z3.sat


def satisfies_invariant(enc: Encoding, s, S=None, inv=None) -> bool:
    """Does model state ``s`` satisfy the inductive invariant (every lemma)?
    ``inv``: ``enc.inv(S)``, built once by a caller checking many states."""
    S = S if S is not None else enc.fresh("s")
    solver = _solver(enc)
    solver.add(*enc.query([value_of(enc, S, s), z3.Not(inv if inv is not None else enc.inv(S))]))
    return solver.check() == z3.unsat


def extra_successor(enc: Encoding, s, successors, S=None, T=None, nxt=None):
    """A successor of ``s`` that the z3 relation allows and the model lacks
    (decoded into a model state), or None when there is none.  ``nxt``:
    ``enc.next(S, T)``, built once by a caller checking many states."""
    S = S if S is not None else enc.fresh("s")
    T = T if T is not None else enc.fresh("t")
    solver = _solver(enc)
    solver.add(*enc.query([value_of(enc, S, s), nxt if nxt is not None else enc.next(S, T),
                           *[z3.Not(value_of(enc, T, t)) for t in successors]]))
    if solver.check() != z3.sat:
        return None
    return enc.decode(solver.model(), T)


def readers(m: z3.ModelRef) -> tuple:
    """How a decoder reads a z3 model: (ev, b, n), the value of a term, of a
    Boolean term as True or False, and of an integer term as an int."""
    ev = lambda e: m.eval(e, model_completion=True)  # noqa: E731
    return ev, (lambda e: z3.is_true(ev(e))), (lambda e: ev(e).as_long())


def z3_set(vals) -> Any:
    """A set of ints as a z3 array Int -> Bool."""
    a = z3.K(z3.IntSort(), z3.BoolVal(False))
    for v in sorted(vals):
        a = z3.Store(a, v, True)
    return a


def first(cases: Iterable[tuple[Any, Any]], default) -> Any:
    """The value of the first (condition, value) pair whose condition holds,
    else ``default``: an If chain, the spec's CHOOSE over an ordered set."""
    t = default
    for cond, val in reversed(list(cases)):
        t = z3.If(cond, val, t)
    return t


def select(x, cases: Iterable[tuple[Any, Any]], default=None) -> Any:
    """The value of the (key, value) pair whose key is the term x (a member:
    a function of members applied to a symbolic one).  ``default`` where x
    is none of the keys; None: the last pair's value (x ranges over the
    keys, so the chain need not test the last one)."""
    cases = list(cases)
    if default is None:
        *cases, (_, default) = cases
    return first(((x == k, v) for k, v in cases), default)


def join(*ds: dict) -> dict:
    """The updates of ``ds`` in one (field -> {key: term}, or field -> term;
    a later update of a key wins), for an encoding's frame."""
    out: dict = {}
    for d in ds:
        for f, u in d.items():
            if isinstance(u, dict):
                out.setdefault(f, {}).update(u)
            else:
                out[f] = u
    return out


def unchanged(S, T, upd: dict, fields: Iterable[str]) -> list:
    """T's ``fields`` equal S's updated by ``upd`` (field -> {key: term} for a
    field that is a dict of terms, field -> term for one term): the spec's
    primed values, every one not updated UNCHANGED."""
    cs = []
    for f in fields:
        if isinstance(S[f], dict):
            u = upd.get(f, {})
            cs += [T[f][k] == u.get(k, v) for k, v in S[f].items()]
        else:
            cs.append(T[f] == upd.get(f, S[f]))
    return cs
