/**
 * `floe verify -c floe.yaml [--table …] [--chunk-size N] [--parallelism P] [--repair] [--show-values]
 * [--json]`: compares every captured table (or those named) with MySQL chunk by chunk, without a full
 * copy (src/pipeline/verify/, docs/verify.md). Progress bars on a terminal, then a summary table; JSON
 * lines with --json (or when stdout is not a terminal): one `{"type":"table",…}` per table, then one
 * `{"type":"summary",…}`.
 *
 * Exit codes: 0 the lake equals MySQL; 4 differences were found (also when --repair fixed them);
 * 1 some table could not be verified (see the output); 2 a configuration or usage error; 3 the source
 * or the job lock could not be had (as `floe check`'s failed pre-flight: a connection refused, or
 * --repair while floe run runs the job).
 */
import type { Command } from 'commander';
import { TerminalProgress } from '../../pipeline/observe/progress.js';
import { errorMessage, FloeError, isFloeError } from '../../util/errors.js';
import { stringifyJson } from '../../util/json.js';
import { tableMatcher } from '../../source/mysql/index.js';
import { commandContext, type CommandContext } from '../command-context.js';
import { ExitCode, type ExitCodeValue } from '../exit-codes.js';
import { humanReport } from '../verify-report.js';
import { isJobLocked } from '../../pipeline/job-lock.js';

interface VerifyCommandOptions {
  table?: string[];
  chunkSize?: string;
  parallelism?: string;
  repair?: boolean;
  showValues?: boolean;
  rows: string;
  json?: boolean;
  progress: boolean;
  serverId?: string;
}

function positive(text: string | undefined, name: string, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < 1) throw new FloeError('cli.verify', 'invalid-argument', `${name} expects a positive whole number, found ${JSON.stringify(text)}`);
  return n;
}

export function registerVerify(program: Command, setExit: (code: ExitCodeValue) => void): void {
  program
    .command('verify')
    .description('prove the lake equals MySQL without copying it: chunk checksums on both sides, differing chunks row by row; --repair re-copies them')
    .option('--table <pattern...>', 'verify only these tables (db.table, globs as in source.include)')
    .option('--chunk-size <n>', 'rows per chunk (default verify.chunkSize, else source.snapshot.chunkSize)')
    .option('--parallelism <n>', 'chunks read on the server at a time (default source.snapshot.parallelism)')
    .option('--repair', 're-copy the chunks that differ (refused while floe run runs the job), then verify them again')
    .option('--show-values', 'print the values of rows that differ (default: keys and column names only)')
    .option('--rows <n>', 'rows listed per chunk and kind of difference', '20')
    .option('--json', 'JSON lines even on a terminal')
    .option('--no-progress', 'no progress bars on a terminal')
    .option('--server-id <n>', "first replica server id of verify's binlog readers (default source.serverId + 100; never floe run's)")
    .action(async (options: VerifyCommandOptions, command: Command) => {
      setExit(await verifyCommand(await commandContext(command), options));
    });
}

async function verifyCommand(ctx: CommandContext, options: VerifyCommandOptions): Promise<ExitCodeValue> {
  const { config, logger } = ctx;
  if (!config.source) throw new FloeError('config', 'config', `no source configured: ${ctx.configPath ? `${ctx.configPath} has no \`source:\` section` : 'no config file (pass -c <file>)'}; floe verify compares the lake with it`);
  const chunkSize = positive(options.chunkSize, '--chunk-size', config.verify.chunkSize ?? config.source.snapshot.chunkSize);
  const parallelism = positive(options.parallelism, '--parallelism', config.source.snapshot.parallelism);
  const rowLimit = positive(options.rows, '--rows', 20);
  const only = options.table?.length ? tableMatcher({ include: options.table }) : undefined;
  const human = process.stdout.isTTY === true && !options.json;
  const bars = options.progress && ctx.terminal.isTTY && !options.json ? new TerminalProgress(process.stderr) : undefined;
  if (bars) ctx.terminal.routeTo((text) => bars.writeLine(text));
  // The pipeline's modules load when a verification runs, not for every command (start-up time).
  const { runVerification } = await import('../../pipeline/verify/verify-run.js');
  let report;
  try {
    report = await runVerification(
      config,
      {
        ...(only ? { tables: (key: string) => only({ database: key.slice(0, key.indexOf('.')), table: key.slice(key.indexOf('.') + 1) }) } : {}),
        chunkSize,
        parallelism,
        showValues: options.showValues === true,
        rowLimit,
        repair: options.repair === true,
        serverIdBase: positive(options.serverId, '--server-id', config.source.serverId + 100),
        onRows: (table, rows) => bars?.rowsCopied(table, rows),
      },
      logger,
      {
        tableStarted: (table, estimate) => bars?.tableStarted(table, estimate),
        tableFinished: (t) => {
          bars?.tableFinished(t.table);
          if (!human) process.stdout.write(`${stringifyJson({ type: 'table', ...t })}\n`);
        },
      },
    );
  } catch (e) {
    bars?.stop();
    ctx.terminal.routeTo(undefined);
    // a source that cannot be reached, or a job that another process writes: as floe check's failed pre-flight
    if (isFloeError(e, 'source') || isJobLocked(e)) {
      process.stderr.write(`floe verify: ${errorMessage(e)}\n`);
      return ExitCode.preflight;
    }
    throw e;
  }
  bars?.stop();
  ctx.terminal.routeTo(undefined);
  if (human) process.stdout.write(humanReport(report));
  else process.stdout.write(`${stringifyJson({ type: 'summary', status: report.status, seconds: report.seconds, tables: report.tables.map((t) => ({ table: t.table, status: t.status })) })}\n`);
  if (report.tables.some((t) => t.status === 'differs' || t.status === 'repaired')) return ExitCode.differences;
  if (report.status === 'unverified') return ExitCode.failure;
  return ExitCode.ok;
}
