/**
 * The filesystem catalog: the shared behaviour suite on local disk (and on MinIO when Docker is
 * reachable), plus what is specific to the Hadoop layout — the files on disk, version discovery past a
 * stale or missing hint, reading a Spark-written warehouse, failure injection at the commit point, and
 * the refusal to commit on an S3 server that ignores If-None-Match (s3rver).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { findCurrentMetadataFile } from '../../src/catalog/filesystem/filesystem-versions.js';
import { LocalFileIO } from '../../src/io/local-file-io.js';
import { S3FileIO } from '../../src/io/s3-file-io.js';
import { FloeError } from '../../src/util/errors.js';
import { dockerStatus, startMinio, startS3rver, useS3Server, type TestS3Server } from '../support/s3-server.js';
import { expectFloeError, runCatalogBehaviourSuite } from './behaviour-suite.js';
import { appendSnapshotCommit, testSchema } from './test-snapshots.js';
import { GOLDEN_DIR, goldenAvailable } from '../support/golden.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const OPENER = path.join(HERE, 'open-filesystem-catalog.ts');
const GOLDEN = GOLDEN_DIR;

async function tempWarehouse(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), 'floe-fs-catalog-'));
}

runCatalogBehaviourSuite('filesystem on local disk', async () => {
  const dir = await tempWarehouse();
  return {
    catalog: new FileSystemCatalog({ warehouse: dir }),
    remote: { module: OPENER, config: { warehouse: dir } },
    dispose: () => rm(dir, { recursive: true, force: true }),
  };
});

const docker = await dockerStatus();
if (!docker.available) console.warn(`[floe] skipping filesystem catalog on MinIO: ${docker.reason}`);
describe.skipIf(!docker.available)(`filesystem catalog on MinIO${docker.available ? '' : ` — skipped: ${docker.reason}`}`, () => {
  let minio: TestS3Server | undefined;
  runCatalogBehaviourSuite('filesystem on MinIO (S3, If-None-Match honoured)', async () => {
    minio = await startMinio();
    const warehouse = `s3://${minio.bucket}/warehouse-${randomUUID()}`;
    const config = { warehouse, storage: { s3: minio.config } };
    return {
      catalog: new FileSystemCatalog(config),
      remote: { module: OPENER, config },
      dispose: async () => minio?.stop(),
    };
  });
});

describe('filesystem catalog: Hadoop layout on local disk', () => {
  let dir: string;
  let catalog: FileSystemCatalog;
  beforeAll(async () => {
    dir = await tempWarehouse();
    catalog = new FileSystemCatalog({ warehouse: dir });
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes v<N>.metadata.json, a version hint without newline, and a namespace marker', async () => {
    await catalog.createNamespace(['db', 'eu'], { owner: 'ops' });
    expect(JSON.parse(await readFile(path.join(dir, 'db', 'eu', '.namespace.json'), 'utf8'))).toEqual({ namespace: ['db', 'eu'], properties: { owner: 'ops' } });
    const id = { namespace: ['db', 'eu'], name: 'orders' };
    const t = await catalog.createTable(id, { schema: testSchema() });
    const metadataDir = path.join(dir, 'db', 'eu', 'orders', 'metadata');
    expect(t.metadataLocation).toBe(`file://${metadataDir}/v1.metadata.json`);
    expect(t.metadata.location).toBe(`file://${path.join(dir, 'db', 'eu', 'orders')}`);
    expect(await readFile(path.join(metadataDir, 'version-hint.text'), 'utf8')).toBe('1');
    const c = appendSnapshotCommit(t.metadata);
    const after = await catalog.commitTable(id, c.requirements, c.updates);
    expect(after.metadataLocation).toBe(`file://${metadataDir}/v2.metadata.json`);
    expect(await readFile(path.join(metadataDir, 'version-hint.text'), 'utf8')).toBe('2');
    expect((await readdir(metadataDir)).sort()).toEqual(['v1.metadata.json', 'v2.metadata.json', 'version-hint.text']);
    // The document on disk is what the catalog returned (exact longs).
    const onDisk = await readFile(path.join(metadataDir, 'v2.metadata.json'), 'utf8');
    expect(onDisk).toContain(`"current-snapshot-id": ${c.snapshot.snapshotId},`);
    expect(onDisk.endsWith('\n')).toBe(false);
    // A commit that changes nothing writes no new version.
    const same = await catalog.commitTable(id, [], [{ action: 'set-properties', updates: {} }]);
    expect(same.metadataLocation).toBe(after.metadataLocation);
    // listNamespaces sees nested levels; table directories are not namespaces.
    expect(await catalog.listNamespaces()).toEqual([['db']]);
    expect(await catalog.listNamespaces(['db'])).toEqual([['db', 'eu']]);
    expect(await catalog.listNamespaces(['db', 'eu'])).toEqual([]);
    expect(await catalog.namespaceExists(['db', 'eu', 'orders'])).toBe(false);
    expect(await catalog.loadNamespaceProperties(['db', 'eu'])).toEqual({ owner: 'ops', location: `file://${path.join(dir, 'db', 'eu')}` });
  });

  it('finds the current version past a stale, missing, garbage or dangling hint, and reads gzip metadata', async () => {
    await catalog.createNamespace(['hint']);
    const id = { namespace: ['hint'], name: 't' };
    let t = await catalog.createTable(id, { schema: testSchema() });
    for (let i = 0; i < 3; i++) {
      const c = appendSnapshotCommit(t.metadata);
      t = await catalog.commitTable(id, c.requirements, c.updates);
    }
    const metadataDir = path.join(dir, 'hint', 't', 'metadata');
    const head = t.metadata.currentSnapshotId;
    for (const hint of ['1', 'garbage', '99', '2\n']) {
      await writeFile(path.join(metadataDir, 'version-hint.text'), hint);
      const loaded = await catalog.loadTable(id);
      expect(loaded.metadataLocation, `hint ${JSON.stringify(hint)}`).toBe(`file://${metadataDir}/v4.metadata.json`);
      expect(loaded.metadata.currentSnapshotId).toBe(head);
    }
    await rm(path.join(metadataDir, 'version-hint.text'));
    expect((await catalog.loadTable(id)).metadataLocation).toBe(`file://${metadataDir}/v4.metadata.json`);

    // A commit after a missing hint still takes the next version, and restores the hint.
    const c = appendSnapshotCommit(t.metadata);
    t = await catalog.commitTable(id, c.requirements, c.updates);
    expect(t.metadataLocation).toBe(`file://${metadataDir}/v5.metadata.json`);
    expect(await readFile(path.join(metadataDir, 'version-hint.text'), 'utf8')).toBe('5');

    // Java's gzip spelling v<N>.gz.metadata.json is read and takes its version's slot.
    const gz = gzipSync(await readFile(path.join(metadataDir, 'v5.metadata.json')));
    await rm(path.join(metadataDir, 'v5.metadata.json'));
    await writeFile(path.join(metadataDir, 'v5.gz.metadata.json'), gz);
    const fromGz = await catalog.loadTable(id);
    expect(fromGz.metadataLocation).toBe(`file://${metadataDir}/v5.gz.metadata.json`);
    expect(fromGz.metadata.currentSnapshotId).toBe(t.metadata.currentSnapshotId);
    const c6 = appendSnapshotCommit(fromGz.metadata);
    expect((await catalog.commitTable(id, c6.requirements, c6.updates)).metadataLocation).toBe(`file://${metadataDir}/v6.metadata.json`);
  });

  it.skipIf(!goldenAvailable)('reads a warehouse written by Spark (golden fixture, no namespace markers)', async () => {
    const warehouse = path.join(GOLDEN, 'data/persistent/equality_deletes/warehouse');
    const spark = new FileSystemCatalog({ warehouse });
    expect(await spark.listNamespaces()).toEqual([['mydb']]);
    expect(await spark.namespaceExists(['mydb'])).toBe(true);
    expect(await spark.listTables(['mydb'])).toEqual([
      { namespace: ['mydb'], name: 'mytable' },
      { namespace: ['mydb'], name: 'mytable_partitioned' },
    ]);
    const t = await spark.loadTable({ namespace: ['mydb'], name: 'mytable' });
    expect(t.metadataLocation).toBe(`file://${warehouse}/mydb/mytable/metadata/v7.metadata.json`);
    expect(t.metadata.formatVersion).toBe(2);
    expect(t.metadata.snapshots).toHaveLength(6);
    // Tools given a bare table directory find the same file, and metastore-named files elsewhere.
    expect(await findCurrentMetadataFile(new LocalFileIO(), `${warehouse}/mydb/mytable`)).toBe(t.metadataLocation);
    const jdbcStyle = path.join(GOLDEN, 'data/persistent/add_columns_with_defaults/default.db/add_columns_with_defaults');
    expect(await findCurrentMetadataFile(new LocalFileIO(), jdbcStyle)).toBe(`file://${jdbcStyle}/metadata/00003-3f1801a5-7dfb-4072-b14a-39cd12f9279b.metadata.json`);
  });

  it('lets exactly one of several concurrent creators of a table win', async () => {
    await catalog.createNamespace(['race']);
    const id = { namespace: ['race'], name: 't' };
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => catalog.createTable(id, { schema: testSchema() })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as FloeError).kind).toBe('already-exists');
  });

  it('refuses names that cannot be directories, custom locations, and non-empty namespace drops', async () => {
    await expectFloeError(catalog.createNamespace(['a/b']), 'invalid-argument');
    await expectFloeError(catalog.createNamespace(['.hidden']), 'invalid-argument');
    await expectFloeError(catalog.createNamespace([]), 'invalid-argument');
    await catalog.createNamespace(['names']);
    await expectFloeError(catalog.createTable({ namespace: ['names'], name: '..' }, { schema: testSchema() }), 'invalid-argument');
    const custom = await expectFloeError(catalog.createTable({ namespace: ['names'], name: 't' }, { schema: testSchema(), location: '/somewhere/else' }), 'invalid-argument');
    expect(custom.message).toMatch(/sql or rest catalog/);
    await catalog.createNamespace(['names', 'child']);
    const notEmpty = await expectFloeError(catalog.dropNamespace(['names']), 'invalid-argument');
    expect(notEmpty.message).toMatch(/namespace names\.child/);
    // A table and a namespace cannot share a directory.
    await catalog.createTable({ namespace: ['names'], name: 'tbl' }, { schema: testSchema() });
    await expectFloeError(catalog.createNamespace(['names', 'tbl']), 'already-exists');
    await expectFloeError(catalog.createTable({ namespace: ['names'], name: 'child' }, { schema: testSchema() }), 'already-exists');
  });

  it('keeps data files on drop without purge and removes the table directory with purge', async () => {
    await catalog.createNamespace(['dropping']);
    const id = { namespace: ['dropping'], name: 't' };
    await catalog.createTable(id, { schema: testSchema() });
    const tableDir = path.join(dir, 'dropping', 't');
    await writeFile(path.join(tableDir, 'data.parquet'), 'not really parquet');
    await catalog.dropTable(id);
    expect(await readdir(tableDir)).toEqual(['data.parquet', 'metadata']);
    expect(await readdir(path.join(tableDir, 'metadata'))).toEqual([]);
    // The leftover directory is neither a table nor a namespace, and does not block the namespace drop.
    expect(await catalog.listNamespaces(['dropping'])).toEqual([]);
    await catalog.createTable(id, { schema: testSchema() });
    await catalog.dropTable(id, true);
    await expect(readdir(tableDir)).rejects.toThrow(/ENOENT/);
    await catalog.dropNamespace(['dropping']);
  });
});

/** A FileIO that injects failures at the commit point, around a real LocalFileIO. */
class FailingCreateIO extends LocalFileIO {
  mode: 'none' | 'lost-response' | 'fail-before-write' | 'hint-fails' = 'none';

