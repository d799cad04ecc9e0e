/**
 * The benchmark's output: the machine it ran on and one table of figures (and the same as JSON).
 */
import { cpus, freemem, loadavg, release, totalmem, type } from 'node:os';

export interface Machine {
  cpu: string;
  cores: number;
  memoryGiB: number;
  os: string;
  node: string;
  server: string;
  /** 1-minute load average when the benchmark started (other work on the machine skews the figures). */
  loadAverage: number;
}

export function describeMachine(serverVersion: string): Machine {
  const c = cpus();
  return {
    cpu: c[0]?.model.trim() ?? 'unknown',
    cores: c.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: `${type()} ${release()}`,
    node: process.version,
    server: serverVersion,
    loadAverage: Math.round(loadavg()[0] * 100) / 100,
  };
}

export function machineLine(m: Machine): string {
  return `${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB RAM (${Math.round(freemem() / 2 ** 30)} GiB free), ${m.os}, Node ${m.node}, ${m.server}; load average ${m.loadAverage} at start`;
}

export interface Row {
  step: string;
  seconds?: number;
  count?: number;
  unit?: string;
  /** Rate as a fraction of the ceiling it is compared with. */
  ratio?: number;
  cpuSeconds?: number;
  peakRssBytes?: number;
  note?: string;
}

const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function rate(r: Row): number | undefined {
  return r.count !== undefined && r.seconds !== undefined && r.seconds > 0 ? r.count / r.seconds : undefined;
}

export function formatTable(rows: readonly Row[]): string {
  const header = ['step', 'time', 'count', 'rate', 'vs ceiling', 'CPU-s', 'per CPU-s', 'peak RSS', ''];
  const lines = rows.map((r) => {
    const perSecond = rate(r);
    return [
      r.step,
      r.seconds === undefined ? '' : `${r.seconds.toFixed(1)} s`,
      r.count === undefined ? '' : int.format(r.count),
      perSecond === undefined ? '' : `${int.format(perSecond)} ${r.unit ?? ''}/s`,
      r.ratio === undefined ? '' : r.ratio.toFixed(2),
      r.cpuSeconds === undefined ? '' : r.cpuSeconds.toFixed(1),
      r.cpuSeconds && r.count !== undefined ? int.format(r.count / r.cpuSeconds) : '',
      r.peakRssBytes === undefined ? '' : `${int.format(r.peakRssBytes / 2 ** 20)} MiB`,
      r.note ?? '',
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const right = new Set([1, 2, 3, 4, 5, 6, 7]);
  const fmt = (cells: string[]) => cells.map((c, i) => (right.has(i) ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ').trimEnd();
  return [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(fmt)].join('\n');
}
