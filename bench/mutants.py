"""Mutation benchmark: which layer of checks kills which fault in impl/.

cosmic-ray enumerates the mutation sites of the chosen modules (its operators
and its ``init`` work list) and makes each mutant's source
(``cosmic_ray.mutating.mutate_code``); this runner applies one mutant at a
time to a copy of the source tree, never to the tree it was started from,
and runs each layer of checks against it in a fresh process with a timeout:

* ``unit``: the module's unit and golden test files (``TESTS`` below);
* ``lockstep``: its Hypothesis lock-step files (tests/test_lockstep_*.py);
* ``campaign``: the audit's conformance stage on ``--runs`` drawn runs of
  each protocol whose simulated run calls the module's code, judged by the audit's own
  ``conformance_check`` (a run that does not conform, a violation no
  documented finding witnesses, a finding rate outside its band) and its
  fixed-stack campaigns;
* ``tlc``: TLC trace validation of ``--tlc-runs`` of those runs (the audit's
  ``tracevalidation_check``); killed when TLC rejects a run or disagrees
  with the replay;
* ``history``: the audit's history stage (``history_check``);
* ``cluster`` (only with ``--cluster``): the audit's cluster stage, a
  3-node UDP run.

A mutant is *killed* by a layer when the layer fails, times out or crashes,
*incompetent* when the mutated module no longer imports, and *survives*
when every layer passes.  A mutant of annotations alone is equivalent by
construction (they are never evaluated: no layer is run); a survivor
listed in ``EQUIVALENT`` (matched by module, operator and the changed line
before and after) has been read and judged to behave like the original;
any other survivor is a gap.  The
default tests are ``unit`` and ``lockstep``; the default audit is
``campaign``, ``tlc``, ``history`` (and ``cluster`` when run).  Rates count
the competent, non-equivalent mutants of the modules a layer covers.

The sample is deterministic (``--sample K --seed S``, spread evenly over
the modules); results are written to ``--out`` after every mutant, and
``--resume`` skips the mutants already there, except those named by
``--only``, whose ``--layers`` are measured again (after a test is added).
``--markdown FILE`` prints a results file as the tables of
docs/mutants.md.

    .venv/bin/python -m pip install -e '.[bench]'     # cosmic-ray
    nice -n 10 .venv/bin/python bench/mutants.py --sample 72 --seed 1 --out mutants.json
    .venv/bin/python bench/mutants.py --markdown mutants.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))      # bench/semantic.py, when this file is loaded by path
from groupcheck.conformance.findings import _binom_cdf as binom_cdf  # noqa: E402
from mutant_layers import child  # noqa: E402  (the child side: one layer on a mutated tree)
from mutant_tests import (changed_lines, function_body_lines, importers, imported_modules,  # noqa: E402,F401
                          load_covmap, load_covmaps, select_tests)
INSTALL = "pip install -e '.[bench]'"

# the packages whose modules are sampled by default: every module of the
# product (proof encodings and stacks included)
PACKAGES = ("core", "impl", "conformance", "model", "cli")
FAMILIES = ("semantic", "cosmic-ray")


def product_modules(root: Path = ROOT) -> list[str]:
    return sorted(str(p.relative_to(root)) for pkg in PACKAGES for p in (root / pkg).rglob("*.py"))

# module -> (unit test files, lock-step test files) of the default suite that
# exercise it; the campaign-sized test files (test_campaign_*, the
# raincoreflush stack's) are left to the campaign layer, which runs the same
# simulations through the audit's judgment
TESTS = {
    "impl/sequencer.py": (["test_impl_sequencer.py", "test_impl_edges.py", "test_end_of_run.py"],
                          ["test_lockstep_sequencer.py"]),
    "impl/flush.py": (["test_impl_flush.py", "test_impl_edges.py", "test_codec_flush.py",
                       "test_raincoreflush_staleview.py", "test_flush_delta.py",
                       "test_flush_finding_leaver_view.py"],
                      ["test_lockstep_flush.py", "test_lockstep_raincoreflush.py"]),
    "impl/stable.py": (["test_impl_stable.py", "test_impl_edges.py", "test_codec_stable.py"],
                       ["test_lockstep_stable.py"]),
    "impl/raincore.py": (["test_impl_raincore.py", "test_golden_raincore_impl.py", "test_ringtransport.py"],
                         ["test_lockstep_raincore.py", "test_lockstep_raincoreflush.py"]),
    "impl/reliable.py": (["test_reliable.py", "test_impl_edges.py", "test_impl_stable.py"],
                         ["test_lockstep_flush.py", "test_lockstep_sequencer.py", "test_lockstep_stable.py"]),
    "impl/codec.py": (["test_codec.py", "test_codec_flush.py", "test_codec_stable.py"], []),
    "core/properties.py": (["test_history.py", "test_findings.py", "test_properties_witness.py"], []),
    # the compositions' replay bindings: a mutant that blinds one is caught only by tests
    # that feed it a faulty trace (the campaign's runs are judged by the mutant itself)
    "conformance/replay/sequencerflush.py": (["test_conform_sequencerflush.py", "test_conform_raincoresequencerflush.py",
                                       "test_forged_traces.py", "test_crash_cuts.py",
                                       "test_tlctrace_sequencerflush.py"], ["test_lockstep_flush.py"]),
    "conformance/replay/raincoreflush.py": (["test_conform_raincoresequencerflush.py", "test_raincoreflush_stack.py",
                                      "test_raincoreflush_staleview.py", "test_raincoreflush_suspect.py",
                                      "test_raincoreflush_twoinitiators.py", "test_raincoreflush_lossy.py",
                                      "test_forged_traces.py", "test_tlctrace_raincoreflush.py", "test_findings.py"],
                                     ["test_lockstep_raincoreflush.py"]),
}

TEST_LAYERS = ("tests", "unit", "lockstep")
AUDIT_LAYERS = ("campaign", "tlc", "history", "cluster")

# Survivors read and judged equivalent: (module, operator, line before, line
# after) -> why the mutant cannot change any observable behaviour.
EQUIVALENT: dict[tuple[str, str, str, str], str] = {
    ("impl/sequencer.py", "core/ReplaceComparisonOperator_Lt_LtE",
     "if self.nid not in view.members or view.vid < 1:", "if self.nid not in view.members or view.vid <= 1:"):
        "differs only for a joiner handed view 1 with itself in it, which cannot happen: view 1 is the "
        "first view, which a joiner is not in (the constructor refuses it), and views only grow",
    ("impl/stable.py", "core/ReplaceBinaryOperator_Add_BitOr",
     "elif k > d + 1 and k > r:", "elif k > d | 1 and k > r:"):
        "d | 1 is d + 1 for an even d and d for an odd one; the branch before took k == d + 1, so "
        "k > d | 1 holds exactly when k > d + 1",
    ("impl/flush.py", "core/NumberReplacer",
     "self.view_ring: dict[int, int] = {0: 0} if joiner else {1: 1}",
     "self.view_ring: dict[int, int] = { -1: 0} if joiner else {1: 1}"):
        "a joiner's entry for view 0 is never read: view_ring is read only by a member "
        "(_internal returns early for a node outside its view), and the joiner's VIEW "
        "writes the entry of the view it installs",
    ("impl/codec.py", "core/ReplaceComparisonOperator_NotEq_IsNot", "if version != VERSION:",
     "if version is not VERSION:"):
        "version is one unsigned byte and VERSION 1: CPython keeps one object per small int "
        "(-5..256), so identity and equality agree on every value a byte can hold",
    ("impl/codec.py", "core/ReplaceComparisonOperator_Eq_Is", '_need(len(body) == _NAK.size, "trailing bytes")',
     '_need(len(body) is _NAK.size, "trailing bytes")'):
        "_NAK.size is 18, a cached small int: a length equal to it is the same object, any other "
        "length is a different value, so `is` and `==` agree",
    ("impl/codec.py", "core/ReplaceComparisonOperator_Eq_LtE", '_need(len(body) == _ACK.size, "trailing bytes")',
     '_need(len(body) <= _ACK.size, "trailing bytes")'):
        "unpack refuses a body shorter than _ACK.size the line before, so only the length "
        "equal to it reaches the check, where <= and == agree (tests/test_codec.py pins the longer one)",
    ("impl/flush.py", "core/ReplaceTrueWithFalse", "@dataclass(frozen=True, slots=True)",
     "@dataclass(frozen=True, slots=False)"):
        "slots only saves memory here: a frozen dataclass refuses attribute writes either way, and "
        "equality, hashing and repr are generated the same",
    ("impl/raincore.py", "core/ReplaceTrueWithFalse", "@dataclass(frozen=True, slots=True)",
     "@dataclass(frozen=True, slots=False)"):
        "slots only saves memory here: a frozen dataclass refuses attribute writes either way, and "
        "equality, hashing and repr are generated the same",
    ("impl/flush.py", "core/ReplaceComparisonOperator_Eq_LtE",
     'if self.phase == "Completed" and self.reconcile:   # the VIEW\'s digest brings it',
     'if self.phase <= "Completed" and self.reconcile:   # the VIEW\'s digest brings it'):
        "the phases are Normal, InBlock and Completed, and neither other name sorts at or before "
        "\"Completed\"",
    ("impl/reliable.py", "core/NumberReplacer", "self._now = 0.0", "self._now = 1.0"):
        "the first value is never read: _now is read only by _receive, which only handle calls, "
        "and handle sets _now first",
    ("impl/sequencer.py", "core/ReplaceBinaryOperator_Mul_Div",
     "def __init__(self, nid: int, members, *, tracing: bool | str = True, self_channel: bool = False,",
     "def __init__(self, nid: int, members, /, tracing: bool | str = True, self_channel: bool = False,"):
        "every caller in the tree passes nid and members by position and the options by keyword, "
        "which both signatures accept alike (a third positional argument, refused by the original, "
        "is passed by none)",
    ("impl/sequencer.py", "core/ReplaceComparisonOperator_Eq_Is", "if (nid in members) == joiner:",
     "if (nid in members) is joiner:"):
        "`in` yields one of the two bool singletons and every caller passes joiner as a bool (the "
        "default False, or sequencer_flush_stack's `nid not in members`), so `is` and `==` agree",
    ("impl/sequencer.py", "core/NumberReplacer",
     "if self.nid not in view.members or view.vid < 1:", "if self.nid not in view.members or view.vid < 0:"):
        "differs only for a joiner handed a view 0, which cannot happen: a joiner's layer is built only "
        "by sequencer_flush_stack, whose FlushStack refuses outside views and hands up FLUSH's installs, "
        "numbered the VIEW's view (at least 1) plus one",
    ("impl/stable.py", "core/NumberReplacer", "if self.purged.get(self.nid, 0):",
     "if self.purged.get(self.nid, -1):"):
        "the default is never taken: the digest _apply_stability gets is keyed by a view holding this "
        "member (its own view, which always holds it, or that of the STABILITY's sender, which sends "
        "only to its view), so the loop before has set purged[self.nid]",
    ("conformance/replay/raincoreflush.py", "core/ReplaceUnaryOperator_USub_Not",
     "if took.get((v, r), -1) < f:", "if took.get((v, r), not 1) < f:"):
        "the default (no take) becomes 0 for -1: it differs only for a report at the trace's first "
        "record, which cannot be: a node reports a TOKEN or 911 it sent, after a record that gave it one "
        "(a TokenReceived, a timeout, a Join)",
    ("conformance/replay/raincoreflush.py", "core/ReplaceComparisonOperator_Lt_LtE",
     "first = 1 if k and rng.random() < 0.5 else rng.randint(1, ring)",
     "first = 1 if k and rng.random() <= 0.5 else rng.randint(1, ring)"):
        "the audit's draw: the two differ only when random() returns exactly 0.5",
    ("conformance/replay/sequencerflush.py", "core/ReplaceComparisonOperator_Eq_Is",
     'if layer == "flush":', 'if layer is "flush":'):
        "a record's layer is one of the string literals of the layer_of functions, which CPython "
        "interns: identity and equality agree",
    ("conformance/replay/raincoreflush.py", "core/ReplaceComparisonOperator_Lt_Gt",
     "tm = rng.random() < 0.5", "tm = rng.random() > 0.5"):
        "the audit's draw: half the runs on the Transport Manager either way (which seeds get it "
        "changes, the distribution of drawn runs does not; no check reads the draw)",
    ("conformance/replay/raincoreflush.py", "core/ReplaceComparisonOperator_Eq_Is",
     'if self.ring(dest).status == "Up":', 'if self.ring(dest).status is "Up":'):
        "the ring layer's status is only ever one of impl/raincore.py's string literals, which CPython "
        "interns, so identity and equality agree",
    ("conformance/replay/raincoreflush.py", "core/ReplaceComparisonOperator_Eq_Is",
     'elif name == "Join":    # (RaincoreFlushBinding\'s goes through FLUSH\'s Join)',
     'elif name is "Join":    # (RaincoreFlushBinding\'s goes through FLUSH\'s Join)'):
        "a record's name is interned by the trace reader (core/trace/reader.py) and the literal by "
        "CPython: identity and equality agree",
    ("conformance/replay/raincoreflush.py", "core/ReplaceComparisonOperator_Eq_LtE",
     'and t.phase[n - 1] == "Normal" and not t.blocked[n - 1]',
     'and t.phase[n - 1] <= "Normal" and not t.blocked[n - 1]'):
        "InBlock and Completed sort below Normal, but a live member outside Normal always follows an "
        "initiator (StartFlush, Block and InstallView set flushInit; only the steps back to Normal clear "
        "it: 0 of 431,253 states of CoordCrash, Join and TwoInitiators), so the conjunct flushInit = 0 "
        "fails for it either way",
    ("impl/sim_stable.py", "semantic/SwapArguments",
     "at = max(self.now + self.rng.uniform(lo, hi), self._install_at.get(m, 0.0))",
     "at = max(self.now + self.rng.uniform(hi, lo), self._install_at.get(m, 0.0))"):
        "uniform(hi, lo) draws from the same interval with the same distribution (hi + (lo - hi) * r "
        "for lo + (hi - lo) * r): which seed gets which install time changes, the distribution of "
        "simulated runs does not, and no check reads a single seed's time",
    ("model/sequencerflush.py", "core/ReplaceComparisonOperator_IsNot_NotEq",
     "changed = [p for p in t.log if t.log[p] is not s.log[p]]",
     "changed = [p for p in t.log if t.log[p] != s.log[p]]"):
        "a log equal to its predecessor but another object counts as changed with `is not` and not with "
        "`!=`; agreement reads the logs' values, so leaving it out cannot change whether an agreement "
        "stays one (the shortcut answers False, re-evaluate, more often with `is not`, never otherwise)",
    ('model/sequencer.py', 'semantic/RangeStopDown',
     'for i in range(len(hist)):',
     'for i in range(len(hist) - 1):'):
        'the last i has no j > i: the inner loop range(i + 1, len(hist)) is empty for i = len(hist) - 1, so leaving it out skips no comparison',
    ('cli/render.py', 'core/ReplaceBinaryOperator_Mul_Div',
     'def out_dir(path: str, option: str = "--out", *, command: str = "", params: Any = None,',
     'def out_dir(path: str, option: str = "--out", /, command: str = "", params: Any = None,'):
        "out_dir's keyword-only marker made positional-only for path and option: every caller passes path first and the rest by keyword, which both signatures accept alike",
    ('cli/main.py', 'semantic/IfToWhile',
     'if not p.exists():',
     'while not p.exists():'):
        "the body is fail(), which raises typer.Exit: the loop's body runs once either way",
    ('model/proofs/stable/any_lemmas.py', 'semantic/SwapArguments',
     'o.Implies(S["group"][p], o.And(S["view"][p, p], S["view"][p, o.one])),',
     'o.Implies(S["group"][p], o.And(S[\'view\'][p, o.one], S[\'view\'][p, p])),'):
        'the operands of a conjunction swapped: the same formula up to commutativity, proved or refuted alike',
    ('model/proofs/sequencer/lemmas.py', 'semantic/SwapArguments',
     'z3.ForAll([i, j], z3.Implies(z3.And(0 <= i, i < j, j < c1.tl, c1.sn[i] == c1.sn[j]),',
     'z3.ForAll([i, j], z3.Implies(z3.And(i < j, 0 <= i, j < c1.tl, c1.sn[i] == c1.sn[j]),'):
        'the operands of a conjunction swapped: the same formula up to commutativity, proved or refuted alike',
    ('model/proofs/flush/lemmas.py', 'semantic/SwapArguments',
     'cs.append(z3.ForAll([k], z3.Implies(z3.And(S["hd"][e] <= k, k < S["tl"][e]),',
     "cs.append(z3.ForAll([k], z3.Implies(z3.And(k < S['tl'][e], S['hd'][e] <= k),"):
        'the operands of a conjunction swapped: the same formula up to commutativity, proved or refuted alike',
    ('impl/faults.py', 'core/ReplaceBinaryOperator_BitOr_BitXor',
     'return kinds | {key for key, (name, _) in ITEMS.items()',
     'return kinds ^ {key for key, (name, _) in ITEMS.items()'):
        'the two sets are disjoint (the first holds only crash:... labels, the second every item but crash), so their symmetric difference is their union',
    ('conformance/pipeline/dataset.py', 'semantic/IfToWhile',
     'if not v["violations"] and failed:',
     'while not v["violations"] and failed:'):
        "the body makes v['violations'] non-empty, so the loop's condition is false after one pass: it runs once, as the if does",
    ('model/parallel.py', 'semantic/RangeStopUp',
     'encoders: list[dict] = [{} for _ in range(W)]   # value -> number, per destination (moves)',
     'encoders: list[dict] = [{} for _ in range(W + 1)]   # value -> number, per destination (moves)'):
        'one encoder more than there are workers: encoders are indexed by a destination worker, 0..W-1, so the last is never read or written',
    ('core/trace/reader.py', 'core/ReplaceBinaryOperator_LShift_Mul',
     "BLOCK = 1 << 20     # bytes read at once (then to the end of the block's last line)",
     "BLOCK = 1 * 20     # bytes read at once (then to the end of the block's last line)"):
        "the reader's block size (20 bytes for 1 MiB): a block is read on to the end of its last line, so any size yields the same lines; only the number of reads changes",
    ('cli/findings.py', 'core/ReplaceComparisonOperator_Lt_LtE',
     'if covered and len(covered) < len(vs):',
     'if covered and len(covered) <= len(vs):'):
        'with every violation covered the lines not covered are none, so prefixing each of them changes nothing',
    ('model/proofs/sequencerflush/lemmas.py', 'semantic/SwapArguments',
     'patterns=[multipattern(x, y, Msg.dS(x)[k])]))',
     'patterns=[multipattern(y, x, Msg.dS(x)[k])]))'):
        "a quantifier's multi-pattern with its terms in another order: a multi-pattern is matched when all its terms are, whatever their order, and patterns steer instantiation only, never what the formula means",
    ('cli/findings.py', 'semantic/BoundaryFlip',
     'if covered and len(covered) < len(vs):',
     'if covered and (len(covered) <= len(vs)):'):
        'with every violation covered the lines not covered are none, so prefixing each of them changes nothing',
    ('conformance/findings.py', 'semantic/BoundaryFlip',
     'while lo < n and _binom_cdf(lo, n, lo_p) < ALPHA:',
     'while (lo <= n) and _binom_cdf(lo, n, lo_p) < ALPHA:'):
        'the loop cannot reach lo = n: the binomial CDF at n is 1, never under ALPHA, so it stops there or before under either bound',
    ('conformance/jgroups/adapter.py', 'core/ReplaceBreakWithContinue',
     'break',
     'continue'):
        "after the run's time bound each member still running is killed in the finally block either way; continue waits 0.1 s more on each and logs each, which no check reads",
    ('conformance/replay/sequencer.py', 'core/ReplaceBinaryOperator_Sub_BitXor',
     'return tuple(model.Crash(s, m, lost) for lost in subsets(set(model.Members) - {m}))',
     'return tuple(model.Crash(s, m, lost) for lost in subsets(set(model.Members) ^ {m}))'):
        "m is a member here (the binding's check refuses a record naming an outsider first), so removing it and toggling it give the same set",
    ('conformance/replay/raincoreflush.py', 'semantic/BoundaryFlip',
     'losses = (round(rng.uniform(0.0, 0.3), 4),) if lossy and rng.random() < 0.5 else ()',
     'losses = (round(rng.uniform(0.0, 0.3), 4),) if lossy and (rng.random() <= 0.5) else ()'):
        "a coin of the audit's draw: random() returns exactly 0.5 with probability 2^-53, so < and <= draw the same runs for every seed the audit uses (checked: no random() of the draws of seeds 0-19,999 returns 0.5)",
    ('model/proofs/prover.py', 'semantic/BoundaryFlip',
     'parts = [[f] for f in fs] if split and len(fs) > 1 else [fs]',
     'parts = [[f] for f in fs] if split and (len(fs) >= 1) else [fs]'):
        'for one formula both forms are [[f]]: a one-element list split into one-element parts is the list itself',
}


# Survivors read and left open: mutant key -> (the changed line before, why no default test kills it).
OPEN: dict[str, tuple[str, str]] = {
    'impl/flush.py:semantic/WhileToIf:1': ('while q and self._take(src, q[0], now, out):',
        "the order in which waiting heads of several senders are taken when a block lifts (each sender's queue drained in turn, or one head per sender per pass): both are legal interleavings and no test pins which"),
    'impl/chaos.py:core/ReplaceBinaryOperator_Sub_Pow:8': ('row = {**asdict(act), "node": nid, "started": round(time.monotonic() - t0, 3)}',
        "the time a chaos action started, in the schedule's log: read by no check, and the chaos runs that write it are in the slow tier"),
    'model/proofs/flush/any_lemmas.py:core/ReplaceBinaryOperator_Add_LShift:0': ('S["vm"][a][cv + 1]))',
        "a lemma of FLUSH's every-N proof: the default tests build it and check it on reachable states at small N, where cv << 1 and cv + 1 agree (cv = 1); only the proof (slow tier, the audit's prove stage) tells them apart"),
    'model/proofs/sequencerflush/relation.py:semantic/BoundaryFlip:80': ('z3.And(vid[r] == vid[m], S["lL"][r] >= k + 1)) for r in M]',
        "SEQUENCER over FLUSH's fixed-N relation: built and checked only by the slow tier's proofs and edge samples (each over 1.25 s)"),
    'model/proofs/flush/any_relation.py:semantic/SwapArguments:35': ('S["dl"] == z3.K(Node, EMPTY), S["dig"] == z3.K(Node, EMPTY), S["phase"] == z3.K(Node, z3.IntVal(NORMAL)),',
        "FLUSH's every-N relation's initial condition: built only by the slow tier's proofs and the audit's prove stage (a sort error there)"),
    'model/proofs/stable/any_relation.py:semantic/BreakContinue:0': ('continue        # free, as in the spec: read only under its guard',
        "STABLE's every-N relation: built only by the slow tier's proofs and the audit's prove stage"),
    'impl/runtime.py:semantic/SkipEffect:41': ('print(f"node {self.nid}: {why}: leaving", file=sys.stderr, flush=True)',
        "a leaving node's line on its stderr: no check reads a node's stderr"),
    'model/proofs/sequencerflush/any_relation.py:semantic/SkipEffect:3': ('cs.append(S[f + "S"][n[x], j] == n[P[f + "S"][x, j]])',
        "SEQUENCER over FLUSH's every-N relation (a frame condition): built only by the slow tier's proofs and the audit's prove stage"),
    'impl/sim_raincoreflush.py:core/ReplaceBinaryOperator_Sub_BitXor:2': ('others = bool(set(self.latest_view()[1]) - self.crashed - {p})',
        'differs only for a member that the latest view left out and that still takes itself for one while every member of the latest view has crashed: the mutant lets it crash too; no run a test draws reaches that state'),
    'model/proofs/sequencerflush/lemmas.py:core/NumberReplacer:288': ('gS, gQ, gL = S["lS"][1], S["lQ"][1], S["lL"][1]',
        "a lemma of SEQUENCER over FLUSH's fixed-N proof: built and proved only in the slow tier and the audit's prove stage"),
    'impl/chaos.py:semantic/IfToWhile:5': ('if act.action == "kill" and view is not None and nid not in view:',
        'a planned kill of a joiner the latest view has not admitted: the chaos runs that reach it are in the slow tier (as a loop, its continue spins)'),
    'model/proofs/sequencerflush/relation.py:core/ReplaceComparisonOperator_GtE_Gt:6': ('if not self.UD and v >= 2 and c not in s.crashed and s.vid[c] == v and len(s.closed[m]) == v - 1:',
        "the explicit side of SEQUENCER over FLUSH's fixed-N relation (a second view's uniform-delivery check): the default test that reaches it samples no state where v = 2 decides; the slow tier's edge samples do"),
    'conformance/pipeline/spark_submit.py:core/ReplaceComparisonOperator_NotEq_IsNot:0': ('sys.path[:] = [p for p in sys.path if p and str(Path(p).resolve()) != here]',
        "spark-submit's driver script drops its own folder from sys.path (it would shadow the standard library's names): runs only in the process spark-submit starts (Spark's cluster mode, slow tier)"),
    'model/proofs/stable/any_lemmas.py:core/ReplaceComparisonOperator_LtE_Gt:3': ('S["sy_hi"][q, p, x] <= S["sent"][x])))',
        "a lemma of STABLE's every-N proof on a stability message in flight: at the N = 2 states the default test evaluates it on, no such message carries the sender's entry, so it holds vacuously; the proof (slow tier, the audit's prove stage) refutes it"),
    'conformance/cluster.py:core/ReplaceBinaryOperator_Div_BitOr:5': ('(out_dir / "result.json").write_text(json.dumps(res.to_json(), indent=2, default=str), encoding="utf-8")',
        'the detached supervisor of cluster up writes its result: it runs in a process of its own, in the cluster up/down tests of the slow tier'),
    'model/proofs/sequencerflush/any_lemmas.py:core/ReplaceComparisonOperator_Lt_LtE:5': ('o.And(self._in(S, a, b, i), self._in(S, a, b, j), i < j, S["ty"][a, b, i] == S["ty"][a, b, j]),',
        "a lemma of SEQUENCER over FLUSH's every-N proof (no two entries of a channel alike): with i <= j it is false of every non-empty channel, which only the proof (slow tier, the audit's prove stage) asks; the default test evaluates the lemmas on states where those channels are empty"),
    'conformance/cluster.py:semantic/IfToWhile:1': ('if not v.clean:',
        'a cluster run judged by TLC beside the replay (--checker tlc or both): the cluster tests that ask for it are in the slow tier'),
    'model/proofs/parametric.py:core/ReplaceBinaryOperator_Sub_BitAnd:0': ('cs = [S["tl"][e] - h == P["tl"][x, y]]',
        "STABLE's every-N channel encoding (a channel's length): built only by the slow tier's proofs and the audit's prove stage"),
    'model/proofs/sequencerflush/any_relation.py:core/ReplaceComparisonOperator_Gt_IsNot:0': ('z3.ForAll([j], z3.Implies(new(j), z3.And(nQ[j] > rv(nS[j]), nQ[j] <= nr[nS[j]])), patterns=[nS[j]]),',
        "SEQUENCER over FLUSH's every-N relation: built only by the slow tier's proofs and the audit's prove stage"),
    'model/proofs/sequencerflush/relation.py:semantic/BreakContinue:0': ('continue',
        "SEQUENCER over FLUSH's fixed-N relation: built only by the slow tier's proofs and the audit's prove stage"),
}

# Survivors that were gaps, each now killed by a test that fails with the mutant applied:
# mutant key -> (the changed line before, the test's id; a bare name is in tests/test_pinned_decisions.py).
PINNED: dict[str, tuple[str, str]] = {
    'conformance/audit/report.py:semantic/BreakContinue:0': ('continue',
        'test_a_checks_figures_in_words_skip_the_empty_and_structured_ones_and_keep_going'),
    'conformance/audit/report.py:semantic/BreakContinue:1': ('continue',
        'test_proof_matrices_pass_over_checks_without_a_matrix_to_the_prove_checks_after_them'),
    'model/registry.py:core/ExceptionReplacer:0': ('except KeyError:',
        'test_an_unknown_protocol_has_no_model_and_the_error_names_the_known_ones'),
    'cli/traces.py:semantic/BoundaryFlip:1': ('ok = res["runs"] > 0 and res["counts"].get("ok", 0) == res["runs"] and res["disagreements"] == 0',
        'test_traces_check_of_a_dataset_without_runs_is_no_pass'),
    'conformance/history.py:semantic/BoundaryFlip:3': ('if len(text) > MAX_LINE:',
        'test_a_history_header_line_of_exactly_max_line_characters_is_read_one_more_is_refused'),
    'conformance/replay/engine.py:semantic/SwapArguments:0': ('where = str(path) if not isinstance(path, (list, tuple)) else str(path[0]).rsplit("/", 1)[0]',
        'test_a_run_given_as_a_list_of_unreadable_files_is_rejected_under_their_folder'),
    'conformance/findings.py:semantic/SwapArguments:6': ('n, hits = c["runs"], c.get(f.id, 0)',
        'test_a_finding_count_is_judged_against_its_own_band_per_kind_of_run'),
    'cli/main.py:semantic/AnyAll:0': ('raise typer.Exit(0 if all(o.matches_expectation for o in outcomes) else 1)',
        'test_check_exits_0_only_when_every_model_met_its_expectation'),
    'conformance/audit/diagram.py:semantic/UnionIntersection:0': ('for key in set(ch_cur) | set(ch_old):',
        'test_a_message_on_a_channel_the_state_before_did_not_have_is_drawn_as_sent'),
    'model/core.py:core/ReplaceComparisonOperator_Eq_Is:1': ('if n + 1 == limit:',
        'test_an_exploration_stops_at_exactly_max_states_above_the_small_int_cache_too'),
    'impl/runtime.py:core/ReplaceUnaryOperator_USub_Invert:0': ('self._step(Start(token=self.nid == self.members[-1]) if self.nid in self.members else Join())',
        'test_on_start_the_rings_last_member_founds_it_with_the_token'),
    'conformance/replay/raincore.py:core/AddNot:34': ('return "founder crash" if FOUNDER in crashed else "founder stays"',
        'test_raincore_runs_are_counted_by_whether_the_founder_crashed'),
    'conformance/replay/raincoresequencerflush.py:semantic/BoundaryFlip:0': ('bad = [j for j, _ in plan.joins if not ring < j <= n]',
        'test_a_three_layer_join_names_a_node_outside_the_ring_up_to_the_last'),
    'conformance/audit/stages.py:core/ReplaceComparisonOperator_Is_LtE:0': ('expected="graphs equal", observed=observed, as_expected=r.graphs_equal is True,',
        'test_a_link_check_holds_only_when_the_graphs_are_equal'),
    'conformance/pipeline/spark.py:semantic/BreakContinue:2': ('break',
        'tests/test_pinned_sample.py::test_spark_progress_stops_polling_once_the_context_is_gone'),
    'model/core.py:core/ReplaceUnaryOperator_USub_Not:2': ('n = -1',
        'tests/test_pinned_sample.py::test_an_exploration_counts_a_state_reached_again_once_the_initial_state_too'),
    'conformance/replay/engine.py:semantic/BoundaryFlip:3': ('if len(self.seen) > VISITED_MAX:',
        'tests/test_pinned_sample.py::test_the_replay_keeps_up_to_visited_max_distinct_states_for_coverage_and_no_more'),
    'conformance/replay/sequencer.py:core/ReplaceUnaryOperator_Delete_Not:4': ('elif not all(type(x) is int and x in M',
        'tests/test_pinned_sample.py::test_a_sequencer_record_naming_a_member_outside_the_run_is_refused_whatever_the_field'),
    'conformance/replay/lockstep.py:core/ReplaceBinaryOperator_Sub_FloorDiv:0': ('raise LockstepError(f"after event {len(self.events) - 1}: no candidate model state "',
        'tests/test_lockstep_flush.py::test_hidden_state_mutant_is_caught_by_the_abstraction_check'),
    'model/link.py:semantic/AnyAll:0': ('if x and all(isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) for p in x):',
        'tests/test_pinned_sample.py::test_a_link_difference_in_json_is_a_state_object_only_when_every_item_is_a_variable_pair'),
    'conformance/replay/sequencerflush.py:semantic/DropGuardReturn:10': ('return False',
        'tests/test_pinned_sample.py::test_a_sequencer_over_flush_receipt_matches_only_the_head_of_a_nonempty_channel'),
    'model/proofs/stable/relation.py:core/ReplaceOrWithAnd:0': ('self.variant = variant or ("Fixed" if reset and self.V and coord_switches else',
        'tests/test_proofs_prover.py::test_a_stable_encoding_is_named_by_its_switches_unless_given_a_name'),
    'model/proofs/prover.py:core/ReplaceBreakWithContinue:0': ('break',
        'tests/test_proofs_prover.py::test_the_first_conjunct_that_breaks_gives_the_cti_even_when_later_ones_hold'),
    'model/proofs/raincore/relation.py:semantic/WhileToIf:0': ('while z3.is_store(v) and z3.is_int_value(v.arg(1)) and z3.is_int_value(v.arg(2)):',
        'tests/test_proofs_prover.py::test_a_ctis_int_array_is_read_through_every_store'),
    'core/trace/writer.py:core/ReplaceComparisonOperator_NotEq_Gt:0': ('if head.get("kind") != "header":',
        'tests/test_pinned_sample.py::test_the_trace_writer_refuses_records_that_do_not_start_with_a_header'),
    'conformance/replay/raincoreflush.py:core/ReplaceBinaryOperator_Sub_Pow:10': ('line = {"run_id": run_id, "seed": seed, "events": len(v2) - 2, "settled": s["settled"],',
        'tests/test_pinned_sample.py::test_a_ring_run_summary_counts_its_event_records'),
    'impl/sim_raincoreflush.py:semantic/SkipEffect:0': ('faults.only(RING_FLUSH_FAULTS, "FLUSH over the ring")',
        'tests/test_pinned_sample.py::test_the_ring_flush_simulator_refuses_a_plan_with_a_fault_it_does_not_model'),
    'model/tlc.py:semantic/AnyAll:0': ('if any(e.code == EC.TLC_PARSING_FAILED for e in errors):',
        'tests/test_pinned_sample.py::test_a_parse_error_is_located_among_other_errors_too'),
    'cli/traces.py:semantic/AnyAll:0': ('"groupcheck conform" if p.is_dir() and any(p.rglob("*.ndjson")) else',
        'tests/test_pinned_sample.py::test_traces_check_points_a_folder_without_trace_files_to_generate_not_to_conform'),
    'model/core.py:semantic/SwapArguments:5': ('return finish(Violation(bad, trace_to(i)))',
        'tests/test_pinned_sample.py::test_an_initial_state_that_breaks_an_invariant_is_a_violation_named_by_it_with_a_one_state_trace'),
    'conformance/history.py:semantic/UnionIntersection:3': ('for m in sorted(set(h.views) | set(t.views), key=str):',
        'tests/test_pinned_sample.py::test_a_history_and_its_trace_differ_first_where_the_first_rule_says'),
    'core/trace/history.py:core/ReplaceTrueWithFalse:0': ('return True',
        'tests/test_pinned_sample.py::test_a_history_line_is_utf8_or_not'),
    'model/values.py:core/ReplaceComparisonOperator_Is_NotEq:6': ('if isinstance(other, GrowSet) and other._order is self._order and other._n <= self._n:',
        'tests/test_pinned_sample.py::test_a_growset_minus_another_is_the_set_difference_whether_or_not_they_share_a_lineage'),
    'model/raincoreflush.py:core/ReplaceUnaryOperator_USub_Not:2': ('and bool(frozenset(s.views[-1]) - dead - {p})',
        'tests/test_pinned_sample.py::test_flush_over_the_ring_never_crashes_the_last_member_of_the_latest_view'),
    'conformance/replay/flush.py:core/ReplaceComparisonOperator_NotEq_Gt:12': ('if plan != "none":',
        'tests/test_pinned_sample.py::test_the_audits_flush_draw_crashes_in_four_plans_of_five_and_twice_in_two'),
    'conformance/audit/report.py:semantic/AnyAll:0': ('elif n and all(v["tlc"] == "checked" for v in cov["variants"]):',
        'tests/test_audit_coverage.py::test_every_variant_is_claimed_model_checked_only_when_every_one_was'),
    'model/raincoresequencerflush.py:semantic/DropGuardReturn:1': ('return None',
        'tests/test_pinned_sample.py::test_the_three_layer_model_takes_no_crash_its_guard_refuses'),
    'model/tlc.py:core/ReplaceUnaryOperator_Delete_USub:3': ('line, col, module = found[-1]',
        'tests/test_pinned_sample.py::test_a_tlc_runtime_error_is_located_at_the_innermost_position_of_the_last_nested_block'),
    'model/proofs/stable/relation.py:semantic/RangeStopUp:1': ('self.V0 = frozenset(range(1, NInit + 1))',
        'tests/test_pinned_sample.py::test_a_stable_encodings_first_view_is_its_first_ninit_members'),
    'model/proofs/registry.py:semantic/RangeStopDown:0': ('for k in range(shards):',
        'tests/test_pinned_sample.py::test_a_variant_sharded_over_spare_cores_gets_every_shard_once'),
    'cli/main.py:core/ReplaceBinaryOperator_Sub_LShift:1': ('"depth": r.depth, "seconds": round(time.perf_counter() - t0, 3),',
        'tests/test_pinned_sample.py::test_explore_with_processes_reports_the_serial_count_and_its_time'),
    'impl/events.py:core/ReplaceTrueWithFalse:12': ('@dataclass(frozen=True, slots=True)',
        'tests/test_pinned_sample.py::test_effects_and_events_are_values_hashable_and_immutable'),
    'conformance/audit/report.py:core/ReplaceBinaryOperator_Mul_LShift:0': ('+ ("" if v.get("action_share") is None else f" ({100 * v[\'action_share\']:.0f}%)"),',
        'tests/test_pinned_sample.py::test_a_coverage_row_gives_the_share_of_actions_reached_in_percent'),
    'conformance/jgroups/adapter.py:semantic/IfToWhile:11': ('if "note" in r:',
        'tests/test_pinned_sample.py::test_the_jgroups_flush_trace_keeps_notes_apart_and_merges_the_members_steps_by_stamp'),
    'core/trace/decode.py:semantic/AnyAll:10': ('return any(_free(a) for a in get_args(t))',
        'tests/test_pinned_sample.py::test_a_message_type_is_free_text_when_any_member_of_its_union_is'),
    'conformance/replay/stable.py:core/ReplaceBinaryOperator_Sub_Mod:0': ('"run_id": rid, "seed": seed, "events": len(v2) - 2, "quiescent": summary["quiescent"],',
        'tests/test_pinned_sample.py::test_a_stable_run_summary_counts_its_event_records'),
    'conformance/replay/sequencer.py:semantic/BreakContinue:2': ('continue',
        'tests/test_pinned_sample.py::test_a_loss_is_held_against_every_crashed_coordinator_but_the_sender_itself'),
    'model/proofs/registry.py:core/ReplaceComparisonOperator_Eq_NotEq:1': ('limit = limit.get(str(n)) if isinstance(limit, dict) else limit if n == v.get("members") else None',
        'tests/test_pinned_sample.py::test_a_variants_pinned_rlimit_applies_at_its_own_n_only'),
    'impl/reliable.py:semantic/AnyAll:0': ('return not (any(self.unacked.values()) or self.queued)',
        'tests/test_pinned_sample.py::test_a_reliable_layer_is_idle_only_with_nothing_unacknowledged_to_any_peer'),
    'model/proofs/sequencer/relation.py:semantic/DropGuardReturn:0': ('return False',
        'tests/test_pinned_sample.py::test_the_proofs_survivor_total_order_compares_live_members_only'),
    'cli/main.py:semantic/BoundaryFlip:2': ('if len(text) <= 80:',
        'tests/test_pinned_sample.py::test_a_summary_value_of_up_to_80_characters_is_shown_whole'),
    'conformance/tlctrace.py:semantic/DropGuardReturn:10': ('return found',
        'tests/test_pinned_sample.py::test_an_integer_tlc_cannot_hold_is_named_wherever_it_is'),
    'conformance/pipeline/dataset.py:semantic/BoundaryFlip:0': ('if f is not None and f[2] + len(f[3]) >= PART_ROWS:',
        'tests/test_pinned_sample.py::test_a_parquet_part_is_closed_once_it_holds_exactly_part_rows'),
    'cli/cluster.py:core/ReplaceTrueWithFalse:7': ('return True',
        'tests/test_pinned_sample.py::test_a_cluster_process_is_alive_until_it_is_gone'),
    'model/raincoreflush.py:semantic/ComparisonFlip:12': ('return st == "Down" or (self.FalseSuspicion and st == "Up" and d in self.Crashable)',
        'tests/test_pinned_sample.py::test_a_false_suspicion_reports_a_live_crashable_node_unreachable_and_a_down_one_always'),
    'cli/cluster.py:semantic/IfToWhile:6': ('if r.get("tlc") is not None:',
        'tests/test_pinned_sample.py::test_a_cluster_result_prints_tlcs_verdict_once_and_exits_1_when_it_disagrees'),
    'conformance/replay/sequencerflush.py:semantic/RangeStopDown:0': ('for k in range(len(evs) - 1, -1, -1):',
        'tests/test_pinned_sample.py::test_each_record_knows_its_members_next_record'),
    'conformance/pipeline/stages.py:semantic/DropGuardReturn:0': ('return None',
        'tests/test_pinned_sample.py::test_runs_of_a_dataset_without_part_columns_are_not_sliced'),
    'conformance/tlctrace.py:semantic/AnyAll:1': ('if v and all(isinstance(k, str) and k.isdigit() for k in v):',
        'tests/test_pinned_sample.py::test_a_json_object_becomes_a_function_of_members_only_when_every_key_is_a_number'),
    'conformance/replay/raincore.py:semantic/AnyAll:1': ('if any(self.model.Agreed(t) for t in cands):',
        'tests/test_pinned_sample.py::test_a_settled_ring_end_holds_when_any_consistent_state_agrees'),
    'model/proofs/sequencerflush/lemmas.py:core/ReplaceBinaryOperator_Add_Sub:5': ('z3.Implies(h < t, Msg.dl(a[h + 1]) == S["dL"][1] + 1),',
        'tests/test_proofs_lemmas_sampled.py::test_a_few_reachable_states_satisfy_every_lemma_and_have_no_extra_successor'),
    'model/proofs/stable/lemmas.py:semantic/BoundaryFlip:1': ('S["delivered"][p, x] <= S["received"][p, x], S["received"][p, x] <= S["sent"][x],',
        'tests/test_proofs_lemmas_sampled.py::test_a_few_reachable_states_satisfy_every_lemma_and_have_no_extra_successor'),
    'model/proofs/flush/lemmas.py:semantic/ComparisonFlip:11': ('cs += [0 <= vid, vid <= S["L"], 0 <= ph, ph <= 3, z3.Or(fi == NO_INIT, *[fi == c for c in M]),',
        'tests/test_proofs_lemmas_sampled.py::test_a_few_reachable_states_satisfy_every_lemma_and_have_no_extra_successor'),
}


@dataclass
class Mutant:
    module: str           # path relative to the tree, e.g. impl/sequencer.py
    operator: str         # cosmic-ray operator name
    occurrence: int       # the operator's n-th site in the module (cosmic-ray's numbering)
    line: int
    before: str = ""      # the changed line, stripped
    after: str = ""

    @property
    def key(self) -> str:
        return f"{self.module}:{self.operator}:{self.occurrence}"


def require_cosmic_ray():
    try:
        import cosmic_ray.mutating  # noqa: F401
    except ImportError:
        print(f"bench/mutants.py needs cosmic-ray for its family: {INSTALL}, or --families semantic",
              file=sys.stderr)
        sys.exit(3)


def _cosmic_ray_sites(source: str) -> list[tuple[str, int, int]]:
    """(operator, occurrence, line) of every mutation cosmic-ray's ``init``
    lists (operators without arguments), numbered as ``init`` and
    ``mutate_code`` number them (per operator, in its walk order)."""
    from cosmic_ray.ast import ast_nodes, get_ast
    from cosmic_ray.plugins import get_operator, operator_names
    tree = get_ast(source)
    nodes = list(ast_nodes(tree))
    out = []
    for name in operator_names():
        cls = get_operator(name)
        if cls.arguments():
            continue
        op = cls()
        k = 0
        for node in nodes:
            for start, _ in op.mutation_positions(node):
                out.append((name, k, start[0]))
                k += 1
    return out


def enumerate_mutants(tree: Path, modules, families=FAMILIES) -> list[Mutant]:
    """Every mutation of ``modules`` by the chosen families (cosmic-ray's
    operators without arguments, bench/semantic.py's), in a stable order."""
    import semantic
    out = []
    for mod in modules:
        src = (tree / mod).read_text()
        if "semantic" in families:
            out += [Mutant(mod, op, k, line) for op, k, line in semantic.listing(src)]
        if "cosmic-ray" in families:
            out += [Mutant(mod, op, k, line) for op, k, line in _cosmic_ray_sites(src)]
    return sorted(out, key=lambda m: (m.module, m.line, m.operator, m.occurrence))


def family(m) -> str:
    op = m.operator if isinstance(m, Mutant) else m["operator"]
    return "semantic" if op.startswith("semantic/") else "hand" if op.startswith("hand/") else "cosmic-ray"


# ---------------------------------------------------------------- mutants written by hand (--hand FILE)

# operator ("hand/<id>") -> the file's entry: module, before (a snippet found
# exactly once in the module), after, why
HAND: dict[str, dict] = {}


def load_hand(path: Path, tree: Path) -> list[Mutant]:
    """The mutants of a JSON list of {"id", "module", "before", "after",
    "why"}, each a snippet of its module replaced once (family "hand",
    operator ``hand/<id>``); refused unless each ``before`` occurs exactly
    once in its module of ``tree``."""
    out = []
    for e in json.loads(Path(path).read_text()):
        src = (tree / e["module"]).read_text()
        n = src.count(e["before"])
        if n != 1:
            sys.exit(f"{path}: mutant {e['id']}: its 'before' occurs {n} times in {e['module']}, not once")
        op = f"hand/{e['id']}"
        HAND[op] = e
        out.append(Mutant(e["module"], op, 0, src[:src.index(e["before"])].count("\n") + 1))
    return out


def quotas(lines: dict[str, int], k: int) -> dict[str, int]:
    """``k`` mutants over the modules in proportion to their lines (largest
    remainders first); when ``k`` covers every module, each gets one at least."""
    mods = sorted(m for m, n in lines.items() if n > 0)
    floor = 1 if k >= len(mods) else 0
    rest = k - floor * len(mods)
    total = sum(lines[m] for m in mods) or 1
    share = {m: rest * lines[m] / total for m in mods}
    q = {m: floor + int(share[m]) for m in mods}
    left = k - sum(q.values())
    for m in sorted(mods, key=lambda m: (-(share[m] - int(share[m])), m))[:left]:
        q[m] += 1
    return {m: n for m, n in q.items() if n}


def sample(mutants: list[Mutant], k: int, seed: int, lines: dict[str, int] | None = None) -> list[Mutant]:
    """``k`` mutants stratified by module and weighted by its lines
    (``quotas``; equal weights without ``lines``).  Within a module the
    families take turns, and each draw picks an operator uniformly, then one
    of its sites (so the commonest operator does not crowd out the rest).
    A module with fewer mutants than its quota gives the rest to the others."""
    rng = random.Random(seed)
    per: dict[str, list[Mutant]] = {}
    for m in mutants:
        per.setdefault(m.module, []).append(m)
    weights = {mod: (lines or {}).get(mod, 1) for mod in per}
    out: list[Mutant] = []
    pools = {mod: {} for mod in per}
    for mod, ms in per.items():
        for m in ms:
            pools[mod].setdefault(family(m), {}).setdefault(m.operator, []).append(m)
    while len(out) < k and any(pools.values()):
        live = {mod: w for mod, w in weights.items() if pools[mod]}
        for mod, n in quotas(live, k - len(out)).items():
            fams = pools[mod]
            for j in range(n):
                if not fams:
                    break
                fam = sorted(fams)[len(out) % len(fams)]
                ops = fams[fam]
                op = rng.choice(sorted(ops))
                m = ops[op].pop(rng.randrange(len(ops[op])))
                out.append(m)
                if not ops[op]:
                    del ops[op]
                if not ops:
                    del fams[fam]
    return sorted(out[:k], key=lambda m: (m.module, m.line, m.operator, m.occurrence))


def mutated_source(original: str, m: Mutant) -> str | None:
    if m.operator.startswith("hand/"):
        e = HAND.get(m.operator)
        if e is None or original.count(e["before"]) != 1:
            return None
        return original.replace(e["before"], e["after"])
    if m.operator.startswith("semantic/"):
        import semantic
        return semantic.mutate(original, m.operator, m.occurrence)
    from cosmic_ray.mutating import mutate_code
    from cosmic_ray.plugins import get_operator
    return mutate_code(original, get_operator(m.operator)(), m.occurrence)


def changed_line(original: str, mutated: str, m: Mutant) -> None:
    """Fill ``m.before``/``m.after`` with the first line that differs."""
    a, b = original.splitlines(), mutated.splitlines()
    for k, (x, y) in enumerate(zip(a, b)):
        if x != y:
            m.line, m.before, m.after = k + 1, x.strip(), y.strip()
            return
    m.before, m.after = "", ""


ANNOTATION_ONLY = ("changes a type annotation only, which `from __future__ import annotations` keeps as a "
                   "string nothing evaluates")


def annotation_only(original: str, mutated: str) -> bool:
    """Whether the mutant differs from the original in annotations alone,
    in a module whose annotations are never evaluated: equivalent by
    construction, so no layer is run."""
    import ast

    def bare(src: str):
        tree = ast.parse(src)
        if not any(isinstance(n, ast.ImportFrom) and n.module == "__future__"
                   and any(a.name == "annotations" for a in n.names) for n in tree.body):
            return None
        for n in ast.walk(tree):
            if isinstance(n, (ast.arg, ast.AnnAssign)):
                n.annotation = None
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n.returns = None
        return ast.dump(tree)
    try:
        a = bare(original)
        return a is not None and a == bare(mutated)
    except SyntaxError:
        return False


# ---------------------------------------------------------------- the CI guard (tests/test_mutation_guard.py)

GUARD_MUTANTS = 20
GUARD_FILES = 2          # test files run per mutant
GUARD_TIMEOUT = 45.0     # seconds per mutant's tests; past it the mutant is inconclusive
GUARD_THRESHOLD = 0.44   # the guard's kill rate as measured (8 of 18 conclusive mutants, docs/mutants.md)
GUARD_ALPHA = 0.01       # it fails when so few kills would happen with probability under this at that rate
GUARD_SECONDS = 540      # no mutant is started after this many seconds (the guard keeps within 10 minutes)


def changed_modules(root: Path, base: str) -> list[str]:
    """The product modules a change touches: those that differ, committed or
    not, from where the checkout left ``base`` (their merge base, so that
    what ``base`` gained since is not counted)."""
    mb = subprocess.run(["git", "merge-base", base, "HEAD"], cwd=root, capture_output=True, text=True)
    if mb.returncode:
        return []
    r = subprocess.run(["git", "diff", "--name-only", mb.stdout.strip(), "--", *PACKAGES], cwd=root,
                       capture_output=True, text=True)
    if r.returncode:
        return []
    return sorted(f for f in r.stdout.split() if f.endswith(".py") and (root / f).exists())


def enclosing_names(source: str, line: int) -> list[str]:
    """The functions and classes whose body holds ``line``, innermost first."""
    import ast
    out = []
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.lineno <= line <= n.end_lineno:
            out.append((n.lineno, n.name))
    return [name for _, name in sorted(out, reverse=True)]


def guard_files(module: str, source: str, line: int, root: Path) -> list[str]:
    """The (at most GUARD_FILES) test files the guard runs for a mutant on
    ``line`` of ``module``: of those that import the module, first those
    that name the function (else the class) the line is in, the innermost
    first, then by ``importers``'s order (named after the module, fewest
    product modules).  A file that names the mutated function is the one
    most likely to pin what it decides."""
    files = importers(module, root)
    names = enclosing_names(source, line)
    text = {f: (root / "tests" / f).read_text(encoding="utf-8") for f in files}

    def rank(f: str) -> int:
        return next((k for k, name in enumerate(names) if re.search(rf"\b{re.escape(name)}\b", text[f])),
                    len(names))
    return sorted(files, key=lambda f: (rank(f), files.index(f)))[:GUARD_FILES]


def guard(root: Path, base: str, k: int, seed: int, threshold: float, log=print,
          until: float | None = None) -> dict:
    """``k`` semantic mutants of the modules a change touches (against
    ``base``; every module when it touches none), each run against the
    default tests of the (at most ``GUARD_FILES``) test files that import
    its module, with ``-x`` and a timeout.  Logs every mutant and the
    survivors; ``passed`` unless the kills of the non-equivalent mutants
    that finished are so few that, at the kill rate ``threshold``, as few
    or fewer have probability under GUARD_ALPHA.  No mutant is started
    past ``GUARD_SECONDS`` or the time ``until`` (seconds since the epoch)."""
    stop = min(time.time() + GUARD_SECONDS, until or float("inf"))
    modules = changed_modules(root, base)
    scope = "changed" if modules else "all"
    modules = modules or product_modules(root)
    lines = {mod: len((root / mod).read_text().splitlines()) for mod in modules}
    chosen = sample(enumerate_mutants(root, modules, ("semantic",)), k, seed, lines)
    log(f"mutation guard: {len(chosen)} semantic mutants of {len(modules)} {scope} module(s) "
        f"(base {base}, seed {seed})")
    tree = Tree(root)
    results = []
    try:
        for m in chosen:
            if time.time() >= stop:
                log(f"  time is up: {len(chosen) - len(results)} mutants not run")
                break
            original = (tree.root / m.module).read_text()
            mutated = mutated_source(original, m)
            changed_line(original, mutated, m)
            files = guard_files(m.module, original, m.line, tree.root)
            rec = {"key": m.key, **asdict(m), "status": "", "files": files, "layers": {}}
            try:
                tree.write(m.module, mutated)
                imp = subprocess.run([sys.executable, "-c", f"import {module_name(m.module)}"], cwd=tree.root,
                                     env=tree.env, capture_output=True, text=True, timeout=IMPORT_TIMEOUT)
                if imp.returncode:
                    rec["status"] = "incompetent"
                elif not files:
                    rec["layers"]["unit"] = {"outcome": "survived", "why": "no test file imports the module"}
                else:
                    rec["layers"]["unit"] = run_layer(tree, "unit", files, [], None, GUARD_TIMEOUT)
            finally:
                tree.write(m.module, original)
            rec["annotation_only"] = False
            classify(rec)
            if rec["layers"].get("unit", {}).get("outcome") == "timeout":
                rec["status"] = "inconclusive"
            results.append(rec)
            why = rec["layers"].get("unit", {}).get("why", "")
            log(f"  {rec['status']:>12}  {m.module}:{m.line}  `{m.before}` -> `{m.after}`  {why[:120]}")
    finally:
        tree.cleanup()
    counted = [r for r in results if r["status"] in ("killed", "survived")]
    killed = sum(r["status"] == "killed" for r in counted)
    rate = killed / len(counted) if counted else 1.0
    survivors = [r for r in counted if r["status"] == "survived"]
    # a clear fall, not a low draw: the kills of a sample this small vary widely at the measured
    # rate, so the guard fails only when as few kills are improbable at it (one-sided binomial)
    p = binom_cdf(killed, len(counted), threshold) if counted else 1.0
    log(f"mutation guard: {killed} of {len(counted)} killed ({100 * rate:.0f} %); at the measured rate "
        f"{100 * threshold:.0f} % so few kills or fewer have probability {p:.3f} (fails under {GUARD_ALPHA}); "
        f"survivors:" + ("" if survivors else " none"))
    for r in survivors:
        log(f"  {r['key']} line {r['line']}: `{r['before']}` -> `{r['after']}` (ran {', '.join(r['files']) or 'nothing'})")
    return {"scope": scope, "results": results, "killed": killed, "counted": len(counted), "rate": rate,
            "p": p, "passed": p >= GUARD_ALPHA}


class Tree:
    """A copy of the source tree whose ``groupcheck`` package a child process
    imports (through ``shim/groupcheck``, found on PYTHONPATH before the
    editable install's finder).  ``apply`` writes one mutant, ``restore``
    puts the original back; each write gets a fresh modification time so
    no cached bytecode of another version is ever reused."""

    PACKAGES = ("core", "impl", "conformance", "model", "spec", "cli")

    def __init__(self, src: Path):
        self.dir = Path(tempfile.mkdtemp(prefix="groupcheck-mutants-"))
        self.root = self.dir / "tree"
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        for name in self.PACKAGES + ("tests", "bench", "docs"):        # docs: tests read its pages
            shutil.copytree(src / name, self.root / name, ignore=ignore)
        for name in ("pyproject.toml", "README.md", "Makefile"):
            shutil.copy2(src / name, self.root / name)
        pkg = self.dir / "shim" / "groupcheck"
        pkg.mkdir(parents=True)
        for name in self.PACKAGES:
            (pkg / name).symlink_to(self.root / name, target_is_directory=True)
        self._mtime = int(time.time()) + 10
        self.env = {**os.environ, "PYTHONPATH": str(self.dir / "shim"), "HYPOTHESIS_PROFILE": "ci"}

    def write(self, module: str, text: str) -> None:
        path = self.root / module
        path.write_text(text)
        self._mtime += 2
        os.utime(path, (self._mtime, self._mtime))

    def cleanup(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------- runner (parent side)

def _end(p: subprocess.Popen) -> None:
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.communicate()


IMPORT_TIMEOUT = 300


def run_layer(tree: Tree, layer: str, files: list[str], protocols: list[str], a, timeout: float) -> dict:
    """One layer on the tree as it is now: {"outcome": killed|survived|timeout, "why", "seconds"}."""
    py = sys.executable
    if layer in TEST_LAYERS:
        cmd = [py, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--no-header", "-m", "not slow",
               *(files if layer == "tests" else [f"tests/{f}" for f in files])]
    else:
        cmd = [py, str(tree.root / "bench" / "mutants.py"), "--layer", layer, "--protocols", ",".join(protocols),
               "--runs", str(a.runs), "--seed", str(a.run_seed), "--tlc-runs", str(a.tlc_runs)]
    t0 = time.monotonic()
    # its own session, so a timeout ends the layer's children too (TLC's JVM, a cluster's nodes)
    p = subprocess.Popen(cmd, cwd=tree.root, env=tree.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    try:
        stdout, stderr = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _end(p)
        return {"outcome": "timeout", "why": f"over {timeout:.0f} s", "seconds": round(time.monotonic() - t0, 1)}
    except BaseException:
        _end(p)
        raise
    _end(p)         # anything the layer left running
    secs = round(time.monotonic() - t0, 1)
    if layer in TEST_LAYERS:
        if p.returncode == 0:
            return {"outcome": "survived", "why": "", "seconds": secs}
        failed = [ln for ln in stdout.splitlines() if ln.startswith(("FAILED", "ERROR"))]
        return {"outcome": "killed", "why": (failed[:1] or stdout.strip().splitlines()[-1:] or [""])[0][:300],
                "seconds": secs}
    try:
        res = json.loads(stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        tail = (stderr.strip().splitlines() or ["no output"])[-1]
        return {"outcome": "killed", "why": f"crashed: {tail[:300]}", "seconds": secs}
    return {"outcome": "killed" if res["killed"] else "survived", "why": res.get("why", ""), "seconds": secs}


FALLBACK_FILES = 3      # test files run for a mutant on lines the map has no test for


def fallback_files(module: str, root: Path) -> list[str]:
    """The test files ``fallback`` runs: those that import the module, and
    for a module of the CLI those that run the CLI as a program (through
    tests/cli_helpers.py), the most specific first, FALLBACK_FILES at most."""
    files = importers(module, root)
    if module.startswith("cli/"):
        files += [f.name for f in sorted((root / "tests").glob("test_*.py"))
                  if f.name not in files and "cli_helpers" in f.read_text(encoding="utf-8")]
    return files[:FALLBACK_FILES]


def fallback(tree: Tree, files: list[str], a) -> dict:
    """The ``tests`` layer for a mutant on lines no test executes in the map:
    the map misses what runs in another process (the explorer's worker
    processes, a CLI or cluster node started by a test) and what a cache
    shared by a worker's tests ran for the first of them only, so the
    default tests of the (at most FALLBACK_FILES) test files that import the
    module run instead.  A time-out here is no kill (whole files may
    outlast the budget): the mutant is counted as not reached."""
    limit = max(a.min_timeout, 3 * a.budget + 30)
    r = run_layer(tree, "tests", [f"tests/{f}" for f in files], [], a, limit)
    r.update({"selected": len(files), "executing": 0, "fallback": files})
    if r["outcome"] == "timeout":
        r.update(outcome="survived", why=f"the {len(files)} test files that import the module did not finish "
                                         f"within {limit:.0f} s")
    if r["outcome"] == "survived":
        r["unexecuted"] = True
        r["why"] = r.get("why") or (f"no default test in the map executes the mutated lines; the default tests "
                                    f"of {', '.join(files)} (importing the module) pass")
    return r


def module_name(module: str) -> str:
    return "groupcheck." + module[:-3].replace("/", ".")


def protocols_running(tree: Tree) -> dict[str, list[str]]:
    """protocol -> the files whose code its run calls (each in a fresh process)."""
    from groupcheck.conformance.replay import registry
    out = {}
    for p in registry.available():
        r = subprocess.run([sys.executable, str(tree.root / "bench" / "mutants.py"), "--layer", "loads",
                            "--protocols", p], cwd=tree.root, env=tree.env, capture_output=True, text=True,
                           check=True)
        out[p] = json.loads(r.stdout.strip().splitlines()[-1])
    return out


def plan(tree: Tree, modules, layers) -> dict[str, dict]:
    """module -> {layer: (test files, protocols)}: what each layer runs for a mutant of it
    (the ``tests`` layer's tests are chosen per mutant, by ``select_tests``)."""
    runs = protocols_running(tree) if set(layers) - set(TEST_LAYERS) else {}
    out = {}
    for mod in modules:
        unit, lock = TESTS.get(mod, ([], []))
        protos = [p for p, files in runs.items() if mod in files]
        out[mod] = {layer: {"files": {"unit": unit, "lockstep": lock}.get(layer, []),
                            "protocols": [] if layer in TEST_LAYERS else protos}
                    for layer in layers
                    if layer != "tests" and (unit if layer == "unit" else lock if layer == "lockstep" else protos)}
    return out


def summarise(results: list[dict], layers) -> dict:
    competent = [r for r in results if r["status"] != "incompetent"]
    equivalent = [r for r in competent if r["status"] == "equivalent"]
    counted = [r for r in competent if r["status"] != "equivalent"]

    def rate(rs, names):
        rs = [r for r in rs if any(n in r["layers"] for n in names)]
        k = sum(any(r["layers"].get(n, {}).get("outcome") in ("killed", "timeout") for n in names) for r in rs)
        return {"killed": k, "of": len(rs), "rate": round(k / len(rs), 3) if rs else None}

    per_module = {}
    for mod in dict.fromkeys(r["module"] for r in counted):
        rs = [r for r in counted if r["module"] == mod]
        per_module[mod] = {"default_tests": rate(rs, TEST_LAYERS), "default_audit": rate(rs, AUDIT_LAYERS),
                           "any": rate(rs, layers)}

    def by(key):
        out = {}
        for v in sorted({key(r) for r in counted}):
            rs = [r for r in counted if key(r) == v]
            out[v] = {"default_tests": rate(rs, TEST_LAYERS), "default_audit": rate(rs, AUDIT_LAYERS),
                      "any": rate(rs, layers)}
        return out
    return {
        "mutants": len(results), "incompetent": len(results) - len(competent), "equivalent": len(equivalent),
        "counted": len(counted),
        "per_layer": {n: rate(counted, [n]) for n in layers},
        "default_tests": rate(counted, TEST_LAYERS),
        "default_audit": rate(counted, AUDIT_LAYERS),
        "any_layer": rate(counted, layers),
        "per_module": per_module,
        "per_package": by(lambda r: package(r["module"])),
        "per_family": by(family),
        "per_operator": by(lambda r: r["operator"]),
        "survivors": [r["key"] for r in counted if r["status"] == "survived"],
        # the default tests with the pinning tests added since (each checked on its mutant)
        "default_tests_with_pins": {"killed": rate(counted, TEST_LAYERS)["killed"] + sum(
            1 for r in counted if r["status"] == "survived" and r.get("pinned")), "of": len(counted)},
        # survivors on lines no default test executes (the tests layer ran nothing)
        "unexecuted": [r["key"] for r in counted if r["status"] == "survived"
                       and r["layers"].get("tests", {}).get("unexecuted")],
        "unverified": [r["key"] for r in counted if r["layers"].get("tests", {}).get("outcome") == "unverified"],
    }


def package(module: str) -> str:
    """A module's layer of the product: impl, conformance, model, model/proofs, cli."""
    return "model/proofs" if module.startswith("model/proofs/") else module.split("/")[0]


def first_failed(why: str) -> str | None:
    """The test id of a pytest summary line (``FAILED tests/x.py::t - ...``)."""
    parts = why.split()
    return parts[1] if len(parts) > 1 and parts[0] in ("FAILED", "ERROR") and "::" in parts[1] else None


def verify_kills(tree: Tree, doc: dict, timeout: float = 900) -> None:
    """Run every test that killed a mutant on the unmutated tree: a kill by
    a test that fails there too (flaky, or hurt by running alone) is marked
    ``unverified`` and not counted."""
    def fn(t):      # the test function: pytest prints a parameter's id escaped, so it may not select it back
        return t.split("[", 1)[0]
    ids = sorted({fn(t) for r in doc["results"] for t in [first_failed(r["layers"].get("tests", {}).get("why", ""))]
                  if t and r["layers"]["tests"]["outcome"] == "killed"} - set(doc.get("verified", [])))
    if not ids:
        return
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--no-header", *ids],
                       cwd=tree.root, env=tree.env, capture_output=True, text=True, timeout=timeout)
    if p.returncode not in (0, 1):
        sys.exit(f"the killing tests could not be run on the unmutated tree (pytest {p.returncode}): "
                 f"{(p.stdout.strip().splitlines() or [''])[-1]}")
    bad = {fn(t) for ln in p.stdout.splitlines() if ln.startswith(("FAILED", "ERROR"))
           for t in [first_failed(ln)] if t}
    doc.setdefault("failing_unmutated", [])
    doc["failing_unmutated"] = sorted(set(doc["failing_unmutated"]) | (bad - {None}))
    doc["verified"] = sorted((set(doc.get("verified", [])) | set(ids)) - bad)
    for r in doc["results"]:
        t = r["layers"].get("tests", {})
        if t.get("outcome") == "killed" and fn(first_failed(t.get("why", "")) or "") in bad:
            t["outcome"] = "unverified"


def classify(rec: dict) -> None:
    """Set a competent mutant's status (and an equivalent's why) from its
    layers and ``EQUIVALENT`` as it is now (so a resumed file is re-judged)."""
    if rec["status"] == "incompetent":
        return
    if rec.get("annotation_only"):
        rec["status"], rec["why"] = "equivalent", ANNOTATION_ONLY
        return
    if any(v["outcome"] in ("killed", "timeout") for v in rec["layers"].values()):
        rec["status"] = "killed"
        return
    why = EQUIVALENT.get((rec["module"], rec["operator"], rec["before"], rec["after"]))
    rec["status"] = "equivalent" if why else "survived"
    if why:
        rec["why"] = why
    gap = OPEN.get(rec["key"])
    if not why and gap and gap[0] == rec["before"]:
        rec["why"] = gap[1]
    pin = PINNED.get(rec["key"])
    if not why and pin and pin[0] == rec["before"]:
        rec["pinned"] = pin[1]
        test = pin[1] if "::" in pin[1] else f"tests/test_pinned_decisions.py::{pin[1]}"
        rec["why"] = f"a gap: now killed by {test}"


def merge(doc: dict, other: dict) -> dict:
    """``doc`` with ``other``'s layers added to each mutant both measured (the
    same seed and sample, other layers: two runs side by side); a mutant
    only ``other`` measured is left out, so the rates count one sample."""
    theirs = {r["key"]: r for r in other["results"]}
    for rec in doc["results"]:
        o = theirs.get(rec["key"])
        if o is None or o["status"] == "incompetent" or rec["status"] == "incompetent":
            continue
        rec["layers"].update({k: v for k, v in o["layers"].items() if k not in rec["layers"]})
    doc["layers"] = list(dict.fromkeys(run_layers(doc) + run_layers(other)))
    doc["merged"] = {"layers": run_layers(other), "started": other.get("started"),
                     "finished": other.get("finished"), "measured": sum(r["key"] in theirs for r in doc["results"])}
    return doc


def write(out: Path, doc: dict) -> None:
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(out)


def run_layers(doc: dict) -> list[str]:
    """The layers a results file measured."""
    args = doc["args"]
    return doc.get("layers") or [n for n in args["layers"].split(",") if n] + (["cluster"] if args["cluster"] else [])


def finish(out: Path, doc: dict, layers) -> None:
    for rec in doc["results"]:
        classify(rec)
    doc["summary"] = summarise(doc["results"], doc.get("layers", layers))
    doc["equivalent"] = [{k: r[k] for k in ("key", "line", "before", "after", "why")}
                         for r in doc["results"] if r["status"] == "equivalent"]
    write(out, doc)


def rejudge(doc: dict, root: Path) -> None:
    """Judge a results file's mutants with this version's rules (the
    annotation test on the sources under ``root``, ``EQUIVALENT``)."""
    for rec in doc["results"]:
        m = Mutant(rec["module"], rec["operator"], rec["occurrence"], rec["line"])
        original = (root / m.module).read_text()
        mutated = mutated_source(original, m)     # None: the source changed since (the record stays as judged)
        rec["annotation_only"] = mutated is not None and annotation_only(original, mutated)
        classify(rec)


def markdown(doc: dict) -> str:
    """The figures of a results file as the Markdown tables of docs/mutants.md
    (judged by ``rejudge`` first)."""
    rejudge(doc, ROOT)
    sm = summarise(doc["results"], run_layers(doc))
    pct = lambda r: f"{r['killed']} of {r['of']} ({100 * r['rate']:.0f} %)" if r["of"] else "-"  # noqa: E731
    lines = ["| layer | killed / mutants it runs on |", "| --- | ---: |"]
    lines += [f"| {n} | {pct(r)} |" for n, r in sm["per_layer"].items()]
    lines += [f"| **default tests** (tests, unit, lockstep) | {pct(sm['default_tests'])} |",
              f"| **default audit** (campaign, tlc, history) | {pct(sm['default_audit'])} |",
              f"| **any layer** | {pct(sm['any_layer'])} |",
              f"| **default tests with the pinning tests** (PINNED) | {pct(with_pins(doc['results']))} |", "",
              "| module | default tests | with the pinning tests | default audit | any layer |",
              "| --- | ---: | ---: | ---: | ---: |"]
    lines += [f"| {mod} | {pct(r['default_tests'])} | {pct(with_pins(doc['results'], mod=mod))} | "
              f"{pct(r['default_audit'])} | {pct(r['any'])} |" for mod, r in sorted(sm["per_module"].items())]
    for title, key in (("package", "per_package"), ("family", "per_family"), ("operator", "per_operator")):
        lines += ["", f"| {title} | default tests | with the pinning tests |", "| --- | ---: | ---: |"]
        lines += [f"| {v} | {pct(r['default_tests'])} | "
                  f"{pct(with_pins(doc['results'], pkg=v if key == 'per_package' else None, fam=v if key == 'per_family' else None, op=v if key == 'per_operator' else None))} |"
                  for v, r in sm[key].items()]
    rows = [r for r in doc["results"] if r["status"] in ("survived", "equivalent", "incompetent")]
    if rows:
        lines += ["", "| mutant | line | change | status | why |", "| --- | ---: | --- | --- | --- |"]
        cell = lambda t: t.replace("|", "\\|")  # noqa: E731
        lines += [f"| {r['key']} | {r['line']} | `{cell(r['before'])}` → `{cell(r['after'])}` | {r['status']} | "
                  f"{cell(r.get('why') or survivor_why(r))} |" for r in rows]
    return "\n".join(lines)


def with_pins(results: list[dict], mod=None, pkg=None, fam=None, op=None) -> dict:
    """The default tests' kills of the counted mutants (of a module, package,
    family or operator) with the survivors PINNED since counted as killed."""
    rs = [r for r in results if r["status"] in ("killed", "survived")
          and (mod is None or r["module"] == mod) and (pkg is None or package(r["module"]) == pkg)
          and (fam is None or family(r) == fam) and (op is None or r["operator"] == op)]
    k = sum(1 for r in rs if r.get("pinned") or any(r["layers"].get(n, {}).get("outcome") in ("killed", "timeout")
                                                   for n in TEST_LAYERS))
    return {"killed": k, "of": len(rs), "rate": round(k / len(rs), 3) if rs else None}


def survivor_why(rec: dict) -> str:
    """What the tests layer saw of a survivor not yet read."""
    t = rec["layers"].get("tests")
    if not t:
        return ""
    if t.get("unexecuted"):
        return t.get("why") or "no default test executes the mutated lines"
    return (f"{t.get('executing')} default tests execute it ({t.get('selected')} run"
            + (", import-time line" if t.get("import_time") else "") + "); none fails")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--modules", nargs="*", default=None, help="modules to sample (default: every module of "
                    "impl/, conformance/, model/ and cli/)")
    ap.add_argument("--families", default=",".join(FAMILIES), help="operator families: semantic, cosmic-ray")
    ap.add_argument("--sample", type=int, default=300, help="mutants measured (0: all)")
    ap.add_argument("--seed", type=int, default=1, help="the sample's seed")
    ap.add_argument("--only", nargs="*", default=[], help="mutant keys (module:operator:occurrence) to run")
    ap.add_argument("--runs", type=int, default=50, help="drawn runs per protocol (campaign, history)")
    ap.add_argument("--run-seed", type=int, default=0, help="the campaign's first seed")
    ap.add_argument("--tlc-runs", type=int, default=1, help="runs per protocol validated by TLC")
    ap.add_argument("--layers", default="tests", help="tests (the default tests that execute the mutant's "
                    "lines, from --covmap), unit, lockstep (the files in TESTS), campaign, tlc, history")
    ap.add_argument("--covmap", nargs="+", help="the base name bench/covmap.py recorded the default suite under "
                    "(GROUPCHECK_COVMAP); needed by the tests layer; several: their union (say, the suite's and "
                    "one of test files added since)")
    ap.add_argument("--hand", metavar="FILE", help="measure the mutants written by hand in FILE (a JSON list of "
                    "id, module, before, after, why; bench/hand_mutants.json) instead of drawing a sample; "
                    "--only takes their ids")
    ap.add_argument("--budget", type=float, default=30.0, help="the tests layer's share of a mutant: the "
                    "fastest executing tests up to this many seconds of their measured time")
    ap.add_argument("--cluster", action="store_true", help="add the (slow) cluster layer")
    ap.add_argument("--timeout", type=float, default=2.0,
                    help="a layer's timeout, times its unmutated time (at least --min-timeout)")
    ap.add_argument("--min-timeout", type=float, default=20.0)
    ap.add_argument("--tree", default=str(ROOT), help="the source tree to measure (a checkout of another "
                    "commit, e.g. before and after a change to the tests); it is copied, never changed")
    ap.add_argument("--out", default="mutants.json")
    ap.add_argument("--resume", action="store_true", help="keep the mutants already in --out")
    ap.add_argument("--markdown", metavar="RESULTS", help="print a results file's figures as Markdown, run nothing")
    ap.add_argument("--merge", nargs=2, metavar=("RESULTS", "OTHER"),
                    help="add OTHER's layers to RESULTS's mutants (the same sample measured by other layers in "
                         "another run), written to --out; run nothing")
    ap.add_argument("--guard", action="store_true", help="the CI guard: --guard-mutants semantic mutants of "
                    "the modules changed against --base, their importing test files, a pass/fail kill rate")
    ap.add_argument("--base", default="main")
    ap.add_argument("--guard-mutants", type=int, default=GUARD_MUTANTS)
    ap.add_argument("--threshold", type=float, default=GUARD_THRESHOLD)
    # child side: one layer on the tree this file is in
    ap.add_argument("--layer", help=argparse.SUPPRESS)
    ap.add_argument("--protocols", default="", help=argparse.SUPPRESS)
    ap.add_argument("--module-name", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.layer:
        child(a)
        return
    if a.markdown:
        print(markdown(json.loads(Path(a.markdown).read_text())))
        return
    if a.merge:
        doc = merge(*(json.loads(Path(f).read_text()) for f in a.merge))
        finish(Path(a.out), doc, doc["layers"])
        return
    # a TERM (or an INT ignored in a background job's shell) still restores and removes the copy
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if a.guard:
        res = guard(Path(a.tree).resolve(), a.base, a.guard_mutants, a.seed, a.threshold,
                    log=lambda t: print(t, flush=True))
        sys.exit(0 if res["passed"] else 1)
    families = [f for f in a.families.split(",") if f]
    if "cosmic-ray" in families:
        require_cosmic_ray()
    layers = [n for n in a.layers.split(",") if n] + (["cluster"] if a.cluster else [])
    out = Path(a.out)
    tree = Tree(Path(a.tree).resolve())
    if a.modules is None:
        a.modules = product_modules(tree.root)
    if "tests" in layers and not a.covmap:
        sys.exit("the tests layer needs --covmap (bench/covmap.py's map of the default suite)")
    covmap = load_covmaps(a.covmap) if "tests" in layers else None
    hand = load_hand(Path(a.hand), tree.root) if a.hand else None
    if hand is not None:
        a.modules = list(dict.fromkeys(m.module for m in hand))
        by_id = {m.operator[len("hand/"):]: m.key for m in hand}
        a.only = [by_id.get(k, k) for k in a.only]
    try:
        mutants = hand if hand is not None else enumerate_mutants(tree.root, a.modules, families)
        lines = {mod: len((tree.root / mod).read_text().splitlines()) for mod in a.modules}
        chosen = ([m for m in mutants if m.key in set(a.only)] if a.only else mutants if hand is not None else
                  sample(mutants, a.sample, a.seed, lines) if a.sample else mutants)
        layout = plan(tree, a.modules, layers)
        doc = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                           "load": os.getloadavg()[0]},
               "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "args": {k: v for k, v in vars(a).items() if k not in ("layer", "protocols", "module_name")},
               "enumerated": {mod: sum(m.module == mod for m in mutants) for mod in a.modules},
               "lines": lines,
               "layers": layers, "plan": layout, "baseline": {}, "results": []}
        if a.resume and out.exists():
            old = json.loads(out.read_text())
            doc["results"], doc["baseline"] = old.get("results", []), old.get("baseline", {})
            if a.only:                  # a re-measurement: the file stays the run it was
                doc["remeasured"] = doc.pop("args")
                doc["args"], doc["started"] = old["args"], old["started"]
                doc["layers"] = list(dict.fromkeys(run_layers(old) + layers))
                doc["plan"] = {mod: {**old.get("plan", {}).get(mod, {}), **lay} for mod, lay in layout.items()}
            # a layer whose files or protocols changed is measured on the unmutated tree again
            for mod, lay in layout.items():
                for layer, what in lay.items():
                    if old.get("plan", {}).get(mod, {}).get(layer) != what:
                        doc["baseline"].pop(f"{mod}:{layer}", None)
            rejudge(doc, tree.root)
        done = {r["key"]: r for r in doc["results"]}
        redo = set(a.only) if a.resume else set()     # re-measure these mutants' --layers
        # the unmutated tree must pass every layer; its times set the timeouts (a layer
        # the same for several modules, the same files and protocols, is run once)
        measured: dict = {}
        for mod, lay in layout.items():
            for layer, what in lay.items():
                same = (layer, tuple(what["files"]), tuple(what["protocols"]))
                if f"{mod}:{layer}" in doc["baseline"]:
                    measured.setdefault(same, doc["baseline"][f"{mod}:{layer}"])
                    continue
                if same not in measured:
                    r = run_layer(tree, layer, what["files"], what["protocols"], a, timeout=1800)
                    if r["outcome"] != "survived":
                        sys.exit(f"the unmutated tree fails layer {layer} for {mod}: {r['why']}")
                    measured[same] = r["seconds"]
                doc["baseline"][f"{mod}:{layer}"] = measured[same]
                write(out, doc)
        # in an order shuffled by the seed, so a run stopped early is still a sample of every module
        order = list(chosen)
        random.Random(a.seed).shuffle(order)
        for k, m in enumerate(order):
            if m.key in done and m.key not in redo:
                continue
            path = tree.root / m.module
            original = path.read_text()
            mutated = mutated_source(original, m)
            if mutated is None:
                continue
            changed_line(original, mutated, m)
            t0 = time.monotonic()
            results, imp_error = {}, None
            only_annotations = annotation_only(original, mutated)
            if not only_annotations:        # equivalent by construction: nothing to run
                try:
                    tree.write(m.module, mutated)
                    # generous: on a loaded machine the import alone has taken over a minute
                    try:
                        imp = subprocess.run([sys.executable, str(tree.root / "bench" / "mutants.py"), "--layer",
                                              "import", "--module-name", module_name(m.module)], cwd=tree.root,
                                             env=tree.env, capture_output=True, text=True, timeout=IMPORT_TIMEOUT)
                        if imp.returncode:
                            imp_error = (imp.stderr.strip().splitlines() or [""])[-1][:300]
                    except subprocess.TimeoutExpired:
                        imp_error = f"the mutated module did not import within {IMPORT_TIMEOUT} s"
                    if not imp_error and "tests" in layers:
                        sel = select_tests(covmap, m.module, changed_lines(original, mutated), a.budget,
                                           original)
                        files = fallback_files(m.module, tree.root) if not sel["tests"] else []
                        if not sel["tests"] and files:
                            results["tests"] = fallback(tree, files, a)
                        elif not sel["tests"]:
                            results["tests"] = {"outcome": "survived", "seconds": 0.0, "unexecuted": True,
                                                "why": "no default test executes the mutated lines"}
                        else:
                            limit = max(a.min_timeout, 3 * sel["seconds"] + 30)
                            results["tests"] = run_layer(tree, "tests", sel["tests"], [], a, limit)
                            results["tests"].update({"selected": len(sel["tests"]), "executing": sel["executing"],
                                                     "import_time": sel["import_time"]})
                    if not imp_error:
                        for layer, what in layout[m.module].items():
                            limit = max(a.min_timeout, a.timeout * doc["baseline"][f"{m.module}:{layer}"])
                            results[layer] = run_layer(tree, layer, what["files"], what["protocols"], a, limit)
                finally:
                    tree.write(m.module, original)
            secs = round(time.monotonic() - t0, 1)
            rec = {"key": m.key, **asdict(m), "status": "incompetent" if imp_error else "", "layers": results,
                   "seconds": secs}
            if imp_error:
                rec["why"] = imp_error
            rec["annotation_only"] = only_annotations
            if m.operator in HAND:
                rec["intent"] = HAND[m.operator]["why"]
            if m.key in done:           # re-measured: these layers replace the old ones
                done[m.key]["layers"].update(results)
                done[m.key]["remeasured"] = sorted(results)
                rec = done[m.key]
            else:
                doc["results"].append(rec)
            finish(out, doc, layers)
            killers = ",".join(n for n, v in results.items() if v["outcome"] != "survived") or "-"
            print(f"[{k + 1}/{len(chosen)}] {m.key} line {m.line}: {rec['status']} ({killers}) {secs} s",
                  flush=True)
        if "tests" in layers:
            verify_kills(tree, doc)
        doc["finished"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        finish(out, doc, layers)
        print(json.dumps(doc["summary"], indent=1))
    finally:
        tree.cleanup()


if __name__ == "__main__":
    main()
