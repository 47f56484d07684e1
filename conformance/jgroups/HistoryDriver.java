// groupcheck's JGroups adapter (docs/jgroups.md): a protocol placed at the top
// of a JGroups 2.12 stack that writes the groupcheck-history/1 format
// (docs/history-format.md), and a driver that runs one member.
//
//   java -cp jgroups.jar:. HistoryDriver <member> <out.ndjson> <marker> <run_id> <config.xml>
//        <members> <messages> <interval_ms> <settle_ms> <protocol> <bound_s> <steps|-> <promises> <flush|->
//
// The member joins (then creates <marker>.joined), waits for a view of
// <members> (then <marker>.ready), multicasts <messages> payloads
// "gc:<member>:<seq>" every <interval_ms>, waits until it has delivered
// nothing for <settle_ms>, writes the end record and exits.  A watchdog halts
// the JVM after <bound_s> seconds whatever it is doing, so no member outlives
// a harness that died without killing it.
// Messages are identified by their payload, members by the id in their address.
// With a <steps> path, the white-box protocols of the stack log its steps there
// as well: StepsAbove and StepsBelow around SEQUENCER (<protocol> sequencer or
// sequencerflush),
// NakSteps below NAKACK and StableSteps below STABLE (<protocol> stable),
// FlushBelow, GmsBelow, NakAbove and NakBelow (<protocol> flush).
// With <flush> "run" or "open", the member starts a flush of its own when the
// harness creates <marker>.flush (startFlush).
import java.io.*;
import java.util.*;
import org.jgroups.*;
import org.jgroups.stack.*;
import org.jgroups.protocols.SEQUENCER;
import org.jgroups.protocols.pbcast.NAKACK;
import org.jgroups.protocols.pbcast.NakAckHeader;
import org.jgroups.protocols.pbcast.STABLE;
import org.jgroups.stack.NakReceiverWindow;
import org.jgroups.util.Digest;

public class HistoryDriver {
    static PrintWriter out;
    static int me;
    static boolean closed = false;
    static volatile long lastDelivery = 0;   // when the member last delivered an application message
    static volatile boolean appBlocked = false;   // FLUSH's BLOCK came up and its UNBLOCK not yet
    static final long t0 = System.currentTimeMillis();

    static synchronized void record(String json) {
        if (closed) return;
        out.println(json);
        out.flush();
    }

    static void event(String name, String params) {
        double clock = (System.currentTimeMillis() - t0) / 1000.0;
        record("{\"kind\":\"event\",\"name\":\"" + name + "\",\"nid\":" + me + ",\"params\":" + params
               + ",\"clock\":" + clock + "}");
    }

    static String idOf(Message m) {
        byte[] b = m.getBuffer();
        if (b == null) return null;
        String s = new String(b);
        if (!s.startsWith("gc:")) return null;
        String[] p = s.split(":");
        return "[" + Integer.parseInt(p[1]) + "," + Integer.parseInt(p[2]) + "]";
    }

    // A member's address carries its id (the UUID's low bits, set by the
    // address generator below): a member's logical name reaches the others
    // after its address may already be in a view, so a name is not enough.
    static int memberOf(Address a) {
        if (a instanceof org.jgroups.util.UUID) return (int) ((org.jgroups.util.UUID) a).getLeastSignificantBits();
        String s = String.valueOf(a);
        return s.startsWith("m") ? Integer.parseInt(s.substring(1)) : -1;
    }

    /** Logs what the application observes: deliveries, views, block/unblock (up), sends (down). */
    public static class HistoryLogger extends Protocol {
        public String getName() { return "HistoryLogger"; }

        public Object up(Event evt) {
            switch (evt.getType()) {
                case Event.MSG: {
                    String id = idOf((Message) evt.getArg());
                    if (id != null) {
                        event("deliver", "{\"id\":" + id + "}");
                        lastDelivery = System.currentTimeMillis();
                    }
                    break;
                }
                case Event.VIEW_CHANGE: {
                    View v = (View) evt.getArg();
                    StringBuilder ms = new StringBuilder();
                    for (Address a : v.getMembers()) ms.append(ms.length() == 0 ? "" : ",").append(memberOf(a));
                    event("view", "{\"view\":" + v.getVid().getId() + ",\"members\":[" + ms + "]}");
                    break;
                }
                case Event.BLOCK: event("block", "{}"); appBlocked = true; break;
                case Event.UNBLOCK:
                    event("unblock", "{}");
                    lastDelivery = System.currentTimeMillis();      // the settle counts from the unblock
                    appBlocked = false;
                    break;
                default: break;
            }
            return up_prot.up(evt);
        }

        public Object down(Event evt) {
            if (evt.getType() == Event.MSG) {
                Message m = (Message) evt.getArg();
                String id = idOf(m);
                if (id != null && m.getDest() == null) event("send", "{\"id\":" + id + "}");
            }
            return down_prot.down(evt);
        }
    }


    /**
     * White-box steps of SEQUENCER (docs/jgroups.md, "White-box traces"): two
     * protocols around JGroups's SEQUENCER that write one JSON line per spec
     * action of spec/Sequencer/Sequencer.tla.  Each step is taken under one
     * node-wide lock and stamped, at its start, with the wall clock in
     * microseconds (strictly increasing per member): a send's stamp precedes
     * the transmission, a receive's follows the arrival, so on one host the
     * stamps order every member's steps consistently with happens-before and
     * the harness merges the files by stamp.  A step with effects outside the
     * member (Send, RecvForward, InstallView, Suspect) is written before
     * SEQUENCER takes it, so a SIGKILL never leaves an effect without its step.
     */
    static final Object STEP = new Object();
    static PrintWriter steps;
    static long lastStamp = 0;
    static boolean tracing = false;      // from the first view with every member, or the first
    static boolean fullView = false;     // application message through SEQUENCER (its sender had that view)
    static int vid = 0;
    static Protocol sequencer;
    static java.lang.reflect.Field isCoord, forwardTable, hdrType, coordField, receivedTable, seqnoMap;
    static java.lang.reflect.Field entryNext, entrySeqnos;   // SeqnoTable.Entry's next_to_receive, seqnos
    static View view;                    // the view SEQUENCER has (the spec's view of the member)
    static final ThreadLocal<Boolean> delivered = new ThreadLocal<>();

    static long stamp() {
        java.time.Instant now = java.time.Instant.now();
        long us = now.getEpochSecond() * 1000000L + now.getNano() / 1000;
        lastStamp = Math.max(us, lastStamp + 1);
        return lastStamp;
    }

    static void step(long ts, String name, String params, String msg, String state, String extra) {
        steps.println("{\"ts\":" + ts + ",\"name\":\"" + name + "\",\"nid\":" + me
                      + (params == null ? "" : ",\"params\":" + params) + (msg == null ? "" : ",\"msg\":" + msg)
                      + ",\"state\":" + state + (extra == null ? "" : "," + extra) + "}");
        steps.flush();
    }

    static String msgJson(String type, int sender, long seqno) {
        return "{\"type\":\"" + type + "\",\"sender\":" + sender + ",\"seqno\":" + seqno + "}";
    }

    /*
     * The spec's seqno of a message is its payload's ("gc:<sender>:<seq>"), not
     * JGroups's seqno + 1: SEQUENCER also numbers the multicasts of the protocols
     * above it (pbcast.FLUSH's START_FLUSH and STOP_FLUSH, which are not
     * NO_TOTAL_ORDER), and those are no messages of the spec.  Without FLUSH the
     * two numberings coincide.  A FORWARD, WRAPPED_BCAST or forward-table entry
     * carries the original message serialized (Util.objectToByteBuffer).
     */
    static final Map<Integer, TreeMap<Long, Long>> specSeq = new HashMap<>();   // sender -> JGroups seqno -> spec's

    /** The payload's seq of an application message, or -1 (another protocol's multicast). */
    static long payloadSeq(byte[] b) {
        if (b == null) return -1;
        String s = new String(b);
        return s.startsWith("gc:") ? Long.parseLong(s.split(":")[2]) : -1;
    }

    /** The spec's seqno of a message SEQUENCER handles (header type 2 BCAST: the raw
     *  payload; 1 FORWARD and 3 WRAPPED_BCAST: the serialized original), remembered
     *  per sender against JGroups's seqno, for recv and fwd. */
    static long specSeqOf(Message m, int sender, long jgSeqno, byte type) throws Exception {
        long q = payloadSeq(type == 2 ? m.getBuffer() : inner(m.getBuffer()));
        if (q > 0) specSeq.computeIfAbsent(sender, k -> new TreeMap<>()).put(jgSeqno, q);
        return q;
    }

