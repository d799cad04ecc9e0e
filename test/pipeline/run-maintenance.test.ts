/**
 * `floe run`'s maintenance rounds (run-maintenance.ts). A writer that keeps a key index has its
 * compaction prepared beside its commits and landed after a later one, with the deletes committed
 * meanwhile carried over as DVs. Without one (a keyless table, an index not loaded yet) the round
 * runs in steps: with changes waiting, it stops between two data files once a commit interval has
 * passed and goes on at the next call — the writer committing in between — until compaction,
 * manifest rewrite and expiry are done; with nothing waiting, one call runs the whole round. Rows
 * are checked against the writer's and read by floe's scan.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TableCommitter } from '../../src/iceberg/checkpoint/index.js';
import { insert, removeKey, update } from '../../src/iceberg/writer/index.js';
import { loadCatalogTable, readManifestEntries, readSnapshotManifests, type CatalogTable } from '../../src/iceberg/table/index.js';
import { currentSnapshot } from '../../src/iceberg/spec/snapshot-ids.js';
import { planScan } from '../../src/iceberg/scan/scan-plan.js';
import { parseConfig } from '../../src/config/load.js';
import { RunMaintenance } from '../../src/pipeline/run-maintenance.js';
import type { CheckpointTable } from '../../src/pipeline/checkpoint.js';
import { silentLogger, type Logger } from '../../src/pipeline/observe/logger.js';
import { lakeTableRows } from '../e2e/support/lake-compare.js';
import { BY_GROUP, keyedRow, newTable, useTempWarehouse } from '../iceberg/writer/support.js';

const w = useTempWarehouse('floe-run-maintenance-');

/** Warnings maintenance logged (a failed step is one); every test expects none. */
const warned: string[] = [];
const warnings: Logger = { ...silentLogger, warn: (message, fields) => void warned.push(`${message} ${String(fields?.err ?? '')}`), child: () => warnings };
afterEach(() => {
  expect(warned.splice(0)).toEqual([]);
});

/** A v3 table partitioned by group: 60 rows, then 6 commits updating and deleting across the groups (DVs on many files). */
async function tableWithDeletes(job: string): Promise<{ t: CatalogTable; c: TableCommitter }> {
  const t0 = await newTable(w, { formatVersion: 3, spec: BY_GROUP });
  const c = new TableCommitter({ identifier: t0.identifier, catalog: w.catalog, jobId: job });
  await c.open();
  await c.write(Array.from({ length: 60 }, (_, i) => insert(keyedRow(BigInt(i), i % 6, `r${i}`))));
  await c.commit(1n, '{}');
  for (let k = 2; k <= 7; k++) {
    await c.write([update(keyedRow(BigInt(k), k % 6, `u${k}`)), removeKey([BigInt(k + 30)]), insert(keyedRow(BigInt(100 + k), k % 6, `n${k}`))]);
    await c.commit(BigInt(k), '{}');
  }
  return { t: await loadCatalogTable(w.catalog, t0.identifier), c };
}

async function liveDeleteFiles(t: CatalogTable): Promise<number> {
  let n = 0;
  for (const mf of await readSnapshotManifests(t.io, currentSnapshot(t.metadata)!)) if (mf.content === 'deletes') for (const e of await readManifestEntries(t.io, mf)) if (e.status !== 'deleted') n++;
  return n;
}

/** Maintenance every second (due after a 1.1 s wait), compacting every DV, keeping one snapshot; `now` times its steps. */
function maintenanceOf(now?: () => number): RunMaintenance {
  const config = parseConfig(
    { warehouse: { location: w.dir }, commit: { intervalMs: 100 }, maintenance: { intervalMs: 1000, compaction: { minDeleteFiles: 1 }, manifests: { minCount: 1 }, expireSnapshots: { olderThanMs: 0, retainLast: 1 } } },
    {},
  );
  return new RunMaintenance(config, warnings, undefined, undefined, now);
}

/** The fields of a captured table that maintenance reads. */
function captured(t: CatalogTable, c: TableCommitter): CheckpointTable {
  return { key: `db.${t.identifier.name}`, identifier: t.identifier, committer: c } as Partial<CheckpointTable> as CheckpointTable;
}

describe('floe run maintenance in steps', () => {
  it('with changes waiting, a round goes on after later checkpoints until compacted, rewritten and expired', async () => {
    const { t, c } = await tableWithDeletes('job-steps');
    c.close(); // no key index: the compaction runs in steps
    const planned = (await planScan(t.io, t.metadata)).tasks.filter((task) => task.deletes.dv !== undefined).map((task) => task.file.filePath);
    expect(planned.length).toBeGreaterThan(2);
    // a clock a second further at every reading: each step outlasts the commit interval, so with
    // changes waiting every call makes one step (one data file of compaction)
    let clock = 0;
    const m = maintenanceOf(() => (clock += 1000));
    await new Promise((r) => setTimeout(r, 1100));
    expect(m.due).toBe(true);
    let calls = 0;
    do {
      await m.runIfDue(w.catalog, [captured(t, c)], () => true);
      calls++;
      // it rests: twice the time the call took passes before the round goes on
      if (m.msUntilStep() !== undefined) {
        expect(m.due).toBe(false);
        expect(m.msUntilStep()).toBeGreaterThan(0);
      }
      // the writer commits between two calls, as floe run's checkpoints do
      await c.write([update(keyedRow(BigInt(40 + calls), 1, `between${calls}`))]);
      await c.commit(BigInt(100 + calls), '{}');
      // (an expiry planned beside the commits: the round waits for the plan)
      for (let i = 0; i < 500 && m.msUntilStep() !== undefined && !m.due; i++) await new Promise((r) => setTimeout(r, 10));
    } while (m.msUntilStep() !== undefined && calls < 50);
    // compaction one planned file a call (none the writer added since), then expiry planned beside
    // the writer's commit and committed at the next call, then the manifest rewrite
    expect(calls).toBe(planned.length + 3);
    expect(m.msUntilStep()).toBeUndefined();
    const after = await loadCatalogTable(w.catalog, t.identifier);
    const live = (await planScan(after.io, after.metadata)).tasks.map((task) => task.file.filePath);
    for (const p of planned) expect(live).not.toContain(p);
    // the expiry, planned on the head before a writer's commit (retainLast 1), kept that head and
    // the commit after it; then came a writer's commit, the manifest rewrite and the writer's last
    expect(after.metadata.snapshots.length).toBe(5);
    const rows = (await lakeTableRows(w.catalog, t.identifier)).rows;
    expect(rows.length).toBe(60);
    for (let k = 1; k <= calls; k++) expect(rows.filter((x) => x.includes(`"between${k}"`)).length).toBe(1);
  });

  it('with nothing waiting, one call runs the whole round', async () => {
    const { t, c } = await tableWithDeletes('job-quiet');
    c.close(); // no key index: the compaction runs in steps
    const before = (await lakeTableRows(w.catalog, t.identifier)).rows.sort();
    const m = maintenanceOf();
    await new Promise((r) => setTimeout(r, 1100));
    await m.runIfDue(w.catalog, [captured(t, c)], () => false);
    expect(m.due).toBe(false);
    const after = await loadCatalogTable(w.catalog, t.identifier);
    expect(await liveDeleteFiles(after)).toBe(0);
    // expiry kept the last snapshot only (retainLast 1, olderThanMs 0); the manifest rewrite came after it
    expect(after.metadata.snapshots.length).toBe(2);
    expect((await lakeTableRows(w.catalog, t.identifier)).rows.sort()).toEqual(before);
  });

  it('with a key index, the compaction is prepared while the writer commits and lands after, the deletes committed meanwhile carried as DVs', async () => {
    const { t, c } = await tableWithDeletes('job-beside');
    const planned = (await planScan(t.io, t.metadata)).tasks.filter((task) => task.deletes.dv !== undefined).map((task) => task.file.filePath);
    expect(planned.length).toBeGreaterThan(2);
    const m = maintenanceOf();
    await new Promise((r) => setTimeout(r, 1100));
    await m.runIfDue(w.catalog, [captured(t, c)], () => true);
    expect(m.msUntilStep(), 'preparing: the round waits for it').toBeDefined();
    // the writer commits while the files are written: updates and deletes of rows of files being rewritten
    await c.write([update(keyedRow(10n, 4, 'during-a')), removeKey([20n]), removeKey([21n]), insert(keyedRow(300n, 0, 'during-new'))]);
    await c.commit(100n, '{}');
    await c.write([update(keyedRow(10n, 4, 'during-b')), update(keyedRow(11n, 5, 'during-c')), removeKey([300n])]);
    await c.commit(101n, '{}');
    const beforeLanding = (await lakeTableRows(w.catalog, t.identifier)).rows.sort();
    for (let i = 0; i < 500 && !m.due; i++) await new Promise((r) => setTimeout(r, 20));
    expect(m.due, 'prepared').toBe(true);
    const followed = c.keyIndexLoads.followed;
    await m.runIfDue(w.catalog, [captured(t, c)], () => false);
    expect(m.msUntilStep(), 'landed, rewrote manifests, expired: the round ended').toBeUndefined();
    const after = await loadCatalogTable(w.catalog, t.identifier);
    const live = (await planScan(after.io, after.metadata)).tasks;
    for (const p of planned) expect(live.map((task) => task.file.filePath)).not.toContain(p);
    // the rows the writer deleted or updated meanwhile are deleted in the new files by DV
    expect(live.some((task) => task.deletes.dv !== undefined)).toBe(true);
    expect((await lakeTableRows(w.catalog, t.identifier)).rows.sort()).toEqual(beforeLanding);
    expect(c.keyIndexLoads.followed, 'the key index followed the landing').toBe(followed + 1);
    expect(c.keyIndexLoads.built, 'and was not built again').toBe(1);
    // the writer goes on from the landed files: its deletes there merge with the landing's DVs
    await c.write([update(keyedRow(12n, 0, 'after')), removeKey([13n]), removeKey([10n])]);
    await c.commit(102n, '{}');
    expect(c.keyIndexLoads.built).toBe(1);
    const rows = (await lakeTableRows(w.catalog, t.identifier)).rows;
    expect(rows.length).toBe(60 - 2 - 2);
    for (const gone of ['"during-a"', '"during-b"', '"during-new"', '"r13"', '"r20"', '"r21"']) expect(rows.filter((x) => x.includes(gone))).toEqual([]);
    for (const kept of ['"during-c"', '"after"']) expect(rows.filter((x) => x.includes(kept)).length).toBe(1);
  });
});
