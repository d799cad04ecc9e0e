/**
 * The life of one table's key index across checkpoints (docs/design.md §4a; docs/key-index-store.md):
 * the index that lets deletion-vector upserts into a format-v3 keyed table find the committed row a
 * change replaces (key-index.ts, in memory; sqlite-key-index.ts, on disk), kept by the table's
 * committer (table-committer.ts) from one checkpoint to the next.
 *
 * - whether a writer gets one at all: only DV upserts (format v3, a key, not append mode, the
 *   table no larger than `keyIndexMaxRows` — beyond it equality deletes, with a warning);
 * - where it comes from: kept while the table's head is the snapshot it matches (floe's own last
 *   commit, or a manifest rewrite on top of it), else the memory index saved at the last clean stop
 *   when it holds the head (saved-index-file.ts), else the persisted disk index caught up with the
 *   commits since its stamp, else built from the lake (on disk past `memoryMaxRows`);
 * - at a clean stop (`save`), a memory index of at least `saveMinRows` rows is saved to the state
 *   directory for the next start;
 * - when: with an off-thread builder (`keyTableBuilder`, the CLI's), a writer that needs a load gets
 *   its index later — the load runs in the background (a single integer key's table is built in a
 *   worker thread), the changes are applied meanwhile, and the checkpoint's commit waits for it;
 * - what a commit does to it: the commit that landed straight on top of the index's snapshot moves
 *   it to the new snapshot (failpoint `key-index-before-apply`); anything else — another writer's
 *   commit in between, a skipped or unresolved commit — drops it, to be rebuilt when next needed;
 * - floe's own maintenance between checkpoints: followed (`follow`), so that a compaction is not
 *   taken for another writer's (failpoint `key-index-before-follow-compaction`).
 */
import { join } from 'node:path';
import { failpoint } from '../../util/failpoints.js';
import type { TableIdentifier } from '../metadata/catalog.js';
import { identifierToString } from '../metadata/catalog.js';
import type { DataFile } from '../spec/data-file.js';
import type { Schema } from '../spec/schema.js';
import { currentSnapshot } from '../spec/snapshot-ids.js';
import type { CatalogTable, CommitResult } from '../table/index.js';
import { buildKeyIndex, indexStillMatches, MemoryKeyIndex, NO_KEY_MOVES, type CompactionCommit, type KeyIndex, type KeyIndexDelta } from './key-index.js';
import { DiskKeyIndex, type DiskIndexIdentity } from './sqlite-key-index.js';
import { openDiskKeyIndex } from './sqlite-index-open.js';
import { saveMemoryIndex, takeMemoryIndex } from './saved-index-file.js';
import { readCompactionMoves } from './compaction-moves.js';
import { TableKey } from './table-key.js';
import type { KeyTableBuilder } from './key-table-builder.js';

export interface KeyIndexOptions {
  /**
   * How upserts into format-v3 keyed tables delete the rows they replace: 'deletion-vectors'
   * (default) keeps a key index per table (key-index.ts) and writes DVs only, never an equality
   * delete; 'equality' writes equality deletes as format v2 must.
   */
  upsertDeletes?: 'deletion-vectors' | 'equality';
  /**
   * The ceiling of the key index: a table with more rows than this (the current snapshot's
   * `total-records`) uses equality deletes instead, with a warning. Default 10 million without a
   * `keyIndex.stateDir` (the index then lives in memory only, about 100 bytes per live row), 1
   * billion with one (beyond `memoryMaxRows` it lives on disk).
   */
  keyIndexMaxRows?: number;
  keyIndex?: {
    /**
     * Where disk-backed indexes persist: `<stateDir>/<job id>/<table uuid>.keyindex.sqlite`.
     * Without it every index lives in memory and is rebuilt from the lake at each start.
     */
    stateDir?: string;
    /** With a state dir: a table's index stays in memory up to this many rows, on disk beyond (default 2 million). */
    memoryMaxRows?: number;
    /**
     * With a state dir: a memory index of at least this many rows is saved there at a clean stop
     * (`save`) and taken back at the next start instead of being built from the lake (default
     * 100,000: a smaller one is built in well under a second, and is not worth a file).
     */
    saveMinRows?: number;
  };
  /**
   * Builds a memory index of a single integer key column in another thread (key-table-builder.ts;
   * the CLI passes the worker-thread one). With it a writer that needs an index built from the lake
   * gets it later (`forWriter` with `later`): the changes flow meanwhile, their lookups of committed
   * rows waiting for the index (keyed-change-writer.ts).
   */
  keyTableBuilder?: KeyTableBuilder;
  warn?: (message: string) => void;
  /** Progress of index builds and replays. */
  info?: (message: string) => void;
}

