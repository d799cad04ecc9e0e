/**
 * The engines read a lake the crash test made. `floe run` replicates the crash test's tables
 * (test/e2e/support/crash-schema.ts: composite and BIGINT UNSIGNED keys, every supported type, two
 * keyless tables — one of many identical rows deleted and updated a copy at a time — and a parent
 * with two ON DELETE CASCADE children, one keyed, one keyless with identical copies) in format v3
 * from the harness MariaDB, every TIME column as long microseconds (`source.timeAs: micros`, the
 * setting for Spark), while a writer applies random DML and floe is SIGKILLed again and again
 * (snapshot, inside commits, streaming); a last run catches up and the lake equals MySQL with no
 * equality delete (test/e2e/support/crash-run.ts). Then Spark (Hadoop catalog), Trino (its `floe
 * catalog serve`), DuckDB (iceberg_scan), PyIceberg (StaticTable) and Iceberg Java (HadoopTables)
 * read every table: each must read exactly floe scan's lines, with no refusal and no known bug to
 * allow for.
 *
 * Needs `npm run engines:install`; skipped (with a message) without the engines, failed when
 * FLOE_ENGINES_REQUIRED=1.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import type { TableIdentifier } from '../../src/iceberg/metadata/catalog.js';
import { CRASH_TABLES, RandomWriter, createCrashSchema, prng } from '../e2e/support/crash-schema.js';
import { crashAndCompare, seeded, setUp, tearDownCrashRuns, type Setup } from '../e2e/support/crash-run.js';
import { judgeRead, readFacts, type TableFacts } from './support/engine-expectations.js';
import { ENGINES_HOME, engineSuite, floeScanLines, readWith, trino, type Engine } from './support/engines.js';

process.env.TZ ??= 'Asia/Seoul';

const { missing, required } = engineSuite('test/engines/crash-lake');

const ENGINES: Engine[] = ['spark', 'trino', 'duckdb', 'pyiceberg', 'iceberg-java'];

let s: Setup;
let trinoEnv: NodeJS.ProcessEnv | undefined;
const facts = new Map<string, TableFacts>();
const scans = new Map<string, string[]>();

function id(table: string): TableIdentifier {
  return { namespace: [s.db], name: table };
}

describe.skipIf(missing.length > 0 && !required)('the engines read a v3 lake made under SIGKILLs', () => {
  beforeAll(async () => {
    if (missing.length > 0) throw new Error(`FLOE_ENGINES_REQUIRED=1 but ${missing.join(', ')} not installed in ${ENGINES_HOME}: run npm run engines:install`);
    s = await setUp('engines_crash', createCrashSchema, () => ({ source: { timeAs: 'micros' } }), 1);
    const { seed, random } = seeded();
    const writer = new RandomWriter(s.writerConn, prng(seed ^ 0xe9c));
    // Trino starts (20-60 s) while floe is killed and restarted; every Trino read reuses it.
    trinoEnv = { FLOE_TRINO_RUN: join(s.warehouse, '..', `${s.db}.trino-run`) };
    const trinoStarted = trino('start', trinoEnv, s.warehouse);
    const crashed = crashAndCompare(s, CRASH_TABLES, writer, random, { minRuns: 8, maxRuns: 20, snapshotKills: 1, failpoints: 2, streamingKills: 3 }, { typeMapping: { timeAs: 'micros' }, noEqualityDeletes: CRASH_TABLES });
    const [a, b] = await Promise.allSettled([crashed, trinoStarted]);
    for (const r of [a, b]) if (r.status === 'rejected') throw r.reason;
    const catalog = new FileSystemCatalog({ warehouse: s.warehouse });
    for (const t of CRASH_TABLES) {
      facts.set(t, await readFacts(catalog, id(t)));
      scans.set(t, await floeScanLines((await catalog.loadTable(id(t))).metadataLocation));
    }
  });

  afterAll(async () => {
    if (trinoEnv) await trino('stop', trinoEnv).catch(() => undefined);
    await tearDownCrashRuns();
  });

  it('the lake holds what the engines are asked to read: deletion vectors, no equality delete, no Iceberg time', () => {
    for (const t of CRASH_TABLES) {
      const f = facts.get(t)!;
      expect({ table: t, equality: f.equality, hasTime: f.hasTime }).toEqual({ table: t, equality: 0, hasTime: false });
    }
    // the kills left changes to replay: every table but the small all_types carries deletion vectors
    for (const t of ['accounts', 'ledger', 'events', 'dups', 'child', 'notes', 'tags']) expect(facts.get(t)!.dv, `${t}: ${JSON.stringify(facts.get(t))}`).toBeGreaterThan(0);
  });

  for (const engine of ENGINES) {
    it(`${engine} reads every table exactly as floe scan does`, async () => {
      const problems: string[] = [];
      for (const t of CRASH_TABLES) {
        const read = await readWith(engine, join(s.warehouse, s.db, t), engine === 'trino' ? trinoEnv : {});
        const verdict = judgeRead(engine, facts.get(t)!, read, scans.get(t)!, `crash lake ${t}`);
        if (verdict.problem !== undefined) problems.push(verdict.problem);
        else if (verdict.cell.result !== 'identical') problems.push(`crash lake ${t}: ${JSON.stringify(verdict.cell)}`);
      }
      expect(problems).toEqual([]);
    });
  }
});

describe.runIf(missing.length > 0 && required)('the engines (FLOE_ENGINES_REQUIRED=1)', () => {
  it('are installed', () => {
    expect.fail(`${missing.join(', ')} not installed in ${ENGINES_HOME}: run npm run engines:install`);
  });
});
