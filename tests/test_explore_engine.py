"""The explorer's engine: the multi-process search agrees with the serial
one, interning and the fast ``_replace`` keep the values' meaning, and states
survive pickling (the multi-process search ships them between workers)."""

import pickle
from typing import NamedTuple

import pytest

from groupcheck.model import manifest
from groupcheck.model.core import explore, state_type
from groupcheck.model.link import build_model
from groupcheck.model import parallel
from groupcheck.model.parallel import explore_parallel
from groupcheck.model.values import Fn, ModelValue, interning, record

# One small compared model per protocol (at most a few thousand states).
SMALL = [("sequencer", "Pair"), ("sequencerflush", "Pair"), ("flush", "FixedJoin"),
         ("stable", "PairJoinRace"), ("raincore", "Live4")]


def _model(protocol, name):
    (entry,) = manifest.select([protocol], name)
    return entry, build_model(entry)


@pytest.mark.parametrize("protocol,name", SMALL)
@pytest.mark.parametrize("workers", [2, 3])
def test_parallel_counts_equal_serial(protocol, name, workers):
    _, model = _model(protocol, name)
    serial = explore(model, check_invariants=False)
    par = explore_parallel(model, workers=workers)
    assert (par.distinct_states, par.states_generated, par.depth) == \
           (serial.distinct_states, serial.states_generated, serial.depth)
    assert par.violated is None


@pytest.mark.parametrize("protocol,name", [("sequencerflush", "Pair"), ("raincore", "Live4")])
def test_parallel_counts_hold_when_every_imbalance_is_moved(protocol, name, monkeypatch):
    # every surplus state moves (no threshold): moved states are expanded at
    # their own level by the worker they move to, so depth and counts stay
    monkeypatch.setattr(parallel, "_MIN_MOVE", 0)
    _, model = _model(protocol, name)
    serial = explore(model, check_invariants=False)
    par = explore_parallel(model, workers=3)
    assert par.moved > 0
    assert (par.distinct_states, par.states_generated, par.depth) == \
           (serial.distinct_states, serial.states_generated, serial.depth)
    assert len(par.worker_cpu_seconds) == len(par.worker_peak_kib) == 3


@pytest.mark.parametrize("sizes", [[0, 0], [100, 0], [0, 100, 7], [50, 51], [1000, 10, 10, 500], [5]])
def test_parallel_moves_even_out_the_frontiers(sizes):
    plan = parallel._moves(sizes)
    after = [n - sum(plan[i]) + sum(row[i] for row in plan) for i, n in enumerate(sizes)]
    assert sum(after) == sum(sizes)
    assert all(plan[i][i] == 0 for i in range(len(sizes)))
    assert all(plan[i][j] == 0 or sizes[i] > sum(sizes) // len(sizes) for i in range(len(sizes)) for j in range(len(sizes)))
    # every frontier ends within the threshold of its share
    assert max(after) - min(after) <= parallel._MIN_MOVE + 1


def test_parallel_reports_its_fingerprint_collision_probability():
    _, model = _model("flush", "FixedJoin")
    par = explore_parallel(model, workers=2)
    assert par.collision_probability == par.distinct_states * par.states_generated / 2.0 ** 64
    assert 0 < par.collision_probability < 1e-12


def test_parallel_count_is_the_pinned_count_of_an_ok_model():
    entry, model = _model("flush", "FixedJoin")
    assert entry.expected == "ok"
    assert explore_parallel(model, workers=2).distinct_states == entry.distinct_states


def test_parallel_reports_the_violated_invariant_deterministically():
    entry, model = _model("stable", "Flawed")
    serial = explore(model, check_invariants=[entry.expected])
    assert serial.violation is not None and serial.violation.invariant == entry.expected
    runs = [explore_parallel(model, workers=2, check_invariants=[entry.expected]) for _ in range(2)]
    assert all(r.violated == entry.expected for r in runs)
    # stopped at the level of the serial counterexample's last state
    assert all(r.depth == serial.violation.depth for r in runs)
    assert runs[0].violating_state == runs[1].violating_state
    assert not model.invariants[entry.expected](runs[0].violating_state)


def test_parallel_rejects_no_workers():
    _, model = _model("flush", "FixedJoin")
    with pytest.raises(ValueError):
        explore_parallel(model, workers=0)


def test_interning_shares_equal_functions_and_keeps_equality_structural():
    outside = record(type="DATA", sender=1, seqno=2)
    with interning():
        a = record(type="DATA", sender=1, seqno=2)
        b = Fn({"seqno": 2, "sender": 1, "type": "DATA"})
        c = Fn({1: a}).set(1, b)
        assert a is b
        assert c == Fn({1: outside}) and c[1] is a
    d = record(type="DATA", sender=1, seqno=2)
    assert d is not a and d == a == outside and hash(d) == hash(a)
    assert record(type="DATA", sender=1, seqno=3) != a


def test_fn_order_hash_and_equality_do_not_depend_on_construction():
    f = Fn({3: "c", 1: "a", 2: "b"})
    g = Fn([(1, "a"), (2, "b"), (3, "c")])
    assert list(f) == [1, 2, 3] and f.items() == ((1, "a"), (2, "b"), (3, "c"))
    assert f == g and hash(f) == hash(g)
    assert f.set(2, "x") == Fn({1: "a", 2: "x", 3: "c"}) and list(f.set(2, "x")) == [1, 2, 3]
    assert f.set(0, "z").items()[0] == (0, "z")
    assert f.update({3: "y", 1: "w"}).items() == ((1, "w"), (2, "b"), (3, "y"))
    assert f.restrict({1, 3}) == Fn({1: "a", 3: "c"})
    assert Fn({1: "a"}) != Fn({2: "a"})
    mixed = Fn({ModelValue("n1"): 1, "x": 2, (1, 2): 3})
    assert mixed == Fn({(1, 2): 3, "x": 2, ModelValue("n1"): 1})


def test_fn_and_states_survive_pickling():
    _, model = _model("stable", "PairJoinRace")
    res = explore(model, check_invariants=False)
    for s in list(res.init_states) + [t for _, t in model.next(res.init_states[0])]:
        back = pickle.loads(pickle.dumps(s))
        assert back == s and hash(back) == hash(s) and type(back) is type(s)


class _S(NamedTuple):
    a: int
    b: Fn
    c: tuple


_Fast = state_type(NamedTuple("_Fast", [("a", int), ("b", Fn), ("c", tuple)]))


def test_state_type_replace_means_what_namedtuple_replace_means():
    slow = _S(1, Fn({1: 2}), ())
    fast = _Fast(1, Fn({1: 2}), ())
    for kw in ({}, {"a": 5}, {"b": Fn({1: 3}), "c": (1,)}, {"a": None, "b": None, "c": None}):
        assert tuple(fast._replace(**kw)) == tuple(slow._replace(**kw))
        assert type(fast._replace(**kw)) is _Fast
    with pytest.raises(TypeError):
        fast._replace(d=1)


def test_interning_never_shares_false_for_zero():
    with interning():
        zeros = Fn({1: 0, 2: 0})
        falses = Fn({1: False, 2: False})
        nested = Fn({"a": Fn({1: True})}), Fn({"a": Fn({1: 1})})
        again = Fn({1: False}).set(2, False)
    assert falses is not zeros and all(type(v) is bool for v in falses.values())
    assert again is falses
    assert type(nested[0]["a"][1]) is bool and type(nested[1]["a"][1]) is int
