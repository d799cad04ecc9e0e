/**
 * The partitioned variant of the crash test: two tables partitioned by a fine transform and a hash,
 * and a random writer that moves rows between partitions.
 *
 * - `orders_day` (BIGINT key) → Iceberg partitioned by day(placed): ~300 days, so every snapshot chunk
 *   and many transactions touch many partitions. Updates change `placed` (the row moves to another
 *   partition), change the key, or only the amount/note; deletes.
 * - `items_bucket` (INT key) → partitioned by bucket(8, id): key changes move rows between buckets.
 *
 * The DDL the test runs while floe streams (`PARTITIONED_DDL`) adds a column with a default to
 * `orders_day` and widens a column of `items_bucket` (int → bigint, a legal Iceberg promotion); every
 * statement of the writer names its columns, so it works before and after, and after the DDL it also
 * writes the new column.
 */
import type mysql from 'mysql2/promise';
import { RandomTransactionWriter } from '../../support/random-writer.js';

export const PARTITIONED_TABLES = ['orders_day', 'items_bucket'] as const;

export const PARTITIONED_OVERRIDES = (db: string) => ({
  [`${db}.orders_day`]: { partitionBy: ['day(placed)'] },
  [`${db}.items_bucket`]: { partitionBy: ['bucket(8, id)'] },
});

export const PARTITIONED_DDL = [
  "ALTER TABLE orders_day ADD COLUMN channel VARCHAR(10) NOT NULL DEFAULT 'web'",
  'ALTER TABLE items_bucket MODIFY qty BIGINT NOT NULL',
];

const SIZES = { orders: 4000, items: 3000 };
const DAYS = 300;

function placed(n: number): string {
  const d = new Date(Date.UTC(2023, 0, 1) + (n % DAYS) * 86_400_000);
  return `${d.toISOString().slice(0, 10)} ${String(n % 24).padStart(2, '0')}:${String(n % 60).padStart(2, '0')}:0${n % 10}.${String(n % 1_000_000).padStart(6, '0')}`;
}

export async function createPartitionedCrashSchema(conn: mysql.Connection): Promise<void> {
  await conn.query(`CREATE TABLE orders_day (id BIGINT PRIMARY KEY, placed DATETIME(6) NOT NULL, amount DECIMAL(12,2) NOT NULL, note VARCHAR(40))`);
  await conn.query(`CREATE TABLE items_bucket (id INT PRIMARY KEY, shop VARCHAR(20) NOT NULL, qty INT NOT NULL, at TIMESTAMP(6) NULL)`);
  const batch = async (table: string, rows: string[]) => {
    for (let i = 0; i < rows.length; i += 1000) await conn.query(`INSERT INTO ${table} VALUES ${rows.slice(i, i + 1000).join(', ')}`);
  };
  // keys spread over the days: a chunk of consecutive keys touches ~a chunk's worth of partitions
  await batch('orders_day', Array.from({ length: SIZES.orders }, (_, i) => `(${i + 1}, '${placed((i * 7919) % 100_003)}', ${((i * 37) % 100000) / 100}, ${i % 4 === 0 ? 'NULL' : `'n${i}'`})`));
  await batch('items_bucket', Array.from({ length: SIZES.items }, (_, i) => `(${i + 1}, 'shop${i % 17}', ${i % 50}, ${i % 5 === 0 ? 'NULL' : `'2024-03-0${1 + (i % 9)} 0${i % 10}:00:00.${String(i).padStart(6, '0')}'`})`));
}

export class PartitionedRandomWriter extends RandomTransactionWriter {
  /** Set once the test ran PARTITIONED_DDL: statements then write the new column too. */
  afterDdl = false;
  private next = { order: SIZES.orders + 1, item: SIZES.items + 1 };

  constructor(conn: mysql.Connection, random: () => number, pauseMs = 8) {
    super(conn, random, pauseMs);
  }

  protected statement(): string {
    return this.random() < 0.6 ? this.orders() : this.items();
  }

  private orders(): string {
    const op = this.int(10);
    const id = 1 + this.int(this.next.order - 1);
    const channel = this.afterDdl ? `, channel = '${['web', 'app', 'shop'][this.int(3)]}'` : '';
    if (op < 3) {
      const n = this.next.order++;
      return this.afterDdl && this.int(2) === 0
        ? `INSERT INTO orders_day (id, placed, amount, note, channel) VALUES (${n}, '${placed(this.int(100_000))}', ${this.int(1_000_000) / 100}, 'ins', 'app')`
        : `INSERT INTO orders_day (id, placed, amount, note) VALUES (${n}, '${placed(this.int(100_000))}', ${this.int(1_000_000) / 100}, ${this.int(3) === 0 ? 'NULL' : "'ins'"})`;
    }
    if (op < 5) return `UPDATE orders_day SET placed = '${placed(this.int(100_000))}'${channel} WHERE id = ${id}`; // moves to another day
    if (op < 7) return `UPDATE orders_day SET amount = amount + ${this.int(1000) / 100}, note = ${this.int(4) === 0 ? 'NULL' : `'u${this.int(100)}'`}${channel} WHERE id = ${id}`;
    if (op < 8) return `UPDATE orders_day SET id = ${this.next.order++} WHERE id = ${id}`; // key change
    return `DELETE FROM orders_day WHERE id = ${id}`;
  }

