--------------------------- MODULE SequencerFlush ---------------------------
(***************************************************************************)
(* SEQUENCER over FLUSH: the total-order protocol of seeds/000 whose view  *)
(* changes go through the four-phase flush of seeds/003 (the fixed form    *)
(* of spec/Flush, with digest reconciliation).  Names are those of         *)
(* Sequencer.tla (views, vid, crashed, sent, fwd, recv, delivered, chan;   *)
(* Send, RecvForward, RecvData, InstallView, Crash) and of Flush.tla       *)
(* (phase, blocked, flushInit, flushOks, completed; StartFlush, Block,     *)
(* RestartFlush, FlushOk, ReceiveFlushOk, FlushCompleted,                  *)
(* ReceiveFlushCompleted, SendView, StopFlush, Unblock, Discard).          *)
(*                                                                         *)
(* Both parts are instantiated (S: Sequencer.tla, F: Flush.tla) and their  *)
(* steps used as they are.  SEQUENCER (S!SendStep, S!ForwardStep,          *)
(* S!Took): a non-coordinator forwards, the coordinator (first member of   *)
(* its installed view) multicasts DATA, receivers drop what their          *)
(* received-table says they delivered, and a member re-sends its           *)
(* forward-table, in seqno order (S!Resend), to a new coordinator when it  *)
(* installs a view whose coordinator changed.  FLUSH: every F!<Action>Step *)
(* with `crashed` as the failure detector and the log as the digest.       *)
(* What the composition adds:                                              *)
(*  * views are no longer decided by an oracle: after a crash, the first   *)
(*    live member of the latest view runs a flush and then sends the new   *)
(*    view (SendView), which the others install (InstallView);             *)
(*  * DATA carries the view it was multicast in (NAKACK's per-view         *)
(*    window); DATA of an older view is discarded;                         *)
(*  * log[m] is that window: the DATA of its view m multicast (as          *)
(*    coordinator) or took from the coordinator.  It is m's digest in      *)
(*    FLUSH_COMPLETED; the initiator puts the longest live digest in the   *)
(*    VIEW, and every member takes the DATA of it through RecvData's       *)
(*    duplicate check before installing the view (reconciliation); after  *)
(*    its FLUSH_COMPLETED a member takes DATA of its view only that way;   *)
(*  * the application's Send waits while the latch is closed.  The         *)
(*    coordinator's re-multicast of FORWARDs does not (FLUSH sits above    *)
(*    SEQUENCER, just below the channel: seeds/003).                       *)
(* closed[m] records, per view m left, how many messages m had delivered:  *)
(* it only serves VirtualSynchrony.                                        *)
(*                                                                         *)
(* Environment as in Sequencer.tla (reliable FIFO channels, crash-stop,    *)
(* Crash(m, lost) loses what m sent to the members in lost), except that   *)
(* a VIEW message is never lost (installing views is GMS's job: Flush.tla, *)
(* docs/flush.md I9).  docs/flush.md, "SEQUENCER over FLUSH", records the  *)
(* interpretations and what TLC finds: total order among the survivors,    *)
(* virtual synchrony and no duplicates hold; the uniform TotalOrder breaks *)
(* when the crashed coordinator delivered what no survivor received (fix:  *)
(* UniformDelivery, deliver only stable DATA); EventualDelivery breaks     *)
(* when a FORWARD is sequenced after every FLUSH_COMPLETED and the         *)
(* coordinator does not change (fix: ResendAlways).  A flush does not stop *)
(* Sequencer.tla's loss 2 (docs/sequencer.md): a new coordinator's own new *)
(* multicast overtakes the forward-table it re-sent to itself, and the     *)
(* re-sent message is discarded as a duplicate everywhere (GapFreeFIFO,    *)
(* EventualDelivery; fix: ResentFirst, the implementation's resent_first). *)
(* Losses 1 and 3 cannot happen here: the new coordinator is the flush     *)
(* initiator and installs the view first, and the VIEW's digest gives      *)
(* every survivor what the crashed coordinator delivered to any of them.   *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC

CONSTANTS
    N,          \* number of members; members are 1..N, the first view is <<1, ..., N>>
    MaxSeq,     \* multicasts the application of each sender sends
    MaxCrashes, \* crashes the environment may inject
    Senders,    \* members whose application multicasts (1..N but in targeted models)
    UniformDelivery, \* TRUE: the fix for uniform total order (deliver stable DATA only)
    ResendAlways,    \* TRUE: the fix for EventualDelivery (re-send the forward-table at every view)
    ResentFirst      \* TRUE: the fix for loss 2 (hold the application's sends while a re-sent FORWARD waits in the loopback channel)

Members == 1..N

VARIABLES
    views,      \* views[i]: the i-th view (a sequence of members), decided by the flush initiators
    vid,        \* vid[m]: index in views of the view installed at m
    crashed,    \* set of crashed members (crash-stop)
    sent,       \* sent[m]: seqno of m's last application multicast
    fwd,        \* fwd[m]: forward-table: seqnos m forwarded and has not yet received as DATA
    recv,       \* recv[m]: received-table: original sender -> highest seqno delivered at m
    delivered,  \* delivered[m]: the messages m delivered, in order, as <<sender, seqno>>
    chan,       \* chan[<<p, q>>]: reliable FIFO channel from p to q
    log,        \* log[m]: the DATA <<sender, seqno>> of m's view m multicast or took (its digest)
    closed,     \* closed[m][v]: Len(delivered[m]) when m installed view v + 1
    phase,      \* phase[m]: "Normal", "InBlock" (in block()), "OkSent", "Completed"
    blocked,    \* blocked[m]: the latch in FLUSH.down() is closed: m's application may not send
    flushInit,  \* flushInit[m]: initiator of the flush m is in, or whose STOP_FLUSH m awaits
    flushOks,   \* flushOks[m]: members whose FLUSH_OK m has received in its view
    completed,  \* completed[c]: <<q, digest>> for each FLUSH_COMPLETED initiator c recorded
    ndel        \* ndel[m]: entries of log[m] m has taken through the duplicate check (UniformDelivery)

vars == <<views, vid, crashed, sent, fwd, recv, delivered, chan, log, closed,
          phase, blocked, flushInit, flushOks, completed, ndel>>

-----------------------------------------------------------------------------
(* The parts *)

\* SEQUENCER as in the seed (none of Sequencer.tla's fixes: the flush
\* makes KeepForward and RetainForward moot; ResentFirst is this spec's;
\* nor JGroups's deviations): its coordinator is always its view's first
\* member, and its received-table has no holes.
S == INSTANCE Sequencer WITH KeepForward <- FALSE, ResendFirst <- FALSE, RetainForward <- FALSE,
        SuspectResend <- FALSE, FillGaps <- FALSE, SeparateChannels <- FALSE,
        coord <- [m \in Members |-> views[vid[m]][1]], holes <- [m \in Members |-> {}]

\* FLUSH with digest reconciliation, its views the sets of members of ours,
\* no joins or leaves, and as digest of a member that has sent
\* FLUSH_COMPLETED its log.  Its sent and delivered are SEQUENCER's here:
\* no operator used below reads them.
F == INSTANCE Flush WITH
        NInit <- N, MaxMsgs <- N * MaxSeq, MaxLeaves <- 0, ReconcileDigests <- TRUE, FlushOkRound <- TRUE,
        views <- [i \in DOMAIN views |-> S!Range(views[i])],
        joining <- {}, leaving <- {},
        digest <- [m \in Members |-> IF phase[m] = "Completed" THEN S!Range(log[m]) ELSE {}]

-----------------------------------------------------------------------------
(* Messages and helpers *)

Data(s, q, v)           == [type |-> "DATA", sender |-> s, seqno |-> q, view |-> v]
ViewMsg(v, d)           == F!ViewMsg(v, d)

NoInit     == F!NoInit
Phases     == F!Phases
FlushTypes == F!FlushTypes
MsgTypes   == {"FORWARD", "DATA", "VIEW"} \cup FlushTypes

Range(f)    == S!Range(f)
Latest      == Len(views)
View(m)     == S!View(m)
Coord(v)    == S!Coord(v)
IsCoord(m)  == S!IsCoord(m)
Alive(x)    == S!Alive(x)

\* The flush initiator: the first live member of the latest view.
Staying        == Range(views[Latest]) \ crashed
IsInitiator(c) == c \in Staying /\ \A q \in Staying : c <= q
ViewChangePending == Range(views[Latest]) \cap crashed # {}

\* The longest of a set of digests (they are prefixes of one another: LogsAgree).
Longest(Ds) == CHOOSE d \in Ds : \A e \in Ds : Len(e) <= Len(d)

\* Coordinator c multicasts DATA <<s, q>> of its view to the live members
\* of its view, itself included.
McastData(ch, c, s, q) ==
    [e \in Members \X Members |->
        IF e[1] = c /\ e[2] \in Range(View(c)) /\ Alive(e[2])
            THEN Append(ch[e], Data(s, q, vid[c])) ELSE ch[e]]

Multi(ch, p, R, msg) == F!Multi(ch, p, R, msg)
HasMsg(p, q) == F!HasMsg(p, q)
In(p, q)     == F!In(p, q)
Take(p, q)   == F!Take(p, q)
LastView(s)  == F!LastView(s)

\* Eager discarding.  A flush message from a crashed member and, once p has
\* installed view v + 1, every message of view v or older in a channel to p
\* would be dropped unread (Discard); dropping them at the crash or at the
\* install instead removes only interleavings of steps that change nothing
\* else (the SEQUENCER-over-FLUSH graph of CoordCrash shrinks by half).
NotFlushMsg(x) == x.type \notin FlushTypes
Purged(ch, p, v) ==
    [e \in Members \X Members |->
        IF e[2] = p THEN SelectSeq(ch[e], LAMBDA x : x.type = "FORWARD" \/ x.view > v) ELSE ch[e]]

\* Reconciliation: m's received-table, deliveries and forward-table after it
\* takes the DATA <<sender, seqno>> of ds, in order, as RecvData would
\* (those it took already are duplicates by then).
RECURSIVE Absorb(_, _, _)
Absorb(m, st, ds) ==
    IF ds = <<>> THEN st ELSE Absorb(m, S!Took(m, st, Head(ds)[1], Head(ds)[2]), Tail(ds))

\* m leaves its view for view new, taking the digest D first; ch is the
\* channel state of the step.  SEQUENCER's part of the view change: entries
\* of members not in new leave the received-table, and if the coordinator
\* changed m re-sends its forward-table to the new one in seqno order (with
\* ResendAlways: at every view change, to the coordinator of the new view).
Moved(m, new, D, ch) ==
    LET st == Absorb(m, S!Tables(m), D)
        nc == Coord(new)
    IN /\ recv' = [recv EXCEPT ![m] = S!Pruned(st.recv, new)]
       /\ delivered' = [delivered EXCEPT ![m] = st.delivered]
       /\ fwd' = [fwd EXCEPT ![m] = st.fwd]
       /\ closed' = [closed EXCEPT ![m] = Append(@, Len(st.delivered))]
       /\ log' = [log EXCEPT ![m] = <<>>]
       /\ ndel' = [ndel EXCEPT ![m] = 0]
       /\ chan' = LET pch == Purged(ch, m, vid[m]) IN
                    IF (Coord(View(m)) # nc \/ ResendAlways) /\ Alive(nc)
                      THEN S!Resend(pch, m, nc, st.fwd)
                      ELSE pch

-----------------------------------------------------------------------------
TypeOK ==
    /\ \A i \in DOMAIN views : Range(views[i]) \subseteq Members
    /\ vid \in [Members -> 1..Latest]
    /\ crashed \subseteq Members
    /\ sent \in [Members -> 0..MaxSeq]
    /\ fwd \in [Members -> SUBSET (1..MaxSeq)]
    /\ \A m \in Members : DOMAIN recv[m] \subseteq Members /\ \A s \in DOMAIN recv[m] : recv[m][s] \in 0..MaxSeq
    /\ \A m \in Members : Range(delivered[m]) \subseteq Members \X (1..MaxSeq)
    /\ \A m \in Members : Range(log[m]) \subseteq Members \X (1..MaxSeq)
    /\ \A m \in Members : Len(closed[m]) = vid[m] - 1
    /\ \A e \in Members \X Members : \A i \in DOMAIN chan[e] : chan[e][i].type \in MsgTypes
    /\ phase \in [Members -> Phases]
    /\ blocked \in [Members -> BOOLEAN]
    /\ flushInit \in [Members -> Members \cup {NoInit}]
    /\ flushOks \in [Members -> SUBSET Members]
    /\ \A c \in Members : \A r \in completed[c] : r[1] \in Members
    /\ ndel \in [Members -> Nat]

Init ==
    /\ views = << [i \in 1..N |-> i] >>
    /\ vid = [m \in Members |-> 1]
    /\ crashed = {}
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
    /\ ndel = [m \in Members |-> 0]

-----------------------------------------------------------------------------
(* SEQUENCER *)

\* m's application multicasts its next message, unless the latch is closed.
\* With ResentFirst (impl/sequencer.py resent_first) the send also waits
\* while a FORWARD m re-sent to itself as new coordinator is in its loopback
\* channel: m's own new DATA would overtake it, and the re-sent message,
\* sequenced after a higher seqno of the same sender, would be discarded
\* as a duplicate by every member (Sequencer.tla's loss 2).
ResentPending(m) == \E i \in DOMAIN chan[<<m, m>>] : chan[<<m, m>>][i].type = "FORWARD"

Send(m) ==
    /\ m \in Senders
    /\ Alive(m)
    /\ ~blocked[m]
    /\ ResentFirst => ~ResentPending(m)
    /\ sent[m] < MaxSeq
    /\ S!SendStep(m, McastData)
    /\ log' = IF IsCoord(m) THEN [log EXCEPT ![m] = Append(@, <<m, sent[m] + 1>>)] ELSE log
    /\ UNCHANGED <<views, vid, crashed, recv, delivered, closed,
                   phase, blocked, flushInit, flushOks, completed, ndel>>

\* c takes a FORWARD from p; as coordinator of its view it multicasts it as
\* DATA, and logs it, otherwise it drops it.
RecvForward(c, p) ==
    /\ Alive(c)
    /\ S!ForwardStep(c, p, McastData)
    /\ log' = IF IsCoord(c) THEN [log EXCEPT ![c] = Append(@, <<In(c, p).sender, In(c, p).seqno>>)]
                            ELSE log
    /\ UNCHANGED <<views, vid, crashed, sent, fwd, recv, delivered, closed,
                   phase, blocked, flushInit, flushOks, completed, ndel>>

\* m takes a DATA of its view from p (before its FLUSH_COMPLETED) and adds
\* it to its log (the coordinator logged its own multicasts when it sent
\* them).  As in Sequencer.tla, it removes its own message from the
\* forward-table and delivers it unless the received-table says it was
\* delivered already; with UniformDelivery that is left to DeliverStable.
RecvData(m, p) ==
    /\ Alive(m)
    /\ HasMsg(m, p)
    /\ In(m, p).type = "DATA"
    /\ In(m, p).view = vid[m]
    /\ phase[m] # "Completed"
    /\ LET s == In(m, p).sender
           q == In(m, p).seqno
       IN /\ chan' = Take(m, p)
          /\ log' = IF p = m THEN log ELSE [log EXCEPT ![m] = Append(@, <<s, q>>)]
          /\ IF UniformDelivery
               THEN UNCHANGED <<fwd, recv, delivered>>
               ELSE S!TakeData(m, s, q)
    /\ UNCHANGED <<views, vid, crashed, sent, closed,
                   phase, blocked, flushInit, flushOks, completed, ndel>>

\* The fix for uniform total order (UniformDelivery): m takes the next entry
\* of its log through RecvData's duplicate check only once it is stable,
\* i.e. every live member of m's view has logged it.  Stability stands for
\* an acknowledgement round (such as pbcast.STABLE's, seed 002) that the
\* seeds of SEQUENCER do not have; a crash can then no longer take away a
\* message some member delivered from every survivor.
Stable(m, i) == \A r \in Range(View(m)) \ crashed : vid[r] = vid[m] /\ Len(log[r]) >= i
DeliverStable(m) ==
    /\ UniformDelivery
    /\ Alive(m)
    /\ phase[m] # "Completed"
    /\ ndel[m] < Len(log[m])
    /\ Stable(m, ndel[m] + 1)
    /\ S!TakeData(m, log[m][ndel[m] + 1][1], log[m][ndel[m] + 1][2])
    /\ ndel' = [ndel EXCEPT ![m] = @ + 1]
    /\ UNCHANGED <<views, vid, crashed, sent, chan, log, closed,
                   phase, blocked, flushInit, flushOks, completed>>

\* p drops the next message from q: one of an earlier view; a flush message
\* from a crashed member; a DATA of its view after its FLUSH_COMPLETED.
Discard(p, q) ==
    /\ Alive(p)
    /\ HasMsg(p, q)
    /\ In(p, q).type # "FORWARD"
    /\ F!Stale(p, q, crashed)
    /\ chan' = Take(p, q)
    /\ UNCHANGED <<views, vid, crashed, sent, fwd, recv, delivered, log, closed,
                   phase, blocked, flushInit, flushOks, completed, ndel>>

-----------------------------------------------------------------------------
(* FLUSH: Flush.tla's steps, the digest of a member its log *)

\* The initiator c starts a flush for a crash in the latest view, or
\* restarts from scratch the flush of a crashed initiator.
StartFlush(c) ==
    /\ Alive(c) /\ vid[c] = Latest /\ IsInitiator(c)
    /\ ViewChangePending
    /\ F!StartFlushStep(c, log[c])
    /\ UNCHANGED <<views, vid, crashed, sent, fwd, recv, delivered, log, closed,
                   blocked, flushOks, ndel>>

\* p takes START_FLUSH from c and invokes block().
Block(p, c) ==
    /\ Alive(p) /\ Alive(c)
    /\ F!BlockStep(p, c)
    /\ UNCHANGED <<views, vid, crashed, sent, fwd, recv, delivered, log, closed,
                   blocked, flushOks, completed, ndel>>

\* p, already in a flush whose initiator crashed, follows the new initiator
\* c; if it had sent FLUSH_COMPLETED it sends it again, to c.
RestartFlush(p, c) ==
    /\ Alive(p) /\ Alive(c)
    /\ F!RestartFlushStep(p, c, log[p])
    /\ UNCHANGED <<views, vid, crashed, sent, fwd, recv, delivered, log, closed,
                   phase, blocked, flushOks, completed, ndel>>

\* block() returns at p: p multicasts FLUSH_OK (and counts its own).
FlushOk(p) ==
    /\ Alive(p)
    /\ F!FlushOkStep(p)
    /\ UNCHANGED <<views, vid, crashed, sent, fwd, recv, delivered, log, closed,
                   blocked, flushInit, completed, ndel>>

\* p takes FLUSH_OK from q.
ReceiveFlushOk(p, q) ==
    /\ Alive(p) /\ Alive(q)
    /\ F!ReceiveFlushOkStep(p, q)
    /\ UNCHANGED <<views, vid, crashed, sent, fwd, recv, delivered, log, closed,
                   phase, blocked, flushInit, completed, ndel>>

\* p has the FLUSH_OK of every live member of its view: it closes the latch
\* and sends FLUSH_COMPLETED with its digest (its log) to the initiator.
FlushCompleted(p) ==
    /\ Alive(p)
    /\ F!FlushCompletedStep(p, crashed, log[p])
    /\ UNCHANGED <<views, vid, crashed, sent, fwd, recv, delivered, log, closed,
                   flushInit, flushOks, ndel>>

\* The initiator c records q's FLUSH_COMPLETED.
ReceiveFlushCompleted(c, q) ==
    /\ Alive(c) /\ Alive(q)
    /\ F!ReceiveFlushCompletedStep(c, q)
    /\ UNCHANGED <<views, vid, crashed, sent, fwd, recv, delivered, log, closed,
                   phase, blocked, flushInit, flushOks, ndel>>

\* The initiator c has the FLUSH_COMPLETED of every live member of its view:
\* the new view is its view without the crashed members; c sends it with the
\* longest live digest and installs it itself.
SendView(c) ==
    /\ Alive(c)
    /\ F!SendViewReady(c, crashed)
    /\ LET v   == vid[c]
           new == SelectSeq(views[v], Alive)
           D   == Longest(F!Digests(c, crashed))
       IN /\ views' = Append(views, new)
          /\ vid' = [vid EXCEPT ![c] = v + 1]
          /\ Moved(c, new, D, Multi(chan, c, Range(views[v]) \ crashed, ViewMsg(v, D)))
    /\ F!FlushEnded(c)
    /\ UNCHANGED <<crashed, sent, blocked, flushInit>>

\* p takes the VIEW from c: it takes the digest's DATA, then installs the
\* view (SEQUENCER's view change); it stays blocked until STOP_FLUSH.
InstallView(p, c) ==
    /\ Alive(p)
    /\ F!ViewArrives(p, c)
    /\ LET m == In(p, c) IN
         /\ vid' = [vid EXCEPT ![p] = m.view + 1]
         /\ Moved(p, views[m.view + 1], m.digest, Take(p, c))
    /\ flushInit' = [flushInit EXCEPT ![p] = c]
    /\ F!FlushEnded(p)
    /\ UNCHANGED <<views, crashed, sent, blocked>>

\* The initiator c, having installed the new view, multicasts STOP_FLUSH to
\* the members that were in the flush and stay, and opens its own latch.
StopFlush(c) ==
    /\ Alive(c)
    /\ F!StopFlushStep(c)
    /\ UNCHANGED <<views, vid, crashed, sent, fwd, recv, delivered, log, closed,
                   phase, flushOks, completed, ndel>>

\* p takes STOP_FLUSH from c: it opens the latch (unblock()).
Unblock(p, c) ==
    /\ Alive(p) /\ Alive(c)
    /\ F!UnblockStep(p, c)
    /\ UNCHANGED <<views, vid, crashed, sent, fwd, recv, delivered, log, closed,
                   phase, flushOks, completed, ndel>>

-----------------------------------------------------------------------------
(* Environment *)

\* m crashes.  For each receiver r in lost, what m had sent to r and r had
\* not yet received is lost, up to the last VIEW in the channel; what was
\* sent to m is gone with it; m's flush messages are dropped (eagerly).
Crash(m, lost) ==
    /\ Alive(m)
    /\ Cardinality(crashed) < MaxCrashes
    /\ crashed' = crashed \cup {m}
    /\ chan' = [e \in Members \X Members |->
                  IF e[2] = m THEN <<>>
                  ELSE IF e[1] = m /\ e[2] \in lost THEN SelectSeq(SubSeq(chan[e], 1, LastView(chan[e])), NotFlushMsg)
                  ELSE IF e[1] = m THEN SelectSeq(chan[e], NotFlushMsg)
                  ELSE chan[e]]
    /\ UNCHANGED <<views, vid, sent, fwd, recv, delivered, log, closed,
                   phase, blocked, flushInit, flushOks, completed, ndel>>

Next ==
    \/ \E m \in Members : Send(m)
    \/ \E c, p \in Members : RecvForward(c, p)
    \/ \E m, p \in Members : RecvData(m, p)
    \/ \E m \in Members : DeliverStable(m)
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

Spec == Init /\ [][Next]_vars

\* Fairness of the protocol: channels are drained, block() returns, stable
\* DATA is delivered and the initiator goes through the phases.  Sends and
\* crashes are choices of the application and the environment.
Fairness ==
    /\ \A c, p \in Members : WF_vars(RecvForward(c, p))
    /\ \A m, p \in Members : WF_vars(RecvData(m, p)) /\ WF_vars(Discard(m, p))
    /\ \A p, c \in Members : /\ WF_vars(Block(p, c)) /\ WF_vars(RestartFlush(p, c))
                             /\ WF_vars(ReceiveFlushOk(p, c)) /\ WF_vars(ReceiveFlushCompleted(p, c))
                             /\ WF_vars(InstallView(p, c)) /\ WF_vars(Unblock(p, c))
    /\ \A m \in Members : /\ WF_vars(DeliverStable(m)) /\ WF_vars(StartFlush(m)) /\ WF_vars(FlushOk(m))
                        /\ WF_vars(FlushCompleted(m)) /\ WF_vars(SendView(m)) /\ WF_vars(StopFlush(m))

FairSpec == Spec /\ Fairness

-----------------------------------------------------------------------------
(* Properties: Sequencer.tla's and Flush.tla's *)

NoDuplicates     == S!NoDuplicates
Integrity        == S!Integrity
SenderFIFO       == S!SenderFIFO
\* Uniform, as in Sequencer.tla: crashed members' deliveries count too.
TotalOrder       == S!TotalOrder
\* The same among the members that have not crashed (seeds/003: virtual
\* synchrony is promised "in all non-faulty members").
SurvivorTotalOrder == S!OrderAgrees(Members \ crashed)
Settled          == S!Settled
EventualDelivery == S!EventualDelivery
GapFreeFIFO      == S!GapFreeFIFO

\* No protocol action is enabled: every channel empty, every live member in
\* the latest view with no flush under way and its latch open, no view
\* change pending, and (UniformDelivery) every logged DATA taken.
Quiescent ==
    /\ \A e \in Members \X Members : chan[e] = <<>>
    /\ \A m \in Members \ crashed :
          /\ vid[m] = Latest /\ phase[m] = "Normal" /\ ~blocked[m] /\ flushInit[m] = NoInit
          /\ UniformDelivery => ndel[m] = Len(log[m])
    /\ ~ViewChangePending

\* Sequencer.tla's NothingMissing: once everything has settled, every message
\* of a live sender has been delivered by every live member.
NothingMissing == Quiescent => Settled

\* The messages m delivered while in view v (v < vid[m]).
DeliveredIn(m, v) ==
    {delivered[m][i] : i \in (IF v = 1 THEN 0 ELSE closed[m][v - 1]) + 1 .. closed[m][v]}

\* Members that move together from view v to view v + 1 delivered the same
\* set of messages in view v.
VirtualSynchrony ==
    \A p, q \in Members : \A v \in 1..(Latest - 1) :
        ( /\ vid[p] > v /\ p \in Range(views[v]) \cap Range(views[v + 1])
          /\ vid[q] > v /\ q \in Range(views[v]) \cap Range(views[v + 1]) )
        => DeliveredIn(p, v) = DeliveredIn(q, v)

\* The logs of two members in the same view are prefixes of one another
\* (of the coordinator's sequence): the digest in a VIEW is well defined.
IsPrefix(a, b) == Len(a) <= Len(b) /\ SubSeq(b, 1, Len(a)) = a
LogsAgree ==
    \A p, q \in Members : vid[p] = vid[q] => IsPrefix(log[p], log[q]) \/ IsPrefix(log[q], log[p])
=============================================================================
