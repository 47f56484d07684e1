"""The audit's outputs: summary.json, junit.xml and report.md parse and agree;
report.html is self-contained; the verdict rules of the conformance stage."""

import json
import re
import xml.etree.ElementTree as ET

import pytest
from typer.testing import CliRunner

from groupcheck.cli.main import app
from groupcheck.conformance.audit import stages as audit
from groupcheck.conformance.replay import registry as protocols
from groupcheck.conformance.audit import report
from groupcheck.conformance.audit.report import Check
from groupcheck.model import manifest


# the tests of real_checks (two TLC runs and a graph comparison) on one xdist
# worker, so the fixture is built once
REAL = pytest.mark.xdist_group("audit-real-checks")


@pytest.fixture(scope="module")
def real_checks():
    e = manifest.select(["sequencer"], "Pair")[0]
    return [audit.tlc_check(e), audit.link_check(e)]


def _bad_conformance():
    events = [{"i": 0, "name": "Send", "nid": 1, "params": {}, "msg": {"type": "DATA", "sender": 1, "seqno": 1}},
              {"i": 1, "name": "RecvData", "nid": 2, "params": {"p": 1}, "msg": {"type": "DATA", "sender": 1, "seqno": 1}}]
    res = {"runs": 3, "events": 40, "verdicts": {"ok": 2, "nonconforming": 1},
           "bad_runs": [{"run_id": "r7", "verdict": "nonconforming", "reason": "event 1 RecvData: differs",
                         "first_bad_event": 1, "events": events}], "seconds": 0.5}
    return audit.conformance_check(protocols.get("sequencer"), res)


@REAL
def test_outputs_parse_and_agree(tmp_path, real_checks):
    checks = real_checks + [_bad_conformance()]
    paths = report.write_all(tmp_path, checks, {"coverage": {"sequencer": {
        "actions_reached": 6, "actions_total": 6, "action_share": 1.0,
        "states_reached": 120, "states_reachable": None, "state_share": None}}})
    s = json.loads(paths["summary.json"].read_text())
    by_id = {c["id"]: c for c in s["checks"]}
    assert list(by_id) == [c.id for c in checks]
    assert s["totals"] == {"checks": 3, "as_expected": 2, "unexpected": 1, "by_kind": {"conformance": 1, "link": 1, "tlc": 1},
                           "by_verdict": {"pass": 1, "finding": 1, "unexpected": 1}}
    assert [c["verdict"] for c in s["checks"]] == ["finding", "pass", "unexpected"]
    assert s["ok"] is False

    cases = {tc.get("name"): tc for tc in ET.parse(paths["junit.xml"]).getroot().iter("testcase")}
    assert set(cases) == set(by_id)
    for cid, tc in cases.items():
        assert (tc.find("failure") is None) == by_id[cid]["as_expected"]

    md = paths["report.md"].read_text()
    rows = re.findall(r"^\| `([^`]+)` \|.*\| (✅ as expected|🔶 expected violation|❌ UNEXPECTED) \|$", md, re.M)
    assert {cid: not v.startswith("❌") for cid, v in rows} == {k: v["as_expected"] for k, v in by_id.items()}
    assert md.splitlines()[2] == "**FAIL: 1 of 3 checks UNEXPECTED — 1 passed, 1 expected violations (known findings)**"
    assert "TotalOrder" in by_id["tlc/sequencer/Pair"]["explanation"]     # from the manifest and the docs
    n_diagrams = sum(1 for c in s["checks"] if c["mermaid"])
    assert md.count("```mermaid") == n_diagrams >= 2       # Pair's counterexample and the bad run
    assert "sequenceDiagram" in md and "2. RecvData(p=1) [the run stops conforming here]" in md

    html = paths["report.html"].read_text()
    assert "<script" not in html and "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    for cid in by_id:
        assert cid in html.replace("<wbr>", "")
    assert html.count("<svg") == n_diagrams + 1            # + the coverage chart