    static byte[] inner(byte[] serialized) throws Exception {
        return serialized == null ? null : ((Message) org.jgroups.util.Util.objectFromByteBuffer(serialized)).getBuffer();
    }

    /** SEQUENCER's received table over the view's members, as the spec's recv: the
     *  spec's seqno of the highest application message the table has received per
     *  original sender, 0 for none.  A SeqnoTable entry has received the seqnos below
     *  its next_to_receive and those in its seqnos set (received above a gap); its
     *  highest_received may be a message of FLUSH (no message of the spec), above
     *  application messages not yet received: a new coordinator sequences its
     *  START_FLUSH at once, and its loopback copy can overtake the forward table
     *  re-sent to itself (SeparateChannels).  So the translation takes the highest
     *  seqno the entry has received that carried a payload, not the payload at or
     *  below highest_received (which can be one of its own still in forward_table). */
    @SuppressWarnings("unchecked")
    static String recv(View v) throws Exception {
        Object table = receivedTable.get(sequencer);
        Map<?, ?> entries = (Map<?, ?>) seqnoMap.get(table);
        StringBuilder b = new StringBuilder("{");
        for (Address a : v.getMembers()) {
            int s = memberOf(a);
            Object entry = entries.get(a);
            long q = 0;
            if (entry != null && specSeq.containsKey(s)) {
                // read under the entry's lock (SeqnoTable.Entry.add's), not copied: a member
                // that joined late keeps every seqno of an earlier member in seqnos
                synchronized (entry) {
                    long next = entryNext.getLong(entry);
                    Set<Long> above = (Set<Long>) entrySeqnos.get(entry);
                    for (Map.Entry<Long, Long> e : specSeq.get(s).descendingMap().entrySet())
                        if (e.getKey() < next || above.contains(e.getKey())) { q = e.getValue(); break; }
                }
            }
            b.append(b.length() > 1 ? "," : "").append("\"").append(s).append("\":").append(q);
        }
        return b.append("}").toString();
    }

    /*
     * A record's state is a delta (docs/trace-format.md): fwd is logged only when
     * the step changed it.  It is the forward table whole, so logging it on every
     * step made each record as long as the messages in flight, and a run without
     * pauses (thousands in flight) wrote hundreds of megabytes per 10^4 messages.
     */
    static String lastFwd = null;

    static String fwdIfChanged(String now) {
        if (now.equals(lastFwd)) return "";
        lastFwd = now;
        return ",\"fwd\":" + now;
    }

    /** SEQUENCER's forward table, as the spec's fwd: the application's messages in it, by the spec's seqno. */
    @SuppressWarnings("unchecked")
    static String fwd(Long plus) throws Exception {
        TreeMap<Long, Long> mine = specSeq.computeIfAbsent(me, k -> new TreeMap<>());
        TreeSet<Long> qs = new TreeSet<>();
        for (Map.Entry<Long, byte[]> e : ((Map<Long, byte[]>) forwardTable.get(sequencer)).entrySet()) {
            if (!mine.containsKey(e.getKey())) mine.put(e.getKey(), payloadSeq(inner(e.getValue())));
            if (mine.get(e.getKey()) > 0) qs.add(mine.get(e.getKey()));
        }
        if (plus != null) qs.add(plus);
        StringBuilder b = new StringBuilder("[");
        for (Long q : qs) b.append(b.length() > 1 ? "," : "").append(q);
        return b.append("]").toString();
    }

    /** Above SEQUENCER: the application's multicasts (Send) and SEQUENCER's deliveries. */
    public static class StepsAbove extends Protocol {
        public String getName() { return "StepsAbove"; }

        public Object up(Event evt) {
            if (evt.getType() == Event.MSG && idOf((Message) evt.getArg()) != null) delivered.set(Boolean.TRUE);
            return up_prot.up(evt);
        }

        public Object down(Event evt) {
            if (evt.getType() != Event.MSG) return down_prot.down(evt);
            Message m = (Message) evt.getArg();
            String id = idOf(m);
            if (id == null || m.getDest() != null) return down_prot.down(evt);
            synchronized (STEP) {
                if (tracing) {
                    try {
                        long q = Long.parseLong(new String(m.getBuffer()).split(":")[2]);
                        boolean coord = isCoord.getBoolean(sequencer);
                        step(stamp(), "Send", null, msgJson(coord ? "DATA" : "FORWARD", me, q),
                             "{\"sent\":" + q + fwdIfChanged(fwd(coord ? null : q)) + "}", null);
                    } catch (Exception e) { throw new RuntimeException(e); }
                }
                return down_prot.down(evt);
            }
        }
    }

    /** Below SEQUENCER: FORWARD and DATA arriving (RecvForward, RecvData), views (InstallView) and suspicions (Suspect). */
    public static class StepsBelow extends Protocol {
        public String getName() { return "StepsBelow"; }

        public Object up(Event evt) {
            int t = evt.getType();
            Header h = t == Event.MSG ? ((Message) evt.getArg()).getHeader(sequencer.getId()) : null;
            // only SEQUENCER's steps take the lock: GMS sends FLUSH's SUSPEND up through
            // here and waits in FLUSH for the flush, whose messages come up through here too
            if (t != Event.VIEW_CHANGE && t != Event.SUSPECT && h == null) return up_prot.up(evt);
            synchronized (STEP) {
                try {
                    if (t == Event.VIEW_CHANGE) return view((View) evt.getArg(), evt);
                    if (t == Event.SUSPECT) return tracing ? suspect((Address) evt.getArg(), evt) : up_prot.up(evt);
                    Message m = (Message) evt.getArg();
                    long ts = stamp();
                    byte type = hdrType.getByte(h);
                    int sender = memberOf(((SEQUENCER.SequencerHeader) h).getOriginalSender());
                    long q = specSeqOf(m, sender, ((SEQUENCER.SequencerHeader) h).getSeqno(), type);
                    if (q < 0) return up_prot.up(evt);                 // FLUSH's multicast: no message of the spec
                    if (!tracing) { tracing = true; vid = 1; }
                    String p = "{\"p\":" + memberOf(m.getSrc()) + "}";
                    if (type == 1) {                                    // FORWARD
                        step(ts, "RecvForward", p, msgJson("FORWARD", sender, q), "{}", null);
                        return up_prot.up(evt);
                    }
                    delivered.set(Boolean.FALSE);                       // BCAST or WRAPPED_BCAST: DATA
                    Object r = up_prot.up(evt);
                    boolean d = delivered.get() == Boolean.TRUE;
                    step(ts, "RecvData", p, msgJson("DATA", sender, q),
                         "{\"delivered\":" + (d ? "[[" + sender + "," + q + "]]" : "[]") + fwdIfChanged(fwd(null))
                         + (fullView ? ",\"recv\":" + recv(view) : "") + "}",
                         null);
                    return r;
                } catch (RuntimeException e) {
                    throw e;
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }
        }

        /** Suspect(m, c): SEQUENCER.handleSuspect takes the first member of its view
         *  other than the suspected one for coordinator and, when that moves coord,
         *  re-sends the forward table to it at once, before any view.  Predicted as
         *  handleSuspect computes it, so that the step is written before SEQUENCER
         *  re-sends; a suspicion that moves nothing is no step. */
        Object suspect(Address who, Event evt) throws Exception {
            int c = memberOf(who);
            Address next = null;
            if (view != null)
                for (Address a : view.getMembers()) if (!a.equals(who)) { next = a; break; }
            if (c > 0 && next != null && !next.equals(coordField.get(sequencer)))
                step(stamp(), "Suspect", "{\"c\":" + c + "}", null, "{}", null);
            return up_prot.up(evt);
        }

        Object view(View v, Event evt) throws Exception {
            view = v;
            if (!fullView && v.size() >= totalMembers) {    // the spec's first view: every member
                fullView = tracing = true;
                vid = 1;
                return up_prot.up(evt);
            }
            if (fullView) {
                StringBuilder ms = new StringBuilder();
                for (Address a : v.getMembers()) ms.append(ms.length() == 0 ? "" : ",").append(memberOf(a));
                vid++;
                step(stamp(), "InstallView", null, null, "{\"vid\":" + vid + ",\"recv\":" + recv(v) + "}",
                     "\"view\":[" + ms + "]");
            }
            return up_prot.up(evt);
        }
    }

