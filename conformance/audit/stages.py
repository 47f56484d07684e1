"""``groupcheck audit``: the release audit, every stage of the chain of evidence.

Theory of operation
-------------------
Seven stages, each giving ``report.Check`` records (docs/architecture.md, "The audit"):

1. **tlc** — TLC on every manifest model; as expected when the outcome (ok or
   the named violated property) and the pinned distinct-state count match.
   Each counterexample, expected ones included, becomes a diagram.
   Models flagged ``"heavy"`` (the longer TLC runs: spec/README.md) run with ``--full``
   and under the slow test marker (tests/test_manifest_heavy.py); the
   default audit lists them as skipped, which keeps it within its budget,
   but for the smallest model of each shipped variant that no light model
   checks, within its own budget (``coverage_picks``): a variant left out
   is named in the report's coverage (report.py ``coverage``).
2. **link** — for each ``compare: true`` model, the Python explorer's
   reachable graph against TLC's ``-dump dot`` graph: as expected when equal.
   Models flagged ``"slow"`` in their manifest are left to ``--full`` (and to
   the slow test marker), which keeps the default audit within its budget.
3. **conformance** — for every protocol with an implementation
   (conformance/replay/registry.py), ``runs`` simulated runs under the protocol's
   campaign faults, generated and checked by the pipeline (Spark by default,
   ``--engine local`` in-process).  As expected when no run is rejected or
   nonconforming, every violation has the shape of one of the protocol's
   documented findings (conformance/findings.py: its witness matches) and
   each finding's count per fault plan kind is inside the band its measured
   rate gives.  A protocol whose findings name a fixed stack also runs the
   same fault plans on that stack (``fixed_stack_check``): no violation
   there.
4. **history** — for each protocol a black-box history can be projected
   from (conformance/history.py ``projectable``), ``HISTORY_RUNS`` runs drawn
   as the conformance stage draws them, each checked twice: the history
   checker on the observable events only, the model replay on the trace.
   As expected when the two flag the same runs (``agrees_with_replay``);
   the history's witnesses are drawn.
5. **tracevalidation** — for every protocol with a trace spec
   (conformance/tlctrace.py), TLC validates ``TRACE_SAMPLE`` runs of the
   conformance campaign (``--full``: every run), regenerated from their
   seeds (a run is a function of its seed): a stratified sample, a run of
   every verdict and every kind of fault the campaign holds first, then
   spread evenly over its seeds (``sample_seeds``, ``run_classes``); and
   the model replay checks the same trace: one check per trace, as expected
   when the two give the same stepwise verdict at the same event.  One TLC
   process per core.  The spec actions the accepted traces exercised, per
   action and per action x parameter shape, are merged per protocol into
   ``trace_coverage`` (summary.json and the report), the never-exercised
   named.
6. **prove** — for every protocol with z3 encodings (model/proofs/registry.py),
   each variant's proof matrix: initiation, consecution per action x lemma,
   implication of the property (docs/proofs.md).  One check per variant: a
   fixed variant as expected when every query is proved, a flawed one when
   it yields a counterexample to induction that the bounded model reaches
   (a finding, drawn with its shortest path).  The matrix itself (lemma x
   query, result and seconds) is in the check's figures and in the report.
   The default matrix (``groupcheck prove``); with ``--full`` every variant
   (``groupcheck prove --all``).
7. **cluster** — a small real cluster (impl/cluster.py) of each protocol
   whose descriptor asks for it (``audit_cluster``: the composed stacks),
   3 node processes over UDP on 127.0.0.1 playing a short seeded chaos
   schedule (impl/chaos.py: SIGKILLs, the coordinator's included, and
   SIGSTOP stalls under the failure detector's time-out), a backlog small
   enough (``CLUSTER_BACKLOG``) that a stall holds senders back; as expected
   when it quiesces, its per-node traces conform and its history is clean.

The outputs are written by conformance/audit/report.py.  ``run`` returns the
checks, and in ``extra`` the stages selected and the shipped variants
(model/manifest.py) from which the report computes what the run covered;
the command exits non-zero when any check is unexpected, and with
``--require-all`` when any was skipped.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections import Counter, defaultdict
from concurrent.futures import as_completed, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from statistics import median
from typing import Callable, Optional

from groupcheck.conformance import findings, history, tlctrace
from groupcheck.conformance.audit import diagram
from groupcheck.conformance.audit.report import _line, Check, Explanation, gh_slug
from groupcheck.conformance.cluster import judged
from groupcheck.conformance.findings import violated
from groupcheck.conformance.history import projectable
from groupcheck.conformance.pipeline import stages as pipeline
from groupcheck.conformance.pipeline.stages import COVERAGE_MAX_STATES
from groupcheck.conformance.replay import registry
from groupcheck.conformance.replay import conform     # (its replay looked up at each call: a test swaps it)
from groupcheck.conformance.replay.registry import get, REGISTERED
from groupcheck.core.properties import fmt, read_witness
from groupcheck.core.trace import history as history_format
from groupcheck.core.trace.reader import from_records
from groupcheck.impl import chaos
from groupcheck.impl.cluster import ClusterError
from groupcheck.impl.faults import fault_kinds
from groupcheck.model import manifest
from groupcheck.model.link import compare_entry
from groupcheck.model.manifest import check, CheckOutcome, shipped_variants, variant_label


DRAWN_RUNS = 5      # violating runs drawn per conformance check; the rest are counted
HISTORY_RUNS = 40   # runs per protocol for the history stage (about 0.1 s each)
# campaign runs per protocol TLC validates in the default audit (--full: all);
# about 3-10 s of TLC each, two at a time on 2 cores (docs/benchmarks.md)
TRACE_SAMPLE = 5
STAGES = ("tlc", "link", "conformance", "history", "tracevalidation", "prove", "cluster")
# The default audit model-checks every shipped variant (model/manifest.py
# ``shipped_variants``) at least once: a variant all of whose shipped models
# are heavy gets its smallest one (``coverage_picks``), when the TLC seconds
# recorded for it in its manifest (``tlc_seconds``) are at most
# PICK_MAX_SECONDS and, cheapest first, the picks' seconds add up to at most
# PICK_BUDGET_SECONDS (two at a time on 2 cores: about half that in wall
# time).  A variant left out is named in the coverage with the reason.
PICK_MAX_SECONDS = 30.0
PICK_BUDGET_SECONDS = 240.0


def coverage_picks(entries: list) -> tuple[list, dict[tuple, tuple]]:
    """The heavy models the default audit's tlc stage runs all the same, so
    that every shipped variant among ``entries`` is model-checked (see
    PICK_MAX_SECONDS): per variant none of whose shipped models is light,
    its shipped model with the fewest distinct states.  Returns (the picks,
    in manifest order; {variant key: (its smallest model, why it stays
    unchecked)} for the variants whose smallest model is over the budget)."""
    wanted = []
    for key, models in shipped_variants(entries).items():
        if all(e.extra.get("heavy") for e in models):
            wanted.append((key, min(models, key=lambda e: (e.distinct_states or 0, entries.index(e)))))
    picks, why, spent = [], {}, 0.0
    for key, e in sorted(wanted, key=lambda w: (w[1].extra.get("tlc_seconds") is None,
                                                 w[1].extra.get("tlc_seconds") or 0.0)):
        secs = e.extra.get("tlc_seconds")
        size = f"its smallest model, {e.name} ({e.distinct_states or 0:,} distinct states)"
        if secs is None:
            why[key] = e, f"{size}, has no TLC time recorded in its manifest (tlc_seconds)"
        elif secs > PICK_MAX_SECONDS:
            why[key] = e, (f"{size}, takes {secs:g} s of TLC, over the default audit's limit of "
                        f"{PICK_MAX_SECONDS:g} s for such a model")
        elif spent + secs > PICK_BUDGET_SECONDS:
            why[key] = e, (f"{size}, takes {secs:g} s of TLC, beyond the default audit's budget of "
                        f"{PICK_BUDGET_SECONDS:g} s for such models (cheaper ones first)")
        else:
            spent += secs
            picks.append(e)
    return [e for e in entries if e in picks], why


def _variants_figures(entries: list, picks: list, why: dict) -> list[dict]:
    """The shipped variants of ``entries`` for the report's coverage
    (report.coverage): their shipped models and compared ones, the pick,
    and why a variant is not model-checked by default."""
    out = []
    for key, models in shipped_variants(entries).items():
        protocol, module, switches = key
        out.append({"variant": variant_label(models[0]), "protocol": protocol, "module": module,
                    "switches": dict(switches), "models": [e.name for e in models],
                    "compared": [e.name for e in models if e.compare],
                    "picked": next((e.name for e in models if e in picks), None),
                    "why_not_checked": why[key][1] if key in why else None})
    return out


def _finding_heading(protocol: str, prop: str) -> Optional[tuple[str, str]]:
    """(page, heading) of the docs' first "Finding" section that names
    ``prop`` of ``protocol``, on docs/<protocol>.md or on the page of one of
    its registered findings (a composition's findings live on its parts'
    pages)."""
    root = Path(__file__).resolve().parents[2]
    pages = [f"docs/{protocol}.md"]
    if protocol in REGISTERED:
        pages += [f.doc.partition("#")[0] for f in get(protocol).findings if prop in f.properties]
    for page in dict.fromkeys(pages):
        try:
            lines = (root / page).read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        heads = [i for i, ln in enumerate(lines) if ln.startswith("#")] + [len(lines)]
        for a, b in zip(heads, heads[1:]):
            title = lines[a].lstrip("#").strip()
            if "finding" in title.lower() and prop in "\n".join(lines[a:b]):
                return page, title
    return None


def finding_ref(protocol: str, prop: str) -> Optional[str]:
    """The docs' finding about ``prop`` of ``protocol`` as ``page: heading``."""
    hit = _finding_heading(protocol, prop)
    return f"{hit[0]}: {hit[1]}" if hit else None