@REAL
def test_tlc_counterexample_becomes_a_diagram(real_checks):
    tlc = real_checks[0]
    assert tlc.as_expected and tlc.observed == "TotalOrder"
    assert tlc.mermaid.startswith("sequenceDiagram") and "RecvData" in tlc.mermaid
    assert "-)" in tlc.mermaid                              # at least one message arrow
    assert real_checks[1].observed == "graphs equal"


def test_conformance_verdict_rules():
    seq = protocols.get("sequencer")
    ok = audit.conformance_check(seq, {"runs": 2, "verdicts": {"ok": 1, "documented": 1},
                                       "bad_runs": [{"run_id": "a", "verdict": "documented",
                                                     "reason": "TotalOrder: 1 before 2",
                                                     "finding": "sequencer/coordinator-crash-order"}]})
    assert ok.as_expected                                   # a known finding, in its shape
    cut = audit.conformance_check(seq, {"runs": 2, "verdicts": {"ok": 1, "incomplete": 1},
                                        "bad_runs": [{"run_id": "c", "verdict": "incomplete",
                                                      "reason": "no end record: the run was interrupted"}]})
    assert not cut.as_expected                              # checked too little: a failure
    dup = audit.conformance_check(seq, {"runs": 2, "verdicts": {"ok": 1, "violation": 1},
                                        "bad_runs": [{"run_id": "b", "verdict": "violation",
                                                      "reason": "NoDuplicates: twice"}]})
    assert not dup.as_expected and "NoDuplicates" in dup.detail
    assert not _bad_conformance().as_expected
    none = audit.conformance_check(seq, {"runs": 0, "verdicts": {}, "bad_runs": []})
    assert not none.as_expected                             # no runs proves nothing


def test_cli_audit_exits_1_on_an_unexpected_check(tmp_path, monkeypatch):
    bad = Check(id="tlc/x/Y", kind="tlc", protocol="x", name="Y", expected="ok", observed="Inv",
                as_expected=False, seconds=0.1)
    monkeypatch.setattr(audit, "run", lambda *a, **k: ([bad], {}))
    r = CliRunner().invoke(app, ["audit", "--out", str(tmp_path), "--engine", "local"])
    assert r.exit_code == 1 and "UNEXPECTED tlc/x/Y" in r.output
    assert json.loads((tmp_path / "summary.json").read_text())["ok"] is False
    good = Check(id="tlc/x/Z", kind="tlc", protocol="x", name="Z", expected="ok", observed="ok",
                 as_expected=True, seconds=0.1)
    monkeypatch.setattr(audit, "run", lambda *a, **k: ([good], {}))
    assert CliRunner().invoke(app, ["audit", "--out", str(tmp_path), "--engine", "local"]).exit_code == 0


def test_default_audit_leaves_heavy_models_to_full(monkeypatch, tmp_path):
    """The tlc stage runs the light models by default, and of the heavy
    ones only the picks that get every shipped variant model-checked
    (audit.coverage_picks, tests/test_audit_coverage.py); it names the
    other heavy ones skipped; --full runs them too."""
    ran = []

    def fake(e, workers=1):
        ran.append(e.name)
        return audit.Check(id=f"tlc/{e.protocol}/{e.name}", kind="tlc", protocol=e.protocol, name=e.name,
                           expected=e.expected, observed=e.expected, as_expected=True, seconds=0.0)
    monkeypatch.setattr(audit, "tlc_check", fake)
    heavy = {e.name for e in manifest.load("raincore") if e.extra.get("heavy")}
    picks = {e.name for e in audit.coverage_picks(manifest.load("raincore"))[0]}
    assert heavy and picks < heavy
    checks, _ = audit.run(tmp_path, protocols_=["raincore"], stages=("tlc",))
    assert heavy & set(ran) == picks and set(ran) == {e.name for e in manifest.load("raincore")} - heavy | picks
    assert {c.name for c in checks if c.kind == "tlc" and c.skipped} == heavy - picks
    ran.clear()
    checks, _ = audit.run(tmp_path, protocols_=["raincore"], stages=("tlc",), full=True)
    assert heavy <= set(ran) and not any(c.skipped for c in checks)



