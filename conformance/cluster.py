"""A cluster run judged: what ``groupcheck cluster run``, ``cluster up`` /
``down``, ``cluster chaos`` and the audit's cluster stage say of a run of
impl/cluster.py's ``Runner``.

Theory of operation
-------------------
The runner (impl/) runs the nodes and returns what the run left, a
``ClusterRun``: its folder, whether it reached quiescence, the nodes killed.
``judge`` reads the folder as ``conform`` does: the per-node files merged
by happens-before (core/trace/reader.py; a file that breaks the format
makes the run ``rejected``), replayed against the model
(conformance/replay/engine.py), the survivors' black-box history (written to
OUT/history/<run id>.ndjson) judged by the protocol's promises
(conformance/history.py), each history violation a documented finding only
where its own witness, read off this run's trace, has the finding's shape
(conformance/findings.py), and with ``--checker tlc|both`` TLC's trace
validation of the same merged trace.  A run that did not reach quiescence
is ``incomplete`` when nothing else is wrong: its end-of-run property was
not judged.  ``judged(runner)`` runs and judges.

The detached supervisor of ``cluster up`` is this module (``python -m
groupcheck.conformance.cluster OUT``): it runs the ``Runner`` serving,
judges the run when ``cluster down`` ends it, and writes OUT/result.json.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from . import history, tlctrace
from .findings import history_findings
from groupcheck.conformance.audit import diagram
from groupcheck.conformance.replay import registry
from groupcheck.conformance.replay.conform import replay
from groupcheck.core.progress import reporting
from groupcheck.core.trace import history as history_format, writer as tracefile
from groupcheck.core.trace.reader import load, TraceError
from groupcheck.impl.cluster import ClusterError, ClusterRun, Interrupted, Runner


PROGRESS = 5.0          # seconds between the progress lines of a long check (at most)


@dataclass
class Result:
    out: str
    run_id: str
    quiescent: bool
    killed: list
    # the model replay's (ok | documented | violation | nonconforming | incomplete | rejected),
    # incomplete too when the run did not reach quiescence
    verdict: str
    reason: Optional[str]
    history: list                # the survivors' violations (conformance/history.py)
    delivered: dict
    seconds: float
    auth: dict = field(default_factory=dict)
    stats: dict = field(default_factory=dict)      # node -> its layers' counters at the stop (survivors)
    finding: Optional[str] = None  # the documented finding whose witness the replay's violation matches
    # TLC trace validation of the merged trace (checker tlc or both): conformance/tlctrace.py's
    # verdict as JSON, and with both whether it agrees with the model replay's
    tlc: Optional[dict] = None
    shunned: list = field(default_factory=list)    # of ``killed``, the nodes that left, suspected by their ring
    rejoined: list = field(default_factory=list)   # chaos --rejoin: [a node that left so, the new node in its place]
    violations: list = field(default_factory=list)  # the replay's, each on its own (with its finding or None)

    @property
    def ok(self) -> bool:
        tlc_ok = self.tlc is None or (self.tlc["ok"] and self.tlc.get("agree", True))
        return self.verdict == "ok" and not self.history and tlc_ok

    @property
    def known(self) -> bool:
        """Every violation the replay found is a documented finding of the protocol."""
        return self.verdict == "documented"

    def to_json(self) -> dict:
        d = dict(self.__dict__)
        d["ok"], d["known"] = self.ok, self.known
        return d


def checkable(protocol: str, checker: str) -> None:
    """Refuse, before any node starts, a checker the protocol lacks: TLC's
    trace validation needs the protocol's Trace<P>.tla."""
    if checker != "model" and not tlctrace.supported(protocol):
        raise ClusterError(f"--checker {checker}: protocol {protocol!r} has no TLA+ trace spec yet "
                           f"(have: {', '.join(tlctrace.supported_protocols())})")


def judged(runner: Runner, progress: Optional[Callable[[str], None]] = None) -> Result:
    """Run ``runner`` and judge its run (``judge``)."""
    checkable(runner.protocol, runner.checker)
    return judge(runner.run(), progress=progress)


