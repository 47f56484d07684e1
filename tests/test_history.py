"""Black-box history checker: unit checks on hand-built histories,
bad input named file:line:field, and agreement with the model replay on the
SEQUENCER campaign."""

from __future__ import annotations

import json

import pytest

from groupcheck.conformance.audit.diagram import violation_drawing
from groupcheck.conformance import history
from groupcheck.core.trace import history as history_format
from groupcheck.conformance.replay import registry as protocols
from groupcheck.conformance.replay.conform import conform_file
from groupcheck.core.trace import writer as tracefile


def _hist(events, run="r", nodes=(1, 2, 3), quiescent=True):
    recs = [{"kind": "header", "format": history_format.FORMAT, "run_id": run, "nodes": list(nodes)}]
    for name, nid, params in events:
        recs.append({"kind": "event", "name": name, "nid": nid, "params": params})
    recs.append({"kind": "end", "quiescent": quiescent})
    return recs


def _checks(recs):
    return {v.check: v for v in history.check(history_format.from_records(recs))}


def S(n, q):
    return ("send", n, {"id": [n, q]})


def D(n, x, q):
    return ("deliver", n, {"id": [x, q]})


def V(n, v, ms):
    return ("view", n, {"view": v, "members": ms})


def test_clean_history_passes():
    ev = [V(m, 1, [1, 2]) for m in (1, 2)] + [S(1, 1), S(2, 1)]
    ev += [D(m, *x) for m in (1, 2) for x in ((1, 1), (2, 1))]
    assert _checks(_hist(ev, nodes=(1, 2))) == {}


def test_each_check_fires_with_its_witness():
    ev = [S(1, 1), S(1, 2), S(2, 1), D(1, 1, 1), D(1, 2, 1), D(2, 2, 1), D(2, 1, 1), D(2, 1, 1), D(3, 1, 2),
          D(3, 9, 9)]
    c = _checks(_hist(ev))
    assert c["TotalOrder"].members == [1, 2] and "1.1" in c["TotalOrder"].text
    assert c["SurvivorTotalOrder"].members == [1, 2]
    assert c["NoDuplicates"].members == [2]
    assert c["SenderFIFO"].members == [3] and "skipping 1.1" in c["SenderFIFO"].text
    assert c["Integrity"].text.startswith("member 3 delivered 9.9")
    assert "Agreement" in c
    assert violation_drawing(c["TotalOrder"]).mermaid.startswith("sequenceDiagram")


def test_uniform_versus_survivor_total_order():
    ev = [S(1, 1), S(2, 1), D(1, 1, 1), D(1, 2, 1), D(2, 2, 1), D(2, 1, 1), D(3, 2, 1), D(3, 1, 1),
          ("crash", None, {"member": 1})]
    c = _checks(_hist(ev))
    assert "TotalOrder" in c and "SurvivorTotalOrder" not in c


def test_virtual_synchrony_and_flush_order():
    ev = [V(1, 1, [1, 2]), V(2, 1, [1, 2]), S(1, 1), D(1, 1, 1), V(1, 2, [1, 2]), V(2, 2, [1, 2]),
          D(2, 1, 1)]
    c = _checks(_hist(ev, nodes=(1, 2)))
    assert c["VirtualSynchrony"].members == [1, 2]
    fl = [("block", 1, {}), V(1, 1, [1]), ("unblock", 1, {}), ("block", 1, {}), ("get_state", 1, {}),
          ("unblock", 1, {})]
    assert "FlushEventOrder" not in _checks(_hist(fl, nodes=(1,)))
    bad = fl + [("unblock", 1, {})]
    assert "unblock without block" in _checks(_hist(bad, nodes=(1,)))["FlushEventOrder"].text
    hang = fl + [("block", 1, {})]
    assert "ends blocked" in _checks(_hist(hang, nodes=(1,)))["FlushEventOrder"].text
    assert "FlushEventOrder" not in _checks(_hist(hang + [("crash", None, {"member": 1})], nodes=(1,)))


