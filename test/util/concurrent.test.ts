import { describe, expect, it } from 'vitest';
import { mapConcurrently } from '../../src/util/concurrent.js';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('mapConcurrently', () => {
  it('keeps the items order with at most `limit` calls in flight', async () => {
    let inFlight = 0;
    let most = 0;
    const out = await mapConcurrently([5, 1, 4, 2, 3, 0, 2], 3, async (ms, i) => {
      most = Math.max(most, ++inFlight);
      await tick(ms);
      inFlight--;
      return `${i}:${ms}`;
    });
    expect(out).toEqual(['0:5', '1:1', '2:4', '3:2', '4:3', '5:0', '6:2']);
    expect(most).toBe(3);
    expect(await mapConcurrently([], 4, async () => 1)).toEqual([]);
  });

  it('starts nothing after a failure and throws it once the calls in flight settled', async () => {
    const started: number[] = [];
    const settled: number[] = [];
    const run = mapConcurrently([0, 1, 2, 3, 4, 5], 2, async (i) => {
      started.push(i);
      await tick(i === 0 ? 1 : 5);
      settled.push(i);
      if (i === 0) throw new Error('first failed');
      return i;
    });
    await expect(run).rejects.toThrow('first failed');
    expect(started).toEqual([0, 1]);
    expect(settled.sort()).toEqual([0, 1]);
  });
});
