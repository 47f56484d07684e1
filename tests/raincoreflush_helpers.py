"""What the tests of FLUSH over the Raincore ring share: a run that
conforms, the replay of a copy with one record forged, and the mutants of
FLUSH's ring mode that the campaign and the lock-step driver must catch."""
from __future__ import annotations

import copy

from groupcheck.conformance.replay import raincoreflush as crf
from groupcheck.core.trace.reader import from_records
from groupcheck.impl import flush as impl_flush


def conforming_run(seed: int, faults: str, options: dict) -> list:
    """The records of one simulated run, which the replay accepts."""
    records, _ = crf.simulate(seed, faults, options)
    assert crf.replay(from_records(records), visited=False).verdict == "ok"
    return records


def replay_forged(records: list, pick, change):
    """The replay's report on a copy of ``records`` whose first event with
    ``pick(record)`` is changed in place by ``change``."""
    out = copy.deepcopy(records)
    i = next(i for i, r in enumerate(out) if r.get("kind") == "event" and pick(r))
    change(out[i])
    return crf.replay(from_records(out), visited=False)


def mutate(monkeypatch, mutant: str) -> None:
    """Put FLUSH's ring mode wrong:
    ``oracle_view``: install survivors plus joiners (the oracle's rule), not
    the ring's committed view;
    ``flush_on_suspicion``: flush as soon as the ring's localView drops a
    member, before the ring commits a view;
    ``no_reconcile``: no digest reconciliation (the seed as written)."""
    if mutant == "oracle_view":
        orig = impl_flush.Flush._send_view

        def send_view(self, out):
            self.ring = False
            try:
                orig(self, out)
            finally:
                self.ring = True
        monkeypatch.setattr(impl_flush.Flush, "_send_view", send_view)
    elif mutant == "flush_on_suspicion":
        monkeypatch.setattr(impl_flush.Flush, "_ring_pending",
                            lambda self: bool(self.ring_view) and (set(self.ring_view) != set(self.members)
                                                                   or bool(self.suspected)))
    else:
        assert mutant == "no_reconcile", mutant
        monkeypatch.setattr(impl_flush.Flush, "_reconcile", lambda self, m, out: None)


def crashed_eating(records: list) -> list:
    """The nodes whose Crash record comes while they hold the token (their
    last logged tokenState Eating): a kill of the holder, on the lossy ring."""
    eating, out = set(), []
    for e in records[1:]:
        if e.get("kind") != "event":
            continue
        if e["name"] == "Crash" and e["nid"] in eating:
            out.append(e["nid"])
        st = e.get("state") or {}
        if "tokenState" in st:
            (eating.add if st["tokenState"] == "Eating" else eating.discard)(e["nid"])
    return out


def crash_before_take(records: list) -> tuple[list, int]:
    """A trace in which the first crashed node p dies with a token on the
    wire: the run's records up to a token send of p's that its receiver
    took with no record of p in between, then p's Crash record, then the
    receiver's TokenReceived of that token.  Returns the records and the
    index (among the events) of the Crash record."""
    evs = [(i, r) for i, r in enumerate(records) if r.get("kind") == "event"]
    crash = next(r for _, r in evs if r["name"] == "Crash")
    p, last, pair = crash["nid"], None, None
    for i, r in evs:
        if r is crash:
            break
        if r["name"] == "TokenReceived" and r["msg"]["cur"] == p and last is not None:
            pair = (last, i)
        if r["nid"] == p:
            last = i
    assert pair is not None, "no token of the crashed node taken right after its send"
    out = copy.deepcopy(records[:pair[0] + 1] + [crash, records[pair[1]]])
    return out, sum(1 for r in out if r.get("kind") == "event") - 2
