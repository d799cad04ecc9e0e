/**
 * "floe has caught up": every table's committed offset (its `floe.source-offset`, read from the table
 * itself) has reached a binlog position taken after the last change the test made.
 */
import type { Catalog, TableIdentifier } from '../../../src/iceberg/metadata/catalog.js';
import { loadCatalogTable } from '../../../src/iceberg/table/index.js';
import { lastCommitted } from '../../../src/iceberg/checkpoint/index.js';
import { parseProgressSummary } from '../../../src/pipeline/state.js';
import { connectMysql, type MysqlConnectionConfig } from '../../../src/source/mysql/client.js';
import { detectDialect } from '../../../src/source/mysql/dialect.js';
import { compareOffsets, formatOffset, type BinlogOffset } from '../../../src/source/mysql/offset/offset.js';
import { readWatermark } from '../../../src/source/mysql/snapshot/watermark.js';

export async function serverPosition(connection: MysqlConnectionConfig): Promise<BinlogOffset> {
  const client = await connectMysql(connection);
  try {
    return await readWatermark(client, await detectDialect(client));
  } finally {
    await client.close();
  }
}

/**
 * The offset a table's last checkpoint of `jobId` records (undefined: none yet, or still snapshotting).
 * Read from the stamp alone (`parseProgressSummary`), not the snapshot state objects it may name: a
 * running floe deletes those once a newer commit no longer needs them.
 */
export async function committedOffset(catalog: Catalog, identifier: TableIdentifier, jobId: string): Promise<BinlogOffset | undefined> {
  if (!(await catalog.tableExists(identifier))) return undefined;
  const table = await loadCatalogTable(catalog, identifier);
  const last = lastCommitted(table.metadata, jobId);
  if (!last) return undefined;
  const progress = parseProgressSummary(last.sourceOffset);
  return progress.phase === 'streaming' ? progress.offset : undefined;
}

export interface WatchedTable {
  identifier: TableIdentifier;
  sourceKey: string;
}

/** Tables `tables` of MySQL database `db`, each in the lake namespace of the same name. */
export function watchedTables(db: string, tables: readonly string[]): WatchedTable[] {
  return tables.map((t) => ({ identifier: { namespace: [db], name: t }, sourceKey: `${db}.${t}` }));
}

/** Polls until every table's committed offset is at or past `target`; `check` may throw to abort. */
export async function waitForCatchUp(
  catalog: Catalog,
  tables: readonly WatchedTable[],
  jobId: string,
  target: BinlogOffset,
  options: { timeoutMs: number; check?: () => void },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    options.check?.();
    const behind: string[] = [];
    for (const t of tables) {
      const o = await committedOffset(catalog, t.identifier, jobId);
      if (!o || compareOffsets(o, target) < 0) behind.push(`${t.sourceKey} at ${o ? formatOffset(o) : '(nothing streamed yet)'}`);
    }
    if (behind.length === 0) return;
    if (Date.now() > deadline) throw new Error(`floe did not catch up with ${formatOffset(target)} within ${options.timeoutMs} ms: ${behind.join('; ')}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Until every table `db`.`tables` of job `job` has committed the binlog position `server` is at now
 * (60 s unless `timeoutMs` says otherwise); `check` may throw to abort (the run ended).
 */
export async function catchUpTables(
  lake: { catalog: Catalog; job: string; db: string; tables: readonly string[] },
  options: { server: MysqlConnectionConfig; timeoutMs?: number; check?: () => void },
): Promise<void> {
  const target = await serverPosition({ ...options.server });
  await waitForCatchUp(lake.catalog, watchedTables(lake.db, lake.tables), lake.job, target, { timeoutMs: options.timeoutMs ?? 60_000, check: options.check });
}

/** A `check` for a `floe` child process: throws once it has exited, with the tail of its output. */
export function whileRunning(p: { readonly hasExited: boolean; tail(): string }, what = 'floe run'): () => void {
  return () => {
    if (p.hasExited) throw new Error(`${what} exited:\n${p.tail()}`);
  };
}
