"""Read TLC's ``-dump dot,actionlabels`` state graph and compare graphs.

Theory of operation
-------------------
Link (1) of the chain of evidence (DESIGN §1) says a Python model's reachable
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

__all__ = ["DotError", "read_dot_graph", "compare_graphs", "unescape_dot"]


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


def read_dot_graph(path: str | Path, variables: Sequence[str]) -> nx.DiGraph:
    """TLC's dumped state graph as a networkx DiGraph over canonical states.

    Edges carry ``labels``: the set of action names.  Initial states carry the
    node attribute ``initial=True`` and are listed in ``graph.graph["initial"]``;
    ``graph.graph["dot_nodes"]`` is the number of distinct fingerprints read
    (it exceeds the node count only if two fingerprints print the same state).
    """
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
    state_of: dict[str, tuple] = {}
    g = nx.DiGraph()
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
        s = tuple([(v, d[v]) for v in variables])
        state_of[fp] = s
    g.add_nodes_from(state_of.values())
    for fp in initial:
        g.nodes[state_of[fp]]["initial"] = True

    def resolved():
        for (a, b), labels in edges.items():
            if a in excluded or b in excluded:
                continue
            try:
                yield state_of[a], state_of[b], labels
            except KeyError as e:
                raise DotError(f"{path}: edge {a} -> {b} names state {e.args[0]}, which has no node line") from None

    if len(set(state_of.values())) == len(state_of):
        # One fingerprint per state: every (u, v) pair is distinct already.
        g.add_edges_from((u, v, {"labels": labels}) for u, v, labels in resolved())
    else:
        for u, v, labels in resolved():
            if g.has_edge(u, v):
                g[u][v]["labels"] |= labels
            else:
                g.add_edge(u, v, labels=set(labels))
    g.graph["initial"] = {state_of[fp] for fp in initial}
    g.graph["dot_nodes"] = len(node_label)
    return g


def _state_key(s: Any) -> tuple:
    return sort_key(s)


def _label_names(labels: Any) -> list[str]:
    return sorted(str(x) for x in (labels or ()))


def compare_graphs(g_model: nx.DiGraph, g_tlc: nx.DiGraph) -> tuple[bool, dict | None]:
    """Compare two state graphs over canonical states: node sets, then edge
    sets (edge labels are ignored for equality).

    Returns ``(True, None)`` or ``(False, difference)`` where ``difference``
    describes one state or edge present on one side only, chosen
    deterministically (the least in :func:`values.sort_key` order), with a
    predecessor on the side that has it, plus the counts on both sides."""
    counts = {
        "nodes_model": g_model.number_of_nodes(),
        "nodes_tlc": g_tlc.number_of_nodes(),
        "edges_model": g_model.number_of_edges(),
        "edges_tlc": g_tlc.number_of_edges(),
    }
    # States are deep tuples whose hash Python does not cache, and every
    # successful lookup of an equal (not identical) state compares it deeply.
    # So each state is hashed and compared once here, given a number, and the
    # edge sets are compared as pairs of numbers.
    gid: dict = {}
    for s in g_tlc.nodes:
        gid.setdefault(s, len(gid))
    n_tlc = len(gid)
    for s in g_model.nodes:
        gid.setdefault(s, len(gid))
    ids_t = {id(s): gid[s] for s in g_tlc.nodes}
    ids_m = {id(s): gid[s] for s in g_model.nodes}
    in_model = set(ids_m.values())
    only_m = {s for s in g_model.nodes if gid[s] >= n_tlc}
    only_t = {s for s in g_tlc.nodes if gid[s] not in in_model}
    if only_m or only_t:
        cands = [(_state_key(s), "model", s) for s in _least(only_m)] + [
            (_state_key(s), "tlc", s) for s in _least(only_t)
        ]
        _, side, s = min(cands, key=lambda c: (c[0], c[1]))
        g = g_model if side == "model" else g_tlc
        preds = sorted(g.predecessors(s), key=_state_key)
        via = None
        if preds:
            p = preds[0]
            via = {"state": p, "labels": _label_names(g[p][s].get("labels"))}
        return False, {
            "kind": "state",
            "side": side,
            "state": s,
            "via": via,
            "only_model_states": len(only_m),
            "only_tlc_states": len(only_t),
            **counts,
        }

    def edge_ids(g, ids):
        out = set()
        for u, nbrs in g.adj.items():
            iu = ids[id(u)]
            for v in nbrs:
                iv = ids.get(id(v))
                out.add((iu, gid[v] if iv is None else iv))
        return out

    if edge_ids(g_model, ids_m) == edge_ids(g_tlc, ids_t):
        return True, None
    em, et = set(g_model.edges), set(g_tlc.edges)
    only_me, only_te = em - et, et - em
    if only_me or only_te:
        cands = [(_state_key(e), "model", e) for e in _least(only_me)] + [
            (_state_key(e), "tlc", e) for e in _least(only_te)
        ]
        _, side, (u, v) = min(cands, key=lambda c: (c[0], c[1]))
        g = g_model if side == "model" else g_tlc
        return False, {
            "kind": "edge",
            "side": side,
            "source": u,
            "target": v,
            "labels": _label_names(g[u][v].get("labels")),
            "only_model_edges": len(only_me),
            "only_tlc_edges": len(only_te),
            **counts,
        }
    return True, None


def _least(items: set) -> list:
    """The least element of a set in sort_key order (as a 0/1-element list)."""
    if not items:
        return []
    return [min(items, key=_state_key)]
