"""Golden scenarios, implementation half: Figures 12, 13 and 14 of seed 004
reproduced hop by hop by impl/raincore.py layers, against the tables in
tests/golden/raincore_fig*.json (their 'about' field gives the format; the
model half is tests/test_golden_raincore.py).

A scripted harness plays the Transport Manager: it keeps the messages in
flight, delivers the token to its destination at each hop (or, when the
destination is down, hands the sender DeliveryFailed in its place), fires
the holder's eating timeout between hops, and runs the figure's environment
events (crash, recovery, the 911 a node receives) where the table puts them.
Each scenario is checked with the seed as written (all fixes off) and with
the layer's defaults (the fixes of docs/raincore.md), which must not change
a failure-free, single-fault history.
"""

import json
from pathlib import Path

import pytest

from groupcheck.impl.engine import EffectEngine
from groupcheck.impl.events import Receive, TimerFired, Up
from groupcheck.impl.raincore import Crash, DeliveryFailed, Msg911, Raincore, Recover, Start, TokenMsg

GOLDEN = Path(__file__).resolve().parent / "golden"
FIGURES = sorted(GOLDEN.glob("raincore_fig*.json"))
VARIANTS = {
    "seed": dict(neutral_recovery=False, fresh_claim=False, fresh_view=False, token_ring_claim=False),
    "fixed": {},
}


class Harness:
    def __init__(self, table: dict, **opts):
        self.ids = table["nodes"]
        self.letter = {v: k for k, v in self.ids.items()}
        ring = tuple(self.ids[x] for x in table["initial"]["ring"])
        seq = table["initial"]["token"]["seq"]
        self.nodes = {n: Raincore(n, ring, init_seq=seq, **opts) for n in ring}
        self.engine = EffectEngine(self.nodes, self, lambda record: None, self._commit)
        self.inflight: list[tuple[int, object]] = []            # (sender, message)
        self.commits: dict[int, list] = {n: [] for n in ring}
        for n in ring:
            assert self.nodes[n].globalView == [tuple(self.ids[x] for x in v) for v in table["initial"]["globalView"]]
            self.run(n, Start())
        last = self.nodes[ring[-1]]
        self.inflight.append((ring[-1], last.lastToken))     # the steady ring's token on its way
        assert last.lastToken.dest == self.ids[table["initial"]["token"]["dest"]]

    # the effect engine's network policy (impl/engine.py): no clock, the script fires the timers
    now = 0.0

    def run(self, n: int, event):
        self.engine.handle(n, event)

    def send(self, src: int, dest: int, msg) -> None:
        self.inflight.append((src, msg))

    def schedule(self, at: float, n: int, name: str) -> None:
        return None

    def _commit(self, n: int, eff) -> None:
        if isinstance(eff, Up):
            self.commits[n].append((eff.msg.view.vid, eff.msg.view.members))

    def take(self, kind, pred):
        hits = [i for i, (_, m) in enumerate(self.inflight) if isinstance(m, kind) and pred(m)]
        assert len(hits) == 1, f"expected one such {kind.__name__} in flight, have {self.inflight}"
        return self.inflight.pop(hits[0])

    def names(self, nl):
        return [self.letter[x] for x in nl]


def view_letter(vs: str) -> str:
    return vs[0].lower()


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("path", FIGURES, ids=lambda p: p.stem)
def test_figure_hop_by_hop(path, variant):
    table = json.loads(path.read_text())
    h = Harness(table, **VARIANTS[variant])
    env: dict[int, list] = {}
    for e in table["environment"]:
        env.setdefault(e["after_hop"], []).append(e)
    for k, hop in enumerate(table["hops"], start=1):
        holder = h.ids[hop["holder"]]
        where = f"{path.stem} hop {k} ({hop['holder']} {hop['seq']})"
        if hop["event"] == "TokenReceived":
            sender, tok = h.take(TokenMsg, lambda m: True)
            assert tok.dest == holder and tok.seq == hop["seq"], where
            h.run(holder, Receive(sender, tok))
            node = h.nodes[holder]
            assert node.tokenState == "Eating", where
            nodelist = node.token.nodelist
        else:
            assert hop["event"] == "TokenDeliveryFailure", where
            sender, tok = h.take(TokenMsg, lambda m: True)
            assert sender == holder and tok.seq == hop["seq"] and h.nodes[tok.dest].status != "Up", where
            h.run(holder, DeliveryFailed(tok))
            node = h.nodes[holder]
            nodelist = node.lastToken.nodelist
        assert h.names(nodelist) == hop["nodelist"], where
        assert view_letter(node.viewState) == hop["view"], where
        for e in env.get(k, []):
            n = h.ids[e["node"]]
            if e["event"] == "Crash":
                h.run(n, Crash())
                h.inflight = [(s, m) for s, m in h.inflight if s != n]   # its undelivered messages die with it
            elif e["event"] == "Recover":
                h.run(n, Recover())
            elif e["event"] == "911Received":
                sender, m = h.take(Msg911, lambda m: m.orig == h.ids[e["orig"]] and m.dest == n)
                h.run(n, Receive(sender, m))
            else:
                raise AssertionError(f"unknown environment event {e}")
            exp, got = e.get("expect", {}), h.nodes[n]
            if "localView" in exp:
                assert h.names(got.localView) == exp["localView"], e
            if "view" in exp:
                assert view_letter(got.viewState) == exp["view"], e
            if "lastTokenSeq" in exp:
                assert got.lastToken.seq == exp["lastTokenSeq"], e
            if "newNodes" in exp:
                assert sorted(h.names(got.newNodes)) == sorted(exp["newNodes"]), e
        if node.tokenState == "Eating":
            h.run(holder, TimerFired("eating"))                       # pass the token on
    for letter, gv in table["final"]["globalView"].items():
        got = [h.names(v) if v else None for v in h.nodes[h.ids[letter]].globalView]
        assert got == gv, f"{path.stem}: final globalView of {letter}"
    # every non-NULL entry was announced upward exactly once, at its index
    for n, node in h.nodes.items():
        assert h.commits[n] == [(i + 1, v) for i, v in enumerate(node.globalView) if v and i > 0]


def test_the_three_figures_are_there():
    assert [p.stem for p in FIGURES] == ["raincore_fig12", "raincore_fig13", "raincore_fig14"]
