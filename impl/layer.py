"""The layer interface (sans-I/O; docs/impl.md, "The layer interface").

A layer is an object with a ``name`` and ``handle(event, now) -> list[Effect]``.
Time arrives as ``now``; randomness, if a layer ever needs it, is injected by
the caller.  A layer keeps its own counters in ``stats`` (a plain dict of
ints) so that dropped input, duplicates and full buffers are visible, never
silent.  ``Layer`` is a Protocol: layers need not inherit from anything.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from .events import Effect, Event


@runtime_checkable
class Layer(Protocol):
    name: str
    stats: dict[str, int]

    def handle(self, event: Event, now: float) -> list[Effect]:
        """React to ``event`` at time ``now``; return the effects to perform,
        in order.  Must not block, sleep, read clocks or do I/O."""
        ...


def bump(stats: dict[str, int], key: str, by: int = 1) -> None:
    """Increment a counter (counters spring into existence at first use)."""
    stats[key] = stats.get(key, 0) + by
