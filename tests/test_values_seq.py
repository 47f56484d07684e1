"""``Seq``: the sequence the replay keeps a view's log in.  It must be the
tuple it stands for in every way a model or a property can observe (equality
and hash both ways, indexing, slicing, iteration, the canonical-value
helpers), and an append must share the storage of the version it extends
(what makes a long view's replay linear), while a branch copies."""

import pickle

from hypothesis import given, strategies as st

from groupcheck.model.values import Fn, GrowSet, Seq, normalize, sort_key, to_json, to_tla

items = st.lists(st.tuples(st.integers(1, 4), st.integers(0, 50)), max_size=12)


@given(items, items)
def test_a_seq_is_the_tuple_of_its_elements(xs, ys):
    a, t = Seq(xs) + tuple(ys), tuple(xs) + tuple(ys)
    assert a == t and t == a and hash(a) == hash(t) and len(a) == len(t) and list(a) == list(t)
    assert {a} == {t} and frozenset({(1, a)}) == frozenset({(1, t)}) and Fn({1: a}) == Fn({1: t})
    for k in range(-len(t), len(t)):
        assert a[k] == t[k]
    for i in range(len(t) + 1):
        assert a[i:] == t[i:] and a[:i] == t[:i] and a[i::2] == t[i::2] and type(a[:i]) is tuple
    assert sort_key(a) == sort_key(t) and to_json(a) == to_json(t) and to_tla(a) == to_tla(t)
    assert normalize(a) == t and type(normalize(a)) is tuple and repr(a) == repr(t)
    assert pickle.loads(pickle.dumps(a)) == t and (() + a) == t and (a != t + ((9, 9),))


def test_an_append_shares_storage_and_a_branch_copies():
    a = Seq([(1, 1)])
    b = a + ((1, 2),)
    c = b + ((2, 1),)
    assert b._buf is a._buf is c._buf and (a, b, c) == (((1, 1),), ((1, 1), (1, 2)), ((1, 1), (1, 2), (2, 1)))
    d = b + ((3, 3),)                   # b is no longer the newest version: a branch
    assert d._buf is not c._buf and d == ((1, 1), (1, 2), (3, 3)) and c == ((1, 1), (1, 2), (2, 1))
    assert a + () is a and len(a) == 1
    try:
        a[1]
    except IndexError:
        pass
    else:
        raise AssertionError("a version reads past its own length")


# ``GrowSet``: the set the replay keeps FLUSH's delivered in, on the same terms.
elems = st.lists(st.integers(0, 30), max_size=12)


@given(elems, elems, elems)
def test_a_growset_is_the_frozenset_of_its_elements(xs, ys, zs):
    a, f = GrowSet(xs) | frozenset(ys), frozenset(xs) | frozenset(ys)
    z = frozenset(zs)
    assert a == f and f == a and hash(a) == hash(f) and len(a) == len(f) and set(a) == f
    assert {a} == {f} and frozenset({(1, a)}) == frozenset({(1, f)}) and Fn({1: a}) == Fn({1: f})
    assert all((x in a) == (x in f) for x in range(-1, 32))
    assert a | z == f | z and z | a == z | f and a - z == f - z and z - a == z - f and a & z == f & z
    assert (a <= z) == (f <= z) and (z <= a) == (f >= z) and a.isdisjoint(z) == f.isdisjoint(z)
    assert sort_key(a) == sort_key(f) and to_json(a) == to_json(f) and to_tla(a) == to_tla(f)
    assert normalize(a) == f and type(normalize(a)) is frozenset and eval(repr(a)) == f
    assert pickle.loads(pickle.dumps(a)) == f and (a != f | {99})


def test_a_growset_union_shares_storage_and_a_branch_copies():
    a = GrowSet([1])
    b = a | {2}
    c = b | {3}
    assert a._order is b._order is c._order and (a, b, c) == ({1}, {1, 2}, {1, 2, 3})
    assert c - a == {2, 3} and c - b == {3} and b - c == frozenset()
    d = b | {4}                         # b is no longer the newest version: a branch
    assert d._order is not c._order and d == {1, 2, 4} and c == {1, 2, 3} and 4 not in c and 3 not in d
    assert a | {1} is a and c | set() is c and 2 not in a
    e = a | {2}                         # b's union again, on a version no longer the newest: b's storage
    assert e._order is b._order and e == b and e - a == {2}
    assert (a | {3}) == {1, 3} and (a | {3})._order is not b._order


def test_a_growset_union_on_an_older_version_reuses_the_lineage_only_when_it_is_the_same_union():
    """``|`` on a version that is not the newest: the lineage's next version
    when the new elements are exactly those placed right after it, a copy
    when only some of them are (a union with one element the lineage has
    there and one it has not)."""
    a = GrowSet([1])
    b = a | {2}
    again = a | {2}
    assert again == b == {1, 2} and again._order is b._order          # the same union: shared
    other = a | {2, 3}
    assert other == frozenset({1, 2, 3}) and len(other) == 3 and 3 in other
    assert b == {1, 2} and 3 not in b and a == {1}
    assert a | {3} == frozenset({1, 3}) and 2 not in (a | {3})
