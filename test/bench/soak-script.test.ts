/**
 * `npm run bench:soak` cannot rot: a tiny soak (200 rows, 6 commits, a sample every 3) runs end to
 * end — its own MariaDB, floe streaming in a child process with maintenance on — and writes its
 * table, JSON, SVG and PNG; the lake equals MySQL and the v3 table holds no equality delete. No
 * timing assertion: the figures are only checked to be there.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { SoakResult } from '../../bench/soak.js';
import { mariaDbAvailable } from '../../src/demo/local-mariadb.js';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'floe-soak-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm run bench:soak', () => {
  it('runs 6 commits on 200 rows and reports every figure', async () => {
    expect(await mariaDbAvailable(), 'bench:soak starts its own mariadbd; install MariaDB (apt-get install mariadb-server)').toBe(true);
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', 'bench/soak.ts', '--commits', '6', '--sample-every', '3', '--rows', '200', '--updates-per-second', '20', '--maintenance-interval-ms', '1000', '--out', dir],
      { cwd: join(import.meta.dirname, '..', '..'), maxBuffer: 1 << 24, timeout: 170_000 },
    );
    expect(stdout).toMatch(/equality delete files: 0 in every sample/);
    expect(stdout).toMatch(/lake vs MySQL: equal \(200 rows\)/);
    const result = JSON.parse(readFileSync(join(dir, 'soak-v3-6.json'), 'utf8')) as SoakResult;
    expect(result.verified.mismatches).toBe(0);
    expect(result.equalityDeleteFilesSeen).toBe(0);
    // samples at commit 1, 3, 6 and after floe stopped
    expect(result.samples.map((s) => s.commits).slice(0, 3)).toEqual([1, 3, 6]);
    for (const s of result.samples) {
      for (const v of [s.metadataBytes, s.filesUnderTable, s.bytesUnderTable, s.dataFiles, s.manifests, s.snapshots, s.scanMs]) expect(v).toBeGreaterThan(0);
      expect(s.scannedRows).toBe(200);
      expect(s.deleteFiles.equality).toBe(0);
    }
    expect(result.samples[0].rssBytes).toBeGreaterThan(0);
    expect(result.samples[0].openFds).toBeGreaterThan(0);
    expect(existsSync(join(dir, 'soak-v3-6.svg'))).toBe(true);
    const png = readFileSync(join(dir, 'soak-v3-6.png'));
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  }, 180_000);

  it('runs by time with several writers (--minutes 0.25 --writers 2)', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', 'bench/soak.ts', '--minutes', '0.25', '--writers', '2', '--sample-every', '10', '--rows', '200', '--updates-per-second', '60', '--commit-interval-ms', '500', '--maintenance-interval-ms', '10000', '--out', dir],
      { cwd: join(import.meta.dirname, '..', '..'), maxBuffer: 1 << 24, timeout: 170_000 },
    );
    expect(stdout).toMatch(/floe soak: 0.25 min, \d+ commits, \d+ updates/);
    expect(stdout).toMatch(/lake vs MySQL: equal \(200 rows\)/);
    const result = JSON.parse(readFileSync(join(dir, 'soak-v3-0.25min-60ups.json'), 'utf8')) as SoakResult;
    expect(result.verified.mismatches).toBe(0);
    // the run ended by time: 15 s of streaming, whatever the number of commits
    const last = result.samples.at(-1)!;
    expect(last.elapsedSeconds).toBeGreaterThanOrEqual(15);
    expect(last.commits).toBeGreaterThan(5);
    // two writers at 30 updates/s each for 15 s
    expect(result.updates).toBeGreaterThan(250);
    expect(result.samples[0].openFds).toBeGreaterThan(0);
  }, 180_000);
});
