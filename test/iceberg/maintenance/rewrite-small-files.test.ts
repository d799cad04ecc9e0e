/**
 * Compaction of small data files no delete applies to (maintenance/small-file-groups.ts, Java
 * `RewriteDataFiles` bin-pack): a v2 and a v3 table built by many small insert-only commits, one of
 * them partitioned, are bin-packed per partition into the bin-packed number of files — the rows the
 * same (floe's reader), v3 row lineage the same — and nothing is done in a partition below
 * `minInputFiles`. Deletes on the small files are applied and their DVs dropped.
 *
 * And floe's writer follows its own compaction (table-committer.ts `followMaintenance`): its
 * key index, in memory and on disk, moves to the new files, the next checkpoint writes its DVs there
 * without a warning or a rebuild, and a restart finds the disk index stamped with the compaction
 * (reused, not rebuilt). A compaction it is not told about is still another writer's.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rewriteDataFiles } from '../../../src/iceberg/maintenance/rewrite-data-files.js';
import { planSmallFileGroups } from '../../../src/iceberg/maintenance/small-file-groups.js';
import { loadCatalogTable, readManifestEntries, readSnapshotManifests, type CatalogTable } from '../../../src/iceberg/table/index.js';
import { currentSnapshot } from '../../../src/iceberg/spec/snapshot-ids.js';
import { TableCommitter } from '../../../src/iceberg/checkpoint/index.js';
import { insert, removeKey, update } from '../../../src/iceberg/writer/index.js';
import { lakeTableRows } from '../../e2e/support/lake-compare.js';
import { BY_GROUP, keyedRow, newTable, parquetCodecsOf, useTempWarehouse } from '../writer/support.js';
import { scanTable } from '../../../src/iceberg/scan/table-scan.js';
import { planScan } from '../../../src/iceberg/scan/scan-plan.js';
import { maintainTable } from '../../../src/pipeline/maintenance.js';
import { silentLogger } from '../../../src/pipeline/observe/logger.js';

const w = useTempWarehouse('floe-small-');

const row = keyedRow;

async function dataFiles(t: CatalogTable): Promise<number> {
  return (await planScan(t.io, t.metadata)).tasks.length;
}

/** The codecs of the table's live data files, each once. */
async function dataFileCodecs(t: CatalogTable): Promise<string[]> {
  return [...new Set((await planScan(t.io, t.metadata)).tasks.flatMap((task) => parquetCodecsOf(task.file.filePath)))];
}

async function liveDeleteFiles(t: CatalogTable): Promise<number> {
  let n = 0;
  for (const mf of await readSnapshotManifests(t.io, currentSnapshot(t.metadata)!)) if (mf.content === 'deletes') for (const e of await readManifestEntries(t.io, mf)) if (e.status !== 'deleted') n++;
  return n;
}

/** key|name → [_row_id, _last_updated_sequence_number] through floe's reader. */
async function lineageByKey(t: CatalogTable): Promise<Map<string, [unknown, unknown]>> {
  const scan = await scanTable(t, { rowLineage: true });
  const out = new Map<string, [unknown, unknown]>();
  const width = scan.schema.fields.length;
  for await (const r of scan.rows()) out.set(`${String(r[0])}|${String(r[2])}`, [r[width], r[width + 1]]);
  return out;
}

/** `commits` insert-only checkpoints (v3: DV upserts, which delete nothing for new keys); commit i inserts one row into each group of `groupsAt(i)`. */
async function smallCommits(t0: CatalogTable, job: string, commits: number, groupsAt: (i: number) => number[]): Promise<TableCommitter> {
  const c = new TableCommitter({ identifier: t0.identifier, catalog: w.catalog, jobId: job });
  // v2 upserts delete by key (an equality delete per commit): appends make a v2 table without deletes
  await c.open(t0.metadata.formatVersion === 2 ? { mode: 'append' } : {});
  let id = 0n;
  for (let i = 1; i <= commits; i++) {
    await c.write(groupsAt(i).map((g) => insert(row(id++, g, `r${id}`))));
    await c.commit(BigInt(i), '{}');
  }
  return c;
}

