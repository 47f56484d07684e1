"""Decisions of the checkers, each pinned: which properties TLC trace
validation names broken, and on what a history is judged."""

from __future__ import annotations

import pytest

from groupcheck.conformance import history
from groupcheck.conformance.properties import promises


def test_tlc_names_the_properties_every_matching_behaviour_broke():
    """TLC trace validation's broken properties at a record: the
    intersection over the behaviours that match the log there (a union
    would name a property one behaviour happened to break); the union only
    when no property is common."""
    from groupcheck.conformance.tlctrace import broken_properties
    assert broken_properties(['{"TotalOrder", "NoDuplicates"}, [vid |-> 1]', '{"TotalOrder"}, [vid |-> 2]']) \
        == ["TotalOrder"]
    assert broken_properties(['{"A"}, s1', '{"C"}, s2']) == ["A", "C"]
    assert broken_properties(['{"B", "A"}, s1']) == ["A", "B"]


def _h(protocol=None, promised=None):
    h = history.History(run_id="r", files=["h.ndjson"], nodes=[1, 2])
    h.protocol, h.promised = protocol, promised
    return h


def test_what_a_history_is_judged_on_and_in_which_precedence():
    """--protocol (agreeing with the header) over the header's promises over
    the header's protocol's promises; nothing named: every check; a
    --protocol that disagrees with the header: an input error."""
    every = list(history.CHECKS)
    seq = [c for c in every if c in history.promised_checks("sequencer")]
    flush = [c for c in every if c in history.promised_checks("flush")]
    assert seq != flush and set(promises("flush")) and "TotalOrder" not in flush
    assert history.judged_checks(_h()) == (every, "no protocol named: every check")
    assert history.judged_checks(_h("sequencer"))[0] == seq
    assert history.judged_checks(_h("sequencer", ["Integrity"]))[0] == ["Integrity"]
    assert history.judged_checks(_h(None, ["Integrity"]), "flush")[0] == flush
    assert history.judged_checks(_h("flush", ["Integrity"]), "flush")[0] == flush
    assert history.judged_checks(_h(), "sequencer")[0] == seq
    with pytest.raises(history.HistoryError, match="--protocol sequencer disagrees"):
        history.judged_checks(_h("flush"), "sequencer")
