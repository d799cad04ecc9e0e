/**
 * The key index's typed-array hash table (number-key-table.ts) against a Map on random sequences
 * of sets, deletes and finds: keys near each other, far apart (±2^53), negative, and re-used after
 * deletes, through growth and the rehashes that clear tombstones.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NumberKeyTable } from '../../../src/iceberg/keyindex/number-key-table.js';

const key = fc.oneof(
  fc.integer({ min: 0, max: 3000 }),
  fc.integer({ min: -3000, max: -1 }),
  fc.constantFrom(Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 32, 2 ** 32 + 1, -(2 ** 32), 2 ** 31, 4294967295),
  fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }),
);
/** The values' whole ranges, their ends drawn often: a first value of 2^31 − 1 once came back as −2^31 − 1. */
const first = fc.oneof(fc.integer({ min: 0, max: 2 ** 31 - 1 }), fc.constantFrom(0, 2 ** 31 - 2, 2 ** 31 - 1));
const second = fc.oneof(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.constantFrom(0, 2 ** 31, 2 ** 32 - 1));
const op = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('set' as const), k: key, first, second }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('delete' as const), k: key }) },
  // room made ahead of a batch (the key index before a commit's delta): one rebuild, nothing lost
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reserve' as const), more: fc.integer({ min: 0, max: 5000 }) }) },
);

function contents(t: NumberKeyTable): Map<number, [number, number]> {
  const out = new Map<number, [number, number]>();
  for (const [k, first, second] of t.entries()) {
    expect(out.has(k), `key ${k} listed twice`).toBe(false);
    out.set(k, [first, second]);
  }
  // forEach visits the same entries in the same order
  const each: [number, number, number][] = [];
  t.forEach((k, a, b) => each.push([k, a, b]));
  expect(each).toEqual([...out].map(([k, [a, b]]) => [k, a, b]));
  return out;
}

describe('NumberKeyTable = Map', () => {
  it('random sets and deletes: every find, the size and the entries agree with a Map', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 4000 }), (ops) => {
        const t = new NumberKeyTable();
        const model = new Map<number, [number, number]>();
        for (const o of ops) {
          if (o.kind === 'reserve') {
            t.reserve(o.more);
            expect(t.size).toBe(model.size);
            continue;
          }
          if (o.kind === 'set') {
            t.set(o.k, o.first, o.second);
            model.set(o.k, [o.first, o.second]);
          } else {
            expect(t.delete(o.k)).toBe(model.delete(o.k));
          }
          const slot = t.find(o.k);
          const m = model.get(o.k);
          expect(slot < 0 ? undefined : [t.first(slot), t.second(slot)]).toEqual(m);
        }
        expect(t.size).toBe(model.size);
        expect(contents(t)).toEqual(model);
        for (const [k, v] of model) {
          const slot = t.find(k);
          expect([t.first(slot), t.second(slot)]).toEqual(v);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('the values at the ends of their ranges come back as set, through a rehash', () => {
    const t = new NumberKeyTable();
    const ends: [number, number, number][] = [
      [1, 2 ** 31 - 1, 2 ** 32 - 1],
      [2, 0, 0],
      [3, 2 ** 31 - 1, 0],
      [4, 0, 2 ** 32 - 1],
    ];
    for (const [k, a, b] of ends) t.set(k, a, b);
    for (let i = 100; i < 5000; i++) t.set(i, i, i); // grows past the first capacity: every entry is re-inserted
    for (const [k, a, b] of ends) {
      const slot = t.find(k);
      expect([t.first(slot), t.second(slot)]).toEqual([a, b]);
    }
    expect([...t.entries()].filter(([k]) => k < 5)).toEqual(expect.arrayContaining(ends));
  });

  it('a million keys set, half deleted and set again: tombstones are cleaned, nothing is lost', () => {
    const t = new NumberKeyTable();
    const n = 1_000_000;
    for (let i = 0; i < n; i++) t.set(i * 7919, i % 17, i);
    for (let i = 0; i < n; i += 2) expect(t.delete(i * 7919)).toBe(true);
    expect(t.size).toBe(n / 2);
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < n; i += 2) t.set(i * 7919 + 1, 1, round);
      for (let i = 0; i < n; i += 2) t.delete(i * 7919 + 1);
    }
    expect(t.size).toBe(n / 2);
    for (let i = 0; i < n; i++) {
      const slot = t.find(i * 7919);
      if (i % 2 === 0) expect(slot).toBe(-1);
      else expect([t.first(slot), t.second(slot)]).toEqual([i % 17, i]);
    }
  });
  it('a table handed over by its state (to another thread: worker-key-table.ts) is the same table', () => {
    const t = new NumberKeyTable(3000);
    const n = 2500;
    for (let i = 0; i < n; i++) t.set(i * 7 - 4000, i % 11, 2 ** 32 - 1 - i);
    expect(t.delete(10 * 7 - 4000)).toBe(true);
    const expected = contents(t);
    const state = t.state();
    const copy = NumberKeyTable.fromState(structuredClone(state, { transfer: [state.buffer] }));
    expect(copy.size).toBe(n - 1);
    expect(contents(copy)).toEqual(expected);
    copy.set(3, 1, 2);
    expect(copy.first(copy.find(3))).toBe(1);
    expect(() => NumberKeyTable.fromState({ buffer: new ArrayBuffer(1000), size: 0, occupied: 0 })).toThrow(/key table state of 1000 bytes/);
  });
});
