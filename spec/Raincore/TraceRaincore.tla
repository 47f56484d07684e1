---------------------------- MODULE TraceRaincore ----------------------------
(***************************************************************************)
(* Trace validation of the Raincore token ring (docs/architecture.md, link *)
(* (3)): TLC checks that some behaviour of Raincore.tla produces the       *)
(* logged trace.  conformance/tlctrace.py writes the trace as the module   *)
(* TraceLog (in a temporary directory) defining Log, a sequence of records *)
(*   [name, nid, params, msg, state]                                       *)
(* with state holding the variables of node nid the writer logged: a       *)
(* format 2 delta (the variables that changed since the node's last        *)
(* record, each whole), compared with the node's post-state.  newNodes is  *)
(* a set; globalView a sequence of views ([] is NullView); lastToken and   *)
(* token are the spec's token records.  nid is 0 for TokenLoss (an         *)
(* environment record).                                                    *)
(*                                                                         *)
(* The variants (TimelyTimeouts, StableFounder, NeutralRecovery,           *)
(* FreshClaim, FreshView, TokenRingClaim, YieldClaim, Timely911) and N,    *)
(* InitSize, InitSeq, ColdStart come from the trace header (TokenRingClaim,*)
(* YieldClaim and Timely911: FALSE when a header lacks them, as in the     *)
(* Python replay).                                                         *)
(*                                                                         *)
(* Every message an action takes is logged whole (the token or 911 it      *)
(* receives, the one that came back undelivered, the token lost); its      *)
(* "type" field names the spec's message set (TOKEN: tokenMsgs, 911:       *)
(* msgs911) and the other fields must equal the message's.  Not logged,    *)
(* left to the spec: the messages in flight, the other nodes, the timers   *)
(* (a timeout is an action enabled whenever its token state holds).  Given *)
(* the logged messages every action is deterministic, so no bound beyond  *)
(* the header's constants is needed: one state per record, with or        *)
(* without state logged.                                                   *)
(* Acceptance: l = Len(Log) + 1 is reached, the whole log consumed; TLC's  *)
(* search depth is then Len(Log) + 1 (each step advances l by one).  The   *)
(* cfg checks no invariant: TraceMatched states the same as an invariant   *)
(* for interactive use, but its violation prints the whole behaviour.      *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC, TraceLog

CONSTANTS N, InitSize, InitSeq, ColdStart, TimelyTimeouts, StableFounder,
          NeutralRecovery, FreshClaim, FreshView, TokenRingClaim, YieldClaim,
          Timely911

VARIABLES status, viewState, tokenState, globalView, lastToken, localView,
          newNodes, token, tokenMsgs, msgs911, recovered, l

S == INSTANCE Raincore

traceVars == <<status, viewState, tokenState, globalView, lastToken, localView,
               newNodes, token, tokenMsgs, msgs911, recovered>>

TraceInit == S!Init /\ l = 1

Rec == Log[l]
Logged(r, k) == k \in DOMAIN r

\* The logged message is m of the given type: every logged field but
\* "type" (which names the message set) equals m's.
MsgIs(m, type) ==
    /\ Logged(Rec.msg, "type") => Rec.msg.type = type
    /\ \A k \in DOMAIN Rec.msg \ {"type"} : k \in DOMAIN m /\ Rec.msg[k] = m[k]

\* Every logged state variable of node n equals its post-state value.
\* A logged state (Rec.logged) is a complete delta of the observable
\* variables the header declares (Observed, from conformance/replay/raincore.py FIELDS, docs/trace-format.md): one the record
\* leaves out is unchanged by the step.
StateMatches(n) ==
    /\ IF Logged(Rec.state, "status") THEN status'[n] = Rec.state.status
       ELSE Rec.logged /\ "status" \in Observed => status'[n] = status[n]
    /\ IF Logged(Rec.state, "viewState") THEN viewState'[n] = Rec.state.viewState
       ELSE Rec.logged /\ "viewState" \in Observed => viewState'[n] = viewState[n]
    /\ IF Logged(Rec.state, "tokenState") THEN tokenState'[n] = Rec.state.tokenState
       ELSE Rec.logged /\ "tokenState" \in Observed => tokenState'[n] = tokenState[n]
    /\ IF Logged(Rec.state, "globalView") THEN globalView'[n] = Rec.state.globalView
       ELSE Rec.logged /\ "globalView" \in Observed => globalView'[n] = globalView[n]
    /\ IF Logged(Rec.state, "lastToken") THEN lastToken'[n] = Rec.state.lastToken
       ELSE Rec.logged /\ "lastToken" \in Observed => lastToken'[n] = lastToken[n]
    /\ IF Logged(Rec.state, "localView") THEN localView'[n] = Rec.state.localView
       ELSE Rec.logged /\ "localView" \in Observed => localView'[n] = localView[n]
    /\ IF Logged(Rec.state, "newNodes") THEN newNodes'[n] = Rec.state.newNodes
       ELSE Rec.logged /\ "newNodes" \in Observed => newNodes'[n] = newNodes[n]
    /\ IF Logged(Rec.state, "token") THEN token'[n] = Rec.state.token
       ELSE Rec.logged /\ "token" \in Observed => token'[n] = token[n]
    /\ IF Logged(Rec.state, "recovered") THEN recovered'[n] = Rec.state.recovered
       ELSE Rec.logged /\ "recovered" \in Observed => recovered'[n] = recovered[n]

n0 == Rec.nid

\* A node action with no message.
Plain(name, Act) == Rec.name = name /\ Act /\ StateMatches(n0)

InitializationIfLogged == Plain("Initialization", S!Initialization(n0))

TokenReceivedIfLogged ==
    /\ Rec.name = "TokenReceived"
    /\ \E m \in tokenMsgs : MsgIs(m, "TOKEN") /\ S!TokenReceived(n0, m)
    /\ StateMatches(n0)

911ReceivedIfLogged ==
    /\ Rec.name = "911Received"
    /\ \E m \in msgs911 : MsgIs(m, "911") /\ S!911Received(n0, m)
    /\ StateMatches(n0)

TokenDeliveryFailureIfLogged ==
    /\ Rec.name = "TokenDeliveryFailure"
    /\ \E m \in tokenMsgs : MsgIs(m, "TOKEN") /\ S!TokenDeliveryFailure(n0, m)
    /\ StateMatches(n0)

911DeliveryFailureIfLogged ==
    /\ Rec.name = "911DeliveryFailure"
    /\ \E m \in msgs911 : MsgIs(m, "911") /\ S!911DeliveryFailure(n0, m)
    /\ StateMatches(n0)

EatingTimeoutIfLogged == Plain("EatingTimeout", S!EatingTimeout(n0))
HungryTimeoutIfLogged == Plain("HungryTimeout", S!HungryTimeout(n0))
StarvingTimeoutIfLogged == Plain("StarvingTimeout", S!StarvingTimeout(n0))

\* The environment: a crash, a recovery with retained state, a new node's
\* join by 911 (each logged by the node concerned), a token lost in transit.
CrashIfLogged == Plain("Crash", S!Crash(n0))
RecoverIfLogged == Plain("Recover", S!Recover(n0))
JoinIfLogged == Plain("Join", S!Join(n0))

TokenLossIfLogged ==
    /\ Rec.name = "TokenLoss"
    /\ \E m \in tokenMsgs : MsgIs(m, "TOKEN") /\ S!TokenLoss(m)

-----------------------------------------------------------------------------
(* Safety properties on the trace: Raincore.tla's invariants               *)
(* AtMostOneToken and ConsistentHistory, each after the step (Kept), read  *)
(* whole: both are small predicates of the ring's state.  A step that      *)
(* breaks one is pruned (TraceKeeps, the cfg's ACTION_CONSTRAINT, below),  *)
(* so the search stops at the first record where every behaviour matching  *)
(* the log so far has broken one.                                          *)
Kept == [AtMostOneToken |-> S!AtMostOneToken', ConsistentHistory |-> S!ConsistentHistory']

\* The properties the step breaks (Kept evaluated once: TLC caches a LET's
\* value, not a definition's).
Broken == LET k == Kept IN {p \in DOMAIN k : ~k[p]}

-----------------------------------------------------------------------------
TraceNext ==
    /\ l <= Len(Log)
    /\ Rec.name = "TokenLoss" \/ n0 \in S!Node
    /\ \/ InitializationIfLogged
       \/ TokenReceivedIfLogged
       \/ 911ReceivedIfLogged
       \/ TokenDeliveryFailureIfLogged
       \/ 911DeliveryFailureIfLogged
       \/ EatingTimeoutIfLogged
       \/ HungryTimeoutIfLogged
       \/ StarvingTimeoutIfLogged
       \/ CrashIfLogged
       \/ RecoverIfLogged
       \/ JoinIfLogged
       \/ TokenLossIfLogged
    /\ l' = l + 1

TraceSpec == TraceInit /\ [][TraceNext]_<<traceVars, l>>

\* Two states that agree on the spec's variables and the cursor are the same.
TraceView == <<traceVars, l>>

\* Violated exactly when the whole log was consumed: the trace is accepted
\* (tlctrace.py reads the same from TLC's search depth, without the printout).
TraceMatched == l <= Len(Log)

-----------------------------------------------------------------------------
(* Diagnostics (tlctrace.py runs them with DiagAt = the first unmatched    *)
(* record): the state of that record's node (node 1 for a TokenLoss) and  *)
(* the messages in transit to it or from it (a delivery failure takes one  *)
(* it sent), and every spec action enabled in a state that matched the    *)
(* line before.                                                            *)

\* (guarded: TLC evaluates constant definitions once at start-up, where
\* DiagAt = 0 is outside the log)
DiagNode == IF DiagAt \in 1..Len(Log) /\ Log[DiagAt].nid \in S!Node THEN Log[DiagAt].nid ELSE 1

DiagVars == [node |-> DiagNode, status |-> status[DiagNode],
             viewState |-> viewState[DiagNode], tokenState |-> tokenState[DiagNode],
             globalView |-> globalView[DiagNode], lastToken |-> lastToken[DiagNode],
             localView |-> localView[DiagNode], newNodes |-> newNodes[DiagNode],
             token |-> token[DiagNode], recovered |-> recovered[DiagNode],
             tokens |-> {m \in tokenMsgs : DiagNode \in {m.cur, m.dest}},
             msgs911 |-> {m \in msgs911 : DiagNode \in {m.cur, m.dest}}]

Str(n) == ToString(n)
Named(name, Act(_)) == {name \o "(" \o Str(n) \o ")" : n \in {n \in S!Node : Act(n)}}

DiagEnabled ==
    Named("Initialization", LAMBDA n : ENABLED S!Initialization(n))
    \cup Named("TokenReceived", LAMBDA n : ENABLED (\E m \in tokenMsgs : S!TokenReceived(n, m)))
    \cup Named("911Received", LAMBDA n : ENABLED (\E m \in msgs911 : S!911Received(n, m)))
    \cup Named("TokenDeliveryFailure",
               LAMBDA n : ENABLED (\E m \in tokenMsgs : S!TokenDeliveryFailure(n, m)))
    \cup Named("911DeliveryFailure",
               LAMBDA n : ENABLED (\E m \in msgs911 : S!911DeliveryFailure(n, m)))
    \cup Named("EatingTimeout", LAMBDA n : ENABLED S!EatingTimeout(n))
    \cup Named("HungryTimeout", LAMBDA n : ENABLED S!HungryTimeout(n))
    \cup Named("StarvingTimeout", LAMBDA n : ENABLED S!StarvingTimeout(n))
    \cup Named("Crash", LAMBDA n : ENABLED S!Crash(n))
    \cup Named("Recover", LAMBDA n : ENABLED S!Recover(n))
    \cup Named("Join", LAMBDA n : ENABLED S!Join(n))
    \cup (IF tokenMsgs # {} THEN {"TokenLoss"} ELSE {})

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
