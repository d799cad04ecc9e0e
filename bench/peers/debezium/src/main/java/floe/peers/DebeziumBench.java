package floe.peers;

import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import io.debezium.embedded.Connect;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.connect.source.SourceRecord;

import static floe.peers.PeerFigures.cpuNs;
import static floe.peers.PeerFigures.ms;
import static floe.peers.PeerFigures.need;
import static floe.peers.PeerFigures.rootCause;

/**
 * Debezium's MariaDB (or MySQL) connector in its embedded engine, as floe's benchmark peer (bench/peers/debezium.ts).
 * One phase per run, given as key=value arguments:
 *
 *   phase=snapshot   the initial snapshot of database.table (snapshot.mode initial_only); stops when it
 *                    has seen `expected` rows
 *   phase=streaming  streams from binlog file/pos, and gtids (MariaDB's GTID position there; the MariaDB
 *                    connector resumes by GTID) (the position floe's CDC phase started at, seeded into
 *                    the offset store; snapshot.mode recovery rebuilds the in-memory schema history from
 *                    the live table first); stops when it has seen `expected` row changes
 *
 * The consumer is a no-op that counts the table's change records (SourceRecord, no serialization:
 * Debezium's cheapest output) and marks them processed. Rate window: first record to the last
 * expected one. Prints one JSON line on stdout; Debezium's own logging goes to stderr (warn and up).
 */
public final class DebeziumBench {
    private DebeziumBench() {}

    public static void main(String[] argv) {
        try {
            run(argv);
        } catch (Throwable t) {
            // an exception here must not leave the JVM waiting on Debezium's threads
            PeerFigures.fail("debezium", t);
        }
    }

