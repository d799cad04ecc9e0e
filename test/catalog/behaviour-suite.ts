/**
 * The one behaviour suite every Catalog implementation passes (pyiceberg
 * `tests/catalog/test_catalog_behaviors.py`, iceberg-go `catalogtest.RunCatalogTests`): namespaces,
 * tables, commits with requirements, and concurrent commits from separate OS processes.
 *
 * Usage, in a `*.test.ts` file:
 *
 *   runCatalogBehaviourSuite('sql on sqlite', async () => ({
 *     catalog,                                  // a Catalog over fresh, empty storage
 *     remote: { module, exportName, config },   // how another process opens the SAME catalog
 *     dispose: async () => { ... },             // stop servers, remove temp dirs
 *   }));
 *
 * `remote.module` is an absolute path to a module exporting `exportName` (default `openCatalog`), a
 * function from the JSON `config` to a Catalog; the concurrency test spawns
 * `node --import tsx test/catalog/concurrent-committer.ts` processes that call it.
 *
 * The contract the suite pins down (error kinds are FloeError kinds):
 * - createNamespace on an existing namespace → 'already-exists'; loading, dropping or listing the
 *   tables of a missing one → 'not-found'; dropping one that holds tables → 'invalid-argument', and
 *   the namespace stays. loadNamespaceProperties returns at least the stored properties (a catalog may
 *   add its own, such as `location`).
 * - createTable on an existing table → 'already-exists', in a missing namespace → 'not-found'; field
 *   ids are kept as given (local catalogs; see Catalog.createTable).
 * - loadTable / dropTable / renameTable of a missing table → 'not-found'; renaming onto an existing
 *   table → 'already-exists'. Catalogs that cannot rename say so with 'unsupported'
 *   (option `rename: false`).
 * - commitTable checks requirements against the current metadata: a failed one → 'commit-conflict'
 *   with retryable true, and nothing changes.
 * - Concurrent commits from several processes: each lands exactly once (or fails with a retryable
 *   conflict and is retried by its writer); the history is linear with distinct sequence numbers.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Catalog, LoadedTable, TableIdentifier } from '../../src/iceberg/metadata/catalog.js';
import { ancestorsOf } from '../../src/iceberg/spec/snapshot-ids.js';
import { writeTableMetadata } from '../../src/iceberg/spec/table-metadata-json.js';
import { FloeError, type ErrorKind } from '../../src/util/errors.js';
import type { CommitterArgs, RemoteCatalog } from './concurrent-committer.js';
import { appendSnapshotCommit, testSchema } from './test-snapshots.js';

;

export interface CatalogUnderTest {
  catalog: Catalog;
  remote: RemoteCatalog;
  dispose(): Promise<void>;
}

export interface CatalogBehaviourOptions {
  /** false: renameTable is refused with 'unsupported'. Default true. */
  rename?: boolean;
  /** Writer processes in the concurrency test. Default 4. */
  concurrentWriters?: number;
  /** Commits per writer process. Default 4. */
  commitsPerWriter?: number;
}

const HERE = path.dirname(fileURLToPath(import.meta.url));
const COMMITTER = path.join(HERE, 'concurrent-committer.ts');

export async function expectFloeError(promise: Promise<unknown>, kind: ErrorKind): Promise<FloeError> {
  let error: unknown;
  try {
    await promise;
  } catch (e) {
    error = e;
  }
  expect(error, `expected a FloeError of kind ${kind}`).toBeInstanceOf(FloeError);
  expect((error as FloeError).kind, (error as FloeError).message).toBe(kind);
  return error as FloeError;
}

