"""The conformance pipeline (conformance/pipeline/stages.py): row accounting on
ingest, the local and Spark engines agreeing run for run, a seeded
non-conforming run found by both, and the properties judged apart from the
replay (the catalogue, core/properties.py) agreeing with the replay,
with the model's property functions and across engines.

One Spark session serves the whole module (``spark`` fixture); the Spark
tests carry ``xdist_group`` so ``-n 2 --dist loadgroup`` keeps them on one
worker.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from groupcheck.conformance.pipeline import dataset as D, stages as P
from groupcheck.conformance.replay import registry
from groupcheck.conformance.replay.registry import get
from groupcheck.conformance.replay.conform import conform_file
from groupcheck.core.trace.reader import trace_files
from groupcheck.core.trace import writer as tracefile
from groupcheck.core.trace import format as trace_format

OPTS = {"nodes": 3, "messages": 2}
FAULTS = get("sequencer").campaign_faults       # loss, dup, reorder, a coordinator crash
SPARK = pytest.mark.xdist_group("spark")

# ---------------------------------------------------------------- corpus helpers


def _records(seed: int, opts=OPTS, faults=FAULTS) -> list[dict]:
    return get("sequencer").simulate(seed, faults, opts)[0]


def _swap_deliveries(records: list[dict]) -> tuple[list[dict], int]:
    """Swap the first two RecvData events of one member that deliver
    different messages; renumber.  Returns the records and the index of the
    first swapped event (where the replay must stop)."""
    evs = [r for r in records[1:] if r["kind"] == "event"]
    for a in range(len(evs)):
        if evs[a]["name"] != "RecvData":
            continue
        for b in range(a + 1, len(evs)):
            if evs[b]["nid"] == evs[a]["nid"] and evs[b]["name"] == "RecvData" and evs[b]["msg"] != evs[a]["msg"]:
                evs = evs[:a] + [evs[b]] + evs[a + 1:b] + [evs[a]] + evs[b + 1:]
                return [records[0]] + evs, a
            if evs[b]["nid"] == evs[a]["nid"]:
                break
    raise AssertionError("no two deliveries to swap")


def _write_ndjson_corpus(d: Path) -> dict:
    """Good traces, one with swapped deliveries, and files with bad lines."""
    d.mkdir(parents=True, exist_ok=True)
    for s in range(6):
        tracefile.write(d / f"good-{s}.ndjson", _records(100 + s))
    swapped, at = _swap_deliveries(_records(7, faults="loss=0.05"))
    tracefile.write(d / "swapped.ndjson", swapped)
    bad = _records(8)
    lines = trace_format.dumps(bad).split("\n")[:-1]
    lines[3] = lines[3][:-5]                                  # truncated JSON
    ev = json.loads(lines[5]); ev["name"] = "Teleport"        # not a SEQUENCER action
    lines[5] = json.dumps(ev)
    ev = json.loads(lines[7])                                 # NaN is not JSON
    lines[7] = json.dumps(ev).replace(f'"clock": {ev["clock"]}', '"clock": NaN')
    (d / "bad-lines.ndjson").write_text("\n".join(lines) + "\n")
    (d / "bad-header.ndjson").write_text('{"kind": "header"}\n' + "\n".join(lines[1:4]) + "\n")
    (d / "empty.ndjson").write_text("")
    return {"swapped_at": at, "bad_lines_in": len(lines), "bad_header_in": 4}


# ---------------------------------------------------------------- local engine (no Spark)


def test_ingest_accounting_local(tmp_path):
    info = _write_ndjson_corpus(tmp_path / "in")
    s = P.ingest([tmp_path / "in"], tmp_path / "ds", engine="local")
    files = trace_files([tmp_path / "in"])
    lines = sum(max(1, len(f.read_text().splitlines())) for f in files)
    assert s["rows_in"] == lines == s["rows_accepted"] + s["rows_rejected"]
    rej = D.read_rejected(tmp_path / "ds")
    assert len(rej) == s["rows_rejected"]
    by_file = {}
    for r in rej:
        by_file.setdefault(Path(r["file"]).name, []).append(r)
    assert [r["line"] for r in by_file["bad-lines.ndjson"]] == [4, 6, 8]
    assert "invalid JSON" in by_file["bad-lines.ndjson"][0]["reason"]
    assert "Teleport" in by_file["bad-lines.ndjson"][1]["reason"]
    assert by_file["bad-lines.ndjson"][2]["reason"] == "clock: NaN is not a JSON number"
    assert len(by_file["bad-header.ndjson"]) == info["bad_header_in"]      # header bad: every row quarantined
    assert by_file["empty.ndjson"][0]["reason"] == "empty trace (no header)"
    assert set(by_file) == {"bad-lines.ndjson", "bad-header.ndjson", "empty.ndjson"}
    runs = {Path(r["source"]).name: r for r in D.read_runs(tmp_path / "ds")}
    assert runs["bad-lines.ndjson"]["events"] == info["bad_lines_in"] - 1 - 3 - 1     # header, 3 bad, end
    res = P.check(tmp_path / "ds", engine="local", coverage=False)
    v = {Path(x["file"]).name: x for x in res["verdicts"]}
    assert v["bad-lines.ndjson"]["verdict"] == "rejected"
    assert v["bad-lines.ndjson"]["reason"].endswith(":4: " + by_file["bad-lines.ndjson"][0]["reason"])
    assert v["swapped.ndjson"]["verdict"] == "nonconforming"
    assert v["swapped.ndjson"]["first_bad_event"] == info["swapped_at"]


def test_local_pipeline_matches_conform_file(tmp_path):
    """The local engine's verdicts equal ``groupcheck conform``'s, file by file."""
    _write_ndjson_corpus(tmp_path / "in")
    rows = P.conform_rows([tmp_path / "in"], engine="local", work_dir=tmp_path)
    expected = [conform_file(f).to_json() for f in trace_files([tmp_path / "in"])]
    assert rows == expected
    assert {r["verdict"] for r in rows} >= {"ok", "nonconforming", "rejected"}


def test_generate_layout_and_coverage_local(tmp_path):
    s = P.generate("sequencer", 6, 0, "loss=0.1,crash=1@20", tmp_path / "ds", engine="local",
                   options={"nodes": 2, "messages": 1})
    assert s["rows_in"] == s["rows_accepted"] == s["events"] + 2 * 6 and s["rows_rejected"] == 0   # header, end
    assert (tmp_path / "ds" / "protocol=sequencer").is_dir()
    res = P.check(tmp_path / "ds", engine="local")
    assert res["runs"] == 6 and res["disagreements"] == 0
    cov = res["coverage"]["sequencer"]
    assert set(cov["actions_seen"]) <= set(cov["actions"]) and "Send" in cov["actions_seen"]
    (st,) = cov["states"]
    assert st["constants"] == {"N": 2, "MaxSeq": 1, "MaxCrashes": 1}
    # N=2, one multicast each, one crash: the explorer finishes, so the share is known
    assert st["reachable"] and 0 < st["visited"] <= st["reachable"] and st["outside_reachable"] == 0


def test_refuses_to_overwrite_a_foreign_folder(tmp_path):
    (tmp_path / "precious.txt").write_text("keep me")
    with pytest.raises(D.PipelineError):
        P.generate("sequencer", 1, 0, "", tmp_path, engine="local")
    assert (tmp_path / "precious.txt").read_text() == "keep me"


# ---------------------------------------------------------------- Spark


@pytest.fixture(scope="module")
def spark():
    from groupcheck.conformance.pipeline.spark import session
    return session("local[2]")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("pipeline")
    info = _write_ndjson_corpus(d / "in")
    return d, info


def _comparable(rows):
    return [{k: v for k, v in r.items() if k != "properties_by"} for r in rows]


@pytest.mark.slow
@SPARK
def test_engines_agree_on_generated_runs(spark, tmp_path):
    """Generate on Spark and locally: same rows; check both datasets with
    both engines: identical verdict rows, DataFrame properties == replay."""
    a = P.generate("sequencer", 24, 0, FAULTS, tmp_path / "spark", engine="spark", options=OPTS, spark=spark)
    b = P.generate("sequencer", 24, 0, FAULTS, tmp_path / "local", engine="local", options=OPTS)
    assert {k: a[k] for k in ("runs", "events", "rows_in")} == {k: b[k] for k in ("runs", "events", "rows_in")}
    rs = P.check(tmp_path / "local", engine="spark", spark=spark, coverage=False)
    rl = P.check(tmp_path / "spark", engine="local", coverage=False)
    assert _comparable(rs["verdicts"]) == _comparable(rl["verdicts"])
    assert rs["disagreements"] == 0 and all(v["agree"] for v in rs["verdicts"])
    assert {v["properties_by"] for v in rs["verdicts"]} == {"catalogue"}
    # the coordinator crash breaks TotalOrder (or leaves a gap) in some runs: both sides saw it
    viol = [v for v in rs["verdicts"] if v["verdict"] in ("violation", "documented")]
    assert viol and all(v["replay_verdict"] == v["verdict"]
                        and v["properties_failed"][0] in ("TotalOrder", "GapFreeFIFO", "EventualDelivery")
                        for v in viol)
    # loss 2 (a hole in a live sender's sequence) is among them, seen by the
    # catalogue as by the replay
    assert any("GapFreeFIFO" in v["properties_failed"] for v in rs["verdicts"])


@pytest.mark.slow
@SPARK
def test_properties_judged_apart_on_spark_equal_the_local_check(spark, tmp_path, monkeypatch):
    """Every run long enough to have its catalogue properties judged by a
    task of their own (SPLIT_EVENTS lowered to 1): the Spark verdict rows,
    merged in the driver, are the local engine's, violations included."""
    P.generate("sequencer", 24, 0, FAULTS, tmp_path / "ds", engine="local", options=OPTS)
    rl = P.check(tmp_path / "ds", engine="local", coverage=False, write=False)
    monkeypatch.setattr(P, "SPLIT_EVENTS", 1)
    rs = P.check(tmp_path / "ds", engine="spark", spark=spark, coverage=False, write=False)
    assert rs["verdicts"] == rl["verdicts"]
    assert any(v["properties_failed"] for v in rs["verdicts"]) and all(v["agree"] for v in rs["verdicts"])


