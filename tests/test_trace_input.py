"""Trace input: every field a check reads is typed, SEQUENCER's messages
and every action's parameters are closed, and a line has a size limit;
``conform`` rejects a malformed file with one line naming the file, the
line and the field, exit 2, under every checker, before TLC starts."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, strategies as st
from typer.testing import CliRunner

from groupcheck.cli.main import app
from groupcheck.conformance.replay import registry as protocols
from groupcheck.core.trace import reader as traces
from groupcheck.core.trace.reader import MAX_LINE


@pytest.fixture(scope="module")
def run():
    proto = protocols.get("sequencer")
    recs, _ = proto.simulate(1, "", proto.default_options)
    return recs


def _first(recs, name):
    return next(k for k, r in enumerate(recs) if r.get("name") == name and r.get("msg"))


def _forge(recs, name, edit):
    out = json.loads(json.dumps(recs))
    k = _first(out, name)
    edit(out[k])
    return out, k + 1


FORGERIES = [
    ("RecvData", lambda r: r["msg"].update(seqno=True), "msg"),
    ("RecvData", lambda r: r["msg"].update(sender="2"), "msg"),
    ("RecvForward", lambda r: r["msg"].update(type="DATAX"), "msg"),
    ("Send", lambda r: r["msg"].update(colour="red"), "msg"),
    ("RecvData", lambda r: r["params"].update(extra=1), "params"),
    ("Send", lambda r: r.update(params={"p": 1}), "params"),
]


@pytest.mark.parametrize("checker", ["model", "tlc", "both"])
@pytest.mark.parametrize("name,edit,field", FORGERIES)
def test_a_malformed_sequencer_record_is_one_line_and_exit_2(tmp_path, run, checker, name, edit, field):
    recs, line = _forge(run, name, edit)
    p = tmp_path / "t.ndjson"
    p.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    res = CliRunner().invoke(app, ["conform", str(p), "--checker", checker, "--engine", "local"])
    out = res.stdout + res.stderr
    assert res.exit_code == 2, out
    assert f"t.ndjson:{line}" in out and field in out, out
    assert "Traceback" not in out and "tlc" not in res.stderr.lower().replace("--checker", ""), out


def test_a_line_over_the_limit_is_refused(tmp_path, run):
    recs = json.loads(json.dumps(run))
    recs[2]["params"]["p"] = "x" * (MAX_LINE + 1)
    p = tmp_path / "t.ndjson"
    p.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    res = CliRunner().invoke(app, ["conform", str(p)])
    out = res.stdout + res.stderr
    assert res.exit_code == 2 and "t.ndjson:3" in out and "a line of" in out, out


@pytest.mark.slow
def test_spark_rejects_each_malformed_file_with_the_local_engines_line(tmp_path, run):
    """The same forgeries in one folder: `conform --engine spark` names every
    file, line and field exactly as the local engine does, exit 2 both."""
    from cli_helpers import gc
    for i, (name, edit, _) in enumerate(FORGERIES):
        recs, _line = _forge(run, name, edit)
        (tmp_path / f"f{i}.ndjson").write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    lines = {}
    for engine in ("local", "spark"):
        r = gc("conform", str(tmp_path), "--engine", engine)
        assert r.returncode == 2, r.stdout + r.stderr
        lines[engine] = sorted(ln.strip() for ln in r.stdout.splitlines() if re.search(r"\.ndjson:\d+:", ln))
    assert len(lines["local"]) == len(FORGERIES) and lines["spark"] == lines["local"]
    for i, (_, _, field) in enumerate(FORGERIES):
        assert any(f"f{i}.ndjson:" in ln and field in ln for ln in lines["local"])


def _lines_one_by_one(path):
    """``lines_quarantined`` line by line, as the file's own iteration reads
    it: the reference the block reader is held to."""
    out = []
    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                out.append((n, None, f"cannot read: not UTF-8 ({e.reason} at byte {e.start} of the line)"))
                continue
            if len(text) > traces.MAX_LINE:
                out.append((n, None, f"a line of {len(text)} characters (at most {traces.MAX_LINE})"))
                continue
            out.append((n, text[:-1] if text.endswith("\n") else text, None))
    return out


# bytes a line may hold: ASCII, CR, UTF-8 of 2 to 4 bytes, and bytes that are not UTF-8 or cut one short
_BYTES = [b"a", b"{", b"\r", b" ", "\u00e9".encode(), "\u20ac".encode(), "\U0001f600".encode(), b"\xff", b"\xc3",
          b"\xe2\x82", b"\xed\xa0\x80", b"\x80"]


@given(st.lists(st.lists(st.sampled_from(_BYTES), max_size=8).map(b"".join), max_size=12),
       st.booleans(), st.integers(1, 24), st.integers(2, 12))
def test_the_block_reader_reads_and_refuses_each_line_as_one_by_one(tmp_path_factory, lines, ends, block, limit):
    # any file of such lines, with or without a last \n, blocks and the line limit made small
    path = tmp_path_factory.mktemp("lines") / "t.ndjson"
    path.write_bytes(b"\n".join(lines) + (b"\n" if ends and lines else b""))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(traces, "BLOCK", block)
        mp.setattr(traces, "MAX_LINE", limit)
        assert list(traces.lines_quarantined(path)) == _lines_one_by_one(path)
