------------------------ MODULE MCRaincoreFlushRefines ------------------------
(***************************************************************************)
(* Refinement: the ring of RaincoreFlush under LossyRing is Raincore.tla's *)
(* (its fixed variant, as instantiated in RaincoreFlush.tla: Ring).  TLC   *)
(* checks that every step of RaincoreFlush is a step of Raincore.tla's     *)
(* Next on the ring's variables, or leaves them unchanged (a FLUSH step),  *)
(* as a PROPERTY in the MCRaincoreFlushRefines_*.cfg models.  The mapping *)
(* is the identity: the ring's variables are Raincore's, and no node      *)
(* recovers.  Two things are not Raincore.tla's, so they are outside the   *)
(* check (README.md, "Refinement"): the initial state, which is Raincore's *)
(* steady ring one step later (the founder has taken the token), and      *)
(* LateFailure, a delivery failure reported for a token its receiver took  *)
(* (LateFailures = FALSE here).                                            *)
(***************************************************************************)
EXTENDS MCRaincoreFlushLossy

RaincoreSteps == [][Ring!Next]_(Ring!vars)
=============================================================================
