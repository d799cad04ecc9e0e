/**
 * Reading a table's committed progress from its `floe.source-offset` summary value without touching
 * the state objects it refers to (src/pipeline/state.ts documents the form; the chunk counts are
 * inline for exactly this purpose):
 *
 *   {"v":1,"phase":"snapshot","snapshot":{"state":"<uri>","chunks":120,"finished":57,"rows":45210}}
 *   {"v":1,"phase":"streaming","offset":{<serialized binlog offset>}}
 *
 * A bare serialized binlog offset is read as a streaming table at that offset.
 */
import { parseOffset, type BinlogOffset } from '../source/mysql/index.js';
import { FloeError } from '../util/errors.js';
import { parseJson, stringifyJson } from '../util/json.js';

export interface CommittedProgress {
  phase: 'snapshot' | 'streaming';
  /** Streaming: every transaction up to here is in the table. */
  offset?: BinlogOffset;
  snapshot?: { chunks: number; finished: number; rows: number };
}

export function parseProgressSummary(text: string): CommittedProgress {
  const doc = parseJson(text) as Record<string, unknown> | null;
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw unexpected(text);
  if (doc.v === undefined) return { phase: 'streaming', offset: parseOffset(text) };
  if (doc.v !== 1 || (doc.phase !== 'snapshot' && doc.phase !== 'streaming')) throw unexpected(text);
  const out: CommittedProgress = { phase: doc.phase };
  if (doc.offset !== undefined) out.offset = parseOffset(stringifyJson(doc.offset as never));
  const s = doc.snapshot as Record<string, unknown> | undefined;
  if (s && typeof s === 'object') {
    out.snapshot = { chunks: Number(s.chunks ?? 0), finished: Number(s.finished ?? 0), rows: Number(s.rows ?? 0) };
  }
  return out;
}

function unexpected(text: string): FloeError {
  return new FloeError('cli.status', 'invalid-data', `floe.source-offset ${JSON.stringify(text.slice(0, 200))}: expected floe's progress form {"v":1,"phase":…}`);
}

/** `snapshot 57/120 chunks` or `streaming`. */
export function phaseText(p: CommittedProgress): string {
  if (p.phase === 'snapshot') return p.snapshot ? `snapshot ${p.snapshot.finished}/${p.snapshot.chunks} chunks` : 'snapshot';
  return 'streaming';
}
