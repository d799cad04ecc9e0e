/**
 * Snapshots of tables partitioned by a fine transform, end to end: `floe snapshot` (the CLI, as a
 * child process, with its worker-thread Parquet encoders) copies a table partitioned by day(created)
 * over ~500 days and one partitioned by bucket(8, id) from the harness MariaDB into a local warehouse,
 * in many small chunks and a few commits. Then:
 *
 * - every row equals MySQL's, read with floe's scan reader and with icebird (an independent reader);
 * - the data files are bounded by partitions x commits, not partitions x chunks: the rows of all the
 *   chunks of one checkpoint share one file per partition (a chunk of keys spread over the table
 *   touches nearly every partition, so one file per partition per chunk would be ~chunks x more);
 * - each data file's partition tuple is the one its rows compute to (spec "Partition Transforms").
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { loadCatalogTable, readManifestEntries, readSnapshotManifests, type CatalogTable } from '../../src/iceberg/table/index.js';
import { JOB_ID_KEY } from '../../src/iceberg/checkpoint/index.js';
import { daysFromCivil } from '../../src/model/values.js';
import { stringifyJson } from '../../src/util/json.js';
import { openTestDatabase, sharedMysqlConfig } from '../support/shared-mysql.js';
import { icebirdRows } from '../iceberg/writer/icebird-read.js';
import { writeFloeConfig } from './support/floe-config.js';
import { FloeProcess } from './support/floe-process.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from './support/lake-compare.js';

process.env.TZ ??= 'Asia/Seoul';

const JOB = 'partitioned-e2e';
const ROWS = 2400;
const DAYS = 500;
const CHUNK = 50;
const BUCKETS = 8;

let db: string;
let conn: mysql.Connection;
let warehouse: string;
let configPath: string;
let catalog: FileSystemCatalog;

/** Rows spread so that every chunk of 50 consecutive keys touches ~50 different days. */
function createdOf(id: number): { day: number; text: string } {
  const d = (id * 7919) % DAYS;
  const date = new Date(Date.UTC(2021, 0, 1) + d * 86_400_000);
  const text = `${date.toISOString().slice(0, 10)} ${String(id % 24).padStart(2, '0')}:${String(id % 60).padStart(2, '0')}:07.${String(id).padStart(6, '0')}`;
  return { day: daysFromCivil(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()), text };
}

beforeAll(async () => {
  ({ db, conn } = await openTestDatabase('e2e_partitioned'));
  await conn.query(`CREATE TABLE by_day (id BIGINT PRIMARY KEY, created DATETIME(6) NOT NULL, amount DECIMAL(10,2), note VARCHAR(40))`);
  await conn.query(`CREATE TABLE by_bucket (id INT PRIMARY KEY, grp INT NOT NULL, label VARCHAR(30), at DATE)`);
  for (let i = 0; i < ROWS; i += 600) {
    const ids = Array.from({ length: Math.min(600, ROWS - i) }, (_, k) => i + k + 1);
    await conn.query(`INSERT INTO by_day VALUES ${ids.map((id) => `(${id}, '${createdOf(id).text}', ${id % 5 === 0 ? 'NULL' : (id * 1.25).toFixed(2)}, ${id % 7 === 0 ? 'NULL' : `'note ${id % 13}'`})`).join(', ')}`);
    await conn.query(`INSERT INTO by_bucket VALUES ${ids.map((id) => `(${id}, ${id % 11}, ${id % 3 === 0 ? 'NULL' : `'label-${id}'`}, ${id % 4 === 0 ? 'NULL' : `'2024-0${1 + (id % 9)}-1${id % 10}'`})`).join(', ')}`);
  }
  warehouse = await mkdtemp(join(tmpdir(), 'floe-e2e-partitioned-'));
  catalog = new FileSystemCatalog({ warehouse });
  configPath = await writeFloeConfig({
    job: JOB,
    warehouse,
    serverId: 40_000 + (process.pid % 5000) * 8,
    include: [`${db}.by_day`, `${db}.by_bucket`],
    source: { snapshot: { chunkSize: CHUNK, parallelism: 2 } },
    tables: { overrides: { [`${db}.by_day`]: { partitionBy: ['day(created)'] }, [`${db}.by_bucket`]: { partitionBy: [`bucket(${BUCKETS}, id)`] } } },
    // Commits come from the size bound only (a few per table), never from the clock.
    commit: { intervalMs: 600_000, maxBufferedChanges: 1000 },
  });
});

afterAll(async () => {
  await conn?.end();
  if (warehouse) {
    await rm(warehouse, { recursive: true, force: true });
    await rm(configPath, { force: true });
  }
});

