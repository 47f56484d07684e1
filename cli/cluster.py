"""``groupcheck cluster run``: the stacks as OS processes over UDP on
127.0.0.1, nodes killed with SIGKILL, the per-node traces checked
(impl/cluster.py, impl/runtime.py, docs/impl.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from .render import ENVIRONMENT, at_least, console, fail

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Run the stacks as a real cluster on 127.0.0.1 (UDP, HMAC, SIGKILL) and check its traces.")


def _kill(spec: str) -> tuple[int, float]:
    node, sep, at = spec.partition("@")
    try:
        if not sep:
            raise ValueError
        n, t = int(node), float(at)
        if t < 0:
            raise ValueError
        return n, t
    except ValueError:
        fail(f"--kill {spec!r}: expected NODE@SECONDS, e.g. 1@1.5")


@app.command()
def run(
    protocol: str = typer.Option(..., "--protocol", help="sequencer or sequencerflush (SEQUENCER over FLUSH)"),
    nodes: int = typer.Option(3, "--nodes", callback=at_least(2), help="node processes (members 1..N; 1 is the coordinator)"),
    messages: int = typer.Option(100, "--messages", callback=at_least(0), help="multicasts each node makes"),
    kill: Optional[List[str]] = typer.Option(None, "--kill", help="NODE@SECONDS: SIGKILL the node that long after the start (repeatable)"),
    out: Path = typer.Option(..., "--out", help="folder for the traces, node configs and logs"),
    rate: float = typer.Option(500.0, "--rate", help="multicasts per second per node"),
    timeout: float = typer.Option(60.0, "--timeout", help="seconds to wait for quiescence"),
    key_file: Optional[str] = typer.Option(None, "--key-file", help="cluster key (default: a fresh random key in OUT/cluster.key, mode 600)"),
    checker: str = typer.Option("model", "--checker", help="model (the Python replay), tlc (TLC validates the merged trace against Trace<P>.tla) or both (a disagreement fails the run)"),
    as_json: bool = typer.Option(False, "--json", help="the result as JSON"),
):
    """Start the nodes, run the workload, kill as told, wait for quiescence, check the traces.
    Exit 0 when every trace conforms and the survivors' history is clean, 1 otherwise."""
    from groupcheck.impl.auth import KeyError_
    from groupcheck.impl.cluster import ClusterError, Interrupted, Runner
    kills = [_kill(k) for k in kill or []]
    log = (lambda s: None) if as_json else (lambda s: console(stderr=True).print(s, markup=False))
    try:
        res = Runner(protocol, nodes, messages, kills, out, rate=rate, timeout=timeout, key_file=key_file,
                     log=log, checker=checker).run()
    except ClusterError as e:
        fail(str(e))
    except (KeyError_, OSError) as e:
        fail(str(e), ENVIRONMENT)
    except Interrupted as e:
        fail(f"interrupted ({e}); every node process was killed", 130)
    if as_json:
        print(json.dumps(res.to_json(), indent=2))
    else:
        label = "ok" if res.ok else (f"{res.verdict} (known finding of {protocol})" if res.known else res.verdict)
        print(f"{res.run_id}: {label}; quiescent {res.quiescent}; killed {res.killed or 'none'}; "
              f"delivered {res.delivered}; {res.seconds} s")
        if res.reason:
            print(f"  replay: {res.reason}")
        for v in res.history:
            print(f"  history {v['check']}: {v['text']}")
        if res.tlc is not None:
            t = res.tlc
            print(f"  tlc: {'accepts' if t['ok'] else 'rejects at event ' + str(t['first_unmatched'])} "
                  f"({t['events']} events, {t['seconds']} s)"
                  + ("" if t.get("agree", True) else "; TOOL FAILURE: TLC and the model replay disagree"))
            if t.get("explain"):
                print("    " + t["explain"].replace("\n", "\n    "))
        print(f"  traces: {out}/traces (groupcheck conform {out}/traces)")
    raise typer.Exit(0 if res.ok and res.quiescent else 1)
