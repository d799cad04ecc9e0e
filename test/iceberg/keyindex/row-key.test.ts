/** Canonical keys: equal exactly when the key values are equal as Iceberg values. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Types } from '../../../src/iceberg/spec/types.js';
import { encodeKey } from '../../../src/iceberg/keyindex/index.js';

describe('canonical row keys', () => {
  it('compares longs exactly, whether given as bigint or safe number, far beyond 2^53', () => {
    const t = [Types.long];
    expect(encodeKey(t, [5n])).toBe(encodeKey(t, [5]));
    expect(encodeKey(t, [2n ** 63n - 1n])).not.toBe(encodeKey(t, [2n ** 63n - 2n]));
    expect(encodeKey(t, [9007199254740993n])).not.toBe(encodeKey(t, [9007199254740992n]));
    expect(() => encodeKey(t, [2 ** 60])).toThrow(/expected a value of type long/);
  });

  it('compares decimals by value at the column scale and bytes by content', () => {
    const d = [Types.decimal(20, 2)];
    expect(encodeKey(d, ['1.50'])).toBe(encodeKey(d, ['1.5']));
    expect(encodeKey(d, ['18446744073709551615.00'])).not.toBe(encodeKey(d, ['18446744073709551614.00']));
    expect(() => encodeKey(d, ['1.005'])).toThrow(/at most 2 fraction digits/);
    const b = [Types.binary];
    expect(encodeKey(b, [Uint8Array.of(1, 2)])).toBe(encodeKey(b, [new Uint8Array([1, 2])]));
    expect(encodeKey(b, [Uint8Array.of(1, 2)])).not.toBe(encodeKey(b, [Uint8Array.of(1, 2, 0)]));
  });

  it('is injective on composite keys of strings (no separator can forge another key)', () => {
    const t = [Types.string, Types.string];
    fc.assert(
      fc.property(fc.tuple(fc.string(), fc.string()), fc.tuple(fc.string(), fc.string()), (a, b) => {
        const same = a[0] === b[0] && a[1] === b[1];
        expect(encodeKey(t, a) === encodeKey(t, b)).toBe(same);
      }),
      { numRuns: 2000 },
    );
    expect(encodeKey(t, ['a","b', 'c'])).not.toBe(encodeKey(t, ['a', 'b","c']));
  });

  it('keeps types apart: the int 1 and the string "1" are different keys', () => {
    expect(encodeKey([Types.int], [1])).not.toBe(encodeKey([Types.string], ['1']));
  });
});
