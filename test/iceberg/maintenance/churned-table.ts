/**
 * The table the maintenance tests work on: a new table given `initialRows` inserts, then 7 more
 * checkpoints of updates, key deletes and inserts, so that a v2 table carries equality and position
 * deletes and a v3 one (partitioned by group) deletion vectors, with a snapshot per checkpoint.
 */
import { TableCommitter } from '../../../src/iceberg/checkpoint/index.js';
import { loadCatalogTable, type CatalogTable } from '../../../src/iceberg/table/index.js';
import { insert, removeKey, update } from '../../../src/iceberg/writer/index.js';
import { BY_GROUP, keyedRow as row, newTable, type Warehouse } from '../writer/support.js';

export async function churnedTable(w: Warehouse, options: { formatVersion: 2 | 3; name: string; jobId: string; initialRows: number }): Promise<CatalogTable> {
  const { formatVersion, name, jobId, initialRows } = options;
  const t = await newTable(w, { formatVersion, spec: formatVersion === 3 ? BY_GROUP : undefined, name });
  const c = new TableCommitter({ identifier: t.identifier, catalog: w.catalog, jobId });
  await c.open();
  await c.write(Array.from({ length: initialRows }, (_, i) => insert(row(BigInt(i), i % 3, `r${i}`))));
  await c.commit(1n, '{"p":1}');
  for (let k = 2; k <= 8; k++) {
    await c.write([update(row(BigInt(k), (k + 1) % 3, `u${k}`)), removeKey([BigInt(k + 10)]), insert(row(BigInt(100 + k), k % 3, `n${k}`)), update(row(1n, 0, `one${k}`))]);
    await c.commit(BigInt(k), `{"p":${k}}`);
  }
  return loadCatalogTable(w.catalog, t.identifier);
}
