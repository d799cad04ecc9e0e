/**
 * What every command starts with: the global options (`-c`, `--log-level`, `--log-format`), the
 * configuration, and a logger whose terminal output can be routed above progress bars.
 */
import type { Command } from 'commander';
import type { FloeConfig } from '../config/schema.js';
import { createLogger, type LogFormat, type Logger, type LogLevel } from '../pipeline/observe/logger.js';
import { resolveConfig } from './config-file.js';

interface GlobalOptions {
  config?: string;
  logLevel?: LogLevel;
  logFormat?: LogFormat;
}

export interface CommandContext {
  config: FloeConfig;
  configPath?: string;
  logger: Logger;
  /** stderr is a terminal: progress bars and the pretty log format are on. */
  interactive: boolean;
  /** Where terminal log lines go; commands showing progress bars redirect it above the bars. */
  terminal: TerminalRouter;
}

/** The log destination: stderr, or a function that prints above progress bars while they are shown. */
export class TerminalRouter {
  readonly isTTY: boolean;
  private route: ((text: string) => void) | undefined;
  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {
    this.isTTY = stream.isTTY === true;
  }
  write(text: string): boolean {
    if (this.route) this.route(text);
    else this.stream.write(text);
    return true;
  }
  routeTo(fn: ((text: string) => void) | undefined): void {
    this.route = fn;
  }
}

function globalOptions(command: Command): GlobalOptions {
  return command.optsWithGlobals() as GlobalOptions;
}

export async function commandContext(command: Command): Promise<CommandContext> {
  const options = globalOptions(command);
  const terminal = new TerminalRouter();
  const logger = createLogger({
    level: options.logLevel ?? 'info',
    format: options.logFormat,
    destination: terminal as unknown as NodeJS.WritableStream & { isTTY?: boolean },
  });
  const { config, path } = await resolveConfig(options.config);
  return { config, configPath: path, logger, interactive: terminal.isTTY, terminal };
}
