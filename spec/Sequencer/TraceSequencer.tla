--------------------------- MODULE TraceSequencer ---------------------------
(***************************************************************************)
(* Trace validation of SEQUENCER (docs/architecture.md, link (3)): TLC     *)
(* checks that some behaviour of Sequencer.tla produces the logged trace.  *)
(* conformance/tlctrace.py writes the trace as the module TraceLog (in a   *)
(* temporary directory) defining Log, a sequence of records                *)
(*   [name, nid, params, msg, state]                                       *)
(* with state holding only the variables member nid's step assigned       *)
(* (format 2's delta; delivered holds the elements appended).  A message  *)
(* field absent is not logged; a variable absent from a logged state is   *)
(* unchanged (StateMatches).  Everything not logged (channels,            *)
(* other members, the lost subset of a Crash without "lost") is left to   *)
(* TLC's non-determinism, bounded by the header's constants N, MaxSeq and *)
(* MaxCrashes (Sequencer.tla's own bounds: no other bound is needed).     *)
(* KeepForward, ResendFirst and RetainForward say which of the spec's     *)
(* fixes the implementation runs, SuspectResend, FillGaps and            *)
(* SeparateChannels which of                                              *)
(* JGroups's deviations: FALSE, the seed's behaviour, unless the trace    *)
(* header names one (conformance/replay/sequencer.py, spec_constants).           *)
(* Acceptance: l = Len(Log) + 1 is reached, the whole log consumed; TLC's  *)
(* search depth is then Len(Log) + 1 (each step advances l by one).  The   *)
(* cfg checks no invariant: TraceMatched states the same as an invariant   *)
(* for interactive use, but its violation prints the whole behaviour,      *)
(* whose states grow with the log (quadratic output on long logs).  The    *)
(* safety properties are judged by pruning the steps that break them       *)
(* (below, "Safety properties on the trace", and TraceKeeps).              *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC, TraceLog

CONSTANTS N, MaxSeq, MaxCrashes, KeepForward, ResendFirst, RetainForward, SuspectResend, FillGaps,
          SeparateChannels

VARIABLES views, vid, crashed, sent, fwd, recv, delivered, chan, coord, holes, l,
          firstAt, highest   \* summaries of delivered (below, "Safety properties on the trace")

S == INSTANCE Sequencer

traceVars == <<views, vid, crashed, sent, fwd, recv, delivered, chan, coord, holes>>

TraceInit == S!Init /\ l = 1 /\ firstAt = [m \in S!Members |-> <<>>] /\ highest = [m \in S!Members |-> <<>>]

Rec == Log[l]
Logged(r, k) == k \in DOMAIN r

\* The logged message (when logged) equals msg.
MsgIs(msg) ==
    /\ Logged(Rec.msg, "type") => Rec.msg.type = msg.type
    /\ Logged(Rec.msg, "sender") => Rec.msg.sender = msg.sender
    /\ Logged(Rec.msg, "seqno") => Rec.msg.seqno = msg.seqno

\* Every logged state variable of member m equals its post-state value.
\* A logged state (Rec.logged) is a complete delta of the observable
\* variables the header declares (Observed, from conformance/replay/sequencer.py FIELDS, docs/trace-format.md): one the record
\* leaves out is unchanged by the step.
StateMatches(m) ==
    /\ IF Logged(Rec.state, "vid") THEN vid'[m] = Rec.state.vid
       ELSE Rec.logged /\ "vid" \in Observed => vid'[m] = vid[m]
    /\ IF Logged(Rec.state, "sent") THEN sent'[m] = Rec.state.sent
       ELSE Rec.logged /\ "sent" \in Observed => sent'[m] = sent[m]
    /\ IF Logged(Rec.state, "fwd") THEN fwd'[m] = Rec.state.fwd
       ELSE Rec.logged /\ "fwd" \in Observed => fwd'[m] = fwd[m]
    /\ IF Logged(Rec.state, "recv") THEN recv'[m] = Rec.state.recv
       ELSE Rec.logged /\ "recv" \in Observed => recv'[m] = recv[m]
    /\ IF Logged(Rec.state, "delivered")
         THEN SubSeq(delivered'[m], Len(delivered[m]) + 1, Len(delivered'[m])) = Rec.state.delivered
       ELSE Rec.logged /\ "delivered" \in Observed => delivered'[m] = delivered[m]

\* The sender p of a receive: logged as params.p.
P == Rec.params.p

SendIfLogged ==
    /\ Rec.name = "Send"
    /\ S!Send(Rec.nid)
    /\ MsgIs(IF S!IsCoord(Rec.nid) THEN S!Data(Rec.nid, sent'[Rec.nid])
                                   ELSE S!Forward(Rec.nid, sent'[Rec.nid]))
    /\ StateMatches(Rec.nid)

RecvForwardIfLogged ==
    /\ Rec.name = "RecvForward"
    /\ S!RecvForward(Rec.nid, P)
    /\ MsgIs(chan[<<P, Rec.nid>>][S!Taking(chan[<<P, Rec.nid>>], "FORWARD")])
    /\ StateMatches(Rec.nid)

RecvDataIfLogged ==
    /\ Rec.name = "RecvData"
    /\ S!RecvData(Rec.nid, P)
    /\ MsgIs(chan[<<P, Rec.nid>>][S!Taking(chan[<<P, Rec.nid>>], "DATA")])
    /\ StateMatches(Rec.nid)

InstallViewIfLogged ==
    /\ Rec.name = "InstallView"
    /\ S!InstallView(Rec.nid)
    /\ StateMatches(Rec.nid)

CrashIfLogged ==
    /\ Rec.name = "Crash"
    /\ IF Logged(Rec.params, "lost")
         THEN S!Crash(Rec.nid, Rec.params.lost)
         ELSE \E lost \in SUBSET (S!Members \ {Rec.nid}) : S!Crash(Rec.nid, lost)

\* The suspected member is logged as params.c.
SuspectIfLogged ==
    /\ Rec.name = "Suspect"
    /\ S!Suspect(Rec.nid, Rec.params.c)
    /\ StateMatches(Rec.nid)

NewViewIfLogged ==
    /\ Rec.name = "NewView"
    /\ S!NewView
    /\ Logged(Rec.params, "view") => views'[Len(views')] = Rec.params.view

-----------------------------------------------------------------------------
(* Safety properties on the trace: Sequencer.tla's state invariants over   *)
(* the delivery histories, NoDuplicates, Integrity, SenderFIFO and         *)
(* TotalOrder, each as a step keeps it (Kept): the step's new deliveries    *)
(* against what was delivered before, given the property held there.  TLC *)
(* knows it held there because a step that breaks one is pruned            *)
(* (TraceKeeps, the cfg's ACTION_CONSTRAINT).  The order properties judge  *)
(* each member's first delivery of a message, as the replay does (a       *)
(* repeat is NoDuplicates' alone).  Evaluating the invariants themselves   *)
(* costs O(history^2) a state, and even the step's new deliveries against  *)
(* the whole history O(history) a step: on a 3,000-event log validated in  *)
(* 20 s, past five minutes and 60 s.  So two summaries of the histories    *)
(* are kept beside them, out of the VIEW as delivered is: firstAt[m], each  *)
(* message m delivered -> the position of its first delivery, and          *)
(* highest[m], each sender -> the highest seqno m delivered of it; a step   *)
(* then costs what it appends, plus for TotalOrder what another member     *)
(* delivered after the new message.  GapFreeFIFO is not judged here: it is  *)
(* stated for senders that never crash, which a state of a trace cannot    *)
(* know before the trace ends (the replay judges it at the end).           *)

\* m's deliveries the step appends (positions in delivered'[m]).
New(m) == Len(delivered[m]) + 1 .. Len(delivered'[m])

\* The summaries after m's history d grew from its first k entries.
RECURSIVE AddFirstAt(_, _, _)
AddFirstAt(f, d, k) == IF k >= Len(d) THEN f ELSE AddFirstAt(f @@ (d[k + 1] :> (k + 1)), d, k + 1)
RECURSIVE AddHighest(_, _, _)
AddHighest(h, d, k) ==
    IF k >= Len(d) THEN h
    ELSE LET x == d[k + 1]
         IN AddHighest((x[1] :> IF x[1] \in DOMAIN h /\ h[x[1]] > x[2] THEN h[x[1]] ELSE x[2]) @@ h, d, k + 1)

Summaries ==
    /\ firstAt' = [m \in S!Members |-> IF New(m) = {} THEN firstAt[m]
                                     ELSE AddFirstAt(firstAt[m], delivered'[m], Len(delivered[m]))]
    /\ highest' = [m \in S!Members |-> IF New(m) = {} THEN highest[m]
                                     ELSE AddHighest(highest[m], delivered'[m], Len(delivered[m]))]

\* y is above what m delivered of its sender before its j-th delivery (j
\* new): so m had not delivered y then.  Cheap (highest has one entry a
\* sender), it spares the look-ups in firstAt (a linear search in TLC) on
\* the usual step.
Above(m, j, y) ==
    /\ y[1] \in DOMAIN highest[m] => highest[m][y[1]] < y[2]
    /\ \A i \in Len(delivered[m]) + 1 .. j - 1 : delivered'[m][i][1] = y[1] => delivered'[m][i][2] < y[2]

\* m delivered y before its j-th delivery, when j is new.
Before(m, j, y) ==
    /\ ~Above(m, j, y)
    /\ y \in DOMAIN firstAt[m] \/ \E i \in Len(delivered[m]) + 1 .. j - 1 : delivered'[m][i] = y

KeptNoDuplicates ==
    \A m \in S!Members : \A j \in New(m) : ~Before(m, j, delivered'[m][j])

KeptIntegrity ==
    \A m \in S!Members : \A j \in New(m) : delivered'[m][j][2] \in 1 .. sent'[delivered'[m][j][1]]

\* A first delivery is above every earlier one of its sender (a repeat is
\* NoDuplicates').
KeptSenderFIFO ==
    \A m \in S!Members : \A j \in New(m) : Above(m, j, delivered'[m][j]) \/ Before(m, j, delivered'[m][j])

\* Two members that order a pair differently: the pair became common in
\* this step, so its later element at one of the two is new there.  So for
\* each new first delivery x at m: of what m2 delivered first after x,
\* nothing was delivered by m before x.
KeptTotalOrder ==
    \A m \in S!Members : \A j \in New(m) :
        LET x == delivered'[m][j] IN
        Before(m, j, x)
        \/ \A m2 \in S!Members \ {m} :
             (x[1] \in DOMAIN highest'[m2] /\ highest'[m2][x[1]] >= x[2] /\ x \in DOMAIN firstAt'[m2]) =>
             \A q \in firstAt'[m2][x] + 1 .. Len(delivered'[m2]) :
                 LET y == delivered'[m2][q] IN firstAt'[m2][y] = q => ~Before(m, j, y)

\* Each property the trace is judged on, as the step keeps it.
Kept == [NoDuplicates |-> KeptNoDuplicates, Integrity |-> KeptIntegrity,
         SenderFIFO |-> KeptSenderFIFO, TotalOrder |-> KeptTotalOrder]

-----------------------------------------------------------------------------
(* The end of a quiescent run: conformance/tlctrace.py appends one entry    *)
(* named "End" (nid 0) to the log when the end record says quiescent.  The *)
(* End step changes nothing; what the claim promises is judged there       *)
(* (EndKept, the same properties as conformance/replay/sequencer.py's at_end):    *)
(* Sequencer.tla's Settled, every message of a sender that never crashed   *)
(* delivered by every member that never crashed (EventualDelivery, read    *)
(* from firstAt), and its Quiescent (nothing in flight, every live member  *)
(* in the last view, no view change pending).  A false claim breaks one:   *)
(* TraceKeeps prunes the End step as any step that breaks a property.      *)
QuiescentEnd == Rec.name = "End" /\ UNCHANGED traceVars

EndEventualDelivery ==
    \A s, r \in S!Members : \A q \in 1..sent[s] :
        <<s, q>> \in DOMAIN firstAt[r] \/ s \in crashed \/ r \in crashed
EndKept == [EventualDelivery |-> EndEventualDelivery, Quiescent |-> S!Quiescent]

\* The properties the step breaks (Kept evaluated once: TLC caches a LET's
\* value, not a definition's); the End step: EndKept's.
Broken == LET k == IF Rec.name = "End" THEN EndKept ELSE Kept IN {p \in DOMAIN k : ~k[p]}

-----------------------------------------------------------------------------
TraceNext ==
    /\ l <= Len(Log)
    /\ \/ SendIfLogged
       \/ RecvForwardIfLogged
       \/ RecvDataIfLogged
       \/ InstallViewIfLogged
       \/ SuspectIfLogged
       \/ CrashIfLogged
       \/ NewViewIfLogged
       \/ QuiescentEnd
    /\ l' = l + 1
    /\ Summaries

TraceSpec == TraceInit /\ [][TraceNext]_<<traceVars, l, firstAt, highest>>

\* Two states that agree on the spec's variables and the cursor are the same;
\* `delivered` is left out: Sequencer.tla only appends to it (no action reads
\* it) and StateMatches compares only what a step appends, so two states that
\* differ in it alone match the same rest of the log. Fingerprinting it made
\* TLC's step k cost O(k) (68 % of TLC's time on a 42,000-event log).
TraceView == <<views, vid, crashed, sent, fwd, recv, chan, coord, holes, l>>

\* Violated exactly when the whole log was consumed: the trace is accepted
\* (tlctrace.py reads the same from TLC's search depth, without the printout).
TraceMatched == l <= Len(Log)

-----------------------------------------------------------------------------
(* Diagnostics (tlctrace.py runs them with DiagAt = the first unmatched    *)
(* record): the state of that record's member and the channels into it,    *)
(* and every spec action enabled in a state that matched the line before.  *)

\* (guarded: TLC evaluates constant definitions once at start-up, and applying
\* Log out of its domain there makes it print the whole log in an error it then
\* discards: seconds on a long log)
DiagNode == IF DiagAt \in 1..Len(Log) /\ Log[DiagAt].nid \in S!Members THEN Log[DiagAt].nid ELSE 1

DiagVars == [node |-> DiagNode, vid |-> vid[DiagNode], view |-> S!View(DiagNode), coord |-> coord[DiagNode],
             sent |-> sent[DiagNode], fwd |-> fwd[DiagNode], recv |-> recv[DiagNode],
             delivered |-> delivered[DiagNode], crashed |-> crashed,
             into |-> [p \in S!Members |-> chan[<<p, DiagNode>>]]]

Str(n) == ToString(n)

DiagEnabled ==
    {"Send(" \o Str(m) \o ")" : m \in {m \in S!Members : ENABLED S!Send(m)}}
    \cup {"RecvForward(" \o Str(e[1]) \o ", " \o Str(e[2]) \o ")" :
            e \in {e \in S!Members \X S!Members : ENABLED S!RecvForward(e[1], e[2])}}
    \cup {"RecvData(" \o Str(e[1]) \o ", " \o Str(e[2]) \o ")" :
            e \in {e \in S!Members \X S!Members : ENABLED S!RecvData(e[1], e[2])}}
    \cup {"InstallView(" \o Str(m) \o ")" : m \in {m \in S!Members : ENABLED S!InstallView(m)}}
    \cup {"Suspect(" \o Str(e[1]) \o ", " \o Str(e[2]) \o ")" :
            e \in {e \in S!Members \X S!Members : ENABLED S!Suspect(e[1], e[2])}}
    \cup {"Crash(" \o Str(m) \o ")" : m \in {m \in S!Members : ENABLED S!Crash(m, {})}}
    \cup (IF ENABLED S!NewView THEN {"NewView"} ELSE {})

TraceDiagnostic ==
    l = DiagAt => /\ PrintT(<<"groupcheck-diag", DiagVars>>)
                  /\ PrintT(<<"groupcheck-enabled", DiagEnabled>>)

\* The cfg's ACTION_CONSTRAINT: a step that breaks a property is no step of
\* a behaviour the trace is judged on, so the search stops at the first
\* record where every matching behaviour has broken one (TLC's depth, as a
\* rejected step).  tlctrace.py tells the two apart with DiagAt = that
\* record: the steps before it are pruned as above, its own are kept and
\* print what they break, and the steps after it are all kept, so the depth
\* of that run is the step verdict on the rest of the log.
TraceKeeps ==
    IF DiagAt = 0 \/ l < DiagAt THEN Broken = {}
    ELSE IF l = DiagAt THEN LET b == Broken IN b # {} => PrintT(<<"groupcheck-broken", b, DiagVars'>>)
    ELSE TRUE
=============================================================================
