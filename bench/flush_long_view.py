"""A flush after a long view, FLUSH's layers alone (no network, no ring):
what the members' steps cost when a view holds many messages.

    .venv/bin/python bench/flush_long_view.py [--per 18000] [--profile]

Four members of FLUSH over the ring (``Flush(membership="ring")``, tracing
deltas as a cluster node does, ``view_under_token``) each multicast
``--per`` messages, every one delivered everywhere; then member 1 is gone
from the ring's commit ``[2, 3, 4]``, member 2 holds the token, and the
three survivors flush (START_FLUSH, FLUSH_OK, FLUSH_COMPLETED, the VIEW)
with their messages passed in order.  Prints one JSON object: the view's
messages, the CPU seconds of building the view and of the flush (the three
members' steps together), and the views installed; ``--profile`` also
prints cProfile's top functions of the flush to stderr.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import platform
import pstats
import sys
import time
from collections import deque
from datetime import datetime, timezone

from groupcheck.impl.events import AppSend, Multicast, Receive, Send, SetTimer, TimerFired
from groupcheck.impl.flush import Flush, RingView

NODES = (1, 2, 3, 4)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per", type=int, default=18000, help="messages each member multicasts in the view")
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    layers = {n: Flush(n, NODES, membership="ring", tracing="delta") for n in NODES}
    for f in layers.values():
        f.view_under_token = True
    queue: deque = deque()

    def route(src, effects):
        for e in effects:
            if isinstance(e, Send):
                queue.append((e.dest, src, e.msg))
            elif isinstance(e, Multicast):
                queue.extend((d, src, e.msg) for d in layers[src].below().members if d != src)
            elif isinstance(e, SetTimer):
                queue.append((src, None, TimerFired(e.name)))

    def drain(alive, now):
        while queue:
            d, s, m = queue.popleft()
            if d in alive:
                route(d, layers[d].handle(m if s is None else Receive(s, m), now))

    c0 = time.process_time()
    for _ in range(a.per):
        for s in NODES:
            route(s, layers[s].handle(AppSend(b"x" * 20), 0.0))
        drain(set(NODES), 0.0)
    c1 = time.process_time()
    alive = {2, 3, 4}
    prof = cProfile.Profile() if a.profile else None
    if prof:
        prof.enable()
    for n in sorted(alive):       # node 1 gone from the ring's commit; node 2 holds the token
        route(n, layers[n].handle(RingView((2, 3, 4), (2, 3, 4), 2, n == 2, 1), 1.0))
    drain(alive, 1.0)
    if prof:
        prof.disable()
        pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(20)
    c2 = time.process_time()
    print(json.dumps({"bench": "flush_long_view", "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                      "machine": {"platform": platform.platform(), "python": platform.python_version()},
                      "messages_in_view": a.per * len(NODES), "view_cpu_s": round(c1 - c0, 2),
                      "flush_cpu_s": round(c2 - c1, 2), "views": {n: layers[n].vid for n in sorted(alive)}}))


if __name__ == "__main__":
    main()
