"""Typed decoding of a protocol's event records, generated from the trace schemas.

Theory of operation
-------------------
The reader's checks (core/trace/reader.py) decode a line into dicts and
lists, then run the compiled predicates of the envelope and of the
protocol's schema over them (core/trace/validate.py).  Most of that
work is in Python.  ``event_decoder`` derives from the same two schemas,
for one protocol, msgspec types that demand of a record what the schemas
demand of its kind, action by action, so that msgspec's decoder, in C,
checks the types, bounds, required keys and closed objects while it
decodes: one ``msgspec.Struct`` per action, tagged by ``name`` (a tagged
union: the name selects the action's fields), each field the conjunction,
for that action, of the envelope's schema of the key, the protocol's
schema of the key and the protocol's ``if name is X then ...`` branches.

The types are generated, never written by hand: the schemas stay the one
definition of the format.  The generator reads a subset of the schema
language (types, bounds, string enums and constants, one pattern,
properties, required, additionalProperties, patternProperties and
propertyNames with one pattern, items and prefixItems whose positions
agree, length bounds, $ref, allOf, anyOf of alternatives with different
JSON types, if/then/else on the action's name).  A key of the record
whose schemas use anything else (a message's ``if type is ...``,
``uniqueItems``, ``oneOf``) is decoded as it stands and checked after
decoding by the compiled predicates of those schemas (``Typed.residual``);
an action whose top level does (two layers' schemas describing one
action's records) has no Struct, and its records are read the general
way.  A key pattern (a vector clock's component names, a
received-table's member keys) is not given to msgspec, which would search
the pattern for every key of every record: it is checked after decoding
(``Typed.rest_ok``), each key's answer remembered, as the compiled
predicates do.

The types accept a subset of what the schemas accept, never more: an
``integer`` is a JSON integer (a float with no fractional part is refused
here, and by the compiled predicates: core/trace/validate.py), a ``number`` a JSON integer or float (an
integer stays an int: msgspec's ``float`` alone would turn it into a
float), an object with keys the schema does not name is refused or decoded
without them (the reader then sees members missing, core/trace/reader.py
``_typed_event``).  Whatever a typed decoder refuses is read the general
way, which decides and words the error exactly as before; what it accepts
the compiled predicates accept too, with the same values
(tests/test_trace_format.py checks both on every protocol's campaign
records and mutations of them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from sys import intern
from typing import (Annotated, Any, Literal, NotRequired, Optional, Required, TypedDict, Union, get_args,
                    get_origin, get_type_hints)
from urllib.parse import urljoin

import msgspec
from msgspec import UNSET, Meta, UnsetType
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from groupcheck.core.trace import format as trace_format, validate as schemacheck
from groupcheck.core.trace.validate import ANNOTATIONS, MEMO_MAX, resolve_ref


class Unsupported(ValueError):
    """A schema construct the generator does not turn into a type."""


# JSON types as the generator splits them: an ``integer`` is an int, a
# ``number`` an int or a float
_TYPES = ("null", "boolean", "int", "float", "string", "array", "object")
_EXPAND = {"null": ("null",), "boolean": ("boolean",), "integer": ("int",), "number": ("int", "float"),
           "string": ("string",), "array": ("array",), "object": ("object",)}
_OBJECT = {"properties", "required", "additionalProperties", "patternProperties", "propertyNames",
           "minProperties", "maxProperties"}
_ARRAY = {"items", "prefixItems", "minItems", "maxItems", "uniqueItems"}
_NUMBER = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
_STRING = {"pattern", "minLength", "maxLength"}
# the fields the reader fills in before the protocol's schema sees an event (traces.py ``_valid``)
FILL = {"params": {}, "msg": None, "state": None}


def _keywords(s: dict) -> list:
    return [k for k in s if k not in ANNOTATIONS and not k.startswith("x-")]


class _Gen:
    """A schema (a list of (schema, base URI) that must all hold) as a
    normal form: JSON type -> the schemas constraining values of that type
    (a type absent: no value of it is valid), then as a msgspec type."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.n = 0
        self.key_patterns: list = []      # (path of keys, pattern) checked after decoding
        self.residual: list = []          # (path of keys, [(schema, base)]) checked after decoding

    def lookup(self, r: str, base: str):
        return resolve_ref(self.registry, r, base, Unsupported)

    # ---- normal forms
    @staticmethod
    def meet(a: dict, b: dict) -> dict:
        return {t: a[t] + b[t] for t in a if t in b}

    def conj(self, schemas, known: Optional[dict] = None) -> dict:
        nf = {t: [] for t in _TYPES}
        for s, base in schemas:
            nf = self.meet(nf, self.one(s, base, known or {}))
        return nf

    def one(self, s, base: str, known: dict) -> dict:
        if s is True or s == {}:
            return {t: [] for t in _TYPES}
        if s is False:
            return {}
        if not isinstance(s, dict):
            raise Unsupported(f"not a schema: {s!r}")
        if isinstance(s.get("$id"), str):
            base = urljoin(base, s["$id"])
        # an alternative for another action (a composed protocol's layer) matches nothing
        for key, val in known.items():
            sub = (s.get("properties") or {}).get(key)
            if isinstance(sub, dict) and (("const" in sub and sub["const"] != val)
                                          or ("enum" in sub and val not in sub["enum"])):
                return {}
        nf = {t: [] for t in _TYPES}
        frag = set()
        for k in _keywords(s):
            v = s[k]
            if k == "type":
                if not all(t in _EXPAND for t in ([v] if isinstance(v, str) else v)):
                    raise Unsupported(f"type {v!r}")
                allowed = {x for t in ([v] if isinstance(v, str) else v) for x in _EXPAND[t]}
                nf = {t: c for t, c in nf.items() if t in allowed}
            elif k in ("const", "enum"):
                vals = [v] if k == "const" else list(v)
                if not all(x is None or type(x) is str for x in vals):
                    raise Unsupported(f"{k} of non-strings")
                strs = [x for x in vals if type(x) is str]
                allowed = ({"string"} if strs else set()) | ({"null"} if None in vals else set())
                nf = {t: c for t, c in nf.items() if t in allowed}
                if "string" in nf:
                    nf["string"] = nf["string"] + [({"enum": strs}, base)]
            elif k == "$ref":
                target, tbase = self.lookup(v, base)
                nf = self.meet(nf, self.one(target, tbase, known))
            elif k == "allOf":
                for p in v:
                    nf = self.meet(nf, self.one(p, base, known))
            elif k == "anyOf":
                nf = self.meet(nf, self.join([self.one(p, base, known) for p in v]))
            elif k == "if":
                cond = self.decide(v, known)
                branch = s.get("then", True) if cond else s.get("else", True)
                nf = self.meet(nf, self.one(branch, base, known))
            elif k in ("then", "else"):
                continue
            elif k in _OBJECT:
                frag.add("object")
            elif k in _ARRAY:
                frag.add("array")
            elif k in _NUMBER:
                frag |= {"int", "float"}
            elif k in _STRING:
                frag.add("string")
            else:
                raise Unsupported(f"keyword {k!r}")
        for t in frag:
            if t in nf:
                nf[t] = nf[t] + [(s, base)]
        return nf

    def names(self, s, base: str) -> Optional[list]:
        """The action names ``s`` admits, in schema order (a composed
        stack's: its layers' through ``$ref`` and ``anyOf``), or None when
        it does not constrain the name."""
        if not isinstance(s, dict):
            return None
        if isinstance(s.get("$id"), str):
            base = urljoin(base, s["$id"])
        sub = (s.get("properties") or {}).get("name")
        own = None
        if isinstance(sub, dict) and ("enum" in sub or "const" in sub):
            own = list(sub["enum"]) if "enum" in sub else [sub["const"]]
            if not all(type(x) is str for x in own):
                return None
        parts = [own]
        if "$ref" in s:
            parts.append(self.names(*self.lookup(s["$ref"], base)))
        parts += [self.names(p, base) for p in s.get("allOf", [])]
        if "anyOf" in s:
            alts = [self.names(p, base) for p in s["anyOf"]]
            parts.append(None if None in alts else list(dict.fromkeys(x for a in alts for x in a)))
        out = None
        for ns in parts:
            if ns is not None:
                out = ns if out is None else [x for x in out if x in ns]
        return out

    @staticmethod
    def decide(cond, known: dict) -> bool:
        """An ``if`` on the action's name, decided for the action at hand."""
        if isinstance(cond, dict) and set(cond) == {"properties"} and len(cond["properties"]) == 1:
            (key, sub), = cond["properties"].items()
            if key in known and isinstance(sub, dict) and set(sub) in ({"const"}, {"enum"}):
                return known[key] == sub["const"] if "const" in sub else known[key] in sub["enum"]
        raise Unsupported(f"if {cond!r}")

    @staticmethod
    def join(nfs: list) -> dict:
        out: dict = {}
        for t in _TYPES:
            alts = [nf[t] for nf in nfs if t in nf]
            if not alts:
                continue
            if any(not a for a in alts):
                out[t] = []                         # one alternative takes any value of the type
            elif all(a == alts[0] for a in alts):
                out[t] = alts[0]
            else:
                raise Unsupported(f"anyOf with two constrained {t} alternatives")
        return out

    # ---- types
    def type_of(self, nf: dict, path: tuple):
        parts = []
        for t in _TYPES:
            if t not in nf:
                continue
            frags = [s for s, _ in nf[t]]
            if t == "null":
                parts.append(None)
            elif t == "boolean":
                parts.append(bool)
            elif t in ("int", "float"):
                parts.append(self.number(int if t == "int" else float, frags))
            elif t == "string":
                x = self.string(frags)
                if x is not None:
                    parts.append(x)
            elif t == "array":
                parts.append(self.array(nf[t], path))
            else:
                x = self.object(nf[t], path)
                if x is not None:
                    parts.append(x)
        if not parts:
            raise Unsupported("no value is valid")
        return parts[0] if len(parts) == 1 else Union[tuple(parts)]

    @staticmethod
    def number(py, frags: list):
        meta = {}
        for s in frags:
            for k, name, better in (("minimum", "ge", max), ("maximum", "le", min),
                                    ("exclusiveMinimum", "gt", max), ("exclusiveMaximum", "lt", min)):
                if k in s:
                    b = s[k]
                    if type(b) not in (int, float) or (py is int and type(b) is not int):
                        raise Unsupported(f"{k} {b!r} on {py.__name__}")
                    meta[name] = better(meta[name], b) if name in meta else b
        return Annotated[py, Meta(**meta)] if meta else py

    @staticmethod
    def string(frags: list):
        enum, patterns, meta = None, [], {}
        for s in frags:
            if "enum" in s:
                enum = [x for x in s["enum"] if enum is None or x in enum]
            if "pattern" in s:
                patterns.append(s["pattern"])
            for k, name, better in (("minLength", "min_length", max), ("maxLength", "max_length", min)):
                if k in s:
                    meta[name] = better(meta[name], s[k]) if name in meta else s[k]
        if enum is not None:
            ok = [x for x in enum if all(re.search(p, x) for p in patterns)
                  and len(x) >= meta.get("min_length", 0) and len(x) <= meta.get("max_length", len(x))]
            return Literal[tuple(intern(x) for x in ok)] if ok else None
        if len(patterns) > 1:
            raise Unsupported("two patterns")
        if patterns:
            meta["pattern"] = patterns[0]
        return Annotated[str, Meta(**meta)] if meta else str

    def array(self, frags: list, path: tuple):
        meta, npre = {}, 0
        for s, _ in frags:
            if s.get("uniqueItems"):
                raise Unsupported("uniqueItems")
            npre = max(npre, len(s.get("prefixItems", [])))
            for k, name, better in (("minItems", "min_length", max), ("maxItems", "max_length", min)):
                if k in s:
                    meta[name] = better(meta[name], s[k]) if name in meta else s[k]

        def at(i: Optional[int]):
            """The schemas of position i (None: past every prefix)."""
            out = []
            for s, base in frags:
                pre = s.get("prefixItems", [])
                if i is not None and i < len(pre):
                    out.append((pre[i], base))
                elif "items" in s:
                    out.append((s["items"], base))
            return out
        positions = [at(i) for i in range(npre)]
        if meta.get("max_length", npre + 1) > npre:
            positions.append(at(None))
        types = [self.type_of(self.conj(p), path + ("*",)) for p in positions] or [Any]
        if any(t != types[0] for t in types):
            raise Unsupported("array positions of different types")
        lst = list[types[0]]
        return Annotated[lst, Meta(**meta)] if meta else lst

    def fields(self, frags: list, path: tuple):
        """(key -> (type, required), closed: keys not named are invalid),
        or None when the object has no named keys (a map).  A key whose
        schemas the generator cannot read (a message's ``if type is ...``,
        ``uniqueItems``, ``oneOf``) is typed ``Any`` and its path and schemas
        kept in ``residual``, to be checked after decoding by the compiled
        predicates; not under an array's items (the key holding the array
        is the one checked after)."""
        named = {k for s, _ in frags for k in list(s.get("properties", {})) + list(s.get("required", []))}
        if not named:
            return None
        closed = False
        allowed = set(named)
        for s, _ in frags:
            if any(k in s for k in ("patternProperties", "propertyNames", "minProperties", "maxProperties")):
                raise Unsupported("an object with named keys and key patterns or counts")
            add = s.get("additionalProperties", True)
            if add is False:
                closed = True
                allowed &= set(s.get("properties", {}))
            elif add is not True and add != {}:
                raise Unsupported("an object with named keys and a schema for the others")
        required = {k for s, _ in frags for k in s.get("required", [])}
        if not required <= allowed:
            raise Unsupported("a required key that is not allowed")
        out = {}
        for k in sorted(allowed):
            subs = [(s.get("properties", {}).get(k, True), base) for s, base in frags]
            kept = len(self.key_patterns), len(self.residual)
            try:
                t = self.type_of(self.conj(subs), path + (k,))
            except Unsupported:
                if "*" in path:
                    raise
                del self.key_patterns[kept[0]:], self.residual[kept[1]:]
                t = Any
                self.residual.append((path + (k,), subs))
            out[k] = (t, k in required)
        return out, closed

    def object(self, frags: list, path: tuple):
        got = self.fields(frags, path)
        if got is not None:
            fs, _ = got
            self.n += 1
            return TypedDict(f"_Obj{self.n}", {k: (Required[t] if req else NotRequired[t])
                                               for k, (t, req) in fs.items()}, total=False)
        values, pattern, closed, meta = [], None, False, {}
        for s, base in frags:
            for k, name, better in (("minProperties", "min_length", max), ("maxProperties", "max_length", min)):
                if k in s:
                    meta[name] = better(meta[name], s[k]) if name in meta else s[k]
            pats = s.get("patternProperties", {})
            add = s.get("additionalProperties", True)
            if len(pats) > 1 or (pats and add is not False):
                raise Unsupported("patternProperties beside other keys")
            for p, ps in pats.items():
                pattern = self.key_pattern(pattern, p)
                values.append((ps, base))
            if add is False and not pats:
                closed = True
            elif add is not False and add is not True:
                values.append((add, base))
            if "propertyNames" in s:
                pn = s["propertyNames"]
                if not (isinstance(pn, dict) and _keywords(pn) == ["pattern"]):
                    raise Unsupported("propertyNames other than a pattern")
                pattern = self.key_pattern(pattern, pn["pattern"])
        if closed:
            return None if meta.get("min_length", 0) > 0 else Annotated[dict, Meta(max_length=0)]
        if pattern is not None:
            self.key_patterns.append((path, pattern))
        v = self.type_of(self.conj(values), path + ("*",)) if values else Any
        return Annotated[dict[str, v], Meta(**meta)] if meta else dict[str, v]

    @staticmethod
    def key_pattern(old, new):
        if old is not None and old != new:
            raise Unsupported("two key patterns")
        return new


