/**
 * THE crash test. `floe run` runs as a child process against the harness
 * MariaDB and a local warehouse (filesystem catalog) while a writer applies random inserts, updates
 * (key changes included) and deletes to tables with composite keys, BIGINT UNSIGNED keys, every
 * supported type, no primary key (one with many identical rows, deleted and updated one copy at a
 * time), and a parent with two ON DELETE CASCADE children (one keyless, with identical copies) and a grandchild
 * referencing the keyed child by its primary key. The process is
 * killed with SIGKILL again and again — during snapshot chunks, in the middle of commits (failpoints
 * after the data files, the manifests, the manifest list: the process kills itself there) and while
 * streaming — and started again each time. When the writer stops and a
 * last run has caught up with the server's position (read from the tables' own committed offsets),
 * every Iceberg table equals its MySQL table row for row, no checkpoint id appears twice in any
 * table's history, no v3 table holds an equality delete, and `floe verify` finds the lake equal.
 *
 * The partitioned variant does the same to a table partitioned by day() and one by bucket() (the writer
 * moves rows between partitions), and while floe streams it alters both tables (a column added with a
 * default, a column widened), so that kills also land around a schema change of partitioned tables.
 *
 * The wide fan-out variant (format v2 and v3): 3,000 rows over ~2,800 days, partitioned by day, so the
 * snapshot writes a file per row or so, with the default commit interval (10 s). 20 runs, each
 * SIGKILLed 1–6 s after it started its snapshot (or streaming): the snapshot must land its chunks between kills (a run's first
 * chunks are committed at once, and a checkpoint closes early when its open files pass
 * commit.maxOpenFiles) and finish before the last kill.
 *
 * The writer's seed is printed; set FLOE_CRASH_SEED to replay a run's writes.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import { CHECKPOINT_ID_KEY, JOB_ID_KEY } from '../../src/iceberg/checkpoint/index.js';
import { sharedMysqlConfig } from '../support/shared-mysql.js';
import { serverKind } from '../support/servers.js';
import { committedOffset, serverPosition, waitForCatchUp } from './support/catch-up.js';
import { CASCADE_DELETES, CRASH_TABLES, RandomWriter, createCrashSchema, prng } from './support/crash-schema.js';
import { FANOUT_TABLE, FanoutWriter, PARTITIONED_DDL, PARTITIONED_OVERRIDES, PARTITIONED_TABLES, PartitionedRandomWriter, createFanoutSchema, createPartitionedCrashSchema } from './support/crash-partitioned.js';
import { JOB, cleanup, crashAndCompare, seeded, setUp, sleep, tearDownCrashRuns } from './support/crash-run.js';
import { FloeProcess } from './support/floe-process.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from './support/lake-compare.js';

process.env.TZ ??= 'Asia/Seoul';

/** At least this many kills; more until every kind of kill happened (at most MAX_RUNS). */
const MIN_RUNS = 20;
const MAX_RUNS = 45;

afterAll(tearDownCrashRuns);

