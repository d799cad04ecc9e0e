/**
 * `floe run` with object-store faults: floe's S3 endpoint is the fault proxy (test/support/s3-fault-proxy.ts)
 * in front of moto, injecting latency, 500, 503 SlowDown, resets mid-upload and mid-download and
 * throttled bodies by a seeded schedule, during the snapshot and during streaming. floe must ride them
 * out by retrying (src/io/s3-retry.ts), never commit metadata that reaches a missing or partial object
 * (every manifest list, manifest, data and delete file the final metadata reaches is checked on the
 * server directly: present, of the recorded size, parseable), and leave the lake equal to MySQL.
 *
 * The schedule allows at most two faults in a row on one operation, so that each request succeeds
 * within the default three attempts; faults that outlast the retries are test/io/s3-faults.test.ts's.
 */
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Catalog } from '../../src/iceberg/metadata/catalog.js';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { SqlCatalog } from '../../src/catalog/sql/sql-catalog.js';
import { freshSqliteFile, type TestSqlDatabase } from '../catalog/sql/sql-test-databases.js';
import { motoStatus, startMoto } from '../support/moto-server.js';
import { startS3FaultProxy, type FaultKind, type FaultSchedule, type S3FaultProxy } from '../support/s3-fault-proxy.js';
import type { TestS3Server } from '../support/s3-server.js';
import { sql } from '../source/mysql/binlog/helpers.js';
import { MOTO_ACCESS_KEY_ID, MOTO_SECRET_ACCESS_KEY } from '../support/moto-server.js';
import { changeOrders, checkReachableObjects, createOrders, lakeVersusMysql, runMysqlToS3Lake, startFloe, untilCaughtUp, untilStreaming, type LakeCatalogConfig } from './support/s3-lake.js';

process.env.TZ ??= 'Asia/Seoul';

const moto = motoStatus();
if (!moto.available) console.warn(`[floe] skipping the S3 fault tests: ${moto.reason}`);

const FAILING: FaultKind[] = ['error500', 'slowDown503', 'resetUpload', 'resetDownload', 'dropResponse'];

function schedule(seed: number): FaultSchedule {
  return {
    seed,
    rates: { latency: 0.05, error500: 0.07, slowDown503: 0.05, resetUpload: 0.07, resetDownload: 0.1, dropResponse: 0.05, throttle: 0.05 },
    latencyMs: 150,
    throttleBytesPerSecond: 256 * 1024,
    maxConsecutiveFaults: 2,
  };
}

