------------------------- MODULE MCRaincoreFlushLossy -------------------------
(* Bounded models of RaincoreFlush with LossyRing = TRUE.  The token's     *)
(* sequence number grows by one per hop, so, as in MCRaincore, Bounds cuts *)
(* every behaviour once a sequence number (of a token in transit, a held   *)
(* token or a lastToken copy) would exceed MaxSeq, or once more than       *)
(* Max911 distinct 911 messages would be in transit at once.  The models   *)
(* and their expected results are in manifest.json.                        *)
EXTENDS RaincoreFlush

CONSTANTS MaxSeq, Max911

Bounds ==
    /\ \A m \in tokenMsgs : m.seq <= MaxSeq
    /\ \A n \in Node : token[n].seq <= MaxSeq /\ lastToken[n].seq <= MaxSeq
    /\ Cardinality(msgs911) <= Max911
=============================================================================
