/**
 * The primary-key index built from a table's live rows: one entry per live row, each pointing at
 * the data file and position that really hold that key (checked by reading the Parquet file with
 * hyparquet), rows removed by deletion vectors or equality deletes absent; a delta applies as a
 * commit would leave the table.
 */
import { describe, expect, it } from 'vitest';
import { loadCatalogTable } from '../../../src/iceberg/table/index.js';
import { keyIndexDelta } from '../../../src/iceberg/keyindex/key-index.js';
import { buildKeyIndex } from '../../../src/iceberg/keyindex/key-index-build.js';
import { TableKey } from '../../../src/iceberg/keyindex/table-key.js';
import { TableCommitter } from '../../../src/iceberg/checkpoint/index.js';
import { insert, removeKey, update } from '../../../src/iceberg/writer/index.js';
import type { Row } from '../../../src/model/values.js';
import { lakeTableRows } from '../../e2e/support/lake-compare.js';
import { DeleteLoader } from '../../../src/iceberg/scan/delete-loader.js';
import { planScan } from '../../../src/iceberg/scan/scan-plan.js';
import { readTaskPositions } from '../../../src/iceberg/scan/task-reader.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { Types } from '../../../src/iceberg/spec/types.js';
import type { KeyId } from '../../../src/iceberg/keyindex/table-key.js';
import type { KeyColumnReader } from '../../../src/iceberg/keyindex/key-column-reader.js';
import { workerKeyColumnReader } from '../../../src/iceberg/keyindex/worker-key-column.js';
import { BY_GROUP, newTable, parquetRows, useTempWarehouse } from '../writer/support.js';

const w = useTempWarehouse('floe-keyindex-');

const enc = new TextEncoder();
const row = (id: bigint, grp: number, name: string): Row => [id, grp, name, '1.00', enc.encode(name)];

describe('buildKeyIndex', () => {
  for (const formatVersion of [2, 3] as const) {
    it(`v${formatVersion}: indexes exactly the live rows, at their file and position`, async () => {
      const t0 = await newTable(w, { formatVersion, spec: BY_GROUP });
      const c = new TableCommitter({ identifier: t0.identifier, catalog: w.catalog, jobId: 'job-k' });
      await c.open();
      await c.write(Array.from({ length: 30 }, (_, i) => insert(row(BigInt(i), i % 3, `r${i}`))));
      await c.commit(1n, '{}');
      await c.write([update(row(3n, 1, 'moved')), removeKey([4n]), insert(row(100n, 2, 'new')), update(row(5n, 2, 'five'))]);
      await c.commit(2n, '{}');
      const t = await loadCatalogTable(w.catalog, t0.identifier);
      const schema = t.metadata.schemas.find((s) => s.schemaId === t.metadata.currentSchemaId)!;
      const key = TableKey.identifier(schema);
      const index = await buildKeyIndex(t, key);
      expect(index.snapshotId).toBe(t.metadata.currentSnapshotId);
      const live = (await lakeTableRows(w.catalog, t.identifier)).rows;
      expect(index.size).toBe(live.length);
      expect(index.get(key.encode([4n]))).toBeUndefined();
      const fileRows = new Map<string, Record<string, unknown>[]>();
      for (const id of [0n, 3n, 5n, 29n, 100n]) {
        const at = index.get(key.encode([id]))!;
        expect(at, `key ${id}`).toBeDefined();
        if (!fileRows.has(at.file.filePath)) fileRows.set(at.file.filePath, await parquetRows(at.file.filePath));
        const r = fileRows.get(at.file.filePath)![at.pos];
        expect(r.id).toBe(id);
      }
      expect(fileRows.get(index.get(key.encode([3n]))!.file.filePath)![index.get(key.encode([3n]))!.pos].name).toBe('moved');

      const somewhere = index.get(key.encode([0n]))!;
      index.apply(keyIndexDelta([[key.encode([7n]), somewhere.file, 99]], [key.encode([0n])]), 42n);
      expect(index.get(key.encode([0n]))).toBeUndefined();
      expect(index.get(key.encode([7n]))).toEqual({ file: somewhere.file, pos: 99 });
      expect(index.snapshotId).toBe(42n);
    });
  }
});

/** The index's entries as the row reader sees the table: every live row's key (TableKey.encode), file and position. */
async function entriesFromRows(t: Awaited<ReturnType<typeof loadCatalogTable>>, key: TableKey): Promise<string[]> {
  const schema = t.metadata.schemas.find((x) => x.schemaId === t.metadata.currentSchemaId)!;
  const plan = await planScan(t.io, t.metadata);
  const keySchema = new Schema(schema.schemaId, key.fieldIds.map((id) => schema.findField(id)!), []);
  const ctx = { io: t.io, schema: keySchema, schemas: t.metadata.schemas, specs: t.metadata.partitionSpecs, loader: new DeleteLoader(t.io, schema, t.metadata.schemas) };
  const out: string[] = [];
  for (const task of plan.tasks) {
    for await (const b of readTaskPositions(task, ctx)) b.rows.forEach((r, i) => out.push(entry(key.encode(r), task.file.filePath, b.positions ? b.positions[i]! : b.firstPosition + i)));
  }
  return out.sort();
}

