/**
 * `floe verify` and cascades whose removed rows only the lake can name (a grandchild referencing a
 * cascade child by the child's key, pipeline/key-cascades.ts), with real `floe` processes against the
 * run's server (MariaDB, and MySQL 8 in the mysql8 project). While the lake is behind a parent delete
 * (floe run stopped), the grandchild's rows cannot be brought to the lake's offset — the binlog does
 * not say which rows the cascade removed — so its chunks are reported unverified, like the child's,
 * never as differing. Once floe run has caught up, everything verifies equal.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { openTestDatabase, sharedMysqlConfig, sharedSource } from '../support/shared-mysql.js';
import { FloeProcess } from './support/floe-process.js';
import { catchUpTables, whileRunning } from './support/catch-up.js';
import { floeVerify, writeConfig } from './support/verify-lake.js';

process.env.TZ ??= 'Asia/Seoul';

const JOB = 'verify-key-cascades';
const TABLES = ['parent', 'child', 'note'];
let db: string;
let conn: mysql.Connection;
let dir: string;
let configPath: string;
let catalog: FileSystemCatalog;

beforeAll(async () => {
  ({ db, conn } = await openTestDatabase('verify_kc'));
  await conn.query('CREATE TABLE parent (id INT PRIMARY KEY)');
  await conn.query('CREATE TABLE child (id INT PRIMARY KEY, pid INT NOT NULL, CONSTRAINT child_parent FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE CASCADE)');
  await conn.query('CREATE TABLE note (id INT PRIMARY KEY, cid INT NOT NULL, CONSTRAINT note_child FOREIGN KEY (cid) REFERENCES child (id) ON DELETE CASCADE)');
  await conn.query(`INSERT INTO parent VALUES ${Array.from({ length: 10 }, (_, i) => `(${i + 1})`).join(', ')}`);
  await conn.query(`INSERT INTO child VALUES ${Array.from({ length: 100 }, (_, i) => `(${i + 1}, ${1 + (i % 10)})`).join(', ')}`);
  await conn.query(`INSERT INTO note VALUES ${Array.from({ length: 300 }, (_, i) => `(${i + 1}, ${1 + (i % 100)})`).join(', ')}`);
  dir = await mkdtemp(join(tmpdir(), 'floe-verify-kc-'));
  configPath = await writeConfig(dir, {
    job: { id: JOB },
    source: sharedSource(46_000, db, TABLES, { snapshot: { chunkSize: 100 } }),
    warehouse: { location: join(dir, 'warehouse') },
    iceberg: { formatVersion: 3 },
    commit: { intervalMs: 300, idleCheckpoints: 1 },
  });
  catalog = new FileSystemCatalog({ warehouse: join(dir, 'warehouse') });
});

afterAll(async () => {
  await conn?.end();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function runUntilCaughtUp(): Promise<void> {
  const p = new FloeProcess(configPath);
  try {
    await catchUpTables({ catalog, job: JOB, db, tables: TABLES }, { server: sharedMysqlConfig(), check: whileRunning(p) });
  } finally {
    p.kill('SIGTERM');
  }
  expect((await p.exited).code, p.tail()).toBe(0);
}

const statuses = (tables: readonly { table: string; status: string }[]) => Object.fromEntries(tables.map((t) => [t.table.slice(db.length + 1), t.status]));

describe('floe verify with key cascades', () => {
  it('reports the grandchild unverified, not differing, while the lake is behind a cascade; equal once floe run caught up', async () => {
    await runUntilCaughtUp();
    // floe run stopped: the lake is behind this delete, which removes 10 children and their 30 notes
    await conn.query('DELETE FROM parent WHERE id = 3');
    const behind = await floeVerify(configPath);
    expect(behind.code, behind.stderr).not.toBe(4);
    expect(statuses(behind.tables)).toEqual({ parent: 'equal', child: 'unverified', note: 'unverified' });
    const note = behind.tables.find((t) => t.table === `${db}.note`)!;
    expect(note.unverifiedChunks.map((c) => c.reason).join('\n')).toMatch(new RegExp(`ON DELETE CASCADE from ${db}\\.parent \\(via child_parent > note_child\\) may have removed rows`));

    await runUntilCaughtUp();
    const caughtUp = await floeVerify(configPath);
    expect(caughtUp.code, caughtUp.stderr).toBe(0);
    expect(statuses(caughtUp.tables)).toEqual({ parent: 'equal', child: 'equal', note: 'equal' });
  });
});
