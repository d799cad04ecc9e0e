/** Canonical keys: equal exactly when the key values are equal as Iceberg values. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Types } from '../../../src/iceberg/spec/types.js';
import { encodeKey } from '../../../src/iceberg/keyindex/index.js';
import { decodeKey } from '../../../src/iceberg/keyindex/row-key.js';

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

describe('decoding key identities', () => {
  it('gives back the values a key identity stands for, numeric identities and composite texts alike', () => {
    const cases: [ReturnType<typeof Types.decimal>[] | (typeof Types.long)[] | unknown[], unknown[]][] = [
      [[Types.long], [9007199254740993n]],
      [[Types.int], [-7]],
      [[Types.decimal(20, 2)], ['18446744073709551615.05']],
      [[Types.string, Types.string], ['a"b', '[x]']],
      [[Types.binary, Types.int], [Uint8Array.of(0, 255), 3]],
      [[Types.uuid], ['0f8fad5b-d9cb-469f-a165-70867728950e']],
      [[Types.boolean, Types.long], [true, -1n]],
    ];
    for (const [types, values] of cases) {
      const t = types as Parameters<typeof encodeKey>[0];
      expect(decodeKey(t, encodeKey(t, values as Parameters<typeof encodeKey>[1]))).toEqual(values);
    }
    // the numeric identity of a one-column integer key (table-key.ts)
    expect(decodeKey([Types.long], 42)).toEqual([42n]);
    expect(decodeKey([Types.date], 19000)).toEqual([19000]);
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.string(), (l, s) => {
        const t = [Types.long, Types.string];
        expect(decodeKey(t, encodeKey(t, [l, s]))).toEqual([l, s]);
      }),
    );
    expect(() => decodeKey([Types.long, Types.long], 5)).toThrow(/stands for one column/);
  });
});