/** What a landed checkpoint commit changed, as its index follows it (the writer's prepared changes). */
export interface CommittedChanges {
  /** How the table's rows moved (undefined: none did, as for a writer without an index). */
  readonly indexDelta?: KeyIndexDelta;
  readonly dataFiles: readonly DataFile[];
  readonly deleteFiles: readonly DataFile[];
}

/** How each key index was obtained (tests and logs: a kept index must not be rebuilt). */
export interface KeyIndexLoads {
  built: number;
  /** Taken from the file a clean stop saved (saved-index-file.ts). */
  restored: number;
  builtOnDisk: number;
  reused: number;
  replayed: number;
  spilled: number;
  followed: number;
}

export class KeyIndexLifecycle {
  readonly loads: KeyIndexLoads = { built: 0, restored: 0, builtOnDisk: 0, reused: 0, replayed: 0, spilled: 0, followed: 0 };
  private index: KeyIndex | undefined;
  /** A load under way for a writer that takes its index later (`forWriter` with `later`). */
  private loading: { promise: Promise<KeyIndex>; snapshotId: bigint | undefined; schemaId: number } | undefined;
  /** The end of a background load dropped while it ran: the next load waits for it (both may use the disk index's file). */
  private abandoned: Promise<unknown> = Promise.resolve();
  /** The schema the index keys were encoded with (a schema change rebuilds it). */
  private schemaId: number | undefined;
  private tooLargeWarned = false;
  private readonly name: string;

