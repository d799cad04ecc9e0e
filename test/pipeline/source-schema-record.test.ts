/**
 * The MySQL definition a lake table records (`floe.source-schema`): it reads back as written —
 * byte literals of BIT/BINARY defaults included — names the table it is read for, and a damaged
 * property is refused with what to do.
 */
import { describe, expect, it } from 'vitest';
import type { TableMetadata } from '../../src/iceberg/spec/table-metadata.js';
import { recordedSourceSchema, sameSourceSchema, SOURCE_SCHEMA_PROPERTY, sourceSchemaProperty } from '../../src/pipeline/schema-change/source-schema-record.js';
import type { ColumnSchema, TableSchema } from '../../src/source/mysql/schema/table-schema.js';

function column(name: string, ordinal: number, extra: Partial<ColumnSchema> = {}): ColumnSchema {
  return {
    name, ordinal, dataType: 'int', columnType: 'int(11)', unsigned: false, precision: 10, scale: 0, datetimePrecision: null, maxLength: null,
    charset: null, collation: null, nullable: true, generated: null, generationExpression: null, comment: '', default: { kind: 'null' },
    labels: null, json: false, invisible: false, autoIncrement: false, ...extra,
  };
}

const schema: TableSchema = {
  id: { database: 'd', table: 't' },
  columns: [
    column('id', 1, { nullable: false, default: { kind: 'none' } }),
    column('flags', 2, { dataType: 'bit', columnType: 'bit(12)', precision: 12, default: { kind: 'literal', literal: new Uint8Array([0x0a, 0xff]) } }),
    column('label', 3, { dataType: 'varchar', columnType: 'varchar(20)', maxLength: 20, charset: 'utf8mb4', collation: 'utf8mb4_bin', default: { kind: 'literal', literal: 'x"y' } }),
  ],
  primaryKey: ['id'],
  indexes: [{ name: 'ix', unique: false, columns: [{ name: 'label', prefixLength: 4 }] }],
  comment: 'c',
  engine: 'InnoDB',
};

const metadataWith = (properties: Record<string, string>) => ({ properties }) as unknown as TableMetadata;

describe('floe.source-schema', () => {
  it('reads back the definition it records, for the table it is read for', () => {
    const property = sourceSchemaProperty(schema);
    const back = recordedSourceSchema(metadataWith(property), { database: 'd2', table: 't2' })!;
    expect(back.id).toEqual({ database: 'd2', table: 't2' });
    expect(back.columns[1].default).toEqual({ kind: 'literal', literal: new Uint8Array([0x0a, 0xff]) });
    expect({ ...back, id: schema.id }).toEqual(schema);
    expect(sameSourceSchema(back, schema)).toBe(true);
    expect(sameSourceSchema(back, { ...schema, columns: schema.columns.slice(0, 2) })).toBe(false);
    expect(recordedSourceSchema(metadataWith({}), schema.id)).toBeUndefined();
  });

  it('refuses a damaged property, naming it and what to do', () => {
    expect(() => recordedSourceSchema(metadataWith({ [SOURCE_SCHEMA_PROPERTY]: '{' }), schema.id)).toThrow(/d\.t: property floe\.source-schema is not JSON .*Remove the property/);
    expect(() => recordedSourceSchema(metadataWith({ [SOURCE_SCHEMA_PROPERTY]: '{"version":2,"columns":[]}' }), schema.id)).toThrow(/not a version 1 table definition/);
  });
});
