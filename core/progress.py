"""How far a long check has got: reading a trace, replaying it.

A command that shows progress sets a reporter for the length of a check
(``reporting``); the trace reader and the replay call ``tick`` every
``EVERY`` records.  Nobody listening costs a context-variable read per
``EVERY`` records."""

from __future__ import annotations

import contextlib
import contextvars
import math
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
# Kinds of check slow down differently under load (measured on the audit:
# beside other jobs TLC took 1.2-1.5 times its table seconds while trace
# validation took 0.5-0.8 and Spark 0.7-2.0), so an item keyed
# ``kind/...`` is priced at its own kind's pace once an item of that kind
# has finished,
#
#     (wall share of its items done + KIND_PRIOR * pace) / (their cost + KIND_PRIOR)
#
# (an item's wall share: its duration over the items run beside it), and
# until then at the square root of the pace above: that pace was learned on
# other kinds, so the estimate of an unseen kind is shrunk toward its table
# seconds (replayed on seven recorded audits: more lines within 30 % on
# five, as many on one, one line fewer on one; docs/benchmarks.md).
# Between two finished items the predicted end stays where the last one put
# it (the items in flight progress meanwhile); once that is overrun the
# estimate is at least the cheapest pending item at the current pace.
# Sans-I/O: every method takes ``now``.

PRIOR = 10.0
KIND_PRIOR = 20.0


def kind_of(key) -> Optional[str]:
    """The kind of a planned item: its key's part before the first '/' (none: priced at the overall pace)."""
    return key.split("/", 1)[0] if isinstance(key, str) and "/" in key else None


