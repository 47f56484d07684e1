"""The audit says what it covered: per stage the checks run and skipped,
computed from the checks; every shipped variant either model-checked or
named with the reason; a banner that never says "all" when checks were
skipped; ``--require-all`` failing on a skip.  No TLC run here: the tlc and
link stages' checks are faked, the way tests/test_audit.py exercises run()."""

import json
import re

import pytest
from typer.testing import CliRunner

from groupcheck.cli.main import app
from groupcheck.conformance.audit import stages as audit
from groupcheck.conformance.audit import report
from groupcheck.conformance.audit.report import Check
from groupcheck.model import manifest


def _fake_stages(monkeypatch, ran=None):
    """tlc_check, link_check and tlc_and_link_checks replaced by instant
    checks that say what the manifest expects."""
    def one(kind, e):
        if ran is not None:
            ran.append((kind, e.protocol, e.name))
        return Check(id=f"{kind}/{e.protocol}/{e.name}", kind=kind, protocol=e.protocol, name=e.name,
                     expected=e.expected if kind == "tlc" else "graphs equal",
                     observed=e.expected if kind == "tlc" else "graphs equal", as_expected=True, seconds=0.0,
                     finding=kind == "tlc" and e.expected != "ok")
    monkeypatch.setattr(audit, "tlc_check", lambda e, workers=1: one("tlc", e))
    monkeypatch.setattr(audit, "link_check", lambda e, workers=1: one("link", e))
    monkeypatch.setattr(audit, "tlc_and_link_checks", lambda e, workers=1: [one("tlc", e), one("link", e)])


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    """The default audit's tlc and link stages over every protocol, faked."""
    mp = pytest.MonkeyPatch()
    ran: list = []
    _fake_stages(mp, ran)
    try:
        out = tmp_path_factory.mktemp("cov")
        checks, extra = audit.run(out, stages=("tlc", "link"))
        paths = report.write_all(out, checks, extra)
    finally:
        mp.undo()
    return checks, extra, paths, ran


def test_shipped_is_expected_ok_and_every_shipped_model_has_one_variant():
    entries = manifest.select(None, None)
    groups = manifest.shipped_variants(entries)
    grouped = [e for models in groups.values() for e in models]
    assert sorted((e.protocol, e.name) for e in grouped) == \
        sorted((e.protocol, e.name) for e in entries if e.expected == "ok")
    assert all(manifest.shipped(e) == (e.expected == "ok") for e in entries)
    # one label per variant: the label names it
    labels = {manifest.variant_label(models[0]) for models in groups.values()}
    assert len(labels) == len(groups)
    for key, models in groups.items():
        assert {manifest.variant_key(e) for e in models} == {key}
        assert {manifest.variant_label(e) for e in models} == {manifest.variant_label(models[0])}


def test_coverage_figures_are_the_counts_of_the_checks(default_run):
    checks, _, paths, _ = default_run
    s = json.loads(paths["summary.json"].read_text())
    cov = s["audit_coverage"]
    rows = s["checks"]
    assert cov["checked"] == sum(not c["skipped"] for c in rows) > 0
    assert cov["skipped"] == sum(c["skipped"] for c in rows) > 0
    assert cov["checked"] + cov["skipped"] == len(rows) == s["totals"]["checks"]
    for kind in {c["kind"] for c in rows}:
        assert cov["by_stage"][kind] == {"checked": sum(c["kind"] == kind and not c["skipped"] for c in rows),
                                         "skipped": sum(c["kind"] == kind and c["skipped"] for c in rows),
                                         "selected": True}
    assert cov["by_stage"]["conformance"] == {"checked": 0, "skipped": 0, "selected": False}
    assert cov["skipped_checks"] == [c["id"] for c in rows if c["skipped"]]


