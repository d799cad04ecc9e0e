/**
 * The benchmark table and its rows: an order-like table of 10 columns (bigint key, ints, decimal,
 * varchar, datetime(6), timestamp(6), json) filled with deterministic pseudo-random values, loaded
 * with `LOAD DATA LOCAL INFILE` from rows generated on the fly (no temporary file), in statements of
 * 250,000 rows, with the binlog off for the loading session when the user may do that (the snapshot
 * reads the table, not the load's binlog).
 */
import { Readable } from 'node:stream';
import mysql from 'mysql2/promise';
import type { MysqlConnectionConfig } from '../src/source/mysql/client.js';
import { prng as seededPrng } from '../src/util/prng.js';

export const TABLE = 'orders';

export const CREATE_TABLE = `CREATE TABLE ${TABLE} (
  id BIGINT NOT NULL PRIMARY KEY,
  customer_id INT NOT NULL,
  quantity SMALLINT NOT NULL,
  status TINYINT NOT NULL,
  amount DECIMAL(12,2) NOT NULL,
  sku VARCHAR(32) NOT NULL,
  note VARCHAR(255) NULL,
  created_at DATETIME(6) NOT NULL,
  updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  attrs JSON NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`;

/** The bench's PRNG: src/util/prng.ts, its seed spread first so that nearby seeds differ (never 0). */
export function prng(seed: number): () => number {
  return seededPrng((seed * 2654435761) >>> 0 || 1);
}

const WORDS = ['express', 'gift', 'fragile', 'leave at door', 'call first', 'weekend', 'office', 'bulk', 'repeat customer', 'promo', 'überweisung', '빠른 배송', 'north', 'south', 'return'];
const COLORS = ['red', 'green', 'blue', 'black', 'white'];
const EPOCH_2020 = Date.UTC(2020, 0, 1) / 1000;
/** created_at spans 5 years (1,826 days): the `day` partitioned benchmark case has that many partitions. */
const FIVE_YEARS = 5 * 365 * 86400 + 86400;

function pad(n: number, w: number): string {
  return String(n).padStart(w, '0');
}

