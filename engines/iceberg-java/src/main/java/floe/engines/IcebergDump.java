package floe.engines;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.io.Closeable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import com.fasterxml.jackson.databind.JsonNode;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.JsonUtil;

/**
 * Dumps an Iceberg table with Iceberg's own generic reader ({@code IcebergGenerics.read}, which applies
 * equality deletes, position deletes and deletion vectors, and fills columns added later with their
 * initial-default). Prints one JSON array per row, the values in the table schema's column order in an
 * exact, type-directed form that engines/lib/floe_json.py turns into floe scan's JSON:
 * longs as integers, floats and doubles as the Java text of the value, decimals as the unscaled integer
 * (a string, so no digit is lost), dates as epoch days, times as microseconds of the day, timestamps as
 * microseconds (nanoseconds for the _ns types) since the epoch, binary, fixed as hex, structs and lists
 * as arrays, maps as arrays of [key, value].
 *
 * <p>Usage: IcebergDump (table directory | path/to/vN.metadata.json | catalog request). A catalog
 * request is one line of JSON, {@code {"catalog": name, "properties": {...}, "namespace": [...],
 * "table": name}}: the table is loaded through {@code CatalogUtil.buildIcebergCatalog} with those
 * Iceberg catalog properties (a REST or JDBC catalog, S3FileIO on S3 — the reader's own clients), as
 * an application configures Iceberg. First line on stdout: the metadata file that was read, prefixed
 * with "#metadata ". {@code IcebergDump --serve} reads one such argument per line on stdin and answers
 * each in turn (see {@link #serve}).
 */
public final class IcebergDump {
  private static final LocalDateTime EPOCH = LocalDateTime.of(1970, 1, 1, 0, 0);
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private IcebergDump() {}

