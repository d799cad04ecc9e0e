/**
 * Bringing a memory key index of an older snapshot to the table's head from the lake, reading only
 * what was committed since — the data files added, the deletes added — instead of every data file's
 * key column (key-index-build.ts). What a restart after a crash needs: the persisted index
 * (index-store.ts) is the table as of the last patch it wrote, and the commits after it (the one
 * that landed as floe was killed, a compaction it did not follow) are replayed here.
 *
 * Each snapshot since the index's, oldest first, by what it changed (table/manifest-reads.ts):
 * - a manifest rewrite changes nothing;
 * - data files added: their rows, read with the head's deletes applied, are set at their places (a
 *   file a later snapshot removed again is not read: its rows are in what replaced it);
 * - data files removed by floe's own compaction (`floe.maintenance: rewrite-data-files`): their
 *   slots are dropped — every live row of them is in a file the same commit added;
 * - deletion vectors and position deletes added: the positions they remove, as the head has them,
 *   go dead — where a moved or deleted key was.
 * Anything else — data files another writer removed, equality deletes (they remove rows by value,
 * not by place) — cannot be followed by place: the answer is why, and the index is built again.
 */
import { mapConcurrently } from '../../util/concurrent.js';
import { planScan } from '../scan/scan-plan.js';
import { sortedDeletedPositions } from '../scan/task-reader.js';
import type { DataFile } from '../spec/data-file.js';
import type { Schema } from '../spec/schema.js';
import type { Snapshot } from '../spec/table-metadata.js';
import { isDeletionVector } from '../table/snapshot-summary.js';
import { ManifestReads } from '../table/manifest-reads.js';
import { keyReader, type BuildTable } from './key-index-build.js';
import { isManifestRewrite } from './key-index.js';
import type { MemoryKeyIndex } from './memory-key-index.js';
import type { TableKey } from './table-key.js';

/** Data files (key columns, deletes) read at once. */
const FILES_AT_ONCE = 8;
/** The summary mark of floe's compaction (maintenance/rewrite-data-files.ts). */
const FLOE_COMPACTION = 'rewrite-data-files';

/** Catches `index` up with the table's head; the data files read, or why it cannot. */
export async function catchUpFromLake(index: MemoryKeyIndex, table: BuildTable, key: TableKey, schema: Schema): Promise<{ filesRead: number } | { why: string }> {
  const m = table.metadata;
  const reads = new ManifestReads(table.io);
  const since = reads.snapshotsSince(m, index.snapshotId);
  if (!since.reached) return { why: `snapshot ${String(index.snapshotId)} it holds is not in the table's history any more (expired, or another branch)` };
  const snapshots: Snapshot[] = since.snapshots.reverse();
  const head = snapshots.at(-1)?.snapshotId ?? index.snapshotId;
  const added = new Set<string>();
  const removed = new Set<string>();
  const deletesChanged = new Set<string>();
  for (const s of snapshots) {
    if (isManifestRewrite(s)) continue;
    const changes = await reads.changesOf(s);
    if (changes.removedDataFiles.length > 0 && s.summary['floe.maintenance'] !== FLOE_COMPACTION) {
      return { why: `snapshot ${s.snapshotId} (${s.summary.operation ?? 'unknown operation'}) removed data files, and not as floe's compaction` };
    }
    for (const f of changes.removedDataFiles) {
      if (!added.delete(f.filePath)) removed.add(f.filePath);
    }
    for (const f of changes.addedDataFiles) added.add(f.filePath);
    for (const d of changes.addedDeleteFiles) {
      if (d.content === 'equality-deletes') return { why: `snapshot ${s.snapshotId} added equality deletes, which remove rows by value` };
      if (isDeletionVector(d) || d.referencedDataFile !== undefined) deletesChanged.add(d.referencedDataFile!);
      else return { why: `snapshot ${s.snapshotId} added a position-delete file for several data files` };
    }
  }
  const plan = await planScan(table.io, m);
  const reader = keyReader(table, key, schema);
  // where keys moved from or were deleted: the positions the head's deletes remove in the files whose deletes changed
  const dead: [string, Float64Array][] = [];
  const files: { file: DataFile; numbers: Float64Array; strings: [string, number][] }[] = [];
  // the files are read side by side: a restart catches up beside the stream, where each read waits
  // its turn on the busy thread, and one after another those waits add up before the first commit
  const read = await mapConcurrently(plan.tasks, FILES_AT_ONCE, async (task) => {
    const path = task.file.filePath;
    if (added.has(path)) {
      const numbers = new Float64Array(Number(task.file.recordCount)).fill(Number.NaN);
      const strings: [string, number][] = [];
      await reader.live(task, (k, pos) => {
        if (typeof k === 'number') numbers[pos] = k;
        else strings.push([k, pos]);
      });
      return { added: { file: task.file, numbers, strings } };
    }
    if (deletesChanged.has(path)) {
      const positions = await sortedDeletedPositions(task, reader.loader);
      if (positions) return { dead: [path, positions] as [string, Float64Array] };
    }
    return {};
  });
  for (const r of read) {
    if (r.added) files.push(r.added);
    if (r.dead) dead.push(r.dead);
  }
  // the live keys as the head's summary counts them (floe's tables: no equality delete to subtract)
  const summary = snapshots.at(-1)?.summary;
  const records = Number(summary?.['total-records'] ?? Number.NaN);
  const deleted = Number(summary?.['total-position-deletes'] ?? 0);
  const count = Number.isFinite(records) ? records - deleted : index.size;
  // one patch: persisted as one record, so a kill part-way never leaves a log that claims the head
  index.catchUp({ dropped: [...removed], dead, files, to: head, count });
  for (const task of plan.tasks) index.useFile(task.file);
  return { filesRead: files.length };
}
