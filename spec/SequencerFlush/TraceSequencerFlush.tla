------------------------- MODULE TraceSequencerFlush -------------------------
(***************************************************************************)
(* Trace validation of SEQUENCER over FLUSH (docs/tracevalidation.md): TLC *)
(* checks that some behaviour of SequencerFlush.tla produces the logged    *)
(* trace.  The implementation logs a composed step as one record per layer *)
(* (half-steps); conformance/replay/sequencerflush.py tla_log joins them with the *)
(* replay's own pre-pass, so Log holds one entry per composed step:        *)
(*   [name, nid, params, msg, state]                                       *)
(* name the composed action; params.src the member whose channel the step  *)
(* takes from, params.kind the join (send, coord_send, forward,            *)
(* coord_forward, own_data, deliver, view, flush, crash, stop), params.rd  *)
(* the DATA the SEQUENCER half of a deliver takes, params.mc the           *)
(* coordinator's Multicast of a coord_* join; msg in the model's ids;      *)
(* state the logged variables: fvid/svid (each layer's vid), phase,        *)
(* blocked, flushInit, flushOks, digest, completed, flog (FLUSH's          *)
(* delivered: the additions to log), sent, fwd, recv, delivered (appended).*)
(* Everything not logged is left to TLC, bounded by the header's constants *)
(* (N, MaxSeq, MaxCrashes; Senders = 1..N): no other bound.  The checks    *)
(* mirror the replay's (conformance/replay/sequencerflush.py message/observe),    *)
(* including the Discard the spec already took at a view change or crash  *)
(* (a stutter).  DeliverStable (UniformDelivery) has no trace record: the  *)
(* implementation does not run that fix.  ResentFirst is TRUE when the   *)
(* header says the stack holds a new coordinator's sends (resent_first):   *)
(* then a Send logged while a re-sent FORWARD is queued is rejected.       *)
(* Acceptance: TLC's search depth is Len(Log) + 1.                          *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC, TraceLog

CONSTANTS N, MaxSeq, MaxCrashes, Senders, UniformDelivery, ResendAlways, ResentFirst

VARIABLES views, vid, crashed, sent, fwd, recv, delivered, chan, log, closed,
          phase, blocked, flushInit, flushOks, completed, ndel, l

SF == INSTANCE SequencerFlush

traceVars == <<views, vid, crashed, sent, fwd, recv, delivered, chan, log, closed,
               phase, blocked, flushInit, flushOks, completed, ndel>>

TraceInit == SF!Init /\ l = 1

Rec == Log[l]
Logged(r, k) == k \in DOMAIN r
P == Rec.nid
Src == Rec.params.src
Kind == Rec.params.kind
Range(f) == {f[i] : i \in DOMAIN f}

\* The logged message is the head of the channel Src -> P (as the replay's _head_ok).
HeadOk ==
    /\ Src \in SF!Members
    /\ chan[<<Src, P>>] # <<>>
    /\ Logged(Rec.msg, "type") =>
         LET h == Head(chan[<<Src, P>>]) IN
           /\ h.type = Rec.msg.type
           /\ h.type \in {"FORWARD", "DATA"} => h.sender = Rec.msg.sender /\ h.seqno = Rec.msg.seqno
           /\ h.type # "FORWARD" /\ Logged(Rec.msg, "view") => h.view = Rec.msg.view
           /\ h.type \in {"FLUSH_COMPLETED", "VIEW"} => Range(h.digest) = Rec.msg.digest

\* Every logged variable of member m against the step (as the replay's
\* observe).  A logged state (Rec.logged) is a complete delta of the
\* observable variables the header declares (Observed; default
\* conformance/replay/sequencerflush.py FIELDS,
\* docs/trace-format.md): one the record leaves out is unchanged as the
\* replay observes it (FLUSH's digest as reported, its delivered log's
\* additions none, SEQUENCER's delivered nothing appended).
Digest(ph, lg) == IF ph = "Completed" THEN Range(lg) ELSE {}
StateMatches(m) ==
    LET S == Rec.state
        Same(k) == Rec.logged /\ k \in Observed /\ ~Logged(S, k) IN
    \* one spec variable, logged by each layer: either left out is unchanged
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

\* A coordinator's Send/RecvForward multicasts the DATA in the same step: it
\* must be joined with its FLUSH Multicast, of this view.
CoordRule ==
    /\ Kind \in {"send", "forward"} /\ Logged(Rec.msg, "type") => ~SF!IsCoord(P)
    /\ Kind \in {"coord_send", "coord_forward"} =>
         SF!IsCoord(P) /\ Rec.params.mc.type = "DATA" /\ Rec.params.mc.view = vid[P]

\* The steps, each on the action A of the spec the trace is checked against:
\* here SequencerFlush.tla's; a composition over it (TraceRaincoreSequencerFlush.tla)
\* takes them through an INSTANCE of this module, with its own actions.
SendStep(A(_)) ==
    /\ Rec.name = "Send"
    /\ A(P)
    /\ Logged(Rec.msg, "type") =>
         /\ Rec.msg.type = IF SF!IsCoord(P) THEN "DATA" ELSE "FORWARD"
         /\ Rec.msg.sender = P /\ Rec.msg.seqno = sent'[P]
    /\ CoordRule
    /\ StateMatches(P)

Single(name, A(_)) == Rec.name = name /\ A(P) /\ StateMatches(P)
Pair(name, A(_, _)) == Rec.name = name /\ HeadOk /\ A(P, Src) /\ StateMatches(P)

RecvForwardStep(A(_, _)) == Pair("RecvForward", A) /\ CoordRule

RecvDataStep(A(_, _)) ==
    /\ Pair("RecvData", A)
    /\ Logged(Rec.params, "rd") =>
         Head(chan[<<Src, P>>]).sender = Rec.params.rd[1] /\ Head(chan[<<Src, P>>]).seqno = Rec.params.rd[2]

\* The VIEW of view vid[P], with the new view's members.
SendViewStep(A(_)) ==
    /\ Rec.name = "SendView"
    /\ A(P)
    /\ Logged(Rec.msg, "type") =>
         /\ Rec.msg.type = "VIEW" /\ Rec.msg.view = vid[P]
         /\ Logged(Rec.msg, "members") /\ Range(Rec.msg.members) = Range(views'[Len(views')])
    /\ StateMatches(P)

\* A Discard of a message the spec no longer has: it dropped it already
\* (Purged at P's view change, or at the sender's crash): a stutter.
Gone ==
    /\ Logged(Rec.msg, "type")
    /\ ~\E i \in DOMAIN chan[<<Src, P>>] :
          LET x == chan[<<Src, P>>][i] IN
            "view" \in DOMAIN x /\ Logged(Rec.msg, "view") /\ x.view = Rec.msg.view /\ x.type = Rec.msg.type
    /\ \/ (IF Logged(Rec.msg, "view") THEN Rec.msg.view ELSE 0) < vid[P]
       \/ Rec.msg.type \in SF!FlushTypes /\ Src \in crashed

\* Stutter: the spec's UNCHANGED of all its variables.
DiscardStep(A(_, _), Stutter) ==
    /\ Rec.name = "Discard"
    /\ Src \in SF!Members
    /\ \/ HeadOk /\ A(P, Src) /\ StateMatches(P)
       \/ ~HeadOk /\ Gone /\ Stutter

\* A crash of P, the cut of its channels (not logged) every cut.
CrashStep(name, A(_, _)) == Rec.name = name /\ \E lost \in SUBSET (SF!Members \ {P}) : A(P, lost)

SendIfLogged == SendStep(SF!Send)
RecvForwardIfLogged == RecvForwardStep(SF!RecvForward)
RecvDataIfLogged == RecvDataStep(SF!RecvData)
DiscardIfLogged == DiscardStep(SF!Discard, UNCHANGED traceVars)
StartFlushIfLogged == Single("StartFlush", SF!StartFlush)
FlushOkIfLogged == Single("FlushOk", SF!FlushOk)
FlushCompletedIfLogged == Single("FlushCompleted", SF!FlushCompleted)
StopFlushIfLogged == Single("StopFlush", SF!StopFlush)
BlockIfLogged == Pair("Block", SF!Block)
RestartFlushIfLogged == Pair("RestartFlush", SF!RestartFlush)
ReceiveFlushOkIfLogged == Pair("ReceiveFlushOk", SF!ReceiveFlushOk)
ReceiveFlushCompletedIfLogged == Pair("ReceiveFlushCompleted", SF!ReceiveFlushCompleted)
SendViewIfLogged == SendViewStep(SF!SendView)
InstallViewIfLogged == Pair("InstallView", SF!InstallView)
UnblockIfLogged == Pair("Unblock", SF!Unblock)
CrashIfLogged == CrashStep("Crash", SF!Crash)

-----------------------------------------------------------------------------
(* The end of a quiescent run: conformance/tlctrace.py appends one entry    *)
(* named "End" (nid 0) to the log when the end record says quiescent.  The *)
(* End step changes nothing; what the claim promises is judged there       *)
(* (EndKept, the same properties as conformance/replay/sequencerflush.py's        *)
(* at_end): Settled, every message of a sender that never crashed          *)
(* delivered by every member that never crashed (EventualDelivery), and    *)
(* the composed spec's Quiescent with a crashed member's channel counted   *)
(* up to its last VIEW, what every cut its crash may make keeps            *)
(* (Quiescent).  A false claim breaks one: TraceKeeps (the cfg's           *)
(* ACTION_CONSTRAINT) prunes the End step, and tlctrace.py reports the      *)
(* properties broken there.  No other step is judged on properties here.   *)
QuiescentEnd == Rec.name = "End" /\ UNCHANGED traceVars

Owed(e) == IF e[1] \in crashed THEN SubSeq(chan[e], 1, SF!LastView(chan[e])) ELSE chan[e]
EndQuiescent ==
    /\ \A e \in SF!Members \X SF!Members : Owed(e) = <<>>
    /\ \A m \in SF!Members \ crashed :
          /\ vid[m] = SF!Latest /\ phase[m] = "Normal" /\ ~blocked[m] /\ flushInit[m] = SF!NoInit
          /\ UniformDelivery => ndel[m] = Len(log[m])
    /\ ~SF!ViewChangePending
EndKept == [EventualDelivery |-> SF!Settled, Quiescent |-> EndQuiescent]

\* The properties the step breaks: the End step's, EndKept's (evaluated once).
Broken == IF Rec.name = "End" THEN LET k == EndKept IN {p \in DOMAIN k : ~k[p]} ELSE {}

TraceNext ==
    /\ l <= Len(Log)
    /\ \/ /\ Rec.name # "End"
          /\ P \in SF!Members
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
             \/ CrashIfLogged
       \/ QuiescentEnd
    /\ l' = l + 1

TraceSpec == TraceInit /\ [][TraceNext]_<<traceVars, l>>

\* Two states that agree on these match the same rest of the log: `delivered`
\* and `closed` are left out, history the spec only appends to (no action reads
\* them but for closed's Len(delivered)) and StateMatches compares only what a
\* step appends.  Fingerprinting them made TLC's step k cost O(k).
TraceView == <<views, vid, crashed, sent, fwd, recv, chan, log,
               phase, blocked, flushInit, flushOks, completed, ndel, l>>

\* Violated exactly when the whole log was consumed (tlctrace.py reads the
\* same from TLC's search depth, without printing the behaviour).
TraceMatched == l <= Len(Log)

-----------------------------------------------------------------------------
(* Diagnostics (guarded: TLC evaluates constant definitions at start-up). *)

DiagNode == IF DiagAt \in 1..Len(Log) /\ Log[DiagAt].nid \in SF!Members THEN Log[DiagAt].nid ELSE 1

DiagVars == [node |-> DiagNode, vid |-> vid[DiagNode], view |-> SF!View(DiagNode),
             sent |-> sent[DiagNode], fwd |-> fwd[DiagNode], recv |-> recv[DiagNode],
             log |-> log[DiagNode], phase |-> phase[DiagNode], blocked |-> blocked[DiagNode],
             flushInit |-> flushInit[DiagNode], flushOks |-> flushOks[DiagNode],
             completed |-> completed[DiagNode], crashed |-> crashed,
             into |-> [q \in SF!Members |-> chan[<<q, DiagNode>>]]]

Str(n) == ToString(n)
One(name, A(_)) == {name \o "(" \o Str(p) \o ")" : p \in {p \in SF!Members : ENABLED A(p)}}
Two(name, A(_, _)) == {name \o "(" \o Str(e[1]) \o ", " \o Str(e[2]) \o ")" :
                         e \in {e \in SF!Members \X SF!Members : ENABLED A(e[1], e[2])}}

DiagEnabled ==
    One("Send", SF!Send) \cup Two("RecvForward", SF!RecvForward) \cup Two("RecvData", SF!RecvData)
    \cup Two("Discard", SF!Discard) \cup One("StartFlush", SF!StartFlush) \cup Two("Block", SF!Block)
    \cup Two("RestartFlush", SF!RestartFlush) \cup One("FlushOk", SF!FlushOk)
    \cup Two("ReceiveFlushOk", SF!ReceiveFlushOk) \cup One("FlushCompleted", SF!FlushCompleted)
    \cup Two("ReceiveFlushCompleted", SF!ReceiveFlushCompleted) \cup One("SendView", SF!SendView)
    \cup Two("InstallView", SF!InstallView) \cup One("StopFlush", SF!StopFlush)
    \cup Two("Unblock", SF!Unblock)
    \cup {"Crash(" \o Str(p) \o ")" : p \in {p \in SF!Members : ENABLED SF!Crash(p, {})}}

TraceDiagnostic ==
    l = DiagAt => /\ PrintT(<<"groupcheck-diag", DiagVars>>)
                  /\ PrintT(<<"groupcheck-enabled", DiagEnabled>>)

\* The cfg's ACTION_CONSTRAINT: a step that breaks a property (here the End
\* step alone) is no step of a behaviour the trace is judged on; with DiagAt
\* = that record, tlctrace.py keeps its steps and they print what they break.
TraceKeeps ==
    IF DiagAt = 0 \/ l < DiagAt THEN Broken = {}
    ELSE IF l = DiagAt THEN LET b == Broken IN b # {} => PrintT(<<"groupcheck-broken", b, DiagVars'>>)
    ELSE TRUE
=============================================================================
