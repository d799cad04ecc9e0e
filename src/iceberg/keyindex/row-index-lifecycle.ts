/**
 * The life of one keyless table's row index across checkpoints (value-index.ts: the whole row → the
 * places of its copies), kept by the table's committer (checkpoint/table-committer.ts) beside the
 * key index (key-index-lifecycle.ts), which a keyless table has none of.
 *
 * - whether a writer gets one: format v3, `upsertDeletes` 'deletion-vectors' (the default), and the
 *   table within `keyIndexMaxRows` and the index within `keyIndex.memoryMaxBytes` — beyond either,
 *   the writer falls back to whole-row equality deletes, with a warning (keyless-change-writer.ts);
 * - where it comes from: kept while the table's head is the snapshot it matches (floe's own last
 *   commit, or a manifest rewrite on top of it), else built from the lake — every column of the
 *   live rows, deletes applied, each row at its position. It lives in memory only: a restart, clean
 *   or after a crash, builds it again from the lake, which is the truth it caches;
 * - what a commit does to it: the commit that landed straight on top of its snapshot moves it (the
 *   rows written, the positions the commit's deletion vectors removed); anything else — another
 *   writer's commit, a skipped commit, a commit that wrote equality deletes (they remove rows by
 *   value, and a cascade's may remove copies the index would still offer) — drops it, to be built
 *   again when next needed;
 * - floe's own maintenance between checkpoints: a manifest rewrite is followed; a compaction drops it
 *   (the next checkpoint builds it from the compacted files).
 */
import type { TableIdentifier } from '../metadata/catalog.js';
import { identifierToString } from '../metadata/catalog.js';
import type { DataFile } from '../spec/data-file.js';
import { planScan } from '../scan/scan-plan.js';
import type { Schema } from '../spec/schema.js';
import { currentSnapshot } from '../spec/snapshot-ids.js';
import type { CatalogTable, CommitResult } from '../table/index.js';
import { indexStillMatches, type CompactionCommit } from './key-index.js';
import { keyReader, type BuildTable } from './key-index-build.js';
import { DEFAULT_MEMORY_MAX_BYTES, type KeyIndexOptions } from './key-index-options.js';
import { MemoryValueIndex } from './memory-value-index.js';
import { TableKey } from './table-key.js';
import { NO_VALUE_MOVES, type ValueEntry, type ValueIndex, type ValueIndexDelta } from './value-index.js';

/** What a landed checkpoint commit changed, as the row index follows it. */
export interface RowIndexCommit {
  /** How the table's rows moved (undefined: the writer had no row index). */
  readonly rowIndexDelta?: ValueIndexDelta;
  /** Whether the commit wrote equality deletes (a cascade's, or the fallback's). */
  readonly equalityDeletes: boolean;
}

/** Builds the row index of the table's current snapshot from the lake (every column of the live rows). */
export async function buildRowIndex(table: BuildTable, schema: Schema): Promise<MemoryValueIndex> {
  const m = table.metadata;
  const index = new MemoryValueIndex(currentSnapshot(m)?.snapshotId);
  const plan = await planScan(table.io, m);
  const reader = keyReader(table, TableKey.allColumns(schema), schema);
  for (const task of plan.tasks) {
    const entries: ValueEntry[] = [];
    const file: DataFile = task.file;
    await reader.live(task, (value, pos) => entries.push({ value, file, pos, owner: undefined }));
    index.addRows(entries);
  }
  return index;
}

export class RowIndexLifecycle {
  private index: MemoryValueIndex | undefined;
  private schemaId: number | undefined;
  /** Whether the index outgrew the memory bound: none is built again until a restart. */
  private outgrown = false;
  private tooLargeWarned = false;
  private readonly name: string;
  /** Times the index was built from the lake (tests: a kept index is not rebuilt). */
  built = 0;

  constructor(
    identifier: TableIdentifier,
    private readonly options: KeyIndexOptions,
  ) {
    this.name = identifierToString(identifier);
  }

  /** The index as it is now (undefined until needed, or after a doubt). */
  get current(): ValueIndex | undefined {
    return this.index;
  }

