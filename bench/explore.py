"""Python explorer vs TLC on the SEQUENCER manifest models, in one run.

Both explore the whole reachable graph with invariants and properties off
(TLC on the model's cfg with those sections stripped, one worker), so the
two rates count the same states.  TLC's seconds include JVM start-up; both
are wall-clock.  Prints one JSON object per model, then a summary object.

    .venv/bin/python bench/explore.py [--protocol sequencer] [--model NAME]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

from groupcheck.model import manifest
from groupcheck.model.link import build_model
from groupcheck.model.core import explore
from groupcheck.model.tlc import run_tlc
from groupcheck.model.tlc_cfg import strip_checks


def bench(entry) -> dict:
    model = build_model(entry)
    t0 = time.perf_counter()
    res = explore(model, check_invariants=False)
    py_s = time.perf_counter() - t0
    cfg_text = strip_checks(entry.cfg_path.read_text(encoding="utf-8"))
    t1 = time.perf_counter()
    tlc = run_tlc(entry.spec_dir, entry.module, None, cfg_text=cfg_text, workers=1, timeout=entry.timeout)
    tlc_s = time.perf_counter() - t1
    assert tlc.outcome == "ok" and tlc.distinct_states == res.distinct_states, (tlc.outcome, tlc.distinct_states, res.distinct_states)
    py_rate = res.distinct_states / py_s
    tlc_rate = tlc.distinct_states / tlc_s
    return {
        "model": f"{entry.protocol}/{entry.name}",
        "distinct_states": res.distinct_states,
        "python_seconds": round(py_s, 2),
        "tlc_seconds": round(tlc_s, 2),
        "python_states_per_s": round(py_rate),
        "tlc_states_per_s": round(tlc_rate),
        "ratio": round(py_rate / tlc_rate, 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--protocol", default="sequencer")
    ap.add_argument("--model")
    a = ap.parse_args()
    rows = []
    for e in manifest.select([a.protocol], a.model):
        row = bench(e)
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(json.dumps({
        "summary": rows,
        "machine": f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}",
        "load_average": os.getloadavg(),
        "date": time.strftime("%Y-%m-%d"),
    }))


if __name__ == "__main__":
    main()
