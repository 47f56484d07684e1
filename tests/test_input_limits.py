"""The readers' shared limits (core/trace/limits.py) at their edges:
each limit's last accepted value and first refused one, the field named,
nesting counted on the text (brackets inside strings do not count)."""

from __future__ import annotations

import pytest
from hypothesis import example, given, strategies as st

from groupcheck.core.trace import limits as inputlimits
from groupcheck.core.trace.limits import MAX_DEPTH, line_problem


@pytest.mark.parametrize("text", [
    '{"a":9223372036854775807}', '{"a":-9223372036854775808}', '{"a":1e308}', '{"a":-1e308}',
    '{"a":"\\ud83d\\ude00"}',                                 # a surrogate pair: one character
    '{"a":"NaN Infinity"}', '{"a":"1234567890123456789012"}',  # in strings: not numbers
    '{"a":' + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "}",
    '{"a":"' + "[" * 100 + '"}', '{"a":"\\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}',
])
def test_within_the_limits(text):
    assert line_problem(text) is None


@pytest.mark.parametrize("text,says", [
    ('{"a":9223372036854775808}', "a: an integer of 19 digits"),
    ('{"a":-9223372036854775809}', "a: an integer of 19 digits"),
    ('{"a":{"b":[1,' + "1" + "0" * 400 + "]}}", "a.b[1]: an integer of 401 digits"),
    ('{"a":1e400}', "a: a number beyond a double's range"),
    ('{"a":NaN}', "a: NaN is not a JSON number"), ('{"a":[-Infinity]}', "a[0]: -Infinity is not a JSON number"),
    ('{"a":"\\ud800"}', "a: a string with a lone UTF-16 surrogate"),
    ('{"\\udc00":1}', "a key with a lone UTF-16 surrogate"),
    ('\ufeff{"a":1}', "a byte order mark"),
    ('{"a":' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}", f"nested {MAX_DEPTH + 1} deep"),
    ("[" * 100000, "nested 100000 deep"),
])
def test_beyond_the_limits(text, says):
    assert says in (line_problem(text) or ""), line_problem(text)


def test_depth_counts_brackets_outside_strings_only():
    assert inputlimits.depth('[{"x":"]]]]"},["[["]]') == 2
    assert inputlimits.depth('["\\"]",[[]]]') == 3
    assert inputlimits.depth('"unterminated [[[') == 0


def test_loads_refuses_a_key_twice_and_keeps_the_value_otherwise():
    assert inputlimits.loads('{"a":[1,{"b":2}]}') == {"a": [1, {"b": 2}]}
    with pytest.raises(ValueError, match="duplicate key 'b'"):
        inputlimits.loads('{"a":{"b":1,"b":2}}')
    with pytest.raises(ValueError, match="nested"):
        inputlimits.loads("[" * 5000 + "]" * 5000)


# the pieces of what the screen looks for, and of what it must not take for them
_PIECES = ["0", "1", "9", "12345678", "123456789012345678", "e", "E", "+", "-", ".", "e+", "E+1", "\\u", "\\ud8",
           "\\uD9", "\\udc00", "\\u0041", "NaN", "Na", "Infinity", "Infinit", "-Infinity", '"', ":", ",", "{", "}",
           "[", "]", "a", " ", "\u0660", "\u00e9"]


@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)
       | st.text(alphabet="0123456789eE+-.\\uDdNaIfity\"", max_size=40))
@example("1" * 18)
@example("1" * 19)
@example("x1234567890123456789y")
@example("e12")
@example("e123")
@example("E123")
@example("e+123")
@example("E+999")
@example("e-123")
@example("e++123")
@example("\\ud800")
@example("\\uD9ab")
@example("\\u0041")
@example("NaN")
@example("-Infinity")
@example("\u0661" * 19)
def test_the_ascii_screen_finds_what_the_regular_expression_finds(text):
    assert inputlimits._screened(text) == (inputlimits._SCREEN.search(text) is not None)


def _line_problem_by_the_regular_expression(text):
    """``line_problem`` as it was with the regular expression alone: the reference."""
    if text.startswith(inputlimits.BOM):
        return "bom"
    if text.count("[") + text.count("{") > MAX_DEPTH and inputlimits.depth(text) > MAX_DEPTH:
        return "deep"
    if inputlimits._SCREEN.search(text) is None:
        return None
    try:
        return inputlimits.value_problem(inputlimits._lenient.decode(text))
    except (ValueError, RecursionError):
        return None


@given(st.lists(st.sampled_from(_PIECES), max_size=12), st.lists(st.sampled_from(_PIECES), max_size=12))
def test_line_problem_refuses_what_the_regular_expression_refused(a, b):
    # malformed and well-formed lines alike: a value between two runs of pieces
    for text in ('{"a":' + "".join(a) + "}", '{"a":["' + "".join(a) + '",' + "".join(b) + "]}",
                 '{"' + "".join(a) + '":' + "".join(b) + "}"):
        want = _line_problem_by_the_regular_expression(text)
        got = line_problem(text)
        assert (got is None) == (want is None), (text, got, want)
        if want not in (None, "bom", "deep"):
            assert got == want
