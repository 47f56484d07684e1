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
head delivered one to q (FIFO, so the k-th message out is the k-th in, and
the space-time diagram can draw the arrow from its send to its receipt); a
*message bag* is a set of records naming a sender and a receiver (fields
``from``/``src``/``sender``/``cur`` and ``to``/``dst``/``dest``): a record
that appears is a send, one that disappears a receipt.  Every variable that
changed is listed in the step's note in full (per-member ones as
``var[m]``); renderers wrap it, never cut it.  Mermaid has no arrows that
span time, so it draws each message at its receipt (what the violation is
about), and a message never received as a crossed arrow at its send.  A trace's events name their actor (``nid``) and, for receipts, the
sender (``params.p``), so a run needs no inference.

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


@dataclass
class Step:
    index: int                      # 1-based, as in the numbered counterexample
    action: str
    actors: list[int]
    note: str = ""
    sends: list[Arrow] = field(default_factory=list)
    bad: bool = False               # the step where a run stopped conforming


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


def steps_from_states(trace: list[tuple[Optional[str], dict[str, Any]]], n_members: int) -> list[Step]:
    """Steps of a counterexample (action, state) list; the first state is Init."""
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
                                q_.pop(0).received_at = i
                        actors.add(q)
                    elif a != b:                                         # both, or rewritten
                        actors.update((p, q))
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
                        arrow.received_at = i
                        actors.add(arrow.dst)
                    else:
                        changed.append(f"{var} loses {to_tla(rec)}")
                continue
            pm_cur, pm_old = _per_member(cur, members), _per_member(old, members)
            if pm_cur is not None and pm_old is not None:
                for m in sorted(members):
                    if pm_cur.get(m) != pm_old.get(m):
                        actors.add(m)
                        changed.append(f"{var}[{m}] = {to_tla(pm_cur.get(m))}")
                continue
            changed.append(f"{var} = {to_tla(cur)}")
        step.actors = sorted(actors)
        step.note = "; ".join(changed)
        steps.append(step)
        prev = state
    return steps


def steps_from_events(events: Iterable[dict], bad_index: Optional[int] = None) -> list[Step]:
    """Steps of a trace's events (groupcheck-trace/1); receipts are drawn from
    ``params.p`` to ``nid``, matched FIFO per (p, nid) and message type."""
    steps: list[Step] = []
    for k, ev in enumerate(events, 1):
        nid = ev.get("nid")
        params = ev.get("params") or {}
        msg = ev.get("msg")
        label = ev["name"] + ("" if not params else "(" + ", ".join(
            f"{k2}={v}" for k2, v in sorted(params.items())) + ")")
        step = Step(k, label, [nid] if isinstance(nid, int) else [], bad=(ev.get("i") == bad_index))
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


def step_label(s: Step) -> str:
    return (("❌ " if s.bad else "") + f"{s.index}. {s.action}" + (f" — {s.note}" if s.note else ""))


def text(steps: list[Step]) -> str:
    """The numbered steps as plain text (JUnit, terminals)."""
    got = _received(steps)
    lines = []
    for s in steps:
        lines.append(step_label(s))
        lines += [f"     {a.dst} receives from {a.src}: {a.label}" for a in got.get(s.index, [])]
        lines += [f"     {a.src} sends to {a.dst} (never received): {a.label}"
                  for a in s.sends if a.received_at is None]
    return "\n".join(lines)


def draw(steps: list[Step], n_members: Optional[int], title: str):
    """The report's Diagram of ``steps``: Mermaid, SVG and text."""
    from .report import Diagram
    return Diagram(title, mermaid(steps, n_members, title), svg(steps, n_members, title), text(steps))


