"""The audit's prove stage (conformance/audit/stages.py prove_check) and its matrix
in the report, on STABLE with two members (a few seconds of z3)."""

from groupcheck.conformance.audit import stages as audit
from groupcheck.conformance.audit import report
from groupcheck.model.proofs.stable import StableEncoding


def test_fixed_pair_is_proved_and_its_matrix_is_reported():
    c = audit.prove_check(StableEncoding(2, 1))
    assert c.kind == "prove" and c.id == "prove/stable/Fixed"
    assert c.as_expected and c.verdict == "pass", (c.observed, c.detail)
    assert c.figures["proved"] == c.figures["queries"] > 0
    (m,) = report.proof_matrices([c])
    assert m["columns"][0] == "initiation" and m["columns"][-1] == "implication"
    assert "Join" in m["columns"] and len(m["rows"]) == len(StableEncoding(2, 1).lemmas)
    # some queries need no solver (engine.Frame), and the matrix says which
    assert 0 < c.figures["by_frame"] < c.figures["queries"]
    assert any("frame" in r["cells"] for r in m["rows"])
    md = report.markdown([c])
    assert "## Proof matrices (z3)" in md and "| SafeGC |" in md
    assert "Proof matrices (z3)" in report.html([c])


def test_flawed_variant_without_a_reachable_cti_is_unexpected():
    """With two members the seed's A,B,C flaw cannot show (it needs a third
    member, docs/stable.md): the flawed variant then yields no reachable
    counterexample, and the stage reports that as unexpected."""
    c = audit.prove_check(StableEncoding(2, 1, reset=False))
    assert not c.as_expected and c.verdict == "unexpected"
    assert c.figures["reachable_cti"] == 0
