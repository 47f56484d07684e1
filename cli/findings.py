"""Documented findings and the exit rule of every checking command
(``conform``, ``history``, ``cluster run``/``down``; README "Exit codes").

A documented finding is a violation the protocol's docs describe, in the
shape they describe (SEQUENCER losing TotalOrder because the crashed
coordinator and its successor sequenced two messages): a result as expected,
exit 0, labelled as such.  ``--known`` demands one (exit 1 when no
run reproduces a documented finding: a CI job that must keep seeing the flaw),
``--no-known`` forbids them (each is then unexpected, 1).  ``--expect
PROPERTY`` accepts violations of PROPERTY and demands one, as ``check FILE.tla
--expect PROPERTY`` does; ``--allow PROPERTY`` accepts them where they occur
and demands none (a flaw of the target that shows in some runs only, like
JGroups's Agreement loss after a coordinator kill, docs/jgroups.md)."""

from __future__ import annotations

from typing import Iterable, List, Optional

import typer

from groupcheck.conformance.findings import violated, violations_of
from groupcheck.conformance.replay.engine import Verdict


KNOWN_HELP = ("documented findings (e.g. SEQUENCER's TotalOrder after a coordinator crash) are accepted by "
              "default; --known demands one, --no-known forbids them")
EXPECT_HELP = "a property whose violation is expected and must occur (repeatable)"
ALLOW_HELP = "a property whose violation is accepted where it occurs, not demanded (repeatable)"


def known_option():
    return typer.Option(None, "--known/--no-known", help=KNOWN_HELP)


def expect_option():
    return typer.Option([], "--expect", metavar="PROPERTY", help=EXPECT_HELP)


def allow_option():
    return typer.Option([], "--allow", metavar="PROPERTY", help=ALLOW_HELP)


def documented(row: dict) -> bool:
    """Is this verdict row a documented finding of its protocol?  The one
    place that decides it, for every command: only when every violation of
    the run has a finding's shape (the row's verdict ``documented``, which
    the replay sets when each violation's own witness matches a documented
    finding, conformance/findings.py).  A black-box history row is
    documented only where the run's trace beside it shows the same
    violation with a finding's shape (cli/history.py)."""
    return row.get("verdict") == Verdict.DOCUMENTED


class Gate:
    """``--known``/``--no-known``, ``--expect`` and ``--allow`` applied to violation rows."""

    def __init__(self, expect: Iterable[str] = (), known: Optional[bool] = None, allow: Iterable[str] = ()):
        self.expect, self.known, self.allow = list(expect), known, list(allow)

    def accepted(self, row: dict) -> bool:
        """Every violation of the row is --expect'ed or --allow'ed, or (unless
        --no-known) covered by a documented finding."""
        vs = violations_of(row)
        return bool(vs) and all(v["property"] in self.expect or v["property"] in self.allow
                                or (self.known is not False and v.get("finding")) for v in vs)

    def unexpected(self, row: dict) -> bool:
        """A result that fails the command (exit 1): anything but ok,
        incomplete (exit 4) and rejected (exit 2) that the gate does not accept."""
        return row.get("verdict") not in (Verdict.OK, Verdict.INCOMPLETE, Verdict.REJECTED) and not self.accepted(row)

    def note(self, row: dict) -> str:
        """`` (documented finding)`` or `` (expected)`` for an accepted row."""
        if not self.accepted(row):
            return ""
        if all(v["property"] in self.expect or v["property"] in self.allow for v in violations_of(row)):
            return " (expected)"
        return " (documented finding)"

    def missing(self, rows: List[dict]) -> List[str]:
        """What was demanded and no row shows, one sentence each."""
        seen = {v["property"] for r in rows for v in violations_of(r)}
        out = [f"--expect {p}: no run violates {p}" for p in self.expect if p not in seen]
        if self.known and not any(documented(r) for r in rows):
            out.append("--known: no run reproduces a documented finding")
        return out

    def exit_code(self, rows: List[dict], unexpected: int) -> int:
        """The one rule: 2 when an input was malformed (a rejected run), else
        1 for an unexpected result (a violation no finding covers, a
        nonconforming run, a disagreement) or a demanded violation that did
        not occur, else 4 when some run is ``incomplete`` (nothing, or not
        enough, was checked), else 0."""
        if any(r.get("verdict") == Verdict.REJECTED for r in rows):
            return 2
        if unexpected or self.missing(rows):
            return 1
        return 4 if any(r.get("verdict") == Verdict.INCOMPLETE for r in rows) else 0


def run_lines(row: dict) -> List[str]:
    """The lines under a run's verdict: each violation on its own, the
    ones a documented finding covers and the others apart; else the reason."""
    vs = row.get("violations") or []
    if not vs:
        return [row["reason"]] if row.get("reason") else []
    covered = [v for v in vs if v.get("finding")]
    out = [f"{v['property']}: {v['witness']}" + ("" if v.get("event") is None else f" (event {v['event']})")
           for v in vs if not v.get("finding")]
    if covered and len(covered) < len(vs):
        out = [f"not covered by a finding: {line}" for line in out]
    out += [f"documented finding {v['finding']}: {v['property']}: {v['witness']}" for v in covered]
    return out


def tally_line(rows: List[dict], bad: list) -> str:
    """The closing line of a checking command: runs ok, documented or
    expected, incomplete."""
    n_ok = sum(r["verdict"] == Verdict.OK for r in rows)
    n_inc = sum(r["verdict"] == Verdict.INCOMPLETE for r in rows)
    n_exp = len(rows) - n_ok - n_inc - len(bad) - sum(r["verdict"] == Verdict.REJECTED for r in rows)
    return (f"{n_ok}/{len(rows)} runs ok" + (f", {n_exp} documented or expected violation(s)" if n_exp else "")
            + (f", {n_inc} incomplete (nothing or not enough checked)" if n_inc else ""))
