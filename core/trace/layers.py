"""Which of a node's state machines a trace record belongs to.

A composed stack logs each of its layers' state deltas apart: a record of
SEQUENCER over FLUSH is the SEQUENCER layer's or FLUSH's, a record of FLUSH
over the Raincore ring the ring's or FLUSH's.  The writer keeps one delta
chain per (member, layer) and the reader rebuilds the same chains, so both
ask ``layer_of`` here, the one definition.  A protocol not named in
``LAYERS`` has one state machine per member, ``"node"``; which variables a
layer logs as appended is its schema's (``x-append-layers``,
writer.py ``append_vars``).
"""

from __future__ import annotations

from typing import Callable, Optional

# the ring's actions: a record of one is the ring's (Crash and Join included), every other FLUSH's
RING_ACTIONS = frozenset({"TokenReceived", "911Received", "TokenDeliveryFailure", "911DeliveryFailure",
                          "EatingTimeout", "HungryTimeout", "StarvingTimeout", "Initialization", "Recover",
                          "TokenLoss", "Crash", "Join"})
# SEQUENCER's actions in SEQUENCER over FLUSH (its InstallView is the one without a ``c`` parameter)
SEQUENCER_ACTIONS = frozenset({"Send", "RecvForward", "RecvData"})


def ring_flush(name: str, params: dict) -> str:
    """FLUSH over the ring: a ring action is ``"ring"``, every other ``"flush"``."""
    return "ring" if name in RING_ACTIONS else "flush"


def sequencer_flush(name: str, params: dict) -> str:
    """A SEQUENCER record (``Send``, ``RecvForward``, ``RecvData``,
    ``InstallView`` without a ``c`` parameter) is ``"sequencer"``, every
    other ``"flush"`` (Crash included: FLUSH's)."""
    if name in SEQUENCER_ACTIONS or (name == "InstallView" and "c" not in params):
        return "sequencer"
    return "flush"


def ring_sequencer_flush(name: str, params: dict) -> str:
    """A ring action is the ring's; the others as in SEQUENCER over FLUSH."""
    return "ring" if name in RING_ACTIONS else sequencer_flush(name, params)


# protocol -> its layers (composed stacks only)
LAYERS: dict[str, Callable[[str, dict], str]] = {
    "sequencerflush": sequencer_flush,
    "raincoreflush": ring_flush,
    "raincoresequencerflush": ring_sequencer_flush,
}


def layer_of(protocol: object, name: str, params: Optional[dict]) -> str:
    """The layer whose state the record ``name(params)`` of ``protocol`` carries."""
    f = LAYERS.get(protocol) if isinstance(protocol, str) else None
    return f(name, params or {}) if f else "node"