@dataclass
class Typed:
    """A protocol's typed decoder: ``decoder.decode(line)`` is an action's
    Struct (``names[type(x)]`` its name) or raises msgspec.DecodeError;
    ``rest_ok(x)``: what the types could not say holds, its keys match the
    schemas' key patterns (``key_patterns[type(x)]``: (where the dicts at a
    path are, ``_dicts``, then the pattern) of each) and its ``residual``
    keys their compiled predicates."""
    decoder: msgspec.json.Decoder
    names: dict
    key_patterns: dict
    free_strings: frozenset     # the Structs whose ``msg`` may hold a string no enum names (not interned)
    residual: dict              # Struct -> ((path, value if absent, predicates)) of its keys typed ``Any``

    def rest_ok(self, x) -> bool:
        for key, sub, dicts, pattern in self.key_patterns[type(x)]:
            if dicts is None:
                # a field's dict, or a dict in one (every record's: read here, not through a call)
                d = getattr(x, key)
                if sub is not None and type(d) is dict:
                    d = d.get(sub)
                if type(d) is dict and not pattern.matches.issuperset(d) and not pattern.all(d):
                    return False
                continue
            for d in dicts(x):
                if not pattern.matches.issuperset(d) and not pattern.all(d):
                    return False
        for path, absent, preds in self.residual.get(type(x), ()):
            v = getattr(x, path[0])
            if v is UNSET:
                v = absent
            for k in path[1:]:
                v = v.get(k, UNSET) if type(v) is dict else UNSET
            if v is not UNSET and not all(p(v) for p in preds):
                return False
        return True


