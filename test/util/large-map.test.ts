import { describe, expect, it } from 'vitest';
import { LargeMap } from '../../src/util/large-map.js';
import { prng } from '../../src/util/prng.js';

describe('LargeMap', () => {
  it('holds what a plain Map holds through random sets and deletes over many small shards', () => {
    for (const shardSize of [1, 3, 50]) {
      const rand = prng(shardSize);
      const large = new LargeMap<string, number>(shardSize);
      const plain = new Map<string, number>();
      for (let step = 0; step < 20_000; step++) {
        const k = `k${Math.floor(rand() * 400)}`;
        const r = rand();
        if (r < 0.55) {
          large.set(k, step);
          plain.set(k, step);
        } else if (r < 0.85) expect(large.delete(k)).toBe(plain.delete(k));
        else expect(large.get(k)).toBe(plain.get(k));
        if (step % 997 === 0) {
          large.clear();
          plain.clear();
        }
        expect(large.size).toBe(plain.size);
      }
      expect(new Map(large.entries())).toEqual(plain);
      expect([...large.keys()].sort()).toEqual([...plain.keys()].sort());
      expect([...large.values()].sort()).toEqual([...plain.values()].sort());
      for (const [k, v] of plain) expect(large.get(k)).toBe(v);
    }
  });

  it('holds more entries than one V8 Map can (2^24)', () => {
    const n = 2 ** 24 + 2;
    const large = new LargeMap<number, number>();
    for (let i = 0; i < n; i++) large.set(i, i + 1);
    expect(large.size).toBe(n);
    large.set(5, 7);
    expect(large.size).toBe(n);
    expect(large.get(n - 1)).toBe(n);
    expect(large.get(5)).toBe(7);
    expect(large.get(n)).toBeUndefined();
    expect(large.delete(n - 1)).toBe(true);
    expect(large.size).toBe(n - 1);
  }, 120_000);

  it('refuses a shard size one V8 Map cannot hold', () => {
    expect(() => new LargeMap(2 ** 24)).toThrow(/shardSize must be a whole number from 1 to 2\^24 - 1, found 16777216/);
  });
});
