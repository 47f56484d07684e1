"""The command line: JSON shapes and exit statuses, on the small Pair model."""

import json

from cli_helpers import gc

CHECK_KEYS = {"protocol", "model", "expected", "result", "violated", "distinct_states",
              "states_generated", "depth", "seconds", "matches_expectation", "counterexample"}
EXPLORE_KEYS = {"protocol", "model", "distinct_states", "tlc_distinct_states", "graphs_equal",
                "first_difference", "seconds", "tlc_seconds"}


def test_check_json_reports_expected_violation():
    p = gc("check", "sequencer", "--model", "Pair", "--json")
    assert p.returncode == 0, p.stderr
    (row,) = json.loads(p.stdout)
    assert CHECK_KEYS <= set(row)
    assert row["result"] == "invariant" and row["violated"] == "TotalOrder"
    assert row["matches_expectation"] is True
    assert len(row["counterexample"]) == row["depth"]


def test_check_human_output_shows_numbered_steps():
    p = gc("check", "sequencer", "--model", "Pair")
    assert p.returncode == 0, p.stderr
    assert "expected violation" in p.stdout          # an expected violation, not a plain pass
    assert "1. Init" in p.stdout and "Crash" in p.stdout


def test_explore_compare_json():
    p = gc("explore", "sequencer", "--model", "Pair", "--compare-tlc", "--json")
    assert p.returncode == 0, p.stderr
    (row,) = json.loads(p.stdout)
    assert EXPLORE_KEYS <= set(row)
    assert row["graphs_equal"] is True and row["first_difference"] is None
    assert row["distinct_states"] == row["tlc_distinct_states"]


def test_explore_processes_counts_as_the_serial_explorer():
    """``explore --processes 2`` (model/parallel.py) counts the same states as
    the serial explorer, and refuses --compare-tlc (no graph to compare)."""
    serial = gc("explore", "stable", "--model", "Pair", "--json")
    multi = gc("explore", "stable", "--model", "Pair", "--processes", "2", "--json")
    assert serial.returncode == 0 and multi.returncode == 0, (serial.stderr, multi.stderr)
    (s,), (m,) = json.loads(serial.stdout), json.loads(multi.stdout)
    assert m["processes"] == 2 and len(m["worker_cpu_seconds"]) == 2
    assert m["distinct_states"] == s["distinct_states"] > 1000
    assert 0 < m["collision_probability"] < 1e-6
    p = gc("explore", "stable", "--model", "Pair", "--processes", "2", "--compare-tlc")
    assert p.returncode == 2 and "--processes" in p.stderr


def test_unknown_model_is_a_clear_error():
    p = gc("check", "sequencer", "--model", "NoSuchModel")
    assert p.returncode == 2 and "NoSuchModel" in p.stderr


def test_model_and_impl_never_import_each_other():
    import ast
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    for folder, forbidden in (("model", "groupcheck.impl"), ("impl", "groupcheck.model")):
        for f in (root / folder).glob("*.py"):
            for node in ast.walk(ast.parse(f.read_text())):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                assert not any(n.startswith(forbidden) for n in names), f"{f} imports {forbidden}"
