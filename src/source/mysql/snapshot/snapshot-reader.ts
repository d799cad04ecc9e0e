/**
 * The lock-free chunked snapshot (DBLog step 1, docs/seeds/seed-000.txt; Flink CDC `MySqlSnapshotSplitReadTask` +
 * `SnapshotSplitReader.pollWithBuffer`). For each chunk, on its own connection:
 *
 *   low watermark → SELECT the chunk (streamed) → high watermark → backfill: read the binlog window
 *   (low, high] and apply the changes whose key falls in the chunk's range to the chunk's rows
 *   (upsert/delete by key) → emit the rows with the high watermark.
 *
 * The rows are then exactly the chunk's content at the high watermark: the SELECT saw every
 * transaction committed before the low watermark, maybe some after it, none after the high one; the
 * window replays, in order, every transaction that may be missing or partially seen, and the last
 * change of a key wins (full row images), so replaying one the SELECT already saw is harmless.
 *
 * Low watermark: on MariaDB the chunk is read inside `START TRANSACTION WITH CONSISTENT SNAPSHOT`
 * and the low watermark is the binlog position of that read view (`binlog_snapshot_file/position`):
 * exact, and immune to the window between binlog write and engine commit. On MySQL it is the
 * dialect's status statement before an autocommit SELECT (as Flink CDC); a transaction written to the
 * binlog before that statement but not yet committed in InnoDB when the SELECT starts would be missed
 * (MySQL orders engine commits after the binlog flush; the window is a group commit wide). The
 * transaction is short (one chunk): no global read lock, no long transaction.
 *
 * `backfill: false` skips the window read and reports the LOW watermark as the chunk's high
 * watermark, so the hand-over replays everything after it (Flink CDC backfill.skip): the delivery
 * guarantee weakens to at-least-once — changes already contained in the rows are delivered again and
 * absorbed by upserts downstream. Keyless chunks (no primary key) are never backfilled (no identity to
 * upsert on), so their rows must be the table exactly at the low watermark: on MariaDB the
 * consistent-snapshot point gives that; on MySQL the read view is opened under a brief table lock
 * (locked-read-view.ts), and where that lock is refused the chunk is at-least-once (logged).
 *
 * Memory: one chunk's rows per worker (backfill needs them keyed by primary key), plus at most
 * `parallelism` finished chunks waiting for the consumer. Never a whole table.
 */
import type { Row, Value } from '../../../model/values.js';
import { toHex } from '../../../model/values.js';
import { FloeError, errorMessage } from '../../../util/errors.js';
import { type Chunk, chunkContainsKey, chunkId, chunkSql, serializeChunk } from './chunk.js';
import { connectMysql, mysqlErrorCode, type MysqlClient, type MysqlConnectionConfig } from '../client.js';
import type { ServerDialect } from '../dialect.js';
import type { CascadeDeleteChange, ChunkDescriptor, TableRef } from '../events.js';
import type { KeyComparator, KeyTuple } from './key-compare.js';
import { compareOffsets, type BinlogOffset, type ServerIdentity } from '../offset/offset.js';
import { createSnapshotRowConverter } from './snapshot-values.js';
import type { MappedTable } from '../schema/type-mapping.js';
import { readConsistentSnapshotPoint, readWatermark } from './watermark.js';
import { openLockedReadView } from './locked-read-view.js';
import { tableKey } from '../schema/table-schema.js';
import { BinlogReader } from '../binlog/binlog-reader.js';
import type { BinlogDecoding } from '../binlog/raw-transactions.js';
import { AsyncQueue } from '../binlog/binlog-queue.js';
import { changedDuringSnapshot, TableChangeGuard } from './table-change-guard.js';
import { ReadOrder } from './read-order.js';

const SUBSYSTEM = 'source.mysql.snapshot';

export interface SnapshotTable {
  readonly table: MappedTable;
  /** The table's complete chunk plan, in key order (chunk.index = position). */
  readonly chunks: readonly Chunk[];
  /** Key order of the chunk key (the source's `createKeyComparator` over the chunk key columns). */
  readonly comparator: KeyComparator;
}