  public static void main(String[] args) throws Exception {
    BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8));
    if (args.length == 1 && args[0].equals("--serve")) {
      serve(out);
      return;
    }
    if (args.length != 1) {
      System.err.println("usage: IcebergDump <table directory | metadata.json> | --serve");
      System.exit(2);
    }
    dump(args[0], out);
    out.flush();
  }

  /**
   * One JVM for many reads (a JVM start costs seconds): each line on stdin is a table directory or
   * metadata file; each answer is the dump's lines, then "#end ok", or "#end refused " and the
   * exception on one line.
   */
  private static void serve(BufferedWriter out) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isEmpty()) continue;
      StringWriter buffer = new StringWriter();
      BufferedWriter rows = new BufferedWriter(buffer);
      String end;
      try {
        dump(line, rows);
        rows.flush();
        end = "#end ok";
      } catch (Throwable e) {
        buffer = new StringWriter();
        end = "#end refused " + e.toString().replace('\n', ' ').replace('\r', ' ');
      }
      out.write(buffer.toString());
      out.write(end + "\n");
      out.flush();
    }
  }

  private static void dump(String location, BufferedWriter out) throws Exception {
    if (location.startsWith("{")) {
      JsonNode request = JsonUtil.mapper().readTree(location);
      Map<String, String> properties = new HashMap<>();
      request.get("properties").fields().forEachRemaining(e -> properties.put(e.getKey(), e.getValue().asText()));
      List<String> levels = new ArrayList<>();
      request.get("namespace").forEach(n -> levels.add(n.asText()));
      Catalog catalog = CatalogUtil.buildIcebergCatalog(request.get("catalog").asText(), properties, new Configuration());
      try {
        dump(catalog.loadTable(TableIdentifier.of(Namespace.of(levels.toArray(new String[0])), request.get("table").asText())), out);
      } finally {
        if (catalog instanceof Closeable) ((Closeable) catalog).close();
      }
      return;
    }
    Configuration conf = new Configuration();
    Table table;
    if (location.endsWith(".metadata.json")) {
      table = new BaseTable(new StaticTableOperations(location, new HadoopFileIO(conf)), location);
    } else {
      // HadoopTables resolves metadata/version-hint.text the way the filesystem catalog does.
      table = new HadoopTables(conf).load(location);
    }
    dump(table, out);
  }

  private static void dump(Table table, BufferedWriter out) throws Exception {
    Schema schema = table.schema();
    out.write("#metadata " + ((HasTableOperations) table).operations().current().metadataFileLocation() + "\n");
    try (CloseableIterable<Record> rows = IcebergGenerics.read(table).build()) {
      for (Record row : rows) {
        StringBuilder line = new StringBuilder("[");
        List<Types.NestedField> fields = schema.columns();
        for (int i = 0; i < fields.size(); i++) {
          if (i > 0) line.append(',');
          write(line, fields.get(i).type(), row.getField(fields.get(i).name()));
        }
        out.write(line.append("]\n").toString());
      }
    }
  }

  private static void write(StringBuilder sb, Type type, Object v) {
    if (v == null) {
      sb.append("null");
      return;
    }
    switch (type.typeId()) {
      case BOOLEAN:
      case INTEGER:
      case LONG:
        sb.append(v);
        return;
      case FLOAT:
        string(sb, Float.toString((Float) v));
        return;
      case DOUBLE:
        string(sb, Double.toString((Double) v));
        return;
      case DECIMAL:
        string(sb, ((BigDecimal) v).setScale(((Types.DecimalType) type).scale()).unscaledValue().toString());
        return;
      case DATE:
        sb.append(((LocalDate) v).toEpochDay());
        return;
      case TIME:
        sb.append(((LocalTime) v).toNanoOfDay() / 1000);
        return;
      case TIMESTAMP:
        if (((Types.TimestampType) type).shouldAdjustToUTC()) {
          sb.append(ChronoUnit.MICROS.between(EPOCH, ((OffsetDateTime) v).withOffsetSameInstant(ZoneOffset.UTC).toLocalDateTime()));
        } else {
          sb.append(ChronoUnit.MICROS.between(EPOCH, (LocalDateTime) v));
        }
        return;
      case TIMESTAMP_NANO:
        if (((Types.TimestampNanoType) type).shouldAdjustToUTC()) {
          sb.append(ChronoUnit.NANOS.between(EPOCH, ((OffsetDateTime) v).withOffsetSameInstant(ZoneOffset.UTC).toLocalDateTime()));
        } else {
          sb.append(ChronoUnit.NANOS.between(EPOCH, (LocalDateTime) v));
        }
        return;
      case STRING:
        string(sb, v.toString());
        return;
      case UUID:
        string(sb, ((UUID) v).toString());
        return;
      case FIXED:
        string(sb, hex(v instanceof ByteBuffer ? (ByteBuffer) v : ByteBuffer.wrap((byte[]) v)));
        return;
      case BINARY:
        string(sb, hex((ByteBuffer) v));
        return;
      case STRUCT: {
        Record r = (Record) v;
        List<Types.NestedField> fs = type.asStructType().fields();
        sb.append('[');
        for (int i = 0; i < fs.size(); i++) {
          if (i > 0) sb.append(',');
          write(sb, fs.get(i).type(), r.getField(fs.get(i).name()));
        }
        sb.append(']');
        return;
      }
      case LIST: {
        Type element = type.asListType().elementType();
        sb.append('[');
        boolean first = true;
        for (Object e : (List<?>) v) {
          if (!first) sb.append(',');
          first = false;
          write(sb, element, e);
        }
        sb.append(']');
        return;
      }
      case MAP: {
        Types.MapType m = type.asMapType();
        sb.append('[');
        boolean first = true;
        for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
          if (!first) sb.append(',');
          first = false;
          sb.append('[');
          write(sb, m.keyType(), e.getKey());
          sb.append(',');
          write(sb, m.valueType(), e.getValue());
          sb.append(']');
        }
        sb.append(']');
        return;
      }
      default:
        throw new IllegalArgumentException("cannot dump a value of type " + type);
    }
  }

  private static String hex(ByteBuffer buffer) {
    ByteBuffer b = buffer.duplicate();
    StringBuilder s = new StringBuilder(b.remaining() * 2);
    while (b.hasRemaining()) {
      int x = b.get() & 0xff;
      s.append(HEX[x >>> 4]).append(HEX[x & 0xf]);
    }
    return s.toString();
  }

  private static void string(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"':
          sb.append("\\\"");
          break;
        case '\\':
          sb.append("\\\\");
          break;
        default:
          if (c < 0x20) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
      }
    }
    sb.append('"');
  }
}