    /**
     * White-box steps of pbcast.STABLE (docs/jgroups.md, "White-box traces of
     * JGroups's STABLE"): NakSteps below NAKACK logs the multicasts under
     * spec/Stable/Stable.tla's data actions (Multicast, ReceiveData and, for a
     * message NAKACK delivers from its window, Retransmit); StableSteps below
     * STABLE logs its gossip (SendStable, ReceiveStable, SendStability,
     * ReceiveStability) with purged, each sender's window low (NAKACK's purge
     * point).  Seqnos are NAKACK's less the sender's base, its seqno when every
     * member took its base (startStable), so that the spec's Init, where nothing
     * was sent, is the state at the base.  Same lock and stamps as SEQUENCER's
     * steps; a step with effects outside the member is written before JGroups
     * takes it, except SendStability's purge: JGroups purges when the own copy
     * of its STABILITY comes up, so the step keeps the stamp of the send and is
     * written with the state after the own copy was handled.
     */
    static NAKACK nakack;
    static Protocol stable;
    static java.lang.reflect.Field suspended, windowLow, stableType, stableDigest;
    static java.util.concurrent.locks.ReentrantLock stableLock;   // STABLE's lock over its digest and votes
    static Map<Integer, Long> base;                      // null until startStable
    static final Map<Integer, Long> known = new HashMap<>();   // delivered, as the steps logged so far tell
    static final Map<Integer, TreeSet<Long>> arrived = new HashMap<>();   // arrived, not yet delivered
    static final Map<Digest, Long> digestTaken = new IdentityHashMap<>();   // a gossip's digest: when taken
    static final ThreadLocal<Boolean> ownCopy = new ThreadLocal<>();        // this thread brings up an own copy
    static Address local;
    static List<Address> group;
    static long sentLogged = 0;                          // the last Multicast logged
    static int ownInFlight = 0;                          // own multicasts passed down whose copy has not come all the way up
    static long pendingTs;                               // the own STABILITY sent, its copy not yet handled
    static String pendingMsg;

    static void traceStable(JChannel ch, String path) throws Exception {
        steps = new PrintWriter(new FileWriter(path));
        ProtocolStack st = ch.getProtocolStack();
        nakack = (NAKACK) st.findProtocol(NAKACK.class);
        stable = st.findProtocol(STABLE.class);
        suspended = STABLE.class.getDeclaredField("suspended");
        windowLow = NakReceiverWindow.class.getDeclaredField("low");
        stableType = STABLE.StableHeader.class.getDeclaredField("type");
        stableDigest = STABLE.StableHeader.class.getDeclaredField("stableDigest");
        for (java.lang.reflect.Field f : new java.lang.reflect.Field[] {suspended, windowLow, stableType, stableDigest})
            f.setAccessible(true);
        java.lang.reflect.Field lock = STABLE.class.getDeclaredField("lock");
        lock.setAccessible(true);
        stableLock = (java.util.concurrent.locks.ReentrantLock) lock.get(stable);
        st.insertProtocol(new NakSteps(), ProtocolStack.BELOW, NAKACK.class);
        st.insertProtocol(new StableSteps(), ProtocolStack.BELOW, STABLE.class);
    }

    /** Every member in the full view, STABLE suspended since it joined: STABLE
     *  resumes, which resets its digest and votes (the spec's Init), and the base
     *  line (each sender's window at this member, which the harness checks is the
     *  same at every member) is written; the member multicasts once the harness
     *  says every member has written it. */
    static void startStable(JChannel ch, String marker) throws Exception {
        decideStabilityUnderStep();
        synchronized (STEP) {
            ch.getProtocolStack().down(new Event(Event.RESUME_STABLE));   // resets its digest: the round of Init
            group = new ArrayList<>(ch.getView().getMembers());
            local = ch.getAddress();
            base = new TreeMap<>();
            StringBuilder b = new StringBuilder("{");
            for (Address a : group) {
                NakReceiverWindow w = nakack.getWindow(a);
                long hd = w.getHighestDelivered();
                base.put(memberOf(a), hd);
                known.put(memberOf(a), 0L);
                arrived.put(memberOf(a), new TreeSet<>());
                b.append(b.length() > 1 ? "," : "").append("\"").append(memberOf(a)).append("\":{\"hd\":").append(hd)
                 .append(",\"hr\":").append(w.getHighestReceived()).append(",\"low\":").append(windowLow.getLong(w))
                 .append(a.equals(ch.getAddress()) ? ",\"seqno\":" + nakack.getCurrentSeqno() : "").append("}");
            }
            steps.println("{\"ts\":" + stamp() + ",\"base\":" + b.append("}") + ",\"nid\":" + me + "}");
            steps.flush();
        }
        new File(marker + ".based").createNewFile();
        File go = new File(marker + ".go");
        while (!go.exists()) Thread.sleep(5);
    }

    static long rel(int member, long seqno) { return seqno - base.get(member); }

    /** Under STEP.  The spec delivers a member's own multicast in Multicast,
     *  JGroups when its loopback copy comes up: before STABLE reads the own
     *  delivered seqnos (a digest for a gossip, a STABILITY sent or taken, where
     *  the round restarts from them), let those copies come up (1 s at most;
     *  wait releases STEP, which the thread bringing them up may need).  Not in
     *  the thread bringing one up, nor under STABLE's lock (resetDigest), which a
     *  thread holding STEP may be waiting for. */
    static void awaitOwnCopies() {
        if (ownCopy.get() != null || stableLock.isHeldByCurrentThread()) return;
        NakReceiverWindow own = nakack.getWindow(local);
        for (long until = System.nanoTime() + OWN_COPY_WAIT;
             own.getHighestDelivered() < nakack.getCurrentSeqno() && System.nanoTime() < until; )
            try { STEP.wait(1); } catch (InterruptedException e) { return; }
    }

    /** A loaded machine can hold a loopback copy back for tens of ms: long enough
     *  that a bound which only guards against a copy that never comes is never the
     *  reason a step is logged early. */
    static final long OWN_COPY_WAIT = 1_000_000_000L;

    /** Under STEP, as a multicast passes down above NAKACK: wait until the previous
     *  own copy has come all the way up (1 s at most; not in the thread bringing one
     *  up), then count this one in flight.  STABLE takes a digest in the thread
     *  bringing an own copy up once max_bytes were received, where awaitOwnCopies
     *  cannot wait (that thread delivers the own window); and NAKACK puts a multicast
     *  into its own window before passing it down, so a copy coming up delivers the
     *  next one too if it is already numbered.  Waiting above NAKACK, with one own
     *  multicast in flight at a time, no multicast is numbered between NAKACK
     *  counting a copy delivered and STABLE reading it: the digest's own entry is
     *  the spec's (a sender delayed by one loopback, a delay any run may have). */
    static void awaitOwnInFlight() {
        if (ownCopy.get() != null) { ownInFlight++; return; }
        for (long until = System.nanoTime() + OWN_COPY_WAIT; ownInFlight > 0 && System.nanoTime() < until; )
            try { STEP.wait(1); } catch (InterruptedException e) { return; }
        ownInFlight = 1;                                 // a copy that never came up is not waited for again
    }

    /** The spec's SendStability purges and starts the next round from the own
     *  delivered vector at once, JGroups when its own copy comes up: until then
     *  (1 s at most) no other message is taken up nor multicast, so that the
     *  vector is the same (a delay any run may have; the STABILITY's own thread,
     *  which multicasts it, and the thread bringing its copy up pass). */
    static volatile boolean gated = false;
    static volatile Thread gateOwner;
    static volatile long gateUntil;

    static void gate(boolean on) {                       // under STEP
        gated = on;
        gateOwner = on ? Thread.currentThread() : null;
        gateUntil = System.nanoTime() + OWN_COPY_WAIT;
        if (!on) STEP.notifyAll();
    }

    /** Under STEP: wait (releasing STEP) while the gate is shut to this thread. */
    static void awaitGate() {
        while (gated && Thread.currentThread() != gateOwner && ownCopy.get() == null && System.nanoTime() < gateUntil)
            try { STEP.wait(1); } catch (InterruptedException e) { return; }
    }

    /** Under STEP: StabilitySendTasks that have decided to send (DecidedTask) and not yet passed down. */
    static int stabilitySending = 0;

    /** Under STEP, before another member's STABILITY goes up to STABLE (whose
     *  stopStabilityTask cancels this member's pending one), and holding STEP from
     *  here to that cancel: a STABILITY this member has decided to send is sent and
     *  its own copy handled first (1 s at most).  Otherwise JGroups may send it after
     *  the other's reset the round (a StabilitySendTask's run, once begun, is not
     *  stopped by a cancel), where the spec's SendStability needs the round's votes;
     *  taking the other's a moment later (a delay any run may have) makes JGroups's
     *  order the spec's. */
    static boolean awaitOwnStability() {
        boolean waited = false;
        for (long until = System.nanoTime() + OWN_COPY_WAIT;
             (stabilitySending > 0 || gated && System.nanoTime() < gateUntil) && System.nanoTime() < until; waited = true)
            try { STEP.wait(1); } catch (InterruptedException e) { return waited; }
        return waited;
    }

