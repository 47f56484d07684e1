"""Black-box history checking (docs/history-format.md).

A history records only what a stack can observe about itself: multicasts
sent, messages delivered, views installed, FLUSH's block/unblock, state
transfer, and environment records for kills.  This module reads history
files (and projects our traces onto histories); the properties themselves
are core/properties.py's, each linear in the history, none searching.

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

from groupcheck.core.trace import layers, limits as inputlimits
from groupcheck.core import properties
from groupcheck.core.properties import SEEN_AS, Violation, joined_views  # noqa: F401  (the checker's names)
from groupcheck.conformance.replay.registry import promises
from groupcheck.conformance.audit import diagram

FORMAT = "groupcheck-history/1"
EVENTS = ("send", "deliver", "view", "block", "unblock", "get_state", "set_state", "crash")
# check -> the catalogue's properties it reports (the first witness among them)
CHECKS = {"Integrity": ("Integrity",), "NoDuplicates": ("NoDuplicates",),
          "SenderFIFO": ("SenderFIFO", "GapFreeFIFO"), "TotalOrder": ("TotalOrder",),
          "SurvivorTotalOrder": ("SurvivorTotalOrder",), "Agreement": ("Agreement",),
          "VirtualSynchrony": ("VirtualSynchrony",), "FlushEventOrder": ("FlushEventOrder",),
          "CrashStop": ("CrashStop",)}
_FLUSH_LETTER = {"block": "b", "unblock": "u", "view": "v", "get_state": "g", "set_state": "s"}


class HistoryError(ValueError):
    """Bad input, named file:line:field."""


# what each event may carry (params keys): anything else is an error
PARAMS = {"send": {"id"}, "deliver": {"id"}, "view": {"view", "members"}, "block": set(), "unblock": set(),
          "get_state": set(), "set_state": set(), "crash": {"member"}}
FIELDS = {"event": {"kind", "name", "nid", "params", "clock"}, "end": {"kind", "quiescent", "clock"},
          "header": {"kind", "format", "run_id", "nodes", "node", "protocol", "promises", "seed", "faults",
                     "impl", "impl_version", "source"}}
MAX_LINE = 1 << 20     # bytes: a history line is a few dozen; a larger one is not a history


# the header's informational fields: not read by a check, but typed all the same
_INFORMATIONAL = (("seed", (int, type(None)), "an integer or null"), ("faults", (dict,), "an object"),
                  ("impl", (str,), "a string"), ("impl_version", (str,), "a string"), ("source", (str,), "a string"))


def _int(x) -> bool:
    return type(x) is int     # never a bool, a float or a string


@dataclass
class History(properties.History):
    """One run read from history records (``load``/``from_records``); ``sent``
    maps a message to the file and line that sent it.  Every field a check
    reads is validated here, where its file and line are known."""
    protocol: Optional[str] = None      # the header's (the same in every file of the run)
    promised: Optional[list] = None     # the header's explicit ``promises``, if any
    file_node: dict = field(default_factory=dict)   # file -> the member whose events it holds
    # member -> (file, position) of its first crash record: its events later
    # in that file are ordered after it (``crashed_at``); a crash in the
    # environment's file of a per-member run is ordered with none of them
    _crash_in: dict = field(default_factory=dict, repr=False)
    view_type: Optional[type] = None    # int or str: the type of the run's view ids (one per run)

    def header(self, rec: dict, where: str) -> None:
        """Take one file's header into the run: its members, protocol and promises."""
        for k in rec:
            if k not in FIELDS["header"]:
                raise HistoryError(f"{where}:{k}: unknown header field ({', '.join(sorted(FIELDS['header']))})")
        if "nodes" not in rec:
            raise HistoryError(f"{where}:nodes: missing (the run's members)")
        nodes = rec["nodes"]
        if type(nodes) is not list or not nodes or not all(_int(n) and n >= 1 for n in nodes):
            raise HistoryError(f"{where}:nodes: expected a non-empty list of member ids (integers >= 1), "
                               f"got {nodes!r}")
        if len(set(nodes)) != len(nodes):
            raise HistoryError(f"{where}:nodes: a member listed twice in {nodes!r}")
        if "node" in rec and (not _int(rec["node"]) or rec["node"] not in nodes):
            raise HistoryError(f"{where}:node: {rec['node']!r} is not one of the nodes {nodes}")
        self.nodes = list(dict.fromkeys(self.nodes + nodes))
        for key in ("protocol", "promises"):
            if key in rec:
                mine = getattr(self, "promised" if key == "promises" else key)
                if mine is not None and mine != rec[key]:
                    raise HistoryError(f"{where}:{key}: {rec[key]!r}, where another file of run "
                                       f"{self.run_id!r} says {mine!r}")
        if "protocol" in rec:
            if not isinstance(rec["protocol"], str):
                raise HistoryError(f"{where}:protocol: expected a protocol name, got {rec['protocol']!r}")
            self.protocol = rec["protocol"]
        for key, types, what in _INFORMATIONAL:
            if key in rec and type(rec[key]) not in types:
                raise HistoryError(f"{where}:{key}: expected {what}, got {rec[key]!r}")
        if "promises" in rec:
            bad = ([c for c in rec["promises"] if type(c) is not str or c not in CHECKS]
                   if type(rec["promises"]) is list else [rec["promises"]])
            if bad:
                raise HistoryError(f"{where}:promises: {bad[0]!r} is not a check ({', '.join(CHECKS)})")
            self.promised = rec["promises"]

    def _member(self, x, file: str, line: int, field: str) -> None:
        if not _int(x):
            raise HistoryError(f"{file}:{line}:{field}: expected a member id (an integer), got {x!r}")
        if self.nodes and x not in self.nodes:
            raise HistoryError(f"{file}:{line}:{field}: {x} is not a member of the run (nodes {self.nodes})")

    def add(self, rec: dict, file: str, line: int) -> None:
        for k in rec:
            if k not in FIELDS["event"]:
                raise HistoryError(f"{file}:{line}:{k}: unknown field of an event "
                                   f"({', '.join(sorted(FIELDS['event']))})")
        name = rec.get("name")
        if type(name) is not str or name not in PARAMS:
            raise HistoryError(f"{file}:{line}:name: {name!r} is not a history event ({', '.join(EVENTS)})")
        nid = rec.get("nid")
        params = rec.get("params", {})
        if type(params) is not dict:
            raise HistoryError(f"{file}:{line}:params: expected an object, got {params!r}")
        for k in params:
            if k not in PARAMS[name]:
                raise HistoryError(f"{file}:{line}:params.{k}: not a field of a {name} event "
                                   f"({', '.join(sorted(PARAMS[name])) or 'it has none'})")
        clock = rec.get("clock")
        if "clock" in rec and type(clock) not in (int, float):
            raise HistoryError(f"{file}:{line}:clock: expected a number, got {clock!r}")
        if name == "crash":
            if nid is not None:
                raise HistoryError(f"{file}:{line}:nid: a crash is the environment's record (nid null)")
            who = params.get("member")
            if who is None:
                raise HistoryError(f"{file}:{line}:params.member: a crash names no member")
            self._member(who, file, line, "params.member")
            self.events += 1
            self.crashed.add(who)
            self._crash_in.setdefault(who, (file, self.events))
            return
        if nid is None:
            raise HistoryError(f"{file}:{line}:nid: a {name} event needs a member")
        self._member(nid, file, line, "nid")
        self.events += 1
        if nid in self._crash_in and self._crash_in[nid][0] == file:
            # an event of a member after its own crash record in one file: ordered with it (CrashStop)
            self.crashed_at.setdefault(nid, self._crash_in[nid][1])
        if name == "deliver" or name == "send":
            msg = params.get("id")
            if type(msg) is not list or len(msg) != 2 or not all(_int(x) and x >= 1 for x in msg):
                raise HistoryError(f"{file}:{line}:params.id: expected [sender, seq] (integers >= 1), "
                                   f"got {msg!r}")
            msg = (msg[0], msg[1])
            if name == "deliver":
                vs = self.views.get(nid)
                self.deliveries[nid].append((msg, vs[-1][0] if vs else None, self.events))
            else:
                if msg[0] != nid:
                    raise HistoryError(f"{file}:{line}:params.id: member {nid} sends a message of {msg[0]}")
                if msg in self.sent:
                    raise HistoryError(f"{file}:{line}:params.id: {msg[0]}.{msg[1]} was sent before, "
                                       f"at {self.sent[msg][0]}:{self.sent[msg][1]}")
                self.sent[msg] = (file, line)
                self.sent_at[msg] = self.events
                vs = self.views.get(nid)
                if vs:      # a joiner owes what was sent from its join view on (EventualDelivery)
                    self.sent_view[msg] = vs[-1][0]
            return
        if name == "view":
            for k in ("view", "members"):
                if k not in params:
                    raise HistoryError(f"{file}:{line}:params.{k}: missing in a view event")
            vid, members = params["view"], params["members"]
            if type(vid) not in (int, str):
                raise HistoryError(f"{file}:{line}:params.view: expected a view id (integer or string), got {vid!r}")
            if self.view_type is None:
                self.view_type = type(vid)
            elif type(vid) is not self.view_type:       # view ids are ordered: one type per run
                raise HistoryError(f"{file}:{line}:params.view: {vid!r}, where the run's view ids are "
                                   f"{'integers' if self.view_type is int else 'strings'}")
            if type(members) is not list:
                raise HistoryError(f"{file}:{line}:params.members: expected a list, got {members!r}")
            for k, m in enumerate(members):
                self._member(m, file, line, f"params.members[{k}]")
            self.views[nid].append((vid, tuple(members), self.events))
            self.flush[nid].append("v")
        else:
            self.flush[nid].append(_FLUSH_LETTER[name])

    def end(self, rec: dict, file: str, line: int) -> None:
        for k in rec:
            if k not in FIELDS["end"]:
                raise HistoryError(f"{file}:{line}:{k}: unknown field of an end record")
        q = rec.get("quiescent")
        if type(q) is not bool:
            raise HistoryError(f"{file}:{line}:quiescent: expected true or false, got {q!r}")
        clock = rec.get("clock")
        if "clock" in rec and type(clock) not in (int, float):
            raise HistoryError(f"{file}:{line}:clock: expected a number, got {clock!r}")
        self.quiescent = q if self.quiescent is None else (self.quiescent and q)

    def read(self, file: str, lines: Iterable) -> None:
        """One file's records after its header (``lines``: (line number,
        text)), in the file's order: events of one member are in the order
        that member logged them (its own sends before its deliveries of
        them, nothing after the end record).  Clocks are informational: a
        multi-threaded logger (JGroups's) reads its clock before it takes
        the file's lock, so two records may carry clocks out of order."""
        self.records(file, ((ln, _parse(file, ln, text)) for ln, text in lines))

    def records(self, file: str, recs: Iterable) -> None:
        """``read`` on parsed records (line number, record)."""
        node, ended = self.file_node.get(file), None
        for ln, rec in recs:
            if ended is not None:
                raise HistoryError(f"{file}:{ln}: a record after the end record (line {ended})")
            if type(rec) is not dict:
                raise HistoryError(f"{file}:{ln}: expected a JSON object")
            kind = rec.get("kind")
            if kind == "event":
                if node is not None and rec.get("nid") not in (node, None):
                    raise HistoryError(f"{file}:{ln}:nid: {rec.get('nid')!r} in the file of member {node}")
                self.add(rec, file, ln)
            elif kind == "end":
                self.end(rec, file, ln)
                ended = ln
            else:
                raise HistoryError(f"{file}:{ln}:kind: {kind!r} (event or end)")


