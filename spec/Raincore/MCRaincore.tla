----------------------------- MODULE MCRaincore -----------------------------
(***************************************************************************)
(* Bounded models of Raincore.  The token's sequence number grows by one   *)
(* per hop, so the state space is infinite; Bounds cuts every behaviour    *)
(* once a sequence number (of a token in transit, a held token or a        *)
(* lastToken copy) would exceed MaxSeq, once more than Max911 distinct    *)
(* 911 messages would be in transit at once, or once more than MaxDown     *)
(* nodes would be down at once.  Nothing else is bounded: nodes may crash, *)
(* recover, join, and the token may be lost, any number of times.          *)
(***************************************************************************)
EXTENDS Raincore

CONSTANTS MaxSeq, Max911, MaxDown

Bounds ==
    /\ \A m \in tokenMsgs : m.seq <= MaxSeq
    /\ \A n \in Node : token[n].seq <= MaxSeq /\ lastToken[n].seq <= MaxSeq
    /\ Cardinality(msgs911) <= Max911
    /\ Cardinality({n \in Node : status[n] = "Down"}) <= MaxDown
=============================================================================
