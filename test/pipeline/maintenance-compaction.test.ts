/**
 * `floe run` compacting its own v3 tables on its schedule while it streams updates and deletes
 * (deletion-vector upserts): the checkpoints after each compaction write their DVs against the
 * compacted files directly — floe's writer followed its own commit (table-committer.ts
 * `followMaintenance`) — so floe's log has no "another writer" warning and no index rebuild, the
 * lake equals MySQL and no equality delete was ever written. With the key index on disk
 * (`iceberg.keyIndex.memoryMaxRows` 0, under `stateDir`) too, and across a restart right after a
 * compaction round (the disk index's stamp matches it: reused, not rebuilt). Small files are
 * bin-packed by the same schedule: the table ends with few data files.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import { planScan } from '../../src/iceberg/scan/scan-plan.js';
import { ancestorsOf, currentSnapshot } from '../../src/iceberg/spec/snapshot-ids.js';
import type { Logger, LogFields } from '../../src/pipeline/observe/logger.js';
import { openHarness, type Harness } from './schema-change/pipeline-harness.js';

process.env.TZ ??= 'Asia/Seoul';

let h: Harness;
let stateDir: string;

beforeAll(async () => {
  h = await openHarness('mcompact', 'mcompact', ['m', 'd'], [
    'CREATE TABLE m (id INT PRIMARY KEY, v INT)',
    `INSERT INTO m VALUES ${Array.from({ length: 60 }, (_, i) => `(${i}, ${i})`).join(', ')}`,
    'CREATE TABLE d (id INT PRIMARY KEY, v INT)',
    `INSERT INTO d VALUES ${Array.from({ length: 60 }, (_, i) => `(${i}, ${i})`).join(', ')}`,
  ]);
  stateDir = await mkdtemp(join(tmpdir(), 'floe-mcompact-state-'));
});

afterAll(async () => {
  await h?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

/** A logger that keeps every line (message and table) for the test to look at. */
function recordingLogger(): Logger & { lines: { level: string; message: string; fields?: LogFields }[] } {
  const lines: { level: string; message: string; fields?: LogFields }[] = [];
  const make = (bindings: LogFields): Logger => ({
    debug: () => {},
    info: (message, fields) => lines.push({ level: 'info', message, fields: { ...bindings, ...fields } }),
    warn: (message, fields) => lines.push({ level: 'warn', message, fields: { ...bindings, ...fields } }),
    error: (message, fields) => lines.push({ level: 'error', message, fields: { ...bindings, ...fields } }),
    child: (more) => make({ ...bindings, ...more }),
  });
  return Object.assign(make({}), { lines });
}

const maintenance = { intervalMs: 1000, compaction: { minDeleteFiles: 3, minInputFiles: 5 }, manifests: { minCount: 4 }, expireSnapshots: { olderThanMs: 3_600_000, retainLast: 1000 } };

async function churn(table: string, run: Parameters<Harness['catchUp']>[0], rounds: number, offset: number): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    const k = (i * 7 + offset) % 60;
    if (i % 5 === 4) await h.exec(`DELETE FROM ${table} WHERE id = ${k}`);
    else if (i % 5 === 3) await h.exec(`INSERT INTO ${table} VALUES (${1000 + offset * 100 + i}, ${i}) ON DUPLICATE KEY UPDATE v = v + 1`);
    else await h.exec(`UPDATE ${table} SET v = v + 1 WHERE id = ${k}`);
    await new Promise((r) => setTimeout(r, 60));
    if (i % 10 === 9) await h.catchUp(run, [table]);
  }
  await h.catchUp(run, [table]);
}

