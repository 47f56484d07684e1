"""Parse TLA+ values and states as TLC prints them.

Theory of operation
-------------------
TLC prints every value of a state, of a counterexample and of a ``-dump dot``
node label in one small, regular syntax: integers, strings, ``TRUE``/``FALSE``,
model values (bare identifiers), sets ``{..}``, sequences and tuples ``<<..>>``,
records ``[a |-> 1]``, functions ``(a :> 1 @@ b :> 2)``, intervals ``0..2``
(TLC keeps ``m..n`` unexpanded when a variable holds one) and, rarely, a
function constructor ``[x \\in S |-> e]``.  This module maps that text onto the
canonical encoding of :mod:`groupcheck.model.values`, already normalised
(a function over ``1..n`` comes back as a tuple, an interval as a frozenset),
so ``normalize(parse_value(t)) == parse_value(t)``.

There is no well-kept Python library for TLC's value syntax (the TLA+ parsers
for Python cover specs, not TLC's print-out), so this is a hand-written
recursive-descent parser.  For speed it tokenises the whole text with one
compiled regular expression (the scan runs in C) and then walks the token
list; token positions are only recomputed when an error has to be reported.
Callers that parse many states (a dot dump can hold 100k of them) pass a
``cache`` dict to :func:`parse_state`: TLC prints the same value text for a
variable in many states, and values are immutable, so one parse serves all.

Grammar (precedence as in TLA+: ``..`` binds tighter than ``:>``, which binds
tighter than ``@@``)::

    expr    := fnpair ('@@' fnpair)*
    fnpair  := range (':>' range)?
    range   := primary ('..' primary)?
    primary := INT | STRING | TRUE | FALSE | IDENT
             | '{' [expr (',' expr)*] '}' | '<<' [expr (',' expr)*] '>>'
             | '[' IDENT '|->' expr (',' IDENT '|->' expr)* ']'
             | '[' IDENT '\\in' expr '|->' expr ']'       (constant body only)
             | '(' expr ')'
"""

from __future__ import annotations

import re
from typing import Any

from .values import Fn, ModelValue

__all__ = ["TLAValueError", "parse_value", "parse_state"]


class TLAValueError(ValueError):
    """Malformed TLC value text.  ``position`` is the 0-based offset into
    ``text``; ``line``/``column`` are 1-based."""

    def __init__(self, message: str, text: str, position: int) -> None:
        self.reason = message
        self.text = text
        self.position = position
        self.line = text.count("\n", 0, position) + 1
        self.column = position - (text.rfind("\n", 0, position) + 1) + 1
        start = max(0, position - 30)
        snippet = text[start : position + 30].replace("\n", " ")
        caret = " " * (position - start) + "^"
        super().__init__(
            f"{message} at line {self.line}, column {self.column} (offset {position}):\n  {snippet}\n  {caret}"
        )


_TOKEN = re.compile(
    r'"(?:[^"\\\n]|\\.)*"'  # string with escapes
    r"|<<|>>|\|->|:>|@@|\.\.|\\in(?![A-Za-z0-9_])"
    r"|-?[0-9]+(?![A-Za-z0-9_])"  # integer (a digit-led identifier falls through)
    r"|[A-Za-z0-9_]+"  # identifier: model value, record field, TRUE/FALSE
    r"|\S"  # anything else: a single bad character, reported by the parser
)
_IDENT = re.compile(r"[A-Za-z0-9_]*[A-Za-z_][A-Za-z0-9_]*\Z")
_STR_ESCAPE = re.compile(r"\\(.)")
_STR_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", '"': '"', "\\": "\\"}
_PUNCT = frozenset({">>", "}", "]", ")", ",", "|->", ":>", "@@", "..", "\\in", "<<", "{", "[", "("})


class _Fail(Exception):
    def __init__(self, index: int, message: str) -> None:
        self.index = index
        self.message = message


def _unescape(m: re.Match) -> str:
    c = m.group(1)
    try:
        return _STR_ESCAPES[c]
    except KeyError:
        raise ValueError(f"unknown string escape \\{c}") from None


