"""The proof matrix: which encodings ``groupcheck prove`` and the audit run.

Theory of operation
-------------------
The matrix is data: the ``proofs`` object of each spec/<P>/manifest.json
(spec/README.md, "manifest.json").  Each of its variants names its encoding
(a class or function of model/proofs/<module>.py, called with the member
count N, the variant's name and its ``args``), the N of the default matrix
(``members``; null: asked only at an N given with ``--members``), the N's it
may be asked at (``at``), what is expected (``proved``: every query; ``cti``:
a counterexample to induction that the bounded model of the same size
reaches, engine.verdict), its lemma set (the name of a tuple of lemma names
in the module), and settings of the run: ``heavy`` (left out of the default
audit), ``default`` (false: left out of the default matrix, asked when
named with ``--variant`` or with ``--all``), ``rlimit`` (z3's resource
limit per query at that N, calibrated: docs/proofs.md, "Resource
limits, not time"), ``reach_max_states`` (how far the classifier explores) and the
protocol's ``shards_per_core``.  The registry reads the data and looks its
names up in the protocol's proofs module; it compares no protocol name.

How each query is asked (first attempts, splits, retries in a fresh
context) belongs to the encoding's formulas and stays with its class
(engine.Encoding).

The matrix is run one variant per process (``run_isolated``): a child
rebuilds its encoding here by protocol, variant and N, so the engine never
imports the registry.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from .. import manifest
from .prover import Encoding, Query, run


class UnknownTarget(ValueError):
    pass


@lru_cache(maxsize=None)
def _proofs(protocol: str) -> dict[str, Any] | None:
    path = manifest.spec_dir_of(protocol) / "manifest.json"
    return json.loads(path.read_text(encoding="utf-8")).get("proofs")


def protocols() -> tuple[str, ...]:
    """The protocols whose manifest has a proof matrix, sorted."""
    return tuple(p for p in manifest.protocols() if _proofs(p) is not None)


def _asked_at(v: dict, members: int | None, named: str | None = None, every: bool = False) -> int | None:
    """The N the variant is asked at (None: not asked); ``named``: the
    variant the caller names, and ``every`` (``--all``): one outside the
    default matrix is asked too."""
    if members is None:
        if v.get("default", True) is False and not every and (named or "").lower() != v["variant"].lower():
            return None
        return v.get("members")
    at = v.get("at")
    if isinstance(at, list):
        return members if members in at else None
    if isinstance(at, dict) and (members < at.get("min", members) or members in at.get("except", ())):
        return None
    return members


def _value(x):
    return tuple(_value(y) for y in x) if isinstance(x, list) else x


def _build(protocol: str, proofs: dict, v: dict, n: int) -> Encoding:
    module = importlib.import_module(f"{__package__}.{v.get('module', protocol)}")
    kw = {k: _value(x) for k, x in v.get("args", {}).items()}
    if "lemmas" in v:
        kw["lemma_names"] = getattr(module, v["lemmas"])
    enc = getattr(module, v["encoding"])(n, variant=v["variant"], **kw)
    enc.expect_cti = v["expect"] == "cti"
    enc.heavy = bool(v.get("heavy", False))
    enc.shards_per_core = proofs.get("shards_per_core", 1)
    if "reach_max_states" in v:
        enc.reach_max_states = v["reach_max_states"]
    limit = v.get("rlimit")     # one number: at the default N; an object: by N
    limit = limit.get(str(n)) if isinstance(limit, dict) else limit if n == v.get("members") else None
    if limit is not None:
        enc.rlimit = limit
    return enc


def variants(protocol: str, members: int | None = None, named: str | None = None,
             every: bool = False, only: str | None = None) -> list[Encoding]:
    """The protocol's matrix at N = ``members`` (None: the default matrix,
    and the variant ``named`` if it is outside it; ``every``: each variant
    with a default N); ``only``: that variant's encoding alone (no other
    is built: building one names z3 terms, and the names steer z3)."""
    proofs = _proofs(protocol) or {"variants": []}
    return [_build(protocol, proofs, v, n) for v in proofs["variants"]
            if (n := _asked_at(v, members, named, every)) is not None
            and (only is None or v["variant"] == only)]


def select(protocol: str | None = None, variant: str | None = None,
           members: int | None = None, every: bool = False) -> list[Encoding]:
    """The encodings to run: every protocol's (or one's), every variant's
    (or one's); ``every``: those outside the default matrix too."""
    known = protocols()
    if protocol is not None and protocol not in known:
        raise UnknownTarget(f"no proofs for protocol {protocol!r}; protocols with proofs: {', '.join(known)}")
    out: list[Encoding] = []
    for name in ([protocol] if protocol else known):
        encs = variants(name, members, variant, every)
        if variant is not None:
            encs = [e for e in encs if e.variant.lower() == variant.lower()]
            if not encs and protocol is not None:
                raise UnknownTarget(f"{name}: no variant {variant!r}; variants: "
                                    f"{', '.join(e.variant for e in variants(name, members))}")
        out += encs
    if not out:
        raise UnknownTarget(f"no variant {variant!r} in any protocol with proofs")
    return out


# ---------------------------------------------------------------- running the matrix

def _run_variant(key: tuple) -> list[Query]:
    protocol, variant, members, rlimit, shard, shards, *row = key
    [enc] = variants(protocol, members, variant, only=variant)
    if row:
        return run(enc, rlimit=rlimit, rows=frozenset(row))
    if shards == 1:
        return run(enc, rlimit=rlimit)
    only = frozenset(name for i, name in enumerate(enc.lemmas) if i % shards == shard)
    return run(enc, rlimit=rlimit, only=only, implication=shard == 0)


def _merge_shards(enc: Encoding, parts: list[list[Query]]) -> list[Query]:
    """The shards' queries in ``run``'s order: initiation by lemma,
    consecution by action (the order the shards met them) then lemma,
    implication last."""
    lemma = {name: i for i, name in enumerate(enc.lemmas)}
    action: dict[str, int] = {}
    qs = [q for part in parts for q in part]
    for q in qs:
        if q.query.startswith("consecution:"):
            action.setdefault(q.query.split(":")[1], len(action))

    def key(q: Query):
        kind, *rest = q.query.split(":")
        if kind == "initiation":
            return (0, 0, lemma[rest[0]])
        if kind == "consecution":
            return (1, action[rest[0]], lemma[rest[1]])
        return (2, 0, 0)
    return sorted(qs, key=key)    # (stable: implications keep their order)


def _shard_keys(encs: list[Encoding], jobs: int, rlimit: int | None, members: int | None):
    """``_run_variant``'s keys, and the index of the encoding each is for."""
    spare = max(1, jobs // max(1, len(encs)))
    keys, owner = [], []
    for i, e in enumerate(encs):
        per_core = getattr(e, "shards_per_core", 1)
        shards = 1 if spare == 1 or e.expect_cti else max(1, min(len(e.lemmas), per_core * spare))
        for k in range(shards):
            keys.append((e.protocol, e.variant, members, rlimit, k, shards))
            owner.append(i)
    return keys, owner


def run_isolated(encs: Iterable[Encoding], *, rlimit: int | None = None, jobs: int = 1,
                 members: int | None = None):
    """``run`` for each encoding in a fresh process (spawned, one variant per
    process, ``jobs`` at once), yielding each encoding's queries in order.
    Why a process per variant: z3's declarations live in one context per
    process, and a variant run after another there can go slower or answer
    ``unknown`` where it alone proves everything (seen: SEQUENCER's NoCrash,
    113 queries in 1.5 s alone, 9.6 s after Raincore's Fixed, and one
    ``unknown`` in the audit).  Encodings are named by protocol and variant
    (rebuilt from the matrix in the child).

    With more cores than variants, a fixed variant's lemmas are dealt out
    to shards (``shards_per_core`` per spare core, so the pool evens out
    rows of very different cost: at N = 3 SEQUENCER over FLUSH's V2Digest
    row takes five minutes and most rows seconds), each its own process
    asking initiation and consecution of its lemmas under every lemma; the
    queries are the same and come back in ``run``'s order.  A flawed
    variant is not split: its pinned counterexample is searched once."""
    import multiprocessing
    from collections import Counter
    from concurrent.futures import ProcessPoolExecutor
    encs = list(encs)
    keys, owner = _shard_keys(encs, jobs, rlimit, members)
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=max(1, min(jobs, len(keys))), mp_context=ctx,
                             max_tasks_per_child=1) as pool:
        # map keeps the keys' order, and an encoding's shards are adjacent:
        # yield each encoding once its last shard is back
        shards = Counter(owner)
        parts: list[list[Query]] = []
        for i, qs in zip(owner, pool.map(_run_variant, keys)):
            parts.append(qs)
            if len(parts) == shards[i]:
                qs = parts[0] if len(parts) == 1 else _merge_shards(encs[i], parts)
                yield encs[i], _retry_rows(pool, encs[i], qs, rlimit, members)
                parts = []


def _retry_rows(pool, enc: Encoding, qs: list[Query], rlimit: int | None, members: int | None) -> list[Query]:
    """Under ``retry_fresh``, each ``unknown`` consecution row asked once
    more in a process that asks nothing else (the same premises, time-out
    and attempts); its answer replaces the row's, the seconds add up.  z3's
    search depends on every term the process has made: at N = 4 SEQUENCER
    over FLUSH's RecvData x V2Digest and InstallView x Candidates stayed
    ``unknown`` at 120 s per conjunct in a shard, even retried in a fresh
    z3 context of the shard's process; each alone in a process was proved
    (151 s and 230 s, docs/proofs.md "N = 4")."""
    if not getattr(enc, "retry_fresh", False):
        return qs
    retry = [k for k, q in enumerate(qs) if q.result == "unknown" and q.query.startswith("consecution:")]
    if not retry:
        return qs
    keys = [(enc.protocol, enc.variant, members, rlimit, 0, 1, tuple(qs[k].query.split(":")[1:]))
            for k in retry]
    out = list(qs)
    for k, (again,) in zip(retry, pool.map(_run_variant, keys)):
        again.seconds += qs[k].seconds
        again.cpu_seconds += qs[k].cpu_seconds
        again.rlimit += qs[k].rlimit
        out[k] = again
    return out
