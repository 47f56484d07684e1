"""Manifest models marked ``"heavy"`` (the longer TLC runs) are left out
of the default audit's tlc stage; here, under the heavy marker, TLC checks
each against its manifest expectation and pinned distinct-state count: `make test-heavy` checks every model, CI as
many as its time allows (conformance/audit/stages.py, docs/architecture.md)."""

from __future__ import annotations

import shutil

import pytest

from groupcheck.conformance.audit import stages as audit
from groupcheck.model import manifest

pytestmark = [pytest.mark.heavy, pytest.mark.skipif(shutil.which("java") is None, reason="TLC needs java")]

HEAVY = [pytest.param(e, id=f"{e.protocol}-{e.name}")
         for p in manifest.protocols() for e in manifest.load(p) if e.extra.get("heavy")]


def test_some_models_are_heavy():
    assert HEAVY, "no heavy model: drop this module or the flag"


@pytest.mark.parametrize("entry", HEAVY)
def test_heavy_model_as_expected(entry):
    """A heavy model the link also compares, expected ok without PROPERTY,
    is checked by one TLC run that dumps the graph too (the audit's
    ``tlc_and_link_checks``); tests/test_spec_model_link.py leaves it to
    this test rather than run TLC on it a second time."""
    checks = audit.tlc_and_link_checks(entry) if audit.shares_one_run(entry) else [audit.tlc_check(entry)]
    for c in checks:
        assert c.as_expected, (c.kind, c.observed, c.detail)

