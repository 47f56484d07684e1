"""Model kernels (model/core.py's ``Kernel``): the explorer's fast encoding
of a model must be the same transition system as the model's ``next``.

For every reachable state of the models below: the kernel state decodes to
a model state and encodes back to itself, and the kernel's successors,
decoded, are exactly ``next``'s (same labels, same states, same
multiplicities).  The two searches agree on every count, on the set of
states and on the labelled edges.  The link (tests/test_spec_model_link.py)
compares the kernel's graph with TLC's; these tests tie it to ``next``,
which the proofs, replay and lock-step use."""

import zlib
from collections import Counter

import pytest

from groupcheck.model import manifest
from groupcheck.model.core import explore
from groupcheck.model.link import build_model
from groupcheck.model.parallel import explore_parallel
from groupcheck.model.registry import model_class

# Small models of each protocol with a kernel (a few thousand states at most,
# both the seed and the fixed variants' constants).
SMALL = [("sequencer", "Pair"), ("sequencer", "GapPair"), ("sequencer", "LivePairFixed")]
# SEQUENCER's three fixes in every combination, on 2 members with a crash
# (the manifest's models with them have 80-120k states).
SMALL += [("sequencer", {"N": 2, "MaxSeq": 1, "MaxCrashes": 1, "KeepForward": k, "ResendFirst": r,
                         "RetainForward": t})
          for k in (False, True) for r in (False, True) for t in (False, True)]
# STABLE's four variant constants in every combination on 2 members (one
# joins) with one message in flight, and two of them on 3 members.
_FLAGS = ("ResetOnDifferentMembers", "ResetOnViewChange", "CoordSwitchesAtJoin", "GossipMergedDigest")
SMALL += [("stable", {"N": 2, "NInit": 1, "Senders": {1}, "MaxSeq": 1, "MaxInFlight": 1,
                      **{f: bool(b >> i & 1) for i, f in enumerate(_FLAGS)}}) for b in range(16)]
SMALL += [("stable", {"N": 3, "NInit": 2, "Senders": {2}, "MaxSeq": 1, "MaxInFlight": 1,
                      **dict(zip(_FLAGS, flags))})
          for flags in ((True, True, True, False), (True, False, True, True))]
_STABLE_3 = SMALL[-1]
# Raincore's six variant constants in every combination the spec's ASSUMEs
# allow (FreshView and TokenRingClaim need NeutralRecovery: 40) on a 2-node
# ring from a steady start, with a crash, a recovery and token loss; the
# seed and the fixed variant from the cold start too (Initialization); and a
# third node that joins by 911 (Join, newNodes, EatingTimeout's insertion)
# on the seed and the fixed variants, with and without TokenRingClaim.
_RC = ("TimelyTimeouts", "StableFounder", "NeutralRecovery", "FreshClaim", "FreshView", "TokenRingClaim")
_RC_COMBOS = [dict(zip(_RC, (b >> i & 1 == 1 for i in range(6)))) for b in range(64)]
_RC_COMBOS = [v for v in _RC_COMBOS if v["NeutralRecovery"] or not (v["FreshView"] or v["TokenRingClaim"])]
_RC_SEED = dict.fromkeys(_RC, False)
_RC_FIXED = dict.fromkeys(_RC, True)
_RC_NO_RING = {**_RC_FIXED, "TokenRingClaim": False}
_RC_PAIR = {"N": 2, "InitSize": 2, "InitSeq": 2, "MaxSeq": 3, "Max911": 1, "MaxDown": 1}
_RC_JOIN = {"N": 3, "InitSize": 2, "InitSeq": 2, "MaxSeq": 3, "Max911": 1, "MaxDown": 0}
SMALL += [("raincore", {**_RC_PAIR, "ColdStart": False, **v}) for v in _RC_COMBOS]
SMALL += [("raincore", {**_RC_PAIR, "ColdStart": True, **v}) for v in (_RC_SEED, _RC_FIXED)]
SMALL += [("raincore", {**_RC_JOIN, "ColdStart": c, **v}) for c in (False, True)
          for v in (_RC_SEED, _RC_NO_RING, _RC_FIXED)]