def judge(run: ClusterRun, progress: Optional[Callable[[str], None]] = None) -> Result:
    """The verdict on a cluster run (see the module docstring); ``progress``:
    a line at least every PROGRESS seconds while the check runs (TLC may
    take a while), with the reader's and the replay's last report."""
    if progress is None:
        return _judge(run)
    stop = threading.Event()
    t = time.monotonic()
    where = [""]

    def tick():
        while not stop.wait(PROGRESS):
            progress(f"checking the traces{where[0]}, {time.monotonic() - t:.0f} s")

    def report(stage, done, total):
        where[0] = f" ({stage}, record {done:,}" + (f" of {total:,})" if total else ")")
    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        with reporting(report):
            return _judge(run)
    finally:
        stop.set()
        ticker.join()


def _judge(run: ClusterRun) -> Result:
    out = Path(run.out)
    more = {"auth": run.auth, "stats": run.stats, "shunned": list(run.shunned), "rejoined": list(run.rejoined)}
    try:
        trace = load(out / "traces")
    except TraceError as e:
        return Result(str(out), run.run_id, run.quiescent, run.killed, "rejected", str(e), [], {}, run.seconds,
                      **more)
    rep = replay(trace)
    records = [trace.header] + trace.events + ([{"kind": "end", **trace.end}] if trace.end else [])
    hist = history.from_trace(records)
    tracefile.write(out / "history" / f"{run.run_id}.ndjson", hist)   # the run's black-box history
    h = history_format.from_records(hist)
    promised = history.promised_checks(run.protocol)
    found = [diagram.violation_json(v) for v in history.check(h) if v.check in promised]
    # each history violation a documented finding only where its own witness, read off
    # this run's trace for that property, has the finding's shape
    for v, f in zip(found, history_findings(registry.get(run.protocol), trace, found)):
        v.pop("svg", None)
        v["finding"] = f
    tlc = None
    if run.checker != "model":      # the TLA+ spec judges the same merged trace
        v = tlctrace.validate(trace)
        tlc = v.to_json()
        if not v.clean:
            tlc["explain"] = v.explain()
        if run.checker == "both":
            tlc["agree"] = tlctrace.agrees(v, rep)
    verdict, reason = rep.verdict, rep.reason
    if not run.quiescent and verdict in ("ok", "documented"):   # nothing wrong seen, but the run never settled
        verdict, reason = "incomplete", ("the run did not reach quiescence: messages may be undelivered and its "
                                         "end-of-run property was not judged" + (f"; {reason}" if reason else ""))
    return Result(str(out), run.run_id, run.quiescent, run.killed, verdict, reason, found,
                  {m: len(h.deliveries.get(m, [])) for m in sorted(h.deliveries)}, run.seconds,
                  finding=rep.finding, violations=rep.violations, tlc=tlc, **more)


def serve_main(out: str) -> int:
    """The detached supervisor of ``groupcheck cluster up`` (OUT/up.json holds
    the options); writes OUT/result.json when ``cluster down`` stops it."""
    out_dir = Path(out)
    opts = json.loads((out_dir / "up.json").read_text(encoding="utf-8"))
    try:
        res = judged(Runner(opts["protocol"], opts["nodes"], opts["messages"], [], out_dir, rate=opts["rate"],
                            timeout=opts["timeout"], key_file=opts.get("key_file"),
                            checker=opts.get("checker", "model"), serve=True, log=lambda s: print(s, flush=True)))
    except (ClusterError, Interrupted, OSError) as e:
        (out_dir / "result.json").write_text(json.dumps({"error": f"{type(e).__name__}: {e}"}), encoding="utf-8")
        return 1
    (out_dir / "result.json").write_text(json.dumps(res.to_json(), indent=2, default=str), encoding="utf-8")
    return 0 if res.ok and res.quiescent else 1


if __name__ == "__main__":
    sys.exit(serve_main(sys.argv[1]))
