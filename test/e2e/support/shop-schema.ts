/**
 * A small shop for the schema-change restart tests (ddl-restarts.test.ts): five tables and a writer
 * that keeps ~150 transactions a second going over all of them, written so that every statement
 * works before and after `SHOP_DDL` — the three ALTERs keep each table's column count, inserts of
 * the renamed / widened tables are positional, the others name only columns every version has.
 *
 * - `orders`: `DROP COLUMN inserted_at, ADD COLUMN region … AFTER status` (same count, new layout);
 * - `items`: `CHANGE qty quantity BIGINT` (a rename and INT → BIGINT);
 * - `payments`: `DECIMAL(10,2)` → `DECIMAL(14,2)`;
 * - `customers`, `audit`: only DML; `audit` starts with 20,000 rows, so that a snapshot in small
 *   chunks spends its first seconds on it (it sorts first).
 *
 * MySQL is the truth: the writer tracks nothing, and a statement that hits no row is as good as any.
 */
import type mysql from 'mysql2/promise';
import { RandomTransactionWriter } from '../../support/random-writer.js';
import { prng } from '../../../src/util/prng.js';

export const SHOP_TABLES = ['audit', 'customers', 'items', 'orders', 'payments'] as const;

export const SHOP_SCHEMA: readonly string[] = [
  'CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT NOT NULL, status VARCHAR(10) NOT NULL, inserted_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), amount DECIMAL(10,2), note VARCHAR(30))',
  'CREATE TABLE items (id INT PRIMARY KEY, order_id INT NOT NULL, qty INT NOT NULL, label VARCHAR(20))',
  'CREATE TABLE payments (id INT PRIMARY KEY, order_id INT NOT NULL, total DECIMAL(10,2) NOT NULL, paid TINYINT(1) NOT NULL DEFAULT 0)',
  'CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(30) NOT NULL, score INT)',
  'CREATE TABLE audit (id BIGINT AUTO_INCREMENT PRIMARY KEY, kind VARCHAR(10) NOT NULL, n INT)',
  ...[0, 1].map((b) => `INSERT INTO orders (id, customer_id, status, inserted_at, amount, note) VALUES ${Array.from({ length: 500 }, (_, i) => `(${b * 500 + i}, ${i % 50}, 'new', '2024-05-0${1 + (i % 9)} 10:00:00.${String(i % 1000).padStart(3, '0')}', ${i}.25, ${i % 3 === 0 ? 'NULL' : `'n${i}'`})`).join(', ')}`),
  `INSERT INTO items VALUES ${Array.from({ length: 600 }, (_, i) => `(${i}, ${i % 1000}, ${i % 17}, 'l${i}')`).join(', ')}`,
  `INSERT INTO payments VALUES ${Array.from({ length: 400 }, (_, i) => `(${i}, ${i}, ${i * 3}.50, ${i % 2})`).join(', ')}`,
  `INSERT INTO customers VALUES ${Array.from({ length: 50 }, (_, i) => `(${i}, 'c${i}', ${i % 7 === 0 ? 'NULL' : i})`).join(', ')}`,
  ...Array.from({ length: 20 }, () => `INSERT INTO audit (kind, n) VALUES ${Array.from({ length: 1000 }, (_, i) => `('seed', ${i})`).join(', ')}`),
];

/** Tables `SHOP_DDL` alters. */
export const SHOP_ALTERED = ['orders', 'items', 'payments'] as const;

export const SHOP_DDL: readonly string[] = [
  "ALTER TABLE orders DROP COLUMN inserted_at, ADD COLUMN region CHAR(2) NOT NULL DEFAULT 'KR' AFTER status",
  'ALTER TABLE items CHANGE COLUMN qty quantity BIGINT NOT NULL',
  'ALTER TABLE payments MODIFY total DECIMAL(14,2) NOT NULL',
];

export class ShopWriter extends RandomTransactionWriter {
  /** Only these tables are written (default: all). */
  only: ReadonlySet<string> | undefined;
  private next = { order: 1000, item: 600, payment: 400, customer: 50 };

  constructor(conn: mysql.Connection, seed: number, pauseMs = 5) {
    super(conn, prng(seed), pauseMs);
  }

  protected statement(): string {
    for (;;) {
      const r = this.random();
      const table = r < 0.3 ? 'orders' : r < 0.5 ? 'items' : r < 0.7 ? 'payments' : r < 0.85 ? 'customers' : 'audit';
      if (!this.only || this.only.has(table)) return this.statementOf(table);
    }
  }

  private statementOf(table: string): string {
    const op = this.int(10);
    if (table === 'orders') {
      const id = this.int(this.next.order);
      if (op < 3) return `INSERT INTO orders (id, customer_id, status, amount, note) VALUES (${this.next.order++}, ${this.int(60)}, 'new', ${this.int(100000) / 100}, 'ins')`;
      if (op < 8) return `UPDATE orders SET amount = ${this.int(100000) / 100}, status = '${['paid', 'sent', 'done'][this.int(3)]}', note = ${this.int(4) === 0 ? 'NULL' : `'u${this.int(100)}'`} WHERE id = ${id}`;
      return `DELETE FROM orders WHERE id = ${id}`;
    }
    if (table === 'items') {
      const id = this.int(this.next.item);
      if (op < 3) return `INSERT INTO items VALUES (${this.next.item++}, ${this.int(this.next.order)}, ${this.int(50)}, 'new')`;
      if (op < 8) return `UPDATE items SET label = '${['a', 'b', 'c'][this.int(3)]}${this.int(100)}' WHERE id = ${id}`;
      return `DELETE FROM items WHERE id = ${id}`;
    }
    if (table === 'payments') {
      const id = this.int(this.next.payment);
      if (op < 3) return `INSERT INTO payments VALUES (${this.next.payment++}, ${this.int(this.next.order)}, ${this.int(1000000) / 100}, 0)`;
      if (op < 8) return `UPDATE payments SET paid = 1 - paid WHERE id = ${id}`;
      return `DELETE FROM payments WHERE id = ${id}`;
    }
    if (table === 'customers') {
      const id = this.int(this.next.customer);
      if (op < 2) return `INSERT INTO customers VALUES (${this.next.customer++}, 'new', ${this.int(100)})`;
      return `UPDATE customers SET score = ${this.int(3) === 0 ? 'NULL' : this.int(1000)} WHERE id = ${id}`;
    }
    if (op < 8) return `INSERT INTO audit (kind, n) VALUES ('${['view', 'buy'][this.int(2)]}', ${this.int(1000)})`;
    return `DELETE FROM audit ORDER BY id LIMIT 1`;
  }
}
