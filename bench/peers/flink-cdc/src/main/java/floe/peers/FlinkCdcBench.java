package floe.peers;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.cdc.connectors.mysql.source.MySqlSource;
import org.apache.flink.cdc.connectors.mysql.table.StartupOptions;
import org.apache.flink.cdc.debezium.DebeziumDeserializationSchema;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.util.Collector;
import org.apache.kafka.connect.source.SourceRecord;

import static floe.peers.PeerFigures.cpuNs;
import static floe.peers.PeerFigures.ms;
import static floe.peers.PeerFigures.need;

/**
 * Flink CDC's MySqlSource (flink-connector-mysql-cdc) as floe's benchmark peer (bench/peers/flink-cdc.ts):
 * its parallel, lock-free snapshot of database.table (startup mode `snapshot`, which makes the
 * source bounded: the job ends when every chunk is read) in a local mini-cluster of `parallelism`
 * slots, into a discarding sink. Its chunks are DBLog-style, as floe's: each read between a low
 * and a high binlog watermark.
 *
 * The deserializer counts the table's records and emits nothing else (Flink CDC's cheapest output:
 * no JSON, as Debezium's peer takes SourceRecords without serializing). Rate window: first record
 * to the last expected one; the JSON line also has the job's whole time. Arguments key=value: host,
 * port, user, password, database, table, expected, parallelism (2), splitSize (8096, Flink CDC's
 * default chunk size), serverIds (a range of at least `parallelism` ids), pollIntervalMs (Debezium's
 * poll.interval.ms; its default when absent), timeoutMs.
 */
public final class FlinkCdcBench {
    private FlinkCdcBench() {}

    /** Shared by the mini-cluster's readers: the job runs in this JVM and its classes load from the application's class path. */
    static final AtomicLong RECORDS = new AtomicLong();
    static final long[] AT = {0, 0, 0, 0}; // first record ns, expected-th record ns, CPU at first, CPU at expected-th
    static volatile long expected;

    /** Counts each row record (a snapshot read), and emits nothing. */
    static final class CountingDeserializer implements DebeziumDeserializationSchema<Long> {
        private static final long serialVersionUID = 1L;

        @Override
        public void deserialize(SourceRecord record, Collector<Long> out) {
            if (record.value() == null) return;
            long n = RECORDS.incrementAndGet();
            if (n == 1) {
                AT[0] = System.nanoTime();
                AT[2] = cpuNs();
            }
            if (n == expected) {
                AT[1] = System.nanoTime();
                AT[3] = cpuNs();
            }
        }

        @Override
        public TypeInformation<Long> getProducedType() {
            return Types.LONG;
        }
    }

    public static void main(String[] argv) {
        try {
            run(argv);
        } catch (Throwable t) {
            PeerFigures.fail("flink-cdc", t);
        }
    }

    /**
     * The server's offset from UTC now. Flink CDC refuses to start unless its serverTimeZone matches
     * the server's (MySqlValidator.checkTimeZone); the bench's servers run in the test's time zone.
     */
    private static String serverOffset(String host, String port, String user, String password) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:mysql://" + host + ":" + port + "/?useSSL=false&allowPublicKeyRetrieval=true", user, password);
                Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT TIME_TO_SEC(TIMEDIFF(NOW(), UTC_TIMESTAMP()))")) {
            r.next();
            return ZoneOffset.ofTotalSeconds(r.getInt(1)).getId().replace("Z", "+00:00");
        }
    }

    private static void run(String[] argv) throws Exception {
        Map<String, String> a = PeerFigures.arguments(argv);
        String host = need(a, "host");
        String port = need(a, "port");
        String user = need(a, "user");
        String password = a.getOrDefault("password", "");
        String database = need(a, "database");
        String table = need(a, "table");
        expected = Long.parseLong(need(a, "expected"));
        int parallelism = Integer.parseInt(a.getOrDefault("parallelism", "2"));
        int splitSize = Integer.parseInt(a.getOrDefault("splitSize", "8096"));
        long timeoutMs = Long.parseLong(a.getOrDefault("timeoutMs", "600000"));
        String serverIds = a.getOrDefault("serverIds", "4000300-4000309");

        // Debezium's change-event queue, under each chunk's read: poll.interval.ms is how long a
        // poll waits for a full batch (Debezium 1.9 default 500 ms); given only when asked
        java.util.Properties debezium = new java.util.Properties();
        if (a.containsKey("pollIntervalMs")) debezium.setProperty("poll.interval.ms", a.get("pollIntervalMs"));

        long startNs = System.nanoTime();
        MySqlSource<Long> source = MySqlSource.<Long>builder()
                .hostname(host)
                .port(Integer.parseInt(port))
                .username(user)
                .password(password)
                .databaseList(database)
                .tableList(database + "." + table)
                .serverId(serverIds)
                .serverTimeZone(serverOffset(host, port, user, password))
                .startupOptions(StartupOptions.snapshot())
                .splitSize(splitSize)
                .debeziumProperties(debezium)
                .deserializer(new CountingDeserializer())
                .build();

        Configuration conf = new Configuration();
        conf.set(RestOptions.BIND_PORT, "0"); // no fixed web port: a second bench on the machine must not clash
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(parallelism, conf);
        // the snapshot's split assigner finishes only at a completed checkpoint after its last chunk
        // (MySqlSnapshotSplitAssigner): without checkpoints the bounded job never ends. The interval
        // adds at most this much to totalMs, nothing to the first-to-last window.
        env.enableCheckpointing(1000);
        env.fromSource(source, WatermarkStrategy.noWatermarks(), "mysql-cdc").setParallelism(parallelism).addSink(new DiscardingSink<>()).setParallelism(parallelism);

        String error = null;
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(timeoutMs);
            } catch (InterruptedException stopped) {
                return;
            }
            PeerFigures.fail("flink-cdc", new IllegalStateException("timed out after " + timeoutMs + " ms, at " + RECORDS.get() + " of " + expected + " records"));
        }, "flink-cdc-bench-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        try {
            env.execute("floe bench: Flink CDC snapshot");
        } catch (Exception e) {
            error = "the job failed: " + PeerFigures.rootCause(e);
        }
        watchdog.interrupt();
        long endNs = System.nanoTime();
        long count = RECORDS.get();
        if (error == null && count != expected) error = "counted " + count + " records, expected " + expected;

        PeerFigures out = new PeerFigures()
                .text("peer", "flink-cdc")
                .text("version", versionOf(MySqlSource.class) + " on Flink " + versionOf(StreamExecutionEnvironment.class))
                .text("connector", MySqlSource.class.getName())
                .text("phase", "snapshot")
                .number("parallelism", parallelism)
                .number("expected", expected)
                .number("count", count);
        if (count > 0 && AT[1] > 0) {
            out.json("startToFirstMs", ms(AT[0] - startNs)).json("firstToLastMs", ms(AT[1] - AT[0])).json("windowCpuMs", ms(AT[3] - AT[2]));
        }
        out.json("totalMs", ms(endNs - startNs)).json("processCpuMs", ms(cpuNs())).number("peakRssBytes", PeerFigures.peakRssBytes());
        if (error != null) out.text("error", error);
        out.printAndExit(error == null);
    }

    /** The version in the jar's file name (flink-connector-mysql-cdc-3.2.0.jar): the jars carry no Implementation-Version. */
    private static String versionOf(Class<?> c) {
        String path = c.getProtectionDomain().getCodeSource().getLocation().getPath();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("-([0-9][0-9A-Za-z.]*)\\.jar$").matcher(path);
        return m.find() ? m.group(1) : "?";
    }
}
