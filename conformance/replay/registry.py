"""The protocols conformance knows: one descriptor each, one registry.

Theory of operation
-------------------
Each protocol with an implementation has a module ``groupcheck.conformance.<name>``
(``conformance/replay/sequencer.py``, ``conformance/replay/stable.py``, ...) that defines
``PROTOCOL = Protocol(...)``: how to simulate one run of the implementation
(its campaign), how to replay one trace against the model (its binding),
which black-box history checks it promises, how TLC validates its traces
(its trace spec), the findings the audit expects.  ``REGISTERED`` below
names those modules, one line per protocol; ``groupcheck simulate``,
``groupcheck conform``, the Spark pipeline, the history checker and the
audit go through ``get`` and ``available`` and read the descriptor, so a
protocol plugs in by adding its module and its line, with no change to the
command line or the engines.  ``name`` is the trace header's ``protocol``;
the implementation's registry (impl/protocols.py) and the model's
(model/registry.py) name the same protocols (tests/test_protocols.py).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from groupcheck.conformance.findings import classify_run
from groupcheck.conformance.replay.engine import gaps, run_binding
from groupcheck.core.trace.reader import from_records


@dataclass(frozen=True)
class Protocol:
    name: str                       # trace header "protocol", lower case
    spec: str                       # spec folder, e.g. "Sequencer"
    actions: tuple[str, ...]        # TLA+ action names a trace may contain
    properties: tuple[str, ...]     # trace properties checked after the replay
    # one simulated run: (seed, fault spec or the plan fault_plan made of it, options)
    # -> (groupcheck-trace/1 records, summary)
    simulate: Callable[[int, Any, dict], tuple[list[dict], dict]]
    # the replay's table (a conformance.replay.Binding subclass): the engine
    # steps the model through it; its FIELDS / observable() declare the
    # variables the implementation logs (docs/trace-format.md)
    binding: type
    default_options: dict = field(default_factory=dict)
    campaign_faults: str = ""       # the fault spec the audit and the campaign use
    # the documented findings of the protocol as the seed describes it, each with its
    # shape and rates (conformance/findings.py; counterexamples in docs/<name>.md): a
    # violation is a known finding only if one of these witnesses it; any other
    # violation, a nonconforming run or a rejected trace fails the audit
    findings: tuple = ()
    # trace header -> the kind of its fault plan, as findings' rates are counted
    plan_kind: Optional[Callable[[dict], str]] = None
    # simulation options accepted beyond default_options (those with a default
    # inside simulate); `groupcheck simulate --option` refuses any other key
    more_options: tuple[str, ...] = ()
    # state -> state without what the replay drops (a history no guard reads,
    # conformance/replay/engine.py ``Binding.reduce``): the pipeline's coverage
    # compares the replays' states with the reachable states reduced alike
    reduce: Optional[Callable[[Any], Any]] = None
    # seed -> (fault spec, options): one run's size and faults drawn from its
    # seed (members, messages, joiners, crash times), for the audit's
    # conformance stage; None: every run uses campaign_faults and default_options
    draw: Optional[Callable[[int], tuple[str, dict]]] = None
    # how TLC trace validation gives this protocol's traces to
    # spec/<spec>/Trace<spec>.tla (conformance/tlctrace.py TLATrace); None: no trace spec
    tla_trace: Any = None
    # the properties (core/properties.py's names) the protocol promises:
    # a run's black-box history is judged by these; the others only on request
    promises: tuple[str, ...] = ()
    # the catalogue's properties (core/properties.py) the replay judges on
    # the members' delivery histories, in the order it reports them; the
    # pipeline judges them apart from the replay too; (): the replay alone
    judged: tuple[str, ...] = ()
    # the end record's flag under which the replay judges its end-of-run
    # property: "quiescent" (Binding.at_end), or "settled" for a protocol that
    # never quiesces (Binding.at_settled: the ring's)
    run_end: str = "quiescent"
    # the audit's cluster stage runs this protocol (impl/cluster.py, conformance/audit/stages.py)
    audit_cluster: bool = False
    # (fault text or plan, seed, options) -> the run's FaultPlan: the fault
    # grammar (impl/faults.py parse_faults) with the items this protocol
    # takes and its draw for ``auto``; a plan passes as it is
    fault_plan: Optional[Callable[[Any, int, dict], Any]] = None
    # the actions of which a run must take at least one for its verdict to be
    # more than ``incomplete`` (its multicasts; the ring's token passing)
    work: tuple[str, ...] = ()

    def replay(self, trace, *, visited: bool = True):
        """The verdict of one run (conformance/replay/engine.py's engine): a
        replay.RunReport."""
        rep = run_binding(self.binding, trace, visited=visited)
        if self.plan_kind is not None:
            rep.plan = self.plan_kind(trace.header)
        if rep.verdict == "violation":
            classify_run(self, trace, rep)
        if rep.verdict in ("ok", "documented"):
            why = gaps(trace, self.work, rep.actions)
            if why:
                rep.reason = "; ".join(why) + (f"; {rep.verdict}: {rep.reason}" if rep.reason else "")
                rep.verdict = "incomplete"
        return rep

    def replay_records(self, records: list, path: str = "<records>", *, visited: bool = True):
        """The verdict of a run given as groupcheck-trace records in memory
        (header first, events in a linear order), validated as a file is."""
        return self.replay(from_records(records, path), visited=visited)

    @property
    def known_violations(self) -> tuple[str, ...]:
        """The properties some documented finding violates."""
        return tuple(dict.fromkeys(p for f in self.findings for p in f.properties))

    @property
    def option_keys(self) -> set[str]:
        return set(self.default_options) | set(self.more_options)


class UnknownProtocol(KeyError):
    def __str__(self) -> str:
        return f"no conformance module for protocol {self.args[0]!r} (have: {', '.join(available()) or 'none'})"


# every protocol conformance knows: conformance/<name>.py defines its PROTOCOL
REGISTERED = ("flush", "raincore", "raincoreflush", "raincoresequencerflush", "sequencer", "sequencerflush",
              "stable")


def get(name: str) -> Protocol:
    if name not in REGISTERED:
        raise UnknownProtocol(name)
    proto = importlib.import_module(f"groupcheck.conformance.replay.{name}").PROTOCOL
    if not isinstance(proto, Protocol) or proto.name != name:
        raise ValueError(f"conformance/{name}.py registers {getattr(proto, 'name', proto)!r}, not protocol {name!r}")
    return proto


# What a protocol promises, in the catalogue's names (core/properties.py; FLUSH
# orders nothing, so TotalOrder is not its promise; STABLE and the ring deliver
# nothing a history sees), and which of them its replay judges on its members'
# delivery histories: fields of its registration.
def promises(protocol: str) -> tuple[str, ...]:
    return get(protocol).promises


def judged(protocol: str) -> tuple[str, ...]:
    """The properties ``protocol``'s replay judges on delivery histories, in
    the order it reports them (the end-of-run one last); () if none or if
    the protocol is unknown (a rejected run)."""
    try:
        return get(protocol).judged
    except UnknownProtocol:
        return ()


def available() -> list[str]:
    """Every registered protocol, sorted."""
    return sorted(REGISTERED)
