"""Read TLC's ``-dump dot,actionlabels`` state graph and compare graphs.

Theory of operation
-------------------
Link (1) of the chain of evidence (docs/architecture.md) says a Python model's reachable
graph equals TLC's.  TLC's side comes from ``-dump dot,actionlabels FILE``,
which writes (measured on the bundled TLC 2.15, 2020-01-30)::

    strict digraph DiskGraph {
    ...
    -4885860343140238487 [label="/\\\\ x = 0\\n/\\\\ s = \\"a\\"",style = filled]   initial state
    -4885860343140238487 -> 4412425158722398154 [label="Inc",color=...];      edge, action name
    4412425158722398154 [label="/\\\\ x = 1\\n/\\\\ s = \\"a\\""];               first-seen successor
    {rank = same; ...}
    }

Nodes are named by TLC's 64-bit fingerprints; a successor's node line comes
right after the first edge that reaches it, so edges are collected by
fingerprint and resolved at the end.  The label is a state as TLC prints it
(``/\\ var = value`` lines, or ``var = value`` for one variable) escaped for a
dot string: ``\\`` -> ``\\\\``, ``"`` -> ``\\"``, newline -> ``\\n``.  TLA+
strings inside carry their own escapes, so a quote in a TLA+ string is
``\\\\\\"`` in the file: escaped twice.  Undoing the dot layer is done with
four ``str.replace`` calls (``\\\\`` first, through a sentinel), which is exact
because every backslash of a dot string starts an escape pair.  A transition
taken by two actions, or twice by one (the 2020 TLC writes duplicate edges),
becomes one networkx edge whose ``labels`` set holds the action names.

Each node becomes the canonical state ``tuple((v, normalize(value)) for v in
variables)``, exactly :meth:`Model.canonical`.  Parsing is streamed line by
line and values are parsed once per distinct text (see
:func:`groupcheck.model.tlc_values.parse_state`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import networkx as nx

from .tlc_values import TLAValueError, parse_state
from .values import sort_key

__all__ = ["DotError", "StateGraph", "read_dot", "read_dot_graph", "compare_graphs", "unescape_dot"]


class DotError(ValueError):
    """A dot dump that cannot be read; names the file and line."""


_STR = r'"([^"\\]*(?:\\.[^"\\]*)*)"'  # dot string body, unrolled for speed
_NODE = re.compile(r"(-?\d+) \[label=" + _STR + r"(.*)")
_EDGE = re.compile(r"(-?\d+) -> (-?\d+)(?: \[label=" + _STR + r")?(.*)")
_SENTINEL = "\x00"


def unescape_dot(s: str) -> str:
    """Undo dot-string escaping (``\\\\``, ``\\"``, ``\\n``; other pairs such
    as ``\\l`` become a newline too, as in Graphviz)."""
    if "\\" not in s:
        return s
    s = s.replace("\\\\", _SENTINEL).replace('\\"', '"').replace("\\n", "\n")
    if "\\" in s:
        s = re.sub(r"\\[lr]", "\n", s)
    return s.replace(_SENTINEL, "\\")


def read_dot(path: str | Path, variables: Sequence[str]) -> "StateGraph":
    """TLC's dumped state graph over canonical states, by numbers (see
    :class:`StateGraph`; ``dot_nodes`` is the number of distinct
    fingerprints read: it exceeds the state count only if two fingerprints
    print the same state)."""
    path = Path(path)
    variables = tuple(variables)
    varset = set(variables)
    node_label: dict[str, tuple[str, int]] = {}  # fingerprint -> (escaped label, line number)
    initial: set[str] = set()
    excluded: set[str] = set()  # states TLC marks as outside the model (newer TLCs)
    edges: dict[tuple[str, str], set[str]] = {}
    with path.open(encoding="utf-8", errors="strict") as f:
        for lineno, line in enumerate(f, 1):
            c = line[:1]
            if not (c.isdigit() or c == "-"):
                continue  # header, attributes, rank lines, closing braces
            sp = line.find(" ")
            if line.startswith("->", sp + 1):
                m = _EDGE.match(line)
                if m is None:
                    raise DotError(f"{path}:{lineno}: unreadable edge line: {line[:120]!r}")
                a, b, lab, rest = m.groups()
                if 'style="dashed"' in rest:  # stuttering edges (newer TLCs, on request)
                    continue
                labels = edges.get((a, b))
                if labels is None:
                    labels = edges[(a, b)] = set()
                if lab:
                    # "Action" or "Action\npredicate" (newer TLCs): keep the name.
                    labels.add(unescape_dot(lab).split("\n", 1)[0])
            elif line.startswith("[", sp + 1):
                m = _NODE.match(line)
                if m is None:
                    raise DotError(f"{path}:{lineno}: unreadable node line: {line[:120]!r}")
                fp, lab, rest = m.groups()
                if "lightyellow" in rest:
                    excluded.add(fp)
                    continue
                if fp not in node_label:
                    node_label[fp] = (lab, lineno)
                if rest.startswith(",style = filled]"):
                    initial.add(fp)
            else:
                raise DotError(f"{path}:{lineno}: neither a node nor an edge: {line[:120]!r}")

    cache: dict[str, Any] = {}
    number: dict[tuple, int] = {}        # canonical state -> its number
    states: list[tuple] = []
    num_of: dict[str, int] = {}          # fingerprint -> number
    for fp, (lab, lineno) in node_label.items():
        try:
            d = parse_state(unescape_dot(lab), cache)
        except TLAValueError as e:
            raise DotError(f"{path}:{lineno}: state {fp}: {e}") from None
        if d.keys() != varset:
            missing = sorted(varset - d.keys())
            extra = sorted(d.keys() - varset)
            raise DotError(
                f"{path}:{lineno}: state {fp} does not match the variables {list(variables)}"
                f" (missing {missing}, unexpected {extra})"
            )
        # parse_value's results are already normalised (tested), so the
        # normalize() of Model.canonical is the identity here and is skipped:
        # it dominated the run time on large dumps.
        st = tuple([(v, d[v]) for v in variables])
        i = number.setdefault(st, len(states))
        if i == len(states):
            states.append(st)
        num_of[fp] = i
    out: dict[tuple[int, int], set] = {}
    for (a, b), labels in edges.items():
        if a in excluded or b in excluded:
            continue
        try:
            e = (num_of[a], num_of[b])
        except KeyError as k:
            raise DotError(f"{path}: edge {a} -> {b} names state {k.args[0]}, which has no node line") from None
        have = out.get(e)
        if have is None:
            out[e] = labels
        else:
            have |= labels     # two fingerprints printing one state (never seen)
    return StateGraph(states, out, {num_of[fp] for fp in initial}, len(node_label))


def read_dot_graph(path: str | Path, variables: Sequence[str]) -> nx.DiGraph:
    """TLC's dumped state graph as a networkx DiGraph over canonical states.

    Edges carry ``labels``: the set of action names.  Initial states carry the
    node attribute ``initial=True`` and are listed in ``graph.graph["initial"]``;
    ``graph.graph["dot_nodes"]`` is the number of distinct fingerprints read
    (it exceeds the node count only if two fingerprints print the same state).
    """
    return read_dot(path, variables).to_networkx()


class StateGraph:
    """A state graph by numbers: ``states[i]`` is state i (canonical),
    ``edges`` maps (i, j) to the set of action labels, ``initial`` holds the
    numbers of initial states.  What the link compares: numbers hash and
    compare in constant time, where deep state tuples are hashed anew at
    every lookup (networkx keys its graphs by the states)."""

    def __init__(self, states: list, edges: dict, initial: set | None = None, dot_nodes: int | None = None):
        self.states, self.edges, self.initial = states, edges, initial or set()
        self.dot_nodes = len(states) if dot_nodes is None else dot_nodes

    @classmethod
    def from_networkx(cls, g: nx.DiGraph) -> "StateGraph":
        states = list(g.nodes)
        num = {id(s): i for i, s in enumerate(states)}
        by_value: dict = {}

        def n(x):
            # an adjacency key can be an equal object other than the node's
            i = num.get(id(x))
            if i is None:
                if not by_value:
                    by_value.update((s, i) for i, s in enumerate(states))
                i = by_value[x]
            return i

        return cls(states, {(n(u), n(v)): labels for u, v, labels in g.edges(data="labels")})

    def to_networkx(self) -> nx.DiGraph:
        st = self.states
        g = nx.DiGraph()
        g.add_nodes_from(st)
        for i in self.initial:
            g.nodes[st[i]]["initial"] = True
        g.add_edges_from((st[i], st[j], {"labels": labels}) for (i, j), labels in self.edges.items())
        g.graph["initial"] = {st[i] for i in self.initial}
        g.graph["dot_nodes"] = self.dot_nodes
        return g


def _state_key(s: Any) -> tuple:
    return sort_key(s)


def _label_names(labels: Any) -> list[str]:
    return sorted(str(x) for x in (labels or ()))


def compare_graphs(g_model, g_tlc) -> tuple[bool, dict | None]:
    """Compare two state graphs over canonical states (each a
    :class:`StateGraph` or a networkx DiGraph): state sets, then edge sets
    (edge labels are ignored for equality).

    Returns ``(True, None)`` or ``(False, difference)`` where ``difference``
    describes one state or edge present on one side only, chosen
    deterministically (the least in :func:`values.sort_key` order), with a
    predecessor on the side that has it, plus the counts on both sides."""
    gm = g_model if isinstance(g_model, StateGraph) else StateGraph.from_networkx(g_model)
    gt = g_tlc if isinstance(g_tlc, StateGraph) else StateGraph.from_networkx(g_tlc)
    counts = {
        "nodes_model": len(gm.states),
        "nodes_tlc": len(gt.states),
        "edges_model": len(gm.edges),
        "edges_tlc": len(gt.edges),
    }
    # Each state is hashed and compared once, here, and given one number
    # common to both sides; the edge sets are then compared as pairs of
    # numbers.
    gid: dict = {}
    t_ids = [gid.setdefault(x, len(gid)) for x in gt.states]
    n_tlc = len(gid)
    m_ids = [gid.setdefault(x, len(gid)) for x in gm.states]
    in_model = set(m_ids)
    only_m = {gm.states[i] for i, k in enumerate(m_ids) if k >= n_tlc}
    only_t = {gt.states[i] for i, k in enumerate(t_ids) if k not in in_model}

    def labels_of(g, u, v):
        num = {id(x): i for i, x in enumerate(g.states)}
        return g.edges.get((num[id(u)], num[id(v)]))

    if only_m or only_t:
        cands = [(_state_key(x), "model", x) for x in _least(only_m)] + [
            (_state_key(x), "tlc", x) for x in _least(only_t)
        ]
        _, side, x = min(cands, key=lambda c: (c[0], c[1]))
        g = gm if side == "model" else gt
        j = next(i for i, y in enumerate(g.states) if y is x)
        preds = sorted((g.states[a] for a, b in g.edges if b == j), key=_state_key)
        via = None
        if preds:
            via = {"state": preds[0], "labels": _label_names(labels_of(g, preds[0], x))}
        return False, {
            "kind": "state",
            "side": side,
            "state": x,
            "via": via,
            "only_model_states": len(only_m),
            "only_tlc_states": len(only_t),
            **counts,
        }
    em = {(m_ids[i], m_ids[j]) for i, j in gm.edges}
    et = {(t_ids[i], t_ids[j]) for i, j in gt.edges}
    if em == et:
        return True, None
    state_of = {k: gm.states[i] for i, k in enumerate(m_ids)}
    only_me = {(state_of[a], state_of[b]) for a, b in em - et}
    only_te = {(state_of[a], state_of[b]) for a, b in et - em}
    cands = [(_state_key(e), "model", e) for e in _least(only_me)] + [
        (_state_key(e), "tlc", e) for e in _least(only_te)
    ]
    _, side, (u, v) = min(cands, key=lambda c: (c[0], c[1]))
    g = gm if side == "model" else gt
    # the edge's endpoints as that side's own objects (equal states)
    num = {x: i for i, x in enumerate(g.states)}
    return False, {
        "kind": "edge",
        "side": side,
        "source": u,
        "target": v,
        "labels": _label_names(g.edges.get((num[u], num[v]))),
        "only_model_edges": len(only_me),
        "only_tlc_edges": len(only_te),
        **counts,
    }


def _least(items: set) -> list:
    """The least element of a set in sort_key order (as a 0/1-element list)."""
    if not items:
        return []
    return [min(items, key=_state_key)]
