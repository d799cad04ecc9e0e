/**
 * Table maintenance as floe runs it — `floe run` on a schedule (`maintenance.intervalMs`, after a
 * checkpoint, so it never overlaps floe's own commits) and `floe maintain` on demand: snapshot
 * expiry (iceberg/maintenance/expire-snapshots.ts) by age (`maintenance.expireSnapshots.olderThanMs`)
 * and count (`retainLast`); before it, compaction of v2 and v3 tables with live deletes
 * (iceberg/maintenance/rewrite-data-files.ts; `compactionDue` decides) and of their small files
 * (`maintenance.compaction.minInputFiles`, small-file-groups.ts; `smallFilesMayBeDue` decides whether
 * to look), each commit reported to `onCommit` (floe run's writer follows it), and manifest rewriting when the current snapshot has more
 * than `maintenance.manifests.minCount` small manifests (iceberg/maintenance/rewrite-manifests.ts; after
 * compaction, whose snapshot it then rewrites too). Old metadata files go at each commit already
 * (write.metadata.delete-after-commit.enabled, set on the tables floe creates).
 *
 * Expiry keeps floe's resume point: the checkpoint stamp is also a table property
 * (iceberg/checkpoint/checkpoint-stamps.ts), so a restart finds it whatever snapshots remain.
 */
import type { FloeConfig } from '../config/schema.js';
import { expireSnapshots, planExpiry, type ExpireOptions, type ExpireResult, type PlannedExpiry } from '../iceberg/maintenance/expire-snapshots.js';
import { removeOrphanFiles } from '../iceberg/maintenance/remove-orphan-files.js';
import { referencedStateObjects } from './state-references.js';
import { rewriteDataFiles } from '../iceberg/maintenance/rewrite-data-files.js';
import type { CompactionCommit } from '../iceberg/keyindex/index.js';
import type { SmallFileOptions } from '../iceberg/maintenance/small-file-groups.js';
import { rewriteManifests } from '../iceberg/maintenance/rewrite-manifests.js';
import { currentSnapshot } from '../iceberg/spec/snapshot-ids.js';
import type { CatalogTable } from '../iceberg/table/index.js';
import type { Logger } from './observe/logger.js';

/** Table property: when floe last expired snapshots of the table (epoch ms; `floe status` shows it). */
const LAST_EXPIRY_PROPERTY = 'floe.maintenance.last-expiry-ms';

export interface MaintenanceOptions {
  /**
   * Compact a format-v2 or v3 table first when at least this many delete files are live (v3: mostly
   * deletion vectors, one per data file with deleted rows; 0 or 1: whenever one is; undefined: not
   * this time).
   */
  readonly compactMinDeleteFiles?: number;
  /** Rewrite manifests when more than `minCount` are smaller than the target (undefined: not this time). */
  readonly manifests?: { readonly minCount: number; readonly targetSizeBytes?: number };
  /**
   * v3 tables (with `compactMinDeleteFiles` set): also compact when the rows deletion vectors and
   * position deletes remove are at least this fraction of the records in the table's data files —
   * a reader reads each of them and drops it, so at 0.1 a scan reads ~11% more rows than are live.
   * Undefined: the file count alone decides.
   */
  readonly compactMinDeletedRowsRatio?: number;
  /**
   * Also bin-pack small data files (iceberg/maintenance/small-file-groups.ts; Java
   * `RewriteDataFiles` defaults) whether or not a delete applies to them (undefined: not this time).
   */
  readonly compactSmallFiles?: SmallFileOptions;
  /**
   * Called right after each of floe's maintenance commits lands (the compaction, with what it moved;
   * the manifest rewrite), before the next step: `floe run` brings its writer's key index to the new
   * snapshot (table-committer.ts `followMaintenance`), so its next checkpoint does not take
   * them for another writer's.
   */
  readonly onCommit?: (table: CatalogTable, compaction?: CompactionCommit) => Promise<void> | void;
  readonly olderThanMs: number;
  readonly retainLast: number;
  readonly dryRun?: boolean;
  /** Also remove orphan files older than this (undefined: not this time). */
  readonly orphansOlderThanMs?: number;
}

