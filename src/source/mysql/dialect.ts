/**
 * Which server floe is talking to (MySQL 5.7 / 8.0 / 8.4+ or MariaDB) and the statements that differ
 * between them. The watermark reader, the pre-flight checks and schema capture all branch on this one
 * object instead of on version strings.
 *
 * - Binlog position: `SHOW BINARY LOG STATUS` on MySQL 8.2+ (8.4 removed `SHOW MASTER STATUS`),
 *   `SHOW MASTER STATUS` on older MySQL and on MariaDB (MariaDB 10.5.2+ also knows
 *   `SHOW BINLOG STATUS`, the old name keeps working everywhere).
 * - GTIDs: MySQL `@@GLOBAL.gtid_executed` (a GTID set, also a column of the status statement);
 *   MariaDB `@@GLOBAL.gtid_binlog_pos` (a position: one `domain-server-seq` per domain). On MariaDB the
 *   position that matches a file/offset exactly is `BINLOG_GTID_POS(file, pos)`.
 * - Replicas: `SHOW REPLICAS` on MySQL 8.0.22+, `SHOW SLAVE HOSTS` elsewhere; whether the server is
 *   itself a replica: `SHOW REPLICA STATUS` on MySQL 8.0.22+, `SHOW SLAVE STATUS` elsewhere.
 * MySQL 8.4 removed SHOW MASTER STATUS, SHOW SLAVE HOSTS and SHOW SLAVE STATUS (MySQL 8.4 Release
 * Notes, 8.4.0, "SQL statements removed"): an 8.4 or 9.x server answers them with a syntax error.
 */
import type { MysqlClient } from './client.js';
import { quoteString } from './client.js';
import { FloeError } from '../../util/errors.js';

export type ServerFlavor = 'mysql' | 'mariadb';

export interface ServerVersion {
  major: number;
  minor: number;
  patch: number;
}

export interface ServerDialect {
  flavor: ServerFlavor;
  version: ServerVersion;
  /** `@@version` as the server reports it, e.g. '10.11.19-MariaDB-0+deb12u1' or '8.4.3'. */
  versionString: string;
  /** Statement whose first row has File and Position (and on MySQL Executed_Gtid_Set). */
  binlogStatusSql: string;
  /** Statement that returns the server's executed GTIDs in a column named `gtids`. */
  gtidExecutedSql: string;
  /** Statement listing registered replicas (with a Server_id column). */
  replicasSql: string;
  /** Statement whose result has a row when the server is itself a replica. */
  replicaStatusSql: string;
  /** Whether the server has `binlog_row_value_options` (MySQL 8.0.3+). */
  hasRowValueOptions: boolean;
  /** Whether the server has `binlog_transaction_compression` (MySQL 8.0.20+). */
  hasTransactionCompression: boolean;
  /** Whether the server can log full table metadata in TABLE_MAP events (`binlog_row_metadata`). */
  hasRowMetadata: boolean;
}

/** Parses '8.0.36', '8.4.3-commercial', '10.11.19-MariaDB-0+deb12u1', '5.5.5-10.6.1-MariaDB'. */
export function parseServerVersion(versionString: string): { flavor: ServerFlavor; version: ServerVersion } {
  const flavor: ServerFlavor = /mariadb/i.test(versionString) ? 'mariadb' : 'mysql';
  // MariaDB behind some proxies reports a '5.5.5-' compatibility prefix before its own version.
  const text = flavor === 'mariadb' ? versionString.replace(/^5\.5\.5-/, '') : versionString;
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(text);
  if (!m) {
    throw new FloeError('source.mysql', 'unsupported', `cannot read the server version from ${JSON.stringify(versionString)}: expected MAJOR.MINOR.PATCH`);
  }
  return { flavor, version: { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) } };
}

export function versionAtLeast(v: ServerVersion, major: number, minor: number, patch = 0): boolean {
  if (v.major !== major) return v.major > major;
  if (v.minor !== minor) return v.minor > minor;
  return v.patch >= patch;
}