def finding_anchor(protocol: str, prop: str) -> Optional[str]:
    """The same finding as a link target, ``docs/<page>.md#<heading's anchor>``."""
    hit = _finding_heading(protocol, prop)
    return f"{hit[0]}#{gh_slug(hit[1])}" if hit else None


def _finding_id(protocol: str, prop: str) -> Optional[str]:
    """The registered finding of ``protocol`` about ``prop`` when there is exactly one."""
    ids = [f.id for f in get(protocol).findings if prop in f.properties] if protocol in REGISTERED else []
    return ids[0] if len(ids) == 1 else None


def _explanation(description: str, protocol: str, prop: Optional[str]) -> Optional[str]:
    ref = finding_ref(protocol, prop) if prop and prop not in ("ok",) else None
    text = description.strip().rstrip(".")
    if ref:
        text = (text + f" (see {ref})") if text else f"See {ref}"
    return text + "." if text else None


def _counterexample(entry, result) -> tuple:
    """The counterexample drawn (or None) and its violation as data: the
    property, the members that acted at the violating step, the step, the
    finding's docs."""
    if not result.counterexample:
        return None, []
    n = entry.constants().get("N")
    n = n if isinstance(n, int) else None
    steps = diagram.steps_from_states([(s.action, s.state) for s in result.counterexample], n or 0,
                                      violated=result.violated, loop_index=result.loop_index)
    g = diagram.draw(steps, n, f"{entry.protocol}/{entry.name}: {result.violated or result.outcome}")
    if not result.violated:
        return g, []
    last = steps[-1]
    return g, [Explanation(property=result.violated, text=_line(entry.description) or last.mark,
                           finding=_finding_id(entry.protocol, result.violated), members=list(last.actors),
                           step=f"step {last.index} of {len(steps)} ({last.action})",
                           doc=finding_anchor(entry.protocol, result.violated), diagram=0)]


def tlc_check(entry, workers: int = 1) -> Check:
    return _tlc_check_of(check(entry, workers=workers))


def _tlc_check_of(o, shared: bool = False) -> Check:
    """The tlc stage's check of one TLC run (``manifest.CheckOutcome``);
    ``shared``: the run also dumped the graph the link stage compared."""
    entry, r = o.entry, o.result
    g, why = _counterexample(entry, r)
    detail = None
    if r.outcome in ("error", "timeout") and r.error_message:
        detail = (f"{r.error_location}: " if r.error_location else "") + r.error_message
    elif o.observed == entry.expected and not o.count_matches:
        detail = f"distinct states {r.distinct_states}, manifest pins {entry.distinct_states}"
    return Check(
        id=f"tlc/{entry.protocol}/{entry.name}", kind="tlc", protocol=entry.protocol, name=entry.name,
        expected=entry.expected, observed=o.observed, as_expected=o.matches_expectation,
        seconds=round(r.seconds or 0.0, 3),
        figures={"distinct_states": r.distinct_states, "pinned": entry.distinct_states,
                 "depth": r.depth, "states_generated": r.states_generated,
                 **({"graph_dumped_for_link": True} if shared else {})},
        detail=detail, mermaid=g and g.mermaid, svg=g and g.svg, diagrams=[g] if g else [],
        explanation=_explanation(entry.description, entry.protocol, entry.expected),
        explanations=why,
        finding=o.matches_expectation and entry.expected != "ok")


def link_check(entry, workers: int = 1) -> Check:
    return _link_checks(entry, workers, with_tlc=False)[0]


def shares_one_run(entry) -> bool:
    """Whether one TLC run serves a compared model's tlc and link checks
    (``tlc_and_link_checks``): expected ok, without a PROPERTY.  With a
    PROPERTY the link's own run (properties stripped) is the cheap one and
    the dump slows the liveness run (STABLE Pair: 47.6 s alone, 55.4 s with
    the dump), so those keep two runs."""
    return entry.compare and entry.expected == "ok" and not entry.parsed_cfg().properties


def tlc_and_link_checks(entry, workers: int = 1) -> list[Check]:
    """The tlc and link stages' checks of a model expected ``ok`` and
    compared, from one TLC run: TLC checks the model's invariants and
    properties and dumps the graph the link compares (model/link.py
    ``compare_entry(with_checks=True)``), instead of a second run."""
    return _link_checks(entry, workers, with_tlc=True)


