"""The protocols the implementation knows: one descriptor each, one registry.

Theory of operation
-------------------
A protocol is declared once in impl/: its own stack module
(impl/stacks/<name>.py) ends with ``DESCRIPTOR = ImplProtocol(...)``, and
``REGISTRY`` below names that module.  The descriptor holds what generic
code needs to know about the protocol, as data or as functions of the
protocol's own module:

* ``history``: how the black-box history is projected from its traces
  (conformance/history.py ``from_trace``); None: no projection;
* ``cluster``: how ``groupcheck cluster`` runs it as OS processes (the
  node's stack, the header's constants, who decides views after a kill);
  None: the cluster does not run it;
* ``over_ring``: the protocol it becomes with the Raincore ring as its
  membership (``--membership raincore``).

The cluster runner and its runtime, the history projection and the CLI
ask ``get(name)`` (or ``find``) and read these fields; none of them
compares a protocol's name.  What its trace records look like is the trace
format's (core/trace/: its schema, schemas/<name>.json, and for a composed
stack which layer a record is, layers.py).  Adding a protocol means adding
its own files and one line here (the conformance registry,
conformance/replay/registry.py, and the model registry, model/registry.py,
have one each too; tests/test_protocols.py checks that the three agree).

``name`` is the trace header's ``protocol``: the spec folder in lower case.
Modules are imported on first use, so importing this registry imports no
protocol.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Any, Callable, Optional

# protocol -> the module whose DESCRIPTOR describes it
REGISTRY = {
    "sequencer": "groupcheck.impl.stacks.sequencer",
    "stable": "groupcheck.impl.stacks.stable",
    "flush": "groupcheck.impl.stacks.flush",
    "sequencerflush": "groupcheck.impl.stacks.sequencerflush",
    "raincore": "groupcheck.impl.stacks.raincore",
    "raincoreflush": "groupcheck.impl.stacks.raincoreflush",
    "raincoresequencerflush": "groupcheck.impl.stacks.raincoresequencerflush",
}


@dataclass(frozen=True)
class HistoryProjection:
    """How a run's observable events are read off its logged state."""
    # "sequence": SEQUENCER's append-only ``sent`` counter and ``delivered``
    # list; "set": FLUSH's ``delivered`` set, a send named by its Multicast,
    # a view announced after the old-view deliveries it reconciles
    deliveries: str = "sequence"
    # in a composed stack, the layer the application sees (its records alone
    # give sends, deliveries and views); None: every record
    app_layer: Optional[str] = None
    # a view's members are the keys of SEQUENCER's received-table; False
    # where that table starts over every node that may join (over the ring)
    view_from_recv: bool = True


@dataclass(frozen=True)
class ClusterRun:
    """How ``groupcheck cluster`` runs the protocol (impl/cluster.py, impl/runtime.py)."""
    # (nid, members, lossy) -> the node's stack, tracing format 2's deltas
    stack: Callable[[int, tuple, bool], Any]
    # (nodes, messages per node, crashes, lossy) -> the header's model constants;
    # the ring's also take ``joiners=J`` (ids nodes + 1..nodes + J may join)
    constants: Callable[..., dict]
    # who decides the views after a kill: "oracle" (the runner, which writes
    # the NewView record and tells the survivors), "suspect" (FLUSH, told by
    # the runner's Suspect), "ring" (the Raincore ring itself; a node is
    # killed only at a point where the spec lets it crash)
    views: str
    # --lossy-ring: the ring is Raincore's own (spec LossyRing), not the abstraction
    lossy_ring: bool = False
    # a new node may join (the ring's 911 path): a killed node comes back as one
    joins: bool = False


@dataclass(frozen=True)
class ImplProtocol:
    """One protocol as the implementation's generic code sees it (see the module docstring)."""
    name: str
    history: Optional[HistoryProjection] = None
    cluster: Optional[ClusterRun] = None
    over_ring: Optional[str] = None


class UnknownProtocol(KeyError):
    def __str__(self) -> str:
        return f"no implementation of protocol {self.args[0]!r} (have: {', '.join(names())})"


def names() -> list[str]:
    return sorted(REGISTRY)


def get(name: str) -> ImplProtocol:
    try:
        where = REGISTRY[name]
    except (KeyError, TypeError):
        raise UnknownProtocol(name) from None
    d = import_module(where).DESCRIPTOR
    if d.name != name:
        raise ValueError(f"{where} describes protocol {d.name!r}, registered as {name!r}")
    return d


def find(name: Any) -> Optional[ImplProtocol]:
    """``get(name)``, or None for a protocol the implementation does not know."""
    try:
        return get(name)
    except UnknownProtocol:
        return None


def cluster_protocols() -> list[str]:
    """The protocols ``groupcheck cluster`` runs."""
    return [p for p in names() if get(p).cluster is not None]


def not_a_cluster_protocol(protocol: str) -> str:
    """Why ``groupcheck cluster`` refuses ``--protocol protocol``, pointing at
    the option that runs it where one does (a protocol that runs over the
    Raincore ring only: ``--membership raincore``)."""
    over = getattr(find(protocol), "over_ring", None)
    hint = (f"; {protocol} runs over the Raincore ring: --protocol {over} (or, with cluster run and chaos, "
            f"--protocol {protocol} --membership raincore)" if over in cluster_protocols() else "")
    return f"--protocol {protocol!r}: the cluster runs {', '.join(cluster_protocols())}{hint}"
