/**
 * `floe run` into a lake on S3, for the tests against a real S3-compatible server (moto, optionally
 * behind the fault proxy): a MariaDB table snapshotted and then changed while floe streams, the run
 * stopped once the lake has caught up, and checks of what it left — the lake equal to MySQL, and every
 * object the committed metadata reaches present, complete and readable.
 */
import type mysql from 'mysql2/promise';
import type { Catalog, TableIdentifier } from '../../../src/iceberg/metadata/catalog.js';
import { parseConfig } from '../../../src/config/load.js';
import type { FileIO } from '../../../src/io/file-io.js';
import type { S3Config } from '../../../src/io/s3-file-io.js';
import { readManifest } from '../../../src/iceberg/manifest/manifest.js';
import { readManifestList } from '../../../src/iceberg/manifest/manifest-list.js';
import { readFooter } from '../../support/parquet-footer.js';
import { readPuffinFooter } from '../../../src/iceberg/puffin/puffin.js';
import { parseTableMetadata } from '../../../src/iceberg/spec/table-metadata-json.js';
import { silentLogger } from '../../../src/pipeline/observe/logger.js';
import { FanOutNotifier, RecordingSink } from '../../../src/pipeline/observe/notifications.js';
import { runPipeline, type RunResult } from '../../../src/pipeline/runner.js';
import { createTestDatabase, sharedMysqlConfig } from '../../support/shared-mysql.js';
import { serverPosition, waitForCatchUp } from './catch-up.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from './lake-compare.js';

export type LakeCatalogConfig = { type: 'filesystem'; name: string } | { type: 'sql'; name: string; url: string };

export interface S3LakeRun {
  database: string;
  identifier: TableIdentifier;
  result: RunResult;
}

export interface S3LakeRunOptions {
  conn: mysql.Connection;
  /** The S3 settings floe runs with (the endpoint may be the fault proxy). */
  s3: S3Config;
  /** `s3://bucket/prefix` */
  warehouse: string;
  catalog: LakeCatalogConfig;
  /** A catalog over the same lake, used to watch for the catch-up (may go to the server directly). */
  watcher: Catalog;
  jobId: string;
  rows?: number;
  /** Called once floe streams, before the test's changes. */
  onStreaming?: () => void | Promise<void>;
}

/** A MariaDB database with one keyed table `orders` of `rows` rows. */
export async function createOrders(conn: mysql.Connection, jobId: string, rows: number): Promise<string> {
  const db = await createTestDatabase(`e2e_${jobId.replace(/[^a-z0-9]/gi, '_')}`);
  await conn.query(`CREATE TABLE \`${db}\`.orders (id BIGINT UNSIGNED PRIMARY KEY, customer VARCHAR(40) NOT NULL, amount DECIMAL(12,2), placed DATETIME(6), doc JSON, note VARBINARY(16))`);
  await conn.query(
    `INSERT INTO \`${db}\`.orders VALUES ${Array.from({ length: rows }, (_, i) => `(${i + 1}, 'c${i % 17}', ${i}.${i % 100}, '2026-01-0${1 + (i % 9)} 10:00:00.${String(i).padStart(6, '0')}', '{"n": ${i}}', ${i % 3 === 0 ? 'NULL' : `X'${(i % 256).toString(16).padStart(2, '0')}ff'`})`).join(', ')}`,
  );
  return db;
}

/** Changes while floe streams: upserts, a key change, deletes, inserts (ids from `insertFrom`). */
export async function changeOrders(conn: mysql.Connection, db: string, insertFrom = 200_000): Promise<void> {
  await conn.query(`UPDATE \`${db}\`.orders SET amount = amount + 1, note = X'00' WHERE id % 7 = 0`);
  await conn.query(`UPDATE \`${db}\`.orders SET id = ${insertFrom + 100_000} WHERE id = 5`);
  await conn.query(`DELETE FROM \`${db}\`.orders WHERE id % 11 = 0`);
  await conn.query(`INSERT INTO \`${db}\`.orders VALUES ${Array.from({ length: 50 }, (_, i) => `(${insertFrom + i}, 'late', 1.5, '1999-12-31 23:59:59.999999', '[]', X'')`).join(', ')}`);
}

