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
Mermaid has no arrows that span time, so it draws each message at its
receipt (what the violation is about), a lost one as a crossed arrow at the
step that lost it, and one still in flight at the end as a crossed arrow at
its send.  A trace's events name their actor (``nid``) and, for receipts,
the sender (``params.p``), so a run needs no inference.

``steps_from_states`` and ``steps_from_events`` give the same neutral
``Step`` list; ``mermaid`` renders it as a Mermaid sequenceDiagram (for
report.md: GitHub and GitLab draw it) and ``svg`` as a self-contained SVG
space-time diagram (for report.html: no script, no network).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from typing import Any, Iterable, Optional

from groupcheck.model.values import Fn, to_tla

@dataclass
class Arrow:
    src: int
    dst: int
    label: str
    sent_at: int                    # step index of the send
    received_at: Optional[int] = None
    lost_at: Optional[int] = None   # step that dropped it (a crash, a fault); never received


@dataclass
class Step:
    index: int                      # 1-based, as in the numbered counterexample
    action: str
    actors: list[int]
    note: str = ""
    sends: list[Arrow] = field(default_factory=list)
    bad: bool = False               # the violating step (a run stops conforming, a property fails)
    mark: str = ""                  # what is wrong at a bad step, in words


def wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters (long words split)."""
    import textwrap
    return textwrap.wrap(" ".join(str(text).split()), width, break_long_words=True,
                         break_on_hyphens=False) or [""]


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
            steps.append(init)
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
                changed.append(f"{var} = {to_tla(cur)}")
                continue
            pm_cur, pm_old = _per_member(cur, members), _per_member(old, members)
            if pm_cur is not None and pm_old is not None:
                for m in sorted(members):
                    if pm_cur.get(m) != pm_old.get(m):
                        actors.add(m)
                        changed_members.add(m)
                        changed.append(f"{var}[{m}] = {to_tla(pm_cur.get(m))}")
                continue
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
        last = steps[-1]
        last.bad = True
        if loop_index is not None and 0 <= loop_index < len(steps) - 1:
            last.mark = (f"{violated} fails: from here the behaviour returns to step {loop_index + 1} forever"
                         if violated else f"from here the behaviour returns to step {loop_index + 1} forever")
        elif loop_index is not None:
            last.mark = f"{violated} fails: the behaviour stops here forever" if violated else "stops here forever"
        else:
            last.mark = f"{violated} is violated in this state" if violated else "the violating state"
    return steps


def steps_from_events(events: Iterable[dict], bad_index: Optional[int] = None,
                      mark: str = "the run stops conforming here") -> list[Step]:
    """Steps of a trace's events (groupcheck-trace/1); receipts are drawn from
    ``params.p`` to ``nid``, matched FIFO per (p, nid) and message type.  The
    event ``i == bad_index`` is marked with ``mark``."""
    steps: list[Step] = []
    for k, ev in enumerate(events, 1):
        nid = ev.get("nid")
        params = ev.get("params") or {}
        msg = ev.get("msg")
        label = ev["name"] + ("" if not params else "(" + ", ".join(
            f"{k2}={v}" for k2, v in sorted(params.items())) + ")")
        bad = bad_index is not None and ev.get("i") == bad_index
        step = Step(k, label, [nid] if isinstance(nid, int) else [], bad=bad, mark=mark if bad else "")
        if isinstance(nid, int) and isinstance(params.get("p"), int) and params["p"] != nid and msg:
            text = " ".join([str(msg.get("type", ""))] + [f"{k2}={v}" for k2, v in sorted(msg.items())
                                                          if k2 != "type"])
            step.sends.append(Arrow(params["p"], nid, text, sent_at=k, received_at=k))
        steps.append(step)
    return steps


def participants(steps: list[Step], n_members: Optional[int] = None) -> list[int]:
    seen = set(range(1, (n_members or 0) + 1))
    for s in steps:
        seen.update(s.actors)
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
    """Arrows by the step that lost them."""
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
    return (f"{s.index}. {s.action}" + (f" [{s.mark or 'violation'}]" if s.bad else "")
            + (f" — {s.note}" if s.note else ""))


def lost_label(a: Arrow) -> str:
    return f"{a.src} → {a.dst} lost (no effect at {a.dst}): {a.label}"


def text(steps: list[Step]) -> str:
    """The numbered steps as plain text (JUnit, terminals)."""
    got, lost = _received(steps), _lost(steps)
    lines = []
    for s in steps:
        lines.append(step_label(s))
        lines += [f"     {a.dst} receives from {a.src}: {a.label}" for a in got.get(s.index, [])]
        lines += [f"     {lost_label(a)}" for a in lost.get(s.index, [])]
        lines += [f"     {a.src} sends to {a.dst} (still in flight at the end): {a.label}" for a in _in_flight(s)]
    return "\n".join(lines)


def draw(steps: list[Step], n_members: Optional[int], title: str):
    """The report's Diagram of ``steps``: Mermaid, SVG and text."""
    from .report import Diagram
    return Diagram(title, mermaid(steps, n_members, title), svg(steps, n_members, title), text(steps))


