"""The trace format's definition, which the writer (writer.py) and the reader
(reader.py) share: the format's name, the JSON Schemas (schemas/,
trace_schema.json) loaded into one registry, which variables a protocol's
records log as appended (``x-append``), the delta of a record's state
against its member's previous one, and the canonical serialisation (sorted
keys, no spaces, ``\\n`` line ends: the same run gives a byte-identical
file).  docs/trace-format.md.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Iterable, Optional

from referencing import Registry
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

FORMAT = "groupcheck-trace/2"
ENV = "env"     # the environment's component in a vector clock


def _schema_dir():
    try:
        return files("groupcheck.core.trace")
    except ModuleNotFoundError:     # package data not installed
        return Path(__file__).resolve().parent


SCHEMA_DIRS = ("", "schemas", "schemas/v1")     # trace_schema.json; format 2's; format 1's


class SchemaError(ValueError):
    """A schema file that cannot be loaded: invalid JSON, a missing or
    duplicate ``$id``, or a ``$ref`` that resolves to nothing."""


@lru_cache(maxsize=None)
def _schemas() -> tuple[dict, Registry]:
    """Every trace schema by its path under core/trace/, and one registry of them
    ``$id``.  A composed protocol's schema refers to its parts' by ``$id``
    (a protocol schema's ends in its file name: ``"flush.json#/$defs/msg"``);
    every ``$ref`` is resolved here, so a bad one fails when the schemas are
    loaded, not when a record happens to reach it."""
    root = _schema_dir()
    by_rel: dict[str, dict] = {}
    for d in SCHEMA_DIRS:
        folder = root.joinpath(*d.split("/")) if d else root
        for f in sorted(folder.iterdir(), key=lambda f: f.name):
            if f.name.endswith(".json"):
                rel = f"{d}/{f.name}" if d else f.name
                try:
                    by_rel[rel] = json.loads(f.read_text(encoding="utf-8"))
                except ValueError as e:
                    raise SchemaError(f"core/trace/{rel}: {e}") from e
    ids: dict[str, str] = {}
    for rel, s in by_rel.items():
        sid = s.get("$id") if isinstance(s, dict) else None
        if not isinstance(sid, str):
            raise SchemaError(f"core/trace/{rel}: no $id")
        if sid in ids:
            raise SchemaError(f"core/trace/{rel}: $id {sid} is also core/trace/{ids[sid]}'s")
        ids[sid] = rel
    registry = Registry().with_resources((s["$id"], DRAFT202012.create_resource(s))
                                         for s in by_rel.values()).crawl()
    for rel, s in by_rel.items():
        resolver = registry.resolver(base_uri=s["$id"])
        for ref in _refs(s):
            try:
                resolver.lookup(ref)
            except Unresolvable as e:
                raise SchemaError(f"core/trace/{rel}: $ref {ref!r} resolves to nothing ({e!r})") from e
    return by_rel, registry


def _refs(s):
    if isinstance(s, dict):
        for k, v in s.items():
            if k == "$ref" and isinstance(v, str):
                yield v
            elif k == "x-append-layers" and isinstance(v, dict):
                yield from v.values()
            elif k not in ("properties", "patternProperties", "$defs") or not isinstance(v, dict):
                yield from _refs(v)
            else:                       # a map of names to schemas: a name is never a keyword
                for sub in v.values():
                    yield from _refs(sub)
    elif isinstance(s, list):
        for x in s:
            yield from _refs(x)


def schema(rel: str) -> Optional[dict]:
    """The schema at core/trace/``rel`` (``"schemas/flush.json"``), None when there is none."""
    return _schemas()[0].get(rel)


def schema_registry() -> Registry:
    """The one registry of every trace schema, by ``$id``."""
    return _schemas()[1]


@lru_cache(maxsize=None)
def append_vars(protocol: str, layer: str = "node") -> dict:
    """``{variable: "sequence" | "set"}``: the variables of ``protocol`` (of
    one ``layer`` in a composed stack) that a format-2 record logs as the
    list of elements appended (the schema's ``x-append``; a composed
    protocol's ``x-append-layers`` names the schema whose ``x-append`` each
    layer's records follow: schemas/<protocol>.json); {} for an unknown
    protocol."""
    if not isinstance(protocol, str) or not protocol.isidentifier():
        return {}
    s = schema(f"schemas/{protocol}.json")
    if s is None:
        return {}
    if "x-append-layers" in s:           # layer -> the schema whose x-append it logs by
        part = s["x-append-layers"].get(layer)
        if part is None:
            return {}
        s = schema_registry().resolver(base_uri=s["$id"]).lookup(part).contents
    return dict(s.get("x-append", {}))


def state_delta(prev: Optional[dict], new: dict, appends: dict) -> dict:
    """The format-2 ``state`` of a record whose member went from full state
    ``prev`` (None: its first record) to ``new``: the variables that changed
    (every variable in a first record), an append variable as the list of
    elements appended.  Raises ValueError when an append variable lost
    elements (the history was rewritten: not expressible as a delta)."""
    out = {}
    for k, v in new.items():
        if k in appends:
            old = (prev or {}).get(k) or []
            if appends[k] == "sequence":
                if len(v) < len(old) or v[:len(old)] != old:
                    raise ValueError(f"{k} is not an extension of the previous {k}")
                add = v[len(old):]
            else:
                olds = {_key(x) for x in old}
                news = {_key(x) for x in v}
                if not olds <= news:
                    raise ValueError(f"{k} lost elements {sorted(olds - news)[:3]}")
                add = [x for x in v if _key(x) not in olds]
            if add:
                out[k] = add
        elif prev is None or prev.get(k) != v:
            out[k] = v
    return out


def _key(x):
    return json.dumps(x, sort_keys=True)


def dumps(records: Iterable[dict]) -> str:
    return "".join(dumps1(r) for r in records)


def dumps1(record: dict) -> str:
    return json.dumps(record, sort_keys=True, separators=(",", ":"), allow_nan=False) + "\n"
