/**
 * The life of a table's value indexes across checkpoints (value-index.ts), kept by the table's
 * committer (checkpoint/value-indexes.ts) beside the key index (key-index-lifecycle.ts): one
 * lifecycle holds a keyless table's row index, another a cascade child's FK indexes.
 *
 * - where they come from: kept while the table's head is the snapshot they match (floe's own last
 *   commit, or a manifest rewrite on top of it) and its schema the one they were read with, else
 *   built from the lake (value-index-build.ts: the live rows, deletes applied). They are not
 *   persisted: a restart, clean or after a crash, builds them again from the lake, the truth they cache;
 * - what a commit does to them: the commit that landed straight on top of their snapshot moves them
 *   (the rows it wrote with their values, the positions its deletion vectors removed — whatever
 *   change wrote them); anything else — another writer's commit, a skipped commit, a commit that
 *   wrote equality deletes (they remove rows by value, which no index can follow by position), a
 *   commit of rows an index recorded no value of — drops them, to be built again when next needed;
 * - floe's own maintenance between checkpoints: a manifest rewrite is followed; a compaction drops
 *   them (the next checkpoint builds them from the compacted files);
 * - in memory up to `keyIndex.memoryMaxBytes` (all of a table's indexes together), on local disk
 *   beyond it (sqlite-value-index.ts, under the state directory: `diskPath`), also while one is
 *   built; they stay on disk until dropped. Without a state directory they live in memory only, and
 *   beyond the bound they are dropped for good (until a restart) with a warning: the table's deletes
 *   then fall back to equality deletes (see the caller's message).
 */
import type { Schema } from '../spec/schema.js';
import { currentSnapshot } from '../spec/snapshot-ids.js';
import type { CatalogTable, CommitResult } from '../table/index.js';
import { indexStillMatches, type CompactionCommit } from './key-index.js';
import { DEFAULT_MEMORY_MAX_BYTES, type KeyIndexOptions } from './key-index-options.js';
import { MemoryValueIndex } from './memory-value-index.js';
import { DiskValueIndex } from './sqlite-value-index.js';
import type { ValueIndexSpill } from './value-index-build.js';
import { NO_VALUE_MOVES, type KeptValueIndex, type ValueIndex, type ValueIndexDelta } from './value-index.js';

/** What a landed commit changed, as the indexes follow it. */
export interface ValueIndexCommit {
  /** Per index name, the rows the commit wrote and the committed rows its deletion vectors removed. */
  readonly deltas: ReadonlyMap<string, ValueIndexDelta>;
  /** Whether the commit wrote equality deletes (or rows no index recorded): the indexes are dropped. */
  readonly doubt: boolean;
}

/** The indexes a caller wants: their names, and how to build them all from the lake. */
export interface ValueIndexWant {
  readonly names: readonly string[];
  build(schema: Schema, spill: ValueIndexSpill, snapshotId: bigint | undefined): Promise<Map<string, KeptValueIndex>>;
}

export class ValueIndexLifecycle {
  private indexes: Map<string, KeptValueIndex> | undefined;
  /** The table the indexes are of (where a disk index goes). */
  private tableUuid = '';
  private snapshotId: bigint | undefined;
  private schemaId: number | undefined;
  /** Whether the indexes outgrew the memory bound: none is built again until a restart. */
  private outgrown = false;
  private warned = false;
  /** Times the indexes were built from the lake (tests: kept indexes are not rebuilt). */
  built = 0;

  constructor(
    /** The table's name, for messages. */
    private readonly table: string,
    private readonly options: KeyIndexOptions,
    /** The warning when the indexes take `bytes`, beyond `max` (names the table and the fallback). */
    private readonly tooLarge: (bytes: number, max: number, entries: number) => string,
    /** Where an index of the table goes on disk (undefined: no state directory, memory only). */
    private readonly diskPath: (tableUuid: string, name: string) => string | undefined,
  ) {}

  /** The indexes as they are now (undefined until needed, or after a doubt). */
  get current(): ReadonlyMap<string, ValueIndex> | undefined {
    return this.indexes;
  }

  /** The snapshot the indexes hold the live rows of, and the schema their values were encoded with. */
  get at(): { snapshotId: bigint | undefined; schemaId: number | undefined } {
    return { snapshotId: this.snapshotId, schemaId: this.schemaId };
  }

