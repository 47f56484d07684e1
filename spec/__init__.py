"""The TLA+ specifications, shipped as package data.

One folder per protocol (``Sequencer/``, ``Stable/``, ``Flush/``,
``SequencerFlush/``, ``Raincore/``), each with the spec module, its MC
modules and configs, a README and ``manifest.json``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def spec_root() -> Path:
    """The folder holding the spec folders (works for editable and wheel installs)."""
    return Path(str(resources.files(__name__)))
