------------------- MODULE MCRaincoreSequencerFlushLossy -------------------
(* Bounded models of RaincoreSequencerFlush with LossyRing = TRUE, bounded *)
(* as MCRaincoreFlushLossy: the token's sequence number grows by one per   *)
(* hop, so Bounds cuts every behaviour once a sequence number (of a token  *)
(* in transit, a held token or a lastToken copy) would exceed MaxTokenSeq  *)
(* (MaxSeq is SEQUENCER's here), or once more than Max911 distinct 911     *)
(* messages would be in transit at once.  Models and expected results:    *)
(* manifest.json.                                                          *)
EXTENDS RaincoreSequencerFlush

CONSTANTS MaxTokenSeq, Max911

Bounds ==
    /\ \A m \in tokenMsgs : m.seq <= MaxTokenSeq
    /\ \A n \in Node : token[n].seq <= MaxTokenSeq /\ lastToken[n].seq <= MaxTokenSeq
    /\ Cardinality(msgs911) <= Max911
=============================================================================
