"""Black-box history checking (docs/history-format.md).

A history records only what a stack can observe about itself: multicasts
sent, messages delivered, views installed, FLUSH's block/unblock, state
transfer, and environment records for kills.  This module reads history
files (and projects our traces onto histories); the properties themselves
are conformance/properties.py's, each linear in the history, none searching.

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
from pathlib import Path
from typing import Iterable

from . import properties
from .properties import SEEN_AS, Violation, joined_views, promises  # noqa: F401  (the checker's names)

FORMAT = "groupcheck-history/1"
EVENTS = ("send", "deliver", "view", "block", "unblock", "get_state", "set_state", "crash")
# check -> the catalogue's properties it reports (the first witness among them)
CHECKS = {"Integrity": ("Integrity",), "NoDuplicates": ("NoDuplicates",),
          "SenderFIFO": ("SenderFIFO", "GapFreeFIFO"), "TotalOrder": ("TotalOrder",),
          "SurvivorTotalOrder": ("SurvivorTotalOrder",), "Agreement": ("Agreement",),
          "VirtualSynchrony": ("VirtualSynchrony",), "FlushEventOrder": ("FlushEventOrder",)}
_FLUSH_LETTER = {"block": "b", "unblock": "u", "view": "v", "get_state": "g", "set_state": "s"}


class HistoryError(ValueError):
    """Bad input, named file:line:field."""


class History(properties.History):
    """One run read from history records (``load``/``from_records``); ``sent``
    maps a message to the file and line that sent it."""

    def add(self, rec: dict, file: str, line: int) -> None:
        name = rec.get("name")
        nid = rec.get("nid")
        params = rec.get("params") or {}
        self.events += 1
        if name == "deliver" or name == "send":
            msg = params.get("id")
            if type(msg) is not list or len(msg) != 2:
                raise HistoryError(f"{file}:{line}:params.id: expected [sender, seq], got {msg!r}")
            if nid is None:
                raise HistoryError(f"{file}:{line}:nid: a {name} event needs a member")
            msg = (msg[0], msg[1])
            if name == "deliver":
                vs = self.views.get(nid)
                self.deliveries[nid].append((msg, vs[-1][0] if vs else None, self.events))
            else:
                if msg[0] != nid:
                    raise HistoryError(f"{file}:{line}:params.id: member {nid} sends a message of {msg[0]}")
                self.sent.setdefault(msg, (file, line))
            return
        if nid is None and name != "crash":
            raise HistoryError(f"{file}:{line}:nid: a {name} event needs a member")
        if name == "view":
            try:
                vid, members = params["view"], params["members"]
            except KeyError as e:
                raise HistoryError(f"{file}:{line}:params.{e.args[0]}: missing in a view event") from None
            self.views[nid].append((vid, tuple(members), self.events))
            self.flush[nid].append("v")
        elif name in _FLUSH_LETTER:
            self.flush[nid].append(_FLUSH_LETTER[name])
        elif name == "crash":
            who = params.get("member", nid)
            if who is None:
                raise HistoryError(f"{file}:{line}:params.member: a crash names no member")
            self.crashed.add(who)
        else:
            raise HistoryError(f"{file}:{line}:name: {name!r} is not a history event ({', '.join(EVENTS)})")


def _header(rec: dict, where: str) -> dict:
    if rec.get("kind") != "header":
        raise HistoryError(f"{where}:kind: first line must be a header")
    if rec.get("format") != FORMAT:
        raise HistoryError(f"{where}:format: expected {FORMAT!r}, got {rec.get('format')!r}")
    if "run_id" not in rec:
        raise HistoryError(f"{where}:run_id: missing")
    return rec


def load(paths: Iterable) -> list[History]:
    """Read history files (one per member, or one per run); group by run_id."""
    runs: dict[str, History] = {}
    loads = json.loads
    for p in paths:
        p = str(p)
        with open(p, encoding="utf-8") as f:
            first = f.readline()
            try:
                head = _header(loads(first), f"{p}:1")
            except json.JSONDecodeError as e:
                raise HistoryError(f"{p}:1: not JSON ({e.msg})") from None
            h = runs.get(head["run_id"])
            if h is None:
                h = runs[head["run_id"]] = History(run_id=head["run_id"], nodes=list(head.get("nodes", [])))
            h.files.append(p)
            node = head.get("node")
            add = h.add
            for ln, line in enumerate(f, start=2):
                try:
                    rec = loads(line)
                except json.JSONDecodeError as e:
                    raise HistoryError(f"{p}:{ln}: not JSON ({e.msg})") from None
                kind = rec.get("kind")
                if kind == "event":
                    if node is not None and rec.get("nid") not in (node, None):
                        raise HistoryError(f"{p}:{ln}:nid: {rec.get('nid')} in the file of member {node}")
                    add(rec, p, ln)
                elif kind == "end":
                    q = rec.get("quiescent")
                    h.quiescent = q if h.quiescent is None else (h.quiescent and q)
                else:
                    raise HistoryError(f"{p}:{ln}:kind: {kind!r} (event or end)")
    return list(runs.values())


def history_files(paths: Iterable) -> list[str]:
    out = []
    for p in paths:
        q = Path(p)
        if q.is_dir():
            out.extend(sorted(str(x) for x in q.rglob("*.ndjson")))
        elif q.exists():
            out.append(str(q))
        else:
            raise HistoryError(f"{p}: no such file or folder")
    return out


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


def verdict(h: History) -> dict:
    vs = check(h)
    return {"run_id": h.run_id, "files": h.files, "events": h.events,
            "verdict": "ok" if not vs else "violation",
            "violations": [v.to_json() for v in vs], "crashed": sorted(h.crashed, key=str),
            "checks": list(CHECKS)}


def check_paths(paths: Iterable) -> list[dict]:
    return [verdict(h) for h in load(history_files(paths))]


# ---------------------------------------------------------------- from our traces

def projectable() -> list[str]:
    """The protocols whose logged state the projection knows (their
    descriptor's ``history``, impl/protocols.py): SEQUENCER (append-only
    ``sent``, ``delivered``, ``vid``) and FLUSH (``delivered`` a set,
    ``blocked``, VIEW messages naming the members), alone or composed."""
    from groupcheck.impl import protocols as impl_protocols
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
    if report.verdict != "violation":
        return False, found, f"the replay's verdict is {report.verdict}: {report.reason}"
    prop = (report.reason or "").split(":", 1)[0]
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
    from groupcheck.impl import protocols as impl_protocols
    desc = impl_protocols.find(head.get("protocol"))
    if desc is None or desc.history is None:
        raise HistoryError(f"header:protocol: no history projection for {head.get('protocol')!r} "
                           f"(have: {', '.join(projectable())})")
    how = desc.history
    if head.get("format") != "groupcheck-trace/2":     # format 1: whole states, made deltas on read
        from .traces import from_records as trace_from_records
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
        if r.get("name") == "Crash":
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
        if how.app_layer is not None and desc.layer_of(r["name"], r.get("params")) != how.app_layer:
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


def from_records(records: list[dict], where: str = "<memory>") -> History:
    head = _header(records[0], f"{where}:1")
    h = History(run_id=head["run_id"], files=[where], nodes=list(head.get("nodes", [])))
    for k, r in enumerate(records[1:], start=2):
        if r.get("kind") == "end":
            h.quiescent = r.get("quiescent")
        else:
            h.add(r, where, k)
    return h


# ---------------------------------------------------------------- Spark engine

def _check_group(run_id: str, rows) -> str:
    """One run's event rows (file, line, text) -> its verdict as JSON."""
    h = History(run_id=run_id)
    for file, line, text in sorted(rows):
        try:
            rec = json.loads(text)
        except json.JSONDecodeError as e:
            raise HistoryError(f"{file}:{line}: not JSON ({e.msg})") from None
        kind = rec.get("kind")
        if kind == "header":
            if file not in h.files:
                h.files.append(file)
            h.nodes = list(dict.fromkeys(h.nodes + list(rec.get("nodes", []))))
        elif kind == "end":
            q = rec.get("quiescent")
            h.quiescent = q if h.quiescent is None else (h.quiescent and q)
        elif kind == "event":
            h.add(rec, file, line)
        else:
            raise HistoryError(f"{file}:{line}:kind: {kind!r} (event or end)")
    return json.dumps(verdict(h))


def check_spark(paths: Iterable, spark) -> list[dict]:
    """The same verdicts as ``check_paths``, on Spark: one row per record
    (run_id, (file, line, text)), each file's run_id read from its header on
    the driver, rows grouped per run and checked by the same ``History`` /
    ``check`` on the executors."""
    files = history_files(paths)
    run_of = {}
    for f in files:     # headers are checked on the driver: errors name file:1:field
        with open(f, encoding="utf-8") as fh:
            try:
                run_of[f] = _header(json.loads(fh.readline()), f"{f}:1")["run_id"]
            except json.JSONDecodeError as e:
                raise HistoryError(f"{f}:1: not JSON ({e.msg})") from None
    sc = spark.sparkContext
    rdd = sc.union([sc.textFile(f).zipWithIndex().map(lambda t, f=f, r=run_of[f]: (r, (f, t[1] + 1, t[0])))
                    for f in files])
    got = dict(rdd.groupByKey().map(lambda kv: (kv[0], _check_group(kv[0], kv[1]))).collect())
    order = list(dict.fromkeys(run_of[f] for f in files))
    return [json.loads(got[k]) for k in order]
