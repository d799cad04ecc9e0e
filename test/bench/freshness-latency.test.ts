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
  const sample = (elapsedSeconds: number, dataFiles: number, metadataBytes = 100_000): FreshnessSample => ({
    elapsedSeconds,
    commits: elapsedSeconds * 5,
    metadataBytes,
    filesUnderTable: 100,
    bytesUnderTable: 1,
    dataFiles,
    deleteFiles: { equality: 0, position: 0, deletionVectors: dataFiles },
    manifests: 20,
    snapshots: 50,
    rssBytes: 1,
    openFds: 1,
    loadAverage: 1,
  });

  it('holds a lake that levels off after the first round, and flags one that climbs on', () => {
    const level = [sample(5, 200), sample(10, 30), sample(15, 60), sample(20, 40), sample(25, 70), sample(30, 50), sample(35, 65)];
    const ok = lakeBounds(level, 10, 3, 35, 10_000);
    expect(ok.measures.dataFiles).toEqual({ min: 30, max: 200, earlyMax: 60, lateMax: 70, bounded: true });
    expect(ok.withinBounds).toBe(true);
    const climbing = [sample(5, 20), sample(10, 30), sample(15, 40), sample(20, 60), sample(25, 80), sample(30, 100), sample(35, 120)];
    const bad = lakeBounds(climbing, 10, 3, 35, 10_000);
    // early: 30, 40, 60 → 60; late: 80, 100, 120 → 120 > 60 × 1.25 + 8
    expect(bad.measures.dataFiles.bounded).toBe(false);
    expect(bad.withinBounds).toBe(false);
  });

  it('wants every maintenance round run and the metadata under 1 MiB', () => {
    const level = [sample(10, 30), sample(15, 30), sample(20, 30), sample(25, 30)];
    expect(lakeBounds(level, 10, 1, 35, 10_000).withinBounds).toBe(false); // 3 due, 1 ran
    expect(lakeBounds([...level, sample(30, 30, 1 << 20)], 10, 3, 35, 10_000).metadataUnder1MiB).toBe(false);
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
