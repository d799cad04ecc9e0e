/**
 * Compaction of a format-v2 or v3 table (Java `RewriteDataFiles` with deletes applied): every data file
 * that a delete file applies to is rewritten — its live rows, deletes applied, into new files of the
 * table's partitioning — and every delete file that then applies to no remaining data file is
 * dropped in the same `replace` commit. With `smallFiles`, the groups of small data files
 * small-file-groups.ts picks (Java's bin-pack: per partition, at least `min-input-files` files below
 * `min-file-size-bytes`) are rewritten in the same commit too, whether or not a delete applies to
 * them, into files rolled at the table's `write.target-file-size-bytes`; `applyDeletes: false`
 * rewrites only those (their deletes applied and dropped like any rewritten file's). `keepGoing`
 * may stop the rewrite between two data files: the commit then replaces the files rewritten so far,
 * and `pending` names the rest, for a later rewrite limited to them (`onlyFiles`) — `floe run`
 * spreads a compaction over the pauses between its commits that way. The result
 * says what the commit moved (`commit`), for floe's writer to follow (key-index-lifecycle.ts). Afterwards the table has no live equality delete (floe's v2
 * upserts leave one per update or delete; readers pay for each, PyIceberg cannot read them at all)
 * and no live deletion vector (floe's v3 upserts leave one per data file they delete rows of).
 *
 * Sequence numbers: the rewritten files get the commit's (new, highest) sequence number, so no
 * existing delete applies to them — which is right, their rows are already the live ones. A delete
 * committed concurrently would then not apply to them either, so the commit validates that no
 * snapshot committed since the plan added a delete file or removed one of the rewritten files, and
 * gives up otherwise (Java instead keeps the starting sequence number; floe runs its maintenance
 * between its own commits, so a concurrent writer is another engine — try again later).
 *
 * Crash safety (docs/design.md §4b; docs/iceberg-writer-checklist.md §6.1): the table changes only by the one `replace`
 * commit; the files it removes stay on storage (an expiry deletes them once no retained snapshot
 * reaches them), and a crash before the swap leaves only unreferenced files. Failpoints:
 * `compaction-after-rewrite-files`, then snapshot-producer's `compaction-after-manifests`,
 * `compaction-after-manifest-list`, `compaction-before-catalog-swap`, `compaction-after-catalog-swap`.
 *
 * Format v3 (spec "Row Lineage"): a compaction moves rows without modifying them, so each row keeps
 * its `_row_id` and `_last_updated_sequence_number` (rules 1 and 3 of "Row lineage assignment"). The
 * rewritten files carry both as real columns (ids 2147483540 / 2147483539, appended to the table
 * schema as Java's `MetadataColumns.schemaWithRowLineage` and Spark's rewrite do): the source file's
 * explicit values where it had them, else the values a reader inherits there — its `first_row_id` +
 * position and its data sequence number. Explicit values win over inheritance on read, so the new
 * files' own (higher) data sequence number and `first_row_id` do not apply to these rows. As in Java
 * (`BaseRewriteFiles` adds the new files like any other: `first_row_id` null in the manifest entry,
 * assigned by inheritance from the manifest list), the new files still get a `first_row_id`, and the
 * snapshot's `added-rows` (so the table's `next-row-id`) grows by their row count: row ids are an
 * upper bound (spec "Snapshot Row IDs"), and a range no row uses is harmless. The deletion vectors of
 * rewritten files are dropped in the same commit, as v2 position deletes are; equality deletes
 * (keyless v3 tables) likewise once no remaining file needs them.
 */
import { FloeError } from '../../util/errors.js';
import { failpoint } from '../../util/failpoints.js';
import type { DataFile } from '../spec/data-file.js';
import { planScan, type FileScanTask, type ScanPlan } from '../scan/scan-plan.js';
import { ancestorsOf, currentSnapshot } from '../spec/snapshot-ids.js';
import type { TableMetadata } from '../spec/table-metadata.js';
import type { CatalogTable } from '../table/catalog-table.js';
import { readManifestEntries, readSnapshotManifests } from '../table/manifest-io.js';
import { commitSnapshot } from '../table/snapshot-producer.js';
import { contentFileKey } from '../table/manifest-filter.js';
import { targetFileSizes } from '../writer/table-locations.js';
import type { CompactionCommit } from '../keyindex/key-index.js';
import { compareStrings } from '../spec/value-compare.js';
import { MIN_INPUT_FILES_DEFAULT, partitionOf, planSmallFileGroups, type SmallFileGroup, type SmallFileOptions } from './small-file-groups.js';
import { deleteQuietly, rewriteRows, rewriteRowsWithLineage } from './rewrite-rows.js';
import type { FileIO } from '../../io/file-io.js';

const SUBSYSTEM = 'iceberg.maintenance';

