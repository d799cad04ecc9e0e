/**
 * Manifest merging (Java `MergingSnapshotProducer`): with `commit.manifest.min-count-to-merge` = 3,
 * frequent small commits do not grow the manifest list without bound; merged manifests carry older
 * files as EXISTING with explicit sequence numbers (so equality deletes keep their scope), drop
 * DELETED entries of earlier snapshots, keep v3 row ids, and every scan returns the same rows as the
 * model before and after each merge.
 */
import { describe, expect, it } from 'vitest';
import { readManifest } from '../../../src/iceberg/manifest/manifest.js';
import { readTableRows } from '../../../src/iceberg/scan/index.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import {
  commitRowDelta,
  createTable,
  packEnd,
  readManifestEntries,
  readSnapshotManifests,
  type CatalogTable,
  type CommitResult,
} from '../../../src/iceberg/table/index.js';
import { Types } from '../../../src/iceberg/spec/types.js';
import type { DataFile } from '../../../src/iceberg/spec/data-file.js';
import { committed, useTempCatalog, writeDataFile, writeEqualityDeletes } from './table-fixtures.js';

const schema = new Schema(
  0,
  [
    { id: 1, name: 'id', required: true, type: Types.long },
    { id: 2, name: 'v', required: false, type: Types.int },
  ],
  [1],
);

const env = useTempCatalog('floe-merge-');

function done(r: CommitResult): CatalogTable & { snapshotSeq: bigint } {
  const c = committed(r);
  return Object.assign(c.table, { snapshotSeq: c.snapshot.sequenceNumber });
}

describe('manifest merging', () => {
  it('packEnd bins from the end, keeping order (Java ListPacker.packEnd, lookback 1)', () => {
    expect(packEnd([5, 5, 5, 5, 5], (x) => x, 10)).toEqual([[5], [5, 5], [5, 5]]);
    expect(packEnd([1, 20, 1, 1], (x) => x, 10)).toEqual([[1], [20], [1, 1]]);
    expect(packEnd([], (x: number) => x, 10)).toEqual([]);
  });

  for (const formatVersion of [2, 3] as const) {
    it(`v${formatVersion}: upsert commits stay at a bounded manifest count and read the same rows`, async () => {
      let t: CatalogTable = await createTable(env.catalog, { namespace: ['db'], name: `merge_v${formatVersion}` }, {
        schema,
        formatVersion,
        properties: { 'commit.manifest.min-count-to-merge': '3' },
      });
      const model = new Map<bigint, number>();
      const removedData: DataFile[] = [];
      let lastData: DataFile | undefined;
      for (let c = 1; c <= 9; c++) {
        // Upsert key 1 (and add key c): the equality delete must hit only older versions of key 1.
        const data = await writeDataFile(t, [
          [1n, c],
          [BigInt(10 + c), c],
        ]);
        const deleteFiles = c > 1 ? [await writeEqualityDeletes(t, [1], [[1n]])] : [];
        // Every third commit also removes the previous commit's data file (a rewrite), leaving a
        // DELETED entry that a later merge must drop.
        const removedFiles = c % 3 === 0 && lastData ? [lastData] : [];
        t = done(await commitRowDelta(t, { dataFiles: [data], deleteFiles, removedFiles }));
        if (removedFiles.length > 0) {
          removedData.push(lastData!);
          model.delete(BigInt(10 + c - 1));
        }
        model.set(1n, c);
        model.set(BigInt(10 + c), c);
        lastData = data;

        const rows = await readTableRows(t);
        expect(rows.map((r) => `${r[0]}=${r[1]}`).sort()).toEqual([...model.entries()].map(([k, v]) => `${k}=${v}`).sort());
        const snapshot = t.metadata.snapshots.find((s) => s.snapshotId === t.metadata.currentSnapshotId)!;
        const manifests = await readSnapshotManifests(t.io, snapshot);
        // Per content, merging keeps fewer than min-count-to-merge manifests beside the new one.
        expect(manifests.filter((m) => m.content === 'data').length).toBeLessThanOrEqual(3);
        expect(manifests.filter((m) => m.content === 'deletes').length).toBeLessThanOrEqual(3);
        expect(snapshot.summary['total-records']).toBe(String(c === 1 ? 2 : 2 * c - removedData.reduce((n, f) => n + Number(f.recordCount), 0)));
      }

      // The final list holds merged manifests: EXISTING entries with explicit sequence numbers, no
      // DELETED entries from earlier snapshots, each live file exactly once.
      const snapshot = t.metadata.snapshots.find((s) => s.snapshotId === t.metadata.currentSnapshotId)!;
      const manifests = await readSnapshotManifests(t.io, snapshot);
      const merged = manifests.filter((m) => m.existingFilesCount > 0);
      expect(merged.length).toBeGreaterThan(0);
      for (const m of merged) {
        const raw = readManifest(await t.io.read(m.path)).entries;
        for (const e of raw.filter((x) => x.status === 'existing')) {
          expect(e.sequenceNumber).toBeDefined();
          expect(e.fileSequenceNumber).toBeDefined();
          expect(e.snapshotId).toBeDefined();
        }
        expect(raw.filter((x) => x.status === 'deleted' && x.snapshotId !== snapshot.snapshotId)).toEqual([]);
      }
      const live = (await Promise.all(manifests.map((m) => readManifestEntries(t.io, m)))).flat().filter((e) => e.status !== 'deleted');
      const paths = live.map((e) => e.dataFile.filePath);
      expect(new Set(paths).size).toBe(paths.length);
      for (const f of removedData) expect(paths).not.toContain(f.filePath);
      // Sequence numbers survive merging: the data files keep the commit they came from.
      const dataSeqs = live.filter((e) => e.dataFile.content === 'data').map((e) => e.sequenceNumber!);
      expect(new Set(dataSeqs).size).toBe(dataSeqs.length);
      if (formatVersion === 3) {
        // Row ids stay assigned once per data file, without overlap.
        const ranges = live
          .filter((e) => e.dataFile.content === 'data')
          .map((e) => [e.dataFile.firstRowId!, e.dataFile.firstRowId! + e.dataFile.recordCount] as const)
          .sort((a, b) => (a[0] < b[0] ? -1 : 1));
        for (let i = 1; i < ranges.length; i++) expect(ranges[i][0]).toBeGreaterThanOrEqual(ranges[i - 1][1]);
      }
    });
  }
});
