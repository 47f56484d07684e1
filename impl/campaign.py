"""What every protocol's simulated campaign shares: the fault grammar, the
round-robin workload and the drawn run sizes.

Theory of operation
-------------------
A campaign (impl/sim_<protocol>.py, driven by its conformance module's
``simulate`` and ``draw``) runs one protocol's stacks under a ``FaultPlan``
(impl/sim.py) read from a fault spec (``parse_faults``: ``loss=0.1,dup=0.05,
reorder=3,crash=1@20``; ``fault_spec`` writes one), with the application's
multicasts of ``sequencer_workload`` (each member in turn, one every
``SEND_INTERVAL``), at a size ``draw_size`` draws from a seed's RNG.  The
pieces here are protocol-free; each protocol's own environment (FLUSH's
leaves and joins, the ring's token loss) extends the grammar in its own
module.
"""

from __future__ import annotations


def parse_faults(spec: str):
    """``loss=0.1,dup=0.05,reorder=3,crash=1@20`` -> FaultPlan.  ``loss`` and
    ``dup`` are probabilities per datagram; ``reorder`` is the reordering
    window and ``crash=M@T`` crashes member M at time T, both in milliseconds
    of virtual time; ``crash`` may be repeated."""
    from .sim import FaultPlan
    kw: dict = {}
    crashes = []
    for part in filter(None, (x.strip() for x in (spec or "").split(","))):
        key, sep, val = part.partition("=")
        if not sep:
            raise ValueError(f"fault {part!r}: expected key=value")
        try:
            if key == "loss":
                kw["loss"] = float(val)
            elif key in ("dup", "duplicate"):
                kw["duplicate"] = float(val)
            elif key == "reorder":
                kw["reorder_window"] = float(val) / 1000
            elif key == "crash":
                m, at_sep, t = val.partition("@")
                crashes.append((int(m), float(t) / 1000 if at_sep else 0.0))
            else:
                raise ValueError(f"unknown fault {key!r} (loss, dup, reorder, crash)")
            bad = (key in ("loss", "dup", "duplicate") and not 0 <= float(val) <= 1) \
                or (key == "reorder" and float(val) < 0) \
                or (key == "crash" and (crashes[-1][0] < 1 or crashes[-1][1] < 0))
            if bad:
                raise ValueError("loss and dup are probabilities in [0, 1], reorder a window >= 0 ms, "
                                 "crash=M@T a member M >= 1 and a time T >= 0 ms")
        except ValueError as e:
            raise ValueError(f"fault {part!r}: {e}") from None
    return FaultPlan(crashes=tuple(crashes), **kw)


def fault_spec(loss: float = 0.0, dup: float = 0.0, reorder_s: float = 0.0, crashes=(), **more) -> str:
    """A fault spec string (``parse_faults``'s input) from values: ``crashes``
    as ``(member, seconds)``; ``more`` adds ``key=M@MS`` items (FLUSH's
    ``leave``/``join``: lists of ``(member, seconds)``)."""
    parts = [f"loss={loss:g}", f"dup={dup:g}", f"reorder={reorder_s * 1000:g}"]
    parts += [f"crash={m}@{t * 1000:g}" for m, t in crashes]
    for key, items in more.items():
        parts += [f"{key}={m}@{t * 1000:g}" for m, t in items]
    return ",".join(parts)


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
