/**
 * `floe demo` end to end, as a user runs it: a child process in an empty working directory, no
 * config, and a PATH without the sbin directories (an ordinary user's on Debian). It starts its own
 * server — MariaDB in ./.floe/demo-mysql (`floe demo`), or in the mysql8 project Oracle MySQL 8 in
 * ./.floe/demo-mysql8 (`floe demo --server mysql`) — loads the shop, replicates it into ./warehouse,
 * applies live changes (including an ON DELETE CASCADE), stops, and prints the lake compared row for
 * row with MySQL. A second run reuses the server's data directory and starts the lake over. The lake
 * is then read again here, and `floe status` reports the tables. Asked for a MySQL that is not
 * installed, the demo says where it looked and how to install one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { readTableRows } from '../../src/iceberg/scan/index.js';
import { rowToJson } from '../../src/iceberg/scan/row-json.js';
import { parseJson } from '../../src/util/json.js';
import { runFloe } from '../cli/run-floe.js';
import { serverKind } from '../support/servers.js';

let cwd: string;
// the demo's arguments and data directory for the run's server kind
const mysql = serverKind() === 'mysql';
const demoArgs = mysql ? ['demo', '--server', 'mysql'] : ['demo'];
const demoHome = join('.floe', mysql ? 'demo-mysql8' : 'demo-mysql');

beforeAll(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'floe-demo-'));
});

afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
});

async function lakeRows(table: string): Promise<Record<string, unknown>[]> {
  const catalog = new FileSystemCatalog({ warehouse: join(cwd, 'warehouse'), name: 'floe' });
  try {
    const loaded = await catalog.loadTable({ namespace: ['shop'], name: table });
    const schema = loaded.metadata.schemas.find((s) => s.schemaId === loaded.metadata.currentSchemaId)!;
    return (await readTableRows(loaded)).map((r) => rowToJson(schema, r) as Record<string, unknown>);
  } finally {
    await catalog.close();
  }
}

describe('floe demo', () => {
  it('replicates the sample shop with live changes and prints a lake identical to MySQL, twice', async () => {
    // An ordinary Debian user's PATH has no sbin directory, where the distribution puts mariadbd:
    // the demo must find it there all the same.
    const userPath = (process.env.PATH ?? '')
      .split(delimiter)
      .filter((d) => !/\/sbin\/?$/.test(d))
      .join(delimiter);
    const first = await runFloe(demoArgs, { cwd, timeoutMs: 180_000, env: { PATH: userPath } });
    expect(first.code, `${first.stdout}\n${first.stderr.slice(-4000)}`).toBe(0);
    for (const table of ['shop.customers', 'shop.orders', 'shop.order_items', 'shop.audit_log']) {
      expect(first.stdout).toMatch(new RegExp(`${table.replace('.', '\\.')}\\s+\\d+ rows\\s+✓ same rows as MySQL`));
    }
    expect(first.stdout).toContain('all changes committed to the lake');
    expect(first.stdout).toContain("iceberg_scan('./warehouse/shop/orders')");
    expect(first.stdout).toContain('spark.sql.catalog.floe.type=hadoop');
    expect(first.stdout).toContain('iceberg.catalog.type=rest');
    expect(first.stdout).toContain(mysql ? 'source:    MySQL 8 (mysqld) on 127.0.0.1:' : 'source:    MariaDB (mariadbd) on 127.0.0.1:');
    await access(join(cwd, demoHome, 'data', 'mysql'));
    await access(join(cwd, 'warehouse', 'shop', 'orders', 'metadata', 'version-hint.text'));

    // The second run reuses the server's data directory and recreates the shop and its tables: the
    // lake ends up with the same counts, not twice the rows.
    const second = await runFloe(demoArgs, { cwd, timeoutMs: 180_000 });
    expect(second.code, `${second.stdout}\n${second.stderr.slice(-4000)}`).toBe(0);
    const counts = (text: string) => [...text.matchAll(/^(shop\.\w+)\s+(\d+) rows/gm)].map((m) => `${m[1]}=${m[2]}`);
    expect(counts(second.stdout)).toEqual(counts(first.stdout));
    expect(counts(second.stdout)).toHaveLength(4);
    expect(second.stdout.match(/✓ same rows as MySQL/g)).toHaveLength(4);

    // Read the lake again, here: the changes the demo made are in it, exactly.
    const deleted = /order (\d+) is deleted; its (\d+) items go with it/.exec(second.stdout);
    expect(deleted).not.toBeNull();
    const [, deletedOrder] = deleted!;
    const customers = await lakeRows('customers');
    expect(customers.find((c) => c.id === '18446744073709551615')).toMatchObject({ name: 'Seo-yeon Han', country: 'KR', vip: false });
    const vip = /customer (\d+) becomes VIP/.exec(second.stdout)![1];
    expect(customers.find((c) => c.id === vip)).toMatchObject({ vip: true, email: `vip.${vip}@example.com` });
    const orders = await lakeRows('orders');
    expect(orders.some((o) => String(o.id) === deletedOrder)).toBe(false);
    const items = await lakeRows('order_items');
    expect(items.some((i) => String(i.order_id) === deletedOrder)).toBe(false);
    const newOrder = orders.find((o) => o.customer_id === '18446744073709551615')!;
    expect(newOrder).toMatchObject({ status: 'paid', total: '52.48', currency: 'KRW' });
    expect(items.filter((i) => i.order_id === newOrder.id).map((i) => [i.sku, i.quantity, i.unit_price])).toEqual([
      ['MUG-CER-350', 2, '12.90'],
      ['LMP-DSK-LED', 1, '26.68'],
    ]);
    for (const shipped of /orders ([\d, ]+) ship/.exec(second.stdout)![1]!.split(', ')) {
      expect(orders.find((o) => String(o.id) === shipped)).toMatchObject({ status: 'shipped' });
    }

    // floe status in the same directory, with no config: the demo's job and warehouse are the defaults.
    const status = await runFloe(['status', '--no-source'], { cwd });
    expect(status.code, status.stderr).toBe(0);
    const report = parseJson(status.stdout) as { tables: { table: string; phase: string; checkpointId: number }[] };
    expect(report.tables.map((t) => [t.table, t.phase])).toEqual([
      ['shop.audit_log', 'streaming'],
      ['shop.customers', 'streaming'],
      ['shop.order_items', 'streaming'],
      ['shop.orders', 'streaming'],
    ]);
    expect(report.tables.every((t) => t.checkpointId > 0)).toBe(true);
  }, 400_000);

  it('--server mysql without a MySQL installation: exits 2 naming where it looked and how to install one', async () => {
    const missing = join(cwd, 'no-mysql-here');
    const run = await runFloe(['demo', '--server', 'mysql'], { cwd, env: { FLOE_MYSQL_HOME: missing } });
    expect(run.code, run.stdout + run.stderr).toBe(2);
    expect(run.stderr).toContain(`demo.mysql: expected MySQL's bin/mysqld in FLOE_MYSQL_HOME (${missing}), found none; run \`bash .ci/install-mysql8\``);
    expect(run.stderr).toContain('or set FLOE_MYSQL_HOME to a MySQL 8 installation directory');
  });
});
