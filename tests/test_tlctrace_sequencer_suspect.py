"""JGroups 2.12.2's SEQUENCER as Sequencer.tla's variant (SuspectResend,
FillGaps, SeparateChannels): a trace of the manifest's SuspectPair path (JGRP-1449) is every
step a step of the spec for TLC and the replay alike, and both find
SenderFIFO broken at the delivery that breaks it; without the variants the
same trace is no behaviour of the spec, rejected by both at the step that
needs them; the header's constants are read strictly."""
from __future__ import annotations

import copy
import dataclasses

import pytest

from groupcheck.conformance import tlctrace
from groupcheck.conformance.replay import sequencer
from groupcheck.conformance.jgroups.adapter import jgroups_step
from groupcheck.conformance.replay.engine import HeaderError
from groupcheck.core.trace.reader import Trace
from groupcheck.model.sequencer import SequencerModel
from model_helpers import init, step
from tlctrace_helpers import NEEDS_JAVA, both, events, rejected_at

JG = {"N": 2, "MaxSeq": 2, "MaxCrashes": 1, "SuspectResend": True, "FillGaps": True, "SeparateChannels": True}

# Member 2 forwards 2.1 to the coordinator, which crashes with it; member 2
# suspects it, takes itself for coordinator and re-sends 2.1 to itself, then
# multicasts 2.2 at once and takes it back before the re-sent FORWARD (two
# channels); the received-table delivers 2.1 after 2.2 (it fills a gap);
# only then is the view without member 1 installed.
PATH = [("Send", 2), ("Crash", 1, frozenset({2})), ("Suspect", 2, 1), ("Send", 2), ("RecvData", 2, 2),
        ("RecvForward", 2, 2), ("RecvData", 2, 2), ("NewView",), ("InstallView", 2)]
BREAKS = 6          # the RecvData of 2.1, after 2.2: where SenderFIFO breaks
PARAM = {"Suspect": "c", "RecvForward": "p", "RecvData": "p"}


def _records(constants: dict) -> list:
    """The trace records of PATH run on model/sequencer.py: each step's
    message and the acting member's changed variables, as an adapter logs them."""
    m = SequencerModel(constants)
    s = init(m)
    recs = [{"kind": "header", "format": "groupcheck-trace/2", "protocol": "sequencer", "nodes": list(m.Members),
             "constants": dict(constants), "options": {}, "seed": None, "faults": {}, "impl": "model/sequencer.py",
             "impl_version": "0", "run_id": "sequencer-suspect-path"}]
    for name, *args in PATH:
        t = step(m, s, name, *args)
        rec = {"kind": "event", "name": name, "nid": args[0] if args else None, "params": {},
               "clock": len(recs) / 1000}
        if name in PARAM:
            rec["params"] = {PARAM[name]: args[1]}
        if name == "Crash":
            rec["params"] = {"lost": sorted(args[1])}
        if name == "NewView":
            rec["params"] = {"view": list(t.views[-1])}
        if name in ("RecvForward", "RecvData"):
            i = m.Taking(s, args[0], args[1], "FORWARD" if name == "RecvForward" else "DATA")
            rec["msg"] = dict(s.chan[(args[1], args[0])][i])
        if name == "Send":
            p = args[0]
            rec["msg"] = {"type": "FORWARD" if t.fwd[p] != s.fwd[p] else "DATA", "sender": p, "seqno": t.sent[p]}
        if name not in ("Crash", "NewView"):
            before, after = sequencer.project(s, args[0]), sequencer.project(t, args[0])
            rec["state"] = {k: x for k, x in after.items() if x != before[k]}
            if "delivered" in rec["state"]:
                rec["state"]["delivered"] = after["delivered"][len(before["delivered"]):]
        recs.append(rec)
        s = t
    return recs


