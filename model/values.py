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

from collections.abc import Iterable, Iterator, Mapping
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
    if isinstance(v, tuple):
        return (4, len(v), tuple(sort_key(x) for x in v))
    if isinstance(v, frozenset):
        items = sorted((sort_key(x) for x in v))
        return (5, len(items), tuple(items))
    if isinstance(v, Fn):
        return (6, len(v), tuple((sort_key(k), sort_key(x)) for k, x in v.items()))
    raise TypeError(f"not a canonical TLA+ value: {v!r} ({type(v).__name__})")


class Fn(Mapping):
    """An immutable, hashable TLA+ function or record.

    Items are kept sorted by :func:`sort_key`, so equal functions have equal
    ``items`` tuples and hash alike regardless of construction order.
    """

    __slots__ = ("_d", "_items", "_hash")

    def __init__(self, data: Mapping | Iterable[tuple[Any, Any]] = ()) -> None:
        d = dict(data.items() if isinstance(data, Mapping) else data)
        items = tuple(sorted(d.items(), key=lambda kv: sort_key(kv[0])))
        object.__setattr__(self, "_d", d)
        object.__setattr__(self, "_items", items)
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, key: str, value: Any) -> None:  # pragma: no cover
        raise AttributeError("Fn is immutable")

    def __getitem__(self, key: Any) -> Any:
        return self._d[key]

    def __iter__(self) -> Iterator:
        return (k for k, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._d

    def items(self):  # type: ignore[override]
        return self._items

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Fn):
            return self._items == other._items
        return NotImplemented

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash(("Fn", self._items))
            object.__setattr__(self, "_hash", h)
        return h

    def __repr__(self) -> str:
        return "Fn({" + ", ".join(f"{k!r}: {v!r}" for k, v in self._items) + "})"

    @classmethod
    def _make(cls, d: dict, items: tuple) -> "Fn":
        # Fast path for EXCEPT on an existing key: the key order is unchanged.
        f = object.__new__(cls)
        object.__setattr__(f, "_d", d)
        object.__setattr__(f, "_items", items)
        object.__setattr__(f, "_hash", None)
        return f

    # TLA+ EXCEPT: [f EXCEPT ![k] = v]
    def set(self, key: Any, value: Any) -> "Fn":
        if key not in self._d:
            d = dict(self._d)
            d[key] = value
            return Fn(d)
        d = dict(self._d)
        d[key] = value
        return Fn._make(d, tuple((k, value) if k == key else (k, v) for k, v in self._items))

    def update(self, pairs: Mapping) -> "Fn":
        if not all(k in self._d for k in pairs):
            d = dict(self._d)
            d.update(pairs)
            return Fn(d)
        d = dict(self._d)
        d.update(pairs)
        return Fn._make(d, tuple((k, d[k]) for k, _ in self._items))

    def restrict(self, domain: Iterable) -> "Fn":
        """``[k \\in domain |-> f[k]]`` for ``domain`` a subset of DOMAIN f."""
        dom = set(domain)
        items = tuple((k, v) for k, v in self._items if k in dom)
        return Fn._make(dict(items), items)


def record(**fields: Any) -> Fn:
    """A TLA+ record ``[a |-> 1, b |-> 2]``."""
    return Fn(fields)


def normalize(v: Any) -> Any:
    """Map a value onto the canonical encoding, applying TLC's identities:
    a function with domain ``1..n`` is the sequence of its range; lists become
    tuples, sets become frozensets, dicts become ``Fn``."""
    if isinstance(v, (bool, int, str, ModelValue)):
        return v
    if isinstance(v, (tuple, list)):
        return tuple(normalize(x) for x in v)
    if isinstance(v, (frozenset, set)):
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
    if isinstance(v, tuple):
        return "<<" + ", ".join(to_tla(x) for x in v) + ">>"
    if isinstance(v, frozenset):
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
    if isinstance(v, tuple):
        return [to_json(x) for x in v]
    if isinstance(v, frozenset):
        return [to_json(x) for x in sorted(v, key=sort_key)]
    if isinstance(v, Fn):
        if all(isinstance(k, (str, int, ModelValue)) for k in v):
            return {str(k.name if isinstance(k, ModelValue) else k): to_json(x) for k, x in v.items()}
        return [[to_json(k), to_json(x)] for k, x in v.items()]
    raise TypeError(f"not a TLA+ value: {v!r}")
