------------------------------ MODULE Sequencer ------------------------------
(***************************************************************************)
(* SEQUENCER: total order through a sequencer, after the JGroups design    *)
(* note of Dec 2005 (seeds/000) with the TOTAL background of seeds/001.     *)
(*                                                                         *)
(* A member that multicasts adds a FORWARD header <<sender, seqno>>; a     *)
(* non-coordinator keeps the message in its forward-table and unicasts it  *)
(* to the coordinator, the coordinator multicasts it as DATA.  A receiver  *)
(* delivers a DATA message unless its seqno is <= the received-table entry *)
(* for the original sender; a sender removes its own message from the      *)
(* forward-table when the DATA comes back.  When a view change replaces    *)
(* the coordinator, every member re-sends its forward-table, in seqno      *)
(* order, to the new coordinator.                                          *)
(*                                                                         *)
(* Environment: reliable FIFO channels (NAKACK for the coordinator's       *)
(* multicasts, UNICAST for FORWARDs), crash-stop members, views decided by *)
(* a perfect failure detector and installed by each member on its own      *)
(* schedule.  A crash may lose, per receiver, everything the crashed       *)
(* member had sent that was not yet received: so a crashing coordinator's  *)
(* last multicast can reach only some members.                             *)
(*                                                                         *)
(* Without a flush, TotalOrder does not survive a coordinator crash:       *)
(* MCSequencer_CoordCrash.cfg is expected to violate it (docs/sequencer.md)*)
(* Nor does delivery: with one coordinator crash a live member's message   *)
(* can be lost for good in three ways (docs/sequencer.md, "Losses after a  *)
(* coordinator crash"), shown by EventualDelivery, GapFreeFIFO and         *)
(* NothingMissing (the Live, Gap and Missing models).  Each loss has a fix,*)
(* a constant that is FALSE in the seed's (faithful) models:               *)
(*  KeepForward  a member that is not (yet) coordinator keeps a FORWARD    *)
(*               until it is, instead of dropping it;                      *)
(*  ResendFirst  a member that becomes coordinator sequences its re-sent   *)
(*               forward-table when it installs the view, before any new   *)
(*               message of its own;                                       *)
(*  RetainForward a sender keeps its messages in the forward-table after   *)
(*               its own DATA came back (until they are stable: STABLE,    *)
(*               seeds/002; in the bounded model, for the whole run), so   *)
(*               a re-send covers what only some members received.         *)
(* Three more constants, FALSE in the seed's models, are JGroups 2.12.2's   *)
(* deviations from the seed (docs/jgroups.md), so that its traces can be   *)
(* judged against this spec:                                               *)
(*  SuspectResend on the failure detector's suspicion of a crashed member, *)
(*               before any view, a member takes the first other member of *)
(*               its view as coordinator and re-sends its forward-table to *)
(*               it (SEQUENCER.handleSuspect); from then on the new        *)
(*               coordinator multicasts its own messages at once;          *)
(*  FillGaps     the received-table (SeqnoTable) discards a DATA only if   *)
(*               every seqno of its sender up to it was received: one      *)
(*               below the highest that fills a gap is still delivered;    *)
(*  SeparateChannels FORWARDs (UNICAST) and DATA (NAKACK) from one member  *)
(*               to another are two FIFO channels, not ordered with each   *)
(*               other: a receive takes the first message of its type.     *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC

CONSTANTS
    N,          \* number of members; members are 1..N, the first view is <<1, ..., N>>
    MaxSeq,     \* multicasts the application of each member sends
    MaxCrashes, \* crashes the environment may inject
    KeepForward,   \* TRUE: fix 1, a FORWARD at a non-coordinator waits until it is coordinator
    ResendFirst,   \* TRUE: fix 2, a new coordinator sequences its own forward-table at once
    RetainForward, \* TRUE: fix 3, a sender's own DATA does not remove it from its forward-table
    SuspectResend, \* TRUE: JGroups's handleSuspect, a suspicion moves coord and re-sends at once
    FillGaps,      \* TRUE: JGroups's SeqnoTable, a DATA below the highest that fills a gap is delivered
    SeparateChannels \* TRUE: JGroups's UNICAST and NAKACK, FORWARD and DATA in two FIFO channels per pair

Members == 1..N

VARIABLES
    views,      \* views[i]: the i-th view decided by the membership oracle (a sequence of members)
    vid,        \* vid[m]: index in views of the view installed at m
    crashed,    \* set of crashed members (crash-stop)
    sent,       \* sent[m]: seqno of m's last application multicast (its local seqno counter)
    fwd,        \* fwd[m]: forward-table: seqnos m forwarded and has not yet received as DATA
    recv,       \* recv[m]: received-table: original sender -> highest seqno delivered at m
    delivered,  \* delivered[m]: the messages m delivered, in order, as <<sender, seqno>>
    chan,       \* chan[<<p, q>>]: reliable FIFO channel from p to q
    coord,      \* coord[m]: the member m takes for coordinator (its view's first, or as a suspicion moved it)
    holes       \* holes[m]: the <<sender, seqno>> below recv[m][sender] m has not received (FillGaps)

vars == <<views, vid, crashed, sent, fwd, recv, delivered, chan, coord, holes>>

-----------------------------------------------------------------------------
(* Messages and helpers *)

Forward(s, q) == [type |-> "FORWARD", sender |-> s, seqno |-> q]
Data(s, q)    == [type |-> "DATA", sender |-> s, seqno |-> q]
Msgs == {Forward(s, q) : s \in Members, q \in 1..MaxSeq} \cup {Data(s, q) : s \in Members, q \in 1..MaxSeq}

Range(f) == {f[i] : i \in DOMAIN f}

\* The index in channel ch of the message of type t a receive takes (0:
\* none): its head, or with SeparateChannels the first of that type (the
\* FORWARDs and the DATA of one pair kept in one sequence: the order within
\* each type is its channel's).
Taking(ch, t) ==
    IF ~SeparateChannels
      THEN IF ch # <<>> /\ Head(ch).type = t THEN 1 ELSE 0
      ELSE LET I == {i \in DOMAIN ch : ch[i].type = t}
           IN IF I = {} THEN 0 ELSE CHOOSE i \in I : \A j \in I : i <= j
\* ch without its i-th message.
Without(ch, i) == SubSeq(ch, 1, i - 1) \o SubSeq(ch, i + 1, Len(ch))

View(m) == views[vid[m]]
Coord(v) == v[1]                           \* the coordinator is the first member of a view
\* m is coordinator as it believes: coord[m] is Coord(View(m)) unless a
\* suspicion moved it (SuspectResend), as JGroups's is_coord.
IsCoord(m) == coord[m] = m
Alive(x) == x \notin crashed

\* The sequence of a finite set of naturals in increasing order (built one
\* least element at a time: a CHOOSE over [1..n -> S] enumerates n^n
\* functions, past TLC's set-size bound at n = 8, which a long trace's
\* forward table reaches).
RECURSIVE Ascending(_)
Ascending(S) == IF S = {} THEN <<>>
                ELSE LET m == CHOOSE x \in S : \A y \in S : x <= y IN <<m>> \o Ascending(S \ {m})

\* Channels after p sends msg to q; the network drops what is sent to a crashed member.
SendTo(ch, p, q, msg) == IF q \in crashed THEN ch ELSE [ch EXCEPT ![<<p, q>>] = Append(@, msg)]

\* Channels after coordinator c multicasts DATA <<s, q>> to the live members of its view.
McastData(ch, c, s, q) ==
    [e \in Members \X Members |->
        IF e[1] = c /\ e[2] \in Range(View(c)) /\ Alive(e[2])
            THEN Append(ch[e], Data(s, q)) ELSE ch[e]]

\* Channels after c multicasts DATA <<s, qs[1]>>, <<s, qs[2]>>, ... in that
\* order to the live members of view v (ResendFirst: a new coordinator's own
\* forward-table, sequenced as it installs v).
McastSeq(ch, c, v, s, qs) ==
    [e \in Members \X Members |->
        IF e[1] = c /\ e[2] \in Range(v) /\ Alive(e[2])
            THEN ch[e] \o [i \in 1..Len(qs) |-> Data(s, qs[i])] ELSE ch[e]]

-----------------------------------------------------------------------------
TypeOK ==
    /\ \A i \in DOMAIN views : Range(views[i]) \subseteq Members
    /\ vid \in [Members -> 1..Len(views)]
    /\ crashed \subseteq Members
    /\ sent \in [Members -> 0..MaxSeq]
    /\ fwd \in [Members -> SUBSET (1..MaxSeq)]
    /\ \A m \in Members : DOMAIN recv[m] \subseteq Members /\ \A s \in DOMAIN recv[m] : recv[m][s] \in 0..MaxSeq
    /\ \A m \in Members : Range(delivered[m]) \subseteq Members \X (1..MaxSeq)
    /\ \A e \in Members \X Members : Range(chan[e]) \subseteq Msgs
    /\ coord \in [Members -> Members]
    /\ holes \in [Members -> SUBSET (Members \X (1..MaxSeq))]

Init ==
    /\ views = << [i \in 1..N |-> i] >>
    /\ vid = [m \in Members |-> 1]
    /\ crashed = {}
    /\ sent = [m \in Members |-> 0]
    /\ fwd = [m \in Members |-> {}]
    /\ recv = [m \in Members |-> [s \in Members |-> 0]]
    /\ delivered = [m \in Members |-> <<>>]
    /\ chan = [e \in Members \X Members |-> <<>>]
    /\ coord = [m \in Members |-> 1]
    /\ holes = [m \in Members |-> {}]

-----------------------------------------------------------------------------
(* Member actions *)

\* The member steps are written once here and used as they are by the
\* compositions (SequencerFlush, RaincoreSequencerFlush): each adds its own
\* guards and variables around them, and passes its own multicast as Mcast
\* (its DATA carries a view).

\* m sends its next message q: as coordinator it multicasts q as DATA
\* (Mcast), otherwise it keeps q in its forward-table and forwards it.
SendStep(m, Mcast(_, _, _, _)) ==
    LET q == sent[m] + 1 IN
    /\ sent' = [sent EXCEPT ![m] = q]
    /\ IF IsCoord(m)
         THEN /\ chan' = Mcast(chan, m, m, q)
              /\ UNCHANGED fwd
         ELSE /\ fwd' = [fwd EXCEPT ![m] = @ \cup {q}]
              /\ chan' = SendTo(chan, m, coord[m], Forward(m, q))

\* c takes the next FORWARD of its channel from p (Taking): as coordinator
\* it multicasts it as DATA (Mcast), otherwise it drops it.
ForwardStep(c, p, Mcast(_, _, _, _)) ==
    LET i == Taking(chan[<<p, c>>], "FORWARD") IN
    /\ i # 0
    /\ LET msg  == chan[<<p, c>>][i]
           rest == [chan EXCEPT ![<<p, c>>] = Without(@, i)]
       IN chan' = IF IsCoord(c) THEN Mcast(rest, c, msg.sender, msg.seqno) ELSE rest

\* m's received-table, deliveries and forward-table, as a record st, after
\* it takes DATA <<s, q>>: its own message leaves the forward-table, and the
\* message is delivered unless the received-table says it was already.
\* The seed's table holds the highest seqno per sender: q at or below it is
\* a duplicate.  With FillGaps (JGroups's SeqnoTable) q is a duplicate only
\* if no seqno of s up to q is missing (st.holes: those skipped below the
\* highest); q above the highest leaves a hole for each seqno skipped.
Took(m, st, s, q) ==
    LET known == s \in DOMAIN st.recv
        top   == IF known THEN st.recv[s] ELSE 0
        dup   == known /\ q <= top /\ (FillGaps => \A h \in st.holes : h[1] = s => q < h[2])
    IN
    [recv      |-> IF dup \/ q < top THEN st.recv ELSE (s :> q) @@ st.recv,
     delivered |-> IF dup THEN st.delivered ELSE Append(st.delivered, <<s, q>>),
     fwd       |-> IF s = m /\ ~RetainForward THEN st.fwd \ {q} ELSE st.fwd,
     holes     |-> IF FillGaps /\ ~dup
                     THEN (st.holes \ {<<s, q>>}) \cup {<<s, i>> : i \in top + 1..q - 1}
                     ELSE st.holes]
Tables(m) == [recv |-> recv[m], delivered |-> delivered[m], fwd |-> fwd[m], holes |-> holes[m]]

\* The same as m's step.
TakeData(m, s, q) ==
    LET st == Took(m, Tables(m), s, q) IN
    /\ recv' = [recv EXCEPT ![m] = st.recv]
    /\ delivered' = [delivered EXCEPT ![m] = st.delivered]
    /\ fwd' = [fwd EXCEPT ![m] = st.fwd]
    /\ holes' = [holes EXCEPT ![m] = st.holes]

\* m's received-table r without the members that are not in view new.
Pruned(r, new) == [s \in DOMAIN r \cap Range(new) |-> r[s]]

\* Channels after m re-sends the seqnos of F, in increasing order, to nc.
Resend(ch, m, nc, F) ==
    LET resend == Ascending(F) IN
    [ch EXCEPT ![<<m, nc>>] = @ \o [i \in 1..Len(resend) |-> Forward(m, resend[i])]]

\* Channels after m, whose coordinator moved to nc, hands nc its
\* forward-table: re-sent as FORWARDs (to itself, through its loopback
\* channel, when nc = m) or, with ResendFirst and nc = m, multicast as DATA
\* at once to the live members of view v.
Handover(ch, m, nc, v) ==
    IF ResendFirst /\ nc = m
      THEN McastSeq(ch, m, v, m, Ascending(fwd[m]))
      ELSE Resend(ch, m, nc, fwd[m])

\* m's application multicasts its next message (seed: "On send(M)").
Send(m) ==
    /\ Alive(m)
    /\ sent[m] < MaxSeq
    /\ SendStep(m, McastData)
    /\ UNCHANGED <<views, vid, crashed, recv, delivered, coord, holes>>

\* c takes a FORWARD from p; as coordinator of its view it multicasts it as DATA,
\* otherwise it drops it (the seed's "if not coord: error and return").  With
\* KeepForward a non-coordinator leaves it in the channel: p sent it to c
\* because c is coordinator of p's view, so c is coordinator once it has
\* installed that view (coordinators change only by crashing), and nothing
\* but FORWARDs travels from p to c while p is not coordinator.
RecvForward(c, p) ==
    /\ Alive(c)
    /\ KeepForward => IsCoord(c)
    /\ ForwardStep(c, p, McastData)
    /\ UNCHANGED <<views, vid, crashed, sent, fwd, recv, delivered, coord, holes>>

\* m takes a DATA from p: removes its own message from the forward-table, and
\* delivers it unless the received-table says it was delivered already.
RecvData(m, p) ==
    LET i == Taking(chan[<<p, m>>], "DATA") IN
    /\ Alive(m)
    /\ i # 0
    /\ chan' = [chan EXCEPT ![<<p, m>>] = Without(@, i)]
    /\ TakeData(m, chan[<<p, m>>][i].sender, chan[<<p, m>>][i].seqno)
    /\ UNCHANGED <<views, vid, crashed, sent, coord>>

\* m installs the next view.  If the coordinator changed, m re-sends its
\* forward-table in seqno order to the new one; entries of members that left
\* are removed from its received-table.  A new coordinator re-sends to
\* itself, through its loopback channel; with ResendFirst it multicasts its
\* forward-table as DATA at once instead.  "Changed" is against coord[m],
\* as JGroups's handleViewChange compares: after a suspicion moved it to the
\* new view's first member, the view re-sends nothing.
InstallView(m) ==
    /\ Alive(m)
    /\ vid[m] < Len(views)
    /\ LET new == views[vid[m] + 1]
           nc  == Coord(new)
       IN /\ vid' = [vid EXCEPT ![m] = @ + 1]
          /\ recv' = [recv EXCEPT ![m] = Pruned(recv[m], new)]
          /\ holes' = [holes EXCEPT ![m] = {h \in @ : h[1] \in Range(new)}]
          /\ coord' = [coord EXCEPT ![m] = nc]
          /\ chan' = IF coord[m] # nc /\ Alive(nc) THEN Handover(chan, m, nc, new) ELSE chan
    /\ UNCHANGED <<views, crashed, sent, fwd, delivered>>

\* SuspectResend: JGroups 2.12.2's SEQUENCER.handleSuspect.  The failure
\* detector tells m that c is suspected, before any view without c; m takes
\* the first member of its view other than c as coordinator (its view's
\* members, not the ones suspected before: JGroups keeps no list of them)
\* and, if that moved its coordinator, re-sends its forward-table to the new
\* one at once.  The failure detector is perfect here, as the oracle's:
\* only a crashed member is suspected.  A suspicion that moves nothing is
\* no step.
Suspect(m, c) ==
    /\ SuspectResend
    /\ Alive(m)
    /\ c \in crashed
    /\ LET rest == SelectSeq(View(m), LAMBDA x : x # c)
       IN /\ rest # <<>>
          /\ coord[m] # rest[1]
          /\ coord' = [coord EXCEPT ![m] = rest[1]]
          /\ chan' = IF Alive(rest[1]) THEN Handover(chan, m, rest[1], View(m)) ELSE chan
    /\ UNCHANGED <<views, vid, crashed, sent, fwd, recv, delivered, holes>>

-----------------------------------------------------------------------------
(* Environment actions *)

\* m crashes.  For each receiver r in lost, whatever m had sent to r and r had
\* not yet received is lost; what was sent to m is gone with it.
Crash(m, lost) ==
    /\ Alive(m)
    /\ Cardinality(crashed) < MaxCrashes
    /\ crashed' = crashed \cup {m}
    /\ chan' = [e \in Members \X Members |->
                  IF e[2] = m \/ (e[1] = m /\ e[2] \in lost) THEN <<>> ELSE chan[e]]
    /\ UNCHANGED <<views, vid, sent, fwd, recv, delivered, coord, holes>>

\* The membership oracle (a perfect failure detector) decides the next view:
\* the last view without its crashed members.
NewView ==
    /\ \E x \in Range(views[Len(views)]) : x \in crashed
    /\ views' = Append(views, SelectSeq(views[Len(views)], Alive))
    /\ UNCHANGED <<vid, crashed, sent, fwd, recv, delivered, chan, coord, holes>>

Next ==
    \/ \E m \in Members : Send(m)
    \/ \E c, p \in Members : RecvForward(c, p)
    \/ \E m, p \in Members : RecvData(m, p)
    \/ \E m \in Members : InstallView(m)
    \/ \E m, c \in Members : Suspect(m, c)
    \/ NewView
    \/ \E m \in Members : \E lost \in SUBSET (Members \ {m}) : Crash(m, lost)

Spec == Init /\ [][Next]_vars

\* Fairness: channels are eventually drained and views eventually installed.
\* Sends and crashes are choices of the application and the environment.
FairSpec ==
    /\ Spec
    /\ \A c, p \in Members : WF_vars(RecvForward(c, p))
    /\ \A m, p \in Members : WF_vars(RecvData(m, p))
    /\ \A m \in Members : WF_vars(InstallView(m))
    /\ WF_vars(NewView)

-----------------------------------------------------------------------------
(* Properties *)

Delivers(m, x) == \E i \in DOMAIN delivered[m] : delivered[m][i] = x

\* No member delivers a message twice.
NoDuplicates ==
    \A m \in Members : \A i, j \in DOMAIN delivered[m] : i # j => delivered[m][i] # delivered[m][j]

\* Only messages that were sent are delivered.
Integrity ==
    \A m \in Members : \A i \in DOMAIN delivered[m] :
        delivered[m][i][2] \in 1..sent[delivered[m][i][1]]

\* Per sender, a member delivers messages in the order they were sent.
SenderFIFO ==
    \A m \in Members : \A i, j \in DOMAIN delivered[m] :
        (i < j /\ delivered[m][i][1] = delivered[m][j][1]) => delivered[m][i][2] < delivered[m][j][2]

\* Any two members of M deliver the messages they both deliver in the same
\* order: the common messages form the same subsequence of both orders.
OrderAgrees(M) ==
    \A m1, m2 \in M :
        LET InM1(x) == Delivers(m1, x)
            InM2(x) == Delivers(m2, x)
        IN SelectSeq(delivered[m1], InM2) = SelectSeq(delivered[m2], InM1)

\* Any two members deliver the messages they both deliver in the same order.
TotalOrder == OrderAgrees(Members)

\* A message sent by a member that never crashes is eventually delivered by
\* every member that never crashes.  Sends are bounded (MaxSeq) and deliveries
\* and crashes are stable, so "infinitely often, every message sent so far
\* is delivered at every live member unless its sender crashed" says exactly
\* that, and TLC checks it as one tableau instead of one per message.
Settled ==
    \A s, r \in Members : \A q \in 1..sent[s] :
        Delivers(r, <<s, q>>) \/ s \in crashed \/ r \in crashed

EventualDelivery == []<>Settled

\* Gap-free per-sender FIFO for members that have not crashed: what a member
\* delivered of live sender s is s's first messages, in order, with no gap.
\* A crash is the environment's choice, so a state where s is alive extends
\* to a behaviour where s never crashes: as an invariant this says "for
\* senders that never crash".  (A crashed coordinator's own multicasts may
\* legitimately leave a gap: SenderFIFO, which allows it, stays as it was.)
GapFreeFIFO ==
    \A m \in Members : \A s \in Members \ crashed :
        LET From(x) == x[1] = s
            d == SelectSeq(delivered[m], From)
        IN \A i \in DOMAIN d : d[i][2] = i

\* Nothing is left to do but new sends and crashes: every channel is empty,
\* every live member has installed the last view, and no view change is
\* pending.  (No protocol action is enabled.)
Quiescent ==
    /\ \A e \in Members \X Members : chan[e] = <<>>
    /\ \A m \in Members \ crashed : vid[m] = Len(views)
    /\ \A x \in Range(views[Len(views)]) : x \notin crashed

\* Once everything has settled, nothing is missing: every message of a live
\* sender has been delivered by every live member.
NothingMissing == Quiescent => Settled
=============================================================================
