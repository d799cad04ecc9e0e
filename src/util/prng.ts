/**
 * A small seeded pseudo-random generator (mulberry32): numbers in [0, 1), the same sequence for the
 * same seed — for the demo's sample data, the benchmark's datasets and the randomized tests, so that
 * a run can be replayed from its seed. Not for anything that must be unpredictable.
 */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