// Binlog replica ids: distinct per process (pid) and per run within it, in a range no other test uses.
let runs = 0;

export interface FloeRun {
  sink: RecordingSink;
  controller: AbortController;
  running: Promise<RunResult>;
}

/** Starts `floe run` (in this process) for the database `db` into the lake on S3. */
export function startFloe(options: Pick<S3LakeRunOptions, 's3' | 'warehouse' | 'catalog' | 'jobId'>, db: string): FloeRun {
  const config = parseConfig({
    job: { id: options.jobId },
    source: { ...sharedMysqlConfig(), serverId: 700_000_000 + (process.pid % 100_000) * 8 + (runs++ % 8), include: [`${db}.*`], snapshot: { chunkSize: 50 } },
    warehouse: {
      location: options.warehouse,
      s3: { endpoint: options.s3.endpoint, region: options.s3.region ?? 'us-east-1', pathStyle: true, accessKeyId: options.s3.accessKeyId, secretAccessKey: options.s3.secretAccessKey },
    },
    catalog: options.catalog,
    commit: { intervalMs: 200, idleCheckpoints: 2 },
  });
  const controller = new AbortController();
  const sink = new RecordingSink();
  const running = runPipeline(config, { mode: 'run', signal: controller.signal, notifications: new FanOutNotifier(options.jobId, [sink], silentLogger), logger: silentLogger });
  return { sink, controller, running };
}

/** Waits for floe to stream; rejects if it ends first. */
export async function untilStreaming(run: FloeRun): Promise<void> {
  await Promise.race([run.sink.waitFor('streaming-started'), run.running.then((r) => Promise.reject(new Error(`floe ended before streaming: ${r.reason} ${String(r.error)}`)))]);
}

/** Waits until the lake has everything MySQL's binlog has now; rejects if floe ends first. */
export async function untilCaughtUp(run: FloeRun, watcher: Catalog, db: string, jobId: string): Promise<void> {
  const target = await serverPosition({ ...sharedMysqlConfig() });
  await Promise.race([
    waitForCatchUp(watcher, [{ identifier: { namespace: [db], name: 'orders' }, sourceKey: `${db}.orders` }], jobId, target, { timeoutMs: 90_000 }),
    run.running.then((r) => Promise.reject(new Error(`floe ended while streaming: ${r.reason} ${String(r.error)}`))),
  ]);
}

/** Snapshot `rows` rows, stream updates, a key change, deletes and inserts; stop when caught up. */
export async function runMysqlToS3Lake(options: S3LakeRunOptions): Promise<S3LakeRun> {
  const db = await createOrders(options.conn, options.jobId, options.rows ?? 400);
  const run = startFloe(options, db);
  try {
    await untilStreaming(run);
    await options.onStreaming?.();
    await changeOrders(options.conn, db);
    await untilCaughtUp(run, options.watcher, db, options.jobId);
    run.controller.abort();
    return { database: db, identifier: { namespace: [db], name: 'orders' }, result: await run.running };
  } finally {
    run.controller.abort();
    await run.running.catch(() => undefined);
  }
}

/** The lake table holds exactly MySQL's rows (a multiset difference, for a readable failure). */
export async function lakeVersusMysql(catalog: Catalog, db: string, identifier: TableIdentifier): Promise<{ missing: string[]; unexpected: string[]; lakeRows: number; mysqlRows: number }> {
  const lake = await lakeTableRows(catalog, identifier);
  const expected = await mysqlTableRows({ ...sharedMysqlConfig() }, db, identifier.name, lake.columns);
  return { ...multisetDifference(expected, lake.rows), lakeRows: lake.rows.length, mysqlRows: expected.length };
}

