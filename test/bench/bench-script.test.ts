/**
 * `npm run bench` cannot rot: the benchmark script runs end to end with tiny sizes against the test
 * server (its own database), floe snapshotting and streaming in child processes, the lake verified
 * against MySQL after each phase, and every figure present in its JSON output. No timing assertions:
 * the figures are only checked to be there and positive. The peers are skipped here (--no-peers):
 * test/bench/java-peers.test.ts runs the peers' harnesses (Debezium, Flink CDC).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { BenchResult } from '../../bench/run.js';
import { layoutName } from '../../bench/key-index.js';
import { createTestDatabase } from '../support/shared-mysql.js';

const run = promisify(execFile);
// keys of the key-index micro-benchmarks: enough that the index's memory (~3 MB) stands above the
// process's own movement between the two readings (at 20,000 keys a run on Node 24 read a negative
// heap per key)
const KEYS = 100_000;
const dir = mkdtempSync(join(tmpdir(), 'floe-bench-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm run bench', () => {
  it('runs with --rows 2000 --changes 500 --cdc-runs 2 and reports every figure', async () => {
    const database = await createTestDatabase('bench');
    const json = join(dir, 'result.json');
    const env = { ...process.env };
    delete env.FLOE_BENCH_ROWS;
    delete env.FLOE_BENCH_CHANGES;
    delete env.FLOE_BENCH_MYSQL_URL;
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', 'bench/run.ts', '--rows', '2000', '--changes', '500', '--mysql-url', inject('mysqlUrl'), '--database', database, '--key-index-keys', String(KEYS), '--cdc-runs', '2', '--no-peers', '--json', json],
      { cwd: join(import.meta.dirname, '..', '..'), env, maxBuffer: 1 << 24, timeout: 290_000 },
    );
    expect(stdout).toMatch(/floe snapshot/);
    expect(stdout).toMatch(/ceiling A: mysql2 streamed read/);
    expect(stdout).toMatch(/ceiling B: zongji decode, no sink/);
    expect(stdout).toMatch(/floe CDC, start to committed/);
    const result = JSON.parse(readFileSync(json, 'utf8')) as BenchResult;
    expect(result.options).toMatchObject({ rows: 2000, changes: 500, database });
    expect(result.verified).toEqual({ afterSnapshot: true, afterStreaming: true });
    for (const figure of [result.snapshot, result.cdc, result.cdcAfterCrash, result.cdcWithoutState!]) {
      for (const v of Object.values(figure)) expect(v).toBeGreaterThan(0);
    }
    const counts = Object.fromEntries(result.rows.map((r) => [r.step, r.count]));
    expect(counts['floe snapshot']).toBe(2000);
    expect(counts['floe CDC, start to committed']).toBe(500);
    // after a crash: killed at its first commit (about half the changes: the bound is checked per
    // transaction of 100), started again over the rest
    expect(counts['floe CDC after a crash, start to committed']).toBeGreaterThan(0);
    expect(counts['floe CDC after a crash, start to committed']).toBeLessThan(500);
    // the same range again from the lake as the snapshot left it, without the state directory
    expect(counts['floe CDC without its state directory, start to committed']).toBe(500);
    // --cdc-runs 2: the phase ran twice from the lake as the snapshot left it; the row is one of them
    expect(result.options.cdcRuns).toBe(2);
    expect(result.rows.find((r) => r.step === 'floe CDC, start to committed')!.note).toMatch(/^median of 2 runs \([\d,]+, [\d,]+ changes\/s\)/);
    expect(counts['ceiling B: zongji decode, no sink']).toBe(500);
    // floe verify of the table after streaming: every row compared (the table's rows then), figures there
    expect(stdout).toMatch(/verify [\d,]+ rows\/s \([\d.]+ of the snapshot's rate\)/);
    expect(counts['floe verify']).toBeGreaterThan(1500);
    for (const v of [result.verify!.rowsPerSecond, result.verify!.ratioToSnapshot, result.verify!.lakeBytesRead, result.verify!.cpuSeconds]) expect(v).toBeGreaterThan(0);
    // the partitioned cases, beside the unpartitioned snapshot: verified, with their files and commits
    expect(stdout).toMatch(/floe snapshot, partitioned by day\(created_at\)/);
    expect(result.partitioned.map((p) => p.partitionBy)).toEqual(['day(created_at)', 'bucket(16, id)']);
    for (const p of result.partitioned) {
      expect(counts[`floe snapshot, partitioned by ${p.partitionBy}`]).toBe(2000);
      for (const v of [p.rowsPerSecond, p.ratioToUnpartitioned, p.rowsPerCpuSecond, p.peakRssBytes, p.dataFiles, p.commits, p.partitions]) expect(v).toBeGreaterThan(0);
      // one file per partition per commit at most (tiny sizes: no memory-bound flush)
      expect(p.dataFiles).toBeLessThanOrEqual(p.partitions * p.commits);
    }
    expect(result.partitioned[1].partitions).toBe(16);
    expect(result.partitioned[0].partitions).toBeGreaterThan(1000); // 2,000 rows over 1,826 days
    // the key-index micro-benchmark: the BIGINT key as snapshotted and in change order, the composite key, every figure there
    expect(result.keyIndex.map((k) => `${k.key} ${k.layout}`)).toEqual(['BIGINT runs', 'BIGINT hash', '(BIGINT, VARCHAR) hash']);
    for (const k of result.keyIndex) {
      expect(k.keys).toBe(KEYS);
      for (const v of [k.heapBytesPerKey, k.diskBytesPerKey, k.lookupsPerSecond, k.sortedLookupsPerSecond, k.applyChangesPerSecond, k.loadKeysPerSecond, k.buildSeconds, k.dataFiles]) expect(v).toBeGreaterThan(0);
      expect(counts[`key index lookups, ${layoutName(k)}`]).toBe(KEYS);
    }
    // sorted runs: 8 bytes a key on disk exactly (the image: the keys, a few hundred bytes of header)
    expect(result.keyIndex[0]!.diskBytesPerKey).toBeLessThan(8.1);
    expect(result.peers.skipped.map((s) => [s.peer, s.reason])).toEqual([
      ['debezium', '--no-peers'],
      ['flink-cdc', '--no-peers'],
    ]);
    expect(stdout).toMatch(/peer Debezium skipped: --no-peers/);
    expect(stdout).toMatch(/key index, BIGINT key, as snapshotted \(sorted runs\): 100,000 keys in 1 files, [\d.]+ bytes\/key in memory, [\d.]+ on disk; [\d,]+ lookups\/s one by one/);
    // the disk index beside it: floe's SQLite store, bytes per key on disk and lookups/s
    expect(result.diskKeyIndex.map((d) => `${d.store} ${d.key}`)).toEqual(['sqlite BIGINT', 'sqlite (BIGINT, VARCHAR)']);
    for (const d of result.diskKeyIndex) {
      expect(d.keys).toBe(KEYS);
      expect(d.disk.files).toBe(3); // the database, its WAL and shared memory
      for (const v of [d.bytesPerKey, d.lookupsPerSecond, d.buildKeysPerSecond, d.batchesPerSecond]) expect(v).toBeGreaterThan(0);
      expect(counts[`disk key index lookups, ${d.key} key`]).toBe(KEYS);
    }
    expect(stdout).toMatch(/disk key index \(SQLite\), BIGINT key: 100,000 keys, [\d.]+ bytes\/key on disk in 3 files \(.*\), [\d,]+ lookups\/s/);
    // the value indexes beside it, with as many rows: a keyless table's row index, a cascade child's FK index
    expect(result.valueIndex?.map((v) => `${v.index} ${v.rows}`)).toEqual([`row ${KEYS}`, `fk ${KEYS}`]);
    for (const v of result.valueIndex ?? []) {
      for (const x of [v.heapBytesPerRow, v.buildRowsPerSecond, v.lookupsPerSecond, v.deadRowsPerSecond]) expect(x).toBeGreaterThan(0);
      expect(counts[`${v.index === 'row' ? 'row index' : 'FK index'} lookups`]).toBe(v.lookups);
    }
    expect(stdout).toMatch(/row index of a keyless table \(whole row, two copies each\): 100,000 rows, [\d.]+ heap B\/row/);
  }, 300_000);
});
