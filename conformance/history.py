"""Black-box history checking (issue 14, docs/history-format.md).

A history records only what a stack can observe about itself: multicasts
sent, messages delivered, views installed, FLUSH's block/unblock, state
transfer, and environment records for kills.  Every check below is linear in
the history (one pass per file, then per-message indexes); none searches.

Checks, each named in the verdict:

* ``Integrity``        -- only sent messages are delivered
* ``NoDuplicates``     -- no member delivers a message twice
* ``SenderFIFO``       -- a member delivers each sender's messages in order,
                          gap-free for senders that were never killed
* ``TotalOrder``       -- uniform: any two members (killed ones included)
                          deliver their common messages in one order
* ``SurvivorTotalOrder`` -- the same among members never killed
* ``Agreement``        -- at a quiescent end, survivors (never killed, still in
                          their last view) delivered the same set, and every
                          message a member never killed sent was delivered by
                          every survivor
* ``VirtualSynchrony`` -- members that move together from view V to V'
                          delivered the same set in V
* ``FlushEventOrder``  -- per member, block/view/get-state/set-state/unblock
                          follow JGroups's FlushTest pattern ``([b][vgs]*[u])+``
                          (a killed member, or one that left, may stop
                          inside a block)

Each violation carries its smallest witness: the conflicting deliveries (or
the offending event), the members and their views, as text, as JSON and as a
Mermaid sequence diagram (``Violation.mermaid``) for the audit report.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

FORMAT = "groupcheck-history/1"
EVENTS = ("send", "deliver", "view", "block", "unblock", "get_state", "set_state", "crash")
CHECKS = ("Integrity", "NoDuplicates", "SenderFIFO", "TotalOrder", "SurvivorTotalOrder",
          "Agreement", "VirtualSynchrony", "FlushEventOrder")
_FLUSH_LETTER = {"block": "b", "unblock": "u", "view": "v", "get_state": "g", "set_state": "s"}


class HistoryError(ValueError):
    """Bad input, named file:line:field."""


@dataclass
class Violation:
    check: str
    text: str
    members: list = field(default_factory=list)
    # the witness deliveries: [{"member", "msg", "view", "index"}], in diagram order
    events: list = field(default_factory=list)

    def steps(self) -> list:
        """The witness as diagram Steps (conformance/diagram.py): one per
        witness event, in order, the conflicting ones marked."""
        from .diagram import Step
        out = []
        for k, e in enumerate(self.events, start=1):
            what = e.get("what", "deliver")
            label = f"{what} {_fmt(e['msg'])}" if e.get("msg") is not None else what
            at = [] if e.get("index") is None else [f"event {e['index']}"]
            if e.get("view") is not None:
                at.append(f"view {e['view']}")
            out.append(Step(index=k, action=label, actors=[e["member"]], note=", ".join(at), bad=True))
        return out

    def mermaid(self) -> str:
        from . import diagram
        return diagram.mermaid(self.steps(), None, f"{self.check}: {self.text}")

    def svg(self) -> str:
        from . import diagram
        return diagram.svg(self.steps(), None, f"{self.check}: {self.text}")

    def to_json(self) -> dict:
        return {"check": self.check, "text": self.text, "members": self.members,
                "events": self.events, "mermaid": self.mermaid(), "svg": self.svg()}


def _fmt(msg) -> str:
    return f"{msg[0]}.{msg[1]}" if isinstance(msg, (list, tuple)) else str(msg)


@dataclass
class History:
    """One run: per-member event lists, built by ``load``/``from_records``."""
    run_id: str
    files: list = field(default_factory=list)
    nodes: list = field(default_factory=list)
    sent: dict = field(default_factory=dict)         # (sender, seq) -> where (file:line)
    deliveries: dict = field(default_factory=lambda: defaultdict(list))  # member -> [(msg, vid, i)]
    views: dict = field(default_factory=lambda: defaultdict(list))       # member -> [(vid, members, i)]
    flush: dict = field(default_factory=lambda: defaultdict(list))       # member -> letters
    crashed: set = field(default_factory=set)
    quiescent: Optional[bool] = None
    events: int = 0

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

def _pair_order(h: History, a, b) -> Optional[Violation]:
    """First inversion between a's and b's deliveries of their common messages."""
    da, db = h.deliveries.get(a, []), h.deliveries.get(b, [])
    pos_b = {}
    for msg, vid, i in db:
        pos_b.setdefault(msg, (len(pos_b), vid, i))
    best = None            # the common message a delivered with the largest b-position so far
    for msg, vid, i in da:
        pb = pos_b.get(msg)
        if pb is None:
            continue
        if best is not None and pb[0] < best[1][0]:
            x, (px, vx, ix), (vax, iax) = best[0], best[1], best[2]
            y = msg
            return Violation(
                "TotalOrder",
                f"member {a} delivered {_fmt(x)} before {_fmt(y)}, member {b} delivered "
                f"{_fmt(y)} before {_fmt(x)}",
                [a, b],
                [{"member": a, "msg": list(x), "view": vax, "index": iax},
                 {"member": a, "msg": list(y), "view": vid, "index": i},
                 {"member": b, "msg": list(y), "view": pb[1], "index": pb[2]},
                 {"member": b, "msg": list(x), "view": vx, "index": ix}])
        if best is None or pb[0] > best[1][0]:
            best = (msg, pb, (vid, i))
    return None


def check(h: History) -> list[Violation]:
    """Every check on one run; at most one (the smallest) witness per check."""
    out: list[Violation] = []
    members = sorted(set(h.nodes) | set(h.deliveries) | set(h.views) | set(h.flush), key=str)
    # A member whose last installed view leaves it out has left the group (a
    # graceful leave): it stops delivering there and may end blocked, so it
    # is neither a survivor for Agreement nor held to end unblocked.  Its own
    # messages still count: the members that stay must deliver them.
    left = {m for m in members if h.views.get(m) and m not in h.views[m][-1][1]}
    survivors = [m for m in members if m not in h.crashed and m not in left]
    first = {}
    # Integrity, NoDuplicates, SenderFIFO: one pass per member
    joined = joined_views(h, members)
    for m in members:
        seen = set()
        last: dict = {}
        for msg, vid, i in h.deliveries.get(m, []):
            ev = [{"member": m, "msg": list(msg), "view": vid, "index": i}]
            if "Integrity" not in first and msg not in h.sent:
                first["Integrity"] = Violation("Integrity", f"member {m} delivered {_fmt(msg)}, "
                                               f"which member {msg[0]} never sent", [m], ev)
            if msg in seen:
                first.setdefault("NoDuplicates", Violation(
                    "NoDuplicates", f"member {m} delivered {_fmt(msg)} twice", [m], ev))
                continue
            seen.add(msg)
            x, q = msg
            # a joiner's first message of each sender may be any: what came
            # before was delivered in views it was not in (no state transfer)
            prev = last.get(x, q - 1 if joined.get(m) else 0)
            gap_ok = x in h.crashed
            if "SenderFIFO" not in first and (q <= prev or (q != prev + 1 and not gap_ok)):
                text = (f"member {m} delivered {_fmt(msg)} after {_fmt((x, prev))}" if q <= prev else
                        f"member {m} delivered {_fmt(msg)} after {_fmt((x, prev)) if prev else 'nothing'} of "
                        f"member {x}, skipping {_fmt((x, prev + 1))} (member {x} was never killed)")
                first["SenderFIFO"] = Violation("SenderFIFO", text, [m], ev)
            last[x] = max(prev, q)
    out.extend(first[c] for c in ("Integrity", "NoDuplicates", "SenderFIFO") if c in first)
    # TotalOrder: uniform (all members), then among survivors
    uniform = survivor = None
    for ia, a in enumerate(members):
        for b in members[ia + 1:]:
            v = _pair_order(h, a, b)
            if v is None:
                continue
            if uniform is None:
                uniform = v
            if survivor is None and a not in h.crashed and b not in h.crashed:
                survivor = Violation("SurvivorTotalOrder", v.text, v.members, v.events)
    out.extend(v for v in (uniform, survivor) if v is not None)
    # Agreement at a quiescent end
    if h.quiescent is not False and survivors:
        def got(m, since):      # what m delivered in views from ``since`` on
            return {d[0] for d in h.deliveries.get(m, []) if (d[1] or 0) >= since}
        base = survivors[0]
        for m in survivors[1:]:
            # a joiner owes only what was delivered in views it was in
            since = max(joined.get(base, 0), joined.get(m, 0))
            a, b = got(base, since), got(m, since)
            if a != b:
                diff = sorted(a ^ b)[0]
                has, lacks = (base, m) if diff in a else (m, base)
                out.append(Violation("Agreement", f"survivor {has} delivered {_fmt(diff)}, survivor "
                                     f"{lacks} did not", [has, lacks],
                                     [{"member": has, "msg": list(diff), "view": None, "index": None}]))
                break
        else:
            anyone = set().union(*(got(m, 0) for m in survivors))
            for msg in sorted(h.sent):
                if msg[0] in h.crashed:
                    continue
                if msg not in anyone:
                    out.append(Violation("Agreement", f"member {msg[0]} (never killed) sent {_fmt(msg)}; no survivor "
                                         f"delivered it", [msg[0]],
                                         [{"member": msg[0], "msg": list(msg), "view": None,
                                           "index": None, "what": "send"}]))
                    break
    # VirtualSynchrony: per (V, V') transition, the set delivered in V
    moved: dict = {}
    for m in members:
        vs = h.views.get(m, [])
        if len(vs) < 2:
            continue
        ds = h.deliveries.get(m, [])
        per_view = defaultdict(set)
        for msg, vid, i in ds:
            per_view[vid].add(msg)
        for (v, _, _), (v2, _, _) in zip(vs, vs[1:]):
            moved.setdefault((v, v2), []).append((m, per_view.get(v, set())))
    vs_bad = None
    for (v, v2), rows in moved.items():
        m0, s0 = rows[0]
        for m, s in rows[1:]:
            if s != s0:
                diff = sorted(s ^ s0)[0]
                has, lacks = (m0, m) if diff in s0 else (m, m0)
                cand = Violation("VirtualSynchrony", f"members {m0} and {m} both moved from view {v} to "
                                 f"{v2}; {has} delivered {_fmt(diff)} in view {v}, {lacks} did not",
                                 [has, lacks], [{"member": has, "msg": list(diff), "view": v, "index": None}])
                vs_bad = vs_bad or cand
                break
    if vs_bad:
        out.append(vs_bad)
    # FlushEventOrder: ([b][vgs]*[u])+ per member that ever blocked
    for m in members:
        letters = h.flush.get(m, [])
        if "b" not in letters and "u" not in letters:
            continue
        bad = _flush_order(letters, m in h.crashed or m in left)
        if bad is not None:
            k, why = bad
            out.append(Violation("FlushEventOrder", f"member {m}: {why} (events {''.join(letters)})", [m],
                                 [{"member": m, "msg": None, "view": None, "index": k,
                                   "what": letters[k] if k < len(letters) else "end"}]))
            break
    return out


def joined_views(h: History, members) -> dict:
    """member -> the view it joined in, for members that were not in the
    run's first view (the view with the smallest id any member installed);
    members of the first view, or every member when no view is logged, are
    absent (they owe every message)."""
    firsts = [vs[0] for vs in h.views.values() if vs]
    if not firsts:
        return {}
    initial = set(min(firsts, key=lambda v: v[0])[1])
    return {m: h.views[m][0][0] for m in members if m not in initial and h.views.get(m)}


def _flush_order(letters: list, crashed: bool):
    """The automaton of ([b][vgs]*[u])+ ; None when accepted, else (position, reason).
    Views before the first block (the join) are allowed."""
    k = 0
    while k < len(letters) and letters[k] == "v":
        k += 1
    inside = False
    for j in range(k, len(letters)):
        c = letters[j]
        if c == "b":
            if inside:
                return j, "a second block before unblock"
            inside = True
        elif c == "u":
            if not inside:
                return j, "unblock without block"
            inside = False
        elif not inside:
            return j, f"{'view' if c == 'v' else 'state transfer'} outside a block"
    if inside and not crashed:
        return len(letters), "ends blocked"
    return None


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


def promises(protocol: str) -> tuple[str, ...]:
    """What ``protocol`` promises, in the history's terms (its conformance
    descriptor's ``promises``, conformance/protocols.py)."""
    from .protocols import get
    return get(protocol).promises


