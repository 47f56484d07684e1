"""A compiled JSON Schema validator for the trace schemas (docs/architecture.md).

Theory of operation
-------------------
The trace schemas (core/trace/trace_schema.json, core/trace/schemas/*.json) use a small
subset of JSON Schema 2020-12.  ``compile_schema`` turns a schema into
Python source, one function per schema node (each ``$ref`` resolved once,
at generation; leaves such as a bounded integer or number, and an ``anyOf``
of leaves and references, written inline where they are used; an ``allOf``
of "if name is X then ..." a table from the name to one function holding
the lines of its branches; a ``pattern`` remembers its answer for
the strings it has seen, a few thousand at most), and compiles it: checking
a record costs a few lines per field it has, O(record) (the approach of fastjsonschema,
which stops at draft 7: no ``prefixItems``, no ``$ref`` by ``$id`` across
schemas, so it cannot read these schemas).  A keyword
outside the subset makes compilation fail (no keyword is silently ignored),
except annotations (``title``, ``description``, ``$schema``, ``$id``,
``$comment``, ``x-...``).  A ``$ref`` to another schema (a composed
protocol's to its parts') resolves by ``$id`` through the
``referencing.Registry`` of the trace schemas (core/trace/writer.py
``schema_registry``); one that resolves to nothing fails compilation.  The
predicate only answers yes or no; the message for a record it refuses comes
from jsonschema (``explain``, with the same registry), which is only ever
run on the one bad record.  tests/test_trace_format.py checks that the two
agree on every record of a campaign and on mutations of them.

Semantics follow jsonschema's (``Validator`` below), but for one rule
stricter than JSON Schema's: an ``integer`` is a JSON integer, never a
float (``1.0`` is refused: a checker downstream, TLC, reads it as a
different value); booleans are not numbers, ``uniqueItems`` compares JSON
values.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Optional
from urllib.parse import urldefrag, urljoin

import jsonschema
from jsonschema import Draft202012Validator, validators
from referencing import Registry
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012


Pred = Callable[[Any], bool]

ANNOTATIONS = {"title", "description", "$schema", "$id", "$comment", "$defs", "examples", "default"}


class SchemaCompileError(ValueError):
    pass


def resolve_ref(registry: Registry, r: str, base: str, error: Callable[[str], Exception]):
    """(the schema ``r`` names from ``base``, its base URI); ``error(why)`` if
    it names nothing (the compiler's and the type generator's one lookup)."""
    try:
        target = registry.resolver(base_uri=base).lookup(r).contents
    except Unresolvable as e:
        raise error(f"$ref {r!r} (in {base or 'the schema'}) resolves to nothing") from e
    return target, urldefrag(urljoin(base, r)).url


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)      # never a float, not even 1.0


def _strict_int(checker, x) -> bool:
    return _is_int(x)


# jsonschema's Draft 2020-12 with the one stricter rule (``integer``: no float):
# the reference the compiled predicates agree with, and what ``explain`` words
Validator = validators.extend(Draft202012Validator,
                              type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _strict_int))


def _json_eq(a, b) -> bool:
    return type(a) is type(b) and a == b if isinstance(a, bool) or isinstance(b, bool) else a == b


def compile_schema(schema: dict, registry: Optional[Registry] = None) -> Pred:
    """The predicate of ``schema``; a ``$ref`` resolves against ``schema``
    itself or, by ``$id``, any schema of ``registry``."""
    root = DRAFT202012.create_resource(schema)
    registry = (registry or Registry()).with_resource(root.id() or "", root)
    return _Gen(registry).build(schema, root.id() or "")


_MISSING = object()


def _is_num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _enum(x, vals) -> bool:
    return any(_json_eq(x, c) for c in vals)


def _keywords(s: dict) -> list:
    return [k for k in s if k not in ANNOTATIONS and not k.startswith("x-")]


class _Gen:
    """Python source for a schema: one function per schema node (``$ref``
    targets shared, so recursion works), each keyword a guarded
    ``return False``; a keyword that constrains one JSON type sits under
    that type's test, so a record pays one ``isinstance`` per node, not one
    per keyword.  Leaves (an integer with bounds, a type, a string enum)
    are inlined as expressions where their parent uses them."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.src: list[str] = []
        self.env: dict[str, Any] = {"_M": _MISSING, "_is_int": _is_int, "_is_num": _is_num, "_enum": _enum,
                                    "_json_eq": _json_eq, "_unique": _unique, "_learn": _learn}
        self.refs: dict[str, str] = {}
        self.bodies: dict[str, list] = {}       # a node function's lines but its final ``return True``
        self.n = 0

    def build(self, schema, base: str) -> Pred:
        return self.build_many([(schema, base)])[0]

    def build_many(self, schemas: list) -> list[Pred]:
        """The predicates of several (schema, base), compiled at once."""
        tops = [self.node(s, base) for s, base in schemas]
        exec(compile("\n".join(self.src), "<compiled schema>", "exec"), self.env)
        return [self.env[top] for top in tops]

    def const(self, v) -> str:
        self.n += 1
        name = f"_c{self.n}"
        self.env[name] = v
        return name

    def matches(self, pattern: str, var: str) -> str:
        """``var`` (a string) matches ``pattern``, as an expression: the
        answer for a string seen before is looked up (a trace repeats a few
        action names and member keys on every line; a search costs several
        times a lookup)."""
        rx, memo = self.const(re.compile(pattern)), self.const({})
        return f"({memo}[{var}] if {var} in {memo} else _learn({memo}, {rx}, {var}))"

    def fresh(self) -> str:
        self.n += 1
        return f"_f{self.n}"

    # -- a schema as an expression over ``var`` (inline when it is a leaf)
    def expr(self, s, base: str, var: str) -> str:
        if s is True or s == {}:
            return "True"
        if s is False:
            return "False"
        if isinstance(s, dict):
            ks = _keywords(s)
            if s.get("type") == "integer" and set(ks) <= {"type", "minimum", "maximum"}:
                lo, hi = s.get("minimum"), s.get("maximum")
                fast = " and ".join(["type(%s) is int" % var] + ([f"{var} >= {lo!r}"] if lo is not None else [])
                                    + ([f"{var} <= {hi!r}"] if hi is not None else []))
                # a plain int in one step; a float or a bool by the full check
                return f"(({fast}) if type({var}) is int else {self.node(s, base)}({var}))"
            if s.get("type") == "number" and set(ks) <= {"type", "minimum", "maximum"}:
                lo, hi = s.get("minimum"), s.get("maximum")
                fast = " and ".join([f"{var} >= {lo!r}"] * (lo is not None) + [f"{var} <= {hi!r}"] * (hi is not None))
                # a float (a clock) in one step; anything else by the full check
                return f"(({fast or 'True'}) if type({var}) is float else {self.node(s, base)}({var}))"
            if ks == ["anyOf"] and all(self.leaf(p) or (isinstance(p, dict) and _keywords(p) == ["$ref"])
                                       for p in s["anyOf"]):
                # alternatives that are expressions already (a type or null, a reference): one expression
                return "(" + " or ".join(self.expr(p, base, var) for p in s["anyOf"]) + ")"
            if ks == ["type"] and isinstance(s["type"], str) and s["type"] in _TYPE_EXPR:
                return "(" + _TYPE_EXPR[s["type"]].format(x=var) + ")"
            if ks == ["enum"] and all(type(c) is str for c in s["enum"]):
                return f"(type({var}) is str and {var} in {self.const(frozenset(s['enum']))})"
            if ks == ["const"] and type(s["const"]) is str:
                return f"({var} == {s['const']!r} and type({var}) is str)"
            if ks == ["$ref"]:
                target, tbase = self.lookup(s["$ref"], base)
                if self.leaf(target):
                    return self.expr(target, tbase, var)
                return f"{self.ref(s['$ref'], base)}({var})"
        return f"{self.node(s, base)}({var})"

    @staticmethod
    def leaf(s) -> bool:
        """A schema ``expr`` writes inline whatever it is used on."""
        if s is True or s is False or s == {}:
            return True
        if not isinstance(s, dict):
            return False
        ks = _keywords(s)
        return ((s.get("type") == "integer" and set(ks) <= {"type", "minimum", "maximum"})
                or (ks == ["type"] and isinstance(s["type"], str) and s["type"] in _TYPE_EXPR)
                or (ks == ["enum"] and all(type(c) is str for c in s["enum"]))
                or (ks == ["const"] and type(s["const"]) is str))

    def lookup(self, r: str, base: str):
        """(the schema ``r`` names from ``base``, its base URI)."""
        return resolve_ref(self.registry, r, base, SchemaCompileError)

    def ref(self, r: str, base: str) -> str:
        uri = urljoin(base, r)
        if uri not in self.refs:
            target, tbase = self.lookup(r, base)
            name = self.refs[uri] = self.fresh()          # named before its body: recursion
            self.node(target, tbase, name)
        return self.refs[uri]

    # -- a schema as a function; returns its name
    def node(self, s, base: str, name: Optional[str] = None) -> str:
        name = name or self.fresh()
        if s is True or s == {}:
            self.src.append(f"def {name}(x):\n    return True")
            self.bodies[name] = []
            return name
        if s is False:
            self.src.append(f"def {name}(x):\n    return False")
            return name
        if not isinstance(s, dict):
            raise SchemaCompileError(f"not a schema: {s!r}")
        if isinstance(s.get("$id"), str):
            base = urljoin(base, s["$id"])
        anywhere: list[str] = []                      # lines at the function's top level
        typed: dict[str, list[str]] = {"dict": [], "list": [], "str": [], "num": []}
        for k in _keywords(s):
            v = s[k]
            if k == "$ref":
                anywhere.append(f"if not {self.ref(v, base)}(x): return False")
            elif k == "type":
                ts = [v] if isinstance(v, str) else list(v)
                for t in ts:
                    if t not in _TYPE_EXPR:
                        raise SchemaCompileError(f"unknown type {t!r}")
                # first: the keywords of that one type then need no test of their own
                anywhere.insert(0, "if not (" + " or ".join(_TYPE_EXPR[t].format(x="x") for t in ts) + "): return False")
            elif k == "const":
                anywhere.append(f"if not _json_eq(x, {self.const(v)}): return False")
            elif k == "enum":
                anywhere.append(f"if not _enum(x, {self.const(list(v))}): return False")
            elif k == "properties":
                for p, ps in v.items():
                    e = self.expr(ps, base, "v")
                    if e != "True":
                        typed["dict"] += [f"v = x.get({p!r}, _M)", f"if v is not _M and not {e}: return False"]
            elif k == "required":
                if v:
                    typed["dict"].append("if " + " or ".join(f"{p!r} not in x" for p in v) + ": return False")
            elif k in ("additionalProperties", "patternProperties"):
                if k == "patternProperties" and "additionalProperties" in s:
                    continue            # generated together with additionalProperties
                typed["dict"] += self.additional(s, base)
            elif k == "propertyNames":
                typed["dict"].append(f"if not all({self.node(v, base)}(p) for p in x): return False")
            elif k == "items":
                start = len(s.get("prefixItems", []))
                e = self.expr(v, base, "y")
                if e != "True":
                    typed["list"].append(f"for y in (x[{start}:] if {start} else x):\n"
                                         f"    if not {e}: return False")
            elif k == "prefixItems":
                for i, ps in enumerate(v):
                    e = self.expr(ps, base, "y")
                    if e != "True":
                        typed["list"] += [f"if len(x) > {i}:", f"    y = x[{i}]", f"    if not {e}: return False"]
            elif k == "uniqueItems":
                if v:
                    typed["list"].append("if not _unique(x): return False")
            elif k in _LENGTH:
                t, cmp = _LENGTH[k]
                typed[t].append(f"if len(x) {cmp} {int(v)}: return False")
            elif k in _BOUND:
                typed["num"].append(f"if not (x {_BOUND[k]} {self.const(v)}): return False")
            elif k == "pattern":
                typed["str"].append(f"if not {self.matches(v, 'x')}: return False")
            elif k == "allOf":
                table = self.dispatch(v, base)
                if table is not None:
                    anywhere += table
                else:
                    for p in v:
                        anywhere.append(f"if not {self.expr(p, base, 'x')}: return False")
            elif k == "anyOf":
                anywhere.append("if not (" + " or ".join(self.expr(p, base, "x") for p in v) + "): return False")
            elif k == "oneOf":
                anywhere.append("if (" + " + ".join(f"bool({self.expr(p, base, 'x')})" for p in v) + ") != 1: "
                                "return False")
            elif k == "not":
                anywhere.append(f"if {self.expr(v, base, 'x')}: return False")
            elif k == "if":
                fi, ft, fe = (self.expr(v, base, "x"), self.expr(s.get("then", True), base, "x"),
                              self.expr(s.get("else", True), base, "x"))
                anywhere.append(f"if not ({ft} if {fi} else {fe}): return False")
            elif k in ("then", "else"):
                continue
            else:
                raise SchemaCompileError(f"keyword {k!r} is not supported by the compiled validator")
        body = list(anywhere)
        # the node's one type, tested first (above)
        only = {"object": "dict", "array": "list", "string": "str", "integer": "num", "number": "num"}.get(
            s.get("type")) if isinstance(s.get("type"), str) else None
        for t, test in (("dict", "isinstance(x, dict)"), ("list", "isinstance(x, list)"),
                        ("str", "isinstance(x, str)"), ("num", "_is_num(x)")):
            if typed[t] and t == only:
                body += typed[t]
            elif typed[t]:
                body.append(f"if {test}:")
                body += ["    " + line.replace("\n", "\n    ") for line in typed[t]]
        self.bodies[name] = body
        self.src.append(f"def {name}(x):\n" + "\n".join("    " + line.replace("\n", "\n    ")
                                                         for line in body + ["return True"]))
        return name

    def additional(self, s: dict, base: str) -> list[str]:
        props = frozenset(s.get("properties", {}))
        pats = [(self.matches(p, "k"), self.expr(ps, base, "w")) for p, ps in s.get("patternProperties", {}).items()]
        add = s.get("additionalProperties", True)
        fadd = self.expr(add, base, "w") if add is not True else None
        if not pats and fadd is None:
            return []
        if not pats and add is False:
            return [f"if not {self.const(props)}.issuperset(x): return False"]
        lines = ["for k, w in x.items():"]
        if pats:
            lines.append("    matched = False")
            for match, e in pats:
                lines += [f"    if {match}:", "        matched = True", f"        if not {e}: return False"]
            if fadd is not None:
                lines.append(f"    if not matched and k not in {self.const(props)} and not {fadd}: return False")
        else:
            lines.append(f"    if k not in {self.const(props)} and not {fadd}: return False")
        return lines

    def branch(self, s, base: str) -> Optional[str]:
        """An if/then/else branch's function, None when it accepts anything
        (most "else"s): the table's functions then skip a call that always
        says yes, several per record."""
        if s is True or (isinstance(s, dict) and not _keywords(s)):
            return None
        return self.node(s, base)

    def dispatch(self, items: list, base: str) -> Optional[list[str]]:
        """An ``allOf`` of if/then/else whose conditions test one key against
        string constants (the trace schemas' "if name is X then ...") as a
        table: the key's value selects one function that checks the branches
        that apply, so a record pays for its own action's branch only.  None
        when ``items`` is not of that shape (generated the general way)."""
        conds = []
        for it in items:
            if not (isinstance(it, dict) and "if" in it and set(it) <= {"if", "then", "else"}):
                return None
            kc = _key_condition(it["if"])
            if kc is None:
                return None
            conds.append((kc, self.branch(it.get("then", True), base), self.branch(it.get("else", True), base)))
        keys = {kc[0] for kc, _, _ in conds}
        if len(keys) != 1:
            return None
        key = keys.pop()

        def all_of(fs) -> str:
            # the branches' own lines one after the other (each only returns
            # False early), not a call per branch
            lines = [line for f in fs if f is not None
                     for line in (self.bodies[f] if f in self.bodies else [f"if not {f}(x): return False"])]
            name = self.fresh()
            self.src.append(f"def {name}(x):\n" + "".join("    " + line.replace("\n", "\n    ") + "\n"
                                                         for line in lines) + "    return True")
            return name
        values = sorted({v for (_, vals), _, _ in conds for v in vals})
        table = {v: all_of([ft if v in vals else fe for (_, vals), ft, fe in conds]) for v in values}
        other = all_of([fe for _, _, fe in conds])          # a value no condition names
        absent = all_of([ft for _, ft, _ in conds])         # no key: every condition holds
        t = self.fresh()
        self.src.append(f"{t} = {{" + ", ".join(f"{v!r}: {f}" for v, f in table.items()) + "}")
        return [f"v = x.get({key!r}, _M) if isinstance(x, dict) else _M",
                f"if not ({absent} if v is _M else {t}.get(v, {other}) if type(v) is str else {other})(x): "
                "return False"]