describe('crash and restart', () => {
  it(`the lake equals MySQL after ${MIN_RUNS}+ SIGKILLs during snapshot, commits and streaming`, async () => {
    const s = await setUp('e2e_crash', createCrashSchema, (db) => ({ source: { timeAsMicros: [`${db}.all_types.dur`] } }), 0);
    const timeAsMicros = [`${s.db}.all_types.dur`];
    const { seed, random } = seeded();
    const writer = new RandomWriter(s.writerConn, prng(seed ^ 0x5eed));
    await crashAndCompare(s, CRASH_TABLES, writer, random, { minRuns: MIN_RUNS, maxRuns: MAX_RUNS, snapshotKills: 2, failpoints: 3, streamingKills: 5 }, { typeMapping: { timeAsMicros }, noEqualityDeletes: CRASH_TABLES, verify: true });
    console.log(`writer: ${writer.parentDeletes} parent deletes`);
    if (CASCADE_DELETES) expect(writer.parentDeletes).toBeGreaterThan(0);
  }, 900_000);

  it('a disk key index and disk value indexes (memory bounds 0, under stateDir): the lake equals MySQL after SIGKILLs, some between the Iceberg commit and the index update', async () => {
    const s = await setUp('e2e_crash_disk', createCrashSchema, (db) => ({ source: { timeAsMicros: [`${db}.all_types.dur`] }, iceberg: { keyIndex: { memoryMaxRows: 0, memoryMaxBytes: 0 } }, stateDir: join(tmpdir(), `floe-e2e-state-${db}`) }), 2);
    cleanup.push(join(tmpdir(), `floe-e2e-state-${s.db}`));
    const timeAsMicros = [`${s.db}.all_types.dur`];
    const { seed, random } = seeded();
    const writer = new RandomWriter(s.writerConn, prng(seed ^ 0xd15c));
    await crashAndCompare(s, CRASH_TABLES, writer, random, { minRuns: 10, maxRuns: 25, snapshotKills: 1, failpoints: 3, streamingKills: 4 }, { typeMapping: { timeAsMicros }, commitSteps: ['key-index-before-apply', 'after-manifest-list', 'key-index-before-apply'], noEqualityDeletes: CRASH_TABLES });
    // the indexes went to disk and are stamped: the state directory holds one per keyed table
    const { readdirSync } = await import('node:fs');
    expect(readdirSync(join(tmpdir(), `floe-e2e-state-${s.db}`, JOB)).filter((f) => f.endsWith('.keyindex.sqlite')).length).toBeGreaterThan(0);
  }, 900_000);

  it('partitioned tables (day, bucket): the lake equals MySQL after SIGKILLs during snapshot, commits and streaming, and a DDL while streaming', async () => {
    const s = await setUp('e2e_crash_part', createPartitionedCrashSchema, (db) => ({ tables: { overrides: PARTITIONED_OVERRIDES(db) } }), 4);
    const { seed, random } = seeded();
    const writer = new PartitionedRandomWriter(s.writerConn, prng(seed ^ 0x9a57));
    let ddlRun: number | undefined;
    const runs = await crashAndCompare(s, PARTITIONED_TABLES, writer, random, { minRuns: 14, maxRuns: 35, snapshotKills: 2, failpoints: 3, streamingKills: 4 }, {
      duringRun: async (run, phase) => {
        // once, while a run streams (after a few kills): the DDL, with floe running; it is killed later
        if (ddlRun !== undefined || phase !== 'streaming' || run < 5) return;
        for (const statement of PARTITIONED_DDL) await s.conn.query(statement);
        writer.afterDdl = true;
        ddlRun = run;
        console.log(`run ${run}: ${PARTITIONED_DDL.join('; ')}`);
      },
    });
    expect(ddlRun, `no run streamed after run 5: ${runs.map((r) => `${r.run}@${r.phase}`).join(' ')}`).toBeDefined();
    // the DDL reached the lake: the added column (old rows read its default) and the widened one
    const catalog = new FileSystemCatalog({ warehouse: s.warehouse });
    const orders = await loadCatalogTable(catalog, { namespace: [s.db], name: 'orders_day' });
    const ordersSchema = orders.metadata.schemas.find((x) => x.schemaId === orders.metadata.currentSchemaId)!;
    expect(ordersSchema.fields.map((f) => f.name)).toContain('channel');
    const items = await loadCatalogTable(catalog, { namespace: [s.db], name: 'items_bucket' });
    const itemsSchema = items.metadata.schemas.find((x) => x.schemaId === items.metadata.currentSchemaId)!;
    expect(itemsSchema.fields.find((f) => f.name === 'qty')?.type).toEqual({ kind: 'long' });
    for (const t of [orders, items]) expect(t.metadata.partitionSpecs.find((p) => p.specId === t.metadata.defaultSpecId)!.fields).toHaveLength(1);
  }, 900_000);

  // The writer's bounded commits, not the server, are under test here: on MariaDB only (the MySQL 8
  // project's time goes to the tests where the servers differ).
  it.skipIf(serverKind() === 'mysql').each([2, 3] as const)('a snapshot over ~2,800 day partitions (v%i): 20 runs SIGKILLed 1–6 s into their work land its chunks, and it finishes before the last kill', async (formatVersion) => {
    // floe's default commit interval (10 s): longer than any run; the open-files bound below ~2,800
    // partitions, so that a run's checkpoints close early
    const s = await setUp(`e2e_crash_fanout_v${formatVersion}`, createFanoutSchema, (db) => ({ tables: { overrides: { [`${db}.${FANOUT_TABLE}`]: { partitionBy: ['day(created_at)'], formatVersion } } }, commit: { intervalMs: 10_000, maxOpenFiles: 512 } }), 5 + formatVersion);
    const { seed, random } = seeded();
    const writer = new FanoutWriter(s.writerConn, prng(seed ^ 0xfa9));
    const catalog = new FileSystemCatalog({ warehouse: s.warehouse });
    const identifier = { namespace: [s.db], name: FANOUT_TABLE };
    const RUNS = 20;
    let finishedBy: number | undefined;
    const runs: string[] = [];
    writer.start();
    try {
      for (let run = 0; run < RUNS; run++) {
        const p = new FloeProcess(s.configPath, { logLevel: 'debug' });
        // counted from the start of its work, as the other crash tests count (a loaded machine can take
        // seconds to start a process)
        const started = await p.waitFor((r) => r.notification === 'snapshot-started' || r.notification === 'streaming-started');
        if (!started) throw new Error(`run ${run} exited before starting:\n${p.tail()}`);
        const ms = 1000 + random() * 5000;
        await sleep(ms);
        if (p.hasExited) throw new Error(`run ${run} ended by itself:\n${p.tail()}`);
        p.kill('SIGKILL');
        await p.exited;
        const commits = p.logs.filter((r) => r.msg === 'checkpoint committed').length;
        runs.push(`${run}@${Math.round(ms)}ms:${commits}`);
        // streaming in the lake: every chunk committed, the hand-over too
        if (finishedBy === undefined && (await committedOffset(catalog, identifier, JOB)) !== undefined) finishedBy = run;
      }
    } finally {
      await writer.stop();
    }
    console.log(`v${formatVersion}: runs ${runs.join(' ')}; snapshot finished by run ${finishedBy}; writer ${writer.transactions} changes`);
    expect(finishedBy, 'the snapshot finished before the last kill').toBeDefined();
    expect(finishedBy!).toBeLessThan(RUNS - 1);

    const target = await serverPosition({ ...sharedMysqlConfig() });
    const last = new FloeProcess(s.configPath);
    try {
      await waitForCatchUp(catalog, [{ identifier, sourceKey: `${s.db}.${FANOUT_TABLE}` }], JOB, target, {
        timeoutMs: 120_000,
        check: () => {
          if (last.hasExited) throw new Error(`the last run exited:\n${last.tail()}`);
        },
      });
    } finally {
      last.kill('SIGTERM');
    }
    expect(await last.exited, last.tail()).toEqual({ code: 0, signal: null });
    const lake = await lakeTableRows(catalog, identifier);
    const expected = await mysqlTableRows({ ...sharedMysqlConfig() }, s.db, FANOUT_TABLE, lake.columns);
    expect({ ...multisetDifference(expected, lake.rows), rows: lake.rows.length }).toEqual({ missing: [], unexpected: [], rows: expected.length });
    const table = await loadCatalogTable(catalog, identifier);
    expect(table.metadata.formatVersion).toBe(formatVersion);
    const ids = table.metadata.snapshots.filter((snap) => snap.summary[JOB_ID_KEY] === JOB).map((snap) => snap.summary[CHECKPOINT_ID_KEY]);
    expect(new Set(ids).size, `checkpoint ids: ${ids.join(',')}`).toBe(ids.length);
    expect(writer.failures, writer.failures.slice(0, 3).join('\n')).toHaveLength(0);
  }, 900_000);
});