# YieldClaim (F8; it needs TokenRingClaim and FreshClaim) on the fixed
# variant: the pair from both starts, the joiner, and a 3-node ring with two
# 911s in flight and token loss (a claim passes another node's pending claim).
_RC_YIELD = {**_RC_FIXED, "YieldClaim": True}
SMALL += [("raincore", {**_RC_PAIR, "ColdStart": c, **_RC_YIELD}) for c in (False, True)]
SMALL += [("raincore", {**_RC_JOIN, "ColdStart": c, **_RC_YIELD}) for c in (False, True)]
SMALL += [("raincore", {"N": 3, "InitSize": 3, "InitSeq": 3, "MaxSeq": 3, "Max911": 2, "MaxDown": 0,
                        "ColdStart": False, **_RC_YIELD})]
# Timely911 (F8c: the Eating timeout waits while a 911 is on its way to the node),
# alone on the seed and with every fix and YieldClaim, on the 3-node ring
# with two 911s in flight.
_RC_3RING = {"N": 3, "InitSize": 3, "InitSeq": 3, "MaxSeq": 3, "Max911": 2, "MaxDown": 0, "ColdStart": False}
SMALL += [("raincore", {**_RC_3RING, **v, "Timely911": True}) for v in (_RC_SEED, _RC_YIELD)]
SMALL += [("raincore", {**_RC_JOIN, "ColdStart": True, **_RC_YIELD, "Timely911": True})]
SMALL += [("raincore", "Live4")]
# Whole manifest models over 10,000 states (slow).
BIG = [("sequencer", "CoordCrash"), ("sequencer", "FailureFree"), ("sequencer", "MissingKeepResend"),
       ("sequencer", "MissingResendRetain"), ("sequencer", "LiveCrashFixed"), ("stable", "Pair"),
       ("stable", "MergedGossip"), ("stable", "PairJoinFlawed"), ("stable", "PairJoinRace")]
# Raincore's: the link's models over 10,000 states (invariants off; the
# manifest's other Raincore models have millions of states without them).
BIG += [("raincore", n) for n in ("Faithful3", "NoTokenRing2", "FixedRing2", "Fixed3", "Cold3", "Join3", "Live3",
                                  "LiveJoin3", "LiveJoinAgree3", "LiveNoStable3")]
FIRST = BIG


def _model(protocol, name):
    if isinstance(name, dict):
        return model_class(protocol)(name)
    (entry,) = manifest.select([protocol], name)
    return build_model(entry)


def _check_same_system(model) -> int:
    kern = model.kernel()
    assert kern is not None
    fast = explore(model, check_invariants=False, build_graph=True)
    # the search without the kernel asks next once per state it expands: the
    # successors it got are what the kernel's are compared with below
    nexts: dict = {}

    def next_recorded(s):
        nexts[s] = list(type(model).next(model, s))
        return nexts[s]
    model.next = next_recorded
    try:
        slow = explore(model, check_invariants=False, build_graph=True, kernel=False)
    finally:
        del model.next
    assert nexts
    assert (fast.distinct_states, fast.states_generated, fast.depth) == \
           (slow.distinct_states, slow.states_generated, slow.depth)
    assert set(fast.numbered) == set(slow.numbered)
    assert fast.init_states == slow.init_states

    def edges(res):
        st = res.numbered
        return {(st[i], st[j], frozenset(labs)) for (i, j), labs in res.edge_map.items()}

    assert edges(fast) == edges(slow)
    for k in fast.numbered.raw:
        s = kern.decode(k)
        assert kern.encode(s) == k
        want = Counter(nexts[s] if s in nexts else model.next(s))
        got = Counter((lab, kern.decode(t)) for lab, t in kern.next(k))
        assert got == want, (s, want - got, got - want)
    return fast.distinct_states


def _param(c, **kw):
    """A case's id: the model's name, or its constants' checksum, so that an id
    (tests/suite_split.txt names some) stays with its case when a list grows."""
    p, name = c
    key = name if isinstance(name, str) else \
        f"{zlib.crc32(repr(sorted((k, sorted(v) if isinstance(v, set) else v) for k, v in name.items())).encode()):08x}"
    return pytest.param(p, name, id=f"{p}-{key}", **kw)


@pytest.mark.parametrize("protocol,name", [_param(c) for c in SMALL])
def test_kernel_is_the_models_transition_system(protocol, name):
    assert _check_same_system(_model(protocol, name)) > 1


@pytest.mark.slow
@pytest.mark.parametrize("protocol,name", [_param(c) for c in BIG])
def test_kernel_is_the_models_transition_system_big(protocol, name):
    assert _check_same_system(_model(protocol, name)) > 10_000


