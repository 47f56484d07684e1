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
