------------------- MODULE MCRaincoreSequencerFlushRefines -------------------
(***************************************************************************)
(* Refinement, as PROPERTYs in the MCRaincoreSequencerFlushRefines_*.cfg   *)
(* models (Refines): RaincoreSequencerFlush implies both compositions it   *)
(* is made of.                                                             *)
(*                                                                         *)
(* SequencerFlushRefined: SequencerFlush.tla's Spec (SF, as instantiated   *)
(* in RaincoreSequencerFlush.tla: the dead nodes are its crashed), the     *)
(* VIEW's ring number left out.  Where each view change follows one crash  *)
(* and no node joins, SEQUENCER over FLUSH over the ring behaves as over   *)
(* the perfect failure detector.                                           *)
(*                                                                         *)
(* RaincoreFlushRefined: RaincoreFlush.tla's Spec, its ring lossy or not  *)
(* as ours, under this mapping of its variables:                           *)
(*   - the ring's variables: ours;                                         *)
(*   - views (as sets of members), viewRing, vid, phase, blocked,          *)
(*     flushInit, flushOks: ours;                                          *)
(*   - FLUSH's own application traffic is none: SEQUENCER's FORWARD and    *)
(*     DATA travel outside it, so sent, delivered and the digests in       *)
(*     FLUSH_COMPLETED, VIEW, completed and digest map to empty ones;      *)
(*   - chan: the flush messages and VIEWs (SequencerFlush's eager          *)
(*     discarding at an install drops none that RaincoreFlush would take). *)
(***************************************************************************)
EXTENDS MCRaincoreSequencerFlush

\* RaincoreFlush.tla's channels: ours without SEQUENCER's messages, and the
\* digests emptied.
FlushMsg(x) == x.type \notin {"FORWARD", "DATA"}
Emptied(x)  == IF x.type \in {"FLUSH_COMPLETED", "VIEW"} THEN [x EXCEPT !.digest = {}] ELSE x
FlushChan ==
    [e \in Members \X Members |->
        LET s == SelectSeq(chan[e], FlushMsg) IN [i \in 1..Len(s) |-> Emptied(s[i])]]

Abstract == INSTANCE RaincoreFlush WITH
    MaxMsgs <- 0,
    views <- [i \in DOMAIN views |-> Range(views[i])],
    sent <- <<>>, delivered <- [m \in Members |-> {}], digest <- [m \in Members |-> {}],
    chan <- FlushChan,
    completed <- [c \in Members |-> {<<r[1], {}>> : r \in completed[c]}]

RaincoreFlushRefined == Abstract!Spec

\* SequencerFlush.tla's channels: ours, a VIEW without the ring's number.
Plain(x) == IF x.type = "VIEW" THEN [type |-> "VIEW", view |-> x.view, digest |-> x.digest] ELSE x
PlainChan == [e \in Members \X Members |-> [i \in DOMAIN chan[e] |-> Plain(chan[e][i])]]
OverCrashes == INSTANCE SequencerFlush WITH
    UniformDelivery <- FALSE, crashed <- Dead, ndel <- [m \in Members |-> 0], chan <- PlainChan

SequencerFlushRefined == OverCrashes!Spec
=============================================================================
