"""SEQUENCER without FLUSH's encoding at a fixed N (relation.py, lemmas.py);
the names the proof matrix (spec/SequencerFlush/manifest.json) and the tests
ask for."""

from ...sequencer import TotalOrder
from .lemmas import SequencerEncoding
from .relation import SurvivorSequencerModel, SurvivorTotalOrder

__all__ = ["SequencerEncoding", "SurvivorSequencerModel", "SurvivorTotalOrder", "TotalOrder"]
