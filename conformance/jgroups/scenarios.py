"""JGroups's own test scenarios, as runs of ``groupcheck jgroups run`` (JGroups
2.12 itself) and ``groupcheck cluster run`` (our stacks), judged by the same
checkers (docs/jgroups.md, "JGroups's own test scenarios").

Each ``Scenario`` names the JGroups test it follows (2.12's; STABLE_Test
is 5.2's, 2.12 has none), what that test does and asserts (in our words),
the two commands that reproduce it, and ``judge``: the test's assertion
computed from the run's black-box history (and, for STABLE, its white-box
trace), so the same function says whether JGroups's own test would pass
on either target.  The history and trace
verdicts come from the commands themselves.  bench/jgroups_scenarios.py
runs the table and prints it.

The kill and flush times of ``groupcheck jgroups run`` count from the full
view, and its senders start 0.3 s after it; ``groupcheck cluster run``'s
count from the start of the senders: a JGroups time is the cluster's plus
0.3 s."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from groupcheck.core import properties
from groupcheck.core.trace import history as history_format
from groupcheck.core.trace.reader import load


@dataclass(frozen=True)
class Scenario:
    name: str
    test: str                    # the JGroups test (class.method) it follows
    does: str
    asserts: str
    jgroups: tuple               # `groupcheck jgroups run` arguments (no --out, --json)
    ours: Optional[tuple]        # `groupcheck cluster run` arguments; None: the cluster has no such layer
    judge: Callable[[history_format.History, dict, Path], list]   # the test's assertion: what fails of it
    ours_note: str = ""          # how our run differs from the JGroups one, or why there is none


def _survivors(h: history_format.History) -> list:
    return [m for m in h.nodes if m not in h.crashed]


def _views_converge(h: history_format.History) -> list:
    """The survivors' last views are one view of exactly the survivors."""
    alive = _survivors(h)
    last = {m: tuple(sorted(h.views[m][-1][1])) if h.views.get(m) else () for m in alive}
    if len(set(last.values())) != 1 or next(iter(last.values())) != tuple(sorted(alive)):
        return [f"the survivors' last views differ or are not the survivors {alive}: {last}"]
    return []


def _finished(run: dict) -> list:
    # `jgroups run`: every surviving member ended; `cluster run`: the survivors went quiet
    if run.get("failed"):
        return [f"members {run['failed']} did not finish (a hang)"]
    if run.get("quiescent") is False:
        return ["the cluster never went quiet (a hang)"]
    return []


def _orders_differ(got: dict) -> list:
    """Where each member's delivery sequence first differs from the first
    member's (a sequence that is a prefix of the other is a loss, counted
    apart)."""
    bad = []
    a = next(iter(got), None)
    for b in list(got)[1:]:
        i = next((k for k, (x, y) in enumerate(zip(got[a], got[b])) if x != y), None)
        if i is not None:
            bad.append(f"members {a} and {b} deliver in different orders from position {i + 1}: "
                       f"{got[a][i:i + 3]} against {got[b][i:i + 3]}")
    return bad


def failover(sender: int, count: int) -> Callable:
    """SequencerFailoverTest: the survivors have one view of 2, and each
    delivers exactly ``count`` messages, all of ``sender``'s, in one order."""
    def judge(h: history_format.History, run: dict, out: Path) -> list:
        bad = _views_converge(h) + _finished(run)
        got = {m: [d[0] for d in h.deliveries.get(m, [])] for m in _survivors(h)}
        for m, seq in got.items():
            if len(seq) != count or {s for s, _ in seq} != {sender}:
                bad.append(f"member {m} delivered {len(seq)} messages, not {sender}'s {count}")
        return bad + _orders_differ(got)
    return judge


def same_order(total: int) -> Callable:
    """SequencerOrderTest: every member delivers all ``total`` messages, in one order."""
    def judge(h: history_format.History, run: dict, out: Path) -> list:
        got = {m: [d[0] for d in h.deliveries.get(m, [])] for m in h.nodes}
        bad = [f"member {m} delivered {len(s)}, not {total}" for m, s in got.items() if len(s) != total]
        return bad + _orders_differ(got) + _finished(run)
    return judge


def late_deliveries(h: history_format.History) -> Optional[list]:
    """JGroups 2.12's late delivery under load (docs/jgroups.md, "A message
    delivered in the next view"): when every difference between two members
    that moved together from view V to V' is a message V's member lacking it
    delivered in V' (late, not lost), those deliveries, as (member, msg, V,
    V'); [] when there is no difference; None when one is not late (lost,
    or delivered elsewhere): a fault this does not explain."""
    found = deviations(h, lost_ok=False)
    return None if found is None else [d[1:] for d in found]


def crashed_last(h: history_format.History) -> set:
    """For each crashed sender, the newest of its messages any survivor
    delivered: the one message of it JGroups 2.12's FLUSH may leave with
    only some survivors (docs/jgroups.md, "A JGroups deviation: a crashed
    member's last message is lost by some survivors")."""
    last: dict = {}
    for m in _survivors(h):
        for msg, _, _ in h.deliveries.get(m, ()):
            if msg[0] in h.crashed and msg[1] > last.get(msg[0], -1):
                last[msg[0]] = msg[1]
    return set(last.items())