def _parse(file: str, ln: int, text: str):
    """One line's record: a line too long, with a CR, empty or not JSON is
    refused, named."""
    if len(text) > MAX_LINE:
        raise HistoryError(f"{file}:{ln}: a line of {len(text)} bytes (at most {MAX_LINE})")
    if text.endswith("\r\n") or text.endswith("\r"):
        raise HistoryError(f"{file}:{ln}: a CRLF line end (history files are NDJSON with LF line ends)")
    if not text.strip():
        raise HistoryError(f"{file}:{ln}: an empty line")
    return _json(file, ln, text)


def _json(file: str, ln: int, text: str):
    """One line's value, within the readers' limits (core/trace/limits.py:
    nesting depth, integers beyond 64 bits, NaN/Infinity, lone surrogates, a
    byte order mark); a reason naming the field, where there is one, as
    ``file:line:field: why``."""
    try:
        return inputlimits.loads(text.rstrip("\n"))
    except json.JSONDecodeError as e:
        raise HistoryError(f"{file}:{ln}: not JSON ({e.msg})") from None
    except ValueError as e:
        field, sep, why = str(e).partition(": ")
        raise HistoryError(f"{file}:{ln}:{field}: {why}" if sep and " " not in field
                           else f"{file}:{ln}: {e}") from None


