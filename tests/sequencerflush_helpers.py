"""SEQUENCER over FLUSH's histories as the lock-step driver and the
whole-state traces log them (tests only: the replay accumulates the same
from the model's steps, ``SequencerFlushBinding.histories``)."""
from __future__ import annotations

from types import SimpleNamespace

from groupcheck.conformance.replay.sequencerflush import layer_of


def sequencer_histories(events: list[dict], nodes) -> SimpleNamespace:
    """Delivery histories, sent counts, and the view each delivery was made
    in (member -> view -> set), from records that log whole SEQUENCER
    states (core/trace/reader.py ``whole``)."""
    delivered = {m: () for m in nodes}
    sent = {m: 0 for m in nodes}
    in_view: dict[int, dict[int, set]] = {m: {} for m in nodes}
    vid = {m: 1 for m in nodes}
    for ev in events:
        if layer_of(ev) != "sequencer" or ev.get("state") is None:
            continue
        m, st = ev["nid"], ev["state"]
        new = tuple(tuple(x) for x in st["delivered"])
        for x in new[len(delivered[m]):]:
            in_view[m].setdefault(st["vid"], set()).add(x)
        delivered[m], sent[m], vid[m] = new, st["sent"], st["vid"]
    return SimpleNamespace(delivered=delivered, sent=sent, in_view=in_view, vid=vid)
