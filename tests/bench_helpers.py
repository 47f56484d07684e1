"""Loading a bench/ script as a module (bench/ is not a package)."""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_bench(name: str, as_name: str | None = None):
    """bench/NAME.py, loaded under ``as_name`` (default bench_NAME)."""
    spec = importlib.util.spec_from_file_location(as_name or f"bench_{name}", ROOT / "bench" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod        # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod
