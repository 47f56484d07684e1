--------------------------- MODULE MCRaincoreFlush ---------------------------
(* Bounded models of RaincoreFlush with LossyRing = FALSE (the lossy ring  *)
(* needs MCRaincoreFlushLossy's Bounds).  The state space is finite        *)
(* without a CONSTRAINT: the token carries no sequence number, MaxMsgs     *)
(* bounds the multicasts, MaxCrashes and the joiners bound the ring's (and *)
(* so FLUSH's) views.  The models and their expected results are in        *)
(* manifest.json.                                                          *)
EXTENDS RaincoreFlush
=============================================================================
