"""The fault plan and its one grammar, for every protocol, the CLI, the
campaigns and the cluster.

Theory of operation
-------------------
A run's faults are a ``FaultPlan``, the one plan type of every simulator:
how the network treats each datagram (``loss``, ``duplicate``,
``reorder_window``, ``delay``, ``truncate``), the membership oracle's
delays, the ring's Transport Manager's latency, and the environment's actions at planned
times (``crashes``, ``recoveries``, ``joins``, ``leaves``: ``(node,
seconds)``; ``token_losses``: seconds).  Each simulator takes what its spec
has and refuses the rest (``FaultPlan.only``); a trace header holds the
whole plan (``to_json``).

The text form, the same on the command line, in the campaigns and the
tests, is a comma-separated list of items, times in milliseconds::

    loss=P  dup=P  reorder=MS  truncate=P  crash=N@MS  recover=N@MS
    join=N@MS  leave=N@MS  tokenloss=MS  late911=MS

``P`` is a probability in [0, 1]; ``N`` a node id >= 1; ``MS`` a time >= 0.
``truncate=P`` cuts a datagram short with probability P (it arrives with
its tail missing): the receiver's codec must count and drop it, so to the
protocol it is a lost datagram.  ``late911=MS`` is the ring's: each 911
takes up to MS longer on its Transport Manager (uniform), so a claim can
come home after its originator has held a newer token (the spec's
Timely911 is not assumed).  The action items repeat.  A bad item is refused with one message naming
it (``crash=banana: expected NODE@TIME``), before the caller does any work.
``groupcheck cluster run --kill N@SECONDS`` reads the same ``NODE@TIME``
form (``node_at``), in seconds of real time.

``auto`` asks for a plan drawn from the run's seed, ``auto,ITEMS`` for the
drawn plan with the items added; ``parse_faults`` reads it for every
protocol, and the protocol gives the draw (its ``draw`` hook: its own
mix of crashes, joins and token losses, and its seed's salt).  A protocol
without a hook refuses ``auto``.  Each protocol's conformance module reads
its fault text with one function of one signature, ``fault_plan(faults,
seed, options)`` (its items, its hook, its checks), which the registry
holds (conformance/replay/registry.py ``Protocol.fault_plan``): the CLI parses a
run's text once there and hands the plan to the simulator.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Callable, Iterable, Optional

# item -> (the plan's field, the item's form)
ITEMS = {
    "loss": ("loss", "P"), "dup": ("duplicate", "P"), "reorder": ("reorder_window", "MS"),
    "crash": ("crashes", "N@MS"), "recover": ("recoveries", "N@MS"), "join": ("joins", "N@MS"),
    "leave": ("leaves", "N@MS"), "tokenloss": ("token_losses", "MS"), "truncate": ("truncate", "P"),
    "late911": ("late_911", "MS"),
}
NETWORK = ("loss", "dup", "reorder", "truncate")
ITEM_FIELDS = tuple(name for name, _ in ITEMS.values())


@dataclass(frozen=True)
class FaultPlan:
    loss: float = 0.0                       # probability a datagram is lost
    duplicate: float = 0.0                  # probability it arrives twice
    reorder_window: float = 0.0             # extra uniform jitter, seconds
    delay: tuple[float, float] = (0.001, 0.005)   # base latency range
    crashes: tuple[tuple[int, float], ...] = ()   # (member, time)
    detect_delay: float = 0.05              # crash -> oracle decides the view
    install_delay: tuple[float, float] = (0.0, 0.02)  # view decided -> installed at a member
    recoveries: tuple[tuple[int, float], ...] = ()    # (node, time): a crashed node restarts
    joins: tuple[tuple[int, float], ...] = ()         # (node, time): a node outside the group asks in
    leaves: tuple[tuple[int, float], ...] = ()        # (member, time): a graceful leave
    token_losses: tuple[float, ...] = ()              # the next token sent at or after each time is lost
    ring_delay: tuple[float, float] = (0.001, 0.003)  # the ring's Transport Manager: a message's latency
    truncate: float = 0.0                   # probability a datagram arrives cut short
    late_911: float = 0.0                   # the ring: a 911's extra uniform delay, seconds

    def __post_init__(self):
        times = [t for _, t in self.crashes + self.recoveries + self.joins + self.leaves] + list(self.token_losses)
        if not (0 <= self.loss < 1 and 0 <= self.duplicate <= 1 and 0 <= self.truncate <= 1
                and self.reorder_window >= 0 and self.late_911 >= 0
                and 0 <= self.delay[0] <= self.delay[1] and self.detect_delay >= 0
                and 0 <= self.install_delay[0] <= self.install_delay[1] and all(t >= 0 for t in times)
                and 0 <= self.ring_delay[0] <= self.ring_delay[1]):
            raise ValueError(f"bad fault plan: {self}")

    @property
    def last(self) -> float:
        """The time of the last planned action (0 without any)."""
        times = [t for _, t in self.crashes + self.recoveries + self.joins + self.leaves] + list(self.token_losses)
        return max(times, default=0.0)

    def only(self, items: Iterable[str], protocol: str) -> "FaultPlan":
        """Refuse the items ``protocol``'s environment does not have (``items``:
        the grammar's names); the plan itself when all is well."""
        items = set(items)
        for key, (name, _) in ITEMS.items():
            if key not in items and getattr(self, name) != getattr(FaultPlan, name):
                raise ValueError(f"{key}: {protocol} has no such fault (it takes {', '.join(sorted(items))})")
        return self

    def plus(self, other: "FaultPlan") -> "FaultPlan":
        """This plan with ``other``'s items added: its actions after these,
        each network value it sets (not its default) in place of this one's."""
        kw = {}
        for name in ITEM_FIELDS:
            mine, theirs = getattr(self, name), getattr(other, name)
            if isinstance(mine, tuple):
                kw[name] = mine + theirs
            elif theirs != getattr(FaultPlan, name):
                kw[name] = theirs
        return replace(self, **kw)

    def to_json(self) -> dict:
        """The plan as a trace header's ``faults``: every field, one shape for every protocol."""
        return {k: [list(x) if isinstance(x, tuple) else x for x in v] if isinstance(v, tuple) else v
                for k, v in asdict(self).items()}