  override async writeIfAbsent(location: string, data: Uint8Array): Promise<boolean> {
    if (location.endsWith('.metadata.json') && this.mode === 'lost-response') {
      await super.writeIfAbsent(location, data);
      throw new FloeError('io.test', 'io', 'connection reset after the request was sent');
    }
    if (location.endsWith('.metadata.json') && this.mode === 'fail-before-write') {
      throw new FloeError('io.test', 'io', 'connection refused');
    }
    return super.writeIfAbsent(location, data);
  }

  override async write(location: string, data: Uint8Array): Promise<void> {
    if (location.endsWith('version-hint.text') && this.mode === 'hint-fails') throw new FloeError('io.test', 'io', 'disk full');
    return super.write(location, data);
  }
}

describe('filesystem catalog: failures at the commit point', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await tempWarehouse();
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('recognises its own commit when the create response was lost, and reports unknown outcomes', async () => {
    const io = new FailingCreateIO();
    const warnings: string[] = [];
    const catalog = new FileSystemCatalog({ warehouse: dir, io, warn: (m) => warnings.push(m) });
    await catalog.createNamespace(['f']);
    const id = { namespace: ['f'], name: 't' };
    const t = await catalog.createTable(id, { schema: testSchema() });

    io.mode = 'lost-response';
    const c1 = appendSnapshotCommit(t.metadata);
    const landed = await catalog.commitTable(id, c1.requirements, c1.updates);
    expect(landed.metadata.currentSnapshotId).toBe(c1.snapshot.snapshotId);

    io.mode = 'fail-before-write';
    const c2 = appendSnapshotCommit(landed.metadata);
    const unknown = await expectFloeError(catalog.commitTable(id, c2.requirements, c2.updates), 'commit-state-unknown');
    expect(unknown.message).toMatch(/do not delete its files/);
    expect(unknown.retryable).toBe(false);

    io.mode = 'hint-fails';
    const c3 = appendSnapshotCommit((await catalog.loadTable(id)).metadata);
    const withoutHint = await catalog.commitTable(id, c3.requirements, c3.updates);
    expect(withoutHint.metadataLocation).toMatch(/\/v3\.metadata\.json$/);
    expect(warnings.some((w) => w.includes('could not update') && w.includes('version-hint.text'))).toBe(true);
    io.mode = 'none';
    // The stale hint ("2") is walked past.
    expect((await catalog.loadTable(id)).metadata.currentSnapshotId).toBe(c3.snapshot.snapshotId);
  });
});

