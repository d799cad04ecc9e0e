/**
 * The life of one table's key index across checkpoints (docs/design.md §4a; docs/performance.md,
 * "The key index"): the index that lets deletion-vector upserts into a format-v3 keyed table find
 * the committed row a change replaces (key-index.ts), kept by the table's committer
 * (checkpoint/table-committer.ts) from one checkpoint to the next.
 *
 * - whether a writer gets one at all: only DV upserts (format v3, a key, not append mode, the
 *   table no larger than `keyIndexMaxRows` — beyond it equality deletes, with a warning);
 * - where it comes from: kept while the table's head is the snapshot it matches (floe's own last
 *   commit, or a manifest rewrite on top of it), else loaded (key-index-loading.ts: the persisted
 *   memory index, caught up from the lake if it is behind; the disk index; a build from the lake);
 * - when: a writer that can take its index later gets it later — the load runs in the background,
 *   the changes are applied meanwhile (their lookups of committed rows wait: keyed-change-writer.ts),
 *   and the checkpoint's commit waits for it;
 * - what a commit does to it: the commit that landed straight on top of the index's snapshot moves
 *   it to the new snapshot (failpoint `key-index-before-apply`), and a memory index persists the
 *   change (index-store.ts: one patch appended to its log, off the commit's path); anything else —
 *   another writer's commit in between, a skipped or unresolved commit — drops it, to be loaded again
 *   when next needed;
 * - floe's own maintenance between checkpoints: followed (`follow`), so that a compaction is not
 *   taken for another writer's (failpoint `key-index-before-follow-compaction`);
 * - memory: a memory index beyond `memoryMaxBytes` (or `memoryMaxRows`) moves to disk (SQLite).
 */
import { errorMessage } from '../../util/errors.js';
import { failpoint } from '../../util/failpoints.js';
import type { TableIdentifier } from '../metadata/catalog.js';
import { identifierToString } from '../metadata/catalog.js';
import type { DataFile } from '../spec/data-file.js';
import type { Schema } from '../spec/schema.js';
import { currentSnapshot } from '../spec/snapshot-ids.js';
import type { CatalogTable, CommitResult } from '../table/index.js';
import { indexStillMatches, NO_KEY_MOVES, type CompactionCommit, type KeyIndex, type KeyIndexDelta } from './key-index.js';
import { readCompactionMoves } from './compaction-moves.js';
import { fitsInMemory, imagePath, indexIdentity, loadKeyIndex, persist, sqlitePath, type LoadContext, type LoadedIndex } from './key-index-loading.js';
import type { KeyIndexLoads, KeyIndexOptions } from './key-index-options.js';
import { removeStoredIndex, type IndexStore } from './index-store.js';
import { MemoryKeyIndex } from './memory-key-index.js';
import { DiskKeyIndex } from './sqlite-key-index.js';
import { TableKey, type KeyId } from './table-key.js';

export type { KeyIndexLoads, KeyIndexOptions } from './key-index-options.js';

/** What a landed checkpoint commit changed, as its index follows it (the writer's prepared changes). */
export interface CommittedChanges {
  /** How the table's rows moved (undefined: none did, as for a writer without an index). */
  readonly indexDelta?: KeyIndexDelta;
  readonly dataFiles: readonly DataFile[];
  readonly deleteFiles: readonly DataFile[];
}

export class KeyIndexLifecycle {
  readonly loads: KeyIndexLoads = { built: 0, restored: 0, caughtUp: 0, builtOnDisk: 0, reused: 0, replayed: 0, spilled: 0, followed: 0 };
  private index: KeyIndex | undefined;
  /** Where a memory index persists (undefined: not persisted, or not yet: below `saveMinRows`). */
  private store: IndexStore | undefined;
  /** A load under way for a writer that takes its index later (`forWriter` with `later`). */
  private loading: { promise: Promise<LoadedIndex>; snapshotId: bigint | undefined; schemaId: number } | undefined;
  /** The end of what a dropped index left running (a load, its store's writes): the next load waits for it. */
  private abandoned: Promise<unknown> = Promise.resolve();
  /** The schema the index keys were encoded with (a schema change rebuilds it). */
  private schemaId: number | undefined;
  private tooLargeWarned = false;
  private readonly ctx: LoadContext;