def _header(rec, where: str) -> dict:
    if type(rec) is not dict or rec.get("kind") != "header":
        raise HistoryError(f"{where}:kind: first line must be a header")
    if rec.get("format") != FORMAT:
        raise HistoryError(f"{where}:format: expected {FORMAT!r}, got {rec.get('format')!r}")
    if "run_id" not in rec:
        raise HistoryError(f"{where}:run_id: missing")
    if not isinstance(rec["run_id"], str):
        raise HistoryError(f"{where}:run_id: expected a string, got {rec['run_id']!r}")
    return rec


def _first(file: str, text: str) -> dict:
    if len(text) > MAX_LINE:
        raise HistoryError(f"{file}:1: a line of {len(text)} bytes (at most {MAX_LINE})")
    return _header(_json(file, 1, text), f"{file}:1")


def _open_file(runs: dict, file: str, head: dict) -> History:
    h = runs.get(head["run_id"])
    if h is None:
        h = runs[head["run_id"]] = History(run_id=head["run_id"])
    h.header(head, f"{file}:1")
    h.files.append(file)
    if "node" in head:
        h.file_node[file] = head["node"]
    return h


def load(paths: Iterable) -> list[History]:
    """Read history files (one per member, or one per run); group by run_id."""
    runs: dict[str, History] = {}
    for p in paths:
        p = str(p)
        lines = _lines(p)
        first = next(lines, (1, ""))[1]
        h = _open_file(runs, p, _first(p, first))
        h.read(p, lines)
    return list(runs.values())


