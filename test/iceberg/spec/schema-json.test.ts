import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  partitionFieldsToJson,
  partitionSpecFromJson,
  partitionSpecToJson,
  schemaFromJson,
  schemaToJson,
  sortOrderFromJson,
  sortOrderToJson,
  validateSchemaForFormatVersion,
} from '../../../src/iceberg/spec/schema-json.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { Types } from '../../../src/iceberg/spec/types.js';
import { parseJson, stringifyJson } from '../../../src/util/json.js';
import { GOLDEN_DIR, goldenAvailable } from '../../support/golden.js';

const GOLDEN = GOLDEN_DIR + '/data/persistent/add_columns_with_defaults/default.db/add_columns_with_defaults/metadata/00003-3f1801a5-7dfb-4072-b14a-39cd12f9279b.metadata.json';

describe('schema JSON (Appendix C)', () => {
  it('writes nested types, doc and identifier fields with Java key order and reads them back', () => {
    const schema = new Schema(
      3,
      [
        { id: 1, name: 'id', required: true, type: Types.long, doc: 'primary key' },
        { id: 2, name: 'tags', required: false, type: { kind: 'list', elementId: 4, elementRequired: true, element: Types.string } },
        {
          id: 3,
          name: 'attrs',
          required: false,
          type: { kind: 'map', keyId: 5, keyType: Types.string, valueId: 6, valueRequired: false, valueType: Types.decimal(9, 2) },
        },
      ],
      [1],
    );
    const text = stringifyJson(schemaToJson(schema));
    expect(text).toBe(
      '{"type":"struct","schema-id":3,"identifier-field-ids":[1],"fields":[' +
        '{"id":1,"name":"id","required":true,"type":"long","doc":"primary key"},' +
        '{"id":2,"name":"tags","required":false,"type":{"type":"list","element-id":4,"element":"string","element-required":true}},' +
        '{"id":3,"name":"attrs","required":false,"type":{"type":"map","key-id":5,"key":"string","value-id":6,"value":"decimal(9, 2)","value-required":false}}]}',
    );
    const back = schemaFromJson(parseJson(text));
    expect(back.schemaId).toBe(3);
    expect(back.identifierFieldIds).toEqual([1]);
    expect(stringifyJson(schemaToJson(back))).toBe(text);
  });

  it('omits empty identifier-field-ids as Java does and reads a schema without schema-id (v1)', () => {
    const s = schemaFromJson(parseJson('{"type":"struct","fields":[{"id":1,"name":"a","required":false,"type":"int"}]}'), 7);
    expect(s.schemaId).toBe(7);
    expect(stringifyJson(schemaToJson(s))).toBe('{"type":"struct","schema-id":7,"fields":[{"id":1,"name":"a","required":false,"type":"int"}]}');
  });

  it.skipIf(!goldenAvailable)('reads every primitive default of the golden (Java/PyIceberg-written) table and writes them back identically', () => {
    const meta = parseJson(readFileSync(GOLDEN, 'utf8'));
    const schemaJson = meta.schemas[1];
    const schema = schemaFromJson(schemaJson);
    const f = (name: string) => schema.findFieldByName(name)!;
    expect(f('col_long').initialDefault).toBe(-9223372036854775808n);
    expect(f('col_float').initialDefault).toBe(Math.fround(0.34234));
    expect(f('col_decimal').initialDefault).toBe('12345.00');
    expect(f('col_date').initialDefault).toBe(12345);
    expect(f('col_time').initialDefault).toBe(12345n);
    expect(f('col_timestamptz').initialDefault).toBe(12345n);
    expect(f('col_fixed').initialDefault).toEqual(Uint8Array.of(1, 2, 3, 0xff, 3));
    // identical JSON (modulo key order, and the empty identifier-field-ids that Java omits)
    const { 'identifier-field-ids': emptyIds, ...rest } = schemaJson;
    expect(emptyIds).toEqual([]);
    expect(parseJson(stringifyJson(schemaToJson(schema)))).toEqual(rest);
    // the table is v2 with defaults: readable, but floe would not write it
    expect(() => validateSchemaForFormatVersion(schema, 2)).toThrow(/col_boolean: non-null initial-default \(true\) is not supported until v3/);
    expect(() => validateSchemaForFormatVersion(schema, 3)).not.toThrow();
  });

  it('writes a float default of 1 as 1.0 (Java requires a floating-point token)', () => {
    const schema = new Schema(0, [{ id: 1, name: 'f', required: false, type: Types.float, initialDefault: 1, writeDefault: 1 }]);
    expect(stringifyJson(schemaToJson(schema))).toContain('"initial-default":1.0,"write-default":1.0');
  });

  it('keeps an explicit null default distinct from an absent one', () => {
    const text = '{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"a","required":false,"type":"int","initial-default":null,"write-default":null}]}';
    expect(stringifyJson(schemaToJson(schemaFromJson(parseJson(text))))).toBe(text);
  });

  it('rejects what Java rejects: nested non-null defaults, NaN defaults, bad identifier fields', () => {
    const struct = '{"type":"struct","fields":[{"id":2,"name":"x","required":false,"type":"int"}]}';
    expect(() => schemaFromJson(parseJson(`{"type":"struct","fields":[{"id":1,"name":"p","required":false,"type":${struct},"initial-default":{}}]}`))).toThrow(
      /initial-default of a struct must be null/,
    );
    expect(() => schemaFromJson(parseJson('{"type":"struct","fields":[{"id":1,"name":"d","required":false,"type":"double","write-default":"NaN"}]}'))).toThrow(
      /write-default is NaN/,
    );
    expect(() => schemaFromJson(parseJson('{"type":"struct","identifier-field-ids":[1],"fields":[{"id":1,"name":"d","required":true,"type":"double"}]}'))).toThrow(
      /identifier field 1 \(d\) is a double/,
    );
    expect(() => schemaFromJson(parseJson('{"type":"struct","identifier-field-ids":[1],"fields":[{"id":1,"name":"k","required":false,"type":"int"}]}'))).toThrow(
      /identifier field 1 \(k\) is optional/,
    );
    expect(() =>
      schemaFromJson(parseJson(`{"type":"struct","identifier-field-ids":[2],"fields":[{"id":1,"name":"s","required":false,"type":${struct.replace('false', 'true')}}]}`)),
    ).toThrow(/nested in the optional struct s/);
    expect(() => schemaFromJson(parseJson('{"type":"struct","identifier-field-ids":[9],"fields":[]}'))).toThrow(/identifier field 9 does not exist/);
    expect(() => schemaFromJson(parseJson('{"type":"struct","fields":[{"id":1,"name":"a","required":false,"type":"int"},{"id":1,"name":"b","required":false,"type":"int"}]}'))).toThrow(
      /field id 1 is used twice/,
    );
    expect(() => schemaFromJson(parseJson('{"type":"struct","fields":[{"id":1,"name":"a","required":"yes","type":"int"}]}'))).toThrow(
      /field a.required: expected a JSON boolean, found "yes"/,
    );
  });

  it('validates v3-only types and defaults for a format version', () => {
    const schema = new Schema(0, [
      { id: 1, name: 'ts', required: false, type: Types.timestampNs },
      { id: 2, name: 'u', required: true, type: Types.unknown },
    ]);
    expect(() => validateSchemaForFormatVersion(schema, 2)).toThrow(
      'iceberg.schema-json: schema 0 is invalid for format v2:\n- field ts: timestamp_ns is not supported until v3\n- field u of type unknown must be optional\n- field u: unknown is not supported until v3',
    );
  });
});

