"""FLUSH for every N: the lemmas over the member sort (the fixed-N
lemmas of lemmas.py, written once for z3 and for explorer states).
"""

from __future__ import annotations

from itertools import product
from ...flush import FlushState
from .relation import COMPLETED, DATA, FC, NORMAL, START, STOP, VIEW
from .any_relation import FlushAnyRelation


class FlushAnyEncoding(FlushAnyRelation):
    """FLUSH for every N: the relation and its lemmas."""

    # --- invariant: FlushEncoding's lemmas, quantified over members -------------------
    # Without a joiner every member has installed a view (vid >= 1) and none
    # joins: Basics says so in place of its clauses for vid = 0, and there is
    # no Joiners lemma (FlushEncoding's is empty when NInit = N); the
    # vacuous clauses cost z3 about half again as much.
    @property
    def lemmas(self):
        names = ("VirtualSynchrony",) if self.property_only else (
            "Basics", "Ids", "MsgIds", "DataIds", "DigestIds", "ViewMsgs", "Coordinator", "QuietAfterView",
            "Records", "CompletedDigest", "Followers", "StartMsgs", "StopMsgs", "StartBeforeStop", "FcMsgs",
            *(("Joiners",) if self.jn is not None else ()), "OneViewChange", "ViewDigest", "ViewCovers",
            "VirtualSynchrony")
        return {name: getattr(self, name) for name in names}

    def _pairs(self, S, body, nodes: int, e, f, trigger=True):
        """Every two messages, at k1 on channel e(xs) and k2 on f(xs), for
        every ``nodes`` members xs: body(*xs, k1, k2)."""
        o = S["o"]
        return o.all(nodes, 2, lambda *r: o.Implies(
                         o.And(self._in(S, *e(*r[:-2]), r[-2]), self._in(S, *f(*r[:-2]), r[-1])), body(*r)),
                     (lambda *r: [S["ty"][(*e(*r[:-2]), r[-2])], S["ty"][(*f(*r[:-2]), r[-1])]]) if trigger else None,
                     lambda *xs: product(self._positions(S, *e(*xs)), self._positions(S, *f(*xs))))

    def Basics(self, S):
        """Ranges; a member not yet joined is idle and not leaving, and
        follows no initiator; Completed means blocked; flushInit is a
        member or none; the channel to oneself is empty."""
        o = S["o"]

        def one(p):
            vid, ph = S["vid"][p], S["phase"][p]
            common = (vid <= S["L"], 0 <= ph, ph <= 3, o.Implies(ph == COMPLETED, S["blocked"][p]),
                      S["hd"][p, p] == S["tl"][p, p])
            if self.jn is None:
                return o.And(1 <= vid, o.Not(S["joining"][p]), *common)
            return o.And(0 <= vid, *common,
                         o.Implies(vid == 0, o.And(ph == NORMAL, o.Not(S["blocked"][p]), o.Not(S["leaving"][p]))),
                         o.Implies(S["joining"][p], vid == 0), o.Implies(ph != NORMAL, vid >= 1),
                         o.Implies(S["V0"](p), vid >= 1),
                         o.Implies(o.And(o.Not(S["V0"](p)), vid == 0), o.Not(S["vm"][p][1])))
        idle = (lambda p, c: True) if self.jn is None else (  # noqa: E731
            lambda p, c: o.Implies(S["vid"][p] == 0, o.Not(S["fi"][p, c])))
        return o.And(S["L"] >= 1, S["ns"] >= 0, o.forall(1, one),
                     o.forall(2, lambda p, c: o.And(S["hd"][p, c] <= S["tl"][p, c], idle(p, c))),
                     o.forall(3, lambda p, c, d: o.Implies(o.And(S["fi"][p, c], S["fi"][p, d]), c == d)))

    def Joiners(self, S):
        """A live member that has not installed a view is in no view before
        the latest; a joining member is not in the latest view."""
        o = S["o"]
        return o.And(
            o.forall(1, lambda p: o.Implies(o.And(o.Not(S["V0"](p)), S["joining"][p]), o.Not(S["vm"][p][S["L"]]))),
            o.all(1, 1, lambda p, w: o.Implies(
                o.And(o.Not(S["V0"](p)), self.alive(S, p), S["vid"][p] == 0, 1 <= w, w < S["L"]),
                o.Not(S["vm"][p][w])), dom=lambda p: ((w,) for w in range(1, S["L"]))))

    def Ids(self, S):
        o = S["o"]
        ok = lambda i: o.And(1 <= i, i <= S["ns"])  # noqa: E731
        return o.And(
            o.all(0, 1, lambda i: o.Implies(ok(i), o.And(1 <= S["sview"][i], S["sview"][i] <= S["L"]))),
            o.all(1, 1, lambda p, i: o.And(
                o.Implies(S["dl"][p][i], ok(i)),
                o.Implies(S["dig"][p][i], o.And(ok(i), S["sview"][i] == S["vid"][p])))),
            o.all(2, 1, lambda p, q, i: o.Implies(o.And(S["cmp"][p, q], S["cmpd"][p, q][i]),
                                                  o.And(ok(i), S["sview"][i] == S["vid"][p]))))

    def MsgIds(self, S):
        return self._msgs(S, lambda a, b, k: S["o"].And(1 <= S["cv"][a, b, k], S["cv"][a, b, k] <= S["vid"][a]),
                          trigger=lambda a, b, k: [S["cv"][a, b, k]])

    def DataIds(self, S):
        o = S["o"]

        def body(a, b, k):
            ci = S["ci"][a, b, k]
            return o.Implies(S["ty"][a, b, k] == DATA,
                             o.And(1 <= ci, ci <= S["ns"], S["sview"][ci] == S["cv"][a, b, k]))
        return self._msgs(S, body, trigger=lambda a, b, k: [S["ci"][a, b, k]])

    def DigestIds(self, S):
        o = S["o"]

        def body(a, b, k):
            ty = S["ty"][a, b, k]
            return o.Implies(o.Or(ty == FC, ty == VIEW), o.all(0, 1, lambda i: o.Implies(
                S["cd"][a, b, k][i], o.And(1 <= i, i <= S["ns"], S["sview"][i] == S["cv"][a, b, k]))))
        return self._msgs(S, body)

    def ViewMsgs(self, S):
        o = S["o"]

        def body(a, b, k):
            cv = S["cv"][a, b, k]
            return o.Implies(S["ty"][a, b, k] == VIEW, o.And(cv < S["L"], S["vid"][a] > cv, S["vm"][a][cv],
                                                             S["vm"][a][cv + 1]))
        return self._msgs(S, body)

    def Coordinator(self, S):
        o = S["o"]
        return o.forall(2, lambda c, y: o.Implies(o.And(self.alive(S, c), S["fi"][c, c]), o.And(
            S["vid"][c] == S["L"], self.staying(S, c), self.coord_below(S, c, y))))

    def QuietAfterView(self, S):
        o = S["o"]
        return o.forall(2, lambda x, p: o.Implies(
            o.And(x != p, self.alive(S, x), S["fi"][x, x], S["phase"][x] == NORMAL, self.alive(S, p),
                  S["vid"][p] == S["vid"][x]), S["phase"][p] == NORMAL))

    def Records(self, S):
        o = S["o"]
        return o.forall(2, lambda c, q: o.Implies(o.And(S["cmp"][c, q], self.alive(S, c)), o.And(
            S["fi"][c, c], S["phase"][c] != NORMAL,
            o.Implies(self.alive(S, q), o.And(S["cmpd"][c, q] == S["dig"][q], S["phase"][q] == COMPLETED,
                                              S["vid"][q] == S["vid"][c])))))

    def CompletedDigest(self, S):
        o = S["o"]
        return o.all(1, 1, lambda p, i: o.Implies(S["phase"][p] == COMPLETED,
                                                  S["dig"][p][i] == self.din(S, p, S["vid"][p], i)))

    def Followers(self, S):
        o = S["o"]
        return o.forall(2, lambda p, c: o.And(
            o.Implies(o.And(p != c, self.alive(S, p), S["phase"][p] != NORMAL, S["fi"][p, c], self.alive(S, c),
                            S["vid"][c] == S["vid"][p]),
                      o.And(S["fi"][c, c], S["phase"][c] != NORMAL)),
            o.Implies(o.And(p != c, S["phase"][p] != NORMAL, S["fi"][p, c]), S["vid"][c] >= S["vid"][p])))

    def StartMsgs(self, S):
        o = S["o"]
        return self._msgs(S, lambda a, b, k: o.Implies(
            o.And(S["ty"][a, b, k] == START, self.alive(S, a), S["cv"][a, b, k] == S["vid"][a]),
            o.And(S["fi"][a, a], S["phase"][a] != NORMAL)))

    def StopMsgs(self, S):
        o = S["o"]

        def body(x, p, y, k):
            cv = S["cv"][x, p, k]
            return o.Implies(o.And(S["ty"][x, p, k] == STOP, self.alive(S, x)), o.And(
                o.Implies(cv == S["L"], o.And(self.staying(S, x), self.coord_below(S, x, y))),
                o.Implies(o.And(self.alive(S, p), cv == S["vid"][p]), S["phase"][p] == NORMAL)))

        def other(x, p, c, k1, k2):   # no START_FLUSH of that view from another live member to p
            return o.Implies(o.And(c != x, c != p, S["ty"][x, p, k1] == STOP, S["ty"][c, p, k2] == START,
                                   S["cv"][x, p, k1] == S["cv"][c, p, k2]),
                             o.Or(S["crashed"][x], S["crashed"][c]))
        return o.And(self._msgs(S, body, nodes=1),
                     self._pairs(S, other, 3, lambda x, p, c: (x, p), lambda x, p, c: (c, p)))

    def StartBeforeStop(self, S):
        o = S["o"]
        return self._pairs(S, lambda a, b, k1, k2: o.Implies(
            o.And(k1 < k2, S["ty"][a, b, k1] == START, S["ty"][a, b, k2] == STOP),
            S["cv"][a, b, k1] < S["cv"][a, b, k2]), 2, lambda a, b: (a, b), lambda a, b: (a, b), trigger=False)

    def FcMsgs(self, S):
        o = S["o"]

        def body(q, c, k):
            cv = S["cv"][q, c, k]
            return o.Implies(o.And(S["ty"][q, c, k] == FC, self.alive(S, c), cv == S["vid"][c]), o.And(
                S["fi"][c, c], S["phase"][c] != NORMAL,
                o.Implies(self.alive(S, q), o.And(S["cd"][q, c, k] == S["dig"][q], S["phase"][q] == COMPLETED,
                                                  S["vid"][q] == cv))))
        return o.And(self._msgs(S, lambda q, c, k: o.Implies(S["ty"][q, c, k] == FC, S["cv"][q, c, k] <= S["vid"][c])),
                     self._msgs(S, body))

    def OneViewChange(self, S):
        o = S["o"]

        def body(a, b, c, d, k1, k2):
            return o.Implies(o.And(S["ty"][a, b, k1] == VIEW, S["ty"][c, d, k2] == VIEW,
                                   S["cv"][a, b, k1] == S["cv"][c, d, k2]),
                             o.And(a == c, S["cd"][a, b, k1] == S["cd"][c, d, k2], o.Implies(b == d, k1 == k2)))
        return self._pairs(S, body, 4, lambda a, b, c, d: (a, b), lambda a, b, c, d: (c, d))

    def ViewDigest(self, S):
        o = S["o"]
        return self._msgs(S, lambda a, b, k: o.Implies(S["ty"][a, b, k] == VIEW, o.all(0, 1, lambda i: (
            S["cd"][a, b, k][i] == self.din(S, a, S["cv"][a, b, k], i)))))

    def ViewCovers(self, S):
        o = S["o"]

        def body(a, p, k):
            cv = S["cv"][a, p, k]
            return o.Implies(o.And(S["ty"][a, p, k] == VIEW, self.alive(S, p), S["vid"][p] == cv), o.And(
                S["phase"][p] == COMPLETED,
                o.all(0, 1, lambda i: o.Implies(self.din(S, p, cv, i), S["cd"][a, p, k][i]))))

        def moved(a, p, k):
            cv = S["cv"][a, p, k]
            return o.Implies(o.And(S["ty"][a, p, k] == VIEW, self.alive(S, p)),
                             o.Or(S["vid"][p] == cv, o.And(S["vid"][p] == 0, cv == S["L"] - 1, S["vm"][p][S["L"]])))
        return o.And(self._msgs(S, body), self._msgs(S, moved))

    def VirtualSynchrony(self, S):
        """The spec's property, for every two members and view v < L."""
        o = S["o"]

        def mover(x, v):
            return o.And(S["vid"][x] > v, S["vm"][x][v], S["vm"][x][v + 1])
        return o.all(2, 2, lambda p, q, v, i: o.Implies(
            o.And(1 <= v, v < S["L"], mover(p, v), mover(q, v), 1 <= i, i <= S["ns"], S["sview"][i] == v),
            S["dl"][p][i] == S["dl"][q][i]),
            dom=lambda p, q: product(range(1, S["L"]), range(1, S["ns"] + 1)))

    def holds(self, name: str, s: FlushState) -> bool:
        """Lemma ``name`` instantiated at s's N, on s."""
        return self.lemmas[name](self.py_state(s))


def any_encoding(_n=None, *, variant: str, **kw) -> FlushAnyEncoding:
    """A variant of the proof matrix proved for every N (the manifest's
    ``members: "any"``)."""
    return FlushAnyEncoding(variant=variant, **kw)