/** 'YYYY-MM-DD HH:MM:SS.ffffff' of epoch seconds (UTC) plus microseconds. */
export function dateTimeText(seconds: number, micros: number): string {
  const d = new Date(seconds * 1000);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)} ${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}.${pad(micros, 6)}`;
}

function note(rand: () => number): string | null {
  if (rand() < 0.3) return null;
  const n = 1 + Math.floor(rand() * 6);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(WORDS[Math.floor(rand() * WORDS.length)]);
  return parts.join(', ');
}

function attrs(rand: () => number): string | null {
  if (rand() < 0.2) return null;
  const tags = rand() < 0.5 ? '["a","b"]' : '[]';
  return `{"color":"${COLORS[Math.floor(rand() * COLORS.length)]}","size":${Math.floor(rand() * 12)},"gift":${rand() < 0.1},"tags":${tags}}`;
}

/** One row's values in the table's column order (null for NULL; times as UTC text). */
export function rowValues(id: number, rand: () => number): (string | number | null)[] {
  const created = EPOCH_2020 + Math.floor(rand() * FIVE_YEARS);
  const updated = created + Math.floor(rand() * 86400 * 30);
  const cents = 1 + Math.floor(rand() * 9_999_999);
  const n = note(rand);
  const a = attrs(rand);
  return [
    id,
    1 + Math.floor(rand() * 200_000),
    1 + Math.floor(rand() * 20),
    Math.floor(rand() * 5),
    `${Math.floor(cents / 100)}.${pad(cents % 100, 2)}`,
    `SKU-${(Math.floor(rand() * 0xffffff)).toString(16).padStart(6, '0')}`,
    n,
    dateTimeText(created, Math.floor(rand() * 1_000_000)),
    dateTimeText(updated, Math.floor(rand() * 1_000_000)),
    a,
  ];
}

/** One row as LOAD DATA text (tab-separated, \N for NULL); the values never hold tabs, newlines or backslashes. */
function rowLine(id: number, rand: () => number): string {
  return rowValues(id, rand)
    .map((v) => (v === null ? '\\N' : v))
    .join('\t');
}

/** Rows `first … first + count - 1` as a stream of LOAD DATA text. */
function rowStream(first: number, count: number, seed: number): Readable {
  const rand = prng(seed + first);
  let next = first;
  const end = first + count;
  return new Readable({
    read() {
      if (next >= end) {
        this.push(null);
        return;
      }
      const stop = Math.min(end, next + 2000);
      let text = '';
      for (; next < stop; next++) text += rowLine(next, rand) + '\n';
      this.push(text);
    },
  });
}

export interface LoadResult {
  rows: number;
  elapsedMs: number;
  /** Whether the load was kept out of the binlog. */
  unlogged: boolean;
  method: 'LOAD DATA LOCAL INFILE' | 'multi-row INSERT';
}

/** Rows `first … first + count - 1` as INSERTs of 1,000 rows (the values of `rowStream`). */
async function insertRows(conn: mysql.Connection, first: number, count: number, seed: number): Promise<number> {
  const text = await new Promise<string>((resolve, reject) => {
    let out = '';
    rowStream(first, count, seed)
      .on('data', (d: string | Buffer) => (out += d.toString()))
      .on('end', () => resolve(out))
      .on('error', reject);
  });
  const lines = text.split('\n').filter((l) => l !== '');
  let affected = 0;
  for (let i = 0; i < lines.length; i += 1000) {
    const values = lines.slice(i, i + 1000).map((l) => l.split('\t').map((v) => (v === '\\N' ? null : v)));
    const [r] = await conn.query(`INSERT INTO ${TABLE} VALUES ?`, [values]);
    affected += (r as mysql.ResultSetHeader).affectedRows;
  }
  return affected;
}

const ROWS_PER_STATEMENT = 250_000;

/** Creates `database`.orders and loads `rows` rows (ids 1 … rows). */
export async function loadTable(connection: MysqlConnectionConfig, database: string, rows: number, seed: number): Promise<LoadResult> {
  const conn = await mysql.createConnection({
    host: connection.host,
    port: connection.port,
    user: connection.user,
    password: connection.password,
    multipleStatements: false,
    infileStreamFactory: () => {
      throw new Error('bench: unexpected LOAD DATA without a stream');
    },
  });
  try {
    await conn.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await conn.query(`CREATE DATABASE \`${database}\``);
    await conn.query(`USE \`${database}\``);
    await conn.query(CREATE_TABLE);
    let unlogged = true;
    try {
      await conn.query('SET SESSION sql_log_bin = 0');
    } catch {
      unlogged = false; // not allowed for this user: the load goes to the binlog too (slower, harmless)
    }
    await conn.query("SET SESSION time_zone = '+00:00'");
    const started = performance.now();
    let loaded = 0;
    let method: LoadResult['method'] = 'LOAD DATA LOCAL INFILE';
    for (let first = 1; first <= rows; first += ROWS_PER_STATEMENT) {
      const count = Math.min(ROWS_PER_STATEMENT, rows - first + 1);
      let affected: number;
      try {
        if (method !== 'LOAD DATA LOCAL INFILE') throw new Error('multi-row INSERTs');
        const [result] = await conn.query({
          sql: `LOAD DATA LOCAL INFILE 'bench-rows' INTO TABLE ${TABLE} CHARACTER SET utf8mb4 FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n'`,
          infileStreamFactory: () => rowStream(first, count, seed),
        } as mysql.QueryOptions);
        affected = (result as mysql.ResultSetHeader).affectedRows;
      } catch (e) {
        // a server with local_infile=OFF (MySQL 8's default): the same rows as multi-row INSERTs
        if (loaded > 0 && method === 'LOAD DATA LOCAL INFILE') throw e;
        method = 'multi-row INSERT';
        affected = await insertRows(conn, first, count, seed);
      }
      if (affected !== count) throw new Error(`bench: ${method} loaded ${affected} rows, expected ${count} (rows ${first}…${first + count - 1})`);
      loaded += affected;
    }
    return { rows: loaded, elapsedMs: performance.now() - started, unlogged, method };
  } finally {
    await conn.end();
  }
}
