"""The README's picture (docs/report.png) is of the audit as it is now:
``make screenshot`` writes beside it the counts of checks by kind of the
audit it shows (docs/report.json, from that audit's summary.json), and the
audit's plan now must count the same.  A model, a proof variant or a stage
added without a new picture fails here: run ``make audit`` and ``make
screenshot``."""

import json
from pathlib import Path

from groupcheck.conformance.audit.stages import plan

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_picture_shows_the_audit_as_it_is_now():
    shown = json.loads((ROOT / "docs" / "report.json").read_text(encoding="utf-8"))
    now = plan(stratify=False).counts()     # the counts of the audit's own plan (test_audit.py)
    assert shown["by_kind"] == now, ("docs/report.png pictures another audit: run make audit, then make "
                                     f"screenshot (pictured {shown['by_kind']}, the audit now {now})")
    assert shown["checks"] == sum(now.values())
