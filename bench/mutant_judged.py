"""The survivors of bench/mutants.py's samples, read: those judged
equivalent (with why they cannot change behaviour), those left open (with
why no default test kills them) and those that were gaps (with the test
that now kills each, checked to fail with the mutant applied).  Data
only: bench/mutants.py's ``classify`` reads it."""

from __future__ import annotations

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
    ('model/proofs/sequencerflush/any_lemmas.py', 'semantic/SwapArguments',
     'return o.And(o.forall(1, lambda m: S["sent"][m] >= 0), o.forall(2, lambda m, x: o.And(',
     'return o.And(o.forall(1, lambda m: S["sent"][m] >= 0), o.forall(2, lambda m, x: o.And(0 <= S[\'rval\'][m, x], S[\'rdom\'][m, x], S[\'rval\'][m, x] <= S[\'sent\'][x])))'):
        'the operands of a conjunction swapped: the same formula up to commutativity, proved or refuted alike',
    ('cli/traces.py', 'core/ReplaceComparisonOperator_Gt_NotEq',
     'ok = res["runs"] > 0 and res["counts"].get("ok", 0) == res["runs"] and res["disagreements"] == 0',
     'ok = res["runs"] != 0 and res["counts"].get("ok", 0) == res["runs"] and res["disagreements"] == 0'):
        'a count of runs is never negative, so != 0 and > 0 agree',
    ('conformance/replay/raincoreflush.py', 'semantic/BoundaryFlip',
     'if aim < AIMED_SHARE["staleview"]:',
     "if (aim <= AIMED_SHARE['staleview']):"):
        "a coin of the audit's draw (a uniform float equal to the share exactly): no seed the audit uses draws it",
    ('impl/chaos.py', 'semantic/BoundaryFlip',
     'while time.monotonic() < t0 + act.at:',
     'while (time.monotonic() <= t0 + act.at):'):
        'a wait until a float time: the clock equals the deadline exactly with probability nil, so < and <= wait alike',
}


