/**
 * Schema changes and restarts in every order (docs/design.md §3, "A schema change has a position"):
 * the repros of the ways a DDL and a restart could wedge floe, each driven through real `floe run`
 * processes against the shared server, each ending with the lake equal to MySQL.
 *
 * 1. A DDL made while floe is down, on a table whose snapshot committed nothing yet: the table takes
 *    today's definition and snapshots from the start — also when another table's committed chunks
 *    make the restart read the binlog from before the DDL (its rows there are of the older layout),
 *    and when that other table's own DDL makes the restart catch up first.
 * 2. DDLs made while floe is down, under ~150 transactions a second of other DML; the next run applies
 *    one and dies right after its schema-change commit (failpoint `after-schema-change-commit`), before
 *    the next checkpoint: every later start decodes each row with the definition of its position.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import { lastCommitted } from '../../src/iceberg/checkpoint/index.js';
import { createTestDatabase, sharedMysqlConfig } from '../support/shared-mysql.js';
import { sql } from '../source/mysql/binlog/helpers.js';
import { serverPosition, waitForCatchUp, watchedTables, whileRunning } from './support/catch-up.js';
import { FloeProcess } from './support/floe-process.js';
import { writeFloeConfig } from './support/floe-config.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from './support/lake-compare.js';
import { SHOP_ALTERED, SHOP_DDL, SHOP_SCHEMA, SHOP_TABLES, ShopWriter } from './support/shop-schema.js';

process.env.TZ ??= 'Asia/Seoul';

const connections: mysql.Connection[] = [];
const cleanup: string[] = [];

afterAll(async () => {
  for (const c of connections) await c.end();
  for (const path of cleanup) await rm(path, { recursive: true, force: true });
});

interface Scene {
  db: string;
  conn: mysql.Connection;
  warehouse: string;
  catalog: FileSystemCatalog;
}

async function scene(prefix: string, statements: readonly string[]): Promise<Scene> {
  const db = await createTestDatabase(prefix);
  const conn = await sql();
  connections.push(conn);
  await conn.query(`USE \`${db}\``);
  for (const s of statements) await conn.query(s);
  const warehouse = await mkdtemp(join(tmpdir(), `floe-${prefix}-`));
  cleanup.push(warehouse, `${warehouse}.json`, `${warehouse}-first.json`);
  return { db, conn, warehouse, catalog: new FileSystemCatalog({ warehouse }) };
}

/** A last run catches up with the server, stops cleanly, and every table equals MySQL; returns that run. */
async function catchUpAndCompare(s: Scene, config: string, job: string, tables: readonly string[]): Promise<FloeProcess> {
  const target = await serverPosition({ ...sharedMysqlConfig() });
  const last = new FloeProcess(config);
  try {
    await waitForCatchUp(s.catalog, watchedTables(s.db, tables), job, target, { timeoutMs: 120_000, check: whileRunning(last, 'floe') });
  } finally {
    last.kill('SIGTERM');
  }
  expect(await last.exited, last.tail()).toEqual({ code: 0, signal: null });
  for (const t of tables) {
    const lake = await lakeTableRows(s.catalog, { namespace: [s.db], name: t });
    const expected = await mysqlTableRows({ ...sharedMysqlConfig() }, s.db, t, lake.columns);
    expect({ table: t, ...multisetDifference(expected, lake.rows), rows: lake.rows.length }).toEqual({ table: t, missing: [], unexpected: [], rows: expected.length });
  }
  return last;
}

const rows = (n: number, row: (i: number) => string) => Array.from({ length: Math.ceil(n / 1000) }, (_, b) => Array.from({ length: Math.min(1000, n - b * 1000) }, (_, i) => row(b * 1000 + i)).join(', '));