def _link_checks(entry, workers: int, with_tlc: bool) -> list[Check]:
    t0 = time.monotonic()
    try:
        r = compare_entry(entry, compare_tlc=True, workers=workers, with_checks=with_tlc)
    except Exception as e:      # a model that cannot be built or explored is a failed check, not a crash
        failed = Check(id=f"link/{entry.protocol}/{entry.name}", kind="link", protocol=entry.protocol,
                       name=entry.name, expected="graphs equal", observed="error", as_expected=False,
                       seconds=round(time.monotonic() - t0, 3), detail=f"{type(e).__name__}: {e}")
        return [tlc_check(entry, workers), failed] if with_tlc else [failed]
    link = _link_check_of(entry, r, t0)
    if not with_tlc:
        return [link]
    final = bool(entry.parsed_cfg().properties)
    return [_tlc_check_of(CheckOutcome(entry, r.tlc_result, workers, liveness_final=final), shared=True), link]


def _link_check_of(entry, r, t0: float) -> Check:
    observed = {True: "graphs equal", False: "graphs differ", None: f"TLC {r.tlc_outcome}"}[r.graphs_equal]
    return Check(
        id=f"link/{entry.protocol}/{entry.name}", kind="link", protocol=entry.protocol, name=entry.name,
        expected="graphs equal", observed=observed, as_expected=r.graphs_equal is True,
        seconds=round(time.monotonic() - t0, 3),
        figures={"distinct_states": r.distinct_states, "tlc_distinct_states": r.tlc_distinct_states,
                 "explorer_seconds": round(r.seconds, 3),
                 "tlc_seconds": None if r.tlc_seconds is None else round(r.tlc_seconds, 3)},
        detail=None if r.graphs_equal is not False else f"first difference: {r.first_difference}")


def coverage_figures(cov: dict) -> dict:
    """The pipeline's coverage of one protocol in the report's terms."""
    if not cov:
        return {}
    all_states = cov.get("states") or []
    # the share is over the constant sets the pipeline explored (the ones most runs share)
    states = [st for st in all_states if st.get("explored", True)]
    reach = [st.get("reachable") for st in states]
    known = states and all(r for r in reach)
    visited_in = sum(round((st.get("share") or 0) * (st.get("reachable") or 0)) for st in states)
    if not cov.get("state_tracking", bool(states)) or not states:
        why = "n/a: this protocol's replay does not record model states"
    elif not known:
        why = (f"n/a: the model with the traces' constants has more than {COVERAGE_MAX_STATES:,} reachable "
               "states, beyond what the audit explores for coverage")
    else:
        why = None
    return {
        "why_no_share": why,
        "actions_reached": len(set(cov.get("actions_seen") or []) & set(cov.get("actions") or [])),
        "actions_total": len(cov.get("actions") or []),
        "action_share": cov.get("actions_share"),
        "states_reached": sum(st.get("visited") or 0 for st in states),
        "states_reachable": sum(reach) if known else None,
        "state_share": round(visited_in / sum(reach), 6) if known else None,
        "state_share_runs": sum(st.get("runs") or 0 for st in states),
        "state_share_constant_sets": f"{len(states)} of {len(all_states)}",
    }


def conformance_check(proto, result: dict) -> Check:
    """A Check from one protocol's pipeline result (see pipeline.run_audit_stage)."""
    verdicts = result.get("verdicts", {})
    bad_runs = result.get("bad_runs", [])

    # a violation is a known finding only if a documented finding witnesses it (conformance/findings.py)
    unknown = sorted({violated(r) for r in bad_runs if r.get("verdict") == "violation" and not r.get("finding")})
    # (an incomplete run checked too little to count: a failure too)
    failing = [r for r in bad_runs if r.get("verdict") in ("nonconforming", "rejected", "incomplete")
               or (r.get("verdict") == "violation" and not r.get("finding"))]
    counts = result.get("findings") or {}
    off_band = findings.out_of_band(proto, counts) if counts else []
    disagreements = result.get("disagreements") or 0
    as_expected = (not failing and not disagreements and not off_band
                   and verdicts.get("ok", 0) + verdicts.get("documented", 0) + verdicts.get("violation", 0) > 0)
    observed = ", ".join(f"{v} {k}" for k, v in sorted(verdicts.items()) if v) or "no runs"
    expected = "all runs conform" + (f"; violations only in the shape of a documented finding "
                                     f"({', '.join(f.id for f in proto.findings)}), at its measured rate"
                                     if proto.findings else "; no violation")
    shown = (failing + [r for r in bad_runs if r not in failing])[:DRAWN_RUNS]
    mm = sv = detail = None
    drawn, shown_at = [], {}
    for k, show in enumerate(shown):
        if k == 0:
            detail = f"{show.get('run_id')}: {show.get('verdict')}: {show.get('reason')}"
        events = show.get("events") or (result.get("first_bad_run_events") if show is bad_runs[0] else None)
        if not isinstance(events, list):
            events = None
        if events:
            at, mark = show.get("first_bad_event"), "the run stops conforming here"
            if show.get("verdict") in findings.VIOLATED:
                prop = violated(show)
                mark = f"{prop} is broken here"
                if at is None:              # judged at the run's end: its last event
                    at, mark = events[-1].get("i"), f"the run ends here, breaking {prop}"
            missing = [(m, mid) for v in findings.violations_of(show)
                       for ms, mids in [read_witness(v.get("witness") or "")] for m in ms for mid in mids]
            steps = diagram.steps_from_events(events, at, mark, missing=missing)
            shown_at[id(show)] = len(drawn)
            drawn.append(diagram.draw(steps, None, f"{proto.name} {show.get('run_id')}: {show.get('verdict')}"
                                      f" — {show.get('reason')}"))
    if drawn:
        mm, sv = drawn[0].mermaid, drawn[0].svg
    if unknown:
        detail = (detail + "\n" if detail else "") + \
            f"violations in no documented finding's shape: {', '.join(unknown)}"
    if off_band:
        detail = (detail + "\n" if detail else "") + "finding rates outside their bands: " + "; ".join(off_band)
    if disagreements:
        detail = (detail + "\n" if detail else "") + \
            f"{disagreements} run(s) where the property catalogue and the replay disagree"
    rows = result.get("rows") or {}
    figs = {"runs": result.get("runs"), "events": result.get("events"),
            "rows_in": rows.get("in"), "rows_rejected": rows.get("rejected"),
            "disagreements": disagreements, "engine": result.get("engine"), "faults": result.get("faults"),
            "finding_rates": findings.rate_figures(proto, counts) if counts else None}
    seen = sorted({violated(r) for r in bad_runs if r.get("verdict") == "documented"})
    why, told = [], []
    for r in failing[:DRAWN_RUNS]:      # each unexpected run drawn: its first violation, or its reason
        told.append(_run_explanation(proto.name, r, shown_at.get(id(r))))
    for f in proto.findings:            # each finding seen: its count per plan kind and one witness
        runs_f = [r for r in bad_runs if r.get("finding") == f.id]
        if runs_f:
            per = "; ".join(f"{c.get(f.id, 0)} of {c['runs']} '{kind}' runs (band {lo}-{hi})"
                            for kind, c in sorted(counts.items()) if c.get(f.id)
                            for lo, hi in [findings.band(f.rates.get(kind), c["runs"])])
            why.append(f"{f.id} ({f.doc}): {per or len(runs_f)}; e.g. {runs_f[0].get('run_id')}: "
                       f"{runs_f[0].get('finding_why')}.")
            e = _run_explanation(proto.name, runs_f[0], shown_at.get(id(runs_f[0])), finding=f.id)
            e.text = f"{per or f'{len(runs_f)} runs'}; e.g. {e.text}"
            e.doc = f.doc
            told.append(e)
    for prop in seen:
        if prop in proto.known_violations:
            desc = next((e.description for e in manifest.select([proto.name], None)
                         if e.expected == prop), "") if proto.name in manifest.protocols() else ""
            why.append(_explanation(desc or f"{prop} is a known finding of the faithful spec", proto.name, prop))
            covered = {p for f in proto.findings if any(e.finding == f.id for e in told) for p in f.properties}
            if prop not in covered and not any(e.property == prop for e in told):
                told.append(Explanation(property=prop, text=_line(desc) or f"{prop} is a known finding of the "
                                        "faithful spec", doc=finding_anchor(proto.name, prop)))
    return Check(id=f"conformance/{proto.name}", kind="conformance", protocol=proto.name,
                 name=f"{result.get('runs')} runs", expected=expected, observed=observed,
                 as_expected=as_expected, seconds=round(result.get("seconds", 0.0), 3),
                 figures=figs, detail=detail, mermaid=mm, svg=sv, diagrams=drawn,
                 diagrams_omitted=max(0, len(bad_runs) - len(shown)),
                 explanation=" ".join(w for w in why if w) or None, explanations=told,
                 finding=as_expected and bool(seen))


