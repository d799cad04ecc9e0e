/**
 * The `floe` command. Each subcommand lives in its own module under src/cli/commands/ and is
 * registered here.
 */
import { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { registerScan } from './commands/scan.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

export function buildProgram(): Command {
  const program = new Command();
  program.name('floe').description('Replicate MySQL into Apache Iceberg tables').version(pkg.version);
  registerScan(program);
  return program;
}

await buildProgram().parseAsync(process.argv);
