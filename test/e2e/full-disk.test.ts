/**
 * A full disk: the local warehouse lives on a size-limited tmpfs that the snapshot overflows. floe
 * must stop with an error that says the disk is full, leave every committed snapshot intact (each
 * file its metadata reaches is there and reads), and — once the filesystem has room again — a
 * restart completes with the lake equal to MySQL.
 *
 * Mounting needs root (CAP_SYS_ADMIN); elsewhere the test is skipped with a message, unless
 * FLOE_FULL_DISK_REQUIRED=1 makes that a failure (.ci/run runs as root).
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import { reachableFiles } from '../support/lake-integrity.js';
import { createTestDatabase, sharedMysqlConfig } from '../support/shared-mysql.js';
import { sql } from '../source/mysql/binlog/helpers.js';
import { FloeProcess } from './support/floe-process.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from './support/lake-compare.js';

process.env.TZ ??= 'Asia/Seoul';

const run = promisify(execFile);
const JOB = 'full-disk';
const ROWS = 6000;
let root: string | undefined;
let mountPoint: string | undefined;
let skipReason: string | undefined;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'floe-full-disk-'));
  mountPoint = join(root, 'disk');
  await mkdir(mountPoint);
  try {
    // 6 MiB: the table's rows hold ~18 MiB of random hex (~9 MiB compressed), so the snapshot cannot fit
    await run('mount', ['-t', 'tmpfs', '-o', 'size=6m', 'tmpfs', mountPoint]);
  } catch (e) {
    skipReason = `cannot mount a size-limited tmpfs (needs root): ${(e as Error).message.split('\n')[0]}`;
    if (process.env.FLOE_FULL_DISK_REQUIRED === '1') throw new Error(`FLOE_FULL_DISK_REQUIRED=1 but ${skipReason}`);
    console.warn(`full-disk test skipped: ${skipReason}`);
  }
});

afterAll(async () => {
  if (mountPoint && !skipReason) await run('umount', [mountPoint]).catch(() => {}); // best effort; the mount is in a temp dir
  if (root) await rm(root, { recursive: true, force: true });
});

describe('a full disk', () => {
  it('floe stops saying the disk is full, keeps what it committed, and completes after space is freed', async (ctx) => {
    if (skipReason) ctx.skip();
    const db = await createTestDatabase('e2e_full_disk');
    const conn = await sql();
    try {
      await conn.query(`USE \`${db}\``);
      await conn.query('CREATE TABLE blobs (id INT PRIMARY KEY, body TEXT NOT NULL)');
      // random hex: Parquet's compression cannot shrink it below ~half, so the data outgrows the disk
      for (let start = 0; start < ROWS; start += 500) {
        await conn.query(`INSERT INTO blobs SELECT o.seq, (SELECT GROUP_CONCAT(SHA2(CONCAT(RAND(), o.seq, i.seq), 256) SEPARATOR '') FROM seq_1_to_48 i) FROM seq_${start + 1}_to_${start + 500} o`);
      }
    } finally {
      await conn.end();
    }
    const server = sharedMysqlConfig();
    const warehouse = join(mountPoint!, 'lake');
    const configPath = join(root!, 'floe.json');
    await writeFile(
      configPath,
      JSON.stringify({
        job: { id: JOB },
        source: { ...server, serverId: 7201 + (process.pid % 1000), include: [`${db}.blobs`], snapshot: { chunkSize: 250, parallelism: 1 } },
        warehouse: { location: warehouse },
        commit: { intervalMs: 200 },
        maintenance: { enabled: false },
      }),
    );

    const first = new FloeProcess(configPath, { command: 'snapshot' });
    const exit = await exitWithin(first, 60_000);
    expect(exit.code, first.tail()).not.toBe(0);
    const failed = first.logs.find((r) => r.notification === 'failed');
    expect(String(failed?.error), first.tail()).toMatch(/disk is full/i);
    console.log(`first run: ${String(failed?.error)}`);

    // what was committed is intact: every file the metadata reaches exists and the table scans
    const catalog = new FileSystemCatalog({ warehouse });
    const identifier = { namespace: [db], name: 'blobs' };
    if (await catalog.tableExists(identifier)) {
      const table = await loadCatalogTable(catalog, identifier);
      expect((await reachableFiles(table)).missing).toEqual([]);
      const partial = await lakeTableRows(catalog, identifier);
      expect(partial.rows.length).toBeLessThan(ROWS);
      console.log(`committed before the disk filled: ${partial.rows.length} of ${ROWS} rows`);
    }

    // room again: the same mount, larger
    await run('mount', ['-o', 'remount,size=64m', mountPoint!]);
    const second = new FloeProcess(configPath, { command: 'snapshot' });
    const done = await exitWithin(second, 60_000);
    expect(done, second.tail()).toEqual({ code: 0, signal: null });
    const rows = await lakeTableRows(catalog, identifier);
    const expected = await mysqlTableRows({ ...server }, db, 'blobs', rows.columns);
    expect({ ...multisetDifference(expected, rows.rows), rows: rows.rows.length }).toEqual({ missing: [], unexpected: [], rows: ROWS });
    const table = await loadCatalogTable(catalog, identifier);
    expect((await reachableFiles(table)).missing).toEqual([]);
  });
});

/** The process's exit; a process still running after `ms` is killed and the test fails with its output. */
async function exitWithin(p: FloeProcess, ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
  const r = await Promise.race([p.exited, late]);
  clearTimeout(timer);
  if (r === 'late') {
    const output = p.tail(60);
    p.kill('SIGKILL');
    throw new Error(`floe did not exit within ${ms} ms:\n${output}`);
  }
  return r;
}
