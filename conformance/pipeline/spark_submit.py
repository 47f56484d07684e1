"""The pipeline as a ``spark-submit`` application (docs/pipeline.md).

Theory of operation
-------------------
``spark-submit`` starts the driver JVM with the cluster's master, then runs
this file as the Python driver; ``spark.session()`` picks that master up.
The stages are the ones ``groupcheck traces`` runs (conformance/pipeline/stages.py),
with the Spark engine: the executors import ``groupcheck`` from the
driver's ``PYSPARK_PYTHON`` (install it at the same path on every worker),
and the dataset folder and the trace files must be on a file system the
driver and every executor share (docs/pipeline.md, "On a Spark cluster";
tests/test_spark_cluster.py runs it on a standalone cluster).

    spark-submit --master spark://HOST:7077 conformance/pipeline/spark_submit.py \\
        generate sequencer --runs 10000 --out /shared/gc/seq
    spark-submit --master spark://HOST:7077 conformance/pipeline/spark_submit.py check /shared/gc/seq

Prints the stage's result as JSON; the exit status is 1 when ``check``
finds any run that is not ok (or a replay/property disagreement).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="spark_submit.py", description="groupcheck conformance pipeline on Spark")
    sub = ap.add_subparsers(dest="stage", required=True)
    g = sub.add_parser("generate", help="simulate runs into a Parquet dataset")
    g.add_argument("protocol")
    g.add_argument("--runs", type=int, default=100)
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--faults", default=None, help="default: the protocol's campaign faults")
    g.add_argument("--option", action="append", default=[], help="simulation option key=value (repeatable)")
    g.add_argument("--out", required=True)
    i = sub.add_parser("ingest", help="NDJSON traces into a Parquet dataset")
    i.add_argument("paths", nargs="+")
    i.add_argument("--out", required=True)
    c = sub.add_parser("check", help="verdict per run, properties, coverage")
    c.add_argument("dataset")
    c.add_argument("--no-coverage", action="store_true")
    c.add_argument("--max-states", type=int, default=20_000)
    return ap


def main(argv=None) -> int:
    here = str(Path(__file__).resolve().parent)
    # spark-submit puts this file's folder first on sys.path; its modules
    # must only be importable as groupcheck.conformance.*, never bare.
    sys.path[:] = [p for p in sys.path if p and str(Path(p).resolve()) != here]
    args = _parser().parse_args(argv)
    from groupcheck.conformance.pipeline import stages as pipeline     # after sys.path is cleaned, above
    from groupcheck.conformance.pipeline.spark import session
    spark = session(None, app_name=f"groupcheck-{args.stage}")
    if args.stage == "generate":
        opts = {}
        for kv in args.option:
            k, _, v = kv.partition("=")
            try:
                opts[k] = json.loads(v)
            except json.JSONDecodeError:
                opts[k] = v
        res = pipeline.generate(args.protocol, args.runs, args.seed, args.faults, args.out,
                                engine="spark", options=opts, spark=spark)
        code = 0
    elif args.stage == "ingest":
        res = pipeline.ingest(args.paths, args.out, engine="spark", spark=spark)
        code = 0
    else:
        res = pipeline.check(args.dataset, engine="spark", spark=spark, coverage=not args.no_coverage,
                             max_states=args.max_states)
        code = 0 if res["runs"] and res["counts"].get("ok", 0) == res["runs"] and not res["disagreements"] else 1
    print(json.dumps(res, indent=2))
    spark.stop()
    return code


if __name__ == "__main__":
    sys.exit(main())