export function dialectFor(versionString: string): ServerDialect {
  const { flavor, version } = parseServerVersion(versionString);
  if (flavor === 'mariadb') {
    return {
      flavor,
      version,
      versionString,
      binlogStatusSql: 'SHOW MASTER STATUS',
      gtidExecutedSql: 'SELECT @@GLOBAL.gtid_binlog_pos AS gtids',
      replicasSql: 'SHOW SLAVE HOSTS',
      replicaStatusSql: 'SHOW SLAVE STATUS',
      hasRowValueOptions: false,
      hasTransactionCompression: false,
      hasRowMetadata: versionAtLeast(version, 10, 5),
    };
  }
  return {
    flavor,
    version,
    versionString,
    binlogStatusSql: versionAtLeast(version, 8, 2) ? 'SHOW BINARY LOG STATUS' : 'SHOW MASTER STATUS',
    gtidExecutedSql: 'SELECT @@GLOBAL.gtid_executed AS gtids',
    replicasSql: versionAtLeast(version, 8, 0, 22) ? 'SHOW REPLICAS' : 'SHOW SLAVE HOSTS',
    replicaStatusSql: versionAtLeast(version, 8, 0, 22) ? 'SHOW REPLICA STATUS' : 'SHOW SLAVE STATUS',
    hasRowValueOptions: versionAtLeast(version, 8, 0, 3),
    hasTransactionCompression: versionAtLeast(version, 8, 0, 20),
    hasRowMetadata: versionAtLeast(version, 8, 0, 1),
  };
}

/** Asks the server what it is. */
export async function detectDialect(client: MysqlClient): Promise<ServerDialect> {
  const rows = await client.query<{ v: string }>('SELECT @@version AS v');
  return dialectFor(String(rows[0]?.v ?? ''));
}

/** The binlog position the server has written up to, with the GTID state that matches it. */
export interface BinlogStatus {
  file: string;
  /** Byte offset in `file` (binlog files are < 2^63; a number is exact below 2^53). */
  position: bigint;
  /**
   * MySQL: the executed GTID set as printed by the server (may be '' when gtid_mode=OFF).
   * MariaDB: the GTID position matching `file:position` exactly (`BINLOG_GTID_POS`).
   */
  gtids: string;
}

/**
 * Reads the current binlog position. On MySQL the status row carries file, position and the GTID set
 * together (one consistent snapshot). On MariaDB it does not, so the GTID position is derived from the
 * file/offset with `BINLOG_GTID_POS`, which is exact for that point by construction.
 */
export async function readBinlogStatus(client: MysqlClient, dialect: ServerDialect): Promise<BinlogStatus> {
  const rows = await client.query(dialect.binlogStatusSql);
  const row = rows[0];
  if (!row || row.File === undefined || row.File === null || row.File === '') {
    throw new FloeError(
      'source.mysql',
      'source',
      `${dialect.binlogStatusSql} returned no binlog file: expected the binary log to be enabled; start the server with log_bin (log-bin=<basename>) and binlog_format=ROW`,
    );
  }
  const file = String(row.File);
  const position = BigInt(String(row.Position));
  if (dialect.flavor === 'mysql') {
    const gtids = row.Executed_Gtid_Set === undefined || row.Executed_Gtid_Set === null ? '' : String(row.Executed_Gtid_Set).replace(/\s+/g, '');
    return { file, position, gtids };
  }
  return { file, position, gtids: (await binlogGtidPos(client, file, position)) ?? '' };
}

const gtidPosCache = new WeakMap<MysqlClient, Map<string, string>>();

/**
 * MariaDB `BINLOG_GTID_POS(file, position)`, remembered per session. The server computes it by
 * reading the binlog file from its start up to `position` (~25 ms on a 70 MB file, proportionally
 * more on a full 1 GiB one), and a chunked snapshot asks for two watermarks per chunk — on a quiet
 * server all at the same point. The function is deterministic for a given existing file and
 * position, so a remembered answer is exact; a NULL (no such file/position) is never remembered.
 */
export async function binlogGtidPos(client: MysqlClient, file: string, position: bigint | number): Promise<string | null> {
  let cache = gtidPosCache.get(client);
  if (!cache) gtidPosCache.set(client, (cache = new Map()));
  const key = `${file}:${position}`;
  const known = cache.get(key);
  if (known !== undefined) return known;
  const [r] = await client.query<{ pos: string | null }>(`SELECT BINLOG_GTID_POS(${quoteString(file)}, ${position.toString()}) AS pos`);
  if (r?.pos === null || r?.pos === undefined) return null;
  const text = String(r.pos);
  if (cache.size >= 256) cache.delete(cache.keys().next().value!);
  cache.set(key, text);
  return text;
}
