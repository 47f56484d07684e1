"""Python explorer vs TLC on the manifest models, in one run.

Both explore the whole reachable graph with invariants and properties off
(TLC on the model's cfg with those sections stripped, one worker), so the
two rates count the same states.  TLC's seconds include JVM start-up; both
are wall-clock, measured one after the other for each model, with the load
average recorded beside each row (the machine is shared: compare the ratio,
not the absolute rates, across runs).  Each row also gives both sides' CPU
seconds and their ratio (``cpu_ratio``: TLC's CPU over the explorer's), which
a loaded machine disturbs less than wall-clock.  With ``--workers W`` (W > 1) the
multi-process explorer also runs with 1 and with W processes, and the row
gives its scaling (rate with W over rate with 1), the same by the busiest
worker's CPU seconds (``parallel_cpu_scaling``), each worker's CPU seconds
and peak memory, how many states were moved to balance the workers and the
fingerprint collision probability.

A model with a kernel (model/core.py) is searched in its lean encoding;
``python_decode_seconds`` is the time to decode every numbered state back
to a model state afterwards (what the link and the proofs use), and
``ratio_with_decode`` counts it as search time.

Prints one JSON object per model, then a summary object whose
``min_ratio_over_10k`` is the smallest explorer/TLC ratio among the models
with more than 10,000 distinct states.

    .venv/bin/python bench/explore.py [--protocol P ...] [--model NAME]
        [--all] [--min-states N] [--workers W] [--no-tlc]

By default every protocol's models marked ``compare`` in its manifest are run
(the link's models); ``--all`` takes every model.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import time

from groupcheck.model import manifest
from groupcheck.model.core import DecodedStates, explore
from groupcheck.model.link import build_model
from groupcheck.model.parallel import explore_parallel
from groupcheck.model.tlc import run_tlc
from groupcheck.model.tlc_cfg import strip_checks


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def bench(entry, workers: int = 1, tlc: bool = True) -> dict:
    model = build_model(entry)
    load_before = _load()
    c0 = time.process_time()
    t0 = time.perf_counter()
    res = explore(model, check_invariants=False)
    py_s = time.perf_counter() - t0
    py_cpu = time.process_time() - c0
    # A model with a kernel (model/core.py) is searched in its lean encoding
    # and its numbered states are decoded to model states on first use (the
    # link, proofs and paths use them; counting does not): timed apart.
    decoded = isinstance(res.numbered, DecodedStates)
    t3 = time.perf_counter()
    if decoded:
        len(list(res.numbered))
    decode_s = time.perf_counter() - t3
    if not tlc:
        # the multi-process explorer's scaling alone (--no-tlc)
        row = {"model": f"{entry.protocol}/{entry.name}", "distinct_states": res.distinct_states,
               "python_seconds": round(py_s, 2), "kernel": decoded, "load_average_1min": [load_before]}
        return _parallel(model, res, row, workers)
    cfg_text = strip_checks(entry.cfg_path.read_text(encoding="utf-8"))
    k0 = _children_cpu()
    t1 = time.perf_counter()
    tlc = run_tlc(entry.spec_dir, entry.module, None, cfg_text=cfg_text, workers=1, timeout=entry.timeout)
    tlc_s = time.perf_counter() - t1
    tlc_cpu = _children_cpu() - k0
    assert tlc.outcome == "ok" and tlc.distinct_states == res.distinct_states, (tlc.outcome, tlc.distinct_states, res.distinct_states)
    py_rate = res.distinct_states / py_s
    tlc_rate = tlc.distinct_states / tlc_s
    row = {
        "model": f"{entry.protocol}/{entry.name}",
        "distinct_states": res.distinct_states,
        "python_seconds": round(py_s, 2),
        "tlc_seconds": round(tlc_s, 2),
        "python_states_per_s": round(py_rate),
        "tlc_states_per_s": round(tlc_rate),
        "ratio": round(py_rate / tlc_rate, 3),
        "kernel": decoded,
        # the same ratio with the decoding of every state counted as search time
        "python_decode_seconds": round(decode_s, 2),
        "ratio_with_decode": round(res.distinct_states / (py_s + decode_s) / tlc_rate, 3),
        "load_average_1min": [load_before, _load()],
        # CPU seconds (the explorer's process; TLC's JVM, all its threads:
        # JIT and GC included) -- less sensitive to a shared machine's load
        "python_cpu_seconds": round(py_cpu, 2),
        "tlc_cpu_seconds": round(tlc_cpu, 2),
        "cpu_ratio": round(tlc_cpu / py_cpu, 3) if py_cpu > 0 else None,
    }
    return _parallel(model, res, row, workers)


def _parallel(model, res, row: dict, workers: int) -> dict:
    """With ``workers`` > 1: the multi-process explorer with 1 and with
    ``workers`` processes, and its scaling (rate with W over rate with 1);
    also the rate with W over the serial explorer's."""
    if workers > 1:
        rates, busiest = {}, {}
        for w in (1, workers):
            t2 = time.perf_counter()
            par = explore_parallel(model, workers=w)
            s = time.perf_counter() - t2
            assert (par.distinct_states, par.states_generated, par.depth) == \
                (res.distinct_states, res.states_generated, res.depth), (w, par, res.distinct_states)
            rates[w] = par.distinct_states / s
            busiest[w] = max(par.worker_cpu_seconds)
            row[f"parallel_{w}_seconds"] = round(s, 2)
            row[f"parallel_{w}_worker_cpu_seconds"] = list(par.worker_cpu_seconds)
            row[f"parallel_{w}_worker_peak_mib"] = [round(k / 1024) for k in par.worker_peak_kib]
            # what each worker added to the pages it shares with the parent
            row[f"parallel_{w}_worker_growth_mib"] = [
                round((k - k0) / 1024) for k, k0 in zip(par.worker_peak_kib, par.worker_start_kib)]
        row["parallel_moved"] = par.moved
        row["parallel_collision_probability"] = par.collision_probability
        row["parallel_scaling"] = round(rates[workers] / rates[1], 3)
        # the same ratio by CPU seconds: the busiest worker's, 1 against W
        # (what a loaded machine disturbs less than the wall clock)
        row["parallel_cpu_scaling"] = round(busiest[1] / busiest[workers], 3)
        row["parallel_vs_serial"] = round(row["python_seconds"] / row[f"parallel_{workers}_seconds"], 3)
        row["load_average_1min"].append(_load())
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--protocol", action="append", help="a protocol (repeatable); default: all")
    ap.add_argument("--model")
    ap.add_argument("--all", action="store_true", help="every model, not only compare:true ones")
    ap.add_argument("--min-states", type=int, default=0,
                    help="skip models whose manifest count is below this (the count with invariants on)")
    ap.add_argument("--workers", type=int, default=1, help="also time the multi-process explorer")
    ap.add_argument("--no-tlc", action="store_true", help="skip TLC (with --workers: the scaling alone)")
    a = ap.parse_args()
    entries = manifest.select(a.protocol, a.model)
    if a.model is None and not a.all:
        entries = [e for e in entries if e.compare]
    entries = [e for e in entries if (e.distinct_states or 0) >= a.min_states or a.model]
    rows = []
    for e in entries:
        row = bench(e, a.workers, tlc=not a.no_tlc)
        rows.append(row)
        print(json.dumps(row), flush=True)
    big = [r["ratio"] for r in rows if r["distinct_states"] > 10_000 and "ratio" in r]
    print(json.dumps({
        "summary": rows,
        "min_ratio_over_10k": min(big) if big else None,
        "machine": f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}",
        "load_average": os.getloadavg(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }))


if __name__ == "__main__":
    main()
