/**
 * Schema changes and restarts in every order, model-based (docs/design.md §3): fast-check generates
 * command sequences — DML on several tables; ALTERs of one to three column changes (ADD with or
 * without a default and AFTER, DROP, RENAME, MODIFY to a wider type); CREATE, DROP, TRUNCATE and
 * RENAME TABLE into and out of the include pattern (`t_…` is captured, `o_…` is not); partitioned
 * (day) and unpartitioned tables — each while `floe run` runs and while it is down, among clean
 * stops, SIGKILLs at random moments, and kills at failpoints (right after a schema-change commit,
 * inside a snapshot chunk, in maintenance's compaction and expiry). A catch-up (and every sequence's
 * end) waits until every captured table's committed offset reaches the server's position and
 * compares each with MySQL, row for row. A failing sequence is shrunk and printed with the
 * statements it ran.
 *
 * Runs against the project's server: MariaDB (`integration`) and Oracle MySQL 8 (`mysql8`,
 * test/mysql8-suites.ts).
 *
 * Budget: CI runs 2 seeds × 5 sequences of up to 14 commands (commands whose precondition fails are
 * left out, so most sequences are shorter; about 70 s per server on the 2-core CI machine). FLOE_MODEL_RUNS=<n> runs n sequences per seed; FLOE_MODEL_SEED=<s> runs seed s
 * alone (the seed and path of a failure are printed: FLOE_MODEL_SEED plus FLOE_MODEL_PATH replay it).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type mysql from 'mysql2/promise';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { compareOffsets, formatOffset } from '../../src/source/mysql/offset/offset.js';
import { createTestDatabase, sharedMysqlConfig } from '../support/shared-mysql.js';
import { sql } from '../source/mysql/binlog/helpers.js';
import { committedOffset, serverPosition } from './support/catch-up.js';
import { FloeProcess } from './support/floe-process.js';
import { writeFloeConfig } from './support/floe-config.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from './support/lake-compare.js';
import { PARTITIONED_NAMES, alter, createTable, dml, isCaptured, renamedName, type ColumnOp, type ShopModel, type TableModel } from './support/model-tables.js';

process.env.TZ ??= 'Asia/Seoul';

const SEEDS = process.env.FLOE_MODEL_SEED ? [Number(process.env.FLOE_MODEL_SEED)] : [20_261_205, 7_919];
const RUNS = Number(process.env.FLOE_MODEL_RUNS ?? 5);
const MAX_COMMANDS = 14;
const JOB = 'model';

interface Model extends ShopModel {
  floe: 'running' | 'down';
}

/** The system under test: the database, floe's config and lake, the floe process (if any). */
interface Real {
  db: string;
  conn: mysql.Connection;
  configPath: string;
  warehouse: string;
  catalog: FileSystemCatalog;
  floe: FloeProcess | undefined;
  /** The process was started with a failpoint that kills it: its SIGKILL is expected. */
  armed: boolean;
  /** Everything the sequence did, for the failure message. */
  journal: string[];
}

/** What floe did in the sequences, counted from its logs (printed at the end: what the budget covered). */
const seen = new Map<string, number>();
const NOTABLE: readonly [string, RegExp][] = [
  ['schema changes applied', /^schema change applied$/],
  ['runs started again from the lake', /^starting again from the lake$/],
  ['runs restarted after a table changed under its snapshot', /^MySQL source failed: .*changed while its snapshot was read/],
  ['snapshots caught up with DDL made while stopped', /a table still in its snapshot changed/],
  ["tables that took today's definition", /changed before any of its rows was committed/],
  ['tables that joined a running session', /^new table captured/],
];

const count = (name: string) => seen.set(name, (seen.get(name) ?? 0) + 1);

