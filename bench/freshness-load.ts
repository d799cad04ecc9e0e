/**
 * The freshness benchmark's load (bench/freshness.ts): a steady rate of mixed DML — inserts,
 * updates and deletes, one insert and one delete for every three updates, so the table keeps its
 * size — in transactions of a few changes, from several connections, each owning its own keys (no
 * lock waits between them). Run as a child process (`fork`), so that the parent's polling and
 * sampling do not delay the moment a COMMIT is seen to return.
 *
 * Each transaction is one round trip: `START TRANSACTION; INSERT …; UPDATE …; DELETE …; COMMIT;
 * SELECT @@last_gtid` (multi-statement). Its commit time is `Date.now()` when that round trip
 * returns, taken client-side: MariaDB's binlog timestamps are whole seconds, too coarse for
 * latencies of a few hundred milliseconds. `@@last_gtid` (MariaDB) names the GTID the server gave
 * the transaction; its sequence number orders it against the GTID position floe stamps on each
 * commit, which is how the parent finds the lake snapshot that first holds it.
 *
 * Configuration: FLOE_FRESHNESS_LOAD (JSON, `LoadConfig`). Messages to the parent:
 *   {type:'ready'}                                  every connection open
 *   {type:'committed', seq[], atMs[], changes[]}    transactions committed since the last message (every 100 ms)
 *   {type:'done', inserts, updates, deletes, transactions, maxBehindMs, error?}
 * From the parent: {type:'start'} starts the schedule, {type:'stop'} ends it after the transactions in flight.
 */
import mysql from 'mysql2/promise';
import { prng, rowValues, TABLE } from './dataset.js';

export interface LoadConfig {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  /** Ids 1 … rows exist when the load starts. */
  rows: number;
  changesPerSecond: number;
  changesPerTransaction: number;
  writers: number;
  seed: number;
}

export type LoadMessage =
  | { type: 'ready' }
  | { type: 'committed'; seq: number[]; atMs: number[]; changes: number[] }
  | { type: 'done'; inserts: number; updates: number; deletes: number; transactions: number; maxBehindMs: number; error?: string };

/** The kinds of a writer's successive changes: 20% inserts, 60% updates, 20% deletes. */
const PATTERN = ['insert', 'update', 'update', 'update', 'delete'] as const;

/** One transaction's changes: the ids inserted, updated and deleted. */
export interface MixedTransaction {
  inserts: number[];
  updates: number[];
  deletes: number[];
}

/**
 * The keys one writer owns and changes: ids `first, first + stride, …` up to `rows` exist at the
 * start; new ids continue the same progression past `rows`, so writers never touch each other's rows.
 */
export class WriterKeys {
  private readonly live: number[] = [];
  private nextId: number;
  private changeIndex = 0;

  constructor(
    first: number,
    private readonly stride: number,
    rows: number,
    private readonly rand: () => number,
  ) {
    let id = first;
    for (; id <= rows; id += stride) this.live.push(id);
    this.nextId = id;
  }

  get liveCount(): number {
    return this.live.length;
  }

  /**
   * The next `n` changes in the pattern. Updates and deletes take distinct live rows (not the rows
   * this transaction inserts); a delete that finds no live row left becomes an insert.
   */
  next(n: number): MixedTransaction {
    const t: MixedTransaction = { inserts: [], updates: [], deletes: [] };
    const taken = new Set<number>();
    const pick = (): number | undefined => {
      if (taken.size >= this.live.length) return undefined;
      for (;;) {
        const i = Math.floor(this.rand() * this.live.length);
        const id = this.live[i]!;
        if (!taken.has(id)) {
          taken.add(id);
          return id;
        }
      }
    };
    for (let k = 0; k < n; k++) {
      const kind = PATTERN[this.changeIndex++ % PATTERN.length];
      const id = kind === 'insert' ? undefined : pick();
      if (id === undefined) t.inserts.push(this.take());
      else if (kind === 'update') t.updates.push(id);
      else t.deletes.push(id);
    }
    if (t.deletes.length > 0) {
      const gone = new Set(t.deletes);
      for (let i = this.live.length - 1; i >= 0; i--) {
        if (!gone.has(this.live[i]!)) continue;
        this.live[i] = this.live[this.live.length - 1]!;
        this.live.pop();
      }
    }
    for (const id of t.inserts) this.live.push(id);
    return t;
  }

  private take(): number {
    const id = this.nextId;
    this.nextId += this.stride;
    return id;
  }
}

