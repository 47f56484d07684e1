"""How far a long check has got: reading a trace, replaying it.

A command that shows progress sets a reporter for the length of a check
(``reporting``); the trace reader and the replay call ``tick`` every
``EVERY`` records.  Nobody listening costs a context-variable read per
``EVERY`` records."""

from __future__ import annotations

import contextlib
import contextvars
from typing import Callable, Iterator, Optional

EVERY = 50_000

Reporter = Callable[[str, int, Optional[int]], None]     # (stage, done, total or None)
_reporter: contextvars.ContextVar[Optional[Reporter]] = contextvars.ContextVar("reporter", default=None)


@contextlib.contextmanager
def reporting(fn: Reporter) -> Iterator[None]:
    token = _reporter.set(fn)
    try:
        yield
    finally:
        _reporter.reset(token)


def tick(stage: str, done: int, total: Optional[int] = None) -> None:
    fn = _reporter.get()
    if fn is not None:
        fn(stage, done, total)


# ------------------------------------------------------------------ the time left
#
# One model of a long command's work, for every command that shows progress
# (cli/render.py draws it).  The work is a set of items, each with an
# estimated cost in seconds (measured once on a quiet machine, or a
# measured rate times the item's size); only the items that run are in it
# (a skipped check is no work).  The time left is the pace so far times the
# estimated cost of what is left, the pace being
#
#     (elapsed + PRIOR) / (estimated cost of the items done + PRIOR)
#
# so a loaded machine, or one with more cores, shows as a pace above or
# below 1 after a few items, and one slow cheap item early on cannot blow
# up the estimate (PRIOR seconds of expected work at pace 1 weigh against
# it).  Items counted alike, with no estimate in seconds: elapsed / done,
# and no time left before the first is done.
# Between two finished items the predicted end stays where the last one put
# it (the items in flight progress meanwhile); once that is overrun the
# estimate is at least the cheapest pending item at the current pace.
# Sans-I/O: every method takes ``now``.

PRIOR = 10.0


class Work:
    """done/total of the items that run, their estimated costs, the pace and
    the time left.  Items are keyed (``plan`` then ``finish(key)``), or
    counted alike (``count(done, total)``) when nothing tells them apart."""

    def __init__(self, now: float, costs: Optional[dict] = None):
        self.t0 = self.t_last = now
        self.prior = PRIOR         # 0 for items counted alike: no estimate in seconds to lean on
        self.pending: dict = {}
        self.done, self.cost_done = 0, 0.0
        self._pace_last = 1.0
        if costs:
            self.plan(costs)

    @property
    def total(self) -> int:
        return self.done + len(self.pending)

    def plan(self, costs: dict) -> None:
        """Items still to run, key -> estimated cost in seconds (at pace 1)."""
        self.pending.update({k: max(float(c), 0.0) for k, c in costs.items()})

    def pace(self, now: float) -> float:
        if not self.cost_done + self.prior:
            return 1.0
        return (now - self.t0 + self.prior) / (self.cost_done + self.prior)

    def finish(self, key, now: float) -> None:
        """The item ``key`` finished (an unknown key: the cheapest pending one,
        or an unplanned item of the mean cost done so far)."""
        if key not in self.pending:
            key = min(self.pending, key=self.pending.get) if self.pending else None
        cost = self.pending.pop(key) if key is not None else (self.cost_done / self.done if self.done else 1.0)
        self.done += 1
        self.cost_done += cost
        self.t_last, self._pace_last = now, self.pace(now)

    def count(self, done: int, total: Optional[int], now: float) -> None:
        """Items alike: ``done`` of ``total`` (a stage's tasks, a dataset's runs)."""
        if total is None:
            return
        self.prior = 0.0
        if done != self.done:
            self.t_last = now
        self.done, self.cost_done = done, float(done)
        self.pending = {i: 1.0 for i in range(done, total)}
        self._pace_last = self.pace(now)

    def left(self, now: float) -> Optional[float]:
        """Seconds left, or None when nothing is planned."""
        if not self.pending or not self.prior and not self.done:
            return None if not self.done else 0.0
        rest = sum(self.pending.values())
        return max(self._pace_last * rest - (now - self.t_last), self.pace(now) * min(self.pending.values()))

    def rate(self, now: float) -> Optional[float]:
        """Items finished per minute so far."""
        return 60.0 * self.done / (now - self.t0) if self.done and now > self.t0 else None
