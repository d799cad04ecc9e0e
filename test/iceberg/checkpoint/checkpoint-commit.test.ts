/**
 * One checkpoint commit (checkpoint-commit.ts) through the real filesystem catalog, watched from the
 * outside: which manifest files it reads — the head's manifest list and delete manifests once, the
 * snapshots another writer committed meanwhile once, however many attempts (table/manifest-reads.ts)
 * — and how many catalog commits it makes — one, also when the table first needs the unpartitioned
 * spec of global equality deletes (table/added-spec.ts).
 */
import { describe, expect, it } from 'vitest';
import type { Catalog, LoadedTable } from '../../../src/iceberg/metadata/catalog.js';
import { appendFiles, loadCatalogTable, readManifestEntries, readSnapshotManifests } from '../../../src/iceberg/table/index.js';
import { TableCommitter } from '../../../src/iceberg/checkpoint/index.js';
import { insert, TableChangeWriter, update } from '../../../src/iceberg/writer/index.js';
import { currentSnapshot } from '../../../src/iceberg/spec/snapshot-ids.js';
import { isUnpartitioned } from '../../../src/iceberg/spec/partition.js';
import type { Row } from '../../../src/model/values.js';
import { readTableRows } from '../../../src/iceberg/scan/index.js';
import { BY_GROUP, newTable, useTempWarehouse } from '../writer/support.js';

const w = useTempWarehouse('floe-checkpoint-commit-');

const row = (id: bigint, grp: number, name: string): Row => [id, grp, name, '1.00', null];

/**
 * The warehouse's catalog, counting the Avro files (manifest lists, manifests) read through the
 * tables it loads and the commits it is asked for; `beforeCommit` runs before a commit is passed on.
 */
function watched(base: Catalog) {
  const reads = new Map<string, number>();
  const state = { commits: 0, beforeCommit: undefined as (() => Promise<void>) | undefined };
  const withCountingIo = (t: LoadedTable): LoadedTable => ({
    ...t,
    io: new Proxy(t.io, {
      get(target, prop, receiver) {
        if (prop !== 'read') return Reflect.get(target, prop, receiver);
        return (path: string) => {
          if (path.endsWith('.avro')) reads.set(path, (reads.get(path) ?? 0) + 1);
          return target.read(path);
        };
      },
    }),
  });
  const catalog = new Proxy(base, {
    get(target, prop, receiver) {
      if (prop === 'loadTable') return async (...args: Parameters<Catalog['loadTable']>) => withCountingIo(await target.loadTable(...args));
      if (prop === 'commitTable') {
        return async (...args: Parameters<Catalog['commitTable']>) => {
          state.commits++;
          const before = state.beforeCommit;
          state.beforeCommit = undefined;
          await before?.();
          return withCountingIo(await target.commitTable(...args));
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
  return { catalog, reads, state };
}

describe('a checkpoint commit', () => {
  it('reads the head\'s manifest list and each manifest at most once, also when another writer\'s commit makes it retry', async () => {
    const t = await newTable(w, { formatVersion: 3 });
    const { catalog, reads, state } = watched(w.catalog);
    const c = new TableCommitter({ identifier: t.identifier, catalog, jobId: 'reads', retry: { minWaitMs: 1, maxWaitMs: 2 } });
    await c.write(Array.from({ length: 40 }, (_, i) => insert(row(BigInt(i), 0, `r${i}`))));
    await c.commit(1n, '{}');
    await c.write([update(row(3n, 0, 'three')), update(row(7n, 0, 'seven'))]);
    await c.commit(2n, '{}');
    // checkpoint 3 deletes rows of both earlier files (one of them has a DV already: merged), and
    // another writer appends a file right before its first attempt reaches the catalog
    await c.write([update(row(5n, 0, 'five')), update(row(3n, 0, 'three again')), insert(row(100n, 0, 'new'))]);
    const other = await loadCatalogTable(w.catalog, t.identifier);
    const foreign = new TableChangeWriter(other, { mode: 'append' });
    await foreign.applyAll([insert(row(200n, 1, 'foreign'))]);
    const foreignFiles = (await foreign.prepare()).dataFiles;
    state.beforeCommit = async () => {
      await appendFiles(await loadCatalogTable(w.catalog, t.identifier), foreignFiles);
    };
    reads.clear();
    state.commits = 0;
    expect((await c.commit(3n, '{}')).status).toBe('committed');
    expect(state.commits, 'the first attempt conflicted, the second landed').toBe(2);
    const twice = [...reads].filter(([, n]) => n > 1);
    expect(twice, 'manifest files read more than once').toEqual([]);
    expect(reads.size).toBeGreaterThan(0);
    const names = (await readTableRows(await loadCatalogTable(w.catalog, t.identifier))).map((r) => r[2] as string);
    expect(names).toContain('three again');
    expect(names).toContain('foreign');
    expect(names).not.toContain('three');
    expect(names).toHaveLength(42);
  });

  it('adds the unpartitioned spec of global equality deletes in the commit of the snapshot that needs it', async () => {
    for (const formatVersion of [2, 3] as const) {
      const t = await newTable(w, { formatVersion, spec: BY_GROUP });
      const { catalog, state } = watched(w.catalog);
      const c = new TableCommitter({ identifier: t.identifier, catalog, jobId: 'spec', upsertDeletes: 'equality' });
      // upserts write an equality delete for every key they write: the first checkpoint needs the spec
      await c.write([insert(row(1n, 0, 'a')), insert(row(2n, 1, 'b'))]);
      const metadataLogBefore = (await loadCatalogTable(w.catalog, t.identifier)).metadata.metadataLog.length;
      expect(t.metadata.partitionSpecs.some(isUnpartitioned)).toBe(false);
      const first = await c.commit(1n, '{}');
      expect(state.commits, `v${formatVersion}: one catalog commit`).toBe(1);
      expect((await loadCatalogTable(w.catalog, t.identifier)).metadata.metadataLog.length).toBe(metadataLogBefore + 1);
      expect(currentSnapshot((await loadCatalogTable(w.catalog, t.identifier)).metadata)?.snapshotId).toBe(first.snapshot?.snapshotId);
      await c.write(update(row(1n, 2, 'moved')));
      state.commits = 0;
      const out = await c.commit(2n, '{}');
      expect(state.commits, `v${formatVersion}: one catalog commit once the table has the spec`).toBe(1);
      const after = await loadCatalogTable(w.catalog, t.identifier);
      const unpartitioned = after.metadata.partitionSpecs.find(isUnpartitioned);
      expect(unpartitioned?.specId).toBe(1);
      expect(after.metadata.partitionSpecs).toHaveLength(2);
      const entries = (await Promise.all([first, out].map(async (o) => (await Promise.all((await readSnapshotManifests(after.io, o.snapshot!)).map((m) => readManifestEntries(after.io, m)))).flat()))).flat();
      const eq = entries.filter((e) => e.status === 'added' && e.dataFile.content === 'equality-deletes');
      expect(eq.length).toBeGreaterThan(0);
      expect(eq.every((e) => e.dataFile.specId === unpartitioned!.specId)).toBe(true);
      expect((await readTableRows(after)).map((r) => r.slice(0, 3).map(String).join('|')).sort()).toEqual(['1|2|moved', '2|1|b']);
    }
  });
});
