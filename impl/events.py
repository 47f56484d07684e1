"""Events into and effects out of a sans-I/O protocol layer (docs/impl.md, "The layer interface").

Theory of operation
-------------------
A layer never performs I/O: the runtime (simulator or real network) hands it
an *event* together with the current time ``now`` and gets back a list of
*effects* to perform.  Both are frozen, slotted dataclasses, so a layer
cannot mutate what it was given and the runtime can log and compare them.

Node identifiers are small positive ints, the spec's ``Members == 1..N``.

Events (what happens to a layer)
  ``AppSend(payload)``      the application above asks for a group multicast.
  ``Receive(src, msg)``     a message arrives from the layer below (or, at the
                            bottom of a stack, a datagram from the network).
  ``TimerFired(name)``      a timer set by this layer expired.
  ``ViewChange(view)``      the membership oracle tells this member to install
                            ``view`` (seed 000, "On view change").
  ``Send`` / ``Multicast``  are also events: an effect of the layer above that
                            the stack passes down to this layer.

Effects (what a layer asks for)
  ``Send(dest, msg)``, ``Multicast(msg)``   go down (out to the network at the
                            bottom of a stack).
  ``Up(src, msg)``          pass a received message to the layer above.
  ``Deliver(sender, seqno, payload)``  hand a message to the application.
  ``SetTimer(name, at)``, ``CancelTimer(name)``  absolute virtual/real time.
  ``Trace(event)``          a trace record (``TraceEvent``) for conformance.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union


@dataclass(frozen=True, slots=True)
class View:
    """A view decided by the membership oracle: ``vid`` is its index in the
    spec's ``views`` sequence (1-based) and ``members`` its ordered members;
    the coordinator is ``members[0]``."""
    vid: int
    members: tuple[int, ...]

    @property
    def coord(self) -> int:
        return self.members[0]


# ---------------------------------------------------------------- events

@dataclass(frozen=True, slots=True)
class AppSend:
    payload: bytes


@dataclass(frozen=True, slots=True)
class Receive:
    src: int
    msg: Any


@dataclass(frozen=True, slots=True)
class TimerFired:
    name: str


@dataclass(frozen=True, slots=True)
class ViewChange:
    view: View


# ---------------------------------------------------------------- effects

@dataclass(frozen=True, slots=True)
class Send:
    dest: int
    msg: Any


@dataclass(frozen=True, slots=True)
class Multicast:
    msg: Any


@dataclass(frozen=True, slots=True)
class Up:
    src: int
    msg: Any


@dataclass(frozen=True, slots=True)
class Deliver:
    sender: int
    seqno: int
    payload: bytes


@dataclass(frozen=True, slots=True)
class SetTimer:
    name: str
    at: float


@dataclass(frozen=True, slots=True)
class CancelTimer:
    name: str


@dataclass(frozen=True, slots=True)
class TraceEvent:
    """One trace record (docs/trace-format.md): ``name`` is the TLA+ action
    name, ``nid`` the acting member, ``msg`` the message taken or sent (or
    None), ``params`` the remaining action parameters (e.g. ``{"p": 2}`` for
    RecvData(m, p)) and ``state`` the member's post-state under the spec's
    variable names.  ``state`` and ``params`` hold JSON-ready plain values
    (ints, lists, dicts with str keys), so a record serialises as it is, with
    the keys the trace format and the replay use."""
    name: str
    nid: int
    msg: Any = None
    params: dict = field(default_factory=dict)
    state: dict = field(default_factory=dict)

    def to_record(self) -> dict:
        return {"name": self.name, "nid": self.nid, "msg": self.msg,
                "params": dict(self.params), "state": self.state}


@dataclass(frozen=True, slots=True)
class Trace:
    event: TraceEvent


Event = Union[AppSend, Receive, TimerFired, ViewChange, Send, Multicast]
Effect = Union[Send, Multicast, Up, Deliver, SetTimer, CancelTimer, Trace]
