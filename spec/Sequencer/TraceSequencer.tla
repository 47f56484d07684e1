--------------------------- MODULE TraceSequencer ---------------------------
(***************************************************************************)
(* Trace validation of SEQUENCER (DESIGN.md section 1, link (3)): TLC      *)
(* checks that some behaviour of Sequencer.tla produces the logged trace.  *)
(* conformance/tlctrace.py writes the trace as the module TraceLog (in a   *)
(* temporary directory) defining Log, a sequence of records                *)
(*   [name, nid, p, view, lost, hasLost, hasMsg, mtype, msender, mseqno,   *)
(*    state]                                                               *)
(* with state a record holding only the variables member nid's step       *)
(* assigned (format 2's delta; delivered holds the elements appended).     *)
(* Everything the record does not log (channels, other members, the lost   *)
(* subset of a Crash without "lost") is left to TLC's non-determinism.     *)
(* The bounds are the header's constants N, MaxSeq, MaxCrashes.            *)
(* Acceptance: TraceMatched is violated, i.e. l = Len(Log) + 1 is reached. *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC, TraceLog

CONSTANTS N, MaxSeq, MaxCrashes

VARIABLES views, vid, crashed, sent, fwd, recv, delivered, chan, l

S == INSTANCE Sequencer

traceVars == <<views, vid, crashed, sent, fwd, recv, delivered, chan>>

TraceInit == S!Init /\ l = 1

Rec == Log[l]

\* The logged message equals msg (a record [type, sender, seqno]).
MsgIs(msg) == Rec.mtype = msg.type /\ Rec.msender = msg.sender /\ Rec.mseqno = msg.seqno

\* Every logged state variable of member m equals its post-state value.
Has(k) == k \in DOMAIN Rec.state
StateMatches(m) ==
    /\ Has("vid") => vid'[m] = Rec.state.vid
    /\ Has("sent") => sent'[m] = Rec.state.sent
    /\ Has("fwd") => fwd'[m] = Rec.state.fwd
    /\ Has("recv") => recv'[m] = Rec.state.recv
    /\ Has("delivered") => delivered'[m] = delivered[m] \o Rec.state.delivered

SendIfLogged ==
    /\ Rec.name = "Send"
    /\ S!Send(Rec.nid)
    /\ Rec.hasMsg => MsgIs(IF S!IsCoord(Rec.nid) THEN S!Data(Rec.nid, sent'[Rec.nid])
                                               ELSE S!Forward(Rec.nid, sent'[Rec.nid]))
    /\ StateMatches(Rec.nid)

RecvForwardIfLogged ==
    /\ Rec.name = "RecvForward"
    /\ S!RecvForward(Rec.nid, Rec.p)
    /\ Rec.hasMsg => MsgIs(Head(chan[<<Rec.p, Rec.nid>>]))
    /\ StateMatches(Rec.nid)

RecvDataIfLogged ==
    /\ Rec.name = "RecvData"
    /\ S!RecvData(Rec.nid, Rec.p)
    /\ Rec.hasMsg => MsgIs(Head(chan[<<Rec.p, Rec.nid>>]))
    /\ StateMatches(Rec.nid)

InstallViewIfLogged ==
    /\ Rec.name = "InstallView"
    /\ S!InstallView(Rec.nid)
    /\ StateMatches(Rec.nid)

CrashIfLogged ==
    /\ Rec.name = "Crash"
    /\ IF Rec.hasLost
         THEN S!Crash(Rec.nid, Rec.lost)
         ELSE \E lost \in SUBSET (S!Members \ {Rec.nid}) : S!Crash(Rec.nid, lost)

NewViewIfLogged ==
    /\ Rec.name = "NewView"
    /\ S!NewView
    /\ views'[Len(views')] = Rec.view

TraceNext ==
    /\ l <= Len(Log)
    /\ \/ SendIfLogged
       \/ RecvForwardIfLogged
       \/ RecvDataIfLogged
       \/ InstallViewIfLogged
       \/ CrashIfLogged
       \/ NewViewIfLogged
    /\ l' = l + 1

TraceSpec == TraceInit /\ [][TraceNext]_<<traceVars, l>>

\* Two states that agree on the spec's variables and the cursor are the same.
TraceView == <<traceVars, l>>

\* Violated exactly when the whole log was consumed: the trace is accepted.
TraceMatched == l <= Len(Log)

\* Reports the deepest cursor reached (TLC's search depth is l).
TraceAlias == [l |-> l, vid |-> vid, sent |-> sent, fwd |-> fwd, recv |-> recv,
               delivered |-> delivered, views |-> views, crashed |-> crashed]
=============================================================================
