/**
 * Commit retries against catalogs that misbehave the way real ones do (iceberg-rust's failing-catalog
 * tests): one that loses N races to a concurrent writer (a real competing commit lands first), one
 * that reports 'commit-state-unknown' after the commit actually landed, one that reports it when the
 * commit did not land, and one that always conflicts. The table must end correct, the snapshot id must
 * stay the same across attempts, and no file a committed snapshot refers to may ever be deleted.
 */
import { describe, expect, it } from 'vitest';
import type { Catalog, LoadedTable } from '../../../src/iceberg/metadata/catalog.js';
import type { MetadataUpdate, TableRequirement } from '../../../src/iceberg/metadata/metadata-updates.js';
import { readTableRows } from '../../../src/iceberg/scan/index.js';
import { ancestorsOf } from '../../../src/iceberg/spec/snapshot-ids.js';
import type { Snapshot } from '../../../src/iceberg/spec/table-metadata.js';
import {
  appendFiles,
  catalogTable,
  commitRowDelta,
  createTable,
  loadCatalogTable,
  readManifestEntries,
  readSnapshotManifests,
  type CatalogTable,
} from '../../../src/iceberg/table/index.js';
import { FloeError } from '../../../src/util/errors.js';
import { withCommitHook } from '../../support/commit-hook.js';
import { idNameSchema, useTempCatalog, writeDataFile, writeDeletionVectors, writeEqualityDeletes } from './table-fixtures.js';

const schema = idNameSchema();

const env = useTempCatalog('floe-retry-');

interface WrappedCatalog {
  readonly catalog: Catalog;
  readonly commits: { requirements: TableRequirement[]; updates: MetadataUpdate[] }[];
}

/** `inner`, its commit requests recorded; `commitTable` goes through `hook` (`call` counts from 1). */
function wrapCatalog(inner: Catalog, hook: (call: number, commit: () => Promise<LoadedTable>) => Promise<LoadedTable>): WrappedCatalog {
  const commits: WrappedCatalog['commits'] = [];
  const catalog = withCommitHook(inner, (commit, _identifier, requirements, updates) => {
    commits.push({ requirements, updates });
    return hook(commits.length, commit);
  });
  return { catalog, commits };
}

let n = 0;
async function freshTable(formatVersion: 2 | 3 = 2): Promise<CatalogTable> {
  const t = await createTable(env.catalog, { namespace: ['db'], name: `r${++n}` }, { schema, formatVersion });
  const first = await appendFiles(t, [await writeDataFile(t, [[1n, 'a'], [2n, 'b']])]);
  if (first.status !== 'committed') throw new Error('setup commit skipped');
  return first.table;
}

function addedSnapshot(u: MetadataUpdate[]): Snapshot {
  const a = u.find((x) => x.action === 'add-snapshot');
  if (!a || a.action !== 'add-snapshot') throw new Error('no add-snapshot');
  return a.snapshot;
}

/** Every file the table's snapshots refer to (lists, manifests, content files) exists. */
async function expectAllReferencedFilesExist(t: CatalogTable): Promise<void> {
  for (const s of t.metadata.snapshots) {
    expect(await t.io.exists(s.manifestList), s.manifestList).toBe(true);
    for (const m of await readSnapshotManifests(t.io, s)) {
      expect(await t.io.exists(m.path), m.path).toBe(true);
      for (const e of await readManifestEntries(t.io, m)) expect(await t.io.exists(e.dataFile.filePath), e.dataFile.filePath).toBe(true);
    }
  }
}

const fast = { minWaitMs: 1, maxWaitMs: 5 };

