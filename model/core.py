"""The explicit-state model API and the breadth-first explorer.

Theory of operation
-------------------
A protocol model is a Python mirror of a TLA+ spec.  It is built from the
spec's CONSTANTS (parsed from the model's ``.cfg``) and exposes:

* ``variables``: the spec's VARIABLES, in declaration order;
* ``init()``: the initial states;
* ``next(state)``: pairs ``(Label, successor)``, one per enabled action
  instance, where ``Label`` names the TLA+ action and its parameters;
* ``invariants``: named state predicates, same names as the spec's;
* ``constraint(state)``: the MC module's CONSTRAINT (True when absent);
* optionally ``kernel()``: a :class:`Kernel`, the same transition system over
  a leaner encoding of the states (plain tuples of ints), which the explorer
  searches instead and decodes back (see below).

States are ``typing.NamedTuple`` instances whose fields are the spec's
variables and whose values use the canonical encoding of
:mod:`groupcheck.model.values`; ``state._replace(x=...)`` is the model's
``x' = ...`` and every field not replaced is UNCHANGED.

The explorer follows TLC's breadth-first search: it checks invariants on
every new state, so the counterexample it returns is a shortest one and has
the same length as TLC's; and, like TLC, a successor that falls outside the
CONSTRAINT is checked against the invariants but neither counted nor
expanded (measured: TLC finds Raincore's F2 at depth 10 that way).

Kernels.  The readable transcription (``next`` over ``Fn``-valued states)
is what every consumer of model states uses (proofs, replay, lock-step,
conformance).  Its cost per successor (an ``Fn`` built and hashed per
EXCEPT, a ``Label`` per successor, guards evaluated through helper calls)
bounds the search rate, so a model may also offer ``kernel()``: the same
actions over states encoded as tuples of ints (member-indexed tuples for
the fixed-domain functions, small integers for messages), with precomputed
labels, and a ``decode`` back to the public state.  The explorer then
searches kernel states (hashing a tuple of ints is C code) and decodes them
when a consumer asks (``ExploreResult.numbered`` decodes on first use; the
invariants are evaluated on decoded states).  A kernel must give the same
graph as ``next``: each model with one has a test comparing the two on every
reachable state of its manifest models, and the link compares the kernel's
graph with TLC's.  ``explore(..., kernel=False)`` searches with ``next``.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import networkx as nx

from .values import interning, normalize, to_tla


class Label(NamedTuple):
    """An action instance: the TLA+ action name and its parameters."""

    action: str
    params: tuple = ()

    def __str__(self) -> str:
        if not self.params:
            return self.action
        return f"{self.action}({', '.join(to_tla(p) if not isinstance(p, str) else p for p in self.params)})"


State = Any  # a NamedTuple of canonical values

_UNCHANGED = object()


def state_type(cls: type) -> type:
    """Class decorator for a model's state NamedTuple: gives it a faster
    ``_replace`` (keyword-only parameters defaulting to "UNCHANGED", one
    tuple built directly) with the same meaning as the standard one.  The
    standard ``_replace`` pops a dict once per field and checks the length;
    successor generation calls ``_replace`` once or twice per successor."""
    fields = cls._fields
    params = ", ".join(f"{f}=_U" for f in fields)
    values = ", ".join(f"self[{i}] if {f} is _U else {f}" for i, f in enumerate(fields))
    src = f"def _replace(self, *, {params}):\n    return _new(_cls, ({values},))\n"
    namespace = {"_U": _UNCHANGED, "_new": tuple.__new__, "_cls": cls}
    exec(src, namespace)
    replace = namespace["_replace"]
    replace.__qualname__ = f"{cls.__qualname__}._replace"
    replace.__doc__ = "Return a new state with the given variables replaced (the others UNCHANGED)."
    cls._replace = replace
    return cls


class Kernel:
    """The fast encoding of a model's transition system (see the module
    docstring).  ``init()`` and ``next(k)`` mirror the model's over kernel
    states (hashable, compared by value); ``decode(k)`` is the model's state
    for kernel state ``k``; ``constraint(k)`` is the CONSTRAINT, or the
    attribute is None when the model has none."""

    constraint: Callable[[Any], bool] | None = None

    def init(self) -> Iterable[Any]:
        raise NotImplementedError

    def next(self, k: Any) -> Iterable[tuple[Label, Any]]:
        raise NotImplementedError

    def decode(self, k: Any) -> State:
        raise NotImplementedError


class DecodedStates(Sequence):
    """The explorer's numbered kernel states, decoded to model states on
    first use (all at once, then kept)."""

    def __init__(self, raw: list, decode: Callable[[Any], State]) -> None:
        self.raw = raw
        self._decode = decode
        self._list: list | None = None

    def _states(self) -> list:
        if self._list is None:
            with no_cyclic_gc():
                self._list = list(map(self._decode, self.raw))
        return self._list

    def __getitem__(self, i):
        return self._states()[i]

    def __len__(self) -> int:
        return len(self.raw)

    def __iter__(self):
        return iter(self._states())


class Model:
    """Base class for protocol models.  Subclasses set ``protocol``,
    ``variables`` and ``invariants`` and implement ``init`` and ``next``."""

    protocol: str = ""
    variables: tuple[str, ...] = ()

    def __init__(self, constants: Mapping[str, Any]) -> None:
        self.constants = dict(constants)

    @property
    def invariants(self) -> Mapping[str, Callable[[State], bool]]:
        return {}

    def init(self) -> Iterable[State]:
        raise NotImplementedError

    def next(self, s: State) -> Iterable[tuple[Label, State]]:
        raise NotImplementedError

    def constraint(self, s: State) -> bool:
        return True

    def transcribed_kernel(self, base: type, make: Callable[[Any], "Kernel"]) -> "Kernel | None":
        """``make(self)``, unless this model's class overrides one of the
        methods ``base``'s kernel transcribes (``base._KERNEL_TRANSCRIBES``):
        a subclass that changes an action (a test's variant) is searched
        with ``next``."""
        cls = type(self)
        if any(getattr(cls, n) is not getattr(base, n) for n in base._KERNEL_TRANSCRIBES):
            return None
        return make(self)

    # --- encoding -----------------------------------------------------------
    def canonical(self, s: State) -> tuple:
        """The state as TLC would print it, normalised: a tuple of
        ``(variable, value)`` pairs in variable order."""
        return tuple((v, normalize(getattr(s, v))) for v in self.variables)

    def enabled(self, s: State, action: str) -> list[tuple[Label, State]]:
        return [(lab, t) for lab, t in self.next(s) if lab.action == action]

    def kernel(self) -> Kernel | None:
        """The model's fast encoding, or None (the default: the explorer
        searches with ``next``)."""
        return None


@dataclass
class Violation:
    invariant: str
    trace: list[tuple[Label | None, State]]  # (action that led here, state); first label is None

    @property
    def depth(self) -> int:
        return len(self.trace)


@dataclass
class ExploreResult:
    distinct_states: int
    states_generated: int
    depth: int
    seconds: float
    violation: Violation | None = None
    # build_graph: the edges as state numbers, (i, j) -> set of labels; the
    # networkx ``graph`` is made from them on first use (the link compares
    # numbers and never needs it)
    edge_map: dict | None = field(default=None, repr=False)
    complete: bool = True
    init_states: list = field(default_factory=list)
    # The numbered search: the states in the order found, and per number the
    # BFS parent's number (-1 for an initial state) and the label of the edge
    # from it.  Following it back gives a shortest path (used to show how a
    # proof's counterexample to induction is reached).  After a search with
    # a kernel, ``numbered`` is a DecodedStates (model states, decoded on
    # first use; ``.raw`` holds the kernel states).
    numbered: list = field(default_factory=list, repr=False)
    parent_of: list = field(default_factory=list, repr=False)
    label_of: list = field(default_factory=list, repr=False)

    @property
    def graph(self) -> nx.DiGraph | None:
        """The state graph (nodes are states, edges carry ``labels``), or None
        without ``build_graph``; built on first use."""
        if self.edge_map is None:
            return None
        cached = self.__dict__.get("_graph")
        if cached is None:
            st = self.numbered
            cached = nx.DiGraph()
            cached.add_nodes_from(st)
            cached.add_edges_from((st[i], st[j], {"labels": labs}) for (i, j), labs in self.edge_map.items())
            self.__dict__["_graph"] = cached
        return cached

    @property
    def parents(self) -> dict:
        """state -> (BFS parent or None, label of the edge from it), built on
        first use (the search itself keeps numbers only)."""
        cached = self.__dict__.get("_parents")
        if cached is None:
            st, pa, la = self.numbered, self.parent_of, self.label_of
            cached = {s: (st[pa[i]] if pa[i] >= 0 else None, la[i]) for i, s in enumerate(st)}
            self.__dict__["_parents"] = cached
        return cached

    def path_to(self, s: State) -> list[tuple[Label | None, State]] | None:
        """A shortest path from an initial state to ``s``, or None when ``s``
        was not reached."""
        if s not in self.parents:
            return None
        out = []
        cur: State | None = s
        while cur is not None:
            prev, lab = self.parents[cur]
            out.append((lab, cur))
            cur = prev
        out.reverse()
        return out


def explore(
    model: Model,
    *,
    check_invariants: bool | Iterable[str] = True,
    build_graph: bool = False,
    max_states: int | None = None,
    kernel: bool = True,
) -> ExploreResult:
    """Breadth-first exploration of the model's reachable states.

    ``check_invariants``: True for all, False for none, or the names to check.
    ``build_graph``: also return the state graph (nodes are states, edges
    carry the set of action labels).  Stops at the first violated invariant.
    ``kernel``: search with the model's kernel when it has one (the result
    is the same; False searches with ``next``).
    """
    k = model.kernel() if kernel else None
    with interning(), no_cyclic_gc():
        return _explore(model, check_invariants=check_invariants, build_graph=build_graph, max_states=max_states,
                        kern=k)


class no_cyclic_gc:
    """Context manager: the cyclic garbage collector off for the block (and
    back to its previous setting after).  A search allocates millions of
    tuples that form no cycles (states, messages, ``Fn`` values), and each
    generation-2 collection walks all of them: measured, 30-40 % of
    SEQUENCER's search time.  Reference counting still frees everything
    that becomes unreachable; a cycle made during the block is collected
    after it."""

    def __enter__(self) -> "no_cyclic_gc":
        self._was = gc.isenabled()
        gc.disable()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._was:
            gc.enable()


def active_invariants(model: Model, check_invariants) -> list:
    """The (name, predicate) pairs a search checks: all (True), none (False)
    or the named ones (an unknown name is an error)."""
    invs = model.invariants
    if check_invariants is True:
        return list(invs.items())
    if check_invariants is False:
        return []
    names = list(check_invariants)
    unknown = [n for n in names if n not in invs]
    if unknown:
        raise KeyError(f"{model.protocol}: unknown invariant(s) {unknown}; known: {sorted(invs)}")
    return [(n, invs[n]) for n in names]


def search_parts(model: Model, kern: Kernel | None):
    """What a search needs of a model, in the kernel's encoding when ``kern``
    is given: (whether there is a CONSTRAINT, the CONSTRAINT, the successor
    function, the initial states, and the decoder to model states or None).
    The serial explorer and model/parallel.py's workers share it."""
    if kern is None:
        return (type(model).constraint is not Model.constraint, model.constraint, model.next,
                model.init(), None)
    constrained = kern.constraint is not None
    return (constrained, kern.constraint if constrained else (lambda k: True), kern.next,
            kern.init(), kern.decode)


