---- MODULE RuntimeError ----
\* Applies a function outside its domain in the second step.
EXTENDS Naturals
VARIABLE x
f == [i \in 0..1 |-> i * 10]
Init == x = 0
Next == x' = f[x + 1]
====
