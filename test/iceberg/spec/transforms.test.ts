import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { murmur3Hash32 } from '../../../src/iceberg/spec/murmur3.js';
import { applyTransform, bucketHash, bucketValue, canTransform } from '../../../src/iceberg/spec/transforms.js';
import { parsePartitionSpec } from '../../../src/iceberg/spec/partition-spec-text.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { fromJsonSingleValue } from '../../../src/iceberg/spec/single-value.js';
import { parsePrimitive, Types, type PrimitiveType } from '../../../src/iceberg/spec/types.js';
import { parseDate, parseTimestamp } from '../../../src/model/values.js';

describe('bucket hash: spec Appendix B test vectors', () => {
  const v = (t: string, json: string) => fromJsonSingleValue(parsePrimitive(t), JSON.parse(json));
  // [type, value as JSON single value, expected hash]
  const vectors: [string, string, number][] = [
    ['int', '34', 2017239379],
    ['long', '34', 2017239379],
    ['decimal(4,2)', '"14.20"', -500754589],
    ['date', '"2017-11-16"', -653330422],
    ['time', '"22:31:08"', -662762989],
    ['timestamp', '"2017-11-16T22:31:08"', -2047944441],
    ['timestamp', '"2017-11-16T22:31:08.000001"', -1207196810],
    ['timestamptz', '"2017-11-16T14:31:08-08:00"', -2047944441],
    ['timestamptz', '"2017-11-16T14:31:08.000001-08:00"', -1207196810],
    ['timestamp_ns', '"2017-11-16T22:31:08"', -2047944441],
    ['timestamp_ns', '"2017-11-16T22:31:08.000001001"', -1207196810],
    ['timestamptz_ns', '"2017-11-16T14:31:08-08:00"', -2047944441],
    ['timestamptz_ns', '"2017-11-16T14:31:08.000001001-08:00"', -1207196810],
    ['string', '"iceberg"', 1210000089],
    ['uuid', '"f79c3e09-677c-4bbd-a479-3f349cb785e7"', 1488055340],
    ['fixed[4]', '"00010203"', -188683207],
    ['binary', '"00010203"', -188683207],
    // "not valid for bucketing" table
    ['boolean', 'true', 1392991556],
    ['float', '1.0', -142385009],
    ['float', '0.0', 1669671676],
    ['float', '-0.0', 1669671676],
    ['double', '1.0', -142385009],
    ['double', '-0.0', 1669671676],
  ];
  for (const [type, json, hash] of vectors) {
    it(`${type} ${json} → ${hash}`, () => {
      expect(bucketHash(parsePrimitive(type), v(type, json))).toBe(hash);
    });
  }

  it('"34" as a string hashes differently from 34 (spec Schema Evolution example)', () => {
    expect(bucketHash(Types.string, '34')).toBe(-427558391);
  });

  it('murmur3 on the canonical vectors of the reference implementation', () => {
    const enc = new TextEncoder();
    expect(murmur3Hash32(new Uint8Array(0))).toBe(0);
    expect(murmur3Hash32(enc.encode('hello'))).toBe(0x248bfa47 | 0);
    expect(murmur3Hash32(enc.encode('The quick brown fox jumps over the lazy dog'))).toBe(0x2e4ff723 | 0);
  });

  it('int and long values hash alike, so int→long promotion keeps buckets (property)', () => {
    fc.assert(fc.property(fc.integer(), (i) => bucketValue(Types.int, i, 16) === bucketValue(Types.long, BigInt(i), 16)));
  });

  it('bucket values are in [0, N)', () => {
    fc.assert(fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.integer({ min: 1, max: 1000 }), (x, n) => {
      const b = bucketValue(Types.long, x, n);
      return b >= 0 && b < n;
    }));
  });
});

describe('truncate transform (spec examples)', () => {
  const tr = (t: PrimitiveType, w: number, v: any) => applyTransform({ kind: 'truncate', width: w }, t, v);
  it('int and long remainders are positive', () => {
    expect(tr(Types.int, 10, 1)).toBe(0);
    expect(tr(Types.int, 10, -1)).toBe(-10);
    expect(tr(Types.long, 10, 1n)).toBe(0n);
    expect(tr(Types.long, 10, -1n)).toBe(-10n);
    expect(tr(Types.int, 10, -10)).toBe(-10);
  });
  it('decimals truncate the unscaled value: W=50, s=2: 10.65 → 10.50', () => {
    expect(tr(Types.decimal(9, 2), 50, '10.65')).toBe('10.50');
    expect(tr(Types.decimal(9, 2), 50, '-0.05')).toBe('-0.50');
  });
  it('strings by code points, binary by bytes', () => {
    expect(tr(Types.string, 3, 'iceberg')).toBe('ice');
    expect(tr(Types.string, 2, '😀😀😀')).toBe('😀😀');
    expect(tr(Types.string, 5, 'ab')).toBe('ab');
    expect(tr(Types.binary, 3, Uint8Array.of(1, 2, 3, 4, 5))).toEqual(Uint8Array.of(1, 2, 3));
  });
});

