/**
 * Keyless tables with identical rows, format v3, end to end on the harness server (MariaDB; MySQL 8
 * in the mysql8 project): a binlog DELETE or UPDATE removes exactly ONE copy (`… LIMIT 1`), as
 * MySQL does — through a deletion vector found with the table's row index, never an equality delete
 * (which would remove every copy). Checked while streaming, after restarts (the row index built from
 * the lake again) and after a compaction between runs. The lake equals MySQL as a multiset,
 * and no snapshot of the table ever added an equality-delete file (read from its manifests). Run
 * twice: the row index in memory, and on disk (a memory bound of 0 bytes: sqlite-value-index.ts).
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { parseConfig } from '../../src/config/load.js';
import type { FloeConfig } from '../../src/config/schema.js';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import { rewriteDataFilesWithDeletes } from '../../src/iceberg/maintenance/rewrite-data-files.js';
import { silentLogger } from '../../src/pipeline/observe/logger.js';
import { FanOutNotifier, RecordingSink } from '../../src/pipeline/observe/notifications.js';
import { runPipeline, type RunResult } from '../../src/pipeline/runner.js';
import { createTestDatabase, sharedMysqlConfig } from '../support/shared-mysql.js';
import { sql } from '../source/mysql/binlog/helpers.js';
import { serverPosition, waitForCatchUp } from './support/catch-up.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from './support/lake-compare.js';
import { addedDeleteFiles } from '../support/lake-integrity.js';

process.env.TZ ??= 'Asia/Seoul';

const JOB = 'keyless-dups';
const TABLE = 'dups';

/** The whole run, with the row index in memory or (a memory bound of 0 bytes) on disk. */
function keylessSuite(tier: 'memory' | 'disk'): void {
  let db: string;
  let conn: mysql.Connection;
  let warehouse: string;
  let config: FloeConfig;
  let catalog: FileSystemCatalog;

  const exec = (statement: string): Promise<unknown> => conn.query(statement);
  const identifier = () => ({ namespace: [db], name: TABLE });

  beforeAll(async () => {
    db = await createTestDatabase(`keyless_dups_${tier}`);
    conn = await sql();
    await conn.query(`USE \`${db}\``);
    // a FLOAT column: equality deletes cannot use it, the row index holds it by its float32 value
    await exec(`CREATE TABLE ${TABLE} (a INT, s VARCHAR(20), f FLOAT, d DECIMAL(6,2))`);
    await exec(`INSERT INTO ${TABLE} VALUES (1, 'x', 1.1, 2.50), (1, 'x', 1.1, 2.50), (1, 'x', 1.1, 2.50), (2, 'y', NULL, NULL), (2, 'y', NULL, NULL), (3, 'z', -0.5, 0.00)`);
    warehouse = await mkdtemp(join(tmpdir(), 'floe-keyless-dups-'));
    const server = sharedMysqlConfig();
    config = parseConfig({
      job: { id: JOB },
      source: { host: server.host, port: server.port, user: server.user, password: server.password, serverId: 21_000 + (process.pid % 5000) * 8, include: [`${db}.${TABLE}`] },
      warehouse: { location: warehouse },
      iceberg: { formatVersion: 3, ...(tier === 'disk' ? { keyIndex: { memoryMaxBytes: 0 } } : {}) },
      ...(tier === 'disk' ? { stateDir: join(warehouse, '.state') } : {}),
      commit: { intervalMs: 300, idleCheckpoints: 2 },
    });
    catalog = new FileSystemCatalog({ warehouse });
  });

  afterAll(async () => {
    await conn?.end();
    if (warehouse) await rm(warehouse, { recursive: true, force: true });
  });

  interface Running {
    result: Promise<RunResult>;
    stop: () => Promise<RunResult>;
  }

  async function start(): Promise<Running> {
    const controller = new AbortController();
    const sink = new RecordingSink();
    const result = runPipeline(config, { mode: 'run', signal: controller.signal, notifications: new FanOutNotifier(JOB, [sink], silentLogger), logger: silentLogger });
    await Promise.race([
      sink.waitFor('streaming-started'),
      result.then((res) => {
        throw new Error(`the pipeline ended before streaming: ${res.reason} ${String(res.error)}`);
      }),
    ]);
    return {
      result,
      stop: async () => {
        controller.abort();
        return result;
      },
    };
  }

  async function catchUp(r: Running): Promise<void> {
    const target = await serverPosition({ ...sharedMysqlConfig() });
    let ended: RunResult | undefined;
    void r.result.then((res) => (ended = res));
    await waitForCatchUp(catalog, [{ identifier: identifier(), sourceKey: `${db}.${TABLE}` }], JOB, target, {
      timeoutMs: 60_000,
      check: () => {
        if (ended) throw new Error(`the pipeline ended: ${ended.reason} ${String(ended.error)}`);
      },
    });
  }

  async function expectLakeEqualsMysql(expectedCount: number): Promise<void> {
    const lake = await lakeTableRows(catalog, identifier());
    const expected = await mysqlTableRows({ ...sharedMysqlConfig() }, db, TABLE, lake.columns);
    expect(expected.length).toBe(expectedCount);
    expect({ ...multisetDifference(expected, lake.rows), count: lake.rows.length }).toEqual({ missing: [], unexpected: [], count: expected.length });
  }

  describe(`keyless duplicates through deletion vectors (format v3), the row index ${tier === 'disk' ? 'on disk' : 'in memory'}`, () => {
    it('DELETE … LIMIT 1 and UPDATE … LIMIT 1 remove exactly one copy, through restarts and a compaction; no equality delete', async () => {
      const first = await start();
      await catchUp(first); // the snapshot of the six rows is committed
      await exec(`DELETE FROM ${TABLE} WHERE a = 1 LIMIT 1`);
      await exec(`UPDATE ${TABLE} SET s = 'w' WHERE a = 2 LIMIT 1`);
      // within one transaction: two new copies and one of them deleted again, plus a committed copy
      await conn.beginTransaction();
      await exec(`INSERT INTO ${TABLE} VALUES (4, 'q', 0, 1.00), (4, 'q', 0, 1.00)`);
      await exec(`DELETE FROM ${TABLE} WHERE a = 4 LIMIT 1`);
      await exec(`DELETE FROM ${TABLE} WHERE a = 1 LIMIT 1`);
      await conn.commit();
      await catchUp(first);
      if (tier === 'disk') {
        // beyond a memory bound of 0 bytes the row index lives in SQLite under the state directory
        expect((await readdir(join(warehouse, '.state', JOB))).filter((f) => f.endsWith('.valueindex.sqlite'))).toHaveLength(1);
      }
      expect((await first.stop()).reason).toBe('stopped');
      await expectLakeEqualsMysql(5); // (1,x) ×1, (2,y), (2,w), (3,z), (4,q)

      // a clean restart: the row index is built from the lake
      const second = await start();
      await exec(`INSERT INTO ${TABLE} VALUES (5, 'p', 2.25, 9.99), (5, 'p', 2.25, 9.99), (5, 'p', 2.25, 9.99)`);
      await catchUp(second);
      await exec(`DELETE FROM ${TABLE} WHERE a = 5 LIMIT 1`);
      await catchUp(second);
      await exec(`UPDATE ${TABLE} SET d = 0.01 WHERE a = 5 LIMIT 1`);
      await catchUp(second);
      expect((await second.stop()).reason).toBe('stopped');
      await expectLakeEqualsMysql(7);

      // another restart, right after the commit that deleted (the SIGKILLs of test/e2e/crash-restart.test.ts
      // cover crashes: the row index lives in memory only, so a crash restart builds it from the lake
      // as a clean one does)
      const third = await start();
      await exec(`DELETE FROM ${TABLE} WHERE a = 5 AND d = 9.99 LIMIT 1`);
      await catchUp(third);
      expect((await third.stop()).reason).toBe('stopped');
      await expectLakeEqualsMysql(6);
      const fourth = await start();
      await exec(`DELETE FROM ${TABLE} WHERE a = 5 LIMIT 1`);
      await catchUp(fourth);
      expect((await fourth.stop()).reason).toBe('stopped');
      await expectLakeEqualsMysql(5);

      // floe's compaction between runs moves every row: the next run's index is built from the new files
      await exec(`INSERT INTO ${TABLE} VALUES (6, 'r', 1.5, 3.00), (6, 'r', 1.5, 3.00)`);
      const fifth = await start();
      await catchUp(fifth);
      expect((await fifth.stop()).reason).toBe('stopped');
      const compacted = await rewriteDataFilesWithDeletes(await loadCatalogTable(catalog, identifier()));
      expect(compacted.skipped).toBeUndefined();
      const sixth = await start();
      await exec(`DELETE FROM ${TABLE} WHERE a = 6 LIMIT 1`);
      await exec(`UPDATE ${TABLE} SET s = 'xx' WHERE a = 1 LIMIT 1`);
      await catchUp(sixth);
      expect((await sixth.stop()).reason).toBe('stopped');
      await expectLakeEqualsMysql(6);

      const deletes = await addedDeleteFiles(await loadCatalogTable(catalog, identifier()));
      expect(deletes.equality).toBe(0);
      expect(deletes.dvs).toBeGreaterThan(0);
    }, 240_000);
  });
}

keylessSuite('memory');
keylessSuite('disk');
