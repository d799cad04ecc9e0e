/**
 * Compaction of a v2 table the upsert writer made (equality deletes for every update and delete,
 * position deletes for in-checkpoint duplicates; partitioned with global equality deletes): the
 * rows read the same before and after (floe's scan and icebird), no delete file is live afterwards,
 * a dry run changes nothing, the writer goes on upserting into the compacted table.
 *
 * v3 (deletion-vector upserts; keyless tables with equality deletes): the same, plus row lineage —
 * every live row's `_row_id` and `_last_updated_sequence_number` are the same before and after
 * (floe's reader with `rowLineage`, and the compacted files' own columns read with hyparquet), the
 * new files hold them as real columns with the reserved field ids, the snapshot's first-row-id /
 * added-rows and the table's next-row-id follow the spec, no DV is live afterwards, and the
 * committer that was open across the compaction goes on writing DVs (its key index relocated).
 */
import { describe, expect, it } from 'vitest';
import { rewriteDataFilesWithDeletes } from '../../../src/iceberg/maintenance/rewrite-data-files.js';
import { loadCatalogTable, readManifestEntries, readSnapshotManifests, type CatalogTable } from '../../../src/iceberg/table/index.js';
import { currentSnapshot } from '../../../src/iceberg/spec/snapshot-ids.js';
import { TableCommitter } from '../../../src/iceberg/checkpoint/index.js';
import { insert, removeKey, update } from '../../../src/iceberg/writer/index.js';
import type { Row } from '../../../src/model/values.js';
import { lakeTableRows } from '../../e2e/support/lake-compare.js';
import { icebirdRows } from '../writer/icebird-read.js';
import { BY_GROUP, keyedRow, newTable, parquetRows, readLocal, useTempWarehouse } from '../writer/support.js';
import { parquetMetadata } from 'hyparquet';
import { scanTable } from '../../../src/iceberg/scan/table-scan.js';
import { planScan } from '../../../src/iceberg/scan/scan-plan.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { Types } from '../../../src/iceberg/spec/types.js';
import { compactionDue, compactTable, maintainTable, type CompactionProgress } from '../../../src/pipeline/maintenance.js';
import { silentLogger } from '../../../src/pipeline/observe/logger.js';

const w = useTempWarehouse('floe-rewrite-');

const row = keyedRow;

async function liveDeleteFiles(t: CatalogTable): Promise<number> {
  let n = 0;
  for (const mf of await readSnapshotManifests(t.io, currentSnapshot(t.metadata)!)) if (mf.content === 'deletes') for (const e of await readManifestEntries(t.io, mf)) if (e.status !== 'deleted') n++;
  return n;
}

/**
 * A table of job `job` with 40 rows in checkpoint 1, then checkpoints 2–6 each updating a row (into
 * another group), deleting one and inserting one twice: deletes of every kind to compact.
 */
async function upsertedTable(formatVersion: 2 | 3, partitioned: boolean, job: string): Promise<{ t: CatalogTable; c: TableCommitter }> {
  const t0 = await newTable(w, { formatVersion, spec: partitioned ? BY_GROUP : undefined });
  const c = new TableCommitter({ identifier: t0.identifier, catalog: w.catalog, jobId: job });
  await c.open();
  await c.write(Array.from({ length: 40 }, (_, i) => insert(row(BigInt(i), i % 3, `r${i}`))));
  await c.commit(1n, '{}');
  for (let k = 2; k <= 6; k++) {
    await c.write([update(row(BigInt(k), (k + 1) % 3, `u${k}`)), removeKey([BigInt(k + 20)]), insert(row(BigInt(100 + k), k % 3, `n${k}`)), insert(row(BigInt(100 + k), k % 3, `again${k}`))]);
    await c.commit(BigInt(k), '{}');
  }
  return { t: await loadCatalogTable(w.catalog, t0.identifier), c };
}

