"""Receive-path fuzzing: no crash, every datagram counted under one reason."""

import random

import pytest

from groupcheck.impl import fuzz


def _check(n, seed):
    counts = fuzz.run(random.Random(seed), n)
    assert sum(counts.values()) == n
    assert set(counts) <= {"accepted", "truncated", "malformed", "forged", "replayed", "undecodable"}
    assert counts.get("forged", 0) > 0 and counts.get("undecodable", 0) > 0


def test_fuzz_small():
    _check(3000, 1)


@pytest.mark.slow
def test_fuzz_million():
    _check(1_000_000, 2)
