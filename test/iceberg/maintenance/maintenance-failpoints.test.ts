/**
 * A crash inside each maintenance step (the failpoints of rewrite-data-files.ts, expire-snapshots.ts,
 * remove-orphan-files.ts and the scoped ones of snapshot-producer.ts), armed in-process with
 * action 'throw': the step stops there, no file the current metadata or a retained snapshot reaches
 * is gone (test/support/lake-integrity.ts), the table reads the same, and running the step again —
 * with orphan removal for what an interrupted step left unreferenced — finishes the job. The e2e
 * variant (test/e2e/crash-maintenance.test.ts) kills `floe run` at the same points with SIGKILL.
 * Compaction is crashed in a v2 table (equality + position deletes) and a v3 one (deletion vectors,
 * rows rewritten with their row lineage).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { expireSnapshots } from '../../../src/iceberg/maintenance/expire-snapshots.js';
import { removeOrphanFiles } from '../../../src/iceberg/maintenance/remove-orphan-files.js';
import { rewriteDataFilesWithDeletes } from '../../../src/iceberg/maintenance/rewrite-data-files.js';
import { currentSnapshot } from '../../../src/iceberg/spec/snapshot-ids.js';
import { loadCatalogTable, readManifestEntries, readSnapshotManifests, type CatalogTable } from '../../../src/iceberg/table/index.js';
import { TableCommitter } from '../../../src/iceberg/checkpoint/index.js';
import { update } from '../../../src/iceberg/writer/index.js';
import { armFailpoint, disarmFailpoints, failpointTriggered } from '../../../src/util/failpoints.js';
import { lakeTableRows } from '../../e2e/support/lake-compare.js';
import { reachableFiles, unreachableFiles } from '../../support/lake-integrity.js';
import { churnedTable } from './churned-table.js';
import { keyedRow, localPath, useTempWarehouse } from '../writer/support.js';

const w = useTempWarehouse('floe-maint-fp-');
afterEach(() => disarmFailpoints());

const row = keyedRow;
/** Orphan removal "later": every unreferenced file is past a one-second window. */
const LATER = () => ({ olderThanMs: 1000, nowMs: Date.now() + 3_600_000 });

let tables = 0;
/** 8 checkpoints of upserts: v2 leaves equality + position deletes, v3 (partitioned) deletion vectors. */
function churn(formatVersion: 2 | 3): Promise<CatalogTable> {
  return churnedTable(w, { formatVersion, name: `fp${++tables}`, jobId: 'job-fp', initialRows: 30 });
}

async function rows(t: CatalogTable): Promise<string[]> {
  return (await lakeTableRows(w.catalog, t.identifier)).rows;
}

async function expectIntact(t: CatalogTable, expectedRows: string[]): Promise<CatalogTable> {
  const now = await loadCatalogTable(w.catalog, t.identifier);
  expect((await reachableFiles(now)).missing).toEqual([]);
  expect(await rows(now)).toEqual(expectedRows);
  return now;
}

async function liveDeleteFiles(t: CatalogTable): Promise<number> {
  let n = 0;
  for (const mf of await readSnapshotManifests(t.io, currentSnapshot(t.metadata)!)) if (mf.content === 'deletes') for (const e of await readManifestEntries(t.io, mf)) if (e.status !== 'deleted') n++;
  return n;
}

const compactions = (t: CatalogTable) => t.metadata.snapshots.filter((s) => s.summary['floe.maintenance'] === 'rewrite-data-files').length;

describe('a crash inside compaction', () => {
  // before the swap the step fails and the table is untouched; the crash-like throw right after the
  // swap is an unknown outcome the commit path resolves by reloading (the commit landed: done)
  const steps = ['compaction-after-rewrite-files', 'compaction-after-manifests', 'compaction-after-manifest-list', 'compaction-before-catalog-swap', 'compaction-after-catalog-swap'] as const;
  for (const formatVersion of [2, 3] as const) for (const step of steps) {
    it(`v${formatVersion} ${step}: nothing referenced is deleted, a re-run compacts, orphan removal takes the leftovers`, async () => {
      const t = await churn(formatVersion);
      const before = await rows(t);
      expect(await liveDeleteFiles(t)).toBeGreaterThan(0);
      armFailpoint(step, { action: 'throw' });
      const landed = step === 'compaction-after-catalog-swap';
      if (landed) expect((await rewriteDataFilesWithDeletes(t)).rewrittenDataFiles).toBeGreaterThan(0);
      else await expect(rewriteDataFilesWithDeletes(t)).rejects.toThrow(`failpoint ${step}`);
      expect(failpointTriggered(step)).toBe(true);
      let now = await expectIntact(t, before);
      expect(compactions(now)).toBe(landed ? 1 : 0);
      disarmFailpoints();

      if (!landed) {
        const again = await rewriteDataFilesWithDeletes(now);
        expect(again.skipped).toBeUndefined();
        now = await expectIntact(t, before);
      }
      expect(compactions(now)).toBe(1);
      expect(await liveDeleteFiles(now)).toBe(0);
      await removeOrphanFiles(now, LATER());
      now = await expectIntact(t, before);
      expect(await unreachableFiles(now)).toEqual([]);
    });
  }

  it('the scoped failpoints stay quiet in a checkpoint commit (a crash test can aim at compaction alone)', async () => {
    for (const step of steps) armFailpoint(step, { action: 'throw' });
    const t = await churn(2);
    for (const step of steps) expect(failpointTriggered(step)).toBe(false);
    expect(t.metadata.snapshots).toHaveLength(8);
  });
});

describe('a crash inside snapshot expiry', () => {
  for (const formatVersion of [2, 3] as const) {
    for (const [step, after] of [
      ['expire-after-commit', 0],
      ['expire-mid-delete', 2],
    ] as const) {
      it(`v${formatVersion} ${step}: the expiry landed, nothing retained is gone, orphan removal finishes the deletions`, async () => {
        const t = await churn(formatVersion);
        const before = await rows(t);
        const policy = { expireOlderThanMs: BigInt(Date.now()) + 1000n, retainLast: 2 };
        const plan = (await expireSnapshots(t, { ...policy, dryRun: true })).deletedFiles;
        const planned = [...plan.contentFiles, ...plan.manifests, ...plan.manifestLists].map(localPath);
        expect(planned.length).toBeGreaterThan(after + 1);

        armFailpoint(step, { after, action: 'throw' });
        await expect(expireSnapshots(t, policy)).rejects.toThrow(`failpoint ${step}`);
        let now = await expectIntact(t, before);
        expect(now.metadata.snapshots).toHaveLength(2); // the commit landed before the crash
        const gone = planned.filter((f) => !fs.existsSync(f));
        expect(gone).toHaveLength(step === 'expire-after-commit' ? 0 : after + 1);
        disarmFailpoints();

        // a re-run finds nothing to expire (the snapshots are gone from the metadata) …
        expect((await expireSnapshots(now, policy)).expiredSnapshots).toEqual([]);
        // … and orphan removal deletes what the interrupted expiry left: every planned file but those a
        // retained manifest still names in a DELETED entry (orphan removal keeps any file a manifest names)
        const left = planned.filter((f) => !gone.includes(f));
        const orphans = (await removeOrphanFiles(now, LATER())).orphans.map(localPath);
        expect(orphans.length).toBeGreaterThan(0);
        for (const f of orphans) expect(left, f).toContain(f);
        now = await expectIntact(t, before);
        expect(await unreachableFiles(now)).toEqual([]);
        const named = (await reachableFiles(now)).named;
        for (const f of planned) if (fs.existsSync(f)) expect(named.has(f), `${f} is still there but no manifest names it`).toBe(true);
      });
    }
  }

  it('a plan made on metadata another commit has passed is made again (the commit asserts main), so exactly retainLast stay', async () => {
    const stale = await churn(2);
    const c = new TableCommitter({ identifier: stale.identifier, catalog: w.catalog, jobId: 'job-fp' });
    await c.open();
    await c.write([update(row(3n, 1, 'late'))]);
    await c.commit(9n, '{"p":9}');
    const before = await rows(await loadCatalogTable(w.catalog, stale.identifier));
    const r = await expireSnapshots(stale, { expireOlderThanMs: BigInt(Date.now()) + 1000n, retainLast: 2 });
    const now = await expectIntact(stale, before);
    expect(now.metadata.snapshots).toHaveLength(2);
    expect(r.expiredSnapshots).toHaveLength(7);
  });

  it('a retained snapshot whose manifest list is missing stops the expiry before anything is committed or deleted', async () => {
    const t = await churn(2);
    const retainedList = localPath(t.metadata.snapshots.at(-2)!.manifestList!);
    fs.renameSync(retainedList, `${retainedList}.away`);
    const filesBefore = (await t.io.list(`${t.metadata.location}/`)).length;
    await expect(expireSnapshots(t, { expireOlderThanMs: BigInt(Date.now()) + 1000n, retainLast: 2 })).rejects.toThrow(/retained snapshot .* could not be read/);
    fs.renameSync(`${retainedList}.away`, retainedList);
    const now = await loadCatalogTable(w.catalog, t.identifier);
    expect(now.metadata.snapshots).toHaveLength(8);
    expect((await t.io.list(`${t.metadata.location}/`)).length).toBe(filesBefore);
  });
});

describe('a crash inside orphan removal', () => {
  it('orphans-mid-delete: what was deleted was unreferenced, a re-run deletes the rest', async () => {
    const t = await churn(3);
    const before = await rows(t);
    const root = localPath(t.metadata.location);
    const planted = ['data/a.parquet', 'data/b.parquet', 'metadata/stray.avro', '.floe/state/plan-x.json'].map((f) => {
      const p = path.join(root, f);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, 'orphan');
      return p;
    });
    armFailpoint('orphans-mid-delete', { after: 1, action: 'throw' });
    await expect(removeOrphanFiles(t, LATER())).rejects.toThrow('failpoint orphans-mid-delete');
    await expectIntact(t, before);
    expect(planted.filter((f) => fs.existsSync(f))).toHaveLength(2);
    disarmFailpoints();

    const again = await removeOrphanFiles(t, LATER());
    expect(again.orphans).toHaveLength(2);
    for (const f of planted) expect(fs.existsSync(f), f).toBe(false);
    const now = await expectIntact(t, before);
    expect(await unreachableFiles(now)).toEqual([]);
  });
});
