/**
 * `floe verify` as the benchmark measures it: one child process running `runVerification`
 * (src/pipeline/verify/verify-run.ts) over the configuration in FLOE_BENCH_CONFIG, so that its CPU
 * time (every thread) and peak RSS are verification's alone. It reports once, over IPC:
 *   {type:'done', elapsedMs, cpuMs, peakRssBytes, status, rows, lakeBytesRead, lakeFilesRead, rowByRow, error?}
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as ConfigSchema from '../src/config/schema.js';
import type * as Logger from '../src/pipeline/observe/logger.js';
import type * as VerifyRun from '../src/pipeline/verify/verify-run.js';
import type * as Errors from '../src/util/errors.js';
import { floeModules } from './floe-build.js';

const modules = floeModules();
const load = async <T>(path: string): Promise<T> => (await import(pathToFileURL(join(modules.dir, path)).href)) as T;
const { configSchema } = await load<typeof ConfigSchema>('config/schema.js');
const { createLogger } = await load<typeof Logger>('pipeline/observe/logger.js');
const { runVerification } = await load<typeof VerifyRun>('pipeline/verify/verify-run.js');
const { errorMessage } = await load<typeof Errors>('util/errors.js');

export interface VerifyChildResult {
  type: 'done';
  elapsedMs: number;
  cpuMs: number;
  peakRssBytes: number;
  status: string;
  rows: number;
  lakeBytesRead: number;
  lakeFilesRead: number;
  rowByRow: number;
  error?: string;
}

function peakRssBytes(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : process.resourceUsage().maxRSS * 1024;
}

async function main(): Promise<void> {
  const config = configSchema.parse(JSON.parse(process.env.FLOE_BENCH_CONFIG ?? '{}'));
  const logger = createLogger({ level: 'warn', format: 'json' });
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const report = await runVerification(
    config,
    { chunkSize: config.source!.snapshot.chunkSize, parallelism: config.source!.snapshot.parallelism, showValues: false, rowLimit: 5, repair: false, serverIdBase: config.source!.serverId + 100 },
    logger,
  );
  const cpu = process.cpuUsage(cpu0);
  const sum = (f: (s: NonNullable<(typeof report.tables)[number]['stats']>) => number) => report.tables.reduce((n, t) => n + (t.stats ? f(t.stats) : 0), 0);
  const result: VerifyChildResult = {
    type: 'done',
    elapsedMs: performance.now() - t0,
    cpuMs: (cpu.user + cpu.system) / 1000,
    peakRssBytes: peakRssBytes(),
    status: report.status,
    rows: sum((s) => s.mysqlRows),
    lakeBytesRead: sum((s) => s.lakeBytesRead),
    lakeFilesRead: sum((s) => s.lakeFilesRead),
    rowByRow: sum((s) => s.rowByRow),
    ...(report.status === 'equal' ? {} : { error: report.tables.map((t) => `${t.table}: ${t.status} ${t.reason ?? ''}`).join('; ') }),
  };
  process.send?.(result);
  process.disconnect?.();
}

main().catch((e) => {
  process.send?.({ type: 'done', elapsedMs: 0, cpuMs: 0, peakRssBytes: 0, status: 'failed', rows: 0, lakeBytesRead: 0, lakeFilesRead: 0, rowByRow: 0, error: errorMessage(e) } satisfies VerifyChildResult);
  process.exitCode = 1;
  process.disconnect?.();
});
