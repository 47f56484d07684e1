"""impl/auth.py: every forged, replayed, truncated and malformed datagram is
rejected and counted by reason; nothing raises."""

import os

import pytest

from groupcheck.impl import auth

KEY = b"k" * 32


def test_roundtrip_and_reasons():
    s, v = auth.Sealer(KEY, 2, 7), auth.Verifier(KEY)
    d1, d2 = s.seal(b"frame-1"), s.seal(b"frame-2")
    assert v.open(d2) == (2, b"frame-2")
    assert v.open(d1) == (2, b"frame-1")          # out of order inside the window
    assert v.open(d1) is None                      # replay
    assert v.open(d1[:10]) is None                 # truncated
    assert v.open(d2[:-1] + bytes([d2[-1] ^ 1])) is None   # forged tag
    assert v.open(auth.Sealer(b"x" * 32, 2, 7).seal(b"f")) is None  # wrong key
    assert v.open("not bytes") is None
    assert v.counts == {"accepted": 2, "replayed": 1, "truncated": 1, "forged": 2, "malformed": 1}


def test_every_bit_flip_is_forged():
    s, v = auth.Sealer(KEY, 1, 1), auth.Verifier(KEY)
    d = s.seal(b"payload")
    for i in range(len(d) * 8):
        bad = bytearray(d)
        bad[i // 8] ^= 1 << (i % 8)
        assert v.open(bytes(bad)) is None
    assert v.counts["forged"] == len(d) * 8 and v.counts["accepted"] == 0


def test_incarnations_and_window():
    v = auth.Verifier(KEY)
    old, new = auth.Sealer(KEY, 3, 1), auth.Sealer(KEY, 3, 2)
    stale = old.seal(b"a")
    assert v.open(new.seal(b"b")) is not None
    assert v.open(stale) is None                    # older incarnation
    early = new.seal(b"c")
    for _ in range(auth.WINDOW + 1):
        new.seal(b"")
    assert v.open(new.seal(b"d")) is not None
    assert v.open(early) is None                    # fell below the window
    assert v.counts["replayed"] == 2


def test_random_bytes_never_raise():
    v = auth.Verifier(KEY)
    for n in range(2000):
        assert v.open(os.urandom(n % 120)) is None
    assert sum(v.counts.values()) == 2000 and v.counts["accepted"] == 0


def test_key_sources_and_bind(tmp_path):
    assert auth.load_key(None) is None and auth.load_key("") is None
    p = tmp_path / "key"
    p.write_bytes(b"f" * 24 + b"\n")
    assert auth.load_key(str(p)) == b"f" * 24
    p.write_bytes(b"short\n")
    with pytest.raises(auth.KeyError_, match="key"):
        auth.load_key(str(p))
    auth.check_bind("127.0.0.1", None)
    auth.check_bind("0.0.0.0", KEY)
    with pytest.raises(auth.KeyError_):
        auth.check_bind("0.0.0.0", None)
