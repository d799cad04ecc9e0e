/**
 * Maintenance of the lake floe writes: `floe run` expires old snapshots on its schedule while it
 * streams (the table stays equal to MySQL, the history stays short), and `floe maintain
 * --expire-older-than 0s --retain-last 1` (the real CLI) leaves one snapshot per table and no data
 * file no snapshot reaches; with `--orphans-older-than 0s` no file under the table that nothing
 * names; a restart afterwards resumes from the checkpoint stamp and goes on. Manifest rewriting runs
 * on the same schedule (a low `maintenance.manifests.minCount` makes it act within a few commits)
 * and from `floe maintain --manifests-min-count`. `floe maintain` also bin-packs the small data files a
 * short commit interval leaves (maintenance.compaction.minInputFiles), reported in its JSON line.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalogTable, readManifestEntries, readSnapshotManifests } from '../../src/iceberg/table/index.js';
import { parseDuration } from '../../src/cli/commands/maintain.js';
import { runFloe } from '../cli/run-floe.js';
import { sharedMysqlConfig } from '../support/shared-mysql.js';
import { openHarness, type Harness } from './schema-change/pipeline-harness.js';
import type { PipelineRunning } from '../support/pipeline-run.js';

process.env.TZ ??= 'Asia/Seoul';

let h: Harness;

beforeAll(async () => {
  h = await openHarness('maint', 'maint', ['a', 'b'], [
    'CREATE TABLE a (id INT PRIMARY KEY, v INT)',
    `INSERT INTO a VALUES ${Array.from({ length: 50 }, (_, i) => `(${i}, ${i})`).join(', ')}`,
    'CREATE TABLE b (id INT PRIMARY KEY, s VARCHAR(20))',
    "INSERT INTO b VALUES (1, 'x')",
  ]);
});

afterAll(async () => {
  await h?.close();
});

const id = (name: string) => ({ namespace: [h.db], name });

/** Files under the table (or its data/ tree) that no snapshot, manifest or metadata file names. */
async function unreferencedFiles(name: string, under: 'data' | '' = 'data'): Promise<string[]> {
  const t = await loadCatalogTable(h.catalog, id(name));
  const live = new Set<string>([fileURLToPath(t.metadataLocation), ...t.metadata.metadataLog.map((e) => fileURLToPath(e.metadataFile))]);
  live.add(path.join(path.dirname(fileURLToPath(t.metadataLocation)), 'version-hint.text'));
  for (const s of t.metadata.snapshots) {
    live.add(fileURLToPath(s.manifestList));
    for (const mf of await readSnapshotManifests(t.io, s)) {
      live.add(fileURLToPath(mf.path));
      for (const e of await readManifestEntries(t.io, mf)) if (e.status !== 'deleted') live.add(fileURLToPath(e.dataFile.filePath));
    }
  }
  const dir = path.join(fileURLToPath(t.metadata.location), under);
  const files = fs.existsSync(dir) ? (fs.readdirSync(dir, { recursive: true }) as string[]).map((f) => path.join(dir, f)).filter((f) => fs.statSync(f).isFile()) : [];
  return files.filter((f) => !live.has(f));
}

/**
 * A run with `overrides`: streaming, 30 updates of `a` 120 ms apart, caught up; then, one
 * maintenance interval later (a round after the last commits), one more update, caught up; then a
 * clean stop.
 */
async function updatesAcrossMaintenance(overrides: Record<string, unknown>): Promise<void> {
  const run = h.start(overrides);
  try {
    await streamUpdates(run);
  } finally {
    const result = await run.stop();
    expect(result.error === undefined ? result.reason : String(result.error)).toBe('stopped');
  }
}

async function streamUpdates(run: PipelineRunning): Promise<void> {
  await h.untilStreaming(run);
  for (let i = 0; i < 30; i++) {
    await h.exec(`UPDATE a SET v = v + 1 WHERE id = ${i % 10}`);
    await new Promise((r) => setTimeout(r, 120));
  }
  await h.catchUp(run, ['a', 'b']);
  await new Promise((r) => setTimeout(r, 1500));
  await h.exec('UPDATE a SET v = v + 1 WHERE id = 0');
  await h.catchUp(run, ['a', 'b']);
}

