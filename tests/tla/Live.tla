---- MODULE Live ----
\* A light that toggles forever under weak fairness, and two liveness
\* properties it does not have: one refuted by a cycle (a lasso going back
\* to an earlier state), one by stuttering when fairness is left out.
EXTENDS Naturals
VARIABLE light
Init == light = "off"
Toggle == light' = IF light = "off" THEN "on" ELSE "off"
Spec == Init /\ [][Toggle]_light
FairSpec == Spec /\ WF_light(Toggle)
StaysOn == <>[](light = "on")
TurnsOn == <>(light = "on")
====
