"""Black-box history checking (docs/history-format.md).

A history records only what a stack can observe about itself: multicasts
sent, messages delivered, views installed, FLUSH's block/unblock, state
transfer, and environment records for kills.  core/trace/history.py reads
history files; this module checks them (and projects our traces onto
histories); the properties themselves are core/properties.py's, each
linear in the history, none searching.

Checks, each named in the verdict (``CHECKS``), and the catalogue's
properties each is made of:

* ``Integrity``, ``NoDuplicates``, ``TotalOrder`` (uniform),
  ``SurvivorTotalOrder``, ``Agreement`` (at a quiescent end),
  ``VirtualSynchrony``, ``FlushEventOrder`` -- one property each;
* ``SenderFIFO`` -- the catalogue's SenderFIFO and GapFreeFIFO (order
  always; gap-free for senders that were never killed), the first witness.

Each violation carries its smallest witness as data
(``properties.Violation``): the members, the messages and the witnessing
events, rendered as text, JSON and a Mermaid/SVG diagram for the audit.
"""

from __future__ import annotations

import json
from typing import Iterable, Optional

from groupcheck.conformance.audit import diagram
from groupcheck.conformance.replay.registry import available, promises, UnknownProtocol
from groupcheck.core import properties
from groupcheck.core.properties import SEEN_AS, Violation
from groupcheck.core.trace import layers
from groupcheck.core.trace.history import (CHECKS, first_header, FORMAT, from_records, History, history_files,
                                           HistoryError, is_utf8, lines_of, load, open_file)
from groupcheck.core.trace.reader import from_records as trace_from_records
from groupcheck.impl import protocols as impl_protocols


# ---------------------------------------------------------------- the checks

def check(h: History) -> list[Violation]:
    """Every check on one run; at most one (the first) witness per check."""
    out = []
    for name, props in CHECKS.items():
        found = properties.judge(h, props)
        if found:
            rank = {m: k for k, m in enumerate(h.members())}
            first = min(found, key=lambda v: (rank.get(v.members[0], -1), v.events[0].get("index") or 0))
            out.append(first if first.property == name else first.renamed(name))
    return out


def incomplete(h: History) -> list[str]:
    """Why a history that breaks nothing still shows too little to be
    ``ok``: no events, nothing sent (no property has anything to judge), no
    end record (an interrupted run: the end-of-run properties not judged),
    per-node files with some node's missing."""
    out = []
    if not h.events:
        out.append("no events: nothing was checked")
    elif not h.sent:
        out.append("no send event: the run multicast nothing, so no property had anything to judge")
    if h.quiescent is None:
        out.append("no end record: the run was interrupted, and its end-of-run properties were not judged")
    if h.file_node:
        lacking = [n for n in h.nodes if n not in set(h.file_node.values())]
        if lacking:
            out.append(f"no history file of node(s) {lacking} among the run's per-node files")
    return out


def judged_checks(h: History, protocol: Optional[str] = None) -> tuple[list[str], str]:
    """The checks a run is judged on, and on what ground: ``protocol`` (the
    command line's) or the header's ``promises`` or the header's protocol's
    promises (its registration, conformance/replay/registry.py); a history that
    names neither is judged on every check."""
    if protocol is not None and h.protocol is not None and protocol != h.protocol:
        raise HistoryError(f"--protocol {protocol} disagrees with {h.files[0] if h.files else h.run_id}:1:protocol "
                           f"{h.protocol!r}: judge the run on its own protocol (leave --protocol out) or give "
                           f"the histories of a {protocol} run")
    if protocol is None and h.promised is not None:
        return [c for c in CHECKS if c in h.promised], "the header's promises"
    p = protocol if protocol is not None else h.protocol
    if p is None:
        return list(CHECKS), "no protocol named: every check"
    try:
        promised = promised_checks(p)
    except UnknownProtocol:
        where = "--protocol" if protocol is not None else f"{h.files[0] if h.files else h.run_id}:1:protocol"
        raise HistoryError(f"{where}: unknown protocol {p!r} (one of {', '.join(available())})") from None
    return [c for c in CHECKS if c in promised], f"what {p} promises"


def verdict(h: History, protocol: Optional[str] = None, every: bool = False) -> dict:
    """One run's verdict on the checks it is judged on (``judged_checks``);
    with ``every``, the other checks' violations too, as ``informational``
    (they never change the verdict)."""
    checks, ground = judged_checks(h, protocol)
    vs = check(h)
    judged = [v for v in vs if v.check in checks]
    gaps = [] if judged else incomplete(h)
    row = {"run_id": h.run_id, "files": h.files, "events": h.events, "protocol": protocol or h.protocol,
           "verdict": "violation" if judged else "incomplete" if gaps else "ok",
           "reason": "; ".join(gaps) or None,
           "violations": [diagram.violation_json(v, h) for v in judged], "crashed": sorted(h.crashed, key=str),
           "checks": checks, "judged_on": ground}
    if every:
        row["informational"] = [diagram.violation_json(v, h) for v in vs if v.check not in checks]
    return row


