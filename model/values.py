"""Canonical Python encoding of TLA+ values.

Theory of operation
-------------------
Two sides produce TLA+ values: TLC (printed text, parsed by
``groupcheck.model.tlc_values``) and the Python models in this package.  To
compare their state graphs we map both onto one hashable encoding:

=================  ==========================================
TLA+               Python
=================  ==========================================
integer            ``int``
string             ``str``
boolean            ``bool``
model value        ``ModelValue("name")``
set                ``frozenset``
sequence/tuple     ``tuple``
record, function   ``Fn`` (an immutable, hashable mapping)
=================  ==========================================

TLC identifies a function whose domain is ``1..n`` with the sequence of its
range (``[i \\in 1..2 |-> x] = <<x, x>>``) and a record with a function over
strings.  :func:`normalize` applies the first rule everywhere, so a model may
build a function over ``1..N`` as an ``Fn`` and still compare equal to TLC's
``<<...>>`` print-out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Set
from itertools import islice
from typing import Any


class ModelValue:
    """A TLC model value (an uninterpreted constant such as ``n1`` or ``NULL``)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "name", name)

    def __setattr__(self, key: str, value: Any) -> None:  # pragma: no cover
        raise AttributeError("ModelValue is immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ModelValue) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("ModelValue", self.name))

    def __repr__(self) -> str:
        return f"ModelValue({self.name!r})"

    def __lt__(self, other: "ModelValue") -> bool:
        return self.name < other.name


def sort_key(v: Any) -> tuple:
    """A total order over canonical values (TLC's own order is irrelevant here:
    we only need deterministic printing and hashing)."""
    if isinstance(v, bool):
        return (0, v)
    if isinstance(v, int):
        return (1, v)
    if isinstance(v, str):
        return (2, v)
    if isinstance(v, ModelValue):
        return (3, v.name)
    if isinstance(v, (tuple, Seq)):
        return (4, len(v), tuple(sort_key(x) for x in v))
    if isinstance(v, (frozenset, GrowSet)):
        items = sorted((sort_key(x) for x in v))
        return (5, len(items), tuple(items))
    if isinstance(v, Fn):
        return (6, len(v), tuple((sort_key(k), sort_key(x)) for k, x in v.items()))
    raise TypeError(f"not a canonical TLA+ value: {v!r} ({type(v).__name__})")


def _sorted_items(d: dict) -> tuple:
    """``d``'s items in :func:`sort_key` order of the keys.  Keys all of type
    ``int`` (not ``bool``) or all of type ``str`` sort alike under Python's
    own order, which skips building a sort key per item."""
    types = set(map(type, d))
    if len(types) == 1 and (int in types or str in types):
        return tuple(sorted(d.items()))
    return tuple(sorted(d.items(), key=lambda kv: sort_key(kv[0])))


# Hash-consing.  While a table is installed (the explorer installs one for the
# duration of a search, see :func:`interning`), every Fn built is looked up in
# it and an equal Fn built earlier is returned instead, so equal functions are
# mostly the same object: comparing states then stops at identity instead of
# walking nested records, and each distinct function's hash is computed once.
# Equality stays structural; the table only shares objects.  Python's
# equality conflates FALSE with 0 and TRUE with 1, TLA+'s does not: Fn's hash
# covers its values' types, so {1: FALSE} and {1: 0} land in different slots
# and are never shared for one another.
_INTERN: dict | None = None


class interning:
    """Context manager: intern every Fn built inside the block (nestable)."""

    def __enter__(self) -> "interning":
        global _INTERN
        self._saved = _INTERN
        if _INTERN is None:
            _INTERN = {}
        return self

    def __exit__(self, *exc: Any) -> None:
        global _INTERN
        _INTERN = self._saved


class Fn(Mapping):
    """An immutable, hashable TLA+ function or record.

    The items are held in a dict built in :func:`sort_key` order of the keys
    (an EXCEPT copies the dict and replaces one value, which keeps that
    order), so iteration and printing are deterministic and equal functions
    hash alike regardless of construction order; equality is dict equality.
    """

    # Immutable: no method changes an Fn, and its slots are its only
    # attributes (no __dict__: setting any other name raises AttributeError).
    # The three private slots are written only while an Fn is built, and
    # caches after: no __setattr__ guards them, so that building one (every
    # model step builds a few) stores its slots directly, not through a call each.
    __slots__ = ("_d", "_items", "_hash")

    def __new__(cls, data: Mapping | Iterable[tuple[Any, Any]] = ()) -> "Fn":
        t = type(data)
        # dict() takes a mapping (through its keys) or an iterable of pairs
        items = _sorted_items(data if t is dict else data._d if t is Fn else dict(data))
        f = cls._of(dict(items))
        if f._items is None:   # keep the sorted items (f may be an equal Fn interned earlier)
            f._items = items
        return f

    def __reduce__(self):
        return (_fn_of_items, (self.items(),))

    def __getitem__(self, key: Any) -> Any:
        return self._d[key]

    def __iter__(self) -> Iterator:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __contains__(self, key: object) -> bool:
        return key in self._d

    def get(self, key: Any, default: Any = None) -> Any:
        return self._d.get(key, default)

    def keys(self):  # type: ignore[override]
        return self._d.keys()

    def values(self):  # type: ignore[override]
        return self._d.values()

    def items(self):  # type: ignore[override]
        items = self._items
        if items is None:
            items = self._items = tuple(self._d.items())
        return items

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is Fn or isinstance(other, Fn):
            # Unequal hashes, once both are known, settle it without a walk.
            h, g = self._hash, other._hash
            if h is not None and g is not None and h != g:
                return False
            return self._d == other._d
        return NotImplemented

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            # The dict is in key order, so equal functions list equal values;
            # hashing the values (and their types: FALSE is not 0) saves
            # building the item pairs.
            values = tuple(self._d.values())
            h = self._hash = hash((values, tuple(map(type, values))))
        return h

    def __repr__(self) -> str:
        return "Fn({" + ", ".join(f"{k!r}: {v!r}" for k, v in self._d.items()) + "})"

    @classmethod
    def _of(cls, d: dict) -> "Fn":
        # ``d`` is already in key order (a copy of an Fn's dict with values
        # replaced, or a sub-dict of one).
        f = _NEW(cls)
        f._d = d
        f._items = None
        f._hash = None
        table = _INTERN
        if table is not None:
            return table.setdefault(f, f)
        return f

    # TLA+ EXCEPT: [f EXCEPT ![k] = v]
    def set(self, key: Any, value: Any) -> "Fn":
        d = self._d.copy()
        if key not in d:
            d[key] = value
            return Fn(d)
        d[key] = value
        # ``Fn._of(d)`` in line: every model step sets a few
        f = _NEW(Fn)
        f._d = d
        f._items = None
        f._hash = None
        table = _INTERN
        if table is not None:
            return table.setdefault(f, f)
        return f

    def update(self, pairs: Mapping) -> "Fn":
        d = self._d.copy()
        n = len(d)
        d.update(pairs)
        if len(d) != n:
            return Fn(d)
        return Fn._of(d)

    def restrict(self, domain: Iterable) -> "Fn":
        """``[k \\in domain |-> f[k]]`` for ``domain`` a subset of DOMAIN f."""
        dom = domain if isinstance(domain, (set, frozenset)) else set(domain)
        return Fn._of({k: v for k, v in self._d.items() if k in dom})


_NEW = object.__new__


class Seq:
    """An immutable sequence that equals the tuple of its elements (and
    hashes alike, so the two mix in sets and states), whose append shares
    storage with the sequence it extends: appending to the longest version
    of a buffer costs O(1) where ``tuple + (x,)`` copies the whole tuple; an
    append to an older version copies its prefix (a branch).  The replay
    keeps a long view's SEQUENCER-over-FLUSH log in one, which made every
    receive O(view) and a soak's check quadratic (conformance/replay/sequencerflush.py,
    ``reduce``).  Elements below a version's length never change, so a
    version's hash, once computed, stays right."""

    __slots__ = ("_buf", "_n", "_hash")

    def __init__(self, items: Iterable = ()) -> None:
        self._buf = list(items)
        self._n = len(self._buf)
        self._hash: int | None = None

    @classmethod
    def _at(cls, buf: list, n: int) -> "Seq":
        o = object.__new__(cls)
        o._buf, o._n, o._hash = buf, n, None
        return o

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator:
        return islice(self._buf, self._n)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return tuple(self._buf[slice(*k.indices(self._n))])
        if k < 0:
            k += self._n
        if not 0 <= k < self._n:
            raise IndexError("Seq index out of range")
        return self._buf[k]

    def __add__(self, other):
        if not isinstance(other, (tuple, Seq)):
            return NotImplemented
        if not other:
            return self
        buf = self._buf if len(self._buf) == self._n else self._buf[: self._n]
        buf.extend(other)
        return Seq._at(buf, len(buf))

    def __radd__(self, other):
        if isinstance(other, tuple):
            return other + tuple(self)
        return NotImplemented

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if isinstance(other, Seq):
            return self._n == other._n and (self._buf is other._buf or self._buf[: self._n] == other._buf[: other._n])
        if isinstance(other, tuple):
            return self._n == len(other) and tuple(self) == other
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(tuple(self))
        return self._hash

    def __repr__(self) -> str:
        return repr(tuple(self))

    def __reduce__(self):
        return (Seq, (tuple(self),))



class GrowSet(Set):
    """An immutable set that equals the frozenset of its elements (and
    hashes alike), whose union with a few new elements shares storage with
    the set it extends: Seq's idea for a set that only grows.  The versions
    of one lineage share an insertion-ordered list and an element -> position
    map; a version is a length, and holds the elements placed before it.
    Adding to the newest version costs the new elements; adding to an older
    one returns the lineage's next version when that version is the same
    union, else copies its elements (a branch).  ``newer - older`` of one lineage is
    the slice between them.  The replay keeps FLUSH's ``delivered`` (every
    message a member delivered in the run) in one: as a frozenset each
    Multicast and Deliver copied it, and a soak's check was quadratic."""

    __slots__ = ("_order", "_pos", "_n", "_hash")

    def __init__(self, items: Iterable = ()) -> None:
        self._order: list = []
        self._pos: dict = {}
        for x in items:
            if x not in self._pos:
                self._pos[x] = len(self._order)
                self._order.append(x)
        self._n = len(self._order)
        self._hash: int | None = None

    @classmethod
    def _at(cls, order: list, pos: dict, n: int) -> "GrowSet":
        o = object.__new__(cls)
        o._order, o._pos, o._n, o._hash = order, pos, n, None
        return o

    @classmethod
    def _from_iterable(cls, it):
        return frozenset(it)            # what Set's other operators make is a plain set

    def __contains__(self, x) -> bool:
        i = self._pos.get(x)
        return i is not None and i < self._n

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator:
        return islice(self._order, self._n)

    def __or__(self, other):
        if not isinstance(other, (Set, set, frozenset)):
            return NotImplemented
        new = [x for x in other if x not in self]
        if not new:
            return self
        order, pos, k = self._order, self._pos, self._n + len(new)
        if len(order) != self._n:
            # the same union made again on this version (the replay's other
            # candidate states, which share the acting member's set, take the
            # same step): the lineage holds it already, right after this version
            if all(self._n <= pos.get(x, -1) < k for x in new):
                return GrowSet._at(order, pos, k)
            order = order[: self._n]                 # another union: branch off a copy
            pos = {x: i for i, x in enumerate(order)}
        for x in new:                                # the newest version: extend in place
            pos[x] = len(order)
            order.append(x)
        return GrowSet._at(order, pos, len(order))

    __ror__ = __or__

    def __sub__(self, other):
        if isinstance(other, GrowSet) and other._order is self._order and other._n <= self._n:
            return frozenset(self._order[other._n: self._n])      # a slice: islice would walk the prefix
        if not isinstance(other, (Set, set, frozenset)):
            return NotImplemented
        return frozenset(x for x in self if x not in other)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if isinstance(other, GrowSet) and other._order is self._order:
            return self._n == other._n
        if isinstance(other, (Set, set, frozenset)):
            return len(self) == len(other) and all(x in other for x in self)
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self))
        return self._hash

    def __repr__(self) -> str:
        return repr(frozenset(self))

