/**
 * The primary-key index built from a table's live rows: one entry per live row, each pointing at
 * the data file and position that really hold that key (checked by reading the Parquet file with
 * hyparquet), rows removed by deletion vectors or equality deletes absent; a delta applies as a
 * commit would leave the table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalogTable } from '../../../src/iceberg/table/index.js';
import { buildKeyIndex } from '../../../src/iceberg/writer/key-index.js';
import { TableKey } from '../../../src/iceberg/writer/table-key.js';
import { TableCommitter, insert, removeKey, update } from '../../../src/iceberg/writer/index.js';
import type { Row } from '../../../src/model/values.js';
import { lakeTableRows } from '../../e2e/support/lake-compare.js';
import { BY_GROUP, newTable, parquetRows, tempWarehouse, type Warehouse } from './support.js';

let w: Warehouse;
beforeAll(async () => {
  w = await tempWarehouse('floe-keyindex-');
});
afterAll(() => w.remove());

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
      index.apply({ set: [[key.encode([7n]), somewhere.file, 99]], deleted: [key.encode([0n])] }, 42n);
      expect(index.get(key.encode([0n]))).toBeUndefined();
      expect(index.get(key.encode([7n]))).toEqual({ file: somewhere.file, pos: 99 });
      expect(index.snapshotId).toBe(42n);
    });
  }
});
