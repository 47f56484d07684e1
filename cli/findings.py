"""Documented findings and the exit rule of every checking command
(``conform``, ``history``, ``cluster run``/``down``; README "Exit codes").

A documented finding is a violation the protocol's docs describe, in the
shape they describe (SEQUENCER losing TotalOrder because the crashed
coordinator and its successor sequenced two messages): a result as expected,
exit 0, labelled as such.  ``--known`` demands one (exit 1 when no
run reproduces a documented finding: a CI job that must keep seeing the flaw),
``--no-known`` forbids them (each is then unexpected, 1).  ``--expect
PROPERTY`` accepts violations of PROPERTY and demands one, as ``check FILE.tla
--expect PROPERTY`` does."""

from __future__ import annotations

from typing import Iterable, List, Optional

import typer

from groupcheck.conformance.findings import violated

KNOWN_HELP = ("documented findings (e.g. SEQUENCER's TotalOrder after a coordinator crash) are accepted by "
              "default; --known demands one, --no-known forbids them")
EXPECT_HELP = "a property whose violation is expected and must occur (repeatable)"


def known_option():
    return typer.Option(None, "--known/--no-known", help=KNOWN_HELP)


def expect_option():
    return typer.Option([], "--expect", metavar="PROPERTY", help=EXPECT_HELP)


def documented(row: dict) -> bool:
    """Is this verdict row a documented finding of its protocol?  The one
    place that decides it, for every command: only when the run has a
    finding's shape (the row's ``finding``, which the replay sets when a
    documented finding's witness matches the trace, conformance/findings.py).
    A black-box history row carries none: a history alone shows no witness,
    so its violations are never taken for a finding."""
    return violated(row) is not None and bool(row.get("finding"))


class Gate:
    """``--known``/``--no-known`` and ``--expect`` applied to violation rows."""

    def __init__(self, expect: Iterable[str] = (), known: Optional[bool] = None):
        self.expect, self.known = list(expect), known

    def accepted(self, row: dict) -> bool:
        prop = violated(row)
        if prop is None:
            return False
        return prop in self.expect or (self.known is not False and documented(row))

    def note(self, row: dict) -> str:
        """`` (documented finding)`` or `` (expected)`` for an accepted row."""
        if not self.accepted(row):
            return ""
        return " (expected)" if violated(row) in self.expect else " (documented finding)"

    def missing(self, rows: List[dict]) -> List[str]:
        """What was demanded and no row shows, one sentence each."""
        seen = {violated(r) for r in rows}
        out = [f"--expect {p}: no run violates {p}" for p in self.expect if p not in seen]
        if self.known and not any(documented(r) for r in rows):
            out.append("--known: no run reproduces a documented finding")
        return out

    def exit_code(self, rows: List[dict], unexpected: int) -> int:
        """The one rule: 2 when an input was malformed (a rejected run), else
        1 for an unexpected result or a demanded violation that did not
        occur, else 0."""
        if any(r.get("verdict") == "rejected" for r in rows):
            return 2
        return 1 if unexpected or self.missing(rows) else 0
