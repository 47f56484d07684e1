"""Protocol name -> model class.  Protocol names are the lower-case spec
folder names (``Sequencer`` -> ``sequencer``)."""

from __future__ import annotations

from importlib import import_module

from .core import Model

_MODELS = {
    "sequencer": "groupcheck.model.sequencer:SequencerModel",
    "stable": "groupcheck.model.stable:StableModel",
    "flush": "groupcheck.model.flush:FlushModel",
    "sequencerflush": "groupcheck.model.sequencerflush:SequencerFlushModel",
    "raincore": "groupcheck.model.raincore:RaincoreModel",
    "raincoreflush": "groupcheck.model.raincoreflush:RaincoreFlushModel",
    "raincoresequencerflush": "groupcheck.model.raincoresequencerflush:RaincoreSequencerFlushModel",
}


def model_class(protocol: str) -> type[Model]:
    try:
        target = _MODELS[protocol.lower()]
    except KeyError:
        raise KeyError(f"no Python model registered for protocol {protocol!r}; known: {sorted(_MODELS)}") from None
    mod, _, cls = target.partition(":")
    return getattr(import_module(mod), cls)
