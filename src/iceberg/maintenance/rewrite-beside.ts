/**
 * A v3 compaction prepared beside the writer's commits and landed between two of them, so that `floe
 * run` holds its checkpoints only for the landing, not while files are read and written:
 *
 * 1. `prepareRewrite`, while the writer goes on committing: on the table at snapshot S, the data
 *    files F that rewrite-data-files.ts would rewrite (`planRewrite`) are read with S's deletes and
 *    their live rows written into new files G, each row's lineage kept (rewrite-rows.ts). Nothing is
 *    committed; G is referenced by nothing yet.
 * 2. `landRewrite`, with the writer idle: the rows of G that commits after S deleted get deletion
 *    vectors, in the one `replace` commit that swaps F for G and drops every live DV of F (S's and
 *    those committed since). G and its DVs get the commit's sequence number, so the DVs apply to G
 *    (spec "Scan Planning": a position delete applies to data files whose data sequence number is
 *    not greater than its own) and no older delete does.
 *
 * Which rows of G were deleted after S is the caller's to say (`dead`, positions per file of G):
 * floe's writer knows it from its key index (checkpoint/compaction-landing.ts). The landing is exact
 * only when every commit after S was one the caller saw, so the commit goes ahead only on the head
 * the caller named; anything else (another writer, a schema change, a delete floe's DVs do not
 * express, a file of F no longer live) abandons it and the prepared files go.
 *
 * Only v3 tables whose live deletes are all deletion vectors are prepared here (equality deletes
 * committed after S would not apply to G); others are compacted by rewrite-data-files.ts.
 *
 * Crash safety: as rewrite-data-files.ts — G and the DV file are unreferenced until the one commit,
 * and orphan removal takes them after a crash. Failpoints: `compaction-after-rewrite-files` and the
 * commit's `compaction-*`.
 */
import { errorMessage, isFloeError } from '../../util/errors.js';
import { failpoint } from '../../util/failpoints.js';
import type { FileIO } from '../../io/file-io.js';
import type { ParquetWriterOptions } from '../parquet/file-writer-options.js';
import type { PositionBitmap } from '../puffin/position-bitmap.js';
import type { DataFile } from '../spec/data-file.js';
import { currentSnapshot } from '../spec/snapshot-ids.js';
import type { CatalogTable } from '../table/catalog-table.js';
import { commitSnapshot } from '../table/snapshot-producer.js';
import type { CompactionCommit } from '../keyindex/key-index.js';
import { writeDeletionVectors } from '../writer/position-delete-writers.js';
import { tableLocations } from '../writer/table-locations.js';
import { liveDeleteFiles, planRewrite } from './rewrite-data-files.js';
import { deleteQuietly, rewriteRowsWithLineage } from './rewrite-rows.js';
import type { SmallFileOptions } from './small-file-groups.js';

/** What a compaction prepared beside the writer takes: what rewrite-data-files.ts would, and how to write. */
export interface RewriteBesideOptions {
  readonly applyDeletes: boolean;
  readonly smallFiles?: SmallFileOptions;
  /** The Parquet writer's options (an encoder off the main thread). */
  readonly parquet?: ParquetWriterOptions;
  /** Waited for between two batches of rows: the writer's commits go first. */
  readonly pause?: () => Promise<void>;
}

/** Files written for a compaction that is not committed yet. */
export interface PreparedRewrite {
  /** The snapshot S whose rows were read. */
  readonly snapshotId: bigint;
  readonly schemaId: number;
  readonly specId: number;
  /** F: the data files it replaces, as S's manifests describe them. */
  readonly removedDataFiles: readonly DataFile[];
  /** G: the files holding F's rows that were live at S. */
  readonly addedDataFiles: readonly DataFile[];
}

export interface LandedRewrite {
  readonly table: CatalogTable;
  /** The `replace` snapshot (undefined: abandoned, see `skipped`). */
  readonly commit?: CompactionCommit;
  readonly skipped?: string;
  readonly removedDeleteFiles: number;
  /** Rows of G that commits after S had deleted: carried as DVs. */
  readonly carriedDeletes: number;
}

/**
 * Writes G for the compaction due on `table` (deletes applied with `applyDeletes`, small files
 * bin-packed with `smallFiles`). Undefined with nothing to rewrite; `skipped` when this table is
 * not for a rewrite beside the writer (rewrite-data-files.ts compacts it).
 */
