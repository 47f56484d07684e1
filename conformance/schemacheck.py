"""A compiled JSON Schema validator for the trace schemas (docs/architecture.md).

Theory of operation
-------------------
The trace schemas (impl/trace_schema.json, impl/schemas/*.json) use a small
subset of JSON Schema 2020-12.  ``compile_schema`` turns a schema into one
Python predicate (nested closures, each ``$ref`` resolved once at compile
time), so checking a record costs a few function calls per field it has:
O(record), about 20 times faster than jsonschema's interpreter.  A keyword
outside the subset makes compilation fail (no keyword is silently ignored),
except annotations (``title``, ``description``, ``$schema``, ``$id``,
``$comment``, ``x-...``).  A ``$ref`` to another schema (a composed
protocol's to its parts') resolves by ``$id`` through the
``referencing.Registry`` of the trace schemas (impl/tracefile.py
``schema_registry``); one that resolves to nothing fails compilation.  The
predicate only answers yes or no; the message for a record it refuses comes
from jsonschema (``explain``, with the same registry), which is only ever
run on the one bad record.  tests/test_trace_format.py checks that the two
agree on every record of a campaign and on mutations of them.

Semantics follow jsonschema's: ``integer`` accepts a float with no
fractional part, booleans are not numbers, ``uniqueItems`` compares JSON
values.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Optional
from urllib.parse import urldefrag, urljoin

from referencing import Registry
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

Pred = Callable[[Any], bool]

ANNOTATIONS = {"title", "description", "$schema", "$id", "$comment", "$defs", "examples", "default"}


class SchemaCompileError(ValueError):
    pass


def _is_int(x) -> bool:
    return (isinstance(x, int) and not isinstance(x, bool)) or (isinstance(x, float) and x.is_integer())


TYPES: dict[str, Pred] = {
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "string": lambda x: isinstance(x, str),
    "integer": _is_int,
    "number": lambda x: isinstance(x, (int, float)) and not isinstance(x, bool),
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
}


def _json_eq(a, b) -> bool:
    return type(a) is type(b) and a == b if isinstance(a, bool) or isinstance(b, bool) else a == b


def compile_schema(schema: dict, registry: Optional[Registry] = None) -> Pred:
    """The predicate of ``schema``; a ``$ref`` resolves against ``schema``
    itself or, by ``$id``, any schema of ``registry``."""
    root = DRAFT202012.create_resource(schema)
    registry = (registry or Registry()).with_resource(root.id() or "", root)
    cache: dict[str, Pred] = {}

    def ref(r: str, base: str) -> Pred:
        uri = urljoin(base, r)
        if uri not in cache:
            try:
                target = registry.resolver(base_uri=base).lookup(r).contents
            except Unresolvable as e:
                raise SchemaCompileError(f"$ref {r!r} (in {base or 'the schema'}) resolves to nothing") from e
            cache[uri] = lambda x: cache[uri + "!"](x)      # placeholder for recursion
            cache[uri + "!"] = comp(target, urldefrag(uri).url)
            cache[uri] = cache[uri + "!"]
        return cache[uri]

    def comp(s, base: str) -> Pred:
        if isinstance(s, dict) and s.get("type") == "integer" and \
                {k for k in s if k not in ANNOTATIONS and not k.startswith("x-")} <= {"type", "minimum", "maximum"}:
            # the commonest leaf (ids, seqnos, members), often in long arrays:
            # a plain int is judged in one step, anything else by the full check
            slow = comp_full(s, base)
            lo, hi = s.get("minimum"), s.get("maximum")
            return lambda x: (lo is None or x >= lo) and (hi is None or x <= hi) if type(x) is int else slow(x)
        return comp_full(s, base)

    def comp_full(s, base: str) -> Pred:
        if s is True or s == {}:
            return lambda x: True
        if s is False:
            return lambda x: False
        if not isinstance(s, dict):
            raise SchemaCompileError(f"not a schema: {s!r}")
        if isinstance(s.get("$id"), str):
            base = urljoin(base, s["$id"])
        checks: list[Pred] = []
        for k, v in s.items():
            if k in ANNOTATIONS or k.startswith("x-"):
                continue
            if k == "$ref":
                checks.append(ref(v, base))
            elif k == "type":
                ts = [v] if isinstance(v, str) else list(v)
                fs = [TYPES[t] for t in ts]
                checks.append(fs[0] if len(fs) == 1 else (lambda x, fs=fs: any(f(x) for f in fs)))
            elif k == "const":
                checks.append(lambda x, c=v: _json_eq(x, c))
            elif k == "enum":
                vals = list(v)
                checks.append(lambda x, vals=vals: any(_json_eq(x, c) for c in vals))
            elif k == "properties":
                props = {p: comp(ps, base) for p, ps in v.items()}

                def f(x, props=props):
                    if not isinstance(x, dict):
                        return True
                    if len(x) < len(props):
                        for p, v in x.items():
                            pf = props.get(p)
                            if pf is not None and not pf(v):
                                return False
                        return True
                    for p, pf in props.items():
                        if p in x and not pf(x[p]):
                            return False
                    return True
                checks.append(f)
            elif k == "required":
                req = list(v)
                checks.append(lambda x, req=req: not isinstance(x, dict) or all(p in x for p in req))
            elif k in ("additionalProperties", "patternProperties"):
                if k == "patternProperties" and "additionalProperties" in s:
                    continue            # compiled together with additionalProperties
                checks.append(_additional(s, lambda x: comp(x, base)))
            elif k == "propertyNames":
                pn = comp(v, base)
                checks.append(lambda x, pn=pn: not isinstance(x, dict) or all(pn(p) for p in x))
            elif k in ("maxProperties", "minProperties"):
                n = int(v)
                checks.append((lambda x, n=n: not isinstance(x, dict) or len(x) <= n) if k[1] == "a"
                              else (lambda x, n=n: not isinstance(x, dict) or len(x) >= n))
            elif k == "items":
                it = comp(v, base)
                start = len(s.get("prefixItems", []))
                checks.append(lambda x, it=it, start=start: not isinstance(x, list)
                              or all(map(it, x[start:] if start else x)))
            elif k == "prefixItems":
                pre = [comp(p, base) for p in v]
                checks.append(lambda x, pre=pre: not isinstance(x, list)
                              or all(f(y) for f, y in zip(pre, x)))
            elif k in ("minItems", "maxItems"):
                n = int(v)
                checks.append((lambda x, n=n: not isinstance(x, list) or len(x) >= n) if k == "minItems"
                              else (lambda x, n=n: not isinstance(x, list) or len(x) <= n))
            elif k == "uniqueItems":
                if v:
                    checks.append(lambda x: not isinstance(x, list) or _unique(x))
            elif k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
                checks.append(_bound(k, v))
            elif k in ("minLength", "maxLength"):
                n = int(v)
                checks.append((lambda x, n=n: not isinstance(x, str) or len(x) >= n) if k == "minLength"
                              else (lambda x, n=n: not isinstance(x, str) or len(x) <= n))
            elif k == "pattern":
                rx = re.compile(v)
                checks.append(lambda x, rx=rx: not isinstance(x, str) or rx.search(x) is not None)
            elif k == "allOf":
                table = _dispatch(v, lambda x: comp(x, base))
                if table is not None:
                    checks.append(table)
                else:
                    fs = [comp(p, base) for p in v]
                    checks.append(lambda x, fs=fs: all(f(x) for f in fs))
            elif k == "anyOf":
                fs = [comp(p, base) for p in v]
                checks.append(lambda x, fs=fs: any(f(x) for f in fs))
            elif k == "oneOf":
                fs = [comp(p, base) for p in v]
                checks.append(lambda x, fs=fs: sum(1 for f in fs if f(x)) == 1)
            elif k == "not":
                f0 = comp(v, base)
                checks.append(lambda x, f0=f0: not f0(x))
            elif k == "if":
                fi = comp(v, base)
                ft = comp(s.get("then", True), base)
                fe = comp(s.get("else", True), base)
                checks.append(lambda x, fi=fi, ft=ft, fe=fe: ft(x) if fi(x) else fe(x))
            elif k in ("then", "else"):
                continue
            else:
                raise SchemaCompileError(f"keyword {k!r} is not supported by the compiled validator")
        if len(checks) == 1:
            return checks[0]
        if len(checks) == 2:
            c0, c1 = checks
            return lambda x: c0(x) and c1(x)
        checks = tuple(checks)

        def conj(x):
            for c in checks:
                if not c(x):
                    return False
            return True
        return conj

    return comp(schema, root.id() or "")


_MISSING = object()


def _key_condition(cond) -> Optional[tuple[str, list]]:
    """(key, values) when ``cond`` is exactly ``{"properties": {key: {"const": c}}}``
    or ``... {"enum": [...]}`` (true also when the key is absent)."""
    if not (isinstance(cond, dict) and set(cond) == {"properties"} and len(cond["properties"]) == 1):
        return None
    (key, sub), = cond["properties"].items()
    if isinstance(sub, dict) and set(sub) == {"const"} and isinstance(sub["const"], str):
        return key, [sub["const"]]
    if isinstance(sub, dict) and set(sub) == {"enum"} and all(isinstance(c, str) for c in sub["enum"]):
        return key, list(sub["enum"])
    return None


def _dispatch(items: list, comp) -> Optional[Pred]:
    """An ``allOf`` of if/then/else whose conditions test one key against
    string constants (the trace schemas' "if name is X then ...") compiled
    to a table: the key's value selects the checks that apply, so a record
    pays for its own action's branch only.  None when ``items`` is not of
    that shape (compiled the general way)."""
    conds = []
    for it in items:
        if not (isinstance(it, dict) and "if" in it and set(it) <= {"if", "then", "else"}):
            return None
        kc = _key_condition(it["if"])
        if kc is None:
            return None
        conds.append((kc, comp(it.get("then", True)), comp(it.get("else", True))))
    keys = {kc[0] for kc, _, _ in conds}
    if len(keys) != 1:
        return None
    key = keys.pop()
    values = {v for (_, vals), _, _ in conds for v in vals}
    by_value = {v: tuple(ft if v in vals else fe for (_, vals), ft, fe in conds) for v in values}
    other = tuple(fe for _, _, fe in conds)        # a value no condition names
    absent = tuple(ft for _, ft, _ in conds)       # no key: every condition holds
    def f(x):
        if not isinstance(x, dict):
            return all(ft(x) for ft in absent)
        v = x.get(key, _MISSING)
        fs = absent if v is _MISSING else by_value.get(v, other) if isinstance(v, str) else other
        for g in fs:
            if not g(x):
                return False
        return True
    return f


def _additional(s: dict, comp) -> Pred:
    props = set(s.get("properties", {}))
    pats = [(re.compile(p), comp(ps)) for p, ps in s.get("patternProperties", {}).items()]
    add = s.get("additionalProperties", True)
    fadd = comp(add) if add is not True else None

    def f(x):
        if not isinstance(x, dict):
            return True
        for k, v in x.items():
            matched = False
            for rx, pf in pats:
                if rx.search(k):
                    matched = True
                    if not pf(v):
                        return False
            if not matched and k not in props and fadd is not None and not fadd(v):
                return False
        return True
    return f


def _bound(k: str, n) -> Pred:
    def num(x):
        return isinstance(x, (int, float)) and not isinstance(x, bool)
    if k == "minimum":
        return lambda x: not num(x) or x >= n
    if k == "maximum":
        return lambda x: not num(x) or x <= n
    if k == "exclusiveMinimum":
        return lambda x: not num(x) or x > n
    return lambda x: not num(x) or x < n


def _unique(xs: list) -> bool:
    if all(isinstance(x, int) and not isinstance(x, bool) for x in xs):
        return len(set(xs)) == len(xs)
    keys = [json.dumps(x, sort_keys=True) for x in xs]
    return len(set(keys)) == len(keys)


def explain(schema: dict, rec, registry: Optional[Registry] = None) -> str:
    """jsonschema's message for the deepest-but-first error (slow path);
    ``registry`` resolves ``$ref`` to other schemas, as in ``compile_schema``."""
    import jsonschema
    v = jsonschema.Draft202012Validator(schema, registry=registry or Registry())
    errs = list(v.iter_errors(rec))
    if not errs:
        return "rejected by the compiled validator but not by jsonschema (please report)"
    e = _choose(errs)
    where = "/".join(str(x) for x in e.absolute_path)
    return f"{where + ': ' if where else ''}{e.message}"


def _choose(errs: list):
    import jsonschema
    e = min(errs, key=lambda e: (len(list(e.absolute_path)), e.message))
    best = jsonschema.exceptions.best_match(errs)
    if best is not None and len(list(best.absolute_path)) >= len(list(e.absolute_path)):
        e = best
    if e.validator == "anyOf" and e.context and not e.absolute_path:
        # a composed protocol's record is one of its layers': explain it by
        # the layers whose actions include its name (by all when none does)
        layers: dict = {}
        for c in e.context:
            layers.setdefault(c.relative_schema_path[0], []).append(c)
        own = [c for cs in layers.values() if not any(list(c.relative_path) == ["name"] for c in cs) for c in cs]
        return _choose(own or [c for c in e.context if list(c.relative_path) == ["name"]] or e.context)
    return e