    /** A StabilitySendTask run by STABLE's timer decides under STEP: cancelled by
     *  then (stopStabilityTask, under STABLE's stability_lock), it does not send, as
     *  if the timer had run it a moment later; else it counts in stabilitySending
     *  until its STABILITY has passed down, so that awaitOwnStability waits for it. */
    static final class DecidedTask implements Runnable {
        final Runnable task;
        volatile java.util.concurrent.Future<?> future;        // set by schedule, under stability_lock
        DecidedTask(Runnable task) { this.task = task; }

        public void run() {
            synchronized (STEP) {
                stabilityLock.lock();
                try {
                    if (future != null && future.isCancelled()) return;
                } finally { stabilityLock.unlock(); }
                stabilitySending++;
            }
            try { task.run(); } finally {
                synchronized (STEP) { stabilitySending--; STEP.notifyAll(); }
            }
        }
    }

    static java.util.concurrent.locks.Lock stabilityLock;

    /** STABLE's timer, as STABLE sees it: StabilitySendTasks go through DecidedTask. */
    static void decideStabilityUnderStep() throws Exception {
        java.lang.reflect.Field lockField = STABLE.class.getDeclaredField("stability_lock");
        java.lang.reflect.Field timerField = STABLE.class.getDeclaredField("timer");
        lockField.setAccessible(true);
        timerField.setAccessible(true);
        stabilityLock = (java.util.concurrent.locks.Lock) lockField.get(stable);
        final org.jgroups.util.TimeScheduler real = (org.jgroups.util.TimeScheduler) timerField.get(stable);
        Object proxy = java.lang.reflect.Proxy.newProxyInstance(
            org.jgroups.util.TimeScheduler.class.getClassLoader(), new Class<?>[] {org.jgroups.util.TimeScheduler.class},
            (self, method, args) -> {
                if (method.getName().equals("schedule") && args[0] instanceof Runnable
                        && args[0].getClass().getName().endsWith("$StabilitySendTask")) {
                    DecidedTask w = new DecidedTask((Runnable) args[0]);
                    java.util.concurrent.Future<?> f = real.schedule(w, (Long) args[1], (java.util.concurrent.TimeUnit) args[2]);
                    w.future = f;
                    return f;
                }
                try { return method.invoke(real, args); }
                catch (java.lang.reflect.InvocationTargetException e) { throw e.getCause(); }
            });
        timerField.set(stable, proxy);
    }

    /** The state StableSteps logs: purged, the window lows above the base (0 left out). */
    static String stableState() throws Exception {
        StringBuilder p = new StringBuilder("{");
        for (Address a : group) {
            long q = rel(memberOf(a), windowLow.getLong(nakack.getWindow(a)));
            if (q > 0) p.append(p.length() > 1 ? "," : "").append("\"").append(memberOf(a)).append("\":").append(q);
        }
        return "{\"purged\":" + p.append("}") + "}";
    }

    /** A STABLE header's message as the spec's: a gossip's vector (each sender's
     *  highest delivered seqno), a STABILITY digest by its lows (its highest
     *  delivered seqnos; its highs are NAKACK's highest received, not the spec's). */
    static String stableMsg(int type, int from, Digest d) {
        StringBuilder v = new StringBuilder("{");
        for (Map.Entry<Address, Digest.Entry> e : d.getSenders().entrySet()) {
            int x = memberOf(e.getKey());
            v.append(v.length() > 1 ? "," : "").append("\"").append(x).append("\":")
             .append(rel(x, e.getValue().getHighestDeliveredSeqno()));
        }
        v.append("}");
        return type == 1 ? "{\"type\":\"stable\",\"from\":" + from + ",\"vector\":" + v + "}"
                         : "{\"type\":\"stability\",\"from\":" + from + ",\"lows\":" + v + "}";
    }

    /** Below NAKACK: multicasts going out (Multicast) and arriving (ReceiveData, and
     *  Retransmit for each further message NAKACK delivers from its window). */
    public static class NakSteps extends Protocol {
        public String getName() { return "NakSteps"; }

        public Object down(Event evt) {
            if (evt.getType() == Event.MSG) {
                Message m = (Message) evt.getArg();
                Header h = m.getHeader(nakack.getId());
                if (m.getDest() == null && h instanceof NakAckHeader && ((NakAckHeader) h).getType() == NakAckHeader.MSG) {
                    synchronized (STEP) {
                        awaitGate();
                        // NAKACK numbers a multicast under its own lock but passes it down after:
                        // two sending threads may come here out of order, so log up to this one
                        if (base != null)
                            for (long q = rel(me, ((NakAckHeader) h).getSeqno()); sentLogged < q; ) {
                                sentLogged++;
                                step(stamp(), "Multicast", null, "{\"type\":\"data\",\"from\":" + me + ",\"seq\":" + sentLogged + "}",
                                     "{\"sent\":" + sentLogged + "}", null);
                            }
                    }
                }
            }
            return down_prot.down(evt);
        }

        public Object up(Event evt) {
            if (evt.getType() != Event.MSG) return up_prot.up(evt);
            Message m = (Message) evt.getArg();
            Header h = m.getHeader(nakack.getId());
            if (!(h instanceof NakAckHeader) || m.getSrc() == null) return up_prot.up(evt);
            if (memberOf(m.getSrc()) == me) {                        // the own copy: no step (Multicast delivered it)
                ownCopy.set(Boolean.TRUE);
                try { return up_prot.up(evt); } finally {
                    ownCopy.remove();
                    synchronized (STEP) { if (ownInFlight > 0) ownInFlight--; STEP.notifyAll(); }
                }
            }
            synchronized (STEP) {
                awaitGate();
                if (base == null) return up_prot.up(evt);
                catchUp();
                NakAckHeader nh = (NakAckHeader) h;
                int p = memberOf(m.getSrc());
                long q = rel(p, nh.getSeqno());
                if (nh.getType() == NakAckHeader.MSG && q > known.get(p)) arrived.get(p).add(q);
                Object r = up_prot.up(evt);
                catchUp();
                return r;
            }
        }
    }

    /** The messages NAKACK counts delivered (its window's highest delivered) that
     *  the steps have not: a ReceiveData for each that arrived, a Retransmit for
     *  each it got again (XMIT_RSP), in seqno order, before any step that reads
     *  delivered.  A ReceiveData is logged when NAKACK counts the message
     *  delivered, not when it arrives: NAKACK hands an out-of-band message
     *  (STABLE's) up first and counts it delivered after, and keeps one that
     *  arrived above a gap until the gap is filled, where the spec drops it and
     *  has it retransmitted; logged at delivery, it is the spec's ReceiveData
     *  taken in order. */
    static final Map<Integer, Long> aboveGap = new HashMap<>();   // per sender: the last ReceiveData logged above a gap

    static void catchUp() {
        for (Address a : group) {
            int x = memberOf(a);
            if (x == me) continue;                               // own: delivered in Multicast
            for (long hd = rel(x, nakack.getWindow(a).getHighestDelivered()); known.get(x) < hd; ) {
                long k = known.get(x) + 1;
                known.put(x, k);
                if (arrived.get(x).remove(k))
                    step(stamp(), "ReceiveData", "{\"p\":" + x + "}",
                         "{\"type\":\"data\",\"from\":" + x + ",\"to\":" + me + ",\"seq\":" + k + "}", "{}", null);
                else {
                    // k came again (XMIT_RSP): NAKACK asked for it because a later one
                    // arrived, which it keeps; the spec's Retransmit needs to know of
                    // that one, so it is logged first as the spec's ReceiveData above
                    // a gap (dropped, received raised) and is itself retransmitted
                    Long above = arrived.get(x).higher(k);
                    if (above != null && aboveGap.getOrDefault(x, 0L) < k) {
                        arrived.get(x).remove(above);
                        aboveGap.put(x, above);
                        step(stamp(), "ReceiveData", "{\"p\":" + x + "}",
                             "{\"type\":\"data\",\"from\":" + x + ",\"to\":" + me + ",\"seq\":" + above + "}", "{}", null);
                    }
                    step(stamp(), "Retransmit", "{\"p\":" + x + "}", null, "{}", null);
                }
            }
            arrived.get(x).headSet(known.get(x) + 1).clear();   // duplicates: no step
        }
    }