function problems(log: ReturnType<typeof recordingLogger>): string[] {
  return log.lines
    .filter((l) => /another writer|locating the checkpoint's deletes again|rebuilding it from the lake|cannot be used|maintenance of a table failed/.test(`${l.message} ${String(l.fields?.err ?? '')}`) || l.level === 'error')
    .map((l) => `${l.level}: ${l.message} ${JSON.stringify(l.fields ?? {})}`);
}

async function compactions(table: string): Promise<number> {
  const t = await loadCatalogTable(h.catalog, { namespace: [h.db], name: table });
  return t.metadata.snapshots.filter((s) => s.summary['floe.maintenance'] === 'rewrite-data-files').length;
}

async function expectNoEqualityDelete(table: string): Promise<void> {
  const t = await loadCatalogTable(h.catalog, { namespace: [h.db], name: table });
  expect(t.metadata.formatVersion).toBe(3);
  for (const s of t.metadata.snapshots) expect(s.summary['added-equality-deletes'] ?? '0').toBe('0');
  expect(currentSnapshot(t.metadata)!.summary['total-equality-deletes']).toBe('0');
}

describe('floe run compacts its own tables without taking the compaction for another writer', () => {
  it('memory key index: compaction every few commits under updates and deletes', async () => {
    const log = recordingLogger();
    const run = h.start({ commit: { intervalMs: 100, idleCheckpoints: 1 }, maintenance }, log);
    try {
      await h.untilStreaming(run);
      await churn('m', run, 60, 1);
      // one more round after the last compaction, whose checkpoint deletes rows of compacted files
      await new Promise((r) => setTimeout(r, 1200));
      await churn('m', run, 10, 2);
    } finally {
      const result = await run.stop();
      expect(result.error === undefined ? result.reason : String(result.error)).toBe('stopped');
    }
    expect(await compactions('m')).toBeGreaterThan(1);
    expect(problems(log)).toEqual([]);
    // the index the snapshot's chunks built was kept through the hand-over (never built from the
    // lake) and followed every compaction after it
    expect(log.lines.filter((l) => /building the key index from the lake/.test(l.message) && String(l.fields?.table).endsWith('.m'))).toHaveLength(0);
    await h.expectLakeEqualsMysql('m');
    await expectNoEqualityDelete('m');
    const t = await loadCatalogTable(h.catalog, { namespace: [h.db], name: 'm' });
    // ~70 commits each added a file; compaction keeps the count down
    expect((await planScan(t.io, t.metadata)).tasks.length).toBeLessThan(20);
  });

  it('disk key index (memoryMaxRows 0): the same, and a restart right after a compaction reuses the index', async () => {
    const overrides = { commit: { intervalMs: 100, idleCheckpoints: 1 }, maintenance, iceberg: { keyIndex: { memoryMaxRows: 0 } }, stateDir };
    const log = recordingLogger();
    const run = h.start(overrides, log);
    try {
      await h.untilStreaming(run);
      await churn('d', run, 50, 3);
      // one update a maintenance interval until a round compacts (3 DVs or 5 small files), then stop at once
      const before = await compactions('d');
      for (let i = 0; i < 12 && (await compactions('d')) === before; i++) {
        await new Promise((r) => setTimeout(r, 1100));
        // a round may have compacted during the wait: then stop before another change lands on top
        if ((await compactions('d')) !== before) break;
        await h.exec(`UPDATE d SET v = v + 1 WHERE id = ${(i * 11) % 60}`);
        await h.catchUp(run, ['d']);
        for (let j = 0; j < 10 && (await compactions('d')) === before; j++) await new Promise((r) => setTimeout(r, 50));
      }
      expect(await compactions('d')).toBeGreaterThan(before);
    } finally {
      const result = await run.stop();
      expect(result.error === undefined ? result.reason : String(result.error)).toBe('stopped');
    }
    const t = await loadCatalogTable(h.catalog, { namespace: [h.db], name: 'd' });
    // "right after": no data changed since floe's last maintenance commit — the clean stop may still
    // have committed an offset-only stamp on top of it (an idle table's checkpoint), which adds no file
    const since = ancestorsOf(t.metadata, currentSnapshot(t.metadata)?.snapshotId);
    const compacted = since.findIndex((s) => /^rewrite-(data-files|manifests)$/.test(s.summary['floe.maintenance'] ?? ''));
    expect(compacted).toBeGreaterThanOrEqual(0);
    for (const s of since.slice(0, compacted)) {
      expect([s.summary['added-data-files'] ?? '0', s.summary['added-delete-files'] ?? '0', s.summary['deleted-data-files'] ?? '0']).toEqual(['0', '0', '0']);
    }
    expect(problems(log)).toEqual([]);
    expect(log.lines.some((l) => /key index of \d+ rows moved to disk|building the key index/.test(l.message))).toBe(true);

    // the restart: its first checkpoint deletes rows of the compacted files
    const again = recordingLogger();
    await h.exec('UPDATE d SET v = v + 100 WHERE id IN (2, 9, 16)');
    await h.exec('DELETE FROM d WHERE id = 23');
    const run2 = h.start(overrides, again);
    try {
      await h.untilStreaming(run2);
      await h.catchUp(run2, ['d']);
      await churn('d', run2, 20, 4);
    } finally {
      const result = await run2.stop();
      expect(result.error === undefined ? result.reason : String(result.error)).toBe('stopped');
    }
    expect(problems(again)).toEqual([]);
    // the index on disk was stamped with the compaction round: not built again from the lake
    expect(again.lines.filter((l) => /building the key index from the lake/.test(l.message))).toEqual([]);
    await h.expectLakeEqualsMysql('d');
    await expectNoEqualityDelete('d');
  });
});
