/**
 * floe's compaction of a format-v3 table, checked by other engines: a table floe wrote with
 * deletion-vector upserts (partitioned, so rows of one source file go to several new files) is
 * compacted by floe, and
 * - Spark, PyIceberg and floe scan read the same rows;
 * - Spark's `_row_id` and `_last_updated_sequence_number` (Iceberg's Java reader: explicit values,
 *   else inherited, spec "Row Lineage") are the same for every row before the compaction (time travel
 *   to the parent snapshot: inherited values) and after it (the columns floe wrote), and equal what
 *   floe's reader gives with `rowLineage`.
 *
 * The same for small-file bin-packing (maintenance/small-file-groups.ts): many insert-only commits,
 * one small file each per partition, packed into one file per partition; Spark reads the rows and
 * their lineage unchanged. And for a compaction prepared beside the writer's commits and landed
 * after one (checkpoint/compaction-landing.ts): the rows that commit deleted or updated are deleted
 * in the new files by deletion vectors written in the landing commit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TableIdentifier } from '../../src/iceberg/metadata/catalog.js';
import { rewriteDataFiles, rewriteDataFilesWithDeletes } from '../../src/iceberg/maintenance/rewrite-data-files.js';
import { planScan } from '../../src/iceberg/scan/scan-plan.js';
import { scanTable } from '../../src/iceberg/scan/table-scan.js';
import { currentSnapshot } from '../../src/iceberg/spec/snapshot-ids.js';
import { loadCatalogTable, type CatalogTable } from '../../src/iceberg/table/index.js';
import { TableCommitter } from '../../src/iceberg/checkpoint/index.js';
import { prepareCompaction } from '../../src/iceberg/checkpoint/compaction-landing.js';
import { insert, removeKey, update } from '../../src/iceberg/writer/index.js';
import type { Row } from '../../src/model/values.js';
import { BY_GROUP, localPath, newTable, tempWarehouse, type Warehouse } from '../iceberg/writer/support.js';
import { ENGINES_HOME, engineSuite, floeScanLines, readWith, sortLines, sparkSql } from './support/engines.js';

const { missing, required } = engineSuite('test/engines/compaction-lineage', ['spark', 'pyiceberg']);

let w: Warehouse;
const enc = new TextEncoder();
const row = (id: bigint, grp: number, name: string): Row => [id, grp, name, '1.00', enc.encode(name)];

async function floeLineage(t: CatalogTable): Promise<string[]> {
  const scan = await scanTable(t, { rowLineage: true });
  const out: string[] = [];
  const n = scan.schema.fields.length;
  for await (const r of scan.rows()) out.push(`${String(r[0])} ${String(r[2])} ${String(r[n])} ${String(r[n + 1])}`);
  return out.sort();
}

/**
 * The compacted table `id` as Spark and PyIceberg read it equals floe's scan, and Spark sees every
 * row keep the `_row_id` and `_last_updated_sequence_number` it had before (`lineageBefore`, floe's
 * reading of the table before the compaction), both at the compaction's parent snapshot and now.
 */
async function expectEnginesReadCompacted(id: TableIdentifier, lineageBefore: string[]): Promise<void> {
  const after = await loadCatalogTable(w.catalog, id);
  const parent = currentSnapshot(after.metadata)!.parentSnapshotId!;
  const dir = localPath(after.metadata.location);

  const floeRows = sortLines(await floeScanLines(dir));
  for (const engine of ['spark', 'pyiceberg'] as const) {
    const read = await readWith(engine, dir);
    expect(read.code, `${engine}: ${read.stderr}`).toBe(0);
    expect(sortLines(read.lines), engine).toEqual(floeRows);
  }

  const q = (asOf: string) => `SELECT id, name, _row_id, _last_updated_sequence_number FROM {qualified}${asOf}`;
  const results = await sparkSql({ type: 'filesystem' }, dir, [q(` VERSION AS OF ${parent}`), q('')]);
  for (const res of results) expect(res.error, res.statement).toBeUndefined();
  const [sparkBefore, sparkAfter] = results.map((res) => res.rows!.map((x) => x.map(String).join(' ')).sort());
  expect(sparkBefore).toEqual(lineageBefore);
  expect(sparkAfter).toEqual(lineageBefore);
  expect(await floeLineage(after)).toEqual(lineageBefore);
}

