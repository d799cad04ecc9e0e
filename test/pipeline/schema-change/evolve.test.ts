/**
 * `schemaChanges: evolve` through the real pipeline (harness MariaDB binlog → floe → local Iceberg
 * warehouse, format v3): ADD COLUMN with a literal default makes the rows written before read as the
 * default (v3 initial-default) while new rows carry their values; RENAME keeps the field id; MODIFY
 * widens (int → bigint); DROP removes the column; statements without schema effect pass; TRUNCATE
 * empties the lake table; DROP TABLE ends its capture (the lake table keeps its last state); an incompatible MODIFY stops the run with an error naming the statement,
 * the table and what to do, everything before it committed. The lake equals MySQL after each step.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalogTable } from '../../../src/iceberg/table/index.js';
import { typeToString } from '../../../src/iceberg/spec/types.js';
import { openHarness, type Harness } from './pipeline-harness.js';

process.env.TZ ??= 'Asia/Seoul';

let h: Harness;

beforeAll(async () => {
  h = await openHarness('ddl_evolve', 'ddl-evolve', ['items', 'logs'], [
    'CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, qty INT, price FLOAT, note VARCHAR(10))',
    `INSERT INTO items VALUES ${Array.from({ length: 120 }, (_, i) => `(${i}, 'item${i}', ${i * 3}, ${i}.5, ${i % 4 === 0 ? 'NULL' : `'n${i}'`})`).join(', ')}`,
    'CREATE TABLE logs (id INT PRIMARY KEY, msg VARCHAR(20))',
    `INSERT INTO logs VALUES ${Array.from({ length: 30 }, (_, i) => `(${i}, 'm${i}')`).join(', ')}`,
  ]);
});

afterAll(async () => {
  await h?.close();
});

async function fields(table: string) {
  const t = await loadCatalogTable(h.catalog, { namespace: [h.db], name: table });
  return t.metadata.schemas.find((s) => s.schemaId === t.metadata.currentSchemaId)!.fields;
}

describe('schemaChanges: evolve', () => {
  it('applies ADD (v3 defaults), RENAME, widening MODIFY, DROP and TRUNCATE, and refuses a narrowing MODIFY', async () => {
    const run = h.start();
    await h.untilStreaming(run);
    const before = await fields('items');

    // ADD COLUMN: a literal default and an implicit NOT NULL default for the rows written before
    // (a TIMESTAMP literal default is read in the session's time zone: +09:00 here)
    await h.exec("SET SESSION time_zone = '+09:00'");
    await h.exec("ALTER TABLE items ADD COLUMN color VARCHAR(10) NOT NULL DEFAULT 'red' AFTER name, ADD COLUMN rank INT NOT NULL, ADD COLUMN seen TIMESTAMP NULL DEFAULT '2020-01-01 09:00:00'");
    await h.exec("SET SESSION time_zone = '+00:00'");
    await h.exec("INSERT INTO items (id, name, color, rank, qty) VALUES (500, 'new', 'blue', 7, 1), (501, 'dflt', DEFAULT, 2, 2)");
    await h.exec("UPDATE items SET qty = 999, color = 'green' WHERE id = 1");
    await h.exec('CREATE INDEX ix_qty ON items (qty)'); // no schema effect
    await h.exec('ALTER TABLE items COMMENT = "inventory", ENGINE = InnoDB'); // no schema effect
    await h.catchUp(run, ['items', 'logs']);
    await h.expectLakeEqualsMysql('items');
    let f = await fields('items');
    expect(f.find((x) => x.name === 'color')).toMatchObject({ required: true, initialDefault: 'red', writeDefault: 'red', type: { kind: 'string' } });
    expect(f.find((x) => x.name === 'rank')).toMatchObject({ required: true, initialDefault: 0, writeDefault: 0 });
    expect(f.find((x) => x.name === 'seen')).toMatchObject({ required: false, initialDefault: 1577836800000000n }); // 2020-01-01T00:00:00Z
    expect(run.sink.received.filter((n) => n.type === 'schema-change-applied').map((n) => (n as { changes: string[] }).changes)).toEqual([['add color', 'add rank', 'add seen']]);

    // RENAME keeps the field id, MODIFY widens int → long, DROP removes, varchar length = no change
    await h.exec('ALTER TABLE items RENAME COLUMN name TO title, MODIFY qty BIGINT, DROP COLUMN price, MODIFY note VARCHAR(60)');
    await h.exec("INSERT INTO items (id, title, color, rank, qty, note) VALUES (502, 'wide', 'pink', 3, 9000000000, 'a longer note than before')");
    await h.exec("UPDATE items SET title = 'renamed' WHERE id = 2");
    await h.exec('DELETE FROM items WHERE id = 3');
    await h.catchUp(run, ['items', 'logs']);
    await h.expectLakeEqualsMysql('items');
    f = await fields('items');
    const id = (name: string, list = before) => list.find((x) => x.name === name)!.id;
    expect(id('title', f)).toBe(id('name'));
    expect(f.find((x) => x.name === 'qty')).toMatchObject({ id: id('qty') });
    expect(typeToString(f.find((x) => x.name === 'qty')!.type)).toBe('long');
    expect(f.map((x) => x.name)).not.toContain('price');

    // TRUNCATE: the lake table is emptied by one snapshot that also stamps its offset; later rows arrive as usual
    await h.exec('TRUNCATE TABLE logs');
    await h.exec("INSERT INTO logs VALUES (1000, 'after')");
    await h.catchUp(run, ['items', 'logs']);
    await h.expectLakeEqualsMysql('logs');
    const logs = await loadCatalogTable(h.catalog, { namespace: [h.db], name: 'logs' });
    expect(logs.metadata.snapshots.some((s) => s.summary.operation === 'delete' && s.summary['floe.checkpoint-id'] !== undefined && s.summary['total-records'] === '0')).toBe(true);

    // DROP TABLE: no longer captured, its lake table keeps its last state, the others stream on
    await h.exec('DROP TABLE logs');
    await h.exec("INSERT INTO items (id, title, color, rank, qty) VALUES (499, 'after drop', 'x', 1, 5)");
    await h.catchUp(run, ['items']);
    await h.expectLakeEqualsMysql('items');
    expect(run.sink.received.some((n) => n.type === 'schema-change-applied' && (n as { table: string }).table.endsWith('.logs') && /table dropped/.test(String((n as { changes: string[] }).changes)))).toBe(true);
    expect((await (await import('../../e2e/support/lake-compare.js')).lakeTableRows(h.catalog, { namespace: [h.db], name: 'logs' })).rows).toEqual(['N1000|"after"']);

    // an incompatible change: the run fails, naming the statement, the table and what to do
    await h.exec("INSERT INTO items (id, title, color, rank, qty) VALUES (503, 'last before', 'x', 1, 5)");
    await h.exec('ALTER TABLE items MODIFY rank SMALLINT NOT NULL');
    await h.exec("INSERT INTO items (id, title, color, rank, qty) VALUES (504, 'after', 'x', 1, 5)");
    const result = await run.result;
    expect(result.reason).toBe('failed');
    expect(String(result.error)).toMatch(/ALTER TABLE items MODIFY rank SMALLINT NOT NULL/);
    expect(String(result.error)).toMatch(/captured table .*\.items/);
    expect(String(result.error)).toMatch(/narrows the column.*re-snapshot the table/);
    expect(run.sink.received.some((n) => n.type === 'schema-change-refused')).toBe(true);
    // everything before the refused DDL is in the lake, nothing after it
    const { lakeTableRows } = await import('../../e2e/support/lake-compare.js');
    const rows = (await lakeTableRows(h.catalog, { namespace: [h.db], name: 'items' })).rows;
    expect(rows.some((r) => r.includes('"last before"'))).toBe(true);
    expect(rows.some((r) => r.includes('"after"'))).toBe(false);
  });
});