# Survivors read and left open: mutant key -> (the changed line before, why no default test kills it).
OPEN: dict[str, tuple[str, str]] = {
    'impl/flush.py:semantic/WhileToIf:1': ('while q and self._take(src, q[0], now, out):',
        "the order in which waiting heads of several senders are taken when a block lifts (each sender's queue drained in turn, or one head per sender per pass): both are legal interleavings and no test pins which"),
    'impl/chaos.py:core/ReplaceBinaryOperator_Sub_Pow:8': ('row = {**asdict(act), "node": nid, "started": round(time.monotonic() - t0, 3)}',
        "the time a chaos action started, in the schedule's log: read by no check, and the chaos runs that write it are in the slow tier"),
    'model/proofs/sequencerflush/relation.py:semantic/BoundaryFlip:80': ('z3.And(vid[r] == vid[m], S["lL"][r] >= k + 1)) for r in M]',
        "SEQUENCER over FLUSH's fixed-N relation: built and checked only by the slow tier's proofs and edge samples (each over 1.25 s)"),
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
    'conformance/cluster.py:core/ReplaceBinaryOperator_Div_BitOr:5': ('(out_dir / "result.json").write_text(json.dumps(res.to_json(), indent=2, default=str), encoding="utf-8")',
        'the detached supervisor of cluster up writes its result: it runs in a process of its own, in the cluster up/down tests of the slow tier'),
    'conformance/cluster.py:semantic/IfToWhile:1': ('if not v.clean:',
        'a cluster run judged by TLC beside the replay (--checker tlc or both): the cluster tests that ask for it are in the slow tier'),
    'model/proofs/parametric.py:core/ReplaceBinaryOperator_Sub_BitAnd:0': ('cs = [S["tl"][e] - h == P["tl"][x, y]]',
        "STABLE's every-N channel encoding (a channel's length): built only by the slow tier's proofs and the audit's prove stage"),
    'model/proofs/sequencerflush/relation.py:semantic/BreakContinue:0': ('continue',
        "SEQUENCER over FLUSH's fixed-N relation: built only by the slow tier's proofs and the audit's prove stage"),
    'model/proofs/parametric.py:semantic/BoundaryFlip:3': ('return S["hd"][q, p] < S["tl"][q, p]',
        "STABLE's every-N channel encoding: built only by the slow tier's proofs and the audit's prove stage"),
    'model/proofs/sequencerflush/lemmas.py:semantic/BreakContinue:0': ('continue',
        "a lemma set of SEQUENCER over FLUSH's fixed-N proof: built only by the slow tier's proofs and the audit's prove stage"),
    'model/tlc.py:core/ReplaceBinaryOperator_Sub_Add:0': ('seconds = time.monotonic() - t0',
        "a TLC run's reported duration: no test reads its value (a wall-clock figure)"),
    'impl/runtime.py:core/ReplaceBinaryOperator_Mul_Pow:0': ('delay = t0 + (k + 1) * gap - self.loop.time()',
        "a paced sender's schedule: a run paced wrongly still conforms, and no test measures the pace (a wall-clock figure)"),
    'cli/render.py:semantic/SkipEffect:39': ('self._refresh()',
        "the terminal progress bar's redraw when the plan arrives: drawn only on a terminal, which no test has"),
    'model/proofs/raincore/lemmas.py:core/NumberReplacer:23': ('0 <= S["ts"][n], S["ts"][n] <= 2, S["gvlen"][n] >= 0,',
        "a type bound of the ring's lemmas weakened: only the proof (slow tier, the audit's prove stage) tells it apart"),
    'conformance/tlctrace.py:core/ReplaceOrWithAnd:16': ('if tt.properties or tt.end:',
        "TLC's second run that names the broken properties, for a trace spec with properties but no end judgement: reached by the slow tier's TLC trace validations"),
    'conformance/replay/raincoreflush.py:core/ReplaceBreakWithContinue:1': ('break',
        "the false-report witness reading past the violation's record: no default test gives it a lossy-ring run with records after the violation"),
    'model/proofs/flush/relation.py:core/ReplaceComparisonOperator_Eq_LtE:47': ('S["phase"][c] == NORMAL, fr(S, T, upd))',
        "FLUSH's fixed-N relation (NORMAL is the least phase, so <= differs from == only on states the small edge samples of the default suite do not draw)"),
    'model/proofs/stable/any_relation.py:core/ReplaceComparisonOperator_LtE_Is:0': ('if 1 <= k <= n("sent", p) and z3.is_true(ev(S["data"][u[p], u[q], k])):',
        "STABLE's every-N relation's decoder: built only by the slow tier's proofs and the audit's prove stage"),
    'model/core.py:core/ReplaceBinaryOperator_Sub_Div:0': ('seconds=time.perf_counter() - t0,',
        "an exploration's reported duration: no test reads its value (a wall-clock figure)"),
    'conformance/pipeline/stages.py:core/ReplaceBinaryOperator_BitAnd_Mod:2': ('t = d.to_table(filter=(ds.field("source") == run["file"]) & (ds.field("run_id") == run["run_id"]))',
        "the pipeline reading one run's events by a dataset filter on the driver: reached by the slow tier's pipeline tests"),
    'cli/main.py:core/ReplaceBinaryOperator_BitAnd_Sub:0': ('if {"tlc", "link", "tracevalidation"} & set(stages) or engine == "spark":',
        'the audit asks for Java when a stage needs it: no test runs the audit on a machine without Java'),
    'conformance/jgroups/adapter.py:semantic/ComparisonFlip:50': ('out.update(verdict="ok" if v.clean else "violation" if v.broken_at is not None else "nonconforming",',
        'a JGroups run judged by TLC alone (--checker tlc): the tests that run JGroups are in the slow tier'),
    'conformance/replay/sequencerflush.py:core/ReplaceBinaryOperator_Mul_Mod:1': ('rng = random.Random(seed * 7919 + 17)',
        "which plan each seed of the audit's draw gets: no test pins a seed's plan, and any mapping draws the same distribution"),
    'model/proofs/raincore/relation.py:semantic/AnyAll:0': ('and all(getattr(self, k) for k in self.CONSTS if k not in ("YieldClaim", "Timely911")))',
        "the ring's relation: which variant counts as the fixed one, read only by the slow tier's proofs"),
    'model/proofs/prover.py:core/ReplaceComparisonOperator_NotEq_Gt:6': ('if r != "proved":       # the pre-state is already outside the invariant',
        "the prover's check of a CTI's pre-state (a 'cti' answer there): only the slow tier's flawed proofs reach it"),
    'model/proofs/sequencerflush/any_relation.py:semantic/IfToWhile:5': ('if P["rd"][c, q]:',
        "SEQUENCER over FLUSH's every-N relation: built only by the slow tier's proofs and the audit's prove stage"),
    'model/proofs/flush/any_lemmas.py:semantic/RangeStopDown:2': ('dom=lambda p, q: product(range(1, S["L"]), range(1, S["ns"] + 1)))',
        "a lemma of FLUSH's every-N proof: only the proof (slow tier, the audit's prove stage) tells it apart"),
    'core/trace/writer.py:core/ReplaceComparisonOperator_NotEq_IsNot:0': ('if head.get("kind") != "header":',
        'is not for != on a string: every caller hands the writer records built from literals (one interned object), so only a header read from JSON would be refused; no caller does that'),
}

