/**
 * A schema change made while floe is stopped: rows written before it, the DDL, rows written after
 * it, then floe starts again. The binlog from each table's committed offset still holds rows of the
 * old layout, so floe decodes them with the definition the lake recorded, applies the DDL by the
 * schema-change policy when the binlog reaches it, and decodes on with the new definition. Covered:
 * ADD (old rows read the initial-default), DROP, RENAME, MODIFY (widening), several DDLs in a row,
 * a stop by signal (everything committed) and a SIGKILL (the committed offset lags what was read),
 * and a table that stayed idle (its offset lags the others') next to the changed one; and a table
 * stopped mid-snapshot (SIGKILL and SIGTERM), where the restart reads the binlog up to now first —
 * applying the DDL in order — and copies the remaining chunks with the definition it left.
 */
import { readdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { currentSnapshot } from '../../../src/iceberg/spec/snapshot-ids.js';
import { loadCatalogTable } from '../../../src/iceberg/table/index.js';
import { typeToString } from '../../../src/iceberg/spec/types.js';
import { SOURCE_SCHEMA_PROPERTY } from '../../../src/pipeline/schema-change/source-schema-record.js';
import { sharedMysqlConfig } from '../../support/shared-mysql.js';
import { FloeProcess } from '../../e2e/support/floe-process.js';
import { openHarness, type Harness } from './pipeline-harness.js';

process.env.TZ ??= 'Asia/Seoul';

let h: Harness;

beforeAll(async () => {
  h = await openHarness('ddl_stopped', 'ddl-stopped', ['t', 'idle', 'k'], [
    'CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))',
    "INSERT INTO t VALUES (1, 'a'), (2, 'b')",
    'CREATE TABLE idle (id INT PRIMARY KEY, x INT)',
    'INSERT INTO idle VALUES (1, 10)',
    'CREATE TABLE k (id INT PRIMARY KEY, v VARCHAR(20), q INT)',
    "INSERT INTO k VALUES (1, 'one', 1)",
  ]);
});

afterAll(async () => {
  await h?.close();
});

async function fields(table: string) {
  const t = await loadCatalogTable(h.catalog, { namespace: [h.db], name: table });
  return { fields: t.metadata.schemas.find((s) => s.schemaId === t.metadata.currentSchemaId)!.fields, properties: t.metadata.properties };
}

async function runUntilCaughtUp(): Promise<void> {
  const run = h.start();
  try {
    await h.untilStreaming(run);
    await h.catchUp(run, ['t', 'idle', 'k']);
  } finally {
    const result = await run.stop();
    expect(result.error === undefined ? result.reason : String(result.error)).toBe('stopped');
  }
}

describe('a DDL made while floe is stopped', () => {
  it('ADD COLUMN after a clean stop: rows before it decode with the recorded definition, old rows read the default', async () => {
    await runUntilCaughtUp();
    expect(JSON.parse((await fields('t')).properties[SOURCE_SCHEMA_PROPERTY]!).columns.map((c: { name: string }) => c.name)).toEqual(['id', 'v']);

    await h.exec("INSERT INTO t VALUES (3, 'c')");
    await h.exec('ALTER TABLE t ADD COLUMN n INT NOT NULL DEFAULT 7');
    await h.exec("INSERT INTO t VALUES (4, 'd', 8)");
    await h.exec("UPDATE t SET v = 'bb' WHERE id = 2");

    await runUntilCaughtUp();
    await h.expectLakeEqualsMysql('t');
    await h.expectLakeEqualsMysql('idle');
    const { fields: f, properties } = await fields('t');
    expect(f.find((x) => x.name === 'n')).toMatchObject({ required: true, initialDefault: 7, writeDefault: 7 });
    expect(JSON.parse(properties[SOURCE_SCHEMA_PROPERTY]!).columns.map((c: { name: string }) => c.name)).toEqual(['id', 'v', 'n']);

    // and a third start, with nothing new, is uneventful
    await runUntilCaughtUp();
    await h.expectLakeEqualsMysql('t');
  });

  it('RENAME, MODIFY, DROP and ADD in a row, with rows between each, while the other tables stay idle', async () => {
    await h.exec("INSERT INTO t VALUES (5, 'e', 5)");
    await h.exec('ALTER TABLE t RENAME COLUMN v TO label');
    await h.exec("INSERT INTO t VALUES (6, 'f', 6)");
    await h.exec("UPDATE t SET label = 'a2' WHERE id = 1");
    await h.exec('ALTER TABLE t MODIFY n BIGINT NOT NULL DEFAULT 7');
    await h.exec("INSERT INTO t VALUES (7, 'g', 9000000000)");
    await h.exec('ALTER TABLE t DROP COLUMN label');
    await h.exec('INSERT INTO t VALUES (8, 8)');
    await h.exec("ALTER TABLE t ADD COLUMN note VARCHAR(10) DEFAULT 'none'");
    await h.exec("INSERT INTO t VALUES (9, 9, 'nine')");
    await h.exec('DELETE FROM t WHERE id = 3');

    await runUntilCaughtUp();
    await h.expectLakeEqualsMysql('t');
    await h.expectLakeEqualsMysql('idle');
    const { fields: f } = await fields('t');
    expect(f.map((x) => x.name)).toEqual(['id', 'n', 'note']);
    expect(typeToString(f.find((x) => x.name === 'n')!.type)).toBe('long');
    expect(f.find((x) => x.name === 'note')).toMatchObject({ initialDefault: 'none' });
  });

  it('after a SIGKILL: the committed offsets lag, the DDL and the rows around it are read again', async () => {
    const config = join(h.config.warehouse.location!, '..', `floe-ddl-stopped-${process.pid}.json`);
    const server = sharedMysqlConfig();
    await writeFile(
      config,
      JSON.stringify({
        job: { id: 'ddl-stopped' },
        source: { host: server.host, port: server.port, user: server.user, password: server.password, serverId: h.config.source!.serverId + 3, include: ['t', 'idle', 'k'].map((t) => `${h.db}.${t}`) },
        warehouse: { location: h.config.warehouse.location },
        commit: { intervalMs: 200, idleCheckpoints: 1 },
      }),
    );
    const floe = new FloeProcess(config);
    try {
      const streaming = await floe.waitFor((r) => r.notification === 'streaming-started');
      expect(streaming, `floe exited before streaming: ${floe.text.join('\n')}`).toBeDefined();
      await h.exec("INSERT INTO k VALUES (2, 'two', 2)");
      await new Promise((r) => setTimeout(r, 1_000)); // a commit interval or five: likely committed
      // the writes floe has read but maybe not committed when it dies
      await h.exec("INSERT INTO k VALUES (3, 'three', 3)");
      await h.exec("UPDATE k SET q = 20 WHERE id = 2");
    } finally {
      floe.child.kill('SIGKILL');
      await floe.exited;
    }
    await h.exec("INSERT INTO k VALUES (4, 'four', 4)");
    await h.exec('ALTER TABLE k ADD COLUMN z INT DEFAULT 5, MODIFY q BIGINT, RENAME COLUMN v TO w');
    await h.exec("INSERT INTO k VALUES (5, 'five', 5, 55)");
    await h.exec('ALTER TABLE k DROP COLUMN w');
    await h.exec('INSERT INTO k VALUES (6, 6, 66)');
    await h.exec("UPDATE idle SET x = 11 WHERE id = 1");

    await runUntilCaughtUp();
    await h.expectLakeEqualsMysql('k');
    await h.expectLakeEqualsMysql('idle');
    await h.expectLakeEqualsMysql('t');
    const { fields: f } = await fields('k');
    expect(f.map((x) => x.name)).toEqual(['id', 'q', 'z']);
  });
});

describe('a DDL made while a snapshot is unfinished', () => {
  let s: Harness;
  // 20,000 rows in chunks of 20 (1,000 chunks, one at a time): the stop comes mid-snapshot (4,000
  // were too few once the snapshot got faster: the whole table was read before the stop)
  const ROWS = 20_000;
  const LAST = ROWS - 1;
  const open = async () => {
    s = await openHarness('ddl_midsnap', 'ddl-midsnap', ['big', 'side'], [
      'CREATE TABLE big (id INT PRIMARY KEY, v VARCHAR(20), w INT, gone INT)',
      ...Array.from({ length: ROWS / 1000 }, (_, b) => `INSERT INTO big VALUES ${Array.from({ length: 1000 }, (_, i) => `(${b * 1000 + i}, 'v${b * 1000 + i}', ${i}, ${i % 7})`).join(', ')}`),
      'CREATE TABLE side (id INT PRIMARY KEY, x INT)',
      'INSERT INTO side VALUES (1, 1)',
    ]);
  };
  afterEach(async () => {
    await s?.close();
  });

  it.each(['SIGKILL', 'SIGTERM'] as const)('%s mid-snapshot, then ADD, RENAME, MODIFY and DROP with rows around them: the restart applies the DDL first and snapshots the rest with the new definition', async (signal) => {
    await open();
    const config = join(s.config.warehouse.location!, '..', `floe-ddl-midsnap-${process.pid}.json`);
    const server = sharedMysqlConfig();
    await writeFile(
      config,
      JSON.stringify({
        job: { id: 'ddl-midsnap' },
        source: { host: server.host, port: server.port, user: server.user, password: server.password, serverId: s.config.source!.serverId + 3, include: ['big', 'side'].map((t) => `${s.db}.${t}`), snapshot: { chunkSize: 20, parallelism: 1 } },
        warehouse: { location: s.config.warehouse.location },
        commit: { intervalMs: 100, idleCheckpoints: 1 },
      }),
    );
    const floe = new FloeProcess(config);
    let records = 0;
    try {
      const deadline = Date.now() + 60_000;
      while (records === 0) {
        if (floe.hasExited) throw new Error(`floe exited: ${floe.tail()}`);
        if (Date.now() > deadline) throw new Error(`no chunk committed within 60 s: ${floe.tail()}`);
        await new Promise((r) => setTimeout(r, 20));
        if (await s.catalog.tableExists({ namespace: [s.db], name: 'big' })) {
          const t = await loadCatalogTable(s.catalog, { namespace: [s.db], name: 'big' });
          records = Number(currentSnapshot(t.metadata)?.summary['total-records'] ?? 0);
        }
      }
    } finally {
      floe.kill(signal);
      const exitedInTime = await Promise.race([floe.exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 30_000))]);
      if (!exitedInTime) {
        floe.kill('SIGKILL');
        throw new Error(`floe did not exit within 30 s of ${signal}: ${floe.tail()}`);
      }
    }
    const after = await loadCatalogTable(s.catalog, { namespace: [s.db], name: 'big' });
    expect(Number(currentSnapshot(after.metadata)?.summary['total-records'] ?? 0), 'the kill came after the snapshot had finished; make it slower').toBeLessThan(ROWS);

    // changes of rows in chunks already copied and in chunks still to copy, around the DDLs
    await s.exec(`UPDATE big SET v = 'early' WHERE id IN (0, 1, ${LAST})`);
    await s.exec(`DELETE FROM big WHERE id IN (2, ${LAST - 1})`);
    await s.exec('ALTER TABLE big ADD COLUMN n INT NOT NULL DEFAULT 7 AFTER v, RENAME COLUMN w TO width');
    await s.exec(`INSERT INTO big (id, v, n, width, gone) VALUES (${ROWS + 1000}, 'new', 8, 1, 1)`);
    await s.exec(`UPDATE big SET n = 9 WHERE id IN (4, ${LAST - 2})`);
    await s.exec('ALTER TABLE big DROP COLUMN gone, MODIFY width BIGINT');
    await s.exec(`INSERT INTO big (id, v, n, width) VALUES (${ROWS + 1001}, 'newer', 10, 2)`);
    await s.exec(`UPDATE big SET width = -1 WHERE id IN (5, ${LAST - 3})`);
    await s.exec('UPDATE big SET width = 9000000000 WHERE id = 6');
    await s.exec('UPDATE side SET x = 2');

    const run = s.start();
    try {
      await s.untilStreaming(run);
      await s.catchUp(run, ['big', 'side']);
    } finally {
      const result = await run.stop();
      expect(result.error === undefined ? result.reason : String(result.error)).toBe('stopped');
    }
    await s.expectLakeEqualsMysql('big');
    await s.expectLakeEqualsMysql('side');
    const t = await loadCatalogTable(s.catalog, { namespace: [s.db], name: 'big' });
    const f = t.metadata.schemas.find((x) => x.schemaId === t.metadata.currentSchemaId)!.fields;
    expect(f.map((x) => x.name)).toEqual(['id', 'v', 'width', 'n']); // Iceberg appends added fields
    expect(f.find((x) => x.name === 'n')).toMatchObject({ initialDefault: 7 });
    expect(typeToString(f.find((x) => x.name === 'width')!.type)).toBe('long');
    // the snapshot's state objects are gone once the table streams past every chunk
    const stateDir = join(fileURLToPath(t.metadata.location), '.floe', 'state');
    expect(await readdir(stateDir).catch(() => [])).toEqual([]);
  });
});