_TYPE_EXPR = {"object": "isinstance({x}, dict)", "array": "isinstance({x}, list)", "string": "isinstance({x}, str)",
              "integer": "_is_int({x})", "number": "_is_num({x})", "boolean": "isinstance({x}, bool)",
              "null": "{x} is None"}
# a length bound: the type it applies to, and the comparison that fails it
_LENGTH = {"minProperties": ("dict", "<"), "maxProperties": ("dict", ">"), "minItems": ("list", "<"),
           "maxItems": ("list", ">"), "minLength": ("str", "<"), "maxLength": ("str", ">")}
_BOUND = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}


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


MEMO_MAX = 4096     # strings remembered per pattern (a file of ever new ones is searched as before)


def _learn(memo: dict, rx, s) -> bool:
    """``rx`` matches ``s``, remembered in ``memo`` while it is small."""
    hit = rx.search(s) is not None
    if len(memo) < MEMO_MAX:
        memo[s] = hit
    return hit


def _unique(xs: list) -> bool:
    if all(isinstance(x, int) and not isinstance(x, bool) for x in xs):
        return len(set(xs)) == len(xs)
    keys = [json.dumps(x, sort_keys=True) for x in xs]
    return len(set(keys)) == len(keys)


def explain(schema: dict, rec, registry: Optional[Registry] = None) -> str:
    """jsonschema's message for the deepest-but-first error (slow path);
    ``registry`` resolves ``$ref`` to other schemas, as in ``compile_schema``."""
    v = Validator(schema, registry=registry or Registry())
    errs = list(v.iter_errors(rec))
    if not errs:
        return "rejected by the compiled validator but not by jsonschema (please report)"
    e = _choose(errs)
    kinds = _kinds_expected(e)
    if kinds:
        return f"kind: {rec.get('kind')!r} is not one of {', '.join(map(repr, kinds))}"
    where = "/".join(str(x) for x in e.absolute_path)
    types = _types_expected(e)
    message = f"{e.instance!r} is not of type {' or '.join(map(repr, types))}" if types else e.message
    if where == "name" and e.validator == "enum":
        # a composed protocol's record: the actions of every layer, not the first layer's
        names = _names_allowed(errs)
        message = f"{e.instance!r} is not one of {sorted(names)}" if names else message
    return f"{where + ': ' if where else ''}{message}"