describe.skipIf(!moto.available)(`floe run against S3 with injected faults (moto + fault proxy)${moto.available ? '' : ` — skipped: ${moto.reason}`}`, () => {
  let s3: TestS3Server;
  let proxy: S3FaultProxy;
  let conn: mysql.Connection;
  beforeAll(async () => {
    s3 = await startMoto();
    proxy = await startS3FaultProxy(s3.config.endpoint!);
    conn = await sql();
  });
  afterAll(async () => {
    await conn?.end();
    await proxy?.close();
    await s3?.stop();
  });

  const cases: Array<{ name: string; seed: number; open: (warehouse: string) => Promise<{ config: LakeCatalogConfig; watcher: Catalog; db?: TestSqlDatabase }> }> = [
    {
      name: 'filesystem catalog on S3',
      seed: 20261201,
      open: async (warehouse) => ({ config: { type: 'filesystem', name: 'lake' }, watcher: new FileSystemCatalog({ name: 'lake', warehouse, storage: { s3: s3.config } }) }),
    },
    {
      name: 'SQL catalog (SQLite), files on S3',
      seed: 4242,
      open: async (warehouse) => {
        const db = await freshSqliteFile();
        return { config: { type: 'sql', name: 'lake', url: db.url }, watcher: new SqlCatalog({ url: db.url, name: 'lake', warehouse, storage: { s3: s3.config } }), db };
      },
    },
  ];

  for (const c of cases) {
    it(`${c.name}: faults during snapshot and streaming are retried; the lake equals MySQL and reaches only whole objects`, async () => {
      const warehouse = `s3://${s3.bucket}/faults-${c.seed}`;
      // The watcher reads the server directly: it must not be what absorbs (or suffers) the faults.
      const { config, watcher, db } = await c.open(warehouse);
      const before = proxy.counts();
      let atStreaming: Record<string, number> | undefined;
      proxy.setSchedule(schedule(c.seed));
      try {
        const run = await runMysqlToS3Lake({
          conn,
          s3: { ...s3.config, endpoint: proxy.endpoint },
          warehouse,
          catalog: config,
          watcher,
          jobId: `faults-${c.seed}`,
          rows: 600,
          onStreaming: () => {
            atStreaming = proxy.counts();
          },
        });
        proxy.setSchedule(undefined);
        expect(run.result.reason).toBe('stopped');
        const after = proxy.counts();
        // The faults really happened, in both phases (a proxy that injects nothing proves nothing).
        const inSnapshot = FAILING.reduce((n, k) => n + atStreaming![k]! - before[k]!, 0);
        const inStreaming = FAILING.reduce((n, k) => n + after[k]! - atStreaming![k]!, 0);
        console.info(`[floe] ${c.name}: ${proxy.requests.length} S3 requests so far; failing faults injected: ${inSnapshot} during the snapshot, ${inStreaming} while streaming`);
        expect(inSnapshot).toBeGreaterThan(0);
        expect(inStreaming).toBeGreaterThan(0);
        for (const k of FAILING) expect(after[k]! - before[k]!, `${k} injected`).toBeGreaterThan(0);
        // Among them, downloads of existing objects cut mid-body (the SDK does not retry those itself).
        expect(proxy.requests.filter((r) => r.fault === 'resetDownload' && r.method === 'GET' && (r.status === 200 || r.status === 206)).length).toBeGreaterThan(0);

        const diff = await lakeVersusMysql(watcher, run.database, run.identifier);
        expect(diff).toMatchObject({ missing: [], unexpected: [] });
        expect(diff.lakeRows).toBe(diff.mysqlRows);
        const table = await watcher.loadTable(run.identifier);
        const report = await checkReachableObjects(table.io, table.metadataLocation);
        expect(report.problems).toEqual([]);
        expect(report.dataFiles).toBeGreaterThan(1);
        expect(report.manifests).toBeGreaterThan(1);
      } finally {
        proxy.setSchedule(undefined);
        await watcher.close?.();
        await db?.dispose();
      }
    });
  }

  it('a store that keeps failing: floe stops with an error naming io.s3, the operation and the key (no credentials), commits nothing partial, and a restart catches up', async () => {
    const jobId = 'faults-exhaust';
    const warehouse = `s3://${s3.bucket}/faults-exhaust`;
    const watcher = new FileSystemCatalog({ name: 'lake', warehouse, storage: { s3: s3.config } });
    const options = { s3: { ...s3.config, endpoint: proxy.endpoint }, warehouse, catalog: { type: 'filesystem', name: 'lake' } as const, jobId };
    try {
      const db = await createOrders(conn, jobId, 200);
      const first = startFloe(options, db);
      try {
        await untilStreaming(first);
        // From now on every upload of a data file fails, on every attempt.
        proxy.failAlways((r) => r.method === 'PUT' && r.path.includes(`/${db}/orders/data/`), 503);
        await changeOrders(conn, db);
        const result = await Promise.race([first.running, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('floe did not stop within 60 s while every data upload failed')), 60_000))]);
        expect(result.reason).toBe('failed');
        const text = `${String(result.error)} ${JSON.stringify((result.error as { context?: unknown }).context ?? {})}`;
        expect(text).toMatch(new RegExp(`io\\.s3: cannot write s3://${s3.bucket}/faults-exhaust/${db}/orders/data/[^ ]+: SlowDown`));
        expect(text).not.toContain(MOTO_SECRET_ACCESS_KEY);
        expect(text).not.toContain(MOTO_ACCESS_KEY_ID);
      } finally {
        proxy.failAlways(undefined);
        first.controller.abort();
        await first.running.catch(() => undefined);
      }
      const identifier = { namespace: [db], name: 'orders' };
      const stopped = await watcher.loadTable(identifier);
      const report = await checkReachableObjects(stopped.io, stopped.metadataLocation);
      expect(report.problems).toEqual([]);

      // The store recovers; floe, started again, resumes from its last commit and catches up.
      const second = startFloe(options, db);
      try {
        await untilStreaming(second);
        await untilCaughtUp(second, watcher, db, jobId);
      } finally {
        second.controller.abort();
        expect((await second.running).reason).toBe('stopped');
      }
      const diff = await lakeVersusMysql(watcher, db, identifier);
      expect(diff).toMatchObject({ missing: [], unexpected: [] });
      expect(diff.lakeRows).toBe(diff.mysqlRows);
      const table = await watcher.loadTable(identifier);
      expect((await checkReachableObjects(table.io, table.metadataLocation)).problems).toEqual([]);
    } finally {
      await watcher.close();
    }
  });
});
