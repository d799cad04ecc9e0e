/**
 * Watermarks: the server's current binlog end as a `BinlogOffset` (file, position, GTID state,
 * server identity). DBLog brackets every chunk SELECT with a low and a high watermark (docs/seeds/seed-000.txt:
 * Flink CDC's `DebeziumUtils.currentBinlogOffset` runs `SHOW MASTER STATUS`).
 *
 * The statements per flavor live in the dialect (`dialect.ts`): `SHOW BINARY LOG STATUS` on MySQL
 * 8.4+, `SHOW MASTER STATUS` elsewhere; on MySQL the status row carries Executed_Gtid_Set read
 * together with File/Position; on MariaDB `BINLOG_GTID_POS(file, pos)` gives the GTID position of
 * exactly that file/position. This module adds the server identity and returns offsets.
 *
 * MariaDB consistent-snapshot point: inside `START TRANSACTION WITH CONSISTENT SNAPSHOT` the status
 * variables `binlog_snapshot_file` / `binlog_snapshot_position` give the binlog position that the
 * transaction's read view corresponds to exactly (MariaDB KB "Enhancements for START TRANSACTION
 * WITH CONSISTENT SNAPSHOT"). The snapshot reader uses it as the chunk's low watermark on MariaDB.
 */
import { FloeError } from '../../../util/errors.js';
import type { MysqlClient } from '../client.js';
import { binlogGtidPos, readBinlogStatus, type ServerDialect, type ServerFlavor } from '../dialect.js';
import type { BinlogOffset, GtidState, ServerIdentity } from '../offset/offset.js';
import { mariadbGtids, mysqlGtids } from '../offset/offset.js';

const SUBSYSTEM = 'source.mysql.watermark';

export async function readServerIdentity(client: MysqlClient, flavor: ServerFlavor): Promise<ServerIdentity> {
  if (flavor === 'mariadb') {
    const r = oneRow(await client.query('SELECT @@server_id AS id'), 'SELECT @@server_id');
    return { serverId: Number(r.id) };
  }
  const r = oneRow(await client.query('SELECT @@server_uuid AS uuid, @@server_id AS id'), 'SELECT @@server_uuid, @@server_id');
  return { serverUuid: String(r.uuid).toLowerCase(), serverId: Number(r.id) };
}

function oneRow<R>(rows: readonly R[], what: string): R {
  const r = rows[0];
  if (r === undefined) throw new FloeError(SUBSYSTEM, 'source', `${what} returned no row: expected one`);
  return r;
}

function gtidState(flavor: ServerFlavor, text: string): GtidState | undefined {
  // gtid_mode=OFF MySQL reports an empty set: the offset is file/position alone then
  if (flavor === 'mysql') return text.trim() === '' ? undefined : mysqlGtids(text);
  return mariadbGtids(text);
}

function toPosition(p: bigint | number): number {
  const n = Number(p);
  if (!Number.isSafeInteger(n)) throw new FloeError(SUBSYSTEM, 'unsupported', `binlog position ${p} is beyond 2^53: expected a smaller binlog file (max_binlog_size)`);
  return n;
}

/** The current end of the binlog (the dialect's status statement), with GTIDs and server identity. */
export async function readWatermark(client: MysqlClient, dialect: ServerDialect, identity?: ServerIdentity): Promise<BinlogOffset> {
  const status = await readBinlogStatus(client, dialect);
  const gtids = gtidState(dialect.flavor, status.gtids);
  return {
    file: status.file,
    position: toPosition(status.position),
    ...(gtids ? { gtids } : {}),
    ...(identity ?? (await readServerIdentity(client, dialect.flavor))),
  };
}

/** MariaDB: the GTID position at an exact binlog file/position. */
async function mariadbGtidsAt(client: MysqlClient, file: string, position: number): Promise<GtidState> {
  const pos = await binlogGtidPos(client, file, position);
  if (pos === null) {
    throw new FloeError(SUBSYSTEM, 'source', `BINLOG_GTID_POS(${file}, ${position}) returned NULL: expected a position inside an existing binlog file; the file may have been purged`);
  }
  return mariadbGtids(pos);
}

/**
 * MariaDB only: within an open `START TRANSACTION WITH CONSISTENT SNAPSHOT`, the binlog offset the
 * read view corresponds to.
 */
export async function readConsistentSnapshotPoint(client: MysqlClient, identity: ServerIdentity): Promise<BinlogOffset> {
  const rows = await client.query<{ Variable_name: string; Value: string }>("SHOW STATUS LIKE 'binlog_snapshot_%'");
  const get = (name: string) => rows.find((r) => String(r.Variable_name).toLowerCase() === name)?.Value;
  const file = get('binlog_snapshot_file');
  const position = get('binlog_snapshot_position');
  if (file === undefined || position === undefined || String(file) === '') {
    throw new FloeError(SUBSYSTEM, 'source', 'expected the status variables binlog_snapshot_file/binlog_snapshot_position inside a consistent-snapshot transaction; found none (binary log off?)');
  }
  const p = toPosition(BigInt(String(position)));
  return { file: String(file), position: p, gtids: await mariadbGtidsAt(client, String(file), p), ...identity };
}

export interface BinlogFileInfo {
  readonly name: string;
  readonly size: number;
}

/** `SHOW BINARY LOGS`: the files still on the server, oldest first. */
export async function listBinlogFiles(client: MysqlClient): Promise<BinlogFileInfo[]> {
  const rows = await client.query<{ Log_name: string; File_size: string | number }>('SHOW BINARY LOGS');
  return rows.map((x) => ({ name: String(x.Log_name), size: Number(x.File_size) }));
}
