/**
 * Debezium's embedded engine as floe's peer (harness: bench/peers/debezium/, Java): its initial
 * snapshot of the bench table, and its streaming of a binlog range given by its start offset and the
 * number of row changes in it. On MariaDB it uses Debezium's MariaDB connector (the MySQL connector
 * of Debezium 3.x refuses MariaDB 10.x/11.x servers), on MySQL the MySQL connector.
 */
import type { MysqlConnectionConfig } from '../../src/source/mysql/client.js';
import { gtidStateText, type BinlogOffset } from '../../src/source/mysql/offset/offset.js';
import { TABLE } from '../dataset.js';
import { harnessNumber, runHarness, type PeerBuild } from './java-peer.js';

const MAIN = 'floe.peers.DebeziumBench';

export interface PeerRun {
  /** Records counted: rows of the snapshot, row changes of the streaming. */
  count: number;
  /** First record to the last expected one: the rate's window. */
  windowMs: number;
  /** Engine start to the first record: connecting, schema reading, locks. */
  startToFirstMs: number;
  /** The whole harness, engine start to the engine stopped. */
  totalMs: number;
  /** CPU of the JVM (all threads) within the window. */
  windowCpuMs: number;
  processCpuMs: number;
  peakRssBytes: number;
  /** Debezium's version and connector class. */
  version: string;
  connector: string;
}

export interface DebeziumTarget {
  connection: MysqlConnectionConfig;
  database: string;
  flavor: 'mysql' | 'mariadb';
  timeoutMs: number;
  /** Keep consuming this long after the expected count, so that a record too many shows (tests). */
  settleMs?: number;
}

async function runPhase(build: Extract<PeerBuild, { ok: true }>, t: DebeziumTarget, args: Record<string, string | number>): Promise<PeerRun> {
  const { figures, stderrTail } = await runHarness(
    build,
    MAIN,
    { host: t.connection.host, port: t.connection.port, user: t.connection.user, password: t.connection.password, database: t.database, table: TABLE, flavor: t.flavor, timeoutMs: t.timeoutMs, settleMs: t.settleMs ?? 0, ...args },
    t.timeoutMs,
  );
  if (typeof figures.error === 'string') throw new Error(`bench: Debezium's ${String(args.phase)} failed: ${figures.error}\n${stderrTail}`);
  const n = (key: string) => harnessNumber('Debezium', figures, key);
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

/** Debezium's initial snapshot (snapshot.mode initial_only) of the table, which holds `rows` rows. */
export function debeziumSnapshot(build: Extract<PeerBuild, { ok: true }>, t: DebeziumTarget, rows: number): Promise<PeerRun> {
  return runPhase(build, t, { phase: 'snapshot', expected: rows, serverId: 4_000_201 });
}

/** Debezium's streaming from `from` until it has seen `changes` row changes of the table. */
export function debeziumStreaming(build: Extract<PeerBuild, { ok: true }>, t: DebeziumTarget, from: BinlogOffset, changes: number): Promise<PeerRun> {
  if (from.file === undefined || from.position === undefined) throw new Error('bench: Debezium streams from a binlog file/position, and the offset floe started from has none');
  return runPhase(build, t, {
    phase: 'streaming',
    expected: changes,
    serverId: 4_000_202,
    file: from.file,
    pos: from.position,
    ...(from.gtids ? { gtids: gtidStateText(from.gtids) } : {}),
  });
}
