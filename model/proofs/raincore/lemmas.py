"""Raincore: the lemmas of the inductive invariants for AtMostOneToken,
LegalStates and ConsistentHistory over ``relation.RaincoreRelation``
(docs/proofs.md states each in words), the lemma sets the matrix names,
and the matrix's encoding.
"""

from __future__ import annotations

from itertools import combinations
import z3
from ..prover import multipattern
from .relation import AGREEMENT, CHAOS, EATING, HUNGRY, M9, OFF, RESERVE, RaincoreRelation, STARVING, Tok, UP, YES, manifest_constants


class RaincoreEncoding(RaincoreRelation):
    """Raincore at fixed N: the relation and its lemmas."""

    def LastIndex(self, S):
        return z3.And(*[self._last_index(S, n) for n in self.nodes])

    def AtMostOneToken(self, S):
        eat = [z3.And(S["status"][n] == UP, S["ts"][n] == EATING) for n in self.nodes]
        return z3.And(*[z3.Not(z3.And(eat[a], eat[b])) for a, b in combinations(range(len(eat)), 2)])

    def LegalStates(self, S):
        legal = {(EATING, AGREEMENT), (HUNGRY, AGREEMENT), (EATING, RESERVE), (HUNGRY, RESERVE),
                 (EATING, CHAOS), (HUNGRY, CHAOS), (STARVING, CHAOS)}
        return z3.And(*[z3.Implies(S["status"][n] == UP,
                                   z3.Or(*[z3.And(S["ts"][n] == a, S["vs"][n] == b) for a, b in legal]))
                        for n in self.nodes])

    def ConsistentHistory(self, S):
        out = []
        for a, b in combinations(self.nodes, 2):
            i = z3.Int(f"{S['tag']}_ch_{a}_{b}")
            ga, gb = S["gv"][a], S["gv"][b]
            out.append(z3.ForAll([i], z3.Implies(
                z3.And(1 <= i, i <= S["gvlen"][a], i <= S["gvlen"][b], ga[i] != 0, gb[i] != 0),
                ga[i] == gb[i]), patterns=[ga[i], gb[i]]))
        return z3.And(*out)

    def Types(self, S):
        """Every per-node state within its type (status, view and token
        states), globalView lengths non-negative, and the spec's TypeOK
        clause that a live node holds a token iff it is Eating; a node that
        is not up holds none.  (Ring numbers and seqnos of messages in flight
        are not constrained: the ring tables read any number, and no lemma
        here needs them.)"""
        out = []
        for n in self.nodes:
            out += [0 <= S["status"][n], S["status"][n] <= 2, 0 <= S["vs"][n], S["vs"][n] <= 2,
                    0 <= S["ts"][n], S["ts"][n] <= 2, S["gvlen"][n] >= 0,
                    z3.If(S["status"][n] == UP,
                          (S["ts"][n] == EATING) == (S["token"][n] != self.no_token()),
                          S["token"][n] == self.no_token())]
        return z3.And(*out)

    @property
    def lemmas(self):
        allL = {"Types": self.Types, "LastIndex": self.LastIndex, "LegalStates": self.LegalStates,
                "HeldNotStale": self.HeldNotStale}
        if not self.ring_lemmas_apply:
            # the founder's ring at any N (on two nodes Lists, Founder and
            # RingUp below say as much)
            allL["EatersFresh"] = self.EatersFresh
            if not self.ColdStart:
                allL["RingUp"] = self.RingUp
            if self.founder_lemmas_apply:
                allL["FounderRing"] = self.FounderRing
        if self.ring_lemmas_apply:
            allL.update({"RingUp": self.RingUp, "Lists": self.Lists, "Founder": self.Founder,
                         "Alone": self.Alone, "Calls": self.Calls, "OneInFlight": self.OneInFlight,
                         "OwnInFlight": self.OwnInFlight, "OneValid": self.OneValid, "Claims": self.Claims,
                         "PendingClaims": self.PendingClaims, "ClaimsNoToken": self.ClaimsNoToken,
                         "ViewRings": self.ViewRings, "Behind": self.Behind, "AloneSeen": self.AloneSeen,
                         "ViewNumbers": self.ViewNumbers, "Reserved": self.Reserved,
                         "ConsistentHistory": self.ConsistentHistory})
        allL["AtMostOneToken"] = self.AtMostOneToken
        names = self._lemma_names or list(allL)
        return {k: allL[k] for k in names}

    # --- the two-node ring under the fixes (docs/proofs.md, Raincore) -------------------
    def _L(self, S, n):
        return Tok.seq(S["last"][n])

    def _eat(self, S, n):
        return z3.And(S["status"][n] == UP, S["ts"][n] == EATING)

    def _valid(self, S, m):
        """Token m is valid at its destination: its number is above the
        destination's lastToken's (seed 004: "A token is valid when its
        sequence number is bigger than the lastToken Sequence number")."""
        return Tok.seq(m) > self.R.node_table(Tok.dest(m), lambda y: self._L(S, y))

    def _ring_no(self, v):
        return z3.And(0 < v, v < len(self.R.all))

    def _live(self, S, n, x):
        """x is a live claim of n: n's own YES 911 for its current claim, n up,
        Starving and not recovered (what Regenerate needs, but for the
        arrival)."""
        return z3.And(M9.orig(x) == n, M9.status(x) == YES, S["status"][n] == UP, S["ts"][n] == STARVING,
                      z3.Not(S["rec"][n]), M9.seq(x) == self._L(S, n))

    def RingUp(self, S):
        """Without ColdStart no node of the initial ring is ever Off."""
        return z3.And(*[S["status"][n] != OFF for n in self.nodes if n in self.InitRing])

    def Lists(self, S):
        """A held token lists its holder; a lastToken lists its node and is a
        ring (non-empty); lastToken numbers are >= 0; an Eating node is not
        a recovered one, and its token's nodelist is a ring."""
        out = []
        for n in self.nodes:
            lt, tk = S["last"][n], S["token"][n]
            out += [self._L(S, n) >= 0, self._ring_no(Tok.nl(lt)), self.R.member_c(n, Tok.nl(lt)),
                    z3.Implies(self._eat(S, n), z3.And(z3.Not(S["rec"][n]), self._ring_no(Tok.nl(tk)),
                                                       self.R.member_c(n, Tok.nl(tk))))]
        return z3.And(*out)

    @property
    def founder_lemmas_apply(self) -> bool:
        """FounderRing's premise, at any N: node 1 is the stable founder, in
        the steady initial ring (no cold start)."""
        return self.StableFounder and not self.ColdStart and 1 in self.InitRing

    def FounderRing(self, S):
        """The stable founder at any N: node 1 is up and never recovered, and
        every ring a token carries lists it (each lastToken, an eater's
        token, every token in flight): a delivery failure removes only a node
        that is not up, and the founder never goes down."""
        m = z3.Const(f"{S['tag']}_fr_m", Tok)
        on1 = lambda t: self.R.member_c(1, Tok.nl(t))  # noqa: E731
        return z3.And(S["status"][1] == UP, z3.Not(S["rec"][1]),
                      *[on1(S["last"][n]) for n in self.nodes],
                      *[z3.Implies(self._eat(S, n), on1(S["token"][n])) for n in self.nodes],
                      z3.ForAll([m], z3.Implies(S["tm"][m], on1(m)), patterns=[S["tm"][m]]))

    def EatersFresh(self, S):
        """An Eating node is not a recovered one (it accepted a token, which
        clears the mark, or regenerated, which needs it clear)."""
        return z3.And(*[z3.Implies(self._eat(S, n), z3.Not(S["rec"][n])) for n in self.nodes])

    def Founder(self, S):
        """Node 1 (StableFounder) is up and never a recovered node; another
        node eats only a token numbered at least node 1's lastToken."""
        return z3.And(S["status"][1] == UP, z3.Not(S["rec"][1]),
                      *[z3.Implies(self._eat(S, n), Tok.seq(S["token"][n]) >= self._L(S, 1))
                        for n in self.nodes if n != 1])

    def Alone(self, S):
        """The single-node ring: a node whose lastToken lists it alone eats
        (unless recovered); only the founder is ever alone, and then the
        other node is down or recovered; a node eating a token that lists it
        alone has that lastToken."""
        R, out = self.R, []
        for n in self.nodes:
            alone = R.of((n,))
            out += [z3.Implies(z3.And(S["status"][n] == UP, z3.Not(S["rec"][n]), Tok.nl(S["last"][n]) == alone),
                               self._eat(S, n)),
                    z3.Implies(z3.And(self._eat(S, n), Tok.nl(S["token"][n]) == alone),
                               Tok.nl(S["last"][n]) == alone)]
            if n != 1:
                out += [Tok.nl(S["last"][n]) != alone,
                        z3.Implies(self._eat(S, n), Tok.nl(S["token"][n]) != alone)]
        out += [z3.Implies(Tok.nl(S["last"][1]) == R.of((1,)), z3.Or(S["status"][k] != UP, S["rec"][k]))
                for k in self.nodes if k != 1]
        return z3.And(*out)

    def Calls(self, S):
        """A 911 in flight: its originator, current and destination nodes are
        nodes, its number is at most its originator's lastToken's, and its
        nodelist is a ring of all N nodes."""
        x = z3.Const(f"{S['tag']}_ca_x", M9)
        node = lambda v: z3.And(1 <= v, v <= self.N)  # noqa: E731
        return z3.ForAll([x], z3.Implies(S["m9"][x], z3.And(
            node(M9.orig(x)), node(M9.cur(x)), node(M9.dest(x)), M9.seq(x) >= 0,
            M9.seq(x) <= self.R.node_table(M9.orig(x), lambda y: self._L(S, y)),
            self._ring_no(M9.nl(x)), self.R.length(M9.nl(x)) == self.N)), patterns=[S["m9"][x]])

    def OneInFlight(self, S):
        """At most one token is in flight (two nodes)."""
        m, m2 = z3.Const(f"{S['tag']}_of_m", Tok), z3.Const(f"{S['tag']}_of_m2", Tok)
        return z3.ForAll([m, m2], z3.Implies(z3.And(S["tm"][m], S["tm"][m2]), m == m2),
                         patterns=[multipattern(S["tm"][m], S["tm"][m2])])

    def OwnInFlight(self, S):
        """A token in flight was sent by its current node, which is up,
        Hungry, not recovered, and whose lastToken has its number; it lists
        its sender and its destination (another node); no other node eats;
        a token sent by a node other than the founder is valid."""
        m = z3.Const(f"{S['tag']}_oi_m", Tok)

        def sent_by(n):
            return z3.And(Tok.cur(m) == n, self._ring_no(Tok.nl(m)), S["status"][n] == UP, S["ts"][n] == HUNGRY,
                          z3.Not(S["rec"][n]), Tok.seq(m) == self._L(S, n),
                          *[z3.Not(self._eat(S, k)) for k in self.nodes if k != n],
                          *([self._valid(S, m)] if n != 1 else []),
                          1 <= Tok.dest(m), Tok.dest(m) <= self.N, Tok.dest(m) != n,
                          self.R.member_c(n, Tok.nl(m)), self.R.member(Tok.dest(m), Tok.nl(m)))
        return z3.ForAll([m], z3.Implies(S["tm"][m], z3.Or(*[sent_by(n) for n in self.nodes])),
                         patterns=[S["tm"][m]])

    def OneValid(self, S):
        """An Eating live node excludes every valid token in flight, and two
        valid tokens in flight are the same."""
        m, m2 = z3.Const(f"{S['tag']}_ov_m", Tok), z3.Const(f"{S['tag']}_ov_m2", Tok)
        eat = z3.Or(*[self._eat(S, n) for n in self.nodes])
        return z3.And(
            z3.ForAll([m], z3.Implies(z3.And(S["tm"][m], self._valid(S, m)), z3.Not(eat)), patterns=[S["tm"][m]]),
            z3.ForAll([m, m2], z3.Implies(z3.And(S["tm"][m], S["tm"][m2], self._valid(S, m), self._valid(S, m2)),
                                          m == m2), patterns=[multipattern(S["tm"][m], S["tm"][m2])]))

    def Claims(self, S):
        """For a 911 of n for its current claim (YES, number = lastToken's,
        n not recovered): n is not Hungry.  For a live claim of n: once the
        other node k has passed it on, k is up, does not eat, and its claim
        is lower (or the same and k's id lower: the seed's veto rule); once
        it came back without k (k was down: 911DeliveryFailure), k is down
        or recovered; while it is on its way to k, an Eating k holds a token
        numbered at least the claim."""
        x = z3.Const(f"{S['tag']}_cl_x", M9)
        out = []
        for n in self.nodes:
            others = [k for k in self.nodes if k != n]
            cs = [z3.Implies(z3.And(S["m9"][x], M9.orig(x) == n, M9.status(x) == YES, M9.seq(x) == self._L(S, n),
                                    z3.Not(S["rec"][n]), S["status"][n] == UP), S["ts"][n] != HUNGRY)]
            live = z3.And(S["m9"][x], self._live(S, n, x))
            for k in others:
                ck = self.claim_seq(S, k)
                cs.append(z3.Implies(z3.And(live, M9.cur(x) == k), z3.And(
                    S["status"][k] == UP, z3.Not(self._eat(S, k)),
                    z3.Or(ck < M9.seq(x), z3.And(ck == M9.seq(x), k < n)))))
                cs.append(z3.Implies(z3.And(live, M9.cur(x) == n, M9.dest(x) == k, self._eat(S, k)),
                                     Tok.seq(S["token"][k]) >= M9.seq(x)))
            cs.append(z3.Implies(z3.And(live, M9.cur(x) == n, M9.dest(x) == n),
                                 z3.And(*[z3.Or(S["status"][k] != UP, S["rec"][k]) for k in others])))
            out.append(z3.ForAll([x], z3.And(*cs), patterns=[S["m9"][x]]))
        return z3.And(*out)

    def PendingClaims(self, S):
        """A live claim of n on its way to k while k's own token is in flight:
        k will veto it (k's lastToken number is higher, or the same and k's
        id higher)."""
        out = []
        for n in self.nodes:
            for k in self.nodes:
                if k == n:
                    continue
                x = z3.Const(f"{S['tag']}_pc_x_{n}_{k}", M9)
                m = z3.Const(f"{S['tag']}_pc_m_{n}_{k}", Tok)
                pend = z3.And(S["m9"][x], self._live(S, n, x), M9.cur(x) == n, M9.dest(x) == k)
                out.append(z3.ForAll([x, m], z3.Implies(
                    z3.And(pend, S["tm"][m], Tok.cur(m) == k),
                    z3.Or(self._L(S, k) > M9.seq(x), z3.And(self._L(S, k) == M9.seq(x), k > n))),
                    patterns=[multipattern(S["m9"][x], S["tm"][m])]))
        return z3.And(*out)

    def ClaimsNoToken(self, S):
        """While a live claim has been passed on (or came back without the
        other node), no token is in flight."""
        out = []
        for n in self.nodes:
            x = z3.Const(f"{S['tag']}_cn_x_{n}", M9)
            m = z3.Const(f"{S['tag']}_cn_m_{n}", Tok)
            out.append(z3.ForAll([x, m], z3.Implies(
                z3.And(S["m9"][x], self._live(S, n, x), z3.Or(M9.cur(x) != n, M9.dest(x) == n)),
                z3.Not(S["tm"][m])), patterns=[multipattern(S["m9"][x], S["tm"][m])]))
        return z3.And(*out)

    # --- the views of the two-node ring (ConsistentHistory) ----------------------------
    def _entries(self, S, n, f, tag):
        """f(i, gv[n][i]) for every index i in 1..Len(globalView[n])."""
        i = z3.Int(f"{S['tag']}_{tag}_{n}")
        gv = S["gv"][n]
        return z3.ForAll([i], z3.Implies(z3.And(1 <= i, i <= S["gvlen"][n]), f(i, gv[i])), patterns=[gv[i]])

    def ViewRings(self, S):
        """Every ring of the two-node ring is <<1, 2>> or the founder alone:
        node 2's localView, lastToken nodelist, held token and committed
        views are <<1, 2>> (or NULL); node 1's are <<1, 2>> or <<1>>; a
        token in flight lists <<1, 2>>."""
        R12, R1 = self.R.of((1, 2)), self.R.of((1,))
        two = lambda v: z3.Or(v == R12, v == R1)  # noqa: E731
        m = z3.Const(f"{S['tag']}_vr_m", Tok)
        return z3.And(
            *[z3.And(S["gvlen"][n] >= 1, S["gv"][n][1] == R12) for n in self.nodes],
            z3.Implies(S["lv"][1] == R1, z3.And(S["li"][1] >= 1, S["gv"][1][S["li"][1]] == R1)),
            S["lv"][2] == R12, Tok.nl(S["last"][2]) == R12, z3.Implies(self._eat(S, 2), Tok.nl(S["token"][2]) == R12),
            two(S["lv"][1]), two(Tok.nl(S["last"][1])), z3.Implies(self._eat(S, 1), two(Tok.nl(S["token"][1]))),
            z3.ForAll([m], z3.Implies(S["tm"][m], Tok.nl(m) == R12), patterns=[S["tm"][m]]),
            self._entries(S, 2, lambda i, v: z3.Or(v == 0, v == R12), "vr"),
            self._entries(S, 1, lambda i, v: z3.Or(v == 0, two(v)), "vr"))

    def Behind(self, S):
        """Node 2 has committed views only at indices node 1 has reached."""
        return self._entries(S, 2, lambda i, v: z3.Implies(v != 0, i <= S["gvlen"][1]), "bh")

    def AloneSeen(self, S):
        """A single-node view node 1 committed (node 2 down) lies within node
        2's globalView once node 2 is up and has held a token again."""
        R1 = self.R.of((1,))
        back = z3.And(S["status"][2] == UP, z3.Not(S["rec"][2]))
        return self._entries(S, 1, lambda i, v: z3.Implies(z3.And(v == R1, back), i <= S["gvlen"][2]), "as")

    def ViewNumbers(self, S):
        """The token's globalViewNumber and the two globalView lengths l1, l2.
        Node 1's token (held, in flight, or its lastToken while it does not
        eat) carries l1; node 2's carries at least l1 and at most l2.  The
        lengths differ by at most one.  Node 2 one ahead (it reserved a slot
        node 1 has not reached): that slot is NULL, node 1's localView is
        the ring, a token carrying less than l2 meets node 1 in Chaos (it
        will reserve the same slot), and while node 2 is back (up, not
        recovered) node 1 neither eats nor has a token in flight, and node
        2's token is the newer.  Node 1 one ahead: the symmetric facts.
        Node 1 still on its single-node view while node 2 is back: node 2
        has taken node 1's rejoin token (the lengths are equal, node 2 is in
        Chaos, and holds or sent the newer token)."""
        m = z3.Const(f"{S['tag']}_vn_m", Tok)
        l1, l2 = S["gvlen"][1], S["gvlen"][2]
        back = z3.And(S["status"][2] == UP, z3.Not(S["rec"][2]))
        eat1, eat2 = self._eat(S, 1), self._eat(S, 2)
        L1, L2 = self._L(S, 1), self._L(S, 2)
        chaos1 = S["vs"][1] == CHAOS
        tok = lambda f: z3.ForAll([m], z3.Implies(S["tm"][m], f(m)), patterns=[S["tm"][m]])  # noqa: E731
        newer2 = z3.Or(z3.And(eat2, Tok.seq(S["token"][2]) >= L1), L2 > L1)
        return z3.And(
            z3.If(eat1, Tok.gvn(S["token"][1]) == l1, Tok.gvn(S["last"][1]) == l1),
            z3.Implies(eat2, z3.And(Tok.gvn(S["token"][2]) >= l1, Tok.gvn(S["token"][2]) <= l2)),
            Tok.gvn(S["last"][2]) <= l2,
            z3.Implies(z3.And(back, z3.Not(eat1), z3.Not(eat2), L2 >= L1), Tok.gvn(S["last"][2]) >= l1),
            z3.Implies(z3.And(back, eat1), Tok.seq(S["token"][1]) >= L2),
            tok(lambda m: z3.If(Tok.cur(m) == 1, Tok.gvn(m) == l1, z3.And(Tok.gvn(m) >= l1, Tok.gvn(m) <= l2))),
            l2 <= l1 + 1,
            z3.Implies(back, l1 <= l2 + 1),
            z3.Implies(S["rec"][2], S["vs"][2] == CHAOS),
            z3.Implies(l2 == l1 + 1, z3.And(
                S["gv"][2][l2] == 0, S["lv"][1] == self.R.of((1, 2)),
                z3.Implies(eat1, chaos1),
                z3.Implies(z3.And(eat2, Tok.gvn(S["token"][2]) < l2), chaos1),
                tok(lambda m: z3.Implies(z3.Or(Tok.cur(m) == 1, Tok.gvn(m) < l2), chaos1)))),
            z3.Implies(z3.And(back, l2 == l1 + 1), z3.And(
                z3.Not(eat1), z3.Or(eat2, L2 >= L1),
                z3.Implies(z3.And(z3.Not(eat2), Tok.gvn(S["last"][2]) < l2), chaos1),
                tok(lambda m: Tok.cur(m) != 1))),
            z3.Implies(z3.And(back, l1 == l2 + 1), z3.And(
                z3.Not(eat2), S["gv"][1][l1] == 0, z3.Or(eat1, L1 >= L2),
                tok(lambda m: Tok.cur(m) != 2))),
            z3.Implies(z3.And(back, S["lv"][1] == self.R.of((1,))), z3.And(
                l1 == l2, S["vs"][2] == CHAOS, z3.Not(eat1), newer2,
                tok(lambda m: Tok.cur(m) != 1))))

    def Reserved(self, S):
        """A node in Reserve has its last slot NULL (reserved); node 2's
        reserved slot is not where node 1 committed the single-node view,
        node 1 has reached it once node 1 has the token, and node 2's token
        carries its index."""
        R1 = self.R.of((1,))
        m = z3.Const(f"{S['tag']}_rs_m", Tok)
        l1, l2 = S["gvlen"][1], S["gvlen"][2]
        res = lambda n: z3.And(S["status"][n] == UP, S["vs"][n] == RESERVE)  # noqa: E731
        return z3.And(
            z3.Implies(res(1), z3.And(l1 >= 1, S["gv"][1][l1] == 0)),
            z3.Implies(res(2), z3.And(
                l2 >= 1, S["gv"][2][l2] == 0, z3.Implies(l2 <= l1, S["gv"][1][l2] != R1),
                z3.Implies(self._eat(S, 1), l1 >= l2), z3.Implies(self._eat(S, 2), Tok.gvn(S["token"][2]) == l2),
                z3.ForAll([m], z3.Implies(S["tm"][m], z3.If(Tok.cur(m) == 1, l1 >= l2, Tok.gvn(m) == l2)),
                          patterns=[S["tm"][m]]))))

    def HeldNotStale(self, S):
        """A held token is never older than its holder's lastToken (it was
        accepted above lastToken's number, or is lastToken's copy)."""
        return z3.And(*[z3.Implies(z3.And(S["status"][n] == UP, S["ts"][n] == EATING),
                                   Tok.seq(S["token"][n]) >= Tok.seq(S["last"][n])) for n in self.nodes])


