/**
 * TableKey identities: a key of one integer-valued column is identified by its number (no string per
 * row), exactly — one value, one identity, however the value is given — and everything else by the
 * canonical string; nulls in keys are still refused.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { Types, type IcebergType } from '../../../src/iceberg/spec/types.js';
import { TableKey } from '../../../src/iceberg/keyindex/table-key.js';

function keyOf(type: IcebergType): TableKey {
  return TableKey.identifier(new Schema(0, [{ id: 1, name: 'k', required: true, type }, { id: 2, name: 'v', required: false, type: Types.string }], [1]));
}

describe('TableKey identities', () => {
  it('a long key: equal values give one identity, different values different ones (bigint or number, beyond 2^53 too)', () => {
    const key = keyOf(Types.long);
    const longs = fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.bigInt({ min: -(2n ** 54n), max: 2n ** 54n }));
    fc.assert(
      fc.property(longs, longs, (a, b) => {
        const ka = key.keyOfRow([a, 'x']);
        expect(key.keyOfRow([b, 'y']) === ka).toBe(a === b);
        expect(key.encode([a])).toBe(ka);
        if (a >= -(2n ** 53n) + 1n && a <= 2n ** 53n - 1n) {
          expect(ka).toBe(Number(a));
          expect(key.keyOfRow([Number(a), 'z'])).toBe(ka);
        } else {
          expect(typeof ka).toBe('string');
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('an int or date key is its number; a string or decimal key its canonical text', () => {
    expect(keyOf(Types.int).keyOfRow([-7, null])).toBe(-7);
    expect(keyOf(Types.date).encode([19000])).toBe(19000);
    expect(keyOf(Types.string).keyOfRow(['7', null])).toBe('s7');
    expect(keyOf(Types.decimal(10, 2)).keyOfRow(['1.50', null])).toBe(keyOf(Types.decimal(10, 2)).keyOfRow(['1.5', null]));
  });

  it('still refuses null keys and values of the wrong type', () => {
    expect(() => keyOf(Types.long).keyOfRow([null, 'x'])).toThrow(/identifier field k is null/);
    expect(() => keyOf(Types.long).encode([null])).toThrow(/identifier field k is null/);
    expect(() => keyOf(Types.long).keyOfRow([1.5, 'x'])).toThrow(/expected a value of type long/);
    expect(() => keyOf(Types.int).keyOfRow([2n, 'x'])).toThrow(/expected a value of type int/);
  });
});
