/**
 * A table without a primary key snapshotted while a writer updates, inserts and deletes its rows: its
 * chunks have no identity to backfill by, so each chunk's rows must be exactly the table at the
 * chunk's low watermark — the hand-over replays every change after it, and a change the SELECT had
 * already seen would be applied twice (an update's new row appended a second time). Replaying the
 * emitted rows and the hand-over as a multiset must give exactly the table's final content, and every
 * replayed delete must find the row it removes. On MariaDB the chunk is read inside a consistent
 * snapshot whose binlog position the server reports; on MySQL floe opens the chunk's read view under a
 * brief table lock (locked-read-view.ts) — and where it cannot lock (no privilege, a long transaction
 * writing the table) reads at-least-once and logs why.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { createTestDatabase } from '../../../support/shared-mysql.js';
import { decodingFor, replicaId, sourceConfig, sql } from '../binlog/helpers.js';
import { connectMysql, type MysqlClient } from '../../../../src/source/mysql/client.js';
import { detectDialect, type ServerDialect } from '../../../../src/source/mysql/dialect.js';
import { captureTableSchema, qualifiedTable } from '../../../../src/source/mysql/schema/table-schema.js';
import { mapTable, type MappedTable } from '../../../../src/source/mysql/schema/type-mapping.js';
import { createKeyComparator, serverCollationWeigher } from '../../../../src/source/mysql/snapshot/key-compare.js';
import { chunkKeyColumns, type Chunk } from '../../../../src/source/mysql/snapshot/chunk.js';
import { splitTable } from '../../../../src/source/mysql/snapshot/chunk-splitter.js';
import { keyText, readSnapshot } from '../../../../src/source/mysql/snapshot/snapshot-reader.js';
import { HandoverFilter } from '../../../../src/source/mysql/snapshot/handover.js';
import { BinlogReader } from '../../../../src/source/mysql/binlog/binlog-reader.js';
import { readServerIdentity, readWatermark } from '../../../../src/source/mysql/snapshot/watermark.js';
import { createSnapshotRowConverter, snapshotSelectList } from '../../../../src/source/mysql/snapshot/snapshot-values.js';
import type { BinlogOffset } from '../../../../src/source/mysql/offset/offset.js';
import { serverKind } from '../../../support/servers.js';
import { checkSource } from '../../../../src/source/mysql/preflight.js';

const ROWS = 3000;

let db: string;
let conn: mysql.Connection;
let client: MysqlClient;
let dialect: ServerDialect;

beforeAll(async () => {
  db = await createTestDatabase('keyless_snap');
  conn = await sql();
  client = await connectMysql(sourceConfig());
  dialect = await detectDialect(client);
});
afterAll(async () => {
  await conn?.end();
  await client?.close();
});

/** Whole-table updates, range updates, inserts and deletes as fast as the server takes them. */
function startWriter(table: string): { stop: () => Promise<number> } {
  let running = true;
  let ops = 0;
  const t = `\`${db}\`.\`${table}\``;
  const uid = (n: number) => `u${String(n).padStart(8, '0')}`;
  const done = (async () => {
    const w = await sql();
    try {
      let next = ROWS;
      while (running) {
        const k = Math.random();
        const at = Math.floor(Math.random() * ROWS);
        if (k < 0.4) await w.query(`UPDATE ${t} SET n = n + 1 WHERE uid BETWEEN ? AND ?`, [uid(at), uid(at + 40)]);
        else if (k < 0.55) await w.query(`UPDATE ${t} SET n = n + 1000`);
        else if (k < 0.8) await w.query(`INSERT INTO ${t} VALUES (?, ?)`, [uid(next++), ops]);
        else await w.query(`DELETE FROM ${t} WHERE uid = ? LIMIT 1`, [uid(at)]);
        ops++;
      }
    } finally {
      await w.end();
    }
  })();
  return {
    stop: async () => {
      running = false;
      await done;
      return ops;
    },
  };
}

