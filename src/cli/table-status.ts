/**
 * What `floe status` reports per table, read from the tables themselves (docs/design.md §4: the lake is the
 * source of truth): the current snapshot's `total-records` and delete counts — data-file records, of
 * which upserts and deletes later remove some through delete files until compaction, so they are an
 * upper bound of the live rows; `--count` scans for the exact number — the job's last committed
 * checkpoint and source offset (`lastCommitted`), when it was committed, the snapshot phase (with
 * chunks done / planned while it runs), and the lag — 0 when the committed offset has reached the
 * source's current binlog end, else the time since that commit.
 */
import type { Catalog, TableIdentifier } from '../iceberg/metadata/catalog.js';
import { identifierToString } from '../iceberg/metadata/catalog.js';
import { currentSnapshot, snapshotById } from '../iceberg/spec/snapshot-ids.js';
import { TOTAL_EQ_DELETES, TOTAL_POS_DELETES, TOTAL_RECORDS } from '../iceberg/table/snapshot-summary.js';
import { scanTable } from '../iceberg/scan/index.js';
import { lastCommitted } from '../iceberg/checkpoint/checkpoint-stamps.js';
import type { TableMetadata } from '../iceberg/spec/table-metadata.js';
import { compareOffsets, formatOffset, type BinlogOffset } from '../source/mysql/index.js';
import { parseProgressSummary, type ProgressSummary } from '../pipeline/state.js';
import { errorMessage } from '../util/errors.js';
import { tableHealth, type TableHealth } from '../iceberg/maintenance/table-health.js';

export interface TableStatus {
  /** Iceberg identifier, `namespace.table`. */
  table: string;
  /** `total-records` of the current snapshot: rows in data files, deleted ones included (0 without snapshots). */
  records?: bigint;
  /** `total-equality-deletes` / `total-position-deletes` of the current snapshot (DVs count as position deletes). */
  deletes?: { equality: bigint; position: bigint };
  /** Live rows, deletes applied: only when counted (`floe status --count`). */
  rows?: bigint;
  /** The job's highest committed checkpoint id in this table. */
  checkpointId?: bigint;
  snapshotId?: bigint;
  /** `floe.source-offset` as committed (verbatim). */
  sourceOffset?: string;
  /** Snapshot rows copied so far and chunks finished / planned, while the snapshot runs. */
  snapshot?: { chunks: number; finished: number; rows: number };
  /** The offset for a person: `binlog.000003:1234 gtid_pos="0-1-57"`. */
  offset?: string;
  phase: string;
  /** When the job's last checkpoint was committed (ISO-8601). */
  committedAt?: string;
  lagSeconds?: number;
  /** Files, deletes, snapshots and metadata size (table-health.ts). */
  health?: TableHealth;
  /** Why some fields are missing (table unreadable, offset unparsable). */
  note?: string;
}

export interface StatusOptions {
  jobId: string;
  now?: Date;
  /** The source's current binlog end, when it could be read. */
  sourceEnd?: BinlogOffset;
  /** Count live rows by scanning each table (reads every data and delete file). */
  countRows?: boolean;
}

/** Every table of every namespace (nested ones too), sorted by name. */
export async function listAllTables(catalog: Catalog): Promise<TableIdentifier[]> {
  const out: TableIdentifier[] = [];
  const walk = async (parent: string[]): Promise<void> => {
    for (const ns of await catalog.listNamespaces(parent)) {
      out.push(...(await catalog.listTables(ns)));
      await walk(ns);
    }
  };
  await walk([]);
  return out.sort((a, b) => identifierToString(a).localeCompare(identifierToString(b)));
}

export async function tableStatuses(catalog: Catalog, options: StatusOptions): Promise<TableStatus[]> {
  const out: TableStatus[] = [];
  for (const id of await listAllTables(catalog)) {
    try {
      const loaded = await catalog.loadTable(id);
      const status = tableStatus(identifierToString(id), loaded.metadata, options);
      status.health = await tableHealth(loaded.io, loaded.metadata, loaded.metadataLocation);
      if (options.countRows) {
        const scan = await scanTable(loaded);
        let n = 0n;
        for await (const _row of scan.rows()) n++;
        status.rows = n;
      }
      out.push(status);
    } catch (e) {
      out.push({ table: identifierToString(id), phase: 'unknown', note: `cannot load the table: ${errorMessage(e)}` });
    }
  }
  return out;
}

function tableStatus(name: string, metadata: TableMetadata, options: StatusOptions): TableStatus {
  const now = options.now ?? new Date();
  const current = currentSnapshot(metadata);
  const count = (key: string): bigint | undefined => {
    if (!current) return 0n;
    const v = current.summary[key];
    return v !== undefined && /^\d+$/.test(v) ? BigInt(v) : undefined;
  };
  const status: TableStatus = { table: name, records: count(TOTAL_RECORDS), phase: 'not started' };
  const equality = count(TOTAL_EQ_DELETES);
  const position = count(TOTAL_POS_DELETES);
  if (equality !== undefined && position !== undefined) status.deletes = { equality, position };
  const last = lastCommitted(metadata, options.jobId);
  if (!last) {
    if (current) status.note = `no checkpoint of job ${options.jobId} in this table`;
    return status;
  }
  status.checkpointId = last.checkpointId;
  status.snapshotId = last.snapshotId;
  status.sourceOffset = last.sourceOffset;
  const snapshot = snapshotById(metadata, last.snapshotId);
  const committedMs = snapshot ? Number(snapshot.timestampMs) : undefined;
  if (committedMs !== undefined) status.committedAt = new Date(committedMs).toISOString();
  let offset: BinlogOffset | undefined;
  try {
    const progress = parseProgressSummary(last.sourceOffset);
    status.phase = phaseText(progress);
    offset = progress.offset;
    if (offset) status.offset = formatOffset(offset);
    if (progress.snapshot && progress.phase === 'snapshot') status.snapshot = progress.snapshot;
  } catch (e) {
    status.phase = 'unknown';
    status.offset = last.sourceOffset;
    status.note = `cannot read floe.source-offset: ${errorMessage(e)}`;
  }
  let caughtUp = false;
  if (offset && options.sourceEnd) {
    try {
      caughtUp = compareOffsets(offset, options.sourceEnd) >= 0;
    } catch {
      caughtUp = false; // another server's offsets: fall back to the time since the commit
    }
  }
  if (caughtUp) status.lagSeconds = 0;
  else if (committedMs !== undefined) status.lagSeconds = Math.max(0, (now.getTime() - committedMs) / 1000);
  return status;
}

/** `snapshot 57/120 chunks` or `streaming`. */
function phaseText(p: ProgressSummary): string {
  if (p.phase === 'snapshot') return p.snapshot ? `snapshot ${p.snapshot.finished}/${p.snapshot.chunks} chunks` : 'snapshot';
  return 'streaming';
}
