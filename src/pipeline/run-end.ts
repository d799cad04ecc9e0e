/** How a pipeline run, and each source session within it, ends (runner.ts). */
import type { TableRef } from '../source/mysql/index.js';

export interface RunResult {
  reason: 'snapshot-complete' | 'stopped' | 'ddl-stop' | 'failed';
  ddl?: { statement: string; position: string };
  error?: unknown;
}

/**
 * How a run ends: a result, or `again` — everything is committed and the run starts over from the
 * lake at once, as a new process would (after a schema change that renames a captured table, or one
 * that a table's snapshot straddles), with the reason for the log.
 */
export type RunEnd = RunResult | { again: string };

/** A source session ends the run, or asks for a new session that also captures `tables`. */
export type SessionEnd = RunEnd | { restart: TableRef[] };