def _run_explanation(protocol: str, row: dict, diagram: Optional[int], finding: Optional[str] = None) -> Explanation:
    """A verdict row's first violation (or its reason) as data: the members
    and messages its witness names, the run and event, the finding's docs."""
    v = (findings.violations_of(row) or [{}])[0]
    text = v.get("witness") or row.get("reason") or ""
    members, msgs = read_witness(text)
    prop = v.get("property") or row.get("verdict")
    at = v.get("event") if v.get("event") is not None else row.get("first_bad_event")
    return Explanation(property=prop, text=_line(text), finding=finding or v.get("finding"), members=members,
                       messages=[fmt(m) for m in msgs],
                       step=f"run {row.get('run_id')}" + (f", event {at}" if at is not None else ", at its end"),
                       doc=finding_anchor(protocol, prop) if prop else None, diagram=diagram)


def fixed_stack_check(name: str, fixed: str, runs: int, seed: int) -> Check:
    """The campaign of a flawed stack on the stack that fixes its findings:
    ``runs`` of ``name``'s drawn fault plans (seed, seed+1, ...) simulated on
    ``fixed`` and replayed; as expected when every run conforms with no
    violation at all (conformance/findings.py ``Finding.fixed_by``)."""
    proto, fx = registry.get(name), registry.get(fixed)
    t0 = time.monotonic()
    bad, verdicts = [], {}
    for sd in range(seed, seed + runs):
        faults, options = proto.draw(sd) if proto.draw else (proto.campaign_faults, {})
        records, _ = fx.simulate(sd, faults, {**fx.default_options, **options})
        rep = fx.replay(from_records(records), visited=False)
        verdicts[rep.verdict] = verdicts.get(rep.verdict, 0) + 1
        if rep.verdict != "ok":
            bad.append(f"{rep.run_id} ({faults}): {rep.verdict}: {rep.reason}")
    ids = ", ".join(f.id for f in proto.findings if f.fixed_by == fixed)
    return Check(id=f"conformance/{name}-fixed-by-{fixed}", kind="conformance", protocol=name,
                 name=f"{runs} runs on {fixed}", expected=f"no finding on the fixed stack ({ids})",
                 observed=", ".join(f"{v} {k}" for k, v in sorted(verdicts.items())), as_expected=not bad,
                 seconds=round(time.monotonic() - t0, 3), figures={"runs": runs, "fixed_by": fixed},
                 detail="\n".join(bad[:10]) or None,
                 explanation=f"{name}'s own fault plans, run on {fixed}, the stack whose design removes "
                             f"{ids}: every run must conform with no violation")


def _said(c: Check) -> str:
    """A finished check's verdict, for the progress lines."""
    if c.as_expected:
        return f"{c.observed} (expected violation)" if c.finding else c.observed
    return f"UNEXPECTED: {c.observed}, expected {c.expected}"


def history_check(name: str, runs: int, seed: int) -> Check:
    """The history stage for one protocol (see the module docstring)."""
    proto = registry.get(name)
    t0 = time.monotonic()
    flagged, disagree, drawn, told = 0, [], [], []
    for k in range(runs):
        faults, options = proto.draw(seed + k)
        records, _ = proto.simulate(seed + k, faults, {**proto.default_options, **options})
        rep = conform.replay(from_records(records))
        ok, found, why = history.agrees_with_replay(records, rep)
        flagged += bool(found)
        if not ok:
            disagree.append(f"{records[0]['run_id']}: {why}")
        for v in found[:1]:
            if len(drawn) < DRAWN_RUNS:
                run_id = records[0]["run_id"]
                at = next((e["index"] for e in v.events if e.get("index") is not None), None)
                told.append(Explanation(property=v.property, text=v.reason, finding=_finding_id(name, v.property),
                                        members=list(v.members),
                                        messages=[fmt(m) for m in v.messages],
                                        step=f"run {run_id}" + (f", history event {at}" if at is not None
                                                                else ", at its end"),
                                        doc=finding_anchor(name, v.property), diagram=len(drawn)))
                drawn.append(diagram.violation_drawing(v, f"{name} {run_id}", history_format.from_records(history.from_trace(records))))
    return Check(id=f"history/{name}", kind="history", protocol=name, name=f"{runs} runs",
                 expected="the history checker flags exactly the runs the model replay flags",
                 observed=(f"{runs - len(disagree)} of {runs} runs agree; {flagged} flagged by the history"),
                 as_expected=not disagree, seconds=round(time.monotonic() - t0, 3),
                 figures={"runs": runs, "flagged": flagged, "disagreements": len(disagree)},
                 detail="\n".join(disagree[:10]) or None,
                 mermaid=drawn[0].mermaid if drawn else None, svg=drawn[0].svg if drawn else None,
                 diagrams=drawn, diagrams_omitted=max(0, flagged - len(drawn)),
                 explanation=(f"the {flagged} flagged run(s) are the ones the model replay reports as "
                              f"violations (known findings of {name}, see the conformance stage); the "
                              f"history sees them from sends, deliveries and views alone") if flagged else None,
                 explanations=told, finding=not disagree and flagged > 0)


