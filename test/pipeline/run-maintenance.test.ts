/**
 * `floe run`'s maintenance rounds in steps (run-maintenance.ts): with changes waiting, a round stops
 * between two data files once a commit interval has passed and goes on at the next call — the
 * writer committing in between — until compaction, manifest rewrite and expiry are done; with
 * nothing waiting, one call runs the whole round. Rows are checked against the writer's and read by
 * floe's scan.
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
  return new RunMaintenance(config, warnings, undefined, now);
}

/** The fields of a captured table that maintenance reads. */
function captured(t: CatalogTable, c: TableCommitter): CheckpointTable {
  return { key: `db.${t.identifier.name}`, identifier: t.identifier, committer: c } as Partial<CheckpointTable> as CheckpointTable;
}

describe('floe run maintenance in steps', () => {
  it('with changes waiting, a round goes on after later checkpoints until compacted, rewritten and expired', async () => {
    const { t, c } = await tableWithDeletes('job-steps');
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
    } while (m.msUntilStep() !== undefined && calls < 50);
    // compaction one planned file a call (none the writer added since), then manifests, then expiry
    expect(calls).toBe(planned.length + 2);
    expect(m.msUntilStep()).toBeUndefined();
    const after = await loadCatalogTable(w.catalog, t.identifier);
    const live = (await planScan(after.io, after.metadata)).tasks.map((task) => task.file.filePath);
    for (const p of planned) expect(live).not.toContain(p);
    // expiry ran last: its snapshot and the writer's commit after it
    expect(after.metadata.snapshots.length).toBe(2);
    const rows = (await lakeTableRows(w.catalog, t.identifier)).rows;
    expect(rows.length).toBe(60);
    for (let k = 1; k <= calls; k++) expect(rows.filter((x) => x.includes(`"between${k}"`)).length).toBe(1);
  });

  it('with nothing waiting, one call runs the whole round', async () => {
    const { t, c } = await tableWithDeletes('job-quiet');
    const before = (await lakeTableRows(w.catalog, t.identifier)).rows.sort();
    const m = maintenanceOf();
    await new Promise((r) => setTimeout(r, 1100));
    await m.runIfDue(w.catalog, [captured(t, c)], () => false);
    expect(m.due).toBe(false);
    const after = await loadCatalogTable(w.catalog, t.identifier);
    expect(await liveDeleteFiles(after)).toBe(0);
    // expiry kept the last snapshot only (retainLast 1, olderThanMs 0)
    expect(after.metadata.snapshots.length).toBe(1);
    expect((await lakeTableRows(w.catalog, t.identifier)).rows.sort()).toEqual(before);
  });
});
