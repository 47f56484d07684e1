---- MODULE Dot ----
\* A small spec whose whole state graph the dot-dump test rebuilds in Python.
\* It exercises what the reader must get right: two actions with the same
\* successor (one edge, two labels), self-loops, a CONSTRAINT that drops
\* successors, strings with escapes, records, functions over model values,
\* negative integers and sets.
EXTENDS Integers, Sequences
CONSTANTS Procs, Max
VARIABLES n, owner, notes, tags
vars == <<n, owner, notes, tags>>

Init ==
    /\ n = 0
    /\ owner = [p \in Procs |-> "none"]
    /\ notes = <<>>
    /\ tags = {}

Up == n < Max /\ n' = n + 1 /\ UNCHANGED <<owner, notes, tags>>

\* Same successors as Up.
Skip == n < Max /\ n' = n + 1 /\ UNCHANGED <<owner, notes, tags>>

\* Unbounded below; the CONSTRAINT cuts it.
Down == n' = n - 1 /\ UNCHANGED <<owner, notes, tags>>

Take(p) ==
    /\ owner[p] = "none"
    /\ owner' = [owner EXCEPT ![p] = "say \"hi\" \\ bye"]
    /\ notes' = Append(notes, [who |-> p, at |-> n])
    /\ UNCHANGED <<n, tags>>

\* A self-loop once p is tagged.
Tag(p) == tags' = tags \cup {p} /\ UNCHANGED <<n, owner, notes>>

Next == Up \/ Skip \/ Down \/ \E p \in Procs : Take(p) \/ Tag(p)

Bound == n >= -1
====