async function tableContent(mapped: MappedTable): Promise<Map<string, number>> {
  const convert = createSnapshotRowConverter(mapped);
  const out = new Map<string, number>();
  for await (const raw of client.stream(`SELECT ${snapshotSelectList(mapped, dialect.flavor)} FROM ${qualifiedTable(mapped.schema.id)}`)) {
    const k = keyText(convert(raw));
    out.set(k, (out.get(k) ?? 0) + 1);
  }
  return out;
}

async function runScenario(table: string, indexed: boolean): Promise<{ chunks: number; ops: number; replayedDeletes: number }> {
  // with an index the splitter walks it (chunks flagged keyless); without one the table is one chunk
  await conn.query(`CREATE TABLE \`${db}\`.\`${table}\` (uid CHAR(9) NOT NULL, n INT NOT NULL${indexed ? ', KEY (uid)' : ''})`);
  await conn.query(`INSERT INTO \`${db}\`.\`${table}\` VALUES ?`, [Array.from({ length: ROWS }, (_, i) => [`u${String(i).padStart(8, '0')}`, 0])]);
  const id = { database: db, table };
  const mapped = mapTable(await captureTableSchema(client, id, dialect.flavor));
  const chunks: Chunk[] = [];
  for await (const c of splitTable(client, mapped, dialect.flavor, { chunkSize: 150 })) chunks.push(c);
  expect(chunks.every((c) => c.keyless === true)).toBe(true);
  const comparator = createKeyComparator(chunks.length ? chunkKeyColumns(mapped, chunks[0]!) : [], serverCollationWeigher(client));
  const decoding = await decodingFor([id]);
  const identity = await readServerIdentity(client, dialect.flavor);
  const writer = startWriter(table);
  await new Promise((r) => setTimeout(r, 200)); // the writer is busy before the first chunk

  // the replay as a multiset: whole-row text → copies
  const replay = new Map<string, number>();
  const add = (k: string) => replay.set(k, (replay.get(k) ?? 0) + 1);
  const missing: string[] = [];
  const remove = (k: string) => {
    const n = replay.get(k) ?? 0;
    if (n === 0) missing.push(k);
    else if (n === 1) replay.delete(k);
    else replay.set(k, n - 1);
  };
  const hw = new Map<number, BinlogOffset>();
  for await (const r of readSnapshot({ connection: sourceConfig(), dialect, identity, tables: [{ table: mapped, chunks, comparator }], parallelism: 2, decoding, serverIdBase: replicaId() + 100 })) {
    expect(r.keyless).toBe(true);
    hw.set(r.chunk.index, r.highWatermark);
    for (const row of r.rows) add(keyText(row));
  }
  const ops = await writer.stop();
  const end = await readWatermark(client, dialect, identity);

  const filter = new HandoverFilter([{ table: mapped, chunks, comparator, highWatermarks: hw }]);
  const reader = new BinlogReader({ connection: sourceConfig(), serverId: replicaId(), start: { kind: 'offset', offset: filter.start }, stopAt: end, tables: [id], decoding, dialect });
  let replayedDeletes = 0;
  for await (const e of reader) {
    if (e.kind !== 'transaction') continue;
    for (const c of (await filter.filter(e)).changes) {
      if (c.before) {
        remove(keyText(c.before));
        replayedDeletes++;
      }
      if (c.after) add(keyText(c.after));
    }
  }
  expect(missing.slice(0, 5), `${missing.length} replayed deletes found no row`).toEqual([]);
  const expected = await tableContent(mapped);
  const differences = [...new Set([...expected.keys(), ...replay.keys()])].filter((k) => expected.get(k) !== replay.get(k)).map((k) => `${k}: table ${expected.get(k) ?? 0}, replay ${replay.get(k) ?? 0}`);
  expect(differences.slice(0, 5), `${differences.length} rows differ`).toEqual([]);
  return { chunks: chunks.length, ops, replayedDeletes };
}