def _fn_of_items(items: tuple) -> Fn:
    """Unpickling: the items of a pickled Fn are in key order already."""
    return Fn._of(dict(items))


def record(**fields: Any) -> Fn:
    """A TLA+ record ``[a |-> 1, b |-> 2]``."""
    # Field names are strings, so Python's order is sort_key's.
    return Fn._of(dict(sorted(fields.items())))


def normalize(v: Any) -> Any:
    """Map a value onto the canonical encoding, applying TLC's identities:
    a function with domain ``1..n`` is the sequence of its range; lists become
    tuples, sets become frozensets, dicts become ``Fn``."""
    if isinstance(v, (bool, int, str, ModelValue)):
        return v
    if isinstance(v, (tuple, list, Seq)):
        return tuple(normalize(x) for x in v)
    if isinstance(v, (frozenset, set, GrowSet)):
        return frozenset(normalize(x) for x in v)
    if isinstance(v, (Fn, dict)):
        items = [(normalize(k), normalize(x)) for k, x in v.items()]
        keys = [k for k, _ in items]
        n = len(keys)
        if all(type(k) is int for k in keys) and set(keys) == set(range(1, n + 1)):
            return tuple(x for _, x in sorted(items, key=lambda kv: kv[0]))
        return Fn(items)
    raise TypeError(f"not a TLA+ value: {v!r} ({type(v).__name__})")


