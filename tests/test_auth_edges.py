"""Authentication at its edges (impl/auth.py and the node's receive path):
the replay window's exact boundary, reordering inside it, a stale
incarnation after a restart, and forged or truncated datagrams through a
live node.  Each test kills an off-by-one or a missing check that the
round-trip tests (tests/test_auth.py) let through."""

from __future__ import annotations

import random

from groupcheck.impl import auth, codec, runtime

KEY = b"edge-key-0123456789abcdef"
W = auth.WINDOW


def _sealed(n, sender=2, inc=1):
    s = auth.Sealer(KEY, sender, inc)
    return [s.seal(b"f%d" % k) for k in range(n)]


def test_window_boundary_exactly():
    """With top = T, seq T - (W-1) is the oldest still acceptable; T - W is not."""
    ds = _sealed(W + 2)                       # seqs 1 .. W+2
    v = auth.Verifier(KEY)
    assert v.open(ds[-1]) is not None         # top = W + 2
    assert v.open(ds[2]) is not None          # seq 3 = top - (W - 1): inside, unseen
    assert v.open(ds[2]) is None              # ... and only once
    assert v.open(ds[1]) is None              # seq 2 = top - W: outside
    assert v.counts == {"accepted": 2, "replayed": 2}


def test_a_jump_of_exactly_the_window_forgets_everything_older():
    ds = _sealed(2 * W + 2)
    v = auth.Verifier(KEY)
    assert v.open(ds[0]) is not None          # top = 1
    assert v.open(ds[W - 1]) is not None      # top = W: seq 1 now at offset W - 1, still remembered
    assert v.open(ds[0]) is None
    assert v.open(ds[2 * W - 1]) is not None  # top = 2W: a shift of exactly W
    assert v.open(ds[W - 1]) is None          # seq W at offset W: outside
    assert v.open(ds[W]) is not None          # seq W + 1 at offset W - 1: unseen, inside


def test_reordering_inside_the_window_accepts_each_once():
    ds = _sealed(W)
    order = list(range(W))
    random.Random(5).shuffle(order)
    v = auth.Verifier(KEY)
    assert all(v.open(ds[k]) is not None for k in order)
    assert all(v.open(ds[k]) is None for k in reversed(order))
    assert v.counts == {"accepted": W, "replayed": W}


def test_a_restarted_node_is_a_new_incarnation_and_the_old_one_is_stale():
    old, new = auth.Sealer(KEY, 3, 1), auth.Sealer(KEY, 3, 2)
    v = auth.Verifier(KEY)
    for _ in range(50):
        assert v.open(old.seal(b"x")) is not None
    assert v.open(new.seal(b"restarted")) is not None      # seq 1 of the new incarnation
    late = old.seal(b"late")                                # the old one's seq 51: higher, still stale
    assert v.open(late) is None and v.counts["replayed"] == 1
    assert v.open(auth.Sealer(KEY, 3, 2).seal(b"again")) is None   # the new incarnation's seq 1, replayed


def _frame(body=b"", vc=None):
    return runtime.frame(runtime.STACK, vc or {"1": 1}, body)


def test_forged_and_truncated_datagrams_through_a_live_node_change_nothing(tmp_path):
    node = runtime.offline_node(tmp_path, KEY)
    s = auth.Sealer(KEY, 1, 1)
    good = s.seal(_frame(codec.encode(codec.Ack(1, 0))))
    before = (node.stack.stats, node.writer.records, dict(node.dropped))
    node.datagram_received(good[:-1] + bytes([good[-1] ^ 0x40]), None)       # forged tag
    node.datagram_received(good[: auth._ENV.size + auth.TAG - 1], None)      # truncated
    node.datagram_received(auth.Sealer(b"other-key-0123456789", 1, 1).seal(_frame()), None)
    assert (node.stack.stats, node.writer.records, dict(node.dropped)) == before
    assert node.verifier.counts == {"forged": 2, "truncated": 1}
    node.datagram_received(good, None)                                       # the genuine one still goes in
    node.datagram_received(good, None)                                       # ... once
    assert node.verifier.counts["accepted"] == 1 and node.verifier.counts["replayed"] == 1
    node.writer.close()


def test_a_stale_incarnation_through_a_live_node_is_dropped(tmp_path):
    node = runtime.offline_node(tmp_path, KEY)
    old, new = auth.Sealer(KEY, 1, 1), auth.Sealer(KEY, 1, 2)
    for _ in range(3):
        node.datagram_received(old.seal(_frame(codec.encode(codec.Ack(1, 0)))), None)
    node.datagram_received(new.seal(_frame(codec.encode(codec.Ack(1, 0)))), None)
    node.datagram_received(old.seal(_frame(codec.encode(codec.Ack(1, 0)))), None)
    assert node.verifier.counts == {"accepted": 4, "replayed": 1}
    node.writer.close()
