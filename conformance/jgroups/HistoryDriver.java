// groupcheck's JGroups adapter (docs/jgroups.md): a protocol placed at the top
// of a JGroups 2.12 stack that writes the groupcheck-history/1 format
// (docs/history-format.md), and a driver that runs one member.
//
//   java -cp jgroups.jar:. HistoryDriver <member> <out.ndjson> <marker> <run_id> <config.xml>
//        <members> <messages> <interval_ms> <settle_ms> <protocol> <bound_s>
//
// The member joins (then creates <marker>.joined), waits for a view of
// <members> (then <marker>.ready), multicasts <messages> payloads
// "gc:<member>:<seq>" every <interval_ms>, waits <settle_ms>, writes the end
// record and exits.  A watchdog halts the JVM after <bound_s> seconds whatever
// it is doing, so no member outlives a harness that died without killing it.
// Messages are identified by their payload, members by their logical name m<k>.
import java.io.*;
import java.util.*;
import org.jgroups.*;
import org.jgroups.stack.*;

public class HistoryDriver {
    static PrintWriter out;
    static int me;
    static boolean closed = false;
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

    static int memberOf(Address a) {
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
                    if (id != null) event("deliver", "{\"id\":" + id + "}");
                    break;
                }
                case Event.VIEW_CHANGE: {
                    View v = (View) evt.getArg();
                    StringBuilder ms = new StringBuilder();
                    for (Address a : v.getMembers()) ms.append(ms.length() == 0 ? "" : ",").append(memberOf(a));
                    event("view", "{\"view\":" + v.getVid().getId() + ",\"members\":[" + ms + "]}");
                    break;
                }
                case Event.BLOCK: event("block", "{}"); break;
                case Event.UNBLOCK: event("unblock", "{}"); break;
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
               + ",\"nodes\":" + nodes(members) + ",\"protocol\":\"" + args[9] + "\",\"impl\":\"jgroups\","
               + "\"impl_version\":\"" + Version.description + "\"}");
        JChannel ch = new JChannel(new File(args[4]));
        ch.setName("m" + me);
        ch.getProtocolStack().insertProtocolAtTop(new HistoryLogger());
        ch.setReceiver(new ExtendedReceiverAdapter());
        ch.connect("groupcheck-" + run);
        new File(marker + ".joined").createNewFile();       // the harness starts the next member
        long deadline = System.currentTimeMillis() + 30000;
        while (ch.getView() == null || ch.getView().size() < members) {
            if (System.currentTimeMillis() > deadline) { System.out.println("NOVIEW"); System.exit(3); }
            Thread.sleep(20);
        }
        System.out.println("READY");
        System.out.flush();
        new File(marker + ".ready").createNewFile();
        Thread.sleep(300);
        for (int q = 1; q <= messages; q++) {
            try {
                ch.send(new Message(null, null, ("gc:" + me + ":" + q).getBytes()));
            } catch (Exception e) {
                System.out.println("SEND-FAILED " + q + " " + e);
            }
            Thread.sleep(interval);
        }
        Thread.sleep(settle);
        synchronized (HistoryDriver.class) {
            out.println("{\"kind\":\"end\",\"quiescent\":true,\"clock\":" + (System.currentTimeMillis() - t0) / 1000.0 + "}");
            out.flush();
            closed = true;
        }
        System.out.println("DONE");
        System.out.flush();
        Runtime.getRuntime().halt(0);
    }

    static String nodes(int n) {
        StringBuilder b = new StringBuilder("[");
        for (int k = 1; k <= n; k++) b.append(k > 1 ? "," : "").append(k);
        return b.append("]").toString();
    }
}