def to_tla(v: Any) -> str:
    """Print a canonical value in TLA+ syntax (for counterexamples and docs)."""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(v, ModelValue):
        return v.name
    if isinstance(v, (tuple, Seq)):
        return "<<" + ", ".join(to_tla(x) for x in v) + ">>"
    if isinstance(v, (frozenset, GrowSet)):
        return "{" + ", ".join(to_tla(x) for x in sorted(v, key=sort_key)) + "}"
    if isinstance(v, Fn):
        if not v:
            return "<<>>"
        if all(isinstance(k, str) and k.isidentifier() for k in v):
            return "[" + ", ".join(f"{k} |-> {to_tla(x)}" for k, x in v.items()) + "]"
        return "(" + " @@ ".join(f"{to_tla(k)} :> {to_tla(x)}" for k, x in v.items()) + ")"
    raise TypeError(f"not a TLA+ value: {v!r}")


def to_json(v: Any) -> Any:
    """A JSON-friendly rendering (sets as sorted lists, functions as
    ``{"k": v}`` objects when keys are strings, else lists of pairs)."""
    if isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, ModelValue):
        return v.name
    if isinstance(v, (tuple, Seq)):
        return [to_json(x) for x in v]
    if isinstance(v, (frozenset, GrowSet)):
        return [to_json(x) for x in sorted(v, key=sort_key)]
    if isinstance(v, Fn):
        if all(isinstance(k, (str, int, ModelValue)) for k in v):
            return {str(k.name if isinstance(k, ModelValue) else k): to_json(x) for k, x in v.items()}
        return [[to_json(k), to_json(x)] for k, x in v.items()]
    raise TypeError(f"not a TLA+ value: {v!r}")