def test_bad_input_names_file_line_field(tmp_path):
    p = tmp_path / "h.ndjson"
    recs = _hist([S(1, 1), ("deliver", 2, {"id": 7})])
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))
    with pytest.raises(history_format.HistoryError, match=r"h.ndjson:3:params.id"):
        history.check_paths([p])
    p.write_text(json.dumps({"kind": "header", "format": "x", "run_id": "r"}) + "\n")
    with pytest.raises(history_format.HistoryError, match=r"h.ndjson:1:format"):
        history.check_paths([p])


def test_per_node_files_group_by_run(tmp_path):
    a = _hist([S(1, 1), D(1, 1, 1)])
    b = _hist([D(2, 1, 1)])
    for k, recs in ((1, a), (2, b)):
        recs[0]["node"] = k
        (tmp_path / f"n{k}.ndjson").write_text("".join(json.dumps(r) + "\n" for r in recs))
    rows = history.check_paths([tmp_path])
    assert len(rows) == 1 and rows[0]["events"] == 3
    assert {v["check"] for v in rows[0]["violations"]} == {"Agreement"}   # node 3 delivered nothing


def test_campaign_history_agrees_with_model_replay(tmp_path):
    """The SEQUENCER campaign (campaign_faults, 100 seeds): the history of each
    simulated run is flagged TotalOrder exactly when the model replay reports
    TotalOrder, with the same two witness members."""
    proto = protocols.get("sequencer")
    flagged = 0
    for seed in range(100):
        recs, _ = proto.simulate(seed, proto.campaign_faults, proto.default_options)
        p = tracefile.write(tmp_path / f"{seed}.ndjson", recs)
        rep = conform_file(str(p))
        assert rep.verdict in ("ok", "violation", "documented"), rep.reason
        hp = tracefile.write(tmp_path / "h" / f"{seed}.ndjson", history.from_trace(recs))
        [row] = history.check_paths([hp])
        hv = {v["check"]: v for v in row["violations"]}
        to = [v for v in rep.violations if v["property"] == "TotalOrder"]
        model_to = bool(to)
        assert model_to == ("TotalOrder" in hv), (seed, rep.reason, hv.keys())
        if model_to:
            flagged += 1
            mem = to[0]["witness"].split("member ")
            assert sorted({int(mem[1].split()[0]), int(mem[2].split()[0])}) == sorted(hv["TotalOrder"]["members"])
    assert flagged > 0      # the campaign does exercise the coordinator-crash finding


