/**
 * Shared helpers of the binlog/snapshot tests: connection config of the harness server, a SQL
 * runner, and collecting a reader's stream.
 */
import mysql from 'mysql2/promise';
import { sharedMysqlConfig } from '../../../support/shared-mysql.js';
import { serverKind, type ServerKind } from '../../../support/servers.js';
import type { MysqlConnectionConfig } from '../../../../src/source/mysql/client.js';
import { connectMysql } from '../../../../src/source/mysql/client.js';
import { detectDialect } from '../../../../src/source/mysql/dialect.js';
import type { SourceControl } from '../../../../src/source/mysql/source-options.js';
import { readServerIdentity } from '../../../../src/source/mysql/snapshot/watermark.js';
import { captureTableSchemas } from '../../../../src/source/mysql/schema/table-schema.js';
import { mapTable } from '../../../../src/source/mysql/schema/type-mapping.js';
import { MappedTablesDecoding } from '../../../../src/source/mysql/binlog/binlog-decoding.js';
import type { BinlogDecoding } from '../../../../src/source/mysql/binlog/raw-transactions.js';
import type { TableRef } from '../../../../src/source/mysql/events.js';
import { parseOffset, type BinlogOffset } from '../../../../src/source/mysql/offset/offset.js';

export function sourceConfig(): MysqlConnectionConfig {
  const c = sharedMysqlConfig();
  return { host: c.host, port: c.port, user: c.user, password: c.password };
}

/** A mysql2 connection to the shared server, or to `server`. */
export async function sql(server: MysqlConnectionConfig = sharedMysqlConfig()): Promise<mysql.Connection> {
  const { host, port, user, password } = server;
  return mysql.createConnection({ host, port, user, password, supportBigNumbers: true, bigNumberStrings: true });
}

/** the source's real binlog decoding for the given tables (schemas captured now). */
export async function decodingFor(tables: TableRef[], config: MysqlConnectionConfig = sourceConfig()): Promise<MappedTablesDecoding> {
  const client = await connectMysql(config);
  try {
    const dialect = await detectDialect(client);
    const schemas = await captureTableSchemas(client, tables, dialect.flavor);
    return new MappedTablesDecoding([...schemas.values()].map((s) => mapTable(s)));
  } finally {
    await client.close();
  }
}

/**
 * `decoding` without floe's row decoder (no `compiledFor`): the reader keeps no rows event as bytes,
 * and zongji decodes every row image — the independent decoding floe's decoder is compared with.
 * The table mappings stay `decoding`'s, so a `recapture` into it applies here too.
 */
export function zongjiOnly(decoding: BinlogDecoding): BinlogDecoding {
  const expand = decoding.expandTransaction?.bind(decoding);
  return {
    ...(decoding.connectionOptions === undefined ? {} : { connectionOptions: decoding.connectionOptions }),
    decoderFor: (...args) => decoding.decoderFor(...args),
    ...(expand === undefined ? {} : { expandTransaction: expand }),
  };
}

/** A control connection as an opened source holds it (opened-source.ts), for a `SourceStream` of its own; the caller closes `client`. */
export async function openSourceControl(config: MysqlConnectionConfig = sourceConfig()): Promise<SourceControl> {
  const client = await connectMysql(config);
  const dialect = await detectDialect(client);
  return { client, dialect, identity: await readServerIdentity(client, dialect.flavor) };
}

/** Re-captures one table into an existing decoding (what the pipeline does after a DDL). */
export async function recapture(decoding: MappedTablesDecoding, table: TableRef, config: MysqlConnectionConfig = sourceConfig()): Promise<void> {
  const client = await connectMysql(config);
  try {
    const dialect = await detectDialect(client);
    const schemas = await captureTableSchemas(client, [table], dialect.flavor);
    for (const s of schemas.values()) decoding.set(mapTable(s));
  } finally {
    await client.close();
  }
}

let nextServerId = 5000 + (process.pid % 1000) * 20;
/** A replica server id unique within this test process. */
export function replicaId(): number {
  return nextServerId++;
}

/**
 * The server's current binlog position as an offset (file/position, GTIDs, server identity), read with
 * the server's own statements rather than floe's watermark code: on MariaDB the GTID position of the
 * file/position (`BINLOG_GTID_POS`), on MySQL the status row's `Executed_Gtid_Set` and `@@server_uuid`.
 */
export async function serverOffset(conn: mysql.Connection, kind: ServerKind = serverKind()): Promise<BinlogOffset> {
  const [versionRows] = (await conn.query('SELECT @@version AS v, @@server_id AS id')) as unknown as [{ v: string; id: number }[]];
  const serverId = Number(versionRows[0]!.id);
  if (kind === 'mysql') {
    // MySQL 8.2 added SHOW BINARY LOG STATUS, 8.4 removed SHOW MASTER STATUS
    const [major, minor] = versionRows[0]!.v.split('.').map(Number) as [number, number];
    const statusSql = major > 8 || (major === 8 && minor >= 2) ? 'SHOW BINARY LOG STATUS' : 'SHOW MASTER STATUS';
    const [rows] = (await conn.query(statusSql)) as unknown as [{ File: string; Position: number; Executed_Gtid_Set: string }[]];
    const [u] = (await conn.query('SELECT @@server_uuid AS u')) as unknown as [{ u: string }[]];
    const gtids = rows[0]!.Executed_Gtid_Set.replace(/\s+/g, '');
    return parseOffset(JSON.stringify({ file: rows[0]!.File, pos: Number(rows[0]!.Position), flavor: 'mysql', gtids, serverId, serverUuid: u[0]!.u }));
  }
  const [rows] = (await conn.query('SHOW MASTER STATUS')) as unknown as [{ File: string; Position: number }[]];
  const [g] = (await conn.query('SELECT BINLOG_GTID_POS(?, ?) AS p', [rows[0]!.File, rows[0]!.Position])) as unknown as [{ p: string }[]];
  return parseOffset(JSON.stringify({ file: rows[0]!.File, pos: Number(rows[0]!.Position), flavor: 'mariadb', gtids: g[0]!.p, serverId }));
}
