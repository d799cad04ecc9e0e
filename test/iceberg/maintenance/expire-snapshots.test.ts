/**
 * Snapshot expiry on tables the upsert writer made (v2: equality + position deletes; v3 partitioned:
 * deletion vectors, merged and replaced): the table reads the same before and after (floe's scan, and
 * icebird for v2), every file a retained snapshot reaches still exists, the files only expired snapshots
 * reached are gone, a dry run changes nothing, and the checkpoint stamp survives (lastCommitted).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expireSnapshots, planExpiry } from '../../../src/iceberg/maintenance/expire-snapshots.js';
import { loadCatalogTable, readManifestEntries, readSnapshotManifests, type CatalogTable } from '../../../src/iceberg/table/index.js';
import { TableCommitter, lastCommitted } from '../../../src/iceberg/checkpoint/index.js';
import type { Catalog } from '../../../src/iceberg/metadata/catalog.js';
import { catalogTable } from '../../../src/iceberg/table/catalog-table.js';
import { FloeError } from '../../../src/util/errors.js';
import { insert, removeKey, update } from '../../../src/iceberg/writer/index.js';
import { lakeTableRows } from '../../e2e/support/lake-compare.js';
import { icebirdRows } from '../writer/icebird-read.js';
import { churnedTable } from './churned-table.js';
import { keyedRow, localPath, useTempWarehouse } from '../writer/support.js';

const w = useTempWarehouse('floe-expire-');

const row = keyedRow;

/** Every file under the table's location, as local paths. */
function filesUnder(t: CatalogTable): string[] {
  const root = localPath(t.metadata.location);
  return (fs.readdirSync(root, { recursive: true }) as string[]).map((f) => path.join(root, f)).filter((f) => fs.statSync(f).isFile());
}

/** The files the current metadata's snapshots reach (lists, manifests, live content files). */
async function reachable(t: CatalogTable): Promise<Set<string>> {
  const out = new Set<string>();
  for (const s of t.metadata.snapshots) {
    out.add(localPath(s.manifestList));
    for (const mf of await readSnapshotManifests(t.io, s)) {
      out.add(localPath(mf.path));
      for (const e of await readManifestEntries(t.io, mf)) if (e.status !== 'deleted') out.add(localPath(e.dataFile.filePath));
    }
  }
  return out;
}

function churn(formatVersion: 2 | 3, name: string): Promise<CatalogTable> {
  return churnedTable(w, { formatVersion, name, jobId: 'job-x', initialRows: 20 });
}

