"""The audit's cost table (conformance/audit/audit_costs.json), from the
summary.json of a real default audit run: each check's seconds, which the
audit's progress weighs its checks by (conformance/audit/stages.py ``plan_costs``).

    .venv/bin/python bench/audit_costs.py audit/summary.json --load "2-3"

The figures are the checks' own seconds as measured in that run (the
stages that run ``jobs`` checks at once measured with that many beside
each other); the run's date, machine and wall time are kept with them."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "conformance" / "audit" / "audit_costs.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("summary", type=Path)
    ap.add_argument("--load", required=True, help="the machine's load average during that run, e.g. 2-3")
    a = ap.parse_args()
    s = json.loads(a.summary.read_text(encoding="utf-8"))
    table = {"measured": {"generated": s["generated"], "machine": s["machine"], "load": a.load,
                          "wall_seconds": s.get("wall_seconds")},
             "seconds": {c["id"]: round(c["seconds"], 2) for c in s["checks"] if not c.get("skipped")}}
    OUT.write_text(json.dumps(table, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(table['seconds'])} checks")


if __name__ == "__main__":
    main()