export interface TableMaintenanceReport {
  readonly table: string;
  readonly expiredSnapshots: number;
  readonly deletedFiles: number;
  readonly retainedSnapshots: number;
  /** Data files rewritten and delete files dropped by compaction (undefined: it did not run). */
  readonly compaction?: { rewrittenDataFiles: number; removedDeleteFiles: number; addedDataFiles?: number; smallFileGroups?: number };
  /** Manifests before and after, and how many were replaced by how many (undefined: it did not run). */
  readonly manifests?: { before: number; after: number; replaced: number; created: number; skipped?: string };
  /** Orphan files deleted (undefined: orphan removal did not run). */
  readonly orphanFiles?: number;
}

export function maintenanceOptions(config: FloeConfig): MaintenanceOptions {
  const c = config.maintenance.compaction;
  const mf = config.maintenance.manifests;
  return {
    ...(mf.enabled ? { manifests: { minCount: mf.minCount, ...(mf.targetSizeBytes !== undefined ? { targetSizeBytes: mf.targetSizeBytes } : {}) } } : {}),
    olderThanMs: config.maintenance.expireSnapshots.olderThanMs,
    retainLast: config.maintenance.expireSnapshots.retainLast,
    ...(c.enabled ? { compactMinDeleteFiles: c.minDeleteFiles, compactMinDeletedRowsRatio: c.minDeletedRowsRatio } : {}),
    ...(c.enabled && c.smallFiles ? { compactSmallFiles: smallFileOptions(config) } : {}),
  };
}

/** `maintenance.compaction`'s small-file thresholds (unset ones: Java's defaults, from the table's target size). */
export function smallFileOptions(config: FloeConfig): SmallFileOptions {
  const c = config.maintenance.compaction;
  return {
    minInputFiles: c.minInputFiles,
    maxFileGroupSizeBytes: c.maxFileGroupSizeBytes,
    ...(c.minFileSizeBytes !== undefined ? { minFileSizeBytes: c.minFileSizeBytes } : {}),
  };
}

/**
 * Compaction still to do in a round `floe run` spreads over the pauses between its commits
 * (run-maintenance.ts): the data files the first step chose that its time budget left, and what it
 * applied. Files added after the round began are not taken, so a round ends under any load.
 */
export interface CompactionProgress {
  readonly pending: ReadonlySet<string>;
  readonly applyDeletes: boolean;
  readonly smallFiles?: SmallFileOptions;
}

type CompactionReport = NonNullable<TableMaintenanceReport['compaction']>;

/**
 * Compaction when due (or continued from `continuing`), reported to `onCommit` when it lands. With
 * `keepGoing` it rewrites data files until that says stop and returns the rest as `continuing`.
 */
export async function compactTable(
  table: CatalogTable,
  options: MaintenanceOptions,
  logger: Logger,
  step: { readonly keepGoing?: () => boolean; readonly continuing?: CompactionProgress } = {},
): Promise<{ table: CatalogTable; compaction?: CompactionReport; continuing?: CompactionProgress }> {
  const { continuing } = step;
  const wanted = continuing ? { applyDeletes: continuing.applyDeletes, ...(continuing.smallFiles ? { smallFiles: continuing.smallFiles } : {}) } : compactionWanted(table, options);
  if (!wanted) return { table };
  const deletesDue = wanted.applyDeletes;
  const small = wanted.smallFiles;
  const r = await rewriteDataFiles(table, {
    dryRun: options.dryRun,
    applyDeletes: deletesDue,
    ...(small ? { smallFiles: small } : {}),
    ...(continuing ? { onlyFiles: continuing.pending } : {}),
    ...(step.keepGoing ? { keepGoing: step.keepGoing } : {}),
  });
  let compaction: CompactionReport | undefined;
  // nothing to bin-pack is the usual case on a quiet table, not news; a delete compaction is always reported
  if (deletesDue || r.rewrittenDataFiles > 0 || options.dryRun) {
    // (the small-file counts only when bin-packing was asked for: the report of a delete-only compaction is as it was)
    // (the groups as the round's first step planned them: a later step would count them again)
    compaction = { rewrittenDataFiles: r.rewrittenDataFiles, removedDeleteFiles: r.removedDeleteFiles, ...(small ? { addedDataFiles: r.addedDataFiles, smallFileGroups: continuing ? 0 : r.smallFileGroups } : {}) };
  }
  if (r.skipped && !options.dryRun && (deletesDue || r.conflict)) logger.info(`compaction skipped: ${r.skipped}`, { table: nameOf(table) });
  if (r.commit) await options.onCommit?.(r.table, r.commit);
  const next = r.pending.length > 0 ? { pending: new Set(r.pending), applyDeletes: deletesDue, ...(small ? { smallFiles: small } : {}) } : undefined;
  return { table: r.table, ...(compaction ? { compaction } : {}), ...(next ? { continuing: next } : {}) };
}

