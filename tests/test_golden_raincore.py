"""Golden scenarios of seed 004: Figures 12, 13 and 14 replayed hop by hop
on model/raincore.py and compared with the tables in tests/golden/.

The tables are transcriptions of the figures (format in each file's "about"
field).  The driver takes, at each step, the model action the figure shows:
the holder's EatingTimeout passes the token on, then TokenReceived at the
next holder or, when the destination is down, TokenDeliveryFailure at the
sender; the environment events (crash, recovery, the 911 reaching C) come
from the file.  Every action taken must also be one of the model's enabled
``next`` labels, so the scripted run is a behaviour of the spec.  The
figures must come out the same under the seed-faithful constants and under
every fix (the fixes change nothing on these runs).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groupcheck.model.core import Label
from groupcheck.model.raincore import NULL_VIEW, RaincoreModel

GOLDEN = Path(__file__).parent / "golden"
VIEW = {"a": "Agreement", "c": "Chaos", "r": "Reserve"}
FAITHFUL = dict(TimelyTimeouts=False, StableFounder=False, NeutralRecovery=False, FreshClaim=False,
                FreshView=False)
FIXED = dict(TimelyTimeouts=True, StableFounder=True, NeutralRecovery=True, FreshClaim=True,
             FreshView=True, TokenRingClaim=True)


def load(fig: int) -> dict:
    return json.loads((GOLDEN / f"raincore_fig{fig}.json").read_text())


class Driver:
    def __init__(self, table: dict, variant: dict) -> None:
        self.t = table
        self.num = table["nodes"]
        self.name = {v: k for k, v in self.num.items()}
        ring = table["initial"]["ring"]
        assert [self.num[x] for x in ring] == list(range(1, len(ring) + 1)), "ring must be 1..N in order"
        self.m = RaincoreModel(dict(N=len(self.num), InitSize=len(ring), InitSeq=table["initial"]["token"]["seq"],
                                    ColdStart=False, **variant))
        (self.s,) = list(self.m.init())

    def letters(self, l) -> list:
        return [self.name[n] for n in l]

    def step(self, action: str, *params):
        label = Label(action, tuple(params))
        enabled = {lab: t for lab, t in self.m.next(self.s)}
        assert label in enabled, f"{label} is not an enabled action of the model"
        t = self.m.step(self.s, action, *params)
        assert t == enabled[label]
        self.s = t

    def token_in_transit(self):
        (msg,) = self.s.tokenMsgs  # the figures have exactly one token
        return msg

    def node_view(self, n: int) -> dict:
        s = self.s
        return {"localView": self.letters(s.localView[n - 1]), "view": s.viewState[n - 1],
                "lastTokenSeq": s.lastToken[n - 1]["seq"], "newNodes": sorted(self.letters(s.newNodes[n - 1]))}

    def environment(self, after: int) -> None:
        for ev in self.t["environment"]:
            if ev["after_hop"] != after:
                continue
            n = self.num[ev["node"]]
            if ev["event"] in ("Crash", "Recover"):
                self.step(ev["event"], n)
            elif ev["event"] == "911Received":
                (msg,) = [x for x in self.s.msgs911 if x["orig"] == self.num[ev["orig"]] and x["dest"] == n]
                self.step("911Received", n, msg)
            else:
                raise AssertionError(f"unknown environment event {ev['event']}")
            got = self.node_view(n)
            for k, v in ev.get("expect", {}).items():
                want = VIEW.get(v, v) if k == "view" else v
                assert got[k] == want, f"after {ev['event']} of {ev['node']}: {k} = {got[k]}, figure: {v}"

    def run(self) -> list[dict]:
        """Drive the model through the table's hops; return the observed rows."""
        rows = []
        self.environment(0)
        prev = None
        for k, hop in enumerate(self.t["hops"], start=1):
            h = self.num[hop["holder"]]
            if prev is not None and prev["event"] == "TokenReceived":
                self.step("EatingTimeout", self.num[prev["holder"]])  # pass the token on
            msg = self.token_in_transit()
            if hop["event"] == "TokenReceived":
                assert msg["dest"] == h, f"hop {k}: the token goes to {self.name[msg['dest']]}, figure: {hop['holder']}"
                self.step("TokenReceived", h, msg)
                tok = self.s.token[h - 1]
                rows.append({"holder": hop["holder"], "seq": tok["seq"], "nodelist": self.letters(tok["nodelist"]),
                             "view": self.s.viewState[h - 1], "event": "TokenReceived"})
            else:
                assert msg["cur"] == h
                self.step("TokenDeliveryFailure", h, msg)
                rows.append({"holder": hop["holder"], "seq": msg["seq"],
                             "nodelist": self.letters(self.s.lastToken[h - 1]["nodelist"]),
                             "view": self.s.viewState[h - 1], "event": "TokenDeliveryFailure"})
            prev = hop
            self.environment(k)
        return rows

    def final_global_views(self) -> dict:
        return {self.name[n]: [None if v == NULL_VIEW else self.letters(v) for v in self.s.globalView[n - 1]]
                for n in self.m.Node}


@pytest.mark.parametrize("variant", [FAITHFUL, FIXED], ids=["faithful", "fixed"])
@pytest.mark.parametrize("fig", [12, 13, 14])
def test_model_reproduces_figure(fig, variant):
    table = load(fig)
    d = Driver(table, variant)
    rows = d.run()
    want = [{**h, "view": VIEW[h["view"]]} for h in table["hops"]]
    for k, (got, exp) in enumerate(zip(rows, want), start=1):
        assert got == exp, f"Figure {fig}, hop {k}: model {got}, figure {exp}"
    assert len(rows) == len(want)
    assert d.final_global_views() == table["final"]["globalView"]
    # the figures are runs where every safety invariant holds at the end
    for name, inv in d.m.invariants.items():
        assert inv(d.s), name


def test_tables_are_consistent():
    """Sanity of the transcriptions: one hop per sequence number, and each
    nodelist lists the holder."""
    for fig in (12, 13, 14):
        hops = load(fig)["hops"]
        assert [h["seq"] for h in hops] == list(range(hops[0]["seq"], hops[0]["seq"] + len(hops)))
        assert all(h["holder"] in h["nodelist"] for h in hops)
    # Figure 14 continues Figure 13, which continues Figure 12
    assert load(13)["hops"][:5] == load(12)["hops"]
    assert load(14)["hops"][:16] == load(13)["hops"]


def test_a_wrong_table_is_caught():
    """The comparison can fail: a hop with the wrong view state is reported."""
    table = load(13)
    table["hops"][8] = {**table["hops"][8], "view": "c"}  # A at 19 is in Reserve, not Chaos
    rows = Driver(table, FAITHFUL).run()
    assert rows[8]["view"] == "Reserve"
