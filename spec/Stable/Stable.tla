------------------------------- MODULE Stable -------------------------------
(***************************************************************************)
(* pbcast.STABLE: the members of a group agree on which multicast messages *)
(* every one of them has delivered, so that the reliable-multicast layer   *)
(* below (NAKACK) may discard them, and the same agreement repairs a lost  *)
(* last message.  Source: seed 002, sections "pbcast.STABLE protocol" and  *)
(* "Last Message dropped in NAKACK"; docs/stable.md records every          *)
(* interpretation taken where the seed is silent or ambiguous.             *)
(*                                                                         *)
(* Members are the integers 1..N.  Members 1..NInit form the first view;   *)
(* the others may join later, one view change at a time, through the      *)
(* coordinator (the smallest member), who hands the joiner its own         *)
(* delivered vector as the join digest.  The members in Senders multicast  *)
(* messages numbered 1..MaxSeq; every member delivers each sender's        *)
(* messages in seqno order, as NAKACK does.                               *)
(*                                                                         *)
(* A STABLE round at member p:                                             *)
(*   - digest[p] starts from p's own delivered vector: for each member x   *)
(*     of p's view, low = high = the highest seqno of x p has delivered;   *)
(*   - p multicasts its delivered vector in a STABLE message, periodically;*)
(*   - on a STABLE vector, p lowers each low to the minimum and raises     *)
(*     each high to the maximum, and removes the sender from heardFrom[p], *)
(*     the members p has not heard from yet in this round;                 *)
(*   - once heardFrom[p] is empty, p may multicast digest[p] as the        *)
(*     STABILITY digest (any member may; which one first is left to the    *)
(*     scheduler: that is the staggering);                                 *)
(*   - on a STABILITY digest a member discards (purges) every message at   *)
(*     or below the lows, learns from the highs of any last message it     *)
(*     missed, and starts a new round, which cancels its own STABILITY.    *)
(*                                                                         *)
(* The network loses, delays and reorders the messages between distinct   *)
(* members; a member's messages to itself are never lost and are handled  *)
(* at once (seed, "Local messages").  A link holds at most one STABLE and  *)
(* one STABILITY message of a sender: a newer one replaces the older one   *)
(* still in flight, which is thereby lost (docs/stable.md explains why no  *)
(* behaviour that matters is lost with the reordering this excludes).      *)
(* NAKACK is abstracted as: a data message arriving in order is delivered; *)
(* one arriving above a gap is dropped, but tells the receiver how far the *)
(* sender got; a receiver that knows it misses messages fetches them one   *)
(* by one from the original sender (Retransmit), who can serve them only   *)
(* while it has not purged them.                                           *)
(*                                                                         *)
(* Four choices are constants, so that TLC shows what each one does:       *)
(*   ResetOnDifferentMembers (the seed's fix, taken literally): a member   *)
(*     that receives a STABLE vector whose members differ from its own     *)
(*     digest's resets heardFrom and does not merge it.  Alone it does not *)
(*     cure the seed's own A,B,C example, where the digest that changes    *)
(*     members is the member's own, set at a view change (docs/stable.md). *)
(*   ResetOnViewChange (our strengthening): a member that starts a digest  *)
(*     over new members, on installing a view or, as coordinator, on       *)
(*     admitting a joiner, resets heardFrom too.  Both FALSE is the flawed *)
(*     protocol of the seed's A,B,C example.                               *)
(*   CoordSwitchesAtJoin (our fix of a race TLC found): the coordinator    *)
(*     installs the new view when it admits the joiner, so nothing it      *)
(*     contributes to a round of the old view exceeds the join digest.     *)
(*   GossipMergedDigest (the other reading of the seed): a member gossips  *)
(*     the lows of its merged digest instead of its own delivered vector.  *)
(*     TLC shows that stale lows then circulate between rounds forever.   *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets

CONSTANTS
    N,                        \* members are 1..N
    NInit,                    \* members 1..NInit form the first view
    Senders,                  \* the members whose application multicasts
    MaxSeq,                   \* each sender multicasts at most MaxSeq messages
    ResetOnDifferentMembers,  \* TRUE: the seed's fix, on a received STABLE vector
    ResetOnViewChange,        \* TRUE: our reset when a view change sets the digest
    CoordSwitchesAtJoin,      \* TRUE: our fix of the join race (docs/stable.md)
    GossipMergedDigest        \* TRUE: gossip the merged digest (livelocks)

ASSUME /\ N \in Nat \ {0}
       /\ NInit \in 1..N
       /\ Senders \subseteq 1..N
       /\ MaxSeq \in Nat
       /\ ResetOnDifferentMembers \in BOOLEAN
       /\ ResetOnViewChange \in BOOLEAN
       /\ CoordSwitchesAtJoin \in BOOLEAN
       /\ GossipMergedDigest \in BOOLEAN

Members == 1..N
InitialView == 1..NInit
SeqNo == 0..MaxSeq
Coordinator(V) == CHOOSE c \in V : \A x \in V : c <= x

Min(a, b) == IF a <= b THEN a ELSE b
Max(a, b) == IF a >= b THEN a ELSE b

(* A digest entry for one sender x: low is the least, high the greatest,   *)
(* highest-delivered seqno of x among the vectors merged so far.           *)
Entries == [low : SeqNo, high : SeqNo]
(* Vectors and digests are functions from a set of members (their members) *)
IsVector(v) == DOMAIN v \subseteq Members /\ v \in [DOMAIN v -> SeqNo]
IsDigest(d) == DOMAIN d \subseteq Members /\ d \in [DOMAIN d -> Entries]

DataMsg == [type : {"data"}, from : Members, to : Members, seq : 1..MaxSeq]
IsStableMsg(m) ==
    /\ DOMAIN m = {"type", "from", "to", "vector"}
    /\ m.type = "stable" /\ m.from \in Members /\ m.to \in Members
    /\ IsVector(m.vector)
IsStabilityMsg(m) ==
    /\ DOMAIN m = {"type", "from", "to", "digest"}
    /\ m.type = "stability" /\ m.from \in Members /\ m.to \in Members
    /\ IsDigest(m.digest)

VARIABLES
    group,      \* the membership as the coordinator knows it (the latest view)
    view,       \* view[p]: the view p has installed; {} until p has joined
    sent,       \* sent[p]: seqno of the last message p multicast
    delivered,  \* delivered[p][s]: highest seqno of s that p has delivered
    received,   \* received[p][s]: highest seqno of s that p knows was sent
    purged,     \* purged[p][s]: p has discarded s's messages up to this seqno
    digest,     \* digest[p]: p's STABLE digest of the current round
    heardFrom,  \* heardFrom[p]: members p has not yet heard from this round
    net         \* messages in flight between distinct members

vars == <<group, view, sent, delivered, received, purged, digest, heardFrom, net>>

TypeOK ==
    /\ group \subseteq Members
    /\ view \in [Members -> SUBSET Members]
    /\ sent \in [Members -> SeqNo]
    /\ delivered \in [Members -> [Members -> SeqNo]]
    /\ received \in [Members -> [Members -> SeqNo]]
    /\ purged \in [Members -> [Members -> SeqNo]]
    /\ DOMAIN digest = Members /\ \A p \in Members : IsDigest(digest[p])
    /\ heardFrom \in [Members -> SUBSET Members]
    /\ \A m \in net : m \in DataMsg \/ IsStableMsg(m) \/ IsStabilityMsg(m)

-----------------------------------------------------------------------------
(* Helpers *)

(* The digest a round starts from: a delivered vector v over view V.       *)
Fresh(V, v) == [x \in V |-> [low |-> v[x], high |-> v[x]]]

(* The vector p multicasts in a STABLE message: its delivered vector over  *)
(* its view or, in the other reading of the seed, its digest's lows.       *)
Vector(p) ==
    IF GossipMergedDigest THEN [x \in DOMAIN digest[p] |-> digest[p][x].low]
                          ELSE [x \in view[p] |-> delivered[p][x]]

(* Merge a STABLE vector v into digest d, on the members both have.        *)
Merge(d, v) ==
    [x \in DOMAIN d |->
        IF x \in DOMAIN v
        THEN [low |-> Min(d[x].low, v[x]), high |-> Max(d[x].high, v[x])]
        ELSE d[x]]

(* The network after p multicasts its vector v in a STABLE message, or     *)
(* digest d in a STABILITY message, to the other members of its view: the  *)
(* copies replace any message of that type from p still in flight.         *)
Others(p, type) == {m \in net : m.type # type \/ m.from # p}
PostStable(p, v) ==
    Others(p, "stable")
        \cup {[type |-> "stable", from |-> p, to |-> q, vector |-> v] : q \in view[p] \ {p}}
PostStability(p, d) ==
    Others(p, "stability")
        \cup {[type |-> "stability", from |-> p, to |-> q, digest |-> d] : q \in view[p] \ {p}}

(* Member q applies a STABILITY digest d: it purges up to the lows and     *)
(* learns from the highs how far each sender got.                          *)
PurgeTo(q, d) ==
    [purged EXCEPT ![q] = [s \in Members |->
        IF s \in DOMAIN d THEN Max(purged[q][s], d[s].low) ELSE purged[q][s]]]
LearnFrom(q, d) ==
    [received EXCEPT ![q] = [s \in Members |->
        IF s \in DOMAIN d THEN Max(received[q][s], d[s].high) ELSE received[q][s]]]

(* The messages in flight from p to q of one type.                         *)
InFlight(type, q, p) == {m \in net : m.type = type /\ m.from = p /\ m.to = q}

-----------------------------------------------------------------------------
Init ==
    /\ group = InitialView
    /\ view = [p \in Members |-> IF p \in InitialView THEN InitialView ELSE {}]
    /\ sent = [p \in Members |-> 0]
    /\ delivered = [p \in Members |-> [s \in Members |-> 0]]
    /\ received = [p \in Members |-> [s \in Members |-> 0]]
    /\ purged = [p \in Members |-> [s \in Members |-> 0]]
    /\ digest = [p \in Members |->
                    [x \in (IF p \in InitialView THEN InitialView ELSE {}) |->
                        [low |-> 0, high |-> 0]]]
    /\ heardFrom = [p \in Members |-> IF p \in InitialView THEN InitialView ELSE {}]
    /\ net = {}

-----------------------------------------------------------------------------
(* Sender p multicasts its next message to its view; it delivers its own   *)
(* copy at once (seed: local messages are always received by self).        *)
Multicast(p) ==
    /\ p \in Senders
    /\ view[p] # {}
    /\ sent[p] < MaxSeq
    /\ sent' = [sent EXCEPT ![p] = sent[p] + 1]
    /\ delivered' = [delivered EXCEPT ![p][p] = sent[p] + 1]
    /\ received' = [received EXCEPT ![p][p] = sent[p] + 1]
    /\ net' = net \cup {[type |-> "data", from |-> p, to |-> q, seq |-> sent[p] + 1] :
                          q \in view[p] \ {p}}
    /\ UNCHANGED <<group, view, purged, digest, heardFrom>>

(* A data message of p arrives at q.  In order: delivered.  Above a gap:   *)
(* dropped, but q now knows p got that far, which enables Retransmit.  At  *)
(* or below what q delivered: a duplicate, dropped.                        *)
ReceiveData(q, p) ==
    \E m \in InFlight("data", q, p) :
        /\ delivered' = IF m.seq = delivered[q][p] + 1
                        THEN [delivered EXCEPT ![q][p] = m.seq]
                        ELSE delivered
        /\ received' = [received EXCEPT ![q][p] = Max(@, m.seq)]
        /\ net' = net \ {m}
        /\ UNCHANGED <<group, view, sent, purged, digest, heardFrom>>

(* q knows it misses messages of p (a gap, or a STABILITY digest said so)  *)
(* and gets the next one from p, the original sender, who can serve it     *)
(* only if it has not purged it.  Request and reply are folded into one    *)
(* step: losing either is the same as this step not happening yet, and     *)
(* NAKACK repeats the request until it is answered.                        *)
Retransmit(q, p) ==
    /\ q # p
    /\ delivered[q][p] < received[q][p]
    /\ purged[p][p] < delivered[q][p] + 1
    /\ delivered' = [delivered EXCEPT ![q][p] = @ + 1]
    /\ UNCHANGED <<group, view, sent, received, purged, digest, heardFrom, net>>

(* The network loses a message in flight from p to q, of any type.         *)
LoseMessage(q, p) ==
    \E m \in net :
        /\ m.from = p /\ m.to = q
        /\ net' = net \ {m}
        /\ UNCHANGED <<group, view, sent, delivered, received, purged, digest, heardFrom>>

(* p multicasts its vector (periodically).  Its own copy is handled at     *)
(* once: p merges its own vector and has heard from itself.                *)
SendStable(p) ==
    /\ view[p] # {}
    /\ net' = PostStable(p, Vector(p))
    /\ digest' = [digest EXCEPT ![p] = Merge(digest[p], Vector(p))]
    /\ heardFrom' = [heardFrom EXCEPT ![p] = @ \ {p}]
    /\ UNCHANGED <<group, view, sent, delivered, received, purged>>

(* A STABLE vector of p arrives at q.  With the seed's fix, a vector whose *)
(* members differ from those of q's digest restarts q's count of whom it   *)
(* has heard from, and is not merged.  Otherwise q merges it and has heard *)
(* from p.                                                                 *)
ReceiveStable(q, p) ==
    \E m \in InFlight("stable", q, p) :
        /\ IF ResetOnDifferentMembers /\ DOMAIN m.vector # DOMAIN digest[q]
           THEN /\ heardFrom' = [heardFrom EXCEPT ![q] = view[q]]
                /\ UNCHANGED digest
           ELSE /\ digest' = [digest EXCEPT ![q] = Merge(digest[q], m.vector)]
                /\ heardFrom' = [heardFrom EXCEPT ![q] = @ \ {p}]
        /\ net' = net \ {m}
        /\ UNCHANGED <<group, view, sent, delivered, received, purged>>

(* p has heard from every member it was waiting for and multicasts its     *)
(* digest as the STABILITY digest.  Its own copy is handled at once: it    *)
(* purges, learns, and starts a new round from its own vector.             *)
SendStability(p) ==
    /\ view[p] # {}
    /\ heardFrom[p] = {}
    /\ net' = PostStability(p, digest[p])
    /\ purged' = PurgeTo(p, digest[p])
    /\ received' = LearnFrom(p, digest[p])
    /\ digest' = [digest EXCEPT ![p] = Fresh(view[p], delivered[p])]
    /\ heardFrom' = [heardFrom EXCEPT ![p] = view[p]]
    /\ UNCHANGED <<group, view, sent, delivered>>

(* A STABILITY digest of p arrives at q: q purges, learns of any last      *)
(* message it missed, and starts a new round (cancelling its own pending   *)
(* STABILITY).                                                             *)
ReceiveStability(q, p) ==
    \E m \in InFlight("stability", q, p) :
        /\ purged' = PurgeTo(q, m.digest)
        /\ received' = LearnFrom(q, m.digest)
        /\ digest' = [digest EXCEPT ![q] = Fresh(view[q], delivered[q])]
        /\ heardFrom' = [heardFrom EXCEPT ![q] = view[q]]
        /\ net' = net \ {m}
        /\ UNCHANGED <<group, view, sent, delivered>>

(* Member j asks to join; the coordinator c adds it to the group and hands *)
(* it c's own delivered vector as the join digest.  The joiner installs    *)
(* the new view at once.  The old members install it later (InstallView);  *)
(* with CoordSwitchesAtJoin the coordinator installs it at once, as GMS    *)
(* already updates the coordinator's membership before multicasting the    *)
(* view (seed, "Membership Updating").  One view change at a time.         *)
Join(j) ==
    /\ j \notin group
    /\ \A p \in group : view[p] = group
    /\ LET c == Coordinator(group)
           V == group \cup {j}
           switching == IF CoordSwitchesAtJoin THEN {c} ELSE {}
       IN  /\ group' = V
           /\ view' = [p \in Members |-> IF p \in {j} \cup switching THEN V ELSE view[p]]
           /\ delivered' = [delivered EXCEPT ![j] = delivered[c]]
           /\ received' = [received EXCEPT ![j] = delivered[c]]
           /\ digest' = [p \in Members |->
                            IF p \in {j} \cup switching THEN Fresh(V, delivered[c])
                                                        ELSE digest[p]]
           /\ heardFrom' = [p \in Members |->
                            CASE p = j -> V
                              [] p \in switching ->
                                    IF ResetOnViewChange THEN V ELSE heardFrom[p]
                              [] OTHER -> heardFrom[p]]
    /\ UNCHANGED <<sent, purged, net>>

(* Old member p installs the new view and restarts its digest from its own *)
(* vector over the new members.  With ResetOnViewChange it also resets     *)
(* heardFrom; without, it keeps whom it had already heard from: the seed's *)
(* fix speaks only of received digests, and this digest is p's own.        *)
InstallView(p) ==
    /\ view[p] # {}
    /\ p \in group
    /\ view[p] # group
    /\ view' = [view EXCEPT ![p] = group]
    /\ digest' = [digest EXCEPT ![p] = Fresh(group, delivered[p])]
    /\ heardFrom' = [heardFrom EXCEPT ![p] = IF ResetOnViewChange THEN group ELSE @]
    /\ UNCHANGED <<group, sent, delivered, received, purged, net>>

-----------------------------------------------------------------------------
Next ==
    \/ \E p \in Members : Multicast(p)
    \/ \E q, p \in Members : ReceiveData(q, p)
    \/ \E q, p \in Members : Retransmit(q, p)
    \/ \E q, p \in Members : LoseMessage(q, p)
    \/ \E p \in Members : SendStable(p)
    \/ \E q, p \in Members : ReceiveStable(q, p)
    \/ \E p \in Members : SendStability(p)
    \/ \E q, p \in Members : ReceiveStability(q, p)
    \/ \E j \in Members : Join(j)
    \/ \E p \in Members : InstallView(p)

Spec == Init /\ [][Next]_vars

(* Explicit fairness.  Timers fire (SendStable, SendStability), views get  *)
(* installed, retransmission requests are repeated until answered, and a   *)
(* link with messages of a type in flight eventually hands one over.       *)
(* Sending application messages and joining are the environment's choice  *)
(* and get no fairness; losing a message gets none either (see             *)
(* LossEventuallyStops below).                                             *)
Links == {l \in Members \X Members : l[1] # l[2]}

Fairness ==
    /\ \A p \in Members : WF_vars(SendStable(p))
    /\ \A p \in Members : WF_vars(SendStability(p))
    /\ \A p \in Members : WF_vars(InstallView(p))
    /\ \A l \in Links : WF_vars(Retransmit(l[1], l[2]))
    /\ \A l \in Links : WF_vars(ReceiveData(l[1], l[2]))
    /\ \A l \in Links : WF_vars(ReceiveStable(l[1], l[2]))
    /\ \A l \in Links : WF_vars(ReceiveStability(l[1], l[2]))

FairSpec == Spec /\ Fairness

-----------------------------------------------------------------------------
(* Safety *)

(* No member discards a message that some member of its view has not       *)
(* delivered: that member could not get it retransmitted any more.         *)
SafeGC ==
    \A p \in Members : \A q \in view[p] : \A s \in Members :
        purged[p][s] <= delivered[q][s]

(* A STABILITY digest in flight never exceeds the delivered seqnos of any  *)
(* of the members it speaks for.                                           *)
StabilityBound ==
    \A m \in net : m.type = "stability" =>
        \A q, s \in DOMAIN m.digest : m.digest[s].low <= delivered[q][s]

-----------------------------------------------------------------------------
(* Liveness, under FairSpec, for the behaviours in which the network       *)
(* eventually stops losing messages.  A network that loses every message   *)
(* forever defeats any protocol; before losses stop they are unrestricted, *)
(* and the last message of a sender may be among them.                     *)
LossEventuallyStops == <>[][\A l \in Links : ~LoseMessage(l[1], l[2])]_vars

(* A message every member of the group has delivered is eventually         *)
(* discarded by every member of the group.                                 *)
EventuallyCollected ==
    LossEventuallyStops =>
        \A s \in Members, k \in 1..MaxSeq :
            (\A q \in group : delivered[q][s] >= k) ~> (\A p \in group : purged[p][s] >= k)

(* Every message sent, in particular a sender's last one (which no later   *)
(* message reveals as missing), is eventually delivered by every member of *)
(* the group: a STABILITY digest tells the others how far the sender got.  *)
LastMessageDelivered ==
    LossEventuallyStops =>
        \A s \in Members, k \in 1..MaxSeq :
            (sent[s] >= k) ~> (\A q \in group : delivered[q][s] >= k)

=============================================================================
