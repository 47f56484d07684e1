------------------------ MODULE RaincoreSequencerFlush ------------------------
(***************************************************************************)
(* SEQUENCER over FLUSH (spec/SequencerFlush) over the Raincore token ring *)
(* (spec/Raincore) as its membership: spec/RaincoreFlush's transformation  *)
(* applied to SequencerFlush.tla, so that survivor total order is checked  *)
(* with views no oracle decides.  From RaincoreFlush, unchanged:           *)
(*   - the ring part (variables, helpers, TokenReceived, 911Received,      *)
(*     TokenDeliveryFailure, 911DeliveryFailure, EatingTimeout, Join,      *)
(*     CanCrash: one token, never lost; crash-stop; 911s join only);       *)
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
    NewerViewsOnly \* RaincoreFlush's: act only on a ring commit newer than the view's (FALSE: a stale view)

ASSUME /\ N \in Nat \ {0} /\ NInit \in 2..N /\ Founder \in 1..NInit
       /\ MaxSeq \in Nat /\ Senders \subseteq 1..N
       /\ MaxCrashes \in Nat /\ Crashable \subseteq 1..N
       /\ ResendAlways \in BOOLEAN /\ ResentFirst \in BOOLEAN /\ NewerViewsOnly \in BOOLEAN

Members  == 1..N
Node     == Members
NoInit   == 0
Phases   == {"Normal", "InBlock", "OkSent", "Completed"}
InitRing == [i \in 1..NInit |-> i]
NULL     == 0
NullView == <<>>
\* A token: Raincore's without the sequence number (one token, never lost).
NoToken  == [nodelist |-> <<>>, cur |-> NULL, dest |-> NULL, gvn |-> 0]

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
    msgs911      \* 911 join requests in transit

flushVars == <<views, viewRing, vid, sent, fwd, recv, delivered, chan, log, closed,
               phase, blocked, flushInit, flushOks, completed>>
ringVars  == <<status, viewState, globalView, localView, newNodes, token,
               tokenMsgs, msgs911>>
vars == <<flushVars, ringVars>>

-----------------------------------------------------------------------------
(* Ring helpers (Raincore.tla) *)

Range(s) == {s[i] : i \in DOMAIN s}
Pos(s, x) == CHOOSE i \in DOMAIN s : s[i] = x
NextNode(l, n) == IF n \in Range(l) THEN l[(Pos(l, n) % Len(l)) + 1] ELSE l[1]
Remove(l, x) == SelectSeq(l, LAMBDA y : y # x)
SortedSeq(S) == [i \in 1..Cardinality(S) |->
                    CHOOSE x \in S : Cardinality({y \in S : y < x}) = i - 1]
InsertAfter(l, n, s) == SubSeq(l, 1, Pos(l, n)) \o s \o SubSeq(l, Pos(l, n) + 1, Len(l))
PadTo(gv, k) == gv \o [i \in 1..(k - Len(gv)) |-> NullView]
GlobalViewNumber(n) == Len(globalView[n])
LastGlobalView(n) ==
    LET gv  == globalView[n]
        idx == {i \in DOMAIN gv : gv[i] # NullView}
    IN  IF idx = {} THEN NullView ELSE gv[CHOOSE i \in idx : \A j \in idx : j <= i]
ViewOf(n) == IF LastGlobalView(n) = NullView THEN InitRing ELSE LastGlobalView(n)
LastIdx(n) ==
    LET gv  == globalView[n]
        idx == {i \in DOMAIN gv : gv[i] # NullView}
    IN  IF idx = {} THEN 0 ELSE CHOOSE i \in idx : \A j \in idx : j <= i
Eating(n) == token[n] # NoToken
Dead == {n \in Node : status[n] = "Down"}

-----------------------------------------------------------------------------
(* SEQUENCER over FLUSH helpers (SequencerFlush.tla), membership from the  *)
(* ring as in RaincoreFlush.tla                                            *)

Latest      == Len(views)
View(m)     == views[vid[m]]
Coord(v)    == v[1]                       \* SEQUENCER's coordinator: first member of a view
IsCoord(m)  == Coord(View(m)) = m
Alive(p)    == status[p] = "Up"
IsMember(p) == vid[p] >= 1 /\ p \in Range(views[vid[p]])
CanReceive(p) == Alive(p) /\ IsMember(p)
\* p's failure detector (RaincoreFlush.tla): the members of its view its
\* ring has dropped from the token's nodelist.
Gone(p)     == Range(views[vid[p]]) \ Range(localView[p])
\* The flush initiator: the smallest member of its view it does not count
\* gone (RaincoreFlush's IsCoord; SequencerFlush's IsInitiator).
IsInitiator(c) == \A q \in Range(View(c)) \ Gone(c) : c <= q
\* RaincoreFlush.tla's: c's ring committed a view newer than c's view (the
\* VIEW carries its ring number), and other than the latest.
NewerRingView(c) == ~NewerViewsOnly \/ LastIdx(c) > viewRing[vid[c]]
ViewChangePending(c) ==
    /\ LastGlobalView(c) # NullView /\ Range(LastGlobalView(c)) # Range(views[Latest])
    /\ NewerRingView(c)

Forward(s, q)           == [type |-> "FORWARD", sender |-> s, seqno |-> q]
Data(s, q, v)           == [type |-> "DATA", sender |-> s, seqno |-> q, view |-> v]
StartFlushMsg(v)        == [type |-> "START_FLUSH", view |-> v]
FlushOkMsg(v)           == [type |-> "FLUSH_OK", view |-> v]
FlushCompletedMsg(v, d) == [type |-> "FLUSH_COMPLETED", view |-> v, digest |-> d]
ViewMsg(v, d, r)        == [type |-> "VIEW", view |-> v, digest |-> d, ring |-> r]
StopFlushMsg(v)         == [type |-> "STOP_FLUSH", view |-> v]
FlushTypes == {"START_FLUSH", "FLUSH_OK", "FLUSH_COMPLETED", "STOP_FLUSH"}
MsgTypes   == {"FORWARD", "DATA", "VIEW"} \cup FlushTypes

\* The sequence of a finite set of naturals in increasing order.
Ascending(S) == CHOOSE f \in [1..Cardinality(S) -> S] : \A i, j \in DOMAIN f : i < j => f[i] < f[j]
\* The longest of a set of digests (prefixes of one another: LogsAgree).
Longest(S) == CHOOSE d \in S : \A e \in S : Len(e) <= Len(d)

\* Every send goes to R minus the sender and the dead: the transport loses
\* what is sent to a crashed node (the sender learns nothing from it).
Multi(ch, p, R, msg) ==
    [e \in Members \X Members |->
        IF e[1] = p /\ e[2] \in R \ ({p} \cup Dead) THEN Append(ch[e], msg) ELSE ch[e]]
SendTo(ch, p, q, msg) == IF q \in Dead THEN ch ELSE [ch EXCEPT ![<<p, q>>] = Append(@, msg)]
\* The coordinator multicasts DATA to its view, itself included.
McastData(ch, c, s, q) ==
    [e \in Members \X Members |->
        IF e[1] = c /\ e[2] \in Range(View(c)) \ Dead
            THEN Append(ch[e], Data(s, q, vid[c])) ELSE ch[e]]

HasMsg(p, q) == chan[<<q, p>>] # <<>>
In(p, q)     == Head(chan[<<q, p>>])
Take(p, q)   == [chan EXCEPT ![<<q, p>>] = Tail(@)]

LastView(s) == IF \E i \in DOMAIN s : s[i].type = "VIEW"
                 THEN CHOOSE i \in DOMAIN s : s[i].type = "VIEW" /\ \A j \in DOMAIN s : s[j].type = "VIEW" => j <= i
                 ELSE 0

\* SequencerFlush's eager discarding at install: every message of view v or
\* older in a channel to p would be dropped unread (Discard).
Purged(ch, p, v) ==
    [e \in Members \X Members |->
        IF e[2] = p THEN SelectSeq(ch[e], LAMBDA x : x.type = "FORWARD" \/ x.view > v) ELSE ch[e]]

RECURSIVE Absorb(_, _, _)
Absorb(m, st, ds) ==
    IF ds = <<>> THEN st
    ELSE LET s   == Head(ds)[1]
             q   == Head(ds)[2]
             dup == s \in DOMAIN st.recv /\ q <= st.recv[s]
         IN Absorb(m, [recv      |-> IF dup THEN st.recv ELSE (s :> q) @@ st.recv,
                       delivered |-> IF dup THEN st.delivered ELSE Append(st.delivered, <<s, q>>),
                       fwd       |-> IF s = m THEN st.fwd \ {q} ELSE st.fwd],
                   Tail(ds))

\* SequencerFlush's Moved, unchanged but for Alive(nc): m leaves its view
\* for new taking the digest D first, trims its received-table and, if the
\* coordinator changed (or ResendAlways), re-sends its forward-table.
Moved(m, new, D, ch) ==
    LET st     == Absorb(m, [recv |-> recv[m], delivered |-> delivered[m], fwd |-> fwd[m]], D)
        nc     == Coord(new)
        resend == Ascending(st.fwd)
    IN /\ recv' = [recv EXCEPT ![m] = [s \in DOMAIN st.recv \cap Range(new) |-> st.recv[s]]]
       /\ delivered' = [delivered EXCEPT ![m] = st.delivered]
       /\ fwd' = [fwd EXCEPT ![m] = st.fwd]
       /\ closed' = [closed EXCEPT ![m] = Append(@, Len(st.delivered))]
       /\ log' = [log EXCEPT ![m] = <<>>]
       /\ chan' = LET pch == Purged(ch, m, vid[m]) IN
                    IF (Coord(View(m)) # nc \/ ResendAlways) /\ nc \notin Dead
                      THEN [pch EXCEPT ![<<m, nc>>] = @ \o [i \in 1..Len(resend) |-> Forward(m, resend[i])]]
                      ELSE pch

-----------------------------------------------------------------------------
TokenRec == [nodelist : Seq(Node), cur : Node \cup {NULL}, dest : Node \cup {NULL}, gvn : Nat]
Msg911Rec == [orig : Node, cur : Node, dest : Node]

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
    /\ phase \in [Members -> Phases]
    /\ blocked \in [Members -> BOOLEAN]
    /\ flushInit \in [Members -> Members \cup {NoInit}]
    /\ flushOks \in [Members -> SUBSET Members]
    /\ \A c \in Members : \A r \in completed[c] : r[1] \in Members
    /\ status \in [Node -> {"Off", "Up", "Down"}]
    /\ viewState \in [Node -> {"Agreement", "Chaos", "Reserve"}]
    /\ globalView \in [Node -> Seq(Seq(Node))]
    /\ localView \in [Node -> Seq(Node)]
    /\ newNodes \in [Node -> SUBSET Node]
    /\ token \in [Node -> TokenRec]
    /\ tokenMsgs \subseteq TokenRec
    /\ msgs911 \subseteq Msg911Rec

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
    /\ flushInit = [m \in Members |-> NoInit]
    /\ flushOks = [m \in Members |-> {}]
    /\ completed = [m \in Members |-> {}]
    /\ status = [n \in Node |-> IF n <= NInit THEN "Up" ELSE "Off"]
    /\ viewState = [n \in Node |-> IF n <= NInit THEN "Agreement" ELSE "Chaos"]
    /\ globalView = [n \in Node |-> IF n <= NInit THEN <<InitRing>> ELSE <<>>]
    /\ localView = [n \in Node |-> IF n <= NInit THEN InitRing ELSE <<>>]
    /\ newNodes = [n \in Node |-> {}]
    /\ token = [n \in Node |-> IF n = Founder
                                 THEN [nodelist |-> InitRing, cur |-> n,
                                       dest |-> NextNode(InitRing, n), gvn |-> 1]
                                 ELSE NoToken]
    /\ tokenMsgs = {}
    /\ msgs911 = {}

-----------------------------------------------------------------------------
(* The ring (Raincore.tla's events, abstracted as said above) *)

\* 2. The token arrives: Eating, one step of the View State machine
\*    (Agreement/Chaos/Reserve), commit in Reserve on the same nodelist.
TokenReceived(n, m) ==
    LET same    == m.nodelist = localView[n]
        gv0     == globalView[n]
        reserve == viewState[n] = "Chaos" /\ same
        commit  == viewState[n] = "Reserve" /\ same
        vs      == CASE viewState[n] = "Agreement" -> IF same THEN "Agreement" ELSE "Chaos"
                     [] viewState[n] = "Chaos"     -> IF same THEN "Reserve" ELSE "Chaos"
                     [] viewState[n] = "Reserve"   -> IF same THEN "Agreement" ELSE "Chaos"
        gv1     == IF reserve THEN Append(gv0, NullView)
                   ELSE IF commit THEN [gv0 EXCEPT ![Len(gv0)] = m.nodelist]
                   ELSE gv0
        tgvn    == IF reserve THEN Len(gv1) ELSE m.gvn
    IN
    /\ Alive(n)
    /\ m \in tokenMsgs
    /\ m.dest = n
    /\ tokenMsgs' = tokenMsgs \ {m}
    /\ viewState' = [viewState EXCEPT ![n] = vs]
    /\ globalView' = [globalView EXCEPT ![n] = IF tgvn > Len(gv1) THEN PadTo(gv1, tgvn) ELSE gv1]
    /\ localView' = [localView EXCEPT ![n] = m.nodelist]
    /\ token' = [token EXCEPT ![n] = [m EXCEPT !.cur = n, !.gvn = tgvn]]
    /\ UNCHANGED <<flushVars, status, newNodes, msgs911>>

\* 3. A join request (911 from a node not on this node's view) is queued.
\*    Members send no 911 here (no regeneration), so that is every 911.
911Received(n, m) ==
    /\ Alive(n)
    /\ m \in msgs911
    /\ m.dest = n
    /\ m.orig \notin Range(ViewOf(n))
    /\ msgs911' = msgs911 \ {m}
    /\ newNodes' = [newNodes EXCEPT ![n] = @ \cup {m.orig}]
    /\ UNCHANGED <<flushVars, status, viewState, globalView, localView, token, tokenMsgs>>

\* 4. The failure detector: the token n sent could not be delivered (its
\*    destination is down).  Drop it from the nodelist, Chaos, resend;
\*    alone, commit the single-node view and keep the token.
TokenDeliveryFailure(n, m) ==
    LET nl == Remove(m.nodelist, m.dest)
        t  == [m EXCEPT !.nodelist = nl, !.dest = NextNode(nl, n)]
        t1 == [t EXCEPT !.gvn = GlobalViewNumber(n) + 1]
    IN
    /\ Alive(n)
    /\ m \in tokenMsgs
    /\ m.cur = n
    /\ status[m.dest] = "Down"
    /\ localView' = [localView EXCEPT ![n] = nl]
    /\ IF nl = <<n>>
         THEN /\ viewState' = [viewState EXCEPT ![n] = "Agreement"]
              /\ globalView' = [globalView EXCEPT ![n] = Append(@, nl)]
              /\ token' = [token EXCEPT ![n] = t1]
              /\ tokenMsgs' = tokenMsgs \ {m}
         ELSE /\ viewState' = [viewState EXCEPT ![n] = "Chaos"]
              /\ tokenMsgs' = (tokenMsgs \ {m}) \cup {t}
              /\ UNCHANGED <<globalView, token>>
    /\ UNCHANGED <<flushVars, status, newNodes, msgs911>>

\* 5. A 911 could not be delivered: on to the next node of the configured ring.
911DeliveryFailure(n, m) ==
    /\ Alive(n)
    /\ m \in msgs911
    /\ m.cur = n
    /\ status[m.dest] = "Down"
    /\ msgs911' = (msgs911 \ {m}) \cup {[m EXCEPT !.dest = NextNode(InitRing, m.dest)]}
    /\ UNCHANGED <<flushVars, status, viewState, globalView, localView, newNodes,
                   token, tokenMsgs>>

\* 6. Eating timeout: add the queued joiners right after n (Chaos) and pass
\*    the token on; alone, keep it.
EatingTimeout(n) ==
    LET t   == token[n]
        add == newNodes[n] \ Range(t.nodelist)
        nl  == IF add = {} THEN t.nodelist ELSE InsertAfter(t.nodelist, n, SortedSeq(add))
        t2  == [t EXCEPT !.nodelist = nl, !.cur = n, !.dest = NextNode(nl, n)]
    IN
    /\ Alive(n)
    /\ Eating(n)
    /\ newNodes' = [newNodes EXCEPT ![n] = {}]
    /\ viewState' = IF add = {} THEN viewState ELSE [viewState EXCEPT ![n] = "Chaos"]
    /\ IF Len(nl) > 1
         THEN /\ tokenMsgs' = tokenMsgs \cup {t2}
              /\ token' = [token EXCEPT ![n] = NoToken]
         ELSE UNCHANGED <<tokenMsgs, token>>
    /\ UNCHANGED <<flushVars, status, globalView, localView, msgs911>>

-----------------------------------------------------------------------------
(* SEQUENCER (SequencerFlush.tla; Alive(m) is now CanReceive(m): a joiner  *)
(* takes part once it installed a view)                                    *)

ResentPending(m) == \E i \in DOMAIN chan[<<m, m>>] : chan[<<m, m>>][i].type = "FORWARD"

Send(m) ==
    /\ m \in Senders
    /\ CanReceive(m)
    /\ ~blocked[m]
    /\ ResentFirst => ~ResentPending(m)
    /\ sent[m] < MaxSeq
    /\ LET q == sent[m] + 1 IN
        /\ sent' = [sent EXCEPT ![m] = q]
        /\ IF IsCoord(m)
             THEN /\ chan' = McastData(chan, m, m, q)
                  /\ log' = [log EXCEPT ![m] = Append(@, <<m, q>>)]
                  /\ UNCHANGED fwd
             ELSE /\ fwd' = [fwd EXCEPT ![m] = @ \cup {q}]
                  /\ chan' = SendTo(chan, m, Coord(View(m)), Forward(m, q))
                  /\ UNCHANGED log
    /\ UNCHANGED <<views, viewRing, vid, recv, delivered, closed, phase, blocked, flushInit,
                   flushOks, completed, ringVars>>

RecvForward(c, p) ==
    /\ CanReceive(c)
    /\ HasMsg(c, p)
    /\ In(c, p).type = "FORWARD"
    /\ LET msg == In(c, p) IN
         IF IsCoord(c)
           THEN /\ chan' = McastData(Take(c, p), c, msg.sender, msg.seqno)
                /\ log' = [log EXCEPT ![c] = Append(@, <<msg.sender, msg.seqno>>)]
           ELSE /\ chan' = Take(c, p)
                /\ UNCHANGED log
    /\ UNCHANGED <<views, viewRing, vid, sent, fwd, recv, delivered, closed, phase, blocked,
                   flushInit, flushOks, completed, ringVars>>

RecvData(m, p) ==
    /\ CanReceive(m)
    /\ HasMsg(m, p)
    /\ In(m, p).type = "DATA"
    /\ In(m, p).view = vid[m]
    /\ phase[m] # "Completed"
    /\ LET msg == In(m, p)
           s   == msg.sender
           q   == msg.seqno
           dup == s \in DOMAIN recv[m] /\ q <= recv[m][s]
       IN /\ chan' = Take(m, p)
          /\ log' = IF p = m THEN log ELSE [log EXCEPT ![m] = Append(@, <<s, q>>)]
          /\ fwd' = IF s = m THEN [fwd EXCEPT ![m] = @ \ {q}] ELSE fwd
          /\ IF dup
               THEN UNCHANGED <<recv, delivered>>
               ELSE /\ recv' = [recv EXCEPT ![m] = (s :> q) @@ @]
                    /\ delivered' = [delivered EXCEPT ![m] = Append(@, <<s, q>>)]
    /\ UNCHANGED <<views, viewRing, vid, sent, closed, phase, blocked, flushInit, flushOks,
                   completed, ringVars>>

\* p drops the next message from q: one of an earlier view; a flush message
\* from a member p counts gone; a DATA after p's FLUSH_COMPLETED.
Discard(p, q) ==
    /\ CanReceive(p)
    /\ HasMsg(p, q)
    /\ LET m == In(p, q) IN
         /\ m.type # "FORWARD"
         /\ \/ m.view < vid[p]
            \/ m.view = vid[p] /\ m.type \in FlushTypes /\ q \in Gone(p)
            \/ m.view = vid[p] /\ m.type = "DATA" /\ phase[p] = "Completed"
    /\ chan' = Take(p, q)
    /\ UNCHANGED <<views, viewRing, vid, sent, fwd, recv, delivered, log, closed, phase, blocked,
                   flushInit, flushOks, completed, ringVars>>

-----------------------------------------------------------------------------
(* FLUSH (SequencerFlush.tla); `crashed` is now Gone(p), p's ring's view,  *)
(* and "a crash in the latest view" is the ring's committed view.          *)

\* The initiator starts (or restarts, after the initiator is gone) a flush
\* once its ring has committed a view other than the latest.
StartFlush(c) ==
    /\ CanReceive(c) /\ vid[c] = Latest /\ IsInitiator(c)
    /\ flushInit[c] # c
    /\ ViewChangePending(c)
    /\ LET v == vid[c] IN
         chan' = Multi(chan, c, Range(views[v]), StartFlushMsg(v))
    /\ flushInit' = [flushInit EXCEPT ![c] = c]
    /\ phase' = [phase EXCEPT ![c] = IF @ = "Normal" THEN "InBlock" ELSE @]
    /\ completed' = [completed EXCEPT ![c] = IF phase[c] = "Completed" THEN {<<c, log[c]>>} ELSE {}]
    /\ UNCHANGED <<views, viewRing, vid, sent, fwd, recv, delivered, log, closed, blocked,
                   flushOks, ringVars>>

Block(p, c) ==
    /\ CanReceive(p) /\ HasMsg(p, c)
    /\ In(p, c).type = "START_FLUSH"
    /\ In(p, c).view = vid[p]
    /\ c \notin Gone(p)
    /\ phase[p] = "Normal"
    /\ phase' = [phase EXCEPT ![p] = "InBlock"]
    /\ flushInit' = [flushInit EXCEPT ![p] = c]
    /\ chan' = Take(p, c)
    /\ UNCHANGED <<views, viewRing, vid, sent, fwd, recv, delivered, log, closed, blocked,
                   flushOks, completed, ringVars>>

RestartFlush(p, c) ==
    /\ CanReceive(p) /\ HasMsg(p, c)
    /\ In(p, c).type = "START_FLUSH"
    /\ In(p, c).view = vid[p]
    /\ c \notin Gone(p)
    /\ phase[p] # "Normal"
    /\ flushInit' = [flushInit EXCEPT ![p] = c]
    /\ chan' = IF phase[p] = "Completed"
                 THEN Multi(Take(p, c), p, {c}, FlushCompletedMsg(vid[p], log[p]))
                 ELSE Take(p, c)
    /\ UNCHANGED <<views, viewRing, vid, sent, fwd, recv, delivered, log, closed, phase, blocked,
                   flushOks, completed, ringVars>>

FlushOk(p) ==
    /\ CanReceive(p)
    /\ phase[p] = "InBlock"
    /\ phase' = [phase EXCEPT ![p] = "OkSent"]
    /\ flushOks' = [flushOks EXCEPT ![p] = @ \cup {p}]
    /\ chan' = Multi(chan, p, Range(View(p)), FlushOkMsg(vid[p]))
    /\ UNCHANGED <<views, viewRing, vid, sent, fwd, recv, delivered, log, closed, blocked,
                   flushInit, completed, ringVars>>

ReceiveFlushOk(p, q) ==
    /\ CanReceive(p) /\ HasMsg(p, q)
    /\ In(p, q).type = "FLUSH_OK"
    /\ In(p, q).view = vid[p]
    /\ q \notin Gone(p)
    /\ flushOks' = [flushOks EXCEPT ![p] = @ \cup {q}]
    /\ chan' = Take(p, q)
    /\ UNCHANGED <<views, viewRing, vid, sent, fwd, recv, delivered, log, closed, phase, blocked,
                   flushInit, completed, ringVars>>

\* p has the FLUSH_OK of every member of its view its ring has not dropped.
FlushCompleted(p) ==
    /\ CanReceive(p)
    /\ phase[p] = "OkSent"
    /\ Range(View(p)) \ Gone(p) \subseteq flushOks[p]
    /\ LET c == flushInit[p] IN
         /\ phase' = [phase EXCEPT ![p] = "Completed"]
         /\ blocked' = [blocked EXCEPT ![p] = TRUE]
         /\ IF c = p
              THEN /\ completed' = [completed EXCEPT ![p] = @ \cup {<<p, log[p]>>}]
                   /\ UNCHANGED chan
              ELSE /\ chan' = Multi(chan, p, {c}, FlushCompletedMsg(vid[p], log[p]))
                   /\ UNCHANGED completed
    /\ UNCHANGED <<views, viewRing, vid, sent, fwd, recv, delivered, log, closed, flushInit,
                   flushOks, ringVars>>

ReceiveFlushCompleted(c, q) ==
    /\ CanReceive(c) /\ HasMsg(c, q)
    /\ In(c, q).type = "FLUSH_COMPLETED"
    /\ In(c, q).view = vid[c]
    /\ q \notin Gone(c)
    /\ completed' = [completed EXCEPT ![c] = @ \cup {<<q, In(c, q).digest>>}]
    /\ chan' = Take(c, q)
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
    /\ flushInit[c] = c
    /\ phase[c] = "Completed"
    /\ Range(View(c)) \ Gone(c) \subseteq {r[1] : r \in completed[c]}
    /\ NewerRingView(c)
    /\ LET v   == vid[c]
           new == SortedSeq(Range(LastGlobalView(c)))
           D   == Longest({r[2] : r \in {x \in completed[c] : x[1] \notin Gone(c)}})
       IN /\ views' = Append(views, new)
          /\ viewRing' = Append(viewRing, LastIdx(c))
          /\ vid' = [vid EXCEPT ![c] = v + 1]
          /\ Moved(c, new, D, Multi(chan, c, Range(views[v]) \cup Range(new), ViewMsg(v, D, LastIdx(c))))
    /\ phase' = [phase EXCEPT ![c] = "Normal"]
    /\ flushOks' = [flushOks EXCEPT ![c] = {}]
    /\ completed' = [completed EXCEPT ![c] = {}]
    /\ UNCHANGED <<sent, blocked, flushInit, ringVars>>

\* A member takes the VIEW of its view: the digest's DATA, then SEQUENCER's
\* view change (Moved).  A joiner (vid 0) takes none of the old view's
\* DATA; closed gets 0 for each view before it joined (VirtualSynchrony
\* reads only the views it moved between).
InstallView(p, c) ==
    /\ Alive(p) /\ HasMsg(p, c)
    /\ In(p, c).type = "VIEW"
    /\ \/ IsMember(p) /\ In(p, c).view = vid[p]
       \/ vid[p] = 0
    /\ LET m == In(p, c) IN
         /\ vid' = [vid EXCEPT ![p] = m.view + 1]
         /\ IF vid[p] # 0
              THEN Moved(p, views[m.view + 1], m.digest, Take(p, c))
              ELSE /\ closed' = [closed EXCEPT ![p] = [i \in 1..m.view |-> 0]]
                   /\ chan' = Take(p, c)
                   /\ UNCHANGED <<recv, delivered, fwd, log>>
    /\ flushInit' = [flushInit EXCEPT ![p] = IF vid[p] = 0 THEN NoInit ELSE c]
    /\ phase' = [phase EXCEPT ![p] = "Normal"]
    /\ flushOks' = [flushOks EXCEPT ![p] = {}]
    /\ completed' = [completed EXCEPT ![p] = {}]
    /\ UNCHANGED <<views, viewRing, sent, blocked, ringVars>>

StopFlush(c) ==
    /\ CanReceive(c)
    /\ flushInit[c] = c
    /\ phase[c] = "Normal"
    /\ LET v == vid[c] IN
         chan' = Multi(chan, c, Range(views[v]) \cap Range(views[v - 1]), StopFlushMsg(v))
    /\ blocked' = [blocked EXCEPT ![c] = FALSE]
    /\ flushInit' = [flushInit EXCEPT ![c] = NoInit]
    /\ UNCHANGED <<views, viewRing, vid, sent, fwd, recv, delivered, log, closed, phase,
                   flushOks, completed, ringVars>>

Unblock(p, c) ==
    /\ CanReceive(p) /\ HasMsg(p, c)
    /\ In(p, c).type = "STOP_FLUSH"
    /\ In(p, c).view = vid[p]
    /\ c \notin Gone(p)
    /\ blocked' = [blocked EXCEPT ![p] = FALSE]
    /\ flushInit' = [flushInit EXCEPT ![p] = NoInit]
    /\ chan' = Take(p, c)
    /\ UNCHANGED <<views, viewRing, vid, sent, fwd, recv, delivered, log, closed, phase,
                   flushOks, completed, ringVars>>

-----------------------------------------------------------------------------
(* Environment *)

\* RaincoreFlush's: a member in Crashable, within the budget, not the last
\* live member of the latest view, neither holding the token nor having it
\* in transit (the abstraction: no token loss).
CanCrash(p) ==
    /\ Alive(p) /\ IsMember(p)
    /\ p \in Crashable
    /\ Cardinality(Dead) < MaxCrashes
    /\ (Range(views[Latest]) \ Dead) \ {p} # {}
    /\ ~Eating(p)
    /\ \A m \in tokenMsgs : m.cur # p

\* SequencerFlush's Crash(m, lost): for each r in lost, what m sent r and r
\* has not taken is lost up to the last VIEW; what was sent to m is gone.
\* m's flush messages are kept (the receivers take them until their ring
\* drops m, then Discard them); its 911s are lost (RaincoreFlush).
Crash(m, lost) ==
    /\ CanCrash(m)
    /\ status' = [status EXCEPT ![m] = "Down"]
    /\ chan' = [e \in Members \X Members |->
                  IF e[2] = m THEN <<>>
                  ELSE IF e[1] = m /\ e[2] \in lost THEN SubSeq(chan[e], 1, LastView(chan[e]))
                  ELSE chan[e]]
    /\ msgs911' = {x \in msgs911 : x.cur # m}
    /\ UNCHANGED <<views, viewRing, vid, sent, fwd, recv, delivered, log, closed, phase, blocked,
                   flushInit, flushOks, completed, viewState, globalView, localView,
                   newNodes, token, tokenMsgs>>

\* RaincoreFlush's: a new node starts and applies to join with a 911.
Join(n) ==
    /\ n > NInit
    /\ status[n] = "Off"
    /\ status' = [status EXCEPT ![n] = "Up"]
    /\ msgs911' = msgs911 \cup {[orig |-> n, cur |-> n, dest |-> NextNode(InitRing, n)]}
    /\ UNCHANGED <<flushVars, viewState, globalView, localView, newNodes, token, tokenMsgs>>

-----------------------------------------------------------------------------
Next ==
    \/ \E n \in Node : \E m \in tokenMsgs : TokenReceived(n, m)
    \/ \E n \in Node : \E m \in msgs911 : 911Received(n, m)
    \/ \E n \in Node : \E m \in tokenMsgs : TokenDeliveryFailure(n, m)
    \/ \E n \in Node : \E m \in msgs911 : 911DeliveryFailure(n, m)
    \/ \E n \in Node : EatingTimeout(n)
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
    \/ \E n \in Node : Join(n)

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Properties: SequencerFlush.tla's (crashed is now the dead nodes),        *)
(* Raincore.tla's, and RaincoreFlush.tla's ViewsFromRing.                   *)

Delivers(m, x) == \E i \in DOMAIN delivered[m] : delivered[m][i] = x

NoDuplicates ==
    \A m \in Members : \A i, j \in DOMAIN delivered[m] : i # j => delivered[m][i] # delivered[m][j]

Integrity ==
    \A m \in Members : \A i \in DOMAIN delivered[m] :
        delivered[m][i][2] \in 1..sent[delivered[m][i][1]]

SenderFIFO ==
    \A m \in Members : \A i, j \in DOMAIN delivered[m] :
        (i < j /\ delivered[m][i][1] = delivered[m][j][1]) => delivered[m][i][2] < delivered[m][j][2]

SurvivorTotalOrder ==
    \A m1, m2 \in Members \ Dead :
        LET InM1(x) == Delivers(m1, x)
            InM2(x) == Delivers(m2, x)
        IN SelectSeq(delivered[m1], InM2) = SelectSeq(delivered[m2], InM1)

DeliveredIn(m, v) ==
    {delivered[m][i] : i \in (IF v = 1 THEN 0 ELSE closed[m][v - 1]) + 1 .. closed[m][v]}

VirtualSynchrony ==
    \A p, q \in Members : \A v \in 1..(Latest - 1) :
        ( /\ vid[p] > v /\ p \in Range(views[v]) \cap Range(views[v + 1])
          /\ vid[q] > v /\ q \in Range(views[v]) \cap Range(views[v + 1]) )
        => DeliveredIn(p, v) = DeliveredIn(q, v)

IsPrefix(a, b) == Len(a) <= Len(b) /\ SubSeq(b, 1, Len(a)) = a
LogsAgree ==
    \A p, q \in Members : vid[p] = vid[q] => IsPrefix(log[p], log[q]) \/ IsPrefix(log[q], log[p])

AtMostOneToken ==
    Cardinality({n \in Node : Alive(n) /\ Eating(n)}) + Cardinality(tokenMsgs) <= 1

ConsistentHistory ==
    \A m, n \in Node :
        \A i \in 1..Len(globalView[m]) :
            (i <= Len(globalView[n]) /\ globalView[m][i] # NullView
                /\ globalView[n][i] # NullView)
            => globalView[m][i] = globalView[n][i]

\* Every view installed is a view the ring committed, in the ring's order.
RingIndex(S) == UNION {{i \in DOMAIN globalView[n] :
                            globalView[n][i] # NullView /\ Range(globalView[n][i]) = S}
                        : n \in Node}
ViewsFromRing ==
    /\ \A v \in 1..Latest : RingIndex(Range(views[v])) # {}
    /\ \A v \in 1..(Latest - 1) :
          \A i \in RingIndex(Range(views[v])), j \in RingIndex(Range(views[v + 1])) : i < j
=============================================================================