@NEEDS_JAVA
def test_jgrp_1449_breaks_sender_fifo_for_tlc_and_the_replay_at_the_same_record(tmp_path):
    recs = _records(JG)
    v, m = both(tmp_path, recs, "jgrp1449")
    assert events(recs)[BREAKS]["state"]["delivered"] == [[2, 1]]
    # every step is a step of the spec, for both
    assert v.ok and v.first_unmatched is None and v.events == len(events(recs)), v.explain()
    assert m["verdict"] == "violation" and m["stops_conforming_at"] is None, m
    # both find SenderFIFO broken at the RecvData of 2.1, after 2.2
    assert m["reason"].startswith("SenderFIFO: member 2 delivered 2.1 after 2.2"), m["reason"]
    # (GapFreeFIFO breaks earlier, at 2.2 skipping 2.1: a property TLC leaves to the replay)
    assert m["first_bad_event"] == BREAKS and m["broken"] == {"SenderFIFO": BREAKS, "GapFreeFIFO": 4}, m
    assert v.broken == ["SenderFIFO"] and v.broken_at == BREAKS and not v.clean, v.to_json()
    assert tlctrace.agrees(v, m)
    # TLC's explanation: the record, the spec's state after it, and the JGroups step behind it
    text = v.explain()
    assert text.startswith("SenderFIFO broken at event 6 (RecvData at node 2)"), text
    assert "delivered |-> <<<<2, 2>>, <<2, 1>>>>" in text, text
    step = jgroups_step(v.broken_record, v.broken[0])
    assert "SeqnoTable delivers 2.1" in step and "(JGRP-1449)" in step, step
    # agreement reads the property and its record
    assert not tlctrace.agrees(dataclasses.replace(v, broken_at=None, broken=[]), m)
    assert not tlctrace.agrees(dataclasses.replace(v, broken_at=BREAKS - 1, broken_records=[BREAKS - 1]), m)
    assert not tlctrace.agrees(dataclasses.replace(v, broken=["TotalOrder"]), m)
    assert not tlctrace.agrees(v, {**m, "broken": {"GapFreeFIFO": 4}})


@NEEDS_JAVA
def test_without_suspect_resend_the_suspicion_is_no_step(tmp_path):
    recs = _records(JG)
    del recs[0]["constants"]["SuspectResend"]       # absent: FALSE, the seed's
    rejected_at(tmp_path, recs, "nosuspect", 2)


@NEEDS_JAVA
def test_without_separate_channels_the_data_cannot_overtake_the_forward(tmp_path):
    recs = _records(JG)
    recs[0]["constants"]["SeparateChannels"] = False    # one FIFO channel: the FORWARD 2.1 is its head
    rejected_at(tmp_path, recs, "onechannel", 4)


@NEEDS_JAVA
def test_without_fill_gaps_the_late_message_is_a_duplicate(tmp_path):
    recs = _records(JG)
    recs[0]["constants"]["FillGaps"] = False        # the seed's received-table discards 2.1 below 2.2
    rejected_at(tmp_path, recs, "nofill", BREAKS)


def test_the_replay_reads_the_variants_from_the_header():
    header = {"protocol": "sequencer", "nodes": [1, 2], "constants": dict(JG)}
    model = sequencer.SequencerBinding(Trace("t", header, [])).model
    assert model.SuspectResend is True and model.FillGaps is True and model.SeparateChannels is True
    h = copy.deepcopy(header)
    del h["constants"]["SuspectResend"], h["constants"]["FillGaps"], h["constants"]["SeparateChannels"]
    model = sequencer.SequencerBinding(Trace("t", h, [])).model
    assert model.SuspectResend is False and model.FillGaps is False and model.SeparateChannels is False
    for field in ("SuspectResend", "FillGaps", "SeparateChannels", "ResendFirst"):
        h = copy.deepcopy(header)
        h["constants"][field] = "true"
        with pytest.raises(HeaderError, match=field):
            sequencer.SequencerBinding(Trace("t", h, []))
    # TLC's constants come from the same function
    assert tlctrace.cfg_text("sequencer", JG).count("SuspectResend = TRUE") == 1