@SPARK
def test_spark_ingest_accounting_and_conform_engines(spark, corpus, tmp_path):
    d, info = corpus
    s = P.ingest([d / "in"], tmp_path / "ds", engine="spark", spark=spark)
    loc = P.ingest([d / "in"], tmp_path / "ds-local", engine="local")
    for k in ("rows_in", "rows_accepted", "rows_rejected", "runs", "runs_rejected", "events"):
        assert s[k] == loc[k], k
    assert s["rows_in"] == s["rows_accepted"] + s["rows_rejected"] and s["rows_rejected"] > 0
    key = lambda r: (r["file"], r["line"])       # noqa: E731
    assert sorted(D.read_rejected(tmp_path / "ds"), key=key) == sorted(D.read_rejected(tmp_path / "ds-local"), key=key)
    # groupcheck conform --engine spark == --engine local, file for file
    rows = P.conform_rows([d / "in"], engine="spark", spark=spark, work_dir=tmp_path)
    expected = [conform_file(f).to_json() for f in trace_files([d / "in"])]
    assert rows == expected
    swapped = [r for r in rows if r["file"].endswith("swapped.ndjson")][0]
    assert swapped["verdict"] == "nonconforming" and swapped["first_bad_event"] == info["swapped_at"]


@pytest.mark.slow
@SPARK
def test_spark_check_from_files_equals_the_shuffled_check_and_local(spark, corpus, tmp_path, monkeypatch):
    """Datasets written by Spark (generate, and ingest with rejected rows
    and an empty file): the check that reads each task's runs from the event
    files gives the verdict rows of the check that shuffles and sorts, and
    of the local engine; a dataset of the older layout (its run rows do not
    say where their events are) is checked the shuffled way, with the same rows."""
    d, _ = corpus
    P.generate("sequencer", 24, 0, FAULTS, tmp_path / "gen", engine="spark", options=OPTS, spark=spark)
    P.ingest([d / "in"], tmp_path / "ing", engine="spark", spark=spark)
    shuffled = []
    real = P._check_spark_shuffled
    monkeypatch.setattr(P, "_check_spark_shuffled", lambda *a: shuffled.append(a[1]) or real(*a))
    for ds in (tmp_path / "gen", tmp_path / "ing"):
        assert len({r["part"] for r in D.read_runs(ds) if r["part"]}) > 1      # a file per task
        rl = P.check(ds, engine="local", coverage=True, write=False)
        rf = P.check(ds, engine="spark", spark=spark, coverage=True, write=False)
        assert shuffled == []
        by_key = {(r["source"], r["run_id"]): r for r in D.read_runs(ds)}
        rows = lambda res: {k: {c: v[c] for c in D.VERDICT_COLUMNS} for k, v in res.items()}   # noqa: E731
        assert rows(P._check_spark(spark, ds, by_key, True, files=False)) == \
            rows(P._check_spark(spark, ds, by_key, True, files=True))
        assert shuffled == [ds]
        shuffled.clear()
        assert rf["verdicts"] == rl["verdicts"] and rf["coverage"] == rl["coverage"]
    assert {v["verdict"] for v in rf["verdicts"]} >= {"ok", "rejected", "nonconforming"}
    # the older layout: no part/part_row in _runs, layout /1
    import pyarrow.parquet as pq
    old = tmp_path / "ing"
    t = pq.read_table(old / "_runs")
    pq.write_table(t.drop_columns(["part", "part_row"]), old / "_runs" / "part-00000.parquet")
    meta = json.loads((old / "_pipeline.json").read_text())
    (old / "_pipeline.json").write_text(json.dumps({**meta, "layout": "groupcheck-pipeline/1"}))
    assert P.check(old, engine="spark", spark=spark, coverage=True, write=False)["verdicts"] == rl["verdicts"]
    assert shuffled == [old]


