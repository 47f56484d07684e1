"""Campaigns that reach every guard: the aimed plans of the audit's draws
(docs/raincore.md section 7, docs/flush.md "Aimed plans", docs/impl.md "The
fault grammar") reach the guard they aim at, and the guard's mutant (the
guard taken out by monkeypatching) fails the aimed runs where the drawn
plans alone never reach it.

Measured over the draws' first seeds (docs give the same figures):

* Raincore, stale 911 claims (``fresh_claim``): 300 seeds, 94 aimed
  (``late911``, two token losses): 87 reach a stale YES, 0 of the 206 drawn
  alone; without the check 87 aimed runs are nonconforming, 0 drawn.
* FLUSH over the ring, a ring lagging FLUSH's view (``stale_ring_view``):
  400 seeds, 102 aimed: 42 reach it, 0 of the 184 drawn alone; acting on
  the older commit makes the 42 nonconforming, 0 drawn.
* FLUSH over the ring, truncated datagrams: 114 of the 400 with
  ``truncate=0.1``: 104 count and drop one, 0 of the drawn alone; a
  transport that lets the codec's error escape fails all 104.
"""

import collections
import re

import pytest

from groupcheck.conformance.audit import stages as audit
from groupcheck.conformance.replay import registry
from groupcheck.conformance.replay import raincore as cr
from groupcheck.conformance.replay import raincoreflush as crf
from groupcheck.conformance.replay.conform import replay
from groupcheck.core.trace.reader import from_records
from groupcheck.impl import codec, faults, flush, reliable, stack
from groupcheck.impl.events import Receive, Up
from groupcheck.impl.raincore import Raincore


def campaign(proto, seeds, aimed, faults_of=None):
    """Drawn runs of ``proto`` by seed: (aimed?, verdict or the exception's
    name); ``aimed(faults)`` tells an aimed plan from a drawn one,
    ``faults_of`` may rewrite a run's faults."""
    out = []
    for seed in seeds:
        f, o = proto.draw(seed)
        f = faults_of(f) if faults_of else f
        try:
            records, _ = proto.simulate(seed, f, {**proto.default_options, **o})
            verdict = replay(from_records(records, f"s{seed}")).verdict
        except Exception as e:       # a mutant may crash a node
            verdict = type(e).__name__
        out.append((aimed(f), verdict))
    return out


def counting(monkeypatch, module, key):
    """Runs whose ``module.bump(stats, key)`` fired: call ``reset`` before
    each run, read ``hit`` after it."""
    hits = collections.Counter()
    bump = module.bump

    def count(stats, k, by=1):
        hits[k] += by
        return bump(stats, k, by)
    monkeypatch.setattr(module, "bump", count)
    return hits


def reach(proto, seeds, aimed, hits, key, faults_of=None):
    """(aimed runs, aimed runs reaching ``key``, drawn runs reaching it)."""
    n = on = off = 0
    for seed in seeds:
        hits.clear()
        f, o = proto.draw(seed)
        f = faults_of(f) if faults_of else f
        proto.simulate(seed, f, {**proto.default_options, **o})
        if aimed(f):
            n += 1
            on += hits[key] > 0
        else:
            off += hits[key] > 0
    return n, on, off


# ---------------------------------------------------------------- Raincore: stale 911 claims

def stale911(f: str) -> bool:
    return "late911" in f


@pytest.fixture
def stale_claims(monkeypatch):
    """Counts a 911 of a node's own that comes home YES while it starves,
    for an older claim than its current one (the case ``fresh_claim`` refuses)."""
    hits = collections.Counter()
    received = Raincore._911_received

    def spy(self, m, now):
        if (m.orig == self.nid and m.status == "YES" and self.tokenState == "Starving"
                and self.lastToken.nodelist and not self.recovered and m.seq != self.claim_seq()):
            hits["stale_claim"] += 1
        return received(self, m, now)
    monkeypatch.setattr(Raincore, "_911_received", spy)
    return hits


def test_aimed_raincore_runs_reach_stale_claims(stale_claims):
    n, on, off = reach(cr.PROTOCOL, range(60), stale911, stale_claims, "stale_claim")
    assert n >= 10 and on >= n // 2, (n, on)
    assert off == 0, off


def test_raincore_without_the_stale_claim_check_fails_the_aimed_runs(monkeypatch):
    regenerate = Raincore._regenerate
    # the stale check removed: any YES of its own counts as the current claim
    monkeypatch.setattr(Raincore, "_regenerate", lambda self, m: regenerate(self, m.replace(seq=self.claim_seq())))
    runs = campaign(cr.PROTOCOL, range(60), stale911)
    assert sum(a and v == "nonconforming" for a, v in runs) >= 5, runs
    assert all(v == "ok" for a, v in runs if not a), runs


def test_late_911s_put_equal_messages_in_flight_the_ring_holds_once():
    """The ring's Transport Manager holds a message equal to one in flight
    once, as the spec's sets: late 911s make it (94 of 94 aimed runs of 300
    seeds), the drawn plans never (0 of 206), so their runs are as before."""
    from groupcheck.impl.sim_raincore import RaincoreConfig, simulate
    merged = {True: 0, False: 0}
    for seed in range(40):
        f, o = cr.draw(seed)
        plan = cr.fault_plan(f, seed, o)
        sim = simulate(RaincoreConfig(n=o["nodes"], init_size=o["ring"], init_seq=11), seed, plan)[2]
        merged[stale911(f)] += sim.net.merged > 0
    assert merged[True] >= 5 and merged[False] == 0, merged


# ---------------------------------------------------------------- FLUSH over the ring: a lagging ring

def stale_view(f: str) -> bool:
    return not f.startswith("auto")


def test_aimed_ring_flush_runs_reach_a_ring_lagging_the_view(monkeypatch):
    hits = counting(monkeypatch, flush, "stale_ring_view")
    n, on, off = reach(crf.PROTOCOL, range(80), stale_view, hits, "stale_ring_view")
    assert n >= 10 and on >= n // 5, (n, on)
    assert off == 0, off


def test_ring_flush_acting_on_an_older_commit_fails_the_aimed_runs(monkeypatch):
    monkeypatch.setattr(flush.Flush, "_ring_newer", lambda self: True)
    runs = campaign(crf.PROTOCOL, range(80), stale_view)
    assert sum(a and v == "nonconforming" for a, v in runs) >= 2, runs
    assert all(v == "ok" for a, v in runs if not a), runs


# ---------------------------------------------------------------- truncated datagrams

def truncated(f: str) -> bool:
    return "truncate" in f


def test_truncate_is_a_network_item_the_ring_refuses():
    assert faults.parse_faults("loss=0.1,truncate=0.2", faults.NETWORK).truncate == 0.2
    with pytest.raises(ValueError, match="truncate=2"):
        faults.parse_faults("truncate=2")
    with pytest.raises(ValueError, match="raincore has no such fault"):
        cr.fault_plan("truncate=0.1", 0, {"nodes": 4, "ring": 3})


def test_aimed_ring_flush_runs_count_and_drop_truncated_datagrams(monkeypatch):
    hits = counting(monkeypatch, stack, "decode_errors")
    n, on, off = reach(crf.PROTOCOL, range(40), truncated, hits, "decode_errors")
    assert n >= 5 and on >= n * 3 // 4, (n, on)
    assert off == 0, off
    runs = campaign(crf.PROTOCOL, range(40), truncated)
    assert all(v == "ok" for _, v in runs), runs      # a truncated datagram is a loss to the protocol


def test_a_transport_that_does_not_drop_a_malformed_datagram_fails_the_aimed_runs(monkeypatch):
    handle = stack.Transport.handle
    monkeypatch.setattr(stack.Transport, "handle", lambda self, ev, now: [Up(ev.src, codec.decode(ev.msg))]
                        if isinstance(ev, Receive) else handle(self, ev, now))
    runs = campaign(crf.PROTOCOL, range(40), truncated)
    assert sum(a and v == "DecodeError" for a, v in runs) >= 5, runs
    assert all(v == "ok" for a, v in runs if not a), runs


def test_a_codec_reading_a_short_frame_as_zero_padded_fails_truncated_runs(monkeypatch):
    """The subtler fault: the frame's missing tail read as zeros (an ACK's
    number becomes a larger one, a payload shorter).  SEQUENCER over FLUSH's
    drawn runs with ``truncate=0.1`` added: 5 of 40 fail (4 nonconforming,
    1 EventualDelivery); without truncation none (the drawn runs of FLUSH
    over the ring with truncation: 1 of 114)."""
    monkeypatch.setattr(codec, "_unpack", lambda st, body: st.unpack_from(bytes(body).ljust(st.size, b"\0"), 0))
    monkeypatch.setattr(codec, "_exact_tail", lambda body, start, n: body[start:start + n])
    proto = registry.get("sequencerflush")
    runs = campaign(proto, range(40), truncated, lambda f: f + ",truncate=0.1")
    assert sum(v != "ok" for _, v in runs) >= 1, runs
    assert all(v == "ok" for _, v in campaign(proto, range(40), truncated)), "no truncation, no effect"


