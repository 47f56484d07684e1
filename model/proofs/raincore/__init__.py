"""Raincore's encoding at a fixed N (relation.py, lemmas.py); the names the
proof matrix (spec/Raincore/manifest.json) and the tests ask for."""

from .lemmas import FLAWED_LEMMAS, LEMMAS_PROVED, LEMMAS_PROVED_N, RaincoreEncoding, matrix_encoding
from .relation import manifest_constants

__all__ = ["FLAWED_LEMMAS", "LEMMAS_PROVED", "LEMMAS_PROVED_N", "RaincoreEncoding", "manifest_constants",
           "matrix_encoding"]
