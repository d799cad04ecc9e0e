/**
 * Before a run reads or commits anything: is the binlog every table resumes from still on the server?
 *
 * Each table resumes from its own committed progress (resume-plan.ts): a streaming table from its
 * `floe.source-offset`, a table still in its snapshot from the high watermarks of its finished chunks.
 * When the server purged the binlog file one of those points into (retention, `PURGE BINARY LOGS`,
 * floe stopped too long), the changes that table had since are gone for good: no reconnect and no
 * restart can bring them back, and streaming on from a later point would lose them silently.
 *
 * What floe does then (docs/operations.md "Purged binlogs"): it stops the whole run with ONE error naming every
 * such table, its offset, the oldest binlog the server still has, and the way out — re-snapshot those
 * tables (drop their Iceberg tables; floe creates and copies them anew on the next start) — and which
 * tables are not affected (their binlog is still there: they resume from their own offsets, untouched).
 * Nothing is committed before the check, so every table's lake stays exactly as it was.
 *
 * Why stop everything rather than stream the unaffected tables on and leave the purged ones behind:
 * floe has one binlog stream and one process state; a run that goes on with some tables frozen looks
 * healthy (exit code, notifications, lag of the others) while those tables silently fall behind
 * forever, and a supervisor that restarts floe would never surface it. A stop with an exact list
 * costs nothing that is not lost already — the unaffected tables' offsets are kept, and once the
 * named tables are dropped they continue from them, with nothing lost or doubled.
 *
 * Only file/position offsets of this server can be checked here (`SHOW BINARY LOGS`); an offset of
 * another server is resumed by GTIDs (failover), where the server itself refuses a purged start
 * (error 1236, binlog-errors.ts `purgedBinlogError`).
 */
import { identifierToString, type TableIdentifier } from '../iceberg/metadata/catalog.js';
import { compareOffsets, formatOffset, parseOffset, sameServer, type BinlogOffset, type OpenedMySqlSource, type ServerIdentity } from '../source/mysql/index.js';
import { FloeError, isFloeError } from '../util/errors.js';
import type { TableProgress } from './state.js';

export interface ResumingTable {
  /** 'db.table' */
  readonly key: string;
  readonly identifier: TableIdentifier;
  /** The Iceberg table's location (where its files are; with the filesystem catalog, its directory). */
  readonly location: string;
  readonly progress: TableProgress | undefined;
}

export interface PurgedTable {
  readonly table: ResumingTable;
  /** The first offset of the table that points into a purged file. */
  readonly offset: BinlogOffset;
}

/** The binlog points a table's resume needs (what resume-plan.ts reads the binlog from for it). */
export function resumePoints(progress: TableProgress | undefined): BinlogOffset[] {
  if (!progress) return [];
  if (progress.phase === 'streaming') return progress.offset ? [progress.offset] : [];
  return [...(progress.snapshot?.finished.values() ?? [])].map(parseOffset);
}

/** The tables whose resume point lies in a binlog file `files` no longer lists (same server only). */
export function purgedTables(tables: readonly ResumingTable[], files: readonly string[], identity: ServerIdentity): PurgedTable[] {
  const present = new Set(files);
  const out: PurgedTable[] = [];
  for (const t of tables) {
    const gone = resumePoints(t.progress).find((o) => o.file !== undefined && sameServer(o, identity) && !present.has(o.file));
    if (gone) out.push({ table: t, offset: gone });
  }
  return out;
}

/** Throws the purged-binlog error when a table's resume point is gone; does nothing otherwise. */
export async function checkResumeBinlogs(source: Pick<OpenedMySqlSource, 'binlogFiles' | 'identity'>, tables: readonly ResumingTable[], catalogType: string): Promise<void> {
  if (!tables.some((t) => resumePoints(t.progress).length > 0)) return;
  const identity = source.identity;
  const files = await source.binlogFiles();
  // no binlog at all is the pre-flight's finding (log_bin off), not a purge
  if (files.length === 0) return;
  const purged = purgedTables(tables, files, identity);
  if (purged.length > 0) throw purgedTablesError(purged, tables, files[0]!, catalogType);
}

