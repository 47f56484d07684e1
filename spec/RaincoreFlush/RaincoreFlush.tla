---------------------------- MODULE RaincoreFlush ----------------------------
(***************************************************************************)
(* FLUSH (spec/Flush, fixed variant: digest reconciliation) over the       *)
(* Raincore token ring (spec/Raincore) as its membership: no oracle        *)
(* decides views.                                                          *)
(*   - The view FLUSH's coordinator installs is the ring's committed view: *)
(*     the last non-NULL entry of its node's globalView (Raincore's        *)
(*     Agreement).  A flush starts when that view differs from FLUSH's     *)
(*     latest view; SendView installs the ring's view as it stands then,   *)
(*     so a view the ring commits during a flush is folded into it.        *)
(*   - A crash is noticed only through TokenDeliveryFailure: the crashed   *)
(*     node leaves the token's nodelist, and a member treats as gone (in   *)
(*     every FLUSH wait, and when it drops a flush message) exactly the    *)
(*     members of its FLUSH view its ring localView no longer lists.       *)
(*   - A joiner enters through the ring's 911 path: Join sends a 911, a    *)
(*     ring node queues it (911Received), the token holder adds it         *)
(*     (EatingTimeout), the ring commits, the flush installs.              *)
(* FLUSH keeps its own consecutive view ids (VIEW sent in v installs       *)
(* v + 1): the ring's view number may skip, since several ring views can   *)
(* be folded into one flush.  The VIEW carries the ring's number (the     *)
(* index of the commit in globalView, viewRing), and under NewerViewsOnly *)
(* a coordinator acts only on a commit newer than its own view's: its ring *)
(* may lag behind the view it installed from another node's VIEW, and its *)
(* last commit is then an older view (model StaleView, NewerViewsOnly =    *)
(* FALSE: the view goes back to members the ring dropped).  The choices:  *)
(* README.md, docs/impl.md "Raincore as membership".                       *)
(*                                                                         *)
(* With LossyRing = FALSE the ring is abstracted to what membership needs *)
(* (README.md): one token, never lost, so no sequence numbers, no          *)
(* Hungry/Starving timeouts and no regeneration (tokenState and lastToken  *)
(* stay at their initial values, unused); a node crashes only while it     *)
(* neither holds the token nor has it in transit; 911s are join requests   *)
(* only.  With LossyRing = TRUE the ring is Raincore's fixed variant       *)
(* (spec/Raincore with TimelyTimeouts, FreshClaim and TokenRingClaim;      *)
(* NeutralRecovery and FreshView are moot without recovery, StableFounder  *)
(* is dropped: no total outage without recovery): tokens carry sequence    *)
(* numbers, a stale token is dropped, HungryTimeout and StarvingTimeout    *)
(* send 911 claims that are vetoed or come back to regenerate the token    *)
(* from lastToken, TokenLoss loses a token in transit, and any Up member   *)
(* may crash at any point, the token holder included (its token is lost;  *)
(* what it has in transit may still arrive).  Either way: crash-stop, no   *)
(* recovery, no leave.  FalseSuspicion: the Transport Manager may report   *)
(* a live node unreachable (model Suspect); ShunSuspected: the properties  *)
(* count a member the latest view leaves out as failed (SuspectShun);      *)
(* SuspectLeaves: the implementation's answer, a node so reported learns   *)
(* it later from the sender's abort and leaves (LeaveSuspected).           *)
(* ViewUnderToken: a flush is started and its VIEW sent only by the token  *)
(* holder, and a VIEW only of the latest view, whose id the token carries  *)
(* (model TwoInitiators shows why: two false reports make two initiators). *)
(* Raincore's action and variable names are kept for what is kept;        *)
(* FLUSH's too.  Both parts are instantiated (Ring:          *)
(* Raincore.tla, F: Flush.tla) and what is kept is theirs: the ring's      *)
(* helpers, claims and View State step (Ring!TakeToken), 911Received, the  *)
(* Hungry and Starving timeouts and the properties; FLUSH's steps          *)
(* (F!<Action>Step) with Gone(p) as the failure detector, and Multicast,   *)
(* Deliver, FlushOk, InstallView and StopFlush as they are, with the dead  *)
(* nodes as Flush.tla's crashed.                                           *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS
    N,          \* members/nodes are 1..N
    NInit,      \* nodes 1..NInit form the configured ring and FLUSH's first view
    Founder,    \* the ring node holding the token at the start
    MaxMsgs,    \* application multicasts, over all members
    MaxCrashes, \* crashes the environment may inject
    Crashable,  \* the nodes the environment may crash (targets a model)
    LossyRing,  \* TRUE: Raincore's ring with token loss and regeneration
    TimelyTimeouts, \* LossyRing only: a timeout never fires while a token that lists its node exists
    LateFailures,   \* LossyRing only: the Transport Manager may report a token its receiver took (LateFailure)
    NewerViewsOnly, \* TRUE: FLUSH acts only on a ring commit newer than its own view's (FALSE: StaleView)
    FalseSuspicion, \* the Transport Manager may report a live node in Crashable (slow, not dead) unreachable
    ShunSuspected,  \* FalseSuspicion only: a node reported unreachable stops there (rejoins, if ever, as a new node)
    SuspectLeaves,  \* FalseSuspicion only: a node reported unreachable learns it later and leaves (LeaveSuspected)
    ViewUnderToken  \* StartFlush and SendView only while the node eats; SendView only of the latest view (the token carries its id)

ASSUME /\ N \in Nat \ {0} /\ NInit \in 2..N /\ Founder \in 1..NInit
       /\ MaxMsgs \in Nat /\ MaxCrashes \in Nat /\ Crashable \subseteq 1..N
       /\ LossyRing \in BOOLEAN /\ TimelyTimeouts \in BOOLEAN /\ LateFailures \in BOOLEAN
       /\ NewerViewsOnly \in BOOLEAN /\ FalseSuspicion \in BOOLEAN /\ ShunSuspected \in BOOLEAN
       /\ SuspectLeaves \in BOOLEAN /\ ViewUnderToken \in BOOLEAN

Members  == 1..N
Node     == Members
MsgIds   == 1..MaxMsgs
InitRing == [i \in 1..NInit |-> i]
NULL     == 0
NullView == <<>>
\* A token: Raincore's; without the sequence number when no token is lost
\* (a record of another shape, so that LossyRing = FALSE keeps its states).
MkToken(seq, nl, cur, dest, gvn) ==
    IF LossyRing THEN [seq |-> seq, nodelist |-> nl, cur |-> cur, dest |-> dest, gvn |-> gvn]
                 ELSE [nodelist |-> nl, cur |-> cur, dest |-> dest, gvn |-> gvn]
NoToken  == MkToken(0, <<>>, NULL, NULL, 0)

VARIABLES
    \* FLUSH (Flush.tla; crashed, joining, leaving are gone: the ring says)
    views,      \* views[v]: the members of FLUSH view v (each a view the ring committed)
    viewRing,   \* viewRing[v]: the ring's number of view v (its index in the initiator's globalView)
    vid,        \* vid[p]: the FLUSH view p has installed (0: not joined yet)
    sent,       \* sent[i]: sender and view of application multicast i (history)
    delivered,  \* delivered[p]: ids of the application multicasts p delivered
    chan,       \* chan[<<p, q>>]: the reliable FIFO channel from p to q
    phase,      \* phase[p]: "Normal", "InBlock", "OkSent", "Completed"
    blocked,    \* blocked[p]: the send latch is closed
    flushInit,  \* flushInit[p]: the initiator p follows (NoInit: none)
    flushOks,   \* flushOks[p]: members whose FLUSH_OK p has in its view
    digest,     \* digest[p]: the digest p sent in its last FLUSH_COMPLETED
    completed,  \* completed[c]: <<q, digest>> per FLUSH_COMPLETED initiator c recorded
    \* the ring (Raincore.tla)
    status,      \* [Node -> {"Off","Up","Down"}]
    viewState,   \* [Node -> {"Agreement","Chaos","Reserve"}]
    globalView,  \* [Node -> Seq(view or NullView)]: committed views
    localView,   \* [Node -> Seq(Node)]: the last nodelist the node accepted
    newNodes,    \* [Node -> SUBSET Node]: queued join requests
    token,       \* [Node -> token]: the token held (NoToken if none)
    tokenMsgs,   \* token messages in transit
    msgs911,     \* 911 messages in transit (join requests only unless LossyRing)
    tokenState,  \* [Node -> {"Eating","Hungry","Starving"}] (LossyRing only)
    lastToken    \* [Node -> token]: the last token sent (LossyRing only)

flushVars == <<views, viewRing, vid, sent, delivered, chan, phase, blocked, flushInit,
               flushOks, digest, completed>>
ringVars  == <<status, viewState, globalView, localView, newNodes, token,
               tokenMsgs, msgs911, tokenState, lastToken>>
vars == <<flushVars, ringVars>>

-----------------------------------------------------------------------------
(* The parts *)

\* The ring: Raincore.tla's fixed variant under LossyRing (FreshClaim and
\* TokenRingClaim, which asks NeutralRecovery), started steady with the
\* token's sequence number NInit; no node recovers.
Ring == INSTANCE Raincore WITH
          InitSize <- NInit, InitSeq <- NInit, ColdStart <- FALSE, StableFounder <- FALSE,
          NeutralRecovery <- LossyRing, FreshClaim <- TRUE, FreshView <- FALSE,
          TokenRingClaim <- LossyRing, YieldClaim <- FALSE, Timely911 <- FALSE,
          recovered <- [n \in Node |-> FALSE]

Dead == {n \in Node : status[n] = "Down"}

\* FLUSH with digest reconciliation, no leaves, joins through the ring, the
\* dead nodes as its crashed.  The actions reused as they are (Multicast,
\* Deliver, FlushOk, InstallView, StopFlush) state their UNCHANGED on
\* crashed, that is on Dead: ours set the ring's variables first.
F == INSTANCE Flush WITH
       MaxLeaves <- 0, ReconcileDigests <- TRUE, FlushOkRound <- TRUE,
       crashed <- Dead, joining <- {}, leaving <- {}

-----------------------------------------------------------------------------
(* Ring helpers (Raincore.tla) *)

Range(s)             == Ring!Range(s)
NextNode(l, n)       == Ring!NextNode(l, n)
Remove(l, x)         == Ring!Remove(l, x)
SortedSeq(S)         == Ring!SortedSeq(S)
GlobalViewNumber(n)  == Ring!GlobalViewNumber(n)
LastGlobalView(n)    == Ring!LastGlobalView(n)
ViewOf(n)            == Ring!ViewOf(n)
\* The ring's number of n's last commit (0: none): the index of LastGlobalView(n).
LastIdx(n) ==
    LET gv  == globalView[n]
        idx == {i \in DOMAIN gv : gv[i] # NullView}
    IN  IF idx = {} THEN 0 ELSE CHOOSE i \in idx : \A j \in idx : j <= i
Eating(n) == token[n] # NoToken

\* The Transport Manager reports d unreachable (TokenDeliveryFailure,
\* 911DeliveryFailure): d is down, or (FalseSuspicion) d is a live node of
\* Crashable whose acknowledgement did not come in time: slow, not dead.
Unreachable(d) == status[d] = "Down" \/ (FalseSuspicion /\ status[d] = "Up" /\ d \in Crashable)

\* Raincore's token machinery, effective only under LossyRing: without it
\* tokenState and lastToken keep their initial values and a token's
\* sequence number does not exist.
SetTokenState(n, ts) == IF LossyRing THEN [tokenState EXCEPT ![n] = ts] ELSE tokenState
SetLastToken(n, t)   == IF LossyRing THEN [lastToken EXCEPT ![n] = t] ELSE lastToken
NextSeq(t)           == IF LossyRing THEN [t EXCEPT !.seq = @ + 1] ELSE t
\* Raincore's claims (under TokenRingClaim, no recovery).  A 911 without
\* loss is a join request to the configured ring; with it, Raincore's claim.
Call911(n) ==
    IF LossyRing THEN Ring!Call911(n)
                 ELSE [orig |-> n, cur |-> n, dest |-> NextNode(InitRing, n)]
\* The ring a 911 travels (911DeliveryFailure, forwarding).
Ring911(m) == IF LossyRing THEN m.nodelist ELSE InitRing
-----------------------------------------------------------------------------
(* FLUSH helpers (Flush.tla), membership from the ring *)

NoInit       == F!NoInit
Phases       == F!Phases
Latest       == F!Latest
Alive(p)     == status[p] = "Up"
IsMember(p)  == F!IsMember(p)
\* The members of p's FLUSH view that p's ring has dropped from the token's
\* nodelist: p's failure detector (TokenDeliveryFailure, seen by p when it
\* takes the token or itself detects the failure).
Gone(p)      == views[vid[p]] \ Range(localView[p])
\* The coordinator: the smallest member of its view it does not count gone.
IsCoord(c)   == \A q \in views[vid[c]] \ Gone(c) : c <= q
\* c's ring has committed a view newer than c's FLUSH view (NewerViewsOnly:
\* c knows its view's ring number from the VIEW; without it c takes any
\* commit, an older one too when its ring lags behind: StaleView).
NewerRingView(c) == ~NewerViewsOnly \/ LastIdx(c) > viewRing[vid[c]]
\* The ring committed, at c, a view other than FLUSH's latest.
ViewChangePending(c) ==
    /\ LastGlobalView(c) # NullView /\ Range(LastGlobalView(c)) # views[Latest]
    /\ NewerRingView(c)
\* ViewUnderToken: c starts a flush, and sends a VIEW, only while it holds
\* the token, and sends the VIEW of view v only if v is the latest view.
\* The holder knows the latest view's id: every VIEW is sent under the
\* token, which carries the id on (one token: LossyRing FALSE).  Without
\* it vid[c] = Latest, StartFlush's guard as in Flush.tla, is knowledge no
\* node has once its failure detector can be wrong (model TwoInitiators).
TokenHeld(c)        == ViewUnderToken => Eating(c)
LatestUnderToken(c) == ViewUnderToken => vid[c] = Latest


Data(v, i)               == F!Data(v, i)
StartFlushMsg(v)         == F!StartFlushMsg(v)
FlushOkMsg(v)            == F!FlushOkMsg(v)
FlushCompletedMsg(v, d)  == F!FlushCompletedMsg(v, d)
ViewMsg(v, d, r)         == [type |-> "VIEW", view |-> v, digest |-> d, ring |-> r]
StopFlushMsg(v)          == F!StopFlushMsg(v)

\* Sends go to R minus the dead: the transport loses what is sent to a
\* crashed node (that is not detection: the sender learns nothing).
Multi(ch, p, R, msg) == F!Multi(ch, p, R \ Dead, msg)

HasMsg(p, q)  == F!HasMsg(p, q)
In(p, q)      == F!In(p, q)
Take(p, q)    == F!Take(p, q)
CanReceive(p) == Alive(p) /\ IsMember(p)

TokenRec == IF LossyRing
              THEN [seq : Nat, nodelist : Seq(Node), cur : Node \cup {NULL},
                    dest : Node \cup {NULL}, gvn : Nat]
              ELSE [nodelist : Seq(Node), cur : Node \cup {NULL}, dest : Node \cup {NULL}, gvn : Nat]
Msg911Rec == IF LossyRing
               THEN [orig : Node, cur : Node, dest : Node, nodelist : Seq(Node),
                     seq : Nat, status : {"YES", "NO"}]
               ELSE [orig : Node, cur : Node, dest : Node]

\* The ring's part of TypeOK (RaincoreSequencerFlush.tla's too).
RingTypeOK ==
    /\ status \in [Node -> {"Off", "Up", "Down"}]
    /\ viewState \in [Node -> {"Agreement", "Chaos", "Reserve"}]
    /\ globalView \in [Node -> Seq(Seq(Node))]
    /\ localView \in [Node -> Seq(Node)]
    /\ newNodes \in [Node -> SUBSET Node]
    /\ token \in [Node -> TokenRec]
    /\ tokenMsgs \subseteq TokenRec
    /\ msgs911 \subseteq Msg911Rec
    /\ tokenState \in [Node -> {"Eating", "Hungry", "Starving"}]
    /\ lastToken \in [Node -> TokenRec]
    /\ LossyRing => \A n \in Node : status[n] = "Up" => ((tokenState[n] = "Eating") <=> Eating(n))

TypeOK ==
    /\ views \in Seq(SUBSET Members) /\ Latest >= 1
    /\ viewRing \in Seq(Nat) /\ Len(viewRing) = Latest
    /\ vid \in [Members -> 0..Latest]
    /\ sent \in Seq([sender : Members, view : 1..Latest]) /\ Len(sent) <= MaxMsgs
    /\ delivered \in [Members -> SUBSET MsgIds]
    /\ phase \in [Members -> Phases]
    /\ blocked \in [Members -> BOOLEAN]
    /\ flushInit \in [Members -> Members \cup {NoInit}]
    /\ flushOks \in [Members -> SUBSET Members]
    /\ digest \in [Members -> SUBSET MsgIds]
    /\ completed \in [Members -> SUBSET (Members \X SUBSET MsgIds)]
    /\ RingTypeOK

\* The steady ring of Raincore.tla, the token held by Founder; FLUSH in its
\* first view, the ring's first committed view.  Under LossyRing the token
\* has gone round once (Raincore.tla's SteadyToken): node n sent it last
\* Age(n) hops before Founder's predecessor, so Founder eats sequence
\* number NInit and every configured node has a lastToken to regenerate
\* from.
Age(n) == (Founder - 1 - n + NInit) % NInit
SteadyToken(n) == MkToken(NInit - Age(n), InitRing, n, NextNode(InitRing, n), 1)
\* The ring's part of Init (RaincoreSequencerFlush.tla's too).
RingInit ==
    /\ status = [n \in Node |-> IF n <= NInit THEN "Up" ELSE "Off"]
    /\ viewState = [n \in Node |-> IF n <= NInit THEN "Agreement" ELSE "Chaos"]
    /\ globalView = [n \in Node |-> IF n <= NInit THEN <<InitRing>> ELSE <<>>]
    /\ localView = [n \in Node |-> IF n <= NInit THEN InitRing ELSE <<>>]
    /\ newNodes = [n \in Node |-> {}]
    /\ token = [n \in Node |-> IF n = Founder
                                 THEN MkToken(NInit, InitRing, n, NextNode(InitRing, n), 1)
                                 ELSE NoToken]
    /\ tokenMsgs = {}
    /\ msgs911 = {}
    /\ tokenState = [n \in Node |-> IF n = Founder THEN "Eating"
                                    ELSE IF n <= NInit THEN "Hungry" ELSE "Starving"]
    /\ lastToken = [n \in Node |-> IF LossyRing /\ n <= NInit THEN SteadyToken(n) ELSE NoToken]
Init ==
    /\ views = << 1..NInit >>
    /\ viewRing = << 1 >>
    /\ vid = [p \in Members |-> IF p <= NInit THEN 1 ELSE 0]
    /\ sent = << >>
    /\ delivered = [p \in Members |-> {}]
    /\ chan = [e \in Members \X Members |-> << >>]
    /\ phase = [p \in Members |-> "Normal"]
    /\ blocked = [p \in Members |-> FALSE]
    /\ flushInit = [p \in Members |-> NoInit]
    /\ flushOks = [p \in Members |-> {}]
    /\ digest = [p \in Members |-> {}]
    /\ completed = [p \in Members |-> {}]
    /\ RingInit

-----------------------------------------------------------------------------
(* The ring (Raincore.tla's events, abstracted as said above) *)

\* 2. The token arrives: Eating, one step of the View State machine
\*    (Agreement/Chaos/Reserve), commit in Reserve on the same nodelist.
\*    Under LossyRing a token is valid only above lastTokenSeq while not
\*    Eating; otherwise it is dropped.
AcceptToken(n, m) ==
    /\ Ring!TakeToken(n, m)
    /\ tokenState' = SetTokenState(n, "Eating")

TokenReceived(n, m) ==
    /\ Alive(n)
    /\ m \in tokenMsgs
    /\ m.dest = n
    /\ tokenMsgs' = tokenMsgs \ {m}
    /\ IF LossyRing /\ (tokenState[n] = "Eating" \/ m.seq <= lastToken[n].seq)
         THEN UNCHANGED <<viewState, globalView, localView, token, tokenState>>
         ELSE AcceptToken(n, m)
    /\ UNCHANGED <<flushVars, status, newNodes, msgs911, lastToken>>

\* 3. A 911 from a node not on this node's view is a join request: queued
\*    (under LossyRing also answered when it claims more than this node).
\*    Without LossyRing members send no 911, so that is every 911.  Under
\*    LossyRing, Raincore's claims: its own 911 back with YES lets a
\*    Starving node regenerate the token from lastToken; a member's 911 is
\*    vetoed (NO, straight back) or forwarded along its nodelist.
911Received(n, m) ==
    /\ LossyRing \/ m.orig \notin Range(ViewOf(n))
    /\ Ring!911Received(n, m)
    /\ UNCHANGED flushVars

\* 4. The failure detector: the token n sent could not be delivered (its
\*    destination is Unreachable: down, or under FalseSuspicion slow; the
\*    frame is not delivered, and the node so reported is not told).  Drop it from the nodelist, Chaos, resend
\*    (LossyRing: with the next sequence number, kept as lastToken, Hungry);
\*    alone, commit the single-node view and keep the token.
\*    LossyRing: also for the token n sent last once it is no longer in
\*    transit (LateFailure): the Transport Manager retries a frame until it
\*    is acknowledged, so a receiver that took the token and crashed before
\*    its ack got through leaves the sender's TM reporting a failed delivery
\*    (a newer token supersedes an older one: only the last one sent).  The
\*    step over-approximates (it may also fire after an ack): sound for the
\*    safety properties, and every run of the Transport Manager is one.
LateFailure(n, m) == LossyRing /\ LateFailures /\ m = lastToken[n] /\ m \notin tokenMsgs
TokenDeliveryFailure(n, m) ==
    LET nl == Remove(m.nodelist, m.dest)
        t  == NextSeq([m EXCEPT !.nodelist = nl, !.dest = NextNode(nl, n)])
        t1 == [t EXCEPT !.gvn = GlobalViewNumber(n) + 1]
    IN
    /\ Alive(n)
    /\ m \in tokenMsgs \/ LateFailure(n, m)
    /\ m.cur = n
    /\ Unreachable(m.dest)
    /\ localView' = [localView EXCEPT ![n] = nl]
    /\ IF nl = <<n>>
         THEN /\ viewState' = [viewState EXCEPT ![n] = "Agreement"]
              /\ globalView' = [globalView EXCEPT ![n] = Append(@, nl)]
              /\ token' = [token EXCEPT ![n] = t1]
              /\ tokenMsgs' = tokenMsgs \ {m}
              /\ tokenState' = SetTokenState(n, "Eating")
              /\ lastToken' = SetLastToken(n, t1)
         ELSE /\ viewState' = [viewState EXCEPT ![n] = "Chaos"]
              /\ tokenMsgs' = (tokenMsgs \ {m}) \cup {t}
              /\ tokenState' = SetTokenState(n, "Hungry")
              /\ lastToken' = SetLastToken(n, t)
              \* (Raincore's: a token n holds is dropped; without LossyRing it holds none)
              /\ token' = IF LossyRing THEN [token EXCEPT ![n] = NoToken] ELSE token
              /\ UNCHANGED globalView
    /\ UNCHANGED <<flushVars, status, newNodes, msgs911>>

\* 5. A 911 could not be delivered: on to the next node of the ring it
\*    travels (the configured ring, or under LossyRing its nodelist).
911DeliveryFailure(n, m) ==
    /\ Alive(n)
    /\ m \in msgs911
    /\ m.cur = n
    /\ Unreachable(m.dest)
    /\ msgs911' = (msgs911 \ {m}) \cup {[m EXCEPT !.dest = NextNode(Ring911(m), m.dest)]}
    /\ UNCHANGED <<flushVars, status, viewState, globalView, localView, newNodes,
                   token, tokenMsgs, tokenState, lastToken>>

\* 6. Eating timeout: add the queued joiners right after n (Chaos) and pass
\*    the token on (LossyRing: the next sequence number, kept as lastToken,
\*    Hungry); alone, keep it.
EatingTimeout(n) ==
    LET t   == token[n]
        nl  == Ring!Queued(t.nodelist, n)
        t2  == NextSeq([t EXCEPT !.nodelist = nl, !.cur = n, !.dest = NextNode(nl, n)])
    IN
    /\ Alive(n)
    /\ Eating(n)
    /\ newNodes' = [newNodes EXCEPT ![n] = {}]
    /\ viewState' = IF nl = t.nodelist THEN viewState ELSE [viewState EXCEPT ![n] = "Chaos"]
    /\ IF Len(nl) > 1
         THEN /\ tokenMsgs' = tokenMsgs \cup {t2}
              /\ token' = [token EXCEPT ![n] = NoToken]
              /\ tokenState' = SetTokenState(n, "Hungry")
              /\ lastToken' = SetLastToken(n, t2)
         ELSE UNCHANGED <<tokenMsgs, token, tokenState, lastToken>>
    /\ UNCHANGED <<flushVars, status, globalView, localView, msgs911>>

\* 7. Hungry timeout (LossyRing only): Starving, Chaos, a 911 claim;
\* 8. Starving timeout (LossyRing only): the same 911 again.  Raincore's:
\*    TimelyTimeouts, never while a token that lists n exists (FALSE: the
\*    implementation's timers, which know nothing of tokens in flight).
HungryTimeout(n)   == LossyRing /\ Ring!HungryTimeout(n) /\ UNCHANGED flushVars
StarvingTimeout(n) == LossyRing /\ Ring!StarvingTimeout(n) /\ UNCHANGED flushVars

-----------------------------------------------------------------------------
(* FLUSH (Flush.tla with ReconcileDigests = TRUE); every use of the        *)
(* perfect failure detector ("crashed") is now Gone(p), p's ring's view.   *)

Multicast(p) ==
    /\ UNCHANGED <<viewRing, ringVars>>
    /\ F!Multicast(p)

Deliver(p, q) ==
    /\ UNCHANGED <<viewRing, ringVars>>
    /\ F!Deliver(p, q)

\* Drop: a message of an earlier view; a flush message from a member p
\* counts gone; a DATA after p's FLUSH_COMPLETED (the VIEW brings it).
Discard(p, q) ==
    /\ CanReceive(p) /\ HasMsg(p, q)
    /\ F!Stale(p, q, Gone(p))
    /\ chan' = Take(p, q)
    /\ UNCHANGED <<views, viewRing, vid, sent, delivered, phase, blocked, flushInit, flushOks, digest, completed, ringVars>>

\* The coordinator starts (or restarts, after the initiator is gone) a
\* flush once its ring has committed a view other than FLUSH's latest.
StartFlush(c) ==
    /\ CanReceive(c) /\ vid[c] = Latest /\ IsCoord(c)
    /\ ViewChangePending(c)
    /\ TokenHeld(c)
    /\ F!StartFlushStep(c, F!Digest(c))
    /\ F!Redigest(c)
    /\ UNCHANGED <<views, viewRing, vid, sent, delivered, blocked, flushOks, ringVars>>

Block(p, c) ==
    /\ CanReceive(p) /\ c \notin Gone(p)
    /\ F!BlockStep(p, c)
    /\ UNCHANGED <<views, viewRing, vid, sent, delivered, blocked, flushOks, digest, completed, ringVars>>

RestartFlush(p, c) ==
    /\ CanReceive(p) /\ c \notin Gone(p)
    /\ F!RestartFlushStep(p, c, F!Digest(p))
    /\ F!Redigest(p)
    /\ UNCHANGED <<views, viewRing, vid, sent, delivered, phase, blocked, flushOks, completed, ringVars>>

FlushOk(p) ==
    /\ UNCHANGED <<viewRing, ringVars>>
    /\ F!FlushOk(p)

ReceiveFlushOk(p, q) ==
    /\ CanReceive(p) /\ q \notin Gone(p)
    /\ F!ReceiveFlushOkStep(p, q)
    /\ UNCHANGED <<views, viewRing, vid, sent, delivered, phase, blocked, flushInit, digest, completed, ringVars>>

\* p has the FLUSH_OK of every member of its view its ring has not dropped.
FlushCompleted(p) ==
    /\ CanReceive(p)
    /\ F!FlushCompletedStep(p, Gone(p), F!Digest(p))
    /\ digest' = [digest EXCEPT ![p] = F!Digest(p)]
    /\ UNCHANGED <<views, viewRing, vid, sent, delivered, flushInit, flushOks, ringVars>>

ReceiveFlushCompleted(c, q) ==
    /\ CanReceive(c) /\ q \notin Gone(c)
    /\ F!ReceiveFlushCompletedStep(c, q)
    /\ UNCHANGED <<views, viewRing, vid, sent, delivered, phase, blocked, flushInit, flushOks, digest, ringVars>>

\* The initiator has the FLUSH_COMPLETED of every member it does not count
\* gone: it installs the ring's committed view as it stands now (a view
\* committed during the flush is folded in) and sends it to the old view
\* and to the joiners, with the union of the digests it holds from members
\* not gone and the view's ring number.  Under NewerViewsOnly it waits for
\* a commit newer than its own view's (an initiator that took over a flush
\* may have a ring that lags behind).
SendView(c) ==
    /\ CanReceive(c)
    /\ F!SendViewReady(c, Gone(c))
    /\ NewerRingView(c)
    /\ TokenHeld(c) /\ LatestUnderToken(c)
    /\ LET v   == vid[c]
           new == Range(LastGlobalView(c))
           D   == UNION F!Digests(c, Gone(c))
       IN /\ views' = Append(views, new)
          /\ viewRing' = Append(viewRing, LastIdx(c))
          /\ chan' = Multi(chan, c, views[v] \cup new, ViewMsg(v, D, LastIdx(c)))
          /\ vid' = [vid EXCEPT ![c] = v + 1]
          /\ delivered' = [delivered EXCEPT ![c] = @ \cup D]
    /\ F!FlushEnded(c)
    /\ digest' = [digest EXCEPT ![c] = {}]
    /\ UNCHANGED <<sent, blocked, flushInit, ringVars>>

InstallView(p, c) ==
    /\ UNCHANGED <<viewRing, ringVars>>
    /\ F!InstallView(p, c)

StopFlush(c) ==
    /\ UNCHANGED <<viewRing, ringVars>>
    /\ F!StopFlush(c)

Unblock(p, c) ==
    /\ CanReceive(p) /\ c \notin Gone(p)
    /\ F!UnblockStep(p, c)
    /\ UNCHANGED <<views, viewRing, vid, sent, delivered, phase, flushOks, digest, completed, ringVars>>

-----------------------------------------------------------------------------
(* Environment *)

\* Without LossyRing, p neither holds the token nor has it in transit (the
\* abstraction: one token, never lost).
TokenFree(p) == ~LossyRing => ~Eating(p) /\ \A m \in tokenMsgs : m.cur # p

\* p crashes: a FLUSH member in Crashable, within the budget, not the last
\* live member of the latest view, TokenFree.
CanCrash(p) ==
    /\ Alive(p) /\ IsMember(p)
    /\ p \in Crashable
    /\ Cardinality(Dead) < MaxCrashes
    /\ (views[Latest] \ Dead) \ {p} # {}
    /\ TokenFree(p)

\* The ring's part of Crash(p) (RaincoreSequencerFlush.tla's Crash takes it
\* too): under LossyRing the token p holds is lost and its machines stop in
\* Chaos and Starving.  Unlike Raincore.tla's Crash, the token messages and
\* 911s p has sent stay in transit: the Transport Manager hands its
\* receiver a frame once the sender has confirmed it (impl/ringtransport.py,
\* the take handshake), and a confirmation on the wire when p dies still
\* arrives, so the receiver may take a token or a 911 of p's after p's
\* crash; one whose handshake dies with p is lost (a token: TokenLoss; a
\* 911 is left in transit, never taken).  Without LossyRing nothing changes:
\* CanCrash leaves p no token in transit, and the only 911 in transit is
\* a joiner's request, sent before it was a member (cur = orig, taken
\* before the token lists it).
RingCrash(p) ==
    /\ status' = [status EXCEPT ![p] = "Down"]
    /\ token' = [token EXCEPT ![p] = NoToken]
    /\ viewState' = IF LossyRing THEN [viewState EXCEPT ![p] = "Chaos"] ELSE viewState
    /\ tokenState' = SetTokenState(p, "Starving")
    /\ UNCHANGED <<globalView, localView, newNodes, tokenMsgs, msgs911, lastToken>>

\* p stops, as in Flush.tla (each channel from p keeps a prefix holding
\* every VIEW), with the ring's part RingCrash; nobody is told.
Stop(p) ==
    /\ \E cut \in F!Cuts(p) : F!CutChan(p, cut)
    /\ RingCrash(p)
    /\ UNCHANGED <<views, viewRing, vid, sent, delivered, phase, blocked, flushInit, flushOks,
                   digest, completed>>

Crash(p) == CanCrash(p) /\ Stop(p)

\* A new node starts and applies to join with a 911 to the configured ring
\* (it starts in Chaos and, under LossyRing, Starving: StarvingTimeout
\* repeats the request until a token lists it).
Join(n) ==
    /\ n > NInit
    /\ status[n] = "Off"
    /\ status' = [status EXCEPT ![n] = "Up"]
    /\ msgs911' = msgs911 \cup {Call911(n)}
    /\ tokenState' = SetTokenState(n, "Starving")
    /\ UNCHANGED <<flushVars, viewState, globalView, localView, newNodes, token, tokenMsgs,
                   lastToken>>

\* SuspectLeaves: the implementation's answer to a false suspicion
\* (impl/ringtransport.py, the take handshake).  The node reported
\* unreachable never takes that frame; it learns of the report when the
\* sender answers its acknowledgement with an abort, or when no decision
\* comes, and then leaves: it exits and the runner logs its crash.  Until
\* then it goes on (takes other frames, times out, sends 911s), and if no
\* copy of the frame ever reached it, it never learns.  The spec keeps no
\* record of which nodes were reported, so any live node of Crashable may
\* leave at any point, outside the crash budget: a leave nobody caused is
\* a crash, and under LossyRing every behaviour of the implementation is
\* one of these.  Without LossyRing, as in CanCrash, TokenFree.
CanLeave(p) == FalseSuspicion /\ SuspectLeaves /\ Alive(p) /\ p \in Crashable /\ TokenFree(p)
LeaveSuspected(p) == CanLeave(p) /\ Stop(p)

\* The token is lost in transit (LossyRing only).
TokenLoss(m) ==
    /\ LossyRing
    /\ m \in tokenMsgs
    /\ tokenMsgs' = tokenMsgs \ {m}
    /\ UNCHANGED <<flushVars, status, viewState, globalView, localView, newNodes, token,
                   msgs911, tokenState, lastToken>>

-----------------------------------------------------------------------------
Receive(p, q) ==
    \/ Deliver(p, q)
    \/ Discard(p, q)
    \/ Block(p, q)
    \/ RestartFlush(p, q)
    \/ ReceiveFlushOk(p, q)
    \/ ReceiveFlushCompleted(p, q)
    \/ InstallView(p, q)
    \/ Unblock(p, q)

Next ==
    \/ \E n \in Node : \E m \in tokenMsgs : TokenReceived(n, m)
    \/ \E n \in Node : \E m \in msgs911 : 911Received(n, m)
    \/ \E n \in Node : \E m \in tokenMsgs \cup {lastToken[n]} : TokenDeliveryFailure(n, m)
    \/ \E n \in Node : \E m \in msgs911 : 911DeliveryFailure(n, m)
    \/ \E n \in Node : EatingTimeout(n)
    \/ \E n \in Node : HungryTimeout(n)
    \/ \E n \in Node : StarvingTimeout(n)
    \/ \E p \in Members : Multicast(p)
    \/ \E p, q \in Members : Receive(p, q)
    \/ \E c \in Members : StartFlush(c)
    \/ \E p \in Members : FlushOk(p)
    \/ \E p \in Members : FlushCompleted(p)
    \/ \E c \in Members : SendView(c)
    \/ \E c \in Members : StopFlush(c)
    \/ \E p \in Members : Crash(p)
    \/ \E p \in Members : LeaveSuspected(p)
    \/ \E n \in Node : Join(n)
    \/ \E m \in tokenMsgs : TokenLoss(m)

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Properties *)

\* The members the guarantees are to.  A false suspicion leaves a live node
\* out of the views (FalseSuspicion), and the properties as written count
\* it as live: ViewAfterAllCompleted fails (model Suspect).  ShunSuspected
\* reads the exclusion as JGroups's shunning: a member the latest view
\* leaves out has failed for the group (it stops taking part once it
\* installs that view, FLUSH's Departed, and comes back, if ever, as a new
\* node), so the properties count it as crashed (model SuspectShun).
Excluded == {p \in Members : vid[p] >= 1 /\ p \notin views[Latest]}
Failed   == IF ShunSuspected THEN Dead \cup Excluded ELSE Dead
FP == INSTANCE Flush WITH
        MaxLeaves <- 0, ReconcileDigests <- TRUE, FlushOkRound <- TRUE,
        crashed <- Failed, joining <- {}, leaving <- {}

\* Flush.tla's, with the failed members as its crashed.
VirtualSynchrony      == FP!VirtualSynchrony
NoSendWhileBlocked    == FP!NoSendWhileBlocked
ViewAfterAllCompleted == FP!ViewAfterAllCompleted

\* Raincore.tla's (AtMostOneToken: at most one node Eating, or the token in
\* transit while nobody eats; under LossyRing, as in Raincore.tla, at most
\* one live node Eating: a stale token may be in transit, to be dropped).
AtMostOneToken ==
    IF LossyRing
      THEN Cardinality({n \in Node : Alive(n) /\ Eating(n)}) <= 1
      ELSE Cardinality({n \in Node : Alive(n) /\ Eating(n)}) + Cardinality(tokenMsgs) <= 1

\* Raincore.tla's, under LossyRing (TRUE without it, where tokenState and
\* lastToken are frozen): only the 7 (token, view) pairs of the seed's
\* Figure 11 occur at live nodes; at most one live node holds the right to
\* regenerate (its own YES back while Starving) or a regenerated token it
\* has not passed on.
LegalStates       == LossyRing => Ring!LegalStates
SingleRegenerator == LossyRing => Ring!SingleRegenerator
ConsistentHistory == Ring!ConsistentHistory

\* New: every view FLUSH installs is a view the ring committed, and FLUSH
\* installs them in the ring's order: FLUSH's views are a subsequence of the
\* ring's commits (ring view numbers increase).  The ring may commit the same
\* members twice (a node alone, then joined, then alone again), so a view
\* takes the least ring number above its predecessor's (0: none left).
RingIndex(S) == UNION {{i \in DOMAIN globalView[n] :
                            globalView[n][i] # NullView /\ Range(globalView[n][i]) = S}
                        : n \in Node}
RECURSIVE RingNumber(_)
RingNumber(v) ==
    LET before == IF v = 1 THEN 0 ELSE RingNumber(v - 1)
        above  == {i \in RingIndex(views[v]) : i > before}
    IN  IF (v > 1 /\ before = 0) \/ above = {} THEN 0 ELSE CHOOSE i \in above : \A k \in above : i <= k
ViewsFromRing == \A v \in 1..Latest : RingNumber(v) > 0

\* New (an action property): one view per view id.  views is one sequence
\* and a VIEW installs the view after its initiator's; a second initiator
\* of the same view would append a view its followers take for another id
\* (TwoInitiators: two initiators under two false reports).
OneViewPerId == [][\A c \in Members : SendView(c) => vid[c] = Latest]_vars
=============================================================================