def check_paths(paths: Iterable, protocol: Optional[str] = None, every: bool = False,
                skipped: Optional[list] = None, quarantine: bool = False) -> list[dict]:
    """A verdict row per run.  Bad input raises HistoryError, or with
    ``quarantine`` makes its run's row ``rejected`` with the reason (a file
    whose header cannot be read: a row of its own), the other runs judged."""
    files = history_files(paths, skipped)
    if not quarantine:
        return [verdict(h, protocol, every) for h in load(files)]
    return [_judged_or_rejected(key, fs, protocol, every) for key, fs in _runs_of(files).items()]


def _runs_of(files: list) -> dict:
    """run_id -> its files, in the order first met; a file whose header is
    bad -> its HistoryError, under the key ``("unread", file)``."""
    out: dict = {}
    for f in files:
        try:
            rid = first_header(f, next(lines_of(f), (1, ""))[1])["run_id"]
        except HistoryError as e:
            out[("unread", f)] = e
            continue
        out.setdefault(rid, []).append(f)
    return out


def _judged_or_rejected(key, files, protocol: Optional[str], every: bool, read=None) -> dict:
    """One run's verdict row, or its ``rejected`` row (``read``: how its
    files are read into a History, ``load`` by default)."""
    if isinstance(files, HistoryError):
        return rejected_row(None, [key[1]], protocol, str(files))
    try:
        [h] = (read or load)(files)
        return verdict(h, protocol, every)
    except HistoryError as e:
        return rejected_row(key, list(files), protocol, str(e))


def rejected_row(run_id, files: list, protocol: Optional[str], reason: str) -> dict:
    """The row of a run whose input was rejected (file:line:field: why): judged on nothing."""
    return {"run_id": run_id, "files": files, "events": 0, "protocol": protocol, "verdict": "rejected",
            "reason": reason, "violations": [], "crashed": [], "checks": [],
            "judged_on": "nothing: the input was rejected"}


# ---------------------------------------------------------------- from our traces

def projectable() -> list[str]:
    """The protocols whose logged state the projection knows (their
    descriptor's ``history``, impl/protocols.py): SEQUENCER (append-only
    ``sent``, ``delivered``, ``vid``) and FLUSH (``delivered`` a set,
    ``blocked``, VIEW messages naming the members), alone or composed."""
    return [p for p in impl_protocols.names() if impl_protocols.get(p).history is not None]


def promised_checks(protocol: str) -> set[str]:
    """The history checks (``CHECKS``) that see a property ``protocol`` promises."""
    promised = set(promises(protocol))
    return {name for name, props in CHECKS.items() if set(props) & promised}


def agrees_with_replay(records: list[dict], report) -> tuple[bool, list[Violation], str]:
    """Black box against grey box on one of our runs: the history projected
    from ``records`` (its protocol's promised checks) and the model replay's
    ``report`` (conformance.replay.RunReport) must flag the same runs, and
    the property the replay names must be one the history flags.  Returns
    (agree, the history's violations, why not)."""
    protocol = records[0]["protocol"]
    h = from_records(from_trace(records))
    found = [v for v in check(h) if v.check in promised_checks(protocol)]
    names = {v.check for v in found}
    if report.verdict == "ok":
        return (not found, found, "" if not found else
                f"the replay accepts the run, the history flags {', '.join(sorted(names))}")
    if report.verdict not in ("violation", "documented"):
        return False, found, f"the replay's verdict is {report.verdict}: {report.reason}"
    prop = report.violations[0]["property"] if report.violations else (report.reason or "").split(":", 1)[0]
    want = SEEN_AS.get(prop)
    if want is None or not any(want in CHECKS[n] for n in names):
        return False, found, (f"the replay reports {prop}; the history flags "
                              f"{', '.join(sorted(names)) or 'nothing'}")
    return True, found, ""


