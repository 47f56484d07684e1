"""A TLC verdict's explanation shows spec states by the variables that
matter (conformance/tlctrace.py ``state_lines``): those the step logs and
those on which the states shown differ; long values keep their two ends."""

from groupcheck.conformance.tlctrace import TLCVerdict, VALUE_CHARS, record_fields, state_lines

LONG = "<< " + ", ".join(f"<<2, {k}>>" for k in range(1, 90)) + " >>"
STATE = ('[ vid |-> 1, crashed |-> {1}, sent |-> 86, fwd |-> { 35, 36 }, recv |-> <<47, 86, 34>>, '
         f'delivered |-> {LONG}, note |-> "a, b |-> c" ]')


def test_a_record_is_split_at_its_top_level_commas_only():
    fields = record_fields(STATE)
    assert [n for n, _ in fields] == ["vid", "crashed", "sent", "fwd", "recv", "delivered", "note"]
    assert dict(fields)["fwd"] == "{ 35, 36 }" and dict(fields)["note"] == '"a, b |-> c"'
    assert dict(fields)["delivered"] == LONG
    assert record_fields("<<1, 2>>") is None and record_fields("[ a ]") is None


def test_the_step_s_variables_are_shown_the_others_named():
    lines = state_lines([STATE], {"name": "RecvData", "state": {"delivered": [[2, 46]], "recv": {"1": 47}}})
    assert lines[0] == "  recv |-> <<47, 86, 34>>"
    assert lines[1].startswith("  delivered |-> << <<2, 1>>") and "characters) …" in lines[1]
    assert lines[1].endswith("<<2, 89>> >>") and len(lines[1]) < VALUE_CHARS + 60
    assert lines[2] == "  (5 other variable(s), not logged by this step: vid, crashed, sent, fwd, note)"
    assert len(lines) == 3


def test_states_that_differ_show_where_they_differ():
    other = STATE.replace("sent |-> 86", "sent |-> 85")
    lines = state_lines([STATE, other], {"state": {"recv": {}}}, every=True)
    assert lines[0] == "  state 1:" and "    sent |-> 86" in lines and "    sent |-> 85" in lines
    assert "    recv |-> <<47, 86, 34>>" in lines
    assert not any("vid |->" in x for x in lines)
    assert lines[-1].startswith("    (5 other variable(s), not logged by this step and the same in every state shown")


def test_a_step_that_logs_no_state_shows_the_whole_state_cut():
    lines = state_lines([STATE], {"name": "Crash", "state": None})
    assert len(lines) == 7 and lines[0] == "  vid |-> 1" and "characters) …" in lines[5]


def test_the_explanation_of_a_broken_property_uses_them():
    v = TLCVerdict(ok=True, events=700, first_unmatched=None, seconds=1.0, detail="", broken_at=683,
                   broken=["SenderFIFO"], broken_states=[STATE],
                   broken_record={"i": 683, "name": "RecvData", "nid": 3, "state": {"delivered": [[2, 46]]}})
    text = v.explain()
    assert "  delivered |-> << <<2, 1>>" in text and "vid |-> 1" not in text and len(text) < 1000
