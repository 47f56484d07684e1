------------------------ MODULE RaincoreSequencerFlush ------------------------
(***************************************************************************)
(* SEQUENCER over FLUSH (spec/SequencerFlush) over the Raincore token ring *)
(* (spec/Raincore) as its membership: spec/RaincoreFlush's transformation  *)
(* applied to SequencerFlush.tla, so that survivor total order is checked  *)
(* with views no oracle decides.  From RaincoreFlush, unchanged:           *)
(*   - the ring part (variables, helpers, TokenReceived, 911Received,      *)
(*     TokenDeliveryFailure, 911DeliveryFailure, EatingTimeout, Join,      *)
(*     CanCrash, the ring's part of Crash; crash-stop): with LossyRing =   *)
(*     FALSE one token, never lost, a node crashes only while it neither   *)
(*     holds the token nor has it in transit, 911s are join requests; with *)
(*     LossyRing = TRUE Raincore's ring with token loss and regeneration   *)
(*     (HungryTimeout, StarvingTimeout, 911 claims, TokenLoss) and a crash *)
(*     anywhere, the token holder's included;                              *)
(*   - the view the flush initiator installs is the ring's committed view  *)
(*     as it stands at SendView (a view committed during a flush is folded *)
(*     in); FLUSH keeps consecutive view ids (not the ring's numbers);     *)
(*   - every use of the perfect failure detector (`crashed`) is Gone(p):   *)
(*     the members of p's view its ring localView no longer lists;         *)
(*   - a joiner enters through the 911 path and installs the VIEW.         *)
(* From SequencerFlush, unchanged: SEQUENCER (Send, RecvForward, RecvData, *)
(* the forward-table resend in Moved), the logs as digests, the longest    *)
(* live digest in the VIEW.  What the composition adds or changes:         *)
(*   - a view is the ring's committed nodelist sorted (SortedSeq): the     *)
(*     SEQUENCER coordinator (first of the view) is its smallest member,   *)
(*     the same node as the flush initiator while nobody is gone;          *)
(*   - Crash(m, lost) is SequencerFlush's without the eager dropping of    *)
(*     m's flush messages: those may still be taken until the receiver's   *)
(*     ring drops m (then Discard);                                        *)
(*   - a joiner's view change takes no digest (it was not in the old       *)
(*     view) and starts with closed = 0 for the views before it joined;   *)
(*   - UniformDelivery (DeliverStable, ndel) is left out: the seed's       *)
(*     delivery rule, whose uniform TotalOrder SequencerFlush already      *)
(*     refutes; ResendAlways and ResentFirst are kept.                     *)
(* README.md and docs/impl.md "Raincore as membership" give the reasons.   *)
(* What is unchanged is taken from the two compositions, instantiated: RF  *)
(* (RaincoreFlush.tla, its LossyRing ours; its views the sets of members   *)
(* of ours) for the ring's actions, the failure detector and the ring's    *)
(* properties; SF (SequencerFlush.tla with the dead nodes as its crashed)  *)
(* for SEQUENCER's actions, the view change (Moved), Flush.tla's steps     *)
(* (SF!F) and the properties.                                              *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC

CONSTANTS
    N,          \* members/nodes are 1..N
    NInit,      \* nodes 1..NInit form the configured ring and the first view
    Founder,    \* the ring node holding the token at the start
    MaxSeq,     \* multicasts the application of each sender sends
    Senders,    \* members whose application multicasts
    MaxCrashes, \* crashes the environment may inject
    Crashable,  \* the nodes the environment may crash (targets a model)
    ResendAlways, \* SequencerFlush's fix for EventualDelivery
    ResentFirst,  \* SequencerFlush's fix for loss 2
    LossyRing,      \* RaincoreFlush's: Raincore's ring with token loss and regeneration
    TimelyTimeouts, \* RaincoreFlush's (LossyRing only): no timeout while a token that lists its node exists
    LateFailures,   \* RaincoreFlush's (LossyRing only): a token its receiver took may be reported undelivered
    NewerViewsOnly, \* RaincoreFlush's: act only on a ring commit newer than the view's (FALSE: a stale view)
    FalseSuspicion, \* RaincoreFlush's: the Transport Manager may report a live node of Crashable unreachable
    ShunSuspected,  \* RaincoreFlush's: a node reported unreachable stops there
    SuspectLeaves,  \* RaincoreFlush's: a node reported unreachable learns it later and leaves
    ViewUnderToken  \* RaincoreFlush's: StartFlush and SendView only by the token holder, SendView of the latest view

ASSUME /\ N \in Nat \ {0} /\ NInit \in 2..N /\ Founder \in 1..NInit
       /\ MaxSeq \in Nat /\ Senders \subseteq 1..N
       /\ MaxCrashes \in Nat /\ Crashable \subseteq 1..N
       /\ ResendAlways \in BOOLEAN /\ ResentFirst \in BOOLEAN /\ NewerViewsOnly \in BOOLEAN
       /\ LossyRing \in BOOLEAN /\ TimelyTimeouts \in BOOLEAN /\ LateFailures \in BOOLEAN
       /\ FalseSuspicion \in BOOLEAN /\ ShunSuspected \in BOOLEAN /\ SuspectLeaves \in BOOLEAN
       /\ ViewUnderToken \in BOOLEAN

Members  == 1..N
Node     == Members
InitRing == [i \in 1..NInit |-> i]
NULL     == 0
NullView == <<>>

VARIABLES
    \* SEQUENCER over FLUSH (SequencerFlush.tla without crashed and ndel)
    views,      \* views[i]: the i-th view, a ring-committed view sorted
    viewRing,   \* viewRing[i]: the ring's number of view i (its index in the initiator's globalView)
    vid,        \* vid[m]: index of the view m installed (0: not joined yet)
    sent,       \* sent[m]: seqno of m's last application multicast
    fwd,        \* fwd[m]: seqnos m forwarded and has not yet received as DATA
    recv,       \* recv[m]: original sender -> highest seqno delivered at m
    delivered,  \* delivered[m]: the messages m delivered, in order
    chan,       \* chan[<<p, q>>]: reliable FIFO channel from p to q
    log,        \* log[m]: the DATA of m's view m multicast or took (its digest)
    closed,     \* closed[m][v]: Len(delivered[m]) when m installed view v + 1
    phase,      \* phase[m]: "Normal", "InBlock", "OkSent", "Completed"
    blocked,    \* blocked[m]: the send latch is closed
    flushInit,  \* flushInit[m]: the initiator m follows (NoInit: none)
    flushOks,   \* flushOks[m]: members whose FLUSH_OK m has in its view
    completed,  \* completed[c]: <<q, digest>> per FLUSH_COMPLETED c recorded
    \* the ring (Raincore.tla), as in RaincoreFlush.tla
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

flushVars == <<views, viewRing, vid, sent, fwd, recv, delivered, chan, log, closed,
               phase, blocked, flushInit, flushOks, completed>>
ringVars  == <<status, viewState, globalView, localView, newNodes, token,
               tokenMsgs, msgs911, tokenState, lastToken>>
vars == <<flushVars, ringVars>>

-----------------------------------------------------------------------------
(* The parts *)

\* FLUSH over the ring, its ring lossy or not as ours; its views are the
\* sets of members of ours, its digest of a member that has sent
\* FLUSH_COMPLETED the member's log.  Its sent and delivered are
\* SEQUENCER's here: the operators used below only keep them unchanged.
RF == INSTANCE RaincoreFlush WITH
        MaxMsgs <- MaxSeq * Cardinality(Senders),
        views <- [i \in DOMAIN views |-> {views[i][j] : j \in DOMAIN views[i]}],
        digest <- [m \in Members |-> IF phase[m] = "Completed" THEN {log[m][i] : i \in DOMAIN log[m]} ELSE {}]

Dead == RF!Dead

\* SEQUENCER over FLUSH, the dead nodes its crashed, without UniformDelivery.
SF == INSTANCE SequencerFlush WITH
        UniformDelivery <- FALSE, crashed <- Dead, ndel <- [m \in Members |-> 0]

-----------------------------------------------------------------------------
(* Helpers: RaincoreFlush.tla's and SequencerFlush.tla's *)

Range(s)          == SF!Range(s)
NextNode(l, n)    == RF!NextNode(l, n)
SortedSeq(S)      == RF!SortedSeq(S)
LastGlobalView(n) == RF!LastGlobalView(n)
LastIdx(n)        == RF!LastIdx(n)
Eating(n)         == RF!Eating(n)
NoToken           == RF!NoToken

Latest      == Len(views)
Alive(p)    == status[p] = "Up"
IsMember(p) == RF!IsMember(p)
CanReceive(p) == Alive(p) /\ IsMember(p)
\* p's failure detector (RaincoreFlush.tla): the members of its view its
\* ring has dropped from the token's nodelist.
Gone(p)     == RF!Gone(p)
\* The flush initiator: the smallest member of its view it does not count
\* gone (RaincoreFlush's IsCoord; SequencerFlush's IsInitiator).
IsInitiator(c) == RF!IsCoord(c)
NewerRingView(c) == RF!NewerRingView(c)
ViewChangePending(c) == RF!ViewChangePending(c)

ViewMsg(v, d, r) == RF!ViewMsg(v, d, r)
MsgTypes         == SF!MsgTypes

\* Every send goes to R minus the sender and the dead: the transport loses
\* what is sent to a crashed node (the sender learns nothing from it).
Multi(ch, p, R, msg) == SF!Multi(ch, p, R \ Dead, msg)
HasMsg(p, q) == SF!HasMsg(p, q)
In(p, q)     == SF!In(p, q)
Take(p, q)   == SF!Take(p, q)

-----------------------------------------------------------------------------
TypeOK ==
    /\ \A i \in DOMAIN views : Range(views[i]) \subseteq Members
    /\ Latest >= 1
    /\ viewRing \in Seq(Nat) /\ Len(viewRing) = Latest
    /\ vid \in [Members -> 0..Latest]
    /\ sent \in [Members -> 0..MaxSeq]
    /\ fwd \in [Members -> SUBSET (1..MaxSeq)]
    /\ \A m \in Members : DOMAIN recv[m] \subseteq Members /\ \A s \in DOMAIN recv[m] : recv[m][s] \in 0..MaxSeq
    /\ \A m \in Members : Range(delivered[m]) \subseteq Members \X (1..MaxSeq)
    /\ \A m \in Members : Range(log[m]) \subseteq Members \X (1..MaxSeq)
    /\ \A m \in Members : Len(closed[m]) = IF vid[m] = 0 THEN 0 ELSE vid[m] - 1
    /\ \A e \in Members \X Members : \A i \in DOMAIN chan[e] : chan[e][i].type \in MsgTypes
    /\ phase \in [Members -> SF!Phases]
    /\ blocked \in [Members -> BOOLEAN]
    /\ flushInit \in [Members -> Members \cup {SF!NoInit}]
    /\ flushOks \in [Members -> SUBSET Members]
    /\ \A c \in Members : \A r \in completed[c] : r[1] \in Members
    /\ RF!RingTypeOK

\* RaincoreFlush's steady ring, the token at Founder; the first view is the
\* ring's first committed view; SEQUENCER as in SequencerFlush's Init.
Init ==
    /\ views = << InitRing >>
    /\ viewRing = << 1 >>
    /\ vid = [m \in Members |-> IF m <= NInit THEN 1 ELSE 0]
    /\ sent = [m \in Members |-> 0]
    /\ fwd = [m \in Members |-> {}]
    /\ recv = [m \in Members |-> [s \in Members |-> 0]]
    /\ delivered = [m \in Members |-> <<>>]
    /\ chan = [e \in Members \X Members |-> <<>>]
    /\ log = [m \in Members |-> <<>>]
    /\ closed = [m \in Members |-> <<>>]
    /\ phase = [m \in Members |-> "Normal"]
    /\ blocked = [m \in Members |-> FALSE]
    /\ flushInit = [m \in Members |-> SF!NoInit]
    /\ flushOks = [m \in Members |-> {}]
    /\ completed = [m \in Members |-> {}]
    /\ RF!RingInit

-----------------------------------------------------------------------------
(* The ring: RaincoreFlush.tla's events (under LossyRing its timeouts and  *)
(* token loss too); SEQUENCER's variables are kept first, since RF's views *)
(* and digest are ours mapped.                                             *)

KeepFlush == UNCHANGED flushVars

TokenReceived(n, m)       == KeepFlush /\ RF!TokenReceived(n, m)
911Received(n, m)         == KeepFlush /\ RF!911Received(n, m)
TokenDeliveryFailure(n, m) == KeepFlush /\ RF!TokenDeliveryFailure(n, m)
911DeliveryFailure(n, m)  == KeepFlush /\ RF!911DeliveryFailure(n, m)
EatingTimeout(n)          == KeepFlush /\ RF!EatingTimeout(n)
HungryTimeout(n)          == KeepFlush /\ RF!HungryTimeout(n)
StarvingTimeout(n)        == KeepFlush /\ RF!StarvingTimeout(n)

-----------------------------------------------------------------------------
(* SEQUENCER (SequencerFlush.tla; a joiner takes part once it installed a  *)
(* view, and the ring's variables are kept first: SF's crashed is Dead)    *)

Send(m) ==
    /\ IsMember(m)
    /\ UNCHANGED <<viewRing, ringVars>>
    /\ SF!Send(m)

RecvForward(c, p) ==
    /\ IsMember(c)
    /\ UNCHANGED <<viewRing, ringVars>>
    /\ SF!RecvForward(c, p)

RecvData(m, p) ==
    /\ IsMember(m)
    /\ UNCHANGED <<viewRing, ringVars>>
    /\ SF!RecvData(m, p)

\* p drops the next message from q: one of an earlier view; a flush message
\* from a member p counts gone; a DATA after p's FLUSH_COMPLETED.
Discard(p, q) ==
    /\ CanReceive(p)
    /\ HasMsg(p, q)
    /\ In(p, q).type # "FORWARD"
    /\ SF!F!Stale(p, q, Gone(p))
    /\ chan' = Take(p, q)
    /\ UNCHANGED <<views, viewRing, vid, sent, fwd, recv, delivered, log, closed, phase, blocked,
                   flushInit, flushOks, completed, ringVars>>

-----------------------------------------------------------------------------
(* FLUSH (SequencerFlush.tla's, Flush.tla's steps); `crashed` is now       *)
(* Gone(p), p's ring's view, and "a crash in the latest view" is the       *)
(* ring's committed view.                                                  *)

\* The initiator starts (or restarts, after the initiator is gone) a flush
\* once its ring has committed a view other than the latest.
StartFlush(c) ==
    /\ CanReceive(c) /\ vid[c] = Latest /\ IsInitiator(c)
    /\ ViewChangePending(c)
    /\ RF!TokenHeld(c)
    /\ SF!F!StartFlushStep(c, log[c])
    /\ UNCHANGED <<views, viewRing, vid, sent, fwd, recv, delivered, log, closed, blocked,
                   flushOks, ringVars>>

Block(p, c) ==
    /\ CanReceive(p) /\ c \notin Gone(p)
    /\ SF!F!BlockStep(p, c)
    /\ UNCHANGED <<views, viewRing, vid, sent, fwd, recv, delivered, log, closed, blocked,
                   flushOks, completed, ringVars>>

RestartFlush(p, c) ==
    /\ CanReceive(p) /\ c \notin Gone(p)
    /\ SF!F!RestartFlushStep(p, c, log[p])
    /\ UNCHANGED <<views, viewRing, vid, sent, fwd, recv, delivered, log, closed, phase, blocked,
                   flushOks, completed, ringVars>>

FlushOk(p) ==
    /\ CanReceive(p)
    /\ SF!F!FlushOkStep(p)
    /\ UNCHANGED <<views, viewRing, vid, sent, fwd, recv, delivered, log, closed, blocked,
                   flushInit, completed, ringVars>>

ReceiveFlushOk(p, q) ==
    /\ CanReceive(p) /\ q \notin Gone(p)
    /\ SF!F!ReceiveFlushOkStep(p, q)
    /\ UNCHANGED <<views, viewRing, vid, sent, fwd, recv, delivered, log, closed, phase, blocked,
                   flushInit, completed, ringVars>>

\* p has the FLUSH_OK of every member of its view its ring has not dropped.
FlushCompleted(p) ==
    /\ CanReceive(p)
    /\ SF!F!FlushCompletedStep(p, Gone(p), log[p])
    /\ UNCHANGED <<views, viewRing, vid, sent, fwd, recv, delivered, log, closed, flushInit,
                   flushOks, ringVars>>

ReceiveFlushCompleted(c, q) ==
    /\ CanReceive(c) /\ q \notin Gone(c)
    /\ SF!F!ReceiveFlushCompletedStep(c, q)
    /\ UNCHANGED <<views, viewRing, vid, sent, fwd, recv, delivered, log, closed, phase, blocked,
                   flushInit, flushOks, ringVars>>

\* The initiator has the FLUSH_COMPLETED of every member it does not count
\* gone: it installs the ring's committed view as it stands now, sorted
\* (a view committed during the flush is folded in), and sends it to the
\* old view and the joiners with the longest digest of a member not gone
\* and the view's ring number; under NewerViewsOnly it waits for a commit
\* newer than its own view's (RaincoreFlush.tla).
SendView(c) ==
    /\ CanReceive(c)
    /\ SF!F!SendViewReady(c, Gone(c))
    /\ NewerRingView(c)
    /\ RF!TokenHeld(c) /\ RF!LatestUnderToken(c)
    /\ LET v   == vid[c]
           new == SortedSeq(Range(LastGlobalView(c)))
           D   == SF!Longest(SF!F!Digests(c, Gone(c)))
       IN /\ views' = Append(views, new)
          /\ viewRing' = Append(viewRing, LastIdx(c))
          /\ vid' = [vid EXCEPT ![c] = v + 1]
          /\ SF!Moved(c, new, D, Multi(chan, c, Range(views[v]) \cup Range(new), ViewMsg(v, D, LastIdx(c))))
    /\ SF!F!FlushEnded(c)
    /\ UNCHANGED <<sent, blocked, flushInit, ringVars>>

\* A member takes the VIEW of its view: the digest's DATA, then SEQUENCER's
\* view change (Moved).  A joiner (vid 0) takes none of the old view's
\* DATA; closed gets 0 for each view before it joined (VirtualSynchrony
\* reads only the views it moved between).
InstallView(p, c) ==
    /\ Alive(p)
    /\ SF!F!ViewArrives(p, c)
    /\ LET m == In(p, c) IN
         /\ vid' = [vid EXCEPT ![p] = m.view + 1]
         /\ IF vid[p] # 0
              THEN SF!Moved(p, views[m.view + 1], m.digest, Take(p, c))
              ELSE /\ closed' = [closed EXCEPT ![p] = [i \in 1..m.view |-> 0]]
                   /\ chan' = Take(p, c)
                   /\ UNCHANGED <<recv, delivered, fwd, log>>
    /\ flushInit' = [flushInit EXCEPT ![p] = IF vid[p] = 0 THEN SF!NoInit ELSE c]
    /\ SF!F!FlushEnded(p)
    /\ UNCHANGED <<views, viewRing, sent, blocked, ringVars>>

StopFlush(c) ==
    /\ CanReceive(c)
    /\ SF!F!StopFlushStep(c)
    /\ UNCHANGED <<views, viewRing, vid, sent, fwd, recv, delivered, log, closed, phase,
                   flushOks, completed, ringVars>>

Unblock(p, c) ==
    /\ CanReceive(p) /\ c \notin Gone(p)
    /\ SF!F!UnblockStep(p, c)
    /\ UNCHANGED <<views, viewRing, vid, sent, fwd, recv, delivered, log, closed, phase,
                   flushOks, completed, ringVars>>

-----------------------------------------------------------------------------
(* Environment *)

\* RaincoreFlush's: a member in Crashable, within the budget, not the last
\* live member of the latest view; without LossyRing neither holding the
\* token nor having it in transit (the abstraction: no token loss), with
\* it anywhere, the token holder included.
CanCrash(p) == RF!CanCrash(p)

\* The environment's cut of m's channels and the ring's part (RaincoreFlush's
\* RingCrash), for a crash and a leave alike.
Stop(m, lost) ==
    /\ chan' = [e \in Members \X Members |->
                  IF e[2] = m THEN <<>>
                  ELSE IF e[1] = m /\ e[2] \in lost THEN SubSeq(chan[e], 1, SF!LastView(chan[e]))
                  ELSE chan[e]]
    /\ RF!RingCrash(m)
    /\ UNCHANGED <<views, viewRing, vid, sent, fwd, recv, delivered, log, closed, phase, blocked,
                   flushInit, flushOks, completed>>

\* SequencerFlush's Crash(m, lost): for each r in lost, what m sent r and r
\* has not taken is lost up to the last VIEW; what was sent to m is gone.
\* m's flush messages are kept (the receivers take them until their ring
\* drops m, then Discard them).  The ring's part is RaincoreFlush's
\* RingCrash: under LossyRing the token it holds is lost; what it has in
\* transit may still arrive.
Crash(m, lost) == CanCrash(m) /\ Stop(m, lost)

\* RaincoreFlush's LeaveSuspected (SuspectLeaves): a live node of Crashable
\* leaves at any point, outside the crash budget, as the implementation's
\* node does once it learns it was reported unreachable; its channels go
\* as in Crash.
LeaveSuspected(m, lost) == RF!CanLeave(m) /\ Stop(m, lost)

\* RaincoreFlush's: a new node starts and applies to join with a 911.
Join(n) == KeepFlush /\ RF!Join(n)

\* RaincoreFlush's (LossyRing only): a token is lost in transit.
TokenLoss(m) == KeepFlush /\ RF!TokenLoss(m)

-----------------------------------------------------------------------------
Next ==
    \/ \E n \in Node : \E m \in tokenMsgs : TokenReceived(n, m)
    \/ \E n \in Node : \E m \in msgs911 : 911Received(n, m)
    \/ \E n \in Node : \E m \in tokenMsgs \cup {lastToken[n]} : TokenDeliveryFailure(n, m)
    \/ \E n \in Node : \E m \in msgs911 : 911DeliveryFailure(n, m)
    \/ \E n \in Node : EatingTimeout(n)
    \/ \E n \in Node : HungryTimeout(n)
    \/ \E n \in Node : StarvingTimeout(n)
    \/ \E m \in Members : Send(m)
    \/ \E c, p \in Members : RecvForward(c, p)
    \/ \E m, p \in Members : RecvData(m, p)
    \/ \E p, q \in Members : Discard(p, q)
    \/ \E c \in Members : StartFlush(c)
    \/ \E p, c \in Members : Block(p, c)
    \/ \E p, c \in Members : RestartFlush(p, c)
    \/ \E p \in Members : FlushOk(p)
    \/ \E p, q \in Members : ReceiveFlushOk(p, q)
    \/ \E p \in Members : FlushCompleted(p)
    \/ \E c, q \in Members : ReceiveFlushCompleted(c, q)
    \/ \E c \in Members : SendView(c)
    \/ \E p, c \in Members : InstallView(p, c)
    \/ \E c \in Members : StopFlush(c)
    \/ \E p, c \in Members : Unblock(p, c)
    \/ \E m \in Members : \E lost \in SUBSET (Members \ {m}) : Crash(m, lost)
    \/ \E m \in Members : \E lost \in SUBSET (Members \ {m}) : LeaveSuspected(m, lost)
    \/ \E n \in Node : Join(n)
    \/ \E m \in tokenMsgs : TokenLoss(m)

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Properties: SequencerFlush.tla's (crashed is now the dead nodes),       *)
(* Raincore.tla's, and RaincoreFlush.tla's ViewsFromRing.                  *)

\* The members the guarantees are to (RaincoreFlush.tla's): the dead nodes,
\* and under ShunSuspected the members the latest view leaves out.
Failed == RF!Failed
SP == INSTANCE SequencerFlush WITH
        UniformDelivery <- FALSE, crashed <- Failed, ndel <- [m \in Members |-> 0]

NoDuplicates       == SP!NoDuplicates
Integrity          == SP!Integrity
SenderFIFO         == SP!SenderFIFO
SurvivorTotalOrder == SP!SurvivorTotalOrder
VirtualSynchrony   == SP!VirtualSynchrony
LogsAgree          == SP!LogsAgree
AtMostOneToken     == RF!AtMostOneToken
ConsistentHistory  == RF!ConsistentHistory
LegalStates        == RF!LegalStates
SingleRegenerator  == RF!SingleRegenerator
\* Every view installed is a view the ring committed, in the ring's order.
ViewsFromRing      == RF!ViewsFromRing
\* One view per view id (RaincoreFlush.tla's, an action property).
OneViewPerId == [][\A c \in Members : SendView(c) => vid[c] = Latest]_vars
=============================================================================
