"""A node: a stack of sans-I/O layers, bottom to top (docs/impl.md, "The layer interface").

Theory of operation
-------------------
``Stack(nid, layers)`` takes its layers bottom first.  It is itself a layer
(``handle(event, now)``) whose effects are only the ones that leave the node:
datagrams for the network, application deliveries, timers and traces.  It
routes everything else between its layers:

* ``Send``/``Multicast`` from layer i become events of layer i-1 (down);
  from the bottom layer they leave the node.
* ``Up(src, msg)`` from layer i becomes ``Receive(src, msg)`` of layer i+1;
  from the top layer it leaves the node (an unsequenced app message).
* ``Deliver``, ``Trace`` leave the node as they are.
* ``SetTimer``/``CancelTimer`` leave the node with the name prefixed by the
  layer's name (``"reliable/retransmit"``); ``TimerFired`` with such a name is
  routed back to that layer alone.
* Outside events: ``Receive`` enters at the bottom, ``AppSend`` at the top,
  ``ViewChange`` at every layer, bottom first (a member installs a view in
  every layer within one step, as the spec's InstallView is one action).

Routing is depth first: the effects of an event are complete, in causal
order, before the next effect of the same layer is routed.

``Transport`` is the bottom layer that talks bytes: it encodes what goes
down with the codec and decodes what comes up, counting and dropping a
malformed datagram (``stats["decode_errors"]``) instead of failing.
"""

from __future__ import annotations

from . import codec
from .events import (AppSend, CancelTimer, Deliver, Effect, Event, Multicast, Receive, Send,
                     SetTimer, TimerFired, Trace, Up, ViewChange)
from .layer import Layer, bump


class Transport:
    """Bottom layer: the codec at the edge of the node."""

    name = "transport"

    def __init__(self) -> None:
        self.stats: dict[str, int] = {}

    def handle(self, event: Event, now: float) -> list[Effect]:
        if isinstance(event, Receive):
            try:
                msg = codec.decode(event.msg)
            except codec.DecodeError:
                bump(self.stats, "decode_errors")
                return []
            return [Up(event.src, msg)]
        if isinstance(event, Send):
            return [Send(event.dest, codec.encode(event.msg))]
        if isinstance(event, Multicast):
            return [Multicast(codec.encode(event.msg))]
        return []


class Stack:
    SEP = "/"

    def __init__(self, nid: int, layers: list[Layer]) -> None:
        if not layers:
            raise ValueError("a stack needs at least one layer")
        names = [layer.name for layer in layers]
        if len(set(names)) != len(names) or any(self.SEP in n for n in names):
            raise ValueError(f"layer names must be unique and free of {self.SEP!r}: {names}")
        self.nid = nid
        self.layers = list(layers)
        self.name = "stack"
        self._index = {n: i for i, n in enumerate(names)}

    @property
    def stats(self) -> dict[str, int]:
        """Every layer's counters, keyed ``"layer.counter"``."""
        return {f"{layer.name}.{k}": v for layer in self.layers for k, v in layer.stats.items()}

    def layer(self, name: str) -> Layer:
        return self.layers[self._index[name]]

    @property
    def blocked(self) -> bool:
        """Backpressure: some layer asks the application to wait before its
        next send (the reliable layer's credits, impl/reliable.py)."""
        return any(getattr(layer, "blocked", False) for layer in self.layers)

    def handle(self, event: Event, now: float) -> list[Effect]:
        out: list[Effect] = []
        if isinstance(event, Receive):
            self._run(0, event, now, out)
        elif isinstance(event, (AppSend, Send, Multicast)):
            self._run(len(self.layers) - 1, event, now, out)
        elif isinstance(event, ViewChange):
            for i in range(len(self.layers)):
                self._run(i, event, now, out)
        elif isinstance(event, TimerFired):
            lname, sep, tname = event.name.partition(self.SEP)
            if not sep or lname not in self._index:
                raise ValueError(f"timer {event.name!r} belongs to no layer of this stack")
            self._run(self._index[lname], TimerFired(tname), now, out)
        else:
            raise TypeError(f"not a stack event: {event!r}")
        return out

    def _run(self, i: int, event: Event, now: float, out: list[Effect]) -> None:
        layer = self.layers[i]
        top = len(self.layers) - 1
        for eff in layer.handle(event, now):
            if isinstance(eff, (Send, Multicast)):
                if i == 0:
                    out.append(eff)
                else:
                    self._run(i - 1, eff, now, out)
            elif isinstance(eff, Up):
                if i == top:
                    out.append(eff)
                else:
                    self._run(i + 1, Receive(eff.src, eff.msg), now, out)
            elif isinstance(eff, SetTimer):
                out.append(SetTimer(layer.name + self.SEP + eff.name, eff.at))
            elif isinstance(eff, CancelTimer):
                out.append(CancelTimer(layer.name + self.SEP + eff.name))
            elif isinstance(eff, (Deliver, Trace)):
                out.append(eff)
            elif not self._route(i, eff, now, out):
                raise TypeError(f"layer {layer.name} returned a non-effect: {eff!r}")

    def _route(self, i: int, eff, now: float, out: list[Effect]) -> bool:
        """Route an effect this class does not know (a subclass's own, e.g.
        FLUSH's view installation); False: it is not an effect at all."""
        return False
