"""SEQUENCER over FLUSH at a fixed N: the lemmas of the inductive invariant
for NoDuplicates and SurvivorTotalOrder over ``relation.SequencerFlushRelation``
(docs/proofs.md states each in words).
"""

from __future__ import annotations

from itertools import product
import z3
from ...sequencerflush import NO_INIT
from ..prover import first, multipattern, select
from ..flush.relation import PHASE_NO as PH
from .relation import FLUSH_TY, Msg, SequencerFlushRelation, TY


class SequencerFlushEncoding(SequencerFlushRelation):
    """SEQUENCER over FLUSH at fixed N: the relation and its lemmas."""

    @property
    def lemmas(self):
        out = {"Chans": self.Chans, "Vids": self.Vids, "Lens": self.Lens, "Crashes": self.Crashes,
               "MsgViews": self.MsgViews, "Quiet": self.Quiet, "Bounds": self.Bounds}
        if not self.UD:
            # plain SEQUENCER without a crash (RecvData delivers at once)
            out.update({"Shapes": self.Shapes, "Forwards": self.Forwards,
                        # one lemma per member: smaller queries (RecvData(1, 1) took 8-10 s with one)
                        **{f"Sequence{m}": (lambda S, m=m: self.Sequence(S, m)) for m in self.M},
                        "SequenceOrder": self.SequenceOrder, "Fresh": self.Fresh})
        if self.N == 2 and self.MC <= 1 and not self.UD:
            # after the crash (the plan of docs/proofs.md: one survivor)
            out.update({"Alone": self.Alone, "Flush2": self.Flush2, "AfterView": self.AfterView,
                        "Domain": self.Domain, "FwdSender": self.FwdSender, "DigestPrefix": self.DigestPrefix,
                        "CrashedQuiet": self.CrashedQuiet, "Senders": self.SendersOk, "DataSource": self.DataSource,
                        "RecvBound": self.RecvBound, "Candidates": self.Candidates})
        if self.N >= 3 and self.MC <= 1 and not self.UD and not self.RA:
            # after the crash, N >= 3 (docs/proofs.md, "SEQUENCER over FLUSH", N = 3;
            # FwdOrder: without ResendAlways nothing is re-sent to an unchanged coordinator)
            out.update({"OneFlush": self.OneFlush, "FlushState": self.FlushState, "Oks": self.Oks,
                        "Records": self.Records, "Once": self.Once, "StartMsgs": self.StartMsgs, "OkMsgs": self.OkMsgs,
                        "FcMsgs": self.FcMsgs, "ViewMsgs1": self.ViewMsgs1, "StopMsgs": self.StopMsgs,
                        "Chain": self.Chain, "Follow": self.Follow, "ViewOne": self.ViewOne,
                        "LogOrder": self.LogOrder, "FwdOrder": self.FwdOrder, "FreshOne": self.FreshOne, "RecvSent": self.RecvSent,
                        "SentBound": self.SentBound, "FwdTarget": self.FwdTarget,
                        "ViewData": self.ViewData, "NoOne": self.NoOne,

                        # N-general lemmas of the N = 2 proof
                        "Domain": self.Domain, "FwdSender": self.FwdSender, "Senders": self.SendersOk,
                        "DataSource": self.DataSource, "DigestPrefix": self.DigestPrefix,
                        "RecvBound": self.RecvBound, "Candidates": self.Candidates})
            if "SurvivorTotalOrder" in self.properties:
                # view 2: the order of deliveries after the view change (the
                # ghosts np and dp; an encoding for NoDuplicates alone does
                # without them)
                out.update({"Chain2": lambda S: self.Chain(S, 2), "Follow2": lambda S: self.Follow(S, 2),
                            "DelG": self.DelG, "RecG": self.RecG, "V2Digest": self.V2Digest, "AfterView2": self.AfterView2, "NpLog": self.NpLog,
                            "ProcA": self.ProcA, "Ord": self.Ord, "Covers": self.Covers})
        out.update({"NoDuplicates": self.NoDuplicates, "SurvivorTotalOrder": self.SurvivorTotalOrder})
        for name in ("NoDuplicates", "SurvivorTotalOrder"):
            if name not in self.properties:
                del out[name]
        return out

    # --- N >= 3, one crash: the flush after the crash -----------------------------------
    def _crash(self, S):
        return z3.Or(*[S["crashed"][x] for x in self.M])

    def _initiator(self, S):
        """The flush initiator after the crash: the least live member."""
        return first(((self.alive(S, x), x) for x in self.M[:-1]), z3.IntVal(self.M[-1]))

    def OneFlush(self, S):
        """One crash: at most two views; the first is every member, the second
        (once decided) the live members; the crashed member crashed before any
        flush (view 1, phase Normal, no initiator, latch open, nothing
        recorded)."""
        M, nv = self.M, S["nv"][()]
        cs = [nv >= 1, nv <= 2, *[S["vin"][x][1] for x in M],
              z3.Implies(nv == 2, z3.And(self._crash(S), self._sel_m(S["vid"], self._initiator(S)) == 2,
                                         *[S["vin"][x][2] == self.alive(S, x) for x in M]))]
        # a channel to a crashed member is empty (the crash empties it, nothing is sent to it after)
        cs += [z3.Implies(S["crashed"][q], S["hd"][p, q] == S["tl"][p, q]) for (p, q) in S["hd"]]
        for x in M:
            cs.append(z3.Implies(S["crashed"][x], z3.And(
                S["vid"][x] == 1, S["phase"][x] == PH["Normal"], S["fi"][x] == NO_INIT, z3.Not(S["blocked"][x]),
                *[z3.Not(S["comp"][x, y]) for y in M], *[z3.Not(S["oks"][x, y]) for y in M])))
        return z3.And(*cs)

    def FlushState(self, S):
        """One crash, the initiator a (the least live member): a live member
        follows a or none; in a flush it is in view 1 and follows a; its
        latch is closed iff it completed, or it installed view 2 and awaits
        STOP_FLUSH; in view 2 its phase is Normal and a is in view 2 too; a
        member other than a in a flush or completed finds a in its flush as
        initiator (or in view 2); a that follows itself in view 1 is in its
        flush."""
        M, a = self.M, self._initiator(S)
        vid, ph, fi = S["vid"], S["phase"], S["fi"]
        a_vid = self._sel_m(vid, a)
        a_ph = self._sel_m(ph, a)
        a_fi = self._sel_m(fi, a)
        cs = []
        for m in M:
            cs.append(z3.Implies(self.alive(S, m), z3.And(
                z3.Or(fi[m] == NO_INIT, fi[m] == a),
                z3.Implies(ph[m] != PH["Normal"], z3.And(vid[m] == 1, self._crash(S), fi[m] == a)),
                S["blocked"][m] == z3.Or(ph[m] == PH["Completed"], z3.And(vid[m] == 2, fi[m] != NO_INIT)),
                z3.Implies(vid[m] == 2, z3.And(ph[m] == PH["Normal"], a_vid == 2)),
                z3.Implies(a_vid == 2, z3.Or(vid[m] == 2, ph[m] == PH["Completed"])),
                z3.Implies(z3.And(a_vid == 2, a_fi == a), fi[m] == a),
                z3.Implies(z3.And(m != a, ph[m] != PH["Normal"]),
                           z3.Or(z3.And(a_fi == a, a_vid == 1, a_ph != PH["Normal"]), a_vid == 2)),
                z3.Implies(z3.And(m == a, fi[m] == m, vid[m] == 1), ph[m] != PH["Normal"]))))
        return z3.And(*cs)

    def _sel_m(self, F, x):
        """F[x] for a per-member field F and a term x (a member)."""
        return select(x, ((y, F[y]) for y in self.M))

    def Oks(self, S):
        """Recorded FLUSH_OKs: a member with any is in view 1 in a flush; each
        recorded member is alive and has sent FLUSH_OK (or moved to view 2);
        a member that sent FLUSH_OK recorded its own."""
        M, vid, ph = self.M, S["vid"], S["phase"]
        cs = []
        for m in M:
            for x in M:
                cs.append(z3.Implies(S["oks"][m, x], z3.And(
                    vid[m] == 1, self.alive(S, x),
                    z3.Or(vid[x] == 2, ph[x] == PH["OkSent"], ph[x] == PH["Completed"]))))
            cs.append(z3.Implies(z3.Or(ph[m] == PH["OkSent"], ph[m] == PH["Completed"]), S["oks"][m, m]))
            cs.append(z3.Implies(ph[m] == PH["Completed"], z3.And(*[
                z3.Implies(self.alive(S, x), S["oks"][m, x]) for x in M])))
        return z3.And(*cs)

    def Once(self, S):
        """After the crash a channel holds at most one message of each flush
        type and at most one VIEW (one flush, one view change)."""
        cs = []
        for e in S["hd"]:
            a, h, t = S["ch"][e], S["hd"][e], S["tl"][e]
            i, j = self._q(S, f"on_i{e[0]}{e[1]}"), self._q(S, f"on_j{e[0]}{e[1]}")
            once = z3.Or(*[Msg.ty(a[i]) == ty for ty in FLUSH_TY + (TY["VIEW"],)])
            cs.append(z3.ForAll([i, j], z3.Implies(z3.And(h < i, i < j, j <= t, once),
                                                   Msg.ty(a[j]) != Msg.ty(a[i]))))
        return z3.And(*cs)

    def Records(self, S):
        """A member c holding FLUSH_COMPLETED records is the initiator, in view
        1 in its flush; each record is of a live member in view 1 that
        completed, and is its log (member 1, the coordinator, may have
        logged more since: a prefix of its log)."""
        M, a = self.M, self._initiator(S)
        cs = []
        for c in M:
            for x in M:
                L = S["compL"][c, x]
                j = self._q(S, f"rc{c}{x}")
                pre = z3.And(0 <= L, L <= S["lL"][x], self._prefix(j, L, (S["compS"][c, x], S["compQ"][c, x]),
                                                                 (S["lS"][x], S["lQ"][x])))
                cs.append(z3.Implies(S["comp"][c, x], z3.And(
                    c == a, S["fi"][c] == c, S["vid"][c] == 1, S["phase"][c] != PH["Normal"], self.alive(S, x),
                    S["vid"][x] == 1, S["phase"][x] == PH["Completed"], pre,
                    *([L == S["lL"][x]] if x != 1 else []))))
        return z3.And(*cs)

    def _flushmsg(self, S, ty, body, name):
        """body(p, q, x) for every message x of type ty on every channel p -> q;
        such a message is between two live distinct members after the crash."""
        cs = []
        for (p, q) in S["hd"]:
            def b(x, p=p, q=q):
                if p == q:
                    return Msg.ty(x) != TY[ty]
                return z3.Implies(Msg.ty(x) == TY[ty], z3.And(
                    self._crash(S), self.alive(S, p), self.alive(S, q), body(p, q, x)))
            cs.append(self._queued(S, (p, q), b, f"{name}{p}{q}"))
        return z3.And(*cs)

    def StartMsgs(self, S):
        """A START_FLUSH (view 1) is from the initiator, in view 1 in its own
        flush, to a member in view 1 that has not blocked yet."""
        a = self._initiator(S)
        return self._flushmsg(S, "START_FLUSH", lambda p, q, x: z3.And(
            p == a, S["fi"][p] == p, S["vid"][p] == 1, Msg.view(x) == 1, S["phase"][q] == PH["Normal"],
            S["vid"][q] == 1), "stm")

    def OkMsgs(self, S):
        """A FLUSH_OK (view 1) is from a member in view 1 that sent it (and
        recorded its own) to a member in view 1 that has not completed and
        has not recorded it."""
        return self._flushmsg(S, "FLUSH_OK", lambda p, q, x: z3.And(
            Msg.view(x) == 1, S["vid"][p] == 1, z3.Or(S["phase"][p] == PH["OkSent"], S["phase"][p] == PH["Completed"]),
            S["vid"][q] == 1, S["phase"][q] != PH["Completed"], z3.Not(S["oks"][q, p])), "okm")

    def FcMsgs(self, S):
        """A FLUSH_COMPLETED (view 1) goes to the initiator, in view 1 in its
        flush, which has not recorded its sender; the sender, in view 1,
        completed following the initiator, and the digest is its log (a
        prefix of it for member 1, the coordinator)."""
        a = self._initiator(S)

        def body(p, q, x):
            j = self._q(S, f"fcd{p}{q}")
            L = Msg.dl(x)
            pre = z3.And(0 <= L, L <= S["lL"][p], self._prefix(j, L, (Msg.dS(x), Msg.dQ(x)), (S["lS"][p], S["lQ"][p])))
            return z3.And(q == a, S["fi"][q] == q, S["vid"][q] == 1, S["phase"][q] != PH["Normal"],
                          z3.Not(S["comp"][q, p]), S["vid"][p] == 1, S["phase"][p] == PH["Completed"],
                          S["fi"][p] == q, Msg.view(x) == 1, pre, *([L == S["lL"][p]] if p != 1 else []))
        return self._flushmsg(S, "FLUSH_COMPLETED", body, "fcm")

    def ViewMsgs1(self, S):
        """A VIEW (of view 1) is from the initiator, in view 2, to a member
        still in view 1 that completed following it."""
        a = self._initiator(S)
        return self._flushmsg(S, "VIEW", lambda p, q, x: z3.And(
            p == a, S["vid"][p] == 2, Msg.view(x) == 1, S["vid"][q] == 1, S["phase"][q] == PH["Completed"],
            S["fi"][q] == p), "vwm")

    def StopMsgs(self, S):
        """A STOP_FLUSH (view 2) is from the initiator, in view 2, to a member
        that follows it with its latch closed (in view 2, or completed in view 1)."""
        a = self._initiator(S)
        return self._flushmsg(S, "STOP_FLUSH", lambda p, q, x: z3.And(
            p == a, S["vid"][p] == 2, S["fi"][p] == NO_INIT, Msg.view(x) == 2, S["fi"][q] == p, S["blocked"][q],
            z3.Or(S["vid"][q] == 2, S["phase"][q] == PH["Completed"])), "spm")

    # --- view 1 after the crash: the coordinator's log and its stamped channels ----------
    @staticmethod
    def _stamped(x, v):
        """x is a DATA, START_FLUSH, FLUSH_OK or STOP_FLUSH of view v (it carries a stamp)."""
        return z3.And(z3.Or(*[Msg.ty(x) == TY[t] for t in ("DATA", "START_FLUSH", "FLUSH_OK", "STOP_FLUSH")]),
                      Msg.view(x) == v)

    def Chain(self, S, view=1):
        """In view ``view`` (1: Chain; 2: Chain2, with AfterView2 for what
        follows the VIEW), on a channel from c, the coordinator of c's view v: a stamped
        message of v carries a stamp k <= Len(log[c]) (a DATA: the entry
        log[c][k], k >= 1); the message after it is a stamped message of v
        whose stamp is k, plus one if it is a DATA; the last one carries
        Len(log[c]).  (NAKACK's per-view window: every DATA of c's view went
        out to every live member, in log order.)"""
        cs = []
        for (c, m) in S["hd"]:
            a, h, t = S["ch"][c, m], S["hd"][c, m], S["tl"][c, m]
            v, gS, gQ, gL = S["vid"][c], S["lS"][c], S["lQ"][c], S["lL"][c]
            i, j = self._q(S, f"chi{c}{m}"), self._q(S, f"chj{c}{m}")
            x, y = a[i], a[j]
            isd = Msg.ty(x) == TY["DATA"]
            k = Msg.dl(x)
            one = z3.ForAll([i], z3.Implies(z3.And(h < i, i <= t, self._stamped(x, v)), z3.And(
                z3.If(isd, z3.And(1 <= k, k <= gL, Msg.snd(x) == gS[k], Msg.seq(x) == gQ[k]),
                      z3.And(0 <= k, k <= gL)),
                z3.Implies(i == t, k == gL))), patterns=[x])
            two = z3.ForAll([i, j], z3.Implies(z3.And(h < i, j == i + 1, j <= t, self._stamped(x, v)), z3.And(
                self._stamped(y, v), Msg.dl(y) == k + z3.If(Msg.ty(y) == TY["DATA"], 1, 0))), patterns=[multipattern(x, y)])
            cs.append(z3.Implies(z3.And(self._is_coord(S, c), v == view), z3.And(one, two)))
        return z3.And(*cs)

    def Follow(self, S, view=1):
        """In view ``view`` (as Chain), a live member m in the view of its
        coordinator c (m # c): the
        channel c -> m holds stamped messages of the view only; m's log is
        a prefix of c's; unless m completed (it then discards DATA), the
        first message carries Len(log[m]) (plus one if a DATA), and with
        the channel empty and c alive m's log is c's."""
        cs = []
        for (c, m) in S["hd"]:
            if c == m:
                continue
            a, h, t = S["ch"][c, m], S["hd"][c, m], S["tl"][c, m]
            v, gS, gQ, gL = S["vid"][c], S["lS"][c], S["lQ"][c], S["lL"][c]
            i, j = self._q(S, f"foi{c}{m}"), self._q(S, f"foj{c}{m}")
            x0 = a[h + 1]
            cs.append(z3.Implies(z3.And(self._is_coord(S, c), self.alive(S, m), S["vid"][m] == v, v == view), z3.And(
                z3.ForAll([i], z3.Implies(z3.And(h < i, i <= t), self._stamped(a[i], v))),
                S["lL"][m] <= gL,
                self._prefix(j, S["lL"][m], (S["lS"][m], S["lQ"][m]), (gS, gQ), trigger=True),
                z3.Implies(S["phase"][m] != PH["Completed"], z3.And(
                    z3.Implies(h < t, Msg.dl(x0) == S["lL"][m] + z3.If(Msg.ty(x0) == TY["DATA"], 1, 0)),
                    z3.Implies(z3.And(h == t, self.alive(S, c)), S["lL"][m] == gL))))))
        return z3.And(*cs)

    def ViewOne(self, S):
        """In view 1 the coordinator 1's log G is the order: 1 delivered
        G[1..dL[1]] (the next one heads 1 -> 1 unless 1 completed; once
        completed, its recorded digest covers what it delivered); a live
        member m # 1 in view 1 delivered exactly its log, and has every
        sender in its received-table."""
        M = self.M
        gS, gQ, gL = S["lS"][1], S["lQ"][1], S["lL"][1]
        a, h, t = S["ch"][1, 1], S["hd"][1, 1], S["tl"][1, 1]
        j = self._q(S, "vo_j")
        cs = [z3.Implies(S["vid"][1] == 1, z3.And(
            0 <= S["dL"][1], S["dL"][1] <= gL,
            self._prefix(j, S["dL"][1], (S["dS"][1], S["dQ"][1]), (gS, gQ), trigger=True),
            z3.Implies(z3.And(self.alive(S, 1), S["phase"][1] != PH["Completed"]), z3.And(
                z3.Implies(h < t, Msg.dl(a[h + 1]) == S["dL"][1] + 1),
                z3.Implies(h == t, S["dL"][1] == gL))),
            z3.Implies(z3.And(self.alive(S, 1), S["phase"][1] == PH["Completed"]), z3.And(
                S["comp"][1, 1], S["dL"][1] <= S["compL"][1, 1]))))]
        for m in M[1:]:
            k = self._q(S, f"vo_k{m}")
            cs.append(z3.Implies(z3.And(self.alive(S, m), S["vid"][m] == 1), z3.And(
                S["dL"][m] == S["lL"][m], *[S["rdom"][m, x] for x in M],
                self._prefix(k, S["dL"][m], (S["dS"][m], S["dQ"][m]), (S["lS"][m], S["lQ"][m]), trigger=True))))
        return z3.And(*cs)

    def LogOrder(self, S):
        """In view 1, G = log[1] holds each sender's messages in strictly
        increasing seqno order, each a member's, each seqno in 1..sent."""
        return z3.Implies(S["vid"][1] == 1, self._ordered(S, "lo"))

    def FwdOrder(self, S):
        """The FORWARDs of p on p -> 1 come in increasing seqno order, each at
        most sent[p], above every entry of p in 1's log, every
        received-table value for p and every DATA of p queued on 1 -> m
        (1 sequences them once, in FIFO order, in
        whichever view; nobody else forwards to 1 and without ResendAlways
        nothing is re-sent to it; after 1's crash the channel is empty)."""
        cs = []
        gS, gQ, gL = S["lS"][1], S["lQ"][1], S["lL"][1]
        for p in self.M[1:]:
            a, h, t = S["ch"][p, 1], S["hd"][p, 1], S["tl"][p, 1]
            i, j, k = self._q(S, f"fo_i{p}"), self._q(S, f"fo_j{p}"), self._q(S, f"fo_k{p}")
            isf = lambda x: Msg.ty(x) == TY["FORWARD"]  # noqa: E731
            cs.append(z3.ForAll([i, j], z3.Implies(z3.And(h < i, i < j, j <= t, isf(a[i]), isf(a[j])),
                                                   Msg.seq(a[i]) < Msg.seq(a[j]))))
            cs.append(z3.ForAll([i], z3.Implies(z3.And(h < i, i <= t, isf(a[i])), z3.And(
                Msg.seq(a[i]) <= S["sent"][p], *[S["rval"][m, p] < Msg.seq(a[i]) for m in self.M]))))
            cs.append(z3.ForAll([i, k], z3.Implies(z3.And(h < i, i <= t, isf(a[i]), 1 <= k, k <= gL, gS[k] == p),
                                                   gQ[k] < Msg.seq(a[i]))))
            for m in self.M:
                b, hb, tb = S["ch"][1, m], S["hd"][1, m], S["tl"][1, m]
                j2 = self._q(S, f"fo_d{p}{m}")
                cs.append(z3.ForAll([i, j2], z3.Implies(z3.And(
                    h < i, i <= t, isf(a[i]), hb < j2, j2 <= tb, Msg.ty(b[j2]) == TY["DATA"], Msg.snd(b[j2]) == p),
                    Msg.seq(b[j2]) < Msg.seq(a[i])), patterns=[multipattern(a[i], b[j2])]))
        return z3.And(*cs)

    def FwdTarget(self, S):
        """A FORWARD on p -> q goes to the coordinator of p's view: p forwards
        to it, and re-sends its forward-table to the new coordinator as it
        installs the new view (without ResendAlways only when that changes);
        what p sent to a coordinator that crashed went with it."""
        return z3.And(*[self._queued(S, (p, q), lambda x, p=p, q=q: z3.Implies(
            Msg.ty(x) == TY["FORWARD"], self._coord(S, S["vid"][p]) == q), f"ft{p}{q}") for (p, q) in S["hd"]])

    def ViewData(self, S):
        """While 1 coordinates both views (a member other than 1 crashed): on
        1 -> m, a DATA queued behind the VIEW (1 multicasts in view 2 before
        m installs it) is above m's received-table value for its sender and
        above every entry of that sender in the VIEW's digest; every FORWARD
        on p -> 1 is above every entry of p in the digest of a VIEW on
        1 -> m (1 sequences FIFO; the digest is a prefix of its view-1 log)."""
        cs = []
        for m in self.M:
            a, h, t = S["ch"][1, m], S["hd"][1, m], S["tl"][1, m]
            i, j, k = (self._q(S, f"vd_{n}{m}") for n in "ijk")
            x, y = a[i], a[j]
            pre = z3.And(h < i, i < j, j <= t, Msg.ty(x) == TY["VIEW"], Msg.ty(y) == TY["DATA"])
            cs.append(z3.ForAll([i, j], z3.Implies(pre, Msg.seq(y) > self._pick(S["rval"], m, Msg.snd(y))),
                                patterns=[multipattern(x, y)]))
            cs.append(z3.ForAll([i, j, k], z3.Implies(z3.And(pre, 1 <= k, k <= Msg.dl(x), Msg.dS(x)[k] == Msg.snd(y)),
                                                      Msg.dQ(x)[k] < Msg.seq(y)),
                                patterns=[multipattern(x, y, Msg.dS(x)[k])]))
            for p in self.M[1:]:
                b, hb, tb = S["ch"][p, 1], S["hd"][p, 1], S["tl"][p, 1]
                i2, j2, k2 = (self._q(S, f"vf_{n}{m}{p}") for n in "ijk")
                f, v = b[i2], a[j2]
                cs.append(z3.ForAll([i2, j2, k2], z3.Implies(z3.And(
                    hb < i2, i2 <= tb, Msg.ty(f) == TY["FORWARD"], h < j2, j2 <= t, Msg.ty(v) == TY["VIEW"],
                    1 <= k2, k2 <= Msg.dl(v), Msg.dS(v)[k2] == p), Msg.dQ(v)[k2] < Msg.seq(f)),
                    patterns=[multipattern(f, v, Msg.dS(v)[k2])]))
        return z3.Implies(z3.Not(S["crashed"][1]), z3.And(*cs))

    def NoOne(self, S):
        """After 1's crash nothing of 1 is sequenced again: no DATA of view 2
        names 1 as its sender, nor does an entry of a view-2 log (1 never
        forwards; its own multicasts stopped with it)."""
        cs = []
        for e in S["hd"]:
            cs.append(self._queued(S, e, lambda x: z3.Implies(z3.And(Msg.ty(x) == TY["DATA"], Msg.view(x) >= 2),
                                                              Msg.snd(x) != 1), f"n1{e[0]}{e[1]}"))
        for m in self.M:
            j = self._q(S, f"n1l{m}")
            cs.append(z3.Implies(S["vid"][m] >= 2, z3.ForAll([j], z3.Implies(
                z3.And(1 <= j, j <= S["lL"][m]), S["lS"][m][j] != 1), patterns=[S["lS"][m][j]])))
        return z3.Implies(S["crashed"][1], z3.And(*cs))

    # --- view 2 (N >= 3, one crash): SurvivorTotalOrder after the view change -----------
    # a: the initiator (the least live member), the coordinator of view 2;
    # D = delivered[a][1..B], B = closed[a][1]: the VIEW's digest; W = log[a]
    # in view 2.  A member in view 2 delivered D, then the DATA of W it took
    # that were not duplicates, in W's order, each at its first position in
    # W (the ghost dp); a member still in view 1 delivered a prefix of D.
    def _v2(self, S, body):
        """body(a) for the initiator a once view 2 is decided (one crash: a
        is one of the first N - MaxCrashes members)."""
        return z3.And(*[z3.Implies(z3.And(S["nv"][()] == 2, self._initiator(S) == a), body(a))
                        for a in self.M[:self.N - self.MC]])

    @staticmethod
    def _data2(x):
        return z3.And(Msg.ty(x) == TY["DATA"], Msg.view(x) == 2)

    def V2Digest(self, S):
        """View 2 decided: B = closed[a][1] <= Len(delivered[a]); D =
        delivered[a][1..B] holds each sender's seqnos increasing; a live
        member in view 2 closed view 1 at B with D delivered; a live member
        m # a still in view 1 delivered a prefix of D, and D's later entries
        are new for m's table; a VIEW on a -> m carries D."""
        def body(a):
            B = S["cA"][a][1]
            dS, dQ = S["dS"][a], S["dQ"][a]
            i, j = self._q(S, f"vg_i{a}"), self._q(S, f"vg_j{a}")
            cs = [S["vid"][a] == 2, 0 <= B, B <= S["dL"][a],
                  z3.ForAll([i, j], z3.Implies(z3.And(1 <= i, i < j, j <= B, dS[i] == dS[j]), dQ[i] < dQ[j]),
                            patterns=[multipattern(dS[i], dS[j])])]
            for m in self.M:
                if m == a:
                    continue
                k = self._q(S, f"vg_k{a}{m}")
                same = lambda k, m=m: z3.And(S["dS"][m][k] == dS[k], S["dQ"][m][k] == dQ[k])  # noqa: E731
                x = self._q(S, f"vg_x{a}{m}")
                ch, h, t = S["ch"][a, m], S["hd"][a, m], S["tl"][a, m]
                y = ch[x]
                cs.append(z3.Implies(z3.And(self.alive(S, m), S["vid"][m] == 2), z3.And(
                    S["cA"][m][1] == B, B <= S["dL"][m],
                    z3.ForAll([k], z3.Implies(z3.And(1 <= k, k <= B), same(k)), patterns=[S["dS"][m][k], dS[k]]))))
                cs.append(z3.Implies(z3.And(self.alive(S, m), S["vid"][m] == 1), z3.And(
                    S["dL"][m] <= B,
                    z3.ForAll([k], z3.Implies(z3.And(1 <= k, k <= S["dL"][m]), same(k)),
                              patterns=[S["dS"][m][k], dS[k]]),
                    z3.ForAll([k], z3.Implies(z3.And(S["dL"][m] < k, k <= B),
                                              dQ[k] > self._pick(S["rval"], m, dS[k])), patterns=[dS[k]]),
                    z3.ForAll([x, k], z3.Implies(z3.And(h < x, x <= t, Msg.ty(y) == TY["VIEW"]), z3.And(
                        Msg.dl(y) == B, z3.Implies(z3.And(1 <= k, k <= B), z3.And(
                            Msg.dS(y)[k] == dS[k], Msg.dQ(y)[k] == dQ[k])))),
                        patterns=[multipattern(y, Msg.dS(y)[k])]))))
            return z3.And(*cs)
        return self._v2(S, body)

    def AfterView2(self, S):
        """View 2 decided: on a -> m, what follows a VIEW is stamped messages
        of view 2, the first with stamp 0 (1 if a DATA); a VIEW last on the
        channel means a has logged nothing in view 2."""
        def body(a):
            cs = []
            for m in self.M:
                if m == a:
                    continue
                ch, h, t = S["ch"][a, m], S["hd"][a, m], S["tl"][a, m]
                i, j = self._q(S, f"av_i{a}{m}"), self._q(S, f"av_j{a}{m}")
                x, y = ch[i], ch[i + 1]
                cs.append(z3.ForAll([i], z3.Implies(z3.And(h < i, i <= t, Msg.ty(x) == TY["VIEW"]), z3.And(
                    z3.ForAll([j], z3.Implies(z3.And(i < j, j <= t), self._stamped(ch[j], 2))),
                    z3.Implies(i < t, Msg.dl(y) == z3.If(Msg.ty(y) == TY["DATA"], 1, 0)),
                    z3.Implies(i == t, S["lL"][a] == 0))), patterns=[x]))
            return z3.And(*cs)
        return self._v2(S, body)

    def DelG(self, S):
        """While 1 is in view 1, every live member in view 1 delivered a
        prefix of G = log[1] (ViewOne and Follow in one hop: what SendView's
        digest is compared with)."""
        gS, gQ, gL = S["lS"][1], S["lQ"][1], S["lL"][1]
        cs = []
        for m in self.M:
            j = self._q(S, f"dg_{m}")
            cs.append(z3.Implies(z3.And(self.alive(S, m), S["vid"][m] == 1), z3.And(
                S["dL"][m] <= gL, self._prefix(j, S["dL"][m], (S["dS"][m], S["dQ"][m]), (gS, gQ), trigger=True))))
        return z3.Implies(S["vid"][1] == 1, z3.And(*cs))

    def RecG(self, S):
        """While 1 is in view 1, every recorded FLUSH_COMPLETED digest is a
        prefix of G (Records and Follow in one hop)."""
        gS, gQ, gL = S["lS"][1], S["lQ"][1], S["lL"][1]
        cs = []
        for c in self.M:
            for x in self.M:
                L = S["compL"][c, x]
                j = self._q(S, f"rg{c}{x}")
                cs.append(z3.Implies(S["comp"][c, x], z3.And(L <= gL, self._prefix(
                    j, L, (S["compS"][c, x], S["compQ"][c, x]), (gS, gQ), trigger=True))))
        return z3.Implies(S["vid"][1] == 1, z3.And(*cs))

    def NpLog(self, S):
        """A live member that does not coordinate its view took one DATA per
        entry of its log (np, a ghost)."""
        return z3.And(*[z3.Implies(z3.And(self.alive(S, m), z3.Not(self._is_coord(S, m))),
                                   S["np"][m] == S["lL"][m]) for m in self.M])

    def ProcA(self, S):
        """View 2 decided, a the coordinator: on a -> a the view-2 DATA come
        after every FORWARD (re-sent at the view change), in increasing
        stamps above np[a] (those a took), the first one np[a] + 1 (a DATA
        above it has one before it); with none, np[a] is a's log length."""
        def body(a):
            ch, h, t = S["ch"][a, a], S["hd"][a, a], S["tl"][a, a]
            i, j = self._q(S, f"pa_i{a}"), self._q(S, f"pa_j{a}")
            x, y = ch[i], ch[j]
            npa = S["np"][a]
            return z3.And(
                0 <= npa, npa <= S["lL"][a],
                z3.ForAll([i, j], z3.Implies(z3.And(h < i, i < j, j <= t, self._data2(x)), z3.And(
                    Msg.ty(y) != TY["FORWARD"], z3.Implies(self._data2(y), Msg.dl(x) < Msg.dl(y)))),
                    patterns=[multipattern(x, y)]),
                z3.ForAll([i], z3.Implies(z3.And(h < i, i <= t, self._data2(x)), z3.And(
                    Msg.dl(x) >= npa + 1,
                    z3.Implies(Msg.dl(x) > npa + 1, z3.And(i - 1 > h, self._data2(ch[i - 1]))))), patterns=[x]),
                z3.Or(z3.And(h < t, self._data2(ch[t])), npa == S["lL"][a]),
                # (the head, stated: it follows from the clause above at i = h + 1)
                z3.Implies(z3.And(h < t, self._data2(ch[h + 1])), Msg.dl(ch[h + 1]) == npa + 1))
        return self._v2(S, body)

    def Ord(self, S):
        """View 2 decided: a live member m in view 2 delivered, after D, W's
        entries at increasing positions dp (a ghost) among the np[m] it
        took, each at the first position of W that holds it."""
        def body(a):
            W = (S["lS"][a], S["lQ"][a], S["lL"][a])
            cs = []
            for m in self.M:
                B, L, dp = S["cA"][m][1], S["dL"][m], S["dp"][m]
                dS, dQ = S["dS"][m], S["dQ"][m]
                i, j, k = (self._q(S, f"od_{n}{a}{m}") for n in "ijk")
                cs.append(z3.Implies(z3.And(self.alive(S, m), S["vid"][m] == 2), z3.And(
                    S["np"][m] <= W[2],
                    z3.ForAll([j], z3.Implies(z3.And(B < j, j <= L), z3.And(
                        1 <= dp[j], dp[j] <= S["np"][m], dS[j] == W[0][dp[j]], dQ[j] == W[1][dp[j]])),
                        patterns=[dS[j], dp[j]]),
                    z3.ForAll([i, j], z3.Implies(z3.And(B < i, i < j, j <= L), dp[i] < dp[j]),
                              patterns=[multipattern(dS[i], dS[j]), multipattern(dp[i], dp[j])]),
                    z3.ForAll([j, k], z3.Implies(z3.And(B < j, j <= L, 1 <= k, k < dp[j]),
                                                 z3.Or(W[0][k] != dS[j], W[1][k] != dQ[j])),
                              patterns=[multipattern(dS[j], W[0][k]), multipattern(dp[j], W[0][k])]))))
            return z3.And(*cs)
        return self._v2(S, body)

    def Covers(self, S):
        """View 2 decided: every entry of W that a live member m in view 2 has
        taken (the first np[m]) is in m's received-table, at or below its
        value: a later copy of it is a duplicate."""
        def body(a):
            W = (S["lS"][a], S["lQ"][a])
            cs = []
            for m in self.M:
                k = self._q(S, f"cv_{a}{m}")
                cs.append(z3.Implies(z3.And(self.alive(S, m), S["vid"][m] == 2), z3.ForAll([k], z3.Implies(
                    z3.And(1 <= k, k <= S["np"][m]), z3.And(
                        self._pick(S["rdom"], m, W[0][k]), W[1][k] <= self._pick(S["rval"], m, W[0][k]))),
                    patterns=[W[0][k]])))
            return z3.And(*cs)
        return self._v2(S, body)

    def RecvSent(self, S):
        """Every received-table value (the history value outside the domain
        included) lies in 0..sent of its sender."""
        return z3.And(*[z3.And(0 <= S["rval"][m, x], S["rval"][m, x] <= S["sent"][x]) for m in self.M for x in self.M])

    def _sent_ok(self, S, s, q):
        """<<s, q>> names a member s and one of its multicasts so far."""
        return z3.And(1 <= s, s <= self.N, 1 <= q, q <= self._sel_m(S["sent"], s))

    def SentBound(self, S):
        """Every FORWARD and DATA queued, every entry of a log, of a recorded
        digest and of a digest in flight (FLUSH_COMPLETED, VIEW), and every
        seqno in a forward-table (re-sent as FORWARDs at a view change) names
        a member and one of its multicasts so far: its seqno is in 1..sent."""
        cs = []
        for m in self.M:
            q = self._q(S, f"sb_f{m}")
            cs.append(z3.ForAll([q], z3.Implies(S["fwd"][m][q], z3.And(1 <= q, q <= S["sent"][m])),
                                patterns=[S["fwd"][m][q]]))
        for e in S["hd"]:
            a, h, t = S["ch"][e], S["hd"][e], S["tl"][e]
            i, j = self._q(S, f"sb_i{e[0]}{e[1]}"), self._q(S, f"sb_j{e[0]}{e[1]}")
            x = a[i]
            cs.append(z3.ForAll([i], z3.Implies(z3.And(h < i, i <= t, z3.Or(
                Msg.ty(x) == TY["FORWARD"], Msg.ty(x) == TY["DATA"])), self._sent_ok(S, Msg.snd(x), Msg.seq(x))),
                patterns=[x]))
            dig = z3.Or(Msg.ty(x) == TY["VIEW"], Msg.ty(x) == TY["FLUSH_COMPLETED"])
            cs.append(z3.ForAll([i, j], z3.Implies(z3.And(h < i, i <= t, dig, 1 <= j, j <= Msg.dl(x)),
                                                   self._sent_ok(S, Msg.dS(x)[j], Msg.dQ(x)[j])),
                                patterns=[multipattern(x, Msg.dS(x)[j])]))
        for m in self.M:
            j = self._q(S, f"sb_l{m}")
            cs.append(z3.ForAll([j], z3.Implies(z3.And(1 <= j, j <= S["lL"][m]),
                                                self._sent_ok(S, S["lS"][m][j], S["lQ"][m][j])),
                                patterns=[S["lS"][m][j]]))
            for x in self.M:
                k = self._q(S, f"sb_c{m}{x}")
                cs.append(z3.Implies(S["comp"][m, x], z3.ForAll([k], z3.Implies(
                    z3.And(1 <= k, k <= S["compL"][m, x]), self._sent_ok(S, S["compS"][m, x][k], S["compQ"][m, x][k])),
                    patterns=[S["compS"][m, x][k]])))
        return z3.And(*cs)

    def FreshOne(self, S):
        """In view 1, for a live member m in view 1: every entry of G after
        what m delivered is above m's received-table value for its sender."""
        gS, gQ, gL = S["lS"][1], S["lQ"][1], S["lL"][1]
        cs = []
        for m in self.M:
            j = self._q(S, f"f1_{m}")
            cs.append(z3.Implies(z3.And(self.alive(S, m), S["vid"][m] == 1), z3.ForAll([j], z3.Implies(
                z3.And(S["dL"][m] < j, j <= gL), gQ[j] > self._pick(S["rval"], m, gS[j])))))
        return z3.Implies(S["vid"][1] == 1, z3.And(*cs))

    def _queued(self, S, e, body, name):
        """body(msg) for every message queued on channel e."""
        a, h, t = S["ch"][e], S["hd"][e], S["tl"][e]
        i = self._q(S, name)
        return z3.ForAll([i], z3.Implies(z3.And(h < i, i <= t), body(a[i])))

    def Alone(self, S):
        """N = 2, one crash: a flush runs only once the other member crashed,
        so its messages (START_FLUSH, FLUSH_OK, FLUSH_COMPLETED, VIEW,
        STOP_FLUSH) have no receiver: channels hold FORWARD and DATA only."""
        return z3.And(*[self._queued(S, e, lambda x: z3.Or(Msg.ty(x) == TY["FORWARD"], Msg.ty(x) == TY["DATA"]),
                                     f"al{e[0]}{e[1]}") for e in S["hd"]])

    def Flush2(self, S):
        """N = 2: a member's initiator is none or itself, and itself while it is
        in a flush (only the survivor runs one)."""
        return z3.And(*[z3.And(z3.Or(S["fi"][m] == NO_INIT, S["fi"][m] == m),
                               z3.Implies(S["phase"][m] != PH["Normal"], S["fi"][m] == m)) for m in self.M])

    def AfterView(self, S):
        """N = 2, one crash: at most two views, the first is every member; the
        second is the survivor, after which no flush runs: every phase Normal,
        nothing recorded."""
        M = self.M
        nv = S["nv"][()]
        after = z3.And(*[S["vin"][x][2] == z3.Not(S["crashed"][x]) for x in M],
                       *[S["phase"][m] == PH["Normal"] for m in M],
                       *[z3.Not(S["comp"][m, x]) for m in M for x in M])
        return z3.And(nv <= 2, *[S["vin"][x][1] for x in M], z3.Implies(nv == 2, after))

    def CrashedQuiet(self, S):
        """N = 2, one crash: the crashed member crashed before any flush: it
        is in view 1, phase Normal, recorded nothing."""
        return z3.And(*[z3.Implies(S["crashed"][x], z3.And(
            S["vid"][x] == 1, S["phase"][x] == PH["Normal"], S["fi"][x] == NO_INIT,
            *[z3.Not(S["comp"][x, y]) for y in self.M])) for x in self.M])

    def SendersOk(self, S):
        """Every queued DATA or FORWARD, and every entry of a log, names a
        member as its sender."""
        cs = [self._queued(S, e, lambda x: z3.Implies(
            z3.Or(Msg.ty(x) == TY["FORWARD"], Msg.ty(x) == TY["DATA"]), z3.And(1 <= Msg.snd(x), Msg.snd(x) <= self.N)),
            f"so{e[0]}{e[1]}") for e in S["hd"]]
        for m in self.M:
            j = self._q(S, f"lo{m}")
            cs.append(z3.ForAll([j], z3.Implies(z3.And(1 <= j, j <= S["lL"][m]),
                                                z3.And(1 <= S["lS"][m][j], S["lS"][m][j] <= self.N))))
        return z3.And(*cs)

    def DataSource(self, S):
        """A DATA on p -> q was multicast by p as the coordinator of the view it
        names."""
        return z3.And(*[self._queued(S, (p, q), lambda x, p=p: z3.Implies(
            Msg.ty(x) == TY["DATA"], self._coord(S, Msg.view(x)) == p), f"ds{p}{q}") for (p, q) in S["hd"]])

    def Domain(self, S):
        """Before the view change every member has a received-table entry for
        every member (only a view change removes entries); only a crashed
        member's entry is ever removed (it is not in the new view)."""
        return z3.And(z3.Implies(S["nv"][()] == 1, z3.And(*[S["rdom"][m, x] for m in self.M for x in self.M])),
                      *[z3.Implies(z3.Not(S["rdom"][m, x]), S["crashed"][x]) for m in self.M for x in self.M])

    def FwdSender(self, S):
        """A FORWARD on p -> q carries p's own message, and p is not 1 (1 is the
        coordinator of every view while it lives: it never forwards)."""
        return z3.And(*[self._queued(S, (p, q), lambda x, p=p: z3.Implies(
            Msg.ty(x) == TY["FORWARD"], z3.And(Msg.snd(x) == p, p != 1))
            if p != 1 else Msg.ty(x) != TY["FORWARD"], f"fs{p}{q}") for (p, q) in S["hd"]])

    def DigestPrefix(self, S):
        """A member's own recorded FLUSH_COMPLETED digest is a prefix of its
        log, and it is then in phase Completed (it takes no more DATA)."""
        cs = []
        for c in self.M:
            j = self._q(S, f"dp{c}")
            L = S["compL"][c, c]
            cs.append(z3.Implies(S["comp"][c, c], z3.And(
                S["phase"][c] == PH["Completed"], 0 <= L, L <= S["lL"][c],
                self._prefix(j, L, (S["compS"][c, c], S["compQ"][c, c]), (S["lS"][c], S["lQ"][c])))))
        return z3.And(*cs)

    def RecvBound(self, S):
        """Every delivered entry <<s, q>> of m has q <= recv[m][s] (for a sender
        outside the table's domain: the value it had when removed)."""
        return z3.And(*[self._rb(S["dS"][m], S["dQ"][m], S["dL"][m], lambda x, m=m: self._pick(S["rval"], m, x),
                                 f"{S['tag']}_RB{m}") for m in self.M])

    def Candidates(self, S):
        """For a sender s outside m's received-table domain (RecvData will not
        check for duplicates): every DATA of s of m's view queued to m, and
        every FORWARD of s queued to m, is above recv[m][s]."""
        cs = []
        for m, s in product(self.M, self.M):
            body = lambda x, m=m, s=s: z3.Implies(z3.And(Msg.snd(x) == s, z3.Or(  # noqa: E731
                Msg.ty(x) == TY["FORWARD"], z3.And(Msg.ty(x) == TY["DATA"], Msg.view(x) == S["vid"][m]))),
                Msg.seq(x) > S["rval"][m, s])
            cs.append(z3.Implies(z3.Not(S["rdom"][m, s]),
                                 z3.And(*[self._queued(S, (p, m), body, f"cd{m}{s}{p}") for p in self.M])))
        return z3.And(*cs)

    # --- the crash-free lemmas: plain SEQUENCER with member 1 the coordinator ----------
    def _nocrash(self, S):
        return z3.And(*[z3.Not(S["crashed"][x]) for x in self.M])

    def _q(self, S, name):
        return z3.Int(f"{S['tag']}_{name}")

    def Quiet(self, S):
        """Without a crash no view change is pending, so no flush has started:
        one view, every member in it at vid 1, phase Normal, latch open, no
        initiator, no FLUSH_OK or FLUSH_COMPLETED recorded."""
        M = self.M
        cs = [S["nv"][()] == 1]
        for m in M:
            cs += [S["vin"][m][1], S["vid"][m] == 1, S["phase"][m] == PH["Normal"], z3.Not(S["blocked"][m]),
                   S["fi"][m] == NO_INIT]
            cs += [z3.Not(S["comp"][m, x]) for x in M]
        return z3.Implies(self._nocrash(S), z3.And(*cs))

    def Bounds(self, S):
        """sent[m] >= 0; without a crash, m's received-table entry for x lies
        in 0..sent[x]."""
        cs = [S["sent"][m] >= 0 for m in self.M]
        nc = [z3.And(0 <= S["rval"][m, x], S["rval"][m, x] <= S["sent"][x]) for m in self.M for x in self.M]
        return z3.And(*cs, z3.Implies(self._nocrash(S), z3.And(*nc)))

    def Shapes(self, S):
        """Without a crash: the coordinator 1's channels carry DATA of view 1
        only; a channel p -> 1 (p # 1) FORWARDs of p only; every other channel
        is empty; every member has a received-table entry for every member."""
        cs = []
        for (p, q) in S["hd"]:
            a, h, t = S["ch"][p, q], S["hd"][p, q], S["tl"][p, q]
            i = self._q(S, f"sh{p}{q}")
            if p == 1:
                body = z3.And(Msg.ty(a[i]) == TY["DATA"], Msg.view(a[i]) == 1)
            elif q == 1:
                body = z3.And(Msg.ty(a[i]) == TY["FORWARD"], Msg.snd(a[i]) == p)
            else:
                cs.append(h == t)
                continue
            cs.append(z3.ForAll([i], z3.Implies(z3.And(h < i, i <= t), body)))
        return z3.Implies(self._nocrash(S), z3.And(*cs))

    def Forwards(self, S):
        """While 1 lives (N = 2; else without a crash), the channel p -> 1 (p # 1) holds p's FORWARDs of the
        seqnos F+1, ..., sent[p] in that order (F = sent[p] minus their
        number); every entry of p in 1's log, every received-table value for
        p, and every DATA of p queued from 1, is at most F (a FORWARD is
        sequenced once, in FIFO order)."""
        cs = []
        G = (S["lS"][1], S["lQ"][1], S["lL"][1])
        for p in self.M[1:]:
            a, h, t = S["ch"][p, 1], S["hd"][p, 1], S["tl"][p, 1]
            F = S["sent"][p] - (t - h)
            i, j = self._q(S, f"fw_i{p}"), self._q(S, f"fw_j{p}")
            cs.append(z3.ForAll([i], z3.Implies(z3.And(h < i, i <= t), z3.And(
                Msg.ty(a[i]) == TY["FORWARD"], Msg.snd(a[i]) == p, Msg.seq(a[i]) == F + (i - h)))))
            cs += [S["rval"][m, p] <= F for m in self.M]
            cs.append(z3.ForAll([j], z3.Implies(z3.And(1 <= j, j <= G[2], G[0][j] == p), G[1][j] <= F)))
            for m in self.M:
                cs.append(self._queued(S, (1, m), lambda x, F=F, p=p: z3.Implies(
                    z3.And(Msg.ty(x) == TY["DATA"], Msg.snd(x) == p), Msg.seq(x) <= F), f"fw_d{p}{m}"))
        # at N = 2 (one crash) this holds while 1 lives; at other N only
        # without a crash (there a channel p -> 1 also carries flush messages)
        gate = z3.Not(S["crashed"][1]) if self.N == 2 and self.MC <= 1 else self._nocrash(S)
        return z3.Implies(gate, z3.And(*cs))

    def Sequence(self, S, only=None):
        """Without a crash, G = log[1] is the total order: member 1 delivered
        G[1..dL[1]] and the rest of G is queued on 1 -> 1; a member m # 1
        logged and delivered G[1..lL[m]] and the rest of G is queued on 1 -> m."""
        cs = []
        gS, gQ, gL = S["lS"][1], S["lQ"][1], S["lL"][1]
        for m in (self.M if only is None else (only,)):
            a, h, t = S["ch"][1, m], S["hd"][1, m], S["tl"][1, m]
            base = S["dL"][1] if m == 1 else S["lL"][m]
            i, j = self._q(S, f"sq_i{m}"), self._q(S, f"sq_j{m}")
            cs += [base + (t - h) == gL]
            cs.append(z3.ForAll([i], z3.Implies(z3.And(h < i, i <= t), z3.And(
                Msg.snd(a[i]) == gS[base + i - h], Msg.seq(a[i]) == gQ[base + i - h])), patterns=[a[i]]))
            conds = [S["dS"][m][j] == gS[j], S["dQ"][m][j] == gQ[j]]
            if m != 1:
                cs.append(S["dL"][m] == S["lL"][m])
                conds += [S["lS"][m][j] == gS[j], S["lQ"][m][j] == gQ[j]]
            cs.append(z3.ForAll([j], z3.Implies(z3.And(1 <= j, j <= S["dL"][m]), z3.And(*conds)),
                                patterns=[S["dS"][m][j]] + ([S["lS"][m][j]] if m != 1 else [])))
        return z3.Implies(self._nocrash(S), z3.And(*cs))

    def SequenceOrder(self, S):
        """Without a crash, G holds each sender's messages in strictly
        increasing seqno order, each seqno in 1..sent[sender]."""
        return z3.Implies(self._nocrash(S), self._ordered(S, "so"))

    def _ordered(self, S, name):
        """G = log[1] holds each sender's messages in strictly increasing
        seqno order, each a member's, each seqno in 1..sent."""
        gS, gQ, gL = S["lS"][1], S["lQ"][1], S["lL"][1]
        i, j = self._q(S, f"{name}_i"), self._q(S, f"{name}_j")
        ok = z3.And(1 <= gS[i], gS[i] <= self.N, 1 <= gQ[i],
                    *[z3.Implies(gS[i] == x, gQ[i] <= S["sent"][x]) for x in self.M])
        return z3.And(z3.ForAll([i, j], z3.Implies(z3.And(1 <= i, i < j, j <= gL, gS[i] == gS[j]), gQ[i] < gQ[j])),
                      z3.ForAll([i], z3.Implies(z3.And(1 <= i, i <= gL), ok)))

    def Fresh(self, S):
        """Without a crash, m's received-table entry for s is at least every
        seqno of s that m delivered and below every one queued to m (so
        RecvData never discards), and at least 0."""
        cs = []
        for m in self.M:
            a, h, t = S["ch"][1, m], S["hd"][1, m], S["tl"][1, m]
            i, j = self._q(S, f"fr_i{m}"), self._q(S, f"fr_j{m}")
            def rv_of(s, m=m):
                return select(s, ((x, S["rval"][m, x]) for x in self.M), z3.IntVal(0))
            cs.append(z3.ForAll([i], z3.Implies(z3.And(h < i, i <= t), Msg.seq(a[i]) > rv_of(Msg.snd(a[i])))))
            cs.append(z3.ForAll([j], z3.Implies(z3.And(1 <= j, j <= S["dL"][m]), S["dQ"][m][j] <= rv_of(S["dS"][m][j]))))
            cs += [S["rval"][m, x] >= 0 for x in self.M]
        return z3.Implies(self._nocrash(S), z3.And(*cs))

    def Chans(self, S):
        """Every channel's head index is at most its tail index."""
        return z3.And(*[S["hd"][e] <= S["tl"][e] for e in S["hd"]])

    def Vids(self, S):
        """A member's view is one of the views decided, and closed has an
        entry per view left (TypeOK)."""
        return z3.And(*[z3.And(1 <= S["vid"][m], S["vid"][m] <= S["nv"][()], S["cL"][m] == S["vid"][m] - 1)
                        for m in self.M])

    def Lens(self, S):
        return z3.And(*[z3.And(S["dL"][m] >= 0, S["lL"][m] >= 0, S["ndel"][m] >= 0) for m in self.M])

    def Crashes(self, S):
        return self._count(S, "crashed") <= self.MC

    def MsgViews(self, S):
        """A message of a view names a view decided; a VIEW message one
        before the latest (the view it replaces)."""
        cs = []
        nv = S["nv"][()]
        for e in S["hd"]:
            i = z3.Int(f"mv_{S['tag']}_{e[0]}_{e[1]}")
            x = S["ch"][e][i]
            cs.append(z3.ForAll([i], z3.Implies(z3.And(S["hd"][e] < i, i <= S["tl"][e]), z3.And(
                z3.Implies(Msg.ty(x) != TY["FORWARD"], z3.And(1 <= Msg.view(x), Msg.view(x) <= nv)),
                z3.Implies(Msg.ty(x) == TY["VIEW"], Msg.view(x) < nv)))))
        return z3.And(*cs)

    def NoDuplicates(self, S):
        return z3.And(*[self._nd(S["dS"][m], S["dQ"][m], S["dL"][m], None, f"nd_i_{m} nd_j_{m}") for m in self.M])

    def SurvivorTotalOrder(self, S):
        """For two live members, two messages both delivered come in the same
        order (with NoDuplicates, the spec's SelectSeq equality)."""
        cs = []
        for m1, m2 in product(self.M, self.M):
            if m1 >= m2:
                continue
            a1, b1, a2, b2 = z3.Ints(f"to_a1_{m1}{m2} to_b1_{m1}{m2} to_a2_{m1}{m2} to_b2_{m1}{m2}")
            d1 = lambda k: (S["dS"][m1][k], S["dQ"][m1][k])  # noqa: E731
            d2 = lambda k: (S["dS"][m2][k], S["dQ"][m2][k])  # noqa: E731
            eq = lambda x, y: z3.And(x[0] == y[0], x[1] == y[1])  # noqa: E731
            rng = z3.And(1 <= a1, a1 < b1, b1 <= S["dL"][m1], 1 <= a2, 1 <= b2, a2 <= S["dL"][m2],
                         b2 <= S["dL"][m2])
            # N >= 3: the same formula as the conjunction of its 16 cases, by
            # where each position lies against its member's base: in view 2
            # closed[.][1] (the delivered length after the view change), in
            # view 1 the delivered length (so a case with a position above it
            # is empty).  The cases are exhaustive for any base.  Whole, z3
            # gave up (unknown at 90 s) on a state the lemmas refute case by
            # case in under a second.
            base = {mm: z3.If(S["vid"][mm] >= 2, S["cA"][mm][1], S["dL"][mm]) for mm in (m1, m2)}
            cases = [[]] if self.N < 3 else [
                [(x <= base[mm]) if f else (x > base[mm]) for x, mm, f in
                 zip((a1, b1, a2, b2), (m1, m1, m2, m2), c)] for c in product((True, False), repeat=4)]
            for c in cases:
                cs.append(z3.Implies(z3.And(self.alive(S, m1), self.alive(S, m2)), z3.ForAll(
                    [a1, b1, a2, b2], z3.Implies(z3.And(rng, *c, eq(d1(a1), d2(a2)), eq(d1(b1), d2(b2))), a2 < b2))))
        return z3.And(*cs)