export function runCatalogBehaviourSuite(name: string, makeCatalog: () => Promise<CatalogUnderTest>, options: CatalogBehaviourOptions = {}): void {
  describe(`catalog behaviour: ${name}`, () => {
    let under: CatalogUnderTest;
    let catalog: Catalog;
    /** A fresh top-level namespace name per test, so that tests share one catalog without interfering. */
    const fresh = (label: string) => `${label}_${randomUUID().slice(0, 8)}`;
    const createNs = async (label: string, props: Record<string, string> = {}) => {
      const ns = [fresh(label)];
      await catalog.createNamespace(ns, props);
      return ns;
    };
    const createTable = (id: TableIdentifier, formatVersion: 2 | 3 = 2) =>
      catalog.createTable(id, { schema: testSchema(), properties: { 'floe.test': 'yes' }, formatVersion });

    beforeAll(async () => {
      under = await makeCatalog();
      catalog = under.catalog;
    });
    afterAll(async () => {
      await catalog?.close?.();
      await under?.dispose();
    });

    describe('namespaces', () => {
      it('creates, lists, loads, updates and drops namespaces with properties', async () => {
        const ns = await createNs('ns', { owner: 'floe', comment: 'first' });
        expect(await catalog.namespaceExists(ns)).toBe(true);
        expect(await catalog.loadNamespaceProperties(ns)).toMatchObject({ owner: 'floe', comment: 'first' });
        expect(await catalog.listNamespaces()).toContainEqual(ns);

        const child = [...ns, 'child'];
        await catalog.createNamespace(child);
        expect(await catalog.listNamespaces(ns)).toEqual([child]);
        expect(await catalog.listNamespaces()).not.toContainEqual(child);

        await catalog.updateNamespaceProperties(ns, ['comment'], { owner: 'someone else', added: '1' });
        const props = await catalog.loadNamespaceProperties(ns);
        expect(props).toMatchObject({ owner: 'someone else', added: '1' });
        expect(props).not.toHaveProperty('comment');

        await expectFloeError(catalog.createNamespace(ns), 'already-exists');
        await catalog.dropNamespace(child);
        await catalog.dropNamespace(ns);
        expect(await catalog.namespaceExists(ns)).toBe(false);
        expect(await catalog.listNamespaces()).not.toContainEqual(ns);
        await expectFloeError(catalog.loadNamespaceProperties(ns), 'not-found');
        await expectFloeError(catalog.dropNamespace(ns), 'not-found');
        // It can be created again after the drop.
        await catalog.createNamespace(ns, { again: 'yes' });
        expect(await catalog.loadNamespaceProperties(ns)).toMatchObject({ again: 'yes' });
        expect(await catalog.loadNamespaceProperties(ns)).not.toHaveProperty('owner');
      });

      it('refuses to drop a namespace that holds a table', async () => {
        const ns = await createNs('nonempty');
        await createTable({ namespace: ns, name: 't' });
        await expectFloeError(catalog.dropNamespace(ns), 'invalid-argument');
        expect(await catalog.namespaceExists(ns)).toBe(true);
        expect(await catalog.tableExists({ namespace: ns, name: 't' })).toBe(true);
        await catalog.dropTable({ namespace: ns, name: 't' }, true);
        await catalog.dropNamespace(ns);
        expect(await catalog.namespaceExists(ns)).toBe(false);
      });

      it('reports missing namespaces', async () => {
        const ns = [fresh('missing')];
        expect(await catalog.namespaceExists(ns)).toBe(false);
        await expectFloeError(catalog.listTables(ns), 'not-found');
        await expectFloeError(catalog.updateNamespaceProperties(ns, [], { a: 'b' }), 'not-found');
      });
    });

    describe('tables', () => {
      it('creates, loads, lists and checks tables, keeping field ids', async () => {
        const ns = await createNs('tables');
        const id = { namespace: ns, name: 'orders' };
        const created = await createTable(id);
        expect(created.identifier).toEqual(id);
        expect(created.metadata.formatVersion).toBe(2);
        expect(created.metadata.currentSnapshotId).toBeUndefined();
        expect(created.metadata.properties['floe.test']).toBe('yes');
        const schema = created.metadata.schemas.find((s) => s.schemaId === created.metadata.currentSchemaId)!;
        expect(schema.fields.map((f) => [f.id, f.name, f.required])).toEqual([[1, 'id', true], [2, 'name', false], [3, 'ts', false]]);
        expect(schema.identifierFieldIds).toEqual([1]);
        expect(await created.io.exists(created.metadataLocation)).toBe(true);

        expect(await catalog.tableExists(id)).toBe(true);
        const loaded = await catalog.loadTable(id);
        expect(loaded.metadata.tableUuid).toBe(created.metadata.tableUuid);
        expect(loaded.metadataLocation).toBe(created.metadataLocation);
        expect(loaded.metadata.location).toBe(created.metadata.location);

        await createTable({ namespace: ns, name: 'customers' });
        expect(await catalog.listTables(ns)).toEqual(expect.arrayContaining([id, { namespace: ns, name: 'customers' }]));
        expect(await catalog.listTables(ns)).toHaveLength(2);

        await expectFloeError(createTable(id), 'already-exists');
        await expectFloeError(createTable({ namespace: [fresh('nowhere')], name: 't' }), 'not-found');
        await expectFloeError(catalog.loadTable({ namespace: ns, name: 'absent' }), 'not-found');
        expect(await catalog.tableExists({ namespace: ns, name: 'absent' })).toBe(false);
      });

      it('creates format v3 tables', async () => {
        const ns = await createNs('v3');
        const t = await createTable({ namespace: ns, name: 'events' }, 3);
        expect(t.metadata.formatVersion).toBe(3);
        expect(t.metadata.nextRowId).toBe(0n);
        const c = appendSnapshotCommit(t.metadata, {}, 25n);
        const after = await catalog.commitTable(t.identifier, c.requirements, c.updates);
        expect(after.metadata.nextRowId).toBe(25n);
        expect((await catalog.loadTable(t.identifier)).metadata.snapshots[0]!.firstRowId).toBe(0n);
      });

      it('renames tables, within and across namespaces', async () => {
        const ns = await createNs('rename');
        const other = await createNs('rename_target');
        const from = { namespace: ns, name: 'before' };
        const created = await createTable(from);
        const c = appendSnapshotCommit(created.metadata);
        await catalog.commitTable(from, c.requirements, c.updates);
        const to = { namespace: ns, name: 'after' };
        if (options.rename === false) {
          await expectFloeError(catalog.renameTable(from, to), 'unsupported');
          return;
        }
        await catalog.renameTable(from, to);
        expect(await catalog.tableExists(from)).toBe(false);
        expect(await catalog.tableExists(to)).toBe(true);
        const renamed = await catalog.loadTable(to);
        expect(renamed.metadata.tableUuid).toBe(created.metadata.tableUuid);
        expect(renamed.metadata.currentSnapshotId).toBe(c.snapshot.snapshotId);
        expect(await catalog.listTables(ns)).toEqual([to]);
        await expectFloeError(catalog.loadTable(from), 'not-found');

        // The renamed table keeps working.
        const c2 = appendSnapshotCommit(renamed.metadata);
        await catalog.commitTable(to, c2.requirements, c2.updates);
        expect((await catalog.loadTable(to)).metadata.currentSnapshotId).toBe(c2.snapshot.snapshotId);

        const across = { namespace: other, name: 'moved' };
        await catalog.renameTable(to, across);
        expect(await catalog.listTables(ns)).toEqual([]);
        expect(await catalog.listTables(other)).toEqual([across]);
        expect((await catalog.loadTable(across)).metadata.currentSnapshotId).toBe(c2.snapshot.snapshotId);

        await createTable({ namespace: ns, name: 'occupied' });
        await expectFloeError(catalog.renameTable(across, { namespace: ns, name: 'occupied' }), 'already-exists');
        await expectFloeError(catalog.renameTable({ namespace: ns, name: 'ghost' }, { namespace: ns, name: 'x' }), 'not-found');
        await expectFloeError(catalog.renameTable(across, { namespace: [fresh('nowhere')], name: 'x' }), 'not-found');
        expect(await catalog.tableExists(across)).toBe(true);
        // The old name can be used again.
        await createTable(from);
        expect(await catalog.tableExists(from)).toBe(true);
      });

      it('drops tables, with and without purge', async () => {
        const ns = await createNs('drop');
        const keep = { namespace: ns, name: 'keep_files' };
        await createTable(keep);
        await catalog.dropTable(keep);
        expect(await catalog.tableExists(keep)).toBe(false);
        expect(await catalog.listTables(ns)).toEqual([]);
        await expectFloeError(catalog.loadTable(keep), 'not-found');
        await expectFloeError(catalog.dropTable(keep), 'not-found');

        const purge = { namespace: ns, name: 'purge_files' };
        const created = await createTable(purge);
        const c = appendSnapshotCommit(created.metadata);
        const committed = await catalog.commitTable(purge, c.requirements, c.updates);
        await catalog.dropTable(purge, true);
        expect(await catalog.tableExists(purge)).toBe(false);
        expect(await committed.io.exists(committed.metadataLocation)).toBe(false);
        expect(await created.io.exists(created.metadataLocation)).toBe(false);

        // A dropped name can be created again, as a new table.
        const again = await createTable(purge);
        expect(again.metadata.tableUuid).not.toBe(created.metadata.tableUuid);
        expect(again.metadata.snapshots).toEqual([]);
      });
    });

    describe('commits', () => {
      it('applies updates when the requirements hold, and refuses stale ones with a retryable conflict', async () => {
        const ns = await createNs('commit');
        const id = { namespace: ns, name: 't' };
        const created = await createTable(id);
        const first = appendSnapshotCommit(created.metadata);
        const afterFirst = await catalog.commitTable(id, first.requirements, first.updates);
        expect(afterFirst.metadata.currentSnapshotId).toBe(first.snapshot.snapshotId);
        expect(afterFirst.metadata.refs.main).toMatchObject({ snapshotId: first.snapshot.snapshotId, type: 'branch' });
        expect(afterFirst.metadata.lastSequenceNumber).toBe(1n);
        expect(afterFirst.metadataLocation).not.toBe(created.metadataLocation);
        expect(afterFirst.metadata.metadataLog.map((e) => e.metadataFile)).toContain(created.metadataLocation);
        const loaded = await catalog.loadTable(id);
        expect(loaded.metadataLocation).toBe(afterFirst.metadataLocation);
        expect(loaded.metadata.snapshots.map((s) => s.snapshotId)).toEqual([first.snapshot.snapshotId]);

        // The same base again: main has moved since, so assert-ref-snapshot-id fails.
        const stale = appendSnapshotCommit(created.metadata);
        const conflict = await expectFloeError(catalog.commitTable(id, stale.requirements, stale.updates), 'commit-conflict');
        expect(conflict.retryable).toBe(true);
        const wrongUuid = appendSnapshotCommit(loaded.metadata);
        wrongUuid.requirements[0] = { type: 'assert-table-uuid', uuid: randomUUID() };
        await expectFloeError(catalog.commitTable(id, wrongUuid.requirements, wrongUuid.updates), 'commit-conflict');
        const unchanged = await catalog.loadTable(id);
        expect(unchanged.metadataLocation).toBe(afterFirst.metadataLocation);
        expect(unchanged.metadata.snapshots).toHaveLength(1);

        // A second snapshot on the right base, then a property change with a schema requirement.
        const second = appendSnapshotCommit(unchanged.metadata);
        const afterSecond = await catalog.commitTable(id, second.requirements, second.updates);
        expect(afterSecond.metadata.snapshots.find((s) => s.snapshotId === second.snapshot.snapshotId)?.parentSnapshotId).toBe(first.snapshot.snapshotId);
        expect(afterSecond.metadata.lastSequenceNumber).toBe(2n);
        const props = await catalog.commitTable(id, [{ type: 'assert-current-schema-id', currentSchemaId: afterSecond.metadata.currentSchemaId }], [{ action: 'set-properties', updates: { 'commit.test': 'done' } }]);
        expect(props.metadata.properties['commit.test']).toBe('done');
        expect((await catalog.loadTable(id)).metadata.properties['commit.test']).toBe('done');
        await expectFloeError(catalog.commitTable(id, [{ type: 'assert-current-schema-id', currentSchemaId: 99 }], [{ action: 'set-properties', updates: { x: 'y' } }]), 'commit-conflict');

        await expectFloeError(catalog.commitTable({ namespace: ns, name: 'absent' }, [], [{ action: 'set-properties', updates: { a: 'b' } }]), 'not-found');
      });

      it('reads the current metadata file as it is: its own commit, and a file changed in place since', async () => {
        const ns = await createNs('reread');
        const id = { namespace: ns, name: 't' };
        const created = await createTable(id);
        const c = appendSnapshotCommit(created.metadata);
        const committed = await catalog.commitTable(id, c.requirements, c.updates);
        expect((await catalog.loadTable(id)).metadata).toEqual(committed.metadata);
        // the same location, other bytes (a hand repair): read again, not the file the catalog wrote
        const repaired = { ...committed.metadata, properties: { ...committed.metadata.properties, 'repaired.in.place': 'yes' } };
        await committed.io.write(committed.metadataLocation, new TextEncoder().encode(writeTableMetadata(repaired)));
        const loaded = await catalog.loadTable(id);
        expect(loaded.metadataLocation).toBe(committed.metadataLocation);
        expect(loaded.metadata.properties['repaired.in.place']).toBe('yes');
        const next = appendSnapshotCommit(loaded.metadata);
        const after = await catalog.commitTable(id, next.requirements, next.updates);
        expect(after.metadata.properties['repaired.in.place']).toBe('yes');
        expect(after.metadata.snapshots.map((s) => s.snapshotId)).toEqual([c.snapshot.snapshotId, next.snapshot.snapshotId]);
      });

      it('deletes the metadata files that drop out of a capped metadata-log when write.metadata.delete-after-commit.enabled is true, and keeps every file otherwise', async () => {
        const ns = await createNs('retain');
        const local = (location: string) => (location.startsWith('file:') ? fileURLToPath(location) : location);
        const history = async (id: TableIdentifier, properties: Record<string, string>) => {
          let t: LoadedTable = await catalog.createTable(id, { schema: testSchema(), properties });
          const written = [t.metadataLocation];
          for (let i = 0; i < 8; i++) {
            const c = appendSnapshotCommit(t.metadata);
            t = await catalog.commitTable(id, c.requirements, c.updates);
            written.push(t.metadataLocation);
          }
          return { t, written };
        };
        const kept = await history({ namespace: ns, name: 'kept' }, { 'write.metadata.previous-versions-max': '3' });
        expect(kept.t.metadata.metadataLog).toHaveLength(3);
        expect(kept.written.filter((f) => existsSync(local(f)))).toEqual(kept.written);

        const pruned = await history({ namespace: ns, name: 'pruned' }, { 'write.metadata.previous-versions-max': '3', 'write.metadata.delete-after-commit.enabled': 'true' });
        const inLog = pruned.t.metadata.metadataLog.map((e) => e.metadataFile);
        expect(inLog).toEqual(pruned.written.slice(-4, -1));
        expect(pruned.written.filter((f) => existsSync(local(f)))).toEqual([...inLog, pruned.t.metadataLocation]);
        expect((await catalog.loadTable({ namespace: ns, name: 'pruned' })).metadata.snapshots).toHaveLength(8);
      });

      it('lands every commit of concurrent writer processes exactly once, with distinct sequence numbers', async () => {
        const writers = options.concurrentWriters ?? 4;
        const perWriter = options.commitsPerWriter ?? 4;
        const ns = await createNs('concurrent');
        const id = { namespace: ns, name: 'hot' };
        await createTable(id);
        const results = await Promise.all(
          Array.from({ length: writers }, (_, w) =>
            runCommitter({ remote: under.remote, identifier: id, writer: `w${w}`, commits: perWriter, maxAttempts: 200 }),
          ),
        );
        const table: LoadedTable = await catalog.loadTable(id);
        const snapshots = table.metadata.snapshots;
        const tags = snapshots.map((s) => `${s.summary['floe.test.writer']}/${s.summary['floe.test.commit']}`);
        const expected = Array.from({ length: writers }, (_, w) => Array.from({ length: perWriter }, (_, i) => `w${w}/${i}`)).flat();
        expect([...tags].sort()).toEqual([...expected].sort()); // each commit present, none twice
        const sequenceNumbers = snapshots.map((s) => s.sequenceNumber);
        expect(new Set(sequenceNumbers).size).toBe(writers * perWriter);
        expect(table.metadata.lastSequenceNumber).toBe(BigInt(writers * perWriter));
        // Linear history: every snapshot is an ancestor of the head, sequence numbers falling one by one.
        const chain = ancestorsOf(table.metadata, table.metadata.currentSnapshotId);
        expect(chain).toHaveLength(writers * perWriter);
        expect(chain.map((s) => s.sequenceNumber)).toEqual(Array.from({ length: writers * perWriter }, (_, i) => BigInt(writers * perWriter - i)));
        expect(results.map((r) => r.committed)).toEqual(Array(writers).fill(perWriter));
      });
    });
  });
}

interface CommitterResult {
  committed: number;
  conflicts: number;
}

function runCommitter(args: CommitterArgs): Promise<CommitterResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', COMMITTER, JSON.stringify(args)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_NO_WARNINGS: '1' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) {
        reject(new Error(`committer ${args.writer} exited with code ${code}: ${stderr.trim()}`));
        return;
      }
      resolve(JSON.parse(stdout.trim().split('\n').pop()!) as CommitterResult);
    });
  });
}
