/**
 * One line of `floe check`: a named check, whether it passed, how much a failure matters, and a
 * message that says what was found and what to do. Same shape as the source pre-flight's lines.
 */
import type { PreflightCheck } from '../../source/mysql/index.js';

export type CheckLine = PreflightCheck;

/** True when no check failed with severity 'error'. */
export function checksPassed(lines: readonly CheckLine[]): boolean {
  return lines.every((c) => c.ok || c.severity !== 'error');
}

const MARKS = { pass: '✓', fail: '✗', warn: '!', info: '·' } as const;

/** `✓ source.log_bin          binary log is on` — for a person at a terminal. */
export function formatCheckLine(line: CheckLine, width: number, color: boolean): string {
  const kind = line.ok ? (line.severity === 'info' ? 'info' : 'pass') : line.severity === 'error' ? 'fail' : 'warn';
  const colour = { pass: '\x1b[32m', fail: '\x1b[31m', warn: '\x1b[33m', info: '\x1b[90m' }[kind];
  const mark = color ? `${colour}${MARKS[kind]}\x1b[0m` : MARKS[kind];
  return `${mark} ${line.check.padEnd(width)}  ${line.message}`;
}
