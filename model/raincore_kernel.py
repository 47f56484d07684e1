"""The explorer's kernel of the Raincore model (model/raincore.py
``RaincoreModel``): the same transition system over a leaner encoding
(model/core.py ``Kernel``); see ``RaincoreKernel``'s docstring."""

from __future__ import annotations

import ast
from typing import Any

from .core import Kernel, Label, Model
from .raincore_ops import (InsertAfter, LastGlobalViewOf, Msg911, NextNode, NULL, NULL_VIEW, RaincoreState,
                           Remove, TakeToken, Token)
from .values import Fn


# --- the explorer's kernel -------------------------------------------------------------------
# Record layout of one node in a kernel state (see RaincoreKernel).
_ST, _VS, _TS, _GV, _LT, _LV, _NN, _TOK, _REC = range(9)
_NO_TOK = (0, (), NULL, NULL, 0)   # NO_TOKEN as a kernel token
# kinds of node-local operations
# An op's kind: plain, a crash, or the one guard checked per state (the Hungry
# and Starving timeouts under TimelyTimeouts read TokenComing, the Eating
# timeout under Timely911 CallWaiting).
_PLAIN, _TIMELY, _CRASH, _CALL = range(4)


class RaincoreKernel(Kernel):
    """``RaincoreModel``'s actions over a lean encoding (the explorer's;
    :mod:`groupcheck.model.core`).

    Encoding.  A kernel state is the flat tuple ``(R_1, ..., R_N, tokenMsgs,
    msgs911)``.  ``R_n`` is the *key* of node n's record: the record is the
    tuple of n's entries in the per-node variables, ``(status, viewState,
    tokenState, globalView, lastToken, localView, newNodes, token,
    recovered)``, each the model's own value (strings, tuples, a frozenset, a
    bool) except the two tokens, which are plain tuples ``(seq, nodelist,
    cur, dest, gvn)`` instead of records (``_NO_TOK`` for ``NO_TOKEN``); its
    key is its ``repr`` (newNodes as a sorted tuple), a string, which caches
    its hash, so hashing a state never walks the nested records, and a memo
    keyed by it is a cheap lookup.  The kernel keeps key <-> record in two
    dicts; a key it has not built (a state shipped by another process) is
    parsed back.  ``tokenMsgs`` is a frozenset of token tuples, ``msgs911``
    a frozenset of 911 tuples ``(orig, cur, dest, nodelist, seq, status)``;
    a frozenset caches its hash too, so the sets an action leaves UNCHANGED
    cost nothing to rehash.  Everything is a value (no process-local
    numbering), so kernel states hash alike in the forked workers of
    model/parallel.py.

    Why it is the same transition system.  Every action of ``next`` changes
    at most one node's entries (the node it is parameterised by: the
    receiver of a message, the node that times out, crashes, recovers or
    joins) and adds or removes messages; what it writes into that node and
    the message it adds are functions of that node's entries and of the
    message alone (the spec's actions read no other node's local data).
    Only the *guards* read other nodes: the destination's status in the two
    delivery-failure actions and, under TimelyTimeouts, ``TokenComing``
    (every Eating node's token and every token in flight).  The kernel
    therefore evaluates those guards on the whole state, per state, and
    computes each action's effect once per (node, record) or (node, record,
    message) (the successor record as its key, the message added),
    transcribing the model's action (same guards, same successor
    values, same order of cases) over records, and keeps it in a memo.
    TokenReceived(n, m) and 911Received(n, m) are enabled only for n =
    m.dest and the two delivery failures only for n = m.cur, so the kernel
    looks at those nodes only instead of trying every n.  Labels are the
    model's, built once per action instance.  The successors come in
    another order than ``next``'s (node by node, then message by message),
    so the explorer numbers states differently; the counts, the states and
    the labelled edges are the same.  ``decode`` rebuilds the model
    state and ``encode`` is its inverse; tests/test_explore_kernel.py checks,
    on every reachable state of small models and on the first states of the
    big ones, that the decoded successors are exactly ``next``'s."""

    def __init__(self, model: Model) -> None:     # a RaincoreModel (model/raincore.py)
        self.model = model
        self.N = model.N
        self.InitRing = model.InitRing
        self.TimelyTimeouts = model.TimelyTimeouts
        ms, m911, md = model.MaxSeq, model.Max911, model.MaxDown
        if ms is not None or m911 is not None or md is not None:
            self.MaxSeq = None if ms is None else int(ms)
            self.Max911 = None if m911 is None else int(m911)
            self.MaxDown = None if md is None else int(md)
            self.constraint = self._constraint
        # per node: record key -> (record, local operations, and the memos
        # token -> TokenReceived, token -> TokenDeliveryFailure, 911 -> 911Received)
        self._nodes: list[dict] = [{} for _ in model.Node]
        self._df911: dict = {}                               # 911 -> 911DeliveryFailure
        self._loss: dict = {}                                # token -> TokenLoss label
        self._keys: dict = {}                                # record -> its key
        self._recs: dict = {}                                # key -> its record
        self._bounds: dict = {}                              # key -> (within MaxSeq, Down)
        self._outside: set = set()                           # states found outside the CONSTRAINT
        self._tok_fn: dict = {}                              # token tuple -> the model's record
        self._m911_fn: dict = {}                             # 911 tuple -> the model's record
        self._dec: dict = {}                                 # key -> node's entries in the model state
        self._dec_sets: dict = {}                            # message set -> the model's

    # --- encoding -------------------------------------------------------------------
    @staticmethod
    def _enc_token(t: Fn) -> tuple:
        return (t["seq"], t["nodelist"], t["cur"], t["dest"], t["gvn"])

    @staticmethod
    def _enc_911(m: Fn) -> tuple:
        return (m["orig"], m["cur"], m["dest"], m["nodelist"], m["seq"], m["status"])

    def token_fn(self, t: tuple) -> Fn:
        f = self._tok_fn.get(t)
        if f is None:
            f = self._tok_fn[t] = Token(*t)
        return f

    def m911_fn(self, m: tuple) -> Fn:
        f = self._m911_fn.get(m)
        if f is None:
            f = self._m911_fn[m] = Msg911(*m)
        return f

    def _key(self, r: tuple) -> str:
        """The key of record ``r``: its repr (newNodes as a sorted tuple), a
        string, so its hash is computed once and cached by the string."""
        key = self._keys.get(r)
        if key is None:
            key = repr(r[:_NN] + (tuple(sorted(r[_NN])),) + r[_NN + 1:])
            self._keys[r] = key
            self._recs[key] = r
        return key

    def _rec(self, key: str) -> tuple:
        """The record of ``key`` (parsed when this process has not built it:
        a state shipped by another worker of model/parallel.py)."""
        r = self._recs.get(key)
        if r is None:
            t = ast.literal_eval(key)
            r = t[:_NN] + (frozenset(t[_NN]),) + t[_NN + 1:]
            self._keys[r] = key
            self._recs[key] = r
        return r

    def encode(self, s: RaincoreState) -> tuple:
        """The kernel state of model state ``s``."""
        et = self._enc_token
        recs = tuple(
            self._key((s.status[i], s.viewState[i], s.tokenState[i], s.globalView[i], et(s.lastToken[i]),
                          s.localView[i], s.newNodes[i], et(s.token[i]), s.recovered[i]))
            for i in range(self.N))
        return recs + (frozenset(map(et, s.tokenMsgs)), frozenset(map(self._enc_911, s.msgs911)))

    def _decoded(self, key: str) -> tuple:
        """Node n's entries of the model state, from its record's key."""
        r = self._rec(key)
        d = self._dec[key] = r[:_LT] + (self.token_fn(r[_LT]),) + r[_LT + 1:_TOK] + (self.token_fn(r[_TOK]), r[_REC])
        return d

    def decode(self, k: tuple) -> RaincoreState:
        N = self.N
        dec = self._dec
        cols = list(zip(*[dec.get(x) or self._decoded(x) for x in k[:N]]))
        tm, m9 = k[N], k[N + 1]
        tms = self._dec_sets.get(tm)
        if tms is None:
            tms = self._dec_sets[tm] = frozenset(map(self.token_fn, tm))
        m9s = self._dec_sets.get(m9)
        if m9s is None:
            m9s = self._dec_sets[m9] = frozenset(map(self.m911_fn, m9))
        return _new_state(RaincoreState, (*cols[:_REC], tms, m9s, cols[_REC]))

    def init(self):
        return [self.encode(s) for s in self.model.init()]

    # --- the model's derived operators over one node's record ------------------------
    def ViewOf(self, r: tuple) -> tuple:
        lgv = LastGlobalViewOf(r[_GV])
        return self.InitRing if lgv == NULL_VIEW else lgv

    def ClaimRing(self, r: tuple, n: int) -> tuple:
        nl = r[_LT][1]
        if not (self.model.TokenRingClaim and nl != ()):
            return self.ViewOf(r)
        if self.model.YieldClaim:
            add = r[_NN] - set(nl)   # Queued
            return InsertAfter(nl, n, tuple(sorted(add))) if add else nl
        return nl

    @staticmethod
    def ClaimSeq(r: tuple) -> int:
        return 0 if r[_REC] else r[_LT][0]

    def Call911(self, n: int, r: tuple) -> tuple:
        ring = self.ClaimRing(r, n)
        return (n, n, NextNode(ring, n), ring, self.ClaimSeq(r), "YES")

    @staticmethod
    def _with(r: tuple, **kv: Any) -> tuple:
        out = list(r)
        for f, v in kv.items():
            out[_FIELD[f]] = v
        return tuple(out)

    # --- node-local actions: effect per (node, record) --------------------------------
    def _local_ops(self, n: int, r: tuple) -> tuple:
        """The actions of node n that read only its record (and, for the
        Hungry and Starving timeouts under TimelyTimeouts TokenComing, and
        for the Eating timeout under Timely911 CallWaiting, checked per
        state):
        tuples ``(label, key of record', token added, 911 added, kind)``."""
        model = self.model
        W = self._with
        I = self._key
        ops = []
        st, ts = r[_ST], r[_TS]
        # Initialization(n)
        if n in self.InitRing and st == "Off":
            t = (model.InitSeq, self.InitRing, n, NextNode(self.InitRing, n), 0)
            ops.append((Label("Initialization", (n,)),
                        I(W(r, status="Up", viewState="Chaos", tokenState="Hungry", localView=self.InitRing,
                            lastToken=t)), t, None, _PLAIN))
        if st == "Up":
            call = _CALL if model.Timely911 else _PLAIN
            # EatingTimeout(n)
            if ts == "Eating":
                t = r[_TOK]
                add = r[_NN] - set(t[1])
                nl = InsertAfter(t[1], n, tuple(sorted(add))) if add else t[1]
                r1 = W(r, newNodes=frozenset(), viewState="Chaos" if add else r[_VS])
                if len(nl) > 1:
                    t2 = (t[0] + 1, nl, n, NextNode(nl, n), t[4])
                    ops.append((Label("EatingTimeout", (n,)),
                                I(W(r1, lastToken=t2, tokenState="Hungry", token=_NO_TOK)), t2, None, call))
                else:
                    ops.append((Label("EatingTimeout", (n,)), I(r1), None, None, call))
            kind = _TIMELY if self.TimelyTimeouts else _PLAIN
            # HungryTimeout(n)
            if ts == "Hungry":
                ops.append((Label("HungryTimeout", (n,)), I(W(r, tokenState="Starving", viewState="Chaos")),
                            None, self.Call911(n, r), kind))
            # StarvingTimeout(n)
            if ts == "Starving":
                ops.append((Label("StarvingTimeout", (n,)), I(r), None, self.Call911(n, r), kind))
            # Crash(n)
            if not (model.StableFounder and n == 1):
                ops.append((Label("Crash", (n,)),
                            I(W(r, status="Down", viewState="Chaos", tokenState="Starving", token=_NO_TOK)),
                            None, None, _CRASH))
        # Recover(n)
        if st == "Down":
            call = self.Call911(n, r)
            if model.NeutralRecovery:
                call = call[:4] + (0,) + call[5:]
            ops.append((Label("Recover", (n,)),
                        I(W(r, status="Up", tokenState="Starving", viewState="Chaos",
                            recovered=model.NeutralRecovery)), None, call, _PLAIN))
        # Join(n)
        if n not in self.InitRing and st == "Off":
            ops.append((Label("Join", (n,)), I(W(r, status="Up", tokenState="Starving", viewState="Chaos")),
                        None, self.Call911(n, r), _PLAIN))
        return tuple(ops)

    # --- message actions: effect per (node, record, message) --------------------------
    def _token_received(self, n: int, r: tuple, m: tuple) -> tuple:
        """TokenReceived(n, m) for n = m.dest Up: ``(label, record', None)``."""
        lab = Label("TokenReceived", (n, self.token_fn(m)))
        if r[_TS] == "Eating" or m[0] <= r[_LT][0]:
            out = (lab, self._key(r), None)   # dropped
        else:
            # AcceptToken
            same = m[1] == r[_LV] and not (self.model.FreshView and r[_REC])
            vs, gv2, tgvn = TakeToken(r[_VS], same, r[_GV], m[1], m[4])
            out = (lab, self._key(self._with(
                r, tokenState="Eating", viewState=vs, globalView=gv2, localView=m[1],
                token=(m[0], m[1], n, m[3], tgvn), recovered=False)), None)
        return out

    def _received_911(self, n: int, r: tuple, m: tuple) -> tuple:
        """911Received(n, m) for n = m.dest Up: ``(label, record', 911 added)``."""
        lab = Label("911Received", (n, self.m911_fn(m)))
        model = self.model
        orig, seq = m[0], m[4]
        if orig == n:
            c = self.ClaimSeq(r)
            regenerate = (m[5] == "YES" and r[_TS] == "Starving" and r[_LT][1] != ()
                          and (not model.FreshClaim or seq == c) and not r[_REC]
                          and (not model.YieldClaim or m[3] == self.ClaimRing(r, n)))
            if regenerate:
                lt = r[_LT]
                out = (lab, self._key(self._with(r, token=(lt[0], lt[1], n, lt[3], lt[4]), tokenState="Eating",
                                                 recovered=False)), None)
            else:
                out = (lab, self._key(r), None)
        else:
            c = self.ClaimSeq(r)
            veto = (r[_TS] == "Eating" or (model.YieldClaim and r[_TS] == "Hungry") or seq < c
                    or (seq == c and n > orig))
            if veto:
                answer = (orig, n, orig, m[3], seq, "NO")
            else:
                answer = (orig, n, NextNode(m[3], n), m[3], seq, m[5])
            if orig in self.ViewOf(r):
                yields = model.YieldClaim and not veto   # Yields
                out = (lab, self._key(self._with(r, newNodes=r[_NN] | {orig}) if yields else r), answer)
            else:
                higher = model.TokenRingClaim and seq > c   # HigherClaim
                out = (lab, self._key(self._with(r, newNodes=r[_NN] | {orig})), answer if higher else None)
        return out

    def _token_delivery_failure(self, n: int, r: tuple, m: tuple) -> tuple:
        """TokenDeliveryFailure(n, m) for n = m.cur Up and m.dest not Up:
        ``(label, record', token added)``."""
        lab = Label("TokenDeliveryFailure", (n, self.token_fn(m)))
        nl = Remove(m[1], m[3])
        t = (m[0] + 1, nl, m[2], NextNode(nl, n), m[4])
        if nl == (n,):
            t1 = t[:4] + (len(r[_GV]) + 1,)
            out = (lab, self._key(self._with(r, localView=nl, viewState="Agreement", tokenState="Eating",
                                             globalView=r[_GV] + (nl,), lastToken=t1, token=t1)), None)
        else:
            out = (lab, self._key(self._with(r, localView=nl, viewState="Chaos", tokenState="Hungry",
                                             lastToken=t, token=_NO_TOK)), t)
        return out

    def _delivery_failure_911(self, m: tuple) -> tuple:
        """911DeliveryFailure(m.cur, m): ``(label, the 911 resent)``."""
        out = (Label("911DeliveryFailure", (m[1], self.m911_fn(m))),
               m[:2] + (NextNode(m[3], m[2]),) + m[3:])
        self._df911[m] = out
        return out

    # --- the search -------------------------------------------------------------------
    @staticmethod
    def _take(k: tuple, e: tuple, slot: int, effect, n: int, m: tuple, j: int) -> tuple:
        """``(label, successor)`` of node n's action on message m, taken from
        the set in slot j of kernel state k: ``effect(n, record, m)`` gives
        (label, record', the message it sends or None), memoised in e[slot]
        (e: n's entry)."""
        hit = e[slot].get(m)
        if hit is None:
            hit = e[slot][m] = effect(n, e[0], m)
        rest = k[j] - {m}
        if hit[2] is not None:
            rest = rest | {hit[2]}
        return hit[0], k[:n - 1] + (hit[1],) + k[n:j] + (rest,) + k[j + 1:]

    def _entry(self, i: int, key: str) -> tuple:
        r = self._rec(key)
        e = self._nodes[i][key] = (r, self._local_ops(i + 1, r), {}, {}, {})
        return e

    def next(self, k: tuple) -> list:
        N = self.N
        tm, m9 = k[N], k[N + 1]
        nodes = self._nodes
        out = []
        add = out.append
        coming = None
        recs = []
        for i in range(N):
            e = nodes[i].get(k[i])
            if e is None:
                e = self._entry(i, k[i])
            recs.append(e)
        for i in range(N):
            for lab, r2, tadd, madd, kind in recs[i][1]:
                if kind == _CRASH:
                    n = i + 1
                    tm2 = frozenset([m for m in tm if m[2] != n])
                    m92 = frozenset([m for m in m9 if m[1] != n])
                else:
                    if kind == _CALL:
                        if any(m[2] == i + 1 for m in m9):
                            continue   # CallWaiting(n) under Timely911
                    elif kind == _TIMELY:
                        if coming is None:
                            # TokenComing: the nodes on the nodelist of a token
                            # held by an Up Eating node or in flight
                            coming = set()
                            for x, *_ in recs:
                                if x[_ST] == "Up" and x[_TS] == "Eating":
                                    coming.update(x[_TOK][1])
                            for m in tm:
                                coming.update(m[1])
                        if i + 1 in coming:
                            continue
                    tm2 = tm if tadd is None or tadd in tm else tm | {tadd}
                    m92 = m9 if madd is None or madd in m9 else m9 | {madd}
                s2 = list(k)
                s2[i] = r2
                s2[N] = tm2
                s2[N + 1] = m92
                add((lab, tuple(s2)))
        for m in tm:
            d = m[3]
            if 1 <= d <= N:
                e = recs[d - 1]
                if e[0][_ST] == "Up":   # TokenReceived(d, m)
                    add(self._take(k, e, 2, self._token_received, d, m, N))
            c = m[2]
            if 1 <= c <= N:
                e = recs[c - 1]
                if e[0][_ST] == "Up" and recs[d - 1][0][_ST] != "Up":   # TokenDeliveryFailure(c, m)
                    add(self._take(k, e, 3, self._token_delivery_failure, c, m, N))
            # TokenLoss(m)
            lab = self._loss.get(m)
            if lab is None:
                lab = self._loss[m] = Label("TokenLoss", (self.token_fn(m),))
            add((lab, k[:N] + (tm - {m}, m9)))
        for m in m9:
            d = m[2]
            e = recs[d - 1]
            if e[0][_ST] == "Up":   # 911Received(d, m)
                add(self._take(k, e, 4, self._received_911, d, m, N + 1))
            elif recs[m[1] - 1][0][_ST] == "Up":
                # 911DeliveryFailure(m.cur, m)
                hit = self._df911.get(m)
                if hit is None:
                    hit = self._delivery_failure_911(m)
                add((hit[0], k[:N + 1] + ((m9 - {m}) | {hit[1]},)))
        return out

    def _bound(self, key: str) -> tuple:
        r = self._rec(key)
        ms = self.MaxSeq
        b = self._bounds[key] = (ms is None or (r[_TOK][0] <= ms and r[_LT][0] <= ms), r[_ST] == "Down")
        return b

    def _constraint(self, k: tuple) -> bool:
        # The explorer asks again each time it meets a state outside the
        # CONSTRAINT (it keeps only the states inside): remembered here.
        if k in self._outside:
            return False
        if self._inside(k):
            return True
        self._outside.add(k)
        return False

    def _inside(self, k: tuple) -> bool:
        N = self.N
        bounds = self._bounds
        down = 0
        for i in range(N):
            b = bounds.get(k[i])
            if b is None:
                b = self._bound(k[i])
            if not b[0]:
                return False
            down += b[1]
        ms = self.MaxSeq
        if ms is not None:
            for m in k[N]:
                if m[0] > ms:
                    return False
        if self.Max911 is not None and len(k[N + 1]) > self.Max911:
            return False
        if self.MaxDown is not None and down > self.MaxDown:
            return False
        return True


_new_state = tuple.__new__
_FIELD = {"status": _ST, "viewState": _VS, "tokenState": _TS, "globalView": _GV, "lastToken": _LT,
          "localView": _LV, "newNodes": _NN, "token": _TOK, "recovered": _REC}
