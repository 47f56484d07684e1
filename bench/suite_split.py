"""Which tests run in the default suite and which behind ``slow``, from measured durations.

    .venv/bin/python -m pytest -q -n 2 --dist loadgroup --durations=0 > durations.log
    .venv/bin/python bench/suite_split.py durations.log [--threshold 2.0] [--split tests/suite_split.txt]

A test whose setup and call took at least ``--threshold`` seconds in that
run goes behind the ``slow`` marker (tests/conftest.py reads the file),
unless the split file names it ``keep``: the default suite's representatives
of each costly kind of check (a TLC trace validation accepting and one
rejecting, per protocol; a graph equality per base protocol; a cluster kill;
...), chosen by hand.  The ``keep`` lines and the comments before them are
kept; the ``slow`` lines are rewritten, heaviest first, with their seconds.
A test marked ``slow`` in its own file is not listed (it already is).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

LINE = re.compile(r"([\d.]+)s (?:call|setup|teardown)\s+(\S+)")


def durations(log: Path) -> dict[str, float]:
    per: dict[str, float] = defaultdict(float)
    for line in log.read_text(encoding="utf-8").splitlines():
        m = LINE.match(line)
        if m:
            per[m.group(2)] += float(m.group(1))
    return per


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log", type=Path, help="pytest output with --durations=0 of the default suite")
    ap.add_argument("--threshold", type=float, default=1.25, help="seconds (setup + call + teardown)")
    ap.add_argument("--split", type=Path, default=Path(__file__).resolve().parent.parent / "tests" / "suite_split.txt")
    a = ap.parse_args(argv)
    per = durations(a.log)
    if not per:
        sys.exit(f"{a.log}: no durations (run pytest with --durations=0)")
    head = [ln for ln in a.split.read_text(encoding="utf-8").splitlines()
            if not ln.startswith("slow ")] if a.split.exists() else []
    keep = {ln.split()[1] for ln in head if ln.startswith("keep ")}
    slow = sorted(((v, k) for k, v in per.items() if v >= a.threshold and k not in keep), reverse=True)
    a.split.write_text("\n".join([*head, *(f"slow {v:6.1f} {k}" for v, k in slow)]) + "\n", encoding="utf-8")
    left = sum(per.values()) - sum(v for v, _ in slow)
    print(f"{a.split}: {len(slow)} tests behind slow; the default suite's tests sum to {left:.0f} s "
          f"(of {sum(per.values()):.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
