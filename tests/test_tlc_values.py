"""The TLC value, state and config parsers (no JVM needed)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groupcheck.model.tlc_cfg import CfgError, parse_cfg, strip_checks
from groupcheck.model.tlc_values import TLAValueError, parse_state, parse_value
from groupcheck.model.values import Fn, ModelValue, normalize, to_tla

M = ModelValue


# --- values ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0", 0),
        ("-17", -17),
        ("123456789012345678901234567890", 123456789012345678901234567890),
        ("TRUE", True),
        ("FALSE", False),
        ('"plain"', "plain"),
        ("n1", M("n1")),
        ("NULL", M("NULL")),
        ("1a", M("1a")),  # TLA+ identifiers may start with digits
        ("{}", frozenset()),
        ("<<>>", ()),
        ("{1, 2, 2}", frozenset({1, 2})),
        ("<<1, <<>>, {a}>>", (1, (), frozenset({M("a")}))),
        ("0..2", frozenset({0, 1, 2})),
        ("3..2", frozenset()),
        ("{1..3}", frozenset({frozenset({1, 2, 3})})),  # a set holding an interval
        ("-1..1", frozenset({-1, 0, 1})),
    ],
)
def test_scalars_and_collections(text, expected):
    assert parse_value(text) == expected


def test_string_escapes():
    # TLC prints a"b\c<newline>d<tab>e as "a\"b\\c\nd\te"
    assert parse_value(r'"a\"b\\c\nd\te"') == 'a"b\\c\nd\te'
    assert parse_value(r'"\\n"') == "\\n"  # an escaped backslash then n, not a newline
    assert parse_value(r'<<"\"", "\\">>') == ('"', "\\")


def test_nested_records():
    v = parse_value('[who |-> p1, msg |-> [seq |-> 3, body |-> "x"], log |-> <<>>, tags |-> {<<1, 2>>, <<>>}]')
    assert v == Fn(
        {
            "who": M("p1"),
            "msg": Fn({"seq": 3, "body": "x"}),
            "log": (),
            "tags": frozenset({(1, 2), ()}),
        }
    )


def test_functions_both_forms():
    assert parse_value("(p1 :> 0 @@ p2 :> <<p1>>)") == Fn({M("p1"): 0, M("p2"): (M("p1"),)})
    assert parse_value("a :> 1") == Fn({M("a"): 1})
    assert parse_value("(a :> 1)") == Fn({M("a"): 1})
    # domain 1..n is a sequence, whatever order TLC lists it in
    assert parse_value('(2 :> "b" @@ 1 :> "a")') == ("a", "b")
    assert parse_value("1 :> x") == (M("x"),)
    # domain not 1..n stays a function
    assert parse_value("(0 :> 0 @@ 1 :> 10)") == Fn({0: 0, 1: 10})
    # f @@ g: f wins where the domains overlap
    assert parse_value("(a :> 1 @@ a :> 2 @@ b :> 3)") == Fn({M("a"): 1, M("b"): 3})
    # record with string keys vs function with model-value keys differ
    assert parse_value("[a |-> 1]") != parse_value("(a :> 1)")
    assert parse_value('("a" :> 1)') == parse_value("[a |-> 1]")


def test_function_constructor():
    assert parse_value("[x \\in {a, b} |-> 0]") == Fn({M("a"): 0, M("b"): 0})
    assert parse_value("[i \\in 1..3 |-> {}]") == (frozenset(),) * 3
    assert parse_value("[i \\in {} |-> 1]") == ()
    with pytest.raises(TLAValueError, match="constant bodies"):
        parse_value("[x \\in 1..2 |-> x]")


def test_sets_of_sequences_and_records():
    v = parse_value("{<<1, a>>, <<2, b>>, <<>>}")
    assert v == frozenset({(1, M("a")), (2, M("b")), ()})
    assert parse_value("{[a |-> 1], [a |-> 1]}") == frozenset({Fn({"a": 1})})


def test_wrapped_multiline_value():
    text = "{ [from |-> p1, seq |-> 1],\n  [from |-> p2, seq |-> 1] }"
    assert parse_value(text) == frozenset({Fn({"from": M("p1"), "seq": 1}), Fn({"from": M("p2"), "seq": 1})})


@pytest.mark.parametrize(
    "text, line, column, reason",
    [
        ("{1, 2", 1, 6, "text ended"),
        ('"abc', 1, 1, "unterminated string"),
        ("[a |-> ]", 1, 8, "expected a value"),
        ("1 2", 1, 3, "after a complete value"),
        ("<<1,,2>>", 1, 5, "expected a value"),
        ("{1,\n 2 3}", 2, 4, "expected ','"),
        ("-", 1, 1, "unexpected character"),
        ("", 1, 1, "empty"),
        ("[a |-> 1", 1, 9, "record not closed"),
        ("x..2", 1, 2, "interval bounds"),
        ("(1 @@ 2)", 1, 2, "not a function"),
        ("(a :> 1 @@ <<>> @@ {})", 1, 20, "not a function"),
        ('"bad \\q"', 1, 1, "unknown string escape"),
        ("{1} }", 1, 5, "after a complete value"),
        ("SUBSET {1}", 1, 8, "after a complete value"),
    ],
)
def test_errors_name_the_position(text, line, column, reason):
    with pytest.raises(TLAValueError) as ei:
        parse_value(text)
    e = ei.value
    assert (e.line, e.column) == (line, column), str(e)
    assert reason in e.reason
    assert f"line {line}, column {column}" in str(e)


# Canonical values, printed by values.to_tla, must parse back to themselves
# (normalised).  This is the property the dot comparison rests on.
_names = st.from_regex(r"[a-z][a-z0-9_]{0,5}", fullmatch=True)
_scalars = st.one_of(
    st.integers(-(10**6), 10**6),
    st.booleans(),
    st.text(st.sampled_from('ab "\\\n\tz/'), max_size=6),
    _names.map(ModelValue),
)


def _compound(children):
    return st.one_of(
        st.frozensets(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(_names, children, min_size=1, max_size=3).map(Fn),
        st.dictionaries(st.one_of(st.integers(0, 4), _names.map(ModelValue)), children, max_size=3).map(Fn),
    )


_values = st.recursive(_scalars, _compound, max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(_values)
def test_round_trip_through_to_tla(v):
    parsed = parse_value(to_tla(v))
    assert parsed == normalize(v)
    assert normalize(parsed) == parsed  # results come back already normalised


# --- states ------------------------------------------------------------------


def test_parse_state_multi_variable_and_wrapped():
    text = (
        "/\\ last = [who |-> \"inc\", n |-> 1]\n"
        "/\\ x = 1\n"
        "/\\ delivered = ( p1 :> <<<<p1, 1>>, <<p3, 2>>>> @@\n"
        "  p2 :> <<>> )\n"
    )
    assert parse_state(text) == {
        "last": Fn({"who": "inc", "n": 1}),
        "x": 1,
        "delivered": Fn({M("p1"): ((M("p1"), 1), (M("p3"), 2)), M("p2"): ()}),
    }


def test_parse_state_single_variable_form():
    assert parse_state("x = <<a>>\n") == {"x": (M("a"),)}


def test_parse_state_cache_is_shared():
    cache: dict = {}
    s1 = parse_state("/\\ x = {1, 2}\n/\\ y = 0", cache)
    s2 = parse_state("/\\ x = {1, 2}\n/\\ y = 1", cache)
    assert s1["x"] is s2["x"]
    assert set(cache) == {"{1, 2}", "0", "1"}


def test_parse_state_errors():
    with pytest.raises(TLAValueError) as ei:
        parse_state("/\\ x = 1\n/\\ y = {1 2}")
    assert "value of y" in str(ei.value) and ei.value.line == 2 and ei.value.column == 11
    with pytest.raises(TLAValueError, match="twice"):
        parse_state("/\\ x = 1\n/\\ x = 2")
    with pytest.raises(TLAValueError, match="variable = value"):
        parse_state("/\\ 1 = x")
    with pytest.raises(TLAValueError, match="empty"):
        parse_state("  \n")


# --- cfg ---------------------------------------------------------------------

CFG = """\\* comment mentioning INVARIANT Nope
CONSTANTS
  N = 3   Procs = {p1, p2}
  a = a   S = {<<1, "x">>}  M = -2
  F <- G
  H(x, y) <- [Mod] K
