------------------------------ MODULE Raincore ------------------------------
(***************************************************************************)
(* The Raincore Group Communication Manager token ring (seed 004).         *)
(*                                                                         *)
(* Nodes 1..N.  Nodes 1..InitSize form the configured initial ring; the    *)
(* others are new nodes that may later apply to join with a 911 message.   *)
(* A token (sequence number, nodelist, current and destination pointers,   *)
(* global view number) circulates along its nodelist.  Each node runs the  *)
(* product of two state machines: a View State (Agreement, Chaos, Reserve) *)
(* and a Token State (Eating, Hungry, Starving), and keeps a globalView    *)
(* vector of committed views, lastToken (its copy of the token), localView *)
(* and a newNodes queue.  The eight events of the seed are one action each *)
(* (Initialization, TokenReceived, 911Received, TokenDeliveryFailure,      *)
(* 911DeliveryFailure, EatingTimeout, HungryTimeout, StarvingTimeout).     *)
(* The environment crashes nodes, recovers them with their local state,    *)
(* loses the token in transit and starts new nodes that join by 911.       *)
(*                                                                         *)
(* The Transport Manager is a perfect failure detector on delivery: a      *)
(* message addressed to a node that is not up comes back to its sender as *)
(* a delivery failure; a message to an up node may be delivered.  Timers   *)
(* carry no time: a timeout is an action enabled whenever its token state  *)
(* holds.  Every interpretation of the seed's garbled pseudo-code is       *)
(* listed, with its justification from Figures 12-14, in docs/raincore.md. *)
(*                                                                         *)
(* Variant constants.  All FALSE is the model faithful to the seed, and    *)
(* TLC refutes AtMostOneToken on it.  TimelyTimeouts, Timely911 and       *)
(* StableFounder state assumptions the seed makes without saying so;       *)
(* NeutralRecovery,                                                        *)
(* FreshClaim, FreshView, TokenRingClaim and YieldClaim are the smallest   *)
(* fixes of the flaws that remain under those assumptions.                 *)
(* docs/raincore.md gives each counterexample and the model that shows it. *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS
    N,          \* number of nodes; nodes are the integers 1..N
    InitSize,   \* nodes 1..InitSize form the configured initial ring
    InitSeq,    \* the unique initial token sequence number
    ColdStart,  \* TRUE: start before Initialization; FALSE: start in a steady
                \* ring (all in Agreement, token on its way to node 1)
    TimelyTimeouts,  \* variant: the seed's unstated timing assumption, a
                     \* Hungry or Starving timeout never fires while a token
                     \* that lists the node exists
    StableFounder,   \* variant: node 1 never crashes
    NeutralRecovery, \* fix: a recovered node claims and vetoes with sequence
                     \* number 0 until it holds a token again
    FreshClaim,      \* fix: regenerate only on a YES for the current claim
    FreshView,       \* fix: a recovered node's retained localView does not
                     \* match until it holds a token again (needs
                     \* NeutralRecovery, which tracks "recovered")
    TokenRingClaim,  \* fix: a 911 travels the nodelist of its originator's
                     \* lastToken, and a non-member's 911 claiming a higher
                     \* number than the receiver's is answered as a claim as
                     \* well as queued (needs NeutralRecovery: only then does
                     \* a positive claim prove its originator is on the ring)
    YieldClaim,      \* fix: a Hungry node vetoes like an Eating one; a node
                     \* that lets a claim pass queues its originator; a
                     \* claim travels the nodelist its originator would
                     \* regenerate (lastToken's with the queued nodes), and
                     \* only a YES for a claim on that nodelist regenerates
                     \* (F8; needs TokenRingClaim and FreshClaim)
    Timely911        \* variant: a timing assumption like TimelyTimeouts, for
                     \* 911s: a node's Eating timeout never fires while a 911
                     \* addressed to it is in flight (a 911 hop is shorter
                     \* than a node eats): it takes the 911s before it passes
                     \* the token on (F8c)

ASSUME /\ N \in Nat /\ InitSize \in 2..N
       /\ InitSeq \in Nat /\ InitSeq >= InitSize
       /\ ColdStart \in BOOLEAN /\ TimelyTimeouts \in BOOLEAN /\ StableFounder \in BOOLEAN
       /\ NeutralRecovery \in BOOLEAN /\ FreshClaim \in BOOLEAN
       /\ FreshView \in BOOLEAN /\ (FreshView => NeutralRecovery)
       /\ TokenRingClaim \in BOOLEAN /\ (TokenRingClaim => NeutralRecovery)
       /\ YieldClaim \in BOOLEAN /\ (YieldClaim => TokenRingClaim /\ FreshClaim)
       /\ Timely911 \in BOOLEAN

Node == 1..N
InitRing == [i \in 1..InitSize |-> i]

NULL == 0          \* "no node" in a pointer field
NullView == <<>>   \* the NULL entry of a globalView vector (a committed view
                   \* is never empty; TLC cannot compare a string with a
                   \* sequence, so the sentinel must itself be a sequence)

ViewStates  == {"Agreement", "Chaos", "Reserve"}
TokenStates == {"Eating", "Hungry", "Starving"}
\* The 7 reachable (token, view) pairs of the seed's Figure 11.
LegalPairs == {<<"Eating", "Agreement">>, <<"Hungry", "Agreement">>,
               <<"Eating", "Reserve">>,   <<"Hungry", "Reserve">>,
               <<"Eating", "Chaos">>,     <<"Hungry", "Chaos">>,
               <<"Starving", "Chaos">>}

\* A token: Figure 6 without the signature.  The same record is the token
\* message in transit (cur = sender, dest = receiver), the token a node holds
\* while Eating, and the node's lastToken copy.
\* NoToken is the "nothing" value of the latter two.
NoToken == [seq |-> 0, nodelist |-> <<>>, cur |-> NULL, dest |-> NULL, gvn |-> 0]

VARIABLES
    status,      \* [Node -> {"Off","Up","Down"}]: Off = never started,
                 \*   Down = crashed (local state kept for recovery)
    viewState,   \* [Node -> ViewStates]
    tokenState,  \* [Node -> TokenStates]
    globalView,  \* [Node -> Seq(view or NullView)]: the globalView vector;
                 \*   its length is the node's globalViewNumber
    lastToken,   \* [Node -> token]: copy of the last token sent (NoToken if none)
    localView,   \* [Node -> Seq(Node)]: the last nodelist the node accepted
    newNodes,    \* [Node -> SUBSET Node]: nodes that asked to join by 911
    token,       \* [Node -> token]: the token held while Eating, else NoToken
    tokenMsgs,   \* set of token messages handed to the Transport Manager
    msgs911,     \* set of 911 messages handed to the Transport Manager
    recovered    \* [Node -> BOOLEAN]: recovered and not yet holding a token
                 \*   again (set only under the NeutralRecovery fix)

vars == <<status, viewState, tokenState, globalView, lastToken, localView,
          newNodes, token, tokenMsgs, msgs911, recovered>>

-----------------------------------------------------------------------------
(* Helpers on rings (sequences of distinct nodes).                        *)

Range(s) == {s[i] : i \in DOMAIN s}
Pos(s, x) == CHOOSE i \in DOMAIN s : s[i] = x
\* The node after n on ring l (the head if n is not on l).
NextNode(l, n) == IF n \in Range(l) THEN l[(Pos(l, n) % Len(l)) + 1] ELSE l[1]
Remove(l, x) == SelectSeq(l, LAMBDA y : y # x)
SortedSeq(S) == [i \in 1..Cardinality(S) |->
                    CHOOSE x \in S : Cardinality({y \in S : y < x}) = i - 1]
\* Insert the sequence s right after n on ring l.
InsertAfter(l, n, s) == SubSeq(l, 1, Pos(l, n)) \o s \o SubSeq(l, Pos(l, n) + 1, Len(l))
PadTo(gv, k) == gv \o [i \in 1..(k - Len(gv)) |-> NullView]

GlobalViewNumber(n) == Len(globalView[n])
\* lastGlobalView: the most recent non-NULL entry of the globalView vector.
LastGlobalView(n) ==
    LET gv  == globalView[n]
        idx == {i \in DOMAIN gv : gv[i] # NullView}
    IN  IF idx = {} THEN NullView ELSE gv[CHOOSE i \in idx : \A j \in idx : j <= i]
\* The ring a node's 911 messages follow: lastGlobalView, or the configured
\* ring before the node has committed any view.
ViewOf(n) == IF LastGlobalView(n) = NullView THEN InitRing ELSE LastGlobalView(n)
\* The ring a node's 911s travel: ViewOf(n), or under the TokenRingClaim fix
\* the nodelist of its lastToken, which also lists the nodes the token took
\* in that no view has committed yet: they may hold a later token and must
\* get their chance to veto (F7).
\* Under YieldClaim, it is the nodelist n would send the regenerated token
\* with: the queued nodes (join requests, and claimants n let pass) are
\* added after n as EatingTimeout will, so the claim asks every node the
\* new token would visit, and learning of one more node makes the claim
\* already in flight stale (F8).
Queued(l, n) == LET add == newNodes[n] \ Range(l)
                IN  IF add = {} THEN l ELSE InsertAfter(l, n, SortedSeq(add))
ClaimRing(n) == IF TokenRingClaim /\ lastToken[n].nodelist # <<>>
                  THEN IF YieldClaim THEN Queued(lastToken[n].nodelist, n)
                                     ELSE lastToken[n].nodelist
                  ELSE ViewOf(n)

\* The sequence number a node claims with and compares claims against:
\* lastTokenSeq, or 0 for a recovered node under the NeutralRecovery fix.
ClaimSeq(n) == IF recovered[n] THEN 0 ELSE lastToken[n].seq
\* Under TokenRingClaim, a 911 from a node that is not on the receiver's
\* lastGlobalView is answered as a claim (as well as queued as a join
\* request) when it claims a higher sequence number than the receiver's:
\* its originator has held a later token, so it is on the ring even if the
\* receiver has not seen it added yet, and it may be the one to regenerate.
HigherClaim(n, m) == TokenRingClaim /\ m.seq > ClaimSeq(n)
\* The 911 a node initiates (Hungry and Starving timeouts, recovery, join):
\* its claim, status YES, to the next node on its ClaimRing.
Call911(n) == [orig |-> n, cur |-> n, dest |-> NextNode(ClaimRing(n), n),
               nodelist |-> ClaimRing(n), seq |-> ClaimSeq(n), status |-> "YES"]

UpNodes == {n \in Node : status[n] = "Up"}

\* The nodelists of the tokens that exist (held by a live Eating node or in
\* transit), and whether one of them lists node n: then a token is on its
\* way to n and a timeout of n is premature.
TokenLists == {token[k].nodelist : k \in {j \in UpNodes : tokenState[j] = "Eating"}}
              \cup {m.nodelist : m \in tokenMsgs}
TokenComing(n) == \E l \in TokenLists : n \in Range(l)
\* A 911 is on its way to node n: under Timely911 n does not pass the token
\* on before it has taken it (a 911 hop is shorter than the eating time, as
\* a token round is shorter than the Hungry timeout under TimelyTimeouts;
\* F8c needs a 911 that waits while its receiver eats, passes the token on
\* and crashes).  Only the Eating timeout waits: the Hungry and Starving
\* timeouts may fire with 911s in flight, or the other nodes' claims could
\* keep a Hungry node from ever timing out (O3).
CallWaiting(n) == \E m \in msgs911 : m.dest = n

-----------------------------------------------------------------------------
TokenRec == [seq : Nat, nodelist : Seq(Node), cur : Node \cup {NULL},
             dest : Node \cup {NULL}, gvn : Nat]
Msg911Rec == [orig : Node, cur : Node, dest : Node, nodelist : Seq(Node),
              seq : Nat, status : {"YES", "NO", "REJECT"}]

TypeOK ==
    /\ status \in [Node -> {"Off", "Up", "Down"}]
    /\ viewState \in [Node -> ViewStates]
    /\ tokenState \in [Node -> TokenStates]
    /\ globalView \in [Node -> Seq(Seq(Node))]
    /\ lastToken \in [Node -> TokenRec]
    /\ localView \in [Node -> Seq(Node)]
    /\ newNodes \in [Node -> SUBSET Node]
    /\ token \in [Node -> TokenRec]
    /\ \A n \in UpNodes : (tokenState[n] = "Eating") <=> (token[n] # NoToken)
    /\ tokenMsgs \subseteq TokenRec
    /\ msgs911 \subseteq Msg911Rec
    /\ recovered \in [Node -> BOOLEAN]

-----------------------------------------------------------------------------
(* Initial states.                                                          *)

\* A node that has never run.
OffState(n) ==
    [status |-> "Off", viewState |-> "Chaos", tokenState |-> "Starving",
     globalView |-> <<>>, lastToken |-> NoToken, localView |-> <<>>]

\* The steady ring: every configured node in Agreement on InitRing, the
\* token (sequence number InitSeq) on its way from the last node to node 1;
\* node i sent the token last with sequence number InitSeq - (InitSize - i).
SteadyToken(i) == [seq |-> InitSeq - (InitSize - i), nodelist |-> InitRing,
                   cur |-> i, dest |-> NextNode(InitRing, i), gvn |-> 1]

InitNode(n) ==
    IF n \notin Range(InitRing) THEN OffState(n)
    ELSE IF ~ColdStart
      THEN [status |-> "Up", viewState |-> "Agreement", tokenState |-> "Hungry",
            globalView |-> <<InitRing>>, lastToken |-> SteadyToken(n),
            localView |-> InitRing]
    ELSE IF n = 1 THEN OffState(n)   \* the founder runs Initialization
      ELSE [status |-> "Up", viewState |-> "Chaos", tokenState |-> "Hungry",
            globalView |-> <<>>, lastToken |-> NoToken, localView |-> InitRing]

Init ==
    /\ status = [n \in Node |-> InitNode(n).status]
    /\ viewState = [n \in Node |-> InitNode(n).viewState]
    /\ tokenState = [n \in Node |-> InitNode(n).tokenState]
    /\ globalView = [n \in Node |-> InitNode(n).globalView]
    /\ lastToken = [n \in Node |-> InitNode(n).lastToken]
    /\ localView = [n \in Node |-> InitNode(n).localView]
    /\ newNodes = [n \in Node |-> {}]
    /\ token = [n \in Node |-> NoToken]
    /\ tokenMsgs = IF ColdStart THEN {} ELSE {SteadyToken(InitSize)}
    /\ msgs911 = {}
    /\ recovered = [n \in Node |-> FALSE]

-----------------------------------------------------------------------------
(* The eight events.                                                        *)

\* 1. The founding node of the configured ring creates the token and sends
\*    it to the next node.  (The other configured nodes' initialisation of
\*    their local data is part of Init.)  Only the founder: run by every
\*    node it would make one token each, and a joiner enters by 911 (Join),
\*    the contradiction docs/raincore.md I14 resolves.
Initialization(n) ==
    LET t == [seq |-> InitSeq, nodelist |-> InitRing, cur |-> n,
              dest |-> NextNode(InitRing, n), gvn |-> 0]
    IN
    /\ n \in Range(InitRing)
    /\ status[n] = "Off"
    /\ status' = [status EXCEPT ![n] = "Up"]
    /\ viewState' = [viewState EXCEPT ![n] = "Chaos"]
    /\ tokenState' = [tokenState EXCEPT ![n] = "Hungry"]
    /\ localView' = [localView EXCEPT ![n] = InitRing]
    /\ lastToken' = [lastToken EXCEPT ![n] = t]
    /\ tokenMsgs' = tokenMsgs \cup {t}
    /\ UNCHANGED <<globalView, newNodes, token, msgs911, recovered>>

\* 2. A valid token (sequence number above lastTokenSeq) received while
\*    Hungry or Starving: Eating, and one step of the View State machine
\*    comparing the token's nodelist with localView *before* localView takes
\*    the new nodelist.  Otherwise the token is dropped.
\*    TakeToken is that step and the token n holds then (RaincoreFlush's
\*    ring takes it as it is); AcceptToken adds the token state.
TakeToken(n, m) ==
    LET same    == m.nodelist = localView[n] /\ ~(FreshView /\ recovered[n])
        gv0     == globalView[n]
        reserve == viewState[n] = "Chaos" /\ same
        commit  == viewState[n] = "Reserve" /\ same
        vs      == CASE viewState[n] = "Agreement" -> IF same THEN "Agreement" ELSE "Chaos"
                     [] viewState[n] = "Chaos"     -> IF same THEN "Reserve" ELSE "Chaos"
                     [] viewState[n] = "Reserve"   -> IF same THEN "Agreement" ELSE "Chaos"
        \* Reserve appends a NULL slot; commit fills the last slot (the one
        \* reserved); Reserve -> Chaos leaves the NULL there ("commit NULL").
        gv1     == IF reserve THEN Append(gv0, NullView)
                   ELSE IF commit THEN [gv0 EXCEPT ![Len(gv0)] = m.nodelist]
                   ELSE gv0
        tgvn    == IF reserve THEN Len(gv1) ELSE m.gvn
    IN
    /\ viewState' = [viewState EXCEPT ![n] = vs]
    \* last line of the seed's Token Received: catch up with the token's
    \* globalViewNumber (after the View State step), NULL-padding the gap
    /\ globalView' = [globalView EXCEPT ![n] = IF tgvn > Len(gv1) THEN PadTo(gv1, tgvn) ELSE gv1]
    /\ localView' = [localView EXCEPT ![n] = m.nodelist]
    /\ token' = [token EXCEPT ![n] = [m EXCEPT !.cur = n, !.gvn = tgvn]]

AcceptToken(n, m) ==
    /\ tokenState' = [tokenState EXCEPT ![n] = "Eating"]
    /\ TakeToken(n, m)
    /\ recovered' = [recovered EXCEPT ![n] = FALSE]

TokenReceived(n, m) ==
    /\ status[n] = "Up"
    /\ m \in tokenMsgs
    /\ m.dest = n
    /\ tokenMsgs' = tokenMsgs \ {m}
    /\ IF tokenState[n] = "Eating" \/ m.seq <= lastToken[n].seq
         THEN UNCHANGED <<viewState, tokenState, globalView, localView, token, recovered>>
         ELSE AcceptToken(n, m)
    /\ UNCHANGED <<status, lastToken, newNodes, msgs911>>

\* The veto of a 911 from a member: the token is not lost here (Eating;
\* under YieldClaim also Hungry: the node has not timed out, so as far as
\* it knows the token it sent is still on its way, and it may be a token
\* regenerated from an older copy than the claim's, F8), or this node has
\* sent a token with a higher sequence number, or the same one and it has
\* the higher node ID.
Veto(n, m) ==
    \/ tokenState[n] = "Eating"
    \/ YieldClaim /\ tokenState[n] = "Hungry"
    \/ m.seq < ClaimSeq(n)
    \/ m.seq = ClaimSeq(n) /\ n > m.orig

\* Its own 911 back with YES gives a Starving node that has a copy of the
\* token the right to regenerate (under FreshClaim: only for its current claim;
\* under YieldClaim the current claim is also the current ClaimRing).
Regenerate(n, m) ==
    /\ m.status = "YES"
    /\ tokenState[n] = "Starving"
    /\ lastToken[n].nodelist # <<>>
    /\ FreshClaim => m.seq = ClaimSeq(n)
    /\ YieldClaim => m.nodelist = ClaimRing(n)
    /\ ~recovered[n]

\* Under YieldClaim, a node that lets another's claim pass concedes that the
\* claimant has the later copy: it queues the claimant (which is alive and
\* belongs on the ring), and its own claim in flight, which does not ask the
\* claimant, goes stale (ClaimRing changes).  A non-member is queued anyway.
Yields(n, m) == YieldClaim /\ ~Veto(n, m)

\* 3. A 911 arrives.  Its own 911 back with YES while Starving gives the
\*    originator the right to regenerate the token from lastToken.  A 911
\*    from a member is vetoed (status NO, sent straight back to the
\*    originator) or forwarded to the next node on the 911's nodelist.  A 911
\*    from a non-member is a join request (and, under TokenRingClaim, also
\*    answered when it claims more than this node's ClaimSeq).
911Received(n, m) ==
    LET m1     == [m EXCEPT !.cur = n]
        answer == IF Veto(n, m) THEN [m1 EXCEPT !.status = "NO", !.dest = m.orig]
                                ELSE [m1 EXCEPT !.dest = NextNode(m.nodelist, n)]
    IN
    /\ status[n] = "Up"
    /\ m \in msgs911
    /\ m.dest = n
    /\ IF m.orig = n
         THEN /\ msgs911' = msgs911 \ {m}
              /\ IF Regenerate(n, m)
                   THEN /\ token' = [token EXCEPT ![n] = [lastToken[n] EXCEPT !.cur = n]]
                        /\ tokenState' = [tokenState EXCEPT ![n] = "Eating"]
                        /\ recovered' = [recovered EXCEPT ![n] = FALSE]
                   ELSE UNCHANGED <<token, tokenState, recovered>>
              /\ UNCHANGED newNodes
       ELSE IF m.orig \in Range(ViewOf(n))
         THEN /\ msgs911' = (msgs911 \ {m}) \cup {answer}
              /\ newNodes' = IF Yields(n, m) THEN [newNodes EXCEPT ![n] = @ \cup {m.orig}]
                                              ELSE newNodes
              /\ UNCHANGED <<token, tokenState, recovered>>
         ELSE /\ msgs911' = (msgs911 \ {m}) \cup (IF HigherClaim(n, m) THEN {answer} ELSE {})
              /\ newNodes' = [newNodes EXCEPT ![n] = @ \cup {m.orig}]
              /\ UNCHANGED <<token, tokenState, recovered>>
    /\ UNCHANGED <<status, viewState, globalView, lastToken, localView, tokenMsgs>>

\* 4. The Transport Manager could not deliver the token this node sent: drop
\*    the dead node from the nodelist, point at the next node, increment the
\*    sequence number, update the local copy (lastToken and localView),
\*    Chaos, resend and go Hungry; alone on the nodelist, commit the
\*    single-node view at once and keep the token.
TokenDeliveryFailure(n, m) ==
    LET nl == Remove(m.nodelist, m.dest)
        t  == [m EXCEPT !.nodelist = nl, !.dest = NextNode(nl, n), !.seq = m.seq + 1]
        t1 == [t EXCEPT !.gvn = GlobalViewNumber(n) + 1]
    IN
    /\ status[n] = "Up"
    /\ m \in tokenMsgs
    /\ m.cur = n
    /\ status[m.dest] # "Up"
    /\ localView' = [localView EXCEPT ![n] = nl]
    /\ IF nl = <<n>>
         THEN /\ viewState' = [viewState EXCEPT ![n] = "Agreement"]
              /\ tokenState' = [tokenState EXCEPT ![n] = "Eating"]
              /\ globalView' = [globalView EXCEPT ![n] = Append(@, nl)]
              /\ lastToken' = [lastToken EXCEPT ![n] = t1]
              /\ token' = [token EXCEPT ![n] = t1]
              /\ tokenMsgs' = tokenMsgs \ {m}
         ELSE /\ viewState' = [viewState EXCEPT ![n] = "Chaos"]
              /\ tokenState' = [tokenState EXCEPT ![n] = "Hungry"]
              /\ lastToken' = [lastToken EXCEPT ![n] = t]
              /\ token' = [token EXCEPT ![n] = NoToken]
              /\ tokenMsgs' = (tokenMsgs \ {m}) \cup {t}
              /\ UNCHANGED globalView
    /\ UNCHANGED <<status, newNodes, msgs911, recovered>>

\* 5. The Transport Manager could not deliver a 911 this node sent: point it
\*    at the next node on its nodelist and send it again.
911DeliveryFailure(n, m) ==
    /\ status[n] = "Up"
    /\ m \in msgs911
    /\ m.cur = n
    /\ status[m.dest] # "Up"
    /\ msgs911' = (msgs911 \ {m}) \cup {[m EXCEPT !.dest = NextNode(m.nodelist, m.dest)]}
    /\ UNCHANGED <<status, viewState, tokenState, globalView, lastToken,
                   localView, newNodes, token, tokenMsgs, recovered>>

\* 6. Eating timeout: add the queued new nodes right after this node (Chaos),
\*    clear the queue; with more than one node on the nodelist, increment the
\*    sequence number, copy the token to lastToken, send it and go Hungry;
\*    alone, keep eating.  localView is not changed here: a join is a
\*    proposal the node accepts when the token comes back (docs/raincore.md).
EatingTimeout(n) ==
    LET t   == token[n]
        add == newNodes[n] \ Range(t.nodelist)
        nl  == IF add = {} THEN t.nodelist ELSE InsertAfter(t.nodelist, n, SortedSeq(add))
        t2  == [t EXCEPT !.nodelist = nl, !.cur = n, !.dest = NextNode(nl, n), !.seq = t.seq + 1]
    IN
    /\ status[n] = "Up"
    /\ tokenState[n] = "Eating"
    /\ Timely911 => ~CallWaiting(n)
    /\ newNodes' = [newNodes EXCEPT ![n] = {}]
    /\ viewState' = IF add = {} THEN viewState ELSE [viewState EXCEPT ![n] = "Chaos"]
    /\ IF Len(nl) > 1
         THEN /\ lastToken' = [lastToken EXCEPT ![n] = t2]
              /\ tokenMsgs' = tokenMsgs \cup {t2}
              /\ tokenState' = [tokenState EXCEPT ![n] = "Hungry"]
              /\ token' = [token EXCEPT ![n] = NoToken]
         ELSE UNCHANGED <<lastToken, tokenMsgs, tokenState, token>>
    /\ UNCHANGED <<status, globalView, localView, msgs911, recovered>>

\* 7. Hungry timeout: Starving, Chaos, 911 with lastTokenSeq and YES.
HungryTimeout(n) ==
    /\ status[n] = "Up"
    /\ tokenState[n] = "Hungry"
    /\ TimelyTimeouts => ~TokenComing(n)
    /\ tokenState' = [tokenState EXCEPT ![n] = "Starving"]
    /\ viewState' = [viewState EXCEPT ![n] = "Chaos"]
    /\ msgs911' = msgs911 \cup {Call911(n)}
    /\ UNCHANGED <<status, globalView, lastToken, localView, newNodes, token,
                   tokenMsgs, recovered>>

\* 8. Starving timeout: the same 911 again.
StarvingTimeout(n) ==
    /\ status[n] = "Up"
    /\ tokenState[n] = "Starving"
    /\ TimelyTimeouts => ~TokenComing(n)
    /\ msgs911' = msgs911 \cup {Call911(n)}
    /\ UNCHANGED <<status, viewState, tokenState, globalView, lastToken,
                   localView, newNodes, token, tokenMsgs, recovered>>

-----------------------------------------------------------------------------
(* The environment.                                                         *)

\* A node crashes: it loses the token it holds and its Transport Manager
\* loses the messages it has not yet delivered (delivery before the crash is
\* the interleaving where the receive happens first).  Its data structures
\* (globalView, lastToken, localView, newNodes) are kept; its two state
\* machines stop, and are shown in the states recovery restarts them in.
Crash(n) ==
    /\ status[n] = "Up"
    /\ StableFounder => n # 1
    /\ status' = [status EXCEPT ![n] = "Down"]
    /\ viewState' = [viewState EXCEPT ![n] = "Chaos"]
    /\ tokenState' = [tokenState EXCEPT ![n] = "Starving"]
    /\ token' = [token EXCEPT ![n] = NoToken]
    /\ tokenMsgs' = {m \in tokenMsgs : m.cur # n}
    /\ msgs911' = {m \in msgs911 : m.cur # n}
    /\ UNCHANGED <<globalView, lastToken, localView, newNodes, recovered>>

\* A crashed node recovers with all its local state, Starving and in Chaos,
\* and sends a 911 (Figure 14).
Recover(n) ==
    /\ status[n] = "Down"
    /\ status' = [status EXCEPT ![n] = "Up"]
    /\ tokenState' = [tokenState EXCEPT ![n] = "Starving"]
    /\ viewState' = [viewState EXCEPT ![n] = "Chaos"]
    /\ recovered' = [recovered EXCEPT ![n] = NeutralRecovery]
    /\ msgs911' = msgs911 \cup {[Call911(n) EXCEPT !.seq = IF NeutralRecovery THEN 0 ELSE @]}
    /\ UNCHANGED <<globalView, lastToken, localView, newNodes, token, tokenMsgs>>

\* A new node starts and applies to join with a 911 to the configured ring.
Join(n) ==
    /\ n \notin Range(InitRing)
    /\ status[n] = "Off"
    /\ status' = [status EXCEPT ![n] = "Up"]
    /\ tokenState' = [tokenState EXCEPT ![n] = "Starving"]
    /\ viewState' = [viewState EXCEPT ![n] = "Chaos"]
    /\ msgs911' = msgs911 \cup {Call911(n)}
    /\ UNCHANGED <<globalView, lastToken, localView, newNodes, token, tokenMsgs, recovered>>

\* The token is lost in transit.
TokenLoss(m) ==
    /\ m \in tokenMsgs
    /\ tokenMsgs' = tokenMsgs \ {m}
    /\ UNCHANGED <<status, viewState, tokenState, globalView, lastToken,
                   localView, newNodes, token, msgs911, recovered>>

-----------------------------------------------------------------------------
ProtocolNext(n) ==
    \/ Initialization(n)
    \/ \E m \in tokenMsgs : TokenReceived(n, m)
    \/ \E m \in msgs911 : 911Received(n, m)
    \/ \E m \in tokenMsgs : TokenDeliveryFailure(n, m)
    \/ \E m \in msgs911 : 911DeliveryFailure(n, m)
    \/ EatingTimeout(n)
    \/ HungryTimeout(n)
    \/ StarvingTimeout(n)

Fault ==
    \/ \E n \in Node : Crash(n) \/ Recover(n) \/ Join(n)
    \/ \E m \in tokenMsgs : TokenLoss(m)

Next == (\E n \in Node : ProtocolNext(n)) \/ Fault

Spec == Init /\ [][Next]_vars

\* Weak fairness on every protocol event of every node; none on the
\* environment.  The 911 events are fair per originator as well: with one
\* fairness condition per node, a node that keeps taking other nodes' 911s
\* satisfies it while one 911 addressed to it waits forever (O2: a claim's
\* YES never reaches its Starving originator), which the Transport Manager,
\* delivering every message to an up node, does not allow.  Under Timely911
\* the Eating timeout waits for the 911s addressed to its node, so it may be
\* enabled, disabled by a 911 arriving, enabled again: weak fairness would
\* let the 911s postpone it forever; strong fairness says what the
\* assumption means, that the timer fires once the 911s in its way are taken.
FairSpec ==
    /\ Spec
    /\ \A n \in Node :
        /\ WF_vars(\E m \in tokenMsgs : TokenReceived(n, m))
        /\ \A o \in Node : WF_vars(\E m \in msgs911 : m.orig = o /\ 911Received(n, m))
        /\ WF_vars(\E m \in tokenMsgs : TokenDeliveryFailure(n, m))
        /\ \A o \in Node : WF_vars(\E m \in msgs911 : m.orig = o /\ 911DeliveryFailure(n, m))
        /\ IF Timely911 THEN SF_vars(EatingTimeout(n)) ELSE WF_vars(EatingTimeout(n))
        /\ WF_vars(HungryTimeout(n))
        /\ WF_vars(StarvingTimeout(n))
        /\ WF_vars(Initialization(n))

-----------------------------------------------------------------------------
(* Properties.                                                              *)

\* Only the 7 reachable (token, view) pairs occur at live nodes.
LegalStates == \A n \in UpNodes : <<tokenState[n], viewState[n]>> \in LegalPairs

\* At most one valid token: at most one live node is Eating.
AtMostOneToken == Cardinality({n \in UpNodes : tokenState[n] = "Eating"}) <= 1

\* Two nodes' non-NULL globalView entries at the same index are equal.
ConsistentHistory ==
    \A m, n \in Node :
        \A i \in 1..Len(globalView[m]) :
            (i <= Len(globalView[n]) /\ globalView[m][i] # NullView
                /\ globalView[n][i] # NullView)
            => globalView[m][i] = globalView[n][i]

\* Exactly one node regenerates a lost token: at most one live node holds the
\* right to regenerate (its own 911 on its way back with YES while it is
\* Starving) or a regenerated token it has not passed on yet (a held token
\* is a copy of lastToken only after a regeneration, or after the single-node
\* branch of a delivery failure, which is the same decision taken alone).
Granted(n) == \E m \in msgs911 : m.orig = n /\ m.dest = n /\ Regenerate(n, m)
Regenerator(n) ==
    \/ Granted(n)
    \/ tokenState[n] = "Eating" /\ token[n].seq = lastToken[n].seq
SingleRegenerator == Cardinality({n \in UpNodes : Regenerator(n)}) <= 1

\* Liveness: after the last disturbance every live node is in Agreement on
\* the same view, made of exactly the live nodes.  A disturbance is a fault
\* or a premature timeout: a Hungry or Starving timeout of a node that is on
\* the nodelist of a token that exists (in real time the timeouts are longer
\* than a round of the token, which the untimed model cannot say).
PrematureTimeout ==
    \E n \in Node :
        /\ HungryTimeout(n) \/ StarvingTimeout(n)
        /\ TokenComing(n)
Disturbance == Fault \/ PrematureTimeout

Agreed ==
    \A n \in UpNodes :
        /\ viewState[n] = "Agreement"
        /\ Range(LastGlobalView(n)) = UpNodes
        /\ \A k \in UpNodes : LastGlobalView(k) = LastGlobalView(n)

Liveness == <>[][~Disturbance]_vars => <>[]Agreed

=============================================================================
