"""Pipeline throughput: events per second for generation and for checking,
for the local engine and Spark local[1] and local[2], on one corpus.

    .venv/bin/python bench/pipeline.py [--events 1000000] [--out /tmp/gc-bench]
        [--protocols sequencer,flush,...]

The corpus is SEQUENCER runs (3 members, 10 multicasts each, loss 5 %,
duplication 2 %, reordering 3 ms: the bench/sequencer.py faults), seeds
0..R-1 with R chosen from a 20-run pilot so that the corpus holds at least
``--events`` events.  With ``--protocols`` a mixed corpus: one dataset per
protocol, each about an equal share of the events, its runs' sizes and
faults drawn from their seeds by the protocol (the audit's way; SEQUENCER's
too).  Every engine generates the same corpus (the same
seeds; the event counts must match); every engine then checks the datasets
the local engine wrote (replay + the catalogue's property checks, coverage
off; a mixed corpus's figures summed over its datasets), and their verdict
counts must match.  Spark start-up is not timed
(it is reported apart): the session, then one generate and one check of the
20-run pilot, so each master's figures are taken with the JVM's code
compiled (the first Parquet write, shuffle and Arrow exchange of a fresh
JVM cost seconds).  ``ratios``: each Spark master's events/s against the
local engine's and against the first master's.  ``cpu_s``: the CPU
seconds of the process and its descendants (the JVM, the Python workers)
during the stage, so ``events_per_cpu_s`` compares the engines per core
whatever the other jobs on the machine take (the local engine's: this
process's own); ``peak_rss_mb``: the largest resident memory of the process
tree, sampled every second, during the stage.  Prints one JSON object;
with ``--progress FILE`` it also appends each figure as a JSON line as soon
as it is measured; ``to_look_at``: up to 20 runs per engine that are
neither ok nor a violation, or whose two checks disagree (``--keep`` keeps
the corpus to look at them).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from groupcheck.conformance.pipeline import stages as P
from groupcheck.conformance.pipeline import spark as S

OPTIONS = {"nodes": 3, "messages": 10}


def tree_cpu_seconds() -> float:
    """CPU seconds of this process and every live descendant (the Spark JVM
    and its Python workers), with what their exited children used: the
    machine is shared, so the wall-clock time depends on the other jobs,
    and the CPU time says what each engine costs per core."""
    stats = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                f = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            stats[d.name] = (f[1], sum(int(x) for x in f[11:15]))     # ppid; utime, stime, cutime, cstime
    kids: dict = {}
    for pid, (ppid, _) in stats.items():
        kids.setdefault(ppid, []).append(pid)
    todo, ticks = [str(os.getpid())], 0
    while todo:
        pid = todo.pop()
        ticks += stats.get(pid, (None, 0))[1]
        todo.extend(kids.get(pid, []))
    return ticks / os.sysconf("SC_CLK_TCK")


def tree_rss_mb() -> float:
    """Resident MB of this process and every live descendant (the JVM, the
    Python workers): the memory a Spark engine holds at one moment."""
    parent, rss = {}, {}
    page = os.sysconf("SC_PAGE_SIZE")
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                parent[d.name] = (d / "stat").read_text().rsplit(")", 1)[1].split()[1]
                rss[d.name] = int((d / "statm").read_text().split()[1]) * page
            except (OSError, IndexError):
                continue
    mine, todo = set(), [str(os.getpid())]
    while todo:
        pid = todo.pop()
        mine.add(pid)
        todo.extend(c for c, p in parent.items() if p == pid and c not in mine)
    return sum(rss.get(p, 0) for p in mine) / 2**20


class PeakRSS:
    """The largest tree_rss_mb seen by a sampling thread (every second)
    while the ``with`` block runs: the figure for 'bounded memory'."""

    def __enter__(self):
        import threading
        self.peak, self._stop = 0.0, threading.Event()

        def sample():
            while not self._stop.is_set():
                self.peak = max(self.peak, tree_rss_mb())
                self._stop.wait(1.0)
        self._t = threading.Thread(target=sample, daemon=True)
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()


def cpu_seconds(engine: str) -> float:
    """The CPU seconds an engine's stage is charged: the local engine runs
    in this process, so its own (an idle Spark JVM left from an earlier
    stage, or its Python workers exiting, must not count); a Spark master's,
    the process tree's."""
    return time.process_time() if engine == "local" else tree_cpu_seconds()


