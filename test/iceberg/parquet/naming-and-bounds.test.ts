import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { Types } from '../../../src/iceberg/spec/types.js';
import { compareBytes, compareStrings } from '../../../src/iceberg/spec/value-compare.js';
import { makeCompatibleName } from '../../../src/iceberg/parquet/compatible-name.js';
import { toArrowSchema, FIELD_ID_KEY } from '../../../src/iceberg/parquet/arrow-schema.js';
import { truncateBinaryMax, truncateBinaryMin, truncateStringMax, truncateStringMin } from '../../../src/iceberg/parquet/bound-truncation.js';
import { MetricsModes, metricsConfigFromProperties, metricsModeFor, parseMetricsMode } from '../../../src/iceberg/parquet/metrics-config.js';

describe('physical column names (Java AvroSchemaUtil.makeCompatibleName, ASCII rules)', () => {
  it('keeps valid names and rewrites the rest as icebird’s sanitize expects', () => {
    expect(makeCompatibleName('customer_id')).toBe('customer_id');
    expect(makeCompatibleName('_x')).toBe('_x');
    expect(makeCompatibleName('1st')).toBe('_1st');
    expect(makeCompatibleName('a-b c')).toBe('a_x2Db_x20c');
    expect(makeCompatibleName('a.b')).toBe('a_x2Eb');
    expect(makeCompatibleName('naïve')).toBe('na_xEFve');
    expect(makeCompatibleName('😀')).toBe('_xD83D_xDE00'); // per UTF-16 unit, as Java
    expect(makeCompatibleName('x1')).toBe('x1');
  });

  it('puts ids on every Arrow field and refuses names that collide after sanitizing', () => {
    const schema = new Schema(0, [
      { id: 1, name: 'a b', required: true, type: Types.int },
      { id: 2, name: 'l', required: false, type: { kind: 'list', elementId: 3, elementRequired: true, element: Types.long } },
    ]);
    const arrowSchema = toArrowSchema(schema);
    expect(arrowSchema.fields.map((f) => [f.name, f.nullable, f.metadata.get(FIELD_ID_KEY)])).toEqual([
      ['a_x20b', false, '1'],
      ['l', true, '2'],
    ]);
    const element = arrowSchema.fields[1].type.children[0];
    expect([element.name, element.nullable, element.metadata.get(FIELD_ID_KEY)]).toEqual(['element', false, '3']);
    expect(() =>
      toArrowSchema(
        new Schema(0, [
          { id: 1, name: 'a b', required: true, type: Types.int },
          { id: 2, name: 'a_x20b', required: true, type: Types.int },
        ]),
      ),
    ).toThrow(/both become the Parquet column "a_x20b"/);
    expect(() => toArrowSchema(new Schema(0, [{ id: 1, name: 'u', required: false, type: Types.unknown }]))).toThrow(/no writable columns/);
  });
});

const wellFormed = (x: string): boolean => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(x);

describe('bound truncation', () => {
  it('follows Java’s examples and edge cases', () => {
    expect(truncateStringMin('abc', 16)).toBe('abc');
    expect(truncateStringMax('abc', 2)).toBe('ac');
    expect(truncateStringMax('a\u{10FFFF}\u{10FFFF}x', 3)).toBe('b');
    expect(truncateStringMax('\u{10FFFF}\u{10FFFF}x', 2)).toBeNull();
    expect(truncateStringMax('a\uD7FFz', 2)).toBe('a\uE000'); // skips the surrogate range
    expect(truncateStringMin('😀😀😀', 2)).toBe('😀😀');
    expect(truncateBinaryMax(Uint8Array.of(1, 0xff, 0xff, 3), 3)).toEqual(Uint8Array.of(2));
    expect(truncateBinaryMax(Uint8Array.of(0xff, 0xff, 3), 2)).toBeNull();
    expect(truncateBinaryMin(Uint8Array.of(1, 2, 3), 2)).toEqual(Uint8Array.of(1, 2));
  });

  it('lower ≤ value ≤ upper, within the length (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.integer({ min: 1, max: 20 }), (s, n) => {
        const lo = truncateStringMin(s, n);
        const hi = truncateStringMax(s, n);
        expect(compareStrings(lo, s)).toBeLessThanOrEqual(0);
        expect([...lo].length).toBeLessThanOrEqual(n);
        if (hi !== null) {
          expect(compareStrings(hi, s)).toBeGreaterThanOrEqual(0);
          expect([...hi].length).toBeLessThanOrEqual(n);
          if (wellFormed(s)) expect(wellFormed(hi)).toBe(true);
        }
      }),
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 30 }), fc.integer({ min: 1, max: 20 }), (b, n) => {
        const lo = truncateBinaryMin(b, n);
        const hi = truncateBinaryMax(b, n);
        expect(compareBytes(lo, b)).toBeLessThanOrEqual(0);
        if (hi !== null) {
          expect(compareBytes(hi, b)).toBeGreaterThanOrEqual(0);
          expect(hi.length).toBeLessThanOrEqual(n);
        } else {
          expect(b.subarray(0, n).every((x) => x === 0xff)).toBe(true);
        }
      }),
    );
  });
});

describe('metrics config (Java MetricsConfig)', () => {
  const schema = new Schema(0, [
    { id: 1, name: 'id', required: true, type: Types.long },
    { id: 2, name: 's', required: false, type: { kind: 'struct', fields: [{ id: 3, name: 'inner', required: false, type: Types.string }] } },
    { id: 4, name: 'big', required: false, type: Types.binary },
  ]);

  it('parses modes', () => {
    expect(parseMetricsMode('None')).toEqual(MetricsModes.none);
    expect(parseMetricsMode('counts')).toEqual(MetricsModes.counts);
    expect(parseMetricsMode('full')).toEqual(MetricsModes.full);
    expect(parseMetricsMode('truncate(8)')).toEqual({ kind: 'truncate', length: 8 });
    expect(() => parseMetricsMode('truncate(0)')).toThrow(/positive length/);
    expect(() => parseMetricsMode('some')).toThrow(/expected none, counts, full or truncate\(N\)/);
  });

  it('applies the default, per-column overrides by dotted name, and the inferred-column limit', () => {
    const c = metricsConfigFromProperties({ 'write.metadata.metrics.default': 'counts', 'write.metadata.metrics.column.s.inner': 'full', 'write.metadata.metrics.column.big': 'none' }, schema);
    expect(metricsModeFor(c, 1)).toEqual(MetricsModes.counts);
    expect(metricsModeFor(c, 3)).toEqual(MetricsModes.full);
    expect(metricsModeFor(c, 4)).toEqual(MetricsModes.none);
    expect(metricsModeFor(metricsConfigFromProperties({}, schema), 4)).toEqual({ kind: 'truncate', length: 16 });
    const limited = metricsConfigFromProperties({ 'write.metadata.metrics.max-inferred-column-defaults': '2' }, schema);
    expect(metricsModeFor(limited, 1)).toEqual({ kind: 'truncate', length: 16 });
    expect(metricsModeFor(limited, 3)).toEqual({ kind: 'truncate', length: 16 });
    expect(metricsModeFor(limited, 4)).toEqual(MetricsModes.none);
    expect(() => metricsConfigFromProperties({ 'write.metadata.metrics.column.nope': 'full' }, schema)).toThrow(/names no column/);
  });
});
