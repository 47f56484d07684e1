"""SEQUENCER over FLUSH's encodings: at a fixed N (relation.py, lemmas.py)
and for every N (any_relation.py, any_lemmas.py); the names the proof matrix
(spec/SequencerFlush/manifest.json) and the tests ask for."""

from .any_lemmas import SequencerFlushAnyEncoding, SequencerFlushCrashEncoding, any_encoding
from .lemmas import SequencerFlushEncoding

__all__ = ["SequencerFlushAnyEncoding", "SequencerFlushCrashEncoding", "SequencerFlushEncoding", "any_encoding"]
