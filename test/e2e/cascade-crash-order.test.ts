/**
 * A grandchild that references a cascade child by the child's key, killed between the two
 * commits of the checkpoint that removes their rows. MySQL logs only the parent's DELETE; floe
 * finds the child rows it removed in the child's lake, and through their keys the grandchild rows
 * (pipeline/key-cascades.ts). So the grandchild commits first (checkpoint.ts `commitFirst`): a
 * restart then finds the child behind, replays the delete with the child's rows still there, and
 * the grandchild, already past it, skips what it gets. Had the child committed first, the restart
 * would replay the delete for the grandchild only, with the removed child rows gone from the lake,
 * and the grandchild would keep its orphans.
 *
 * `floe run` (a child process, filesystem catalog, format v3) is killed at a catalog swap
 * (`after-catalog-swap` failpoint, SIGKILL-like) in the checkpoint after a parent delete, round after
 * round, until a kill has landed with the grandchild committed and the child not; after each round a
 * clean run catches up, and the lake equals MySQL. Runs on MariaDB and MySQL 8.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { lastCommitted } from '../../src/iceberg/checkpoint/index.js';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import { openTestDatabase, sharedMysqlConfig, sharedSource } from '../support/shared-mysql.js';
import { catchUpTables, whileRunning } from './support/catch-up.js';
import { FloeProcess } from './support/floe-process.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from './support/lake-compare.js';
import { addedDeleteFiles } from '../support/lake-integrity.js';

process.env.TZ ??= 'Asia/Seoul';

const JOB = 'cascade-order';
const TABLES = ['a_parent', 'b_child', 'c_note'];
const PARENTS = 12;

let db: string;
let conn: mysql.Connection;
let dir: string;
let configPath: string;
let catalog: FileSystemCatalog;

beforeAll(async () => {
  ({ db, conn } = await openTestDatabase('cascade_order'));
  await conn.query('CREATE TABLE a_parent (id INT PRIMARY KEY)');
  await conn.query('CREATE TABLE b_child (id INT PRIMARY KEY, pid INT NOT NULL, CONSTRAINT b_a FOREIGN KEY (pid) REFERENCES a_parent (id) ON DELETE CASCADE)');
  await conn.query('CREATE TABLE c_note (id INT PRIMARY KEY, cid INT NOT NULL, body VARCHAR(20), CONSTRAINT c_b FOREIGN KEY (cid) REFERENCES b_child (id) ON DELETE CASCADE)');
  await conn.query(`INSERT INTO a_parent VALUES ${Array.from({ length: PARENTS }, (_, i) => `(${i + 1})`).join(', ')}`);
  await conn.query(`INSERT INTO b_child VALUES ${Array.from({ length: PARENTS * 5 }, (_, i) => `(${i + 1}, ${1 + (i % PARENTS)})`).join(', ')}`);
  await conn.query(`INSERT INTO c_note VALUES ${Array.from({ length: PARENTS * 10 }, (_, i) => `(${i + 1}, ${1 + (i % (PARENTS * 5))}, 'n${i}')`).join(', ')}`);
  dir = await mkdtemp(join(tmpdir(), 'floe-e2e-cascade-order-'));
  configPath = join(dir, 'floe.json');
  await writeFile(
    configPath,
    JSON.stringify({ job: { id: JOB }, source: sharedSource(44_000, db, TABLES), warehouse: { location: join(dir, 'warehouse') }, iceberg: { formatVersion: 3 }, commit: { intervalMs: 500, idleCheckpoints: 1 } }),
  );
  catalog = new FileSystemCatalog({ warehouse: join(dir, 'warehouse') });
});

afterAll(async () => {
  await conn?.end();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const identifier = (t: string) => ({ namespace: [db], name: t });

/** The checkpoint id each table last committed. */
async function lastIds(): Promise<Record<string, bigint | undefined>> {
  const out: Record<string, bigint | undefined> = {};
  for (const t of TABLES) out[t] = lastCommitted((await loadCatalogTable(catalog, identifier(t))).metadata, JOB)?.snapshotCheckpointId;
  return out;
}

/** A clean run that catches up with the server and stops. */
async function catchUpCleanly(): Promise<void> {
  const p = new FloeProcess(configPath);
  try {
    await catchUpTables({ catalog, job: JOB, db, tables: TABLES }, { server: sharedMysqlConfig(), timeoutMs: 60_000, check: whileRunning(p) });
  } finally {
    p.kill('SIGTERM');
  }
  expect(await p.exited, p.tail()).toEqual({ code: 0, signal: null });
}

async function expectLakeEqualsMysql(round: string): Promise<void> {
  for (const t of TABLES) {
    const lake = await lakeTableRows(catalog, identifier(t));
    const expected = await mysqlTableRows({ ...sharedMysqlConfig() }, db, t, lake.columns);
    expect({ round, table: t, ...multisetDifference(expected, lake.rows) }).toEqual({ round, table: t, missing: [], unexpected: [] });
  }
}

describe('cascades through keys, killed between the grandchild and the child commit', () => {
  it('the grandchild commits first, so a restart replays the delete against the child rows and the lake equals MySQL', async () => {
    await catchUpCleanly();
    await expectLakeEqualsMysql('snapshot');
    const landed: string[] = [];
    for (let round = 1; round <= PARENTS && landed.length < 2; round++) {
      const before = await lastIds();
      // the kill: at the first or second catalog swap of the run, which is the checkpoint of the delete
      const swap = round % 2;
      const p = new FloeProcess(configPath, { env: { FLOE_FAILPOINTS: `after-catalog-swap:${swap}:exit` } });
      await p.waitFor((r) => r.notification === 'streaming-started');
      await conn.query(`DELETE FROM a_parent WHERE id = ${round}`);
      const exit = await Promise.race([p.exited, new Promise<undefined>((r) => setTimeout(r, 30_000, undefined))]);
      if (exit?.signal !== 'SIGKILL') {
        p.kill('SIGKILL');
        throw new Error(`expected floe to die at its failpoint, found ${JSON.stringify(exit)}:\n${p.tail()}`);
      }
      const after = await lastIds();
      const moved = (t: string) => after[t] !== before[t];
      // with the grandchild first, the child never lands without it
      expect({ round, childAlone: moved('b_child') && !moved('c_note') }).toEqual({ round, childAlone: false });
      if (moved('c_note') && !moved('b_child')) landed.push(`round ${round}: the grandchild committed, the child not`);
      await catchUpCleanly();
      await expectLakeEqualsMysql(`round ${round}`);
    }
    console.log(landed.join('; '));
    expect(landed.length, 'no kill landed between the grandchild and the child commit').toBeGreaterThan(0);
    const [[{ n }]] = (await conn.query('SELECT COUNT(*) AS n FROM c_note')) as unknown as [{ n: number }[]];
    expect(Number(n)).toBeLessThan(PARENTS * 10); // the server did cascade
    for (const t of TABLES) expect((await addedDeleteFiles(await loadCatalogTable(catalog, identifier(t)))).equality).toBe(0);
  });
});
