"""FLUSH's encodings: at a fixed N (relation.py, lemmas.py) and for every N
(any_relation.py, any_lemmas.py); the names the proof matrix
(spec/Flush/manifest.json) and the tests ask for."""

from .any_lemmas import FlushAnyEncoding, any_encoding
from .lemmas import FlushEncoding, matrix_encoding

__all__ = ["FlushAnyEncoding", "FlushEncoding", "any_encoding", "matrix_encoding"]
