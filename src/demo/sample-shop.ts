/**
 * The demo's source data: a small shop in database `shop`, generated deterministically (same rows on
 * every run) and chosen to exercise what replication gets wrong most easily:
 *
 * - `customers`: BIGINT UNSIGNED keys near 2^64 (not representable as a double), DATETIME(6),
 *   TINYINT(1) as boolean, CHAR, a column default;
 * - `orders`: DECIMAL(12,2), DATETIME(6) (wall clock), TIMESTAMP(6) (an instant), JSON, ENUM, a
 *   nullable TEXT with non-ASCII text, an FK to customers;
 * - `order_items`: a composite key (order_id, line_no), FK to orders ON DELETE CASCADE;
 * - `audit_log`: no primary key at all.
 */
import type { MysqlClient } from '../source/mysql/index.js';
import { quoteIdent, quoteString } from '../source/mysql/index.js';
import { prng as random } from '../util/prng.js';

export const SHOP_DATABASE = 'shop';
export const SHOP_TABLES = ['customers', 'orders', 'order_items', 'audit_log'] as const;
export type ShopTable = (typeof SHOP_TABLES)[number];

/** Customers get ids counting up from here: 2^64 − 1615, exact only as BigInt. */
const FIRST_CUSTOMER_ID = 18446744073709550000n;

const DDL = [
  `CREATE TABLE customers (
     id BIGINT UNSIGNED NOT NULL PRIMARY KEY,
     email VARCHAR(255) NOT NULL UNIQUE,
     name VARCHAR(100) NOT NULL,
     country CHAR(2) NOT NULL,
     vip TINYINT(1) NOT NULL DEFAULT 0,
     loyalty_points INT NOT NULL DEFAULT 0,
     created_at DATETIME(6) NOT NULL
   ) ENGINE=InnoDB`,
  `CREATE TABLE orders (
     id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
     customer_id BIGINT UNSIGNED NOT NULL,
     status ENUM('pending','paid','shipped','delivered','cancelled') NOT NULL DEFAULT 'pending',
     total DECIMAL(12,2) NOT NULL,
     currency CHAR(3) NOT NULL DEFAULT 'EUR',
     ordered_at DATETIME(6) NOT NULL,
     updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
     shipping JSON NOT NULL,
     note TEXT NULL,
     CONSTRAINT fk_orders_customer FOREIGN KEY (customer_id) REFERENCES customers (id)
   ) ENGINE=InnoDB AUTO_INCREMENT=1001`,
  `CREATE TABLE order_items (
     order_id BIGINT NOT NULL,
     line_no SMALLINT UNSIGNED NOT NULL,
     sku VARCHAR(32) NOT NULL,
     quantity SMALLINT UNSIGNED NOT NULL,
     unit_price DECIMAL(10,2) NOT NULL,
     PRIMARY KEY (order_id, line_no),
     CONSTRAINT fk_items_order FOREIGN KEY (order_id) REFERENCES orders (id) ON DELETE CASCADE
   ) ENGINE=InnoDB`,
  `CREATE TABLE audit_log (
     at TIMESTAMP(6) NOT NULL,
     actor VARCHAR(64) NOT NULL,
     action VARCHAR(32) NOT NULL,
     detail JSON NULL
   ) ENGINE=InnoDB`,
];

const FIRST_NAMES = ['Ana', 'Bjorn', 'Chloé', 'Dae-jung', 'Emeka', 'Farah', 'Giulia', 'Hiro', 'Ingrid', 'Jonas', 'Kavya', 'Luis', 'Mina', 'Noah', 'Oksana', 'Pedro', 'Quinn', 'Rania', 'Sven', 'Tomás', 'Uma', 'Viktor', 'Wen', 'Yara', 'Zoë'];
const LAST_NAMES = ['Almeida', 'Berg', 'Chen', 'Dubois', 'Eze', 'Fischer', 'García', 'Haddad', 'Ito', 'Jensen', 'Kim', 'López', 'Müller', 'Nakamura', 'Olsen', 'Park', 'Rossi', 'Silva', 'Tanaka', 'Weber'];
const COUNTRIES = ['KR', 'DE', 'FR', 'US', 'JP', 'BR', 'IN', 'SE', 'NG', 'IT'];
const CITIES: Record<string, string> = { KR: 'Seoul', DE: 'Berlin', FR: 'Lyon', US: 'Austin', JP: 'Osaka', BR: 'Recife', IN: 'Pune', SE: 'Malmö', NG: 'Lagos', IT: 'Torino' };
const PRODUCTS: [string, number][] = [
  ['MUG-CER-350', 1290], ['TEE-ORG-M', 2450], ['BAG-CNV-01', 3900], ['PEN-BRS-07', 850], ['NBK-A5-DOT', 1575],
  ['LMP-DSK-LED', 4999], ['CUP-TRV-500', 2199], ['SCK-WOL-42', 1100], ['CAP-BAS-BLK', 1999], ['PLT-CER-26', 1650],
];
const STATUSES = ['pending', 'paid', 'paid', 'shipped', 'shipped', 'delivered', 'delivered', 'delivered', 'cancelled'] as const;
const NOTES = [null, null, null, 'Leave at the door', '배송 전 연락 주세요', 'Gift wrap, please 🎁', 'Ring twice'];

export interface SeedSizes {
  customers: number;
  orders: number;
  auditRows: number;
}