FAULTS = "loss=0.05,dup=0.02,reorder=3"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--out", default="/tmp/groupcheck-bench-pipeline")
    ap.add_argument("--engines", default="local,local[1],local[2]",
                    help="comma-separated: local and/or Spark masters")
    ap.add_argument("--progress", default=None)
    ap.add_argument("--keep", action="store_true", help="keep the corpus (--out) after the run")
    ap.add_argument("--protocols", default=None,
                    help="comma-separated: a mixed corpus, sizes and faults drawn per run (default: SEQUENCER, fixed)")
    args = ap.parse_args()
    out = Path(args.out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)

    def note(rec):
        if args.progress:
            with open(args.progress, "a") as f:
                f.write(json.dumps(rec) + "\n")

    protocols = args.protocols.split(",") if args.protocols else ["sequencer"]
    drawn = args.protocols is not None

    def gen(protocol, n, where, **kw):
        if drawn:
            return P.generate(protocol, n, 0, None, where, draw=True, **kw)
        return P.generate(protocol, n, 0, FAULTS, where, options=OPTIONS, **kw)

    def over(protocols, stage):
        """``stage(protocol)`` on each protocol's dataset, figures summed."""
        got = [stage(p) for p in protocols]
        counts: dict = {}
        for g in got:
            for k, n in g.get("counts", {}).items():
                counts[k] = counts.get(k, 0) + n
        return {"events": sum(g["events"] if "events" in g else sum(v["events"] for v in g["verdicts"]) for g in got),
                "seconds": round(sum(g["seconds"] for g in got), 3), "counts": counts,
                "disagreements": sum(g.get("disagreements", 0) for g in got),
                # the runs to look at: neither ok nor a violation, or the two checks disagreeing
                "to_look_at": [{"run_id": v["run_id"], "verdict": v["verdict"], "agree": v["agree"],
                                "reason": (v["reason"] or "")[:300]}
                               for g in got for v in g.get("verdicts", ())
                               if v["verdict"] not in ("ok", "violation") or v["agree"] is False][:20],
                "judged_by_catalogue": sum(1 for g in got for v in g.get("verdicts", ()) if v["properties_by"])}

    runs = {}
    for p in protocols:
        pilot = gen(p, 20, out / "pilot" / p, engine="local")
        runs[p] = math.ceil(args.events / len(protocols) / (pilot["events"] / 20) * 1.02)
    res = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "machine": {"arch": platform.machine(), "cpus": os.cpu_count(), "python": platform.python_version(),
                       "load_average_start": os.getloadavg()},
           "corpus": {"protocols": protocols, "runs": runs,
                      **({"drawn": True} if drawn else {"options": OPTIONS, "faults": FAULTS})},
           "generate": {}, "check": {}, "spark_startup_seconds": {}}
    engines = args.engines.split(",")
    ref = out / "local"
    for e in engines:
        spark = None
        if e != "local":
            t0 = time.perf_counter()
            spark = S.session(e)
            gen(protocols[0], 20, out / "warm", engine="spark", spark=spark)
            P.check(out / "warm", engine="spark", spark=spark, coverage=False, write=False)
            res["spark_startup_seconds"][e] = round(time.perf_counter() - t0, 1)
        cpu0 = cpu_seconds(e)
        where = out / e.replace("[", "").replace("]", "")
        with PeakRSS() as mem:
            g = over(protocols, lambda p: gen(p, runs[p], where / p, engine="spark" if spark else "local", spark=spark))
        cpu = cpu_seconds(e) - cpu0
        rec = {"events": g["events"], "seconds": g["seconds"], "events_per_s": round(g["events"] / g["seconds"]),
               "cpu_s": round(cpu, 1), "events_per_cpu_s": round(g["events"] / cpu),
               "peak_rss_mb": round(mem.peak), "load_average": os.getloadavg()}
        res["generate"][e] = rec
        note({"stage": "generate", "engine": e, **rec})
        if e == "local":
            res["corpus"]["events"] = g["events"]
        elif "events" in res["corpus"] and g["events"] != res["corpus"]["events"]:
            raise SystemExit(f"{e} generated {g['events']} events, local {res['corpus']['events']}")
    for e in engines:
        spark = None if e == "local" else S.session(e)
        dataset = ref if "local" in engines else out / engines[0].replace("[", "").replace("]", "")
        cpu0 = cpu_seconds(e)
        with PeakRSS() as mem:
            c = over(protocols, lambda p: P.check(dataset / p, engine="spark" if spark else "local", spark=spark,
                                                  coverage=False, write=False))
        n = c["events"]
        cpu = cpu_seconds(e) - cpu0
        rec = {"events": n, "seconds": c["seconds"], "events_per_s": round(n / c["seconds"]),
               "verdicts": c["counts"], "disagreements": c["disagreements"], "to_look_at": c["to_look_at"],
               "judged_by_catalogue": c["judged_by_catalogue"],
               "cpu_s": round(cpu, 1), "events_per_cpu_s": round(n / cpu),
               "peak_rss_mb": round(mem.peak), "load_average": os.getloadavg()}
        res["check"][e] = rec
        note({"stage": "check", "engine": e, **rec})
    masters = [e for e in engines if e != "local"]
    res["ratios"] = {
        stage: {e: {"vs_local": round(res[stage][e]["events_per_s"] / res[stage]["local"]["events_per_s"], 2)
                    if "local" in engines else None,
                    f"vs_{masters[0]}": round(res[stage][e]["events_per_s"] / res[stage][masters[0]]["events_per_s"], 2)}
                for e in masters}
        for stage in ("generate", "check")}
    counts = {json.dumps(v["verdicts"], sort_keys=True) for v in res["check"].values()}
    if len(counts) > 1:
        raise SystemExit(f"engines disagree on verdict counts: {counts}")
    S.stop()
    res["machine"]["load_average_end"] = os.getloadavg()
    print(json.dumps(res, indent=2))
    if not args.keep:
        shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