  constructor(identifier: TableIdentifier, jobId: string, options: KeyIndexOptions) {
    this.ctx = { name: identifierToString(identifier), jobId, options, loads: this.loads };
  }

  private get options(): KeyIndexOptions {
    return this.ctx.options;
  }

  /** The index as it is now (undefined until needed, or after a doubt). */
  get current(): KeyIndex | undefined {
    return this.index;
  }

  /** The schema id the index was built with. */
  get indexSchemaId(): number | undefined {
    return this.schemaId;
  }

  /**
   * The key index for a writer of `table` (`keyless`: one of mode 'append', which writes by no
   * key), when its upserts use deletion vectors: kept across checkpoints while the table's head is
   * the snapshot it matches (floe's own last commit), loaded otherwise (first use, a restart, another
   * writer's commit). `later` (a writer that can take it later, `useKeyIndex`): an index to be
   * loaded is loaded in the background and `keyIndexLater` says so; the writer's commit then asks
   * again without `later`, and waits for it.
   */
  async forWriter(table: CatalogTable, keyless: boolean, options: { later?: boolean } = {}): Promise<{ keyIndex?: KeyIndex; keyIndexLater?: boolean }> {
    const m = table.metadata;
    const schema = m.schemas.find((x) => x.schemaId === m.currentSchemaId);
    if ((this.options.upsertDeletes ?? 'deletion-vectors') !== 'deletion-vectors' || m.formatVersion < 3 || keyless || !schema || schema.identifierFieldIds.length === 0) {
      this.drop();
      return {};
    }
    const head = currentSnapshot(m)?.snapshotId;
    const records = Number(currentSnapshot(m)?.summary['total-records'] ?? '0');
    const limit = this.maxRows();
    if (records > limit) {
      // Delivery note: correctness is the same; the table gets equality deletes (slower reads,
      // unreadable by PyIceberg) until the index can live on disk.
      if (!this.tooLargeWarned) this.options.warn?.(`${this.ctx.name} holds ${records} records, more than iceberg.keyIndexMaxRows (${limit}) for a key index: its upserts write equality deletes instead of deletion vectors`);
      this.tooLargeWarned = true;
      this.drop();
      return {};
    }
    const loading = this.loading;
    if (loading) {
      // a load under way of the head's index (or of a snapshot only manifest rewrites lead on from)
      // is the one wanted; of another snapshot, not any more
      if (loading.schemaId !== m.currentSchemaId || !indexStillMatches(m, loading.snapshotId, head)) this.drop();
      else if (options.later) return { keyIndexLater: true };
      else await this.settle();
    }
    // after a manifest rewrite (floe's maintenance) the index of the snapshot before it still holds
    // (an empty delta re-stamps it: persisted, or on disk, too)
    if (this.index && this.index.snapshotId !== head && indexStillMatches(m, this.index.snapshotId, head)) this.index.apply(NO_KEY_MOVES, head);
    if (!this.index || this.index.snapshotId !== head || this.schemaId !== m.currentSchemaId) {
      if (options.later) {
        this.loadInBackground(table, schema);
        return { keyIndexLater: true };
      }
      await this.load(table, schema);
    }
    return { keyIndex: this.index };
  }

  /** Starts `load` without waiting for it; `settle` (through `forWriter`) takes its index. */
  private loadInBackground(table: CatalogTable, schema: Schema): void {
    this.drop();
    const loading = { promise: this.abandoned.then(() => loadKeyIndex(table, schema, this.ctx)), snapshotId: currentSnapshot(table.metadata)?.snapshotId, schemaId: table.metadata.currentSchemaId };
    this.loading = loading;
    // an index no longer wanted (dropped meanwhile) is closed; a failure is `settle`'s to raise
    loading.promise.then(
      (loaded) => {
        if (this.loading !== loading) this.release(loaded);
      },
      () => {},
    );
  }

  /** The background load's index becomes the index (its failure is thrown here). */
  private async settle(): Promise<void> {
    const loading = this.loading!;
    try {
      const loaded = await loading.promise;
      if (this.loading !== loading) return; // dropped while it ran (then released)
      this.take(loaded, loading.schemaId);
    } finally {
      if (this.loading === loading) this.loading = undefined;
    }
  }

