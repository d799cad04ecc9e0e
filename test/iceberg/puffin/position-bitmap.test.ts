/**
 * PositionBitmap against a plain Set: interleaved adds and membership checks (the upsert writer asks
 * `has` before every `add`), across the 32-bit key boundary, and the sorted views after them; and
 * its dense form (a key's positions filling 1/32 of their range): taken, grown, and left again for a
 * far position.
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

  it('answers like a Set through the dense form: dense ranges, growth, far positions that turn it sparse again', () => {
    // first a narrow range (dense at the first merge), then positions up to 5 times beyond it too
    // (growth), and a few far ones spliced in anywhere (back to sparse); in one key or across the
    // 32-bit boundary
    const op = fc.constantFrom('add', 'addIfAbsent', 'has');
    const at = (max: number) => fc.tuple(op, fc.constantFrom(0, 0, 0, 1), fc.integer({ min: 0, max })).map(([o, key, l]) => [o, key * 2 ** 32 + l] as const);
    const far = fc.tuple(fc.nat(), op, fc.constantFrom(0, 1), fc.integer({ min: 200_000, max: 2 ** 32 - 1 }));
    const run = fc.tuple(fc.array(at(20_000), { minLength: 2000, maxLength: 6000 }), fc.array(at(100_000), { maxLength: 6000 }), fc.array(far, { maxLength: 3 })).map(([narrow, wide, fars]) => {
      const out: (readonly [string, number])[] = [...narrow, ...wide];
      for (const [i, o, key, l] of fars) out.splice(i % out.length, 0, [o, key * 2 ** 32 + l]);
      return out;
    });
    fc.assert(
      fc.property(run, (ops) => {
        const b = new PositionBitmap();
        const ref = new Set<number>();
        for (const [op, p] of ops) {
          if (op === 'has') expect(b.has(p)).toBe(ref.has(p));
          else if (op === 'add') b.add(p);
          else expect(b.addIfAbsent(p)).toBe(!ref.has(p));
          if (op !== 'has') ref.add(p);
        }
        const sorted = [...ref].sort((x, y) => x - y);
        expect(b.cardinality).toBe(BigInt(ref.size));
        expect([...b.sortedNumbers()]).toEqual(sorted);
        for (const p of sorted.slice(0, 200)) expect(b.has(p)).toBe(true);
        expect(b.has(sorted[sorted.length - 1]! + 1)).toBe(ref.has(sorted[sorted.length - 1]! + 1));
      }),
      // no shrinking: a failing run of thousands of operations takes minutes to shrink
      { numRuns: 60, endOnFailure: true },
    );
  });

  it('keeps a dense set exact when a far position turns it sparse, and when it turns dense again', () => {
    const b = new PositionBitmap();
    const ref: number[] = [];
    for (let i = 0; i < 4000; i += 2) {
      b.add(i);
      ref.push(i);
    }
    expect(b.has(3998)).toBe(true); // merged and dense: 2,000 positions in 4,000
    expect(b.addIfAbsent(2 ** 32 - 1)).toBe(true); // 2^27 words for 2,001 positions: sparse again
    ref.push(2 ** 32 - 1);
    expect(b.addIfAbsent(2 ** 32 - 1)).toBe(false);
    expect(b.addIfAbsent(2)).toBe(false);
    for (let i = 1; i < 4000; i += 2) expect(b.addIfAbsent(i)).toBe(true);
    for (let i = 1; i < 4000; i += 2) ref.push(i);
    ref.sort((x, y) => x - y);
    expect(b.cardinality).toBe(BigInt(ref.length));
    expect([...b.sortedNumbers()]).toEqual(ref);
    expect(b.keyed()).toEqual([[0, Uint32Array.from(ref)]]);
  });
});
