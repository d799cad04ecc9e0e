/**
 * Flink CDC's MySqlSource as floe's peer (harness: bench/peers/flink-cdc/, Java): its parallel
 * snapshot (startup mode `snapshot`, chunked between binlog watermarks as floe's) of the bench table
 * in a local mini-cluster of two slots, into a discarding sink. Only the snapshot: Flink CDC's
 * streaming is one reader (its binlog split), Debezium's own, which the Debezium peer measures.
 */
import { TABLE } from '../dataset.js';
import type { DebeziumTarget, PeerRun } from './debezium.js';
import { harnessNumber, runHarness, type PeerBuild } from './java-peer.js';

const MAIN = 'floe.peers.FlinkCdcBench';

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
export async function flinkCdcSnapshot(build: Extract<PeerBuild, { ok: true }>, t: DebeziumTarget, rows: number, o: FlinkCdcOptions = {}): Promise<PeerRun> {
  const { figures, stderrTail } = await runHarness(
    build,
    MAIN,
    { host: t.connection.host, port: t.connection.port, user: t.connection.user, password: t.connection.password, database: t.database, table: TABLE, expected: rows, parallelism: o.parallelism ?? 2, splitSize: o.splitSize ?? 8096, pollIntervalMs: o.pollIntervalMs ?? 20, timeoutMs: t.timeoutMs },
    t.timeoutMs,
  );
  if (typeof figures.error === 'string') throw new Error(`bench: Flink CDC's snapshot failed: ${figures.error}\n${stderrTail}`);
  const n = (key: string) => harnessNumber('Flink CDC', figures, key);
  return {
    count: n('count'),
    windowMs: n('firstToLastMs'),
    startToFirstMs: n('startToFirstMs'),
    totalMs: n('totalMs'),
    windowCpuMs: n('windowCpuMs'),
    processCpuMs: n('processCpuMs'),
    peakRssBytes: n('peakRssBytes'),
    version: String(figures.version),
    connector: String(figures.connector),
  };
}
