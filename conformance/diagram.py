"""Sequence diagrams of counterexamples and of non-conforming runs.

Theory of operation
-------------------
A TLC counterexample is a list of (action, state) pairs; TLC does not say who
acted or which message moved, so both are read off the state change, using
only the shape the specs share (DESIGN §3): members are 1..N; a *per-member*
variable is a function on members (a tuple of length N once normalised, or a
function whose domain is a set of members); a *channel* variable is a
function on pairs <<p, q>> of members whose values are sequences.  At each
step the actors are the members whose entry of some per-member variable
changed; a channel that grew carries a message from p to q, one that lost its
head delivered one to q (FIFO, so the k-th message out is the k-th in, and
the space-time diagram can draw the arrow from its send to its receipt).
Anything else that changed (a global variable) is summarised in the step's
note.  A trace's events name their actor (``nid``) and, for receipts, the
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

MAX_LABEL = 72


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


def _short(text: str, n: int = MAX_LABEL) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


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
    prev: Optional[dict[str, Any]] = None
    for i, (action, state) in enumerate(trace, 1):
        if prev is None:
            steps.append(Step(i, "Init", [], note=""))
            prev = state
            continue
        actors: set[int] = set()
        globals_changed = []
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
                            arrow = Arrow(p, q, _short(to_tla(msg), 48), sent_at=i)
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
                continue
            pm_cur, pm_old = _per_member(cur, members), _per_member(old, members)
            if pm_cur is not None and pm_old is not None:
                for m in members:
                    if pm_cur.get(m) != pm_old.get(m):
                        actors.add(m)
                continue
            globals_changed.append(f"{var} = {_short(to_tla(cur), 40)}")
        step.actors = sorted(actors)
        step.note = _short("; ".join(globals_changed), 90)
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
            f"{k2}={_short(v, 20)}" for k2, v in sorted(params.items())) + ")")
        step = Step(k, label, [nid] if isinstance(nid, int) else [], bad=(ev.get("i") == bad_index))
        if isinstance(nid, int) and isinstance(params.get("p"), int) and params["p"] != nid and msg:
            text = _short(" ".join([str(msg.get("type", ""))] + [f"{k2}={v}" for k2, v in sorted(msg.items())
                                                                 if k2 != "type"]), 40)
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


def mermaid(steps: list[Step], n_members: Optional[int] = None, title: str = "") -> str:
    ps = participants(steps, n_members)
    lines = ["sequenceDiagram"]
    if title:
        lines.append(f"    title {_mm(title)}")
    lines += [f"    participant m{p} as {p}" for p in ps]
    for s in steps:
        who = s.actors or ps
        span = f"m{who[0]}" if len(who) == 1 else f"m{who[0]},m{who[-1]}"
        mark = "❌ " if s.bad else ""
        text = f"{mark}{s.index}. {s.action}" + (f" — {s.note}" if s.note else "")
        if span and ps:
            lines.append(f"    Note over {span}: {_mm(text)}")
        for a in s.sends:
            lines.append(f"    m{a.src}-){'m'}{a.dst}: {_mm(a.label)}")
    return "\n".join(lines)


def svg(steps: list[Step], n_members: Optional[int] = None, title: str = "") -> str:
    """A space-time diagram: one vertical line per member, one row per step,
    an arrow per message from its send to its receipt (dashed and open-ended
    if it was never received)."""
    ps = participants(steps, n_members)
    if not ps:
        ps = [1]
    col = {p: 90 + 150 * i for i, p in enumerate(ps)}
    row_h, top = 26, 50
    width = 90 + 150 * (len(ps) - 1) + 330
    height = top + row_h * (len(steps) + 1)
    y = {s.index: top + row_h * (k + 0.5) for k, s in enumerate(steps)}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="11">',
           '<defs><marker id="ah" markerWidth="8" markerHeight="8" refX="7" refY="4" orient="auto">'
           '<path d="M0,0 L8,4 L0,8 z" fill="#1f4e99"/></marker></defs>']
    if title:
        out.append(f'<text x="8" y="16" font-weight="bold">{escape(title)}</text>')
    for p, x in col.items():
        out.append(f'<text x="{x}" y="38" text-anchor="middle" font-weight="bold">{p}</text>')
        out.append(f'<line x1="{x}" y1="42" x2="{x}" y2="{height - 6}" stroke="#999"/>')
    text_x = max(col.values()) + 40
    for s in steps:
        yy = y[s.index]
        color = "#c0392b" if s.bad else "#222"
        for a in s.actors:
            out.append(f'<circle cx="{col[a]}" cy="{yy}" r="4" fill="{color}"/>')
        label = f"{s.index}. {s.action}" + (f" — {s.note}" if s.note else "")
        out.append(f'<text x="{text_x}" y="{yy + 4}" fill="{color}">{escape(_short(label, 60))}</text>')
    for s in steps:
        for a in s.sends:
            x1, y1 = col[a.src], y[a.sent_at]
            if a.received_at is not None and a.received_at != a.sent_at:
                x2, y2, dash = col[a.dst], y[a.received_at], ""
            elif a.received_at == a.sent_at:        # a trace receipt: drawn short and flat
                x2, y2, dash = col[a.dst], y1, ""
                y1 = y1 - row_h * 0.6
            else:                                   # never received in the counterexample
                x2, y2, dash = (x1 + col[a.dst]) / 2, y1 + row_h * 0.8, ' stroke-dasharray="4 3"'
            out.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#1f4e99"{dash} '
                       f'marker-end="url(#ah)"><title>{escape(a.label)}</title></line>')
    out.append("</svg>")
    return "\n".join(out)
