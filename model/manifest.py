"""Reading spec/<P>/manifest.json and running its models with TLC.

A manifest lists the bounded models of one protocol, the outcome TLC must
report for each (``ok`` or the name of the invariant/property it must
violate) and the distinct-state count measured once (spec/README.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groupcheck.spec import spec_root

from .tlc import TLCResult, run_tlc
from .tlc_cfg import Cfg, parse_cfg


class ManifestError(ValueError):
    pass


@dataclass
class ModelEntry:
    protocol: str
    spec_dir: Path
    name: str
    module: str
    cfg: str
    expected: str
    distinct_states: int | None
    compare: bool
    timeout: float
    description: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def cfg_path(self) -> Path:
        return self.spec_dir / self.cfg

    def parsed_cfg(self) -> Cfg:
        return parse_cfg(self.cfg_path)

    def constants(self) -> dict[str, Any]:
        return dict(self.parsed_cfg().constants)


_REQUIRED = ("name", "module", "cfg", "expected")


def protocols() -> list[str]:
    """Protocols with a manifest, as lower-case names, in a stable order."""
    root = spec_root()
    return sorted(p.name.lower() for p in root.iterdir() if (p / "manifest.json").is_file())


def spec_dir_of(protocol: str) -> Path:
    root = spec_root()
    for p in root.iterdir():
        if p.name.lower() == protocol.lower() and (p / "manifest.json").is_file():
            return p
    raise ManifestError(f"no spec folder with a manifest.json for protocol {protocol!r}; known: {protocols()}")


def load(protocol: str) -> list[ModelEntry]:
    return load_dir(spec_dir_of(protocol), protocol)


def load_dir(d: str | Path, protocol: str | None = None) -> list[ModelEntry]:
    """The models of the manifest in folder ``d`` (a packaged spec or a user's
    own); the protocol is named by the manifest, else by the folder."""
    d = Path(d).resolve()
    path = d / "manifest.json"
    if not path.is_file():
        raise ManifestError(f"{d}: no manifest.json (or give a .tla file with its .cfg and --expect)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ManifestError(f"{path}: line {e.lineno}, column {e.colno}: {e.msg}") from None
    protocol = protocol or data.get("protocol") or d.name
    out = []
    for i, m in enumerate(data.get("models", [])):
        missing = [k for k in _REQUIRED if k not in m]
        if missing:
            raise ManifestError(f"{path}: models[{i}] lacks field(s) {missing}")
        if not (d / m["cfg"]).is_file():
            raise ManifestError(f"{path}: models[{i}] ({m['name']}): cfg {m['cfg']!r} not found")
        known = set(_REQUIRED) | {"distinct_states", "compare", "timeout", "description"}
        out.append(
            ModelEntry(
                protocol=protocol.lower(),
                spec_dir=d,
                name=m["name"],
                module=m["module"],
                cfg=m["cfg"],
                expected=m["expected"],
                distinct_states=m.get("distinct_states"),
                compare=bool(m.get("compare", False)),
                timeout=float(m.get("timeout", 300)),
                description=m.get("description", ""),
                extra={k: v for k, v in m.items() if k not in known},
            )
        )
    return out


def select(protocols_: list[str] | None, model: str | None = None) -> list[ModelEntry]:
    names = [p.lower() for p in protocols_] if protocols_ else protocols()
    entries = [e for p in names for e in load(p)]
    if model is not None:
        entries = [e for e in entries if e.name == model]
        if not entries:
            raise ManifestError(f"no model named {model!r} in {names}")
    return entries


@dataclass
class CheckOutcome:
    entry: ModelEntry
    result: TLCResult
    workers: int = 1
    liveness_final: bool = False    # TLC ran with -lncheck final

    @property
    def observed(self) -> str:
        r = self.result
        if r.outcome == "ok":
            return "ok"
        if r.outcome in ("invariant", "property") and r.violated:
            return r.violated
        return r.outcome  # deadlock / error / timeout

    @property
    def count_exact(self) -> bool:
        """Whether this run's distinct-state count is a property of the model
        alone (docs/architecture.md, "What the manifest pins"): a search that
        ran to the end (``ok``; a temporal violation, since ``check`` runs
        liveness only once the whole graph is built); or an invariant or
        action-property violation (a step, found during the search) found
        by one worker, whose breadth-first order is fixed.  Several workers
        reach a violating state in an order set by thread timing, so that
        count is not pinned."""
        r = self.result
        lasso = r.loop_index is not None or r.stuttering    # a temporal, not an action, property
        if r.outcome == "ok" or (r.outcome == "property" and lasso and self.liveness_final):
            return True
        return (r.outcome == "invariant" or (r.outcome == "property" and not lasso)) and self.workers == 1

    @property
    def count_matches(self) -> bool:
        e = self.entry
        if e.distinct_states is None or not self.count_exact:
            return True
        return self.result.distinct_states == e.distinct_states

    @property
    def matches_expectation(self) -> bool:
        return self.observed == self.entry.expected and self.count_matches

    def to_json(self) -> dict[str, Any]:
        r = self.result
        return {
            "protocol": self.entry.protocol,
            "model": self.entry.name,
            "expected": self.entry.expected,
            "result": r.outcome,
            "violated": r.violated,
            "distinct_states": r.distinct_states,
            "expected_distinct_states": self.entry.distinct_states,
            "states_generated": r.states_generated,
            "depth": r.depth,
            "seconds": round(r.seconds, 3),
            "matches_expectation": self.matches_expectation,
            "counterexample": r.to_json()["counterexample"] if r.counterexample else None,
            "error_message": r.error_message,
            "error_location": r.error_location._asdict() if r.error_location else None,
        }


# TLC checks temporal properties at intervals set by the wall clock while it
# searches, so where it stops on a liveness violation depended on load
# (MergedGossip stopped at 4,536 or 23,509 distinct states on the same
# model).  -lncheck final defers the liveness check to the end of the search:
# the whole reachable graph is built first, so the verdict and the count are
# the model's.  Safety invariants are still checked on every state.
LIVENESS_FINAL = ("-lncheck", "final")


def check(entry: ModelEntry, *, workers: int = 1) -> CheckOutcome:
    final = bool(entry.parsed_cfg().properties)
    res = run_tlc(entry.spec_dir, entry.module, entry.cfg, workers=workers, timeout=entry.timeout,
                  extra_args=LIVENESS_FINAL if final else ())
    return CheckOutcome(entry, res, workers, liveness_final=final)


# ---------------------------------------------------------------------------
# Shipped variants (docs/architecture.md, "What the audit covers")
#
# A manifest carries no flag for flawed or fixed designs; what it does carry
# is each model's expectation and its constants.  The two functions below are
# the one definition the audit, its report and the docs use.

def shipped(entry: ModelEntry) -> bool:
    """Whether ``entry`` is a shipped model: its manifest expects ``ok``,
    i.e. the design it configures is claimed to hold in that environment.
    A model expecting a violation is a finding (a flaw the audit must keep
    reproducing), not a shipped model."""
    return entry.expected == "ok"


def variant_key(entry: ModelEntry) -> tuple[str, str, tuple[tuple[str, bool], ...]]:
    """The design variant a model configures: its protocol, its TLA+ module
    (the MC wrapper: a lossy transport or a refinement check is its own
    module) and the values of its Boolean constants, the design switches
    (``ReconcileDigests``, ``TokenRingClaim``, ...).  The other constants
    (member counts, bounds on messages, crashes and joins, sets of senders)
    size the environment: models that differ only in them check the same
    variant at different sizes."""
    switches = tuple(sorted((k, v) for k, v in entry.constants().items() if isinstance(v, bool)))
    return entry.protocol, entry.module, switches


def variant_label(entry: ModelEntry) -> str:
    """A variant's name in the report: protocol, module and the switches
    that are TRUE (a module's models all set the same switches)."""
    protocol, module, switches = variant_key(entry)
    on = [k for k, v in switches if v]
    return f"{protocol} {module}[{', '.join(on) if on else 'every switch FALSE'}]"


def shipped_variants(entries: list[ModelEntry]) -> dict[tuple, list[ModelEntry]]:
    """The shipped models of ``entries`` grouped by ``variant_key``, in
    manifest order: a shipped variant is a variant with at least one shipped
    model.  (A variant may also have models that expect a violation: the
    faithful SEQUENCER holds without crashes and breaks TotalOrder with one.)"""
    out: dict[tuple, list[ModelEntry]] = {}
    for e in entries:
        if shipped(e):
            out.setdefault(variant_key(e), []).append(e)
    return out
