/**
 * DDL as the binlog delivers it (real server): the statement parsed and applied to the captured
 * definition gives the column list the following rows carry (also equal to information_schema's),
 * the binlog decoding switched to it decodes them, and the cross-check against the logged table map
 * (binlog_row_metadata=FULL) stops with a clear error when a mapping misses a logged column.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { BinlogReader } from '../../../../src/source/mysql/binlog/binlog-reader.js';
import { MappedTablesDecoding } from '../../../../src/source/mysql/binlog/binlog-decoding.js';
import { connectMysql, type MysqlClient } from '../../../../src/source/mysql/client.js';
import { applyDdl } from '../../../../src/source/mysql/ddl/ddl-apply.js';
import { parseDdl } from '../../../../src/source/mysql/ddl/ddl-parser.js';
import { detectDialect, type ServerDialect } from '../../../../src/source/mysql/dialect.js';
import type { BinlogEvent } from '../../../../src/source/mysql/events.js';
import { captureTableSchema, type TableSchema } from '../../../../src/source/mysql/schema/table-schema.js';
import { mapTable } from '../../../../src/source/mysql/schema/type-mapping.js';
import { readWatermark } from '../../../../src/source/mysql/snapshot/watermark.js';
import { openTestDatabase } from '../../../support/shared-mysql.js';
import { replicaId, sourceConfig } from '../binlog/helpers.js';

let db: string;
let conn: mysql.Connection;
let client: MysqlClient;
let dialect: ServerDialect;

beforeAll(async () => {
  ({ db, conn } = await openTestDatabase('ddl_binlog'));
  client = await connectMysql(sourceConfig());
  dialect = await detectDialect(client);
});

afterAll(async () => {
  await conn?.end();
  await client?.close();
});

async function collect(reader: BinlogReader, n: number): Promise<BinlogEvent[]> {
  const out: BinlogEvent[] = [];
  for await (const e of reader) {
    if (e.kind === 'progress') continue;
    out.push(e);
    if (out.length === n) break;
  }
  await reader.close();
  return out;
}

describe('DDL from the binlog', () => {
  it('parses the logged statement into the layout of the rows after it', async () => {
    await conn.query("CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(10), gone INT, old_name CHAR(2) NOT NULL DEFAULT 'xy')");
    const table = { database: db, table: 't' };
    const before: TableSchema = await captureTableSchema(client, table, dialect.flavor);
    const decoding = new MappedTablesDecoding([mapTable(before)]);
    const start = await readWatermark(client, dialect);
    await conn.query("ALTER TABLE t ADD COLUMN b INT NOT NULL DEFAULT 3 AFTER id, DROP COLUMN gone, CHANGE old_name new_name VARCHAR(5) /* note */ NOT NULL DEFAULT 'xy', MODIFY a VARCHAR(40)");
    await conn.query("INSERT INTO t (id, b, a, new_name) VALUES (1, 7, 'x', 'zz')");
    const reader = new BinlogReader({ connection: sourceConfig(), serverId: replicaId(), start: { kind: 'offset', offset: start }, tables: [table], decoding, dialect });
    const it = reader[Symbol.asyncIterator]();
    const first = (await it.next()).value as BinlogEvent;
    expect(first.kind).toBe('ddl');
    if (first.kind !== 'ddl') throw new Error();
    expect(first.database).toBe(db);
    const [effect] = applyDdl(parseDdl(first.statement, first.database), { flavor: dialect.flavor, tables: new Map([[`${db}.t`, before]]), isCaptured: () => true, statement: first.statement });
    if (effect.kind !== 'alter') throw new Error(`expected alter, got ${effect.kind}`);
    expect(effect.after.columns.map((c) => c.name)).toEqual(['id', 'b', 'a', 'new_name']);
    // the parse agrees with the server's own description of the new table
    const server = await captureTableSchema(client, table, dialect.flavor);
    expect(effect.after.columns.map((c) => [c.name, c.dataType, c.nullable, c.default.kind])).toEqual(server.columns.map((c) => [c.name, c.dataType, c.nullable, c.default.kind]));
    expect(effect.after.columns.map((c) => c.columnType.replace(/^int\(11\)$/, 'int'))).toEqual(server.columns.map((c) => c.columnType.replace(/^int\(11\)$/, 'int')));
    decoding.set(mapTable(effect.after), { verify: true });
    const second = (await it.next()).value as BinlogEvent;
    await reader.close();
    expect(second.kind === 'transaction' && second.changes.map((c) => c.after)).toEqual([[1, 7, 'x', 'zz']]);
  });

  it('refuses rows whose logged columns differ from the mapping set after a DDL, naming both', async () => {
    await conn.query('CREATE TABLE u (id INT PRIMARY KEY, a INT)');
    const table = { database: db, table: 'u' };
    const before = await captureTableSchema(client, table, dialect.flavor);
    const decoding = new MappedTablesDecoding([mapTable(before)]);
    const start = await readWatermark(client, dialect);
    await conn.query('ALTER TABLE u ADD COLUMN extra INT');
    await conn.query('INSERT INTO u VALUES (1, 2, 3)');
    decoding.set(mapTable(before), { verify: true }); // as if the ADD COLUMN had been missed
    const reader = new BinlogReader({ connection: sourceConfig(), serverId: replicaId(), start: { kind: 'offset', offset: start }, tables: [table], decoding, dialect });
    await expect(collect(reader, 2)).rejects.toThrow(/expected the binlog rows to carry the columns \(id, a\), but they carry \(id, a, extra\).*re-snapshot the table/);
  });
});
