"""The Raincore ring's values and operators (spec/Raincore/Raincore.tla's
constants, records and helper definitions: Token, Msg911, NextNode, Remove,
InsertAfter, PadTo, TakeToken, LastGlobalViewOf), shared by the model
(model/raincore.py) and its kernel (model/raincore_kernel.py)."""

from __future__ import annotations

from typing import Any, NamedTuple

from .core import state_type
from .values import Fn, record


NULL = 0
NULL_VIEW: tuple = ()
VIEW_STATES = ("Agreement", "Chaos", "Reserve")
TOKEN_STATES = ("Eating", "Hungry", "Starving")
STATUSES = ("Off", "Up", "Down")
STATUS_911 = ("YES", "NO", "REJECT")
LEGAL_PAIRS = frozenset({
    ("Eating", "Agreement"), ("Hungry", "Agreement"),
    ("Eating", "Reserve"), ("Hungry", "Reserve"),
    ("Eating", "Chaos"), ("Hungry", "Chaos"),
    ("Starving", "Chaos"),
})


def Token(seq: int, nodelist: tuple, cur: int, dest: int, gvn: int) -> Fn:
    return record(seq=seq, nodelist=nodelist, cur=cur, dest=dest, gvn=gvn)


def Msg911(orig: int, cur: int, dest: int, nodelist: tuple, seq: int, status: str) -> Fn:
    return record(orig=orig, cur=cur, dest=dest, nodelist=nodelist, seq=seq, status=status)


NO_TOKEN = Token(0, (), NULL, NULL, 0)

TOKEN_FIELDS = frozenset({"seq", "nodelist", "cur", "dest", "gvn"})
FIELDS_911 = frozenset({"orig", "cur", "dest", "nodelist", "seq", "status"})


@state_type
class RaincoreState(NamedTuple):
    status: tuple       # status[n-1] in STATUSES
    viewState: tuple    # viewState[n-1] in VIEW_STATES
    tokenState: tuple   # tokenState[n-1] in TOKEN_STATES
    globalView: tuple   # globalView[n-1]: tuple of views (NULL_VIEW for NULL)
    lastToken: tuple    # lastToken[n-1]: token record
    localView: tuple    # localView[n-1]: tuple of nodes
    newNodes: tuple     # newNodes[n-1]: frozenset of nodes
    token: tuple        # token[n-1]: the token held while Eating, else NO_TOKEN
    tokenMsgs: frozenset
    msgs911: frozenset
    recovered: tuple    # recovered[n-1]: bool


# --- helpers on rings (same names as the spec's operators) --------------------
def updated(t: tuple, n: int, v: Any) -> tuple:
    return t[: n - 1] + (v,) + t[n:]


def NextNode(l: tuple, n: int) -> int:
    if n in l:
        return l[(l.index(n) + 1) % len(l)]
    return l[0]


def Remove(l: tuple, x: int) -> tuple:
    return tuple(y for y in l if y != x)


def InsertAfter(l: tuple, n: int, s: tuple) -> tuple:
    i = l.index(n) + 1
    return l[:i] + s + l[i:]


def PadTo(gv: tuple, k: int) -> tuple:
    return gv + (NULL_VIEW,) * (k - len(gv)) if k > len(gv) else gv


def TakeToken(vs0: str, same: bool, gv0: tuple, nodelist: tuple, gvn: int) -> tuple:
    """The spec's TakeToken(n, m) on n's values (the model, its kernel and
    RaincoreFlush's ring): n's View State step (Figure 9) and globalView,
    ``(viewState', globalView', the token's gvn')``; the caller sets
    localView and the token.  ``same``: the token's nodelist is n's
    localView; a Chaos node that sees it reserves a NULL entry, a Reserve
    node commits it there."""
    reserve = vs0 == "Chaos" and same
    commit = vs0 == "Reserve" and same
    if vs0 == "Chaos":
        vs = "Reserve" if same else "Chaos"
    else:
        vs = "Agreement" if same else "Chaos"
    if reserve:
        gv1 = gv0 + (NULL_VIEW,)
    elif commit:
        gv1 = gv0[:-1] + (nodelist,)
    else:
        gv1 = gv0
    tgvn = len(gv1) if reserve else gvn
    return vs, PadTo(gv1, tgvn), tgvn


def LastGlobalViewOf(gv: tuple) -> tuple:
    for v in reversed(gv):
        if v != NULL_VIEW:
            return v
    return NULL_VIEW