def _synthetic_runs(rng: random.Random, n_runs: int):
    """Runs as each member's delivery list (with duplicates, gaps and
    inversions), sent counts and kills, to compare the catalogue with the
    model's property functions well beyond what a simulation shows."""
    for _ in range(n_runs):
        n = rng.choice((2, 3))
        msgs = [(x, q) for x in range(1, n + 1) for q in (0, 1, 2, 3)]
        delivered = {}
        for m in range(1, n + 1):
            base = rng.sample(msgs, rng.randint(0, 5))
            if base and rng.random() < 0.3:
                base.insert(rng.randrange(len(base) + 1), rng.choice(base))
            delivered[m] = tuple(base)
        crashed = frozenset({rng.randint(1, n)}) if rng.random() < 0.3 else frozenset()
        yield delivered, {m: rng.randint(0, 3) for m in delivered}, crashed


def test_catalogue_equals_the_models_properties():
    """The catalogue's SEQUENCER properties on delivery histories against
    Sequencer.tla's (model/sequencer.py) and EventualDelivery stated here:
    the same verdicts (the order properties judge first deliveries, so with
    a repeat they agree under NoDuplicates), and each witness shows what it
    claims."""
    from types import SimpleNamespace
    from groupcheck.core import properties as props
    from groupcheck.model import sequencer as seqmodel
    seen = set()
    for delivered, sent, crashed in _synthetic_runs(random.Random(7), 400):
        h = props.History.of(delivered, sent, crashed, quiescent=True)
        s = SimpleNamespace(delivered=delivered, sent=sent, crashed=crashed)
        dup = not seqmodel.NoDuplicates(s)
        for name in registry.judged("sequencer"):
            v = props.CATALOGUE[name].judge(h)
            if name == "EventualDelivery":
                live = [m for m in delivered if m not in crashed]
                model_ok = all((m, q) in delivered[r] for m in live for q in range(1, sent[m] + 1) for r in live)
            else:
                model_ok = getattr(seqmodel, name)(s)
            if name in ("NoDuplicates", "Integrity", "EventualDelivery") or not dup:
                assert (v is None) == model_ok, (name, delivered, sent, crashed)
            else:
                assert v is None or not model_ok, (name, delivered, sent, crashed)
            if v is None:
                continue
            seen.add(name)
            assert v.property == name and v.members and v.events
            for e in v.events:      # each witnessing event is in its member's history where it says
                if e.get("what", "deliver") == "deliver" and e["index"] is not None:
                    assert delivered[e["member"]][e["index"] - 1] == tuple(e["msg"])
            if name == "TotalOrder":
                (a, b), (x, y) = v.members, v.messages
                first = {m: [d for k, d in enumerate(delivered[m]) if d not in delivered[m][:k]] for m in (a, b)}
                assert first[a].index(x) < first[a].index(y) and first[b].index(y) < first[b].index(x)
    assert seen == set(registry.judged("sequencer"))       # the sample exercises every property