class Work:
    """done/total of the items that run, their estimated costs, the pace and
    the time left.  Items are keyed (``plan`` then ``finish(key)``), or
    counted alike (``count(done, total)``) when nothing tells them apart.
    An item known to be running (``start``, or ``queue``: keys that start
    in that order, ``jobs`` at once, as a pool runs them) counts as done in
    part: its elapsed time at the current pace, up to its cost."""

    def __init__(self, now: float, costs: Optional[dict] = None):
        self.t0 = self.t_last = now
        self.prior = PRIOR         # 0 for items counted alike: no estimate in seconds to lean on
        self.pending: dict = {}
        self.running: dict = {}    # key -> (when it started, how many run at once)
        self.queued: list = []     # a pool's jobs not started yet (lists of keys)
        self.slots: list = []      # the pool's jobs running (sets of keys)
        self.jobs = 1
        self.done, self.cost_done = 0, 0.0
        self.kinds: dict = {}      # kind -> [wall share, estimated cost] of its items done
        self._pace_last = 1.0
        self._left_last = 0.0      # the time left when the last item finished
        if costs:
            self.plan(costs)

    @property
    def total(self) -> int:
        return self.done + len(self.pending)

    def plan(self, costs: dict, now: Optional[float] = None) -> None:
        """Items still to run, key -> estimated cost in seconds (at pace 1).
        The clock starts at the first plan (what came before it is no item's)."""
        if now is not None and not self.done:
            self.t0 = self.t_last = now
        costs = {k: max(float(c), 0.0) for k, c in costs.items()}
        self._left_last += sum(self.kind_pace(kind_of(k), self._pace_last) * c
                               for k, c in costs.items() if k not in self.pending)
        self.pending.update(costs)

    def start(self, key, now: float, jobs: int = 1) -> None:
        """``key`` runs from ``now``, one of ``jobs`` sharing the machine."""
        if key in self.pending and key not in self.running:
            self.running[key] = (now, jobs)

    def queue(self, jobs_in_order: list, jobs: int, now: float) -> None:
        """A pool's jobs, started in this order, ``jobs`` at once; a job is
        a key, or a list of the keys one run finishes."""
        self.queued += [[k for k in (g if isinstance(g, list) else [g]) if k in self.pending]
                        for g in jobs_in_order]
        self.jobs = jobs
        self._fill(now)

    def _fill(self, now: float) -> None:
        self.slots = [g for g in self.slots if g & self.running.keys()]
        while self.queued and len(self.slots) < self.jobs:
            group = self.queued.pop(0)
            for k in group:
                self.start(k, now, self.jobs)
            if group:
                self.slots.append(set(group))

    def _credit(self, now: float, pace: float) -> float:
        # a cost is its share of the wall clock: one of ``jobs`` at once progresses 1/jobs as fast
        return sum(min(self.pending[k], max(0.0, now - t) / (pace * j)) for k, (t, j) in self.running.items())

    def pace(self, now: float) -> float:
        """Seconds of the clock per second of estimated cost, so far."""
        if not self.cost_done + self.prior and not self.running:
            return 1.0
        pace = self._pace_last
        for _ in range(8):          # the running items' credit depends on the pace: a fixed point
            done = self.cost_done + self._credit(now, pace) + self.prior
            pace = (now - self.t0 + self.prior) / done if done > 0 else 1.0
        return max(pace, 1e-6)

    def finish(self, key, now: float) -> None:
        """The item ``key`` finished (an unknown key: the cheapest pending one,
        or an unplanned item of the mean cost done so far)."""
        if key not in self.pending:
            key = min(self.pending, key=self.pending.get) if self.pending else None
        cost = self.pending.pop(key) if key is not None else (self.cost_done / self.done if self.done else 1.0)
        ran = self.running.pop(key, None)
        if ran is not None and kind_of(key) is not None:
            k = self.kinds.setdefault(kind_of(key), [0.0, 0.0])
            k[0] += max(0.0, now - ran[0]) / ran[1]
            k[1] += cost
        self.done += 1
        self.cost_done += cost
        self.t_last, self._pace_last = now, self.pace(now)
        self._fill(now)
        self._left_last = self._rest(now, self._pace_last)

    def count(self, done: int, total: Optional[int], now: float) -> None:
        """Items alike: ``done`` of ``total`` (a stage's tasks, a dataset's runs)."""
        if total is None:
            return
        self.prior = 0.0
        if done != self.done:
            self.t_last = now
        self.done, self.cost_done = done, float(done)
        self.pending = {i: 1.0 for i in range(done, total)}
        self.running, self.queued, self.slots = {}, [], []
        self._pace_last = self.pace(now)
        self._left_last = self._pace_last * (total - done)

    def left(self, now: float) -> Optional[float]:
        """Seconds left, or None when nothing is planned."""
        if not self.pending or not self.prior and not self.done:
            return None if not self.done else 0.0
        if self.running:        # what runs counts in part: the estimate moves with the clock
            return self._rest(now, self.pace(now))
        left = self._left_last - (now - self.t_last)
        if left > 0:
            return left
        pace = self.pace(now)
        return min(self.kind_pace(kind_of(k), pace) * c for k, c in self.pending.items())

    def kind_pace(self, kind: Optional[str], pace: float) -> float:
        """The pace of a kind of item: its items' so far, drawn toward the
        overall ``pace`` by KIND_PRIOR seconds of cost.  Before one of its
        items has finished, the overall pace shrunk toward the estimates
        (its square root: the geometric midpoint of pace and 1), since that
        pace was learned on kinds that slow down unlike it; an item of no
        kind is at the overall pace."""
        if kind is None:
            return pace
        share, cost = self.kinds.get(kind, (0.0, 0.0))
        return (share + KIND_PRIOR * pace) / (cost + KIND_PRIOR) if cost else math.sqrt(pace)

    def _rest(self, now: float, pace: float) -> float:
        """Each pending item at its kind's pace, less what the running ones have done."""
        rest = 0.0
        for k, c in self.pending.items():
            p = self.kind_pace(kind_of(k), pace) * c
            if k in self.running:
                t, j = self.running[k]
                p -= min(p, max(0.0, now - t) / j)
            rest += p
        return rest

    def rate(self, now: float) -> Optional[float]:
        """Items finished per minute so far."""
        return 60.0 * self.done / (now - self.t0) if self.done and now > self.t0 else None
