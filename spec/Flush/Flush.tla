-------------------------------- MODULE Flush --------------------------------
(***************************************************************************)
(* FLUSH: the stop-the-world flush of JGroups (seed 003, JGRP-82), in the  *)
(* four-phase form of the seed's section "Design change: flushing and      *)
(* block() / unblock() callbacks", used for every view change (join,       *)
(* leave, crash) as in the seed's "FLUSH on view change".  docs/flush.md   *)
(* lists every interpretation of the seed taken here.                      *)
(*                                                                         *)
(* Members are the integers 1..N; members 1..NInit form the first view,    *)
(* the others may join.  The coordinator of the latest view is its         *)
(* smallest member that has neither crashed nor asked to leave; it is the  *)
(* flush initiator.  One flush in view v:                                  *)
(*   1. StartFlush: the initiator multicasts START_FLUSH to the live       *)
(*      members of v (itself included, at once).                           *)
(*      Block: on START_FLUSH a member invokes block(); the application    *)
(*      may still multicast while block() runs.                            *)
(*   2. FlushOk: block() returns; the member multicasts FLUSH_OK.  FIFO    *)
(*      delivers every multicast it sent before ahead of its FLUSH_OK.     *)
(*   3. FlushCompleted: once a member has the FLUSH_OK of every live       *)
(*      member of v, it blocks sends (the latch in FLUSH.down()) and       *)
(*      sends FLUSH_COMPLETED with its digest to the initiator.            *)
(*   4. SendView: once the initiator has the FLUSH_COMPLETED of every live *)
(*      member of v, it computes V2 = M - S - L + J and sends it (with the *)
(*      reconciliation digest) to M - S and to the joiners; InstallView at *)
(*      each.  StopFlush: the initiator multicasts STOP_FLUSH to the       *)
(*      members that stay; Unblock opens the latch there.                  *)
(* If the initiator crashes, the next coordinator restarts the flush from  *)
(* scratch (StartFlush again; RestartFlush at members already in it).      *)
(* Members exclude crashed members from every wait, and drop flush         *)
(* messages that come from a crashed member.                               *)
(*                                                                         *)
(* Environment: channels are reliable FIFO per pair of members.  A member  *)
(* crashes (crash-stop); the failure detector is perfect and immediate.   *)
(* At a crash every channel from the crashed member keeps only a prefix   *)
(* of what is in it (its last messages reach only some members), except    *)
(* that VIEW messages are never lost: installing views reliably is GMS's   *)
(* job, not FLUSH's (docs/flush.md, interpretation I9).  What was sent to  *)
(* the crashed member is gone with it.                                     *)
(*                                                                         *)
(* The seed's open question: a member may multicast after its FLUSH_OK     *)
(* and before it has every FLUSH_OK.  ReconcileDigests = FALSE is the      *)
(* seed as written: such a message can race the new view, and TLC refutes  *)
(* VirtualSynchrony; a crashed member's last multicast that reached only   *)
(* some members breaks it too.  ReconcileDigests = TRUE is the fix: the    *)
(* initiator unions the digests of the live members into the VIEW          *)
(* message, every member delivers the messages of that union it lacks      *)
(* before installing the view, and after its FLUSH_COMPLETED a member      *)
(* delivers messages of the old view only through that reconciliation.     *)
(*                                                                         *)
(* FlushOkRound = TRUE is the four-phase flush above.  FALSE drops phase   *)
(* 2, as in the seed's earlier sections ("FLUSH protocol (view             *)
(* installation for join/crash/leave)") and in JGroups 2.12: once block()  *)
(* returns a member closes the latch and sends FLUSH_COMPLETED at once     *)
(* (FlushCompleted right after Block; no FLUSH_OK is ever sent).           *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS
    N,                \* members are 1..N
    NInit,            \* members 1..NInit form the first view; NInit+1..N may join
    MaxMsgs,          \* application multicasts, over all members
    MaxCrashes,       \* crashes the environment may inject
    MaxLeaves,        \* graceful leaves the environment may request
    ReconcileDigests, \* TRUE: the fix (digest reconciliation); FALSE: the seed as written
    FlushOkRound      \* TRUE: the FLUSH_OK round of the design change; FALSE: JGroups 2.12's flush

ASSUME /\ N \in Nat \ {0} /\ NInit \in 1..N
       /\ MaxMsgs \in Nat /\ MaxCrashes \in Nat /\ MaxLeaves \in Nat
       /\ ReconcileDigests \in BOOLEAN /\ FlushOkRound \in BOOLEAN

Members == 1..N
MsgIds  == 1..MaxMsgs
NoInit  == 0                 \* flushInit value: no flush under way
Phases  == {"Normal", "InBlock", "OkSent", "Completed"}

VARIABLES
    views,      \* views[v]: the set of members of view v, as decided by the coordinators (GMS)
    vid,        \* vid[p]: the view p has installed (0: not joined yet)
    crashed,    \* the members that have crashed
    joining,    \* members whose JOIN the coordinator has not yet put in a view
    leaving,    \* members that asked to leave (pending while still in the latest view)
    sent,       \* sent[i]: sender and view of application multicast i (history)
    delivered,  \* delivered[p]: ids of the application multicasts p delivered
    chan,       \* chan[<<p, q>>]: the reliable FIFO channel from p to q
    phase,      \* phase[p]: "Normal", "InBlock" (in block()), "OkSent", "Completed"
    blocked,    \* blocked[p]: the latch in FLUSH.down() is closed: p may not multicast
    flushInit,  \* flushInit[p]: initiator of the flush p is in, or whose STOP_FLUSH p awaits
    flushOks,   \* flushOks[p]: members whose FLUSH_OK p has received in its view
    digest,     \* digest[p]: the digest p sent in its last FLUSH_COMPLETED of its view
    completed   \* completed[c]: <<q, digest>> for each FLUSH_COMPLETED initiator c recorded

vars == <<views, vid, crashed, joining, leaving, sent, delivered, chan,
          phase, blocked, flushInit, flushOks, digest, completed>>

-----------------------------------------------------------------------------
(* Messages.  Every message carries the view it was sent in; a VIEW sent   *)
(* in view v installs view v + 1.                                          *)

Data(v, i)               == [type |-> "DATA", view |-> v, id |-> i]
StartFlushMsg(v)         == [type |-> "START_FLUSH", view |-> v]
FlushOkMsg(v)            == [type |-> "FLUSH_OK", view |-> v]
FlushCompletedMsg(v, d)  == [type |-> "FLUSH_COMPLETED", view |-> v, digest |-> d]
ViewMsg(v, d)            == [type |-> "VIEW", view |-> v, digest |-> d]
StopFlushMsg(v)          == [type |-> "STOP_FLUSH", view |-> v]

FlushTypes == {"START_FLUSH", "FLUSH_OK", "FLUSH_COMPLETED", "STOP_FLUSH"}

Msgs ==
    [type : {"DATA"}, view : Nat, id : MsgIds]
    \cup [type : {"START_FLUSH", "FLUSH_OK", "STOP_FLUSH"}, view : Nat]
    \cup [type : {"FLUSH_COMPLETED", "VIEW"}, view : Nat, digest : SUBSET MsgIds]

-----------------------------------------------------------------------------
(* Helpers *)

Latest       == Len(views)
Alive(p)     == p \notin crashed
IsMember(p)  == vid[p] >= 1 /\ p \in views[vid[p]]
Departed(p)  == vid[p] >= 1 /\ p \notin views[vid[p]]    \* left gracefully
Staying      == views[Latest] \ (crashed \cup leaving)
IsCoord(c)   == c \in Staying /\ \A q \in Staying : c <= q

\* The messages of view v that p delivered, and those p sent.
DeliveredIn(p, v) == {i \in delivered[p] : sent[i].view = v}
SentIn(p, v)      == {i \in 1..Len(sent) : sent[i].sender = p /\ sent[i].view = v}

\* A view change is due: a member of the latest view crashed, or a LEAVE or JOIN waits.
ViewChangePending == views[Latest] \cap (crashed \cup leaving) # {} \/ joining # {}

\* Channels after p sends msg to every member of R (no channel to oneself).
Multi(ch, p, R, msg) ==
    [e \in Members \X Members |->
        IF e[1] = p /\ e[2] \in R \ {p} THEN Append(ch[e], msg) ELSE ch[e]]

\* The next message p receives from q, and the channels once it is taken.
HasMsg(p, q) == chan[<<q, p>>] # <<>>
In(p, q)     == Head(chan[<<q, p>>])
Take(p, q)   == [chan EXCEPT ![<<q, p>>] = Tail(@)]

\* A member that receives: alive and in a view (joiners only take their VIEW).
CanReceive(p) == Alive(p) /\ IsMember(p)

\* At a crash of p, the channel from p to q keeps at least everything up to
\* its last VIEW message.
LastView(s)   == IF \E i \in DOMAIN s : s[i].type = "VIEW"
                   THEN CHOOSE i \in DOMAIN s : s[i].type = "VIEW" /\ \A j \in DOMAIN s : s[j].type = "VIEW" => j <= i
                   ELSE 0
MaxOut(p)     == CHOOSE k \in {Len(chan[<<p, q>>]) : q \in Members} :
                       \A q \in Members : Len(chan[<<p, q>>]) <= k

-----------------------------------------------------------------------------
TypeOK ==
    /\ views \in Seq(SUBSET Members) /\ Latest >= 1
    /\ vid \in [Members -> 0..Latest]
    /\ crashed \subseteq Members
    /\ joining \subseteq Members
    /\ leaving \subseteq Members
    /\ sent \in Seq([sender : Members, view : 1..Latest]) /\ Len(sent) <= MaxMsgs
    /\ delivered \in [Members -> SUBSET MsgIds]
    /\ chan \in [Members \X Members -> Seq(Msgs)]
    /\ phase \in [Members -> Phases]
    /\ blocked \in [Members -> BOOLEAN]
    /\ flushInit \in [Members -> Members \cup {NoInit}]
    /\ flushOks \in [Members -> SUBSET Members]
    /\ digest \in [Members -> SUBSET MsgIds]
    /\ completed \in [Members -> SUBSET (Members \X SUBSET MsgIds)]

Init ==
    /\ views = << 1..NInit >>
    /\ vid = [p \in Members |-> IF p <= NInit THEN 1 ELSE 0]
    /\ crashed = {}
    /\ joining = {}
    /\ leaving = {}
    /\ sent = << >>
    /\ delivered = [p \in Members |-> {}]
    /\ chan = [e \in Members \X Members |-> << >>]
    /\ phase = [p \in Members |-> "Normal"]
    /\ blocked = [p \in Members |-> FALSE]
    /\ flushInit = [p \in Members |-> NoInit]
    /\ flushOks = [p \in Members |-> {}]
    /\ digest = [p \in Members |-> {}]
    /\ completed = [p \in Members |-> {}]

-----------------------------------------------------------------------------
(* Application *)

\* p multicasts application message i to its view, delivering it to itself
\* at once; allowed unless the latch is closed, so also during block() and
\* after FLUSH_OK (the seed's open question).
Multicast(p) ==
    /\ CanReceive(p)
    /\ ~blocked[p]
    /\ Len(sent) < MaxMsgs
    /\ LET i == Len(sent) + 1
           v == vid[p]
       IN /\ sent' = Append(sent, [sender |-> p, view |-> v])
          /\ delivered' = [delivered EXCEPT ![p] = @ \cup {i}]
          /\ chan' = Multi(chan, p, views[v] \ crashed, Data(v, i))
    /\ UNCHANGED <<views, vid, crashed, joining, leaving,
                   phase, blocked, flushInit, flushOks, digest, completed>>

\* p delivers the next DATA from q, sent in p's view.  With reconciliation,
\* not once p has sent FLUSH_COMPLETED (Discard then; the VIEW brings it).
Deliver(p, q) ==
    /\ CanReceive(p) /\ HasMsg(p, q)
    /\ In(p, q).type = "DATA"
    /\ In(p, q).view = vid[p]
    /\ ~(ReconcileDigests /\ phase[p] = "Completed")
    /\ delivered' = [delivered EXCEPT ![p] = @ \cup {In(p, q).id}]
    /\ chan' = Take(p, q)
    /\ UNCHANGED <<views, vid, crashed, joining, leaving, sent,
                   phase, blocked, flushInit, flushOks, digest, completed>>

\* The next message from q is one p drops: one sent in an earlier view; a
\* flush message from a member of gone, those p counts as crashed (the seed:
\* expect no FLUSH message from a suspect); with reconciliation, a DATA
\* arriving after p's FLUSH_COMPLETED.
Stale(p, q, gone) ==
    LET m == In(p, q) IN
    \/ m.view < vid[p]
    \/ m.view = vid[p] /\ m.type \in FlushTypes /\ q \in gone
    \/ m.view = vid[p] /\ m.type = "DATA" /\ ReconcileDigests /\ phase[p] = "Completed"

\* p drops the next message from q.
Discard(p, q) ==
    /\ CanReceive(p) /\ HasMsg(p, q)
    /\ Stale(p, q, crashed)
    /\ chan' = Take(p, q)
    /\ UNCHANGED <<views, vid, crashed, joining, leaving, sent, delivered,
                   phase, blocked, flushInit, flushOks, digest, completed>>

-----------------------------------------------------------------------------
(* Flush, phase 1: START_FLUSH and block() *)

\* Each step of the flush is written once, as <Action>Step: its guards on
\* the flush's own state and its effect on it.  The actions add who may
\* take it (here `crashed` is a perfect failure detector); a composition
\* (SequencerFlush, RaincoreFlush, RaincoreSequencerFlush) adds its own:
\* gone is then the members the stepping member counts as crashed, d its
\* digest, and every send leaves out the members in `crashed`.

\* The initiator c starts (or restarts) the flush of its view: it takes its
\* own START_FLUSH at once, and if it had already sent FLUSH_COMPLETED to a
\* crashed initiator it records its own again, with digest d.
StartFlushStep(c, d) ==
    /\ flushInit[c] # c
    /\ chan' = Multi(chan, c, views[vid[c]] \ crashed, StartFlushMsg(vid[c]))
    /\ flushInit' = [flushInit EXCEPT ![c] = c]
    /\ phase' = [phase EXCEPT ![c] = IF @ = "Normal" THEN "InBlock" ELSE @]
    /\ completed' = [completed EXCEPT ![c] = IF phase[c] = "Completed" THEN {<<c, d>>} ELSE {}]

\* p's digest: what it delivered in its view.  A member that has sent
\* FLUSH_COMPLETED and takes part in a restarted flush reports it again.
Digest(p)   == DeliveredIn(p, vid[p])
Redigest(p) == digest' = IF phase[p] = "Completed" THEN [digest EXCEPT ![p] = Digest(p)] ELSE digest

\* The coordinator c of the latest view starts a flush for a pending view
\* change, or restarts from scratch the flush of a crashed initiator.
StartFlush(c) ==
    /\ Alive(c) /\ vid[c] = Latest /\ IsCoord(c)
    /\ ViewChangePending
    /\ StartFlushStep(c, Digest(c))
    /\ Redigest(c)
    /\ UNCHANGED <<views, vid, crashed, joining, leaving, sent, delivered,
                   blocked, flushOks>>

\* p takes START_FLUSH from c and invokes block().
BlockStep(p, c) ==
    /\ HasMsg(p, c)
    /\ In(p, c).type = "START_FLUSH"
    /\ In(p, c).view = vid[p]
    /\ phase[p] = "Normal"
    /\ phase' = [phase EXCEPT ![p] = "InBlock"]
    /\ flushInit' = [flushInit EXCEPT ![p] = c]
    /\ chan' = Take(p, c)

Block(p, c) ==
    /\ CanReceive(p) /\ Alive(c)
    /\ BlockStep(p, c)
    /\ UNCHANGED <<views, vid, crashed, joining, leaving, sent, delivered,
                   blocked, flushOks, digest, completed>>

\* p, already in a flush whose initiator crashed, takes START_FLUSH from the
\* new initiator c: it follows c from now on, and if it had sent its
\* FLUSH_COMPLETED already it sends it again to c, with digest d.
RestartFlushStep(p, c, d) ==
    /\ HasMsg(p, c)
    /\ In(p, c).type = "START_FLUSH"
    /\ In(p, c).view = vid[p]
    /\ phase[p] # "Normal"
    /\ flushInit' = [flushInit EXCEPT ![p] = c]
    /\ chan' = IF phase[p] = "Completed"
                 THEN Multi(Take(p, c), p, {c} \ crashed, FlushCompletedMsg(vid[p], d))
                 ELSE Take(p, c)

RestartFlush(p, c) ==
    /\ CanReceive(p) /\ Alive(c)
    /\ RestartFlushStep(p, c, Digest(p))
    /\ Redigest(p)
    /\ UNCHANGED <<views, vid, crashed, joining, leaving, sent, delivered,
                   phase, blocked, flushOks, completed>>

-----------------------------------------------------------------------------
(* Flush, phase 2: FLUSH_OK *)

\* block() returns at p: p multicasts FLUSH_OK (and counts its own).
\* Without the round there is no FLUSH_OK, so none is ever received either.
FlushOkStep(p) ==
    /\ FlushOkRound
    /\ phase[p] = "InBlock"
    /\ phase' = [phase EXCEPT ![p] = "OkSent"]
    /\ flushOks' = [flushOks EXCEPT ![p] = @ \cup {p}]
    /\ chan' = Multi(chan, p, views[vid[p]] \ crashed, FlushOkMsg(vid[p]))

FlushOk(p) ==
    /\ CanReceive(p)
    /\ FlushOkStep(p)
    /\ UNCHANGED <<views, vid, crashed, joining, leaving, sent, delivered,
                   blocked, flushInit, digest, completed>>

\* p takes FLUSH_OK from q.
ReceiveFlushOkStep(p, q) ==
    /\ HasMsg(p, q)
    /\ In(p, q).type = "FLUSH_OK"
    /\ In(p, q).view = vid[p]
    /\ flushOks' = [flushOks EXCEPT ![p] = @ \cup {q}]
    /\ chan' = Take(p, q)

ReceiveFlushOk(p, q) ==
    /\ CanReceive(p) /\ Alive(q)
    /\ ReceiveFlushOkStep(p, q)
    /\ UNCHANGED <<views, vid, crashed, joining, leaving, sent, delivered,
                   phase, blocked, flushInit, digest, completed>>

-----------------------------------------------------------------------------
(* Flush, phase 3: FLUSH_COMPLETED *)

\* p has the FLUSH_OK of every member of its view but those in gone (without
\* the round: block() has returned at p): it closes the latch and sends
\* FLUSH_COMPLETED with digest d to the initiator (recorded at once if p is
\* the initiator, lost if the initiator crashed).
FlushCompletedStep(p, gone, d) ==
    /\ IF FlushOkRound
         THEN /\ phase[p] = "OkSent"
              /\ views[vid[p]] \ gone \subseteq flushOks[p]
         ELSE phase[p] = "InBlock"
    /\ phase' = [phase EXCEPT ![p] = "Completed"]
    /\ blocked' = [blocked EXCEPT ![p] = TRUE]
    /\ LET c == flushInit[p] IN
         IF c = p
           THEN /\ completed' = [completed EXCEPT ![p] = @ \cup {<<p, d>>}]
                /\ UNCHANGED chan
           ELSE /\ chan' = Multi(chan, p, {c} \ crashed, FlushCompletedMsg(vid[p], d))
                /\ UNCHANGED completed

FlushCompleted(p) ==
    /\ CanReceive(p)
    /\ FlushCompletedStep(p, crashed, Digest(p))
    /\ digest' = [digest EXCEPT ![p] = Digest(p)]
    /\ UNCHANGED <<views, vid, crashed, joining, leaving, sent, delivered,
                   flushInit, flushOks>>

\* The initiator c records q's FLUSH_COMPLETED in its vector.
ReceiveFlushCompletedStep(c, q) ==
    /\ HasMsg(c, q)
    /\ In(c, q).type = "FLUSH_COMPLETED"
    /\ In(c, q).view = vid[c]
    /\ completed' = [completed EXCEPT ![c] = @ \cup {<<q, In(c, q).digest>>}]
    /\ chan' = Take(c, q)

ReceiveFlushCompleted(c, q) ==
    /\ CanReceive(c) /\ Alive(q)
    /\ ReceiveFlushCompletedStep(c, q)
    /\ UNCHANGED <<views, vid, crashed, joining, leaving, sent, delivered,
                   phase, blocked, flushInit, flushOks, digest>>

-----------------------------------------------------------------------------
(* Flush, phase 4: the view change, then STOP_FLUSH *)

\* The initiator c has the FLUSH_COMPLETED of every member of its view but
\* those in gone; Digests are those it holds from the others.
SendViewReady(c, gone) ==
    /\ flushInit[c] = c
    /\ phase[c] = "Completed"
    /\ views[vid[c]] \ gone \subseteq {r[1] : r \in completed[c]}
Digests(c, gone) == {r[2] : r \in {x \in completed[c] : x[1] \notin gone}}

\* p's flush state once it installs a view.
FlushEnded(p) ==
    /\ phase' = [phase EXCEPT ![p] = "Normal"]
    /\ flushOks' = [flushOks EXCEPT ![p] = {}]
    /\ completed' = [completed EXCEPT ![p] = {}]

\* The VIEW from c is next for p: of p's view, or p is a joiner.
ViewArrives(p, c) ==
    /\ HasMsg(p, c)
    /\ In(p, c).type = "VIEW"
    /\ \/ IsMember(p) /\ In(p, c).view = vid[p]
       \/ vid[p] = 0

\* The initiator c decides V2 = M - S - L + J and sends it, with the union of
\* the live members' digests, to M - S and to the joiners; it installs V2
\* itself.
SendView(c) ==
    /\ Alive(c)
    /\ SendViewReady(c, crashed)
    /\ LET v   == vid[c]
           new == (views[v] \ (crashed \cup leaving)) \cup joining
           D   == UNION Digests(c, crashed)
       IN /\ views' = Append(views, new)
          /\ chan' = Multi(chan, c, (views[v] \cup joining) \ crashed, ViewMsg(v, D))
          /\ vid' = [vid EXCEPT ![c] = v + 1]
          /\ delivered' = IF ReconcileDigests
                            THEN [delivered EXCEPT ![c] = @ \cup D]
                            ELSE delivered
    /\ joining' = {}
    /\ FlushEnded(c)
    /\ digest' = [digest EXCEPT ![c] = {}]
    /\ UNCHANGED <<crashed, leaving, sent, blocked, flushInit>>

\* p takes the VIEW from c and installs view v + 1 (with reconciliation,
\* after delivering the messages of the union digest it lacks).  A joiner
\* starts unblocked; a member that stays remains blocked until STOP_FLUSH;
\* a member not in v + 1 has left.
InstallView(p, c) ==
    /\ Alive(p)
    /\ ViewArrives(p, c)
    /\ LET m == In(p, c) IN
         /\ vid' = [vid EXCEPT ![p] = m.view + 1]
         /\ delivered' = IF ReconcileDigests /\ vid[p] # 0
                           THEN [delivered EXCEPT ![p] = @ \cup m.digest]
                           ELSE delivered
    /\ flushInit' = [flushInit EXCEPT ![p] = IF vid[p] = 0 THEN NoInit ELSE c]
    /\ FlushEnded(p)
    /\ digest' = [digest EXCEPT ![p] = {}]
    /\ chan' = Take(p, c)
    /\ UNCHANGED <<views, crashed, joining, leaving, sent, blocked>>

\* The initiator c, having installed the new view, multicasts STOP_FLUSH to
\* the members that were in the flush and stay, and opens its own latch.
StopFlushStep(c) ==
    /\ flushInit[c] = c
    /\ phase[c] = "Normal"
    /\ LET v == vid[c] IN
         chan' = Multi(chan, c, (views[v] \cap views[v - 1]) \ crashed, StopFlushMsg(v))
    /\ blocked' = [blocked EXCEPT ![c] = FALSE]
    /\ flushInit' = [flushInit EXCEPT ![c] = NoInit]

StopFlush(c) ==
    /\ CanReceive(c)
    /\ StopFlushStep(c)
    /\ UNCHANGED <<views, vid, crashed, joining, leaving, sent, delivered,
                   phase, flushOks, digest, completed>>

\* p takes STOP_FLUSH from c: it opens the latch (unblock()).
UnblockStep(p, c) ==
    /\ HasMsg(p, c)
    /\ In(p, c).type = "STOP_FLUSH"
    /\ In(p, c).view = vid[p]
    /\ blocked' = [blocked EXCEPT ![p] = FALSE]
    /\ flushInit' = [flushInit EXCEPT ![p] = NoInit]
    /\ chan' = Take(p, c)

Unblock(p, c) ==
    /\ CanReceive(p) /\ Alive(c)
    /\ UnblockStep(p, c)
    /\ UNCHANGED <<views, vid, crashed, joining, leaving, sent, delivered,
                   phase, flushOks, digest, completed>>

-----------------------------------------------------------------------------
(* Environment *)

\* p may crash: a member, within the crash budget, and not the last member
\* of the latest view that stays.
CanCrash(p) ==
    /\ Alive(p) /\ IsMember(p)
    /\ Cardinality(crashed) < MaxCrashes
    /\ Staying \ {p} # {}

\* The cuts of p's outgoing channels a crash may leave: cut[q] messages to q,
\* at least up to the last VIEW.
Cuts(p) ==
    {cut \in [Members -> 0..MaxOut(p)] :
        \A q \in Members : LastView(chan[<<p, q>>]) <= cut[q] /\ cut[q] <= Len(chan[<<p, q>>])}

\* The channels after p crashes with cut: each channel from p keeps its
\* first cut[q] messages, the channels to p are gone.
CutChan(p, cut) ==
    chan' = [e \in Members \X Members |->
               IF e[2] = p THEN << >>
               ELSE IF e[1] = p THEN SubSeq(chan[e], 1, cut[e[2]])
               ELSE chan[e]]

\* p crashes.  Each channel from p keeps a prefix of its content that holds
\* every VIEW in it (any cut in Cuts(p)).
Crash(p) ==
    /\ CanCrash(p)
    /\ \E cut \in Cuts(p) : CutChan(p, cut)
    /\ crashed' = crashed \cup {p}
    /\ UNCHANGED <<views, vid, joining, leaving, sent, delivered,
                   phase, blocked, flushInit, flushOks, digest, completed>>

\* p, not yet in any view, asks the coordinator to join.
Join(p) ==
    /\ Alive(p)
    /\ p > NInit
    /\ vid[p] = 0
    /\ p \notin views[Latest]
    /\ p \notin joining
    /\ joining' = joining \cup {p}
    /\ UNCHANGED <<views, vid, crashed, leaving, sent, delivered, chan,
                   phase, blocked, flushInit, flushOks, digest, completed>>

\* p, a member of the latest view other than its coordinator, asks to leave.
Leave(p) ==
    /\ CanReceive(p)
    /\ vid[p] = Latest
    /\ p \notin leaving
    /\ ~IsCoord(p)
    /\ Cardinality(leaving) < MaxLeaves
    /\ leaving' = leaving \cup {p}
    /\ UNCHANGED <<views, vid, crashed, joining, sent, delivered, chan,
                   phase, blocked, flushInit, flushOks, digest, completed>>

-----------------------------------------------------------------------------
\* Every receive action on the channel from q to p.
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
    \/ \E p \in Members : Multicast(p)
    \/ \E p, q \in Members : Receive(p, q)
    \/ \E c \in Members : StartFlush(c)
    \/ \E p \in Members : FlushOk(p)
    \/ \E p \in Members : FlushCompleted(p)
    \/ \E c \in Members : SendView(c)
    \/ \E c \in Members : StopFlush(c)
    \/ \E p \in Members : Crash(p)
    \/ \E p \in Members : Join(p)
    \/ \E p \in Members : Leave(p)

Spec == Init /\ [][Next]_vars

\* Fairness of the protocol: channels are drained, block() returns, and
\* the coordinator goes through the phases.  Multicasts, crashes, joins and
\* leaves are choices of the application and the environment.
Fairness ==
    /\ \A p, q \in Members : WF_vars(Receive(p, q))
    /\ \A p \in Members : WF_vars(FlushOk(p)) /\ WF_vars(FlushCompleted(p))
    /\ \A c \in Members : WF_vars(StartFlush(c)) /\ WF_vars(SendView(c)) /\ WF_vars(StopFlush(c))

FairSpec == Spec /\ Fairness

-----------------------------------------------------------------------------
(* Properties *)

\* Members that move together from view v to view v + 1 delivered the same
\* set of the messages of view v.
VirtualSynchrony ==
    \A p, q \in Members : \A v \in 1..(Latest - 1) :
        ( /\ vid[p] > v /\ p \in views[v] \cap views[v + 1]
          /\ vid[q] > v /\ q \in views[v] \cap views[v + 1] )
        => DeliveredIn(p, v) = DeliveredIn(q, v)

\* No multicast is sent while the latch is closed: everything a blocked
\* member multicast in its view is covered by the digest it reported.
NoSendWhileBlocked ==
    \A p \in Members : blocked[p] => SentIn(p, vid[p]) \subseteq digest[p]

\* A view v + 1 exists only once every live member of view v has sent its
\* FLUSH_COMPLETED: a live member still in an older view has completed the
\* flush there, and if it is in the next view it is only one view behind.
ViewAfterAllCompleted ==
    \A p \in Members :
        (Alive(p) /\ IsMember(p) /\ vid[p] < Latest)
            => /\ phase[p] = "Completed"
               /\ p \in views[vid[p] + 1] => vid[p] = Latest - 1

\* Liveness: a flush that reached p ends at p (p is back to Normal with the
\* latch open), unless p crashes or leaves.  Crashes are bounded, so they stop.
InFlush(p)  == phase[p] # "Normal" \/ blocked[p]
FlushEnds ==
    \A p \in Members :
        InFlush(p) ~> (~InFlush(p) \/ p \in crashed \/ Departed(p))
=============================================================================