describe('a DDL while floe is down, on a table whose snapshot committed nothing yet', () => {
  it('the table takes the new definition and is snapshotted from the start', async () => {
    const s = await scene('ddl_nothing', ['CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))', ...rows(20_000, (i) => `(${i}, 'v${i}')`).map((r) => `INSERT INTO t VALUES ${r}`)]);
    const job = 'ddl-nothing';
    const config = await writeFloeConfig({ job, warehouse: s.warehouse, serverId: 41_000 + (process.pid % 1000) * 8, include: [`${s.db}.t`], source: { snapshot: { chunkSize: 10 } }, commit: { intervalMs: 60_000 } });
    const first = new FloeProcess(config);
    const started = await first.waitFor((r) => r.notification === 'snapshot-started');
    first.kill('SIGKILL');
    await first.exited;
    expect(started, first.tail()).toBeDefined();
    // the lake holds the table, created with the definition of then, and no snapshot of it
    const created = await loadCatalogTable(s.catalog, { namespace: [s.db], name: 't' });
    expect(created.metadata.currentSnapshotId).toBeUndefined();

    await s.conn.query('ALTER TABLE t ADD COLUMN w INT DEFAULT 7');
    await s.conn.query("INSERT INTO t VALUES (20000, 'new', 8)");
    await catchUpAndCompare(s, config, job, ['t']);
    const t = await loadCatalogTable(s.catalog, { namespace: [s.db], name: 't' });
    expect(t.metadata.schemas.find((x) => x.schemaId === t.metadata.currentSchemaId)!.fields.map((f) => f.name)).toEqual(['id', 'v', 'w']);
  }, 300_000);

  // The kill lands once a_big has committed a chunk (its high watermark, where the restart reads the
  // binlog from, lies before the DDLs below) and b only its plan: b's rows logged before the ALTER
  // are in that binlog, in the layout before it, while b takes the definition of now.
  async function killOncePlanned(s: Scene, config: string, job: string): Promise<void> {
    const first = new FloeProcess(config);
    const committed = async (name: string) => {
      if (!(await s.catalog.tableExists({ namespace: [s.db], name }))) return undefined;
      const c = lastCommitted((await loadCatalogTable(s.catalog, { namespace: [s.db], name })).metadata, job);
      return c && (JSON.parse(c.sourceOffset) as { phase: string; snapshot: { rows: number; finished: number } });
    };
    try {
      const deadline = Date.now() + 60_000;
      for (;;) {
        if (first.hasExited) throw new Error(`floe exited: ${first.tail()}`);
        if (Date.now() > deadline) throw new Error(`b's plan and a chunk of a_big were not committed within 60 s: ${first.tail()}`);
        if ((await committed('b')) && ((await committed('a_big'))?.snapshot.rows ?? 0) > 0) break;
        await sleep(20);
      }
    } finally {
      first.kill('SIGKILL');
      await first.exited;
    }
    expect(await committed('b'), 'b committed rows before the kill; make a_big slower').toMatchObject({ phase: 'snapshot', snapshot: { rows: 0, finished: 0 } });
    expect((await committed('a_big'))?.phase).toBe('snapshot');
  }

  const planOnlyScene = (prefix: string) =>
    scene(prefix, [
      'CREATE TABLE a_big (id INT PRIMARY KEY, v VARCHAR(20))',
      ...rows(20_000, (i) => `(${i}, 'v${i}')`).map((r) => `INSERT INTO a_big VALUES ${r}`),
      'CREATE TABLE b (id INT PRIMARY KEY, v VARCHAR(20), gone INT)',
      `INSERT INTO b VALUES ${Array.from({ length: 200 }, (_, i) => `(${i}, 'b${i}', ${i})`).join(', ')}`,
    ]);

  const changeB = async (s: Scene) => {
    await s.conn.query('UPDATE b SET v = CONCAT(v, "!") WHERE id < 50');
    await s.conn.query('ALTER TABLE b ADD COLUMN w INT NOT NULL DEFAULT 7 AFTER id, DROP COLUMN gone');
    await s.conn.query("INSERT INTO b VALUES (1000, 8, 'new')");
  };

  const fieldsOf = async (s: Scene, name: string) => {
    const t = await loadCatalogTable(s.catalog, { namespace: [s.db], name });
    return t.metadata.schemas.find((x) => x.schemaId === t.metadata.currentSchemaId)!.fields.map((f) => f.name);
  };

  it('a table whose chunk plan was committed, but none of its chunks: it snapshots from the start with the new definition', async () => {
    // a_big is copied first (name order, one chunk at a time); checkpoints during it commit b's plan.
    // The restart's stream carries no change the lake takes: each table records the offset it has
    // reached at the next checkpoint (idleCheckpoints), not ten heartbeats later.
    const s = await planOnlyScene('ddl_plan_only');
    const job = 'ddl-plan-only';
    const config = await writeFloeConfig({ job, warehouse: s.warehouse, serverId: 43_000 + (process.pid % 1000) * 8, include: [`${s.db}.a_big`, `${s.db}.b`], source: { snapshot: { chunkSize: 10, parallelism: 1 } }, commit: { intervalMs: 100, idleCheckpoints: 1 } });
    await killOncePlanned(s, config, job);
    // the restart reads the binlog from a_big's chunk: b's UPDATE there is of the layout before the ALTER
    await changeB(s);
    await catchUpAndCompare(s, config, job, ['a_big', 'b']);
    expect(await fieldsOf(s, 'b')).toEqual(['id', 'w', 'v']);
  }, 300_000);

  it('the same, while a DDL of the other table makes the restart catch up first: the pass neither decodes the table nor applies its DDL', async () => {
    const s = await planOnlyScene('ddl_plan_catch');
    const job = 'ddl-plan-catch';
    const config = await writeFloeConfig({ job, warehouse: s.warehouse, serverId: 44_000 + (process.pid % 1000) * 8, include: [`${s.db}.a_big`, `${s.db}.b`], source: { snapshot: { chunkSize: 10, parallelism: 1 } }, commit: { intervalMs: 100, idleCheckpoints: 1 } });
    await killOncePlanned(s, config, job);
    // a_big changed too: the restart decodes its binlog with the definition the lake recorded and
    // reads it up to now (applying a_big's ALTER) before its remaining chunks; b's changes lie in that pass
    await s.conn.query("UPDATE a_big SET v = 'early' WHERE id = 5");
    await changeB(s);
    await s.conn.query('ALTER TABLE a_big ADD COLUMN x INT NOT NULL DEFAULT 3');
    await s.conn.query("UPDATE a_big SET v = 'late', x = 4 WHERE id = 6");
    const last = await catchUpAndCompare(s, config, job, ['a_big', 'b']);
    expect(await fieldsOf(s, 'b')).toEqual(['id', 'w', 'v']);
    expect(await fieldsOf(s, 'a_big')).toEqual(['id', 'v', 'x']);
    // b's ALTER is history for b (copied whole after it): only a_big's is applied
    const applied = last.logs.filter((r) => r.notification === 'schema-change-applied').map((r) => r.table);
    expect(applied).toEqual([`${s.db}.a_big`]);
  }, 300_000);
});

