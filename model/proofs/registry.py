"""The proof matrix: which encodings ``groupcheck prove`` runs, per protocol.

Each entry is a protocol variant at one member count: a fixed variant must
be proved (every query unsat), a flawed variant must yield a counterexample
to induction that the bounded model of the same size reaches (see
engine.verdict).  The member counts are the manifest's (for STABLE: N = 3, two
in the first view and one joiner, for Fixed and Flawed; N = 2, one in the
first view, for JoinRace, the size of PairJoinRace); ``members`` asks for
another N.
"""

from __future__ import annotations

from collections.abc import Callable

from .engine import Encoding


def _stable(members: int | None) -> list[Encoding]:
    from .stable import StableEncoding
    n = members or 3
    ninit = min(2, n)
    # JoinRace at the size of its smallest manifest witness (PairJoinRace:
    # member 1 alone, 2 joins, 1 multicasts); the N = 3 model (JoinRace) finds
    # it only after 120,183 states, beyond the classifier's prefix.
    return [StableEncoding(n, ninit), StableEncoding(n, ninit, reset=False),
            StableEncoding(members or 2, 1, coord_switches=False, reach_senders=frozenset({1}))]


def _raincore(members: int | None) -> list[Encoding]:
    """Raincore: the seed as written (Faithful3's constants, N = 3): a
    reachable CTI to AtMostOneToken; the fixes (FixedRing2's constants,
    N = 2): AtMostOneToken, LegalStates and ConsistentHistory proved.  The fixed variant's
    lemmas are those of the two-node ring; with ``members`` other than 2
    the fixed variant is FixedLegalStates (LegalStates only, the lemmas
    that hold at any N and the founder's ring: proved at N = 3, 4, 5;
    AtMostOneToken and ConsistentHistory are proved at N = 2 only;
    AtMostOneToken is false at N = 3, 4, 5 under the fixes, F8), and
    both variants have N nodes, all in the initial ring, InitSeq = N
    (docs/proofs.md, Raincore)."""
    from .raincore import FLAWED_LEMMAS, LEMMAS_PROVED_N, RaincoreEncoding, manifest_constants
    faithful, fixed = manifest_constants("Faithful3"), manifest_constants("FixedRing2")
    if members is not None and members != 2:
        for c in (faithful, fixed):
            c.update(N=members, InitSize=members, InitSeq=max(members, 2))
        return [RaincoreEncoding(faithful, variant="Faithful", expect_cti=True, lemma_names=FLAWED_LEMMAS),
                RaincoreEncoding(fixed, variant="FixedLegalStates", expect_cti=False,
                                 lemma_names=LEMMAS_PROVED_N, properties=("LegalStates",))]
    if members == 2:
        faithful.update(N=2, InitSize=2, InitSeq=2)
    return [RaincoreEncoding(faithful, variant="Faithful", expect_cti=True, lemma_names=FLAWED_LEMMAS),
            RaincoreEncoding(fixed, variant="Fixed", expect_cti=False,
                             properties=("AtMostOneToken", "LegalStates", "ConsistentHistory"))]


def _sequencerflush(members: int | None) -> list[Encoding]:
    # plain SEQUENCER (Sequencer.tla) at the size of the manifest's CoordCrash
    # (N = 3): NoCrash (MaxCrashes = 0, TotalOrder proved) and NoFlush (one
    # crash, the coordinator's included: the flawed variant of SEQUENCER over
    # FLUSH, a reachable CTI to SurvivorTotalOrder); SequencerFlush.tla's
    # Fixed variant at N = 2 (Pair's constants), the only N both properties
    # are proved at by default; with --members 3 (about half an hour of z3)
    # the Fixed variant at N = 3 (CoordCrash's constants), both properties;
    # with --members 4 the same lemmas at N = 4 (about two hours of z3 CPU)
    fixed = _sequencerflush_fixed(members) if members in (None, 2, 3, 4) else []
    return [*_sequencer_plain(members), *fixed]


def _sequencer_plain(members: int | None) -> list[Encoding]:
    from .sequencer import SequencerEncoding
    n = members or 3
    return [SequencerEncoding(n, 0), SequencerEncoding(n, 1)]


def _sequencerflush_fixed(members: int | None) -> list[Encoding]:
    """SEQUENCER over FLUSH, the Fixed variant (UniformDelivery, ResendAlways,
    ResentFirst FALSE, one crash): NoDuplicates and SurvivorTotalOrder, at
    N = 2 (Pair's constants), N = 3 (CoordCrash's; 2026-11-25, with the
    view-2 lemmas and ghosts; before, ``FixedNoDuplicates`` proved
    NoDuplicates alone there) and N = 4 (the same lemmas, written for any
    N >= 3; every member a sender); N = 5 is not attempted (docs/proofs.md,
    "SEQUENCER over FLUSH")."""
    from .sequencerflush import SequencerFlushEncoding
    return [SequencerFlushEncoding(members or 2)]


def _flush(members: int | None) -> list[Encoding]:
    """FLUSH at N = 3 or ``members``: Fixed (every query proved: crash and
    leave, any number of views, multicasts, messages in flight), FlawedLeave
    and FlawedCrash (the seed as written: reachable CTIs to VirtualSynchrony).
    FixedJoin is proved too, by hand and in the slow tests (docs/proofs.md,
    FLUSH)."""
    from .flush import registered
    return list(registered(members))


PROTOCOLS: dict[str, Callable[[int | None], list[Encoding]]] = {
    "flush": _flush,
    "raincore": _raincore,
    "stable": _stable,
    "sequencerflush": _sequencerflush,
}


class UnknownTarget(ValueError):
    pass


def select(protocol: str | None = None, variant: str | None = None,
           members: int | None = None) -> list[Encoding]:
    """The encodings to run: every protocol's (or one's), every variant's (or one's)."""
    if protocol is not None and protocol not in PROTOCOLS:
        raise UnknownTarget(f"no proofs for protocol {protocol!r}; protocols with proofs: "
                            f"{', '.join(sorted(PROTOCOLS))}")
    out: list[Encoding] = []
    for name in ([protocol] if protocol else sorted(PROTOCOLS)):
        encs = PROTOCOLS[name](members)
        if variant is not None:
            encs = [e for e in encs if e.variant.lower() == variant.lower()]
            if not encs and protocol is not None:
                raise UnknownTarget(f"{name}: no variant {variant!r}; variants: "
                                    f"{', '.join(e.variant for e in PROTOCOLS[name](members))}")
        out += encs
    if not out:
        raise UnknownTarget(f"no variant {variant!r} in any protocol with proofs")
    return out
