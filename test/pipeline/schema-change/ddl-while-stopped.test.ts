/**
 * A schema change made while floe is stopped: rows written before it, the DDL, rows written after
 * it, then floe starts again. The binlog from each table's committed offset still holds rows of the
 * old layout, so floe decodes them with the definition the lake recorded, applies the DDL by the
 * schema-change policy when the binlog reaches it, and decodes on with the new definition. Covered:
 * ADD (old rows read the initial-default), DROP, RENAME, MODIFY (widening), several DDLs in a row,
 * a stop by signal (everything committed) and a SIGKILL (the committed offset lags what was read),
 * and a table that stayed idle (its offset lags the others') next to the changed one.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalogTable } from '../../../src/iceberg/table/index.js';
import { typeToString } from '../../../src/iceberg/types.js';
import { SOURCE_SCHEMA_PROPERTY } from '../../../src/pipeline/source-schema-record.js';
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
