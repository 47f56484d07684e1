"""The diagrams are the run, read off the page as a browser lays it out:
headless Chromium (tests/browser_helpers.py; skipped, with the reason,
where it is not installed) loads a conformance run's, a history's, a TLC
counterexample's and a proof CTI's diagram, each built through the entry
point the audit uses, and a probe script measures the SVG's own geometry:
the member columns (their heading's centre), the rows (the dots of a
step), every message line, cross, lifeline, crash mark and view band.  The
assertions take the run's ground truth from the input, not from the SVG:
each arrow starts at the dot of its send (the row of the event that sent
it, the sender's column) and ends at its receipt; a message never received
ends in a cross on its receiver's line; a lost one ends in a cross; a
crashed member's line ends at its crash; a view is a band across its
members; a CTI shows exactly the variables that differ and the step
between the two states."""

from types import SimpleNamespace

import pytest
from browser_helpers import CHROMIUM, NO_CHROMIUM, probe

from groupcheck.conformance import history
from groupcheck.core.trace import history as history_format
from groupcheck.conformance.audit import stages as audit
from groupcheck.conformance.audit import diagram
from groupcheck.conformance.replay import registry as protocols
from groupcheck.model.proofs import prover
from groupcheck.model.proofs import registry as proofs
from groupcheck.model.values import Fn

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)

PROBE = """<script>
const c = e => { const b = e.getBBox(); return [b.x + b.width / 2, b.y + b.height / 2]; };
const num = (e, a) => e[a].baseVal.value;
const textY = t => t.y.baseVal.getItem(0).value;
const got = {};
for (const div of document.querySelectorAll('div.case')) {
  const s = div.querySelector('svg');
  const heads = [...s.querySelectorAll('text[text-anchor="middle"][font-weight="bold"]')];
  const lines = [...s.querySelectorAll('line')].map(l => ({cls: l.getAttribute('class') || '',
      x1: num(l, 'x1'), y1: num(l, 'y1'), x2: num(l, 'x2'), y2: num(l, 'y2'),
      action: l.getAttribute('data-action')}));
  got[div.id] = {
    svgClass: s.getAttribute('class'),
    columns: Object.fromEntries(heads.map(t => [t.textContent.trim(), c(t)[0]])),
    rows: Object.fromEntries([...s.querySelectorAll('g.step')].map(g => {    // a row's dots, else its label's
        const d = g.querySelector('circle');                                    // baseline, 4 px below them
        return [g.dataset.step, d ? c(d)[1] : textY(g.querySelector('text')) - 4]; })),
    dots: [...s.querySelectorAll('g.step circle:not(.culprit)')].map(c),
    msgs: lines.filter(l => l.cls.split(' ').includes('msg')),
    lifelines: lines.filter(l => !l.cls.includes('msg') && l.x1 === l.x2 && l.y2 - l.y1 > 20),
    crosses: [...s.querySelectorAll('path.cross')].map(c),
    crashes: [...s.querySelectorAll('path.crash')].map(c),
    views: [...s.querySelectorAll('rect.view')].map(r => { const b = r.getBBox();
        return {x0: b.x, x1: b.x + b.width, y0: b.y, y1: b.y + b.height}; }),
    vars: [...s.querySelectorAll('g.var')].map(g => g.dataset.var),
    step: lines.filter(l => l.cls === 'step'),
    heads: Object.fromEntries([...s.querySelectorAll('text.state')].map(t => [t.getAttribute('class'), t.getBBox().x])),
    height: s.viewBox.baseVal.height,
  };
}
const pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = JSON.stringify(got);
document.body.appendChild(pre);
</script>"""

TOL = 1.5       # px


def near(a, b):
    return abs(a - b) <= TOL


# --- the four diagrams, each through the audit's own entry point ------------------

def _ev(i, name, nid, params=None, msg=None):
    return {"i": i, "name": name, "nid": nid, "params": params or {}, "msg": msg}


def _data(s, q):
    return {"type": "DATA", "sender": s, "seqno": q}


# a SEQUENCER run of 3: 1 sends 1.1 (event 0), 2 takes it (1); 1 sends 1.2 (2); 3 crashes (3);
# 2 takes 1.2 (4), three rows after its send; 1 sends 1.3 (5), which 2 never takes; a new view {1, 2} (6)
CONF_EVENTS = [_ev(0, "Send", 1, msg=_data(1, 1)), _ev(1, "RecvData", 2, {"p": 1}, _data(1, 1)),
               _ev(2, "Send", 1, msg=_data(1, 2)), _ev(3, "Crash", 3),
               _ev(4, "RecvData", 2, {"p": 1}, _data(1, 2)), _ev(5, "Send", 1, msg=_data(1, 3)),
               _ev(6, "NewView", None, {"view": [1, 2]})]
