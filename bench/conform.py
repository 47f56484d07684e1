"""Conformance throughput on format 2: bytes per event, events per second for
reading, replay and properties, from 10^3 to 10^6 events.

    .venv/bin/python bench/conform.py [--sizes 1e3,1e4,1e5,1e6] [--spark local[1],local[2]] [--out DIR]
                                      [--pipeline-only]

Each size is one SEQUENCER run of 3 members (impl/sim_sequencer.py
``simulate_to_file``: the round-robin workload, ``loss=0.01``, written to
disk as it runs, the Sequencer layer logging deltas), about 4.7 events per
multicast, so ``per_member`` = size / 14.  Then, on that file:

* ``read``: ``core.trace.reader.load`` (strict lines, compiled schema
  checks, normalisation);
* ``replay``: the engine (conformance/replay/engine.py) with SEQUENCER's binding,
  every record stepped, no coverage states kept;
* ``properties``: NoDuplicates, Integrity, SenderFIFO, TotalOrder and
  EventualDelivery on the histories the replay accumulated;
* ``conform``: ``groupcheck conform``'s path end to end (``conform_file``:
  the run replayed as it is read), in a process of its own, with its peak
  resident memory (``conform_peak_rss_mb``).

For the largest size, also the pipeline (conformance/pipeline/stages.py
``conform_rows``: ingest to Parquet, then check) on the local engine and on
Spark with each master of ``--spark`` (start-up timed apart: the session,
then the pipeline on a 1,000-event run, so the JVM's code is compiled; the
load average before and after each; ``cpu_s``: the CPU seconds of the
process and its descendants, the JVM and its Python workers).  ``--pipeline-only``: simulate only the
largest size and run only the pipeline on it.
Linearity: ``events_per_s`` at 10^5 against 10^3 for each stage.  Prints one
JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from groupcheck.conformance.replay import sequencer as cseq
from groupcheck.conformance.replay.engine import ReplayEngine, quiescent
from groupcheck.core.trace.reader import collector_paused, load
from groupcheck.impl.faults import parse_faults
from groupcheck.impl import campaign, sim_sequencer
from groupcheck.core.trace import writer as tracefile

sys.path.insert(0, str(Path(__file__).parent))
from pipeline import tree_cpu_seconds  # noqa: E402  (bench/pipeline.py)

CONFORM = """
import json, re, sys, time
from groupcheck.conformance.replay.conform import conform_file
conform_file(sys.argv[1])       # warm: the schemas compiled, as in the stages
t, c = time.perf_counter(), time.process_time()
r = conform_file(sys.argv[1])
print(json.dumps({"verdict": r.verdict, "candidates_max": r.candidates_max, "wall": time.perf_counter() - t,
                  "cpu": time.process_time() - c,
                  # VmHWM: this process's own peak (ru_maxrss keeps the forking parent's across exec)
                  "peak_rss_mb": round(int(re.search(r"VmHWM:\\s*(\\d+)", open("/proc/self/status").read())[1]) / 1024)}))
