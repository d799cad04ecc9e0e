/**
 * Several writer PROCESSES appending to one table at once through the filesystem catalog (local disk;
 * MinIO too when a Docker engine is reachable): every commit lands exactly once, on one linear
 * history, with distinct consecutive sequence numbers, disjoint v3 row-id ranges, and every data file
 * still referenced and readable — the scan returns exactly one row per commit.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { FileSystemCatalog, type FileSystemCatalogOptions } from '../../../src/catalog/filesystem/filesystem-catalog.js';
import { readTableRows } from '../../../src/iceberg/scan/index.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { ancestorsOf } from '../../../src/iceberg/spec/snapshot-ids.js';
import { createTable, loadCatalogTable, readManifestEntries, readSnapshotManifests } from '../../../src/iceberg/table/index.js';
import { Types } from '../../../src/iceberg/spec/types.js';
import { dockerStatus, startMinio, type TestS3Server } from '../../support/s3-server.js';
import type { AppenderArgs } from './concurrent-appender.js';
import { tempDir } from './table-fixtures.js';

const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'concurrent-appender.ts');
const WRITERS = 4;
const COMMITS = 5;

function runWriter(args: AppenderArgs, env: Record<string, string> = {}): Promise<{ committed: number; attempts: number }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', script, JSON.stringify(args)], { cwd: process.cwd(), timeout: 240_000, env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      if (error) reject(new Error(`writer ${args.writer} failed: ${stderr || error.message}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop()!));
    });
  });
}

const schema = new Schema(
  0,
  [
    { id: 1, name: 'id', required: true, type: Types.long },
    { id: 2, name: 'note', required: false, type: Types.string },
  ],
  [1],
);

async function concurrentAppends(options: FileSystemCatalogOptions): Promise<void> {
  const catalog = new FileSystemCatalog(options);
  try {
    await catalog.createNamespace(['db']);
    const identifier = { namespace: ['db'], name: 'appends' };
    await createTable(catalog, identifier, { schema, formatVersion: 3 });
    const results = await Promise.all(Array.from({ length: WRITERS }, (_, w) => runWriter({ catalog: options, identifier, writer: w + 1, commits: COMMITS })));
    const total = WRITERS * COMMITS;
    expect(results.reduce((n, r) => n + r.committed, 0)).toBe(total);
    expect(results.reduce((n, r) => n + r.attempts, 0)).toBeGreaterThanOrEqual(total);

    const table = await loadCatalogTable(catalog, identifier);
    const m = table.metadata;
    // One linear history holding every commit exactly once.
    const history = ancestorsOf(m, m.currentSnapshotId);
    expect(history).toHaveLength(total);
    expect(m.snapshots).toHaveLength(total);
    const tags = history.map((s) => `${s.summary['floe.test.writer']}/${s.summary['floe.test.commit']}`);
    expect(new Set(tags).size).toBe(total);
    expect(history.map((s) => s.sequenceNumber).sort((a, b) => (a < b ? -1 : 1))).toEqual(Array.from({ length: total }, (_, i) => BigInt(i + 1)));
    expect(m.lastSequenceNumber).toBe(BigInt(total));
    // Totals carried along the chain; v3 row ids handed out without overlap.
    expect(history[0].summary['total-records']).toBe(String(total));
    expect(history[0].summary['total-data-files']).toBe(String(total));
    const ranges = history.map((s) => [s.firstRowId!, s.firstRowId! + s.addedRows!] as const).sort((a, b) => (a[0] < b[0] ? -1 : 1));
    for (let i = 1; i < ranges.length; i++) expect(ranges[i][0]).toBeGreaterThanOrEqual(ranges[i - 1][1]);
    expect(m.nextRowId).toBe(BigInt(total));

    // Every data file referenced, present, and read: one row per commit.
    const entries = (await Promise.all((await readSnapshotManifests(table.io, history[0])).map((mf) => readManifestEntries(table.io, mf)))).flat();
    expect(entries.filter((e) => e.status !== 'deleted')).toHaveLength(total);
    for (const e of entries) expect(await table.io.exists(e.dataFile.filePath)).toBe(true);
    const rows = await readTableRows(table);
    const expected = [];
    for (let w = 1; w <= WRITERS; w++) for (let i = 0; i < COMMITS; i++) expected.push(BigInt(w * 1000 + i));
    expect(rows.map((r) => r[0] as bigint).sort((a, b) => (a < b ? -1 : 1))).toEqual(expected);
  } finally {
    await catalog.close();
  }
}

describe('concurrent writer processes', () => {
  const local = tempDir('floe-concurrency-');
  afterAll(() => local.remove());

  it(`${WRITERS} processes × ${COMMITS} appends on local disk: every commit exactly once, nothing lost`, async () => {
    await concurrentAppends({ warehouse: path.join(local.dir, 'warehouse') });
  });

  // One real crash (SIGKILL) per run keeps this file fast; commit.test.ts throws at every failpoint in-process.
  for (const point of ['after-manifest-list']) {
    it(`a writer killed at ${point} leaves the table unchanged, and the next writer commits normally`, async () => {
      const options = { warehouse: path.join(local.dir, `crash-${point}`) };
      const catalog = new FileSystemCatalog(options);
      try {
        await catalog.createNamespace(['db']);
        const identifier = { namespace: ['db'], name: 't' };
        await createTable(catalog, identifier, { schema, formatVersion: 2 });
        // The writer's second commit dies at the failpoint (SIGKILL: nothing after it runs).
        const crashed = await runWriter({ catalog: options, identifier, writer: 1, commits: 2 }, { FLOE_FAILPOINTS: `${point}:1:exit` }).catch((e: Error) => e);
        expect(crashed).toBeInstanceOf(Error);
        let table = await loadCatalogTable(catalog, identifier);
        expect(table.metadata.snapshots).toHaveLength(1);
        await runWriter({ catalog: options, identifier, writer: 2, commits: 1 });
        table = await loadCatalogTable(catalog, identifier);
        expect(table.metadata.snapshots.map((s) => s.sequenceNumber)).toEqual([1n, 2n]);
        expect((await readTableRows(table)).map((r) => r[0]).sort()).toEqual([1000n, 2000n]);
      } finally {
        await catalog.close();
      }
    });
  }
});

const docker = await dockerStatus();
if (!docker.available) console.warn(`[floe] skipping concurrent appends on MinIO: ${docker.reason}`);
describe.skipIf(!docker.available)(`concurrent writer processes on MinIO${docker.available ? '' : ` — skipped: ${docker.reason}`}`, () => {
  let minio: TestS3Server | undefined;
  afterAll(async () => {
    await minio?.stop();
  });
  it(`${WRITERS} processes × ${COMMITS} appends on MinIO`, async () => {
    minio = await startMinio();
    await concurrentAppends({ warehouse: `s3://${minio.bucket}/warehouse-${randomUUID()}`, storage: { s3: minio.config } });
  });
});
