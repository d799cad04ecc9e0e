/**
 * DDL effects (source ddl-apply.ts) and the Iceberg schema updates planned from them
 * (schema-change-plan.ts), without a server: column lists after ALTER, idempotent replays, the
 * refusals with their reasons, and v3 defaults (literal, implicit, expression).
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { newTableMetadata } from '../../../src/iceberg/metadata/new-table-metadata.js';
import { evolveSchema } from '../../../src/iceberg/spec/schema-update.js';
import type { TableMetadata } from '../../../src/iceberg/spec/table-metadata.js';
import { typeToString } from '../../../src/iceberg/spec/types.js';
import { applyDdl, type TableEffect } from '../../../src/source/mysql/ddl/ddl-apply.js';
import { columnFromDefinition } from '../../../src/source/mysql/ddl/ddl-columns.js';
import { parseDdl } from '../../../src/source/mysql/ddl/ddl-parser.js';
import type { CreateTableStatement } from '../../../src/source/mysql/ddl/ddl-statements.js';
import type { TableSchema } from '../../../src/source/mysql/schema/table-schema.js';
import { mapTable } from '../../../src/source/mysql/schema/type-mapping.js';
import { planIcebergSchemaChange } from '../../../src/pipeline/schema-change/schema-change-plan.js';
import { planTableMapping } from '../../../src/pipeline/table-mapping.js';
import { compileTransforms } from '../../../src/pipeline/transforms.js';

const config = parseConfig({ job: { id: 'j' }, transforms: [{ column: 'shop.t.secret', type: 'drop' }, { column: 'shop.t.email', type: 'hash', salt: 's' }] });
const transforms = compileTransforms(config.transforms);

function table(ddl: string, flavor: 'mysql' | 'mariadb' = 'mariadb'): TableSchema {
  const s = parseDdl(ddl, 'shop') as CreateTableStatement;
  return {
    id: s.table,
    columns: s.columns.map((c, i) => columnFromDefinition(c, i + 1, flavor, 'test')),
    primaryKey: [...s.primaryKey],
    indexes: [],
    comment: '',
    engine: null,
  };
}

const BASE = 'CREATE TABLE t (id INT NOT NULL, qty INT, price FLOAT, amount DECIMAL(10,2), name VARCHAR(20), email VARCHAR(50), secret VARCHAR(10), flag TINYINT(1), PRIMARY KEY (id))';

function alter(before: TableSchema, sql: string): Extract<TableEffect, { kind: 'alter' }> {
  const [e] = applyDdl(parseDdl(sql, 'shop'), { flavor: 'mariadb', tables: new Map([['shop.t', before]]), isCaptured: () => true, statement: sql });
  if (e?.kind !== 'alter') throw new Error(`expected an alter effect, got ${e?.kind}`);
  return e;
}

function lake(before: TableSchema, formatVersion: 2 | 3 = 3): TableMetadata {
  const mapping = planTableMapping(mapTable(before), config, transforms);
  return newTableMetadata({ schema: mapping.schema, location: 'file:/tmp/x', formatVersion });
}

function plan(before: TableSchema, sql: string, metadata = lake(before)) {
  return planIcebergSchemaChange({ effect: alter(before, sql), metadata, config, transforms });
}

describe('DDL effects on a captured table', () => {
  const before = table(BASE);

  it('derives columns as information_schema reports them', () => {
    const c = (name: string) => before.columns.find((x) => x.name === name)!;
    expect(c('id')).toMatchObject({ dataType: 'int', columnType: 'int(11)', nullable: false, default: { kind: 'none' } });
    expect(c('flag')).toMatchObject({ dataType: 'tinyint', columnType: 'tinyint(1)' });
    expect(c('amount')).toMatchObject({ dataType: 'decimal', columnType: 'decimal(10,2)', precision: 10, scale: 2 });
    expect(c('qty')).toMatchObject({ nullable: true, default: { kind: 'null' } });
    const m = table("CREATE TABLE t (a SERIAL, b BOOL DEFAULT TRUE, c JSON, d CHAR(4) CHARACTER SET binary, e ENUM('x','y') NOT NULL, f TEXT(100), g DOUBLE PRECISION, h FLOAT(30), i BIT DEFAULT b'1')", 'mysql');
    expect(m.columns.map((x) => [x.name, x.dataType, x.columnType])).toEqual([
      ['a', 'bigint', 'bigint unsigned'],
      ['b', 'tinyint', 'tinyint(1)'],
      ['c', 'json', 'json'],
      ['d', 'binary', 'binary(4)'],
      ['e', 'enum', "enum('x','y')"],
      ['f', 'text', 'text'],
      ['g', 'double', 'double'],
      ['h', 'double', 'double'],
      ['i', 'bit', 'bit(1)'],
    ]);
    expect(m.columns[0]).toMatchObject({ nullable: false, autoIncrement: true });
    expect(m.columns[1].default).toEqual({ kind: 'literal', literal: '1' });
    const bit = m.columns[8].default;
    expect(bit.kind === 'literal' && [...(bit.literal as Uint8Array)]).toEqual([1]);
    expect(table('CREATE TABLE t (c JSON)', 'mariadb').columns[0]).toMatchObject({ dataType: 'longtext', json: true });
  });

  it('computes the new column order and the changes (drops, renames, modifies, adds)', () => {
    const e = alter(before, "ALTER TABLE t ADD COLUMN note TEXT AFTER id, DROP COLUMN price, RENAME COLUMN name TO title, MODIFY qty BIGINT NOT NULL DEFAULT 0, ADD c0 INT FIRST");
    expect(e.after.columns.map((c) => [c.name, c.ordinal])).toEqual([
      ['c0', 1],
      ['id', 2],
      ['note', 3],
      ['qty', 4],
      ['amount', 5],
      ['title', 6],
      ['email', 7],
      ['secret', 8],
      ['flag', 9],
    ]);
    expect(e.changes.map((c) => `${c.kind}:${'column' in c ? c.column.name : 'from' in c ? `${c.from.name}>${c.to.name}` : c.after.name}`)).toEqual([
      'drop:price',
      'rename:name>title',
      'modify:qty',
      'add:c0',
      'add:note',
    ]);
    expect(e.primaryKeyChanged).toBe(false);
  });

  it('treats a replayed DDL (already in the definition) as applied, with notes', () => {
    const once = alter(before, 'ALTER TABLE t ADD COLUMN extra INT, DROP COLUMN price, RENAME COLUMN name TO title').after;
    const again = alter(once, 'ALTER TABLE t ADD COLUMN extra INT, DROP COLUMN price, RENAME COLUMN name TO title');
    expect(again.changes).toEqual([]);
    expect(again.notes).toHaveLength(3);
  });

  it('flags primary-key changes, also through CHANGE … PRIMARY KEY and dropping a key column', () => {
    expect(alter(before, 'ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (id, qty)').primaryKeyChanged).toBe(true);
    expect(alter(before, 'ALTER TABLE t DROP COLUMN id').primaryKeyChanged).toBe(true);
    expect(alter(before, 'ALTER TABLE t CHANGE id ident BIGINT NOT NULL').after.primaryKey).toEqual(['ident']);
    expect(alter(before, 'ALTER TABLE t CHANGE id ident BIGINT NOT NULL').primaryKeyChanged).toBe(false);
  });

  it('reports other statements: create (captured by pattern), drop, rename, truncate, index', () => {
    const ctx = { flavor: 'mysql' as const, tables: new Map([['shop.t', before]]), isCaptured: (t: { table: string }) => t.table.startsWith('t'), statement: '' };
    expect(applyDdl(parseDdl('TRUNCATE t', 'shop'), ctx)).toEqual([{ kind: 'truncate', table: { database: 'shop', table: 't' } }]);
    expect(applyDdl(parseDdl('DROP TABLE IF EXISTS t, other', 'shop'), ctx)).toEqual([{ kind: 'drop', table: { database: 'shop', table: 't' } }]);
    expect(applyDdl(parseDdl('CREATE TABLE t2 (a INT PRIMARY KEY)', 'shop'), ctx)).toMatchObject([{ kind: 'create', table: { table: 't2' }, schema: { primaryKey: ['a'] } }]);
    expect(applyDdl(parseDdl('CREATE TABLE x2 (a INT)', 'shop'), ctx)).toEqual([]);
    expect(applyDdl(parseDdl('RENAME TABLE t TO t_old', 'shop'), ctx)).toEqual([{ kind: 'rename', from: { database: 'shop', table: 't' }, to: { database: 'shop', table: 't_old' } }]);
    expect(applyDdl(parseDdl('CREATE INDEX ix ON t (qty)', 'shop'), ctx)).toMatchObject([{ kind: 'no-schema-effect' }]);
    expect(applyDdl(parseDdl('ALTER TABLE other ADD c INT', 'shop'), ctx)).toEqual([]);
  });
});

describe('Iceberg schema updates planned from DDL', () => {
  const before = table(BASE);

  it('adds columns with v3 initial-default from the literal, the implicit default, or none for expressions', () => {
    const p = plan(before, "ALTER TABLE t ADD c1 VARCHAR(10) NOT NULL DEFAULT 'new', ADD c2 INT NOT NULL, ADD c3 DATETIME DEFAULT CURRENT_TIMESTAMP, ADD c4 DECIMAL(6,3) DEFAULT 1.5, ADD c5 INT");
    expect(p.refusal).toBeUndefined();
    expect(p.changes).toEqual([
      { kind: 'add-column', name: 'c1', type: { kind: 'string' }, required: true, defaultValue: 'new' },
      { kind: 'add-column', name: 'c2', type: { kind: 'int' }, required: true, defaultValue: 0 },
      { kind: 'add-column', name: 'c3', type: { kind: 'timestamp' }, required: false },
      { kind: 'add-column', name: 'c4', type: { kind: 'decimal', precision: 6, scale: 3 }, required: false, defaultValue: '1.500' },
      { kind: 'add-column', name: 'c5', type: { kind: 'int' }, required: false },
    ]);
    expect(p.warnings.join('\n')).toMatch(/CURRENT_TIMESTAMP is an expression/);
    const evolved = evolveSchema(lake(before), p.changes).schema;
    expect(evolved.fields.find((f) => f.name === 'c1')).toMatchObject({ initialDefault: 'new', writeDefault: 'new' });
  });

  it('v2 tables add the column without defaults and say what old rows read', () => {
    const p = plan(before, "ALTER TABLE t ADD c1 VARCHAR(10) NOT NULL DEFAULT 'new'", lake(before, 2));
    expect(p.changes).toEqual([{ kind: 'add-column', name: 'c1', type: { kind: 'string' }, required: false }]);
    expect(p.warnings.join('\n')).toMatch(/format v2 tables cannot hold column defaults/);
  });

  it('renames keep the field (by name), drops, widenings, make-optional, write-default and doc', () => {
    const p = plan(before, "ALTER TABLE t RENAME COLUMN name TO title, DROP COLUMN flag, MODIFY qty BIGINT, MODIFY price DOUBLE, MODIFY amount DECIMAL(14,2) DEFAULT 2.50 COMMENT 'money', MODIFY id INT NOT NULL");
    expect(p.refusal).toBeUndefined();
    expect(p.changes).toEqual([
      { kind: 'drop-column', name: 'flag' },
      { kind: 'rename-column', name: 'name', newName: 'title' },
      { kind: 'update-column-type', name: 'qty', type: { kind: 'long' } },
      { kind: 'update-column-type', name: 'price', type: { kind: 'double' } },
      { kind: 'update-column-type', name: 'amount', type: { kind: 'decimal', precision: 14, scale: 2 } },
      { kind: 'update-write-default', name: 'amount', value: '2.50' },
      { kind: 'update-doc', name: 'amount', doc: 'money' },
    ]);
    const evolved = evolveSchema(lake(before), p.changes).schema;
    expect(evolved.fields.map((f) => [f.id, f.name, typeToString(f.type)])).toEqual([
      [1, 'id', 'int'],
      [2, 'qty', 'long'],
      [3, 'price', 'double'],
      [4, 'amount', 'decimal(14, 2)'],
      [5, 'title', 'string'],
      [6, 'email', 'string'],
    ]);
  });

  it('needs no Iceberg change for varchar length or text size changes', () => {
    expect(plan(before, 'ALTER TABLE t MODIFY name VARCHAR(200)').changes).toEqual([]);
    expect(plan(before, 'ALTER TABLE t MODIFY name MEDIUMTEXT').changes).toEqual([]);
  });

  it('makes a NOT NULL column nullable', () => {
    const b = table('CREATE TABLE t (id INT PRIMARY KEY, n INT NOT NULL)');
    expect(plan(b, 'ALTER TABLE t MODIFY n INT NULL').changes).toEqual([{ kind: 'make-optional', name: 'n' }]);
  });

  it('refuses narrowing, type-family changes, decimal scale changes and key changes, saying what to do', () => {
    for (const [sql, why] of [
      ['ALTER TABLE t MODIFY qty SMALLINT UNSIGNED', /int\(11\) to smallint\(5\) unsigned, which narrows the column/],
      ['ALTER TABLE t MODIFY qty INT UNSIGNED, MODIFY amount DECIMAL(8,2)', /decimal\(10, 2\) → decimal\(8, 2\) is not an allowed widening/],
      ['ALTER TABLE t MODIFY name INT', /string → int is not an allowed widening/],
      ['ALTER TABLE t MODIFY amount DECIMAL(12,3)', /decimal\(10, 2\) → decimal\(12, 3\)/],
      ['ALTER TABLE t MODIFY flag TINYINT(4)', /boolean → int/],
      ['ALTER TABLE t DROP PRIMARY KEY', /primary key of shop\.t changes/],
      ['ALTER TABLE t CONVERT TO CHARACTER SET latin1', /CONVERT TO CHARACTER SET/],
    ] as const) {
      const p = plan(before, sql);
      expect(p.refusal, sql).toMatch(why);
      expect(p.refusal, sql).toMatch(/re-snapshot the table/);
      expect(p.changes).toEqual([]);
    }
  });

  it('respects column transforms: dropped columns stay out, hashed ones stay strings', () => {
    expect(plan(before, 'ALTER TABLE t MODIFY secret VARCHAR(99), DROP COLUMN secret').changes).toEqual([]);
    expect(plan(before, 'ALTER TABLE t MODIFY email VARCHAR(200)').changes).toEqual([]);
    expect(plan(before, 'ALTER TABLE t RENAME COLUMN email TO mail').refusal).toMatch(/column transforms configured for the two names differ \(hash → none\)/);
  });

  it('is idempotent against the lake: an already evolved schema plans nothing', () => {
    const sql = "ALTER TABLE t ADD c1 INT DEFAULT 7, RENAME COLUMN name TO title, MODIFY qty BIGINT";
    const first = plan(before, sql);
    const m = lake(before);
    const evolved = evolveSchema(m, first.changes);
    const after: TableMetadata = { ...m, schemas: [...m.schemas, evolved.schema], currentSchemaId: evolved.schema.schemaId, lastColumnId: evolved.lastColumnId };
    // the replay sees the MySQL definition of the restart (already altered) and the evolved lake
    const replay = planIcebergSchemaChange({ effect: alter(alter(before, sql).after, sql), metadata: after, config, transforms });
    expect(replay.refusal).toBeUndefined();
    expect(replay.changes).toEqual([]);
    // the same DDL against the old definition but the evolved lake (crash after the schema commit)
    const half = planIcebergSchemaChange({ effect: alter(before, sql), metadata: after, config, transforms });
    expect(half.changes).toEqual([]);
  });

  it('reconciles a lagging lake when the definition already shows the statement (restart before the DDL)', () => {
    const sql = "ALTER TABLE t ADD c1 INT NOT NULL DEFAULT 7, RENAME COLUMN name TO title, MODIFY qty BIGINT, DROP COLUMN price";
    const current = alter(before, sql).after; // information_schema at the restart: already altered
    const p = planIcebergSchemaChange({ effect: alter(current, sql), metadata: lake(before), config, transforms });
    expect(p.refusal).toBeUndefined();
    expect(p.changes).toEqual([
      { kind: 'rename-column', name: 'name', newName: 'title' },
      { kind: 'add-column', name: 'c1', type: { kind: 'int' }, required: true, defaultValue: 7 },
      { kind: 'update-column-type', name: 'qty', type: { kind: 'long' } },
      { kind: 'drop-column', name: 'price' },
    ]);
  });
});