const DEFAULT_SEED_SIZES: SeedSizes = { customers: 120, orders: 400, auditRows: 60 };


/** `YYYY-MM-DD HH:MM:SS.ffffff` for a UTC epoch in microseconds (no local time zone involved). */
function sqlDateTime(epochMicros: bigint): string {
  const ms = Number(epochMicros / 1000n);
  const micros = String(epochMicros % 1_000_000n).padStart(6, '0');
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')}.${micros}`;
}

function money(cents: number): string {
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

function values(rows: string[][]): string {
  return rows.map((r) => `(${r.join(', ')})`).join(',\n');
}

/**
 * (Re)creates database `shop` with its four tables and the seed rows. The session must use
 * `time_zone = '+00:00'` (floe's sessions do), so TIMESTAMP literals are UTC.
 */
export async function loadSampleShop(client: MysqlClient, sizes: SeedSizes = DEFAULT_SEED_SIZES): Promise<Record<ShopTable, number>> {
  const next = random(20250301);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const db = quoteIdent(SHOP_DATABASE);
  await client.query(`DROP DATABASE IF EXISTS ${db}`);
  await client.query(`CREATE DATABASE ${db} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci`);
  await client.query(`USE ${db}`);
  for (const ddl of DDL) await client.query(ddl);

  const base = 1_740_787_200_000_000n; // 2025-03-01T00:00:00Z in microseconds
  const customers: string[][] = [];
  const customerIds: bigint[] = [];
  const countries: string[] = [];
  for (let i = 0; i < sizes.customers; i++) {
    const id = FIRST_CUSTOMER_ID + BigInt(i * 7);
    const first = pick(FIRST_NAMES);
    const last = pick(LAST_NAMES);
    const country = pick(COUNTRIES);
    customerIds.push(id);
    countries.push(country);
    const created = base + BigInt(Math.floor(next() * 90 * 86_400)) * 1_000_000n + BigInt(Math.floor(next() * 1_000_000));
    customers.push([
      id.toString(),
      quoteString(`${first}.${last}.${i}@example.com`.toLowerCase().normalize('NFD').replace(/[\u0300-\u036f]/g, '').replace(/[^a-z0-9.@-]/g, '')),
      quoteString(`${first} ${last}`),
      quoteString(country),
      next() < 0.1 ? '1' : '0',
      String(Math.floor(next() * 5000)),
      quoteString(sqlDateTime(created)),
    ]);
  }
  await client.query(`INSERT INTO customers (id, email, name, country, vip, loyalty_points, created_at) VALUES\n${values(customers)}`);

  const orders: string[][] = [];
  const items: string[][] = [];
  for (let o = 0; o < sizes.orders; o++) {
    const orderId = 1001 + o;
    const c = Math.floor(next() * customerIds.length);
    const lines = 1 + Math.floor(next() * 4);
    let totalCents = 0;
    for (let line = 1; line <= lines; line++) {
      const [sku, price] = pick(PRODUCTS);
      const quantity = 1 + Math.floor(next() * 3);
      totalCents += price * quantity;
      items.push([String(orderId), String(line), quoteString(sku), String(quantity), money(price)]);
    }
    const ordered = base + BigInt(Math.floor(next() * 120 * 86_400)) * 1_000_000n + BigInt(Math.floor(next() * 1_000_000));
    const updated = ordered + BigInt(Math.floor(next() * 3 * 86_400)) * 1_000_000n;
    const shipping = { city: CITIES[countries[c]!], zip: String(10000 + Math.floor(next() * 89999)), express: next() < 0.2 };
    orders.push([
      String(orderId),
      customerIds[c]!.toString(),
      quoteString(pick(STATUSES)),
      money(totalCents),
      quoteString(countries[c] === 'US' ? 'USD' : countries[c] === 'KR' ? 'KRW' : 'EUR'),
      quoteString(sqlDateTime(ordered)),
      quoteString(sqlDateTime(updated)),
      quoteString(JSON.stringify(shipping)),
      (() => {
        const note = pick(NOTES);
        return note === null ? 'NULL' : quoteString(note);
      })(),
    ]);
  }
  await client.query(`INSERT INTO orders (id, customer_id, status, total, currency, ordered_at, updated_at, shipping, note) VALUES\n${values(orders)}`);
  await client.query(`INSERT INTO order_items (order_id, line_no, sku, quantity, unit_price) VALUES\n${values(items)}`);

  const audit: string[][] = [];
  for (let a = 0; a < sizes.auditRows; a++) {
    const at = base + BigInt(a * 3_600) * 1_000_000n + BigInt(Math.floor(next() * 1_000_000));
    audit.push([quoteString(sqlDateTime(at)), quoteString(pick(['system', 'support', 'warehouse'])), quoteString(pick(['login', 'refund', 'restock', 'export'])), quoteString(JSON.stringify({ seq: a }))]);
  }
  await client.query(`INSERT INTO audit_log (at, actor, action, detail) VALUES\n${values(audit)}`);
  return { customers: customers.length, orders: orders.length, order_items: items.length, audit_log: audit.length };
}

/** The tables of database `shop` other than the demo's (the demo refuses to replace such a database). */
export async function foreignShopTables(client: MysqlClient): Promise<string[]> {
  const rows = await client.query<{ t: string }>(`SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = ${quoteString(SHOP_DATABASE)}`);
  const ours = new Set<string>(SHOP_TABLES);
  return rows.map((r) => String(r.t)).filter((t) => !ours.has(t));
}