    /** Below STABLE: its gossip going out and, once NAKACK delivered it, coming up. */
    public static class StableSteps extends Protocol {
        public String getName() { return "StableSteps"; }

        public Object down(Event evt) {
            if (evt.getType() == Event.GET_DIGEST) {
                // a gossip carries NAKACK's digest as STABLE took it, and leaves later
                // (from the timer): its SendStable is stamped here
                synchronized (STEP) {
                    if (base == null) return down_prot.down(evt);
                    awaitOwnCopies();
                    catchUp();
                    long ts = stamp();
                    Object d = down_prot.down(evt);
                    // a gossip's digest (taken outside STABLE's lock: the timer's and
                    // handleRegularMessage's); resetDigest takes one under it, for no gossip
                    if (d != null && !stableLock.isHeldByCurrentThread()) {
                        digestTaken.values().removeIf(t -> ts - t > 10_000_000L);  // taken for no gossip (GMS)
                        digestTaken.put((Digest) d, ts);
                    }
                    return d;
                }
            }
            if (evt.getType() == Event.MSG) {
                Message m = (Message) evt.getArg();
                Header h = m.getHeader(stable.getId());
                if (m.getDest() == null && base != null)
                    synchronized (STEP) { awaitOwnInFlight(); }
                stableDown(h);
            }
            return down_prot.down(evt);
        }

        /** A STABLE message passing down: its Send step (a STABILITY's written once its own copy came up). */
        static void stableDown(Header h) {
            if (!(h instanceof STABLE.StableHeader)) return;
            synchronized (STEP) {
                if (base == null) return;
                int type = hdrType(h);
                Digest d = hdrDigest(h);
                if (type == 2) awaitOwnCopies();
                Long taken = digestTaken.remove(d);         // another gossip's may be pending still
                if (taken == null) catchUp();
                long ts = taken != null ? taken : stamp();
                if (type == 1)                              // changes no variable JGroups shows
                    step(ts, "SendStable", null, stableMsg(type, me, d), "{}", null);
                else {                                      // purges: written once the own copy did
                    if (pendingMsg != null) flushPending();     // an earlier copy never came up
                    pendingTs = ts;
                    pendingMsg = stableMsg(type, me, d);
                    gate(true);
                }
            }
        }

        public Object up(Event evt) {
            if (evt.getType() != Event.MSG) return up_prot.up(evt);
            Message m = (Message) evt.getArg();
            Header h = m.getHeader(stable.getId());
            if (!(h instanceof STABLE.StableHeader)) return up_prot.up(evt);
            synchronized (STEP) {
                try {
                    if (base == null) return up_prot.up(evt);
                    int type = hdrType(h);
                    int p = memberOf(m.getSrc());
                    if (p == me) {                                           // the own copy: the Send step
                        Object r = up_prot.up(evt);
                        if (type == 2 && pendingMsg != null) flushPending();
                        return r;
                    }
                    if (type == 2)                      // own copies again after a wait: it released STEP
                        do awaitOwnCopies(); while (awaitOwnStability());
                    catchUp();
                    long ts = stamp();
                    boolean ignored = suspended.getBoolean(stable);         // JGroups drops it: as if lost
                    String msg = stableMsg(type, p, hdrDigest(h)).replaceFirst(",", ",\"to\":" + me + ",");
                    Object r = up_prot.up(evt);
                    if (!ignored)
                        step(ts, type == 1 ? "ReceiveStable" : "ReceiveStability", "{\"p\":" + p + "}", msg, stableState(), null);
                    return r;
                } catch (RuntimeException e) { throw e; } catch (Exception e) { throw new RuntimeException(e); }
            }
        }

        static void flushPending() {
            try {
                step(pendingTs, "SendStability", null, pendingMsg, stableState(), null);
            } catch (Exception e) { throw new RuntimeException(e); }
            pendingMsg = null;
            gate(false);
        }

        /** The header's type: 1 STABLE_GOSSIP, 2 STABILITY. */
        static int hdrType(Header h) {
            try { return stableType.getInt(h); } catch (IllegalAccessException e) { throw new RuntimeException(e); }
        }

        static Digest hdrDigest(Header h) {
            try { return (Digest) stableDigest.get(h); } catch (IllegalAccessException e) { throw new RuntimeException(e); }
        }
    }

    /**
     * White-box steps of pbcast.FLUSH (docs/jgroups.md, "White-box traces of
     * JGroups's FLUSH"): four protocols log spec/Flush/Flush.tla's actions
     * (FlushOkRound FALSE: JGroups 2.12 sends FLUSH_COMPLETED right after
     * blocking).  FlushBelow, under FLUSH, sees START_FLUSH, STOP_FLUSH and the
     * application's multicasts go down (StartFlush, StopFlush, and the latch),
     * NAKACK's digest taken for FLUSH_COMPLETED (FlushCompleted), START_FLUSH,
     * STOP_FLUSH and FLUSH_COMPLETED come up (Block, Unblock,
     * ReceiveFlushCompleted) and views (InstallView); GmsBelow, under GMS, a
     * JOIN_REQ reaching the coordinator (Join) and its VIEW multicast going down
     * (SendView); NakAbove, over NAKACK, each multicast NAKACK delivers
     * (Deliver, or Discard once the member sent its FLUSH_COMPLETED); NakBelow,
     * under NAKACK, the own multicast numbered (Multicast).  The state logged is
     * the spec's view of the member (vid, phase, blocked, flushInit, digest,
     * delivered as appended), kept here under STEP, which is taken only in these
     * paths and never while JGroups waits: FLUSH's sharedLock and blockMutex are
     * released before START_FLUSH, STOP_FLUSH, FLUSH_COMPLETED and GET_DIGEST go
     * down, and GMS waits for flush_promise without holding STEP.  Every wait
     * below releases STEP and is bounded: by OWN_COPY_WAIT, and a multicast held
     * at the adapter's latch by LATCH_WAIT.
     */
    static Protocol flushProt, gmsProt;
    static java.lang.reflect.Field flushHdrType, flushHdrParticipants, flushHdrDigest, gmsHdrView;
    static boolean fTracing = false;
    static int fVid = 0, fInit = 0;
    static String fPhase = "Normal";
    static boolean fBlocked = false;
    static final long LATCH_WAIT = 5_000_000_000L;
    static final List<String> late = new ArrayList<>();        // delivered after FLUSH_COMPLETED: reconciled at the view
    static final Map<Integer, TreeMap<Long, long[]>> passed = new HashMap<>();   // sender -> NAKACK seqno -> {seq, view}
    static final Map<Integer, Long> passedUp = new HashMap<>();   // sender -> highest NAKACK seqno passed up
    static final Set<Integer> joinLogged = new HashSet<>();
    static final ThreadLocal<Integer> upSender = new ThreadLocal<>();   // this thread passes up a multicast of ...
    static final ThreadLocal<long[]> multicasting = new ThreadLocal<>(); // {seq, view} of the own multicast going down
    static Digest pendingDigest;         // a FLUSH_COMPLETED's digest being translated (specDigest waits)

    static void traceFlush(JChannel ch, String path) throws Exception {
        steps = new PrintWriter(new FileWriter(path));
        ProtocolStack st = ch.getProtocolStack();
        nakack = (NAKACK) st.findProtocol(NAKACK.class);
        flushProt = st.findProtocol(org.jgroups.protocols.pbcast.FLUSH.class);
        gmsProt = st.findProtocol(org.jgroups.protocols.pbcast.GMS.class);
        Class<?> fh = org.jgroups.protocols.pbcast.FLUSH.FlushHeader.class;
        flushHdrType = fh.getDeclaredField("type");
        flushHdrParticipants = fh.getDeclaredField("flushParticipants");
        flushHdrDigest = fh.getDeclaredField("digest");
        gmsHdrView = org.jgroups.protocols.pbcast.GMS.GmsHeader.class.getDeclaredField("view");
        for (java.lang.reflect.Field f : new java.lang.reflect.Field[] {flushHdrType, flushHdrParticipants, flushHdrDigest, gmsHdrView})
            f.setAccessible(true);
        st.insertProtocol(new FlushBelow(), ProtocolStack.BELOW, org.jgroups.protocols.pbcast.FLUSH.class);
        st.insertProtocol(new GmsBelow(), ProtocolStack.BELOW, org.jgroups.protocols.pbcast.GMS.class);
        st.insertProtocol(new NakAbove(), ProtocolStack.ABOVE, NAKACK.class);
        st.insertProtocol(new NakBelow(), ProtocolStack.BELOW, NAKACK.class);
    }

