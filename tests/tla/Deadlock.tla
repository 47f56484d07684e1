---- MODULE Deadlock ----
\* Counts up to Limit and then has no enabled action: a deadlock.
EXTENDS Naturals
CONSTANT Limit
VARIABLE x
Init == x = 0
Step == x < Limit /\ x' = x + 1
Spec == Init /\ [][Step]_x
====
