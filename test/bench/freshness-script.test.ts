/**
 * `npm run bench:freshness` cannot rot: a short run (2,000 rows, 300 changes/s for 8 s, floe
 * committing every 200 ms, maintenance every 3 s) goes end to end — its own MariaDB, the load, the
 * catalog watch and floe in child processes — and writes its report and JSON. Checked: every change
 * the load committed was seen in the lake, the lake equals MySQL, the latency's parts add up to it,
 * and what the polls saw agrees with the load's GTIDs. No timing target: the machine is shared.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { FreshnessResult } from '../../bench/freshness.js';
import { mariaDbAvailable } from '../../src/demo/local-mariadb.js';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'floe-freshness-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm run bench:freshness', () => {
  it('measures 8 s of mixed DML at 300 changes/s and reports every figure', async () => {
    expect(await mariaDbAvailable(), 'bench:freshness starts its own mariadbd; install MariaDB (apt-get install mariadb-server)').toBe(true);
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', 'bench/freshness.ts', '--seconds', '8', '--rows', '2000', '--changes-per-second', '300', '--changes-per-transaction', '5', '--commit-interval-ms', '200', '--maintenance-interval-ms', '3000', '--sample-seconds', '2', '--out', dir],
      { cwd: join(import.meta.dirname, '..', '..'), maxBuffer: 1 << 24, timeout: 170_000 },
    );
    expect(stdout).toMatch(/floe freshness: 300 changes\/s of mixed DML for 8 s, commit.intervalMs 200/);
    expect(stdout).toMatch(/source→lake latency of [\d,]+ changes: p50 [\d,]+ ms/);
    expect(stdout).toMatch(/lake vs MySQL: equal \(2,000 rows\)/);
    const r = JSON.parse(readFileSync(join(dir, 'freshness-300cps-200ms-8s.json'), 'utf8')) as FreshnessResult;
    expect(r.verified.mismatches).toBe(0);
    // every change the load made, and only those, was measured
    expect(r.latency.unseen).toBe(0);
    expect(r.latency.changes).toBe(r.load.inserts + r.load.updates + r.load.deletes);
    // one insert and one delete per three updates: the table keeps its 2,000 rows
    expect(r.load.inserts).toBe(r.load.deletes);
    expect(r.load.updates).toBe(r.load.inserts * 3);
    expect(r.load.transactions * 5).toBe(r.latency.changes);
    const l = r.latency.latencyMs;
    expect(l.p50).toBeGreaterThan(0);
    expect(l.p50).toBeLessThanOrEqual(l.p99);
    expect(l.p99).toBeLessThanOrEqual(l.max);
    // the three parts add up to each change's latency, so their means add up to the mean
    const p = r.latency.parts;
    expect(p.toCommitStartMs.mean + p.toSwapMs.mean + p.toPollMs.mean).toBeCloseTo(l.mean, 6);
    // a poll finds a version within its interval after the swap (ctime is the kernel's coarse clock: a few ms of slack)
    expect(p.toPollMs.p50).toBeGreaterThanOrEqual(-5);
    // the polls saw the committed GTID sequence only grow, and reach the load's last transaction
    const seqs = r.trace.visible.map((v) => v.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(r.trace.visible.length).toBeGreaterThan(5);
    // floe committed several times a second, and maintained the table
    expect(r.commits.count).toBeGreaterThan(8);
    expect(r.commits.durationMs.p50).toBeGreaterThan(0);
    expect(r.maintenance.rounds).toBeGreaterThanOrEqual(1);
    expect(r.bounds.equalityDeletes).toBe(0);
    expect(r.samples.length).toBeGreaterThanOrEqual(4);
    for (const s of r.samples) for (const v of [s.metadataBytes, s.filesUnderTable, s.dataFiles, s.manifests, s.snapshots]) expect(v).toBeGreaterThan(0);
    expect(r.samples[0]!.rssBytes).toBeGreaterThan(0);
    expect(r.latency.windows.reduce((n, w) => n + w.changes, 0)).toBe(r.latency.changes);
  }, 180_000);
});