function tally(p: FloeProcess, failpoint: boolean): void {
  for (const l of p.logs) {
    const msg = typeof l.msg === 'string' ? l.msg : '';
    for (const [name, re] of NOTABLE) if (re.test(msg)) count(name);
  }
  if (failpoint) count('kills at a failpoint');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cleanup: string[] = [];
let runNumber = 0;

afterAll(async () => {
  for (const p of cleanup) await rm(p, { recursive: true, force: true });
});

// ---- the floe process ----------------------------------------------------------------------------

/**
 * Starts floe and waits until it has taken its signal handlers (its first log line): a SIGTERM in the
 * first moments of a process, before it has loaded anything, ends it by Node's default (nothing of it
 * to stop cleanly yet).
 */
async function start(r: Real, failpoint?: string): Promise<void> {
  const p = (r.floe = new FloeProcess(r.configPath, { env: failpoint ? { FLOE_FAILPOINTS: failpoint } : {} }));
  r.armed = failpoint !== undefined;
  r.journal.push(`floe started${failpoint ? ` (FLOE_FAILPOINTS=${failpoint})` : ''}`);
  await p.waitFor((l) => typeof l.msg === 'string' && l.msg.startsWith('floe run starting'));
}

/** Whether floe is gone; throws when it ended in a way nothing in the sequence asked for. */
function gone(r: Real): boolean {
  const p = r.floe;
  if (!p) return true;
  if (!p.hasExited) return false;
  const exit = p.child.exitCode === null ? { signal: p.child.signalCode } : { code: p.child.exitCode };
  if (r.armed && exit.signal === 'SIGKILL') {
    tally(p, true);
    r.journal.push('floe killed itself at its failpoint');
    r.floe = undefined;
    return true;
  }
  throw new Error(`floe ended by itself (${JSON.stringify(exit)}):\n${p.tail(30)}`);
}

async function stop(r: Real, signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
  if (gone(r)) return;
  const p = r.floe!;
  p.kill(signal);
  const exit = await Promise.race([p.exited, sleep(60_000).then(() => undefined)]);
  if (!exit) {
    p.kill('SIGKILL');
    throw new Error(`floe did not exit within 60 s of ${signal}:\n${p.tail(30)}`);
  }
  if (signal === 'SIGTERM' && !(exit.code === 0 || (r.armed && exit.signal === 'SIGKILL'))) throw new Error(`floe's clean stop ended with ${JSON.stringify(exit)}:\n${p.tail(30)}`);
  r.journal.push(signal === 'SIGTERM' ? 'floe stopped (SIGTERM)' : 'floe killed (SIGKILL)');
  tally(p, false);
  r.floe = undefined;
}

/** Runs floe until every captured table's committed offset reaches the server's position, then compares them with MySQL. */
async function catchUpAndCompare(m: Model, r: Real): Promise<void> {
  if (gone(r)) await start(r);
  const captured = m.tables.filter(isCaptured);
  const target = await serverPosition({ ...sharedMysqlConfig() });
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (gone(r)) await start(r);
    const behind: string[] = [];
    for (const t of captured) {
      const o = await committedOffset(r.catalog, { namespace: [r.db], name: t.name }, JOB);
      if (!o || compareOffsets(o, target) < 0) behind.push(`${t.name} at ${o ? formatOffset(o) : '(nothing streamed)'}`);
    }
    if (behind.length === 0) break;
    if (Date.now() > deadline) throw new Error(`floe did not catch up with ${formatOffset(target)} within 120 s: ${behind.join('; ')}\n${r.floe?.tail(30) ?? ''}`);
    await sleep(200);
  }
  for (const t of captured) {
    const lake = await lakeTableRows(r.catalog, { namespace: [r.db], name: t.name });
    const expected = await mysqlTableRows({ ...sharedMysqlConfig() }, r.db, t.name, lake.columns);
    const diff = multisetDifference(expected, lake.rows, 3);
    if (diff.missing.length || diff.unexpected.length || lake.rows.length !== expected.length) {
      throw new Error(`${t.name}: the lake (${lake.rows.length} rows, columns ${lake.columns.join(', ')}) differs from MySQL (${expected.length} rows): missing ${JSON.stringify(diff.missing)}, unexpected ${JSON.stringify(diff.unexpected)}`);
    }
  }
  r.journal.push(`caught up and equal: ${captured.map((t) => t.name).join(', ')}`);
}