export function purgedTablesError(purged: readonly PurgedTable[], all: readonly ResumingTable[], oldestFile: string, catalogType: string): FloeError {
  const names = new Set(purged.map((p) => p.table.key));
  // tables stopped together stand at the same offset: one entry per offset keeps a long list readable
  const byOffset = new Map<string, string[]>();
  for (const p of purged) {
    const at = formatOffset(p.offset);
    byOffset.set(at, [...(byOffset.get(at) ?? []), p.table.key]);
  }
  const list = [...byOffset].map(([at, keys]) => `${keys.join(', ')} at ${at}`).join('; ');
  const others = all.filter((t) => !names.has(t.key)).map((t) => t.key);
  const drop = dropAdvice(purged, catalogType);
  return new FloeError(
    'pipeline.resume',
    'source',
    `expected the server to still hold the binlog every table resumes from, found it purged for ${purged.length} table(s): ${list}; ` +
      `the server's oldest binlog is ${oldestFile}. The changes these tables had since their offset are no longer in any binlog, so floe stopped ` +
      `before reading or committing anything (every table's lake is as it was). Re-snapshot them: with floe stopped, drop their Iceberg tables (${drop}) ` +
      `and start floe again — it creates and snapshots them anew. ` +
      (others.length > 0 ? `The other tables (${others.slice(0, 10).join(', ')}${others.length > 10 ? ` and ${others.length - 10} more` : ''}) still have their binlog and resume from their own offsets. ` : '') +
      'To prevent it, keep binlogs longer than floe is ever stopped (binlog_expire_logs_seconds / expire_logs_days)',
    { retryable: false, context: { reason: 'binlog-purged', tables: [...names].join(',') } },
  );
}

/** How to drop the tables in the configured catalog, exactly. */
function dropAdvice(purged: readonly PurgedTable[], catalogType: string): string {
  return catalogType === 'filesystem'
    ? `the filesystem catalog keeps a table as its directory: ${purged.map((p) => removal(p.table.location)).join('; ')}`
    : `DROP TABLE ${purged.map((p) => identifierToString(p.table.identifier)).join(', ')} in the ${catalogType} catalog (Spark, Trino, or the catalog's own API)`;
}

/** How to remove a filesystem-catalog table: its directory (local) or every object under its prefix (S3). */
function removal(location: string): string {
  const local = /^file:(?:\/\/(?:localhost)?)?(\/.*)$/i.exec(location);
  if (local) return `rm -r '${local[1]}'`;
  if (!/^[a-z][a-z0-9+.-]*:/i.test(location)) return `rm -r '${location}'`;
  return `delete every object under ${location.replace(/\/+$/, '')}/`;
}

/**
 * The server refused a binlog start as purged although the check above passed — a GTID start on
 * another server (failover), or a purge while floe ran behind: the reader's error names the offset
 * only. This adds the tables that stand at or before that offset (their changes from there are
 * gone, they must be re-snapshotted) and the way out; the others may still be resumable, and the
 * next start names them too if they are not. Any other error is returned as it is.
 */
export function withPurgedTables(error: unknown, tables: readonly ResumingTable[], catalogType: string): unknown {
  if (!isFloeError(error) || error.context.reason !== 'binlog-purged' || error.context.tables !== undefined || error.context.offset === undefined) return error;
  const refused = parseOffset(error.context.offset);
  const purged: PurgedTable[] = [];
  for (const t of tables) {
    const at = resumePoints(t.progress).find((o) => {
      try {
        return compareOffsets(o, refused) <= 0;
      } catch {
        return false; // not comparable with the refused start: not known to be affected
      }
    });
    if (at) purged.push({ table: t, offset: at });
  }
  if (purged.length === 0) return error;
  const names = purged.map((p) => p.table.key);
  return new FloeError(
    error.subsystem,
    error.kind,
    `${error.message.startsWith(`${error.subsystem}: `) ? error.message.slice(error.subsystem.length + 2) : error.message}. The tables at or before that offset: ${names.join(', ')}. Re-snapshot them: with floe stopped, drop their Iceberg tables (${dropAdvice(purged, catalogType)}) and start floe again`,
    { retryable: false, cause: error, context: { ...error.context, tables: names.join(',') } },
  );
}
