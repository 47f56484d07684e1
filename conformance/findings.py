"""Documented findings as data: a witness each, a rate each, checked.

Theory of operation
-------------------
A *finding* is a documented way a protocol as the seed describes it
breaks one of its properties (docs/<protocol>.md, with a counterexample).
A violation in a campaign counts as that finding only if the run has the
finding's *shape*: ``Finding.witness`` reads the run's trace and returns the
witness as text (which members, which messages, which steps), or None when
the run breaks the property some other way.  A violation no finding
witnesses is unexpected, whatever property it names: a new fault that
breaks a property a finding also breaks is not masked by it.

Each finding also has a *rate* per fault plan kind (``Finding.rates``:
measured hits and runs, on seeds the audit does not use).  A campaign
tallies its runs per plan kind (the protocol's ``plan_kind`` of the trace
header) and per finding; ``band`` gives the counts a campaign of n runs of
that kind may show when the rate is what was measured, and the audit fails
outside it.  A plan kind with no measured rate allows no hit: a finding that
needs a coordinator crash never shows in runs without one, and its witness
would not match anyway.  The statistics are in docs/architecture.md
("Findings and their rates").

A protocol registers its findings in ``Protocol.findings`` and its plan
kinds in ``Protocol.plan_kind`` (conformance/replay/registry.py); ``classify``
runs after every replay that ends in a violation, so the local engine, the
Spark pipeline, ``conform``, ``cluster run`` and the audit read the same
``finding`` field of a verdict row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional


# the one-sided probability of a band's ends (each): a campaign of a stack
# whose rate is the measured one leaves its band once in 10,000 audits
ALPHA = 1e-4
# z for the measured rate's own uncertainty (two-sided 99.9 %, Wilson)
Z_RATE = 3.29


@dataclass(frozen=True)
class Finding:
    id: str                         # "<protocol>/<name>", stable: rows and pinned figures use it
    properties: tuple[str, ...]     # the properties a run with this shape is reported to violate
    doc: str                        # where it is documented, e.g. "docs/sequencer.md#finding-..."
    # (trace, property, reason, first bad event or None) -> the witness as text, or None when the
    # run is not of this shape
    witness: Callable
    # plan kind -> (runs of that kind that showed this finding, runs of that kind), measured
    rates: dict = field(default_factory=dict)
    # the stack that fixes it (a registered protocol run on the same plans), where one exists
    fixed_by: Optional[str] = None


VIOLATED = ("violation", "documented")      # the verdicts of a run that breaks some property


def violated(row: dict) -> Optional[str]:
    """The property a verdict row's (first) violation names (its
    ``property``, or its reason's ``Property: ...`` prefix); None when the
    row is neither a violation nor a documented finding.  Every consumer of
    verdict rows (the audit, the CLI) reads it here."""
    if row.get("verdict") not in VIOLATED:
        return None
    vs = row.get("violations")
    if vs:
        return vs[0]["property"]
    return row.get("property") or (row.get("reason") or "").split(":")[0] or None


def violations_of(row: dict) -> list[dict]:
    """Every violation of a verdict row, each ``{"property", "finding", ...}``
    (a row that carries only one property: that one, with the row's finding)."""
    if row.get("verdict") not in VIOLATED:
        return []
    vs = row.get("violations")
    if vs:
        return list(vs)
    return [{"property": violated(row), "finding": row.get("finding"), "witness": row.get("reason")}]


def classify_run(proto, trace, rep) -> None:
    """Classify each of a violating run's violations on its own (``classify``
    with that violation's own witness) and set the run's verdict:
    ``documented`` when every violation has a documented finding's shape,
    else ``violation``; ``finding`` is then the run's finding (the first
    violation's; a run that also breaks something no finding covers has
    none), ``finding_why`` the covered and the uncovered ones, apart."""
    for v in rep.violations:
        v["finding"], v["finding_why"] = classify(proto, trace, v["property"], v["witness"], v["event"])
    covered = [v for v in rep.violations if v["finding"]]
    uncovered = [v for v in rep.violations if not v["finding"]]
    if rep.violations and not uncovered:
        rep.verdict = "documented"
        rep.finding = covered[0]["finding"]
        rep.finding_why = "; ".join(f"{v['property']}: {v['finding_why']}" for v in covered)
    else:
        rep.verdict, rep.finding = "violation", None
        rep.finding_why = "; ".join(
            [f"not covered: {v['property']} ({v['finding_why']})" for v in uncovered]
            + [f"covered: {v['property']} by {v['finding']}" for v in covered])


def classify(proto, trace, prop: str, reason: str, at: Optional[int] = None) -> tuple[Optional[str], str]:
    """(the id of the documented finding a violation of ``prop`` in
    ``trace`` has the shape of, or None; the witness, or why none matched)."""
    tried = []
    for f in proto.findings:
        if prop not in f.properties:
            continue
        try:
            why = f.witness(trace, prop, reason, at)
        except (KeyError, TypeError, ValueError, IndexError) as e:   # a witness never crashes a verdict
            tried.append(f"{f.id}: witness unreadable ({type(e).__name__}: {e})")
            continue
        if why:
            return f.id, why
        tried.append(f"{f.id}: not its shape")
    if not tried:
        return None, f"no documented finding of {proto.name} violates {prop}"
    return None, "; ".join(tried)


# ---------------------------------------------------------------- rates

def _binom_cdf(k: int, n: int, p: float) -> float:
    """P[X <= k] for X ~ Binomial(n, p), summed in log space (n up to 10^5)."""
    if k < 0:
        return 0.0
    if k >= n or p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    lp, lq = math.log(p), math.log1p(-p)
    total = 0.0
    for j in range(k + 1):
        total += math.exp(math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) + j * lp + (n - j) * lq)
    return min(1.0, total)


