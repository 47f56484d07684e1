"""Read TLC model configuration files (``.cfg``).

Theory of operation
-------------------
A TLC config is a flat sequence of sections, each opened by a keyword
(``CONSTANT(S)``, ``INIT``, ``NEXT``, ``SPECIFICATION``, ``INVARIANT(S)``,
``PROPERTY(IES)``, ``CONSTRAINT(S)``, ``ACTION_CONSTRAINT(S)``, ``SYMMETRY``,
``VIEW``, ...).  Line breaks carry no meaning; TLA+ comments (``\\*`` to end
of line, nestable ``(* ... *)``) are ignored.  A ``CONSTANT`` section holds
assignments ``N = 3``, ``S = {a, b}`` (bare identifiers are model values, so
``a = a`` makes ``a`` a model value) and substitutions ``X <- Y`` (an
operator of the spec replaced by another), which are kept apart because they
name spec operators rather than values.

The constants of a bounded model live in its ``.cfg`` only (spec/README.md),
so the Python models read them from here: values are parsed with
:mod:`groupcheck.model.tlc_values` into the canonical encoding.

:func:`strip_checks` removes the ``INVARIANT`` and ``PROPERTY`` sections from
a config text and leaves everything else verbatim; the graph comparison runs
TLC with checks off so the whole reachable graph is dumped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .tlc_values import TLAValueError, parse_value

__all__ = ["Cfg", "CfgError", "parse_cfg", "strip_checks", "KEYWORDS"]

# Keyword -> canonical section name.  CHECK_DEADLOCK, POSTCONDITION and ALIAS
# are newer than the bundled TLC (2020) but harmless to understand.
KEYWORDS = {
    "CONSTANT": "CONSTANT",
    "CONSTANTS": "CONSTANT",
    "INIT": "INIT",
    "NEXT": "NEXT",
    "SPECIFICATION": "SPECIFICATION",
    "INVARIANT": "INVARIANT",
    "INVARIANTS": "INVARIANT",
    "PROPERTY": "PROPERTY",
    "PROPERTIES": "PROPERTY",
    "CONSTRAINT": "CONSTRAINT",
    "CONSTRAINTS": "CONSTRAINT",
    "ACTION_CONSTRAINT": "ACTION_CONSTRAINT",
    "ACTION_CONSTRAINTS": "ACTION_CONSTRAINT",
    "SYMMETRY": "SYMMETRY",
    "VIEW": "VIEW",
    "TYPE": "TYPE",
    "TYPE_CONSTRAINT": "TYPE_CONSTRAINT",
    "CHECK_DEADLOCK": "CHECK_DEADLOCK",
    "POSTCONDITION": "POSTCONDITION",
    "ALIAS": "ALIAS",
}
_SINGLE = {"INIT", "NEXT", "SPECIFICATION", "SYMMETRY", "VIEW", "CHECK_DEADLOCK", "ALIAS", "POSTCONDITION"}


class CfgError(ValueError):
    """A malformed config; the message names the file and line."""

    def __init__(self, message: str, source: str, line: int) -> None:
        self.source = source
        self.line = line
        super().__init__(f"{source}:{line}: {message}")


@dataclass
class Cfg:
    source: str = "<cfg>"
    constants: dict[str, Any] = field(default_factory=dict)
    # CONSTANT X <- Y: spec operator X replaced by Y (or by [M] Y in module M).
    substitutions: dict[str, str] = field(default_factory=dict)
    module_substitutions: dict[tuple[str, str], str] = field(default_factory=dict)
    init: str | None = None
    next: str | None = None
    specification: str | None = None
    invariants: list[str] = field(default_factory=list)
    properties: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    action_constraints: list[str] = field(default_factory=list)
    symmetry: str | None = None
    view: str | None = None
    check_deadlock: bool | None = None
    other: dict[str, list[str]] = field(default_factory=dict)  # TYPE, ALIAS, ...


_TOKEN = re.compile(
    r'(?P<str>"(?:[^"\\\n]|\\.)*")'
    r"|(?P<p><-|<<|>>|\|->|:>|@@|\.\.|[=\[\](){},])"
    r"|(?P<num>-?[0-9]+(?![A-Za-z0-9_]))"
    r"|(?P<id>[A-Za-z0-9_]+)"
    r"|(?P<bad>\S)"
)


@dataclass
class _Tok:
    kind: str  # str, p, num, id, bad
    text: str
    start: int
    end: int


def _tokens(text: str, source: str) -> list[_Tok]:
    """Tokens with comments and whitespace removed."""
    out: list[_Tok] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        if text.startswith("\\*", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("(*", i):
            depth, j = 1, i + 2
            while depth and j < n:
                if text.startswith("(*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*)", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            if depth:
                raise CfgError("comment '(*' not closed", source, _line(text, i))
            i = j
            continue
        m = _TOKEN.match(text, i)
        assert m is not None  # the last alternative matches any non-space
        out.append(_Tok(m.lastgroup or "bad", m.group(), m.start(), m.end()))
        i = m.end()
    return out


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


_OPEN = {"{": "}", "<<": ">>", "[": "]", "(": ")"}
_CLOSE = {v: k for k, v in _OPEN.items()}


def _value_end(toks: list[_Tok], i: int, text: str, source: str) -> int:
    """Index past the value starting at token ``i`` (one token, or a
    bracketed group with its own nested brackets)."""
    t = toks[i]
    if t.text not in _OPEN:
        return i + 1
    stack = [_OPEN[t.text]]
    j = i + 1
    while j < len(toks):
        x = toks[j].text
        if x in _OPEN:
            stack.append(_OPEN[x])
        elif x in _CLOSE:
            if x != stack[-1]:
                raise CfgError(f"{x!r} does not close {_CLOSE[stack[-1]]!r}", source, _line(text, toks[j].start))
            stack.pop()
            if not stack:
                return j + 1
        elif toks[j].kind == "id" and toks[j].text in KEYWORDS:
            break
        j += 1
    raise CfgError(f"{t.text!r} is not closed", source, _line(text, t.start))


def parse_cfg(path_or_text: str | Path) -> Cfg:
    """Parse a TLC config given as a path or as its text.  A ``str`` that
    names an existing file, or any ``Path``, is read from disk."""
    if isinstance(path_or_text, Path) or ("\n" not in path_or_text and Path(path_or_text).is_file()):
        path = Path(path_or_text)
        source = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise CfgError(f"cannot read config: {e}", source, 0) from None
    elif "\n" not in path_or_text and path_or_text.strip().endswith(".cfg"):
        raise CfgError("config file not found", path_or_text, 0)
    else:
        text = str(path_or_text)
        source = "<cfg>"
    return _parse(text, source)


def _parse(text: str, source: str) -> Cfg:
    toks = _tokens(text, source)
    cfg = Cfg(source=source)
    seen_single: set[str] = set()
    section: str | None = None
    i, n = 0, len(toks)

    def err(msg: str, tok: _Tok | None) -> CfgError:
        return CfgError(msg, source, _line(text, tok.start) if tok else _line(text, len(text)))

    def ident(j: int, what: str) -> str:
        if j >= n:
            raise err(f"expected {what} but the file ended", None)
        t = toks[j]
        if t.kind != "id" or t.text in KEYWORDS:
            raise err(f"expected {what} but found {t.text!r}", t)
        return t.text

    while i < n:
        t = toks[i]
        if t.kind == "id" and t.text in KEYWORDS:
            section = KEYWORDS[t.text]
            if section in _SINGLE:
                if section in seen_single:
                    raise err(f"{t.text} given twice", t)
                seen_single.add(section)
            i += 1
            if section in _SINGLE:
                # exactly one operand
                if section == "CHECK_DEADLOCK":
                    v = ident(i, "TRUE or FALSE")
                    if v not in ("TRUE", "FALSE"):
                        raise err(f"CHECK_DEADLOCK takes TRUE or FALSE, not {v!r}", toks[i])
                    cfg.check_deadlock = v == "TRUE"
                else:
                    name = ident(i, f"an operator name after {t.text}")
                    attr = section.lower()
                    if hasattr(cfg, attr) and section not in ("ALIAS", "POSTCONDITION"):
                        setattr(cfg, attr, name)
                    else:
                        cfg.other.setdefault(section, []).append(name)
                i += 1
                section = None
            continue
        if section is None:
            raise err(f"expected a keyword such as CONSTANTS, INIT, NEXT or SPECIFICATION, found {t.text!r}", t)
        if section == "CONSTANT":
            i = _constant(toks, i, text, source, cfg, ident, err)
            continue
        name = ident(i, "an operator name")
        if section == "INVARIANT":
            cfg.invariants.append(name)
        elif section == "PROPERTY":
            cfg.properties.append(name)
        elif section == "CONSTRAINT":
            cfg.constraints.append(name)
        elif section == "ACTION_CONSTRAINT":
            cfg.action_constraints.append(name)
        else:
            cfg.other.setdefault(section, []).append(name)
        i += 1
    if cfg.specification and (cfg.init or cfg.next):
        raise CfgError("SPECIFICATION cannot be combined with INIT/NEXT", source, 1)
    return cfg


def _constant(toks, i, text, source, cfg: Cfg, ident, err) -> int:
    n = len(toks)
    name = ident(i, "a constant name")
    i += 1
    # An operator constant may take parameters: F(a, b) <- G.
    if i < n and toks[i].text == "(":
        while i < n and toks[i].text != ")":
            i += 1
        i += 1
    if i >= n:
        raise err(f"constant {name} has no value ('=' or '<-' expected)", None)
    op = toks[i]
    if op.text == "<-":
        i += 1
        module = None
        if i < n and toks[i].text == "[":
            module = ident(i + 1, "a module name")
            if i + 2 >= n or toks[i + 2].text != "]":
                raise err("expected ']' after the module name", toks[min(i + 2, n - 1)])
            i += 3
        target = ident(i, f"an operator name to substitute for {name}")
        if module is None:
            cfg.substitutions[name] = target
        else:
            cfg.module_substitutions[(module, name)] = target
        return i + 1
    if op.text != "=":
        raise err(f"expected '=' or '<-' after constant {name}, found {op.text!r}", op)
    i += 1
    if i >= n:
        raise err(f"constant {name} has no value after '='", None)
    first = toks[i]
    if first.kind == "id" and first.text in KEYWORDS:
        raise err(f"constant {name} has no value after '='", first)
    end = _value_end(toks, i, text, source)
    vtext = text[first.start : toks[end - 1].end]
    try:
        value = parse_value(vtext)
    except TLAValueError as e:
        line = _line(text, first.start + e.position)
        raise CfgError(f"bad value for constant {name}: {e.reason}", source, line) from None
    if name in cfg.constants:
        raise err(f"constant {name} assigned twice", first)
    cfg.constants[name] = value
    return end


def strip_checks(cfg_text: str) -> str:
    """The config text without its INVARIANT(S) and PROPERTY(IES) sections
    (each section from its keyword up to the next keyword); all else verbatim."""
    toks = _tokens(cfg_text, "<cfg>")
    keys = [t for t in toks if t.kind == "id" and t.text in KEYWORDS]
    cuts: list[tuple[int, int]] = []
    for k, t in enumerate(keys):
        if KEYWORDS[t.text] in ("INVARIANT", "PROPERTY"):
            end = keys[k + 1].start if k + 1 < len(keys) else len(cfg_text)
            cuts.append((t.start, end))
    out, pos = [], 0
    for a, b in cuts:
        out.append(cfg_text[pos:a])
        pos = b
    out.append(cfg_text[pos:])
    return "".join(out)