def _fn(pairs: list[tuple[Any, Any]]) -> Any:
    """A function value, normalised: domain 1..n -> tuple (TLC's identity)."""
    n = len(pairs)
    if all(type(k) is int for k, _ in pairs):
        d = dict(pairs)
        if len(d) == n and all(i in d for i in range(1, n + 1)):
            return tuple(d[i] for i in range(1, n + 1))
    return Fn(pairs)


def _pairs_of(v: Any, index: int) -> list[tuple[Any, Any]]:
    if isinstance(v, Fn):
        return list(v.items())
    if isinstance(v, tuple):
        return [(i + 1, x) for i, x in enumerate(v)]
    raise _Fail(index, "operand of @@ is not a function")


class _Parser:
    __slots__ = ("toks", "n")

    def __init__(self, toks: list[str]) -> None:
        self.toks = toks
        self.n = len(toks)

    def peek(self, i: int) -> str:
        return self.toks[i] if i < self.n else ""

    def expect(self, i: int, tok: str) -> int:
        if i >= self.n:
            raise _Fail(i, f"expected {tok!r} but the text ended")
        if self.toks[i] != tok:
            raise _Fail(i, f"expected {tok!r} but found {self.toks[i]!r}")
        return i + 1

    def expr(self, i: int) -> tuple[Any, int]:
        start = i
        v, i = self.fnpair(i)
        if i < self.n and self.toks[i] == "@@":
            pairs = _pairs_of(v, start)
            seen = {k for k, _ in pairs}
            while i < self.n and self.toks[i] == "@@":
                start = i + 1
                w, i = self.fnpair(start)
                for k, x in _pairs_of(w, start):
                    if k not in seen:  # f @@ g: f wins where domains overlap
                        seen.add(k)
                        pairs.append((k, x))
            v = _fn(pairs)
        return v, i

    def fnpair(self, i: int) -> tuple[Any, int]:
        k, i = self.range(i)
        if i < self.n and self.toks[i] == ":>":
            x, i = self.range(i + 1)
            return _fn([(k, x)]), i
        return k, i

    def range(self, i: int) -> tuple[Any, int]:
        lo, i = self.primary(i)
        if i < self.n and self.toks[i] == "..":
            hi, j = self.primary(i + 1)
            if type(lo) is not int or type(hi) is not int:
                raise _Fail(i, "interval bounds must be integers")
            return frozenset(range(lo, hi + 1)), j
        return lo, i

    def seq(self, i: int, close: str) -> tuple[list, int]:
        """Comma-separated expressions up to ``close``; ``i`` is past the opener."""
        toks, n = self.toks, self.n
        out: list = []
        if i < n and toks[i] == close:
            return out, i + 1
        while True:
            v, i = self.expr(i)
            out.append(v)
            if i >= n:
                raise _Fail(i, f"expected ',' or {close!r} but the text ended")
            t = toks[i]
            if t == ",":
                i += 1
            elif t == close:
                return out, i + 1
            else:
                raise _Fail(i, f"expected ',' or {close!r} but found {t!r}")

    def primary(self, i: int) -> tuple[Any, int]:
        if i >= self.n:
            raise _Fail(i, "expected a value but the text ended")
        t = self.toks[i]
        c = t[0]
        if c == '"':
            if len(t) < 2:
                raise _Fail(i, "unterminated string")
            body = t[1:-1]
            if "\\" in body:
                try:
                    body = _STR_ESCAPE.sub(_unescape, body)
                except ValueError as e:
                    raise _Fail(i, str(e)) from None
            return body, i + 1
        if c.isdigit() or (c == "-" and len(t) > 1):
            if t.lstrip("-").isdigit():
                return int(t), i + 1
            return ModelValue(t), i + 1  # digit-led identifier, e.g. 1a
        if t == "<<":
            items, i = self.seq(i + 1, ">>")
            return tuple(items), i
        if t == "{":
            items, i = self.seq(i + 1, "}")
            return frozenset(items), i
        if t == "[":
            return self.bracket(i)
        if t == "(":
            v, i = self.expr(i + 1)
            return v, self.expect(i, ")")
        if c.isalpha() or c == "_":
            if t == "TRUE":
                return True, i + 1
            if t == "FALSE":
                return False, i + 1
            return ModelValue(t), i + 1
        if t not in _PUNCT:
            raise _Fail(i, f"unexpected character {t!r}")
        raise _Fail(i, f"expected a value but found {t!r}")

    def bracket(self, i: int) -> tuple[Any, int]:
        toks = self.toks
        name = self.peek(i + 1)
        op = self.peek(i + 2)
        if not _IDENT.match(name) or op not in ("|->", "\\in"):
            raise _Fail(i + 1, "expected a record '[field |-> value, ...]' or '[x \\in S |-> value]'")
        if op == "\\in":
            dom, j = self.expr(i + 3)
            if not isinstance(dom, frozenset):
                raise _Fail(i + 3, "the domain of [x \\in S |-> e] must be a set")
            j = self.expect(j, "|->")
            body_start = j
            body, j = self.expr(j)
            if name in toks[body_start:j]:
                raise _Fail(body_start, f"only constant bodies are supported in [{name} \\in S |-> e]")
            j = self.expect(j, "]")
            return _fn([(k, body) for k in dom]), j
        pairs = []
        j = i + 1
        while True:
            field = self.peek(j)
            if not _IDENT.match(field):
                raise _Fail(j, "expected a record field name")
            j = self.expect(j + 1, "|->")
            v, j = self.expr(j)
            pairs.append((field, v))
            t = self.peek(j)
            if t == ",":
                j += 1
            elif t == "]":
                return Fn(pairs), j + 1
            else:
                raise _Fail(j, f"expected ',' or ']' in record but found {t!r}" if t else "record not closed")