export interface SnapshotReaderOptions {
  readonly connection: MysqlConnectionConfig;
  readonly dialect: ServerDialect;
  readonly identity: ServerIdentity;
  readonly tables: readonly SnapshotTable[];
  /** Chunks read at the same time, each on its own connection (default 4). */
  readonly parallelism?: number;
  /** Backfill from the binlog (default true). false: at-least-once, see the module header. */
  readonly backfill?: boolean;
  /** Ids (`chunkId`) of chunks finished in an earlier run: skipped. */
  readonly finished?: ReadonlySet<string>;
  /** Binlog decoding for the backfill reads (the same as streaming uses). */
  readonly decoding: BinlogDecoding;
  /** Replica server ids for the backfill binlog connections: serverIdBase + worker number (0-based). */
  readonly serverIdBase: number;
  /** Use the MariaDB consistent-snapshot low watermark (default: true on MariaDB). */
  readonly consistentSnapshot?: boolean;
  /**
   * Tables whose deletes cascade into `table` (ON DELETE CASCADE, cascade.ts): the backfill reads
   * their events too, so the synthetic child deletes of the window apply to the chunk's rows.
   */
  readonly cascadeTriggers?: (table: TableRef) => readonly TableRef[];
  /** Tables every chunk of which must be read before a chunk of `table` starts (read-order.ts). */
  readonly readAfter?: (table: TableRef) => readonly TableRef[];
  /** Heartbeat period of the backfill binlog connections (default: the reader's). */
  readonly heartbeatMs?: number;
  /** Where a weakened delivery guarantee is reported (a keyless table read at-least-once, and why). */
  readonly warn?: (message: string) => void;
}

export interface ChunkResult {
  readonly table: TableRef;
  readonly chunk: Chunk;
  readonly descriptor: ChunkDescriptor;
  readonly rows: Row[];
  readonly lowWatermark: BinlogOffset;
  /** The offset the rows are consistent with (= lowWatermark when not backfilled). */
  readonly highWatermark: BinlogOffset;
  readonly keyless: boolean;
  /** Binlog row changes applied by the backfill (for tests and metrics). */
  readonly backfilledChanges: number;
}

function chunkDescriptor(chunk: Chunk): ChunkDescriptor {
  return { id: chunkId(chunk), range: serializeChunk(chunk) };
}

/** Injective text of a key tuple, for Map keys (bytes as hex, numbers/bigints tagged). */
export function keyText(key: readonly Value[]): string {
  let s = '';
  for (const v of key) {
    if (v === null) s += 'n;';
    else if (typeof v === 'string') s += 's' + v.length + ':' + v + ';';
    else if (typeof v === 'number') s += 'd' + (Object.is(v, -0) ? '-0' : String(v)) + ';';
    else if (typeof v === 'bigint') s += 'l' + v.toString() + ';';
    else if (typeof v === 'boolean') s += v ? 't;' : 'f;';
    else s += 'x' + toHex(v) + ';';
  }
  return s;
}

/** Reads all unfinished chunks; yields each finished chunk once, in completion order. */
export function readSnapshot(options: SnapshotReaderOptions): AsyncIterable<ChunkResult> {
  const parallelism = Math.max(1, options.parallelism ?? 4);
  const unread: { t: SnapshotTable; table: TableRef; chunk: Chunk }[] = [];
  for (const t of options.tables) {
    for (const chunk of t.chunks) if (!options.finished?.has(chunkId(chunk))) unread.push({ t, table: t.table.schema.id, chunk });
  }
  const order = new ReadOrder(unread, options.readAfter);
  const todo = order.items;
  let next = 0;
  let cancelled = false;
  const waiting: (() => void)[] = [];
  const guard = new TableChangeGuard();
  let active = 0;
  // bounded hand-off: a worker waits while `parallelism` results are unconsumed
  const queue: AsyncQueue<ChunkResult> = new AsyncQueue<ChunkResult>(
    parallelism,
    () => {},
    () => {
      while (waiting.length) waiting.shift()!();
    },
    () => {
      cancelled = true;
      order.cancel();
      while (waiting.length) waiting.shift()!();
    },
  );
  const atLeastOnce = new Set<string>();
  const keylessRefused = (table: TableRef, why: string): void => {
    if (atLeastOnce.has(tableKey(table))) return;
    atLeastOnce.add(tableKey(table));
    options.warn?.(`${SUBSYSTEM}: ${tableKey(table)} has no primary key and its chunks are read at-least-once (a row changed while a chunk is read can reach the lake twice): ${why}`);
  };
  const worker = async (n: number): Promise<void> => {
    const client = await connectMysql(options.connection);
    // the keyless chunks' lock session (locked-read-view.ts), opened on first use
    let locker: MysqlClient | undefined;
    const session: ChunkSession = { client, locker: async () => (locker ??= await connectMysql(options.connection)), refused: keylessRefused };
    try {
      while (!cancelled) {
        const item = todo[next++];
        if (!item) return;
        await order.ready(item);
        if (cancelled) return;
        const result = await readChunkAgainIfRedefined(session, item.t, item.chunk, options, options.serverIdBase + n, guard);
        order.done(item);
        while (!cancelled && queue.size >= parallelism) await new Promise<void>((r) => waiting.push(r));
        queue.push(result);
      }
    } finally {
      // the chunk's outcome is decided; a connection that cannot close cleanly is dropped by the server
      await client.close().catch(() => {});
      await locker?.close().catch(() => {});
    }
  };
  const workers = Math.min(parallelism, todo.length);
  if (workers === 0) queue.end();
  for (let n = 0; n < workers; n++) {
    active++;
    worker(n)
      .catch((e) => {
        cancelled = true;
        order.cancel();
        queue.fail(e instanceof FloeError ? e : new FloeError(SUBSYSTEM, 'source', `snapshot chunk read failed: ${errorMessage(e)}`, { cause: e, retryable: true }));
      })
      .finally(() => {
        if (--active === 0) queue.end();
      });
  }
  return queue;
}