def deviations(h: history_format.History, lost_ok: bool = True) -> Optional[list]:
    """Every difference between survivors, when each is one of JGroups
    2.12's two documented deviations: ("late", member, msg, V, V'), a
    message of view V the member delivered in the next view V'; ("lost",
    member, msg), the crashed sender's last message to reach a survivor
    (``crashed_last``), never delivered by this one (``lost_ok``).  []
    when the survivors do not differ; None when some difference is neither
    (a fault these findings do not cover)."""
    lost = crashed_last(h) if lost_ok else set()
    found = []
    for (v, v2), rows in sorted(properties.moved_together(h).items()):
        union = set().union(*(per_view.get(v, set()) for _, per_view in rows))
        for m, per_view in rows:
            for msg in sorted(union - per_view.get(v, set())):
                if msg in per_view.get(v2, ()):
                    found.append(("late", m, msg, v, v2))
                elif msg not in lost:
                    return None
    joined = properties.joined_views(h)

    def got(m, since):      # what m delivered in views from ``since`` on (Agreement's reading)
        return {d[0] for d in h.deliveries.get(m, ()) if (d[1] or 0) >= since}
    survivors = _survivors(h)
    for m in survivors:
        missing = set()
        for o in survivors:
            since = max(joined.get(m, 0), joined.get(o, 0))
            missing |= got(o, since) - got(m, since)
        for msg in sorted(missing):
            if msg not in lost:
                return None
            found.append(("lost", m, msg))
    return found


def flush_survives(flusher: Optional[int] = None) -> Callable:
    """FlushTest with a crashed flush coordinator or participant: no hang
    (every survivor finished, none is left blocked: its last flush event is
    an unblock), the survivors' views converge on the survivors, and the
    member that flushed itself (``flusher``, when it survives) had its flush
    succeed."""
    def judge(h: history_format.History, run: dict, out: Path) -> list:
        bad = _views_converge(h) + _finished(run)
        blocked = [m for m in _survivors(h) if h.flush.get(m) and h.flush[m][-1] != "u"]
        if blocked:
            bad.append(f"members {blocked} end blocked (a flush never finished)")
        mine = (run.get("flushes") or {}).get(str(flusher), (run.get("flushes") or {}).get(flusher))
        if flusher is not None and flusher not in h.crashed and mine is not None and mine != "ok":
            bad.append(f"member {flusher}'s own flush: {mine}")
        return bad
    return judge


def application_purged(out: Path, sent: dict) -> dict:
    """From a STABLE trace (Stable.tla's records): for each sender, the
    seqno of its last application multicast (``sent``: sender -> how many
    it made, from the history), and each member's last ``purged`` of it.
    In JGroups a STABLE message is a NAKACK multicast too: its
    ``Multicast`` record directly follows its sender's ``SendStable`` or
    ``SendStability``, so it is told apart by that (a member halted at the
    end may leave its last gossip's record unwritten: past its application
    messages, uncounted).  Our STABLE's messages are no ``Multicast``."""
    trace = load(Path(out) / "traces")
    gossip_multicasts = trace.header.get("impl") == "jgroups"
    last_app: dict = {}
    made: dict = {}
    purged: dict = {}
    gossip_next: set = set()          # members whose next Multicast is a STABLE message
    for ev in trace.events:
        n = ev["nid"]
        if ev["name"] in ("SendStable", "SendStability") and gossip_multicasts:
            gossip_next.add(n)
        elif ev["name"] == "Multicast":
            if n in gossip_next:
                gossip_next.discard(n)
            elif made.get(n, 0) < sent.get(n, 0):
                made[n] = made.get(n, 0) + 1
                last_app[n] = ev["msg"]["seq"]
        if ev.get("state") and "purged" in ev["state"]:
            purged[n] = {int(s): q for s, q in ev["state"]["purged"].items()}
    return {"last_app": last_app, "purged": purged, "members": trace.header["nodes"]}


def all_purged(h: history_format.History, run: dict, out: Path) -> list:
    """STABLE_Test: once STABLE has run, every member's retransmission
    window of each sender is purged past the sender's last application
    message (the test's low == highest delivered), and every member
    delivered them all."""
    sent: dict = {}
    for s, _ in h.sent:
        sent[s] = sent.get(s, 0) + 1
    p = application_purged(out, sent)
    bad = [f"member {m} purged sender {s}'s window to {p['purged'].get(m, {}).get(s, 0)}, below its last "
           f"message {q}" for s, q in sorted(p["last_app"].items()) for m in p["members"]
           if p["purged"].get(m, {}).get(s, 0) < q]
    for m in h.nodes:
        got = {d[0] for d in h.deliveries.get(m, [])}
        if got != set(h.sent):
            bad.append(f"member {m} delivered {len(got)} of the {len(h.sent)} messages sent")
    return bad + _finished(run)