def fates(rng, plan: FaultPlan, payload, now: float = 0.0) -> list[tuple[float, Any, bool]]:
    """One datagram's fate under ``plan``'s network faults, for the simulated
    network (impl/sim.py) and the real one (impl/runtime.py ``FaultyNetwork``)
    alike: the copies that arrive, each ``(when, payload as it arrives, cut
    short)``, ``when`` being ``now`` plus its delay; none when it is lost.  ``rng``'s draws come in one fixed order:
    loss, duplication, then per copy its delay (``uniform(delay)`` then
    ``uniform(0, reorder_window)``) and, only with ``truncate`` above 0 and a
    bytes payload, whether it is cut and where (a tail of 1 byte to all of it
    goes), so a plan without ``truncate`` draws what it always drew."""
    if rng.random() < plan.loss:
        return []
    out = []
    for _ in range(2 if rng.random() < plan.duplicate else 1):
        when = now + rng.uniform(*plan.delay) + rng.uniform(0, plan.reorder_window)
        cut = bool(plan.truncate and isinstance(payload, (bytes, bytearray)) and payload
                   and rng.random() < plan.truncate)
        out.append((when, bytes(payload[:rng.randrange(len(payload))]) if cut else payload, cut))
    return out


def crashed_members(faults: dict) -> set[int]:
    """The members a run's fault plan (a trace header's ``faults``) crashes:
    the simulator's ``crashes`` (``[node, time]`` items) and a real run's
    ``kills`` (the cluster's ``[node, seconds]``, JGroups's member ids)."""
    out = {int(c[0]) for c in faults.get("crashes") or ()}
    return out | {int(k[0]) if isinstance(k, (list, tuple)) else int(k) for k in faults.get("kills") or ()}


def fault_kinds(faults: dict) -> set[str]:
    """The kinds of fault a plan holds, from its JSON form (a trace header's
    ``faults``): ``crash:coordinator`` (node 1, every protocol's first
    coordinator, founder or sequencer), ``crash:other``, ``crash:none``,
    and the name of every other item it uses (``recover``, ``join``,
    ``leave``, ``tokenloss``, ``truncate``, ``late911``; ``loss``, ``dup``,
    ``reorder``).  The audit stratifies its TLC sample by them."""
    crashed = crashed_members(faults)
    kinds = {"crash:coordinator"} if 1 in crashed else set()
    kinds |= {"crash:other"} if crashed - {1} else set() if crashed else {"crash:none"}
    default = FaultPlan().to_json()
    return kinds | {key for key, (name, _) in ITEMS.items()
                    if key != "crash" and faults.get(name, default[name]) != default[name]}


def node_at(item: str, text: str, unit: float = 0.001) -> tuple[int, float]:
    """``N@TIME`` (``text``, of the item ``item``) -> (node, seconds); TIME in
    ``unit`` seconds (milliseconds by default)."""
    node, sep, at = text.partition("@")
    try:
        n, t = int(node), float(at)
    except ValueError:
        raise ValueError(f"{item}: expected NODE@TIME") from None
    if not sep or n < 1 or t < 0:
        raise ValueError(f"{item}: expected NODE@TIME, a node >= 1 and a time >= 0")
    return n, t * unit


