----------------------- MODULE MCSequencerFlushRefines -----------------------
(***************************************************************************)
(* Refinement: SEQUENCER over FLUSH runs Flush.tla's flush.  TLC checks    *)
(* that every behaviour of SequencerFlush is one of Flush.tla (its Spec,   *)
(* a PROPERTY in the MCSequencerFlushRefines_*.cfg models) under this      *)
(* mapping of Flush's variables:                                           *)
(*   - views, vid, crashed, phase, blocked, flushInit, flushOks: ours      *)
(*     (a view as its set of members); no joins or leaves;                 *)
(*   - FLUSH's own application traffic is none: SEQUENCER's FORWARD and    *)
(*     DATA travel outside it, so sent, delivered and the digests in       *)
(*     FLUSH_COMPLETED, VIEW and completed map to Flush's empty ones (the  *)
(*     digests' content is SEQUENCER's, checked by VirtualSynchrony);      *)
(*   - chan: the flush messages and VIEWs.  SequencerFlush's eager         *)
(*     discarding (a crashed member's flush messages at the crash, the     *)
(*     messages of older views at an install) drops only what a step of    *)
(*     Flush.tla drops too: TLC checks that as well.                       *)
(* So the flush's control (phases, latches, initiators, the views and the  *)
(* messages that carry them) is Flush.tla's.  SEQUENCER's own refinement   *)
(* does not hold: see README.md, "Refinement".                             *)
(***************************************************************************)
EXTENDS MCSequencerFlush

\* Flush.tla's channels: ours without SEQUENCER's messages, and the digests
\* emptied.
FlushMsg(x) == x.type \notin {"FORWARD", "DATA"}
Emptied(x)  == IF x.type \in {"FLUSH_COMPLETED", "VIEW"} THEN [x EXCEPT !.digest = {}] ELSE x
FlushChan ==
    [e \in Members \X Members |->
        LET s == SelectSeq(chan[e], FlushMsg) IN [i \in 1..Len(s) |-> Emptied(s[i])]]

Abstract == INSTANCE Flush WITH
    NInit <- N, MaxMsgs <- 0, MaxLeaves <- 0, ReconcileDigests <- TRUE, FlushOkRound <- TRUE,
    views <- [i \in DOMAIN views |-> Range(views[i])],
    joining <- {}, leaving <- {}, sent <- <<>>,
    delivered <- [m \in Members |-> {}], digest <- [m \in Members |-> {}],
    chan <- FlushChan,
    completed <- [c \in Members |-> {<<r[1], {}>> : r \in completed[c]}]

FlushRefined == Abstract!Spec
=============================================================================
