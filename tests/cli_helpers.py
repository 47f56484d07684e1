"""The command line as a user runs it: ``groupcheck ARGS`` in a fresh
interpreter, its exit status and output captured."""
from __future__ import annotations

import subprocess
import sys


def gc(*args, timeout: float = 900):
    return subprocess.run([sys.executable, "-m", "groupcheck.cli.main", *args],
                          capture_output=True, text=True, timeout=timeout)