@pytest.mark.parametrize("protocol,name", [_param(c) for c in FIRST])
def test_kernel_on_the_first_states_of_big_models(protocol, name):
    # the first 1500 states (breadth-first) of each big model: per
    # state, the kernel's successors are next's (SEQUENCER's KeepForward
    # needs 3 members to matter, which only these models have)
    model = _model(protocol, name)
    kern = model.kernel()
    res = explore(model, check_invariants=False, max_states=1500)
    assert not res.complete
    for k in res.numbered.raw:
        s = kern.decode(k)
        assert kern.encode(s) == k
        assert Counter((lab, kern.decode(t)) for lab, t in kern.next(k)) == Counter(model.next(s)), s


@pytest.mark.parametrize("protocol,name", [("sequencer", "CoordCrash"), ("stable", "Flawed"), ("raincore", "Faithful3"),
                                           ("raincore", "Timely3")])
def test_kernel_search_finds_the_same_violation(protocol, name):
    (entry,) = manifest.select([protocol], name)
    model = build_model(entry)
    fast = explore(model, check_invariants=[entry.expected])
    slow = explore(model, check_invariants=[entry.expected], kernel=False)
    assert fast.violation is not None and slow.violation is not None
    assert fast.violation.invariant == slow.violation.invariant == entry.expected
    assert fast.violation.depth == slow.violation.depth
    # the kernel's counterexample is a path of the model's (decoded) states
    trace = fast.violation.trace
    assert trace[0][0] is None and trace[0][1] in fast.init_states
    for (_, s), (lab, t) in zip(trace, trace[1:]):
        assert (lab, t) in list(model.next(s))
    assert not model.invariants[entry.expected](trace[-1][1])


def test_kernel_off_for_a_subclass_that_changes_an_action():
    from groupcheck.model.sequencer import SequencerModel

    class Variant(SequencerModel):
        def Send(self, s, m):
            return None

    consts = {"N": 2, "MaxSeq": 1, "MaxCrashes": 0}
    assert SequencerModel(consts).kernel() is not None
    assert Variant(consts).kernel() is None
    assert explore(Variant(consts), check_invariants=False).distinct_states == 1


def test_raincore_kernel_kept_for_a_subclass_that_starts_elsewhere():
    """The kernel encodes ``init()``'s states, so a subclass that starts from
    another state (tests start from F8's) keeps it, and searches as ``next``."""
    from groupcheck.model.raincore import RaincoreModel

    consts = {**_RC_PAIR, "ColdStart": False, **_RC_FIXED}
    base = RaincoreModel(consts)
    s0 = next(iter(base.init()))
    later = [t for _, t in base.next(s0)][-1]

    class Elsewhere(RaincoreModel):
        def init(self):
            yield later
    assert Elsewhere(consts).kernel() is not None
    fast = explore(Elsewhere(consts), check_invariants=False)
    slow = explore(Elsewhere(consts), check_invariants=False, kernel=False)
    assert fast.distinct_states == slow.distinct_states and fast.complete and slow.complete
    assert fast.distinct_states != explore(base, check_invariants=False).distinct_states


def test_raincore_kernel_off_for_a_subclass_that_changes_an_action():
    from groupcheck.model.raincore import RaincoreModel

    class Variant(RaincoreModel):
        def Crash(self, s, n):
            return None

    consts = {**_RC_PAIR, "ColdStart": False, **_RC_FIXED}
    assert RaincoreModel(consts).kernel() is not None
    assert Variant(consts).kernel() is None
    with_crash = explore(RaincoreModel(consts), check_invariants=False)
    without = explore(Variant(consts), check_invariants=False, build_graph=True)
    assert without.distinct_states < with_crash.distinct_states
    assert not any(lab.action == "Crash" for labs in without.edge_map.values() for lab in labs)


@pytest.mark.parametrize("protocol,name", [("sequencer", "Pair"), _STABLE_3, ("raincore", "Live4")])
def test_parallel_search_with_a_kernel(protocol, name):
    model = _model(protocol, name)
    serial = explore(model, check_invariants=False, kernel=False)
    par = explore_parallel(model, workers=2)
    assert (par.distinct_states, par.states_generated, par.depth) == \
           (serial.distinct_states, serial.states_generated, serial.depth)