def _names_allowed(errs) -> set:
    """The actions the errors refused the record's ``name`` by: within one
    schema every enum on ``name`` holds (their intersection), across the
    branches of an anyOf (a composed protocol's layers) any one (their union)."""
    sets = []
    for c in errs:
        if list(c.relative_path) == ["name"] and c.validator == "enum":
            sets.append(set(c.validator_value))
        elif c.validator in ("anyOf", "oneOf") and c.context and not c.relative_path:
            branches: dict = {}
            for x in c.context:
                branches.setdefault(x.relative_schema_path[0], []).append(x)
            found = [r for r in (_names_allowed(b) for b in branches.values()) if r]
            if found:
                sets.append(set().union(*found))
    return set.intersection(*sets) if sets else set()


def _types_expected(e) -> list:
    """The types an ``anyOf`` / ``oneOf`` of types allows (a field that may
    be null), when the value is of none: named, not "not valid under any
    of the given schemas"."""
    if e.validator not in ("oneOf", "anyOf") or not e.context:
        return []
    if not all(c.validator == "type" and not c.relative_path for c in e.context):
        return []
    out: list = []
    for c in e.context:
        for t in (c.validator_value if isinstance(c.validator_value, list) else [c.validator_value]):
            if t not in out:
                out.append(t)
    return out


