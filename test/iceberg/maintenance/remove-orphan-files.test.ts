/**
 * Orphan-file removal on a table the upsert writer made: old unreferenced files (a data file of a
 * commit that never landed, a stray metadata file, floe state objects no stamp names) go; young
 * ones stay (the window protects in-flight commits); everything the metadata reaches — including
 * the state objects the checkpoint stamp names — stays, and the table reads the same.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeOrphanFiles } from '../../../src/iceberg/maintenance/remove-orphan-files.js';
import { loadCatalogTable } from '../../../src/iceberg/table/index.js';
import { TableCommitter } from '../../../src/iceberg/checkpoint/index.js';
import { insert, update } from '../../../src/iceberg/writer/index.js';
import { encodeTableProgress } from '../../../src/pipeline/state.js';
import { referencedStateObjects } from '../../../src/pipeline/state-references.js';
import type { Row } from '../../../src/model/values.js';
import { lakeTableRows } from '../../e2e/support/lake-compare.js';
import { localPath, newTable, useTempWarehouse } from '../writer/support.js';

const w = useTempWarehouse('floe-orphans-');

const enc = new TextEncoder();
const row = (id: bigint, name: string): Row => [id, 1, name, '1.00', enc.encode(name)];
const DAY = 86_400_000;

function plant(file: string, ageMs: number): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, 'orphan');
  const t = (Date.now() - ageMs) / 1000;
  fs.utimesSync(file, t, t);
  return file;
}

describe('removeOrphanFiles', () => {
  it('deletes old unreferenced files only, keeps what the metadata and the stamps reach', async () => {
    const t0 = await newTable(w, { formatVersion: 3 });
    const c = new TableCommitter({ identifier: t0.identifier, catalog: w.catalog, jobId: 'job-o' });
    await c.open();
    await c.write([insert(row(1n, 'a')), insert(row(2n, 'b'))]);
    await c.commit(1n, '{"v":1,"phase":"streaming","offset":{}}');
    // a snapshot in progress: its stamp names a progress object (and that one its plan)
    const { summary, progress } = await encodeTableProgress(
      { phase: 'snapshot', snapshot: { chunks: ['c0'], finished: new Map(), rows: 0 } },
      { io: t0.io, tableLocation: t0.metadata.location, sourceKey: 'db.t', checkpointId: 2n },
    );
    await c.write([update(row(1n, 'a2'))]);
    await c.commit(2n, summary);
    const t = await loadCatalogTable(w.catalog, t0.identifier);
    const root = localPath(t.metadata.location);
    const before = (await lakeTableRows(w.catalog, t.identifier)).rows.sort();
    const everything = (fs.readdirSync(root, { recursive: true }) as string[]).map((f) => path.join(root, f)).filter((f) => fs.statSync(f).isFile());
    // make what is there old, so only being referenced can save it
    for (const f of everything) fs.utimesSync(f, (Date.now() - 5 * DAY) / 1000, (Date.now() - 5 * DAY) / 1000);

    const oldData = plant(path.join(root, 'data', 'never-committed.parquet'), 4 * DAY);
    const oldMeta = plant(path.join(root, 'metadata', 'stray.metadata.json'), 4 * DAY);
    const oldState = plant(path.join(root, '.floe', 'state', 'plan-unreferenced.json'), 4 * DAY);
    const young = plant(path.join(root, 'data', 'in-flight.parquet'), 60_000);

    const dry = await removeOrphanFiles(t, { olderThanMs: 3 * DAY, dryRun: true, referencedObjects: referencedStateObjects });
    expect(dry.orphans.map(localPath).sort()).toEqual([oldData, oldMeta, oldState].sort());
    expect(fs.existsSync(oldData)).toBe(true);

    const result = await removeOrphanFiles(t, { olderThanMs: 3 * DAY, referencedObjects: referencedStateObjects });
    expect(result.orphans.map(localPath).sort()).toEqual([oldData, oldMeta, oldState].sort());
    expect(result.tooYoung).toBe(1);
    for (const f of [oldData, oldMeta, oldState]) expect(fs.existsSync(f), f).toBe(false);
    expect(fs.existsSync(young)).toBe(true);
    for (const f of everything) expect(fs.existsSync(f), f).toBe(true);
    expect(fs.existsSync(localPath(progress.snapshot!.stateLocation!))).toBe(true);
    expect(fs.existsSync(localPath(progress.snapshot!.planLocation!))).toBe(true);
    expect((await lakeTableRows(w.catalog, t.identifier)).rows.sort()).toEqual(before);
  });
});
