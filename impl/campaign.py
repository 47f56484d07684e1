"""What every protocol's simulated campaign shares: the fault grammar, the
round-robin workload and the drawn run sizes.

Theory of operation
-------------------
A campaign (impl/sim_<protocol>.py, driven by its conformance module's
``simulate`` and ``draw``) runs one protocol's stacks under a ``FaultPlan``
read from the one fault grammar (impl/faults.py ``parse_faults``;
SEQUENCER, STABLE and SEQUENCER over FLUSH take its network and crash
items, ``loss=0.1,dup=0.05,reorder=3,crash=1@20``; ``fault_spec`` writes
one), with the application's
multicasts of ``sequencer_workload`` (each member in turn, one every
``SEND_INTERVAL``), at a size ``draw_size`` draws from a seed's RNG.  The
pieces here are protocol-free; a protocol whose environment has more
(FLUSH's leaves and joins, the ring's recoveries and token losses) reads
those items of the same grammar in its own module.
"""

from __future__ import annotations

from .faults import fault_spec  # noqa: F401  (the draws' text)


def draw_size(rng, n_choices=(3, 4, 5), messages=(1, 3)) -> tuple[int, int, float]:
    """(members, multicasts per member, the time the last send is issued)."""
    n = rng.choice(n_choices)
    per = rng.randint(*messages)
    return n, per, n * per * SEND_INTERVAL


SEND_INTERVAL = 0.01   # one application multicast every 10 ms, members in turn


def sequencer_workload(n: int, per_member: int) -> list[tuple[float, int, bytes]]:
    """``per_member`` multicasts by each of members 1..n, round robin."""
    return [(k * SEND_INTERVAL, 1 + k % n, f"m{1 + k % n}.{1 + k // n}".encode())
            for k in range(n * per_member)]