export interface RewriteOptions {
  dryRun?: boolean;
  /** Rewrite every data file a delete applies to (default true). */
  applyDeletes?: boolean;
  /** Also bin-pack small data files (small-file-groups.ts); undefined: not this time. */
  smallFiles?: SmallFileOptions;
  /** Rewrite only data files among these paths (a round continued from an earlier commit: `pending`). */
  onlyFiles?: ReadonlySet<string>;
  /**
   * Asked before each data file after the first: false stops the rewrite there, and the files left
   * are `pending`. Undefined: every chosen file is rewritten.
   */
  keepGoing?: () => boolean;
}

export interface RewriteResult {
  table: CatalogTable;
  rewrittenDataFiles: number;
  addedDataFiles: number;
  removedDeleteFiles: number;
  /** Groups of small files rewritten together (small-file-groups.ts; 0 without `smallFiles`). */
  smallFileGroups: number;
  /** The `replace` snapshot that landed (undefined: nothing committed). */
  commit?: CompactionCommit;
  /** Why nothing was committed (no delete to apply, a concurrent change, a dry run). */
  skipped?: string;
  /** Skipped because another writer changed the files meanwhile (worth a log line). */
  conflict?: boolean;
  /** Data files chosen for this rewrite that `keepGoing` left for a later one (empty: none). */
  pending: string[];
}

/** Compaction applying every live delete (the rewrite before small files were bin-packed too). */
export async function rewriteDataFilesWithDeletes(table: CatalogTable, options: Omit<RewriteOptions, 'applyDeletes'> = {}): Promise<RewriteResult> {
  return rewriteDataFiles(table, { ...options, applyDeletes: true });
}

/**
 * The data files to rewrite: those a delete applies to (`applyDeletes`) and the groups of small
 * files (`smallFiles`), each rewritten with the deletes that apply to it; the delete files that then
 * apply to no remaining data file are dropped.
 */
export async function rewriteDataFiles(table: CatalogTable, options: RewriteOptions = {}): Promise<RewriteResult> {
  const m = table.metadata;
  if (m.formatVersion < 2 || m.formatVersion > 3) {
    throw new FloeError(SUBSYSTEM, 'unsupported', `compaction applies the row-level deletes of format v2 and v3 tables; ${table.identifier.name} is format v${m.formatVersion}, which floe does not compact`);
  }
  const start = currentSnapshot(m);
  const none = (skipped: string): RewriteResult => ({ table, rewrittenDataFiles: 0, addedDataFiles: 0, removedDeleteFiles: 0, smallFileGroups: 0, skipped, pending: [] });
  if (!start) return none('the table has no snapshot');
  const applyDeletes = options.applyDeletes ?? true;
  const { plan, rewrite, chosen, groups } = await planRewrite(table, options);
  const liveDeletes = applyDeletes || rewrite.length > 0 ? await liveDeleteFiles(table.io, m) : [];
  if (rewrite.length === 0 && liveDeletes.length === 0) {
    return none(options.smallFiles ? `no delete file is live and no partition has ${options.smallFiles.minInputFiles ?? MIN_INPUT_FILES_DEFAULT} or more small data files` : 'no delete file is live');
  }
  if (options.dryRun) {
    const dropped = droppedDeletes(plan.tasks, liveDeletes, chosen, applyDeletes);
    if (rewrite.length === 0 && dropped.length === 0) return none('nothing to rewrite');
    return { table, rewrittenDataFiles: rewrite.length, addedDataFiles: 0, removedDeleteFiles: dropped.length, smallFileGroups: groups.length, skipped: 'dry run', pending: [] };
  }
  const keepGoing = options.keepGoing ?? (() => true);
  const added = m.formatVersion >= 3 ? await rewriteRowsWithLineage(table, rewrite, plan, keepGoing) : await rewriteRows(table, rewrite, plan, keepGoing);
  const done = rewrite.slice(0, added.rewritten);
  const pending = rewrite.slice(added.rewritten).map((t) => t.file.filePath);
  const dropped = droppedDeletes(plan.tasks, liveDeletes, new Set(done.map((t) => t.file.filePath)), applyDeletes);
  if (done.length === 0 && dropped.length === 0) return none('nothing to rewrite');
  // A crash here leaves the rewritten files referenced by nothing: orphans, which orphan removal takes
  // once they are older than its window; the table is untouched and the next run rewrites again.
  await failpoint('compaction-after-rewrite-files');
  const removedData = done.map((t) => t.file);
  try {
    const result = await commitSnapshot(
      table,
      { operation: 'replace', addedDataFiles: added.dataFiles, removedFiles: [...removedData, ...dropped] },
      {
        summary: { 'floe.maintenance': 'rewrite-data-files' },
        failpointScope: 'compaction',
        validate: async (current) => ((await changedSince(table.io, current, start.snapshotId)) ? 'skip' : 'proceed'),
      },
    );
    if (result.status !== 'committed') {
      await deleteQuietly(table.io, added.paths);
      return { ...none('another writer committed deletes or removed files meanwhile; try again'), conflict: true };
    }
    return {
      table: result.table,
      rewrittenDataFiles: removedData.length,
      addedDataFiles: added.dataFiles.length,
      removedDeleteFiles: dropped.length,
      smallFileGroups: groups.length,
      commit: { snapshotId: result.snapshot.snapshotId, parentSnapshotId: result.snapshot.parentSnapshotId, removedDataFiles: removedData, addedDataFiles: added.dataFiles },
      pending,
    };
  } catch (e) {
    // a definite failure: the new files are referenced by nothing (unknown outcomes keep them)
    if (!(e instanceof FloeError && e.kind === 'commit-state-unknown')) await deleteQuietly(table.io, added.paths);
    throw e;
  }
}