describe('maintenance', () => {
  it('floe run expires old snapshots on its schedule while streaming', async () => {
    await updatesAcrossMaintenance({ commit: { intervalMs: 100, idleCheckpoints: 1 }, maintenance: { intervalMs: 1000, expireSnapshots: { olderThanMs: 0, retainLast: 3 } } });
    await h.expectLakeEqualsMysql('a');
    const a = await loadCatalogTable(h.catalog, id('a'));
    // ~30 commits were made; the schedule kept the history short (3 kept at the last round, plus the commits since)
    expect(a.metadata.snapshots.length).toBeLessThan(12);
    expect(await unreferencedFiles('a')).toEqual([]);
  });

  it('floe run rewrites manifests on its schedule (maintenance.manifests.minCount) and floe maintain on demand; v3 upserts stay DVs', async () => {
    const count = async (): Promise<number> => {
      const t = await loadCatalogTable(h.catalog, id('a'));
      return (await readSnapshotManifests(t.io, t.metadata.snapshots.find((x) => x.snapshotId === t.metadata.currentSnapshotId)!)).length;
    };
    await updatesAcrossMaintenance({ commit: { intervalMs: 100, idleCheckpoints: 1 }, maintenance: { intervalMs: 1000, manifests: { minCount: 6 }, expireSnapshots: { olderThanMs: 3_600_000, retainLast: 100 } } });
    await h.expectLakeEqualsMysql('a');
    const a = await loadCatalogTable(h.catalog, id('a'));
    const rewrites = a.metadata.snapshots.filter((x) => x.summary['floe.maintenance'] === 'rewrite-manifests');
    expect(rewrites.length).toBeGreaterThan(0);
    expect(rewrites.every((x) => x.summary.operation === 'replace')).toBe(true);
    expect(a.metadata.formatVersion).toBe(3);
    const current = a.metadata.snapshots.find((x) => x.snapshotId === a.metadata.currentSnapshotId)!;
    expect(current.summary['total-equality-deletes']).toBe('0');

    // floe maintain with a threshold of 1: every small manifest of a table goes into one per content
    const server = sharedMysqlConfig();
    const config = path.join(fileURLToPath(new URL(`file://${h.config.warehouse.location}`)), '..', `floe-maint-mf-${process.pid}.json`);
    await writeFile(config, JSON.stringify({ job: { id: 'maint' }, source: { host: server.host, port: server.port, user: server.user, password: server.password, include: ['a', 'b'].map((t) => `${h.db}.${t}`) }, warehouse: { location: h.config.warehouse.location } }));
    // a few commits with maintenance off leave small manifests beside the rewritten ones
    const more = h.start({ commit: { intervalMs: 100, idleCheckpoints: 1 }, maintenance: { enabled: false } });
    try {
      await h.untilStreaming(more);
      for (let i = 0; i < 3; i++) {
        await h.exec(`UPDATE a SET v = v + 1 WHERE id = ${i}`);
        await h.catchUp(more, ['a', 'b']);
      }
    } finally {
      await more.stop();
    }
    const before = await count();
    expect(before).toBeGreaterThan(2);
    // --no-compact: v3 tables are compacted too now, and that commit would change the manifests counted here
    const done = await runFloe(['maintain', '-c', config, '--table', `${h.db}.a`, '--no-compact', '--manifests-min-count', '1', '--json']);
    expect(done.code, done.stderr).toBe(0);
    const report = JSON.parse(done.stdout.trim()) as { manifests?: { before: number; after: number; replaced: number } };
    expect(report.manifests).toMatchObject({ before, after: 2 });
    expect(await count()).toBe(2);
    await h.expectLakeEqualsMysql('a');
  });

  it('floe maintain --expire-older-than 0s --retain-last 1 --orphans-older-than 0s leaves one snapshot and no unreferenced file per table; floe resumes afterwards', async () => {
    const server = sharedMysqlConfig();
    const config = path.join(fileURLToPath(new URL(`file://${h.config.warehouse.location}`)), '..', `floe-maint-${process.pid}.json`);
    await writeFile(config, JSON.stringify({ job: { id: 'maint' }, source: { host: server.host, port: server.port, user: server.user, password: server.password, include: ['a', 'b'].map((t) => `${h.db}.${t}`) }, warehouse: { location: h.config.warehouse.location } }));
    const dry = await runFloe(['maintain', '-c', config, '--dry-run', '--expire-older-than', '0s', '--retain-last', '1', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    const before = (await loadCatalogTable(h.catalog, id('a'))).metadata.snapshots.length;
    expect((await loadCatalogTable(h.catalog, id('a'))).metadata.snapshots.length).toBe(before);
    const planned = dry.stdout.trim().split('\n').map((l) => JSON.parse(l) as { table: string; expiredSnapshots: number; dryRun: boolean });
    expect(planned.map((p) => p.table).sort()).toEqual([`${h.db}.a`, `${h.db}.b`]);
    expect(planned.every((p) => p.dryRun)).toBe(true);

    // leftovers of a commit that never landed: found and removed by --orphans-older-than
    const stray = path.join(fileURLToPath((await loadCatalogTable(h.catalog, id('a'))).metadata.location), 'data', 'killed-before-commit.parquet');
    fs.writeFileSync(stray, 'x');
    const done = await runFloe(['maintain', '-c', config, '--expire-older-than', '0s', '--retain-last', '1', '--orphans-older-than', '0s', '--json']);
    expect(done.code, done.stderr).toBe(0);
    expect(fs.existsSync(stray)).toBe(false);
    for (const name of ['a', 'b']) {
      expect((await loadCatalogTable(h.catalog, id(name))).metadata.snapshots).toHaveLength(1);
      expect(Number((await loadCatalogTable(h.catalog, id(name))).metadata.properties['floe.maintenance.last-expiry-ms'])).toBeGreaterThan(Date.now() - 120_000);
      expect(await unreferencedFiles(name, '')).toEqual([]);
      await h.expectLakeEqualsMysql(name);
    }

    // floe resumes from the stamp that survived and goes on
    await h.exec('UPDATE a SET v = -1 WHERE id = 5');
    await h.exec("INSERT INTO b VALUES (2, 'after')");
    const run = h.start();
    try {
      await h.untilStreaming(run);
      await h.catchUp(run, ['a', 'b']);
    } finally {
      await run.stop();
    }
    await h.expectLakeEqualsMysql('a');
    await h.expectLakeEqualsMysql('b');

    const bad = await runFloe(['maintain', '-c', config, '--expire-older-than', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--expire-older-than: expected a duration such as 0s/);
  });

  it('floe maintain compacts a v2 lake: no live delete file, one snapshot, rows equal MySQL, floe goes on', async () => {
    const v2 = await openHarness('maint2', 'maint2', ['c'], ['CREATE TABLE c (id INT PRIMARY KEY, v INT)', `INSERT INTO c VALUES ${Array.from({ length: 40 }, (_, i) => `(${i}, ${i})`).join(', ')}`], { iceberg: { formatVersion: 2 } });
    try {
      const run = v2.start();
      try {
        await v2.untilStreaming(run);
        for (let i = 0; i < 12; i++) await v2.exec(i % 4 === 0 ? `DELETE FROM c WHERE id = ${i}` : `UPDATE c SET v = v + 100 WHERE id = ${i}`);
        await v2.catchUp(run, ['c']);
      } finally {
        await run.stop();
      }
      const cid = { namespace: [v2.db], name: 'c' };
      const summary = (await loadCatalogTable(v2.catalog, cid)).metadata.snapshots.at(-1)!.summary;
      expect(Number(summary['total-equality-deletes'])).toBeGreaterThan(0);
      const server = sharedMysqlConfig();
      const config = path.join(path.dirname(v2.config.warehouse.location!), `floe-maint2-${process.pid}.json`);
      await writeFile(config, JSON.stringify({ job: { id: 'maint2' }, source: { host: server.host, port: server.port, user: server.user, password: server.password, include: [`${v2.db}.c`] }, warehouse: { location: v2.config.warehouse.location }, iceberg: { formatVersion: 2 } }));
      const done = await runFloe(['maintain', '-c', config, '--expire-older-than', '0s', '--retain-last', '1', '--orphans-older-than', '0s', '--json']);
      expect(done.code, done.stderr).toBe(0);
      expect(JSON.parse(done.stdout.trim()).compaction.removedDeleteFiles).toBeGreaterThan(0);
      const t = await loadCatalogTable(v2.catalog, cid);
      expect(t.metadata.snapshots).toHaveLength(1);
      const last = t.metadata.snapshots[0].summary;
      expect([last['total-equality-deletes'], last['total-position-deletes'], last['total-delete-files']]).toEqual(['0', '0', '0']);
      await v2.expectLakeEqualsMysql('c');
      await v2.exec('UPDATE c SET v = -5 WHERE id = 30');
      const again = v2.start();
      try {
        await v2.untilStreaming(again);
        await v2.catchUp(again, ['c']);
      } finally {
        await again.stop();
      }
      await v2.expectLakeEqualsMysql('c');
    } finally {
      await v2.close();
    }
  });

  it('floe maintain bin-packs the small files of a lake streamed at a short interval (--dry-run says so first); rows equal MySQL', async () => {
    const sf = await openHarness('maintsf', 'maintsf', ['e'], ['CREATE TABLE e (id INT PRIMARY KEY, v INT)', 'INSERT INTO e VALUES (0, 0)']);
    try {
      // insert-only commits with maintenance off: one small data file per commit
      const run = sf.start({ commit: { intervalMs: 100, idleCheckpoints: 1 }, maintenance: { enabled: false } });
      try {
        await sf.untilStreaming(run);
        for (let i = 1; i <= 8; i++) {
          await sf.exec(`INSERT INTO e VALUES (${i}, ${i})`);
          await sf.catchUp(run, ['e']);
        }
      } finally {
        await run.stop();
      }
      const eid = { namespace: [sf.db], name: 'e' };
      const files = async (): Promise<number> => {
        const t = await loadCatalogTable(sf.catalog, eid);
        return Number(t.metadata.snapshots.find((x) => x.snapshotId === t.metadata.currentSnapshotId)!.summary['total-data-files']);
      };
      const before = await files();
      expect(before).toBeGreaterThanOrEqual(8);
      const server = sharedMysqlConfig();
      const config = path.join(path.dirname(sf.config.warehouse.location!), `floe-maintsf-${process.pid}.json`);
      await writeFile(config, JSON.stringify({ job: { id: 'maintsf' }, source: { host: server.host, port: server.port, user: server.user, password: server.password, include: [`${sf.db}.e`] }, warehouse: { location: sf.config.warehouse.location } }));
      const dry = await runFloe(['maintain', '-c', config, '--dry-run', '--json']);
      expect(dry.code, dry.stderr).toBe(0);
      expect(JSON.parse(dry.stdout.trim()).compaction).toMatchObject({ rewrittenDataFiles: before, smallFileGroups: 1 });
      expect(await files()).toBe(before);
      const done = await runFloe(['maintain', '-c', config, '--json']);
      expect(done.code, done.stderr).toBe(0);
      expect(JSON.parse(done.stdout.trim()).compaction).toEqual({ rewrittenDataFiles: before, addedDataFiles: 1, removedDeleteFiles: 0, smallFileGroups: 1 });
      expect(await files()).toBe(1);
      await sf.expectLakeEqualsMysql('e');
    } finally {
      await sf.close();
    }
  });

  it('parses durations', () => {
    expect(parseDuration('0s', 'x')).toBe(0);
    expect(parseDuration('90m', 'x')).toBe(5_400_000);
    expect(parseDuration('3d', 'x')).toBe(259_200_000);
    expect(() => parseDuration('3 weeks', '--x')).toThrow(/--x: expected a duration/);
  });
});
