"""The layers a mutant is judged by beyond the tests (bench/mutants.py runs
each in a child process on the mutated tree): the audit's campaign, TLC
trace validation, the history checker and a cluster run."""

from __future__ import annotations

import inspect
import json
import os
import sys
import tempfile
from pathlib import Path



def _campaign(protocols: list[str], runs: int, seed: int) -> tuple[bool, str]:
    """The audit's conformance stage without the Spark/Parquet pipeline:
    the same drawn runs, replayed, judged by ``audit.conformance_check``."""
    from groupcheck.conformance import findings
    from groupcheck.conformance.audit import stages as audit
    from groupcheck.conformance.replay import registry
    from groupcheck.core.trace.reader import from_records
    why = []
    for name in protocols:
        proto = registry.get(name)
        verdicts: dict[str, int] = {}
        rows, bad = [], []
        for sd in range(seed, seed + runs):
            faults, options = proto.draw(sd) if proto.draw else (proto.campaign_faults, {})
            records, _ = proto.simulate(sd, faults, {**proto.default_options, **options})
            rep = proto.replay(from_records(records), visited=False)
            verdicts[rep.verdict] = verdicts.get(rep.verdict, 0) + 1
            rows.append({"plan": rep.plan, "finding": rep.finding})
            if rep.verdict != "ok":
                bad.append({"run_id": rep.run_id, "verdict": rep.verdict, "reason": rep.reason,
                            "first_bad_event": rep.first_bad_event,
                            "property": (rep.reason or "").split(":", 1)[0] if rep.verdict == "violation" else None,
                            "finding": rep.finding, "finding_why": rep.finding_why, "plan": rep.plan})
        res = {"runs": runs, "verdicts": verdicts, "bad_runs": bad, "findings": findings.tally(rows),
               "disagreements": 0}
        checks = [audit.conformance_check(proto, res)]
        checks += [audit.fixed_stack_check(name, fixed, runs, seed)
                   for fixed in dict.fromkeys(f.fixed_by for f in proto.findings if f.fixed_by)]
        why += [f"{c.id}: {c.observed}; {(c.detail or '').splitlines()[0] if c.detail else ''}"
                for c in checks if not c.as_expected]
    return bool(why), "; ".join(why)


def _tlc(protocols: list[str], runs: int, seed: int, tlc_runs: int) -> tuple[bool, str]:
    from groupcheck.conformance import tlctrace
    from groupcheck.conformance.audit import stages as audit
    why = []
    for name in protocols:
        if not tlctrace.supported(name):
            continue
        for sd in audit.sample_seeds(runs, seed, tlc_runs):
            c, _ = audit.tracevalidation_check(name, sd)
            # TLC's own observation: a rejection (even one the replay shares) or a disagreement
            if not c.as_expected or not c.observed.startswith("both accept"):
                why.append(f"{c.id}: {c.observed}")
    return bool(why), "; ".join(why)


def _history(protocols: list[str], runs: int, seed: int) -> tuple[bool, str]:
    from groupcheck.conformance.audit import stages as audit
    from groupcheck.conformance.history import projectable
    why = []
    for name in protocols:
        if name in projectable():
            c = audit.history_check(name, min(runs, audit.HISTORY_RUNS), seed)
            if not c.as_expected:
                why.append(f"{c.id}: {c.observed}; {(c.detail or '').splitlines()[0] if c.detail else ''}")
    return bool(why), "; ".join(why)


def _cluster(protocols: list[str]) -> tuple[bool, str]:
    from groupcheck.conformance.audit import stages as audit
    from groupcheck.conformance.replay import registry
    why = []
    with tempfile.TemporaryDirectory() as d:
        for name in protocols:
            if registry.get(name).audit_cluster:
                c = audit.cluster_check(Path(d) / name, name, seconds=3.0)
                if not c.as_expected:
                    why.append(f"{c.id}: {c.observed}; {c.detail or ''}")
    return bool(why), "; ".join(why)


def _runs_code_of(protocol: str) -> list[str]:
    """The files (relative to the tree) whose functions one simulated and
    replayed run of ``protocol`` calls: importing is not enough (the stack
    registry imports every layer), so module and class bodies do not count."""
    from groupcheck.conformance.replay import registry
    from groupcheck.core.trace.reader import from_records
    root = str(Path(__file__).resolve().parent.parent) + os.sep
    proto = registry.get(protocol)
    faults, options = proto.draw(0) if proto.draw else (proto.campaign_faults, {})
    seen: set[str] = set()

    def prof(frame, event, arg):
        if event == "call" and frame.f_code.co_flags & inspect.CO_NEWLOCALS:
            seen.add(frame.f_code.co_filename)
    sys.setprofile(prof)
    try:
        records, _ = proto.simulate(0, faults, {**proto.default_options, **options})
        proto.replay(from_records(records), visited=False)
    finally:
        sys.setprofile(None)
    return sorted(os.path.relpath(os.path.realpath(f), root) for f in seen
                  if os.path.realpath(f).startswith(root))


def child(a) -> None:
    protocols = a.protocols.split(",") if a.protocols else []
    if a.layer == "loads":
        print(json.dumps(_runs_code_of(protocols[0])))
        return
    if a.layer == "import":
        import importlib
        importlib.import_module(a.module_name)
        print(json.dumps({"killed": False}))
        return
    fn = {"campaign": lambda: _campaign(protocols, a.runs, a.seed),
          "tlc": lambda: _tlc(protocols, a.runs, a.seed, a.tlc_runs),
          "history": lambda: _history(protocols, a.runs, a.seed),
          "cluster": lambda: _cluster(protocols)}[a.layer]
    killed, why = fn()
    print(json.dumps({"killed": killed, "why": why[:2000]}))