# which history check sees each property the model replay reports
SEEN_AS = {"TotalOrder": "TotalOrder", "EventualDelivery": "Agreement", "VirtualSynchrony": "VirtualSynchrony",
           "NoDuplicates": "NoDuplicates", "Integrity": "Integrity", "SenderFIFO": "SenderFIFO",
           "GapFreeFIFO": "SenderFIFO", "FlushEnds": "FlushEventOrder", "SurvivorTotalOrder": "SurvivorTotalOrder",
           "Flush.VirtualSynchrony": "VirtualSynchrony"}


def agrees_with_replay(records: list[dict], report) -> tuple[bool, list[Violation], str]:
    """Black box against grey box on one of our runs: the history projected
    from ``records`` (its protocol's promised checks) and the model replay's
    ``report`` (conformance.replay.RunReport) must flag the same runs, and
    the property the replay names must be one the history flags.  Returns
    (agree, the history's violations, why not)."""
    protocol = records[0]["protocol"]
    h = from_records(from_trace(records))
    promised = promises(protocol)
    found = [v for v in check(h) if v.check in promised]
    names = {v.check for v in found}
    if report.verdict == "ok":
        return (not found, found, "" if not found else
                f"the replay accepts the run, the history flags {', '.join(sorted(names))}")
    if report.verdict != "violation":
        return False, found, f"the replay's verdict is {report.verdict}: {report.reason}"
    prop = (report.reason or "").split(":", 1)[0]
    want = SEEN_AS.get(prop)
    if want is None or want not in names:
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