/**
 * What a rewrite takes: the scan of the current snapshot, the data files a delete applies to (with
 * `applyDeletes`, the default) and the groups of small files (`smallFiles`), limited to `onlyFiles`,
 * one source partition after another (a writer holds one partition's output at a time).
 */
export async function planRewrite(table: CatalogTable, options: Pick<RewriteOptions, 'applyDeletes' | 'smallFiles' | 'onlyFiles'>): Promise<{ plan: ScanPlan; rewrite: FileScanTask[]; chosen: Set<string>; groups: SmallFileGroup[] }> {
  const m = table.metadata;
  const plan = await planScan(table.io, m);
  const withDeletes = (options.applyDeletes ?? true) ? plan.tasks.filter((t) => t.deletes.equality.length > 0 || t.deletes.position.length > 0 || t.deletes.dv !== undefined) : [];
  const groups = options.smallFiles ? planSmallFileGroups(plan.tasks, targetFileSizes(m).data, options.smallFiles) : [];
  const chosen = new Set<string>();
  const rewrite: FileScanTask[] = [];
  for (const t of [...withDeletes, ...groups.flatMap((g) => g.tasks)]) {
    if (chosen.has(t.file.filePath) || (options.onlyFiles && !options.onlyFiles.has(t.file.filePath))) continue;
    chosen.add(t.file.filePath);
    rewrite.push(t);
  }
  rewrite.sort((a, b) => compareStrings(partitionOf(a.file), partitionOf(b.file)));
  return { plan, rewrite, chosen, groups };
}

/** The live delete files that go with a rewrite of `rewritten`: those applying only to rewritten files (or, with `applyDeletes`, to none). */
function droppedDeletes(tasks: readonly FileScanTask[], liveDeletes: readonly DataFile[], rewritten: ReadonlySet<string>, applyDeletes: boolean): DataFile[] {
  const appliesTo = new Map<string, Set<string>>();
  for (const t of tasks) {
    for (const ref of [...t.deletes.equality, ...t.deletes.position, ...(t.deletes.dv ? [t.deletes.dv] : [])]) {
      const k = contentFileKey(ref.file);
      if (!appliesTo.has(k)) appliesTo.set(k, new Set());
      appliesTo.get(k)!.add(t.file.filePath);
    }
  }
  // dangling deletes (applying to no live file) go only with a rewrite that applies deletes
  return liveDeletes.filter((d) => {
    const files = appliesTo.get(contentFileKey(d));
    if (!files) return applyDeletes;
    return [...files].every((p) => rewritten.has(p));
  });
}

export async function liveDeleteFiles(io: FileIO, m: TableMetadata): Promise<DataFile[]> {
  const out: DataFile[] = [];
  const s = currentSnapshot(m);
  if (!s) return out;
  for (const mf of await readSnapshotManifests(io, s)) {
    if (mf.content !== 'deletes') continue;
    for (const e of await readManifestEntries(io, mf)) if (e.status !== 'deleted') out.push(e.dataFile);
  }
  return out;
}

/** Whether a snapshot after `since` added a delete file or removed a data file. */
async function changedSince(io: FileIO, current: TableMetadata, since: bigint): Promise<boolean> {
  for (const s of ancestorsOf(current, current.refs.main?.snapshotId ?? current.currentSnapshotId)) {
    if (s.snapshotId === since) return false;
    for (const mf of await readSnapshotManifests(io, s)) {
      if (mf.addedSnapshotId !== s.snapshotId) continue;
      for (const e of await readManifestEntries(io, mf)) {
        if (mf.content === 'deletes' && e.status === 'added') return true;
        if (mf.content === 'data' && e.status === 'deleted') return true;
      }
    }
  }
  return true; // `since` is no longer in main's history: cannot tell
}
