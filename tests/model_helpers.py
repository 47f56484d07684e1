"""What the model tests share: a model's one initial state, its steps picked
by action and parameters (a step asserting it is the only one so picked),
and a manifest model explored against its pinned count."""
from __future__ import annotations

from groupcheck.model import manifest
from groupcheck.model.core import explore
from groupcheck.model.link import build_model

# the ring's actions in the compositions over Raincore
RING = ("TokenReceived", "EatingTimeout", "TokenDeliveryFailure", "911Received", "911DeliveryFailure")


def init(m):
    (s,) = list(m.init())
    return s


def picked(m, s, action, *params, exact: bool = False) -> list:
    """(label, successor) of ``s`` by ``action`` with ``params``: all of the
    label's parameters when ``exact``, else its first ones."""
    return [(lab, t) for lab, t in m.next(s)
            if lab.action == action and (lab.params if exact else lab.params[: len(params)]) == params]


def step(m, s, action, *params, exact: bool = False):
    """The one successor of ``s`` by ``action`` with ``params``."""
    succ = [t for _, t in picked(m, s, action, *params, exact=exact)]
    assert len(succ) == 1, (action, params, sorted(str(lab) for lab, _ in m.next(s)))
    return succ[0]


def enabled(m, s, action, *params) -> list:
    """The labels of ``action`` enabled at ``s`` with ``params`` first."""
    return [lab for lab, _ in picked(m, s, action, *params)]


def ring_step(m, s):
    """The one enabled ring action (a single token, no 911 in flight)."""
    (t,) = [t for lab, t in m.next(s) if lab.action in RING]
    return t


def on(default):
    """init, step and enabled for tests that drive ``default`` and name
    another model with ``m=``; parameters match exactly."""
    def init_(m=default):
        return init(m)

    def step_(s, action, *params, m=default):
        return step(m, s, action, *params, exact=True)

    def enabled_(s, action, *params, m=default):
        return bool(picked(m, s, action, *params, exact=True))
    return init_, step_, enabled_


def explores_as_pinned(protocol: str, name: str) -> None:
    """The manifest's model ``name`` keeps every invariant of the model in its pinned count of states."""
    (entry,) = manifest.select([protocol], name)
    m = build_model(entry)
    res = explore(m, check_invariants=list(m.invariants))
    assert res.violation is None
    assert res.distinct_states == entry.distinct_states


def edges(m, limit: int):
    """(state, label, successor) over the first ``limit`` states ``m``
    reaches (depth first)."""
    seen, frontier = set(), list(m.init())
    while frontier and len(seen) < limit:
        s = frontier.pop()
        if s in seen:
            continue
        seen.add(s)
        for lab, t in m.next(s):
            yield s, lab, t
            frontier.append(t)
