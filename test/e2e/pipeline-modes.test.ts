/**
 * Run modes and snapshot modes through the real pipeline:
 * - `snapshot` mode copies the tables, commits, and returns 'snapshot-complete' without streaming; a
 *   later `run` streams on from the snapshot (no chunk read again);
 * - `schema-only` creates the tables and streams from "now": rows that existed before are not copied,
 *   later changes are; the start offset is committed at once, so changes made while floe is stopped
 *   right after its first start are not skipped by the next start;
 * - `never` with an explicit start position (a GTID position read before some changes) streams
 *   exactly the changes after it.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { parseConfig } from '../../src/config/load.js';
import type { FloeConfig } from '../../src/config/schema.js';
import { silentLogger, type Logger } from '../../src/pipeline/observe/logger.js';
import type { RunResult } from '../../src/pipeline/runner.js';
import { gtidStateText } from '../../src/source/mysql/offset/offset.js';
import { createTestDatabase, sharedMysqlConfig } from '../support/shared-mysql.js';
import { sql } from '../source/mysql/binlog/helpers.js';
import { serverPosition } from './support/catch-up.js';
import { catchUp as catchUpTables, startPipeline, untilStreaming } from '../support/pipeline-run.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from './support/lake-compare.js';

process.env.TZ ??= 'Asia/Seoul';

let conn: mysql.Connection;
const warehouses: string[] = [];
let serverId = 50_000 + (process.pid % 5000) * 8;

beforeAll(async () => {
  conn = await sql();
});
afterAll(async () => {
  await conn?.end();
  for (const w of warehouses) await rm(w, { recursive: true, force: true });
});

async function setup(prefix: string, rows: number): Promise<{ db: string; config: (extra: Record<string, unknown>) => FloeConfig; catalog: FileSystemCatalog }> {
  const db = await createTestDatabase(prefix);
  await conn.query(`CREATE TABLE \`${db}\`.t (id INT PRIMARY KEY, v VARCHAR(20))`);
  await conn.query(`INSERT INTO \`${db}\`.t VALUES ${Array.from({ length: rows }, (_, i) => `(${i}, 'v${i}')`).join(', ')}`);
  const warehouse = await mkdtemp(join(tmpdir(), `floe-${prefix}-`));
  warehouses.push(warehouse);
  const id = (serverId += 8);
  return {
    db,
    catalog: new FileSystemCatalog({ warehouse }),
    config: (extra) => parseConfig({ job: { id: prefix }, source: { ...sharedMysqlConfig(), serverId: id, include: [`${db}.*`], snapshot: { chunkSize: 50 }, ...extra }, warehouse: { location: warehouse }, commit: { intervalMs: 200, idleCheckpoints: 2 } }),
  };
}

/** A logger keeping the info lines (the key index's "taken from" line). */
function infoLines(lines: string[]): Logger {
  const logger: Logger = { debug() {}, info: (m) => void lines.push(m), warn: (m) => void lines.push(`warn: ${m}`), error() {}, child: () => logger };
  return logger;
}

function start(config: FloeConfig, mode: 'run' | 'snapshot' = 'run', logger: Logger = silentLogger) {
  const run = startPipeline(config, { mode, logger });
  return { ...run, streaming: () => untilStreaming(run) };
}

async function catchUp(catalog: FileSystemCatalog, db: string, jobId: string, result: Promise<RunResult>): Promise<void> {
  await catchUpTables({ result }, { catalog, job: jobId, db, tables: ['t'] });
}

async function lakeIds(catalog: FileSystemCatalog, db: string): Promise<number[]> {
  const lake = await lakeTableRows(catalog, { namespace: [db], name: 't' });
  return lake.rows.map((r) => Number(r.split('|')[0].slice(1))).sort((a, b) => a - b);
}

