// Writes test/fixtures/mysql8-binlog/: compressed transactions (TRANSACTION_PAYLOAD_EVENT) as a real
// Oracle MySQL 8 logs them, cut from its binlog files, with what the server reports about them
// (SHOW BINLOG EVENTS) and the captured table definitions. Needs the MySQL 8 of .ci/install-mysql8.
// Run: node --import tsx scripts/capture-mysql8-binlog.ts
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { startMysql } from '../src/demo/local-mysql.js';
import { connectMysql } from '../src/source/mysql/client.js';
import { captureTableSchemas } from '../src/source/mysql/schema/table-schema.js';

const OUT = new URL('../test/fixtures/mysql8-binlog/', import.meta.url).pathname;

interface BinlogEventRow {
  Log_name: string;
  Pos: number;
  Event_type: string;
  End_log_pos: number;
  Info: string;
}

/** The DDL of the fixture tables. */
const TABLES = [
  'CREATE TABLE fx.t (id INT PRIMARY KEY, v VARCHAR(20) CHARACTER SET utf8mb4)',
  'CREATE TABLE fx.u (id BIGINT PRIMARY KEY, n DECIMAL(10,2), at DATETIME(6))',
  'CREATE TABLE fx.big (id INT PRIMARY KEY, name VARCHAR(64) CHARACTER SET utf8mb4, amount DECIMAL(12,3))',
];

/** One transaction over two tables: inserts, an update, a key-changing update, a delete. */
const MIXED = [
  "INSERT INTO fx.t VALUES (1, 'a'), (2, 'b'), (3, 'c')",
  "INSERT INTO fx.u VALUES (10, 1.50, '2024-02-29 12:34:56.789012')",
  "UPDATE fx.t SET v = 'bb' WHERE id = 2",
  'UPDATE fx.t SET id = 30 WHERE id = 3',
  'DELETE FROM fx.t WHERE id = 1',
  "UPDATE fx.u SET n = -7.25 WHERE id = 10",
];

/** 5,000 rows in one statement: a payload of many rows events and zstd blocks. */
const BIG = [
  'SET SESSION cte_max_recursion_depth = 10000',
  "INSERT INTO fx.big WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 5000) SELECT n, CONCAT('name-', n, '-', REPEAT('x', n % 40)), n * 1.125 FROM seq",
];

async function transaction(c: mysql.Connection, statements: readonly string[]): Promise<void> {
  await c.query('BEGIN');
  for (const s of statements) await c.query(s);
  await c.query('COMMIT');
}

async function events(c: mysql.Connection): Promise<BinlogEventRow[]> {
  const [[status]] = (await c.query('SHOW MASTER STATUS')) as unknown as [{ File: string }[]];
  const [rows] = (await c.query(`SHOW BINLOG EVENTS IN '${status!.File}'`)) as unknown as [BinlogEventRow[]];
  return rows.map((r) => ({ Log_name: r.Log_name, Pos: Number(r.Pos), Event_type: r.Event_type, End_log_pos: Number(r.End_log_pos), Info: r.Info }));
}

/** The server's rows for the payload at `pos` and the inner events it reports with it. */
function payloadRows(all: BinlogEventRow[], pos: number): BinlogEventRow[] {
  const at = all.findIndex((r) => r.Pos === pos && r.Event_type === 'Transaction_payload');
  const out = [all[at]!];
  for (let i = at + 1; i < all.length && all[i]!.Event_type !== 'Gtid' && all[i]!.Event_type !== 'Transaction_payload'; i++) out.push(all[i]!);
  return out;
}

async function capture(name: string, checksum: 'CRC32' | 'NONE'): Promise<void> {
  const server = await startMysql({ extraArgs: ['--binlog-transaction-compression=ON', `--binlog-checksum=${checksum}`] });
  try {
    const config = { host: server.host, port: server.port, user: server.user, password: server.password };
    const c = await mysql.createConnection(config);
    const [[version]] = (await c.query('SELECT VERSION() AS v')) as unknown as [{ v: string }[]];
    await c.query('CREATE DATABASE fx');
    for (const ddl of TABLES) await c.query(ddl);
    // the mixed transaction logged uncompressed first (this session only), then, on the same rows
    // again, compressed: the TABLE_MAP and rows events inside the payload are the uncompressed ones
    await c.query('SET SESSION binlog_transaction_compression = OFF');
    await transaction(c, MIXED);
    await c.query('SET SESSION binlog_transaction_compression = ON');
    await c.query('DELETE FROM fx.t');
    await c.query('DELETE FROM fx.u');
    const before = (await events(c)).length;
    await transaction(c, MIXED);
    await transaction(c, BIG);
    const all = await events(c);
    const payloads = all.slice(before).filter((r) => r.Event_type === 'Transaction_payload');
    const binlog = await readFile(join(server.dataDir!, all[0]!.Log_name));
    const cut = (from: number, to: number) => binlog.subarray(from, to);
    // the uncompressed mixed transaction: the first BEGIN (the DDL before it has none) to its Xid
    const begin = all.findIndex((r) => r.Event_type === 'Query' && r.Info === 'BEGIN');
    const xid = all.findIndex((r, i) => i > begin && r.Event_type === 'Xid');
    const uncompressed = { from: all[begin]!.Pos, to: all[xid]!.End_log_pos, events: all.slice(begin, xid + 1) };
    const client = await connectMysql(config);
    const schemas = await captureTableSchemas(client, ['t', 'u', 'big'].map((table) => ({ database: 'fx', table })), 'mysql');
    await client.close();
    await c.end();

    await mkdir(OUT, { recursive: true });
    const [mixed, big] = payloads;
    await writeFile(join(OUT, `${name}-mixed.bin`), cut(mixed!.Pos, mixed!.End_log_pos));
    await writeFile(join(OUT, `${name}-big.bin`), cut(big!.Pos, big!.End_log_pos));
    await writeFile(join(OUT, `${name}-uncompressed-mixed.bin`), cut(uncompressed.from, uncompressed.to));
    const facts = {
      server: `MySQL ${version!.v}`,
      serverArgs: ['--binlog-transaction-compression=ON', `--binlog-checksum=${checksum}`, '(and src/demo/local-mysql.ts defaults: binlog_row_metadata=FULL, gtid_mode=ON)'],
      binlogChecksum: checksum,
      statements: { tables: TABLES, mixed: MIXED, big: BIG },
      mixed: payloadRows(all, mixed!.Pos),
      big: payloadRows(all, big!.Pos).slice(0, 1),
      uncompressedMixed: uncompressed.events,
      schemas: Object.fromEntries([...schemas.values()].map((s) => [s.id.table, s])),
    };
    await writeFile(join(OUT, `${name}.json`), JSON.stringify(facts, null, 2) + '\n');
  } finally {
    await server.stop();
  }
}

await capture('crc32', 'CRC32');
await capture('no-checksum', 'NONE');
