/**
 * `floe run`, `floe snapshot` and `floe status` as real child processes on the harness MariaDB:
 * notifications reach a real webhook server, `/metrics` is scraped while the pipeline runs, SIGTERM
 * stops it cleanly (exit 0) after committing, `status` reports per table exactly what the tables'
 * own metadata says (records, deletes, live rows, checkpoint, committed binlog offset), and a DDL
 * under `schemaChanges: stop` ends with exit code 4 and its position.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { lastCommitted } from '../../src/iceberg/checkpoint/checkpoint-stamps.js';
import { currentSnapshot } from '../../src/iceberg/spec/snapshot-ids.js';
import { readSnapshotManifests } from '../../src/iceberg/table/manifest-io.js';
import { parseProgressSummary } from '../../src/pipeline/state.js';
import { connectMysql } from '../../src/source/mysql/client.js';
import { detectDialect } from '../../src/source/mysql/dialect.js';
import { compareOffsets, parseOffset, serializeOffset, type BinlogOffset } from '../../src/source/mysql/offset/offset.js';
import { readWatermark } from '../../src/source/mysql/snapshot/watermark.js';
import { parseJson, stringifyJson } from '../../src/util/json.js';
import { freePort } from '../support/mariadb.js';
import { createTestDatabase, sharedMysqlConfig } from '../support/shared-mysql.js';
import { logLines, runFloe, spawnFloe } from './run-floe.js';

let dir: string;
let hookServer: Server;
let hookUrl: string;
const hooks: Record<string, unknown>[] = [];

async function sql(statements: string[]): Promise<void> {
  const conn = await mysql.createConnection(sharedMysqlConfig());
  try {
    for (const s of statements) await conn.query(s);
  } finally {
    await conn.end();
  }
}

async function sourceEnd(): Promise<BinlogOffset> {
  const client = await connectMysql(sharedMysqlConfig());
  try {
    return await readWatermark(client, await detectDialect(client));
  } finally {
    await client.close();
  }
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function hooksOf(job: string, type: string): Record<string, unknown>[] {
  return hooks.filter((h) => h.job === job && h.type === type);
}

async function writeConfig(name: string, body: string): Promise<string> {
  const file = join(dir, `${name}.yaml`);
  await writeFile(file, body);
  return file;
}

function sourceYaml(database: string, serverId: number, s: { host: string; port: number; user: string; password: string } = sharedMysqlConfig()): string {
  return `source:
  host: ${s.host}
  port: ${s.port}
  user: ${s.user}
  password: "${s.password}"
  serverId: ${serverId}
  include: ["${database}.*"]
`;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'floe-cli-run-'));
  hookServer = createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      hooks.push(JSON.parse(text) as Record<string, unknown>);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => hookServer.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(hookServer.address() as AddressInfo).port}/floe`;
});

afterAll(async () => {
  hookServer.closeAllConnections();
  await new Promise<void>((resolve) => hookServer.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

describe('floe run → SIGTERM → floe status', () => {
  it('streams, serves metrics, notifies the webhook, stops cleanly, and status reports each table’s committed offset', async () => {
    const db = await createTestDatabase('clirun');
    await sql([
      `CREATE TABLE \`${db}\`.items (id BIGINT UNSIGNED PRIMARY KEY, name VARCHAR(40) NOT NULL, price DECIMAL(10,2) NOT NULL)`,
      `CREATE TABLE \`${db}\`.notes (body VARCHAR(100) NOT NULL)`,
      `INSERT INTO \`${db}\`.items VALUES (18446744073709551615, 'max', 1.50), (1, 'one', 2.25), (2, 'two', 3.00)`,
      `INSERT INTO \`${db}\`.notes VALUES ('first'), ('second')`,
    ]);
    // A least-privileged replication user with a password, which must never reach any output.
    const user = `floe_repl_${process.pid}`;
    const password = 'pw-Run-8s3cr3t';
    await sql([
      `DROP USER IF EXISTS '${user}'@'%'`,
      `CREATE USER '${user}'@'%' IDENTIFIED BY '${password}'`,
      `GRANT SELECT, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO '${user}'@'%'`,
    ]);
    const shared = sharedMysqlConfig();
    const job = `cli-run-${process.pid}`;
    const metricsPort = await freePort();
    const warehouse = join(dir, 'wh-run');
    const config = await writeConfig(
      'run',
      `job: { id: ${job} }
${sourceYaml(db, 6101, { ...shared, user, password })}warehouse: { location: "${warehouse}" }
commit: { intervalMs: 300 }
iceberg: { keyIndex: { memoryMaxRows: 0 } }
notifications:
  webhook: { url: "${hookUrl}", headers: { x-floe-test: "yes" } }
metrics: { port: ${metricsPort} }
`,
    );
    // memoryMaxRows 0: the streamed upserts' key index lives on disk, under --state-dir
    const stateDir = join(dir, 'state-run');
    const run = spawnFloe(['run', '-c', config, '--state-dir', stateDir], { cwd: dir });
    try {
      await until('streaming-started at the webhook', () => hooksOf(job, 'streaming-started')[0]);
      expect(hooksOf(job, 'snapshot-started')[0]).toMatchObject({ tables: expect.arrayContaining([`${db}.items`, `${db}.notes`]) });
      expect(hooksOf(job, 'table-snapshot-finished').map((h) => h.table).sort()).toEqual([`${db}.items`, `${db}.notes`]);
      const startOffset = parseOffset(String(hooksOf(job, 'streaming-started')[0]!.offset));
      expect(startOffset.file ?? startOffset.gtids).toBeDefined();

      const scrape = async (): Promise<string> => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const snapshotMetrics = await scrape();
      expect(snapshotMetrics).toContain(`floe_rows_written_total{table="${db}.items",phase="snapshot"} 3`);
      expect(snapshotMetrics).toContain(`floe_rows_written_total{table="${db}.notes",phase="snapshot"} 2`);

      await sql([
        `INSERT INTO \`${db}\`.items VALUES (3, 'three', 4.75)`,
        `UPDATE \`${db}\`.items SET price = 9.99 WHERE id = 18446744073709551615`,
        `DELETE FROM \`${db}\`.items WHERE id = 1`,
      ]);
      const afterChanges = await sourceEnd();
      const catalog = new FileSystemCatalog({ warehouse, name: 'floe' });
      await until('the changes committed to items', async () => {
        const t = await catalog.loadTable({ namespace: [db], name: 'items' });
        const last = lastCommitted(t.metadata, job);
        const offset = last && parseProgressSummary(last.sourceOffset).offset;
        return offset && compareOffsets(offset, afterChanges) >= 0 ? true : undefined;
      });
      const streamingMetrics = await scrape();
      expect(streamingMetrics).toMatch(new RegExp(`floe_binlog_events_total\\{table="${db}\\.items"\\} 3`));
      expect(streamingMetrics).toMatch(new RegExp(`floe_rows_written_total\\{table="${db}\\.items",phase="streaming"\\} \\d`));
      expect(streamingMetrics).toMatch(new RegExp(`floe_commit_duration_seconds_count\\{table="${db}\\.items"\\} \\d`));

      run.child.kill('SIGTERM');
      const done = await run.done;
      expect(done.code, done.stderr.slice(-3000)).toBe(0);
      expect(hooksOf(job, 'stopped')).toEqual([expect.objectContaining({ reason: 'signal' })]);
      const logs = logLines(done.stderr);
      expect(logs.some((l) => String(l.msg).startsWith('SIGTERM received: stopping after the current checkpoint'))).toBe(true);
      expect(done.stderr).not.toContain(password);
      expect(done.stdout).not.toContain(password);
      const itemsTable = await catalog.loadTable({ namespace: [db], name: 'items' });
      expect(statSync(join(stateDir, job, `${itemsTable.metadata.tableUuid}.keyindex.sqlite`)).size).toBeGreaterThan(0);

      // floe status, as JSON (stdout is a pipe here), against what the tables themselves say.
      const status = await runFloe(['status', '-c', config, '--count'], { cwd: dir });
      expect(status.code, status.stderr).toBe(0);
      const report = parseJson(status.stdout) as { job: string; tables: Record<string, any>[] }; // exact integers
      expect(report.job).toBe(job);
      expect(report.tables.map((t) => t.table)).toEqual([`${db}.items`, `${db}.notes`]);
      for (const entry of report.tables) {
        const t = await catalog.loadTable({ namespace: [db], name: String(entry.table).split('.')[1]! });
        const last = lastCommitted(t.metadata, job)!;
        const progress = parseProgressSummary(last.sourceOffset);
        expect(entry.phase).toBe('streaming');
        const summary = t.metadata.snapshots.find((x) => x.snapshotId === t.metadata.currentSnapshotId)!.summary;
        expect(entry.records).toBe(Number(summary['total-records']));
        expect(entry.deletes).toEqual({ equality: Number(summary['total-equality-deletes']), position: Number(summary['total-position-deletes']) });
        expect(BigInt(entry.checkpointId)).toBe(last.checkpointId);
        expect(BigInt(entry.snapshotId)).toBe(last.snapshotId);
        expect(serializeOffset(parseOffset(stringifyJson(entry.sourceOffset.offset)))).toBe(serializeOffset(progress.offset!));
        expect(typeof entry.offset).toBe('string');
        expect(entry.lagSeconds).toBeGreaterThanOrEqual(0);
        expect(Date.parse(entry.committedAt)).toBeGreaterThan(0);
        // lake health, read from the manifests, agrees with the snapshot summary's totals
        const health = entry.health;
        expect(health.dataFiles).toBe(Number(summary['total-data-files']));
        expect(health.deleteFiles.equality + health.deleteFiles.position + health.deleteFiles.deletionVectors).toBe(Number(summary['total-delete-files']));
        expect(health.deletedRows).toEqual({ equality: Number(summary['total-equality-deletes']), position: Number(summary['total-position-deletes']) });
        expect(health.snapshots).toBe(t.metadata.snapshots.length);
        // the manifests of the current snapshot, counted from its manifest list
        const listed = await readSnapshotManifests(t.io, currentSnapshot(t.metadata)!);
        expect(health.manifests).toEqual({ data: listed.filter((m) => m.content === 'data').length, deletes: listed.filter((m) => m.content === 'deletes').length });
        expect(health.metadataBytes).toBe(statSync(fileURLToPath(t.metadataLocation)).size);
        expect(health.averageDataFileBytes).toBeGreaterThan(0);
      }
      const items = report.tables[0]!;
      expect(items.rows).toBe(3); // live rows, counted: max, two, three
      expect(items.records).toBeGreaterThan(3); // the update and the delete left delete-file entries
      expect(compareOffsets(parseOffset(stringifyJson(items.sourceOffset.offset)), afterChanges)).toBeGreaterThanOrEqual(0);
      expect(report.tables[1]!.rows).toBe(2);
      expect(status.stdout + status.stderr).not.toContain(password);
      await catalog.close();
    } finally {
      if (run.child.exitCode === null) run.child.kill('SIGKILL');
      await sql([`DROP USER IF EXISTS '${user}'@'%'`]);
    }
  });

  it('floe snapshot copies the tables and exits 0; status shows them streaming-ready with their rows', async () => {
    const db = await createTestDatabase('clisnap');
    await sql([`CREATE TABLE \`${db}\`.t (id INT PRIMARY KEY, v VARCHAR(10))`, `INSERT INTO \`${db}\`.t VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')`]);
    const job = `cli-snap-${process.pid}`;
    const config = await writeConfig('snap', `job: { id: ${job} }\n${sourceYaml(db, 6102)}warehouse: { location: "${join(dir, 'wh-snap')}" }\nnotifications:\n  webhook: { url: "${hookUrl}" }\n`);
    const done = await runFloe(['snapshot', '-c', config], { cwd: dir });
    expect(done.code, done.stderr.slice(-3000)).toBe(0);
    expect(hooksOf(job, 'stopped')).toEqual([expect.objectContaining({ reason: 'snapshot-complete' })]);
    expect(hooksOf(job, 'streaming-started')).toEqual([]);
    const status = await runFloe(['status', '-c', config, '--no-source'], { cwd: dir });
    const report = parseJson(status.stdout) as { tables: Record<string, any>[] };
    expect(report.tables).toHaveLength(1);
    expect(report.tables[0]).toMatchObject({ table: `${db}.t`, records: 4, deletes: { equality: 0, position: 0 } });
    expect(report.tables[0]!.checkpointId).toBeGreaterThan(0);
  });

  it('exits 4 at a DDL under schemaChanges: stop, with its position, everything before it committed', async () => {
    const db = await createTestDatabase('cliddl');
    await sql([`CREATE TABLE \`${db}\`.t (id INT PRIMARY KEY, v VARCHAR(10))`, `INSERT INTO \`${db}\`.t VALUES (1, 'a')`]);
    const job = `cli-ddl-${process.pid}`;
    const warehouse = join(dir, 'wh-ddl');
    const config = await writeConfig('ddl', `job: { id: ${job} }\n${sourceYaml(db, 6103)}warehouse: { location: "${warehouse}" }\ncommit: { intervalMs: 60000 }\nschemaChanges: stop\nnotifications:\n  webhook: { url: "${hookUrl}" }\n`);
    const run = spawnFloe(['run', '-c', config], { cwd: dir });
    try {
      await until('streaming-started', () => hooksOf(job, 'streaming-started')[0]);
      await sql([`INSERT INTO \`${db}\`.t VALUES (2, 'b')`, `ALTER TABLE \`${db}\`.t ADD COLUMN w INT DEFAULT 7`]);
      const done = await run.done;
      expect(done.code, done.stderr.slice(-3000)).toBe(4);
      const stop = hooksOf(job, 'ddl-stop');
      expect(stop).toHaveLength(1);
      expect(String(stop[0]!.statement)).toMatch(/ADD COLUMN w INT DEFAULT 7/i);
      expect(String(stop[0]!.position)).toMatch(/\S/);
      // The insert before the DDL is committed (the commit interval alone would not have done it).
      const catalog = new FileSystemCatalog({ warehouse, name: 'floe' });
      const t = await catalog.loadTable({ namespace: [db], name: 't' });
      expect(t.metadata.snapshots.at(-1)!.summary['total-records']).toBe('2');
      await catalog.close();
    } finally {
      if (run.child.exitCode === null) run.child.kill('SIGKILL');
    }
  });
});
