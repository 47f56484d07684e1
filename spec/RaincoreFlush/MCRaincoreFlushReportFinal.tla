---------------------- MODULE MCRaincoreFlushReportFinal ----------------------
(* A variant of the Transport Manager's answer to a false suspicion, for   *)
(* the bounded models of MCRaincoreFlushLossy (model                       *)
(* LossySuspectReportFinal).  The implementation makes a report final for  *)
(* its frame (SuspectLeaves: the node leaves once an abort reaches it, and *)
(* takes other frames until then), which LossySuspectLeaves refutes.  Here *)
(* the report is final for the node: a sender that has reported a live     *)
(* node unreachable answers every later acknowledgement of that node with  *)
(* an abort, so the node takes no frame of its reporter after the report   *)
(* (a token, valid or stale, or a 911), and leaves instead.  reported[n]:  *)
(* the live nodes n's Transport Manager has reported.  Only a node some    *)
(* sender reported leaves (LeaveSuspected), at any point after the report. *)
(* The variable is this module's, so RaincoreFlush's states and the Python *)
(* mirror stay as they are.                                                *)
EXTENDS MCRaincoreFlushLossy

VARIABLE reported

allVars == <<vars, reported>>

\* n's Transport Manager reports d: recorded while d is alive (a false report).
Report(n, d) == reported' = IF status[d] = "Up" THEN [reported EXCEPT ![n] = @ \cup {d}] ELSE reported
\* d may still take a frame sent by s.
Takes(d, s) == d \notin reported[s]

InitF == Init /\ reported = [n \in Node |-> {}]

NextF ==
    \/ \E n \in Node : \E m \in tokenMsgs : Takes(n, m.cur) /\ TokenReceived(n, m) /\ UNCHANGED reported
    \/ \E n \in Node : \E m \in msgs911 : Takes(n, m.cur) /\ 911Received(n, m) /\ UNCHANGED reported
    \/ \E n \in Node : \E m \in tokenMsgs \cup {lastToken[n]} : TokenDeliveryFailure(n, m) /\ Report(n, m.dest)
    \/ \E n \in Node : \E m \in msgs911 : 911DeliveryFailure(n, m) /\ Report(n, m.dest)
    \/ \E p \in Members : (\E s \in Node : p \in reported[s]) /\ LeaveSuspected(p) /\ UNCHANGED reported
    \/ /\ \/ \E n \in Node : EatingTimeout(n)
          \/ \E n \in Node : HungryTimeout(n)
          \/ \E n \in Node : StarvingTimeout(n)
          \/ \E p \in Members : Multicast(p)
          \/ \E p, q \in Members : Receive(p, q)
          \/ \E c \in Members : StartFlush(c)
          \/ \E p \in Members : FlushOk(p)
          \/ \E p \in Members : FlushCompleted(p)
          \/ \E c \in Members : SendView(c)
          \/ \E c \in Members : StopFlush(c)
          \/ \E p \in Members : Crash(p)
          \/ \E n \in Node : Join(n)
          \/ \E m \in tokenMsgs : TokenLoss(m)
       /\ UNCHANGED reported

SpecF == InitF /\ [][NextF]_allVars
=============================================================================