/** A worker's sessions: the chunk reads', and a second one for the table locks of keyless chunks. */
interface ChunkSession {
  readonly client: MysqlClient;
  locker(): Promise<MysqlClient>;
  /** A keyless chunk could not be read exactly; `why` says what to do. */
  refused(table: TableRef, why: string): void;
}

/**
 * A DDL that rebuilds the table (TRUNCATE, a copying ALTER) after a consistent snapshot began makes
 * the server refuse to read it in that snapshot (ER_TABLE_DEF_CHANGED, "Table definition has changed,
 * please retry transaction"): the chunk is read again, with new watermarks — the table as it is after
 * the DDL, whose rows and the DDL itself the binlog delivers in order around the chunk's window.
 */
async function readChunkAgainIfRedefined(session: ChunkSession, t: SnapshotTable, chunk: Chunk, options: SnapshotReaderOptions, replicaServerId: number, guard: TableChangeGuard): Promise<ChunkResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await readChunk(session, t, chunk, options, replicaServerId, guard);
    } catch (e) {
      if (mysqlErrorCode(e) === 'ER_TABLE_DEF_CHANGED' && attempt < 5) continue;
      throw changedDuringSnapshot(t.table, e) ?? e;
    }
  }
}

/** One chunk, DBLog style (see the module header). */
async function readChunk(session: ChunkSession, t: SnapshotTable, chunk: Chunk, options: SnapshotReaderOptions, replicaServerId: number, guard: TableChangeGuard): Promise<ChunkResult> {
  const client = session.client;
  const table = t.table;
  const id = table.schema.id;
  const keyless = chunk.keyless === true || table.schema.primaryKey.length === 0;
  const backfill = options.backfill !== false && !keyless;
  const keyIdx = chunk.keyColumns.map((name) => table.columns.findIndex((c) => c.column.name === name));
  const pkIdx = table.schema.primaryKey.map((name) => table.columns.findIndex((c) => c.column.name === name));
  const convert = createSnapshotRowConverter(table);
  const sql = chunkSql(table, chunk, options.dialect.flavor);
  const consistent = (options.consistentSnapshot ?? options.dialect.flavor === 'mariadb') && options.dialect.flavor === 'mariadb';

  // Rows in SELECT order; keyed by primary key only when the backfill window has changes to apply.
  const rows: Row[] = [];
  const readRows = async (): Promise<void> => {
    for await (const batch of client.streamBatches(sql)) for (const raw of batch) rows.push(convert(raw));
  };
  // a keyless chunk on MySQL: exactly the table at the low watermark, read under a table lock's read view
  const locked = keyless && !consistent && options.dialect.flavor === 'mysql' ? await openLockedReadView(client, await session.locker(), id, options.dialect, options.identity) : undefined;
  if (locked && 'refused' in locked) session.refused(id, locked.refused);
  let low: BinlogOffset;
  if (locked && 'low' in locked) {
    low = locked.low;
    try {
      await readRows();
    } finally {
      await client.query('COMMIT').catch(() => {});
    }
  } else if (consistent) {
    await client.query('START TRANSACTION WITH CONSISTENT SNAPSHOT');
    try {
      low = await readConsistentSnapshotPoint(client, options.identity);
      await readRows();
    } finally {
      // a read-only consistent-snapshot transaction: COMMIT only ends it, and the server ends it with the connection anyway
      await client.query('COMMIT').catch(() => {});
    }
  } else {
    low = await readWatermark(client, options.dialect, options.identity);
    await readRows();
  }
  const descriptor = chunkDescriptor(chunk);
  if (!backfill) {
    await guard.check(client, table);
    // the hand-over replays everything after the low watermark for this chunk: at-least-once, unless
    // the rows are exactly the table at `low` (a keyless chunk in a consistent snapshot or under a lock)
    return { table: id, chunk, descriptor, rows, lowWatermark: low, highWatermark: low, keyless, backfilledChanges: 0 };
  }
  const high = await readWatermark(client, options.dialect, options.identity);
  // a DDL up to the high watermark is visible to the server's catalog now (table-change-guard.ts)
  await guard.check(client, table);
  let result = { rows, applied: 0 };
  if (compareOffsets(low, high) < 0) {
    result = await backfillWindow(client, t, chunk, keyIdx, pkIdx, rows, low, high, options, replicaServerId);
  }
  return { table: id, chunk, descriptor, rows: result.rows, lowWatermark: low, highWatermark: high, keyless, backfilledChanges: result.applied };
}

