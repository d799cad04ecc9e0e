/**
 * Flink CDC's MySqlSource as floe's peer (harness: bench/peers/flink-cdc/, Java): its parallel
 * snapshot (startup mode `snapshot`, chunked between binlog watermarks as floe's) of the bench table
 * in a local mini-cluster of two slots, into a discarding sink. Only the snapshot: Flink CDC's
 * streaming is one reader (its binlog split), Debezium's own, which the Debezium peer measures.
 */
import { runPeerPhase, targetArguments, type PeerBuild, type PeerRun, type PeerTarget } from './java-peer.js';

const MAIN = 'floe.peers.FlinkCdcBench';

/** What the bench runs it with (the options below say why). */
export const FLINK_CDC_DEFAULTS = { parallelism: 2, splitSize: 8096, pollIntervalMs: 20 } as const;

export interface FlinkCdcOptions {
  /** Source readers (the mini-cluster's slots); 2, as this machine's cores. */
  parallelism?: number;
  /** Rows per chunk; Flink CDC's default 8096 unless a test wants many chunks of a small table. */
  splitSize?: number;
  /**
   * Debezium's `poll.interval.ms` under each chunk's read. Its default (500 ms) is a wait at the end
   * of every chunk: measured on 400,000 rows, 26k rows/s at 500 ms and 79k at 20 ms, with the same
   * CPU. The bench takes 20 ms, so that floe is compared with Flink CDC working, not waiting.
   */
  pollIntervalMs?: number;
}

/** Flink CDC's snapshot of the table, which holds `rows` rows. */
export function flinkCdcSnapshot(build: Extract<PeerBuild, { ok: true }>, t: PeerTarget, rows: number, o: FlinkCdcOptions = {}): Promise<PeerRun> {
  return runPeerPhase(
    build,
    'Flink CDC',
    'snapshot',
    MAIN,
    { ...targetArguments(t), expected: rows, ...FLINK_CDC_DEFAULTS, ...o },
    t.timeoutMs,
  );
}
