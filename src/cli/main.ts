/**
 * The `floe` command. Each subcommand lives in its own module under src/cli/commands/ and is
 * registered here. Commands report their exit code through `setExit` (see exit-codes.ts); errors
 * they throw end the process with 2 (configuration / usage) or 1 (anything else).
 */
import { Command, CommanderError, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { errorMessage, isFloeError } from '../util/errors.js';
import { EXIT_CODES_HELP, ExitCode, type ExitCodeValue } from './exit-codes.js';
import { registerCheck } from './commands/check.js';
import { registerDemo } from './commands/demo.js';
import { registerRun } from './commands/run.js';
import { registerScan } from './commands/scan.js';
import { registerMaintain } from './commands/maintain.js';
import { registerCatalogServe } from './commands/catalog-serve.js';
import { registerStatus } from './commands/status.js';
import { registerVerify } from './commands/verify.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

export function buildProgram(setExit: (code: ExitCodeValue) => void = (code) => (process.exitCode = code)): Command {
  const program = new Command();
  program
    .name('floe')
    .description('Replicate MySQL into Apache Iceberg tables')
    .version(pkg.version)
    .option('-c, --config <file>', 'configuration file (YAML or JSON); default $FLOE_CONFIG, else ./floe.yaml when present')
    .addOption(new Option('--log-level <level>', 'log level').choices(['debug', 'info', 'warn', 'error', 'silent']).default('info'))
    .addOption(new Option('--log-format <format>', 'log format (default: pretty on a terminal, JSON lines otherwise)').choices(['json', 'pretty']))
    .addHelpText('after', EXIT_CODES_HELP)
    .showHelpAfterError('(run floe --help for usage)')
    .exitOverride();

  registerRun(program, setExit);
  registerCheck(program, setExit);
  registerStatus(program, setExit);
  registerVerify(program, setExit);
  registerDemo(program, setExit);
  // Commands registered by other modules:
  registerScan(program, setExit);
  registerMaintain(program, setExit);
  registerCatalogServe(program.command('catalog').description('Iceberg catalog commands (floe catalog serve)'), setExit);
  return program;
}

export async function main(argv: readonly string[] = process.argv): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv as string[]);
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version end with exit code 0; everything else commander rejects is usage.
      process.exitCode = e.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
      return;
    }
    process.stderr.write(`floe: ${errorMessage(e)}\n`);
    process.exitCode = isFloeError(e, 'config') || isFloeError(e, 'invalid-argument') ? ExitCode.usage : ExitCode.failure;
  }
}

await main();
