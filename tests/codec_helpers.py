"""What the wire-codec tests of every protocol share: a frame cut short or
with bytes after it is refused, and any frame decodes to a message that
encodes back to it (the codec is canonical) or is refused."""
from __future__ import annotations

import pytest
from hypothesis import strategies as st

from groupcheck.impl import codec


def cut_and_extended_refused(frame: bytes, data, max_extra: int) -> None:
    """A drawn prefix of ``frame`` and ``frame`` with 1..max_extra drawn bytes after it are refused."""
    cut = data.draw(st.integers(0, len(frame) - 1))
    with pytest.raises(codec.DecodeError):
        codec.decode(frame[:cut])
    with pytest.raises(codec.DecodeError):
        codec.decode(frame + data.draw(st.binary(min_size=1, max_size=max_extra)))


def canonical_or_refused(frame: bytes) -> None:
    """``frame`` is refused, or decodes to a message that encodes back to the same bytes."""
    try:
        m = codec.decode(frame)
    except codec.DecodeError:
        return
    assert codec.encode(m) == frame
