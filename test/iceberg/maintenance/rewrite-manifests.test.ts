/**
 * Manifest rewriting on tables floe's upsert writer made, with commit-time merging turned off
 * (`commit.manifest-merge.enabled=false`) so that every commit leaves its own small manifests, as
 * another engine's fast appends would: the rewrite commits a `replace` snapshot with fewer
 * manifests, every live entry keeps its snapshot id, sequence numbers and (v3) first_row_id, DVs
 * keep their blob fields, the rows read the same (floe's scan; icebird on v2, which cannot read
 * DVs), the snapshot totals are the parent's, a dry run and a table under the threshold change
 * nothing, a v3 table goes on taking DV upserts (and no equality delete) afterwards, a concurrent
 * append is kept and a concurrent rewrite of the same manifests makes it give up.
 */
import { describe, expect, it } from 'vitest';
import { rewriteManifests } from '../../../src/iceberg/maintenance/rewrite-manifests.js';
import { tableHealth } from '../../../src/iceberg/maintenance/table-health.js';
import type { ManifestEntry } from '../../../src/iceberg/spec/data-file.js';
import { currentSnapshot } from '../../../src/iceberg/spec/snapshot-ids.js';
import { loadCatalogTable, readManifestEntries, readSnapshotManifests, type CatalogTable } from '../../../src/iceberg/table/index.js';
import { contentFileKey } from '../../../src/iceberg/table/manifest-filter.js';
import { TableCommitter } from '../../../src/iceberg/checkpoint/index.js';
import { insert, removeKey, update } from '../../../src/iceberg/writer/index.js';
import { lakeTableRows } from '../../e2e/support/lake-compare.js';
import { icebirdRows } from '../writer/icebird-read.js';
import { BY_GROUP, keyedRow, newTable, useTempWarehouse } from '../writer/support.js';

const w = useTempWarehouse('floe-rewrite-manifests-');

const row = keyedRow;
const NO_MERGE = { 'commit.manifest-merge.enabled': 'false' };

async function liveEntries(t: CatalogTable): Promise<Map<string, ManifestEntry>> {
  const out = new Map<string, ManifestEntry>();
  for (const mf of await readSnapshotManifests(t.io, currentSnapshot(t.metadata)!)) {
    for (const e of await readManifestEntries(t.io, mf)) if (e.status !== 'deleted') out.set(contentFileKey(e.dataFile), e);
  }
  return out;
}

async function manifestCount(t: CatalogTable): Promise<number> {
  return (await readSnapshotManifests(t.io, currentSnapshot(t.metadata)!)).length;
}

/** A keyed table with 40 rows and `commits` more checkpoints of updates, deletes and inserts. */
async function churnedTable(formatVersion: 2 | 3, partitioned: boolean, commits: number, name?: string): Promise<{ t: CatalogTable; c: TableCommitter }> {
  const t0 = await newTable(w, { formatVersion, spec: partitioned ? BY_GROUP : undefined, properties: NO_MERGE, ...(name ? { name } : {}) });
  const c = new TableCommitter({ identifier: t0.identifier, catalog: w.catalog, jobId: 'job-m' });
  await c.open();
  await c.write(Array.from({ length: 40 }, (_, i) => insert(row(BigInt(i), i % 3, `r${i}`))));
  await c.commit(1n, '{}');
  for (let k = 2; k <= commits + 1; k++) {
    await c.write([update(row(BigInt(k % 40), (k + 1) % 3, `u${k}`)), insert(row(BigInt(100 + k), k % 3, `n${k}`))]);
    if (k % 5 === 0) await c.write([removeKey([BigInt(100 + k - 1)])]);
    await c.commit(BigInt(k), '{}');
  }
  return { t: await loadCatalogTable(w.catalog, t0.identifier), c };
}

const sorted = async (t: CatalogTable): Promise<string[]> => (await lakeTableRows(w.catalog, t.identifier)).rows.sort();

