/**
 * The bench's peers, measured in the same run as floe, against the same server, table and binlog
 * range (bench/run.ts calls these in order):
 *   1. `preparePeers` before anything is measured: builds each harness (a download or a compile must
 *      not overlap floe's measurements), or records why a peer is skipped;
 *   2. `snapshots` right after floe's snapshots, while the table is still as loaded: Debezium's
 *      initial snapshot, then Flink CDC's parallel snapshot (two readers, as floe's two cores);
 *   3. `streaming` after floe's CDC phase: Debezium streams the binlog range floe's CDC consumed,
 *      from the same start offset, until it has the same number of row changes.
 * Each gives table rows (bench/report.ts) with the peer's rate, its ratio to the ceiling, and floe's
 * rate over the peer's. A peer that fails at run time is skipped with its error: the bench's other
 * figures stand.
 */
import type { BinlogOffset } from '../../src/source/mysql/offset/offset.js';
import type { Row } from '../report.js';
import { debeziumSnapshot, debeziumStreaming } from './debezium.js';
import { FLINK_CDC_DEFAULTS, flinkCdcSnapshot } from './flink-cdc.js';
import { buildPeer, type PeerBuild, type PeerName, type PeerRun, type PeerTarget } from './java-peer.js';

export interface PeerPhase extends PeerRun {
  /** count / window. */
  perSecond: number;
  /** floe's rate in the same run over this one. */
  floeRatio: number;
  /** This rate over the ceiling's (mysql2 raw read, zongji raw decode). */
  ratioToCeiling: number;
}

export interface PeersResult {
  debezium?: { snapshot?: PeerPhase; streaming?: PeerPhase };
  flinkCdc?: { snapshot?: PeerPhase };
  /** Peers (or phases) not measured, and why. */
  skipped: { peer: PeerName; reason: string }[];
}

/** The bench's server and table, and a phase's time limit (a hung peer must not hang the bench). */
export type PeerContext = Omit<PeerTarget, 'settleMs'>;

const LABEL: Record<PeerName, string> = { debezium: 'Debezium', 'flink-cdc': 'Flink CDC' };
/** How each peer runs, for the table's note. */
const HOW: Record<PeerName, string> = {
  debezium: 'embedded engine, no-op consumer',
  'flink-cdc': `local mini-cluster, parallelism ${FLINK_CDC_DEFAULTS.parallelism}, poll.interval.ms ${FLINK_CDC_DEFAULTS.pollIntervalMs}, discarding sink`,
};

export class Peers {
  readonly result: PeersResult = { skipped: [] };
  private readonly builds = new Map<PeerName, Extract<PeerBuild, { ok: true }>>();

  constructor(private readonly log: (message: string) => void) {}

  skip(peer: PeerName, reason: string): void {
    this.result.skipped.push({ peer, reason });
    this.log(`${LABEL[peer]} skipped: ${reason}`);
  }

  async prepare(enabled: boolean): Promise<void> {
    for (const peer of ['debezium', 'flink-cdc'] as const) {
      if (!enabled) {
        this.skip(peer, '--no-peers');
        continue;
      }
      this.log(`building the ${LABEL[peer]} peer (bench/peers/install ${peer}; the first build downloads from Maven Central)`);
      const build = await buildPeer(peer);
      if (build.ok) this.builds.set(peer, build);
      else this.skip(peer, build.reason);
    }
  }

  private async phase(peer: PeerName, what: string, measure: () => Promise<PeerRun>, floeRate: number, ceilingRate: number, unit: string): Promise<{ phase: PeerPhase; row: Row } | undefined> {
    this.log(`${LABEL[peer]} ${what} (peer, JVM)`);
    let run: PeerRun;
    try {
      run = await measure();
    } catch (e) {
      this.skip(peer, `${what}: ${(e as Error).message.split('\n')[0]}`);
      return undefined;
    }
    const perSecond = run.count / (run.windowMs / 1000);
    const phase: PeerPhase = { ...run, perSecond, floeRatio: floeRate / perSecond, ratioToCeiling: perSecond / ceilingRate };
    const row: Row = {
      step: `peer: ${LABEL[peer]} ${what}`,
      seconds: run.windowMs / 1000,
      count: run.count,
      unit,
      ratio: phase.ratioToCeiling,
      cpuSeconds: run.windowCpuMs / 1000,
      peakRssBytes: run.peakRssBytes,
      note: `floe / ${LABEL[peer]} ${phase.floeRatio.toFixed(2)}; ${run.connector.replace(/^.*\./, '')} ${run.version}, ${HOW[peer]}; first to last record (start to first ${(run.startToFirstMs / 1000).toFixed(1)} s)`,
    };
    return { phase, row };
  }

  /** The peers' snapshots of the table as loaded (`rows` rows); floe's snapshot rate and ceiling A's for the ratios. */
  async snapshots(c: PeerContext, rows: number, floeRate: number, ceilingRate: number): Promise<Row[]> {
    const out: Row[] = [];
    const debezium = this.builds.get('debezium');
    if (debezium) {
      const r = await this.phase('debezium', 'snapshot', () => debeziumSnapshot(debezium, c, rows), floeRate, ceilingRate, 'rows');
      if (r) {
        (this.result.debezium ??= {}).snapshot = r.phase;
        out.push(r.row);
      }
    }
    const flink = this.builds.get('flink-cdc');
    if (flink) {
      const r = await this.phase('flink-cdc', 'snapshot', () => flinkCdcSnapshot(flink, c, rows), floeRate, ceilingRate, 'rows');
      if (r) {
        (this.result.flinkCdc ??= {}).snapshot = r.phase;
        out.push(r.row);
      }
    }
    return out;
  }

  /** The peers' streaming of the `changes` row changes after `from` (floe's CDC range). */
  async streaming(c: PeerContext, from: BinlogOffset, changes: number, floeRate: number, ceilingRate: number): Promise<Row[]> {
    const build = this.builds.get('debezium');
    if (!build || changes === 0) return [];
    const r = await this.phase('debezium', 'streaming', () => debeziumStreaming(build, c, from, changes), floeRate, ceilingRate, 'changes');
    if (!r) return [];
    (this.result.debezium ??= {}).streaming = r.phase;
    return [r.row];
  }
}

/** One line for the bench's summary (undefined when there is nothing to say). */
export function peersSummary(r: PeersResult): string | undefined {
  const d = r.debezium;
  const parts: string[] = [];
  if (d?.snapshot) parts.push(`snapshot ${Math.round(d.snapshot.perSecond).toLocaleString('en-US')} rows/s (floe ${d.snapshot.floeRatio.toFixed(2)}×)`);
  if (d?.streaming) parts.push(`streaming ${Math.round(d.streaming.perSecond).toLocaleString('en-US')} changes/s (floe ${d.streaming.floeRatio.toFixed(2)}×)`);
  const lines = parts.length ? [`peer Debezium ${d?.snapshot?.version ?? d?.streaming?.version ?? ''}: ${parts.join(', ')}`] : [];
  const f = r.flinkCdc?.snapshot;
  if (f) lines.push(`peer Flink CDC ${f.version}: snapshot ${Math.round(f.perSecond).toLocaleString('en-US')} rows/s (floe ${f.floeRatio.toFixed(2)}×)`);
  for (const s of r.skipped) lines.push(`peer ${LABEL[s.peer]} skipped: ${s.reason}`);
  return lines.length ? lines.join('\n') : undefined;
}
