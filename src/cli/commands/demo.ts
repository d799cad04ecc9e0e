/**
 * `floe demo`: starts a local MySQL-compatible server unless the config names a source, loads a
 * sample shop, replicates it into `./warehouse` (or the configured warehouse), applies live changes
 * while streaming, stops cleanly, and prints what the lake holds and how to query it (src/demo/).
 */
import { Option, type Command } from 'commander';
import { openCatalog } from '../../pipeline/config-options.js';
import { commandContext } from '../command-context.js';
import { ExitCode, type ExitCodeValue } from '../exit-codes.js';
import { handleStopSignals } from '../signals.js';

export function registerDemo(program: Command, setExit: (code: ExitCodeValue) => void): void {
  program
    .command('demo')
    .description('replicate a sample shop from a local MariaDB/MySQL (started for you unless the config has a source) into ./warehouse, with live changes, then show the lake')
    .addOption(
      new Option('--server <kind>', 'the local server to start when the config has no source: mariadb (the machine\'s mariadbd) or mysql (Oracle MySQL 8 from FLOE_MYSQL_HOME or `.ci/install-mysql8`)')
        .choices(['mariadb', 'mysql'])
        .default('mariadb'),
    )
    .option('--no-progress', 'no progress bars on a terminal')
    .action(async (options: { progress: boolean; server: 'mariadb' | 'mysql' }, command: Command) => {
      const ctx = await commandContext(command);
      // Loaded here, not at start-up: the demo pulls in the scan reader, which other commands do not need.
      const { runDemo } = await import('../../demo/run-demo.js');
      const { runPipelineSession } = await import('../pipeline-session.js');
      const stop = handleStopSignals(ctx.logger);
      try {
        const result = await runDemo({
          config: ctx.config,
          logger: ctx.logger,
          openCatalog: async (config) => openCatalog(config, ctx.logger),
          runPipeline: async (config, run) => {
            const { result, exitCode } = await runPipelineSession(config, {
              mode: 'run',
              signal: run.signal,
              logger: ctx.logger,
              progress: options.progress,
              terminal: ctx.terminal,
              extraSinks: run.extraSinks,
            });
            return { reason: result.reason, exitCode, error: result.error };
          },
          signal: stop.signal,
          server: options.server,
          out: process.stdout,
          color: process.stdout.isTTY === true && !process.env.NO_COLOR,
        });
        setExit(result.exitCode === 0 ? ExitCode.ok : (result.exitCode as ExitCodeValue));
      } finally {
        stop.dispose();
      }
    });
}