def _explore(model: Model, *, check_invariants, build_graph: bool, max_states: int | None,
             kern: Kernel | None = None) -> ExploreResult:
    t0 = time.perf_counter()
    active = active_invariants(model, check_invariants)

    # States are numbered in the order they are found (breadth-first, so the
    # numbering is also TLC's exploration order with one worker); the visited
    # set maps a state to its number and the search keeps, per number, the
    # parent's number and the label of the action that found it.
    index: dict[State, int] = {}
    states: list[State] = []
    parents: list[int] = []
    labels: list[Label | None] = []
    edges: dict[tuple[int, int], set] | None = {} if build_graph else None
    constrained, constraint, successors, initial, decode = search_parts(model, kern)
    lookup = index.get
    generated = 0
    depth = 0

    def violated(s: State) -> str | None:
        if decode is not None:
            s = decode(s)
        for name, pred in active:
            if not pred(s):
                return name
        return None

    def trace_to(i: int) -> list[tuple[Label | None, State]]:
        out = []
        while i >= 0:
            out.append((labels[i], states[i] if decode is None else decode(states[i])))
            i = parents[i]
        out.reverse()
        return out

    def finish(violation: Violation | None, complete: bool = True) -> ExploreResult:
        return ExploreResult(
            distinct_states=len(states),
            states_generated=generated,
            depth=depth,
            seconds=time.perf_counter() - t0,
            violation=violation,
            edge_map=edges,
            complete=complete,
            init_states=inits if decode is None else [decode(x) for x in inits],
            numbered=states if decode is None else DecodedStates(states, decode),
            parent_of=parents,
            label_of=labels,
        )

    inits = []
    frontier: list[int] = []
    for s in initial:
        generated += 1
        if s in index or not constraint(s):
            continue
        i = index[s] = len(states)
        states.append(s)
        parents.append(-1)
        labels.append(None)
        inits.append(s)
        depth = 1
        bad = violated(s) if active else None
        if bad:
            return finish(Violation(bad, trace_to(i)))
        frontier.append(i)

    limit = max_states if max_states is not None else -1
    while frontier:
        nxt: list[int] = []
        found_deeper = False
        for i in frontier:
            s = states[i]
            for lab, t in successors(s):
                generated += 1
                if constrained:
                    # A visited state satisfies the CONSTRAINT (no other is
                    # added), so only a new one needs the check.
                    j = lookup(t)
                    if j is None:
                        if not constraint(t):
                            # TLC checks invariants on such a successor too (it is a
                            # state the spec reaches) but neither counts nor expands it.
                            bad = violated(t) if active else None
                            if bad:
                                last = t if decode is None else decode(t)
                                return finish(Violation(bad, trace_to(i) + [(lab, last)]))
                            continue
                        j = n = index[t] = len(states)
                    else:
                        n = -1
                else:
                    n = len(states)
                    j = index.setdefault(t, n)
                if edges is not None:
                    e = (i, j)
                    labs = edges.get(e)
                    if labs is None:
                        edges[e] = {lab}
                    else:
                        labs.add(lab)
                if j != n:
                    continue
                states.append(t)
                parents.append(i)
                labels.append(lab)
                found_deeper = True
                if active:
                    bad = violated(t)
                    if bad:
                        depth += 1
                        return finish(Violation(bad, trace_to(j)))
                if n + 1 == limit:
                    depth += 1
                    return finish(None, complete=False)
                nxt.append(j)
        if found_deeper:
            depth += 1
        frontier = nxt
    return finish(None)


def canonical_states(model: Model, states: Iterable[State]) -> list:
    """The canonical form (TLC's encoding) of each state, in order."""
    if type(model).canonical is Model.canonical:
        # Successor states share the values of the variables an action leaves
        # UNCHANGED, so normalising each value object once (keyed by identity,
        # the object kept alive in the memo) saves most of the work.
        memo: dict[int, tuple[Any, Any]] = {}
        variables = model.variables

        def norm(v):
            hit = memo.get(id(v))
            if hit is None:
                hit = memo[id(v)] = (v, normalize(v))
            return hit[1]

        return [tuple([(var, norm(getattr(s, var))) for var in variables]) for s in states]
    return [model.canonical(s) for s in states]