    static int flushType(Header h) {
        try { return flushHdrType.getByte(h); } catch (IllegalAccessException e) { throw new RuntimeException(e); }
    }

    static String key(int sender, long seq) { return "[" + sender + "," + seq + "]"; }

    static String list(Collection<String> xs) { return "[" + String.join(",", xs) + "]"; }

    static String fMsg(String type, int view, String more) {
        return "{\"type\":\"" + type + "\",\"view\":" + view + (more == null ? "" : "," + more) + "}";
    }

    /** A multicast of the application: "gc:<sender>:<seq>", and, once FlushBelow
     *  tagged it, ":<view>" (the spec's view it was multicast in). */
    static long[] appTag(Message m) {
        byte[] b = m.getBuffer();
        if (b == null) return null;
        String s = new String(b);
        if (!s.startsWith("gc:")) return null;
        String[] p = s.split(":");
        return new long[] {Long.parseLong(p[2]), p.length > 3 ? Long.parseLong(p[3]) : -1};
    }

    /** Under STEP: wait (releasing STEP, OWN_COPY_WAIT at most) until cond holds. */
    static boolean awaitUnderStep(java.util.function.BooleanSupplier cond) {
        for (long until = System.nanoTime() + OWN_COPY_WAIT; !cond.getAsBoolean(); ) {
            if (System.nanoTime() > until) return false;
            try { STEP.wait(1); } catch (InterruptedException e) { return false; }
        }
        return true;
    }

    /** NAKACK's digest as the spec's: the application's messages of the member's view
     *  up to each sender's highest delivered seqno (its own: highest received, as the
     *  spec's member delivers its own at once), read from those passed up.  Those
     *  counted delivered and not yet passed up are waited for, except the sender
     *  whose message this thread is handling, if another member (the START_FLUSH:
     *  what follows it in NAKACK's batch comes up after it, as in the spec's
     *  channel; the coordinator's own multicasts are its own at once); those
     *  still not passed up after the wait are left out, and noted (digestAhead).
     *  While it waits (releasing STEP) a multicast passed up beyond the digest
     *  waits too (NakAbove): it comes after the FlushCompleted, as a Discard. */
    static String specDigest(Digest d) {
        Integer cur = upSender.get();
        pendingDigest = d;
        try {
            awaitUnderStep(() -> {
                for (Map.Entry<Address, Digest.Entry> e : d.getSenders().entrySet()) {
                    int x = memberOf(e.getKey());
                    if (x != me && (cur == null || x != cur)
                            && passedUp.getOrDefault(x, 0L) < e.getValue().getHighestDeliveredSeqno()) return false;
                }
                return true;
            });
        } finally {
            pendingDigest = null;            // STEP is held from here until the FlushCompleted is logged
            STEP.notifyAll();
        }
        TreeSet<String> out = new TreeSet<>();
        for (Map.Entry<Address, Digest.Entry> e : d.getSenders().entrySet()) {
            int x = memberOf(e.getKey());
            long upto = x == me ? e.getValue().getHighestReceivedSeqno() : e.getValue().getHighestDeliveredSeqno();
            if (cur != null && x == cur && x != me) upto = Math.min(upto, passedUp.getOrDefault(x, 0L));
            TreeMap<Long, long[]> seen = passed.getOrDefault(x, new TreeMap<>());
            if (x == me && !seen.isEmpty() && seen.lastKey() > upto)
                fNote("ownAhead", "\"hd\":" + e.getValue().getHighestDeliveredSeqno() + ",\"hr\":" + upto
                      + ",\"numbered\":" + seen.lastKey() + ",\"current\":" + nakack.getCurrentSeqno());
            if (x != me && passedUp.getOrDefault(x, 0L) < upto)
                fNote("digestAhead", "\"sender\":" + x + ",\"passedUp\":" + passedUp.getOrDefault(x, 0L) + ",\"delivered\":" + upto);
            for (long[] v : seen.headMap(upto, true).values()) if (v[1] == fVid) out.add(key(x, v[0]));
        }
        return list(out);
    }

    static void fStep(String name, int nid, String params, String msg, String state) {
        steps.println("{\"ts\":" + stamp() + ",\"name\":\"" + name + "\",\"nid\":" + nid
                      + (params == null ? "" : ",\"params\":" + params) + (msg == null ? "" : ",\"msg\":" + msg)
                      + ",\"state\":" + state + "}");
        steps.flush();
    }

    static void fNote(String note, String more) {
        steps.println("{\"ts\":" + stamp() + ",\"note\":\"" + note + "\",\"nid\":" + me + "," + more + "}");
        steps.flush();
    }

    /** Under FLUSH: its own messages and the application's multicasts going down, its views and messages coming up. */
    public static class FlushBelow extends Protocol {
        public String getName() { return "FlushBelow"; }

        public Object down(Event evt) {
            if (evt.getType() == Event.GET_DIGEST) {
                synchronized (STEP) {
                    // only FLUSH's onStartFlush asks for a digest from above GMS
                    if (!fTracing || !fPhase.equals("InBlock")) return down_prot.down(evt);
                    // onStartFlush has closed FLUSH's latch: a multicast that passed it before
                    // waits in FlushBelow from now on, also while specDigest waits (it releases
                    // STEP), so that none is numbered between the digest and its step
                    fBlocked = true;
                    Object d = down_prot.down(evt);
                    String dg = specDigest((Digest) d);
                    fStep("FlushCompleted", me, null, fMsg("FLUSH_COMPLETED", fVid, "\"digest\":" + dg),
                          "{\"phase\":\"Completed\",\"blocked\":true,\"digest\":" + dg + "}");
                    fPhase = "Completed";
                    fBlocked = true;
                    return d;
                }
            }
            if (evt.getType() == Event.SET_LOCAL_ADDRESS) local = (Address) evt.getArg();
            if (evt.getType() != Event.MSG) return down_prot.down(evt);
            Message m = (Message) evt.getArg();
            if (m.getDest() != null) return down_prot.down(evt);
            Header h = m.getHeader(flushProt.getId());
            if (h != null) {
                int t = flushType(h);
                // logged and numbered by NAKACK under STEP: an own multicast of the
                // application cannot be numbered between (the spec's channel is FIFO)
                synchronized (STEP) {
                    if (fTracing && t == org.jgroups.protocols.pbcast.FLUSH.FlushHeader.START_FLUSH) {
                        String ph = fPhase.equals("Normal") ? "InBlock" : fPhase;
                        fStep("StartFlush", me, null, fMsg("START_FLUSH", fVid, null),
                              "{\"phase\":\"" + ph + "\",\"flushInit\":" + me + "}");
                        fPhase = ph;
                        fInit = me;
                    } else if (fTracing && t == org.jgroups.protocols.pbcast.FLUSH.FlushHeader.FLUSH_RECONCILE) {
                        // no spec action (the spec's VIEW carries the union digest): noted for the explanation
                        fNote("reconcile", "\"highest\":" + highest((Digest) read(flushHdrDigest, h)));
                    } else if (fTracing && t == org.jgroups.protocols.pbcast.FLUSH.FlushHeader.STOP_FLUSH) {
                        fStep("StopFlush", me, null, fMsg("STOP_FLUSH", fVid, null), "{\"blocked\":false,\"flushInit\":0}");
                        fBlocked = false;
                        fInit = 0;
                    }
                    return down_prot.down(evt);
                }
            }
            long[] tag = appTag(m);
            if (tag == null) return down_prot.down(evt);
            // the application's multicast, past FLUSH's latch: numbered by NAKACK and
            // logged (NakBelow) under STEP, so that no FLUSH step comes between
            synchronized (STEP) {
                if (fTracing && fBlocked) {
                    // it passed the latch before FLUSH closed it (onStartFlush): held until
                    // the latch opens, as if it had come to the latch a moment later (at most
                    // FLUSH's own time-out and 1 s more: config's timeout="4000")
                    for (long until = System.nanoTime() + LATCH_WAIT; fBlocked && System.nanoTime() < until; )
                        try { STEP.wait(1); } catch (InterruptedException e) { break; }
                }
                m.setBuffer(("gc:" + me + ":" + tag[0] + ":" + fVid).getBytes());
                multicasting.set(new long[] {tag[0], fVid});
                try { return down_prot.down(evt); } finally { multicasting.remove(); }
            }
        }

