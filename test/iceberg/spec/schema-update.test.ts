import { describe, expect, it } from 'vitest';
import { applyUpdates, checkRequirements, newTableMetadata } from '../../../src/iceberg/metadata/metadata-builder.js';
import { parsePartitionSpec } from '../../../src/iceberg/spec/partition-spec-text.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { evolveSchema, type SchemaChange } from '../../../src/iceberg/spec/schema-update.js';
import { parseTableMetadata, writeTableMetadata } from '../../../src/iceberg/spec/table-metadata-json.js';
import type { TableMetadata } from '../../../src/iceberg/spec/table-metadata.js';
import { Types } from '../../../src/iceberg/spec/types.js';

const schema = new Schema(
  0,
  [
    { id: 1, name: 'id', required: true, type: Types.long },
    { id: 2, name: 'qty', required: false, type: Types.int },
    { id: 3, name: 'price', required: false, type: Types.decimal(10, 2) },
    { id: 4, name: 'ratio', required: false, type: Types.float },
    { id: 5, name: 'born', required: false, type: Types.date },
    {
      id: 6,
      name: 'address',
      required: false,
      type: { kind: 'struct', fields: [{ id: 7, name: 'city', required: false, type: Types.string }] },
    },
  ],
  [1],
);

function table(formatVersion: 2 | 3, partition = ''): TableMetadata {
  return newTableMetadata({ schema, spec: parsePartitionSpec(partition, schema), location: 's3://b/t', formatVersion, nowMs: 1n });
}

function commit(m: TableMetadata, changes: SchemaChange[]): TableMetadata {
  const e = evolveSchema(m, changes);
  checkRequirements(m, e.requirements);
  return applyUpdates(m, e.updates, { nowMs: 2n });
}

