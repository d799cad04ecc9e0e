/**
 * `floe check`: pre-flight of the source, the storage and the catalog, one line per check. On a
 * terminal: `✓ name  message` lines; otherwise one JSON object per line (`check`, `ok`, `severity`,
 * `message`). Exit code 3 when a check with severity 'error' fails.
 */
import type { Command } from 'commander';
import { ExitCode, type ExitCodeValue } from '../exit-codes.js';
import { commandContext } from '../command-context.js';
import { checksPassed, formatCheckLine, type CheckLine } from '../checks/check-line.js';
import { sourceChecks } from '../checks/source-checks.js';
import { storageChecks } from '../checks/storage-checks.js';
import { catalogChecks } from '../checks/catalog-checks.js';

export function registerCheck(program: Command, setExit: (code: ExitCodeValue) => void): void {
  program
    .command('check')
    .description('check the source (binlog settings, grants, GTIDs, server id, retention), the storage and the catalog; one line per check')
    .option('--json', 'JSON lines even on a terminal')
    .action(async (options: { json?: boolean }, command: Command) => {
      const ctx = await commandContext(command);
      const lines: CheckLine[] = [
        ...(await sourceChecks(ctx.config)),
        ...(await storageChecks(ctx.config)),
        ...(await catalogChecks(ctx.config, ctx.logger)),
      ];
      const human = process.stdout.isTTY === true && !options.json;
      const width = Math.max(...lines.map((l) => l.check.length));
      for (const line of lines) {
        process.stdout.write(human ? `${formatCheckLine(line, width, !process.env.NO_COLOR)}\n` : `${JSON.stringify(line)}\n`);
      }
      const passed = checksPassed(lines);
      if (human) {
        const failed = lines.filter((l) => !l.ok && l.severity === 'error').length;
        process.stdout.write(passed ? '\nall required checks passed\n' : `\n${failed} required check${failed === 1 ? '' : 's'} failed\n`);
      }
      setExit(passed ? ExitCode.ok : ExitCode.preflight);
    });
}