describe('expireSnapshots', () => {
  for (const formatVersion of [2, 3] as const) {
    it(`v${formatVersion}: keeps what retained snapshots reach, deletes what only expired ones did, reads the same`, async () => {
      const t = await churn(formatVersion, `churn${formatVersion}`);
      expect(t.metadata.snapshots).toHaveLength(8);
      const before = (await lakeTableRows(w.catalog, t.identifier)).rows.sort();
      const filesBefore = filesUnder(t);

      const dry = await expireSnapshots(t, { expireOlderThanMs: BigInt(Date.now()) + 1000n, retainLast: 2, dryRun: true });
      expect(dry.expiredSnapshots).toHaveLength(6);
      expect(filesUnder(t)).toEqual(filesBefore);
      expect((await loadCatalogTable(w.catalog, t.identifier)).metadata.snapshots).toHaveLength(8);

      const result = await expireSnapshots(t, { expireOlderThanMs: BigInt(Date.now()) + 1000n, retainLast: 2 });
      expect(result.expiredSnapshots).toEqual(dry.expiredSnapshots);
      const after = await loadCatalogTable(w.catalog, t.identifier);
      expect(after.metadata.snapshots.map((s) => s.snapshotId)).toEqual(t.metadata.snapshots.slice(-2).map((s) => s.snapshotId));
      expect((await lakeTableRows(w.catalog, t.identifier)).rows.sort()).toEqual(before);
      // icebird as a second reader where it can: it reads no deletion vectors (v3 upserts write them)
      if (formatVersion === 2) expect((await icebirdRows(after.metadata.location)).length).toBe(before.length);
      expect(lastCommitted(after, 'job-x')).toMatchObject({ checkpointId: 8n, sourceOffset: '{"p":8}' });

      // nothing retained is missing; the data/ tree holds only what the retained snapshots reach
      const live = await reachable(after);
      const present = new Set(filesUnder(after));
      for (const f of live) expect(present.has(f), f).toBe(true);
      const deleted = [...result.deletedFiles.contentFiles, ...result.deletedFiles.manifests, ...result.deletedFiles.manifestLists].map(localPath);
      expect(deleted.length).toBeGreaterThan(0);
      for (const f of deleted) expect(present.has(f), f).toBe(false);
      for (const f of filesUnder(after).filter((x) => x.includes(`${path.sep}data${path.sep}`))) expect(live.has(f), `unreferenced ${f}`).toBe(true);

      // nothing more to expire: a second run is a no-op
      expect((await expireSnapshots(after, { expireOlderThanMs: BigInt(Date.now()) + 1000n, retainLast: 2 })).expiredSnapshots).toEqual([]);
    });
  }

  it('a plan made beforehand commits on a head its own leads to, the writer having committed and deleted meanwhile; its files go when the caller deletes them', async () => {
    const t = await churn(3, 'planned');
    const policy = { expireOlderThanMs: BigInt(Date.now()) + 1000n, retainLast: 2 };
    const planned = await planExpiry(t, policy);
    expect(planned.expired).toHaveLength(6);
    // the writer goes on after the plan: an update and a delete of rows the plan's head holds (a DV replaced)
    const c = new TableCommitter({ identifier: t.identifier, catalog: w.catalog, jobId: 'job-x' });
    await c.open();
    await c.write([update(row(1n, 0, 'after-plan')), removeKey([3n]), insert(row(500n, 1, 'new'))]);
    await c.commit(9n, '{"p":9}');
    const head = await loadCatalogTable(w.catalog, t.identifier);
    const before = (await lakeTableRows(w.catalog, t.identifier)).rows.sort();
    let deletion: (() => Promise<void>) | undefined;
    const result = await expireSnapshots(head, { ...policy, planned, deleteLater: (d) => void (deletion = d) });
    expect(result.expiredSnapshots, 'the plan, not a new one (which would expire one more)').toEqual(planned.expired);
    const after = await loadCatalogTable(w.catalog, t.identifier);
    expect(after.metadata.snapshots.map((s) => s.snapshotId)).toEqual(head.metadata.snapshots.slice(-3).map((s) => s.snapshotId));
    const gone = [...result.deletedFiles.contentFiles, ...result.deletedFiles.manifests, ...result.deletedFiles.manifestLists].map(localPath);
    expect(gone.length).toBeGreaterThan(0);
    for (const f of gone) expect(fs.existsSync(f), `kept until the caller deletes: ${f}`).toBe(true);
    await deletion!();
    const live = await reachable(after);
    const present = new Set(filesUnder(after));
    for (const f of live) expect(present.has(f), f).toBe(true);
    for (const f of gone) expect(present.has(f), f).toBe(false);
    expect((await lakeTableRows(w.catalog, t.identifier)).rows.sort()).toEqual(before);
    // a plan whose head the table no longer leads from (another branch of history) is made again
    const stale = { ...planned, head: 12345n };
    const again = await expireSnapshots(after, { ...policy, planned: stale });
    expect(again.expiredSnapshots).toEqual([after.metadata.snapshots[0]!.snapshotId]);
  });

  it('expires nothing younger than the cutoff, and keeps at least retainLast', async () => {
    const t = await churn(3, 'young');
    expect((await expireSnapshots(t, { expireOlderThanMs: 0n })).expiredSnapshots).toEqual([]);
    const r = await expireSnapshots(t, { expireOlderThanMs: BigInt(Date.now()) + 1000n, retainLast: 8 });
    expect(r.expiredSnapshots).toEqual([]);
  });

  it('commits through the shared commit loop: a conflict is planned again on the reloaded table, an unknown outcome is looked for before any file goes', async () => {
    for (const how of ['conflict', 'lost response', 'refused without an answer'] as const) {
      const t = await churn(3, `loop-${how.replaceAll(' ', '-')}`);
      const before = (await lakeTableRows(w.catalog, t.identifier)).rows;
      let asked = 0;
      // the catalog's first answer: a concurrent commit lands first (conflict), the swap happens but
      // its answer is lost, or the request fails before reaching the catalog — both without a definite answer
      const catalog = new Proxy(w.catalog, {
        get(target, prop, receiver) {
          if (prop !== 'commitTable') return Reflect.get(target, prop, receiver);
          return async (...args: Parameters<Catalog['commitTable']>) => {
            if (++asked > 1) return target.commitTable(...args);
            if (how === 'conflict') {
              const c = new TableCommitter({ identifier: t.identifier, catalog: target, jobId: 'job-y' });
              await c.write(insert(row(500n, 0, 'concurrent')));
              await c.commit(1n, '{"p":"y"}');
              return target.commitTable(...args);
            }
            if (how === 'lost response') await target.commitTable(...args);
            throw new FloeError('catalog.test', 'commit-state-unknown', `${how} (test)`);
          };
        },
      });
      const r = await expireSnapshots(catalogTable(catalog, t), { expireOlderThanMs: BigInt(Date.now()) + 1000n, retainLast: 2 });
      expect(asked, how).toBe(how === 'lost response' ? 1 : 2);
      expect(r.expiredSnapshots.length, how).toBeGreaterThan(0);
      const now = await loadCatalogTable(w.catalog, t.identifier);
      expect(now.metadata.snapshots.map((s) => s.snapshotId).filter((id) => r.expiredSnapshots.includes(id)), how).toEqual([]);
      const left = await reachable(now);
      for (const f of [...r.deletedFiles.contentFiles, ...r.deletedFiles.manifests, ...r.deletedFiles.manifestLists].map(localPath)) {
        expect(left.has(f), `${how}: ${f} deleted but reachable`).toBe(false);
        expect(fs.existsSync(f), `${how}: ${f} still there`).toBe(false);
      }
      for (const f of left) expect(fs.existsSync(f), `${how}: reachable ${f} is gone`).toBe(true);
      const rows = (await lakeTableRows(w.catalog, t.identifier)).rows;
      expect(rows, how).toEqual(how === 'conflict' ? [...before, rows.find((x) => x.includes('concurrent'))!].sort() : before);
      expect(lastCommitted(now, 'job-x')?.checkpointId).toBe(8n);
    }
  });
});