describe('compaction of small files', () => {
  for (const { formatVersion, partitioned } of [
    { formatVersion: 2 as const, partitioned: true },
    { formatVersion: 3 as const, partitioned: false },
    { formatVersion: 3 as const, partitioned: true },
  ]) {
    it(`v${formatVersion} ${partitioned ? 'partitioned' : 'unpartitioned'}: many small insert-only commits are bin-packed per partition; rows${formatVersion === 3 ? ' and row lineage' : ''} unchanged`, async () => {
      // one table in another codec: the writer and the compaction both follow the table's property
      const codec = formatVersion === 3 && !partitioned ? 'gzip' : undefined;
      const t0 = await newTable(w, { formatVersion, spec: partitioned ? BY_GROUP : undefined, properties: codec ? { 'write.parquet.compression-codec': codec } : undefined });
      // partitioned: group 0 and 1 get a file per commit (12 each), group 2 only 4 (below minInputFiles 5)
      const c = await smallCommits(t0, `job-small-${formatVersion}-${partitioned}`, 12, (i) => (partitioned ? (i <= 4 ? [0, 1, 2] : [0, 1]) : [0, 1, 2]));
      c.close();
      const t = await loadCatalogTable(w.catalog, t0.identifier);
      const filesBefore = await dataFiles(t);
      expect(filesBefore).toBe(partitioned ? 28 : 12);
      expect(await dataFileCodecs(t)).toEqual([codec?.toUpperCase() ?? 'ZSTD']);
      expect(await liveDeleteFiles(t)).toBe(0);
      const before = (await lakeTableRows(w.catalog, t.identifier)).rows.sort();
      const lineageBefore = formatVersion === 3 ? await lineageByKey(t) : undefined;
      if (lineageBefore) expect(new Set([...lineageBefore.values()].map(([, s]) => String(s))).size).toBe(12); // one sequence number per commit

      // a dry run says what it would do and changes nothing
      const dry = await rewriteDataFiles(t, { dryRun: true, applyDeletes: false, smallFiles: {} });
      expect(dry).toMatchObject({ rewrittenDataFiles: partitioned ? 24 : 12, smallFileGroups: partitioned ? 2 : 1, skipped: 'dry run' });
      expect((await loadCatalogTable(w.catalog, t.identifier)).metadata.currentSnapshotId).toBe(t.metadata.currentSnapshotId);

      const r = await rewriteDataFiles(t, { applyDeletes: false, smallFiles: {} });
      expect(r.skipped).toBeUndefined();
      // one target-size (512 MiB) file per rewritten partition; group 2's four files stay
      expect(r).toMatchObject({ rewrittenDataFiles: partitioned ? 24 : 12, addedDataFiles: partitioned ? 2 : 1, smallFileGroups: partitioned ? 2 : 1, removedDeleteFiles: 0 });
      const after = await loadCatalogTable(w.catalog, t.identifier);
      expect(currentSnapshot(after.metadata)!.summary.operation).toBe('replace');
      expect(await dataFiles(after)).toBe(partitioned ? 2 + 4 : 1);
      expect(await dataFileCodecs(after)).toEqual([codec?.toUpperCase() ?? 'ZSTD']);
      expect((await lakeTableRows(w.catalog, t.identifier)).rows.sort()).toEqual(before);
      if (lineageBefore) expect(await lineageByKey(after)).toEqual(lineageBefore);

      // nothing left to do: group 2 has 4 small files, the others one each
      const again = await rewriteDataFiles(after, { applyDeletes: false, smallFiles: {} });
      expect(again.skipped).toMatch(/no partition has 5 or more small data files/);
      expect((await loadCatalogTable(w.catalog, t.identifier)).metadata.currentSnapshotId).toBe(after.metadata.currentSnapshotId);
    });
  }

  it('below minInputFiles nothing is done; maintainTable reports the bin-packing', async () => {
    const t0 = await newTable(w, { formatVersion: 3 });
    (await smallCommits(t0, 'job-few', 4, () => [0])).close();
    const t = await loadCatalogTable(w.catalog, t0.identifier);
    const quiet = await maintainTable(t, { compactSmallFiles: {}, olderThanMs: 3_600_000, retainLast: 100 }, silentLogger);
    expect(quiet.report.compaction).toBeUndefined();
    expect((await loadCatalogTable(w.catalog, t.identifier)).metadata.currentSnapshotId).toBe(t.metadata.currentSnapshotId);
    // with minInputFiles 4 the four files are one group
    const dry = await maintainTable(t, { compactSmallFiles: { minInputFiles: 4 }, olderThanMs: 3_600_000, retainLast: 100, dryRun: true }, silentLogger);
    expect(dry.report.compaction).toMatchObject({ rewrittenDataFiles: 4, smallFileGroups: 1 });
    const done = await maintainTable(t, { compactSmallFiles: { minInputFiles: 4 }, olderThanMs: 3_600_000, retainLast: 100 }, silentLogger);
    expect(done.report.compaction).toEqual({ rewrittenDataFiles: 4, addedDataFiles: 1, removedDeleteFiles: 0, smallFileGroups: 1 });
    expect(await dataFiles(await loadCatalogTable(w.catalog, t.identifier))).toBe(1);
  });

  it('bin-packing: files at or above minFileSizeBytes stay, groups are capped by maxFileGroupSizeBytes', () => {
    const task = (path: string, size: number, partition: number) => ({ file: { filePath: path, fileSizeInBytes: BigInt(size), specId: 0, partition: [partition] }, sequenceNumber: 1n, deletes: { equality: [], position: [], dv: undefined } }) as never;
    const tasks = [...Array.from({ length: 6 }, (_, i) => task(`a${i}`, 10, 1)), task('big', 80, 1), ...Array.from({ length: 3 }, (_, i) => task(`b${i}`, 10, 2))];
    // target 100: small below 75; partition 1 has 6 small files (one group), partition 2 only 3
    expect(planSmallFileGroups(tasks, 100).map((g) => g.tasks.length)).toEqual([6]);
    // groups of at most 30 bytes: 3 files each, below 5 and not more than one target file: none
    expect(planSmallFileGroups(tasks, 100, { maxFileGroupSizeBytes: 30 })).toEqual([]);
    expect(planSmallFileGroups(tasks, 100, { maxFileGroupSizeBytes: 30, minInputFiles: 3 }).map((g) => g.tasks.length)).toEqual([3, 3, 3]);
    // two small files holding more than one target file are worth merging (Java enoughContent)
    expect(planSmallFileGroups([task('x', 60, 1), task('y', 60, 1)], 100).map((g) => g.bytes)).toEqual([120]);
    expect(planSmallFileGroups(tasks, 100, { minFileSizeBytes: 5 })).toEqual([]);
  });

  it('v3: small files with deletion vectors are rewritten with the deletes applied, their DVs dropped', async () => {
    const t0 = await newTable(w, { formatVersion: 3 });
    const c = await smallCommits(t0, 'job-small-dv', 8, () => [0, 1]);
    await c.write([update(row(0n, 0, 'zero')), removeKey([3n]), removeKey([5n])]);
    await c.commit(9n, '{}');
    c.close();
    const t = await loadCatalogTable(w.catalog, t0.identifier);
    expect(await liveDeleteFiles(t)).toBeGreaterThan(0);
    const before = (await lakeTableRows(w.catalog, t.identifier)).rows.sort();
    const lineageBefore = await lineageByKey(t);
    const r = await rewriteDataFiles(t, { applyDeletes: false, smallFiles: {} });
    expect(r.rewrittenDataFiles).toBe(9);
    const after = await loadCatalogTable(w.catalog, t.identifier);
    expect(await liveDeleteFiles(after)).toBe(0);
    expect(await dataFiles(after)).toBe(1);
    expect((await lakeTableRows(w.catalog, t.identifier)).rows.sort()).toEqual(before);
    expect(await lineageByKey(after)).toEqual(lineageBefore);
  });
});

