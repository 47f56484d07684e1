"""The command line as a user runs it: ``groupcheck ARGS`` in a fresh
interpreter, its exit status and output captured."""
from __future__ import annotations

import subprocess
import sys


TRACEBACK = "Traceback (most recent call last)"


def no_traceback(where: str, *texts) -> None:
    """Fail when a CLI run printed a Python traceback: the CLI prints one
    line and names a log file instead (README, "Exit codes")."""
    for t in texts:
        if isinstance(t, (bytes, bytearray)):
            t = t.decode("utf-8", "replace")
        if isinstance(t, str) and TRACEBACK in t:
            raise AssertionError(f"{where} printed a Python traceback:\n{t[-2000:]}")


def gc(*args, timeout: float = 900):
    r = subprocess.run([sys.executable, "-m", "groupcheck.cli.main", *args],
                       capture_output=True, text=True, timeout=timeout)
    no_traceback("groupcheck " + " ".join(map(str, args)), r.stdout, r.stderr)
    return r


def main_in_process(*args, capsys) -> tuple[int, str, str]:
    """``groupcheck ARGS`` through cli.main.main() in this interpreter (its
    error handling included, without a fresh interpreter's start-up): the
    exit status, stdout and stderr.  The signal handlers main() installs are
    put back."""
    import signal
    from groupcheck.cli import main as cli
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    argv = sys.argv
    sys.argv = ["groupcheck", *args]
    capsys.readouterr()
    try:
        cli.main()
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    finally:
        sys.argv = argv
        for s, h in saved.items():
            signal.signal(s, h)
    out = capsys.readouterr()
    no_traceback("groupcheck " + " ".join(map(str, args)), out.out, out.err)
    return code, out.out, out.err
