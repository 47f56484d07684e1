"""Sequence diagrams of counterexamples and of non-conforming runs.

Theory of operation
-------------------
A TLC counterexample is a list of (action, state) pairs; TLC does not say who
acted or which message moved, so both are read off the state change, using
only the shape the specs share (spec/README.md): members are 1..N; a *per-member*
variable is a function on members (a tuple of length N once normalised, or a
function whose domain is a set of members); a *channel* variable is a
function on pairs <<p, q>> of members whose values are sequences.  At each
step the actors are the members whose entry of some per-member variable
changed; a channel that grew carries a message from p to q, one that lost its
head lost one for q (FIFO, so the k-th message out is the k-th in, and the
space-time diagram can draw the arrow from its send to its end); a *message
bag* is a set of records naming a sender and a receiver (fields
``from``/``src``/``sender``/``cur`` and ``to``/``dst``/``dest``): a record
that appears is a send, one that disappears has left the network.

A message that left is a *receipt* only when its receiver acted in the same
step (an entry of a per-member variable of q changed, or q sent) and did not
enter a set of members (``crashed``); otherwise it was *lost*: dropped by a
crash (Sequencer's ``Crash`` empties the channels to the crashed member), a
fault (STABLE's ``LoseMessage``), a failed delivery (Raincore's
``TokenDeliveryFailure``), or taken and discarded without effect.  Its label
says "lost (no effect at q)", true of all four, and it is drawn ending in a
cross at the step that lost it, never as a receipt.  A variable holding a
set of members makes the members that enter or leave it actors.  Every
variable that changed is listed in the step's note in full (per-member ones
as ``var[m]``); renderers wrap it, never cut it.

The last state of a counterexample is the violating one: its step is marked
(``Step.bad`` and ``mark``: the property, or where a liveness lasso loops
back), and so are its actors, the members whose change broke the property.
A member that enters a set named for crashes (``crashed``) or whose
``status`` becomes ``Down`` crashes at that step (``CRASH_SETS``,
``CRASH_VALUES``); a variable named for views (``views``, ``view[m]``)
taking or appending a set of members installs that view.

One model of a run
------------------
Every diagram is drawn from the same ``Step`` list, whatever it came from:
a TLC counterexample (``steps_from_states``), an implementation trace
(``steps_from_events``), a black-box history (``steps_from_history``).  A
step is one row; it has its acting members, the messages it sends
(``Arrow``: sender, receiver, the row of its send, and the row of its
receipt, or the row that lost it, or ``never`` when it was never received
by the end), the members that crash in it and the view it installs.
``events`` lists the same as data (member, kind, message id).

A trace's events name their actor (``nid``) but not the send a receipt
takes: a receipt (a message with its sender in ``params`` ``p``/``q``/``c``,
or a ring message whose ``cur`` is the sender and ``dest`` the actor) is
linked to the sender's earliest event that sent the same message (every
field the two share but the receiver's, ``type`` included) not yet taken by
that receiver; else to the sender's earliest event that handled the same
message id (SEQUENCER's coordinator sends DATA at the RecvForward that took
its FORWARD); else, where the protocol logs no send (the ring's token), to
the sender's last event before the receipt (``Arrow.inferred``).  A ring
message that came back undelivered (``...DeliveryFailure``) or was lost
(``TokenLoss``) is a lost arrow.  A violation's witness names messages
that members never received (``missing``; received means a receipt of a
DATA message of that id: SEQUENCER's FORWARD only reaches the coordinator):
each is an arrow from its send to a cross on that member's line at the last
row.  A view named by an event (``_views``) is banded where it first
appears.  A history's deliveries
are linked to their ``send`` record by message id.

Drawing
-------
``mermaid`` renders the steps as a Mermaid sequenceDiagram (for report.md:
GitHub and GitLab draw it).  Mermaid has no arrows that span time, so it
draws each message at its receipt (naming the step of its send), a lost one
as a crossed arrow at the step that lost it, one never received as a
crossed arrow at the end, one still in flight at the end as a crossed arrow
at its send.  ``svg`` draws a self-contained SVG space-time diagram (for
report.html: no script, no network): each arrow runs from the dot of its
send to its receipt, or to a cross; a crashed member's line ends at its
crash, under a mark; a view is a band across its members.  ``cut`` keeps a
long run's rows around the witness (the bad rows, the sends of what they
receive, crashes), each gap marked with the number of steps left out.
``cti`` draws a counterexample to induction: the pre-state and post-state
as one table of the variables that differ, and the step between them.
"""

from __future__ import annotations

import textwrap
from bisect import bisect_left
from dataclasses import dataclass, field
from html import escape
from typing import Any, Iterable, Optional

from groupcheck.conformance.audit.report import Diagram
from groupcheck.core.properties import fmt as _fmt_msg
from groupcheck.model.values import Fn, to_tla


@dataclass
class Arrow:
    """One message of the run: from ``src``'s step ``sent_at`` to ``dst``'s
    step ``received_at``, or lost at step ``lost_at`` (``never``: it was
    still not received at the last step, where ``lost_at`` points)."""
    src: int
    dst: int
    label: str
    sent_at: int                    # step index of the send
    received_at: Optional[int] = None
    lost_at: Optional[int] = None   # step that dropped it (a crash, a fault), or the last one (``never``)
    never: bool = False             # never received by the end of the run
    inferred: bool = False          # the run logs no send: sent at the sender's last step before the receipt


@dataclass
class Step:
    index: int                      # 1-based, as in the numbered counterexample
    action: str
    actors: list[int]
    note: str = ""
    sends: list[Arrow] = field(default_factory=list)
    bad: bool = False               # the violating step (a run stops conforming, a property fails)
    mark: str = ""                  # what is wrong at a bad step, in words
    crashed: list[int] = field(default_factory=list)   # members that crash here: their line ends
    view: Optional[list[int]] = None                   # the members of a view installed here
    hidden: int = 0                 # a cut: this many steps left out here (``cut``); no action of its own


def wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters (long words split)."""
    return textwrap.wrap(" ".join(str(text).split()), width, break_long_words=True,
                         break_on_hyphens=False) or [""]


# a set of members whose name holds one of these words is the crashed ones;
# a per-member value among CRASH_VALUES is a crashed member (Raincore's status)
CRASH_SETS = ("crash",)
CRASH_VALUES = ("Down",)
_SRC_KEYS = ("from", "src", "sender", "source", "cur")
_DST_KEYS = ("to", "dst", "dest", "receiver")


def _bag(value: Any) -> Optional[set]:
    if isinstance(value, frozenset) and all(isinstance(r, Fn) for r in value):
        return set(value)
    return None


def _ends(rec: Fn, members: set[int]) -> Optional[tuple[int, int]]:
    d = dict(rec.items())
    src = next((d[k] for k in _SRC_KEYS if isinstance(d.get(k), int) and d[k] in members), None)
    dst = next((d[k] for k in _DST_KEYS if isinstance(d.get(k), int) and d[k] in members), None)
    return None if src is None or dst is None else (src, dst)


def _per_member(value: Any, members: set[int]) -> Optional[dict[int, Any]]:
    if isinstance(value, tuple) and len(value) == len(members) and members == set(range(1, len(members) + 1)):
        return {i + 1: v for i, v in enumerate(value)}
    if isinstance(value, Fn) and value and all(isinstance(k, int) and k in members for k in value.keys()):
        return dict(value.items())
    return None


def _channels(value: Any, members: set[int]) -> Optional[dict[tuple[int, int], tuple]]:
    if not isinstance(value, Fn) or not value:
        return None
    out = {}
    for k, v in value.items():
        if not (isinstance(k, tuple) and len(k) == 2 and all(isinstance(x, int) and x in members for x in k)):
            return None
        if not isinstance(v, tuple):
            return None
        out[k] = v
    return out


def _member_set(value: Any, members: set[int]) -> Optional[frozenset]:
    if isinstance(value, frozenset) and all(isinstance(x, int) and x in members for x in value):
        return value
    return None


def steps_from_states(trace: list[tuple[Optional[str], dict[str, Any]]], n_members: int, *,
                      violated: Optional[str] = None, loop_index: Optional[int] = None) -> list[Step]:
    """Steps of a counterexample (action, state) list; the first state is Init.
    ``violated``: the property TLC reported, marked at the last step;
    ``loop_index``: for a liveness lasso, the 0-based state it returns to."""
    members = set(range(1, n_members + 1))
    steps: list[Step] = []
    queues: dict[tuple[int, int], list[Arrow]] = {}
    in_bag: dict[tuple[str, Fn], Arrow] = {}
    prev: Optional[dict[str, Any]] = None
    for i, (action, state) in enumerate(trace, 1):
        if prev is None:                # messages in flight in the initial state: sent at Init
            steps.append(_init_step(i, state, members, queues, in_bag))
            prev = state
            continue
        actors: set[int] = set()
        changed = []
        left: list[tuple[Arrow, int]] = []    # (message, receiver) that left the network here
        changed_members: set[int] = set()     # members with a per-member entry changed
        entered: set[int] = set()             # members that entered a set of members (crashed)
        step = Step(i, action or "?", [])
        for var, cur in state.items():
            old = prev.get(var)
            if old == cur:
                continue
            ch_cur, ch_old = _channels(cur, members), _channels(old, members)
            if ch_cur is not None and (ch_old is not None or not old):
                ch_old = ch_old or {}
                for key in set(ch_cur) | set(ch_old):
                    a, b = ch_old.get(key, ()), ch_cur.get(key, ())
                    p, q = key
                    if len(b) > len(a) and b[: len(a)] == a:          # appended
                        for msg in b[len(a):]:
                            arrow = Arrow(p, q, to_tla(msg), sent_at=i)
                            step.sends.append(arrow)
                            queues.setdefault(key, []).append(arrow)
                        actors.add(p)
                    elif len(b) < len(a) and a[len(a) - len(b):] == b:  # taken from the head
                        for _ in range(len(a) - len(b)):
                            q_ = queues.get(key)
                            if q_:
                                left.append((q_.pop(0), q))
                    elif a != b:                                         # both, or rewritten
                        actors.update((p, q))
                        changed_members.update((p, q))
                        changed.append(f"{var}[{p}, {q}] = {to_tla(b)}")
                continue
            bag_cur, bag_old = _bag(cur), _bag(old)
            if bag_cur is not None and bag_old is not None:
                for rec in sorted(bag_cur - bag_old, key=to_tla):
                    ends = _ends(rec, members)
                    if ends is None:
                        changed.append(f"{var} gains {to_tla(rec)}")
                        continue
                    arrow = Arrow(ends[0], ends[1], to_tla(rec), sent_at=i)
                    step.sends.append(arrow)
                    in_bag[(var, rec)] = arrow
                    actors.add(ends[0])
                for rec in sorted(bag_old - bag_cur, key=to_tla):
                    arrow = in_bag.pop((var, rec), None)
                    if arrow is not None:
                        left.append((arrow, arrow.dst))
                    else:
                        changed.append(f"{var} loses {to_tla(rec)}")
                continue
            ms_cur, ms_old = _member_set(cur, members), _member_set(old, members)
            if ms_cur is not None and ms_old is not None:           # e.g. crashed' = crashed \cup {m}
                actors.update(ms_cur ^ ms_old)
                entered.update(ms_cur - ms_old)
                if any(w in var.lower() for w in CRASH_SETS):
                    step.crashed += sorted(ms_cur - ms_old)
                elif "view" in var.lower() and ms_cur:
                    step.view = sorted(ms_cur)
                changed.append(f"{var} = {to_tla(cur)}")
                continue
            pm_cur, pm_old = _per_member(cur, members), _per_member(old, members)
            if pm_cur is not None and pm_old is not None:
                for m in sorted(members):
                    if pm_cur.get(m) != pm_old.get(m):
                        actors.add(m)
                        changed_members.add(m)
                        changed.append(f"{var}[{m}] = {to_tla(pm_cur.get(m))}")
                        if pm_cur.get(m) in CRASH_VALUES:
                            step.crashed.append(m)
                        elif "view" in var.lower() and _member_set(pm_cur.get(m), members):
                            step.view = sorted(pm_cur[m])
                continue
            if "view" in var.lower() and isinstance(cur, tuple) and isinstance(old, tuple) \
                    and len(cur) > len(old) and _member_set(cur[-1], members):     # views' = Append(views, V)
                step.view = sorted(cur[-1])
            changed.append(f"{var} = {to_tla(cur)}")
        # a receipt changes its receiver's state or makes it send, and does not crash it;
        # any other message that left the network was lost
        acted = changed_members | {a.src for a in step.sends}
        for arrow, q in left:
            if q in acted and q not in entered:
                arrow.received_at = i
                actors.add(q)
            else:
                arrow.lost_at = i
        step.actors = sorted(actors)
        step.note = "; ".join(changed)
        steps.append(step)
        prev = state
    if steps and len(steps) > 1:
        _mark_last(steps, violated, loop_index)
    return steps


def _init_step(i: int, state: dict[str, Any], members: set[int], queues: dict, in_bag: dict) -> Step:
    """The Init row: every message in flight in the initial state is sent there."""
    init = Step(i, "Init", [], note="")
    for var, cur in state.items():
        for key, msgs in (_channels(cur, members) or {}).items():
            for msg in msgs:
                arrow = Arrow(key[0], key[1], to_tla(msg), sent_at=i)
                init.sends.append(arrow)
                queues.setdefault(key, []).append(arrow)
        for rec in sorted(_bag(cur) or (), key=to_tla):
            ends = _ends(rec, members)
            if ends is not None:
                arrow = Arrow(ends[0], ends[1], to_tla(rec), sent_at=i)
                init.sends.append(arrow)
                in_bag[(var, rec)] = arrow
    return init


def _mark_last(steps: list[Step], violated: Optional[str], loop_index: Optional[int]) -> None:
    """The last step is the violating one; a liveness lasso says where it returns."""
    last = steps[-1]
    last.bad = True
    if loop_index is not None and 0 <= loop_index < len(steps) - 1:
        last.mark = (f"{violated} fails: from here the behaviour returns to step {loop_index + 1} forever"
                     if violated else f"from here the behaviour returns to step {loop_index + 1} forever")
    elif loop_index is not None:
        last.mark = f"{violated} fails: the behaviour stops here forever" if violated else "stops here forever"
    else:
        last.mark = f"{violated} is violated in this state" if violated else "the violating state"


# the type of the messages that carry a multicast to the members that deliver it (SEQUENCER's
# FORWARD only takes it to the coordinator): a member that received none of a message's id lacks it
DATA_TYPE = "DATA"
# the params that name the sender of the message a receive action takes (the schemas' names)
SENDER_PARAMS = ("p", "q", "c")
# a message id: (sender, seqno) under either spelling
_ID_KEYS = (("sender", "seqno"), ("from", "seq"))
_TO_KEYS = ("to", "dest")


def _msg_id(msg: Any) -> Optional[tuple]:
    if isinstance(msg, dict):
        for s, q in _ID_KEYS:
            if isinstance(msg.get(s), int) and isinstance(msg.get(q), int):
                return (msg[s], msg[q])
    return None


def _receipt_sender(ev: dict) -> Optional[int]:
    """The member that sent the message event ``ev`` receives, or None."""
    msg, nid, params = ev.get("msg"), ev.get("nid"), ev.get("params") or {}
    if not isinstance(msg, dict) or not isinstance(nid, int) or _loss(ev):
        return None
    for k in SENDER_PARAMS:
        if isinstance(params.get(k), int):
            return params[k]
    if isinstance(msg.get("cur"), int) and msg.get("dest") == nid and msg["cur"] != nid:
        return msg["cur"]                                   # the ring's token or 911
    return None


def _loss(ev: dict) -> bool:
    """A ring message that came back undelivered or was lost in the network."""
    msg = ev.get("msg")
    return (isinstance(msg, dict) and isinstance(msg.get("cur"), int) and isinstance(msg.get("dest"), int)
            and (str(ev.get("name", "")).endswith("DeliveryFailure") or ev.get("name") == "TokenLoss"))


def _same_message(sent: dict, got: dict) -> bool:
    common = (set(sent) & set(got)) - set(_TO_KEYS)
    return "type" in common and all(sent[k] == got[k] for k in common)


def _msg_text(msg: dict) -> str:
    return " ".join([str(msg.get("type", ""))] + [f"{k}={v}" for k, v in sorted(msg.items()) if k != "type"])


def _views(ev: dict) -> list[list[int]]:
    """The views an event names: the view decided (``params.view``), the
    members a VIEW message carries, the last view of a state variable named
    for views (the ring's ``globalView``, a sequence of views)."""
    msg, state = ev.get("msg"), ev.get("state")
    out = [(ev.get("params") or {}).get("view"), msg.get("members") if isinstance(msg, dict) else None]
    for var, val in (state.items() if isinstance(state, dict) else ()):
        if "view" in var.lower() and isinstance(val, list) and val:
            out.append(val[-1] if isinstance(val[-1], list) else val)
    return [v for v in out if isinstance(v, list) and v and all(type(m) is int for m in v)]


def steps_from_events(events: Iterable[dict], bad_index: Optional[int] = None,
                      mark: str = "the run stops conforming here",
                      missing: Iterable[tuple[int, tuple]] = ()) -> list[Step]:
    """Steps of a trace's events (groupcheck-trace/1 and /2), one row per
    event, each receipt linked to its send (the module's theory).  The
    event ``i == bad_index`` is marked with ``mark``; ``missing``: (member,
    message id) pairs the violation says were never received, each drawn
    from its send to a cross at the last row."""
    evs = list(events)
    steps: list[Step] = []
    taken: set[tuple[int, int]] = set()          # (send step, receiver) already linked
    banded: set = set()
    sends = _Sends(evs)
    for k, ev in enumerate(evs, 1):
        nid = ev.get("nid")
        params = ev.get("params") or {}
        msg = ev.get("msg")
        label = ev["name"] + ("" if not params else "(" + ", ".join(
            f"{k2}={v}" for k2, v in sorted(params.items())) + ")")
        bad = bad_index is not None and ev.get("i") == bad_index
        step = Step(k, label, [nid] if isinstance(nid, int) else [], bad=bad, mark=mark if bad else "")
        if ev.get("name") == "Crash" and isinstance(nid, int):
            step.crashed = [nid]
        view = next((v for v in _views(ev) if tuple(v) not in banded), None)
        if view:
            banded.add(tuple(view))
            step.view = sorted(view)
        p = _receipt_sender(ev)
        src, dst = (p, nid) if p is not None else (msg["cur"], msg["dest"]) if _loss(ev) else (None, None)
        if src is not None:             # a receipt, or a loss: the arrow starts at its send
            j, inferred = sends.find(k, src, dst, msg, taken)
            at = steps[j - 1] if j < k else step        # (no earlier event of the sender: this row)
            taken.add((j, dst))
            at.sends.append(Arrow(src, dst, _msg_text(msg), sent_at=j, inferred=inferred,
                                  **({"received_at": k} if p is not None else {"lost_at": k})))
        steps.append(step)
    for member, mid in missing:         # (a witness names the sender of what others lack: not drawn)
        if member == mid[0]:
            continue
        j = next((n for n, ev in enumerate(evs, 1) if ev.get("nid") == mid[0] and _receipt_sender(ev) is None
                  and _msg_id(ev.get("msg")) == tuple(mid)), None)
        got = any(ev.get("nid") == member and _receipt_sender(ev) is not None and _msg_id(ev.get("msg")) == tuple(mid)
                  and str(ev["msg"].get("type")).upper() == DATA_TYPE for ev in evs)
        if j is not None and not got and steps:
            steps[j - 1].sends.append(Arrow(mid[0], member, f"{mid[0]}.{mid[1]}: {_msg_text(evs[j - 1]['msg'])}",
                                            sent_at=j, lost_at=len(steps), never=True))
    return steps


class _Sends:
    """Where to look for the send of a receipt: each member's events, and
    its events by the message id or (a message without one) the type
    they carry, so that linking a run is linear in its length."""

    def __init__(self, evs: list[dict]):
        self.evs = evs
        self.mine: dict[Any, list[int]] = {}
        self.by_key: dict[tuple, list[int]] = {}
        for n, ev in enumerate(evs, 1):
            self.mine.setdefault(ev.get("nid"), []).append(n)
            key = self._key(ev.get("nid"), ev.get("msg"))
            if key is not None:
                self.by_key.setdefault(key, []).append(n)

    @staticmethod
    def _key(p: Any, msg: Any) -> Optional[tuple]:
        if not isinstance(msg, dict):
            return None
        mid = _msg_id(msg)
        return (p, "id", mid) if mid is not None else (p, "type", msg.get("type"))

    def find(self, k: int, p: int, q: Any, msg: dict, taken: set) -> tuple[int, bool]:
        """The step (1-based) of ``p``'s send of ``msg``, received by ``q``
        at step ``k``, and whether it is inferred (the module's theory)."""
        cands = [n for n in self.by_key.get(self._key(p, msg), ()) if n < k]
        sends = [n for n in cands if _receipt_sender(self.evs[n - 1]) is None
                 and _same_message(self.evs[n - 1]["msg"], msg)]
        handled = cands if _msg_id(msg) is not None else []
        for found in (sends, handled):
            free = [n for n in found if (n, q) not in taken]
            if free or found:
                return (free or found)[0], False
        mine = self.mine.get(p, [])
        before = mine[:bisect_left(mine, k)]
        return (before[-1], True) if before else (k, True)


def steps_from_history(h, violation=None) -> list[Step]:
    """Steps of a black-box history (conformance/history.py ``History``),
    one row per send, delivery, view and crash at its position (the
    ``index`` a witness event names): each delivery an arrow from its send,
    each view first installed a band, each crash the end of its member's
    line.  ``violation`` (properties.Violation): its witness events are
    marked, and each message it names that a member it names never
    delivered is an arrow to a cross on that member's line at the last row."""
    rows: list[tuple[int, str, int, Any]] = []
    for msg, pos in h.sent_at.items():
        rows.append((pos, "send", msg[0], msg))
    for m, ds in h.deliveries.items():
        rows += [(pos, "deliver", m, msg) for msg, _, pos in ds]
    for m, vs in h.views.items():
        rows += [(pos, "view", m, (vid, members)) for vid, members, pos in vs]
    for m, (_, pos) in getattr(h, "_crash_in", {}).items():
        rows.append((pos, "crash", m, None))
    steps: list[Step] = []
    sent: dict[tuple, Step] = {}
    delivered: set = set()
    banded: set = set()
    for pos, kind, m, x in sorted(rows, key=lambda r: (r[0], r[1])):
        step = Step(pos, kind, [m])
        if kind in ("send", "deliver"):
            step.action = f"{kind} {x[0]}.{x[1]}"
        if kind == "send":
            sent.setdefault(x, step)
        elif kind == "deliver":
            delivered.add((m, x))
            if x in sent and x[0] != m:
                sent[x].sends.append(Arrow(x[0], m, f"{x[0]}.{x[1]}", sent_at=sent[x].index, received_at=pos))
        elif kind == "view":
            step.action = f"view {x[0]} {{{', '.join(map(str, x[1]))}}}"
            if x not in banded:
                banded.add(x)
                step.view = sorted(x[1])
        else:
            step.crashed = [m]
        steps.append(step)
    if violation is not None and steps:
        at = {e.get("index") for e in violation.events if e.get("index") is not None}
        for s in steps:
            if s.index in at or (not at and s is steps[-1]):
                s.bad, s.mark = True, str(violation)
        lacking: dict[tuple, list] = {}
        for m in violation.members:
            for mid in map(tuple, violation.messages):
                if m != mid[0] and (m, mid) not in delivered and mid in sent:
                    sent[mid].sends.append(Arrow(mid[0], m, f"{mid[0]}.{mid[1]}", sent_at=sent[mid].index,
                                                 lost_at=steps[-1].index, never=True))
                    lacking.setdefault(mid, []).append(m)
        for mid, ms in lacking.items():             # the send of a message some member never delivered
            if not sent[mid].bad:
                sent[mid].bad = True
                sent[mid].mark = f"{violation.property}: never delivered by {', '.join(map(str, ms))}"
    return steps


def events(steps: list[Step]) -> list[dict]:
    """The run as data, one event per member and step: ``kind`` is send,
    receive, lost, crash, view or step (any other action); ``message`` the
    index of the message (in send order) it sends or receives."""
    ids = {id(a): n for n, a in enumerate((a for s in steps for a in s.sends), 1)}
    got: dict[int, list[Arrow]] = {}
    for s in steps:
        for a in s.sends:
            got.setdefault(a.received_at, []).append(a)
    out = []
    for s in steps:
        if s.hidden:
            continue
        out += [{"step": s.index, "member": a.src, "kind": "send", "message": ids[id(a)], "to": a.dst}
                for a in s.sends]
        out += [{"step": s.index, "member": a.dst, "kind": "receive", "message": ids[id(a)], "from": a.src}
                for a in got.get(s.index, [])]
        out += [{"step": s.index, "member": m, "kind": "crash"} for m in s.crashed]
        if s.view:
            out.append({"step": s.index, "member": None, "kind": "view", "members": s.view})
        busy = {a.src for a in s.sends} | {a.dst for a in got.get(s.index, [])} | set(s.crashed)
        out += [{"step": s.index, "member": m, "kind": "step", "action": s.action}
                for m in s.actors if m not in busy]
    return out


MAX_ROWS = 40       # a run with more steps is cut around its witness (``cut``)
BEFORE, AFTER = 14, 3


def cut(steps: list[Step], max_rows: int = MAX_ROWS) -> list[Step]:
    """``steps`` itself when at most ``max_rows``; else the rows around the
    witness: BEFORE rows up to each bad step and AFTER rows past it (the
    last rows when none is bad), the rows that send what a kept row
    receives or loses, every crash, and the last row when a message was
    never received.  Each gap becomes a ``Step`` with ``hidden`` = the
    number of steps left out."""
    if len(steps) <= max_rows:
        return steps
    pos = {s.index: k for k, s in enumerate(steps)}
    focus = [k for k, s in enumerate(steps) if s.bad] or [len(steps) - 1]
    keep = {k for f in focus for k in range(max(0, f - BEFORE), min(len(steps), f + AFTER + 1))}
    keep |= {k for k, s in enumerate(steps) if s.crashed}
    for a in (a for s in steps for a in s.sends):
        if a.never:
            keep |= {pos[a.sent_at], pos[a.lost_at]}
    for a in (a for s in steps for a in s.sends):
        end = a.received_at if a.received_at is not None else a.lost_at
        if end is not None and pos.get(end) in keep:
            keep.add(pos[a.sent_at])
    out: list[Step] = []
    gap = 0
    for k, s in enumerate(steps):
        if k in keep:
            if gap:
                out.append(Step(steps[k - gap].index, "", [], hidden=gap))
            gap = 0
            out.append(s)
        else:
            gap += 1
    if gap:
        out.append(Step(steps[len(steps) - gap].index, "", [], hidden=gap))
    return out


def participants(steps: list[Step], n_members: Optional[int] = None) -> list[int]:
    seen = set(range(1, (n_members or 0) + 1))
    for s in steps:
        seen.update(s.actors)
        seen.update(s.crashed)
        seen.update(s.view or ())
        for a in s.sends:
            seen.update((a.src, a.dst))
    return sorted(seen)


def _mm(text: str) -> str:
    """Mermaid-safe text: no statement separators, comment markers or arrows."""
    for a, b in ((";", ","), ("#", "No."), ("<<", "⟨"), (">>", "⟩"), ("|->", "↦"), ("->", "→"), ("%%", "%"),
                 ("\n", " "), ("<", "‹"), (">", "›")):
        text = text.replace(a, b)
    return text


def _received(steps: list[Step]) -> dict[int, list[Arrow]]:
    """Arrows by the step that receives them (None: never received)."""
    out: dict = {}
    for s in steps:
        for a in s.sends:
            out.setdefault(a.received_at, []).append(a)
    return out


def _lost(steps: list[Step]) -> dict[int, list[Arrow]]:
    """Arrows by the step that lost them (never received: the last step)."""
    out: dict = {}
    for s in steps:
        for a in s.sends:
            if a.lost_at is not None:
                out.setdefault(a.lost_at, []).append(a)
    return out


def _in_flight(s: Step) -> list[Arrow]:
    """``s``'s messages neither received nor lost by the end."""
    return [a for a in s.sends if a.received_at is None and a.lost_at is None]


def step_label(s: Step) -> str:
    """``N. Action [what is wrong] — changes``, plain text (no glyph that needs an emoji font)."""
    if s.hidden:
        return f"… {s.hidden} step{'s' if s.hidden > 1 else ''} not shown …"
    return (f"{s.index}. {s.action}" + (f" [{s.mark or 'violation'}]" if s.bad else "")
            + (f" [crash of {', '.join(map(str, s.crashed))}]" if s.crashed else "")
            + (f" [view {{{', '.join(map(str, s.view))}}}]" if s.view else "")
            + (f" — {s.note}" if s.note else ""))


def lost_label(a: Arrow) -> str:
    if a.never:
        return f"{a.src} → {a.dst} never received (sent at step {a.sent_at}): {a.label}"
    return f"{a.src} → {a.dst} lost (no effect at {a.dst}): {a.label}"


def text(steps: list[Step]) -> str:
    """The numbered steps as plain text (JUnit, terminals)."""
    got, lost = _received(steps), _lost(steps)
    lines = []
    for s in steps:
        lines.append(step_label(s))
        if s.hidden:
            continue
        lines += [f"     {a.dst} receives from {a.src}" + (f" (sent at step {a.sent_at})" if a.sent_at != s.index
                                                           else "") + f": {a.label}" for a in got.get(s.index, [])]
        lines += [f"     {lost_label(a)}" for a in lost.get(s.index, [])]
        lines += [f"     {a.src} sends to {a.dst} (still in flight at the end): {a.label}" for a in _in_flight(s)]
    return "\n".join(lines)


def draw(steps: list[Step], n_members: Optional[int], title: str):
    """The report's Diagram of ``steps``, cut around the witness (``cut``):
    Mermaid, SVG and text."""
    shown = cut(steps)
    return Diagram(title, mermaid(shown, n_members, title), svg(shown, n_members, title), text(shown),
                   events(shown))


def mermaid(steps: list[Step], n_members: Optional[int] = None, title: str = "") -> str:
    ps = participants(steps, n_members)
    got, lost = _received(steps), _lost(steps)
    lines = ["sequenceDiagram"]
    if title:
        lines.append(f"    title {_mm(title)}")
    lines += [f"    participant m{p} as {p}" for p in ps]
    for s in steps:
        if s.hidden:
            lines.append(f"    Note over m{ps[0]},m{ps[-1]}: {_mm(step_label(s))}" if ps else "")
            continue
        body = [f"    m{a.src}-)m{a.dst}: {_mm(a.label)}" + (f" (sent at step {a.sent_at})" if a.sent_at != s.index
                                                             else "") for a in got.get(s.index, [])]
        who = s.actors or ps
        span = f"m{who[0]}" if len(who) == 1 else f"m{who[0]},m{who[-1]}"
        if span and ps:
            body.append(f"    Note over {span}: " + "<br/>".join(_mm(x) for x in wrap(step_label(s), 60)))
        body += [f"    m{a.src}-xm{a.dst}: {_mm(a.label)} " + ("(never received)" if a.never else "(lost)")
                 for a in lost.get(s.index, [])]
        body += [f"    m{a.src}-xm{a.dst}: {_mm(a.label)} (still in flight at the end)" for a in _in_flight(s)]
        if s.bad:                                       # the violating step on a red band
            body = ["    rect rgb(253, 232, 230)"] + ["  " + b for b in body] + ["    end"]
        lines += body
    return "\n".join(ln for ln in lines if ln)


LABEL_CHARS = 88        # characters per label line (monospace 11 px: ~6.6 px each)
CHAR_PX = 6.7           # width of one character of the monospace 11 px labels


def _x_mark(x: float, y: float, r: int, cls: str, color: str, extra: str = "") -> str:
    return (f'<path class="{cls}"{extra} d="M{x - r:.1f},{y - r} L{x + r:.1f},{y + r} M{x - r:.1f},{y + r} '
            f'L{x + r:.1f},{y - r}" stroke="{color}" stroke-width="2"/>')


def svg(steps: list[Step], n_members: Optional[int] = None, title: str = "") -> str:
    """A space-time diagram: one vertical line per member, one row per step
    (as tall as its wrapped label), an arrow per message from the dot of
    its send to its receipt, or to a red cross at the step that lost it (a
    message never received: on its receiver's line at the last row), or
    dashed and open-ended if it was still in flight at the end.  A crashed
    member's line ends at its crash under a black cross (and starts again
    if it acts later: a recovery); a view installed is a blue band across
    its members; a cut is a grey row naming the steps left out.  The
    violating step's row is red and its actors circled.  The title wraps to
    the width.  At most about 1150 px wide whatever the number of members:
    columns narrow as they multiply.  Rows, arrows and marks carry their
    step numbers and members (``data-step``, ``data-sent``,
    ``data-received``, ``data-lost``, ``data-member``) for tests and readers."""
    ps = participants(steps, n_members)
    if not ps:
        ps = [1]
    gap = max(50, min(150, 420 // max(1, len(ps) - 1))) if len(ps) > 1 else 150
    col = {p: 40 + gap * i for i, p in enumerate(ps)}
    text_x = max(col.values()) + 40
    width = text_x + int(LABEL_CHARS * CHAR_PX) + 10
    title_lines = wrap(title, int((width - 16) / (CHAR_PX * 12 / 11))) if title else []
    head = 14 * len(title_lines) + 10
    top, line_h = head + 36, 14
    labels = {}
    got, lost = _received(steps), _lost(steps)
    for k, s in enumerate(steps):
        extra = [] if s.hidden else [f"{a.dst} ← {a.src}: {a.label}" for a in got.get(s.index, [])]
        extra += [] if s.hidden else [lost_label(a) for a in lost.get(s.index, [])]
        labels[k] = [ln for part in [step_label(s)] + extra for ln in wrap(part, LABEL_CHARS)]
    y, band, cur = {}, {}, top
    for k, s in enumerate(steps):
        h = line_h * len(labels[k]) + 10
        if not s.hidden:
            y[s.index] = cur + 12
        band[k] = (cur, h)
        cur += h
    height = cur + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="11" class="spacetime">',
           '<defs><marker id="ah" markerWidth="8" markerHeight="8" refX="7" refY="4" orient="auto">'
           '<path d="M0,0 L8,4 L0,8 z" fill="#1f4e99"/></marker></defs>']
    if title_lines:
        out.append('<text class="title" x="8" y="16" font-weight="bold" font-size="12">' + "".join(
            f'<tspan x="8" dy="{0 if k == 0 else 14}">{escape(ln)}</tspan>' for k, ln in enumerate(title_lines))
            + '</text>')
    for k, s in enumerate(steps):
        b0, bh = band[k]
        if s.bad:
            out.append(f'<rect class="bad" x="0" y="{b0}" width="{width}" height="{bh}" fill="#fde8e6"/>')
        if s.hidden:
            out.append(f'<rect class="cut" data-hidden="{s.hidden}" x="0" y="{b0}" width="{width}" height="{bh}" '
                       f'fill="#eee"/>')
        if s.view:
            xs = [col[m] for m in s.view]
            out.append(f'<rect class="view" data-step="{s.index}" data-members="{" ".join(map(str, s.view))}" '
                       f'x="{min(xs) - 12}" y="{b0 + 3}" width="{max(xs) - min(xs) + 24}" height="{bh - 6}" '
                       f'rx="4" fill="#dde9f8" stroke="#1f4e99"/>')
    out += _lifelines(steps, col, y, top, height)
    for k, s in enumerate(steps):
        if s.hidden:
            out.append(f'<text class="cut" x="{text_x}" y="{band[k][0] + 16}" fill="#555">'
                       f'{escape(labels[k][0])}</text>')
            continue
        yy = y[s.index]
        color = "#c0392b" if s.bad else "#222"
        out.append(f'<g class="step{" bad" if s.bad else ""}" data-step="{s.index}" '
                   f'data-action="{escape(s.action)}">')
        dots = set(s.actors) | {a.src for a in s.sends} | {a.dst for a in got.get(s.index, [])}
        for a in sorted(dots):
            out.append(f'<circle data-member="{a}" cx="{col[a]}" cy="{yy}" r="4" fill="{color}"/>')
            if s.bad and a in s.actors:                 # the members that broke the property
                out.append(f'<circle class="culprit" cx="{col[a]}" cy="{yy}" r="8" fill="none" '
                           f'stroke="{color}" stroke-width="2"/>')
        out.append(f'<text x="{text_x}" y="{yy + 4}" fill="{color}">' + "".join(
            f'<tspan x="{text_x}" dy="{0 if k2 == 0 else line_h}">{escape(ln)}</tspan>'
            for k2, ln in enumerate(labels[k])) + '</text></g>')
    out += _arrows(steps, col, y)
    out.append("</svg>")
    return "\n".join(out)


def _lifelines(steps: list[Step], col: dict, y: dict, top: int, height: int) -> list[str]:
    """Each member's line: from the top to its crash (under a black cross),
    again from a later step where it acts (a recovery)."""
    out: list[str] = []
    for p, x in col.items():
        out.append(f'<text class="member" data-member="{p}" x="{x}" y="{top - 8}" text-anchor="middle" '
                   f'font-weight="bold">{p}</text>')
        start, alive = top - 4, True
        for s in steps:
            if s.hidden:
                continue
            if not alive and (p in s.actors or any(a.src == p for a in s.sends)) and p not in s.crashed:
                start, alive = y[s.index] - 6, True
            if alive and p in s.crashed:
                out.append(f'<line class="lifeline" data-member="{p}" x1="{x}" y1="{start}" x2="{x}" '
                           f'y2="{y[s.index]}" stroke="#999"/>')
                out.append(_x_mark(x, y[s.index], 7, "crash", "#000", f' data-member="{p}" data-step="{s.index}"'))
                alive = False
        if alive:
            out.append(f'<line class="lifeline" data-member="{p}" x1="{x}" y1="{start}" x2="{x}" '
                       f'y2="{height - 6}" stroke="#999"/>')
    return out


def _arrows(steps: list[Step], col: dict, y: dict) -> list[str]:
    """An arrow per message from its send's row to its receipt's, to a red
    cross where it was lost, or dashed and open-ended while in flight."""
    out: list[str] = []
    for s in steps:
        for a in s.sends:
            if a.sent_at not in y:
                continue
            x1, y1 = col[a.src], y[a.sent_at]
            cls, dash, end, cross = "received", "", ' marker-end="url(#ah)"', ""
            if a.received_at is not None:
                if a.received_at not in y:          # received in a cut
                    continue
                x2, y2 = col[a.dst], y[a.received_at]
                if a.dst == a.src:                  # to itself: a short slant beside its line
                    x2 = x1 + 18
            elif a.lost_at is not None:             # lost: ends in a cross where it was dropped
                if a.lost_at not in y:
                    continue
                cls, dash, end = ("never" if a.never else "lost"), ' stroke-dasharray="4 3"', ""
                if a.never:                         # on its receiver's line: it never got there
                    x2 = col[a.dst] if a.dst != a.src else x1 + 24
                else:
                    x2 = x1 + 0.6 * (col[a.dst] - x1) if a.dst != a.src else x1 + 24
                y2 = y[a.lost_at]
                cross = _x_mark(x2, y2, 5, "cross", "#c0392b")
            else:                                   # still in flight at the end
                cls, dash = "inflight", ' stroke-dasharray="4 3"'
                x2, y2 = (x1 + col[a.dst]) / 2, y1 + 20
            attrs = f' data-from="{a.src}" data-to="{a.dst}" data-sent="{a.sent_at}"' \
                + (f' data-received="{a.received_at}"' if a.received_at else "") \
                + (f' data-lost="{a.lost_at}"' if a.lost_at else "") + (' data-inferred="1"' if a.inferred else "")
            out.append(f'<line class="msg {cls}" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#1f4e99"{dash}'
                       f'{end}{attrs}><title>{escape(a.label)}</title></line>{cross}')
    return out


def cti(title: str, action: str, pre: dict, post: dict, path: Optional[list[str]] = None):
    """The report's Diagram of a counterexample to induction: the pre-state
    and the post-state as one table of the variables that differ (the rest
    counted), and the step between them; ``path``: the actions that reach
    the pre-state from Init, when the bounded model reaches it."""
    names = [k for k in dict.fromkeys([*pre, *post]) if pre.get(k) != post.get(k)]
    same = len(set(pre) | set(post)) - len(names)
    reached = ("reached from Init by " + " → ".join(path)) if path else "not reached by the bounded model"
    width, name_w, val_chars = 1000, 170, 55
    val_w = (width - name_w - 30) // 2
    rows = []
    for k in names:
        a, b = wrap(str(pre.get(k, "—")), val_chars), wrap(str(post.get(k, "—")), val_chars)
        rows.append((k, a, b, 14 * max(len(a), len(b)) + 8))
    title_lines = wrap(title, 130)
    top = 14 * len(title_lines) + 14
    head_y = top + 18 + 14 * len(wrap(reached, 130))
    x_pre, x_post = 10 + name_w, 10 + name_w + val_w + 10
    out_rows, cur = [], head_y + 44
    for k, a, b, h in rows:
        out_rows.append(
            f'<g class="var" data-var="{escape(k)}"><rect x="8" y="{cur - 12}" width="{width - 16}" height="{h}" '
            f'fill="#fff" stroke="#ddd"/><text x="14" y="{cur + 2}" font-weight="bold">{escape(k)}</text>'
            + "".join(f'<text class="{side}" x="{x + 6}" y="{cur + 2 + 14 * n}">{escape(ln)}</text>'
                      for side, x, lines in (("pre", x_pre, a), ("post", x_post, b)) for n, ln in enumerate(lines))
            + '</g>')
        cur += h
    height = cur + 30
    arrow_y = head_y + 14
    svg_out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} '
               f'{height}" font-family="monospace" font-size="11" class="cti">',
               '<defs><marker id="ah" markerWidth="8" markerHeight="8" refX="7" refY="4" orient="auto">'
               '<path d="M0,0 L8,4 L0,8 z" fill="#c0392b"/></marker></defs>',
               '<text class="title" x="8" y="16" font-weight="bold" font-size="12">' + "".join(
                   f'<tspan x="8" dy="{0 if n == 0 else 14}">{escape(ln)}</tspan>' for n, ln in enumerate(title_lines))
               + '</text>',
               f'<text class="path" x="8" y="{top + 14}">' + "".join(
                   f'<tspan x="8" dy="{0 if n == 0 else 14}">{escape(ln)}</tspan>'
                   for n, ln in enumerate(wrap(reached, 130))) + '</text>',
               f'<text class="state pre" x="{x_pre + 6}" y="{head_y}" font-weight="bold">pre-state (satisfies '
               f'every lemma)</text>',
               f'<text class="state post" x="{x_post + 6}" y="{head_y}" font-weight="bold">post-state (breaks a '
               f'lemma)</text>',
               f'<line class="step" data-action="{escape(action)}" x1="{x_pre + 6}" y1="{arrow_y}" '
               f'x2="{x_post - 4}" y2="{arrow_y}" stroke="#c0392b" stroke-width="2" marker-end="url(#ah)"/>',
               f'<text class="action" x="{x_pre + val_w // 2 - 40}" y="{arrow_y + 14}" fill="#c0392b">'
               f'{escape(action)}</text>',
               *out_rows,
               f'<text class="same" x="8" y="{cur + 16}">{same} other variables unchanged</text>', '</svg>']
    table = [f"step {action}; {reached}", "variable | pre-state | post-state"] + \
        [f"{k} | {pre.get(k, '—')} | {post.get(k, '—')}" for k in names] + [f"({same} other variables unchanged)"]
    mm = ["flowchart LR", f'    pre["pre-state<br/>' + "<br/>".join(_mm(f"{k} = {pre.get(k, '—')}")
                                                           .replace('"', "'") for k in names) + '"]',
          f'    post["post-state<br/>' + "<br/>".join(_mm(f"{k} = {post.get(k, '—')}")
                                                     .replace('"', "'") for k in names) + '"]',
          f'    pre -- "{_mm(action).replace(chr(34), chr(39))}" --> post']
    return Diagram(title, "\n".join(mm), "\n".join(svg_out), "\n".join(table))


