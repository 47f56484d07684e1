"""Multi-process breadth-first exploration: the state space partitioned by hash.

Theory of operation
-------------------
``explore_parallel(model, workers=W)`` forks W worker processes.  Worker
``i`` owns the states whose ``hash(state) % W`` is ``i``: it alone keeps
them in its visited set and expands them.  The search goes level by level
(breadth-first, like :func:`groupcheck.model.core.explore`):

1. every worker expands its frontier (the new states it owns from the last
   level); a successor it owns is deduplicated at once, a successor owned by
   another worker goes into that worker's outbox;
2. the outboxes are pickled, one batch per destination, and routed through
   the parent process (a worker never writes to another, so no two
   processes can block on each other's pipes);
3. every worker deduplicates what it received; its new states are the next
   frontier; it reports their number.

The search ends when a level adds no state anywhere.  Each level's set of
states is a property of the model (breadth-first levels are unique), so the
distinct-state count, the number of states generated and the depth are
deterministic and equal :func:`explore`'s whatever the worker count and the
timing; only which worker holds which state depends on W.

Hashes must agree across processes: the workers are forked (the ``fork``
start method, POSIX only), so they share the parent's string-hash seed, and
every value's hash is a function of its content and of type objects the
forked processes share (``Fn`` hashes its values and their types,
``ModelValue`` its name).  Each successor is hashed once: a worker's
visited and shipped sets are dicts keyed by the hash (a state whose hash
another state already has goes into a small set beside them), and a
shipped state travels with its hash, so its owner does not compute it
again (a kernel state's hash is not cached and costs 0.15-0.8 us, a tenth
to a quarter of a successor's cost).  A batch travels compactly: a worker
numbers the variable values it sends to each destination and sends each
value once, a state as a tuple of numbers; a worker ships a state at most
once (it remembers what it sent); unpickled functions are re-interned
(:func:`groupcheck.model.values.interning`) on arrival.  A model with a
kernel (:class:`groupcheck.model.core.Kernel`) is searched, and its states
shipped, in the kernel's encoding (plain values that hash alike in every
forked process; numbered like any other: shipping kernel states as plain
pickles was no faster, docs/benchmarks.md); the invariants are evaluated
on decoded states.  A worker leaves with ``os._exit`` once it has answered, so
nobody waits for its visited set to be freed object by object.

Scope: counting (distinct states, generated, depth) and, optionally,
invariants; no graph and no counterexample path (the serial explorer gives
those).  With invariants on, the first level that has a violating state is
finished by every worker and the invariant violated by the state that comes
first in a fixed order (the smallest by invariant order, then by the
state's repr) is reported, so the answer is deterministic too; the counts
then cover that whole level (the serial explorer stops at the violating
state itself).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import time
from collections.abc import Iterable
from dataclasses import dataclass

from .core import Model, State, active_invariants, no_cyclic_gc, search_parts
from .values import interning

_EXPAND, _STOP = "expand", "stop"


@dataclass
class ParallelResult:
    distinct_states: int
    states_generated: int
    depth: int
    seconds: float
    workers: int
    violated: str | None = None          # name of a violated invariant, if any
    violating_state: State | None = None


def _worker(model: Model, me: int, W: int, conn, active) -> None:
    with interning(), no_cyclic_gc():
        frontier: list = []
        generated = 0
        # the model's fast encoding (core.Kernel) when it has one: kernel
        # states are searched and shipped, decoded only for the invariants
        kern = model.kernel()
        constrained, constraint, successors, initial, decode = search_parts(model, kern)
        bad: list = []   # (invariant index, state) violations found this level

        def check(t) -> None:
            if decode is not None:
                t = decode(t)
            for k, (_name, pred) in enumerate(active):
                if not pred(t):
                    bad.append((k, t))
                    return

        encoders: list[dict] = [{} for _ in range(W)]   # value -> number, per destination
        decoders: list[list] = [[] for _ in range(W)]   # number -> value, per source
        # The visited and shipped sets are dicts keyed by the state's hash:
        # the owner is a function of that hash, so each successor is hashed
        # once (a set would hash it again).  A state whose hash another
        # state already has (rare) is kept in ``clash`` instead.
        seen: dict = {}       # hash -> state, the states this worker owns
        sent: dict = {}       # hash -> state, the states it has shipped to their owners
        clash: set = set()

        def admit(h: int, t) -> bool:
            """Own state ``t`` (hash ``h``) if it is new: True, and it is kept."""
            x = seen.get(h)
            if x is not None and (x == t or t in clash):
                return False
            if x is None:
                seen[h] = t
            else:
                clash.add(t)
            return True

        cls = None
        for s in initial:
            cls = type(s)
            if me == 0:
                generated += 1
            h = hash(s)
            if not constraint(s) or h % W != me or not admit(h, s):
                continue
            frontier.append(s)
            if active:
                check(s)
        conn.send((len(frontier), _first(bad, active)))
        while True:
            cmd = conn.recv()
            if cmd == _STOP:
                conn.send(generated)
                conn.close()
                # Leave without freeing the visited set object by object: for a
                # big model that teardown took as long as a tenth of the search
                # (Raincore Cold3, 0.8 s of 3.5 s), and the parent waits for it.
                os._exit(0)
            outs: list[list] = [[] for _ in range(W)]
            hashes: list[list] = [[] for _ in range(W)]
            nxt: list = []
            for s in frontier:
                for _lab, t in successors(s):
                    generated += 1
                    h = hash(t)
                    o = h % W
                    known = seen if o == me else sent
                    x = known.get(h)
                    # Visited and shipped states satisfy the CONSTRAINT (no other
                    # is kept or shipped), so only a new one needs the check.
                    if x is not None and (x == t or t in clash):
                        continue
                    if constrained and not constraint(t):
                        if active:
                            check(t)
                        continue
                    if x is None:
                        known[h] = t
                    else:
                        clash.add(t)
                    if o != me:
                        outs[o].append(t)   # each foreign state is shipped once
                        hashes[o].append(h)
                        continue
                    nxt.append(t)
                    if active:
                        check(t)
            for o in range(W):
                if o != me:
                    conn.send_bytes(_encode(outs[o], hashes[o], encoders[o]))
            del outs, hashes
            for o in range(W):
                if o == me:
                    continue
                for h, t in _decode(conn.recv_bytes(), decoders[o], cls):
                    if not admit(h, t):
                        continue
                    nxt.append(t)
                    if active:
                        check(t)
            frontier = nxt
            conn.send((len(frontier), _first(bad, active)))


def _encode(states: list, hashes: list, enc: dict) -> bytes:
    """A batch of states for one destination, with their hashes: each
    variable's value is sent once per destination and numbered (``enc``,
    kept across levels); a state travels as the tuple of its values'
    numbers."""
    fresh: list = []
    rows = []
    for t in states:
        row = []
        for v in t:
            i = enc.get(v)
            if i is None:
                i = enc[v] = len(enc)
                fresh.append(v)
            row.append(i)
        rows.append(tuple(row))
    return pickle.dumps((fresh, hashes, rows), protocol=pickle.HIGHEST_PROTOCOL)


def _decode(payload: bytes, dec: list, cls: type):
    fresh, hashes, rows = pickle.loads(payload)
    dec.extend(fresh)
    get = dec.__getitem__
    new = tuple.__new__
    return zip(hashes, [new(cls, map(get, row)) for row in rows])


def _first(bad: list, active) -> tuple[str, State] | None:
    """The violation that comes first in a fixed order (invariant order, then
    the state's repr), so the report does not depend on timing."""
    if not bad:
        return None
    k, t = min(bad, key=lambda kt: (kt[0], repr(kt[1])))
    return active[k][0], t


def explore_parallel(
    model: Model,
    *,
    workers: int = 2,
    check_invariants: bool | Iterable[str] = False,
) -> ParallelResult:
    """Breadth-first search of the model's reachable states over ``workers``
    forked processes; see the module docstring."""
    if workers < 1:
        raise ValueError("workers must be at least 1")
    t0 = time.perf_counter()
    active = active_invariants(model, check_invariants)
    ctx = mp.get_context("fork")
    conns, procs = [], []
    try:
        for i in range(workers):
            parent_end, child_end = ctx.Pipe()
            p = ctx.Process(target=_worker, args=(model, i, workers, child_end, active), daemon=True)
            p.start()
            child_end.close()
            conns.append(parent_end)
            procs.append(p)

        def gather() -> tuple[int, tuple | None]:
            total, found = 0, []
            for c in conns:
                n, v = c.recv()
                total += n
                if v is not None:
                    found.append(v)
            first = min(found, key=lambda v: ([n for n, _ in active].index(v[0]), repr(v[1]))) if found else None
            return total, first

        distinct, violation = gather()
        depth = 1 if distinct else 0
        new = distinct
        while new and violation is None:
            for c in conns:
                c.send(_EXPAND)
            inbox: list[list[bytes]] = [[] for _ in range(workers)]
            for i, c in enumerate(conns):
                for o in range(workers):
                    if o != i:
                        inbox[o].append(c.recv_bytes())
            for o, c in enumerate(conns):
                for payload in inbox[o]:
                    c.send_bytes(payload)
            del inbox
            new, violation = gather()
            distinct += new
            if new:
                depth += 1
        for c in conns:
            c.send(_STOP)
        generated = sum(c.recv() for c in conns)
        for p in procs:
            p.join()
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
                p.join()
        for c in conns:
            c.close()
    return ParallelResult(
        distinct_states=distinct,
        states_generated=generated,
        depth=depth,
        seconds=time.perf_counter() - t0,
        workers=workers,
        violated=violation[0] if violation else None,
        violating_state=violation[1] if violation else None,
    )
