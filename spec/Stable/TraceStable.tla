----------------------------- MODULE TraceStable -----------------------------
(***************************************************************************)
(* Trace validation of pbcast.STABLE (docs/architecture.md, link (3)): TLC *)
(* checks that some behaviour of Stable.tla produces the logged trace.     *)
(* conformance/tlctrace.py writes the trace as the module TraceLog (in a   *)
(* temporary directory) defining Log, a sequence of records                *)
(*   [name, nid, params, msg, state]                                       *)
(* with state holding the variables of member nid the writer logged: a     *)
(* format 2 delta (the variables that changed since the member's last     *)
(* record, each whole), compared with the member's post-state.  Vectors    *)
(* (delivered, received, purged) leave zero entries out; a digest entry    *)
(* [low, high] is given as the record [low |-> .., high |-> ..]             *)
(* (conformance/replay/stable.py encode); view and heardFrom are sets.            *)
(*                                                                         *)
(* Not logged, left to the spec: net (the messages in flight; a datagram   *)
(* the network lost simply stays in net, which no guard reads, so          *)
(* LoseMessage is never taken, as in the Python replay), the group, and    *)
(* the coordinator's half of a Join (logged by the joiner).  A receive     *)
(* takes exactly the logged message, which must be in flight.  Bounds:     *)
(* the header's N, NInit, MaxSeq; Senders is 1..N (every member may send,  *)
(* as in the replay).  Given the logged messages every step is             *)
(* deterministic, so no other bound is needed: one state per record, with  *)
(* or without state logged.                                                *)
(* Acceptance: l = Len(Log) + 1 is reached, the whole log consumed; TLC's  *)
(* search depth is then Len(Log) + 1 (each step advances l by one).  The   *)
(* cfg checks no invariant: TraceMatched states the same as an invariant   *)
(* for interactive use, but its violation prints the whole behaviour; the  *)
(* safety properties are judged by pruning the steps that break them       *)
(* (TraceKeeps).                                                           *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC, TraceLog

CONSTANTS N, NInit, Senders, MaxSeq, ResetOnDifferentMembers, ResetOnViewChange,
          CoordSwitchesAtJoin, GossipMergedDigest

VARIABLES group, view, sent, delivered, received, purged, digest, heardFrom, net, l

S == INSTANCE Stable

traceVars == <<group, view, sent, delivered, received, purged, digest, heardFrom, net>>

TraceInit == S!Init /\ l = 1

Rec == Log[l]
Logged(r, k) == k \in DOMAIN r

\* A logged vector (zero entries left out) equals the function f on Members.
VecIs(f, v) == /\ DOMAIN v \subseteq S!Members
               /\ \A x \in S!Members : f[x] = IF x \in DOMAIN v THEN v[x] ELSE 0

\* The logged message (each field it logs) equals m.  A STABILITY message
\* may be logged by the lows of its digest alone (lows): JGroups's highs are
\* its highest received seqnos, not the spec's highest delivered.
MsgIs(m) == \A k \in DOMAIN Rec.msg :
               IF k = "lows"
               THEN "digest" \in DOMAIN m /\ Rec.msg.lows = [x \in DOMAIN m.digest |-> m.digest[x].low]
               ELSE k \in DOMAIN m /\ Rec.msg[k] = m[k]

\* Every logged state variable of member q equals its post-state value.
\* A logged state (Rec.logged) is a complete delta of the observable
\* variables the header declares (Observed, from conformance/replay/stable.py FIELDS, docs/trace-format.md): one the record
\* leaves out is unchanged by the step.
StateMatches(q) ==
    /\ IF Logged(Rec.state, "view") THEN view'[q] = Rec.state.view
       ELSE Rec.logged /\ "view" \in Observed => view'[q] = view[q]
    /\ IF Logged(Rec.state, "sent") THEN sent'[q] = Rec.state.sent
       ELSE Rec.logged /\ "sent" \in Observed => sent'[q] = sent[q]
    /\ IF Logged(Rec.state, "delivered") THEN VecIs(delivered'[q], Rec.state.delivered)
       ELSE Rec.logged /\ "delivered" \in Observed => delivered'[q] = delivered[q]
    /\ IF Logged(Rec.state, "received") THEN VecIs(received'[q], Rec.state.received)
       ELSE Rec.logged /\ "received" \in Observed => received'[q] = received[q]
    /\ IF Logged(Rec.state, "purged") THEN VecIs(purged'[q], Rec.state.purged)
       ELSE Rec.logged /\ "purged" \in Observed => purged'[q] = purged[q]
    /\ IF Logged(Rec.state, "digest") THEN digest'[q] = Rec.state.digest
       ELSE Rec.logged /\ "digest" \in Observed => digest'[q] = digest[q]
    /\ IF Logged(Rec.state, "heardFrom") THEN heardFrom'[q] = Rec.state.heardFrom
       ELSE Rec.logged /\ "heardFrom" \in Observed => heardFrom'[q] = heardFrom[q]

\* The sender p of a receive or retransmission: logged as params.p.
P == Rec.params.p

\* Member Rec.nid takes the logged message of `type` from P: it is in flight
\* and the action removes it.
Takes(type, Act) ==
    \E m \in S!InFlight(type, Rec.nid, P) : MsgIs(m) /\ Act /\ m \notin net'

MulticastIfLogged ==
    /\ Rec.name = "Multicast"
    /\ S!Multicast(Rec.nid)
    /\ MsgIs([type |-> "data", from |-> Rec.nid, seq |-> sent'[Rec.nid]])
    /\ StateMatches(Rec.nid)

ReceiveDataIfLogged ==
    /\ Rec.name = "ReceiveData"
    /\ Takes("data", S!ReceiveData(Rec.nid, P))
    /\ StateMatches(Rec.nid)

RetransmitIfLogged ==
    /\ Rec.name = "Retransmit"
    /\ S!Retransmit(Rec.nid, P)
    /\ StateMatches(Rec.nid)

SendStableIfLogged ==
    /\ Rec.name = "SendStable"
    /\ S!SendStable(Rec.nid)
    /\ MsgIs([type |-> "stable", from |-> Rec.nid, vector |-> S!Vector(Rec.nid)])
    /\ StateMatches(Rec.nid)

ReceiveStableIfLogged ==
    /\ Rec.name = "ReceiveStable"
    /\ Takes("stable", S!ReceiveStable(Rec.nid, P))
    /\ StateMatches(Rec.nid)

SendStabilityIfLogged ==
    /\ Rec.name = "SendStability"
    /\ S!SendStability(Rec.nid)
    /\ MsgIs([type |-> "stability", from |-> Rec.nid, digest |-> digest[Rec.nid]])
    /\ StateMatches(Rec.nid)

ReceiveStabilityIfLogged ==
    /\ Rec.name = "ReceiveStability"
    /\ Takes("stability", S!ReceiveStability(Rec.nid, P))
    /\ StateMatches(Rec.nid)

\* nid is the joiner; params.coord the coordinator that admitted it.
JoinIfLogged ==
    /\ Rec.name = "Join"
    /\ Logged(Rec.params, "coord") => group # {} /\ Rec.params.coord = S!Coordinator(group)
    /\ S!Join(Rec.nid)
    /\ StateMatches(Rec.nid)

InstallViewIfLogged ==
    /\ Rec.name = "InstallView"
    /\ S!InstallView(Rec.nid)
    /\ StateMatches(Rec.nid)

-----------------------------------------------------------------------------
(* Safety properties on the trace: Stable.tla's invariants SafeGC and      *)
(* StabilityBound, each after the step (Kept): both are small predicates   *)
(* of the state, read whole.  A step that breaks one is pruned             *)
(* (TraceKeeps, the cfg's ACTION_CONSTRAINT, below), so the search stops   *)
(* at the first record where every behaviour matching the log so far has   *)
(* broken one.                                                             *)
Kept == [SafeGC |-> S!SafeGC', StabilityBound |-> S!StabilityBound']

-----------------------------------------------------------------------------
(* The end of a quiescent run: conformance/tlctrace.py appends one entry    *)
(* named "End" (nid 0) to the log when the end record says quiescent.  The *)
(* End step changes nothing; what the claim promises is judged there       *)
(* (EndKept, the same properties as conformance/replay/stable.py's at_end, the    *)
(* states Stable.tla's LastMessageDelivered and EventuallyCollected lead   *)
(* to): every member of the group delivered every message of every sender  *)
(* of its view, and purged what every member of the group that has that   *)
(* sender in its view delivered.  (The spec's net is a set no receive      *)
(* empties: "nothing in flight" has no meaning here.)  A false claim       *)
(* breaks one: TraceKeeps prunes the End step as any step that breaks a    *)
(* property.                                                               *)
QuiescentEnd == Rec.name = "End" /\ UNCHANGED traceVars

EndGroup == {m \in S!Members : view[m] # {}}
EndLastMessageDelivered == \A p \in EndGroup : \A x \in view[p] : delivered[p][x] >= sent[x]
EndEventuallyCollected ==
    \A p \in EndGroup : \A x \in view[p] : \E q \in EndGroup : x \in view[q] /\ purged[p][x] >= delivered[q][x]
EndKept == [LastMessageDelivered |-> EndLastMessageDelivered, EventuallyCollected |-> EndEventuallyCollected]

\* The properties the step breaks (Kept evaluated once: TLC caches a LET's
\* value, not a definition's); the End step: EndKept's.
Broken == LET k == IF Rec.name = "End" THEN EndKept ELSE Kept IN {p \in DOMAIN k : ~k[p]}

-----------------------------------------------------------------------------
TraceNext ==
    /\ l <= Len(Log)
    /\ Rec.nid \in S!Members \/ Rec.name = "End"
    /\ \/ MulticastIfLogged
       \/ ReceiveDataIfLogged
       \/ RetransmitIfLogged
       \/ SendStableIfLogged
       \/ ReceiveStableIfLogged
       \/ SendStabilityIfLogged
       \/ ReceiveStabilityIfLogged
       \/ JoinIfLogged
       \/ InstallViewIfLogged
       \/ QuiescentEnd
    /\ l' = l + 1

TraceSpec == TraceInit /\ [][TraceNext]_<<traceVars, l>>

\* Two states that agree on the spec's variables and the cursor are the same.
TraceView == <<traceVars, l>>

\* Violated exactly when the whole log was consumed: the trace is accepted
\* (tlctrace.py reads the same from TLC's search depth, without the printout).
TraceMatched == l <= Len(Log)

-----------------------------------------------------------------------------
(* Diagnostics (tlctrace.py runs them with DiagAt = the first unmatched    *)
(* record): the state of that record's member and the messages in flight  *)
(* to it, and every spec action enabled in a state that matched the line   *)
(* before.                                                                 *)

\* (guarded: TLC evaluates constant definitions once at start-up, where
\* DiagAt = 0 is outside the log)
DiagNode == IF DiagAt \in 1..Len(Log) /\ Log[DiagAt].nid \in S!Members THEN Log[DiagAt].nid ELSE 1

DiagVars == [node |-> DiagNode, group |-> group, view |-> view[DiagNode],
             sent |-> sent[DiagNode], delivered |-> delivered[DiagNode],
             received |-> received[DiagNode], purged |-> purged[DiagNode],
             digest |-> digest[DiagNode], heardFrom |-> heardFrom[DiagNode],
             into |-> {m \in net : m.to = DiagNode}]

Str(n) == ToString(n)
Pairs == S!Members \X S!Members

DiagEnabled ==
    {"Multicast(" \o Str(p) \o ")" : p \in {p \in S!Members : ENABLED S!Multicast(p)}}
    \cup {"ReceiveData(" \o Str(e[1]) \o ", " \o Str(e[2]) \o ")" :
            e \in {e \in Pairs : ENABLED S!ReceiveData(e[1], e[2])}}
    \cup {"Retransmit(" \o Str(e[1]) \o ", " \o Str(e[2]) \o ")" :
            e \in {e \in Pairs : ENABLED S!Retransmit(e[1], e[2])}}
    \cup {"SendStable(" \o Str(p) \o ")" : p \in {p \in S!Members : ENABLED S!SendStable(p)}}
    \cup {"ReceiveStable(" \o Str(e[1]) \o ", " \o Str(e[2]) \o ")" :
            e \in {e \in Pairs : ENABLED S!ReceiveStable(e[1], e[2])}}
    \cup {"SendStability(" \o Str(p) \o ")" : p \in {p \in S!Members : ENABLED S!SendStability(p)}}
    \cup {"ReceiveStability(" \o Str(e[1]) \o ", " \o Str(e[2]) \o ")" :
            e \in {e \in Pairs : ENABLED S!ReceiveStability(e[1], e[2])}}
    \cup {"Join(" \o Str(j) \o ")" : j \in {j \in S!Members : ENABLED S!Join(j)}}
    \cup {"InstallView(" \o Str(p) \o ")" : p \in {p \in S!Members : ENABLED S!InstallView(p)}}

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