class _Keys:
    """A key pattern: ``matches`` the keys seen that match it (a few
    thousand at most: past that, a key is searched each time)."""

    def __init__(self, pattern: str) -> None:
        self.rx = re.compile(pattern)
        self.matches: set = set()

    def all(self, d) -> bool:
        for k in d:
            if k not in self.matches:
                if self.rx.search(k) is None:
                    return False
                if len(self.matches) < MEMO_MAX:
                    self.matches.add(k)
        return True


def _dicts(path: tuple) -> tuple:
    """How ``Typed.rest_ok`` finds the dicts at ``path`` in a Struct (keys;
    ``*`` every element): (field, key in it or None, None) for a field or a
    key in one, else (None, None, the function of a Struct to the dicts)."""
    if len(path) == 1:
        return path[0], None, None
    if len(path) == 2 and path[1] != "*":
        return path[0], path[1], None

    def at(x):
        cur = [getattr(x, path[0])]
        for k in path[1:]:
            nxt = []
            for c in cur:
                if k == "*":
                    nxt.extend(c.values() if type(c) is dict else c if type(c) is list else ())
                elif type(c) is dict and k in c:
                    nxt.append(c[k])
            cur = nxt
        return [c for c in cur if type(c) is dict]
    return None, None, at


def event_decoder(envelope: dict, protocol: dict, registry: Registry) -> Typed:
    """The typed decoder of ``protocol``'s event records (its schema applied
    to the record with ``FILL``'s fields filled in, as the reader does),
    valid under ``envelope``'s ``$defs/event`` too.  Raises Unsupported."""
    env_res = DRAFT202012.create_resource(envelope)
    proto_res = DRAFT202012.create_resource(protocol)
    registry = registry.with_resource(env_res.id() or "", env_res).with_resource(proto_res.id() or "", proto_res)
    g = _Gen(registry)
    env = ({**envelope["$defs"]["event"], "$defs": envelope["$defs"]}, env_res.id() or "")
    proto = (protocol, proto_res.id() or "")
    names = g.names(*proto)
    if not names:
        raise Unsupported("no enum of action names")
    structs, by_type, pats, rxs, residual, preds = [], {}, {}, {}, {}, {}
    for name in names:
        g.key_patterns, g.residual = [], []
        try:
            top = g.conj([env, proto], {"name": name})
            if set(top) != {"object"}:
                raise Unsupported("an event that is not an object")
            fs, closed = g.fields(top["object"], ())
        except Unsupported:
            # e.g. a composed stack's action that two layers' schemas both
            # describe (anyOf of two objects): its records are read the general way
            continue
        if "name" not in fs or not _valid(name, fs["name"][0]):
            continue                # the envelope refuses the name
        fields = []
        for k, (t, req) in fs.items():
            if k == "name":
                continue
            if k in FILL:
                # the protocol sees the filled-in value when the key is absent:
                # optional only if that value is valid
                req = not _valid(FILL[k], t)
            fields.append((k, t) if req else (k, Union[t, UnsetType], UNSET))
        st = msgspec.defstruct(f"Event_{name}", fields, tag_field="name", tag=intern(name), kw_only=True,
                               forbid_unknown_fields=closed)
        structs.append(st)
        by_type[st] = intern(name)
        pats[st] = tuple((*_dicts(path), rxs.setdefault(p, _Keys(p))) for path, p in g.key_patterns)
        if g.residual:
            # the compiled predicates of what the types could not say, each on the
            # value the protocol's schema sees (``FILL``'s for an absent top key)
            residual[st] = [(path, FILL.get(path[0], UNSET),
                             [preds.setdefault((id(sub), b), (sub, b)) for sub, b in subs]) for path, subs in g.residual]
    if not structs:
        raise Unsupported("no action")
    # every predicate compiled at once (each schema once: the actions share most)
    compiled = dict(zip(preds, schemacheck._Gen(registry).build_many(list(preds.values()))))
    residual = {st: tuple((path, absent, tuple(compiled[id(sub), b] for sub, b in subs)) for path, absent, subs in rs)
                for st, rs in residual.items()}
    dec = msgspec.json.Decoder(Union[tuple(structs)] if len(structs) > 1 else structs[0])
    return Typed(dec, by_type, pats, frozenset(st for st in structs if _free(st.__annotations__.get("msg"))),
                 residual)