/** What a compaction of `table` would take now (undefined: none is due): its deletes, its small files, or both. */
export function compactionWanted(table: CatalogTable, options: MaintenanceOptions): { applyDeletes: boolean; smallFiles?: SmallFileOptions } | undefined {
  const applyDeletes = options.compactMinDeleteFiles !== undefined && compactionDue(table, options.compactMinDeleteFiles, options.compactMinDeletedRowsRatio);
  const small = options.compactSmallFiles && smallFilesMayBeDue(table, options.compactSmallFiles) ? options.compactSmallFiles : undefined;
  if (!applyDeletes && !small) return undefined;
  return { applyDeletes, ...(small ? { smallFiles: small } : {}) };
}

/** The manifest rewrite, when `options.manifests` asks for it, reported to `onCommit` when it lands. */
export async function rewriteTableManifests(table: CatalogTable, options: MaintenanceOptions, logger: Logger): Promise<{ table: CatalogTable; manifests?: TableMaintenanceReport['manifests'] }> {
  if (!options.manifests) return { table };
  const name = nameOf(table);
  const r = await rewriteManifests(table, {
    minManifests: options.manifests.minCount,
    ...(options.manifests.targetSizeBytes !== undefined ? { targetSizeBytes: options.manifests.targetSizeBytes } : {}),
    dryRun: options.dryRun,
    warn: (message) => logger.warn(message, { table: name }),
  });
  // a skip for want of small manifests is the usual case, not news; a conflict is worth a line
  const acted = r.replacedManifests > 0;
  const manifests = acted || options.dryRun ? { before: r.manifestsBefore, after: r.manifestsAfter, replaced: r.replacedManifests, created: r.createdManifests, ...(r.skipped ? { skipped: r.skipped } : {}) } : undefined;
  if (r.skipped && acted && !options.dryRun) logger.info(`manifest rewrite skipped: ${r.skipped}`, { table: name });
  if (acted && !r.skipped && !options.dryRun) await options.onCommit?.(r.table);
  return { table: r.table, ...(manifests ? { manifests } : {}) };
}

/** The expiry `expireTable` would make of `table` now, planned beforehand (`floe run` plans it beside its commits). */
export function planTableExpiry(table: CatalogTable, options: MaintenanceOptions, nowMs = Date.now()): Promise<PlannedExpiry> {
  return planExpiry(table, { expireOlderThanMs: BigInt(nowMs - options.olderThanMs), retainLast: options.retainLast, nowMs: BigInt(nowMs) });
}

/** Snapshot expiry, then (with `orphansOlderThanMs`) orphan removal on the table as expiry left it; the report of the whole maintenance. */
export async function expireTable(
  table: CatalogTable,
  options: MaintenanceOptions,
  logger: Logger,
  earlier: Pick<TableMaintenanceReport, 'compaction' | 'manifests'>,
  nowMs = Date.now(),
  beside: Pick<ExpireOptions, 'planned' | 'deleteLater'> = {},
): Promise<{ report: TableMaintenanceReport; result: ExpireResult }> {
  const name = nameOf(table);
  const result = await expireSnapshots(table, {
    expireOlderThanMs: BigInt(nowMs - options.olderThanMs),
    retainLast: options.retainLast,
    dryRun: options.dryRun,
    nowMs: BigInt(nowMs),
    warn: (message) => logger.warn(message, { table: name }),
    stampProperty: LAST_EXPIRY_PROPERTY,
    ...beside,
  });
  const f = result.deletedFiles;
  let orphanFiles: number | undefined;
  if (options.orphansOlderThanMs !== undefined) {
    // on the table as the expiry left it: the files it just unreferenced and deleted are not listed
    const orphans = await removeOrphanFiles(result.table, { olderThanMs: options.orphansOlderThanMs, nowMs, dryRun: options.dryRun, warn: (message) => logger.warn(message, { table: name }), referencedObjects: referencedStateObjects });
    orphanFiles = orphans.orphans.length;
  }
  const report: TableMaintenanceReport = {
    table: name,
    expiredSnapshots: result.expiredSnapshots.length,
    deletedFiles: f.manifestLists.length + f.manifests.length + f.contentFiles.length,
    retainedSnapshots: result.plan.retained.size,
    ...(earlier.compaction ? { compaction: earlier.compaction } : {}),
    ...(earlier.manifests ? { manifests: earlier.manifests } : {}),
    ...(orphanFiles !== undefined ? { orphanFiles } : {}),
  };
  return { report, result };
}