CONF_WITNESS = "member 1 (alive) sent 1.3; members [2] (alive) never delivered it"


def conformance_svg():
    run = {"run_id": "r1", "verdict": "violation", "reason": f"EventualDelivery: {CONF_WITNESS}",
           "first_bad_event": None, "property": "EventualDelivery", "finding": None, "finding_why": None,
           "violations": [{"property": "EventualDelivery", "event": None, "witness": CONF_WITNESS,
                           "finding": None, "finding_why": None}], "events": CONF_EVENTS}
    c = audit.conformance_check(protocols.get("sequencer"), {"runs": 1, "verdicts": {"violation": 1},
                                                             "bad_runs": [run]})
    return c.diagrams[0].svg


# a history of 4: view {1..4}; 1 sends 1.1, all deliver it; member 4 crashes; 1 sends 1.2,
# 1 and 2 deliver it, 3 (alive) never does: Agreement (SEQUENCER's promise)
def history_records():
    recs = [{"kind": "header", "format": history_format.FORMAT, "run_id": "h1", "nodes": [1, 2, 3, 4],
             "protocol": "sequencer"}]
    ev = [("view", m, {"view": 1, "members": [1, 2, 3, 4]}) for m in (1, 2, 3, 4)]
    ev += [("send", 1, {"id": [1, 1]})] + [("deliver", m, {"id": [1, 1]}) for m in (1, 2, 3, 4)]
    ev += [("crash", None, {"member": 4}), ("send", 1, {"id": [1, 2]}), ("deliver", 1, {"id": [1, 2]}),
           ("deliver", 2, {"id": [1, 2]})]
    recs += [{"kind": "event", "name": n, "nid": nid, "params": p} for n, nid, p in ev]
    return recs + [{"kind": "end", "quiescent": True}]


def history_svg():
    row = history.verdict(history_format.from_records(history_records()))
    (v,) = row["violations"]
    assert v["check"] == "Agreement" and v["text"] == "survivor 1 delivered 1.2, survivor 3 did not"
    return v["svg"]


# a TLC counterexample of 3 members over FIFO channels: 1 sends A to 2 (step 2) and B to 3
# (step 3); 2 receives A (step 4); 3 crashes, its channel emptied: B lost (step 5)
def _chan(**queues):
    base = {(p, q): () for p in (1, 2, 3) for q in (1, 2, 3)}
    base.update({tuple(int(x) for x in k[1:].split("_")): v for k, v in queues.items()})
    return Fn(base)


TLC_TRACE = [(None, {"chan": _chan(), "got": (0, 0, 0), "crashed": frozenset()}),
             ("Send", {"chan": _chan(c1_2=("A",)), "got": (0, 0, 0), "crashed": frozenset()}),
             ("Send", {"chan": _chan(c1_2=("A",), c1_3=("B",)), "got": (0, 0, 0), "crashed": frozenset()}),
             ("Recv", {"chan": _chan(c1_3=("B",)), "got": (0, 1, 0), "crashed": frozenset()}),
             ("Crash", {"chan": _chan(), "got": (0, 1, 0), "crashed": frozenset({3})}),
             ("Deliver", {"chan": _chan(), "got": (0, 2, 0), "crashed": frozenset({3})})]


def tlc_svg():
    return diagram.draw(diagram.steps_from_states(TLC_TRACE, 3, violated="TotalOrder"), 3, "tlc/x/Crash").svg


CTI_PRE = {"heardFrom": "<<{1}, {1, 2}>>", "net": "{}", "delivered": "<<1, 1>>"}
CTI_POST = {"heardFrom": "<<{}, {1, 2}>>", "net": "{}", "delivered": "<<1, 2>>"}


def cti_svg():
    enc = next(e for e in proofs.select("stable", every=True) if e.variant == "JoinRace")
    q = prover.Query("stable", "JoinRace", "consecution:SendStable:JoinDigest", "cti", 0.1,
                     action="SendStable(1)", pre=CTI_PRE, post=CTI_POST, reachable=True,
                     path=["Init", "SendStable(1)", "Join(2)"], expected_cti=True, members=2)
    ok = prover.Query("stable", "JoinRace", "initiation:JoinDigest", "proved", 0.1, expected_cti=True, members=2)
    c = audit.prove_check(enc, queries=[ok, q])
    return c.diagrams[0].svg if c.diagrams else '<svg class="none"></svg>'


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    cases = {"conformance": conformance_svg(), "history": history_svg(), "tlc": tlc_svg(), "cti": cti_svg()}
    page = "<html><body>" + "".join(f'<div class="case" id="{k}">{v}</div>' for k, v in cases.items()) \
        + "</body></html>"
    return probe(page, PROBE, tmp_path_factory.mktemp("geometry") / "diagrams.html")