# ---------------------------------------------------------------- reordered datagrams

def only_reordering(f: str) -> str:
    return re.sub(r"reorder=[0-9.]+", "reorder=5", re.sub(r"(loss|dup)=[0-9.]+", r"\1=0", f))


@pytest.fixture
def ahead(monkeypatch):
    """Counts reliable frames that arrive ahead of an earlier one of their stream."""
    hits = collections.Counter()
    on_data = reliable.Reliable._on_data

    def spy(self, src, msg, out):
        if msg.seqno > self.next.get(src, 1) and msg.seqno not in self.buf.get(src, {}):
            hits["ahead"] += 1
        return on_data(self, src, msg, out)
    monkeypatch.setattr(reliable.Reliable, "_on_data", spy)
    return hits


def test_reordering_alone_reaches_the_reliable_layers_hold_back(ahead):
    """FLUSH's drawn runs, their loss and duplication taken out, reorder=5:
    47 of 60 get a frame ahead of its predecessor (the drawn plans: 53)."""
    proto = registry.get("flush")
    n, on, _ = reach(proto, range(30), lambda f: True, ahead, "ahead", only_reordering)
    assert on >= n // 2, (n, on)


def test_a_reliable_layer_that_passes_a_frame_over_a_gap_fails_reordered_runs(ahead, monkeypatch):
    """Without loss, reordering alone: 47 of 60 runs fail (35 nonconforming,
    12 violations); the drawn plans' losses make the same gaps (53 of 60)."""
    spy = reliable.Reliable._on_data

    def over_the_gap(self, src, msg, out):
        self.next[src] = max(self.next.get(src, 1), msg.seqno)
        return spy(self, src, msg, out)
    monkeypatch.setattr(reliable.Reliable, "_on_data", over_the_gap)
    runs = campaign(registry.get("flush"), range(30), lambda f: True, only_reordering)
    assert sum(v != "ok" for _, v in runs) >= 5, runs


# ---------------------------------------------------------------- the stratified TLC sample

def test_the_sample_takes_a_run_of_every_class_first_then_spreads():
    classes = {s: {"verdict:ok", "crash:none"} for s in range(100)}
    classes[37] = {"verdict:violation:TotalOrder", "crash:coordinator"}
    classes[38] = {"verdict:ok", "crash:coordinator", "join"}
    classes[91] = {"verdict:ok", "truncate", "crash:other"}
    chosen = audit.sample_seeds(100, 0, 5, classes.__getitem__)
    assert len(chosen) == 5 == len(set(chosen))
    assert set().union(*(classes[s] for s in chosen)) == set().union(*classes.values())
    assert {37, 38, 91} <= set(chosen)
    assert chosen == audit.sample_seeds(100, 0, 5, classes.__getitem__)
    assert audit.sample_seeds(100, 0, 5) == [0, 20, 40, 60, 80]       # no classes: spread evenly
    # more classes than room: the rarest first, the sample keeps its size
    many = {s: {f"k{s}"} for s in range(100)}
    assert len(audit.sample_seeds(100, 0, 5, many.__getitem__)) == 5


def test_the_sample_of_a_campaign_holds_its_violations_and_fault_kinds():
    """SEQUENCER's first 30 runs: the evenly spread sample (0, 6, 12, 18,
    24) has no TotalOrder violation; the stratified one has every class."""
    classes = {s: audit.run_classes("sequencer", s) for s in range(30)}
    chosen = audit.sample_seeds(30, 0, 5, classes.__getitem__)
    assert set().union(*(classes[s] for s in chosen)) == set().union(*classes.values())
    assert any(c.startswith(("verdict:violation", "verdict:documented")) for s in chosen for c in classes[s])


def test_fault_kinds_of_a_header():
    plan = faults.parse_faults("crash=1@10,crash=3@20,truncate=0.1,tokenloss=5,loss=0.1").to_json()
    assert faults.fault_kinds(plan) == {"crash:coordinator", "crash:other", "truncate", "tokenloss", "loss"}
    assert faults.fault_kinds(faults.FaultPlan().to_json()) == {"crash:none"}
    assert faults.fault_kinds({}) == {"crash:none"}