/** A v3 table partitioned by group that a writer filled (60 rows) and changed in 7 commits: a DV on every source file. */
async function upsertedTable(jobId: string): Promise<{ t0: CatalogTable; c: TableCommitter }> {
  const t0 = await newTable(w, { formatVersion: 3, spec: BY_GROUP });
  const c = new TableCommitter({ identifier: t0.identifier, catalog: w.catalog, jobId });
  await c.open();
  await c.write(Array.from({ length: 60 }, (_, i) => insert(row(BigInt(i), i % 3, `r${i}`))));
  await c.commit(1n, '{}');
  for (let k = 2; k <= 8; k++) {
    await c.write([update(row(BigInt(k), (k + 1) % 3, `u${k}`)), removeKey([BigInt(k + 30)]), insert(row(BigInt(100 + k), k % 3, `n${k}`))]);
    await c.commit(BigInt(k), '{}');
  }
  return { t0, c };
}

describe.skipIf(missing.length > 0 && !required)('floe compacts a v3 table: other engines read the same rows and row lineage', () => {
  beforeAll(async () => {
    if (missing.length > 0) throw new Error(`FLOE_ENGINES_REQUIRED=1 but ${missing.join(', ')} not installed in ${ENGINES_HOME}: run npm run engines:install`);
    w = await tempWarehouse('floe-v3-compact-');
  });
  afterAll(() => w?.remove());

  it('Spark and PyIceberg read the compacted table as floe does; Spark sees each row keep its _row_id and _last_updated_sequence_number', async () => {
    const { t0 } = await upsertedTable('job-v3c');
    const before = await loadCatalogTable(w.catalog, t0.identifier);
    const lineageBefore = await floeLineage(before);
    const r = await rewriteDataFilesWithDeletes(before);
    expect(r.skipped).toBeUndefined();
    await expectEnginesReadCompacted(t0.identifier, lineageBefore);
  });

  it('prepared beside the writer and landed after its commit, whose deletes are carried as DVs: Spark and PyIceberg read the same rows, Spark the same lineage', async () => {
    const { t0, c } = await upsertedTable('job-v3b');
    const prepared = await prepareCompaction(await loadCatalogTable(w.catalog, t0.identifier), { applyDeletes: true });
    if (!prepared || 'skipped' in prepared) throw new Error(`nothing prepared: ${JSON.stringify(prepared)}`);
    // the writer commits while it is prepared: an update and deletes of rows the new files hold
    await c.write([update(row(10n, 2, 'meanwhile')), removeKey([11n]), removeKey([12n]), insert(row(200n, 0, 'new'))]);
    await c.commit(9n, '{}');
    const before = await loadCatalogTable(w.catalog, t0.identifier);
    const lineageBefore = await floeLineage(before);
    const landed = await c.landCompaction(prepared, before);
    expect(landed.skipped).toBeUndefined();
    expect(landed.carriedDeletes).toBe(3);
    await expectEnginesReadCompacted(t0.identifier, lineageBefore);
  });

  it('small files bin-packed: Spark and PyIceberg read the same rows, Spark the same _row_id and _last_updated_sequence_number', async () => {
    const t0 = await newTable(w, { formatVersion: 3, spec: BY_GROUP });
    const c = new TableCommitter({ identifier: t0.identifier, catalog: w.catalog, jobId: 'job-v3s' });
    await c.open();
    let id = 0n;
    for (let k = 1; k <= 8; k++) {
      await c.write([0, 1, 2].map((g) => insert(row(id++, g, `s${k}-${g}`))));
      await c.commit(BigInt(k), '{}');
    }
    c.close();
    const before = await loadCatalogTable(w.catalog, t0.identifier);
    expect((await planScan(before.io, before.metadata)).tasks).toHaveLength(24);
    const lineageBefore = await floeLineage(before);
    const r = await rewriteDataFiles(before, { applyDeletes: false, smallFiles: {} });
    expect(r).toMatchObject({ rewrittenDataFiles: 24, addedDataFiles: 3, smallFileGroups: 3 });
    await expectEnginesReadCompacted(t0.identifier, lineageBefore);
  });
});
