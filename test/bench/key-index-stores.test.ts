/**
 * `npm run bench:key-index-stores` cannot rot: the store comparison (bench/key-index-stores.ts) runs
 * end to end with 2,000 keys — floe's SQLite index, lmdb and LevelDB (classic-level) loaded from
 * their prebuilt binaries, every lookup and the last checkpoint batch's keys checked by the script
 * itself — and every figure is in its JSON output. No timing assertion: the figures are only
 * checked to be there and positive. Its arguments are checked as well (a wrong one is exit code 2).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { StoresResult } from '../../bench/key-index-stores.js';
import { parseStoresArgs } from '../../bench/key-index-stores.js';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'floe-kstore-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm run bench:key-index-stores', () => {
  it('measures the three stores with 2,000 keys and reports every figure', async () => {
    const json = join(dir, 'stores.json');
    const stores = join(dir, 'stores');
    mkdirSync(stores);
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'bench/key-index-stores.ts', '--keys', '2000', '--batch', '100', '--batches', '3', '--dir', stores, '--json', json], {
      cwd: join(import.meta.dirname, '..', '..'),
      maxBuffer: 1 << 24,
      timeout: 110_000,
    });
    const result = JSON.parse(readFileSync(json, 'utf8')) as StoresResult;
    expect(result.failures).toEqual([]);
    expect(result.figures.map((f) => `${f.store} ${f.key}`)).toEqual(['sqlite BIGINT', 'lmdb BIGINT', 'leveldb BIGINT', 'sqlite (BIGINT, VARCHAR)', 'lmdb (BIGINT, VARCHAR)', 'leveldb (BIGINT, VARCHAR)']);
    for (const f of result.figures) {
      expect(f.keys).toBe(2000);
      expect(f.lookups).toBe(2000);
      expect(f.batches).toBe(3);
      expect(f.batchKeys).toBe(100);
      for (const v of [f.buildSeconds, f.buildKeysPerSecond, f.bytesPerKey, f.lookupsPerSecond, f.lookupsPerCpuSecond, f.batchesPerSecond, f.slowestBatchSeconds, f.bytesPerKeyAfterBatches, f.disk.bytes, f.disk.files]) expect(v).toBeGreaterThan(0);
    }
    // SQLite: the database, its WAL and shared memory; lmdb: data and lock
    expect(result.figures.find((f) => f.store === 'sqlite')!.disk.files).toBe(3);
    expect(result.figures.find((f) => f.store === 'lmdb')!.disk.files).toBe(2);
    expect(result.machine.server).toMatch(/SQLite 3\.\d+.*lmdb \d.*classic-level \d/);
    expect(stdout).toMatch(/^sqlite +BIGINT +[\d,]+ +[\d.]+ +3 +[\d,]+ +1\.00× +[\d,]+ +1\.00×/m);
    expect(stdout).toMatch(/^leveldb, \(BIGINT, VARCHAR\) key: 2,000 keys, [\d.]+ bytes\/key on disk in \d+ files \(#\.log .*\), [\d,]+ lookups\/s \([\d,]+ per CPU-s\)/m);
    // every store's directory is removed afterwards
    expect(readdirSync(stores)).toEqual([]);
  }, 120_000);

  it('rejects a wrong argument with what it expected', async () => {
    expect(() => parseStoresArgs(['--keys', '0'])).toThrow(/--keys expects a whole number of at least 1, found "0"/);
    expect(() => parseStoresArgs(['--stores', 'sqlite,rocksdb'])).toThrow(/--stores expects a comma-separated list of sqlite, lmdb, leveldb/);
    expect(parseStoresArgs(['--keys', '1_000', '--stores', 'lmdb']).options.keys).toBe(1000);
    const r = await run(process.execPath, ['--import', 'tsx', 'bench/key-index-stores.ts', '--frobnicate'], { cwd: join(import.meta.dirname, '..', '..') }).catch((e: { code: number; stderr: string }) => e);
    expect(r).toMatchObject({ code: 2 });
    expect((r as { stderr: string }).stderr).toMatch(/unknown argument "--frobnicate"/);
  });
});
