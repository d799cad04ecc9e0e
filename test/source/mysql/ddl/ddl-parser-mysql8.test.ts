/**
 * MySQL 8's own schema features as the DDL parser and applier meet them in the binlog: functional
 * and multi-valued indexes (hidden columns, no lake column), CHECK constraints with [NOT] ENFORCED,
 * ALTER/DROP CHECK, INVISIBLE columns, expression defaults, generated columns, RENAME COLUMN and
 * ALGORITHM=INSTANT ADD (AFTER) / DROP. The rows these statements lead to are checked against a
 * live server by test/e2e/mysql8-schema-features.test.ts; here, that each statement has exactly the
 * column effect MySQL gives it.
 */
import { describe, expect, it } from 'vitest';
import { parseDdl } from '../../../../src/source/mysql/ddl/ddl-parser.js';
import { applyDdl } from '../../../../src/source/mysql/ddl/ddl-apply.js';
import type { ColumnSchema, TableSchema } from '../../../../src/source/mysql/schema/table-schema.js';

function column(name: string, ordinal: number, dataType: string, extra: Partial<ColumnSchema> = {}): ColumnSchema {
  return {
    name, ordinal, dataType, columnType: dataType, unsigned: false, precision: null, scale: null, datetimePrecision: null, maxLength: null,
    charset: null, collation: null, nullable: true, generated: null, generationExpression: null, comment: '', default: { kind: 'null' },
    labels: null, json: dataType === 'json', invisible: false, autoIncrement: false, ...extra,
  };
}

const T: TableSchema = {
  id: { database: 'd', table: 't' },
  columns: [column('id', 1, 'int', { nullable: false, default: { kind: 'none' } }), column('email', 2, 'varchar', { columnType: 'varchar(60)', maxLength: 60 }), column('doc', 3, 'json'), column('qty', 4, 'int')],
  primaryKey: ['id'],
  indexes: [],
  comment: '',
  engine: 'InnoDB',
};

function effect(sql: string) {
  const effects = applyDdl(parseDdl(sql, 'd'), { flavor: 'mysql', tables: new Map([['d.t', T]]), isCaptured: () => true, statement: sql });
  expect(effects).toHaveLength(1);
  return effects[0]!;
}

describe('MySQL 8 DDL on a captured table', () => {
  it.each([
    'ALTER TABLE t ADD INDEX by_lower ((LOWER(email)))',
    "ALTER TABLE t ADD INDEX by_tags ((CAST(doc->'$.tags' AS UNSIGNED ARRAY)))",
    'CREATE INDEX by_n ON t ((CAST(JSON_UNQUOTE(JSON_EXTRACT(doc, \'$.n\')) AS SIGNED)))',
    'ALTER TABLE t ADD CONSTRAINT q_pos CHECK (qty >= 0) NOT ENFORCED',
    'ALTER TABLE t ALTER CHECK q_pos ENFORCED',
    'ALTER TABLE t ALTER CONSTRAINT q_pos NOT ENFORCED',
    'ALTER TABLE t DROP CHECK q_pos',
    'ALTER TABLE t DROP CONSTRAINT q_pos',
    'ALTER TABLE t ALTER COLUMN qty SET INVISIBLE',
    'ALTER TABLE t DROP INDEX by_lower, ALGORITHM=INSTANT',
  ])('%s changes no column', (sql) => {
    const e = effect(sql);
    if (e.kind === 'alter') expect(e.changes).toEqual([]);
    else expect(e.kind).toBe('no-schema-effect');
  });

  it('adds INVISIBLE, generated and expression-default columns where MySQL puts them (ALGORITHM=INSTANT … AFTER)', () => {
    const e = effect(
      "ALTER TABLE t ADD COLUMN secret VARCHAR(10) INVISIBLE DEFAULT 'x' AFTER id, ADD COLUMN total INT AS (qty * 2) VIRTUAL, ADD COLUMN u VARCHAR(36) DEFAULT (UUID()) AFTER email, ALGORITHM=INSTANT",
    );
    if (e.kind !== 'alter') throw new Error(e.kind);
    expect(e.after.columns.map((c) => c.name)).toEqual(['id', 'secret', 'email', 'u', 'doc', 'qty', 'total']);
    const by = (n: string) => e.after.columns.find((c) => c.name === n)!;
    expect(by('secret')).toMatchObject({ invisible: true, default: { kind: 'literal', literal: 'x' } });
    expect(by('total')).toMatchObject({ generated: 'virtual', generationExpression: 'qty * 2' });
    expect(by('u').default).toEqual({ kind: 'expression', expression: '(UUID())' });
  });

  it('renames a column in place and drops one instantly', () => {
    const e = effect('ALTER TABLE t RENAME COLUMN email TO mail, DROP COLUMN qty, ALGORITHM=INSTANT');
    if (e.kind !== 'alter') throw new Error(e.kind);
    expect(e.after.columns.map((c) => c.name)).toEqual(['id', 'mail', 'doc']);
    expect(e.changes.map((c) => c.kind)).toEqual(['drop', 'rename']);
  });

  it('reads CREATE TABLE with column and table CHECKs, [NOT] ENFORCED, functional and multi-valued indexes', () => {
    const s = parseDdl(
      `CREATE TABLE n (id INT PRIMARY KEY, qty INT CHECK (qty >= 0) NOT ENFORCED, price DECIMAL(8,2) CONSTRAINT p CHECK (price > 0) ENFORCED,
        doc JSON, inv INT INVISIBLE, g INT AS (qty + 1) STORED NOT NULL,
        CONSTRAINT small CHECK (qty < 100) NOT ENFORCED, INDEX ((qty + 1)), KEY k ((CAST(doc->'$.a' AS CHAR(10) ARRAY))), CHECK (id > 0))`,
      'd',
    );
    if (s.kind !== 'create-table') throw new Error(s.kind);
    expect(s.columns.map((c) => [c.name, c.nullable ?? null, c.invisible, c.generated?.stored ?? null])).toEqual([
      ['id', false, false, null],
      ['qty', null, false, null],
      ['price', null, false, null],
      ['doc', null, false, null],
      ['inv', null, true, null],
      ['g', false, false, true],
    ]);
    expect(s.primaryKey).toEqual(['id']);
  });
});
