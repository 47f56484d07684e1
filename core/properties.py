"""The catalogue of observable properties: each defined once, over a history.

Theory of operation
-------------------
A *history* (``History``) is what a member can observe about itself: the
messages sent, each member's deliveries in its order, the views it
installed, FLUSH's block/unblock/state-transfer letters, the members killed
and whether the run ended quiescent (docs/history-format.md).  The history
checker reads one from history files, the bindings and the pipeline build
one from a member's delivery sequences (``History.of``); every property
below is then judged the same way wherever it is asked.

Each property is one function ``History -> Optional[Violation]``: None when
it holds, else its smallest witness as data (``Violation``: the property,
the members, the messages, the witnessing events with their positions, and a
one-line reason).  ``Violation`` renders itself in one place: the text
(``str``), a Mermaid sequence diagram and an SVG space-time diagram
(conformance/audit/diagram.py draws both from the same steps).

Conventions shared by the definitions:

* Members are judged in sorted order, pairs (a, b) with a < b, and each
  property reports its first witness in that order, so a binding, the
  history checker and the pipeline name the same members.
* A repeated delivery is NoDuplicates' alone: the order properties
  (SenderFIFO, GapFreeFIFO, TotalOrder, SurvivorTotalOrder) judge each
  member's first delivery of each message.  A run with a repeat is flagged
  by NoDuplicates either way, so no verdict depends on it.
* A member joined in its first view when that view is not the run's first
  (``joined_views``): it owes only what was delivered in views it was in.
  A member whose last view leaves it out has left (it is not a survivor).
* NoDuplicates, TotalOrder and EventualDelivery screen first with
  whole-list operations (sets, slices: C speed), which pass only when the
  property holds; when a screen fails, the history is walked delivery by
  delivery for the first witness.

Which of these a protocol promises, and which its replay judges on its
members' delivery histories, are fields of its registration
(conformance/replay/registry.py ``promises``, ``judged``); ``SEEN_AS`` maps the name a replay reports to the property
here that sees it on the history.  STABLE's SafeGC and the ring's token
invariants are not here: purges and tokens are not observable events, so
their replays judge them on model states.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field, replace
from itertools import count, repeat
from operator import itemgetter
from typing import Callable, Iterable, Optional


def fmt(msg) -> str:
    """A message id as the texts write it: ``sender.seq``."""
    return f"{msg[0]}.{msg[1]}" if isinstance(msg, (list, tuple)) else str(msg)


_MEMBERS_RE = re.compile(r"\b(?:members?|survivors?|nodes?)\s+(\[[\d,\s]+\]|\d+(?:\s+and\s+\d+)?)")
_MSG_RE = re.compile(r"(?<![\w.])(\d+)\.(\d+)(?![\w.])")


def read_witness(text: str) -> tuple[list, list]:
    """(members, messages) a witness text names, in the catalogue's wording
    (``member 4``, ``members [3, 4]``, ``members 1 and 2``, ``survivor 3``;
    messages as ``fmt`` writes them): for a violation known only by its
    text (a verdict row's witness)."""
    members: list = []
    for m in _MEMBERS_RE.finditer(text or ""):
        members += [int(x) for x in re.findall(r"\d+", m.group(1)) if int(x) not in members]
    msgs = list(dict.fromkeys((int(a), int(b)) for a, b in _MSG_RE.findall(text or "")))
    return members, msgs


# ---------------------------------------------------------------- the data

@dataclass
class History:
    """One run's observable events.  ``deliveries``: member -> [(msg, view
    id or None, position)]; ``views``: member -> [(view id, members,
    position)]; ``flush``: member -> letters of ``([b][vgs]*[u])+``;
    ``sent``: msg -> where it was sent (any truthy note); positions are the
    events' indexes in the history (``index`` in a witness)."""
    run_id: str = ""
    files: list = field(default_factory=list)
    nodes: list = field(default_factory=list)
    sent: dict = field(default_factory=dict)
    deliveries: dict = field(default_factory=lambda: defaultdict(list))
    views: dict = field(default_factory=lambda: defaultdict(list))
    flush: dict = field(default_factory=lambda: defaultdict(list))
    crashed: set = field(default_factory=set)
    quiescent: Optional[bool] = None
    events: int = 0
    # member -> the view it joined in, when a binding knows it without views
    joined: Optional[dict] = None
    # msg -> the view it was sent in, when a binding knows it without views
    sent_view: dict = field(default_factory=dict)
    # msg -> the position of its send event, where the history logs sends
    sent_at: dict = field(default_factory=dict)
    # member -> the position of its crash record, where the history orders
    # that record with the member's own events (CrashStop)
    crashed_at: dict = field(default_factory=dict)

    @classmethod
    def of(cls, delivered: dict, sent: dict, crashed: Iterable = (), quiescent: Optional[bool] = None,
           nodes: Iterable = (), joined: Optional[dict] = None, sent_view: Optional[dict] = None) -> "History":
        """The history of a run known by each member's delivery sequence
        (``delivered``: member -> [(sender, seq)]) and sent count (``sent``:
        member -> k, messages 1..k; or ``sent_view``: each message sent ->
        the view it was sent in); a delivery's position is its place in its
        member's sequence (1-based).  ``joined``: member -> the view it
        joined in, for members that joined after the first view (their run
        of each sender may start anywhere; they owe only what was sent from
        their view on)."""
        h = cls(nodes=sorted(set(nodes) | set(delivered), key=str), crashed=set(crashed), quiescent=quiescent,
                joined=dict(joined or {}), sent_view=dict(sent_view or {}))
        for m, k in sent.items():
            for q in range(1, k + 1):
                h.sent[(m, q)] = True
        for msg in h.sent_view:
            h.sent[msg] = True
        for m, d in delivered.items():
            if set(map(len, d)) <= {2}:         # pairs, the usual: made tuples in C
                h.deliveries[m] = list(zip(map(tuple, d), repeat(None), count(1)))
            else:
                h.deliveries[m] = [((x[0], x[1]), None, k) for k, x in enumerate(d, start=1)]
        return h

    def members(self) -> list:
        return sorted(set(self.nodes) | set(self.deliveries) | set(self.views) | set(self.flush), key=str)

    def upto(self, k: int) -> "History":
        """This history with the deliveries at positions up to ``k`` (the
        rest whole: sends, views, kills), as a replay holds it after the
        record at ``k``."""
        return replace(self, deliveries=defaultdict(list, {m: [d for d in ds if d[2] <= k]
                                                           for m, ds in self.deliveries.items()}))

    def left(self) -> set:
        """Members whose last installed view leaves them out (a graceful leave)."""
        return {m for m, vs in self.views.items() if vs and m not in vs[-1][1]}

    def survivors(self) -> list:
        gone = self.crashed | self.left()
        return [m for m in self.members() if m not in gone]


def joined_views(h: History, members=None) -> dict:
    """member -> the view it joined in, for members that were not in the
    run's first view (the view with the smallest id any member installed);
    members of the first view, or every member when no view is logged, are
    absent (they owe every message)."""
    if h.joined is not None:
        return h.joined
    initial = _first_view(h)
    if initial is None:
        return {}
    return {m: h.views[m][0][0] for m in (h.members() if members is None else members)
            if m not in initial and h.views.get(m)}


def _first_view(h: History) -> Optional[set]:
    """The members of the view with the smallest id any member installed (None: no view logged)."""
    firsts = [vs[0] for vs in h.views.values() if vs]
    return set(min(firsts, key=lambda v: v[0])[1]) if firsts else None


def never_joined(h: History) -> set:
    """Members outside the run's first view that installed no view (a
    joiner that never got in: no member, it owes nothing); none when no
    view is logged or a binding says who joined."""
    initial = None if h.joined is not None else _first_view(h)
    if initial is None:
        return set()
    return {m for m in h.members() if m not in initial and not h.views.get(m)}


@dataclass
class Violation:
    """A property's witness as data.  ``events``: the witnessing events in
    diagram order, each ``{"member", "what", "msg", "view", "index"}``
    (``what`` defaults to deliver; ``index`` the position in the history)."""
    property: str
    reason: str
    members: list = field(default_factory=list)
    messages: list = field(default_factory=list)
    events: list = field(default_factory=list)
    # the witness where the property first broke, in the history's order
    # (``earliest``), when it is not this one (the first in member order)
    first_broken: Optional[str] = None
    # under a history check's name (``renamed``), the catalogue's property it
    # witnesses (the check SenderFIFO reports GapFreeFIFO's gaps too): what a
    # documented finding's witness is matched on
    catalogue: Optional[str] = None

    # the history checker's and the audit's names for the same fields
    @property
    def check(self) -> str:
        return self.property

    @property
    def text(self) -> str:
        return self.reason

    def __str__(self) -> str:
        return f"{self.property}: {self.reason}"

    def renamed(self, name: str) -> "Violation":
        return replace(self, property=name, catalogue=self.catalogue or self.property)

    def to_json(self) -> dict:
        """The violation as data; conformance/audit/diagram.py ``violation_json``
        adds its drawing."""
        return {"check": self.property, "property": self.catalogue or self.property, "text": self.reason,
                "members": self.members,
                "messages": [list(m) for m in self.messages], "events": self.events}


def _ev(member, msg, view=None, index=None, what=None) -> dict:
    e = {"member": member, "msg": None if msg is None else list(msg), "view": view, "index": index}
    if what is not None:
        e["what"] = what
    return e


# ---------------------------------------------------------------- per-member properties

_msg = itemgetter(0)


def _ids(h: History, m) -> list:
    """The messages ``m`` delivered, in its order, repeats kept."""
    return list(map(_msg, h.deliveries.get(m, ())))


def integrity(h: History) -> Optional[Violation]:
    """Integrity: a member delivers only messages that were sent."""
    for m in h.members():
        for msg, vid, i in h.deliveries.get(m, ()):
            if msg not in h.sent:
                return Violation("Integrity", f"member {m} delivered {fmt(msg)}, which member {msg[0]} "
                                 f"never sent", [m], [msg], [_ev(m, msg, vid, i)])
            if m == msg[0] and h.sent_at.get(msg, 0) > i:     # its own: the send is in the same log
                j = h.sent_at[msg]
                return Violation("Integrity", f"member {m} delivered its own {fmt(msg)} (event {i}) before "
                                 f"it sent it (event {j})", [m], [msg],
                                 [_ev(m, msg, vid, i), _ev(m, msg, None, j, what="send")])
    return None


def no_duplicates(h: History) -> Optional[Violation]:
    """NoDuplicates: no member delivers a message twice."""
    for m in h.members():
        ids = _ids(h, m)
        if len(set(ids)) == len(ids):
            continue
        seen = set()
        for msg, vid, i in h.deliveries.get(m, ()):
            if msg in seen:
                return Violation("NoDuplicates", f"member {m} delivered {fmt(msg)} twice", [m], [msg],
                                 [_ev(m, msg, vid, i)])
            seen.add(msg)
    return None


def _fifo(h: History, gap_free: bool) -> Optional[Violation]:
    """The first delivery, in member order, that breaks a sender's order
    (``gap_free`` False) or, from a sender never killed, is not the one
    after the last (1 first; a joiner's first one may be any: what came
    before was delivered in views it was not in)."""
    return next(fifo_breaks(h, gap_free), None)


def fifo_breaks(h: History, gap_free: bool):
    """Every delivery, in member order, that breaks SenderFIFO (``gap_free``
    False) or GapFreeFIFO, each as its Violation (``_fifo`` takes the first;
    a finding's witness reads them all)."""
    joined = joined_views(h) if gap_free else {}
    for m in h.members():
        seen, last = set(), {}
        for msg, vid, i in h.deliveries.get(m, ()):
            if msg in seen:
                continue
            seen.add(msg)
            x, q = msg
            prev, last[x] = last.get(x), q
            if not gap_free:
                if prev is not None and q <= prev:
                    yield Violation("SenderFIFO", f"member {m} delivered {fmt(msg)} after {fmt((x, prev))}",
                                    [m], [(x, prev), msg], [_ev(m, msg, vid, i)])
                continue
            due = (q if joined.get(m) else 1) if prev is None else prev + 1
            if x not in h.crashed and q != due:
                after = fmt((x, prev)) if prev is not None else "nothing"
                why = f"skipping {fmt((x, due))}" if q > due else f"where {fmt((x, due))} was due"
                yield Violation("GapFreeFIFO", f"member {m} delivered {fmt(msg)} after {after} of member {x}, "
                                f"{why} (member {x} was never killed)", [m], [(x, due), msg], [_ev(m, msg, vid, i)])


def sender_fifo(h: History) -> Optional[Violation]:
    """SenderFIFO: a member delivers each sender's messages in increasing order."""
    return _fifo(h, False)


def gap_free_fifo(h: History) -> Optional[Violation]:
    """GapFreeFIFO: of a sender never killed, a member delivers 1, 2, ...
    with no gap (a joiner from its first one on)."""
    return _fifo(h, True)


def crash_stop(h: History) -> Optional[Violation]:
    """CrashStop: a member killed takes no step after its crash record: it
    sends, delivers and installs nothing at a later position (judged where
    the history orders the crash with the member's events: ``crashed_at``).
    The failure model every protocol here assumes (crash-stop): a history
    that breaks it shows a member the run says was dead acting."""
    for m in sorted(h.crashed_at, key=str):
        k = h.crashed_at[m]
        late = [(i, "send", msg, h.sent_view.get(msg)) for msg, i in h.sent_at.items() if msg[0] == m and i > k]
        late += [(i, "deliver", msg, vid) for msg, vid, i in h.deliveries.get(m, ()) if i > k]
        late += [(i, "view", None, vid) for vid, _, i in h.views.get(m, ()) if i > k]
        if late:
            i, what, msg, vid = min(late, key=lambda x: x[0])
            text = f"{what} {fmt(msg)}" if msg is not None else f"view {vid}"
            return Violation("CrashStop", f"member {m} logged {text} (event {i}) after its crash (event {k})",
                             [m], [msg] if msg is not None else [],
                             [_ev(m, None, index=k, what="crash"), _ev(m, msg, vid, i, what=what)])
    return None


# ---------------------------------------------------------------- total order

def _firsts(h: History, m) -> list:
    seen, out = set(), []
    for d in h.deliveries.get(m, ()):
        if d[0] not in seen:
            seen.add(d[0])
            out.append(d)
    return out


def _total_order(h: History, members: list, name: str) -> Optional[Violation]:
    """The first pair a < b whose first deliveries of their common messages
    come in different orders; the witness is the first place they differ:
    a delivered x before y, b delivered y before x."""
    if _total_order_holds(h, members):
        return None
    firsts = {m: _firsts(h, m) for m in members}
    ids = {m: {d[0] for d in firsts[m]} for m in members}
    for ia, a in enumerate(members):
        for b in members[ia + 1:]:
            pa = [d for d in firsts[a] if d[0] in ids[b]]
            pb = [d for d in firsts[b] if d[0] in ids[a]]
            for da, db in zip(pa, pb):
                if da[0] != db[0]:
                    x, y = da[0], db[0]
                    ay = next(d for d in pa if d[0] == y)
                    bx = next(d for d in pb if d[0] == x)
                    return Violation(name, f"member {a} delivered {fmt(x)} before {fmt(y)}, member {b} "
                                     f"delivered {fmt(y)} before {fmt(x)}", [a, b], [x, y],
                                     [_ev(a, x, da[1], da[2]), _ev(a, y, ay[1], ay[2]),
                                      _ev(b, y, db[1], db[2]), _ev(b, x, bx[1], bx[2])])
    return None


def _total_order_holds(h: History, members: list) -> bool:
    """The screen of ``_total_order``: no member repeats a delivery and, of
    each pair, the shorter sequence is a prefix of the longer (then their
    common messages are the shorter's, in its order in both)."""
    ids = [_ids(h, m) for m in members]
    if any(len(set(x)) != len(x) for x in ids):
        return False
    for ia, a in enumerate(ids):
        for b in ids[ia + 1:]:
            short, long_ = (a, b) if len(a) <= len(b) else (b, a)
            if long_[:len(short)] != short:
                return False
    return True


def total_order(h: History) -> Optional[Violation]:
    """TotalOrder (uniform): any two members, killed ones included, deliver
    their common messages in one order."""
    return _total_order(h, h.members(), "TotalOrder")


def survivor_total_order(h: History) -> Optional[Violation]:
    """SurvivorTotalOrder: the same among members never killed."""
    return _total_order(h, [m for m in h.members() if m not in h.crashed], "SurvivorTotalOrder")


# ---------------------------------------------------------------- end of run

def agreement(h: History) -> Optional[Violation]:
    """Agreement, at a quiescent end: survivors delivered the same set (a
    joiner from its join view on), and every message a member never killed
    sent was delivered by a survivor."""
    return next(agreement_breaks(h), None)


def agreement_breaks(h: History):
    """Every Agreement break, each as its Violation: each message one
    survivor delivered and another did not (per pair with the first
    survivor), then each message of a member never killed that no survivor
    delivered (``agreement`` takes the first; a finding's witness reads all)."""
    survivors = h.survivors()
    if h.quiescent is False or not survivors:
        return
    joined = joined_views(h)

    def got(m, since):      # what m delivered in views from ``since`` on
        return {d[0] for d in h.deliveries.get(m, ()) if (d[1] or 0) >= since}
    base = survivors[0]
    for m in survivors[1:]:
        since = max(joined.get(base, 0), joined.get(m, 0))
        a, b = got(base, since), got(m, since)
        for diff in sorted(a ^ b):
            has, lacks = (base, m) if diff in a else (m, base)
            yield Violation("Agreement", f"survivor {has} delivered {fmt(diff)}, survivor {lacks} did not",
                            [has, lacks], [diff], [_ev(has, diff)])
    anyone = set().union(*(got(m, 0) for m in survivors))
    for msg in sorted(h.sent):
        if msg[0] not in h.crashed and msg not in anyone:
            yield Violation("Agreement", f"member {msg[0]} (never killed) sent {fmt(msg)}; no survivor "
                            f"delivered it", [msg[0]], [msg], [_ev(msg[0], msg, what="send")])


def eventual_delivery(h: History) -> Optional[Violation]:
    """EventualDelivery (Sequencer.tla), at a quiescent end: every message
    sent by a member never killed is delivered by every member never killed
    (a joiner owes what was sent from its join view on, when the view a
    message was sent in is known; a joiner that never got in owes nothing).
    The witness names the view a message was sent in when some member
    joined (it is why the others owe it)."""
    return next(missing_deliveries(h, screen=True), None)


def missing_deliveries(h: History, screen: bool = False):
    """Every message EventualDelivery finds missing, in message order, each
    as its Violation (the members that lack it); ``screen``: first the
    whole-set test that passes when nothing is missing."""
    if h.quiescent is False:
        return
    out = never_joined(h)
    live = [m for m in h.members() if m not in h.crashed and m not in out]
    have = {m: set(_ids(h, m)) for m in live}
    live_set, joined = set(live), joined_views(h)
    if screen:
        owed = [msg for msg in h.sent if msg[0] in live_set]
        if all(have[r].issuperset(owed) for r in live):        # every member owes at most that
            return
    for msg in sorted(h.sent):
        if msg[0] not in live_set:
            continue
        v = h.sent_view.get(msg)
        lacking = [r for r in live if msg not in have[r] and (v is None or joined.get(r, v) <= v)]
        if lacking:
            when = "" if v is None or not joined else f" in view {v}"
            yield Violation("EventualDelivery", f"member {msg[0]} (alive) sent {fmt(msg)}{when}; members "
                            f"{lacking} (alive) never delivered it", [msg[0]] + lacking, [msg],
                            [_ev(msg[0], msg, v, what="send")])


# ---------------------------------------------------------------- views and flushes

def moved_together(h: History) -> dict:
    """(V, V') -> [(member, its deliveries by view)] for the members that
    moved from view V straight to V', in member order."""
    moved: dict = {}
    for m in h.members():
        vs = h.views.get(m, [])
        if len(vs) < 2:
            continue
        per_view = defaultdict(set)
        for msg, vid, _ in h.deliveries.get(m, ()):
            per_view[vid].add(msg)
        for (v, _, _), (v2, _, _) in zip(vs, vs[1:]):
            moved.setdefault((v, v2), []).append((m, per_view))
    return moved


def virtual_synchrony(h: History) -> Optional[Violation]:
    """VirtualSynchrony: members that move together from view V to V'
    delivered the same set in V."""
    for (v, v2), rows in moved_together(h).items():
        m0, s0 = rows[0][0], rows[0][1].get(v, set())
        for m, per_view in rows[1:]:
            s = per_view.get(v, set())
            if s != s0:
                diff = sorted(s ^ s0)[0]
                has, lacks = (m0, m) if diff in s0 else (m, m0)
                return Violation("VirtualSynchrony", f"members {m0} and {m} both moved from view {v} to "
                                 f"{v2}; {has} delivered {fmt(diff)} in view {v}, {lacks} did not",
                                 [has, lacks], [diff], [_ev(has, diff, v)])
    return None


def flush_letters(letters: list, may_stop_blocked: bool):
    """The automaton of ``([b][vgs]*[u])+`` after the join views; None when
    accepted, else (position, reason)."""
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
    if inside and not may_stop_blocked:
        return len(letters), "ends blocked"
    return None


def flush_event_order(h: History) -> Optional[Violation]:
    """FlushEventOrder: per member that blocks, JGroups's FlushTest pattern
    ``([b][vgs]*[u])+``; a killed member, or one that left, may stop inside
    a block."""
    left = h.left()
    for m in h.members():
        letters = h.flush.get(m, [])
        if "b" not in letters and "u" not in letters:
            continue
        bad = flush_letters(letters, m in h.crashed or m in left)
        if bad is not None:
            k, why = bad
            return Violation("FlushEventOrder", f"member {m}: {why} (events {''.join(letters)})", [m], [],
                             [_ev(m, None, index=k, what=letters[k] if k < len(letters) else "end")])
    return None


# ---------------------------------------------------------------- the catalogue

@dataclass(frozen=True)
class Property:
    name: str
    judge: Callable[[History], Optional[Violation]]
    end_of_run: bool = False       # judged only at a quiescent end


CATALOGUE = {p.name: p for p in (
    Property("Integrity", integrity),
    Property("CrashStop", crash_stop),
    Property("NoDuplicates", no_duplicates),
    Property("SenderFIFO", sender_fifo),
    Property("GapFreeFIFO", gap_free_fifo),
    Property("TotalOrder", total_order),
    Property("SurvivorTotalOrder", survivor_total_order),
    Property("Agreement", agreement, end_of_run=True),
    Property("EventualDelivery", eventual_delivery, end_of_run=True),
    Property("VirtualSynchrony", virtual_synchrony),
    Property("FlushEventOrder", flush_event_order),
)}


def first_breaking(at: list, breaks) -> Optional[int]:
    """The first of the sorted positions ``at`` whose prefix ``breaks``
    (a safety property: a prefix that breaks it stays broken, so the
    positions bisect), or None when not even the last one's does."""
    if not at or not breaks(at[-1]):
        return None
    lo, hi = 0, len(at) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if breaks(at[mid]):
            hi = mid
        else:
            lo = mid + 1
    return at[lo]


def earliest(h: History, v: Violation) -> Violation:
    """``v``'s property judged on the shortest prefix of ``h`` that breaks
    it (positions in the history's order: a history read from records holds
    one order for all members): the witness where it first broke, which a
    replay that judges record by record reports, where ``judge`` gives the
    first in member order.  Safety properties only (a prefix of a history
    that breaks one breaks it; an end-of-run property has no prefix)."""
    judge_ = CATALOGUE[v.property].judge
    k = first_breaking(sorted({d[2] for ds in h.deliveries.values() for d in ds}),
                       lambda k: judge_(h.upto(k)) is not None)
    return v if k is None else judge_(h.upto(k))


def judge(h: History, names: Iterable[str]) -> list[Violation]:
    """The violated ones of ``names``, in that order, each with its witness."""
    out = []
    for n in names:
        v = CATALOGUE[n].judge(h)
        if v is not None:
            out.append(v)
    return out


def first(h: History, names: Iterable[str]) -> Optional[Violation]:
    """The first of ``names``, in that order, that ``h`` violates (a replay
    reports one)."""
    for n in names:
        v = CATALOGUE[n].judge(h)
        if v is not None:
            return v
    return None


# The name a replay reports -> the property here that sees it on the history.
SEEN_AS = {"TotalOrder": "TotalOrder", "EventualDelivery": "Agreement", "VirtualSynchrony": "VirtualSynchrony",
           "NoDuplicates": "NoDuplicates", "Integrity": "Integrity", "SenderFIFO": "SenderFIFO",
           "GapFreeFIFO": "GapFreeFIFO", "FlushEnds": "FlushEventOrder", "SurvivorTotalOrder": "SurvivorTotalOrder",
           "Flush.VirtualSynchrony": "VirtualSynchrony"}