/** The transaction as one multi-statement round trip, ending with the GTID it was given. */
export function transactionSql(t: MixedTransaction, rand: () => number, note: string): string {
  const parts = ['START TRANSACTION'];
  if (t.inserts.length > 0) parts.push(`INSERT INTO ${TABLE} VALUES ${t.inserts.map((id) => `(${rowValues(id, rand).map((v) => mysql.escape(v)).join(',')})`).join(',')}`);
  if (t.updates.length > 0) {
    parts.push(
      `UPDATE ${TABLE} SET quantity = quantity % 20 + 1, status = (status + 1) % 5, amount = amount + 0.01, note = ${mysql.escape(note)}, updated_at = CURRENT_TIMESTAMP(6) WHERE id IN (${t.updates.join(',')})`,
    );
  }
  if (t.deletes.length > 0) parts.push(`DELETE FROM ${TABLE} WHERE id IN (${t.deletes.join(',')})`);
  parts.push('COMMIT', 'SELECT @@last_gtid AS g');
  return parts.join(';\n');
}

/** The sequence number of a MariaDB GTID "domain-server-seq" of domain 0 (the private server's only one). */
export function gtidSequence(gtid: string): number {
  const m = /^0-\d+-(\d+)$/.exec(gtid);
  if (!m) throw new Error(`bench:freshness: expected a MariaDB GTID of domain 0 ("0-<server>-<seq>") from @@last_gtid, found ${JSON.stringify(gtid)}; the load needs MariaDB with the binlog on`);
  return Number(m[1]);
}

function send(m: LoadMessage): void {
  process.send?.(m);
}

async function main(): Promise<void> {
  const c = JSON.parse(process.env.FLOE_FRESHNESS_LOAD ?? '{}') as LoadConfig;
  const conns = await Promise.all(
    Array.from({ length: c.writers }, () => mysql.createConnection({ host: c.host, port: c.port, user: c.user, password: c.password, database: c.database, multipleStatements: true })),
  );
  for (const conn of conns) await conn.query("SET SESSION time_zone = '+00:00'");
  let stopping = false;
  let started!: () => void;
  const start = new Promise<void>((r) => (started = r));
  process.on('message', (m: { type?: string }) => {
    if (m?.type === 'start') started();
    if (m?.type === 'stop') {
      stopping = true;
      started();
    }
  });
  send({ type: 'ready' });
  await start;
  const totals = { inserts: 0, updates: 0, deletes: 0, transactions: 0, maxBehindMs: 0 };
  let batch: { seq: number[]; atMs: number[]; changes: number[] } = { seq: [], atMs: [], changes: [] };
  const flush = () => {
    if (batch.seq.length === 0) return;
    send({ type: 'committed', ...batch });
    batch = { seq: [], atMs: [], changes: [] };
  };
  const flusher = setInterval(flush, 100);
  const txPerSecondEach = c.changesPerSecond / c.changesPerTransaction / c.writers;
  const writer = async (w: number) => {
    const conn = conns[w]!;
    const rand = prng(c.seed * 104_729 + w);
    const keys = new WriterKeys(1 + w, c.writers, c.rows, rand);
    const t0 = performance.now();
    for (let k = 0; !stopping; k++) {
      // keep to the schedule: this writer's k-th transaction is due at k / rate seconds; a writer
      // that fell behind (a slow server) sends at once until it is back on schedule
      const wait = t0 + (k * 1000) / txPerSecondEach - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      else totals.maxBehindMs = Math.max(totals.maxBehindMs, -wait);
      if (stopping) break;
      const t = keys.next(c.changesPerTransaction);
      const [results] = await conn.query(transactionSql(t, rand, `fresh ${w}.${k}`));
      const atMs = Date.now();
      const r = results as (mysql.ResultSetHeader | { g: string }[])[];
      let i = 1;
      if (t.inserts.length > 0) expectRows(r[i++], 'affectedRows', t.inserts.length, 'an INSERT');
      if (t.updates.length > 0) expectRows(r[i++], 'changedRows', t.updates.length, 'an UPDATE');
      if (t.deletes.length > 0) expectRows(r[i++], 'affectedRows', t.deletes.length, 'a DELETE');
      const gtid = (r.at(-1) as { g: string }[])[0]?.g ?? '';
      batch.seq.push(gtidSequence(gtid));
      batch.atMs.push(atMs);
      batch.changes.push(t.inserts.length + t.updates.length + t.deletes.length);
      totals.inserts += t.inserts.length;
      totals.updates += t.updates.length;
      totals.deletes += t.deletes.length;
      totals.transactions++;
    }
  };
  try {
    await Promise.all(conns.map((_, w) => writer(w)));
    flush();
    send({ type: 'done', ...totals });
  } finally {
    clearInterval(flusher);
    await Promise.all(conns.map((conn) => conn.end().catch(() => {})));
  }
}

function expectRows(result: unknown, field: 'affectedRows' | 'changedRows', expected: number, what: string): void {
  const found = (result as mysql.ResultSetHeader)[field];
  if (found !== expected) throw new Error(`bench:freshness: ${what} of the load changed ${found} rows, expected ${expected}: the load's keys are out of step with the table`);
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  main()
    .catch((e: unknown) => {
      send({ type: 'done', inserts: 0, updates: 0, deletes: 0, transactions: 0, maxBehindMs: 0, error: e instanceof Error ? e.message : String(e) });
      process.exitCode = 1;
    })
    .finally(() => process.disconnect?.());
}
