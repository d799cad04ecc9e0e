/**
 * A compaction of a keyed v3 table prepared beside floe's own commits (maintenance/rewrite-beside.ts)
 * and landed by the table's writer between two of them. Preparing also reads the key of every row
 * of the new files; landing asks the writer's key index, which holds the head, which of those rows
 * are still live (compaction-moves.ts `splitRewrittenKeys`): the others were deleted or updated by a
 * checkpoint committed while the files were written, and get deletion vectors in the landing commit.
 * The index then follows the landing with the live ones, without reading the files again.
 */
import type { DataFile } from '../spec/data-file.js';
import { currentSnapshot } from '../spec/snapshot-ids.js';
import type { CatalogTable } from '../table/index.js';
import { readRewrittenKeys, splitRewrittenKeys } from '../keyindex/compaction-moves.js';
import type { KeyIndex } from '../keyindex/key-index.js';
import type { KeyId } from '../keyindex/table-key.js';
import { discardRewrite, landRewrite, prepareRewrite, type LandedRewrite, type PreparedRewrite, type RewriteBesideOptions } from '../maintenance/rewrite-beside.js';

export interface PreparedCompaction {
  readonly rewrite: PreparedRewrite;
  /** Every row of the new files: its key, file and position. */
  readonly keys: readonly (readonly [KeyId, DataFile, number])[];
}

/** A landing, and the keys it moved (for the key index to follow). */
export type LandedCompaction = LandedRewrite & { readonly moved: readonly (readonly [KeyId, DataFile, number])[] };

/**
 * The new files of the compaction due on `table`, and their keys (undefined: nothing to rewrite;
 * `skipped`: the table is not for a compaction beside the writer).
 */
export async function prepareCompaction(table: CatalogTable, options: RewriteBesideOptions): Promise<PreparedCompaction | { skipped: string } | undefined> {
  const m = table.metadata;
  const schema = m.schemas.find((s) => s.schemaId === m.currentSchemaId);
  if (!schema || schema.identifierFieldIds.length === 0) return { skipped: 'the table has no primary key: its writer keeps no key index' };
  const rewrite = await prepareRewrite(table, options);
  if (!rewrite || 'skipped' in rewrite) return rewrite;
  try {
    return { rewrite, keys: await readRewrittenKeys(table, schema, rewrite.addedDataFiles, options.pause) };
  } catch (e) {
    await discardRewrite(table.io, rewrite);
    throw e;
  }
}

/**
 * Lands `prepared` on `table` (the writer's, nothing buffered) with the deletes its rows missed, as
 * `index` (built with schema `indexSchemaId`) knows them; abandoned when the index does not hold the
 * table's head.
 */
export async function landCompaction(table: CatalogTable, prepared: PreparedCompaction, index: KeyIndex | undefined, indexSchemaId: number | undefined): Promise<LandedCompaction> {
  const head = currentSnapshot(table.metadata)?.snapshotId;
  if (!index || head === undefined || index.snapshotId !== head || indexSchemaId !== prepared.rewrite.schemaId) {
    await discardRewrite(table.io, prepared.rewrite);
    return { table, skipped: "the writer's key index does not hold the table's head", removedDeleteFiles: 0, carriedDeletes: 0, moved: [] };
  }
  const { moved, dead } = splitRewrittenKeys(index, prepared.keys, new Set(prepared.rewrite.removedDataFiles.map((f) => f.filePath)));
  return { ...(await landRewrite(table, prepared.rewrite, dead, head)), moved };
}
