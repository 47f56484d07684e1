"""Receive-path fuzz harness: authenticated
envelope then codec decode, exactly as a node's receive path would before an
event reaches a layer.  Every datagram ends in ``counts`` under one reason:
accepted, or dropped as truncated / malformed / forged / replayed / undecodable.
Generators are deterministic from a seed (``rng`` is passed in: sans-I/O)."""

from __future__ import annotations

from . import auth, codec


def receive(verifier: auth.Verifier, counts, data) -> None:
    got = verifier.open(data)
    if got is None:
        return
    try:
        codec.decode(got[1])
    except codec.DecodeError:
        counts["undecodable"] += 1
        verifier.counts["accepted"] -= 1
        return


def valid_frames():
    return [codec.encode(m) for m in (
        codec.Forward(1, 1, b"x"), codec.Data(2, 5, b"hello"),
        codec.XData(1, 3, codec.Data(1, 2, b"y")), codec.Nak(2, 1, 4), codec.Ack(1, 9))]


def mutate(rng, b: bytes) -> bytes:
    b = bytearray(b)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(4)
        if op == 0 and b:
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif op == 1 and b:
            del b[rng.randrange(len(b)):]
        elif op == 2:
            b.insert(rng.randrange(len(b) + 1), rng.randrange(256))
        elif b:
            i = rng.randrange(len(b))
            b[i:i] = b[i:i + rng.randrange(1, 8)]
    return bytes(b)


def run(rng, n: int, key: bytes = b"fuzz-key-0123456789abcdef") -> dict:
    """Feed ``n`` datagrams: 1/3 random bytes, 1/3 mutated sealed datagrams,
    1/3 mutated frames sealed validly (so they reach the decoder)."""
    sealer, verifier = auth.Sealer(key, 1, 1), auth.Verifier(key)
    counts = verifier.counts
    frames = valid_frames()
    for i in range(n):
        kind = i % 3
        if kind == 0:
            d = rng.randbytes(rng.randrange(80))
        elif kind == 1:
            d = mutate(rng, sealer.seal(rng.choice(frames)))
        else:
            d = sealer.seal(mutate(rng, rng.choice(frames)))
        receive(verifier, counts, d)
    return dict(counts)


# ---------------------------------------------------------------- through a live node

def run_live(rng, n: int, workdir, key: bytes = b"fuzz-key-0123456789abcdef") -> dict:
    """Feed ``n`` datagrams to a live node: random bytes, mutated sealed
    datagrams, sealed mutated runtime frames, sealed runtime frames around
    mutated codec frames, valid ones, and bundles (impl/runtime.py's
    bundler: valid, one frame mutated, the bundle's bytes mutated).  Returns
    every datagram's reason: the authentication reasons, the node's drops
    (bad runtime frame, a bundle that does not split, a command not from the
    runner, an unknown sender), ``undecodable`` (a frame, or a bundled
    frame, the transport's codec refused), and ``taken`` (every frame handed
    to the reliable layer).  The loop's turn ends after each datagram
    (``_flush``), as a live node's does."""
    from . import runtime
    node = runtime.offline_node(workdir, key)
    sealers = {s: auth.Sealer(key, s, 1) for s in (0, 1, 3, 9)}
    frames = valid_frames()
    counts: dict = {}
    for i in range(n):
        kind = i % 7
        s = sealers[rng.choice((1, 1, 3, 9, 0))]
        if kind == 0:
            d = rng.randbytes(rng.randrange(90))
        elif kind == 1:
            d = mutate(rng, s.seal(runtime.frame(runtime.STACK, {"1": rng.randrange(9)}, rng.choice(frames))))
        elif kind == 2:
            d = s.seal(mutate(rng, runtime.frame(runtime.STACK, {"1": 1}, rng.choice(frames))))
        elif kind == 3:
            d = s.seal(runtime.frame(runtime.STACK, {"1": 1}, mutate(rng, rng.choice(frames))))
        elif kind == 4:
            d = s.seal(runtime.frame(rng.choice((runtime.STACK, runtime.CONTROL)), {}, rng.choice(frames)))
        else:
            some = [rng.choice(frames) for _ in range(rng.randint(2, 5))]
            if kind == 5 and rng.random() < 0.5:
                j = rng.randrange(len(some))
                some[j] = mutate(rng, some[j]) or b"\0"
            bundle = codec.encode_bundle(some)
            d = s.seal(runtime.frame(runtime.BUNDLE, {"1": 1}, bundle if kind == 5 else mutate(rng, bundle)))
        before = (dict(node.verifier.counts), dict(node.dropped), node.stack.stats.get("transport.decode_errors", 0))
        node.datagram_received(d, None)
        node._flush()
        why = _reason(node, *before)
        counts[why] = counts.get(why, 0) + 1
    node.writer.close()
    return counts


def _reason(node, auth_before: dict, dropped_before: dict, undecodable_before: int) -> str:
    """The one reason of the datagram just fed (what its feeding counted)."""
    for k, v in node.verifier.counts.items():
        if k != "accepted" and v > auth_before.get(k, 0):
            return k
    for k, v in node.dropped.items():
        if v > dropped_before.get(k, 0):
            return k
    if node.stack.stats.get("transport.decode_errors", 0) > undecodable_before:
        return "undecodable"
    return "taken"