        public Object up(Event evt) {
            if (evt.getType() == Event.VIEW_CHANGE) {
                synchronized (STEP) { installView((View) evt.getArg()); }
                return up_prot.up(evt);
            }
            if (evt.getType() != Event.MSG) return up_prot.up(evt);
            Message m = (Message) evt.getArg();
            Header h = m.getHeader(flushProt.getId());
            if (h == null) return up_prot.up(evt);
            int t = flushType(h), src = memberOf(m.getSrc());
            if (src == me) return up_prot.up(evt);              // the own copy: the step was the send
            synchronized (STEP) {
                if (!fTracing) return up_prot.up(evt);
                if (t == org.jgroups.protocols.pbcast.FLUSH.FlushHeader.START_FLUSH) {
                    Collection<?> parts = (Collection<?>) read(flushHdrParticipants, h);
                    if (parts != null && parts.contains(local) && fPhase.equals("Normal")) {
                        fStep("Block", me, "{\"c\":" + src + "}", fMsg("START_FLUSH", fVid, null),
                              "{\"phase\":\"InBlock\",\"flushInit\":" + src + "}");
                        fPhase = "InBlock";
                        fInit = src;
                    } else if (parts != null && parts.contains(local))
                        fNote("startFlushInFlush", "\"from\":" + src + ",\"phase\":\"" + fPhase + "\",\"flushInit\":" + fInit);
                } else if (t == org.jgroups.protocols.pbcast.FLUSH.FlushHeader.STOP_FLUSH) {
                    if (fInit == src) {
                        fStep("Unblock", me, "{\"c\":" + src + "}", fMsg("STOP_FLUSH", fVid, null),
                              "{\"blocked\":false,\"flushInit\":0}");
                        fBlocked = false;
                        fInit = 0;
                    }
                } else if (t == org.jgroups.protocols.pbcast.FLUSH.FlushHeader.FLUSH_COMPLETED) {
                    // FLUSH_COMPLETED is a unicast, the multicasts it covers come through
                    // NAKACK: they are taken first (the spec's channel is FIFO), 1 s at most
                    Digest d = (Digest) read(flushHdrDigest, h);
                    Digest.Entry own = d == null ? null : d.get(m.getSrc());
                    long upto = own == null ? 0 : own.getHighestReceivedSeqno();
                    awaitUnderStep(() -> passedUp.getOrDefault(src, 0L) >= upto);
                    fStep("ReceiveFlushCompleted", me, "{\"q\":" + src + "}", fMsg("FLUSH_COMPLETED", fVid, null), "{}");
                }
            }
            return up_prot.up(evt);
        }

        /** A digest's highest seqno per sender (NAKACK's numbering), as JSON. */
        static String highest(Digest d) {
            StringBuilder b = new StringBuilder("{");
            if (d != null)
                for (Map.Entry<Address, Digest.Entry> e : d.getSenders().entrySet())
                    b.append(b.length() > 1 ? "," : "").append("\"").append(memberOf(e.getKey())).append("\":")
                     .append(e.getValue().getHighest());
            return b.append("}").toString();
        }

        static Object read(java.lang.reflect.Field f, Object o) {
            try { return f.get(o); } catch (IllegalAccessException e) { throw new RuntimeException(e); }
        }

        /** Under STEP: a view reaching FLUSH.  Member 1's first (it alone) is the spec's
         *  Init; a joiner's first, and every later one, is InstallView from the view's
         *  creator; the coordinator's own was its SendView. */
        static void installView(View v) {
            int c = memberOf(v.getVid().getCoordAddress());
            int nv = (int) v.getVid().getId() + 1;
            if (!fTracing && me == 1 && v.size() == 1) { fTracing = true; fVid = nv; return; }
            if (fTracing && nv == fVid) return;
            boolean joiner = !fTracing;
            StringBuilder ms = new StringBuilder();
            for (Address a : v.getMembers()) ms.append(ms.length() == 0 ? "" : ",").append(memberOf(a));
            fStep("InstallView", me, "{\"c\":" + c + "}", fMsg("VIEW", joiner ? nv - 1 : fVid, "\"members\":[" + ms + "]"),
                  "{\"vid\":" + nv + ",\"phase\":\"Normal\",\"flushInit\":" + (joiner ? 0 : c)
                  + ",\"digest\":[],\"delivered\":" + list(late) + "}");
            fTracing = true;
            fVid = nv;
            fPhase = "Normal";
            fInit = joiner ? 0 : c;
            late.clear();
        }
    }

    /** Under GMS: a JOIN_REQ reaching the coordinator (Join, the joiner's step,
     *  once per joiner) and its VIEW multicast going down (SendView). */
    public static class GmsBelow extends Protocol {
        public String getName() { return "GmsBelow"; }

        public Object up(Event evt) {
            if (evt.getType() == Event.MSG) {
                Header h = ((Message) evt.getArg()).getHeader(gmsProt.getId());
                if (h instanceof org.jgroups.protocols.pbcast.GMS.GmsHeader
                        && ((org.jgroups.protocols.pbcast.GMS.GmsHeader) h).getType() == org.jgroups.protocols.pbcast.GMS.GmsHeader.JOIN_REQ) {
                    int j = memberOf(((org.jgroups.protocols.pbcast.GMS.GmsHeader) h).getMember());
                    synchronized (STEP) {
                        if (fTracing && joinLogged.add(j))
                            steps.println("{\"ts\":" + stamp() + ",\"name\":\"Join\",\"nid\":" + j + ",\"state\":null}");
                        steps.flush();
                    }
                }
            }
            return up_prot.up(evt);
        }

        public Object down(Event evt) {
            if (evt.getType() == Event.MSG) {
                Message m = (Message) evt.getArg();
                Header h = m.getHeader(gmsProt.getId());
                if (m.getDest() == null && h instanceof org.jgroups.protocols.pbcast.GMS.GmsHeader
                        && ((org.jgroups.protocols.pbcast.GMS.GmsHeader) h).getType() == org.jgroups.protocols.pbcast.GMS.GmsHeader.VIEW) {
                    View v = (View) FlushBelow.read(gmsHdrView, h);
                    synchronized (STEP) {
                        if (fTracing && v != null) {
                            StringBuilder ms = new StringBuilder();
                            for (Address a : v.getMembers()) ms.append(ms.length() == 0 ? "" : ",").append(memberOf(a));
                            int nv = (int) v.getVid().getId() + 1;
                            fStep("SendView", me, null, fMsg("VIEW", fVid, "\"members\":[" + ms + "]"),
                                  "{\"vid\":" + nv + ",\"phase\":\"Normal\",\"digest\":[],\"delivered\":" + list(late) + "}");
                            fVid = nv;
                            fPhase = "Normal";
                            late.clear();
                        }
                        return down_prot.down(evt);      // numbered by NAKACK under STEP, as above
                    }
                }
            }
            return down_prot.down(evt);
        }
    }

    /** Over NAKACK: each multicast it passes up, in its order per sender: the
     *  application's are Deliver (or Discard after the member's FLUSH_COMPLETED:
     *  the spec delivers those through the view's digest), the others are counted
     *  passed up for the digest. */
    public static class NakAbove extends Protocol {
        public String getName() { return "NakAbove"; }

        public Object up(Event evt) {
            if (evt.getType() != Event.MSG) return up_prot.up(evt);
            Message m = (Message) evt.getArg();
            Header h = m.getHeader(nakack.getId());
            if (m.getDest() != null || !(h instanceof NakAckHeader)) return up_prot.up(evt);
            int x = memberOf(m.getSrc());
            long seqno = ((NakAckHeader) h).getSeqno();
            long[] tag = appTag(m);
            synchronized (STEP) {
                if (tag != null) passed.computeIfAbsent(x, k -> new TreeMap<>()).put(seqno, tag);
                passedUp.merge(x, seqno, Math::max);
                STEP.notifyAll();
                // beyond the digest being translated: after its FlushCompleted (then a Discard)
                Digest.Entry pe = pendingDigest == null ? null : pendingDigest.get(m.getSrc());
                if (pe != null && x != me && seqno > pe.getHighestDeliveredSeqno())
                    awaitUnderStep(() -> pendingDigest == null);
                if (tag != null && x != me && fTracing) {
                    String k = key(x, tag[0]);
                    String msg = "{\"type\":\"DATA\",\"sender\":" + x + ",\"seqno\":" + tag[0] + ",\"view\":" + tag[1] + "}";
                    if (tag[1] == fVid && fPhase.equals("Completed")) {
                        fStep("Discard", me, "{\"q\":" + x + "}", msg, "{}");
                        late.add(k);
                    } else                                 // JGroups delivers it, whatever its view
                        fStep("Deliver", me, "{\"q\":" + x + "}", msg, "{\"delivered\":[" + k + "]}");
                }
            }
            upSender.set(x);
            try { return up_prot.up(evt); } finally { upSender.remove(); }
        }
    }

