/**
 * Where floe's own compaction (maintenance/rewrite-data-files.ts) moved the rows a key index holds:
 * the key columns of just the new files — no delete applies to them, they have the commit's sequence
 * number — each row's key at its new place. Every row of a new file was a live row of a removed one,
 * indexed there and only once; an index that does not hold them so is not followed (it is rebuilt).
 */
import { errorMessage } from '../../util/errors.js';
import { PositionBitmap } from '../puffin/position-bitmap.js';
import type { DataFile } from '../spec/data-file.js';
import type { Schema } from '../spec/schema.js';
import { snapshotById } from '../spec/snapshot-ids.js';
import type { CatalogTable } from '../table/index.js';
import type { CompactionCommit, KeyIndex } from './key-index.js';
import { keyReader } from './key-index-build.js';
import { TableKey, type KeyId } from './table-key.js';

export async function readCompactionMoves(
  table: CatalogTable,
  schema: Schema,
  index: KeyIndex,
  compaction: CompactionCommit,
): Promise<{ moved: [KeyId, DataFile, number][]; removed: Set<string> } | { why: string }> {
  const removed = new Set(compaction.removedDataFiles.map((f) => f.filePath));
  const sequenceNumber = snapshotById(table.metadata, compaction.snapshotId)?.sequenceNumber ?? 0n;
  const reader = keyReader(table, TableKey.identifier(schema), schema);
  const moved: [KeyId, DataFile, number][] = [];
  let consistent = true;
  try {
    for (const file of compaction.addedDataFiles) {
      await reader.live({ file, sequenceNumber, deletes: { equality: [], position: [], dv: undefined } }, (k, pos) => {
        const at = index.get(k);
        if (!at || !removed.has(at.file.filePath)) consistent = false;
        moved.push([k, file, pos]);
      });
    }
  } catch (e) {
    // the index still matches the snapshot before the compaction: the next checkpoint rebuilds it
    return { why: `could not read the key columns of the files floe's compaction wrote (${errorMessage(e)})` };
  }
  if (!consistent) return { why: "the key index did not hold the rows floe's compaction moved as expected" };
  return { moved, removed };
}

/**
 * The keys of a compaction's new files, each at its place there (read before the compaction lands:
 * maintenance/rewrite-beside.ts prepares it beside the writer's commits).
 */
export async function readRewrittenKeys(table: CatalogTable, schema: Schema, files: readonly DataFile[], pause?: () => Promise<void>): Promise<[KeyId, DataFile, number][]> {
  const reader = keyReader(table, TableKey.identifier(schema), schema);
  const keys: [KeyId, DataFile, number][] = [];
  for (const file of files) {
    await pause?.();
    await reader.live({ file, sequenceNumber: 0n, deletes: { equality: [], position: [], dv: undefined } }, (k, pos) => void keys.push([k, file, pos]));
  }
  return keys;
}

/**
 * Which rows of a compaction prepared on an earlier snapshot are live on the snapshot `index` holds:
 * a row is, exactly when the index still places its key in one of the `removed` files — every row
 * of the new files was the live row of its key there, and a later commit that deleted or updated
 * the key took it out of them (a key never moves back into an older file). The others are `dead`
 * (positions by new file path), for the landing to delete by DV.
 */
export function splitRewrittenKeys(index: KeyIndex, keys: readonly (readonly [KeyId, DataFile, number])[], removed: ReadonlySet<string>): { moved: [KeyId, DataFile, number][]; dead: Map<string, PositionBitmap> } {
  const moved: [KeyId, DataFile, number][] = [];
  const dead = new Map<string, PositionBitmap>();
  for (const [k, file, pos] of keys) {
    const at = index.get(k);
    if (at && removed.has(at.file.filePath)) moved.push([k, file, pos]);
    else {
      let positions = dead.get(file.filePath);
      if (!positions) dead.set(file.filePath, (positions = new PositionBitmap()));
      positions.add(pos);
    }
  }
  return { moved, dead };
}
