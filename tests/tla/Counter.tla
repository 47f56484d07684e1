---- MODULE Counter ----
\* A bounded counter shared by two processes; used by the TLC runner tests.
EXTENDS Naturals, Sequences
CONSTANTS N, Procs
VARIABLES x, log, last
vars == <<x, log, last>>

Init == x = 0 /\ log = <<>> /\ last = [who |-> "none", n |-> 0]

Inc(p) ==
    /\ x < N
    /\ x' = x + 1
    /\ log' = Append(log, p)
    /\ last' = [who |-> "inc", n |-> x + 1]

Reset ==
    /\ x = N
    /\ x' = 0
    /\ log' = <<>>
    /\ last' = [last EXCEPT !.who = "reset"]

Next == (\E p \in Procs : Inc(p)) \/ Reset
Spec == Init /\ [][Next]_vars

TypeOK == x \in 0..N
Small == x < 2
Positive == x > 0  \* false initially
====