describe('commit retries', () => {
  it('loses 3 races to real concurrent commits, then lands: same snapshot id, re-sequenced, manifests reused', async () => {
    const base = await freshTable(3);
    const listed: string[][] = [];
    const wrapped: WrappedCatalog = wrapCatalog(env.catalog, async (call, commit) => {
      const attempt = addedSnapshot(wrapped.commits[call - 1].updates);
      listed.push((await readSnapshotManifests(base.io, attempt)).filter((m) => m.addedSnapshotId === attempt.snapshotId).map((m) => m.path));
      if (call <= 3) {
        // Another writer commits first; our request then fails the catalog's requirement check.
        const other = await loadCatalogTable(env.catalog, base.identifier);
        const r = await appendFiles(other, [await writeDataFile(other, [[BigInt(100 + call), `other ${call}`]])]);
        expect(r.status).toBe('committed');
      }
      return commit();
    });
    const t = catalogTable(wrapped.catalog, base);
    const data = await writeDataFile(t, [[3n, 'c']]);
    const eq = await writeEqualityDeletes(t, [1], [[1n]]);
    const result = await commitRowDelta(t, { dataFiles: [data], deleteFiles: [eq] }, { retry: fast });
    expect(result.status).toBe('committed');
    if (result.status !== 'committed') return;
    expect(result.attempts).toBe(4);

    const attempts = wrapped.commits.map((c) => addedSnapshot(c.updates));
    expect(new Set(attempts.map((s) => s.snapshotId)).size).toBe(1);
    expect(attempts.map((s) => s.sequenceNumber)).toEqual([2n, 3n, 4n, 5n]);
    expect(attempts.map((s) => s.firstRowId)).toEqual([2n, 3n, 4n, 5n]);
    expect(new Set(attempts.map((s) => s.manifestList)).size).toBe(4);
    // The new manifests (data + deletes) are written once and carried by every attempt's list.
    expect(listed[0]).toHaveLength(2);
    for (const l of listed) expect(l).toEqual(listed[0]);
    const final = await loadCatalogTable(env.catalog, base.identifier);
    // Failed attempts' manifest lists are cleaned up; everything committed stays.
    for (const s of attempts.slice(0, 3)) expect(await t.io.exists(s.manifestList)).toBe(false);
    await expectAllReferencedFilesExist(final);

    expect(ancestorsOf(final.metadata, final.metadata.currentSnapshotId)).toHaveLength(5);
    expect(final.metadata.currentSnapshotId).toBe(result.snapshot.snapshotId);
    expect(result.snapshot.summary['total-records']).toBe('6');
    // id 1 deleted (older sequence number); the competitors' rows and ours are live.
    const ids = (await readTableRows(final)).map((r) => r[0]).sort();
    expect(ids).toEqual([101n, 102n, 103n, 2n, 3n].sort());
  });

  const afterLanding: [string, () => Error][] = [
    ['commit-state-unknown', () => new FloeError('catalog.test', 'commit-state-unknown', 'timed out after sending the commit (test)')],
    ['a network error', () => Object.assign(new Error('socket hang up (test)'), { code: 'ECONNRESET' })],
    // Any error that is not a definite refusal (here: a crash-like throw right after the pointer swap,
    // as the after-catalog-swap failpoint raises) may have landed: never a reason to delete files.
    ['an internal error after the swap', () => new FloeError('catalog.test', 'internal', 'failpoint after-catalog-swap triggered (test)')],
  ];
  for (const [what, error] of afterLanding) {
    it(`${what} after the commit landed: found by its snapshot id, not committed twice, nothing deleted`, async () => {
      const base = await freshTable();
      const wrapped = wrapCatalog(env.catalog, async (call, commit) => {
        await commit();
        if (call === 1) throw error();
        throw new Error('no second commit expected');
      });
      const t = catalogTable(wrapped.catalog, base);
      const result = await appendFiles(t, [await writeDataFile(t, [[3n, 'c']])], { retry: fast, summary: { 'floe.checkpoint-id': '9' } });
      expect(result.status).toBe('committed');
      expect(result.attempts).toBe(1);
      expect(wrapped.commits).toHaveLength(1);
      const final = await loadCatalogTable(env.catalog, base.identifier);
      expect(final.metadata.snapshots.filter((s) => s.summary['floe.checkpoint-id'] === '9')).toHaveLength(1);
      expect(final.metadata.currentSnapshotId).toBe(addedSnapshot(wrapped.commits[0].updates).snapshotId);
      await expectAllReferencedFilesExist(final);
      expect((await readTableRows(final)).map((r) => r[0]).sort()).toEqual([1n, 2n, 3n]);
    });
  }

  it('commit-state-unknown when the commit did not land: retried with the same snapshot id, the unknown attempt’s files kept', async () => {
    const base = await freshTable();
    const wrapped = wrapCatalog(env.catalog, async (call, commit) => {
      if (call === 1) throw new FloeError('catalog.test', 'commit-state-unknown', 'connection reset before the request was processed (test)');
      return commit();
    });
    const t = catalogTable(wrapped.catalog, base);
    const result = await appendFiles(t, [await writeDataFile(t, [[3n, 'c']])], { retry: fast });
    expect(result.status).toBe('committed');
    expect(result.attempts).toBe(2);
    const [first, second] = wrapped.commits.map((c) => addedSnapshot(c.updates));
    expect(second.snapshotId).toBe(first.snapshotId);
    // The outcome of attempt 1 was unknown: its manifest list may be referenced by a commit in flight.
    expect(await t.io.exists(first.manifestList)).toBe(true);
    const final = await loadCatalogTable(env.catalog, base.identifier);
    await expectAllReferencedFilesExist(final);
    expect((await readTableRows(final)).map((r) => r[0]).sort()).toEqual([1n, 2n, 3n]);
  });

  it('v3: a concurrent commit that added a DV for the same data file makes the retry fail for good (one DV per data file)', async () => {
    const base = await freshTable(3);
    const dataFile = (await readManifestEntries(base.io, (await readSnapshotManifests(base.io, base.metadata.snapshots[0]))[0]))[0].dataFile;
    const wrapped: WrappedCatalog = wrapCatalog(env.catalog, async (call, commit) => {
      if (call === 1) {
        const other = await loadCatalogTable(env.catalog, base.identifier);
        const r = await commitRowDelta(other, { deleteFiles: await writeDeletionVectors(other, [{ dataFile, positions: [0] }]) });
        expect(r.status).toBe('committed');
      }
      return commit();
    });
    const t = catalogTable(wrapped.catalog, base);
    const ours = await writeDeletionVectors(t, [{ dataFile, positions: [1] }]);
    const err = await commitRowDelta(t, { deleteFiles: ours }, { retry: fast }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FloeError);
    expect((err as FloeError).kind).toBe('commit-conflict');
    expect((err as FloeError).retryable).toBe(false);
    expect((err as FloeError).message).toMatch(/added a deletion vector for .* which this commit also adds one for/);
    const final = await loadCatalogTable(env.catalog, base.identifier);
    expect((await readTableRows(final)).map((r) => r[0])).toEqual([2n]);
  });

  it('gives up after commit.retry.num-retries conflicts with a retryable error, removing only its own metadata files', async () => {
    const base = await freshTable();
    const wrapped = wrapCatalog(env.catalog, async () => {
      throw new FloeError('catalog.test', 'commit-conflict', 'branch main has changed (test)', { retryable: true });
    });
    const t = catalogTable(wrapped.catalog, base);
    const data = await writeDataFile(t, [[3n, 'c']]);
    const err = await appendFiles(t, [data], { retry: { ...fast, numRetries: 2 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FloeError);
    expect((err as FloeError).kind).toBe('commit-conflict');
    expect((err as FloeError).retryable).toBe(true);
    expect((err as FloeError).message).toMatch(/gave up committing snapshot \d+ after 3 attempt\(s\)/);
    expect(wrapped.commits).toHaveLength(3);
    for (const c of wrapped.commits) expect(await t.io.exists(addedSnapshot(c.updates).manifestList)).toBe(false);
    expect(await t.io.exists(data.filePath)).toBe(true);
    const final = await loadCatalogTable(env.catalog, base.identifier);
    expect(final.metadata.snapshots).toHaveLength(1);
    await expectAllReferencedFilesExist(final);
  });
});