@pytest.mark.parametrize("protocol,name", [("sequencerflush", "Pair"),
                                           pytest.param("sequencerflush", "LivePairFixed", marks=pytest.mark.slow)])
def test_one_tlc_run_serves_the_tlc_and_link_checks(monkeypatch, protocol, name):
    """tlc_and_link_checks runs TLC once (invariants and properties in, the
    graph dumped) and its two checks say what two separate runs say."""
    from groupcheck.model import link, manifest as mf
    e = mf.select([protocol], name)[0]
    assert e.expected == "ok" and e.compare
    alone = [audit.tlc_check(e), audit.link_check(e)]
    calls = []
    real = link.run_tlc

    def spy(*a, **k):
        calls.append((a[2], k.get("cfg_text"), tuple(k.get("extra_args") or ())))
        return real(*a, **k)
    monkeypatch.setattr(link, "run_tlc", spy)
    monkeypatch.setattr(mf, "run_tlc", lambda *a, **k: pytest.fail("a second TLC run"))
    both = audit.tlc_and_link_checks(e)
    # one run, on the model's own cfg (not the stripped text)
    assert [(c, t) for c, t, _ in calls] == [(e.cfg, None)]
    assert (calls[0][2] == ("-lncheck", "final")) == bool(e.parsed_cfg().properties)
    assert [c.id for c in both] == [c.id for c in alone]
    for got, c in zip(both, alone):
        assert (got.observed, got.as_expected) == (c.observed, c.as_expected) == (c.expected, True)
        assert got.figures["distinct_states"] == c.figures["distinct_states"] == e.distinct_states
    assert both[0].figures["graph_dumped_for_link"] is True


def test_audit_shares_the_run_only_for_ok_models_both_stages_take(monkeypatch, tmp_path):
    """run() sends a compared model expected ok and without PROPERTY to
    tlc_and_link_checks, every other model to its stage's own check, and
    keeps manifest order."""
    from groupcheck.model import manifest as mf
    seen = {"tlc": [], "link": [], "both": []}

    def fake(kind):
        def f(e, workers=1):
            seen[kind].append(e.name)
            kinds = ["tlc", "link"] if kind == "both" else [kind]
            out = [audit.Check(id=f"{k}/{e.protocol}/{e.name}", kind=k, protocol=e.protocol, name=e.name,
                               expected="x", observed="x", as_expected=True, seconds=0.0) for k in kinds]
            return out if kind == "both" else out[0]
        return f
    for kind, attr in (("tlc", "tlc_check"), ("link", "link_check"), ("both", "tlc_and_link_checks")):
        monkeypatch.setattr(audit, attr, fake(kind))
    checks, _ = audit.run(tmp_path, protocols_=["sequencerflush"], stages=("tlc", "link"))
    entries = mf.load("sequencerflush")
    picks = audit.coverage_picks(entries)[0]        # heavy, run for their variant's sake
    light = [e for e in entries if not e.extra.get("heavy") or e in picks]
    linked = [e for e in entries if e.compare and not e.extra.get("slow")]
    shared = {e.name for e in light if e in linked and e.expected == "ok" and not e.parsed_cfg().properties}
    assert shared and set(seen["both"]) == shared
    # a compared ok model with a PROPERTY keeps its two runs (sequencer's all have one)
    assert set(seen["tlc"]) == {e.name for e in light} - shared
    assert set(seen["link"]) == {e.name for e in linked} - shared
    ran = [c for c in checks if not c.skipped]
    assert [c.id for c in ran] == [f"tlc/sequencerflush/{e.name}" for e in light] + \
        [f"link/sequencerflush/{e.name}" for e in linked]