def _lines(file: str):
    """(line number, text) of a file, each line strictly UTF-8 (a byte that
    is not is refused, named by its line), split at ``\\n`` only."""
    try:
        f = open(file, "rb")
    except OSError as e:
        raise HistoryError(f"{file}: cannot read: {e.strerror or e}") from None
    with f:
        for ln, raw in enumerate(f, start=1):
            yield ln, _text(file, ln, raw)


def _text(file: str, ln: int, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise HistoryError(f"{file}:{ln}: not UTF-8 ({e.reason} at byte {e.start})") from None


def history_files(paths: Iterable, skipped: Optional[list] = None) -> list[str]:
    """The history files named or under the folders named.  A file found in
    a folder whose header is a trace's (a cluster's or simulate's ``traces/``
    beside ``history/``) is not a history: it goes to ``skipped`` (when
    given), and ``groupcheck conform`` reads it."""
    out = []
    for p in paths:
        q = Path(p)
        if q.is_dir():
            for x in sorted(q.rglob("*.ndjson")):
                if skipped is not None and _is_trace(x):
                    skipped.append(str(x))
                else:
                    out.append(str(x))
        elif q.exists():
            out.append(str(q))
        else:
            raise HistoryError(f"{p}: no such file or folder")
    return out


def _is_trace(path: Path) -> bool:
    with open(path, encoding="utf-8", errors="replace") as f:
        first = f.readline(MAX_LINE)
    try:
        head = inputlimits.loads(first.rstrip("\n"))     # (within the limits: a header nested deep is no trace's)
    except ValueError:
        return False
    return type(head) is dict and str(head.get("format", "")).startswith("groupcheck-trace/")


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
    from groupcheck.conformance.replay.registry import UnknownProtocol, available
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
            rid = _first(f, next(_lines(f), (1, ""))[1])["run_id"]
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
    from groupcheck.impl import protocols as impl_protocols
    desc = impl_protocols.find(head.get("protocol"))
    if desc is None or desc.history is None:
        raise HistoryError(f"header:protocol: no history projection for {head.get('protocol')!r} "
                           f"(have: {', '.join(projectable())})")
    how = desc.history
    if head.get("format") != "groupcheck-trace/2":     # format 1: whole states, made deltas on read
        from groupcheck.core.trace.reader import from_records as trace_from_records
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


def from_records(records: list[dict], where: str = "<memory>") -> History:
    """A run from loaded records (header first), validated as a file is."""
    head = _header(records[0], f"{where}:1")
    runs: dict = {}
    h = _open_file(runs, where, head)
    h.records(where, enumerate(records[1:], start=2))
    return h


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
            h = _open_file(runs, file, _first(file, lines[0][1]))
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
                if any(line.endswith(b"\r\n") or line.endswith(b"\r") or not _utf8(line) for line in fh):
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


def _utf8(line: bytes) -> bool:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


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
