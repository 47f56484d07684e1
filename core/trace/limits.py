"""The limits every input line is held to, whatever reads it: a trace
(core/trace/reader.py) or a history (conformance/history.py).  One home
for them, so that both readers refuse the same lines with the same words
(docs/trace-format.md and docs/history-format.md, "Limits").

A line is refused, before any checker sees it, when it

* starts with a byte order mark (U+FEFF): the formats are UTF-8 without one;
* nests arrays and objects deeper than ``MAX_DEPTH`` (checked on the text,
  before a JSON parser recurses into it);
* holds an integer outside a signed 64-bit integer (``INT_MIN..INT_MAX``),
  a number that is not finite (``NaN``, ``Infinity``, or one too large for
  a double, such as ``1e400``), or a string (a key or a value) with a lone
  UTF-16 surrogate escape (``"\\ud800"``: not a Unicode character, so not
  UTF-8).

``line_problem(text)`` answers on the raw line (``None``: within the
limits); its reason starts with the field at fault when there is one
(``params.p: ...``).  It costs two character counts, a few substring
searches and one byte translation on an ordinary line (one regular
expression search on a line that is not ASCII): the value is decoded and
walked only when the text shows a long run of digits, a large exponent, a
surrogate escape or a non-finite literal.
"""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from typing import Optional

MAX_DEPTH = 32                  # nested arrays/objects in one line (a record of ours nests 6 at most)
INT_MIN, INT_MAX = -(1 << 63), (1 << 63) - 1
BOM = "\ufeff"

# what a value beyond the limits needs in its text: 19 digits in a row (an
# integer beyond 2**63 - 1 has at least 19), an exponent of 3 digits (the
# only way to write a float beyond a double with fewer digits), a surrogate
# escape, or one of Python's non-finite literals
_SCREEN = re.compile(r"\d{19}|[eE][+]?\d{3}|\\u[dD][89a-fA-F]|NaN|Infinity")
# The same screen on an ASCII line without the regular expression, which
# tries its five branches at every character (a sixth of ``conform``'s time
# on a SEQUENCER run): the literals found by substring search, the digit
# runs and exponents on a copy with every digit written 0, every E written e
# and every + left out (one table lookup a byte), each searched as a literal
# (a regular expression of one literal skips ahead as ``in`` does, in fewer
# steps on these lines).  It finds whatever ``_SCREEN`` finds, and more (any
# ``\\u``, not only a surrogate's; digits that only a + separated), and what
# it finds is searched by ``_SCREEN`` as before, so the two decide alike
# (tests/test_input_limits.py compares them).
_ZEROED = bytes.maketrans(b"0123456789E", b"0000000000e")
_RUN = re.compile(b"0" * 19).search
_EXPONENT = re.compile(b"e000").search


def _screened(text: str) -> bool:
    """Whether ``_SCREEN`` finds something in ``text``."""
    if text.isascii() and "\\u" not in text and "NaN" not in text and "Infinity" not in text:
        z = text.encode("ascii").translate(_ZEROED, b"+")
        if _RUN(z) is None and _EXPONENT(z) is None:
            return False
    return _SCREEN.search(text) is not None
# a string, or an unterminated one to the end of the line (so that no start is scanned twice: linear)
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\\?$)', re.DOTALL)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")


class _Constant(str):
    """``NaN``, ``Infinity`` or ``-Infinity`` as written (Python's extension of JSON)."""


_lenient = json.JSONDecoder(parse_constant=_Constant)   # keeps big integers and the constants: the walk judges them


def duplicate_key(pairs):
    """The first key given twice among a JSON object's ``pairs`` (its
    decoder's object_pairs_hook), or None; a reader calls it only when the
    object has fewer keys than pairs."""
    seen = set()
    for k, _ in pairs:
        if k in seen:
            return k
        seen.add(k)
    return None


def _unique(pairs):
    d = dict(pairs)
    if len(d) != len(pairs):
        raise ValueError(f"duplicate key {duplicate_key(pairs)!r}")
    return d


_strict = json.JSONDecoder(object_pairs_hook=_unique)


def loads(text: str):
    """A line's value, strictly: within the limits (``line_problem``) and
    with no key twice in an object; raises ValueError with the reason (a
    ``json.JSONDecodeError`` for text that is not JSON).  The trace reader
    decodes faster (core/trace/reader.py ``parse_line``) and is tested to
    accept and refuse the same lines."""
    bad = line_problem(text)
    if bad:
        raise ValueError(bad)
    return _strict.decode(text)


def depth(text: str) -> int:
    """How deep the arrays and objects of a JSON text nest (brackets in
    strings do not count)."""
    brackets = _NOT_BRACKETS.sub("", _STRINGS.sub("", text))
    return max(accumulate(1 if c in "[{" else -1 for c in brackets), default=0)


def line_problem(text: str) -> Optional[str]:
    """Why one line (without its ``\\n``) is beyond the readers' limits, or
    None.  A line that is not JSON is left to its reader to word."""
    if text.startswith(BOM):
        return "a byte order mark (U+FEFF): the format is UTF-8 without one"
    if text.count("[") + text.count("{") > MAX_DEPTH:
        d = depth(text)
        if d > MAX_DEPTH:
            return f"arrays and objects nested {d} deep (at most {MAX_DEPTH})"
    if not _screened(text):
        return None
    try:
        value = _lenient.decode(text)
    except (ValueError, RecursionError):
        return None
    return value_problem(value)


def value_problem(x, where: str = "") -> Optional[str]:
    """Why a decoded value is beyond the limits (``field: reason``), or None."""
    t = type(x)
    if t is int:
        if not INT_MIN <= x <= INT_MAX:
            return f"{_at(where)}an integer of {len(str(abs(x)))} digits, beyond a signed 64-bit integer"
    elif t is float:
        if not math.isfinite(x):
            return f"{_at(where)}a number beyond a double's range"
    elif t is _Constant:
        return f"{_at(where)}{x} is not a JSON number"
    elif t is str:
        if _lone_surrogate(x):
            return f"{_at(where)}a string with a lone UTF-16 surrogate (not a Unicode character)"
    elif t is list:
        for k, v in enumerate(x):
            bad = value_problem(v, f"{where}[{k}]")
            if bad:
                return bad
    elif t is dict:
        for k, v in x.items():
            if _lone_surrogate(k):
                return f"{_at(where)}a key with a lone UTF-16 surrogate (not a Unicode character)"
            bad = value_problem(v, f"{where}.{k}" if where else k)
            if bad:
                return bad
    return None


def _at(where: str) -> str:
    return f"{where}: " if where else ""


def _lone_surrogate(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