def mermaid(steps: list[Step], n_members: Optional[int] = None, title: str = "") -> str:
    ps = participants(steps, n_members)
    got, lost = _received(steps), _lost(steps)
    lines = ["sequenceDiagram"]
    if title:
        lines.append(f"    title {_mm(title)}")
    lines += [f"    participant m{p} as {p}" for p in ps]
    for s in steps:
        body = [f"    m{a.src}-)m{a.dst}: {_mm(a.label)}" for a in got.get(s.index, [])]   # drawn at the receipt
        who = s.actors or ps
        span = f"m{who[0]}" if len(who) == 1 else f"m{who[0]},m{who[-1]}"
        if span and ps:
            body.append(f"    Note over {span}: " + "<br/>".join(_mm(x) for x in wrap(step_label(s), 60)))
        body += [f"    m{a.src}-xm{a.dst}: {_mm(a.label)} (lost)" for a in lost.get(s.index, [])]
        body += [f"    m{a.src}-xm{a.dst}: {_mm(a.label)} (still in flight at the end)" for a in _in_flight(s)]
        if s.bad:                                       # the violating step on a red band
            body = ["    rect rgb(253, 232, 230)"] + ["  " + b for b in body] + ["    end"]
        lines += body
    return "\n".join(lines)


LABEL_CHARS = 88        # characters per label line (monospace 11 px: ~6.6 px each)
CHAR_PX = 6.7           # width of one character of the monospace 11 px labels


def svg(steps: list[Step], n_members: Optional[int] = None, title: str = "") -> str:
    """A space-time diagram: one vertical line per member, one row per step
    (as tall as its wrapped label), an arrow per message from its send to its
    receipt, or to a cross at the step that lost it, or dashed and open-ended
    if it was still in flight at the end.  The violating step's row is red
    and its actors circled.  The title wraps to the width.  At most about
    1150 px wide whatever the number of members: columns narrow as they
    multiply.  Rows and arrows carry their step numbers (``data-step``,
    ``data-sent``, ``data-received``, ``data-lost``) for tests and readers."""
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
    for s in steps:
        extra = [f"{a.dst} ← {a.src}: {a.label}" for a in got.get(s.index, []) if a.received_at != a.sent_at]
        extra += [lost_label(a) for a in lost.get(s.index, [])]
        labels[s.index] = [ln for part in [step_label(s)] + extra for ln in wrap(part, LABEL_CHARS)]
    y, band, cur = {}, {}, top
    for s in steps:
        h = line_h * len(labels[s.index]) + 10
        y[s.index] = cur + 12
        band[s.index] = (cur, h)
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
    for s in steps:
        if s.bad:
            b0, bh = band[s.index]
            out.append(f'<rect class="bad" x="0" y="{b0}" width="{width}" height="{bh}" fill="#fde8e6"/>')
    for p, x in col.items():
        out.append(f'<text x="{x}" y="{top - 8}" text-anchor="middle" font-weight="bold">{p}</text>')
        out.append(f'<line x1="{x}" y1="{top - 4}" x2="{x}" y2="{height - 6}" stroke="#999"/>')
    for s in steps:
        yy = y[s.index]
        color = "#c0392b" if s.bad else "#222"
        out.append(f'<g class="step{" bad" if s.bad else ""}" data-step="{s.index}" '
                   f'data-action="{escape(s.action)}">')
        for a in s.actors:
            out.append(f'<circle cx="{col[a]}" cy="{yy}" r="4" fill="{color}"/>')
            if s.bad:                                   # the members that broke the property
                out.append(f'<circle class="culprit" cx="{col[a]}" cy="{yy}" r="8" fill="none" '
                           f'stroke="{color}" stroke-width="2"/>')
        out.append(f'<text x="{text_x}" y="{yy + 4}" fill="{color}">' + "".join(
            f'<tspan x="{text_x}" dy="{0 if k == 0 else line_h}">{escape(ln)}</tspan>'
            for k, ln in enumerate(labels[s.index])) + '</text></g>')
    for s in steps:
        for a in s.sends:
            x1, y1 = col[a.src], y[a.sent_at]
            cls, dash, end, cross = "received", "", ' marker-end="url(#ah)"', ""
            if a.received_at is not None and a.received_at != a.sent_at:
                x2, y2 = col[a.dst], y[a.received_at]
            elif a.received_at == a.sent_at:        # a trace receipt: drawn short and flat
                x2, y2 = col[a.dst], y1
                y1 = y1 - 12
            elif a.lost_at is not None:             # lost: ends in a cross where it was dropped
                cls, dash, end = "lost", ' stroke-dasharray="4 3"', ""
                x2, y2 = x1 + 0.6 * (col[a.dst] - x1) if a.dst != a.src else x1 + 24, y[a.lost_at]
                cross = (f'<path class="cross" d="M{x2 - 5:.1f},{y2 - 5} L{x2 + 5:.1f},{y2 + 5} '
                         f'M{x2 - 5:.1f},{y2 + 5} L{x2 + 5:.1f},{y2 - 5}" stroke="#c0392b" stroke-width="2"/>')
            else:                                   # still in flight at the end
                cls, dash = "inflight", ' stroke-dasharray="4 3"'
                x2, y2 = (x1 + col[a.dst]) / 2, y1 + 20
            attrs = f' data-sent="{a.sent_at}"' + (f' data-received="{a.received_at}"' if a.received_at else "") \
                + (f' data-lost="{a.lost_at}"' if a.lost_at else "")
            out.append(f'<line class="msg {cls}" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#1f4e99"{dash}'
                       f'{end}{attrs}><title>{escape(a.label)}</title></line>{cross}')
    out.append("</svg>")
    return "\n".join(out)