describe('date and time transforms', () => {
  const ts = (s: string) => parseTimestamp(s);
  it('year, month, day, hour from 1970 with floor semantics before the epoch', () => {
    const d = parseDate('2017-11-16');
    expect(applyTransform({ kind: 'year' }, Types.date, d)).toBe(47);
    expect(applyTransform({ kind: 'month' }, Types.date, d)).toBe(47 * 12 + 10);
    expect(applyTransform({ kind: 'day' }, Types.date, d)).toBe(d);
    expect(applyTransform({ kind: 'year' }, Types.date, -1)).toBe(-1);
    expect(applyTransform({ kind: 'month' }, Types.date, -1)).toBe(-1);
    expect(applyTransform({ kind: 'month' }, Types.date, parseDate('1969-11-30'))).toBe(-2);
    expect(applyTransform({ kind: 'hour' }, Types.timestamp, ts('2017-11-16T22:31:08'))).toBe(419686);
    expect(applyTransform({ kind: 'hour' }, Types.timestamptz, -1n)).toBe(-1);
    expect(applyTransform({ kind: 'day' }, Types.timestamp, -1n)).toBe(-1);
    expect(applyTransform({ kind: 'day' }, Types.timestampNs, ts('2017-11-16T22:31:08') * 1000n)).toBe(d);
    expect(applyTransform({ kind: 'year' }, Types.timestamptzNs, -1n)).toBe(-1);
  });
  it('null in, null out; void always null; wrong source types rejected', () => {
    expect(applyTransform({ kind: 'bucket', n: 4 }, Types.int, null)).toBe(null);
    expect(applyTransform({ kind: 'void' }, Types.int, 5)).toBe(null);
    expect(canTransform({ kind: 'hour' }, Types.date)).toBe(false);
    expect(() => applyTransform({ kind: 'truncate', width: 2 }, Types.uuid, 'x')).toThrow(/truncate\[2\] cannot be applied to a uuid column/);
  });
});

describe('partition spec text', () => {
  const schema = new Schema(0, [
    { id: 1, name: 'id', required: true, type: Types.long },
    { id: 2, name: 'name', required: false, type: Types.string },
    { id: 3, name: 'created_at', required: false, type: Types.timestamptz },
    { id: 4, name: 'region', required: false, type: Types.string },
    { id: 5, name: 'd', required: false, type: Types.date },
  ]);
  it('parses transform calls and bare names with Java default names and ids from 1000', () => {
    const spec = parsePartitionSpec('day(created_at), bucket(16, id), truncate(4, name), identity(region), d', schema);
    expect(spec).toEqual({
      specId: 0,
      fields: [
        { sourceId: 3, fieldId: 1000, name: 'created_at_day', transform: { kind: 'day' } },
        { sourceId: 1, fieldId: 1001, name: 'id_bucket', transform: { kind: 'bucket', n: 16 } },
        { sourceId: 2, fieldId: 1002, name: 'name_trunc', transform: { kind: 'truncate', width: 4 } },
        { sourceId: 4, fieldId: 1003, name: 'region', transform: { kind: 'identity' } },
        { sourceId: 5, fieldId: 1004, name: 'd', transform: { kind: 'identity' } },
      ],
    });
    expect(parsePartitionSpec(['hours(created_at)', 'truncate(name, 2)'], schema).fields.map((f) => f.name)).toEqual(['created_at_hour', 'name_trunc']);
    expect(parsePartitionSpec('', schema).fields).toEqual([]);
  });
  it('rejects unknown columns, wrong types, bad widths and duplicates with what to write instead', () => {
    expect(() => parsePartitionSpec('day(missing)', schema)).toThrow(/column "missing" is not in the table schema \(columns: id, name, created_at, region, d\)/);
    expect(() => parsePartitionSpec('hour(d)', schema)).toThrow(/hour cannot be applied to column d of type date/);
    expect(() => parsePartitionSpec('bucket(0, id)', schema)).toThrow(/between 1 and 2147483647/);
    expect(() => parsePartitionSpec('zorder(id)', schema)).toThrow(/unknown transform zorder/);
    expect(() => parsePartitionSpec('day(created_at), days(created_at)', schema)).toThrow(/repeats an earlier partition field/);
  });
});
