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


LIVE_REASONS = {"truncated", "malformed", "forged", "replayed", "frame", "bundle", "control_from_node",
                "unknown_sender", "command", "undecodable", "taken"}


def _check_live(n, seed, tmp_path):
    counts = fuzz.run_live(random.Random(seed), n, tmp_path)
    assert sum(counts.values()) == n, counts
    assert set(counts) <= LIVE_REASONS, counts
    for reason in ("forged", "frame", "bundle", "undecodable", "taken", "unknown_sender", "control_from_node"):
        assert counts.get(reason, 0) > 0, (reason, counts)
    return counts


def test_fuzz_through_a_live_node(tmp_path):
    _check_live(5000, 3, tmp_path)


@pytest.mark.slow
def test_fuzz_a_million_through_a_live_node(tmp_path):
    _check_live(1_000_000, 4, tmp_path)


def test_codec_messages_from_hypothesis_through_a_live_node(tmp_path):
    """Every message the codec can encode (its Hypothesis strategy), sealed
    and sent by a member to a live node: taken or dropped with a reason,
    never an exception; the same bytes again are a replay."""
    from hypothesis import given, settings, HealthCheck
    from groupcheck.impl import auth, codec, runtime
    from test_codec import messages
    key = b"hypothesis-key-0123456789"
    node = runtime.offline_node(tmp_path, key)
    sealer = auth.Sealer(key, 1, 1)

    @settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(messages)
    def feed(m):
        d = sealer.seal(runtime.frame(runtime.STACK, {"1": 1}, codec.encode(m)))
        before = node.verifier.counts["replayed"]
        node.datagram_received(d, None)
        node.datagram_received(d, None)
        assert node.verifier.counts["replayed"] == before + 1

    feed()
    assert node.verifier.counts["accepted"] >= 300
