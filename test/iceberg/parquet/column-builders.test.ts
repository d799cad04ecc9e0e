import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatDecimal, parseDecimal } from '../../../src/model/values.js';
import { Types } from '../../../src/iceberg/spec/types.js';
import { unscaledToBytes } from '../../../src/iceberg/spec/single-value.js';
import { createBuilder } from '../../../src/iceberg/parquet/column-builders.js';
import { FieldStats } from '../../../src/iceberg/parquet/field-stats.js';
import { MetricsModes } from '../../../src/iceberg/parquet/metrics-config.js';
import { compareStrings } from '../../../src/iceberg/spec/value-compare.js';

function decimalWords(unscaled: bigint): number[] {
  let x = BigInt.asUintN(128, unscaled);
  const out: number[] = [];
  for (let k = 0; k < 4; k++) {
    out.push(Number(x & 0xffffffffn));
    x >>= 32n;
  }
  return out;
}

describe('column builders', () => {
  it('decimal: the fast path and the BigInt path give the same 128-bit words and bounds', () => {
    const texts = fc.oneof(
      // plain texts of any shape the model allows: sign, leading zeros, no integer part, trailing point
      fc
        .tuple(fc.constantFrom('', '-', '+'), fc.stringMatching(/^[0-9]{0,20}$/), fc.boolean(), fc.stringMatching(/^[0-9]{0,6}$/))
        .filter(([, i, , f]) => i.length + f.length > 0)
        .map(([s, i, dot, f]) => `${s}${i}${dot || f ? '.' : ''}${f}`),
      fc.bigInt({ min: -(10n ** 38n) + 1n, max: 10n ** 38n - 1n }).map((u) => formatDecimal(u, 6)),
      fc.bigInt({ min: -(2n ** 53n) - 5n, max: 2n ** 53n + 5n }).map((u) => formatDecimal(u, 6)),
    );
    fc.assert(
      fc.property(fc.array(texts, { minLength: 1, maxLength: 30 }), (values) => {
        const valid = values.filter((v) => {
          try {
            const u = parseDecimal(v, 6);
            return u < 10n ** 38n && u > -(10n ** 38n);
          } catch {
            return false;
          }
        });
        const stats = new FieldStats(1, Types.decimal(38, 6) as never, MetricsModes.full);
        const b = createBuilder({ id: 1, name: 'd', required: true, type: Types.decimal(38, 6) }, () => stats);
        for (const v of valid) b.append(v);
        const data = b.finish();
        const words = Array.from(data.values as Uint32Array);
        const unscaled = valid.map((v) => parseDecimal(v, 6));
        expect(words).toEqual(unscaled.flatMap(decimalWords));
        if (valid.length > 0) {
          const min = unscaled.reduce((a, c) => (c < a ? c : a));
          const max = unscaled.reduce((a, c) => (c > a ? c : a));
          expect(stats.lowerBound()).toEqual(unscaledToBytes(min));
          expect(stats.upperBound()).toEqual(unscaledToBytes(max));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('decimal: rejects malformed text and too many digits on either path', () => {
    const b = createBuilder({ id: 1, name: 'd', required: false, type: Types.decimal(5, 2) }, () => undefined);
    for (const bad of ['', '-', '.', '1e', '1.2.3', 'abc', '1.234', '1000.00', '-1000', '99999999999999999999']) {
      expect(() => b.append(bad), bad).toThrow(/column d/);
    }
    b.append('+999.99');
    b.append('-0.00');
    b.append('1.50');
    expect(Array.from(b.finish().values as Uint32Array)).toEqual([...decimalWords(99999n), ...decimalWords(0n), ...decimalWords(150n)]);
  });

  it("string: TextEncoder's UTF-8 of any text (unpaired surrogates too, long values, growth), with code point order bounds", () => {
    const texts = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 12 }),
      // any UTF-16 code units, unpaired surrogates included (both encoders write U+FFFD for them)
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.string({ unit: fc.constantFrom('a', 'Z', '0', ' ', 'é', '€', '😀'), minLength: 100, maxLength: 400 }),
    );
    const enc = new TextEncoder();
    fc.assert(
      fc.property(fc.array(texts, { minLength: 1, maxLength: 60 }), (values) => {
        const stats = new FieldStats(1, Types.string as never, MetricsModes.full);
        const b = createBuilder({ id: 1, name: 's', required: true, type: Types.string }, () => stats);
        for (const v of values) b.append(v);
        const data = b.finish();
        const offsets = data.valueOffsets as Int32Array;
        const bytes = data.values as Uint8Array;
        values.forEach((v, i) => expect(bytes.subarray(offsets[i], offsets[i + 1])).toEqual(enc.encode(v)));
        const sorted = [...values].sort(compareStrings);
        expect(stats.min).toBe(sorted[0]);
        expect(stats.max).toBe(sorted[sorted.length - 1]);
      }),
      { numRuns: 200 },
    );
  });

  it('null bitmaps stay correct across growth and batches', () => {
    const b = createBuilder({ id: 1, name: 'i', required: false, type: Types.int }, () => undefined);
    const pattern = (i: number) => (i % 3 === 0 || (i > 500 && i < 700) ? null : i);
    for (let i = 0; i < 3000; i++) b.append(pattern(i));
    const d = b.finish();
    expect(d.length).toBe(3000);
    let nulls = 0;
    for (let i = 0; i < 3000; i++) {
      const valid = ((d.nullBitmap![i >> 3] >> (i & 7)) & 1) === 1;
      expect(valid).toBe(pattern(i) !== null);
      if (!valid) nulls++;
      else expect((d.values as Int32Array)[i]).toBe(i);
    }
    expect(d.nullCount).toBe(nulls);
    b.append(5);
    const d2 = b.finish();
    expect(d2.length).toBe(1);
    expect(d2.nullCount).toBe(0);
  });
});