describe('snapshot of a table without primary key under concurrent writes', () => {
  it('chunked on an index: replay of snapshot + hand-over equals the table, row for row', async () => {
    const { chunks, ops, replayedDeletes } = await runScenario('by_index', true);
    expect(chunks).toBeGreaterThan(10);
    expect(ops).toBeGreaterThan(50);
    expect(replayedDeletes).toBeGreaterThan(0);
  });

  it('one chunk (no index): replay of snapshot + hand-over equals the table, row for row', async () => {
    const { chunks, ops } = await runScenario('whole', false);
    expect(chunks).toBe(1);
    expect(ops).toBeGreaterThan(20);
  });

  // MySQL only: MariaDB reads keyless chunks in a consistent snapshot and takes no lock
  it.skipIf(serverKind() !== 'mysql')('where the table cannot be locked, its chunks are read at-least-once and the log says why', async () => {
    await conn.query(`CREATE TABLE \`${db}\`.nolock (uid CHAR(9) NOT NULL, n INT NOT NULL)`);
    await conn.query(`INSERT INTO \`${db}\`.nolock VALUES ('a', 1), ('b', 2), ('b', 2)`);
    const id = { database: db, table: 'nolock' };
    const mapped = mapTable(await captureTableSchema(client, id, dialect.flavor));
    const identity = await readServerIdentity(client, dialect.flavor);
    const decoding = await decodingFor([id]);
    const read = async (connection: ReturnType<typeof sourceConfig>) => {
      const log: string[] = [];
      const rows: string[] = [];
      const chunks: Chunk[] = [];
      for await (const c of splitTable(client, mapped, dialect.flavor)) chunks.push(c);
      for await (const r of readSnapshot({ connection, dialect, identity, tables: [{ table: mapped, chunks, comparator: createKeyComparator([]) }], decoding, serverIdBase: replicaId() + 100, warn: (m) => log.push(m) })) {
        for (const row of r.rows) rows.push(JSON.stringify(row));
      }
      return { log, rows: rows.sort() };
    };
    const expectedRows = ['["a",1]', '["b",2]', '["b",2]'];

    // a user without the LOCK TABLES privilege, with a password under the server's default plugin
    // (caching_sha2_password on MySQL 8, the only one 9.x keeps)
    const user = `nolock_${process.pid}`;
    await conn.query(`CREATE USER '${user}'@'%' IDENTIFIED BY 'pw'`);
    try {
      await conn.query(`GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '${user}'@'%'`);
      const refused = await read({ ...sourceConfig(), user, password: 'pw' });
      expect(refused.rows).toEqual(expectedRows);
      expect(refused.log).toHaveLength(1);
      expect(refused.log[0]).toMatch(new RegExp(`${db}\\.nolock has no primary key and its chunks are read at-least-once .*GRANT LOCK TABLES ON \`${db}\`\\.\\* to it`));
      // floe check says so before any snapshot
      const { checks } = await checkSource({ ...sourceConfig(), user, password: 'pw' }, { tables: [id], expectedSnapshotSeconds: 1 });
      expect(checks.find((c) => c.check === 'lock_tables')).toMatchObject({ ok: false, severity: 'warning', message: expect.stringContaining(`the user may not LOCK TABLES in ${db}: tables without a primary key (${db}.nolock) are then snapshotted at-least-once`) });
    } finally {
      await conn.query(`DROP USER '${user}'@'%'`);
    }

    // a transaction writing the table holds the lock off: the chunk is read without it after the wait
    const blocker = await sql();
    try {
      await blocker.beginTransaction();
      await blocker.query(`INSERT INTO \`${db}\`.nolock VALUES ('c', 3)`);
      const began = Date.now();
      const waited = await read(sourceConfig());
      expect(Date.now() - began).toBeGreaterThanOrEqual(4500);
      expect(waited.rows).toEqual(expectedRows);
      expect(waited.log[0]).toMatch(/nolock has no primary key .*LOCK TABLES .*nolock READ waited 5 s behind a transaction writing the table/);
    } finally {
      await blocker.rollback();
      await blocker.end();
    }
    // and with the lock free, nothing is logged
    expect((await read(sourceConfig())).log).toEqual([]);
  });
});
