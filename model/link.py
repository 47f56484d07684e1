"""Link (1) of the chain of evidence: the Python model's state graph equals TLC's.

For a manifest model, TLC runs with the model's config minus its
INVARIANT/PROPERTY sections and ``-dump dot,actionlabels``; the dump is read
into a graph over canonical states by numbers (``tlc_dot.read_dot``).
The explorer builds the model's graph with invariants off, relabelled to the
same canonical encoding.  Equal means: same states, same edges.
"""

from __future__ import annotations

import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .core import ExploreResult, canonical_states, explore
from .manifest import ModelEntry
from .registry import model_class
from .tlc import run_tlc
from .tlc_cfg import strip_checks
from .tlc_dot import StateGraph, compare_graphs, read_dot
from .values import to_json


def build_model(entry: ModelEntry):
    return model_class(entry.protocol)(entry.constants())


def explore_entry(entry: ModelEntry, *, check_invariants: bool = True, build_graph: bool = False) -> ExploreResult:
    model = build_model(entry)
    names = entry.parsed_cfg().invariants if check_invariants else False
    # Check exactly the invariants the cfg names, so the result is TLC's.
    return explore(model, check_invariants=[n for n in names if n in model.invariants] if names else False,
                   build_graph=build_graph)


@dataclass
class LinkReport:
    entry: ModelEntry
    distinct_states: int
    tlc_distinct_states: int | None
    graphs_equal: bool | None
    first_difference: Any
    seconds: float
    tlc_seconds: float | None
    tlc_outcome: str | None = None
    tlc_result: Any = None     # TLC's whole result (TLCResult), when it ran

    def to_json(self) -> dict[str, Any]:
        return {
            "protocol": self.entry.protocol,
            "model": self.entry.name,
            "distinct_states": self.distinct_states,
            "tlc_distinct_states": self.tlc_distinct_states,
            "graphs_equal": self.graphs_equal,
            "first_difference": _jsonable(self.first_difference),
            "seconds": round(self.seconds, 3),
            "tlc_seconds": round(self.tlc_seconds, 3) if self.tlc_seconds is not None else None,
        }


def _jsonable(x: Any) -> Any:
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        # canonical states are tuples of (variable, value) pairs
        if x and all(isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) for p in x):
            return {k: to_json(v) for k, v in x}
        return [_jsonable(v) for v in x]
    try:
        return to_json(x)
    except TypeError:
        return repr(x)


def compare_entry(entry: ModelEntry, *, compare_tlc: bool = True, workers: int = 1,
                  with_checks: bool = False) -> LinkReport:
    """Explore the whole reachable graph (invariants off); with ``compare_tlc``
    also dump TLC's graph and compare.  TLC runs in its own process while
    the explorer works (a thread waits for it), so the two overlap.

    With ``with_checks`` TLC runs on the model's own config, its invariants
    and properties in (as ``manifest.check`` runs it), so that one TLC run is
    both the model check and the graph: for a model expected ``ok`` the
    invariants stop nothing, and the graph is the one TLC checked.  The
    report then carries TLC's whole result (``tlc_result``)."""
    model = build_model(entry)
    if not compare_tlc:
        t0 = time.perf_counter()
        res = explore(model, check_invariants=False)
        return LinkReport(entry, res.distinct_states, None, None, None, time.perf_counter() - t0, None)
    if with_checks:
        from .manifest import LIVENESS_FINAL
        cfg, cfg_text = entry.cfg, None
        extra = LIVENESS_FINAL if entry.parsed_cfg().properties else ()
    else:
        cfg, cfg_text = None, strip_checks(entry.cfg_path.read_text(encoding="utf-8"))
        extra = ()
    with tempfile.TemporaryDirectory(prefix="groupcheck-dot-") as tmp, ThreadPoolExecutor(1) as pool:
        dot = Path(tmp) / "graph.dot"
        t1 = time.perf_counter()
        pending = pool.submit(run_tlc, entry.spec_dir, entry.module, cfg, cfg_text=cfg_text, workers=workers,
                              timeout=entry.timeout, dump_dot=dot, extra_args=extra)
        t0 = time.perf_counter()
        try:
            res = explore(model, check_invariants=False, build_graph=True)
        except BaseException:
            pending.cancel()
            raise
        seconds = time.perf_counter() - t0
        tlc = pending.result()
        tlc_seconds = tlc.seconds
        if tlc.outcome != "ok":
            return LinkReport(entry, res.distinct_states, tlc.distinct_states, False,
                              {"tlc_outcome": tlc.outcome, "error": tlc.error_message},
                              seconds, time.perf_counter() - t1, tlc.outcome, tlc)
        g_tlc = read_dot(dot, model.variables)
    g_model = StateGraph(canonical_states(model, res.numbered), res.edge_map)
    equal, diff = compare_graphs(g_model, g_tlc)
    return LinkReport(entry, res.distinct_states, tlc.distinct_states, equal, diff, seconds, tlc_seconds,
                      tlc.outcome, tlc)