  /**
   * Whether a writer opened while a commit of `addedRows` rows is under way will get an index from
   * `forWriter` once that commit lands (so it may wait for it, keyed-change-writer.ts): there is an
   * index now, and the table stays within `keyIndexMaxRows` even with every added row.
   */
  indexSurvives(table: CatalogTable, addedRows: number): boolean {
    if (!this.index && !this.loading) return false;
    const records = Number(currentSnapshot(table.metadata)?.summary['total-records'] ?? '0');
    return records + addedRows <= this.maxRows();
  }

  /** The index of `table` as it is now (key-index-loading.ts). */
  async load(table: CatalogTable, schema: Schema): Promise<KeyIndex> {
    this.drop();
    await this.abandoned;
    this.take(await loadKeyIndex(table, schema, this.ctx), table.metadata.currentSchemaId);
    return this.index!;
  }

  private take(loaded: LoadedIndex, schemaId: number): void {
    this.index = loaded.index;
    this.store = loaded.store;
    this.schemaId = schemaId;
  }

  /** Forgets the index (a persisted or disk one stays, stamped with the snapshot it matches). */
  drop(): void {
    if (this.index) this.release({ index: this.index, store: this.store });
    this.index = undefined;
    this.store = undefined;
    if (this.loading) this.abandoned = Promise.all([this.abandoned, this.loading.promise.catch(() => {})]); // released when it ends (loadInBackground)
    this.loading = undefined;
  }

  /** Ends an index no longer wanted: its store finishes its queued writes first (the next load waits for them). */
  private release(loaded: LoadedIndex): void {
    if (loaded.index instanceof MemoryKeyIndex) loaded.index.onPatch = undefined;
    loaded.index.close();
    if (loaded.store) this.abandoned = Promise.all([this.abandoned, loaded.store.close()]);
  }

  /**
   * The index follows the commit that landed — when the commit went straight on top of the
   * snapshot the index matches. A commit retried on top of another writer's snapshot (one that
   * did not touch this checkpoint's targets, e.g. a rewrite of other files) leaves the index
   * behind that writer's changes, and a skipped one in doubt: dropped.
   * Manifest rewrites in between (floe's maintenance) move no row: the index still matches.
   */
  async afterCommit(result: CommitResult, prepared: CommittedChanges | undefined): Promise<void> {
    const index = this.index;
    if (!index) return;
    if (result.status === 'committed' && indexStillMatches(result.table.metadata, index.snapshotId, result.snapshot.parentSnapshotId)) {
      // a kill here leaves the persisted index stamped with the parent: the next start catches up
      await failpoint('key-index-before-apply');
      index.apply(prepared?.indexDelta ?? NO_KEY_MOVES, result.snapshot.snapshotId, prepared);
      await this.keepWithinMemory(result.table);
    } else this.drop();
  }

  /**
   * floe's own maintenance committed to the table between two checkpoints: `table` is the table as
   * that commit left it, `compaction` what a compaction moved (maintenance/rewrite-data-files.ts).
   * The index is brought to the new snapshot — for a compaction by reading the key columns of just
   * the new files (compaction-moves.ts), or by the `moved` keys a compaction landed beside the writer
   * found live (compaction-landing.ts) — so the next checkpoint writes its DVs against the new files
   * directly, instead of taking the compaction for another writer's (committed-dv-targets.ts) and
   * locating its deletes again. Only when the index matched the snapshot the commit went on top of
   * (nothing but manifest rewrites between): a commit of another writer in between is left to the
   * usual detection (the index is loaded again).
   */
  async follow(table: CatalogTable, compaction?: CompactionCommit, moved?: readonly (readonly [KeyId, DataFile, number])[]): Promise<'followed' | 'dropped' | 'none'> {
    const index = this.index;
    if (!index) return 'none';
    const m = table.metadata;
    const head = currentSnapshot(m)?.snapshotId;
    const schema = m.schemas.find((x) => x.schemaId === m.currentSchemaId);
    const base = compaction ? compaction.parentSnapshotId : head;
    if (!schema || this.schemaId !== m.currentSchemaId || !indexStillMatches(m, index.snapshotId, base)) {
      this.drop();
      return 'dropped';
    }
    if (!compaction) {
      if (index.snapshotId !== head) index.apply(NO_KEY_MOVES, head); // a manifest rewrite moves no row
      return 'followed';
    }
    // a compaction landed beside the writer (rewrite-beside.ts) brings the moves it found live
    const moves = moved ? { moved, removed: new Set(compaction.removedDataFiles.map((f) => f.filePath)) } : await readCompactionMoves(table, schema, index, compaction);
    if ('why' in moves) {
      this.options.warn?.(`${this.ctx.name}: ${moves.why}; rebuilding it from the lake`);
      this.drop();
      return 'dropped';
    }
    await failpoint('key-index-before-follow-compaction');
    index.rewrite(moves.moved, [...moves.removed], compaction.addedDataFiles, compaction.snapshotId);
    this.loads.followed++;
    await this.keepWithinMemory(table);
    return 'followed';
  }