def from_trace(records: list[dict]) -> list[dict]:
    """Project loaded trace records (header first) onto observable events: the
    history a black-box logger at each member would have written.  Sends and
    deliveries come from the growth of each member's logged ``sent`` and
    ``delivered``; views from ``vid`` changes; kills from ``Crash`` records."""
    head = records[0]
    desc = impl_protocols.find(head.get("protocol"))
    if desc is None or desc.history is None:
        raise HistoryError(f"header:protocol: no history projection for {head.get('protocol')!r} "
                           f"(have: {', '.join(projectable())})")
    how = desc.history
    if head.get("format") != "groupcheck-trace/2":     # format 1: whole states, made deltas on read
        t = trace_from_records(records)
        records = [t.header] + t.events + ([{"kind": "end", **t.end}] if t.end else [])
        head = records[0]
    flush = how.deliveries == "set"     # FLUSH's delivered set (the ring's records deliver nothing)
    out = [{"kind": "header", "format": FORMAT, "protocol": head.get("protocol"),
            "nodes": list(head.get("nodes", [])), "run_id": head.get("run_id"),
            "seed": head.get("seed"), "faults": head.get("faults"), "impl": head.get("impl"),
            "source": head.get("format")}]
    sent: dict = {}
    vid: dict = {}
    blocked: dict = {}
    dset: dict = {}
    # the first view: the header's first NInit nodes (FLUSH's joiners are listed after them)
    first_view = sorted(head.get("nodes", []))[:(head.get("constants") or {}).get("NInit") or None]
    view_members = first_view
    by_id = {1: first_view}        # view id -> members, from FLUSH's VIEWs (a VIEW sent in v installs v + 1)
    # over the ring a SEQUENCER's received-table starts over every node that
    # may join (the spec's), so its keys are not its first view's members
    recv_is_view = how.view_from_recv
    clock = 0.0
    quiescent = True     # a trace without an end record: the simulator runs to quiescence
    for r in records[1:]:
        if r.get("kind") == "end":
            quiescent = bool(r.get("quiescent"))
            continue
        nid, st, clock = r.get("nid"), r.get("state"), r.get("clock", clock)
        if r.get("name") in ("Crash", "LeaveSuspected"):      # killed, or left as suspected: gone
            out.append({"kind": "event", "name": "crash", "nid": None, "params": {"member": nid},
                        "clock": clock})
            continue
        if r.get("name") == "NewView" and "view" in (r.get("params") or {}):
            view_members = sorted(r["params"]["view"])
        if (r.get("msg") or {}).get("type") == "VIEW" and "members" in r["msg"]:   # FLUSH's VIEW
            view_members = sorted(r["msg"]["members"])
            if isinstance(r["msg"].get("view"), int):
                by_id[r["msg"]["view"] + 1] = view_members
        if not st or nid is None:
            continue
        if "blocked" in st and st["blocked"] != blocked.get(nid, False):
            out.append({"kind": "event", "name": "block" if st["blocked"] else "unblock", "nid": nid,
                        "params": {}, "clock": clock})
            blocked[nid] = st["blocked"]
        if how.app_layer is not None and layers.layer_of(desc.name, r["name"], r.get("params")) != how.app_layer:
            continue       # the application sees its layer (SEQUENCER); FLUSH's blocks are read above
        view_ev = None
        if "vid" in st and st["vid"] != vid.get(nid) and st["vid"] > 0:   # vid 0: a joiner not yet in
            members = (sorted(int(k) for k in st["recv"]) if "recv" in st and recv_is_view
                       else by_id.get(st["vid"], view_members))
            view_ev = {"kind": "event", "name": "view", "nid": nid,
                       "params": {"view": st["vid"], "members": members}, "clock": clock}
            if not flush or vid.get(nid) is None:
                out.append(view_ev)
                view_ev = None
        if "vid" in st:
            vid[nid] = st["vid"]
        if flush:                  # FLUSH: the Multicast names the message; `delivered` is a set
            m = r.get("msg") or {}
            if r.get("name") == "Multicast" and m.get("sender") == nid:
                out.append({"kind": "event", "name": "send", "nid": nid,
                            "params": {"id": [nid, m["seqno"]]}, "clock": clock})
            have = dset.setdefault(nid, set())
            for x in sorted(tuple(x) for x in st.get("delivered", [])):
                if x not in have:
                    have.add(x)
                    out.append({"kind": "event", "name": "deliver", "nid": nid, "params": {"id": list(x)},
                                "clock": clock})
            if view_ev is not None:   # FLUSH delivers the reconciled old-view messages, then installs
                out.append(view_ev)
            continue
        for q in range(sent.get(nid, 0) + 1, st.get("sent", 0) + 1):
            out.append({"kind": "event", "name": "send", "nid": nid, "params": {"id": [nid, q]},
                        "clock": clock})
        sent[nid] = max(sent.get(nid, 0), st.get("sent", 0))
        for x in st.get("delivered", []):     # format 2: the elements this step appended
            out.append({"kind": "event", "name": "deliver", "nid": nid, "params": {"id": list(x)},
                        "clock": clock})
    out.append({"kind": "end", "quiescent": quiescent, "clock": clock})
    return out