(* block (* nested *) PROPERTY Nope2 *)
INIT Init NEXT Next
INVARIANTS TypeOK
   Small
PROPERTY Live
CONSTRAINT Bound
ACTION_CONSTRAINT Act
SYMMETRY Perms
"""


def test_parse_cfg_sections():
    c = parse_cfg(CFG)
    assert c.constants == {
        "N": 3,
        "Procs": frozenset({M("p1"), M("p2")}),
        "a": M("a"),
        "S": frozenset({(1, "x")}),
        "M": -2,
    }
    assert c.substitutions == {"F": "G"}
    assert c.module_substitutions == {("Mod", "H"): "K"}
    assert (c.init, c.next, c.specification) == ("Init", "Next", None)
    assert c.invariants == ["TypeOK", "Small"]
    assert c.properties == ["Live"]
    assert c.constraints == ["Bound"]
    assert c.action_constraints == ["Act"]
    assert c.symmetry == "Perms"


def test_parse_cfg_from_file(tmp_path):
    p = tmp_path / "MC_x.cfg"
    p.write_text("CONSTANT Limit = 3\nSPECIFICATION Spec\nPROPERTIES P Q\n")
    c = parse_cfg(p)
    assert c.source == str(p)
    assert c.constants == {"Limit": 3} and c.specification == "Spec" and c.properties == ["P", "Q"]
    assert parse_cfg(str(p)).constants == {"Limit": 3}


def test_strip_checks_keeps_everything_else():
    stripped = strip_checks(CFG)
    c = parse_cfg(stripped)
    assert c.invariants == [] and c.properties == []
    full = parse_cfg(CFG)
    assert (c.constants, c.substitutions, c.init, c.next, c.constraints, c.action_constraints, c.symmetry) == (
        full.constants,
        full.substitutions,
        full.init,
        full.next,
        full.constraints,
        full.action_constraints,
        full.symmetry,
    )
    assert "(* block (* nested *) PROPERTY Nope2 *)" in stripped  # comments untouched
    assert "INVARIANT" not in stripped.split("*)")[-1]


@pytest.mark.parametrize(
    "text, line, fragment",
    [
        ("CONSTANTS N = ", 1, "no value"),
        ("INIT Init\nNEXT", 2, "file ended"),
        ("INIT I\nCONSTANTS N = {1, 2\nNEXT Next", 2, "not closed"),
        ("CONSTANTS\n N 3", 2, "expected '=' or '<-'"),
        ("\n\nfoo", 3, "expected a keyword"),
        ("INIT a\nINIT b", 2, "given twice"),
        ("INIT I\n\nCONSTANT S = {1 2}", 3, "bad value for constant S"),
        ("CONSTANT N = 1\nN = 2", 2, "assigned twice"),
        ("SPECIFICATION S\nINIT I", 1, "cannot be combined"),
        ("INIT I (* open", 1, "not closed"),
    ],
)
def test_cfg_errors_name_file_and_line(text, line, fragment, tmp_path):
    p = tmp_path / "bad.cfg"
    p.write_text(text)
    with pytest.raises(CfgError) as ei:
        parse_cfg(p)
    assert ei.value.line == line, str(ei.value)
    assert str(ei.value).startswith(f"{p}:{line}: ")
    assert fragment in str(ei.value)


def test_cfg_missing_file():
    with pytest.raises(CfgError, match="not found"):
        parse_cfg("/nonexistent/dir/x.cfg")
