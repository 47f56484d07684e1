-------------------------- MODULE TraceRaincoreFlush --------------------------
(***************************************************************************)
(* Trace validation of FLUSH over the Raincore ring (docs/architecture.md, *)
(* link (3); docs/tracevalidation.md): TLC checks that some behaviour of   *)
(* RaincoreFlush.tla produces the logged trace of the composed stack.      *)
(* conformance/tlctrace.py writes the trace as the module TraceLog (in a   *)
(* temporary directory) defining Log, a sequence of records                *)
(*   [name, nid, params, msg, state, logged]                               *)
(* as shaped by conformance/replay/raincoreflush.py tla_log (FLUSH's records as   *)
(* conformance/replay/flush.py tla_log shapes them: a DATA message is the spec's  *)
(* id, delivered and digest are sets of ids, completed a set of            *)
(* <<member, digest>>; newNodes, flushOks and a VIEW's members are sets).  *)
(* logged is FALSE when the record's state is not logged (null or absent), *)
(* TRUE when it is, even empty.                                            *)
(*                                                                         *)
(* A record is a FLUSH record or a ring record; the action tells which.    *)
(* What is compared is exactly what the model replay compares              *)
(* (conformance/replay/raincoreflush.py):                                         *)
(*  - A FLUSH record as TraceFlush.tla does: the message taken is the head *)
(*    of the channel named by params (type, view, DATA id, digest), the    *)
(*    message sent is the action's; its state is the member's FLUSH        *)
(*    variables (vid, delivered as the ids the step added, phase, blocked, *)
(*    flushInit, flushOks, digest, completed).                             *)
(*  - A ring record's TOKEN or 911 on the fields the abstraction keeps: a  *)
(*    token's nodelist, cur, dest and gvn; a 911's orig, cur and dest.     *)
(*    The implementation's token also carries a sequence number and its    *)
(*    911 a seq, a status (YES/NO/REJECT) and a nodelist: they serve token *)
(*    regeneration, which the spec leaves out (README.md: one token, never *)
(*    lost), and are not compared.  The "type" names the message set       *)
(*    (TOKEN: tokenMsgs, 911: msgs911).                                    *)
(*  - A ring record's state on the variables the spec keeps: status,       *)
(*    viewState, globalView ([] is NullView), localView, newNodes and      *)
(*    token (without its sequence number); tokenState, lastToken and       *)
(*    recovered (timeouts, regeneration, recovery) are not compared.  A    *)
(*    Crash record on status only: the spec freezes a crashed node's ring  *)
(*    variables, the implementation resets its view and token state.       *)
(*  - A logged state is a complete delta (docs/trace-format.md,            *)
(*    raincoreflush): every variable of the record's layer it leaves out   *)
(*    is one the step leaves unchanged (delivered: adds nothing).  A state *)
(*    not logged constrains nothing.                                       *)
(* A ring action outside the abstraction (Initialization, HungryTimeout,  *)
(* StarvingTimeout, Recover, TokenLoss) matches no behaviour, as in the    *)
(* replay; with the header's LossyRing = TRUE (a run over Raincore's own   *)
(* ring) the timeouts and TokenLoss are steps, messages and tokens are     *)
(* compared whole (sequence numbers, a 911's claim), a ring state also on  *)
(* tokenState and lastToken, and a Crash on the whole ring.                *)
(*                                                                         *)
(* Left to TLC's non-determinism: everything not logged, i.e. the other    *)
(* members and nodes, the FLUSH channels and the ring's messages in        *)
(* flight, views and sent, and the cut of a crashed node's outgoing        *)
(* channels (Crash: every cut that keeps each VIEW).  Bounded by the       *)
(* header's constants N, NInit, Founder, MaxMsgs, MaxCrashes; Crashable is *)
(* 1..N (the replay lets any node crash, within MaxCrashes).  No other     *)
(* bound is needed: given the logged message every ring action is          *)
(* deterministic, and a crash's cuts are at most the channel lengths.      *)
(* Acceptance: TLC's search depth is Len(Log) + 1 (the whole log           *)
(* consumed; each step advances l by one).  The cfg checks no invariant:   *)
(* TraceMatched says the same, but its violation prints the behaviour.     *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC, TraceLog

CONSTANTS N, NInit, Founder, MaxMsgs, MaxCrashes, Crashable, LossyRing, TimelyTimeouts, LateFailures,
          NewerViewsOnly, FalseSuspicion, ShunSuspected, SuspectLeaves, ViewUnderToken

VARIABLES views, viewRing, vid, sent, delivered, chan, phase, blocked, flushInit,
          flushOks, digest, completed,
          status, viewState, globalView, localView, newNodes, token,
          tokenMsgs, msgs911, tokenState, lastToken, l

\* LossyRing and TimelyTimeouts come from the trace's header (FALSE and TRUE
\* when it lacks them: the abstraction, where tokenState and lastToken keep
\* their initial values).  A run over Raincore's own ring is LossyRing with
\* TimelyTimeouts FALSE: the implementation's timers know nothing of tokens
\* in flight.
R == INSTANCE RaincoreFlush

\* TraceFlush.tla's predicates, on FLUSH as RaincoreFlush.tla instantiates it.
TF == INSTANCE TraceFlush WITH
        MaxLeaves <- 0, ReconcileDigests <- TRUE, FlushOkRound <- TRUE,
        crashed <- R!Dead, joining <- {}, leaving <- {}

traceVars == <<views, viewRing, vid, sent, delivered, chan, phase, blocked, flushInit,
               flushOks, digest, completed,
               status, viewState, globalView, localView, newNodes, token,
               tokenMsgs, msgs911, tokenState, lastToken>>

TraceInit == R!Init /\ l = 1

Rec == Log[l]
Logged(r, k) == k \in DOMAIN r
P == Rec.nid

-----------------------------------------------------------------------------
(* Messages *)

\* The logged FLUSH message is m (TraceFlush.tla's MsgIs); a message with a
\* ring number is a VIEW, of that ring number.
RingOf(m) == Logged(Rec.msg, "ring") => m.type = "VIEW" /\ Rec.msg.ring = m.ring
MsgIs(m) == TF!MsgIs(m) /\ RingOf(m)

\* The spec's token or 911 the logged ring message is: the fields the
\* abstraction keeps (the sequence number, a 911's status, seq and
\* nodelist are not part of it); under LossyRing every field (Raincore's).
LoggedToken ==
    IF LossyRing
      THEN [seq |-> Rec.msg.seq, nodelist |-> Rec.msg.nodelist, cur |-> Rec.msg.cur,
            dest |-> Rec.msg.dest, gvn |-> Rec.msg.gvn]
      ELSE [nodelist |-> Rec.msg.nodelist, cur |-> Rec.msg.cur,
            dest |-> Rec.msg.dest, gvn |-> Rec.msg.gvn]
Logged911 ==
    IF LossyRing
      THEN [orig |-> Rec.msg.orig, cur |-> Rec.msg.cur, dest |-> Rec.msg.dest,
            nodelist |-> Rec.msg.nodelist, seq |-> Rec.msg.seq, status |-> Rec.msg.status]
      ELSE [orig |-> Rec.msg.orig, cur |-> Rec.msg.cur, dest |-> Rec.msg.dest]

\* A logged token (a node's token variable) is t on the same fields.
TokenIs(t, r) == r.nodelist = t.nodelist /\ r.cur = t.cur /\ r.dest = t.dest /\ r.gvn = t.gvn
                 /\ (LossyRing => r.seq = t.seq)

-----------------------------------------------------------------------------
(* State *)

\* Node n's ring variables the record logs equal their post-state values.
RingVarsMatch(n) ==
    /\ Logged(Rec.state, "status") => status'[n] = Rec.state.status
    /\ Logged(Rec.state, "viewState") => viewState'[n] = Rec.state.viewState
    /\ Logged(Rec.state, "globalView") => globalView'[n] = Rec.state.globalView
    /\ Logged(Rec.state, "localView") => localView'[n] = Rec.state.localView
    /\ Logged(Rec.state, "newNodes") => newNodes'[n] = Rec.state.newNodes
    /\ Logged(Rec.state, "token") => TokenIs(token'[n], Rec.state.token)
    /\ LossyRing /\ Logged(Rec.state, "tokenState") => tokenState'[n] = Rec.state.tokenState
    /\ LossyRing /\ Logged(Rec.state, "lastToken") => TokenIs(lastToken'[n], Rec.state.lastToken)

\* ... and those it does not log are unchanged (a complete delta).
RingUnloggedSame(n) ==
    /\ "status" \in Observed /\ ~Logged(Rec.state, "status") => status'[n] = status[n]
    /\ "viewState" \in Observed /\ ~Logged(Rec.state, "viewState") => viewState'[n] = viewState[n]
    /\ "globalView" \in Observed /\ ~Logged(Rec.state, "globalView") => globalView'[n] = globalView[n]
    /\ "localView" \in Observed /\ ~Logged(Rec.state, "localView") => localView'[n] = localView[n]
    /\ "newNodes" \in Observed /\ ~Logged(Rec.state, "newNodes") => newNodes'[n] = newNodes[n]
    /\ "token" \in Observed /\ ~Logged(Rec.state, "token") => token'[n] = token[n]
    /\ LossyRing /\ "tokenState" \in Observed /\ ~Logged(Rec.state, "tokenState") => tokenState'[n] = tokenState[n]
    /\ LossyRing /\ "lastToken" \in Observed /\ ~Logged(Rec.state, "lastToken") => lastToken'[n] = lastToken[n]

\* A FLUSH record: FLUSH's layer is complete (TraceFlush.tla's StateMatches);
\* a ring variable it logs (none, from the stack) is compared all the same,
\* as the replay does.
FlushStateMatches(p) == TF!StateMatches(p) /\ (Rec.logged => RingVarsMatch(p))

\* A ring record: the ring's layer is complete; FLUSH variables are not
\* the ring's to log.
RingStateMatches(n) == Rec.logged => RingVarsMatch(n) /\ RingUnloggedSame(n)

\* A Crash record: status only (the abstraction freezes a crashed node's
\* ring); under LossyRing all of the ring (Raincore's Crash resets it).
CrashStateMatches(n) ==
    IF LossyRing THEN RingStateMatches(n)
    ELSE Rec.logged => IF Logged(Rec.state, "status") THEN status'[n] = Rec.state.status
                                                       ELSE "status" \in Observed => status'[n] = status[n]

-----------------------------------------------------------------------------
(* FLUSH's actions: TraceFlush.tla's steps on this spec's, with what a   *)
(* FLUSH record adds here (OverRing): a VIEW's ring number, and the ring   *)
(* variables, should it log any.                                           *)

OverRing(m) == RingOf(m) /\ (Rec.logged => RingVarsMatch(P))
ReceiveIfLogged(name, key, A(_, _)) ==
    TF!ReceiveIfLogged(name, key, A) /\ OverRing(Head(chan[<<Rec.params[key], P>>]))
SendStep(name, A(_), msg) == TF!SendStep(name, A, msg) /\ OverRing(msg)

MulticastIfLogged == TF!MulticastStep(R!Multicast) /\ OverRing(R!Data(sent'[Len(sent')].view, Len(sent')))
DeliverIfLogged == ReceiveIfLogged("Deliver", "q", R!Deliver)
DiscardIfLogged == ReceiveIfLogged("Discard", "q", R!Discard)
BlockIfLogged == ReceiveIfLogged("Block", "c", R!Block)
RestartFlushIfLogged == ReceiveIfLogged("RestartFlush", "c", R!RestartFlush)
ReceiveFlushOkIfLogged == ReceiveIfLogged("ReceiveFlushOk", "q", R!ReceiveFlushOk)
ReceiveFlushCompletedIfLogged == ReceiveIfLogged("ReceiveFlushCompleted", "q", R!ReceiveFlushCompleted)
InstallViewIfLogged == ReceiveIfLogged("InstallView", "c", R!InstallView)
UnblockIfLogged == ReceiveIfLogged("Unblock", "c", R!Unblock)
StartFlushIfLogged == SendStep("StartFlush", R!StartFlush, R!StartFlushMsg(vid[P]))
FlushOkIfLogged == SendStep("FlushOk", R!FlushOk, R!FlushOkMsg(vid[P]))
FlushCompletedIfLogged == SendStep("FlushCompleted", R!FlushCompleted, R!FlushCompletedMsg(vid[P], digest'[P]))
StopFlushIfLogged == SendStep("StopFlush", R!StopFlush, R!StopFlushMsg(vid[P]))

\* SendView: the VIEW of view vid[c] (installing vid[c] + 1) with the
\* union of the digests of the members c does not count gone; a logged
\* VIEW carries the new view's members (the ring's committed view), which
\* the replay requires (VirtualSynchrony reads them).
SendViewIfLogged ==
    /\ Rec.name = "SendView"
    /\ R!SendView(P)
    /\ LET D == UNION {r[2] : r \in {x \in completed[P] : x[1] \notin R!Gone(P)}} IN
         MsgIs(R!ViewMsg(vid[P], D, R!LastIdx(P)))
    /\ Logged(Rec.msg, "type") => /\ Logged(Rec.msg, "members")
                                  /\ views'[Len(views')] = Rec.msg.members
    /\ FlushStateMatches(P)

-----------------------------------------------------------------------------
(* The ring's actions (TraceRaincore.tla's predicates, on the abstraction): *)
(* each step takes the action it checks as an argument (here               *)
(* RaincoreFlush.tla's; TraceRaincoreSequencerFlush.tla applies them to    *)
(* its own through an INSTANCE of this module).                            *)

\* Node P takes (or gets back) the logged token, one of ms.
TokenStep(name, A(_, _), ms) ==
    /\ Rec.name = name
    /\ Logged(Rec.msg, "type") /\ Rec.msg.type = "TOKEN"
    /\ LoggedToken \in ms
    /\ A(P, LoggedToken)
    /\ RingStateMatches(P)

\* Node P takes (or gets back) the logged 911.
Step911(name, A(_, _)) ==
    /\ Rec.name = name
    /\ Logged(Rec.msg, "type") /\ Rec.msg.type = "911"
    /\ Logged911 \in msgs911
    /\ A(P, Logged911)
    /\ RingStateMatches(P)

RingStep(name, A(_)) == Rec.name = name /\ A(P) /\ RingStateMatches(P)

\* The loss of the logged token in transit (nid null: 0).
TokenLossStep(A(_)) ==
    /\ Rec.name = "TokenLoss"
    /\ Logged(Rec.msg, "type") /\ Rec.msg.type = "TOKEN"
    /\ LoggedToken \in tokenMsgs
    /\ A(LoggedToken)

TokenReceivedIfLogged == TokenStep("TokenReceived", R!TokenReceived, tokenMsgs)
911ReceivedIfLogged == Step911("911Received", R!911Received)
\* The token P sent came back undelivered (its destination is down; under
\* LossyRing also the token it sent last, R!LateFailure).
TokenDeliveryFailureIfLogged == TokenStep("TokenDeliveryFailure", R!TokenDeliveryFailure, tokenMsgs \cup {lastToken[P]})
911DeliveryFailureIfLogged == Step911("911DeliveryFailure", R!911DeliveryFailure)
EatingTimeoutIfLogged == RingStep("EatingTimeout", R!EatingTimeout)
\* LossyRing only (without it no behaviour matches these records).
HungryTimeoutIfLogged == RingStep("HungryTimeout", R!HungryTimeout)
StarvingTimeoutIfLogged == RingStep("StarvingTimeout", R!StarvingTimeout)
TokenLossIfLogged == TokenLossStep(R!TokenLoss)
JoinIfLogged == RingStep("Join", R!Join)

\* A crash, logged by the node concerned (the cut of its channels is not
\* logged: every cut).
CrashIfLogged ==
    /\ Rec.name = "Crash"
    /\ R!Crash(P)
    /\ CrashStateMatches(P)

\* The runner's record of a node that left as suspected (SuspectLeaves):
\* compared as a crash.
LeaveSuspectedIfLogged ==
    /\ Rec.name = "LeaveSuspected"
    /\ R!LeaveSuspected(P)
    /\ CrashStateMatches(P)

-----------------------------------------------------------------------------
-----------------------------------------------------------------------------
(* Safety properties on the trace: RaincoreFlush.tla's invariants (FLUSH's *)
(* three and the ring's AtMostOneToken, ConsistentHistory, ViewsFromRing), *)
(* each after the step (Kept), read whole, as TraceFlush.tla and           *)
(* TraceRaincore.tla read them.  A step that breaks one is pruned          *)
(* (TraceKeeps, the cfg's ACTION_CONSTRAINT, below), so the search stops   *)
(* at the first record where every behaviour matching the log so far has   *)
(* broken one.                                                             *)
Kept == [VirtualSynchrony |-> R!VirtualSynchrony', NoSendWhileBlocked |-> R!NoSendWhileBlocked', ViewAfterAllCompleted |-> R!ViewAfterAllCompleted', AtMostOneToken |-> R!AtMostOneToken', ConsistentHistory |-> R!ConsistentHistory', ViewsFromRing |-> R!ViewsFromRing']

-----------------------------------------------------------------------------
(* The end of a run that claims to be quiescent: conformance/tlctrace.py    *)
(* appends one entry named "End" (nid 0) to the log when the end record    *)
(* says quiescent.  The ring never quiesces (its token circulates); a       *)
(* quiescent claim on this stack (a cluster writes one once every node     *)
(* reports its group layers idle) promises FLUSH's deliveries: the End     *)
(* step changes nothing and judges there (EndKept, the same as             *)
(* conformance/replay/raincoreflush.py's at_end) that every message multicast in  *)
(* view v by a live member of its view is delivered by every live member   *)
(* of v (EventualDelivery, the catalogue's).                               *)
QuiescentEnd == Rec.name = "End" /\ UNCHANGED traceVars

EndLive(p) == R!Alive(p) /\ R!IsMember(p)
EndEventualDelivery ==
    \A i \in 1..Len(sent) : \A r \in R!Members :
        (EndLive(sent[i].sender) /\ EndLive(r) /\ r \in views[sent[i].view]) => i \in delivered[r]
EndKept == [EventualDelivery |-> EndEventualDelivery]

\* The properties the step breaks (Kept evaluated once: TLC caches a LET's
\* value, not a definition's); the End step: EndKept's.
Broken == LET k == IF Rec.name = "End" THEN EndKept ELSE Kept IN {p \in DOMAIN k : ~k[p]}

-----------------------------------------------------------------------------
TraceNext ==
    /\ l <= Len(Log)
    /\ P \in R!Members \/ Rec.name \in {"TokenLoss", "End"}
    /\ \/ MulticastIfLogged
       \/ DeliverIfLogged
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
       \/ HungryTimeoutIfLogged
       \/ StarvingTimeoutIfLogged
       \/ TokenLossIfLogged
       \/ CrashIfLogged
       \/ LeaveSuspectedIfLogged
       \/ JoinIfLogged
       \/ QuiescentEnd
    /\ l' = l + 1

TraceSpec == TraceInit /\ [][TraceNext]_<<traceVars, l>>

\* Two states that agree on the spec's variables and the cursor are the same.
TraceView == <<traceVars, l>>

\* Violated exactly when the whole log was consumed (tlctrace.py reads the
\* same from TLC's search depth, without printing the behaviour).
TraceMatched == l <= Len(Log)

-----------------------------------------------------------------------------
(* Diagnostics (tlctrace.py runs them with DiagAt = the first unmatched    *)
(* record; guarded: TLC evaluates constant definitions at start-up, where  *)
(* DiagAt = 0 is outside the log): the record's node, its FLUSH and ring   *)
(* state, the FLUSH channels into it, the ring messages to or from it, and *)
(* every spec action enabled in a state that matched the line before.     *)

DiagNode == IF DiagAt \in 1..Len(Log) /\ Log[DiagAt].nid \in R!Members THEN Log[DiagAt].nid ELSE 1

DiagVars == [node |-> DiagNode, vid |-> vid[DiagNode], views |-> views, phase |-> phase[DiagNode],
             blocked |-> blocked[DiagNode], flushInit |-> flushInit[DiagNode],
             flushOks |-> flushOks[DiagNode], delivered |-> delivered[DiagNode],
             digest |-> digest[DiagNode], completed |-> completed[DiagNode],
             status |-> status, viewState |-> viewState[DiagNode],
             globalView |-> globalView[DiagNode], localView |-> localView[DiagNode],
             newNodes |-> newNodes[DiagNode], token |-> token[DiagNode],
             tokens |-> {m \in tokenMsgs : DiagNode \in {m.cur, m.dest}},
             msgs911 |-> {m \in msgs911 : DiagNode \in {m.orig, m.cur, m.dest}},
             into |-> [q \in R!Members |-> chan[<<q, DiagNode>>]]]

Str(n) == ToString(n)
One(name, A(_)) == {name \o "(" \o Str(p) \o ")" : p \in {p \in R!Members : ENABLED A(p)}}
Two(name, A(_, _)) == {name \o "(" \o Str(e[1]) \o ", " \o Str(e[2]) \o ")" :
                         e \in {e \in R!Members \X R!Members : ENABLED A(e[1], e[2])}}
Named(name, Act(_)) == {name \o "(" \o Str(n) \o ")" : n \in {n \in R!Node : Act(n)}}

DiagEnabled ==
    One("Multicast", R!Multicast) \cup One("StartFlush", R!StartFlush) \cup One("FlushOk", R!FlushOk)
    \cup One("FlushCompleted", R!FlushCompleted) \cup One("SendView", R!SendView)
    \cup One("StopFlush", R!StopFlush)
    \cup Two("Deliver", R!Deliver) \cup Two("Discard", R!Discard) \cup Two("Block", R!Block)
    \cup Two("RestartFlush", R!RestartFlush) \cup Two("ReceiveFlushOk", R!ReceiveFlushOk)
    \cup Two("ReceiveFlushCompleted", R!ReceiveFlushCompleted)
    \cup Two("InstallView", R!InstallView) \cup Two("Unblock", R!Unblock)
    \cup Named("TokenReceived", LAMBDA n : ENABLED (\E m \in tokenMsgs : R!TokenReceived(n, m)))
    \cup Named("911Received", LAMBDA n : ENABLED (\E m \in msgs911 : R!911Received(n, m)))
    \cup Named("TokenDeliveryFailure",
               LAMBDA n : ENABLED (\E m \in tokenMsgs : R!TokenDeliveryFailure(n, m)))
    \cup Named("911DeliveryFailure",
               LAMBDA n : ENABLED (\E m \in msgs911 : R!911DeliveryFailure(n, m)))
    \cup Named("EatingTimeout", LAMBDA n : ENABLED R!EatingTimeout(n))
    \cup Named("Crash", LAMBDA n : ENABLED R!Crash(n))
    \cup Named("LeaveSuspected", LAMBDA n : ENABLED R!LeaveSuspected(n))
    \cup Named("Join", LAMBDA n : ENABLED R!Join(n))

TraceDiagnostic ==
    l = DiagAt => /\ PrintT(<<"groupcheck-diag", DiagVars>>)
                  /\ PrintT(<<"groupcheck-enabled", DiagEnabled>>)

\* The cfg's ACTION_CONSTRAINT: a step that breaks a property is no step of
\* a behaviour the trace is judged on.  tlctrace.py tells a record where
\* every behaviour breaks one from a record no behaviour matches with
\* DiagAt = that record: the steps before it are pruned, its own are kept
\* and print what they break, the steps after it are all kept.
TraceKeeps ==
    IF DiagAt = 0 \/ l < DiagAt THEN Broken = {}
    ELSE IF l = DiagAt THEN LET b == Broken IN b # {} => PrintT(<<"groupcheck-broken", b, DiagVars'>>)
    ELSE TRUE
=============================================================================