# The lemmas proved inductive for the fixed protocol (docs/proofs.md); the
# fixed variant adds AtMostOneToken, whose consecution is still open.
LEMMAS_PROVED = ("Types", "LastIndex", "LegalStates", "HeldNotStale")
# Those and the N-node lemmas of the founder's ring under the fixes
# (no cold start, StableFounder): proved at N = 3, 4 and 5 with LegalStates;
# AtMostOneToken at N >= 3 is not: the fixed protocol breaks it there (F8,
# docs/raincore.md; docs/proofs.md, Raincore, What remains).
LEMMAS_PROVED_N = LEMMAS_PROVED + ("EatersFresh", "RingUp", "FounderRing")
# The seed as written is checked against those without LastIndex (its one
# quantifier; no other lemma reads the views) and the property: every query
# is then quantifier-free, and the open ones give CTIs at once instead of
# spending their time-out on `unknown`.
FLAWED_LEMMAS = ("Types", "LegalStates", "HeldNotStale", "AtMostOneToken")


def matrix_encoding(N: int, *, constants: str, **kw) -> RaincoreEncoding:
    """A variant of the proof matrix (spec/Raincore/manifest.json, "proofs"):
    manifest model ``constants``'s constants, at N nodes (all in the initial
    ring, InitSeq = N, at least 2) when that model has another size.  The
    fixed variant's lemmas are those of the two-node ring (FixedRing2); at
    other N, FixedLegalStates proves LegalStates with the lemmas that hold
    at any N and the founder's ring (N = 3, 4, 5); AtMostOneToken is false
    at N = 3, 4, 5 under the fixes (F8; docs/proofs.md, Raincore)."""
    c = manifest_constants(constants)
    if int(c["N"]) != N:
        c.update(N=N, InitSize=N, InitSeq=max(N, 2))
    return RaincoreEncoding(c, **kw)
