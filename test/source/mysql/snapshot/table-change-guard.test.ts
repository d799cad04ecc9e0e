/**
 * The snapshot's guard against a DDL while a table is read (table-change-guard.ts), on the harness
 * server: a table whose column types hold spaces and commas of their own (`tinyint unsigned`, enum
 * and set labels with ', ' and ' ') passes chunk after chunk while nothing changes, and fails with
 * the retryable error once a DDL adds a column.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { createTestDatabase } from '../../../support/shared-mysql.js';
import { sourceConfig, sql } from '../binlog/helpers.js';
import { connectMysql, type MysqlClient } from '../../../../src/source/mysql/client.js';
import { detectDialect } from '../../../../src/source/mysql/dialect.js';
import { captureTableSchema } from '../../../../src/source/mysql/schema/table-schema.js';
import { mapTable } from '../../../../src/source/mysql/schema/type-mapping.js';
import { TableChangeGuard } from '../../../../src/source/mysql/snapshot/table-change-guard.js';
import { FloeError } from '../../../../src/util/errors.js';

let db: string;
let conn: mysql.Connection;
let client: MysqlClient;

beforeAll(async () => {
  db = await createTestDatabase('change_guard');
  conn = await sql();
  await conn.query(`CREATE TABLE \`${db}\`.spaced (id INT PRIMARY KEY, u TINYINT UNSIGNED, big BIGINT UNSIGNED, e ENUM('a', 'b, c', 'x y'), s SET('p q', 'r'), d DECIMAL(10,2))`);
  client = await connectMysql(sourceConfig());
});

afterAll(async () => {
  await client?.close();
  await conn?.end();
});

describe('the snapshot guard against a DDL while a table is read', () => {
  it('passes a table whose column types hold spaces and commas, and fails once a column is added', async () => {
    const dialect = await detectDialect(client);
    const table = mapTable(await captureTableSchema(client, { database: db, table: 'spaced' }, dialect.flavor));
    const guard = new TableChangeGuard();
    await guard.check(client, table);
    await guard.check(client, table);
    await conn.query(`ALTER TABLE \`${db}\`.spaced ADD COLUMN later INT`);
    const error = await guard.check(client, table).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FloeError);
    expect((error as FloeError).message).toMatch(/changed while its snapshot was read \(its columns were \(.*u tinyint(\(3\))? unsigned.*\), now \(.*later int(\(11\))?\)\)/);
    expect((error as FloeError).retryable).toBe(true);
  });
});