/** The counts of two compaction steps of one round, as one. */
export function addCompactions(a: CompactionReport | undefined, b: CompactionReport | undefined): CompactionReport | undefined {
  if (!a || !b) return a ?? b;
  const sum = (x: number | undefined, y: number | undefined): number | undefined => (x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0));
  const added = sum(a.addedDataFiles, b.addedDataFiles);
  const groups = sum(a.smallFileGroups, b.smallFileGroups);
  return { rewrittenDataFiles: a.rewrittenDataFiles + b.rewrittenDataFiles, removedDeleteFiles: a.removedDeleteFiles + b.removedDeleteFiles, ...(added !== undefined ? { addedDataFiles: added } : {}), ...(groups !== undefined ? { smallFileGroups: groups } : {}) };
}

/** Compaction, manifest rewrite and expiry of one table, one after the other (`floe maintain`). */
export async function maintainTable(table: CatalogTable, options: MaintenanceOptions, logger: Logger, nowMs = Date.now()): Promise<{ report: TableMaintenanceReport; result: ExpireResult }> {
  const compacted = await compactTable(table, options, logger);
  const rewritten = await rewriteTableManifests(compacted.table, options, logger);
  return expireTable(rewritten.table, options, logger, { compaction: compacted.compaction, manifests: rewritten.manifests }, nowMs);
}

function nameOf(table: CatalogTable): string {
  return [...table.identifier.namespace, table.identifier.name].join('.');
}

/**
 * Whether a table needs compaction, from its current snapshot's summary (no manifest read): v2 and
 * v3 when `total-delete-files` (v3: deletion vectors, and equality deletes of keyless tables) reaches
 * `minDeleteFiles`; v3 also when at least one delete is live and `total-position-deletes` (the rows
 * DVs remove: a merged DV replaces the one before it, so this counts each deleted row once) is
 * `minDeletedRowsRatio` of `total-records` or more. v1 tables have no row-level deletes.
 */
export function compactionDue(table: CatalogTable, minDeleteFiles: number, minDeletedRowsRatio?: number): boolean {
  const m = table.metadata;
  if (m.formatVersion !== 2 && m.formatVersion !== 3) return false;
  const summary = currentSnapshot(m)?.summary ?? {};
  const live = Number(summary['total-delete-files'] ?? '0');
  if (live === 0) return false;
  if (live >= Math.max(1, minDeleteFiles)) return true;
  if (m.formatVersion < 3 || minDeletedRowsRatio === undefined) return false;
  const records = Number(summary['total-records'] ?? '0');
  const deleted = Number(summary['total-position-deletes'] ?? '0');
  return records > 0 && deleted / records >= minDeletedRowsRatio;
}

/**
 * Whether bin-packing small files may have work, from the current snapshot's summary (no manifest
 * read): a v2 or v3 table with at least `minInputFiles` (at least 2) live data files.
 */
function smallFilesMayBeDue(table: CatalogTable, options: SmallFileOptions): boolean {
  const m = table.metadata;
  if (m.formatVersion !== 2 && m.formatVersion !== 3) return false;
  const files = Number(currentSnapshot(m)?.summary['total-data-files'] ?? '0');
  return files >= Math.max(2, options.minInputFiles ?? 5);
}

/** When `floe run` maintains next: every `intervalMs`, the first time one interval after the start. */
export class MaintenanceSchedule {
  private last: number;

  constructor(
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.last = now();
  }

  due(): boolean {
    return this.now() - this.last >= this.intervalMs;
  }

  ran(): void {
    this.last = this.now();
  }
}
