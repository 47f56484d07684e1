----------------------------- MODULE TraceFlush -----------------------------
(***************************************************************************)
(* Trace validation of FLUSH (docs/tracevalidation.md): TLC checks that    *)
(* some behaviour of Flush.tla produces the logged trace.                  *)
(* conformance/tlctrace.py writes the trace as the module TraceLog, Log a  *)
(* sequence of records [name, nid, params, msg, state], as shaped by       *)
(* conformance/replay/flush.py tla_log: a DATA message is the spec's id (the k-th *)
(* Multicast record's message is id k), delivered and digest are sets of   *)
(* ids, completed a set of <<member, digest>>.  state holds only the       *)
(* variables member nid's step assigned; delivered holds the ids the step  *)
(* added.  A message field absent is not logged; a variable absent from    *)
(* a logged state is unchanged (StateMatches).  Everything not             *)
(* logged (other members, channels, views, joining, leaving, the cut of a  *)
(* crashed member's channels) is left to TLC's non-determinism, bounded by *)
(* the header's constants N, NInit, MaxMsgs, MaxCrashes, MaxLeaves (the    *)
(* spec's own bounds: no other bound is needed; a crash's cuts are at most *)
(* the channel lengths).                                                   *)
(* Acceptance: TLC's search depth is Len(Log) + 1 (the whole log consumed).*)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC, TraceLog

\* FlushOkRound: conformance/replay/flush.py tla_constants gives TRUE when the header
\* has none (a trace of the four-phase flush).
CONSTANTS N, NInit, MaxMsgs, MaxCrashes, MaxLeaves, ReconcileDigests, FlushOkRound

VARIABLES views, vid, crashed, joining, leaving, sent, delivered, chan,
          phase, blocked, flushInit, flushOks, digest, completed, l

F == INSTANCE Flush

traceVars == <<views, vid, crashed, joining, leaving, sent, delivered, chan,
               phase, blocked, flushInit, flushOks, digest, completed>>

TraceInit == F!Init /\ l = 1

Rec == Log[l]
Logged(r, k) == k \in DOMAIN r
P == Rec.nid

\* The logged message (each field when logged) is m.
MsgIs(m) ==
    /\ Logged(Rec.msg, "type") => Rec.msg.type = m.type
    /\ Logged(Rec.msg, "view") => Rec.msg.view = m.view
    /\ Logged(Rec.msg, "id") => m.type = "DATA" /\ Rec.msg.id = m.id
    /\ Logged(Rec.msg, "digest") => m.type \in {"FLUSH_COMPLETED", "VIEW"} /\ Rec.msg.digest = m.digest

\* Every logged variable of member p equals its post-state value; delivered
\* is logged as the ids the step added.
\* A logged state (Rec.logged) is a complete delta of the observable
\* variables the header declares (Observed, from conformance/replay/flush.py FIELDS, docs/trace-format.md): one the record
\* leaves out is unchanged by the step.
StateMatches(p) ==
    /\ IF Logged(Rec.state, "vid") THEN vid'[p] = Rec.state.vid
       ELSE Rec.logged /\ "vid" \in Observed => vid'[p] = vid[p]
    /\ IF Logged(Rec.state, "delivered") THEN delivered'[p] \ delivered[p] = Rec.state.delivered
       ELSE Rec.logged /\ "delivered" \in Observed => delivered'[p] = delivered[p]
    /\ IF Logged(Rec.state, "phase") THEN phase'[p] = Rec.state.phase
       ELSE Rec.logged /\ "phase" \in Observed => phase'[p] = phase[p]
    /\ IF Logged(Rec.state, "blocked") THEN blocked'[p] = Rec.state.blocked
       ELSE Rec.logged /\ "blocked" \in Observed => blocked'[p] = blocked[p]
    /\ IF Logged(Rec.state, "flushInit") THEN flushInit'[p] = Rec.state.flushInit
       ELSE Rec.logged /\ "flushInit" \in Observed => flushInit'[p] = flushInit[p]
    /\ IF Logged(Rec.state, "flushOks") THEN flushOks'[p] = Rec.state.flushOks
       ELSE Rec.logged /\ "flushOks" \in Observed => flushOks'[p] = flushOks[p]
    /\ IF Logged(Rec.state, "digest") THEN digest'[p] = Rec.state.digest
       ELSE Rec.logged /\ "digest" \in Observed => digest'[p] = digest[p]
    /\ IF Logged(Rec.state, "completed") THEN completed'[p] = Rec.state.completed
       ELSE Rec.logged /\ "completed" \in Observed => completed'[p] = completed[p]

\* A receive of member p from the member logged as params.<key>: the
\* spec's action A(p, src) taking the logged message from the head of the channel.
ReceiveIfLogged(name, key, A(_, _)) ==
    /\ Rec.name = name
    /\ Logged(Rec.params, key)
    /\ LET src == Rec.params[key] IN
         /\ src \in F!Members
         /\ A(P, src)
         /\ MsgIs(Head(chan[<<src, P>>]))
         /\ StateMatches(P)

\* A step of member P that sends msg (read after A: the post-state's).
SendStep(name, A(_), msg) == Rec.name = name /\ A(P) /\ MsgIs(msg) /\ StateMatches(P)

\* The steps take the action they check as an argument: here Flush.tla's,
\* and through an INSTANCE of this module TraceRaincoreFlush.tla's.
MulticastStep(A(_)) ==
    /\ SendStep("Multicast", A, F!Data(sent'[Len(sent')].view, Len(sent')))
    /\ Logged(Rec.msg, "sender") => Rec.msg.sender = P

MulticastIfLogged == MulticastStep(F!Multicast)
DeliverIfLogged == ReceiveIfLogged("Deliver", "q", F!Deliver)
DiscardIfLogged == ReceiveIfLogged("Discard", "q", F!Discard)
BlockIfLogged == ReceiveIfLogged("Block", "c", F!Block)
RestartFlushIfLogged == ReceiveIfLogged("RestartFlush", "c", F!RestartFlush)
ReceiveFlushOkIfLogged == ReceiveIfLogged("ReceiveFlushOk", "q", F!ReceiveFlushOk)
ReceiveFlushCompletedIfLogged == ReceiveIfLogged("ReceiveFlushCompleted", "q", F!ReceiveFlushCompleted)
InstallViewIfLogged == ReceiveIfLogged("InstallView", "c", F!InstallView)
UnblockIfLogged == ReceiveIfLogged("Unblock", "c", F!Unblock)
StartFlushIfLogged == SendStep("StartFlush", F!StartFlush, F!StartFlushMsg(vid[P]))
FlushOkIfLogged == SendStep("FlushOk", F!FlushOk, F!FlushOkMsg(vid[P]))
FlushCompletedIfLogged == SendStep("FlushCompleted", F!FlushCompleted, F!FlushCompletedMsg(vid[P], digest'[P]))
StopFlushIfLogged == SendStep("StopFlush", F!StopFlush, F!StopFlushMsg(vid[P]))

\* SendView: the VIEW of view vid[c] (installing vid[c] + 1) with the union
\* digest; its logged members are the new view's.
SendViewIfLogged ==
    /\ Rec.name = "SendView"
    /\ F!SendView(P)
    /\ LET D == UNION {r[2] : r \in {x \in completed[P] : F!Alive(x[1])}} IN
         MsgIs(F!ViewMsg(vid[P], D))
    /\ Logged(Rec.msg, "members") => views'[Len(views')] = Rec.msg.members
    /\ StateMatches(P)

CrashIfLogged ==
    /\ Rec.name = "Crash"
    /\ F!Crash(P)

JoinIfLogged ==
    /\ Rec.name = "Join"
    /\ F!Join(P)

LeaveIfLogged ==
    /\ Rec.name = "Leave"
    /\ F!Leave(P)

-----------------------------------------------------------------------------
(* Safety properties on the trace: Flush.tla's invariants VirtualSynchrony, *)
(* NoSendWhileBlocked and ViewAfterAllCompleted, each after the step        *)
(* (Kept), read whole: a FLUSH trace's views, deliveries and multicasts are *)
(* those of a campaign run or a JGroups run, tens to hundreds of each.  A   *)
(* step that breaks one is pruned (TraceKeeps, the cfg's ACTION_CONSTRAINT, *)
(* below), so the search stops at the first record where every behaviour   *)
(* matching the log so far has broken one.                                 *)
Kept == [VirtualSynchrony |-> F!VirtualSynchrony', NoSendWhileBlocked |-> F!NoSendWhileBlocked',
         ViewAfterAllCompleted |-> F!ViewAfterAllCompleted']

-----------------------------------------------------------------------------
(* The end of a quiescent run: conformance/tlctrace.py appends one entry     *)
(* named "End" (nid 0) to the log when the end record says quiescent.  The  *)
(* End step changes nothing; what the claim promises is judged there        *)
(* (EndKept, the same properties as conformance/replay/flush.py's at_end): every   *)
(* flush ended (FlushEnds), every message multicast in view v by a member   *)
(* that neither crashed nor left delivered by every member of v that        *)
(* neither crashed nor left (EventualDelivery, the catalogue's), and        *)
(* nothing in flight to a member that can take it, of a crashed member's    *)
(* channel the part every cut keeps (up to its last VIEW), with no view     *)
(* change pending (Quiescent).  A false claim breaks one: TraceKeeps prunes *)
(* the End step as any step that breaks a property.                         *)
QuiescentEnd == Rec.name = "End" /\ UNCHANGED traceVars

Live(p) == F!Alive(p) /\ F!IsMember(p)
Owed(e) == IF e[1] \in crashed THEN SubSeq(chan[e], 1, F!LastView(chan[e])) ELSE chan[e]
EndFlushEnds == \A p \in F!Members : Live(p) => ~F!InFlush(p) /\ flushInit[p] = F!NoInit
EndEventualDelivery ==
    \A i \in 1..Len(sent) : \A r \in F!Members :
        (Live(sent[i].sender) /\ Live(r) /\ r \in views[sent[i].view]) => i \in delivered[r]
EndQuiescent ==
    /\ \A e \in F!Members \X F!Members : F!CanReceive(e[2]) => Owed(e) = <<>>
    /\ ~F!ViewChangePending
EndKept == [FlushEnds |-> EndFlushEnds, EventualDelivery |-> EndEventualDelivery, Quiescent |-> EndQuiescent]

\* The properties the step breaks (Kept evaluated once: TLC caches a LET's
\* value, not a definition's); the End step: EndKept's.
Broken == LET k == IF Rec.name = "End" THEN EndKept ELSE Kept IN {p \in DOMAIN k : ~k[p]}

-----------------------------------------------------------------------------
TraceNext ==
    /\ l <= Len(Log)
    /\ P \in F!Members \/ Rec.name = "End"
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
       \/ CrashIfLogged
       \/ JoinIfLogged
       \/ LeaveIfLogged
       \/ QuiescentEnd
    /\ l' = l + 1

TraceSpec == TraceInit /\ [][TraceNext]_<<traceVars, l>>

TraceView == <<traceVars, l>>

\* Violated exactly when the whole log was consumed (tlctrace.py reads the
\* same from TLC's search depth, without printing the behaviour).
TraceMatched == l <= Len(Log)

-----------------------------------------------------------------------------
(* Diagnostics (tlctrace.py runs them with DiagAt = the first unmatched    *)
(* record; guarded: TLC evaluates constant definitions at start-up).       *)

DiagNode == IF DiagAt \in 1..Len(Log) /\ Log[DiagAt].nid \in F!Members THEN Log[DiagAt].nid ELSE 1

DiagVars == [node |-> DiagNode, vid |-> vid[DiagNode], views |-> views, phase |-> phase[DiagNode],
             blocked |-> blocked[DiagNode], flushInit |-> flushInit[DiagNode],
             flushOks |-> flushOks[DiagNode], delivered |-> delivered[DiagNode],
             digest |-> digest[DiagNode], completed |-> completed[DiagNode],
             crashed |-> crashed, leaving |-> leaving, joining |-> joining,
             into |-> [q \in F!Members |-> chan[<<q, DiagNode>>]]]

Str(n) == ToString(n)
One(name, A(_)) == {name \o "(" \o Str(p) \o ")" : p \in {p \in F!Members : ENABLED A(p)}}
Two(name, A(_, _)) == {name \o "(" \o Str(e[1]) \o ", " \o Str(e[2]) \o ")" :
                         e \in {e \in F!Members \X F!Members : ENABLED A(e[1], e[2])}}

DiagEnabled ==
    One("Multicast", F!Multicast) \cup One("StartFlush", F!StartFlush) \cup One("FlushOk", F!FlushOk)
    \cup One("FlushCompleted", F!FlushCompleted) \cup One("SendView", F!SendView)
    \cup One("StopFlush", F!StopFlush) \cup One("Crash", F!Crash) \cup One("Join", F!Join)
    \cup One("Leave", F!Leave)
    \cup Two("Deliver", F!Deliver) \cup Two("Discard", F!Discard) \cup Two("Block", F!Block)
    \cup Two("RestartFlush", F!RestartFlush) \cup Two("ReceiveFlushOk", F!ReceiveFlushOk)
    \cup Two("ReceiveFlushCompleted", F!ReceiveFlushCompleted)
    \cup Two("InstallView", F!InstallView) \cup Two("Unblock", F!Unblock)

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