"""
EVENTS_PER_MULTICAST = 4.67    # measured at loss=0.01: Send, RecvForward (2 in 3), 3 RecvData, a few repeats


def stages(path: Path) -> tuple:
    """read, replay and properties: (wall, CPU) seconds of each, what it found."""
    t0, c0 = time.perf_counter(), time.process_time()
    trace = load(path)
    t_read, c_read = time.perf_counter() - t0, time.process_time() - c0
    b = cseq.SequencerBinding(trace)
    eng = ReplayEngine(b, visited=False)
    t0, c0 = time.perf_counter(), time.process_time()
    for ev in trace.events:
        failed = eng.step(ev)
        assert failed is None, failed
    t_replay, c_replay = time.perf_counter() - t0, time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    found = b.properties(eng.cands) or (b.at_end(eng.cands) if quiescent(trace) else None)
    return t_read, c_read, t_replay, c_replay, time.perf_counter() - t0, time.process_time() - c0, found


def one(path: Path, size: int) -> dict:
    per_member = max(1, round(size / (3 * EVENTS_PER_MULTICAST)))
    t0 = time.perf_counter()
    line = sim_sequencer.simulate_to_file(path, 3, per_member, 1, parse_faults("loss=0.01"))
    t_sim = time.perf_counter() - t0
    n = line["events"]
    load_avg = [round(x, 1) for x in os.getloadavg()]
    with collector_paused():    # as conform_file pauses it: no collection over the run falls between two stages, unmeasured
        t_read, c_read, t_replay, c_replay, t_props, c_props, found = stages(path)
    # ``groupcheck conform``'s path in a process of its own, so that its peak memory is its own
    # (the stages above held the whole run): a one-file run is replayed as it is read
    rep = json.loads(subprocess.run([sys.executable, "-c", CONFORM, str(path)], check=True,
                                    capture_output=True, text=True).stdout)
    t_conform, c_conform = rep["wall"], rep["cpu"]
    return {"target": size, "events": n, "per_member": per_member, "bytes": line["bytes"],
            "bytes_per_event": round(line["bytes"] / n, 1), "quiescent": line["quiescent"],
            "verdict": rep["verdict"], "property_failed": found[0] if found else None,
            "candidates_max": rep["candidates_max"], "conform_peak_rss_mb": rep["peak_rss_mb"],
            "seconds": {"simulate_and_write": round(t_sim, 2), "read": round(t_read, 2),
                        "replay": round(t_replay, 2), "properties": round(t_props, 3),
                        "conform": round(t_conform, 2)},
            "events_per_s": {"read": round(n / t_read), "replay": round(n / t_replay),
                             "properties": round(n / max(t_props, 1e-6)), "conform": round(n / t_conform)},
            # CPU seconds of this process: comparable across runs when the machine is shared
            "events_per_cpu_s": {"read": round(n / c_read), "replay": round(n / c_replay),
                                 "properties": round(n / max(c_props, 1e-6)), "conform": round(n / c_conform)},
            "load_average": load_avg}


def pipeline(path: Path, work: Path, masters: list[str]) -> list[dict]:
    from groupcheck.conformance.pipeline import stages as P
    out = []
    warm = work / "warm.ndjson"
    sim_sequencer.simulate_to_file(warm, 3, round(1000 / (3 * EVENTS_PER_MULTICAST)), 1,
                                   parse_faults("loss=0.01"))
    for engine, master in [("local", None)] + [("spark", m) for m in masters]:
        d = work / (master or "local").replace("[", "").replace("]", "")
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        spark, t_session = None, 0.0
        if engine == "spark":
            from groupcheck.conformance.pipeline import spark as S
            t0 = time.perf_counter()
            spark = S.session(master)
            P.conform_rows([warm], engine=engine, spark=spark, work_dir=d)
            t_session = time.perf_counter() - t0
        t0, cpu0 = time.perf_counter(), tree_cpu_seconds()
        load = [round(x, 1) for x in os.getloadavg()]
        rows = P.conform_rows([path], engine=engine, spark=spark, work_dir=d)
        t, cpu = time.perf_counter() - t0, tree_cpu_seconds() - cpu0
        if spark is not None:
            spark.stop()
        events = rows[0]["events"]
        out.append({"engine": engine, "master": master, "verdict": rows[0]["verdict"], "events": events,
                    "startup_seconds": round(t_session, 1), "seconds": round(t, 1),
                    "events_per_s": round(events / t), "cpu_s": round(cpu, 1),
                    "events_per_cpu_s": round(events / cpu), "load_average_start": load,
                    "load_average_end": [round(x, 1) for x in os.getloadavg()]})
        print(json.dumps(out[-1]), file=sys.stderr, flush=True)
    for r in out[1:]:
        r["vs_local"] = round(r["events_per_s"] / out[0]["events_per_s"], 2)
        r[f"vs_{out[1]['master']}"] = round(r["events_per_s"] / out[1]["events_per_s"], 2)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1e3,1e4,1e5,1e6")
    ap.add_argument("--spark", default="local[1],local[2]", help="Spark masters for the largest size ('' for none)")
    ap.add_argument("--out", default="/tmp/groupcheck-bench-conform")
    ap.add_argument("--pipeline-only", action="store_true",
                    help="only simulate the largest size and run the pipeline on it (no per-stage figures)")
    args = ap.parse_args()
    work = Path(args.out)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    sizes = [int(float(x)) for x in args.sizes.split(",") if x]
    import pyspark
    res = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "machine": {"arch": platform.machine(), "cpus": os.cpu_count(), "python": platform.python_version(),
                       "pyspark": pyspark.__version__,
                       "load_average_start": [round(x, 1) for x in os.getloadavg()]},
           "runs": []}
    for size in sizes:
        if args.pipeline_only:
            if size != max(sizes):
                continue
            per_member = max(1, round(size / (3 * EVENTS_PER_MULTICAST)))
            line = sim_sequencer.simulate_to_file(work / f"seq-{size}.ndjson", 3, per_member, 1,
                                                  parse_faults("loss=0.01"))
            r = {"target": size, "events": line["events"], "bytes": line["bytes"], "quiescent": line["quiescent"]}
            res["runs"].append(r)
            print(json.dumps(r), file=sys.stderr, flush=True)
            continue
        r = one(work / f"seq-{size}.ndjson", size)
        res["runs"].append(r)
        print(json.dumps(r), file=sys.stderr, flush=True)
    by = {r["target"]: r for r in res["runs"]}
    if 1000 in by and 100000 in by:
        res["linear"] = {k: round(by[100000]["events_per_s"][k] / by[1000]["events_per_s"][k], 2)
                         for k in ("read", "replay", "conform")}
    masters = [m for m in args.spark.split(",") if m]
    if sizes:
        res["pipeline_largest"] = pipeline(work / f"seq-{max(sizes)}.ndjson", work / "pipeline", masters)
    res["machine"]["load_average_end"] = [round(x, 1) for x in os.getloadavg()]
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
