"""The readers' shared limits (core/trace/limits.py) at their edges:
each limit's last accepted value and first refused one, the field named,
nesting counted on the text (brackets inside strings do not count)."""

from __future__ import annotations

import pytest

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