NETWORK_AND_CRASH = NETWORK + ("crash",)    # what SEQUENCER, STABLE and SEQUENCER over FLUSH take


def parse_faults(text, items: Iterable[str] = tuple(ITEMS), protocol: str = "this protocol", *,
                 draw: Optional[Callable[[], "FaultPlan"]] = None, **plan) -> FaultPlan:
    """The grammar's text -> FaultPlan; ``items``: the ones ``protocol`` takes
    (any other is refused, naming it); ``draw``: the protocol's hook for
    ``auto`` (a plan drawn from the run's seed; ``auto,ITEMS`` adds the
    items to it); ``plan``: fields the text does not set (e.g. a network's
    delay).  A FaultPlan (text parsed before) is returned as it is."""
    if isinstance(text, FaultPlan):
        return text
    items = tuple(items)
    head, _, rest = (text or "").strip().partition(",")
    if head.strip() == "auto":
        if draw is None:
            raise ValueError(f"auto: {protocol} draws no fault plan; write its items "
                             f"({', '.join(items)})")
        return draw().plus(parse_faults(rest, items, protocol, **plan))
    kw: dict = {}
    for item in filter(None, (x.strip() for x in (text or "").split(","))):
        key, sep, val = item.partition("=")
        if not sep or key not in ITEMS:
            raise ValueError(f"{item}: expected KEY=VALUE, KEY one of {', '.join(ITEMS)}")
        if key not in items:
            raise ValueError(f"{item}: {protocol} has no such fault (it takes {', '.join(items)})")
        name, form = ITEMS[key]
        if form == "N@MS":
            kw.setdefault(name, []).append(node_at(item, val))
            continue
        try:
            x = float(val)
        except ValueError:
            raise ValueError(f"{item}: expected {key}={form}") from None
        if form == "P" and not 0 <= x <= 1 or key == "loss" and x == 1 or form == "MS" and x < 0:
            raise ValueError(f"{item}: expected {key}={form}, " + (
                "a probability in [0, 1)" if key == "loss" else "a probability in [0, 1]" if form == "P"
                else "a time >= 0 ms"))
        if key == "tokenloss":
            kw.setdefault(name, []).append(x / 1000)
        else:
            kw[name] = x / 1000 if form == "MS" else x
    return FaultPlan(**{**plan, **{k: tuple(v) if isinstance(v, list) else v for k, v in kw.items()}})


def plan_reader(items: Iterable[str], protocol: str) -> Callable[..., FaultPlan]:
    """The ``fault_plan(faults, seed, options)`` of a protocol that takes
    ``items`` and draws no plan (``auto`` refused)."""
    items = tuple(items)

    def fault_plan(faults, seed: int = 0, options: Optional[dict] = None) -> FaultPlan:
        return parse_faults(faults, items, protocol)
    fault_plan.__doc__ = f"A run's fault plan (impl/faults.py): {protocol}'s items, {', '.join(items)}."
    return fault_plan


def fault_spec(loss: float = 0.0, dup: float = 0.0, reorder_s: float = 0.0, crashes=(), **more) -> str:
    """The grammar's text for values: ``crashes`` as ``(member, seconds)``;
    ``more`` adds ``key=N@MS`` items (``leave=``, ``join=``: lists of
    ``(member, seconds)``)."""
    parts = [f"loss={loss:g}", f"dup={dup:g}", f"reorder={reorder_s * 1000:g}"]
    parts += [f"crash={m}@{t * 1000:g}" for m, t in crashes]
    for key, items in more.items():
        parts += [f"{key}={m}@{t * 1000:g}" for m, t in items]
    return ",".join(parts)



def kills_and_senders(n: int, kills, senders, who: str = "node") -> list[int]:
    """Check a real run's kill plan (``(member, time)`` pairs, each member at
    most once, one left alive) and its senders against members 1..n, for our
    cluster and JGroups's alike; the senders (default: every member), sorted.
    Raises ValueError naming the option."""
    for m, _ in kills:
        if not 1 <= m <= n:
            raise ValueError(f"--kill {m}@…: no {who} {m} in 1..{n}")
    if len({m for m, _ in kills}) != len(kills) or len(kills) >= n:
        raise ValueError(f"--kill: each {who} at most once, and one {who} must survive")
    chosen = sorted(set(senders)) if senders else list(range(1, n + 1))
    bad = [s for s in chosen if not 1 <= s <= n]
    if bad:
        raise ValueError(f"--senders: no {who} {bad[0]} in 1..{n}")
    return chosen
