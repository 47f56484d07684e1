"""Human rendering of results: tables and counterexamples (rich)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from groupcheck.model.values import to_tla


def counterexample_steps(trace: list[tuple[str | None, dict[str, Any]]]) -> list[str]:
    """Numbered steps: the action taken and only the variables that changed."""
    lines = []
    prev: dict[str, Any] | None = None
    for i, (action, state) in enumerate(trace, 1):
        if prev is None:
            lines.append(f"{i}. Init")
            changed = state
        else:
            lines.append(f"{i}. {action or '?'}")
            changed = {k: v for k, v in state.items() if prev.get(k) != v}
        for k, v in changed.items():
            lines.append(f"     {k} = {to_tla(v)}")
        prev = state
    return lines


def check_table(rows: list[dict[str, Any]]) -> Table:
    t = Table(title="groupcheck check", show_lines=False)
    for col in ("protocol", "model", "expected", "result", "distinct", "pinned", "depth", "seconds", "verdict"):
        t.add_column(col, justify="right" if col in ("distinct", "pinned", "depth", "seconds") else "left")
    for r in rows:
        observed = r["violated"] or r["result"]
        verdict = "[green]as expected[/]" if r["matches_expectation"] else "[bold red]UNEXPECTED[/]"
        t.add_row(r["protocol"], r["model"], r["expected"], observed,
                  _n(r["distinct_states"]), _n(r.get("expected_distinct_states")), _n(r["depth"]),
                  f"{r['seconds']:.1f}", verdict)
    return t


def _n(x: Any) -> str:
    return "-" if x is None else f"{x:,}"


def console(stderr: bool = False) -> Console:
    c = Console(stderr=stderr, highlight=False)
    if not c.is_terminal:  # CI logs and pipes: do not squeeze tables into 80 columns
        c = Console(stderr=stderr, highlight=False, width=160)
    return c
