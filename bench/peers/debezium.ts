/**
 * Debezium's embedded engine as floe's peer (harness: bench/peers/debezium/, Java): its initial
 * snapshot of the bench table, and its streaming of a binlog range given by its start offset and the
 * number of row changes in it. On MariaDB it uses Debezium's MariaDB connector (the MySQL connector
 * of Debezium 3.x refuses MariaDB 10.x/11.x servers), on MySQL the MySQL connector.
 */
import { gtidStateText, type BinlogOffset } from '../../src/source/mysql/offset/offset.js';
import { runPeerPhase, targetArguments, type PeerBuild, type PeerRun, type PeerTarget } from './java-peer.js';

const MAIN = 'floe.peers.DebeziumBench';

function runPhase(build: Extract<PeerBuild, { ok: true }>, t: PeerTarget, args: Record<string, string | number>): Promise<PeerRun> {
  return runPeerPhase(
    build,
    'Debezium',
    String(args.phase),
    MAIN,
    { ...targetArguments(t), flavor: t.flavor, settleMs: t.settleMs ?? 0, ...args },
    t.timeoutMs,
  );
}

/** Debezium's initial snapshot (snapshot.mode initial_only) of the table, which holds `rows` rows. */
export function debeziumSnapshot(build: Extract<PeerBuild, { ok: true }>, t: PeerTarget, rows: number): Promise<PeerRun> {
  return runPhase(build, t, { phase: 'snapshot', expected: rows, serverId: 4_000_201 });
}

/** Debezium's streaming from `from` until it has seen `changes` row changes of the table. */
export function debeziumStreaming(build: Extract<PeerBuild, { ok: true }>, t: PeerTarget, from: BinlogOffset, changes: number): Promise<PeerRun> {
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