  private items(): string {
    const op = this.int(10);
    const id = 1 + this.int(this.next.item - 1);
    if (op < 3) return `INSERT INTO items_bucket (id, shop, qty, at) VALUES (${this.next.item++}, 'shop${this.int(17)}', ${this.afterDdl ? 3_000_000_000 + this.int(1000) : this.int(50)}, ${this.int(4) === 0 ? 'NULL' : `'2025-0${1 + this.int(9)}-0${1 + this.int(9)} 01:02:03.${this.int(999999)}'`})`;
    if (op < 6) return `UPDATE items_bucket SET qty = qty + 1, at = ${this.int(3) === 0 ? 'NULL' : 'at'} WHERE id = ${id}`;
    if (op < 8) return `UPDATE items_bucket SET id = ${this.next.item++} WHERE id = ${id}`; // moves to another bucket
    return `DELETE FROM items_bucket WHERE id = ${id}`;
  }
}

/**
 * The wide fan-out: `events_day`, 3,000 rows over ~2,800 days, partitioned by day(created_at) — nearly
 * one partition per row, so a snapshot writes ~2,800 files, and a checkpoint of a few chunks hundreds.
 */
export const FANOUT_TABLE = 'events_day';
const FANOUT_ROWS = 3000;
const FANOUT_DAYS = 2800;

function fanoutDay(n: number): string {
  const d = new Date(Date.UTC(2017, 0, 1) + (n % FANOUT_DAYS) * 86_400_000 + (n % 86_400) * 1000);
  return `${d.toISOString().slice(0, 19).replace('T', ' ')}.${String(n % 1_000_000).padStart(6, '0')}`;
}

export async function createFanoutSchema(conn: mysql.Connection): Promise<void> {
  await conn.query(`CREATE TABLE ${FANOUT_TABLE} (id INT PRIMARY KEY, created_at DATETIME(6) NOT NULL, v VARCHAR(40), n INT)`);
  // keys in day order: consecutive chunks cover consecutive days
  const rows = Array.from({ length: FANOUT_ROWS }, (_, i) => `(${i}, '${fanoutDay(Math.floor((i * FANOUT_DAYS) / FANOUT_ROWS))}', ${i % 5 === 0 ? 'NULL' : `'v${i}'`}, ${i % 97})`);
  for (let i = 0; i < rows.length; i += 1000) await conn.query(`INSERT INTO ${FANOUT_TABLE} VALUES ${rows.slice(i, i + 1000).join(', ')}`);
}

/** A light writer over `events_day`: rows moved to other days, inserted, deleted. */
export class FanoutWriter {
  private stopped = false;
  private running: Promise<void> | undefined;
  transactions = 0;
  readonly failures: string[] = [];
  private next = FANOUT_ROWS;

  constructor(
    private readonly conn: mysql.Connection,
    private readonly random: () => number,
    private readonly pauseMs = 20,
  ) {}

  start(): void {
    this.running = this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  private int(n: number): number {
    return Math.floor(this.random() * n);
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const op = this.int(10);
      const id = this.int(this.next);
      const statement =
        op < 4
          ? `UPDATE ${FANOUT_TABLE} SET created_at = '${fanoutDay(this.int(100_000))}', n = n + 1 WHERE id = ${id}`
          : op < 7
            ? `INSERT INTO ${FANOUT_TABLE} VALUES (${this.next++}, '${fanoutDay(this.int(100_000))}', 'ins', ${this.int(100)})`
            : op < 9
              ? `UPDATE ${FANOUT_TABLE} SET v = ${this.int(3) === 0 ? 'NULL' : `'u${this.int(1000)}'`} WHERE id = ${id}`
              : `DELETE FROM ${FANOUT_TABLE} WHERE id = ${id}`;
      try {
        await this.conn.query(statement);
        this.transactions++;
      } catch (e) {
        this.failures.push(String((e as Error).message));
      }
      await new Promise((r) => setTimeout(r, this.pauseMs));
    }
  }
}