def _mixed_corpus(d: Path) -> dict:
    """Traces of three protocols in one folder: SEQUENCER's campaign (its
    findings among them), FLUSH as written and STABLE."""
    d.mkdir(parents=True, exist_ok=True)
    runs = {}
    for name, seeds in (("sequencer", range(12)), ("flush", range(4)), ("stable", range(3))):
        proto = get(name)
        for seed in seeds:
            recs = proto.simulate(seed, proto.campaign_faults, proto.default_options)[0]
            runs[str(tracefile.write(d / f"{name}-{seed}.ndjson", recs))] = recs
    return runs


@pytest.mark.slow
@SPARK
def test_engines_and_catalogue_agree_on_a_mixed_corpus(spark, tmp_path):
    """One dataset of SEQUENCER, FLUSH and STABLE traces checked by the
    local and the Spark engine: the same verdict rows; SEQUENCER's and
    FLUSH's runs judged by the catalogue (the properties their replays
    judge, on the history projected from the trace) with the replay's
    first property, and the history checker flags the same order
    properties on them; STABLE's judged by its replay alone."""
    from groupcheck.conformance import history
    from groupcheck.core.trace import history as history_format
    from groupcheck.core import properties as props
    runs = _mixed_corpus(tmp_path / "in")
    P.ingest([tmp_path / "in"], tmp_path / "ds", engine="local")
    rl = P.check(tmp_path / "ds", engine="local", coverage=False)
    rs = P.check(tmp_path / "ds", engine="spark", spark=spark, coverage=False)
    assert rl["verdicts"] == rs["verdicts"] and rl["disagreements"] == 0
    assert {v["protocol"] for v in rl["verdicts"]} == {"sequencer", "flush", "stable"}
    flagged = 0
    for v in rl["verdicts"]:
        if v["protocol"] == "stable":
            assert v["properties_by"] is None
            continue
        recs = runs[v["file"]]
        h = history_format.from_records(history.from_trace(recs))
        h.quiescent = recs[-1].get("quiescent") is True
        names = [n for n in registry.judged(v["protocol"]) if h.quiescent or not props.CATALOGUE[n].end_of_run]
        found = props.judge(h, names)
        assert v["properties_by"] == "catalogue" and v["properties_failed"] == [x.property for x in found]
        assert v["agree"] and (v["verdict"] in ("violation", "documented")) == bool(found)
        if found:
            flagged += 1
            assert v["reason"].split(":", 1)[0] == found[0].property
        checks = {x.check: x for x in history.check(h)}
        for x in found:
            if x.property in ("TotalOrder", "NoDuplicates", "Integrity"):
                assert checks[x.property].members == x.members and checks[x.property].messages == x.messages
    assert flagged > 0