interface Shape {
  /** Live data files per partition (tuple as JSON). */
  filesPerPartition: Map<string, number>;
  dataFiles: number;
  /** Snapshots of the job that added data files. */
  dataCommits: number;
  entries: { partition: unknown[]; recordCount: bigint }[];
}

async function shapeOf(table: CatalogTable): Promise<Shape> {
  const m = table.metadata;
  const current = m.snapshots.find((s) => s.snapshotId === m.currentSnapshotId)!;
  const manifests = (await readSnapshotManifests(table.io, current)).filter((mf) => mf.content === 'data');
  const entries = (await Promise.all(manifests.map((mf) => readManifestEntries(table.io, mf)))).flat().filter((e) => e.status !== 'deleted');
  const filesPerPartition = new Map<string, number>();
  for (const e of entries) {
    const k = stringifyJson(e.dataFile.partition);
    filesPerPartition.set(k, (filesPerPartition.get(k) ?? 0) + 1);
  }
  const dataCommits = m.snapshots.filter((s) => s.summary[JOB_ID_KEY] === JOB && Number(s.summary['added-data-files'] ?? 0) > 0).length;
  return { filesPerPartition, dataFiles: entries.length, dataCommits, entries: entries.map((e) => ({ partition: e.dataFile.partition, recordCount: e.dataFile.recordCount })) };
}

describe('snapshot of partitioned tables (day, bucket)', () => {
  it('copies every row, with files bounded by partitions x commits, readable by floe and icebird', async () => {
    const p = new FloeProcess(configPath, { command: 'snapshot' });
    const exit = await p.exited;
    expect(exit, p.tail()).toEqual({ code: 0, signal: null });

    for (const [name, partitions] of [
      ['by_day', DAYS],
      ['by_bucket', BUCKETS],
    ] as const) {
      const identifier = { namespace: [db], name };
      const lake = await lakeTableRows(catalog, identifier);
      const expected = await mysqlTableRows({ ...sharedMysqlConfig() }, db, name, lake.columns);
      expect({ table: name, ...multisetDifference(expected, lake.rows), rows: lake.rows.length }).toEqual({ table: name, missing: [], unexpected: [], rows: ROWS });

      const table = await loadCatalogTable(catalog, identifier);
      const shape = await shapeOf(table);
      const chunks = ROWS / CHUNK;
      console.log(`${name}: ${shape.dataFiles} data files, ${shape.filesPerPartition.size} partitions, ${shape.dataCommits} commits with data, ${chunks} chunks`);
      expect(shape.filesPerPartition.size, name).toBe(partitions);
      // the size bound (1,000 changes) makes a few commits; far fewer than the 48 chunks
      expect(shape.dataCommits, name).toBeGreaterThanOrEqual(2);
      expect(shape.dataCommits, name).toBeLessThan(chunks / 4);
      for (const [partition, files] of shape.filesPerPartition) expect(files, `${name} ${partition}`).toBeLessThanOrEqual(shape.dataCommits);
      expect(shape.dataFiles, name).toBeLessThanOrEqual(partitions * shape.dataCommits);

      // icebird, its own manifest/Avro/Parquet decoding: the same rows
      const theirs = await icebirdRows(table.metadata.location);
      expect(theirs.length, name).toBe(ROWS);
      const ids = theirs.map((r) => Number(r.id)).sort((a, b) => a - b);
      expect(ids).toEqual(Array.from({ length: ROWS }, (_, i) => i + 1));
      if (name === 'by_day') {
        const notes = new Map(theirs.map((r) => [Number(r.id), r.note ?? null]));
        for (const id of [1, 7, 14, 999, ROWS]) expect(notes.get(id)).toBe(id % 7 === 0 ? null : `note ${id % 13}`);
        // every file's tuple is the day its rows fall on: a file per (partition, commit), rows counted once
        const days = new Map<number, number>();
        for (let id = 1; id <= ROWS; id++) days.set(createdOf(id).day, (days.get(createdOf(id).day) ?? 0) + 1);
        const counted = new Map<number, bigint>();
        for (const e of shape.entries) counted.set(e.partition[0] as number, (counted.get(e.partition[0] as number) ?? 0n) + e.recordCount);
        expect(new Map([...counted].map(([d, n]) => [d, Number(n)]))).toEqual(days);
      } else {
        const labels = new Map(theirs.map((r) => [Number(r.id), r.label ?? null]));
        for (const id of [1, 3, 8, 1234, ROWS]) expect(labels.get(id)).toBe(id % 3 === 0 ? null : `label-${id}`);
      }
    }
  }, 240_000);
});