describe('evolveSchema', () => {
  it('adds an optional column with a new id and commits it as add-schema + set-current-schema', () => {
    const m = table(2);
    const e = evolveSchema(m, [{ kind: 'add-column', name: 'email', type: Types.string, doc: 'contact' }]);
    expect(e.lastColumnId).toBe(8);
    expect(e.schema.schemaId).toBe(1);
    expect(e.schema.findFieldByName('email')).toEqual({ id: 8, name: 'email', required: false, type: Types.string, doc: 'contact' });
    expect(e.updates).toEqual([{ action: 'add-schema', schema: e.schema, lastColumnId: 8 }, { action: 'set-current-schema', schemaId: -1 }]);
    expect(e.requirements).toEqual([
      { type: 'assert-current-schema-id', currentSchemaId: 0 },
      { type: 'assert-last-assigned-field-id', lastAssignedFieldId: 7 },
    ]);
    const m2 = applyUpdates(m, e.updates);
    expect(m2.currentSchemaId).toBe(1);
    expect(m2.lastColumnId).toBe(8);
  });

  it('v3: a default becomes initial-default and write-default; required columns need one', () => {
    const m = commit(table(3), [
      { kind: 'add-column', name: 'status', type: Types.string, required: true, defaultValue: 'new' },
      { kind: 'add-column', name: 'score', type: Types.double, defaultValue: 1 },
    ]);
    const status = m.schemas[1].findFieldByName('status')!;
    expect(status).toMatchObject({ id: 8, required: true, initialDefault: 'new', writeDefault: 'new' });
    const text = writeTableMetadata(m);
    expect(text).toMatch(/"initial-default": "new",\n\s+"write-default": "new"/);
    expect(text).toContain('"initial-default": 1.0');
    expect(parseTableMetadata(text)).toEqual(m);
    expect(() => evolveSchema(table(3), [{ kind: 'add-column', name: 'x', type: Types.int, required: true }])).toThrow(/a required column needs a default value/);
    expect(() => evolveSchema(table(2), [{ kind: 'add-column', name: 'x', type: Types.int, defaultValue: 3 }])).toThrow(/column defaults need format v3, the table is v2/);
    expect(() => evolveSchema(table(3), [{ kind: 'add-column', name: 'x', type: Types.double, defaultValue: NaN }])).toThrow(/NaN default/);
    expect(() => evolveSchema(table(3), [{ kind: 'add-column', name: 'x', type: Types.int, defaultValue: 'seven' }])).toThrow(/expected a 32-bit integer, found "seven"/);
    expect(() => evolveSchema(table(2), [{ kind: 'add-column', name: 'x', type: Types.timestampNs }])).toThrow(/timestamp_ns needs format v3/);
  });

  it('assigns fresh ids to nested types and adds into structs', () => {
    const e = evolveSchema(table(2), [
      { kind: 'add-column', name: 'tags', type: { kind: 'map', keyId: 0, keyType: Types.string, valueId: 0, valueRequired: false, valueType: { kind: 'list', elementId: 0, elementRequired: true, element: Types.int } } },
      { kind: 'add-column', parent: 'address', name: 'zip', type: Types.string },
    ]);
    expect(e.schema.findFieldByName('tags')!.type).toEqual({
      kind: 'map', keyId: 9, keyType: Types.string, valueId: 10, valueRequired: false, valueType: { kind: 'list', elementId: 11, elementRequired: true, element: Types.int },
    });
    expect(e.schema.findFieldByName('address.zip')!.id).toBe(12);
    expect(e.lastColumnId).toBe(12);
  });

  it('renames keeping the id, and refuses name clashes', () => {
    const e = evolveSchema(table(2), [{ kind: 'rename-column', name: 'qty', newName: 'quantity' }, { kind: 'rename-column', name: 'address.city', newName: 'town' }]);
    expect(e.schema.findFieldByName('quantity')!.id).toBe(2);
    expect(e.schema.findFieldByName('address.town')!.id).toBe(7);
    expect(e.lastColumnId).toBe(7);
    expect(() => evolveSchema(table(2), [{ kind: 'rename-column', name: 'qty', newName: 'price' }])).toThrow(/a column named price already exists/);
    expect(() => evolveSchema(table(2), [{ kind: 'rename-column', name: 'nope', newName: 'x' }])).toThrow(/column nope does not exist in schema 0/);
  });

  it('drops columns, but not identifier fields or partition sources', () => {
    const e = evolveSchema(table(2), [{ kind: 'drop-column', name: 'ratio' }]);
    expect(e.schema.findFieldByName('ratio')).toBe(undefined);
    expect(e.lastColumnId).toBe(7); // ids are never reused
    expect(() => evolveSchema(table(2), [{ kind: 'drop-column', name: 'id' }])).toThrow(/field 1 is an identifier field/);
    expect(() => evolveSchema(table(2, 'bucket(4, qty)'), [{ kind: 'drop-column', name: 'qty' }])).toThrow(/source of partition field qty_bucket/);
  });

  it('widens types as the spec allows, converting defaults, and refuses the rest', () => {
    const m = commit(table(3), [{ kind: 'add-column', name: 'n', type: Types.int, defaultValue: 5 }]);
    const e = evolveSchema(m, [
      { kind: 'update-column-type', name: 'qty', type: Types.long },
      { kind: 'update-column-type', name: 'ratio', type: Types.double },
      { kind: 'update-column-type', name: 'price', type: Types.decimal(12, 2) },
      { kind: 'update-column-type', name: 'born', type: Types.timestamp },
      { kind: 'update-column-type', name: 'n', type: Types.long },
    ]);
    expect(e.schema.fields.map((f) => f.type)).toEqual([Types.long, Types.long, Types.decimal(12, 2), Types.double, Types.timestamp, schema.fields[5].type, Types.long]);
    expect(e.schema.findFieldByName('n')).toMatchObject({ initialDefault: 5n, writeDefault: 5n });
    const refusals: [SchemaChange, RegExp][] = [
      [{ kind: 'update-column-type', name: 'qty', type: Types.string }, /from int to string: not an allowed promotion; allowed are int→long/],
      [{ kind: 'update-column-type', name: 'price', type: Types.decimal(12, 3) }, /decimal\(10, 2\) to decimal\(12, 3\)/],
      [{ kind: 'update-column-type', name: 'price', type: Types.decimal(9, 2) }, /not an allowed promotion/],
      [{ kind: 'update-column-type', name: 'id', type: Types.int }, /from long to int/],
    ];
    for (const [change, message] of refusals) expect(() => evolveSchema(m, [change])).toThrow(message);
    expect(() => evolveSchema(table(2), [{ kind: 'update-column-type', name: 'born', type: Types.timestamp }])).toThrow(/\(v3 tables also date→timestamp\)/);
    expect(() => evolveSchema(table(3, 'bucket(8, born)'), [{ kind: 'update-column-type', name: 'born', type: Types.timestamp }])).toThrow(/partition field born_bucket \(bucket\) would change value/);
    expect(evolveSchema(table(3, 'day(born)'), [{ kind: 'update-column-type', name: 'born', type: Types.timestamp }]).changed).toBe(true);
  });

  it('makes columns optional but keeps identifier fields required; changes write-defaults in v3', () => {
    const withRequired = newTableMetadata({ schema: new Schema(0, [...schema.fields, { id: 8, name: 'r', required: true, type: Types.int }], [1]), location: 's3://b/t', formatVersion: 3 });
    expect(evolveSchema(withRequired, [{ kind: 'make-optional', name: 'r' }]).schema.findFieldByName('r')!.required).toBe(false);
    expect(() => evolveSchema(withRequired, [{ kind: 'make-optional', name: 'id' }])).toThrow(/identifier field, which must stay required/);
    const m = commit(table(3), [{ kind: 'add-column', name: 'n', type: Types.int, defaultValue: 5 }]);
    const e = evolveSchema(m, [{ kind: 'update-write-default', name: 'n', value: 9 }]);
    expect(e.schema.findFieldByName('n')).toMatchObject({ initialDefault: 5, writeDefault: 9 });
    expect(() => evolveSchema(table(2), [{ kind: 'update-write-default', name: 'qty', value: 1 }])).toThrow(/need format v3/);
  });

  it('returns no updates when nothing changes', () => {
    const e = evolveSchema(table(2), [{ kind: 'rename-column', name: 'qty', newName: 'qty' }, { kind: 'make-optional', name: 'qty' }]);
    expect(e).toMatchObject({ changed: false, updates: [], requirements: [], lastColumnId: 7 });
    expect(e.schema.schemaId).toBe(0);
  });
});