def _failover(stack: str, name: str, test: str, does: str, asserts: str) -> Scenario:
    """SequencerFailoverTest on ``stack``: B multicasts 50, one every 300 ms; A killed 3 s in."""
    return Scenario(
        name, test, does, asserts,
        ("--stack", stack, "--members", "3", "--senders", "2", "--messages", "50", "--interval", "300",
         "--kill", "1@3.3", "--settle", "4", "--timeout", "60"),
        ("--protocol", stack, "--nodes", "3", "--senders", "2", "--messages", "50", "--rate", "3.33",
         "--kill", "1@3"),
        failover(2, 50))


SCENARIOS = [
    _failover(
        "sequencer", "sequencer-failover", "SequencerFailoverTest.testBroadcastSequence",
        "A, B, C on SEQUENCER (A the coordinator and sequencer); B multicasts 50 messages, one every 300 ms; "
        "3 s in, A is shut down and suspected",
        "B and C end in one view of 2 and each receive exactly B's 50 messages, in the same order"),
    _failover(
        "sequencerflush", "sequencer-failover-flush", "SequencerFailoverTest.testBroadcastSequence, over FLUSH",
        "the same, with pbcast.FLUSH above SEQUENCER (the stack that should close the failover gap)",
        "as above"),
    Scenario(
        "sequencer-order", "SequencerOrderTest.testBroadcastSequence",
        "A, B, C on SEQUENCER with SHUFFLE below NAKACK (messages coming up reordered); 10 threads multicast "
        "50 messages each as fast as they can, each message through a member picked at random",
        "every member receives all 500 messages, in the same order",
        ("--stack", "sequencer", "--members", "3", "--messages", "167", "--interval", "0", "--shuffle",
         "--settle", "4", "--timeout", "90"),
        ("--protocol", "sequencer", "--nodes", "3", "--messages", "167", "--rate", "500"),
        same_order(501),
        "one sender per member (3 x 167 = 501 messages) for JGroups's 10 threads over the 3 members; our UDP "
        "transport reorders on its own, no SHUFFLE"),
    Scenario(
        "flush-coordinator-crash", "FlushTest.testFlushWithCrashedFlushCoordinator",
        "C1, C2, C3 on FLUSH; C2 starts a flush and stops after multicasting START_FLUSH (SUSPEND_BUT_FAIL), "
        "then C2 is shut down, so the flush it coordinates is left under way",
        "the cluster does not hang: C1 and C3 each end with a view of 2",
        ("--stack", "flush", "--members", "3", "--messages", "50", "--interval", "20",
         "--flush", "2@0.9:open", "--kill", "2@1.1", "--settle", "6", "--timeout", "60"),
        ("--protocol", "sequencerflush", "--nodes", "4", "--messages", "50", "--rate", "50",
         "--kill", "4@0.6", "--kill", "1@0.66"),
        flush_survives(),
        "our FLUSH flushes only to change views, and the coordinator runs the flush: of 4 members, member 4 "
        "is killed to start one and the coordinator 60 ms later, inside that flush (the oracle tells the "
        "survivors 50 ms after a kill; at 100 ms the flush has ended and the survivors install [1, 2, 3] "
        "first), so members 2 and 3 survive (SEQUENCER over FLUSH: the cluster's FLUSH with the oracle's "
        "views)"),
    Scenario(
        "flush-participant-crash", "FlushTest.testFlushWithCrashedParticipant",
        "C1, C2, C3 on FLUSH; C3 is shut down, then C2 runs a flush (startFlush, retried if refused, then "
        "stopFlush) while C3 may still be in the view",
        "C2's flush succeeds, and C1 and C2 each end with a view of 2",
        ("--stack", "flush", "--members", "3", "--messages", "50", "--interval", "20",
         "--kill", "3@0.6", "--flush", "2@0.6", "--settle", "6", "--timeout", "60"),
        ("--protocol", "sequencerflush", "--nodes", "3", "--messages", "50", "--rate", "50", "--kill", "3@0.3"),
        flush_survives(flusher=2),
        "no flush of a member's own: the coordinator's flush that removes the killed participant is the one"),
    Scenario(
        "stable-purge", "STABLE_Test.testStableWithDontLoopback",
        "A, B, C; B multicasts 10 messages 200 ms apart; STABLE gossips when enough bytes were received",
        "A and C receive all 10, and every member's NAKACK window of B is purged up to B's last message "
        "(low = highest delivered = highest received)",
        ("--stack", "stable", "--members", "3", "--senders", "2", "--messages", "10", "--interval", "200",
         "--settle", "12", "--timeout", "60"),
        None, all_purged,
        "our cluster has no STABLE layer; the simulator's STABLE (impl/sim_stable.py, every member 10 "
        "messages) is judged by the same function instead. STABLE_Test is JGroups 5.2's (DONT_LOOPBACK, absent "
        "from 2.12): B receives its own messages here, and STABLE's timer, which first fires 10 s after the "
        "start, gossips, since 10 of our messages are fewer bytes than max_bytes"),
]

BY_NAME = {s.name: s for s in SCENARIOS}
