/**
 * floe's logger: pino underneath, one small interface on top so the pipeline does not depend on
 * pino's call conventions (message first, structured fields second).
 *
 * Output goes to stderr, so that command results on stdout (`floe status`, `floe check`, the demo's
 * report) stay machine-readable. Format:
 * - `json` (the default when stderr is not a terminal): one pino JSON object per line, for log
 *   collectors;
 * - `pretty` (the default on a terminal): `12:04:05.123 INFO  message key=value …`, formatted here
 *   from pino's JSON line (pino-pretty is not a dependency, and this needs 40 lines, not 40 packages).
 *
 * Credentials never reach the output: every field is passed through `redactConfig` (keys named like
 * password/secret/token/credential/salt are masked, `scheme://user:password@` in strings too) before
 * pino sees it.
 */
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import { redactConfig } from '../../config/load.js';
import type { FloeConfig } from '../../config/schema.js';
import { FloeError } from '../../util/errors.js';

export type LogFields = Record<string, unknown>;
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export type LogFormat = 'json' | 'pretty';

/** What the pipeline logs through. An `err` field holding an Error is serialized with its kind and cause. */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** A logger adding `bindings` to every line (e.g. `{ table: 'shop.orders' }`). */
  child(bindings: LogFields): Logger;
}

export interface LoggerOptions {
  level?: LogLevel;
  /** Default: `pretty` when the destination is a terminal, `json` otherwise. */
  format?: LogFormat;
  /** Default: process.stderr. */
  destination?: NodeJS.WritableStream & { isTTY?: boolean };
  /** Colour the pretty format (default: when the destination is a terminal and NO_COLOR is unset). */
  color?: boolean;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const out = options.destination ?? process.stderr;
  const tty = out.isTTY === true;
  const format = options.format ?? (tty ? 'pretty' : 'json');
  const color = options.color ?? (tty && !process.env.NO_COLOR);
  const stream: DestinationStream =
    format === 'json' ? { write: (line: string) => void out.write(line) } : { write: (line: string) => void out.write(prettyLine(line, color)) };
  const base = pino(
    {
      level: options.level ?? 'info',
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // Errors are already plain objects (serializeError keeps FloeError's kind and the cause chain);
      // pino's own err serializer would flatten them again.
      serializers: { err: (e: unknown) => e },
    },
    stream,
  );
  return new PinoBacked(base);
}

/** A logger that drops everything (tests, library use without logging). */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silentLogger;
  },
};

class PinoBacked implements Logger {
  constructor(private readonly pino: PinoLogger) {}
  debug(message: string, fields?: LogFields): void {
    if (this.pino.isLevelEnabled('debug')) this.pino.debug(safeFields(fields), message);
  }
  info(message: string, fields?: LogFields): void {
    this.pino.info(safeFields(fields), message);
  }
  warn(message: string, fields?: LogFields): void {
    this.pino.warn(safeFields(fields), message);
  }
  error(message: string, fields?: LogFields): void {
    this.pino.error(safeFields(fields), message);
  }
  child(bindings: LogFields): Logger {
    return new PinoBacked(this.pino.child(safeFields(bindings)));
  }
}

/** Errors become plain objects (pino would keep only message/stack), then secrets are masked. */
export function safeFields(fields: LogFields | undefined): LogFields {
  if (!fields) return {};
  const plain: LogFields = {};
  for (const [k, v] of Object.entries(fields)) plain[k] = v instanceof Error ? serializeError(v) : v;
  return redactConfig(plain as unknown as FloeConfig) as LogFields;
}

export interface SerializedError {
  type: string;
  message: string;
  subsystem?: string;
  kind?: string;
  retryable?: boolean;
  stack?: string;
  cause?: SerializedError | string;
}

export function serializeError(e: Error, depth = 0): SerializedError {
  const out: SerializedError = { type: e.name, message: e.message };
  if (e instanceof FloeError) {
    out.subsystem = e.subsystem;
    out.kind = e.kind;
    out.retryable = e.retryable;
  }
  if (e.stack) out.stack = e.stack;
  const cause = (e as { cause?: unknown }).cause;
  if (cause !== undefined && depth < 4) out.cause = cause instanceof Error ? serializeError(cause, depth + 1) : String(cause);
  return out;
}

// ---- the terminal format ------------------------------------------------------------------------

const LEVEL_COLOURS: Record<string, string> = { debug: '\x1b[90m', info: '\x1b[36m', warn: '\x1b[33m', error: '\x1b[31m', fatal: '\x1b[31m' };
const RESET = '\x1b[0m';
const DIM = '\x1b[2m';
const OMITTED = new Set(['level', 'time', 'pid', 'hostname', 'msg']);

/** One pino JSON line → `HH:MM:SS.mmm LEVEL message key=value …` (local time: it is for a person). */
export function prettyLine(jsonLine: string, color: boolean): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine;
  }
  const time = typeof record.time === 'string' ? new Date(record.time) : new Date();
  const clock = `${pad(time.getHours())}:${pad(time.getMinutes())}:${pad(time.getSeconds())}.${String(time.getMilliseconds()).padStart(3, '0')}`;
  const level = String(record.level ?? 'info');
  const label = level.toUpperCase().padEnd(5);
  const parts: string[] = [];
  let errorText = '';
  for (const [k, v] of Object.entries(record)) {
    if (OMITTED.has(k)) continue;
    if (k === 'err' && v && typeof v === 'object') {
      errorText = errorLines(v as SerializedError, level === 'debug');
      continue;
    }
    parts.push(`${k}=${fieldText(v)}`);
  }
  const fields = parts.length ? ` ${color ? DIM : ''}${parts.join(' ')}${color ? RESET : ''}` : '';
  const head = color ? `${DIM}${clock}${RESET} ${LEVEL_COLOURS[level] ?? ''}${label}${RESET}` : `${clock} ${label}`;
  return `${head} ${String(record.msg ?? '')}${fields}${errorText}\n`;
}

function errorLines(e: SerializedError, withStack: boolean): string {
  let text = `\n    ${e.message}`;
  if (withStack && e.stack) text += `\n${e.stack.split('\n').slice(1).join('\n')}`;
  let cause = e.cause;
  for (let i = 0; cause !== undefined && i < 4; i++) {
    text += `\n    caused by: ${typeof cause === 'string' ? cause : cause.message}`;
    cause = typeof cause === 'string' ? undefined : cause.cause;
  }
  return text;
}

function fieldText(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  return JSON.stringify(v);
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}
