/**
 * The freshness benchmark's arithmetic (bench/freshness-latency.ts, bench/freshness-bounds.ts) and
 * its load's bookkeeping (bench/freshness-load.ts), on hand-made timings whose answers are worked
 * out here.
 */
import { describe, expect, it } from 'vitest';
import { lakeBounds, type FreshnessSample } from '../../bench/freshness-bounds.js';
import { latencyReport, weightedQuantiles } from '../../bench/freshness-latency.js';
import { gtidSequence, transactionSql, WriterKeys } from '../../bench/freshness-load.js';
import { prng } from '../../bench/dataset.js';

describe('weightedQuantiles', () => {
  it('counts each value as often as its weight (nearest rank)', () => {
    // 1 ×1, 10 ×8, 100 ×1: ranks 1…10
    const q = weightedQuantiles([100, 1, 10], [1, 1, 8]);
    expect(q.p50).toBe(10);
    expect(q.p90).toBe(10);
    expect(q.p99).toBe(100);
    expect(q.max).toBe(100);
    expect(q.mean).toBeCloseTo((100 + 1 + 80) / 10, 9);
  });

  it('is all zeros without values', () => {
    expect(weightedQuantiles([], [])).toEqual({ p50: 0, p90: 0, p99: 0, max: 0, mean: 0 });
  });
});

describe('latencyReport', () => {
  // Two floe commits: the first 1000→1100 (swap at 1090), the second 1300→1450 (swap at 1440).
  const commits = [
    { endMs: 1100, seconds: 0.1 },
    { endMs: 1450, seconds: 0.15 },
  ];
  // Polls found the first version at 1105 (up to seq 12), the second at 1460 (up to seq 15).
  const visible = [
    { seq: 12, atMs: 1105, swappedMs: 1090 },
    { seq: 15, atMs: 1460, swappedMs: 1440 },
  ];

  it('matches each transaction to the first version holding its GTID, and splits the time', () => {
    const txs = { seq: [11, 12, 14, 16], atMs: [900, 950, 1200, 1400], changes: [10, 10, 30, 5] };
    const r = latencyReport(txs, visible, commits, 1000);
    // seq 11 and 12: seen at 1105 → 205 and 155 ms; seq 14: seen at 1460 → 260 ms; seq 16: never
    expect(r.changes).toBe(50);
    expect(r.unseen).toBe(5);
    expect(r.latencyMs.max).toBe(260);
    expect(r.latencyMs.p50).toBe(260); // 30 of the 50 changes
    expect(r.latencyMs.mean).toBeCloseTo((205 * 10 + 155 * 10 + 260 * 30) / 50, 9);
    // seq 14: committed at 1200, the second commit started at 1300 (1450 − 150), swapped at 1440, seen at 1460
    expect(r.parts.toCommitStartMs.max).toBe(100);
    expect(r.parts.toSwapMs.max).toBe(140);
    expect(r.parts.toPollMs.max).toBe(20);
    // seq 11: committed at 900, the first commit started at 1000: 100 + 90 + 15 = 205
    expect(r.parts.toCommitStartMs.p50).toBe(100);
    // the slowest 1% of 50 changes is one change: one of seq 14's
    expect(r.slowestPercent).toEqual({ count: 30, toCommitStartMs: 100, toSwapMs: 140, toPollMs: 20 });
    // windows of 1 s from the first commit time (900): [900, 1900) holds all three seen transactions
    expect(r.windows).toEqual([{ startSeconds: 0, changes: 50, p50: 260, p99: 260, max: 260 }]);
  });

  it('refuses polls that saw the committed sequence go back', () => {
    expect(() => latencyReport({ seq: [], atMs: [], changes: [] }, [visible[1]!, { seq: 9, atMs: 1500, swappedMs: 1490 }], commits)).toThrow(/went back from 15 to 9/);
  });
});

