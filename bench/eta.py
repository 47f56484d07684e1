"""How right the progress's time left was: reads the JSON progress lines a
command wrote on stderr with ``--json`` (``groupcheck audit --json 2>
progress.err``) and compares each line's predicted end (elapsed + eta_s)
with the actual end (the line where the last check finished).

    .venv/bin/python bench/eta.py progress.err [--after 60]

For the lines after ``--after`` seconds: the error of each line's time
left against the actual time left, as a share of the actual time left
(lines in the last minute left out: there a few seconds are a large
share), and as a share of the whole run; the median, the 90th percentile
and the worst, and how many lines were within 30 %."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("err", type=Path)
    ap.add_argument("--after", type=float, default=60.0, help="leave out the lines of the first SECONDS")
    a = ap.parse_args()
    rows = []
    for line in a.err.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue        # Spark's note, not a progress line
        if isinstance(r, dict) and "progress" in r:
            rows.append(r)
    end = next(r["elapsed_s"] for r in reversed(rows) if r["total"] and r["done"] == r["total"])
    start = next(r["elapsed_s"] for r in rows if r["total"])        # the plan: the checks known
    lines = [r for r in rows if r["eta_s"] is not None and a.after <= r["elapsed_s"] < end]
    rel = sorted(abs(r["elapsed_s"] + r["eta_s"] - end) / (end - r["elapsed_s"])
                 for r in lines if end - r["elapsed_s"] >= 60)
    whole = sorted(abs(r["elapsed_s"] + r["eta_s"] - end) / (end - start) for r in lines)
    gaps = [b["elapsed_s"] - a_["elapsed_s"] for a_, b in zip(rows, rows[1:])]

    def q(xs, p):
        return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")
    print(f"run: {end:.0f} s to the last check ({start:.0f} s before the plan), {len(rows)} lines, "
          f"longest gap between lines {max(gaps):.1f} s")
    print(f"lines after {a.after:.0f} s with at least 60 s left: {len(rel)}; error of the time left as a share "
          f"of the actual time left: median {q(rel, 0.5):.0%}, 90th percentile {q(rel, 0.9):.0%}, "
          f"worst {q(rel, 1.0):.0%}; within 30 %: {sum(x <= 0.3 for x in rel)}/{len(rel)}")
    print(f"error of the predicted end as a share of the run ({len(whole)} lines): median {q(whole, 0.5):.0%}, "
          f"worst {q(whole, 1.0):.0%}")
    worst = max(lines, key=lambda r: abs(r["elapsed_s"] + r["eta_s"] - end) / max(60, end - r["elapsed_s"]))
    print(f"worst line: at {worst['elapsed_s']:.0f} s, {worst['done']}/{worst['total']}, said {worst['eta_s']:.0f} s "
          f"left, {end - worst['elapsed_s']:.0f} s were")


if __name__ == "__main__":
    main()
