"""TraceSequencer.tla judges Sequencer.tla's safety properties as each step
keeps them (``Kept``, over the summaries ``firstAt`` and ``highest``), not
as written: TLC checks, on every transition of two bounded models, that
from a state where all four hold each ``Kept`` is exactly the invariant
after the step (the order properties on steps that deliver no repeat, as
``Kept`` reads first deliveries), and that the models do have steps that
break SenderFIFO and TotalOrder, so the equivalence is not vacuous."""
from __future__ import annotations

import re
import shutil

import pytest

from groupcheck.conformance import tlctrace
from groupcheck.model.tlc import run_tlc
from groupcheck.spec import spec_root
from tlctrace_helpers import NEEDS_JAVA

# the summaries as functions of a member's history d, written the plain way
CHECK = r"""---- MODULE KeptCheck ----
EXTENDS Sequencer
FirstAt(d) == [x \in {d[i] : i \in DOMAIN d} |->
                  CHOOSE i \in DOMAIN d : d[i] = x /\ \A k \in 1 .. i - 1 : d[k] # x]
Highest(d) == [s \in {d[i][1] : i \in DOMAIN d} |->
                  CHOOSE q \in {d[i][2] : i \in DOMAIN d} : \A i \in DOMAIN d : d[i][1] = s => d[i][2] <= q]
T == INSTANCE TraceSequencer WITH l <- 1,
        firstAt <- [m \in Members |-> FirstAt(delivered[m])],
        highest <- [m \in Members |-> Highest(delivered[m])]
Invs == [NoDuplicates |-> NoDuplicates, Integrity |-> Integrity, SenderFIFO |-> SenderFIFO,
         TotalOrder |-> TotalOrder]
AllHold == \A p \in DOMAIN Invs : Invs[p]
KeptIsTheInvariant ==
    [][AllHold => \A p \in DOMAIN T!Kept :
                    (p \in {"SenderFIFO", "TotalOrder"} => NoDuplicates') => (T!Kept[p] <=> Invs'[p])]_vars
NeverBrokenSenderFIFO == [][AllHold => T!Kept["SenderFIFO"]]_vars
NeverBrokenTotalOrder == [][AllHold => T!Kept["TotalOrder"]]_vars
====
"""
STUB_LOG = "---- MODULE TraceLog ----\nEXTENDS Naturals, Sequences, TLC\nLog == << >>\nObserved == {}\nDiagAt == 0\n====\n"

SEED = {"KeepForward": False, "ResendFirst": False, "RetainForward": False,
        "SuspectResend": False, "FillGaps": False, "SeparateChannels": False}
# TotalOrder breaks after a coordinator crash (the Pair model); SenderFIFO
# with JGroups's three constants (SuspectPair, JGRP-1449)
PAIR = {"N": 2, "MaxSeq": 1, "MaxCrashes": 1, **SEED}
SUSPECT_PAIR = {"N": 2, "MaxSeq": 2, "MaxCrashes": 1, **SEED,
                "SuspectResend": True, "FillGaps": True, "SeparateChannels": True}


def _check(tmp_path, constants: dict, prop: str):
    for f in ("Sequencer.tla", "TraceSequencer.tla"):
        shutil.copy(spec_root() / "Sequencer" / f, tmp_path / f)
    (tmp_path / "TraceLog.tla").write_text(STUB_LOG, encoding="utf-8")
    (tmp_path / "KeptCheck.tla").write_text(CHECK, encoding="utf-8")
    cfg = "CONSTANTS\n" + "".join(f"    {k} = {str(v).upper() if isinstance(v, bool) else v}\n"
                                  for k, v in constants.items())
    cfg += f"SPECIFICATION Spec\nPROPERTY {prop}\n"
    return run_tlc(tmp_path, "KeptCheck", None, cfg_text=cfg, timeout=900)


@pytest.mark.parametrize("protocol", tlctrace.supported_protocols())
def test_each_trace_spec_judges_the_properties_its_protocol_declares(protocol):
    """``TLATrace.properties`` are the fields of the trace spec's ``Kept``, the
    replay's names for them, and its cfg prunes the steps that break one."""
    proto, tt = tlctrace._binding(protocol)
    folder = spec_root() / proto.spec
    text = (folder / f"Trace{proto.spec}.tla").read_text(encoding="utf-8")
    cfg = (folder / f"Trace{proto.spec}.cfg").read_text(encoding="utf-8")
    kept = re.search(r"^Kept == \[(.*?)\]$", text, re.M | re.S)
    # the end of a quiescent run: ``TLATrace.end`` are the fields of its EndKept, pruned the same way
    end = re.search(r"^EndKept == \[(.*?)\]$", text, re.M | re.S)
    if tt.end:
        assert sorted(re.findall(r"(\w+) \|->", end.group(1))) == sorted(tt.end)
        assert "ACTION_CONSTRAINT TraceKeeps" in cfg.splitlines()
    else:
        assert end is None
    if not tt.properties:
        assert kept is None and ("TraceKeeps" not in cfg or tt.end)
        return
    assert sorted(re.findall(r"(\w+) \|->", kept.group(1))) == sorted(tt.properties)
    assert set(tt.properties) <= set(proto.properties)
    assert "ACTION_CONSTRAINT TraceKeeps" in cfg.splitlines()


@NEEDS_JAVA
@pytest.mark.parametrize("constants", [PAIR, SUSPECT_PAIR], ids=["Pair", "SuspectPair"])
def test_kept_is_the_invariant_after_the_step(tmp_path, constants):
    r = _check(tmp_path, constants, "KeptIsTheInvariant")
    assert r.outcome == "ok", r.raw_output[-3000:]


@NEEDS_JAVA
@pytest.mark.parametrize("constants,prop", [(PAIR, "NeverBrokenTotalOrder"), (SUSPECT_PAIR, "NeverBrokenSenderFIFO")],
                         ids=["TotalOrder", "SenderFIFO"])
def test_the_models_have_steps_that_break_it(tmp_path, constants, prop):
    r = _check(tmp_path, constants, prop)
    assert r.outcome == "property", r.raw_output[-3000:]