# ---------------------------------------------------------------- the catalogue on every protocol it can judge

# Violating runs: the seed as written (FLUSH without digest reconciliation:
# VirtualSynchrony), SEQUENCER over FLUSH without resent_first (a gap in a live
# sender's FIFO); seeds found by drawing.  A run cut short whose end record
# still says quiescent (settled, over the ring) misses deliveries: EventualDelivery.
_VIOLATING = (("flush", {"reconcile": False}, (502, 504, 511)),
              ("sequencerflush", {"resent_first": False}, (0, 20)))
_DRAWN = (("flush", range(8)), ("sequencerflush", range(6)), ("raincoreflush", range(8)),
          ("raincoresequencerflush", range(8)))
_CUT = (("sequencerflush", 0), ("raincoresequencerflush", 4))


def _cut(records: list[dict], share: float = 0.5) -> list[dict]:
    """The run's first ``share`` of events, then its end record as it was."""
    evs = [r for r in records[1:] if r["kind"] == "event"]
    return [records[0]] + evs[:int(len(evs) * share)] + [r for r in records[1:] if r["kind"] == "end"]


def _drawn(name: str, seed: int) -> list[dict]:
    """One run of ``name`` with its size and faults drawn from ``seed`` (the audit's)."""
    proto = get(name)
    faults, opts = proto.draw(seed)
    return proto.simulate(seed, faults, {**proto.default_options, **opts})[0]