def mermaid(steps: list[Step], n_members: Optional[int] = None, title: str = "") -> str:
    ps = participants(steps, n_members)
    got = _received(steps)
    lines = ["sequenceDiagram"]
    if title:
        lines.append(f"    title {_mm(title)}")
    lines += [f"    participant m{p} as {p}" for p in ps]
    for s in steps:
        for a in got.get(s.index, []):                  # drawn at the receipt
            lines.append(f"    m{a.src}-)m{a.dst}: {_mm(a.label)}")
        who = s.actors or ps
        span = f"m{who[0]}" if len(who) == 1 else f"m{who[0]},m{who[-1]}"
        if span and ps:
            lines.append(f"    Note over {span}: " + "<br/>".join(_mm(x) for x in wrap(step_label(s), 60)))
        for a in s.sends:
            if a.received_at is None:                   # sent, never received
                lines.append(f"    m{a.src}-xm{a.dst}: {_mm(a.label)} (never received)")
    return "\n".join(lines)


LABEL_CHARS = 88        # characters per label line (monospace 11 px: ~6.6 px each)


def svg(steps: list[Step], n_members: Optional[int] = None, title: str = "") -> str:
    """A space-time diagram: one vertical line per member, one row per step
    (as tall as its wrapped label), an arrow per message from its send to its
    receipt (dashed and open-ended if it was never received).  At most about
    1150 px wide whatever the number of members: columns narrow as they
    multiply."""
    ps = participants(steps, n_members)
    if not ps:
        ps = [1]
    gap = max(50, min(150, 420 // max(1, len(ps) - 1))) if len(ps) > 1 else 150
    col = {p: 40 + gap * i for i, p in enumerate(ps)}
    text_x = max(col.values()) + 40
    width = text_x + int(LABEL_CHARS * 6.7) + 10
    top, line_h = 50, 14
    labels = {}
    got = _received(steps)
    for s in steps:
        extra = [f"{a.dst} ← {a.src}: {a.label}" for a in got.get(s.index, []) if a.received_at != a.sent_at]
        labels[s.index] = [ln for part in [step_label(s)] + extra for ln in wrap(part, LABEL_CHARS)]
    y, cur = {}, top
    for s in steps:
        h = line_h * len(labels[s.index]) + 10
        y[s.index] = cur + 12
        cur += h
    height = cur + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="11" class="spacetime">',
           '<defs><marker id="ah" markerWidth="8" markerHeight="8" refX="7" refY="4" orient="auto">'
           '<path d="M0,0 L8,4 L0,8 z" fill="#1f4e99"/></marker></defs>']
    if title:
        out.append(f'<text x="8" y="16" font-weight="bold">{escape(title)}</text>')
    for p, x in col.items():
        out.append(f'<text x="{x}" y="38" text-anchor="middle" font-weight="bold">{p}</text>')
        out.append(f'<line x1="{x}" y1="42" x2="{x}" y2="{height - 6}" stroke="#999"/>')
    for s in steps:
        yy = y[s.index]
        color = "#c0392b" if s.bad else "#222"
        for a in s.actors:
            out.append(f'<circle cx="{col[a]}" cy="{yy}" r="4" fill="{color}"/>')
        out.append(f'<text x="{text_x}" y="{yy + 4}" fill="{color}">' + "".join(
            f'<tspan x="{text_x}" dy="{0 if k == 0 else line_h}">{escape(ln)}</tspan>'
            for k, ln in enumerate(labels[s.index])) + '</text>')
    for s in steps:
        for a in s.sends:
            x1, y1 = col[a.src], y[a.sent_at]
            if a.received_at is not None and a.received_at != a.sent_at:
                x2, y2, dash = col[a.dst], y[a.received_at], ""
            elif a.received_at == a.sent_at:        # a trace receipt: drawn short and flat
                x2, y2, dash = col[a.dst], y1, ""
                y1 = y1 - 12
            else:                                   # never received in the counterexample
                x2, y2, dash = (x1 + col[a.dst]) / 2, y1 + 20, ' stroke-dasharray="4 3"'
            out.append(f'<line class="msg" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#1f4e99"{dash} '
                       f'marker-end="url(#ah)"><title>{escape(a.label)}</title></line>')
    out.append("</svg>")
    return "\n".join(out)
