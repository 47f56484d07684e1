-------------------- MODULE TraceRaincoreSequencerFlush --------------------
(***************************************************************************)
(* Trace validation of SEQUENCER over FLUSH over the Raincore ring         *)
(* (docs/tracevalidation.md): TLC checks that some behaviour of            *)
(* RaincoreSequencerFlush.tla produces the logged trace of the three-layer *)
(* stack.  conformance/replay/raincoresequencerflush.py tla_log writes Log with   *)
(* the replay's own pre-pass: a SEQUENCER or FLUSH entry is a composed     *)
(* step, as TraceSequencerFlush.tla reads it (name the composed action,    *)
(* params.src the channel it takes from, params.kind the join, params.rd   *)
(* and params.mc the joined record's message; state fvid/svid, phase,      *)
(* blocked, flushInit, flushOks, digest, completed, flog, sent, fwd, recv, *)
(* delivered); a ring entry is one ring record, as TraceRaincoreFlush.tla  *)
(* reads it (a TOKEN on nodelist, cur, dest, gvn; a 911 on orig, cur,      *)
(* dest; state status, viewState, globalView, localView, newNodes, token;  *)
(* a Crash on status alone; under the header's LossyRing = TRUE,          *)
(* Raincore's own ring, as that module says).                              *)
(*                                                                         *)
(* The predicates are those two modules', instantiated (TSF, TRF) with    *)
(* the substitutions RaincoreSequencerFlush.tla gives its parts SF and RF: *)
(* TraceSequencerFlush.tla's steps and TraceRaincoreFlush.tla's ring      *)
(* steps take the action they check as an argument: here this spec's.     *)
(* What the composition adds: a VIEW's ring number, the compare of a       *)
(* crash's ring state, and the log's actions, variables and diagnostics.   *)
(* What is compared is what the replay                                     *)
(* (conformance/replay/raincoresequencerflush.py) compares.  Constants from the   *)
(* header, Crashable = 1..N, Senders = 1..N; no other bound.  Acceptance:  *)
(* TLC's search depth is Len(Log) + 1.                                     *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC, TraceLog

CONSTANTS N, NInit, Founder, MaxSeq, Senders, MaxCrashes, Crashable, ResendAlways, ResentFirst,
          LossyRing, TimelyTimeouts, LateFailures, NewerViewsOnly, FalseSuspicion, ShunSuspected, SuspectLeaves, ViewUnderToken

VARIABLES views, viewRing, vid, sent, fwd, recv, delivered, chan, log, closed,
          phase, blocked, flushInit, flushOks, completed,
          status, viewState, globalView, localView, newNodes, token, tokenMsgs, msgs911,
          tokenState, lastToken, l

R == INSTANCE RaincoreSequencerFlush

\* The trace predicates of the parts, on our variables as the parts see them.
TSF == INSTANCE TraceSequencerFlush WITH
         UniformDelivery <- FALSE, crashed <- R!Dead, ndel <- [m \in R!Members |-> 0]
TRF == INSTANCE TraceRaincoreFlush WITH
         MaxMsgs <- MaxSeq * Cardinality(Senders),
         views <- [i \in DOMAIN views |-> R!Range(views[i])],
         digest <- [m \in R!Members |-> IF phase[m] = "Completed" THEN R!Range(log[m]) ELSE {}]

traceVars == <<views, viewRing, vid, sent, fwd, recv, delivered, chan, log, closed,
               phase, blocked, flushInit, flushOks, completed,
               status, viewState, globalView, localView, newNodes, token, tokenMsgs, msgs911,
               tokenState, lastToken>>

TraceInit == R!Init /\ l = 1

Rec == Log[l]
P == Rec.nid

-----------------------------------------------------------------------------
(* SEQUENCER over FLUSH: TraceSequencerFlush.tla's steps on our actions;   *)
(* a VIEW also carries its ring number.                                    *)

SendIfLogged == TSF!SendStep(R!Send)
RecvForwardIfLogged == TSF!RecvForwardStep(R!RecvForward)
RecvDataIfLogged == TSF!RecvDataStep(R!RecvData)
DiscardIfLogged == TSF!DiscardStep(R!Discard, UNCHANGED traceVars)
StartFlushIfLogged == TSF!Single("StartFlush", R!StartFlush)
FlushOkIfLogged == TSF!Single("FlushOk", R!FlushOk)
FlushCompletedIfLogged == TSF!Single("FlushCompleted", R!FlushCompleted)
StopFlushIfLogged == TSF!Single("StopFlush", R!StopFlush)
BlockIfLogged == TSF!Pair("Block", R!Block)
RestartFlushIfLogged == TSF!Pair("RestartFlush", R!RestartFlush)
ReceiveFlushOkIfLogged == TSF!Pair("ReceiveFlushOk", R!ReceiveFlushOk)
ReceiveFlushCompletedIfLogged == TSF!Pair("ReceiveFlushCompleted", R!ReceiveFlushCompleted)
InstallViewIfLogged == TSF!Pair("InstallView", R!InstallView)
UnblockIfLogged == TSF!Pair("Unblock", R!Unblock)
SendViewIfLogged ==
    /\ TSF!SendViewStep(R!SendView)
    /\ TSF!Logged(Rec.msg, "type") /\ TSF!Logged(Rec.msg, "ring") => Rec.msg.ring = viewRing'[Len(viewRing')]

-----------------------------------------------------------------------------
(* The ring: TraceRaincoreFlush.tla's steps on our actions.               *)

TokenReceivedIfLogged == TRF!TokenStep("TokenReceived", R!TokenReceived, tokenMsgs)
911ReceivedIfLogged == TRF!Step911("911Received", R!911Received)
TokenDeliveryFailureIfLogged == TRF!TokenStep("TokenDeliveryFailure", R!TokenDeliveryFailure, tokenMsgs \cup {lastToken[P]})
911DeliveryFailureIfLogged == TRF!Step911("911DeliveryFailure", R!911DeliveryFailure)
EatingTimeoutIfLogged == TRF!RingStep("EatingTimeout", R!EatingTimeout)
JoinIfLogged == TRF!RingStep("Join", R!Join)
HungryTimeoutIfLogged == TRF!RingStep("HungryTimeout", R!HungryTimeout)
StarvingTimeoutIfLogged == TRF!RingStep("StarvingTimeout", R!StarvingTimeout)
TokenLossIfLogged == TRF!TokenLossStep(R!TokenLoss)

\* A crash, or a node leaving as suspected: SequencerFlush's (every cut of
\* its channels), compared on the ring as TraceRaincoreFlush.tla compares one.
CrashIfLogged == TSF!CrashStep("Crash", R!Crash) /\ TRF!CrashStateMatches(P)
LeaveSuspectedIfLogged == TSF!CrashStep("LeaveSuspected", R!LeaveSuspected) /\ TRF!CrashStateMatches(P)

-----------------------------------------------------------------------------
TraceNext ==
    /\ l <= Len(Log)
    /\ P \in R!Members \/ Rec.name = "TokenLoss"
    /\ \/ SendIfLogged
       \/ RecvForwardIfLogged
       \/ RecvDataIfLogged
       \/ DiscardIfLogged
       \/ StartFlushIfLogged
       \/ BlockIfLogged
       \/ RestartFlushIfLogged
       \/ FlushOkIfLogged
       \/ ReceiveFlushOkIfLogged
       \/ FlushCompletedIfLogged
       \/ ReceiveFlushCompletedIfLogged
       \/ SendViewIfLogged
       \/ InstallViewIfLogged
       \/ StopFlushIfLogged
       \/ UnblockIfLogged
       \/ TokenReceivedIfLogged
       \/ 911ReceivedIfLogged
       \/ TokenDeliveryFailureIfLogged
       \/ 911DeliveryFailureIfLogged
       \/ EatingTimeoutIfLogged
       \/ JoinIfLogged
       \/ HungryTimeoutIfLogged
       \/ StarvingTimeoutIfLogged
       \/ TokenLossIfLogged
       \/ CrashIfLogged
       \/ LeaveSuspectedIfLogged
    /\ l' = l + 1

TraceSpec == TraceInit /\ [][TraceNext]_<<traceVars, l>>

\* Two states that agree on these match the same rest of the log: `delivered`
\* and `closed` are left out, history the spec only appends to (no action reads
\* them but for closed's Len(delivered)) and StateMatches compares only what a
\* step appends.  Fingerprinting them made TLC's step k cost O(k).
TraceView == <<views, viewRing, vid, sent, fwd, recv, chan, log,
               phase, blocked, flushInit, flushOks, completed,
               status, viewState, globalView, localView, newNodes, token, tokenMsgs, msgs911,
               tokenState, lastToken, l>>

\* Violated exactly when the whole log was consumed (tlctrace.py reads the
\* same from TLC's search depth, without printing the behaviour).
TraceMatched == l <= Len(Log)

-----------------------------------------------------------------------------
(* Diagnostics (guarded: TLC evaluates constant definitions at start-up). *)

DiagNode == IF DiagAt \in 1..Len(Log) /\ Log[DiagAt].nid \in R!Members THEN Log[DiagAt].nid ELSE 1

DiagVars == [node |-> DiagNode, vid |-> vid[DiagNode], views |-> views,
             sent |-> sent[DiagNode], fwd |-> fwd[DiagNode], recv |-> recv[DiagNode],
             log |-> log[DiagNode], phase |-> phase[DiagNode], blocked |-> blocked[DiagNode],
             flushInit |-> flushInit[DiagNode], flushOks |-> flushOks[DiagNode],
             completed |-> completed[DiagNode], status |-> status,
             viewState |-> viewState[DiagNode], globalView |-> globalView[DiagNode],
             localView |-> localView[DiagNode], newNodes |-> newNodes[DiagNode],
             token |-> token[DiagNode], tokenState |-> tokenState[DiagNode],
             lastToken |-> lastToken[DiagNode],
             tokens |-> {m \in tokenMsgs : DiagNode \in {m.cur, m.dest}},
             msgs911 |-> {m \in msgs911 : DiagNode \in {m.orig, m.cur, m.dest}},
             into |-> [q \in R!Members |-> chan[<<q, DiagNode>>]]]

DiagEnabled ==
    TSF!One("Send", R!Send) \cup TSF!Two("RecvForward", R!RecvForward) \cup TSF!Two("RecvData", R!RecvData)
    \cup TSF!Two("Discard", R!Discard) \cup TSF!One("StartFlush", R!StartFlush) \cup TSF!Two("Block", R!Block)
    \cup TSF!Two("RestartFlush", R!RestartFlush) \cup TSF!One("FlushOk", R!FlushOk)
    \cup TSF!Two("ReceiveFlushOk", R!ReceiveFlushOk) \cup TSF!One("FlushCompleted", R!FlushCompleted)
    \cup TSF!Two("ReceiveFlushCompleted", R!ReceiveFlushCompleted) \cup TSF!One("SendView", R!SendView)
    \cup TSF!Two("InstallView", R!InstallView) \cup TSF!One("StopFlush", R!StopFlush)
    \cup TSF!Two("Unblock", R!Unblock)
    \cup TRF!Named("TokenReceived", LAMBDA n : ENABLED (\E m \in tokenMsgs : R!TokenReceived(n, m)))
    \cup TRF!Named("911Received", LAMBDA n : ENABLED (\E m \in msgs911 : R!911Received(n, m)))
    \cup TRF!Named("TokenDeliveryFailure",
               LAMBDA n : ENABLED (\E m \in tokenMsgs \cup {lastToken[n]} : R!TokenDeliveryFailure(n, m)))
    \cup TRF!Named("911DeliveryFailure",
               LAMBDA n : ENABLED (\E m \in msgs911 : R!911DeliveryFailure(n, m)))
    \cup TRF!Named("EatingTimeout", LAMBDA n : ENABLED R!EatingTimeout(n))
    \cup TRF!Named("Join", LAMBDA n : ENABLED R!Join(n))
    \cup TRF!Named("HungryTimeout", LAMBDA n : ENABLED R!HungryTimeout(n))
    \cup TRF!Named("StarvingTimeout", LAMBDA n : ENABLED R!StarvingTimeout(n))
    \cup {"Crash(" \o TSF!Str(p) \o ")" : p \in {p \in R!Members : ENABLED R!Crash(p, {})}}
    \cup {"LeaveSuspected(" \o TSF!Str(p) \o ")" : p \in {p \in R!Members : ENABLED R!LeaveSuspected(p, {})}}

TraceDiagnostic ==
    l = DiagAt => /\ PrintT(<<"groupcheck-diag", DiagVars>>)
                  /\ PrintT(<<"groupcheck-enabled", DiagEnabled>>)
=============================================================================
