"""The three compositions' own lines: what SEQUENCER over FLUSH, FLUSH over
the ring and both over the ring write beyond their parts, per layer.

    .venv/bin/python bench/composition_lines.py

Counted, per composition: its spec folder's TLA+ modules that are not
links to a part's (the composed spec, its MC and refinement modules, its
Trace spec; the .cfg files and the manifest are data), its Python model,
its z3 encodings (model/proofs/<name>/), its replay binding, its
simulator and stack modules in impl/, and its trace schema.  Lines are
physical lines, comments and docstrings included.  Prints one JSON object.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

COMPOSITIONS = {
    "SequencerFlush": "sequencerflush",
    "RaincoreFlush": "raincoreflush",
    "RaincoreSequencerFlush": "raincoresequencerflush",
}
# impl modules that exist only for a composition (its simulator)
IMPL_EXTRA = {"raincoreflush": ["impl/sim_raincoreflush.py"]}


def lines(p: Path) -> int:
    with p.open("rb") as f:
        return sum(1 for _ in f)


def own_files(spec: str, name: str) -> dict[str, list[Path]]:
    folder = ROOT / "spec" / spec
    return {
        "spec": sorted(p for p in folder.glob("*.tla") if not p.is_symlink()),
        "model": [ROOT / "model" / f"{name}.py"],
        "encoding": sorted((ROOT / "model" / "proofs" / name).glob("*.py")),
        "conformance": [ROOT / "conformance" / "replay" / f"{name}.py"],
        "impl": [ROOT / "impl" / "stacks" / f"{name}.py"] + [ROOT / x for x in IMPL_EXTRA.get(name, [])],
        "schemas": [ROOT / "core" / "trace" / "schemas" / f"{name}.json"],
    }


def main() -> int:
    out: dict = {"compositions": {}, "by_layer": {}, "total": 0}
    for spec, name in COMPOSITIONS.items():
        per = {}
        for layer, files in own_files(spec, name).items():
            counted = {str(p.relative_to(ROOT)): lines(p) for p in files if p.exists()}
            per[layer] = counted
            n = sum(counted.values())
            out["by_layer"][layer] = out["by_layer"].get(layer, 0) + n
            out["total"] += n
        out["compositions"][name] = per
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
