"""STABLE's encodings: at a fixed N (relation.py, lemmas.py) and for every N
(any_relation.py, any_lemmas.py); the names the proof matrix
(spec/Stable/manifest.json) and the tests ask for."""

from .any_lemmas import StableAnyEncoding, any_encoding
from .lemmas import StableEncoding, matrix_encoding

__all__ = ["StableAnyEncoding", "StableEncoding", "any_encoding", "matrix_encoding"]