def _judged_corpus(d: Path) -> dict:
    """Traces of the protocols whose replays judge catalogue properties
    besides SEQUENCER: drawn runs (crashes, leaves, joiners, the lossy
    ring), violating runs and runs cut short.  Returns {file: records}."""
    d.mkdir(parents=True, exist_ok=True)
    runs = {}

    def put(tag, recs):
        runs[str(tracefile.write(d / f"{tag}.ndjson", recs))] = recs
    for name, seeds in _DRAWN:
        for seed in seeds:
            put(f"{name}-drawn-{seed}", _drawn(name, seed))
    for name, opts, seeds in _VIOLATING:
        proto = get(name)
        for seed in seeds:
            put(f"{name}-flawed-{seed}", proto.simulate(seed, proto.campaign_faults, {**proto.default_options, **opts})[0])
    for name, seed in _CUT:
        put(f"{name}-cut-{seed}", _cut(_drawn(name, seed)))
    return runs


def _catalogue_of(recs: list[dict]) -> list:
    """The catalogue's judgement of a run, computed here from its records
    as a reader of the history would: the history projected from the trace,
    the end judged where the protocol's replay judges it."""
    from groupcheck.conformance import history
    from groupcheck.core.trace import history as history_format
    from groupcheck.core import properties as props
    protocol = recs[0]["protocol"]
    h = history_format.from_records(history.from_trace(recs))
    h.quiescent = recs[-1].get(get(protocol).run_end) is True
    return props.judge(h, [n for n in registry.judged(protocol) if h.quiescent or not props.CATALOGUE[n].end_of_run])


def _assert_judged_alike(verdicts: list[dict], runs: dict) -> None:
    """Every run judged by the catalogue agrees with its replay, and a
    violation's witness (its members, messages, views) is the replay's."""
    protocols = set()
    for v in verdicts:
        assert v["stage"] == "replay" and v["replay_verdict"] in ("ok", "violation"), v
        found = _catalogue_of(runs[v["file"]])
        assert v["properties_by"] == "catalogue" and v["properties_failed"] == [x.property for x in found], v
        assert v["agree"] is True and v["verdict"] == v["replay_verdict"], v
        if found:
            protocols.add(v["protocol"])
            assert v["reason"].startswith(f"{found[0].property}: {found[0].reason}"), (v["reason"], str(found[0]))
            assert found[0].members and all(f"{m}" in v["reason"] for m in found[0].members)
    # a violation of each protocol that has conforming violating runs (no
    # conforming FLUSH-over-the-ring run breaks VirtualSynchrony)
    assert protocols == {"flush", "sequencerflush", "raincoresequencerflush"}, protocols


# the default tests of judged_corpus (runs of four protocols simulated and
# ingested) on one xdist worker, so the corpus is made once
JUDGED = pytest.mark.xdist_group("pipeline-judged-corpus")


@pytest.fixture(scope="module")
def judged_corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("judged")
    runs = _judged_corpus(d / "in")
    P.ingest([d / "in"], d / "ds", engine="local")
    return d / "ds", runs


