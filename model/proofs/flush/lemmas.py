"""FLUSH at a fixed N: the lemmas of the inductive invariant for
VirtualSynchrony over ``relation.FlushRelation`` (docs/proofs.md states
each in words), and the matrix's fixed-N encoding.
"""

from __future__ import annotations

from itertools import product
import z3
from ...flush import NO_INIT
from ..prover import multipattern
from .relation import COMPLETED, DATA, FC, FlushRelation, NORMAL, START, STOP, VIEW


class FlushEncoding(FlushRelation):
    """FLUSH at fixed N: the relation and its lemmas."""

    # --- invariant ------------------------------------------------------------------
    # Quantifiers range over Int only (ids i, views v, channel positions k);
    # members are expanded.  docs/proofs.md states each lemma in words.
    @property
    def lemmas(self):
        if self.property_only:
            return {"VirtualSynchrony": self.VirtualSynchrony}
        return {
            "Basics": self.Basics,
            "Ids": self.Ids,
            "MsgIds": self.MsgIds,
            "DataIds": self.DataIds,
            "DigestIds": self.DigestIds,
            "ViewMsgs": self.ViewMsgs,
            "Coordinator": self.Coordinator,
            "QuietAfterView": self.QuietAfterView,
            "Records": self.Records,
            "CompletedDigest": self.CompletedDigest,
            "Followers": self.Followers,
            "StartMsgs": self.StartMsgs,
            "StopMsgs": self.StopMsgs,
            "StartBeforeStop": self.StartBeforeStop,
            "FcMsgs": self.FcMsgs,
            "Joiners": self.Joiners,
            "OneViewChange": self.OneViewChange,
            "ViewDigest": self.ViewDigest,
            "ViewCovers": self.ViewCovers,
            "VirtualSynchrony": self.VirtualSynchrony,
        }

    def _din(self, S, p, v, i):
        """i \\in DeliveredIn(p, v)"""
        return z3.And(S["dl"][p][i], 1 <= i, i <= S["ns"], S["sview"][i] == v)

    def _ids_of(self, S, a, v, name):
        """Every id in set a is a multicast of view v (any view if v is None)."""
        i = self._v(S, f"i{name}")
        ok = z3.And(1 <= i, i <= S["ns"]) if v is None else z3.And(1 <= i, i <= S["ns"], S["sview"][i] == v)
        return z3.ForAll([i], z3.Implies(a[i], ok))

    def Basics(self, S):
        """Ranges; a member not yet joined is idle; Completed means blocked."""
        M = self.M
        cs = [S["L"] >= 1, S["ns"] >= 0]
        for p in M:
            vid, ph, fi = S["vid"][p], S["phase"][p], S["fi"][p]
            cs += [0 <= vid, vid <= S["L"], 0 <= ph, ph <= 3, z3.Or(fi == NO_INIT, *[fi == c for c in M]),
                   z3.Implies(vid == 0, z3.And(ph == NORMAL, z3.Not(S["blocked"][p]), fi == NO_INIT,
                                               z3.Not(S["leaving"][p]))),
                   z3.Implies(S["joining"][p], vid == 0),
                   z3.Implies(ph == COMPLETED, S["blocked"][p]),
                   z3.Implies(ph != NORMAL, z3.And(fi != NO_INIT, vid >= 1))]
            if p <= self.NInit:
                cs.append(vid >= 1)
            else:
                cs.append(z3.Implies(vid == 0, z3.Not(S["vm"][p][1])))
        cs += [S["hd"][e] <= S["tl"][e] for e in self.E]
        return z3.And(*cs)

    def Ids(self, S):
        """Multicast i has a view in 1..L; delivered sets, digests and recorded
        digests hold multicasts only (a digest: of its member's view)."""
        i = self._v(S, "ids")
        cs = [z3.ForAll([i], z3.Implies(z3.And(1 <= i, i <= S["ns"]),
                                        z3.And(1 <= S["sview"][i], S["sview"][i] <= S["L"])))]
        for p in self.M:
            cs.append(self._ids_of(S, S["dl"][p], None, f"dl{p}"))
            cs.append(self._ids_of(S, S["dig"][p], S["vid"][p], f"dig{p}"))
            for q in self.M:
                cs.append(z3.Implies(S["cmp"][p, q], self._ids_of(S, S["cmpd"][p, q], S["vid"][p], f"cmpd{p}{q}")))
        return z3.And(*cs)

    def MsgIds(self, S):
        """A message was sent in a view of its sender (1 <= view <= vid)."""
        cs = []
        for e in self.E:
            k = self._v(S, f"kmi{e[0]}{e[1]}")
            cv = S["cv"][e][k]
            cs.append(z3.ForAll([k], z3.Implies(z3.And(S["hd"][e] <= k, k < S["tl"][e]),
                                                z3.And(1 <= cv, cv <= S["vid"][e[0]])), patterns=[cv]))
        return z3.And(*cs)

    def DataIds(self, S):
        """A DATA carries a multicast of its view."""
        cs = []
        for e in self.E:
            k = self._v(S, f"kdi{e[0]}{e[1]}")
            ci = S["ci"][e][k]
            cs.append(z3.ForAll([k], z3.Implies(
                z3.And(S["hd"][e] <= k, k < S["tl"][e], S["ty"][e][k] == DATA),
                z3.And(1 <= ci, ci <= S["ns"], S["sview"][ci] == S["cv"][e][k])), patterns=[ci]))
        return z3.And(*cs)

    def DigestIds(self, S):
        """The digest of a FLUSH_COMPLETED or VIEW holds multicasts of its view only."""
        cs = []
        for e in self.E:
            k, i = self._v(S, f"kmd{e[0]}{e[1]}"), self._v(S, f"imd{e[0]}{e[1]}")
            cs.append(z3.ForAll([k, i], z3.Implies(
                z3.And(S["hd"][e] <= k, k < S["tl"][e], z3.Or(S["ty"][e][k] == FC, S["ty"][e][k] == VIEW),
                       S["cd"][e][k][i]),
                z3.And(1 <= i, i <= S["ns"], S["sview"][i] == S["cv"][e][k])), patterns=[S["cd"][e][k][i]]))
        return z3.And(*cs)

    def ViewMsgs(self, S):
        """A VIEW of view v exists only once view v+1 does (v < L), and its
        sender moved with it: vid > v, in views v and v+1."""
        cs = []
        for e in self.E:
            c = e[0]

            def body(k, e=e, c=c):
                cv = S["cv"][e][k]
                return z3.Implies(S["ty"][e][k] == VIEW, z3.And(
                    cv < S["L"], S["vid"][c] > cv, S["vm"][c][cv], S["vm"][c][cv + 1]))
            cs.append(self._in_chan(S, e, body, "vm"))
        return z3.And(*cs)

    def Coordinator(self, S):
        """A live member that initiated a flush (until its STOP_FLUSH) is in
        the latest view and is its coordinator."""
        return z3.And(*[z3.Implies(z3.And(self.alive(S, c), S["fi"][c] == c),
                                   z3.And(S["vid"][c] == S["L"], self.is_coord(S, c))) for c in self.M])

    def QuietAfterView(self, S):
        """Between its SendView and its STOP_FLUSH, no live member of the
        initiator's new view is in a flush."""
        cs = []
        for x, p in product(self.M, self.M):
            if x == p:
                continue
            cs.append(z3.Implies(z3.And(self.alive(S, x), S["fi"][x] == x, S["phase"][x] == NORMAL,
                                        self.alive(S, p), S["vid"][p] == S["vid"][x]),
                                 S["phase"][p] == NORMAL))
        return z3.And(*cs)

    def Records(self, S):
        """A live member holding FLUSH_COMPLETED records is the initiator in
        its flush; the record of a live member is its current digest, in the
        same view, and that member has completed."""
        cs = []
        for c, q in product(self.M, self.M):
            cs.append(z3.Implies(z3.And(S["cmp"][c, q], self.alive(S, c)), z3.And(
                S["fi"][c] == c, S["phase"][c] != NORMAL,
                z3.Implies(self.alive(S, q), z3.And(S["cmpd"][c, q] == S["dig"][q],
                                                    S["phase"][q] == COMPLETED, S["vid"][q] == S["vid"][c])))))
        return z3.And(*cs)

    def CompletedDigest(self, S):
        """Once completed, a member's digest is what it delivered of its view."""
        cs = []
        for p in self.M:
            i = self._v(S, f"icd{p}")
            cs.append(z3.Implies(S["phase"][p] == COMPLETED, z3.ForAll([i], S["dig"][p][i] == self._din(
                S, p, S["vid"][p], i))))
        return z3.And(*cs)

    def Followers(self, S):
        """A live member in a flush follows an initiator that, if alive and in
        the same view, is in its own flush as initiator."""
        cs = []
        for p, c in product(self.M, self.M):
            if p == c:
                continue
            cs.append(z3.Implies(z3.And(self.alive(S, p), S["phase"][p] != NORMAL, S["fi"][p] == c,
                                        self.alive(S, c), S["vid"][c] == S["vid"][p]),
                                 z3.And(S["fi"][c] == c, S["phase"][c] != NORMAL)))
            cs.append(z3.Implies(z3.And(S["phase"][p] != NORMAL, S["fi"][p] == c), S["vid"][c] >= S["vid"][p]))
        return z3.And(*cs)

    def StartMsgs(self, S):
        """A START_FLUSH of the current view of its live sender: the sender is
        in its own flush as initiator."""
        cs = []
        for e in self.E:
            c = e[0]

            def body(k, e=e, c=c):
                return z3.Implies(z3.And(S["ty"][e][k] == START, self.alive(S, c), S["cv"][e][k] == S["vid"][c]),
                                  z3.And(S["fi"][c] == c, S["phase"][c] != NORMAL))
            cs.append(self._in_chan(S, e, body, "st"))
        return z3.And(*cs)

    def StopMsgs(self, S):
        """A STOP_FLUSH of the latest view from a live sender: the sender is the
        coordinator; one of the receiver's current view: the receiver is not in
        a flush, and no other live member's START_FLUSH of that view is on its way to it."""
        cs = []
        for e in self.E:
            x, p = e

            def body(k, e=e, x=x, p=p):
                cv = S["cv"][e][k]
                return z3.Implies(z3.And(S["ty"][e][k] == STOP, self.alive(S, x)), z3.And(
                    z3.Implies(cv == S["L"], self.is_coord(S, x)),
                    z3.Implies(z3.And(self.alive(S, p), cv == S["vid"][p]), S["phase"][p] == NORMAL)))
            cs.append(self._in_chan(S, e, body, "sp"))
            for c in self.M:   # no START_FLUSH of that view from another live member to p
                if c in (x, p):
                    continue
                f = (c, p)
                k1, k2 = self._v(S, f"k1ss{x}{p}{c}"), self._v(S, f"k2ss{x}{p}{c}")
                cs.append(z3.ForAll([k1, k2], z3.Implies(z3.And(
                    S["hd"][e] <= k1, k1 < S["tl"][e], S["hd"][f] <= k2, k2 < S["tl"][f],
                    S["ty"][e][k1] == STOP, S["ty"][f][k2] == START, S["cv"][e][k1] == S["cv"][f][k2]),
                    z3.Or(S["crashed"][x], S["crashed"][c])), patterns=[multipattern(S["ty"][e][k1], S["ty"][f][k2])]))
        return z3.And(*cs)

    def StartBeforeStop(self, S):
        """FIFO: a STOP_FLUSH behind a START_FLUSH on a channel is of a later view."""
        cs = []
        for e in self.E:
            k1, k2 = self._v(S, f"k1sb{e[0]}{e[1]}"), self._v(S, f"k2sb{e[0]}{e[1]}")
            cs.append(z3.ForAll([k1, k2], z3.Implies(
                z3.And(S["hd"][e] <= k1, k1 < k2, k2 < S["tl"][e], S["ty"][e][k1] == START, S["ty"][e][k2] == STOP),
                S["cv"][e][k1] < S["cv"][e][k2])))
        return z3.And(*cs)

    def FcMsgs(self, S):
        """A FLUSH_COMPLETED is of a view its receiver has reached; one to a
        live initiator in its view: the initiator is in its flush, and the sender, if alive, has completed in that view with
        that digest."""
        cs = []
        for e in self.E:
            q, c = e

            def body(k, e=e, q=q, c=c):
                return z3.Implies(
                    z3.And(S["ty"][e][k] == FC, self.alive(S, c), S["cv"][e][k] == S["vid"][c]),
                    z3.And(S["fi"][c] == c, S["phase"][c] != NORMAL,
                           z3.Implies(self.alive(S, q), z3.And(
                               S["cd"][e][k] == S["dig"][q], S["phase"][q] == COMPLETED,
                               S["vid"][q] == S["cv"][e][k]))))
            cs.append(self._in_chan(S, e, lambda k, e=e, c=c: z3.Implies(
                S["ty"][e][k] == FC, S["cv"][e][k] <= S["vid"][c]), "fr"))
            cs.append(self._in_chan(S, e, body, "fc"))
        return z3.And(*cs)

    def Joiners(self, S):
        """A live member that has not installed a view is in no view before the
        latest; a member that is joining is not in the latest view (Join's
        guard; SendView puts it in the new view and clears joining)."""
        cs = []
        for p in self.M:
            if p <= self.NInit:
                continue
            cs.append(z3.Implies(S["joining"][p], z3.Not(S["vm"][p][S["L"]])))
            w = self._v(S, f"wj{p}")
            cs.append(z3.Implies(z3.And(self.alive(S, p), S["vid"][p] == 0), z3.ForAll(
                [w], z3.Implies(z3.And(1 <= w, w < S["L"]), z3.Not(S["vm"][p][w])))))
        return z3.And(*cs)

    def OneViewChange(self, S):
        """All VIEW messages of one view come from one SendView: the same
        sender, the same digest, one per channel."""
        cs = []
        for a, e in enumerate(self.E):
            for f in self.E[a:]:
                k1, k2 = self._v(S, f"k1ov{e[0]}{e[1]}{f[0]}{f[1]}"), self._v(S, f"k2ov{e[0]}{e[1]}{f[0]}{f[1]}")
                same = z3.BoolVal(e[0] == f[0])
                cs.append(z3.ForAll([k1, k2], z3.Implies(z3.And(
                    S["hd"][e] <= k1, k1 < S["tl"][e], S["hd"][f] <= k2, k2 < S["tl"][f],
                    S["ty"][e][k1] == VIEW, S["ty"][f][k2] == VIEW, S["cv"][e][k1] == S["cv"][f][k2]),
                    z3.And(same, S["cd"][e][k1] == S["cd"][f][k2], z3.BoolVal(e != f) if e != f else k1 == k2)),
                    patterns=[multipattern(S["ty"][e][k1], S["ty"][f][k2])]))
        return z3.And(*cs)

    def ViewDigest(self, S):
        """A VIEW of view v carries exactly what its sender delivered of view v.

        Stated for the sender only: ViewMsgs makes the sender a member that
        moved from v to v + 1, and VirtualSynchrony makes every other such
        member's deliveries of v the sender's, so with those two lemmas this
        is the lemma for every member that moved (docs/proofs.md, FLUSH)."""
        cs = []
        for e in self.E:
            c = e[0]

            def body(k, e=e, c=c):
                cv = S["cv"][e][k]
                i = self._v(S, f"ivd{e[0]}{e[1]}")
                return z3.Implies(S["ty"][e][k] == VIEW,
                                  z3.ForAll([i], S["cd"][e][k][i] == self._din(S, c, cv, i)))
            cs.append(self._in_chan(S, e, body, "vd"))
        return z3.And(*cs)

    def ViewDigestMovers(self, S):
        """ViewDigest as first stated (not a lemma; the test of the restated
        one): a VIEW of view v carries exactly what every member that moved
        from v to v + 1 delivered of view v.  With ViewMsgs and
        VirtualSynchrony it is equivalent to ViewDigest
        (tests/test_proofs_flush.py proves both implications)."""
        cs = []
        for e in self.E:
            for q in self.M:
                def body(k, e=e, q=q):
                    cv = S["cv"][e][k]
                    i = self._v(S, f"ivdm{e[0]}{e[1]}{q}")
                    return z3.Implies(
                        z3.And(S["ty"][e][k] == VIEW, S["vid"][q] > cv, S["vm"][q][cv], S["vm"][q][cv + 1]),
                        z3.ForAll([i], S["cd"][e][k][i] == self._din(S, q, cv, i)))
                cs.append(self._in_chan(S, e, body, f"vdm{q}"))
        return z3.And(*cs)

    def ViewCovers(self, S):
        """A VIEW of view v on its way to a live member: the member is still
        in v, or is a joiner of the latest view (and v + 1 is that view); if in v,
        it has completed the flush of v and its deliveries of v are in the
        VIEW's digest."""
        cs = []
        for e in self.E:
            p = e[1]

            def body(k, e=e, p=p):
                cv = S["cv"][e][k]
                i = self._v(S, f"ivc{e[0]}{e[1]}")
                return z3.Implies(
                    z3.And(S["ty"][e][k] == VIEW, self.alive(S, p), S["vid"][p] == cv),
                    z3.And(S["phase"][p] == COMPLETED,
                           z3.ForAll([i], z3.Implies(self._din(S, p, cv, i), S["cd"][e][k][i]))))
            cs.append(self._in_chan(S, e, body, "vc"))
            cs.append(self._in_chan(S, e, lambda k, e=e, p=p: z3.Implies(
                z3.And(S["ty"][e][k] == VIEW, self.alive(S, p)),
                z3.Or(S["vid"][p] == S["cv"][e][k],
                      z3.And(S["vid"][p] == 0, S["cv"][e][k] == S["L"] - 1, S["vm"][p][S["L"]]))), "vn"))
        return z3.And(*cs)

    def VirtualSynchrony(self, S):
        """The spec's property, for every view v < L (a quantifier over v)."""
        M = self.M
        v, i = self._v(S, "vsv"), self._v(S, "vsi")
        cs = []
        for p, q in product(M, M):
            if p >= q:
                continue
            mover = lambda x: z3.And(S["vid"][x] > v, S["vm"][x][v], S["vm"][x][v + 1])  # noqa: E731
            cs.append(z3.ForAll([v, i], z3.Implies(
                z3.And(1 <= v, v < S["L"], mover(p), mover(q), 1 <= i, i <= S["ns"], S["sview"][i] == v),
                S["dl"][p][i] == S["dl"][q][i])))
        return z3.And(*cs)


def matrix_encoding(N: int, *, joiners: int = 0, **kw) -> FlushEncoding:
    """A variant of the proof matrix (spec/Flush/manifest.json, "proofs"):
    N members, the last ``joiners`` of them outside the first view.  At
    N = 3 the two fixed matrices take about 15-20 s of z3 CPU each, every
    row (an action's instances summed) under 0.5 s of CPU.  The seed as
    written (FlawedLeave, FlawedCrash) is asked from N = 3: with two
    members a leave or a crash leaves one, and their CTIs are unreachable."""
    return FlushEncoding(N, N - joiners, **kw)