describe('lakeBounds', () => {
  // floe commits every 200 ms for 50 s; rounds end at 10.1, 20.1, 30.1 and 40.1 s, each started by the
  // commit that ended at the full second before it; expiry beyond 20 s, the last 10 kept
  const commitEnds = Array.from({ length: 250 }, (_, i) => 200 * (i + 1));
  const rounds = [10_100, 20_100, 30_100, 40_100];
  const settings = { maintenanceIntervalMs: 10_000, expireOlderThanMs: 20_000, retainLast: 10, manifestMinCount: 100, streamingSeconds: 50 };
  // a sample every 2.5 s; data files: the round's low point plus one a commit since the round
  const sample = (atMs: number, lows: readonly number[], snapshots = 20, manifests = 20): FreshnessSample => {
    const round = rounds.filter((r) => r <= atMs).length;
    const dataFiles = (round === 0 ? 0 : lows[round - 1]!) + Math.floor((atMs - (rounds[round - 1] ?? 0)) / 200);
    return {
      atMs,
      sampleMs: 50,
      elapsedSeconds: atMs / 1000,
      commits: atMs / 200,
      metadataBytes: 100_000,
      filesUnderTable: 100,
      bytesUnderTable: 1,
      dataFiles,
      deleteFiles: { equality: 0, position: 0, deletionVectors: dataFiles },
      manifests,
      snapshots,
      rssBytes: 1,
      openFds: 1,
      loadAverage: 1,
    };
  };
  const run = (lows: readonly number[]) => Array.from({ length: 20 }, (_, i) => sample(2_500 * (i + 1), lows));

  it('holds a lake whose low point after each round stays put, and flags one whose low point climbs', () => {
    // first samples after the rounds: 12.5, 22.5, 32.5, 42.5 s, each 12 commits after its round
    const ok = lakeBounds(run([3, 4, 3, 5]), rounds, commitEnds, settings);
    expect(ok.measures.dataFiles).toEqual({ min: 12, max: 54, early: 16, late: 17, bounded: true });
    expect(ok.measures.snapshots.bounded).toBe(true);
    // the files under the table are reported, not judged
    expect(ok.measures.filesUnderTable.bounded).toBeUndefined();
    expect(ok.withinBounds).toBe(true);
    const bad = lakeBounds(run([3, 10, 20, 30]), rounds, commitEnds, settings);
    // lows 15, 22 | 32, 42: 42 > 22 × 1.25 + 8
    expect(bad.measures.dataFiles).toMatchObject({ early: 22, late: 42, bounded: false });
    expect(bad.withinBounds).toBe(false);
  });

  it('allows the snapshots that expiry keeps: the last 10 and those of the expiry window before the round', () => {
    const samples = run([3, 4, 3, 5]);
    // at 45 s the round before began at 40 s: commits since 20 s are kept (125), with 10 and 8 of slack
    samples[17] = sample(45_000, [3, 4, 3, 5], 143);
    expect(lakeBounds(samples, rounds, commitEnds, settings).measures.snapshots.bounded).toBe(true);
    samples[17] = sample(45_000, [3, 4, 3, 5], 144);
    expect(lakeBounds(samples, rounds, commitEnds, settings).measures.snapshots.bounded).toBe(false);
    // and the maintenance commits the sample holds (a compaction per step of a round)
    samples[17] = { ...sample(45_000, [3, 4, 3, 5], 150), maintenanceSnapshots: 7 };
    expect(lakeBounds(samples, rounds, commitEnds, settings).measures.snapshots.bounded).toBe(true);
    samples[17] = { ...sample(45_000, [3, 4, 3, 5], 151), maintenanceSnapshots: 7 };
    expect(lakeBounds(samples, rounds, commitEnds, settings).measures.snapshots.bounded).toBe(false);
    // counted back from the time floe planned the round's expiry, when it says: 2 s earlier, 10 commits more
    const planned = rounds.map((r) => r - 2_100);
    samples[17] = sample(45_000, [3, 4, 3, 5], 153);
    expect(lakeBounds(samples, rounds, commitEnds, settings, planned).measures.snapshots.bounded).toBe(true);
    samples[17] = sample(45_000, [3, 4, 3, 5], 154);
    expect(lakeBounds(samples, rounds, commitEnds, settings, planned).measures.snapshots.bounded).toBe(false);
  });

  it('allows the manifests below the rewrite threshold plus two per commit since the round', () => {
    const samples = run([3, 4, 3, 5]);
    // at 45 s: 25 commits since the round began at 40 s
    samples[17] = sample(45_000, [3, 4, 3, 5], 20, 158);
    expect(lakeBounds(samples, rounds, commitEnds, settings).measures.manifests.bounded).toBe(true);
    samples[17] = sample(45_000, [3, 4, 3, 5], 20, 159);
    expect(lakeBounds(samples, rounds, commitEnds, settings).measures.manifests.bounded).toBe(false);
  });

  it('counts the rounds beside the intervals, and wants the metadata under 1 MiB', () => {
    expect(lakeBounds(run([3, 4, 3, 5]), rounds, commitEnds, { ...settings, streamingSeconds: 70 })).toMatchObject({ rounds: 4, roundsDue: 7 });
    const big = run([3, 4, 3, 5]);
    big[5] = { ...big[5]!, metadataBytes: 1 << 20 };
    expect(lakeBounds(big, rounds, commitEnds, settings).metadataUnder1MiB).toBe(false);
  });
});

describe('the load', () => {
  it('changes its own keys only: one insert and one delete per three updates, no key twice in a transaction', () => {
    const keys = new WriterKeys(2, 3, 20, prng(1)); // owns 2, 5, 8, 11, 14, 17, 20
    const live = new Set([2, 5, 8, 11, 14, 17, 20]);
    let inserted = 0;
    let deleted = 0;
    let updated = 0;
    for (let i = 0; i < 40; i++) {
      const t = keys.next(5);
      const all = [...t.inserts, ...t.updates, ...t.deletes];
      expect(new Set(all).size).toBe(all.length);
      for (const id of all) expect(id % 3).toBe(2);
      for (const id of [...t.updates, ...t.deletes]) expect(live.has(id)).toBe(true);
      for (const id of t.inserts) expect(live.has(id)).toBe(false);
      for (const id of t.deletes) live.delete(id);
      for (const id of t.inserts) live.add(id);
      inserted += t.inserts.length;
      updated += t.updates.length;
      deleted += t.deletes.length;
    }
    expect([inserted, updated, deleted]).toEqual([40, 120, 40]);
    expect(keys.liveCount).toBe(live.size);
  });

  it('sends a transaction as one round trip that ends with its GTID', () => {
    const sql = transactionSql({ inserts: [7], updates: [1, 4], deletes: [10] }, prng(3), "it's");
    const statements = sql.split(';\n');
    expect(statements[0]).toBe('START TRANSACTION');
    expect(statements[1]).toMatch(/^INSERT INTO orders VALUES \(7,/);
    expect(statements[2]).toMatch(/^UPDATE orders SET .* note = 'it\\'s', .* WHERE id IN \(1,4\)$/);
    expect(statements.slice(3)).toEqual(['DELETE FROM orders WHERE id IN (10)', 'COMMIT', 'SELECT @@last_gtid AS g']);
  });

  it('reads the sequence number of a domain-0 MariaDB GTID, and refuses anything else', () => {
    expect(gtidSequence('0-1-4711')).toBe(4711);
    expect(() => gtidSequence('')).toThrow(/expected a MariaDB GTID of domain 0/);
    expect(() => gtidSequence('3E11FA47-71CA-11E1-9E33-C80AA9429562:23')).toThrow(/expected a MariaDB GTID/);
  });
});