  constructor(
    identifier: TableIdentifier,
    private readonly jobId: string,
    private readonly options: KeyIndexOptions,
  ) {
    this.name = identifierToString(identifier);
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
   * key), when its upserts use deletion vectors: kept
   * across checkpoints while the table's head is the snapshot it matches (floe's own last commit),
   * rebuilt from the table otherwise (first use, a restart, another writer's commit).
   * `later` (a writer that can take it later, `useKeyIndex`): with an off-thread builder, an index
   * to be loaded is loaded in the background and `keyIndexLater` says so; the writer's commit then
   * asks again without `later`, and waits for it.
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
      if (!this.tooLargeWarned) this.options.warn?.(`${this.name} holds ${records} records, more than iceberg.keyIndexMaxRows (${limit}) for a key index: its upserts write equality deletes instead of deletion vectors`);
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
    // (an empty delta re-stamps it: on disk, too)
    if (this.index && this.index.snapshotId !== head && indexStillMatches(m, this.index.snapshotId, head)) this.index.apply(NO_KEY_MOVES, head);
    if (!this.index || this.index.snapshotId !== head || this.schemaId !== m.currentSchemaId) {
      if (options.later && this.options.keyTableBuilder) {
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
    const loading = { promise: this.abandoned.then(() => this.loadIndex(table, schema)), snapshotId: currentSnapshot(table.metadata)?.snapshotId, schemaId: table.metadata.currentSchemaId };
    this.loading = loading;
    // an index no longer wanted (dropped meanwhile) is closed; a failure is `settle`'s to raise
    loading.promise.then(
      (index) => {
        if (this.loading !== loading) index.close();
      },
      () => {},
    );
  }

  /** The background load's index becomes the index (its failure is thrown here). */
  private async settle(): Promise<void> {
    const loading = this.loading!;
    try {
      const index = await loading.promise;
      if (this.loading !== loading) return; // dropped while it ran (then closed)
      this.index = index;
      this.schemaId = loading.schemaId;
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

  /**
   * The index of `table` as it is now: the persisted one when it still matches (replaying what was
   * committed since its stamp), else built from the lake — on disk when the table has more rows than
   * the memory budget.
   */
  async load(table: CatalogTable, schema: Schema): Promise<KeyIndex> {
    this.drop();
    await this.abandoned;
    const index = await this.loadIndex(table, schema);
    this.index = index;
    this.schemaId = table.metadata.currentSchemaId;
    return index;
  }

  /** `load` without touching the current index: the index it loads. */
  private async loadIndex(table: CatalogTable, schema: Schema): Promise<KeyIndex> {
    const m = table.metadata;
    const name = this.name;
    const key = TableKey.identifier(schema);
    const identity = diskIdentity(m.tableUuid, key, schema);
    const path = this.diskPath(table);
    const saved = this.savedPath(table);
    if (saved) {
      const taken = await takeMemoryIndex(saved, table, identity);
      if (taken.index) {
        this.loads.restored++;
        this.options.info?.(`${name}: key index of ${taken.index.size} rows taken from ${saved} (saved at the last clean stop)`);
        return taken.index;
      }
      if (!taken.missing) this.options.info?.(`${name}: the key index saved at ${saved} does not hold the table as it is now (${taken.why}); building it from the lake`);
    }
    let index: KeyIndex | undefined;
    if (path) {
      const opened = await openDiskKeyIndex(path, table, key, identity);
      if (opened.index) {
        index = opened.index;
        this.loads[opened.how]++;
        if (opened.how === 'replayed') this.options.info?.(`${name}: key index ${path} caught up with snapshot ${String(index.snapshotId)} (${opened.replayedFiles} data file(s) read)`);
      } else if (!opened.missing) this.options.warn?.(`${name}: key index ${path} cannot be used: ${opened.why}; rebuilding it from the lake`);
    }
    if (!index) {
      const records = Number(currentSnapshot(m)?.summary['total-records'] ?? '0');
      const started = Date.now();
      let lastReport = started;
      const progress = (done: number, total: number, rows: number): void => {
        const now = Date.now();
        if (done === total || now - lastReport >= 10_000) {
          lastReport = now;
          this.options.info?.(`${name}: building the key index from the lake: ${done}/${total} data files, ${rows} rows, ${((now - started) / 1000).toFixed(1)} s`);
        }
      };
      if (path && records > this.memoryMaxRows()) {
        index = await DiskKeyIndex.build(path, identity, currentSnapshot(m)?.snapshotId, async (set, fileRead) => {
          await buildKeyIndex(table, key, { into: { set, fileRead }, progress });
        });
        this.loads.builtOnDisk++;
      } else {
        index = await buildKeyIndex(table, key, { progress, offThread: this.options.keyTableBuilder });
        this.loads.built++;
      }
    }
    return index;
  }

  /** Forgets the index (a disk one stays on disk, stamped with the snapshot it matches). */
  drop(): void {
    this.index?.close();
    this.index = undefined;
    if (this.loading) this.abandoned = this.loading.promise.catch(() => {}); // closed when it ends (loadInBackground)
    this.loading = undefined;
  }

  /**
   * The index follows the commit that landed — when the commit went straight on top of the
   * snapshot the index matches. A commit retried on top of another writer's snapshot (one that
   * did not touch this checkpoint's targets, e.g. a rewrite of other files) leaves the index
   * behind that writer's changes, and a skipped one in doubt: rebuilt.
   * Manifest rewrites in between (floe's maintenance) move no row: the index still matches.
   */
  async afterCommit(result: CommitResult, prepared: CommittedChanges | undefined): Promise<void> {
    const index = this.index;
    if (!index) return;
    if (result.status === 'committed' && indexStillMatches(result.table.metadata, index.snapshotId, result.snapshot.parentSnapshotId)) {
      // a kill here leaves a disk index stamped with the parent: the next start replays this commit
      await failpoint('key-index-before-apply');
      index.apply(prepared?.indexDelta ?? NO_KEY_MOVES, result.snapshot.snapshotId, prepared);
      await this.spillIfLarge(result.table);
    } else this.drop();
  }

  /**
   * floe's own maintenance committed to the table between two checkpoints: `table` is the table as
   * that commit left it, `compaction` what a compaction moved (maintenance/rewrite-data-files.ts).
   * The index is brought to the new snapshot — for a compaction by reading the key columns of just
   * the new files (no delete applies to them: they have the commit's sequence number) — so the next
   * checkpoint writes its DVs against the new files directly, instead of taking the compaction for
   * another writer's (committed-dv-targets.ts) and locating its deletes again. Only when the index
   * matched the snapshot the commit went on top of (nothing but manifest rewrites between): a
   * commit of another writer in between is left to the usual detection (the index is rebuilt).
   */
  async follow(table: CatalogTable, compaction?: CompactionCommit): Promise<'followed' | 'dropped' | 'none'> {
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
    const moves = await readCompactionMoves(table, schema, index, compaction);
    if ('why' in moves) {
      this.options.warn?.(`${this.name}: ${moves.why}; rebuilding it from the lake`);
      this.drop();
      return 'dropped';
    }
    const { moved, removed } = moves;
    await failpoint('key-index-before-follow-compaction');
    index.rewrite(moved, [...removed], compaction.addedDataFiles, compaction.snapshotId);
    this.loads.followed++;
    return 'followed';
  }

  /**
   * At a clean stop: a memory index that holds the table's head is saved to the state directory, for
   * the next start to take instead of building it (saved-index-file.ts). Whether it was saved.
   */
  async save(table: CatalogTable): Promise<boolean> {
    const index = this.index;
    const path = this.savedPath(table);
    if (!path || this.loading || !(index instanceof MemoryKeyIndex) || index.size < (this.options.keyIndex?.saveMinRows ?? 100_000)) return false;
    const m = table.metadata;
    const schema = m.schemas.find((x) => x.schemaId === this.schemaId);
    if (!schema || this.schemaId !== m.currentSchemaId || !indexStillMatches(m, index.snapshotId, currentSnapshot(m)?.snapshotId)) return false;
    await saveMemoryIndex(path, diskIdentity(m.tableUuid, TableKey.identifier(schema), schema), index.saved());
    return true;
  }

  private savedPath(table: CatalogTable): string | undefined {
    const dir = this.options.keyIndex?.stateDir;
    return dir ? join(dir, this.jobId, `${table.metadata.tableUuid}.keyindex.mem`) : undefined;
  }

  private diskPath(table: CatalogTable): string | undefined {
    const dir = this.options.keyIndex?.stateDir;
    return dir ? join(dir, this.jobId, `${table.metadata.tableUuid}.keyindex.sqlite`) : undefined;
  }

  private maxRows(): number {
    return this.options.keyIndexMaxRows ?? (this.options.keyIndex?.stateDir ? 1_000_000_000 : 10_000_000);
  }

  private memoryMaxRows(): number {
    return this.options.keyIndex?.memoryMaxRows ?? 2_000_000;
  }

  /** A memory index grown past the budget moves to disk (stamped with the snapshot it matches). */
  private async spillIfLarge(table: CatalogTable): Promise<void> {
    const mem = this.index;
    const path = this.diskPath(table);
    if (!mem || mem.kind !== 'memory' || !path || mem.size <= this.memoryMaxRows()) return;
    const m = table.metadata;
    const schema = m.schemas.find((x) => x.schemaId === this.schemaId);
    if (!schema) return;
    const identity = diskIdentity(m.tableUuid, TableKey.identifier(schema), schema);
    this.index = await DiskKeyIndex.build(path, identity, mem.snapshotId, async (set) => {
      for (const [k, file, pos] of mem.entries()) set(k, file, pos);
    });
    mem.close();
    this.loads.spilled++;
    this.options.info?.(`${this.name}: key index of ${mem.size} rows moved to disk (${path})`);
  }
}

function diskIdentity(tableUuid: string, key: TableKey, schema: Schema): DiskIndexIdentity {
  return { tableUuid, keyFieldIds: key.fieldIds, keyTypes: JSON.stringify(key.types), schemaId: schema.schemaId };
}