def sample_seeds(runs: int, seed: int, sample: Optional[int],
                 strata: Optional[Callable[[int], set]] = None) -> list[int]:
    """``sample`` seeds of the campaign's seed..seed+runs-1 (all of them when
    sample is None or not smaller).  With ``strata`` (a run's seed -> its
    classes: its verdict, its kinds of fault), first a run of every class,
    the rarest class first, each time the run of that class that adds the
    most classes not yet covered (the earliest on a tie), as long as the
    sample has room; then the rest spread evenly over the campaign."""
    if sample is None or sample >= runs:
        return list(range(seed, seed + runs))
    seeds = range(seed, seed + runs)
    chosen: list[int] = []
    if strata is not None:
        classes = {s: set(strata(s)) for s in seeds}
        count = Counter(c for cs in classes.values() for c in cs)
        for c in sorted(count, key=lambda c: (count[c], c)):
            covered = set().union(*(classes[s] for s in chosen))
            if len(chosen) == sample:
                break
            if c not in covered:
                chosen.append(max((s for s in seeds if c in classes[s]),
                                  key=lambda s: (len(classes[s] - covered), -s)))
    even = [seed + (k * runs) // sample for k in range(sample)]
    for s in even + list(seeds):
        if len(chosen) == sample:
            break
        if s not in chosen:
            chosen.append(s)
    return sorted(chosen)


def run_classes(name: str, run_seed: int) -> set[str]:
    """A campaign run's classes for the stratified TLC sample: its verdict
    (``verdict:ok``, ``verdict:violation:<property>``, ...) and the kinds of
    fault of its plan (impl/faults.py ``fault_kinds``), from the run
    regenerated from its seed and replayed (a few hundredths of a second)."""
    proto = registry.get(name)
    faults, options = proto.draw(run_seed) if proto.draw else (proto.campaign_faults, {})
    records, _ = proto.simulate(run_seed, faults, {**proto.default_options, **options})
    rep = conform.replay(from_records(records))
    verdict = rep.verdict + (":" + rep.reason.split(":", 1)[0] if rep.verdict in findings.VIOLATED and rep.reason else "")
    return {f"verdict:{verdict}"} | fault_kinds(records[0].get("faults") or {})


def tracevalidation_check(name: str, run_seed: int):
    """One campaign run of ``name`` validated by TLC and replayed by the
    model; returns (Check, accepted trace or None)."""
    proto = registry.get(name)
    t0 = time.monotonic()
    faults, options = proto.draw(run_seed) if proto.draw else (proto.campaign_faults, {})
    records, _ = proto.simulate(run_seed, faults, {**proto.default_options, **options})
    trace = from_records(records)
    run_id = records[0]["run_id"]
    rep = conform.replay(trace)
    m_ok = rep.stops_conforming_at is None
    try:
        v = tlctrace.validate(trace)
    except Exception as e:       # TLC failing to give a verdict is a failed check, not a crash
        return Check(id=f"tracevalidation/{name}/{run_id}", kind="tracevalidation", protocol=name,
                     name=run_id, expected="TLC and the model replay agree", observed="error",
                     as_expected=False, seconds=round(time.monotonic() - t0, 3),
                     detail=f"{type(e).__name__}: {e}"), None
    agree = tlctrace.agrees(v, rep)

    def said(ok, at, s=""):
        return f"accept{s}" if ok else f"reject{s} at event {at}"
    observed = (f"both {said(v.ok, v.first_unmatched)}" if agree else
                f"TLC {said(v.ok, v.first_unmatched, 's')}, model {said(m_ok, rep.stops_conforming_at, 's')}")
    if v.broken_at is not None:
        observed += f"; TLC: {'/'.join(v.broken)} broken at event {v.broken_at}"
    drawn = []
    if not v.ok:
        steps = diagram.steps_from_events(trace.events, v.first_unmatched)
        drawn.append(diagram.draw(steps, None, f"{name} {run_id}: TLC rejects event {v.first_unmatched}"))
    return Check(id=f"tracevalidation/{name}/{run_id}", kind="tracevalidation", protocol=name, name=run_id,
                 expected="TLC and the model replay agree",
                 observed=observed + f" ({len(trace.events)} events)", as_expected=agree,
                 seconds=round(time.monotonic() - t0, 3),
                 figures={"events": len(trace.events), "tlc_seconds": round(v.seconds, 3),
                          "model_verdict": rep.verdict},
                 detail=(v.explain() or None) if not v.ok else None,
                 mermaid=drawn[0].mermaid if drawn else None, svg=drawn[0].svg if drawn else None,
                 diagrams=drawn,
                 explanation=None if agree else "TOOL FAILURE: the TLA+ spec and its Python mirror judge "
                 "this trace differently (see the detail)"), (trace if v.ok else None)


def prove_check(enc, queries=None) -> Check:
    """The prove stage for one encoding (see the module docstring);
    ``queries``: its matrix already run (elsewhere), else run here."""
    from groupcheck.model.proofs import prover     # lazy: z3 is heavy and only this path needs it
    t0 = time.monotonic()
    try:
        qs = queries if queries is not None else prover.run(enc)
    except Exception as e:      # an encoding that cannot be built is a failed check, not a crash
        return Check(id=f"prove/{enc.protocol}/{enc.variant}", kind="prove", protocol=enc.protocol,
                     name=enc.variant, expected="proved", observed="error", as_expected=False,
                     seconds=round(time.monotonic() - t0, 3), detail=f"{type(e).__name__}: {e}")
    ok = prover.verdict(qs)
    proved = sum(q.result == "proved" for q in qs)
    ctis = [q for q in qs if q.result == "cti"]
    real = [q for q in ctis if q.reachable]
    unknown = sum(q.result == "unknown" for q in qs)
    expected = ("a counterexample to induction the bounded model reaches" if enc.expect_cti
                else "every query proved")
    framed = sum(q.by_frame for q in qs)
    observed = (f"{proved} of {len(qs)} queries proved ({framed} by the frame alone), "
                f"{len(ctis)} CTI ({len(real)} reachable)"
                + (f", {unknown} unknown" if unknown else ""))
    detail = None
    if real:
        q = min(real, key=lambda q: len(q.path or []))
        detail = (f"reachable CTI of {q.query}: step {q.action} from a state reached by\n  "
                  + " -> ".join(q.path or []))
    elif not ok:
        bad = [q for q in qs if q.result != "proved"]
        detail = "\n".join(f"{q.query}: {q.result}" + (f" (reachable {q.reachable})" if q.result == "cti" else "")
                           for q in bad[:20]) or None
    drawn, told = [], []
    shown = min(real, key=lambda q: len(q.path or [])) if real else (ctis[0] if ctis else None)
    if shown is not None and shown.pre is not None:     # the CTI: its two states and the step between
        lemma = shown.query.rpartition(":")[2]
        how = "the bounded model reaches its pre-state: a real violation" if shown.reachable else \
            "the bounded model does not reach its pre-state"
        drawn.append(diagram.cti(f"prove/{enc.protocol}/{enc.variant}: counterexample to induction of {lemma}: "
                                 f"{how}", shown.action or "?", shown.pre, shown.post or {},
                                 shown.path if shown.reachable else None))
        told.append(Explanation(property=lemma, text=f"the step breaks {lemma} from a state that satisfies every "
                                f"lemma; {how}", step=f"step {shown.action}", doc="docs/proofs.md", diagram=0))
    return Check(
        id=f"prove/{enc.protocol}/{enc.variant}", kind="prove", protocol=enc.protocol,
        name=f"{enc.variant} (N={enc.members})", expected=expected, observed=observed, as_expected=ok,
        seconds=round(time.monotonic() - t0 if queries is None else sum(q.seconds for q in qs), 3),
        figures={"members": enc.members, "queries": len(qs), "proved": proved, "cti": len(ctis),
                 "reachable_cti": len(real), "unknown": unknown, "by_frame": framed,
                 "max_query_seconds": round(max(q.seconds for q in qs), 3) if qs else None,
                 "solver_seconds": round(sum(q.seconds for q in qs), 3),
                 "max_query_cpu_seconds": round(max(q.cpu_seconds for q in qs), 3) if qs else None,
                 "matrix": [q.as_json() | {"pre": None, "post": None} if q.result == "cti" else q.as_json()
                            for q in qs]},
        detail=detail,
        explanation=("the flawed variant's lemmas are the fixed variant's; the reachable CTI is a real "
                     "violation of the property in the bounded model of the same size (docs/proofs.md)")
        if enc.expect_cti else "an inductive invariant for unbounded seqnos and messages, fixed N "
        "(docs/proofs.md)",
        mermaid=drawn[0].mermaid if drawn else None, svg=drawn[0].svg if drawn else None, diagrams=drawn,
        explanations=told, finding=ok and enc.expect_cti)


CHAOS_SEED = 1
# frames a node holds or queues before its sender waits (MAX_BACKLOG is 256): a pause of 0.2 s
# holds 20 sends back at 100/s, so flow control runs under the verdict (tests/test_cluster.py)
CLUSTER_BACKLOG = 16


def cluster_plan(protocol: str, seconds: float = 6.0, seed: int = CHAOS_SEED) -> list:
    """The cluster stage's chaos schedule (impl/chaos.py): kills and stalls,
    no false suspicion (``stalls``: that finding has its own runs)."""
    soonest, _ = chaos.suspicion_after(protocol) or (None, None)
    return chaos.schedule(seed, seconds, 3, suspect=soonest, stalls=True)


def cluster_check(out_dir: Path, protocol: str, seconds: float = 6.0, rate: float = 100.0,
                  seed: int = CHAOS_SEED, backlog: int = CLUSTER_BACKLOG) -> Check:
    """The cluster stage for one protocol (the module docstring): ``cluster_plan``
    at ``rate`` multicasts per second per node, each sender waiting once
    ``backlog`` frames are held or queued (figures: each survivor's waits)."""
    t0 = time.monotonic()
    where = Path(out_dir) / "cluster"
    name = f"3 nodes, chaos seed {seed}, {seconds:g} s, backlog {backlog}"
    try:
        plan = cluster_plan(protocol, seconds, seed)
        res = judged(chaos.ChaosRunner(protocol, 3, math.ceil(seconds * rate), plan, where, seed=seed, rate=rate,
                                       timeout=60, backlog=backlog))
    except (ClusterError, OSError) as e:
        return Check(id=f"cluster/{protocol}", kind="cluster", protocol=protocol,
                     name=name, expected="quiescent, traces conform, history clean",
                     observed="error", as_expected=False, seconds=round(time.monotonic() - t0, 3),
                     detail=f"{type(e).__name__}: {e}")
    actions = ", ".join(f"{a.action} {a.target}" for a in plan)
    problems = ([] if res.quiescent else ["not quiescent"]) + \
        ([] if res.verdict == "ok" else [f"replay: {res.verdict}: {res.reason}"]) + \
        [f"history {v['check']}: {v['text']}" for v in res.history]
    return Check(id=f"cluster/{protocol}", kind="cluster", protocol=protocol,
                 name=f"{name}: {actions}",
                 expected="quiescent, traces conform, history clean",
                 observed=f"{res.verdict}; {'quiescent' if res.quiescent else 'not quiescent'}; delivered "
                 + ", ".join(f"{n} at node {k}" for k, n in sorted(res.delivered.items())),
                 as_expected=not problems, seconds=round(time.monotonic() - t0, 3),
                 figures={"delivered": res.delivered, "auth": res.auth, "traces": str(where / "traces"),
                          "backpressured": {n: s.get("runtime.backpressured", 0)
                                            for n, s in sorted((res.stats or {}).items())}},
                 detail="\n".join(problems) or None)


# The progress lines' time left (core/progress.py ``Work``): each
# check to run weighed by its seconds in a real default audit
# (audit_costs.json, made by bench/audit_costs.py), else by the median of
# its protocol's checks of that kind, else of its kind; the stages that run
# ``jobs`` checks at once share the wall clock among them.
COSTS = Path(__file__).with_name("audit_costs.json")
POOLED = ("tlc", "link", "tracevalidation", "prove")


def plan_costs(ids: list[str], jobs: int, table: Optional[dict] = None) -> dict[str, float]:
    """Estimated wall seconds of each check id (``kind/protocol/...``)."""
    if table is None:
        table = json.loads(COSTS.read_text(encoding="utf-8"))["seconds"]
    groups: dict[tuple, list] = {}
    for cid, sec in table.items():
        kind, _, rest = cid.partition("/")
        groups.setdefault((kind,), []).append(sec)
        groups.setdefault((kind, rest.split("/")[0].split("-")[0]), []).append(sec)
    out = {}
    for cid in ids:
        kind, _, rest = cid.partition("/")
        sec = table.get(cid)
        if sec is None:
            near = groups.get((kind, rest.split("/")[0].split("-")[0])) or groups.get((kind,)) or [5.0]
            sec = median(near)
        out[cid] = sec / max(1, jobs) if kind in POOLED else sec
    return out


class _Ticks:
    """The audit's progress: ``done`` of ``todo`` checks that run, each
    reported through ``progress`` when one is given."""

    def __init__(self, progress: Optional[Callable[..., None]], todo: int):
        self.progress, self.todo, self.done = progress, todo, 0

    def say(self, what: str, **kw) -> None:
        if self.progress:
            self.progress(what, self.done, self.todo, **kw)

    def tick(self, what: str, c: Optional[Check] = None, key: Optional[str] = None) -> None:
        """One check finished: ``what`` with its verdict (``key``: its id in the plan)."""
        self.done += 1
        if self.progress:
            self.progress(what, self.done, self.todo, _said(c) if c is not None else "done",
                          key=key or (c.id if c is not None else None))


def _pooled_stages(tlc_on: list, link_on: list, tv: list, encs: list, workers: int, jobs: int,
                   ticks: _Ticks, extra: dict) -> tuple[list[Check], list[Check], list[Check]]:
    """The tlc, link, trace validation and prove stages' checks, run as one
    pool of ``jobs`` at once (default: one per core): TLC and the explorer
    as separate processes or GIL-light loops, each proof variant in a fresh
    process (registry.run_isolated: one z3 context per process, and
    variants run one after another in it interfere).  A model expected ok,
    without PROPERTY, that both the tlc and link stages take is checked by
    one TLC run that also dumps the graph (tlc_and_link_checks) instead of
    two (``shares_one_run``).

    The queue starts with the costliest check of each kind, then the rest
    costliest first: no long check is left alone at the end, and every
    kind's pace under the machine's load is measured in the first minutes,
    so the time left prices the rest of each kind by its own
    (core/progress.py).  Returns (tlc and link checks in manifest order,
    trace validations in sample order, proofs in matrix order)."""
    both = [e for e in tlc_on if e in link_on and shares_one_run(e)]
    work: list[tuple[list[str], Callable[[], list]]] = []     # (the keys one job finishes, the job)
    for k, entries_ in (("tlc", [e for e in tlc_on if e not in both]), ("link", [e for e in link_on if e not in both]),
                        ("both", both)):
        fn = {"tlc": lambda e: [tlc_check(e, workers)], "link": lambda e: [link_check(e, workers)],
              "both": lambda e: tlc_and_link_checks(e, workers)}[k]
        for e in entries_:
            keys = [f"{kk}/{e.protocol}/{e.name}" for kk in (("tlc", "link") if k == "both" else (k,))]
            work.append((keys, partial(fn, e)))
    accepted: dict[str, list] = defaultdict(list)

    def validate(i: int, p: str, sd: int) -> list:
        c, trace = tracevalidation_check(p, sd)
        if trace is not None:
            accepted[p].append((i, trace))
        return [c]
    work += [([f"tracevalidation/{p}/#{i}"], partial(validate, i, p, sd)) for i, (p, sd) in enumerate(tv)]
    if encs:
        from groupcheck.model.proofs import registry as prove_matrix     # lazy: z3 is heavy and only this path needs it

        def prove(enc) -> list:
            [(_, qs)] = list(prove_matrix.run_isolated([enc], jobs=1))
            return [prove_check(enc, queries=qs)]
        work += [([f"prove/{enc.protocol}/{enc.variant}"], partial(prove, enc)) for enc in encs]
    if not work:
        return [], [], []
    cost = plan_costs([k for keys, _ in work for k in keys], 1)
    weight = [sum(cost[k] for k in keys) for keys, _ in work]
    order = sorted(range(len(work)), key=lambda i: -weight[i])
    firsts = list({work[i][0][0].split("/", 1)[0]: i for i in reversed(order)}.values())
    order = sorted(firsts, key=lambda i: -weight[i]) + [i for i in order if i not in firsts]
    ticks.say("TLC, spec ⇄ model, trace validation and proofs",
              queue=([work[i][0] for i in order], max(1, jobs)))     # the pool starts them in this order
    by_key: dict[str, Check] = {}      # a check by its key in the plan
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futs = {pool.submit(work[i][1]): i for i in order}
        for f in as_completed(futs):
            for key, c in zip(work[futs[f]][0], f.result()):
                by_key[key] = c
                ticks.tick(_pool_line(c), c, key=key)
    if tv:
        extra["trace_coverage"] = {p: tlctrace.coverage(p, [t for _, t in sorted(accepted.get(p, []),
                                                                                 key=lambda x: x[0])])
                                   for p in dict.fromkeys(p for p, _ in tv)}
    return ([by_key[f"tlc/{e.protocol}/{e.name}"] for e in tlc_on]
            + [by_key[f"link/{e.protocol}/{e.name}"] for e in link_on],
            [by_key[f"tracevalidation/{p}/#{i}"] for i, (p, _) in enumerate(tv)],
            [by_key[f"prove/{enc.protocol}/{enc.variant}"] for enc in encs])


def _pool_line(c: Check) -> str:
    """A pooled check's progress line, by its kind."""
    return {"tlc": f"TLC {c.protocol}/{c.name}", "link": f"spec ⇄ model {c.protocol}/{c.name}",
            "tracevalidation": f"TLC trace validation {c.name}",
            "prove": f"prove {c.protocol}/{c.id.rsplit('/', 1)[-1]}"}[c.kind]


def _skipped_checks(entries: list, tlc_entries: list, link_entries: list, all_encs: list, encs: list,
                    unchecked: dict, stages: tuple[str, ...]) -> list[Check]:
    """A skipped check for each model, comparison and proof the run leaves
    to ``--full``, with the reason."""
    out: list[Check] = []
    if "tlc" in stages:
        out += [Check(id=f"tlc/{e.protocol}/{e.name}", kind="tlc", protocol=e.protocol, name=e.name,
                      expected=e.expected, observed="skipped", as_expected=True, seconds=0.0,
                      skipped=True, explanation="marked heavy in its manifest (one of the longer TLC runs): "
                      "checked by `groupcheck audit --full` and the slow tests, not by the default audit"
                      if id(e) not in unchecked else
                      f"the smallest model of a shipped variant that no light model checks, left out of the "
                      f"default audit: {unchecked[id(e)]}; checked by `groupcheck audit --full` and the "
                      "slow tests")
                for e in entries if e not in tlc_entries]
    if "link" in stages:
        out += [Check(id=f"link/{e.protocol}/{e.name}", kind="link", protocol=e.protocol, name=e.name,
                      expected="graphs equal", observed="skipped", as_expected=True, seconds=0.0,
                      skipped=True, explanation="marked slow in its manifest: compared by "
                      "`groupcheck audit --full` and the slow tests, not by the default audit")
                for e in entries if e.compare and e not in link_entries]
    out += [Check(id=f"prove/{enc.protocol}/{enc.variant}", kind="prove", protocol=enc.protocol,
                  name=f"{enc.variant} (N={enc.members})", expected="proved", observed="skipped",
                  as_expected=True, seconds=0.0, skipped=True,
                  explanation="marked heavy (a minute or more of z3): proved by `groupcheck prove`, "
                  "`groupcheck audit --full` and the slow tests, not by the default audit")
            for enc in all_encs if enc not in encs]
    return out


def _conformance_stage(conf: list[str], fixed: dict, runs: int, seed: int, out_dir, engine: str,
                       master: Optional[str], ticks: _Ticks, coverage: dict) -> list[Check]:
    """Each protocol's campaign through the pipeline, then the same campaign
    on each stack that fixes one of its findings; a stage that fails is an
    unexpected result, reported."""
    checks: list[Check] = []
    for name in conf:
        ticks.say(f"conformance {name} ({engine})", started=f"conformance/{name}")
        proto = registry.get(name)
        t0 = time.monotonic()
        try:
            res = pipeline.run_audit_stage([name], runs=runs, seed=seed,
                                           out_dir=Path(out_dir) / "traces", engine=engine,
                                           master=master, draw=DRAWN_RUNS)[name]
        except Exception as e:      # the stage failing is an unexpected result, reported
            checks.append(Check(id=f"conformance/{name}", kind="conformance", protocol=name,
                                name=f"{runs} runs", expected="all runs conform", observed="error",
                                as_expected=False, seconds=round(time.monotonic() - t0, 3),
                                detail=f"{type(e).__name__}: {e}"))
            ticks.tick(f"conformance {name}", checks[-1])
            for fx in fixed[name]:
                ticks.tick(f"conformance {name} on {fx}: not run", key=f"conformance/{name}-fixed-by-{fx}")
            continue
        res.setdefault("seconds", time.monotonic() - t0)
        checks.append(conformance_check(proto, res))
        ticks.tick(f"conformance {name}", checks[-1])
        for fx in fixed[name]:
            ticks.say(f"conformance {name} on {fx}", started=f"conformance/{name}-fixed-by-{fx}")
            checks.append(fixed_stack_check(name, fx, runs, seed))
            ticks.tick(f"conformance {name} on {fx}", checks[-1])
        if res.get("coverage"):
            coverage[name] = coverage_figures(res["coverage"])
    return checks


@dataclass
class Plan:
    """What an audit runs and what it skips, before it runs anything."""
    entries: list           # the manifests' models
    picks: list             # heavy models the default run checks (coverage_picks)
    unpicked: dict          # variant -> (its smallest model, why it stays unchecked)
    tlc_entries: list       # the models TLC checks
    link_entries: list      # the models whose graphs are compared
    conf: list              # the protocols whose campaigns run
    hist: list              # those whose histories are checked
    clusters: list          # those run as a cluster
    tv: list                # (protocol, seed) of the runs TLC validates
    all_encs: list          # every proof variant
    encs: list              # those proved
    fixed: dict             # protocol -> the stacks that fix its findings

    def ids(self, stages: tuple[str, ...]) -> list[str]:
        """The checks that run, by id (a skipped one is no work)."""
        return [f"prove/{enc.protocol}/{enc.variant}" for enc in self.encs] \
            + ([f"tlc/{e.protocol}/{e.name}" for e in self.tlc_entries] if "tlc" in stages else []) \
            + ([f"link/{e.protocol}/{e.name}" for e in self.link_entries] if "link" in stages else []) \
            + ([f"conformance/{n}" for n in self.conf]
               + [f"conformance/{n}-fixed-by-{fx}" for n in self.conf for fx in self.fixed[n]]
               if "conformance" in stages else []) \
            + ([f"history/{n}" for n in self.hist] if "history" in stages else []) \
            + [f"tracevalidation/{p}/#{i}" for i, (p, _) in enumerate(self.tv)] \
            + [f"cluster/{p}" for p in self.clusters]

    def counts(self, stages: tuple[str, ...] = STAGES) -> dict[str, int]:
        """Checks by kind, those skipped included, as the report's totals count them."""
        out = Counter(i.split("/", 1)[0] for i in self.ids(stages))
        if "tlc" in stages:
            out["tlc"] = len(self.entries)
        if "link" in stages:
            out["link"] = sum(1 for e in self.entries if e.compare)
        if self.all_encs:
            out["prove"] = len(self.all_encs)
        return {k: n for k, n in sorted(out.items()) if n}


def plan(protocols_: Optional[list[str]] = None, stages: tuple[str, ...] = STAGES, full: bool = False,
         runs: int = 100, seed: int = 0, stratify: bool = True) -> Plan:
    """The audit's plan for these protocols and stages (``full``: ``--full``).
    ``stratify=False``: the TLC sample spread evenly over the campaign, not
    drawn by the runs' classes (which regenerates and replays every run of
    it, about 18 s): the same number of runs, for a caller that only counts
    the checks (``Plan.counts``)."""
    entries = manifest.select(protocols_, None)
    picks, unpicked = coverage_picks(entries)
    conf = [p for p in registry.available() if protocols_ is None or p in protocols_]
    from groupcheck.model.proofs import registry as proofs     # lazy: z3 is heavy and only this path needs it
    all_encs = [enc for p in proofs.protocols() if protocols_ is None or p in protocols_
                for enc in proofs.select(p, every=full)] if "prove" in stages else []
    return Plan(
        entries=entries, picks=picks, unpicked=unpicked,
        tlc_entries=[e for e in entries if full or not e.extra.get("heavy") or e in picks],
        link_entries=[e for e in entries if e.compare and (full or not e.extra.get("slow"))],
        conf=conf, hist=[p for p in conf if p in projectable()],
        clusters=[p for p in conf if registry.get(p).audit_cluster] if "cluster" in stages else [],
        tv=[(p, sd) for p in conf if tlctrace.supported(p)
            for sd in sample_seeds(runs, seed, None if full else TRACE_SAMPLE,
                                   partial(run_classes, p) if stratify else None)]
        if "tracevalidation" in stages else [],
        all_encs=all_encs, encs=[enc for enc in all_encs if full or not enc.heavy],
        fixed={p: list(dict.fromkeys(f.fixed_by for f in registry.get(p).findings if f.fixed_by)) for p in conf})


def run(out_dir: str | Path = "audit", *, runs: int = 100, seed: int = 0, engine: str = "spark",
        master: Optional[str] = None, workers: int = 1, full: bool = False,
        protocols_: Optional[list[str]] = None, stages: tuple[str, ...] = STAGES,
        progress: Optional[Callable[..., None]] = None,
        jobs: Optional[int] = None) -> tuple[list[Check], dict]:
    """Run the stages; return (checks, extra) where extra holds coverage."""
    jobs = jobs or os.cpu_count() or 1
    pl = plan(protocols_, stages, full, runs, seed)
    entries, picks, unpicked = pl.entries, pl.picks, pl.unpicked
    tlc_entries, link_entries, conf, hist = pl.tlc_entries, pl.link_entries, pl.conf, pl.hist
    clusters, tv, all_encs, encs, fixed = pl.clusters, pl.tv, pl.all_encs, pl.encs, pl.fixed
    ids = pl.ids(stages)
    ticks = _Ticks(progress, len(ids))
    if progress:
        progress(f"audit: {len(ids)} checks to run", 0, len(ids), plan=plan_costs(ids, jobs))
    t_start = time.monotonic()
    extra: dict = {"coverage": {}, "skipped_link_models": [f"{e.protocol}/{e.name}" for e in entries
                                                          if e.compare and e not in link_entries],
                   "stages": {"all": list(STAGES), "selected": [s for s in STAGES if s in stages]},
                   "shipped_variants": _variants_figures(entries, [] if full else picks,
                                                         {} if full else unpicked)}
    # Spark's conformance first, alone on the machine; then the pooled stages
    # (TLC, spec ⇄ model, trace validation, proofs) as one pool; the history
    # and the cluster last.  The report keeps the stages' order.
    conformed = _conformance_stage(conf, fixed, runs, seed, out_dir, engine, master, ticks, extra["coverage"]) \
        if "conformance" in stages and conf else []
    checks, validated, proved = _pooled_stages(tlc_entries if "tlc" in stages else [],
                                               link_entries if "link" in stages else [], tv, encs,
                                               workers, jobs, ticks, extra)
    if "tlc" in stages and not full:
        picked = {f"tlc/{e.protocol}/{e.name}" for e in picks}
        for c in checks:
            if c.kind == "tlc" and c.id in picked:
                c.figures["coverage_pick"] = True
    checks += _skipped_checks(entries, tlc_entries, link_entries, all_encs, encs,
                              {} if full else {id(e): why for e, why in unpicked.values()}, stages)
    checks += conformed
    if "history" in stages:
        for name in hist:
            ticks.say(f"history {name}", started=f"history/{name}")
            checks.append(history_check(name, min(runs, HISTORY_RUNS), seed))
            ticks.tick(f"history {name}", checks[-1])
    checks += validated + proved
    for p in clusters:
        ticks.say(f"cluster {p} (3 processes, chaos)", started=f"cluster/{p}")
        checks.append(cluster_check(Path(out_dir) / p if len(clusters) > 1 else Path(out_dir), p))
        ticks.tick(f"cluster {p}", checks[-1])
    extra["wall_seconds"] = round(time.monotonic() - t_start, 3)
    return checks, extra
