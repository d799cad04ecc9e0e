/**
 * The filesystem catalog on an S3 store that honours `If-None-Match: *` (moto, test/support/moto-server.ts
 * says why moto): the atomic-create probe says yes, two committers racing for the same version get one
 * winner and one retried conflict, and `floe run` commits end to end into the filesystem catalog and
 * into a SQL catalog (SQLite) with its files on S3, the lake equal to MySQL afterwards. Until this file,
 * the filesystem catalog had only met s3rver on S3, which ignores the header (floe refuses to commit
 * there: test/catalog/filesystem-catalog.test.ts), so its S3 commit path had never run.
 */
import { randomUUID } from 'node:crypto';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { SqlCatalog } from '../../src/catalog/sql/sql-catalog.js';
import { S3FileIO, type S3Config } from '../../src/io/s3-file-io.js';
import { isFloeError } from '../../src/util/errors.js';
import { appendSnapshotCommit, testSchema } from '../catalog/test-snapshots.js';
import { freshSqliteFile } from '../catalog/sql/sql-test-databases.js';
import { motoStatus, startMoto } from '../support/moto-server.js';
import type { TestS3Server } from '../support/s3-server.js';
import { sql } from '../source/mysql/binlog/helpers.js';
import { checkReachableObjects, lakeVersusMysql, runMysqlToS3Lake } from './support/s3-lake.js';

process.env.TZ ??= 'Asia/Seoul';

const moto = motoStatus();
if (!moto.available) console.warn(`[floe] skipping the S3 conditional-write tests: ${moto.reason}`);

/**
 * An S3FileIO whose conditional creates of one key wait until `parties` writers have reached it, then
 * go to the server together: the two committers below really race for the same version (without it,
 * the first could finish before the second loads the table, and no race would be tested). It records
 * what the server answered to each.
 */
class RendezvousS3FileIO extends S3FileIO {
  constructor(config: S3Config, private readonly gate: Rendezvous) {
    super(config);
  }

  override async writeIfAbsent(location: string, data: Uint8Array): Promise<boolean> {
    if (!location.endsWith(this.gate.key)) return super.writeIfAbsent(location, data);
    await this.gate.arrive();
    const created = await super.writeIfAbsent(location, data);
    this.gate.outcomes.push(created);
    return created;
  }
}

class Rendezvous {
  readonly outcomes: boolean[] = [];
  private arrived = 0;
  private release!: () => void;
  private readonly all = new Promise<void>((r) => (this.release = r));
  constructor(readonly key: string, private readonly parties: number) {}
  arrive(): Promise<void> {
    if (++this.arrived === this.parties) this.release();
    return this.all;
  }
}

