/**
 * The interop suite's results: what each engine, through each catalog, made of each table floe
 * wrote. The suite writes them (engines/interop-results.json) after a run in which every cell was
 * read and none failed; `npm run engines:matrix` (scripts/engines-matrix.ts) renders them into
 * README's compatibility matrix. Nothing in the file is typed by hand.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CatalogKind, Engine } from './engines.js';

export type CellResult =
  /** The engine's rows equal floe scan's (and so MySQL's). */
  | { result: 'identical' }
  /** The engine refused the table with this message, a limitation it documents. */
  | { result: 'refused'; message: string }
  /** A known engine bug: the engine returned other rows than the table holds. */
  | { result: 'wrong-rows'; bug: string };

export interface MatrixColumn {
  engine: Engine;
  catalog: CatalogKind;
  /** Where the table's files are: a local directory (absent), or an S3 bucket (moto standing in for MinIO). */
  storage?: 's3';
  /** How the engine reaches the table through that catalog. */
  via: string;
}

export interface MatrixRow {
  formatVersion: 2 | 3;
  table: string;
  /** What the table exercises: its partition spec and delete kinds as read from it, then the rest. */
  features: string[];
  /** By `<engine>/<catalog>`. */
  cells: Record<string, CellResult>;
}

export interface MaintenanceResult {
  formatVersion: 2 | 3;
  /** Spark's operations that committed (at least once) while floe streamed (sorted). */
  operations: string[];
  /** Restarts of floe the test made (after its snapshots had expired). */
  restarts: number;
  /** Readers whose rows equal MySQL's at the end. */
  readers: string[];
}

export interface InteropResults {
  /** Engine → the versions that ran (engines/versions.env). */
  versions: Record<string, string>;
  columns: MatrixColumn[];
  rows: MatrixRow[];
  maintenance?: MaintenanceResult[];
}

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const RESULTS_FILE = process.env.FLOE_ENGINES_RESULTS || join(REPO_ROOT, 'engines', 'interop-results.json');

export const COLUMNS: MatrixColumn[] = [
  { engine: 'spark', catalog: 'filesystem', via: 'Hadoop catalog' },
  { engine: 'spark', catalog: 'rest', via: 'REST catalog' },
  { engine: 'spark', catalog: 'sql', via: 'JdbcCatalog' },
  { engine: 'trino', catalog: 'rest', via: '`rest` catalog' },
  { engine: 'trino', catalog: 'sql', via: '`jdbc` catalog' },
  { engine: 'duckdb', catalog: 'filesystem', via: '`iceberg_scan`' },
  { engine: 'duckdb', catalog: 'rest', via: '`ATTACH … (TYPE iceberg)`' },
  { engine: 'pyiceberg', catalog: 'filesystem', via: '`StaticTable`' },
  { engine: 'pyiceberg', catalog: 'rest', via: '`RestCatalog`' },
  { engine: 'pyiceberg', catalog: 'sql', via: '`SqlCatalog`' },
  { engine: 'iceberg-java', catalog: 'filesystem', via: '`HadoopTables`' },
  // On S3, each engine set up from its own file in catalog/ (engines/lib/engine_configs.py), through
  // its own S3 client.
  { engine: 'spark', catalog: 'rest', storage: 's3', via: '`spark-defaults.rest.conf`, S3FileIO' },
  { engine: 'spark', catalog: 'sql', storage: 's3', via: '`spark-defaults.jdbc.conf`, S3FileIO' },
  { engine: 'trino', catalog: 'rest', storage: 's3', via: '`floe.properties`, native S3' },
  { engine: 'trino', catalog: 'sql', storage: 's3', via: '`floe_jdbc.properties`, native S3' },
  { engine: 'duckdb', catalog: 'rest', storage: 's3', via: '`attach-rest.sql`, httpfs with vended credentials' },
  { engine: 'duckdb', catalog: 'sql', storage: 's3', via: "`iceberg-scan.sql`'s S3 secret, `iceberg_scan` of the metadata file the SQL catalog names" },
  { engine: 'pyiceberg', catalog: 'rest', storage: 's3', via: '`.pyiceberg.yaml` `floe`, pyarrow S3' },
  { engine: 'pyiceberg', catalog: 'sql', storage: 's3', via: '`.pyiceberg.yaml` `floe_sql`, pyarrow S3' },
  { engine: 'iceberg-java', catalog: 'rest', storage: 's3', via: "`RESTCatalog` with the Spark file's catalog properties, S3FileIO" },
  { engine: 'iceberg-java', catalog: 'sql', storage: 's3', via: "`JdbcCatalog` with the Spark file's catalog properties, S3FileIO" },
];

function cellKey(engine: Engine, catalog: CatalogKind, storage?: 's3'): string {
  return storage === undefined ? `${engine}/${catalog}` : `${engine}/${catalog}/${storage}`;
}

export function columnKey(column: MatrixColumn): string {
  return cellKey(column.engine, column.catalog, column.storage);
}

/** Engine → "name version" from engines/versions.env (the versions the run used). */
export function engineVersions(): Record<string, string> {
  const env = Object.fromEntries(
    readFileSync(join(REPO_ROOT, 'engines', 'versions.env'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#') && l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1).replace(/^"|"$/g, '')]),
  );
  return {
    spark: `Spark ${env.PYSPARK_VERSION} + Iceberg ${env.ICEBERG_SPARK_RUNTIME?.split(':').pop()}`,
    trino: `Trino ${env.TRINO_VERSION}`,
    duckdb: `DuckDB ${env.DUCKDB_VERSION} (iceberg extension ${env.DUCKDB_EXTENSIONS_VERSION})`,
    pyiceberg: `PyIceberg ${env.PYICEBERG_VERSION}`,
    'iceberg-java': `Iceberg Java ${env.ICEBERG_JAVA_VERSION} (IcebergGenerics)`,
  };
}

export async function writeResults(results: InteropResults): Promise<void> {
  await writeFile(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
}

export function readResults(file = RESULTS_FILE): InteropResults {
  return JSON.parse(readFileSync(file, 'utf8')) as InteropResults;
}