def test_every_shipped_variant_is_checked_or_named(default_run):
    """Each shipped variant of the manifests is in the coverage, TLC-checked
    in the default run or named as not model-checked with its reason; the
    one that stays out is over the budget, and a variant is added by its
    smallest shipped model."""
    checks, _, paths, ran = default_run
    cov = json.loads(paths["summary.json"].read_text())["audit_coverage"]
    entries = manifest.select(None, None)
    groups = manifest.shipped_variants(entries)
    by_label = {v["variant"]: v for v in cov["variants"]}
    assert set(by_label) == {manifest.variant_label(ms[0]) for ms in groups.values()}
    named = {v["variant"]: v["why"] for v in cov["not_model_checked"]}
    ran_tlc = {(p, m) for k, p, m in ran if k == "tlc"}
    for key, models in groups.items():
        label = manifest.variant_label(models[0])
        checked = [e.name for e in models if (e.protocol, e.name) in ran_tlc]
        assert by_label[label]["tlc_checked"] == checked
        assert (by_label[label]["tlc"] == "checked") == bool(checked) == (label not in named), label
        if checked and all(e.extra.get("heavy") for e in models):       # added by the coverage rule
            smallest = min(models, key=lambda e: e.distinct_states)
            assert checked == [smallest.name], label
            assert smallest.extra["tlc_seconds"] <= audit.PICK_MAX_SECONDS
    spent = sum(e.extra.get("tlc_seconds", 0) for e in entries
                if (e.protocol, e.name) in ran_tlc and e.extra.get("heavy"))
    assert 0 < spent <= audit.PICK_BUDGET_SECONDS
    for key, models in groups.items():
        label = manifest.variant_label(models[0])
        if label in named:          # its smallest model was weighed, and found over the limit or the budget
            smallest = min(models, key=lambda e: e.distinct_states)
            assert f"its smallest model, {smallest.name} (" in named[label], named[label]
            secs = smallest.extra.get("tlc_seconds")
            assert secs is None or secs > audit.PICK_MAX_SECONDS or spent + secs > audit.PICK_BUDGET_SECONDS
            assert re.search(r"tlc_seconds|limit|budget", named[label]), named[label]
    # the reason is on the skipped check too, and the lines name each variant left out
    lines = "\n".join(report.coverage_lines(checks, json.loads(paths["summary.json"].read_text())))
    for label in named:
        assert label in lines
    md = paths["report.md"].read_text()
    html = paths["report.html"].read_text()
    for label in named:
        assert label in md and label in html.replace("<wbr>", "")


def test_links_left_to_full_are_named(default_run):
    _, _, paths, ran = default_run
    cov = json.loads(paths["summary.json"].read_text())["audit_coverage"]
    ran_link = {(p, m) for k, p, m in ran if k == "link"}
    for v in cov["variants"]:
        compared_now = [m for m in v["compared"] if (v["protocol"], m) in ran_link]
        assert v["link_checked"] == compared_now
        named = v["variant"] in {n["variant"] for n in cov["not_graph_compared"]}
        assert named == (bool(v["compared"]) and not compared_now), v["variant"]


def test_full_checks_every_variant_and_skips_nothing(monkeypatch, tmp_path):
    _fake_stages(monkeypatch)
    checks, extra = audit.run(tmp_path, protocols_=["raincoreflush"], stages=("tlc", "link"), full=True)
    cov = report.coverage(checks, extra)
    assert cov["skipped"] == 0 and not cov["not_model_checked"] and not cov["not_graph_compared"]
    assert all(v["tlc"] == "checked" for v in cov["variants"])
    assert report.banner(checks).startswith(f"PASS: all {len(checks)} checks as expected")
    assert "Every shipped variant (" in "\n".join(report.coverage_lines(checks, extra))


def test_the_banner_states_the_skips(default_run):
    checks, extra, paths, _ = default_run
    n_skipped = sum(c.skipped for c in checks)
    text = report.banner(checks)
    assert "all" not in text.split("—")[0]
    assert text.startswith(f"PASS: {len(checks) - n_skipped} checks as expected, {n_skipped} skipped (")
    per = dict(re.findall(r"(\w+) (\d+)", text.split("skipped (")[1].split(")")[0]))
    assert {k: int(v) for k, v in per.items()} == \
        {k: sum(c.kind == k and c.skipped for c in checks) for k in {c.kind for c in checks if c.skipped}}
    assert paths["report.md"].read_text().splitlines()[2] == f"**{text}**"
    # a failing run names its skips too
    bad = [*checks, Check(id="tlc/x/Y", kind="tlc", protocol="x", name="Y", expected="ok", observed="Inv",
                          as_expected=False, seconds=0.1)]
    assert f"{n_skipped} skipped" in report.banner(bad) and report.banner(bad).startswith("FAIL: 1 of")


def _checks_with_a_skip():
    ran = Check(id="tlc/x/A", kind="tlc", protocol="x", name="A", expected="ok", observed="ok",
                as_expected=True, seconds=0.1)
    skip = Check(id="link/x/B", kind="link", protocol="x", name="B", expected="graphs equal", observed="skipped",
                 as_expected=True, seconds=0.0, skipped=True, explanation="marked slow")
    return [ran, skip]