def _free(t) -> bool:
    """A value of type ``t`` may hold a string that is not one of an enum's
    (which msgspec returns as the enum's own, interned, string)."""
    if t is None or t in (int, float, bool, type(None), UnsetType):
        return False
    origin = get_origin(t)
    if origin is Literal:
        return not all(type(x) is str for x in get_args(t))
    if origin is Annotated:
        return _free(get_args(t)[0])
    if origin in (Union, list, dict, Required, NotRequired):
        return any(_free(a) for a in get_args(t))
    if isinstance(t, type) and issubclass(t, dict) and hasattr(t, "__annotations__"):     # a TypedDict
        return any(_free(a) for a in get_type_hints(t, include_extras=True).values())
    return True



def _valid(value, t) -> bool:
    try:
        msgspec.convert(value, t, strict=True)
    except msgspec.ValidationError:
        return False
    return True


@lru_cache(maxsize=None)
def for_protocol(envelope_rel: str, protocol_rel: str) -> Optional[Typed]:
    """The typed decoder for the schemas at core/trace/``protocol_rel`` and
    core/trace/``envelope_rel``, or None when the generator cannot read them."""
    env, proto = trace_format.schema(envelope_rel), trace_format.schema(protocol_rel)
    if env is None or proto is None:
        return None
    try:
        return event_decoder(env, proto, trace_format.schema_registry())
    except Unsupported:
        return None
