/**
 * How to query the demo's lake with other engines: DuckDB straight from the table directory,
 * Spark through its Hadoop catalog over the warehouse, Trino through the REST catalog that
 * `floe catalog serve` exposes (docs/design.md §7).
 */
import { isAbsolute, relative, resolve } from 'node:path';

export interface QueryHintOptions {
  /** The warehouse directory as configured (local path). */
  warehouse: string;
  namespace: string;
  /** The orders table's name in the lake. */
  ordersTable: string;
}

export function queryHints(o: QueryHintOptions): string {
  const absolute = resolve(o.warehouse);
  const rel = relative(process.cwd(), absolute) || '.';
  const shown = isAbsolute(o.warehouse) ? absolute : `./${rel}`;
  const table = `${shown}/${o.namespace}/${o.ordersTable}`;
  return `Query the lake:

  DuckDB (iceberg extension):
    duckdb -c "INSTALL iceberg; LOAD iceberg;
               SELECT status, count(*) AS orders, sum(total) AS revenue
               FROM iceberg_scan('${table}') GROUP BY status ORDER BY status;"

  Spark (Hadoop catalog over the warehouse directory):
    spark-sql --packages org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.10.0 \\
      --conf spark.sql.extensions=org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions \\
      --conf spark.sql.catalog.floe=org.apache.iceberg.spark.SparkCatalog \\
      --conf spark.sql.catalog.floe.type=hadoop \\
      --conf spark.sql.catalog.floe.warehouse=file://${absolute}
    spark-sql> SELECT * FROM floe.${o.namespace}.${o.ordersTable} ORDER BY id DESC LIMIT 5;

  Trino (through floe's REST catalog):
    npx floe catalog serve            # serves ${shown} as an Iceberg REST catalog on :8181
    # etc/catalog/floe.properties
    connector.name=iceberg
    iceberg.catalog.type=rest
    iceberg.rest-catalog.uri=http://localhost:8181
    trino> SELECT * FROM floe.${o.namespace}.${o.ordersTable} LIMIT 5;

  floe itself:
    npx floe status                   # rows, checkpoint, binlog offset and lag per table
    npx floe scan ${table} --limit 3
`;
}
