/**
 * PositionBitmap against a plain Set: interleaved adds and membership checks (the upsert writer asks
 * `has` before every `add`), across the 32-bit key boundary, and the sorted views after them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PositionBitmap } from '../../../src/iceberg/puffin/position-bitmap.js';

const position = fc.oneof(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 2 ** 32 - 50, max: 2 ** 32 + 50 }), fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }));

describe('PositionBitmap', () => {
  it('answers has() exactly like a Set while adds and checks interleave', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), position), { maxLength: 3000 }), (ops) => {
        const b = new PositionBitmap();
        const ref = new Set<bigint>();
        for (const [isAdd, p] of ops) {
          const big = BigInt(p);
          if (isAdd) {
            b.add(p);
            ref.add(big);
          } else {
            expect(b.has(p)).toBe(ref.has(big));
          }
        }
        expect(b.cardinality).toBe(BigInt(ref.size));
        expect(b.toArray()).toEqual([...ref].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)));
        expect(b.isEmpty).toBe(ref.size === 0);
      }),
      { numRuns: 300 },
    );
  });

  it('takes 100,000 deletes of one file, each checked before it is added', () => {
    // (Merging the whole set on every check made this quadratic: minutes instead of milliseconds.)
    const b = new PositionBitmap();
    for (let i = 0; i < 100_000; i++) {
      const p = (i * 7919) % 1_000_003;
      if (!b.has(p)) b.add(p);
    }
    expect(b.cardinality).toBe(100_000n);
    expect(b.has(7919)).toBe(true);
    expect(b.has(1)).toBe(false);
  });
});
