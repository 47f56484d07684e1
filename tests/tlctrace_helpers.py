"""What the TLC trace-validation tests share: a run's event records, and the
two checkers' verdicts on one trace (TLC's, and the model replay's as JSON)."""
from __future__ import annotations

import shutil

import pytest

from groupcheck.conformance import tlctrace
from groupcheck.conformance.replay import conform_file
from groupcheck.conformance.traces import load
from groupcheck.impl.tracefile import write

NEEDS_JAVA = pytest.mark.skipif(shutil.which("java") is None, reason="TLC needs java")


def events(recs: list) -> list:
    return [r for r in recs[1:] if r["kind"] == "event"]


def both(tmp_path, records: list, name: str):
    """(TLC's verdict, the replay's report as JSON) on ``records`` written as ``name``."""
    p = write(tmp_path / f"{name}.ndjson", records)
    return tlctrace.validate(load(p)), conform_file(p).to_json()
