/**
 * `floe run` (snapshot when needed, then stream the binlog until stopped) and `floe snapshot`
 * (snapshot only, then exit). Both start with the source pre-flight (exit 3 when a required check
 * fails; `--skip-preflight` to bypass) and stop cleanly on SIGINT/SIGTERM after committing the
 * current checkpoint.
 */
import type { Command } from 'commander';
import { redactConfig } from '../../config/load.js';
import { FloeError } from '../../util/errors.js';
import { commandContext, type CommandContext } from '../command-context.js';
import { ExitCode, type ExitCodeValue } from '../exit-codes.js';
import { checksPassed } from '../checks/check-line.js';
import { sourceChecks } from '../checks/source-checks.js';
import { handleStopSignals } from '../signals.js';

interface PipelineCommandOptions {
  preflight: boolean;
  progress: boolean;
  stateDir?: string;
}

const STATE_DIR_HELP = 'local state directory: the key indexes, persisted as they change, a cache of the lake (default: config stateDir, ./.floe/state)';

export function registerRun(program: Command, setExit: (code: ExitCodeValue) => void): void {
  program
    .command('run')
    .description('replicate: snapshot the tables that need it, then stream the binlog until stopped (SIGINT/SIGTERM stop after the current checkpoint)')
    .option('--no-preflight', 'skip the source pre-flight checks')
    .option('--no-progress', 'no progress bars on a terminal')
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .action(async (options: PipelineCommandOptions, command: Command) => {
      setExit(await pipelineCommand('run', await commandContext(command), options));
    });
  program
    .command('snapshot')
    .description('snapshot the tables that need it, commit, and exit (no streaming)')
    .option('--no-preflight', 'skip the source pre-flight checks')
    .option('--no-progress', 'no progress bars on a terminal')
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .action(async (options: PipelineCommandOptions, command: Command) => {
      setExit(await pipelineCommand('snapshot', await commandContext(command), options));
    });
}

/** Checks the source; logs failed lines. False when a required check failed. */
async function preflight(ctx: CommandContext): Promise<boolean> {
  const lines = await sourceChecks(ctx.config);
  for (const line of lines) {
    if (line.ok) continue;
    if (line.severity === 'error') ctx.logger.error(`pre-flight: ${line.message}`, { check: line.check });
    else ctx.logger.warn(`pre-flight: ${line.message}`, { check: line.check });
  }
  const passed = checksPassed(lines);
  if (!passed) ctx.logger.error('pre-flight failed: fix the settings above (or run `floe check` for every line) and start again');
  return passed;
}

async function pipelineCommand(mode: 'run' | 'snapshot', ctx: CommandContext, options: PipelineCommandOptions): Promise<ExitCodeValue> {
  const { logger } = ctx;
  const config = options.stateDir ? { ...ctx.config, stateDir: options.stateDir } : ctx.config;
  if (!config.source) {
    const where = ctx.configPath ? `${ctx.configPath} has no \`source:\` section` : 'no config file (pass -c <file>, set FLOE_CONFIG, or create floe.yaml)';
    throw new FloeError('config', 'config', `no source configured: ${where}; or try \`floe demo\``);
  }
  logger.info(`floe ${mode} starting`, { job: config.job.id, configFile: ctx.configPath, config: redactConfig(config) });
  if (options.preflight && !(await preflight(ctx))) return ExitCode.preflight;
  const stop = handleStopSignals(logger);
  try {
    // The pipeline's modules load when a pipeline runs, not for every command (start-up time).
    const { runPipelineSession } = await import('../pipeline-session.js');
    const { exitCode } = await runPipelineSession(config, { mode, signal: stop.signal, logger, progress: options.progress, terminal: ctx.terminal, configPath: ctx.configPath });
    return exitCode;
  } finally {
    stop.dispose();
  }
}