/** The data files the table's latest `replace` snapshot removed. */
async function lastReplaceRemoved(t0: CatalogTable): Promise<string[]> {
  const t = await loadCatalogTable(w.catalog, t0.identifier);
  const snap = [...t.metadata.snapshots].reverse().find((x) => x.summary.operation === 'replace')!;
  const out: string[] = [];
  for (const mf of await readSnapshotManifests(t.io, snap)) {
    if (mf.content !== 'data' || mf.addedSnapshotId !== snap.snapshotId) continue;
    for (const e of await readManifestEntries(t.io, mf)) if (e.status === 'deleted') out.push(e.dataFile.filePath);
  }
  return out;
}

describe('rewriteDataFilesWithDeletes', () => {
  for (const partitioned of [false, true]) {
    it(`v2 ${partitioned ? 'partitioned' : 'unpartitioned'}: applies every delete, leaves none, reads the same`, async () => {
      const { t } = await upsertedTable(2, partitioned, 'job-r');
      expect(await liveDeleteFiles(t)).toBeGreaterThan(0);
      const before = (await lakeTableRows(w.catalog, t.identifier)).rows.sort();

      const dry = await rewriteDataFilesWithDeletes(t, { dryRun: true });
      expect(dry.rewrittenDataFiles).toBeGreaterThan(0);
      expect((await loadCatalogTable(w.catalog, t.identifier)).metadata.currentSnapshotId).toBe(t.metadata.currentSnapshotId);

      const r = await rewriteDataFilesWithDeletes(t);
      expect(r.skipped).toBeUndefined();
      const after = await loadCatalogTable(w.catalog, t.identifier);
      expect(await liveDeleteFiles(after)).toBe(0);
      expect(currentSnapshot(after.metadata)!.summary.operation).toBe('replace');
      expect((await lakeTableRows(w.catalog, t.identifier)).rows.sort()).toEqual(before);
      expect((await icebirdRows(after.metadata.location)).length).toBe(before.length);

      // the writer goes on: its upserts apply to the rewritten rows
      const again = new TableCommitter({ identifier: t.identifier, catalog: w.catalog, jobId: 'job-r' });
      await again.open();
      await again.write([update(row(0n, 0, 'after compaction')), removeKey([1n])]);
      await again.commit(7n, '{}');
      const rows = (await lakeTableRows(w.catalog, t.identifier)).rows;
      expect(rows.length).toBe(before.length - 1);
      expect(rows.some((x) => x.includes('"after compaction"'))).toBe(true);
      expect(rows.some((x) => x.startsWith('N1|'))).toBe(false);
    });
  }

  /** key (first column, as text) → [_row_id, _last_updated_sequence_number] through floe's reader. */
  async function lineageByKey(t: CatalogTable): Promise<Map<string, [bigint | null, bigint | null]>> {
    const scan = await scanTable(t, { rowLineage: true });
    const out = new Map<string, [bigint | null, bigint | null]>();
    const w = scan.schema.fields.length;
    for await (const r of scan.rows()) {
      expect(r.length).toBe(w + 2);
      out.set(`${String(r[0])}|${String(r[2])}`, [r[w] as bigint | null, r[w + 1] as bigint | null]);
    }
    return out;
  }

  async function liveDvs(t: CatalogTable): Promise<number> {
    let n = 0;
    for (const mf of await readSnapshotManifests(t.io, currentSnapshot(t.metadata)!)) if (mf.content === 'deletes') for (const e of await readManifestEntries(t.io, mf)) if (e.status !== 'deleted' && e.dataFile.fileFormat === 'PUFFIN') n++;
    return n;
  }

  for (const partitioned of [false, true]) {
    it(`v3 ${partitioned ? 'partitioned' : 'unpartitioned'}: DV upserts compacted, rows and row lineage unchanged, upserts go on`, async () => {
      const { t, c } = await upsertedTable(3, partitioned, 'job-v3');
      expect(await liveDvs(t)).toBeGreaterThan(0);
      const before = (await lakeTableRows(w.catalog, t.identifier)).rows.sort();
      const lineageBefore = await lineageByKey(t);
      expect(lineageBefore.size).toBe(before.length);
      // meaningful: every row has an id, ids are unique, and rows were last updated at different commits
      const ids = [...lineageBefore.values()].map(([id]) => id);
      expect(ids.every((x) => typeof x === 'bigint')).toBe(true);
      expect(new Set(ids.map(String)).size).toBe(ids.length);
      expect(new Set([...lineageBefore.values()].map(([, s]) => String(s))).size).toBeGreaterThan(1);
      const nextRowIdBefore = t.metadata.nextRowId!;

      const r = await rewriteDataFilesWithDeletes(t);
      expect(r.skipped).toBeUndefined();
      expect(r.rewrittenDataFiles).toBeGreaterThan(0);
      const after = await loadCatalogTable(w.catalog, t.identifier);
      const snap = currentSnapshot(after.metadata)!;
      expect(snap.summary.operation).toBe('replace');
      expect(await liveDeleteFiles(after)).toBe(0);
      expect((await lakeTableRows(w.catalog, t.identifier)).rows.sort()).toEqual(before);
      expect(await lineageByKey(after)).toEqual(lineageBefore);

      // spec "Snapshot Row IDs": first-row-id = the previous next-row-id; next-row-id += added-rows,
      // which covers at least the new files' rows (they get a first_row_id like any added file)
      expect(snap.firstRowId).toBe(nextRowIdBefore);
      expect(after.metadata.nextRowId).toBe(nextRowIdBefore + snap.addedRows!);
      const plan = await planScan(after.io, after.metadata);
      // the new files are the ones with the replace commit's data sequence number
      const added = plan.tasks.filter((task) => task.sequenceNumber === snap.sequenceNumber);
      expect(added.length).toBe(r.addedDataFiles);
      expect(snap.addedRows!).toBeGreaterThanOrEqual(added.reduce((n, task) => n + task.file.recordCount, 0n));

      // the compacted files hold the lineage as real columns (hyparquet, not floe's reader)
      const fromFiles = new Map<string, [bigint | null, bigint | null]>();
      for (const task of added) {
        expect(task.file.firstRowId).toBeGreaterThanOrEqual(nextRowIdBefore);
        const schema = parquetMetadata(readLocal(task.file.filePath).buffer as ArrayBuffer).schema;
        expect(schema.find((e) => e.name === '_row_id')?.field_id).toBe(2147483540);
        expect(schema.find((e) => e.name === '_last_updated_sequence_number')?.field_id).toBe(2147483539);
        for (const o of await parquetRows(task.file.filePath)) {
          expect(typeof o._row_id).toBe('bigint');
          expect(typeof o._last_updated_sequence_number).toBe('bigint');
          expect(o._last_updated_sequence_number as bigint).toBeLessThan(snap.sequenceNumber);
          fromFiles.set(`${String(o.id)}|${String(o.name)}`, [o._row_id as bigint, o._last_updated_sequence_number as bigint]);
        }
      }
      // every rewritten row's lineage is its lineage from before
      expect(fromFiles.size).toBeGreaterThan(0);
      for (const [k, v] of fromFiles) expect(v).toEqual(lineageBefore.get(k));

      // the committer that was open across the compaction: its index points at the rewritten files,
      // so its DVs are relocated onto the new ones
      await c.write([update(row(0n, 0, 'after compaction')), removeKey([1n]), update(row(7n, 1, 'seven'))]);
      await c.commit(7n, '{}');
      // and a fresh one builds its index from the compacted table
      const again = new TableCommitter({ identifier: t.identifier, catalog: w.catalog, jobId: 'job-v3' });
      await again.open();
      await again.write([update(row(8n, 2, 'eight')), removeKey([9n])]);
      await again.commit(8n, '{}');
      const last = await loadCatalogTable(w.catalog, t.identifier);
      const rows = (await lakeTableRows(w.catalog, t.identifier)).rows;
      expect(rows.length).toBe(before.length - 2);
      for (const name of ['after compaction', 'seven', 'eight']) expect(rows.filter((x) => x.includes(`"${name}"`)).length).toBe(1);
      expect(rows.some((x) => x.startsWith('N1|') || x.startsWith('N9|'))).toBe(false);
      expect(await liveDvs(last)).toBeGreaterThan(0);
      expect(await liveDeleteFiles(last)).toBe(await liveDvs(last)); // DVs only, no equality delete
      // rows the later upserts left alone keep their lineage
      const lineageLast = await lineageByKey(last);
      for (const [k, v] of lineageBefore) {
        if (/^(0|1|7|8|9)\|/.test(k)) continue;
        expect(lineageLast.get(k)).toEqual(v);
      }
      // and the table compacts again, lineage still kept
      const r2 = await rewriteDataFilesWithDeletes(last);
      expect(r2.skipped).toBeUndefined();
      const final = await loadCatalogTable(w.catalog, t.identifier);
      expect(await liveDeleteFiles(final)).toBe(0);
      expect(await lineageByKey(final)).toEqual(lineageLast);
    });
  }

  it('v3 keyless: equality deletes applied, row lineage kept', async () => {
    const schema = new Schema(0, [
      { id: 1, name: 'id', required: true, type: Types.long },
      { id: 2, name: 'grp', required: true, type: Types.int },
      { id: 3, name: 'name', required: false, type: Types.string },
    ]);
    const t0 = await newTable(w, { formatVersion: 3, schema });
    const c = new TableCommitter({ identifier: t0.identifier, catalog: w.catalog, jobId: 'job-k' });
    await c.open();
    const k = (id: number, name: string): Row => [BigInt(id), id % 2, name];
    await c.write(Array.from({ length: 20 }, (_, i) => insert(k(i, `k${i}`))));
    await c.commit(1n, '{}');
    await c.write([{ op: 'delete', before: k(3, 'k3') }, { op: 'update', before: k(4, 'k4'), after: k(4, 'k4b') }, insert(k(30, 'k30'))]);
    await c.commit(2n, '{}');
    const t = await loadCatalogTable(w.catalog, t0.identifier);
    expect(await liveDeleteFiles(t)).toBeGreaterThan(0);
    const before = (await lakeTableRows(w.catalog, t.identifier)).rows.sort();
    const lineageBefore = await lineageByKey(t);
    const r = await rewriteDataFilesWithDeletes(t);
    expect(r.skipped).toBeUndefined();
    const after = await loadCatalogTable(w.catalog, t.identifier);
    expect(await liveDeleteFiles(after)).toBe(0);
    expect((await lakeTableRows(w.catalog, t.identifier)).rows.sort()).toEqual(before);
    expect(await lineageByKey(after)).toEqual(lineageBefore);
  });

  for (const formatVersion of [2, 3] as const) {
    it(`v${formatVersion}: a compaction in steps of one data file, the writer committing between them, ends with the files it began with`, async () => {
      const { t, c } = await upsertedTable(formatVersion, true, `job-steps-${formatVersion}`);
      const model = new Map((await lakeTableRows(w.catalog, t.identifier)).rows.map((x) => [x.split('|')[0]!, x]));
      const planned = new Set((await planScan(t.io, t.metadata)).tasks.filter((task) => task.deletes.dv || task.deletes.position.length > 0 || task.deletes.equality.length > 0).map((task) => task.file.filePath));
      expect(planned.size).toBeGreaterThan(2);
      const options = { compactMinDeleteFiles: 1, olderThanMs: 3_600_000, retainLast: 100, onCommit: async (table: CatalogTable, compaction?: Parameters<TableCommitter['followMaintenance']>[1]) => void (await c.followMaintenance(table, compaction)) };
      let continuing: CompactionProgress | undefined;
      const rewritten: string[] = [];
      let steps = 0;
      do {
        const table = await loadCatalogTable(w.catalog, t.identifier);
        // one data file a step
        const r = await compactTable(table, options, silentLogger, { keepGoing: () => false, ...(continuing ? { continuing } : {}) });
        expect(r.compaction?.rewrittenDataFiles).toBe(1);
        rewritten.push(...(await lastReplaceRemoved(t)));
        continuing = r.continuing;
        steps++;
        // the writer commits between two steps: a row of a file still to rewrite changes, a new one comes
        const k = 10 + steps;
        await c.write([update(row(BigInt(k), 0, `step${steps}`)), insert(row(BigInt(200 + steps), 1, `new${steps}`))]);
        await c.commit(BigInt(100 + steps), '{}');
        model.set(`L${k}`, '');
        model.set(`L${200 + steps}`, '');
      } while (continuing);
      // every file chosen at the start was rewritten once, none added later
      expect(steps).toBe(planned.size);
      expect(new Set(rewritten)).toEqual(planned);
      // the rows are the writer's, read by floe and by icebird
      const rows = (await lakeTableRows(w.catalog, t.identifier)).rows;
      expect(new Set(rows.map((x) => x.split('|')[0]))).toEqual(new Set(model.keys()));
      for (let s = 1; s <= steps; s++) {
        expect(rows.filter((x) => x.includes(`"step${s}"`)).length).toBe(1);
        expect(rows.filter((x) => x.includes(`"new${s}"`)).length).toBe(1);
      }
      // (icebird reads no deletion vectors)
      if (formatVersion === 2) expect((await icebirdRows((await loadCatalogTable(w.catalog, t.identifier)).metadata.location)).length).toBe(rows.length);
    });
  }

  it('maintenance: a v3 table compacts when its live DVs reach minDeleteFiles or its deleted rows reach minDeletedRowsRatio', async () => {
    const t0 = await newTable(w, { formatVersion: 3 });
    const c = new TableCommitter({ identifier: t0.identifier, catalog: w.catalog, jobId: 'job-m' });
    await c.open();
    await c.write(Array.from({ length: 100 }, (_, i) => insert(row(BigInt(i), i % 3, `r${i}`))));
    await c.commit(1n, '{}');
    // 5 of 100 rows deleted, in one DV on the one data file
    await c.write([removeKey([1n]), removeKey([2n]), update(row(3n, 0, 'u3')), update(row(4n, 0, 'u4')), removeKey([5n])]);
    await c.commit(2n, '{}');
    const t = await loadCatalogTable(w.catalog, t0.identifier);
    const summary = currentSnapshot(t.metadata)!.summary;
    expect(summary['total-delete-files']).toBe('1');
    expect(summary['total-position-deletes']).toBe('5');
    expect(compactionDue(t, 100)).toBe(false);
    expect(compactionDue(t, 1)).toBe(true);
    expect(compactionDue(t, 100, 0.1)).toBe(false); // 5 / 102 records
    expect(compactionDue(t, 100, 0.04)).toBe(true);

    const base = { olderThanMs: 3_600_000, retainLast: 10, compactMinDeleteFiles: 100 };
    const skipped = await maintainTable(t, { ...base, compactMinDeletedRowsRatio: 0.1 }, silentLogger);
    expect(skipped.report.compaction).toBeUndefined();
    const before = (await lakeTableRows(w.catalog, t.identifier)).rows.sort();
    const lineageBefore = await lineageByKey(t);
    const done = await maintainTable(t, { ...base, compactMinDeletedRowsRatio: 0.04 }, silentLogger);
    expect(done.report.compaction).toEqual({ rewrittenDataFiles: 1, removedDeleteFiles: 1 });
    const after = await loadCatalogTable(w.catalog, t.identifier);
    expect(await liveDeleteFiles(after)).toBe(0);
    expect(compactionDue(after, 1, 0.0001)).toBe(false);
    expect((await lakeTableRows(w.catalog, t.identifier)).rows.sort()).toEqual(before);
    expect(await lineageByKey(after)).toEqual(lineageBefore);
  });
});