def _positions(text: str) -> list[int]:
    return [m.start() for m in _TOKEN.finditer(text)]


def _raise(text: str, fail: _Fail) -> None:
    pos = _positions(text)
    offset = pos[fail.index] if fail.index < len(pos) else len(text.rstrip())
    raise TLAValueError(fail.message, text, offset) from None


def parse_value(text: str) -> Any:
    """Parse one TLA+ value printed by TLC into its canonical, normalised form.

    Raises :class:`TLAValueError` (a ``ValueError``) with the position of the
    first problem."""
    toks = _TOKEN.findall(text)
    if not toks:
        raise TLAValueError("expected a value but the text is empty", text, 0)
    p = _Parser(toks)
    try:
        v, i = p.expr(0)
        if i != len(toks):
            raise _Fail(i, f"unexpected {toks[i]!r} after a complete value")
    except _Fail as f:
        _raise(text, f)
    except RecursionError:
        raise TLAValueError("value nested too deeply", text, 0) from None
    return v


# A conjunct starts a line: "/\ var = value"; continuation lines of a value
# that TLC wrapped are indented and never start with "/\".
_CONJ = re.compile(r"(?:^|\n)[ \t]*/\\[ \t]+")
_VARNAME = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*")


def parse_state(text: str, cache: dict[str, Any] | None = None) -> dict[str, Any]:
    """Parse a state as TLC prints it: ``/\\ x = 1`` lines (a value may span
    several lines), or the single-variable form ``x = 1``.

    ``cache`` maps value text to parsed value; pass one dict across many calls
    to parse each distinct value text once."""
    body = text.strip()
    if not body:
        raise TLAValueError("empty state", text, 0)
    if body.startswith("/\\"):
        parts = _CONJ.split(body)
        if parts[0].strip():
            raise TLAValueError("text before the first '/\\' conjunct", text, 0)
        parts = parts[1:]
    else:
        parts = [body]
    out: dict[str, Any] = {}
    for part in parts:
        m = _VARNAME.match(part)
        if m is None:
            at = text.find(part)
            raise TLAValueError("expected 'variable = value'", text, max(at, 0))
        name = m.group(1)
        vtext = part[m.end() :]
        if name in out:
            raise TLAValueError(f"variable {name} appears twice", text, max(text.find(part), 0))
        if cache is not None:
            try:
                out[name] = cache[vtext]
                continue
            except KeyError:
                pass
        try:
            v = parse_value(vtext)
        except TLAValueError as e:
            base = text.find(vtext)
            if base < 0:
                raise
            raise TLAValueError(
                f"in the value of {name}: {e.reason}", text, base + e.position
            ) from None
        if cache is not None:
            cache[vtext] = v
        out[name] = v
    return out