    /** Under NAKACK: the own multicast FlushBelow let through, now numbered (Multicast). */
    public static class NakBelow extends Protocol {
        public String getName() { return "NakBelow"; }

        public Object down(Event evt) {
            long[] tag = multicasting.get();
            if (tag != null && evt.getType() == Event.MSG) {
                Message m = (Message) evt.getArg();
                Header h = m.getHeader(nakack.getId());
                if (h instanceof NakAckHeader) {
                    synchronized (STEP) {                         // held already: FlushBelow's thread
                        passed.computeIfAbsent(me, k -> new TreeMap<>()).put(((NakAckHeader) h).getSeqno(), tag);
                        if (fTracing)
                            fStep("Multicast", me, null, "{\"type\":\"DATA\",\"sender\":" + me + ",\"seqno\":" + tag[0]
                                  + ",\"view\":" + tag[1] + "}", "{\"delivered\":[" + key(me, tag[0]) + "]}");
                    }
                    multicasting.remove();
                }
            }
            return down_prot.down(evt);
        }
    }

    static int totalMembers;

    static void traceSequencer(JChannel ch, String path) throws Exception {
        steps = new PrintWriter(new FileWriter(path));
        ProtocolStack st = ch.getProtocolStack();
        sequencer = st.findProtocol(SEQUENCER.class);
        isCoord = SEQUENCER.class.getDeclaredField("is_coord");
        forwardTable = SEQUENCER.class.getDeclaredField("forward_table");
        hdrType = SEQUENCER.SequencerHeader.class.getDeclaredField("type");
        coordField = SEQUENCER.class.getDeclaredField("coord");
        receivedTable = SEQUENCER.class.getDeclaredField("received_table");
        seqnoMap = org.jgroups.util.SeqnoTable.class.getDeclaredField("map");
        Class<?> entry = Class.forName("org.jgroups.util.SeqnoTable$Entry");
        entryNext = entry.getDeclaredField("next_to_receive");
        entrySeqnos = entry.getDeclaredField("seqnos");
        for (java.lang.reflect.Field f : new java.lang.reflect.Field[] {isCoord, forwardTable, hdrType, coordField,
                                                                         receivedTable, seqnoMap, entryNext, entrySeqnos})
            f.setAccessible(true);
        st.insertProtocol(new StepsAbove(), ProtocolStack.ABOVE, SEQUENCER.class);
        st.insertProtocol(new StepsBelow(), ProtocolStack.BELOW, SEQUENCER.class);
    }

    public static void main(String[] args) throws Exception {
        me = Integer.parseInt(args[0]);
        String marker = args[2], run = args[3];
        int members = Integer.parseInt(args[5]), messages = Integer.parseInt(args[6]);
        long interval = Long.parseLong(args[7]), settle = Long.parseLong(args[8]);
        final long bound = (long) (Double.parseDouble(args[10]) * 1000);
        Thread watchdog = new Thread(() -> {
            try { Thread.sleep(bound); } catch (InterruptedException e) { return; }
            System.out.println("BOUND " + bound + " ms reached: halting");
            System.out.flush();
            Runtime.getRuntime().halt(4);
        });
        watchdog.setDaemon(true);
        watchdog.start();
        out = new PrintWriter(new FileWriter(args[1]));
        record("{\"kind\":\"header\",\"format\":\"groupcheck-history/1\",\"run_id\":\"" + run + "\",\"node\":" + me
               + ",\"nodes\":" + nodes(members) + ",\"protocol\":\"" + args[9] + "\",\"promises\":" + promises(args[12])
               + ",\"impl\":\"jgroups\","
               + "\"impl_version\":\"" + Version.description + "\"}");
        JChannel ch = new JChannel(new File(args[4]));
        ch.setName("m" + me);
        final long high = new Random().nextLong();       // unique per start, as a random UUID's
        ch.setAddressGenerator(new AddressGenerator() {
            public Address generateAddress() { return new org.jgroups.util.UUID(high, me); }
        });
        ch.getProtocolStack().insertProtocolAtTop(new HistoryLogger());
        totalMembers = members;
        boolean white = !args[11].equals("-"), stableSteps = white && args[9].equals("stable");
        boolean flushSteps = white && args[9].equals("flush");
        if (white && !stableSteps && !flushSteps) traceSequencer(ch, args[11]);
        if (stableSteps) traceStable(ch, args[11]);
        if (flushSteps) traceFlush(ch, args[11]);
        ch.setReceiver(new ExtendedReceiverAdapter());
        ch.connect("groupcheck-" + run);
        // STABLE gossips nothing until every member has taken its base (startStable)
        if (stableSteps) ch.getProtocolStack().down(new Event(Event.SUSPEND_STABLE, bound));
        new File(marker + ".joined").createNewFile();       // the harness starts the next member
        long deadline = System.currentTimeMillis() + 30000;
        while (ch.getView() == null || ch.getView().size() < members) {
            if (System.currentTimeMillis() > deadline) { System.out.println("NOVIEW"); System.exit(3); }
            Thread.sleep(20);
        }
        System.out.println("READY");
        System.out.flush();
        new File(marker + ".ready").createNewFile();
        if (!args[13].equals("-")) startFlushOnMarker(ch, marker, args[13].equals("open"));
        Thread.sleep(300);
        if (stableSteps) startStable(ch, marker);
        for (int q = 1; q <= messages; q++) {
            try {
                ch.send(new Message(null, null, ("gc:" + me + ":" + q).getBytes()));
            } catch (Exception e) {
                System.out.println("SEND-FAILED " + q + " " + e);
            }
            Thread.sleep(interval);
        }
        // then until nothing was delivered for <settle_ms>: a member that stopped sending
        // first (the sequencer's own multicasts need no forward) must not leave while
        // the others' messages still come.  Never inside a flush: a member blocked
        // (BLOCK up, its UNBLOCK not yet) waits for the UNBLOCK, however long FLUSH
        // takes on a loaded machine, and settles from there; one that never comes is
        // a hang, which the run's bound reports (the member did not finish)
        long sentAll = System.currentTimeMillis();
        while (appBlocked || System.currentTimeMillis() - Math.max(sentAll, lastDelivery) < settle) Thread.sleep(20);
        synchronized (HistoryDriver.class) {
            out.println("{\"kind\":\"end\",\"quiescent\":true,\"clock\":" + (System.currentTimeMillis() - t0) / 1000.0 + "}");
            out.flush();
            closed = true;
        }
        System.out.println("DONE");
        System.out.flush();
        Runtime.getRuntime().halt(0);
    }

    /**
     * A flush the member starts itself, as FlushTest's members do, once the
     * harness creates <marker>.flush: "run" is a whole flush (Util.startFlush,
     * which retries a refused flush up to 4 times, then stopFlush); "open" only
     * multicasts START_FLUSH and leaves the flush under way (SUSPEND_BUT_FAIL),
     * so that a kill of this member lands while it is the flush coordinator.
     * The outcome goes to the member's log as a FLUSH line (Runner.flushes).
     */
    static void startFlushOnMarker(JChannel ch, String marker, boolean open) {
        Thread t = new Thread(() -> {
            try {
                File go = new File(marker + ".flush");
                while (!go.exists()) Thread.sleep(5);
                if (open) {
                    ch.down(new Event(Event.SUSPEND_BUT_FAIL));
                    System.out.println("FLUSH open");
                    System.out.flush();
                    new File(marker + ".flushing").createNewFile();    // START_FLUSH is on its way
                } else {
                    new File(marker + ".flushing").createNewFile();    // startFlush is called now
                    boolean ok = org.jgroups.util.Util.startFlush(ch);
                    if (ok) ch.stopFlush();
                    System.out.println("FLUSH " + (ok ? "ok" : "failed"));
                }
                System.out.flush();
            } catch (InterruptedException e) {
                return;
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        t.setDaemon(true);
        t.start();
    }

    // the history checks the stack promises, comma-separated (conformance/jgroups/adapter.py promised)
    static String promises(String checks) {
        StringBuilder b = new StringBuilder("[");
        String[] cs = checks.isEmpty() ? new String[0] : checks.split(",");
        for (int k = 0; k < cs.length; k++) b.append(k > 0 ? "," : "").append('"').append(cs[k]).append('"');
        return b.append("]").toString();
    }

    static String nodes(int n) {
        StringBuilder b = new StringBuilder("[");
        for (int k = 1; k <= n; k++) b.append(k > 1 ? "," : "").append(k);
        return b.append("]").toString();
    }
}
