-------------------- MODULE TraceRaincoreSequencerFlush --------------------
(***************************************************************************)
(* Trace validation of SEQUENCER over FLUSH over the Raincore ring         *)
(* (docs/tracevalidation.md): TLC checks that some behaviour of            *)
(* RaincoreSequencerFlush.tla produces the logged trace of the three-layer *)
(* stack.  conformance/raincoresequencerflush.py tla_log writes Log with   *)
(* the replay's own pre-pass: a SEQUENCER or FLUSH entry is a composed     *)
(* step, as TraceSequencerFlush.tla reads it (name the composed action,    *)
(* params.src the channel it takes from, params.kind the join, params.rd   *)
(* and params.mc the joined record's message; state fvid/svid, phase,      *)
(* blocked, flushInit, flushOks, digest, completed, flog, sent, fwd, recv, *)
(* delivered); a ring entry is one ring record, as TraceRaincoreFlush.tla  *)
(* reads it without LossyRing (a TOKEN on nodelist, cur, dest, gvn; a 911  *)
(* on orig, cur, dest; state status, viewState, globalView, localView,     *)
(* newNodes, token; a Crash on status alone).  The predicates are those    *)
(* two modules', on this spec's actions (a module's predicates cannot be   *)
(* instantiated over another spec); what they compare is what the replay   *)
(* (conformance/raincoresequencerflush.py) compares.  A logged state is a  *)
(* complete delta of its layer.  A ring action outside the abstraction     *)
(* (HungryTimeout, StarvingTimeout, Recover, TokenLoss, Initialization)    *)
(* matches no behaviour, as in the replay; with the header's LossyRing =   *)
(* TRUE (Raincore's own ring) the timeouts and TokenLoss are steps, as in  *)
(* TraceRaincoreFlush.tla: messages and tokens compared whole, a ring      *)
(* state also on tokenState and lastToken, a Crash on the whole ring, a    *)
(* TokenDeliveryFailure also of the token its node sent last (LateFailure) *)
(* and a TokenLoss logged without a node.  Constants from the header,      *)
(* Crashable = 1..N, Senders = 1..N; no other bound.  Acceptance: TLC's    *)
(* search depth is Len(Log) + 1.                                           *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC, TraceLog

CONSTANTS N, NInit, Founder, MaxSeq, Senders, MaxCrashes, Crashable, ResendAlways, ResentFirst,
          LossyRing, TimelyTimeouts, LateFailures, NewerViewsOnly, FalseSuspicion, ShunSuspected, SuspectLeaves, ViewUnderToken

VARIABLES views, viewRing, vid, sent, fwd, recv, delivered, chan, log, closed,
          phase, blocked, flushInit, flushOks, completed,
          status, viewState, globalView, localView, newNodes, token, tokenMsgs, msgs911,
          tokenState, lastToken, l

R == INSTANCE RaincoreSequencerFlush

traceVars == <<views, viewRing, vid, sent, fwd, recv, delivered, chan, log, closed,
               phase, blocked, flushInit, flushOks, completed,
               status, viewState, globalView, localView, newNodes, token, tokenMsgs, msgs911,
               tokenState, lastToken>>

TraceInit == R!Init /\ l = 1

Rec == Log[l]
Logged(r, k) == k \in DOMAIN r
P == Rec.nid
Src == Rec.params.src
Kind == Rec.params.kind
Range(f) == {f[i] : i \in DOMAIN f}

-----------------------------------------------------------------------------
(* SEQUENCER over FLUSH (TraceSequencerFlush.tla's predicates)             *)

\* The logged message is the head of the channel Src -> P.
HeadOk ==
    /\ Src \in R!Members
    /\ chan[<<Src, P>>] # <<>>
    /\ Logged(Rec.msg, "type") =>
         LET h == Head(chan[<<Src, P>>]) IN
           /\ h.type = Rec.msg.type
           /\ h.type \in {"FORWARD", "DATA"} => h.sender = Rec.msg.sender /\ h.seqno = Rec.msg.seqno
           /\ h.type # "FORWARD" /\ Logged(Rec.msg, "view") => h.view = Rec.msg.view
           /\ h.type \in {"FLUSH_COMPLETED", "VIEW"} => Range(h.digest) = Rec.msg.digest

\* Member m's logged variables against the step; one a logged state leaves
\* out (of those the header declares, Observed) is unchanged.
Digest(ph, lg) == IF ph = "Completed" THEN Range(lg) ELSE {}
StateMatches(m) ==
    LET S == Rec.state
        Same(k) == Rec.logged /\ k \in Observed /\ ~Logged(S, k) IN
    /\ IF Logged(S, "fvid") THEN vid'[m] = S.fvid ELSE Same("fvid") => vid'[m] = vid[m]
    /\ IF Logged(S, "svid") THEN vid'[m] = S.svid ELSE Same("svid") => vid'[m] = vid[m]
    /\ IF Logged(S, "phase") THEN phase'[m] = S.phase ELSE Same("phase") => phase'[m] = phase[m]
    /\ IF Logged(S, "blocked") THEN blocked'[m] = S.blocked ELSE Same("blocked") => blocked'[m] = blocked[m]
    /\ IF Logged(S, "flushInit") THEN flushInit'[m] = S.flushInit
       ELSE Same("flushInit") => flushInit'[m] = flushInit[m]
    /\ IF Logged(S, "flushOks") THEN flushOks'[m] = S.flushOks
       ELSE Same("flushOks") => flushOks'[m] = flushOks[m]
    /\ IF Logged(S, "completed") THEN {<<r[1], Range(r[2])>> : r \in completed'[m]} = S.completed
       ELSE Same("completed") => completed'[m] = completed[m]
    /\ IF Logged(S, "digest") THEN Digest(phase'[m], log'[m]) = S.digest
       ELSE Same("digest") => Digest(phase'[m], log'[m]) = Digest(phase[m], log[m])
    /\ LET n == Len(log[m])
           \* the additions to the log, Range(log'[m]) \ Range(log[m]) within a view;
           \* where the log grew at its end (every step of the spec), only its new tail
           \* is searched: the whole difference costs TLC a linear search per entry
           \* (quadratic over a long trace; 4x slower on an 11,300-event run)
           added == IF vid'[m] # vid[m] THEN Range(log'[m])
                    ELSE IF Len(log'[m]) >= n /\ SubSeq(log'[m], 1, n) = log[m]
                    THEN {e \in Range(SubSeq(log'[m], n + 1, Len(log'[m]))) : e \notin Range(log[m])}
                    ELSE Range(log'[m]) \ Range(log[m]) IN
         IF Logged(S, "flog") THEN added = S.flog ELSE Same("flog") => added = {}
    /\ IF Logged(S, "sent") THEN sent'[m] = S.sent ELSE Same("sent") => sent'[m] = sent[m]
    /\ IF Logged(S, "fwd") THEN fwd'[m] = S.fwd ELSE Same("fwd") => fwd'[m] = fwd[m]
    /\ IF Logged(S, "recv") THEN recv'[m] = S.recv ELSE Same("recv") => recv'[m] = recv[m]
    /\ IF Logged(S, "delivered") THEN SubSeq(delivered'[m], Len(delivered[m]) + 1, Len(delivered'[m])) = S.delivered
       ELSE Same("delivered") => delivered'[m] = delivered[m]

\* SEQUENCER's coordinator multicasts the DATA of its Send/RecvForward in
\* the same step, joined with its FLUSH Multicast.
IsCoord(m) == R!SF!IsCoord(m)
CoordRule ==
    /\ Kind \in {"send", "forward"} /\ Logged(Rec.msg, "type") => ~IsCoord(P)
    /\ Kind \in {"coord_send", "coord_forward"} =>
         IsCoord(P) /\ Rec.params.mc.type = "DATA" /\ Rec.params.mc.view = vid[P]

SendIfLogged ==
    /\ Rec.name = "Send"
    /\ R!Send(P)
    /\ Logged(Rec.msg, "type") =>
         /\ Rec.msg.type = IF IsCoord(P) THEN "DATA" ELSE "FORWARD"
         /\ Rec.msg.sender = P /\ Rec.msg.seqno = sent'[P]
    /\ CoordRule
    /\ StateMatches(P)

RecvForwardIfLogged ==
    /\ Rec.name = "RecvForward"
    /\ HeadOk
    /\ R!RecvForward(P, Src)
    /\ CoordRule
    /\ StateMatches(P)

RecvDataIfLogged ==
    /\ Rec.name = "RecvData"
    /\ HeadOk
    /\ R!RecvData(P, Src)
    /\ Logged(Rec.params, "rd") =>
         Head(chan[<<Src, P>>]).sender = Rec.params.rd[1] /\ Head(chan[<<Src, P>>]).seqno = Rec.params.rd[2]
    /\ StateMatches(P)

Single(name, A(_)) == Rec.name = name /\ A(P) /\ StateMatches(P)
Pair(name, A(_, _)) == Rec.name = name /\ HeadOk /\ A(P, Src) /\ StateMatches(P)

StartFlushIfLogged == Single("StartFlush", R!StartFlush)
FlushOkIfLogged == Single("FlushOk", R!FlushOk)
FlushCompletedIfLogged == Single("FlushCompleted", R!FlushCompleted)
StopFlushIfLogged == Single("StopFlush", R!StopFlush)
BlockIfLogged == Pair("Block", R!Block)
RestartFlushIfLogged == Pair("RestartFlush", R!RestartFlush)
ReceiveFlushOkIfLogged == Pair("ReceiveFlushOk", R!ReceiveFlushOk)
ReceiveFlushCompletedIfLogged == Pair("ReceiveFlushCompleted", R!ReceiveFlushCompleted)
InstallViewIfLogged == Pair("InstallView", R!InstallView)
UnblockIfLogged == Pair("Unblock", R!Unblock)

\* The VIEW carries the ring's committed view (sorted) and its ring number.
SendViewIfLogged ==
    /\ Rec.name = "SendView"
    /\ R!SendView(P)
    /\ Logged(Rec.msg, "type") =>
         /\ Rec.msg.type = "VIEW" /\ Rec.msg.view = vid[P]
         /\ Logged(Rec.msg, "members") /\ Range(Rec.msg.members) = Range(views'[Len(views')])
         /\ Logged(Rec.msg, "ring") => Rec.msg.ring = viewRing'[Len(viewRing')]
    /\ StateMatches(P)

\* A Discard of a message the spec no longer has (dropped at P's view
\* change): a stutter.
Dropped ==
    /\ Logged(Rec.msg, "type")
    /\ ~\E i \in DOMAIN chan[<<Src, P>>] :
          LET x == chan[<<Src, P>>][i] IN
            "view" \in DOMAIN x /\ Logged(Rec.msg, "view") /\ x.view = Rec.msg.view /\ x.type = Rec.msg.type
    /\ \/ (IF Logged(Rec.msg, "view") THEN Rec.msg.view ELSE 0) < vid[P]
       \/ Rec.msg.type \in R!SF!F!FlushTypes /\ status[Src] = "Down"

DiscardIfLogged ==
    /\ Rec.name = "Discard"
    /\ Src \in R!Members
    /\ \/ HeadOk /\ R!Discard(P, Src) /\ StateMatches(P)
       \/ ~HeadOk /\ Dropped /\ UNCHANGED traceVars

-----------------------------------------------------------------------------
(* The ring (TraceRaincoreFlush.tla's predicates)                          *)

\* The spec's token or 911 the logged message is: the fields the
\* abstraction keeps; under LossyRing every field (Raincore's).
LoggedToken ==
    IF LossyRing
      THEN [seq |-> Rec.msg.seq, nodelist |-> Rec.msg.nodelist, cur |-> Rec.msg.cur,
            dest |-> Rec.msg.dest, gvn |-> Rec.msg.gvn]
      ELSE [nodelist |-> Rec.msg.nodelist, cur |-> Rec.msg.cur, dest |-> Rec.msg.dest, gvn |-> Rec.msg.gvn]
Logged911 ==
    IF LossyRing
      THEN [orig |-> Rec.msg.orig, cur |-> Rec.msg.cur, dest |-> Rec.msg.dest,
            nodelist |-> Rec.msg.nodelist, seq |-> Rec.msg.seq, status |-> Rec.msg.status]
      ELSE [orig |-> Rec.msg.orig, cur |-> Rec.msg.cur, dest |-> Rec.msg.dest]
TokenIs(t, r) == r.nodelist = t.nodelist /\ r.cur = t.cur /\ r.dest = t.dest /\ r.gvn = t.gvn
                 /\ (LossyRing => r.seq = t.seq)

\* Node n's ring variables: those logged equal their post-state values,
\* the others are unchanged (a complete delta of the ring's layer).
RingVar(k, post, pre) ==
    IF Logged(Rec.state, k) THEN post = Rec.state[k] ELSE k \in Observed => post = pre
RingStateMatches(n) ==
    Rec.logged =>
      /\ RingVar("status", status'[n], status[n])
      /\ RingVar("viewState", viewState'[n], viewState[n])
      /\ RingVar("globalView", globalView'[n], globalView[n])
      /\ RingVar("localView", localView'[n], localView[n])
      /\ RingVar("newNodes", newNodes'[n], newNodes[n])
      /\ IF Logged(Rec.state, "token") THEN TokenIs(token'[n], Rec.state.token)
                                        ELSE "token" \in Observed => token'[n] = token[n]
      /\ LossyRing => RingVar("tokenState", tokenState'[n], tokenState[n])
      /\ LossyRing => IF Logged(Rec.state, "lastToken") THEN TokenIs(lastToken'[n], Rec.state.lastToken)
                                                        ELSE "lastToken" \in Observed => lastToken'[n] = lastToken[n]

TokenReceivedIfLogged ==
    /\ Rec.name = "TokenReceived"
    /\ Logged(Rec.msg, "type") /\ Rec.msg.type = "TOKEN"
    /\ LoggedToken \in tokenMsgs
    /\ R!TokenReceived(P, LoggedToken)
    /\ RingStateMatches(P)

911ReceivedIfLogged ==
    /\ Rec.name = "911Received"
    /\ Logged(Rec.msg, "type") /\ Rec.msg.type = "911"
    /\ Logged911 \in msgs911
    /\ R!911Received(P, Logged911)
    /\ RingStateMatches(P)

\* The token P sent came back undelivered: its destination is down, or
\* under FalseSuspicion slow (RaincoreFlush.tla's Unreachable).
TokenDeliveryFailureIfLogged ==
    /\ Rec.name = "TokenDeliveryFailure"
    /\ Logged(Rec.msg, "type") /\ Rec.msg.type = "TOKEN"
    /\ LoggedToken \in tokenMsgs \cup {lastToken[P]}     \* LossyRing: RaincoreFlush's LateFailure
    /\ R!TokenDeliveryFailure(P, LoggedToken)
    /\ RingStateMatches(P)

911DeliveryFailureIfLogged ==
    /\ Rec.name = "911DeliveryFailure"
    /\ Logged(Rec.msg, "type") /\ Rec.msg.type = "911"
    /\ Logged911 \in msgs911
    /\ R!911DeliveryFailure(P, Logged911)
    /\ RingStateMatches(P)

EatingTimeoutIfLogged ==
    /\ Rec.name = "EatingTimeout"
    /\ R!EatingTimeout(P)
    /\ RingStateMatches(P)

JoinIfLogged ==
    /\ Rec.name = "Join"
    /\ R!Join(P)
    /\ RingStateMatches(P)

\* LossyRing only (without it no behaviour matches these records): the
\* timeouts, and the loss of the logged token in transit (nid null: 0).
HungryTimeoutIfLogged ==
    /\ Rec.name = "HungryTimeout"
    /\ R!HungryTimeout(P)
    /\ RingStateMatches(P)

StarvingTimeoutIfLogged ==
    /\ Rec.name = "StarvingTimeout"
    /\ R!StarvingTimeout(P)
    /\ RingStateMatches(P)

TokenLossIfLogged ==
    /\ Rec.name = "TokenLoss"
    /\ Logged(Rec.msg, "type") /\ Rec.msg.type = "TOKEN"
    /\ LoggedToken \in tokenMsgs
    /\ R!TokenLoss(LoggedToken)

\* A crash (the cut of its channels is not logged: every cut), compared on
\* status alone (the spec freezes a crashed node's ring); under LossyRing
\* on the whole ring (Raincore's Crash resets it, as the layer does).
CrashIfLogged ==
    /\ Rec.name = "Crash"
    /\ \E lost \in SUBSET (R!Members \ {P}) : R!Crash(P, lost)
    /\ IF LossyRing THEN RingStateMatches(P) ELSE Rec.logged => RingVar("status", status'[P], status[P])

\* The runner's record of a node that left as suspected (SuspectLeaves):
\* compared as a crash.
LeaveSuspectedIfLogged ==
    /\ Rec.name = "LeaveSuspected"
    /\ \E lost \in SUBSET (R!Members \ {P}) : R!LeaveSuspected(P, lost)
    /\ IF LossyRing THEN RingStateMatches(P) ELSE Rec.logged => RingVar("status", status'[P], status[P])

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

Str(n) == ToString(n)
One(name, A(_)) == {name \o "(" \o Str(p) \o ")" : p \in {p \in R!Members : ENABLED A(p)}}
Two(name, A(_, _)) == {name \o "(" \o Str(e[1]) \o ", " \o Str(e[2]) \o ")" :
                         e \in {e \in R!Members \X R!Members : ENABLED A(e[1], e[2])}}
Named(name, Act(_)) == {name \o "(" \o Str(n) \o ")" : n \in {n \in R!Node : Act(n)}}

DiagEnabled ==
    One("Send", R!Send) \cup Two("RecvForward", R!RecvForward) \cup Two("RecvData", R!RecvData)
    \cup Two("Discard", R!Discard) \cup One("StartFlush", R!StartFlush) \cup Two("Block", R!Block)
    \cup Two("RestartFlush", R!RestartFlush) \cup One("FlushOk", R!FlushOk)
    \cup Two("ReceiveFlushOk", R!ReceiveFlushOk) \cup One("FlushCompleted", R!FlushCompleted)
    \cup Two("ReceiveFlushCompleted", R!ReceiveFlushCompleted) \cup One("SendView", R!SendView)
    \cup Two("InstallView", R!InstallView) \cup One("StopFlush", R!StopFlush)
    \cup Two("Unblock", R!Unblock)
    \cup Named("TokenReceived", LAMBDA n : ENABLED (\E m \in tokenMsgs : R!TokenReceived(n, m)))
    \cup Named("911Received", LAMBDA n : ENABLED (\E m \in msgs911 : R!911Received(n, m)))
    \cup Named("TokenDeliveryFailure",
               LAMBDA n : ENABLED (\E m \in tokenMsgs \cup {lastToken[n]} : R!TokenDeliveryFailure(n, m)))
    \cup Named("911DeliveryFailure",
               LAMBDA n : ENABLED (\E m \in msgs911 : R!911DeliveryFailure(n, m)))
    \cup Named("EatingTimeout", LAMBDA n : ENABLED R!EatingTimeout(n))
    \cup Named("Join", LAMBDA n : ENABLED R!Join(n))
    \cup Named("HungryTimeout", LAMBDA n : ENABLED R!HungryTimeout(n))
    \cup Named("StarvingTimeout", LAMBDA n : ENABLED R!StarvingTimeout(n))
    \cup {"Crash(" \o Str(p) \o ")" : p \in {p \in R!Members : ENABLED R!Crash(p, {})}}
    \cup {"LeaveSuspected(" \o Str(p) \o ")" : p \in {p \in R!Members : ENABLED R!LeaveSuspected(p, {})}}

TraceDiagnostic ==
    l = DiagAt => /\ PrintT(<<"groupcheck-diag", DiagVars>>)
                  /\ PrintT(<<"groupcheck-enabled", DiagEnabled>>)
=============================================================================