describe('partition spec and sort order JSON', () => {
  it('round-trips the spec example and writes the fields-only form for manifests', () => {
    const text = '{"spec-id":0,"fields":[{"name":"ts_day","transform":"day","source-id":4,"field-id":1000},{"name":"id_bucket","transform":"bucket[16]","source-id":1,"field-id":1001}]}';
    const spec = partitionSpecFromJson(parseJson(text));
    expect(spec.fields[1]).toEqual({ sourceId: 1, fieldId: 1001, name: 'id_bucket', transform: { kind: 'bucket', n: 16 } });
    expect(stringifyJson(partitionSpecToJson(spec))).toBe(text);
    expect(stringifyJson(partitionFieldsToJson(spec))).toBe(text.slice('{"spec-id":0,"fields":'.length, -1));
  });

  it('assigns v1 partition field ids from 1000 and reads single-element source-ids', () => {
    const spec = partitionSpecFromJson(parseJson('[{"name":"a","transform":"identity","source-id":1},{"name":"b","transform":"truncate[4]","source-ids":[2]}]'), 0);
    expect(spec.fields.map((f) => [f.fieldId, f.sourceId])).toEqual([
      [1000, 1],
      [1001, 2],
    ]);
    expect(() => partitionSpecFromJson(parseJson('{"spec-id":1,"fields":[{"name":"a","transform":"zorder","source-id":1,"field-id":1000}]}'))).toThrow(
      /unknown partition transform "zorder"/,
    );
  });

  it('round-trips sort orders', () => {
    const text = '{"order-id":1,"fields":[{"transform":"identity","source-id":2,"direction":"asc","null-order":"nulls-first"},{"transform":"bucket[4]","source-id":3,"direction":"desc","null-order":"nulls-last"}]}';
    expect(stringifyJson(sortOrderToJson(sortOrderFromJson(parseJson(text))))).toBe(text);
    expect(() => sortOrderFromJson(parseJson('{"order-id":1,"fields":[{"transform":"identity","source-id":2,"direction":"up","null-order":"nulls-first"}]}'))).toThrow(
      /expected direction asc or desc, found "up"/,
    );
  });
});