async function execute(r: Real, statements: readonly string[], transaction = false): Promise<void> {
  if (transaction) await r.conn.beginTransaction();
  for (const s of statements) {
    r.journal.push(s.length > 200 ? `${s.slice(0, 200)}…` : s);
    await r.conn.query(s);
  }
  if (transaction) await r.conn.commit();
}

// ---- commands ------------------------------------------------------------------------------------

type Cmd = fc.AsyncCommand<Model, Real>;

const pickTable = (m: Readonly<Model>, slot: number, filter: (t: TableModel) => boolean = () => true): TableModel | undefined => {
  const candidates = m.tables.filter(filter);
  return candidates.length ? candidates[slot % candidates.length] : undefined;
};

/**
 * Whether `t` may leave the include pattern (dropped, renamed out): one captured table stays, since
 * floe refuses to start with none (a configuration error, not a state it streams in).
 */
const mayLeave = (m: Readonly<Model>, t: TableModel | undefined) => t !== undefined && (!isCaptured(t) || m.tables.filter(isCaptured).length > 1);

class Dml implements Cmd {
  constructor(readonly slot: number, readonly seed: number, readonly count: number) {}
  check = (m: Readonly<Model>) => m.tables.length > 0;
  async run(m: Model, r: Real) {
    const t = pickTable(m, this.slot)!;
    await execute(r, dml(t, this.seed, this.count), true);
  }
  toString = () => `dml(${this.slot}, ${this.seed}, ${this.count})`;
}

class Alter implements Cmd {
  constructor(readonly slot: number, readonly ops: ColumnOp[]) {}
  check = (m: Readonly<Model>) => m.tables.length > 0;
  async run(m: Model, r: Real) {
    // mostly a captured table (one outside changes what a rename into the pattern brings)
    const t = (this.slot % 5 === 0 ? undefined : pickTable(m, this.slot, isCaptured)) ?? pickTable(m, this.slot)!;
    await execute(r, [alter(m, t, this.ops)]);
  }
  toString = () => `alter(${this.slot}, ${this.ops.map((o) => `${o.kind}:${o.pick}:${o.type}${o.after ? ':after' : ''}${o.notNull ? ':notnull' : ''}`).join(' ')})`;
}

class Create implements Cmd {
  constructor(readonly captured: boolean, readonly partitioned: boolean, readonly seed: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const { table, statements } = createTable(m, this.captured, this.partitioned, this.seed);
    await execute(r, statements);
    m.tables.push(table);
  }
  toString = () => `create(${this.captured ? 'captured' : 'outside'}${this.partitioned ? ', partitioned' : ''})`;
}

class Drop implements Cmd {
  constructor(readonly slot: number) {}
  check = (m: Readonly<Model>) => mayLeave(m, pickTable(m, this.slot));
  async run(m: Model, r: Real) {
    const t = pickTable(m, this.slot)!;
    await execute(r, [`DROP TABLE ${t.name}`]);
    m.tables.splice(m.tables.indexOf(t), 1);
    if (isCaptured(t)) m.gone.push(t.name);
  }
  toString = () => `drop(${this.slot})`;
}

/** A new table with the name of a captured table that was dropped or renamed away. */
class Recreate implements Cmd {
  constructor(readonly slot: number, readonly seed: number) {}
  check = (m: Readonly<Model>) => m.gone.length > 0;
  async run(m: Model, r: Real) {
    const name = m.gone[this.slot % m.gone.length]!;
    const { table, statements } = createTable(m, true, PARTITIONED_NAMES.includes(name), this.seed, 30, name);
    await execute(r, statements);
    m.tables.push(table);
  }
  toString = () => `recreate(${this.slot})`;
}

class Truncate implements Cmd {
  constructor(readonly slot: number) {}
  check = (m: Readonly<Model>) => m.tables.length > 0;
  async run(m: Model, r: Real) {
    await execute(r, [`TRUNCATE TABLE ${pickTable(m, this.slot)!.name}`]);
  }
  toString = () => `truncate(${this.slot})`;
}

