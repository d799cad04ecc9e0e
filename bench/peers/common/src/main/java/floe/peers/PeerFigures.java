package floe.peers;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * What every peer harness shares (bench/peers/install compiles this beside each harness): its
 * key=value arguments, the process's CPU and peak RSS, and the one JSON line of figures it prints on
 * stdout for bench/peers/java-peer.ts.
 */
final class PeerFigures {
    private final StringBuilder out = new StringBuilder("{");

    static Map<String, String> arguments(String[] argv) {
        Map<String, String> a = new HashMap<>();
        for (String arg : argv) {
            int eq = arg.indexOf('=');
            if (eq < 1) throw new IllegalArgumentException("expected key=value arguments, found " + arg);
            a.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        return a;
    }

    static String need(Map<String, String> a, String key) {
        String v = a.get(key);
        if (v == null) throw new IllegalArgumentException("missing argument " + key + "=…");
        return v;
    }

    static long cpuNs() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** VmHWM of this process (Linux), 0 where /proc is not there. */
    static long peakRssBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        } catch (Exception e) {
            // not Linux: no peak RSS figure, the rates stand
        }
        return 0;
    }

    static String ms(long ns) {
        return String.format(Locale.ROOT, "%.1f", ns / 1e6);
    }

    static String rootCause(Throwable t) {
        while (t.getCause() != null && t.getCause() != t) t = t.getCause();
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    /** For a harness that failed before it had figures: prints the error line and exits 1. */
    static void fail(String peer, Throwable t) {
        System.out.println("{\"peer\":" + quote(peer) + ",\"error\":" + quote(rootCause(t)) + "}");
        t.printStackTrace();
        System.exit(1);
    }

    /** Adds a field whose value is already JSON. */
    PeerFigures json(String key, String json) {
        out.append('"').append(key).append("\":").append(json).append(',');
        return this;
    }

    PeerFigures text(String key, String value) {
        return json(key, quote(value));
    }

    PeerFigures number(String key, long value) {
        return json(key, String.valueOf(value));
    }

    /** Prints the line and exits: the peers leave non-daemon threads behind (Kafka's, Flink's). */
    void printAndExit(boolean ok) {
        out.setLength(out.length() - 1);
        System.out.println(out.append('}'));
        System.out.flush();
        System.exit(ok ? 0 : 1);
    }
}