  /**
   * The indexes `want` for the snapshot `snapshotId` — the one the checkpoint's other deletes were
   * located in: the table's head, one only manifest rewrites lead on from (the indexes are then of
   * the head), or an older one when another writer committed since (a compaction beside floe: the
   * indexes are then of that snapshot, and the commit locates the rows again, dv-replan.ts).
   * Undefined when there can be none (the caller then writes equality deletes).
   */
  async forSnapshot(table: CatalogTable, snapshotId: bigint | undefined, want: ValueIndexWant): Promise<ReadonlyMap<string, ValueIndex> | undefined> {
    const m = table.metadata;
    const schema = m.schemas.find((x) => x.schemaId === m.currentSchemaId);
    const head = currentSnapshot(m)?.snapshotId;
    const at = indexStillMatches(m, snapshotId, head) ? head : snapshotId;
    // an older snapshot must still be in the table (not expired), with the schema of the head
    const readable = at === head || (at !== undefined && m.snapshots.some((s) => s.snapshotId === at && (s.schemaId ?? m.currentSchemaId) === m.currentSchemaId));
    if (this.outgrown || !schema || !readable) return undefined;
    const kept = this.indexes;
    if (kept && this.schemaId === m.currentSchemaId && indexStillMatches(m, this.snapshotId, at) && want.names.every((k) => kept.has(k))) {
      // after a manifest rewrite (floe's maintenance) the indexes of the snapshot before it still hold
      if (this.snapshotId !== at) this.moveTo(NO_VALUE_MOVES, at);
      return kept;
    }
    this.drop();
    this.tableUuid = m.tableUuid;
    this.indexes = await want.build(schema, (indexes) => this.spill(indexes), at);
    this.snapshotId = at;
    this.schemaId = m.currentSchemaId;
    this.built++;
    return this.keepWithinMemory() ? this.indexes : undefined;
  }

  /** No index for now (the table beyond a caller's bound): they are dropped and `message` warned, once. */
  refuse(message: string): undefined {
    if (!this.warned) this.options.warn?.(message);
    this.warned = true;
    this.drop();
    return undefined;
  }

  /** The indexes follow the commit that landed straight on top of their snapshot; otherwise they are dropped. */
  afterCommit(result: CommitResult, committed: ValueIndexCommit | undefined): void {
    const indexes = this.indexes;
    if (!indexes) return;
    // an index the commit recorded no rows for (a foreign key added meanwhile) would miss its rows
    const unrecorded = committed !== undefined && [...indexes.keys()].some((k) => !committed.deltas.has(k));
    if (result.status !== 'committed' || committed?.doubt || unrecorded || !indexStillMatches(result.table.metadata, this.snapshotId, result.snapshot.parentSnapshotId)) {
      this.drop();
      return;
    }
    for (const [k, index] of indexes) index.apply(committed?.deltas.get(k) ?? NO_VALUE_MOVES, result.snapshot.snapshotId);
    this.snapshotId = result.snapshot.snapshotId;
    this.keepWithinMemory();
  }

  /** floe's own maintenance committed between two checkpoints: a manifest rewrite is followed, anything else drops the indexes. */
  follow(table: CatalogTable, compaction: CompactionCommit | undefined): 'followed' | 'dropped' | 'none' {
    if (!this.indexes) return 'none';
    const m = table.metadata;
    const head = currentSnapshot(m)?.snapshotId;
    if (compaction || this.schemaId !== m.currentSchemaId || !indexStillMatches(m, this.snapshotId, head)) {
      this.drop();
      return 'dropped';
    }
    if (this.snapshotId !== head) this.moveTo(NO_VALUE_MOVES, head);
    return 'followed';
  }

  drop(): void {
    for (const index of this.indexes?.values() ?? []) index.close();
    this.indexes = undefined;
    this.snapshotId = undefined;
    this.schemaId = undefined;
  }

  private moveTo(delta: ValueIndexDelta, snapshotId: bigint | undefined): void {
    for (const index of this.indexes?.values() ?? []) index.apply(delta, snapshotId);
    this.snapshotId = snapshotId;
  }

  /** Whether the indexes are kept: within the memory bound, or moved to disk beyond it; else they are dropped for good. */
  private keepWithinMemory(): boolean {
    if (!this.indexes) return false;
    this.spill(this.indexes);
    const indexes = [...this.indexes.values()];
    const bytes = indexes.reduce((n, x) => n + x.memoryBytes, 0);
    const max = this.maxBytes;
    if (bytes <= max) return true;
    // Delivery note: the table's deletes then write equality deletes (unreadable by PyIceberg; for a
    // keyless table they remove every identical copy): the caller's message says which.
    this.outgrown = true;
    this.warned = false;
    this.refuse(this.tooLarge(bytes, max, indexes.reduce((n, x) => n + x.size, 0)));
    return false;
  }

  private get maxBytes(): number {
    return this.options.keyIndex?.memoryMaxBytes ?? DEFAULT_MEMORY_MAX_BYTES;
  }

  /** Beyond the memory bound, every memory index of `indexes` moves to disk, in place (when there is a state directory). */
  private spill(indexes: Map<string, KeptValueIndex>): void {
    const memory = [...indexes].filter((e): e is [string, MemoryValueIndex] => e[1] instanceof MemoryValueIndex);
    const bytes = memory.reduce((n, [, x]) => n + x.memoryBytes, 0);
    if (bytes <= this.maxBytes || memory.some(([name]) => this.diskPath(this.tableUuid, name) === undefined)) return;
    for (const [name, index] of memory) {
      const path = this.diskPath(this.tableUuid, name)!;
      indexes.set(name, DiskValueIndex.fromMemory(path, index));
      index.close();
      this.options.info?.(`${this.table}: value index ${name} of ${index.size} rows moved to disk (${path}): it outgrew iceberg.keyIndex.memoryMaxBytes`);
    }
  }
}
