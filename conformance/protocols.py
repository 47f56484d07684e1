"""The protocols conformance knows, found by module name.

Theory of operation
-------------------
Each protocol with an implementation has a module ``groupcheck.conformance.<name>``
(``conformance/sequencer.py``, ``conformance/stable.py``, ...) that defines
``PROTOCOL = Protocol(...)``: how to simulate one run of the implementation and
how to replay one trace against the model.  ``groupcheck simulate``,
``groupcheck conform``, the Spark pipeline and the audit go through ``get`` and
``available``, so a protocol plugs in by adding its module, with no change to
the command line or the pipeline.  ``name`` is the trace header's ``protocol``.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Callable, Optional


@dataclass(frozen=True)
class Protocol:
    name: str                       # trace header "protocol", lower case
    spec: str                       # spec folder, e.g. "Sequencer"
    actions: tuple[str, ...]        # TLA+ action names a trace may contain
    properties: tuple[str, ...]     # trace properties checked after the replay
    # one simulated run: (seed, fault spec, options) -> (groupcheck-trace/1 records, summary)
    simulate: Callable[[int, str, dict], tuple[list[dict], dict]]
    replay: Callable[[Any], Any]    # Trace -> replay.RunReport
    default_options: dict = field(default_factory=dict)
    campaign_faults: str = ""       # the fault spec the audit and the campaign use
    # properties the protocol as the seed describes it is KNOWN to violate under
    # campaign_faults (a finding, with its counterexample in docs/<name>.md): the
    # audit counts such violations and does not fail on them; any other
    # violation, a nonconforming run or a rejected trace fails it
    known_violations: tuple[str, ...] = ()
    # simulation options accepted beyond default_options (those with a default
    # inside simulate); `groupcheck simulate --option` refuses any other key
    more_options: tuple[str, ...] = ()
    # state -> state without what the replay drops (a history no guard reads,
    # conformance/replay.py ``Binding.reduce``): the pipeline's coverage
    # compares the replays' states with the reachable states reduced alike
    reduce: Optional[Callable[[Any], Any]] = None
    # seed -> (fault spec, options): one run's size and faults drawn from its
    # seed (members, messages, joiners, crash times), for the audit's
    # conformance stage; None: every run uses campaign_faults and default_options
    draw: Optional[Callable[[int], tuple[str, dict]]] = None
    # how TLC trace validation gives this protocol's traces to
    # spec/<spec>/Trace<spec>.tla (conformance/tlctrace.py TLATrace); None: no trace spec
    tla_trace: Any = None

    @property
    def option_keys(self) -> set[str]:
        return set(self.default_options) | set(self.more_options)


class UnknownProtocol(KeyError):
    def __str__(self) -> str:
        return f"no conformance module for protocol {self.args[0]!r} (have: {', '.join(available()) or 'none'})"


_NOT_PROTOCOLS = {"protocols", "replay", "traces", "lockstep", "pipeline", "spark", "spark_submit",
                  "report", "audit", "diagram", "history", "jgroups", "schemacheck", "tlctrace"}


def get(name: str) -> Protocol:
    if not name.isidentifier() or name in _NOT_PROTOCOLS:
        raise UnknownProtocol(name)
    try:
        mod = importlib.import_module(f"groupcheck.conformance.{name}")
    except ModuleNotFoundError as e:
        if e.name == f"groupcheck.conformance.{name}":
            raise UnknownProtocol(name) from None
        raise
    proto = getattr(mod, "PROTOCOL", None)
    if not isinstance(proto, Protocol):
        raise UnknownProtocol(name)
    if proto.name != name:
        raise ValueError(f"conformance/{name}.py registers protocol {proto.name!r}")
    return proto


def available() -> list[str]:
    """Every protocol whose conformance module defines PROTOCOL, sorted."""
    import groupcheck.conformance as pkg
    names = []
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("_") or info.name in _NOT_PROTOCOLS:
            continue
        try:
            get(info.name)
        except UnknownProtocol:
            continue
        names.append(info.name)
    return sorted(names)
