/**
 * The snapshot converters' fast paths (canonical decimal text returned as is, one-BigInt date-times,
 * regex-free BIGINT text) give exactly what the general paths give, for every input — property tests
 * against the reference computations of src/model/values.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { daysFromCivil, formatDecimal, parseDecimal } from '../../../../src/model/values.js';
import { canonicalDecimal, parseMysqlDateTime, toBigInt } from '../../../../src/source/mysql/snapshot/snapshot-values.js';
import type { MappedColumn } from '../../../../src/source/mysql/schema/type-mapping.js';

function column(scale: number): MappedColumn {
  return { qualifiedName: 'db.t.c', scale, length: 0, kind: 'decimal', icebergType: `decimal(38,${scale})`, column: { name: 'c', columnType: `decimal(38,${scale})` } } as unknown as MappedColumn;
}

function reference(text: string, scale: number): string | 'error' {
  try {
    return formatDecimal(parseDecimal(text, scale), scale);
  } catch {
    return 'error';
  }
}

function outcome(f: () => unknown): unknown {
  try {
    return f();
  } catch {
    return 'error';
  }
}

const decimalText = fc.oneof(
  // canonical and near-canonical texts: leading zeros, signs, missing or extra fraction digits
  fc.tuple(fc.constantFrom('', '-', '+'), fc.stringMatching(/^[0-9]{1,20}$/), fc.constantFrom('', '.'), fc.stringMatching(/^[0-9]{0,8}$/)).map(([s, i, dot, f]) => s + i + dot + f),
  fc.constantFrom('0', '-0', '0.00', '-0.00', '00.00', '.50', '5.', '-.5', '1e3', ' 1.00', '1.00 ', '', '-', '12.3a'),
);

describe('snapshot value fast paths', () => {
  it('canonicalDecimal equals formatDecimal(parseDecimal(text))', () => {
    fc.assert(
      fc.property(decimalText, fc.integer({ min: 0, max: 6 }), (text, scale) => {
        expect(outcome(() => canonicalDecimal(column(scale), text, 'snapshot'))).toBe(reference(text, scale));
      }),
      { numRuns: 5000 },
    );
  });

  it('parseMysqlDateTime equals the BigInt computation over years 0001–9999', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 9999 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 28 }),
        fc.integer({ min: 0, max: 86399 }),
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 999999 }),
        (y, mo, d, sec, digits, micros) => {
          const p = (n: number, w: number) => String(n).padStart(w, '0');
          const frac = digits === 0 ? '' : '.' + p(micros, 6).slice(0, digits);
          const text = `${p(y, 4)}-${p(mo, 2)}-${p(d, 2)} ${p(Math.floor(sec / 3600), 2)}:${p(Math.floor(sec / 60) % 60, 2)}:${p(sec % 60, 2)}${frac}`;
          const seconds = BigInt(daysFromCivil(y, mo, d)) * 86400n + BigInt(sec);
          const expected = seconds * 1_000_000n + BigInt((frac.slice(1) || '0').padEnd(6, '0'));
          expect(parseMysqlDateTime(column(0), text, 'snapshot')).toBe(expected);
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('toBigInt reads integer text as BigInt and rejects everything else', () => {
    fc.assert(
      fc.property(fc.oneof(fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String), fc.string({ maxLength: 12 }), fc.constantFrom('', '+', '-', '0x10', '1e3', ' 7', '7 ', '+7', '-0', '１２')), (text) => {
        const expected = /^[+-]?\d+$/.test(text.trim()) ? BigInt(text.trim()) : 'error';
        expect(outcome(() => toBigInt(column(0), text, 'snapshot'))).toBe(expected);
      }),
      { numRuns: 5000 },
    );
  });
});
