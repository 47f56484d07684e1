"""TLC's -dump dot graph read back and compared with an independent enumeration."""

from __future__ import annotations

from collections import deque
from pathlib import Path

import networkx as nx
import pytest

from groupcheck.model.tlc import TLCError, check_java, find_tla2tools, run_tlc
from groupcheck.model.tlc_cfg import parse_cfg
from groupcheck.model.tlc_dot import DotError, compare_graphs, read_dot_graph, unescape_dot
from groupcheck.model.values import Fn, ModelValue, sort_key

TLA = Path(__file__).parent / "tla"
VARIABLES = ("n", "owner", "notes", "tags")  # Dot.tla's VARIABLES, in order
TAKEN = 'say "hi" \\ bye'  # the TLA+ string "say \"hi\" \\ bye"


def dot_spec_graph(procs, max_n) -> nx.DiGraph:
    """Dot.tla's reachable graph, enumerated directly in Python."""
    procs = sorted(procs, key=lambda m: m.name)

    def successors(s):
        n, owner, notes, tags = s
        if n < max_n:
            yield "Up", (n + 1, owner, notes, tags)
            yield "Skip", (n + 1, owner, notes, tags)
        yield "Down", (n - 1, owner, notes, tags)
        for p in procs:
            if owner[p] == "none":
                yield "Take", (n, owner.set(p, TAKEN), notes + (Fn({"who": p, "at": n}),), tags)
            yield "Tag", (n, owner, notes, tags | {p})

    def bound(s):
        return s[0] >= -1

    def canon(s):
        return tuple(zip(VARIABLES, s))

    init = (0, Fn({p: "none" for p in procs}), (), frozenset())
    g = nx.DiGraph()
    g.add_node(canon(init))
    seen = {init}
    queue = deque([init])
    while queue:
        s = queue.popleft()
        for action, t in successors(s):
            if not bound(t):
                continue  # TLC neither counts, expands nor dumps it
            u, v = canon(s), canon(t)
            if g.has_edge(u, v):
                g[u][v]["labels"].add(action)
            else:
                g.add_edge(u, v, labels={action})
            if t not in seen:
                seen.add(t)
                queue.append(t)
    return g


# the tests of tlc_dump (a TLC run) on one xdist worker, so TLC runs once
DUMP = pytest.mark.xdist_group("tlc-dot-dump")


@pytest.fixture(scope="module")
def tlc_dump(tmp_path_factory):
    try:
        find_tla2tools()
        check_java()
    except TLCError as e:  # pragma: no cover
        pytest.skip(f"TLC cannot run here: {e}")
    before = sorted(p.name for p in TLA.iterdir())
    out = tmp_path_factory.mktemp("dot") / "Dot.dot"
    r = run_tlc(TLA, "Dot", "Dot.cfg", dump_dot=out)
    assert r.outcome == "ok", r.raw_output
    assert sorted(p.name for p in TLA.iterdir()) == before
    return r


@pytest.fixture(scope="module")
def expected():
    c = parse_cfg(TLA / "Dot.cfg").constants
    return dot_spec_graph(c["Procs"], c["Max"])


@DUMP
def test_dot_round_trip_equals_independent_graph(tlc_dump, expected):
    g = read_dot_graph(tlc_dump.dot_path, VARIABLES)
    assert g.number_of_nodes() == tlc_dump.distinct_states
    equal, diff = compare_graphs(expected, g)
    assert equal, diff
    assert diff is None
    # labels: what compare_graphs ignores, the reader must still carry
    for u, v, d in expected.edges(data=True):
        assert g[u][v]["labels"] == d["labels"], (u, v)
    # the features the spec was built to exercise really occur
    assert any(d["labels"] == {"Up", "Skip"} for _, _, d in g.edges(data=True))
    assert any(u == v for u, v in g.edges)
    assert any(dict(s)["owner"] != Fn({ModelValue("p1"): "none", ModelValue("p2"): "none"}) for s in g)
    assert any(TAKEN in dict(s)["owner"].values() for s in g)
    assert min(dict(s)["n"] for s in g) == -1
    init = (("n", 0), ("owner", Fn({ModelValue("p1"): "none", ModelValue("p2"): "none"})), ("notes", ()), ("tags", frozenset()))
    assert g.graph["initial"] == {init} and g.nodes[init]["initial"]