const entry = (k: KeyId, file: string, pos: number): string => `${typeof k}:${String(k)} ${file} ${pos}`;

/** The worker-thread reader, counting the files it decoded and those it gave back (read on the calling thread). */
function countingWorkerReader(): { reader: KeyColumnReader; decoded: number; fallbacks: number } {
  const counts = { decoded: 0, fallbacks: 0 };
  const reader: KeyColumnReader = (column) => {
    const read = workerKeyColumnReader(column);
    return {
      read: async (bytes, recordCount, deleted) => {
        const keys = await read.read(bytes, recordCount, deleted);
        if (keys) counts.decoded++;
        else counts.fallbacks++;
        return keys;
      },
      close: () => read.close(),
    };
  };
  return Object.assign(counts, { reader });
}

/** The entries of the index `buildKeyIndex` builds with `offThread`, sorted. */
async function builtOffThread(t: Awaited<ReturnType<typeof loadCatalogTable>>, key: TableKey, builder: KeyColumnReader): Promise<string[]> {
  const index = await buildKeyIndex(t, key, { offThread: builder });
  expect(index.snapshotId).toBe(t.metadata.currentSnapshotId);
  return [...index.entries()].map(([k, f, p]) => entry(k, f.filePath, p)).sort();
}

describe('buildKeyIndex of a single integer key (read from the column buffers, no rows)', () => {
  // around ±2^53 (the last numeric KeyId; beyond it a key is its string encoding) and the long range's ends
  const longs = [0n, 1n, -1n, 2n ** 31n, -(2n ** 31n) - 1n, 2n ** 32n + 5n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, -(2n ** 53n) + 1n, -(2n ** 53n), -(2n ** 53n) - 1n, 2n ** 63n - 1n, -(2n ** 63n), 123456789012345n];
  for (const formatVersion of [2, 3] as const) {
    it(`v${formatVersion}, long key: the same entries as the row reader's, deletes and in-commit duplicates applied`, async () => {
      const t0 = await newTable(w, { formatVersion });
      const c = new TableCommitter({ identifier: t0.identifier, catalog: w.catalog, jobId: 'job-ki' });
      await c.open();
      // an in-commit duplicate (insert, then update of the same key): a position delete / DV entry on this commit's own file
      await c.write([...longs.map((id) => insert(row(id, 1, `r${id}`))), update(row(2n ** 53n, 1, 'again')), update(row(-(2n ** 63n), 1, 'again'))]);
      await c.commit(1n, '{}');
      await c.write([removeKey([1n]), removeKey([2n ** 53n + 1n]), update(row(-(2n ** 53n), 2, 'moved')), removeKey([2n ** 63n - 1n])]);
      await c.commit(2n, '{}');
      const t = await loadCatalogTable(w.catalog, t0.identifier);
      const key = TableKey.identifier(t.metadata.schemas.find((x) => x.schemaId === t.metadata.currentSchemaId)!);
      const index = await buildKeyIndex(t, key);
      const built = [...index.entries()].map(([k, f, p]) => entry(k, f.filePath, p)).sort();
      expect(built).toEqual(await entriesFromRows(t, key));
      expect(index.size).toBe(longs.length - 3);
      expect(built.filter((e) => e.startsWith('number:')).length, 'keys within ±(2^53 − 1) are numbers').toBe(longs.filter((v) => v <= 2n ** 53n - 1n && v >= -(2n ** 53n) + 1n).length - 1);
      // off the thread: a file equality deletes apply to (v2: the first checkpoint's) is read on this
      // thread, the worker not asked; a file with a key beyond ±(2^53 − 1) (every file here) the
      // worker gives back, and this thread reads it
      const worker = countingWorkerReader();
      expect(await builtOffThread(t, key, worker.reader)).toEqual(built);
      expect([worker.decoded, worker.fallbacks]).toEqual(formatVersion === 2 ? [0, 1] : [0, 2]);
    });
  }

  it('v3, long key within ±(2^53 − 1), built in a worker thread: the same entries as the row reader\'s, across files, DVs applied', async () => {
    const t0 = await newTable(w, { formatVersion: 3 });
    const c = new TableCommitter({ identifier: t0.identifier, catalog: w.catalog, jobId: 'job-ki-worker' });
    await c.open();
    const small = longs.filter((v) => v <= 2n ** 53n - 1n && v >= -(2n ** 53n) + 1n);
    await c.write([...small.map((id) => insert(row(id, 1, `r${id}`))), update(row(0n, 1, 'again'))]);
    await c.commit(1n, '{}');
    await c.write([...Array.from({ length: 500 }, (_, i) => insert(row(BigInt(1000 + i), 2, `n${i}`))), removeKey([1n]), update(row(2n ** 31n, 2, 'moved'))]);
    await c.commit(2n, '{}');
    await c.write([removeKey([1200n]), update(row(1300n, 3, 'again')), removeKey([-1n])]);
    await c.commit(3n, '{}');
    const t = await loadCatalogTable(w.catalog, t0.identifier);
    const key = TableKey.identifier(t.metadata.schemas.find((x) => x.schemaId === t.metadata.currentSchemaId)!);
    const worker = countingWorkerReader();
    const built = await builtOffThread(t, key, worker.reader);
    expect([worker.decoded, worker.fallbacks], 'the worker decoded every file').toEqual([3, 0]);
    expect(built).toEqual(await entriesFromRows(t, key));
    expect(built.length).toBe(small.length + 500 - 3);
    expect(new Set(built.map((e) => e.split(' ')[1])).size, 'rows of three data files').toBe(3);
  });

  it('int key: the same entries as the row reader\'s', async () => {
    const schema = new Schema(0, [{ id: 1, name: 'id', required: true, type: Types.int }, { id: 2, name: 'v', required: false, type: Types.string }], [1]);
    const t0 = await newTable(w, { formatVersion: 3, schema });
    const c = new TableCommitter({ identifier: t0.identifier, catalog: w.catalog, jobId: 'job-ki-int' });
    await c.open();
    const ints = [0, 1, -1, 2 ** 31 - 1, -(2 ** 31), 77];
    await c.write(ints.map((id) => insert([id, `v${id}`])));
    await c.commit(1n, '{}');
    await c.write([removeKey([77]), update([0, 'zero'])]);
    await c.commit(2n, '{}');
    const t = await loadCatalogTable(w.catalog, t0.identifier);
    const key = TableKey.identifier(schema);
    const index = await buildKeyIndex(t, key);
    const built = [...index.entries()].map(([k, f, p]) => entry(k, f.filePath, p)).sort();
    expect(built).toEqual(await entriesFromRows(t, key));
    expect(index.size).toBe(ints.length - 1);
    const worker = countingWorkerReader();
    expect(await builtOffThread(t, key, worker.reader)).toEqual(built);
    expect([worker.decoded, worker.fallbacks], 'the worker decoded every file').toEqual([2, 0]);
  });
});