describe("floe's writer follows its own compaction", () => {
  for (const disk of [false, true]) {
    it(`${disk ? 'disk' : 'memory'} key index: moved to the compacted files, no re-location, no rebuild${disk ? ', reused after a restart' : ''}`, async () => {
      const stateDir = disk ? await mkdtemp(join(tmpdir(), 'floe-follow-')) : undefined;
      try {
        const t0 = await newTable(w, { formatVersion: 3, spec: BY_GROUP });
        const warnings: string[] = [];
        const options = { catalog: w.catalog, identifier: t0.identifier, jobId: `job-follow-${disk}`, warn: (m: string) => warnings.push(m), ...(stateDir ? { keyIndex: { stateDir, memoryMaxRows: 1 } } : {}) };
        const c = new TableCommitter(options);
        await c.open();
        let id = 0n;
        for (let i = 1; i <= 8; i++) {
          // inserts and, from the second commit on, an update and a delete of rows committed earlier (DVs)
          const changes = [insert(row(id++, 0, `a${i}`)), insert(row(id++, 1, `b${i}`))];
          if (i > 1) changes.push(update(row(BigInt(2 * (i - 2)), 0, `u${i}`)));
          if (i > 2 && i % 2 === 0) changes.push(removeKey([BigInt(2 * (i - 2) + 1)]));
          await c.write(changes);
          await c.commit(BigInt(i), '{}');
        }
        expect(c.keyIndexLoads[disk ? 'builtOnDisk' : 'built'] + c.keyIndexLoads.spilled).toBeGreaterThan(0);
        const loads = { ...c.keyIndexLoads };
        const t = await loadCatalogTable(w.catalog, t0.identifier);
        const filesBefore = await dataFiles(t);
        let followed: string | undefined;
        const m = await maintainTable(t, { compactMinDeleteFiles: 1, compactSmallFiles: {}, manifests: { minCount: 1 }, olderThanMs: 0, retainLast: 1, onCommit: async (table, compaction) => void (followed = await c.followMaintenance(table, compaction)) }, silentLogger);
        expect(m.report.compaction!.rewrittenDataFiles).toBe(filesBefore);
        expect(m.report.manifests?.replaced ?? 0).toBeGreaterThan(0);
        expect(m.report.expiredSnapshots).toBeGreaterThan(0);
        expect(followed).toBe('followed');
        expect(c.keyIndexLoads.followed).toBe(1);

        // the next checkpoint deletes rows of the compacted files: DVs on the new files, no warning
        await c.write([update(row(1n, 1, 'one')), removeKey([2n]), update(row(14n, 1, 'moved'))]);
        const out = await c.commit(9n, '{}');
        expect(out.status).toBe('committed');
        expect(warnings).toEqual([]);
        expect({ ...c.keyIndexLoads, followed: 0 }).toEqual({ ...loads, followed: 0 });
        const now = await loadCatalogTable(w.catalog, t0.identifier);
        expect(Number(currentSnapshot(now.metadata)!.summary['total-equality-deletes'])).toBe(0);
        const rows = (await lakeTableRows(w.catalog, t0.identifier)).rows;
        expect(rows.filter((x) => x.includes('"one"') || x.includes('"moved"'))).toHaveLength(2);
        expect(rows.some((x) => x.startsWith('2|'))).toBe(false);
        expect(new Set(rows.map((x) => x.split('|')[0])).size).toBe(rows.length);
        c.close();

        if (disk) {
          // a restart: the disk index is stamped with floe's last commit, its files all live: reused
          const restarted = new TableCommitter(options);
          await restarted.open();
          await restarted.write([update(row(15n, 0, 'fifteen'))]);
          await restarted.commit(10n, '{}');
          expect(restarted.keyIndexLoads).toMatchObject({ built: 0, builtOnDisk: 0, reused: 1 });
          expect(warnings).toEqual([]);
          restarted.close();
        }
      } finally {
        if (stateDir) await rm(stateDir, { recursive: true, force: true });
      }
    });
  }

  it('disk key index: a restart after floe compacted but before the index followed (a kill) replays the compaction instead of rebuilding', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'floe-follow-kill-'));
    try {
      const t0 = await newTable(w, { formatVersion: 3, spec: BY_GROUP });
      const warnings: string[] = [];
      const options = { catalog: w.catalog, identifier: t0.identifier, jobId: 'job-follow-kill', warn: (m: string) => warnings.push(m), keyIndex: { stateDir, memoryMaxRows: 0 } };
      const c = new TableCommitter(options);
      await c.open();
      let id = 0n;
      for (let i = 1; i <= 7; i++) {
        const changes = [insert(row(id++, 0, `a${i}`)), insert(row(id++, 1, `b${i}`))];
        if (i > 1) changes.push(update(row(BigInt(2 * (i - 2)), 1, `u${i}`)));
        await c.write(changes);
        await c.commit(BigInt(i), '{}');
      }
      c.close(); // the disk index stays stamped with checkpoint 7's snapshot
      const t = await loadCatalogTable(w.catalog, t0.identifier);
      const m = await maintainTable(t, { compactMinDeleteFiles: 1, compactSmallFiles: {}, olderThanMs: 3_600_000, retainLast: 100 }, silentLogger);
      expect(m.report.compaction!.rewrittenDataFiles).toBeGreaterThan(5);
      const before = (await lakeTableRows(w.catalog, t0.identifier)).rows.length;

      const restarted = new TableCommitter(options);
      await restarted.open();
      // every key the index had moved (and 0, 2, 4 moved twice: updated, then compacted)
      await restarted.write([update(row(0n, 0, 'zero')), update(row(3n, 0, 'three')), removeKey([4n]), removeKey([13n])]);
      await restarted.commit(8n, '{}');
      expect(restarted.keyIndexLoads).toMatchObject({ built: 0, builtOnDisk: 0, replayed: 1 });
      expect(warnings).toEqual([]);
      const rows = (await lakeTableRows(w.catalog, t0.identifier)).rows;
      expect(rows).toHaveLength(before - 2);
      expect(rows.filter((x) => x.includes('"zero"') || x.includes('"three"'))).toHaveLength(2);
      expect(new Set(rows.map((x) => x.split('|')[0])).size).toBe(rows.length);
      expect(Number(currentSnapshot((await loadCatalogTable(w.catalog, t0.identifier)).metadata)!.summary['total-equality-deletes'])).toBe(0);
      restarted.close();
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });

  it('a compaction the writer is not told about is still taken for another writer and its deletes located again', async () => {
    const t0 = await newTable(w, { formatVersion: 3 });
    const warnings: string[] = [];
    const c = new TableCommitter({ identifier: t0.identifier, catalog: w.catalog, jobId: 'job-foreign', warn: (m) => warnings.push(m) });
    await c.open();
    for (let i = 1; i <= 6; i++) {
      await c.write([insert(row(BigInt(i), 0, `r${i}`))]);
      await c.commit(BigInt(i), '{}');
    }
    const r = await rewriteDataFiles(await loadCatalogTable(w.catalog, t0.identifier), { applyDeletes: false, smallFiles: {} });
    expect(r.rewrittenDataFiles).toBe(6);
    await c.write([update(row(1n, 0, 'one')), removeKey([2n])]);
    await c.commit(7n, '{}');
    expect(warnings.some((x) => /another writer/.test(x))).toBe(true);
    const rows = (await lakeTableRows(w.catalog, t0.identifier)).rows;
    expect(rows).toHaveLength(5);
    expect(rows.some((x) => x.includes('"one"'))).toBe(true);
    c.close();
  });
});
