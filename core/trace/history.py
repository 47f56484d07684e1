"""Reading history files (groupcheck-history/1, docs/history-format.md).

A history records only what a stack can observe about itself: multicasts
sent, messages delivered, views installed, FLUSH's block/unblock, state
transfer, and environment records for kills.  This module reads history
files into ``History`` (core/properties.py's history with the reader's
bookkeeping), validating every field a check reads where its file and
line are known; a bad input raises ``HistoryError`` naming
``file:line:field``.  The checks over a history are conformance/history.py's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

from groupcheck.core import properties
from groupcheck.core.trace import limits as inputlimits

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


def first_header(file: str, text: str) -> dict:
    if len(text) > MAX_LINE:
        raise HistoryError(f"{file}:1: a line of {len(text)} bytes (at most {MAX_LINE})")
    return _header(_json(file, 1, text), f"{file}:1")


def open_file(runs: dict, file: str, head: dict) -> History:
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
        lines = lines_of(p)
        first = next(lines, (1, ""))[1]
        h = open_file(runs, p, first_header(p, first))
        h.read(p, lines)
    return list(runs.values())


def lines_of(file: str):
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


def from_records(records: list[dict], where: str = "<memory>") -> History:
    """A run from loaded records (header first), validated as a file is."""
    head = _header(records[0], f"{where}:1")
    runs: dict = {}
    h = open_file(runs, where, head)
    h.records(where, enumerate(records[1:], start=2))
    return h



def is_utf8(line: bytes) -> bool:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
