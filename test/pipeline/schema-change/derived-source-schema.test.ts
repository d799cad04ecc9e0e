/**
 * The definition at a table's offset derived from its Iceberg schema (a lake that records none): the
 * Iceberg schema is made the way floe makes it — created from the definition of then, earlier DDL
 * appended to it — and compared with what MySQL says after the DDL still pending in the binlog.
 * Names, order and types come back as they were at the offset; columns MySQL still has keep what it
 * says of them now; a column a `drop` transform keeps out of the lake stays in its place.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { parsePrimitive } from '../../../src/iceberg/spec/types.js';
import { derivedSourceSchema } from '../../../src/pipeline/schema-change/derived-source-schema.js';
import { planTableMapping } from '../../../src/pipeline/table-mapping.js';
import { compileTransforms } from '../../../src/pipeline/transforms.js';
import type { ColumnSchema, TableSchema } from '../../../src/source/mysql/schema/table-schema.js';
import { mapTable } from '../../../src/source/mysql/schema/type-mapping.js';

const config = (transforms: unknown[] = []) => parseConfig({ source: { include: ['d.t'] }, transforms });

function column(name: string, type: string, extra: Partial<ColumnSchema> = {}): ColumnSchema {
  const dataType = type.replace(/\(.*$/, '').replace(/ unsigned$/, '');
  const numbers = /\((\d+)(?:,(\d+))?\)/.exec(type);
  return {
    name, ordinal: 0, dataType, columnType: type, unsigned: / unsigned$/.test(type), precision: numbers ? Number(numbers[1]) : null, scale: numbers?.[2] ? Number(numbers[2]) : null,
    datetimePrecision: null, maxLength: dataType === 'varchar' ? Number(numbers?.[1] ?? 0) : null, charset: dataType === 'varchar' ? 'latin1' : null, collation: dataType === 'varchar' ? 'latin1_bin' : null,
    nullable: name !== 'id', generated: null, generationExpression: null, comment: '', default: name === 'id' ? { kind: 'none' } : { kind: 'null' }, labels: null, json: false, invisible: false, autoIncrement: false, ...extra,
  };
}

function table(...columns: ColumnSchema[]): TableSchema {
  return { id: { database: 'd', table: 't' }, columns: columns.map((c, i) => ({ ...c, ordinal: i + 1 })), primaryKey: ['id'], indexes: [], comment: '', engine: 'InnoDB' };
}

/** The Iceberg schema floe creates for `then`, with `appended` fields added later (as ADD COLUMN appends them). */
function icebergOf(then: TableSchema, appended: { name: string; type: string }[] = [], transforms: unknown[] = []): Schema {
  const created = planTableMapping(mapTable(then), config(transforms), compileTransforms(config(transforms).transforms)).schema;
  let id = created.highestFieldId();
  return new Schema(1, [...created.fields, ...appended.map((a) => ({ id: ++id, name: a.name, required: false, type: parsePrimitive(a.type) }))], created.identifierFieldIds);
}

function derive(iceberg: Schema, today: TableSchema, transforms: unknown[] = []) {
  const c = config(transforms);
  return derivedSourceSchema(iceberg, today, planTableMapping(mapTable(today), c, compileTransforms(c.transforms)), {});
}

const shape = (s: TableSchema | undefined) => s?.columns.map((c) => `${c.name} ${c.columnType}`);

describe('the definition at the offset, derived from the Iceberg schema', () => {
  const then = table(column('id', 'int(11)'), column('v', 'varchar(20)'), column('qty', 'int(11)'), column('price', 'decimal(10,2)'));

  it('is not needed when MySQL maps onto the Iceberg schema as it is', () => {
    expect(derive(icebergOf(then), then)).toBeUndefined();
  });

  it('leaves out a column the pending DDL added, and keeps what MySQL says of the others', () => {
    const today = table(...then.columns, column('score', 'int(11)'));
    const derived = derive(icebergOf(then), today)!;
    expect(shape(derived)).toEqual(['id int(11)', 'v varchar(20)', 'qty int(11)', 'price decimal(10,2)']);
    expect(derived.columns[1]).toMatchObject({ charset: 'latin1', collation: 'latin1_bin', ordinal: 2 });
    expect(derived.primaryKey).toEqual(['id']);
  });

  it('brings back a column the pending DDL dropped, renamed or retyped, with the MySQL type of its Iceberg type, in its place', () => {
    // DROP v, CHANGE qty quantity BIGINT, MODIFY price DECIMAL(14,2), ADD note
    const today = table(column('id', 'int(11)'), column('quantity', 'bigint(20)'), column('price', 'decimal(14,2)'), column('note', 'varchar(10)'));
    const derived = derive(icebergOf(then), today)!;
    expect(shape(derived)).toEqual(['id int(11)', 'v longtext', 'qty int(11)', 'price decimal(10,2)']);
    expect(derived.columns.map((c) => c.dataType)).toEqual(['int', 'longtext', 'int', 'decimal']);
  });

  it('orders the columns MySQL still has as MySQL does: a field an earlier ADD … AFTER appended in Iceberg is in its MySQL place', () => {
    // earlier (applied by floe): ADD w INT AFTER id; pending: ADD z INT
    const today = table(column('id', 'int(11)'), column('w', 'int(11)'), column('v', 'varchar(20)'), column('qty', 'int(11)'), column('price', 'decimal(10,2)'), column('z', 'int(11)'));
    const derived = derive(icebergOf(then, [{ name: 'w', type: 'int' }]), today)!;
    expect(shape(derived)).toEqual(['id int(11)', 'w int(11)', 'v varchar(20)', 'qty int(11)', 'price decimal(10,2)']);
  });

  it('keeps a column a drop transform keeps out of the lake where MySQL has it (every binlog row holds it)', () => {
    const transforms = [{ column: 'd.t.secret', type: 'drop' }];
    const withSecret = table(column('id', 'int(11)'), column('secret', 'varchar(20)'), column('v', 'varchar(20)'));
    const today = table(...withSecret.columns, column('added', 'int(11)'));
    expect(shape(derive(icebergOf(withSecret, [], transforms), today, transforms))).toEqual(['id int(11)', 'secret varchar(20)', 'v varchar(20)']);
  });
});