    private static void run(String[] argv) throws Exception {
        Map<String, String> a = PeerFigures.arguments(argv);
        String phase = need(a, "phase");
        if (!phase.equals("snapshot") && !phase.equals("streaming")) throw new IllegalArgumentException("phase must be snapshot or streaming, found " + phase);
        String database = need(a, "database");
        String table = need(a, "table");
        long expected = Long.parseLong(need(a, "expected"));
        long timeoutMs = Long.parseLong(a.getOrDefault("timeoutMs", "600000"));
        // after the expected count, keep consuming this long: a record too many then shows (the test sets it)
        long settleMs = Long.parseLong(a.getOrDefault("settleMs", "0"));
        String prefix = "floebench";
        String engineName = "floe-bench-debezium";

        Properties p = new Properties();
        p.setProperty("name", engineName);
        // MariaDB has its own connector since Debezium 2.7 (the MySQL connector refuses MariaDB 10.x/11.x)
        String flavor = a.getOrDefault("flavor", "mariadb");
        if (!flavor.equals("mariadb") && !flavor.equals("mysql")) throw new IllegalArgumentException("flavor must be mariadb or mysql, found " + flavor);
        String connectorPackage = "io.debezium.connector." + flavor;
        String connectorClass = connectorPackage + (flavor.equals("mariadb") ? ".MariaDbConnector" : ".MySqlConnector");
        p.setProperty("connector.class", connectorClass);
        p.setProperty("offset.storage", SeededOffsetStore.class.getName());
        p.setProperty("offset.flush.interval.ms", "10000");
        p.setProperty("schema.history.internal", "io.debezium.relational.history.MemorySchemaHistory");
        p.setProperty("topic.prefix", prefix);
        p.setProperty("database.hostname", need(a, "host"));
        p.setProperty("database.port", need(a, "port"));
        p.setProperty("database.user", need(a, "user"));
        p.setProperty("database.password", a.getOrDefault("password", ""));
        p.setProperty("database.server.id", a.getOrDefault("serverId", "4000200"));
        p.setProperty("database.ssl.mode", flavor.equals("mariadb") ? "disable" : "disabled"); // floe's sessions use no TLS either
        p.setProperty("database.include.list", database);
        p.setProperty("table.include.list", database + "." + table);
        p.setProperty("include.schema.changes", "false");
        p.setProperty("tombstones.on.delete", "false"); // one record per row change, as floe counts them
        if (phase.equals("snapshot")) {
            p.setProperty("snapshot.mode", "initial_only");
        } else {
            p.setProperty("snapshot.mode", "recovery");
            Map<String, Object> offset = new HashMap<>();
            offset.put("file", need(a, "file"));
            offset.put("pos", Long.parseLong(need(a, "pos")));
            // the MariaDB connector resumes by GTID position (MariaDB's "domain-server-sequence" list)
            if (a.containsKey("gtids")) offset.put("gtids", a.get("gtids"));
            SeededOffsetStore.engineName = engineName;
            SeededOffsetStore.partition = Map.of("server", prefix);
            SeededOffsetStore.offset = offset;
        }

        String topic = prefix + "." + database + "." + table;
        CountDownLatch done = new CountDownLatch(1);
        AtomicReference<String> failure = new AtomicReference<>();
        AtomicLong tableRecords = new AtomicLong();
        AtomicLong otherRecords = new AtomicLong(); // heartbeats, transaction metadata...
        long[] at = {0, 0, 0, 0}; // first record ns, last record ns, CPU at first, CPU at last
        long startNs = System.nanoTime();

        DebeziumEngine.ChangeConsumer<RecordChangeEvent<SourceRecord>> consumer = (List<RecordChangeEvent<SourceRecord>> records, DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer) -> {
            for (RecordChangeEvent<SourceRecord> r : records) {
                SourceRecord s = r.record();
                if (s.value() != null && topic.equals(s.topic())) {
                    long n = tableRecords.incrementAndGet();
                    if (n == 1) {
                        at[0] = System.nanoTime();
                        at[2] = cpuNs();
                    }
                    if (n == expected) {
                        at[1] = System.nanoTime();
                        at[3] = cpuNs();
                        done.countDown();
                    }
                } else {
                    otherRecords.incrementAndGet();
                }
                committer.markProcessed(r);
            }
            committer.markBatchFinished();
        };
        DebeziumEngine<RecordChangeEvent<SourceRecord>> engine = DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
                .using(p)
                .notifying(consumer)
                .using((boolean success, String message, Throwable error) -> {
                    if (!success || done.getCount() > 0) failure.compareAndSet(null, "engine stopped" + (success ? "" : " with an error") + ": " + message + (error != null ? " (" + rootCause(error) + ")" : ""));
                    done.countDown();
                })
                .build();
        ExecutorService executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "debezium-engine");
            t.setDaemon(true);
            return t;
        });
        executor.execute(engine);
        boolean finished = done.await(timeoutMs, TimeUnit.MILLISECONDS);
        if (finished && settleMs > 0) Thread.sleep(settleMs);
        long endNs = System.nanoTime();
        long[] counts = {tableRecords.get(), otherRecords.get()};
        try {
            engine.close();
        } catch (IllegalStateException alreadyStopped) {
            // the engine failed and stopped itself: its message is in `failure`
        }
        executor.shutdown();
        executor.awaitTermination(30, TimeUnit.SECONDS);

        String error = failure.get();
        if (!finished) error = "timed out after " + timeoutMs + " ms";
        if (error == null && counts[0] != expected) error = "counted " + counts[0] + " records, expected " + expected;
        PeerFigures out = new PeerFigures()
                .text("peer", "debezium")
                .text("version", String.valueOf(Class.forName(connectorPackage + ".Module").getMethod("version").invoke(null)))
                .text("connector", connectorClass)
                .text("phase", phase)
                .number("expected", expected)
                .number("count", counts[0])
                .number("otherRecords", counts[1]);
        if (counts[0] > 0 && at[1] > 0) {
            out.json("startToFirstMs", ms(at[0] - startNs)).json("firstToLastMs", ms(at[1] - at[0])).json("windowCpuMs", ms(at[3] - at[2]));
        }
        out.json("totalMs", ms(endNs - startNs)).json("processCpuMs", ms(cpuNs())).number("peakRssBytes", PeerFigures.peakRssBytes());
        if (error != null) out.text("error", error);
        // Debezium and Kafka leave non-daemon threads behind; the figures are out, so end here
        out.printAndExit(error == null);
    }
}
