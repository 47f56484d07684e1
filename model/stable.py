"""Python mirror of spec/Stable/Stable.tla (pbcast.STABLE).

Theory of operation
-------------------
pbcast.STABLE (seed 002, sections "pbcast.STABLE protocol" and "Last Message
dropped in NAKACK"): every member gossips its delivered vector in STABLE
messages; a member keeps a round digest whose lows are the minimum and whose
highs are the maximum of the vectors it has merged, and the set heardFrom of
members it has not heard from yet; when heardFrom is empty it multicasts the
digest as STABILITY; on a STABILITY digest every member purges the messages
at or below the lows (garbage collection), learns from the highs of any last
message it missed (which NAKACK then fetches from the sender), and starts a
new round.  A member that joins gets the coordinator's delivered vector as
its join digest.  docs/stable.md lists every interpretation of the seed.

This module is the spec transcribed variable for variable and action for
action (same names, same parameters, same guards, same successor values), so
that the explorer's state graph equals TLC's ``-dump dot`` graph.  Members
are ``1..N``; vectors and digests are :class:`~.values.Fn` over a view (a
function over ``1..k`` normalises to TLC's ``<<...>>``); messages are
records.  An action whose spec body is ``\\E m \\in InFlight(...)`` yields one
successor per message, all under the same label.  ``constraint`` is
MCStable's ``InFlightBound``.

The four boolean constants select the protocol variant:
``ResetOnDifferentMembers`` (the seed's fix taken literally: a received
STABLE vector over other members resets heardFrom), ``ResetOnViewChange``
(our strengthening: so does a view change that sets the own digest over new
members; without it the literal fix still breaks SafeGC on the seed's A,B,C
example), ``CoordSwitchesAtJoin`` (our fix of the join race TLC found) and
``GossipMergedDigest`` (the other reading of the seed, which TLC shows
livelocks).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from .core import Kernel, Label, Model, state_type
from .values import Fn, record


@state_type
class StableState(NamedTuple):
    group: frozenset   # the membership as the coordinator knows it
    view: Fn           # member -> installed view (frozenset; empty before joining)
    sent: Fn           # member -> seqno of its last multicast
    delivered: Fn      # member -> Fn(sender -> highest delivered seqno)
    received: Fn       # member -> Fn(sender -> highest seqno known to be sent)
    purged: Fn         # member -> Fn(sender -> discarded up to this seqno)
    digest: Fn         # member -> Fn(x -> [low, high]) over its view
    heardFrom: Fn      # member -> members not yet heard from this round
    net: frozenset     # messages in flight (records)


def Entry(low: int, high: int) -> Fn:
    return record(low=low, high=high)


def DataMsg(p: int, q: int, seq: int) -> Fn:
    return record(type="data", **{"from": p}, to=q, seq=seq)


def StableMsg(p: int, q: int, vector: Fn) -> Fn:
    return record(type="stable", **{"from": p}, to=q, vector=vector)


def StabilityMsg(p: int, q: int, digest: Fn) -> Fn:
    return record(type="stability", **{"from": p}, to=q, digest=digest)


def _bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    raise TypeError(f"expected TRUE or FALSE, got {v!r}")


class StableModel(Model):
    protocol = "stable"
    variables = StableState._fields

    def __init__(self, constants: Mapping[str, Any]) -> None:
        super().__init__(constants)
        self.N = int(constants["N"])
        self.NInit = int(constants["NInit"])
        self.Senders = frozenset(int(x) for x in constants["Senders"])
        self.MaxSeq = int(constants["MaxSeq"])
        self.ResetOnDifferentMembers = _bool(constants["ResetOnDifferentMembers"])
        self.ResetOnViewChange = _bool(constants["ResetOnViewChange"])
        self.CoordSwitchesAtJoin = _bool(constants["CoordSwitchesAtJoin"])
        self.GossipMergedDigest = _bool(constants["GossipMergedDigest"])
        # MCStable's bound on messages in flight; 0 (or absent) means none.
        self.MaxInFlight = int(constants.get("MaxInFlight", 0))
        if not (self.N >= 1 and 1 <= self.NInit <= self.N and self.Senders <= set(range(1, self.N + 1))
                and self.MaxSeq >= 0 and self.MaxInFlight >= 0):
            raise ValueError(f"constants violate Stable's ASSUME: {dict(constants)}")
        self.Members = tuple(range(1, self.N + 1))
        self.InitialView = frozenset(range(1, self.NInit + 1))
        self.links = tuple((q, p) for q in self.Members for p in self.Members)

    # --- helpers (same names as the spec's operators) -------------------------
    @staticmethod
    def Fresh(V: frozenset, v: Fn) -> Fn:
        return Fn((x, Entry(v[x], v[x])) for x in V)

    def Vector(self, s: StableState, p: int) -> Fn:
        if self.GossipMergedDigest:
            d = s.digest[p]
            return Fn((x, d[x]["low"]) for x in d)
        return Fn((x, s.delivered[p][x]) for x in s.view[p])

    @staticmethod
    def Merge(d: Fn, v: Fn) -> Fn:
        return Fn(
            (x, Entry(min(e["low"], v[x]), max(e["high"], v[x])) if x in v else e)
            for x, e in d.items()
        )

    @staticmethod
    def Others(s: StableState, p: int, type_: str) -> frozenset:
        return frozenset(m for m in s.net if m["type"] != type_ or m["from"] != p)

    def PostStable(self, s: StableState, p: int, v: Fn) -> frozenset:
        return self.Others(s, p, "stable") | {StableMsg(p, q, v) for q in s.view[p] - {p}}

    def PostStability(self, s: StableState, p: int, d: Fn) -> frozenset:
        return self.Others(s, p, "stability") | {StabilityMsg(p, q, d) for q in s.view[p] - {p}}

    def PurgeTo(self, s: StableState, q: int, d: Fn) -> Fn:
        row = s.purged[q]
        return s.purged.set(q, Fn((x, max(row[x], d[x]["low"]) if x in d else row[x]) for x in self.Members))

    def LearnFrom(self, s: StableState, q: int, d: Fn) -> Fn:
        row = s.received[q]
        return s.received.set(q, Fn((x, max(row[x], d[x]["high"]) if x in d else row[x]) for x in self.Members))

    @staticmethod
    def InFlight(s: StableState, type_: str, q: int, p: int) -> list[Fn]:
        return [m for m in s.net if m["type"] == type_ and m["from"] == p and m["to"] == q]

    # --- Init -----------------------------------------------------------------
    def init(self) -> Iterator[StableState]:
        M, V0 = self.Members, self.InitialView
        zeros = Fn((x, 0) for x in M)
        yield StableState(
            group=V0,
            view=Fn((p, V0 if p in V0 else frozenset()) for p in M),
            sent=zeros,
            delivered=Fn((p, zeros) for p in M),
            received=Fn((p, zeros) for p in M),
            purged=Fn((p, zeros) for p in M),
            digest=Fn((p, Fn((x, Entry(0, 0)) for x in (V0 if p in V0 else ()))) for p in M),
            heardFrom=Fn((p, V0 if p in V0 else frozenset()) for p in M),
            net=frozenset(),
        )

    # --- actions --------------------------------------------------------------
    # Each returns the list of successors (empty when disabled).

    def Multicast(self, s: StableState, p: int) -> list[StableState]:
        if p not in self.Senders or not s.view[p] or s.sent[p] >= self.MaxSeq:
            return []
        k = s.sent[p] + 1
        return [s._replace(
            sent=s.sent.set(p, k),
            delivered=s.delivered.set(p, s.delivered[p].set(p, k)),
            received=s.received.set(p, s.received[p].set(p, k)),
            net=s.net | {DataMsg(p, q, k) for q in s.view[p] - {p}},
        )]

    def ReceiveData(self, s: StableState, q: int, p: int) -> list[StableState]:
        out = []
        for m in self.InFlight(s, "data", q, p):
            seq = m["seq"]
            delivered = s.delivered
            if seq == s.delivered[q][p] + 1:
                delivered = delivered.set(q, delivered[q].set(p, seq))
            out.append(s._replace(
                delivered=delivered,
                received=s.received.set(q, s.received[q].set(p, max(s.received[q][p], seq))),
                net=s.net - {m},
            ))
        return out

    def Retransmit(self, s: StableState, q: int, p: int) -> list[StableState]:
        d = s.delivered[q][p]
        if q == p or not d < s.received[q][p] or not s.purged[p][p] < d + 1:
            return []
        return [s._replace(delivered=s.delivered.set(q, s.delivered[q].set(p, d + 1)))]

    def LoseMessage(self, s: StableState, q: int, p: int) -> list[StableState]:
        return [s._replace(net=s.net - {m}) for m in s.net if m["from"] == p and m["to"] == q]

    def SendStable(self, s: StableState, p: int) -> list[StableState]:
        if not s.view[p]:
            return []
        v = self.Vector(s, p)
        return [s._replace(
            net=self.PostStable(s, p, v),
            digest=s.digest.set(p, self.Merge(s.digest[p], v)),
            heardFrom=s.heardFrom.set(p, s.heardFrom[p] - {p}),
        )]

    def ReceiveStable(self, s: StableState, q: int, p: int) -> list[StableState]:
        out = []
        for m in self.InFlight(s, "stable", q, p):
            v = m["vector"]
            if self.ResetOnDifferentMembers and set(v) != set(s.digest[q]):
                t = s._replace(heardFrom=s.heardFrom.set(q, s.view[q]))
            else:
                t = s._replace(
                    digest=s.digest.set(q, self.Merge(s.digest[q], v)),
                    heardFrom=s.heardFrom.set(q, s.heardFrom[q] - {p}),
                )
            out.append(t._replace(net=s.net - {m}))
        return out

    def SendStability(self, s: StableState, p: int) -> list[StableState]:
        if not s.view[p] or s.heardFrom[p]:
            return []
        d = s.digest[p]
        return [s._replace(
            net=self.PostStability(s, p, d),
            purged=self.PurgeTo(s, p, d),
            received=self.LearnFrom(s, p, d),
            digest=s.digest.set(p, self.Fresh(s.view[p], s.delivered[p])),
            heardFrom=s.heardFrom.set(p, s.view[p]),
        )]

    def ReceiveStability(self, s: StableState, q: int, p: int) -> list[StableState]:
        out = []
        for m in self.InFlight(s, "stability", q, p):
            d = m["digest"]
            out.append(s._replace(
                purged=self.PurgeTo(s, q, d),
                received=self.LearnFrom(s, q, d),
                digest=s.digest.set(q, self.Fresh(s.view[q], s.delivered[q])),
                heardFrom=s.heardFrom.set(q, s.view[q]),
                net=s.net - {m},
            ))
        return out

    def Join(self, s: StableState, j: int) -> list[StableState]:
        if j in s.group or any(s.view[p] != s.group for p in s.group):
            return []
        c = min(s.group)
        V = s.group | {j}
        switching = {c} if self.CoordSwitchesAtJoin else set()
        installs = {j} | switching
        fresh = self.Fresh(V, s.delivered[c])

        def heard(p: int) -> frozenset:
            if p == j:
                return V
            if p in switching:
                return V if self.ResetOnViewChange else s.heardFrom[p]
            return s.heardFrom[p]

        return [s._replace(
            group=V,
            view=Fn((p, V if p in installs else s.view[p]) for p in self.Members),
            delivered=s.delivered.set(j, s.delivered[c]),
            received=s.received.set(j, s.delivered[c]),
            digest=Fn((p, fresh if p in installs else s.digest[p]) for p in self.Members),
            heardFrom=Fn((p, heard(p)) for p in self.Members),
        )]

    def InstallView(self, s: StableState, p: int) -> list[StableState]:
        if not s.view[p] or p not in s.group or s.view[p] == s.group:
            return []
        return [s._replace(
            view=s.view.set(p, s.group),
            digest=s.digest.set(p, self.Fresh(s.group, s.delivered[p])),
            heardFrom=s.heardFrom.set(p, s.group if self.ResetOnViewChange else s.heardFrom[p]),
        )]

    # Next's disjuncts in order: each action with whether it is per link
    # (q, p) or per member
    NEXT = (("Multicast", False), ("ReceiveData", True), ("Retransmit", True), ("LoseMessage", True),
            ("SendStable", False), ("ReceiveStable", True), ("SendStability", False), ("ReceiveStability", True),
            ("Join", False), ("InstallView", False))

    def next(self, s: StableState) -> Iterator[tuple[Label, StableState]]:
        members = [(p,) for p in self.Members]
        for name, per_link in self.NEXT:
            act = getattr(self, name)
            for params in (self.links if per_link else members):
                for t in act(s, *params):
                    yield Label(name, params), t

    def constraint(self, s: StableState) -> bool:
        return self.MaxInFlight == 0 or len(s.net) <= self.MaxInFlight

    # --- the explorer's fast encoding ------------------------------------------
    # The methods the kernel transcribes: a subclass that overrides one of
    # them is searched with ``next``.
    _KERNEL_TRANSCRIBES = ("init", "next", "constraint", "Fresh", "Vector", "Merge", "Others", "PostStable",
                           "PostStability", "PurgeTo", "LearnFrom", "InFlight", "Multicast", "ReceiveData",
                           "Retransmit", "LoseMessage", "SendStable", "ReceiveStable", "SendStability",
                           "ReceiveStability", "Join", "InstallView")

    def kernel(self):
        return self.transcribed_kernel(StableModel, StableKernel)

    # --- properties -----------------------------------------------------------
    @property
    def invariants(self):
        return {"TypeOK": self.TypeOK, "SafeGC": self.SafeGC, "StabilityBound": self.StabilityBound}

    def TypeOK(self, s: StableState) -> bool:
        M = set(self.Members)
        seqs = range(0, self.MaxSeq + 1)

        def vec(v: Any) -> bool:
            return isinstance(v, Fn) and set(v) == M and all(x in seqs for x in v.values())

        def digest_ok(d: Any) -> bool:
            return isinstance(d, Fn) and set(d) <= M and all(
                isinstance(e, Fn) and set(e) == {"low", "high"} and e["low"] in seqs and e["high"] in seqs
                for e in d.values())

        def msg_ok(m: Fn) -> bool:
            keys = set(m)
            if m["from"] not in M or m["to"] not in M:
                return False
            if m["type"] == "data":
                return keys == {"type", "from", "to", "seq"} and 1 <= m["seq"] <= self.MaxSeq
            if m["type"] == "stable":
                v = m["vector"]
                return keys == {"type", "from", "to", "vector"} and set(v) <= M and all(x in seqs for x in v.values())
            if m["type"] == "stability":
                return keys == {"type", "from", "to", "digest"} and digest_ok(m["digest"])
            return False

        return (
            s.group <= M
            and set(s.view) == M and all(s.view[p] <= M for p in M)
            and set(s.sent) == M and all(s.sent[p] in seqs for p in M)
            and all(set(f) == M and all(vec(f[p]) for p in M) for f in (s.delivered, s.received, s.purged))
            and set(s.digest) == M and all(digest_ok(s.digest[p]) for p in M)
            and set(s.heardFrom) == M and all(s.heardFrom[p] <= M for p in M)
            and all(msg_ok(m) for m in s.net)
        )

    def SafeGC(self, s: StableState) -> bool:
        return all(s.purged[p][x] <= s.delivered[q][x]
                   for p in self.Members for q in s.view[p] for x in self.Members)

    def StabilityBound(self, s: StableState) -> bool:
        return all(m["digest"][x]["low"] <= s.delivered[q][x]
                   for m in s.net if m["type"] == "stability"
                   for q in m["digest"] for x in m["digest"])


_DATA, _STABLE, _STABILITY = 0, 1, 2


def _put(t: tuple, i: int, x) -> tuple:
    return t[:i] + (x,) + t[i + 1:]


def _put2(t: tuple, i: int, j: int, x) -> tuple:
    row = t[i]
    return t[:i] + (row[:j] + (x,) + row[j + 1:],) + t[i + 1:]


def _purge_to(rows: tuple, i: int, d: tuple) -> tuple:
    row = rows[i]
    return _put(rows, i, tuple(r if e is None or e[0] <= r else e[0] for r, e in zip(row, d)))


def _learn_from(rows: tuple, i: int, d: tuple) -> tuple:
    row = rows[i]
    return _put(rows, i, tuple(r if e is None or e[1] <= r else e[1] for r, e in zip(row, d)))


class StableKernel(Kernel):
    """``StableModel``'s actions over a lean encoding (the explorer's;
    :mod:`groupcheck.model.core`).  A kernel state is the tuple
    ``(group, view, sent, delivered, received, purged, digest, heardFrom,
    net)``: ``group`` and each member's ``view`` and ``heardFrom`` set are
    the model's frozensets; the functions over members are tuples indexed by
    member - 1 (``delivered``/``received``/``purged`` tuples of tuples of
    ints); a digest is a tuple over members of ``(low, high)`` or None
    outside its domain, a vector a tuple of ints, -1 outside its domain;
    ``net`` is a frozenset of tuples ``(kind, from, to, payload)`` with kind
    0 data (payload the seqno), 1 stable (a vector), 2 stability (a digest).
    Same actions and guards as ``StableModel.next``, its successors in
    another order (the actions that take a message off a link in one pass
    over the messages in flight, not link by link: 16 links of 4 members
    times 4 actions were most of a state's cost on Rounds4); ``decode``
    gives its state."""

    def __init__(self, model: StableModel) -> None:
        self.model = model
        M = model.Members
        self.M = M
        self.N = len(M)
        self.idx = range(self.N)
        if model.MaxInFlight:
            bound = model.MaxInFlight
            self.constraint = lambda k: len(k[8]) <= bound
        lab = {}
        for name in ("Multicast", "SendStable", "SendStability", "Join", "InstallView"):
            lab[name] = [Label(name, (p,)) for p in M]
        for name in ("ReceiveData", "Retransmit", "LoseMessage", "ReceiveStable", "ReceiveStability"):
            lab[name] = [(q, p, Label(name, (q, p))) for q, p in model.links]
        self.lab = lab
        # per link (to, from): the labels of the actions that take a message off it
        self.by_link = {(q, p): (Label("ReceiveData", (q, p)), Label("ReceiveStable", (q, p)),
                                 Label("ReceiveStability", (q, p)), Label("LoseMessage", (q, p)))
                        for q, p in model.links}
        self._memo: dict = {}
        self._merges: dict = {}
        self._vectors: dict = {}
        self._taken: dict = {}
        self._rows: dict = {}
        self._digests: dict = {}
        self._msgs: dict = {}

    # --- encoding -------------------------------------------------------------
    def _enc_digest(self, d: Fn) -> tuple:
        return tuple((d[x]["low"], d[x]["high"]) if x in d else None for x in self.M)

    def _enc_msg(self, m: Fn) -> tuple:
        t = m["type"]
        if t == "data":
            return (_DATA, m["from"], m["to"], m["seq"])
        if t == "stable":
            v = m["vector"]
            return (_STABLE, m["from"], m["to"], tuple(v[x] if x in v else -1 for x in self.M))
        return (_STABILITY, m["from"], m["to"], self._enc_digest(m["digest"]))

    def encode(self, s: StableState) -> tuple:
        """The kernel state of model state ``s``."""
        M = self.M

        def rows(f: Fn) -> tuple:
            return tuple(tuple(f[p][x] for x in M) for p in M)

        return (
            s.group,
            tuple(s.view[p] for p in M),
            tuple(s.sent[p] for p in M),
            rows(s.delivered), rows(s.received), rows(s.purged),
            tuple(self._enc_digest(s.digest[p]) for p in M),
            tuple(s.heardFrom[p] for p in M),
            frozenset(self._enc_msg(m) for m in s.net),
        )

    # Decoding: the dicts are built in key order (members ascending), so
    # Fn._of skips the sort.
    def _row(self, row: tuple) -> Fn:
        f = self._rows.get(row)
        if f is None:
            f = self._rows[row] = Fn._of(dict(zip(self.M, row)))
        return f

    def _digest(self, d: tuple) -> Fn:
        f = self._digests.get(d)
        if f is None:
            f = self._digests[d] = Fn._of({x: Entry(*e) for x, e in zip(self.M, d) if e is not None})
        return f

    def _msg(self, m: tuple) -> Fn:
        f = self._msgs.get(m)
        if f is None:
            kind, p, q, x = m
            if kind == _DATA:
                f = DataMsg(p, q, x)
            elif kind == _STABLE:
                f = StableMsg(p, q, Fn._of({y: v for y, v in zip(self.M, x) if v >= 0}))
            else:
                f = StabilityMsg(p, q, self._digest(x))
            self._msgs[m] = f
        return f

    def decode(self, k: tuple) -> StableState:
        memo = self._memo
        M = self.M
        group, view, sent, delivered, received, purged, digest, heard, net = k
        out = []
        for i, (v, conv) in enumerate((
                (view, None), (sent, None), (delivered, self._row), (received, self._row), (purged, self._row),
                (digest, self._digest), (heard, None), (net, self._msg))):
            key = (i, v)
            f = memo.get(key)
            if f is None:
                if i == 7:
                    f = frozenset(map(conv, v))
                else:
                    f = Fn._of(dict(zip(M, v if conv is None else map(conv, v))))
                memo[key] = f
            out.append(f)
        return StableState(group, *out)

    def init(self):
        return [self.encode(s) for s in self.model.init()]

    # --- actions --------------------------------------------------------------
    def _fresh(self, V: frozenset, row: tuple) -> tuple:
        return tuple((row[x], row[x]) if x + 1 in V else None for x in self.idx)

    def _merge(self, d: tuple, v: tuple) -> tuple:
        merges = self._merges     # (digest, vector) -> merged: few distinct pairs, many states
        r = merges.get((d, v))
        if r is None:
            r = merges[(d, v)] = tuple(
                e if e is None or v[x] < 0 else
                (e[0] if e[0] < v[x] else v[x], e[1] if e[1] > v[x] else v[x]) for x, e in enumerate(d))
        return r

    def next(self, k: tuple):
        group, view, sent, delivered, received, purged, digest, heard, net = k
        model = self.model
        lab = self.lab
        idx = self.idx
        out = []
        add = out.append

        put, put2, purge_to, learn_from = _put, _put2, _purge_to, _learn_from
        fresh, merge = self._fresh, self._merge
        vectors = self._vectors   # (p, view, delivered row, digest) -> SendStable's digest and messages
        taken = self._taken       # (digest, vector) -> ReceiveStable's new digest, or False (the reset)

        # Multicast(p)
        senders, max_seq = model.Senders, model.MaxSeq
        for p in self.M:
            i = p - 1
            if p not in senders or not view[i] or sent[i] >= max_seq:
                continue
            n = sent[i] + 1
            add((lab["Multicast"][i], (group, view, put(sent, i, n), put2(delivered, i, i, n),
                                       put2(received, i, i, n), purged, digest, heard,
                                       net | {(_DATA, p, q, n) for q in view[i] - {p}})))
        # The actions that take a message off a link, one pass over the
        # messages in flight (a successor per message, as next's per-link
        # loops give): ReceiveData, ReceiveStable or ReceiveStability by its
        # kind, and LoseMessage.
        reset = model.ResetOnDifferentMembers
        by_link = self.by_link
        for m in net:
            kind, p, q, x = m
            qi = q - 1
            rest = net - {m}
            labs = by_link[(q, p)]
            if kind == _DATA:       # ReceiveData(q, p)
                pi = p - 1
                d2 = put2(delivered, qi, pi, x) if x == delivered[qi][pi] + 1 else delivered
                r = received[qi][pi]
                add((labs[0], (group, view, sent, d2, put2(received, qi, pi, r if r > x else x), purged, digest,
                               heard, rest)))
            elif kind == _STABLE:   # ReceiveStable(q, p)
                dq = digest[qi]
                got = taken.get((dq, x))      # False: the reset (the vector's members differ), else the merge
                if got is None:
                    got = taken[(dq, x)] = (False if reset and any((y < 0) != (e is None) for y, e in zip(x, dq))
                                            else merge(dq, x))
                if got is False:
                    t = (group, view, sent, delivered, received, purged, digest, put(heard, qi, view[qi]), rest)
                else:
                    t = (group, view, sent, delivered, received, purged, put(digest, qi, got),
                         put(heard, qi, heard[qi] - {p}), rest)
                add((labs[1], t))
            else:                   # ReceiveStability(q, p)
                add((labs[2], (group, view, sent, delivered, learn_from(received, qi, x), purge_to(purged, qi, x),
                               put(digest, qi, fresh(view[qi], delivered[qi])), put(heard, qi, view[qi]), rest)))
            add((labs[3], (group, view, sent, delivered, received, purged, digest, heard, rest)))   # LoseMessage
        # Retransmit(q, p): needs a member that knows of a message it has not
        # delivered (delivered < received somewhere)
        for q, p, lb in (lab["Retransmit"] if delivered != received else ()):
            if q == p:
                continue
            qi, pi = q - 1, p - 1
            d = delivered[qi][pi]
            if not d < received[qi][pi] or not purged[pi][pi] < d + 1:
                continue
            add((lb, (group, view, sent, put2(delivered, qi, pi, d + 1), received, purged, digest, heard, net)))
        # SendStable(p)
        merged = model.GossipMergedDigest
        send_stable = lab["SendStable"]
        for p in self.M:
            i = p - 1
            V = view[i]
            if not V:
                continue
            # p's vector, its merged digest and the STABLE messages it sends
            # depend on few values (memoised: the states repeat them)
            key = (p, V, delivered[i], digest[i])
            r = vectors.get(key)
            if r is None:
                if merged:
                    v = tuple(-1 if e is None else e[0] for e in digest[i])
                else:
                    row = delivered[i]
                    v = tuple(row[x] if x + 1 in V else -1 for x in idx)
                r = vectors[key] = (merge(digest[i], v), frozenset({(_STABLE, p, q, v) for q in V - {p}}))
            net2 = frozenset([m for m in net if m[0] != _STABLE or m[1] != p]) | r[1]
            add((send_stable[i], (group, view, sent, delivered, received, purged,
                                  digest[:i] + (r[0],) + digest[i + 1:], heard[:i] + (heard[i] - {p},) + heard[i + 1:],
                                  net2)))
        # SendStability(p)
        for p in self.M:
            i = p - 1
            V = view[i]
            if not V or heard[i]:
                continue
            d = digest[i]
            net2 = (frozenset(m for m in net if m[0] != _STABILITY or m[1] != p)
                    | {(_STABILITY, p, q, d) for q in V - {p}})
            add((lab["SendStability"][i], (group, view, sent, delivered, learn_from(received, i, d),
                                           purge_to(purged, i, d), put(digest, i, fresh(V, delivered[i])),
                                           put(heard, i, V), net2)))
        self._joins(k, add)
        # InstallView(p)
        reset_view = model.ResetOnViewChange
        for p in self.M:
            i = p - 1
            if not view[i] or p not in group or view[i] == group:
                continue
            add((lab["InstallView"][i], (group, put(view, i, group), sent, delivered, received, purged,
                                         put(digest, i, fresh(group, delivered[i])),
                                         put(heard, i, group) if reset_view else heard, net)))
        return out

    def _joins(self, k: tuple, add) -> None:
        """Join(j): once every member of the group has installed it, a node outside joins."""
        group, view, sent, delivered, received, purged, digest, heard, net = k
        model, lab, put, fresh = self.model, self.lab, _put, self._fresh
        if all(view[p - 1] == group for p in group):
            switches, reset_view = model.CoordSwitchesAtJoin, model.ResetOnViewChange
            for j in self.M:
                if j in group:
                    continue
                c = min(group)
                V = group | {j}
                installs = {j, c} if switches else {j}
                fr = fresh(V, delivered[c - 1])
                heard2 = tuple(V if p == j else (V if reset_view else heard[p - 1]) if switches and p == c
                               else heard[p - 1] for p in self.M)
                dc = delivered[c - 1]
                add((lab["Join"][j - 1], (V, tuple(V if p in installs else view[p - 1] for p in self.M), sent,
                                          put(delivered, j - 1, dc), put(received, j - 1, dc), purged,
                                          tuple(fr if p in installs else digest[p - 1] for p in self.M),
                                          heard2, net)))