# ---------------------------------------------------------------- a history's violation drawn

def violation_steps(v) -> list[Step]:
    """A violation's witness (core/properties.py ``Violation``) as Steps: one
    per witness event, in order, each marked as part of the violation."""
    out = []
    for k, e in enumerate(v.events, start=1):
        what = e.get("what", "deliver")
        label = f"{what} {_fmt_msg(e['msg'])}" if e.get("msg") is not None else what
        at = [] if e.get("index") is None else [f"event {e['index']}"]
        if e.get("view") is not None:
            at.append(f"view {e['view']}")
        out.append(Step(index=k, action=label, actors=[e["member"]], note=", ".join(at), bad=True))
    return out


def violation_drawing(v, where: str = "", history=None):
    """The witness drawn (``Diagram``: Mermaid and SVG), titled by ``where``
    (a run) and the violation's text: within the whole run when its
    ``history`` is given (every member's line, every send and delivery,
    views and crashes: ``steps_from_history``), else the witness events alone."""
    steps = steps_from_history(history, v) if history is not None else violation_steps(v)
    return draw(steps, None, f"{where}: {v}" if where else str(v))


def violation_json(v, history=None) -> dict:
    """``v.to_json()`` with its drawing (``mermaid``, ``svg``)."""
    d = violation_drawing(v, history=history)
    return {**v.to_json(), "mermaid": d.mermaid, "svg": d.svg}