def test_cli_simulate_history_then_check(tmp_path):
    from typer.testing import CliRunner
    from groupcheck.cli.main import app
    r = CliRunner()
    res = r.invoke(app, ["simulate", "sequencer", "--seed", "60", "--runs", "2", "--history",
                         "--faults", protocols.get("sequencer").campaign_faults, "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    res = r.invoke(app, ["history", str(tmp_path / "history"), "--json"])
    rows = json.loads(res.stdout)
    assert res.exit_code == (0 if all(x["verdict"] == "ok" for x in rows) else 1) and len(rows) == 2
    for row in rows:
        for v in row["violations"]:
            assert v["mermaid"].startswith("sequenceDiagram") and v["members"]
    res = r.invoke(app, ["history", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "no such file" in res.output
    res = r.invoke(app, ["simulate", "stable", "--history", "--out", str(tmp_path / "f")])
    assert res.exit_code == 2 and "no history projection for 'stable'" in res.output


@pytest.mark.slow
def test_spark_engine_gives_the_local_verdicts(tmp_path):
    """Many histories (the SEQUENCER campaign, 40 runs; one run split in
    per-member files) checked on Spark local[1]: the same verdicts, witnesses
    included, as the local engine."""
    pytest.importorskip("pyspark")
    from groupcheck.conformance.pipeline.spark import session
    proto = protocols.get("sequencer")
    for seed in range(40):
        recs, _ = proto.simulate(seed, proto.campaign_faults, proto.default_options)
        tracefile.write(tmp_path / f"{seed}.ndjson", history.from_trace(recs))
    split = _hist([S(1, 1), D(1, 1, 1), D(2, 1, 1), D(3, 1, 1)], run="split")
    for k in (1, 2, 3):
        part = [dict(split[0], node=k)] + [r for r in split[1:] if r.get("nid") == k or r["kind"] == "end"]
        (tmp_path / f"split-{k}.ndjson").write_text("".join(json.dumps(r) + "\n" for r in part))
    local = {r["run_id"]: r for r in history.check_paths([tmp_path])}
    remote = {r["run_id"]: r for r in history.check_spark([tmp_path], session("local[1]"))}
    assert local.keys() == remote.keys() and len(local) == 41
    for k in local:
        a, b = dict(local[k]), dict(remote[k])
        assert sorted(a.pop("files")) == sorted(b.pop("files")) and a == b, k
    assert sum(r["verdict"] == "violation" for r in local.values()) > 0


def test_a_member_that_left_is_not_a_survivor():
    """A graceful leave: member 3's last view leaves it out, so it may have
    delivered less and may end blocked; its own message must still reach the
    members that stay, and a member that stays may not end blocked."""
    views = [V(m, 1, [1, 2, 3]) for m in (1, 2, 3)]
    ev = views + [S(3, 1)] + [D(m, 3, 1) for m in (1, 2, 3)] + [S(1, 1), ("block", 3, {})]
    ev += [V(m, 2, [1, 2]) for m in (1, 2, 3)] + [D(1, 1, 1), D(2, 1, 1)]
    assert _checks(_hist(ev)) == {}
    lost = [e for e in ev if e != D(2, 3, 1)]           # a stayer misses the leaver's message
    assert "3.1" in _checks(_hist(lost))["Agreement"].text
    stuck = ev + [("block", 1, {})]
    assert "ends blocked" in _checks(_hist(stuck))["FlushEventOrder"].text


def test_audit_history_stage_agrees_and_catches_a_blind_checker(monkeypatch):
    """The audit's history stage: on SEQUENCER's drawn runs the history flags
    exactly the runs the replay flags (some do: its known findings); a
    history checker that sees nothing disagrees and the check fails."""
    from groupcheck.conformance.audit import stages as audit
    c = audit.history_check("sequencer", 30, 0)
    assert c.as_expected and c.figures["flagged"] > 0 and c.diagrams, c.detail
    assert audit.history_check("flush", 10, 0).as_expected
    assert audit.history_check("sequencerflush", 10, 0).as_expected
    monkeypatch.setattr(history, "check", lambda h: [])
    blind = audit.history_check("sequencer", 30, 0)
    assert not blind.as_expected and "the replay reports" in blind.detail


def test_a_gap_is_reported_under_senderfifo_as_gapfreefifo_and_matched_so(monkeypatch):
    """The history check SenderFIFO reports the catalogue's GapFreeFIFO (a
    gap of a sender never killed) under its own name, and keeps the
    catalogue's name beside it: a documented finding's witness is matched on
    that (the loss after a coordinator crash covers GapFreeFIFO, not an
    out-of-order SenderFIFO)."""
    from groupcheck.conformance import findings
    from groupcheck.core.properties import History
    h = History.of({1: [(2, 1), (2, 3)], 2: [(2, 1), (2, 2), (2, 3)]}, {}, nodes=[1, 2])
    (v,) = [v for v in history.check(h) if v.check == "SenderFIFO"]
    j = v.to_json()
    assert (j["check"], j["property"]) == ("SenderFIFO", "GapFreeFIFO") and "skipping 2.2" in j["text"]
    asked = []

    def spy(proto, trace, prop, text):
        asked.append(prop)
        return None, None
    monkeypatch.setattr(findings, "classify", spy)
    findings.history_findings(protocols.get("sequencer"), None, [j, {"check": "TotalOrder", "text": "x"}])
    assert asked == ["GapFreeFIFO", "TotalOrder"]
