/**
 * Foreign-key discovery on the real server (information_schema REFERENTIAL_CONSTRAINTS +
 * KEY_COLUMN_USAGE), the cascade plan (rules from the binlog, rules by the keys of removed rows) with its warnings, and the synthetic deletes the expander adds
 * to transactions (order, positions, NULL keys, multi-level rules).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { CascadeExpander } from '../../../src/source/mysql/binlog/cascade.js';
import { connectMysql, type MysqlClient } from '../../../src/source/mysql/client.js';
import { detectDialect } from '../../../src/source/mysql/dialect.js';
import type { TransactionEvent } from '../../../src/source/mysql/events.js';
import { discoverForeignKeys, keyCascadeTriggers, planCascades } from '../../../src/source/mysql/schema/foreign-keys.js';
import { captureTableSchemas, tableKey } from '../../../src/source/mysql/schema/table-schema.js';
import { mapTable, type MappedTable } from '../../../src/source/mysql/schema/type-mapping.js';
import { openTestDatabase, sharedMysqlConfig } from '../../support/shared-mysql.js';

let db: string;
let conn: mysql.Connection;
let client: MysqlClient;
let mapped: Map<string, MappedTable>;

beforeAll(async () => {
  ({ db, conn } = await openTestDatabase('fk_plan'));
  for (const s of [
    'CREATE TABLE p (id INT PRIMARY KEY, code CHAR(3) NOT NULL, UNIQUE KEY (code))',
    'CREATE TABLE c (id INT PRIMARY KEY, pid INT, pcode CHAR(3), CONSTRAINT c_p FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE, CONSTRAINT c_code FOREIGN KEY (pcode) REFERENCES p (code) ON UPDATE CASCADE)',
    'CREATE TABLE s (id INT PRIMARY KEY, pid INT, CONSTRAINT s_p FOREIGN KEY (pid) REFERENCES p (id) ON DELETE SET NULL)',
    'CREATE TABLE tree (id INT PRIMARY KEY, parent INT, CONSTRAINT tree_up FOREIGN KEY (parent) REFERENCES tree (id) ON DELETE CASCADE)',
    'CREATE TABLE comp (a INT, b INT, PRIMARY KEY (a, b))',
    'CREATE TABLE compc (id INT PRIMARY KEY, a INT, b INT, CONSTRAINT cc FOREIGN KEY (a, b) REFERENCES comp (a, b) ON DELETE CASCADE)',
    'CREATE TABLE g (id INT PRIMARY KEY, cid INT, CONSTRAINT g_c FOREIGN KEY (cid) REFERENCES c (id) ON DELETE CASCADE)',
    'CREATE TABLE kl (a INT, pid INT, UNIQUE KEY (a), CONSTRAINT kl_p FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE)',
    'CREATE TABLE klg (id INT PRIMARY KEY, a INT, CONSTRAINT klg_kl FOREIGN KEY (a) REFERENCES kl (a) ON DELETE CASCADE)',
    'CREATE TABLE orphan_parent (id INT PRIMARY KEY)',
    'CREATE TABLE orphan_child (id INT PRIMARY KEY, pid INT, CONSTRAINT oc FOREIGN KEY (pid) REFERENCES orphan_parent (id) ON DELETE CASCADE)',
  ]) {
    await conn.query(s);
  }
  client = await connectMysql({ ...sharedMysqlConfig() });
  const dialect = await detectDialect(client);
  const ids = ['p', 'c', 'g', 'kl', 'klg', 's', 'tree', 'comp', 'compc', 'orphan_child'].map((table) => ({ database: db, table }));
  const schemas = await captureTableSchemas(client, ids, dialect.flavor);
  mapped = new Map([...schemas].map(([k, s]) => [k, mapTable(s)]));
});

afterAll(async () => {
  await conn?.end();
  await client?.close();
});

describe('foreign keys', () => {
  it('discovers constraints with their columns and rules', async () => {
    const fks = await discoverForeignKeys(client, [db]);
    const byName = new Map(fks.map((f) => [f.name, f]));
    expect(byName.get('c_p')).toEqual({ name: 'c_p', child: { database: db, table: 'c' }, childColumns: ['pid'], parent: { database: db, table: 'p' }, parentColumns: ['id'], onDelete: 'CASCADE', onUpdate: 'RESTRICT' });
    expect(byName.get('cc')).toMatchObject({ childColumns: ['a', 'b'], parentColumns: ['a', 'b'], onDelete: 'CASCADE' });
    expect(byName.get('c_code')).toMatchObject({ onDelete: 'RESTRICT', onUpdate: 'CASCADE' });
    expect(byName.get('s_p')).toMatchObject({ onDelete: 'SET NULL' });
  });

  it('plans the cascades it reproduces and warns about the rest', async () => {
    const plan = planCascades(await discoverForeignKeys(client, [db]), mapped);
    expect(plan.rules.map((r) => `${r.trigger.table}(${r.triggerColumns}) > ${r.child.table}(${r.childColumns}) via ${r.via.join('>')}`).sort()).toEqual([
      'c(id) > g(cid) via g_c',
      'comp(a,b) > compc(a,b) via cc',
      'kl(a) > klg(a) via klg_kl',
      'p(id) > c(pid) via c_p',
      'p(id) > kl(pid) via kl_p',
      'tree(id) > tree(parent) via tree_up',
    ]);
    // below the first level, rows removed by a cascade cascade on by the values they held (a keyless child's too)
    expect(plan.keyRules.map((r) => `${r.parent.table}(${r.parentColumns}) > ${r.child.table}(${r.childColumns}) via ${r.via.join('>')}`).sort()).toEqual([
      'c(id) > g(cid) via g_c',
      'kl(a) > klg(a) via klg_kl',
      'tree(id) > tree(parent) via tree_up',
    ]);
    const w = plan.warnings.join('\n');
    expect(w).toMatch(/ON UPDATE CASCADE .*\.c\(pcode\) REFERENCES .*\.p\(code\) \[c_code\]: .*will diverge when a referenced key changes/);
    expect(w).toMatch(/ON DELETE SET NULL .*\.s\(pid\) .*\[s_p\]: .*will diverge/);
    expect(w).toMatch(/\[oc\]: the parent table is not captured/);
    expect(w).not.toMatch(/\[tree_up\]|\[g_c\]|\[klg_kl\]/);
    // what floe verify must take as removing rows it cannot name: the deletes that start each key cascade
    const via = (table: string) => keyCascadeTriggers(plan, `${db}.${table}`).map((t) => `${t.trigger.table} via ${t.via.join('>')}`).sort();
    expect({ g: via('g'), klg: via('klg'), tree: via('tree'), c: via('c') }).toEqual({ g: ['p via c_p>g_c'], klg: ['p via kl_p>klg_kl'], tree: ['tree via tree_up>tree_up'], c: [] });
  });

  it('expands parent deletes into child deletes after the parent change, skipping NULL keys', () => {
    const plan = planCascades(
      [
        { name: 'c_p', child: { database: db, table: 'c' }, childColumns: ['pid'], parent: { database: db, table: 'p' }, parentColumns: ['id'], onDelete: 'CASCADE', onUpdate: 'RESTRICT' },
        { name: 'cc', child: { database: db, table: 'compc' }, childColumns: ['a', 'b'], parent: { database: db, table: 'comp' }, parentColumns: ['a', 'b'], onDelete: 'CASCADE', onUpdate: 'RESTRICT' },
        // as if c.pcode cascaded from p.code: a NULL code references nothing
        { name: 'by_code', child: { database: db, table: 'c' }, childColumns: ['pcode'], parent: { database: db, table: 'p' }, parentColumns: ['code'], onDelete: 'CASCADE', onUpdate: 'RESTRICT' },
      ],
      mapped,
    );
    const x = new CascadeExpander(plan.rules, (k) => mapped.get(k));
    const pos = (i: number) => ({ file: 'binlog.000001', commitPosition: 100, eventIndex: i });
    const t: TransactionEvent = {
      kind: 'transaction',
      position: pos(9),
      offset: { file: 'binlog.000001', position: 100 },
      timestampMs: 0,
      changes: [
        { table: { database: db, table: 'p' }, op: 'insert', after: [9, 'nin'], position: pos(0) },
        { table: { database: db, table: 'p' }, op: 'delete', before: [1, null], position: pos(1) },
        { table: { database: db, table: 'comp' }, op: 'delete', before: [5, 6], position: pos(2) },
        { table: { database: db, table: 'p' }, op: 'update', before: [2, 'two'], after: [2, 'TWO'], position: pos(3) },
      ],
    };
    const out = x.expand(t);
    expect(out.changes.map((c) => (c.op === 'delete-matching' ? `dm ${c.table.table} ${c.columns}=${c.values} @${c.position.eventIndex} by ${c.cause.table.table}` : `${c.op} ${c.table.table}`))).toEqual([
      'insert p',
      'delete p',
      `dm c pid=1 @1 by p`, // no delete by code: the deleted row's code is NULL
      'delete comp',
      `dm compc a,b=5,6 @2 by comp`,
      'update p',
    ]);
    // a transaction without trigger deletes is returned as is
    const both = x.expand({ ...t, changes: [{ table: { database: db, table: 'p' }, op: 'delete', before: [7, 'sev'], position: pos(0) }] });
    expect(both.changes.filter((c) => c.op === 'delete-matching').map((c) => `${c.columns}=${c.values}`)).toEqual(['pid=7', 'pcode=sev']);
    const quiet: TransactionEvent = { ...t, changes: [t.changes[0]] };
    expect(x.expand(quiet)).toBe(quiet);
    expect(tableKey(out.changes[2].table)).toBe(`${db}.c`);
  });
});