describe('DDLs while floe is down under concurrent DML, and a kill right after a schema change is committed', () => {
  // The interleaving that wedged restarts: a table's rows logged after its committed offset but
  // dropped by the hand-over filter (its later chunks hold them) are never buffered, so the checkpoint
  // before its DDL does not commit the table, and the schema change committed after it stood with
  // the table's offset still before those rows.
  it.each([0, 1, 2])('killed after schema change %i of 3: every later start decodes each row with the definition of its position', async (n) => {
    const s = await scene(`ddl_kill_${n}`, SHOP_SCHEMA);
    const job = 'ddl-kill';
    const serverId = 42_000 + (process.pid % 1000) * 8;
    const include = SHOP_TABLES.map((t) => `${s.db}.${t}`);
    const config = await writeFloeConfig({ job, warehouse: s.warehouse, serverId, include, commit: { intervalMs: 1000 } });
    // small chunks, one at a time, and no commit before the hand-over's
    const firstConfig = await writeFloeConfig({ job, warehouse: s.warehouse, serverId, include, source: { snapshot: { chunkSize: 20, parallelism: 1 } }, commit: { intervalMs: 60_000 }, configName: 'first' });
    const writerConn = await sql();
    connections.push(writerConn);
    await writerConn.query(`USE \`${s.db}\``);
    // ~150 transactions a second of other DML, all along
    const writer = new ShopWriter(writerConn, 7 + n);
    writer.only = new Set(['customers', 'audit']);
    try {
      writer.start();
      const first = new FloeProcess(firstConfig);
      try {
        const started = await first.waitFor((r) => r.notification === 'snapshot-started');
        expect(started, first.tail()).toBeDefined();
        // while the snapshot copies audit (first in name order): changes to the tables it copies
        // later, after the first chunk's high watermark (where the tables resume) and before their
        // own chunks' (the hand-over filter drops them)
        await sleep(300);
        for (let i = 0; i < 20; i++) {
          await s.conn.query(`UPDATE orders SET note = 'early ${i}' WHERE id = ${990 - i}`);
          await s.conn.query(`UPDATE items SET label = 'early ${i}' WHERE id = ${590 - i}`);
          await s.conn.query(`UPDATE payments SET paid = 1 - paid WHERE id = ${390 - i}`);
        }
        const streaming = await first.waitFor((r) => r.notification === 'streaming-started');
        expect(streaming, first.tail()).toBeDefined();
        await sleep(300);
      } finally {
        first.kill('SIGKILL');
        await first.exited;
      }
      // the altered tables resume from before those changes, which the binlog holds in the old layout
      for (const t of SHOP_ALTERED) {
        const table = await loadCatalogTable(s.catalog, { namespace: [s.db], name: t });
        expect(JSON.parse(lastCommitted(table.metadata, job)!.sourceOffset).snapshot, `${t} resumes with its chunk plan`).toBeDefined();
      }
      // while floe is down: the three ALTERs among other DML
      await sleep(500);
      for (const ddl of SHOP_DDL) {
        await s.conn.query(ddl);
        await sleep(200);
      }
      await sleep(500);
      // the next run applies the schema changes and dies right after the n-th one's commit
      const second = new FloeProcess(config, { env: { FLOE_FAILPOINTS: `after-schema-change-commit:${n}:exit` } });
      const exit = await Promise.race([second.exited, sleep(120_000).then(() => undefined)]);
      expect(exit, `the run did not reach schema change ${n}:\n${second.tail()}`).toEqual({ code: null, signal: 'SIGKILL' });
      expect(second.logs.filter((r) => r.msg === 'schema change applied').length).toBe(n);
    } finally {
      await writer.stop();
    }
    expect(writer.transactions).toBeGreaterThan(300);
    expect(writer.failures, writer.failures.slice(0, 3).join('\n')).toHaveLength(0);
    await catchUpAndCompare(s, config, job, SHOP_TABLES);
  }, 600_000);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