def test_require_all_fails_on_a_skip(monkeypatch, tmp_path):
    """Without --require-all a skip passes; with it, exit 1 and one line
    naming the skipped checks (the audit run faked, then from its summary)."""
    monkeypatch.setattr(audit, "run", lambda *a, **k: (_checks_with_a_skip(), {}))
    plain = CliRunner().invoke(app, ["audit", "--out", str(tmp_path / "a"), "--engine", "local"])
    assert plain.exit_code == 0, plain.output
    assert "PASS: 1 checks as expected, 1 skipped (link 1)" in plain.output
    gated = CliRunner().invoke(app, ["audit", "--out", str(tmp_path / "b"), "--engine", "local", "--require-all"])
    assert gated.exit_code == 1, gated.output
    (line,) = [ln for ln in gated.output.splitlines() if "REQUIRE-ALL" in ln]
    assert "1 checks skipped" in line and "link/x/B" in line and "tlc/x/A" not in line
    # the same from the saved summary, without running anything
    monkeypatch.setattr(audit, "run", lambda *a, **k: pytest.fail("--from runs no audit"))
    summary = str(tmp_path / "a" / "summary.json")
    again = CliRunner().invoke(app, ["audit", "--from", summary, "--out", str(tmp_path / "c"), "--require-all"])
    assert again.exit_code == 1 and "REQUIRE-ALL FAILED" in again.output
    as_json = CliRunner().invoke(app, ["audit", "--from", summary, "--out", str(tmp_path / "d"), "--require-all",
                                       "--json"])
    assert as_json.exit_code == 1


def test_require_all_names_every_skipped_check_on_one_line(monkeypatch, tmp_path):
    many = _checks_with_a_skip()[:1] + [
        Check(id=f"tlc/some-protocol/AVeryLongModelName{k}", kind="tlc", protocol="some-protocol",
              name=f"AVeryLongModelName{k}", expected="ok", observed="skipped", as_expected=True, seconds=0.0,
              skipped=True, explanation="marked heavy") for k in range(40)]
    monkeypatch.setattr(audit, "run", lambda *a, **k: (many, {}))
    r = CliRunner().invoke(app, ["audit", "--out", str(tmp_path), "--engine", "local", "--require-all"])
    assert r.exit_code == 1
    (line,) = [ln for ln in r.output.splitlines() if "REQUIRE-ALL" in ln]
    assert all(c.id in line for c in many[1:]) and "40 checks skipped" in line


def test_require_all_passes_when_nothing_was_skipped(monkeypatch, tmp_path):
    monkeypatch.setattr(audit, "run", lambda *a, **k: (_checks_with_a_skip()[:1], {}))
    r = CliRunner().invoke(app, ["audit", "--out", str(tmp_path), "--engine", "local", "--require-all"])
    assert r.exit_code == 0 and "REQUIRE-ALL" not in r.output
    assert "PASS: all 1 checks as expected" in r.output


def test_the_coverage_is_recomputed_when_re_rendered(tmp_path):
    """``--from``: summary.json's audit_coverage is derived from its checks
    again, never carried over."""
    checks = _checks_with_a_skip()
    s = report.summary(checks)
    s["audit_coverage"] = {"checked": 99, "skipped": 0}          # a stale or edited figure
    again, extra = report.checks_from_summary(s)
    assert "audit_coverage" not in extra
    assert report.summary(again, extra)["audit_coverage"]["skipped"] == 1


def test_the_default_audit_model_checks_every_shipped_variant():
    """No shipped variant is left to --full: each has a model the default
    tlc stage runs (a light one, or the pick the coverage rule adds), so the
    coverage names none as not model-checked."""
    entries = manifest.select(None, None)
    picks, left_out = audit.coverage_picks(entries)
    assert not left_out, {manifest.variant_label(e): why for e, why in left_out.values()}
    for key, models in manifest.shipped_variants(entries).items():
        assert any(not e.extra.get("heavy") or e in picks for e in models), key


def test_every_variant_is_claimed_model_checked_only_when_every_one_was(monkeypatch, tmp_path):
    """A variant of a protocol the run left out (its TLC stage not run for
    it) keeps the claim "every shipped variant model-checked" out."""
    _fake_stages(monkeypatch)
    checks, extra = audit.run(tmp_path, protocols_=["raincoreflush"], stages=("tlc", "link"), full=True)
    assert "Every shipped variant (" in "\n".join(report.coverage_lines(checks, extra))
    other = {**extra["shipped_variants"][0], "protocol": "elsewhere", "variant": "elsewhere: left out"}
    extra = {**extra, "shipped_variants": [*extra["shipped_variants"], other]}
    assert report.coverage(checks, extra)["variants"][-1]["tlc"] == "stage not run"
    assert "Every shipped variant (" not in "\n".join(report.coverage_lines(checks, extra))