describe('run modes', () => {
  it('snapshot mode copies, commits and stops; run streams on from there', async () => {
    const { db, config, catalog } = await setup('mode_snapshot', 230);
    const snap = start(config({}), 'snapshot');
    expect((await snap.result).reason).toBe('snapshot-complete');
    expect(snap.sink.received.map((n) => n.type)).not.toContain('streaming-started');
    const lake = await lakeTableRows(catalog, { namespace: [db], name: 't' });
    expect(lake.rows.length).toBe(230);

    await conn.query(`UPDATE \`${db}\`.t SET v = 'later' WHERE id < 30`);
    await conn.query(`DELETE FROM \`${db}\`.t WHERE id >= 200`);
    const run = start(config({}));
    await run.streaming();
    await catchUp(catalog, db, 'mode_snapshot', run.result);
    expect((await run.stop()).reason).toBe('stopped');
    expect(run.sink.received.map((n) => n.type)).not.toContain('snapshot-started');
    const after = await lakeTableRows(catalog, { namespace: [db], name: 't' });
    expect(multisetDifference(await mysqlTableRows({ ...sharedMysqlConfig() }, db, 't', after.columns), after.rows)).toEqual({ missing: [], unexpected: [] });
  });

  it('the key index persisted as commits land serves the next start: snapshot mode persists it, the run loads it instead of building it', async () => {
    const { db, config, catalog } = await setup('mode_saved_index', 300);
    const stateDir = await mkdtemp(join(tmpdir(), 'floe-state-'));
    warehouses.push(stateDir);
    const base = config({});
    const c: FloeConfig = { ...base, stateDir, iceberg: { ...base.iceberg, keyIndex: { ...base.iceberg.keyIndex, saveMinRows: 0 } } };
    expect((await start(c, 'snapshot').result).reason).toBe('snapshot-complete');
    const uuid = (await catalog.loadTable({ namespace: [db], name: 't' })).metadata.tableUuid;
    const saved = join(stateDir, 'mode_saved_index', `${uuid}.keyindex`);
    expect(existsSync(saved), 'the snapshot persisted the index it kept through its chunks').toBe(true);

    await conn.query(`UPDATE \`${db}\`.t SET v = 'later' WHERE id < 40`);
    await conn.query(`DELETE FROM \`${db}\`.t WHERE id >= 280`);
    const log: string[] = [];
    const run = start(c, 'run', infoLines(log));
    await run.streaming();
    await catchUp(catalog, db, 'mode_saved_index', run.result);
    expect((await run.stop()).reason).toBe('stopped');
    expect(log.join('\n')).toMatch(/key index of 300 rows loaded from .*\.keyindex/);
    expect(log.join('\n')).not.toMatch(/building the key index from the lake/);
    const after = await lakeTableRows(catalog, { namespace: [db], name: 't' });
    expect(multisetDifference(await mysqlTableRows({ ...sharedMysqlConfig() }, db, 't', after.columns), after.rows)).toEqual({ missing: [], unexpected: [] });
    // the run persisted the index as its commits left it
    expect(existsSync(saved)).toBe(true);
    expect(existsSync(`${saved}.log`)).toBe(true);
  });

  it('snapshot and streaming in one run: the key index kept through the chunks serves the streaming writer (not built again at the hand-over)', async () => {
    const { db, config, catalog } = await setup('mode_one_run_index', 250);
    const log: string[] = [];
    const run = start(config({}), 'run', infoLines(log));
    await run.streaming();
    await conn.query(`UPDATE \`${db}\`.t SET v = 'streamed' WHERE id % 3 = 0`);
    await conn.query(`DELETE FROM \`${db}\`.t WHERE id < 10`);
    await catchUp(catalog, db, 'mode_one_run_index', run.result);
    expect((await run.stop()).reason).toBe('stopped');
    expect(log.join('\n')).not.toMatch(/building the key index from the lake/);
    const after = await lakeTableRows(catalog, { namespace: [db], name: 't' });
    expect(multisetDifference(await mysqlTableRows({ ...sharedMysqlConfig() }, db, 't', after.columns), after.rows)).toEqual({ missing: [], unexpected: [] });
  });

  it('schema-only creates the tables and streams from the start offset it committed', async () => {
    const { db, config, catalog } = await setup('mode_schema_only', 40);
    const c = config({ snapshot: { mode: 'schema-only' } });
    const first = start(c);
    await first.streaming();
    expect((await first.stop()).reason).toBe('stopped');
    expect(await lakeIds(catalog, db)).toEqual([]); // the existing rows are not copied
    // while stopped: these changes come after the committed start offset
    await conn.query(`INSERT INTO \`${db}\`.t VALUES (1000, 'x'), (1001, 'y')`);
    await conn.query(`UPDATE \`${db}\`.t SET v = 'u' WHERE id = 3`);
    const second = start(c);
    await second.streaming();
    await conn.query(`DELETE FROM \`${db}\`.t WHERE id = 1001`);
    await catchUp(catalog, db, 'mode_schema_only', second.result);
    expect((await second.stop()).reason).toBe('stopped');
    expect(await lakeIds(catalog, db)).toEqual([3, 1000]);
  });

  it('never streams exactly the changes after the configured start position', async () => {
    const { db, config, catalog } = await setup('mode_never', 10);
    await conn.query(`UPDATE \`${db}\`.t SET v = 'before' WHERE id = 1`);
    const at = await serverPosition({ ...sharedMysqlConfig() });
    await conn.query(`UPDATE \`${db}\`.t SET v = 'after' WHERE id = 2`);
    await conn.query(`INSERT INTO \`${db}\`.t VALUES (50, 'after')`);
    const run = start(config({ snapshot: { mode: 'never' }, startPosition: { gtid: gtidStateText(at.gtids!) } }));
    await run.streaming();
    await catchUp(catalog, db, 'mode_never', run.result);
    expect((await run.stop()).reason).toBe('stopped');
    const lake = await lakeTableRows(catalog, { namespace: [db], name: 't' });
    expect(lake.rows.sort()).toEqual(['N2|"after"', 'N50|"after"']);
  });
});
