"""conformance/jgroups/adapter.py ``write_trace`` on hand-written step files (no JVM):
the suspicions the harness's shutdown causes are left out of the trace, a
suspicion during the run is kept and judged."""

import json

from groupcheck.conformance.jgroups.adapter import write_trace


def _steps(tmp_path, k, rows):
    (tmp_path / f"node-{k}.steps").write_text("".join(json.dumps(r) + "\n" for r in rows))


def _names(path):
    return [(r["name"], r.get("nid")) for r in map(json.loads, path.read_text().splitlines())
            if r.get("kind") == "event"]


def test_a_suspicion_after_the_last_step_is_the_shutdowns_and_left_out(tmp_path):
    send = {"name": "Send", "nid": 1, "params": {}, "state": {}}
    _steps(tmp_path, 1, [{"ts": 10, **send}])
    _steps(tmp_path, 2, [{"ts": 20, "name": "Suspect", "nid": 2, "params": {"c": 1}, "state": {}}])
    assert _names(write_trace(tmp_path, "r", 2, 1, {}, True)) == [("Send", 1)]


def test_a_suspicion_during_the_run_is_kept(tmp_path):
    _steps(tmp_path, 1, [{"ts": 10, "name": "Send", "nid": 1, "params": {}, "state": {}},
                         {"ts": 30, "name": "Send", "nid": 1, "params": {}, "state": {}}])
    _steps(tmp_path, 2, [{"ts": 20, "name": "Suspect", "nid": 2, "params": {"c": 1}, "state": {}}])
    assert _names(write_trace(tmp_path, "r", 2, 2, {}, True)) == [("Send", 1), ("Suspect", 2), ("Send", 1)]
