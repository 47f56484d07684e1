"""Which tests run in the default suite, which behind ``slow`` and which behind ``heavy``, from measured durations.

    .venv/bin/python -m pytest -q -n 2 --dist loadgroup --durations=0 > durations.log
    .venv/bin/python bench/suite_split.py durations.log [--threshold 1.25] [--split tests/suite_split.txt]
    .venv/bin/python -m pytest -q -m "slow or heavy" -n 2 --dist loadgroup --durations=0 > slow.log
    .venv/bin/python bench/suite_split.py slow.log --tier heavy [--threshold 40]

A test whose setup and call took at least ``--threshold`` seconds in that
run goes behind the ``slow`` marker (tests/conftest.py reads the file),
unless the split file names it ``keep``: the default suite's representatives
of each costly kind of check (a TLC trace validation accepting and one
rejecting, per protocol; a graph equality per base protocol; a cluster kill;
...), chosen by hand.  The ``keep`` lines and the comments before them are
kept; the ``slow`` lines are rewritten, heaviest first, with their seconds.
A test marked ``slow`` in its own file is not listed (it already is).

With ``--tier heavy`` the log is the slow suite's: a test that took at
least ``--threshold`` seconds there (40 by default) goes behind ``heavy``
(but a ``stay`` line's test)
(out of ``make test-slow``, into ``make test-heavy``), so the slow suite
stays within 30 minutes on 2 cores; a ``heavy`` line is kept for a test
the log does not hold (a slow tier's log holds no heavy test), rewritten
for one it holds, and a test's ``slow`` line gives way to its ``heavy`` one.  A module marked
``heavy`` as a whole (tests/test_manifest_heavy.py) is not listed.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
from collections import defaultdict
from pathlib import Path

LINE = re.compile(r"([\d.]+)s (?:call|setup|teardown)\s+(\S+)")


def durations(log: Path) -> dict[str, float]:
    """Seconds per test id, from pytest's ``--durations=0`` lines or from a
    ``--junitxml`` report (whose times cover what ran before an interrupt)."""
    per: dict[str, float] = defaultdict(float)
    if log.suffix == ".xml":
        import xml.etree.ElementTree as ET
        for case in ET.parse(log).getroot().iter("testcase"):
            if case.find("skipped") is not None:
                continue
            parts, name = case.get("classname", "").split("."), case.get("name", "")
            for cut in range(len(parts), 0, -1):       # tests.test_x[.TestClass]: the module is the longest file
                if Path("/".join(parts[:cut]) + ".py").exists() or cut == 1:
                    nodeid = "::".join(["/".join(parts[:cut]) + ".py", *parts[cut:], name])
                    break
            per[nodeid] += float(case.get("time", 0))
        return per
    for line in log.read_text(encoding="utf-8").splitlines():
        m = LINE.match(line)
        if m:
            per[m.group(2)] += float(m.group(1))
    return per


def _whole_module_heavy(nodeid: str, root: Path) -> bool:
    return _module_heavy(root / nodeid.split("::")[0])


@functools.lru_cache(maxsize=None)
def _module_heavy(path: Path) -> bool:      # once per module, not per test
    return path.exists() and "pytestmark = [pytest.mark.heavy" in path.read_text(encoding="utf-8")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log", type=Path, help="pytest output with --durations=0, or its --junitxml report "
                    "(the default suite, or the slow one)")
    ap.add_argument("--tier", choices=("slow", "heavy"), default="slow")
    ap.add_argument("--threshold", type=float, default=None,
                    help="seconds (setup + call + teardown); 1.25 for slow, 40 for heavy")
    ap.add_argument("--split", type=Path, default=Path(__file__).resolve().parent.parent / "tests" / "suite_split.txt")
    a = ap.parse_args(argv)
    threshold = a.threshold if a.threshold is not None else (1.25 if a.tier == "slow" else 40.0)
    per = durations(a.log)
    if not per:
        sys.exit(f"{a.log}: no durations (run pytest with --durations=0)")
    lines = a.split.read_text(encoding="utf-8").splitlines() if a.split.exists() else []
    head = [ln for ln in lines if not ln.startswith(("slow ", "heavy "))]
    listed = {f[2]: (f[0], float(f[1])) for f in (ln.split() for ln in lines) if f and f[0] in ("slow", "heavy")}
    keep = {ln.split()[1] for ln in head if ln.startswith("keep ")}
    stay = {ln.split()[1] for ln in head if ln.startswith("stay ")}     # never heavy
    root = a.split.resolve().parent.parent
    if a.tier == "slow":
        heavy = {k: v for k, (t, v) in listed.items() if t == "heavy"}
        slow = {k: v for k, v in per.items() if v >= threshold and k not in keep and k not in heavy}
    else:
        # a heavy test already listed is absent from a slow tier's log: it stays
        heavy = {k: v for k, (t, v) in listed.items() if t == "heavy" and k not in per}
        heavy.update({k: v for k, v in per.items()
                      if v >= threshold and k not in keep | stay and not _whole_module_heavy(k, root)})
        slow = {k: v for k, (t, v) in listed.items() if t == "slow" and k not in heavy}
    body = [f"heavy {v:6.1f} {k}" for k, v in sorted(heavy.items(), key=lambda kv: -kv[1])]
    body += [f"slow {v:6.1f} {k}" for k, v in sorted(slow.items(), key=lambda kv: -kv[1])]
    a.split.write_text("\n".join([*head, *body]) + "\n", encoding="utf-8")
    if a.tier == "slow":
        left = sum(v for k, v in per.items() if k not in slow and k not in heavy)
        print(f"{a.split}: {len(slow)} tests behind slow; the default suite's tests sum to {left:.0f} s "
              f"(of {sum(per.values()):.0f} s)")
    else:
        left = sum(v for k, v in per.items() if k not in heavy and not _whole_module_heavy(k, root))
        print(f"{a.split}: {len(heavy)} tests behind heavy; the slow suite's tests sum to {left:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