def test_the_pooled_stages_run_as_one_pool_each_kinds_costliest_first(monkeypatch, tmp_path):
    """TLC, spec ⇄ model, trace validation and the proofs run as one pool:
    the first checks started are the costliest of each kind (so each kind's
    pace is measured early), then the rest costliest first; the queue told
    to the progress is that order; the report keeps the stages' order
    (tlc and link in manifest order, then trace validation in sample order,
    then the proofs in matrix order) whatever order they finish in."""
    from groupcheck.model.proofs import registry as prove_matrix
    ran = []

    def check(kind, pid, name):
        ran.append(f"{kind}/{pid}")
        return audit.Check(id=f"{kind}/{pid}", kind=kind, protocol=pid.split("/")[0], name=name,
                           expected="x", observed="x", as_expected=True, seconds=0.0)
    monkeypatch.setattr(audit, "tlc_check", lambda e, w=1: check("tlc", f"{e.protocol}/{e.name}", e.name))
    monkeypatch.setattr(audit, "link_check", lambda e, w=1: check("link", f"{e.protocol}/{e.name}", e.name))
    monkeypatch.setattr(audit, "tlc_and_link_checks", lambda e, w=1: [
        check("tlc", f"{e.protocol}/{e.name}", e.name), check("link", f"{e.protocol}/{e.name}", e.name)])
    monkeypatch.setattr(audit, "tracevalidation_check",
                        lambda p, sd: (check("tracevalidation", f"{p}/{sd}", f"{p}-s{sd}"), None))
    monkeypatch.setattr(prove_matrix, "run_isolated", lambda encs, jobs: ((e, []) for e in encs))
    monkeypatch.setattr(audit, "prove_check", lambda enc, queries: check("prove", f"{enc.protocol}/{enc.variant}",
                                                                         enc.variant))
    calls = []
    stages = ("tlc", "link", "tracevalidation", "prove")
    checks, _ = audit.run(tmp_path, protocols_=["flush"], stages=stages, jobs=1,
                          progress=lambda *a, **k: calls.append((a, k)))
    plan = next(k["plan"] for _, k in calls if "plan" in k)
    [queue] = [k["queue"][0] for _, k in calls if "queue" in k]
    # the order the pool started them in is the queue's (one at a time; a
    # trace validation's key is its place in the sample)
    pl = audit.plan(["flush"], stages)
    place = {f"tracevalidation/flush/{sd}": f"tracevalidation/flush/#{i}" for i, (_, sd) in enumerate(pl.tv)}
    assert [k for job in queue for k in job] == [place.get(r, r) for r in ran]
    cost = audit.plan_costs(list(plan), 1)
    weight = [sum(cost[k] for k in job) for job in queue]
    kinds = [job[0].split("/")[0] for job in queue]
    n = len(set(kinds))
    assert n == 4 and len(set(kinds[:n])) == n                     # one of each kind first
    for kd in set(kinds):                                           # each the costliest of its kind
        assert weight[kinds.index(kd)] == max(w for w, k in zip(weight, kinds) if k == kd)
    assert weight[:n] == sorted(weight[:n], reverse=True)
    assert weight[n:] == sorted(weight[n:], reverse=True)            # then costliest first
    # the report's order: the stages', not the pool's
    ran_ids = [c.id for c in checks if not c.skipped]
    kinds_in_report = [i.split("/")[0] for i in ran_ids]
    assert kinds_in_report == sorted(kinds_in_report, key=["tlc", "link", "tracevalidation", "prove"].index)
    assert [i for i in ran_ids if i.startswith("tlc/")] == [f"tlc/flush/{e.name}" for e in pl.tlc_entries]
    assert [i for i in ran_ids if i.startswith("prove/")] == [f"prove/flush/{e.variant}" for e in pl.encs]
    assert [i for i in ran_ids if i.startswith("tracevalidation/")] == [
        f"tracevalidation/flush/{sd}" for _, sd in pl.tv]


def test_a_plan_unstratified_counts_the_same_checks():
    """``plan(stratify=False)`` (for counting) has the audit's plan's checks
    but for which runs TLC validates: as many, spread evenly."""
    a, b = audit.plan(["flush"]), audit.plan(["flush"], stratify=False)
    assert a.counts() == b.counts() and len(a.tv) == len(b.tv) == audit.TRACE_SAMPLE
    assert [i for i in a.ids(audit.STAGES) if not i.startswith("tracevalidation/")] == \
        [i for i in b.ids(audit.STAGES) if not i.startswith("tracevalidation/")]