export async function prepareRewrite(table: CatalogTable, options: RewriteBesideOptions): Promise<PreparedRewrite | { skipped: string } | undefined> {
  const m = table.metadata;
  const start = currentSnapshot(m);
  if (m.formatVersion !== 3) return { skipped: `format v${m.formatVersion}: only v3 tables are compacted beside the writer` };
  if (!start) return undefined;
  const other = (await liveDeleteFiles(table.io, m)).find((d) => d.fileFormat !== 'PUFFIN');
  if (other) return { skipped: `${other.filePath} is a ${other.content} file, not a deletion vector` };
  const { plan, rewrite } = await planRewrite(table, options);
  if (rewrite.length === 0) return undefined;
  const written = await rewriteRowsWithLineage(table, rewrite, plan, () => true, options.parquet, options.pause);
  return { snapshotId: start.snapshotId, schemaId: m.currentSchemaId, specId: m.defaultSpecId, removedDataFiles: rewrite.map((t) => t.file), addedDataFiles: written.dataFiles };
}

/**
 * Commits `prepared` on `table`, whose head must be `head`, with DVs for the `dead` positions of its
 * new files (by file path). Abandoned (its files deleted) when the table moved on from `head`,
 * changed schema or partitioning, or holds deletes of F that are not DVs.
 */
export async function landRewrite(table: CatalogTable, prepared: PreparedRewrite, dead: ReadonlyMap<string, PositionBitmap>, head: bigint): Promise<LandedRewrite> {
  const m = table.metadata;
  const removed = new Set(prepared.removedDataFiles.map((f) => f.filePath));
  const abandon = async (skipped: string): Promise<LandedRewrite> => {
    await discardRewrite(table.io, prepared);
    return { table, skipped, removedDeleteFiles: 0, carriedDeletes: 0 };
  };
  if (currentSnapshot(m)?.snapshotId !== head) return abandon('the table moved on from the snapshot its deletes were located on');
  if (m.currentSchemaId !== prepared.schemaId || m.defaultSpecId !== prepared.specId) return abandon('the schema or the partitioning changed while the files were written');
  const dropped: DataFile[] = [];
  for (const d of await liveDeleteFiles(table.io, m)) {
    if (d.fileFormat !== 'PUFFIN' || d.referencedDataFile === undefined) return abandon(`${d.filePath} is a ${d.content} file, not a deletion vector`);
    if (removed.has(d.referencedDataFile)) dropped.push(d);
  }
  let carriedDeletes = 0;
  const targets = prepared.addedDataFiles.flatMap((f) => {
    const positions = dead.get(f.filePath);
    if (!positions || positions.isEmpty) return [];
    carriedDeletes += Number(positions.cardinality);
    return [{ dataFilePath: f.filePath, specId: f.specId, partition: f.partition, positions }];
  });
  const puffinPath = tableLocations(m).newDataLocation(`dv-rewrite-${globalThis.crypto.randomUUID()}.puffin`, '');
  const dvs = await writeDeletionVectors({ io: table.io, puffinPath, targets });
  await failpoint('compaction-after-rewrite-files');
  const discard = async () => {
    await discardRewrite(table.io, prepared);
    await deleteQuietly(table.io, dvs.paths);
  };
  try {
    const result = await commitSnapshot(
      table,
      { operation: 'replace', addedDataFiles: prepared.addedDataFiles, addedDeleteFiles: dvs.deleteFiles, removedFiles: [...prepared.removedDataFiles, ...dropped] },
      {
        summary: { 'floe.maintenance': 'rewrite-data-files' },
        failpointScope: 'compaction',
        validate: async (current) => (currentSnapshot(current)?.snapshotId === head ? 'proceed' : 'skip'),
      },
    );
    if (result.status !== 'committed') {
      await discard();
      return { table, skipped: 'another writer committed meanwhile; try again', removedDeleteFiles: 0, carriedDeletes: 0 };
    }
    const commit = { snapshotId: result.snapshot.snapshotId, parentSnapshotId: result.snapshot.parentSnapshotId, removedDataFiles: prepared.removedDataFiles, addedDataFiles: prepared.addedDataFiles };
    return { table: result.table, commit, removedDeleteFiles: dropped.length, carriedDeletes };
  } catch (e) {
    // a definite failure: the new files are referenced by nothing (unknown outcomes keep them)
    if (!isFloeError(e, 'commit-state-unknown')) await discard();
    // one of F no longer live (manifest-filter.ts): removed by a commit since S
    if (isFloeError(e, 'commit-conflict')) return { table, skipped: errorMessage(e), removedDeleteFiles: 0, carriedDeletes: 0 };
    throw e;
  }
}

/** Deletes the files of a prepared rewrite that will not be committed. */
export async function discardRewrite(io: FileIO, prepared: PreparedRewrite): Promise<void> {
  await deleteQuietly(io, prepared.addedDataFiles.map((f) => f.filePath));
}
