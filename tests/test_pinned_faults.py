"""The fault grammar's labels (the audit stratifies its TLC sample by them)
and the chaos schedule's choice of targets, each decision pinned."""

from __future__ import annotations

from groupcheck.impl import faults
from groupcheck.impl.chaos import schedule


def _plan(**kw):
    return faults.FaultPlan(**kw).to_json()


def test_each_crash_label_names_exactly_who_crashed():
    assert faults.fault_kinds(_plan(crashes=((1, 0.1),))) == {"crash:coordinator"}
    assert faults.fault_kinds(_plan(crashes=((2, 0.1),))) == {"crash:other"}
    assert faults.fault_kinds(_plan(crashes=((3, 0.1), (2, 0.2)))) == {"crash:other"}
    assert faults.fault_kinds(_plan(crashes=((2, 0.1), (1, 0.2)))) == {"crash:coordinator", "crash:other"}
    assert faults.fault_kinds(_plan()) == {"crash:none"}


def test_an_item_is_labelled_only_when_it_differs_from_its_default():
    assert faults.fault_kinds(_plan(loss=0.1)) == {"crash:none", "loss"}
    assert faults.fault_kinds(_plan(duplicate=0.1, reorder_window=0.002)) == {"crash:none", "dup", "reorder"}
    assert faults.fault_kinds(_plan(joins=((4, 0.1),), leaves=((2, 0.3),))) == {"crash:none", "join", "leave"}
    assert faults.fault_kinds(_plan(loss=0.0)) == {"crash:none"}


def test_kills_stay_among_the_first_members_joiners_are_new_and_the_last_member_lives():
    """With rejoin, over many seeds: a named kill's target is one of the
    first ``nodes`` members and alive; a join brings ids nodes+1, nodes+2, ...
    in order, never more joins than kills; a pause's target is alive (a
    joiner included); at least one member is never killed."""
    nodes, seen = 4, set()
    for seed in range(300):
        live, joined, kills = set(range(1, nodes + 1)), [], 0
        for a in schedule(seed, 40.0, nodes, suspect=1.0, rejoin=True, holder=True):
            if a.action == "kill":
                gone = min(live) if a.target == "coordinator" else a.target
                assert gone in live and (a.target == "coordinator" or a.target <= nodes), (seed, a)
                assert a.when in ("", "eating") and (a.when == "eating") <= (a.target != "coordinator")
                live.discard(gone)
                kills += 1
                seen.add(a.when or str(a.target == "coordinator"))
            elif a.action == "join":
                joined.append(a.target)
                assert joined == list(range(nodes + 1, nodes + 1 + len(joined))) and len(joined) <= kills
                live.add(a.target)
                seen.add("join")
            else:
                assert a.target in live, (seed, a)
                seen.add("pause")
        assert kills <= nodes - 1 and {m for m in live if m <= nodes}, (seed, kills)
    assert seen >= {"eating", "True", "False", "join", "pause"}



def test_a_member_kill_may_target_the_last_of_the_first_members():
    """A kill of a named member draws among all the first members alive,
    node ``nodes`` included (the range is 1..nodes, both ends)."""
    for nodes in (2, 3):
        targets = {a.target for seed in range(60) for a in schedule(seed, 10.0, nodes)
                   if a.action == "kill" and a.target != "coordinator"}
        assert targets <= set(range(1, nodes + 1)) and nodes in targets, (nodes, targets)


def test_a_kill_plan_names_members_1_to_n_and_leaves_one_alive():
    """kills_and_senders: a kill of node n (the last id) is in range, one of
    n + 1 is not; killing all but one is accepted, killing all is not."""
    assert faults.kills_and_senders(3, [(3, 1.0)], None) == [1, 2, 3]
    assert faults.kills_and_senders(3, [(1, 0.5), (3, 1.0)], [3, 1]) == [1, 3]
    for bad, why in (([(4, 1.0)], "no node 4 in 1..3"), ([(0, 1.0)], "no node 0 in 1..3"),
                     ([(1, 0.1), (2, 0.2), (3, 0.3)], "one node must survive")):
        try:
            faults.kills_and_senders(3, bad, None)
        except ValueError as e:
            assert why in str(e), (bad, e)
        else:
            raise AssertionError(f"{bad} accepted")
