/**
 * The changes `floe demo` makes to the shop while floe streams the binlog: inserts, updates, deletes
 * and a cascading delete, one transaction each — what a real shop does in its first minute.
 *
 * After each transaction the binlog end is read, so the demo knows, per table, which offset floe's
 * commits must reach before the lake holds every change (`targets`).
 */
import type { MysqlClient } from '../source/mysql/index.js';
import { quoteString } from '../source/mysql/index.js';
import type { ServerDialect } from '../source/mysql/index.js';
import type { BinlogOffset } from '../source/mysql/index.js';
import { readWatermark } from '../source/mysql/index.js';
import { FloeError } from '../util/errors.js';
import type { ShopTable } from './sample-shop.js';

interface AppliedChange {
  description: string;
  tables: ShopTable[];
}

export interface LiveChanges {
  applied: AppliedChange[];
  /** Per touched table: the binlog end right after its last change. */
  targets: Map<ShopTable, BinlogOffset>;
  /** Facts the report (and the tests) check in the lake. */
  facts: {
    newCustomerId: bigint;
    newOrderId: bigint;
    shippedOrderIds: bigint[];
    deletedOrderId: bigint;
    deletedItemCount: number;
    vipCustomerId: bigint;
  };
}

/** The largest BIGINT UNSIGNED: the new customer's id, exact only as a BigInt. */
const MAX_UNSIGNED_BIGINT = 18446744073709551615n;

export async function applyLiveChanges(client: MysqlClient, dialect: ServerDialect): Promise<LiveChanges> {
  const applied: AppliedChange[] = [];
  const targets = new Map<ShopTable, BinlogOffset>();
  const transaction = async (description: string, tables: ShopTable[], statements: string[]): Promise<void> => {
    await client.query('START TRANSACTION');
    try {
      for (const s of statements) await client.query(s);
      await client.query('COMMIT');
    } catch (e) {
      // the demo's own error is the one to report; the server rolls back when the connection ends
      await client.query('ROLLBACK').catch(() => undefined);
      throw e;
    }
    const end = await readWatermark(client, dialect);
    for (const t of tables) targets.set(t, end);
    applied.push({ description, tables });
  };
  const one = async (sql: string): Promise<Record<string, unknown>> => {
    const [row] = await client.query(sql);
    if (!row) throw new FloeError('demo', 'internal', `the demo expected a row from: ${sql}`);
    return row;
  };
  const audit = (action: string, detail: object): string =>
    `INSERT INTO shop.audit_log (at, actor, action, detail) VALUES (NOW(6), 'floe-demo', ${quoteString(action)}, ${quoteString(JSON.stringify(detail))})`;

  // 1. A new customer (id 2^64 − 1) signs up and orders two items.
  const newCustomerId = MAX_UNSIGNED_BIGINT;
  await transaction('a new customer (id 18446744073709551615) signs up and orders 2 items', ['customers', 'orders', 'order_items', 'audit_log'], [
    `INSERT INTO shop.customers (id, email, name, country, created_at) VALUES (${newCustomerId}, 'seo-yeon.han@example.com', 'Seo-yeon Han', 'KR', NOW(6))`,
    `INSERT INTO shop.orders (customer_id, status, total, currency, ordered_at, shipping, note)
       VALUES (${newCustomerId}, 'paid', 52.48, 'KRW', NOW(6), '{"city": "Busan", "zip": "48058", "express": true}', '첫 주문입니다')`,
    `SET @order_id = LAST_INSERT_ID()`,
    `INSERT INTO shop.order_items (order_id, line_no, sku, quantity, unit_price) VALUES (@order_id, 1, 'MUG-CER-350', 2, 12.90), (@order_id, 2, 'LMP-DSK-LED', 1, 26.68)`,
    audit('signup', { customer: newCustomerId.toString() }),
  ]);
  const newOrderId = BigInt(String((await one(`SELECT MAX(id) AS id FROM shop.orders WHERE customer_id = ${newCustomerId}`)).id));

  // 2. Three paid orders ship.
  const shipped = await client.query(`SELECT id FROM shop.orders WHERE status = 'paid' AND id <> ${newOrderId} ORDER BY id LIMIT 3`);
  const shippedOrderIds = shipped.map((r) => BigInt(String(r.id)));
  if (shippedOrderIds.length > 0) {
    await transaction(`orders ${shippedOrderIds.join(', ')} ship`, ['orders', 'audit_log'], [
      `UPDATE shop.orders SET status = 'shipped' WHERE id IN (${shippedOrderIds.join(', ')})`,
      audit('ship', { orders: shippedOrderIds.map(String) }),
    ]);
  }

  // 3. A customer becomes VIP and changes their e-mail address.
  const vipCustomerId = BigInt(String((await one(`SELECT MIN(id) AS id FROM shop.customers WHERE vip = 0`)).id));
  await transaction(`customer ${vipCustomerId} becomes VIP and changes e-mail`, ['customers'], [
    `UPDATE shop.customers SET vip = 1, loyalty_points = loyalty_points + 500, email = 'vip.${vipCustomerId}@example.com' WHERE id = ${vipCustomerId}`,
  ]);

  // 4. A basket changes: one more unit of an item.
  const item = await one(`SELECT order_id, line_no FROM shop.order_items WHERE order_id <> ${newOrderId} ORDER BY order_id DESC, line_no LIMIT 1`);
  await transaction(`order ${String(item.order_id)} line ${String(item.line_no)}: quantity + 1`, ['order_items', 'orders'], [
    `UPDATE shop.order_items SET quantity = quantity + 1 WHERE order_id = ${String(item.order_id)} AND line_no = ${String(item.line_no)}`,
    `UPDATE shop.orders SET total = (SELECT SUM(quantity * unit_price) FROM shop.order_items WHERE order_id = ${String(item.order_id)}) WHERE id = ${String(item.order_id)}`,
  ]);

  // 5. A pending order with several items is deleted; ON DELETE CASCADE removes its items, and the
  // server logs those deletes as ordinary row events.
  const victim = await one(
    `SELECT o.id, COUNT(*) AS n FROM shop.orders o JOIN shop.order_items i ON i.order_id = o.id
      WHERE o.status IN ('pending', 'cancelled') GROUP BY o.id HAVING COUNT(*) >= 2 ORDER BY o.id LIMIT 1`,
  );
  const deletedOrderId = BigInt(String(victim.id));
  const deletedItemCount = Number(victim.n);
  await transaction(`order ${deletedOrderId} is deleted; its ${deletedItemCount} items go with it (ON DELETE CASCADE)`, ['orders', 'order_items', 'audit_log'], [
    `DELETE FROM shop.orders WHERE id = ${deletedOrderId}`,
    audit('delete-order', { order: deletedOrderId.toString() }),
  ]);

  return { applied, targets, facts: { newCustomerId, newOrderId, shippedOrderIds, deletedOrderId, deletedItemCount, vipCustomerId } };
}
