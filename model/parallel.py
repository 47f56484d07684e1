"""Multi-process breadth-first exploration: each state expanded where it was
found, its fingerprint kept by an owner.

Theory of operation
-------------------
``explore_parallel(model, workers=W)`` forks W worker processes and searches
level by level (breadth-first, like :func:`groupcheck.model.core.explore`).
A state's **fingerprint** is its hash (64 bits); worker ``i`` **owns** the
fingerprints ``f`` with ``f % W == i`` and keeps them in its visited set.
A state is expanded by the worker that **found** it, not by its owner, so a
state travels between processes only as its fingerprint, and the successors
of a state stay with the worker whose kernel memo already knows their parts
(the ring of a composition, a STABLE member's merges).  One level:

1. every worker takes over the states the parent moves to it (below), then
   expands its frontier; a successor it owns is deduplicated at once; for
   a successor owned by another worker it sends the owner a **claim** (the
   fingerprint), at most once per fingerprint;
2. every owner answers the claims it received, in worker order, after its
   own new states: a claim wins if the fingerprint is new (it is then
   owned), and the claiming worker puts the state in its next frontier;
3. every worker reports the size of its next frontier; the parent, seeing
   them all, tells the larger frontiers to move states to the smaller ones
   at the start of the next level (a moved state travels whole, each
   variable's value numbered and sent once per destination), so the
   workers stay balanced whoever found what.

Claims, answers and moves are routed through the parent (a worker never
writes to another, so no two processes block on each other's pipes).  The
search ends when a level adds no state anywhere.  Each level's set of
states is a property of the model, so the distinct-state count, the number
of states generated and the depth equal :func:`explore`'s whatever the
worker count and the timing (tests/test_explore_engine.py); which worker
expands which state depends on W and on the moves.

Fingerprints, as TLC's.  Two distinct states with one hash would be taken
for one: the parallel search counts fingerprints, the serial explorer (the
one that builds graphs and counterexamples, docs/architecture.md) compares states.
Like TLC the result reports the chance of such a collision (``collision
probability``: distinct x generated / 2^64, TLC's "optimistic" estimate
of the same quantity): STABLE Rounds4, 1.18 million states, 5.9e-7.  The hashes agree
across processes: the workers are forked (the ``fork`` start method, POSIX
only), so they share the parent's string-hash seed, and every value's hash
is a function of its content and of type objects the forked processes share.

Why not ship each state to its owner (the design before): with the kernels
a state is expanded in 5-20 us, and shipping one cost 2-5 us at each end,
on about half the states; a worker's kernel memo was also rebuilt for
every part of the space, since the owner of a state is unrelated to the
worker that found its parent.  Measured in docs/benchmarks.md ("The
multi-process explorer: fingerprints and claims").

Scope: counting (distinct states, generated, depth) and, optionally,
invariants; no graph and no counterexample path (the serial explorer gives
those).  With invariants on, the first level that has a violating state is
finished by every worker and the invariant violated by the state that comes
first in a fixed order (the smallest by invariant order, then by the
state's repr) is reported, so the answer is deterministic too; the counts
then cover that whole level (the serial explorer stops at the violating
state itself).  A model with a kernel (:class:`groupcheck.model.core.Kernel`)
is searched in the kernel's encoding; the invariants are evaluated on
decoded states.  A worker leaves with ``os._exit`` once it has answered, so
nobody waits for its visited set to be freed object by object.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import resource
import time
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import compress

from .core import Model, State, active_invariants, no_cyclic_gc, search_parts
from .values import interning

_EXPAND, _STOP = "expand", "stop"
_MIN_MOVE = 32      # a frontier this much above its share moves the excess


@dataclass
class ParallelResult:
    distinct_states: int
    states_generated: int
    depth: int
    seconds: float
    workers: int
    violated: str | None = None          # name of a violated invariant, if any
    violating_state: State | None = None
    moved: int = 0                       # states moved between workers to balance them
    worker_cpu_seconds: tuple = ()       # each worker's CPU time (its balance; what the machine took)
    worker_peak_kib: tuple = ()          # each worker's peak resident memory (KiB)
    worker_start_kib: tuple = ()         # each worker's resident memory at its start (KiB):
                                         # the pages it shares with the parent since the fork

    @property
    def collision_probability(self) -> float:
        """The chance that two distinct states shared a fingerprint (TLC's
        optimistic estimate: distinct x generated / 2^64)."""
        return self.distinct_states * self.states_generated / 2.0 ** 64


def _resident_kib() -> tuple[int, int]:
    """(resident now, peak resident) in KiB.  On Linux the peak is VmHWM,
    which _worker resets at its start (a forked child otherwise inherits
    the parent's high-water mark); elsewhere ru_maxrss for both."""
    try:
        with open("/proc/self/status") as f:
            v = dict(line.split(":", 1) for line in f if line.startswith(("VmRSS", "VmHWM")))
        return int(v["VmRSS"].split()[0]), int(v["VmHWM"].split()[0])
    except (OSError, KeyError, ValueError):
        k = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return k, k


def _worker(model: Model, me: int, W: int, conn, active) -> None:
    try:  # reset the peak resident size, so that it is this worker's own
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    start_kib = _resident_kib()[0]
    with interning(), no_cyclic_gc():
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

        def exchange(payloads: list) -> list:
            """Send one payload per other worker (in worker order), receive one
            from each (in worker order), through the parent."""
            for o in range(W):
                if o != me:
                    conn.send_bytes(payloads[o])
            return [conn.recv_bytes() if o != me else b"" for o in range(W)]

        owned: set = set()      # the fingerprints this worker owns that were reached
        claimed: set = set()    # fingerprints this worker has claimed from their owners
        encoders: list[dict] = [{} for _ in range(W)]   # value -> number, per destination (moves)
        decoders: list[list] = [[] for _ in range(W)]   # number -> value, per source
        generated = 0
        frontier: list = []
        cls = None
        for s in initial:
            cls = type(s)
            if me == 0:
                generated += 1
            h = hash(s)
            if not constraint(s) or h % W != me or h in owned:
                continue
            owned.add(h)
            frontier.append(s)
            if active:
                check(s)
        conn.send((len(frontier), _first(bad, active)))
        while True:
            cmd = conn.recv()
            if cmd == _STOP:
                conn.send((generated, time.process_time(), _resident_kib()[1], start_kib))
                conn.close()
                # Leave without freeing the visited set object by object: for a
                # big model that teardown took as long as a tenth of the search.
                os._exit(0)
            _, moves = cmd
            # 0. balance: move states as the parent says (moves[o]: how many to o)
            out = [b""] * W
            for o, n in enumerate(moves):
                if n:
                    out[o] = _encode(frontier[-n:], encoders[o])
                    del frontier[-n:]
            for o, payload in enumerate(exchange(out)):
                if payload:
                    frontier += _decode(payload, decoders[o], cls)
            # 1. expand; own successors deduplicated here, the others claimed
            nxt: list = []
            claims: list[list] = [[] for _ in range(W)]       # states claimed, per owner
            claims_h: list[array] = [array("q") for _ in range(W)]   # and their fingerprints
            for s in frontier:
                for _lab, t in successors(s):
                    generated += 1
                    h = hash(t)
                    o = h % W
                    if o == me:
                        if h in owned:
                            continue
                    elif h in claimed:
                        continue
                    # Reached states satisfy the CONSTRAINT (no other is kept
                    # or claimed), so only a new one needs the check.
                    if constrained and not constraint(t):
                        if active:
                            check(t)
                        continue
                    if o == me:
                        owned.add(h)
                        nxt.append(t)
                        if active:
                            check(t)
                    else:
                        claimed.add(h)
                        claims[o].append(t)
                        claims_h[o].append(h)
            frontier = []
            # 2. claims to their owners; answer the others' (one byte each)
            asked = exchange([c.tobytes() for c in claims_h])
            answers = [b""] * W
            for o, payload in enumerate(asked):
                if o == me:
                    continue
                # a worker claims a fingerprint once, so one claimant's list has
                # no repeats: its new ones are a set difference (in C), and the
                # claimants are answered in worker order (the first one wins)
                hs = array("q", payload)
                new = set(hs).difference(owned)
                owned.update(new)
                answers[o] = bytes(map(new.__contains__, hs))
            for o, payload in enumerate(exchange(answers)):
                if o == me:
                    continue
                won = list(compress(claims[o], payload))
                nxt += won
                if active:
                    for t in won:
                        check(t)
            del claims, claims_h
            frontier = nxt
            conn.send((len(frontier), _first(bad, active)))


def _encode(states: list, enc: dict) -> bytes:
    """States moved to one destination: each variable's value is sent once
    per destination and numbered (``enc``, kept across levels); a state
    travels as the tuple of its values' numbers."""
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
    return pickle.dumps((fresh, rows), protocol=pickle.HIGHEST_PROTOCOL)


def _decode(payload: bytes, dec: list, cls: type) -> list:
    fresh, rows = pickle.loads(payload)
    dec.extend(fresh)
    get = dec.__getitem__
    new = tuple.__new__
    return [new(cls, map(get, row)) for row in rows]


def _first(bad: list, active) -> tuple[str, State] | None:
    """The violation that comes first in a fixed order (invariant order, then
    the state's repr), so the report does not depend on timing."""
    if not bad:
        return None
    k, t = min(bad, key=lambda kt: (kt[0], repr(kt[1])))
    return active[k][0], t


def _moves(sizes: list[int]) -> list[list[int]]:
    """How many states each worker moves to each other so that every
    frontier is within ``_MIN_MOVE`` of an even share: the largest surplus
    fills the largest deficit first."""
    W = len(sizes)
    share, extra = divmod(sum(sizes), W)
    target = [share + (i < extra) for i in range(W)]
    moves = [[0] * W for _ in range(W)]
    give = sorted(((sizes[i] - target[i], i) for i in range(W) if sizes[i] - target[i] > _MIN_MOVE), reverse=True)
    need = sorted(((target[i] - sizes[i], i) for i in range(W) if target[i] > sizes[i]), reverse=True)
    for surplus, i in give:
        while surplus > 0 and need:
            deficit, j = need[0]
            n = min(surplus, deficit)
            moves[i][j] += n
            surplus -= n
            if n == deficit:
                need.pop(0)
            else:
                need[0] = (deficit - n, j)
    return moves


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
    names = [n for n, _ in active]
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

        def gather() -> tuple[list[int], tuple | None]:
            sizes, found = [], []
            for c in conns:
                n, v = c.recv()
                sizes.append(n)
                if v is not None:
                    found.append(v)
            first = min(found, key=lambda v: (names.index(v[0]), repr(v[1]))) if found else None
            return sizes, first

        def route() -> None:
            """One all-to-all exchange: each worker's payload for each other."""
            inbox: list[list[bytes]] = [[] for _ in range(workers)]
            for i, c in enumerate(conns):
                for o in range(workers):
                    if o != i:
                        inbox[o].append(c.recv_bytes())
            for o, c in enumerate(conns):
                for payload in inbox[o]:
                    c.send_bytes(payload)

        sizes, violation = gather()
        distinct = sum(sizes)
        depth = 1 if distinct else 0
        moved = 0
        while sum(sizes) and violation is None:
            plan = _moves(sizes)
            moved += sum(map(sum, plan))
            for c, row in zip(conns, plan):
                c.send((_EXPAND, row))
            for _ in range(3):      # moves, claims, answers
                route()
            sizes, violation = gather()
            distinct += sum(sizes)
            if sum(sizes):
                depth += 1
        for c in conns:
            c.send(_STOP)
        finals = [c.recv() for c in conns]
        generated = sum(f[0] for f in finals)
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
        moved=moved,
        worker_cpu_seconds=tuple(round(f[1], 3) for f in finals),
        worker_peak_kib=tuple(f[2] for f in finals),
        worker_start_kib=tuple(f[3] for f in finals),
    )