describe('filesystem catalog on s3rver (ignores If-None-Match)', () => {
  const s3 = useS3Server(startS3rver);

  it('refuses creates and commits with an error that names the sql and rest catalogs', async () => {
    const warehouse = `s3://${s3.bucket}/wh-${randomUUID()}`;
    const catalog = new FileSystemCatalog({ warehouse, storage: { s3: s3.config } });
    // Namespaces work (no commit involved).
    await catalog.createNamespace(['db'], { a: '1' });
    expect(await catalog.listNamespaces()).toEqual([['db']]);
    const id = { namespace: ['db'], name: 't' };
    const refused = await expectFloeError(catalog.createTable(id, { schema: testSchema() }), 'unsupported');
    expect(refused.message).toMatch(/If-None-Match/);
    expect(refused.message).toMatch(/sql catalog/);
    expect(refused.message).toMatch(/rest catalog/);
    expect(refused.retryable).toBe(false);
    expect(await catalog.tableExists(id)).toBe(false);

    // A table put there by other means can be loaded, but not committed to.
    const local = await tempWarehouse();
    try {
      const localCatalog = new FileSystemCatalog({ warehouse: local });
      await localCatalog.createNamespace(['db']);
      const lt = await localCatalog.createTable(id, { schema: testSchema() });
      const io = catalog.io as S3FileIO;
      await io.write(`${warehouse}/db/t/metadata/v1.metadata.json`, await new LocalFileIO().read(lt.metadataLocation));
      const loaded = await catalog.loadTable(id);
      expect(loaded.metadata.tableUuid).toBe(lt.metadata.tableUuid);
      const c = appendSnapshotCommit(loaded.metadata);
      const commitRefused = await expectFloeError(catalog.commitTable(id, c.requirements, c.updates), 'unsupported');
      expect(commitRefused.message).toMatch(/sql catalog \(MySQL, PostgreSQL or SQLite\) or the rest catalog/);
      expect(await io.exists(`${warehouse}/db/t/metadata/v2.metadata.json`)).toBe(false);
    } finally {
      await rm(local, { recursive: true, force: true });
      await catalog.close();
    }
  });
});