  /**
   * At a clean stop, nothing buffered: a persisted memory index has its queued writes finished (and
   * a long log folded into a new image, for a quicker next load); one that reached `saveMinRows`
   * without being persisted yet is now. Whether the index is persisted.
   */
  async save(table: CatalogTable): Promise<boolean> {
    const index = this.index;
    const image = imagePath(this.ctx, table);
    if (!image || this.loading || !(index instanceof MemoryKeyIndex)) return false;
    const m = table.metadata;
    const schema = m.schemas.find((x) => x.schemaId === this.schemaId);
    if (!schema || this.schemaId !== m.currentSchemaId || !indexStillMatches(m, index.snapshotId, currentSnapshot(m)?.snapshotId)) return false;
    if (!this.store) this.store = persist(index, image, indexIdentity(m.tableUuid, TableKey.identifier(schema)), this.ctx);
    else if (this.store.logBytes > this.store.imageBytes / 4) this.store.writeImage(index.image());
    return this.store !== undefined && (await this.store.flush());
  }

  private maxRows(): number {
    return this.options.keyIndexMaxRows ?? (this.options.keyIndex?.stateDir ? 1_000_000_000 : 10_000_000);
  }

  /**
   * After a change: a memory index that reached `saveMinRows` starts being persisted, one whose log
   * outgrew its image gets a new image, and one beyond the memory bound moves to disk (stamped with
   * the snapshot it matches; its persisted files go).
   */
  private async keepWithinMemory(table: CatalogTable): Promise<void> {
    const mem = this.index;
    if (!(mem instanceof MemoryKeyIndex)) return;
    const m = table.metadata;
    const schema = m.schemas.find((x) => x.schemaId === this.schemaId);
    const image = imagePath(this.ctx, table);
    const sqlite = sqlitePath(this.ctx, table);
    if (!schema || !image || !sqlite) return;
    const key = TableKey.identifier(schema);
    if (fitsInMemory(this.options, mem.memoryBytes, mem.size)) {
      if (!this.store) this.store = persist(mem, image, indexIdentity(m.tableUuid, key), this.ctx);
      else if (this.store.wantsImage) this.store.writeImage(mem.image());
      return;
    }
    const identity = { ...indexIdentity(m.tableUuid, key), schemaId: schema.schemaId };
    this.index = await DiskKeyIndex.build(sqlite, identity, mem.snapshotId, async (set) => {
      for (const [k, file, pos] of mem.entries()) set(k, file, pos);
    });
    const store = this.store;
    this.release({ index: mem });
    this.store = undefined;
    // the persisted memory index would be behind the disk one: it goes, once its writes are done
    const removed = (async () => {
      await store?.close();
      await removeStoredIndex(image);
    })().catch((e: unknown) => this.options.warn?.(`${this.ctx.name}: removing the persisted memory key index ${image}: ${errorMessage(e)}`));
    this.abandoned = Promise.all([this.abandoned, removed]);
    this.loads.spilled++;
    this.options.info?.(`${this.ctx.name}: key index of ${mem.size} rows moved to disk (${sqlite}): it outgrew iceberg.keyIndex.memoryMaxBytes`);
  }
}