class Rename implements Cmd {
  constructor(readonly slot: number, readonly captured: boolean) {}
  check = (m: Readonly<Model>) => this.captured || mayLeave(m, pickTable(m, this.slot));
  async run(m: Model, r: Real) {
    const t = pickTable(m, this.slot)!;
    const to = renamedName(m, t, this.captured);
    await execute(r, [`RENAME TABLE ${t.name} TO ${to}`]);
    if (isCaptured(t) && !this.captured) m.gone.push(t.name);
    t.name = to;
  }
  toString = () => `rename(${this.slot}, ${this.captured ? 'into the pattern' : 'out of it'})`;
}

class Start implements Cmd {
  constructor(readonly settleMs: number) {}
  check = (m: Readonly<Model>) => m.floe === 'down';
  async run(m: Model, r: Real) {
    await start(r);
    m.floe = 'running';
    await sleep(this.settleMs);
  }
  toString = () => `start(${this.settleMs} ms)`;
}

class Stop implements Cmd {
  check = (m: Readonly<Model>) => m.floe === 'running';
  async run(m: Model, r: Real) {
    await stop(r, 'SIGTERM');
    m.floe = 'down';
  }
  toString = () => 'stop';
}

class Kill implements Cmd {
  constructor(readonly afterMs: number) {}
  check = (m: Readonly<Model>) => m.floe === 'running';
  async run(m: Model, r: Real) {
    await sleep(this.afterMs);
    await stop(r, 'SIGKILL');
    m.floe = 'down';
  }
  toString = () => `kill(after ${this.afterMs} ms)`;
}

const FAILPOINTS = ['after-schema-change-commit', 'snapshot-chunk-read', 'compaction-after-rewrite-files', 'compaction-after-catalog-swap', 'expire-after-commit'] as const;

class KillAtFailpoint implements Cmd {
  constructor(readonly failpoint: (typeof FAILPOINTS)[number], readonly after: number) {}
  check = (m: Readonly<Model>) => m.floe === 'down';
  async run(m: Model, r: Real) {
    await start(r, `${this.failpoint}:${this.after}:exit`);
    m.floe = 'running';
    await sleep(300);
  }
  toString = () => `failpoint(${this.failpoint}:${this.after})`;
}

class CatchUp implements Cmd {
  check = () => true;
  async run(m: Model, r: Real) {
    await catchUpAndCompare(m, r);
    m.floe = 'running';
  }
  toString = () => 'catch-up';
}

const columnOp = fc.record({ kind: fc.constantFrom('add', 'drop', 'rename', 'modify' as const), pick: fc.nat(50), type: fc.nat(20), after: fc.boolean(), notNull: fc.boolean() }) as fc.Arbitrary<ColumnOp>;

const dmlArb = fc.tuple(fc.nat(20), fc.nat(1_000_000), fc.integer({ min: 1, max: 6 })).map(([s, seed, n]) => new Dml(s, seed, n));
const alterArb = fc.tuple(fc.nat(20), fc.array(columnOp, { minLength: 1, maxLength: 3 })).map(([s, ops]) => new Alter(s, ops));

// fc.commands picks among these uniformly: DML and ALTERs are listed three times each
const commandArbs: fc.Arbitrary<Cmd>[] = [
  dmlArb,
  dmlArb,
  dmlArb,
  alterArb,
  alterArb,
  alterArb,
  fc.tuple(fc.boolean(), fc.boolean(), fc.nat(1_000_000)).map(([c, p, seed]) => new Create(c, p, seed)),
  fc.nat(20).map((s) => new Drop(s)),
  fc.tuple(fc.nat(20), fc.nat(1_000_000)).map(([s, seed]) => new Recreate(s, seed)),
  fc.nat(20).map((s) => new Truncate(s)),
  fc.tuple(fc.nat(20), fc.boolean()).map(([s, c]) => new Rename(s, c)),
  fc.integer({ min: 0, max: 1500 }).map((ms) => new Start(ms)),
  fc.constant(new Stop()),
  fc.integer({ min: 0, max: 2500 }).map((ms) => new Kill(ms)),
  fc.tuple(fc.constantFrom(...FAILPOINTS), fc.nat(3)).map(([f, n]) => new KillAtFailpoint(f, n)),
  fc.constant(new CatchUp()),
];