describe.skipIf(!moto.available)(`filesystem catalog on S3 with conditional writes (moto)${moto.available ? '' : ` — skipped: ${moto.reason}`}`, () => {
  let s3: TestS3Server;
  let conn: mysql.Connection;
  beforeAll(async () => {
    s3 = await startMoto();
    conn = await sql();
  });
  afterAll(async () => {
    await conn?.end();
    await s3?.stop();
  });

  it('the atomic-create probe reports support, and a second create of a key is refused', async () => {
    const io = new S3FileIO({ ...s3.config, probeLocation: `s3://${s3.bucket}/probe-${randomUUID()}` });
    try {
      expect(await io.supportsAtomicCreate()).toBe(true);
      const key = `s3://${s3.bucket}/probe-${randomUUID()}/v1.metadata.json`;
      expect(await io.writeIfAbsent(key, new TextEncoder().encode('first'))).toBe(true);
      expect(await io.writeIfAbsent(key, new TextEncoder().encode('second'))).toBe(false);
      expect(new TextDecoder().decode(await io.read(key))).toBe('first');
    } finally {
      await io.close();
    }
  });

  it('two committers racing for the same version: one wins, the other gets a conflict, retries and lands on top', async () => {
    const warehouse = `s3://${s3.bucket}/race-${randomUUID()}`;
    const setup = new FileSystemCatalog({ warehouse, storage: { s3: s3.config } });
    const id = { namespace: ['race'], name: 't' };
    await setup.createNamespace(['race']);
    const created = await setup.createTable(id, { schema: testSchema() });
    expect(created.metadataLocation).toBe(`${warehouse}/race/t/metadata/v1.metadata.json`);

    const gate = new Rendezvous('/race/t/metadata/v2.metadata.json', 2);
    const writers = ['a', 'b'].map((name) => ({ name, catalog: new FileSystemCatalog({ warehouse, io: new RendezvousS3FileIO(s3.config, gate) }) }));
    try {
      // Both build their snapshot on v1 (the same parent), as concurrent writers do.
      const bases = await Promise.all(writers.map((w) => w.catalog.loadTable(id)));
      const commits = bases.map((b, i) => appendSnapshotCommit(b.metadata, { 'floe.test.writer': writers[i]!.name }));
      const outcomes = await Promise.allSettled(writers.map((w, i) => w.catalog.commitTable(id, commits[i]!.requirements, commits[i]!.updates)));
      // The server refused exactly one of the two creates of v2 (412), so exactly one commit landed.
      expect(gate.outcomes.sort()).toEqual([false, true]);
      const won = outcomes.findIndex((o) => o.status === 'fulfilled');
      const lost = 1 - won;
      expect(won).toBeGreaterThanOrEqual(0);
      const loss = outcomes[lost]!;
      expect(loss.status).toBe('rejected');
      const reason = (loss as PromiseRejectedResult).reason;
      // The loser re-checked its requirements against the winner's v2: main moved, so a retryable conflict.
      expect(isFloeError(reason, 'commit-conflict') && reason.retryable).toBe(true);
      expect((outcomes[won] as PromiseFulfilledResult<{ metadataLocation: string }>).value.metadataLocation).toMatch(/\/v2\.metadata\.json$/);

      // The loser does what every Iceberg writer does: reload, rebuild on the new head, commit again.
      const reloaded = await writers[lost]!.catalog.loadTable(id);
      const retry = appendSnapshotCommit(reloaded.metadata, { 'floe.test.writer': writers[lost]!.name });
      const landed = await writers[lost]!.catalog.commitTable(id, retry.requirements, retry.updates);
      expect(landed.metadataLocation).toMatch(/\/v3\.metadata\.json$/);
      const final = await setup.loadTable(id);
      expect(final.metadata.snapshots.map((s) => s.summary['floe.test.writer'])).toEqual([writers[won]!.name, writers[lost]!.name]);
      expect(final.metadata.snapshots[1]!.parentSnapshotId).toBe(final.metadata.snapshots[0]!.snapshotId);
    } finally {
      for (const w of writers) await w.catalog.io.close?.();
      await setup.close();
    }
  });

  it('two committers racing with changes that do not conflict: the loser of v2 retries inside commitTable and lands as v3', async () => {
    const warehouse = `s3://${s3.bucket}/race-props-${randomUUID()}`;
    const setup = new FileSystemCatalog({ warehouse, storage: { s3: s3.config } });
    const id = { namespace: ['race'], name: 'p' };
    await setup.createNamespace(['race']);
    const created = await setup.createTable(id, { schema: testSchema() });
    const gate = new Rendezvous('/race/p/metadata/v2.metadata.json', 2);
    const writers = ['a', 'b'].map((name) => ({ name, catalog: new FileSystemCatalog({ warehouse, io: new RendezvousS3FileIO(s3.config, gate) }) }));
    try {
      // Property updates, requiring only the same table: still valid on top of the other writer's v2.
      const results = await Promise.all(
        writers.map((w) => w.catalog.commitTable(id, [{ type: 'assert-table-uuid', uuid: created.metadata.tableUuid }], [{ action: 'set-properties', updates: { [`writer.${w.name}`]: 'yes' } }])),
      );
      expect(gate.outcomes.sort()).toEqual([false, true]);
      expect(results.map((r) => r.metadataLocation.replace(/^.*\//, '')).sort()).toEqual(['v2.metadata.json', 'v3.metadata.json']);
      const final = await setup.loadTable(id);
      expect(final.metadataLocation).toMatch(/\/v3\.metadata\.json$/);
      expect(final.metadata.properties).toMatchObject({ 'writer.a': 'yes', 'writer.b': 'yes' });
    } finally {
      for (const w of writers) await w.catalog.io.close?.();
      await setup.close();
    }
  });

  it('floe run: MariaDB → filesystem catalog on S3, the lake equal to MySQL', async () => {
    const warehouse = `s3://${s3.bucket}/lake-fs-moto`;
    const catalog = new FileSystemCatalog({ name: 'lake', warehouse, storage: { s3: s3.config } });
    try {
      const run = await runMysqlToS3Lake({ conn, s3: s3.config, warehouse, catalog: { type: 'filesystem', name: 'lake' }, watcher: catalog, jobId: 'fs-moto' });
      expect(run.result.reason).toBe('stopped');
      const diff = await lakeVersusMysql(catalog, run.database, run.identifier);
      expect(diff).toMatchObject({ missing: [], unexpected: [] });
      expect(diff.lakeRows).toBe(diff.mysqlRows);
      const table = await catalog.loadTable(run.identifier);
      // Committed through the S3 conditional create: several versions, each v<N> its own object.
      expect(table.metadataLocation).toMatch(new RegExp(`^${warehouse}/${run.database}/orders/metadata/v\\d+\\.metadata\\.json$`));
      expect(table.metadata.snapshots.length).toBeGreaterThan(1);
      const report = await checkReachableObjects(catalog.io, table.metadataLocation);
      expect(report.problems).toEqual([]);
      expect(report.dataFiles).toBeGreaterThan(0);
    } finally {
      await catalog.close();
    }
  });

  it('floe run: MariaDB → SQL catalog (SQLite) with its files on S3, the lake equal to MySQL', async () => {
    const db = await freshSqliteFile();
    const warehouse = `s3://${s3.bucket}/lake-sql-moto`;
    const catalog = new SqlCatalog({ url: db.url, name: 'lake', warehouse, storage: { s3: s3.config } });
    try {
      const run = await runMysqlToS3Lake({ conn, s3: s3.config, warehouse, catalog: { type: 'sql', name: 'lake', url: db.url }, watcher: catalog, jobId: 'sql-moto' });
      expect(run.result.reason).toBe('stopped');
      const diff = await lakeVersusMysql(catalog, run.database, run.identifier);
      expect(diff).toMatchObject({ missing: [], unexpected: [] });
      expect(diff.lakeRows).toBe(diff.mysqlRows);
      const table = await catalog.loadTable(run.identifier);
      expect(table.metadataLocation.startsWith(`${warehouse}/`)).toBe(true);
      const report = await checkReachableObjects(table.io, table.metadataLocation);
      expect(report.problems).toEqual([]);
    } finally {
      await catalog.close();
      await db.dispose();
    }
  });
});