describe('rewriteManifests', () => {
  for (const [formatVersion, partitioned] of [
    [3, false],
    [3, true],
    [2, false],
    [2, true],
  ] as const) {
    it(`v${formatVersion} ${partitioned ? 'partitioned' : 'unpartitioned'}: fewer manifests, the same entries and rows`, async () => {
      const { t, c } = await churnedTable(formatVersion, partitioned, 24);
      const before = await manifestCount(t);
      expect(before).toBeGreaterThan(40); // one data and (but for the first) one delete manifest per commit
      const rows = await sorted(t);
      const entries = await liveEntries(t);
      const parent = currentSnapshot(t.metadata)!;

      const dry = await rewriteManifests(t, { minManifests: 10, dryRun: true });
      expect(dry.skipped).toBe('dry run');
      expect(dry.replacedManifests).toBe(before);
      expect((await loadCatalogTable(w.catalog, t.identifier)).metadata.currentSnapshotId).toBe(parent.snapshotId);

      const r = await rewriteManifests(t, { minManifests: 10 });
      expect(r.skipped).toBeUndefined();
      const after = await loadCatalogTable(w.catalog, t.identifier);
      const snap = currentSnapshot(after.metadata)!;
      expect(snap.summary.operation).toBe('replace');
      expect(snap.parentSnapshotId).toBe(parent.snapshotId);
      expect(snap.summary['floe.maintenance']).toBe('rewrite-manifests');
      expect(snap.summary['manifests-replaced']).toBe(String(before));
      // one data and one delete manifest per spec: the table has one spec
      expect(await manifestCount(after)).toBe(2);
      expect(r.manifestsAfter).toBe(2);
      for (const k of ['total-data-files', 'total-delete-files', 'total-records', 'total-position-deletes', 'total-equality-deletes', 'total-files-size']) expect(snap.summary[k], k).toBe(parent.summary[k]);

      // every live file once, EXISTING, with the snapshot id, sequence numbers, row ids and DV fields it had
      const rewritten = await liveEntries(after);
      expect([...rewritten.keys()].sort()).toEqual([...entries.keys()].sort());
      for (const [k, e] of rewritten) {
        const was = entries.get(k)!;
        expect(e.status).toBe('existing');
        expect(e.snapshotId).toBe(was.snapshotId);
        expect(e.sequenceNumber).toBe(was.sequenceNumber);
        expect(e.fileSequenceNumber).toBe(was.fileSequenceNumber);
        expect(e.dataFile.firstRowId).toBe(was.dataFile.firstRowId);
        expect(e.dataFile.referencedDataFile).toBe(was.dataFile.referencedDataFile);
        expect(e.dataFile.contentOffset).toBe(was.dataFile.contentOffset);
        expect(e.dataFile.contentSizeInBytes).toBe(was.dataFile.contentSizeInBytes);
        if (formatVersion === 3 && e.dataFile.content === 'data') expect(e.dataFile.firstRowId).toBeDefined();
      }
      if (formatVersion === 3) {
        expect([...rewritten.values()].some((e) => e.dataFile.fileFormat === 'PUFFIN')).toBe(true);
        // the rewritten data manifest took a fresh first_row_id range; the rows kept theirs
        expect(after.metadata.nextRowId).toBeGreaterThan(t.metadata.nextRowId!);
      }
      expect(await sorted(after)).toEqual(rows);
      if (formatVersion === 2) expect((await icebirdRows(after.metadata.location)).length).toBe(rows.length);

      // the writer goes on upserting; v3 upserts stay DVs
      await c.write([update(row(3n, 1, 'after rewrite')), removeKey([4n])]);
      await c.commit(1000n, '{}');
      const next = await loadCatalogTable(w.catalog, t.identifier);
      const final = (await lakeTableRows(w.catalog, t.identifier)).rows;
      expect(final.length).toBe(rows.length - 1);
      expect(final.some((x) => x.includes('"after rewrite"'))).toBe(true);
      const health = await tableHealth(next.io, next.metadata, next.metadataLocation);
      expect(health.manifests.data + health.manifests.deletes).toBe(await manifestCount(next));
      if (formatVersion === 3) {
        expect(health.deleteFiles.equality).toBe(0);
        expect(Number(currentSnapshot(next.metadata)!.summary['added-dvs'] ?? '0')).toBeGreaterThan(0);
      }
    });
  }

  it('leaves a table with few small manifests alone', async () => {
    const { t } = await churnedTable(3, false, 3);
    const r = await rewriteManifests(t);
    expect(r.skipped).toMatch(/not more than maintenance.manifests.minCount \(100\)/);
    expect((await loadCatalogTable(w.catalog, t.identifier)).metadata.currentSnapshotId).toBe(t.metadata.currentSnapshotId);
  });

  it('splits at the target size and keeps manifests already that large', async () => {
    const { t } = await churnedTable(2, false, 20);
    const manifests = await readSnapshotManifests(t.io, currentSnapshot(t.metadata)!);
    const dataBytes = manifests.filter((m) => m.content === 'data').reduce((n, m) => n + Number(m.length), 0);
    // a target of a third of the data manifests' bytes: three or four data manifests come out
    const r = await rewriteManifests(t, { minManifests: 5, targetSizeBytes: Math.ceil(dataBytes / 3) });
    expect(r.skipped).toBeUndefined();
    const after = await loadCatalogTable(w.catalog, t.identifier);
    const data = (await readSnapshotManifests(after.io, currentSnapshot(after.metadata)!)).filter((m) => m.content === 'data');
    expect(data.length).toBeGreaterThanOrEqual(3);
    expect(data.length).toBeLessThan(manifests.filter((m) => m.content === 'data').length);
    // manifests at or above the target are not small: with a target below every manifest's size nothing is rewritten
    const smallest = Math.min(...(await readSnapshotManifests(after.io, currentSnapshot(after.metadata)!)).map((m) => Number(m.length)));
    const none = await rewriteManifests(after, { minManifests: 1, targetSizeBytes: smallest });
    expect(none.skipped).toMatch(/^0 small manifest\(s\)/);
  });

  it('keeps a concurrent append and gives up when another writer rewrote the same manifests', async () => {
    const { t, c } = await churnedTable(3, false, 15);
    // another commit lands after `t` was loaded: only adds manifests (merging is off)
    await c.write([insert(row(999n, 1, 'concurrent'))]);
    await c.commit(500n, '{}');
    const r = await rewriteManifests(t, { minManifests: 10 });
    expect(r.skipped).toBeUndefined();
    const after = await loadCatalogTable(w.catalog, t.identifier);
    expect(currentSnapshot(after.metadata)!.summary.operation).toBe('replace');
    expect((await lakeTableRows(w.catalog, t.identifier)).rows.some((x) => x.includes('"concurrent"'))).toBe(true);
    // the concurrent commit's manifests were kept beside the rewritten ones
    expect(await manifestCount(after)).toBeGreaterThan(2);

    // a second rewrite planned on the stale `t`: its manifests were all replaced by the first
    const stale = await rewriteManifests(t, { minManifests: 10 });
    expect(stale.skipped).toMatch(/another writer changed the manifests meanwhile/);
    expect((await loadCatalogTable(w.catalog, t.identifier)).metadata.currentSnapshotId).toBe(after.metadata.currentSnapshotId);
  });
});