// ---- one sequence --------------------------------------------------------------------------------

async function setUp(): Promise<{ model: Model; real: Real }> {
  const n = runNumber++;
  const db = await createTestDatabase('model');
  const conn = await sql();
  await conn.query(`USE \`${db}\``);
  const warehouse = await mkdtemp(join(tmpdir(), 'floe-model-'));
  cleanup.push(warehouse, `${warehouse}.json`);
  const model: Model = { tables: [], counter: 0, used: new Set(), gone: [], floe: 'down' };
  const real: Real = {
    db,
    conn,
    warehouse,
    catalog: new FileSystemCatalog({ warehouse }),
    configPath: await writeFloeConfig({
      job: JOB,
      warehouse,
      serverId: 60_000 + (process.pid % 500) * 64 + (n % 8) * 8,
      include: [`${db}.t_*`],
      source: { snapshot: { chunkSize: 10, parallelism: 2 } },
      tables: { overrides: Object.fromEntries(PARTITIONED_NAMES.map((name) => [`${db}.${name}`, { partitionBy: ['day(created)'] }])) },
      commit: { intervalMs: 300, idleCheckpoints: 1 },
      maintenance: {
        intervalMs: 1000,
        compaction: { minInputFiles: 3 },
        expireSnapshots: { olderThanMs: 1000, retainLast: 3 },
      },
    }),
    floe: undefined,
    armed: false,
    journal: [],
  };
  // a captured table, a partitioned one, one outside the pattern
  for (const [captured, partitioned] of [[true, false], [true, true], [false, false]] as const) {
    // 300 rows in chunks of 10: a snapshot long enough for statements to land in it
    const { table, statements } = createTable(model, captured, partitioned, n * 7 + model.counter, captured ? 300 : 20);
    await execute(real, statements);
    model.tables.push(table);
  }
  // every sequence starts from a lake that streams: its statements change tables floe holds
  await catchUpAndCompare(model, real);
  model.floe = 'running';
  return { model, real };
}

async function tearDown(real: Real): Promise<void> {
  if (real.floe && !real.floe.hasExited) {
    real.floe.kill('SIGKILL');
    await real.floe.exited;
  }
  await real.conn.query(`DROP DATABASE \`${real.db}\``).catch(() => {});
  await real.conn.end();
}

describe(`schema changes and restarts, model-based (${inject('serverKind')})`, () => {
  it.each(SEEDS)('seed %i: after every catch-up the lake equals MySQL', async (seed) => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commandArbs, { maxCommands: MAX_COMMANDS, size: 'max' }), async (commands) => {
        const { model, real } = await setUp();
        const began = Date.now();
        try {
          await fc.asyncModelRun(() => ({ model, real }), commands);
          await catchUpAndCompare(model, real);
          await stop(real, 'SIGTERM');
          console.log(`sequence of ${[...commands].length} commands, ${real.journal.length} steps, ${Math.round((Date.now() - began) / 1000)} s: ${[...commands].map(String).join(' ')}`);
        } catch (e) {
          throw new Error(`${e instanceof Error ? e.message : String(e)}\n--- what the sequence did (database ${real.db}):\n${real.journal.join('\n')}`, { cause: e });
        } finally {
          await tearDown(real);
        }
      }),
      { seed, numRuns: RUNS, ...(process.env.FLOE_MODEL_PATH ? { path: process.env.FLOE_MODEL_PATH } : {}), verbose: 1 },
    );
    expect(runNumber).toBeGreaterThan(0);
    console.log(`seed ${seed}: ${[...seen].map(([k, v]) => `${k} ×${v}`).join(', ')}`);
  }, 3_600_000);
});
