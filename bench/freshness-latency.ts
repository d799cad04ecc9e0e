/**
 * The freshness benchmark's arithmetic (bench/freshness.ts): each change's source→lake latency —
 * from the moment its MySQL COMMIT returned to the load (bench/freshness-load.ts) to the moment a
 * poll of the catalog first found a table version holding it (bench/catalog-watch.ts) — and where
 * that time went, from floe's own commit timings (bench/floe-child.ts).
 *
 * A transaction is held by the first visible version whose committed GTID sequence is at or above
 * its own (MariaDB assigns sequence numbers in commit order; floe's stamp says every transaction up
 * to it is in the table). Its latency splits into three parts that add up to it:
 *   - to the commit's start: binlog read and decode, routing, waiting for the checkpoint's turn (the
 *     interval, a commit before it, a maintenance round before it);
 *   - the commit up to the catalog swap: floe's checkpoint commit of the table (data and delete
 *     files, manifests, metadata), from its start as floe times it to the swap;
 *   - the swap to the poll that found it (at most the poll interval, when the poller gets the CPU).
 * The commit that made a version visible is the first one that ended at or after its swap (floe's
 * commit ends after the swap: the bookkeeping that follows it is part of floe's timing).
 */

/** Transactions as the load recorded them: GTID sequence, commit time (epoch ms), row changes. */
export interface CommittedTransactions {
  seq: readonly number[];
  atMs: readonly number[];
  changes: readonly number[];
}

/** A table version found by a poll at `atMs`, swapped in at `swappedMs`: every transaction up to `seq` is in it. */
export interface Visibility {
  seq: number;
  atMs: number;
  swappedMs: number;
}

/** One of floe's checkpoint commits: when it ended (epoch ms) and how long it took. */
export interface FloeCommit {
  endMs: number;
  seconds: number;
}

export interface Quantiles {
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export interface LatencyReport {
  /** Row changes seen in the lake, and those never seen (by the run's end). */
  changes: number;
  unseen: number;
  latencyMs: Quantiles;
  /** The three parts of the latency (module header), over the same changes. */
  parts: { toCommitStartMs: Quantiles; toSwapMs: Quantiles; toPollMs: Quantiles };
  /** The mean of each part among the slowest 1% of changes: what the tail is made of. */
  slowestPercent: { count: number; toCommitStartMs: number; toSwapMs: number; toPollMs: number };
  /** Latency per window of commit time: `windowMs` long, from the first transaction. */
  windows: { startSeconds: number; changes: number; p50: number; p99: number; max: number }[];
}

/** Quantiles of `values` each counted `weights[i]` times (the nearest-rank definition). */
export function weightedQuantiles(values: ArrayLike<number>, weights: ArrayLike<number>): Quantiles {
  const order = Array.from({ length: values.length }, (_, i) => i).sort((a, b) => values[a]! - values[b]!);
  let total = 0;
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    total += weights[i]!;
    sum += values[i]! * weights[i]!;
  }
  const at = (q: number): number => {
    if (order.length === 0) return 0;
    const rank = Math.max(1, Math.ceil(q * total));
    let seen = 0;
    for (const i of order) {
      seen += weights[i]!;
      if (seen >= rank) return values[i]!;
    }
    return values[order.at(-1)!]!;
  };
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: order.length ? values[order.at(-1)!]! : 0, mean: total ? sum / total : 0 };
}

/** Index of the first element of the ascending `xs` that is ≥ x (xs.length when none). */
function lowerBound(xs: readonly number[], x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function latencyReport(txs: CommittedTransactions, visible: readonly Visibility[], commits: readonly FloeCommit[], windowMs = 10_000): LatencyReport {
  const steps = [...visible].sort((a, b) => a.atMs - b.atMs);
  for (let i = 1; i < steps.length; i++) {
    if (steps[i]!.seq < steps[i - 1]!.seq) throw new Error(`bench:freshness: the lake's committed GTID sequence went back from ${steps[i - 1]!.seq} to ${steps[i]!.seq}; a poll must only ever see it grow`);
  }
  const stepSeq = steps.map((s) => s.seq);
  const ends = [...commits].sort((a, b) => a.endMs - b.endMs);
  const endMs = ends.map((c) => c.endMs);
  const latency: number[] = [];
  const toStart: number[] = [];
  const commit: number[] = [];
  const toPoll: number[] = [];
  const weight: number[] = [];
  const committedAt: number[] = [];
  let unseen = 0;
  for (let i = 0; i < txs.seq.length; i++) {
    const s = lowerBound(stepSeq, txs.seq[i]!);
    if (s >= steps.length) {
      unseen += txs.changes[i]!;
      continue;
    }
    const { atMs: seenAt, swappedMs } = steps[s]!;
    const at = txs.atMs[i]!;
    // the commit that made the version visible: the first one that ended after its swap
    const c = ends[lowerBound(endMs, swappedMs)];
    const start = c ? c.endMs - c.seconds * 1000 : swappedMs;
    latency.push(seenAt - at);
    toStart.push(start - at);
    commit.push(swappedMs - start);
    toPoll.push(seenAt - swappedMs);
    weight.push(txs.changes[i]!);
    committedAt.push(at);
  }
  const changes = weight.reduce((a, b) => a + b, 0);
  // the slowest 1% of changes (by weight), and what their latency was made of
  const bySlowest = latency.map((_, i) => i).sort((a, b) => latency[b]! - latency[a]!);
  const tail = { count: 0, toCommitStartMs: 0, toSwapMs: 0, toPollMs: 0 };
  for (const i of bySlowest) {
    if (tail.count >= Math.max(1, Math.ceil(changes * 0.01))) break;
    tail.count += weight[i]!;
    tail.toCommitStartMs += toStart[i]! * weight[i]!;
    tail.toSwapMs += commit[i]! * weight[i]!;
    tail.toPollMs += toPoll[i]! * weight[i]!;
  }
  if (tail.count > 0) {
    tail.toCommitStartMs /= tail.count;
    tail.toSwapMs /= tail.count;
    tail.toPollMs /= tail.count;
  }
  const windows: LatencyReport['windows'] = [];
  if (committedAt.length > 0) {
    const first = committedAt.reduce((a, b) => Math.min(a, b));
    const groups = new Map<number, number[]>();
    committedAt.forEach((at, i) => {
      const w = Math.floor((at - first) / windowMs);
      let g = groups.get(w);
      if (!g) groups.set(w, (g = []));
      g.push(i);
    });
    for (const [w, idx] of [...groups].sort((a, b) => a[0] - b[0])) {
      const q = weightedQuantiles(idx.map((i) => latency[i]!), idx.map((i) => weight[i]!));
      windows.push({ startSeconds: (w * windowMs) / 1000, changes: idx.reduce((a, i) => a + weight[i]!, 0), p50: q.p50, p99: q.p99, max: q.max });
    }
  }
  return {
    changes,
    unseen,
    latencyMs: weightedQuantiles(latency, weight),
    parts: { toCommitStartMs: weightedQuantiles(toStart, weight), toSwapMs: weightedQuantiles(commit, weight), toPollMs: weightedQuantiles(toPoll, weight) },
    slowestPercent: tail,
    windows,
  };
}
