/**
 * The two reads `floe verify` makes of a chunk on the server, each at one consistent point placed in
 * the binlog (read-point.ts): its checksum (canonical-sql.ts: the row count and the sum of the rows'
 * 64-bit hashes; the rows never leave the server), and — for a chunk whose checksum differs, or that
 * changed around the read — its rows, in the value model the snapshot converters produce.
 *
 * Each read is one short transaction on the caller's connection (a chunk: no long read view, no
 * lock). The caller runs several connections side by side for parallelism.
 */
import type { Row } from '../../../model/values.js';
import { FloeError } from '../../../util/errors.js';
import type { MysqlClient } from '../client.js';
import type { ServerDialect } from '../dialect.js';
import type { ServerIdentity } from '../offset/offset.js';
import { chunkCondition, chunkSql, type Chunk } from '../snapshot/chunk.js';
import { createSnapshotRowConverter } from '../snapshot/snapshot-values.js';
import { readConsistentSnapshotPoint, readWatermark } from '../snapshot/watermark.js';
import { qualifiedTable } from '../schema/table-schema.js';
import type { MappedTable } from '../schema/type-mapping.js';
import { checksumSql, type CanonicalColumn } from './canonical-sql.js';
import type { ReadPoint } from './read-point.js';

/** The server, as a chunk read needs it. */
export interface ReadServer {
  readonly dialect: ServerDialect;
  readonly identity: ServerIdentity;
}

export interface ChunkChecksum {
  readonly rows: bigint;
  /** Sum of the rows' 64-bit hashes (exact). */
  readonly sum: bigint;
  readonly point: ReadPoint;
}

/** Runs `read` inside a consistent-snapshot transaction and places it in the binlog. */
async function atReadPoint<T>(client: MysqlClient, server: ReadServer, read: () => Promise<T>): Promise<{ value: T; point: ReadPoint }> {
  if (server.dialect.flavor === 'mariadb') {
    await client.query('START TRANSACTION WITH CONSISTENT SNAPSHOT');
    try {
      const low = await readConsistentSnapshotPoint(client, server.identity);
      return { value: await read(), point: { low, high: low, exact: true } };
    } finally {
      // a read-only transaction: COMMIT only ends it (and the server ends it with the connection)
      await client.query('COMMIT').catch(() => {});
    }
  }
  const low = await readWatermark(client, server.dialect, server.identity);
  await client.query('START TRANSACTION WITH CONSISTENT SNAPSHOT');
  try {
    const high = await readWatermark(client, server.dialect, server.identity);
    return { value: await read(), point: { low, high, exact: false } };
  } finally {
    await client.query('COMMIT').catch(() => {});
  }
}

/** A chunk's checksum over `columns` (canonical-sql.ts), at one read point. */
export async function readChunkChecksum(client: MysqlClient, server: ReadServer, table: MappedTable, chunk: Chunk, columns: readonly CanonicalColumn[]): Promise<ChunkChecksum> {
  const sql = checksumSql(columns, qualifiedTable(table.schema.id), chunkCondition(table, chunk));
  const { value, point } = await atReadPoint(client, server, () => client.queryArrays(sql));
  const row = value.rows[0];
  if (!row) throw new FloeError('source.mysql.verify', 'source', `the checksum of ${chunk.table.database}.${chunk.table.table} chunk ${chunk.index} returned no row: expected one (COUNT, SUM)`);
  return { rows: BigInt(String(row[0])), sum: BigInt(String(row[1])), point };
}

/** A chunk's rows (value model, column order of `table`), at one read point. */
export async function readChunkRows(client: MysqlClient, server: ReadServer, table: MappedTable, chunk: Chunk): Promise<{ rows: Row[]; point: ReadPoint }> {
  const convert = createSnapshotRowConverter(table);
  const sql = chunkSql(table, chunk, server.dialect.flavor);
  const { value, point } = await atReadPoint(client, server, async () => {
    const rows: Row[] = [];
    for await (const batch of client.streamBatches(sql)) for (const raw of batch) rows.push(convert(raw));
    return rows;
  });
  return { rows: value, point };
}
