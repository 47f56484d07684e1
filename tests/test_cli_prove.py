"""``groupcheck prove``: JSON shape, the flawed variant's reachable
counterexample to induction, and usage errors."""

import json

from cli_helpers import gc

KEYS = {"protocol", "variant", "query", "result", "seconds", "members", "flawed"}
CTI_KEYS = {"action", "pre", "post", "reachable", "path"}


def test_prove_joinrace_json_shows_a_reachable_cti():
    p = gc("prove", "stable", "--variant", "JoinRace", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    (summary,) = out["variants"]           # one summary per variant, then every query
    import z3
    assert out["z3"] == z3.get_version_string() and out["calibrated_z3"] == "5.4.1"
    rows = out["queries"]
    assert summary["variant"] == "JoinRace" and summary["queries"] == len(rows) and summary["as_expected"]
    assert summary["cti"] == sum(r["result"] == "cti" for r in rows) >= summary["reachable_cti"] >= 1
    assert rows and all(KEYS <= set(r) for r in rows)
    assert {r["protocol"] for r in rows} == {"stable"} and {r["variant"] for r in rows} == {"JoinRace"}
    assert all(r["result"] in ("proved", "cti", "unknown") for r in rows)
    kinds = {r["query"].split(":")[0] for r in rows}
    assert kinds == {"initiation", "consecution", "implication"}
    ctis = [r for r in rows if r["result"] == "cti"]
    assert all(CTI_KEYS <= set(r) for r in ctis)
    real = [r for r in ctis if r["reachable"] is True]
    assert real, ctis
    assert all(r["path"][0] == "Init" and r["pre"] and r["post"] for r in real)


def test_prove_unknown_protocol_or_variant_is_a_usage_error():
    p = gc("prove", "nosuch")
    assert p.returncode == 2 and "protocols with proofs" in (p.stdout + p.stderr)
    p = gc("prove", "stable", "--variant", "Nosuch")
    assert p.returncode == 2 and "Flawed" in (p.stdout + p.stderr)


def test_prove_human_output_shows_the_matrix_and_the_path():
    p = gc("prove", "stable", "--variant", "JoinRace")
    assert p.returncode == 0, p.stderr
    assert "consecution:SendStable:JoinDigest" in p.stdout
    assert "stable/JoinRace (N=2)" in p.stdout and "as expected" in p.stdout
    assert "shortest path to its pre-state" in p.stdout and "Init -> " in p.stdout
    assert "total" in p.stdout


def test_prove_names_its_z3_and_warns_on_another(monkeypatch):
    """The limits are counted in the pinned z3's units: --json says which z3
    answered, and another version is named on stderr, not silently used."""
    import z3
    from groupcheck.model.proofs import prover
    assert (prover.solver_note() is None) == (z3.get_version_string() == prover.CALIBRATED_Z3)
    monkeypatch.setattr(z3, "get_version_string", lambda: "4.12.0")
    note = prover.solver_note()
    assert note is not None and "4.12.0" in note and prover.CALIBRATED_Z3 in note