export interface ReachabilityReport {
  metadataFiles: number;
  manifestLists: number;
  manifests: number;
  dataFiles: number;
  deleteFiles: number;
  /** Every problem found: a missing object, a size that differs from what metadata records, a parse failure. */
  problems: string[];
}

/**
 * Walks everything the table's current metadata reaches — every snapshot's manifest list, each
 * manifest (its length as recorded in the list), each live data and delete file (size and record count
 * as recorded in the manifest; Parquet footers and Puffin footers parsed) — reading through `io`, which
 * should go to the store directly (not through a fault proxy). The spec's invariant: a committed
 * snapshot never refers to a file that is not fully written (spec "Commit conflict resolution and
 * retry": files are written before the commit that references them).
 */
export async function checkReachableObjects(io: FileIO, metadataLocation: string): Promise<ReachabilityReport> {
  const report: ReachabilityReport = { metadataFiles: 0, manifestLists: 0, manifests: 0, dataFiles: 0, deleteFiles: 0, problems: [] };
  const problem = (text: string) => report.problems.push(text);
  const readChecked = async (location: string, what: string, expectedSize?: bigint): Promise<Uint8Array | undefined> => {
    const size = await io.size(location);
    if (size === undefined) {
      problem(`${what} ${location} is missing`);
      return undefined;
    }
    if (expectedSize !== undefined && BigInt(size) !== expectedSize) {
      problem(`${what} ${location} has ${size} bytes, metadata records ${expectedSize}`);
      return undefined;
    }
    return io.read(location);
  };
  const metadataBytes = await readChecked(metadataLocation, 'metadata file');
  if (metadataBytes === undefined) return report;
  const metadata = parseTableMetadata(new TextDecoder().decode(metadataBytes));
  report.metadataFiles++;
  const seenManifests = new Set<string>();
  const seenFiles = new Set<string>();
  for (const snapshot of metadata.snapshots) {
    const listBytes = await readChecked(snapshot.manifestList, `manifest list of snapshot ${snapshot.snapshotId}`);
    if (listBytes === undefined) continue;
    let manifests;
    try {
      manifests = readManifestList(listBytes, snapshot.manifestList).manifests;
      report.manifestLists++;
    } catch (e) {
      problem(`manifest list ${snapshot.manifestList} does not parse: ${String(e)}`);
      continue;
    }
    for (const manifest of manifests) {
      if (seenManifests.has(manifest.path)) continue;
      seenManifests.add(manifest.path);
      const bytes = await readChecked(manifest.path, 'manifest', manifest.length);
      if (bytes === undefined) continue;
      let entries;
      try {
        entries = readManifest(bytes, manifest).entries;
        report.manifests++;
      } catch (e) {
        problem(`manifest ${manifest.path} does not parse: ${String(e)}`);
        continue;
      }
      for (const entry of entries) {
        const file = entry.dataFile;
        // A DELETED entry records a removal; the file may be gone legitimately (after expiry).
        if (entry.status === 'deleted' || seenFiles.has(file.filePath)) continue;
        seenFiles.add(file.filePath);
        const what = file.content === 'data' ? 'data file' : `${file.content} file`;
        const fileBytes = await readChecked(file.filePath, what, file.fileSizeInBytes);
        if (fileBytes === undefined) continue;
        try {
          if (file.fileFormat === 'PARQUET') {
            const footer = readFooter(fileBytes);
            if (BigInt(footer.numRows) !== file.recordCount) problem(`${what} ${file.filePath} holds ${footer.numRows} rows, its manifest records ${file.recordCount}`);
          } else if (file.fileFormat === 'PUFFIN') {
            readPuffinFooter(fileBytes, file.filePath);
          }
        } catch (e) {
          problem(`${what} ${file.filePath} does not parse: ${String(e)}`);
          continue;
        }
        if (file.content === 'data') report.dataFiles++;
        else report.deleteFiles++;
      }
    }
  }
  return report;
}