@JUDGED
def test_every_judging_protocol_agrees_with_its_replay_local(judged_corpus):
    """FLUSH, SEQUENCER over FLUSH and both over the Raincore ring: the
    catalogue's verdict on every run is its replay's, violations included,
    with the same witness (the local engine)."""
    ds, runs = judged_corpus
    res = P.check(ds, engine="local", coverage=False, write=False)
    assert res["disagreements"] == 0 and res["runs"] == len(runs)
    assert set(res["property_queries"]) >= {"flush", "sequencerflush", "raincoreflush", "raincoresequencerflush"}
    _assert_judged_alike(res["verdicts"], runs)
    reasons = {v["reason"].split(":")[0] for v in res["verdicts"] if v["verdict"] == "violation"}
    assert reasons == {"VirtualSynchrony", "GapFreeFIFO", "EventualDelivery"}


def _hide_deliveries(records: list[dict], member: int) -> list[dict]:
    """The run with ``member``'s application deliveries left out of its
    records, the header declaring them unlogged (``observed``): the replay
    takes them from the model, the history sees none."""
    import copy
    from groupcheck.core.trace import layers as trace_layers
    from groupcheck.impl import protocols as impl_protocols
    out = copy.deepcopy(records)
    protocol = out[0]["protocol"]
    app = impl_protocols.get(protocol).history.app_layer
    for r in out[1:]:
        st = r.get("state")
        if r["kind"] == "event" and r["nid"] == member and st and "delivered" in st and (
                app is None or trace_layers.layer_of(protocol, r["name"], r.get("params") or {}) == app):
            del st["delivered"]
    hidden = "delivered" if app is None else f"{app}.delivered"
    out[0]["observed"] = [f for f in get(protocol).binding.FIELDS if f != hidden]
    return out


@pytest.mark.parametrize("name,seed,member", [("flush", 2, 1), ("raincoreflush", 1, 1), ("sequencerflush", 2, 1),
                                              ("raincoresequencerflush", 0, 1)])
def test_a_run_whose_history_is_not_what_the_replay_judged_is_flagged(tmp_path, name, seed, member):
    """A member's deliveries declared unlogged: the replay judges the
    model's deliveries (the run conforms, nothing fails), the history shows
    the member delivering nothing (a view left with less than the others
    delivered in it, or messages never delivered): the two disagree, the
    row says so and the run is a violation."""
    recs = _hide_deliveries(_drawn(name, seed), member)
    tracefile.write(tmp_path / "in" / "t.ndjson", recs)
    P.ingest([tmp_path / "in"], tmp_path / "ds", engine="local")
    res = P.check(tmp_path / "ds", engine="local", coverage=False, write=False)
    (v,) = res["verdicts"]
    found = _catalogue_of(recs)
    assert v["replay_verdict"] == "ok" and found and v["properties_failed"] == [x.property for x in found]
    assert v["agree"] is False and res["disagreements"] == 1 and v["verdict"] == "violation"
    assert v["reason"] == f"{found[0]} (found by the property check, not by the replay)"
    assert member in found[0].members


def test_a_replay_violation_no_history_shows_is_not_compared(tmp_path):
    """A FLUSH run cut short that says it ended quiescent: its replay finds
    a flush that never ended (FlushEnds, on the phase and flushInit of the
    model's members), which no history shows; the catalogue's verdict on
    VirtualSynchrony is kept, nothing is compared (``agree`` None), the
    replay's violation stands and is no disagreement."""
    recs = _cut(_drawn("flush", 2))
    tracefile.write(tmp_path / "in" / "t.ndjson", recs)
    P.ingest([tmp_path / "in"], tmp_path / "ds", engine="local")
    res = P.check(tmp_path / "ds", engine="local", coverage=False, write=False)
    (v,) = res["verdicts"]
    assert v["replay_verdict"] == v["verdict"] == "violation" and v["reason"].startswith("FlushEnds: ")
    assert v["properties_by"] == "catalogue" and v["properties_failed"] == [x.property for x in _catalogue_of(recs)]
    assert v["agree"] is None and res["disagreements"] == 0