# ---------------------------------------------------------------- Spark engine

def _check_group(run_id: str, rows, protocol: Optional[str], every: bool, files: list) -> str:
    """One run's rows (file, line, text), every file's header included ->
    its verdict as JSON, or its ``rejected`` row; each file read as ``load``
    reads it, in the order ``load`` reads them (``files``)."""
    by_file: dict = {}
    for file, line, text in rows:
        by_file.setdefault(file, []).append((line, text))

    def read(fs):
        runs: dict = {}
        for file in fs:
            lines = sorted(by_file[file])
            h = open_file(runs, file, first_header(file, lines[0][1]))
            h.read(file, lines[1:])
        return list(runs.values())
    return json.dumps(_judged_or_rejected(run_id, files, protocol, every, read))


def check_spark(paths: Iterable, spark, protocol: Optional[str] = None, every: bool = False,
                skipped: Optional[list] = None, quarantine: bool = False) -> list[dict]:
    """The same verdicts as ``check_paths``, on Spark: one row per record
    (run_id, (file, line, text)), each file's run_id read from its header on
    the driver, rows grouped per run and checked by the same ``History`` /
    ``check`` on the executors."""
    files = history_files(paths, skipped)
    runs = _runs_of(files)          # each file's header, on the driver (errors name file:1:field)
    # one pass per file on the driver: its line ends and its bytes (textFile
    # splits on \r\n too, and decodes what is not UTF-8): a run with such a
    # line is read here, as load reads it, and gets load's verdict or reason
    on_driver = set()
    for key, fs in runs.items():
        if isinstance(fs, HistoryError):
            continue
        for f in fs:
            with open(f, "rb") as fh:
                if any(line.endswith(b"\r\n") or line.endswith(b"\r") or not is_utf8(line) for line in fh):
                    on_driver.add(key)
    got = {key: _judged_or_rejected(key, fs, protocol, every) for key, fs in runs.items()
           if isinstance(fs, HistoryError) or key in on_driver}
    spread = {key: fs for key, fs in runs.items() if key not in got}
    if spread:
        sc = spark.sparkContext
        rdd = sc.union([sc.textFile(f).zipWithIndex().map(lambda t, f=f, r=key: (r, (f, t[1] + 1, t[0])))
                        for key, fs in spread.items() for f in fs])
        got.update((k, json.loads(v)) for k, v in rdd.groupByKey().map(
            lambda kv: (kv[0], _check_group(kv[0], kv[1], protocol, every, spread[kv[0]]))).collect())
    rows = [got[key] for key in runs]
    if not quarantine:
        bad = next((r for r in rows if r["verdict"] == "rejected"), None)
        if bad is not None:
            raise HistoryError(bad["reason"])
    return rows


# ---------------------------------------------------------------- a history and its trace

def same_run(h: History, t: History) -> Optional[str]:
    """None when history ``h`` and ``t`` (the history projected from a
    trace, ``from_trace``) are the same run: the same run id and members,
    the same messages sent, each member's deliveries in the same order, the
    same views installed, the same crashes; else the first difference."""
    if h.run_id != t.run_id:
        return f"run id {h.run_id!r} against the trace's {t.run_id!r}"
    if sorted(h.nodes, key=str) != sorted(t.nodes, key=str):
        return f"members {sorted(h.nodes, key=str)} against the trace's {sorted(t.nodes, key=str)}"
    if set(h.sent) != set(t.sent):
        d = sorted(set(h.sent) ^ set(t.sent))[0]
        return f"message {properties.fmt(d)} sent in {'the history' if d in h.sent else 'the trace'} only"
    for m in sorted(set(h.deliveries) | set(t.deliveries), key=str):
        a = [d[0] for d in h.deliveries.get(m, ())]
        b = [d[0] for d in t.deliveries.get(m, ())]
        if a != b:
            k = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            return (f"member {m}'s delivery {k + 1}: {properties.fmt(a[k]) if k < len(a) else 'none'} "
                    f"against the trace's {properties.fmt(b[k]) if k < len(b) else 'none'}")
    for m in sorted(set(h.views) | set(t.views), key=str):
        a = [(v, sorted(ms, key=str)) for v, ms, _ in h.views.get(m, ())]
        b = [(v, sorted(ms, key=str)) for v, ms, _ in t.views.get(m, ())]
        if a != b:
            return f"member {m}'s views {a} against the trace's {b}"
    if set(h.crashed) != set(t.crashed):
        return f"crashed {sorted(h.crashed, key=str)} against the trace's {sorted(t.crashed, key=str)}"
    return None
