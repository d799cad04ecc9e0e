import { describe, expect, it } from 'vitest';
import { readManifest } from '../../../src/iceberg/manifest/manifest.js';
import { readManifestList } from '../../../src/iceberg/manifest/manifest-list.js';
import {
  appendFiles,
  commitRowDelta,
  createTable,
  ensureUnpartitionedSpec,
  readManifestEntries,
  readSnapshotManifests,
  type CatalogTable,
} from '../../../src/iceberg/table/index.js';
import { armFailpoint, disarmFailpoints } from '../../../src/util/failpoints.js';
import { committed, idNameSchema, useTempCatalog, writeDataFile, writeDeletionVectors, writeEqualityDeletes, writePositionDeletes } from './table-fixtures.js';

const schema = idNameSchema();

const env = useTempCatalog();

let n = 0;
async function newTable(formatVersion: 2 | 3 = 2, properties: Record<string, string> = {}): Promise<CatalogTable> {
  return createTable(env.catalog, { namespace: ['db'], name: `t${++n}` }, { schema, formatVersion, properties });
}

describe('commits', () => {
  it('appends, then a row delta: operations, sequence numbers, Java summary totals, inheritance-ready manifests', async () => {
    let t = await newTable();
    const d1 = await writeDataFile(t, [[1n, 'a'], [2n, 'b'], [3n, 'c']]);
    const a = committed(await appendFiles(t, [d1], { summary: { 'floe.checkpoint-id': '1' } }));
    t = a.table;
    expect(a.snapshot.sequenceNumber).toBe(1n);
    expect(a.snapshot.parentSnapshotId).toBeUndefined();
    expect(a.snapshot.summary).toEqual({
      operation: 'append',
      'floe.checkpoint-id': '1',
      'added-data-files': '1',
      'added-records': '3',
      'added-files-size': String(d1.fileSizeInBytes),
      'changed-partition-count': '1',
      'total-records': '3',
      'total-files-size': String(d1.fileSizeInBytes),
      'total-data-files': '1',
      'total-delete-files': '0',
      'total-position-deletes': '0',
      'total-equality-deletes': '0',
    });
    expect(t.metadata.currentSnapshotId).toBe(a.snapshot.snapshotId);
    expect(t.metadata.lastSequenceNumber).toBe(1n);

    const d2 = await writeDataFile(t, [[2n, 'B'], [4n, 'd']]);
    const eq = await writeEqualityDeletes(t, [1], [[2n]]);
    const pos = await writePositionDeletes(t, [{ filePath: d1.filePath, pos: 2n }]);
    const b = committed(await commitRowDelta(t, { dataFiles: [d2], deleteFiles: [eq, pos] }));
    t = b.table;
    expect(b.snapshot.sequenceNumber).toBe(2n);
    expect(b.snapshot.parentSnapshotId).toBe(a.snapshot.snapshotId);
    const size = d2.fileSizeInBytes + eq.fileSizeInBytes + pos.fileSizeInBytes;
    expect(b.snapshot.summary).toEqual({
      operation: 'overwrite',
      'added-data-files': '1',
      'added-equality-delete-files': '1',
      'added-position-delete-files': '1',
      'added-delete-files': '2',
      'added-records': '2',
      'added-files-size': String(size),
      'added-position-deletes': '1',
      'added-equality-deletes': '1',
      'changed-partition-count': '1',
      'total-records': '5',
      'total-files-size': String(d1.fileSizeInBytes + size),
      'total-data-files': '2',
      'total-delete-files': '2',
      'total-position-deletes': '1',
      'total-equality-deletes': '1',
    });

    // One manifest per content; ADDED entries as written have no snapshot id or sequence numbers.
    const manifests = await readSnapshotManifests(t.io, b.snapshot);
    expect(manifests.map((m) => [m.content, m.sequenceNumber, m.addedSnapshotId])).toEqual([
      ['data', 2n, b.snapshot.snapshotId],
      ['data', 1n, a.snapshot.snapshotId],
      ['deletes', 2n, b.snapshot.snapshotId],
    ]);
    const raw = readManifest(await t.io.read(manifests[0].path));
    expect(raw.entries.map((e) => [e.status, e.snapshotId, e.sequenceNumber, e.fileSequenceNumber])).toEqual([['added', undefined, undefined, undefined]]);
    const deletes = await readManifestEntries(t.io, manifests[2]);
    expect(deletes.map((e) => [e.dataFile.content, e.sequenceNumber])).toEqual([
      ['equality-deletes', 2n],
      ['position-deletes', 2n],
    ]);

    const c = committed(await commitRowDelta(t, { deleteFiles: [await writeEqualityDeletes(t, [1], [[4n]])] }));
    expect(c.snapshot.summary.operation).toBe('delete');
    expect(c.snapshot.summary['total-equality-deletes']).toBe('2');
    expect(c.snapshot.summary['total-records']).toBe('5');
  });

  it('an empty row delta (a checkpoint without changes) commits an append that only carries the offsets and totals', async () => {
    let t = await newTable(3);
    t = committed(await appendFiles(t, [await writeDataFile(t, [[1n, 'a']])])).table;
    const r = committed(await commitRowDelta(t, {}, { summary: { 'floe.source-offset': '{"gtid":"x:1-5"}' } }));
    expect(r.snapshot.summary).toEqual({
      operation: 'append',
      'floe.source-offset': '{"gtid":"x:1-5"}',
      'changed-partition-count': '0',
      'total-records': '1',
      'total-files-size': t.metadata.snapshots[0].summary['total-files-size'],
      'total-data-files': '1',
      'total-delete-files': '0',
      'total-position-deletes': '0',
      'total-equality-deletes': '0',
    });
    expect([r.snapshot.firstRowId, r.snapshot.addedRows]).toEqual([1n, 0n]);
    expect(await readSnapshotManifests(r.table.io, r.snapshot)).toEqual(await readSnapshotManifests(t.io, t.metadata.snapshots[0]));
  });

  it('v3: first-row-id, added-rows and next-row-id from the manifest list; DVs counted as added-dvs', async () => {
    let t = await newTable(3);
    const d1 = await writeDataFile(t, [[1n, 'a'], [2n, 'b']]);
    const a = committed(await appendFiles(t, [d1]));
    t = a.table;
    expect([a.snapshot.firstRowId, a.snapshot.addedRows, t.metadata.nextRowId]).toEqual([0n, 2n, 2n]);
    const d2 = await writeDataFile(t, [[3n, 'c'], [4n, 'd'], [5n, 'e']]);
    const [dv] = await writeDeletionVectors(t, [{ dataFile: d1, positions: [0] }]);
    const b = committed(await commitRowDelta(t, { dataFiles: [d2], deleteFiles: [dv] }));
    t = b.table;
    expect([b.snapshot.firstRowId, b.snapshot.addedRows, t.metadata.nextRowId]).toEqual([2n, 3n, 5n]);
    expect(b.snapshot.summary['added-dvs']).toBe('1');
    expect(b.snapshot.summary['added-files-size']).toBe(String(d2.fileSizeInBytes + dv.contentSizeInBytes!));
    const list = readManifestList(await t.io.read(b.snapshot.manifestList));
    expect(list.metadata.firstRowId).toBe(2n);
    const dataManifests = list.manifests.filter((m) => m.content === 'data');
    expect(dataManifests.map((m) => m.firstRowId)).toEqual([2n, 0n]);
    const entries = await readManifestEntries(t.io, dataManifests[0]);
    expect(entries[0].dataFile.firstRowId).toBe(2n);
  });

  it('skips when validate says so, before and after a reload, leaving no manifest behind', async () => {
    const t = await newTable();
    const d = await writeDataFile(t, [[1n, 'a']]);
    const r = await appendFiles(t, [d], { validate: () => 'skip' });
    expect(r.status).toBe('skipped');
    expect((await env.catalog.loadTable(t.identifier)).metadata.snapshots).toHaveLength(0);

    // A concurrent writer commits "the same checkpoint"; our stale attempt conflicts, reloads, and skips.
    const other = committed(await appendFiles(t, [await writeDataFile(t, [[2n, 'b']])], { summary: { 'floe.checkpoint-id': '7' } }));
    const seen: (string | undefined)[] = [];
    const r2 = await appendFiles(t, [d], {
      summary: { 'floe.checkpoint-id': '7' },
      retry: { minWaitMs: 1, maxWaitMs: 2 },
      validate: (m) => {
        const head = m.snapshots.find((s) => s.snapshotId === m.currentSnapshotId);
        seen.push(head?.summary['floe.checkpoint-id']);
        return head?.summary['floe.checkpoint-id'] === '7' ? 'skip' : 'proceed';
      },
    });
    expect(r2.status).toBe('skipped');
    expect(r2.attempts).toBe(1);
    expect(seen).toEqual([undefined, '7']);
    expect(r2.table.metadata.currentSnapshotId).toBe(other.snapshot.snapshotId);
    const metadataFiles = await t.io.list(`${t.metadata.location}/metadata/`);
    // Only other's manifest + list survive (plus metadata JSON and the hint).
    expect(metadataFiles.filter((f) => f.endsWith('.avro'))).toHaveLength(2);
  });

  it('removes files: DELETED entries in a rewritten manifest, deleted-* counts, refuses a file that is not live', async () => {
    let t = await newTable();
    const d1 = await writeDataFile(t, [[1n, 'a'], [2n, 'b']]);
    const d2 = await writeDataFile(t, [[3n, 'c']]);
    t = committed(await appendFiles(t, [d1, d2])).table;
    const d3 = await writeDataFile(t, [[1n, 'a'], [2n, 'b'], [3n, 'c']]);
    const r = committed(await commitRowDelta(t, { dataFiles: [d3], removedFiles: [d1, d2] }));
    expect(r.snapshot.summary).toMatchObject({
      operation: 'overwrite',
      'added-data-files': '1',
      'deleted-data-files': '2',
      'added-records': '3',
      'deleted-records': '3',
      'total-records': '3',
      'total-data-files': '1',
    });
    const manifests = await readSnapshotManifests(r.table.io, r.snapshot);
    const all = (await Promise.all(manifests.map((m) => readManifestEntries(r.table.io, m)))).flat();
    expect(all.map((e) => [e.status, e.dataFile.filePath, e.sequenceNumber]).sort()).toEqual(
      [
        ['added', d3.filePath, 2n],
        ['deleted', d1.filePath, 1n],
        ['deleted', d2.filePath, 1n],
      ].sort(),
    );
    await expect(commitRowDelta(r.table, { removedFiles: [d1] })).rejects.toThrow(/not live in the table's current snapshot/);
  });

  it('adds an unpartitioned spec once, without changing the default spec', async () => {
    const t = await createTable(env.catalog, { namespace: ['db'], name: 'parted' }, {
      schema,
      partitionSpec: { specId: 0, fields: [{ sourceId: 2, fieldId: 1000, name: 'name', transform: { kind: 'identity' } }] },
    });
    const a = await ensureUnpartitionedSpec(t);
    expect(a.spec).toEqual({ specId: 1, fields: [] });
    expect(a.table.metadata.defaultSpecId).toBe(0);
    const b = await ensureUnpartitionedSpec(a.table);
    expect(b.table.metadataLocation).toBe(a.table.metadataLocation);
    expect(b.spec.specId).toBe(1);
  });

  for (const point of ['after-data-files', 'after-manifests', 'after-manifest-list']) {
    it(`failpoint ${point}: nothing committed, the commit's own files removed, data files kept`, async () => {
      const t = await newTable();
      const d = await writeDataFile(t, [[1n, 'a']]);
      armFailpoint(point);
      try {
        await expect(appendFiles(t, [d])).rejects.toThrow(new RegExp(`failpoint ${point}`));
      } finally {
        disarmFailpoints();
      }
      expect((await env.catalog.loadTable(t.identifier)).metadata.snapshots).toHaveLength(0);
      const files = await t.io.list(`${t.metadata.location}/`);
      expect(files.filter((f) => f.endsWith('.avro'))).toEqual([]);
      expect(files).toContain(d.filePath);
      // The next attempt commits normally.
      expect((await appendFiles(t, [d])).status).toBe('committed');
    });
  }
});