@DUMP
def test_compare_graphs_reports_a_deterministic_first_difference(tlc_dump, expected):
    g = read_dot_graph(tlc_dump.dot_path, VARIABLES)

    missing_edges = sorted((e for e in expected.edges if e[0] != e[1]), key=sort_key)[:3]
    fewer = expected.copy()
    fewer.remove_edges_from(missing_edges)
    equal, diff = compare_graphs(fewer, g)
    assert not equal
    assert diff["kind"] == "edge" and diff["side"] == "tlc"
    assert (diff["source"], diff["target"]) == min(missing_edges, key=sort_key)
    assert diff["only_tlc_edges"] == 3 and diff["only_model_edges"] == 0
    assert diff["labels"] == sorted(g[diff["source"]][diff["target"]]["labels"])

    extra = expected.copy()
    bogus = (("n", 99),) + tuple(next(iter(expected.nodes)))[1:]
    some = next(iter(sorted(expected.nodes, key=sort_key)))
    extra.add_edge(some, bogus, labels={"Up"})
    equal, diff = compare_graphs(extra, g)
    assert not equal
    assert (diff["kind"], diff["side"], diff["state"]) == ("state", "model", bogus)
    assert diff["via"] == {"state": some, "labels": ["Up"]}
    assert diff["nodes_model"] == diff["nodes_tlc"] + 1

    # symmetric: the same difference seen from the other side
    equal, diff2 = compare_graphs(g, extra)
    assert (diff2["side"], diff2["state"]) == ("tlc", bogus)


# --- the reader on hand-written dumps ------------------------------------------------


def write(tmp_path, text) -> Path:
    p = tmp_path / "g.dot"
    p.write_text(text)
    return p


HEADER = 'strict digraph DiskGraph {\nnodesep=0.35;\nsubgraph cluster_graph {\ncolor="white";\n'


def test_unescape_dot_is_exact():
    # dot text of the TLA+ line  /\ s = "q\"\\n"  (a quote, a backslash, an n)
    assert unescape_dot(r'/\\ s = \"q\\\"\\\\n\"') == '/\\ s = "q\\"\\\\n"'
    assert unescape_dot(r"a\nb") == "a\nb"
    assert unescape_dot("plain") == "plain"


def test_edges_before_nodes_self_loops_and_duplicate_edges(tmp_path):
    p = write(
        tmp_path,
        HEADER
        + '1 [label="/\\\\ x = 0\\n/\\\\ s = \\"a\\\\\\"b\\"",style = filled]\n'
        + '1 -> -2 [label="A",color="black",fontcolor="black"];\n'
        + '1 -> -2 [label="B",color="black",fontcolor="black"];\n'
        + '-2 -> -2 [label="A",color="black",fontcolor="black"];\n'
        + '-2 [label="/\\\\ x = 1\\n/\\\\ s = <<>>"];\n'
        + "{rank = same; 1;}\n{rank = same; -2;}\n}\n}",
    )
    g = read_dot_graph(p, ["x", "s"])
    a = (("x", 0), ("s", 'a"b'))
    b = (("x", 1), ("s", ()))
    assert set(g.nodes) == {a, b}
    assert g[a][b]["labels"] == {"A", "B"}
    assert g[b][b]["labels"] == {"A"}
    assert g.graph["initial"] == {a}


def test_newer_tlc_dump_format(tmp_path):
    # TLC >= 1.8 adds tooltips, marks states outside the model and may
    # draw stuttering edges and predicates in edge labels.
    p = write(
        tmp_path,
        HEADER
        + '5 [label="x = 0",style = filled]\n'
        + '5 -> 6 [label="Inc\\nx < 2",color="black",fontcolor="black"];\n'
        + '6 [label="x = 1",tooltip="x = 1"];\n'
        + '6 -> 7 [label="Inc",color="black",fontcolor="black"];\n'
        + '7 [label="x = 9",tooltip="x = 9",style = filled, fillcolor=lightyellow];\n'
        + '6 -> 6 [style="dashed",color="lightgray"];\n'
        + "}\n}",
    )
    g = read_dot_graph(p, ["x"])
    assert set(g.nodes) == {(("x", 0),), (("x", 1),)}
    assert list(g.edges(data="labels")) == [((("x", 0),), (("x", 1),), {"Inc"})]


def test_reader_errors(tmp_path):
    p = write(tmp_path, HEADER + '1 [label="/\\\\ x = 0\\n/\\\\ y = 1",style = filled]\n}\n}')
    with pytest.raises(DotError, match=r"missing \['z'\], unexpected \['y'\]"):
        read_dot_graph(p, ["x", "z"])
    p = write(tmp_path, HEADER + '1 [label="x = 0",style = filled]\n1 -> 2 [label="A"];\n}\n}')
    with pytest.raises(DotError, match="no node line"):
        read_dot_graph(p, ["x"])
    p = write(tmp_path, HEADER + '1 [label="x = {1 2}",style = filled]\n}\n}')
    with pytest.raises(DotError, match=r"g.dot:5: .*expected ','"):
        read_dot_graph(p, ["x"])
    p = write(tmp_path, HEADER + "1 garbage\n")
    with pytest.raises(DotError, match="neither a node nor an edge"):
        read_dot_graph(p, ["x"])