@JUDGED
def test_the_end_of_a_ring_run_is_judged_when_it_settled(judged_corpus):
    """Over the ring the replay judges EventualDelivery at a settled end
    (the ring never quiesces): so does the catalogue, and a run whose end
    record does not say settled is judged on safety alone by both."""
    ds, runs = judged_corpus
    recs = next(r for f, r in runs.items() if "raincoresequencerflush-cut" in f)
    assert recs[-1]["settled"] is True and recs[-1]["quiescent"] is False
    assert [x.property for x in _catalogue_of(recs)] == ["EventualDelivery"]
    unsettled = recs[:-1] + [{**recs[-1], "settled": False}]
    assert _catalogue_of(unsettled) == []
    run = {"protocol": recs[0]["protocol"], "end": json.dumps(recs[-1]), "header": json.dumps(recs[0])}
    assert D._ended(run) and not D._ended({**run, "end": json.dumps(unsettled[-1])})


@pytest.mark.slow
@SPARK
def test_every_judging_protocol_agrees_with_its_replay_on_spark(spark, judged_corpus, monkeypatch):
    """The same corpus on Spark: the local engine's verdict rows; and again
    with every run's properties judged by a task of its own (SPLIT_EVENTS
    lowered to one event)."""
    ds, runs = judged_corpus
    rl = P.check(ds, engine="local", coverage=False, write=False)
    rs = P.check(ds, engine="spark", spark=spark, coverage=False, write=False)
    assert rs["verdicts"] == rl["verdicts"]
    _assert_judged_alike(rs["verdicts"], runs)
    monkeypatch.setattr(P, "SPLIT_EVENTS", 1)
    apart = P.check(ds, engine="spark", spark=spark, coverage=False, write=False)
    assert apart["verdicts"] == rl["verdicts"]


@JUDGED
def test_split_judgement_of_every_judging_protocol_in_process(judged_corpus):
    """The Spark check's task bodies run here, every run's properties
    judged apart (``_judge_slices``) and merged: the local engine's rows."""
    ds, _ = judged_corpus
    local = {(v["file"], v["run_id"]): v for v in P.check(ds, engine="local", coverage=False, write=False)["verdicts"]}
    by_key = {(r["source"], r["run_id"]): r for r in D.read_runs(ds)}
    apart = frozenset(by_key)
    got = {(v["file"], v["run_id"]): v for v in P._replay_slices(str(ds), False, apart, P._slices(by_key, 3))}
    found = dict(P._judge_slices(str(ds), [P._run_slice(by_key[k]) for k in sorted(apart)]))
    assert set(found) == apart and all(isinstance(f, list) for f in found.values())
    got = {k: D.merge_judged(v, found[k]) for k, v in got.items()}
    assert {k: {c: v[c] for c in D.VERDICT_COLUMNS} for k, v in got.items()} == local


def test_traces_command_line_local(tmp_path):
    """``groupcheck traces generate|ingest|check`` with the local engine."""
    from typer.testing import CliRunner
    from groupcheck.cli.main import app
    cli = CliRunner()
    r = cli.invoke(app, ["traces", "generate", "sequencer", "--runs", "3", "--seed", "5", "--faults", "loss=0.1",
                         "--option", "nodes=2", "--option", "messages=1", "--engine", "local",
                         "--out", str(tmp_path / "gen"), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["runs"] == 3
    r = cli.invoke(app, ["traces", "check", str(tmp_path / "gen"), "--engine", "local", "--json"])
    res = json.loads(r.stdout)
    assert r.exit_code == 0 and res["counts"] == {"ok": 3}
    assert res["coverage"]["sequencer"]["states"][0]["reachable"]
    _write_ndjson_corpus(tmp_path / "in")
    r = cli.invoke(app, ["traces", "ingest", str(tmp_path / "in"), "--engine", "local", "--out", str(tmp_path / "ing")])
    assert r.exit_code == 0 and "bad-lines.ndjson:4: invalid JSON" in r.output
    r = cli.invoke(app, ["traces", "check", str(tmp_path / "ing"), "--engine", "local", "--no-coverage"])
    assert r.exit_code == 2 and "nonconforming" in r.output and "rejected" in r.output   # a rejected run: input error