def _wilson(hits: int, runs: int, z: float = Z_RATE) -> tuple[float, float]:
    """The Wilson score interval of a measured rate."""
    if runs <= 0:
        return 0.0, 1.0
    p = hits / runs
    d = 1 + z * z / runs
    mid = (p + z * z / (2 * runs)) / d
    half = z * math.sqrt(p * (1 - p) / runs + z * z / (4 * runs * runs)) / d
    return max(0.0, mid - half), min(1.0, mid + half)


def band(measured: Optional[tuple[int, int]], n: int) -> tuple[int, int]:
    """The hits a campaign of ``n`` runs may show: from the ALPHA quantile
    of Binomial(n, low end of the measured rate's interval) to the 1-ALPHA
    quantile of Binomial(n, its high end).  No measured rate: (0, 0)."""
    if not measured or n <= 0:
        return 0, 0
    lo_p, hi_p = _wilson(*measured)
    lo = 0
    while lo < n and _binom_cdf(lo, n, lo_p) < ALPHA:
        lo += 1
    hi = 0
    while hi < n and _binom_cdf(hi, n, hi_p) < 1 - ALPHA:
        hi += 1
    return lo, hi


def tally(rows: list[dict]) -> dict:
    """``{plan kind: {"runs": n, finding id: hits, ...}}`` from verdict rows
    (each with ``plan`` and ``finding``)."""
    out: dict = {}
    for r in rows:
        kind = out.setdefault(r.get("plan") or "?", {"runs": 0})
        kind["runs"] += 1
        if r.get("finding"):
            kind[r["finding"]] = kind.get(r["finding"], 0) + 1
    return out


def out_of_band(proto, counts: dict) -> list[str]:
    """Why ``counts`` (``tally``'s) is outside some finding's band, one
    line each; [] when every finding's count is inside its band."""
    bad = []
    for f in proto.findings:
        for kind, c in sorted(counts.items()):
            n, hits = c["runs"], c.get(f.id, 0)
            lo, hi = band(f.rates.get(kind), n)
            if not lo <= hits <= hi:
                m = f.rates.get(kind)
                was = f"{m[0]} of {m[1]} measured" if m else "never measured"
                bad.append(f"{f.id}: {hits} of {n} '{kind}' runs, outside [{lo}, {hi}] ({was})")
    return bad


def rate_figures(proto, counts: dict) -> dict:
    """The report's figures: per finding and plan kind, hits / runs and the band."""
    return {f.id: {kind: {"hits": c.get(f.id, 0), "runs": c["runs"], "band": list(band(f.rates.get(kind), c["runs"]))}
                   for kind, c in sorted(counts.items())}
            for f in proto.findings}


def history_findings(proto, trace, violations: list[dict]) -> list[Optional[str]]:
    """For each of a black-box history's violations (``Violation.to_json``:
    ``check``, ``property``: the catalogue's property under the check's name,
    ``text``), the documented finding that covers it, or None.
    The history is that of the run ``trace`` records (checked by the caller:
    ``history.same_run``), so each violation is classified as a replay's
    is, by the finding's own witness read off the trace for that property:
    a witness covers a property only when every instance of it in the run
    (every lost message, every pair ordered differently) has the finding's
    shape, so the history's instance, whichever it names, is among them."""
    return [classify(proto, trace, v.get("property") or v["check"], v.get("text") or "")[0] for v in violations]
