------------------------------ MODULE MCStable ------------------------------
(***************************************************************************)
(* Bounded models of Stable; the constants are in the MCStable_*.cfg files *)
(* and the models, with their expected results, in manifest.json.          *)
(*                                                                         *)
(* Seqnos are bounded by MaxSeq and members by N, so every variable ranges *)
(* over a finite set and the 2-member models need no constraint.  With 3   *)
(* members the messages in flight on 6 links make the full space too large *)
(* for a minute of TLC (measured: N = 3, NInit = 2, one sender, MaxSeq = 1 *)
(* was still growing past 1.7 million distinct states after 150 s), so     *)
(* those models bound the number of messages in flight at any one time:   *)
(* a state with more than MaxInFlight messages in flight is not explored   *)
(* (InFlightBound, listed as CONSTRAINT in their cfg).  MaxInFlight = 0    *)
(* means no bound; the models that check liveness use no bound, because   *)
(* TLC's liveness checking is not complete under a constraint.             *)
(***************************************************************************)
EXTENDS Stable

CONSTANT MaxInFlight   \* 0: no bound

ASSUME MaxInFlight \in Nat

InFlightBound == MaxInFlight = 0 \/ Cardinality(net) <= MaxInFlight
=============================================================================