# --- what a reader must see -----------------------------------------------------

def arrow(d, src, sent_row, dst=None, end_row=None):
    """The message line that starts at ``src``'s dot in row ``sent_row``
    (and ends at ``dst``'s column in row ``end_row``, when given)."""
    x, y = d["columns"][str(src)], d["rows"][str(sent_row)]
    assert [x, y] in [[round(a, 1), round(b, 1)] for a, b in d["dots"]] or \
        any(near(a, x) and near(b, y) for a, b in d["dots"]), f"no dot of {src} in row {sent_row}"
    hits = [m for m in d["msgs"] if near(m["x1"], x) and near(m["y1"], y)
            and (dst is None or near(m["x2"], d["columns"][str(dst)]))
            and (end_row is None or near(m["y2"], d["rows"][str(end_row)]))]
    assert hits, f"no arrow from {src} at row {sent_row} to {dst} at row {end_row}: {d['msgs']}"
    return hits[0]


def ends_in_cross(d, m):
    assert any(near(cx, m["x2"]) and near(cy, m["y2"]) for cx, cy in d["crosses"]), (m, d["crosses"])


def line_ends_at(d, member, row):
    """``member``'s line ends at ``row`` under a crash mark, and no line of it goes on below."""
    x, y = d["columns"][str(member)], d["rows"][str(row)]
    mine = [ln for ln in d["lifelines"] if near(ln["x1"], x)]
    assert mine and max(ln["y2"] for ln in mine) <= y + TOL, (member, y, mine)
    assert any(near(cx, x) and near(cy, y) for cx, cy in d["crashes"]), (member, row, d["crashes"])


def line_runs_on(d, member):
    x = d["columns"][str(member)]
    assert max(ln["y2"] for ln in d["lifelines"] if near(ln["x1"], x)) > max(d["rows"].values())


def band_across(d, members, row):
    xs = [d["columns"][str(m)] for m in members]
    y = d["rows"][str(row)]
    assert any(v["x0"] < min(xs) and v["x1"] > max(xs) and v["y0"] < y < v["y1"] for v in d["views"]), d["views"]


def test_conformance_run(measured):
    d = measured["conformance"]
    assert sorted(d["columns"]) == ["1", "2", "3"]
    arrow(d, 1, 1, 2, 2)                    # 1.1: event 0 (row 1) to event 1 (row 2)
    arrow(d, 1, 3, 2, 5)                    # 1.2: from its send (row 3), not a row above its receipt
    never = arrow(d, 1, 6, 2, 7)            # 1.3, never taken by 2: to a cross on 2's line at the end
    ends_in_cross(d, never)
    line_ends_at(d, 3, 4)                   # 3 crashed at event 3
    line_runs_on(d, 1)
    band_across(d, [1, 2], 7)               # the new view {1, 2}


def test_history(measured):
    d = measured["history"]
    assert sorted(d["columns"]) == ["1", "2", "3", "4"]         # every member, not the witness's alone
    rows = {int(k): v for k, v in d["rows"].items()}
    send11, send12 = 5, 11                  # positions: header 0, 4 views, then the sends
    for m, at in ((2, 7), (3, 8), (4, 9)):
        arrow(d, 1, send11, m, at)
    arrow(d, 1, send12, 2, 13)
    ends_in_cross(d, arrow(d, 1, send12, 3, max(rows)))        # 1.2 never delivered by 3
    line_ends_at(d, 4, 10)                  # 4 crashed (position 10)
    band_across(d, [1, 2, 3, 4], 1)


def test_tlc_counterexample(measured):
    d = measured["tlc"]
    arrow(d, 1, 2, 2, 4)                    # A: sent at step 2, received at step 4
    ends_in_cross(d, arrow(d, 1, 3, None, 5))      # B: lost when 3 crashed at step 5
    line_ends_at(d, 3, 5)
    line_runs_on(d, 2)


def test_cti(measured):
    d = measured["cti"]
    assert d["svgClass"] == "cti"
    assert d["vars"] == ["heardFrom", "delivered"]              # the variables that differ, and only those
    (step,) = d["step"]
    assert step["action"] == "SendStable(1)"
    pre, post = d["heads"]["state pre"], d["heads"]["state post"]
    assert pre <= step["x1"] < step["x2"] <= post               # from the pre-state to the post-state