def _kinds_expected(e) -> list:
    """The record kinds a root ``oneOf`` of kinds (the envelope: header,
    event, end) allows, when the record's ``kind`` is none of them: its
    message would otherwise quote the whole record."""
    if e.validator not in ("oneOf", "anyOf") or e.absolute_path or not e.context:
        return []
    by_branch: dict = {}
    for c in e.context:
        if list(c.relative_path) == ["kind"] and c.validator == "const":
            by_branch[c.relative_schema_path[0]] = c.validator_value
    branches = {c.relative_schema_path[0] for c in e.context}
    return [by_branch[b] for b in sorted(by_branch)] if by_branch and set(by_branch) == branches else []


def _wrong_name(c) -> bool:
    """Error ``c`` says the record's action is not its layer's: its name
    refused, or, for a layer that is itself a composition (a nested anyOf),
    refused by each of that composition's layers."""
    if list(c.relative_path) == ["name"]:
        return True
    if c.validator != "anyOf" or c.relative_path or not c.context:
        return False
    layers: dict = {}
    for x in c.context:
        layers.setdefault(x.relative_schema_path[0], []).append(x)
    return all(any(_wrong_name(x) for x in cs) for cs in layers.values())


def _choose(errs: list):
    e = min(errs, key=lambda e: (len(list(e.absolute_path)), e.message))
    if not (e.validator == "anyOf" and e.context and not e.absolute_path):
        # (best_match would descend into a composed record's layers by its own
        # measure of relevance, and may explain it by a layer it is not of)
        best = jsonschema.exceptions.best_match(errs)
        if best is not None and len(list(best.absolute_path)) >= len(list(e.absolute_path)):
            e = best
    if e.validator == "anyOf" and e.context and not e.absolute_path:
        # a composed protocol's record is one of its layers': explain it by
        # the layers whose actions include its name (by all when none does)
        layers: dict = {}
        for c in e.context:
            layers.setdefault(c.relative_schema_path[0], []).append(c)
        # and, of those, by the layers it fails least (a SEQUENCER record with one bad
        # value also fails FLUSH's schema in every field FLUSH's records lack)
        named = [cs for cs in layers.values() if not any(_wrong_name(c) for c in cs)]
        fewest = min((len(cs) for cs in named), default=0)
        own = [c for cs in named if len(cs) == fewest for c in cs]
        return _choose(own or [c for c in e.context if list(c.relative_path) == ["name"]] or e.context)
    return e
