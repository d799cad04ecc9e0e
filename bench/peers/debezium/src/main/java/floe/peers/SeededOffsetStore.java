package floe.peers;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.runtime.WorkerConfig;
import org.apache.kafka.connect.storage.MemoryOffsetBackingStore;

/**
 * An in-memory offset store that starts with one offset: the binlog position the benchmark wants
 * Debezium to stream from (the position floe's CDC phase started at). Debezium then resumes there as
 * it would after a restart, instead of snapshotting or starting at the binlog's end. The key and value
 * are serialized exactly as the embedded engine's OffsetStorageWriter does (JSON, no schemas, key
 * [engine name, source partition]), so its OffsetStorageReader finds them.
 */
public class SeededOffsetStore extends MemoryOffsetBackingStore {
    /** Set by DebeziumBench before the engine starts (the engine instantiates this class itself). */
    static volatile String engineName;
    static volatile Map<String, Object> partition;
    static volatile Map<String, Object> offset;

    @Override
    public void configure(WorkerConfig config) {
        super.configure(config);
        if (engineName == null || partition == null || offset == null) return;
        JsonConverter keys = new JsonConverter();
        keys.configure(Map.of("schemas.enable", "false"), true);
        JsonConverter values = new JsonConverter();
        values.configure(Map.of("schemas.enable", "false"), false);
        byte[] key = keys.fromConnectData(engineName, null, Arrays.asList(engineName, partition));
        byte[] value = values.fromConnectData(engineName, null, offset);
        data.put(ByteBuffer.wrap(key), ByteBuffer.wrap(value));
    }

    @Override
    public Set<Map<String, Object>> connectorPartitions(String connectorName) {
        return partition == null ? Set.of() : Set.of(partition);
    }
}