describe('a committer with an off-thread key column reader', () => {
  it('after a restart its first writer takes the index later, the commit waits for it: the same table as with the index built first, DVs only', async () => {
    const changes1 = Array.from({ length: 300 }, (_, i) => insert(row(BigInt(i), i % 3, `r${i}`)));
    const changes2 = [update(row(5n, 1, 'five')), removeKey([7n]), insert(row(1000n, 2, 'new')), update(row(1000n, 2, 'newer')), update(row(299n, 0, 'last')), removeKey([8n])];
    const changes3 = [update(row(6n, 1, 'six')), removeKey([1000n]), update(row(5n, 2, 'again'))];
    const worker = countingWorkerReader();
    const tables = [];
    for (const keyColumnReader of [undefined, worker.reader]) {
      const t0 = await newTable(w, { formatVersion: 3 });
      const first = new TableCommitter({ identifier: t0.identifier, catalog: w.catalog, jobId: 'job-later' });
      await first.open();
      await first.write(changes1);
      await first.commit(1n, '{}');
      // a restart: a new committer, whose index is built from the lake
      const c = new TableCommitter({ identifier: t0.identifier, catalog: w.catalog, jobId: 'job-later', keyColumnReader });
      await c.open();
      await c.write(changes2);
      await c.commit(2n, '{}');
      await c.write(changes3);
      await c.commit(3n, '{}');
      expect(c.keyIndexLoads.built, 'built once, then kept').toBe(1);
      const t = await loadCatalogTable(w.catalog, t0.identifier);
      for (const s of t.metadata.snapshots) expect(s.summary['added-equality-deletes'] ?? '0', 'no equality delete').toBe('0');
      tables.push((await lakeTableRows(w.catalog, t0.identifier)).rows);
    }
    expect([worker.decoded, worker.fallbacks], 'the worker decoded the one data file').toEqual([1, 0]);
    expect(tables[1]).toEqual(tables[0]);
    expect(tables[1]!.length).toBe(300 - 2);
  });
});