  /** The schema the index's rows were encoded with. */
  get indexSchemaId(): number | undefined {
    return this.schemaId;
  }

  /** The row index for a writer of keyless `table`, when its deletes use deletion vectors (see the header). */
  async forWriter(table: CatalogTable): Promise<ValueIndex | undefined> {
    const m = table.metadata;
    const schema = m.schemas.find((x) => x.schemaId === m.currentSchemaId);
    if ((this.options.upsertDeletes ?? 'deletion-vectors') !== 'deletion-vectors' || m.formatVersion < 3 || !schema || schema.identifierFieldIds.length > 0) {
      this.drop();
      return undefined;
    }
    const head = currentSnapshot(m)?.snapshotId;
    const records = Number(currentSnapshot(m)?.summary['total-records'] ?? '0');
    const limit = this.options.keyIndexMaxRows ?? (this.options.keyIndex?.stateDir ? 1_000_000_000 : 10_000_000);
    if (this.outgrown || records > limit) {
      // Delivery note: a binlog DELETE then writes a whole-row equality delete, which removes every
      // identical copy (and is unreadable by PyIceberg): the lake may hold fewer copies than MySQL.
      if (!this.tooLargeWarned) this.options.warn?.(`${this.name} holds ${records} rows, more than a row index may (iceberg.keyIndexMaxRows ${limit}, iceberg.keyIndex.memoryMaxBytes): its deletes write whole-row equality deletes, which remove every identical copy`);
      this.tooLargeWarned = true;
      this.drop();
      return undefined;
    }
    if (this.index && this.schemaId === m.currentSchemaId && indexStillMatches(m, this.index.snapshotId, head)) {
      // after a manifest rewrite (floe's maintenance) the index of the snapshot before it still holds
      if (this.index.snapshotId !== head) this.index.apply(NO_VALUE_MOVES, head);
      return this.index;
    }
    this.drop();
    const index = await buildRowIndex(table, schema);
    this.built++;
    this.index = index;
    this.schemaId = m.currentSchemaId;
    return this.keepWithinMemory(records) ? index : undefined;
  }

  /** The index follows the commit that landed straight on top of its snapshot; otherwise it is dropped. */
  afterCommit(result: CommitResult, committed: RowIndexCommit | undefined): void {
    const index = this.index;
    if (!index) return;
    if (result.status === 'committed' && !committed?.equalityDeletes && indexStillMatches(result.table.metadata, index.snapshotId, result.snapshot.parentSnapshotId)) {
      index.apply(committed?.rowIndexDelta ?? NO_VALUE_MOVES, result.snapshot.snapshotId);
      this.keepWithinMemory(index.size);
    } else this.drop();
  }

  /** floe's own maintenance committed between two checkpoints: a manifest rewrite is followed, anything else drops the index. */
  follow(table: CatalogTable, compaction?: CompactionCommit): 'followed' | 'dropped' | 'none' {
    const index = this.index;
    if (!index) return 'none';
    const m = table.metadata;
    const head = currentSnapshot(m)?.snapshotId;
    if (compaction || this.schemaId !== m.currentSchemaId || !indexStillMatches(m, index.snapshotId, head)) {
      this.drop();
      return 'dropped';
    }
    if (index.snapshotId !== head) index.apply(NO_VALUE_MOVES, head);
    return 'followed';
  }

  drop(): void {
    this.index?.close();
    this.index = undefined;
    this.schemaId = undefined;
  }

  /** Whether the index stays within the memory bound; one beyond it is dropped for good (see `forWriter`). */
  private keepWithinMemory(rows: number): boolean {
    const index = this.index;
    if (!index) return false;
    const max = this.options.keyIndex?.memoryMaxBytes ?? DEFAULT_MEMORY_MAX_BYTES;
    if (index.memoryBytes <= max) return true;
    this.options.warn?.(`${this.name}: its row index of ${rows} rows takes ${index.memoryBytes} bytes, more than iceberg.keyIndex.memoryMaxBytes (${max}); from now on its deletes write whole-row equality deletes, which remove every identical copy`);
    this.tooLargeWarned = true;
    this.outgrown = true;
    this.drop();
    return false;
  }
}