# Survivors that were gaps, each now killed by a test that fails with the mutant applied:
# mutant key -> (the changed line before, the test's id; a bare name is in tests/test_pinned_decisions.py).
PINNED: dict[str, tuple[str, str]] = {
    'model/proofs/flush/any_lemmas.py:core/ReplaceBinaryOperator_Add_LShift:0': ('S["vm"][a][cv + 1]))',
        'tests/test_proofs_parametric_flush.py::test_fixed_invariant_is_inductive_for_every_N'),
    'model/proofs/flush/any_relation.py:semantic/SwapArguments:35': ('S["dl"] == z3.K(Node, EMPTY), S["dig"] == z3.K(Node, EMPTY), S["phase"] == z3.K(Node, z3.IntVal(NORMAL)),',
        'tests/test_proofs_parametric_flush.py::test_fixed_invariant_is_inductive_for_every_N'),
    'model/proofs/flush/any_relation.py:core/ReplaceComparisonOperator_Eq_IsNot:4': ('S["vid"] == z3.Lambda([a], z3.If(self.V0(a), 1, 0)),',
        'tests/test_proofs_parametric_flush.py::test_fixed_invariant_is_inductive_for_every_N'),
    'model/proofs/stable/any_lemmas.py:core/ReplaceComparisonOperator_LtE_Gt:3': ('S["sy_hi"][q, p, x] <= S["sent"][x])))',
        'tests/test_proofs_parametric.py::test_fixed_invariant_is_inductive_for_every_N'),
    'model/proofs/sequencerflush/any_lemmas.py:core/ReplaceComparisonOperator_Lt_LtE:5': ('o.And(self._in(S, a, b, i), self._in(S, a, b, j), i < j, S["ty"][a, b, i] == S["ty"][a, b, j]),',
        'tests/test_proofs_parametric_sequencerflush.py::test_with_a_crash_noduplicates_is_proved_for_every_N'),
    'model/proofs/sequencerflush/any_relation.py:core/ReplaceComparisonOperator_Gt_IsNot:0': ('z3.ForAll([j], z3.Implies(new(j), z3.And(nQ[j] > rv(nS[j]), nQ[j] <= nr[nS[j]])), patterns=[nS[j]]),',
        'tests/test_proofs_parametric_sequencerflush.py::test_with_a_crash_noduplicates_is_proved_for_every_N'),
    'model/proofs/sequencerflush/any_relation.py:core/ReplaceComparisonOperator_NotEq_GtE:8': ('again = z3.And(oc != nc, self.alive(S, nc))',
        'tests/test_proofs_parametric_sequencerflush.py::test_with_a_crash_noduplicates_is_proved_for_every_N'),
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
    'model/stable.py:semantic/AnyAll:1': ('return isinstance(v, Fn) and set(v) == M and all(x in seqs for x in v.values())',
        'tests/test_pinned_sample.py::test_a_stable_vector_is_typed_only_when_every_entry_is_a_sequence_number'),
    'conformance/replay/engine.py:semantic/UnionIntersection:0': ('elif work and not actions & set(work):',
        'tests/test_pinned_sample.py::test_a_run_is_incomplete_when_it_took_none_of_the_protocols_work_actions'),
    'core/trace/validate.py:semantic/BreakContinue:1': ('continue',
        'tests/test_pinned_sample.py::test_the_compiled_validator_reads_every_keyword_after_a_then_or_else'),
    'model/tlc_dot.py:semantic/BoundaryFlip:0': ('only_m = {gm.states[i] for i, k in enumerate(m_ids) if k >= n_tlc}',
        'tests/test_pinned_sample.py::test_a_state_only_the_model_has_is_named_even_when_it_is_the_first_one_tlc_lacks'),
    'conformance/audit/diagram.py:core/ReplaceComparisonOperator_LtE_Eq:1': ('if len(steps) <= max_rows:',
        'tests/test_pinned_sample.py::test_a_run_of_exactly_max_rows_steps_is_drawn_whole'),
    'conformance/replay/raincore.py:semantic/IfToWhile:5': ('if at is not None and i > at:',
        'tests/test_pinned_sample.py::test_the_two_token_witness_reads_only_the_events_up_to_the_violation'),
    'core/trace/decode.py:semantic/AnyAll:11': ('return any(_free(a) for a in get_type_hints(t, include_extras=True).values())',
        'tests/test_pinned_sample.py::test_a_message_type_is_free_text_when_any_member_of_its_union_is'),
    'conformance/audit/stages.py:core/ReplaceBinaryOperator_BitAnd_RShift:0': ('"actions_reached": len(set(cov.get("actions_seen") or []) & set(cov.get("actions") or [])),',
        'tests/test_pinned_sample.py::test_the_audits_coverage_figures_count_the_actions_reached_among_the_protocols'),
    'model/tlc_cfg.py:core/ReplaceComparisonOperator_Eq_NotEq:12': ('if first.kind == "id" and first.text in KEYWORDS:',
        'tests/test_pinned_sample.py::test_a_constant_whose_value_is_a_keyword_has_no_value_and_an_identifier_value_is_taken'),
    'conformance/tlctrace.py:semantic/AnyAll:0': ('if any(p is None for p in parsed):',
        'tests/test_pinned_sample.py::test_spec_states_that_are_not_all_records_are_shown_whole'),
    'cli/cluster.py:core/ReplaceBinaryOperator_Add_Sub:5': ('print(f"  tlc: {\'accepts\' if t[\'ok\'] else \'rejects at event \' + str(t[\'first_unmatched\'])} "',
        'tests/test_pinned_sample.py::test_a_cluster_result_says_where_tlc_rejected_the_trace'),
}