/**
 * Applies the binlog changes of (low, high] whose chunk key lies in the chunk to the chunk's rows
 * (upsert/delete by primary key; rows keep SELECT order, new keys go last). The window's binlog
 * reader resolves its start on the worker's connection (idle meanwhile) instead of opening one.
 */
async function backfillWindow(
  client: MysqlClient,
  t: SnapshotTable,
  chunk: Chunk,
  keyIdx: number[],
  pkIdx: number[],
  rows: Row[],
  low: BinlogOffset,
  high: BinlogOffset,
  options: SnapshotReaderOptions,
  replicaServerId: number,
): Promise<{ rows: Row[]; applied: number }> {
  const id = t.table.schema.id;
  const reader = new BinlogReader({
    connection: options.connection,
    serverId: replicaServerId,
    start: { kind: 'offset', offset: low },
    stopAt: high,
    tables: [id, ...(options.cascadeTriggers?.(id) ?? []).filter((t) => t.database !== id.database || t.table !== id.table)],
    ddlDatabases: [],
    decoding: options.decoding,
    dialect: options.dialect,
    control: { client, identity: options.identity },
    heartbeatMs: options.heartbeatMs,
    progressIntervalMs: 60_000,
  });
  // the window's changes of this table, in order (the window is short: one chunk read long)
  const changes: ({ op: string; before?: Row; after?: Row } | CascadeDeleteChange)[] = [];
  for await (const e of reader) {
    if (e.kind !== 'transaction') continue;
    for (const c of e.changes) if (c.table.database === id.database && c.table.table === id.table) changes.push(c);
  }
  if (changes.length === 0) return { rows, applied: 0 };
  const byKey = new Map<string, Row>();
  for (const row of rows) byKey.set(keyText(pkIdx.map((i) => row[i]!)), row);
  const keys: KeyTuple[] = [];
  for (const c of changes) {
    if (c.before) keys.push(keyIdx.map((i) => c.before![i]!));
    if (c.after) keys.push(keyIdx.map((i) => c.after![i]!));
  }
  const bounds = [chunk.lower, chunk.upper].filter((b): b is Value[] => b !== undefined);
  if (t.comparator.needsPrepare) await t.comparator.prepare([...keys, ...bounds]);
  const inChunk = (row: Row) => chunkContainsKey(t.comparator, chunk, keyIdx.map((i) => row[i]!));
  let applied = 0;
  // RecordUtils.upsertBinlog: insert/update replace the row by key, delete removes it; changes for
  // keys outside the chunk belong to other chunks
  for (const c of changes) {
    if (c.op === 'delete-matching') {
      // a synthetic cascade delete (cascade.ts): every row of the chunk with those FK values
      applied += deleteMatchingRows(t.table, byKey, c as CascadeDeleteChange);
      continue;
    }
    if (c.before && inChunk(c.before)) {
      const k = keyText(pkIdx.map((i) => c.before![i]!));
      if (!c.after || keyText(pkIdx.map((i) => c.after![i]!)) !== k) byKey.delete(k);
      applied++;
    }
    if (c.after && inChunk(c.after)) {
      byKey.set(keyText(pkIdx.map((i) => c.after![i]!)), c.after);
      applied++;
    }
  }
  return { rows: [...byKey.values()], applied };
}

/** Removes the rows whose `change.columns` equal `change.values`; returns how many. */
function deleteMatchingRows(table: MappedTable, byKey: Map<string, Row>, change: CascadeDeleteChange): number {
  const idx = change.columns.map((name) => table.columns.findIndex((c) => c.column.name.toLowerCase() === name.toLowerCase()));
  if (idx.some((i) => i < 0)) return 0;
  const wanted = keyText(change.values);
  let n = 0;
  for (const [k, row] of byKey) {
    if (keyText(idx.map((i) => row[i]!)) === wanted) {
      byKey.delete(k);
      n++;
    }
  }
  return n;
}
