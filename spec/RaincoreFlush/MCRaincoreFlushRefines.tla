------------------------ MODULE MCRaincoreFlushRefines ------------------------
(***************************************************************************)
(* Refinement, as PROPERTIES in the MCRaincoreFlushRefines_*.cfg models.   *)
(*                                                                         *)
(* FlushRefined: RaincoreFlush implies Flush.tla's Spec (F, as             *)
(* instantiated in RaincoreFlush.tla: the dead nodes are its crashed, no   *)
(* joins or leaves), the VIEW's ring number left out.  It holds where      *)
(* crashes are the only view changes (models RefinesCoordCrash,            *)
(* RefinesTokenLoss, RefinesHolderCrash2; CoordCrash2's two crashes too);  *)
(* with a joiner it does not (README.md, "Refinement"): a joiner enters    *)
(* the view the ring commits, where Flush.tla's coordinator takes its JOIN *)
(* into the next view it makes.                                            *)
(*                                                                         *)
(* RaincoreSteps: under LossyRing the ring of RaincoreFlush is             *)
(* Raincore.tla's (its fixed variant, as RaincoreFlush.tla instantiates it *)
(* as Ring): every step of RaincoreFlush is a step of Raincore.tla's Next  *)
(* on the ring's variables, a crash that keeps the crashed node's messages *)
(* in transit (WireCrash), or leaves them unchanged (a FLUSH step); models *)
(* RefinesTokenLoss and RefinesHolderCrash2.  The mapping is the identity: *)
(* the ring's variables are Raincore's, and no node recovers.  Three       *)
(* things are not Raincore.tla's (README.md, "Refinement"): the initial    *)
(* state, Raincore's steady ring one step later (the founder has taken the *)
(* token); RingCrash, Raincore's Crash except that what the node sent      *)
(* stays in transit (WireCrash, allowed by name); and LateFailure, a       *)
(* delivery failure reported for a token its receiver took (LateFailures = *)
(* FALSE here).                                                            *)
(***************************************************************************)
EXTENDS MCRaincoreFlushLossy

\* Raincore.tla's Crash(n) on every ring variable but the messages in
\* transit, which RingCrash keeps.
WireCrash == \E n \in Node :
    /\ status[n] = "Up"
    /\ status' = [status EXCEPT ![n] = "Down"]
    /\ viewState' = [viewState EXCEPT ![n] = "Chaos"]
    /\ tokenState' = [tokenState EXCEPT ![n] = "Starving"]
    /\ token' = [token EXCEPT ![n] = NoToken]
    /\ UNCHANGED <<globalView, lastToken, localView, newNodes, tokenMsgs, msgs911>>

RaincoreSteps == [][Ring!Next \/ WireCrash]_(Ring!vars)

\* Flush.tla's channels: ours, a VIEW without the ring's number.
Plain(x) == IF x.type = "VIEW" THEN [type |-> "VIEW", view |-> x.view, digest |-> x.digest] ELSE x
FlushChan == [e \in Members \X Members |-> [i \in DOMAIN chan[e] |-> Plain(chan[e][i])]]
Abstract == INSTANCE Flush WITH
    MaxLeaves <- 0, ReconcileDigests <- TRUE, FlushOkRound <- TRUE, crashed <- Dead, joining <- {}, leaving <- {},
    chan <- FlushChan

FlushRefined == Abstract!Spec
=============================================================================
